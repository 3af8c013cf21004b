"""
The last phase of a tick: ORCA velocities turned into each drive's commands, within limits.

``Commands`` also gives the solver the acceleration limits of each row (``reach``), measured
from the commands it sent last: the drive decides what a robot can reach in one period.
"""

import numpy as np
from orca_nav.core.geometry import wrap_angle
from orca_nav.core.orca import drive

# [1/s] A holonomic robot with a footprint turns toward its way at this rate per radian of
# difference (within max_angular_speed): its narrow side leads, as through a door.
ALIGN_GAIN = 2.0
# [m/s] Slower than this it keeps its heading (no direction to align with).
ALIGN_MIN_SPEED = 0.05


class Commands:
    """Drive mappings, acceleration limits and the last line of defence on every command."""

    def __init__(self):
        """Start without a last command (the odometry twist is the first origin)."""
        self.last = None  # (C, 3) the commands of the last tick: accelerations' origin

    def reach(self, cfg, twist: np.ndarray, yaw: np.ndarray, lookahead: np.ndarray):
        """
        Return the core's acceleration arguments for the N rows and their origin commands.

        Returns max_accel, max_decel (N,) [m/s^2] (0 = unlimited), accel_from (N, 2) [m/s]
        global, previous (C, 3). The limits are measured from the last commands sent
        (``previous``: what each robot was told, not its noisy odometry; the odometry twist
        before the first tick). A differential robot's ORCA agent is its look-ahead point P,
        whose velocity changes by dv forward and D dw sideways: P gets the tighter of
        max_accel (max_decel) and D x max_angular_accel, so that what ORCA picks keeps
        |dv| and |dw| within the limits (the drive mapping clips what rounding or the speed
        scaling leaves).
        """
        c = cfg.n_controlled
        accel, decel, angular = cfg.accel_limits
        previous = twist[:c].copy() if self.last is None else self.last
        body = twist.copy()
        body[:c] = previous
        diff = cfg.differential
        accel_from = np.where(
            diff[:, None],
            drive.lookahead_velocities(body[:, 0], body[:, 2], yaw, lookahead),
            drive.body_to_world(body[:, :2], yaw))
        sideways = np.where(angular > 0.0, lookahead * angular, 0.0)
        max_accel = np.where(diff, _tighter(accel, sideways), accel)
        max_decel = np.where(diff, _tighter(decel, sideways), decel)
        return max_accel, max_decel, accel_from, previous

    def command(self, cfg, velocities, yaw, active, warnings, previous=None,
                lookahead=None, ways=None) -> np.ndarray:
        """
        Global ORCA velocities (C, 2) -> body-frame commands (C, 3) of active robots.

        previous : (C, 3) the last commands (the acceleration limits' origin) or None;
        lookahead : (N,) this tick's points ahead (``Observation.lookahead``; None: the
        config's); ways : (C, 2) the preferred velocities (a holonomic robot with a footprint
        turns its long axis to its way, ``align_rate``; None: to its velocity). Computed for
        all robots at once; if that raises, robot by robot, and a
        robot whose own mapping fails gets a zero command (and a warning), the others theirs.
        The result becomes the next tick's origin (``last``).
        """
        self.last = self._command(cfg, velocities, yaw, active, warnings, previous, lookahead,
                                  velocities if ways is None else ways)
        return self.last.copy()

    def _command(self, cfg, velocities, yaw, active, warnings, previous, lookahead, ways):
        try:
            return self._map(cfg, velocities, yaw, active, previous, lookahead, ways)
        except Exception:  # noqa: B902 -- isolate the robot it fails for, below
            pass
        cmd = np.zeros((cfg.n_controlled, 3))
        for i in np.flatnonzero(active):
            alone = np.zeros_like(active)
            alone[i] = True
            try:
                cmd[i] = self._map(cfg, velocities, yaw, alone, previous, lookahead, ways)[i]
            except Exception as exc:  # noqa: B902 -- only this robot stops
                warnings.append((int(i), f'command: drive mapping failed ({exc!r}); stopped'))
        return cmd

    def _map(self, cfg, velocities, yaw, active, previous=None, lookahead=None, ways=None):
        """
        Map the velocities of the active robots to their drives' commands, then limit.

        Differential robots' (v, w) changes are clipped to the acceleration limits from
        ``previous`` (C, 3); holonomic robots' velocities are reachable already (the core).
        """
        lookahead = cfg.lookahead if lookahead is None else lookahead
        c = cfg.n_controlled
        cmd = np.zeros((c, 3))
        diff = cfg.differential[:c]
        hol = active & ~diff
        dif = active & diff
        if hol.any():
            cmd[hol, :2] = drive.holonomic_command(velocities[hol], yaw[hol],
                                                   cfg.max_speed[:c][hol])
            ways = velocities if ways is None else ways
            cmd[:, 2] = np.where(hol & aligning(cfg)[:c], align_rate(ways, yaw), 0.0)
        if dif.any():
            accel, decel, angular = (limit[:c][dif] for limit in cfg.accel_limits)
            lin, ang = drive.differential_command(
                velocities[dif], yaw[dif], lookahead[:c][dif], cfg.max_speed[:c][dif],
                cfg.max_angular_speed[:c][dif],
                None if previous is None else (previous[dif, 0], previous[dif, 2]),
                accel, decel, angular, cfg.period)
            cmd[dif, 0] = lin
            cmd[dif, 2] = ang
        return limit(cfg, cmd)


