"""
The fleet demo: simulator + orca_nav node over real DDS, goals, metrics and a picture.

Run::

    python -m orca_nav.demo                                  # circle swap of 10 robots
    orca_nav_demo --scenario blocks --robots 8 --drive differential --out out/blocks.png

It starts the simulator (orca_nav.sim.node) and the orca_nav node (orca_nav.node) as separate
processes on a private ROS domain with DDS kept on this machine, sends every robot its goal on
``/<r>/goal_pose``, prints progress while the fleet drives, stops when every robot is at its
goal or on the timeout, shuts the processes down, prints a metrics table computed from the
simulator's ground truth and writes a PNG of the trajectories.

Exit codes: 0 every robot arrived without a collision; 1 a collision happened (robot-robot or
robot-obstacle); 2 no collision but not every robot arrived before the timeout; 3 the demo could
not run (a process died, the node never came up, a bad option); 130 interrupted (Ctrl-C), after
a clean shutdown and the report of the partial run.
"""

import argparse
import json
import math
import os
from pathlib import Path
import random
import signal
import subprocess
import sys
import tempfile
import time

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.ros.messages import make_goal, odometry_to_tuple
from orca_nav.sim.scenarios import (available_scenarios, CONTACT_TOLERANCE, load_scenario,
                                    node_parameters, scenario_path, ScenarioError)
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String
import yaml

EXIT_OK, EXIT_COLLISION, EXIT_TIMEOUT, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
DEFAULT_SCENARIO = 'circle'
DOMAIN_ID_RANGE = (100, 199)  # random private domain; the tests use 30..49, the lead 10..29
STARTUP_TIMEOUT = 90.0   # [s] for both processes to come up (the first JIT compile is slow)
GOAL_RESEND_PERIOD = 1.0  # [s] goals are resent until the robot moves: discovery loses some
MOVED_THRESHOLD = 0.05   # [m] a robot this far from its start has acknowledged its goal
PROGRESS_PERIOD = 2.0    # [s] between progress lines
GROUND_TRUTH_END_SLACK = 0.5  # [s] the simulator's last sample may precede the demo's end
GROUND_TRUTH_WAIT = 4.0  # [s] for a running simulator's next ground-truth save (--attach)
SHUTDOWN_GRACE = 10.0    # [s] a process gets after SIGINT (and again after SIGTERM)
TICK_STATS_TOPIC = '/orca_nav/tick_stats'  # the node's ~/tick_stats (node name orca_nav)
STATUS_TOPIC = 'orca_status'  # the node's per-robot status (orca_nav/params.py status_topic)
GOAL_TOLERANCE = 0.1     # [m] the node stops a robot this close to its goal
SAFETY_MARGIN = 0.05     # [m] added to the radii the node plans with (latency, odometry lag)
ARRIVAL_SLACK = 0.05     # [m] the demo counts a robot within tolerance + slack as arrived


# --- metrics (pure numpy) -------------------------------------------------------------------

