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
import time

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import OccupancyGrid, Path
from orca_nav.control import FleetController
from orca_nav.ros import messages
from orca_nav.ros import params as P
from orca_nav.ros.intake import IntakeNode
from orca_nav.ros.outputs import FleetOutputs, LATCHED_QOS, RELIABLE_QOS
from orca_nav.ros.startup import Kernels, log_start
from orca_nav.ros.tick_monitor import ScanQuota, TickMonitor
from orca_nav.ros.tick_report import TickReport
from orca_nav.ros.watch import NodeWatch, WATCH_PERIOD
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from std_msgs.msg import Empty, Float64, String

# A fleet larger than this gets its cancel, plan, priority, status and route topics after its
# odometry, goal and cmd_vel topics, in a share of each period (OrcaNavNode.make_extras).
EXTRAS_AT_ONCE = 100
EXTRAS_SHARE = 0.3
EXTRAS_WAIT = 5.0  # [s] after the node was built, or once every robot has sent odometry
WARN_THROTTLE = 2.0         # [s] between two warnings of one robot about one field
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
        # The numba kernels compile on a thread from now on, while the node is built (a large
        # fleet's publishers take a while) and spins; until they are ready, the ticks command
        # zero and report 'starting' (orca_nav.ros.startup).
        self.kernels = Kernels(self)
        p, names, c = self.settings.params, self.settings.names, self.settings.n_controlled
        self.controller = FleetController(self.settings.fleet, self.settings.navigation)
        # Odometry, poses and scans: taken by the tick from the subscriptions of a node that
        # nothing spins (orca_nav.ros.intake). Public: tests and tools find them here.
        self.intake = IntakeNode.of(self)
        self.odometry, self.poses, self.scans = (self.intake.odometry, self.intake.poses,
                                                 self.intake.scans)
        self.goals_received = self.goals_rejected = self.goals_cancelled = 0
        self.maps_rejected = self.paths_rejected = 0
        # What a robot needs to drive first (odometry: the intake; goals; cmd_vel): DDS
        # announces endpoints in the order they are made, and the other processes match each
        # with their own; see make_extras for the rest.
        for i, robot in enumerate(names[:c]):
            self.create_subscription(PoseStamped, self._topic(robot, p.goal_topic),
                                     self._goal_callback(i), RELIABLE_QOS, raw=True)
        self.create_subscription(OccupancyGrid, p.map_topic, self.on_map, LATCHED_QOS)
        self.outputs = FleetOutputs(self, self.settings)  # cmd_vel, status, routes, markers
        self.extras_pending = list(range(c))  # robots whose make_extras is still to come
        self._extras_started = None            # monotonic time of the first make_extras
        if c <= EXTRAS_AT_ONCE:
            self.make_extras()
        self._stats_pub = self.create_publisher(String, '~/tick_stats', 10)
        self._diagnostics_pub = self.create_publisher(DiagnosticArray, '/diagnostics', 10)
        self.monitor = TickMonitor(1.0 / p.rate)
        self.scan_quota = ScanQuota(c, 1.0 / p.rate, p.obstacle_timeout)
        self.report = TickReport(self)
        self._warned = {}  # (robot row or None, field) -> (last logged [s, monotonic], held)
        self._result = None
        self._map_msg = None  # the newest OccupancyGrid
        self._timer = self.create_timer(1.0 / p.rate, self._tick)
        self._marker_timer = self.create_timer(1.0 / p.marker_rate, self._publish_markers)
        self.watch = NodeWatch(self, self.outputs, self.stop_all)  # on wall time, see its doc
        self._watch_timer = self.create_timer(WATCH_PERIOD, self.watch.check,
                                              clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._extras_timer = (self.create_timer(1.0 / p.rate, self._make_extras_step,
                                                clock=Clock(clock_type=ClockType.STEADY_TIME))
                              if self.extras_pending else None)
        self._built = time.monotonic()
        self.unused_parameters = log_start(self)

    def _topic(self, robot, name):
        return P.robot_topic(self.settings.params.robots_namespace, robot, name)

    def make_extras(self, budget=None):
        """
        Make the cancel, plan and priority subscriptions and the status and route publishers.

        Of every robot still without them, or of as many as ``budget`` [s] allows (one at
        least). A fleet of up to EXTRAS_AT_ONCE robots gets them in the constructor; a larger
        one on a timer once its robots have sent odometry, a share of each period
        (EXTRAS_SHARE): every process of the fleet matches each new endpoint with its own,
        and 5000 of them at once beside a busy CPU held the first commands of 1000 robots
        back by about 10 s.
        """
        p, names = self.settings.params, self.settings.names
        start = time.monotonic()
        if self._extras_started is None:
            self._extras_started = start
        made = 0
        while self.extras_pending and (budget is None or not made
                                       or time.monotonic() - start < budget):
            i = self.extras_pending.pop(0)
            robot = names[i]
            self.create_subscription(Empty, self._topic(robot, p.cancel_topic),
                                     self._cancel_callback(i), RELIABLE_QOS)
            self.create_subscription(Path, self._topic(robot, p.plan_topic),
                                     self._path_callback(i), RELIABLE_QOS)
            self.create_subscription(Float64, self._topic(robot, p.priority_topic),
                                     self._priority_callback(i), RELIABLE_QOS)
            self.outputs.add([i])
            made += 1
        if budget is not None and not self.extras_pending:
            self.get_logger().info(
                f'cancel, plan, priority, status and route topics of all {len(names)} robots '
                f'made in {time.monotonic() - self._extras_started:.1f} s, after their '
                'odometry, goal and cmd_vel topics')

    def _on_set_parameters(self, parameters):
        """Validate the whole parameter set with the new values; apply all or nothing."""
        result, settings = P.on_set(self.settings, parameters)
        if settings is not None:
            old, self.settings = self.settings, settings
            for line in sorted(set(P.footprint_warnings(settings.values))
                               - set(P.footprint_warnings(old.values))):
                self.get_logger().warning(line)  # a new concave footprint, radius and footprint
            self.controller.reconfigure(settings.fleet, settings.navigation)
            self.scan_quota.set_obstacle_timeout(settings.params.obstacle_timeout)
            self.outputs.reconfigure(settings)  # frame and groups of what it publishes
            if self._map_msg is not None and any(old.values[k] != settings.values[k]
                                                 for k in MAP_PARAMS):
                self.on_map(self._map_msg)  # the newest map, read with the new values
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

    def warnings_held(self, i, field):
        """Return how many warnings of robot row i (None: the node) about field were held back."""
        return self._warned.get((i, field), (0.0, 0))[1]

    def on_map(self, msg):
        """Take a new map (the /map callback); the old one is kept when the new one is refused."""
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
            if self.kernels.check():
                self._step(now_ns)
            else:  # still compiling: every robot stands still, its status says why
                self.outputs.starting(self.kernels.reason)
        except Exception as exc:  # noqa: B902 -- one bad tick must not kill the node
            self.monitor.errors += 1
            self.get_logger().error(f'tick failed ({exc!r}); publishing zero commands',
                                    throttle_duration_sec=WARN_THROTTLE)
            self.stop_all(wait=False)
        duration = time.perf_counter() - start
        self.scan_quota.update(self._robot_time(duration, now_ns),
                               len(self.odometry.inputs.scans))
        if self.monitor.end(duration):  # once per second of the node's clock
            stats = self.report.take()
            self._stats_pub.publish(String(data=json.dumps(stats)))
            self._diagnostics_pub.publish(messages.diagnostics(
                self.get_fully_qualified_name(), stats, self.get_clock().now().to_msg()))

    def _make_extras_step(self):
        """
        Extras timer (steady time, the node's rate): make_extras in a share of the period.

        Once every robot has sent odometry, or EXTRAS_WAIT after the node was built (without
        odometry, or without /clock: the status says why then too).
        """
        if (time.monotonic() - self._built < EXTRAS_WAIT
                and not self.odometry.inputs.has_pose[:self.settings.n_controlled].all()):
            return
        self.make_extras(EXTRAS_SHARE / self.settings.params.rate)
        if not self.extras_pending:
            self._extras_timer.cancel()

    def _step(self, now_ns):
        """Read the newest inputs, run the controller's step, publish what it decided."""
        inputs, warnings = self.intake.read(self.settings.params.global_frame,
                                            self.scan_quota.quota)
        self.report.note_scans(self.scans.limited)
        self._result = self.controller.step(inputs, now_ns * 1e-9)
        self.report.note_fresh(inputs, now_ns * 1e-9)
        self.outputs.commands(self._result.commands)
        self.outputs.status(self._result)
        self.outputs.routes(self._result.routes)
        self.outputs.tracks(self._result)
        for i, text in warnings + self._result.warnings:
            self._warn(i, text)

    def _robot_time(self, duration, start_ns):
        """
        Return how long a tick of ``duration`` [s] of wall time took for the robots [s].

        The scan quota keeps commands in time by the clock the robots move by: with
        use_sim_time, the simulation's (a lock-stepped one stands still while the node ticks,
        so a slow machine does not leave scans unread there; Gazebo's runs at its real-time
        factor). Otherwise the wall time.
        """
        clock = self.get_clock()
        if not clock.ros_time_is_active:
            return duration
        return max(0.0, (clock.now().nanoseconds - start_ns) * 1e-9)

    def _publish_markers(self):
        if self.settings.params.publish_markers and self._result is not None:
            self.outputs.markers(self._result, self.settings.fleet.radius,
                                 self.settings.fleet.footprint)

    @property
    def last_result(self):
        """Return the controller's StepResult of the last tick (None before the first)."""
        return self._result

    def tick_stats(self):
        """Tick statistics: counts, missed periods and tick duration percentiles [ms]."""
        return self.report.counts()

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
            self.controller.close()
        if hasattr(self, 'intake'):
            self.intake.destroy_node()
        return super().destroy_node()
