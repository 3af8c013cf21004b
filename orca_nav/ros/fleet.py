"""
Launch arguments + robots list + params file -> the orca_nav nodes to start. No launch imports.

The launch files (launch/orca_nav.launch.py, launch/orca_nav_decentralised.launch.py,
launch/sim_demo.launch.py) only hand their arguments, as the strings ``ros2 launch`` gives, to
``plan_launch`` (or the sim demo's helpers here) and turn the answer into ``launch_ros``
actions, so all the logic is here and tested without a ROS install. Everything a node would
refuse at start-up is refused here first, with the reason, before anything starts.

Layouts:

- ``central``: one node commands every robot (``robots`` = the fleet).
- ``decentralised``: one node per robot, in the robot's namespace (``/robot1/orca_nav``), each
  commanding its own robot and watching the others' odometry (``observed_robots``) over DDS, as
  when every robot runs its own computer (``local_robots``: start only this computer's).

The central layout can be split (``nodes:=K``, K > 1): K nodes ``orca_nav_0`` ..
``orca_nav_<K-1>`` in the fleet's namespace, node k commanding the k-th contiguous share of the
robots list (shares differ by at most one robot, the first ones larger) and observing every
other robot of the fleet, with ``observed_reciprocate`` true (the observed robots run orca_nav
too and take their share of the avoiding). ``local_nodes``: start only some of the K nodes.

Example::

    >>> [(s.namespace, s.robots, s.observed_robots)
    ...  for s in plan_nodes('decentralised', 'robot1..robot3')]
    [('robot1', ['robot1'], ['robot2', 'robot3']), ('robot2', ['robot2'], ['robot1', 'robot3']),
     ('robot3', ['robot3'], ['robot1', 'robot2'])]
    >>> [(s.name, s.robots, s.observed_robots)
    ...  for s in plan_nodes('central', 'robot1..robot3', nodes=2)]
    [('orca_nav_0', ['robot1', 'robot2'], ['robot3']),
     ('orca_nav_1', ['robot3'], ['robot1', 'robot2'])]
"""

from dataclasses import dataclass, field
import difflib
from pathlib import Path
import re
import signal
import tempfile

from orca_nav.ros import params as P
import yaml

LAYOUTS = ('central', 'decentralised')
NODE_NAME = 'orca_nav'
# ``ros2 launch`` refuses an empty value (``robots:=``): these words say "not given".
DEFAULT = 'default'   # as in the params file (or the scenario)
NONE = 'none'         # params_file:=none: no params file
ALL = 'all'           # local_robots:=all: every robot of the fleet
LOG_LEVELS = ('debug', 'info', 'warn', 'error', 'fatal')
TRUE_WORDS, FALSE_WORDS = ('true', '1', 'yes', 'on'), ('false', '0', 'no', 'off')
# Parameters every rclpy node declares itself (a params file may set them).
NODE_OWN_PARAMS = ('use_sim_time', 'start_type_description_service')
# "robot1..robot8": a numbered range of robot names with a common prefix.
_RANGE = re.compile(r'^([A-Za-z][A-Za-z0-9_]*?)(\d+)\.\.([A-Za-z][A-Za-z0-9_]*?)(\d+)$')

