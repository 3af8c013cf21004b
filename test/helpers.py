"""
Shared test helpers: a small world of robots, and the ROS test rig's pieces.

Import them from a test file with ``from helpers import SimClock, spin_until, World`` (pytest
puts this folder on sys.path: test/ has no __init__.py).

- :func:`spin_until`, :func:`spin_for`, :func:`matched`, :class:`SimClock` (a /clock
  publisher), :class:`NodeRig` (the node in this process, lock-stepped) and :class:`Probe`
  are defined once, in ``orca_nav.testing.rig``, and imported here.
- :class:`World` is a few robots on a plane over ROS: it subscribes ``/<r>/cmd_vel``, steps the
  simulator's own world (orca_nav.sim.world.World: exact holonomic or unicycle motion, a 360
  degree ray-cast scan, the smallest robot-robot and robot-wall gaps) with the last commands,
  and publishes ``/<r>/odom`` and, with walls, ``/<r>/scan``.

The World knows nothing of the orca_nav node: the tests lock-step it with a NodeRig.
:func:`load_benchmark` imports a module of benchmarks/ for the tests of the benchmarks.
"""

import importlib.util
import math
from pathlib import Path
import sys

from geometry_msgs.msg import PoseStamped, Twist, TwistStamped
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.ros import messages
from orca_nav.sim.world import rows_scenario, Scanner, World as SimWorld
from orca_nav.testing.rig import (command_values, matched, NodeRig, Probe,  # noqa: F401
                                  SimClock, spin_for, spin_until, stamp_of)
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import LaserScan


def load_benchmark(name):
    """
    Import benchmarks/<name>.py, whatever the working directory (colcon test or pytest).

    Under colcon the repository root is not on sys.path, so ``benchmarks`` is no package there.
    """
    path = Path(__file__).resolve().parents[1] / 'benchmarks' / f'{name}.py'
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def seconds_of(stamp):
    """Return a builtin_interfaces/Time as seconds (float)."""
    return stamp.sec + 1e-9 * stamp.nanosec


def yaw_of(q):
    """Yaw [rad] of a geometry_msgs/Quaternion (rotation about z)."""
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


class WorldView:
    """The robots' poses and contact gaps of ``self.sim`` (a sim.world.World) as attributes."""

    @property
    def pose(self):
        """(N, 3) global x, y, yaw of the robots (the world's own rows: writes move them)."""
        return self.sim.poses[:len(self.names)]

    @property
    def min_gap(self):
        """Smallest distance between two robots minus their radii so far [m]."""
        return self.sim.min_gap

    @property
    def min_wall_gap(self):
        """Smallest distance between a robot and a wall minus its radius so far [m]."""
        return self.sim.min_wall_gap

    @property
    def min_walker_gap(self):
        """Smallest distance between a robot and a walker minus their radii so far [m]."""
        return self.sim.min_walker_gap


