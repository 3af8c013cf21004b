"""
Linear programs 1, 2 and 3 of orca_nav.core.orca.lines against brute force and scipy.

A half-plane row is ``[px, py, dx, dy]``; a velocity v is permitted when
``det(d, p - v) <= 0`` (left of the directed line). The references here never call the code under
test: dense grids over the speed disc, scipy's SLSQP, and HiGHS linear programs on polygons
inscribed in / circumscribed about the disc (which bracket the exact optimum).
"""

import math

import numpy as np
from orca_nav.core.orca.lines import linear_program1, linear_program2, linear_program3
import pytest
from scipy.optimize import linprog, minimize

GRID = 251
POLY_SIDES = 512


def violation(lines, v):
    """det(d, p - v) per line (positive = violated); v is (2,) or (M, 2)."""
    v = np.atleast_2d(v)
    # det(d, p - v) = dy * vx - dx * vy + (dx * py - dy * px)
    normal = np.stack([lines[:, 3], -lines[:, 2]])
    return v @ normal + (lines[:, 2] * lines[:, 1] - lines[:, 3] * lines[:, 0])


def disc_grid(radius, count=GRID):
    """Cartesian grid points inside the disc of ``radius``, and the grid spacing."""
    axis = np.linspace(-radius, radius, count)
    gx, gy = np.meshgrid(axis, axis)
    pts = np.stack([gx.ravel(), gy.ravel()], axis=1)
    return pts[np.einsum('ij,ij->i', pts, pts) <= radius * radius], axis[1] - axis[0]


def line_through_margin(rng, center, margin):
    """Random line with ``center`` strictly on its permitted (left) side, ``margin`` away."""
    ang = rng.uniform(0.0, 2.0 * math.pi)
    d = np.array([math.cos(ang), math.sin(ang)])
    left = np.array([-d[1], d[0]])
    p = center - margin * left + rng.uniform(-3.0, 3.0) * d
    return np.array([p[0], p[1], d[0], d[1]])


def feasible_lines(rng, count, radius):
    """Lines that all contain a random point strictly inside the speed circle."""
    r = radius * math.sqrt(rng.uniform(0.0, 0.8 ** 2))
    a = rng.uniform(0.0, 2.0 * math.pi)
    center = np.array([r * math.cos(a), r * math.sin(a)])
    lines = np.array([line_through_margin(rng, center, rng.uniform(0.02, 1.5) * radius)
                      for _ in range(count)])
    return lines, center


def random_opt(rng, radius):
    """Return a point inside (half the time) or outside the speed circle."""
    ang = rng.uniform(0.0, 2.0 * math.pi)
    if rng.uniform() < 0.5:
        mag = radius * math.sqrt(rng.uniform())
    else:
        mag = radius * rng.uniform(1.01, 4.0)
    return np.array([mag * math.cos(ang), mag * math.sin(ang)])


def slsqp(fun, jac, lines, radius, x0):
    """Minimise fun subject to every line and the circle with SLSQP."""
    cons = [{'type': 'ineq',
             'fun': lambda v: -violation(lines, v)[0],
             'jac': lambda v: np.stack([-lines[:, 3], lines[:, 2]], axis=1)},
            {'type': 'ineq',
             'fun': lambda v: np.array([radius * radius - v @ v]),
             'jac': lambda v: -2.0 * v[None, :]}]
    res = minimize(fun, x0, jac=jac, method='SLSQP', constraints=cons,
                   options={'ftol': 1e-12, 'maxiter': 1000})
    # SLSQP may stop with 'positive directional derivative' at the optimum: judge by the point.
    assert res.status in (0, 8), res.message
    assert np.all(violation(lines, res.x) <= 1e-6)
    assert math.hypot(*res.x) <= radius + 1e-6
    return res.x


def minimax_bracket(lines, n_obst, radius):
    """
    Lower and upper bound of min over the obstacle region of the max agent-line violation.

    Linear programs in (vx, vy, t) over polygons circumscribed about (lower bound) and
    inscribed in (upper bound) the speed circle.
    """
    n = lines.shape[0]
    # det(d, p - v) = dy * vx - dx * vy + (dx * py - dy * px)
    a = np.stack([lines[:, 3], -lines[:, 2]], axis=1)
    b = lines[:, 3] * lines[:, 0] - lines[:, 2] * lines[:, 1]
    rows = np.zeros((n, 3))
    rows[:, :2] = a
    rows[n_obst:, 2] = -1.0
    theta = np.linspace(0.0, 2.0 * math.pi, POLY_SIDES, endpoint=False)
    circle = np.stack([np.cos(theta), np.sin(theta), np.zeros(POLY_SIDES)], axis=1)
    bounds = [(None, None)] * 3
    values = []
    for rhs in (radius, radius * math.cos(math.pi / POLY_SIDES)):
        res = linprog([0.0, 0.0, 1.0], A_ub=np.vstack([rows, circle]),
                      b_ub=np.concatenate([b, np.full(POLY_SIDES, rhs)]), bounds=bounds,
                      method='highs')
        assert res.status == 0, res.message
        values.append(res.fun)
    return values[0], values[1]


