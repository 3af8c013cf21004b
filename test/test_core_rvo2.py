"""
orca_nav's ORCA against RVO2 itself (the C++ library through pyrvo).

Each geometric case of the obstacle and agent half-planes is reached by sweeping agents around
obstacles and neighbours, and every half-plane is compared with the one RVO2 builds. Whole
steps of random crowds are compared too. RVO2 computes in float32, hence the tolerances.
"""

import numpy as np
from orca_nav.core import compute_velocities, Obstacles
from orca_nav.core.orca import lines as orca_lines
from orca_nav.testing import orca_cases, rvo2
import pytest

pyrvo = pytest.importorskip('pyrvo')

# RVO2 rounds to float32: lines agree to about 1e-5 relative; allow some slack.
LINE_TOL = 2e-4
STEP_TOL = 1e-3  # [m/s] agreement threshold for one step

OBSTACLES = {
    'segment': [np.array([[0.0, 0.0], [4.0, 1.0]])],
    'square': [np.array([[0.0, 0.0], [3.0, 0.0], [3.0, 3.0], [0.0, 3.0]])],
    'l_shape': [np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 1.0], [1.0, 1.0], [1.0, 4.0],
                          [0.0, 4.0]])],
    'thin_wedge': [np.array([[0.0, 0.0], [6.0, 0.5], [0.0, 1.0]])],
    'polyline_as_segments': [np.array([[0.0, 0.0], [2.0, 0.0]]),
                             np.array([[2.0, 0.0], [3.0, 2.0]])],
}


def rvo2_lines(sim, agent):
    """RVO2's ORCA lines of one agent as rows [px, py, dx, dy]."""
    rows = []
    for k in range(sim.get_agent_num_orca_lines(agent)):
        direction, point = sim.get_agent_orca_line(agent, k)
        rows.append([point[0], point[1], direction[0], direction[1]])
    return np.array(rows).reshape(-1, 4)


def obstacles_as_rvo2_has_them(sim, polygons):
    """Return the obstacle vertex graph RVO2 built (its tree may split edges) as Obstacles."""
    count = sim.get_num_obstacle_vertices()
    point = np.array([[sim.get_obstacle_vertex(v).x, sim.get_obstacle_vertex(v).y]
                      for v in range(count)])
    nxt = np.array([sim.get_next_obstacle_vertex(v) for v in range(count)])
    prv = np.array([sim.get_prev_obstacle_vertex(v) for v in range(count)])
    convex = np.ones(count, bool)  # RVO2 declares the vertices it adds by splitting convex
    original = Obstacles.build(polygons)
    convex[:original.num_vertices] = original.convex
    return Obstacles(point, nxt, prv, np.full(count, -1), convex=convex)


def sweep_obstacle(polygons, rng, samples, th_obst):
    """Compare the obstacle lines of single agents placed around ``polygons`` with RVO2's."""
    cases, compared, mismatches, order_ties = [], 0, [], 0
    params = {'time_step': 0.25, 'neighbor_dist': 1.0, 'max_neighbors': 0,
              'time_horizon': 5.0, 'time_horizon_obst': th_obst}
    for _ in range(samples):
        radius = rng.uniform(0.2, 0.8)
        pos = rng.uniform(-3.0, 7.0, 2)
        vel = rng.normal(0.0, 1.0, 2)
        max_speed = 2.0
        sim = rvo2.make_simulator(pos[None], vel[None], radius, max_speed,
                                  polygons=polygons, **params)
        rvo2.set_preferred(sim, np.zeros((1, 2)))
        obstacles = obstacles_as_rvo2_has_them(sim, polygons)
        sim.do_step()
        theirs = [sim.get_agent_obstacle_neighbor(0, k)
                  for k in range(sim.get_agent_num_obstacle_neighbors(0))]
        offsets, edges = obstacles.neighbors(pos[None], np.array([th_obst * max_speed + radius]))
        if list(edges) != theirs:
            # Equidistant edges (a shared nearest vertex): RVO2 orders them by its tree walk.
            assert sorted(edges) == sorted(theirs)
            order_ties += 1
            continue
        lines, n_obst, obstacle_cases, _ = orca_cases.orca_lines_with_cases(
            0, pos[None], vel[None], np.array([radius]), np.full((1, 0), -1, np.int64), edges,
            obstacles.point, obstacles.next, obstacles.prev, obstacles.unit_dir,
            obstacles.convex, 0.25, 5.0, th_obst)
        cases.extend(obstacle_cases.tolist())
        ref = rvo2_lines(sim, 0)
        compared += 1
        if ref.shape != lines.shape or not np.allclose(lines, ref, atol=LINE_TOL):
            mismatches.append((pos, vel, radius, lines, ref))
    return np.array(cases), compared, mismatches, order_ties


