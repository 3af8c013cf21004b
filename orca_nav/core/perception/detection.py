"""
Detection of small objects (people, legs, unknown robots) in one laser scan (no ROS).

`detect_objects` works on the returns of one scan that neither a known robot nor
the map explains (the caller drops those, e.g. with a distance test against both):

1. the returns, in beam order, are split into clusters where consecutive returns are farther
   apart than ``jump_distance``, as in `orca_nav.core.perception.scan` (a full-circle scan
   wraps around);
2. a cluster of at least ``min_points`` returns whose extent (the largest distance between two
   of its returns) is at most ``max_diameter`` is an object: a leg, a body, a small robot;
   longer clusters (walls, furniture the map lacks) are not. A cluster wider than
   SHAPE_FREE_DIAMETER (0.8 m) must also be a convex arc: one of its returns at least
   MIN_BULGE (15 %) of its extent nearer the sensor than the chord between its extreme
   returns. A person of radius 0.5 m is 1.0 m wide but bulges by a quarter to a half of
   that; a straight wall (or a concave corner, or a wall seen obliquely) of that width does
   not bulge, and one longer than max_diameter is not an object whatever its shape. A
   cluster partly hidden behind
   a nearer return on the adjacent beam (one person behind another, as seen from this
   sensor) is dropped too: its visible arc ends at the occluder, not at its own edge, so the
   circle fitted to it would be too small and misplaced by up to its radius; the tracker
   coasts through such occlusions, and other robots may see the object whole. An occluder
   whose returns the caller dropped (a known robot, the map) cannot be recognised;
3. a laser sees only the near side of a round object, so its centre lies behind the returns:
   each object is fitted with a circle whose tangents lie between its extreme returns and
   the next beams, and whose range profile best matches the returns (least squares, linear
   in the distance for given tangents; a small grid over the tangents; see `_fit_clusters`).
   The radius is clipped to [min_radius, max_diameter / 2]. Unlike a general circle fit,
   this is exact for a circle at any distance (perspective included), needs no minimum
   number of returns, and cannot blow up on a nearly flat arc. On discs of radius
   0.1-0.35 m seen from 0.6-8 m (0.5 degree beams, 1 cm range noise) its mean error
   (bias) is under 1 cm in centre and radius, and single errors stay within about half a
   beam spacing (1 cm at 2 m, 4 cm at 8 m). A flat face of width w (a box seen square on)
   gets a centre about w / 2 behind it and a radius of about 0.55 w (a square box's corners
   stick out by up to 0.16 w).

The clustering, the screens and the circle fit are compiled with numba (one call per
scan); `orca_nav.core.perception.tracking` follows the objects across scans.

Example::

    >>> import numpy as np
    >>> from orca_nav.core.perception.raycast import cast_rays
    >>> from orca_nav.core.perception.scan import scan_to_points
    >>> inc = 2 * np.pi / 720
    >>> angles = -np.pi + np.arange(720) * inc
    >>> ranges = cast_rays(np.zeros(2), angles, 10.0, None, [[1.5, 1.0]], [0.25])
    >>> points, beam = scan_to_points(ranges, -np.pi, inc, 0.05, 10.0, [0.0, 0.0, 0.0])
    >>> centres, radii = detect_objects(points, beam, 720, inc, [0.0, 0.0])
    >>> centres.round(2).tolist(), radii.round(2).tolist()
    ([[1.5, 1.0]], [0.25])
"""

import math
from typing import Tuple

import numpy as np
from numpy.typing import ArrayLike

from .checks import as_xy, finite_scalar, int_at_least, non_negative, positive
from .scan import FULL_CIRCLE_SLACK
from .._jit import njit

