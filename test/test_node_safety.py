"""
Safety behaviour of the orca_nav node with real rclpy (domain 22, DDS on loopback).

Stale and missing odometry, NaN odometry and goals, goals in the wrong frame, invalid
parameters at declaration and on set. The test drives the node's simulated clock itself
(use_sim_time), so ticks happen exactly when the test says.
"""

import json
import math

from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry, Path as PathMsg
import numpy as np
from orca_nav.ros import messages
from orca_nav.ros import node as node_module
from orca_nav.ros.node import OrcaNavNode
import pytest
from rclpy.exceptions import InvalidParameterValueException
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import Float64, String
from visualization_msgs.msg import MarkerArray

from helpers import command_values, matched, NodeRig  # noqa: I100 -- test/ is on sys.path

DOMAIN_ID = 22
PERIOD = 0.1  # node period [s] (rate 10 Hz)


class Rig(NodeRig):
    """The node under test plus a probe node that owns /clock, odometry, goals and cmd_vel."""

    def __init__(self, context, robots, **overrides):
        """Start the node with these robots and parameter overrides; wait for discovery."""
        super().__init__(context, robots, rate=1.0 / PERIOD, name='driver', **overrides)
        self.robots = list(robots)
        d = self.probe
        self.odom_pubs = {r: d.create_publisher(Odometry, f'/{r}/odom', 10) for r in robots}
        self.goal_pubs = {r: d.create_publisher(
            type(messages.make_goal(0, 0)), f'/{r}/goal_pose', 10) for r in robots}
        self.cmd = dict.fromkeys(robots)
        self.cmd_count = dict.fromkeys(robots, 0)
        self.cmd_type = TwistStamped if overrides.get('cmd_vel_stamped') else Twist
        self.last_msg = {}
        for r in robots:
            d.create_subscription(self.cmd_type, f'/{r}/cmd_vel', self._cmd_cb(r), 10)
        self.start(list(self.odom_pubs.values()) + list(self.goal_pubs.values()))

    def _cmd_cb(self, robot):
        def cb(msg):
            self.last_msg[robot] = msg
            self.cmd[robot] = command_values(msg)
            self.cmd_count[robot] += 1
        return cb

    def odom(self, robot, x, y, yaw=0.0, vx=0.0):
        """Publish one odometry message of robot and wait until the node has it."""
        q = messages.quaternion_from_yaw(yaw) if math.isfinite(yaw) else (0.0, 0.0, yaw, 1.0)
        msg = messages.make_odometry(x, y, twist=(vx, 0.0, 0.0), quaternion=q)
        i = self.robots.index(robot)
        self.odom_pubs[robot].publish(msg)
        self.spin_until(lambda: self.node.odometry.waiting(i))  # the next tick takes it

    def goal(self, robot, x, y, frame_id='map'):
        """Publish a goal and let the node process it."""
        count = self.node.goals_received
        self.goal_pubs[robot].publish(messages.make_goal(x, y, frame_id=frame_id))
        self.spin_until(lambda: self.node.goals_received > count)

    def tick(self):
        """Advance the clock one period; wait for the tick and a command for every robot."""
        # Every command round the node has published, received (none still in flight).
        super().tick(self.commands_in(self.cmd_count.values))
        return {r: self.cmd[r] for r in self.robots}


@pytest.fixture
def rig_factory(context):
    """Build rigs and close them after the test."""
    rigs = []

    def make(robots, **overrides):
        rig = Rig(context, robots, **overrides)
        rigs.append(rig)
        return rig
    yield make
    for rig in rigs:
        rig.close()


def speed(cmd):
    """Return the linear speed of a (vx, vy, wz) command."""
    return math.hypot(cmd[0], cmd[1])


