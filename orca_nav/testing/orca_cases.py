"""
One agent's ORCA lines and the geometric cases taken, for the tests (not used by the node).

``orca_nav.core.orca.lines.solve_all`` builds the same lines inside its loop over agents, with
RVO2's shares (every weight 0.5, nothing immovable or ignored); these kernels call the same
compiled case functions (``obstacle_lines``, ``_agent_lines``) for one agent and return what they
built, so the tests can compare every half-plane and case with RVO2.
"""

import numpy as np

from orca_nav.core._jit import njit
from orca_nav.core.orca.lines import _agent_lines, obstacle_lines


@njit(cache=True)
def orca_lines_with_cases(i, positions, velocities, radius, agent_nbrs, obst_edges, ob_point,
                          ob_next, ob_prev, ob_dir, ob_convex, time_step, time_horizon,
                          time_horizon_obst):
    """
    Agent ``i``'s ORCA lines (obstacle lines first), their count, and the cases taken.

    Returns lines (L, 4), n_obst, obstacle_cases (one per edge in ``obst_edges``) and
    agent_cases (one per neighbour).
    """
    k_max = agent_nbrs.shape[1]
    lines = np.empty((obst_edges.shape[0] + k_max + 1, 4))
    obstacle_cases = np.zeros(obst_edges.shape[0], np.int64)
    agent_cases = np.zeros(k_max, np.int64)
    px = positions[i, 0]
    py = positions[i, 1]
    vx = velocities[i, 0]
    vy = velocities[i, 1]
    n_obst = obstacle_lines(lines, px, py, vx, vy, radius[i], 1.0 / time_horizon_obst,
                            obst_edges, ob_point, ob_next, ob_prev, ob_dir, ob_convex,
                            obstacle_cases)
    n = _agent_lines(lines, n_obst, i, positions, velocities, radius, agent_nbrs,
                     1.0 / time_horizon, 1.0 / time_step, agent_cases, None, None)
    return lines[:n].copy(), n_obst, obstacle_cases, agent_cases[:n - n_obst].copy()


@njit(cache=True)
def orca_lines_of(i, positions, velocities, radius, agent_nbrs, obst_edges, ob_point, ob_next,
                  ob_prev, ob_dir, ob_convex, time_step, time_horizon, time_horizon_obst):
    """All ORCA lines of agent ``i`` (obstacle lines first) and the number of obstacle lines."""
    lines, n_obst, _, _ = orca_lines_with_cases(
        i, positions, velocities, radius, agent_nbrs, obst_edges, ob_point, ob_next, ob_prev,
        ob_dir, ob_convex, time_step, time_horizon, time_horizon_obst)
    return lines, n_obst
