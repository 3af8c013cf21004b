"""
Scenario files into ``Scenario`` objects: keys checked, defaults applied, robots generated.

The format is described in ``orca_nav.sim.scenarios``, which reads files with this module.
"""

import math
import os
from pathlib import Path

import numpy as np
from orca_nav.control.footprint import checked_footprint
from orca_nav.control.parameters import ROBOT_NAME
from orca_nav.core.geometry import (circumscribed_radius, convex_gap, placed_polygon,
                                    polygon_disc_gap)
from orca_nav.sim.scenario_model import (check_drive, polygon_signed_area, Robot, Scenario,
                                         ScenarioError, suggest_name)

TOP_KEYS = ('description', 'timeout', 'robot_defaults', 'robots', 'generator', 'obstacles',
            'arena', 'map', 'walkers')
ROBOT_KEYS = ('name', 'start', 'goal', 'radius', 'footprint', 'max_speed', 'max_angular_speed',
              'drive', 'avoidance_weight', 'avoidance_group', 'groups_to_ignore', 'observed')
DEFAULT_KEYS = ('radius', 'footprint', 'max_speed', 'max_angular_speed', 'drive',
                'avoidance_weight', 'avoidance_group', 'groups_to_ignore')
OBSTACLE_KEYS = ('polygons', 'segments')
WALKER_KEYS = ('name', 'radius', 'speed', 'waypoints', 'loop', 'start_time')
WALKER_DEFAULTS = {'radius': 0.25, 'speed': 0.5, 'loop': False, 'start_time': 0.0}
GENERATOR_KEYS = {
    # Robots evenly spaced on a ring, each going to the antipodal point. The ring radius grows
    # with the count: max(min_ring_radius, count * spacing / (2 pi)).
    'circle': ('type', 'count', 'spacing', 'min_ring_radius'),
    # Two groups of count / 2: one goes west -> east, the other south -> north, through the
    # origin. Each group is a line across its direction of travel, `spacing` apart.
    'crossing': ('type', 'count', 'spacing', 'distance'),
    # Uniformly random starts and goals inside the arena, clear of the obstacles and of each
    # other, with a seed.
    'random': ('type', 'count', 'seed', 'min_separation', 'min_travel', 'clearance'),
}

ROBOT_DEFAULTS = {'radius': 0.2, 'footprint': None, 'max_speed': 0.5, 'max_angular_speed': 2.0,
                  'drive': 'holonomic', 'avoidance_weight': 0.5, 'avoidance_group': 'default',
                  'groups_to_ignore': []}
MAX_RANDOM_TRIES = 20000  # rejection-sampling budget of the random generator


def scenario_from_dict(data, name='scenario', robots=None, drive=None, source=None,
                       base_dir=None):
    """
    Build a validated Scenario from a parsed YAML mapping (see load_scenario).

    base_dir : directory a relative ``map`` path is resolved against (default: the working
        directory)
    """
    where = source or name
    if not isinstance(data, dict):
        raise ScenarioError(f'{where}: expected a mapping at the top level')
    _check_keys(data, TOP_KEYS, where)
    if ('robots' in data) == ('generator' in data):
        raise ScenarioError(f'{where}: give exactly one of "robots" or "generator"')
    if robots is not None and int(robots) < 1:
        raise ScenarioError(f'robot count must be at least 1, got {robots}')

    defaults = dict(ROBOT_DEFAULTS)
    user_defaults = data.get('robot_defaults') or {}
    _check_keys(user_defaults, DEFAULT_KEYS, f'{where}: robot_defaults')
    defaults.update(user_defaults)

    polygons, segments = _parse_obstacles(data.get('obstacles') or {}, where)
    arena = data.get('arena')
    if arena is not None:
        arena = _floats(arena, 4, f'{where}: arena')
        if arena[0] >= arena[2] or arena[1] >= arena[3]:
            raise ScenarioError(f'{where}: arena must be [xmin, ymin, xmax, ymax] with min < max')
    timeout = float(data.get('timeout', 60.0))
    if not timeout > 0.0:
        raise ScenarioError(f'{where}: timeout must be positive, got {timeout}')
    scenario = Scenario(name=name, robots=[], polygons=polygons, segments=segments,
                        arena=arena, timeout=timeout,
                        description=str(data.get('description', '')).strip(),
                        map_file=_map_file(data.get('map'), base_dir, where))
    scenario.occupancy()  # a map that cannot be read fails here, with its reason

    if 'generator' in data:
        spec = dict(data['generator'] or {})
        if robots is not None:
            spec['count'] = int(robots)
        robot_list = _generate(spec, defaults, scenario, where)
    else:
        entries = data['robots'] or []
        if not isinstance(entries, list) or not entries:
            raise ScenarioError(f'{where}: robots must be a non-empty list')
        if robots is not None:
            if int(robots) > len(entries):
                raise ScenarioError(f'{where}: lists {len(entries)} robots, cannot run '
                                    f'{robots}; use at most {len(entries)}')
            entries = entries[:int(robots)]
        robot_list = [_parse_robot(e, i, defaults, where) for i, e in enumerate(entries)]
    walkers = data.get('walkers')
    walkers = [] if walkers is None else walkers
    if not isinstance(walkers, list):
        raise ScenarioError(f'{where}: walkers must be a list, got {type(walkers).__name__}')
    # After every robot: the rows of the robots do not depend on the walkers.
    scenario.robots = robot_list + [_parse_walker(e, i, where) for i, e in enumerate(walkers)]
    if drive is not None:
        scenario = scenario.with_drive(drive)
    validate(scenario, where)
    return scenario


