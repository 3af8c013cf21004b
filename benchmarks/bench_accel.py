"""
Cost of the acceleration limits: one solver call on fixed states, limits off and on.

Run from the repository root: ``python -m benchmarks.bench_accel [--repeats 40]``.

Each scene is walked forward with RVO2's algorithm into a crowded phase, then
``compute_velocities`` is timed on that one state, the calls of the columns interleaved
(so that a busy machine slows all columns alike): limits off (RVO2's answer), and limits on
(``max_accel`` 2 m/s^2, ``max_decel`` 4 m/s^2, measured from the current velocities), each
with the collision guard off and on. Rows print the median and 90th percentile milliseconds.
The code before the limits has no "on" columns; they print as "-". ``--off-only`` times the
off columns alone, the same calls as the code before the limits makes (for a fair comparison).
"""

import argparse
import time

import numpy as np

from orca_nav.core import compute_velocities, warmup
from orca_nav.testing.scenes import (advance, circle_scene, dense_crowd_scene,
                                     preferred_velocities)


def scenes():
    """(label, scene factory) pairs."""
    return [('circle 250 (crossing)', lambda: advance(circle_scene(250), 700)),
            ('dense crowd 1000', lambda: dense_crowd_scene(1000))]


def _call(sim, guard, limits):
    kwargs = {'max_accel': 2.0, 'max_decel': 4.0} if limits else {}
    return compute_velocities(sim.positions, sim.velocities, sim.pref_velocities, sim.radius,
                              sim.max_speed, time_step=sim.time_step,
                              neighbor_dist=sim.neighbor_dist, max_neighbors=sim.max_neighbors,
                              time_horizon=sim.time_horizon,
                              time_horizon_obst=sim.time_horizon_obst,
                              obstacles=sim.obstacles, collision_guard=guard, **kwargs)


def main():
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeats', type=int, default=40, help='timed calls per column')
    parser.add_argument('--off-only', action='store_true',
                        help='time the limits-off columns only (as the code before the limits)')
    args = parser.parse_args()
    warmup()
    columns = [(False, False), (False, True), (True, False), (True, True)]
    if args.off_only:
        columns = [(guard, limits) for guard, limits in columns if not limits]
    names = [f'guard {"on" if g else "off"}, limits {"on" if lim else "off"}'
             for g, lim in columns]
    print(f'{"scene":24} ' + ' '.join(f'{name:>22}' for name in names))
    for label, make in scenes():
        scene = make()
        scene.sim.set_preferred_velocities(preferred_velocities(
            scene.sim.positions, scene.goals, np.random.default_rng(0), scene.perturbation))
        supported = []
        for guard, limits in columns:
            try:
                _call(scene.sim, guard, limits)  # compiles this specialisation
                supported.append(True)
            except TypeError:
                supported.append(False)
        times = [[] for _ in columns]
        for _ in range(args.repeats):
            for k, (guard, limits) in enumerate(columns):
                if supported[k]:
                    start = time.perf_counter()
                    _call(scene.sim, guard, limits)
                    times[k].append((time.perf_counter() - start) * 1e3)
        cells = [f'{np.median(t):10.2f}/{np.percentile(t, 90):<11.2f}' if t else f'{"-":>22}'
                 for t in times]
        print(f'{label:24} ' + ' '.join(cells), flush=True)


if __name__ == '__main__':
    main()