class World(WorldView):
    """
    Robots on a plane over ROS: cmd_vel in, odometry (and scans) out.

    The motion, the scans and the contact checks are those of ``sim``, the simulator's
    orca_nav.sim.world.World.

    names : robot names (topic namespaces)
    poses : (N, 3) global x, y, yaw; drives : one drive or one per robot ('holonomic' uses
        vx, vy, wz; 'differential' ignores vy); radii : one radius or one per robot [m]
    offsets : (N, 3) pose of each robot's odometry frame in the global frame (default: the
        global frame itself); odometry is reported in that frame, in ``<r>/odom``
    walls : (M, 2, 2) segments only the scans show; with walls (even an empty list) the world
        publishes scans on ``/<r>/scan`` (sensor-data QoS)
    stamped : subscribe geometry_msgs/TwistStamped instead of Twist
    """

    def __init__(self, node, names, poses, drives='holonomic', radii=0.2, offsets=None,
                 walls=None, stamped=False, substeps=10, scan_beams=360, scan_range=6.0):
        """Create one odom (scan, goal) publisher and cmd_vel subscriber per robot on node."""
        self.node = node
        self.names = list(names)
        n = len(self.names)
        self.drives = [drives] * n if isinstance(drives, str) else list(drives)
        self.sim = SimWorld(rows_scenario(self.names, poses, radii, self.drives, walls),
                            Scanner(int(scan_beams), 0.05, float(scan_range)))
        self.radii = self.sim.radii
        self.offsets = np.zeros((n, 3)) if offsets is None else np.array(offsets, float)
        self.walls = None if walls is None else self.sim.segments
        self.substeps = int(substeps)
        self.scan_beams, self.scan_range = int(scan_beams), float(scan_range)
        self.cmd = np.zeros((n, 3))
        self.cmd_count = np.zeros(n, int)
        self.last_cmd_msg = [None] * n
        cmd_type = TwistStamped if stamped else Twist
        self.odom_pubs = [node.create_publisher(Odometry, f'/{r}/odom', QoSProfile(depth=10))
                          for r in self.names]
        self.goal_pubs = [node.create_publisher(PoseStamped, f'/{r}/goal_pose',
                                                QoSProfile(depth=10)) for r in self.names]
        self.scan_pubs = ([] if self.walls is None else
                          [node.create_publisher(LaserScan, f'/{r}/scan', qos_profile_sensor_data)
                           for r in self.names])
        for i, r in enumerate(self.names):
            node.create_subscription(cmd_type, f'/{r}/cmd_vel',
                                     lambda msg, i=i: self._on_cmd(i, msg), QoSProfile(depth=10))
        self.sim.check_contacts()

    def _on_cmd(self, i, msg):
        twist = msg.twist if isinstance(msg, TwistStamped) else msg
        values = (twist.linear.x, twist.linear.y, twist.angular.z)
        self.cmd[i] = values if all(math.isfinite(v) for v in values) else (0.0, 0.0, 0.0)
        self.cmd_count[i] += 1
        self.last_cmd_msg[i] = msg

    # --- messages -------------------------------------------------------------------------

    def odometry(self, i, stamp=None):
        """Odometry of robot i in its odometry frame (pose), twist = its command (body frame)."""
        ox, oy, oyaw = self.offsets[i]
        dx, dy = self.pose[i, 0] - ox, self.pose[i, 1] - oy
        c, s = math.cos(oyaw), math.sin(oyaw)
        return messages.make_odometry(c * dx + s * dy, -s * dx + c * dy, self.pose[i, 2] - oyaw,
                                      self.effective_command(i), f'{self.names[i]}/odom',
                                      f'{self.names[i]}/base_link', stamp)

    def publish_odometry(self, stamp=None):
        """Publish every robot's odometry."""
        for i, pub in enumerate(self.odom_pubs):
            pub.publish(self.odometry(i, stamp))

    def scan_ranges(self, i):
        """(scan_beams,) ranges of robot i's laser: walls and the other robots' discs."""
        return self.sim.scan_ranges(i)

    def scan(self, i, stamp=None):
        """Return robot i's sensor_msgs/LaserScan (sensor at its centre, frame <r>/base_link)."""
        return messages.make_scan(self.scan_ranges(i), f'{self.names[i]}/base_link',
                                  angle_increment=2.0 * math.pi / self.scan_beams,
                                  range_max=self.scan_range, stamp=stamp)

    def publish_scans(self, stamp=None):
        """Publish every robot's scan (only when the world has walls)."""
        for i, pub in enumerate(self.scan_pubs):
            pub.publish(self.scan(i, stamp))

    def publish_goals(self, goals, frame_id='map', stamp=None):
        """Publish one goal (x, y) per robot on /<r>/goal_pose."""
        for pub, (x, y) in zip(self.goal_pubs, goals):
            msg = PoseStamped()
            msg.header.frame_id = frame_id
            if stamp is not None:
                msg.header.stamp = stamp
            msg.pose.position.x, msg.pose.position.y = float(x), float(y)
            msg.pose.orientation.w = 1.0
            pub.publish(msg)

    # --- kinematics -----------------------------------------------------------------------

    def effective_command(self, i):
        """Robot i's last command as the world applies it (no vy for a differential drive)."""
        vx, vy, wz = self.cmd[i]
        return (vx, 0.0, wz) if self.drives[i] == 'differential' else (vx, vy, wz)

    def integrate(self, dt):
        """Advance every robot by ``dt`` under its last command, checking contact at substeps."""
        self.sim.step(self.cmd, float(dt), self.substeps)
