"""
Overload, with real rclpy: a node asked for more than it can do says so and stops no one wrongly.

300 robots at a rate of 200 Hz, every step made to cost two periods more (a sleep injected, so
on every machine alike): one tick takes longer than the 5 ms period. The node keeps ticking,
reports ``overloaded`` in ``~/tick_stats`` and a WARN on ``/diagnostics``, and still commands
the robot whose odometry is fresh toward its goal; the robots without odometry get zero
commands. No rate is asserted: the test waits for 40 ticks, however long they take.

A scan flood: reading every robot's scan is made to cost twice the period (a cost injected per
scan read, so on every machine alike); the node reads them in turns and recovers after it.
"""

import json
import math
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.ros import messages
from orca_nav.ros.main import make_executor
from orca_nav.ros.node import OrcaNavNode
from orca_nav.ros.tick_monitor import ScanQuota
from orca_nav.testing.rig import matched, spin_until
import pytest
import rclpy
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from rclpy.serialization import serialize_message
from sensor_msgs.msg import LaserScan
from std_msgs.msg import String

DOMAIN_ID = 57
N = 300
RATE = 200.0  # [Hz] a period of 5 ms: less than a tick of 300 robots takes
TICK_COST = 2.0 / RATE  # [s] injected into every step: a tick costs three periods at least


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
    # The overload is made, not hoped for: every controller step costs two periods more (a
    # sleep injected into the node's step), on any machine.
    step = node.controller.step

    def costly_step(*args):
        time.sleep(TICK_COST)
        return step(*args)

    node.controller.step = costly_step
    try:
        spin_until(executor, matched([odom, goal]), what='discovery')
        msg = messages.make_odometry()
        sent_goal = False

        def feed():
            nonlocal sent_goal
            odom.publish(msg)  # fresh odometry of r000 all along
            if not sent_goal and node.odometry.count(0):
                goal.publish(messages.make_goal(5.0, 0.0))
                sent_goal = True
            # It kept ticking while overloaded, and reported it at least twice.
            return node.monitor.ticks >= 40 and sum(bool(s.get('overloaded')) for s in stats) >= 2

        spin_until(executor, feed, timeout=120.0, what='40 overloaded ticks')
        assert sent_goal
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


FLOOD_N = 100       # robots, every one with odometry and a 720-beam scan every period
FLOOD_BEAMS = 720
# The overload is made, not hoped for: each scan a tick reads costs this much more [s] (a sleep
# injected into the node's scan reading). Reading every robot's scan would cost 200 ms a tick,
# twice the period, on any machine; the quota's floor (20 robots, see the test) costs 40 ms,
# which leaves half the period for the rest of the tick even on a slow or busy machine.
SCAN_COST = 0.002


def _serialised_scan():
    """Return a 720-beam scan inside a 6 m x 4 m room, serialised (once for all robots)."""
    angles = -math.pi + 2.0 * math.pi / FLOOD_BEAMS * np.arange(FLOOD_BEAMS)
    ranges = np.minimum(3.0 / np.maximum(np.abs(np.cos(angles)), 1e-9),
                        2.0 / np.maximum(np.abs(np.sin(angles)), 1e-9))
    msg = LaserScan(angle_min=-math.pi, angle_increment=2.0 * math.pi / FLOOD_BEAMS,
                    range_min=0.05, range_max=8.0, ranges=ranges.tolist())
    return serialize_message(msg)


def _serialised_odometry(x, y):
    return serialize_message(messages.make_odometry(x, y))


def _costly_scan_reading(node, reads):
    """
    Make every scan the node's ticks read cost SCAN_COST more; note what each tick read.

    ``reads`` gets (monotonic time [s], robot rows read) per tick. The node's own reading
    (round robin, up to its quota) is unchanged: only its cost grows with the scans read.
    """
    take = node.scans.take

    def costly_take(limit=None):
        scans = take(limit)
        reads.append((time.monotonic(), [s.robot for s in scans]))
        time.sleep(SCAN_COST * len(scans))
        return scans

    node.scans.take = costly_take


