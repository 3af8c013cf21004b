"""Tests of the parameter table (orca_nav.control.parameters): validator, resolver; no node."""

import dataclasses

import numpy as np
from orca_nav.control.config import FleetConfig, navigation_config, people_config
from orca_nav.control.navigation import NavigationConfig
from orca_nav.control.people import PeopleConfig
from orca_nav.ros import params as P
import pytest


def base(robots=('r1', 'r2'), observed=()):
    """Return a valid parameter set: defaults for these robots."""
    return P.defaults(list(robots), list(observed))


def test_every_parameter_has_a_description_and_the_interface_names_exist():
    """The documented interface names are all declared, each with a description."""
    names = {s.name for s in P.FLEET_PARAMS}
    for name in ('robots', 'radius', 'max_speed', 'drive', 'rate', 'global_frame',
                 'goal_tolerance', 'observed_robots', 'neighbor_dist', 'max_neighbors',
                 'time_horizon', 'time_horizon_obst', 'pref_speed', 'max_angular_speed',
                 'odom_timeout', 'slowdown_distance', 'cmd_vel_stamped', 'odom_topic',
                 'goal_topic', 'cmd_vel_topic', 'scan_topic'):
        assert name in names, name
    for spec in P.FLEET_PARAMS + P.ROBOT_PARAMS:
        assert spec.description
        assert P.check_value(spec.name, spec, spec.default) is None, spec.name
    assert P.FLEET_BY_NAME['global_frame'].default == 'map'


def test_defaults_validate():
    """The defaults with a robots list are a valid set."""
    assert P.validate(base()) is None


@pytest.mark.parametrize('change, message', [
    ({'radius': -1.0}, 'radius must be between'),
    ({'radius': float('nan')}, 'radius must be finite'),
    ({'max_neighbors': 2.5}, 'max_neighbors must be an integer'),
    ({'drive': 'tank'}, 'drive must be one of'),
    ({'r2.drive': 'tank'}, 'r2.drive must be one of'),
    ({'r1.odom_offset': [1.0]}, 'r1.odom_offset must have 3'),
    ({'r1.odom_offset': [1.0, float('inf'), 0.0]}, 'finite'),
    ({'cmd_vel_stamped': 'yes'}, 'true or false'),
    ({'global_frame': ''}, 'global_frame'),
    ({'cmd_vel_topic': '/cmd_vel'}, 'relative to the robot namespace'),
    ({'robots': []}, 'robots is empty'),
    ({'robots': ['r1', 'r1']}, 'twice'),
    ({'robots': ['rate']}, 'clashes with the parameter'),
    ({'robots': ['r-1']}, 'not a valid ROS name'),
    ({'rate': 0.0}, 'rate must be between'),
    ({'safety_margin': -0.01}, 'safety_margin must be between'),
    ({'safety_margin': 0.05 * 200}, 'safety_margin must be between'),
    ({'safety_margin': '0.05'}, 'safety_margin must be a number'),
    ({'r1.safety_margin': -2.0}, 'r1.safety_margin must be between'),
    ({'r1.safety_margin': float('nan')}, 'r1.safety_margin must be finite'),
    ({'max_coordinate': 0.0}, 'max_coordinate must be between'),
    ({'max_coordinate': float('inf')}, 'max_coordinate must be finite'),
    ({'max_coordinate': True}, 'max_coordinate must be a number'),
])
def test_invalid_values_are_refused_with_a_reason(change, message):
    """Each bad value is refused, and the message names the parameter."""
    values = base()
    values.update(change)
    error = P.validate(values)
    assert error is not None and message in error, error


def test_robot_both_commanded_and_observed_is_refused():
    """
    A robot cannot be commanded and observed at once, nor listed twice.

    (The node and the launch files drop commanded robots from observed_robots before this
    check: P.without_commanded.)
    """
    values = base(('r1',), ('r1',))
    assert 'both robots and observed_robots' in P.validate(values)
    assert 'observed_robots twice' in P.validate(base(('r1',), ('r2', 'r2')))