def compute_metrics(scenario, t, poses, t_goals, goal_tolerance=GOAL_TOLERANCE):
    """
    Metrics of one run from ground-truth poses.

    scenario : the Scenario that was run (robots in the order of the poses' second axis)
    t : (K,) sample times [s]; poses : (K, N, 3) x, y, yaw; t_goals : time the goals were sent
    Returns a dict (see the keys below); times to goal are measured from t_goals.
    """
    t = np.asarray(t, dtype=float)
    xy = np.asarray(poses, dtype=float)[:, :, :2]
    k, n = xy.shape[:2]
    radii, goals = scenario.radii, scenario.goals
    out = {'robots': n, 'duration': float(t[-1] - t_goals) if k else 0.0}

    # Robot-robot separation at every sample.
    if n > 1:
        iu, ju = np.triu_indices(n, 1)
        dist = np.linalg.norm(xy[:, iu] - xy[:, ju], axis=-1)          # (K, P)
        limit = radii[iu] + radii[ju]                                    # (P,)
        step, pair = np.unravel_index(np.argmin(dist - limit), dist.shape)
        out['min_separation'] = float(dist.min())
        out['min_clearance'] = float((dist - limit)[step, pair])
        out['closest'] = {'time': float(t[step] - t_goals), 'step': int(step),
                          'robots': (int(iu[pair]), int(ju[pair])),
                          'distance': float(dist[step, pair])}
        # Robot-robot collisions: pairs that overlap at some sample (a long contact counts once).
        collided = (dist < limit - CONTACT_TOLERANCE).any(axis=0)
        out['robot_collisions'] = int(collided.sum())
        out['colliding_pairs'] = [(scenario.names[iu[p]], scenario.names[ju[p]])
                                  for p in np.flatnonzero(collided)]
    else:
        out.update(min_separation=math.inf, min_clearance=math.inf, closest=None,
                   robot_collisions=0, colliding_pairs=[])

    # Robot-obstacle clearance.
    obstacle_clearance = (scenario.obstacle_distance(xy.reshape(-1, 2)).reshape(k, n)
                          - radii[None, :])
    out['min_obstacle_clearance'] = float(obstacle_clearance.min()) if k else math.inf
    hitting = obstacle_clearance < -CONTACT_TOLERANCE
    out['obstacle_collisions'] = int(hitting.any(axis=0).sum())
    out['collisions'] = out['robot_collisions'] + out['obstacle_collisions']

    # Arrival, time to goal and path length (from the moment the goals were sent).
    to_goal = np.linalg.norm(xy - goals[None], axis=-1)                  # (K, N)
    at_goal = to_goal <= goal_tolerance
    reached = at_goal & (t >= t_goals)[:, None]
    first = np.where(reached.any(axis=0), np.argmax(reached, axis=0), -1)
    out['arrived'] = int((first >= 0).sum())
    times = np.array([t[f] - t_goals for f in first if f >= 0])
    out['time_to_goal_mean'] = float(times.mean()) if len(times) else math.nan
    out['time_to_goal_max'] = float(times.max()) if len(times) else math.nan
    steps = np.linalg.norm(np.diff(xy, axis=0), axis=-1)                 # (K-1, N)
    ratios = []
    for i, robot in enumerate(scenario.robots):
        if first[i] < 0 or robot.straight_line <= 0.0:
            continue
        # Path driven until arrival over the straight line from the start to that point.
        straight = np.linalg.norm(xy[first[i], i] - xy[0, i])
        if straight > 0.0:
            ratios.append(steps[:first[i], i].sum() / straight)
    out['path_ratio_mean'] = float(np.mean(ratios)) if ratios else math.nan
    out['path_ratio_max'] = float(np.max(ratios)) if ratios else math.nan
    return out


def format_table(metrics, scenario, drive, tick=None):
    """Return the metrics as an aligned two-column text table."""
    def f(value, unit='', digits=2):
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            return 'n/a'
        return f'{value:.{digits}f}{unit}'

    limit = 2.0 * float(scenario.radii.min())
    closest = metrics.get('closest')
    pair = ''
    if closest:
        a, b = closest['robots']
        pair = f'  ({scenario.names[a]} - {scenario.names[b]} at {closest["time"]:.1f} s)'
    rows = [
        ('scenario', f'{scenario.name}, {metrics["robots"]} robots, {drive}'),
        ('arrived', f'{metrics["arrived"]}/{metrics["robots"]}'),
        ('collisions', f'{metrics["collisions"]} (robot-robot {metrics["robot_collisions"]}, '
                       f'robot-obstacle {metrics["obstacle_collisions"]})'),
        ('min separation', f'{f(metrics["min_separation"], " m", 3)} centre to centre '
                           f'(contact at {limit:.3f} m)'),
        ('min clearance', f'{f(metrics["min_clearance"], " m", 3)} between discs{pair}'),
        ('min obstacle clearance', f(metrics['min_obstacle_clearance'], ' m', 3)),
        ('time to goal mean / max', f'{f(metrics["time_to_goal_mean"], " s", 1)} / '
                                    f'{f(metrics["time_to_goal_max"], " s", 1)}'),
        ('path / straight line', f'{f(metrics["path_ratio_mean"], "", 3)} mean, '
                                 f'{f(metrics["path_ratio_max"], "", 3)} max'),
        ('node tick p50 / p99', (f'{f(tick[0], " ms")} / {f(tick[1], " ms")}' if tick
                                 else 'n/a (the node published no tick statistics)')),
        ('run time', f(metrics['duration'], ' s', 1)),
    ]
    width = max(len(r[0]) for r in rows)
    line = '-' * (width + 3 + max(len(r[1]) for r in rows))
    return '\n'.join([line] + [f'{k:<{width}} | {v}' for k, v in rows] + [line])


