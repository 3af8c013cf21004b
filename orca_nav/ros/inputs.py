"""
Per-robot input stores: the newest message of each robot, taken from the middleware by the tick.

Odometry and scans are not delivered to Python callbacks one by one: their subscriptions
belong to a node that no executor spins, with a history of one message (keep-last 1), so that
the middleware keeps only the newest message of each robot and drops the older ones itself.
Each tick takes that message (``take_new``), converts it to numbers and refuses bad ones. The
node's cost per tick is then one take per robot, whatever the message rates: a flood of
odometry cannot build a backlog in the node, and a slow tick simply finds newer messages.
Counters are public and read-only for tests and statistics.
"""

import time

import numpy as np
from orca_nav.control import FleetInputs, ScanInput
from orca_nav.ros import messages
# rclpy's own wait_for_message uses this wait set; it is not part of rclpy's public API.
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

NS_PER_S = 1e-9


class MessageStore:
    """
    The subscriptions of N robots (some may be None) and how many messages were taken.

    ``attach(i, subscription)`` hands over robot i's subscription (created with keep-last 1 on
    a node that no executor spins); ``take_new`` yields each robot's newest message since the
    last call with the time it was received, in the clock given (the node's), from the age of
    the message by the system clock. With ROS time (use_sim_time) the time is the clock's when
    the tick takes the message: a simulation's clock may stand still while messages wait (a
    lock-stepped one) or run at any real-time factor, so an age in wall time means nothing
    there (and taken with it, a busy machine would change what a lock-stepped run computes).
    """

    def __init__(self, n, clock, context=None):
        """
        Empty store for N robots; ``clock`` gives the receive times (the node's clock).

        context : the rclpy Context of the subscriptions (needed by ``waiting`` only).
        """
        self._clock = clock
        self._context = context
        self._subs = [None] * n
        self._count = [0] * n    # messages taken
        self._last_seq = [None] * n  # publication sequence number of the newest taken
        self.dropped = 0         # superseded in the middleware before a tick took them
        self._next = 0           # robot the next limited take starts at (round robin)
        self.limited = False     # the last take stopped at its limit (others left waiting)

    def attach(self, i, subscription):
        """Take robot i's messages from ``subscription`` (an rclpy Subscription)."""
        self._subs[i] = subscription

    def take_new(self, limit=None):
        """
        Yield (robot, message, receive time [ns]) for robots with a message since last time.

        limit : take the messages of at most this many robots (None: all), starting at the
        robot where the last limited take stopped; the others wait in the middleware (still
        keep-last 1: the newest) for a later take, and ``limited`` is set.
        """
        now_ns = self._clock.now().nanoseconds
        wall_ns = time.time_ns()
        sim_time = getattr(self._clock, 'ros_time_is_active', False)
        n = len(self._subs)
        start = self._next if limit is not None else 0
        self.limited = False
        robots = 0
        count, last_seq = self._count, self._last_seq
        # Once per robot and tick, for hundreds of robots: the loop reads as little as it can.
        for i in (range(n) if start == 0 else [(start + k) % n for k in range(n)]):
            sub = self._subs[i]
            if sub is None:
                continue
            if limit is not None and robots >= limit:
                self._next, self.limited = i, True
                return
            handle = sub.handle
            with handle:  # keep-last 1: one take gives the newest message, if any
                taken = handle.take_message(sub.msg_type, sub.raw)
            if taken is None:
                continue
            msg, info = taken
            robots += 1
            count[i] += 1
            # Messages of robot i's publisher between the last two taken (when known).
            seq = info.get('publication_sequence_number')
            last, last_seq[i] = last_seq[i], seq
            if isinstance(seq, int) and isinstance(last, int) and seq > last + 1:
                self.dropped += seq - last - 1
            if sim_time:
                yield i, msg, now_ns
            else:
                received = info.get('received_timestamp') or wall_ns
                yield i, msg, now_ns - max(0, wall_ns - received)

    def count(self, i):
        """Messages taken of robot i."""
        return self._count[i]

    def waiting(self, i):
        """Whether a message of robot i waits to be taken (tests wait for delivery with it)."""
        sub = self._subs[i]
        wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, self._context.handle)
        wait_set.clear_entities()
        wait_set.add_subscription(sub.handle)
        wait_set.wait(0)
        return sub.handle.pointer in wait_set.get_ready_entities('subscription')

    @property
    def received(self):
        """Messages taken, all robots."""
        return int(sum(self._count))


