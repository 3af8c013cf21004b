"""Tests for orca_nav.core.perception.tracking, on scans synthesised with its raycast module."""

import math

from hypothesis import assume, given, settings
from hypothesis import strategies as st
import numpy as np
from orca_nav.core.perception.raycast import cast_rays
from orca_nav.core.perception.scan import scan_to_points
from orca_nav.core.perception.tracking import detect_objects, Tracker, Tracks, warmup
import pytest

N_BEAMS = 720  # 0.5 degree beams over a full circle
RANGE_MIN = 0.05
RANGE_MAX = 10.0
PERSON = 0.25  # radius of a person's disc [m]
PERIOD = 0.1  # scan period of every sensor [s]
STAGGER = 0.03  # the second sensor scans this much after the first [s]
NOISE = 0.01  # range noise sigma [m]


def scan(sensor, centers=None, radii=None, walls=None, *, yaw=0.0, fov=2 * math.pi,
         n=N_BEAMS, noise=0.0, rng=None, clockwise=False):
    """Points, beams, n_beams and angle_increment of a scan from sensor (x, y) at yaw."""
    inc = fov / n
    angle_min = -math.pi if fov >= 2 * math.pi else -fov / 2
    if clockwise:
        angle_min, inc = angle_min + (n - 1) * inc, -inc
    angles = yaw + angle_min + np.arange(n) * inc
    ranges = cast_rays(np.asarray(sensor, dtype=float), angles, RANGE_MAX, walls, centers,
                       radii)
    if noise:
        ranges = ranges + rng.normal(0.0, noise, n)
    points, beams = scan_to_points(ranges, angle_min, inc, RANGE_MIN, RANGE_MAX,
                                   [sensor[0], sensor[1], yaw])
    return points, beams, n, inc


def detect(sensor, centers=None, radii=None, walls=None, **kwargs):
    """detect_objects on a synthetic scan (all returns unexplained: no map, no robots)."""
    points, beams, n, inc = scan(sensor, centers, radii, walls, **kwargs)
    return detect_objects(points, beams, n, inc, sensor)


def straight(starts, velocities):
    """Scene of walkers on straight lines: t -> (positions (W, 2), radii (W,))."""
    starts = np.asarray(starts, dtype=float)
    velocities = np.asarray(velocities, dtype=float)
    return lambda t: (starts + velocities * t, np.full(starts.shape[0], PERSON))


def track(scene, sensors, duration, *, tracker=None, seed=0, skip=None, fov=2 * math.pi):
    """
    Scan the scene with every sensor each PERIOD (staggered) and feed a tracker.

    skip(k, s) -> True drops the detections of scan k of sensor s. Returns the tracker and a
    log of (time, true positions, Tracks, number of detections) after every update.
    """
    rng = np.random.default_rng(seed)
    tracker = Tracker() if tracker is None else tracker
    log = []
    for k in range(int(round(duration / PERIOD))):
        for s, sensor in enumerate(sensors):
            t = k * PERIOD + s * STAGGER
            centers, radii = scene(t)
            found = detect(sensor, centers, radii, noise=NOISE, rng=rng, fov=fov)
            if skip is not None and skip(k, s):
                found = (np.empty((0, 2)), np.empty(0))
            tracker.update(t, *found)
            log.append((t, centers, tracker.tracks(), found[0].shape[0]))
    return tracker, log


def errors(tracks, true_position, true_velocity):
    """Position and velocity errors of the only confirmed track."""
    assert np.count_nonzero(tracks.confirmed) == 1
    k = int(np.flatnonzero(tracks.confirmed)[0])
    return (float(np.linalg.norm(tracks.position[k] - true_position)),
            float(np.linalg.norm(tracks.velocity[k] - true_velocity)))


# Detection -------------------------------------------------------------------------------------


@pytest.mark.parametrize('bearing', [0.0, 1.0, 2.5, -2.0, math.pi])  # pi: across the seam
@pytest.mark.parametrize('yaw', [0.0, 0.7])
def test_disc_seen_from_two_metres_gives_one_accurate_detection(bearing, yaw):
    sensor = np.array([0.4, -0.3])
    centre = sensor + 2.0 * np.array([math.cos(bearing), math.sin(bearing)])
    centres, radii = detect(sensor, [centre], [PERSON], yaw=yaw, noise=NOISE,
                            rng=np.random.default_rng(1))
    assert centres.shape == (1, 2) and radii.shape == (1,)
    assert np.linalg.norm(centres[0] - centre) <= 0.05
    assert abs(radii[0] - PERSON) <= 0.08


