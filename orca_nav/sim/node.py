"""
A small fleet simulator: a stand-in for Gazebo that speaks the same topics.

N robots of a scenario (orca_nav.scenarios) integrate their ``/<r>/cmd_vel`` every sim step with
holonomic or differential (unicycle) kinematics and publish ``/<r>/odom`` and a ray-cast
``/<r>/scan``: the node steps an orca_nav.sim.world.World (the same world the lock-stepped
tests drive) and publishes what it shows. The simulator knows nothing of ORCA. It also
records the ground truth of the run (every robot's pose at every step) to a file for the
demo's metrics.

The scenario's walkers (people on scripted paths, see orca_nav.sim.scenarios) have no topics:
the simulator moves them along their waypoints (drive_walkers) and they appear only in the
robots' scans and in the ground truth.

Run::

    python -m orca_nav.sim.node --ros-args -p scenario:=circle -p robots:=8

Topics, for each robot ``r`` of the scenario (not for its walkers):

- subscribes ``/<r>/cmd_vel`` (geometry_msgs/Twist, or TwistStamped with cmd_vel_stamped:=true).
  Body frame: linear.x forward, linear.y left (holonomic only), angular.z. Clamped to the
  robot's max_speed / max_angular_speed; no command for cmd_vel_timeout seconds -> stop.
- publishes ``/<r>/odom`` (nav_msgs/Odometry): frame ``map`` -> ``<r>/base_link``, pose in the
  global frame, twist in the body frame. Noise-free: it is the ground truth.
- publishes ``/<r>/scan`` (sensor_msgs/LaserScan, sensor-data QoS) in ``<r>/base_link``: a
  360 degree scan from the robot's centre against the static obstacles (polygons, walls and the
  outlines of the occupied cells of the scenario's map) and the other robots' and the walkers'
  discs; +inf where nothing is within range (REP 117).

And once for the world (publish_map):

- publishes ``/map`` (nav_msgs/OccupancyGrid, frame ``map``, reliable + transient local, so a
  late subscriber gets it): the scenario's map file, or its obstacles rasterized at
  map_resolution (orca_nav.sim.maps.scenario_grid). Published at start (or map_delay later)
  and again on request.
- serves ``~/get_map`` (nav_msgs/srv/GetMap): returns the map and publishes it again.
"""

import array
import math
import os
import signal
import sys
import threading
import time

from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import OccupancyGrid, Odometry
from nav_msgs.srv import GetMap
import numpy as np
from orca_nav.ros.messages import quaternion_from_yaw
from orca_nav.ros.watch import watch_parent
from orca_nav.sim.maps import scenario_grid
from orca_nav.sim.scenarios import load_scenario, ScenarioError
from orca_nav.sim.world import clamp_command, Scanner, World
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, qos_profile_sensor_data, QoSProfile,
                       ReliabilityPolicy)
from rclpy.signals import SignalHandlerOptions
from rclpy.time import Time
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import LaserScan

MAX_STEP_FACTOR = 5.0  # a late timer integrates at most this many nominal steps at once
TRAJECTORY_SAVE_PERIOD = 2.0  # [s] wall time between ground-truth snapshots on disk
TRAJECTORY_MAX_SAMPLES = 180000  # an hour at 50 Hz: a simulator left running stops recording
MAP_TOPIC = '/map'
STOP_POLL_PERIOD = 0.05  # [s] how often main() looks at the stop flag set by a signal
# [s] Once the ground truth is saved, the middleware's teardown gets this long, then the
# process exits anyway: in one run of the launch test the simulator saved at the signal and
# was still there 5 s later (launch's grace before its SIGTERM).
TEARDOWN_GRACE = 2.0
# [s] between two looks for another simulator of the same robots on the domain (a left-over
# one drives the same robots from its own world: the demo's robots do not get home).
ALONE_CHECK_PERIOD = 3.0
# As map_server: reliable and transient local, so a subscriber that comes late gets the map.
MAP_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)