def validate(scenario, where=None):
    """
    Check a scenario can be run: unique names, no overlap at the starts or goals.

    Walkers (scripted paths, the scenario writer's business) are only checked not to stand on
    a robot at the start: they may start or end on each other, in obstacles or off the map.
    Raises ScenarioError naming the robots involved.
    """
    where = where or scenario.name
    names = scenario.names
    walker = scenario.walkers
    if walker.all():
        raise ScenarioError(f'{where}: no robots')
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ScenarioError(f'{where}: duplicate robot names {dupes}'
                            + (' (robots and walkers share one namespace)' if walker.any()
                               else ''))
    radii = scenario.radii
    robots = np.flatnonzero(~walker)
    # Pairs not checked: two walkers at the start; any walker at the goal.
    skip = {'start': walker[:, None] & walker[None, :], 'goal': walker[:, None] | walker[None, :]}
    for label, pts in (('start', scenario.starts[:, :2]), ('goal', scenario.goals)):
        dist = np.linalg.norm(pts[:, None] - pts[None, :], axis=-1)
        limit = radii[:, None] + radii[None, :]
        np.fill_diagonal(dist, np.inf)
        dist[skip[label]] = np.inf
        if label == 'start':
            # At the starts the headings are known: robots with footprints are their shapes
            # (at the goals, whose headings are not, the circumscribed discs).
            _shapes_apart(scenario, dist, limit)
        i, j = np.unravel_index(np.argmin(dist - limit), dist.shape)
        if len(names) > 1 and dist[i, j] < limit[i, j]:
            if walker[i]:
                i, j = j, i
            who = (f'robot {names[i]} and walker {names[j]}' if walker[j]
                   else f'robots {names[i]} and {names[j]}')
            raise ScenarioError(f'{where}: {who} overlap at their {label}s ({dist[i, j]:.3f} '
                                f'm apart, radii sum {limit[i, j]:.3f} m)')
        clearance = scenario.obstacle_distance(pts[robots]) - radii[robots]
        if label == 'start':
            for n, k in enumerate(robots):
                shape = _start_shape(scenario, k)
                if shape is not None and clearance[n] < 0.0:
                    clearance[n] = scenario.polygon_clearance(shape)
        k = int(robots[np.argmin(clearance)])
        if clearance.min() < 0.0:
            raise ScenarioError(f'{where}: robot {names[k]} overlaps an obstacle at its '
                                f'{label} {tuple(np.round(pts[k], 3))}')
        _check_on_map(scenario, pts, label, where)


def _start_shape(scenario, k):
    """Return row k's footprint placed at its start pose (K, 2), or None (a disc)."""
    footprint = scenario.robots[k].footprint
    if footprint is None:
        return None
    return placed_polygon(np.asarray(footprint, dtype=float), scenario.starts[k])


def _shapes_apart(scenario, dist, limit):
    """
    Mark pairs whose discs overlap at the starts but whose shapes do not as apart (in place).

    dist, limit : (N, N) centre distances and radii sums; a pair with a footprint whose
    shapes (``convex_gap``, ``polygon_disc_gap``) keep a gap gets dist = inf.
    """
    n = len(dist)
    for i in range(n):
        for j in range(i + 1, n):
            if not dist[i, j] < limit[i, j]:
                continue
            a, b = _start_shape(scenario, i), _start_shape(scenario, j)
            if a is None and b is None:
                continue
            if a is not None and b is not None:
                gap = convex_gap(a, b)
            elif a is not None:
                gap = polygon_disc_gap(a, scenario.starts[j, :2], scenario.radii[j])
            else:
                gap = polygon_disc_gap(b, scenario.starts[i, :2], scenario.radii[i])
            if gap >= 0.0:
                dist[i, j] = dist[j, i] = np.inf


