"""
Who gives way: per-pair avoidance shares (weights), immovable agents and ignored groups.

The solver's answer is compared with an independent reference: each agent's ORCA half-planes
built from the velocity-obstacle geometry (truncated cone, closest boundary point, outward
normal) with the shares applied, and the quadratic program solved by enumerating every
candidate optimum. RVO2's case (no arguments, or arguments that amount to half-half) must give
the very same bits as before.
"""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from orca_nav.core import agent_neighbors, compute_velocities
from orca_nav.core.orca.lines import AgentRows, Horizons, NearObstacles
from orca_nav.core.orca.solver import _solve_rows
from orca_nav.testing.scenes import crowd_with_obstacles
from orca_nav.testing.simulation import Simulation
import pytest

FAST = settings(max_examples=150, deadline=None, derandomize=True)
PARAMS = {'time_step': 0.25, 'neighbor_dist': 50.0, 'max_neighbors': 10, 'time_horizon': 3.0,
          'time_horizon_obst': 2.0}
# The reference's candidate optima count as feasible this close to a constraint [m/s].
TOL = 1e-9
# Scenes whose half-planes are feasible only within this margin are skipped (rounding could
# send the solver to its fallback, linear program 3) [m/s].
MARGIN = 1e-6


# ---------------------------------------------------------------- reference, plain numpy


def reference_share(i, j, weights, immovable, ignores):
    """Agent i's share of avoiding j, by the rule: the one the solver must follow."""
    if ignores(j, i) or (immovable[j] and not immovable[i]):
        return 1.0  # j does not avoid i
    if immovable[i]:
        return 0.5 if immovable[j] else 0.0
    return (weights[j] + 1.0 - weights[i]) / 2.0


def closest_on_vo(rvel, rel, combined_radius, tau, dt):
    """
    Closest point of the velocity obstacle's boundary to ``rvel``, and the outward normal there.

    Apart: the truncated cone of relative velocities that collide within ``tau`` (cut-off
    circle centred rel / tau, legs tangent to the disc of radius combined_radius at rel).
    Overlapping: the disc of relative velocities that still overlap after one step ``dt``.
    """
    dist = np.linalg.norm(rel)
    if dist <= combined_radius:
        centre, r = rel / dt, combined_radius / dt
        out = (rvel - centre) / np.linalg.norm(rvel - centre)
        return centre + r * out, out
    centre, r = rel / tau, combined_radius / tau
    candidates = []
    # The front arc of the cut-off circle, between the tangent points: (q - c).c <= -r^2.
    out = (rvel - centre) / np.linalg.norm(rvel - centre)
    q = centre + r * out
    if (q - centre) @ centre <= -r * r + 1e-12:
        candidates.append((q, out))
    # The legs: rays from the tangent points, at +-asin(combined_radius / dist) from rel.
    half_angle = math.asin(combined_radius / dist)
    start = math.sqrt(dist * dist - combined_radius * combined_radius) / tau
    axis = math.atan2(rel[1], rel[0])
    for side in (1.0, -1.0):
        a = axis + side * half_angle
        leg = np.array([math.cos(a), math.sin(a)])
        q = leg * max(start, rvel @ leg)
        # Outward: away from the axis (left leg: turned left; right leg: turned right).
        candidates.append((q, side * np.array([-leg[1], leg[0]])))
    return min(candidates, key=lambda c: np.linalg.norm(c[0] - rvel))


def reference_half_planes(i, pos, vel, radius, tau, dt, others, shares, other_vel):
    """Agent i's half-planes (point, normal): allowed v satisfy (v - point) . normal >= 0."""
    planes = []
    for j in others:
        rvel = vel[i] - other_vel[j]
        q, normal = closest_on_vo(rvel, pos[j] - pos[i], radius[i] + radius[j], tau, dt)
        planes.append((vel[i] + shares[j] * (q - rvel), normal))
    return planes


