"""
The ROS test rig: one way to spin until, one simulated clock, one in-process node under test.

For the tests over real rclpy (not used by the node):

- :func:`spin_until` spins an executor until a predicate holds, failing with what it waited
  for; :func:`spin_for` spins for a wall time; :func:`matched` waits for discovery.
- :class:`SimClock` publishes ``rosgraph_msgs/Clock`` on ``/clock``: nodes with use_sim_time
  see exactly the time the test sets, so ticks happen when the test says.
- :class:`Probe` is the test's side: a probe node, an executor and a :class:`SimClock`.
- :class:`NodeRig` adds the orca_nav node in the same process and executor, on the probe's
  clock (lock-step: the node ticks once per :meth:`NodeRig.tick`).

A node run as a process is an ``orca_nav.sim.processes.Child``, stopped with ``Child.stop``;
:func:`pid_running` tells whether a process it left (an orphan, a worker) still runs.
"""

import math
from pathlib import Path
import time

from geometry_msgs.msg import TwistStamped
from orca_nav.ros.main import make_executor
from orca_nav.ros.node import OrcaNavNode
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock

# [s] wall time to wait for ROS messages before failing: generous, as it costs nothing when
# they come; on a loaded 2-core machine (load 12) a tick's messages were seen to take over 5 s.
WAIT_TIMEOUT = 30.0
# [s] for a node's numba kernels: a variant the cache lacks compiles for a while on a busy
# machine (each test process loads or compiles the kernels of its nodes' settings once).
KERNELS_TIMEOUT = 300.0
START = 10.0        # [s] the simulated time a rig starts at


def spin_until(executor, predicate, timeout=WAIT_TIMEOUT, what='ROS messages'):
    """
    Spin ``executor`` until ``predicate()`` is true; raise AssertionError after ``timeout`` s.

    Returns the number of spin_once calls it took (0 if the predicate held at once).
    """
    deadline = time.monotonic() + timeout
    spins = 0
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f'timed out after {timeout:g} s waiting for {what}')
        executor.spin_once(timeout_sec=0.01)
        spins += 1
    return spins


def spin_for(executor, seconds):
    """Spin ``executor`` for ``seconds`` of wall time."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=min(0.01, max(end - time.monotonic(), 0.0)))


def matched(publishers):
    """Return a predicate: every publisher has at least one subscriber."""
    publishers = list(publishers)
    return lambda: all(p.get_subscription_count() > 0 for p in publishers)


def pid_running(pid):
    """Whether process ``pid`` runs (exists and is no zombie; Linux ``/proc``)."""
    try:
        return Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0] != 'Z'
    except (OSError, IndexError):
        return False


def stamp_of(t):
    """
    Return builtin_interfaces/Time of ``t`` seconds.

    >>> s = stamp_of(10.3)
    >>> s.sec, s.nanosec
    (10, 300000000)
    """
    msg = Clock().clock
    msg.sec = int(math.floor(t))
    msg.nanosec = min(int(round((t - msg.sec) * 1e9)), 999_999_999)
    return msg


def command_values(msg):
    """(vx, vy, wz) of a Twist or TwistStamped."""
    twist = msg.twist if isinstance(msg, TwistStamped) else msg
    return twist.linear.x, twist.linear.y, twist.angular.z


def command_recorder(commands, counts, i):
    """Return a cmd_vel callback writing robot i's (vx, vy, wz) to commands[i], counting it."""
    def record(msg):
        commands[i] = command_values(msg)
        counts[i] += 1
    return record


class SimClock:
    """
    Simulated time: publishes rosgraph_msgs/Clock on /clock from ``node``.

    ``t`` [s] only changes when the test calls :meth:`advance` or :meth:`jump`; both publish
    the new time. Nodes created with ``use_sim_time`` true follow it once they have one message.
    """

    def __init__(self, node, start=1.0, topic='/clock'):
        """Create the /clock publisher on ``node``; the clock starts at ``start`` seconds."""
        self.t = float(start)
        self.pub = node.create_publisher(Clock, topic, QoSProfile(depth=10))

    def stamp(self):
        """Return the current time as builtin_interfaces/Time."""
        return stamp_of(self.t)

    def publish(self):
        """Publish the current time."""
        msg = Clock()
        msg.clock = self.stamp()
        self.pub.publish(msg)

    def jump(self, t):
        """Jump to ``t`` seconds and publish it."""
        self.t = float(t)
        self.publish()

    def advance(self, dt):
        """Move the time on by ``dt`` seconds and publish it; return the new time."""
        # Rounded to the nanosecond of the message: no float drift over many steps.
        self.jump(round(self.t + float(dt), 9))
        return self.t