# The arguments of orca_nav.launch.py: (name, default, description). params_file's default is
# the installed config/orca_nav.yaml (the launch file fills it in).
LAUNCH_ARGUMENTS = (
    ('robots', DEFAULT,
     'Robots to command: robot1,robot2 or robot1..robot8 (robot01..robot08 keeps the zeros); '
     'default = the robots list of the params file'),
    ('layout', 'central',
     'central: one node commands every robot; decentralised: one node per robot in its '
     'namespace (<namespace>/<robot>/orca_nav), watching the others'),
    ('nodes', '1',
     'Central layout: split the robots over this many nodes, orca_nav_0 .. orca_nav_<K-1>, '
     'node k commanding the k-th contiguous share of the robots list and observing all the '
     'other robots (observed_reciprocate true); 1 = one node, orca_nav, for every robot'),
    ('local_nodes', ALL,
     "With nodes:=K: start only these of the K nodes (this computer's share, e.g. "
     'local_nodes:=0,1; every computer gives the same robots and nodes); all = every one'),
    ('local_robots', ALL,
     "Decentralised layout: start the nodes of these robots only (this computer's share of "
     'the fleet, e.g. local_robots:=robot3 with the whole fleet in robots or the params '
     'file); all = every robot'),
    ('params_file', None,
     'orca_nav parameters (YAML under /**: ros__parameters, so that they reach every node); '
     "default: the package's config/orca_nav.yaml; none = no file"),
    ('namespace', '/',
     'Namespace of the fleet: the node runs in it (decentralised: in <namespace>/<robot>) and '
     'the robot topics are /<namespace>/<robot>/... (robots_namespace); / = the root'),
    ('use_sim_time', 'false', 'true: use the /clock topic (Gazebo) instead of wall time; false'),
    ('drive', DEFAULT,
     'holonomic or differential for every robot (per-robot drive overrides of the params file '
     'are cleared); default = as in the params file'),
    ('cmd_vel_topic', DEFAULT,
     "Command topic relative to each robot namespace (e.g. cmd_vel_nav in front of Nav2's "
     'velocity smoother); default = as in the params file'),
    ('cmd_vel_stamped', DEFAULT,
     'true: publish TwistStamped (Nav2 on Kilted); false: Twist; default = as in the params '
     'file'),
    ('pose_topic', DEFAULT,
     "Each robot's localisation pose relative to its namespace (e.g. amcl_pose, "
     'PoseWithCovarianceStamped); none = odometry only; default = as in the params file'),
    ('plan_topic', DEFAULT,
     "Each robot's external route relative to its namespace (e.g. plan from Nav2's planner "
     'server); default = as in the params file'),
    ('log_level', 'info', 'Log level of the node(s): ' + ', '.join(LOG_LEVELS)),
)
# Launch configurations that launch and launch_ros set themselves (ros2 launch --launch-prefix,
# PushROSNamespace, SetRemap, SetParameter, ...): not arguments a user misspelt.
LAUNCH_OWN_CONFIGURATIONS = ('launch-prefix', 'launch-prefix-filter', 'ros_namespace',
                             'ros_remaps', 'global_params', 'emulate_tty')


class FleetError(ValueError):
    """A robots list, launch argument or params file that cannot work, with the reason."""


@dataclass
class NodeSettings:
    """One orca_nav node to start: name, namespace, parameters and ROS arguments."""

    name: str
    namespace: str
    robots: list
    observed_robots: list
    parameters: list = field(default_factory=list)  # params file path(s), then a dict
    arguments: list = field(default_factory=list)   # e.g. ['--ros-args', '--log-level', 'info']


def optional(text):
    """
    Return a launch argument's value, or None for "not given" ('' or 'default').

    >>> optional('default'), optional(' '), optional('robot1')
    (None, None, 'robot1')
    """
    text = '' if text is None else str(text).strip()
    return None if text in ('', DEFAULT) else text


def parse_bool(name, text):
    """
    Return a true/false launch argument; anything else is refused (``use_sim_time:=1`` is true).

    >>> parse_bool('use_sim_time', 'True'), parse_bool('use_sim_time', '0')
    (True, False)
    """
    word = str(text).strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise FleetError(f'{name} must be true or false, got {text!r}')


def parse_number(name, text):
    """Return a finite number from a launch argument; FleetError names the argument."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise FleetError(f'{name} must be a number, got {text!r}') from None
    if value != value or value in (float('inf'), float('-inf')):
        raise FleetError(f'{name} must be a finite number, got {text!r}')
    return value


def parse_namespace(text):
    """
    Return a namespace argument without its slashes; '/', '' or 'default' = the root ('').

    >>> parse_namespace('/fleet_a/'), parse_namespace('/')
    ('fleet_a', '')
    """
    text = optional(text) or ''
    if not P.NAMESPACE.match(text):
        raise FleetError(f'namespace must be a ROS namespace such as /fleet_a, got {text!r}')
    return text.strip('/')


def _join(*parts):
    return '/'.join(p for p in parts if p)


def parse_robots(text):
    """
    Parse robot names from a launch argument (or a list).

    Accepts ``'robot1,robot2'``, ``'robot1 robot2'``, ``'[robot1, robot2]'`` or a numbered
    range ``'robot1..robot8'`` (``'robot01..robot08'`` keeps the width), mixed as you like.

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
            names.extend(_expand_range(token, *m.groups()))
        else:
            names.append(token)
    for name in names:
        if not P.ROBOT_NAME.match(name):
            raise FleetError(f'robot name {name!r} is not a valid ROS name token')
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise FleetError(f'robot names repeated: {", ".join(repeated)}')
    return names


