"""Tests of orca_nav.fleet (what the launch files call) and of config/orca_nav.yaml."""

import os
from pathlib import Path
import re

from orca_nav.control import parameters as P
from orca_nav.control.config import resolve
from orca_nav.ros import fleet, launch_args
from orca_nav.ros.node import OrcaNavNode
from orca_nav.ros.params_file import per_robot_parameters
import pytest
import rclpy
from rclpy.context import Context

CONFIG = Path(__file__).resolve().parents[1] / 'config' / 'orca_nav.yaml'
EXAMPLE = Path(__file__).resolve().parents[1] / 'config' / 'examples' / 'mixed_fleet.yaml'
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
                             'robots': ['robot1', 'robot2', 'robot3', 'robot4'],
                             'robot1.drive': '', 'robot2.drive': '', 'robot3.drive': '',
                             'robot4.drive': ''}]


def test_decentralised_layout_is_one_node_per_robot_observing_the_others():
    """Decentralised: node /<r>/orca_nav commands r and observes every other robot."""
    plans = fleet.plan_nodes('decentralised', 'a,b,c', params_file=str(CONFIG))
    assert [(p.namespace, p.robots, p.observed_robots) for p in plans] == [
        ('a', ['a'], ['b', 'c']), ('b', ['b'], ['a', 'c']), ('c', ['c'], ['a', 'b'])]
    # In /a, the robots' topics are the fleet's (the root): an absolute robots_namespace.
    assert plans[0].parameters == [str(CONFIG), {'robots': ['a'], 'observed_robots': ['b', 'c'],
                                                 'observed_reciprocate': True,
                                                 'robots_namespace': '/'}]


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
    out = per_robot_parameters(['a', 'b'], radius=[0.2, 1], drive=['holonomic', ''],
                               max_speed=None)
    assert out == {'a.radius': 0.2, 'b.radius': 1.0, 'a.drive': 'holonomic', 'b.drive': ''}
    with pytest.raises(fleet.FleetError, match='2 values for 3 robots'):
        per_robot_parameters(['a', 'b', 'c'], radius=[0.2, 0.3])


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
        # A parameter whose default follows another's is shown commented out, so that it
        # does follow it.
        prefix = ('# ' if spec.default_from else '') + spec.name + ':'
        found = [ln for ln in lines if ln.strip().startswith(prefix)]
        assert found, f'{spec.name} missing from {CONFIG.name}'
        assert '#' in found[0], f'{spec.name} has no comment'
    assert lines[3].strip() == '/**:'


def _effective(plan):
    """Return the values a node of this plan ends up with: files, then the launch's dict."""
    values = {}
    for item in plan.parameters:
        values.update(fleet.read_params_file(item, plan.name, plan.namespace)
                      if isinstance(item, str) else item)
    return fleet.check_node_parameters(values)


def test_default_config_changes_no_robot_and_the_drive_argument_reaches_every_robot():
    """
    config/orca_nav.yaml sets fleet values only; drive:=... beats a file's per-robot drive.

    The example file (config/examples/mixed_fleet.yaml) makes robot2 differential; with the
    drive argument every robot gets that drive, observed robots too.
    """
    given = fleet.read_params_file(CONFIG)
    assert set(given) <= set(P.FLEET_BY_NAME), set(given) - set(P.FLEET_BY_NAME)
    (plan,) = fleet.plan_nodes('central', 'robot1..robot8', params_file=str(CONFIG))
    settings = resolve(_effective(plan))
    assert settings.fleet.radius.tolist() == [0.2] * 8 and not settings.fleet.differential.any()
    assert not settings.fleet.odom_offset.any()
    (plan,) = fleet.plan_nodes('central', '', params_file=str(EXAMPLE))
    assert resolve(_effective(plan)).fleet.differential.tolist() == [False, True, False, False]
    (plan,) = fleet.plan_nodes('central', '', params_file=str(EXAMPLE),
                               overrides={'drive': 'holonomic'})
    assert not resolve(_effective(plan)).fleet.differential.any()
    plans = fleet.plan_nodes('decentralised', '', params_file=str(EXAMPLE),
                             overrides={'drive': 'differential'})
    assert all(resolve(_effective(p)).fleet.differential.all() for p in plans)


