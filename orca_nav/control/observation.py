"""
The first phase of a tick: the inputs turned into what every robot is now, and its ORCA disc.

``Observer.observe`` judges each robot's odometry (refusing poses and twists that cannot be
true), moves each fresh robot on to the moment this tick's command takes effect (latency
compensation) and places its ORCA disc: the centre for a holonomic robot, the point ahead of
the axle for a differential one. It also keeps what that needs between ticks: the last good
poses, where each robot was (for scans), the localisation corrections and the commands sent.
"""

from dataclasses import dataclass

import numpy as np
from orca_nav.core.geometry import compose_poses
from orca_nav.core.orca import drive

from .localisation import Localisation
from .pose_history import extrapolate, MAX_EXTRAPOLATION, PoseHistory

# Odometry whose twist is faster than PLAUSIBLE_SPEED_FACTOR x the robot's limit plus
# PLAUSIBLE_SPEED_SLACK is no measurement (a unit mistake, a glitch, a corrupt message): the
# message is refused. Generous on purpose: a robot pushed or sliding must not be refused.
PLAUSIBLE_SPEED_FACTOR = 10.0
PLAUSIBLE_SPEED_SLACK = 1.0  # [m/s] for the speed, [rad/s] for the yaw rate


@dataclass
class Observation:
    """What one tick knows of every robot (N rows), global frame."""

    pos: np.ndarray        # (N, 2) [m] the last valid pose's position
    yaw: np.ndarray        # (N,) [rad]
    twist: np.ndarray      # (N, 3) body frame twist, zero where the odometry is not valid
    valid: np.ndarray      # (N,) bool: the newest odometry passed the checks
    known: np.ndarray      # (N,) bool: a valid pose has been received once
    fresh: np.ndarray      # (N,) bool: valid and younger than odom_timeout
    present: np.ndarray    # (N,) bool: still avoided (odom_timeout + stale_keepout_time)
    active: np.ndarray     # (N,) bool: fresh commanded robots (the others are neighbours)
    ahead_yaw: np.ndarray  # (N,) [rad] the yaw when this tick's command takes effect
    orca_pos: np.ndarray   # (N, 2) [m] the ORCA discs' centres then
    orca_vel: np.ndarray   # (N, 2) [m/s] their velocities (stale robots: zero)
    contact_radius: np.ndarray  # (N,) [m] true disc (+ lookahead, + localisation inflation)
    orca_radius: np.ndarray     # (N,) [m] contact_radius + safety_margin
    lookahead: np.ndarray       # (N,) [m] this tick's point ahead (0: holonomic)


