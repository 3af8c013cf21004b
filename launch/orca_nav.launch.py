"""
orca_nav for a fleet: one node for every robot (central) or one node per robot (decentralised).

    ros2 launch orca_nav orca_nav.launch.py robots:=robot1..robot8 use_sim_time:=true
    ros2 launch orca_nav orca_nav.launch.py robots:=robot1..robot4 layout:=decentralised
    # a large fleet split over 4 nodes, orca_nav_0..orca_nav_3, each commanding a quarter of
    # the robots and observing the others (docs/scaling.md):
    ros2 launch orca_nav orca_nav.launch.py robots:=r0001..r1000 nodes:=4
    # one computer per robot, one params file listing the fleet (robots: [robot1, ...]):
    ros2 launch orca_nav orca_nav.launch.py layout:=decentralised local_robots:=robot3 \
        params_file:=fleet.yaml

The arguments (orca_nav.ros.launch_args.LAUNCH_ARGUMENTS) are turned into node settings by
orca_nav.ros.fleet.plan_launch (plain, tested Python), which refuses with the reason whatever
the nodes would refuse, and any argument name given to this file that it does not know
(robts:=, drve:=); this file only declares the arguments and wires the answer into launch_ros
actions. orca_nav_decentralised.launch.py uses its launch_description with the decentralised
layout.

Included from your own bringup (docs/node.md, "Including orca_nav in your bringup"), with
IncludeLaunchDescription(..., launch_arguments=...), in a GroupAction or not: only the
launch_arguments given to this file are checked (your file's own arguments are yours); a
PushROSNamespace around it puts the fleet in that namespace (the nodes, the robots' topics,
the params file's bare ``orca_nav:`` section), and a SetParameter(use_sim_time=True) reaches
the nodes unless use_sim_time:= is given.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction
from launch_ros.actions import Node
from orca_nav.ros.fleet import LAYOUTS, node_failure, plan_launch
from orca_nav.ros.launch_args import launch_arguments
from orca_nav.ros.launch_include import given_arguments
try:
    from launch_ros.actions import PushROSNamespace
except ImportError:  # Humble and Iron spell it PushRosNamespace
    from launch_ros.actions import PushRosNamespace as PushROSNamespace


def on_node_exit(event, context):
    """Fail the launch (exit code 1) when a node exits with an error by itself."""
    failure = node_failure(event.process_name, event.returncode,
                           getattr(context, 'is_shutdown', False))
    if failure:
        raise RuntimeError(failure)  # launch shuts everything down and exits with 1


def _default_params_file():
    return os.path.join(get_package_share_directory('orca_nav'), 'config', 'orca_nav.yaml')


def _nodes(context, layout=None, launch_file='orca_nav.launch.py', given=None):
    # The names given to this file (all configurations when it is not included): a misspelt
    # argument name is refused (with the nearest one), not ignored with its default used.
    args = dict(context.launch_configurations)
    # FleetError: the launch fails with the reason, before anything starts.
    plans = plan_launch(args, default_params_file=_default_params_file(), layout=layout,
                        launch_file=launch_file, given=given,
                        base_namespace=args.get('ros_namespace') or '')
    if (layout or args.get('layout', 'central')) == 'central':
        return [Node(package='orca_nav', executable='orca_nav_node', name=p.name,
                     namespace=p.namespace or None, output='screen', parameters=p.parameters,
                     arguments=p.arguments, on_exit=on_node_exit) for p in plans]
    return [GroupAction([
        PushROSNamespace(p.namespace),
        Node(package='orca_nav', executable='orca_nav_node', name=p.name, output='screen',
             parameters=p.parameters, arguments=p.arguments, on_exit=on_node_exit),
    ]) for p in plans]


def launch_description(layout=None, launch_file='orca_nav.launch.py'):
    """
    Declare the arguments (of ``layout``'s file; None: every layout); nodes follow their values.

    orca_nav_decentralised.launch.py calls this with layout='decentralised': it declares no
    ``layout`` argument and refuses ``layout:=central``.
    """
    default_params = _default_params_file()
    declared = []
    for name, default, description in launch_arguments(layout):
        extra = {'choices': list(LAYOUTS)} if name == 'layout' else {}
        declared.append(DeclareLaunchArgument(
            name, default_value=default_params if default is None else default,
            description=description, **extra))
    return LaunchDescription(declared + [OpaqueFunction(
        function=_nodes, kwargs={'layout': layout, 'launch_file': launch_file,
                                 'given': given_arguments()})])


def generate_launch_description():
    """Declare the arguments; the nodes are built once their values are known."""
    return launch_description()
