"""
RVO2's example scenes (Circle, Blocks) and a dense crowd, run to completion.

Each scene has the same numbers as RVO2's ``examples/`` and is driven the same way: the preferred
velocity points at the goal, normalised when longer than 1 m/s (agents slow down in the last
metre); Blocks adds a seeded random perturbation of up to 1e-4 to break symmetric deadlocks.

Example::

    scene = circle_scene(250)
    result = run_scene(scene)
    print(result.steps, result.reached, result.min_clearance)
"""

from dataclasses import dataclass, field

import numpy as np
from orca_nav.testing.simulation import Simulation
from scipy.spatial import cKDTree

# RVO2's example settings shared by every scene.
TIME_STEP = 0.25  # [s]
NEIGHBOR_DIST = 15.0  # [m]
MAX_NEIGHBORS = 10
MAX_SPEED = 2.0  # [m/s]


@dataclass
class Scene:
    """A simulation plus what it takes to drive it and to judge it done."""

    name: str
    sim: Simulation
    goals: np.ndarray  # (N, 2) [m]
    done_distance: np.ndarray  # (N,) an agent is home within this distance of its goal [m]
    perturbation: float = 0.0  # [m/s] magnitude of the random preferred-velocity noise
    seed: int = 0
    obstacles: list = field(default_factory=list)


@dataclass
class SceneResult:
    """Outcome of ``run_scene``."""

    steps: int
    reached: bool
    min_clearance: float  # smallest (distance - sum of radii) over all pairs and steps [m]
    min_obstacle_clearance: float  # smallest (distance to an obstacle - radius) [m]
    trajectory: np.ndarray = None  # (steps + 1, N, 2) when recorded


def circle_scene(n=250, radius=1.5, circle_radius=200.0):
    """RVO2's Circle: n agents on a circle of 200 m swap to their antipodes."""
    sim = Simulation(time_step=TIME_STEP, neighbor_dist=NEIGHBOR_DIST,
                     max_neighbors=MAX_NEIGHBORS, time_horizon=10.0, time_horizon_obst=10.0,
                     radius=radius, max_speed=MAX_SPEED)
    angles = 2.0 * np.pi * np.arange(n) / n
    starts = circle_radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    for p in starts:
        sim.add_agent(p)
    return Scene('circle', sim, -starts, np.full(n, radius))


def blocks_scene(seed=0):
    """RVO2's Blocks: 100 agents in four groups cross a field of four square blocks."""
    sim = Simulation(time_step=TIME_STEP, neighbor_dist=NEIGHBOR_DIST,
                     max_neighbors=MAX_NEIGHBORS, time_horizon=5.0, time_horizon_obst=5.0,
                     radius=2.0, max_speed=MAX_SPEED)
    goals = []
    for i in range(5):
        for j in range(5):
            for start, goal in (((55.0 + 10 * i, 55.0 + 10 * j), (-75.0, -75.0)),
                                ((-55.0 - 10 * i, 55.0 + 10 * j), (75.0, -75.0)),
                                ((55.0 + 10 * i, -55.0 - 10 * j), (-75.0, 75.0)),
                                ((-55.0 - 10 * i, -55.0 - 10 * j), (75.0, 75.0))):
                sim.add_agent(start)
                goals.append(goal)
    blocks = [
        [(-10.0, 40.0), (-40.0, 40.0), (-40.0, 10.0), (-10.0, 10.0)],
        [(10.0, 40.0), (10.0, 10.0), (40.0, 10.0), (40.0, 40.0)],
        [(10.0, -40.0), (40.0, -40.0), (40.0, -10.0), (10.0, -10.0)],
        [(-10.0, -40.0), (-10.0, -10.0), (-40.0, -10.0), (-40.0, -40.0)],
    ]
    for block in blocks:
        sim.add_obstacle(block)
    return Scene('blocks', sim, np.array(goals), np.full(100, 20.0), perturbation=1e-4,
                 seed=seed, obstacles=[np.array(b) for b in blocks])


def dense_crowd_scene(n=1000, spacing=None, seed=0):
    """
    Make a square crowd so tight that every agent has its full ``max_neighbors``.

    Agents of radius 0.5 stand on a jittered grid 1.5 m apart (about 78 agents within the 15 m
    neighbour distance) and head to the mirrored point, so they all cross the centre.
    """
    rng = np.random.default_rng(seed)
    spacing = 1.5 if spacing is None else spacing
    side = int(np.ceil(np.sqrt(n)))
    grid = np.stack(np.meshgrid(np.arange(side), np.arange(side)), -1).reshape(-1, 2)[:n]
    starts = (grid - (side - 1) / 2.0) * spacing
    starts = starts + rng.uniform(-0.1, 0.1, starts.shape)
    sim = Simulation(time_step=TIME_STEP, neighbor_dist=NEIGHBOR_DIST,
                     max_neighbors=MAX_NEIGHBORS, time_horizon=10.0, time_horizon_obst=10.0,
                     radius=0.5, max_speed=MAX_SPEED)
    for p in starts:
        sim.add_agent(p)
    return Scene('dense', sim, -starts, np.full(n, 0.5))