PARAMETERS = (
    # name, default, description, (min, max) or None
    ('scenario', 'circle', 'Scenario name (config/scenarios/<name>.yaml) or path to a YAML file',
     None),
    ('robots', 0, 'Robot count override; 0 = as in the scenario', (0, 1000)),
    ('drive', '', 'Drive override for every robot: holonomic | differential; empty = as in the '
     'scenario', None),
    ('sim_rate', 50.0, 'Integration rate [Hz]', (1.0, 1000.0)),
    ('odom_rate', 20.0, 'Odometry publish rate [Hz]', (0.1, 1000.0)),
    ('scan_rate', 10.0, 'Laser scan publish rate [Hz]', (0.1, 100.0)),
    ('scan_beams', 180, 'Beams per 360 degree scan', (4, 10000)),
    ('scan_range_min', 0.05, 'Minimum range of the scanner [m]', (0.0, 10.0)),
    ('scan_range_max', 6.0, 'Maximum range of the scanner [m]; farther hits read +inf',
     (0.1, 100.0)),
    ('scan_noise', 0.0, 'Standard deviation of Gaussian range noise [m]', (0.0, 1.0)),
    ('seed', 0, 'Seed of the scan noise', (0, 2 ** 31 - 1)),
    ('cmd_vel_timeout', 0.5, 'A robot whose last cmd_vel is older than this stops [s]',
     (0.01, 60.0)),
    ('cmd_vel_stamped', False, 'Subscribe to geometry_msgs/TwistStamped instead of Twist', None),
    ('publish_clock', False, 'Publish /clock (sim time) and stamp messages with it', None),
    ('trajectory_file', '', 'Write the ground truth (poses at every step) to this .npz file; '
     'empty = do not record', None),
    ('publish_map', True, 'Publish the world as nav_msgs/OccupancyGrid on /map (latched)', None),
    ('map_resolution', 0.05, 'Cell size [m] of the /map of a scenario without a map file',
     (0.005, 10.0)),
    ('map_delay', 0.0, 'Publish /map first this long after start [s] (a map server that comes '
     'late: goals may come first)', (0.0, 3600.0)),
)