def test_robot_ranges_keep_zero_padding():
    """robot01..robot03 names robot01, robot02, robot03 (not robot1..robot3)."""
    assert fleet.parse_robots('robot01..robot03') == ['robot01', 'robot02', 'robot03']
    assert fleet.parse_robots('tb3_08..tb3_11') == ['tb3_08', 'tb3_09', 'tb3_10', 'tb3_11']
    assert fleet.parse_robots('robot9..robot11') == ['robot9', 'robot10', 'robot11']
    with pytest.raises(fleet.FleetError, match='one width'):
        fleet.parse_robots('robot01..robot100')


def test_params_file_types_and_observed_robots_are_checked_at_launch(tmp_path):
    """
    What would kill the node at start-up is refused at launch, with the fix.

    An integer for a double (ROS 2 refuses it), integers in a list of doubles, and a file's
    observed_robots: kept when they are other robots, never the node's own.
    """
    def plan(text, robots='robot1,robot2', layout='central'):
        f = tmp_path / 'p.yaml'
        f.write_text('/**:\n  ros__parameters:\n' + text)
        return fleet.plan_nodes(layout, robots, params_file=str(f))

    with pytest.raises(fleet.FleetError, match=r'radius: 1 is an integer .* write 1\.0'):
        plan('    radius: 1\n')
    with pytest.raises(fleet.FleetError, match=r'robot2\.radius: 1 is an integer'):
        plan('    robot2:\n      radius: 1\n')
    with pytest.raises(fleet.FleetError, match=r'write \[4\.0, 0\.0, 3\.14\]'):
        plan('    robot2:\n      odom_offset: [4, 0, 3.14]\n')
    with pytest.raises(fleet.FleetError, match='max_neighbors must be an integer'):
        plan('    max_neighbors: 10.0\n')
    with pytest.raises(fleet.FleetError, match='observed_robots must be a list'):
        plan('    observed_robots: robot3\n')
    (p,) = plan('    observed_robots: [robot2, robot3]\n')
    assert p.observed_robots == ['robot3'] and p.parameters[-1]['observed_robots'] == ['robot3']
    (p,) = plan('    observed_robots: [robot1]\n', robots='robot1')
    assert p.observed_robots == [] and 'observed_robots' not in p.parameters[-1]


def test_one_node_per_computer_with_one_params_file(tmp_path):
    """
    Decentralised on real robots: every computer starts its own robot's node from one file.

    The file lists the fleet (robots, or observed_robots with every robot): each node
    commands its robot and observes all the others.
    """
    f = tmp_path / 'fleet.yaml'
    f.write_text('/**:\n  ros__parameters:\n    robots: [robot1, robot2, robot3]\n')
    (p,) = fleet.plan_nodes('decentralised', '', params_file=str(f), local_robots='robot3')
    assert (p.namespace, p.robots, p.observed_robots) == ('robot3', ['robot3'],
                                                          ['robot1', 'robot2'])
    f.write_text('/**:\n  ros__parameters:\n    robots: [robot1]\n'
                 '    observed_robots: [robot1, robot2, robot3]\n')
    (p,) = fleet.plan_nodes('decentralised', 'robot2', params_file=str(f))
    assert (p.robots, p.observed_robots) == (['robot2'], ['robot1', 'robot3'])
    with pytest.raises(fleet.FleetError, match='not in the fleet'):
        fleet.plan_nodes('decentralised', 'robot1,robot2', local_robots='robot3')
    with pytest.raises(fleet.FleetError, match='decentralised layout'):
        fleet.plan_nodes('central', 'robot1,robot2', local_robots='robot1')


