"""
Shutdown of the orca_nav node as users run it: ``python -m orca_nav.node`` in its own process.

The test feeds odometry and goals so that the robots are moving, then sends SIGINT (Ctrl-C) or
SIGTERM and checks that the last command every robot received is zero and that the process
exits cleanly. Also checks that bad parameters make the process exit with an error and a reason.
Domain 23, DDS on loopback.
"""

import signal
import subprocess
import sys
import time

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from orca_nav.ros import messages
from orca_nav.sim.processes import Child, child_env, SHUTDOWN_GRACE
from orca_nav.testing.rig import command_values, Probe
import pytest

DOMAIN_ID = 23
ROBOTS = ['r1', 'r2', 'r3']


@pytest.mark.slow
@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_signal_sends_zero_to_every_robot(context, sig, tmp_path):
    """Moving robots get a zero command when the node is stopped by SIGINT or SIGTERM."""
    child = Child('node', [sys.executable, '-m', 'orca_nav.node', '--ros-args', '-p',
                           'robots:=[' + ','.join(ROBOTS) + ']', '-p', 'rate:=20.0'],
                  child_env(DOMAIN_ID), tmp_path)
    rig = Probe(context, 'shutdown_probe')
    node = rig.probe
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
        deadline = time.monotonic() + 60.0
        moving = False
        while time.monotonic() < deadline and not moving:
            for i, pub in enumerate(odom_pubs):
                pub.publish(messages.make_odometry(3.0 * i))
                goal_pubs[i].publish(messages.make_goal(3.0 * i, 5.0))
            rig.executor.spin_once(timeout_sec=0.05)
            moving = all(r in last and abs(last[r][0]) + abs(last[r][1]) > 0.1 for r in ROBOTS)
            assert child.alive(), child.tail()
        assert moving, 'the node never commanded the robots'
        child.proc.send_signal(sig)
        # Let the final messages arrive; the node must exit on its own.
        rig.spin_until(lambda: not child.alive(), SHUTDOWN_GRACE, 'the node to exit')
        rig.spin_for(0.4)
    finally:
        code = child.stop()
        rig.close()
    output = child.log_path.read_text(errors='replace')
    assert code == 0, output
    for r in ROBOTS:
        assert last[r] == (0.0, 0.0, 0.0), f'{r} last command {last[r]}; node said:\n{output}'


def test_bad_parameters_exit_with_a_reason():
    """A bad parameter value stops the process with exit code 1 and a readable reason."""
    proc = subprocess.run(
        [sys.executable, '-m', 'orca_nav.node', '--ros-args', '-p', 'robots:=[r1]', '-p',
         'drive:=tank'], env=child_env(DOMAIN_ID), capture_output=True, text=True, timeout=60.0)
    assert proc.returncode == 1
    reason = "drive must be one of 'holonomic', 'differential', got 'tank'"
    assert reason in proc.stdout + proc.stderr
