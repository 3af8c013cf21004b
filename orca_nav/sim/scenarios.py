"""
Scenarios for the simulator and the demo: load, validate and generate them.

A scenario is a YAML file in ``config/scenarios/`` (or any path) that lists robots, the
static obstacles of the world and, optionally, walkers (people on scripted paths). Only the
simulator knows the obstacles and the walkers; the orca_nav node learns them from laser scans.
ROS-free: plain dataclasses and numpy arrays.

Example::

    scenario = load_scenario('circle', robots=6, drive='differential')
    for robot in scenario.robots:
        print(robot.name, robot.start, robot.goal)

File format (every key optional unless noted)::

    description: Circle swap.
    timeout: 60.0                  # suggested demo timeout [s]
    robot_defaults:                # applied to every robot that does not set the key
      radius: 0.2                  # [m]
      max_speed: 0.5               # [m/s]
      max_angular_speed: 2.0       # [rad/s]
      drive: holonomic             # holonomic | differential
      avoidance_weight: 0.5        # 0..1: 1 keeps its course, the others avoid it
      avoidance_group: default     # a name; groups_to_ignore: names this robot does not avoid
      groups_to_ignore: []
    robots:                        # either robots ...
      - {name: r0, start: [x, y, yaw], goal: [x, y]}
      - {name: p0, start: [x, y], goal: [x, y], observed: true}  # see below
    generator:                     # ... or a generator (see GENERATOR_KEYS)
      type: circle
      count: 10
    obstacles:
      polygons: [[[x, y], ...]]    # counter-clockwise, >= 3 vertices
      segments: [[[x, y], [x, y]]] # walls, solid from both sides
    arena: [xmin, ymin, xmax, ymax] # plot and /map extent; the random generator samples in it
    map: rooms.yaml                # a map_server map (path relative to this file): its
                                   # occupied cells are walls too
    walkers:                       # people on scripted paths (see below): name and
      - {name: w0, waypoints: [[x, y], [x, y]], radius: 0.25, speed: 0.5, loop: false,
         start_time: 0.0}          # waypoints (>= 2 [x, y]) required, the rest default as shown

An ``observed`` robot does not take commands: the simulator drives it straight to its goal at
its max_speed and the node only observes it (``observed_robots``), like a robot under manual
control or another vendor's AGV; it appears in the scans and counts in the contact metrics.

A ``walker`` is a person (or a robot nobody told the node about) on a scripted path: the node
knows nothing of it (no topics, no parameters), it ignores everything and appears only in the
simulated scans and in the demo's contact metrics (robot-walker contacts; walkers do not arrive
and are not judged against obstacles or each other). It stands at its first waypoint until
``start_time`` [s of simulated time], then walks the waypoints at ``speed`` [m/s], facing where
it goes, and stands at the last one; with ``loop: true`` it walks from the last waypoint back
to the first and round again, forever. Its name shares the robots' namespace. Walkers come
after the robots in ``Scenario.robots`` (a ``Robot`` with ``walker`` set: start = the first
waypoint facing the second, goal = the last, max_speed = speed, drive holonomic), so every
per-robot array covers them; ``Scenario.walkers`` marks their rows. Their paths may cross
anything: only a walker standing on a robot's start is refused. The robot count override
(``robots``) counts robots only: the walkers are always kept.

A scenario with a ``map`` is simulated against the map's occupied cells (the scans see the
outlines of the occupied cells, orca_nav.core.grid.GridMap.wall_segments, and the demo's obstacle
clearance is the distance to the nearest occupied cell) as well as its polygons and segments.
"""

from dataclasses import dataclass, field, replace
import difflib
import math
import os
from pathlib import Path

import numpy as np
from orca_nav.control.parameters import ROBOT_NAME
from orca_nav.core.drive import DRIVES
from orca_nav.core.geometry import point_segment_distance, points_in_polygon
from orca_nav.core.raycast import polygon_edges
import yaml


