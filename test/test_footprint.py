"""Footprints (orca_nav.control.footprint, core.geometry's polygons) and their parameters."""

import numpy as np
from orca_nav.control import parameters as P
from orca_nav.control.config import FleetConfig
from orca_nav.control.footprint import (
    checked_footprint, footprint_text, MAX_FOOTPRINT_EXTENT, parse_footprint)
from orca_nav.core import geometry
import pytest

CART = [[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]  # 0.9 x 0.6 m
CART_TEXT = '[[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]'
CART_RADIUS = float(np.hypot(0.45, 0.3))


def test_polygon_math():
    """Area, convexity, simplicity, origin inside and circumscribed radius of small polygons."""
    square = [[1, 1], [-1, 1], [-1, -1], [1, -1]]
    assert geometry.polygon_area(square) == 4.0
    assert geometry.polygon_area(square[::-1]) == -4.0
    assert geometry.polygon_is_convex(square)
    assert not geometry.polygon_is_convex([[1, 0], [0, 0.2], [-1, 0], [0, 1]])
    assert not geometry.polygon_self_intersects(square)
    assert geometry.polygon_self_intersects([[1, 1], [-1, -1], [-1, 1], [1, -1]])  # bow tie
    assert geometry.polygon_self_intersects([[0, 0], [2, 0], [1, 0], [1, 1]])  # folds back
    assert geometry.polygon_self_intersects([[0, 0], [1, 0], [1, 0], [0, 1]])  # repeated
    assert geometry.polygon_contains_origin(square)
    assert not geometry.polygon_contains_origin([[1, 0], [2, 0], [2, 1]])
    assert not geometry.polygon_contains_origin([[0, 0], [1, 0], [0, 1]])  # on a vertex
    assert geometry.circumscribed_radius(square) == pytest.approx(2 ** 0.5)
    hull = geometry.convex_hull([[1, 0], [0, 0.2], [-1, 0], [0, 1], [0, -1]])
    assert geometry.polygon_area(hull) == pytest.approx(2.0)


def test_parse_and_check_a_cart():
    """Nav2's string gives the points; a clockwise outline is turned counter-clockwise."""
    assert parse_footprint(CART_TEXT) == CART
    assert parse_footprint(footprint_text(CART)) == CART
    assert parse_footprint('[[1,0],[0,1],[-1,-1]]') == [[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]
    assert parse_footprint('') is None and parse_footprint('[ ]') is None
    polygon, warning = checked_footprint(CART[::-1])
    assert warning is None and geometry.polygon_area(polygon) > 0
    assert sorted(polygon.tolist()) == sorted(CART)


def test_a_concave_footprint_becomes_its_hull_with_one_warning():
    """An L-shaped outline: its convex hull, and one line saying so."""
    ell = [[0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5], [0.0, -0.5], [0.0, 0.0], [0.5, 0.0]]
    polygon, warning = checked_footprint(ell, 'r1.footprint')
    assert warning.startswith('r1.footprint is concave: using its convex hull')
    assert len(polygon) == 5 and geometry.polygon_is_convex(polygon)


@pytest.mark.parametrize('text, message', [
    ('0.5, 0.3', 'must be a list of [x, y] points'),
    ('[[0.5, 0.3], [-0.5, 0.3]', 'must be a list of [x, y] points'),
    ('[[0.5, 0.3, 1.0], [-0.5, 0.3], [0, -1]]', 'must be a list of [x, y] points'),
    ('[[0.5, 0.3], [-0.5, 0.3]]', 'needs at least 3 points, got 2'),
    ('[[nan, 0.3], [-0.5, 0.3], [0, -1]]', 'must contain finite numbers'),
    ('[[1, 1], [-1, -1], [-1, 1], [1, -1]]', 'self-intersecting'),
    ('[[1, 0], [2, 0], [2, 1]]', 'must contain the robot origin'),
    ('[[1, 0], [2, 0], [3, 0]]', 'self-intersecting'),  # on one line: folds back
    ('[[1e-4, 0], [0, 1e-4], [-1e-4, -1e-4]]', 'has no area'),
    ('[[50, 50], [-50, 50], [-50, -50], [50, -50]]', 'at most 10 m'),
])
def test_bad_footprints_are_refused_with_one_line(text, message):
    """Each bad input: a ValueError of one line naming the parameter and the reason."""
    with pytest.raises(ValueError) as exc:
        points = parse_footprint(text, 'r1.footprint')
        checked_footprint(points, 'r1.footprint')
    text = str(exc.value)
    assert message in text and text.startswith('r1.footprint') and '\n' not in text, text


def test_bad_footprint_parameters_are_refused_by_validate():
    """The table's validator refuses a bad footprint, fleet or per robot, with its reason."""
    for name in ('footprint', 'r2.footprint'):
        values = P.defaults(['r1', 'r2'])
        values[name] = '[[0.5, 0.3], [-0.5, 0.3]]'
        assert P.validate(values) == f'{name} needs at least 3 points, got 2: ' \
                                     '[[0.5, 0.3], [-0.5, 0.3]]'
    values = P.defaults(['r1', 'r2'])
    values['footprint_padding'] = -0.1
    assert 'footprint_padding must be between' in P.validate(values)
    assert MAX_FOOTPRINT_EXTENT == P.FLEET_BY_NAME['radius'].range[1]


def test_a_footprint_overrides_the_radius_per_robot():
    """r2 is a cart: the disc of its farthest vertex + padding; r1 keeps the fleet radius."""
    config = FleetConfig.from_params(['r1', 'r2'], radius=0.3, footprint_padding=0.02,
                                     **{'r2.footprint': CART_TEXT})
    assert config.radius.tolist() == [0.3, pytest.approx(CART_RADIUS + 0.02)]
    assert config.footprint[0] is None
    assert sorted(config.footprint[1].tolist()) == sorted(CART)
    assert config.planning_radius[1] == pytest.approx(CART_RADIUS + 0.02 + 0.05)


def test_a_fleet_footprint_and_a_disc_robot_in_it():
    """A fleet footprint gives every robot the cart; '[]' per robot is a disc of radius."""
    config = FleetConfig.from_params(['r1', 'r2', 'r3'], footprint=CART_TEXT,
                                     **{'r2.footprint': '[]', 'r3.radius': 0.4})
    assert config.radius.tolist() == pytest.approx([CART_RADIUS + 0.01, 0.2,
                                                    CART_RADIUS + 0.01])
    assert config.footprint[1] is None and config.footprint[2] is not None


def test_disc_fleets_are_unchanged():
    """No footprint: the radii are the parameters' values, no footprints, no warnings."""
    values = P.defaults(['r1', 'r2'], [], {'radius': 0.3, 'r2.radius': 0.35})
    config = FleetConfig.from_values(values)
    assert config.radius.tolist() == [0.3, 0.35] and config.footprint == (None, None)
    assert P.footprint_warnings(values) == []


def test_footprint_and_radius_both_given_warn_once_naming_both():
    """The footprint wins; one line per robot (and one for the fleet) names both parameters."""
    values = P.defaults(['r1', 'r2'], [], {'r2.footprint': CART_TEXT, 'r2.radius': 0.3,
                                           'r1.radius': 0.25})
    assert P.validate(values) is None
    assert P.footprint_warnings(values) == [
        'r2.footprint and r2.radius are both given: the footprint wins (r2 avoids as a disc '
        f'of {CART_RADIUS + 0.01:.3f} m, not 0.3)']
    values = P.defaults(['r1'], [], {'footprint': CART_TEXT, 'radius': 0.3})
    assert P.footprint_warnings(values) == [
        'footprint and radius are both given: the footprint wins (radius 0.3 ignored where a '
        'robot has a footprint)']
