"""A short history of every robot's odometry, to know where it was at another moment."""

import math

import numpy as np
from orca_nav.core._jit import njit

# Samples kept per robot: at 20-50 Hz odometry this covers 0.3-0.8 s, more than a scan's or
# an odometry message's age, at a cost of N x DEPTH x 6 floats.
DEPTH = 16
# At most this far [s] past the newest sample a pose is extrapolated with its twist; beyond,
# the twist is too old to say where the robot went, and the pose stays where that leaves it.
MAX_EXTRAPOLATION = 0.5


class PoseHistory:
    """
    The newest DEPTH poses and global velocities of N robots, with their odometry times.

    ``record`` adds the samples that are newer than a robot's newest; ``at(t)`` gives every
    robot's pose at time t: interpolated between the samples around t, extrapolated with the
    newest twist after the newest sample (at most MAX_EXTRAPOLATION), the oldest before it.

    >>> h = PoseHistory(1)
    >>> h.record(np.array([True]), np.array([[0.0, 0.0, 0.0]]), np.array([0.0]),
    ...          np.array([[1.0, 0.0, 0.0]]))
    >>> h.record(np.array([True]), np.array([[1.0, 0.0, 0.0]]), np.array([1.0]),
    ...          np.array([[1.0, 0.0, 0.0]]))
    >>> h.at(0.25)[0].tolist(), h.at(1.5)[0].tolist()
    ([0.25, 0.0, 0.0], [1.5, 0.0, 0.0])
    """

    def __init__(self, n: int, depth: int = DEPTH):
        """Start empty for ``n`` robots, ``depth`` samples each."""
        self.time = np.full((n, depth), -np.inf)  # ascending per row; -inf: no sample
        self.pose = np.zeros((n, depth, 3))       # x [m], y [m], yaw [rad], global frame
        self.velocity = np.zeros((n, depth, 3))   # vx, vy [m/s] global, yaw rate [rad/s]

    def record(self, valid, pose, time, velocity) -> None:
        """
        Add each valid robot's sample unless it is not newer than its newest one.

        valid (N,) bool; pose (N, 3) global; time (N,) [s]; velocity (N, 3) global vx, vy, wz.
        """
        rows = np.flatnonzero(valid & (time > self.time[:, -1]))
        if len(rows) == 0:
            return
        for array, value in ((self.time, time), (self.pose, pose), (self.velocity, velocity)):
            array[rows, :-1] = array[rows, 1:]
            array[rows, -1] = value[rows]

    def at(self, t) -> np.ndarray:
        """
        Return every robot's pose at time t [s] (zeros for robots without samples).

        t a number: (N, 3); t an array (T,) of times: (T, N, 3), one fleet pose per time.
        """
        times = np.asarray(t, dtype=float)
        out = _poses_at(self.time, self.pose, self.velocity, times.reshape(-1),
                        MAX_EXTRAPOLATION)
        n = self.time.shape[0]
        return out.reshape(times.shape + (n, 3))


@njit(cache=True)
def _poses_at(time, pose, velocity, ts, max_extrapolation):
    """(T, N, 3): every robot's pose at each time of ts (T,) (see PoseHistory.at)."""
    n, depth = time.shape
    out = np.zeros((ts.shape[0], n, 3))
    for j in range(ts.shape[0]):
        t = ts[j]
        for i in range(n):
            k = -1  # the last sample at or before t (rows ascend; -inf pads the front)
            while k + 1 < depth and time[i, k + 1] <= t:
                k += 1
            newest = time[i, depth - 1]
            if k == depth - 1:
                # After the newest sample: on with its twist, for a little while.
                dt = min(max(t - newest, 0.0), max_extrapolation)
                for c in range(3):
                    out[j, i, c] = pose[i, depth - 1, c] + dt * velocity[i, depth - 1, c]
            elif k >= 0 and math.isfinite(time[i, k]):
                # Between two samples: linear in position, along the shorter turn in yaw.
                t0, t1 = time[i, k], time[i, k + 1]
                w = (t - t0) / (t1 - t0 if t1 > t0 else 1.0)
                for c in range(2):
                    out[j, i, c] = pose[i, k, c] + w * (pose[i, k + 1, c] - pose[i, k, c])
                turn = pose[i, k + 1, 2] - pose[i, k, 2]
                out[j, i, 2] = pose[i, k, 2] + w * math.atan2(math.sin(turn), math.cos(turn))
            elif math.isfinite(newest):
                # Before the oldest sample: the oldest.
                first = 0
                while not math.isfinite(time[i, first]):
                    first += 1
                for c in range(3):
                    out[j, i, c] = pose[i, first, c]
    return out


def _move(pose, twist, dt):
    """Move poses (N, 3) on with body twists (N, 3) for dt (N,) [s] (midpoint rule)."""
    heading = pose[:, 2] + 0.5 * twist[:, 2] * dt
    cos, sin = np.cos(heading), np.sin(heading)
    out = pose.copy()
    out[:, 0] += (cos * twist[:, 0] - sin * twist[:, 1]) * dt
    out[:, 1] += (sin * twist[:, 0] + cos * twist[:, 1]) * dt
    out[:, 2] += twist[:, 2] * dt
    return out


def extrapolate(pose: np.ndarray, twist: np.ndarray, start: np.ndarray, end: float,
                commands=()) -> np.ndarray:
    """
    Return (N, 3) poses moved on from their odometry times ``start`` (N,) to ``end`` [s].

    pose (N, 3) global x, y, yaw; twist (N, 3) body v_forward, v_left [m/s], yaw rate [rad/s]
    measured at ``start``. commands: (time it takes effect [s], (C, 3) body command) in time
    order, C <= N (rows C.. keep their twist): a command that takes effect after a robot's
    ``start`` replaces its twist from then on (what the robot was told since its odometry,
    a Smith predictor); earlier ones are in the measured twist already. At most
    MAX_EXTRAPOLATION is bridged; a robot whose start is not before ``end`` stays put. The
    velocity is turned by half the turn of each piece (midpoint rule: exact for straight
    motion, within a few mm on 0.1-0.3 s arcs).

    >>> extrapolate(np.array([[0.0, 0.0, 0.0]]), np.array([[0.5, 0.0, 0.0]]),
    ...             np.array([0.0]), 0.2).tolist()
    [[0.1, 0.0, 0.0]]
    """
    start = np.nan_to_num(np.asarray(start, float), nan=end, neginf=end)
    now = np.clip(start, end - MAX_EXTRAPOLATION, end)
    out, current = pose.copy(), twist.copy()
    for effective, command in commands:
        rows = np.arange(len(command))
        switch = (effective > now[rows]) & (effective < end)
        if not switch.any():
            continue
        until = np.where(switch, effective, now[rows])
        out[rows] = _move(out[rows], current[rows], until - now[rows])
        now[rows] = until
        current[rows[switch]] = command[switch]
    return _move(out, current, end - now)