@pytest.mark.parametrize('name', sorted(OBSTACLES))
def test_obstacle_lines_match_rvo2(name):
    """Every obstacle half-plane equals RVO2's, agent by agent, around each obstacle type."""
    rng = np.random.default_rng(7)
    cases, compared, mismatches, ties = sweep_obstacle(OBSTACLES[name], rng, 400, 2.0)
    assert compared >= 250, f'only {compared} comparable samples ({ties} tie orders)'
    assert not mismatches, f'{len(mismatches)} of {compared} differ; first: {mismatches[0]}'
    assert len(cases) > 0


def test_every_obstacle_case_is_reached_and_matches():
    """The sweep reaches each geometric case of RVO2's obstacle half-planes."""
    rng = np.random.default_rng(11)
    seen = []
    for name in sorted(OBSTACLES):
        for th_obst in (0.5, 2.0, 6.0):
            cases, compared, mismatches, _ = sweep_obstacle(OBSTACLES[name], rng, 150,
                                                            th_obst)
            assert not mismatches, f'{name}: first mismatch {mismatches[0]}'
            seen.extend(cases.tolist())
    seen = np.array(seen)
    base = seen & orca_lines.CASE_MASK
    for case in ('COVERED', 'COLLIDE_LEFT_VERTEX', 'COLLIDE_RIGHT_VERTEX', 'COLLIDE_SEGMENT',
                 'OBLIQUE_NONCONVEX', 'LEFT_CUTOFF_CIRCLE', 'RIGHT_CUTOFF_CIRCLE',
                 'CUTOFF_LINE', 'LEFT_LEG', 'RIGHT_LEG'):
        assert np.any(base == getattr(orca_lines, 'CASE_' + case)), f'case {case} never reached'
    for flag in ('OBLIQUE_LEFT', 'OBLIQUE_RIGHT', 'NONCONVEX_LEFT', 'NONCONVEX_RIGHT',
                 'LEFT_FOREIGN', 'RIGHT_FOREIGN'):
        assert np.any(seen & getattr(orca_lines, 'FLAG_' + flag)), f'{flag} never reached'


def test_agent_lines_match_rvo2_in_every_case():
    """Agent half-planes (cut-off circle, legs, overlap) equal RVO2's for random pairs."""
    rng = np.random.default_rng(3)
    params = {'time_step': 0.25, 'neighbor_dist': 20.0, 'max_neighbors': 1,
              'time_horizon': 3.0, 'time_horizon_obst': 3.0}
    seen = []
    for _ in range(600):
        pos = rng.uniform(-3.0, 3.0, (2, 2))
        vel = rng.normal(0.0, 1.5, (2, 2))
        radius = rng.uniform(0.2, 1.5, 2)
        sim = rvo2.make_simulator(pos, vel, radius, 2.0, **params)
        rvo2.set_preferred(sim, np.zeros((2, 2)))
        sim.do_step()
        nbrs = np.array([[1], [0]], np.int64)
        for a in (0, 1):
            lines, n_obst, _, agent_cases = orca_cases.orca_lines_with_cases(
                a, pos, vel, radius, nbrs, np.zeros(0, np.int64), np.zeros((0, 2)),
                np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2)),
                np.zeros(0, bool), 0.25, 3.0, 3.0)
            np.testing.assert_allclose(lines, rvo2_lines(sim, a), atol=LINE_TOL)
            seen.extend(agent_cases.tolist())
    for case in ('CUTOFF', 'LEFT_LEG', 'RIGHT_LEG', 'OVERLAP'):
        assert getattr(orca_lines, 'CASE_AGENT_' + case) in seen, \
            f'agent case {case} never reached'


