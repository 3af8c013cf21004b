"""
People of every common size, fast and turning, seen by a 360-beam lidar (the node's tuning).

CrowdNav++'s randomised humans have radii 0.3-0.5 m and speeds 0.5-1.5 m/s and change goals;
before track_max_diameter admitted a 0.5 m-radius person (1.0 m wide), such a person was a
wall until very near, then a new track, clipped to radius 0.4 m.
"""

import math

import numpy as np
from orca_nav.control.people import PeopleConfig, PeopleTracker
from orca_nav.core.perception.detection import Detector
from orca_nav.core.perception.raycast import cast_rays
from orca_nav.core.perception.scan import scan_to_points
import pytest

BEAMS = 360          # 1 degree beams, as the benchmarks' lidar
PERIOD = 0.1         # [s]
NOISE = 0.01         # [m] range noise sigma
CONFIG = PeopleConfig()


def scan(sensor, centers=None, radii=None, walls=None, *, rng=None):
    """Points, beams, n_beams and angle increment of a full-circle scan from sensor (x, y)."""
    inc = 2.0 * math.pi / BEAMS
    angles = -math.pi + np.arange(BEAMS) * inc
    if walls is not None:
        walls = np.asarray(walls, dtype=float).reshape(-1, 2, 2)
    ranges = cast_rays(np.asarray(sensor, dtype=float), angles, 10.0, walls, centers, radii)
    if rng is not None:
        ranges = np.where(np.isfinite(ranges), ranges + rng.normal(0.0, NOISE, BEAMS), ranges)
    points, beams = scan_to_points(ranges, -math.pi, inc, 0.05, 10.0,
                                   [sensor[0], sensor[1], 0.0])
    return points, beams, BEAMS, inc


def detect(sensor, centers=None, radii=None, walls=None, seed=0):
    """Run the node's detector (PeopleConfig defaults) on a noisy synthetic scan."""
    detector = Detector(max_diameter=CONFIG.max_diameter, split_depth=CONFIG.split_depth)
    points, beams, n, inc = scan(sensor, centers, radii, walls,
                                 rng=np.random.default_rng(seed))
    return detector(points, beams, n, inc, sensor)


def run(scene, duration, sensor=(0.0, 0.0), seed=0):
    """Feed the node's tracker (PeopleConfig defaults) a scan every PERIOD; log the tracks."""
    rng = np.random.default_rng(seed)
    people = PeopleTracker(CONFIG)
    log = []
    for k in range(int(round(duration / PERIOD)) + 1):
        t = k * PERIOD
        centers, radii, velocities = scene(t)
        points, beams, n, inc = scan(sensor, centers, radii, rng=rng)
        found = people.detect(points, beams, n, inc, sensor, partial=True)
        people.tracker.update(t, *found, sensor)
        log.append((t, centers, velocities, people.tracker.tracks(), people.moving(t)))
    return log


@pytest.mark.parametrize('radius', [0.3, 0.4, 0.45, 0.5])
@pytest.mark.parametrize('distance', [1.0, 2.0, 3.5, 5.0])
def test_person_of_any_radius_up_to_half_a_metre_is_one_detection_of_its_size(
        radius, distance):
    for seed, bearing in enumerate([0.3, 1.9, -2.6]):
        centre = distance * np.array([math.cos(bearing), math.sin(bearing)])
        centres, radii = detect((0.0, 0.0), [centre], [radius], seed=seed)
        assert centres.shape == (1, 2), (radius, distance, bearing)
        assert np.linalg.norm(centres[0] - centre) < 0.06
        assert radii[0] == pytest.approx(radius, abs=0.05)


@pytest.mark.parametrize('length', [0.9, 1.05, 3.0])
@pytest.mark.parametrize('distance', [1.5, 3.0, 5.0])
@pytest.mark.parametrize('tilt', [0.0, 0.3, 0.6])   # [rad] from facing the sensor square on
def test_straight_wall_wider_than_a_box_is_no_person(length, distance, tilt):
    # As wide as a large person (or wider), but flat: a wall.
    half = 0.5 * length * np.array([-math.sin(tilt), math.cos(tilt)])
    middle = np.array([distance, 0.0])
    centres, _ = detect((0.0, 0.0), walls=[[middle - half, middle + half]])
    assert centres.shape[0] == 0, (length, distance, tilt, centres)


