"""The fleet simulator over real rclpy: kinematics, odometry, scans, timeout, truth, /map."""

import math
import os
import subprocess
import sys
import time

from geometry_msgs.msg import Twist, TwistStamped
from helpers import Probe, seconds_of, spin_for, spin_until, yaw_of
from nav_msgs.msg import OccupancyGrid, Odometry
from nav_msgs.srv import GetMap
import numpy as np
import orca_nav
from orca_nav.control.parameters import FLEET_BY_NAME
from orca_nav.core.perception.raycast import cast_rays
from orca_nav.sim.maps import scenario_grid
from orca_nav.sim.node import MAP_QOS, MAP_TOPIC, SimNode, TEARDOWN_GRACE
from orca_nav.sim.scenarios import load_scenario, scenario_from_dict, ScenarioError
from orca_nav.sim.world import clamp_command, integrate, World
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import LaserScan
import yaml

# Keep DDS on this machine; domains 30..49 belong to the simulator/demo tests.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
DOMAIN_ID = 33

WALL_X = 2.0
OTHER = (0.0, -1.0, 0.25)  # x, y, radius of the second robot


@pytest.fixture
def world(tmp_path):
    """One robot at the origin facing +30 deg, a wall at x = 2 and a second robot below it."""
    path = tmp_path / 'world.yaml'
    path.write_text(yaml.safe_dump({
        'robot_defaults': {'max_speed': 0.5, 'max_angular_speed': 1.0},
        'robots': [
            {'name': 'a', 'start': [0.0, 0.0, math.radians(30.0)], 'goal': [-3.0, 0.0]},
            {'name': 'b', 'start': list(OTHER[:2]) + [0.0], 'goal': [-3.0, -1.0],
             'radius': OTHER[2]},
        ],
        'obstacles': {'segments': [[[WALL_X, -5.0], [WALL_X, 5.0]]]},
    }))
    return str(path)


class Harness(Probe):
    """A SimNode and the rig's probe node on one executor in a private context."""

    def __init__(self, scenario, **params):
        """Start the simulator with the given parameters plus a probe node."""
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN_ID)
        overrides = [Parameter('scenario', value=scenario)]
        overrides += [Parameter(k, value=v) for k, v in params.items()]
        self.sim = SimNode(context=self.context, parameter_overrides=overrides)
        super().__init__(self.context)
        self.executor.add_node(self.sim)
        self.odom, self.scans = [], []
        self.probe.create_subscription(Odometry, '/a/odom', self.odom.append,
                                       QoSProfile(depth=50))
        self.probe.create_subscription(LaserScan, '/a/scan', self.scans.append,
                                       qos_profile_sensor_data)
        stamped = params.get('cmd_vel_stamped', False)
        self.cmd_pub = self.probe.create_publisher(TwistStamped if stamped else Twist,
                                                   '/a/cmd_vel', 10)

    def spin(self, seconds, command=None):
        """Spin for `seconds`, publishing `command` (vx, vy, wz) every 50 ms if given."""
        if command is None:
            spin_for(self.executor, seconds)
            return
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            msg = self.cmd_pub.msg_type()
            twist = msg.twist if isinstance(msg, TwistStamped) else msg
            twist.linear.x, twist.linear.y, twist.angular.z = command
            self.cmd_pub.publish(msg)
            spin_for(self.executor, min(0.05, max(end - time.monotonic(), 0.0)))

    def close(self):
        """Tear down the nodes and the context."""
        self.executor.remove_node(self.sim)
        self.sim.destroy_node()
        super().close()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture
def harness(world):
    """Yield a factory of harnesses on the test world; close them afterwards."""
    made = []

    def make(**params):
        made.append(Harness(world, **params))
        return made[-1]
    yield make
    for h in made:
        h.close()


def _pose(msg):
    p = msg.pose.pose.position
    return np.array([p.x, p.y, yaw_of(msg.pose.pose.orientation)])


def _stamp(msg):
    return seconds_of(msg.header.stamp)


