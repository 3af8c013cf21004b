"""
The orca_nav node: odometry and goals in, ORCA cmd_vel out, for a whole fleet. Wiring only.

For each robot ``r`` in ``robots`` the node subscribes ``/<r>/odom``, ``/<r>/goal_pose``,
``/<r>/plan`` (and ``/<r>/scan``), the map on ``/map``, and publishes ``/<r>/cmd_vel``,
``/<r>/orca_status`` and ``/<r>/orca_route`` (topic names are parameters); robots in
``observed_robots`` are only watched. A timer at ``rate`` Hz hands the newest inputs to the
fleet controller (orca_nav.control) and publishes its answer. See docs/node.md.

Run (orca_nav.ros.main)::

    python -m orca_nav.node --ros-args --params-file config/orca_nav.yaml -p robots:='[robot1]'
"""

import json
import os
import signal
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from nav_msgs.msg import OccupancyGrid, Odometry, Path
import numpy as np
from orca_nav.control import FleetController
from orca_nav.core import warmup
from orca_nav.ros import messages
from orca_nav.ros import params as P
from orca_nav.ros.inputs import OdometryStore, PoseStore, ScanStore
from orca_nav.ros.outputs import FleetOutputs, LATCHED_QOS, RELIABLE_QOS
from orca_nav.ros.tick_monitor import ScanQuota, TickMonitor
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import LaserScan
from std_msgs.msg import Empty, Float64, String

# Odometry and scans: the newest message only, best effort so that reliable and best-effort
# publishers both match. The tick takes it from the middleware (see orca_nav.ros.inputs).
NEWEST_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                        reliability=ReliabilityPolicy.BEST_EFFORT)
# Localisation poses: AMCL publishes amcl_pose reliable and transient local; so is this (the
# newest pose, also one published before the node started). Best-effort publishers do not match.
POSE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)
WARN_THROTTLE = 2.0         # [s] between two warnings of one robot about one field
# [s] wall (steady) time between two looks at the process that started the node and at /clock
# (ROS timers do not run on simulated time until a /clock message arrives).
WATCH_PERIOD = 0.2
NO_CLOCK_WARN_AFTER = 3.0   # [s] of wall time without /clock (use_sim_time) before a warning
NO_CLOCK = 'no_clock'       # status state while use_sim_time waits for /clock
# Parameters the map is read with: a runtime change reads the newest map again.
MAP_PARAMS = ('global_frame', 'occupied_threshold', 'unknown_is_free', 'max_map_cells')


