"""
Narrow passages on routes: the point ahead yields where the way is narrow; queues.

Robots of radius 0.2 m on a 0.05 m grid, as in test_navigation.py.
"""

import math

import numpy as np
from orca_nav.control import controller as controller_module
from orca_nav.control import FleetConfig, passages, RobotState
from orca_nav.control.passages import (APPROACH, FIT_SLACK, lookahead_now, MAX_WAIT,
                                       MIN_LOOKAHEAD, point_ahead, Queues, single_file)
from orca_nav.core.routes.follow import pack_routes, route_clearance
from orca_nav.ros.messages import STATE_COLORS
from orca_nav.sim.scenarios import scenario_from_dict, scenario_path
import pytest
import yaml

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


def test_lookahead_now_changes_only_the_commanded_rows_that_need_it():
    """The configured lookahead where nothing is narrow; nearer the axle where it is."""
    cfg = FleetConfig.uniform(['a', 'b', 'c'], n_controlled=2, drive='differential',
                              radius=RADIUS, lookahead_distance=0.1)
    assert lookahead_now(cfg, np.array([np.inf, 2.0])).tolist() == [0.1, 0.1, 0.1]
    tick = lookahead_now(cfg, np.array([0.275, np.inf]))
    assert tick.tolist() == pytest.approx([0.0375, 0.1, 0.1])
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
    monkeypatch.setattr(controller_module, 'lookahead_now',
                        lambda config, clearance: config.lookahead)
    history, _, states = run(grid, starts, goals, steps=1500, drive='differential')
    assert RobotState.REACHED not in states
    assert (history[-1, :, 0] < 5.0).tolist() == [True, False]   # each in front of the door


# --- queues at single-file passages ------------------------------------------------------------

# 10 m x 5 m, a lane 3 m long and 0.6 m wide (x 3.5..6.5, y 2.2..2.8) between open areas.
LANE = box_map(10.0, 5.0, [(3.5, 0.0, 6.5, 2.2), (3.5, 2.8, 6.5, 5.0)])
EAST = np.array([(1.0, 2.5), (9.0, 2.5)])      # through the lane, west to east
WEST = EAST[::-1].copy()


def lane_queues(*routes):
    """Return Queues of robots of RADIUS following ``routes`` in LANE."""
    queues = Queues(len(routes))
    for i, route in enumerate(routes):
        queues.route_changed(i, route, LANE, RADIUS)
    return queues


def test_single_file_passages_are_where_two_robots_cannot_pass():
    """The lane is one passage; the open area, and a lane wider than four radii, are none."""
    (lane,) = single_file(EAST, LANE, RADIUS)
    assert 3.3 <= 1.0 + lane.start <= 3.6 and 6.4 <= 1.0 + lane.end <= 6.7
    assert single_file(np.array([(1.0, 1.0), (3.0, 1.0), (3.0, 4.0)]), LANE, RADIUS) == []
    wide = box_map(10.0, 5.0, [(3.5, 0.0, 6.5, 2.0), (3.5, 2.85, 6.5, 5.0)])   # 0.85 m
    assert single_file(EAST, wide, RADIUS) == []
    # One occupied cell of sensor noise 0.3 m beside the route in the open is no passage.
    speck = box_map(10.0, 5.0, [(2.0, 2.8, 2.05, 2.85)])
    assert single_file(EAST, speck, RADIUS) == []


def test_a_lane_two_carts_fit_turned_along_it_is_no_passage_for_them():
    """Counted by half the width across the way (a cart turned along it), not by its disc."""
    # The 0.6 m lane: single-file for discs of RADIUS (3 radii across) and for carts 0.32 m
    # wide (four half-widths: 0.64 m), not for carts 0.2 m wide (0.4 m).
    assert len(single_file(EAST, LANE, RADIUS, half_width=0.16)) == 1
    assert single_file(EAST, LANE, RADIUS, half_width=0.1) == []


def test_waiting_spots_are_clear_of_the_entrance():
    """Spots lie before the entrance, beside its axis (right first), in free space."""
    (lane,) = single_file(EAST, LANE, RADIUS)
    entrance = lane.points[0]
    for k, spot in enumerate(lane.spots):
        assert spot[0] < entrance[0] - 2 * RADIUS          # before the entrance
        assert abs(spot[1] - 2.5) >= 2 * RADIUS             # not in front of it
        assert LANE.distance_to_obstacle(spot[None])[0] >= 1.5 * RADIUS - RES
    assert lane.spots[0][1] < 2.5                           # on the right going east
    assert (np.diff(lane.spots[:, 0]) < 0).all()            # the queue goes back


def test_the_sides_alternate():
    """
    One side goes, the other waits; a robot of the first side that comes later waits too.

    Robot 0 (east) goes; 1 (west) waits; 2 (east, after 1 began waiting) waits behind 1's
    turn; when 0 is out 1 goes, when 1 is out 2 goes.
    """
    queues = lane_queues(EAST, WEST, EAST)
    (east,), (west,) = queues.passages[0], queues.passages[1]
    r, every = np.full(3, RADIUS), np.ones(3, bool)
    far = -10.0
    arc = np.array([east.start - 1.0, west.start - 1.0, far])
    waiting, spots = queues.update(0.0, arc, r, every)
    assert waiting.tolist() == [False, True, False] and queues.holds.tolist()[:2] == [True, False]
    assert np.allclose(spots[1], west.spots[0])
    arc[2] = east.start - 1.0
    waiting, _ = queues.update(1.0, arc, r, every)
    assert waiting.tolist() == [False, True, True]
    arc[0] = east.end + 2 * RADIUS                       # 0 is out
    waiting, _ = queues.update(2.0, arc, r, every)
    assert waiting.tolist() == [False, False, True] and queues.holds[1]
    arc[1] = west.end + 2 * RADIUS                       # 1 is out
    waiting, _ = queues.update(3.0, arc, r, every)
    assert waiting.tolist() == [False, False, False] and queues.holds[2]


