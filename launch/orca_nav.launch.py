"""
orca_nav for a fleet: one node for every robot (central) or one node per robot (decentralised).

    ros2 launch orca_nav orca_nav.launch.py robots:=robot1..robot8 use_sim_time:=true
    ros2 launch orca_nav orca_nav.launch.py robots:=robot1..robot4 layout:=decentralised

The robots list and params file are turned into node settings by orca_nav.ros.fleet.plan_nodes
(plain, tested Python); this file only declares the arguments and wires the answer into
launch_ros actions. orca_nav_decentralised.launch.py includes it with layout:=decentralised.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from orca_nav.ros.fleet import LAYOUTS, plan_nodes
try:
    from launch_ros.actions import PushROSNamespace
except ImportError:  # Humble and Iron spell it PushRosNamespace
    from launch_ros.actions import PushRosNamespace as PushROSNamespace


def _nodes(context):
    def arg(name):
        return LaunchConfiguration(name).perform(context)

    overrides = {'use_sim_time': arg('use_sim_time').lower() == 'true'}
    if arg('drive'):
        overrides['drive'] = arg('drive')
    layout = arg('layout')
    plans = plan_nodes(layout, arg('robots'), params_file=arg('params_file') or None,
                       namespace=arg('namespace') if layout == 'central' else '',
                       overrides=overrides)
    log = ['--ros-args', '--log-level', arg('log_level')]
    if layout == 'central':
        return [Node(package='orca_nav', executable='orca_nav_node', name=p.name,
                     namespace=p.namespace, output='screen', parameters=p.parameters,
                     arguments=log) for p in plans]
    return [GroupAction([
        PushROSNamespace(p.namespace),
        Node(package='orca_nav', executable='orca_nav_node', name=p.name, output='screen',
             parameters=p.parameters, arguments=log),
    ]) for p in plans]


def generate_launch_description():
    """Declare the arguments; the nodes are built once their values are known."""
    default_params = os.path.join(get_package_share_directory('orca_nav'), 'config',
                                  'orca_nav.yaml')
    return LaunchDescription([
        DeclareLaunchArgument('robots', default_value='',
                              description='Robots to command: robot1,robot2 or robot1..robot8; '
                                          'empty = the robots list of the params file'),
        DeclareLaunchArgument('layout', default_value='central', choices=list(LAYOUTS),
                              description='central: one node commands every robot; '
                                          'decentralised: one node per robot in its namespace '
                                          '(/<robot>/orca_nav), watching the others'),
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='orca_nav parameters (YAML under /**: '
                                          'ros__parameters, so that they reach every node)'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='Central layout: namespace of the node (robot topics '
                                          'stay /<robot>/...)'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='Use the /clock topic (Gazebo) instead of wall time'),
        DeclareLaunchArgument('drive', default_value='',
                              description='holonomic or differential for every robot; '
                                          'empty = as in the params file'),
        DeclareLaunchArgument('log_level', default_value='info',
                              description='Log level of the node(s) (debug, info, warn, error)'),
        OpaqueFunction(function=_nodes),
    ])
