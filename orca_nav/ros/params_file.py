"""
A params file as ROS 2 reads it for one node: which sections reach it, and what it would refuse.

ROS 2 drops silently what reaches no node (a section under a name no node has, a misspelt
parameter) and kills the node at start-up for a value of the wrong YAML type. These checks
refuse both before anything starts, with the reason (FleetError). No launch imports.
"""

import os
import re
import tempfile

from orca_nav.ros import params as P
from orca_nav.ros.launch_args import FleetError, NODE_NAME, split_node_names
import yaml

# Parameters every rclpy node declares itself (a params file may set them).
NODE_OWN_PARAMS = ('use_sim_time', 'start_type_description_service')


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


def node_named_sections(path, node_name):
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
            raise FleetError(f'{path}: section {key!r} reaches no node of this launch (the nodes '
                             f'are {_fleet_names(full_names)}) and ROS 2 would drop its '
                             f"parameters silently: put them under '/**/{node_name}:' or '/**:'")


def _fleet_names(full_names):
    """Name the nodes of a launch in a message: '/orca_nav' or '/r1/orca_nav .. /r8/orca_nav'."""
    return full_names[0] + (f' .. {full_names[-1]}' if len(full_names) > 1 else '')


def check_file_reaches(path, full_names):
    """
    Refuse a params file of which no section reaches a node of the launch.

    ``full_names``: every node of the fleet, final names (the namespace of an including file
    and of the fleet included). ROS 2 would drop every parameter of such a file silently (a
    section ``orca_nav_node:``, a typo, ``orca_nav:`` for a node in a namespace as ROS 2
    reads it). A file without sections (comments only) is nothing to drop.
    """
    sections = list(_sections(_load_params_file(path)))
    if not sections or any(_reaches(tokens, name) for _, tokens, _ in sections
                           for name in full_names):
        return
    keys = ', '.join(repr(key) for key, _, _ in sections)
    raise FleetError(f'{path}: no section reaches a node of this launch (its sections: {keys}; '
                     f'the nodes: {_fleet_names(full_names)}), and ROS 2 would drop its '
                     "parameters silently: put them under '/**:' (every node) or a node's "
                     'name')


def stray_robots(path):
    """Yield (key, robots) of the sections of a file that give a robots list."""
    for key, tokens, section in _sections(_load_params_file(path)):
        if section.get('robots'):
            yield key, tokens, section['robots']


def check_robots_reach(path, full_names):
    """Refuse a file whose robots list is in a section that reaches no node of the launch."""
    for key, tokens, _ in stray_robots(path):
        if not any(_reaches(tokens, name) for name in full_names):
            raise FleetError(f'{path}: section {key!r}, which has the robots list, reaches no '
                             f'node of this launch (the nodes: {_fleet_names(full_names)}): '
                             "put it under '/**:' or the node's name, or give robots:=")


def reach_in_namespace(path, node_names, namespace):
    """
    Return ``path``, or a copy in which the bare ``<node>:`` sections reach the nodes anywhere.

    ``node_names``: the nodes' own names (orca_nav, or orca_nav_0 ..); ``namespace``: where
    they run (final; '' = the root: nothing to do, '*' = each in its own). ROS 2 reads a
    section ``orca_nav:`` as ``/orca_nav``: it does not reach ``/fleet/orca_nav``
    (measured) and the node would start with the defaults. As
    Nav2's bringup rewrites its params file into the namespace (RewrittenYaml's root_key),
    the copy (a temporary file, as launch_ros's own) has ``/**/<node>:`` instead (the file is
    given to the node's own process only).
    """
    data = _load_params_file(path)
    ns = namespace.strip('/')
    bare = [key for key in data if key in node_names and isinstance(data[key], dict)
            and 'ros__parameters' in data[key] and f'/**/{key}' not in data]
    if not ns or not bare:
        return path
    rewritten = {(f'/**/{key}' if key in bare else key): value for key, value in data.items()}
    folder = tempfile.mkdtemp(prefix='orca_nav_params_')
    copy = os.path.join(folder, os.path.basename(path))
    with open(copy, 'w') as f:
        f.write(f'# {path} for nodes in a namespace: its sections {", ".join(bare)} as '
                '/**/<node> (orca_nav.launch.py)\n')
        yaml.safe_dump(rewritten, f, sort_keys=False)
    return copy


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