def test_clamp_and_integrate_are_exact():
    assert clamp_command('holonomic', 3.0, 4.0, 5.0, 1.0, 2.0) == pytest.approx((0.6, 0.8, 2.0))
    assert clamp_command('differential', -3.0, 4.0, -5.0, 1.0, 2.0) == (-1.0, 0.0, -2.0)
    assert clamp_command('holonomic', math.nan, 0.0, 0.0, 1.0, 1.0) == (0.0, 0.0, 0.0)
    # Straight line, body frame rotated by yaw.
    x, y, yaw = integrate((1.0, 2.0, math.pi / 2), 0.5, 0.2, 0.0, 2.0)
    assert (x, y, yaw) == pytest.approx((1.0 - 0.4, 3.0, math.pi / 2))
    # A quarter circle of radius v / w = 2 in many small steps and in one: same arc end.
    pose = (0.0, 0.0, 0.0)
    for _ in range(100):
        pose = integrate(pose, 1.0, 0.0, 0.5, math.pi / 100)
    assert pose == pytest.approx((2.0, 2.0, math.pi / 2), abs=1e-9)
    assert integrate((0.0, 0.0, 0.0), 1.0, 0.0, 0.5, math.pi) == pytest.approx(
        (2.0, 2.0, math.pi / 2), abs=1e-9)
    # Holonomic sideways motion while turning: the centre moves on a circle too.
    x, y, yaw = integrate((0.0, 0.0, 0.0), 0.0, 1.0, 1.0, math.pi)
    assert (x, y) == pytest.approx((-2.0, 0.0), abs=1e-9)


@pytest.mark.slow
def test_holonomic_twist_moves_the_robot_in_the_rotated_body_frame(harness):
    h = harness()
    h.spin(1.5, command=(0.3, 0.2, 0.0))
    assert len(h.odom) >= 15
    last = h.odom[-1]
    assert last.header.frame_id == 'map' and last.child_frame_id == 'a/base_link'
    assert (last.twist.twist.linear.x, last.twist.twist.linear.y) == pytest.approx((0.3, 0.2))
    # Measure the global velocity between two messages 1 s apart (stamps = publish time).
    first = next(m for m in h.odom if _stamp(m) >= _stamp(last) - 1.0)
    velocity = (_pose(last) - _pose(first))[:2] / (_stamp(last) - _stamp(first))
    yaw = math.radians(30.0)
    expected = [0.3 * math.cos(yaw) - 0.2 * math.sin(yaw),
                0.3 * math.sin(yaw) + 0.2 * math.cos(yaw)]
    assert velocity == pytest.approx(expected, abs=0.03)
    assert _pose(last)[2] == pytest.approx(yaw)


@pytest.mark.slow
def test_holonomic_speed_is_clamped_to_max_speed(harness):
    h = harness()
    h.spin(1.2, command=(3.0, 4.0, 0.0))
    last = h.odom[-1]
    body = (last.twist.twist.linear.x, last.twist.twist.linear.y)
    assert body == pytest.approx((0.3, 0.4))  # 0.5 m/s in the commanded direction


@pytest.mark.slow
def test_differential_robot_follows_an_arc_and_ignores_linear_y(harness):
    h = harness(drive='differential', cmd_vel_stamped=True)
    h.spin(2.0, command=(0.4, 0.3, 0.5))
    moving = [m for m in h.odom if m.twist.twist.linear.x > 0.0]
    assert len(moving) >= 20
    assert all(m.twist.twist.linear.y == 0.0 for m in moving)
    yaw0 = math.radians(30.0)
    # Unicycle with v = 0.4, w = 0.5: a circle of radius 0.8 left of the start heading.
    center = 0.8 * np.array([-math.sin(yaw0), math.cos(yaw0)])
    for m in moving:
        x, y, yaw = _pose(m)
        assert math.hypot(x - center[0], y - center[1]) == pytest.approx(0.8, abs=1e-6)
        # Heading is tangent to the circle.
        expected_yaw = math.atan2(y - center[1], x - center[0]) + math.pi / 2
        assert math.remainder(yaw - expected_yaw, 2 * math.pi) == pytest.approx(0.0, abs=1e-6)
    assert _pose(moving[-1])[2] - yaw0 > 0.5  # it turned (about 1 rad in 2 s)