def _check_on_map(scenario, points, label, where):
    """Refuse robots' starts or goals off the scenario's map or in its unknown cells."""
    grid = scenario.grid_map()
    if grid is None:
        return
    cells = grid.world_to_cell(points)
    inside = grid.inside(points)
    for k in np.flatnonzero(~scenario.walkers):
        if not inside[k] or grid.unknown[cells[k, 1], cells[k, 0]]:
            where_on = 'off the map' if not inside[k] else 'in an unknown cell of the map'
            raise ScenarioError(f'{where}: robot {scenario.names[k]} has its {label} '
                                f'{tuple(np.round(points[k], 3))} {where_on} '
                                f'{scenario.map_file}')


# --- parsing helpers ---------------------------------------------------------------------

def _check_keys(mapping, valid, where):
    if not isinstance(mapping, dict):
        raise ScenarioError(f'{where}: expected a mapping, got {type(mapping).__name__}')
    for key in mapping:
        if key not in valid:
            raise ScenarioError(f'{where}: unknown key {key!r}{suggest_name(key, valid)}; '
                                f'valid keys: {", ".join(valid)}')


def _floats(value, count, where):
    try:
        out = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise ScenarioError(f'{where}: expected {count} numbers, got {value!r}') from None
    if len(out) != count or not all(math.isfinite(v) for v in out):
        raise ScenarioError(f'{where}: expected {count} finite numbers, got {value!r}')
    return out


def _positive(value, where):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(f'{where}: expected a number, got {value!r}') from None
    if not (math.isfinite(value) and value > 0.0):
        raise ScenarioError(f'{where}: must be positive, got {value}')
    return value


def _make_robot(name, start, goal, params, where):
    if not isinstance(name, str) or not ROBOT_NAME.match(name):
        raise ScenarioError(f'{where}: robot name {name!r} must match {ROBOT_NAME.pattern} '
                            '(it becomes the topic namespace)')
    start = _floats(start, 3, f'{where}: start') if len(start) == 3 else \
        _floats(start, 2, f'{where}: start') + (0.0,)
    footprint = _footprint(params['footprint'], f'{where}: footprint')
    radius = (_positive(params['radius'], f'{where}: radius') if footprint is None
              else circumscribed_radius(footprint))
    return Robot(name=name, start=start, goal=_floats(goal, 2, f'{where}: goal'),
                 radius=radius, footprint=footprint,
                 max_speed=_positive(params['max_speed'], f'{where}: max_speed'),
                 max_angular_speed=_positive(params['max_angular_speed'],
                                             f'{where}: max_angular_speed'),
                 drive=check_drive(params['drive'], f'{where}: drive'),
                 avoidance_weight=_fraction(params['avoidance_weight'],
                                            f'{where}: avoidance_weight'),
                 avoidance_group=_group(params['avoidance_group'], f'{where}: avoidance_group'),
                 groups_to_ignore=tuple(_group(g, f'{where}: groups_to_ignore')
                                        for g in _list(params['groups_to_ignore'],
                                                       f'{where}: groups_to_ignore')),
                 observed=_flag(params.get('observed', False), f'{where}: observed'))


def _footprint(value, where):
    """
    Return a robot's footprint: ((x, y), ...) counter-clockwise [m] in its base frame, or None.

    Checked as the node's parameter is (control/footprint.py); a concave one is refused
    here (a scenario states the shape exactly: write its convex hull).
    """
    if value is None or (isinstance(value, (list, tuple)) and not value):
        return None
    try:
        polygon, concave = checked_footprint(value, where)
    except ValueError as exc:
        raise ScenarioError(str(exc)) from None
    if concave:
        raise ScenarioError(f'{concave.replace("using", "write")}')
    return tuple((float(x), float(y)) for x, y in polygon)


def _parse_robot(entry, index, defaults, where):
    here = f'{where}: robots[{index}]'
    _check_keys(entry, ROBOT_KEYS, here)
    for key in ('start', 'goal'):
        if key not in entry:
            raise ScenarioError(f'{here}: missing {key!r}')
    if not isinstance(entry['start'], (list, tuple)) or len(entry['start']) not in (2, 3):
        raise ScenarioError(f'{here}: start must be [x, y] or [x, y, yaw]')
    params = dict(defaults)
    params.update({k: v for k, v in entry.items() if k in DEFAULT_KEYS + ('observed',)})
    return _make_robot(entry.get('name', f'robot{index}'), entry['start'], entry['goal'],
                       params, here)


