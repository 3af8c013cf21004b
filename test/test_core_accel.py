"""
Acceleration limits in the ORCA core: the reachable set, the solver with it, RVO2 without it.

Without limits the setting is RVO2's and so is the answer: compared with RVO2 itself (pyrvo)
within a tolerance on crowded scenes with obstacles, and, on random scenes, every way of saying
"no limit" gives the same bits as none. With limits (not RVO2's setting) every answer must lie
in the reachable set (checked against the polygon of ``reach_lines`` and against the set's
definition) and within max_speed, plain, with the collision guard and with weights; where
max_speed itself is out of reach, the answer is the documented one.
"""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from orca_nav.core import compute_velocities, Obstacles
from orca_nav.core.orca.lines import (brake_conflicts, MAX_REACH_LINES, reach_floor,
                                      reach_lines, REACH_MIN_HALF_ANGLE, REACH_SIDES)
from orca_nav.testing import rvo2
from orca_nav.testing.scenes import crowd_with_polygons
import pytest

from test_core_properties import fleets  # noqa: I100 -- test/ is on sys.path

FAST = settings(max_examples=200, deadline=None, derandomize=True)
# Rounding slack of the linear programs [m/s].
TOL = 1e-9
# The inscribed polygon keeps at least this fraction of the reach in every direction.
INSCRIBED = math.cos(math.pi / REACH_SIDES)
# Agreement with RVO2 (which computes in single precision): the share of agents within
# RVO2_TOL [m/s] (test_core_rvo2.py's criterion), and a bound for every agent (measured on
# CROWDS: 808 of 810 agents within 1.2e-5 m/s, the worst 1.5e-3 m/s).
RVO2_TOL, RVO2_SHARE, RVO2_WORST = 1e-3, 0.99, 5e-3
CROWDS = range(12)  # seeds of crowd(): 40 to 95 agents
CROWD_PARAMS = {'time_step': 0.25, 'neighbor_dist': 4.0, 'max_neighbors': 6,
                'time_horizon': 3.0, 'time_horizon_obst': 2.0}


def crowd(seed):
    """
    Random crowd of 40 + 5 seed agents in 12 m x 12 m, two squares and a segment.

    Some agents overlap (RVO2's overlap case). Returns positions, velocities, preferred
    velocities (N, 2), radius, max_speed (N,), the obstacle polygons (the segment as a polygon
    of two vertices, as RVO2 takes it) and random avoidance weights (N,).
    """
    rng = np.random.default_rng(1000 + seed)
    n = 40 + 5 * seed
    scene = crowd_with_polygons(rng, n)
    return (*scene, rng.uniform(0.0, 1.0, n))


def polygon(ref, accel_r, decel_r):
    """Return the reach lines (K, 4) of ``reach_lines`` for one velocity."""
    lines = np.empty((MAX_REACH_LINES, 4))
    k = reach_lines(lines, float(ref[0]), float(ref[1]), accel_r, decel_r)
    return lines[:k]


def violation(lines, v):
    """det(d, p - v) per line (positive = outside) for one velocity v."""
    return lines[:, 2] * (lines[:, 1] - v[1]) - lines[:, 3] * (lines[:, 0] - v[0])


def _cross(a, b):
    return a[0] * b[1] - a[1] * b[0]


def in_model(v, ref, accel_r, decel_r, tol=TOL):
    """Whether v is in the reachable set by its definition (not by the polygon)."""
    dv = np.asarray(v, float) - ref
    speed = np.hypot(*ref)
    if not accel_r < np.inf:
        if decel_r < np.inf and speed > 1e-12:
            return dv @ (ref / speed) >= -decel_r - tol
        return True
    if speed <= 1e-12:
        return np.hypot(*dv) <= accel_r + tol
    u = ref / speed
    brake = min(decel_r, speed, accel_r / math.sin(REACH_MIN_HALF_ANGLE))
    if decel_r < accel_r:
        # The disc cut by the braking chord.
        return np.hypot(*dv) <= accel_r + tol and dv @ u >= -decel_r - tol
    if np.hypot(*dv) <= accel_r + tol:
        return True
    if brake <= accel_r:
        return False
    # The hull of the disc and the brake point: the disc plus the triangle of the brake
    # point and the two tangent points.
    n = np.array([-u[1], u[0]])
    theta0 = math.acos(accel_r / brake)
    apex = ref - brake * u
    t1 = ref + accel_r * (math.cos(theta0) * -u + math.sin(theta0) * n)
    t2 = ref + accel_r * (math.cos(theta0) * -u - math.sin(theta0) * n)
    corners = [apex, t1, t2]
    sides = [_cross(corners[(k + 1) % 3] - corners[k], np.asarray(v) - corners[k])
             for k in range(3)]
    return all(side >= -tol for side in sides) or all(side <= tol for side in sides)


