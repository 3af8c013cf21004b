"""orca_nav.ros.messages: message <-> array conversions, against rclpy's own serializer."""

import json
import math

from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.ros import messages
from orca_nav.testing.rig import command_values
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from visualization_msgs.msg import Marker


def odometry(rng, frame='map', child='robot1/base_link'):
    """Return a random Odometry message with the given frame names."""
    m = Odometry()
    m.header.frame_id, m.child_frame_id = frame, child
    m.header.stamp.sec = int(rng.integers(0, 2 ** 31 - 1))
    m.header.stamp.nanosec = int(rng.integers(0, 999_999_999))
    p = m.pose.pose
    p.position.x, p.position.y, p.position.z = (float(v) for v in rng.uniform(-50, 50, 3))
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = (float(v) for v in q)
    m.pose.covariance = [float(v) for v in rng.uniform(-1, 1, 36)]
    t = m.twist.twist
    t.linear.x, t.linear.y, t.linear.z = (float(v) for v in rng.uniform(-2, 2, 3))
    t.angular.x, t.angular.y, t.angular.z = (float(v) for v in rng.uniform(-2, 2, 3))
    return m


@pytest.mark.parametrize('frame, child', [('', ''), ('m', 'c'), ('map', 'robot1/base_link'),
                                          ('odom_xyz', 'b' * 13), ('x' * 40, 'y' * 7)])
def test_cdr_reader_matches_the_deserialized_message(frame, child):
    """The raw reader returns the same numbers as the message path, for any frame names."""
    rng = np.random.default_rng(len(frame) * 31 + len(child))
    for _ in range(20):
        m = odometry(rng, frame, child)
        raw = messages.odometry_from_cdr(serialize_message(m))
        ref = messages.odometry_to_tuple(m)
        assert raw[:6] == pytest.approx(ref, abs=1e-12)
        assert raw[6] == m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec


@pytest.mark.parametrize('field, value, message', [
    ('position', (math.nan, 0.0), 'odometry position: not finite'),
    ('position', (0.0, -math.inf), 'odometry position: not finite'),
    ('orientation', (0.0, 0.0, math.inf, 1.0), 'odometry orientation: quaternion is not finite'),
    ('orientation', (0.0, 0.0, 0.0, 0.0), 'odometry orientation: zero quaternion'),
    ('orientation', (0.0, 0.0, 1e-9, 1e-9), 'odometry orientation: zero quaternion'),
    ('twist', (math.nan, 0.0, 0.0), 'odometry twist: not finite'),
    ('twist', (0.0, 0.0, -math.inf), 'odometry twist: not finite'),
])
def test_bad_odometry_is_refused_naming_the_field_on_both_paths(field, value, message):
    """NaN/inf anywhere or a zero quaternion: both readers raise ValueError naming the field."""
    m = odometry(np.random.default_rng(0))
    if field == 'position':
        m.pose.pose.position.x, m.pose.pose.position.y = value
    elif field == 'orientation':
        o = m.pose.pose.orientation
        o.x, o.y, o.z, o.w = value
    else:
        t = m.twist.twist
        t.linear.x, t.linear.y, t.angular.z = value
    with pytest.raises(ValueError, match=message):
        messages.odometry_to_tuple(m)
    with pytest.raises(ValueError, match=message):
        messages.odometry_from_cdr(serialize_message(m))


@pytest.mark.parametrize('scale', [2.0, 0.5, 1e-3, 1e150, 1e300])
def test_scaled_quaternions_give_the_unit_yaw(scale):
    """A quaternion of any length (even with components near 1e308) has its unit's yaw."""
    rng = np.random.default_rng(7)
    for yaw in np.linspace(-3.1, 3.1, 13):
        m = odometry(rng)
        q = messages.quaternion_from_yaw(yaw)
        o = m.pose.pose.orientation
        o.x, o.y, o.z, o.w = (scale * v for v in q)
        assert messages.odometry_from_cdr(serialize_message(m))[2] == pytest.approx(yaw)
        assert messages.odometry_to_tuple(m)[2] == pytest.approx(yaw)
        goal = messages.make_goal(1.0, 2.0, yaw)
        g = goal.pose.orientation
        g.x, g.y, g.z, g.w = (scale * v for v in q)
        assert messages.goal_from_pose(goal, 'map')[2] == pytest.approx(yaw)


def test_unit_quaternion_of_a_tilted_pose_keeps_the_yaw():
    """Roll and pitch are ignored; a scaled tilted quaternion has the unit one's yaw."""
    # yaw 0.7 then roll 0.3: q = q_yaw * q_roll
    cy, sy, cr, sr = math.cos(0.35), math.sin(0.35), math.cos(0.15), math.sin(0.15)
    q = (cy * sr, sy * sr, sy * cr, cy * cr)
    ref = messages.yaw_from_quaternion(*q)
    assert ref == pytest.approx(0.7)
    assert messages.yaw_from_quaternion(*messages.unit_quaternion(*(3.0 * v for v in q))) == \
        pytest.approx(ref)


