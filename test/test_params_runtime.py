"""
A ``ros2 param set`` reaches every consumer: the node in-process, real rclpy (domain 91).

Each test starts an ``OrcaNavNode``, changes parameters the way ``ros2 param set`` does
(``set_parameters``: the node's on-set callback validates and applies them) and then drives
the node's own controller with arrays (``FleetInputs``), so what is checked is what the node
would command: one test per consumer family (avoidance core, routes, scans, people, give-way,
acceleration limits, timeouts, the node's own publishers and its reading of the map), plus
one that walks the whole table and checks that every writable parameter lands in the configs
the consumers hold.
"""

import dataclasses
import itertools
import json
import math
import time

from nav_msgs.msg import OccupancyGrid, Path
import numpy as np
from orca_nav.control.config import FleetConfig, navigation_config, people_config
from orca_nav.control.controller import FleetInputs
from orca_nav.control.parameters import FLEET_PARAMS, PARAMS_BY_NAME, ROBOT_PARAMS
from orca_nav.control.people import MovingObjects
from orca_nav.control.scan_memory import ScanInput
from orca_nav.ros.node import OrcaNavNode
from orca_nav.ros.outputs import LATCHED_QOS
import pytest
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from std_msgs.msg import String

from test_navigation import box_map  # noqa: I100 -- test/ is on sys.path

DOMAIN_ID = 91
PLAN_WAIT = 30.0  # [s] longest wait for the planning worker's routes (a busy machine)


@pytest.fixture
def make_node(context):
    """Return a function that starts a node with these parameters; destroyed after the test."""
    nodes = []

    def make(robots=('a', 'b'), **params):
        overrides = [Parameter('robots', value=list(robots))]
        overrides += [Parameter(name, value=value) for name, value in params.items()]
        node = OrcaNavNode(context=context, parameter_overrides=overrides)
        nodes.append(node)
        return node
    yield make
    for node in nodes:
        node.controller.navigator.close()
        node.destroy_node()


def set_params(node, **params):
    """``ros2 param set`` (atomically, several at once); fails the test when refused."""
    result = node.set_parameters_atomically(
        [Parameter(name.replace('__', '.'), value=value) for name, value in params.items()])
    assert result.successful, result.reason


def step(node, poses, t, twists=None, **extra):
    """One tick of the node's controller: poses (N, 3) [m, rad] at time t [s]; the result."""
    inputs = FleetInputs.empty(len(poses))
    odom_time = extra.pop('odom_time', t)
    for i, (x, y, yaw) in enumerate(poses):
        vx, vy, wz = (0.0, 0.0, 0.0) if twists is None else twists[i]
        inputs.set_odometry(i, x=x, y=y, yaw=yaw, time=odom_time,
                            v_forward=vx, v_left=vy, yaw_rate=wz)
    for key, value in extra.items():
        setattr(inputs, key, value)
    return node.controller.step(inputs, t)


# --- every parameter: the consumers hold what the table resolves -------------------------


UNIQUE = itertools.count()
CHOSEN = {'pref_speed': 0.3}  # below max_speed, which it would otherwise equal
CART = '[[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]'  # 0.9 x 0.6 m


def _another_value(spec, current, override):
    """Return a valid value of ``spec`` (a fleet row or an override) other than ``current``."""
    if spec.name in CHOSEN and not override:
        return CHOSEN[spec.name]
    if spec.name == 'footprint':  # a cart, longer per robot
        return CART if override else '[[0.3, 0.2], [-0.3, 0.2], [-0.3, -0.2], [0.3, -0.2]]'
    if spec.type == 'bool':
        return not current
    if spec.choices is not None:
        return next(c for c in spec.choices if c != current and c != '')
    if spec.type == 'string':
        return f'other{next(UNIQUE)}'
    if spec.type == 'string_array':
        return [f'other{next(UNIQUE)}']
    if spec.type == 'double_array':
        return [0.1, -0.2, 0.3]
    low, high = PARAMS_BY_NAME[spec.name].range  # an override: a value of the fleet's range
    share = 0.61 if override else 0.37  # an override differs from the fleet
    value = low + share * (min(high, max(low, 1.0) * 4.0) - low)
    if spec.type == 'integer':
        value = int(round(value))
        return value if value != current else value + 1
    return round(value, 3)


