"""
orca_nav, decentralised layout: one node per robot, in the robot's namespace.

    ros2 launch orca_nav orca_nav_decentralised.launch.py robots:=robot1..robot4
    # on robot 3's own computer, with a params file whose robots list the whole fleet:
    ros2 launch orca_nav orca_nav_decentralised.launch.py local_robots:=robot3 \
        params_file:=fleet.yaml

Node /<r>/orca_nav commands robot r and watches the other robots' odometry (observed_robots),
as when every robot runs its own node on its own computer and shares odometry over DDS. This is
orca_nav.launch.py with its layout fixed to decentralised: every argument of that file applies
here except layout (layout:=central is refused) and the central layout's nodes and local_nodes.
"""

import importlib.util
import os


def _central_launch_file():
    """orca_nav.launch.py, loaded from this file's folder (the installed share/launch)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'orca_nav.launch.py')
    spec = importlib.util.spec_from_file_location('orca_nav_launch', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate_launch_description():
    """orca_nav.launch.py's arguments without layout, with the decentralised layout fixed."""
    return _central_launch_file().launch_description(
        layout='decentralised', launch_file='orca_nav_decentralised.launch.py')