def test_centre_estimate_is_unbiased_behind_the_visible_arc():
    # The returns lie on the near half of the disc: their mean is ~0.2 m short of the centre.
    # The circle fit must put the centre behind them, without bias, at any range.
    rng = np.random.default_rng(2)
    range_errors, radius_errors, misses = [], [], []
    for _ in range(60):
        sensor = rng.uniform(-1.0, 1.0, 2)
        bearing = rng.uniform(-math.pi, math.pi)
        dist = rng.uniform(1.0, 6.0)
        radius = rng.uniform(0.15, 0.35)
        direction = np.array([math.cos(bearing), math.sin(bearing)])
        centre = sensor + dist * direction
        points, beams, n, inc = scan(sensor, [centre], [radius], noise=NOISE, rng=rng)
        centres, radii = detect_objects(points, beams, n, inc, sensor)
        assert centres.shape == (1, 2)
        assert np.mean(points, axis=0) @ direction - centre @ direction < -0.1
        range_errors.append((centres[0] - centre) @ direction)
        radius_errors.append(radii[0] - radius)
        misses.append(np.linalg.norm(centres[0] - centre))
    assert abs(np.mean(range_errors)) < 0.005
    assert abs(np.mean(radius_errors)) < 0.005
    assert np.mean(misses) < 0.015
    assert np.max(misses) < 0.05
    assert np.max(np.abs(radius_errors)) < 0.03


def test_wall_gives_no_detection():
    wall = np.array([[[2.0, -1.5], [2.0, 1.5]]])
    centres, radii = detect([0.0, 0.0], walls=wall, noise=NOISE, rng=np.random.default_rng(3))
    assert centres.shape == (0, 2) and radii.shape == (0,)


def test_person_in_front_of_a_wall_is_the_only_detection():
    wall = np.array([[[3.0, -1.5], [3.0, 1.5]]])
    person = np.array([2.0, 0.1])
    centres, radii = detect([0.0, 0.0], [person], [PERSON], wall, noise=NOISE,
                            rng=np.random.default_rng(4))
    assert centres.shape == (1, 2)
    assert np.linalg.norm(centres[0] - person) <= 0.05
    assert abs(radii[0] - PERSON) <= 0.08


def test_clockwise_scan_gives_the_same_detection():
    sensor, person = np.array([1.0, 1.0]), np.array([2.5, 2.0])
    ccw = detect(sensor, [person], [PERSON])
    cw = detect(sensor, [person], [PERSON], clockwise=True)
    np.testing.assert_allclose(cw[0], ccw[0], atol=0.02)
    np.testing.assert_allclose(cw[1], ccw[1], atol=0.02)


def test_small_objects_get_min_radius_and_stray_returns_are_ignored():
    # A 6 cm table leg 1.5 m away: a few returns, radius clipped up to min_radius.
    centres, radii = detect([0.0, 0.0], [[1.5, 0.0]], [0.03])
    assert centres.shape == (1, 2)
    assert np.linalg.norm(centres[0] - [1.5, 0.0]) <= 0.03
    assert radii[0] == pytest.approx(0.1)
    # Fewer than min_points returns: noise.
    points, beams, n, inc = scan([0.0, 0.0], [[1.5, 0.0]], [0.03])
    assert points.shape[0] >= 3
    assert detect_objects(points[:2], beams[:2], n, inc, [0.0, 0.0])[0].shape == (0, 2)
    assert detect_objects(points, beams, n, inc, [0.0, 0.0], min_points=50)[0].shape == (0, 2)


def test_partly_hidden_object_is_dropped_and_whole_ones_kept():
    front, behind = np.array([2.0, 0.0]), np.array([3.5, 0.35])
    centres, _ = detect([0.0, 0.0], [front, behind], [PERSON, PERSON])
    assert centres.shape == (1, 2)  # the arc of the one behind ends at the front one
    assert np.linalg.norm(centres[0] - front) <= 0.05
    beside = np.array([3.5, 1.2])  # fully visible
    centres, _ = detect([0.0, 0.0], [front, beside], [PERSON, PERSON])
    assert centres.shape == (2, 2)
    for true in (front, beside):
        assert np.min(np.linalg.norm(centres - true, axis=1)) <= 0.05


