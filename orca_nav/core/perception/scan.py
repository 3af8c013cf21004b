"""
Laser scans to line segments for ORCA (numpy, no ROS).

The pipeline of `scan_to_segments`:

1. ranges and beam angles to points in the global frame (`scan_to_points`); NaN, inf and
   values outside [range_min, range_max] are dropped;
2. points on known robots (any robot's disc plus `robot_margin`, the scanning robot included)
   are dropped: robots are avoided as agents, not as obstacles;
3. the remaining points, in beam order, are split into clusters where consecutive points are
   farther apart than `jump_distance` (dropped beams between them or not); a full 360 degree
   scan wraps around;
4. each cluster is split recursively at its point farthest from the chord while that distance
   exceeds `split_tolerance` (iterative end-point fit), then adjacent pieces are merged while
   their union still fits one line within `split_tolerance`;
5. pieces (and clusters) with fewer than `min_points` points are dropped; each remaining piece
   becomes a segment on its total-least-squares line, from the projection of its first point to
   the projection of its last, so range noise neither tilts nor shortens it.

Example::

    >>> import numpy as np
    >>> from orca_nav.core.perception.raycast import cast_rays
    >>> wall = np.array([[[2.0, -1.0], [2.0, 1.0]]])
    >>> angles = np.linspace(-np.pi / 2, np.pi / 2, 181)
    >>> ranges = cast_rays(np.zeros(2), angles, 10.0, wall, None, None)
    >>> segments = scan_to_segments(ranges, angles[0], angles[1] - angles[0], 0.05, 10.0,
    ...                             sensor_pose=[0.0, 0.0, 0.0])
    >>> segments.shape
    (1, 2, 2)
"""

import math
from typing import Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike

from .checks import finite_scalar
from .._jit import njit
from ..geometry import as_pose as _as_pose

# A scan whose beams cover at least 2 pi minus this [rad] is a full circle: its first and last
# beams are neighbours, so a cluster may wrap around (float slack on n * angle_increment).
FULL_CIRCLE_SLACK = 1e-6
# Chords shorter than this [m] are treated as a point: split distances are measured to the
# point instead (a cluster that curves back onto its start, e.g. a closed ring of points).
MIN_CHORD_LENGTH = 1e-9
# Segments shorter than this [m] are dropped: the solver normalises segment directions, and a
# shorter segment is numerically a point (only possible for a cluster of coincident returns).
MIN_SEGMENT_LENGTH = 1e-6
# A beam trims a remembered segment's end (``recheck_segments``) only if it crosses the segment
# at least this steeply (sine of the angle between them): at a grazing angle a few centimetres
# of pose error move the crossing far along the segment, and a real wall would read as free.
MIN_TRIM_SINE = 0.2


def _check_scan_params(angle_min, angle_increment, range_min, range_max):
    """Validate the scan header scalars; returns them as floats."""
    angle_min = finite_scalar(angle_min, 'angle_min')
    angle_increment = finite_scalar(angle_increment, 'angle_increment')
    if angle_increment == 0.0:
        raise ValueError('angle_increment must be non-zero')
    range_min = finite_scalar(range_min, 'range_min')
    range_max = finite_scalar(range_max, 'range_max')
    if range_min > range_max:
        raise ValueError('range_min (%r) must not exceed range_max (%r)' % (range_min, range_max))
    return angle_min, angle_increment, range_min, range_max


@njit(cache=True)
def _scan_to_local(ranges, angle_min, angle_increment, range_min, range_max, yaw):
    """
    Convert the valid beams to points relative to the sensor, in global orientation.

    Returns beam (K,) int indices of the kept beams and their x, y (K,) [m]. A beam is valid
    when its range is finite and within [range_min, range_max].
    """
    n = ranges.shape[0]
    beam = np.empty(n, np.int64)
    x = np.empty(n)
    y = np.empty(n)
    k = 0
    for b in range(n):
        r = ranges[b]
        if math.isfinite(r) and range_min <= r <= range_max:
            angle = (yaw + angle_min) + b * angle_increment
            beam[k] = b
            x[k] = r * math.cos(angle)
            y[k] = r * math.sin(angle)
            k += 1
    return beam[:k], x[:k], y[:k]


