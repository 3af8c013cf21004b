"""
Route following for a whole fleet at once: carrots and progress along polyline routes.

The routes of N robots are packed into one array (``pack_routes``); ``follow_routes`` finds,
for every robot, its projection onto its route (searching from the segment it was on last, so
a route that comes back near itself is not short-cut), the distance left along the route, and
a carrot ``lookahead`` metres further along it, pulled back toward the robot while the straight
line robot -> carrot crosses an occupied cell of the map or comes nearer to one than the route
keeps (the clearance asked for shrinks in a narrow passage to what the route has there, never
below ``floor``: the true disc). A numba kernel: microseconds per
robot, where a Python loop over robots with numpy calls took about 0.4 ms each.

Example::

    >>> import numpy as np
    >>> points, offsets = pack_routes([np.array([[0.0, 0.0], [0.0, 3.0], [3.0, 3.0]])])
    >>> carrot, segment, remaining, lost = follow_routes(
    ...     points, offsets, np.zeros(1, np.int64), np.array([[0.1, 2.5]]), 1.0)
    >>> carrot.round(2).tolist(), segment.tolist(), remaining.round(2).tolist()
    ([[0.5, 3.0]], [0], [3.5])
"""

import math
from typing import Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import ndimage

from .._jit import njit

# A hidden carrot is pulled back toward the robot's projection in this many steps.
PULLBACK_STEPS = 10
# Visibility samples the robot -> carrot line every SAMPLE_STEP cells.
SAMPLE_STEP = 0.25
# [cells] A sample this much closer to an obstacle than the clearance the line must keep still
# passes: distances are between cell centres, so a line parallel to a wall at the clearance
# crosses cells up to one cell nearer.
CLEARANCE_SLACK = 1.0


def pack_routes(routes: Sequence[ArrayLike]) -> Tuple[np.ndarray, np.ndarray]:
    """
    Pack N routes ((K_i, 2) arrays [m], K_i >= 1) into points (P, 2) and offsets (N + 1,).

    Route i is ``points[offsets[i]:offsets[i + 1]]``.
    """
    sizes = [len(r) for r in routes]
    offsets = np.zeros(len(routes) + 1, np.int64)
    offsets[1:] = np.cumsum(sizes)
    points = (np.concatenate([np.asarray(r, float).reshape(-1, 2) for r in routes])
              if routes else np.zeros((0, 2)))
    return np.ascontiguousarray(points), offsets