def _expand_range(token, prefix, first, prefix2, last):
    """robot1..robot3 -> robot1, robot2, robot3; robot01..robot03 keeps the zero padding."""
    padded = (len(first) > 1 and first[0] == '0') or (len(last) > 1 and last[0] == '0')
    if prefix != prefix2 or int(last) < int(first) or (padded and len(first) != len(last)):
        raise FleetError(f'robot range {token!r} must look like robot1..robot8 (or, with '
                         'zeros, robot01..robot08: both ends of one width)')
    width = len(first) if padded else 1
    return [f'{prefix}{k:0{width}d}' for k in range(int(first), int(last) + 1)]


def parse_node_count(text):
    """
    Parse the ``nodes`` launch argument: a whole number of nodes, at least 1.

    >>> parse_node_count('4'), parse_node_count(' 1 ')
    (4, 1)
    """
    word = str(text).strip()
    if not word.isdigit() or int(word) < 1:
        raise FleetError(f'nodes must be a whole number of nodes, at least 1, got {text!r}')
    return int(word)


def split_robots(names, count):
    """
    Split a robots list into ``count`` contiguous shares, the first ones larger by one at most.

    >>> split_robots(['a', 'b', 'c', 'd', 'e'], 2)
    [['a', 'b', 'c'], ['d', 'e']]
    """
    size, extra = divmod(len(names), count)
    shares, start = [], 0
    for k in range(count):
        end = start + size + (1 if k < extra else 0)
        shares.append(list(names[start:end]))
        start = end
    return shares


def split_node_names(node_name, count):
    """
    Return the names of the nodes of a fleet split over ``count`` nodes.

    >>> split_node_names('orca_nav', 1), split_node_names('orca_nav', 3)
    (['orca_nav'], ['orca_nav_0', 'orca_nav_1', 'orca_nav_2'])
    """
    return [node_name] if count == 1 else [f'{node_name}_{k}' for k in range(count)]


def parse_node_indices(text, count):
    """
    Parse ``local_nodes``: indices of the split nodes to start (``0,2`` or ``0 2``), each once.

    >>> parse_node_indices('2,0', 4)
    [0, 2]
    """
    if isinstance(text, (list, tuple)):
        tokens = [str(t) for t in text]
    else:
        tokens = [t for t in re.split(r'[\s,\[\]]+', str(text)) if t]
    if not tokens:
        raise FleetError('local_nodes names no node: give indices such as local_nodes:=0,1')
    indices = []
    for token in tokens:
        if not token.isdigit() or int(token) >= count:
            raise FleetError(f'local_nodes must be node indices 0..{count - 1} (nodes:={count}), '
                             f'got {token!r}')
        if int(token) in indices:
            raise FleetError(f'local_nodes names node {int(token)} twice')
        indices.append(int(token))
    return sorted(indices)


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
    """Yield (key, ros__parameters mapping) of the params file sections reaching this node."""
    ns = namespace.strip('/')
    full = f'/{ns}/{node_name}' if ns else f'/{node_name}'
    keys = ['/**', f'/**/{node_name}', node_name.lstrip('/') if not ns else None,
            full.lstrip('/'), full]
    for key in keys:
        if key and isinstance(data.get(key), dict) and 'ros__parameters' in data[key]:
            yield key, data[key]['ros__parameters'] or {}
    # Nested form: robot1: orca_nav: ros__parameters: ...
    section = data
    for part in ns.split('/') if ns else []:
        section = section.get(part) if isinstance(section, dict) else None
    if isinstance(section, dict) and ns:
        inner = section.get(node_name)
        if isinstance(inner, dict) and 'ros__parameters' in inner:
            yield f'{ns}: {node_name}:', inner['ros__parameters'] or {}


def _load_params_file(path):
    with open(path) as f:
        data = yaml.safe_load(f) or {}
    if not isinstance(data, dict):
        raise FleetError(f'{path}: a params file is a mapping of node names')
    return data


