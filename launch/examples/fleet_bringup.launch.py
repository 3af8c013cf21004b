"""
An EXAMPLE robot bringup that includes orca_nav.launch.py, as Nav2 users write theirs.

    ros2 launch orca_nav fleet_bringup.launch.py world:=warehouse robot:=robot1

It has arguments of its own (``world``, ``robot``; orca_nav.launch.py checks only those given
to it), puts everything it starts in the namespace ``fleet`` (PushROSNamespace) and on the
simulation's clock (SetParameter use_sim_time), and includes orca_nav.launch.py with the
params file config/examples/bringup_params.yaml (a bare ``orca_nav:`` section). The node is
then /fleet/orca_nav, commands /fleet/robot1/cmd_vel and /fleet/robot2/cmd_vel, ticks on
/clock, with the file's radius 0.3 and max_speed 0.4. See docs/node.md, "Including orca_nav
in your bringup". Copy it into your own package and put your simulator, map server, ... next to
the include.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription, LogInfo
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import SetParameter
try:
    from launch_ros.actions import PushROSNamespace
except ImportError:  # Humble and Iron spell it PushRosNamespace
    from launch_ros.actions import PushRosNamespace as PushROSNamespace


def generate_launch_description():
    """Declare this bringup's own arguments; include orca_nav in the fleet's namespace."""
    share = get_package_share_directory('orca_nav')
    return LaunchDescription([
        DeclareLaunchArgument('world', default_value='warehouse',
                              description='The simulated world (your simulator takes it)'),
        DeclareLaunchArgument('robot', default_value='robot1',
                              description='A robot to follow in RViz (your RViz takes it)'),
        LogInfo(msg=['bringup of world ', LaunchConfiguration('world')]),
        GroupAction([
            PushROSNamespace('fleet'),
            SetParameter(name='use_sim_time', value=True),
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(
                    os.path.join(share, 'launch', 'orca_nav.launch.py')),
                launch_arguments={
                    'params_file': os.path.join(share, 'config', 'examples',
                                                'bringup_params.yaml'),
                }.items()),
        ]),
    ])
