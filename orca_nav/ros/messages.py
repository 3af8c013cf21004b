"""
Every ROS message <-> array conversion of the orca_nav node, in one place.

The node's callbacks store messages; the timer turns them into numbers with these functions,
hands numpy arrays to the core and turns the answers back into messages here.
"""

import json
import math
import struct

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import Point, PoseStamped, PoseWithCovarianceStamped, Twist, TwistStamped
from nav_msgs.msg import Odometry, Path
import numpy as np
from orca_nav.core.geometry import placed_polygon
from orca_nav.core.routes.grid import GridMap
from sensor_msgs.msg import LaserScan
from std_msgs.msg import ColorRGBA, String
from visualization_msgs.msg import Marker, MarkerArray

# Height of the robot discs drawn in RViz [m] and of the arrows above the ground [m].
MARKER_DISC_HEIGHT = 0.05
MARKER_ARROW_Z = 0.1
# A velocity arrow shows where the robot is one second later: length = speed x this [s].
MARKER_ARROW_SECONDS = 1.0


# A quaternion shorter than this is "zero" (e.g. a message whose orientation was never set):
# its direction is noise, so it is rejected rather than read as yaw 0.
MIN_QUATERNION_NORM = 1e-6


def yaw_from_quaternion(x, y, z, w):
    """Yaw [rad] of a quaternion (rotation about z; roll and pitch are ignored), any length."""
    # w^2 + x^2 - y^2 - z^2 (not 1 - 2 (y^2 + z^2)): the same for a unit quaternion, and it
    # scales like the numerator, so a quaternion of another length gives the same yaw.
    return math.atan2(2.0 * (w * z + x * y), w * w + x * x - y * y - z * z)


def unit_quaternion(x, y, z, w, what='orientation'):
    """
    Return (x, y, z, w) normalised to length 1; ValueError naming ``what`` if impossible.

    Refused: a NaN or infinite component, or a length below MIN_QUATERNION_NORM (zero).
    """
    if not all(map(math.isfinite, (x, y, z, w))):
        raise ValueError(f'{what}: quaternion is not finite ({x}, {y}, {z}, {w})')
    norm = math.hypot(x, y, z, w)  # hypot does not overflow for components near 1e308
    if not norm >= MIN_QUATERNION_NORM:
        raise ValueError(f'{what}: zero quaternion ({x}, {y}, {z}, {w}) has no direction')
    return x / norm, y / norm, z / norm, w / norm


def quaternion_from_yaw(yaw):
    """Quaternion (x, y, z, w) of a rotation by yaw [rad] about z."""
    return 0.0, 0.0, math.sin(0.5 * yaw), math.cos(0.5 * yaw)


def odometry_to_tuple(msg):
    """
    ``nav_msgs/Odometry`` -> (x, y, yaw, v_forward, v_left, yaw_rate), floats.

    Pose in the odometry frame (header.frame_id); twist in the body frame (child_frame_id), as
    REP 105 and nav_msgs/Odometry specify. The quaternion is normalised. ValueError naming the
    field when a value is NaN or infinite or the quaternion is zero (see odometry_values).
    """
    p = msg.pose.pose.position
    q = msg.pose.pose.orientation
    t = msg.twist.twist
    return odometry_values(p.x, p.y, q.x, q.y, q.z, q.w, t.linear.x, t.linear.y, t.angular.z)


def odometry_values(px, py, qx, qy, qz, qw, vx, vy, wz):
    """
    Check one odometry message; return (x, y, yaw, v_forward, v_left, yaw_rate).

    Raises ValueError whose text starts with the field: ``odometry position: ...`` (NaN or
    infinite), ``odometry orientation: ...`` (NaN, infinite or zero quaternion) or
    ``odometry twist: ...``. Implausible but finite values are the controller's to judge
    (after the odometry frame's offset is applied).
    """
    if not (math.isfinite(px) and math.isfinite(py)):
        raise ValueError(f'odometry position: not finite ({px}, {py})')
    if not (math.isfinite(vx) and math.isfinite(vy) and math.isfinite(wz)):
        raise ValueError(f'odometry twist: not finite ({vx}, {vy}, {wz})')
    qx, qy, qz, qw = unit_quaternion(qx, qy, qz, qw, 'odometry orientation')
    return px, py, yaw_from_quaternion(qx, qy, qz, qw), vx, vy, wz


