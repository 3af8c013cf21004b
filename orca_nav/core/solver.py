"""
One ORCA step for a whole fleet: arrays in, new velocities out.

This is the function the ROS node calls every tick and the one ``Simulation.step`` wraps::

    new_vel = compute_velocities(pos, vel, pref, radius, max_speed, time_step=0.25,
                                 neighbor_dist=15.0, max_neighbors=10, time_horizon=10.0,
                                 time_horizon_obst=10.0, obstacles=obstacles)
"""

import math
from typing import Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike
from scipy.spatial import cKDTree

from ._jit import njit
from .obstacles import Obstacles
from .orca import brake_conflicts, solve_all


def _check_positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value)
            and value > 0):
        raise ValueError(f'{name} must be a positive finite number, got {value!r}')
    return float(value)


def validate_params(time_step: float, neighbor_dist: float, max_neighbors: int,
                    time_horizon: float,
                    time_horizon_obst: float) -> Tuple[float, float, int, float, float]:
    """
    Check the shared ORCA parameters; raise ValueError naming the bad one.

    Returns them as (float, float, int, float, float).
    """
    time_step = _check_positive('time_step', time_step)
    neighbor_dist = _check_positive('neighbor_dist', neighbor_dist)
    if (isinstance(max_neighbors, bool) or not isinstance(max_neighbors, (int, np.integer))
            or max_neighbors < 0):
        raise ValueError(f'max_neighbors must be a non-negative integer, got {max_neighbors!r}')
    time_horizon = _check_positive('time_horizon', time_horizon)
    time_horizon_obst = _check_positive('time_horizon_obst', time_horizon_obst)
    return time_step, neighbor_dist, int(max_neighbors), time_horizon, time_horizon_obst


def _check_array(name: str, value: ArrayLike, shape: Tuple[int, ...]) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=float)
    if arr.shape != shape:
        raise ValueError(f'{name} must have shape {shape}, got {arr.shape}')
    bad = ~np.isfinite(arr)
    if np.any(bad):
        row = int(np.argwhere(bad)[0][0])
        raise ValueError(f'{name} has a NaN or infinite value at row {row}: {arr[row]!r}')
    return arr


def agent_neighbors(positions: np.ndarray, neighbor_dist: float, max_neighbors: int,
                    tree: Optional[cKDTree] = None) -> np.ndarray:
    """
    For each agent the other agents within ``neighbor_dist``, nearest first.

    positions : (N, 2) [m]
    Returns (N, max_neighbors) int64 indices, padded with -1 where there are fewer neighbours.
    """
    n = positions.shape[0]
    if max_neighbors == 0 or n < 2:
        return np.full((n, max_neighbors), -1, np.int64)
    if tree is None:
        tree = cKDTree(positions)
    k = min(max_neighbors + 1, n)
    _, idx = tree.query(positions, k=k, distance_upper_bound=neighbor_dist)
    return _drop_self(idx.reshape(n, k).astype(np.int64), max_neighbors)


@njit(cache=True)
def _drop_self(idx, max_neighbors):
    """Remove each row's own index and the "none" sentinel (N), keeping the order."""
    n = idx.shape[0]
    out = np.full((n, max_neighbors), -1, np.int64)
    for i in range(n):
        m = 0
        for k in range(idx.shape[1]):
            j = idx[i, k]
            if j != i and j < n and m < max_neighbors:
                out[i, m] = j
                m += 1
    return out