# Largest half-angle an object may span as seen from the sensor [rad] (an object wrapping
# around the sensor is its own robot, which the caller drops; this only keeps the fit finite).
MAX_HALF_ANGLE = 0.45 * math.pi
# Candidate tangent angles per side of an object, evenly over one beam spacing (see
# _fit_clusters): 7 places it to about a sixth of a spacing.
TANGENT_STEPS = 7
# Clusters up to this wide [m] are objects whatever their shape (a box or a small robot seen
# face on is flat); wider ones, up to max_diameter, only if they are convex arcs (below).
SHAPE_FREE_DIAMETER = 0.8
# A cluster wider than SHAPE_FREE_DIAMETER is an object only if one of its returns lies
# nearer the sensor than the chord between its extreme returns by at least this fraction of
# its extent. A circle's visible arc bulges by (1 - sin b) / (2 cos b) of its chord (b: the
# half-angle it spans): 0.5 far away, 0.25 for a 0.5 m person seen 0.8 m wide (0.83 m off),
# 0.21 for a 0.55 m one; a straight wall bulges by the range noise only (about 1 % of 0.8 m)
# and a concave corner or a wall seen obliquely not at all.
MIN_BULGE = 0.15


def detect_objects(points: ArrayLike, beam: ArrayLike, n_beams: int, angle_increment: float,
                   sensor_xy: ArrayLike, *, jump_distance: float = 0.3,
                   max_diameter: float = 1.1, min_points: int = 3,
                   min_radius: float = 0.1,
                   split_depth: float = 0.12, partial: bool = False) -> Tuple[np.ndarray, ...]:
    """
    Find small objects (people, legs, robots) among the unexplained returns of one scan.

    points : (P, 2) array_like; global positions [m] of the returns that known robots and the map
        do not explain, in beam order (e.g. from `scan_to_points`, filtered). P may be 0.
    beam : (P,) array_like of int; beam index of each return, strictly increasing, in [0, n_beams).
    n_beams : int; number of beams of the scan (len(ranges)).
    angle_increment : float; angle between consecutive beams [rad], non-zero: a scan whose beams
        cover a full circle wraps around (its last and first returns are neighbours), and the beam
        spacing widens each object by half a spacing on each side.
    sensor_xy : (2,) array_like; sensor position in the global frame [m].
    jump_distance : float; consecutive returns farther apart than this start a new cluster [m],
        > 0.
    max_diameter : float; clusters whose extent exceeds this are not objects [m], > 0; those wider
        than SHAPE_FREE_DIAMETER (0.8 m) only if they are convex arcs (see the module docstring).
        The default admits a person of radius 0.5 m (1.0 m wide) with some room for noise.
    min_points : int; clusters with fewer returns are dropped (noise), >= 1.
    min_radius : float; smallest reported radius [m], in [0, max_diameter / 2].
    split_depth : float; a cluster is split where its range profile has an inner peak this much
        farther than the nearest return on each side [m], >= 0 (0: no split): two people side by
        side, or one partly behind another, within ``jump_distance`` of each other.
    partial : bool; also return the occluded objects (see the module docstring), and a third array
        telling which they are, and which objects are parts of a split cluster (their outline at
        the cut is unknown): their fits may lie too near and be too small, but say that something
        is there (`Tracker.update` takes them as such).

    Returns centres (D, 2) float64 ndarray: estimated object centres in the global frame [m],
    behind the visible arc (see the module docstring); radii (D,) float64 ndarray: estimated
    radii [m], in [min_radius, max_diameter / 2]; partial (D,) bool ndarray: only with
    ``partial=True``: which objects are occluded or parts of a split cluster.

    Raises ValueError on malformed or non-finite inputs or out-of-range parameters.

    See the module docstring for the clustering, the occlusion test and the circle fit. Returns on
    beams adjacent to a cluster but dropped by the caller count as unknown: a cluster next to them
    is not treated as occluded.
    """
    return Detector(jump_distance=jump_distance, max_diameter=max_diameter,
                    min_points=min_points, min_radius=min_radius,
                    split_depth=split_depth)(points, beam, n_beams, angle_increment,
                                             sensor_xy, partial)