def read_params_file(path, node_name=NODE_NAME, namespace=''):
    """
    Return the parameters a params file gives the node ``namespace/node_name``, flattened.

    Follows ROS 2's matching rules: ``/**`` (every node), ``/**/<node>``, the node's full
    name, and the nested ``<ns>: <node>: ros__parameters:`` form. A bare ``<node>:`` key only
    reaches a node without a namespace (measured: it does not reach ``/robot1/orca_nav``).
    """
    values = {}
    for _, section in _node_sections(_load_params_file(path), node_name, namespace):
        values.update(_flatten(section))
    return values


def check_split_params_file(path, node_name, namespace, count):
    """
    Refuse a params file with sections for the node by name when the fleet is split.

    With ``nodes:=K`` (K > 1) the nodes are <node_name>_0 .. <node_name>_<K-1>: a section
    ``orca_nav:`` or ``/**/orca_nav:`` reaches none of them, and ROS 2 would drop its
    parameters silently.
    """
    if count == 1:
        return
    sections = _node_sections(_load_params_file(path), node_name, namespace)
    named = [key for key, section in sections if key != '/**' and section]
    if named:
        names = split_node_names(node_name, count)
        raise FleetError(f'{path}: section {named[0]!r} is for the node {node_name}, and with '
                         f'nodes:={count} the nodes are {names[0]} .. {names[-1]}: it would '
                         'reach none of them. Put these parameters under /** (every node) or '
                         "under each node's name")


def _sections(data, path=()):
    """Yield (key as written, node path tokens, ros__parameters) of every section of a file."""
    for key, value in data.items():
        if not isinstance(value, dict):
            continue
        tokens = path + tuple(t for t in str(key).split('/') if t)
        if 'ros__parameters' in value:
            written = ': '.join(list(path) + [str(key)]) + ':' if path else str(key)
            yield written, tokens, value['ros__parameters'] or {}
        else:
            yield from _sections(value, tokens)


def _reaches(tokens, full_name):
    """Whether a section's node path (``**`` any tokens, ``*`` one) matches a node's full name."""
    pattern = ''.join('(/[^/]+)*' if t == '**' else '/[^/]+' if t == '*' else '/' + re.escape(t)
                      for t in tokens)
    return re.fullmatch(pattern, full_name) is not None


def _fleet_nodes(layout, ns, names, node_name, count):
    """Full names of every node of the fleet, on every computer."""
    if layout == 'central':
        return ['/' + _join(ns, n) for n in split_node_names(node_name, count)]
    return ['/' + _join(ns, r, node_name) for r in names]


def _node_named_sections(path, node_name):
    """Yield (key, ros__parameters) of the sections of a file for the node (or a split one)."""
    own = re.compile(rf'{re.escape(node_name)}(_\d+)?')
    for key, tokens, section in _sections(_load_params_file(path)):
        if tokens and own.fullmatch(tokens[-1]):
            yield key, section


def check_sections_reach(path, node_name, full_names):
    """
    Refuse a params file whose sections for the node (by name) reach none of the fleet's nodes.

    ``full_names``: every node of the fleet (``/robot1/orca_nav``, ...), on every computer. A
    bare ``orca_nav:`` reaches only ``/orca_nav`` (measured), so with a namespace (the
    decentralised layout, ``namespace:=fleet``) ROS 2 would drop its parameters silently and
    the robots would run with the defaults.
    """
    own = re.compile(rf'{re.escape(node_name)}(_\d+)?')
    for key, tokens, _ in _sections(_load_params_file(path)):
        if not tokens or not own.fullmatch(tokens[-1]):
            continue
        if not any(_reaches(tokens, name) for name in full_names):
            nodes = full_names[0] + (f' .. {full_names[-1]}' if len(full_names) > 1 else '')
            raise FleetError(f'{path}: section {key!r} reaches no node of this launch (the nodes '
                             f'are {nodes}) and ROS 2 would drop its parameters silently: put '
                             f"them under '/**/{node_name}:' or '/**:'")


def _spec(name):
    """Return the ParamSpec of a fleet or per-robot parameter name, or None."""
    if name in P.FLEET_BY_NAME:
        return P.FLEET_BY_NAME[name]
    return P.ROBOT_BY_NAME.get(name.partition('.')[2]) if '.' in name else None