def compute_velocities(positions: ArrayLike, velocities: ArrayLike, pref_velocities: ArrayLike,
                       radius: ArrayLike, max_speed: ArrayLike, *, time_step: float,
                       neighbor_dist: float, max_neighbors: int, time_horizon: float,
                       time_horizon_obst: float, obstacles: Optional[Obstacles] = None,
                       active: Optional[ArrayLike] = None,
                       collision_guard: bool = False) -> np.ndarray:
    """
    ORCA velocities for every agent at once (RVO2's ``computeNewVelocity`` for all agents).

    positions, velocities, pref_velocities : (N, 2) [m], [m/s], [m/s]
    radius, max_speed : (N,) or scalar [m], [m/s]; radius > 0, max_speed >= 0
    time_step : [s] used only when agents already overlap (escape within one step)
    neighbor_dist : [m] agents farther than this are ignored; max_neighbors : at most this many
    time_horizon, time_horizon_obst : [s] how far ahead collisions with agents / obstacles count
    obstacles : Obstacles or None
    active : (N,) bool or None; inactive agents are neighbours only and keep their velocity
    collision_guard : keep agents out of contact even where the ORCA half-planes conflict.
        RVO2 then minimises the violation of the agent lines (linear program 3) and lets
        agents overlap (0.50 m in its own Circle scene). With the guard, in order:
        1. each agent also keeps, for each neighbour close enough to touch it within
           ``time_step``, the ORCA line for a horizon of one time step (radii 2 % larger);
        2. in a conflict it stays inside those and the obstacle lines, as close as it can to
           its preferred velocity turned right (a shared keep-right rule, which turns
           head-on jams into roundabouts), or, if even that is empty, least-violates them;
        3. neighbours of agents that could not give way re-plan avoiding them alone;
        4. pairs still touching within the step are braked (``orca.brake_conflicts``).
        Off by default, so the answer is RVO2's; the node and ``Simulation`` use it.
    Returns (N, 2) float64 new velocities, finite, with |v_i| <= max_speed_i.
    Raises ValueError when an argument is out of range or not finite.
    """
    time_step, neighbor_dist, max_neighbors, time_horizon, time_horizon_obst = validate_params(
        time_step, neighbor_dist, max_neighbors, time_horizon, time_horizon_obst)
    positions = np.asarray(positions, dtype=float)
    if positions.ndim != 2 or positions.shape[1] != 2:
        raise ValueError(f'positions must have shape (N, 2), got {positions.shape}')
    n = positions.shape[0]
    positions = _check_array('positions', positions, (n, 2))
    velocities = _check_array('velocities', velocities, (n, 2))
    pref_velocities = _check_array('pref_velocities', pref_velocities, (n, 2))
    radius = _check_array('radius', np.broadcast_to(np.asarray(radius, float), (n,)), (n,))
    max_speed = _check_array('max_speed', np.broadcast_to(np.asarray(max_speed, float), (n,)),
                             (n,))
    if np.any(radius <= 0):
        raise ValueError(f'radius must be positive, got {radius[radius <= 0][0]!r}')
    if np.any(max_speed < 0):
        raise ValueError(f'max_speed must be non-negative, got {max_speed[max_speed < 0][0]!r}')
    if active is None:
        active = np.ones(n, bool)
    else:
        active = np.ascontiguousarray(active, dtype=bool)
        if active.shape != (n,):
            raise ValueError(f'active must have shape ({n},), got {active.shape}')
    if obstacles is None:
        obstacles = Obstacles.empty()
    out = velocities.copy()
    if n == 0:
        return out
    tree = cKDTree(positions)
    nbrs = agent_neighbors(positions, neighbor_dist, max_neighbors, tree)
    ranges = time_horizon_obst * max_speed + radius
    offsets, edges = obstacles.neighbors(positions, ranges, tree)
    geometry = (positions, velocities, pref_velocities, radius, max_speed, nbrs, offsets, edges,
                obstacles.point, obstacles.next, obstacles.prev, obstacles.unit_dir,
                obstacles.convex, time_step, time_horizon, time_horizon_obst)
    stuck = np.zeros(n, bool)
    solve_all(*geometry, active, collision_guard, np.zeros(n, bool), out, stuck, out)
    if collision_guard and np.any(stuck):
        # Second pass: the neighbours of agents that could not give way take it all on.
        near_stuck = np.any(np.where(nbrs >= 0, stuck[nbrs], False), axis=1)
        redo = active & ~stuck & near_stuck
        solve_all(*geometry, redo, True, stuck, out.copy(), np.zeros(n, bool), out)
        brake_conflicts(positions, out, radius, nbrs, time_step, active)
    return _enforce_limits(out, max_speed)


def _enforce_limits(vel: np.ndarray, max_speed: np.ndarray) -> np.ndarray:
    """Never return NaN or a speed above the limit (guards against rounding, not a policy)."""
    bad = ~np.all(np.isfinite(vel), axis=1)
    vel[bad] = 0.0
    speed = np.hypot(vel[:, 0], vel[:, 1])
    over = speed > max_speed
    if np.any(over):
        vel[over] *= (max_speed[over] / speed[over])[:, None]
    return vel


def warmup() -> None:
    """Compile the JIT kernels now (a few seconds once; cached on disk afterwards)."""
    square = [(1.0, 1.0), (2.0, 1.0), (2.0, 2.0), (1.0, 2.0)]
    obstacles = Obstacles.build([square], segments=[[[-2.0, 0.0], [-2.0, 1.0]]])
    pos = np.array([[0.0, 0.0], [0.5, 0.1], [3.0, 3.0]])
    compute_velocities(pos, np.zeros((3, 2)), np.array([[1.0, 1.0], [-1.0, 0.0], [0.0, -1.0]]),
                       0.3, 1.0, time_step=0.1, neighbor_dist=5.0, max_neighbors=4,
                       time_horizon=2.0, time_horizon_obst=2.0, obstacles=obstacles,
                       collision_guard=True)