def test_violation_sign_convention():
    """The permitted side is the left of the directed line."""
    line = np.array([[0.0, 0.0, 1.0, 0.0]])  # x axis pointing +x: left is y > 0
    assert violation(line, np.array([0.0, 1.0]))[0, 0] < 0.0
    assert violation(line, np.array([0.0, -1.0]))[0, 0] > 0.0


@pytest.mark.slow
@pytest.mark.parametrize('seed', range(6))
def test_lp2_feasible_is_the_closest_point(seed):
    """On feasible sets LP2 returns the point of the region closest to opt (50 cases a seed)."""
    rng = np.random.default_rng(1000 + seed)
    unit, _ = disc_grid(1.0)
    for _ in range(50):
        radius = rng.uniform(0.3, 3.0)
        count = int(rng.integers(1, 16))
        lines, center = feasible_lines(rng, count, radius)
        opt = random_opt(rng, radius)
        fail, x, y = linear_program2(lines, count, radius, opt[0], opt[1], False)
        ours = np.array([x, y])
        assert fail == count
        assert np.all(violation(lines, ours) <= 1e-9)
        assert math.hypot(x, y) <= radius + 1e-9
        our_dist = np.linalg.norm(ours - opt)

        pts = unit * radius
        ok = pts[np.all(violation(lines, pts) <= 0.0, axis=1)]
        assert ok.shape[0] > 0
        grid_best = np.min(np.linalg.norm(ok - opt, axis=1))
        # Every feasible point is at least as far from opt as ours.
        assert grid_best >= our_dist - 1e-9

        ref = slsqp(lambda v: (v - opt) @ (v - opt), lambda v: 2.0 * (v - opt), lines,
                    radius, center)
        assert np.linalg.norm(ref - opt) == pytest.approx(our_dist, abs=1e-5)
        # The objective is strictly convex: the minimiser is unique.
        assert np.linalg.norm(ref - ours) < 1e-4


@pytest.mark.parametrize('seed', range(2))
def test_lp2_direction_opt_is_the_furthest_point(seed):
    """With direction_opt LP2 returns the point of the region furthest along the unit opt."""
    rng = np.random.default_rng(2000 + seed)
    for _ in range(50):
        radius = rng.uniform(0.3, 3.0)
        count = int(rng.integers(1, 16))
        lines, center = feasible_lines(rng, count, radius)
        ang = rng.uniform(0.0, 2.0 * math.pi)
        u = np.array([math.cos(ang), math.sin(ang)])
        fail, x, y = linear_program2(lines, count, radius, u[0], u[1], True)
        ours = np.array([x, y])
        assert fail == count
        assert np.all(violation(lines, ours) <= 1e-9)
        assert math.hypot(x, y) <= radius + 1e-9
        pts, _ = disc_grid(radius, 201)
        ok = pts[np.all(violation(lines, pts) <= 0.0, axis=1)]
        assert np.max(ok @ u) <= ours @ u + 1e-9
        ref = slsqp(lambda v: -(v @ u), lambda v: -u, lines, radius, center)
        assert ref @ u == pytest.approx(ours @ u, abs=1e-5)


def infeasible_scene(rng):
    """
    Obstacle lines feasible with the circle, then agent lines that conflict for sure.

    Returns (lines, n_obst, radius). The agent lines contain one of: a line whose permitted side
    misses the disc, two opposite parallel lines with disjoint sides, or three lines with
    outward normals 120 degrees apart (their violations cannot all be negative).
    """
    radius = rng.uniform(0.3, 3.0)
    n_obst = int(rng.integers(0, 6))
    obst, _ = feasible_lines(rng, n_obst, radius)
    obst = obst.reshape(-1, 4)
    ang = rng.uniform(0.0, 2.0 * math.pi)
    d = np.array([math.cos(ang), math.sin(ang)])
    left = np.array([-d[1], d[0]])
    kind = rng.integers(0, 3)
    if kind == 0:
        p = rng.uniform(1.05, 2.0) * radius * left + rng.uniform(-2.0, 2.0) * d
        core = [np.concatenate([p, d])]
    elif kind == 1:
        a = rng.uniform(-radius, radius)
        gap = rng.uniform(0.01, 0.5) * radius
        p1 = a * left + rng.uniform(-2.0, 2.0) * d
        p2 = (a - gap) * left + rng.uniform(-2.0, 2.0) * d
        core = [np.concatenate([p1, d]), np.concatenate([p2, -d])]
    else:
        core = []
        for k in range(3):
            t = ang + 2.0 * math.pi * k / 3.0
            normal = np.array([math.cos(t), math.sin(t)])
            direction = np.array([normal[1], -normal[0]])  # left of it is +normal
            p = rng.uniform(0.01, 0.5) * radius * normal + rng.uniform(-2.0, 2.0) * direction
            core.append(np.concatenate([p, direction]))
    extra = [line_through_margin(rng, rng.uniform(-radius, radius, 2),
                                 rng.uniform(-0.5, 1.0) * radius)
             for _ in range(int(rng.integers(0, 10)))]
    agent = np.array(core + extra)
    agent = agent[rng.permutation(agent.shape[0])]
    return np.vstack([obst, agent]), n_obst, radius


