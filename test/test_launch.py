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


def _expand(name, robots, **extra):
    ld = get_launch_description_from_python_launch_file(str(LAUNCH / name))
    context = LaunchContext()
    args = [e for e in ld.entities if isinstance(e, DeclareLaunchArgument)]
    assert args and all(a.description and a.description != 'no description given'
                        for a in args)
    values = {a.name: a.default_value for a in args}
    context.launch_configurations.update(
        {a.name: ''.join(s.perform(context) for s in (values[a.name] or [])) for a in args})
    context.launch_configurations.update({'robots': robots, 'params_file': str(CONFIG)})
    context.launch_configurations.update(extra)
    out = []
    for e in ld.entities:
        if isinstance(e, OpaqueFunction):
            out.extend(e.execute(context) or [])
    return out


def test_central_launch_starts_one_node():
    """orca_nav.launch.py: one orca_nav_node for the whole fleet."""
    actions = _expand('orca_nav.launch.py', 'robot1..robot3')
    assert len(actions) == 1 and isinstance(actions[0], Node)


def test_decentralised_layout_starts_one_group_per_robot():
    """layout:=decentralised: GroupAction([PushROSNamespace, Node]) per robot."""
    actions = _expand('orca_nav.launch.py', 'robot1..robot3', layout='decentralised')
    assert len(actions) == 3 and all(isinstance(a, GroupAction) for a in actions)


def test_decentralised_file_includes_the_main_one_with_its_layout():
    """orca_nav_decentralised.launch.py is orca_nav.launch.py with layout:=decentralised."""
    from launch.actions import IncludeLaunchDescription
    ld = get_launch_description_from_python_launch_file(
        str(LAUNCH / 'orca_nav_decentralised.launch.py'))
    (include,) = [e for e in ld.entities if isinstance(e, IncludeLaunchDescription)]

    def text(value):
        return value if isinstance(value, str) else ''.join(
            s.perform(LaunchContext()) for s in value)
    assert {text(k): text(v) for k, v in include.launch_arguments} == {
        'layout': 'decentralised'}