# Serialized messages (CDR, as every ROS 2 middleware sends them): a 4-byte encapsulation
# header, then the fields aligned to their size relative to the end of that header. Read here:
# plain CDR (XCDR1), bytes 0-1 of the header 0x0000 (big endian) or 0x0001 (little endian);
# anything else (XCDR2, parameter lists) is refused, not guessed at.
_CDR_HEADER = 4
_CDR_KINDS = {b'\x00\x01': '<', b'\x00\x00': '>'}
# A stamped message's serialized bytes after this offset follow its stamp (the 4-byte CDR
# header, then builtin_interfaces/Time: int32 sec, uint32 nanosec): the frame and the body.
STAMP_END = _CDR_HEADER + 8
_POSE_COVARIANCE_BYTES = 36 * 8
# Odometry after its child_frame_id: pose (7 doubles), covariance, twist (6 doubles), covariance.
_ODOM_BODY_BYTES = 7 * 8 + _POSE_COVARIANCE_BYTES + 6 * 8 + _POSE_COVARIANCE_BYTES


def cdr_byte_order(buf, what):
    """
    Return the struct byte order ('<' or '>') of a serialized message's CDR header.

    ValueError naming ``what`` (the message type) for an encapsulation not read here.
    """
    order = _CDR_KINDS.get(bytes(buf[:2]))
    if order is None:
        raise ValueError(f'not a serialized {what}: encapsulation {bytes(buf[:4]).hex()!r} '
                         '(plain CDR is read: 0001 or 0000)')
    return order


def odometry_from_cdr(buf):
    """
    Read (x, y, yaw, v_forward, v_left, yaw_rate, stamp_ns) from a serialized Odometry.

    The same numbers as ``odometry_to_tuple`` without building the Python message: rclpy needs
    ~31 us to deserialize an Odometry (mostly its two covariance arrays), this takes ~1.5 us,
    which decides how many robots one node can follow. ValueError when the buffer is not an
    Odometry (truncated, or an encapsulation other than plain CDR), and, naming the field, when
    a value is NaN or infinite or the quaternion is zero. ``odometry_batch_from_cdr`` reads
    many at once.
    """
    try:
        e = cdr_byte_order(buf, 'nav_msgs/Odometry')
        o = _CDR_HEADER
        sec, nanosec, n = struct.unpack_from(e + 'iII', buf, o)
        o += 12 + n                                   # header.frame_id
        o = _CDR_HEADER + ((o - _CDR_HEADER + 3) & ~3)
        (n,) = struct.unpack_from(e + 'I', buf, o)
        o += 4 + n                                    # child_frame_id
        o = _CDR_HEADER + ((o - _CDR_HEADER + 7) & ~7)
        if o + _ODOM_BODY_BYTES > len(buf):  # to the end of the twist's covariance
            raise ValueError(f'truncated: {len(buf)} bytes, {o + _ODOM_BODY_BYTES} needed')
        px, py, _, qx, qy, qz, qw = struct.unpack_from(e + '7d', buf, o)
        o += 7 * 8 + _POSE_COVARIANCE_BYTES
        vx, vy, _, _, _, wz = struct.unpack_from(e + '6d', buf, o)
    except (struct.error, IndexError, TypeError, ValueError) as exc:
        text = str(exc)
        if not text.startswith('not a serialized'):
            text = f'not a serialized nav_msgs/Odometry: {text}'
        raise ValueError(f'odometry message: {text}') from None
    return odometry_values(px, py, qx, qy, qz, qw, vx, vy, wz) + (
        sec * 1_000_000_000 + nanosec,)


def _gather(data, offsets, size, dtype):
    """``size`` bytes at each of ``offsets`` in the uint8 array ``data``, as (R, k) ``dtype``."""
    return data[offsets[:, None] + np.arange(size)].view(dtype)


