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
contact comes closer, ``ESCAPE_URGENT``). Before anything else, it takes the least overlap of
the bodies within the step (``step_intrusion``: the overlap left at the step's end where a
neighbour overlaps already, else the deepest point), then the least contact within the step at
the margin kept (margins differ by neighbour: the deepest of those can hide a real overlap with
a neighbour kept at a smaller one), then the least contact of the bodies up to the cap:
where even the bodies must touch (a walker from behind, faster than the robot), the side step
that leaves the shallowest contact beats running ahead of them, which only delays a full one.
Contact is judged at the margin the solver always keeps (its last ``MARGIN_SCALES`` step): a
walker's velocity is an estimate, and a way out that clears the bare discs by a centimetre on
it does not clear them.
"""

import math

import numpy as np

from .._jit import njit

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
    Return (hit, depth, bodies, time) of velocity v among agent i's neighbours.

    hit [m] : the deepest the bodies (``contact``) get into each other within the step, 0
    for none; depth [m] : the deepest contact at ``reach`` within the step
    (``step_intrusion``), 0 for none; bodies [m] : the same as hit within cap; time [s] : the
    earliest first contact at ``reach`` of a pair not in contact yet, capped.
    """
    hit = 0.0
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
        hit = max(hit, step_intrusion(px, py, wx, wy, contact[k], time_step))
        depth = max(depth, step_intrusion(px, py, wx, wy, reach[k], time_step))
        bodies = max(bodies, step_intrusion(px, py, wx, wy, contact[k], cap))
        if px * px + py * py > reach[k] * reach[k]:
            time = min(time, time_to_contact(px, py, wx, wy, reach[k], time_step))
    return hit, depth, bodies, time


@njit(cache=True)
def _ranks_before(value, best):
    """
    Whether a candidate ranks before the best so far.

    value, best : (violation, hit, depth, bodies, score), compared in that order (the
    least of each, the greatest score).
    """
    viol, hit, depth, bodies, score = value
    best_viol, best_hit, best_depth, best_bodies, best_score = best
    if viol != best_viol:
        return viol < best_viol
    if hit != best_hit:
        return hit < best_hit
    if depth != best_depth:
        return depth < best_depth
    if bodies != best_bodies:
        return bodies < best_bodies
    return score > best_score


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
    best = (math.inf, math.inf, math.inf, math.inf, -math.inf)
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
        hit, depth, bodies, time = _candidate_value(i, vx, vy, positions, reach, contact,
                                                    agent_nbrs, nbr_vel, cap, time_step)
        # Contact within the step [m] ranks before everything but the hard lines, then the
        # bodies' contact within cap: nearness to the preferred velocity (in s per m/s) must
        # not buy depth of contact, nor a later contact a deeper one.
        dx = vx - pref_x
        dy = vy - pref_y
        score = time - (ESCAPE_PREF_WEIGHT * min(1.0, time / ESCAPE_URGENT)
                        * math.sqrt(dx * dx + dy * dy))
        value = (viol, hit, depth, bodies, score)
        if _ranks_before(value, best):
            best = value
            best_value = -depth if depth > 0.0 else time
            best_x = vx
            best_y = vy
    return best_x, best_y, best_value