def yaml_type_error(name, value):
    """
    Return an error message if ROS 2 would refuse the type of this params-file value, else None.

    ROS 2 types a YAML value by how it is written: ``1`` is an integer and is refused for a
    double parameter (the node then dies at start-up), ``[4, 0, 3.14]`` mixes types.
    """
    spec = _spec(name)
    if spec is None:
        return None
    if spec.type == 'double' and isinstance(value, int) and not isinstance(value, bool):
        return (f'{name}: {value!r} is an integer and ROS 2 refuses an integer for a double '
                f'parameter: write {float(value)!r}')
    if (spec.type == 'double_array' and isinstance(value, (list, tuple))
            and any(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        fixed = [float(v) if isinstance(v, (int, float)) else v for v in value]
        return (f'{name}: {value!r} has integers and ROS 2 refuses them in a list of doubles: '
                f'write {fixed!r}')
    return P.check_value(name, spec, value) if name in P.FLEET_BY_NAME else None


def check_node_parameters(values):
    """
    Validate a node's parameters (the given values over the defaults); raise FleetError.

    Refuses what the node would refuse (ranges, types as ROS 2 reads YAML) and names that no
    parameter of the node takes (ROS 2 would ignore a misspelt one silently). Per-robot
    values of robots outside this node are allowed (a params file shared by several nodes).
    Commanded robots are dropped from observed_robots (as the node does). Returns the merged
    set.
    """
    for name, value in values.items():
        error = yaml_type_error(name, value)
        if error:
            raise FleetError(error)
    robots = values.get('robots') or []
    observed = P.without_commanded(robots, values.get('observed_robots') or [])
    merged = P.defaults(robots, observed)
    names = [n for n in values if n not in NODE_OWN_PARAMS]
    misspelt, _ = P.unused_overrides(names, list(merged), list(robots) + observed)
    if misspelt:
        name, hint = misspelt[0]
        raise FleetError(f'unknown parameter {name!r}'
                         + (f' (did you mean {hint!r}?)' if hint else ''))
    merged.update(values)
    merged['observed_robots'] = observed
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
               overrides=None, local_robots=None, nodes=1, local_nodes=None):
    """
    Plan the orca_nav nodes of a layout: NodeSettings, checked before anything starts.

    layout : 'central' or 'decentralised'
    robots : the fleet, names (list or launch-argument text, see parse_robots); empty = the
        ``robots`` of the params file
    params_file : path of a params file for every node, or None
    namespace : the fleet's namespace: the node runs in it (decentralised: in
        <namespace>/<robot>), and unless empty it becomes ``robots_namespace`` (the robots'
        topics are /<namespace>/<robot>/...)
    overrides : dict of parameters for every node, applied after the params file; a ``drive``
        here is every robot's (per-robot drive overrides of the file are cleared)
    local_robots : decentralised only: start the nodes of these robots (names or text) only;
        None = every robot. Each still observes the whole fleet.
    nodes : central only: split the fleet over this many nodes, <node_name>_0 .. _<nodes-1>
        in the fleet's namespace, node k commanding the k-th contiguous share of the robots
        (split_robots); 1 = one node named node_name
    local_nodes : with nodes > 1: start these of the nodes only (indices, or text such as
        '0,2'); None = every one. Each still observes every robot it does not command.
    Every node observes the other robots of the fleet and the params file's observed_robots,
    never the robots it commands; observed_reciprocate is true unless one node commands the
    whole fleet (the observed robots run orca_nav too). Raises FleetError with the reason when
    the result could not run.
    """
    if layout not in LAYOUTS:
        raise FleetError(f'layout must be one of {", ".join(LAYOUTS)}, got {layout!r}')
    ns = parse_namespace(namespace)
    names = parse_robots(robots) if robots else []
    overrides = dict(overrides or {})
    if not names:
        file_values = read_params_file(params_file, node_name, ns) if params_file else {}
        names = parse_robots(overrides.get('robots') or file_values.get('robots') or [])
    count = nodes if isinstance(nodes, int) else parse_node_count(nodes)
    if not names and params_file:
        # The file's robots are in a section that reaches none of the nodes: say so.
        stray = [v['robots'] for _, v in _node_named_sections(params_file, node_name)
                 if v.get('robots')]
        if stray:
            check_sections_reach(params_file, node_name,
                                 _fleet_nodes(layout, ns, parse_robots(stray[0]), node_name,
                                              count))
    if not names:
        raise FleetError('no robots: give the robots launch argument (e.g. robots:=robot1,robot2)'
                         ' or a robots list in the params file')
    local = parse_robots(local_robots) if local_robots else names
    if local_robots and layout == 'central':
        raise FleetError('local_robots is for the decentralised layout (layout:=decentralised)')
    strangers = [r for r in local if r not in names]
    if strangers:
        raise FleetError(f'local_robots {strangers} are not in the fleet {names}')
    if count < 1:
        raise FleetError(f'nodes must be at least 1, got {count}')
    if count > 1 and layout != 'central':
        raise FleetError(f'nodes:={count} splits the central layout; the decentralised layout '
                         'already runs one node per robot')
    if count > len(names):
        raise FleetError(f'nodes:={count} is more nodes than robots ({len(names)}): every node '
                         'must command at least one robot')
    if local_nodes is not None and layout != 'central':
        raise FleetError('local_nodes is for a split central layout (nodes:=K); the '
                         'decentralised layout takes local_robots')
    which = parse_node_indices(local_nodes, count) if local_nodes is not None else range(count)
    if layout == 'central':
        if params_file:
            check_split_params_file(params_file, node_name, ns, count)
    if params_file:
        check_sections_reach(params_file, node_name,
                             _fleet_nodes(layout, ns, names, node_name, count))
    if layout == 'central':
        shares, node_names = split_robots(names, count), split_node_names(node_name, count)
        plans = []
        for k in which:
            own = set(shares[k])
            plans.append((node_names[k], ns, shares[k], [o for o in names if o not in own]))
    else:
        plans = [(node_name, _join(ns, r), [r], [o for o in names if o != r]) for r in local]
    reciprocate = layout != 'central' or count > 1
    return [_plan_node(params_file, name, node_ns, own, fleet_others, ns, overrides,
                       reciprocate)
            for name, node_ns, own, fleet_others in plans]


def _plan_node(params_file, node_name, node_ns, own, fleet_others, ns, overrides, reciprocate):
    """Plan one node (see plan_nodes), checked as the node would check it."""
    given = read_params_file(params_file, node_name, node_ns) if params_file else {}
    for name, value in given.items():  # before the launch's values hide a bad one
        error = yaml_type_error(name, value)
        if error:
            raise FleetError(f'{params_file}: {error}')
    file_observed = given.get('observed_robots') or []
    if not isinstance(file_observed, list):
        raise FleetError(f'{params_file}: observed_robots must be a list of robot names, got '
                         f'{file_observed!r}')
    observed = P.without_commanded(
        own, fleet_others + [o for o in parse_robots(file_observed) if o not in fleet_others])
    launch_params = dict(overrides)
    launch_params['robots'] = own
    if ns:
        launch_params['robots_namespace'] = ns
    if 'drive' in overrides:  # every robot's: clear the file's per-robot drives
        launch_params.update({P.robot_param_name(r, 'drive'): '' for r in own + observed})
    if reciprocate and 'observed_reciprocate' not in overrides:
        # Every observed robot runs orca_nav too: it takes its share of the avoiding
        # (the params file's value is the single central node's; a launch override wins).
        launch_params['observed_reciprocate'] = True
    if observed:  # an empty list cannot be typed by ROS 2: the node drops its own robots
        launch_params['observed_robots'] = observed
    given.update(launch_params)
    given['observed_robots'] = observed
    check_node_parameters(given)
    return NodeSettings(name=node_name, namespace=node_ns, robots=own, observed_robots=observed,
                        parameters=([params_file] if params_file else []) + [launch_params])


def check_launch_arguments(given, known, launch_file='orca_nav.launch.py'):
    """
    Refuse launch arguments that the launch file does not take, naming the nearest one.

    ``given``: every ``name:=value`` the launch has (launch's ``context.launch_configurations``,
    declared or not: a misspelt name would otherwise be ignored and its default used).
    Configurations that launch and launch_ros set themselves are skipped.

    >>> try:
    ...     check_launch_arguments({'robts': 'r1', 'layout': 'central'}, ['robots', 'layout'])
    ... except FleetError as exc:
    ...     print(exc)
    unknown launch arguments ['robts'] of orca_nav.launch.py (did you mean robots:=?); its \
arguments: robots, layout
    """
    known = list(known)
    unknown = sorted(name for name in given if name not in known
                     and name not in LAUNCH_OWN_CONFIGURATIONS and not name.startswith('anon'))
    if not unknown:
        return
    close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.6)
    hint = (f' (did you mean {close[0]}:=?)' if close else
            ' (including this file from another launch file? give it its arguments in a '
            'GroupAction(forwarding=False))')
    raise FleetError(f'unknown launch arguments {unknown} of {launch_file}{hint}; its '
                     f'arguments: {", ".join(known)}')