def scan_to_points(ranges: ArrayLike, angle_min: float, angle_increment: float,
                   range_min: float, range_max: float,
                   sensor_pose: ArrayLike) -> Tuple[np.ndarray, np.ndarray]:
    """
    Convert the valid returns of a scan to points in the global frame.

    ranges : (B,) array_like; measured ranges [m] (sensor_msgs/LaserScan.ranges); any values, NaN
        and inf included.
    angle_min : float; angle of beam 0 in the sensor frame [rad].
    angle_increment : float; angle between consecutive beams [rad]; non-zero, may be negative
        (clockwise scans).
    range_min, range_max : float; returns outside [range_min, range_max] are dropped [m]; finite,
        range_min <= range_max.
    sensor_pose : (3,) array_like; x [m], y [m], yaw [rad] of the sensor in the global frame (see
        `compose_pose`).

    Returns points (K, 2) float64 ndarray: global positions of the kept returns [m], in beam order;
    beams (K,) int ndarray: index into ranges of each kept return.
    """
    ranges = np.asarray(ranges, dtype=np.float64).reshape(-1)
    angle_min, angle_increment, range_min, range_max = _check_scan_params(
        angle_min, angle_increment, range_min, range_max)
    pose = _as_pose(sensor_pose, 'sensor_pose')
    beam, x, y = _scan_to_local(ranges, angle_min, angle_increment, range_min, range_max,
                                pose[2])
    return np.stack([x + pose[0], y + pose[1]], axis=1), beam


def _as_robots(positions, radii):
    """Validate known robots; returns (R, 2) positions and (R,) radii (R may be 0)."""
    if positions is None and radii is None:
        return np.empty((0, 2)), np.empty(0)
    if positions is None or radii is None:
        raise ValueError('robot_positions and robot_radii must be given together')
    pos = np.asarray(positions, dtype=np.float64)
    rad = np.asarray(radii, dtype=np.float64).reshape(-1)
    if pos.size == 0 and rad.size == 0:
        return np.empty((0, 2)), np.empty(0)
    if pos.ndim != 2 or pos.shape[1] != 2 or rad.shape[0] != pos.shape[0]:
        raise ValueError('robot_positions must be (R, 2) and robot_radii (R,), got %s and %s'
                         % (pos.shape, rad.shape))
    if not (np.all(np.isfinite(pos)) and np.all(np.isfinite(rad)) and np.all(rad >= 0.0)):
        raise ValueError('robot_positions and robot_radii must be finite, radii non-negative')
    return pos, rad