# ---------------------------------------------------------------- the reachable set


@pytest.mark.parametrize('ref, accel_r, decel_r', [
    ((0.0, 0.0), 0.05, 0.1),      # at rest: the disc
    ((0.5, 0.0), 0.05, 0.1),      # cone: braking reaches further
    ((0.0, -0.03), 0.05, 0.1),    # slower than max_accel x dt: the disc (brake point inside)
    ((0.07, 0.07), 0.05, 0.08),   # cone, the brake point a stop
    ((0.3, -0.4), 0.1, 0.05),     # chord: braking weaker than accelerating
    ((0.3, -0.4), 0.05, 0.05),    # equal: the disc
    ((1e6, -1e6), 0.05, 0.1),
    ((1e-300, 0.0), 0.05, 0.1),
])
def test_reach_polygon_is_inscribed_and_holds_the_brake_point(ref, accel_r, decel_r):
    """Every vertex is reachable, the slowest reachable velocity is inside, little is lost."""
    ref = np.array(ref)
    lines = polygon(ref, accel_r, decel_r)
    k = len(lines)
    assert 3 <= k <= MAX_REACH_LINES
    # Vertices: where each line meets the next one.
    for j in range(k):
        p, d = lines[j, :2], lines[j, 2:]
        q, e = lines[(j + 1) % k, :2], lines[(j + 1) % k, 2:]
        t = (e[0] * (p[1] - q[1]) - e[1] * (p[0] - q[0])) / (d[0] * e[1] - d[1] * e[0])
        vertex = p + t * d
        assert in_model(vertex, ref, accel_r, decel_r, tol=1e-9 * max(1.0, np.hypot(*ref)))
        assert np.all(violation(lines, vertex) <= 1e-9 * max(1.0, np.hypot(*ref)))
    speed = np.hypot(*ref)
    if speed > 1e-12:
        brake_point = ref * (1.0 - min(decel_r, speed) / speed)
        assert min(decel_r, speed) <= accel_r / math.sin(REACH_MIN_HALF_ANGLE)
        assert np.all(violation(lines, brake_point) <= 1e-12 * max(1.0, speed))
    # Nearly the whole disc of max_accel x dt is kept (where braking does not cut it).
    for angle in np.linspace(0.0, 2.0 * math.pi, 64, endpoint=False):
        v = ref + INSCRIBED * min(accel_r, decel_r) * np.array([math.cos(angle),
                                                                math.sin(angle)])
        assert np.all(violation(lines, v) <= 1e-9 * max(1.0, speed))


def test_unlimited_acceleration_keeps_only_the_braking_cut():
    """max_accel unlimited: one line (speed along u falls by decel_r at most); both: none."""
    lines = polygon(np.array([0.5, 0.0]), np.inf, 0.1)
    assert len(lines) == 1
    assert violation(lines, np.array([0.41, 5.0]))[0] <= 0.0
    assert violation(lines, np.array([0.39, 0.0]))[0] > 0.0
    assert len(polygon(np.array([0.5, 0.0]), np.inf, np.inf)) == 0
    assert len(polygon(np.array([0.0, 0.0]), np.inf, 0.1)) == 0


def test_reach_floor_is_the_slowest_scaling_still_reachable():
    """A velocity straight ahead at full speed may be scaled down to the brake point."""
    ref = np.array([1.0, 0.0])
    lines = polygon(ref, 0.05, 0.1)
    f = reach_floor(lines, len(lines), 1.0, 0.0)
    assert f == pytest.approx(0.9)
    assert reach_floor(lines, 0, 1.0, 0.0) == 0.0


# ---------------------------------------------------------------- RVO2's setting: RVO2's answer


def test_without_limits_the_answers_are_rvo2s():
    """RVO2's setting (no limits, no guard, equal shares): RVO2's velocities, crowds of 40-95."""
    errors = []
    for seed in CROWDS:
        pos, vel, pref, radius, max_speed, polygons, _ = crowd(seed)
        ours = compute_velocities(pos, vel, pref, radius, max_speed,
                                  obstacles=Obstacles.build(polygons), **CROWD_PARAMS)
        ref = rvo2.one_step(pos, vel, pref, radius, max_speed, polygons=polygons,
                            **CROWD_PARAMS)
        errors.append(np.hypot(*(ours - ref).T))
    errors = np.concatenate(errors)
    assert np.mean(errors <= RVO2_TOL) >= RVO2_SHARE, np.sort(errors)[-10:]
    assert errors.max() <= RVO2_WORST, errors.max()


