"""
Robot footprints, Nav2's way: a polygon in the robot's base frame (x forward, y left).

The parameter is Nav2's string ``"[[x, y], ...]"``; scenario files give a YAML list of
points. Both are checked here and nowhere else (``checked_footprint``): at least 3 points,
finite, a simple polygon (no edges crossing), the robot's origin inside, every vertex within
``MAX_FOOTPRINT_EXTENT`` of it. A concave polygon is replaced by its convex hull (with a
warning). '' (or ``[]``, as Nav2 writes it) is no footprint: a disc of ``radius``.

Until the avoidance learns shapes, a robot with a footprint avoids as the disc that holds it:
``footprint_radius`` (the circumscribed radius plus ``footprint_padding``).

>>> polygon, warning = checked_footprint(parse_footprint('[[0.45, 0.3], [-0.45, 0.3], '
...                                                       '[-0.45, -0.3], [0.45, -0.3]]'))
>>> polygon.tolist(), warning
([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]], None)
>>> round(footprint_radius(polygon, 0.01), 4)
0.5508
"""

import re

import numpy as np
from orca_nav.core.geometry import (
    circumscribed_radius, convex_hull, polygon_area, polygon_contains_origin,
    polygon_is_convex, polygon_self_intersects)

# [m] Every vertex within this of the robot's origin: the largest radius the parameter table
# allows (radius 0.01-10 m), so a footprint never makes a robot larger than a disc could be
# (a 100 m polygon is a typo, e.g. centimetres for metres).
MAX_FOOTPRINT_EXTENT = 10.0
# [m^2] A polygon with less area than this is degenerate (all its points on one line).
MIN_FOOTPRINT_AREA = 1e-6

_NUMBER = r'[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf(?:inity)?)'
_POINT = rf'\[\s*({_NUMBER})\s*,\s*({_NUMBER})\s*\]'
_FOOTPRINT = re.compile(rf'^\s*\[\s*(?:{_POINT}(?:\s*,\s*{_POINT})*)?\s*\]\s*$', re.IGNORECASE)
_POINTS = re.compile(_POINT, re.IGNORECASE)


def parse_footprint(text, name='footprint'):
    """
    Points of Nav2's footprint string ``"[[x, y], ...]"`` [m]; None for '' or ``[]``.

    Returns a list of [x, y] (not yet checked: see ``checked_footprint``); raises ValueError
    with one line if the string is not a list of [x, y] pairs.

    >>> parse_footprint('[[0.5, 0.25], [-0.5, 0.25], [0, -0.25]]')
    [[0.5, 0.25], [-0.5, 0.25], [0.0, -0.25]]
    >>> parse_footprint(''), parse_footprint(' [] ')
    (None, None)
    """
    if not text.strip() or text.strip().replace(' ', '') == '[]':
        return None
    if not _FOOTPRINT.match(text):
        raise ValueError(f'{name} must be a list of [x, y] points such as '
                         f'"[[0.5, 0.3], [-0.5, 0.3], [-0.5, -0.3], [0.5, -0.3]]", got {text!r}')
    return [[float(x), float(y)] for x, y in _POINTS.findall(text)]


def checked_footprint(points, name='footprint'):
    """
    Check a footprint's points; return (polygon, warning).

    points : (K, 2) [m] in the robot's base frame. polygon : (H, 2) float64, counter-clockwise;
    warning : a line to log when a concave polygon was replaced by its convex hull, else None.
    Raises ValueError with one line a user can act on.
    """
    try:
        p = np.asarray(points, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f'{name} must be a list of [x, y] points, got {points!r}') from None
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f'{name} must be a list of [x, y] points, got {points!r}')
    if len(p) < 3:
        raise ValueError(f'{name} needs at least 3 points, got {len(p)}: {p.tolist()}')
    if not np.isfinite(p).all():
        raise ValueError(f'{name} must contain finite numbers, got {p.tolist()}')
    extent = circumscribed_radius(p)
    if extent > MAX_FOOTPRINT_EXTENT:
        raise ValueError(f'{name} has a vertex {extent:.3g} m from the robot origin; at most '
                         f'{MAX_FOOTPRINT_EXTENT:g} m (metres, in the base frame)')
    if polygon_self_intersects(p):
        raise ValueError(f'{name} is self-intersecting (edges cross or touch): list its '
                         f'points in order around the robot, got {p.tolist()}')
    if abs(polygon_area(p)) < MIN_FOOTPRINT_AREA:
        raise ValueError(f'{name} has no area (its points are on one line): {p.tolist()}')
    warning = None
    if not polygon_is_convex(p):
        hull = convex_hull(p)
        warning = (f'{name} is concave: using its convex hull {np.round(hull, 4).tolist()} '
                   'instead')
        p = hull
    elif polygon_area(p) < 0:
        p = p[::-1].copy()  # Clockwise: listed counter-clockwise, as the hull is.
    if not polygon_contains_origin(p):
        raise ValueError(f'{name} must contain the robot origin (0, 0) inside (the base frame '
                         f'is at the centre of rotation), got {np.asarray(points).tolist()}')
    return p, warning


def footprint_text(points):
    """
    Nav2's string form of (K, 2) points, as the ``footprint`` parameter takes it.

    >>> footprint_text([[0.5, 0.3], [-0.5, 0.3], [0.0, -0.3]])
    '[[0.5, 0.3], [-0.5, 0.3], [0.0, -0.3]]'
    """
    return '[' + ', '.join(f'[{float(x)!r}, {float(y)!r}]' for x, y in points) + ']'


def footprint_radius(polygon, padding):
    """Radius [m] of the disc a robot with this footprint avoids as: circumscribed + padding."""
    return circumscribed_radius(polygon) + padding