def test_partial_field_of_view_does_not_wrap():
    # 270 degree scan: the first and last beams are not neighbours, the blind sector is empty.
    centres, _ = detect([0.0, 0.0], [[0.0, 2.0], [2.0, 0.0]], [PERSON, PERSON],
                        fov=1.5 * math.pi, yaw=-math.pi / 4)
    assert centres.shape == (2, 2)


def test_detect_objects_input_validation():
    points, beams, n, inc = scan([0.0, 0.0], [[2.0, 0.0]], [PERSON])
    ok = detect_objects(points, beams, n, inc, [0.0, 0.0])
    assert ok[0].shape == (1, 2)
    bad_points = points.copy()
    bad_points[3, 0] = np.nan
    reversed_beams = beams[::-1].copy()
    for args in [(bad_points, beams, n, inc, [0.0, 0.0]),
                 (points[:, :1], beams, n, inc, [0.0, 0.0]),
                 (points, beams[:-1], n, inc, [0.0, 0.0]),
                 (points, reversed_beams, n, inc, [0.0, 0.0]),
                 (points, beams + n, n, inc, [0.0, 0.0]),
                 (points, beams + 0.5, n, inc, [0.0, 0.0]),
                 (points, beams, n, 0.0, [0.0, 0.0]),
                 (points, beams, n, np.nan, [0.0, 0.0]),
                 (points, beams, n, inc, [0.0, np.inf]),
                 (points, beams, n, inc, [0.0, 0.0, 0.0])]:
        with pytest.raises(ValueError):
            detect_objects(*args)
    for kwargs in [{'jump_distance': 0.0}, {'max_diameter': -1.0}, {'min_points': 0},
                   {'min_points': 2.5}, {'min_radius': -0.1}, {'min_radius': 0.6}]:
        with pytest.raises(ValueError):
            detect_objects(points, beams, n, inc, [0.0, 0.0], **kwargs)
    centres, radii = detect_objects(np.empty((0, 2)), np.empty(0, dtype=int), n, inc, [0, 0])
    assert centres.shape == (0, 2) and radii.shape == (0,)
    centres, radii = detect_objects([], [], n, inc, [0.0, 0.0])
    assert centres.shape == (0, 2) and radii.shape == (0,)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.floats(-math.pi, math.pi), st.floats(0.8, 5.0), st.floats(0.1, 0.4),
       st.floats(-3.0, 3.0), st.floats(-3.0, 3.0), st.integers(0, 2 ** 31 - 1))
def test_any_disc_is_found_where_it_is(bearing, dist, radius, sx, sy, seed):
    assume(dist > radius + 0.3)
    sensor = np.array([sx, sy])
    centre = sensor + dist * np.array([math.cos(bearing), math.sin(bearing)])
    centres, radii = detect(sensor, [centre], [radius], noise=NOISE,
                            rng=np.random.default_rng(seed))
    assert centres.shape == (1, 2)
    assert np.linalg.norm(centres[0] - centre) <= 0.05
    assert abs(radii[0] - max(radius, 0.1)) <= 0.05


# Tracking ----------------------------------------------------------------------------------------

TWO_SENSORS = [(0.0, 2.0), (3.0, -2.5)]


def test_walker_seen_by_two_sensors_is_one_accurate_moving_track():
    velocity = 0.5 * np.array([math.cos(0.4), math.sin(0.4)])
    scene = straight([[-2.0, -1.0]], [velocity])
    _, log = track(scene, TWO_SENSORS, 8.0)
    ids = set()
    pos_errors, vel_errors = [], []
    checked_at_one_second = False
    for t, truth, tracks, _ in log:
        if t < 1.0:
            continue
        assert len(tracks) == 1  # no duplicate from the second sensor, no stray tentative
        ids.add(int(tracks.id[0]))
        pos_error, vel_error = errors(tracks, truth[0], velocity)
        if not checked_at_one_second:
            assert pos_error <= 0.1 and vel_error <= 0.1
            checked_at_one_second = True
        assert tracks.moving[0]
        pos_errors.append(pos_error)
        vel_errors.append(vel_error)
    assert len(ids) == 1
    assert np.mean(pos_errors) <= 0.02 and np.max(pos_errors) <= 0.1
    assert np.mean(vel_errors) <= 0.05 and np.max(vel_errors) <= 0.2
    assert abs(log[-1][2].radius[0] - PERSON) <= 0.05


