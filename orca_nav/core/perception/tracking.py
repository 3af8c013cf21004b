"""
Tracking of moving objects (people, unknown robots) across laser scans (no ROS).

Objects come from `orca_nav.core.perception.detection.detect_objects` (re-exported here).

Tracking (`Tracker`) keeps one constant-velocity Kalman filter per track in the global frame;
one `Tracker.update` per scan (of any robot, in time order), then `Tracker.tracks` for the
estimates. See `Tracker` for the association, confirmation and deletion rules.

numpy and scipy (the assignment); the per-track filter arithmetic, the shadow test and the
ambiguity test are compiled with numba (`warmup` compiles them and the detection ahead).

Example (detections as `detect_objects` gives them; see its module for the scan side)::

    >>> tracker = Tracker(confirm_hits=2)
    >>> tracker.update(0.0, [[1.5, 1.0]], [0.25])
    >>> tracker.update(0.1, [[1.55, 1.0]], [0.25])
    >>> tracks = tracker.tracks()
    >>> tracks.position.round(2).tolist(), bool(tracks.confirmed[0])
    ([[1.55, 1.0]], True)
"""

from dataclasses import dataclass
import math
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from .checks import as_xy, finite_scalar, int_at_least, non_negative, positive
from .detection import detect_objects
from .._jit import njit

# The velocity of a new track is 0 with this standard deviation, as a fraction of max_speed.
INITIAL_SPEED_SIGMA = 0.5
# Standard deviation of a partly hidden detection's centre, placed behind its arc [m].
PARTIAL_NOISE = 0.3
# Association gate: a track may take a detection within gate + this many sigmas of its
# predicted position.
GATE_SIGMAS = 3.0
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


