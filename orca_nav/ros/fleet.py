"""
Launch arguments + robots list + params file -> the orca_nav nodes to start. No launch imports.

The launch files (launch/orca_nav.launch.py, launch/orca_nav_decentralised.launch.py) only hand
their arguments, as the strings ``ros2 launch`` gives, to ``plan_launch`` and turn the answer
into ``launch_ros`` actions, so all the logic is plain Python, tested without a ROS install.
Everything a node would refuse at start-up is refused first, with the reason, before anything
starts: the arguments by orca_nav.ros.launch_args, the params file by orca_nav.ros.params_file,
the node plans here. The sim demo's launch helpers are the simulator's (orca_nav.sim.demo_launch).

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
from pathlib import Path
import signal

from orca_nav.ros import params as P
from orca_nav.ros.launch_args import (ALL, check_launch_arguments, FleetError, LAUNCH_ARGUMENTS,
                                      launch_arguments, LOG_LEVELS, NODE_NAME, NONE, optional,
                                      parse_bool, parse_namespace, parse_node_count,
                                      parse_node_indices, parse_robots, split_node_names)
from orca_nav.ros.params_file import (check_file_reaches, check_node_parameters,
                                      check_robots_reach, check_sections_reach,
                                      check_split_params_file, reach_in_namespace,
                                      read_params_file, stray_robots, yaml_type_error)

LAYOUTS = ('central', 'decentralised')


@dataclass
class NodeSettings:
    """One orca_nav node to start: name, namespace, parameters and ROS arguments."""

    name: str
    namespace: str
    robots: list
    observed_robots: list
    parameters: list = field(default_factory=list)  # params file path(s), then a dict
    arguments: list = field(default_factory=list)   # e.g. ['--ros-args', '--log-level', 'info']


def _join(*parts):
    return '/'.join(p for p in parts if p)


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


def _fleet_nodes(layout, ns, names, node_name, count):
    """Full names of every node of the fleet, on every computer."""
    if layout == 'central':
        return ['/' + _join(ns, n) for n in split_node_names(node_name, count)]
    return ['/' + _join(ns, r, node_name) for r in names]


def plan_nodes(layout, robots='', params_file=None, node_name=NODE_NAME, namespace='',
               overrides=None, local_robots=None, nodes=1, local_nodes=None, base_namespace=''):
    """
    Plan the orca_nav nodes of a layout: NodeSettings, checked before anything starts.

    layout : 'central' or 'decentralised'
    robots : the fleet, names (list or launch-argument text, see parse_robots); empty = the
        ``robots`` of the params file
    params_file : path of a params file for every node, or None. Where the nodes run in a
        namespace, its bare ``<node>:`` sections are made to reach them (reach_in_namespace:
        the nodes are given a copy, as Nav2's bringup does).
    namespace : the fleet's namespace: the node runs in it (decentralised: in
        <namespace>/<robot>); the robots' topics are <namespace>/<robot>/...
    base_namespace : the namespace the launch pushes around the nodes (an including file's
        PushROSNamespace): every name above is inside it. The robots' topics of the central
        layout are relative to the node's namespace (robots_namespace unset); a decentralised
        node, in its robot's namespace, gets the fleet's as an absolute robots_namespace.
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
    the result could not run; a params file that no section of reaches a node is refused,
    naming its sections and the nodes' final names.
    """
    if layout not in LAYOUTS:
        raise FleetError(f'layout must be one of {", ".join(LAYOUTS)}, got {layout!r}')
    ns, base = parse_namespace(namespace), parse_namespace(base_namespace)
    full_ns = _join(base, ns)
    count = nodes if isinstance(nodes, int) else parse_node_count(nodes)
    given_file = params_file
    if params_file:
        params_file = reach_in_namespace(params_file, split_node_names(node_name, count),
                                         '*' if layout == 'decentralised' else full_ns)
    try:
        return _plan_nodes(layout, robots, params_file, node_name, ns, base, overrides,
                           local_robots, count, local_nodes)
    except FleetError as exc:
        if params_file == given_file:
            raise
        raise FleetError(str(exc).replace(params_file, given_file)) from None


def _plan_nodes(layout, robots, params_file, node_name, ns, base, overrides, local_robots,
                count, local_nodes):
    """plan_nodes, once the namespaces are known and the params file reaches namespaces."""
    full_ns = _join(base, ns)
    names = parse_robots(robots) if robots else []
    overrides = dict(overrides or {})
    if not names:
        file_values = read_params_file(params_file, node_name, full_ns) if params_file else {}
        names = parse_robots(overrides.get('robots') or file_values.get('robots') or [])
    if not names and params_file:
        # The file's robots are in a section that reaches none of the nodes: say so.
        stray = [r for _, _, r in stray_robots(params_file)]
        if stray:
            check_robots_reach(params_file, _fleet_nodes(layout, full_ns, parse_robots(stray[0]),
                                                         node_name, count))
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
            check_split_params_file(params_file, node_name, full_ns, count)
    if params_file:
        full_names = _fleet_nodes(layout, full_ns, names, node_name, count)
        check_sections_reach(params_file, node_name, full_names)
        check_file_reaches(params_file, full_names)
    if layout == 'central':
        shares, node_names = split_robots(names, count), split_node_names(node_name, count)
        plans = []
        for k in which:
            own = set(shares[k])
            plans.append((node_names[k], ns, shares[k], [o for o in names if o not in own]))
        robots_namespace = None  # relative: in the node's namespace
    else:
        plans = [(node_name, _join(ns, r), [r], [o for o in names if o != r]) for r in local]
        robots_namespace = '/' + full_ns  # from <namespace>/<robot>: the fleet's, absolute
    reciprocate = layout != 'central' or count > 1
    return [_plan_node(params_file, name, node_ns, own, fleet_others, robots_namespace,
                       overrides, reciprocate, _join(base, node_ns))
            for name, node_ns, own, fleet_others in plans]


def _plan_node(params_file, node_name, node_ns, own, fleet_others, robots_namespace, overrides,
               reciprocate, full_ns):
    """Plan one node (see plan_nodes), checked as the node would check it."""
    given = read_params_file(params_file, node_name, full_ns) if params_file else {}
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
    if robots_namespace is not None:
        launch_params['robots_namespace'] = robots_namespace
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


def exit_text(returncode):
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
        return (f'{name} {exit_text(returncode)} (from outside the node: the system or a '
                'user)')
    return f'{name} exited with code {returncode} (its log above says why)'


def plan_launch(args, node_name=NODE_NAME, default_params_file=None, layout=None,
                launch_file='orca_nav.launch.py', given=None, base_namespace=''):
    """
    Plan the nodes orca_nav.launch.py starts, from its arguments as strings (see LAUNCH_ARGUMENTS).

    ``args``: launch's configurations (its arguments' values; those of an including file too).
    ``given``: the names given to this file (the command line's, or an including file's
    ``launch_arguments``): one it does not take is refused, with the nearest one; None =
    every name of ``args``. ``base_namespace``: the namespace an including file pushes
    (launch_ros's ``ros_namespace``). Missing arguments take their defaults; params_file
    'default' (or missing) is ``default_params_file`` (the launch file's: the installed
    config/orca_nav.yaml; None = no file), 'none' is no file. ``layout``: the launch file's
    fixed layout (orca_nav_decentralised.launch.py): a ``layout`` argument other than it is
    refused. Raises FleetError with the reason for anything the nodes would refuse.
    """
    args = dict(args)
    given = list(args if given is None else given)
    known = [name for name, _, _ in launch_arguments(layout)]
    if layout is not None and 'layout' in given:
        fixed = optional(args.get('layout'))
        if fixed is not None and fixed != layout:
            raise FleetError(f'{launch_file} runs the {layout} layout; layout:={fixed} is for '
                             'orca_nav.launch.py')
        given.remove('layout')
    check_launch_arguments(given, known, launch_file)
    values = {name: default for name, default, _ in LAUNCH_ARGUMENTS}
    values.update({name: value for name, value in args.items() if name in known})
    if layout is not None:
        values['layout'] = layout
    params_file = optional(values['params_file']) or default_params_file
    if params_file == NONE:
        params_file = None
    if params_file is not None and not Path(params_file).is_file():
        raise FleetError(f'params_file {params_file!r} is not a file')
    overrides = {}
    if optional(values['use_sim_time']):  # else the params file's, or an including file's
        overrides['use_sim_time'] = parse_bool('use_sim_time', values['use_sim_time'])
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
                       local_nodes=None if local_nodes in (None, ALL) else local_nodes,
                       base_namespace=base_namespace or '')
    for p in plans:
        p.arguments = ['--ros-args', '--log-level', level]
    return plans