def follow_routes(points: ArrayLike, offsets: ArrayLike, segment: ArrayLike,
                  positions: ArrayLike, lookahead: ArrayLike,
                  occupied: Optional[np.ndarray] = None,
                  origin: Sequence[float] = (0.0, 0.0, 0.0), resolution: float = 1.0,
                  radius: ArrayLike = 0.0, distance: Optional[np.ndarray] = None,
                  floor: Optional[ArrayLike] = None
                  ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """
    Carrots, segments and distances left for N robots on their packed routes.

    points, offsets : packed routes (``pack_routes``); segment : (N,) int, the segment each
    robot was on last (0 at first); positions : (N, 2) [m]; lookahead : [m] scalar or (N,).
    occupied : (H, W) bool map of cells that block sight (None: every carrot is visible), with
    its origin (x, y, yaw) [m, m, rad] and resolution [m / cell]. radius : [m] scalar or (N,):
    the clearance the line robot -> carrot keeps from occupied cells, the one the routes were
    planned with where there is room: a carrot round a door jamb that the robot cannot drive
    to straight is not in sight. Where the route itself passes nearer (a narrow door), the
    line needs only what the route has between the robot's projection and the carrot, but
    at least ``floor`` [m] scalar or (N,) (the true disc; None: ``radius``, no shrinking).
    A robot nearer an obstacle than that (pushed toward a wall) needs only as much
    as it has: it sees along the wall, not past a corner that comes nearer. distance : (H, W)
    the distance [cells] from each cell's centre to the nearest occupied one
    (``GridMap``'s distance field; computed from ``occupied`` when None).
    Returns carrot (N, 2) [m], segment (N,) int (pass it back next time), remaining (N,) [m]
    and lost (N,) bool: not even the robot's projection onto its route is in sight, so it
    cannot drive straight back to its route (it was pushed through another door, or beside a
    jamb that stands between it and its route): its route should be planned again.
    """
    n = len(offsets) - 1
    look = np.broadcast_to(np.asarray(lookahead, dtype=float), (n,)).copy()
    rad = np.broadcast_to(np.asarray(radius, dtype=float), (n,)) / float(resolution)
    low = rad if floor is None else (
        np.broadcast_to(np.asarray(floor, dtype=float), (n,)) / float(resolution))
    if occupied is None:
        distance = np.zeros((0, 0))
    elif distance is None:
        occupied = np.asarray(occupied, bool)
        distance = (ndimage.distance_transform_edt(~occupied) if occupied.any()
                    else np.full(occupied.shape, np.inf))
    carrot = np.zeros((n, 2))
    seg_out = np.asarray(segment, dtype=np.int64).copy()
    remaining = np.zeros(n)
    lost = np.zeros(n, np.bool_)
    _follow(np.ascontiguousarray(points, dtype=float), np.asarray(offsets, np.int64), seg_out,
            np.ascontiguousarray(positions, dtype=float), look,
            np.ascontiguousarray(distance, dtype=float),
            float(origin[0]), float(origin[1]), float(origin[2]), 1.0 / float(resolution),
            np.ascontiguousarray(rad), np.ascontiguousarray(np.minimum(low, rad)), carrot,
            remaining, lost)
    return carrot, seg_out, remaining, lost


def route_clearance(points: ArrayLike, offsets: ArrayLike, segment: ArrayLike,
                    positions: ArrayLike, behind: float, ahead: float, distance: np.ndarray,
                    origin: Sequence[float], resolution: float) -> np.ndarray:
    """
    Return the narrowest place of each robot's route near it: how wide its way is there.

    points, offsets, segment, positions : as for ``follow_routes`` (pass the segments it
    returned); the route is searched from ``behind`` [m] before each robot's projection to
    ``ahead`` [m] after it. distance : (H, W) the map's distance field [cells] (``GridMap``),
    with its origin (x, y, yaw) and resolution [m / cell]. Returns (N,) [m]: the least
    distance from that stretch of route to an occupied cell's edge (half a cell nearer than
    its centre), inf for a one-point route or off the map. A route through the middle of a
    door has about half the door's width here.

    >>> import numpy as np
    >>> occupied = np.zeros((20, 40), bool)
    >>> occupied[:8, 18:22] = occupied[13:, 18:22] = True  # a wall, a 0.5 m gap
    >>> from scipy import ndimage
    >>> field = ndimage.distance_transform_edt(~occupied)
    >>> points, offsets = pack_routes([np.array([[0.5, 1.05], [3.5, 1.05]])])
    >>> route_clearance(points, offsets, np.zeros(1, np.int64), np.array([[0.6, 1.05]]),
    ...                 0.5, 1.0, field, (0.0, 0.0, 0.0), 0.1).round(2).tolist()
    [0.31]
    >>> route_clearance(points, offsets, np.zeros(1, np.int64), np.array([[1.5, 1.05]]),
    ...                 0.5, 1.0, field, (0.0, 0.0, 0.0), 0.1).round(2).tolist()
    [0.25]
    """
    n = len(offsets) - 1
    out = np.full(n, np.inf)
    _clearances(np.ascontiguousarray(points, dtype=float), np.asarray(offsets, np.int64),
                np.asarray(segment, np.int64), np.ascontiguousarray(positions, dtype=float),
                float(behind), float(ahead), np.ascontiguousarray(distance, dtype=float),
                float(origin[0]), float(origin[1]), float(origin[2]), 1.0 / float(resolution),
                out)
    return np.where(np.isfinite(out), (out - 0.5) * float(resolution), np.inf)


@njit(cache=True)
def _clearances(points, offsets, segment, positions, behind, ahead, distance, ox, oy, yaw,
                inv_res, out):
    c, s = math.cos(yaw), math.sin(yaw)
    for i in range(len(offsets) - 1):
        first, last = offsets[i], offsets[i + 1]
        if last - first < 2:
            continue
        arc, _, _ = _project(points, first, last, segment[i], positions[i, 0], positions[i, 1])
        out[i] = _route_clearance(points, first, last, distance, ox, oy, c, s, inv_res,
                                  arc - behind, arc + ahead)


@njit(cache=True)
def _cell_distance(distance, ox, oy, c, s, inv_res, x, y):
    """Return the distance field [cells] at world point (x, y) [m] (inf off the map)."""
    h, w = distance.shape
    col = int(math.floor((c * (x - ox) + s * (y - oy)) * inv_res))
    row = int(math.floor((-s * (x - ox) + c * (y - oy)) * inv_res))
    if 0 <= row < h and 0 <= col < w:
        return distance[row, col]
    return math.inf


@njit(cache=True)
def _visible(distance, ox, oy, c, s, inv_res, ax, ay, bx, by, clearance):
    """
    Return True when the line a -> b [m] keeps ``clearance`` [cells] from occupied cells.

    A line from a robot nearer than that keeps as much as the robot has (less
    CLEARANCE_SLACK); clearance 0: only that it crosses no occupied cell. Sampled.
    """
    h, w = distance.shape
    if h == 0:
        return True
    need = min(clearance, _cell_distance(distance, ox, oy, c, s, inv_res, ax, ay))
    need = max(need - CLEARANCE_SLACK, 0.0)
    length = math.hypot(bx - ax, by - ay) * inv_res
    count = int(length / SAMPLE_STEP) + 1
    for k in range(count + 1):
        t = k / count
        d = _cell_distance(distance, ox, oy, c, s, inv_res, ax + t * (bx - ax),
                           ay + t * (by - ay))
        if d <= 0.0 or d < need:
            return False
    return True


@njit(cache=True)
def _route_clearance(points, first, last, distance, ox, oy, c, s, inv_res, arc0, arc1):
    """Return the least distance field value [cells] along the route from arc0 to arc1 [m]."""
    least = math.inf
    if distance.shape[0] == 0:
        return least
    travelled = 0.0
    for k in range(first, last - 1):
        dx = points[k + 1, 0] - points[k, 0]
        dy = points[k + 1, 1] - points[k, 1]
        length = math.hypot(dx, dy)
        lo, hi = max(arc0 - travelled, 0.0), min(arc1 - travelled, length)
        if hi >= lo and length > 0.0:
            count = int((hi - lo) * inv_res / SAMPLE_STEP) + 1
            for j in range(count + 1):
                t = (lo + (hi - lo) * j / count) / length
                d = _cell_distance(distance, ox, oy, c, s, inv_res, points[k, 0] + t * dx,
                                   points[k, 1] + t * dy)
                least = min(least, d)
        travelled += length
        if travelled > arc1:
            break
    return least


@njit(cache=True)
def _point_at(points, first, last, arc):
    """Return the point at arc length ``arc`` [m] along points[first:last] (clamped)."""
    travelled = 0.0
    for k in range(first, last - 1):
        dx = points[k + 1, 0] - points[k, 0]
        dy = points[k + 1, 1] - points[k, 1]
        length = math.hypot(dx, dy)
        if travelled + length >= arc and length > 0.0:
            t = (arc - travelled) / length
            return points[k, 0] + t * dx, points[k, 1] + t * dy
        travelled += length
    return points[last - 1, 0], points[last - 1, 1]


@njit(cache=True)
def _need(points, first, last, distance, ox, oy, c, s, inv_res, arc0, arc1, rad, low):
    """Return the clearance [cells] a line to the carrot at arc1 keeps: see follow_routes."""
    if low >= rad:
        return rad
    return min(rad, max(low, _route_clearance(points, first, last, distance, ox, oy, c, s,
                                              inv_res, arc0, arc1)))


@njit(cache=True)
def _project(points, first, last, segment, px, py):
    """
    Project (px, py) onto the route points[first:last] (at least two points).

    The nearest segment from ``segment`` on (ties: the earliest). Returns the arc length [m]
    of the projection, its segment (from the route's start) and the route's length [m].
    """
    start = min(max(segment, 0), last - first - 2)
    best_gap, best_arc, best_seg = np.inf, 0.0, start
    arc0 = 0.0
    for k in range(first, last - 1):
        dx = points[k + 1, 0] - points[k, 0]
        dy = points[k + 1, 1] - points[k, 1]
        length2 = dx * dx + dy * dy
        length = math.sqrt(length2)
        if k - first >= start:
            t = 0.0
            if length2 > 0.0:
                t = ((px - points[k, 0]) * dx + (py - points[k, 1]) * dy) / length2
                t = min(max(t, 0.0), 1.0)
            gap = math.hypot(points[k, 0] + t * dx - px, points[k, 1] + t * dy - py)
            if gap < best_gap - 1e-9:
                best_gap, best_arc, best_seg = gap, arc0 + t * length, k - first
        arc0 += length
    return best_arc, best_seg, arc0


@njit(cache=True)
def _follow(points, offsets, segment, positions, look, distance, ox, oy, yaw, inv_res, rad,
            low, carrot, remaining, lost):
    c, s = math.cos(yaw), math.sin(yaw)
    for i in range(len(offsets) - 1):
        first, last = offsets[i], offsets[i + 1]
        px, py = positions[i, 0], positions[i, 1]
        if last - first < 2:
            # A one-point route: the point is the goal.
            carrot[i, 0], carrot[i, 1] = points[first, 0], points[first, 1]
            remaining[i] = math.hypot(points[first, 0] - px, points[first, 1] - py)
            segment[i] = 0
            continue
        best_arc, best_seg, total = _project(points, first, last, segment[i], px, py)
        segment[i] = best_seg
        remaining[i] = total - best_arc
        target = min(best_arc + look[i], total)
        cx, cy = _point_at(points, first, last, target)
        # Hidden carrot (e.g. round a corner): walk it back toward the projection. The line
        # keeps the routes' clearance, or what the route keeps up to the carrot (a narrow
        # door), but at least the floor.
        arc = target
        step = 1
        while step <= PULLBACK_STEPS and not _visible(
                distance, ox, oy, c, s, inv_res, px, py, cx, cy,
                _need(points, first, last, distance, ox, oy, c, s, inv_res, best_arc, arc,
                      rad[i], low[i])):
            arc = target - (target - best_arc) * step / PULLBACK_STEPS
            cx, cy = _point_at(points, first, last, arc)
            step += 1
        if step > PULLBACK_STEPS and not _visible(
                distance, ox, oy, c, s, inv_res, px, py, cx, cy,
                _need(points, first, last, distance, ox, oy, c, s, inv_res, best_arc, arc,
                      rad[i], low[i])):
            lost[i] = True
        carrot[i, 0], carrot[i, 1] = cx, cy