# A differential robot's way out (``escape_unicycle``): forward speeds (fractions of
# max_speed; negative: backing up) and yaw rates (fractions of the largest) held from now on.
UNICYCLE_SPEEDS = (1.0, 0.6, 0.3, 0.0, -0.3, -0.6, -1.0)
UNICYCLE_TURNS = (-1.0, -0.5, 0.0, 0.5, 1.0)
# [rad] A candidate turns until its heading has changed this much, then drives straight: a
# quarter turn is the side step of a robot that cannot step sideways.
UNICYCLE_TURN_SPAN = 0.5 * math.pi
# Spins in place at the largest yaw rate, either way, by these angles [rad], then straight on
# at these fractions of max_speed: out of a walker's way where any arc would meet it.
SPIN_SPANS = (0.25 * math.pi, 0.5 * math.pi, 0.75 * math.pi, math.pi)
SPIN_SPEEDS = (1.0, 0.6)
# [rad] Turns of the way out end on world headings of this grid: the next TURN_TARGETS on the
# turn's side for the arcs (up to about a quarter turn), the next SPIN_TARGETS for the spins
# (up to a half turn).
HEADING_GRID = math.pi / 8.0
TURN_TARGETS = 4
SPIN_TARGETS = 8
# [m] Resolution of the bodies' contact up to cap in a differential robot's way out.
BODIES_GRAIN = 0.02
# [m/s] What turning or driving the other way than now costs a differential way out, as
# nearness to the preferred velocity (a change of speed costs nothing: standing still must
# not hold a robot still).
SWITCH_COST = 1.0
# [s] A drive's nearness to the preferred velocity is that of its mean velocity over this
# long (or cap, if shorter): a quarter turn at 1.5 rad/s takes 1.05 s, and a robot that
# turns to go round must not lose to one that stands.
PROGRESS_TIME = 1.5
# [m/s] A walker's predicted place grows this uncertain per second ahead (people turn): the
# first contact of a roll-out is judged at the reach plus this times the time ahead. What it
# trades (collisions against timeouts on CrowdNav++, and the values tried): docs/core.md.
PREDICTION_GROWTH = 0.1
# [m/s] A neighbour slower than this stands: it is looked for only STANDING_LOOK [s] into a
# roll-out (the robot can stop before it later; every drive but standing still meets one of
# the people who stand round a goal within a 5 s roll-out).
STANDING_SPEED = 0.1
STANDING_LOOK = 1.0
# The roll-out up to cap is judged in at most this many segments (the first is one step):
# chords of the arcs, each against the neighbours' straight paths, exactly.
ROLLOUT_SEGMENTS = 25


@njit(cache=True)
def rollout_value(i, x0, y0, yaw0, v, w, span, v_after, positions, reach, contact,
                  agent_nbrs, nbr_vel, cap, time_step):
    """
    Return (hit, depth, bodies, time, mean velocity) of a unicycle's drive from a pose.

    The robot's centre starts at (x0, y0) with heading yaw0, drives at (v, w) until its
    heading has changed by span [rad], then goes straight at v_after; each neighbour of
    agent i goes on at nbr_vel. reach, contact : (K,) [m] the contact distances of the robot's own
    disc (not its point ahead). hit, depth, bodies, time : as ``_candidate_value``, on the
    roll-out's chords (the first is one time step), the first contact at the reach grown by
    PREDICTION_GROWTH per second ahead, a neighbour that stands (slower than STANDING_SPEED)
    only up to STANDING_LOOK; mean velocity (mx, my) [m/s]: the
    displacement over PROGRESS_TIME (or cap) divided by it.
    """
    hit = 0.0
    depth = 0.0
    bodies = 0.0
    time = cap
    turn_time = cap if w == 0.0 else min(cap, span / abs(w))
    segment = max(time_step, cap / ROLLOUT_SEGMENTS)
    progress_time = min(PROGRESS_TIME, cap)
    mx = 0.0
    my = 0.0
    t = 0.0
    x = x0
    y = y0
    yaw = yaw0
    first = True
    while t < cap - 1e-9:
        dt = time_step if first else min(segment, cap - t)
        if t < progress_time < t + dt:
            dt = progress_time - t  # a chord ends where the progress is measured
        # Arc while the turn lasts, straight after.
        turning = max(0.0, min(dt, turn_time - t)) if w != 0.0 else 0.0
        x1 = x
        y1 = y
        yaw1 = yaw
        if turning > 0.0:
            yaw1 = yaw + w * turning
            x1 += v / w * (math.sin(yaw1) - math.sin(yaw))
            y1 -= v / w * (math.cos(yaw1) - math.cos(yaw))
        straight = v if w == 0.0 else v_after
        x1 += straight * math.cos(yaw1) * (dt - turning)
        y1 += straight * math.sin(yaw1) * (dt - turning)
        ux = (x1 - x) / dt
        uy = (y1 - y) / dt
        for k in range(agent_nbrs.shape[1]):
            j = agent_nbrs[i, k]
            if j < 0:
                break
            if (t >= STANDING_LOOK and nbr_vel[k, 0] ** 2 + nbr_vel[k, 1] ** 2
                    < STANDING_SPEED * STANDING_SPEED):
                continue
            px = positions[j, 0] + nbr_vel[k, 0] * t - x
            py = positions[j, 1] + nbr_vel[k, 1] * t - y
            wx = nbr_vel[k, 0] - ux
            wy = nbr_vel[k, 1] - uy
            grown = reach[k] + PREDICTION_GROWTH * t
            deep = step_intrusion(px, py, wx, wy, contact[k], dt)
            if first:
                hit = max(hit, deep)
                depth = max(depth, step_intrusion(px, py, wx, wy, reach[k], dt))
            bodies = max(bodies, deep)
            if px * px + py * py > grown * grown:
                tc = time_to_contact(px, py, wx, wy, grown, dt)
                if tc <= dt:
                    time = min(time, t + tc)
            elif not first:
                time = min(time, t)  # still in contact after the first step
        x = x1
        y = y1
        yaw = yaw1
        t += dt
        first = False
        if abs(t - progress_time) < 1e-9:
            mx = (x - x0) / progress_time
            my = (y - y0) / progress_time
    return hit, depth, bodies, time, mx, my