def closest_feasible(planes, max_speed, pref, margin=0.0):
    """
    Closest velocity to ``pref`` within all half-planes and the speed circle, or None.

    Brute force: the optimum is pref itself, a projection on one constraint, or where two
    meet; every such candidate is tried. ``margin`` tightens every constraint.
    """
    points = [p + margin * n for p, n in planes]
    normals = [n for _, n in planes]
    speed = max_speed - margin
    candidates = [pref]
    norm = np.linalg.norm(pref)
    if norm > 0.0:
        candidates.append(pref * speed / norm)
    for p, n in zip(points, normals):
        candidates.append(pref - ((pref - p) @ n) * n)
        # Where the line meets the circle: p + t d, d along the line.
        d = np.array([-n[1], n[0]])
        b = p @ d
        disc = b * b - (p @ p - speed * speed)
        if disc >= 0.0:
            candidates += [p + (-b - math.sqrt(disc)) * d, p + (-b + math.sqrt(disc)) * d]
    for a in range(len(planes)):
        for b in range(a + 1, len(planes)):
            m = np.array([normals[a], normals[b]])
            if abs(np.linalg.det(m)) > 1e-12:
                rhs = np.array([points[a] @ normals[a], points[b] @ normals[b]])
                candidates.append(np.linalg.solve(m, rhs))
    best = None
    for c in candidates:
        feasible = (np.linalg.norm(c) <= speed + TOL
                    and all((c - p) @ n >= -TOL for p, n in zip(points, normals)))
        if feasible and (best is None
                         or np.linalg.norm(c - pref) < np.linalg.norm(best - pref)):
            best = c
    return best


def reference_velocities(pos, vel, pref, radius, max_speed, tau, dt, weights, immovable,
                         groups, ignore):
    """
    Return the reference velocity per agent, None where its half-planes are infeasible.

    Infeasible means: not feasible within MARGIN. Every other agent is a neighbour unless
    ignored. Immovable agents are planned first (they avoid only each other); the movable ones
    avoid them as they will move (None too when that is unknown, an immovable agent's
    half-planes being infeasible).
    """
    n = pos.shape[0]

    def ignores(a, b):
        return bool(ignore[a, groups[b]])

    answer = [None] * n
    new_vel = vel.copy()
    for planned in (np.flatnonzero(immovable), np.flatnonzero(~immovable)):
        for i in planned:
            others = [j for j in range(n) if j != i and not ignores(i, j)
                      and not (immovable[i] and not immovable[j])]
            shares = {j: reference_share(i, j, weights, immovable, ignores) for j in others}
            other_vel = {j: new_vel[j] if immovable[j] and not immovable[i] else vel[j]
                         for j in others}
            if any(np.isnan(v[0]) for v in other_vel.values()):
                continue
            planes = reference_half_planes(i, pos, vel, radius, tau, dt, others, shares,
                                           other_vel)
            if closest_feasible(planes, max_speed[i], pref[i], MARGIN) is None:
                new_vel[i] = math.nan
                continue
            answer[i] = closest_feasible(planes, max_speed[i], pref[i])
            new_vel[i] = answer[i]
    return answer


def random_scene(seed, n):
    """Agents 1-6 m apart at most, some overlapping; velocities and preferences random."""
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-3.0, 3.0, (n, 2))
    vel = rng.uniform(-1.5, 1.5, (n, 2))
    pref = rng.uniform(-2.0, 2.0, (n, 2))
    radius = rng.uniform(0.2, 0.6, n)
    max_speed = rng.uniform(0.5, 2.0, n)
    return rng, pos, vel, pref, radius, max_speed


def random_weights(rng, n):
    """Weights in [0, 1], with the special values 0, 0.5 and 1 often."""
    weights = rng.uniform(0.0, 1.0, n)
    special = rng.random(n) < 0.4
    weights[special] = rng.choice([0.0, 0.5, 1.0], int(np.sum(special)))
    return weights


# ---------------------------------------------------------------- against the reference


@FAST
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6), use_immovable=st.booleans(),
       use_groups=st.booleans())
def test_matches_brute_force_reference(seed, n, use_immovable, use_groups):
    """Random weights, immovable agents and ignored groups: the reference's velocities."""
    rng, pos, vel, pref, radius, max_speed = random_scene(seed, n)
    weights = random_weights(rng, n)
    immovable = (rng.random(n) < 0.3) if use_immovable else np.zeros(n, bool)
    groups = rng.integers(0, 3, n) if use_groups else np.zeros(n, np.int64)
    ignore = (rng.random((n, 3)) < 0.3) if use_groups else np.zeros((n, 3), bool)
    out = compute_velocities(pos, vel, pref, radius, max_speed, weights=weights,
                             immovable=immovable, groups=groups, ignore=ignore, **PARAMS)
    expected = reference_velocities(pos, vel, pref, radius, max_speed, PARAMS['time_horizon'],
                                    PARAMS['time_step'], weights, immovable | (weights == 1.0),
                                    groups, ignore)
    for i in range(n):
        if expected[i] is not None:
            np.testing.assert_allclose(out[i], expected[i], atol=1e-6, err_msg=f'agent {i}')