@FAST
@given(fleet=fleets(), guard=st.booleans(), how=st.sampled_from(['zero', 'inf', 'from']))
def test_limits_off_give_the_same_bits(fleet, guard, how):
    """0, inf, None and a given origin without limits: RVO2's answer exactly."""
    pos, vel, pref, radius, max_speed, params, obstacles = fleet
    n = pos.shape[0]
    plain = compute_velocities(pos, vel, pref, radius, max_speed, obstacles=obstacles,
                               collision_guard=guard, **params)
    kwargs = {'zero': {'max_accel': 0.0, 'max_decel': np.zeros(n)},
              'inf': {'max_accel': np.full(n, np.inf), 'max_decel': None},
              'from': {'accel_from': np.zeros((n, 2))}}[how]
    off = compute_velocities(pos, vel, pref, radius, max_speed, obstacles=obstacles,
                             collision_guard=guard, **params, **kwargs)
    assert np.array_equal(plain, off)


# ---------------------------------------------------------------- the solver with limits


limit = st.one_of(st.just(0.0), st.floats(0.01, 10.0))


@FAST
@given(fleet=fleets(), guard=st.booleans(), data=st.data())
def test_answers_are_reachable_and_within_max_speed(fleet, guard, data):
    """Every answer is in the reach polygon and in the set by definition, or is max_speed."""
    pos, vel, pref, radius, max_speed, params, obstacles = fleet
    n = pos.shape[0]
    accel = np.array(data.draw(st.lists(limit, min_size=n, max_size=n)))
    decel = np.array(data.draw(st.lists(limit, min_size=n, max_size=n)))
    origin = data.draw(st.sampled_from(['velocities', 'other']))
    ref = vel if origin == 'velocities' else np.roll(vel, 1, axis=0) * 0.5
    out = compute_velocities(pos, vel, pref, radius, max_speed, obstacles=obstacles,
                             collision_guard=guard, max_accel=accel, max_decel=decel,
                             accel_from=None if origin == 'velocities' else ref, **params)
    assert out.shape == (n, 2)
    assert_reachable(out, ref, accel, decel, max_speed, params['time_step'])


def assert_reachable(out, ref, accel, decel, max_speed, dt):
    """Every answer in the reach polygon, in the set by definition, or the documented one."""
    assert np.all(np.isfinite(out))
    assert np.all(np.hypot(out[:, 0], out[:, 1]) <= max_speed + 1e-9)
    for i in range(len(out)):
        accel_r = accel[i] * dt if accel[i] > 0 else np.inf
        decel_r = decel[i] * dt if decel[i] > 0 else np.inf
        speed = np.hypot(*ref[i])
        scale = max(1.0, speed)
        if speed - min(decel_r, accel_r / math.sin(REACH_MIN_HALF_ANGLE)) > max_speed[i]:
            # Out of reach of max_speed: the brake direction at max_speed.
            assert out[i] == pytest.approx(ref[i] * (max_speed[i] / speed), abs=1e-9 * scale)
            continue
        lines = polygon(ref[i], accel_r, decel_r)
        if len(lines):
            assert np.all(violation(lines, out[i]) <= 1e-9 * scale), i
        assert in_model(out[i], ref[i], accel_r, decel_r, tol=1e-9 * scale), i