def scan_to_segments(ranges: ArrayLike, angle_min: float, angle_increment: float,
                     range_min: float, range_max: float, sensor_pose: ArrayLike,
                     robot_positions: Optional[ArrayLike] = None,
                     robot_radii: Optional[ArrayLike] = None, robot_margin: float = 0.1,
                     split_tolerance: float = 0.05, jump_distance: float = 0.3,
                     min_points: int = 3, extend_ends: bool = False) -> np.ndarray:
    """
    Line segments fitted to a laser scan, in the global frame.

    ranges : (B,) array_like; measured ranges [m]; NaN, inf and out-of-range values are dropped.
        B may be 0.
    angle_min : float; angle of beam 0 in the sensor frame [rad].
    angle_increment : float; angle between consecutive beams [rad]; non-zero (negative: clockwise
        scan).
    range_min, range_max : float; valid range interval [m]; finite, range_min <= range_max.
    sensor_pose : (3,) array_like; x [m], y [m], yaw [rad] of the sensor in the global frame;
        compose the robot's odometry pose with the sensor's mounting offset using `compose_pose`.
    robot_positions : (R, 2) array_like or None; known robot centres in the global frame [m], the
        scanning robot included.
    robot_radii : (R,) array_like or None; their radii [m].
    robot_margin : float; returns within radius + robot_margin of a robot centre are dropped [m],
        >= 0. Larger tolerates more localisation error between robots, but also hides real
        obstacles that close to a robot (the scanning robot included); smaller lets a robot's own
        edge or a slightly mislocated neighbour show up as a phantom wall segment.
    split_tolerance : float; largest distance of a point from its segment's line [m], > 0. Larger
        gives fewer, longer segments that cut corners (rounded obstacles become coarse polygons);
        smaller follows the shape more closely but lets range noise break a wall into pieces: keep
        it at 4-5 times the range noise sigma or more.
    jump_distance : float; consecutive returns farther apart than this start a new cluster [m],
        > 0. Larger joins objects across gaps (a doorway narrower than this becomes a wall);
        smaller splits walls seen at a grazing angle or far away, whose beam spacing exceeds it.
    min_points : int; clusters and fitted pieces supported by fewer returns are dropped, >= 2.
        Larger drops more noise (stray returns, mixed pixels at edges) but also thin obstacles: a
        3 cm table leg 2 m away returns only 1-2 beams at 0.5 degree resolution, so the default of
        3 drops it; smaller keeps such legs but also two-return noise.
    extend_ends : bool; conservative ends: the true end of an object lies somewhere between its
        last return and the next beam, so each end of a cluster is pushed along its segment to
        where the next beam's ray crosses the segment's line (at most jump_distance / 2). Off: the
        ends are the projected extreme returns, up to a beam spacing short (3.5 cm at 2 m with
        1 degree beams, more at grazing angles), and a robot passing an end clips it.

    Returns segments (M, 2, 2) float64 ndarray: segment end points in the global frame [m];
    segments[i] = (start, end), start first in beam order. Finite; M is 0 when nothing is left.

    Raises ValueError on non-finite header scalars, angle_increment == 0, range_min > range_max, a
    malformed sensor pose or robot list, or out-of-range tuning parameters.

    Every return a segment is fitted to lies within split_tolerance of the segment's line. Cost:
    vectorised over returns; the split-and-merge per cluster is compiled (numba), so a 720-beam
    scan takes well under a millisecond.
    """
    ranges = np.asarray(ranges, dtype=np.float64).reshape(-1)
    angle_min, angle_increment, range_min, range_max = _check_scan_params(
        angle_min, angle_increment, range_min, range_max)
    pose = _as_pose(sensor_pose, 'sensor_pose')
    robot_pos, robot_rad = _as_robots(robot_positions, robot_radii)
    robot_margin = finite_scalar(robot_margin, 'robot_margin')
    split_tolerance = finite_scalar(split_tolerance, 'split_tolerance')
    jump_distance = finite_scalar(jump_distance, 'jump_distance')
    if robot_margin < 0.0:
        raise ValueError('robot_margin must be >= 0, got %r' % (robot_margin,))
    if split_tolerance <= 0.0:
        raise ValueError('split_tolerance must be positive, got %r' % (split_tolerance,))
    if jump_distance <= 0.0:
        raise ValueError('jump_distance must be positive, got %r' % (jump_distance,))
    if int(min_points) != min_points or min_points < 2:
        raise ValueError('min_points must be an integer >= 2, got %r' % (min_points,))
    min_points = int(min_points)

    empty = np.empty((0, 2, 2))
    n_beams = ranges.shape[0]
    if n_beams == 0:
        return empty

    # Work relative to the sensor (global orientation): small coordinates keep the running
    # sums used for the line fits well conditioned.
    beam, x, y = _scan_to_local(ranges, angle_min, angle_increment, range_min, range_max,
                                pose[2])

    # Returns on known robots (disc plus margin) are not obstacles.
    if robot_pos.shape[0] and x.shape[0]:
        rel = robot_pos - pose[:2]  # (R, 2)
        off_robots = outside_discs(x, y, rel[:, 0].copy(), rel[:, 1].copy(),
                                   robot_rad + robot_margin)
        beam, x, y = beam[off_robots], x[off_robots], y[off_robots]
    if x.shape[0] < min_points:
        return empty

    starts, ends, x, y = _clusters(beam, x, y, n_beams, abs(angle_increment), jump_distance)
    segments = _fit_clusters(x, y, _running_sums(x, y), starts, ends, split_tolerance,
                             min_points, abs(angle_increment) if extend_ends else 0.0,
                             0.5 * jump_distance)
    if not segments.shape[0]:
        return empty
    out = segments.reshape(-1, 2, 2)
    out[:, :, 0] += pose[0]
    out[:, :, 1] += pose[1]
    return out


