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

from .passages import PASSAGE_AHEAD, PASSAGE_BEHIND


class Following:
    """Route following of C robots (see the module's docstring)."""

    def __init__(self, c):
        """Start every robot at the first segment of its route."""
        self.segment = np.zeros(c, np.int64)    # segment holding the robot's projection
        self.carrot = np.full((c, 2), np.nan)   # [m] the point steered to on the route
        self.clearance = np.full(c, math.inf)   # [m] narrowest place of the route near it
        self._packed = (None, None)             # (key, packed routes) of the last tick

    def follow(self, robots, routes, versions, pos, grid, lookahead, radius, true_radius):
        """
        Follow the routes of ``robots`` (R,) int; return carrot (R, 2), left (R,), lost (R,).

        routes : the C routes ((K, 2) arrays), versions (C,) their change counters; pos (C, 2)
        [m]; grid : GridMap or None; lookahead [m]: the carrot distance; radius (C,) [m]: the
        clearance the routes were planned with; true_radius (C,) [m]: the true discs (the
        least a line to the carrot keeps in a narrow passage). ``clearance`` is set for
        ``robots`` and inf for the others.
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
        if grid is not None:
            self.clearance[robots] = route_clearance(
                points, offsets, segment, pos[robots], PASSAGE_BEHIND, PASSAGE_AHEAD,
                grid.distance_cells(), grid.origin, grid.resolution)
        return carrot, left, lost


__all__ = ['Following']