def test_reference_agrees_with_rvo2_mode_and_checks_many_agents():
    """The reference itself: RVO2's answers with the default shares, over many agents."""
    checked = 0
    for seed in range(40):
        _, pos, vel, pref, radius, max_speed = random_scene(seed, 5)
        out = compute_velocities(pos, vel, pref, radius, max_speed, **PARAMS)
        expected = reference_velocities(pos, vel, pref, radius, max_speed, 3.0, 0.25,
                                        np.full(5, 0.5), np.zeros(5, bool), np.zeros(5, int),
                                        np.zeros((5, 1), bool))
        for i in range(5):
            if expected[i] is not None:
                np.testing.assert_allclose(out[i], expected[i], atol=1e-6)
                checked += 1
    assert checked >= 100, checked


# ---------------------------------------------------------------- RVO2's case, bit for bit


def scene_with_obstacles(seed, n=60):
    """Random crowd in 12 m x 12 m with two squares and a segment, some agents overlapping."""
    return crowd_with_obstacles(np.random.default_rng(seed), n)


@pytest.mark.parametrize('guard', [False, True])
@pytest.mark.parametrize('seed', range(6))
def test_default_arguments_give_the_same_bits(seed, guard):
    """No arguments, explicit defaults, equal weights, an ignore nobody triggers: equal."""
    pos, vel, pref, radius, max_speed, obstacles = scene_with_obstacles(seed)
    n = pos.shape[0]
    params = {**PARAMS, 'neighbor_dist': 4.0, 'max_neighbors': 6, 'obstacles': obstacles,
              'collision_guard': guard}
    plain = compute_velocities(pos, vel, pref, radius, max_speed, **params)
    variants = [
        {'weights': np.full(n, 0.5), 'immovable': np.zeros(n, bool),
         'groups': np.zeros(n, np.int64), 'ignore': np.zeros((n, 3), bool)},
        {'weights': 0.5},
        {'weights': np.full(n, 0.8)},
        # Everybody in group 0, group 1 ignored by all: the shares' code path, same answer.
        {'groups': np.zeros(n, np.int64), 'ignore': np.tile([False, True], (n, 1))},
    ]
    for kwargs in variants:
        out = compute_velocities(pos, vel, pref, radius, max_speed, **kwargs, **params)
        assert np.array_equal(out, plain), kwargs


@pytest.mark.parametrize('guard', [False, True])
def test_kernel_with_default_shares_gives_the_same_bits(guard):
    """
    The solver's kernel with the shares' arrays at their defaults equals its RVO2 specialisation.

    Called as ``compute_velocities`` calls it (``_solve_rows``: both passes of the guard and its
    brake), so with the kernels the warm-up compiled.
    """
    for seed in range(4):
        pos, vel, pref, radius, max_speed, obstacles = scene_with_obstacles(100 + seed, 80)
        n = pos.shape[0]
        nbrs = agent_neighbors(pos, 4.0, 6)
        offsets, edges = obstacles.neighbors(pos, 2.0 * max_speed + radius)
        geometry = (tuple(AgentRows(pos, vel, pref, radius, max_speed, nbrs)),
                    tuple(NearObstacles(offsets, edges, obstacles.point, obstacles.next,
                                        obstacles.prev, obstacles.unit_dir, obstacles.convex)),
                    tuple(Horizons(0.25, 3.0, 2.0)))
        defaults = (np.full(n, 0.5), np.zeros(n, bool), np.zeros(n, np.int64),
                    np.zeros((n, 1), bool))
        results = [_solve_rows(*geometry, responsibility, None, None, np.ones(n, bool), guard,
                               vel.copy(), None)
                   for responsibility in (None, defaults)]
        assert np.array_equal(results[0], results[1])