def _exit_text(returncode):
    """How a process ended: 'exited with code 1' or 'was killed by SIGKILL'."""
    if returncode is not None and returncode < 0:
        try:
            return f'was killed by {signal.Signals(-returncode).name}'
        except ValueError:
            return f'was killed by signal {-returncode}'
    return f'exited with code {returncode}'


def node_failure(name, returncode, shutting_down=False):
    """
    Return why the launch must fail when a node exited by itself with an error, else None.

    A node that refuses its parameters exits with 1; ``ros2 launch`` would still exit 0. An
    exit while the launch shuts the nodes down is no failure. A node killed by a signal (from
    outside: its log cannot say why) is reported as such.

    >>> node_failure('orca_nav_node-1', 1)
    'orca_nav_node-1 exited with code 1 (its log above says why)'
    >>> node_failure('orca_nav_node-1', -9)
    'orca_nav_node-1 was killed by SIGKILL (from outside the node: the system or a user)'
    >>> node_failure('orca_nav_node-1', 0), node_failure('orca_nav_node-1', -9, True)
    (None, None)
    """
    if returncode == 0 or shutting_down:
        return None
    if returncode is not None and returncode < 0:
        return (f'{name} {_exit_text(returncode)} (from outside the node: the system or a '
                'user)')
    return f'{name} exited with code {returncode} (its log above says why)'


