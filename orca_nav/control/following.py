"""
Where each robot is on its route: carrots, segments and the width of its way, per tick.

``Following`` keeps per robot the segment of its route it was on last and calls the compiled
kernels of ``orca_nav.core.routes.follow`` once for the whole fleet: the carrot each robot steers
to, the distance left along its route, whether it lost sight of its route, and the narrowest
place of its route near it (``route_clearance``, for control/passages.py).
"""

import math

import numpy as np
from orca_nav.core.routes.follow import follow_routes, pack_routes, route_clearance
from orca_nav.core.routes.planner import LETHAL_TOLERANCE_CELLS

from .passages import free_width, PASSAGE_AHEAD, PASSAGE_BEHIND

# [m] A robot with a footprint looks this far along its route for a door it must pass turned
# along (``narrow_way``): far enough to turn and step onto the door's line before it
# (docs/node.md, measured in cart_door).
DOOR_AHEAD = 1.5


class Following:
    """Route following of C robots (see the module's docstring)."""

    def __init__(self, c):
        """Start every robot at the first segment of its route."""
        self.segment = np.zeros(c, np.int64)    # segment holding the robot's projection
        self.carrot = np.full((c, 2), np.nan)   # [m] the point steered to on the route
        self.clearance = np.full(c, math.inf)   # [m] narrowest place of the route near it
        # Unit direction of the route at its narrowest place ahead, where the route comes
        # nearer a wall than the robot's circumscribed disc (a door); NaN elsewhere.
        self.narrow_way = np.full((c, 2), np.nan)
        self.narrow_ahead = np.full(c, np.inf)  # [m] along the route to that narrowest place
        self._packed = (None, None)             # (key, packed routes) of the last tick

    def follow(self, robots, routes, versions, pos, grid, lookahead, radius, true_radius,
               reach=None):
        """
        Follow the routes of ``robots`` (R,) int; return carrot (R, 2), left (R,), lost (R,).

        routes : the C routes ((K, 2) arrays), versions (C,) their change counters; pos (C, 2)
        [m]; grid : GridMap or None; lookahead [m]: the carrot distance; radius (C,) [m]: the
        clearance the routes were planned with; true_radius (C,) [m]: the true discs (the
        least a line to the carrot keeps in a narrow passage); reach (C,) [m] or None: the
        circumscribed discs, where ``narrow_way`` is wanted (robots that turn to fit).
        ``clearance`` and ``narrow_way`` are set for ``robots``, inf and NaN for the others.
        """
        key = robots.tobytes() + versions[robots].tobytes()
        if key != self._packed[0]:  # routes changed: pack them again
            self._packed = (key, pack_routes([routes[i] for i in robots]))
        points, offsets = self._packed[1]
        # The carrot is one the robot can drive to straight with its routes' clearance (less
        # in a narrow passage, as little as the route has there, never less than its disc).
        carrot, segment, left, lost = follow_routes(
            points, offsets, self.segment[robots], pos[robots], lookahead,
            None if grid is None else grid.obstacles,
            (0.0, 0.0, 0.0) if grid is None else grid.origin,
            1.0 if grid is None else grid.resolution, radius[robots],
            None if grid is None else grid.distance_cells(),
            true_radius[robots] + LETHAL_TOLERANCE_CELLS * (
                1.0 if grid is None else grid.resolution))
        self.segment[robots] = segment
        self.carrot[robots] = carrot
        self.clearance[:] = math.inf
        self.narrow_way[:] = np.nan
        self.narrow_ahead[:] = np.inf
        if grid is not None:
            self.clearance[robots] = route_clearance(
                points, offsets, segment, pos[robots], PASSAGE_BEHIND, PASSAGE_AHEAD,
                grid.distance_cells(), grid.origin, grid.resolution)
            if reach is not None and np.isfinite(reach[robots]).any():
                # Doors ahead (the compiled search for all at once), then their way.
                ahead = route_clearance(points, offsets, segment, pos[robots], 0.0, DOOR_AHEAD,
                                        grid.distance_cells(), grid.origin, grid.resolution)
                for k in np.flatnonzero(ahead < reach[robots]):
                    i = robots[k]
                    self.narrow_way[i], self.narrow_ahead[i] = narrowest_place(
                        points[offsets[k]:offsets[k + 1]], segment[k], pos[i], DOOR_AHEAD,
                        grid, reach[i])
        return carrot, left, lost


