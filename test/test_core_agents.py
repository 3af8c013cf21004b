"""The solver's records: ``solve(Agents, SolverSettings)`` is ``compute_velocities``."""

import numpy as np
from orca_nav.core import compute_velocities
from orca_nav.core.orca.solver import Agents, solve, SolverSettings
from orca_nav.testing.scenes import crowd_with_obstacles
import pytest

SETTINGS = SolverSettings(time_step=0.25, neighbor_dist=4.0, max_neighbors=6, time_horizon=3.0,
                          time_horizon_obst=2.0)


@pytest.mark.parametrize('guard', [False, True])
@pytest.mark.parametrize('optional', [
    {},
    {'weights': 0.3, 'immovable': [True] + [False] * 39},
    {'max_accel': 1.0, 'max_decel': 2.0},
    {'margin': 0.05, 'agent_horizon': 4.0, 'neighbor_reach': 5.0},
])
def test_solve_with_records_gives_compute_velocities_bits(optional, guard):
    """The same scene through both doors: the same bits."""
    pos, vel, pref, radius, max_speed, obstacles = crowd_with_obstacles(
        np.random.default_rng(7), 40)
    settings = SETTINGS._replace(collision_guard=guard)
    by_keywords = compute_velocities(pos, vel, pref, radius, max_speed, obstacles=obstacles,
                                     **settings._asdict(), **optional)
    by_record = solve(Agents(pos, vel, pref, radius, max_speed, **optional), settings,
                      obstacles)
    assert np.array_equal(by_keywords, by_record)
    assert not np.array_equal(by_record, vel)  # the scene asks for avoiding


def test_take_keeps_scalars_and_indexes_rows():
    """Rows of every per-agent field; scalars and unset fields stay as they are."""
    pos = np.arange(8.0).reshape(4, 2)
    agents = Agents(pos, -pos, 2 * pos, 0.3, np.array([1.0, 2.0, 3.0, 4.0]),
                    ignore=np.eye(4, 2, dtype=bool))
    part = agents.take(np.array([3, 1]))
    assert part.positions.tolist() == [[6.0, 7.0], [2.0, 3.0]]
    assert part.radius == 0.3 and part.weights is None
    assert part.max_speed.tolist() == [4.0, 2.0]
    assert part.ignore.tolist() == [[False, False], [False, True]]


def test_concat_pads_ignore_broadcasts_scalars_and_needs_matching_fields():
    """Appended rows: a wider ignore table pads the narrower with False (no group ignored)."""
    a = Agents(np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2)), 0.3, 1.0,
               groups=np.array([0, 1]), ignore=np.array([[False, True], [False, False]]))
    b = Agents(np.ones((1, 2)), np.ones((1, 2)), np.ones((1, 2)), np.array([0.4]),
               np.array([2.0]), groups=np.array([2]), ignore=np.zeros((1, 3), bool))
    both = a.concat(b)
    assert both.radius.tolist() == [0.3, 0.3, 0.4]
    assert both.max_speed.tolist() == [1.0, 1.0, 2.0]
    assert both.groups.tolist() == [0, 1, 2]
    assert both.ignore.tolist() == [[False, True, False], [False, False, False],
                                    [False, False, False]]
    with pytest.raises(ValueError, match='weights must be set in both'):
        a.concat(b._replace(weights=np.ones(1)))


def test_an_unknown_field_is_refused_by_compute_velocities():
    """A misspelt keyword is an error, not silently ignored."""
    with pytest.raises(TypeError, match='max_acel'):
        compute_velocities(np.zeros((1, 2)), np.zeros((1, 2)), np.zeros((1, 2)), 0.3, 1.0,
                           max_acel=1.0, **SETTINGS._asdict())
