"""
orca_nav.launch.py included from a user's bringup, run through launch as ``ros2 launch`` does.

A bringup has arguments of its own (``world``, ``robot``), includes orca_nav.launch.py plainly
or in a GroupAction, and, as Nav2's does, puts it under PushROSNamespace('fleet') with
SetParameter(use_sim_time=True), with the usual params file (a bare ``orca_nav:`` section:
radius 0.3, max_speed 0.4). Each bringup runs through launch's LaunchService
(orca_nav.testing.launching, what ``ros2 launch`` does) and is checked over DDS from here: the
node's final name, its parameters, the topics it commands, a command once a robot has
odometry and a goal (on /clock under sim time). launch and launch_ros are not on PyPI: where
they are missing (this project's CI) the module is skipped; docs/node.md says how to get them.
"""

import os
from pathlib import Path
import re

from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from orca_nav.ros import messages
from orca_nav.testing.launching import Launch, launch_env, package_prefix, ROOT
import pytest
from rcl_interfaces.srv import GetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from helpers import SimClock, spin_for, spin_until  # noqa: I100 -- test/ is on sys.path

# launch_ros first: the repository's launch/ folder imports as a namespace package 'launch'.
pytest.importorskip('launch_ros')
pytest.importorskip('launch.actions')

DOMAIN_ID = 52
EXAMPLE = ROOT / 'launch' / 'examples' / 'fleet_bringup.launch.py'
PARAMS = ROOT / 'config' / 'examples' / 'bringup_params.yaml'
START_TIMEOUT = 120.0  # [s] a node's start (numba's cache is warm: a few seconds here)

# A user's bringup: arguments of its own, orca_nav.launch.py included with launch_arguments.
BRINGUP = """
import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch_ros.actions import SetParameter
try:
    from launch_ros.actions import PushROSNamespace
except ImportError:
    from launch_ros.actions import PushRosNamespace as PushROSNamespace


def generate_launch_description():
    share = get_package_share_directory('orca_nav')
    fleet = {fleet}
    actions = [PushROSNamespace('fleet'), SetParameter(name='use_sim_time', value=True)]
    actions = (actions if fleet else []) + [IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, 'launch', 'orca_nav.launch.py')),
        launch_arguments={arguments!r}.items())]
    return LaunchDescription([
        DeclareLaunchArgument('world', default_value='empty', description='the world'),
        DeclareLaunchArgument('robot', default_value='robot1', description='a robot'),
    ] + ([GroupAction(actions)] if {group} else actions))
"""


@pytest.fixture(scope='module')
def env(tmp_path_factory):
    """Return the launches' environment: this tree as orca_nav, DDS on loopback, our domain."""
    prefix = package_prefix(tmp_path_factory.mktemp('ament'))
    out = launch_env(os.environ, prefix)
    out.update(ROS_DOMAIN_ID=str(DOMAIN_ID), ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               ROS_LOG_DIR=str(tmp_path_factory.mktemp('roslog')))
    return out


@pytest.fixture
def launches(env, tmp_path):
    """Return a starter of launches of a file with arguments; each is stopped after the test."""
    started = []

    def start(path, *arguments):
        run = Launch(path, arguments, env, tmp_path / f'launch{len(started)}.log')
        started.append(run)
        return run
    yield start
    for run in started:
        run.stop()