def test_no_odometry_gives_zero_and_stale_odometry_zero_within_two_ticks(rig_factory):
    """A robot without odometry, or with odometry older than odom_timeout, gets zeros."""
    rig = rig_factory(['r1', 'r2'], odom_timeout=0.3, stale_keepout_time=5.0)
    rig.goal('r1', 5.0, 0.0)
    rig.goal('r2', 5.0, 3.0)
    rig.odom('r2', 0.0, 3.0)
    cmds = rig.tick()
    assert cmds['r1'] == (0.0, 0.0, 0.0), 'no odometry yet: must stand still'
    assert speed(cmds['r2']) > 0.1
    rig.odom('r1', 0.0, 0.0)
    assert speed(rig.tick()['r1']) > 0.1
    # r1's odometry stops at time t_last; r2's keeps coming.
    t_last = rig.clock.t
    zero_at = None
    for _ in range(10):
        rig.odom('r2', 0.0, 3.0)
        cmds = rig.tick()
        if cmds['r1'] == (0.0, 0.0, 0.0) and zero_at is None:
            zero_at = rig.clock.t
        if zero_at is not None:
            assert cmds['r1'] == (0.0, 0.0, 0.0), 'stale robot must stay stopped'
    assert zero_at is not None
    # Stale once older than odom_timeout; zero at the latest two ticks after that.
    assert zero_at - t_last <= 0.3 + 2 * PERIOD + 1e-6
    assert speed(cmds['r2']) > 0.1, 'the other robot keeps going'


def test_others_keep_avoiding_a_stale_robot_for_a_while(rig_factory):
    """A stale robot's last position stays an obstacle for stale_keepout_time, then is dropped."""
    rig = rig_factory(['r1', 'r2'], odom_timeout=0.2, stale_keepout_time=0.5,
                      pass_on_right=0.0, time_horizon=3.0, max_speed=0.5)
    rig.odom('r1', 1.0, 0.0)
    rig.odom('r2', 0.0, 0.0)
    rig.goal('r2', 4.0, 0.0)
    rig.tick()
    # r1 goes silent in r2's way. While it is stale but kept, r2 must not drive straight at
    # full speed into it.
    for _ in range(4):
        rig.odom('r2', 0.0, 0.0)
        cmds = rig.tick()
    assert rig.node.outputs.states[0] == 'stale_odometry'
    assert cmds['r2'][0] < 0.45 or abs(cmds['r2'][1]) > 0.05
    # After odom_timeout + stale_keepout_time it is forgotten: straight to the goal.
    for _ in range(6):
        rig.odom('r2', 0.0, 0.0)
        cmds = rig.tick()
    assert cmds['r2'][0] == pytest.approx(0.5, abs=1e-6)
    assert cmds['r2'][1] == pytest.approx(0.0, abs=1e-6)


def test_nan_odometry_and_goals_are_rejected_without_a_crash(rig_factory):
    """NaN/inf odometry and goals are counted, warned about and refused; commands stay finite."""
    rig = rig_factory(['r1', 'r2'])
    rig.odom('r1', 0.0, 0.0)
    rig.odom('r2', 2.0, 2.0)
    rig.goal('r1', 3.0, 0.0)
    rig.goal('r2', 2.0, 3.0)
    rig.tick()
    rig.odom('r1', float('nan'), 0.0)
    rig.odom('r2', 2.0, 2.0, yaw=float('inf'))
    cmds = rig.tick()
    stats = rig.node.tick_stats()
    assert stats['odom_rejected'] == 2
    assert stats['odom_rejected_by_robot'] == {'r1': 1, 'r2': 1}
    assert stats['tick_errors'] == 0
    # A refused message stops its robot at once (it is not driven on an old pose); the last
    # valid pose is kept for the others to avoid.
    assert cmds == {'r1': (0.0, 0.0, 0.0), 'r2': (0.0, 0.0, 0.0)}
    assert rig.node.outputs.states == ['rejected_odometry', 'rejected_odometry']
    assert rig.node.odometry.inputs.odom_xy[0].tolist() == [0.0, 0.0]
    rig.odom('r1', 0.0, 0.0)
    assert rig.tick()['r1'][0] > 0.1  # valid again: drives on
    goal_before = rig.node.controller.goal.copy()
    rig.goal('r1', float('inf'), 0.0)
    assert rig.node.tick_stats()['goals_rejected'] == 1
    np.testing.assert_array_equal(rig.node.controller.goal, goal_before)
    cmds = rig.tick()
    assert all(math.isfinite(v) for c in cmds.values() for v in c)


def test_goal_in_another_frame_is_rejected(rig_factory):
    """A goal whose frame is not global_frame is refused; the robot keeps standing still."""
    rig = rig_factory(['r1'], global_frame='world')
    rig.odom('r1', 0.0, 0.0)
    rig.goal('r1', 3.0, 0.0, frame_id='map')
    assert rig.node.tick_stats()['goals_rejected'] == 1
    assert not rig.node.controller.has_goal[0]
    assert rig.tick()['r1'] == (0.0, 0.0, 0.0)
    rig.goal('r1', 3.0, 0.0, frame_id='world')
    assert rig.node.controller.has_goal[0]
    assert rig.tick()['r1'][0] > 0.1


