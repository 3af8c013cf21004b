"""
Simulator + orca_nav node + goals, for users with a ROS 2 installation.

    ros2 launch orca_nav sim_demo.launch.py scenario:=blocks robots:=8 drive:=differential

Starts the fleet simulator (orca_nav_sim), the orca_nav node, and ``orca_nav_demo --attach``,
which sends every robot its goal, prints progress and the metrics table and writes the PNG;
the launch ends when the demo has reported, and fails (exit code 1) when the demo failed
(a collision, a robot that did not arrive, an error).
The per-node settings come from orca_nav.sim.processes.launch_plan and the checks from
orca_nav.sim.demo_launch and orca_nav.ros.launch_args (plain, tested Python); this file only
wires them into launch actions.
Without ROS installed, ``python -m orca_nav.demo`` does the same.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, Shutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from orca_nav.ros.launch_args import check_launch_arguments, DEFAULT, NONE, optional, parse_number
from orca_nav.ros.launch_include import given_arguments
from orca_nav.sim.demo_launch import (check_scenario_robots, demo_failure, parse_robot_count,
                                      plan_sim_node, private_path)
from orca_nav.sim.processes import GOAL_TOLERANCE, launch_plan, SAFETY_MARGIN


def on_demo_exit(event, context):
    """Stop everything once the demo has reported; fail the launch if the demo failed."""
    # Ctrl-C (the demo exits 130) or the launch shutting down is no failure.
    failure = demo_failure(event.returncode, getattr(context, 'is_shutdown', False))
    if failure:
        raise RuntimeError(failure)  # launch shuts everything down and exits with 1
    return Shutdown(reason='orca_nav_demo has reported')


def _nodes(context, known, given=None):
    # Every name:=value given to this file (all configurations when it is not included),
    # declared or not: refuse a misspelt name (drve:=); an including file's are its own.
    check_launch_arguments(context.launch_configurations if given is None else given, known,
                           'sim_demo.launch.py')

    def arg(name):
        return LaunchConfiguration(name).perform(context)

    count, names = parse_robot_count(arg('robots'))
    drive = optional(arg('drive'))
    params_file = optional(arg('params_file'))
    plan = launch_plan(arg('scenario'), robots=count, drive=drive,
                       goal_tolerance=parse_number('goal_tolerance', arg('goal_tolerance')),
                       safety_margin=parse_number('safety_margin', arg('safety_margin')),
                       ground_truth=private_path('ground_truth.npz'))
    check_scenario_robots(names, plan['node']['robots'])
    node_parameters = plan_sim_node(None if params_file == NONE else params_file, plan['node'])
    demo_args = plan['demo_args'] + ['--out', arg('out')]
    return [
        Node(package='orca_nav', executable='orca_nav_sim', name='orca_nav_sim',
             output='screen', parameters=[plan['sim']]),
        Node(package='orca_nav', executable='orca_nav_node', output='screen',
             parameters=node_parameters),
        # The run is over when the demo has reported: then stop everything.
        Node(package='orca_nav', executable='orca_nav_demo', name='orca_nav_demo',
             output='screen', arguments=demo_args, on_exit=on_demo_exit),
    ]


def generate_launch_description():
    """Declare the arguments; the nodes are built once their values are known."""
    declared = [
        DeclareLaunchArgument('scenario', default_value='circle',
                              description='Scenario name (a file of config/scenarios: circle, '
                                          'blocks, warehouse, office, ...) or path to a '
                                          'scenario YAML file'),
        DeclareLaunchArgument('robots', default_value=DEFAULT,
                              description="Robots to run: a count (8: the scenario's first 8) "
                                          'or their names as in orca_nav.launch.py (the '
                                          "scenario's first ones, e.g. robot0..robot3); "
                                          'default = as in the scenario'),
        DeclareLaunchArgument('drive', default_value=DEFAULT,
                              description='holonomic or differential for every robot; '
                                          'default = as in the scenario file'),
        DeclareLaunchArgument('goal_tolerance', default_value=str(GOAL_TOLERANCE),
                              description='A robot this close to its goal has arrived [m]'),
        DeclareLaunchArgument('safety_margin', default_value=str(SAFETY_MARGIN),
                              description='The node plans with every robot radius grown by '
                                          'this much [m] (latency, odometry lag)'),
        DeclareLaunchArgument('params_file', default_value=NONE,
                              description='Extra parameter file for the orca_nav node '
                                          '(e.g. config/orca_nav.yaml); the scenario sets the '
                                          'robots, their models and zero odom_offsets; '
                                          'none = no file'),
        DeclareLaunchArgument('out', default_value='out/sim_demo.png',
                              description='Where orca_nav_demo writes the trajectory PNG'),
    ]
    known = [a.name for a in declared]
    return LaunchDescription(declared + [OpaqueFunction(
        function=_nodes, kwargs={'known': known, 'given': given_arguments()})])