class Observer:
    """Judges odometry, remembers the good poses and places every robot's ORCA disc."""

    def __init__(self, n: int):
        """Start knowing nothing of the N robots."""
        self.good_pose = np.zeros((n, 3))        # last global pose that passed the checks
        self.good_time = np.full(n, -np.inf)     # its odometry time [s]
        self.bad_time = np.full(n, np.nan)       # odometry time of the last refused pose
        self.pose_history = PoseHistory(n)       # where each robot was (scans' poses)
        self.pose_history.at(np.zeros(1))  # compile its kernel now, not in the first tick
        self.localisation = Localisation(n)      # corrections from localisation poses
        self.sent = []  # (time it takes effect [s], (C, 3) command) of the last ticks
        self.odom_rejected = np.zeros(n, np.int64)  # odometry refused here, per robot

    def observe(self, inputs, cfg, now: float, warnings: list, lookahead=None) -> Observation:
        """
        Every robot at ``now`` [s] (the clock of ``inputs.odom_time``) for this tick.

        Robots whose odometry is older than odom_timeout are not fresh (not commanded); they
        stay ``present`` (avoided, standing) for stale_keepout_time more.
        """
        c = cfg.n_controlled
        offset = self.localisation.update(inputs, cfg, now, warnings)
        valid = self.check_odometry(inputs, cfg, warnings, offset)
        pos, yaw = self.good_pose[:, :2].copy(), self.good_pose[:, 2].copy()
        twist = np.where(valid[:, None], inputs.twist, 0.0)
        known = np.isfinite(self.good_time)
        age = now - self.good_time
        fresh = valid & (age <= cfg.odom_timeout)
        present = known & (age <= cfg.odom_timeout + cfg.stale_keepout_time)
        active = fresh.copy()
        active[c:] = False

        self.pose_history.record(valid, self.good_pose, self.good_time, np.column_stack(
            [drive.body_to_world(twist[:, :2], yaw), twist[:, 2]]))
        # Latency: ORCA plans from where each fresh robot will be when this tick's command
        # takes effect (now + command_delay), its odometry moved on from its stamp with its
        # twist and then with the commands it was sent since (each acting command_delay on).
        ahead_pos, ahead_yaw = pos, yaw
        if cfg.latency_compensation:
            ahead = extrapolate(self.good_pose, twist, np.where(fresh, self.good_time, np.inf),
                                now + cfg.command_delay, self.sent)
            ahead_pos, ahead_yaw = ahead[:, :2], ahead[:, 2]

        # Every robot as an ORCA disc: the centre for holonomic robots, the point ahead of the
        # axle (radius + margin + lookahead) for differential ones. Stale robots stand still.
        diff = cfg.differential
        centre_vel = drive.body_to_world(twist[:, :2], ahead_yaw)
        if lookahead is None:
            lookahead = cfg.lookahead
        point_vel = drive.lookahead_velocities(twist[:, 0], twist[:, 2], ahead_yaw, lookahead)
        orca_pos = np.where(diff[:, None],
                            drive.lookahead_points(ahead_pos, ahead_yaw, lookahead),
                            ahead_pos)
        orca_vel = np.where(diff[:, None], point_vel, centre_vel)
        orca_vel[~fresh] = 0.0
        # Localised robots grow by their pose uncertainty (covariance_scale, max_inflation).
        contact_radius = cfg.radius + lookahead + self.localisation.inflation(cfg)
        return Observation(pos, yaw, twist, valid, known, fresh, present, active, ahead_yaw,
                           orca_pos, orca_vel, contact_radius, contact_radius + cfg.safety_margin,
                           lookahead)

    def check_odometry(self, inputs, cfg, warnings: list, offset=None) -> np.ndarray:
        """
        Judge every robot's odometry in the global frame; remember the poses that pass.

        Returns valid (N,) bool: odometry received, its newest message not refused, the pose
        after odom_offset finite and within max_coordinate, the twist plausible. A refused
        message is counted (``odom_rejected``) and warned about once, not at every tick.
        offset : (N, 3) global <- odom frames (default: odom_offset).
        """
        offset = cfg.odom_offset if offset is None else offset
        with np.errstate(over='ignore', invalid='ignore'):
            pos, yaw = compose_poses(offset, inputs.odom_xy, inputs.odom_yaw)
            pose_ok = (np.abs(pos) <= cfg.max_coordinate).all(axis=1) & np.isfinite(yaw)
            speed = np.hypot(inputs.twist[:, 0], inputs.twist[:, 1])
            speed_limit = PLAUSIBLE_SPEED_FACTOR * cfg.max_speed + PLAUSIBLE_SPEED_SLACK
            turn_limit = (PLAUSIBLE_SPEED_FACTOR * cfg.max_angular_speed
                          + PLAUSIBLE_SPEED_SLACK)
            twist_ok = (speed <= speed_limit) & (np.abs(inputs.twist[:, 2]) <= turn_limit)
        received = inputs.has_pose & ~inputs.rejected
        valid = received & pose_ok & twist_ok
        bad = received & ~valid
        for i in np.flatnonzero(bad & (inputs.odom_time != self.bad_time)):
            self.bad_time[i] = inputs.odom_time[i]
            self.odom_rejected[i] += 1
            if not pose_ok[i]:
                x, y = pos[i]
                warnings.append((int(i), f'odometry pose: ({x:.6g}, {y:.6g}) after odom_offset '
                                         f'is not finite or beyond max_coordinate '
                                         f'({cfg.max_coordinate:g} m); stopped'))
            else:
                v, w = speed[i], inputs.twist[i, 2]
                warnings.append((int(i), f'odometry twist: speed {v:.6g} m/s or yaw rate '
                                         f'{w:.6g} rad/s is beyond the plausible '
                                         f'{speed_limit[i]:g} m/s, {turn_limit[i]:g} rad/s; '
                                         'stopped'))
        self.good_pose[valid, :2] = pos[valid]
        self.good_pose[valid, 2] = yaw[valid]
        self.good_time[valid] = inputs.odom_time[valid]
        return valid

    def commanded(self, now: float, command: np.ndarray, delay: float) -> None:
        """Remember the commands (C, 3) of the tick at ``now``: they act from now + delay."""
        self.sent = [(t, sent) for t, sent in self.sent if t > now - MAX_EXTRAPOLATION]
        self.sent.append((now + delay, command.copy()))


__all__ = ['Observation', 'Observer', 'PLAUSIBLE_SPEED_FACTOR', 'PLAUSIBLE_SPEED_SLACK']