def narrowest_way(points, segment, position, ahead, grid, reach):
    """
    Return the unit direction (2,) of a route at its narrowest place ahead of a robot.

    points : (K, 2) [m] the route; segment : the segment holding the robot's projection;
    position (2,) [m]; the route is sampled every half cell from the projection to ``ahead``
    [m] beyond it. NaN (2,) unless it comes nearer a wall than ``reach`` [m] there: a door
    ahead that a robot with a footprint passes turned along it.

    >>> from orca_nav.core.routes.grid import GridMap
    >>> cells = np.zeros((20, 40), np.int8)
    >>> cells[:8, 20] = cells[12:, 20] = 100          # a wall at x = 2 m, a door at y ~1 m
    >>> grid = GridMap.from_occupancy(cells.ravel(), 40, 20, 0.1)
    >>> route = np.array([[0.5, 0.2], [1.6, 1.05], [3.5, 1.05]])
    >>> narrowest_way(route, 0, np.array([1.0, 0.6]), 1.0, grid, 0.5).round(2).tolist()
    [1.0, 0.0]
    >>> narrowest_way(route, 0, np.array([0.5, 0.2]), 0.3, grid, 0.5).tolist()
    [nan, nan]
    """
    return narrowest_place(points, segment, position, ahead, grid, reach)[0]


def narrowest_place(points, segment, position, ahead, grid, reach):
    """
    Return ``narrowest_way`` and how far along the route [m] that place lies (inf: none).

    Only a door counts: somewhere on that stretch, or up to 2 x ``reach`` beyond it (the
    door's wall may lie past it), the free width across the route (``passages.free_width``)
    is less than the disc's, 2 x ``reach``; a route that only runs near one wall (as a
    robot's that stepped aside) has none.
    """
    points = np.asarray(points, dtype=float)
    seg = np.diff(points, axis=0)
    length = np.hypot(*seg.T)
    if len(seg) == 0 or not length.any():
        return np.full(2, np.nan), math.inf
    arc = np.concatenate([[0.0], np.cumsum(length)])
    k = int(np.clip(segment, 0, len(seg) - 1))
    t = 0.0 if length[k] <= 0.0 else float(
        np.clip((position - points[k]) @ seg[k] / length[k] ** 2, 0.0, 1.0))
    here = arc[k] + t * length[k]
    step = 0.5 * grid.resolution
    s, q, u = _samples(points, seg, length, arc, here, here + ahead, step)
    inside = grid.inside(q)
    if not inside.any():
        return np.full(2, np.nan), math.inf
    cells = grid.world_to_cell(q[inside])
    room = (grid.distance_cells()[cells[:, 1], cells[:, 0]] - 0.5) * grid.resolution
    least = int(np.argmin(room))
    if room[least] >= reach:
        return np.full(2, np.nan), math.inf
    _, q, u_across = _samples(points, seg, length, arc, here, here + ahead + 2.0 * reach, step)
    if free_width(grid, q, u_across, 2.0 * reach).min() >= 2.0 * reach:
        return np.full(2, np.nan), math.inf
    return u[inside][least], float(s[inside][least] - here)


def _samples(points, seg, length, arc, start, end, step):
    """Return arcs s (S,), points q (S, 2) and unit tangents u (S, 2) of a route, start..end."""
    s = np.arange(start, min(end, arc[-1]) + 1e-9, step)
    j = np.clip(np.searchsorted(arc, s, side='right') - 1, 0, len(seg) - 1)
    u = np.divide(seg[j], length[j, None], out=np.zeros((len(j), 2)),
                  where=length[j, None] > 0.0)
    return s, points[j] + u * (s - arc[j])[:, None], u


__all__ = ['Following', 'narrowest_place', 'narrowest_way']