def test_truncated_buffer_is_a_value_error():
    """A buffer that is not an Odometry raises ValueError, not garbage."""
    data = serialize_message(odometry(np.random.default_rng(1)))
    with pytest.raises(ValueError):
        messages.odometry_from_cdr(data[:100])


# Values written into random odometry messages besides ordinary ones (the readers must refuse
# or accept them exactly as the message path does; in fields they do not read, ignore them).
SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e308, -1e300, 1e-310, 5e-7]


def random_odometry_buffer(rng):
    """Return a serialized Odometry: random frame names (any length, empty too), values."""
    m = odometry(rng, 'f' * int(rng.integers(0, 18)), 'c' * int(rng.integers(0, 18)))
    fields = [(m.pose.pose.position, 'x'), (m.pose.pose.position, 'y'),
              (m.pose.pose.position, 'z'), (m.pose.pose.orientation, 'x'),
              (m.pose.pose.orientation, 'y'), (m.pose.pose.orientation, 'z'),
              (m.pose.pose.orientation, 'w'), (m.twist.twist.linear, 'x'),
              (m.twist.twist.linear, 'y'), (m.twist.twist.linear, 'z'),
              (m.twist.twist.angular, 'x'), (m.twist.twist.angular, 'z')]
    for _ in range(int(rng.integers(0, 3))):  # a few special values, or none
        obj, name = fields[int(rng.integers(len(fields)))]
        setattr(obj, name, float(rng.choice(SPECIAL)))
    if rng.random() < 0.1:  # the covariances are never read
        m.pose.covariance[int(rng.integers(36))] = math.nan
        m.twist.covariance[int(rng.integers(36))] = math.inf
    if rng.random() < 0.05:  # a zero (or nearly zero) quaternion
        o = m.pose.pose.orientation
        o.x = o.y = o.z = 0.0
        o.w = float(rng.choice([0.0, 1e-7]))
    return serialize_message(m)


def outcome(read):
    """Return what ``read()`` gives: its values, or the ValueError's text."""
    try:
        return read()
    except ValueError as exc:
        return str(exc)


def test_the_raw_readers_agree_with_rclpys_deserialization_on_random_messages():
    """
    The raw readers (scalar and batch) against rclpy's deserialization: 3000 random messages.

    Frame names of any length (the alignment after them), empty ones, NaN and inf anywhere:
    the scalar reader gives what the deserialized message gives (the same values, or the same
    ValueError); the batch reader gives the scalar reader's values bit for bit for the rows it
    reads, and leaves to it exactly the rows it refuses (plus none that are valid).
    """
    rng = np.random.default_rng(28)
    bufs = [random_odometry_buffer(rng) for _ in range(3000)]
    read, values, stamps = messages.odometry_batch_from_cdr(bufs)
    refused = 0
    for k, buf in enumerate(bufs):
        msg = deserialize_message(buf, Odometry)
        ref = outcome(lambda: messages.odometry_to_tuple(msg))
        got = outcome(lambda: messages.odometry_from_cdr(buf))
        if isinstance(ref, str):
            refused += 1
            assert got == ref
            assert not read[k]
            continue
        assert got[:6] == ref  # bit for bit: the same arithmetic on the same doubles
        assert got[6] == msg.header.stamp.sec * 10 ** 9 + msg.header.stamp.nanosec
        assert read[k], k
        assert tuple(values[k].tolist()) == got[:6] and stamps[k] == got[6]
    assert 300 < refused < 1500  # both kinds are well represented


@pytest.mark.parametrize('cut', [0, 1, 2, 4, 11, 15, 16, 30, 100, -1])
def test_truncated_or_foreign_buffers_are_refused_by_both_readers(cut):
    """Cut anywhere, or in another encapsulation (XCDR2, a parameter list): one ValueError."""
    data = serialize_message(odometry(np.random.default_rng(abs(cut)), 'map', 'robot7/base'))
    bad = [data[:cut], b'\x00\x07' + data[2:], b'\x00\x03' + data[2:], b'\x01\x01' + data[2:]]
    for buf in bad:
        with pytest.raises(ValueError, match='^odometry message: not a serialized '
                                             'nav_msgs/Odometry'):
            messages.odometry_from_cdr(buf)
    read, values, _ = messages.odometry_batch_from_cdr(bad + [data, None])
    assert read.tolist() == [False] * len(bad) + [True, False]
    assert np.isnan(values[~read]).all()
    with pytest.raises(ValueError, match='encapsulation'):
        messages.odometry_from_cdr(bad[1])
    with pytest.raises(ValueError, match='encapsulation'):
        messages.scan_from_cdr(b'\x00\x07' + serialize_message(messages.make_scan([1.0]))[2:])


