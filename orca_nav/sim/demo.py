"""
The fleet demo: simulator + orca_nav node over real DDS, goals, metrics and a picture.

Run::

    python -m orca_nav.demo                                  # circle swap of 10 robots
    orca_nav_demo --scenario blocks --robots 8 --drive differential --out out/blocks.png
    orca_nav_demo --scenario warehouse --metrics-json out/warehouse.json

It starts the simulator (orca_nav.sim.node) and the orca_nav node (orca_nav.node) as separate
processes on a private ROS domain with DDS kept on this machine, sends every robot its goal on
``/<r>/goal_pose``, prints progress while the fleet drives, stops when every robot is at its
goal or on the timeout, shuts the processes down, prints a metrics table computed from the
simulator's ground truth and writes a PNG of the trajectories (with the map and the routes the
node planned, when it publishes them on ``/<r>/orca_route``). ``--metrics-json`` also writes
the metrics as JSON.

The scenario's walkers (people on scripted paths) are the simulator's alone: the demo sends
them no goals, expects no odometry of them and does not wait for them to arrive; it counts
their contacts with the robots.

Exit codes: 0 every robot arrived without a collision; 1 a collision happened (robot-robot,
robot-obstacle or robot-walker); 2 no collision but not every robot arrived before the
timeout; 3 the demo could not run (a process died, the node never came up, a bad option); 130
interrupted (Ctrl-C), after a clean shutdown and the report of the partial run.
"""

import argparse
import json
import math
import os
from pathlib import Path
import random
import signal
import sys
import tempfile
import time

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry, Path as PathMsg
import numpy as np
from orca_nav.control.parameters import FLEET_BY_NAME
from orca_nav.ros.launch_args import NODE_NAME
from orca_nav.ros.messages import make_goal, odometry_to_tuple
from orca_nav.ros.watch import watch_parent
from orca_nav.sim.demo_launch import (EXIT_COLLISION, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK,
                                      EXIT_TIMEOUT)
from orca_nav.sim.metrics import (compute_metrics, format_table, metrics_record,
                                  write_metrics_json)
from orca_nav.sim.plot import plot_run
from orca_nav.sim.processes import (Child, child_commands, child_env, DOMAIN_ID_RANGE,
                                    GOAL_TOLERANCE, node_params, parse_param, SAFETY_MARGIN,
                                    sim_params, with_overrides, write_params)
from orca_nav.sim.scenarios import (available_scenarios, load_scenario, scenario_path,
                                    ScenarioError)
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from std_msgs.msg import String

DEFAULT_SCENARIO = 'circle'
STARTUP_TIMEOUT = 90.0   # [s] for both processes to come up (the first JIT compile is slow)
GOAL_RESEND_PERIOD = 1.0  # [s] goals are resent until the robot moves: discovery loses some
MOVED_THRESHOLD = 0.05   # [m] a robot this far from its start has acknowledged its goal
PROGRESS_PERIOD = 2.0    # [s] between progress lines
GROUND_TRUTH_END_SLACK = 0.5  # [s] the simulator's last sample may precede the demo's end
GROUND_TRUTH_WAIT = 6.0  # [s] for a running simulator's next ground-truth save (--attach)
TICK_STATS_TOPIC = f'/{NODE_NAME}/tick_stats'  # the node's ~/tick_stats
STATUS_TOPIC = FLEET_BY_NAME['status_topic'].default  # the node's per-robot status (JSON)
# The node's planned route per robot (nav_msgs/Path, latched); its name if the node has one.
ROUTE_TOPIC = (FLEET_BY_NAME['route_topic'].default if 'route_topic' in FLEET_BY_NAME
               else 'orca_route')