# --- picture --------------------------------------------------------------------------------

def plot_run(scenario, poses, metrics, out_path, title=''):
    """Write a PNG of the run: obstacles, paths per robot, starts, goals, closest approach."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    from matplotlib.patches import Circle, Polygon

    xy = np.asarray(poses, dtype=float)[:, :, :2]
    n = xy.shape[1]
    fig, ax = plt.subplots(figsize=(7.0, 7.0), dpi=100)
    for poly in scenario.polygons:
        ax.add_patch(Polygon(poly, closed=True, facecolor='0.75', edgecolor='0.3', zorder=1))
    for seg in scenario.segments:
        ax.plot(seg[:, 0], seg[:, 1], color='0.3', lw=3, solid_capstyle='round', zorder=1)
    cmap = plt.get_cmap('tab10' if n <= 10 else 'tab20' if n <= 20 else 'turbo')
    for i, robot in enumerate(scenario.robots):
        color = cmap(i % cmap.N if n <= 20 else i / (n - 1))
        ax.plot(xy[:, i, 0], xy[:, i, 1], color=color, lw=1.4, zorder=3)
        ax.add_patch(Circle(robot.start[:2], robot.radius, fill=False, edgecolor=color,
                            lw=1.2, zorder=4))
        ax.plot(*robot.goal, marker='x', color=color, ms=8, mew=2, zorder=4)
        ax.add_patch(Circle(xy[-1, i], robot.radius, color=color, alpha=0.35, zorder=2))
    closest = metrics.get('closest')
    if closest:
        a, b = closest['robots']
        pa, pb = xy[closest['step'], a], xy[closest['step'], b]
        for i, p in ((a, pa), (b, pb)):
            ax.add_patch(Circle(p, scenario.robots[i].radius, fill=False, edgecolor='red',
                                lw=1.8, zorder=5))
        ax.plot([pa[0], pb[0]], [pa[1], pb[1]], color='red', lw=1.5, zorder=5)
        mid = 0.5 * (pa + pb)
        ax.annotate(f'closest approach {closest["distance"]:.2f} m\n'
                    f'{scenario.names[a]} - {scenario.names[b]}, t = {closest["time"]:.1f} s',
                    xy=mid, xytext=(0.02, 0.02), textcoords='axes fraction', color='red',
                    fontsize=9, arrowprops={'arrowstyle': '->', 'color': 'red', 'lw': 1.0},
                    bbox={'boxstyle': 'round', 'fc': 'white', 'ec': 'red', 'alpha': 0.85},
                    zorder=6)
    from matplotlib.lines import Line2D
    key = [Line2D([], [], ls='', marker='o', mfc='none', mec='0.3', ms=8, label='start'),
           Line2D([], [], ls='', marker='x', mec='0.3', ms=7, mew=2, label='goal'),
           Line2D([], [], ls='', marker='o', mfc='0.6', mec='none', ms=8, label='end')]
    if closest:
        key.append(Line2D([], [], color='red', marker='o', mfc='none', label='closest approach'))
    ax.legend(handles=key, loc='upper right', fontsize=8, framealpha=0.85)
    # The arena and everything the robots did, with a margin.
    pad = max(0.5, 2.0 * float(scenario.radii.max()))
    lo, hi = np.nanmin(xy.reshape(-1, 2), axis=0) - pad, np.nanmax(xy.reshape(-1, 2), axis=0) + pad
    if scenario.arena is not None:
        lo, hi = np.minimum(lo, scenario.arena[:2]), np.maximum(hi, scenario.arena[2:])
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect('equal')
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.grid(True, color='0.9', zorder=0)
    ax.set_title(title, fontsize=10)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out_path)
    plt.close(fig)
    return out_path


# --- processes ------------------------------------------------------------------------------

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

    def stop(self):
        """SIGINT, wait, then SIGTERM, wait, then SIGKILL. Returns the exit code."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            if not self.alive():
                break
            self.proc.send_signal(sig)
            try:
                self.proc.wait(SHUTDOWN_GRACE)
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


