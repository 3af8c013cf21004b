"""Tests for orca_nav.core.perception.raycast: analytic answers and a brute-force reference."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from orca_nav.core.perception.raycast import cast_rays, polygon_edges, polyline_edges
import pytest

SQUARE = np.array([[-2.0, -2.0], [2.0, -2.0], [2.0, 2.0], [-2.0, 2.0]])
NO_CIRCLES = (np.empty((0, 2)), np.empty(0))


def brute_force(origin, angles, max_range, segments, centers, radii):
    """Scalar reference: one 2x2 solve per (ray, segment), one quadratic per (ray, circle)."""
    out = np.full(len(angles), np.inf)
    for i, ang in enumerate(angles):
        d = np.array([math.cos(ang), math.sin(ang)])
        best = math.inf
        for p, q in segments:
            e = q - p
            mat = np.array([[d[0], -e[0]], [d[1], -e[1]]])
            if abs(np.linalg.det(mat)) < 1e-12:
                continue
            t, s = np.linalg.solve(mat, p - origin)
            if t >= 0.0 and 0.0 <= s <= 1.0:
                best = min(best, t)
        for c, r in zip(centers, radii):
            # Closest approach of the ray's line to the centre, then back off along the chord.
            rel = c - origin
            if rel @ rel <= r * r:
                continue  # origin inside: ignored by contract
            along = rel @ d
            perp_sq = rel @ rel - along * along
            if perp_sq > r * r or along < 0.0:
                continue
            best = min(best, along - math.sqrt(r * r - perp_sq))
        out[i] = best if best <= max_range else math.inf
    return out


def test_wall_ahead_gives_two_over_cos():
    wall = np.array([[[2.0, -100.0], [2.0, 100.0]]])
    angles = np.linspace(-1.3, 1.3, 41)
    got = cast_rays(np.zeros(2), angles, 1000.0, wall, *NO_CIRCLES)
    np.testing.assert_allclose(got, 2.0 / np.cos(angles), rtol=1e-12)
    # Rays pointing away from the wall see nothing.
    back = cast_rays(np.zeros(2), angles + np.pi, 1000.0, wall, *NO_CIRCLES)
    assert np.all(np.isinf(back))


def test_circle_ahead_gives_distance_minus_radius():
    d, r = 3.0, 0.5
    got = cast_rays(np.zeros(2), np.array([0.0]), 10.0, None, np.array([[d, 0.0]]),
                    np.array([r]))
    assert got[0] == pytest.approx(d - r, abs=1e-12)
    # Off-axis rays: d cos(a) - sqrt(r^2 - d^2 sin^2(a)); past the tangent: a miss.
    angles = np.linspace(-0.2, 0.2, 21)
    got = cast_rays(np.zeros(2), angles, 10.0, None, np.array([[d, 0.0]]), np.array([r]))
    perp_sq = (d * np.sin(angles)) ** 2
    expect = np.where(perp_sq <= r * r,
                      d * np.cos(angles) - np.sqrt(np.maximum(r * r - perp_sq, 0.0)), np.inf)
    np.testing.assert_allclose(got, expect, rtol=1e-12)
    assert np.isinf(got).sum() == np.sum(np.abs(angles) > math.asin(r / d)) == 4


def test_nearest_primitive_wins_and_circle_behind_is_ignored():
    wall = np.array([[[4.0, -3.0], [4.0, 3.0]]])
    centers = np.array([[2.0, 0.0], [-2.0, 0.0]])
    radii = np.array([0.5, 0.5])
    got = cast_rays(np.zeros(2), np.array([0.0, np.pi, 0.3]), 10.0, wall, centers, radii)
    # Straight ahead: the disc at x=2 occludes the wall; backwards: the other disc;
    # at 0.3 rad the ray misses the front disc (2 sin 0.3 > 0.5) and hits the wall.
    np.testing.assert_allclose(got, [1.5, 1.5, 4.0 / math.cos(0.3)], rtol=1e-12)


def test_max_range_turns_far_hits_into_inf():
    wall = np.array([[[2.0, -100.0], [2.0, 100.0]]])
    angles = np.array([0.0, 0.5, 1.0])  # 2.0, 2.28, 3.70
    got = cast_rays(np.zeros(2), angles, 3.0, wall, *NO_CIRCLES)
    assert got[0] == pytest.approx(2.0)
    assert got[1] == pytest.approx(2.0 / math.cos(0.5))
    assert np.isinf(got[2])
    got = cast_rays(np.zeros(2), angles, np.inf, wall, *NO_CIRCLES)
    assert np.all(np.isfinite(got))


def test_origin_inside_or_on_circle_ignores_that_circle():
    centers = np.array([[0.1, 0.0], [1.0, 0.0], [3.0, 0.0]])
    radii = np.array([0.5, 1.0, 0.5])  # contains the origin, passes through it, ahead
    got = cast_rays(np.zeros(2), np.array([0.0, np.pi]), 10.0, None, centers, radii)
    assert got[0] == pytest.approx(2.5)
    assert np.isinf(got[1])


def test_empty_world_and_empty_rays():
    angles = np.linspace(0, 2 * np.pi, 8)
    assert np.all(np.isinf(cast_rays(np.zeros(2), angles, 5.0, None, None, None)))
    assert np.all(np.isinf(cast_rays(np.zeros(2), angles, 5.0, np.empty((0, 2, 2)),
                                     *NO_CIRCLES)))
    out = cast_rays(np.zeros(2), np.empty(0), 5.0, polygon_edges([SQUARE]), *NO_CIRCLES)
    assert out.shape == (0,)


def test_rays_through_polygon_vertices_hit():
    origin = np.array([0.3, -0.2])
    corners = SQUARE - origin
    angles = np.arctan2(corners[:, 1], corners[:, 0])
    got = cast_rays(origin, angles, 10.0, polygon_edges([SQUARE]), *NO_CIRCLES)
    np.testing.assert_allclose(got, np.hypot(corners[:, 0], corners[:, 1]), rtol=1e-9)


def test_inside_closed_room_every_ray_hits():
    angles = np.linspace(-np.pi, np.pi, 720, endpoint=False)
    got = cast_rays(np.array([0.5, 0.7]), angles, 10.0, polygon_edges([SQUARE]), *NO_CIRCLES)
    assert np.all(np.isfinite(got))
    # Every hit point lies on the square's boundary.
    hits = np.array([0.5, 0.7]) + got[:, None] * np.stack([np.cos(angles), np.sin(angles)], 1)
    np.testing.assert_allclose(np.max(np.abs(hits), axis=1), 2.0, atol=1e-9)


def test_collinear_segment_hit_at_nearest_end_and_zero_when_on_it():
    seg = np.array([[[2.0, 0.0], [5.0, 0.0]]])
    got = cast_rays(np.zeros(2), np.array([0.0, np.pi]), 10.0, seg, *NO_CIRCLES)
    assert got[0] == pytest.approx(2.0)
    assert np.isinf(got[1])
    got = cast_rays(np.array([3.0, 0.0]), np.array([0.0, np.pi, np.pi / 2]), 10.0, seg,
                    *NO_CIRCLES)
    np.testing.assert_allclose(got, [0.0, 0.0, 0.0])


def test_nan_segments_and_circles_are_never_hit():
    seg = np.array([[[2.0, -1.0], [2.0, 1.0]], [[1.0, np.nan], [1.0, 1.0]]])
    got = cast_rays(np.zeros(2), np.array([0.0]), 10.0, seg, np.array([[np.nan, 0.0]]),
                    np.array([0.3]))
    assert got[0] == pytest.approx(2.0)
    got = cast_rays(np.zeros(2), np.array([0.0]), np.inf, seg, *NO_CIRCLES)
    assert got[0] == pytest.approx(2.0)


@pytest.mark.parametrize('seed', range(6))
@pytest.mark.parametrize('max_range', [4.0, np.inf])
def test_matches_brute_force_on_random_worlds(seed, max_range):
    rng = np.random.default_rng(seed)
    n_seg, n_circ = (300, 60) if seed == 0 else (rng.integers(0, 25), rng.integers(0, 8))
    segments = rng.uniform(-6.0, 6.0, (n_seg, 2, 2))
    centers = rng.uniform(-6.0, 6.0, (n_circ, 2))
    radii = rng.uniform(0.05, 1.0, n_circ)
    origin = rng.uniform(-1.0, 1.0, 2)
    angles = rng.uniform(-4.0, 4.0, 90)
    got = cast_rays(origin, angles, max_range, segments, centers, radii)
    expect = brute_force(origin, angles, max_range, segments, centers, radii)
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expect))
    fin = np.isfinite(expect)
    np.testing.assert_allclose(got[fin], expect[fin], rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=4, max_size=40),
       st.floats(-10, 10), st.floats(-10, 10), st.floats(0.1, 100.0))
def test_output_is_bounded_and_hits_lie_on_segments(coords, ox, oy, max_range):
    n = len(coords) // 4
    segments = np.array(coords[:4 * n]).reshape(n, 2, 2)
    origin = np.array([ox, oy])
    angles = np.linspace(-np.pi, np.pi, 64, endpoint=False)
    got = cast_rays(origin, angles, max_range, segments, *NO_CIRCLES)
    assert got.shape == (64,)
    fin = np.isfinite(got)
    assert np.all(got[fin] >= 0.0) and np.all(got[fin] <= max_range)
    # Each finite hit lies on some segment.
    hits = origin + got[fin, None] * np.stack([np.cos(angles[fin]), np.sin(angles[fin])], 1)
    p, q = segments[:, 0], segments[:, 1]
    e = q - p
    len_sq = np.maximum(np.einsum('ij,ij->i', e, e), 1e-300)
    s = np.clip(np.einsum('hmj,mj->hm', hits[:, None, :] - p, e) / len_sq, 0.0, 1.0)
    nearest = p + s[..., None] * e
    dist = np.linalg.norm(hits[:, None, :] - nearest, axis=2).min(axis=1)
    assert np.all(dist <= 1e-6 * (1.0 + np.abs(hits).max(initial=0.0)))


def test_polygon_edges_closes_polygons():
    tri = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    edges = polygon_edges([SQUARE, tri])
    assert edges.shape == (7, 2, 2)
    np.testing.assert_array_equal(edges[3], [SQUARE[3], SQUARE[0]])
    np.testing.assert_array_equal(edges[6], [tri[2], tri[0]])
    # Consecutive edges chain: each edge's end is the next edge's start.
    np.testing.assert_array_equal(edges[:3, 1], edges[1:4, 0])
    # K == 2 is one segment, not a doubled edge; a single array is one polygon.
    assert polygon_edges([tri[:2]]).shape == (1, 2, 2)
    assert polygon_edges(SQUARE).shape == (4, 2, 2)
    assert polygon_edges([]).shape == (0, 2, 2)


def test_polyline_edges_leaves_polylines_open():
    line = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [2.0, 1.0]])
    edges = polyline_edges([line, line[:2]])
    assert edges.shape == (4, 2, 2)
    np.testing.assert_array_equal(edges[2], [line[2], line[3]])
    np.testing.assert_array_equal(edges[3], [line[0], line[1]])
    assert polyline_edges([]).shape == (0, 2, 2)


@pytest.mark.parametrize('bad', [
    {'origin': [np.nan, 0.0]},
    {'origin': [0.0, 0.0, 0.0]},
    {'max_range': 0.0},
    {'max_range': np.nan},
    {'angles': [0.0, np.inf]},
    {'segments': np.zeros((3, 2))},
    {'centers': np.zeros((2, 3)), 'radii': np.ones(2)},
    {'centers': np.zeros((2, 2)), 'radii': np.ones(3)},
    {'centers': np.zeros((1, 2)), 'radii': -np.ones(1)},
    {'centers': np.zeros((1, 2)), 'radii': None},
])
def test_bad_input_raises_value_error(bad):
    args = {'origin': [0.0, 0.0], 'angles': [0.0], 'max_range': 5.0, 'segments': None,
            'centers': None, 'radii': None}
    args.update(bad)
    with pytest.raises(ValueError):
        cast_rays(args['origin'], args['angles'], args['max_range'], args['segments'],
                  args['centers'], args['radii'])


def test_bad_polygons_raise_value_error():
    with pytest.raises(ValueError):
        polygon_edges([np.zeros((1, 2))])
    with pytest.raises(ValueError):
        polyline_edges([np.zeros((3, 3))])
