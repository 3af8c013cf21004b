"""
2-D ray casting against line segments and circles (numpy, no ROS).

The simulator uses this to synthesise laser scans: one origin, B rays at global angles, a static
world of M segments (walls, box faces) and C discs (the other robots).

Example::

    >>> import numpy as np
    >>> walls = polygon_edges([np.array([[-2.0, -2.0], [2.0, -2.0], [2.0, 2.0], [-2.0, 2.0]])])
    >>> cast_rays(np.zeros(2), np.array([0.0, np.pi]), 10.0, walls,
    ...           np.array([[-1.0, 0.0]]), np.array([0.25]))
    array([2.  , 0.75])
"""

from typing import Optional, Sequence, Union

import numpy as np
from numpy.typing import ArrayLike

# A segment exactly parallel to a ray is hit only if it lies on the ray's line: its start within
# this distance of the line [m] (floating-point slack, far below any sensor resolution).
COLLINEAR_EPS = 1e-12
# Rays are processed in chunks of about this many (ray, primitive) pairs: every (b, M) temporary
# then stays below glibc's 128 KiB mmap threshold and in cache, which is 2-3x faster than one
# (B, M) pass that page-faults fresh memory for each temporary.
RAY_CHUNK_ELEMENTS = 12000
# Slack on the segment parameter s in [0, 1] so that a ray through a shared polygon vertex hits
# at least one of the two edges despite rounding.
SEGMENT_PARAM_EPS = 1e-12


def _as_segments(segments):
    """Validate segments; returns a (M, 2, 2) float64 array (M may be 0)."""
    if segments is None:
        return np.empty((0, 2, 2))
    seg = np.asarray(segments, dtype=np.float64)
    if seg.size == 0:
        return np.empty((0, 2, 2))
    if seg.ndim != 3 or seg.shape[1:] != (2, 2):
        raise ValueError('segments must have shape (M, 2, 2), got %s' % (seg.shape,))
    return seg


def _as_circles(centers, radii):
    """Validate circles; returns (C, 2) centres and (C,) radii as float64 (C may be 0)."""
    if centers is None or radii is None:
        if not (centers is None and radii is None):
            # One given without the other is a caller bug, unless it is empty.
            given = centers if centers is not None else radii
            if np.asarray(given).size != 0:
                raise ValueError('circle_centers and circle_radii must be given together')
        return np.empty((0, 2)), np.empty(0)
    cen = np.asarray(centers, dtype=np.float64)
    rad = np.asarray(radii, dtype=np.float64).reshape(-1)
    if cen.size == 0 and rad.size == 0:
        return np.empty((0, 2)), np.empty(0)
    if cen.ndim != 2 or cen.shape[1] != 2:
        raise ValueError('circle_centers must have shape (C, 2), got %s' % (cen.shape,))
    if rad.shape[0] != cen.shape[0]:
        raise ValueError('circle_radii must have shape (C,) = (%d,), got %s'
                         % (cen.shape[0], rad.shape))
    if np.any(rad < 0.0):
        raise ValueError('circle_radii must be non-negative')
    return cen, rad