def preferred_velocities(positions, goals, rng=None, perturbation=0.0):
    """RVO2's examples: toward the goal, normalised when longer than 1, plus optional noise."""
    pref = goals - positions
    length = np.hypot(pref[:, 0], pref[:, 1])
    long = length > 1.0
    pref[long] /= length[long, None]
    if perturbation > 0.0:
        angle = rng.uniform(0.0, 2.0 * np.pi, len(pref))
        dist = rng.uniform(0.0, perturbation, len(pref))
        pref += dist[:, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return pref


def advance(scene, steps):
    """Walk a scene forward ``steps`` steps (with orca_nav), e.g. into its crowded phase."""
    rng = np.random.default_rng(scene.seed)
    for _ in range(steps):
        scene.sim.set_preferred_velocities(preferred_velocities(
            scene.sim.positions, scene.goals, rng, scene.perturbation))
        scene.sim.step()
    return scene


def crowd_with_polygons(rng, n):
    """
    Random crowd of n agents in 12 m x 12 m with two squares and a segment (some overlap).

    Returns positions, velocities, preferred velocities (N, 2), radius, max_speed (N,) and
    the obstacle polygons (the segment as a polygon of two vertices, as RVO2 takes it),
    drawn from ``rng`` in this order.
    """
    pos = rng.uniform(-6.0, 6.0, (n, 2))
    vel = rng.normal(0.0, 0.8, (n, 2))
    pref = rng.normal(0.0, 1.0, (n, 2))
    radius = rng.uniform(0.2, 0.6, n)
    max_speed = rng.uniform(0.5, 2.0, n)
    square = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    polygons = [square + rng.uniform(-5.0, 5.0, 2) for _ in range(2)]
    polygons.append(np.array([[-6.0, -6.5], [6.0, -5.5]]))
    return pos, vel, pref, radius, max_speed, polygons


def crowd_with_obstacles(rng, n):
    """``crowd_with_polygons`` with the obstacles built (squares as polygons, a segment)."""
    from orca_nav.core import Obstacles
    *agents, polygons = crowd_with_polygons(rng, n)
    return (*agents, Obstacles.build(polygons[:2], [polygons[2]]))


def min_clearance(positions, radius):
    """Smallest distance minus the sum of radii over all pairs (inf with fewer than 2 agents)."""
    if len(positions) < 2:
        return np.inf
    tree = cKDTree(positions)
    pairs = tree.query_pairs(2.0 * float(np.max(radius)), output_type='ndarray')
    if len(pairs) == 0:
        return np.inf
    d = np.hypot(*(positions[pairs[:, 0]] - positions[pairs[:, 1]]).T)
    return float(np.min(d - radius[pairs[:, 0]] - radius[pairs[:, 1]]))


def obstacle_clearance(positions, radius, obstacles):
    """Smallest distance from an agent's disc to an obstacle edge (inf without obstacles)."""
    if obstacles.num_vertices == 0 or len(positions) == 0:
        return np.inf
    a = obstacles.point
    ab = obstacles.point[obstacles.next] - a
    ap = positions[:, None, :] - a[None]
    t = np.clip(np.einsum('nek,ek->ne', ap, ab) / np.einsum('ek,ek->e', ab, ab), 0.0, 1.0)
    d = np.linalg.norm(ap - t[..., None] * ab[None], axis=2)
    return float(np.min(d.min(axis=1) - radius))


def run_scene(scene, max_steps=20000, record=False):
    """Step until every agent is within ``done_distance`` of its goal (RVO2's criterion)."""
    sim = scene.sim
    rng = np.random.default_rng(scene.seed)
    clearance = min_clearance(sim.positions, sim.radius)
    obstacle_gap = obstacle_clearance(sim.positions, sim.radius, sim.obstacles)
    frames = [sim.positions.copy()] if record else None
    steps = 0
    while steps < max_steps:
        home = np.hypot(*(sim.positions - scene.goals).T) < scene.done_distance
        if np.all(home):
            break
        sim.set_preferred_velocities(
            preferred_velocities(sim.positions, scene.goals, rng, scene.perturbation))
        sim.step()
        steps += 1
        clearance = min(clearance, min_clearance(sim.positions, sim.radius))
        obstacle_gap = min(obstacle_gap,
                           obstacle_clearance(sim.positions, sim.radius, sim.obstacles))
        if record:
            frames.append(sim.positions.copy())
    reached = bool(np.all(np.hypot(*(sim.positions - scene.goals).T) < scene.done_distance))
    return SceneResult(steps, reached, clearance, obstacle_gap,
                       np.array(frames) if record else None)