@pytest.mark.slow
def test_robot_stops_when_cmd_vel_times_out(harness):
    h = harness(cmd_vel_timeout=0.2)
    h.spin(0.6, command=(0.5, 0.0, 0.0))
    h.spin(0.5)
    stopped = _pose(h.odom[-1])
    assert h.odom[-1].twist.twist.linear.x == 0.0
    assert np.linalg.norm(stopped[:2]) > 0.1
    h.spin(0.5)
    assert np.allclose(_pose(h.odom[-1]), stopped)


def _expected_ranges(origin, angles, range_max):
    """Brute-force hits of the wall x = WALL_X and the disc OTHER, per ray."""
    out = np.full(len(angles), np.inf)
    for k, a in enumerate(angles):
        d = np.array([math.cos(a), math.sin(a)])
        hits = []
        if d[0] > 1e-12:
            t = (WALL_X - origin[0]) / d[0]
            if abs(origin[1] + t * d[1]) <= 5.0:  # the wall spans y in [-5, 5]
                hits.append(t)
        rel = origin - np.array(OTHER[:2])
        b = rel @ d
        disc = b * b - (rel @ rel - OTHER[2] ** 2)
        if disc >= 0.0 and -b - math.sqrt(disc) > 0.0:
            hits.append(-b - math.sqrt(disc))
        if hits and min(hits) <= range_max:
            out[k] = min(hits)
    return out


def test_scan_ranges_match_the_geometry(harness):
    h = harness(scan_beams=90, scan_range_max=3.0)
    spin_until(h.executor, lambda: h.scans, what='a scan')
    scan = h.scans[-1]
    assert scan.header.frame_id == 'a/base_link'
    assert len(scan.ranges) == 90
    assert scan.angle_min == pytest.approx(-math.pi)
    assert scan.angle_increment == pytest.approx(2 * math.pi / 90)
    assert scan.range_max == pytest.approx(3.0)
    body = scan.angle_min + scan.angle_increment * np.arange(90)
    expected = _expected_ranges(np.zeros(2), math.radians(30.0) + body, 3.0)
    ranges = np.array(scan.ranges)
    assert np.array_equal(np.isinf(ranges), np.isinf(expected))
    assert np.isfinite(expected).sum() > 20  # both the wall and the other robot are seen
    finite = np.isfinite(expected)
    assert ranges[finite] == pytest.approx(expected[finite], abs=1e-5)


def test_scan_noise_is_seeded(harness):
    h1 = harness(scan_noise=0.02, seed=5)
    h2 = harness(scan_noise=0.02, seed=5)
    r1, r2 = h1.sim.world.scan_ranges(0), h2.sim.world.scan_ranges(0)
    assert np.array_equal(r1, r2)
    clean = _expected_ranges(np.zeros(2), math.radians(30.0) + h1.sim.world.beam_offsets, 6.0)
    finite = np.isfinite(clean)
    assert 0.005 < np.std(r1[finite] - clean[finite]) < 0.05


@pytest.mark.slow
def test_ground_truth_file_records_every_step(harness, tmp_path):
    path = tmp_path / 'truth.npz'
    h = harness(trajectory_file=str(path), sim_rate=50.0)
    h.spin(1.0, command=(0.5, 0.0, 0.0))
    h.sim.save_trajectory()
    data = np.load(path)
    assert list(data['names']) == ['a', 'b']
    assert data['poses'].shape[1:] == (2, 3)
    assert len(data['t']) >= 30  # ~50 steps in 1 s; the shared test machine may lag
    assert np.all(np.diff(data['t']) > 0)
    assert np.allclose(data['poses'][0, 1], [0.0, -1.0, 0.0])  # b never moves
    assert np.linalg.norm(data['poses'][-1, 0, :2]) > 0.3
    qos = h.probe.get_publishers_info_by_topic('/a/scan')[0].qos_profile
    assert qos.reliability == ReliabilityPolicy.BEST_EFFORT


def test_a_bad_scenario_is_refused_with_the_reason(tmp_path):
    path = tmp_path / 'bad.yaml'
    path.write_text('robots:\n  - {start: [0, 0], goal: [1, 0], max_sped: 1.0}\n')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    try:
        with pytest.raises(ScenarioError, match="did you mean 'max_speed'"):
            SimNode(context=context, parameter_overrides=[Parameter('scenario', value=str(path))])
    finally:
        rclpy.try_shutdown(context=context)


