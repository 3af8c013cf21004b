"""
Cancelling a goal over DDS, with real rclpy (domain 71, DDS on loopback).

``/<r>/cancel`` (std_msgs/Empty) and a goal whose frame_id is empty both cancel: the robot
stops and reports ``idle``; the other robots keep their goals. The test drives the node's
clock (use_sim_time), so ticks happen when it says.
"""

import json
import math

from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from orca_nav.ros import messages
from orca_nav.ros import node as node_module
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import Empty, String

from helpers import command_values, NodeRig  # noqa: I100 -- test/ is on sys.path

DOMAIN_ID = 71
PERIOD = 0.1  # node period [s]
ROBOTS = ['r1', 'r2']


class Rig(NodeRig):
    """The node plus a driver node: /clock, odometry, goals, cancels; cmd_vel and status."""

    def __init__(self, context, cancel_matched=True):
        """Start both nodes and wait until every topic (but cancel, unless asked) is matched."""
        super().__init__(context, ROBOTS, rate=1.0 / PERIOD, name='driver')
        d = self.probe
        self.odom = {r: d.create_publisher(Odometry, f'/{r}/odom', 10) for r in ROBOTS}
        self.goal = {r: d.create_publisher(PoseStamped, f'/{r}/goal_pose', 10) for r in ROBOTS}
        self.cancel = {r: d.create_publisher(Empty, f'/{r}/cancel', 10) for r in ROBOTS}
        self.cmd, self.status = {}, {}
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        for r in ROBOTS:
            d.create_subscription(Twist, f'/{r}/cmd_vel', self._store(self.cmd, r), 10)
            d.create_subscription(String, f'/{r}/orca_status', self._store(self.status, r),
                                  latched)
        self.start([p for g in (self.odom, self.goal, self.cancel) if cancel_matched or
                    g is not self.cancel for p in g.values()])

    @staticmethod
    def _store(store, robot):
        def callback(msg):
            store[robot] = msg
        return callback

    def tick(self):
        """Odometry of both robots at rest, one period on; wait for the tick's messages."""
        for i, r in enumerate(ROBOTS):
            self.odom[r].publish(messages.make_odometry(0.0, 2.0 * i))
            self.spin_until(lambda i=i: self.node.odometry.waiting(i))  # the tick takes it
        published = self.node.outputs.commands_published
        self.cmd.clear()  # this tick's commands only (an earlier one may still come: compared)
        super().tick(lambda: self.node.outputs.commands_published > published
                     and all(r in self.cmd and command_values(self.cmd[r])
                             == tuple(self.node.outputs.last_commands[i])
                             for i, r in enumerate(ROBOTS)))
        speeds = {r: math.hypot(m.linear.x, m.linear.y) for r, m in self.cmd.items()}
        self.spin_until(lambda: all(json.loads(self.status[r].data)['state']
                                    == self.node.outputs.states[i].value
                                    for i, r in enumerate(ROBOTS) if r in self.status))
        return speeds

    def state(self, robot):
        """Return the robot's state as its latched status says."""
        return json.loads(self.status[robot].data)['state']

    def send_goals(self):
        """Both robots get a goal 3 m ahead; both drive."""
        for i, r in enumerate(ROBOTS):
            count = self.node.goals_received
            self.goal[r].publish(messages.make_goal(3.0, 2.0 * i))
            self.spin_until(lambda count=count: self.node.goals_received > count)
        speeds = self.tick()
        assert all(s > 0.1 for s in speeds.values()), speeds
        assert [self.state(r) for r in ROBOTS] == ['active', 'active']


@pytest.fixture
def rig(context):
    """Yield a rig for one test."""
    made = Rig(context)
    yield made
    made.close()


def test_cancel_topic_stops_the_robot_and_reports_idle(rig):
    """/<r>/cancel (std_msgs/Empty): r stops at the next tick and is idle; r2 drives on."""
    rig.send_goals()
    rig.cancel['r1'].publish(Empty())
    rig.spin_until(lambda: rig.node.goals_cancelled == 1)
    speeds = rig.tick()
    assert speeds['r1'] == 0.0 and speeds['r2'] > 0.1, speeds
    assert (rig.state('r1'), rig.state('r2')) == ('idle', 'active')
    assert rig.node.tick_stats()['goals_cancelled'] == 1
    # A new goal after the cancel is followed again.
    rig.goal['r1'].publish(messages.make_goal(3.0, 0.0))
    rig.spin_until(lambda: rig.node.goals_received == 3)
    assert rig.tick()['r1'] > 0.1 and rig.state('r1') == 'active'


def test_goal_with_an_empty_frame_cancels(rig):
    """A PoseStamped with frame_id '' cancels (it is not refused as a wrong frame)."""
    rig.send_goals()
    rig.goal['r2'].publish(messages.make_goal(0.0, 0.0, frame_id=''))
    rig.spin_until(lambda: rig.node.goals_cancelled == 1)
    speeds = rig.tick()
    assert speeds['r2'] == 0.0 and speeds['r1'] > 0.1, speeds
    assert (rig.state('r1'), rig.state('r2')) == ('active', 'idle')
    assert rig.node.goals_rejected == 0


def test_a_large_fleet_drives_before_its_other_topics_exist(context, monkeypatch):
    """
    Over EXTRAS_AT_ONCE robots, the node makes odometry, goal and cmd_vel topics first.

    The cancel, plan, priority, status and route topics follow once every robot has sent
    odometry (1000 robots beside a busy CPU: the first commands about 10 s sooner,
    benchmarks/bench_startup.py); then they work as in a small fleet.
    """
    monkeypatch.setattr(node_module, 'EXTRAS_AT_ONCE', 1)
    monkeypatch.setattr(node_module, 'EXTRAS_WAIT', 3600.0)  # only odometry makes them
    rig = Rig(context, cancel_matched=False)
    try:
        assert rig.node.extras_pending == [0, 1]
        assert not any(p.get_subscription_count() for p in rig.cancel.values())
        for i, r in enumerate(ROBOTS):
            rig.goal[r].publish(messages.make_goal(3.0, 2.0 * i))
        rig.spin_until(lambda: rig.node.goals_received == 2)
        speeds = rig.tick()
        assert all(s > 0.1 for s in speeds.values()), speeds  # driving without the rest
        rig.spin_until(lambda: not rig.node.extras_pending)  # every robot has odometry
        rig.spin_until(lambda: all(p.get_subscription_count() for p in rig.cancel.values()))
        rig.tick()
        rig.spin_until(lambda: len(rig.status) == 2)  # every state, once it could be published
        assert [rig.state(r) for r in ROBOTS] == ['active', 'active']
        rig.cancel['r1'].publish(Empty())
        rig.spin_until(lambda: rig.node.goals_cancelled == 1)
        speeds = rig.tick()
        assert speeds['r1'] == 0.0 and speeds['r2'] > 0.1, speeds
        assert (rig.state('r1'), rig.state('r2')) == ('idle', 'active')
    finally:
        rig.close()


def test_a_large_fleet_gets_its_other_topics_without_odometry_too(context, monkeypatch):
    """Robots that send no odometry get them EXTRAS_WAIT after the node was built."""
    monkeypatch.setattr(node_module, 'EXTRAS_AT_ONCE', 1)
    monkeypatch.setattr(node_module, 'EXTRAS_WAIT', 0.5)
    rig = Rig(context, cancel_matched=False)
    try:
        rig.spin_until(lambda: all(p.get_subscription_count() for p in rig.cancel.values()))
        rig.tick()
        rig.spin_until(lambda: len(rig.status) == 2)
        assert rig.node.extras_pending == []
    finally:
        rig.close()