def _parse_walker(entry, index, where):
    here = f'{where}: walkers[{index}]'
    _check_keys(entry, WALKER_KEYS, here)
    for key in ('name', 'waypoints'):
        if key not in entry:
            raise ScenarioError(f'{here}: missing {key!r}')
    name = entry['name']
    if not isinstance(name, str) or not ROBOT_NAME.match(name):
        raise ScenarioError(f'{here}: walker name {name!r} must match {ROBOT_NAME.pattern}')
    waypoints = entry['waypoints']
    if not isinstance(waypoints, (list, tuple)) or len(waypoints) < 2:
        raise ScenarioError(f'{here}: waypoints must be a list of at least 2 [x, y] points, '
                            f'got {waypoints!r}')
    points = tuple(_floats(p, 2, f'{here}: waypoints[{k}]') for k, p in enumerate(waypoints))
    params = dict(WALKER_DEFAULTS)
    params.update(entry)
    start_time = params['start_time']
    if (isinstance(start_time, bool) or not isinstance(start_time, (int, float))
            or not math.isfinite(start_time) or start_time < 0.0):
        raise ScenarioError(f'{here}: start_time must be a number >= 0 [s], got {start_time!r}')
    # Facing the first waypoint that differs from the start.
    ahead = next((p for p in points[1:] if p != points[0]), points[0])
    return Robot(name=name, start=points[0] + (_facing(points[0], ahead),), goal=points[-1],
                 radius=_positive(params['radius'], f'{here}: radius'),
                 max_speed=_positive(params['speed'], f'{here}: speed'),
                 max_angular_speed=ROBOT_DEFAULTS['max_angular_speed'], drive='holonomic',
                 walker=True, waypoints=points, loop=_flag(params['loop'], f'{here}: loop'),
                 start_time=float(start_time))


def _fraction(value, where):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(f'{where}: expected a number in [0, 1], got {value!r}') from None
    if not 0.0 <= value <= 1.0:
        raise ScenarioError(f'{where}: must be within [0, 1], got {value}')
    return value


def _group(value, where):
    if not isinstance(value, str) or not value.strip():
        raise ScenarioError(f'{where}: a group is a non-empty name, got {value!r}')
    return value


def _list(value, where):
    if not isinstance(value, (list, tuple)):
        raise ScenarioError(f'{where}: expected a list, got {value!r}')
    return value


def _flag(value, where):
    if not isinstance(value, bool):
        raise ScenarioError(f'{where}: expected true or false, got {value!r}')
    return value


def _map_file(value, base_dir, where):
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ScenarioError(f'{where}: map must be the path of a map YAML file, got {value!r}')
    path = Path(os.path.expanduser(value))
    if not path.is_absolute():
        path = (Path(base_dir or Path.cwd()) / path).resolve()
    if not path.is_file():
        raise ScenarioError(f'{where}: map file not found: {path}')
    return path


def _parse_obstacles(obstacles, where):
    _check_keys(obstacles, OBSTACLE_KEYS, f'{where}: obstacles')
    polygons = []
    for i, poly in enumerate(obstacles.get('polygons') or []):
        here = f'{where}: obstacles.polygons[{i}]'
        try:
            arr = np.array(poly, dtype=float)
        except (TypeError, ValueError):
            raise ScenarioError(f'{here}: expected a list of [x, y] vertices') from None
        if arr.ndim != 2 or arr.shape[1] != 2 or len(arr) < 3:
            raise ScenarioError(f'{here}: expected at least 3 [x, y] vertices')
        if not np.all(np.isfinite(arr)):
            raise ScenarioError(f'{here}: vertices must be finite')
        area = polygon_signed_area(arr)
        if area <= 0.0:
            raise ScenarioError(f'{here}: vertices must be counter-clockwise '
                                f'(signed area {area:.3f}); reverse their order')
        polygons.append(arr)
    segs = obstacles.get('segments') or []
    try:
        segments = np.array(segs, dtype=float).reshape(-1, 2, 2)
    except (TypeError, ValueError):
        raise ScenarioError(f'{where}: obstacles.segments: expected [[x, y], [x, y]] '
                            'pairs') from None
    if not np.all(np.isfinite(segments)):
        raise ScenarioError(f'{where}: obstacles.segments must be finite')
    if len(segments) and np.any(np.linalg.norm(segments[:, 1] - segments[:, 0], axis=1) == 0):
        raise ScenarioError(f'{where}: obstacles.segments has a zero-length segment')
    return polygons, segments


