"""orca_nav.core.geometry: angle wrapping, pose composition, point-segment distance."""

import math

import numpy as np
from orca_nav.core import geometry
import pytest


def test_compose_poses_applies_the_frame():
    """A robot at (1, 0) in an odom frame at (2, 3) turned by 90 deg is at (2, 4) globally."""
    xy, yaw = geometry.compose_poses(np.array([[2.0, 3.0, math.pi / 2]]), np.array([[1.0, 0.0]]),
                                     np.array([0.1]))
    np.testing.assert_allclose(xy, [[2.0, 4.0]], atol=1e-12)
    assert yaw[0] == pytest.approx(0.1 + math.pi / 2)


def test_compose_pose_matches_the_vectorised_form_and_wraps():
    """compose_pose equals compose_poses row by row, with the yaw wrapped to [-pi, pi)."""
    rng = np.random.default_rng(0)
    frames = rng.uniform(-5, 5, (20, 3))
    poses = rng.uniform(-5, 5, (20, 3))
    xy, yaw = geometry.compose_poses(frames, poses[:, :2], poses[:, 2])
    for k in range(20):
        one = geometry.compose_pose(frames[k], poses[k])
        np.testing.assert_allclose(one[:2], xy[k], atol=1e-12)
        assert -math.pi <= one[2] < math.pi
        assert math.cos(one[2] - yaw[k]) == pytest.approx(1.0)


def test_compose_pose_refuses_bad_poses():
    """Refuse NaN or a wrong length with a ValueError naming the argument."""
    with pytest.raises(ValueError, match='frame'):
        geometry.compose_pose([0.0, math.nan, 0.0], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match='pose'):
        geometry.compose_pose([0.0, 0.0, 0.0], [0.0, 0.0])


def test_wrap_angle():
    """Angles land in [-pi, pi) and keep their direction."""
    angles = np.array([3 * math.pi, -math.pi / 2, 7.0, -7.0, math.pi])
    out = geometry.wrap_angle(angles)
    assert np.all(out >= -math.pi) and np.all(out < math.pi)
    np.testing.assert_allclose(np.cos(out), np.cos(angles), atol=1e-12)
    np.testing.assert_allclose(np.sin(out), np.sin(angles), atol=1e-12)


def test_point_segment_distance_matches_brute_force():
    """Distances equal the minimum over densely sampled segment points."""
    rng = np.random.default_rng(1)
    points = rng.uniform(-3, 3, (30, 2))
    segments = rng.uniform(-3, 3, (7, 2, 2))
    t = np.linspace(0.0, 1.0, 20001)
    samples = segments[:, None, 0, :] + t[None, :, None] * (segments[:, None, 1, :]
                                                            - segments[:, None, 0, :])
    brute = np.linalg.norm(points[:, None, None, :] - samples[None], axis=-1).min(axis=2)
    np.testing.assert_allclose(geometry.point_segment_distance(points, segments), brute,
                               atol=1e-3)


def test_convex_gap_matches_brute_force_on_random_rectangles():
    """Apart: the distance of the densely sampled outlines; overlapping: negative."""
    rng = np.random.default_rng(3)
    rect = np.array([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]])
    for _ in range(50):
        a = geometry.placed_polygon(rect, rng.uniform([-1, -1, -3], [1, 1, 3]))
        b = geometry.placed_polygon(rect, rng.uniform([-1, -1, -3], [1, 1, 3]))
        gap = geometry.convex_gap(a, b)
        t = np.linspace(0.0, 1.0, 400)[:, None]
        outline_b = np.concatenate([p + t * (q - p) for p, q in geometry.polygon_edges(b)])
        apart = geometry.point_segment_distance(outline_b, geometry.polygon_edges(a)).min()
        overlap = geometry.points_in_polygon(outline_b, a).any()
        if overlap:
            assert gap < 0.0
        else:
            assert gap == pytest.approx(apart, abs=1e-3)


def test_polygon_segments_gap_is_convex_gap_of_each_segment():
    """Each segment as a polygon of two vertices: the same signed gap as convex_gap."""
    rng = np.random.default_rng(5)
    rect = np.array([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]])
    for _ in range(20):
        polygon = geometry.placed_polygon(rect, rng.uniform([-1, -1, -3], [1, 1, 3]))
        segments = rng.uniform(-1.5, 1.5, (30, 2, 2))
        expected = [geometry.convex_gap(polygon, s) for s in segments]
        np.testing.assert_allclose(geometry.polygon_segments_gap(polygon, segments), expected,
                                   atol=1e-12)