TOP_KEYS = ('description', 'timeout', 'robot_defaults', 'robots', 'generator', 'obstacles',
            'arena', 'map', 'walkers')
ROBOT_KEYS = ('name', 'start', 'goal', 'radius', 'max_speed', 'max_angular_speed', 'drive',
              'avoidance_weight', 'avoidance_group', 'groups_to_ignore', 'observed')
DEFAULT_KEYS = ('radius', 'max_speed', 'max_angular_speed', 'drive', 'avoidance_weight',
                'avoidance_group', 'groups_to_ignore')
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

ROBOT_DEFAULTS = {'radius': 0.2, 'max_speed': 0.5, 'max_angular_speed': 2.0,
                  'drive': 'holonomic', 'avoidance_weight': 0.5, 'avoidance_group': 'default',
                  'groups_to_ignore': []}
CONTACT_TOLERANCE = 1e-3  # [m] overlap smaller than this counts as touching, not colliding
MAX_RANDOM_TRIES = 20000  # rejection-sampling budget of the random generator


class ScenarioError(ValueError):
    """A scenario file or generator spec that cannot be used, with a message to act on."""


@dataclass(frozen=True)
class Robot:
    """
    One robot of a scenario.

    start : (x [m], y [m], yaw [rad]) in the global frame ``map``
    goal : (x [m], y [m])
    A walker (``walker`` set) follows ``waypoints`` ((x, y) tuples) at max_speed from
    ``start_time`` [s], round again with ``loop``; see walker_pose.
    """

    name: str
    start: tuple
    goal: tuple
    radius: float
    max_speed: float
    max_angular_speed: float
    drive: str
    avoidance_weight: float = 0.5
    avoidance_group: str = 'default'
    groups_to_ignore: tuple = ()
    observed: bool = False   # driven straight to its goal by the simulator, commands ignored
    walker: bool = False     # a person on a scripted path: unknown to the node, in the scans
    waypoints: tuple = ()    # walker: its path, ((x, y), ...), >= 2 points
    loop: bool = False       # walker: from the last waypoint back to the first, forever
    start_time: float = 0.0  # walker: [s] of simulated time it stands still before walking

    @property
    def straight_line(self):
        """Distance from start to goal [m]."""
        return math.hypot(self.goal[0] - self.start[0], self.goal[1] - self.start[1])


