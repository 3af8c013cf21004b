"""
The demo's processes: the simulator and the orca_nav node as children, and their parameters.

The children run on a private ROS domain with DDS discovery kept on this machine
(``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``); each logs to a file and is stopped with SIGINT,
then SIGTERM, then SIGKILL. ``launch_plan`` returns, as plain data, everything
``sim_demo.launch.py`` starts.
"""

import os
from pathlib import Path
import signal
import subprocess
import sys

from orca_nav.control.parameters import defaults, FLEET_BY_NAME, unused_overrides, validate
from orca_nav.ros.params_file import per_robot_parameters
from orca_nav.sim.scenarios import load_scenario, node_parameters, scenario_path
import yaml

GOAL_TOLERANCE = float(FLEET_BY_NAME['goal_tolerance'].default)  # [m] the node's default
# [m] the node's safety_margin (radii grow by it for planning: latency, odometry lag)
SAFETY_MARGIN = float(FLEET_BY_NAME['safety_margin'].default)
DOMAIN_ID_RANGE = (100, 199)  # random private domain; the tests use 21..59
SHUTDOWN_GRACE = 10.0    # [s] a process gets after SIGINT (and again after SIGTERM)


class Child:
    """A child process whose output goes to a log file; stopped with SIGINT, SIGTERM, SIGKILL."""

    def __init__(self, name, cmd, env, log_dir):
        """Start `cmd` with `env`, logging to <log_dir>/<name>.log."""
        self.name = name
        self.log_path = Path(log_dir) / f'{name}.log'
        self.log = open(self.log_path, 'wb')
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)

    def alive(self):
        """Whether the process is still running."""
        return self.proc.poll() is None

    def stop(self, grace=SHUTDOWN_GRACE):
        """SIGINT, wait, then SIGTERM, wait, then SIGKILL. Returns the exit code."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            if not self.alive():
                break
            self.proc.send_signal(sig)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                continue
        if self.alive():
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        return self.proc.returncode

    def tail(self, lines=15):
        """Return the last lines of the process's output."""
        try:
            text = self.log_path.read_text(errors='replace').splitlines()
        except OSError:
            return ''
        return '\n'.join(f'    {line}' for line in text[-lines:])


def child_env(domain_id, base=None):
    """
    Environment of the children: ``base`` (default ours), DDS on loopback, the domain, importable.

    >>> env = child_env(123, base={'PYTHONPATH': '/x'})
    >>> env['ROS_DOMAIN_ID'], env['ROS_AUTOMATIC_DISCOVERY_RANGE']
    ('123', 'LOCALHOST')
    >>> env['PYTHONPATH'].split(os.pathsep)[1:]
    ['/x']
    """
    env = dict(os.environ if base is None else base)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['ROS_DOMAIN_ID'] = str(int(domain_id))
    package_root = str(Path(__file__).resolve().parents[2])
    env['PYTHONPATH'] = os.pathsep.join(
        [package_root] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p])
    env.setdefault('PYTHONUNBUFFERED', '1')
    return env


def child_commands(sim_file, node_file):
    """(name, argv) of the simulator and the orca_nav node, each with its parameter file."""
    return [('simulator', [sys.executable, '-m', 'orca_nav.sim.node', '--ros-args',
                           '--params-file', str(sim_file)]),
            ('orca_nav_node', [sys.executable, '-m', 'orca_nav.node', '--ros-args',
                               '--params-file', str(node_file)])]


def write_params(path, params):
    """Write a ROS 2 parameter file that applies `params` to every node of the process."""
    Path(path).write_text(yaml.safe_dump({'/**': {'ros__parameters': params}},
                                         default_flow_style=None, sort_keys=False))
    return path


def sim_params(scenario_file, scenario, drive, trajectory_file, seed=0, scan_noise=0.0,
               publish_map=True, map_delay=0.0):
    """
    Parameters of the simulator for this run (drive None = as in the scenario file).

    publish_map false: no map on /map, so the node steers straight at the goals and learns
    obstacles from the scans only. map_delay [s]: the map comes that long after start.
    """
    return {'scenario': str(scenario_file), 'robots': scenario.robot_count,
            'drive': drive or '', 'trajectory_file': str(trajectory_file), 'seed': int(seed),
            'scan_noise': float(scan_noise), 'publish_map': bool(publish_map),
            'map_delay': float(map_delay)}