# ---------------------------------------------------------------- weights and immovable agents


def cruising_pair(offset):
    """Agent 0 cruising +x at its preferred velocity; agent 1 ahead, coming the other way."""
    pos = np.array([[0.0, 0.0], [4.0, offset]])
    vel = np.array([[1.0, 0.0], [-1.0, 0.0]])
    return pos, vel, vel.copy()


@pytest.mark.parametrize('guard', [False, True])
@pytest.mark.parametrize('offset', [0.0, 0.1, -0.3])
def test_weight_one_and_immovable_keep_their_preferred_velocity(offset, guard):
    """Weight 1 or immovable: the preferred velocity exactly; the other dodges alone."""
    pos, vel, pref = cruising_pair(offset)
    params = {**PARAMS, 'collision_guard': guard}
    plain = compute_velocities(pos, vel, pref, 0.4, 1.5, **params)
    assert not np.allclose(plain[0], pref[0])  # in RVO2's way both give way
    heavy = compute_velocities(pos, vel, pref, 0.4, 1.5, weights=[1.0, 0.5], **params)
    fixed = compute_velocities(pos, vel, pref, 0.4, 1.5, immovable=[True, False], **params)
    assert np.array_equal(heavy[0], pref[0])
    assert np.array_equal(heavy, fixed)
    # The other takes it all: it turns further than in RVO2's half-half.
    assert abs(heavy[1, 1]) > abs(plain[1, 1]) + 0.05


@pytest.mark.parametrize('guard', [False, True])
def test_immovable_from_rest_and_among_three(guard):
    """Starting from rest toward two others with room to dodge: still the preference."""
    pos = np.array([[0.0, 0.0], [3.0, 0.2], [2.5, -0.9]])
    vel = np.array([[0.0, 0.0], [-0.8, 0.0], [-0.5, 0.3]])
    pref = np.array([[1.2, 0.0], [-0.8, 0.0], [-0.5, 0.3]])
    params = {**PARAMS, 'collision_guard': guard}
    out = compute_velocities(pos, vel, pref, 0.4, 1.5, immovable=[True, False, False], **params)
    assert np.array_equal(out[0], pref[0])
    assert not np.allclose(out[1:], pref[1:])


@pytest.mark.parametrize('guard', [False, True])
def test_inactive_immovable_agent_is_avoided_alone(guard):
    """Not ours to steer and immovable: kept as it is, the other avoids it all alone."""
    pos, vel, pref = cruising_pair(0.1)
    params = {**PARAMS, 'collision_guard': guard}
    active = np.array([False, True])
    out = compute_velocities(pos, vel, pref, 0.4, 1.5, active=active, immovable=~active,
                             **params)
    steered = compute_velocities(pos, vel, pref, 0.4, 1.5, immovable=~active, **params)
    half = compute_velocities(pos, vel, pref, 0.4, 1.5, active=active, **params)
    assert np.array_equal(out[0], vel[0])
    np.testing.assert_array_equal(out, steered)
    assert abs(out[1, 1]) > abs(half[1, 1]) + 0.05


def test_weights_split_the_avoidance():
    """Weights 0.8 and 0.2: the lighter agent turns four times as much (shares 0.2 / 0.8)."""
    pos, vel, pref = cruising_pair(0.05)
    out = compute_velocities(pos, vel, pref, 0.4, 1.5, weights=[0.8, 0.2], **PARAMS)
    change = np.linalg.norm(out - vel, axis=1)
    assert change[1] == pytest.approx(4.0 * change[0], rel=1e-6)


def test_two_immovable_agents_share_half_half():
    """Both immovable (or both weight 1): RVO2's answer."""
    pos, vel, pref = cruising_pair(0.05)
    plain = compute_velocities(pos, vel, pref, 0.4, 1.5, **PARAMS)
    for kwargs in ({'immovable': [True, True]}, {'weights': [1.0, 1.0]}):
        out = compute_velocities(pos, vel, pref, 0.4, 1.5, **kwargs, **PARAMS)
        np.testing.assert_allclose(out, plain, atol=1e-12)


