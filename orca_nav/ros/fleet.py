"""
Robots list + params file -> the orca_nav nodes to start. Pure Python, no launch imports.

The launch files (launch/orca_nav.launch.py, launch/orca_nav_decentralised.launch.py) only turn
launch arguments into calls of ``plan_nodes`` and the answer into ``launch_ros`` actions, so all
the logic is here and tested without a ROS install.

Layouts:

- ``central``: one node commands every robot (``robots`` = the fleet).
- ``decentralised``: one node per robot, in the robot's namespace (``/robot1/orca_nav``), each
  commanding its own robot and watching the others' odometry (``observed_robots``) over DDS, as
  when every robot runs its own computer.

Example::

    >>> [(s.namespace, s.robots, s.observed_robots)
    ...  for s in plan_nodes('decentralised', 'robot1..robot3')]
    [('robot1', ['robot1'], ['robot2', 'robot3']), ('robot2', ['robot2'], ['robot1', 'robot3']),
     ('robot3', ['robot3'], ['robot1', 'robot2'])]
"""

from dataclasses import dataclass, field
import difflib
import re

from orca_nav.ros import params as P
import yaml

LAYOUTS = ('central', 'decentralised')
NODE_NAME = 'orca_nav'
# "robot1..robot8": a numbered range of robot names with a common prefix.
_RANGE = re.compile(r'^([A-Za-z][A-Za-z0-9_]*?)(\d+)\.\.([A-Za-z][A-Za-z0-9_]*?)(\d+)$')


class FleetError(ValueError):
    """A robots list or params file that cannot work, with the reason."""


@dataclass
class NodeSettings:
    """One orca_nav node to start: name, namespace and its parameters (what launch_ros needs)."""

    name: str
    namespace: str
    robots: list
    observed_robots: list
    parameters: list = field(default_factory=list)  # params file path(s), then a dict


def parse_robots(text):
    """
    Parse robot names from a launch argument (or a list).

    Accepts ``'robot1,robot2'``, ``'robot1 robot2'``, ``'[robot1, robot2]'`` or a numbered
    range ``'robot1..robot8'``, mixed as you like.

    Raises FleetError on names that are not ROS name tokens or on repeated names.
    """
    if isinstance(text, (list, tuple)):
        tokens = [str(t) for t in text]
    else:
        tokens = [t for t in re.split(r'[\s,\[\]\'"]+', str(text)) if t]
    names = []
    for token in tokens:
        m = _RANGE.match(token)
        if m:
            prefix, first, prefix2, last = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
            if prefix != prefix2 or last < first:
                raise FleetError(f'robot range {token!r} must look like robot1..robot8')
            names.extend(f'{prefix}{k}' for k in range(first, last + 1))
        else:
            names.append(token)
    for name in names:
        if not P.ROBOT_NAME.match(name):
            raise FleetError(f'robot name {name!r} is not a valid ROS name token')
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise FleetError(f'robot names repeated: {", ".join(repeated)}')
    return names


def _flatten(mapping, prefix=''):
    out = {}
    for key, value in mapping.items():
        name = f'{prefix}{key}'
        if isinstance(value, dict):
            out.update(_flatten(value, name + '.'))
        else:
            out[name] = value
    return out


def _node_sections(data, node_name, namespace):
    """Yield the ros__parameters mappings of a params file that reach this node, in order."""
    ns = namespace.strip('/')
    full = f'/{ns}/{node_name}' if ns else f'/{node_name}'
    keys = ['/**', f'/**/{node_name}', node_name.lstrip('/') if not ns else None,
            full.lstrip('/'), full]
    for key in keys:
        if key and isinstance(data.get(key), dict) and 'ros__parameters' in data[key]:
            yield data[key]['ros__parameters'] or {}
    # Nested form: robot1: orca_nav: ros__parameters: ...
    section = data
    for part in ns.split('/') if ns else []:
        section = section.get(part) if isinstance(section, dict) else None
    if isinstance(section, dict) and ns:
        inner = section.get(node_name)
        if isinstance(inner, dict) and 'ros__parameters' in inner:
            yield inner['ros__parameters'] or {}


def read_params_file(path, node_name=NODE_NAME, namespace=''):
    """
    Return the parameters a params file gives the node ``namespace/node_name``, flattened.

    Follows ROS 2's matching rules: ``/**`` (every node), ``/**/<node>``, the node's full
    name, and the nested ``<ns>: <node>: ros__parameters:`` form. A bare ``<node>:`` key only
    reaches a node without a namespace (measured: it does not reach ``/robot1/orca_nav``).
    """
    with open(path) as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict):
        raise FleetError(f'{path}: a params file is a mapping of node names')
    values = {}
    for section in _node_sections(data, node_name, namespace):
        values.update(_flatten(section))
    return values


