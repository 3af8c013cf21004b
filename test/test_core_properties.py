"""
Property tests of the ORCA core on random scenes: limits, neighbour searches, behaviour.

Hypothesis runs derandomized (fixed examples) so CI is deterministic. Neighbour searches are
compared with brute force; the solver's output is checked against the speed limit and, where
linear program 2 succeeds, against every ORCA line of the agent.
"""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from orca_nav.core import agent_neighbors, compute_velocities, Obstacles
from orca_nav.core.orca.drive import preferred_velocities
from orca_nav.core.orca.lines import linear_program2
from orca_nav.testing.orca_cases import orca_lines_of
from orca_nav.testing.simulation import Simulation
import pytest

FAST = settings(max_examples=300, deadline=None, derandomize=True)

coord = st.floats(-15.0, 15.0, allow_nan=False)
component = st.one_of(st.floats(-60.0, 60.0), st.floats(-1e6, 1e6), st.just(0.0))
big_velocity = st.tuples(component, component)


def violation(lines, v):
    """det(d, p - v) per line (positive = violated) for one velocity v."""
    return lines[:, 2] * (lines[:, 1] - v[1]) - lines[:, 3] * (lines[:, 0] - v[0])


@st.composite
def convex_polygon(draw, long_edges=False):
    """Draw a counter-clockwise convex polygon with 3..7 distinct vertices."""
    k = draw(st.integers(3, 7))
    gaps = np.array(draw(st.lists(st.floats(0.2, 1.0), min_size=k, max_size=k)))
    angles = draw(st.floats(0.0, 6.3)) + 2.0 * math.pi * np.cumsum(gaps) / np.sum(gaps)
    size = draw(st.floats(10.0, 15.0) if long_edges else st.floats(0.2, 3.0))
    cx, cy = draw(coord), draw(coord)
    return np.stack([cx + size * np.cos(angles), cy + size * np.sin(angles)], axis=1)


@st.composite
def segment_sets(draw):
    """Free segments: some long (30 m), a chain of many short ones, and random ones."""
    segments = []
    for _ in range(draw(st.integers(0, 2))):
        x, y, a = draw(coord), draw(coord), draw(st.floats(0.0, 6.3))
        segments.append([[x, y], [x + 30.0 * math.cos(a), y + 30.0 * math.sin(a)]])
    if draw(st.booleans()):
        x, y = draw(coord), draw(coord)
        steps = draw(st.lists(st.tuples(st.floats(-0.4, 0.4), st.floats(-0.4, 0.4)),
                              min_size=1, max_size=40))
        for sx, sy in steps:
            segments.append([[x, y], [x + sx, y + sy]])
            x, y = x + sx, y + sy
    for _ in range(draw(st.integers(0, 3))):
        segments.append([[draw(coord), draw(coord)], [draw(coord), draw(coord)]])
    return np.array(segments, dtype=float).reshape(-1, 2, 2)


@st.composite
def obstacle_sets(draw, n_agents=0, owners=False):
    """Obstacles.build from random convex polygons (some with long edges) and segments."""
    polygons = draw(st.lists(convex_polygon(), max_size=3))
    polygons += draw(st.lists(convex_polygon(long_edges=True), max_size=1))
    segments = draw(segment_sets())
    owner = None
    if owners:
        owner = draw(st.lists(st.integers(-1, n_agents - 1), min_size=len(segments),
                              max_size=len(segments)))
    return Obstacles.build(polygons, segments, owner)


@st.composite
def agent_positions(draw, max_agents=40, grid=False):
    """Random positions; some coincide exactly, some clusters overlap."""
    n = draw(st.integers(1, max_agents))
    if grid:
        element = st.tuples(st.integers(-4, 4), st.integers(-4, 4))
    else:
        element = st.tuples(coord, coord)
    pos = np.array(draw(st.lists(element, min_size=n, max_size=n)), dtype=float)
    pos *= draw(st.sampled_from([1.0, 1.0, 0.2, 0.02]))
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                              max_size=4)):
        pos[a] = pos[b]
    return pos