@njit(cache=True)
def unicycle_of(vx, vy, cos_h, sin_h, lookahead, max_speed, turn_rate):
    """(v, w) that give the point ahead velocity (vx, vy), scaled into both limits at once."""
    v = cos_h * vx + sin_h * vy
    w = (-sin_h * vx + cos_h * vy) / lookahead
    scale = 1.0
    if abs(v) > max_speed:
        scale = max_speed / abs(v)
    if abs(w) * scale > turn_rate:
        scale = turn_rate / abs(w)
    return v * scale, w * scale


@njit(cache=True)
def _turn_spans(heading, w, n):
    """
    Return the n turns [rad] from heading to the next n grid headings on w's side.

    The grid is HEADING_GRID [rad] in the world frame: a turn that ends on a grid heading
    ends there again when it is chosen again a step later (shorter by what was turned), so
    the robot completes the turns it picks instead of circling on a turn restarted every step.
    """
    spans = np.empty(n)
    g = HEADING_GRID
    if w > 0.0:
        first = (math.floor(heading / g) + 1.0) * g - heading
    else:
        first = heading - (math.ceil(heading / g) - 1.0) * g
    if first < 1e-9:
        first += g  # on a grid heading already: the straight drives hold it
    for m in range(n):
        spans[m] = first + m * g
    return spans