class SimNode(Node):
    """Fleet simulator node: integrates cmd_vel, publishes odom and scans, records ground truth."""

    def __init__(self, **kwargs):
        """Declare parameters, load the scenario, create one set of topics per robot."""
        super().__init__('orca_nav_sim', **kwargs)
        p = self._declare_parameters()
        self.scenario = load_scenario(p['scenario'], robots=p['robots'] or None,
                                      drive=p['drive'] or None)
        self.params = p
        self.robots = self.scenario.robots
        n = len(self.robots)
        # The world moves every row and casts the scans; the node feeds it and publishes.
        scanner = Scanner(p['scan_beams'], p['scan_range_min'], p['scan_range_max'],
                          p['scan_noise'])
        self.world = World(self.scenario, scanner, seed=p['seed'], track_contacts=False)
        self.commands = np.zeros((n, 3))                   # (N, 3) last clamped command
        self.command_time = np.full(n, -np.inf)            # monotonic time of each command
        self.nominal_dt = 1.0 / p['sim_rate']
        self.last_step = time.monotonic()
        self.history = {'t': [], 'wall': [], 'poses': []}
        self._record()

        cmd_type = TwistStamped if p['cmd_vel_stamped'] else Twist
        # Scenario row -> publisher, for the robots only: walkers have no topics.
        self.odom_pubs, self.scan_pubs = {}, {}
        for i, robot in enumerate(self.robots):
            if robot.walker:
                continue
            ns = '/' + robot.name
            self.create_subscription(cmd_type, ns + '/cmd_vel',
                                     lambda msg, i=i: self._on_cmd_vel(i, msg),
                                     qos_profile_sensor_data)
            self.odom_pubs[i] = self.create_publisher(Odometry, ns + '/odom',
                                                      QoSProfile(depth=10))
            self.scan_pubs[i] = self.create_publisher(LaserScan, ns + '/scan',
                                                      qos_profile_sensor_data)
        self.clock_pub = (self.create_publisher(Clock, '/clock', QoSProfile(depth=10))
                          if p['publish_clock'] else None)
        self.create_timer(self.nominal_dt, self._step)
        self.others = []  # the other publishers of the robots' odometry, once found
        self.create_timer(ALONE_CHECK_PERIOD, self.check_alone)
        self.create_timer(1.0 / p['odom_rate'], self._publish_odom)
        self.create_timer(1.0 / p['scan_rate'], self._publish_scans)
        if p['trajectory_file']:
            self.create_timer(TRAJECTORY_SAVE_PERIOD, self.save_trajectory)
        self.map_msg, self.map_pub = None, None
        if p['publish_map']:
            self.map_msg = self.make_map()
            self.map_pub = self.create_publisher(OccupancyGrid, MAP_TOPIC, MAP_QOS)
            self.create_service(GetMap, '~/get_map', self._on_get_map)
            if p['map_delay'] > 0.0:
                self._map_timer = self.create_timer(p['map_delay'], self._publish_late_map)
            else:
                self.publish_map()
        walkers = int(self.scenario.walkers.sum())
        self.get_logger().info(
            f'simulating {n - walkers} robots of scenario {self.scenario.name!r} '
            f'({", ".join(sorted({r.drive for r in self.robots if not r.walker}))})'
            f'{f" and {walkers} walkers" if walkers else ""} at {p["sim_rate"]:g} Hz; '
            f'{len(self.world.segments)} static segments')

    def _declare_parameters(self):
        values = {}
        for name, default, description, bounds in PARAMETERS:
            desc = ParameterDescriptor(description=description, read_only=True)
            if bounds is not None and isinstance(default, float):
                desc.floating_point_range = [FloatingPointRange(
                    from_value=float(bounds[0]), to_value=float(bounds[1]))]
            elif bounds is not None:
                desc.integer_range = [IntegerRange(from_value=bounds[0], to_value=bounds[1])]
            values[name] = self.declare_parameter(name, default, desc).value
        return values

    # --- simulation -----------------------------------------------------------------------

    def _on_cmd_vel(self, i, msg):
        twist = msg.twist if isinstance(msg, TwistStamped) else msg
        robot = self.robots[i]
        self.commands[i] = clamp_command(robot.drive, twist.linear.x, twist.linear.y,
                                         twist.angular.z, robot.max_speed,
                                         robot.max_angular_speed)
        self.command_time[i] = time.monotonic()

    def _step(self):
        now = time.monotonic()
        dt = min(now - self.last_step, MAX_STEP_FACTOR * self.nominal_dt)
        self.last_step = now
        if dt <= 0.0:
            return
        fresh = (now - self.command_time) <= self.params['cmd_vel_timeout']
        self.world.step(np.where(fresh[:, None], self.commands, 0.0), dt)
        self._record()
        if self.clock_pub is not None:
            msg = Clock()
            msg.clock = self._stamp()
            self.clock_pub.publish(msg)

    def _record(self):
        if not self.params['trajectory_file']:
            return
        if len(self.history['t']) >= TRAJECTORY_MAX_SAMPLES:
            self.get_logger().warn(f'ground truth is full ({TRAJECTORY_MAX_SAMPLES} samples): '
                                   'later steps are not recorded', once=True)
            return
        self.history['t'].append(self.world.time)
        self.history['wall'].append(time.time())
        self.history['poses'].append(self.world.poses.copy())

    def _stamp(self):
        if self.params['publish_clock']:
            t = self.world.time
            sec = int(t)
            return Time(seconds=sec, nanoseconds=int((t - sec) * 1e9),
                        clock_type=self.get_clock().clock_type).to_msg()
        return self.get_clock().now().to_msg()

    # --- map ------------------------------------------------------------------------------

    def make_map(self):
        """Return the world as a nav_msgs/OccupancyGrid in frame ``map`` (see scenario_grid)."""
        data, width, height, resolution, origin = scenario_grid(
            self.scenario, self.params['map_resolution'])
        msg = OccupancyGrid()
        msg.header.frame_id = 'map'
        msg.info.resolution = float(resolution)
        msg.info.width, msg.info.height = int(width), int(height)
        msg.info.origin.position.x, msg.info.origin.position.y = map(float, origin[:2])
        q = msg.info.origin.orientation
        q.x, q.y, q.z, q.w = quaternion_from_yaw(float(origin[2]))
        msg.data = array.array('b', np.asarray(data, dtype=np.int8).tobytes())
        return msg

    def _publish_late_map(self):
        """Publish the map once, map_delay after start."""
        self._map_timer.cancel()
        self.publish_map()

    def publish_map(self):
        """Publish the map on /map (stamped now) if publish_map is set."""
        if self.map_pub is None:
            return
        stamp = self._stamp()
        self.map_msg.header.stamp = stamp
        self.map_msg.info.map_load_time = stamp
        self.map_pub.publish(self.map_msg)

    def _on_get_map(self, request, response):
        self.publish_map()
        response.map = self.map_msg
        return response

    # --- sensors --------------------------------------------------------------------------

    def _publish_odom(self):
        stamp = self._stamp()
        poses, twists = self.world.poses, self.world.twists
        for i, pub in self.odom_pubs.items():
            robot = self.robots[i]
            msg = Odometry()
            msg.header.stamp = stamp
            msg.header.frame_id = 'map'
            msg.child_frame_id = robot.name + '/base_link'
            x, y, yaw = poses[i]
            msg.pose.pose.position.x = float(x)
            msg.pose.pose.position.y = float(y)
            q = msg.pose.pose.orientation
            q.x, q.y, q.z, q.w = quaternion_from_yaw(float(yaw))
            msg.twist.twist.linear.x = float(twists[i, 0])
            msg.twist.twist.linear.y = float(twists[i, 1])
            msg.twist.twist.angular.z = float(twists[i, 2])
            pub.publish(msg)

    def _publish_scans(self):
        p = self.params
        stamp = self._stamp()
        increment = 2.0 * math.pi / p['scan_beams']
        for i, pub in self.scan_pubs.items():
            robot = self.robots[i]
            msg = LaserScan()
            msg.header.stamp = stamp
            msg.header.frame_id = robot.name + '/base_link'
            msg.angle_min = -math.pi
            msg.angle_max = -math.pi + increment * (p['scan_beams'] - 1)
            msg.angle_increment = increment
            msg.scan_time = 1.0 / p['scan_rate']
            msg.range_min = p['scan_range_min']
            msg.range_max = p['scan_range_max']
            msg.ranges = self.world.scan_ranges(i).astype(np.float32).tolist()
            pub.publish(msg)

    # --- ground truth ---------------------------------------------------------------------

    def check_alone(self):
        """Log an error naming the other publishers of a robot's odometry (another simulator)."""
        for pub in list(self.odom_pubs.values())[:1]:
            infos = self.get_publishers_info_by_topic(pub.topic_name)
            others = sorted('/'.join((i.node_namespace.rstrip('/'), i.node_name)) for i in infos)
            if len(infos) > 1 and others != self.others:
                domain = os.environ.get('ROS_DOMAIN_ID', '0')
                self.get_logger().error(
                    f'{len(infos)} publishers of {pub.topic_name} on ROS_DOMAIN_ID={domain}: '
                    f'{", ".join(others)}: another simulator of these robots runs (a left-over '
                    'one? stop it): each moves the robots of its own world')
            self.others = others if len(infos) > 1 else []

    def save_trajectory(self):
        """
        Write the ground truth so far to trajectory_file (atomically), if one is set.

        The .npz holds names (N,), radii (N,), walkers (N,) bool (rows of the scenario's
        walkers), t (K,) sim time [s], wall (K,) time.time() [s], poses (K, N, 3) x, y, yaw
        and scenario (the scenario's name). N covers every row, walkers included.
        """
        path = self.params['trajectory_file']
        if not path:
            return
        tmp = f'{path}.tmp.npz'
        k = len(self.history['t'])
        np.savez(tmp, names=np.array(self.scenario.names), radii=self.world.radii,
                 walkers=self.scenario.walkers,
                 t=np.array(self.history['t'], dtype=float),
                 wall=np.array(self.history['wall'], dtype=float),
                 poses=np.array(self.history['poses']).reshape(k, len(self.robots), 3),
                 scenario=self.scenario.name)
        os.replace(tmp, path)