def test_concave_corner_as_wide_as_a_person_is_no_person():
    # An inside corner (opening toward the sensor) 1 m across: concave, so not a person
    # (its two flat halves may still be split off as objects narrower than 0.8 m).
    centres, _ = detect((0.0, 0.0), walls=[[[3.3, -0.5], [3.0, 0.0]], [[3.0, 0.0], [3.3, 0.5]]])
    assert not any(np.linalg.norm(c - [3.15, 0.0]) < 0.3 for c in centres)


def _turning(radius, speed, turn_at, start, heading, turn):
    """Return a walker going straight, then turning by ``turn`` [rad] at ``turn_at`` [s]."""
    d0 = np.array([math.cos(heading), math.sin(heading)])
    d1 = np.array([math.cos(heading + turn), math.sin(heading + turn)])
    start = np.asarray(start, dtype=float)

    def scene(t):
        if t <= turn_at:
            p, v = start + speed * t * d0, speed * d0
        else:
            p, v = start + speed * (turn_at * d0 + (t - turn_at) * d1), speed * d1
        return p[None], np.array([radius]), v[None]
    return scene


def _follow(log, since, until=math.inf, radius=None, tolerance=0.35):
    """One moving track (always the same) within 0.3 m, velocity within ``tolerance``."""
    owner = None
    for t, truth, velocity, tracks, moving in log:
        if not since <= t <= until:
            continue
        k = np.flatnonzero(np.linalg.norm(moving.position - truth[0], axis=1) < 0.3)
        assert k.shape[0] == 1, (t, moving)
        k = int(k[0])
        owner = moving.id[k] if owner is None else owner
        assert moving.id[k] == owner, t
        assert np.linalg.norm(moving.velocity[k] - velocity[0]) <= tolerance, (t, moving)
        if radius is not None:
            assert moving.radius[k] == pytest.approx(radius, abs=0.06), t
    return owner


@pytest.mark.parametrize('radius', [0.3, 0.5])
@pytest.mark.parametrize('turn', [math.pi / 2, -2.0])
def test_fast_large_walker_who_turns_is_one_moving_track_with_its_velocity(radius, turn):
    # 1.5 m/s (CrowdNav++'s fastest), 3-4 m from the sensor, a sharp turn at t = 2 s
    # (a goal change): moving within 0.5 s of being seen, one track throughout, its
    # velocity back within 0.35 m/s 0.7 s after the turn, its radius its own.
    scene = _turning(radius, 1.5, 2.0, (-1.5, 3.5), -0.3, turn)
    log = run(scene, 4.0)
    _follow(log, 0.5, 2.0, radius=radius)
    owner = _follow(log, 0.5, 4.0, tolerance=2.0 * 1.5)   # never lost through the turn
    assert _follow(log, 2.7, 4.0, radius=radius) == owner


@pytest.mark.parametrize('radius', [0.3, 0.5])
def test_two_large_people_side_by_side_are_two_moving_tracks(radius):
    # Shoulder to shoulder (5 cm apart), walking away from the sensor from 1.5 m to 5 m: one
    # cluster up to 2 m wide.
    gap = 2.0 * radius + 0.05
    velocity = np.array([[0.2, 1.0], [0.2, 1.0]])
    starts = np.array([[-gap / 2, 1.5], [gap / 2, 1.5]])

    def scene(t):
        return starts + velocity * t, np.full(2, radius), velocity

    log = run(scene, 3.5)
    for t, truth, _, _, moving in log:
        if t < 0.5:
            continue
        assert len(moving) == 2, (t, moving)
        for w in range(2):
            d = np.linalg.norm(moving.position - truth[w], axis=1)
            assert d.min() < 0.3, (t, w, moving)
            assert np.linalg.norm(moving.velocity[np.argmin(d)] - velocity[w]) < 0.35, t


@pytest.mark.parametrize('radius', [0.3, 0.5])
def test_person_appearing_near_the_sensor_is_a_moving_track_within_half_a_second(radius):
    # A person appears (a new person in CrowdNav++'s replacements, or one stepping out from
    # a door) 1.2 m off and walks past at 1.5 m/s.
    velocity = np.array([1.5, 0.0])

    def scene(t):
        return (np.array([[-0.9, 1.2]]) + velocity * t, np.array([radius]), velocity[None])

    log = run(scene, 1.2)
    _follow(log, 0.5, radius=radius, tolerance=0.45)
