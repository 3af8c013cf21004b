"""
Out of people's next second: preferred velocities that keep clear of where walkers are going.

ORCA keeps a robot from touching a walker; it does not keep it out of the walker's way. A
robot with a walker behind it that is as fast as itself runs ahead of it for as long as both
go the same way, and one that crosses a walker's path passes just in front of it: no contact
is ever predicted, yet the robot stands where the walker will be a second later. People find
that rude, and a person who does not see the robot walks into it as soon as anything slows it
(CrowdNav++'s intrusion ratio counts exactly these steps).

``keep_out`` reshapes each agent's preferred velocity before the solver: among candidate
velocities (the preferred one, standing still, and a fan of headings at a few speeds) it
takes the one that trades least nearness to the preferred velocity against the depth to which
the agent would be, over the next ``span`` seconds, inside any walker's *keep-out*: the disc
swept by the walker going on at its velocity for ``keepout_time`` seconds, grown by both radii
and a buffer. With no walker's keep-out reachable the preferred velocity stays as it is
(bit for bit); the solver's half-planes still decide what is safe, this only says where the
agent would rather go.
"""

import math

import numpy as np

from .._jit import njit

# Headings of the candidate fan (per full turn) and the fractions of the preferred speed.
KEEPOUT_HEADINGS = 24
KEEPOUT_SPEEDS = (1.0, 0.6, 0.3)
# [s] The agent's own path is judged at these times ahead.
KEEPOUT_SAMPLES = (0.25, 0.5, 0.75, 1.0)


@njit(cache=True)
def _segment_distance(px, py, ax, ay, bx, by):
    """Return the distance [m] from point p to the segment a-b."""
    ux = bx - ax
    uy = by - ay
    uu = ux * ux + uy * uy
    t = 0.0
    if uu > 0.0:
        t = min(max(((px - ax) * ux + (py - ay) * uy) / uu, 0.0), 1.0)
    dx = px - ax - t * ux
    dy = py - ay - t * uy
    return math.sqrt(dx * dx + dy * dy)


@njit(cache=True)
def _intrusion(x, y, vx, vy, walkers, walker_vel, reach, keepout_time):
    """Return the mean depth [m] of the path from (x, y) at v in the walkers' keep-outs."""
    total = 0.0
    for s in KEEPOUT_SAMPLES:
        px = x + vx * s
        py = y + vy * s
        for k in range(walkers.shape[0]):
            ax = walkers[k, 0] + walker_vel[k, 0] * s
            ay = walkers[k, 1] + walker_vel[k, 1] * s
            d = _segment_distance(px, py, ax, ay, ax + walker_vel[k, 0] * keepout_time,
                                  ay + walker_vel[k, 1] * keepout_time)
            if d < reach[k]:
                total += reach[k] - d
    return total / len(KEEPOUT_SAMPLES)


@njit(cache=True)
def keep_out(positions, prefs, radius, active, walkers, walker_vel, walker_radius,
             keepout_time, buffer, weight, out):
    """
    Write into ``out`` (N, 2) each active agent's preferred velocity out of walkers' ways.

    positions, prefs : (N, 2) [m], [m/s]; radius : (N,) [m]; active : (N,) bool (the rows of
    inactive agents are copied). walkers, walker_vel : (K, 2) [m], [m/s]; walker_radius :
    (K,) [m]. keepout_time [s] : how far along its velocity a walker's keep-out reaches;
    buffer [m] : added to both radii; weight : [m/s] of nearness to the preferred velocity
    that 1 m of mean depth in the keep-outs is worth.
    """
    n = positions.shape[0]
    k_max = walkers.shape[0]
    reach = np.empty(k_max)
    near = np.empty((k_max, 2))
    near_vel = np.empty((k_max, 2))
    for i in range(n):
        out[i, 0] = prefs[i, 0]
        out[i, 1] = prefs[i, 1]
        pref_speed = math.sqrt(prefs[i, 0] ** 2 + prefs[i, 1] ** 2)
        if not active[i] or pref_speed == 0.0:
            continue
        # The walkers whose keep-out the agent could reach within the samples.
        m = 0
        horizon = KEEPOUT_SAMPLES[-1]
        for k in range(k_max):
            r = radius[i] + walker_radius[k] + buffer
            speed = math.sqrt(walker_vel[k, 0] ** 2 + walker_vel[k, 1] ** 2)
            far = r + pref_speed * horizon + speed * (horizon + keepout_time)
            dx = walkers[k, 0] - positions[i, 0]
            dy = walkers[k, 1] - positions[i, 1]
            if dx * dx + dy * dy < far * far:
                reach[m] = r
                near[m, 0] = walkers[k, 0]
                near[m, 1] = walkers[k, 1]
                near_vel[m, 0] = walker_vel[k, 0]
                near_vel[m, 1] = walker_vel[k, 1]
                m += 1
        if m == 0:
            continue
        x = positions[i, 0]
        y = positions[i, 1]
        best = weight * _intrusion(x, y, prefs[i, 0], prefs[i, 1], near[:m], near_vel[:m],
                                   reach[:m], keepout_time)
        if best == 0.0:
            continue
        n_cand = 1 + KEEPOUT_HEADINGS * len(KEEPOUT_SPEEDS)
        for c in range(n_cand):
            if c == 0:
                vx = 0.0
                vy = 0.0
            else:
                h = (c - 1) % KEEPOUT_HEADINGS
                sp = KEEPOUT_SPEEDS[(c - 1) // KEEPOUT_HEADINGS] * pref_speed
                angle = 2.0 * math.pi * h / KEEPOUT_HEADINGS
                vx = sp * math.cos(angle)
                vy = sp * math.sin(angle)
            dx = vx - prefs[i, 0]
            dy = vy - prefs[i, 1]
            cost = math.sqrt(dx * dx + dy * dy)
            if cost >= best:
                continue
            cost += weight * _intrusion(x, y, vx, vy, near[:m], near_vel[:m], reach[:m],
                                        keepout_time)
            if cost < best:
                best = cost
                out[i, 0] = vx
                out[i, 1] = vy
