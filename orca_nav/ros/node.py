"""
The orca_nav node: odometry and goals in, ORCA cmd_vel out, for a whole fleet.

For each robot ``r`` in ``robots`` the node subscribes ``/<r>/odom`` and ``/<r>/goal_pose`` and
publishes ``/<r>/cmd_vel`` (topic names are parameters); robots in ``observed_robots`` are only
watched as moving obstacles. A timer at ``rate`` Hz gathers the latest state of every robot,
computes preferred velocities toward the goals, calls the ORCA core once for the whole fleet and
publishes one command per robot. See README.md ("The node") for topics, parameters and the
status format.

Run::

    python -m orca_nav.node --ros-args --params-file config/orca_nav.yaml -p robots:='[robot1]'
"""

import gc
import json
import signal
import sys
import time

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.core import compute_velocities, warmup
from orca_nav.core import drive
from orca_nav.core import Obstacles
from orca_nav.core.scan import compose_pose, scan_to_segments
from orca_nav.ros import messages
from orca_nav.ros import params as P
from rcl_interfaces.msg import SetParametersResult
import rclpy
from rclpy.duration import Duration
from rclpy.exceptions import ParameterUninitializedException
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.qos import qos_profile_sensor_data
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import LaserScan
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

# Odometry: keep the newest few, best effort so that reliable and best-effort publishers both
# match; the timer only ever uses the newest message of each robot.
ODOM_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5,
                      reliability=ReliabilityPolicy.BEST_EFFORT)
# Goals and commands: reliable, as RViz, Nav2 and teleop use them.
GOAL_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                      reliability=ReliabilityPolicy.RELIABLE)
CMD_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                     reliability=ReliabilityPolicy.RELIABLE)
# Status: latched, so a late subscriber gets every robot's current state at once.
STATUS_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                        reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)
WARN_THROTTLE = 2.0      # [s] between repeats of the same warning
STATS_WINDOW = 1000      # ticks kept for the tick-duration percentiles
# A tick up to this fraction of a period early still counts for its own period (timer jitter).
MISSED_PERIOD_SLACK = 0.1
SHUTDOWN_ACK_TIMEOUT = 0.5  # [s] waiting for subscribers to acknowledge the zero commands

# main() collects the oldest garbage generation itself, right after a tick, this often [s]:
# Python's own full collections were measured at 50-70 ms with 100 robots, at random moments,
# enough to push a tick past its period.
FULL_GC_PERIOD = 10.0
# Automatic full collections are pushed this far away (gen-1 collections between two).
GC_THRESHOLD_2 = 1_000_000

# Robot states reported on the status topic (see README.md, "The node").
NO_ODOMETRY = 'no_odometry'
STALE_ODOMETRY = 'stale_odometry'
IDLE = 'idle'
ACTIVE = 'active'
REACHED = 'reached'