@pytest.fixture
def probe(context):
    """Return a node and an executor of this test on the launches' domain."""
    node = Node('launch_probe', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    yield node, executor
    executor.remove_node(node)
    node.destroy_node()
    executor.shutdown()


def bringup(tmp_path, arguments, group=False, fleet=False):
    """Write a user's bringup file; return its path."""
    path = tmp_path / 'bringup.launch.py'
    path.write_text(BRINGUP.format(arguments=arguments, group=group, fleet=fleet))
    return path


def parameters(probe, node_name, names):
    """Return the values of ``names`` of node ``node_name`` (its get_parameters service)."""
    node, executor = probe
    client = node.create_client(GetParameters, f'{node_name}/get_parameters')
    spin_until(executor, client.service_is_ready, START_TIMEOUT, f'{node_name}/get_parameters')
    future = client.call_async(GetParameters.Request(names=list(names)))
    spin_until(executor, future.done, what='the parameters')
    node.destroy_client(client)
    return [v.double_value if v.type == 3 else v.bool_value if v.type == 1 else v.string_value
            for v in future.result().values]


def publisher_nodes(probe, topic):
    """Return the full names of the nodes that publish ``topic``."""
    return sorted('/'.join((i.node_namespace.rstrip('/'), i.node_name))
                  for i in probe[0].get_publishers_info_by_topic(topic))


def known(names):
    """Return ``names`` if discovery has named each node (not _NODE_NAME_UNKNOWN_), else []."""
    return names if names and not any('UNKNOWN' in n for n in names) else []


def subscriber_nodes(probe, topic):
    """Return the full names of the nodes that subscribe ``topic``."""
    return sorted('/'.join((i.node_namespace.rstrip('/'), i.node_name))
                  for i in probe[0].get_subscriptions_info_by_topic(topic))


def drive_one_robot(probe, ns, sim_time):
    """
    Give robot1 of the fleet in ``ns`` odometry and a goal; return its first moving command.

    With ``sim_time`` this probe publishes /clock, 0.1 s on at each round (the node commands
    nothing without it).
    """
    node, executor = probe
    odom = node.create_publisher(Odometry, f'{ns}/robot1/odom', 10)
    goal = node.create_publisher(type(messages.make_goal(0, 0)), f'{ns}/robot1/goal_pose', 10)
    commands = []
    node.create_subscription(Twist, f'{ns}/robot1/cmd_vel', commands.append, 10)
    clock = SimClock(node, start=100.0) if sim_time else None
    msg = Odometry()
    msg.pose.pose.orientation.w = 1.0
    deadline_rounds = 600  # 60 s of wall time at most

    def moving():
        return any(c.linear.x > 0.1 for c in commands)
    for k in range(deadline_rounds):
        odom.publish(msg)
        if k % 10 == 0:
            goal.publish(messages.make_goal(3.0, 0.0))
        if clock is not None:
            clock.advance(0.1)
        spin_for(executor, 0.1)
        if moving():
            return next(c for c in commands if c.linear.x > 0.1)
    raise AssertionError(f'no command on {ns}/robot1/cmd_vel ({len(commands)} messages)')


@pytest.mark.slow
@pytest.mark.parametrize('group', [False, True], ids=['include', 'group'])
@pytest.mark.parametrize('fleet', [False, True], ids=['root', 'fleet_sim_time'])
def test_a_bringup_with_its_own_arguments_includes_orca_nav(
        launches, probe, tmp_path, group, fleet):
    """
    world:= and robot:= are the bringup's: they were refused ("unknown launch arguments").

    Under PushROSNamespace('fleet') + SetParameter(use_sim_time=True) with a bare orca_nav:
    section, the node was /fleet/orca_nav with radius 0.2 and max_speed 0.5 (the section was
    dropped), commanded /robot1/cmd_vel at the root and ran on wall time while its intake
    node ran on sim time. The fleet-and-group case is the example file of docs/node.md.
    """
    if fleet and group:
        path = EXAMPLE
    else:
        path = bringup(tmp_path, {'params_file': str(PARAMS)}, group=group, fleet=fleet)
    run = launches(path, 'world:=warehouse', 'robot:=robot7')
    ns = '/fleet' if fleet else ''
    assert run.wait_for('controlling 2 robot(s)', START_TIMEOUT), run.output()
    radius, max_speed, sim_time = parameters(probe, f'{ns}/orca_nav',
                                             ['radius', 'max_speed', 'use_sim_time'])
    assert (radius, max_speed, sim_time) == (0.3, 0.4, fleet), run.output()
    for k in (1, 2):
        topic = f'{ns}/robot{k}/cmd_vel'
        spin_until(probe[1], lambda topic=topic: known(publisher_nodes(probe, topic)),
                   what=f'the publisher of {topic}')
        assert publisher_nodes(probe, f'{ns}/robot{k}/cmd_vel') == [f'{ns}/orca_nav']
    if fleet:  # one clock for the node and its intake: both take /clock
        spin_until(probe[1], lambda: len(known(subscriber_nodes(probe, '/clock'))) >= 2,
                   what='the subscribers of /clock')
        assert {f'{ns}/orca_nav', f'{ns}/orca_nav_intake'} <= set(
            subscriber_nodes(probe, '/clock')), subscriber_nodes(probe, '/clock')
        assert not publisher_nodes(probe, '/robot1/cmd_vel')
    command = drive_one_robot(probe, ns, fleet)
    assert 0.1 < command.linear.x <= 0.4 + 1e-6  # the file's max_speed
    assert run.stop() == 0, run.output()


def test_a_misspelt_argument_given_to_the_include_is_refused(launches, tmp_path):
    """The include's own launch_arguments are checked: robts:= is refused, world:= is not."""
    run = launches(bringup(tmp_path, {'robts': 'robot1'}), 'world:=warehouse')
    assert run.wait(60.0) == 1, run.output()
    assert "unknown launch arguments ['robts'] of orca_nav.launch.py (did you mean robots:=?)" \
        in run.output()


@pytest.mark.parametrize('robots', [{}, {'robots': 'robot1,robot2'}], ids=['file', 'argument'])
def test_a_params_file_that_reaches_no_node_is_refused(launches, tmp_path, robots):
    """
    A section orca_nav_node: reached no node: ROS 2 dropped it silently (robots:= given).

    Without robots:= the launch said the file had no robots list although it had one.
    The message names the file's sections and the nodes' final names (in /fleet).
    """
    params = tmp_path / 'params.yaml'
    params.write_text('orca_nav_node:\n  ros__parameters:\n    robots: [robot1, robot2]\n'
                      '    radius: 0.3\n')
    run = launches(bringup(tmp_path, dict(robots, params_file=str(params)), group=True,
                           fleet=True), 'world:=warehouse')
    assert run.wait(60.0) == 1, run.output()
    out = run.output()
    assert re.search(r"(no section reaches a node|section 'orca_nav_node'.* reaches no node) "
                     r"of this launch \(.*'orca_nav_node'.*the nodes: /fleet/orca_nav\)", out) \
        or re.search(r"section 'orca_nav_node'.* reaches no node of this launch \(the nodes: "
                     r'/fleet/orca_nav\)', out), out


def test_nodes_on_the_decentralised_file_names_the_file_it_is_for(launches):
    """nodes:=2 on orca_nav_decentralised.launch.py got the include hint instead."""
    run = launches(ROOT / 'launch' / 'orca_nav_decentralised.launch.py', 'robots:=r1,r2',
                   'nodes:=2')
    assert run.wait(60.0) == 1, run.output()
    assert ('nodes is an argument of orca_nav.launch.py, not of '
            'orca_nav_decentralised.launch.py') in run.output()


def test_the_example_bringup_is_documented():
    """docs/node.md has the section and points at the example files this module launches."""
    text = (ROOT / 'docs' / 'node.md').read_text()
    assert '## Including orca_nav in your bringup' in text
    assert str(EXAMPLE.relative_to(ROOT)) in text and str(PARAMS.relative_to(ROOT)) in text
    assert Path(EXAMPLE).is_file()