@st.composite
def fleets(draw):
    """Draw a complete compute_velocities input: agents, limits, parameters, obstacles."""
    pos = draw(agent_positions())
    n = pos.shape[0]
    radius = np.array(draw(st.lists(st.floats(1e-3, 3.0), min_size=n, max_size=n)))
    speed = st.one_of(st.just(0.0), st.floats(0.0, 5.0))
    max_speed = np.array(draw(st.lists(speed, min_size=n, max_size=n)))
    vel = np.array(draw(st.lists(big_velocity, min_size=n, max_size=n)))
    pref = np.array(draw(st.lists(big_velocity, min_size=n, max_size=n)))
    params = {'time_step': draw(st.floats(0.02, 1.0)),
              'neighbor_dist': draw(st.floats(0.5, 30.0)),
              'max_neighbors': draw(st.integers(0, 12)),
              'time_horizon': draw(st.floats(0.2, 10.0)),
              'time_horizon_obst': draw(st.floats(0.2, 10.0))}
    obstacles = draw(st.one_of(st.none(), obstacle_sets()))
    return pos, vel, pref, radius, max_speed, params, obstacles


@pytest.mark.slow
@FAST
@given(fleet=fleets(), guard=st.booleans())
def test_velocities_finite_and_within_max_speed(fleet, guard):
    """Any scene: finite (N, 2) output, every speed at most the agent's max speed."""
    pos, vel, pref, radius, max_speed, params, obstacles = fleet
    out = compute_velocities(pos, vel, pref, radius, max_speed, obstacles=obstacles,
                             collision_guard=guard, **params)
    assert out.shape == pos.shape
    assert np.all(np.isfinite(out))
    assert np.all(np.hypot(out[:, 0], out[:, 1]) <= max_speed + 1e-9)


@pytest.mark.parametrize('guard', [False, True])
@pytest.mark.parametrize('length', [1.0, 1e-8, 1e-160, 1e-200])
def test_degenerate_obstacle_contacts_stay_finite(length, guard):
    """Agents on, next to (denormal offsets) and at the ends of tiny or normal segments."""
    seg = np.array([[[0.0, 0.0], [length, 0.0]], [[0.0, 0.0], [0.0, length]]])
    obstacles = Obstacles.build([[(2.0, 2.0), (3.0, 2.0), (3.0, 3.0)]], seg)
    pos = np.array([[0.0, 0.0], [length, 0.0], [0.0, 2.2e-313], [-5e-324, 0.0], [0.5, -0.5],
                    [2.0, 2.0], [3.0, 2.0], [2.5, 2.0], [2.5, 1.9999999999999998]])
    n = pos.shape[0]
    vel = np.tile([[1.0, -1.0]], (n, 1))
    pref = np.tile([[-1.0, 2.0]], (n, 1))
    max_speed = np.linspace(0.0, 2.0, n)
    out = compute_velocities(pos, vel, pref, 0.3, max_speed, time_step=0.25, neighbor_dist=5.0,
                             max_neighbors=5, time_horizon=2.0, time_horizon_obst=2.0,
                             obstacles=obstacles, collision_guard=guard)
    assert out.shape == (n, 2) and np.all(np.isfinite(out))
    assert np.all(np.hypot(out[:, 0], out[:, 1]) <= max_speed + 1e-9)


@FAST
@given(pos=st.one_of(agent_positions(), agent_positions(grid=True)),
       neighbor_dist=st.floats(0.1, 12.0), max_neighbors=st.integers(0, 45))