def limit(cfg, cmd: np.ndarray) -> np.ndarray:
    """Last line of defence: finite, and within each robot's limits whatever happened."""
    c = cfg.n_controlled
    cmd = np.where(np.isfinite(cmd), cmd, 0.0)
    cmd[:, :2] = drive.clamp_speed(cmd[:, :2], cfg.max_speed[:c])
    cmd[cfg.differential[:c], 1] = 0.0
    cmd[~cfg.differential[:c] & ~aligning(cfg)[:c], 2] = 0.0
    cmd[:, 2] = np.clip(cmd[:, 2], -cfg.max_angular_speed[:c], cfg.max_angular_speed[:c])
    return cmd


def aligning(cfg) -> np.ndarray:
    """(N,) bool: the holonomic robots that turn with their way (those with a footprint)."""
    return ~cfg.differential & np.array([p is not None for p in cfg.footprint], bool)


def through_doors(ways: np.ndarray, narrow_way: np.ndarray) -> np.ndarray:
    """
    Return the ways (C, 2) to align with: the route's way through a door ahead, where known.

    ways : (C, 2) the preferred velocities; narrow_way : (C, 2) unit directions of each
    route at a door ahead (``Following.narrow_way``; NaN: none). A holonomic cart that
    approached a door at a slant would meet its jambs with a corner and could not turn there;
    so it turns along the door on the way to it, at its way's speed.
    """
    door = np.isfinite(narrow_way).all(axis=1)
    speed = np.hypot(ways[:, 0], ways[:, 1])
    return np.where(door[:, None], np.nan_to_num(narrow_way) * speed[:, None], ways)


def align_rate(velocities: np.ndarray, yaw: np.ndarray) -> np.ndarray:
    """
    Return yaw rates [rad/s] that turn each robot's long axis to its way (either end).

    A rectangle is as narrow driving backward as forward, so the nearer of the two
    headings is taken; the rate is ALIGN_GAIN x the difference (0 below ALIGN_MIN_SPEED).
    """
    speed = np.hypot(velocities[:, 0], velocities[:, 1])
    error = wrap_angle(np.arctan2(velocities[:, 1], velocities[:, 0]) - yaw)
    error = np.where(np.abs(error) > 0.5 * np.pi, wrap_angle(error + np.pi), error)
    return np.where(speed > ALIGN_MIN_SPEED, ALIGN_GAIN * error, 0.0)


def _tighter(a, b):
    """Elementwise the smaller of two limits where 0 means unlimited."""
    return np.where(a > 0.0, np.where(b > 0.0, np.minimum(a, b), a), b)


__all__ = ['Commands', 'limit']