def test_every_writable_parameter_reaches_the_configs_the_consumers_hold(make_node):
    """
    Each writable parameter, fleet and per robot, set at run time, reaches the consumers.

    The controller, navigator and people tracker hold exactly what the table resolves from
    the new values, and a parameter that feeds the controller changes its config.
    """
    node = make_node(robots=('a',), observed_robots=['c'], scan_enabled=True)
    writable = [(s.name, s) for s in FLEET_PARAMS if not s.read_only]
    writable += [(f'c.{s.name}', s) for s in ROBOT_PARAMS if not s.read_only]
    unchanged = []  # parameters that feed the controller but left its config as it was
    node_only = {'global_frame', 'publish_markers', 'occupied_threshold', 'unknown_is_free',
                 'max_map_cells'}  # read by the node itself (tests below)
    for name, spec in writable:
        before = node.controller.config
        if name == 'track_people':
            continue  # tracking on and off: test_people_tracker_knobs
        value = _another_value(spec, node.settings.values[name], '.' in name)
        set_params(node, **{name.replace('.', '__'): value})
        values = node.settings.values
        assert values[name] == value, name
        config = node.controller.config
        expected = FleetConfig.from_values(values)
        for f in dataclasses.fields(FleetConfig):
            ours, theirs = getattr(config, f.name), getattr(expected, f.name)
            assert (ours is None) == (theirs is None), (name, f.name)
            if f.name == 'footprint':
                assert all((a is None and b is None) or np.array_equal(a, b)
                           for a, b in zip(ours, theirs)), name
            elif ours is not None and f.name != 'people':
                assert np.array_equal(np.asarray(ours), np.asarray(theirs)), (name, f.name)
        assert node.controller.navigator.config == navigation_config(values), name
        assert config.people == (people_config(values) if values['track_people'] else None)
        if node.controller.people is not None:
            assert node.controller.people.config == people_config(values), name
        feeds_controller = (spec.name not in node_only and name not in
                            {f.name for f in dataclasses.fields(navigation_config(values))})
        if feeds_controller and not any(
                not np.array_equal(np.asarray(getattr(before, f.name), dtype=object),
                                   np.asarray(getattr(config, f.name), dtype=object))
                for f in dataclasses.fields(FleetConfig)):
            unchanged.append(name)
    # A group name alone changes nothing while no robot ignores a group; c's radius nothing
    # once the fleet has a footprint (set before it: the footprint wins).
    assert unchanged == ['avoidance_group', 'c.radius'], unchanged


def test_a_parameter_that_cannot_reach_its_consumer_is_read_only(make_node):
    """
    A set of observed_reciprocate is refused with the reason, not ignored.

    It is the default of each observed robot's (read-only) reciprocate: a set at run time
    would change no robot (it did so, silently, before it was read-only).
    """
    node = make_node(robots=('a',), observed_robots=['c'])
    result = node.set_parameters([Parameter('observed_reciprocate', value=True)])[0]
    assert not result.successful and 'read-only' in result.reason
    assert node.controller.config.reciprocate.tolist() == [False, False]


# --- one test per consumer family --------------------------------------------------------


def test_avoidance_core_time_horizon_and_radius(make_node):
    """A robot standing ahead: a longer horizon, or a larger robot, is avoided sooner."""
    node = make_node()
    node.controller.set_goal(0, 5.0, 0.0)
    poses = [(0.0, 0.0, 0.0), (1.5, 0.0, 0.0)]

    def speed_toward_b(t):
        return step(node, poses, t).commands[0, 0]

    set_params(node, time_horizon=0.5)
    free = speed_toward_b(1.0)
    set_params(node, time_horizon=10.0)
    cautious = speed_toward_b(1.1)
    set_params(node, time_horizon=0.5, b__radius=1.0)
    big = speed_toward_b(1.2)
    assert free > 0.45, free              # the other robot is beyond the short horizon
    assert cautious < free - 0.05, (free, cautious)
    assert big < free - 0.05, (free, big)