ARRIVAL_SLACK = 0.05     # [m] the demo counts a robot within tolerance + slack as arrived
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Monitor:
    """The demo's own ROS node: follows odometry, sends goals, keeps live statistics."""

    def __init__(self, scenario, goal_tolerance):
        """Subscribe to every robot's odom, status and route; advertise its goal_pose."""
        self.scenario = scenario
        self.goal_tolerance = goal_tolerance
        self.node = rclpy.create_node('orca_nav_demo')
        n = len(scenario.robots)
        # Rows of the robots: walkers publish nothing (their rows stay NaN) and never arrive.
        self.robot_rows = np.flatnonzero(~scenario.walkers)
        self.latest = np.full((n, 3), np.nan)     # x, y, yaw from odom
        self.stamps = np.full(n, -np.inf)         # odom stamps [s]
        self.snapshot_stamp = -np.inf
        self.history_t, self.history = [], []     # wall time, (N, 3) snapshots
        # Observed robots and walkers move by themselves (the simulator): no goal to send or
        # acknowledge.
        self.acknowledged = scenario.observed | scenario.walkers
        self.min_separation = math.inf
        self.routes = {}                          # robot name -> (P, 2) last planned route
        self.status = [None] * n                  # the node's last status (dict) per robot
        self.goal_pubs = {}  # robot row -> goal_pose publisher (commanded robots only)
        for i, robot in enumerate(scenario.robots):
            if robot.walker:
                continue  # no topics: the node and the demo know nothing of it
            self.node.create_subscription(Odometry, f'/{robot.name}/odom',
                                          lambda msg, i=i: self._on_odom(i, msg),
                                          QoSProfile(depth=10))
            if not robot.observed:
                self.goal_pubs[i] = self.node.create_publisher(
                    PoseStamped, f'/{robot.name}/goal_pose', QoSProfile(depth=10))
            # The node's latched per-robot status (JSON) tells when it has taken the goal.
            self.node.create_subscription(String, f'/{robot.name}/{STATUS_TOPIC}',
                                          lambda msg, i=i: self._on_status(i, msg), LATCHED)
            self.node.create_subscription(PathMsg, f'/{robot.name}/{ROUTE_TOPIC}',
                                          lambda msg, name=robot.name: self._on_route(name, msg),
                                          LATCHED)
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
            self.status[i] = dict(json.loads(msg.data))
            goal = self.status[i].get('goal')
        except (ValueError, AttributeError, TypeError):
            return
        if goal is not None and np.allclose(goal, self.scenario.goals[i], atol=1e-3):
            self.acknowledged[i] = True

    def _on_route(self, name, msg):
        points = [(p.pose.position.x, p.pose.position.y) for p in msg.poses]
        route = np.array(points, dtype=float).reshape(-1, 2)
        if np.all(np.isfinite(route)):
            self.routes[name] = route

    def _on_odom(self, i, msg):
        try:
            values = odometry_to_tuple(msg)
        except ValueError:
            return
        self.latest[i] = values[:3]
        self.stamps[i] = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        # The simulator publishes every robot's odometry with one stamp: take a snapshot once
        # all of them are in, so that separations compare positions of the same instant.
        if (self.stamps[i] > self.snapshot_stamp
                and np.all(self.stamps[self.robot_rows] == self.stamps[i])):
            self.snapshot_stamp = self.stamps[i]
            self._snapshot()

    def _snapshot(self):
        now = time.time()
        self.history_t.append(now)
        self.history.append(self.latest.copy())
        xy = self.latest[:, :2]
        if len(self.robot_rows) > 1:
            robots = xy[self.robot_rows]
            d = np.linalg.norm(robots[:, None] - robots[None], axis=-1)
            np.fill_diagonal(d, np.inf)
            self.min_separation = min(self.min_separation, float(d.min()))
        moved = np.linalg.norm(xy - self.scenario.starts[:, :2], axis=1) > MOVED_THRESHOLD
        self.acknowledged |= moved | self.at_goal()

    def at_goal(self):
        """(N,) bool: robots now within goal_tolerance of their goal (walkers: False)."""
        dist = np.linalg.norm(self.latest[:, :2] - self.scenario.goals, axis=1)
        return (dist <= self.goal_tolerance) & ~self.scenario.walkers

    def unfinished(self):
        """Lines on the robots not at their goal: where they are and the node's last status."""
        lines = []
        for i in np.flatnonzero(~self.at_goal() & ~self.scenario.walkers):
            robot, status = self.scenario.robots[i], self.status[i] or {}
            x, y = self.latest[i, :2]
            left = math.hypot(*(self.scenario.goals[i] - self.latest[i, :2]))
            state = status.get('state', 'no status')
            reason = f' ({status["reason"]})' if status.get('reason') else ''
            lines.append(f'  {robot.name} at ({x:.2f}, {y:.2f}), {left:.2f} m from its goal, '
                         f'state {state}{reason}')
        return lines

    def have_odom(self):
        """Whether odometry of every robot (not walker) has arrived (the simulator is up)."""
        return not np.isnan(self.latest[self.robot_rows]).any()

    def goals_matched(self):
        """Whether something subscribes to every robot's goal_pose (the node is up)."""
        return all(pub.get_subscription_count() > 0 for pub in self.goal_pubs.values())

    def send_goals(self):
        """Publish the goal of every robot whose goal is not acknowledged yet."""
        stamp = self.node.get_clock().now().to_msg()
        for i, robot in enumerate(self.scenario.robots):
            if self.acknowledged[i] or robot.observed or robot.walker:
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
            # A simulator still running (wait > 0) saves past t_end; a stopped one may not.
            slack = 0.0 if wait > 0.0 else GROUND_TRUTH_END_SLACK
            if ours and data['wall'][-1] >= t_end - slack:
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
    parser.add_argument('--metrics-json', default=None, metavar='FILE',
                        help='also write the metrics of the run (and its exit code) as JSON')
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
    parser.add_argument('--no-map', action='store_true',
                        help='the simulator publishes no map: no routes, no map walls; the '
                             'node sees obstacles in the scans only')
    parser.add_argument('--map-delay', type=float, default=0.0,
                        help='the simulator publishes the map this long [s] after start, '
                             'as a map server that comes late: the goals come first, the '
                             'robots set off straight and get routes when it comes')
    parser.add_argument('--tracking', action='store_true',
                        help='the node tracks people (track_people true, experimental): '
                             'moving walkers are avoided where they are going')
    parser.add_argument('--param', action='append', default=[], metavar='NAME:=VALUE',
                        help='a node parameter for this run, as `ros2 run ... -p` takes it '
                             '(repeatable), e.g. --param footprint_differential:=true or '
                             '--param robot1.max_speed:=0.3; checked as the node checks its '
                             'parameters')
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
    if not 0.0 <= args.map_delay <= 3600.0:
        parser.error(f'--map-delay must be in 0..3600 s, got {args.map_delay}')
    if args.domain_id is not None and not 0 <= args.domain_id <= 232:
        parser.error(f'--domain-id must be in 0..232, got {args.domain_id}')
    if args.robots is not None and args.robots < 1:
        parser.error(f'--robots must be at least 1, got {args.robots}')
    if not args.goal_tolerance > 0.0:
        parser.error(f'--goal-tolerance must be positive, got {args.goal_tolerance}')
    low, high = FLEET_BY_NAME['safety_margin'].range  # the node's own range
    if not low <= args.safety_margin <= high:
        parser.error(f'--safety-margin must be in {low:g}..{high:g} m, got {args.safety_margin}')
    if args.timeout is not None and not args.timeout > 0:
        parser.error(f'--timeout must be positive, got {args.timeout}')
    try:
        args.param = dict(parse_param(text) for text in args.param)
    except ValueError as exc:
        parser.error(f'--param: {exc}')
    return args


