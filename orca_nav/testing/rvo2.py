"""
RVO2 itself (the C++ library through ``pyrvo``) on the same arrays as orca_nav.core.

``pyrvo`` is a test and benchmark dependency only; it is imported when these functions run.
"""

import numpy as np


def _pyrvo():
    try:
        import pyrvo
    except ImportError as exc:  # pragma: no cover
        raise ImportError('the RVO2 reference needs pyrvo: pip install pyrvo') from exc
    return pyrvo


def make_simulator(positions, velocities, radius, max_speed, *, time_step, neighbor_dist,
                   max_neighbors, time_horizon, time_horizon_obst, polygons=()):
    """Build an RVO2 simulator holding these agents (per-agent radius, speed) and polygons."""
    pyrvo = _pyrvo()
    sim = pyrvo.RVOSimulator()
    sim.set_time_step(float(time_step))
    n = len(positions)
    radius = np.broadcast_to(np.asarray(radius, float), (n,))
    max_speed = np.broadcast_to(np.asarray(max_speed, float), (n,))
    sim.set_agent_defaults(float(neighbor_dist), int(max_neighbors), float(time_horizon),
                           float(time_horizon_obst), float(radius[0]) if n else 1.0,
                           float(max_speed[0]) if n else 1.0)
    for i in range(n):
        sim.add_agent((float(positions[i][0]), float(positions[i][1])), float(neighbor_dist),
                      int(max_neighbors), float(time_horizon), float(time_horizon_obst),
                      float(radius[i]), float(max_speed[i]),
                      (float(velocities[i][0]), float(velocities[i][1])))
    for polygon in polygons:
        sim.add_obstacle([(float(x), float(y)) for x, y in polygon])
    if len(polygons):
        sim.process_obstacles()
    return sim


def set_preferred(sim, prefs):
    """Set every agent's preferred velocity."""
    for i, (vx, vy) in enumerate(np.asarray(prefs, float)):
        sim.set_agent_pref_velocity(i, (float(vx), float(vy)))


def _per_agent(sim, getter):
    """(N, 2) array of one Vector2 property of every agent."""
    out = np.empty((sim.get_num_agents(), 2))
    for i in range(out.shape[0]):
        v = getter(i)
        out[i] = (v.x, v.y)
    return out


def positions_of(sim):
    """(N, 2) agent positions."""
    return _per_agent(sim, sim.get_agent_position)


def velocities_of(sim):
    """(N, 2) agent velocities."""
    return _per_agent(sim, sim.get_agent_velocity)


def one_step(positions, velocities, prefs, radius, max_speed, *, polygons=(), **params):
    """RVO2's new velocities for one step from this state: (N, 2)."""
    sim = make_simulator(positions, velocities, radius, max_speed, polygons=polygons, **params)
    set_preferred(sim, prefs)
    sim.do_step()
    return velocities_of(sim)