def test_agent_neighbors_match_brute_force(pos, neighbor_dist, max_neighbors):
    """Nearest first, within neighbor_dist, at most max_neighbors, self excluded, -1 padded."""
    n = pos.shape[0]
    nbrs = agent_neighbors(pos, neighbor_dist, max_neighbors)
    assert nbrs.shape == (n, max_neighbors)
    dist = np.hypot(*(pos[:, None, :] - pos[None, :, :]).transpose(2, 0, 1))
    tol = 1e-9  # distances this close to a cut-off may go either way (rounding)
    for i in range(n):
        others = np.arange(n) != i
        inside = set(np.flatnonzero(others & (dist[i] < neighbor_dist - tol)).tolist())
        border = set(np.flatnonzero(others & (np.abs(dist[i] - neighbor_dist) <= tol)).tolist())
        row = nbrs[i]
        m = int(np.sum(row >= 0))
        got = row[:m]
        assert np.all(row[m:] == -1), (i, row)
        assert i not in got and len(set(got.tolist())) == m
        assert set(got.tolist()) <= inside | border
        assert min(max_neighbors, len(inside)) <= m <= min(max_neighbors, len(inside | border))
        got_d = dist[i, got]
        assert np.all(np.diff(got_d) >= -tol), (i, got, got_d)
        if m < max_neighbors:
            assert inside <= set(got.tolist())
        elif m:
            # Nobody strictly nearer than the farthest one kept was left out (ties aside).
            nearer = {j for j in inside if dist[i, j] < got_d[-1] - tol}
            assert nearer <= set(got.tolist()), (i, sorted(nearer - set(got.tolist())))


def brute_obstacle_neighbors(obstacles, positions, ranges):
    """Per agent: (sure, maybe, distance) of edges it must consider, by definition."""
    out = []
    for i, c in enumerate(positions):
        sure, maybe, dist = set(), set(), {}
        for e in range(obstacles.num_vertices):
            a = obstacles.point[e]
            b = obstacles.point[obstacles.next[e]]
            ab, ac = b - a, c - a
            left_of = ab[0] * ac[1] - ab[1] * ac[0]
            r = min(max((ac @ ab) / (ab @ ab), 0.0), 1.0)
            d = math.hypot(*(a + r * ab - c))
            dist[e] = d
            owner = obstacles.owner[e]
            if owner >= 0 and owner != i:
                continue
            scale = 1e-9 * (1.0 + np.abs(ab).sum() * (1.0 + np.abs(ac).sum()))
            if left_of < -scale and d < ranges[i] - 1e-9:
                sure.add(e)
            elif left_of < scale and d < ranges[i] + 1e-9:
                maybe.add(e)  # on the border of either condition
        out.append((sure, maybe, dist))
    return out


@pytest.mark.slow
@FAST
@given(data=st.data())
def test_obstacle_neighbors_match_brute_force(data):
    """Edges strictly outside-facing the agent, nearer than its range, owned by it or nobody."""
    pos = data.draw(agent_positions(max_agents=15))
    n = pos.shape[0]
    obstacles = data.draw(obstacle_sets(n_agents=n, owners=True))
    ranges = np.array(data.draw(st.lists(st.floats(0.1, 30.0), min_size=n, max_size=n)))
    offsets, edges = obstacles.neighbors(pos, ranges)
    assert offsets.shape == (n + 1,) and offsets[0] == 0 and offsets[-1] == edges.shape[0]
    for i, (sure, maybe, dist) in enumerate(brute_obstacle_neighbors(obstacles, pos, ranges)):
        got = edges[offsets[i]:offsets[i + 1]].tolist()
        assert len(set(got)) == len(got)
        assert sure <= set(got) <= sure | maybe, (i, sorted(sure), sorted(got))
        d = np.array([dist[e] for e in got])
        assert np.all(np.diff(d) >= -1e-12), (i, got, d)


def run_until_arrived(sim, goals, max_steps, right_bias=0.15):
    """
    Step toward the goals; return (steps, smallest gap between discs during the run).

    Preferred velocities come from ``drive.preferred_velocities`` as in the node, turned right
    by atan(right_bias): without it exactly symmetric scenes deadlock (a property of ORCA).
    """
    dt = sim.time_step
    min_gap = math.inf
    n = sim.num_agents
    for step in range(max_steps):
        pref, reached, _ = preferred_velocities(sim.positions, goals, np.ones(n, bool),
                                                sim.max_speed, 0.0, 0.01, time_step=dt,
                                                right_bias=right_bias)
        if np.all(reached):
            return step, min_gap
        sim.set_preferred_velocities(pref)
        before = sim.positions.copy()
        sim.step()
        # Closest approach of every pair during the step (straight-line motion).
        for i in range(n):
            for j in range(i + 1, n):
                d0 = before[j] - before[i]
                w = sim.velocities[j] - sim.velocities[i]
                t = 0.0 if w @ w == 0.0 else min(max(-(d0 @ w) / (w @ w), 0.0), dt)
                gap = np.linalg.norm(d0 + t * w) - sim.radius[i] - sim.radius[j]
                min_gap = min(min_gap, gap)
    return max_steps, min_gap