def test_resolve_applies_per_robot_overrides_and_fleet_fallbacks():
    """0 / '' per-robot values fall back to the fleet; others override it."""
    values = base(('a', 'b'), ('c',))
    values.update({'radius': 0.25, 'max_speed': 0.8, 'pref_speed': 0.6, 'drive': 'holonomic',
                   'b.radius': 0.4, 'b.drive': 'differential', 'b.max_speed': 0.5,
                   'c.odom_offset': [1.0, 2.0, 0.5], 'lookahead_distance': 0.12})
    assert P.validate(values) is None
    settings = P.resolve(values)
    assert settings.names == ('a', 'b', 'c') and settings.n_controlled == 2
    assert settings.params.radius == 0.25 and settings.params.drive == 'holonomic'
    s = settings.fleet
    assert s.radius.tolist() == [0.25, 0.4, 0.25]
    assert s.max_speed.tolist() == [0.8, 0.5, 0.8]
    assert s.pref_speed.tolist() == [0.6, 0.5, 0.6]       # never above max_speed
    assert s.differential.tolist() == [False, True, False]
    assert s.lookahead.tolist() == [0.0, 0.12, 0.0]
    assert s.odom_offset.tolist() == [[0, 0, 0], [0, 0, 0], [1.0, 2.0, 0.5]]


def test_pref_speed_zero_means_max_speed():
    """pref_speed 0 is each robot's own max_speed."""
    values = base()
    values.update({'pref_speed': 0.0, 'r2.max_speed': 0.3})
    assert P.resolve(values).fleet.pref_speed.tolist() == [0.5, 0.3]


def test_descriptors_carry_ranges_and_read_only():
    """ROS descriptors: ranges for numbers, read-only for the fleet layout."""
    d = P.descriptor(P.FLEET_BY_NAME['radius'])
    assert d.floating_point_range[0].from_value == 0.01 and d.description
    d = P.descriptor(P.FLEET_BY_NAME['max_neighbors'])
    assert d.integer_range[0].to_value == 1000
    assert P.descriptor(P.FLEET_BY_NAME['robots']).read_only
    assert 'holonomic' in P.descriptor(P.FLEET_BY_NAME['drive']).additional_constraints


def test_safety_margin_per_robot_negative_is_the_fleet_value_and_zero_is_zero():
    """Per-robot safety_margin: -1 (default) = the fleet value; 0 is a real margin of 0."""
    values = base(('a', 'b', 'c'))
    assert values['safety_margin'] == 0.05 and values['max_coordinate'] == 1e5
    values.update({'safety_margin': 0.08, 'b.safety_margin': 0.0, 'c.safety_margin': 0.2})
    assert P.validate(values) is None
    fleet = P.resolve(values).fleet
    assert fleet.safety_margin.tolist() == [0.08, 0.0, 0.2]
    assert fleet.radius.tolist() == [0.2, 0.2, 0.2]       # the true radii
    assert fleet.planning_radius.tolist() == pytest.approx([0.28, 0.2, 0.4])
    assert fleet.max_coordinate == 1e5


def _same_config(a, b, skip=()):
    """Assert two FleetConfigs are equal field by field (arrays with their dtypes)."""
    for f in dataclasses.fields(FleetConfig):
        if f.name in skip:
            continue
        ours, theirs = getattr(a, f.name), getattr(b, f.name)
        assert (ours is None) == (theirs is None), f.name
        if ours is not None:
            assert np.array_equal(np.asarray(ours), np.asarray(theirs)), (f.name, ours, theirs)
            assert np.asarray(ours).dtype == np.asarray(theirs).dtype, f.name


def test_a_fleet_config_has_no_defaults_of_its_own():
    """Every FleetConfig field comes from the parameter table (no dataclass default)."""
    for f in dataclasses.fields(FleetConfig):
        assert f.default is dataclasses.MISSING, f.name
        assert f.default_factory is dataclasses.MISSING, f.name


