"""
Narrow passages on routes: the point ahead yields where the way is narrow; queues.

Robots of radius 0.2 m on a 0.05 m grid, as in test_navigation.py.
"""

import numpy as np
from orca_nav.control import controller as controller_module
from orca_nav.control import FleetConfig, RobotState
from orca_nav.control.passages import FIT_SLACK, MIN_LOOKAHEAD, narrowed, point_ahead
from orca_nav.core.follow import pack_routes, route_clearance
import pytest

from test_navigation import box_map, RES, run, wall_clearance  # noqa: I100 -- test/ on sys.path

RADIUS = 0.2


def door_map(width_m):
    """10 m x 8 m, a 0.2 m wall at x = 5.0 m with one door of ``width_m`` centred at y = 4."""
    return box_map(10.0, 8.0, [(5.0, 0.0, 5.2, 4.0 - width_m / 2.0),
                               (5.0, 4.0 + width_m / 2.0, 5.2, 8.0)])


def clearance_at(grid, route, position, behind=0.5, ahead=1.0):
    """Return route_clearance [m] of one robot at ``position`` on ``route`` (K, 2)."""
    points, offsets = pack_routes([np.asarray(route, float)])
    return route_clearance(points, offsets, np.zeros(1, np.int64), np.array([position]),
                           behind, ahead, grid.distance_cells(), grid.origin,
                           grid.resolution)[0]


@pytest.mark.parametrize('width', [0.5, 0.6])
def test_route_clearance_in_a_door_is_half_its_width(width):
    """Through the middle of a door: half the door's width, within half a cell."""
    grid = door_map(width)
    route = [(2.0, 4.0), (8.0, 4.0)]
    assert clearance_at(grid, route, (4.5, 4.0)) == pytest.approx(width / 2, abs=RES / 2)
    # Far from the door (more than `ahead` before it): the room's width.
    assert clearance_at(grid, route, (2.5, 4.0)) > 1.0
    # Just past it, the door is still `behind` the robot.
    assert clearance_at(grid, route, (5.5, 4.0)) == pytest.approx(width / 2, abs=RES / 2)


def test_the_point_ahead_yields_only_where_the_disc_does_not_fit():
    """Open space keeps lookahead; a narrow place halves what is left beside the disc."""
    look = np.full(5, 0.1)
    radius = np.full(5, RADIUS)
    clearance = np.array([np.inf, 1.0, RADIUS + 0.1 + FIT_SLACK, 0.275, RADIUS])
    got = point_ahead(look, radius, clearance)
    assert got[:3].tolist() == [0.1, 0.1, 0.1]
    assert got[3] == pytest.approx(0.0375)
    assert RADIUS + got[3] < 0.275                 # the ORCA disc fits the door now
    assert got[4] == MIN_LOOKAHEAD                 # no room at all: never zero
    # Holonomic robots (lookahead 0) are never changed.
    assert point_ahead(np.zeros(2), np.full(2, RADIUS), np.array([0.21, 0.3])).tolist() == \
        [0.0, 0.0]


def test_narrowed_changes_only_the_commanded_rows_that_need_it():
    """The config itself where nothing is narrow; else a copy with the new lookahead."""
    cfg = FleetConfig.uniform(['a', 'b', 'c'], n_controlled=2, drive='differential',
                              radius=RADIUS, lookahead_distance=0.1)
    assert narrowed(cfg, np.array([np.inf, 2.0])) is cfg
    tick = narrowed(cfg, np.array([0.275, np.inf]))
    assert tick.lookahead.tolist() == pytest.approx([0.0375, 0.1, 0.1])
    assert cfg.lookahead.tolist() == [0.1, 0.1, 0.1]   # the fleet's config is not changed


def test_a_differential_robot_passes_a_door_with_the_default_lookahead(monkeypatch):
    """
    A 0.5 m door, differential robots of 0.4 m with lookahead 0.1 m: both cross, no contact.

    Without the point ahead yielding (the config as configured) they stay in front of it.
    """
    grid = door_map(0.5)
    starts, goals = [(3.0, 2.5, 0.0), (7.0, 5.5, 3.14)], [(7.0, 2.5), (3.0, 5.5)]
    history, _, states = run(grid, starts, goals, steps=1500, drive='differential')
    assert states == [RobotState.REACHED] * 2
    assert wall_clearance(grid, history) > RADIUS - 1e-6
    monkeypatch.setattr(controller_module, 'narrowed', lambda config, clearance: config)
    history, _, states = run(grid, starts, goals, steps=1500, drive='differential')
    assert RobotState.REACHED not in states
    assert (history[-1, :, 0] < 5.0).tolist() == [True, False]   # each in front of the door
