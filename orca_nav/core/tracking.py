"""
Moving objects (people, unknown robots) in laser scans: detection and tracking (no ROS).

Detection (`detect_objects`) works on the returns of one scan that neither a known robot nor
the map explains (the caller drops those, e.g. with a distance test against both):

1. the returns, in beam order, are split into clusters where consecutive returns are farther
   apart than ``jump_distance``, as in `orca_nav.core.scan` (a full-circle scan wraps around);
2. a cluster of at least ``min_points`` returns whose extent (the largest distance between two
   of its returns) is at most ``max_diameter`` is an object: a leg, a body, a small robot;
   longer clusters (walls, furniture the map lacks) are not. A cluster partly hidden behind
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

Tracking (`Tracker`) keeps one constant-velocity Kalman filter per track in the global frame;
one `Tracker.update` per scan (of any robot, in time order), then `Tracker.tracks` for the
estimates. See `Tracker` for the association, confirmation and deletion rules.

numpy and scipy (the assignment); the circle fit and the per-track filter arithmetic are
compiled with numba (`warmup` compiles them ahead). On the reference machine a 720-beam scan
with a few objects takes about 0.2 ms to detect, and a tracker update about 35 us.

Example::

    >>> import numpy as np
    >>> from orca_nav.core.raycast import cast_rays
    >>> from orca_nav.core.scan import scan_to_points
    >>> inc = 2 * np.pi / 720
    >>> angles = -np.pi + np.arange(720) * inc
    >>> ranges = cast_rays(np.zeros(2), angles, 10.0, None, [[1.5, 1.0]], [0.25])
    >>> points, beam = scan_to_points(ranges, -np.pi, inc, 0.05, 10.0, [0.0, 0.0, 0.0])
    >>> centres, radii = detect_objects(points, beam, 720, inc, [0.0, 0.0])
    >>> centres.round(2).tolist(), radii.round(2).tolist()
    ([[1.5, 1.0]], [0.25])
    >>> tracker = Tracker()
    >>> tracker.update(0.0, centres, radii)
    >>> tracker.tracks().position.round(2).tolist()
    [[1.5, 1.0]]
"""

from dataclasses import dataclass
import math
from typing import Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linear_sum_assignment

from ._jit import njit
from .scan import _finite_scalar, FULL_CIRCLE_SLACK

# The velocity of a new track is 0 with this standard deviation, as a fraction of max_speed.
INITIAL_SPEED_SIGMA = 0.5
# Standard deviation of a partly hidden detection's centre, placed behind its arc [m].
PARTIAL_NOISE = 0.3
# Association gate: a track may take a detection within gate + this many sigmas of its
# predicted position.
GATE_SIGMAS = 3.0
# Largest half-angle an object may span as seen from the sensor [rad] (an object wrapping
# around the sensor is its own robot, which the caller drops; this only keeps the fit finite).
MAX_HALF_ANGLE = 0.45 * math.pi
# Candidate tangent angles per side of an object, evenly over one beam spacing (see
# _fit_clusters): 7 places it to about a sixth of a spacing.
TANGENT_STEPS = 7

# Columns of Tracker._kf: position, velocity [m, m/s] and the per-axis covariance
# var(p) [m^2], cov(p, v) [m^2/s], var(v) [m^2/s^2].
_X, _Y, _VX, _VY, _PP, _PV, _VV = range(7)
_KF_COLUMNS = 7
# Columns of Tracker._book: time of the state, of the last matched detection and of the
# first detection [s], number of matched detections, smoothed radius [m], confirmed (1.0) or
# tentative (0.0), last time matched or in the shadow of a nearer detection [s].
_T, _HIT, _BORN, _HITS, _RADIUS, _CONF, _SEEN = range(7)
_BOOK_COLUMNS = 7
# A confirmed track hidden behind nearer detections is kept this long without a match [s]
# (track_timeout counts from the last scan that could have seen it).
MAX_OCCLUSION = 3.0


def _positive(value, name):
    """Return value as a finite positive float, or raise ValueError."""
    out = _finite_scalar(value, name)
    if out <= 0.0:
        raise ValueError('%s must be positive, got %r' % (name, value))
    return out


def _non_negative(value, name):
    """Return value as a finite float >= 0, or raise ValueError."""
    out = _finite_scalar(value, name)
    if out < 0.0:
        raise ValueError('%s must be >= 0, got %r' % (name, value))
    return out


