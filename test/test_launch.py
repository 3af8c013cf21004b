"""
The launch files, where launch_ros is installed (skipped here: it is not on PyPI).

Loads each launch file, checks that every argument has a description, evaluates the
OpaqueFunction for given arguments and checks the nodes it starts and the parameters they
would receive (the params file, then the launch's dict), and that what a node would refuse
fails the launch before anything starts. The logic itself is
orca_nav.ros.fleet's, tested without launch in test_fleet.py.
"""

from pathlib import Path

import pytest

launch_ros = pytest.importorskip('launch_ros')

from launch import LaunchContext  # noqa: E402, I100 -- only importable with launch_ros
from launch.actions import DeclareLaunchArgument, GroupAction, OpaqueFunction  # noqa: E402
from launch.launch_description_sources import (  # noqa: E402
    get_launch_description_from_python_launch_file)
from launch_ros.actions import Node  # noqa: E402
from orca_nav.ros import fleet  # noqa: E402
from orca_nav.ros import params as P  # noqa: E402

LAUNCH = Path(__file__).resolve().parents[1] / 'launch'
CONFIG = Path(__file__).resolve().parents[1] / 'config' / 'orca_nav.yaml'
EXAMPLE = Path(__file__).resolve().parents[1] / 'config' / 'examples' / 'mixed_fleet.yaml'


class RecordingNode(Node):
    """launch_ros's Node that keeps the name it was given (its constructor's public name=)."""

    def __init__(self, **kwargs):
        """Build the Node; keep ``name``."""
        super().__init__(**kwargs)
        self.given_name = kwargs.get('name')


@pytest.fixture
def recording(monkeypatch):
    """Launch files loaded during the test build RecordingNode actions."""
    monkeypatch.setattr(launch_ros.actions, 'Node', RecordingNode)


def _expand(name, **given):
    """Evaluate a launch file's OpaqueFunction with its defaults and ``given``."""
    ld = get_launch_description_from_python_launch_file(str(LAUNCH / name))
    context = LaunchContext()
    args = [e for e in ld.entities if isinstance(e, DeclareLaunchArgument)]
    assert args and all(a.description and a.description != 'no description given'
                        for a in args)
    values = {a.name: a.default_value for a in args}
    context.launch_configurations.update(
        {a.name: ''.join(s.perform(context) for s in (values[a.name] or [])) for a in args})
    assert all(context.launch_configurations[a.name] != '' for a in args), \
        'ros2 launch cannot set an empty value: no argument may default to one'
    context.launch_configurations.update({'params_file': str(CONFIG)})
    context.launch_configurations.update(given)
    out = []
    for e in ld.entities:
        if isinstance(e, OpaqueFunction):
            out.extend(e.execute(context) or [])
    return out


def test_central_launch_gives_the_node_its_robots_and_nothing_else():
    """orca_nav.launch.py: one node, the robots as given (zero padding kept), fleet values."""
    actions = _expand('orca_nav.launch.py', robots='robot01..robot03', use_sim_time='1')
    assert len(actions) == 1 and isinstance(actions[0], Node)
    plans = fleet.plan_launch({'robots': 'robot01..robot03', 'use_sim_time': '1',
                               'params_file': str(CONFIG)})
    assert plans[0].parameters[-1] == {'use_sim_time': True,
                                       'robots': ['robot01', 'robot02', 'robot03']}
    settings = P.resolve(fleet.check_node_parameters(
        dict(fleet.read_params_file(CONFIG), **plans[0].parameters[-1])))
    assert settings.names == ('robot01', 'robot02', 'robot03')
    assert not settings.fleet.differential.any() and not settings.fleet.odom_offset.any()


def test_decentralised_layout_starts_one_group_per_robot():
    """layout:=decentralised: GroupAction([PushROSNamespace, Node]) per robot."""
    actions = _expand('orca_nav.launch.py', robots='robot1..robot3', layout='decentralised')
    assert len(actions) == 3 and all(isinstance(a, GroupAction) for a in actions)
    actions = _expand('orca_nav.launch.py', robots='robot1..robot3', layout='decentralised',
                      local_robots='robot2')
    assert len(actions) == 1