def ring_swap(offset, start_x, steps=600):
    """Six agents swap across a 3 m ring while agent 0, immovable, crosses it along y=offset."""
    radius = 0.3
    sim = Simulation(time_step=0.1, neighbor_dist=6.0, max_neighbors=10, time_horizon=2.0,
                     time_horizon_obst=2.0, radius=radius, max_speed=1.0, collision_guard=True)
    angles = np.linspace(0.0, 2.0 * np.pi, 6, endpoint=False) + 0.3
    starts = 3.0 * np.c_[np.cos(angles), np.sin(angles)]
    sim.add_agent((start_x, offset), velocity=(1.0, 0.0))
    for p in starts:
        sim.add_agent(p)
    goals = np.vstack([[-start_x + 3.0, offset], -starts])
    sim.immovable = np.arange(7) == 0
    deviation = 0.0
    clearance = np.inf
    for _ in range(steps):
        to_goal = goals - sim.positions
        dist = np.hypot(to_goal[:, 0], to_goal[:, 1])
        if np.all(dist < 0.05):
            break
        sim.set_preferred_velocities(to_goal / np.maximum(dist, 1.0)[:, None])
        sim.step()
        deviation = max(deviation, abs(sim.positions[0, 1] - offset))
        gaps = np.hypot(*(sim.positions[1:] - sim.positions[0]).T) - 2.0 * radius
        clearance = min(clearance, gaps.min())
    return deviation, clearance, dist


@pytest.mark.parametrize('offset, start_x', [(0.0, -4.0), (0.3, -4.0), (0.3, -3.5)])
def test_immovable_crosses_a_ring_swap_on_a_straight_line(offset, start_x):
    """The immovable agent keeps its line; nobody overlaps it; everybody arrives."""
    deviation, clearance, dist = ring_swap(offset, start_x)
    assert deviation <= 0.05
    assert clearance >= -1e-9
    assert np.all(dist < 0.05)


# ---------------------------------------------------------------- groups


def crossing_pair():
    """Agent 0 (group 0) cruising +x, agent 1 (group 1) cruising -y across its path."""
    pos = np.array([[0.0, 0.0], [2.0, 2.0]])
    vel = np.array([[1.0, 0.0], [0.0, -1.0]])
    return pos, vel, vel.copy(), np.array([0, 1])


@pytest.mark.parametrize('guard', [False, True])
def test_ignoring_a_group_drives_straight_and_the_other_avoids_alone(guard):
    """0 ignores group 1: 0 keeps its preference, 1 avoids it as if 0 were immovable."""
    pos, vel, pref, groups = crossing_pair()
    params = {**PARAMS, 'collision_guard': guard}
    plain = compute_velocities(pos, vel, pref, 0.4, 1.5, **params)
    assert not np.allclose(plain, pref)
    out = compute_velocities(pos, vel, pref, 0.4, 1.5, groups=groups,
                             ignore=[[False, True], [False, False]], **params)
    assert np.array_equal(out[0], pref[0])
    assert not np.allclose(out[1], pref[1])
    fixed = compute_velocities(pos, vel, pref, 0.4, 1.5, immovable=[True, False], **params)
    assert np.array_equal(out, fixed)


@pytest.mark.parametrize('guard', [False, True])
def test_mutual_ignore_both_drive_straight(guard):
    """Each ignores the other's group: both keep their preferred velocities."""
    pos, vel, pref, groups = crossing_pair()
    out = compute_velocities(pos, vel, pref, 0.4, 1.5, groups=groups,
                             ignore=[[False, True], [True, False]], collision_guard=guard,
                             **PARAMS)
    assert np.array_equal(out, pref)


def test_ignored_agents_take_no_neighbour_place():
    """max_neighbors=1, the nearest agent ignored: the next one is avoided as if alone."""
    pos = np.array([[0.0, 0.0], [0.0, 1.5], [3.0, 0.1]])
    vel = np.array([[1.0, 0.0], [0.0, 0.0], [-1.0, 0.0]])
    pref = vel.copy()
    params = {**PARAMS, 'max_neighbors': 1}
    out = compute_velocities(pos, vel, pref, 0.4, 1.5, groups=[0, 1, 0],
                             ignore=[[False, True], [False, False], [False, True]], **params)
    alone = compute_velocities(pos[[0, 2]], vel[[0, 2]], pref[[0, 2]], 0.4, 1.5, **params)
    np.testing.assert_array_equal(out[[0, 2]], alone)