def _int_at_least(value, name, lowest):
    """Return value as an int >= lowest (integral floats accepted), or raise ValueError."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError('%s must be an integer >= %d, got %r' % (name, lowest, value))
    try:
        out = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError('%s must be an integer >= %d, got %r'
                         % (name, lowest, value)) from None
    if out != value or out < lowest:
        raise ValueError('%s must be an integer >= %d, got %r' % (name, lowest, value))
    return out


def _as_xy(values, name):
    """Validate a finite (N, 2) array (N may be 0); return it as float64."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return np.empty((0, 2))
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError('%s must have shape (N, 2), got %s' % (name, arr.shape))
    if not (math.isfinite(arr.sum()) or np.all(np.isfinite(arr))):  # the sum may overflow
        raise ValueError('%s must be finite' % (name,))
    return arr


def detect_objects(points: ArrayLike, beam: ArrayLike, n_beams: int, angle_increment: float,
                   sensor_xy: ArrayLike, *, jump_distance: float = 0.3,
                   max_diameter: float = 0.8, min_points: int = 3,
                   min_radius: float = 0.1,
                   split_depth: float = 0.12, partial: bool = False) -> Tuple[np.ndarray, ...]:
    """
    Find small objects (people, legs, robots) among the unexplained returns of one scan.

    Parameters
    ----------
    points : (P, 2) array_like
        Global positions [m] of the returns that known robots and the map do not explain, in
        beam order (e.g. from `scan_to_points`, filtered). P may be 0.
    beam : (P,) array_like of int
        Beam index of each return, strictly increasing, in [0, n_beams).
    n_beams : int
        Number of beams of the scan (len(ranges)).
    angle_increment : float
        Angle between consecutive beams [rad], non-zero: a scan whose beams cover a full circle
        wraps around (its last and first returns are neighbours), and the beam spacing widens
        each object by half a spacing on each side.
    sensor_xy : (2,) array_like
        Sensor position in the global frame [m].
    jump_distance : float
        Consecutive returns farther apart than this start a new cluster [m], > 0.
    max_diameter : float
        Clusters whose extent exceeds this are not objects [m], > 0.
    min_points : int
        Clusters with fewer returns are dropped (noise), >= 1.
    min_radius : float
        Smallest reported radius [m], in [0, max_diameter / 2].
    split_depth : float
        A cluster is split where its range profile has an inner peak this much farther than
        the nearest return on each side [m], >= 0 (0: no split): two people side by side, or
        one partly behind another, within ``jump_distance`` of each other.
    partial : bool
        Also return the occluded objects (see the module docstring), and a third array
        telling which they are, and which objects are parts of a split cluster (their
        outline at the cut is unknown): their fits may lie too near and be too small, but
        say that something is there (`Tracker.update` takes them as such).

    Returns
    -------
    centres : (D, 2) float64 ndarray
        Estimated object centres in the global frame [m], behind the visible arc (see the
        module docstring).
    radii : (D,) float64 ndarray
        Estimated radii [m], in [min_radius, max_diameter / 2].
    partial : (D,) bool ndarray
        Only with ``partial=True``: which objects are occluded or parts of a split cluster.

    Raises
    ------
    ValueError
        On malformed or non-finite inputs or out-of-range parameters.

    Notes
    -----
    See the module docstring for the clustering, the occlusion test and the circle fit.
    Returns on beams adjacent to a cluster but dropped by the caller count as unknown: a
    cluster next to them is not treated as occluded.

    """
    pts = _as_xy(points, 'points')
    beam = np.asarray(beam).reshape(-1)
    if beam.shape[0] != pts.shape[0]:
        raise ValueError('beam must have shape (%d,), got %s' % (pts.shape[0], beam.shape))
    n_beams = _int_at_least(n_beams, 'n_beams', 0)
    increment = abs(_finite_scalar(angle_increment, 'angle_increment'))
    if increment == 0.0:
        raise ValueError('angle_increment must be non-zero')
    sensor = np.asarray(sensor_xy, dtype=np.float64).reshape(-1)
    if sensor.shape != (2,) or not np.all(np.isfinite(sensor)):
        raise ValueError('sensor_xy must be a finite (2,) array, got %r' % (sensor_xy,))
    jump_distance = _positive(jump_distance, 'jump_distance')
    max_diameter = _positive(max_diameter, 'max_diameter')
    min_points = _int_at_least(min_points, 'min_points', 1)
    min_radius = _non_negative(min_radius, 'min_radius')
    split_depth = _non_negative(split_depth, 'split_depth')
    if min_radius > 0.5 * max_diameter:
        raise ValueError('min_radius (%r) must not exceed max_diameter / 2 (%r)'
                         % (min_radius, 0.5 * max_diameter))

    empty = (np.empty((0, 2)), np.empty(0)) + ((np.empty(0, bool),) if partial else ())
    if pts.shape[0] == 0:
        return empty
    if beam.dtype.kind not in 'iu':
        if beam.dtype.kind != 'f' or not np.all(np.isfinite(beam)) or np.any(beam % 1.0):
            raise ValueError('beam must hold integer beam indices')
        beam = beam.astype(np.int64)
    if beam[0] < 0 or beam[-1] >= n_beams or np.any(np.diff(beam) <= 0):
        raise ValueError('beam must be strictly increasing indices in [0, n_beams)')
    if pts.shape[0] < min_points:
        return empty

    x = pts[:, 0] - sensor[0]
    y = pts[:, 1] - sensor[1]
    full_circle = n_beams * increment >= 2.0 * math.pi - FULL_CIRCLE_SLACK
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
    x, y = x[order], y[order]
    candidates = np.flatnonzero(keep)

    if not candidates.shape[0]:
        return empty
    fits = _fit_clusters(x, y, starts[candidates], ends[candidates], increment, max_diameter,
                         TANGENT_STEPS)
    good = np.isfinite(fits[:, 2])  # NaN radius: wider than max_diameter
    fits = fits[good]
    if not fits.shape[0]:
        return empty
    out = (fits[:, :2] + sensor, np.clip(fits[:, 2], min_radius, 0.5 * max_diameter))
    return out + (hidden[candidates][good],) if partial else out