class Detector:
    """`detect_objects` with its tuning checked once: one call per scan, as a tracker makes."""

    def __init__(self, *, jump_distance: float = 0.3, max_diameter: float = 1.1,
                 min_points: int = 3, min_radius: float = 0.1, split_depth: float = 0.12):
        """Check the tuning (see `detect_objects`); ValueError if out of range."""
        self.jump_distance = positive(jump_distance, 'jump_distance')
        self.max_diameter = positive(max_diameter, 'max_diameter')
        self.min_points = int_at_least(min_points, 'min_points', 1)
        self.min_radius = non_negative(min_radius, 'min_radius')
        self.split_depth = non_negative(split_depth, 'split_depth')
        if self.min_radius > 0.5 * self.max_diameter:
            raise ValueError('min_radius (%r) must not exceed max_diameter / 2 (%r)'
                             % (min_radius, 0.5 * self.max_diameter))

    def __call__(self, points: ArrayLike, beam: ArrayLike, n_beams: int,
                 angle_increment: float, sensor_xy: ArrayLike,
                 partial: bool = False) -> Tuple[np.ndarray, ...]:
        """Return `detect_objects` (points, beam, ..., partial=partial) with this tuning."""
        pts = as_xy(points, 'points')
        beam = np.asarray(beam).reshape(-1)
        if beam.shape[0] != pts.shape[0]:
            raise ValueError('beam must have shape (%d,), got %s'
                             % (pts.shape[0], beam.shape))
        n_beams = int_at_least(n_beams, 'n_beams', 0)
        increment = abs(finite_scalar(angle_increment, 'angle_increment'))
        if increment == 0.0:
            raise ValueError('angle_increment must be non-zero')
        sx, sy = _sensor_xy(sensor_xy)
        if pts.shape[0] == 0:
            return (np.empty((0, 2)), np.empty(0)) + ((np.empty(0, bool),) if partial else ())
        if beam.dtype.kind not in 'iu':
            if beam.dtype.kind != 'f' or not np.all(np.isfinite(beam)) or np.any(beam % 1.0):
                raise ValueError('beam must hold integer beam indices')
            beam = beam.astype(np.int64)
        full_circle = n_beams * increment >= 2.0 * math.pi - FULL_CIRCLE_SLACK
        centres, radii, hidden, ok = _detect(
            pts, beam, n_beams, increment, sx, sy, full_circle, self.jump_distance,
            self.split_depth, self.min_points, self.max_diameter, self.min_radius, partial,
            TANGENT_STEPS)
        if not ok:
            raise ValueError('beam must be strictly increasing indices in [0, n_beams)')
        return (centres, radii, hidden) if partial else (centres, radii)


def _sensor_xy(sensor_xy):
    """Return the sensor position as two floats, or raise ValueError if not finite (2,)."""
    try:
        sx, sy = (float(v) for v in sensor_xy)
    except (TypeError, ValueError):
        raise ValueError('sensor_xy must be a finite (2,) array, got %r'
                         % (sensor_xy,)) from None
    if not (math.isfinite(sx) and math.isfinite(sy)):
        raise ValueError('sensor_xy must be a finite (2,) array, got %r' % (sensor_xy,))
    return sx, sy


@njit(cache=True)
def _detect(pts, beam, n_beams, increment, sx, sy, full_circle, jump_distance, split_depth,
            min_points, max_diameter, min_radius, partial, steps):
    """
    Find the objects among the returns pts (P, 2) of one scan, whose sensor is at (sx, sy).

    Clusters, splits, screens and fits them (one compiled call per scan: as numpy glue
    between kernels the steps cost more than the kernels). Returns centres (D, 2), radii
    (D,), which are partial views (D,), and False if beam is not strictly increasing in
    [0, n_beams) (then nothing else).
    """
    n = pts.shape[0]
    none = (np.empty((0, 2)), np.empty(0), np.empty(0, np.bool_))
    for k in range(n):
        if beam[k] < 0 or beam[k] >= n_beams or (k > 0 and beam[k] <= beam[k - 1]):
            return none + (False,)
    if n < min_points:
        return none + (True,)
    x = pts[:, 0] - sx
    y = pts[:, 1] - sy
    order, starts, ends = _cluster_order(x, y, beam, n_beams, full_circle, jump_distance)
    cut = np.zeros((starts.shape[0], 2), dtype=np.bool_)
    if split_depth > 0.0:
        starts, ends, cut = _split_clusters(order, starts, ends, x, y, split_depth,
                                            min_points)
        by_start = np.argsort(starts)
        starts, ends, cut = starts[by_start], ends[by_start], cut[by_start]
    keep, hidden = _screen(order, starts, ends, cut, beam, x, y, n_beams, full_circle,
                           min_points, max_diameter)
    if not partial:
        keep &= ~hidden
    # Cut parts, like occluded clusters, are partial views: the outline at a cut is unknown.
    hidden |= cut[:, 0] | cut[:, 1]
    candidates = np.flatnonzero(keep)
    fits = _fit_clusters(x[order], y[order], starts[candidates], ends[candidates], increment,
                         max_diameter, steps, SHAPE_FREE_DIAMETER, MIN_BULGE)
    # NaN radius: wider than max_diameter, or wide and not a convex arc.
    good = np.flatnonzero(np.isfinite(fits[:, 2]))
    centres = np.empty((good.shape[0], 2))
    radii = np.empty(good.shape[0])
    for q in range(good.shape[0]):
        centres[q, 0] = fits[good[q], 0] + sx
        centres[q, 1] = fits[good[q], 1] + sy
        radii[q] = min(max(fits[good[q], 2], min_radius), 0.5 * max_diameter)
    return centres, radii, hidden[candidates][good], True