def make_sim():
    """Make a simulation with radius 0.5, max speed 1 and the collision guard on (the default)."""
    return Simulation(time_step=0.25, neighbor_dist=15.0, max_neighbors=10, time_horizon=5.0,
                      time_horizon_obst=5.0, radius=0.5, max_speed=1.0)


def test_head_on_pair_passes_without_contact():
    """Two agents swapping along one line never touch and both arrive."""
    sim = make_sim()
    sim.add_agent((-5.0, 0.0))
    sim.add_agent((5.0, 0.0))
    goals = np.array([[5.0, 0.0], [-5.0, 0.0]])
    steps, min_gap = run_until_arrived(sim, goals, 200)
    assert steps < 200, sim.positions
    assert min_gap >= -1e-6
    # They really had to give way: 10 m at 1 m/s, 0.25 s steps, is 40 steps straight.
    assert steps > 40


def test_eight_agents_swap_across_a_circle():
    """Eight agents crossing to the antipodes of a circle never touch and all arrive."""
    sim = make_sim()
    angles = np.linspace(0.0, 2.0 * math.pi, 8, endpoint=False)
    start = 6.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    for p in start:
        sim.add_agent(p)
    steps, min_gap = run_until_arrived(sim, -start, 400)
    assert steps < 400, sim.positions
    assert min_gap >= -1e-6
    assert steps > 48


@pytest.mark.parametrize('seed', range(3))
def test_output_satisfies_every_line_where_lp2_succeeds(seed):
    """
    RVO2 mode: where the lines are feasible the answer satisfies all of them (LP2's point).

    Where they conflict but the obstacle lines alone are feasible, the obstacle lines hold.
    """
    rng = np.random.default_rng(500 + seed)
    checked_feasible = checked_obstacle = 0
    for _ in range(15):
        n = int(rng.integers(2, 41))
        pos = rng.uniform(-8.0, 8.0, (n, 2))
        vel = rng.uniform(-3.0, 3.0, (n, 2))
        pref = rng.uniform(-4.0, 4.0, (n, 2))
        radius = rng.uniform(0.2, 1.0, n)
        max_speed = rng.uniform(0.0, 2.5, n)
        polygons = [c + s * np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
                    for c, s in zip(rng.uniform(-8.0, 8.0, (3, 2)), rng.uniform(0.3, 1.5, 3))]
        segments = rng.uniform(-10.0, 10.0, (4, 2, 2))
        ob = Obstacles.build(polygons, segments)
        ts, nd, k, th, tho = 0.25, 6.0, 8, 3.0, 2.0
        out = compute_velocities(pos, vel, pref, radius, max_speed, time_step=ts,
                                 neighbor_dist=nd, max_neighbors=k, time_horizon=th,
                                 time_horizon_obst=tho, obstacles=ob, collision_guard=False)
        nbrs = agent_neighbors(pos, nd, k)
        offsets, edges = ob.neighbors(pos, tho * max_speed + radius)
        for i in range(n):
            lines, n_obst = orca_lines_of(i, pos, vel, radius, nbrs,
                                          edges[offsets[i]:offsets[i + 1]], ob.point, ob.next,
                                          ob.prev, ob.unit_dir, ob.convex, ts, th, tho)
            m = lines.shape[0]
            fail, x, y = linear_program2(lines, m, max_speed[i], pref[i, 0], pref[i, 1], False)
            if fail == m:
                assert np.all(violation(lines, out[i]) <= 1e-6), (seed, i)
                assert out[i] == pytest.approx([x, y], abs=1e-9)
                checked_feasible += 1
            elif linear_program2(lines, n_obst, max_speed[i], 0.0, 0.0, False)[0] == n_obst:
                assert np.all(violation(lines[:n_obst], out[i]) <= 1e-6), (seed, i)
                checked_obstacle += 1
    assert checked_feasible >= 50 and checked_obstacle >= 5, (checked_feasible, checked_obstacle)
