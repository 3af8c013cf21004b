"""
A fleet split over several nodes (launch ``nodes:=K``), with real rclpy and real DDS.

Each OrcaNavNode gets the parameters ``orca_nav.ros.fleet.plan_nodes`` plans for the split
(``nodes=K``): node k commands a contiguous share of a ring swap and observes the other robots,
whose odometry it takes from DDS like its own robots' (``observed_reciprocate`` true: the
robots of the other nodes take their share of the avoiding). The nodes and test_node_world's
lock-stepped World run in one executor on a private ROS context (domain 80, DDS on loopback),
on simulated time: the world publishes every robot's odometry, waits until every node has it,
publishes the next /clock, waits for every node's tick and commands, then integrates them.

Control run: the same nodes without observed_robots, each blind to the other shares, drive
into the other nodes' robots (the world sees the discs overlap), so the split test can fail.

Slow: the planned nodes as ``python -m orca_nav.node`` processes, named as ``ros2 launch``
names them: each has its own name, ``~/tick_stats`` and intake node, publishes the commands of
its own robots only and takes every robot's odometry.
"""

import json
import sys
import time

import numpy as np
from orca_nav.ros import fleet
from orca_nav.ros import messages
from orca_nav.ros.node import OrcaNavNode
from orca_nav.sim.processes import Child, child_env
import pytest
from rclpy.parameter import Parameter
from std_msgs.msg import String
import yaml

from helpers import Probe  # noqa: I100 -- test/ is on sys.path
from test_node_world import circle_swap, World  # noqa: I100 -- test/ is on sys.path

DOMAIN_ID = 80
RATE = 10.0
RADIUS = 0.2
GOAL_TOLERANCE = 0.1


def run_split(context, n_robots, n_nodes, observe=True, max_time=60.0, blind_time=8.0):
    """
    Run a ring swap of n_robots commanded by n_nodes split nodes until all arrive.

    observe False: every node's observed_robots is left out (it sees its own share only); the
    run then stops at ``blind_time`` [s]. Returns (world, plans, [tick_stats of each node],
    arrival time or None).
    """
    names = [f'robot{i + 1}' for i in range(n_robots)]
    starts, goals = circle_swap(n_robots, 2.0)
    overrides = {'drive': 'holonomic', 'radius': RADIUS, 'max_speed': 0.5,
                 'max_angular_speed': 2.0, 'lookahead_distance': 0.1}
    plans = fleet.plan_nodes('central', names, overrides=overrides, nodes=n_nodes)
    world = World(context, names, starts, ['holonomic'] * n_robots, [RADIUS] * n_robots)
    nodes = []
    rig = None
    try:
        for plan in plans:
            given = dict(plan.parameters[-1], use_sim_time=True, rate=RATE,
                         goal_tolerance=GOAL_TOLERANCE, publish_markers=False)
            if not observe:
                given.pop('observed_robots')
            nodes.append(OrcaNavNode(
                plan.name, context=context, namespace=plan.namespace,
                parameter_overrides=[Parameter(k, value=v) for k, v in given.items()]))
        # The nodes' own executor; the probe's clock is the world's time.
        rig = Probe(context, 'split_clock', start=world.t,
                    executor=nodes[0].settings.params.executor)
        for node in nodes + [world.node]:
            rig.executor.add_node(node)
        rows = [[names.index(r) for r in plan.robots] for plan in plans]
        n_seen = [len(node.settings.names) for node in nodes]
        rig.spin_until(lambda: all(p.get_subscription_count() >= 1 for p in world.goal_pubs)
                       and all(p.get_subscription_count() >= (n_nodes if observe else 1)
                               for p in world.odom_pubs)
                       and rig.clock.pub.get_subscription_count() >= n_nodes
                       and all(node.outputs.matched() and node.kernels.ready
                               for node in nodes))
        rig.clock.publish()
        rig.spin_until(lambda: all(node.get_clock().now().nanoseconds > 0
                                   and node.monitor.ticks > 0 for node in nodes))
        for i, pub in enumerate(world.goal_pubs):
            pub.publish(messages.make_goal(goals[i][0], goals[i][1], frame_id='map'))
        rig.spin_until(lambda: all(node.controller.has_goal.all() for node in nodes))
        arrival = None
        dt = 1.0 / RATE
        while world.t < max_time:
            for i, pub in enumerate(world.odom_pubs):
                pub.publish(world.odometry(i))
            # Every node holds the newest odometry of every robot it commands or observes.
            rig.spin_until(lambda: all(node.odometry.waiting(i) for node, n in
                                       zip(nodes, n_seen) for i in range(n)))
            ticks = [node.monitor.ticks for node in nodes]
            rig.clock.advance(dt)  # world.t + dt
            rig.spin_until(lambda: all(
                node.monitor.ticks > t and (world.cmd_count[r] == node.outputs.commands_published)
                .all() for node, t, r in zip(nodes, ticks, rows)))
            world.commands.append(world.cmd.copy())
            world.integrate(dt)
            if not observe and world.t >= blind_time:
                break
            at_goal = np.linalg.norm(world.pose[:, :2] - np.asarray(goals), axis=1)
            if (at_goal <= GOAL_TOLERANCE + 1e-6).all() and not world.cmd.any():
                arrival = world.t
                break
        return world, plans, [node.tick_stats() for node in nodes], arrival
    finally:
        for node in nodes + [world.node]:
            if rig is not None:
                rig.executor.remove_node(node)
            node.destroy_node()
        if rig is not None:
            rig.close()