@njit(cache=True)
def nearest_segments(x, y, segments):
    """
    Return (distance (K,) [m], index (K,)) of the segment nearest each point (x, y).

    x, y (K,) float64 [m]; segments (M, 2, 2) float64. With no segment the distances are inf
    and the indices -1. Compiled: no (K, M) array (a 720-beam scan against a few walls in
    some 10 us).
    """
    k_pts = x.shape[0]
    dist = np.full(k_pts, np.inf)
    index = np.full(k_pts, -1, np.int64)
    for j in range(segments.shape[0]):
        ax, ay = segments[j, 0, 0], segments[j, 0, 1]
        ex, ey = segments[j, 1, 0] - ax, segments[j, 1, 1] - ay
        length_sq = max(ex * ex + ey * ey, 1e-18)
        for k in range(k_pts):
            px, py = x[k] - ax, y[k] - ay
            t = min(max((px * ex + py * ey) / length_sq, 0.0), 1.0)
            dx, dy = px - t * ex, py - t * ey
            d = math.sqrt(dx * dx + dy * dy)
            if d < dist[k]:
                dist[k] = d
                index[k] = j
    return dist, index


@njit(cache=True)
def outside_discs(x, y, cx, cy, reach):
    """
    Return (K,) bool: which points (x, y) lie in none of the discs (cx, cy, reach).

    x, y (K,) and cx, cy, reach (R,) float64 [m]. A point at exactly ``reach`` from a centre
    is outside. Compiled: only the discs that overlap the points' bounding box are tested,
    without a (K, R) array (a 360-beam scan among 50 robots in some 20 us).
    """
    out = np.ones(x.shape[0], np.bool_)
    if x.shape[0] == 0:
        return out
    lo_x, hi_x, lo_y, hi_y = x.min(), x.max(), y.min(), y.max()
    near = np.empty(cx.shape[0], np.int64)
    m = 0
    for r in range(cx.shape[0]):
        if (cx[r] + reach[r] >= lo_x and cx[r] - reach[r] <= hi_x
                and cy[r] + reach[r] >= lo_y and cy[r] - reach[r] <= hi_y):
            near[m] = r
            m += 1
    for k in range(x.shape[0]):
        for j in range(m):
            r = near[j]
            if (x[k] - cx[r]) ** 2 + (y[k] - cy[r]) ** 2 < reach[r] * reach[r]:
                out[k] = False
                break
    return out


@njit(cache=True)
def _clusters(beam, x, y, n_beams, increment, jump_distance):
    """
    Split returns (in beam order) into clusters where consecutive returns jump apart.

    The test is the distance between consecutive kept returns, whether or not beams were dropped
    between them (NaN, out of range, on a robot): that distance is the width of the opening
    between the two returns, which is what matters for passing through. (An arc-length test
    on the dropped beams adds nothing: the chord is at least 2/pi of the arc.)
    Returns starts, ends (inclusive) (M,) int64 indices into the returned x, y, which are the
    inputs rotated so that a cluster wrapping around a full-circle scan is contiguous (and, for
    a single closed ring, with its first return repeated at the end).
    """
    n_pts = x.shape[0]
    jump_sq = jump_distance * jump_distance
    cut = np.empty(n_pts, np.int64)  # a cluster ends at each cut
    m = 0
    for k in range(n_pts - 1):
        if (x[k + 1] - x[k]) ** 2 + (y[k + 1] - y[k]) ** 2 > jump_sq:
            cut[m] = k
            m += 1
    cut = cut[:m]
    full_circle = n_beams * increment >= 2.0 * math.pi - FULL_CIRCLE_SLACK
    if full_circle and n_pts > 2:
        # Full circle: the last and first returns are neighbours unless they jump apart.
        if (x[0] - x[-1]) ** 2 + (y[0] - y[-1]) ** 2 <= jump_sq:
            if m:
                shift = cut[0] + 1  # start at the first cluster that does not wrap
                x = np.concatenate((x[shift:], x[:shift]))
                y = np.concatenate((y[shift:], y[:shift]))
                cut = cut[1:] - shift  # the old first cut is now the (implicit) last end
            else:
                widest = beam[0] + n_beams - beam[-1]
                for k in range(n_pts - 1):
                    widest = max(widest, beam[k + 1] - beam[k])
                if widest * increment < math.pi:
                    # One closed ring around the sensor (a room seen whole; no angular hole
                    # of half a turn, unlike a small blob whose ends are merely close): open
                    # it at the return farthest from the sensor, which on a polygon is next
                    # to a vertex, and repeat that return at the end so the last piece closes
                    # the ring.
                    k = int(np.argmax(x * x + y * y))
                    x = np.concatenate((x[k:], x[:k + 1]))
                    y = np.concatenate((y[k:], y[:k + 1]))
                    return np.zeros(1, np.int64), np.full(1, n_pts, np.int64), x, y
    starts = np.empty(cut.shape[0] + 1, np.int64)
    ends = np.empty(cut.shape[0] + 1, np.int64)
    starts[0] = 0
    starts[1:] = cut + 1
    ends[:-1] = cut
    ends[-1] = n_pts - 1
    return starts, ends, x, y