@pytest.mark.parametrize('robots, observed, given', [
    (['a'], [], {}),
    (['a', 'b'], ['a', 'c'], {'radius': 0.3, 'b.radius': 0.4, 'b.drive': 'differential',
                              'c.safety_margin': 0.0, 'max_accel': 1.0, 'b.max_accel': 0.5,
                              'a.avoidance_weight': 1.0, 'groups_to_ignore': ['g'],
                              'c.avoidance_group': 'g', 'scan_enabled': True,
                              'track_gate': 0.5, 'observed_reciprocate': True,
                              'c.odom_offset': [1.0, 2.0, 0.5], 'pref_speed': 0.3,
                              'route_margin': 0.2, 'rate': 20.0}),
])
def test_a_fleet_config_built_without_ros_is_what_the_node_runs(robots, observed, given):
    """
    FleetConfig.from_params gives field for field the node's config.

    The node resolves its declared values; defaults and overrides alike, and observed robots
    that are commanded are dropped in both.
    """
    cfg = FleetConfig.from_params(robots, observed, **given)
    values = P.defaults(robots, P.without_commanded(robots, observed), given)
    assert P.validate(values) is None
    _same_config(cfg, P.resolve(values).fleet)
    assert cfg.names == tuple(robots) + tuple(P.without_commanded(robots, observed))


def test_from_params_refuses_unknown_names_and_bad_values():
    """An unknown name gets the nearest one; a bad value the validator's reason."""
    with pytest.raises(ValueError, match="'radious' is not a parameter.*'radius'"):
        FleetConfig.from_params(['a'], radious=0.3)
    with pytest.raises(ValueError, match='radius must be between'):
        FleetConfig.from_params(['a'], radius=-1.0)


def test_uniform_is_the_nodes_config_with_reciprocate_and_pose_source_open():
    """FleetConfig.uniform: the node's defaults; reciprocate and pose_source None (tests)."""
    _same_config(FleetConfig.uniform(['a', 'b'], 1), FleetConfig.from_params(['a'], ['b']),
                 skip=('reciprocate', 'pose_source'))
    plain = FleetConfig.uniform(['a'], radius=0.3, drive='differential', period=0.25)
    assert plain.reciprocate is None and plain.pose_source is None
    assert plain.radius.tolist() == [0.3] and plain.lookahead.tolist() == [0.1]
    assert plain.period == 0.25


def test_the_other_configs_defaults_are_the_tables():
    """The route and tracking configs' own defaults equal the table's."""
    values = P.defaults(['a'])
    assert navigation_config(values) == NavigationConfig()
    assert people_config(values) == PeopleConfig()


def test_table_rows_are_not_restated():
    """Each per-robot override is derived from its fleet row: same type, range from it."""
    for spec in P.ROBOT_PARAMS:
        if spec.robot_only:
            assert spec.name not in P.FLEET_BY_NAME, spec.name
            continue
        fleet = P.FLEET_BY_NAME[spec.name]
        assert spec.type == fleet.type and spec.read_only == fleet.read_only, spec.name
        assert spec.default == fleet.per_robot, spec.name
        assert P.check_robot_value(spec.name, spec.name, spec.default) is None, spec.name
        assert P.check_robot_value(spec.name, spec.name, fleet.default) is None, spec.name


@pytest.mark.parametrize('change, message', [
    ({'r1.radius': 0.005}, 'r1.radius must be between 0.01 and 10.0'),
    ({'r1.safety_margin': -0.5}, 'r1.safety_margin must be between 0.0 and 5.0'),
    ({'r1.avoidance_weight': -0.5}, '(or -1.0: the fleet value)'),
    ({'r1.radius': False}, 'r1.radius must be a number'),
])
def test_an_override_is_unset_or_a_value_the_fleet_parameter_takes(change, message):
    """Between "unset" and the fleet's range nothing is accepted (no second unset spelling)."""
    values = base()
    values.update(change)
    error = P.validate(values)
    assert error is not None and message in error, error


def test_unset_is_converted_once_to_the_fleet_value():
    """Each unset spelling gives the fleet value (robot_values), anything else itself."""
    values = base(('a', 'b'))
    values.update({'radius': 0.3, 'b.radius': 0.0, 'safety_margin': 0.1, 'a.safety_margin': 0.0,
                   'drive': 'differential', 'a.drive': '', 'groups_to_ignore': ['x'],
                   'b.groups_to_ignore': []})
    assert P.robot_values(values, ['a', 'b'], 'radius') == [0.3, 0.3]
    assert P.robot_values(values, ['a', 'b'], 'safety_margin') == [0.0, 0.1]
    assert P.robot_values(values, ['a', 'b'], 'drive') == ['differential'] * 2
    assert P.robot_values(values, ['a', 'b'], 'groups_to_ignore') == [['x'], ['x']]
