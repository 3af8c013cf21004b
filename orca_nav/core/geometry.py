"""
Plane geometry shared by the core, the controller and the simulator.

Each word is defined once here: angle wrapping, pose composition (a frame placed in another),
point-to-segment distance, points in polygons and the gaps between polygons and segments.
The last three loop over a few points, segments and edges per call, called thousands of
times a simulated second (the simulator measures every cart's gap to the walls and to the
other carts): compiled with numba, they give numpy's answers to the bit (the polygon-segment
gap within 1e-15 m: numpy's matrix product used fused multiply-adds) in 1-3 us a call
against numpy's 17-104 us (a cart and 12 segments).

Example::

    >>> import numpy as np
    >>> compose_pose([1.0, 2.0, np.pi / 2], [0.5, 0.0, 0.0]).round(6).tolist()
    [1.0, 2.5, 1.570796]
    >>> float(wrap_angle(3 * np.pi).round(6))
    -3.141593
"""

import math
from typing import Tuple

import numpy as np
from numpy.typing import ArrayLike

from ._jit import njit

# Segments shorter than this [m] count as a point in point_segment_distance (no division by 0).
MIN_SEGMENT_LENGTH_SQ = 1e-18


def wrap_angle(angle: 'np.ndarray | float') -> np.ndarray:
    """Wrap angles [rad] to [-pi, pi)."""
    return (np.asarray(angle, dtype=float) + np.pi) % (2.0 * np.pi) - np.pi


def as_pose(pose: ArrayLike, name: str) -> np.ndarray:
    """Validate a finite (3,) pose [x m, y m, yaw rad]; return float64 (3,) or raise ValueError."""
    arr = np.asarray(pose, dtype=np.float64).reshape(-1)
    if arr.shape != (3,) or not np.isfinite(arr).all():
        raise ValueError(f'{name} must be a finite (3,) array [x, y, yaw], got {pose!r}')
    return arr


def compose_pose(frame: ArrayLike, pose: ArrayLike) -> np.ndarray:
    """
    Pose given in ``frame`` expressed in the frame's parent: ``frame (+) pose``.

    frame : (3,) x [m], y [m], yaw [rad] of the frame in its parent (e.g. the robot in the
        global frame); pose : (3,) the pose in that frame (e.g. a sensor's mounting offset).
    Returns (3,) float64 x, y, yaw in the parent frame, yaw wrapped to [-pi, pi).
    """
    fx, fy, fyaw = as_pose(frame, 'frame').tolist()
    px, py, pyaw = as_pose(pose, 'pose').tolist()
    c, s = math.cos(fyaw), math.sin(fyaw)
    yaw = (fyaw + pyaw + math.pi) % (2.0 * math.pi) - math.pi
    return np.array([fx + c * px - s * py, fy + s * px + c * py, yaw])