def odometry_batch_from_cdr(bufs):
    """
    Read many serialized little-endian Odometry messages at once (the tick's fast path).

    Returns (read, values, stamp_ns): ``read`` (R,) bool, the rows read here; for them
    ``values`` (R, 6) holds exactly what ``odometry_from_cdr`` gives (x, y, yaw, v_forward,
    v_left, yaw_rate; the same arithmetic, so the same bits) and ``stamp_ns`` (R,) the stamp.
    A row not read (another byte order or encapsulation, truncated, NaN or infinite, zero
    quaternion) is for ``odometry_from_cdr``, which reads it or says what is wrong with it.
    The offsets, bounds and finiteness are worked out for all rows with numpy; only the
    quaternion's normalisation and yaw stay per row, in the scalar functions' arithmetic.
    """
    r = len(bufs)
    values = np.full((r, 6), np.nan)
    stamp_ns = np.zeros(r, np.int64)
    if not r:
        return np.zeros(0, bool), values, stamp_ns
    bufs = [b if isinstance(b, (bytes, bytearray)) else b'' for b in bufs]  # b'': not read
    size = np.fromiter(map(len, bufs), np.int64, r)
    base = np.zeros(r, np.int64)
    np.cumsum(size[:-1], out=base[1:])
    # Zeros after the last message: a read past a short buffer stays inside the array (that
    # row is not read: the bounds are checked before its values are used).
    data = np.frombuffer(b''.join(bufs) + bytes(_ODOM_BODY_BYTES + 16), np.uint8)
    ok = size >= STAMP_END + 4
    at = np.where(ok, base, 0)
    ok &= (data[at] == 0) & (data[at + 1] == 1)
    head = _gather(data, np.where(ok, base, 0) + _CDR_HEADER, 12, '<u4')  # sec nanosec len
    n = head[:, 2].astype(np.int64)
    o = STAMP_END + 4 + n                                       # after header.frame_id
    o = _CDR_HEADER + ((o - _CDR_HEADER + 3) & ~3)
    ok &= o + 4 <= size
    n = _gather(data, np.where(ok, base + o, 0), 4, '<u4')[:, 0].astype(np.int64)
    o = o + 4 + n                                               # after child_frame_id
    o = _CDR_HEADER + ((o - _CDR_HEADER + 7) & ~7)
    ok &= o + _ODOM_BODY_BYTES <= size
    at = np.where(ok, base + o, 0)
    pose = _gather(data, at, 7 * 8, '<f8')                      # x y z qx qy qz qw
    twist = _gather(data, at + 7 * 8 + _POSE_COVARIANCE_BYTES, 6 * 8, '<f8')
    ok &= np.isfinite(pose[:, [0, 1, 3, 4, 5, 6]]).all(axis=1)
    ok &= np.isfinite(twist[:, [0, 1, 5]]).all(axis=1)
    yaw = values[:, 2]
    hypot, atan2 = math.hypot, math.atan2
    for k, good, (qx, qy, qz, qw) in zip(range(r), ok.tolist(), pose[:, 3:7].tolist()):
        if not good:
            continue
        norm = hypot(qx, qy, qz, qw)  # unit_quaternion's and yaw_from_quaternion's arithmetic
        if not norm >= MIN_QUATERNION_NORM:
            ok[k] = False
            continue
        x, y, z, w = qx / norm, qy / norm, qz / norm, qw / norm
        yaw[k] = atan2(2.0 * (w * z + x * y), w * w + x * x - y * y - z * z)
    values[ok, 0:2] = pose[ok, 0:2]
    values[ok, 3:5] = twist[ok, 0:2]
    values[ok, 5] = twist[ok, 5]
    stamp_ns[ok] = (head[ok, 0].view(np.int32).astype(np.int64) * 1_000_000_000
                    + head[ok, 1].astype(np.int64))
    return ok, values, stamp_ns


def scan_from_cdr(buf):
    """
    Read (angle_min, angle_increment, range_min, range_max, ranges) from a serialized LaserScan.

    ranges is a float64 array. rclpy needs about 0.4 ms to turn a 360-beam LaserScan into a
    Python message (a list of floats); this reads the buffer in place in a few microseconds.
    ValueError when the buffer is not a LaserScan. The values are not judged here (the scan
    processing refuses bad ones, with the reason).
    """
    try:
        e = cdr_byte_order(buf, 'sensor_msgs/LaserScan')
        o = _CDR_HEADER + 8                           # header.stamp
        (n,) = struct.unpack_from(e + 'I', buf, o)
        o += 4 + n                                    # header.frame_id
        o = _CDR_HEADER + ((o - _CDR_HEADER + 3) & ~3)
        angle_min, _, increment, _, _, range_min, range_max, count = struct.unpack_from(
            e + '7fI', buf, o)
        o += 32
        if o + 4 * count > len(buf):
            raise ValueError(f'{count} ranges announced, {(len(buf) - o) // 4} there')
        ranges = np.frombuffer(buf, dtype=e + 'f4', count=count, offset=o).astype(float)
    except (struct.error, IndexError, TypeError, ValueError) as exc:
        text = str(exc)
        if not text.startswith('not a serialized'):
            text = f'not a serialized sensor_msgs/LaserScan: {text}'
        raise ValueError(f'scan message: {text}') from None
    return angle_min, increment, range_min, range_max, ranges


