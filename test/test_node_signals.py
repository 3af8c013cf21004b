"""
How the node process ends when what started it goes away, and on its own start failures.

The node runs as users run it (``python -m orca_nav.node``, orca_nav.sim.processes.Child), on
domain 62 with DDS on loopback:

- its parent dies (as ``ros2 launch`` killed with SIGTERM: it exits without stopping its
  nodes): the node must stop every robot (zero commands) and exit by itself;
- ``use_sim_time`` without ``/clock``: one warning after a few seconds of wall time and an
  ``orca_status`` saying why nothing moves;
- a start that fails half-way (a topic too long for DDS): the FATAL line, no traceback;
- Ctrl-C while the kernels compile (numba's cache empty): the node ends on SIGINT alone.
"""

import ctypes
import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import time

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from orca_nav.control.planning import PlanningWorker
from orca_nav.ros import messages
from orca_nav.ros.outputs import LATCHED_QOS
from orca_nav.sim.processes import Child, child_env, SHUTDOWN_GRACE
from orca_nav.testing.rig import command_values, pid_running, Probe
import pytest
from std_msgs.msg import String

DOMAIN_ID = 62
ROBOTS = ['s1', 's2']
NODE = [sys.executable, '-m', 'orca_nav.node', '--ros-args', '-p',
        'robots:=[' + ','.join(ROBOTS) + ']', '-p', 'rate:=20.0']
# A parent that starts the node and waits for it: killing it orphans the node.
PARENT = [sys.executable, '-c', 'import subprocess, sys; p = subprocess.Popen(sys.argv[1:]); '
          'print(p.pid, flush=True); p.wait()']
PR_SET_CHILD_SUBREAPER = 36