class OrcaNavNode(Node):
    """ORCA collision avoidance for the robots named in the ``robots`` parameter."""

    def __init__(self, node_name='orca_nav', **kwargs):
        """
        Declare and validate parameters, create subscriptions, publishers and timers.

        kwargs go to ``rclpy.node.Node`` (namespace, context, parameter_overrides, ...).
        Raises ValueError with the reason when the parameters are invalid.
        """
        super().__init__(node_name, **kwargs)
        values = self._declare_parameters()
        error = P.validate(values)
        if error:
            raise ValueError(f'invalid parameters: {error}')
        self.settings = P.resolve(values)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        warmup()  # compile the core's JIT kernels now, not in the first tick (cached on disk)
        s = self.settings
        n, c = len(s.names), s.n_controlled
        self.period = 1.0 / values['rate']

        # Odometry, written by the callbacks (plain lists: the cheapest store per message).
        self._odom_msg = [None] * n
        self._odom_count = [0] * n       # messages received
        self._odom_rx_ns = [0] * n       # receive time of the newest, node clock [ns]
        self._odom_used = [0] * n        # count at the last tick
        # Odometry as numbers, written by the timer (odometry frame, body-frame twist).
        self._odom_xy = np.zeros((n, 2))
        self._odom_yaw = np.zeros(n)
        self._twist = np.zeros((n, 3))   # v_forward, v_left, yaw_rate
        self._has_pose = np.zeros(n, bool)
        self._valid_ns = np.zeros(n, np.int64)  # receive time of the newest valid message
        self._odom_rejected = 0
        # Goals (commanded robots only), written by the goal callbacks.
        self._goal = np.zeros((c, 2))
        self._goal_yaw = np.zeros(c)
        self._has_goal = np.zeros(c, bool)
        self._goal_rejected = 0
        self._goals_received = 0
        # Published state, for status, markers and tests.
        self.last_commands = np.zeros((c, 3))  # vx, vy, wz per commanded robot
        self.commands_published = 0            # command rounds (one message per robot)
        self._states = [None] * c
        self._viz = None
        self._pending_states = None
        # Tick statistics.
        self._durations = np.zeros(STATS_WINDOW)
        self._ticks = 0
        self._missed = 0
        self._tick_errors = 0
        self._last_tick_ns = None
        self._first_tick_ns = None
        self._ticks_since_first = 0
        self._recent_ms = []          # tick durations since the last ~/tick_stats message
        self._recent_delay_ns = 0     # largest odometry delay (receive - stamp) since then
        self._full_gc_every = 0       # ticks between full collections, 0 = Python decides

        stamped = values['cmd_vel_stamped']
        self._cmd_msgs = [messages.new_command(stamped) for _ in range(c)]
        self._cmd_pubs = []
        self._status_pubs = []
        for i, robot in enumerate(s.names):
            # raw=True: the callback stores the serialized message; the timer reads the few
            # numbers it needs (see messages.odometry_from_cdr). This is the hot path.
            store = self._store_callback(i, self._odom_msg, self._odom_count, self._odom_rx_ns)
            self.create_subscription(Odometry, self._topic(robot, 'odom_topic'), store, ODOM_QOS,
                                     raw=True)
            if i >= c:
                continue
            self.create_subscription(PoseStamped, self._topic(robot, 'goal_topic'),
                                     self._goal_callback(i), GOAL_QOS)
            cmd_type = type(self._cmd_msgs[i])
            self._cmd_pubs.append(self.create_publisher(
                cmd_type, self._topic(robot, 'cmd_vel_topic'), CMD_QOS))
            self._status_pubs.append(self.create_publisher(
                String, self._topic(robot, 'status_topic'), STATUS_QOS))
        # Laser scans (commanded robots): stored by the callbacks, turned into segments by the
        # timer, kept for obstacle_timeout.
        self._scan_msg = [None] * c
        self._scan_count = [0] * c
        self._scan_rx_ns = [0] * c
        self._scan_used = [0] * c
        self._scan_segments = [np.zeros((0, 2, 2))] * c
        self._scan_ns = np.zeros(c, np.int64)
        self._scan_rejected = 0
        if values['scan_enabled']:
            for i, robot in enumerate(s.names[:c]):
                store = self._store_callback(i, self._scan_msg, self._scan_count,
                                             self._scan_rx_ns)
                self.create_subscription(LaserScan, self._topic(robot, 'scan_topic'), store,
                                         qos_profile_sensor_data)
        self._stats_pub = self.create_publisher(String, '~/tick_stats', 10)
        self._marker_pub = self.create_publisher(MarkerArray, '~/markers', 1)
        self._timer = self.create_timer(self.period, self._tick)
        self._marker_timer = self.create_timer(1.0 / values['marker_rate'], self._publish_markers)
        self.get_logger().info(
            f'controlling {c} robot(s) {s.names[:c]}, observing {n - c}, at {values["rate"]} Hz')

    # --- parameters ------------------------------------------------------------------------

    def _declare_parameters(self):
        """Declare every parameter with its descriptor; return the ``{name: value}`` dict."""
        for spec in P.FLEET_PARAMS:
            self.declare_parameter(spec.name, P.declare_value(spec), P.descriptor(spec))
        values = {spec.name: self._value(spec.name) for spec in P.FLEET_PARAMS}
        for name, spec in P.all_specs(values['robots'], values['observed_robots']):
            if name not in values:
                self.declare_parameter(name, P.declare_value(spec), P.descriptor(spec))
                values[name] = self._value(name)
        return values

    def _value(self, name):
        try:
            value = self.get_parameter(name).value
        except ParameterUninitializedException:  # a typed list with no value: empty
            return []
        if value is None:
            return []
        if not isinstance(value, (str, bool, int, float)):
            return list(value)  # rclpy returns double arrays as array.array
        return value

    def _on_set_parameters(self, parameters):
        """Validate the whole parameter set with the new values; apply all or nothing."""
        values = dict(self.settings.values)
        for p in parameters:
            if p.name in values:
                value = p.value
                if value is not None and not isinstance(value, (str, bool, int, float)):
                    value = list(value)
                values[p.name] = value
        error = P.validate(values)
        if error:
            return SetParametersResult(successful=False, reason=error)
        self.settings = P.resolve(values)
        return SetParametersResult(successful=True)

    def _topic(self, robot, key):
        return f'/{robot}/{self.settings.values[key]}'

    # --- callbacks ---------------------------------------------------------------------------

    def _store_callback(self, i, msgs, counts, rx_ns):
        """
        Return a callback that stores robot i's message and its receive time, nothing else.

        Used for odometry (raw bytes, read in the tick) and laser scans: the hot path stays a
        few assignments, whatever the message rate.
        """
        clock = self.get_clock()

        def callback(msg):
            msgs[i] = msg
            counts[i] += 1
            rx_ns[i] = clock.now().nanoseconds
        return callback

    def _goal_callback(self, i):
        """Goal callback of robot i: check frame and values, then store the goal."""
        robot = self.settings.names[i]

        def callback(msg):
            self._goals_received += 1
            try:
                x, y, yaw = messages.goal_from_pose(msg, self.settings.values['global_frame'])
            except ValueError as exc:
                self._goal_rejected += 1
                self.get_logger().warning(f'{robot}: goal rejected: {exc}',
                                          throttle_duration_sec=WARN_THROTTLE)
                return
            self._goal[i] = (x, y)
            self._goal_yaw[i] = yaw
            self._has_goal[i] = True
            self.get_logger().info(f'{robot}: new goal ({x:.2f}, {y:.2f})')
        return callback

    # --- the control step --------------------------------------------------------------------

    def _tick(self):
        """Timer callback: one ORCA step for the fleet; zeros and a log line if it fails."""
        start = time.perf_counter()
        now_ns = self.get_clock().now().nanoseconds
        self._count_missed_periods(now_ns)
        try:
            self._step(now_ns)
        except Exception as exc:  # noqa: B902 -- one bad tick must not kill the node
            self._tick_errors += 1
            self.get_logger().error(f'tick failed ({exc!r}); publishing zero commands',
                                    throttle_duration_sec=WARN_THROTTLE)
            self.stop_all(wait=False)
        self._publish_status()
        duration = time.perf_counter() - start
        self._durations[self._ticks % STATS_WINDOW] = duration
        self._recent_ms.append(round(duration * 1e3, 3))
        self._ticks += 1
        if self._ticks % max(1, int(round(1.0 / self.period))) == 0:
            stats = self.tick_stats()
            stats['recent_tick_ms'] = self._recent_ms
            stats['recent_odom_delay_ms'] = round(self._recent_delay_ns * 1e-6, 3)
            self._recent_ms = []
            self._recent_delay_ns = 0
            self._stats_pub.publish(String(data=json.dumps(stats)))
        if self._full_gc_every and self._ticks % self._full_gc_every == 0:
            gc.collect()  # in the idle rest of this period, not in the middle of a tick

    def take_over_gc(self):
        """
        Run the full garbage collections at quiet moments (for the node's own process).

        Freezes the start-up objects (never collected again), stops automatic full
        collections and instead runs one every FULL_GC_PERIOD seconds right after a tick.
        """
        gc.freeze()
        gen0, gen1, _ = gc.get_threshold()
        gc.set_threshold(gen0, gen1, GC_THRESHOLD_2)
        self._full_gc_every = max(1, int(round(FULL_GC_PERIOD / self.period)))

    def _count_missed_periods(self, now_ns):
        """
        Count timer periods in which no tick ran.

        Period k of the timer starts at first + k * period; by now, floor((now - first) /
        period) + 1 ticks should have run. A tick that is late but runs within its period is
        not a missed one; a clock jumping back (simulation restarted) starts a new count.
        """
        if self._first_tick_ns is None or now_ns < self._last_tick_ns:
            self._first_tick_ns = now_ns
            self._ticks_since_first = 0
        self._last_tick_ns = now_ns
        expected = int((now_ns - self._first_tick_ns) * 1e-9 / self.period
                       + MISSED_PERIOD_SLACK) + 1
        self._ticks_since_first += 1
        if expected > self._ticks_since_first:
            self._missed += expected - self._ticks_since_first
            self._ticks_since_first = expected

    def _ingest_odometry(self):
        """Convert the odometry received since the last tick; reject NaN/inf messages."""
        for i in range(len(self._odom_msg)):
            count = self._odom_count[i]
            if count == self._odom_used[i]:
                continue
            self._odom_used[i] = count
            try:
                values = messages.odometry_from_cdr(self._odom_msg[i])
            except ValueError as exc:
                self._odom_rejected += 1
                self.get_logger().warning(f'{self.settings.names[i]}: {exc}',
                                          throttle_duration_sec=WARN_THROTTLE)
                continue
            if values is None:
                self._odom_rejected += 1
                self.get_logger().warning(
                    f'{self.settings.names[i]}: odometry with NaN or inf rejected',
                    throttle_duration_sec=WARN_THROTTLE)
                continue
            self._odom_xy[i] = values[0:2]
            self._odom_yaw[i] = values[2]
            self._twist[i] = values[3:6]
            self._has_pose[i] = True
            self._valid_ns[i] = self._odom_rx_ns[i]
            delay = self._odom_rx_ns[i] - values[6]
            if delay > self._recent_delay_ns:
                self._recent_delay_ns = delay

    def _step(self, now_ns):
        s = self.settings
        v = s.values
        c = s.n_controlled
        self._ingest_odometry()
        pos, yaw = messages.odom_to_global(self._odom_xy, self._odom_yaw, s.odom_offset)
        age = (now_ns - self._valid_ns) * 1e-9
        fresh = self._has_pose & (age <= v['odom_timeout'])
        present = self._has_pose & (age <= v['odom_timeout'] + v['stale_keepout_time'])
        active = fresh.copy()
        active[c:] = False

        # Every robot as an ORCA disc: the centre for holonomic robots, the point ahead of the
        # axle (radius + lookahead) for differential ones. Stale robots stand still.
        diff = s.differential
        centre_vel = drive.body_to_world(self._twist[:, :2], yaw)
        point_vel = drive.lookahead_velocities(self._twist[:, 0], self._twist[:, 2], yaw,
                                               s.lookahead)
        orca_pos = np.where(diff[:, None], drive.lookahead_points(pos, yaw, s.lookahead), pos)
        orca_vel = np.where(diff[:, None], point_vel, centre_vel)
        orca_vel[~fresh] = 0.0
        orca_radius = s.radius + s.lookahead

        pref, reached, dist = drive.preferred_velocities(
            pos[:c], self._goal, self._has_goal, s.pref_speed[:c], v['slowdown_distance'],
            v['goal_tolerance'], time_step=self.period, right_bias=v['pass_on_right'])
        all_pref = np.zeros_like(pos)
        all_pref[:c] = pref

        new_vel = np.zeros_like(pos)
        idx = np.flatnonzero(present)
        if active.any():
            new_vel[idx] = compute_velocities(
                orca_pos[idx], orca_vel[idx], all_pref[idx], orca_radius[idx],
                s.max_speed[idx], time_step=self.period, neighbor_dist=v['neighbor_dist'],
                max_neighbors=v['max_neighbors'], time_horizon=v['time_horizon'],
                time_horizon_obst=v['time_horizon_obst'],
                obstacles=self._obstacles(now_ns, pos, yaw, fresh, present, idx),
                active=active[idx], collision_guard=True)

        cmd = np.zeros((c, 3))
        hol = active[:c] & ~diff[:c]
        dif = active[:c] & diff[:c]
        if hol.any():
            cmd[hol, :2] = drive.holonomic_command(new_vel[:c][hol], yaw[:c][hol],
                                                   s.max_speed[:c][hol])
        if dif.any():
            lin, ang = drive.differential_command(new_vel[:c][dif], yaw[:c][dif],
                                                  s.lookahead[:c][dif], s.max_speed[:c][dif],
                                                  s.max_angular_speed[:c][dif])
            cmd[dif, 0] = lin
            cmd[dif, 2] = ang
        cmd = self._limit(cmd)
        self._publish_commands(cmd)

        states = []
        for i in range(c):
            if not self._has_pose[i]:
                states.append(NO_ODOMETRY)
            elif not fresh[i]:
                states.append(STALE_ODOMETRY)
            elif not self._has_goal[i]:
                states.append(IDLE)
            else:
                states.append(REACHED if reached[i] else ACTIVE)
        self._pending_states = (states, dist)
        self._viz = (pos, s.radius.copy(), new_vel, states + ['observed'] * (len(s.names) - c))

    def _limit(self, cmd):
        """Last line of defence: finite, and within each robot's limits whatever happened."""
        s = self.settings
        c = s.n_controlled
        cmd = np.where(np.isfinite(cmd), cmd, 0.0)
        cmd[:, :2] = drive.clamp_speed(cmd[:, :2], s.max_speed[:c])
        cmd[s.differential[:c], 1] = 0.0
        cmd[~s.differential[:c], 2] = 0.0
        cmd[:, 2] = np.clip(cmd[:, 2], -s.max_angular_speed[:c], s.max_angular_speed[:c])
        return cmd

    def _publish_commands(self, cmd):
        stamped = self.settings.values['cmd_vel_stamped']
        stamp = self.get_clock().now().to_msg() if stamped else None
        for i, pub in enumerate(self._cmd_pubs):
            msg = messages.fill_command(self._cmd_msgs[i], cmd[i, 0], cmd[i, 1], cmd[i, 2],
                                        stamp, self.settings.names[i] + '/base_link')
            pub.publish(msg)
        self.last_commands = cmd
        self.commands_published += 1

    def _publish_status(self):
        pending = self._pending_states
        if pending is None:
            return
        states, dist = pending
        self._pending_states = None
        for i, state in enumerate(states):
            if state != self._states[i]:
                self._states[i] = state
                goal = self._goal[i] if self._has_goal[i] else None
                self._status_pubs[i].publish(messages.status_message(
                    self.settings.names[i], state, goal, float(dist[i])))

    def _obstacles(self, now_ns, pos, yaw, fresh, present, idx):
        """
        Return the scan obstacles for the core (None without scans).

        New scans of robots with fresh odometry become segments in the global frame (returns
        from known robots dropped); segments younger than obstacle_timeout are avoided by the
        robot that saw them, or by every robot with share_obstacles.
        """
        v = self.settings.values
        if not v['scan_enabled']:
            return None
        s = self.settings
        c = s.n_controlled
        for i in range(c):
            count = self._scan_count[i]
            if count == self._scan_used[i] or not fresh[i]:
                continue
            self._scan_used[i] = count
            msg = self._scan_msg[i]
            # Returns from the other known robots are dropped (they are ORCA agents already).
            # The scanning robot itself is not in this list: its own body is below the laser's
            # range_min, and dropping returns within radius + margin of itself would hide the
            # obstacles closest to it, the dangerous ones.
            others = present.copy()
            others[i] = False
            try:
                sensor = compose_pose((pos[i, 0], pos[i, 1], yaw[i]), v['scan_sensor_offset'])
                self._scan_segments[i] = scan_to_segments(
                    np.asarray(msg.ranges, dtype=float), msg.angle_min, msg.angle_increment,
                    msg.range_min, msg.range_max, sensor, pos[others], s.radius[others])
                self._scan_ns[i] = self._scan_rx_ns[i]
            except ValueError as exc:
                self._scan_rejected += 1
                self.get_logger().warning(f'{s.names[i]}: scan rejected: {exc}',
                                          throttle_duration_sec=WARN_THROTTLE)
        # Owners are indices into the agents handed to the core (the present robots).
        agent = np.full(len(s.names), -1)
        agent[idx] = np.arange(len(idx))
        age = (now_ns - self._scan_ns) * 1e-9
        segments, owners = [], []
        for i in range(c):
            seg = self._scan_segments[i]
            if len(seg) and agent[i] >= 0 and age[i] <= v['obstacle_timeout']:
                segments.append(seg)
                owners.append(np.full(len(seg), -1 if v['share_obstacles'] else agent[i]))
        if not segments:
            return None
        return Obstacles.build(segments=np.concatenate(segments),
                               segment_owner=np.concatenate(owners))

    def _publish_markers(self):
        if not self.settings.values['publish_markers'] or self._viz is None:
            return
        pos, radius, vel, states = self._viz
        c = self.settings.n_controlled
        goals = np.zeros_like(pos)
        goals[:c] = self._goal
        has_goal = np.zeros(len(pos), bool)
        has_goal[:c] = self._has_goal
        self._marker_pub.publish(messages.build_markers(
            self.settings.values['global_frame'], self.get_clock().now().to_msg(),
            self.settings.names, pos, radius, vel, goals, has_goal, states,
            self._has_pose.copy()))

    # --- statistics and shutdown -------------------------------------------------------------

    def tick_stats(self):
        """Tick statistics: counts, missed periods and tick duration percentiles [ms]."""
        k = min(self._ticks, STATS_WINDOW)
        d = self._durations[:k] * 1e3
        return {
            'ticks': self._ticks,
            'missed_periods': self._missed,
            'tick_errors': self._tick_errors,
            'tick_ms_p50': float(np.percentile(d, 50)) if k else None,
            'tick_ms_p99': float(np.percentile(d, 99)) if k else None,
            'tick_ms_max': float(d.max()) if k else None,
            'odom_received': int(sum(self._odom_count)),
            'odom_rejected': self._odom_rejected,
            'goals_rejected': self._goal_rejected,
            'scans_received': int(sum(self._scan_count)),
            'scans_rejected': self._scan_rejected,
        }

    def stop_all(self, wait=True):
        """Publish a zero command to every commanded robot; optionally wait for delivery."""
        zeros = np.zeros((self.settings.n_controlled, 3))
        try:
            self._publish_commands(zeros)
        except Exception as exc:  # noqa: B902 -- e.g. the context is already shut down
            self.get_logger().error(f'could not publish zero commands: {exc!r}')
            return False
        if wait:
            deadline = time.monotonic() + SHUTDOWN_ACK_TIMEOUT
            for pub in self._cmd_pubs:
                left = deadline - time.monotonic()
                if left <= 0.0:
                    break
                pub.wait_for_all_acked(Duration(nanoseconds=int(left * 1e9)))
        return True