def goal_from_pose(msg, global_frame):
    """
    ``geometry_msgs/PoseStamped`` -> (x, y, yaw) in global_frame.

    Raises ValueError with a reason when the frame is not global_frame, a value is not finite
    or the quaternion is zero (a quaternion of another length is normalised). Whether the
    position is plausible (max_coordinate) is the controller's to judge (``set_goal``).
    """
    frame = msg.header.frame_id.lstrip('/')
    if frame != global_frame:
        raise ValueError(f'goal frame: {msg.header.frame_id!r} is not the global frame '
                         f'{global_frame!r} (no transform is done: send goals in '
                         f'{global_frame!r})')
    p = msg.pose.position
    q = msg.pose.orientation
    if not all(math.isfinite(v) for v in (p.x, p.y, p.z)):
        raise ValueError(f'goal position: NaN or infinite value ({p.x}, {p.y}, {p.z})')
    q = unit_quaternion(q.x, q.y, q.z, q.w, 'goal orientation')
    return p.x, p.y, yaw_from_quaternion(*q)


def localisation_from_pose(msg, global_frame):
    """
    ``geometry_msgs/PoseWithCovarianceStamped`` (e.g. AMCL's amcl_pose) -> numbers.

    Returns (x, y, yaw, sigma, stamp [s]) in global_frame; sigma [m] is the larger of the x
    and y position standard deviations (covariance rows 0 and 7). Raises ValueError whose text
    starts with the field (``localisation frame``, ``localisation position``, ``localisation
    orientation``, ``localisation covariance``) when the frame is not global_frame, a value is
    not finite, the quaternion is zero or a position variance is negative.
    """
    _frame_check(msg.header.frame_id, global_frame, 'localisation')
    p = msg.pose.pose.position
    q = msg.pose.pose.orientation
    if not (math.isfinite(p.x) and math.isfinite(p.y)):
        raise ValueError(f'localisation position: NaN or infinite value ({p.x}, {p.y})')
    q = unit_quaternion(q.x, q.y, q.z, q.w, 'localisation orientation')
    cov = msg.pose.covariance
    if len(cov) != 36:
        raise ValueError(f'localisation covariance: {len(cov)} values, not 36')
    var_x, var_y = float(cov[0]), float(cov[7])
    if not (math.isfinite(var_x) and math.isfinite(var_y)):
        raise ValueError(f'localisation covariance: NaN or infinite variance ({var_x}, '
                         f'{var_y})')
    if var_x < 0.0 or var_y < 0.0:
        raise ValueError(f'localisation covariance: negative variance ({var_x}, {var_y})')
    stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
    return p.x, p.y, yaw_from_quaternion(*q), math.sqrt(max(var_x, var_y)), stamp


def make_localisation(x, y, yaw=0.0, sigma=0.0, frame_id='map', stamp=None):
    """``geometry_msgs/PoseWithCovarianceStamped`` with variance sigma^2 in x and y (tests)."""
    msg = PoseWithCovarianceStamped()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.pose.pose.position.x = float(x)
    msg.pose.pose.position.y = float(y)
    (msg.pose.pose.orientation.x, msg.pose.pose.orientation.y, msg.pose.pose.orientation.z,
     msg.pose.pose.orientation.w) = quaternion_from_yaw(float(yaw))
    cov = [0.0] * 36
    cov[0] = cov[7] = float(sigma) ** 2
    msg.pose.covariance = cov
    return msg


def make_goal(x, y, yaw=0.0, frame_id='map', stamp=None):
    """``geometry_msgs/PoseStamped`` goal (for tests, demos and scripts)."""
    msg = PoseStamped()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.pose.position.x = float(x)
    msg.pose.position.y = float(y)
    qx, qy, qz, qw = quaternion_from_yaw(float(yaw))
    msg.pose.orientation.x, msg.pose.orientation.y = qx, qy
    msg.pose.orientation.z, msg.pose.orientation.w = qz, qw
    return msg