def test_commands_are_within_limits(rig_factory):
    """Holonomic speed <= max_speed; differential |v| <= max_speed, |w| <= max_angular_speed."""
    rig = rig_factory(['h', 'd'], max_speed=0.4, max_angular_speed=0.7,
                      lookahead_distance=0.05, **{'d.drive': 'differential',
                                                  'h.max_speed': 0.3})
    rig.goal('h', -5.0, 5.0)
    rig.goal('d', 0.0, -10.0)   # behind and to the right: a large yaw rate is asked for
    for _ in range(5):
        rig.odom('h', 0.0, 0.0, yaw=1.0)
        rig.odom('d', 3.0, 0.0, yaw=2.0, vx=0.4)
        cmds = rig.tick()
        assert speed(cmds['h']) <= 0.3 + 1e-9 and cmds['h'][2] == 0.0
        assert abs(cmds['d'][0]) <= 0.4 + 1e-9 and abs(cmds['d'][2]) <= 0.7 + 1e-9
        assert cmds['d'][1] == 0.0
    assert speed(cmds['h']) == pytest.approx(0.3)
    assert abs(cmds['d'][2]) == pytest.approx(0.7)


@pytest.mark.parametrize('overrides, message', [
    ({}, 'robots is empty'),
    ({'robots': ['r1', 'r1']}, 'listed in robots twice'),
    # A commanded robot in observed_robots is dropped, not refused (test_node_parameters_given).
    ({'robots': ['r1'], 'observed_robots': ['r2', 'r2']}, 'observed_robots twice'),
    ({'robots': ['1st']}, 'not a valid ROS name'),
    ({'robots': ['r1'], 'drive': 'tank'}, 'drive must be one of'),
    ({'robots': ['r1'], 'r1.drive': 'tank'}, 'r1.drive must be one of'),
    ({'robots': ['r1'], 'odom_topic': '/odom'}, 'odom_topic must be a topic name'),
    ({'robots': ['r1'], 'r1.odom_offset': [1.0, 2.0]}, 'r1.odom_offset must have 3'),
])
def test_invalid_parameters_are_refused_at_start(context, overrides, message):
    """The node refuses to start with a reason naming the bad parameter."""
    params = [Parameter(k, value=v) for k, v in overrides.items()]
    with pytest.raises(ValueError, match=message):
        OrcaNavNode(context=context, parameter_overrides=params)


def test_out_of_range_parameter_is_refused_at_declaration(context):
    """The descriptors' ranges are enforced by rclpy when the parameter is declared."""
    params = [Parameter('robots', value=['r1']), Parameter('radius', value=-0.5)]
    with pytest.raises(InvalidParameterValueException):
        OrcaNavNode(context=context, parameter_overrides=params)


def test_parameter_set_is_validated_and_all_or_nothing(context):
    """ros2 param set: a bad value is refused with a reason; a bad batch changes nothing."""
    node = OrcaNavNode(context=context, parameter_overrides=[
        Parameter('robots', value=['r1', 'r2'])])
    try:
        result = node.set_parameters([Parameter('drive', value='tank')])[0]
        assert not result.successful and 'drive must be one of' in result.reason
        result = node.set_parameters([Parameter('radius', value=50.0)])[0]
        assert not result.successful
        result = node.set_parameters([Parameter('rate', value=20.0)])[0]
        assert not result.successful and 'read-only' in result.reason
        result = node.set_parameters_atomically([Parameter('max_speed', value=0.9),
                                                 Parameter('r2.drive', value='hovercraft')])
        assert not result.successful and 'r2.drive' in result.reason
        assert node.get_parameter('max_speed').value == 0.5
        assert node.settings.fleet.max_speed.tolist() == [0.5, 0.5]
        result = node.set_parameters_atomically([Parameter('max_speed', value=0.9),
                                                 Parameter('r2.drive', value='differential'),
                                                 Parameter('r2.radius', value=0.4)])
        assert result.successful, result.reason
        assert node.settings.fleet.max_speed.tolist() == [0.9, 0.9]
        assert node.settings.fleet.differential.tolist() == [False, True]
        assert node.settings.fleet.radius.tolist() == [0.2, 0.4]
        d = node.describe_parameter('radius')
        assert d.description and d.floating_point_range[0].to_value == 10.0
    finally:
        node.destroy_node()