def test_launch_arguments_are_parsed_strictly():
    """
    orca_nav.launch.py's arguments as ros2 launch gives them (strings), via plan_launch.

    'default' stands for "as in the params file" (ros2 launch refuses empty values); a
    boolean is true/false (or 1/0, yes/no), anything else is refused; the namespace moves
    the node and the robot topics; the command topic and stamping are arguments.
    """
    names = [name for name, _, description in fleet.LAUNCH_ARGUMENTS if description]
    assert len(names) == len(fleet.LAUNCH_ARGUMENTS) and 'local_robots' in names
    assert all(d != '' for _, d, _ in fleet.LAUNCH_ARGUMENTS), 'ros2 launch cannot type ""'
    (p,) = fleet.plan_launch({'robots': 'robot1..robot2', 'params_file': str(CONFIG),
                              'use_sim_time': '1'})
    assert p.parameters == [str(CONFIG), {'use_sim_time': True,
                                          'robots': ['robot1', 'robot2']}]
    assert p.arguments == ['--ros-args', '--log-level', 'info'] and p.namespace == ''
    for bad in ('maybe', 'tru'):  # '' or 'default': not given
        with pytest.raises(fleet.FleetError, match='use_sim_time must be true or false'):
            fleet.plan_launch({'robots': 'r1', 'use_sim_time': bad})
    (p,) = fleet.plan_launch({'robots': 'r1', 'namespace': '/fleet_a', 'use_sim_time': 'False',
                              'cmd_vel_topic': 'cmd_vel_nav', 'cmd_vel_stamped': 'true',
                              'log_level': 'DEBUG'})
    # The robots' topics are relative to the node's namespace (fleet_a/r1/cmd_vel_nav).
    assert p.namespace == 'fleet_a' and p.parameters == [{
        'use_sim_time': False, 'cmd_vel_topic': 'cmd_vel_nav', 'cmd_vel_stamped': True,
        'robots': ['r1']}]
    assert p.arguments[-1] == 'debug'
    # Nav2's chain: the pose from AMCL, the route from the planner server; none = off.
    (p,) = fleet.plan_launch({'robots': 'r1', 'pose_topic': 'amcl_pose', 'plan_topic': 'plan'})
    given = p.parameters[-1]
    assert (given['pose_topic'], given['plan_topic']) == ('amcl_pose', 'plan')
    (p,) = fleet.plan_launch({'robots': 'r1', 'pose_topic': 'none'})
    assert p.parameters[-1]['pose_topic'] == ''
    plans = fleet.plan_launch({'robots': 'r1,r2', 'namespace': 'fleet_a',
                               'layout': 'decentralised'})
    assert [(q.namespace, q.parameters[-1]['robots_namespace']) for q in plans] == [
        ('fleet_a/r1', '/fleet_a'), ('fleet_a/r2', '/fleet_a')]
    # Inside an including file's PushROSNamespace('site'): its fleet's topics, absolute.
    plans = fleet.plan_launch({'robots': 'r1,r2', 'namespace': 'fleet_a',
                               'layout': 'decentralised'}, base_namespace='/site')
    assert [(q.namespace, q.parameters[-1]['robots_namespace']) for q in plans] == [
        ('fleet_a/r1', '/site/fleet_a'), ('fleet_a/r2', '/site/fleet_a')]
    # use_sim_time not given: the params file's, or an including file's SetParameter.
    assert fleet.plan_launch({'robots': 'r1', 'params_file': 'none'},
                             default_params_file=str(CONFIG))[0].parameters == [
        {'robots': ['r1']}]
    assert fleet.plan_launch({'robots': 'r1', 'params_file': 'default'},
                             default_params_file=str(CONFIG))[0].parameters[0] == str(CONFIG)
    for args, message in (({'robots': 'r1', 'log_level': 'loud'}, 'log_level must be'),
                          ({'robots': 'r1', 'cmd_vel_stamped': '2'}, 'cmd_vel_stamped must'),
                          ({'robots': 'r1', 'namespace': '/9x'}, 'namespace must be'),
                          ({'robots': 'r1', 'params_file': '/no/such.yaml'}, 'is not a file'),
                          ({'robots': 'r1', 'cmd_vel_topic': '/abs'}, 'cmd_vel_topic must'),
                          ({'robots': 'r1', 'drive': 'tank'}, 'drive must be one of'),
                          ({'robotz': 'r1'}, 'unknown launch arguments')):
        with pytest.raises(fleet.FleetError, match=message):
            fleet.plan_launch(args)


def test_misspelt_overrides_are_named(tmp_path):
    """A misspelt fleet or per-robot name is refused at launch with the nearest name."""
    f = tmp_path / 'p.yaml'
    f.write_text('/**:\n  ros__parameters:\n    robot2:\n      avoidance_weigth: 1.0\n')
    with pytest.raises(fleet.FleetError, match="'robot2.avoidance_weigth' .*"
                                               "'robot2.avoidance_weight'"):
        fleet.plan_nodes('central', 'robot1,robot2', params_file=str(f))
    # A robot outside this node's fleet: a shared file, not an error.
    f.write_text('/**:\n  ros__parameters:\n    robot7:\n      radius: 0.3\n')
    assert fleet.plan_nodes('central', 'robot1', params_file=str(f))
    misspelt, other = P.unused_overrides(
        ['avoidance_weigth', 'robot2.avoidance_weigth', 'robot7.radius', 'radius'],
        list(P.defaults(['robot2'])), ['robot2'])
    assert misspelt == [('avoidance_weigth', 'avoidance_weight'),
                        ('robot2.avoidance_weigth', 'robot2.avoidance_weight')]
    assert other == ['robot7.radius']


