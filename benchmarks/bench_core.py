"""
orca_nav's solver against RVO2 (C++, through pyrvo), side by side in one run.

Run from the repository root: ``python -m benchmarks.bench_core [--steps 30] [--quick]``.

Both simulators start from the same state and step the same scene; each row prints the median
and 90th percentile milliseconds per step (RVO2: ``do_step`` only, preferred velocities set
outside the clock; orca_nav: ``Simulation.step``, which includes building the k-d tree) and the
ratio orca_nav / RVO2 (below 1: orca_nav is faster). orca_nav runs twice: exactly RVO2's
algorithm (guard off) and with the collision guard the node uses (guard on).
"""

import argparse
import os
import time

import numpy as np

from orca_nav.core import warmup
from orca_nav.core.geometry import placed_polygon
from orca_nav.core.orca.solver import compute_velocities
from orca_nav.testing import rvo2
from orca_nav.testing.scenes import (advance, blocks_scene, circle_scene, dense_crowd_scene,
                                     preferred_velocities)
from orca_nav.testing.simulation import Simulation


def _clone(sim, guard):
    twin = Simulation(sim.time_step, sim.neighbor_dist, sim.max_neighbors, sim.time_horizon,
                      sim.time_horizon_obst, sim.default_radius, sim.default_max_speed,
                      collision_guard=guard)
    twin.positions = sim.positions.copy()
    twin.velocities = sim.velocities.copy()
    twin.pref_velocities = sim.pref_velocities.copy()
    twin.radius = sim.radius.copy()
    twin.max_speed = sim.max_speed.copy()
    twin._polygons = list(sim._polygons)
    twin._obstacles_dirty = True
    return twin


def _time_orca(scene, steps, guard):
    sim = _clone(scene.sim, guard)
    rng = np.random.default_rng(scene.seed)
    times = []
    for _ in range(steps):
        sim.set_preferred_velocities(
            preferred_velocities(sim.positions, scene.goals, rng, scene.perturbation))
        start = time.perf_counter()
        sim.step()
        times.append(time.perf_counter() - start)
    return np.array(times) * 1e3


def _time_rvo2(scene, steps):
    s = scene.sim
    sim = rvo2.make_simulator(s.positions, s.velocities, s.radius, s.max_speed,
                              time_step=s.time_step, neighbor_dist=s.neighbor_dist,
                              max_neighbors=s.max_neighbors, time_horizon=s.time_horizon,
                              time_horizon_obst=s.time_horizon_obst, polygons=scene.obstacles)
    rng = np.random.default_rng(scene.seed)
    times = []
    for _ in range(steps):
        pos = rvo2.positions_of(sim)
        rvo2.set_preferred(sim, preferred_velocities(pos, scene.goals, rng, scene.perturbation))
        start = time.perf_counter()
        sim.do_step()
        times.append(time.perf_counter() - start)
    return np.array(times) * 1e3


def scenes(quick=False):
    """(label, scene factory) pairs; Circle keeps RVO2's 5 m spacing at every size."""
    rows = [
        ('circle 100 (start)', 100, lambda: circle_scene(100, circle_radius=80.0)),
        ('circle 250 (start)', 250, lambda: circle_scene(250)),
        ('circle 250 (crossing)', 250, lambda: advance(circle_scene(250), 700)),
        ('circle 1000 (start)', 1000, lambda: circle_scene(1000, circle_radius=800.0)),
        ('circle 4000 (start)', 4000, lambda: circle_scene(4000, circle_radius=3200.0)),
        ('dense crowd 100', 100, lambda: dense_crowd_scene(100)),
        ('dense crowd 1000', 1000, lambda: dense_crowd_scene(1000)),
        ('dense crowd 4000', 4000, lambda: dense_crowd_scene(4000)),
        ('blocks 100', 100, lambda: blocks_scene()),
    ]
    return [(label, make) for label, agents, make in rows if not (quick and agents > 1000)]