@njit(cache=True)
def _cluster_order(x, y, beam, n_beams, full_circle, jump_distance):
    """
    Split returns (in beam order) into clusters where consecutive returns jump apart.

    As `orca_nav.core.scan`: in a full-circle scan the last and first clusters are one when
    the last and first returns are close. Returns order (K,), a permutation of the returns
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
def _fit_clusters(x, y, starts, ends, increment, max_diameter, steps):
    """
    Fit a circle to each cluster x, y[starts[k]:ends[k] + 1] (relative to the sensor).

    Returns (C, 3): centre x, y [m] and radius [m]; the radius is NaN for a cluster whose
    extent (largest distance between two of its returns) exceeds max_diameter.

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
        if extent_sq > max_diameter * max_diameter:
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


@dataclass(frozen=True)
class Tracks:
    """
    The tracks of a `Tracker` at one time, sorted by id (arrays are copies).

    Attributes
    ----------
    id : (T,) int64 ndarray
        Track ids, unique over the tracker's life (until `Tracker.reset`).
    position : (T, 2) float64 ndarray
        Estimated centres in the global frame [m].
    velocity : (T, 2) float64 ndarray
        Estimated velocities [m/s], at most max_speed.
    radius : (T,) float64 ndarray
        Smoothed radii [m].
    confirmed : (T,) bool ndarray
        Whether the track has had confirm_hits matched detections, or two spanning at
        least confirm_time (else tentative).
    moving : (T,) bool ndarray
        Confirmed and moving (speed hysteresis between min_speed / 2 and min_speed).
    age : (T,) float64 ndarray
        Time since the track's first detection [s].
    position_sigma : (T,) float64 ndarray
        Standard deviation of each coordinate of the position [m].

    """

    id: np.ndarray  # noqa: A003 (the usual name; a dataclass field, not a method)
    position: np.ndarray
    velocity: np.ndarray
    radius: np.ndarray
    confirmed: np.ndarray
    moving: np.ndarray
    age: np.ndarray
    position_sigma: np.ndarray

    def __len__(self) -> int:
        """Return the number of tracks."""
        return int(self.id.shape[0])