def _walkers(scenario):
    """Return ' and N walkers' for a scenario with walkers, else ''."""
    count = int(scenario.walkers.sum())
    return f' and {count} walkers' if count else ''


def _node_params(args, scenario):
    """
    Return the node's parameters of this run: the scenario's, the options', then ``--param``.

    Raises ValueError when the node would refuse them (before anything is started).
    """
    node = node_params(scenario, args.goal_tolerance, args.safety_margin)
    node['track_people'] = bool(args.tracking)
    return with_overrides(node, args.param)


def _start_children(args, path, scenario, drive, node):
    """Start the simulator and the node on a private domain; return (children, work, files)."""
    domain_id = (args.domain_id if args.domain_id is not None
                 else random.randint(*DOMAIN_ID_RANGE))
    # DDS stays on loopback, for this process (the monitor) and for the children.
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ['ROS_DOMAIN_ID'] = str(domain_id)
    env = child_env(domain_id)
    work = Path(tempfile.mkdtemp(prefix='orca_nav_demo_'))
    truth_path = work / 'ground_truth.npz'
    sim = sim_params(path, scenario, args.drive, truth_path, args.seed, args.scan_noise,
                     not args.no_map, args.map_delay)
    sim_file = write_params(work / 'sim.yaml', sim)
    node_file = write_params(work / 'orca_nav.yaml', node)
    given = ''.join(f' {name}:={value}' for name, value in args.param.items())
    print(f'orca_nav demo: scenario {scenario.name!r} ({scenario.description}) with '
          f'{scenario.robot_count} {drive} robots{_walkers(scenario)}'
          f'{"; parameters" + given if given else ""}; '
          f'ROS_DOMAIN_ID={domain_id}, DDS on localhost; logs in {work}', flush=True)
    children = [Child(name, cmd, env, work) for name, cmd in child_commands(sim_file, node_file)]
    return children, work, [truth_path, sim_file, node_file]


