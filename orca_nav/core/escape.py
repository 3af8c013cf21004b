"""
The way out when no velocity keeps every neighbour away for the whole horizon.

RVO2's answer to conflicting half-planes (linear program 3) minimises the largest violation of
the agent lines. Among agents that all avoid, that compromise is shared and works; beside a
person who does not avoid (or several), it is a slow sidestep that the person walks into, and
standing still (what a brake does) is no better: a walker closes anyway. ``escape_velocity``
looks at the candidates directly: standing still, the preferred velocity, the linear
programs' answer and a fan of headings at a few speeds, and takes the one whose first contact
with any neighbour (each going on with its velocity) comes latest, up to a cap; among those
equally safe, the one nearest the preferred velocity (a nearness that counts for less as the
contact comes closer, ``ESCAPE_URGENT``). Before anything else, it takes the least contact
within the step (``step_intrusion``: the overlap left at the step's end where a neighbour
overlaps already, else the deepest point), then the least contact of the bodies up to the cap:
where even the bodies must touch (a walker from behind, faster than the robot), the side step
that leaves the shallowest contact beats running ahead of them, which only delays a full one.
Contact is judged at the margin the solver always keeps (its last ``MARGIN_SCALES`` step): a
walker's velocity is an estimate, and a way out that clears the bare discs by a centimetre on
it does not clear them.
"""

import math

from ._jit import njit

# Headings of the candidate fan (per full turn) and the fractions of max_speed tried on each.
ESCAPE_HEADINGS = 32
ESCAPE_SPEEDS = (1.0, 0.6, 0.3)
# [s] of time to contact a candidate may give up per 1 m/s it is nearer the preferred velocity:
# between two candidates of which neither is safe for the whole cap, the later contact wins
# unless the other is much nearer where the agent wants to go.
ESCAPE_PREF_WEIGHT = 0.25
# [s] A first contact sooner than this is imminent: the weight of the preferred velocity fades
# in proportion (nothing is worth a contact a step away; at 0.1 s, 0.25 s/(m/s) would trade a
# hit 0.08 s ahead for one 0.19 s ahead against 0.44 m/s of nearness).
ESCAPE_URGENT = 1.0
# Obstacle lines violated by less than this [m/s] count as kept (rounding).
LINE_SLACK = 1e-9


@njit(cache=True)
def time_to_contact(px, py, wx, wy, combined_radius, time_step):
    """
    When a pair first touches, the other going on at w relative to this one.

    p : other minus own position [m]; w : other minus own velocity [m/s]. Returns the time
    [s] (inf: never). A pair that overlaps already returns minus the overlap left after
    ``time_step`` [m] (<= 0; less negative is better): getting out is all that counts then.
    """
    c = px * px + py * py - combined_radius * combined_radius
    if c <= 0.0:
        ex = px + wx * time_step
        ey = py + wy * time_step
        return min(math.sqrt(ex * ex + ey * ey) - combined_radius, 0.0)
    b = px * wx + py * wy
    if b >= 0.0:
        return math.inf  # not getting closer
    a = wx * wx + wy * wy
    disc = b * b - a * c
    if disc <= 0.0:
        return math.inf  # the relative path misses the disc
    return (-b - math.sqrt(disc)) / a


@njit(cache=True)
def step_intrusion(px, py, wx, wy, combined_radius, time_step):
    """
    How deep [m] (>= 0) a pair gets into contact within one step, the other going on at w.

    p, w : as ``time_to_contact``. A pair that overlaps already counts the overlap left at the
    step's end (getting out is what it can do); any other the deepest point of the step.
    """
    t = time_step
    if px * px + py * py > combined_radius * combined_radius:
        a = wx * wx + wy * wy
        t = 0.0 if a == 0.0 else min(max(-(px * wx + py * wy) / a, 0.0), time_step)
    qx = px + wx * t
    qy = py + wy * t
    return max(combined_radius - math.sqrt(qx * qx + qy * qy), 0.0)


@njit(cache=True)
def _line_violation(lines, n_lines, vx, vy):
    """Largest violation [m/s] of the first n_lines lines by v (0 when all are kept)."""
    worst = 0.0
    for k in range(n_lines):
        d = lines[k, 2] * (lines[k, 1] - vy) - lines[k, 3] * (lines[k, 0] - vx)
        if d > worst:
            worst = d
    return worst