# --- /map -----------------------------------------------------------------------------------

def _late_map(context, sim):
    """Subscribe to /map after the simulator published it: (probe, executor, messages)."""
    probe = rclpy.create_node('late_probe', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(sim)
    executor.add_node(probe)
    maps = []
    probe.create_subscription(OccupancyGrid, '/map', maps.append, MAP_QOS)
    return probe, executor, maps


def test_map_is_latched_for_a_late_subscriber_and_matches_the_scenario(world):
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    sim = SimNode(context=context, parameter_overrides=[
        Parameter('scenario', value=world), Parameter('map_resolution', value=0.1)])
    try:
        # The map went out in the constructor, before anybody subscribed.
        probe, executor, maps = _late_map(context, sim)
        spin_until(executor, lambda: maps, what='the latched /map')
        msg = maps[0]
        qos = probe.get_publishers_info_by_topic('/map')[0].qos_profile
        assert qos.durability == DurabilityPolicy.TRANSIENT_LOCAL
        assert qos.reliability == ReliabilityPolicy.RELIABLE
        assert msg.header.frame_id == 'map' and msg.info.resolution == pytest.approx(0.1)
        assert MAP_TOPIC == FLEET_BY_NAME['map_topic'].default    # where the node listens
        data, width, height, _, origin = scenario_grid(sim.scenario, 0.1)
        assert (msg.info.width, msg.info.height) == (width, height)
        assert (msg.info.origin.position.x, msg.info.origin.position.y) == pytest.approx(
            origin[:2])
        assert np.array_equal(np.array(msg.data, dtype=np.int8), data)
        # The wall x = 2 (y -5..5) is in it.
        grid = np.array(msg.data).reshape(height, width)
        col = int((WALL_X - origin[0]) / 0.1)
        assert (grid[:, col - 1:col + 1] == 100).any(axis=1).sum() >= 90
        # Asked again (GetMap): the same map, published once more.
        client = probe.create_client(GetMap, '/orca_nav_sim/get_map')
        spin_until(executor, client.service_is_ready, what='the get_map service')
        future = client.call_async(GetMap.Request())
        spin_until(executor, future.done, what='the get_map reply')
        assert future.result().map.info.width == width
        spin_until(executor, lambda: len(maps) >= 2, what='the map published again')
        executor.shutdown()
        probe.destroy_node()
    finally:
        sim.destroy_node()
        rclpy.try_shutdown(context=context)


def test_publish_map_false_publishes_no_map(harness):
    h = harness(publish_map=False)
    h.spin(0.2)
    assert h.probe.get_publishers_info_by_topic('/map') == []


def test_map_delay_publishes_the_map_that_much_later(harness):
    """map_delay: nothing on /map at first (a map server that comes late), then the map."""
    h = harness(map_delay=1.0)
    maps = []
    h.probe.create_subscription(OccupancyGrid, '/map', maps.append, MAP_QOS)
    start = time.monotonic()
    h.spin(0.6)
    assert maps == []
    spin_until(h.executor, lambda: maps, what='the late /map')
    assert time.monotonic() - start >= 0.95 and len(maps) == 1
    h.spin(1.2)
    assert len(maps) == 1  # once, not every map_delay


def test_scans_see_the_walls_of_a_map_file():
    """office_mapfile: the scans hit the outlines of the occupied cells of the map."""
    scenario = load_scenario('office_mapfile')
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    sim = SimNode(context=context, parameter_overrides=[
        Parameter('scenario', value='office_mapfile'), Parameter('scan_beams', value=36),
        Parameter('publish_map', value=False)])
    try:
        ranges = sim.world.scan_ranges(0)
        pose = scenario.starts[0]
        walls = scenario.grid_map().wall_segments()
        others = scenario.starts[1:, :2]
        expected = cast_rays(pose[:2], pose[2] + sim.world.beam_offsets, 6.0, walls, others,
                             scenario.radii[1:])
        assert np.array_equal(ranges, expected)
        # b0 starts in a 3.8 x 3.3 m room: every beam hits a wall or a door edge within 6 m,
        # and no beam reads less than the start's clearance.
        hit = np.isfinite(ranges)
        assert hit.sum() >= 30
        assert ranges[hit].min() >= scenario.obstacle_distance(pose[None, :2])[0] - 0.06
    finally:
        sim.destroy_node()
        rclpy.try_shutdown(context=context)


# --- walkers ----------------------------------------------------------------------------------

def _walk(scenario, duration, dt=0.02, twists=None):
    """Step a World of the scenario; return {t rounded to ms: (poses, twists)} of every step."""
    world = World(scenario, track_contacts=False)
    commands = np.zeros((len(world.poses), 3)) if twists is None else twists
    out = {0.0: (world.poses.copy(), world.twists.copy())}
    for _ in range(int(round(duration / dt))):
        t = world.time
        world.drive(commands, dt)
        # The twist and yaw of the step from t.
        out[round(t, 3)] = (world.poses.copy(), world.twists.copy())
        world.advance(dt)
    out[round(duration, 3)] = (world.poses.copy(), world.twists.copy())
    return out


def test_drive_walkers_follows_the_polyline_at_its_speed_and_stops_at_the_end():
    s = scenario_from_dict({
        'robots': [{'name': 'a', 'start': [-5, 5], 'goal': [5, 5]}],
        'walkers': [{'name': 'w', 'waypoints': [[0, -3], [3, -3], [3, 1]], 'speed': 0.5,
                     'start_time': 2.0}]})
    commanded = np.zeros((2, 3))
    commanded[0] = (0.3, 0.0, 0.1)   # the robot's own twist: left alone
    steps = _walk(s, 20.0, twists=commanded)
    pose = {t: p[1] for t, (p, _) in steps.items()}
    twist = {t: w[1] for t, (_, w) in steps.items()}
    # Waits at its first waypoint until start_time, standing still.
    assert pose[1.0] == pytest.approx((0.0, -3.0, 0.0))
    assert pose[2.0] == pytest.approx((0.0, -3.0, 0.0))
    assert twist[1.0] == pytest.approx((0.0, 0.0, 0.0))
    # Then 0.5 m/s along the legs: the arc-length point 0.5 (t - 2) m along the path.
    assert pose[4.0][:2] == pytest.approx((1.0, -3.0), abs=1e-9)
    assert pose[8.0][:2] == pytest.approx((3.0, -3.0), abs=1e-9)
    assert pose[11.0][:2] == pytest.approx((3.0, -1.5), abs=1e-9)
    # Facing where it goes with a holonomic body twist (speed, 0, 0).
    assert twist[5.0] == pytest.approx((0.5, 0.0, 0.0))
    assert pose[5.0][2] == pytest.approx(0.0)
    assert twist[10.0] == pytest.approx((0.5, 0.0, 0.0))
    assert pose[10.0][2] == pytest.approx(math.pi / 2)
    # At the last waypoint after 7 m (t = 16), standing there.
    assert pose[16.0][:2] == pytest.approx((3.0, 1.0), abs=1e-9)
    assert pose[20.0][:2] == pytest.approx((3.0, 1.0), abs=1e-9)
    assert twist[18.0] == pytest.approx((0.0, 0.0, 0.0))
    # Never faster than its speed; the robot's twist untouched.
    assert max(np.hypot(w[1, 0], w[1, 1]) for _, w in steps.values()) <= 0.5 + 1e-9
    assert all(np.array_equal(w[0], (0.3, 0.0, 0.1)) for _, w in steps.values())


def test_drive_walkers_loops_when_asked_and_depends_on_the_simulated_time_only():
    s = scenario_from_dict({
        'robots': [{'name': 'a', 'start': [-5, 5], 'goal': [5, 5]}],
        'walkers': [{'name': 'w', 'waypoints': [[0, -3], [2, -3]], 'speed': 1.0,
                     'loop': True}]})
    steps = _walk(s, 9.0, dt=0.02)
    pose = {t: p[1] for t, (p, _) in steps.items()}
    assert pose[1.0][:2] == pytest.approx((1.0, -3.0), abs=1e-9)
    assert pose[3.0][:2] == pytest.approx((1.0, -3.0), abs=1e-9)   # on its way back
    assert pose[3.0][2] == pytest.approx(math.pi)
    assert pose[4.0][:2] == pytest.approx((0.0, -3.0), abs=1e-9)   # round again
    assert pose[9.0][:2] == pytest.approx((1.0, -3.0), abs=1e-9)
    # Uneven steps (a late timer) land on the same path points.
    world = World(s, track_contacts=False)
    for dt in [0.013, 0.1, 0.037] * 30:
        world.step(np.zeros((2, 3)), dt)
    assert world.time == pytest.approx(4.5)
    assert world.poses[1, :2] == pytest.approx((0.5, -3.0), abs=1e-9)


def test_walkers_have_no_topics_and_appear_in_the_scans(tmp_path):
    path = tmp_path / 'walker.yaml'
    path.write_text(yaml.safe_dump({
        'robots': [{'name': 'a', 'start': [0.0, 0.0, 0.0], 'goal': [-3.0, 0.0]}],
        'walkers': [{'name': 'w', 'waypoints': [[2.0, 0.0], [2.0, 3.0]], 'radius': 0.25,
                     'start_time': 1000.0}]}))
    truth = tmp_path / 'truth.npz'
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=DOMAIN_ID)
    sim = SimNode(context=context, parameter_overrides=[
        Parameter('scenario', value=str(path)), Parameter('scan_beams', value=36),
        Parameter('publish_map', value=False), Parameter('trajectory_file', value=str(truth))])
    try:
        assert sorted(sim.odom_pubs) == [0] and sorted(sim.scan_pubs) == [0]
        topics = [name for name, _ in sim.get_topic_names_and_types()]
        assert {'/a/odom', '/a/scan', '/a/cmd_vel'} <= set(topics)
        assert not [name for name in topics if name.startswith('/w/')], topics
        # The robot's scanner sees the walker's disc straight ahead (beam 18 of 36 at 0 rad).
        ranges = sim.world.scan_ranges(0)
        assert ranges[18] == pytest.approx(2.0 - 0.25, abs=1e-9)
        assert np.isinf(ranges[0]) and np.isfinite(ranges).sum() <= 5
        # The ground truth holds both rows and marks the walker.
        sim.save_trajectory()
        data = np.load(truth)
        assert list(data['names']) == ['a', 'w']
        assert data['walkers'].tolist() == [False, True]
        assert data['poses'].shape[1:] == (2, 3)
    finally:
        sim.destroy_node()
        rclpy.try_shutdown(context=context)