def test_footprint_set_at_run_time_or_refused_keeping_the_old_one(make_node):
    """
    A cart picks up a load: its footprint grows, and so does the disc it avoids as.

    A bad footprint (two points, NaN, origin outside) is refused with the reason; the old one
    stays, and the other robot is untouched.
    """
    node = make_node()
    assert node.controller.config.radius.tolist() == [0.2, 0.2]
    set_params(node, b__footprint=CART)
    assert node.controller.config.radius[1] == pytest.approx(math.hypot(0.45, 0.3) + 0.01)
    loaded = '[[0.7, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.7, -0.3]]'
    set_params(node, b__footprint=loaded, footprint_padding=0.05)
    loaded_radius = math.hypot(0.7, 0.3) + 0.05
    assert node.controller.config.radius.tolist() == [0.2, pytest.approx(loaded_radius)]
    assert node.controller.navigator.true_radius[1] == node.controller.config.radius[1]
    for bad, reason in (('[[0.5, 0.3], [-0.5, 0.3]]', 'needs at least 3 points'),
                        ('[[nan, 0.3], [-0.5, 0.3], [0, -1]]', 'finite'),
                        ('[[1, 0], [2, 0], [2, 1]]', 'must contain the robot origin'),
                        ('[[0.5, 0.3], [-0.5 0.3], [0, -1]]', 'must be a list of [x, y]')):
        result = node.set_parameters([Parameter('b.footprint', value=bad)])[0]
        assert not result.successful and reason in result.reason, result.reason
        assert result.reason.startswith('b.footprint') and '\n' not in result.reason
        assert node.settings.values['b.footprint'] == loaded
        assert node.controller.config.radius.tolist() == [0.2, pytest.approx(loaded_radius)]
    set_params(node, b__footprint='[]')  # a disc again
    assert node.controller.config.radius.tolist() == [0.2, 0.2]


@pytest.mark.parametrize('change, message', [
    ({'b.footprint': '[[0.5, 0.3], [-0.5, 0.3]]'}, 'b.footprint needs at least 3 points'),
    ({'footprint': '[[50, 50], [-50, 50], [-50, -50], [50, -50]]'}, 'at most 10 m'),
])
def test_a_node_with_a_bad_footprint_refuses_to_start(context, change, message):
    """At start-up a bad footprint is refused as any invalid parameter: the reason, no node."""
    overrides = [Parameter('robots', value=['a', 'b'])]
    overrides += [Parameter(name, value=value) for name, value in change.items()]
    with pytest.raises(ValueError, match=message):
        OrcaNavNode(context=context, parameter_overrides=overrides)


@pytest.mark.parametrize('change', [{'safety_margin': 0.3}, {'radius': 0.5},
                                    {'a__radius': 0.5}, {'route_margin': 0.4}])
def test_routes_keep_the_new_clearance(make_node, change):
    """radius, safety_margin (fleet or per robot) and route_margin set: routes are re-planned."""
    grid = box_map(10.0, 8.0, [(4.0, 0.0, 6.0, 5.0)])  # a block the route passes above
    node = make_node(robots=('a',))
    node.controller.set_map(grid)
    node.controller.set_goal(0, 9.0, 2.0)
    pose = [(1.0, 2.0, 0.0)]

    def route_clearance(after):
        """Wait for a route planned after the version ``after``; its least wall distance."""
        nav, t = node.controller.navigator, 1.0
        deadline = t + PLAN_WAIT
        while t < deadline and not (nav.points[0] is not None and nav.version[0] > after
                                    and not nav.planning[0] and not nav.needs_plan[0]):
            step(node, pose, t)
            t += 0.05
            time.sleep(0.05)
        p = nav.points[0]
        assert p is not None, 'no route'
        dense = np.concatenate([p, (p[1:] + p[:-1]) / 2.0])
        return grid.distance_to_obstacle(dense).min(), int(nav.version[0])

    before, version = route_clearance(0)
    set_params(node, **change)
    np.testing.assert_allclose(node.controller.navigator.radius,
                               node.controller.config.planning_radius)
    after, _ = route_clearance(version)
    assert after > before + 0.15, (before, after)