def child_env(domain_id):
    """Environment of the children: our own, DDS on loopback, the demo's domain, importable."""
    env = dict(os.environ)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    env['ROS_DOMAIN_ID'] = str(domain_id)
    package_root = str(Path(__file__).resolve().parent.parent)
    env['PYTHONPATH'] = os.pathsep.join(
        [package_root] + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p])
    env.setdefault('PYTHONUNBUFFERED', '1')
    return env


def write_params(path, params):
    """Write a ROS 2 parameter file that applies `params` to every node of the process."""
    Path(path).write_text(yaml.safe_dump({'/**': {'ros__parameters': params}},
                                         default_flow_style=None, sort_keys=False))
    return path


def sim_params(scenario_path, scenario, drive, trajectory_file, seed=0, scan_noise=0.0):
    """Parameters of the simulator for this run (drive None = as in the scenario file)."""
    return {'scenario': str(scenario_path), 'robots': len(scenario.robots),
            'drive': drive or '', 'trajectory_file': str(trajectory_file), 'seed': int(seed),
            'scan_noise': float(scan_noise)}


def node_params(scenario, goal_tolerance=GOAL_TOLERANCE, safety_margin=SAFETY_MARGIN):
    """
    Parameters of the orca_nav node for this run (names as in orca_nav/params.py).

    The fleet values are the first robot's; every robot also gets its own overrides, so mixed
    fleets work. The node plans with each radius grown by safety_margin [m] (odometry and
    command latency); collisions are judged on the true radii. Obstacles are learned from the
    scans (scan_enabled), never from the scenario.
    """
    lists = node_parameters(scenario)
    lists['radius'] = [r + float(safety_margin) for r in lists['radius']]
    params = {'robots': lists['robots'], 'drive': lists['drive'][0],
              'radius': lists['radius'][0], 'max_speed': lists['max_speed'][0],
              'max_angular_speed': lists['max_angular_speed'][0],
              'goal_tolerance': float(goal_tolerance), 'scan_enabled': True}
    for i, name in enumerate(lists['robots']):
        params[name] = {key: lists[key][i]
                        for key in ('radius', 'max_speed', 'max_angular_speed', 'drive')}
    return params


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
    demo_args = ['--attach', '--scenario', str(path), '--robots', str(len(scenario.robots)),
                 '--goal-tolerance', str(goal_tolerance)]
    if drive:
        demo_args += ['--drive', drive]
    if ground_truth:
        demo_args += ['--ground-truth', str(ground_truth)]
    return {'scenario': scenario, 'sim': sim,
            'node': node_params(scenario, goal_tolerance, safety_margin),
            'demo_args': demo_args}


# --- the run --------------------------------------------------------------------------------