@njit(cache=True)
def _candidate_value(i, vx, vy, positions, reach, contact, agent_nbrs, nbr_vel, cap,
                     time_step):
    """
    Return (depth, bodies, time) of velocity v among agent i's neighbours.

    depth [m] : the deepest contact at ``reach`` within the step (``step_intrusion``), 0 for
    none; bodies [m] : the deepest the bodies (``contact``) get into each other within cap,
    0 for none; time [s] : the earliest first contact at ``reach`` of a pair not in contact
    yet, capped.
    """
    depth = 0.0
    bodies = 0.0
    time = cap
    for k in range(agent_nbrs.shape[1]):
        j = agent_nbrs[i, k]
        if j < 0:
            break
        px = positions[j, 0] - positions[i, 0]
        py = positions[j, 1] - positions[i, 1]
        wx = nbr_vel[k, 0] - vx
        wy = nbr_vel[k, 1] - vy
        depth = max(depth, step_intrusion(px, py, wx, wy, reach[k], time_step))
        bodies = max(bodies, step_intrusion(px, py, wx, wy, contact[k], cap))
        if px * px + py * py > reach[k] * reach[k]:
            time = min(time, time_to_contact(px, py, wx, wy, reach[k], time_step))
    return depth, bodies, time


@njit(cache=True)
def escape_velocity(i, positions, reach, contact, agent_nbrs, nbr_vel, lines, n_hard,
                    max_speed, pref_x, pref_y, lp_x, lp_y, cap, time_step):
    """
    Agent i's way out: the least contact, then the latest (see the module docstring).

    reach : (K,) [m] the centre distance that counts as contact with each neighbour in
    ``agent_nbrs[i]`` (the contact radii plus the margin always kept); contact : (K,) [m]
    the contact radii alone (the bodies); nbr_vel : (K, 2) the velocity each neighbour is
    expected to keep [m/s]; lines[:n_hard] : the lines that stay hard
    (acceleration reach and obstacles): a candidate violating them ranks after every one
    that keeps them, by its violation. lp : the linear programs' answer (a candidate too).
    cap [s] : contact later than this counts as none. Returns (vx, vy, value): value is the
    time to first contact [s] (cap: none within it), or <= 0 for contact within the step:
    minus its depth [m].
    """
    best_x = 0.0
    best_y = 0.0
    best_viol = math.inf
    best_depth = math.inf
    best_bodies = math.inf
    best_score = -math.inf
    best_value = -math.inf
    n_cand = 3 + ESCAPE_HEADINGS * len(ESCAPE_SPEEDS)
    for c in range(n_cand):
        if c == 0:
            vx = 0.0
            vy = 0.0
        elif c == 1:
            vx = pref_x
            vy = pref_y
        elif c == 2:
            vx = lp_x
            vy = lp_y
        else:
            h = (c - 3) % ESCAPE_HEADINGS
            s = ESCAPE_SPEEDS[(c - 3) // ESCAPE_HEADINGS]
            angle = 2.0 * math.pi * h / ESCAPE_HEADINGS
            vx = s * max_speed * math.cos(angle)
            vy = s * max_speed * math.sin(angle)
        speed = math.sqrt(vx * vx + vy * vy)
        if speed > max_speed:
            vx *= max_speed / speed
            vy *= max_speed / speed
        viol = _line_violation(lines, n_hard, vx, vy)
        if viol <= LINE_SLACK:
            viol = 0.0
        depth, bodies, time = _candidate_value(i, vx, vy, positions, reach, contact,
                                               agent_nbrs, nbr_vel, cap, time_step)
        # Contact within the step [m] ranks before everything but the hard lines, then the
        # bodies' contact within cap: nearness to the preferred velocity (in s per m/s) must
        # not buy depth of contact, nor a later contact a deeper one.
        dx = vx - pref_x
        dy = vy - pref_y
        score = time - (ESCAPE_PREF_WEIGHT * min(1.0, time / ESCAPE_URGENT)
                        * math.sqrt(dx * dx + dy * dy))
        if viol < best_viol or (viol == best_viol and (
                depth < best_depth or (depth == best_depth and (
                    bodies < best_bodies or (bodies == best_bodies
                                             and score > best_score))))):
            best_viol = viol
            best_depth = depth
            best_bodies = bodies
            best_score = score
            best_value = -depth if depth > 0.0 else time
            best_x = vx
            best_y = vy
    return best_x, best_y, best_value