@njit(cache=True)
def _running_sums(x, y):
    """(5, K + 1) prefix sums of x, y, x^2, y^2, x*y, for O(1) line fits."""
    sums = np.zeros((5, x.shape[0] + 1))
    for k in range(x.shape[0]):
        sums[0, k + 1] = sums[0, k] + x[k]
        sums[1, k + 1] = sums[1, k] + y[k]
        sums[2, k + 1] = sums[2, k] + x[k] * x[k]
        sums[3, k + 1] = sums[3, k] + y[k] * y[k]
        sums[4, k + 1] = sums[4, k] + x[k] * y[k]
    return sums


@njit(cache=True)
def _fit_line(x, y, sums, i, j):
    """
    Total-least-squares line through returns i..j (inclusive).

    Returns (cx, cy, ux, uy, max_residual): centroid [m], unit direction, and the largest
    distance of any of the returns from the line [m].
    """
    n = j - i + 1
    cx = (sums[0, j + 1] - sums[0, i]) / n
    cy = (sums[1, j + 1] - sums[1, i]) / n
    cxx = (sums[2, j + 1] - sums[2, i]) / n - cx * cx
    cyy = (sums[3, j + 1] - sums[3, i]) / n - cy * cy
    cxy = (sums[4, j + 1] - sums[4, i]) / n - cx * cy
    # Major axis of the 2x2 covariance: the direction of least squared perpendicular distance.
    theta = 0.5 * math.atan2(2.0 * cxy, cxx - cyy)
    ux = math.cos(theta)
    uy = math.sin(theta)
    # Exact residuals from the points (the running sums only steer the direction).
    centre = -cx * uy + cy * ux
    residual = 0.0
    for k in range(i, j + 1):
        residual = max(residual, abs(-x[k] * uy + y[k] * ux - centre))
    return cx, cy, ux, uy, residual


@njit(cache=True)
def _split(x, y, i, j, tol):
    """
    Split returns i..j by iterative end-point fit: at the farthest return from the chord.

    Returns a list of (i, j) pieces in order; neighbouring pieces share their split return.
    """
    pieces = [(i, j)]
    pieces.pop()
    stack = [(i, j)]
    while len(stack):
        a, b = stack.pop()
        if b - a < 2:
            pieces.append((a, b))
            continue
        px = x[a]
        py = y[a]
        dx = x[b] - px
        dy = y[b] - py
        chord = math.hypot(dx, dy)
        far = -1.0
        split = a + 1
        for k in range(a + 1, b):
            if chord > MIN_CHORD_LENGTH:
                d = abs((x[k] - px) * (dy / chord) - (y[k] - py) * (dx / chord))
            else:
                # The cluster curves back onto its start: distance to that point instead.
                d = math.hypot(x[k] - px, y[k] - py)
            if d > far:
                far = d
                split = k
        if far > tol:
            stack.append((split, b))  # popped after the left half: pieces stay in order
            stack.append((a, split))
        else:
            pieces.append((a, b))
    return pieces