class Monitor:
    """The demo's own ROS node: follows odometry, sends goals, keeps live statistics."""

    def __init__(self, scenario, goal_tolerance):
        """Subscribe to every robot's odom and advertise its goal_pose."""
        self.scenario = scenario
        self.goal_tolerance = goal_tolerance
        self.node = rclpy.create_node('orca_nav_demo')
        n = len(scenario.robots)
        self.latest = np.full((n, 3), np.nan)     # x, y, yaw from odom
        self.stamps = np.full(n, -np.inf)         # odom stamps [s]
        self.snapshot_stamp = -np.inf
        self.history_t, self.history = [], []     # wall time, (N, 3) snapshots
        self.acknowledged = np.zeros(n, bool)
        self.min_separation = math.inf
        self.goal_pubs = []
        # The node's latched per-robot status (JSON) tells when it has taken the goal.
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        for i, robot in enumerate(scenario.robots):
            self.node.create_subscription(Odometry, f'/{robot.name}/odom',
                                          lambda msg, i=i: self._on_odom(i, msg),
                                          QoSProfile(depth=10))
            self.goal_pubs.append(self.node.create_publisher(
                PoseStamped, f'/{robot.name}/goal_pose', QoSProfile(depth=10)))
            self.node.create_subscription(String, f'/{robot.name}/{STATUS_TOPIC}',
                                          lambda msg, i=i: self._on_status(i, msg), latched)
        # The node's tick statistics (JSON, about once a second).
        self.tick_stats = None
        self.tick_samples = []
        self.node.create_subscription(String, TICK_STATS_TOPIC, self._on_tick_stats,
                                      QoSProfile(depth=10))

    def _on_tick_stats(self, msg):
        try:
            self.tick_stats = dict(json.loads(msg.data))
        except (ValueError, TypeError):
            return
        recent = self.tick_stats.get('recent_tick_ms')
        if isinstance(recent, list):
            self.tick_samples.extend(float(v) for v in recent if isinstance(v, (int, float)))

    def tick_percentiles(self):
        """
        (p50, p99) of the node's tick duration [ms], or None before its first report.

        Over every tick of the run when the node reports each tick's duration (recent_tick_ms),
        else the node's own percentiles over its recent window.
        """
        if self.tick_samples:
            return tuple(float(v) for v in np.percentile(self.tick_samples, [50, 99]))
        stats = self.tick_stats or {}
        p50, p99 = stats.get('tick_ms_p50'), stats.get('tick_ms_p99')
        return None if p50 is None or p99 is None else (float(p50), float(p99))

    def _on_status(self, i, msg):
        try:
            goal = json.loads(msg.data).get('goal')
        except (ValueError, AttributeError):
            return
        if goal is not None and np.allclose(goal, self.scenario.goals[i], atol=1e-3):
            self.acknowledged[i] = True

    def _on_odom(self, i, msg):
        values = odometry_to_tuple(msg)
        if values is None:
            return
        self.latest[i] = values[:3]
        self.stamps[i] = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        # The simulator publishes every robot's odometry with one stamp: take a snapshot once
        # all of them are in, so that separations compare positions of the same instant.
        if self.stamps[i] > self.snapshot_stamp and np.all(self.stamps == self.stamps[i]):
            self.snapshot_stamp = self.stamps[i]
            self._snapshot()

    def _snapshot(self):
        now = time.time()
        self.history_t.append(now)
        self.history.append(self.latest.copy())
        xy = self.latest[:, :2]
        if len(xy) > 1:
            d = np.linalg.norm(xy[:, None] - xy[None], axis=-1)
            np.fill_diagonal(d, np.inf)
            self.min_separation = min(self.min_separation, float(d.min()))
        moved = np.linalg.norm(xy - self.scenario.starts[:, :2], axis=1) > MOVED_THRESHOLD
        self.acknowledged |= moved | self.at_goal()

    def at_goal(self):
        """(N,) bool: robots now within goal_tolerance of their goal."""
        dist = np.linalg.norm(self.latest[:, :2] - self.scenario.goals, axis=1)
        return dist <= self.goal_tolerance

    def have_odom(self):
        """Whether odometry of every robot has arrived (the simulator is up)."""
        return not np.isnan(self.latest).any()

    def goals_matched(self):
        """Whether something subscribes to every robot's goal_pose (the node is up)."""
        return all(pub.get_subscription_count() > 0 for pub in self.goal_pubs)

    def send_goals(self):
        """Publish the goal of every robot whose goal is not acknowledged yet."""
        stamp = self.node.get_clock().now().to_msg()
        for i, robot in enumerate(self.scenario.robots):
            if self.acknowledged[i]:
                continue
            yaw = math.atan2(robot.goal[1] - robot.start[1], robot.goal[0] - robot.start[0])
            self.goal_pubs[i].publish(make_goal(*robot.goal, yaw, frame_id='map', stamp=stamp))

    def destroy(self):
        """Destroy the node."""
        self.node.destroy_node()


