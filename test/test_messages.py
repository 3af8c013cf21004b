"""orca_nav.ros.messages: message <-> array conversions, against rclpy's own serializer."""

import json
import math

from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.ros import messages
import pytest
from rclpy.serialization import serialize_message
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


def test_non_finite_odometry_is_none_on_both_paths():
    """A NaN position or an inf quaternion: both readers return None."""
    rng = np.random.default_rng(0)
    m = odometry(rng)
    m.pose.pose.position.x = math.nan
    assert messages.odometry_to_tuple(m) is None
    assert messages.odometry_from_cdr(serialize_message(m)) is None
    m = odometry(rng)
    m.pose.pose.orientation.z = math.inf
    assert messages.odometry_to_tuple(m) is None
    assert messages.odometry_from_cdr(serialize_message(m)) is None


def test_truncated_buffer_is_a_value_error():
    """A buffer that is not an Odometry raises ValueError, not garbage."""
    data = serialize_message(odometry(np.random.default_rng(1)))
    with pytest.raises(ValueError):
        messages.odometry_from_cdr(data[:100])


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


def test_commands_and_status():
    """Twist and TwistStamped carry the same numbers; status is JSON with the documented keys."""
    for stamped, kind in ((False, Twist), (True, TwistStamped)):
        msg = messages.fill_command(messages.new_command(stamped), 0.1, -0.2, 0.3,
                                    frame_id='r/base_link')
        assert isinstance(msg, kind) and messages.command_values(msg) == (0.1, -0.2, 0.3)
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