@dataclass
class Scenario:
    """
    Robots and static obstacles of one run.

    polygons : list of (K, 2) float arrays, counter-clockwise
    segments : (M, 2, 2) float array of free walls
    arena : (xmin, ymin, xmax, ymax) or None
    map_file : path of a map_server YAML whose occupied cells are walls too, or None
    """

    name: str
    robots: list
    polygons: list = field(default_factory=list)
    segments: np.ndarray = field(default_factory=lambda: np.zeros((0, 2, 2)))
    arena: tuple = None
    timeout: float = 60.0
    description: str = ''
    map_file: Path = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def names(self):
        """Robot names in order."""
        return [r.name for r in self.robots]

    @property
    def observed(self):
        """(N,) bool: robots the simulator drives itself (the node only observes them)."""
        return np.array([r.observed for r in self.robots], dtype=bool)

    @property
    def walkers(self):
        """(N,) bool: the rows of walkers, people on scripted paths unknown to the node."""
        return np.array([r.walker for r in self.robots], dtype=bool)

    @property
    def robot_count(self):
        """Return the number of robots (walkers are no robots)."""
        return sum(1 for r in self.robots if not r.walker)

    @property
    def radii(self):
        """(N,) robot radii [m]."""
        return np.array([r.radius for r in self.robots], dtype=float)

    @property
    def starts(self):
        """(N, 3) start poses x, y, yaw."""
        return np.array([r.start for r in self.robots], dtype=float).reshape(-1, 3)

    @property
    def goals(self):
        """(N, 2) goal positions."""
        return np.array([r.goal for r in self.robots], dtype=float).reshape(-1, 2)

    def occupancy(self):
        """
        Return the scenario's map file as an occupancy grid, or None without a map (cached).

        Returns (data int8 (H*W,), width, height, resolution, (x, y, yaw) origin), values
        100 / 0 / -1 as map_server publishes them (see orca_nav.sim.mapfile.load_map_yaml).
        """
        if self.map_file is None:
            return None
        if 'occupancy' not in self._cache:
            from orca_nav.sim.mapfile import load_map_yaml, MapFileError
            try:
                self._cache['occupancy'] = load_map_yaml(self.map_file)
            except MapFileError as exc:
                raise ScenarioError(str(exc)) from None
        return self._cache['occupancy']

    def grid_map(self):
        """
        Return the map file as an orca_nav.core.grid.GridMap (walls = occupied cells), or None.

        Unknown cells are free here: in the simulated world only occupied cells are solid.
        """
        occupancy = self.occupancy()
        if occupancy is None:
            return None
        if 'grid' not in self._cache:
            from orca_nav.core.grid import GridMap, MapError
            data, width, height, resolution, origin = occupancy
            try:
                self._cache['grid'] = GridMap.from_occupancy(
                    data, width, height, resolution, origin, unknown_is_free=True)
            except MapError as exc:
                raise ScenarioError(f'{self.map_file}: {exc}') from None
        return self._cache['grid']

    def shape_segments(self):
        """Every polygon edge and free wall of the file's obstacles as an (M, 2, 2) array."""
        return np.concatenate([self.segments.reshape(-1, 2, 2),
                               polygon_edges(self.polygons)], axis=0).astype(float)

    def obstacle_segments(self):
        """
        Every static wall as an (M, 2, 2) array (for ray casting).

        The polygon edges, the free walls and the outlines of the map's occupied cells.
        """
        segments = self.shape_segments()
        grid = self.grid_map()
        if grid is not None:
            segments = np.concatenate([segments, grid.wall_segments()], axis=0)
        return segments

    def shape_distance(self, points):
        """
        Signed distance from each point to the nearest polygon or free wall (not the map).

        points : (P, 2) array [m]
        Returns (P,) [m]: negative inside a polygon, inf when there are none.
        """
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        segs = self.shape_segments()
        if len(segs) == 0:
            return np.full(len(points), np.inf)
        dist = np.concatenate([point_segment_distance(chunk, segs).min(axis=1)
                               for chunk in np.array_split(points, 1 + len(points) // 4096)])
        for poly in self.polygons:
            dist = np.where(points_in_polygon(points, poly), -dist, dist)
        return dist

    def obstacle_distance(self, points):
        """
        Signed distance from each point to the nearest static obstacle.

        points : (P, 2) array [m]
        Returns (P,) [m]: negative inside a polygon, 0 in an occupied map cell (the distance
        to a map cell is exact to about one cell), inf when the world has no obstacles.
        """
        dist = self.shape_distance(points)
        grid = self.grid_map()
        if grid is not None and len(dist):
            dist = np.minimum(dist, grid.distance_to_obstacle(
                np.asarray(points, dtype=float).reshape(-1, 2)))
        return dist

    def with_drive(self, drive):
        """Return a copy with every robot's drive set to ``drive`` (walkers stay holonomic)."""
        _check_drive(drive, 'drive')
        return replace(self, robots=[r if r.walker else replace(r, drive=drive)
                                     for r in self.robots])


def walker_pose(robot, t):
    """
    Return the pose (x, y, yaw) of a walker at ``t`` [s] of simulated time on its path.

    It stands at its first waypoint until start_time, then moves max_speed * (t - start_time)
    metres along its waypoints (round again from the last to the first with ``loop``) and
    stands at the last one; yaw is the direction of the leg it is on.
    """
    points = np.asarray(robot.waypoints, dtype=float).reshape(-1, 2)
    if robot.loop:
        points = np.concatenate([points, points[:1]])
    legs = np.diff(points, axis=0)
    lengths = np.hypot(legs[:, 0], legs[:, 1])
    total = float(lengths.sum())
    if len(legs) == 0 or total <= 0.0:
        return float(points[0, 0]), float(points[0, 1]), float(robot.start[2])
    ends = np.cumsum(lengths)
    s = robot.max_speed * max(0.0, t - robot.start_time)
    s = math.fmod(s, total) if robot.loop else min(s, total)
    k = min(int(np.searchsorted(ends, s, side='right')), len(legs) - 1)
    while lengths[k] <= 0.0 and k > 0:   # a repeated waypoint: the leg before it
        k -= 1
    frac = min(max((s - (ends[k] - lengths[k])) / lengths[k], 0.0), 1.0) if lengths[k] else 0.0
    x, y = points[k] + frac * legs[k]
    yaw = math.atan2(legs[k, 1], legs[k, 0]) if lengths[k] else float(robot.start[2])
    return float(x), float(y), yaw


def polygon_signed_area(polygon):
    """Shoelace area of a (K, 2) polygon: positive when counter-clockwise."""
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def scenario_dirs():
    """
    Directories searched for scenario names, in order.

    The source tree next to this module, the installed share directory (ament index), and
    ``config/scenarios`` under the working directory (a source checkout run from its root).
    """
    dirs = [Path(__file__).resolve().parent.parent / 'config' / 'scenarios']
    try:
        from ament_index_python.packages import get_package_share_directory
        dirs.append(Path(get_package_share_directory('orca_nav')) / 'config' / 'scenarios')
    except Exception:  # noqa: B902 -- package not installed or ament_index missing
        pass
    dirs.append(Path.cwd() / 'config' / 'scenarios')
    return [d for d in dirs if d.is_dir()]


def available_scenarios():
    """Names of the scenario files found in scenario_dirs(), sorted."""
    return sorted({p.stem for d in scenario_dirs() for p in d.glob('*.yaml')})


def scenario_path(name_or_path):
    """Resolve a scenario name ('circle') or a path to a YAML file."""
    path = Path(os.path.expanduser(str(name_or_path)))
    if path.suffix in ('.yaml', '.yml') or os.sep in str(name_or_path):
        if not path.is_file():
            raise ScenarioError(f'scenario file not found: {path}')
        return path
    for d in scenario_dirs():
        candidate = d / f'{name_or_path}.yaml'
        if candidate.is_file():
            return candidate
    names = available_scenarios()
    raise ScenarioError(f'unknown scenario {name_or_path!r}{_suggest(name_or_path, names)}; '
                        f'available: {", ".join(names) or "none found"}')


def load_scenario(name_or_path, robots=None, drive=None):
    """
    Load, generate and validate a scenario.

    name_or_path : a name from available_scenarios() or a path to a YAML file
    robots : robot count override (None = as in the file). Generated scenarios are regenerated
        with this count; scenarios with an explicit robot list keep their first ``robots``.
        Walkers are not counted: they are always kept.
    drive : 'holonomic' | 'differential' | None (as in the file) for every robot
    Raises ScenarioError with a message naming the offending key.
    """
    path = scenario_path(name_or_path)
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ScenarioError(f'{path}: invalid YAML: {exc}') from None
    return scenario_from_dict(data, name=path.stem, robots=robots, drive=drive,
                              source=str(path), base_dir=path.parent)


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
        i, j = np.unravel_index(np.argmin(dist - limit), dist.shape)
        if len(names) > 1 and dist[i, j] < limit[i, j]:
            if walker[i]:
                i, j = j, i
            who = (f'robot {names[i]} and walker {names[j]}' if walker[j]
                   else f'robots {names[i]} and {names[j]}')
            raise ScenarioError(f'{where}: {who} overlap at their {label}s ({dist[i, j]:.3f} '
                                f'm apart, radii sum {limit[i, j]:.3f} m)')
        clearance = scenario.obstacle_distance(pts[robots]) - radii[robots]
        k = int(robots[np.argmin(clearance)])
        if clearance.min() < 0.0:
            raise ScenarioError(f'{where}: robot {names[k]} overlaps an obstacle at its '
                                f'{label} {tuple(np.round(pts[k], 3))}')
        _check_on_map(scenario, pts, label, where)


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


def node_parameters(scenario):
    """
    Per-robot parameters of the orca_nav node for this scenario, as plain lists.

    Returns a dict: robots (commanded names), observed_robots (names), and per robot of
    both, commanded first: radius, max_speed, max_angular_speed, drive, avoidance_weight,
    avoidance_group, groups_to_ignore (lists in the order of ``robots + observed_robots``).
    The demo and the launch file map these onto the node's parameters. Walkers are not in
    them: the node knows nothing of them.
    """
    known = [r for r in scenario.robots if not r.walker]
    robots = ([r for r in known if not r.observed] + [r for r in known if r.observed])
    return {
        'robots': [r.name for r in robots if not r.observed],
        'observed_robots': [r.name for r in robots if r.observed],
        'radius': [float(r.radius) for r in robots],
        'max_speed': [float(r.max_speed) for r in robots],
        'max_angular_speed': [float(r.max_angular_speed) for r in robots],
        'drive': [r.drive for r in robots],
        'avoidance_weight': [float(r.avoidance_weight) for r in robots],
        'avoidance_group': [r.avoidance_group for r in robots],
        'groups_to_ignore': [list(r.groups_to_ignore) for r in robots],
    }


# --- parsing helpers ---------------------------------------------------------------------

def _suggest(word, valid):
    close = difflib.get_close_matches(str(word), list(valid), n=1, cutoff=0.5)
    return f' (did you mean {close[0]!r}?)' if close else ''


def _check_keys(mapping, valid, where):
    if not isinstance(mapping, dict):
        raise ScenarioError(f'{where}: expected a mapping, got {type(mapping).__name__}')
    for key in mapping:
        if key not in valid:
            raise ScenarioError(f'{where}: unknown key {key!r}{_suggest(key, valid)}; '
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


def _check_drive(drive, where):
    if drive not in DRIVES:
        raise ScenarioError(f'{where}: drive must be one of {DRIVES}, got {drive!r}'
                            f'{_suggest(drive, DRIVES)}')
    return drive


def _make_robot(name, start, goal, params, where):
    if not isinstance(name, str) or not ROBOT_NAME.match(name):
        raise ScenarioError(f'{where}: robot name {name!r} must match {ROBOT_NAME.pattern} '
                            '(it becomes the topic namespace)')
    start = _floats(start, 3, f'{where}: start') if len(start) == 3 else \
        _floats(start, 2, f'{where}: start') + (0.0,)
    return Robot(name=name, start=start, goal=_floats(goal, 2, f'{where}: goal'),
                 radius=_positive(params['radius'], f'{where}: radius'),
                 max_speed=_positive(params['max_speed'], f'{where}: max_speed'),
                 max_angular_speed=_positive(params['max_angular_speed'],
                                             f'{where}: max_angular_speed'),
                 drive=_check_drive(params['drive'], f'{where}: drive'),
                 avoidance_weight=_fraction(params['avoidance_weight'],
                                            f'{where}: avoidance_weight'),
                 avoidance_group=_group(params['avoidance_group'], f'{where}: avoidance_group'),
                 groups_to_ignore=tuple(_group(g, f'{where}: groups_to_ignore')
                                        for g in _list(params['groups_to_ignore'],
                                                       f'{where}: groups_to_ignore')),
                 observed=_flag(params.get('observed', False), f'{where}: observed'))


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
                            f'{kind!r}{_suggest(kind, GENERATOR_KEYS)}')
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