def test_sim_demo_plan_is_checked():
    """
    sim_demo.launch.py's logic: the user's params file cannot move the simulated robots.

    Every robot's odom_offset is pinned to zero (the simulator's odometry is in map), bad
    numbers and robot lists are refused with the reason, the ground truth file is private to
    the run and a failed demo fails the launch.
    """
    from orca_nav.sim import demo_launch as demo
    from orca_nav.sim.processes import launch_plan
    plan = launch_plan('circle', robots=4)
    params = demo.plan_sim_node(str(EXAMPLE), plan['node'])
    assert params[0] == str(EXAMPLE)
    values = fleet.read_params_file(EXAMPLE)
    values.update(params[1])
    settings = resolve(fleet.check_node_parameters(values))
    assert not settings.fleet.odom_offset.any()
    assert settings.names == tuple(plan['node']['robots'])
    for key, value, message in (('goal_tolerance', -0.1, 'goal_tolerance must be between'),
                                ('safety_margin', 9.0, 'safety_margin must be between')):
        with pytest.raises(fleet.FleetError, match=message):
            demo.plan_sim_node(None, dict(plan['node'], **{key: value}))
    with pytest.raises(fleet.FleetError, match='goal_tolerance must be a number'):
        launch_args.parse_number('goal_tolerance', 'abc')
    assert demo.parse_robot_count('default') == (None, None)
    assert demo.parse_robot_count('8') == (8, None)
    assert demo.parse_robot_count('robot1..robot4') == (4, ['robot1', 'robot2', 'robot3',
                                                            'robot4'])
    with pytest.raises(fleet.FleetError, match='at least 1'):
        demo.parse_robot_count('0')
    count, names = demo.parse_robot_count('abc')
    with pytest.raises(fleet.FleetError, match="robots \\['abc'\\] are not the scenario's"):
        demo.check_scenario_robots(names, launch_plan('circle', robots=count)['node']['robots'])
    demo.check_scenario_robots(None, ['robot1'])
    first, second = demo.private_path('ground_truth.npz'), demo.private_path('ground_truth.npz')
    assert first != second and Path(first).parent.is_dir()
    for path in (first, second):
        Path(path).parent.rmdir()
    assert demo.demo_failure(0) is None and '2' in demo.demo_failure(2)


def test_pytest_disables_the_launch_testing_plugin():
    """launch_testing's pytest plugin (loaded where ROS is installed) breaks pytest 9."""
    ini = (Path(__file__).resolve().parents[1] / 'pytest.ini').read_text()
    assert '-p no:launch_testing -p no:launch_ros' in ini


def test_nodes_splits_the_central_layout_into_contiguous_shares_that_observe_the_rest():
    """
    nodes:=3 over seven robots: orca_nav_0..2 command 3, 2 and 2 robots, observe the others.

    Every robot is commanded by exactly one node and seen by every other node; the observed
    robots take their share of the avoiding (observed_reciprocate true, as decentralised);
    names, hence ~/tick_stats and ~/markers, are unique and predictable.
    """
    fleet_names = [f'robot{i}' for i in range(1, 8)]
    plans = fleet.plan_launch({'robots': 'robot1..robot7', 'nodes': '3', 'namespace': 'fl',
                               'params_file': str(CONFIG)})
    assert [(p.name, p.namespace, p.robots) for p in plans] == [
        ('orca_nav_0', 'fl', ['robot1', 'robot2', 'robot3']),
        ('orca_nav_1', 'fl', ['robot4', 'robot5']), ('orca_nav_2', 'fl', ['robot6', 'robot7'])]
    commanded = [r for p in plans for r in p.robots]
    assert commanded == fleet_names  # each robot once, in the list's order
    for p in plans:
        assert p.observed_robots == [r for r in fleet_names if r not in p.robots]
        assert p.parameters == [str(CONFIG), {
            'robots': p.robots, 'observed_reciprocate': True,
            'observed_robots': p.observed_robots}]
        settings = resolve(_effective(p))
        assert settings.n_controlled == len(p.robots)
        assert settings.names == tuple(p.robots + p.observed_robots)
        assert settings.params.observed_reciprocate
    assert len({f'/{p.namespace}/{p.name}/tick_stats' for p in plans}) == 3
    # nodes:=1 (the default) is the single central node, unchanged.
    one = fleet.plan_launch({'robots': 'robot1..robot7', 'nodes': '1'})
    assert one == fleet.plan_launch({'robots': 'robot1..robot7'})
    assert [(p.name, p.robots, p.observed_robots) for p in one] == [
        ('orca_nav', fleet_names, [])]
    assert 'observed_reciprocate' not in one[0].parameters[-1]
    # As many nodes as robots: one robot each; a launch override of reciprocate wins.
    plans = fleet.plan_nodes('central', 'a,b', nodes=2,
                             overrides={'observed_reciprocate': False})
    assert [(p.robots, p.observed_robots, p.parameters[-1]['observed_reciprocate'])
            for p in plans] == [(['a'], ['b'], False), (['b'], ['a'], False)]