def _time_soft(scene, steps, footprint):
    """
    Milliseconds per step of the node's mode (guard, margins) on a scene, discs or carts.

    footprint : (N, V, 2) polygons at the agents' headings (held), or None: the discs.
    """
    s = scene.sim
    positions, velocities = s.positions.copy(), s.velocities.copy()
    n = len(positions)
    shapes = {} if footprint is None else {'footprint': footprint,
                                           'footprint_body': np.full(n, 0.01)}
    times = []
    for _ in range(steps):
        pref = preferred_velocities(positions, scene.goals)
        start = time.perf_counter()
        velocities = compute_velocities(
            positions, velocities, pref, s.radius, s.max_speed, time_step=s.time_step,
            neighbor_dist=s.neighbor_dist, max_neighbors=s.max_neighbors,
            time_horizon=s.time_horizon, time_horizon_obst=s.time_horizon_obst,
            collision_guard=True, margin=np.full(n, 0.05), keep_margin=np.ones(n, bool),
            **shapes)
        times.append(time.perf_counter() - start)
        positions = positions + velocities * s.time_step
    return np.array(times) * 1e3


def footprint_rows(steps, quick):
    """
    Print the footprint table: the same crowds as discs and as carts that the discs hold.

    Each agent (radius 0.5) is a 0.76 x 0.58 m rectangle at a random heading, padding 0.01 m;
    both runs in the node's mode (guard, margins 0.05 m).
    """
    print(f'\n{"footprints (node mode)":24} {"discs ms p50/p90":>17} {"carts ms p50/p90":>20} '
          f'{"ratio":>6}')
    for label, agents in (('dense crowd 100', 100), ('dense crowd 1000', 1000)):
        if quick and agents > 1000:
            continue
        scene = dense_crowd_scene(agents)
        rng = np.random.default_rng(scene.seed)
        cart = np.array([[0.38, 0.29], [-0.38, 0.29], [-0.38, -0.29], [0.38, -0.29]])
        footprint = np.stack([placed_polygon(cart, [0.0, 0.0, yaw])
                              for yaw in rng.uniform(-np.pi, np.pi, agents)])
        discs = _time_soft(scene, steps, None)
        carts = _time_soft(scene, steps, footprint)
        d50, c50 = np.median(discs), np.median(carts)
        print(f'{label:24} {d50:8.2f}/{np.percentile(discs, 90):<8.2f} '
              f'{c50:10.2f}/{np.percentile(carts, 90):<9.2f} {c50 / d50:6.2f}', flush=True)


def main():
    """Print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--steps', type=int, default=30, help='timed steps per scene')
    parser.add_argument('--quick', action='store_true', help='skip the 4000-agent scenes')
    args = parser.parse_args()
    warmup()
    print(f'cores: {os.cpu_count()}, timed steps per scene: {args.steps}')
    header = (f'{"scene":24} {"RVO2 ms p50/p90":>17} {"orca_nav ms p50/p90":>20} {"ratio":>6}'
              f' {"+guard ms p50/p90":>18} {"ratio":>6}')
    print(header)
    print('-' * len(header))
    for label, make in scenes(args.quick):
        ref = _time_rvo2(make(), args.steps)
        ours = _time_orca(make(), args.steps, guard=False)
        guarded = _time_orca(make(), args.steps, guard=True)
        r50, o50, g50 = np.median(ref), np.median(ours), np.median(guarded)
        print(f'{label:24} {r50:8.2f}/{np.percentile(ref, 90):<8.2f} '
              f'{o50:10.2f}/{np.percentile(ours, 90):<9.2f} {o50 / r50:6.2f} '
              f'{g50:9.2f}/{np.percentile(guarded, 90):<8.2f} {g50 / r50:6.2f}', flush=True)
    footprint_rows(args.steps, args.quick)


if __name__ == '__main__':
    main()