def make_odometry(x=0.0, y=0.0, yaw=0.0, twist=(0.0, 0.0, 0.0), frame_id='',
                  child_frame_id='', stamp=None, quaternion=None):
    """
    ``nav_msgs/Odometry`` at (x, y) heading yaw, body twist (vx, vy, wz) (tests, scripts).

    quaternion : (x, y, z, w) written as given instead of yaw's (e.g. a bad one, for tests).
    """
    msg = Odometry()
    msg.header.frame_id = frame_id
    msg.child_frame_id = child_frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    msg.pose.pose.position.x = float(x)
    msg.pose.pose.position.y = float(y)
    q = quaternion_from_yaw(float(yaw)) if quaternion is None else quaternion
    o = msg.pose.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in q)
    t = msg.twist.twist
    t.linear.x, t.linear.y, t.angular.z = (float(v) for v in twist)
    return msg


def make_scan(ranges, frame_id='', angle_min=-math.pi, angle_increment=None, range_min=0.05,
              range_max=10.0, stamp=None):
    """
    ``sensor_msgs/LaserScan`` of these ranges [m] (tests, scripts).

    angle_increment None: the beams cover the full turn (2 pi / len(ranges)); angle_max is
    the last beam's angle.
    """
    msg = LaserScan()
    msg.header.frame_id = frame_id
    if stamp is not None:
        msg.header.stamp = stamp
    ranges = [float(r) for r in ranges]
    if angle_increment is None:
        angle_increment = 2.0 * math.pi / max(len(ranges), 1)
    msg.angle_min = float(angle_min)
    msg.angle_increment = float(angle_increment)
    msg.angle_max = msg.angle_min + (len(ranges) - 1) * msg.angle_increment
    msg.range_min = float(range_min)
    msg.range_max = float(range_max)
    msg.ranges = ranges
    return msg


def new_command(stamped):
    """Return an empty command message: ``TwistStamped`` if stamped else ``Twist``."""
    return TwistStamped() if stamped else Twist()


def fill_command(msg, vx, vy, wz, stamp=None, frame_id=''):
    """Write body-frame (vx, vy, wz) into a Twist or TwistStamped (stamp, frame for stamped)."""
    if isinstance(msg, TwistStamped):
        if stamp is not None:
            msg.header.stamp = stamp
        msg.header.frame_id = frame_id
        twist = msg.twist
    else:
        twist = msg
    twist.linear.x = float(vx)
    twist.linear.y = float(vy)
    twist.angular.z = float(wz)
    return msg


class CommandEncoder:
    """
    The serialized commands of C robots: geometry_msgs/Twist or TwistStamped, as CDR bytes.

    ``Publisher.publish`` takes bytes as they are; a Python message is first converted field
    by field (~3 us a Twist against ~1.4 us for bytes, 250 robots ten times a second). The
    bytes are those of ``fill_command``'s message (tested against rclpy's serializer).
    """

    _TWIST = struct.Struct('<6d')
    _STAMP = struct.Struct('<iI')

    def __init__(self, stamped, frame_ids):
        """Commands of ``len(frame_ids)`` robots; TwistStamped in these frames if stamped."""
        self.stamped = stamped
        self._tails = []  # stamped: each robot's bytes between the stamp and the twist
        for frame in frame_ids if stamped else ():
            text = frame.encode() + b'\0'
            end = STAMP_END + 4 + len(text)
            pad = -(end - _CDR_HEADER) % 8  # the twist's doubles: 8-aligned
            self._tails.append(struct.pack('<I', len(text)) + text + bytes(pad))

    def encode(self, commands, stamp=None):
        """
        List of the serialized command of each robot: rows (vx, vy, wz) of ``commands``.

        stamp : (sec, nanosec) of TwistStamped's header (None: zero).
        """
        pack = self._TWIST.pack
        head = b'\x00\x01\x00\x00'  # plain CDR, little endian
        rows = np.asarray(commands, dtype=float).tolist()
        if not self.stamped:
            return [head + pack(vx, vy, 0.0, 0.0, 0.0, wz) for vx, vy, wz in rows]
        head += self._STAMP.pack(*(stamp or (0, 0)))
        return [head + tail + pack(vx, vy, 0.0, 0.0, 0.0, wz)
                for tail, (vx, vy, wz) in zip(self._tails, rows)]


