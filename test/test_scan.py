"""Tests for orca_nav.core.perception.scan, on scans synthesised with its raycast module."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from orca_nav.core.geometry import compose_pose
from orca_nav.core.geometry import point_segment_distance as distances_to_segments
from orca_nav.core.perception.raycast import cast_rays, polygon_edges
from orca_nav.core.perception.scan import (MIN_TRIM_SINE, recheck_segments, scan_to_points,
                                           scan_to_segments)
import pytest

N_BEAMS = 720
RANGE_MIN = 0.05
RANGE_MAX = 10.0
TOL = 0.05  # default split_tolerance


def synth_scan(pose, segments=None, centers=None, radii=None, n=N_BEAMS, fov=2 * math.pi,
               noise=0.0, seed=0, range_max=RANGE_MAX):
    """Ranges as a sensor at pose (x, y, yaw) would report them; angle_min = -fov / 2."""
    inc = fov / n
    angle_min = -math.pi if fov >= 2 * math.pi else -fov / 2
    angles = pose[2] + angle_min + np.arange(n) * inc
    ranges = cast_rays(np.asarray(pose[:2], dtype=float), angles, range_max, segments,
                       centers, radii)
    if noise:
        ranges = ranges + np.random.default_rng(seed).normal(0.0, noise, n)
    return ranges, angle_min, inc


def segments_of(ranges, angle_min, inc, pose, **kwargs):
    """scan_to_segments with the module defaults for the range limits."""
    return scan_to_segments(ranges, angle_min, inc, RANGE_MIN, RANGE_MAX, pose, **kwargs)


def point_segment_distance(points, seg):
    """Distance of (K, 2) points to the segment seg (2, 2)."""
    p, q = seg
    e = q - p
    s = np.clip((points - p) @ e / (e @ e), 0.0, 1.0)
    return np.linalg.norm(points - (p + s[:, None] * e), axis=1)


def on_segment(found, true_seg, tol):
    """Whether the found segment (2, 2) lies on true_seg within tol (both ends and midpoint)."""
    pts = np.vstack([found, found.mean(axis=0)])
    return bool(np.all(point_segment_distance(pts, np.asarray(true_seg, dtype=float)) <= tol))


def coverage(found_segs, true_seg):
    """Fraction of true_seg's length covered by the found segments' projections onto it."""
    p, q = np.asarray(true_seg, dtype=float)
    e = q - p
    intervals = sorted(tuple(sorted(np.clip((s - p) @ e / (e @ e), 0.0, 1.0)))
                       for s in found_segs)
    covered, reach = 0.0, 0.0
    for lo, hi in intervals:
        lo = max(lo, reach)
        if hi > lo:
            covered += hi - lo
            reach = hi
    return covered


def test_wall_ahead_gives_one_segment_on_the_wall():
    wall = np.array([[[2.0, -2.0], [2.0, 2.0]]])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, wall)
    segs = segments_of(ranges, angle_min, inc, pose)
    assert segs.shape == (1, 2, 2)
    np.testing.assert_allclose(segs[0, :, 0], 2.0, atol=1e-9)
    # End points at the visible extent: within one beam spacing (~3.5 cm at the ends).
    np.testing.assert_allclose(segs[0], [[2.0, -2.0], [2.0, 2.0]], atol=0.04)


def test_wall_in_global_frame_with_pose_and_mount_offset():
    robot = np.array([1.0, -0.5, 0.4])
    mount = np.array([0.15, 0.05, -0.3])
    pose = compose_pose(robot, mount)
    wall = np.array([[3.0, -4.0], [4.0, 3.0]])
    ranges, angle_min, inc = synth_scan(pose, wall[None])
    segs = segments_of(ranges, angle_min, inc, pose)
    assert segs.shape == (1, 2, 2)
    assert on_segment(segs[0], wall, 1e-6)
    assert coverage(segs, wall) > 0.98


def test_compose_pose_matches_hand_computation():
    np.testing.assert_allclose(compose_pose([1.0, 2.0, math.pi / 2], [0.5, 0.0, 0.0]),
                               [1.0, 2.5, math.pi / 2], atol=1e-12)
    np.testing.assert_allclose(compose_pose([1.0, 2.0, math.pi / 2], [0.0, 0.5, 0.0]),
                               [0.5, 2.0, math.pi / 2], atol=1e-12)
    # Yaw wraps to [-pi, pi).
    out = compose_pose([0.0, 0.0, 3.0], [0.0, 0.0, 0.5])
    assert out[2] == pytest.approx(3.5 - 2 * math.pi)
    np.testing.assert_allclose(compose_pose([1.0, 2.0, 0.3], np.zeros(3)), [1.0, 2.0, 0.3])


def box(x0, y0, x1, y1):
    """Counter-clockwise corners of an axis-aligned box."""
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])


def assert_segments_on_faces(segs, faces, tol):
    """Every segment lies on one of the faces; returns the face index of each."""
    which = []
    for seg in segs:
        hits = [k for k, face in enumerate(faces) if on_segment(seg, face, tol)]
        assert hits, 'segment %s lies on no face' % (seg,)
        which.append(hits[0])
    return which


def test_closed_room_gives_one_segment_per_wall():
    # No range jump anywhere: one cluster that closes on itself across the scan's seam.
    room = box(-3.0, -2.0, 4.0, 2.5)
    walls = polygon_edges([room])
    pose = np.array([0.3, -0.2, 1.0])
    ranges, angle_min, inc = synth_scan(pose, walls)
    assert np.all(np.isfinite(ranges))
    segs = segments_of(ranges, angle_min, inc, pose)
    assert len(segs) == 4
    which = assert_segments_on_faces(segs, walls, 0.01)
    assert sorted(which) == [0, 1, 2, 3]
    for k in range(4):
        assert coverage(segs[np.array(which) == k], walls[k]) > 0.97


def test_box_seen_from_a_corner_gives_two_or_three_segments():
    corners = box(2.0, 1.0, 3.0, 2.0)
    faces = polygon_edges([corners])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, faces)
    segs = segments_of(ranges, angle_min, inc, pose)
    assert 2 <= len(segs) <= 3
    which = assert_segments_on_faces(segs, faces, TOL)
    # The two faces towards the sensor (bottom y=1 and left x=2) are both found, nearly whole.
    assert set(which) == {0, 3}
    assert coverage(segs[np.array(which) == 0], faces[0]) > 0.9
    assert coverage(segs[np.array(which) == 3], faces[3]) > 0.9


def test_box_seen_from_the_front_gives_one_segment():
    corners = box(2.0, -0.5, 3.0, 0.5)
    faces = polygon_edges([corners])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, faces)
    segs = segments_of(ranges, angle_min, inc, pose)
    assert len(segs) == 1
    assert assert_segments_on_faces(segs, faces, 1e-6) == [3]  # the face x = 2
    assert coverage(segs, faces[3]) > 0.95


@pytest.mark.parametrize('seed', range(5))
def test_noisy_box_in_a_room_every_segment_on_a_wall(seed):
    walls = polygon_edges([box(-4.0, -3.0, 5.0, 4.0), box(1.0, 1.0, 1.6, 1.6),
                           box(-2.0, -2.0, -1.2, -1.5)])
    rng = np.random.default_rng(seed)
    pose = np.array([*rng.uniform(-0.5, 0.5, 2), rng.uniform(-math.pi, math.pi)])
    ranges, angle_min, inc = synth_scan(pose, walls, noise=0.01, seed=seed)
    segs = segments_of(ranges, angle_min, inc, pose,
                       robot_positions=[pose[:2]], robot_radii=[0.2])
    # Visible faces: 4 room walls, 2 faces of each box, give or take a corner piece.
    assert 8 <= len(segs) <= 14
    assert_segments_on_faces(segs, walls, TOL + 0.03)


def test_other_robot_in_view_gives_no_segment():
    pose = np.zeros(3)
    centers = np.array([[2.0, 0.5]])
    radii = np.array([0.3])
    ranges, angle_min, inc = synth_scan(pose, None, centers, radii)
    # Unfiltered, the robot's disc does produce segments (so the filter is what removes them).
    assert len(segments_of(ranges, angle_min, inc, pose)) >= 1
    robots = np.array([[0.0, 0.0], [2.0, 0.5]])
    segs = segments_of(ranges, angle_min, inc, pose, robot_positions=robots,
                       robot_radii=[0.2, 0.3])
    assert segs.shape == (0, 2, 2)


def test_robot_in_front_of_wall_leaves_only_wall_segments():
    pose = np.zeros(3)
    wall = np.array([[4.0, -3.0], [4.0, 3.0]])
    centers = np.array([[2.0, 0.0]])
    ranges, angle_min, inc = synth_scan(pose, wall[None], centers, [0.3])
    segs = segments_of(ranges, angle_min, inc, pose, robot_positions=centers,
                       robot_radii=[0.3])
    # The robot's shadow splits the wall into two pieces; nothing lies near the robot.
    assert len(segs) == 2
    for seg in segs:
        assert on_segment(seg, wall, 1e-6)
        assert point_segment_distance(centers, seg)[0] > 1.0


def test_returns_on_own_disc_and_margin_are_dropped():
    pose = np.zeros(3)
    stub = np.array([[[0.25, -0.1], [0.25, 0.1]]])  # within 0.2 + 0.1 of the robot's centre
    ranges, angle_min, inc = synth_scan(pose, stub)
    assert len(segments_of(ranges, angle_min, inc, pose)) == 1
    segs = segments_of(ranges, angle_min, inc, pose, robot_positions=[[0.0, 0.0]],
                       robot_radii=[0.2])
    assert segs.shape == (0, 2, 2)
    # With no margin, the stub (0.25 > 0.2) is an obstacle again.
    segs = segments_of(ranges, angle_min, inc, pose, robot_positions=[[0.0, 0.0]],
                       robot_radii=[0.2], robot_margin=0.0)
    assert len(segs) == 1


@pytest.mark.parametrize('ranges', [
    np.full(N_BEAMS, np.inf),
    np.full(N_BEAMS, -np.inf),
    np.full(N_BEAMS, np.nan),
    np.empty(0),
    np.where(np.arange(N_BEAMS) % 2, np.nan, np.inf),
    np.where(np.arange(N_BEAMS) % 3, np.nan, -1.0),  # negative: below range_min
    np.full(N_BEAMS, 50.0),  # beyond range_max
    np.full(N_BEAMS, 0.01),  # below range_min
])
def test_scans_without_valid_returns_give_no_segments(ranges):
    segs = segments_of(ranges, -math.pi, 2 * math.pi / N_BEAMS, np.zeros(3))
    assert segs.shape == (0, 2, 2)
    assert segs.dtype == np.float64


def test_nan_riddled_wall_still_lies_on_the_wall():
    wall = np.array([[2.0, -2.0], [2.0, 2.0]])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, wall[None])
    rng = np.random.default_rng(3)
    ranges[rng.random(N_BEAMS) < 0.3] = np.nan
    ranges[rng.random(N_BEAMS) < 0.05] = 0.0
    segs = segments_of(ranges, angle_min, inc, pose)
    assert 1 <= len(segs) <= 2
    for seg in segs:
        assert on_segment(seg, wall, 1e-6)
    assert coverage(segs, wall) > 0.9


@pytest.mark.parametrize('seed', range(10))
def test_noise_does_not_shatter_a_wall(seed):
    # A 4 m wall 2 m ahead, range noise sigma 1 cm.
    wall = np.array([[2.0, -2.0], [2.0, 2.0]])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, wall[None], noise=0.01, seed=seed)
    segs = segments_of(ranges, angle_min, inc, pose)
    assert 1 <= len(segs) <= 2
    for seg in segs:
        assert on_segment(seg, wall, 0.05)
        # End points on the least-squares line: much closer to the wall than the noisy end
        # returns themselves (sigma 0.7 cm across the wall at the 45 degree ends).
        assert np.all(np.abs(seg[:, 0] - 2.0) < 0.01)
    assert coverage(segs, wall) > 0.95


def test_wall_across_the_seam_of_a_full_scan_is_one_segment():
    # Beam 0 points at -x: the wall behind is seen at the first and the last beams.
    wall = np.array([[-2.0, 1.5], [-2.0, -1.5]])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, wall[None])
    assert np.isfinite(ranges[0]) and np.isfinite(ranges[-1])
    segs = segments_of(ranges, angle_min, inc, pose)
    assert len(segs) == 1
    assert on_segment(segs[0], wall, 1e-6)
    assert coverage(segs, wall) > 0.97


def test_partial_scan_does_not_wrap():
    # A 180 degree scan: beams 0 and -1 are not neighbours, two separate walls stay separate.
    walls = np.array([[[-1.0, -2.0], [1.0, -2.0]], [[-1.0, 2.0], [1.0, 2.0]]])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, walls, n=360, fov=math.pi)
    segs = segments_of(ranges, angle_min, inc, pose)
    assert len(segs) == 2
    assert_segments_on_faces(segs, walls, 1e-6)


def test_negative_angle_increment_gives_the_same_segments():
    faces = polygon_edges([box(2.0, 1.0, 3.0, 2.0)])
    pose = np.array([0.0, 0.0, 0.2])
    ranges, angle_min, inc = synth_scan(pose, faces)
    forward = segments_of(ranges, angle_min, inc, pose)
    backward = segments_of(ranges[::-1], angle_min + (N_BEAMS - 1) * inc, -inc, pose)
    assert len(forward) == len(backward) == 2
    # Same segments, reversed order and direction.
    np.testing.assert_allclose(backward[::-1, ::-1], forward, atol=1e-9)


def test_doorway_splits_the_wall_unless_jump_distance_bridges_it():
    wall = np.array([[[2.0, -2.0], [2.0, -0.4]], [[2.0, 0.4], [2.0, 2.0]]])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, wall)
    segs = segments_of(ranges, angle_min, inc, pose)
    assert len(segs) == 2
    assert np.all(np.abs(segs[:, :, 1]).min(axis=1) > 0.35)  # the doorway stays open
    bridged = segments_of(ranges, angle_min, inc, pose, jump_distance=1.0)
    assert len(bridged) == 1
    np.testing.assert_allclose(np.sort(bridged[0, :, 1]), [-2.0, 2.0], atol=0.04)


def test_dropped_beams_split_the_wall_only_when_the_opening_is_wide():
    # A wall whose middle beams report nothing: the returns either side of the hole are joined
    # while they are closer than jump_distance (0.3 m) and split when farther.
    wall = np.array([[[2.0, -2.0], [2.0, 2.0]]])
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, wall)
    centre = N_BEAMS // 2
    few = ranges.copy()
    few[centre - 3:centre + 3] = np.nan  # ~0.12 m of wall unseen
    assert len(segments_of(few, angle_min, inc, pose)) == 1
    many = ranges.copy()
    many[centre - 12:centre + 12] = np.nan  # ~0.42 m of wall unseen
    segs = segments_of(many, angle_min, inc, pose)
    assert len(segs) == 2
    assert np.all(np.abs(segs[:, :, 1]).min(axis=1) > 0.18)  # the hole stays open


def wall_with_offsets(offsets):
    """
    Ranges of the wall x = 2, |y| <= 2 seen from the origin, with some returns moved off it.

    offsets : dict beam index (relative to the first / last wall beam when negative) -> x offset
    """
    wall = np.array([[[2.0, -2.0], [2.0, 2.0]]])
    ranges, angle_min, inc = synth_scan(np.zeros(3), wall)
    on_wall = np.flatnonzero(np.isfinite(ranges))
    angles = angle_min + np.arange(N_BEAMS) * inc
    for k, dx in offsets.items():
        beam = on_wall[k]
        ranges[beam] = (2.0 + dx) / math.cos(angles[beam])
    return ranges, angle_min, inc


def test_merge_undoes_a_split_caused_by_tilted_end_points():
    # End returns offset to opposite sides tilt the chord, so the end-point fit splits near
    # the ends; the union still fits one least-squares line within split_tolerance (0.05).
    ranges, angle_min, inc = wall_with_offsets({0: 0.045, 5: -0.03, -1: -0.045, -6: 0.03})
    segs = segments_of(ranges, angle_min, inc, np.zeros(3))
    assert len(segs) == 1
    assert np.all(np.abs(segs[0, :, 0] - 2.0) < 0.01)
    # The ends are the end returns projected onto the (nearly x = 2) line.
    points, _ = scan_to_points(ranges, angle_min, inc, RANGE_MIN, RANGE_MAX, np.zeros(3))
    np.testing.assert_allclose(segs[0, :, 1], points[[0, -1], 1], atol=0.005)


def test_mixed_pixel_at_a_wall_end_is_not_a_segment():
    # The last return on the wall's edge is a mixed pixel 0.2 m behind the wall (within
    # jump_distance): a 2-return piece, dropped by min_points, not a stub off the wall.
    ranges, angle_min, inc = wall_with_offsets({-1: 0.2})
    segs = segments_of(ranges, angle_min, inc, np.zeros(3))
    assert len(segs) == 1
    np.testing.assert_allclose(segs[0, :, 0], 2.0, atol=1e-6)


def test_min_points_drops_tiny_clusters():
    ranges = np.full(N_BEAMS, np.inf)
    ranges[100:102] = 2.0  # two returns
    args = (ranges, -math.pi, 2 * math.pi / N_BEAMS, RANGE_MIN, RANGE_MAX, np.zeros(3))
    assert scan_to_segments(*args).shape == (0, 2, 2)
    assert scan_to_segments(*args, min_points=2).shape == (1, 2, 2)
    ranges[102] = 2.0
    assert scan_to_segments(*args).shape == (1, 2, 2)
    assert scan_to_segments(*args, min_points=4).shape == (0, 2, 2)


def test_smaller_split_tolerance_follows_a_pillar_more_closely():
    centre, radius = np.array([3.0, 0.0]), 1.0
    pose = np.zeros(3)
    ranges, angle_min, inc = synth_scan(pose, None, centre[None], [radius])
    counts = []
    for tol in (0.1, 0.02, 0.005):
        segs = segments_of(ranges, angle_min, inc, pose, split_tolerance=tol)
        counts.append(len(segs))
        # Chords of the circle: end points within tol of it, midpoints inside it by <= tol.
        ends = np.linalg.norm(segs.reshape(-1, 2) - centre, axis=1)
        mids = np.linalg.norm(segs.mean(axis=1) - centre, axis=1)
        assert np.all(np.abs(ends - radius) <= tol + 1e-9)
        assert np.all(radius - mids <= 2 * tol + 1e-9)
    assert counts[0] < counts[1] < counts[2]


def test_scan_to_points_places_returns_in_the_global_frame():
    pose = np.array([1.0, 2.0, math.pi / 2])
    ranges = np.array([1.0, np.nan, 2.0, 100.0])
    points, beams = scan_to_points(ranges, 0.0, math.pi / 2, 0.1, 10.0, pose)
    np.testing.assert_array_equal(beams, [0, 2])
    np.testing.assert_allclose(points, [[1.0, 3.0], [1.0, 0.0]], atol=1e-12)


@pytest.mark.parametrize('bad', [
    {'angle_increment': 0.0},
    {'angle_increment': np.nan},
    {'angle_min': np.inf},
    {'range_max': np.inf},
    {'range_min': np.nan},
    {'range_min': 5.0, 'range_max': 1.0},
    {'sensor_pose': [0.0, 0.0]},
    {'sensor_pose': [0.0, np.nan, 0.0]},
    {'robot_positions': [[0.0, 0.0]], 'robot_radii': None},
    {'robot_positions': [[0.0, 0.0]], 'robot_radii': [0.2, 0.3]},
    {'robot_positions': [[np.nan, 0.0]], 'robot_radii': [0.2]},
    {'robot_margin': -0.1},
    {'split_tolerance': 0.0},
    {'jump_distance': -1.0},
    {'min_points': 1},
    {'min_points': 2.5},
])
def test_bad_parameters_raise_value_error(bad):
    args = {'ranges': np.ones(8), 'angle_min': 0.0, 'angle_increment': 0.1, 'range_min': 0.1,
            'range_max': 10.0, 'sensor_pose': np.zeros(3)}
    args.update(bad)
    with pytest.raises(ValueError):
        scan_to_segments(**args)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(ranges=st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                 st.floats(0.0, 12.0)), max_size=300),
       angle_min=st.floats(-4.0, 4.0),
       angle_increment=st.one_of(st.floats(-0.1, -1e-4), st.floats(1e-4, 0.1)),
       pose=st.tuples(st.floats(-100, 100), st.floats(-100, 100), st.floats(-4, 4)),
       tol=st.floats(0.001, 0.5), min_points=st.integers(2, 6))
def test_garbage_scans_give_finite_segments_near_returns(ranges, angle_min, angle_increment,
                                                         pose, tol, min_points):
    ranges = np.array(ranges, dtype=np.float64)
    segs = scan_to_segments(ranges, angle_min, angle_increment, RANGE_MIN, RANGE_MAX, pose,
                            split_tolerance=tol, min_points=min_points)
    assert segs.dtype == np.float64 and segs.ndim == 3 and segs.shape[1:] == (2, 2)
    assert np.all(np.isfinite(segs))
    if len(segs):
        # Every end point is within split_tolerance of a kept return.
        points, _ = scan_to_points(ranges, angle_min, angle_increment, RANGE_MIN, RANGE_MAX,
                                   pose)
        ends = segs.reshape(-1, 2)
        gap = np.linalg.norm(ends[:, None, :] - points[None, :, :], axis=2).min(axis=1)
        assert np.all(gap <= tol * (1 + 1e-9) + 1e-9)


def _recheck_brute(old, new, ranges, angle_min, inc, range_min, range_max, sensor, spacing,
                   max_samples, cover_tol, seen_tol):
    """recheck_segments written out point by point with numpy (every sample, no early exit)."""
    covered, still, sighted, ends = [], [], [], []
    for a, b in old:
        count = int(np.clip(math.ceil(np.hypot(*(b - a)) / spacing) + 1, 2, max_samples))
        points = a + np.linspace(0.0, 1.0, count)[:, None] * (b - a)
        # Trim: from each end, the crossing of each sample's beam with the segment while the
        # beam reads past it (and crosses at MIN_TRIM_SINE or steeper).
        crossings = [_free_crossing_brute(p, a, b, ranges, angle_min, inc, range_min,
                                          range_max, sensor, seen_tol) for p in points]
        t0 = t1 = None
        for u in crossings:
            if u is None:
                break
            t0 = max(t0 or 0.0, u)
        for u in crossings[::-1]:
            if u is None:
                break
            t1 = min(1.0 if t1 is None else t1, u)
        t0, t1 = t0 or 0.0, 1.0 if t1 is None else t1
        ends.append((t0, t1) if t0 < t1 else (0.0, 1.0))
        if len(new):
            covered.append(bool((distances_to_segments(points, new).min(axis=1)
                                 <= cover_tol).all()))
        else:
            covered.append(False)
        seen = through = 0
        for p in points:
            index = _beam_index(p, angle_min, inc, len(ranges), range_min, range_max, sensor)
            if index is None:
                continue
            dist = np.hypot(*(p - sensor[:2]))
            reading = ranges[index]
            measured = np.inf if (reading == np.inf or reading > range_max) else reading
            seen += bool(abs(measured - dist) <= seen_tol)
            through += bool(measured > dist + seen_tol)
        still.append(seen >= through)
        sighted.append(seen > 0)
    return np.array(covered), np.array(still), np.array(sighted), np.array(ends)


def _beam_index(p, angle_min, inc, n_beams, range_min, range_max, sensor):
    """Return the beam nearest point p, None when p is out of range or field of view."""
    rel = p - sensor[:2]
    if not range_min <= np.hypot(*rel) <= range_max:
        return None
    angle = math.atan2(rel[1], rel[0]) - sensor[2] - angle_min
    index = int(np.rint((angle * math.copysign(1.0, inc)) % (2 * math.pi) / abs(inc)))
    if n_beams * abs(inc) >= 2 * math.pi - 1e-6:
        index %= n_beams
    return index if 0 <= index < n_beams else None


def _free_crossing_brute(p, a, b, ranges, angle_min, inc, range_min, range_max, sensor,
                         seen_tol):
    """Where p's beam crosses segment ab (clamped to [0, 1]) if it reads past it, else None."""
    index = _beam_index(p, angle_min, inc, len(ranges), range_min, range_max, sensor)
    if index is None:
        return None
    theta = sensor[2] + angle_min + index * inc
    ray = np.array([math.cos(theta), math.sin(theta)])
    # sensor + r ray = a + u (b - a)
    matrix = np.column_stack([ray, a - b])
    length = np.hypot(*(b - a))
    if abs(np.linalg.det(matrix)) < MIN_TRIM_SINE * length:
        return None
    r, u = np.linalg.solve(matrix, a - sensor[:2])
    reading = ranges[index]
    measured = np.inf if (reading == np.inf or reading > range_max) else reading
    if r <= 0.0 or not measured > r + seen_tol:
        return None
    return float(np.clip(u, 0.0, 1.0))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.booleans(), st.booleans())