def test_the_batch_reader_of_nothing():
    """No buffers: empty arrays."""
    read, values, stamps = messages.odometry_batch_from_cdr([])
    assert read.shape == (0,) and values.shape == (0, 6) and stamps.shape == (0,)


@pytest.mark.parametrize('stamped', [False, True])
def test_serialized_commands_are_rclpys(stamped):
    """The encoder's bytes are those of the serialized fill_command message (any frame)."""
    frames = ['', 'a', 'ab', 'abc', 'abcd', 'r000/base_link', 'x' * 7, 'y' * 8, 'é/base_link']
    rng = np.random.default_rng(5)
    cmd = rng.uniform(-1.0, 1.0, (len(frames), 3))
    cmd[0] = (-0.0, 0.0, -0.0)
    encoder = messages.CommandEncoder(stamped, frames)
    stamp = (1_700_000_123, 456_789_012)
    for i, data in enumerate(encoder.encode(cmd, stamp)):
        msg = messages.fill_command(messages.new_command(stamped), *cmd[i], None, frames[i])
        if stamped:
            msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
        ref = serialize_message(msg)
        # The padding before TwistStamped's twist is whatever rclpy's buffer held: compare
        # the length, the message read back, and the bytes but the padding.
        assert len(data) == len(ref)
        back = deserialize_message(data, type(msg))
        assert back == msg
        assert [math.copysign(1.0, v) for v in command_values(back)] == \
            [math.copysign(1.0, v) for v in cmd[i]]  # -0.0 stays -0.0
        assert data[-48:] == ref[-48:] and data[:4] == ref[:4]
        if not stamped:
            assert data == ref


def test_yaw_quaternion_round_trip():
    """quaternion_from_yaw and yaw_from_quaternion are inverse on (-pi, pi]."""
    for yaw in np.linspace(-3.1, 3.1, 25):
        q = messages.quaternion_from_yaw(yaw)
        assert messages.yaw_from_quaternion(*q) == pytest.approx(yaw)


def test_goal_checks():
    """Goals: right frame accepted (leading / tolerated), wrong frame and NaN refused."""
    assert messages.goal_from_pose(messages.make_goal(1.0, 2.0, 0.5, 'map'), 'map') == (
        pytest.approx(1.0), pytest.approx(2.0), pytest.approx(0.5))
    assert messages.goal_from_pose(messages.make_goal(1.0, 2.0, 0.0, '/map'), 'map')[0] == 1.0
    with pytest.raises(ValueError, match='not the global frame'):
        messages.goal_from_pose(messages.make_goal(1.0, 2.0, 0.0, 'odom'), 'map')
    with pytest.raises(ValueError, match='NaN or infinite'):
        messages.goal_from_pose(messages.make_goal(math.nan, 2.0, 0.0, 'map'), 'map')
    goal = messages.make_goal(1.0, 2.0, 0.0, 'map')
    goal.pose.orientation.w = 0.0
    with pytest.raises(ValueError, match='goal orientation: zero quaternion'):
        messages.goal_from_pose(goal, 'map')
    goal.pose.orientation.z = math.nan
    with pytest.raises(ValueError, match='goal orientation: quaternion is not finite'):
        messages.goal_from_pose(goal, 'map')
    # 1.8e308 is beyond the largest double: inf, refused here. Huge but finite (1.7e308) is
    # the controller's to judge against max_coordinate.
    with pytest.raises(ValueError, match='goal position: NaN or infinite'):
        messages.goal_from_pose(messages.make_goal(1.8e308, 1.8e308), 'map')
    assert messages.goal_from_pose(messages.make_goal(1.7e308, 1.7e308), 'map')[0] == 1.7e308


def test_commands_and_status():
    """Twist and TwistStamped carry the same numbers; status is JSON with the documented keys."""
    for stamped, kind in ((False, Twist), (True, TwistStamped)):
        msg = messages.fill_command(messages.new_command(stamped), 0.1, -0.2, 0.3,
                                    frame_id='r/base_link')
        assert isinstance(msg, kind) and command_values(msg) == (0.1, -0.2, 0.3)
    status = json.loads(messages.status_message('robot1', 'active', (1.0, 2.0), 3.5).data)
    assert status == {'robot': 'robot1', 'state': 'active', 'goal': [1.0, 2.0],
                      'distance': 3.5, 'reason': ''}
    status = json.loads(messages.status_message('r', 'unreachable', (1.0, 2.0), 3.5,
                                                'goal_in_obstacle').data)
    assert status['reason'] == 'goal_in_obstacle'
    status = json.loads(messages.status_message('robot1', 'idle', None, math.inf).data)
    assert status['goal'] is None and status['distance'] is None