def test_a_second_simulator_of_the_same_robots_is_named(harness, world):
    """A left-over simulator kept driving the robots from its own world, and nothing said so."""
    h = harness()
    second = SimNode(context=h.context, parameter_overrides=[Parameter('scenario', value=world)])
    h.executor.add_node(second)
    try:
        h.spin_until(lambda: len(h.sim.get_publishers_info_by_topic('/a/odom')) == 2,
                     what='both simulators discovered')
        h.sim.check_alone()
        assert h.sim.others == ['/orca_nav_sim', '/orca_nav_sim']
    finally:
        h.executor.remove_node(second)
        second.destroy_node()
    h.spin_until(lambda: len(h.sim.get_publishers_info_by_topic('/a/odom')) == 1,
                 what='the second simulator gone')
    h.sim.check_alone()
    assert h.sim.others == []


def test_a_teardown_that_hangs_ends_the_process_within_its_grace():
    """After the ground truth is saved, a middleware teardown that hangs cannot outlast it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(orca_nav.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    code = ('import time\n'
            'from orca_nav.sim.node import _exit_after\n'
            'start = time.monotonic()\n'
            '_exit_after(0.5, 3)\n'
            'print(f"armed after {time.monotonic() - start:.3f} s", flush=True)\n'
            'time.sleep(60.0)  # the teardown that hangs\n')
    start = time.monotonic()
    result = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True,
                            text=True, timeout=50.0)
    took = time.monotonic() - start
    assert result.returncode == 3, result.stderr
    assert 'armed' in result.stdout
    assert took < 30.0
    assert 0.0 < TEARDOWN_GRACE < 5.0  # within launch's grace before its SIGTERM