class Tracker:
    """
    Multi-target tracker: a constant-velocity Kalman filter per track, in the global frame.

    State x, y, vx, vy. The process noise is white acceleration (continuous model) whose
    velocity variance grows by ``accel_noise^2 * dt`` (so accel_noise [m/s^2] is the standard
    deviation of the velocity change over one second); unlike the piecewise-constant model it
    does not depend on how an interval is split into predictions, which matters when many
    robots' scans arrive a few milliseconds apart. The measurement is the detected centre with
    standard deviation ``measurement_noise`` [m] per coordinate. Both axes have the same noise
    and start with the same covariance, so they stay independent with identical covariances:
    each track carries one 2x2 (position, velocity) covariance shared by x and y.

    Each `update` (one per scan, in time order):

    1. predicts every track to ``time`` (dt = max(0, time - track time): an older scan is
       applied to the newer state rather than breaking it);
    2. deletes tracks without a matched detection for more than ``track_timeout`` [s]
       (tentative tracks included);
    3. merges detections closer than ``merge_distance`` (single linkage, e.g. two legs of one
       person) into their mean centre with a radius covering them all;
    4. assigns detections to tracks by `scipy.optimize.linear_sum_assignment` on the distance
       from the predicted position, pairs farther than ``gate + 3 * position_sigma`` being
       excluded (the assignment first maximises the number of allowed pairs);
    5. a matched detection whose disc also overlaps the disc of a confirmed track left without
       a detection is ambiguous (two objects seen as one blob, e.g. people passing each
       other): it only keeps those tracks alive, and they coast on their velocities rather
       than being dragged to the blob's centre (or deleted while hidden);
    6. corrects the other matched tracks (speed capped at ``max_speed``; the radius is the
       mean of the detected radii, weighted towards the last five or so);
    7. starts a tentative track (velocity 0, standard deviation max_speed / 2) at each
       unmatched detection, unless a track lies within ``merge_distance`` of it (a leg that
       the merge missed, or a second view of a track that already took a detection);
    8. confirms tracks with ``confirm_hits`` matched detections, or with two or more that span
       ``confirm_time`` (at a slow scan rate hits come late: 3 at 4 Hz take 0.5 s, in which a
       walker covers half a metre unseen as one), and updates the moving flags:
       a confirmed track becomes moving above ``min_speed`` and stops below min_speed / 2.

    Two robots seeing the same person simply update its track twice, once per scan.
    Detections must be finite: NaN or inf raises ValueError (a caller bug, since
    `detect_objects` never returns them), as do malformed shapes and a non-finite time.

    Cost: the filter arithmetic is compiled (numba); an update is a few dozen small numpy
    calls plus the assignment, about 35 us with ten tracks and ten detections on the
    reference machine (a fleet's 50 scans per 0.1 s tick: about 2 ms).

    Example: see the module docstring.
    """

    # Radii are averaged over at most about this many detections (exponential beyond).
    RADIUS_WINDOW = 5.0

    def __init__(self, gate: float = 0.7, confirm_hits: int = 3, track_timeout: float = 1.0,
                 accel_noise: float = 1.0, measurement_noise: float = 0.05,
                 min_speed: float = 0.15, max_speed: float = 3.0,
                 merge_distance: float = 0.45, confirm_time: float = 0.2):
        """
        Set the tuning parameters; see the class docstring for their roles.

        Parameters
        ----------
        gate : float
            Association distance beyond the predicted position's 3 sigma [m], > 0. Larger
            keeps tracks through sharper turns and longer occlusions but lets nearby objects
            steal each other's detections.
        confirm_hits : int
            Matched detections for a track to be confirmed, >= 1 (1: at once). Larger
            suppresses more noise but reports new objects later.
        track_timeout : float
            A track without a match for longer than this is deleted [s], > 0.
        accel_noise : float
            Velocity random walk [m/s per second, i.e. m/s^2], > 0. Larger follows turns and
            starts faster but gives noisier velocities.
        measurement_noise : float
            Standard deviation of a detected centre per coordinate [m], > 0.
        min_speed : float
            A confirmed track is moving once faster than this, and until slower than half of
            it [m/s], > 0.
        max_speed : float
            Estimated speeds are capped at this [m/s], > 0.
        merge_distance : float
            Detections of one scan closer than this are one object [m], >= 0 (0: no merge).
        confirm_time : float
            A track with two or more matched detections this far apart in time is confirmed
            whatever confirm_hits says [s], >= 0 (inf: by hits only).

        """
        self.gate = _positive(gate, 'gate')
        self.confirm_hits = _int_at_least(confirm_hits, 'confirm_hits', 1)
        self.track_timeout = _positive(track_timeout, 'track_timeout')
        self.accel_noise = _positive(accel_noise, 'accel_noise')
        self.measurement_noise = _positive(measurement_noise, 'measurement_noise')
        self.min_speed = _positive(min_speed, 'min_speed')
        self.max_speed = _positive(max_speed, 'max_speed')
        self.merge_distance = _non_negative(merge_distance, 'merge_distance')
        self.confirm_time = float(confirm_time)
        if not self.confirm_time >= 0.0:
            raise ValueError('confirm_time must be >= 0, got %r' % (confirm_time,))
        self.reset()

    def reset(self) -> None:
        """Forget all tracks and restart the ids at 0 (as a new tracker)."""
        self._next_id = 0
        self._time = -math.inf  # latest update time
        self._id = np.empty(0, dtype=np.int64)
        self._kf = np.empty((0, _KF_COLUMNS))  # filter state and covariance, see _X...
        self._book = np.empty((0, _BOOK_COLUMNS))  # bookkeeping, see _T...
        self._moving = np.empty(0, dtype=bool)

    def update(self, time: float, centres: ArrayLike, radii: ArrayLike,
               partial: Optional[ArrayLike] = None,
               sensor: Optional[ArrayLike] = None) -> None:
        """
        Fold in the detections of one scan taken at ``time``.

        Parameters
        ----------
        time : float
            Scan time [s], finite; calls should come in time order, but an earlier time than
            a track's last update is tolerated (no prediction backwards).
        centres : (D, 2) array_like
            Detected centres in the global frame [m] (`detect_objects`); D may be 0.
        radii : (D,) array_like
            Their radii [m], finite and >= 0.
        partial : (D,) array_like of bool or None
            Which detections are partial views (``detect_objects(..., partial=True)``): such
            a detection updates a track placed as far behind its visible arc as the track is
            wide, with PARTIAL_NOISE, and the track keeps its radius; unmatched, it starts a
            track only where no track and no whole detection is near. None: none is.
        sensor : (2,) array_like or None
            The scanner's position [m]; needed when a detection is partial.

        Raises
        ------
        ValueError
            On a non-finite time or malformed or non-finite detections (nothing is changed).

        """
        time = _finite_scalar(time, 'time')
        z = _as_xy(centres, 'centres')
        rad = np.asarray(radii, dtype=np.float64).reshape(-1)
        if rad.shape[0] != z.shape[0]:
            raise ValueError('radii must have shape (%d,), got %s' % (z.shape[0], rad.shape))
        if rad.shape[0] and not (math.isfinite(rad.sum()) and rad.min() >= 0.0):
            raise ValueError('radii must be finite and >= 0')
        hidden = np.zeros(z.shape[0], bool) if partial is None else \
            np.asarray(partial, dtype=bool).reshape(-1)
        if hidden.shape[0] != z.shape[0]:
            raise ValueError('partial must have shape (%d,), got %s'
                             % (z.shape[0], hidden.shape))
        if hidden.any():
            sensor = np.asarray(sensor if sensor is not None else [np.nan] * 2,
                                dtype=np.float64).reshape(-1)
            if sensor.shape != (2,) or not np.all(np.isfinite(sensor)):
                raise ValueError('partial detections need a finite sensor (2,), got %r'
                                 % (sensor,))
        self._time = max(self._time, time)

        if self._id.shape[0]:
            alive = _predict(self._kf, self._book, time, self.accel_noise ** 2,
                             self.track_timeout, max(MAX_OCCLUSION, self.track_timeout))
            if not alive.all():
                self._keep(alive)
        z_seen, rad_seen = z, rad  # everything this scan saw, for the occlusion test
        zp, radp = z[hidden], rad[hidden]
        z, rad = z[~hidden], rad[~hidden]
        if z.shape[0] > 1 and self.merge_distance > 0.0:
            z, rad = _merge(z, rad, self.merge_distance)
        n_full = z.shape[0]
        zp_track = None
        if zp.shape[0] and self._id.shape[0]:
            # A partial view lies too near the sensor by up to the missing width.
            away = zp - sensor
            away /= np.maximum(np.hypot(away[:, 0], away[:, 1]), 1e-9)[:, None]
            push = np.maximum(self._book[:, _RADIUS, None] - radp, 0.0)  # (T, P)
            zp_track = zp[None] + push[:, :, None] * away[None]  # (T, P, 2)
        if not z.shape[0] + zp.shape[0]:
            return

        rows, cols = self._associate(z, zp_track)
        if rows.shape[0]:
            z_all, rad_all = z, rad
            if zp_track is not None:
                # Partial views: at their place for the matched track, with its radius.
                part = cols >= n_full
                z_all = np.concatenate([z, np.zeros((zp.shape[0], 2))])
                z_all[cols[part]] = zp_track[rows[part], cols[part] - n_full]
                rad_all = np.concatenate([rad, np.zeros(zp.shape[0])])
                rad_all[cols[part]] = self._book[rows[part], _RADIUS]
            good, used, alive = self._share(rows, cols, z_all, rad_all)
            if good.shape[0]:
                full = used < n_full
                for sel, noise in ((full, self.measurement_noise),
                                   (~full, PARTIAL_NOISE)):
                    if sel.any():
                        _correct(self._kf, self._book, self._moving, good[sel],
                                 z_all[used[sel]], rad_all[used[sel]], time, noise ** 2,
                                 self.max_speed, self.min_speed, self.confirm_hits,
                                 self.confirm_time, self.RADIUS_WINDOW)
            if alive.shape[0]:
                self._book[alive, _HIT] = np.maximum(self._book[alive, _HIT], time)
        if sensor is not None and rows.shape[0] < self._id.shape[0]:
            missed = np.ones(self._id.shape[0], dtype=bool)
            missed[rows] = False
            self._shadow(np.flatnonzero(missed), z_seen, rad_seen,
                         np.asarray(sensor, dtype=np.float64).reshape(2), time)
        fresh = np.ones(n_full + zp.shape[0], dtype=bool)
        fresh[cols] = False
        if zp.shape[0] and fresh[n_full:].any():
            # A partial view of something new: no whole detection beside it.
            lone = fresh[n_full:].copy()
            if n_full:
                gap = np.hypot(zp[:, 0, None] - z[:, 0], zp[:, 1, None] - z[:, 1])
                lone &= gap.min(axis=1) >= self.merge_distance
            z = np.concatenate([z, zp[lone]])
            rad = np.concatenate([rad, radp[lone]])
            fresh = np.concatenate([fresh[:n_full], np.ones(int(lone.sum()), bool)])
        else:
            fresh = fresh[:n_full]
        if not fresh.all():
            z, rad = z[fresh], rad[fresh]
        if z.shape[0]:
            if self._id.shape[0]:
                # No new track on top of an existing one (duplicate legs or views).
                dx = z[:, 0, None] - self._kf[:, _X]
                dy = z[:, 1, None] - self._kf[:, _Y]
                lonely = ((dx * dx + dy * dy).min(axis=1) >= self.merge_distance ** 2)
                z, rad = z[lonely], rad[lonely]
            if z.shape[0]:
                self._start(z, rad, time)

    def tracks(self, time: Optional[float] = None) -> Tracks:
        """
        Return the current tracks, sorted by id.

        Parameters
        ----------
        time : float or None
            Predict the positions (and their sigmas) to this time [s] (never backwards);
            None: each track at its last update. Ages are counted to this time, or to the
            latest update time if None.

        """
        order = np.argsort(self._id, kind='stable')
        kf = self._kf[order]
        book = self._book[order]
        pos = kf[:, _X:_Y + 1]
        var = kf[:, _PP]
        if time is None:
            ref = self._time
        else:
            ref = _finite_scalar(time, 'time')
            dt = np.maximum(ref - book[:, _T], 0.0)
            pos = pos + kf[:, _VX:_VY + 1] * dt[:, None]
            var = var + dt * (2.0 * kf[:, _PV] + dt * kf[:, _VV]) \
                + self.accel_noise ** 2 * dt ** 3 / 3.0
        return Tracks(id=self._id[order], position=np.ascontiguousarray(pos),
                      velocity=np.ascontiguousarray(kf[:, _VX:_VY + 1]),
                      radius=book[:, _RADIUS].copy(),
                      confirmed=book[:, _CONF] > 0.0,
                      moving=self._moving[order],
                      age=np.maximum(ref - book[:, _BORN], 0.0) if order.shape[0]
                      else np.empty(0),
                      position_sigma=np.sqrt(var))

    # Kalman filter and bookkeeping ------------------------------------------------------------

    def _associate(self, z, zp_track=None):
        """
        Gated optimal assignment; returns matched (track rows, detection columns).

        zp_track (T, P, 2) or None: partial detections, placed for each track; their columns
        follow those of z.
        """
        none = np.empty(0, dtype=np.int64)
        if not self._id.shape[0]:
            return none, none
        cost, allowed, n_allowed = _gated_distances(self._kf, z, self.gate, GATE_SIGMAS)
        if zp_track is not None:
            dist = np.hypot(zp_track[:, :, 0] - self._kf[:, _X, None],
                            zp_track[:, :, 1] - self._kf[:, _Y, None])
            ok = dist <= (self.gate + GATE_SIGMAS * np.sqrt(self._kf[:, _PP]))[:, None]
            allowed = np.concatenate([allowed, ok], axis=1)
            n_allowed += int(ok.sum())
            # Forbidden pairs cost more than all allowed ones together.
            total = 1.0 + cost[:, :z.shape[0]][allowed[:, :z.shape[0]]].sum() + dist[ok].sum()
            cost = np.where(allowed, np.concatenate([cost, dist], axis=1), total)
        if not n_allowed:
            return none, none
        rows, cols = linear_sum_assignment(cost)
        ok = allowed[rows, cols]
        if ok.all():
            return rows, cols
        return rows[ok], cols[ok]

    def _share(self, rows, cols, z, rad):
        """
        Drop the matches whose detection also covers another confirmed, unmatched track.

        A confirmed track left without a detection whose disc (at its predicted position)
        overlaps the disc of a matched detection is probably merged with it into one blob (two
        people passing each other, one partly hiding the other). Such a detection is
        ambiguous: it only keeps all the tracks it covers alive (no correction, no hit), so
        that they coast on their velocities instead of being dragged to the blob's centre or
        deleted. Returns the unambiguous (rows, cols) and the track rows to keep alive.
        """
        free = self._book[:, _CONF] > 0.0
        free[rows] = False
        if not free.any():
            return rows, cols, rows[:0]
        free = np.flatnonzero(free)
        dx = self._kf[free, _X, None] - z[cols, 0]
        dy = self._kf[free, _Y, None] - z[cols, 1]
        reach = rad[cols] + self._book[free, _RADIUS, None]
        covered = dx * dx + dy * dy <= reach * reach  # (F, K)
        shared = covered.any(axis=0)
        if not shared.any():
            return rows, cols, rows[:0]
        alive = np.concatenate([rows[shared], free[covered.any(axis=1)]])
        return rows[~shared], cols[~shared], alive

    def _shadow(self, rows, z, rad, sensor, time):
        """Mark the tracks ``rows`` hidden behind a detection (nearer, same bearing) seen."""
        dz = z - sensor
        dt = self._kf[rows, _X:_Y + 1] - sensor
        range_z = np.hypot(dz[:, 0], dz[:, 1])
        range_t = np.hypot(dt[:, 0], dt[:, 1])
        cos_gap = (dt @ dz.T) / np.maximum(range_t[:, None] * range_z[None], 1e-9)
        # Half-widths seen from the sensor of the detection and of the track, added.
        half = (np.arcsin(np.minimum(rad / np.maximum(range_z, 1e-9), 1.0))[None]
                + np.arcsin(np.minimum(self._book[rows, _RADIUS]
                                       / np.maximum(range_t, 1e-9), 1.0))[:, None])
        behind = ((range_z[None] < range_t[:, None])
                  & (cos_gap >= np.cos(np.minimum(half, np.pi))))
        hid = rows[behind.any(axis=1)]
        self._book[hid, _SEEN] = np.maximum(self._book[hid, _SEEN], time)

    def _start(self, z, rad, time):
        """Start tentative tracks at detections z (K, 2) with radii (K,)."""
        n = z.shape[0]
        kf = np.zeros((n, _KF_COLUMNS))
        kf[:, _X:_Y + 1] = z
        kf[:, _PP] = self.measurement_noise ** 2
        kf[:, _VV] = (INITIAL_SPEED_SIGMA * self.max_speed) ** 2
        book = np.empty((n, _BOOK_COLUMNS))
        book[:, _T:_BORN + 1] = time
        book[:, _SEEN] = time
        book[:, _HITS] = 1.0
        book[:, _RADIUS] = rad
        book[:, _CONF] = 1.0 if self.confirm_hits == 1 else 0.0
        self._id = np.concatenate([self._id, np.arange(self._next_id, self._next_id + n)])
        self._next_id += n
        self._kf = np.concatenate([self._kf, kf])
        self._book = np.concatenate([self._book, book])
        # A track confirmed at birth (confirm_hits == 1) has no speed yet: not moving.
        self._moving = np.concatenate([self._moving, np.zeros(n, dtype=bool)])

    def _keep(self, mask):
        """Keep only the tracks where mask is true."""
        self._id = self._id[mask]
        self._kf = self._kf[mask]
        self._book = self._book[mask]
        self._moving = self._moving[mask]