def test_markers():
    """One disc per known robot, one arrow list, goal points and lines."""
    pos = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]])
    out = messages.build_markers('map', messages.make_goal(0, 0).header.stamp,
                                 ['a', 'b', 'c'], pos, np.array([0.2, 0.3, 0.2]),
                                 np.array([[0.5, 0.0], [0.0, 0.0], [0.0, 0.0]]),
                                 np.array([[2.0, 0.0], [0.0, 0.0], [0.0, 0.0]]),
                                 np.array([True, False, False]), ['active', 'idle', 'observed'],
                                 np.array([True, True, False]))
    kinds = [(m.ns, m.type) for m in out.markers]
    assert out.markers[0].action == Marker.DELETEALL
    assert kinds[1:] == [('robots', Marker.CYLINDER), ('robots', Marker.CYLINDER),
                         ('velocities', Marker.LINE_LIST), ('goals', Marker.SPHERE_LIST),
                         ('goals', Marker.LINE_LIST)]
    assert out.markers[2].scale.x == pytest.approx(0.6)
    assert len(out.markers[3].points) == 4 and len(out.markers[4].points) == 1


def test_diagnostics_say_ok_overloaded_or_failing_with_every_statistic():
    from builtin_interfaces.msg import Time
    from diagnostic_msgs.msg import DiagnosticStatus
    stats = {'ticks': 50, 'tick_errors': 0, 'overloaded': False, 'recent_fresh_share': 1.0,
             'recent_tick_ms': [1.0, 2.0]}
    ok = messages.diagnostics('/orca_nav', stats, Time())
    status = ok.status[0]
    assert (status.level, status.name) == (DiagnosticStatus.OK, 'orca_nav: /orca_nav')
    assert {kv.key for kv in status.values} == {'ticks', 'tick_errors', 'overloaded',
                                                'recent_fresh_share'}
    stats.update(overloaded=True, recent_missed_periods=3, recent_tick_ms_max=250.0,
                 recent_fresh_share=0.5)
    warn = messages.diagnostics('/orca_nav', stats, Time()).status[0]
    assert warn.level == DiagnosticStatus.WARN
    assert warn.message == ('overloaded: 3 periods missed, longest tick 250.0 ms, 50 % of '
                            'robots on fresh odometry')
    stats['tick_errors'] = 2
    assert messages.diagnostics('/n', stats, Time()).status[0].level == \
        DiagnosticStatus.ERROR


def test_scan_from_cdr_reads_what_rclpy_serialized():
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import LaserScan
    for frame in ('', 'r', 'robot12/base_scan'):  # every alignment of what follows the frame
        msg = LaserScan()
        msg.header.frame_id = frame
        msg.header.stamp.sec, msg.header.stamp.nanosec = 12, 345
        msg.angle_min, msg.angle_max, msg.angle_increment = -3.0, 3.0, 0.5
        msg.range_min, msg.range_max = 0.05, 8.0
        msg.ranges = [1.0, float('inf'), float('nan'), 2.5] * 3
        msg.intensities = [7.0] * 12
        angle_min, inc, rmin, rmax, ranges = messages.scan_from_cdr(serialize_message(msg))
        assert (angle_min, inc, rmin, rmax) == pytest.approx((-3.0, 0.5, 0.05, 8.0))
        np.testing.assert_array_equal(ranges, np.array(msg.ranges, dtype=np.float32))
    with pytest.raises(ValueError, match='not a serialized sensor_msgs/LaserScan'):
        messages.scan_from_cdr(serialize_message(msg)[:40])


def test_markers_draw_footprints_turned_by_the_yaws():
    """A robot with a footprint: its disc and a closed LINE_STRIP of its placed polygon."""
    cart = np.array([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]])
    pos = np.array([[1.0, 2.0], [5.0, 5.0]])
    out = messages.build_markers('map', messages.make_goal(0, 0).header.stamp, ['cart', 'b'],
                                 pos, np.array([0.55, 0.2]), np.zeros((2, 2)), np.zeros((2, 2)),
                                 np.array([False, False]), ['idle', 'idle'],
                                 np.array([True, True]), footprints=(cart, None),
                                 yaws=np.array([math.pi / 2, 0.0]))
    kinds = [(m.ns, m.type, m.id) for m in out.markers]
    assert kinds[1:4] == [('robots', Marker.CYLINDER, 0), ('footprints', Marker.LINE_STRIP, 0),
                          ('robots', Marker.CYLINDER, 1)]
    points = [(p.x, p.y) for p in out.markers[2].points]
    assert len(points) == 5 and points[0] == points[-1]
    # Turned 90 deg: the front left corner (0.45, 0.3) is at (1 - 0.3, 2 + 0.45).
    assert points[0] == pytest.approx((0.7, 2.45))
    assert out.markers[2].header.frame_id == 'map'