def test_missed_periods_are_counted(rig_factory):
    """A clock that jumps three periods ahead leaves two periods without a tick."""
    rig = rig_factory(['r1'])
    rig.odom('r1', 0.0, 0.0)
    rig.tick()
    rig.tick()
    assert rig.node.tick_stats()['missed_periods'] == 0
    rig.clock.t += 2 * PERIOD
    rig.tick()
    assert rig.node.tick_stats()['missed_periods'] == 2
    rig.tick()
    assert rig.node.tick_stats()['missed_periods'] == 2


def test_stamped_commands_status_and_markers(rig_factory):
    """Stamped commands on request (Nav2 on Kilted), latched JSON status, ~/markers."""
    rig = rig_factory(['r1', 'r2'], cmd_vel_stamped=True, marker_rate=5.0)
    markers, status = [], {}
    rig.probe.create_subscription(MarkerArray, '/orca_nav/markers', markers.append, 10)
    for r in ('r1', 'r2'):
        rig.probe.create_subscription(
            String, f'/{r}/orca_status', lambda m, r=r: status.__setitem__(r, json.loads(m.data)),
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    rig.odom('r1', 0.0, 0.0)
    rig.goal('r1', 3.0, 0.0)
    for _ in range(3):
        rig.odom('r1', 0.0, 0.0)
        cmds = rig.tick()
    msg = rig.last_msg['r1']
    assert isinstance(msg, TwistStamped) and msg.header.frame_id == 'r1/base_link'
    assert msg.header.stamp.sec == int(rig.clock.t) and cmds['r1'][0] > 0.1
    rig.spin_until(lambda: markers and len(status) == 2)
    assert status['r1']['state'] == 'active' and status['r1']['goal'] == [3.0, 0.0]
    assert status['r2'] == {'robot': 'r2', 'state': 'no_odometry', 'goal': None,
                            'distance': None, 'reason': '', 'weight': 0.5, 'group': 'default',
                            'priority': False, 'locked': False}
    assert any(m.ns == 'robots' for m in markers[-1].markers)
    result = rig.node.set_parameters([Parameter('publish_markers', value=False)])[0]
    assert result.successful
    count = len(markers)
    for _ in range(5):
        rig.odom('r1', 0.0, 0.0)
        rig.tick()
    rig.spin_for(0.2)
    assert len(markers) == count


def test_markers_draw_a_footprint_at_the_robots_heading(rig_factory):
    """r1 a 0.9 x 0.6 m cart (footprint), r2 a disc: r1's outline turned by its yaw."""
    cart = '[[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]'
    rig = rig_factory(['r1', 'r2'], marker_rate=5.0, **{'r1.footprint': cart})
    markers = []
    rig.probe.create_subscription(MarkerArray, '/orca_nav/markers', markers.append, 10)
    for _ in range(3):
        rig.odom('r1', 1.0, 2.0, yaw=math.pi / 2)
        rig.odom('r2', 4.0, 0.0)
        rig.tick()
    rig.spin_until(lambda: any(m.ns == 'footprints' for m in markers[-1].markers)
                   if markers else False)
    outlines = [m for m in markers[-1].markers if m.ns == 'footprints']
    assert [m.id for m in outlines] == [0]  # r2, a disc, has none
    points = np.array([[p.x, p.y] for p in outlines[0].points])
    assert np.allclose(points[0], points[-1])  # closed
    # Turned a quarter: 0.6 m wide along x, 0.9 m long along y, about (1, 2).
    assert np.allclose(points.min(axis=0), [0.7, 1.55])
    assert np.allclose(points.max(axis=0), [1.3, 2.45])


def publish_odometry(rig, robot, x, y, q, twist=(0.0, 0.0, 0.0)):
    """Publish one Odometry with this quaternion (x, y, z, w) and wait until the node has it."""
    msg = messages.make_odometry(x, y, twist=twist, quaternion=q)
    i = rig.robots.index(robot)
    rig.odom_pubs[robot].publish(msg)
    rig.spin_until(lambda: rig.node.odometry.waiting(i))


# r2's odometry frame is rotated by 0.7 rad and shifted; r2 stands at (10, 0) in the map,
# yaw 0.3, 10 m from r1 (beyond neighbor_dist: neither changes the other's answer).
OFFSET = (5.0, -3.0, 0.7)
R2_ODOM = (math.cos(0.7) * 5.0 + math.sin(0.7) * 3.0, -math.sin(0.7) * 5.0 + math.cos(0.7) * 3.0,
           0.3 - 0.7)


@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_bad_odometry_of_one_robot_leaves_the_others_command_unchanged(rig_factory, drive):
    """Huge, NaN, zero-quaternion or too fast odometry stops r2 only; x2 or x0.5 q is fine."""
    # Without latency compensation: with it, a tick also depends on the commands sent before
    # (the predictor moves each robot on with them), and this test compares repeated ticks.
    rig = rig_factory(['r1', 'r2'], drive=drive, latency_compensation=False,
                      **{'r2.odom_offset': list(OFFSET)})
    rig.goal('r1', 3.0, 1.0)
    rig.goal('r2', 13.0, -1.0)
    unit = messages.quaternion_from_yaw(R2_ODOM[2])

    def tick(x=R2_ODOM[0], y=R2_ODOM[1], q=unit, twist=(0.0, 0.0, 0.0)):
        rig.odom('r1', 0.0, 0.0)
        publish_odometry(rig, 'r2', x, y, q, twist)
        cmds = rig.tick()
        return list(cmds['r1']) + list(cmds['r2'])  # flat: pytest.approx takes no nesting
    tick()
    clean = tick()
    assert speed(clean[3:]) > 0.1 or abs(clean[5]) > 0.1
    for scale in (2.0, 0.5):
        assert tick(q=[scale * v for v in unit]) == pytest.approx(clean, abs=1e-9)
    bad = [{'x': 1.7e308, 'y': -1.7e308}, {'x': 1.8e308, 'y': -1.8e308}, {'x': 1e308},
           {'x': math.nan}, {'q': (0.0, 0.0, 0.0, 0.0)}, {'twist': (100.0, 0.0, 0.0)}]
    for values in bad:
        cmds = tick(**values)
        assert cmds[3:] == [0.0, 0.0, 0.0], values
        assert cmds[:3] == pytest.approx(clean[:3], abs=1e-9), values
        assert rig.node.outputs.states[1] == 'rejected_odometry'
        assert tick() == pytest.approx(clean, abs=1e-9)  # valid again: as before
    stats = rig.node.tick_stats()
    assert stats['odom_rejected_by_robot'] == {'r2': len(bad)}
    assert stats['tick_errors'] == 0


def test_goals_beyond_max_coordinate_are_rejected_and_counted(rig_factory):
    """Goals at 1.8e308 (inf), 1.7e308 or beyond max_coordinate: refused, the old goal kept."""
    rig = rig_factory(['r1'], max_coordinate=1000.0)
    rig.odom('r1', 0.0, 0.0)
    rig.goal('r1', 3.0, 0.0)
    for x, y in [(1.8e308, 1.8e308), (1.7e308, 1.7e308), (1000.5, 0.0), (0.0, -2e5)]:
        rig.goal('r1', x, y)
    assert rig.node.tick_stats()['goals_rejected'] == 4
    assert rig.node.controller.goal[0].tolist() == [3.0, 0.0]
    rig.goal('r1', 1000.0, 0.0)
    assert rig.node.controller.goal[0].tolist() == [1000.0, 0.0]


class RecordingLogger:
    """Stands in for the node's logger: records (level, text)."""

    def __init__(self):
        """Record nothing yet."""
        self.lines = []

    def __getattr__(self, level):
        """Return a logging function of this level that records its text."""
        return lambda text, **kw: self.lines.append((level, text))


def test_a_goal_flood_logs_at_debug_and_warnings_are_throttled_per_robot_and_field(
        rig_factory, monkeypatch):
    """200 goals: DEBUG only. 200 bad goals: one warning; another robot's still logged."""
    # The flood is one throttle window however long it takes (a busy machine: over the 2 s).
    monkeypatch.setattr(node_module, 'WARN_THROTTLE', 3600.0)
    rig = rig_factory(['r1', 'r2'])
    log = RecordingLogger()
    rig.node.get_logger = lambda: log
    rig.odom('r1', 0.0, 0.0)
    for k in range(200):
        rig.goal('r1', 1.0 + 0.01 * k, 0.0)
    assert {level for level, _ in log.lines} == {'debug'}
    log.lines.clear()
    for _ in range(200):
        rig.goal('r1', math.nan, 0.0)
    rig.goal('r2', math.inf, 0.0)
    zero = messages.make_goal(1.0, 1.0)
    zero.pose.orientation.w = 0.0  # another field of r1: a zero quaternion
    count = rig.node.goals_received
    rig.goal_pubs['r1'].publish(zero)
    rig.spin_until(lambda: rig.node.goals_received > count)
    warnings = [text for level, text in log.lines if level == 'warning']
    assert len(warnings) == 3, warnings
    assert warnings[0].startswith('r1: goal position: NaN')
    assert warnings[1].startswith('r2: goal position')
    assert warnings[2].startswith('r1: goal orientation: zero quaternion')
    assert rig.node.tick_stats()['goals_rejected'] == 202


def test_priority_override_is_shown_and_a_bad_duration_is_refused(rig_factory):
    """/<r>/orca_priority: 2 s makes r1 immovable (status says so); -1 and NaN change nothing."""
    rig = rig_factory(['r1', 'r2'])
    status = {}
    rig.probe.create_subscription(
        String, '/r1/orca_status', lambda m: status.__setitem__('r1', json.loads(m.data)),
        QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    priority = rig.probe.create_publisher(Float64, '/r1/orca_priority', 10)
    rig.spin_until(lambda: priority.get_subscription_count() > 0)
    rig.odom('r1', 0.0, 0.0)
    rig.odom('r2', 5.0, 0.0)
    rig.goal('r1', 3.0, 0.0)
    rig.tick()
    for bad in (-1.0, math.nan, math.inf):
        priority.publish(Float64(data=bad))
    # Refused with a warning (throttled per robot and field: the first one is logged).
    rig.spin_until(lambda: rig.node.warnings_held(0, 'priority rejected') >= 2)
    rig.tick()
    rig.spin_until(lambda: 'r1' in status)
    assert status['r1']['priority'] is False
    assert not rig.node.controller.give_way.overridden(rig.clock.t).any()
    priority.publish(Float64(data=2.0))
    rig.spin_until(lambda: rig.node.controller.give_way.overridden(rig.clock.t + 0.2)[0])
    rig.tick()
    rig.spin_until(lambda: status['r1']['priority'] is True)
    assert status['r1']['weight'] == 0.5 and status['r1']['group'] == 'default'


def test_a_robot_that_does_not_move_is_never_driven_backwards_and_reports_stuck(rig_factory):
    """
    Odometry frozen (an e-stop, wheels off the ground) while two robots follow Paths.

    The jam's give-way drove one of them at -0.49 m/s for 3 s every 6 s (backing away from a
    robot that did not move either); a robot that does not move when commanded gives no way:
    no command below -0.1 m/s nor faster than 0.1 m/s once found out, and both report stuck
    after progress_timeout (10 s).
    """
    rig = rig_factory(['r1', 'r2'])
    starts = {'r1': (0.0, 0.0), 'r2': (0.0, 1.0)}
    plans = {r: rig.probe.create_publisher(PathMsg, f'/{r}/plan', 10) for r in starts}
    status = {}
    for r in starts:
        rig.probe.create_subscription(
            String, f'/{r}/orca_status', lambda m, r=r: status.__setitem__(r, json.loads(m.data)),
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    rig.spin_until(matched(list(plans.values())), what='the plan subscriptions')
    for r, (x, y) in starts.items():
        rig.odom(r, x, y)
        plans[r].publish(messages.path_message([(x, y), (x + 5.0, y)], 'map', rig.clock.stamp()))
    rig.spin_until(lambda: rig.node.controller.has_goal.all(), what='both paths')
    slowest = dict.fromkeys(starts, 0.0)
    for _ in range(150):  # 15 s: past JAM_TIME + YIELD_TIME twice, and progress_timeout
        for r, (x, y) in starts.items():
            rig.odom(r, x, y)
        cmds = rig.tick()
        for r, cmd in cmds.items():
            slowest[r] = min(slowest[r], cmd[0])
    assert min(slowest.values()) >= -0.1, slowest
    # Gently: were its brakes released, it would not leap forward at full speed either.
    assert all(speed(cmd) <= 0.1 + 1e-6 for cmd in cmds.values()), cmds
    rig.spin_until(lambda: all(status.get(r, {}).get('state') == 'stuck' for r in starts),
                   what=f'both robots stuck (status {status})')