def status_message(robot, state, goal=None, distance=None, reason='', **give_way):
    """
    ``std_msgs/String`` with the JSON status of one robot (see docs/node.md).

    give_way : weight, group, priority (overridden now), locked (a velocity lock holds).
    """
    data = {'robot': robot, 'state': state, 'reason': reason, **give_way,
            'goal': None if goal is None else [round(float(goal[0]), 4),
                                               round(float(goal[1]), 4)],
            'distance': (None if distance is None or not math.isfinite(distance)
                         else round(float(distance), 4))}
    return String(data=json.dumps(data, sort_keys=True))


def _frame_check(frame_id, global_frame, what):
    """Raise ValueError unless ``frame_id`` is the global frame (a leading / is tolerated)."""
    if frame_id.lstrip('/') != global_frame:
        raise ValueError(f'{what} frame {frame_id!r} is not the global frame {global_frame!r} '
                         f'(no transform is done: send it in {global_frame!r})')


def grid_from_occupancy(msg, global_frame, occupied_threshold, unknown_is_free, max_cells):
    """
    ``nav_msgs/OccupancyGrid`` -> ``GridMap``; ValueError (MapError) with the reason.

    Refused: a map in another frame, empty, too large, all unknown, without free cells.
    """
    _frame_check(msg.header.frame_id, global_frame, 'map')
    info = msg.info
    o = info.origin
    values = (o.position.x, o.position.y, o.orientation.x, o.orientation.y, o.orientation.z,
              o.orientation.w, info.resolution)
    if not all(map(math.isfinite, values)):
        raise ValueError(f'map origin or resolution is not finite: {values}')
    yaw = yaw_from_quaternion(*unit_quaternion(o.orientation.x, o.orientation.y,
                                               o.orientation.z, o.orientation.w,
                                               'map origin orientation'))
    return GridMap.from_occupancy(
        np.frombuffer(msg.data, dtype=np.int8) if len(msg.data) else np.zeros(0, np.int8),
        info.width, info.height, info.resolution, (o.position.x, o.position.y, yaw),
        occupied_threshold=occupied_threshold, unknown_is_free=unknown_is_free,
        max_cells=max_cells)


def route_from_path(msg, global_frame):
    """
    ``nav_msgs/Path`` -> (K, 2) points [m] in the global frame (K may be 0: a cancel).

    Raises ValueError when the path or a pose is in another frame or a value is not finite.
    """
    if msg.poses:
        _frame_check(msg.header.frame_id, global_frame, 'path')
    points = np.array([(p.pose.position.x, p.pose.position.y) for p in msg.poses],
                      dtype=float).reshape(-1, 2)
    for k, pose in enumerate(msg.poses):
        if pose.header.frame_id and pose.header.frame_id.lstrip('/') != global_frame:
            raise ValueError(f'path pose {k} is in frame {pose.header.frame_id!r}, not '
                             f'{global_frame!r}')
    if not np.all(np.isfinite(points)):
        bad = int(np.argwhere(~np.isfinite(points))[0][0])
        raise ValueError(f'path has a NaN or infinite position (pose {bad})')
    return points


def path_message(points, frame_id, stamp):
    """(K, 2) route points -> ``nav_msgs/Path`` (orientation along the route)."""
    msg = Path()
    msg.header.frame_id = frame_id
    msg.header.stamp = stamp
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    for k, (x, y) in enumerate(points):
        pose = PoseStamped()
        pose.header = msg.header
        pose.pose.position.x, pose.pose.position.y = float(x), float(y)
        ahead = points[min(k + 1, len(points) - 1)] - points[max(k - (k + 1 == len(points)), 0)]
        q = quaternion_from_yaw(math.atan2(ahead[1], ahead[0]))
        pose.pose.orientation.x, pose.pose.orientation.y = q[0], q[1]
        pose.pose.orientation.z, pose.pose.orientation.w = q[2], q[3]
        msg.poses.append(pose)
    return msg


def _color(r, g, b, a=1.0):
    return ColorRGBA(r=float(r), g=float(g), b=float(b), a=float(a))