def test_route_lookahead_moves_the_carrot(make_node):
    """route_lookahead set: the carrot on the route moves to the new distance."""
    node = make_node(robots=('a',))
    node.controller.set_route(0, np.array([[0.0, 0.0], [8.0, 0.0]]))
    step(node, [(0.0, 0.0, 0.0)], 1.0)
    assert node.controller.navigator.carrot[0, 0] == pytest.approx(1.0, abs=0.05)
    set_params(node, route_lookahead=3.0)
    step(node, [(0.0, 0.0, 0.0)], 1.1)
    assert node.controller.navigator.carrot[0, 0] == pytest.approx(3.0, abs=0.05)


def _wall_scan(robot, t, distance=0.6):
    """Return a 360-beam scan of a wall ``distance`` [m] ahead of a robot at yaw 0."""
    angles = -math.pi + 2.0 * math.pi / 360 * np.arange(360)
    with np.errstate(divide='ignore'):
        ranges = np.where(np.abs(angles) < 1.2, distance / np.cos(angles), np.inf)
    return ScanInput(robot=robot, ranges=ranges, angle_min=-math.pi,
                     angle_increment=2.0 * math.pi / 360, range_min=0.05, range_max=8.0,
                     time=t)


def test_scans_obstacle_timeout(make_node):
    """obstacle_timeout set longer: a wall seen once is still avoided after the old timeout."""
    node = make_node(robots=('a',), scan_enabled=True, track_people=False)
    node.controller.set_goal(0, 5.0, 0.0)
    pose = [(0.0, 0.0, 0.0)]
    step(node, pose, 1.0, scans=[_wall_scan(0, 1.0)])
    assert step(node, pose, 1.1).commands[0, 0] < 0.3       # the wall is avoided
    assert step(node, pose, 1.8).commands[0, 0] > 0.45       # forgotten after 0.5 s
    set_params(node, obstacle_timeout=2.0)
    assert node.scan_quota is not None
    step(node, pose, 2.0, scans=[_wall_scan(0, 2.0)])
    assert step(node, pose, 2.8).commands[0, 0] < 0.3        # still remembered


def test_people_person_margin(make_node):
    """person_margin set: a known person standing ahead is given the new berth."""
    node = make_node(robots=('a',))
    node.controller.set_goal(0, 5.0, 0.0)
    pose = [(0.0, 0.0, 0.0)]
    person = MovingObjects(np.array([0]), np.array([[1.4, 0.0]]), np.zeros((1, 2)),
                           np.array([0.3]))

    def forward(t):
        return step(node, pose, t, people=person, people_time=t).commands[0, 0]

    set_params(node, person_margin=0.0, person_time_horizon=1.0)
    near = forward(1.0)
    set_params(node, person_margin=1.0)
    far = forward(1.1)
    assert near > far + 0.05, (near, far)


def test_people_tracker_knobs(make_node):
    """track_people and track_* set: tracking starts (with ~/tracks), runs with new knobs."""
    node = make_node(robots=('a',), scan_enabled=True, track_people=False)
    assert node.controller.people is None and node.count_publishers('/orca_nav/tracks') == 0
    set_params(node, track_people=True)
    assert node.count_publishers('/orca_nav/tracks') == 1
    tracker = node.controller.people.tracker
    set_params(node, track_gate=1.5, track_confirm_hits=5)
    assert node.controller.people.tracker is not tracker
    assert node.controller.people.tracker.gate == 1.5
    assert node.controller.people.tracker.confirm_hits == 5
    set_params(node, track_people=False)
    assert node.controller.people is None


def test_give_way_avoidance_weight(make_node):
    """a.avoidance_weight 1 set: a keeps its course head-on, b takes all the avoiding."""
    node = make_node()
    node.controller.set_goal(0, 4.0, 0.0)
    node.controller.set_goal(1, -2.0, 0.0)
    poses = [(0.0, 0.0, 0.0), (2.0, 0.0, math.pi)]
    twists = [(0.5, 0.0, 0.0), (0.5, 0.0, 0.0)]
    shared = step(node, poses, 1.0, twists).commands
    set_params(node, a__avoidance_weight=1.0)
    weighted = step(node, poses, 1.1, twists).commands
    assert abs(weighted[0, 1]) < abs(shared[0, 1]) - 0.02, (shared, weighted)
    assert abs(weighted[1, 1]) > abs(shared[1, 1]) + 0.02, (shared, weighted)


