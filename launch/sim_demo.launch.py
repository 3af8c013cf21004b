"""
Simulator + orca_nav node + goals, for users with a ROS 2 installation.

    ros2 launch orca_nav sim_demo.launch.py scenario:=blocks robots:=8 drive:=differential

Starts the fleet simulator (orca_nav_sim), the orca_nav node, and ``orca_nav_demo --attach``,
which sends every robot its goal, prints progress and the metrics table and writes the PNG;
the launch ends when the demo has reported.
The per-node settings come from orca_nav.sim.processes.launch_plan (plain, tested Python); this
file only wires them into launch actions. Without ROS installed, ``python -m orca_nav.demo`` does
the same.
"""

import os
import tempfile

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from orca_nav.sim.processes import GOAL_TOLERANCE, launch_plan, SAFETY_MARGIN


def _nodes(context):
    def arg(name):
        return LaunchConfiguration(name).perform(context)

    robots = int(arg('robots')) if arg('robots') else None
    ground_truth = os.path.join(tempfile.gettempdir(), 'orca_nav_sim_ground_truth.npz')
    plan = launch_plan(arg('scenario'), robots=robots, drive=arg('drive') or None,
                       goal_tolerance=float(arg('goal_tolerance')),
                       safety_margin=float(arg('safety_margin')), ground_truth=ground_truth)
    node_parameters = [plan['node']]
    if arg('params_file'):
        node_parameters.insert(0, arg('params_file'))
    demo_args = plan['demo_args'] + ['--out', arg('out')]
    return [
        Node(package='orca_nav', executable='orca_nav_sim', name='orca_nav_sim',
             output='screen', parameters=[plan['sim']]),
        Node(package='orca_nav', executable='orca_nav_node', output='screen',
             parameters=node_parameters),
        # The run is over when the demo has reported: then stop everything.
        Node(package='orca_nav', executable='orca_nav_demo', name='orca_nav_demo',
             output='screen', arguments=demo_args, on_exit=Shutdown()),
    ]


def generate_launch_description():
    """Declare the arguments; the nodes are built once their values are known."""
    return LaunchDescription([
        DeclareLaunchArgument('scenario', default_value='circle',
                              description='Scenario name (a file of config/scenarios: circle, '
                                          'blocks, warehouse, office, ...) or path to a '
                                          'scenario YAML file'),
        DeclareLaunchArgument('robots', default_value='',
                              description='Robot count; empty = as in the scenario file'),
        DeclareLaunchArgument('drive', default_value='',
                              description='holonomic or differential for every robot; '
                                          'empty = as in the scenario file'),
        DeclareLaunchArgument('goal_tolerance', default_value=str(GOAL_TOLERANCE),
                              description='A robot this close to its goal has arrived [m]'),
        DeclareLaunchArgument('safety_margin', default_value=str(SAFETY_MARGIN),
                              description='The node plans with every robot radius grown by '
                                          'this much [m] (latency, odometry lag)'),
        DeclareLaunchArgument('params_file', default_value='',
                              description='Extra parameter file for the orca_nav node '
                                          '(e.g. config/orca_nav.yaml); the robots come from '
                                          'the scenario'),
        DeclareLaunchArgument('out', default_value='out/sim_demo.png',
                              description='Where orca_nav_demo writes the trajectory PNG'),
        OpaqueFunction(function=_nodes),
    ])
