"""Routes in the fleet controller (no ROS): maps, carrots, unreachable and stuck robots."""

from concurrent.futures import Future
import dataclasses
import math

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs, RobotState
from orca_nav.control.map_model import MapModel, split_segments
from orca_nav.control.navigation import NavigationConfig
from orca_nav.control.warmup import InlineExecutor
from orca_nav.core.routes.grid import GridMap
import pytest

RES = 0.05  # [m / cell]


def box_map(width_m, height_m, boxes):
    """Return a GridMap of free space with occupied rectangles (x0, y0, x1, y1) [m]."""
    w, h = int(round(width_m / RES)), int(round(height_m / RES))
    cells = np.zeros((h, w), np.int8)
    cells[0, :] = cells[-1, :] = cells[:, 0] = cells[:, -1] = 100
    for x0, y0, x1, y1 in boxes:
        rows = slice(int(round(y0 / RES)), int(round(y1 / RES)))
        cells[rows, int(round(x0 / RES)):int(round(x1 / RES))] = 100
    return GridMap.from_occupancy(cells.ravel(), w, h, RES)


def run(grid, starts, goals, steps=1200, map_walls=True, drive='holonomic'):
    """
    Drive robots with a kinematic model (commands applied for one period) until all arrive.

    Returns (positions history (T, N, 2), the controller, the last states).
    """
    n = len(starts)
    cfg = FleetConfig.uniform([f'r{k}' for k in range(n)], drive=drive, radius=0.2,
                              max_speed=0.5, max_angular_speed=2.0)
    ctrl = FleetController(cfg, NavigationConfig(map_walls=map_walls), InlineExecutor())
    if grid is not None:
        ctrl.set_map(grid)
    pose = np.array([[x, y, yaw] for x, y, yaw in starts], dtype=float)
    for i, g in enumerate(goals):
        ctrl.set_goal(i, *g)
    inputs = FleetInputs.empty(n)
    history, dt = [], cfg.period
    for k in range(steps):
        t = k * dt
        for i in range(n):
            inputs.set_odometry(i, x=pose[i, 0], y=pose[i, 1], yaw=pose[i, 2], time=t)
        result = ctrl.step(inputs, t)
        cmd = result.commands
        c, s = np.cos(pose[:, 2]), np.sin(pose[:, 2])
        pose[:, 0] += (c * cmd[:, 0] - s * cmd[:, 1]) * dt
        pose[:, 1] += (s * cmd[:, 0] + c * cmd[:, 1]) * dt
        pose[:, 2] += cmd[:, 2] * dt
        history.append(pose[:, :2].copy())
        if all(st == RobotState.REACHED for st in result.states):
            break
    return np.array(history), ctrl, result.states


def wall_clearance(grid, history):
    """Smallest distance from any robot centre to an occupied cell, over the run [m]."""
    return float(grid.distance_to_obstacle(history.reshape(-1, 2)).min())


SHELF = box_map(10.0, 8.0, [(2.0, 3.8, 8.0, 4.2)])   # a 6 m shelf across the middle


@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_robots_go_round_a_shelf_that_blocks_the_straight_line(drive):
    """Four robots whose goals are behind a 6 m shelf all arrive and never touch it."""
    starts = [(3.5, 1.5, 1.57), (6.5, 1.5, 1.57), (3.5, 6.5, -1.57), (6.5, 6.5, -1.57)]
    goals = [(3.5, 6.5), (6.5, 6.5), (3.5, 1.5), (6.5, 1.5)]
    history, ctrl, states = run(SHELF, starts, goals, drive=drive)
    assert states == [RobotState.REACHED] * 4
    assert wall_clearance(SHELF, history) > 0.2
    d = np.linalg.norm(history[:, :, None] - history[:, None, :], axis=-1)
    d[:, np.arange(4), np.arange(4)] = np.inf
    assert d.min() > 0.4


def test_without_a_map_the_shelf_stops_them_and_they_report_stuck():
    """The same scene without a map: the robots drive straight, stall and report stuck."""
    starts = [(3.5, 1.5, 1.57)]
    cfg = FleetConfig.uniform(['r0'])
    ctrl = FleetController(cfg, NavigationConfig(progress_timeout=3.0), InlineExecutor())
    ctrl.set_goal(0, 3.5, 6.5)
    inputs = FleetInputs.empty(1)
    # Held against the shelf (the world stops it): no progress.
    states = []
    for k in range(60):
        inputs.set_odometry(0, x=starts[0][0], y=3.5, yaw=1.57, time=k * 0.1)
        states.append(ctrl.step(inputs, k * 0.1).states[0])
    assert states[0] == RobotState.ACTIVE and states[-1] == RobotState.STUCK