@njit(cache=True)
def unicycle_drives(heading, max_speed, pref_x, pref_y, lp_x, lp_y, cos_h, sin_h, lookahead,
                    turn_rate):
    """
    Return a differential robot's candidate drives, rows (v, w, span, v_after).

    Standing still; the drives of the preferred velocity and of the linear programs' answer
    (held for UNICYCLE_TURN_SPAN); UNICYCLE_SPEEDS straight on; UNICYCLE_SPEEDS x the turning
    UNICYCLE_TURNS, each turning to one of the TURN_TARGETS next grid headings on its side
    (``_turn_spans``) then straight on at v; spins in place at the largest yaw rate, either
    way, to one of the SPIN_TARGETS next grid headings, then straight on at SPIN_SPEEDS.
    """
    n_turning = 0
    for t in UNICYCLE_TURNS:
        if t != 0.0:
            n_turning += 1
    n_speeds = len(UNICYCLE_SPEEDS)
    n = 3 + n_speeds + n_speeds * n_turning * TURN_TARGETS + 2 * SPIN_TARGETS * len(SPIN_SPEEDS)
    out = np.zeros((n, 4))
    out[1, 0], out[1, 1] = unicycle_of(pref_x, pref_y, cos_h, sin_h, lookahead, max_speed,
                                       turn_rate)
    out[2, 0], out[2, 1] = unicycle_of(lp_x, lp_y, cos_h, sin_h, lookahead, max_speed,
                                       turn_rate)
    for r in range(3):
        out[r, 2] = UNICYCLE_TURN_SPAN
        out[r, 3] = out[r, 0]
    r = 3
    for s in UNICYCLE_SPEEDS:
        out[r, 0] = s * max_speed
        out[r, 2] = UNICYCLE_TURN_SPAN
        out[r, 3] = s * max_speed
        r += 1
    for s in UNICYCLE_SPEEDS:
        for t in UNICYCLE_TURNS:
            if t == 0.0:
                continue
            w = t * turn_rate
            # The point's speed |(v, w D)| within max_speed.
            side = w * lookahead
            room = math.sqrt(max(max_speed * max_speed - side * side, 0.0))
            v = max(-room, min(s * max_speed, room))
            spans = _turn_spans(heading, w, TURN_TARGETS)
            for m in range(TURN_TARGETS):
                out[r, 0] = v
                out[r, 1] = w
                out[r, 2] = spans[m]
                out[r, 3] = v
                r += 1
    for s in SPIN_SPEEDS:
        for sign in (1.0, -1.0):
            spans = _turn_spans(heading, sign, SPIN_TARGETS)
            for m in range(SPIN_TARGETS):
                out[r, 1] = sign * turn_rate
                out[r, 2] = spans[m]
                out[r, 3] = s * max_speed
                r += 1
    return out


@njit(cache=True)
def within_step(v, w, span, v_after, time_step):
    """
    Return the (v, w) of a drive's first step, for a turn that ends within that step.

    A drive turns at (v, w) until its heading has changed by span [rad], then goes straight
    at v_after. A command is held for a whole step: where the turn is shorter than one step
    at w, (v, w) for the step would turn past the turn's end (a spin 4 deg short of a grid
    heading, at 1.5 rad/s and 0.1 s, turns 8.6 deg), and the way out would pick the spin
    back the next step: the robot swings about the heading on the spot while its roll-outs
    have it leave. So such a step turns by span exactly (w scaled) and drives the share of
    the step left after the turn at v_after; the roll-out of the drive so changed is that
    step's arc, then the rest as before.
    """
    if w == 0.0 or span >= abs(w) * time_step:
        return v, w
    share = span / (abs(w) * time_step)
    return share * v + (1.0 - share) * v_after, share * w


