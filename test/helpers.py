"""
Shared test helpers: a small world of robots, and the ROS test rig's pieces.

Import them from a test file with ``from helpers import SimClock, spin_until, World`` (pytest
puts this folder on sys.path: test/ has no __init__.py).

- :func:`spin_until`, :func:`spin_for`, :func:`matched`, :class:`SimClock` (a /clock
  publisher), :class:`NodeRig` (the node in this process, lock-stepped) and :class:`Probe`
  are defined once, in ``orca_nav.testing.rig``, and imported here.
- :class:`World` is a few robots on a plane: it subscribes ``/<r>/cmd_vel``, integrates the last
  command exactly (holonomic or unicycle), publishes ``/<r>/odom`` and, with walls, a 360 degree
  ``/<r>/scan`` ray-cast with orca_nav.core.raycast.cast_rays; it tracks the smallest gap between
  two robots and between a robot and a wall.

The World knows nothing of the orca_nav node: the tests lock-step it with a NodeRig.
"""

import math

from geometry_msgs.msg import PoseStamped, Twist, TwistStamped
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.core.raycast import cast_rays
from orca_nav.testing.rig import (command_values, matched, NodeRig, Probe,  # noqa: F401
                                  SimClock, spin_for, spin_until, stamp_of)
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import LaserScan


def seconds_of(stamp):
    """Return a builtin_interfaces/Time as seconds (float)."""
    return stamp.sec + 1e-9 * stamp.nanosec


def yaw_of(q):
    """Yaw [rad] of a geometry_msgs/Quaternion (rotation about z)."""
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def set_yaw(q, yaw):
    """Write the quaternion of a rotation by ``yaw`` about z into ``q``."""
    q.x, q.y, q.z, q.w = 0.0, 0.0, math.sin(0.5 * yaw), math.cos(0.5 * yaw)


def integrate_pose(pose, vx, vy, wz, dt):
    """
    Advance (x, y, yaw) by a constant body-frame twist for ``dt`` seconds, exactly.

    The robot moves on a circular arc (a straight line when wz == 0); yaw is not wrapped.
    """
    x, y, yaw = pose
    dth = wz * dt
    if abs(dth) < 1e-12:
        c, s = math.cos(yaw), math.sin(yaw)
        return x + (c * vx - s * vy) * dt, y + (s * vx + c * vy) * dt, yaw
    s0, c0 = math.sin(yaw), math.cos(yaw)
    s1, c1 = math.sin(yaw + dth), math.cos(yaw + dth)
    return (x + (vx * (s1 - s0) + vy * (c1 - c0)) / wz,
            y + (vx * (c0 - c1) + vy * (s1 - s0)) / wz, yaw + dth)


class World:
    """
    Robots on a plane: cmd_vel in, odometry (and scans) out, exact kinematics, contact checks.

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
        self.pose = np.array(poses, dtype=float).reshape(n, 3)
        self.drives = [drives] * n if isinstance(drives, str) else list(drives)
        self.radii = np.broadcast_to(np.asarray(radii, dtype=float), (n,)).copy()
        self.offsets = np.zeros((n, 3)) if offsets is None else np.array(offsets, float)
        self.walls = None if walls is None else np.asarray(walls, float).reshape(-1, 2, 2)
        self.substeps = int(substeps)
        self.scan_beams, self.scan_range = int(scan_beams), float(scan_range)
        self.cmd = np.zeros((n, 3))
        self.cmd_count = np.zeros(n, int)
        self.last_cmd_msg = [None] * n
        self.min_gap = math.inf          # smallest distance between two robots minus radii
        self.min_wall_gap = math.inf     # smallest distance robot - wall minus the radius
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
        self.check_contact()

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
        msg = Odometry()
        msg.header.frame_id = f'{self.names[i]}/odom'
        msg.child_frame_id = f'{self.names[i]}/base_link'
        if stamp is not None:
            msg.header.stamp = stamp
        msg.pose.pose.position.x = c * dx + s * dy
        msg.pose.pose.position.y = -s * dx + c * dy
        set_yaw(msg.pose.pose.orientation, self.pose[i, 2] - oyaw)
        vx, vy, wz = self.effective_command(i)
        msg.twist.twist.linear.x, msg.twist.twist.linear.y = vx, vy
        msg.twist.twist.angular.z = wz
        return msg

    def publish_odometry(self, stamp=None):
        """Publish every robot's odometry."""
        for i, pub in enumerate(self.odom_pubs):
            pub.publish(self.odometry(i, stamp))

    def scan_ranges(self, i):
        """(scan_beams,) ranges of robot i's laser: walls and the other robots' discs."""
        angles = self.pose[i, 2] - math.pi + 2.0 * math.pi / self.scan_beams * np.arange(
            self.scan_beams)
        others = np.arange(len(self.names)) != i
        walls = np.zeros((0, 2, 2)) if self.walls is None else self.walls
        return cast_rays(self.pose[i, :2], angles, self.scan_range, walls,
                         self.pose[others, :2], self.radii[others])

    def scan(self, i, stamp=None):
        """Return robot i's sensor_msgs/LaserScan (sensor at its centre, frame <r>/base_link)."""
        msg = LaserScan()
        msg.header.frame_id = f'{self.names[i]}/base_link'
        if stamp is not None:
            msg.header.stamp = stamp
        msg.angle_min, msg.angle_increment = -math.pi, 2.0 * math.pi / self.scan_beams
        msg.angle_max = msg.angle_min + (self.scan_beams - 1) * msg.angle_increment
        msg.range_min, msg.range_max = 0.05, self.scan_range
        msg.ranges = [float(r) for r in self.scan_ranges(i)]
        return msg

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
        h = float(dt) / self.substeps
        for _ in range(self.substeps):
            for i in range(len(self.names)):
                self.pose[i] = integrate_pose(self.pose[i], *self.effective_command(i), h)
            self.check_contact()

    def check_contact(self):
        """Update min_gap (robot-robot) and min_wall_gap (robot-wall) [m]; negative = overlap."""
        xy = self.pose[:, :2]
        if len(xy) > 1:
            d = (np.linalg.norm(xy[:, None] - xy[None], axis=-1)
                 - (self.radii[:, None] + self.radii[None]))
            np.fill_diagonal(d, np.inf)
            self.min_gap = min(self.min_gap, float(d.min()))
        for a, b in ([] if self.walls is None else self.walls):
            ab = b - a
            t = np.clip(((xy - a) @ ab) / (ab @ ab), 0.0, 1.0)
            dist = np.linalg.norm(xy - (a + t[:, None] * ab), axis=1) - self.radii
            self.min_wall_gap = min(self.min_wall_gap, float(dist.min()))
