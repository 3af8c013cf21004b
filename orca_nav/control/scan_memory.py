"""Laser scans -> obstacle segments in the global frame, remembered for a short time."""

from dataclasses import dataclass

import numpy as np
from orca_nav.core.geometry import compose_pose
from orca_nav.core.scan import scan_to_segments


@dataclass(frozen=True)
class ScanInput:
    """One laser scan of a commanded robot, as numbers (sensor_msgs/LaserScan's fields)."""

    robot: int                # row of the robot in the fleet
    ranges: np.ndarray        # (B,) [m]
    angle_min: float          # [rad]
    angle_increment: float    # [rad]
    range_min: float          # [m]
    range_max: float          # [m]
    time: float               # [s] when it was received (node clock)


class ScanMemory:
    """
    The newest scan segments of each commanded robot, with the time they were seen.

    ``update`` turns new scans into segments (returns from the other known robots dropped:
    they are ORCA agents already); ``segments`` hands the segments younger than a timeout to
    the core, each avoided by the robot that saw it or, shared, by every robot.
    """

    def __init__(self, n_controlled: int):
        """Start with no segments for ``n_controlled`` robots."""
        self._segments = [np.zeros((0, 2, 2))] * n_controlled
        self._time = np.full(n_controlled, -np.inf)
        self.rejected = 0  # scans refused as malformed

    def update(self, scans, pos, yaw, fresh, present, radius, sensor_offset):
        """
        Turn new scans into segments; return warnings for the scans that were refused.

        scans : iterable of ScanInput; pos (N, 2), yaw (N,) global poses; fresh, present (N,)
        bool; radius (N,) [m]; sensor_offset (3,) laser pose in the body frame.
        Scans of robots without fresh odometry are skipped (their pose is not known).
        """
        warnings = []
        for scan in scans:
            i = scan.robot
            if not fresh[i]:
                continue
            # The scanning robot itself is not in the list: its body is below the laser's
            # range_min, and dropping returns within radius + margin of itself would hide the
            # obstacles closest to it, the dangerous ones.
            others = present.copy()
            others[i] = False
            try:
                sensor = compose_pose((pos[i, 0], pos[i, 1], yaw[i]), sensor_offset)
                self._segments[i] = scan_to_segments(
                    scan.ranges, scan.angle_min, scan.angle_increment, scan.range_min,
                    scan.range_max, sensor, pos[others], radius[others])
                self._time[i] = scan.time
            except Exception as exc:  # noqa: B902 -- one robot's bad scan stops no one else
                self.rejected += 1
                warnings.append((i, f'scan rejected: {exc}'))
        return warnings

    def segments(self, now, agent_index, timeout, shared):
        """
        Return the remembered scan walls and their owners, for the core: (M, 2, 2), (M,).

        agent_index : (C,) row of each commanded robot among the agents handed to the core,
        -1 where the robot is not one of them; timeout [s]; shared: every agent avoids every
        segment (owner -1), else only the robot that saw it (owner = its agent row).
        """
        segments, owners = [np.zeros((0, 2, 2))], [np.zeros(0, np.int64)]
        for i, seg in enumerate(self._segments):
            if len(seg) and agent_index[i] >= 0 and now - self._time[i] <= timeout:
                segments.append(seg)
                owners.append(np.full(len(seg), -1 if shared else agent_index[i]))
        return np.concatenate(segments), np.concatenate(owners)