# Kernels (numba): the per-track Kalman filter arithmetic is a few scalar lines per track, and
# one update per scan of every robot makes the per-call overhead of numpy's small-array
# operations dominate (a fleet: ~50 scans per 0.1 s tick).


@njit(cache=True)
def _predict(kf, book, time, q, timeout, occluded_timeout):
    """
    Predict every track to time in place (never backwards); return which are alive.

    kf, book: Tracker._kf, Tracker._book; q = accel_noise^2 [m^2/s^3]; a track is alive
    while its last matched detection is at most timeout [s] old, or, confirmed and in the
    shadow of nearer detections since, occluded_timeout.
    """
    n = kf.shape[0]
    alive = np.empty(n, dtype=np.bool_)
    for i in range(n):
        dt = max(time - book[i, _T], 0.0)
        pv = kf[i, _PV]
        vv = kf[i, _VV]
        # Constant velocity, continuous white acceleration of spectral density q:
        # P <- F P F' + q [[dt^3 / 3, dt^2 / 2], [dt^2 / 2, dt]] per axis.
        kf[i, _PP] += dt * (2.0 * pv + dt * (vv + q * dt / 3.0))
        kf[i, _PV] += dt * (vv + 0.5 * q * dt)
        kf[i, _VV] += q * dt
        kf[i, _X] += kf[i, _VX] * dt
        kf[i, _Y] += kf[i, _VY] * dt
        book[i, _T] = max(book[i, _T], time)
        seen = book[i, _HIT]
        if book[i, _CONF] > 0.0:
            seen = max(seen, book[i, _SEEN])
        alive[i] = (time - seen <= timeout and time - book[i, _HIT] <= occluded_timeout)
    return alive