class OdometryStore(MessageStore):
    """
    Serialized nav_msgs/Odometry of every robot (raw subscriptions), taken at tick time.

    ``update`` turns the newest message of each robot into ``inputs`` (a FleetInputs); a
    malformed or non-finite message, or one with a zero quaternion, is refused: it leaves the
    robot's previous values and marks it ``inputs.rejected`` (stopped until a valid one).
    Public counters: ``rejected`` (all robots), ``rejected_by_robot`` (N,).
    """

    def __init__(self, n, clock, context=None):
        """Empty store and empty FleetInputs for N robots."""
        super().__init__(n, clock, context)
        self.inputs = FleetInputs.empty(n)
        self.rejected_by_robot = np.zeros(n, np.int64)
        self.max_delay_ns = 0  # largest receive - stamp since reset_delay()

    @property
    def rejected(self):
        """Messages refused, all robots."""
        return int(self.rejected_by_robot.sum())

    def update(self):
        """Read the new messages into ``inputs``; return (robot, warning) for refused ones."""
        warnings = []
        inputs = self.inputs
        taken = list(self.take_new())
        if not taken:
            return warnings
        rows, bufs, received = (list(column) for column in zip(*taken))
        # Little-endian plain CDR, valid values: all at once; any other row is read alone,
        # which refuses it with the reason (or reads what the batch reader leaves to it).
        ok, values, stamp_ns = messages.odometry_batch_from_cdr(bufs)
        for k in np.flatnonzero(~ok).tolist():
            i = rows[k]
            try:
                one = messages.odometry_from_cdr(bufs[k])
            except Exception as exc:  # noqa: B902 -- one robot's message, whatever is wrong
                self.rejected_by_robot[i] += 1
                inputs.rejected[i] = True
                text = str(exc) if isinstance(exc, ValueError) else (
                    f'odometry message: unreadable ({exc!r})')
                warnings.append((i, f'{text}; stopped'))
                continue
            ok[k] = True
            values[k], stamp_ns[k] = one[:6], one[6]
        if not ok.all():
            rows = [i for i, good in zip(rows, ok.tolist()) if good]
            values, stamp_ns = values[ok], stamp_ns[ok]
            received = [t for t, good in zip(received, ok.tolist()) if good]
        if rows:  # one write per field for all robots read
            rx_ns = np.array(received, dtype=np.int64)
            inputs.odom_xy[rows] = values[:, 0:2]
            inputs.odom_yaw[rows] = values[:, 2]
            inputs.twist[rows] = values[:, 3:6]
            inputs.has_pose[rows] = True
            inputs.rejected[rows] = False
            inputs.odom_time[rows] = rx_ns * NS_PER_S
            inputs.odom_stamp[rows] = np.where(stamp_ns > 0, stamp_ns * NS_PER_S, np.nan)
            self.max_delay_ns = max(self.max_delay_ns, int((rx_ns - stamp_ns).max()))
        return warnings

    def reset_delay(self):
        """Return the largest odometry delay [ns] since the last call and start again."""
        delay, self.max_delay_ns = self.max_delay_ns, 0
        return delay


class ScanStore(MessageStore):
    """
    Serialized sensor_msgs/LaserScan of the commanded robots (raw), taken at tick time.

    ``take`` gives the new ones as numbers; an unreadable buffer is counted in ``unreadable``
    and skipped (values are judged by the scan processing, which reports them).
    """

    unreadable = 0

    def take(self, limit=None):
        """List of ScanInput of the scans taken now (the newest of each robot; see take_new)."""
        scans = []
        for i, buf, rx_ns in self.take_new(limit):
            try:
                angle_min, increment, range_min, range_max, ranges = \
                    messages.scan_from_cdr(buf)
            except ValueError:
                self.unreadable += 1
                continue
            scans.append(ScanInput(robot=i, ranges=ranges, angle_min=angle_min,
                                   angle_increment=increment, range_min=range_min,
                                   range_max=range_max, time=rx_ns * NS_PER_S))
        return scans


class PoseStore(MessageStore):
    """
    geometry_msgs/PoseWithCovarianceStamped localisation poses (e.g. amcl_pose), taken at ticks.

    ``update`` writes each robot's newest valid pose into a FleetInputs' ``loc_pose``,
    ``loc_sigma`` and ``loc_time`` (its stamp; the receive time when unstamped); a bad one
    (wrong frame, NaN, zero quaternion, negative variance) is refused with a warning and
    leaves that robot's previous pose. Public counter: ``rejected_by_robot`` (N,).
    """

    def __init__(self, n, clock, context=None):
        """Empty store for N robots (robots without a subscription have no localisation)."""
        super().__init__(n, clock, context)
        self.rejected_by_robot = np.zeros(n, np.int64)

    def update(self, inputs, global_frame):
        """Read the new poses into ``inputs``; return (robot, warning) for refused ones."""
        warnings = []
        for i, msg, rx_ns in self.take_new():
            try:
                x, y, yaw, sigma, stamp = messages.localisation_from_pose(msg, global_frame)
            except ValueError as exc:
                self.rejected_by_robot[i] += 1
                warnings.append((i, f'{exc}; pose ignored'))
                continue
            inputs.set_localisation(i, x=x, y=y, yaw=yaw, sigma=sigma,
                                    time=stamp if stamp > 0.0 else rx_ns * NS_PER_S)
        return warnings
