"""Tests of orca_nav.params: the table, the pure validator and the resolver (no ROS node)."""

import dataclasses

import numpy as np
from orca_nav.control.config import FleetConfig
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


def test_a_fleet_config_built_without_ros_has_the_nodes_defaults():
    """Every FleetConfig default equals what the node resolves from its default parameters."""
    node = P.resolve(P.defaults(['a'])).fleet
    plain = FleetConfig.uniform(['a'])
    for f in dataclasses.fields(FleetConfig):
        if f.default is dataclasses.MISSING or f.name in ('reciprocate', 'pose_source'):
            continue  # required, or None for "as the fleet value" (resolved per robot)
        ours, theirs = getattr(plain, f.name), getattr(node, f.name)
        assert np.all(np.asarray(ours) == np.asarray(theirs)), (f.name, ours, theirs)
