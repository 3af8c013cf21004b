"""
A node whose kernels are still compiling: zero commands, status ``starting``, not ready.

The node (real rclpy, lock-stepped on the probe's clock, domain 65) runs with its warm-up
held back (``orca_nav.control.warmup.warmup`` waits for the test: what a cold cache looks
like, without the minute of compiling). Meanwhile each tick publishes zero commands, the
status says ``starting`` and why, ``~/tick_stats`` and ``/diagnostics`` say it is not ready;
goals received meanwhile are kept. Once the warm-up is over, the next tick drives.
"""

import json
import math
import threading

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from orca_nav.control import warmup as W
from orca_nav.ros import messages
from orca_nav.ros.outputs import LATCHED_QOS
from orca_nav.testing.rig import matched, NodeRig
import pytest
from std_msgs.msg import String

DOMAIN_ID = 65
ROBOTS = ['a', 'b']


@pytest.fixture
def held_warmup(monkeypatch):
    """Hold every node's warm-up until the returned Event is set (then run it)."""
    release = threading.Event()
    warmup = W.warmup

    def held(*args, **kwargs):
        release.wait(60.0)
        return warmup(*args, **kwargs)
    monkeypatch.setattr(W, 'warmup', held)
    yield release
    release.set()


def test_a_node_commands_zero_and_reports_starting_until_its_kernels_are_ready(
        context, held_warmup):
    rig = NodeRig(context, ROBOTS)
    statuses, commands = {r: [] for r in ROBOTS}, {r: [] for r in ROBOTS}
    stats, diagnostics = [], []
    probe = rig.probe
    for r in ROBOTS:
        probe.create_subscription(String, f'/{r}/orca_status',
                                  lambda m, r=r: statuses[r].append(json.loads(m.data)),
                                  LATCHED_QOS)
        probe.create_subscription(
            Twist, f'/{r}/cmd_vel',
            lambda m, r=r: commands[r].append(math.hypot(m.linear.x, m.linear.y)), 10)
    probe.create_subscription(String, '/orca_nav/tick_stats',
                              lambda m: stats.append(json.loads(m.data)), 10)
    probe.create_subscription(DiagnosticArray, '/diagnostics', diagnostics.append, 10)
    odom = [probe.create_publisher(Odometry, f'/{r}/odom', 10) for r in ROBOTS]
    goals = [probe.create_publisher(type(messages.make_goal(0, 0)), f'/{r}/goal_pose', 10)
             for r in ROBOTS]
    node = rig.node
    try:
        rig.spin_until(lambda: matched(odom + goals + [rig.clock.pub])()
                       and node.outputs.matched(), what='discovery')
        rig.clock.publish()

        def feed():
            for i, pub in enumerate(odom):
                msg = Odometry()
                msg.header.stamp = rig.clock.stamp()
                msg.pose.pose.position.x = 3.0 * i
                msg.pose.pose.orientation.w = 1.0
                pub.publish(msg)
        for i, pub in enumerate(goals):
            pub.publish(messages.make_goal(3.0 * i, 5.0))
        rig.spin_until(lambda: node.controller.has_goal.all(), what='the goals')
        for _ in range(12):  # over a second of the node's clock: a tick_stats message
            feed()
            rig.tick()
        rig.spin_until(lambda: stats and all(statuses.values()), what='stats and statuses')
        assert not node.kernels.ready
        for r in ROBOTS:
            assert statuses[r][-1]['state'] == 'starting', statuses[r]
            assert 'compiling' in statuses[r][-1]['reason']
            assert commands[r] and set(commands[r]) == {0.0}
        assert stats[-1]['ready'] is False
        rig.spin_until(lambda: diagnostics, what='diagnostics')
        status = diagnostics[-1].status[0]
        assert status.level == DiagnosticStatus.WARN and status.message.startswith('starting')
        # The kernels are ready: the next ticks drive to the goals received meanwhile.
        held_warmup.set()
        rig.spin_until(lambda: node.kernels.ready, what='the warm-up')
        for _ in range(3):
            feed()
            rig.tick()
        rig.spin_until(lambda: all(c[-1] > 0.1 for c in commands.values())
                       and all(s[-1]['state'] == 'active' for s in statuses.values()),
                       what='driving commands')
        assert node.kernels.ready and node.tick_stats()['ready'] is True
    finally:
        rig.close()


def test_what_the_kernels_left_is_frozen_as_the_start_up_objects_are(context, held_warmup):
    """
    Objects the kernels' compile left after the node froze its heap are frozen when ready.

    The node's process freezes its heap once built and collects every 10 s; without this,
    those full collections walked what numba left (after a cold start of 1000 robots: 0.3-0.7
    s every 10 s, and the node beside a busy CPU missed periods, benchmarks/bench_startup.py).
    """
    import gc
    threshold = gc.get_threshold()
    rig = NodeRig(context, ROBOTS)
    try:
        rig.node.monitor.take_over_gc()  # as orca_nav.ros.main does once the node is built
        held = [[] for _ in range(1000)]  # what a compile leaves (containers: tracked)
        assert all(gc.is_tracked(h) for h in held)
        held_warmup.set()
        rig.spin_until(lambda: rig.node.kernels.ready, what='the kernels')
        # Frozen: in no generation a collection walks (gc.get_objects lists those). Not
        # counted by gc.get_freeze_count: frozen start-up objects freed meanwhile lower it.
        walked = {id(o) for o in gc.get_objects()}
        assert not any(id(h) in walked for h in held)
    finally:
        rig.close()
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_a_slow_load_of_a_warm_cache_is_not_called_compiling(monkeypatch):
    """Past COMPILING_AFTER, the line says compiling only once a kernel missed the cache."""
    from orca_nav.ros import startup
    lines = []

    class Log:

        def warning(self, text):
            lines.append(text)

        info = debug = warning

    kernels = object.__new__(startup.Kernels)
    kernels._node = type('Node', (), {'get_logger': lambda self: Log()})()
    kernels.started = startup.time.monotonic() - 10.0 * startup.COMPILING_AFTER
    kernels._announced, kernels._ready = False, threading.Event()
    kernels.reason = 'compiling the numba kernels (...)'
    compiled = [0]
    monkeypatch.setattr(W, 'compiled_count', lambda: compiled[0])
    for _ in range(3):
        assert kernels.check() is False   # loading, slowly: nothing said
    assert lines == []
    compiled[0] = 2                       # a kernel missed the cache
    for _ in range(3):
        kernels.check()
    assert len(lines) == 1 and lines[0].startswith('compiling the numba kernels'), lines
