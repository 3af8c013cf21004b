"""
Per-robot input stores: the callbacks keep the newest message, the tick reads numbers.

A callback only stores (a few assignments, whatever the message rate); the conversion to
numbers, and the rejection of bad messages, happen once per tick for the newest message of
each robot. Counters are public and read-only for tests and statistics.
"""

import numpy as np
from orca_nav.control import FleetInputs, ScanInput
from orca_nav.ros import messages

NS_PER_S = 1e-9


class MessageStore:
    """The newest message of each of N robots, how many arrived, and when the newest did."""

    def __init__(self, n, clock):
        """Empty store for N robots; ``clock`` gives the receive times (the node's clock)."""
        self._clock = clock
        self._msg = [None] * n
        self._count = [0] * n    # messages received
        self._rx_ns = [0] * n    # receive time of the newest [ns]
        self._used = [0] * n     # count when last taken

    def callback(self, i):
        """Return the subscription callback of robot i (stores the message, nothing else)."""
        msgs, counts, rx_ns, clock = self._msg, self._count, self._rx_ns, self._clock

        def store(msg):
            msgs[i] = msg
            counts[i] += 1
            rx_ns[i] = clock.now().nanoseconds
        return store

    def take_new(self):
        """Yield (robot, message, receive time [ns]) for robots with a message since last time."""
        for i, count in enumerate(self._count):
            if count != self._used[i]:
                self._used[i] = count
                yield i, self._msg[i], self._rx_ns[i]

    def count(self, i):
        """Messages received from robot i."""
        return self._count[i]

    @property
    def received(self):
        """Messages received, all robots."""
        return int(sum(self._count))


class OdometryStore(MessageStore):
    """
    Serialized nav_msgs/Odometry of every robot (raw subscriptions), read at tick time.

    ``update`` turns the newest message of each robot into ``inputs`` (a FleetInputs); a
    malformed or non-finite message, or one with a zero quaternion, is refused: it leaves the
    robot's previous values and marks it ``inputs.rejected`` (stopped until a valid one).
    Public counters: ``rejected`` (all robots), ``rejected_by_robot`` (N,).
    """

    def __init__(self, n, clock):
        """Empty store and empty FleetInputs for N robots."""
        super().__init__(n, clock)
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
        for i, buf, rx_ns in self.take_new():
            try:
                values = messages.odometry_from_cdr(buf)
            except Exception as exc:  # noqa: B902 -- one robot's message, whatever is wrong
                self.rejected_by_robot[i] += 1
                inputs.rejected[i] = True
                text = str(exc) if isinstance(exc, ValueError) else (
                    f'odometry message: unreadable ({exc!r})')
                warnings.append((i, f'{text}; stopped'))
                continue
            inputs.odom_xy[i] = values[0:2]
            inputs.odom_yaw[i] = values[2]
            inputs.twist[i] = values[3:6]
            inputs.has_pose[i] = True
            inputs.rejected[i] = False
            inputs.odom_time[i] = rx_ns * NS_PER_S
            self.max_delay_ns = max(self.max_delay_ns, rx_ns - values[6])
        return warnings

    def reset_delay(self):
        """Return the largest odometry delay [ns] since the last call and start again."""
        delay, self.max_delay_ns = self.max_delay_ns, 0
        return delay


class ScanStore(MessageStore):
    """sensor_msgs/LaserScan of the commanded robots; ``take`` gives the new ones as numbers."""

    def take(self):
        """List of ScanInput received since the last call (one per robot at most)."""
        return [ScanInput(robot=i, ranges=np.asarray(msg.ranges, dtype=float),
                          angle_min=msg.angle_min, angle_increment=msg.angle_increment,
                          range_min=msg.range_min, range_max=msg.range_max,
                          time=rx_ns * NS_PER_S)
                for i, msg, rx_ns in self.take_new()]