def test_standing_person_is_confirmed_but_not_moving():
    scene = straight([[1.5, 1.0]], [[0.0, 0.0]])
    tracker, log = track(scene, TWO_SENSORS, 5.0)
    for t, truth, tracks, _ in log:
        assert len(tracks) == 1
        assert not tracks.moving[0]
        if t >= 0.2:
            assert tracks.confirmed[0]
    final = tracker.tracks()
    assert np.linalg.norm(final.position[0] - [1.5, 1.0]) <= 0.03
    assert np.linalg.norm(final.velocity[0]) < 0.05


@pytest.mark.parametrize('sensors', [[(-2.0, 2.0), (2.0, -2.0)], [(-3.0, -3.0), (3.0, -3.0)],
                                     [(0.0, 3.0), (3.0, 0.0)]])
def test_crossing_walkers_keep_their_tracks(sensors):
    # Paths crossing at right angles, both walkers at the crossing at t = 4 s: their discs
    # overlap and merge into one blob for about a second.
    velocities = np.array([[0.5, 0.0], [0.0, 0.5]])
    scene = straight([[-2.0, 0.0], [0.0, -2.0]], velocities)
    _, log = track(scene, sensors, 8.0)
    owner = None
    for t, truth, tracks, _ in log:
        if owner is None:
            if np.count_nonzero(tracks.confirmed) == 2:
                assert t < 1.0
                # Which track follows which walker, fixed once both are confirmed.
                gaps = np.linalg.norm(tracks.position[:, None] - truth[None], axis=2)
                owner = {int(tracks.id[np.argmin(gaps[:, w])]): w for w in range(2)}
                assert len(owner) == 2
            continue
        assert len(tracks) == 2 and sorted(owner) == sorted(tracks.id.tolist())
        for k, track_id in enumerate(tracks.id.tolist()):
            assert np.linalg.norm(tracks.position[k] - truth[owner[track_id]]) <= 0.3, t
    # After the crossing, each velocity points along its own walker's path.
    _, _, final, _ = log[-1]
    for k, track_id in enumerate(final.id.tolist()):
        true_velocity = velocities[owner[track_id]]
        assert final.velocity[k] @ true_velocity / 0.5 >= 0.4
        assert np.linalg.norm(final.velocity[k] - true_velocity) <= 0.15
        assert final.moving[k]


def test_flicker_every_other_scan_keeps_one_track():
    velocity = np.array([0.3, 0.4])
    scene = straight([[-1.0, 1.0]], [velocity])
    _, log = track(scene, [(0.0, -1.0)], 6.0, skip=lambda k, s: k % 2 == 1)
    ids = set()
    for t, truth, tracks, _ in log:
        assert len(tracks) <= 1
        if t >= 0.5:
            assert len(tracks) == 1 and tracks.confirmed[0]
            ids.add(int(tracks.id[0]))
            assert np.linalg.norm(tracks.position[0] - truth[0]) <= 0.1
    assert len(ids) == 1
    assert np.linalg.norm(log[-1][2].velocity[0] - velocity) <= 0.1


def test_one_off_detection_never_confirms_and_expires():
    tracker = Tracker()
    walker = np.array([1.0, 0.0])
    t = 0.0
    for k in range(30):
        t = k * PERIOD
        centres = [walker, [4.0, 4.0]] if k == 5 else [walker]  # noise once at scan 5
        tracker.update(t, np.array(centres, dtype=float), np.full(len(centres), 0.2))
        tracks = tracker.tracks()
        noise = np.linalg.norm(tracks.position - [4.0, 4.0], axis=1) < 0.5
        assert not np.any(tracks.confirmed[noise])
        if t <= 0.5 + tracker.track_timeout:
            assert np.count_nonzero(noise) == (1 if t >= 0.5 else 0)
        else:
            assert not np.any(noise)
        assert np.count_nonzero(tracks.confirmed) == (1 if k >= 2 else 0)