def test_goal_inside_a_wall_is_unreachable_and_the_robot_stands():
    """A goal in the shelf: state unreachable with the planner's reason, zero command."""
    history, ctrl, states = run(SHELF, [(3.5, 1.5, 0.0)], [(5.0, 4.0)], steps=5)
    assert states == [RobotState.UNREACHABLE]
    assert ctrl.navigator.reason[0] == 'goal_in_obstacle'
    assert np.allclose(history[-1], [3.5, 1.5])


def test_goal_in_a_closed_room_is_unreachable():
    """A goal cut off by walls: unreachable (no_path)."""
    grid = box_map(10.0, 8.0, [(5.0, 0.0, 5.2, 8.0)])
    _, ctrl, states = run(grid, [(2.0, 4.0, 0.0)], [(8.0, 4.0)], steps=5)
    assert states == [RobotState.UNREACHABLE]
    assert ctrl.navigator.reason[0] == 'no_path'


def door_map(width_m):
    """10 m x 8 m, a wall at x = 5.0..5.2 m with one door of ``width_m`` centred at y = 4."""
    return box_map(10.0, 8.0, [(5.0, 0.0, 5.2, 4.0 - width_m / 2.0),
                               (5.0, 4.0 + width_m / 2.0, 5.2, 8.0)])


def test_robots_pass_a_door_a_tenth_wider_than_their_disc():
    """A 0.5 m door for discs of 0.4 m (walls grown by the margin closed it): both cross."""
    grid = door_map(0.5)
    history, ctrl, states = run(grid, [(3.0, 2.5, 0.0), (7.0, 5.5, 3.14)],
                                [(7.0, 2.5), (3.0, 5.5)], steps=2000)
    assert states == [RobotState.REACHED] * 2
    assert wall_clearance(grid, history) > 0.2 - 1e-6
    crossing = np.abs(history[:, :, 0] - 5.1) < 0.1
    assert np.abs(history[:, :, 1][crossing] - 4.0).max() < 0.05   # through the middle


def test_a_door_narrower_than_the_disc_is_unreachable_naming_it():
    """A 0.35 m door for a 0.4 m disc: no_path, and the log names the narrow door."""
    ctrl = FleetController(FleetConfig.uniform(['r0']), NavigationConfig(), InlineExecutor())
    ctrl.set_map(door_map(0.35))
    ctrl.set_goal(0, 7.0, 4.0)
    inputs = FleetInputs.empty(1)
    warnings, states = [], []
    for k in range(3):
        inputs.set_odometry(0, x=3.0, y=4.0, yaw=0.0, time=k * 0.1)
        result = ctrl.step(inputs, k * 0.1)
        warnings += [text for _, text in result.warnings]
        states.append(result.states[0])
    assert states[-1] == RobotState.UNREACHABLE
    assert ctrl.navigator.reason[0] == 'no_path'
    assert any('narrowest passage' in text and '(5.' in text for text in warnings), warnings


def test_planning_state_until_the_worker_answers():
    """With a worker that has not answered, the robot reports planning and stands still."""

    class Never:

        def submit(self, fn, *args):
            return Future()

        def shutdown(self, **kwargs):
            pass

    ctrl = FleetController(FleetConfig.uniform(['r0']), NavigationConfig(), Never())
    ctrl.set_map(SHELF)
    ctrl.set_goal(0, 3.5, 6.5)
    inputs = FleetInputs.empty(1)
    inputs.set_odometry(0, x=3.5, y=1.5, yaw=0.0, time=0.0)
    result = ctrl.step(inputs, 0.0)
    # The map itself is still being prepared: the robot waits for it.
    assert result.states == [RobotState.PLANNING]
    np.testing.assert_array_equal(result.commands, 0.0)


def test_external_route_is_followed_and_an_empty_one_cancels_it():
    """An external dog-leg route is followed to its end; an empty route drops it."""
    cfg = FleetConfig.uniform(['r0'])
    ctrl = FleetController(cfg, NavigationConfig(), InlineExecutor())
    route = np.array([[0.0, 0.0], [0.0, 3.0], [3.0, 3.0]])
    ctrl.set_route(0, route)
    assert ctrl.has_goal[0] and ctrl.goal[0].tolist() == [3.0, 3.0]
    inputs = FleetInputs.empty(1)
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    cmd = ctrl.step(inputs, 0.0).commands[0]
    assert cmd[1] > 0.3 and abs(cmd[0]) < 0.2   # up the first leg, not straight at the goal
    ctrl.set_route(0, np.zeros((0, 2)))
    assert ctrl.navigator.points[0] is None
    cmd = ctrl.step(inputs, 0.0).commands[0]
    assert cmd[0] > 0.2 and cmd[1] > 0.2          # straight at the goal now