@njit(cache=True)
def _cluster_order(x, y, beam, n_beams, full_circle, jump_distance):
    """
    Split returns (in beam order) into clusters where consecutive returns jump apart.

    As `orca_nav.core.perception.scan`: in a full-circle scan the last and first clusters are
    one when the last and first returns are close. Returns order (K,), a permutation of the returns
    that makes every cluster contiguous, and the inclusive starts, ends (M,) into it.
    """
    n_pts = x.shape[0]
    jump_sq = jump_distance * jump_distance
    cuts = np.empty(n_pts, np.int64)   # cluster starts (beam order); 0 first
    cuts[0] = 0
    m = 1
    for k in range(1, n_pts):
        if (x[k] - x[k - 1]) ** 2 + (y[k] - y[k - 1]) ** 2 > jump_sq:
            cuts[m] = k
            m += 1
    shift = 0
    if full_circle and (x[0] - x[-1]) ** 2 + (y[0] - y[-1]) ** 2 <= jump_sq:
        if m > 1:
            # The last cluster continues into the first: rotate it to the front.
            shift = n_pts - cuts[m - 1]
            m -= 1
            for c in range(1, m):
                cuts[c] += shift
        else:
            # One cluster that closes on itself: start it after its widest angular hole
            # (one object across the seam of an otherwise empty scan).
            widest, at = -1, 0
            for k in range(n_pts):
                hole = (beam[k + 1] if k + 1 < n_pts else beam[0] + n_beams) - beam[k]
                if hole > widest:
                    widest, at = hole, k
            shift = n_pts - 1 - at
    order = np.empty(n_pts, np.int64)
    for k in range(n_pts):
        order[(k + shift) % n_pts] = k
    starts = cuts[:m].copy()
    ends = np.empty(m, np.int64)
    for c in range(m - 1):
        ends[c] = starts[c + 1] - 1
    ends[m - 1] = n_pts - 1
    return order, starts, ends


@njit(cache=True)
def _split_clusters(order, starts, ends, x, y, depth, min_points):
    """
    Split clusters at inner range peaks at least ``depth`` deep; return starts, ends, cut.

    A person's range profile (and a flat wall's) is one valley: the range falls to a least
    value and rises again. Two people side by side, or one partly behind the other, make two
    valleys with a peak between them (where their outlines meet); a cluster is cut after
    each peak (its deepest first, then within the parts) that is at least ``depth`` farther
    than the nearest return on either side, as long as both parts keep ``min_points``
    returns. cut (M', 2) bool: the first / last end of each part is such a cut (no occlusion
    test there: the neighbour across it is the other person).
    """
    n = order.shape[0]
    rng = np.empty(n)
    for k in range(n):
        rng[k] = math.hypot(x[order[k]], y[order[k]])
    stack_lo = list(starts)
    stack_hi = list(ends)
    stack_a = [False] * len(stack_lo)
    stack_b = [False] * len(stack_lo)
    out_s = []
    out_e = []
    out_a = []
    out_b = []
    while len(stack_lo):
        lo = stack_lo.pop()
        hi = stack_hi.pop()
        cut_lo = stack_a.pop()
        cut_hi = stack_b.pop()
        best, at = depth, -1
        if hi - lo + 1 >= 2 * min_points:
            # left[k]: least range in lo..k; right: in k..hi.
            right = np.empty(hi - lo + 1)
            low = math.inf
            for k in range(hi, lo - 1, -1):
                low = min(low, rng[k])
                right[k - lo] = low
            low = rng[lo]
            for k in range(lo + 1, hi):
                low = min(low, rng[k - 1])
                if k - lo < min_points or hi - k < min_points:
                    continue
                if rng[k] >= rng[k - 1] and rng[k] >= rng[k + 1]:
                    prominence = min(rng[k] - low, rng[k] - right[k + 1 - lo])
                    if prominence >= best:
                        best, at = prominence, k
        if at < 0:
            out_s.append(lo)
            out_e.append(hi)
            out_a.append(cut_lo)
            out_b.append(cut_hi)
            continue
        # The peak return goes with the nearer side (its outline ends there).
        end = at if rng[at - 1] <= rng[at + 1] else at - 1
        stack_lo.append(lo)
        stack_hi.append(end)
        stack_a.append(cut_lo)
        stack_b.append(True)
        stack_lo.append(end + 1)
        stack_hi.append(hi)
        stack_a.append(True)
        stack_b.append(cut_hi)
    m = len(out_s)
    new_starts = np.empty(m, np.int64)
    new_ends = np.empty(m, np.int64)
    cut = np.zeros((m, 2), np.bool_)
    for k in range(m):
        new_starts[k] = out_s[k]
        new_ends[k] = out_e[k]
        cut[k, 0] = out_a[k]
        cut[k, 1] = out_b[k]
    return new_starts, new_ends, cut