def compose_poses(frames: np.ndarray, xy: np.ndarray,
                  yaw: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """
    Vectorised ``compose_pose``: N poses, each in its own frame, into the parent frame.

    frames : (N, 3) x, y, yaw of each frame in the parent (e.g. each robot's odometry frame in
    the global frame); xy : (N, 2) [m]; yaw : (N,) [rad]. Returns xy (N, 2), yaw (N,) (not
    wrapped).
    """
    frames = np.asarray(frames, dtype=float)
    c, s = np.cos(frames[:, 2]), np.sin(frames[:, 2])
    gx = frames[:, 0] + c * xy[:, 0] - s * xy[:, 1]
    gy = frames[:, 1] + s * xy[:, 0] + c * xy[:, 1]
    return np.stack([gx, gy], axis=1), yaw + frames[:, 2]


def point_segment_distance(points: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """
    Distance from every point to every segment.

    points : (P, 2) [m]; segments : (M, 2, 2) [m]. Returns (P, M) [m].
    """
    return _point_segment_distances(np.ascontiguousarray(points, dtype=float).reshape(-1, 2),
                                    np.ascontiguousarray(segments, dtype=float)
                                    .reshape(-1, 2, 2))


@njit(cache=True, inline='always')
def _min(a, b):
    """Return min(a, b) as numpy's minimum does: NaN wins."""
    return a if a < b or a != a else b


@njit(cache=True, inline='always')
def _max(a, b):
    """Return max(a, b) as numpy's maximum does: NaN wins."""
    return a if a > b or a != a else b


@njit(cache=True, inline='always')
def _point_segment(px, py, ax, ay, bx, by):
    """Return the distance from point p to segment ab [m] (length 0: to a)."""
    abx = bx - ax
    aby = by - ay
    length_sq = abx * abx + aby * aby
    if length_sq < MIN_SEGMENT_LENGTH_SQ:
        length_sq = MIN_SEGMENT_LENGTH_SQ
    apx = px - ax
    apy = py - ay
    t = (apx * abx + apy * aby) / length_sq
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    dx = apx - t * abx
    dy = apy - t * aby
    return math.sqrt(dx * dx + dy * dy)


@njit(cache=True)
def _point_segment_distances(points, segments):
    """``point_segment_distance`` of (P, 2) and (M, 2, 2) float64 arrays: (P, M)."""
    out = np.empty((points.shape[0], segments.shape[0]))
    for i in range(points.shape[0]):
        for j in range(segments.shape[0]):
            out[i, j] = _point_segment(points[i, 0], points[i, 1], segments[j, 0, 0],
                                       segments[j, 0, 1], segments[j, 1, 0], segments[j, 1, 1])
    return out


def points_in_polygon(points, polygon):
    """Even-odd test of (P, 2) points against one (K, 2) polygon. Returns (P,) bool."""
    p = np.ascontiguousarray(polygon, dtype=float).reshape(-1, 2)
    return points_in_polygons(points, np.stack([p, np.roll(p, -1, axis=0)], axis=1),
                              np.zeros(1, np.int64))


def points_in_polygons(points, edges, starts):
    """
    Whether each (P, 2) point lies inside one of several polygons (even-odd): (P,) bool.

    edges : (E, 2, 2) every polygon's edges, polygon after polygon; starts : (G,) the row of
    each polygon's first edge, ascending. Each edge's crossings of the ray from a point
    towards +x are counted per polygon.
    """
    return _points_in_polygons(np.ascontiguousarray(points, dtype=float).reshape(-1, 2),
                               np.ascontiguousarray(edges, dtype=float).reshape(-1, 2, 2),
                               np.ascontiguousarray(starts, dtype=np.int64).reshape(-1))


@njit(cache=True)
def _points_in_polygons(points, edges, starts):
    """``points_in_polygons`` of float64 (P, 2), (E, 2, 2) and int64 (G,) arrays."""
    out = np.zeros(points.shape[0], np.bool_)
    for i in range(points.shape[0]):
        x, y = points[i, 0], points[i, 1]
        for g in range(starts.shape[0]):
            end = starts[g + 1] if g + 1 < starts.shape[0] else edges.shape[0]
            odd = False
            for e in range(starts[g], end):
                x0, y0, x1, y1 = edges[e, 0, 0], edges[e, 0, 1], edges[e, 1, 0], edges[e, 1, 1]
                if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
                    odd = not odd
            if odd:
                out[i] = True
                break
    return out


# Polygons: (K, 2) vertices in order, either winding unless a function says otherwise.


def polygon_area(polygon: ArrayLike) -> float:
    """Signed area of a (K, 2) polygon (shoelace) [m^2]: positive counter-clockwise."""
    p = np.asarray(polygon, dtype=float)
    q = np.roll(p, -1, axis=0)
    return 0.5 * float((p[:, 0] * q[:, 1] - q[:, 0] * p[:, 1]).sum())


def _cross(o, a, b):
    """Z of (a - o) x (b - o): positive when o, a, b turn left."""
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _segments_meet(a, b, c, d):
    """Whether segments ab and cd share a point (touching counts)."""
    d1, d2 = _cross(c, d, a), _cross(c, d, b)
    d3, d4 = _cross(a, b, c), _cross(a, b, d)
    if ((d1 > 0) != (d2 > 0) and d1 != 0 and d2 != 0
            and (d3 > 0) != (d4 > 0) and d3 != 0 and d4 != 0):
        return True  # Proper crossing.

    def on_segment(p, q, r):  # r on segment pq, given that the three are collinear
        return (min(p[0], q[0]) <= r[0] <= max(p[0], q[0])
                and min(p[1], q[1]) <= r[1] <= max(p[1], q[1]))
    return ((d1 == 0 and on_segment(c, d, a)) or (d2 == 0 and on_segment(c, d, b))
            or (d3 == 0 and on_segment(a, b, c)) or (d4 == 0 and on_segment(a, b, d)))


def polygon_self_intersects(polygon: ArrayLike) -> bool:
    """
    Whether a (K, 2) polygon is not simple: two edges cross or touch, or a vertex repeats.

    Adjacent edges share their vertex and nothing else (folding back on itself counts as
    touching). O(K^2): footprints have a handful of vertices.

    >>> polygon_self_intersects([[0, 0], [1, 1], [1, 0], [0, 1]])  # a bow tie
    True
    >>> polygon_self_intersects([[0, 0], [1, 0], [1, 1], [0, 1]])
    False
    """
    p = np.asarray(polygon, dtype=float).tolist()
    k = len(p)
    edges = [(p[i], p[(i + 1) % k]) for i in range(k)]
    for i in range(k):
        a, b = edges[i]
        if a == b:
            return True  # A repeated vertex: an edge of length 0.
        for j in range(i + 1, k):
            c, d = edges[j]
            if j == i + 1 or (i == 0 and j == k - 1):
                # Adjacent: they share one vertex; they overlap only if they fold back.
                shared, other_a, other_c = (b, a, d) if j == i + 1 else (a, b, c)
                if (_cross(shared, other_a, other_c) == 0
                        and np.dot(np.subtract(other_a, shared),
                                   np.subtract(other_c, shared)) > 0):
                    return True
                continue
            if _segments_meet(a, b, c, d):
                return True
    return False


def polygon_is_convex(polygon: ArrayLike) -> bool:
    """Whether a simple (K, 2) polygon is convex (collinear vertices allowed)."""
    p = np.asarray(polygon, dtype=float)
    turns = [_cross(p[i - 1], p[i], p[(i + 1) % len(p)]) for i in range(len(p))]
    return all(t >= 0 for t in turns) or all(t <= 0 for t in turns)


def convex_hull(points: ArrayLike) -> np.ndarray:
    """Convex hull of (K, 2) points: (H, 2) vertices counter-clockwise (scipy's Qhull)."""
    from scipy.spatial import ConvexHull

    p = np.asarray(points, dtype=float)
    return p[ConvexHull(p).vertices]


def polygon_contains_origin(polygon: ArrayLike) -> bool:
    """Whether the point (0, 0) is strictly inside a convex (K, 2) polygon (not on an edge)."""
    p = np.asarray(polygon, dtype=float)
    q = np.roll(p, -1, axis=0)
    turns = p[:, 0] * q[:, 1] - p[:, 1] * q[:, 0]  # origin left of each edge: positive
    return bool(np.all(turns > 0) or np.all(turns < 0))


def circumscribed_radius(polygon: ArrayLike) -> float:
    """Radius of the smallest disc about the origin that holds a (K, 2) polygon [m]."""
    return float(np.hypot(*np.asarray(polygon, dtype=float).T).max())


def placed_polygon(polygon: ArrayLike, pose: ArrayLike) -> np.ndarray:
    """Return a (K, 2) polygon given in a body frame placed at pose (x, y, yaw) [m, rad]."""
    p = np.asarray(polygon, dtype=float)
    x, y, yaw = (float(v) for v in pose)
    c, s = math.cos(yaw), math.sin(yaw)
    return np.stack([x + c * p[:, 0] - s * p[:, 1], y + s * p[:, 0] + c * p[:, 1]], axis=1)


def polygon_edges(polygon: ArrayLike) -> np.ndarray:
    """Return the (K, 2, 2) edges of a (K, 2) polygon, vertex k to vertex k + 1."""
    p = np.asarray(polygon, dtype=float)
    return np.stack([p, np.roll(p, -1, axis=0)], axis=1)


def convex_gap(a: ArrayLike, b: ArrayLike) -> float:
    """
    Signed gap between two convex polygons, each (K, 2) counter-clockwise [m].

    Positive: their distance; negative: minus the depth one must move to part them (the
    separating axis test, exact for convex polygons); 0: touching.

    >>> square = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    >>> convex_gap(square, square + [2.5, 0.0]), convex_gap(square, square + [1.5, 0.0])
    (0.5, -0.5)
    """
    return float(_convex_gap(np.ascontiguousarray(a, dtype=float).reshape(-1, 2),
                             np.ascontiguousarray(b, dtype=float).reshape(-1, 2)))


@njit(cache=True)
def _beyond(p, q):
    """Return how far q lies beyond p's edges: the largest over them of q's least [m]."""
    best = -math.inf
    for k in range(p.shape[0]):
        k1 = (k + 1) % p.shape[0]
        ex = p[k1, 0] - p[k, 0]
        ey = p[k1, 1] - p[k, 1]
        norm = math.sqrt(ey * ey + ex * ex)
        nx = ey / norm  # outward (counter-clockwise)
        ny = -ex / norm
        low = math.inf
        for v in range(q.shape[0]):
            low = _min(low, (q[v, 0] - p[k, 0]) * nx + (q[v, 1] - p[k, 1]) * ny)
        best = _max(best, low)
    return best


@njit(cache=True)
def _vertex_edge(p, q):
    """Return the least distance from a vertex of p to an edge of polygon q [m]."""
    least = math.inf
    for k in range(q.shape[0]):
        k1 = (k + 1) % q.shape[0]
        for v in range(p.shape[0]):
            least = _min(least, _point_segment(p[v, 0], p[v, 1], q[k, 0], q[k, 1], q[k1, 0],
                                               q[k1, 1]))
    return least


@njit(cache=True)
def _convex_gap(a, b):
    """``convex_gap`` of two (K, 2) float64 arrays."""
    separation = -math.inf
    for p, q in ((a, b), (b, a)):
        beyond = _beyond(p, q)
        if beyond > separation:
            separation = beyond
    if separation <= 0.0:
        return separation  # Overlapping or touching: the least depth along an edge normal.
    # Apart: the nearest points are a vertex of one and an edge of the other.
    ab = _vertex_edge(a, b)
    ba = _vertex_edge(b, a)
    return ba if ba < ab else ab


def polygon_disc_gap(polygon: ArrayLike, centre: ArrayLike, radius: float) -> float:
    """Signed gap between a (K, 2) polygon and a disc [m]: negative where they overlap."""
    centre = np.asarray(centre, dtype=float).reshape(1, 2)
    p = np.asarray(polygon, dtype=float)
    d = float(point_segment_distance(centre, polygon_edges(p)).min())
    return (-d if points_in_polygon(centre, p)[0] else d) - radius


def polygon_segments_gap(polygon: ArrayLike, segments: ArrayLike) -> np.ndarray:
    """
    Signed gaps between one convex polygon and each of M segments [m].

    polygon : (K, 2) counter-clockwise; segments : (M, 2, 2). Returns (M,): as ``convex_gap``
    with each segment taken as a polygon of two vertices (the separating axes are the
    polygon's edge normals and the segment's normal), exact for convex polygons.

    >>> square = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    >>> polygon_segments_gap(square, [[[1.5, -3.0], [1.5, 3.0]], [[0.5, -3.0], [0.5, 3.0]]])
    array([ 0.5, -0.5])
    """
    return _polygon_segments_gap(np.ascontiguousarray(polygon, dtype=float).reshape(-1, 2),
                                 np.ascontiguousarray(segments, dtype=float).reshape(-1, 2, 2))


@njit(cache=True)
def _polygon_segments_gap(p, seg):
    """``polygon_segments_gap`` of (K, 2) and (M, 2, 2) float64 arrays."""
    out = np.empty(seg.shape[0])
    for m in range(seg.shape[0]):
        s0x, s0y, s1x, s1y = seg[m, 0, 0], seg[m, 0, 1], seg[m, 1, 0], seg[m, 1, 1]
        # The polygon's axes: how far the segment's nearer end lies beyond each edge.
        separation = _beyond(p, seg[m])
        # The segment's axis: its line against the polygon's extent across it (none at 0
        # length).
        ex = s1x - s0x
        ey = s1y - s0y
        length = math.hypot(ex, ey)
        if length > 0.0:
            mx = ey / length
            my = -ex / length
            level = s0x * mx + s0y * my
            low, high = math.inf, -math.inf
            for k in range(p.shape[0]):
                x = p[k, 0] * mx + p[k, 1] * my
                low = _min(low, x)
                high = _max(high, x)
            separation = _max(separation, _max(low - level, level - high))
        if separation > 0.0:
            # Apart: the nearest points are a vertex of one and an edge of the other.
            apart = math.inf
            for k in range(p.shape[0]):
                apart = _min(apart, _point_segment(p[k, 0], p[k, 1], s0x, s0y, s1x, s1y))
            separation = _min(apart, _vertex_edge(seg[m], p))
        out[m] = separation
    return out


def warmup() -> None:
    """Compile the kernels above now (seconds once; cached on disk afterwards)."""
    square = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    point_segment_distance(square, polygon_edges(square))
    points_in_polygon(square, square)
    convex_gap(square, square + 3.0)
    polygon_segments_gap(square, polygon_edges(square + 3.0))