def load_ground_truth(path, monitor, t_goals, t_end, wait=0.0):
    """
    Return (t_wall, poses, source) from the simulator's file, else from the demo's odometry.

    The file must hold this fleet and cover the run from t_goals to t_end (wall time, less a
    few sim steps); a simulator that still runs saves every few seconds, so wait up to `wait`
    seconds for that.
    """
    deadline = time.monotonic() + wait
    while path:
        try:
            data = np.load(path)
            ours = (len(data['t']) > 1 and list(data['names']) == monitor.scenario.names
                    and data['wall'][0] <= t_goals)
            if ours and data['wall'][-1] >= t_end - GROUND_TRUTH_END_SLACK:
                return data['wall'], data['poses'], 'simulator ground truth'
        except (OSError, ValueError, KeyError):
            pass
        if time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    if len(monitor.history) > 1:
        return (np.array(monitor.history_t), np.array(monitor.history),
                'odometry seen by the demo (no usable ground truth from the simulator)')
    return None, None, None


def parse_args(argv=None):
    """Parse the demo's command line (ROS arguments, if any, are ignored)."""
    names = available_scenarios()
    parser = argparse.ArgumentParser(
        prog='orca_nav_demo', description=__doc__.split('\n\n')[0].strip(),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--scenario', default=DEFAULT_SCENARIO,
                        help=f'scenario name ({", ".join(names)}) or path to a scenario YAML')
    parser.add_argument('--robots', type=int, default=None,
                        help='robot count (default: as in the scenario file)')
    parser.add_argument('--drive', choices=('holonomic', 'differential'), default=None,
                        help='drive of every robot (default: as in the scenario file)')
    parser.add_argument('--timeout', type=float, default=None,
                        help='seconds from the goals to giving up (default: the scenario timeout)')
    parser.add_argument('--out', default=None,
                        help='PNG to write (default: out/demo_<scenario>.png)')
    parser.add_argument('--domain-id', type=int, default=None,
                        help=f'ROS_DOMAIN_ID of the run (default: random in '
                             f'{DOMAIN_ID_RANGE[0]}..{DOMAIN_ID_RANGE[1]})')
    parser.add_argument('--goal-tolerance', type=float, default=GOAL_TOLERANCE,
                        help='goal tolerance of the node [m]; the demo counts a robot within '
                             f'this + {ARRIVAL_SLACK} m of its goal as arrived')
    parser.add_argument('--safety-margin', type=float, default=SAFETY_MARGIN,
                        help='the node plans with every radius grown by this much [m]; '
                             'collisions are judged on the true radii')
    parser.add_argument('--scan-noise', type=float, default=0.0,
                        help='standard deviation of the simulated laser noise [m]')
    parser.add_argument('--seed', type=int, default=0, help='seed of the simulated laser noise')
    parser.add_argument('--quiet', action='store_true', help='no progress lines')
    parser.add_argument('--attach', action='store_true',
                        help='do not start anything: the simulator and the node run already '
                             '(sim_demo.launch.py); send goals, follow and report')
    parser.add_argument('--ground-truth', default=None,
                        help='with --attach: the trajectory_file of the simulator')
    if argv is None:
        argv = sys.argv[1:]
    if '--ros-args' in argv:
        argv = argv[:argv.index('--ros-args')]
    args = parser.parse_args(argv)
    if args.domain_id is not None and not 0 <= args.domain_id <= 232:
        parser.error(f'--domain-id must be in 0..232, got {args.domain_id}')
    if args.robots is not None and args.robots < 1:
        parser.error(f'--robots must be at least 1, got {args.robots}')
    if not args.goal_tolerance > 0.0:
        parser.error(f'--goal-tolerance must be positive, got {args.goal_tolerance}')
    if not 0.0 <= args.safety_margin <= 1.0:
        parser.error(f'--safety-margin must be in 0..1 m, got {args.safety_margin}')
    if args.timeout is not None and not args.timeout > 0:
        parser.error(f'--timeout must be positive, got {args.timeout}')
    return args


