"""
orca_nav, decentralised layout: one node per robot, in the robot's namespace.

    ros2 launch orca_nav orca_nav_decentralised.launch.py robots:=robot1..robot4

Node /<r>/orca_nav commands robot r and watches the other robots' odometry (observed_robots),
as when every robot runs its own node on its own computer and shares odometry over DDS. On a
real fleet start one node per computer with robots:=<that robot> and the same params file, or
use this file with the robots list of the whole fleet for a single-machine test. The settings
come from orca_nav.fleet.plan_nodes (plain, tested Python).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from orca_nav.ros.fleet import plan_nodes
try:
    from launch_ros.actions import PushROSNamespace
except ImportError:  # Humble and Iron spell it PushRosNamespace
    from launch_ros.actions import PushRosNamespace as PushROSNamespace


def _groups(context):
    def arg(name):
        return LaunchConfiguration(name).perform(context)

    overrides = {'use_sim_time': arg('use_sim_time').lower() == 'true'}
    if arg('drive'):
        overrides['drive'] = arg('drive')
    plans = plan_nodes('decentralised', arg('robots'), params_file=arg('params_file') or None,
                       overrides=overrides)
    return [GroupAction([
        PushROSNamespace(p.namespace),
        Node(package='orca_nav', executable='orca_nav_node', name=p.name, output='screen',
             parameters=p.parameters,
             arguments=['--ros-args', '--log-level', arg('log_level')]),
    ]) for p in plans]


def generate_launch_description():
    """Declare the arguments; one group per robot is built once their values are known."""
    default_params = os.path.join(get_package_share_directory('orca_nav'), 'config',
                                  'orca_nav.yaml')
    return LaunchDescription([
        DeclareLaunchArgument('robots', default_value='',
                              description='The whole fleet: robot1,robot2 or robot1..robot8; one '
                                          'node per robot; empty = the robots of the params file'),
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='orca_nav parameters for every node (YAML under /**: '
                                          'so that they reach /<robot>/orca_nav)'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='Use the /clock topic (Gazebo) instead of wall time'),
        DeclareLaunchArgument('drive', default_value='',
                              description='holonomic or differential for every robot; '
                                          'empty = as in the params file'),
        DeclareLaunchArgument('log_level', default_value='info',
                              description='Log level of the nodes (debug, info, warn, error)'),
        OpaqueFunction(function=_groups),
    ])