def test_acceleration_limits(make_node):
    """max_accel / max_decel set: the next command changes by at most a period's worth."""
    node = make_node(robots=('a',))
    node.controller.set_goal(0, 5.0, 0.0)
    pose = [(0.0, 0.0, 0.0)]
    first = step(node, pose, 1.0).commands[0]
    assert first[0] > 0.45                                   # unlimited: at once
    set_params(node, max_accel=0.5, max_decel=0.5)
    node.controller.set_goal(0, -5.0, 0.0)
    second = step(node, pose, 1.1, [tuple(first)]).commands[0]
    assert np.hypot(*(second[:2] - first[:2])) <= 0.5 * 0.1 + 1e-6, (first, second)


def test_timeouts_odom_timeout(make_node):
    """odom_timeout set longer: odometry 0.8 s old is fresh again (the robot moves)."""
    node = make_node(robots=('a',))
    node.controller.set_goal(0, 5.0, 0.0)
    pose = [(0.0, 0.0, 0.0)]
    stale = step(node, pose, 1.8, odom_time=1.0)
    assert stale.states[0].value == 'stale_odometry' and stale.commands[0, 0] == 0.0
    set_params(node, odom_timeout=1.0)
    fresh = step(node, pose, 1.9, odom_time=1.1)
    assert fresh.states[0].value == 'active' and fresh.commands[0, 0] > 0.4


# --- the node's own publishers -----------------------------------------------------------


def test_node_outputs_global_frame_and_group(make_node, context):
    """
    global_frame and avoidance_group set: routes and status are published again with them.

    (The node's publishers kept the frame and the groups they were made with.)
    """
    node = make_node(robots=('a',))
    listener = Node('runtime_listener', context=context)
    paths, statuses = [], []
    listener.create_subscription(Path, '/a/orca_route', paths.append, LATCHED_QOS)
    listener.create_subscription(String, '/a/orca_status',
                                 lambda m: statuses.append(json.loads(m.data)), LATCHED_QOS)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(listener)
    try:
        node.controller.set_route(0, np.array([[0.0, 0.0], [8.0, 0.0]]))
        result = step(node, [(0.0, 0.0, 0.0)], 1.0)

        def publish_and_wait(count):
            node.outputs.routes(result.routes)
            node.outputs.status(result)
            deadline = time.monotonic() + 10.0
            while (len(paths) < count or len(statuses) < count) and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.05)

        publish_and_wait(1)
        assert paths[-1].header.frame_id == 'map' and statuses[-1]['group'] == 'default'
        set_params(node, global_frame='odom', avoidance_group='lift')
        publish_and_wait(2)
        assert len(paths) == 2 and paths[-1].header.frame_id == 'odom'
        assert len(statuses) == 2 and statuses[-1]['group'] == 'lift'
    finally:
        executor.shutdown()
        listener.destroy_node()


def test_map_parameters_read_the_newest_map_again(make_node):
    """occupied_threshold set: the map the node has is read again with it (cells of 50)."""
    node = make_node(robots=('a',))
    msg = OccupancyGrid()
    msg.header.frame_id = 'map'
    msg.info.resolution, msg.info.width, msg.info.height = 0.1, 40, 40
    cells = np.zeros((40, 40), np.int8)
    cells[:, 20] = 50                              # a line of cells at 50 % at x = 2.0 m
    msg.data = cells.ravel().tolist()

    def wall_distance(old=None):
        """Wait for a map other than ``old`` in use; its grid and wall distance at (1, 2) m."""
        nav, t, deadline = node.controller.navigator, 1.0, time.monotonic() + PLAN_WAIT
        while time.monotonic() < deadline and (nav.model is None or nav.model.grid is old):
            step(node, [(1.0, 2.0, 0.0)], t)
            t += 0.05
            time.sleep(0.05)
        grid = nav.model.grid
        return grid, float(grid.distance_to_obstacle(np.array([[1.0, 2.0]]))[0])

    node.on_map(msg)
    grid, free = wall_distance()                    # threshold 65: the line is free
    set_params(node, occupied_threshold=40)
    assert node.controller.navigator.maps_received == 2
    _, wall = wall_distance(grid)
    assert free > 1.5 and wall == pytest.approx(1.0, abs=0.1), (free, wall)