def run(args):
    """Run one demo; return its exit code."""
    try:
        path = scenario_path(args.scenario)
        scenario = load_scenario(path, robots=args.robots, drive=args.drive)
    except ScenarioError as exc:
        print(f'orca_nav_demo: {exc}', file=sys.stderr)
        return EXIT_ERROR
    drive = '/'.join(sorted({r.drive for r in scenario.robots}))
    timeout = args.timeout or scenario.timeout
    out = Path(args.out or f'out/demo_{scenario.name}.png')
    work, files = None, []
    if args.attach:
        # The simulator and the node run already (sim_demo.launch.py): use the environment as
        # it is, follow the fleet and report.
        children = []
        truth_path = Path(args.ground_truth) if args.ground_truth else None
        print(f'orca_nav demo: following scenario {scenario.name!r} with '
              f'{len(scenario.robots)} {drive} robots on '
              f'ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID", "0")}', flush=True)
    else:
        domain_id = (args.domain_id if args.domain_id is not None
                     else random.randint(*DOMAIN_ID_RANGE))
        # DDS stays on loopback, for this process (the monitor) and for the children.
        os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
        os.environ['ROS_DOMAIN_ID'] = str(domain_id)
        env = child_env(domain_id)
        work = Path(tempfile.mkdtemp(prefix='orca_nav_demo_'))
        truth_path = work / 'ground_truth.npz'
        sim_file = write_params(work / 'sim.yaml',
                                sim_params(path, scenario, args.drive, truth_path,
                                           args.seed, args.scan_noise))
        node_file = write_params(work / 'orca_nav.yaml',
                                 node_params(scenario, args.goal_tolerance,
                                             args.safety_margin))
        files = [truth_path, sim_file, node_file]
        print(f'orca_nav demo: scenario {scenario.name!r} ({scenario.description}) with '
              f'{len(scenario.robots)} {drive} robots; ROS_DOMAIN_ID={domain_id}, DDS on '
              f'localhost; logs in {work}', flush=True)
        children = [
            Child('simulator', [sys.executable, '-m', 'orca_nav.sim.node', '--ros-args',
                                '--params-file', str(sim_file)], env, work),
            Child('orca_nav_node', [sys.executable, '-m', 'orca_nav.node', '--ros-args',
                                    '--params-file', str(node_file)], env, work),
        ]
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    arrival = args.goal_tolerance + ARRIVAL_SLACK
    monitor = Monitor(scenario, arrival)
    status, failure, t_goals = None, None, None
    # Ctrl-C / SIGTERM end the run early but still shut down cleanly and report.
    interrupted = []
    previous = {sig: signal.signal(sig, lambda signum, frame: interrupted.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        status, failure, t_goals = _drive_run(monitor, children, timeout, args.quiet,
                                              interrupted)
    finally:
        t_end = time.time()
        monitor.destroy()
        rclpy.try_shutdown()
        codes = {c.name: c.stop() for c in children}
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if interrupted:
        print('orca_nav_demo: interrupted; the fleet was stopped', file=sys.stderr)
    elif failure:
        print(f'orca_nav_demo: {failure}', file=sys.stderr)
        for c in children:
            print(f'  {c.name} (exit code {codes[c.name]}), last lines of {c.log_path}:\n'
                  f'{c.tail()}', file=sys.stderr)
    if t_goals is None:
        return status if status is not None else EXIT_ERROR

    wall, poses, source = load_ground_truth(
        truth_path, monitor, t_goals, t_end,
        wait=GROUND_TRUTH_WAIT if args.attach else 0.0)
    if poses is None:
        print('orca_nav_demo: no trajectory was recorded', file=sys.stderr)
        return EXIT_ERROR
    metrics = compute_metrics(scenario, wall, poses, t_goals, arrival)
    tick = monitor.tick_percentiles()
    print(f'\nmetrics (from the {source}):')
    print(format_table(metrics, scenario, drive, tick), flush=True)
    title = (f'{scenario.name}: {len(scenario.robots)} {drive} robots, arrived '
             f'{metrics["arrived"]}/{metrics["robots"]}, collisions {metrics["collisions"]}, '
             f'min separation {metrics["min_separation"]:.2f} m')
    print(f'trajectories: {plot_run(scenario, poses, metrics, out, title)}')
    if status is None:
        status = (EXIT_COLLISION if metrics['collisions'] else
                  EXIT_OK if metrics['arrived'] == metrics['robots'] else EXIT_TIMEOUT)
    elif metrics['collisions']:
        status = EXIT_COLLISION
    if not failure and work is not None:
        for f in files + [c.log_path for c in children]:
            f.unlink(missing_ok=True)
        try:
            work.rmdir()
        except OSError:
            pass
    return status


def _drive_run(monitor, children, timeout, quiet, interrupted):
    """
    Bring the fleet up, send goals and follow it; return (status, failure, t_goals).

    interrupted : a list that becomes non-empty when the user asks to stop (Ctrl-C).
    """
    start = time.monotonic()
    while not (monitor.have_odom() and monitor.goals_matched()):
        rclpy.spin_once(monitor.node, timeout_sec=0.1)
        if interrupted:
            return EXIT_INTERRUPTED, None, None
        dead = [c.name for c in children if not c.alive()]
        if dead:
            return EXIT_ERROR, f'{", ".join(dead)} exited during start-up', None
        if time.monotonic() - start > STARTUP_TIMEOUT:
            missing = ('simulator odometry' if not monitor.have_odom()
                       else 'goal_pose subscriptions of the orca_nav node')
            return EXIT_ERROR, f'no {missing} after {STARTUP_TIMEOUT:.0f} s', None
    print(f'fleet up after {time.monotonic() - start:.1f} s; sending goals', flush=True)
    t_goals = time.time()
    begin = time.monotonic()
    next_goal = next_progress = begin
    n = len(monitor.scenario.robots)
    while True:
        now = time.monotonic()
        if now >= next_goal and not monitor.acknowledged.all():
            monitor.send_goals()
            next_goal = now + GOAL_RESEND_PERIOD
        rclpy.spin_once(monitor.node, timeout_sec=0.02)
        if interrupted:
            return EXIT_INTERRUPTED, None, t_goals
        arrived = int(monitor.at_goal().sum())
        if not quiet and now >= next_progress:
            tick = monitor.tick_percentiles()
            tick = f'  node tick p50 {tick[0]:.2f} ms' if tick else ''
            sep = (f'{monitor.min_separation:.3f} m' if math.isfinite(monitor.min_separation)
                   else 'n/a')
            print(f'[{now - begin:6.1f} s] arrived {arrived:2d}/{n}  min separation {sep}{tick}',
                  flush=True)
            next_progress = now + PROGRESS_PERIOD
        if arrived == n:
            print(f'[{now - begin:6.1f} s] all {n} robots arrived', flush=True)
            return None, None, t_goals
        dead = [c.name for c in children if not c.alive()]
        if dead:
            return EXIT_ERROR, f'{", ".join(dead)} died during the run', t_goals
        if now - begin > timeout:
            print(f'[{now - begin:6.1f} s] timeout: {arrived}/{n} robots arrived', flush=True)
            return EXIT_TIMEOUT, None, t_goals


def main(argv=None):
    """Console entry point: run the demo and exit with its status."""
    sys.exit(run(parse_args(argv)))


if __name__ == '__main__':
    main()
