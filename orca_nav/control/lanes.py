"""
Carts that meet head-on step aside before they meet: two lanes where one way was planned.

Two rectangles whose routes follow the same aisle meet on one line. ORCA between polygons
then only slows them: the face of the pair's difference that looks at the other cart is
flat, so the smallest change that leaves the velocity obstacle points straight back
(docs/core.md, "Head-on on one line"), and they stop face to face in an aisle they would fit
through side by side. Discs do not have this: RVO2's cut-off is round.

So a holonomic robot with a footprint (``commands.aligning``) that has a robot ahead within
LANE_AHEAD on its way that would come toward it (its preferred velocity, or for a robot not
commanded here its velocity, faster than LANE_ONCOMING toward it), and not far enough to the
side for the two to pass (``needed``: both half-widths across the way, both safety margins,
LANE_SLACK), steers sideways: away from the other (to its right when the other is straight
ahead: both keep right), LANE_GAIN per metre still missing, in place of its preferred
velocity's own sideways part (pass_on_right's drift would push it on into a wall's margin),
holding the centre lines ``needed`` apart until they are LANE_HOLD further apart or have
passed. Until it is aside its forward part falls to LANE_GAIN per metre left between the two
bodies along the way: it steps aside before it meets the other, not beside it. Its way is its
route's where the route goes along (an aisle's axis): it keeps its long axis along that way
(``Following.narrow_way``) and its polygon in the solver is swept over the turn to it, so it
does not turn wider. Not at a door (the route narrower than the disc that holds the robot, or
a door ahead): there it keeps to the door's line. The solver still decides what is safe;
walls bound the step aside as always.
"""

import numpy as np
from scipy.spatial import cKDTree

from .commands import aligning

# [m] a robot this far ahead on the way (centre to centre) is met head-on ...
LANE_AHEAD = 4.0
# [m/s] ... when it comes toward the robot at least this fast (one standing or going the same
# way is passed as ORCA passes it, or followed)
LANE_ONCOMING = 0.1
# [1/s] sideways speed per metre of lateral distance still missing
LANE_GAIN = 1.5
# [m] more than both half-widths and margins between the passing centre lines
LANE_SLACK = 0.02
# [m] the step aside holds the centre lines apart until they are this much further apart
LANE_HOLD = 0.1


def half_width(cfg, yaw, across, k):
    """
    Return [m] how far robot k reaches from its centre along unit ``across`` (2,).

    Its footprint placed at yaw[k] [rad] plus its padding, or its radius (a disc).
    """
    polygon = cfg.footprint[k]
    if polygon is None:
        return float(cfg.radius[k])
    p = np.asarray(polygon, dtype=float)
    c, s = np.cos(yaw[k]), np.sin(yaw[k])
    x = c * p[:, 0] - s * p[:, 1]
    y = s * p[:, 0] + c * p[:, 1]
    return float(np.abs(x * across[0] + y * across[1]).max()) + cfg.footprint_padding


def step_aside(cfg, pos, vel, yaw, prefs, margin, free, route_ways=None):
    """
    Return (prefs (C, 2) with the steps aside, ways (C, 2): the unit way kept, NaN: none).

    pos, vel, yaw : (N, 2), (N, 2), (N,) every robot now (vel: what the others would do, the
    commanded robots' preferred velocities first); prefs : (C, 2) [m/s] the commanded
    robots' preferred velocities; margin : (N,) [m] each robot's safety margin;
    free : (C,) bool the robots whose preferred velocity may change (not locked);
    route_ways : (C, 2) unit directions of the routes where the robots are (NaN: none), or
    None. The way is the route's where it goes within 60 degrees of the preferred velocity
    (an aisle's axis: sides are measured across it and the long axis kept along it), else
    the preferred velocity's. Each robot looks at the robots within its reach only (the discs
    that hold them bound the widths), so a large fleet costs little.
    """
    c = len(prefs)
    prefs = np.array(prefs, dtype=float)
    ways = np.full((c, 2), np.nan)
    speed = np.hypot(prefs[:, 0], prefs[:, 1])
    radius = np.asarray(cfg.radius, dtype=float) + cfg.footprint_padding
    movers = np.flatnonzero(aligning(cfg)[:c] & free & (speed > 1e-6))
    known = np.flatnonzero(np.isfinite(pos).all(axis=1))
    if not len(movers) or len(known) < 2:
        return prefs, ways
    tree = cKDTree(pos[known])
    # Every robot ahead within LANE_AHEAD and beside within the discs' bound.
    look = LANE_AHEAD + 2.0 * (radius.max() + np.max(margin)) + LANE_SLACK + LANE_HOLD
    for i in movers:
        if not np.isfinite(pos[i]).all():
            continue
        way = prefs[i] / speed[i]
        if route_ways is not None and np.isfinite(route_ways[i]).all() and (
                route_ways[i] @ way > 0.5):
            way = route_ways[i]
        left = np.array([-way[1], way[0]])
        nearby = known[tree.query_ball_point(pos[i], look)]
        rel = pos[nearby] - pos[i]
        ahead = rel @ way
        side = rel @ left
        bound = radius[i] + radius[nearby] + margin[i] + margin[nearby] + LANE_SLACK + LANE_HOLD
        near = ((ahead > 0.0) & (ahead < LANE_AHEAD) & (vel[nearby] @ way < -LANE_ONCOMING)
                & (np.abs(side) < bound) & (nearby != i))
        met = []
        for k, a, lateral_k in zip(nearby[near], ahead[near], side[near]):
            needed = (half_width(cfg, yaw, left, i) + half_width(cfg, yaw, left, k)
                      + margin[i] + margin[k] + LANE_SLACK)
            if abs(lateral_k) < needed + LANE_HOLD:
                met.append((a, k, needed, lateral_k))
        if not met:
            continue
        ahead_j, j, needed, side_j = min(met)
        away = -1.0 if side_j >= 0.0 else 1.0  # to the right of one straight ahead
        # The sideways part replaces the preferred velocity's own (pass_on_right's drift would
        # push on into the wall's margin): it holds the centre lines LANE_SLACK beyond
        # ``needed`` apart.
        missing = needed - abs(side_j)
        lateral = float(np.clip(LANE_GAIN * missing, -speed[i], speed[i]))
        forward = min(max(prefs[i] @ way, 0.0), np.sqrt(max(speed[i] ** 2 - lateral ** 2, 0.0)))
        if missing > 0.0:
            # Not beside each other yet: slower as the bodies near, stepping aside first.
            gap = ahead_j - half_width(cfg, yaw, way, i) - half_width(cfg, yaw, way, j)
            forward = min(forward, max(LANE_GAIN * gap, 0.0))
        prefs[i] = forward * way + away * lateral * left
        ways[i] = way
    return prefs, ways


__all__ = ['step_aside', 'half_width']