def run(args):
    """Run one demo; return its exit code (and write --metrics-json if asked)."""
    # Ctrl-C / SIGTERM end the run early but still shut down cleanly and report. The handlers
    # only set a flag, and stay until the report is out: Ctrl-C under ros2 launch comes twice
    # (the terminal's and launch's), and the second must not break the first's clean end.
    interrupted = []
    previous = {sig: signal.signal(sig, lambda signum, frame: interrupted.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _run(args, interrupted)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _check_demo_libraries():
    """Raise ImportError, saying what to install, unless the demo's own libraries import."""
    try:
        import matplotlib  # noqa: F401 -- the picture (orca_nav.sim.plot)
        import PIL  # noqa: F401 -- map image files (orca_nav.sim.maps, in the simulator)
    except ImportError as exc:
        raise ImportError(f'the demo needs matplotlib and Pillow ({exc}): pip install '
                          "'orca_nav[demo]' (or apt install python3-matplotlib "
                          'python3-pil)') from None


def _run(args, interrupted):
    """Run one demo (see run); ``interrupted`` becomes non-empty on Ctrl-C or SIGTERM."""
    try:
        _check_demo_libraries()
        path = scenario_path(args.scenario)
        scenario = load_scenario(path, robots=args.robots, drive=args.drive)
        node = None if args.attach else _node_params(args, scenario)
    except (ScenarioError, ImportError, ValueError) as exc:
        print(f'orca_nav_demo: {exc}', file=sys.stderr)
        if args.metrics_json:
            write_metrics_json(args.metrics_json, {'scenario': str(args.scenario),
                                                   'exit_code': EXIT_ERROR, 'error': str(exc)})
        return EXIT_ERROR
    drive = '/'.join(sorted({r.drive for r in scenario.robots if not r.walker}))
    out = Path(args.out or f'out/demo_{scenario.name}.png')
    work, files = None, []
    if args.attach:
        # The simulator and the node run already (sim_demo.launch.py): use the environment as
        # it is, follow the fleet and report.
        children = []
        truth_path = Path(args.ground_truth) if args.ground_truth else None
        print(f'orca_nav demo: following scenario {scenario.name!r} with '
              f'{scenario.robot_count} {drive} robots{_walkers(scenario)} on '
              f'ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID", "0")}', flush=True)
    else:
        children, work, files = _start_children(args, path, scenario, drive, node)
        truth_path = files[0]
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    arrival = args.goal_tolerance + ARRIVAL_SLACK
    monitor = Monitor(scenario, arrival)
    status, failure, t_goals = None, None, None
    try:
        status, failure, t_goals = _drive_run(monitor, children, args.timeout or scenario.timeout,
                                              args.quiet, interrupted)
    finally:
        t_end = time.time()
        monitor.destroy()
        rclpy.try_shutdown()
        codes = {c.name: c.stop() for c in children}
    if interrupted:
        print('orca_nav_demo: interrupted; the fleet was stopped', file=sys.stderr)
    elif failure or status == EXIT_TIMEOUT:
        if failure:
            print(f'orca_nav_demo: {failure}', file=sys.stderr)
        for c in children:
            print(f'  {c.name} (exit code {codes[c.name]}), last lines of {c.log_path}:\n'
                  f'{c.tail()}', file=sys.stderr)
    status, record = _report(args, scenario, drive, monitor, out, status, failure, t_goals,
                             truth_path, t_end, bool(interrupted))
    record['parameters'] = dict(args.param)  # the --param overrides of the run
    if args.metrics_json:
        print(f'metrics JSON: {write_metrics_json(args.metrics_json, record)}', flush=True)
    if interrupted and args.attach:
        # Under ros2 launch, Ctrl-C stops the whole launch, which exits 0; so does the demo
        # (launch reports any other exit code as "process has died", in red).
        status = EXIT_OK
    if status == EXIT_OK and work is not None:
        for f in files + [c.log_path for c in children]:
            f.unlink(missing_ok=True)
        try:
            work.rmdir()
        except OSError:
            pass
    return status


def _report(args, scenario, drive, monitor, out, status, failure, t_goals, truth_path, t_end,
            interrupted=False):
    """
    Metrics table, picture and final status of a run; returns (status, JSON record).

    Interrupted (Ctrl-C), an attached demo neither waits for the simulator's next ground-truth
    save nor draws the picture: ros2 launch gives its processes 5 s before SIGTERM.
    """
    if t_goals is None:
        status = status if status is not None else EXIT_ERROR
        return status, metrics_record(scenario, drive, status, error=failure or 'no goals sent')
    wall, poses, source = load_ground_truth(
        truth_path, monitor, t_goals, t_end,
        wait=GROUND_TRUTH_WAIT if args.attach and not interrupted else 0.0)
    if poses is None:
        print('orca_nav_demo: no trajectory was recorded', file=sys.stderr)
        return EXIT_ERROR, metrics_record(scenario, drive, EXIT_ERROR,
                                          error='no trajectory was recorded')
    metrics = compute_metrics(scenario, wall, poses, t_goals, args.goal_tolerance + ARRIVAL_SLACK)
    tick = monitor.tick_percentiles()
    print(f'\nmetrics (from the {source}):')
    print(format_table(metrics, scenario, drive, tick), flush=True)
    title = (f'{scenario.name}: {metrics["robots"]} {drive} robots{_walkers(scenario)}, '
             f'arrived {metrics["arrived"]}/{metrics["robots"]}, collisions '
             f'{metrics["collisions"]}, min separation {metrics["min_separation"]:.2f} m')
    if interrupted and args.attach:  # ros2 launch allows 5 s after Ctrl-C: no time to draw
        print('trajectories: not drawn (interrupted)')
    else:
        print(f'trajectories: {plot_run(scenario, poses, metrics, out, title, monitor.routes)}')
    if status is None:
        status = (EXIT_COLLISION if metrics['collisions'] else
                  EXIT_OK if metrics['arrived'] == metrics['robots'] else EXIT_TIMEOUT)
    elif metrics['collisions']:
        status = EXIT_COLLISION
    return status, metrics_record(scenario, drive, status, metrics, tick, source, failure)


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
    n = monitor.scenario.robot_count   # walkers never arrive
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
            print('\n'.join(monitor.unfinished()), flush=True)
            return EXIT_TIMEOUT, None, t_goals


def main(argv=None):
    """Console entry point: run the demo and exit with its status."""
    args = parse_args(argv)
    watch_parent('orca_nav_demo')  # ros2 launch killed by SIGTERM leaves its processes
    sys.exit(run(args))


if __name__ == '__main__':
    main()