def main(args=None):
    """Run the simulator until Ctrl-C (SIGINT) or SIGTERM; save the ground truth on the way out."""
    # The handlers only set a flag: a KeyboardInterrupt raised in the middle of rclpy's calls
    # (Ctrl-C reaches every process of the group, and launch sends its own SIGINT too) would
    # print a traceback from wherever it lands, destroy_node included.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    stop = []
    previous = {sig: signal.signal(sig, lambda signum, frame: stop.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    node = None
    watch_parent('orca_nav_sim')  # ros2 launch killed by SIGTERM leaves its processes
    try:
        node = SimNode()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stop and rclpy.ok():
            executor.spin_once(timeout_sec=STOP_POLL_PERIOD)
    except ExternalShutdownException:
        pass
    except ScenarioError as exc:
        print(f'orca_nav_sim: {exc}', flush=True)
        raise SystemExit(2)
    finally:
        # Ignored from now on: a second Ctrl-C (launch sends its own SIGINT after the
        # terminal's) must not interrupt the saving, nor the process's exit.
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        if node is not None:
            node.save_trajectory()
            _exit_after(TEARDOWN_GRACE)
            node.destroy_node()
        rclpy.try_shutdown()


def _exit_after(seconds, code=0):
    """End the process with ``code`` in ``seconds``, unless it has ended (a daemon timer)."""
    def leave():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    timer = threading.Timer(seconds, leave)
    timer.daemon = True
    timer.start()


if __name__ == '__main__':
    main()
