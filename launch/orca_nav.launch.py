"""
orca_nav, central layout: one node commands every robot.

    ros2 launch orca_nav orca_nav.launch.py robots:=robot1..robot8 use_sim_time:=true

The robots list and params file are turned into node settings by orca_nav.fleet.plan_nodes
(plain, tested Python); this file only wires them into a launch_ros Node.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from orca_nav.ros.fleet import plan_nodes


def _nodes(context):
    def arg(name):
        return LaunchConfiguration(name).perform(context)

    overrides = {'use_sim_time': arg('use_sim_time').lower() == 'true'}
    if arg('drive'):
        overrides['drive'] = arg('drive')
    plans = plan_nodes('central', arg('robots'), params_file=arg('params_file') or None,
                       namespace=arg('namespace'), overrides=overrides)
    return [Node(package='orca_nav', executable='orca_nav_node', name=p.name,
                 namespace=p.namespace, output='screen', parameters=p.parameters,
                 arguments=['--ros-args', '--log-level', arg('log_level')])
            for p in plans]


def generate_launch_description():
    """Declare the arguments; the node is built once their values are known."""
    default_params = os.path.join(get_package_share_directory('orca_nav'), 'config',
                                  'orca_nav.yaml')
    return LaunchDescription([
        DeclareLaunchArgument('robots', default_value='',
                              description='Robots to command: robot1,robot2 or robot1..robot8; '
                                          'empty = the robots list of the params file'),
        DeclareLaunchArgument('params_file', default_value=default_params,
                              description='orca_nav parameters (YAML under /**: ros__parameters)'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='Namespace of the node (robot topics stay '
                                          '/<robot>/...)'),
        DeclareLaunchArgument('use_sim_time', default_value='false',
                              description='Use the /clock topic (Gazebo) instead of wall time'),
        DeclareLaunchArgument('drive', default_value='',
                              description='holonomic or differential for every robot; '
                                          'empty = as in the params file'),
        DeclareLaunchArgument('log_level', default_value='info',
                              description='Log level of the node (debug, info, warn, error)'),
        OpaqueFunction(function=_nodes),
    ])
