"""
Shutdown of the orca_nav node as users run it: ``python -m orca_nav.node`` in its own process.

The test feeds odometry and goals so that the robots are moving, then sends SIGINT (Ctrl-C) or
SIGTERM and checks that the last command every robot received is zero and that the process
exits cleanly. Also checks that bad parameters make the process exit with an error and a reason.
Domain 23, DDS on loopback.
"""

import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from orca_nav.ros import messages
from orca_nav.testing.rig import command_values
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor

DOMAIN_ID = 23
ROBOTS = ['r1', 'r2', 'r3']
REPO = Path(__file__).resolve().parents[1]


def node_env():
    """Environment of the node process: this domain, loopback only, the package importable."""
    env = dict(os.environ, ROS_DOMAIN_ID=str(DOMAIN_ID), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONUNBUFFERED='1')
    env['PYTHONPATH'] = os.pathsep.join([str(REPO)] + [p for p in [env.get('PYTHONPATH')] if p])
    return env


@pytest.mark.slow
@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_signal_sends_zero_to_every_robot(context, sig):
    """Moving robots get a zero command when the node is stopped by SIGINT or SIGTERM."""
    proc = subprocess.Popen(
        [sys.executable, '-m', 'orca_nav.node', '--ros-args', '-p',
         'robots:=[' + ','.join(ROBOTS) + ']', '-p', 'rate:=20.0'],
        env=node_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    node = rclpy.create_node('shutdown_probe', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    last = {}
    counts = dict.fromkeys(ROBOTS, 0)

    def on_cmd(robot):
        def cb(msg):
            last[robot] = command_values(msg)
            counts[robot] += 1
        return cb
    odom_pubs = [node.create_publisher(Odometry, f'/{r}/odom', 10) for r in ROBOTS]
    goal_pubs = [node.create_publisher(type(messages.make_goal(0, 0)), f'/{r}/goal_pose', 10)
                 for r in ROBOTS]
    for r in ROBOTS:
        node.create_subscription(Twist, f'/{r}/cmd_vel', on_cmd(r), 10)
    try:
        deadline = time.monotonic() + 30.0
        moving = False
        while time.monotonic() < deadline and not moving:
            for i, pub in enumerate(odom_pubs):
                msg = Odometry()
                msg.pose.pose.position.x = 3.0 * i
                msg.pose.pose.orientation.w = 1.0
                pub.publish(msg)
                goal_pubs[i].publish(messages.make_goal(3.0 * i, 5.0))
            executor.spin_once(timeout_sec=0.05)
            moving = all(r in last and abs(last[r][0]) + abs(last[r][1]) > 0.1 for r in ROBOTS)
            assert proc.poll() is None, proc.communicate()[0]
        assert moving, 'the node never commanded the robots'
        proc.send_signal(sig)
        # Let the final messages arrive; the node must exit on its own.
        end = time.monotonic() + 10.0
        while time.monotonic() < end and proc.poll() is None:
            executor.spin_once(timeout_sec=0.05)
        for _ in range(20):
            executor.spin_once(timeout_sec=0.02)
        output = proc.communicate(timeout=10.0)[0]
        assert proc.returncode == 0, output
        for r in ROBOTS:
            assert last[r] == (0.0, 0.0, 0.0), f'{r} last command {last[r]}; node said:\n{output}'
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        executor.shutdown()
        node.destroy_node()


def test_bad_parameters_exit_with_a_reason():
    """A bad parameter value stops the process with exit code 1 and a readable reason."""
    proc = subprocess.run(
        [sys.executable, '-m', 'orca_nav.node', '--ros-args', '-p', 'robots:=[r1]', '-p',
         'drive:=tank'], env=node_env(), capture_output=True, text=True, timeout=60.0)
    assert proc.returncode == 1
    reason = "drive must be one of 'holonomic', 'differential', got 'tank'"
    assert reason in proc.stdout + proc.stderr
