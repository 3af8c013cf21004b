"""
The one-robot Python reference of route following, for tests of orca_nav.core.routes.follow.

``carrot`` and ``progress_along`` do for one robot, with numpy and an optional visibility
callable, what the compiled ``follow_routes`` does for a fleet; tests check one against the
other.
"""

from typing import Callable, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike

# Projections onto the route closer than this [m] to the nearest one count as ties, so the
# earliest segment wins (a route passing twice near a point is not short-cut).
PROJECTION_TIE = 1e-9
# carrot() pulls a hidden carrot back toward the robot in this many steps.
PULLBACK_STEPS = 10


def _cumulative(points: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ((K-1, 2) segment vectors, (K-1,) lengths, (K,) arc length at each point) [m]."""
    delta = np.diff(points, axis=0)
    lengths = np.hypot(delta[:, 0], delta[:, 1])
    return delta, lengths, np.concatenate([[0.0], np.cumsum(lengths)])


def _point_at(points: np.ndarray, delta: np.ndarray, lengths: np.ndarray, arc: np.ndarray,
              target: float) -> Tuple[np.ndarray, int]:
    """Return (the (2,) point at arc length ``target`` [m], clamped to the route; its segment)."""
    if target >= arc[-1]:
        # Past the end: the goal.
        return points[-1].copy(), len(lengths) - 1
    target = max(target, 0.0)
    segment = int(np.clip(np.searchsorted(arc, target, side='right') - 1, 0, len(lengths) - 1))
    if lengths[segment] <= 0.0:
        return points[segment].copy(), segment
    t = (target - arc[segment]) / lengths[segment]
    return points[segment] + t * delta[segment], segment


def progress_along(points: ArrayLike, position: ArrayLike,
                   start_index: int = 0) -> Tuple[float, int]:
    """
    Project a position onto a route.

    Inputs:
        points: (K, 2) route waypoints [m]
        position: (2,) robot position [m]
        start_index: first segment searched (segments before it are already done)

    Output:
        (arc length [m] from the route start to the projection, index of the segment holding
        it). The nearest segment from ``start_index`` on wins; on a tie, the earliest.
    """
    points = np.asarray(points, dtype=float)
    position = np.asarray(position, dtype=float)
    if len(points) < 2:
        # A one-point route: the robot is at its start.
        return 0.0, 0
    delta, lengths, arc = _cumulative(points)
    first = int(np.clip(start_index, 0, len(lengths) - 1))
    a, d, length2 = points[first:-1], delta[first:], lengths[first:] ** 2
    safe = np.where(length2 > 0.0, length2, 1.0)
    t = np.where(length2 > 0.0, np.clip(np.sum((position - a) * d, axis=1) / safe, 0.0, 1.0),
                 0.0)
    gap = np.hypot(*(a + t[:, np.newaxis] * d - position).T)
    best = int(np.argmax(gap <= gap.min() + PROJECTION_TIE))
    segment = first + best
    return float(arc[segment] + t[best] * lengths[segment]), segment


def carrot(points: ArrayLike, position: ArrayLike, lookahead: float, progress_index: int = 0,
           visible: Optional[Callable[[np.ndarray], bool]] = None) -> Tuple[np.ndarray, int]:
    """
    Return the point to steer to: ``lookahead`` metres ahead of the robot along the route.

    Inputs:
        points: (K, 2) route waypoints [m]
        position: (2,) robot position [m]
        lookahead: distance along the route ahead of the robot's projection [m]
        progress_index: first segment searched for the projection (see progress_along), so a
            route that loops back is not short-cut
        visible: optional callable (2,) point [m] -> bool; when given and the carrot is not
            visible, it is pulled back along the route toward the robot's projection (in
            PULLBACK_STEPS steps) until it is; if none is, the projection itself is returned

    Output:
        ((2,) carrot point [m], index of the segment holding the robot's projection: pass it
        back as ``progress_index`` next time). Past the end of the route, the carrot is the
        goal.
    """
    points = np.asarray(points, dtype=float)
    if len(points) < 2:
        return points[-1].copy(), 0
    progress, segment = progress_along(points, position, progress_index)
    delta, lengths, arc = _cumulative(points)
    target = min(progress + max(float(lookahead), 0.0), arc[-1])
    point, _ = _point_at(points, delta, lengths, arc, target)
    if visible is None or visible(point):
        return point, segment
    # The carrot is hidden (e.g. round a corner): walk it back toward the robot.
    for step in range(1, PULLBACK_STEPS + 1):
        pulled, _ = _point_at(points, delta, lengths, arc,
                              target - (target - progress) * step / PULLBACK_STEPS)
        if visible(pulled):
            return pulled, segment
    return pulled, segment


# --- snapping ---------------------------------------------------------------------------------
