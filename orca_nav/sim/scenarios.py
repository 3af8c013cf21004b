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
      footprint: [[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]  # or none (a disc):
                                   # [x, y] in the base frame, x forward [m]; overrides radius
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

A scenario with a ``map`` is simulated against the map's occupied cells (the scans see the outlines
of the occupied cells, orca_nav.core.routes.grid.GridMap.wall_segments, and the demo's obstacle
clearance is the distance to the nearest occupied cell) as well as its polygons and segments.
"""

import os
from pathlib import Path

from orca_nav.control.footprint import footprint_text
from orca_nav.sim.scenario_model import (  # noqa: F401 -- the model, read from here too
    CONTACT_TOLERANCE, polygon_signed_area, Robot, Scenario, ScenarioError, suggest_name,
    walker_pose)
from orca_nav.sim.scenario_parse import (  # noqa: F401 -- the parsing, read from here too
    DEFAULT_KEYS, GENERATOR_KEYS, OBSTACLE_KEYS, ROBOT_DEFAULTS, ROBOT_KEYS, scenario_from_dict,
    TOP_KEYS, validate, WALKER_DEFAULTS, WALKER_KEYS)
import yaml


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
    raise ScenarioError(f'unknown scenario {name_or_path!r}{suggest_name(name_or_path, names)}; '
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


def node_parameters(scenario):
    """
    Per-robot parameters of the orca_nav node for this scenario, as plain lists.

    Returns a dict: robots (commanded names), observed_robots (names), and per robot of
    both, commanded first: radius, footprint (Nav2's string, '' for none), max_speed,
    max_angular_speed, drive, avoidance_weight, avoidance_group, groups_to_ignore (lists in
    the order of ``robots + observed_robots``).
    The demo and the launch file map these onto the node's parameters. Walkers are not in
    them: the node knows nothing of them.
    """
    known = [r for r in scenario.robots if not r.walker]
    robots = ([r for r in known if not r.observed] + [r for r in known if r.observed])
    return {
        'robots': [r.name for r in robots if not r.observed],
        'observed_robots': [r.name for r in robots if r.observed],
        'radius': [float(r.radius) for r in robots],
        'footprint': [footprint_text(r.footprint) if r.footprint else '' for r in robots],
        'max_speed': [float(r.max_speed) for r in robots],
        'max_angular_speed': [float(r.max_angular_speed) for r in robots],
        'drive': [r.drive for r in robots],
        'avoidance_weight': [float(r.avoidance_weight) for r in robots],
        'avoidance_group': [r.avoidance_group for r in robots],
        'groups_to_ignore': [list(r.groups_to_ignore) for r in robots],
    }