def test_track_is_deleted_track_timeout_after_the_walker_leaves_the_view():
    # A 90 degree field of view looking along +x; the walker walks out of it towards +y
    # (wholly out of view after about 4.8 s).
    scene = straight([[2.5, -1.0]], [[0.0, 0.8]])
    tracker, log = track(scene, [(0.0, 0.0)], 7.0, fov=math.pi / 2)
    last_seen = max(t for t, _, _, n_found in log if n_found)
    assert 4.0 < last_seen < 5.0
    ids = set()
    for t, truth, tracks, _ in log:
        if 0.3 <= t <= last_seen + tracker.track_timeout:
            assert len(tracks) == 1 and tracks.confirmed[0], t
            ids.add(int(tracks.id[0]))
        elif t > last_seen + tracker.track_timeout:
            assert len(tracks) == 0, t
    assert len(ids) == 1


def test_track_survives_exactly_track_timeout_without_detections():
    tracker = Tracker(track_timeout=1.0)
    for k in range(5):
        tracker.update(k * PERIOD, [[1.0, 1.0]], [0.2])
    last = 4 * PERIOD
    tracker.update(last + 1.0, np.empty((0, 2)), np.empty(0))
    assert len(tracker.tracks()) == 1
    tracker.update(last + 1.0 + 1e-6, [], [])
    assert len(tracker.tracks()) == 0


def test_nan_detections_raise_and_change_nothing():
    tracker = Tracker()
    for k in range(4):
        tracker.update(k * PERIOD, [[1.0, 0.5]], [0.2])
    before = tracker.tracks()
    for centres, radii in [([[np.nan, 0.0]], [0.2]), ([[0.0, np.inf]], [0.2]),
                           ([[1.0, 0.5]], [np.nan]), ([[1.0, 0.5]], [-0.1]),
                           ([[1.0, 0.5]], [0.2, 0.3]), ([1.0, 0.5, 0.2], [0.2]),
                           ([[1.0, 0.5, 0.0]], [0.2])]:
        with pytest.raises(ValueError):
            tracker.update(0.5, centres, radii)
    for time in (np.nan, np.inf, 'soon'):
        with pytest.raises(ValueError):
            tracker.update(time, [[1.0, 0.5]], [0.2])
    after = tracker.tracks()
    for name in ('id', 'position', 'velocity', 'radius', 'confirmed', 'position_sigma'):
        np.testing.assert_array_equal(getattr(after, name), getattr(before, name))


def test_empty_detections_and_time_going_backwards_are_fine():
    tracker = Tracker()
    tracker.update(0.0, [], [])
    tracker.update(0.1, np.empty((0, 2)), np.empty(0))
    assert len(tracker.tracks()) == 0
    velocity = np.array([0.5, 0.0])
    times = [0.2, 0.3, 0.4, 0.5, 0.45, 0.6, 0.55, 0.7, 0.8, 0.75, 0.9, 1.0, 1.1, 1.2]
    for t in times:  # a few scans arrive late
        tracker.update(t, [velocity * t], [0.2])
        tracks = tracker.tracks()
        assert len(tracks) == 1
        assert np.all(np.isfinite(tracks.position)) and np.all(np.isfinite(tracks.velocity))
        assert np.all(tracks.position_sigma > 0.0)
    tracks = tracker.tracks()
    assert np.linalg.norm(tracks.position[0] - velocity * 1.2) <= 0.05
    assert np.linalg.norm(tracks.velocity[0] - velocity) <= 0.15
    assert tracks.confirmed[0]
    # tracks() never predicts backwards either.
    np.testing.assert_array_equal(tracker.tracks(0.0).position, tracks.position)


def test_two_legs_in_one_scan_make_one_track():
    tracker = Tracker()
    legs = np.array([[2.0, -0.15], [2.0, 0.15]])
    for k in range(5):
        tracker.update(k * PERIOD, legs + [0.05 * k, 0.0], [0.08, 0.08])
    tracks = tracker.tracks()
    assert len(tracks) == 1
    np.testing.assert_allclose(tracks.position[0], [2.2, 0.0], atol=0.05)
    assert tracks.radius[0] >= 0.15 + 0.08 - 1e-9  # covers both legs
    # Without merging, the two legs of a new person are two tracks.
    tracker = Tracker(merge_distance=0.0)
    for k in range(5):
        tracker.update(k * PERIOD, legs, [0.08, 0.08])
    assert len(tracker.tracks()) == 2