def launch_arguments(layout=None):
    """
    Return the arguments (name, default, description) of orca_nav.launch.py or a fixed layout.

    ``layout`` 'decentralised': orca_nav_decentralised.launch.py's, without ``layout`` (it is
    fixed there) and without the central layout's ``nodes`` and ``local_nodes``.
    """
    if layout is None:
        return LAUNCH_ARGUMENTS
    central_only = ('layout',) + (('nodes', 'local_nodes') if layout == 'decentralised' else ())
    return tuple(a for a in LAUNCH_ARGUMENTS if a[0] not in central_only)


def plan_launch(args, node_name=NODE_NAME, default_params_file=None, layout=None,
                launch_file='orca_nav.launch.py'):
    """
    Plan the nodes orca_nav.launch.py starts, from its arguments as strings (see LAUNCH_ARGUMENTS).

    ``args``: every launch argument given (all of launch's configurations: a misspelt name is
    refused, with the nearest one). Missing arguments take their defaults; params_file
    'default' (or missing) is ``default_params_file`` (the launch file's: the installed
    config/orca_nav.yaml; None = no file), 'none' is no file. ``layout``: the launch file's
    fixed layout (orca_nav_decentralised.launch.py): a ``layout`` argument other than it is
    refused. Raises FleetError with the reason for anything the nodes would refuse.
    """
    args = dict(args)
    if layout is not None:
        given = optional(args.pop('layout', None))
        if given is not None and given != layout:
            raise FleetError(f'{launch_file} runs the {layout} layout; layout:={given} is for '
                             'orca_nav.launch.py')
    check_launch_arguments(args, [name for name, _, _ in launch_arguments(layout)], launch_file)
    values = {name: default for name, default, _ in LAUNCH_ARGUMENTS}
    values.update(args)
    if layout is not None:
        values['layout'] = layout
    params_file = optional(values['params_file']) or default_params_file
    if params_file == NONE:
        params_file = None
    if params_file is not None and not Path(params_file).is_file():
        raise FleetError(f'params_file {params_file!r} is not a file')
    overrides = {'use_sim_time': parse_bool('use_sim_time', values['use_sim_time'])}
    if optional(values['drive']):
        overrides['drive'] = optional(values['drive'])
    if optional(values['cmd_vel_topic']):
        overrides['cmd_vel_topic'] = optional(values['cmd_vel_topic'])
    for key in ('pose_topic', 'plan_topic'):
        if optional(values[key]) == NONE:
            overrides[key] = ''
        elif optional(values[key]):
            overrides[key] = optional(values[key])
    if optional(values['cmd_vel_stamped']):
        overrides['cmd_vel_stamped'] = parse_bool('cmd_vel_stamped', values['cmd_vel_stamped'])
    level = str(values['log_level']).strip().lower()
    if level not in LOG_LEVELS:
        raise FleetError(f'log_level must be one of {", ".join(LOG_LEVELS)}, got {level!r}')
    local = optional(values['local_robots'])
    local_nodes = optional(values['local_nodes'])
    plans = plan_nodes(values['layout'], optional(values['robots']) or '', params_file,
                       node_name, values['namespace'], overrides,
                       local_robots=None if local in (None, ALL) else local,
                       nodes=parse_node_count(optional(values['nodes']) or '1'),
                       local_nodes=None if local_nodes in (None, ALL) else local_nodes)
    for p in plans:
        p.arguments = ['--ros-args', '--log-level', level]
    return plans