@pytest.mark.parametrize('variant', ['plain', 'guard', 'weights', 'weights_guard'])
def test_with_limits_crowds_get_reachable_answers(variant):
    """
    Crowds of 40-95 with obstacles, overlaps, the guard, weights: every answer reachable.

    Without the guard the limits only cut: an agent whose answer without limits is inside its
    reachable set (by 1e-6 m/s) gets that very answer (its linear program has one more
    constraint that the optimum satisfies). The guard's second pass and last-resort braking
    depend on the limits, so with it only reachability is checked.
    """
    kept = 0
    for seed in CROWDS:
        pos, vel, pref, radius, max_speed, polygons, weights = crowd(seed)
        n = len(pos)
        rng = np.random.default_rng(seed)
        accel = rng.choice([0.0, 0.2, 1.0, 5.0], n)   # 0: that agent unlimited
        decel = rng.choice([0.0, 0.5, 2.0, 5.0], n)
        kwargs = {'collision_guard': variant.endswith('guard')}
        if variant.startswith('weights'):
            kwargs['weights'] = weights
        obstacles = Obstacles.build(polygons)
        out = compute_velocities(pos, vel, pref, radius, max_speed, obstacles=obstacles,
                                 max_accel=accel, max_decel=decel, **CROWD_PARAMS, **kwargs)
        assert out.shape == (n, 2)
        dt = CROWD_PARAMS['time_step']
        assert_reachable(out, vel, accel, decel, max_speed, dt)
        if kwargs['collision_guard']:
            continue
        free = compute_velocities(pos, vel, pref, radius, max_speed, obstacles=obstacles,
                                  **CROWD_PARAMS, **kwargs)
        for i in range(n):
            lines = polygon(vel[i], accel[i] * dt if accel[i] > 0 else np.inf,
                            decel[i] * dt if decel[i] > 0 else np.inf)
            if not len(lines) or np.all(violation(lines, free[i]) < -1e-6):
                assert np.hypot(*(out[i] - free[i])) <= 1e-9, (seed, i, out[i], free[i])
                kept += 1
    assert kept >= 300 or variant.endswith('guard'), kept  # 315 and 318 measured


def test_braking_toward_a_wall_at_max_decel():
    """An agent that cannot stop before a wall in time brakes at max_decel, never harder."""
    from orca_nav.core import Obstacles
    wall = Obstacles.build(segments=[[[1.0, -5.0], [1.0, 5.0]]])
    vel = np.array([[2.0, 0.0]])
    params = {'time_step': 0.1, 'neighbor_dist': 5.0, 'max_neighbors': 5, 'time_horizon': 2.0,
              'time_horizon_obst': 2.0, 'obstacles': wall}
    out = compute_velocities([[0.0, 0.0]], vel, [[2.0, 0.0]], 0.3, 2.0, max_accel=1.0,
                             max_decel=3.0, **params)
    assert out[0] == pytest.approx([1.7, 0.0], abs=1e-9)
    free = compute_velocities([[0.0, 0.0]], vel, [[2.0, 0.0]], 0.3, 2.0, **params)
    assert free[0, 0] < 1.0  # without limits ORCA asks for more than the brakes give


def test_starting_from_rest_accelerates_at_max_accel():
    """From rest toward a far goal: max_accel x dt (less the polygon's at most 1.9 %)."""
    out = compute_velocities([[0.0, 0.0]], [[0.0, 0.0]], [[1.0, 0.0]], 0.3, 1.0,
                             time_step=0.1, neighbor_dist=5.0, max_neighbors=5,
                             time_horizon=2.0, time_horizon_obst=2.0, max_accel=0.5)
    assert INSCRIBED * 0.05 - 1e-12 <= out[0, 0] <= 0.05 + 1e-12
    assert out[0, 1] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize('bad', [-1.0, np.nan])
def test_bad_limits_are_refused(bad):
    """A negative or NaN limit raises ValueError naming it."""
    with pytest.raises(ValueError, match='max_decel'):
        compute_velocities([[0.0, 0.0]], [[0.0, 0.0]], [[1.0, 0.0]], 0.3, 1.0, time_step=0.1,
                           neighbor_dist=5.0, max_neighbors=5, time_horizon=2.0,
                           time_horizon_obst=2.0, max_accel=1.0, max_decel=bad)
    with pytest.raises(ValueError, match='accel_from'):
        compute_velocities([[0.0, 0.0]], [[0.0, 0.0]], [[1.0, 0.0]], 0.3, 1.0, time_step=0.1,
                           neighbor_dist=5.0, max_neighbors=5, time_horizon=2.0,
                           time_horizon_obst=2.0, max_accel=1.0,
                           accel_from=[[np.nan, 0.0]])


def test_last_resort_braking_stops_at_the_brake_point():
    """brake_conflicts slows a limited agent to its floor at most, even where it would stop."""
    pos = np.array([[0.0, 0.0], [0.3, 0.0]])  # overlapping and closing in: stop
    nbrs = np.array([[1], [0]])
    active = np.ones(2, bool)
    free = np.array([[1.0, 0.0], [-1.0, 0.0]])
    brake_conflicts(pos, free, np.full(2, 0.2), nbrs, 0.25, active)
    assert np.all(free == 0.0)  # unlimited: stopped
    limited = np.array([[1.0, 0.0], [-1.0, 0.0]])
    brake_conflicts(pos, limited, np.full(2, 0.2), nbrs, 0.25, active, np.array([0.6, 0.0]))
    assert limited[0].tolist() == pytest.approx([0.6, 0.0])
    assert limited[1].tolist() == [0.0, 0.0]
