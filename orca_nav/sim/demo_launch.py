"""
The sim demo's launch helpers: its arguments, the node's parameters, the demo's exit codes.

launch/sim_demo.launch.py starts the simulator, the orca_nav node and ``orca_nav_demo
--attach`` from orca_nav.sim.processes.launch_plan; these functions check its arguments
against the scenario and turn the demo's exit code into the launch's verdict.
"""

from pathlib import Path
import signal
import tempfile

from orca_nav.control.parameters import robot_param_name
from orca_nav.ros.fleet import exit_text
from orca_nav.ros.launch_args import FleetError, optional, parse_robots
from orca_nav.ros.params_file import check_node_parameters, read_params_file, yaml_type_error

# orca_nav_demo's exit codes (see orca_nav.sim.demo).
EXIT_OK, EXIT_COLLISION, EXIT_TIMEOUT, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


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
    params.update({robot_param_name(r, 'odom_offset'): [0.0, 0.0, 0.0] for r in names})
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
    if returncode in (EXIT_OK, EXIT_INTERRUPTED, -signal.SIGINT) or shutting_down:
        return None
    if returncode is not None and returncode < 0:
        return (f'orca_nav_demo {exit_text(returncode)} (from outside the demo: the system or '
                'a user)')
    return (f'orca_nav_demo failed with exit code {returncode} ({EXIT_COLLISION}: a collision, '
            f'{EXIT_TIMEOUT}: not every robot arrived, {EXIT_ERROR}: an error; its report is '
            'above)')
