"""
Localisation poses (e.g. AMCL's amcl_pose) as corrections of each robot's odometry frame.

A robot's global pose is its odometry pose composed with a correction: the pose of its
odometry frame in the global frame (global <- odom). Without localisation the correction is
the robot's ``odom_offset``. When a localisation pose L arrives, stamped t, the correction
becomes ``L o inverse(O(t))``, with O(t) the robot's odometry pose at t (from a short history
of its odometry, kept at the odometry messages' stamps): the global pose at the odometry's
time is then the localisation pose moved on by the odometry's motion since t. The correction
is kept until the next localisation pose, so odometry drift only accumulates between two
poses.

A localisation pose older than ``pose_timeout`` when it arrives is not used; when a robot's
newest used pose grows older than ``pose_timeout``, it goes on with odometry and the last
correction (one warning per such episode). The pose covariance inflates the robot's radius:
``min(covariance_scale * sigma, max_inflation)`` with sigma the larger of the x and y position
standard deviations, as the others see it (ORCA) and for its own avoidance; it is kept with
the last used pose.
"""

import numpy as np
from orca_nav.core.orca.drive import body_to_world

from .pose_history import PoseHistory

# Odometry samples kept per robot (one per tick that brings a new one): at 10 Hz, 6.4 s, more
# than a localisation pose is late.
HISTORY_DEPTH = 64


def correction(loc_pose: np.ndarray, odom_pose: np.ndarray) -> np.ndarray:
    """
    Return (N, 3) global <- odom frames: each localisation pose after inverse(odometry pose).

    loc_pose, odom_pose : (N, 3) x, y, yaw, the same robot at the same time.

    >>> correction(np.array([[1.0, 2.0, 0.0]]), np.array([[1.0, 0.0, 0.0]])).round(6).tolist()
    [[0.0, 2.0, 0.0]]
    """
    turn = loc_pose[:, 2] - odom_pose[:, 2]
    c, s = np.cos(turn), np.sin(turn)
    x = loc_pose[:, 0] - (c * odom_pose[:, 0] - s * odom_pose[:, 1])
    y = loc_pose[:, 1] - (s * odom_pose[:, 0] + c * odom_pose[:, 1])
    return np.column_stack([x, y, np.angle(np.exp(1j * turn))])


class Localisation:
    """Per robot: the odometry history, the correction in force and the radius inflation."""

    def __init__(self, n: int):
        """Start with no localisation for ``n`` robots (their odom_offset is the correction)."""
        self.history = PoseHistory(n, HISTORY_DEPTH)  # odometry-frame poses
        self.correction = np.zeros((n, 3))  # global <- odom, where ``localised``
        self.localised = np.zeros(n, bool)  # a localisation pose has set the correction
        self.sigma = np.zeros(n)            # [m] position standard deviation of that pose
        self.pose_time = np.full(n, -np.inf)  # [s] stamp of the last used pose
        self._seen = np.full(n, np.nan)     # stamp of the last pose looked at
        self._stale = np.zeros(n, bool)     # warned that the pose went stale
        self.refused_late = np.zeros(n, np.int64)  # poses older than pose_timeout on arrival

    def stale(self, i: int) -> bool:
        """Tell whether robot i's pose went out of date, which was warned about once."""
        return bool(self._stale[i])

    def update(self, inputs, config, now: float, warnings: list) -> np.ndarray:
        """
        Take the new localisation poses of ``inputs``; return (N, 3) global <- odom frames.

        Robots without a used localisation pose get their ``odom_offset``. Warnings
        (robot row, 'localisation: ...') go to ``warnings``. Only robots with a pose source
        (``config.pose_source``) cost anything.
        """
        source = config.pose_source
        if source is not None and not source.any():
            return config.odom_offset
        odom_ok = inputs.has_pose & ~inputs.rejected & np.isfinite(inputs.odom_xy).all(axis=1) \
            & np.isfinite(inputs.odom_yaw)
        odom = np.column_stack([inputs.odom_xy, inputs.odom_yaw])
        velocity = np.column_stack([body_to_world(inputs.twist[:, :2], inputs.odom_yaw),
                                    inputs.twist[:, 2]])
        # Odometry is kept at its header stamp, the clock of the localisation poses' stamps.
        times = np.where(np.isfinite(inputs.odom_stamp), inputs.odom_stamp, inputs.odom_time)
        if source is not None:
            odom_ok &= source
        self.history.record(odom_ok, odom, times, np.nan_to_num(velocity))
        stamp = inputs.loc_time
        new = np.isfinite(stamp) & (stamp != self._seen) & np.isfinite(self.history.time[:, -1])
        for i in np.flatnonzero(new):
            self._seen[i] = stamp[i]
            if now - stamp[i] > config.pose_timeout:
                self.refused_late[i] += 1
                warnings.append((int(i), f'localisation: pose stamped {now - stamp[i]:.3g} s '
                                         f'ago, older than pose_timeout '
                                         f'({config.pose_timeout:g} s): not used'))
                continue
            odom_then = self.history.at(stamp[i])[i]
            self.correction[i] = correction(inputs.loc_pose[i:i + 1], odom_then[None])[0]
            self.localised[i] = True
            self.pose_time[i] = stamp[i]
            self.sigma[i] = inputs.loc_sigma[i]
            self._stale[i] = False
        stale = self.localised & (now - self.pose_time > config.pose_timeout)
        for i in np.flatnonzero(stale & ~self._stale):
            warnings.append((int(i), f'localisation: no pose for {now - self.pose_time[i]:.3g} '
                                     f's (pose_timeout {config.pose_timeout:g} s): going on '
                                     'with odometry and the last correction'))
        self._stale = stale
        return np.where(self.localised[:, None], self.correction, config.odom_offset)

    def inflation(self, config) -> np.ndarray:
        """Return (N,) [m]: min(covariance_scale x sigma, max_inflation), 0 unlocalised."""
        grow = np.minimum(config.covariance_scale * self.sigma, config.max_inflation)
        return np.where(self.localised, grow, 0.0)