def test_far_detection_is_a_new_object_not_a_jump():
    tracker = Tracker()
    for k in range(5):
        tracker.update(k * PERIOD, [[0.0, 0.0]], [0.2])
    tracker.update(0.5, [[2.0, 0.0]], [0.2])  # beyond gate + 3 sigma of the track
    tracks = tracker.tracks()
    assert len(tracks) == 2
    np.testing.assert_allclose(tracks.position[0], [0.0, 0.0], atol=1e-3)
    np.testing.assert_allclose(tracks.position[1], [2.0, 0.0])
    assert tracks.confirmed.tolist() == [True, False]
    # Within the gate, the same detection updates the track instead.
    tracker = Tracker(gate=3.0)
    for k in range(5):
        tracker.update(k * PERIOD, [[0.0, 0.0]], [0.2])
    tracker.update(0.5, [[2.0, 0.0]], [0.2])
    tracks = tracker.tracks()
    assert len(tracks) == 1 and tracks.position[0, 0] > 0.5


def test_second_view_next_to_a_track_starts_no_track():
    # Legs far enough apart not to be merged (a long stride), next to the person's track.
    tracker = Tracker()
    for k in range(5):
        tracker.update(k * PERIOD, [[2.0, -0.15], [2.0, 0.15]], [0.08, 0.08])
    tracker.update(0.5, [[2.0, -0.25], [2.0, 0.25]], [0.08, 0.08])
    for k in range(6, 10):
        tracker.update(k * PERIOD, [[2.0, -0.15], [2.0, 0.15]], [0.08, 0.08])
        assert len(tracker.tracks()) == 1


def test_moving_flag_has_hysteresis():
    tracker = Tracker(min_speed=0.15)
    t, x = 0.0, 0.0

    def walk(speed, duration):
        nonlocal t, x
        for _ in range(int(round(duration / 0.05))):
            t += 0.05
            x += speed * 0.05
            tracker.update(t, [[x, 0.0]], [0.2])
        return bool(tracker.tracks().moving[0])

    assert not walk(0.0, 1.0)
    assert not walk(0.1, 3.0)  # below min_speed: does not start moving
    assert walk(0.5, 2.0)
    assert walk(0.1, 3.0)  # slower, above min_speed / 2: keeps moving
    assert not walk(0.05, 3.0)  # below min_speed / 2: stops
    assert not walk(0.1, 3.0)


def test_speed_is_capped():
    tracker = Tracker(max_speed=1.0, gate=1.0)
    for k in range(30):
        tracker.update(k * PERIOD, [[0.3 * k, 0.0]], [0.2])  # 3 m/s
        assert np.linalg.norm(tracker.tracks().velocity, axis=1).max() <= 1.0 + 1e-9


def test_tracks_prediction_ages_and_reset():
    tracker = Tracker()
    for k in range(11):
        tracker.update(1.0 + k * PERIOD, [[0.5 * k * PERIOD, 1.0]], [0.2])
    now = tracker.tracks()
    assert isinstance(now, Tracks) and len(now) == 1
    assert now.age[0] == pytest.approx(1.0)
    later = tracker.tracks(time=3.0)
    np.testing.assert_allclose(later.position, now.position + now.velocity * 1.0)
    assert later.position_sigma[0] > now.position_sigma[0]
    assert later.age[0] == pytest.approx(2.0)
    np.testing.assert_array_equal(later.velocity, now.velocity)
    # The returned arrays are copies: changing them changes nothing.
    now.position[:] = 99.0
    assert tracker.tracks().position[0, 0] < 10.0
    tracker.reset()
    assert len(tracker.tracks()) == 0
    tracker.update(5.0, [[0.0, 0.0]], [0.2])
    assert tracker.tracks().id.tolist() == [0]


def test_confirm_hits_one_confirms_at_once():
    tracker = Tracker(confirm_hits=1)
    tracker.update(0.0, [[1.0, 1.0]], [0.2])
    tracks = tracker.tracks()
    assert tracks.confirmed.tolist() == [True] and tracks.moving.tolist() == [False]


def test_empty_tracks_have_the_right_shapes():
    tracks = Tracker().tracks(time=1.0)
    assert len(tracks) == 0
    assert tracks.position.shape == (0, 2) and tracks.velocity.shape == (0, 2)
    for name in ('id', 'radius', 'confirmed', 'moving', 'age', 'position_sigma'):
        assert getattr(tracks, name).shape == (0,)