class OrcaNavNode(Node):
    """ORCA collision avoidance for the robots named in the ``robots`` parameter."""

    def __init__(self, node_name='orca_nav', **kwargs):
        """
        Declare and validate parameters, create subscriptions, publishers and timers.

        kwargs go to ``rclpy.node.Node`` (namespace, context, parameter_overrides, ...).
        Raises ValueError with the reason when the parameters are invalid.
        """
        super().__init__(node_name, **kwargs)
        self.settings = P.declare_and_resolve(self)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        warmup()  # compile the core's JIT kernels now, not in the first tick (cached on disk)
        p, names, c = self.settings.params, self.settings.names, self.settings.n_controlled
        self.controller = FleetController(self.settings.fleet, self.settings.navigation)
        self.monitor = TickMonitor(1.0 / p.rate)
        self.scan_quota = ScanQuota(c, 1.0 / p.rate, p.obstacle_timeout)
        self._scans_limited = False  # a tick left scans waiting since the last statistics
        self.odometry = OdometryStore(len(names), self.get_clock(), self.context)
        self.scans = ScanStore(c, self.get_clock(), self.context)
        self.poses = PoseStore(len(names), self.get_clock(), self.context)
        self.outputs = FleetOutputs(self, self.settings)
        self.goals_received = self.goals_rejected = self.goals_cancelled = 0
        self.maps_rejected = self.paths_rejected = 0
        self._warned = {}  # (robot row or None, field) -> (last logged [s, monotonic], held)
        self._result = None
        self._map_msg = None  # the newest OccupancyGrid
        self._fresh_min = 1.0  # see tick_stats' recent_fresh_share
        # The hot path: odometry and scans are taken by the tick from subscriptions of a node
        # that nothing spins (no callback per message). raw=True: the tick reads the few
        # numbers it needs from the serialized odometry (messages.odometry_from_cdr).
        # It keeps the command line's topic remappings; its own name wins over a node name
        # remapping (launch's name=) that would otherwise give it this node's name.
        intake = f'{self.get_name()}_intake'
        # Public: tests and tools find the odometry and scan subscriptions here.
        self.intake = Node(intake, context=self.context, namespace=self.get_namespace(),
                           cli_args=['--ros-args', '-r', f'__node:={intake}'],
                           start_parameter_services=False, enable_rosout=False)
        pose_topics = P.per_robot(self.settings.values, names, 'pose_topic')
        for i, robot in enumerate(names):
            def topic(name, robot=robot):
                return P.robot_topic(p.robots_namespace, robot, name)
            self.odometry.attach(i, self.intake.create_subscription(
                Odometry, topic(p.odom_topic), _never, NEWEST_QOS, raw=True))
            if pose_topics[i]:
                self.poses.attach(i, self.intake.create_subscription(
                    PoseWithCovarianceStamped, topic(pose_topics[i]), _never, POSE_QOS))
            if i >= c:
                continue
            self.create_subscription(PoseStamped, topic(p.goal_topic),
                                     self._goal_callback(i), RELIABLE_QOS, raw=True)
            self.create_subscription(Empty, topic(p.cancel_topic),
                                     self._cancel_callback(i), RELIABLE_QOS)
            self.create_subscription(Path, topic(p.plan_topic),
                                     self._path_callback(i), RELIABLE_QOS)
            self.create_subscription(Float64, topic(p.priority_topic),
                                     self._priority_callback(i), RELIABLE_QOS)
            if p.scan_enabled:
                self.scans.attach(i, self.intake.create_subscription(
                    LaserScan, topic(p.scan_topic), _never, NEWEST_QOS, raw=True))
        self.create_subscription(OccupancyGrid, p.map_topic, self._on_map, LATCHED_QOS)
        self._stats_pub = self.create_publisher(String, '~/tick_stats', 10)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self._timer = self.create_timer(1.0 / p.rate, self._tick)
        self._marker_timer = self.create_timer(1.0 / p.marker_rate, self._publish_markers)
        # The process that started the node (ros2 launch, a shell, systemd): when it is gone
        # (ros2 launch killed with SIGTERM exits without stopping its nodes), the node stops
        # every robot and exits. Started by init (pid 1) directly: nothing to watch.
        self.parent_pid = os.getppid()
        self._started = time.monotonic()
        self._clock_warned = False
        self._watch_timer = self.create_timer(WATCH_PERIOD, self._watch,
                                              clock=Clock(clock_type=ClockType.STEADY_TIME))
        shown = list(names[:min(c, 10)]) + (['...'] if c > 10 else [])  # one short line
        self.get_logger().info(f'controlling {c} robot(s) {shown}, observing '
                               f'{len(names) - c}, at {p.rate} Hz')
        self._report_parameters()
        unknown = P.unknown_groups(self.settings.values)
        if unknown:
            self.get_logger().warning(f'groups_to_ignore names groups no robot belongs to: '
                                      f'{unknown} (allowed; check the spelling)')

    def _report_parameters(self):
        """
        Log the parameter overrides that ROS 2 would ignore silently, and dropped observers.

        ``unused_parameters``: misspelt names (WARNING, with the nearest parameter); overrides
        of robots this node neither commands nor observes (INFO: a shared params file).
        """
        c = self.settings.n_controlled
        robots = list(self.settings.names)
        given = self.get_parameter('observed_robots').value or []
        dropped = [o for o in given if o in robots[:c]]
        if dropped:
            self.get_logger().info(f'observed_robots: {dropped} not observed: this node '
                                   'commands them')
        # rclpy has no public accessor for the overrides it was given (params files, -p).
        overrides = list(getattr(self, '_parameter_overrides', {}))
        declared = list(self.get_parameters_by_prefix(''))
        misspelt, other = P.unused_overrides(overrides, declared, robots)
        self.unused_parameters = [name for name, _ in misspelt] + other
        for name, hint in misspelt:
            suggestion = f' (did you mean {hint!r}?)' if hint else ''
            self.get_logger().warning(f'parameter {name!r} is not a parameter of this node'
                                      f'{suggestion}: ignored')
        if other:
            self.get_logger().info(f'parameters of robots this node neither commands nor '
                                   f'observes, ignored: {other}')

    def _on_set_parameters(self, parameters):
        """Validate the whole parameter set with the new values; apply all or nothing."""
        result, settings = P.on_set(self.settings, parameters)
        if settings is not None:
            old, self.settings = self.settings, settings
            self.controller.reconfigure(settings.fleet, settings.navigation)
            self.scan_quota.set_obstacle_timeout(settings.params.obstacle_timeout)
            self.outputs.reconfigure(settings)  # frame and groups of what it publishes
            if self._map_msg is not None and any(old.values[k] != settings.values[k]
                                                 for k in MAP_PARAMS):
                self._on_map(self._map_msg)  # the newest map, read with the new values
        return result

    def _warn(self, i, text):
        """
        Log a warning about robot row i (None: the fleet), throttled per robot and field.

        The field is the text before its first ':' ('odometry pose', 'goal position', ...):
        one robot's flood of bad messages neither floods the log nor hides another robot's
        warnings. Held-back repeats are counted in the next one that is logged.
        """
        key = (i, text.split(':', 1)[0])
        now = time.monotonic()
        last, held = self._warned.get(key, (-float('inf'), 0))
        if now - last < WARN_THROTTLE:
            self._warned[key] = (last, held + 1)
            return
        self._warned[key] = (now, 0)
        if held:
            text += f' ({held} more since the last such warning)'
        self.get_logger().warning(text if i is None else f'{self.settings.names[i]}: {text}')

    def _priority_callback(self, i):
        """Priority override of robot i: immovable for msg.data seconds (0 ends it)."""
        def callback(msg):
            try:
                now = self.get_clock().now().nanoseconds * 1e-9
                self.controller.set_priority(i, msg.data, now)
            except ValueError as exc:
                self._warn(i, f'priority rejected: {exc}')
                return
            self.get_logger().debug(f'{self.settings.names[i]}: priority for {msg.data} s')
        return callback

    def _goal_callback(self, i):
        """
        Goal callback of robot i (serialized): check frame and values, hand the goal over.

        A fleet manager may re-send every robot's goal every few seconds: the same goal again
        (the same bytes after the stamp, while the robot still has that goal) is counted and
        nothing else, without even reading the message, so that a burst of them for a large
        fleet cannot delay a tick.
        """
        robot = self.settings.names[i]
        last = [None, None]  # the bytes after the stamp of robot i's goal, and its (x, y, yaw)

        def callback(buf):
            self.goals_received += 1
            body = buf[messages.STAMP_END:]
            if body == last[0] and self.controller.has_goal_at(i, *last[1]):
                return
            msg = deserialize_message(buf, PoseStamped)
            if not msg.header.frame_id:  # an empty frame: cancel (as RViz cannot send it)
                self._cancel(i)
                return
            try:
                x, y, yaw = messages.goal_from_pose(msg, self.settings.params.global_frame)
                changed = self.controller.set_goal(i, x, y, yaw)  # checks max_coordinate
            except ValueError as exc:
                self.goals_rejected += 1
                self._warn(i, f'{exc}; goal rejected')
                return
            last[:] = body, (x, y, yaw)
            if changed:  # DEBUG: a flood of goals must not flood the log
                self.get_logger().debug(f'{robot}: new goal ({x:.2f}, {y:.2f})')
        return callback

    def _cancel_callback(self, i):
        """Cancel topic of robot i (std_msgs/Empty): drop the goal, stop, report idle."""
        def callback(msg):
            self._cancel(i)
        return callback

    def _cancel(self, i):
        """Robot i drops its goal and route: zero commands from the next tick, state idle."""
        self.controller.cancel_goal(i)
        self.goals_cancelled += 1
        self.get_logger().info(f'{self.settings.names[i]}: goal cancelled')

    def _path_callback(self, i):
        """External route of robot i (e.g. Nav2's planner): followed to its last pose."""
        def callback(msg):
            try:
                points = messages.route_from_path(msg, self.settings.params.global_frame)
                self.controller.set_route(i, points)  # checks max_coordinate
            except ValueError as exc:
                self.paths_rejected += 1
                self._warn(i, f'path rejected: {exc}')
        return callback

    def _on_map(self, msg):
        """Replace the map with a new one (the old one is kept when the new one is refused)."""
        self._map_msg = msg  # read again when a parameter of MAP_PARAMS changes
        p = self.settings.params
        try:
            grid = messages.grid_from_occupancy(msg, p.global_frame, p.occupied_threshold,
                                                p.unknown_is_free, p.max_map_cells)
        except ValueError as exc:
            self.maps_rejected += 1
            self._warn(None, f'map rejected, keeping the previous one: {exc}')
            return
        self.controller.set_map(grid)
        self.get_logger().info(f'map {msg.info.width} x {msg.info.height} cells at '
                               f'{msg.info.resolution} m: planning routes')

    def _tick(self):
        """
        Timer callback: one controller step; zero commands and a log line if it fails.

        Bad input of one robot stops that robot only (the controller isolates it, including a
        solver call that fails with it); the fallback here is for what cannot be isolated.
        """
        start = time.perf_counter()
        now_ns = self.get_clock().now().nanoseconds
        self.monitor.start(now_ns)
        try:
            warnings = self.odometry.update()
            inputs = self.odometry.inputs
            warnings += self.poses.update(inputs, self.settings.params.global_frame)
            inputs.scans = self.scans.take(self.scan_quota.quota)
            self._scans_limited |= self.scans.limited
            self._result = self.controller.step(inputs, now_ns * 1e-9)
            self._fresh_min = min(self._fresh_min, self._fresh_share(inputs, now_ns * 1e-9))
            self.outputs.commands(self._result.commands)
            self.outputs.status(self._result, self.controller)
            self.outputs.routes(self.controller.navigator)
            self.outputs.tracks(self._result)
            for i, text in warnings + self._result.warnings:
                self._warn(i, text)
        except Exception as exc:  # noqa: B902 -- one bad tick must not kill the node
            self.monitor.errors += 1
            self.get_logger().error(f'tick failed ({exc!r}); publishing zero commands',
                                    throttle_duration_sec=WARN_THROTTLE)
            self.stop_all(wait=False)
        duration = time.perf_counter() - start
        self.scan_quota.update(duration, len(self.odometry.inputs.scans))
        if self.monitor.end(duration):
            stats = self.tick_stats()
            stats['recent_tick_ms'] = self.monitor.take_recent_ms()
            stats['recent_odom_delay_ms'] = round(self.odometry.reset_delay() * 1e-6, 3)
            # The smallest share of robots on fresh odometry at a tick since the last stats.
            stats['recent_fresh_share'] = round(self._fresh_min, 4)
            self._fresh_min = 1.0
            overloaded, missed, longest = self.monitor.take_overload()
            # Scans left waiting for later ticks: the node could not read them all in time.
            stats.update(overloaded=overloaded or self._scans_limited,
                         recent_missed_periods=missed,
                         recent_tick_ms_max=round(longest * 1e3, 3),
                         scans_deferred=self._scans_limited, scan_quota=self.scan_quota.quota)
            self._scans_limited = False
            self._stats_pub.publish(String(data=json.dumps(stats)))
            self._diagnostics_pub.publish(messages.diagnostics(
                self.get_fully_qualified_name(), stats, self.get_clock().now().to_msg()))

    def _watch(self):
        """On wall time: stop when the starting process is gone; warn when /clock never came."""
        if self.parent_pid != 1 and os.getppid() != self.parent_pid:
            self.get_logger().error(f'the process that started this node (pid {self.parent_pid}) '
                                    'is gone: stopping every robot and exiting')
            self._watch_timer.cancel()
            self.stop_all(wait=False)
            # orca_nav.ros.main turns SIGTERM into a clean stop: zero commands, then exit.
            os.kill(os.getpid(), signal.SIGTERM)
            return
        if (not self._clock_warned and self.get_clock().ros_time_is_active
                and self.get_clock().now().nanoseconds == 0
                and time.monotonic() - self._started > NO_CLOCK_WARN_AFTER):
            self._clock_warned = True
            reason = (f'use_sim_time is true and no /clock message has come in '
                      f'{NO_CLOCK_WARN_AFTER:.0f} s: nothing is commanded until one does')
            self.get_logger().warning(f'{reason} (is the simulator running? use_sim_time:=false '
                                      'on real robots)')
            for i, pub in enumerate(self.outputs._status):
                pub.publish(messages.status_message(self.settings.names[i], NO_CLOCK,
                                                    reason=reason))
            self.outputs.states = [None] * len(self.outputs.states)  # published again later

    def _publish_markers(self):
        if self.settings.params.publish_markers and self._result is not None:
            self.outputs.markers(self._result, self.controller, self.settings.fleet.radius)

    def _fresh_share(self, inputs, now):
        """Return the share of robots whose newest odometry is within odom_timeout of now."""
        age = now - inputs.odom_time
        fresh = inputs.has_pose & ~inputs.rejected & (age <= self.settings.params.odom_timeout)
        return float(fresh.mean()) if len(fresh) else 1.0

    def tick_stats(self):
        """Tick statistics: counts, missed periods and tick duration percentiles [ms]."""
        stats = self.monitor.stats()
        rejected = self.odometry.rejected_by_robot + self.controller.odom_rejected
        stats.update({'odom_received': self.odometry.received,
                      'odom_dropped': self.odometry.dropped,
                      'odom_rejected': int(rejected.sum()),
                      # per robot, only robots with refused odometry (keeps the JSON short)
                      'odom_rejected_by_robot': {self.settings.names[i]: int(rejected[i])
                                                 for i in np.flatnonzero(rejected)},
                      'solver_failures': self.controller.solver_failures,
                      'goals_received': self.goals_received,
                      'goals_rejected': self.goals_rejected,
                      'goals_cancelled': self.goals_cancelled,
                      'scans_received': self.scans.received,
                      'scans_rejected': self.controller.scan_memory.rejected,
                      'maps_received': self.controller.navigator.maps_received,
                      'maps_rejected': self.maps_rejected,
                      'paths_rejected': self.paths_rejected,
                      'poses_received': self.poses.received,
                      'poses_rejected': int(self.poses.rejected_by_robot.sum()
                                            + self.controller.localisation.refused_late.sum())})
        return stats

    def stop_all(self, wait=True):
        """Publish a zero command to every commanded robot; optionally wait for delivery."""
        try:
            self.outputs.stop_all(wait)
        except Exception as exc:  # noqa: B902 -- e.g. the context is already shut down
            self.get_logger().error(f'could not publish zero commands: {exc!r}')
            return False
        return True

    def destroy_node(self):
        """Stop the planning worker, then destroy the node (and its intake node)."""
        # Also for a node whose start failed half-way (rclpy destroys it at shutdown).
        if hasattr(self, 'controller'):
            self.controller.navigator.close()
        if hasattr(self, 'intake'):
            self.intake.destroy_node()
        return super().destroy_node()


def _never(msg):
    """Do nothing: the callback of the taken subscriptions (no executor spins their node)."""