@dataclass(frozen=True)
class Tracks:
    """
    The tracks of a `Tracker` at one time, sorted by id (arrays are copies).

    id : (T,) int64 ndarray; track ids, unique over the tracker's life (until `Tracker.reset`).
    position : (T, 2) float64 ndarray; estimated centres in the global frame [m].
    velocity : (T, 2) float64 ndarray; estimated velocities [m/s], at most max_speed.
    radius : (T,) float64 ndarray; smoothed radii [m].
    confirmed : (T,) bool ndarray; whether the track has had confirm_hits matched detections, or
        two spanning at least confirm_time (else tentative).
    moving : (T,) bool ndarray; confirmed and moving (speed hysteresis between min_speed / 2 and
        min_speed).
    age : (T,) float64 ndarray; time since the track's first detection [s].
    position_sigma : (T,) float64 ndarray; standard deviation of each coordinate of the
        position [m].
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

        gate : float; association distance beyond the predicted position's 3 sigma [m], > 0. Larger
            keeps tracks through sharper turns and longer occlusions but lets nearby objects steal
            each other's detections.
        confirm_hits : int; matched detections for a track to be confirmed, >= 1 (1: at once).
            Larger suppresses more noise but reports new objects later.
        track_timeout : float; a track without a match for longer than this is deleted [s], > 0.
        accel_noise : float; velocity random walk [m/s per second, i.e. m/s^2], > 0. Larger follows
            turns and starts faster but gives noisier velocities.
        measurement_noise : float; standard deviation of a detected centre per coordinate [m], > 0.
        min_speed : float; a confirmed track is moving once faster than this, and until slower than
            half of it [m/s], > 0.
        max_speed : float; estimated speeds are capped at this [m/s], > 0.
        merge_distance : float; detections of one scan closer than this are one object [m], >= 0
            (0: no merge).
        confirm_time : float; a track with two or more matched detections this far apart in time is
            confirmed whatever confirm_hits says [s], >= 0 (inf: by hits only).
        """
        self.gate = positive(gate, 'gate')
        self.confirm_hits = int_at_least(confirm_hits, 'confirm_hits', 1)
        self.track_timeout = positive(track_timeout, 'track_timeout')
        self.accel_noise = positive(accel_noise, 'accel_noise')
        self.measurement_noise = positive(measurement_noise, 'measurement_noise')
        self.min_speed = positive(min_speed, 'min_speed')
        self.max_speed = positive(max_speed, 'max_speed')
        self.merge_distance = non_negative(merge_distance, 'merge_distance')
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

        time : float; scan time [s], finite; calls should come in time order, but an earlier time
            than a track's last update is tolerated (no prediction backwards).
        centres : (D, 2) array_like; detected centres in the global frame [m] (`detect_objects`);
            D may be 0.
        radii : (D,) array_like; their radii [m], finite and >= 0.
        partial : (D,) array_like of bool or None; which detections are partial views
            (``detect_objects(..., partial=True)``): such a detection updates a track placed as far
            behind its visible arc as the track is wide, with PARTIAL_NOISE, and the track keeps
            its radius; unmatched, it starts a track only where no track and no whole detection is
            near. None: none is.
        sensor : (2,) array_like or None; the scanner's position [m]; needed when a detection is
            partial.

        Raises ValueError on a non-finite time or malformed or non-finite detections (nothing is
        changed).
        """
        time = finite_scalar(time, 'time')
        z = as_xy(centres, 'centres')
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
        zp, radp = z[hidden], rad[hidden]
        z_full, rad_full = z[~hidden], rad[~hidden]
        if z_full.shape[0] > 1 and self.merge_distance > 0.0:
            z_full, rad_full = _merge(z_full, rad_full, self.merge_distance)
        if not z_full.shape[0] + zp.shape[0]:
            return
        has_sensor = sensor is not None
        sensor = np.asarray(sensor, np.float64).reshape(2) if has_sensor else np.zeros(2)
        cost, allowed, n_allowed, zp_track = _costs(self._kf, self._book, z_full, zp, radp,
                                                    sensor, self.gate, GATE_SIGMAS)
        rows = cols = np.empty(0, dtype=np.int64)
        if n_allowed:
            # Imported here: scipy.optimize takes 0.3 s to import, and only nodes that track
            # people need it; every node process would pay for it at start-up.
            from scipy.optimize import linear_sum_assignment
            rows, cols = linear_sum_assignment(cost)
            ok = allowed[rows, cols]
            if not ok.all():
                rows, cols = rows[ok], cols[ok]
        new_z, new_rad = _fold(
            self._kf, self._book, self._moving, rows.astype(np.int64), cols.astype(np.int64),
            z_full, rad_full, zp, radp, zp_track, z, rad, has_sensor, sensor, time,
            self.measurement_noise ** 2, PARTIAL_NOISE ** 2, self.max_speed, self.min_speed,
            self.confirm_hits, self.confirm_time, self.RADIUS_WINDOW, self.merge_distance)
        if new_z.shape[0]:
            self._start(new_z, new_rad, time)

    def tracks(self, time: Optional[float] = None) -> Tracks:
        """
        Return the current tracks, sorted by id.

        time : float or None; predict the positions (and their sigmas) to this time [s] (never
            backwards); None: each track at its last update. Ages are counted to this time, or to
            the latest update time if None.
        """
        order = np.argsort(self._id, kind='stable')
        kf = self._kf[order]
        book = self._book[order]
        pos = kf[:, _X:_Y + 1]
        var = kf[:, _PP]
        if time is None:
            ref = self._time
        else:
            ref = finite_scalar(time, 'time')
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
def _costs(kf, book, z, zp, radp, sensor, gate, sigmas):
    """
    Return the assignment costs (T, D + P) of the tracks to the whole and partial detections.

    A partial detection lies too near the sensor by up to the missing width: for each track
    it is placed as far behind its arc as the track is wider (zp_track (T, P, 2)). A pair is
    allowed within gate + sigmas * position sigma of the predicted position; forbidden pairs
    cost more than all allowed ones together, so that the assignment takes as many allowed
    pairs as possible, and then the shortest. Returns cost, allowed, their number, zp_track.
    """
    n_tracks, n_full, n_part = kf.shape[0], z.shape[0], zp.shape[0]
    zp_track = np.empty((n_tracks, n_part, 2))
    for p in range(n_part):
        ax = zp[p, 0] - sensor[0]
        ay = zp[p, 1] - sensor[1]
        norm = max(math.hypot(ax, ay), 1e-9)
        ax, ay = ax / norm, ay / norm
        for i in range(n_tracks):
            push = max(book[i, _RADIUS] - radp[p], 0.0)
            zp_track[i, p, 0] = zp[p, 0] + push * ax
            zp_track[i, p, 1] = zp[p, 1] + push * ay
    cost = np.empty((n_tracks, n_full + n_part))
    allowed = np.empty((n_tracks, n_full + n_part), dtype=np.bool_)
    n_allowed = 0
    total = 1.0
    for i in range(n_tracks):
        reach = gate + sigmas * math.sqrt(kf[i, _PP])
        for j in range(n_full + n_part):
            if j < n_full:
                dist = math.hypot(kf[i, _X] - z[j, 0], kf[i, _Y] - z[j, 1])
            else:
                dist = math.hypot(zp_track[i, j - n_full, 0] - kf[i, _X],
                                  zp_track[i, j - n_full, 1] - kf[i, _Y])
            cost[i, j] = dist
            allowed[i, j] = dist <= reach
            if allowed[i, j]:
                n_allowed += 1
                total += dist
    for i in range(n_tracks):
        for j in range(n_full + n_part):
            if not allowed[i, j]:
                cost[i, j] = total
    return cost, allowed, n_allowed, zp_track


@njit(cache=True)
def _fold(kf, book, moving, rows, cols, z, rad, zp, radp, zp_track, z_seen, rad_seen,
          has_sensor, sensor, time, r_var, r_var_partial, max_speed, min_speed, confirm_hits,
          confirm_time, window, merge_distance):
    """
    Fold the matches (rows, cols) of one scan into the tracks; return the detections to start.

    Columns below D = len(z) are whole detections, the others partial ones (placed for their
    track by zp_track, with its radius). In place, as `Tracker.update` describes: drop the
    ambiguous matches (they only keep the tracks they cover alive), correct the others, mark
    the unmatched tracks in the shadow of a nearer detection, and return the unmatched
    detections (partial ones only with no whole one near) that lie near no track.
    """
    n_full, n_tracks = z.shape[0], kf.shape[0]
    k = rows.shape[0]
    z_all = np.empty((k, 2))
    rad_all = np.empty(k)
    z_cols = np.empty((n_full + zp.shape[0], 2))  # detection of each column, per its match
    rad_cols = np.empty(n_full + zp.shape[0])
    z_cols[:n_full] = z
    rad_cols[:n_full] = rad
    for m in range(k):
        c = cols[m]
        if c >= n_full:
            z_cols[c] = zp_track[rows[m], c - n_full]
            rad_cols[c] = book[rows[m], _RADIUS]
    if k:
        shared, covering = _covered(kf, book, rows, cols, z_cols, rad_cols)
        for full_pass in (True, False):
            sel = np.empty(k, dtype=np.int64)
            n_sel = 0
            for m in range(k):
                if not shared[m] and (cols[m] < n_full) == full_pass:
                    sel[n_sel] = m
                    n_sel += 1
            if n_sel:
                for q in range(n_sel):
                    z_all[q] = z_cols[cols[sel[q]]]
                    rad_all[q] = rad_cols[cols[sel[q]]]
                _correct(kf, book, moving, rows[sel[:n_sel]], z_all[:n_sel], rad_all[:n_sel],
                         time, r_var if full_pass else r_var_partial, max_speed, min_speed,
                         confirm_hits, confirm_time, window)
        for m in range(k):
            if shared[m]:
                book[rows[m], _HIT] = max(book[rows[m], _HIT], time)
        for i in range(n_tracks):
            if covering[i]:
                book[i, _HIT] = max(book[i, _HIT], time)
    if has_sensor and k < n_tracks:
        missed = np.ones(n_tracks, dtype=np.bool_)
        for m in range(k):
            missed[rows[m]] = False
        _shadow(kf, book, np.flatnonzero(missed), z_seen, rad_seen, sensor, time)
    new = np.flatnonzero(_fresh_columns(kf, cols, z, zp, merge_distance))
    out_z = np.empty((new.shape[0], 2))
    out_rad = np.empty(new.shape[0])
    for q in range(new.shape[0]):
        c = new[q]
        if c < n_full:
            out_z[q] = z[c]
            out_rad[q] = rad[c]
        else:
            out_z[q] = zp[c - n_full]
            out_rad[q] = radp[c - n_full]
    return out_z, out_rad


@njit(cache=True)
def _fresh_columns(kf, cols, z, zp, merge_distance):
    """
    Return which detection columns start a track: unmatched and near no track.

    Columns below len(z) are whole detections, the others partial views (``zp``), which
    start one only with no whole detection beside them.
    """
    n_full, n_tracks = z.shape[0], kf.shape[0]
    fresh = np.ones(n_full + zp.shape[0], dtype=np.bool_)
    for m in range(cols.shape[0]):
        fresh[cols[m]] = False
    # A partial view starts a track only with no whole detection beside it.
    for p in range(zp.shape[0]):
        if fresh[n_full + p]:
            for j in range(n_full):
                if math.hypot(zp[p, 0] - z[j, 0], zp[p, 1] - z[j, 1]) < merge_distance:
                    fresh[n_full + p] = False
                    break
    # No new track on top of an existing one (duplicate legs or views).
    limit = merge_distance * merge_distance
    for c in range(fresh.shape[0]):
        if fresh[c]:
            x, y = (z[c, 0], z[c, 1]) if c < n_full else (zp[c - n_full, 0], zp[c - n_full, 1])
            for i in range(n_tracks):
                if (x - kf[i, _X]) ** 2 + (y - kf[i, _Y]) ** 2 < limit:
                    fresh[c] = False
                    break
    return fresh


@njit(cache=True)
def _covered(kf, book, rows, cols, z, rad):
    """
    Which matched detections (rows, cols) also cover a confirmed, unmatched track; and which.

    Returns shared (K,) bool over the matches and covering (T,) bool over the tracks: the
    confirmed tracks without a match whose disc overlaps a matched detection's disc.
    """
    n = kf.shape[0]
    free = np.empty(n, dtype=np.bool_)
    for i in range(n):
        free[i] = book[i, _CONF] > 0.0
    for r in rows:
        free[r] = False
    shared = np.zeros(cols.shape[0], dtype=np.bool_)
    covering = np.zeros(n, dtype=np.bool_)
    for i in range(n):
        if not free[i]:
            continue
        for k in range(cols.shape[0]):
            c = cols[k]
            dx = kf[i, _X] - z[c, 0]
            dy = kf[i, _Y] - z[c, 1]
            reach = rad[c] + book[i, _RADIUS]
            if dx * dx + dy * dy <= reach * reach:
                shared[k] = True
                covering[i] = True
    return shared, covering


@njit(cache=True)
def _shadow(kf, book, rows, z, rad, sensor, time):
    """
    Mark the tracks ``rows`` hidden behind a detection seen (nearer, same bearing), in place.

    A track is in the shadow of a detection nearer to the sensor whose bearing differs from
    the track's by at most the two half-widths seen from the sensor; its _SEEN time becomes
    ``time`` (see `_predict`).
    """
    range_z = np.empty(z.shape[0])
    half_z = np.empty(z.shape[0])
    for j in range(z.shape[0]):
        range_z[j] = math.hypot(z[j, 0] - sensor[0], z[j, 1] - sensor[1])
        half_z[j] = math.asin(min(rad[j] / max(range_z[j], 1e-9), 1.0))
    for r in rows:
        tx = kf[r, _X] - sensor[0]
        ty = kf[r, _Y] - sensor[1]
        range_t = math.hypot(tx, ty)
        half_t = math.asin(min(book[r, _RADIUS] / max(range_t, 1e-9), 1.0))
        for j in range(z.shape[0]):
            if range_z[j] >= range_t:
                continue
            cos_gap = (tx * (z[j, 0] - sensor[0]) + ty * (z[j, 1] - sensor[1])) \
                / max(range_t * range_z[j], 1e-9)
            if cos_gap >= math.cos(min(half_t + half_z[j], math.pi)):
                book[r, _SEEN] = max(book[r, _SEEN], time)
                break


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
    # A second track beside the first (covered when it goes unseen), then one scan that sees
    # only a nearer object in front of both (the shadow test).
    tracker.update(0.2, np.vstack([centres, centres + [0.0, 0.3]]), np.append(radii, radii))
    tracker.update(0.3, centres, radii, sensor=[0.0, 0.0])
    tracker.update(0.4, 0.5 * centres, radii, sensor=[0.0, 0.0])


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