@njit(cache=True)
def _gated_distances(kf, z, gate, sigmas):
    """
    Cost matrix (T, D) for the assignment, the allowed pairs and their number.

    Allowed: distance from the predicted position at most gate + sigmas * position sigma.
    Forbidden pairs cost more than all allowed ones together, so that the assignment takes
    as many allowed pairs as possible, and then the shortest.
    """
    n_tracks = kf.shape[0]
    n_dets = z.shape[0]
    cost = np.empty((n_tracks, n_dets))
    allowed = np.empty((n_tracks, n_dets), dtype=np.bool_)
    n_allowed = 0
    total = 1.0
    for i in range(n_tracks):
        reach = gate + sigmas * math.sqrt(kf[i, _PP])
        for j in range(n_dets):
            dist = math.hypot(kf[i, _X] - z[j, 0], kf[i, _Y] - z[j, 1])
            cost[i, j] = dist
            allowed[i, j] = dist <= reach
            if allowed[i, j]:
                n_allowed += 1
                total += dist
    for i in range(n_tracks):
        for j in range(n_dets):
            if not allowed[i, j]:
                cost[i, j] = total
    return cost, allowed, n_allowed


@njit(cache=True)
def _correct(kf, book, moving, rows, z, rad, time, r_var, max_speed, min_speed,
             confirm_hits, confirm_time, window):
    """
    Kalman update of the tracks rows (K,) with detections z (K, 2), rad (K,), in place.

    Also caps the speed at max_speed, counts the hit, smooths the radius (mean of the last
    ``window`` or so) and updates the moving flag (hysteresis between min_speed / 2 and
    min_speed; velocities and confirmations change only here).
    """
    for k in range(rows.shape[0]):
        i = rows[k]
        pp = kf[i, _PP]
        pv = kf[i, _PV]
        s = pp + r_var
        k_pos = pp / s
        k_vel = pv / s
        dx = z[k, 0] - kf[i, _X]
        dy = z[k, 1] - kf[i, _Y]
        kf[i, _X] += k_pos * dx
        kf[i, _Y] += k_pos * dy
        kf[i, _VX] += k_vel * dx
        kf[i, _VY] += k_vel * dy
        # P <- (I - K H) P with H = [1, 0]: K = (pp, pv) / s.
        kf[i, _VV] -= k_vel * pv
        kf[i, _PP] = pp * r_var / s
        kf[i, _PV] = pv * r_var / s
        speed = math.hypot(kf[i, _VX], kf[i, _VY])
        if speed > max_speed:
            kf[i, _VX] *= max_speed / speed
            kf[i, _VY] *= max_speed / speed
            speed = max_speed
        book[i, _HITS] += 1.0
        book[i, _RADIUS] += (rad[k] - book[i, _RADIUS]) / min(book[i, _HITS], window)
        book[i, _HIT] = max(book[i, _HIT], time)
        book[i, _SEEN] = max(book[i, _SEEN], time)
        threshold = 0.5 * min_speed if moving[i] else min_speed
        if book[i, _HITS] >= confirm_hits or (
                book[i, _HITS] >= 2.0 and book[i, _HIT] - book[i, _BORN] >= confirm_time):
            book[i, _CONF] = 1.0
        moving[i] = book[i, _CONF] > 0.0 and speed > threshold