def make_executor(kind, logger=None, context=None):
    """Return an rclpy executor: 'single', 'multi' or 'events' (see the executor parameter)."""
    if kind == 'events':
        try:
            from rclpy.experimental import EventsExecutor
            return EventsExecutor(context=context)
        except ImportError:
            if logger is not None:
                logger.warning('EventsExecutor is not available here: using the '
                               'SingleThreadedExecutor')
    if kind == 'multi':
        return MultiThreadedExecutor(context=context)
    return SingleThreadedExecutor(context=context)


# How often the spin loop of main() looks at the stop flag set by SIGINT / SIGTERM [s].
STOP_POLL_PERIOD = 0.05


def main(args=None):
    """Run the node until Ctrl-C or SIGTERM; every robot then gets a zero command."""
    # rclpy's own signal handlers shut the context down before our code runs, after which no
    # zero command can be published. Raising KeyboardInterrupt from a handler can surface in
    # the middle of rclpy's C++ calls. So the handlers only set a flag that the loop checks.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = []

    def request_stop(signum, frame):
        stop.append(signum)

    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, request_stop) for sig in signals}
    node = None
    code = 0
    try:
        node = OrcaNavNode()
        node.take_over_gc()
        executor = make_executor(node.settings.values['executor'], node.get_logger())
        executor.add_node(node)
        while not stop and rclpy.ok():
            executor.spin_once(timeout_sec=STOP_POLL_PERIOD)
        if stop:
            node.get_logger().info(f'{signal.Signals(stop[0]).name}: stopping every robot')
    except ExternalShutdownException:
        pass
    except Exception as exc:  # noqa: B902 -- report bad parameters as one readable line
        rclpy.logging.get_logger('orca_nav').fatal(str(exc))
        code = 1
    finally:
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        if node is not None:
            node.stop_all()
            node.destroy_node()
        rclpy.try_shutdown()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code


if __name__ == '__main__':
    sys.exit(main())