@pytest.mark.slow
def test_a_scan_flood_is_read_in_turns_and_the_node_recovers_when_it_ends(context):
    """
    100 robots with fresh odometry and 720-beam scans every period: more than a tick can read.

    Each scan read costs 2 ms more (injected), so reading all would take twice the period on
    any machine. The node reads the scans of a share of the robots per tick (round robin,
    never fewer than its floor, every robot's scan read before its walls expire), reports
    ``overloaded`` with ``scans_deferred``, keeps ticking and commands the robot with a goal;
    when the scans stop it reads all again and reports no overload. No rate is asserted.
    """
    names = [f'f{i:03d}' for i in range(FLOOD_N)]
    node = OrcaNavNode(context=context, node_name='orca_flood', parameter_overrides=[
        Parameter('robots', value=names), Parameter('rate', value=10.0),
        Parameter('odom_timeout', value=1.0), Parameter('scan_enabled', value=True),
        # Scan walls kept 1 s: every robot's scan must be read at least every 0.5 s (the
        # quota's floor: 20 robots a tick), which leaves the quota room to adapt.
        Parameter('obstacle_timeout', value=1.0)])
    assert node.scan_quota.floor == FLOOD_N // 5
    reads = []
    _costly_scan_reading(node, reads)
    probe = rclpy.create_node('flood', context=context)
    executor = make_executor('events', context=context)
    executor.add_node(node)
    executor.add_node(probe)
    stats, commands, diagnostics = [], [], []
    probe.create_subscription(String, '/orca_flood/tick_stats',
                              lambda m: stats.append(json.loads(m.data)), 10)
    probe.create_subscription(DiagnosticArray, '/diagnostics',
                              lambda m: diagnostics.append(m.status[0]), 10)
    probe.create_subscription(Twist, f'/{names[0]}/cmd_vel', commands.append, 10)
    odom = [probe.create_publisher(Odometry, f'/{r}/odom', qos_profile_sensor_data)
            for r in names]
    scans = [probe.create_publisher(LaserScan, f'/{r}/scan', qos_profile_sensor_data)
             for r in names]
    goal = probe.create_publisher(type(messages.make_goal(0, 0)), f'/{names[0]}/goal_pose', 10)
    # Robots 1.5 m apart on a grid: each has neighbours to avoid (a real ORCA step).
    odom_bytes = [_serialised_odometry(1.5 * (i % 10), 1.5 * (i // 10)) for i in range(FLOOD_N)]
    scan_bytes = _serialised_scan()

    def run(seconds, flood):
        """Publish odometry (and scans when flooding) every 0.1 s for ``seconds``."""
        first = len(stats)
        end = next_round = time.monotonic()
        end += seconds
        while time.monotonic() < end:
            if time.monotonic() >= next_round:
                next_round += 0.1
                for i in range(FLOOD_N):
                    odom[i].publish(odom_bytes[i])
                    if flood:
                        scans[i].publish(scan_bytes)
            executor.spin_once(timeout_sec=0.005)
        return stats[first:]

    try:
        spin_until(executor, matched([goal] + odom + scans), what='discovery')
        before = run(2.0, flood=False)
        assert before and not before[-1]['scans_deferred'], before[-1:]
        assert before[-1]['scan_quota'] == FLOOD_N
        goal.publish(messages.make_goal(1.5 * 9 + 0.7, 1.5 * 15))
        flood_start = len(reads)
        flood = run(6.0, flood=True)[2:]     # the first seconds: the quota settles
        flood_reads = reads[flood_start:]
        # Overloaded by construction: every statistics window of the settled flood left scans
        # waiting, with a quota below the fleet and never below the floor.
        assert flood and all(s['scans_deferred'] and s['overloaded'] for s in flood), flood
        assert all(node.scan_quota.floor <= s['scan_quota'] < FLOOD_N for s in flood), flood
        assert max(len(robots) for _, robots in flood_reads[10:]) < FLOOD_N
        # Read in turns: every robot's scan read again within FLOOD_N / floor reads (5 ticks,
        # 0.5 s at 10 Hz: within the scan walls' lifetime of 1 s). Counted in reads, not in
        # wall time: on a loaded machine (load 12) a tick can come late, and the gap in
        # seconds was seen at 1.09 s with every robot still read in turn.
        turn = FLOOD_N // node.scan_quota.floor
        settled = [robots for _, robots in flood_reads[10:]]
        for i in range(FLOOD_N):
            reads_of_i = [-1] + [k for k, robots in enumerate(settled) if i in robots]
            gaps = np.diff(reads_of_i + [len(settled)])
            assert len(reads_of_i) > 1 and gaps.max() <= turn, (i, gaps.max())
        # No rate is asserted (how many ticks fit a second depends on the machine and on the
        # other test workers beside this one): the quota's answer to long ticks is checked
        # in lock step by the test below. Here the node kept ticking through the flood.
        assert all(s['recent_tick_ms'] for s in flood), flood
        assert all(s['recent_fresh_share'] == 1.0 for s in flood)
        assert commands and math.hypot(commands[-1].linear.x, commands[-1].linear.y) > 0.1
        warn = diagnostics[-1]
        assert warn.level == DiagnosticStatus.WARN and warn.message.startswith('overloaded')
        assert f'scans read for {flood[-1]["scan_quota"]} robots a tick' in warn.message
        calm = run(3.0, flood=False)
        assert calm and not calm[-1]['overloaded'], calm[-1:]
        assert calm[-1]['scan_quota'] == FLOOD_N and not calm[-1]['scans_deferred']
        assert diagnostics[-1].level == DiagnosticStatus.OK, diagnostics[-1].message
        assert math.hypot(commands[-1].linear.x, commands[-1].linear.y) > 0.1
    finally:
        executor.shutdown()
        node.destroy_node()
        probe.destroy_node()


def test_the_scan_quota_shrinks_with_long_ticks_never_below_its_floor_and_grows_back():
    quota = ScanQuota(400, 0.1, 1.0)    # every robot read at least every 5 ticks
    assert quota.floor == 80 and quota.quota == 400
    quota.update(0.16, 400)             # twice the 80 ms target: half as many
    assert quota.quota == 200
    quota.update(0.07, 200)             # between 60 and 80 ms: hold
    assert quota.quota == 200
    for _ in range(20):
        quota.update(1.0, 200)          # whatever the tick, the floor holds
    assert quota.quota == 80
    quota.set_obstacle_timeout(0.4)     # a shorter timeout: read every robot every 2 ticks
    assert quota.floor == 200 and quota.quota == 200
    for _ in range(30):
        quota.update(0.01, 200)         # short ticks: back to every robot
    assert quota.quota == 400


@pytest.mark.parametrize('base', [0.0, 0.035, 0.05])
def test_the_scan_quota_brings_a_flooded_tick_back_within_its_period(base):
    """
    Lock step, no clock: the flood above, where a tick costs ``base`` plus SCAN_COST a scan.

    Reading every robot's scan would take 200 ms and more; the quota settles where ticks fit
    the 100 ms period again, without going below its floor (the floor's 40 ms leave 60 ms).
    """
    quota = ScanQuota(FLOOD_N, 0.1, 1.0)
    ticks = []
    for _ in range(40):
        read = quota.quota
        ticks.append(base + SCAN_COST * read)
        quota.update(ticks[-1], read)
    assert ticks[0] >= 0.2
    assert max(ticks[10:]) <= 0.1 and quota.floor <= quota.quota < FLOOD_N, (ticks, quota.quota)
