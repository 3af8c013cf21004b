"""
Overload, with real rclpy: a node asked for more than it can do says so and stops no one wrongly.

300 robots at a rate of 200 Hz: one tick (300 commands published) takes longer than the 5 ms
period, in real time. The node keeps ticking, reports ``overloaded`` in ``~/tick_stats`` and a
WARN on ``/diagnostics``, and still commands the robot whose odometry is fresh toward its goal;
the robots without odometry get zero commands.
"""

import json
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from orca_nav.ros import messages
from orca_nav.ros.main import make_executor
from orca_nav.ros.node import OrcaNavNode
import rclpy
from rclpy.parameter import Parameter
from std_msgs.msg import String

DOMAIN_ID = 57
N = 300
RATE = 200.0  # [Hz] a period of 5 ms: less than a tick of 300 robots takes


def test_an_overloaded_node_keeps_ticking_reports_it_and_commands_the_fresh_robot(context):
    names = [f'r{i:03d}' for i in range(N)]
    node = OrcaNavNode(context=context, parameter_overrides=[
        Parameter('robots', value=names), Parameter('rate', value=RATE),
        Parameter('odom_timeout', value=1.0)])
    probe = rclpy.create_node('probe', context=context)
    executor = make_executor('events', context=context)  # the node's default executor
    executor.add_node(node)
    executor.add_node(probe)
    stats, diagnostics, commands = [], [], {}
    probe.create_subscription(String, '/orca_nav/tick_stats',
                              lambda m: stats.append(json.loads(m.data)), 10)
    probe.create_subscription(DiagnosticArray, '/diagnostics', diagnostics.append, 10)
    for r in (names[0], names[1]):
        probe.create_subscription(Twist, f'/{r}/cmd_vel',
                                  lambda m, r=r: commands.__setitem__(r, m), 10)
    odom = probe.create_publisher(Odometry, f'/{names[0]}/odom', 10)
    goal = probe.create_publisher(type(messages.make_goal(0, 0)), f'/{names[0]}/goal_pose', 10)
    try:
        deadline = time.monotonic() + 10.0
        while not (odom.get_subscription_count() and goal.get_subscription_count()):
            assert time.monotonic() < deadline, 'no discovery'
            executor.spin_once(timeout_sec=0.01)
        msg = Odometry()
        msg.pose.pose.orientation.w = 1.0
        end = time.monotonic() + 4.0
        sent_goal = False
        while time.monotonic() < end:
            odom.publish(msg)  # fresh odometry of r000 all along
            if not sent_goal and node.odometry.count(0):
                goal.publish(messages.make_goal(5.0, 0.0))
                sent_goal = True
            executor.spin_once(timeout_sec=0.005)
        overloaded = [s for s in stats if s.get('overloaded')]
        assert overloaded, f'never reported overloaded: {stats[-1:]}'
        assert node.monitor.ticks >= 40  # it kept ticking: at least 10 Hz over the 4 s
        warn = [d.status[0] for d in diagnostics if d.status[0].level == DiagnosticStatus.WARN]
        assert warn and warn[-1].message.startswith('overloaded')
        # The robot with fresh odometry drives to its goal; one without odometry stands.
        assert commands[names[0]].linear.x > 0.1
        assert commands[names[1]].linear.x == 0.0 and commands[names[1]].linear.y == 0.0
        assert stats[-1]['recent_fresh_share'] == round(1.0 / N, 4)
    finally:
        executor.shutdown()
        node.destroy_node()
        probe.destroy_node()