def check_node_parameters(values):
    """Validate a node's complete parameter set (defaults + given values); raise FleetError."""
    robots = values.get('robots') or []
    observed = values.get('observed_robots') or []
    merged = P.defaults(robots, observed)
    for name in values:
        # Overrides of robots outside this node's fleet are allowed (a shared file), unknown
        # names are not: ROS 2 would ignore a misspelt parameter silently.
        robot_override = name.partition('.')[2] in P.ROBOT_BY_NAME
        if (name not in merged and not robot_override and name != 'use_sim_time'
                and not name.startswith('qos_')):
            close = difflib.get_close_matches(name, list(merged), n=1, cutoff=0.6)
            hint = f' (did you mean {close[0]!r}?)' if close else ''
            raise FleetError(f'unknown parameter {name!r}{hint}')
    merged.update(values)
    error = P.validate(merged)
    if error:
        raise FleetError(error)
    return merged


def per_robot_parameters(robots, **lists):
    """
    Flat per-robot overrides from parallel lists, e.g. ``radius=[0.2, 0.3]``.

    Keys: radius, max_speed, max_angular_speed, drive, odom_offset (each a list as long as
    ``robots``, or None). Returns ``{'robot1.radius': 0.2, ...}`` for a params dict.
    """
    out = {}
    for key, values in lists.items():
        if values is None:
            continue
        if key not in P.ROBOT_BY_NAME:
            raise FleetError(f'unknown per-robot parameter {key!r}; known: '
                             f'{", ".join(P.ROBOT_BY_NAME)}')
        if len(values) != len(robots):
            raise FleetError(f'{key} has {len(values)} values for {len(robots)} robots')
        for robot, value in zip(robots, values):
            if P.ROBOT_BY_NAME[key].type == 'double':
                value = float(value)
            elif P.ROBOT_BY_NAME[key].type == 'double_array':
                value = [float(v) for v in value]
            out[P.robot_param_name(robot, key)] = value
    return out


def plan_nodes(layout, robots='', params_file=None, node_name=NODE_NAME, namespace='',
               overrides=None):
    """
    Plan the orca_nav nodes of a layout: NodeSettings, checked before anything starts.

    layout : 'central' or 'decentralised'
    robots : names (list or launch-argument text, see parse_robots); empty = the ``robots`` of
        the params file
    params_file : path of a params file for every node, or None
    namespace : central layout only: the node's namespace (topics stay /<robot>/...)
    overrides : dict of parameters for every node, applied after the params file
    Raises FleetError with the reason when the result could not run.
    """
    if layout not in LAYOUTS:
        raise FleetError(f'layout must be one of {", ".join(LAYOUTS)}, got {layout!r}')
    names = parse_robots(robots) if robots else []
    overrides = dict(overrides or {})
    if not names:
        file_values = read_params_file(params_file, node_name, namespace) if params_file else {}
        names = parse_robots(overrides.get('robots') or file_values.get('robots') or [])
    if not names:
        raise FleetError('no robots: give the robots launch argument (e.g. robots:=robot1,robot2)'
                         ' or a robots list in the params file')
    if layout == 'central':
        plans = [(namespace.strip('/'), names, [])]
    else:
        plans = [(r, [r], [o for o in names if o != r]) for r in names]
    out = []
    for ns, own, observed in plans:
        given = read_params_file(params_file, node_name, ns) if params_file else {}
        given.update(overrides)
        given['robots'] = own
        given['observed_robots'] = observed
        if layout != 'central' and 'observed_reciprocate' not in overrides:
            # Every observed robot runs orca_nav too: it takes its share of the avoiding
            # (the params file's value is the central layout's; a launch override wins).
            given['observed_reciprocate'] = True
        check_node_parameters(given)
        launch_params = dict(overrides)
        launch_params['robots'] = own
        if layout != 'central':
            launch_params['observed_reciprocate'] = given['observed_reciprocate']
        if observed:  # an empty list cannot be typed by ROS 2: leave the default instead
            launch_params['observed_robots'] = observed
        out.append(NodeSettings(name=node_name, namespace=ns, robots=own,
                                observed_robots=observed,
                                parameters=([params_file] if params_file else [])
                                + [launch_params]))
    return out
