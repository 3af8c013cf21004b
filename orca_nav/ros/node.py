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

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import OccupancyGrid, Odometry, Path
from orca_nav.control import FleetController
from orca_nav.core import warmup
from orca_nav.ros import messages
from orca_nav.ros import params as P
from orca_nav.ros.inputs import OdometryStore, ScanStore
from orca_nav.ros.outputs import FleetOutputs, LATCHED_QOS, RELIABLE_QOS
from orca_nav.ros.tick_monitor import TickMonitor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan
from std_msgs.msg import String

# Odometry: keep the newest few, best effort so that reliable and best-effort publishers both
# match; the timer only ever uses the newest message of each robot.
ODOM_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5,
                      reliability=ReliabilityPolicy.BEST_EFFORT)
WARN_THROTTLE = 2.0         # [s] between repeats of the same warning


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
        self.odometry = OdometryStore(len(names), self.get_clock())
        self.scans = ScanStore(c, self.get_clock())
        self.outputs = FleetOutputs(self, self.settings)
        self.goals_received = self.goals_rejected = 0
        self.maps_rejected = self.paths_rejected = 0
        self._result = None
        for i, robot in enumerate(names):
            # raw=True: the odometry callback stores the serialized message; the tick reads
            # the few numbers it needs (messages.odometry_from_cdr). This is the hot path.
            self.create_subscription(Odometry, f'/{robot}/{p.odom_topic}',
                                     self.odometry.callback(i), ODOM_QOS, raw=True)
            if i >= c:
                continue
            self.create_subscription(PoseStamped, f'/{robot}/{p.goal_topic}',
                                     self._goal_callback(i), RELIABLE_QOS)
            self.create_subscription(Path, f'/{robot}/{p.plan_topic}',
                                     self._path_callback(i), RELIABLE_QOS)
            if p.scan_enabled:
                self.create_subscription(LaserScan, f'/{robot}/{p.scan_topic}',
                                         self.scans.callback(i), qos_profile_sensor_data)
        self.create_subscription(OccupancyGrid, p.map_topic, self._on_map, LATCHED_QOS)
        self._stats_pub = self.create_publisher(String, '~/tick_stats', 10)
        self._timer = self.create_timer(1.0 / p.rate, self._tick)
        self._marker_timer = self.create_timer(1.0 / p.marker_rate, self._publish_markers)
        self.get_logger().info(f'controlling {c} robot(s) {list(names[:c])}, observing '
                               f'{len(names) - c}, at {p.rate} Hz')

    def _on_set_parameters(self, parameters):
        """Validate the whole parameter set with the new values; apply all or nothing."""
        result, settings = P.on_set(self.settings, parameters)
        if settings is not None:
            self.settings = settings
            self.controller.reconfigure(settings.fleet, settings.navigation)
        return result

    def _warn(self, text):
        self.get_logger().warning(text, throttle_duration_sec=WARN_THROTTLE)

    def _goal_callback(self, i):
        """Goal callback of robot i: check frame and values, then hand the goal over."""
        robot = self.settings.names[i]

        def callback(msg):
            self.goals_received += 1
            try:
                x, y, yaw = messages.goal_from_pose(msg, self.settings.params.global_frame)
            except ValueError as exc:
                self.goals_rejected += 1
                self._warn(f'{robot}: goal rejected: {exc}')
                return
            if self.controller.set_goal(i, x, y, yaw):
                self.get_logger().debug(f'{robot}: new goal ({x:.2f}, {y:.2f})')
        return callback

    def _path_callback(self, i):
        """External route of robot i (e.g. Nav2's planner): followed to its last pose."""
        robot = self.settings.names[i]

        def callback(msg):
            try:
                points = messages.route_from_path(msg, self.settings.params.global_frame)
            except ValueError as exc:
                self.paths_rejected += 1
                self._warn(f'{robot}: path rejected: {exc}')
                return
            self.controller.set_route(i, points)
        return callback

    def _on_map(self, msg):
        """Replace the map with a new one (the old one is kept when the new one is refused)."""
        p = self.settings.params
        try:
            grid = messages.grid_from_occupancy(msg, p.global_frame, p.occupied_threshold,
                                                p.unknown_is_free, p.max_map_cells)
        except ValueError as exc:
            self.maps_rejected += 1
            self._warn(f'map rejected, keeping the previous one: {exc}')
            return
        self.controller.set_map(grid)
        self.get_logger().info(f'map {msg.info.width} x {msg.info.height} cells at '
                               f'{msg.info.resolution} m: planning routes')

    def _tick(self):
        """Timer callback: one controller step; zero commands and a log line if it fails."""
        start = time.perf_counter()
        now_ns = self.get_clock().now().nanoseconds
        self.monitor.start(now_ns)
        try:
            warnings = self.odometry.update()
            inputs = self.odometry.inputs
            inputs.scans = self.scans.take()
            self._result = self.controller.step(inputs, now_ns * 1e-9)
            self.outputs.commands(self._result.commands)
            self.outputs.status(self._result, self.controller)
            self.outputs.routes(self.controller.navigator)
            for i, text in warnings + self._result.warnings:
                self._warn(text if i is None else f'{self.settings.names[i]}: {text}')
        except Exception as exc:  # noqa: B902 -- one bad tick must not kill the node
            self.monitor.errors += 1
            self.get_logger().error(f'tick failed ({exc!r}); publishing zero commands',
                                    throttle_duration_sec=WARN_THROTTLE)
            self.stop_all(wait=False)
        if self.monitor.end(time.perf_counter() - start):
            stats = self.tick_stats()
            stats['recent_tick_ms'] = self.monitor.take_recent_ms()
            stats['recent_odom_delay_ms'] = round(self.odometry.reset_delay() * 1e-6, 3)
            self._stats_pub.publish(String(data=json.dumps(stats)))

    def _publish_markers(self):
        if self.settings.params.publish_markers and self._result is not None:
            self.outputs.markers(self._result, self.controller, self.settings.fleet.radius)

    def tick_stats(self):
        """Tick statistics: counts, missed periods and tick duration percentiles [ms]."""
        stats = self.monitor.stats()
        stats.update({'odom_received': self.odometry.received,
                      'odom_rejected': self.odometry.rejected,
                      'goals_rejected': self.goals_rejected,
                      'scans_received': self.scans.received,
                      'scans_rejected': self.controller.scan_memory.rejected,
                      'maps_received': self.controller.navigator.maps_received,
                      'maps_rejected': self.maps_rejected,
                      'paths_rejected': self.paths_rejected})
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
        """Stop the planning worker, then destroy the node."""
        self.controller.navigator.close()
        return super().destroy_node()