class Probe:
    """The test's side of a ROS test: a probe node, its executor and a simulated clock."""

    def __init__(self, context, name='probe', start=START, executor='single'):
        """
        Create the probe node (``self.probe``), the executor and the clock.

        executor : 'single', 'multi' or 'events' (as the node's parameter), or an executor.
        """
        self.probe = Node(name, context=context)
        self.executor = (make_executor(executor, context=context) if isinstance(executor, str)
                         else executor)
        self.executor.add_node(self.probe)
        self.clock = SimClock(self.probe, start)

    def spin_until(self, predicate, timeout=WAIT_TIMEOUT, what='ROS messages'):
        """Spin until ``predicate()`` holds (see :func:`spin_until`)."""
        return spin_until(self.executor, predicate, timeout, what)

    def spin_for(self, seconds):
        """Spin for ``seconds`` of wall time."""
        spin_for(self.executor, seconds)

    def close(self):
        """Destroy the probe node and shut the executor down."""
        self.executor.remove_node(self.probe)
        self.probe.destroy_node()
        self.executor.shutdown()


class NodeRig(Probe):
    """
    The orca_nav node under test (``self.node``) and the probe on one executor, lock-stepped.

    The node runs with ``use_sim_time`` on the probe's clock at ``rate``; ``params`` are more
    parameter overrides. :meth:`start` waits for discovery and the node's first tick;
    :meth:`tick` moves the clock one period on and waits for the node's tick.
    """

    def __init__(self, context, robots, rate=10.0, executor='single', name='probe', start=START,
                 **params):
        """
        Create the node and the probe on one executor; the clock starts at ``start`` [s].

        executor : as :class:`Probe`'s, or 'node': the one the node's parameter chooses.
        """
        overrides = {'use_sim_time': True, 'robots': list(robots), 'rate': float(rate)}
        overrides.update(params)
        self.period = 1.0 / float(rate)
        self.node = OrcaNavNode(context=context, parameter_overrides=[
            Parameter(k, value=v) for k, v in overrides.items()])
        if executor == 'node':
            executor = self.node.settings.params.executor
        super().__init__(context, name, start, executor)
        self.executor.add_node(self.node)

    def start(self, publishers=(), timeout=WAIT_TIMEOUT):
        """
        Wait until ``publishers`` and the node's outputs are matched, then the first tick.

        Also until the node's kernels are ready: its ticks before command nothing.
        """
        self.spin_until(lambda: self.node.kernels.ready, KERNELS_TIMEOUT,
                        'the kernels (compiling)')
        self.spin_until(lambda: matched(list(publishers) + [self.clock.pub])()
                        and self.node.outputs.matched(), timeout, 'discovery')
        self.clock.publish()
        # The clock is set and the timer's first tick (at the start time) has run.
        self.spin_until(lambda: self.node.get_clock().now().nanoseconds > 0
                        and self.node.monitor.ticks > 0, timeout, 'the first tick')

    def commands_in(self, counts):
        """Return a predicate: every robot's command count is the node's command rounds."""
        return lambda: all(c == self.node.outputs.commands_published for c in counts())

    def tick(self, done=lambda: True, timeout=WAIT_TIMEOUT):
        """Move the clock one period on; wait for the node's tick and ``done()``."""
        ticks = self.node.monitor.ticks
        self.clock.advance(self.period)
        self.spin_until(lambda: self.node.monitor.ticks > ticks and done(), timeout,
                        'the tick')

    def close(self):
        """Destroy the node and the probe, shut the executor down."""
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        super().close()
