"""
The launch arguments of orca_nav's launch files, as ``ros2 launch`` gives them (strings), parsed.

``LAUNCH_ARGUMENTS`` are orca_nav.launch.py's (name, default, description); the ``parse_*``
functions turn one argument's text into a value or refuse it with a FleetError that names the
argument, and ``check_launch_arguments`` refuses a misspelt argument name (launch itself would
ignore it). No launch imports: plain, tested Python.
"""

import difflib
import re

from orca_nav.ros import params as P

NODE_NAME = 'orca_nav'
# ``ros2 launch`` refuses an empty value (``robots:=``): these words say "not given".
DEFAULT = 'default'   # as configured elsewhere (in the params file)
NONE = 'none'         # params_file:=none: no params file
ALL = 'all'           # local_robots:=all: every robot of the fleet
LOG_LEVELS = ('debug', 'info', 'warn', 'error', 'fatal')
TRUE_WORDS, FALSE_WORDS = ('true', '1', 'yes', 'on'), ('false', '0', 'no', 'off')
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
     'Namespace of the fleet, inside the namespace of an including launch file '
     '(PushROSNamespace): the node runs in it (decentralised: in <namespace>/<robot>) and the '
     "robots' topics are <namespace>/<robot>/...; / = the root (or the including file's)"),
    ('use_sim_time', DEFAULT,
     'true: use the /clock topic (Gazebo) instead of wall time; false: wall time; default = as '
     "the params file or an including file's SetParameter(use_sim_time) says (else false)"),
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


def check_launch_arguments(given, known, launch_file='orca_nav.launch.py'):
    """
    Refuse launch arguments that the launch file does not take, naming the nearest one.

    ``given``: the names of the ``name:=value`` given to this file (those of ``ros2 launch``'s
    command line, or the ``launch_arguments`` of the IncludeLaunchDescription that includes
    it; a misspelt name would otherwise be ignored and its default used). Configurations that
    launch and launch_ros set themselves are skipped. An argument of orca_nav.launch.py given
    to another file is named as such (``nodes:=2`` on orca_nav_decentralised.launch.py).

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
    central = [name for name, _, _ in LAUNCH_ARGUMENTS]
    if unknown[0] in central and launch_file != 'orca_nav.launch.py':
        raise FleetError(f'{unknown[0]} is an argument of orca_nav.launch.py, not of '
                         f'{launch_file}; its arguments: {", ".join(known)}')
    close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.6)
    hint = f' (did you mean {close[0]}:=?)' if close else ''
    raise FleetError(f'unknown launch arguments {unknown} of {launch_file}{hint}; its '
                     f'arguments: {", ".join(known)}')


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
