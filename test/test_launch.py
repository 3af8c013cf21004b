"""
The launch files, where launch_ros is installed (skipped here: it is not on PyPI).

Loads each launch file, checks that every argument has a description, and evaluates the
OpaqueFunction for a robots list to check the nodes (and namespaces) it would start.
"""

from pathlib import Path

import pytest

launch_ros = pytest.importorskip('launch_ros')

from launch import LaunchContext  # noqa: E402, I100 -- only importable with launch_ros
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction  # noqa: E402
from launch.launch_description_sources import (  # noqa: E402
    get_launch_description_from_python_launch_file)
from launch_ros.actions import Node  # noqa: E402

LAUNCH = Path(__file__).resolve().parents[1] / 'launch'
CONFIG = Path(__file__).resolve().parents[1] / 'config' / 'orca_nav.yaml'


def _expand(name, robots):
    ld = get_launch_description_from_python_launch_file(str(LAUNCH / name))
    context = LaunchContext()
    args = [e for e in ld.entities if isinstance(e, DeclareLaunchArgument)]
    assert args and all(a.description and a.description != 'no description given'
                        for a in args)
    values = {a.name: a.default_value for a in args}
    context.launch_configurations.update(
        {a.name: ''.join(s.perform(context) for s in (values[a.name] or [])) for a in args})
    context.launch_configurations.update({'robots': robots, 'params_file': str(CONFIG)})
    out = []
    for e in ld.entities:
        if isinstance(e, OpaqueFunction):
            out.extend(e.execute(context) or [])
    return out


def test_central_launch_starts_one_node():
    """orca_nav.launch.py: one orca_nav_node for the whole fleet."""
    actions = _expand('orca_nav.launch.py', 'robot1..robot3')
    assert len(actions) == 1 and isinstance(actions[0], Node)


def test_decentralised_launch_starts_one_group_per_robot():
    """orca_nav_decentralised.launch.py: GroupAction([PushROSNamespace, Node]) per robot."""
    actions = _expand('orca_nav_decentralised.launch.py', 'robot1..robot3')
    assert len(actions) == 3 and all(isinstance(a, GroupAction) for a in actions)