@FAST
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 60), neighbor_dist=st.floats(0.5, 8.0),
       max_neighbors=st.integers(0, 12), n_groups=st.integers(1, 4),
       ignored=st.floats(0.0, 1.0))
def test_agent_neighbors_with_ignore_match_brute_force(seed, n, neighbor_dist, max_neighbors,
                                                       n_groups, ignored):
    """The max_neighbors nearest agents not ignored, within neighbor_dist, nearest first."""
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-5.0, 5.0, (n, 2))
    groups = rng.integers(0, n_groups, n)
    ignore = rng.random((n, n_groups)) < ignored
    nbrs = agent_neighbors(pos, neighbor_dist, max_neighbors, groups=groups, ignore=ignore)
    assert nbrs.shape == (n, max_neighbors)
    dist = np.hypot(*(pos[:, None, :] - pos[None, :, :]).transpose(2, 0, 1))
    for i in range(n):
        counted = [j for j in np.argsort(dist[i], kind='stable')
                   if j != i and dist[i, j] < neighbor_dist and not ignore[i, groups[j]]]
        expected = counted[:max_neighbors]
        expected += [-1] * (max_neighbors - len(expected))
        assert nbrs[i].tolist() == expected, i


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize('kwargs, pattern', [
    ({'weights': [0.5, 1.5]}, r'weights must be within \[0, 1\]'),
    ({'weights': [0.5, -0.1]}, r'weights must be within \[0, 1\]'),
    ({'weights': [0.5, math.nan]}, 'weights has a NaN'),
    ({'weights': [0.5, 0.5, 0.5]}, r'weights must have shape \(2,\)'),
    ({'immovable': [True]}, r'immovable must have shape \(2,\)'),
    ({'immovable': [0.5, 0.0]}, 'immovable must hold booleans'),
    ({'groups': [0, 1]}, 'groups and ignore must be given together'),
    ({'ignore': [[True], [False]]}, 'groups and ignore must be given together'),
    ({'groups': [0, 2], 'ignore': [[False, True], [False, False]]},
     r'groups must be within \[0, 2\)'),
    ({'groups': [0, -1], 'ignore': [[False, True], [False, False]]},
     r'groups must be within \[0, 2\)'),
    ({'groups': [0.0, 1.0], 'ignore': [[False, True], [False, False]]},
     'groups must be integer'),
    ({'groups': [0, 1, 1], 'ignore': [[False, True], [False, False]]},
     r'groups must have shape \(2,\)'),
    ({'groups': [0, 1], 'ignore': [False, True]}, r'ignore must have shape \(2, G\)'),
    ({'groups': [0, 0], 'ignore': np.zeros((2, 0), bool)}, r'ignore must have shape \(2, G\)'),
    ({'groups': [0, 1], 'ignore': [[0, 2], [0, 0]]}, 'ignore must hold booleans'),
])
def test_bad_responsibility_arguments_raise(kwargs, pattern):
    """Shapes, finiteness, ranges and pairing are checked with a message naming the argument."""
    pos, vel, pref = cruising_pair(0.0)
    with pytest.raises(ValueError, match=pattern):
        compute_velocities(pos, vel, pref, 0.4, 1.5, **kwargs, **PARAMS)


def test_last_resort_braking_does_not_stop_a_robot_something_unsteered_runs_into():
    """Something we do not steer (a person) closing from behind: braking cannot help."""
    from orca_nav.core.orca.lines import brake_conflicts
    pos = np.array([[0.0, 0.0], [0.0, -0.42]])   # the person 0.02 m behind the disc
    nbrs = np.array([[1], [0]])
    active = np.array([True, False])              # the person is not ours to brake
    vel = np.array([[0.0, 0.1], [0.0, 0.6]])      # both northward, the person faster
    brake_conflicts(pos, vel, np.array([0.2, 0.2]), nbrs, 0.1, active)
    assert vel[0].tolist() == [0.0, 0.1]          # kept: stopping would only meet it sooner
    # Something standing in the way is still braked for.
    pos = np.array([[0.0, 0.0], [0.0, 0.45]])
    vel = np.array([[0.0, 0.5], [0.0, 0.0]])
    brake_conflicts(pos, vel, np.array([0.2, 0.2]), nbrs, 0.1, active)
    assert vel[0, 1] < 0.5