def test_split_shares_and_local_nodes():
    """Shares differ by one robot at most; local_nodes starts this computer's nodes only."""
    names = [f'r{i}' for i in range(10)]
    for count in range(1, 11):
        shares = fleet.split_robots(names, count)
        assert [r for s in shares for r in s] == names
        assert max(map(len, shares)) - min(map(len, shares)) <= 1
    every = fleet.plan_launch({'robots': 'r0..r9', 'nodes': '4'})
    some = fleet.plan_launch({'robots': 'r0..r9', 'nodes': '4', 'local_nodes': '3, 1'})
    assert [p.name for p in some] == ['orca_nav_1', 'orca_nav_3']
    assert some == [every[1], every[3]]  # the same share as when every node starts here
    assert fleet.plan_launch({'robots': 'r0..r9', 'nodes': '4', 'local_nodes': 'all'}) == every


@pytest.mark.parametrize('args, message', [
    ({'nodes': '0'}, 'nodes must be a whole number of nodes, at least 1'),
    ({'nodes': '-2'}, 'nodes must be a whole number'),
    ({'nodes': '2.5'}, 'nodes must be a whole number'),
    ({'nodes': 'four'}, 'nodes must be a whole number'),
    ({'nodes': '5'}, r'nodes:=5 is more nodes than robots \(4\)'),
    ({'nodes': '2', 'layout': 'decentralised'}, 'decentralised layout already runs one node'),
    ({'nodes': '2', 'local_nodes': '2'}, r'local_nodes must be node indices 0\.\.1'),
    ({'nodes': '2', 'local_nodes': '0,0'}, 'names node 0 twice'),
    ({'nodes': '2', 'local_nodes': ','}, 'names no node'),
    ({'layout': 'decentralised', 'local_nodes': '0'}, 'decentralised layout takes local_robots'),
    ({'nodes': '2', 'local_robots': 'r1'}, 'local_robots is for the decentralised layout'),
])
def test_bad_splits_are_refused_with_the_reason(args, message):
    """Bad nodes and local_nodes values fail the launch before anything starts."""
    with pytest.raises(fleet.FleetError, match=message):
        fleet.plan_launch(dict({'robots': 'r1..r4'}, **args))


def test_split_refuses_a_params_file_section_no_split_node_would_get(tmp_path):
    """
    A section for the node by name (orca_nav:, /**/orca_nav:) reaches no orca_nav_k: refused.

    ROS 2 would drop those parameters silently; /** and the split nodes' own names are fine,
    and the file's observed_robots are observed by every node.
    """
    f = tmp_path / 'p.yaml'
    for key in ('orca_nav', '/**/orca_nav', '/orca_nav'):
        f.write_text(f'{key}:\n  ros__parameters:\n    max_speed: 0.7\n')
        fleet.plan_nodes('central', 'r1..r4', params_file=str(f))  # one node: reached
        with pytest.raises(fleet.FleetError, match=re.escape(f"section '{key}' is for the node")
                           + r' orca_nav.*orca_nav_0 \.\. orca_nav_1'):
            fleet.plan_nodes('central', 'r1..r4', params_file=str(f), nodes=2)
    f.write_text('/**:\n  ros__parameters:\n    max_speed: 0.7\n'
                 '    observed_robots: [b_robot1, r2]\n'
                 'orca_nav_1:\n  ros__parameters:\n    rate: 20.0\n')
    plans = fleet.plan_nodes('central', 'r1..r4', params_file=str(f), nodes=2)
    assert [p.observed_robots for p in plans] == [['r3', 'r4', 'b_robot1'],
                                                  ['r1', 'r2', 'b_robot1']]
    assert [_effective(p)['rate'] for p in plans] == [10.0, 20.0]