@njit(cache=True)
def escape_unicycle(i, positions, reach, contact, agent_nbrs, nbr_vel, lines, n_hard,
                    max_speed, pref_x, pref_y, lp_x, lp_y, cap, time_step, heading, lookahead,
                    turn_rate, now_x, now_y):
    """
    Return a differential robot's way out: ``escape_velocity``'s ranking over its drives.

    Agent i is the point ``lookahead`` [m] ahead of a unicycle's axle with heading [rad],
    whose yaw rate is at most turn_rate [rad/s]: it cannot step sideways. The candidates are
    ``unicycle_drives``, each rolled out up to cap (``rollout_value``: an arc until its
    turn is done, then straight) with the robot's own disc (the contact distances less
    ``lookahead``). They rank as in ``escape_velocity``: the hard
    lines (acceleration reach, the drive's band, obstacles) on the first step's velocity of
    the point, the contact within the step, the bodies' contact up to cap, then the time of
    first contact less the nearness to the preferred velocity pref (before the drive's
    scaling) of the drive's mean velocity over PROGRESS_TIME: a turn that goes round beats
    standing still. Arguments otherwise as ``escape_velocity``; returns the point's velocity
    (vx, vy) of the first step and the value.
    """
    cos_h = math.cos(heading)
    sin_h = math.sin(heading)
    x0 = positions[i, 0] - lookahead * cos_h
    y0 = positions[i, 1] - lookahead * sin_h
    k_max = agent_nbrs.shape[1]
    own_reach = np.empty(k_max)
    own_contact = np.empty(k_max)
    for k in range(k_max):
        own_reach[k] = max(reach[k] - lookahead, 0.0)
        own_contact[k] = max(contact[k] - lookahead, 0.0)
    v_now, w_now = unicycle_of(now_x, now_y, cos_h, sin_h, lookahead, max_speed, turn_rate)
    best_x = 0.0
    best_y = 0.0
    best = (math.inf, math.inf, math.inf, math.inf, -math.inf)
    best_value = -math.inf
    drives = unicycle_drives(heading, max_speed, pref_x, pref_y, lp_x, lp_y, cos_h, sin_h,
                             lookahead, turn_rate)
    for c in range(drives.shape[0]):
        v = drives[c, 0]
        w = drives[c, 1]
        span = drives[c, 2]
        v_after = drives[c, 3]
        v, w = within_step(v, w, span, v_after, time_step)
        vx = v * cos_h - w * lookahead * sin_h
        vy = v * sin_h + w * lookahead * cos_h
        viol = _line_violation(lines, n_hard, vx, vy)
        if viol <= LINE_SLACK:
            viol = 0.0
        hit, depth, bodies, time, mx, my = rollout_value(
            i, x0, y0, heading, v, w, span, v_after, positions, own_reach, own_contact,
            agent_nbrs, nbr_vel, cap, time_step)
        dx = mx - pref_x
        dy = my - pref_y
        # Turning the other way, or driving the other way, than now costs SWITCH_COST of
        # nearness each: the way out keeps to what it was doing rather than switching drives
        # every step over millimetres of a prediction (bodies' contacts within BODIES_GRAIN
        # count as equal for the same reason).
        switch = 0.0
        if v * v_now < 0.0:
            switch += SWITCH_COST
        if w * w_now < 0.0:
            switch += SWITCH_COST
        score = time - (ESCAPE_PREF_WEIGHT * min(1.0, time / ESCAPE_URGENT)
                        * (math.sqrt(dx * dx + dy * dy) + switch))
        bodies = math.ceil(bodies / BODIES_GRAIN) * BODIES_GRAIN
        value = (viol, hit, depth, bodies, score)
        if _ranks_before(value, best):
            best = value
            best_value = -depth if depth > 0.0 else time
            best_x = vx
            best_y = vy
    return best_x, best_y, best_value


@njit(cache=True)
def drive_keeps_clear(i, positions, reach, contact, agent_nbrs, nbr_vel, max_speed, vx, vy,
                      cap, time_step, heading, lookahead, turn_rate):
    """
    Return whether the drive that gives a differential robot's point velocity v keeps clear.

    The drive is v's (``unicycle_of``: one factor into both limits, as the command will
    be), rolled out as ``escape_unicycle``'s candidates; clear: no contact at reach within
    cap, and none of the bodies. Arguments as ``escape_unicycle``.
    """
    cos_h = math.cos(heading)
    sin_h = math.sin(heading)
    k_max = agent_nbrs.shape[1]
    own_reach = np.empty(k_max)
    own_contact = np.empty(k_max)
    for k in range(k_max):
        own_reach[k] = max(reach[k] - lookahead, 0.0)
        own_contact[k] = max(contact[k] - lookahead, 0.0)
    v, w = unicycle_of(vx, vy, cos_h, sin_h, lookahead, max_speed, turn_rate)
    _, depth, bodies, time, _, _ = rollout_value(
        i, positions[i, 0] - lookahead * cos_h, positions[i, 1] - lookahead * sin_h, heading,
        v, w, UNICYCLE_TURN_SPAN, v, positions, own_reach, own_contact, agent_nbrs, nbr_vel,
        cap, time_step)
    return depth == 0.0 and bodies == 0.0 and time >= cap
