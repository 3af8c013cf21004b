"""
orca_nav, decentralised layout: one node per robot, in the robot's namespace.

    ros2 launch orca_nav orca_nav_decentralised.launch.py robots:=robot1..robot4
    # on robot 3's own computer, with a params file whose robots list the whole fleet:
    ros2 launch orca_nav orca_nav_decentralised.launch.py local_robots:=robot3 \
        params_file:=fleet.yaml

Node /<r>/orca_nav commands robot r and watches the other robots' odometry (observed_robots),
as when every robot runs its own node on its own computer and shares odometry over DDS. This is
orca_nav.launch.py with layout:=decentralised; every argument of that file applies here.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource


def generate_launch_description():
    """Include orca_nav.launch.py with layout:=decentralised."""
    central = os.path.join(get_package_share_directory('orca_nav'), 'launch',
                           'orca_nav.launch.py')
    return LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(central),
                                 launch_arguments={'layout': 'decentralised'}.items()),
    ])