BRINGUP_PARAMS = CONFIG.parent / 'examples' / 'bringup_params.yaml'


@pytest.mark.parametrize('given, base, full', [
    ({}, '/fleet', '/fleet'),                          # an including file's PushROSNamespace
    ({'namespace': 'fleet'}, '', '/fleet'),            # the namespace argument
    ({'namespace': 'a'}, '/site', '/site/a'),          # both
])
def test_a_bare_orca_nav_section_reaches_the_node_in_a_namespace(given, base, full):
    """
    A params file's orca_nav: section (Nav2 style) reaches /fleet/orca_nav, as ROS 2 reads it.

    It was dropped silently: radius 0.2 and max_speed 0.5 (the defaults) instead of the
    file's 0.3 / 0.4. The node gets a copy of the file with the section as /**/orca_nav.
    """
    assert fleet.read_params_file(BRINGUP_PARAMS, 'orca_nav', full) == {}  # ROS 2 alone
    (plan,) = fleet.plan_launch(dict(given, params_file=str(BRINGUP_PARAMS)),
                                base_namespace=base)
    copy = plan.parameters[0]
    assert copy != str(BRINGUP_PARAMS) and Path(copy).read_text().startswith(
        f'# {BRINGUP_PARAMS} for nodes in a namespace')
    values = fleet.read_params_file(copy, 'orca_nav', full)
    assert (values['radius'], values['max_speed'], values['robots']) == (
        0.3, 0.4, ['robot1', 'robot2'])
    # The robots' topics are relative to the node's namespace; use_sim_time is left to the
    # file or to the including file's SetParameter.
    assert 'robots_namespace' not in plan.parameters[-1]
    assert 'use_sim_time' not in plan.parameters[-1]


def test_a_params_file_that_reaches_no_node_names_its_sections_and_the_nodes(tmp_path):
    """orca_nav_node: reaches no node: refused, with the nodes' final names (in /site)."""
    path = tmp_path / 'p.yaml'
    path.write_text('orca_nav_node:\n  ros__parameters:\n    radius: 0.3\n'
                    'controller_server:\n  ros__parameters:\n    use_sim_time: true\n')
    message = (r"no section reaches a node of this launch \(its sections: 'orca_nav_node', "
               r"'controller_server'; the nodes: /site/robot1/orca_nav \.\. "
               r'/site/robot2/orca_nav\)')
    with pytest.raises(fleet.FleetError, match=message):
        fleet.plan_launch({'robots': 'robot1,robot2', 'layout': 'decentralised',
                           'params_file': str(path)}, base_namespace='/site')
    # Its robots list in such a section: named, not "no robots".
    path.write_text('orca_nav_node:\n  ros__parameters:\n    robots: [robot1]\n')
    with pytest.raises(fleet.FleetError, match=r"section 'orca_nav_node', which has the robots "
                                               r'list, reaches no node .*the nodes: /orca_nav\)'):
        fleet.plan_launch({'params_file': str(path)})


def test_only_the_arguments_given_to_the_file_are_checked():
    """An including file's own configurations (world, robot) are not this file's arguments."""
    args = {'world': 'warehouse', 'robot': 'robot7', 'robots': 'r1,r2'}
    assert fleet.plan_launch(args, given=['robots'])
    with pytest.raises(fleet.FleetError, match=r"unknown launch arguments \['robot'\] .*did you "
                                               r'mean robots:='):
        fleet.plan_launch(args, given=['robots', 'robot'])
    with pytest.raises(fleet.FleetError, match='nodes is an argument of orca_nav.launch.py, not '
                                               'of orca_nav_decentralised.launch.py'):
        fleet.plan_launch({'robots': 'r1,r2', 'nodes': '2'}, layout='decentralised',
                          launch_file='orca_nav_decentralised.launch.py')