def test_nodes_argument_starts_one_named_node_per_share(recording):
    """nodes:=3: three Node actions named orca_nav_0..2, local_nodes:=1 only the second."""
    actions = _expand('orca_nav.launch.py', robots='robot1..robot7', nodes='3')
    assert len(actions) == 3 and all(isinstance(a, Node) for a in actions)
    assert [a.given_name for a in actions] == ['orca_nav_0', 'orca_nav_1', 'orca_nav_2']
    (action,) = _expand('orca_nav.launch.py', robots='robot1..robot7', nodes='3',
                        local_nodes='1')
    assert action.given_name == 'orca_nav_1'
    with pytest.raises(fleet.FleetError, match='more nodes than robots'):
        _expand('orca_nav.launch.py', robots='robot1..robot2', nodes='3')


@pytest.mark.parametrize('given, message', [
    ({'use_sim_time': 'maybe'}, 'use_sim_time must be true or false'),
    ({'robots': 'robot1', 'drive': 'tank'}, 'drive must be one of'),
    ({'robots': 'robot1', 'namespace': '/9'}, 'namespace must be'),
])
def test_what_a_node_would_refuse_fails_the_launch(given, message):
    """A FleetError from the OpaqueFunction: ros2 launch reports it and exits 1."""
    with pytest.raises(fleet.FleetError, match=message):
        _expand('orca_nav.launch.py', **given)


def test_drive_argument_reaches_every_robot_of_a_file_with_overrides():
    """drive:=holonomic beats the example file's robot2 differential."""
    assert len(_expand('orca_nav.launch.py', params_file=str(EXAMPLE), drive='holonomic')) == 1
    plans = fleet.plan_launch({'params_file': str(EXAMPLE), 'drive': 'holonomic'})
    assert plans[0].parameters[-1]['robot2.drive'] == ''


def test_decentralised_file_declares_no_layout_and_refuses_central():
    """--show-args of orca_nav_decentralised.launch.py lists no layout; layout:=central fails."""
    ld = get_launch_description_from_python_launch_file(
        str(LAUNCH / 'orca_nav_decentralised.launch.py'))
    names = [a.name for a in ld.get_launch_arguments()]
    assert names == [name for name, _, _ in fleet.launch_arguments('decentralised')]
    assert 'layout' not in names and 'robots' in names
    actions = _expand('orca_nav_decentralised.launch.py', robots='robot1..robot3')
    assert len(actions) == 3 and all(isinstance(a, GroupAction) for a in actions)
    with pytest.raises(fleet.FleetError, match='layout:=central is for orca_nav.launch.py'):
        _expand('orca_nav_decentralised.launch.py', robots='robot1..robot3', layout='central')


@pytest.mark.parametrize('launch_file, given, hint', [
    ('orca_nav.launch.py', {'robts': 'robot1,robot2'}, 'robots'),
    ('orca_nav.launch.py', {'use_sim_tme': 'true'}, 'use_sim_time'),
    ('sim_demo.launch.py', {'drve': 'differential'}, 'drive'),
])
def test_a_misspelt_argument_name_fails_the_launch(launch_file, given, hint):
    """Every given name:=value reaches the check, not only the declared ones."""
    with pytest.raises(fleet.FleetError, match=f'did you mean {hint}:='):
        _expand(launch_file, **given)


def test_sim_demo_refuses_bad_arguments_and_fails_with_the_demo():
    """sim_demo.launch.py: robots:=abc and bad numbers are refused with the reason."""
    for given, message in (({'robots': 'abc'}, "not the scenario's robots"),
                           ({'goal_tolerance': 'x'}, 'goal_tolerance must be a number'),
                           ({'safety_margin': '-1.0'}, 'safety_margin must be between')):
        with pytest.raises(fleet.FleetError, match=message):
            _expand('sim_demo.launch.py', params_file='none', **given)
    actions = _expand('sim_demo.launch.py', params_file=str(CONFIG), robots='4')
    assert len(actions) == 3