@njit(cache=True)
def _screen(order, starts, ends, cut, beam, x, y, n_beams, full_circle, min_points,
            max_diameter):
    """
    Return (M,) bool twice: the clusters that may be objects, and which of them are occluded.

    May be objects: enough returns, small enough.

    A cluster is occluded when the return just before its first or just after its last, on
    the very next beam, is nearer: its visible arc then ends at the occluder rather than at
    its own edge, and a circle fitted to it is too small and misplaced. Beams without a return
    (dropped by the caller or out of range) are not known to occlude. The size screen is the
    bounding box: the extent is at least its longer side.
    """
    n_pts = beam.shape[0]
    m = starts.shape[0]
    keep = np.zeros(m, np.bool_)
    hidden = np.zeros(m, np.bool_)
    for c in range(m):
        if ends[c] - starts[c] + 1 < min_points:
            continue
        lo_x = hi_x = x[order[starts[c]]]
        lo_y = hi_y = y[order[starts[c]]]
        for k in range(starts[c] + 1, ends[c] + 1):
            px, py = x[order[k]], y[order[k]]
            lo_x, hi_x = min(lo_x, px), max(hi_x, px)
            lo_y, hi_y = min(lo_y, py), max(hi_y, py)
        if max(hi_x - lo_x, hi_y - lo_y) > max_diameter:
            continue
        keep[c] = True
        if full_circle and m == 1:
            continue  # the neighbours of its ends are its own returns
        for end, step, split in ((order[starts[c]], -1, cut[c, 0]),
                                 (order[ends[c]], 1, cut[c, 1])):
            if split:
                continue
            other = end + step
            if full_circle:
                other %= n_pts
            elif other < 0 or other >= n_pts:
                continue
            if ((beam[end] - beam[other]) * -step) % n_beams == 1 and (
                    x[other] ** 2 + y[other] ** 2 < x[end] ** 2 + y[end] ** 2):
                hidden[c] = True
    return keep, hidden