def test_robots_going_the_same_way_follow_each_other():
    """With nobody waiting on the other side, a second robot follows the first through."""
    queues = lane_queues(EAST, EAST)
    (east,) = queues.passages[0]
    arc = np.array([east.start + 0.5, east.start - APPROACH + 0.1])
    waiting, _ = queues.update(0.0, arc, np.full(2, RADIUS), np.ones(2, bool))
    assert not waiting.any() and queues.holds.all()


def test_no_robot_waits_longer_than_the_bound():
    """A robot that holds the lane for good: the other goes anyway after MAX_WAIT."""
    queues = lane_queues(EAST, WEST)
    (east,), (west,) = queues.passages[0], queues.passages[1]
    arc = np.array([east.start + 1.0, west.start - 1.0])
    r, every = np.full(2, RADIUS), np.ones(2, bool)
    for now in np.arange(0.0, MAX_WAIT, 0.5):
        waiting, _ = queues.update(now, arc, r, every)
        assert waiting.tolist() == [False, True]
    waiting, _ = queues.update(MAX_WAIT, arc, r, every)
    assert not waiting.any() and queues.holds.all()
    assert math.isinf(queues.since[1])


def test_a_robot_that_starts_inside_holds_the_passage_at_once():
    """It cannot wait clear of the entrance: it goes on, and the other side waits for it."""
    queues = lane_queues(EAST, WEST)
    (east,), (west,) = queues.passages[0], queues.passages[1]
    arc = np.array([east.start - 0.5, west.start + 1.0])   # robot 1 is inside already
    waiting, _ = queues.update(0.0, arc, np.full(2, RADIUS), np.array([False, True]))
    assert not waiting.any() and queues.holds[1]
    waiting, _ = queues.update(0.1, arc, np.full(2, RADIUS), np.ones(2, bool))
    assert waiting.tolist() == [True, False]


def test_a_new_route_or_no_route_gives_the_turn_up():
    """A robot that stops following its route (new goal, no route) neither holds nor waits."""
    queues = lane_queues(EAST, WEST)
    (east,), (west,) = queues.passages[0], queues.passages[1]
    arc = np.array([east.start - 1.0, west.start - 1.0])
    r = np.full(2, RADIUS)
    queues.update(0.0, arc, r, np.ones(2, bool))
    assert queues.holds[0]
    waiting, _ = queues.update(0.1, arc, r, np.array([False, True]))
    assert not waiting.any() and queues.holds.tolist() == [False, True]
    queues.route_changed(1, None, LANE, RADIUS)
    assert queues.passages[1] == [] and not queues.holds[1]


def test_waiting_has_a_state_a_colour_and_a_reason():
    """RobotState.WAITING is published as 'waiting', drawn in its own colour."""
    assert RobotState.WAITING == 'waiting'
    assert set(STATE_COLORS) >= {s.value for s in RobotState}
    assert passages.BUSY == 'passage_busy'


def lane_pair(drive):
    """single_lane with two robots that reach the lane together from both ends."""
    data = yaml.safe_load(scenario_path('single_lane').read_text())
    data['robots'] = [{'name': 'east', 'start': [-3.0, 0.0, 0.0], 'goal': [3.0, 0.1]},
                      {'name': 'west', 'start': [3.0, 0.05, 3.1416], 'goal': [-3.0, 0.0]}]
    data['timeout'] = 120.0
    return scenario_from_dict(data, name='lane_pair', drive=drive)


def inside_lane(poses):
    """Return (T, N) bool: robot centres inside the single_lane corridor."""
    return (np.abs(poses[..., 0]) < 1.5) & (poses[..., 1] > -0.25) & (poses[..., 1] < 0.3)


@pytest.mark.slow
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_head_on_in_a_single_lane_one_waits_outside(drive, monkeypatch):
    """
    Lock-stepped, the node's parameters: two robots head-on at a single lane.

    Without queues (MAX_WAIT 0) both drive in and meet inside; with them one waits outside
    until the other is through, then both arrive without contact.
    """
    from test_scenario_worlds import run_world   # noqa: I100 -- test/ is on sys.path
    from orca_nav.sim.scenarios import CONTACT_TOLERANCE
    run = run_world(lane_pair(drive), drive)
    assert run.arrived.all(), f'{drive}: {run.arrived} in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE
    inside = inside_lane(run.poses)
    assert not inside.all(axis=1).any()                 # never both inside
    assert inside[:, 0].any() and inside[:, 1].any()    # each went through it
    monkeypatch.setattr(passages, 'MAX_WAIT', 0.0)
    before = run_world(lane_pair(drive), drive)
    assert inside_lane(before.poses).all(axis=1).any()  # they meet inside