def random_scene(seed, n=200, with_obstacles=True):
    """~200 agents with varied radii, speeds and velocities among varied obstacles."""
    rng = np.random.default_rng(seed)
    polygons = []
    if with_obstacles:
        for cx, cy in ((-12.0, -12.0), (0.0, -12.0), (12.0, -12.0), (-12.0, 12.0)):
            s = rng.uniform(1.0, 3.0)  # convex squares
            polygons.append(np.array([[cx - s, cy - s], [cx + s, cy - s], [cx + s, cy + s],
                                      [cx - s, cy + s]]))
        polygons.append(np.array([[8.0, 8.0], [14.0, 8.0], [14.0, 9.5], [9.5, 9.5],
                                  [9.5, 14.0], [8.0, 14.0]]))  # non-convex L
        for x in (-4.0, 0.0, 4.0):  # free segments
            polygons.append(np.array([[x, 2.0], [x + rng.uniform(-2, 2), 7.0]]))
    obstacles = Obstacles.build(polygons)
    pos = []
    while len(pos) < n:
        p = rng.uniform(-18.0, 18.0, 2)
        if obstacles.num_vertices:
            a = obstacles.point
            b = obstacles.point[obstacles.next]
            t = np.clip(np.einsum('ij,ij->i', p - a, b - a)
                        / np.einsum('ij,ij->i', b - a, b - a), 0, 1)
            if np.min(np.hypot(*(a + t[:, None] * (b - a) - p).T)) < 1.0:
                continue
            inside = False
            for poly in polygons:
                edge = np.roll(poly, -1, 0) - poly
                rel = p - poly
                inside |= len(poly) > 2 and bool(
                    np.all(edge[:, 0] * rel[:, 1] - edge[:, 1] * rel[:, 0] > 0))
            if inside:
                continue
        pos.append(p)
    pos = np.array(pos)
    radius = rng.uniform(0.2, 0.6, n)
    max_speed = rng.uniform(0.5, 2.0, n)
    vel = rng.normal(0.0, 1.0, (n, 2))
    speed = np.hypot(*vel.T)
    vel *= (np.minimum(speed, max_speed) / np.maximum(speed, 1e-9))[:, None]
    pref = rng.normal(0.0, 1.5, (n, 2))
    return pos, vel, pref, radius, max_speed, polygons


@pytest.mark.parametrize('with_obstacles', [False, True])
def test_one_step_agrees_with_rvo2_on_random_scenes(with_obstacles):
    """>= 99 % of agents get RVO2's new velocity within 1e-3 m/s (the agreement criterion)."""
    params = {'time_step': 0.25, 'neighbor_dist': 6.0, 'max_neighbors': 10,
              'time_horizon': 4.0, 'time_horizon_obst': 4.0}
    errors = []
    for seed in range(6):
        pos, vel, pref, radius, max_speed, polygons = random_scene(seed, 200, with_obstacles)
        ours = compute_velocities(pos, vel, pref, radius, max_speed,
                                  obstacles=Obstacles.build(polygons), **params)
        ref = rvo2.one_step(pos, vel, pref, radius, max_speed, polygons=polygons, **params)
        errors.append(np.hypot(*(ours - ref).T))
    errors = np.concatenate(errors)
    share = np.mean(errors <= STEP_TOL)
    print(f'obstacles={with_obstacles}: {share:.2%} of {errors.size} agents within '
          f'{STEP_TOL} m/s, worst {errors.max():.2e} m/s')
    assert share >= 0.99
