"""
Fixed random scenes and the velocities the solver gave for them before acceleration limits.

``python test/rvo2_mode_golden.py`` (from the package root) rewrites test/data/
rvo2_mode_golden.npz with the current code; it was written by the commit before the limits
(b8f7a56) and must not be rewritten unless the RVO2 path is meant to change.
test_core_accel.py checks that the solver without limits still gives these very bits.
"""

import os

import numpy as np
from orca_nav.core import compute_velocities
from orca_nav.testing.scenes import crowd_with_obstacles

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data',
                    'rvo2_mode_golden.npz')
SEEDS = range(12)
PARAMS = {'time_step': 0.25, 'neighbor_dist': 4.0, 'max_neighbors': 6, 'time_horizon': 3.0,
          'time_horizon_obst': 2.0}


def scene(seed):
    """Random crowd in 12 m x 12 m with two squares and a segment, some agents overlapping."""
    rng = np.random.default_rng(1000 + seed)
    pos, vel, pref, radius, max_speed, obstacles = crowd_with_obstacles(rng, 40 + 5 * seed)
    weights = rng.uniform(0.0, 1.0, len(pos))
    return pos, vel, pref, radius, max_speed, obstacles, weights


def variants(weights):
    """(label, compute_velocities keyword arguments) of the code paths compared."""
    return [('plain', {}), ('guard', {'collision_guard': True}),
            ('weights', {'weights': weights}),
            ('weights_guard', {'weights': weights, 'collision_guard': True})]


def answers():
    """Return {'<seed>_<label>': (N, 2) velocities} of every scene and variant."""
    out = {}
    for seed in SEEDS:
        pos, vel, pref, radius, max_speed, obstacles, weights = scene(seed)
        for label, kwargs in variants(weights):
            out[f'{seed}_{label}'] = compute_velocities(pos, vel, pref, radius, max_speed,
                                                        obstacles=obstacles, **PARAMS,
                                                        **kwargs)
    return out


if __name__ == '__main__':
    np.savez_compressed(PATH, **answers())
    print(f'wrote {PATH}')