def test_two_nodes_each_commanding_half_a_ring_swap_observing_the_other_half(context):
    """
    Eight robots through a common centre, four per node: all arrive, no two discs ever touch.

    The nodes are orca_nav_0 (robot1..4) and orca_nav_1 (robot5..8), each seeing all eight.
    """
    world, plans, stats, arrival = run_split(context, 8, 2)
    assert [(p.name, p.robots) for p in plans] == [
        ('orca_nav_0', ['robot1', 'robot2', 'robot3', 'robot4']),
        ('orca_nav_1', ['robot5', 'robot6', 'robot7', 'robot8'])]
    assert world.min_gap >= 0.0, f'robots overlapped by {-world.min_gap:.4f} m'
    assert arrival is not None, f'not all arrived: poses {world.pose.round(2).tolist()}'
    assert all(s['tick_errors'] == 0 and s['missed_periods'] == 0 for s in stats)
    # Every node took the odometry of the robots it observes, not only of its own.
    assert all(s['odom_received'] >= 8 * 10 for s in stats)


def test_four_nodes_of_two_robots_each(context):
    """The same ring swap split over four nodes (orca_nav_0..3): all arrive, no contact."""
    world, plans, stats, arrival = run_split(context, 8, 4)
    assert [p.name for p in plans] == ['orca_nav_0', 'orca_nav_1', 'orca_nav_2', 'orca_nav_3']
    assert world.min_gap >= 0.0, f'robots overlapped by {-world.min_gap:.4f} m'
    assert arrival is not None, f'not all arrived: poses {world.pose.round(2).tolist()}'
    assert all(s['tick_errors'] == 0 for s in stats)


def test_without_observing_the_halves_run_into_each_other(context):
    """Control: the same split with observed_robots left out: robots of the two halves touch."""
    world, plans, stats, _ = run_split(context, 8, 2, observe=False)
    # Measured: they overlap by 0.33 m within the 8 s (the observing runs keep 0.11 m apart).
    assert world.min_gap < -0.05, 'blind halves never ran into each other: the scene does ' \
                                  'not test observing'
    assert all(s['tick_errors'] == 0 for s in stats)


def _start(plan, folder):
    """Start a planned node as ``ros2 launch`` would: its name, namespace, then its params."""
    path = folder / f'{plan.name}.yaml'
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': plan.parameters[-1]}}))
    return Child(plan.name, [sys.executable, '-m', 'orca_nav.node', '--ros-args', '-r',
                             f'__node:={plan.name}', '-r', f'__ns:=/{plan.namespace}',
                             '--params-file', str(path)] + plan.arguments[1:],
                 child_env(DOMAIN_ID), folder)


@pytest.mark.slow
def test_split_nodes_as_processes_command_their_share_and_take_every_odometry(context, tmp_path):
    """
    nodes:=3 over six robots in /fleet: three processes /fleet/orca_nav_0..2.

    Over DDS: /fleet/robotK/cmd_vel has one publisher, the node planned for robot K; every
    robot's odometry has a subscriber in each node (its intake); each node publishes its own
    /fleet/orca_nav_k/tick_stats.
    """
    plans = fleet.plan_launch({'robots': 'robot1..robot6', 'nodes': '3', 'namespace': 'fleet'})
    names = [r for p in plans for r in p.robots]
    procs = [_start(p, tmp_path) for p in plans]
    rig = Probe(context, 'split_probe')
    probe = rig.probe
    stats = {}
    for p in plans:
        probe.create_subscription(
            String, f'/fleet/{p.name}/tick_stats',
            lambda m, name=p.name: stats.setdefault(name, json.loads(m.data)), 10)

    def graph():
        cmd = {r: sorted(i.node_name for i in probe.get_publishers_info_by_topic(
            f'/fleet/{r}/cmd_vel')) for r in names}
        odom = {r: sorted(i.node_name for i in probe.get_subscriptions_info_by_topic(
            f'/fleet/{r}/odom')) for r in names}
        return cmd, odom

    want_cmd = {r: [p.name] for p in plans for r in p.robots}
    want_odom = {r: [f'{p.name}_intake' for p in plans] for r in names}
    try:
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline and (graph() != (want_cmd, want_odom)
                                               or len(stats) < len(plans)):
            rig.spin_for(0.1)
            for proc in procs:
                assert proc.alive(), proc.tail()
        assert graph() == (want_cmd, want_odom)
        assert sorted(stats) == ['orca_nav_0', 'orca_nav_1', 'orca_nav_2']
        assert all(s['tick_errors'] == 0 for s in stats.values())
        assert not probe.get_publishers_info_by_topic('/fleet/orca_nav/tick_stats')
    finally:
        for proc in procs:
            proc.stop()
        rig.close()