# --- sim_demo.launch.py -------------------------------------------------------------------


def parse_robot_count(text):
    """
    Parse the sim demo's ``robots`` argument: (count, names), (count, None) or (None, None).

    A count (``8``) or robot names as everywhere else (``robot1..robot8``: the scenario's
    robots, checked by check_scenario_robots once it is loaded); default = the scenario's.
    """
    text = optional(text)
    if text is None:
        return None, None
    if text.lstrip('-').isdigit():
        if int(text) < 1:
            raise FleetError(f'robots must be at least 1, got {text}')
        return int(text), None
    names = parse_robots(text)
    return len(names), names


def check_scenario_robots(names, scenario_names):
    """Raise FleetError unless ``names`` (None: not given) are the scenario's robots."""
    if names is not None and list(names) != list(scenario_names):
        raise FleetError(f"robots {list(names)} are not the scenario's robots "
                         f'{list(scenario_names)}: give a count (robots:={len(names)}) or '
                         'their names')


def private_path(name, prefix='orca_nav_sim_demo_'):
    """Return a path ``name`` in a new private temporary folder (runs never share it)."""
    return str(Path(tempfile.mkdtemp(prefix=prefix)) / name)


def plan_sim_node(params_file, node_params):
    """
    Return the sim demo's orca_nav node parameters: a user's params file under the demo's.

    The demo's values (robots, their radii, drives, speeds) win over the file's, and every
    robot's ``odom_offset`` is zero: the simulator's odometry is its ground truth in ``map``,
    so a file's offsets (for real robots) would send robots the wrong way. Checked as the node
    checks it; returns the node's parameters list (file, dict). Raises FleetError.
    """
    params = dict(node_params)
    names = list(params['robots']) + list(params.get('observed_robots') or [])
    if params_file and not Path(params_file).is_file():
        raise FleetError(f'params_file {params_file!r} is not a file')
    given = read_params_file(params_file) if params_file else {}
    for name, value in given.items():
        error = yaml_type_error(name, value)
        if error:
            raise FleetError(f'{params_file}: {error}')
    strangers = [o for o in given.get('observed_robots') or [] if o not in names]
    if strangers:
        raise FleetError(f'{params_file}: observed_robots {strangers} are not in the scenario '
                         '(the scenario sets the robots)')
    params.update({P.robot_param_name(r, 'odom_offset'): [0.0, 0.0, 0.0] for r in names})
    given.update(params)
    check_node_parameters(given)
    return ([params_file] if params_file else []) + [params]


def demo_failure(returncode, shutting_down=False):
    """
    Return None if orca_nav_demo succeeded, else why the launch must fail (exit code not 0).

    Stopped by the user (Ctrl-C: exit code 130, or SIGINT), or while the launch shuts down, is
    no failure.

    >>> demo_failure(130), demo_failure(-2), demo_failure(-15, shutting_down=True)
    (None, None, None)
    >>> demo_failure(-9)
    'orca_nav_demo was killed by SIGKILL (from outside the demo: the system or a user)'
    """
    if returncode in (0, 130, -signal.SIGINT) or shutting_down:
        return None
    if returncode is not None and returncode < 0:
        return (f'orca_nav_demo {_exit_text(returncode)} (from outside the demo: the system or '
                'a user)')
    return (f'orca_nav_demo failed with exit code {returncode} (1: a collision, 2: not every '
            'robot arrived, 3: an error; its report is above)')