def _generate(spec, defaults, scenario, where):
    here = f'{where}: generator'
    kind = spec.get('type')
    if kind not in GENERATOR_KEYS:
        raise ScenarioError(f'{here}: type must be one of {tuple(GENERATOR_KEYS)}, got '
                            f'{kind!r}{suggest_name(kind, GENERATOR_KEYS)}')
    _check_keys(spec, GENERATOR_KEYS[kind], f'{here} ({kind})')
    count = spec.get('count', 8)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ScenarioError(f'{here}: count must be a positive integer, got {count!r}')
    if kind == 'circle':
        poses = _circle(count, _positive(spec.get('spacing', 1.4), f'{here}: spacing'),
                        _positive(spec.get('min_ring_radius', 2.0), f'{here}: min_ring_radius'))
    elif kind == 'crossing':
        poses = _crossing(count, _positive(spec.get('spacing', 0.9), f'{here}: spacing'),
                          _positive(spec.get('distance', 4.0), f'{here}: distance'))
    else:
        poses = _random(count, spec, defaults, scenario, here)
    width = len(str(count - 1))
    return [_make_robot(f'robot{i:0{width}d}', start, goal, defaults, here)
            for i, (start, goal) in enumerate(poses)]


def _facing(start_xy, goal_xy):
    return math.atan2(goal_xy[1] - start_xy[1], goal_xy[0] - start_xy[0])


def _circle(count, spacing, min_ring_radius):
    ring = max(min_ring_radius, count * spacing / (2.0 * math.pi))
    poses = []
    for i in range(count):
        a = 2.0 * math.pi * i / count
        start = (ring * math.cos(a), ring * math.sin(a))
        goal = (-start[0], -start[1])
        poses.append((start + (_facing(start, goal),), goal))
    return poses


def _crossing(count, spacing, distance):
    groups = (count + 1) // 2, count // 2
    # Far enough out that the two lines do not overlap at their starts.
    distance = max(distance, 0.5 * spacing * max(groups) + spacing)
    poses = []
    for i in range(count):
        group, k = i % 2, i // 2
        offset = (k - 0.5 * (groups[group] - 1)) * spacing
        if group == 0:   # west -> east
            start, goal = (-distance, offset), (distance, offset)
        else:            # south -> north
            start, goal = (offset, -distance), (offset, distance)
        poses.append((start + (_facing(start, goal),), goal))
    return poses


def _random(count, spec, defaults, scenario, here):
    if scenario.arena is None:
        raise ScenarioError(f'{here}: the random generator needs an "arena"')
    seed = spec.get('seed', 0)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ScenarioError(f'{here}: seed must be an integer, got {seed!r}')
    radius = _positive(defaults['radius'], f'{here}: robot radius')
    min_sep = _positive(spec.get('min_separation', 4.0 * radius), f'{here}: min_separation')
    min_travel = float(spec.get('min_travel', 3.0))
    clearance = float(spec.get('clearance', 2.0 * radius))
    rng = np.random.default_rng(seed)
    xmin, ymin, xmax, ymax = scenario.arena
    lo = np.array([xmin, ymin]) + radius + clearance
    hi = np.array([xmax, ymax]) - radius - clearance
    if np.any(lo >= hi):
        raise ScenarioError(f'{here}: the arena is too small for robots of radius {radius}')

    def sample(taken):
        for _ in range(MAX_RANDOM_TRIES):
            p = rng.uniform(lo, hi)
            if scenario.obstacle_distance(p[None])[0] < radius + clearance:
                continue
            if taken and np.min(np.linalg.norm(np.array(taken) - p, axis=1)) < min_sep:
                continue
            return p
        raise ScenarioError(f'{here}: could not place {count} robots in the arena; lower count, '
                            'min_separation or clearance, or enlarge the arena')

    starts, goals = [], []
    for _ in range(count):
        starts.append(sample(starts))
    for s in starts:
        for _ in range(MAX_RANDOM_TRIES):
            g = sample(goals)
            if np.linalg.norm(g - s) >= min_travel:
                break
        else:
            raise ScenarioError(f'{here}: could not find goals {min_travel} m from the starts')
        goals.append(g)
    return [(tuple(s) + (_facing(s, g),), tuple(g)) for s, g in zip(starts, goals)]
