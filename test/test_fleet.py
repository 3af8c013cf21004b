"""Tests of orca_nav.fleet (what the launch files call) and of config/orca_nav.yaml."""

import os
from pathlib import Path

from orca_nav.ros import fleet
from orca_nav.ros import params as P
from orca_nav.ros.node import OrcaNavNode
import pytest
import rclpy
from rclpy.context import Context

CONFIG = Path(__file__).resolve().parents[1] / 'config' / 'orca_nav.yaml'
DOMAIN_ID = 25


def test_parse_robots_forms():
    """Comma, space, bracket and range forms give the same names."""
    assert fleet.parse_robots('robot1,robot2') == ['robot1', 'robot2']
    assert fleet.parse_robots('[robot1, robot2]') == ['robot1', 'robot2']
    assert fleet.parse_robots('robot1 robot2') == ['robot1', 'robot2']
    assert fleet.parse_robots('robot1..robot3,tb3_0') == ['robot1', 'robot2', 'robot3', 'tb3_0']
    assert fleet.parse_robots(['a', 'b']) == ['a', 'b']
    assert fleet.parse_robots('') == []


@pytest.mark.parametrize('text, message', [
    ('robot1,robot1', 'repeated'), ('robot3..robot1', 'must look like'),
    ('robot1..tb2', 'must look like'), ('9lives', 'not a valid ROS name'),
])
def test_parse_robots_errors(text, message):
    """Bad robot lists fail with a reason."""
    with pytest.raises(fleet.FleetError, match=message):
        fleet.parse_robots(text)


def test_central_layout_is_one_node_for_all():
    """Central: one node, every robot commanded, nothing observed."""
    plans = fleet.plan_nodes('central', 'robot1..robot4', overrides={'drive': 'differential'})
    assert len(plans) == 1
    p = plans[0]
    assert (p.name, p.namespace, p.robots, p.observed_robots) == (
        'orca_nav', '', ['robot1', 'robot2', 'robot3', 'robot4'], [])
    assert p.parameters == [{'drive': 'differential',
                             'robots': ['robot1', 'robot2', 'robot3', 'robot4']}]


def test_decentralised_layout_is_one_node_per_robot_observing_the_others():
    """Decentralised: node /<r>/orca_nav commands r and observes every other robot."""
    plans = fleet.plan_nodes('decentralised', 'a,b,c', params_file=str(CONFIG))
    assert [(p.namespace, p.robots, p.observed_robots) for p in plans] == [
        ('a', ['a'], ['b', 'c']), ('b', ['b'], ['a', 'c']), ('c', ['c'], ['a', 'b'])]
    assert plans[0].parameters == [str(CONFIG), {'robots': ['a'], 'observed_robots': ['b', 'c'],
                                                 'observed_reciprocate': True}]


def test_robots_default_to_the_params_file():
    """Without a robots argument the params file's list is used."""
    plans = fleet.plan_nodes('decentralised', '', params_file=str(CONFIG))
    assert [p.namespace for p in plans] == ['robot1', 'robot2', 'robot3', 'robot4']


def test_plan_refuses_bad_settings_before_anything_starts(tmp_path):
    """No robots, a bad value or a misspelt parameter are reported with a reason."""
    with pytest.raises(fleet.FleetError, match='no robots'):
        fleet.plan_nodes('central', '')
    with pytest.raises(fleet.FleetError, match='layout must be one of'):
        fleet.plan_nodes('star', 'r1')
    with pytest.raises(fleet.FleetError, match='drive must be one of'):
        fleet.plan_nodes('central', 'r1', overrides={'drive': 'tank'})
    bad = tmp_path / 'bad.yaml'
    bad.write_text('/**:\n  ros__parameters:\n    radious: 0.3\n')
    with pytest.raises(fleet.FleetError, match="did you mean 'radius'"):
        fleet.plan_nodes('central', 'r1', params_file=str(bad))


def test_params_file_namespace_rules(tmp_path):
    """/** reaches every node; a bare node key only the one without a namespace."""
    f = tmp_path / 'p.yaml'
    f.write_text('/**:\n  ros__parameters:\n    radius: 0.3\n'
                 'orca_nav:\n  ros__parameters:\n    max_speed: 0.9\n'
                 'robot1:\n  orca_nav:\n    ros__parameters:\n      max_speed: 0.7\n'
                 '/**/orca_nav:\n  ros__parameters:\n    rate: 20.0\n')
    top = fleet.read_params_file(f)
    ns = fleet.read_params_file(f, namespace='robot1')
    other = fleet.read_params_file(f, namespace='robot2')
    assert top == {'radius': 0.3, 'rate': 20.0, 'max_speed': 0.9}
    assert ns == {'radius': 0.3, 'rate': 20.0, 'max_speed': 0.7}
    assert other == {'radius': 0.3, 'rate': 20.0}


def test_per_robot_parameters_from_lists():
    """Parallel lists (e.g. from a scenario) become <robot>.<name> overrides."""
    out = fleet.per_robot_parameters(['a', 'b'], radius=[0.2, 1], drive=['holonomic', ''],
                                     max_speed=None)
    assert out == {'a.radius': 0.2, 'b.radius': 1.0, 'a.drive': 'holonomic', 'b.drive': ''}
    with pytest.raises(fleet.FleetError, match='2 values for 3 robots'):
        fleet.per_robot_parameters(['a', 'b', 'c'], radius=[0.2, 0.3])


def test_config_file_reaches_a_namespaced_node(tmp_path):
    """
    config/orca_nav.yaml starts a real node in /robot1 with the fleet values unchanged.

    A second file with nested per-robot overrides (the documented form) reaches it too.
    """
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    overrides = tmp_path / 'robots.yaml'
    overrides.write_text('/**:\n  ros__parameters:\n    robot2:\n      radius: 0.3\n'
                         '      drive: differential\n    robot3:\n'
                         '      odom_offset: [4.0, 0.0, 3.14159]\n')
    ctx = Context()
    rclpy.init(context=ctx, domain_id=DOMAIN_ID)
    try:
        node = OrcaNavNode(context=ctx, namespace='robot1',
                           cli_args=['--ros-args', '--params-file', str(CONFIG)])
        s = node.settings.fleet
        assert s.names == ('robot1', 'robot2', 'robot3', 'robot4')
        assert s.radius.tolist() == [0.2] * 4 and not s.differential.any()
        assert not s.odom_offset.any()
        assert node.get_fully_qualified_name() == '/robot1/orca_nav'
        node.destroy_node()
        node = OrcaNavNode(context=ctx, namespace='robot1',
                           cli_args=['--ros-args', '--params-file', str(CONFIG),
                                     '--params-file', str(overrides)])
        s = node.settings.fleet
        assert s.radius.tolist() == [0.2, 0.3, 0.2, 0.2]
        assert s.differential.tolist() == [False, True, False, False]
        assert s.odom_offset[2].tolist() == [4.0, 0.0, 3.14159]
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=ctx)


def test_config_file_lists_every_parameter_with_a_comment():
    """config/orca_nav.yaml sets every fleet parameter, each line with a comment."""
    lines = CONFIG.read_text().splitlines()
    for spec in P.FLEET_PARAMS:
        found = [ln for ln in lines if ln.strip().startswith(spec.name + ':')]
        assert found, f'{spec.name} missing from {CONFIG.name}'
        assert '#' in found[0], f'{spec.name} has no comment'
    assert lines[3].strip() == '/**:'