@njit(cache=True)
def _fit_clusters(x, y, starts, ends, increment, max_diameter, steps, shape_free=math.inf,
                  min_bulge=0.0):
    """
    Fit a circle to each cluster x, y[starts[k]:ends[k] + 1] (relative to the sensor).

    Returns (C, 3): centre x, y [m] and radius [m]; the radius is NaN for a cluster whose
    extent (largest distance between two of its returns) exceeds max_diameter, or exceeds
    shape_free while no return lies min_bulge x the extent nearer the sensor than the chord
    between the cluster's extreme returns (not a convex arc: a wall).

    A circle of radius r whose centre lies at distance D spans the half-angle beta with
    sin(beta) = r / D as seen from the sensor, and the ray at angle phi from its centre line
    meets it at range D * g(phi), g(phi) = cos(phi) - sqrt(sin(beta)^2 - sin(phi)^2). Each
    tangent lies between the extreme return on its side and the next beam; for each pair of
    candidate tangents on a grid of ``steps`` angles over these two intervals, D follows from
    the measured ranges by linear least squares, and the pair with the smallest residual
    wins. The shape of the range profile thus places the circle to a fraction of a beam
    spacing (taking the interval midpoints instead, the estimate jumps by up to half a
    spacing as an object moves across the beams). It cannot blow up: any cluster gives a
    finite circle.
    """
    out = np.empty((starts.shape[0], 3))
    for k in range(starts.shape[0]):
        lo, hi = starts[k], ends[k] + 1
        n = hi - lo
        extent_sq = 0.0
        for i in range(lo, hi):
            for j in range(i + 1, hi):
                extent_sq = max(extent_sq, (x[i] - x[j]) ** 2 + (y[i] - y[j]) ** 2)
        if extent_sq > max_diameter * max_diameter or (
                extent_sq > shape_free * shape_free
                and _bulge(x, y, lo, hi) < min_bulge * math.sqrt(extent_sq)):
            out[k, :] = np.nan
            continue
        # Beam angles relative to the direction of the returns' mean, and ranges.
        heading = math.atan2(np.mean(y[lo:hi]), np.mean(x[lo:hi]))
        cos_h, sin_h = math.cos(heading), math.sin(heading)
        cos_phi = np.empty(n)
        sin_phi = np.empty(n)
        ranges = np.empty(n)
        first, last = math.inf, -math.inf
        for i in range(n):
            along = x[lo + i] * cos_h + y[lo + i] * sin_h
            across = y[lo + i] * cos_h - x[lo + i] * sin_h
            ranges[i] = math.hypot(along, across)
            cos_phi[i] = along / ranges[i]
            sin_phi[i] = across / ranges[i]
            phi = math.atan2(across, along)
            first, last = min(first, phi), max(last, phi)
        best, best_mid, best_dist, best_sin = math.inf, 0.0, 0.0, 0.0
        for a in range(steps):
            lower = first - increment * a / (steps - 1)
            for b in range(steps):
                upper = last + increment * b / (steps - 1)
                mid = 0.5 * (lower + upper)
                sin_half = math.sin(min(0.5 * (upper - lower), MAX_HALF_ANGLE))
                cos_m, sin_m = math.cos(mid), math.sin(mid)
                g_rho, g_g = 0.0, 0.0
                for i in range(n):
                    # cos and sin of the angle from the candidate centre line.
                    cos_rel = cos_phi[i] * cos_m + sin_phi[i] * sin_m
                    sin_rel = sin_phi[i] * cos_m - cos_phi[i] * sin_m
                    g = cos_rel - math.sqrt(max(sin_half * sin_half - sin_rel * sin_rel, 0.0))
                    g_rho += g * ranges[i]
                    g_g += g * g
                # min over D of |ranges - D g|^2 is |ranges|^2 - g_rho^2 / g_g.
                residual = -g_rho * g_rho / g_g
                if residual < best:
                    best, best_mid, best_dist, best_sin = residual, mid, g_rho / g_g, sin_half
        out[k, 0] = best_dist * math.cos(heading + best_mid)
        out[k, 1] = best_dist * math.sin(heading + best_mid)
        out[k, 2] = best_dist * best_sin
    return out


@njit(cache=True)
def _bulge(x, y, lo, hi):
    """
    Return how far the returns lo..hi - 1 reach nearer the sensor than their end chord [m].

    The chord joins the first and last returns (relative to the sensor at the origin); the
    answer is the largest distance of a return from it on the sensor's side (<= 0 when none
    is: a straight or concave cluster).
    """
    ax, ay = x[lo], y[lo]
    cx, cy = x[hi - 1] - ax, y[hi - 1] - ay
    length = math.hypot(cx, cy)
    if length <= 0.0:
        return 0.0
    nx, ny = -cy / length, cx / length
    if nx * -ax + ny * -ay < 0.0:  # the normal toward the sensor
        nx, ny = -nx, -ny
    best = -math.inf
    for i in range(lo, hi):
        best = max(best, nx * (x[i] - ax) + ny * (y[i] - ay))
    return best


__all__ = ['Detector', 'detect_objects']