@pytest.mark.parametrize('kwargs', [{'gate': 0.0}, {'gate': -1.0}, {'gate': np.nan},
                                    {'confirm_hits': 0}, {'confirm_hits': 1.5},
                                    {'confirm_hits': True}, {'track_timeout': 0.0},
                                    {'accel_noise': -1.0}, {'measurement_noise': 0.0},
                                    {'min_speed': 0.0}, {'max_speed': np.inf},
                                    {'merge_distance': -0.1}, {'gate': 'wide'}])
def test_tracker_rejects_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        Tracker(**kwargs)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(st.floats(-3.0, 3.0), st.floats(-3.0, 3.0), st.floats(-math.pi, math.pi),
       st.floats(0.2, 1.5), st.integers(0, 2 ** 31 - 1))
def test_random_straight_walkers_are_tracked(x0, y0, heading, speed, seed):
    sensors = [(0.0, 0.0), (5.0, 1.0)]
    start = np.array([x0, y0])
    velocity = speed * np.array([math.cos(heading), math.sin(heading)])
    path = start + np.linspace(0.0, 2.0, 41)[:, None] * velocity
    for sensor in sensors:  # sensors are points: keep the walker's disc off them
        assume(np.min(np.linalg.norm(path - sensor, axis=1)) > 0.8)
    _, log = track(straight([start], [velocity]), sensors, 2.0, seed=seed)
    late = [entry[:3] for entry in log if entry[0] >= 1.0]
    t, truth, tracks = late[0]
    assert len(tracks) == 1
    pos_error, vel_error = errors(tracks, truth[0], velocity)
    assert pos_error <= 0.1 and vel_error <= 0.1
    vel_errors = []
    for t, truth, tracks in late:
        assert len(tracks) == 1 and tracks.moving[0]
        pos_error, vel_error = errors(tracks, truth[0], velocity)
        assert pos_error <= 0.1
        vel_errors.append(vel_error)
    assert np.mean(vel_errors) <= 0.1


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.floats(-0.2, 0.3),
                          st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5),
                                             st.floats(0.0, 0.5)), max_size=6)),
                max_size=25))
def test_tracker_invariants_under_arbitrary_detections(scans):
    tracker = Tracker(max_speed=2.0)
    t = 0.0
    for step, detections in scans:
        t += step  # sometimes backwards
        centres = np.array([d[:2] for d in detections], dtype=float).reshape(-1, 2)
        radii = np.array([d[2] for d in detections], dtype=float)
        tracker.update(t, centres, radii)
        tracks = tracker.tracks()
        assert len(set(tracks.id.tolist())) == len(tracks)
        assert np.all(np.diff(tracks.id) > 0)
        assert np.all(np.isfinite(tracks.position)) and np.all(np.isfinite(tracks.velocity))
        assert np.all(np.linalg.norm(tracks.velocity, axis=1) <= 2.0 + 1e-9)
        assert np.all(tracks.position_sigma > 0.0)
        assert np.all(tracks.age >= 0.0)
        assert not np.any(tracks.moving & ~tracks.confirmed)
        assert len(tracks) <= sum(len(d) for _, d in scans)


def test_warmup_runs():
    warmup()


# Crowds: one 360-beam sensor at 4 Hz, walkers of radius 0.3 m at 1 m/s (bench_crowd's) ---------

CROWD_BEAMS = 360
CROWD_PERIOD = 0.25
WALKER = 0.3


def crowd(scene, duration, *, sensor=(0.0, 0.0), period=CROWD_PERIOD, seed=0, tracker=None):
    """Scan scene(t) -> (positions, radii) from one sensor each period; log as `track`."""
    rng = np.random.default_rng(seed)
    tracker = Tracker() if tracker is None else tracker
    log = []
    for k in range(int(round(duration / period)) + 1):
        t = k * period
        centers, radii = scene(t)
        points, beams, n, inc = scan(sensor, centers, radii, n=CROWD_BEAMS, noise=NOISE,
                                     rng=rng)
        found = detect_objects(points, beams, n, inc, sensor, partial=True)
        tracker.update(t, *found, sensor)
        log.append((t, centers, tracker.tracks(), found[0].shape[0]))
    return tracker, log


