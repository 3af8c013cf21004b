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


def test_point_segment_distance_is_numpys_formula_to_the_bit_and_keeps_nan():
    """The compiled loop gives what the vectorised formula gives; a NaN segment gives NaN."""
    rng = np.random.default_rng(2)
    points = rng.normal(0.0, 3.0, (40, 2))
    segments = rng.normal(0.0, 3.0, (9, 2, 2))
    segments[0, 1] = segments[0, 0]  # length 0: the distance to its point
    a = segments[None, :, 0, :]
    ab = segments[None, :, 1, :] - a
    ap = points[:, None, :] - a
    t = np.clip((ap * ab).sum(axis=-1) / np.maximum((ab * ab).sum(axis=-1), 1e-18), 0.0, 1.0)
    expected = np.linalg.norm(ap - t[..., None] * ab, axis=-1)
    assert np.array_equal(geometry.point_segment_distance(points, segments), expected)
    segments[1, 0, 0] = np.nan
    assert np.isnan(geometry.point_segment_distance(points, segments)[:, 1]).all()


def test_points_in_polygons_is_inside_any_of_them_even_odd():
    """Several polygons at once equal each polygon's own test, or-ed."""
    rng = np.random.default_rng(3)
    square = np.array([[1.0, 1.0], [-1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    polygons = [square, square * 0.5 + [2.0, 0.0], rng.normal(0.0, 1.0, (6, 2))]
    edges = np.concatenate([geometry.polygon_edges(p) for p in polygons])
    starts = np.array([0, 4, 8])
    points = rng.uniform(-3.0, 3.0, (500, 2))

    def even_odd(polygon):  # crossings of the ray toward +x, vectorised
        x, y = points[:, 0:1], points[:, 1:2]
        x0, y0 = polygon[None, :, 0], polygon[None, :, 1]
        x1, y1 = np.roll(polygon, -1, axis=0)[None, :, 0], np.roll(polygon, -1, axis=0)[None, :, 1]
        with np.errstate(divide='ignore', invalid='ignore'):
            crossing = ((y0 > y) != (y1 > y)) & (x < x0 + (y - y0) * (x1 - x0) / (y1 - y0))
        return crossing.sum(axis=1) % 2 == 1
    each = np.array([even_odd(p) for p in polygons])
    assert np.array_equal(geometry.points_in_polygon(points, polygons[2]), each[2])
    assert np.array_equal(geometry.points_in_polygons(points, edges, starts), each.any(axis=0))
    assert geometry.points_in_polygon(np.array([[0.0, 0.0], [1.5, 0.0]]), square).tolist() \
        == [True, False]