@njit(cache=True)
def _extension(px, py, ux, uy, increment, cap):
    """
    Return how far [m] an end can lie beyond the last return, at most cap.

    From end (px, py), relative to the sensor, along the unit direction (ux, uy) to the ray
    one beam (``increment`` [rad]) further.
    """
    r = math.hypot(px, py)
    if r <= 0.0:
        return 0.0
    # Sine of the angle between the ray through the end and the segment (grazing: small).
    s = abs(px * uy - py * ux) / r
    tan_inc = math.tan(increment)
    # Law of sines in the triangle sensor - end - crossing of the next ray.
    denominator = s - tan_inc * abs(px * ux + py * uy) / r
    if denominator <= 0.0:
        return cap
    return min(cap, r * tan_inc / denominator)


@njit(cache=True)
def _fit_clusters(x, y, sums, starts, ends, tol, min_points, increment, cap):
    """
    Split-and-merge every cluster; return (M, 4) segments relative to the sensor.

    increment > 0: each end of a cluster is extended toward the next beam (``_extension``).
    """
    out = np.empty((x.shape[0], 4))
    m = 0
    for c in range(starts.shape[0]):
        start = starts[c]
        end = ends[c]
        if end - start + 1 < min_points:
            continue
        pieces = _split(x, y, start, end, tol)
        # Merge adjacent pieces while their union still fits one line (the end-point fit
        # splits where noise tilts a chord; the least-squares line of the union does not tilt).
        merged = [(start, end)]
        merged.pop()
        cur_i, cur_j = pieces[0]
        for p in range(1, len(pieces)):
            nxt_i, nxt_j = pieces[p]
            if _fit_line(x, y, sums, cur_i, nxt_j)[4] <= tol:
                cur_j = nxt_j
            else:
                merged.append((cur_i, cur_j))
                cur_i, cur_j = nxt_i, nxt_j
        merged.append((cur_i, cur_j))
        for i, j in merged:
            if j - i + 1 < min_points:
                continue  # too few returns to trust (stray points, spikes)
            cx, cy, ux, uy, residual = _fit_line(x, y, sums, i, j)
            if residual <= tol:
                # End points: the extreme returns projected onto the least-squares line.
                t0 = (x[i] - cx) * ux + (y[i] - cy) * uy
                t1 = (x[j] - cx) * ux + (y[j] - cy) * uy
                x0, y0 = cx + t0 * ux, cy + t0 * uy
                x1, y1 = cx + t1 * ux, cy + t1 * uy
            else:
                # The least-squares line fits worse than the chord did: keep the chord.
                x0, y0, x1, y1 = x[i], y[i], x[j], y[j]
            length = math.hypot(x1 - x0, y1 - y0)
            if increment > 0.0 and length >= MIN_SEGMENT_LENGTH:
                ux, uy = (x1 - x0) / length, (y1 - y0) / length
                if i == start:
                    e = _extension(x0, y0, -ux, -uy, increment, cap)
                    x0, y0 = x0 - e * ux, y0 - e * uy
                if j == end:
                    e = _extension(x1, y1, ux, uy, increment, cap)
                    x1, y1 = x1 + e * ux, y1 + e * uy
            if length >= MIN_SEGMENT_LENGTH:
                out[m, 0] = x0
                out[m, 1] = y0
                out[m, 2] = x1
                out[m, 3] = y1
                m += 1
    return out[:m]