def follow(log, velocity, since, *, position_tolerance=0.3, velocity_tolerance=0.35,
           walkers=None):
    """
    Check that from ``since`` [s] on, one moving track follows each walker, always the same.

    velocity(t) -> (W, 2) true velocities; walkers: the rows to check (default: all).
    Returns {walker: track id}.
    """
    owner = {}
    for t, truth, tracks, _ in log:
        if t < since:
            continue
        for w in range(truth.shape[0]) if walkers is None else walkers:
            if w not in owner:  # the nearest track, at the first check
                owner[w] = int(tracks.id[np.argmin(np.linalg.norm(tracks.position - truth[w],
                                                                  axis=1))])
            k = np.flatnonzero(tracks.id == owner[w])
            assert k.shape[0] == 1, (t, w)  # never lost
            k = int(k[0])
            gap = np.linalg.norm(tracks.position[k] - truth[w])
            assert gap <= position_tolerance, (t, w, gap)
            assert tracks.moving[k], (t, w)
            error = np.linalg.norm(tracks.velocity[k] - velocity(t)[w])
            assert error <= velocity_tolerance, (t, w, tracks.velocity[k])
    assert len(set(owner.values())) == len(owner)
    return owner


@pytest.mark.parametrize('angle, sensor', [(np.pi / 2, (3.0, 1.0)), (np.pi / 3, (3.0, 1.0)),
                                           (np.pi / 4, (3.0, 1.0)), (np.pi / 6, (3.0, 0.0))])
def test_crowd_walkers_crossing_keep_their_identities_and_velocities(angle, sensor):
    # Two walkers cross 3 m from the sensor, both at the crossing at t = 2.5 s (their discs
    # overlap: one blob for a moment); one track each, its velocity within 0.35 m/s.
    directions = np.array([[1.0, 0.0], [math.cos(angle), math.sin(angle)]])
    meet = np.array([0.0, 2.0])
    scene = straight(meet - 2.5 * directions, directions)
    _, log = crowd(scene, 5.0, sensor=sensor)
    follow(log, lambda t: directions, since=0.75)


def test_crowd_walkers_side_by_side_are_two_moving_tracks_not_a_wall():
    # Shoulder to shoulder (5 cm apart), walking away from the sensor: one cluster 1.25 m
    # wide, wider than max_diameter.
    velocity = np.array([[0.0, 1.0], [0.0, 1.0]])
    scene = straight([[-0.325, 1.5], [0.325, 1.5]], velocity)
    _, log = crowd(scene, 5.0)
    follow(log, lambda t: velocity, since=0.75)
    assert all(len(tracks) == 2 for t, _, tracks, _ in log if t >= 0.75)


def test_crowd_walker_merging_with_another_and_splitting_again_keeps_its_track():
    # Two walkers converge until shoulder to shoulder (t = 1.5 .. 3 s), walk so and part.
    def positions(t):
        gap = 1.8 - 1.15 * min(t, 1.5) / 1.5 + 1.15 * max(t - 3.0, 0.0) / 1.5
        gap = min(gap, 1.8)
        y = 1.5 + t
        return np.array([[-gap / 2, y], [gap / 2, y]])

    def velocities(t):
        side = -1.15 / 1.5 / 2 if t < 1.5 else (1.15 / 1.5 / 2 if 3.0 <= t < 4.5 else 0.0)
        return np.array([[-side, 1.0], [side, 1.0]])

    _, log = crowd(lambda t: (positions(t), np.full(2, WALKER)), 5.0)
    follow(log, velocities, since=0.75, velocity_tolerance=0.5)


def test_crowd_standing_person_is_no_moving_track_while_a_walker_brushes_past():
    # A person stands at (0, 3); a walker passes shoulder to shoulder with them.
    def scene(t):
        return np.array([[0.0, 3.0], [0.65, 0.5 + t]]), np.full(2, WALKER)

    _, log = crowd(scene, 5.0)
    follow(log, lambda t: np.array([[0.0, 0.0], [0.0, 1.0]]), since=0.75, walkers=[1])
    stander = None
    for t, truth, tracks, _ in log:
        if t < 0.75:
            continue
        gaps = np.linalg.norm(tracks.position - truth[0], axis=1)
        k = int(np.argmin(gaps))
        assert gaps[k] <= 0.1 and tracks.confirmed[k] and not tracks.moving[k], t
        assert stander in (None, int(tracks.id[k]))
        stander = int(tracks.id[k])