def test_a_new_map_replans_every_route():
    """Replacing the map re-plans: a route around a new wall appears."""
    open_map = box_map(10.0, 8.0, [])
    _, ctrl, _ = run(open_map, [(1.0, 4.0, 0.0)], [(9.0, 4.0)], steps=3)
    assert len(ctrl.navigator.points[0]) == 2       # straight line
    ctrl.set_map(box_map(10.0, 8.0, [(5.0, 1.0, 5.2, 8.0)]))
    inputs = FleetInputs.empty(1)
    inputs.set_odometry(0, x=1.0, y=4.0, yaw=0.0, time=1.0)
    for t in (1.0, 1.1):
        ctrl.step(inputs, t)
    points = ctrl.navigator.points[0]
    assert len(points) > 2 and points[:, 1].min() < 1.0    # through the gap at the bottom


def test_controllers_that_plan_in_one_process_keep_their_own_maps():
    """
    Two controllers planning in this process (as a node's warm-up does beside its ticks).

    The held maps were one per process: the second controller's map replaced the first's,
    whose next plan then ran on the other map (same map id: a straight line through the
    shelf) or failed (KeyError). Each now plans on its own map.
    """
    shelf = box_map(10.0, 8.0, [(4.0, 0.0, 6.0, 5.0)])   # the route goes above it
    _, first, _ = run(shelf, [(1.0, 2.0, 0.0)], [(9.0, 2.0)], steps=3)
    run(box_map(10.0, 8.0, []), [(1.0, 4.0, 0.0)], [(9.0, 4.0)], steps=3)
    first.set_goal(0, 9.0, 3.0)      # a new plan on the first controller's map
    inputs = FleetInputs.empty(1)
    inputs.set_odometry(0, x=1.0, y=2.0, yaw=0.0, time=1.0)
    for t in (1.0, 1.1):
        first.step(inputs, t)
    points = first.navigator.points[0]
    assert points is not None and len(points) > 2 and points[:, 1].max() > 5.0


def test_map_walls_keep_robots_off_walls_without_scans():
    """A robot routed along a wall: with map walls as obstacles it never touches it."""
    grid = box_map(10.0, 4.0, [(0.0, 1.9, 7.0, 2.1)])
    history, _, states = run(grid, [(1.0, 1.5, 0.0)], [(1.0, 2.6)], steps=1500)
    assert states == [RobotState.REACHED]
    assert wall_clearance(grid, history) > 0.2


def test_walls_near_matches_brute_force():
    """MapModel.walls_near returns every wall piece within range (random points)."""
    model = MapModel.build(SHELF)
    rng = np.random.default_rng(0)
    points = rng.uniform((0, 0), (10, 8), (20, 2))
    ranges = rng.uniform(0.2, 2.0, 20)
    near = model.walls_near(points, ranges)
    from orca_nav.core.geometry import point_segment_distance
    d = point_segment_distance(points, model.walls)
    expected = model.walls[(d <= ranges[:, None]).any(axis=0)]
    got = {tuple(w.ravel().round(9)) for w in near}
    assert {tuple(w.ravel().round(9)) for w in expected} <= got


def test_split_segments_keeps_the_segment_and_bounds_pieces():
    """Pieces are collinear, contiguous and at most max_length long."""
    seg = np.array([[[0.0, 0.0], [3.0, 4.0]], [[1.0, 1.0], [1.2, 1.0]]])
    pieces = split_segments(seg, 1.0)
    lengths = np.hypot(*(pieces[:, 1] - pieces[:, 0]).T)
    assert lengths.max() <= 1.0 + 1e-12 and math.isclose(lengths.sum(), 5.2)


@pytest.mark.parametrize('change', [{'safety_margin': 0.3}, {'radius': 0.5}])
def test_a_runtime_change_of_margin_or_radius_moves_the_routes_clearance(change):
    """ros2 param set safety_margin / radius reaches the routes, not only the avoidance."""
    grid = box_map(10.0, 8.0, [(4.0, 0.0, 6.0, 5.0)])  # a block the route passes above
    _, ctrl, _ = run(grid, [(1.0, 2.0, 0.0)], [(9.0, 2.0)], steps=3)

    def clearance():
        """Return the route's smallest distance to a wall [m] (its points and midpoints)."""
        p = ctrl.navigator.points[0]
        dense = np.concatenate([p, (p[1:] + p[:-1]) / 2.0])
        return grid.distance_to_obstacle(dense).min()

    before = clearance()
    cfg = ctrl.config
    ctrl.reconfigure(dataclasses.replace(
        cfg, **{key: np.full(cfg.n, value) for key, value in change.items()}))
    inputs = FleetInputs.empty(1)
    inputs.set_odometry(0, x=1.0, y=2.0, yaw=0.0, time=1.0)
    for t in (1.0, 1.1):
        ctrl.step(inputs, t)
    np.testing.assert_allclose(ctrl.navigator.radius, ctrl.config.planning_radius)
    assert clearance() > before + 0.15, (before, clearance())