def test_recheck_segments_matches_point_by_point(seed, full, reverse):
    """Remembered segments covered / still there / sighted / trimmed as point by point."""
    rng = np.random.default_rng(seed)
    room = np.array([[-3.0, -2.0], [3.0, -2.0], [3.0, 2.0], [-3.0, 2.0]])
    box = rng.uniform(-1.5, 1.5, 2) + np.array([[0, 0], [0.4, 0], [0.4, 0.3], [0, 0.3]])
    edges = np.concatenate([polygon_edges(room), polygon_edges(box)])
    sensor = np.array([rng.uniform(-2.5, 2.5), rng.uniform(-1.5, 1.5), rng.uniform(-3, 3)])
    span = 2 * math.pi if full else math.pi
    beams = 360 if full else 181
    inc = span / beams if full else span / (beams - 1)
    angle_min = -span / 2
    if reverse:
        angle_min, inc = -angle_min, -inc
    angles = sensor[2] + angle_min + inc * np.arange(beams)
    ranges = cast_rays(sensor[:2], angles, 5.0, edges, None, None)
    ranges = ranges + rng.normal(0.0, 0.01, beams)
    ranges[rng.random(beams) < 0.05] = np.nan
    ranges[rng.random(beams) < 0.05] = np.inf
    new = scan_to_segments(ranges, angle_min, inc, 0.05, 5.0, sensor)
    # Remembered: some of the true walls (seen again), some jittered copies, some phantoms.
    old = np.concatenate([
        edges[rng.permutation(len(edges))[:4]],
        new + rng.normal(0.0, 0.03, new.shape),
        rng.uniform(-3.0, 3.0, (6, 2, 2))])
    args = (old, new, ranges, angle_min, inc, 0.05, 5.0, sensor, 0.05, 40, 0.05, 0.1)
    covered, still, sighted, ends = recheck_segments(*args)
    want_covered, want_still, want_sighted, want_ends = _recheck_brute(*args)
    np.testing.assert_array_equal(covered, want_covered)
    np.testing.assert_array_equal(still, want_still)
    np.testing.assert_array_equal(sighted, want_sighted)
    np.testing.assert_allclose(ends, want_ends, atol=1e-9)
    assert not recheck_segments(old, new[:0], *args[2:])[0].any()