def recheck_segments(old, new, ranges, angle_min, angle_increment, range_min, range_max,
                     sensor_pose, spacing, max_samples, cover_tolerance, seen_tolerance):
    """
    Check remembered segments against a new scan: which are covered, which are still there.

    old : (M, 2, 2) remembered segments; new : (K, 2, 2) the new scan's segments; the scan's
    fields as in `scan_to_segments` (already validated); sensor_pose (3,) global.
    Each old segment is looked at in points ``spacing`` apart (2 to ``max_samples`` of them,
    both ends included). A point is *seen* when its beam returns within ``seen_tolerance`` of
    it, *passed through* when its beam reads more than ``seen_tolerance`` beyond it; a point out
    of range or field of view, under a NaN reading or behind a nearer return is neither.
    Returns three (M,) bool arrays and one (M, 2) float array:

    covered : every point lies within ``cover_tolerance`` of some new segment (the new scan
        sees that segment again; False for all when there is no new segment);
    still_there : at least as many points seen as passed through (none in view counts as
        there). False means the beams pass through most of where it was: a segment one of
        whose ends touches a real wall, the rest of it in free space, is not there.
    sighted : some point is seen (the scan shows it, not merely fails to see through it).

    ends : the part of each segment the scan does not show to be free, as parameters
        (t0, t1) along it (0 the start, 1 the end; (0, 1) for all of it). From each end, while
        the beam nearest the next point crosses the segment (at ``MIN_TRIM_SINE`` or steeper)
        and reads more than ``seen_tolerance`` beyond the crossing, the end is moved in to
        that crossing: the laser sees past it there. A grazing beam, one that returns, one out
        of view or behind a nearer return stops the trim. So an overhang beyond a wall's real
        end (``extend_ends``, or a wall seen from a wrong pose) goes as soon as a beam passes
        through it; a segment seen through from end to end keeps (0, 1) (``still_there``
        decides on it).
    """
    old = np.ascontiguousarray(old, dtype=np.float64).reshape(-1, 2, 2)
    new = np.ascontiguousarray(new, dtype=np.float64).reshape(-1, 2, 2)
    ranges = np.ascontiguousarray(ranges, dtype=np.float64).reshape(-1)
    sensor = np.asarray(sensor_pose, dtype=np.float64).reshape(3)
    full_circle = len(ranges) * abs(angle_increment) >= 2.0 * math.pi - FULL_CIRCLE_SLACK
    return _recheck(old, new, ranges, float(angle_min), float(angle_increment),
                    float(range_min), float(range_max), sensor[0], sensor[1], sensor[2],
                    full_circle, float(spacing), int(max_samples), float(cover_tolerance),
                    float(seen_tolerance))


@njit(cache=True)
def _beam_at(px, py, sx, sy, syaw, angle_min, inc, beams, full_circle, range_min, range_max):
    """Return (beam nearest point (px, py), its distance from the sensor); beam -1: not in view."""
    rx, ry = px - sx, py - sy
    dist = math.hypot(rx, ry)
    if dist < range_min or dist > range_max:
        return -1, dist
    angle = math.atan2(ry, rx) - syaw - angle_min
    index = np.rint(((angle * (1.0 if inc > 0.0 else -1.0)) % (2.0 * math.pi)) / abs(inc))
    if not index < 1e15:
        return -1, dist
    b = int(index)
    if full_circle:
        b %= beams
    if b < 0 or b >= beams:
        return -1, dist
    return b, dist


@njit(cache=True)
def _measured(ranges, b, range_max):
    """Return beam b's reading, inf for no return (NaN stays NaN: it says nothing)."""
    reading = ranges[b]
    if (math.isinf(reading) and reading > 0.0) or reading > range_max:
        return math.inf
    return reading


@njit(cache=True)
def _free_crossing(ax, ay, dx, dy, b, ranges, angle_min, inc, sx, sy, syaw, range_max,
                   seen_tol):
    """
    Return where beam b crosses segment a + u d (u clamped to [0, 1]) if it reads past it.

    -1 if it does not: it returns there, has no reading, crosses behind the sensor or at a
    grazing angle (sine below MIN_TRIM_SINE).
    """
    theta = syaw + angle_min + b * inc
    cx, cy = math.cos(theta), math.sin(theta)
    cross = cx * dy - cy * dx
    length = math.hypot(dx, dy)
    if length <= 0.0 or abs(cross) < MIN_TRIM_SINE * length:
        return -1.0
    wx, wy = ax - sx, ay - sy
    r = (wx * dy - wy * dx) / cross
    u = (wx * cy - wy * cx) / cross
    if r <= 0.0 or not _measured(ranges, b, range_max) > r + seen_tol:
        return -1.0
    return min(max(u, 0.0), 1.0)