def warmup() -> None:
    """Compile the JIT kernels now (a few seconds once; cached on disk afterwards)."""
    inc = 2.0 * math.pi / 360
    beam = np.arange(170, 190)
    angles = -math.pi + beam * inc
    points = np.stack([2.0 * np.cos(angles), 2.0 * np.sin(angles)], axis=1)
    centres, radii = detect_objects(points, beam, 360, inc, [0.0, 0.0], min_points=1)
    tracker = Tracker(confirm_hits=1)
    tracker.update(0.0, centres, radii)
    tracker.update(0.1, centres, radii)


@njit(cache=True)
def _merge(z, rad, merge_distance):
    """
    Merge detections closer than merge_distance (single linkage); returns new z, rad.

    Each group becomes its members' mean centre, with the radius of the smallest disc about
    it that covers every member's disc.
    """
    n = z.shape[0]
    label = np.arange(n)  # union-find: each detection points to its group's smallest index
    limit = merge_distance * merge_distance
    for i in range(n):
        for j in range(i + 1, n):
            if (z[i, 0] - z[j, 0]) ** 2 + (z[i, 1] - z[j, 1]) ** 2 < limit:
                a, b = i, j
                while label[a] != a:
                    a = label[a]
                while label[b] != b:
                    b = label[b]
                label[max(a, b)] = min(a, b)
    group = np.empty(n, dtype=np.int64)
    n_groups = 0
    for i in range(n):
        root = i
        while label[root] != root:
            root = label[root]
        if root == i:
            group[i] = n_groups
            n_groups += 1
        else:
            group[i] = group[root]  # root < i: already numbered
    if n_groups == n:
        return z, rad
    centre = np.zeros((n_groups, 2))
    count = np.zeros(n_groups)
    for i in range(n):
        centre[group[i]] += z[i]
        count[group[i]] += 1.0
    for g in range(n_groups):
        centre[g] /= count[g]
    radius = np.zeros(n_groups)
    for i in range(n):
        g = group[i]
        reach = math.hypot(z[i, 0] - centre[g, 0], z[i, 1] - centre[g, 1]) + rad[i]
        radius[g] = max(radius[g], reach)
    return centre, radius


__all__ = ['Tracker', 'Tracks', 'detect_objects', 'warmup']