@pytest.mark.slow
@pytest.mark.parametrize('seed', range(4))
def test_lp3_minimises_the_largest_violation(seed):
    """On infeasible sets LP3 keeps the obstacle lines and least-violates the agent lines."""
    rng = np.random.default_rng(3000 + seed)
    pts_all, h = disc_grid(1.0)
    for _ in range(40):
        lines, n_obst, radius = infeasible_scene(rng)
        n = lines.shape[0]
        fail, x, y = linear_program2(lines, n, radius, *random_opt(rng, radius), False)
        assert n_obst <= fail < n
        # The partial result is valid for the lines before the failing one.
        assert np.all(violation(lines[:fail], np.array([x, y])) <= 1e-9)
        assert math.hypot(x, y) <= radius + 1e-9
        proj = np.empty_like(lines)
        rx, ry = linear_program3(lines, n, n_obst, fail, radius, x, y, proj)
        ours = np.array([rx, ry])
        assert np.all(violation(lines[:n_obst], ours) <= 1e-6)
        assert math.hypot(rx, ry) <= radius + 1e-6
        our_worst = np.max(violation(lines[n_obst:], ours))

        pts = pts_all * radius
        pts = pts[np.all(violation(lines[:n_obst], pts) <= 0.0, axis=1)]
        assert pts.shape[0] > 0
        grid_worst = np.min(np.max(violation(lines[n_obst:], pts), axis=1))
        assert grid_worst > 0.0  # really infeasible
        assert our_worst <= grid_worst + 1e-9
        assert our_worst >= grid_worst - 2.0 * h * radius
        lower, upper = minimax_bracket(lines, n_obst, radius)
        assert lower - 1e-7 <= our_worst <= upper + 1e-7


def test_lp1_circle_misses_the_line():
    """The line lies entirely outside the speed circle: no solution."""
    lines = np.array([[0.0, 2.0, 1.0, 0.0]])
    ok, _, _ = linear_program1(lines, 0, 1.5, 0.0, 0.0, False)
    assert not ok
    ok, x, y = linear_program1(lines, 0, 2.5, 0.0, 0.0, False)
    assert ok and (x, y) == pytest.approx((0.0, 2.0))


def test_lp1_direction_opt_takes_the_extremes():
    """Along a line through the centre the extremes are the circle and earlier lines."""
    lines = np.array([[0.5, 0.0, 0.0, 1.0],    # permitted: x <= 0.5
                      [0.0, 0.0, 1.0, 0.0]])   # the x axis
    ok, x, y = linear_program1(lines, 0, 2.0, 0.0, 1.0, True)
    assert ok and (x, y) == pytest.approx((0.5, math.sqrt(4.0 - 0.25)))
    ok, x, y = linear_program1(lines, 0, 2.0, 0.0, -1.0, True)
    assert ok and (x, y) == pytest.approx((0.5, -math.sqrt(4.0 - 0.25)))
    ok, x, y = linear_program1(lines, 1, 2.0, 1.0, 0.0, True)
    assert ok and (x, y) == pytest.approx((0.5, 0.0))
    ok, x, y = linear_program1(lines, 1, 2.0, -1.0, 0.0, True)
    assert ok and (x, y) == pytest.approx((-2.0, 0.0))


def test_lp1_closest_point_is_clamped():
    """Without direction_opt the projection of opt on the line is clamped to the interval."""
    lines = np.array([[0.5, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]])
    ok, x, y = linear_program1(lines, 1, 2.0, 0.3, 5.0, False)
    assert ok and (x, y) == pytest.approx((0.3, 0.0))
    ok, x, y = linear_program1(lines, 1, 2.0, 3.0, 1.0, False)
    assert ok and (x, y) == pytest.approx((0.5, 0.0))
    ok, x, y = linear_program1(lines, 1, 2.0, -7.0, 1.0, False)
    assert ok and (x, y) == pytest.approx((-2.0, 0.0))


def test_lp1_empty_intervals():
    """Parallel lines on the wrong side, and crossing bounds, leave nothing on the line."""
    # Permitted y >= 1, then the x axis: parallel and outside.
    lines = np.array([[0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    assert not linear_program1(lines, 1, 5.0, 0.0, 0.0, False)[0]
    # Permitted y <= 1 (opposite direction): the x axis is fine.
    lines = np.array([[0.0, 1.0, -1.0, 0.0], [0.0, 0.0, 1.0, 0.0]])
    assert linear_program1(lines, 1, 5.0, 0.0, 0.0, False)[0]
    # x <= -1 and x >= 1 cut the x axis into nothing.
    lines = np.array([[-1.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, -1.0], [0.0, 0.0, 1.0, 0.0]])
    assert not linear_program1(lines, 2, 5.0, 0.0, 0.0, False)[0]
    # ... and are themselves parallel with disjoint sides.
    assert not linear_program1(lines, 1, 5.0, 0.0, 0.0, False)[0]