def node_params(scenario, goal_tolerance=GOAL_TOLERANCE, safety_margin=SAFETY_MARGIN):
    """
    Parameters of the orca_nav node for this run (names as in orca_nav/ros/params.py).

    The fleet values are the first robot's; every robot also gets its own overrides, so mixed
    fleets work. The node gets the true radii and its ``safety_margin`` parameter [m]
    (odometry and command latency): it plans with each radius grown by the margin, while the
    demo's metrics judge collisions on the true radii. Obstacles are learned from the scans
    (scan_enabled), never from the scenario. The scenario's observed robots (driven by the
    simulator alone) become ``observed_robots``, and its avoidance weights and groups the
    robots' own parameters; a robot with a footprint gets ``<robot>.footprint`` (Nav2's
    string) and no radius of its own.
    """
    lists = node_parameters(scenario)
    names = lists['robots'] + lists['observed_robots']
    params = {'robots': lists['robots'], 'drive': lists['drive'][0],
              'radius': lists['radius'][0], 'max_speed': lists['max_speed'][0],
              'max_angular_speed': lists['max_angular_speed'][0],
              'safety_margin': float(safety_margin),
              'goal_tolerance': float(goal_tolerance), 'scan_enabled': True}
    if lists['observed_robots']:  # an empty list cannot be typed by ROS 2: leave the default
        params['observed_robots'] = lists['observed_robots']
    params.update(per_robot_parameters(names, **{
        key: lists[key] for key in ('max_speed', 'max_angular_speed', 'drive',
                                    'avoidance_weight', 'avoidance_group')}))
    # A robot with a footprint gets it instead of a radius (the node would warn of both).
    params.update({f'{name}.footprint' if footprint else f'{name}.radius':
                   footprint or float(radius)
                   for name, radius, footprint in zip(names, lists['radius'],
                                                      lists['footprint'])})
    params.update({f'{name}.groups_to_ignore': groups
                   for name, groups in zip(names, lists['groups_to_ignore']) if groups})
    return params


def parse_param(text):
    """Parse ``name:=value`` (the value as ROS reads it: YAML) into (name, value)."""
    name, sep, value = text.partition(':=')
    if not sep or not name:
        raise ValueError(f'a parameter is name:=value, got {text!r}')
    try:
        return name, yaml.safe_load(value)
    except yaml.YAMLError as exc:
        raise ValueError(f'{name}: {value!r} is not a value ({exc})') from None


def with_overrides(params, overrides):
    """
    Return the node's parameters ``params`` with ``overrides`` ({name: value}) set.

    Raises ValueError naming the parameter when the result is not one the node takes: an
    unknown name (with the nearest declared one) or a value the node refuses.
    """
    out = dict(params)
    out.update(overrides)
    robots = list(out.get('robots') or [])
    observed = list(out.get('observed_robots') or [])
    values = defaults(robots, observed, given=out)
    misspelt, other = unused_overrides(list(overrides), list(values), robots + observed)
    for name, close in misspelt + [(name, None) for name in other]:
        hint = f' (did you mean {close}?)' if close else ''
        raise ValueError(f'{name} is no parameter of this node{hint}')
    error = validate(values)
    if error:
        raise ValueError(error)
    return out


def launch_plan(scenario_name, robots=None, drive=None, goal_tolerance=GOAL_TOLERANCE,
                safety_margin=SAFETY_MARGIN, ground_truth=''):
    """
    Everything sim_demo.launch.py starts, as plain data.

    Returns a dict: scenario (the Scenario), sim (simulator parameters), node (orca_nav node
    parameters) and demo_args (arguments of ``orca_nav_demo --attach``, which sends the goals,
    follows the fleet and reports).
    """
    path = scenario_path(scenario_name)
    scenario = load_scenario(path, robots=robots, drive=drive)
    sim = sim_params(path, scenario, drive, ground_truth)
    robots = scenario.robot_count
    demo_args = ['--attach', '--scenario', str(path), '--robots', str(robots),
                 '--goal-tolerance', str(goal_tolerance)]
    if drive:
        demo_args += ['--drive', drive]
    if ground_truth:
        demo_args += ['--ground-truth', str(ground_truth)]
    return {'scenario': scenario, 'sim': sim,
            'node': node_params(scenario, goal_tolerance, safety_margin),
            'demo_args': demo_args}