@njit(cache=True)
def _recheck(old, new, ranges, angle_min, inc, range_min, range_max, sx, sy, syaw,
             full_circle, spacing, max_samples, cover_tol, seen_tol):
    m, k, beams = old.shape[0], new.shape[0], ranges.shape[0]
    covered = np.zeros(m, np.bool_)
    still = np.zeros(m, np.bool_)
    sighted = np.zeros(m, np.bool_)
    ends = np.zeros((m, 2))
    ends[:, 1] = 1.0
    candidates = np.empty(k, np.int64)
    for j in range(m):
        ax, ay = old[j, 0, 0], old[j, 0, 1]
        dx, dy = old[j, 1, 0] - ax, old[j, 1, 1] - ay
        count = min(max(int(math.ceil(math.hypot(dx, dy) / spacing)) + 1, 2), max_samples)
        # Trim each end while the beams pass through it (see recheck_segments).
        t0, t1 = 0.0, 1.0
        for forward in (True, False):
            for q in range(count):
                s = q if forward else count - 1 - q
                t = s / (count - 1)
                b, _ = _beam_at(ax + t * dx, ay + t * dy, sx, sy, syaw, angle_min, inc,
                                beams, full_circle, range_min, range_max)
                if b < 0:
                    break
                u = _free_crossing(ax, ay, dx, dy, b, ranges, angle_min, inc, sx, sy, syaw,
                                   range_max, seen_tol)
                if u < 0.0:
                    break
                if forward:
                    t0 = max(t0, u)
                else:
                    t1 = min(t1, u)
        if t0 < t1:
            ends[j, 0], ends[j, 1] = t0, t1
        # Only new segments whose box comes within cover_tol of this one's can cover it.
        n_near = 0
        for q in range(k):
            if (min(new[q, 0, 0], new[q, 1, 0]) <= max(ax, ax + dx) + cover_tol
                    and max(new[q, 0, 0], new[q, 1, 0]) >= min(ax, ax + dx) - cover_tol
                    and min(new[q, 0, 1], new[q, 1, 1]) <= max(ay, ay + dy) + cover_tol
                    and max(new[q, 0, 1], new[q, 1, 1]) >= min(ay, ay + dy) - cover_tol):
                candidates[n_near] = q
                n_near += 1
        all_covered = n_near > 0
        seen = 0
        through = 0
        for s in range(count):
            t = s / (count - 1)
            px, py = ax + t * dx, ay + t * dy
            if all_covered:
                near = False
                for c in range(n_near):
                    q = candidates[c]
                    qx, qy = new[q, 0, 0], new[q, 0, 1]
                    ex, ey = new[q, 1, 0] - qx, new[q, 1, 1] - qy
                    fx, fy = px - qx, py - qy
                    u = (fx * ex + fy * ey) / max(ex * ex + ey * ey, 1e-18)
                    u = min(max(u, 0.0), 1.0)
                    if math.hypot(fx - u * ex, fy - u * ey) <= cover_tol:
                        near = True
                        break
                all_covered = near
            if 2 * seen > count:
                # Most points seen: there, whatever the rest shows; only coverage is open.
                if not all_covered:
                    break
                continue
            b, dist = _beam_at(px, py, sx, sy, syaw, angle_min, inc, beams, full_circle,
                               range_min, range_max)
            if b < 0:
                continue
            measured = _measured(ranges, b, range_max)
            if abs(measured - dist) <= seen_tol:
                seen += 1
            elif measured > dist + seen_tol:
                through += 1
        covered[j] = all_covered
        still[j] = seen >= through
        sighted[j] = seen > 0
    return covered, still, sighted, ends


def warmup() -> None:
    """Compile the scan kernels now (a few seconds once; cached on disk afterwards)."""
    inc = 2.0 * math.pi / 360
    angles = -math.pi + inc * np.arange(360)
    # A square room 4 m wide seen from its centre, one scan for the segments, one re-check.
    ranges = 2.0 / np.maximum(np.abs(np.cos(angles)), np.abs(np.sin(angles)))
    segments = scan_to_segments(ranges, -math.pi, inc, 0.05, 6.0, (0.0, 0.0, 0.0),
                                [(1.0, 0.0)], [0.2], extend_ends=True)
    recheck_segments(segments, segments, ranges, -math.pi, inc, 0.05, 6.0, (0.0, 0.0, 0.0),
                     0.05, 40, 0.05, 0.1)
    nearest_segments(np.zeros(1), np.zeros(1), segments)