# Disc colours by state (see docs/node.md): green moving, blue arrived or idle,
# grey observed, red stale, refused or missing odometry, cyan waiting for a passage.
STATE_COLORS = {'active': (0.1, 0.8, 0.2), 'reached': (0.2, 0.4, 1.0), 'idle': (0.2, 0.4, 1.0),
                'observed': (0.6, 0.6, 0.6), 'stale_odometry': (1.0, 0.1, 0.1),
                'rejected_odometry': (1.0, 0.1, 0.1),
                'no_odometry': (1.0, 0.1, 0.1), 'planning': (0.9, 0.9, 0.2),
                'stuck': (1.0, 0.5, 0.0), 'unreachable': (0.6, 0.0, 0.6),
                'waiting': (0.0, 0.8, 0.9)}


def route_marker(frame_id, stamp, i, route):
    """Return the LINE_STRIP marker (namespace routes, id i) of a (K, 2) route."""
    m = Marker(ns='routes', id=i, type=Marker.LINE_STRIP, action=Marker.ADD)
    m.header.frame_id = frame_id
    m.header.stamp = stamp
    m.pose.orientation.w = 1.0
    m.scale.x = 0.02
    m.color = _color(0.0, 0.7, 1.0, 0.8)
    m.points = [Point(x=float(x), y=float(y), z=MARKER_ARROW_Z) for x, y in route]
    return m


def footprint_marker(frame_id, stamp, i, footprint, pose, color):
    """Return the closed LINE_STRIP (namespace footprints, id i) of a footprint at a pose."""
    m = Marker(ns='footprints', id=i, type=Marker.LINE_STRIP, action=Marker.ADD)
    m.header.frame_id = frame_id
    m.header.stamp = stamp
    m.pose.orientation.w = 1.0
    m.scale.x = 0.03
    m.color = _color(color.r, color.g, color.b, 1.0)
    polygon = placed_polygon(footprint, pose)
    m.points = [Point(x=float(x), y=float(y), z=MARKER_DISC_HEIGHT)
                for x, y in np.concatenate([polygon, polygon[:1]])]
    return m


