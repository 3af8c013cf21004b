"""
The orca_nav node: odometry and goals in, ORCA cmd_vel out, for a whole fleet. Wiring only.

For each robot ``r`` in ``robots`` the node subscribes ``/<r>/odom``, ``/<r>/goal_pose`` (and
``/<r>/scan``) and publishes ``/<r>/cmd_vel`` (topic names are parameters); robots in
``observed_robots`` are only watched. A timer at ``rate`` Hz hands the newest inputs to the
fleet controller (orca_nav.control) and publishes its commands. See docs/node.md.

Run::

    python -m orca_nav.node --ros-args --params-file config/orca_nav.yaml -p robots:='[robot1]'
"""

import json
import signal
import sys
import time

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.control import FleetController
from orca_nav.core import warmup
from orca_nav.ros import messages
from orca_nav.ros import params as P
from orca_nav.ros.inputs import OdometryStore, ScanStore
from orca_nav.ros.tick_monitor import TickMonitor
import rclpy
from rclpy.duration import Duration
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
RELIABLE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                          reliability=ReliabilityPolicy.RELIABLE)
# Status: latched, so a late subscriber gets every robot's current state at once.
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
WARN_THROTTLE = 2.0         # [s] between repeats of the same warning
SHUTDOWN_ACK_TIMEOUT = 0.5  # [s] waiting for subscribers to acknowledge the zero commands
STOP_POLL_PERIOD = 0.05     # [s] how often main() looks at the stop flag set by a signal


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
        self.controller = FleetController(self.settings.fleet)
        self.monitor = TickMonitor(1.0 / p.rate)
        self.odometry = OdometryStore(len(names), self.get_clock())
        self.scans = ScanStore(c, self.get_clock())
        self.goals_received = 0
        self.goals_rejected = 0
        self.last_commands = np.zeros((c, 3))  # vx, vy, wz per commanded robot
        self.commands_published = 0            # command rounds (one message per robot)
        self.states = [None] * c               # last published RobotState per robot
        self._result = None

        self._cmd_msgs = [messages.new_command(p.cmd_vel_stamped) for _ in range(c)]
        self._cmd_pubs, self._status_pubs = [], []
        for i, robot in enumerate(names):
            # raw=True: the odometry callback stores the serialized message; the tick reads
            # the few numbers it needs (messages.odometry_from_cdr). This is the hot path.
            self.create_subscription(Odometry, f'/{robot}/{p.odom_topic}',
                                     self.odometry.callback(i), ODOM_QOS, raw=True)
            if i >= c:
                continue
            self.create_subscription(PoseStamped, f'/{robot}/{p.goal_topic}',
                                     self._goal_callback(i), RELIABLE_QOS)
            if p.scan_enabled:
                self.create_subscription(LaserScan, f'/{robot}/{p.scan_topic}',
                                         self.scans.callback(i), qos_profile_sensor_data)
            self._cmd_pubs.append(self.create_publisher(
                type(self._cmd_msgs[i]), f'/{robot}/{p.cmd_vel_topic}', RELIABLE_QOS))
            self._status_pubs.append(self.create_publisher(
                String, f'/{robot}/{p.status_topic}', LATCHED_QOS))
        self._stats_pub = self.create_publisher(String, '~/tick_stats', 10)
        self._marker_pub = self.create_publisher(MarkerArray, '~/markers', 1)
        self._timer = self.create_timer(1.0 / p.rate, self._tick)
        self._marker_timer = self.create_timer(1.0 / p.marker_rate, self._publish_markers)
        self.get_logger().info(f'controlling {c} robot(s) {list(names[:c])}, observing '
                               f'{len(names) - c}, at {p.rate} Hz')

    def _on_set_parameters(self, parameters):
        """Validate the whole parameter set with the new values; apply all or nothing."""
        result, settings = P.on_set(self.settings, parameters)
        if settings is not None:
            self.settings = settings
            self.controller.reconfigure(settings.fleet)
        return result

    def _goal_callback(self, i):
        """Goal callback of robot i: check frame and values, then hand the goal over."""
        robot = self.settings.names[i]

        def callback(msg):
            self.goals_received += 1
            try:
                x, y, yaw = messages.goal_from_pose(msg, self.settings.params.global_frame)
            except ValueError as exc:
                self.goals_rejected += 1
                self.get_logger().warning(f'{robot}: goal rejected: {exc}',
                                          throttle_duration_sec=WARN_THROTTLE)
                return
            if self.controller.set_goal(i, x, y, yaw):
                self.get_logger().info(f'{robot}: new goal ({x:.2f}, {y:.2f})')
        return callback

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
            self._publish_commands(self._result.commands)
            self._publish_status(self._result)
            for i, text in warnings + self._result.warnings:
                self.get_logger().warning(f'{self.settings.names[i]}: {text}',
                                          throttle_duration_sec=WARN_THROTTLE)
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

    def _publish_commands(self, cmd):
        stamp = self.get_clock().now().to_msg() if self.settings.params.cmd_vel_stamped else None
        for i, pub in enumerate(self._cmd_pubs):
            pub.publish(messages.fill_command(self._cmd_msgs[i], *cmd[i], stamp,
                                              self.settings.names[i] + '/base_link'))
        self.last_commands = cmd
        self.commands_published += 1

    def _publish_status(self, result):
        """Publish the status of every robot whose state changed (latched topic)."""
        ctrl = self.controller
        for i, state in enumerate(result.states):
            if state != self.states[i]:
                self.states[i] = state
                goal = ctrl.goal[i] if ctrl.has_goal[i] else None
                self._status_pubs[i].publish(messages.status_message(
                    self.settings.names[i], state.value, goal, float(result.distance[i])))

    def _publish_markers(self):
        result = self._result
        if not self.settings.params.publish_markers or result is None:
            return
        n, c = len(self.settings.names), self.settings.n_controlled
        goals, has_goal = np.zeros((n, 2)), np.zeros(n, bool)
        goals[:c], has_goal[:c] = self.controller.goal, self.controller.has_goal
        states = [s.value for s in result.states] + ['observed'] * (n - c)
        self._marker_pub.publish(messages.build_markers(
            self.settings.params.global_frame, self.get_clock().now().to_msg(),
            self.settings.names, result.positions, self.settings.fleet.radius,
            result.velocities, goals, has_goal, states, result.known))

    def commands_matched(self):
        """Return True once every command topic has a subscriber (tests and tools wait)."""
        return all(pub.get_subscription_count() > 0 for pub in self._cmd_pubs)

    def tick_stats(self):
        """Tick statistics: counts, missed periods and tick duration percentiles [ms]."""
        stats = self.monitor.stats()
        stats.update({'odom_received': self.odometry.received,
                      'odom_rejected': self.odometry.rejected,
                      'goals_rejected': self.goals_rejected,
                      'scans_received': self.scans.received,
                      'scans_rejected': self.controller.scan_memory.rejected})
        return stats

    def stop_all(self, wait=True):
        """Publish a zero command to every commanded robot; optionally wait for delivery."""
        try:
            self._publish_commands(np.zeros((self.settings.n_controlled, 3)))
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


def main(args=None):
    """Run the node until Ctrl-C or SIGTERM; every robot then gets a zero command."""
    # rclpy's own signal handlers shut the context down before our code runs, after which no
    # zero command can be published. Raising KeyboardInterrupt from a handler can surface in
    # the middle of rclpy's C++ calls. So the handlers only set a flag that the loop checks.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = []
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, lambda signum, frame: stop.append(signum))
                for sig in signals}
    node = None
    code = 0
    try:
        node = OrcaNavNode()
        node.monitor.take_over_gc()
        executor = make_executor(node.settings.params.executor, node.get_logger())
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