class CommandProbe(Probe):
    """Odometry and goals in, the robots' last commands out, on the test's context."""

    def __init__(self, context):
        """Create the probe node, its executor and its publishers."""
        super().__init__(context, 'signals_probe')
        self.last, self.nonzero = {}, dict.fromkeys(ROBOTS, 0)
        self.odom = [self.probe.create_publisher(Odometry, f'/{r}/odom', 10) for r in ROBOTS]
        self.goals = [self.probe.create_publisher(type(messages.make_goal(0, 0)),
                                                  f'/{r}/goal_pose', 10) for r in ROBOTS]
        for r in ROBOTS:
            self.probe.create_subscription(Twist, f'/{r}/cmd_vel', self._on_cmd(r), 10)

    def _on_cmd(self, robot):
        def callback(msg):
            self.last[robot] = command_values(msg)
            self.nonzero[robot] += any(self.last[robot])
        return callback

    def drive(self, alive, timeout=60.0):
        """Feed odometry and goals until every robot is commanded to move."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, pub in enumerate(self.odom):
                pub.publish(messages.make_odometry(3.0 * i))
                self.goals[i].publish(messages.make_goal(3.0 * i, 5.0))
            self.spin_for(0.05)
            if all(r in self.last and abs(self.last[r][0]) + abs(self.last[r][1]) > 0.1
                   for r in ROBOTS):
                return True
            assert alive(), 'the node exited'
        return False


def _subreaper(on):
    """Make this process adopt its orphaned descendants (so it can wait for them), or stop."""
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='prctl is Linux only')
def test_node_stops_every_robot_and_exits_when_its_launcher_dies(context, tmp_path):
    """The launcher is killed (SIGKILL: no signal reaches the node): zero commands, then exit."""
    env = child_env(DOMAIN_ID)
    log = open(tmp_path / 'node.log', 'wb')
    _subreaper(True)
    parent = subprocess.Popen(PARENT + NODE, env=env, stdout=subprocess.PIPE, stderr=log)
    node_pid = int(parent.stdout.readline())
    probe = CommandProbe(context)
    status = None

    def output():
        return (tmp_path / 'node.log').read_text(errors='replace')
    try:
        assert probe.drive(lambda: pid_running(node_pid)), output()
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 15.0
        while time.monotonic() < deadline and status is None:
            probe.spin_for(0.1)
            pid, code = os.waitpid(node_pid, os.WNOHANG)
            status = code if pid else None
        moving = dict(probe.nonzero)
        probe.spin_for(1.0)  # nothing moves any more
        assert status is not None, f'the orphaned node is still running:\n{output()}'
        assert os.waitstatus_to_exitcode(status) == 0, output()
        assert 'is gone: stopping every robot and exiting' in output()
        for r in ROBOTS:
            assert probe.last[r] == (0.0, 0.0, 0.0), f'{r}: {probe.last[r]}\n{output()}'
        assert probe.nonzero == moving
    finally:
        if status is None:
            os.kill(node_pid, signal.SIGKILL)
            os.waitpid(node_pid, 0)
        _subreaper(False)
        log.close()
        probe.close()


@pytest.mark.slow
def test_sim_time_without_clock_warns_once_and_reports_a_status(context, tmp_path):
    """use_sim_time:=true, no /clock: a warning after a few seconds and a no_clock status."""
    child = Child('node', NODE + ['-p', 'use_sim_time:=true'], child_env(DOMAIN_ID), tmp_path)
    rig = Probe(context, 'clock_probe')
    statuses = []
    rig.probe.create_subscription(String, f'/{ROBOTS[0]}/orca_status',
                                  lambda msg: statuses.append(json.loads(msg.data)), LATCHED_QOS)
    try:
        rig.spin_until(lambda: statuses or not child.alive(), 60.0, 'a status')
        assert statuses, child.tail()
        assert statuses[0]['state'] == 'no_clock' and '/clock' in statuses[0]['reason']
        time.sleep(1.0)
    finally:
        code = child.stop()
        rig.close()
    text = Path(child.log_path).read_text()
    assert code == 0, text
    assert text.count('no /clock message has come') == 1, text


def test_a_failed_start_gives_its_reason_without_a_traceback(tmp_path):
    """A robot name making a topic too long for DDS: FATAL, exit 1, no AttributeError."""
    child = Child('node', [sys.executable, '-m', 'orca_nav.node', '--ros-args', '-p',
                           'robots:=[' + 'r' * 300 + ']'], child_env(DOMAIN_ID), tmp_path)
    child.proc.wait(120.0)
    code = child.stop()
    text = Path(child.log_path).read_text()
    assert code == 1 and 'FATAL' in text and 'topic length should not exceed' in text, text
    assert 'Traceback' not in text, text


def test_planning_worker_process_ignores_ctrl_c(capfd):
    """Ctrl-C reaches the worker too: it printed a KeyboardInterrupt traceback and died."""
    # As in the node's process, SIGINT is handled here, not ignored (a shell may have started
    # the tests with it ignored, and the worker would inherit that).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    worker = PlanningWorker()
    try:
        pid = worker.worker_pid()
        assert pid != os.getpid()
        os.kill(pid, signal.SIGINT)
        time.sleep(0.5)
        assert worker.worker_pid() == pid
    finally:
        worker.close()
        signal.signal(signal.SIGINT, previous)
    err = capfd.readouterr().err
    assert 'KeyboardInterrupt' not in err and 'Traceback' not in err, err


# A process that gives its planning worker a long job (a big map on a busy machine), closes
# the worker as the node does when it stops, and exits.
LONG_JOB = ('import time, sys; from orca_nav.control.planning import PlanningWorker; '
            'w = PlanningWorker(); pid = w.worker_pid(); w._pool().submit(time.sleep, 60); '
            'time.sleep(0.5); w.close(); print(pid, flush=True)')


def test_a_process_exits_at_once_though_its_planning_worker_is_busy():
    """
    Closing the worker ends its job under way: the process's exit does not wait for it.

    The node's exit waited (a fresh clone's CI: the node ran 5 s after Ctrl-C, launch's
    grace, while its worker prepared a 240 x 240 map).
    """
    start = time.monotonic()
    out = subprocess.run([sys.executable, '-c', LONG_JOB], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ))
    took = time.monotonic() - start
    assert out.returncode == 0 and 'Traceback' not in out.stderr, out.stderr
    assert took < 10.0, f'exited after {took:.1f} s'
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 5.0
    while pid_running(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_running(pid), 'the worker outlived the process'


@pytest.mark.slow
def test_ctrl_c_while_the_kernels_compile_stops_the_node_at_once(context, tmp_path):
    """A cold cache: one line says so, the status is starting; SIGINT alone ends the node."""
    env = dict(child_env(DOMAIN_ID), NUMBA_CACHE_DIR=str(tmp_path / 'empty_cache'))
    child = Child('node', NODE, env, tmp_path)
    rig = Probe(context, 'cold_probe')
    statuses = []
    rig.probe.create_subscription(String, f'/{ROBOTS[0]}/orca_status',
                                  lambda msg: statuses.append(json.loads(msg.data)), LATCHED_QOS)
    code = None
    try:
        rig.spin_until(lambda: 'compiling the numba kernels' in Path(child.log_path).read_text()
                       or not child.alive(), 120.0, 'the compiling line')
        rig.spin_until(lambda: statuses or not child.alive(), 60.0, 'a status')
        assert statuses and statuses[-1]['state'] == 'starting', child.tail()
        # As ros2 launch on Ctrl-C: SIGINT, and SIGTERM only if the node outlives the grace.
        child.proc.send_signal(signal.SIGINT)
        code = child.proc.wait(SHUTDOWN_GRACE)
    finally:
        stopped = child.stop()
        rig.close()
    text = Path(child.log_path).read_text()
    assert code == 0 == stopped, text
    assert text.count('compiling the numba kernels') == 1, text
    assert 'SIGINT: stopping every robot' in text and 'Traceback' not in text, text