def build_markers(frame_id, stamp, names, positions, radius, velocities, goals, has_goal,
                  states, known, routes=(), carrots=None, footprints=None, yaws=None):
    """
    ``visualization_msgs/MarkerArray``: discs, footprints, velocity arrows, goals, routes.

    positions, velocities, goals : (N, 2) global [m], [m/s], [m]; radius : (N,) [m]
    has_goal, known : (N,) bool (known: a pose has been received); states : list of N strings.
    routes : per robot a (K, 2) route, its ready ``route_marker`` or None; carrots : (N, 2),
    NaN where there is none; footprints : per robot a (K, 2) polygon in its base frame or
    None (no footprint), drawn at its yaw from yaws (N,) [rad].
    Namespaces: 'robots' (one CYLINDER per robot, id = index: the disc it avoids as),
    'footprints' (one closed LINE_STRIP per robot with a footprint, id = index),
    'velocities' (one LINE_LIST),
    'goals' (one SPHERE_LIST plus a LINE_LIST from each robot to its goal), 'routes' (one
    LINE_STRIP per robot with a route, id = index), 'carrots' (one SPHERE_LIST).
    """
    out = MarkerArray()
    clear = Marker(action=Marker.DELETEALL)
    clear.header.frame_id = frame_id
    out.markers.append(clear)
    for i, name in enumerate(names):
        if not known[i]:
            continue
        m = Marker(ns='robots', id=i, type=Marker.CYLINDER, action=Marker.ADD)
        m.header.frame_id = frame_id
        m.header.stamp = stamp
        m.pose.position.x = float(positions[i, 0])
        m.pose.position.y = float(positions[i, 1])
        m.pose.position.z = 0.5 * MARKER_DISC_HEIGHT
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = float(2.0 * radius[i])
        m.scale.z = MARKER_DISC_HEIGHT
        m.color = _color(*STATE_COLORS.get(states[i], (1.0, 1.0, 0.0)), 0.6)
        m.text = name
        out.markers.append(m)
        if footprints is not None and footprints[i] is not None:
            out.markers.append(footprint_marker(frame_id, stamp, i, footprints[i],
                                                (positions[i, 0], positions[i, 1], yaws[i]),
                                                m.color))
    arrows = Marker(ns='velocities', id=0, type=Marker.LINE_LIST, action=Marker.ADD)
    goal_points = Marker(ns='goals', id=0, type=Marker.SPHERE_LIST, action=Marker.ADD)
    goal_lines = Marker(ns='goals', id=1, type=Marker.LINE_LIST, action=Marker.ADD)
    for m, width, color in ((arrows, 0.03, (1.0, 0.5, 0.0)), (goal_points, 0.12, (1.0, 0.0, 1.0)),
                            (goal_lines, 0.01, (1.0, 0.0, 1.0))):
        m.header.frame_id = frame_id
        m.header.stamp = stamp
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = width
        m.color = _color(*color, 0.8)
    for i in range(len(names)):
        if not known[i]:
            continue
        x, y = float(positions[i, 0]), float(positions[i, 1])
        tip = positions[i] + MARKER_ARROW_SECONDS * velocities[i]
        arrows.points.append(Point(x=x, y=y, z=MARKER_ARROW_Z))
        arrows.points.append(Point(x=float(tip[0]), y=float(tip[1]), z=MARKER_ARROW_Z))
        if has_goal[i]:
            g = Point(x=float(goals[i, 0]), y=float(goals[i, 1]), z=MARKER_ARROW_Z)
            goal_points.points.append(g)
            goal_lines.points.append(Point(x=x, y=y, z=MARKER_ARROW_Z))
            goal_lines.points.append(g)
    for i, route in enumerate(routes):
        if isinstance(route, Marker):
            route.header.stamp = stamp
            out.markers.append(route)
        elif route is not None and len(route) >= 2:
            out.markers.append(route_marker(frame_id, stamp, i, route))
    carrot_points = Marker(ns='carrots', id=0, type=Marker.SPHERE_LIST, action=Marker.ADD)
    carrot_points.header.frame_id = frame_id
    carrot_points.header.stamp = stamp
    carrot_points.pose.orientation.w = 1.0
    carrot_points.scale.x = carrot_points.scale.y = carrot_points.scale.z = 0.08
    carrot_points.color = _color(0.0, 0.7, 1.0, 0.9)
    if carrots is not None:
        carrot_points.points = [Point(x=float(x), y=float(y), z=MARKER_ARROW_Z)
                                for x, y in carrots if math.isfinite(x) and math.isfinite(y)]
    for m in (arrows, goal_points, goal_lines, carrot_points):
        if m.points:
            out.markers.append(m)
    return out


def diagnostics(name, stats, stamp):
    """
    Return a diagnostic_msgs/DiagnosticArray with the node's health from its tick statistics.

    One status named ``orca_nav: <name>``: OK; WARN while starting (``stats['ready']`` false:
    the kernels compile) and when ``stats['overloaded']`` (the timer missed a period, a tick
    overran it or scans were left for later ticks in the last second; the share of robots on
    fresh odometry is in the message); ERROR when ticks failed. Every statistic is a
    key-value.
    """
    status = DiagnosticStatus(name=f'orca_nav: {name}', hardware_id=name)
    fresh = stats.get('recent_fresh_share')
    share = '' if fresh is None else f', {100.0 * fresh:.0f} % of robots on fresh odometry'
    if stats.get('tick_errors'):
        status.level = DiagnosticStatus.ERROR
        status.message = f'{stats["tick_errors"]} ticks failed{share}'
    elif stats.get('ready') is False:
        status.level = DiagnosticStatus.WARN
        status.message = 'starting: compiling the numba kernels, every command is zero'
    elif stats.get('overloaded'):
        status.level = DiagnosticStatus.WARN
        deferred = (f', scans read for {stats.get("scan_quota")} robots a tick'
                    if stats.get('scans_deferred') else '')
        status.message = (f'overloaded: {stats.get("recent_missed_periods", 0)} periods missed, '
                          f'longest tick {stats.get("recent_tick_ms_max", 0.0):.1f} ms{share}'
                          f'{deferred}')
    else:
        status.level = DiagnosticStatus.OK
        status.message = f'ok{share}'
    status.values = [KeyValue(key=str(k), value=json.dumps(v)) for k, v in sorted(stats.items())
                     if not isinstance(v, (list, dict))]
    msg = DiagnosticArray(status=[status])
    msg.header.stamp = stamp
    return msg