def cast_rays(origin: ArrayLike, angles: ArrayLike, max_range: float,
              segments: Optional[ArrayLike], circle_centers: Optional[ArrayLike],
              circle_radii: Optional[ArrayLike]) -> np.ndarray:
    """
    Distance from origin along each ray to the first segment or circle it hits.

    origin : (2,) array_like; ray origin in the global frame [m].
    angles : (B,) array_like; global ray angles [rad] (counter-clockwise from the global x axis).
    max_range : float; hits farther than this are reported as inf [m]; must be positive
        (inf allowed).
    segments : (M, 2, 2) array_like or None; segment end points [m]; segment i runs from
        segments[i, 0] to segments[i, 1] and is solid from both sides. M may be 0. Segments
        containing NaN are never hit.
    circle_centers : (C, 2) array_like or None; disc centres [m]. C may be 0.
    circle_radii : (C,) array_like or None; disc radii [m].

    Returns ranges (B,) float64 ndarray: distance to the first hit [m]; inf where nothing is hit
    within max_range.

    Circles whose closed disc contains the origin are ignored (a ray starting inside a disc does
    not report the disc's boundary): the simulator excludes the scanning robot's own disc itself,
    and this keeps a robot that overlaps another from seeing only zeros. A ray that starts on a
    segment reports 0. A segment collinear with the ray is hit at its nearest point ahead of the
    origin. The cost is O(B * (M + C)) in vectorised numpy; primitives that lie entirely beyond
    max_range are culled first.
    """
    origin = np.asarray(origin, dtype=np.float64).reshape(-1)
    if origin.shape != (2,) or not np.all(np.isfinite(origin)):
        raise ValueError('origin must be a finite (2,) array, got %r' % (origin,))
    angles = np.asarray(angles, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(angles)):
        raise ValueError('angles must be finite')
    max_range = float(max_range)
    if not max_range > 0.0:
        raise ValueError('max_range must be positive, got %r' % (max_range,))
    seg = _as_segments(segments)
    cen, rad = _as_circles(circle_centers, circle_radii)

    n_rays = angles.shape[0]
    best = np.full(n_rays, np.inf)
    seg = _cull_segments(origin, seg, max_range)
    cen, rad = _cull_circles(origin, cen, rad, max_range)
    n_prims = max(seg.shape[0], cen.shape[0])
    if n_rays == 0 or n_prims == 0:
        return best
    dx = np.cos(angles)[:, None]  # (B, 1) unit ray directions
    dy = np.sin(angles)[:, None]
    # Segments as contiguous (M,) columns: broadcasting against strided columns is slower.
    a = seg[:, 0, :] - origin  # (M, 2) segment starts relative to the origin
    e = seg[:, 1, :] - seg[:, 0, :]  # (M, 2) segment directions (not normalised)
    ax, ay = np.ascontiguousarray(a.T)
    ex, ey = np.ascontiguousarray(e.T)
    fx, fy = np.ascontiguousarray((origin - cen).T)  # (C,) origin relative to each centre
    c_term = fx * fx + fy * fy - rad * rad  # (C,) |f|^2 - r^2 > 0: origin outside

    chunk = max(1, RAY_CHUNK_ELEMENTS // n_prims)
    for lo in range(0, n_rays, chunk):
        hi = min(lo + chunk, n_rays)
        if ax.shape[0]:
            best[lo:hi] = _segment_hits(dx[lo:hi], dy[lo:hi], ax, ay, ex, ey)
        if fx.shape[0]:
            np.minimum(best[lo:hi], _circle_hits(dx[lo:hi], dy[lo:hi], fx, fy, c_term),
                       out=best[lo:hi])

    best[best > max_range] = np.inf
    return best


def _cull_segments(origin, seg, max_range):
    """Drop segments that are NaN/inf or whose nearest point lies beyond max_range."""
    finite = np.all(np.isfinite(seg.reshape(-1, 4)), axis=1)
    if not np.isfinite(max_range) or seg.shape[0] == 0:
        return seg[finite]
    a = seg[:, 0, :] - origin
    e = seg[:, 1, :] - seg[:, 0, :]
    len_sq = np.einsum('ij,ij->i', e, e)
    with np.errstate(invalid='ignore', divide='ignore'):
        s0 = np.clip(np.where(len_sq > 0.0, -np.einsum('ij,ij->i', a, e) / len_sq, 0.0), 0.0, 1.0)
    nearest = a + s0[:, None] * e
    return seg[finite & (np.einsum('ij,ij->i', nearest, nearest) <= max_range * max_range)]


def _cull_circles(origin, cen, rad, max_range):
    """Drop circles that contain the origin, are NaN/inf, or lie entirely beyond max_range."""
    dist = np.hypot(cen[:, 0] - origin[0], cen[:, 1] - origin[1])
    # Circles whose closed disc contains the origin are ignored (see cast_rays).
    keep = (dist > rad) & np.isfinite(dist) & np.isfinite(rad)
    if np.isfinite(max_range):
        keep &= dist - rad <= max_range
    return cen[keep], rad[keep]


def _segment_hits(dx, dy, ax, ay, ex, ey):
    """
    Per-ray distance to the nearest segment hit; (b,) with inf for misses.

    dx, dy : (b, 1) unit ray directions; ax, ay : (M,) segment starts relative to the origin;
    ex, ey : (M,) segment end minus start.
    """
    # Solve origin + t * d = start + s * e:  t = (a x e) / (d x e),  s = (a x d) / (d x e).
    # In-place arithmetic: these (b, M) passes are the whole cost of a scan.
    denom = dx * ey
    denom -= dy * ex  # (b, M) d x e
    t_num = ax * ey - ay * ex  # (M,) a x e, independent of the ray
    s = ax * dy
    s -= ay * dx  # (b, M) a x d
    with np.errstate(invalid='ignore', divide='ignore', over='ignore'):
        inv = np.reciprocal(denom)
        t = inv * t_num
        s *= inv
    # Nearly parallel non-collinear pairs give huge t, which max_range discards; exactly parallel
    # pairs give inf/NaN, which these tests reject.
    valid = t >= 0.0
    valid &= s >= -SEGMENT_PARAM_EPS
    valid &= s <= 1.0 + SEGMENT_PARAM_EPS
    dist = np.where(valid, t, np.inf).min(axis=1)

    # Lines are exactly parallel: a hit only if the segment is collinear with the ray; then at
    # the nearest end ahead of the origin (0 if the origin lies on the segment).
    ray_idx, seg_idx = np.nonzero(denom == 0.0)
    if ray_idx.size:
        rdx, rdy = dx[ray_idx, 0], dy[ray_idx, 0]
        sax, say, sex, sey = ax[seg_idx], ay[seg_idx], ex[seg_idx], ey[seg_idx]
        ta = sax * rdx + say * rdy  # ray parameter of the segment start
        tb = (sax + sex) * rdx + (say + sey) * rdy  # ... and of its end
        off_line = np.abs(sax * rdy - say * rdx)  # distance of the start from the ray's line
        collinear = (off_line <= COLLINEAR_EPS) & (np.maximum(ta, tb) >= 0.0)
        t_col = np.where(collinear, np.maximum(np.minimum(ta, tb), 0.0), np.inf)
        np.minimum.at(dist, ray_idx, t_col)
    return dist


def _circle_hits(dx, dy, fx, fy, c_term):
    """
    Per-ray distance to the nearest circle entry; (b,) with inf for misses.

    dx, dy : (b, 1) unit ray directions; fx, fy : (C,) origin minus centre;
    c_term : (C,) |f|^2 - r^2, positive (circles containing the origin are culled before).
    """
    # |f + t d|^2 = r^2  ->  t^2 + 2 b t + c = 0 with b = f . d; entry at t = -b - sqrt(b^2 - c).
    b = dx * fx
    b += dy * fy  # (b, C)
    disc = b * b
    disc -= c_term
    with np.errstate(invalid='ignore'):
        t = -b - np.sqrt(disc)
    # Origin outside (c > 0) and t >= 0: the circle lies ahead, not behind.
    return np.where((disc >= 0.0) & (t >= 0.0), t, np.inf).min(axis=1)


def _as_vertex_list(shapes, name, min_vertices):
    """Normalise a list of (K, 2) arrays (or one (K, 2) array) to a list of float64 arrays."""
    if isinstance(shapes, np.ndarray) and shapes.ndim == 2:
        shapes = [shapes]
    out = []
    for i, shape in enumerate(shapes):
        pts = np.asarray(shape, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] < min_vertices:
            raise ValueError('%s[%d] must have shape (K, 2) with K >= %d, got %s'
                             % (name, i, min_vertices, pts.shape))
        out.append(pts)
    return out


def polygon_edges(polygons: Union[np.ndarray, Sequence[ArrayLike]]) -> np.ndarray:
    """
    Edges of closed polygons as segments.

    polygons : list of (K, 2) array_like; vertices of each polygon [m], K >= 2, in order (either
        orientation). The closing edge from the last vertex back to the first is included. K == 2
        is a single segment (as in the core's Obstacles contract), not a doubled edge. A single
        (K, 2) array is accepted as one polygon.

    Returns edges (M, 2, 2) float64 ndarray: edges[i] = (start, end); M = sum of K over polygons
    with K >= 3, plus 1 for each K == 2.
    """
    edges = []
    for pts in _as_vertex_list(polygons, 'polygons', 2):
        if pts.shape[0] == 2:
            edges.append(pts[None, :, :])
        else:
            edges.append(np.stack([pts, np.roll(pts, -1, axis=0)], axis=1))
    if not edges:
        return np.empty((0, 2, 2))
    return np.concatenate(edges, axis=0)


def polyline_edges(polylines: Union[np.ndarray, Sequence[ArrayLike]]) -> np.ndarray:
    """
    Edges of open polylines as segments.

    polylines : list of (K, 2) array_like; vertices of each polyline [m], K >= 2. A single (K, 2)
        array is accepted as one polyline.

    Returns edges (M, 2, 2) float64 ndarray: edges[i] = (start, end); M = sum of (K - 1) over the
    polylines.
    """
    edges = [np.stack([pts[:-1], pts[1:]], axis=1)
             for pts in _as_vertex_list(polylines, 'polylines', 2)]
    if not edges:
        return np.empty((0, 2, 2))
    return np.concatenate(edges, axis=0)
