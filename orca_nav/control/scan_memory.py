"""Laser scans -> obstacle segments in the global frame, remembered for a short time."""

from dataclasses import dataclass
import math

import numpy as np
from orca_nav.core.geometry import compose_pose
from orca_nav.core.perception.scan import (nearest_segments, recheck_segments, scan_to_points,
                                           scan_to_segments)

# A remembered segment is checked against each new scan at points this far apart [m] (at most
# MAX_SAMPLES per segment): a beam that returns at such a point (within SEEN_TOLERANCE) sees
# it again; one that reads farther passes through where it was.
SAMPLE_SPACING = 0.05
MAX_SAMPLES = 40
SEEN_TOLERANCE = 0.1  # [m] range noise, plus the beam not quite through the point
# A remembered segment whose every point lies this close [m] to a new segment is that segment
# seen again: the new one replaces it (the memory merges repeated views of a wall).
COVER_TOLERANCE = 0.05
# Returns this close [m] to a map wall are that wall (map and scan agree within localisation
# error): with the map's walls in the obstacles, they make no scan segment.
MAP_WALL_TOLERANCE = 0.15
# Segments remembered per robot at most; beyond, those seen longest ago are forgotten.
MAX_REMEMBERED = 128
# [s] A remembered segment that no beam has returned on for this long is forgotten even while
# the scans cannot see through its place (behind a wall or a parked robot): a phantom that
# nothing can see through (placed behind a wall by a late pose, say) would otherwise be kept
# for ever. A real wall is seen again as soon as it is in view.
MAX_HIDDEN_TIME = 5.0


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
    The scan segments each commanded robot has seen recently, with the time they were seen.

    ``update`` turns new scans into segments (returns from the other known robots dropped:
    they are ORCA agents already), each placed with the robot's pose at the scan's time, and
    merges them into the robot's memory: a remembered segment that a new one covers is
    replaced; one that the new scan sees again (at least as many beams return on it as pass
    through it), or cannot see (occluded by something nearer, out of range or field of view),
    counts as seen now; one the beams mostly pass through is not, and is forgotten once not
    seen for ``obstacle_timeout``; the ends of one that beams pass through are cut back to
    where they stop doing so (``recheck_segments``: an overhang past a wall's end that the
    robot looks past). So a wall stays known while a passing robot hides part of
    it or the robot looks at it edge-on, and a moved obstacle is forgotten as soon as the
    laser sees through its place. A segment no beam has returned on for MAX_HIDDEN_TIME is
    forgotten whatever hides it.
    ``segments`` hands the segments seen within a timeout to the core, each avoided by the
    robot that saw it or, shared, by every robot.
    """

    def __init__(self, n_controlled: int):
        """Start with no segments for ``n_controlled`` robots."""
        self._segments = [np.zeros((0, 2, 2))] * n_controlled
        self._seen = [np.zeros(0)] * n_controlled  # (M,) [s] per robot
        self._sighted = [np.zeros(0)] * n_controlled  # (M,) [s] a beam last returned on it
        self._since = [np.zeros(0)] * n_controlled  # (M,) [s] first seen (views merged)
        self.rejected = 0  # scans refused as malformed

    def update(self, scans, pos, yaw, fresh, present, radius, sensor_offset, poses=None,
               grid=None, moving=None):
        """
        Turn new scans into segments; return warnings for the scans that were refused.

        scans : iterable of ScanInput; pos (N, 2), yaw (N,) global poses; fresh, present (N,)
        bool; radius (N,) [m]; sensor_offset (3,) laser pose in the body frame.
        Scans of robots without fresh odometry are skipped (their pose is not known).
        poses : (S, N, 3) or None: every robot's pose at the time of each of the S fresh
        robots' scans (in the order of ``scans``; ``PoseHistory.at`` of the scans' times); given,
        these are used instead of pos, yaw: a robot moving at 0.5 m/s is 5 cm from where it
        scanned 0.1 s later.
        grid : GridMap or None; given (its walls are ORCA obstacles already), returns within
        MAP_WALL_TOLERANCE of its walls make no segments: the map's walls are not added a
        second time, only what the map does not show.
        moving : (MovingObjects, their time [s]) or None: returns on these moving tracks
        (where they were at each scan's time) are agents, not segments.
        """
        warnings = []
        scans = [scan for scan in scans if fresh[scan.robot]]
        for k, scan in enumerate(scans):
            i = scan.robot
            # The scanning robot itself is not in the list: its body is below the laser's
            # range_min, and dropping returns within radius + margin of itself would hide the
            # obstacles closest to it, the dangerous ones.
            others = present.copy()
            others[i] = False
            try:
                if poses is not None:
                    pos, yaw = poses[k, :, :2], poses[k, :, 2]
                sensor = compose_pose((pos[i, 0], pos[i, 1], yaw[i]), sensor_offset)
                ranges = scan.ranges
                if grid is not None:
                    ranges = _off_map_walls(grid, scan, sensor)
                discs, disc_radius = pos[others], radius[others]
                if moving is not None and len(moving[0]):
                    tracks, t_ref = moving
                    discs = np.concatenate([discs, tracks.at(t_ref, scan.time)])
                    disc_radius = np.concatenate([disc_radius, tracks.radius])
                new = scan_to_segments(
                    ranges, scan.angle_min, scan.angle_increment, scan.range_min,
                    scan.range_max, sensor, discs, disc_radius, extend_ends=True)
                self._merge(i, new, scan, sensor)
                if grid is not None:
                    self._drop_map_walls(i, grid)
            except Exception as exc:  # noqa: B902 -- one robot's bad scan stops no one else
                self.rejected += 1
                warnings.append((i, f'scan rejected: {exc}'))
        return warnings

    def _merge(self, i, new, scan, sensor):
        """Merge robot i's new segments (K, 2, 2) into its memory (see the class)."""
        old, seen, sighted, since = (self._segments[i], self._seen[i], self._sighted[i],
                                     self._since[i])
        first = np.full(len(new), float(scan.time))
        if len(old):
            covered, refresh, shown, ends = recheck_segments(
                old, new, scan.ranges, scan.angle_min, scan.angle_increment, scan.range_min,
                scan.range_max, sensor, SAMPLE_SPACING, MAX_SAMPLES, COVER_TOLERANCE,
                SEEN_TOLERANCE)
            seen = np.where(refresh, scan.time, seen)
            sighted = np.where(shown, scan.time, sighted)
            if covered.any() and len(new):
                # A view of a remembered segment again: the new one has stood there as long.
                middle = old[covered].mean(axis=1)
                _, nearest = nearest_segments(middle[:, 0].copy(), middle[:, 1].copy(),
                                              np.ascontiguousarray(new, float))
                np.minimum.at(first, nearest, since[covered])
            # The ends the beams pass through are cut off (an overhang past a wall's end).
            start, step = old[:, 0], old[:, 1] - old[:, 0]
            old = np.stack([start + ends[:, :1] * step, start + ends[:, 1:] * step], axis=1)
            keep = ~covered & (scan.time - sighted <= MAX_HIDDEN_TIME)
            old, seen, sighted, since = old[keep], seen[keep], sighted[keep], since[keep]
        now = np.full(len(new), float(scan.time))
        rows = (np.concatenate([new, old]), np.concatenate([now, seen]),
                np.concatenate([now, sighted]), np.concatenate([first, since]))
        if len(rows[0]) > MAX_REMEMBERED:
            newest = np.argsort(-rows[1], kind='stable')[:MAX_REMEMBERED]
            rows = tuple(r[newest] for r in rows)
        self._segments[i], self._seen[i], self._sighted[i], self._since[i] = rows

    def _keep(self, i, mask):
        """Keep robot i's segments where mask (M,) bool is set."""
        self._segments[i], self._seen[i] = self._segments[i][mask], self._seen[i][mask]
        self._sighted[i], self._since[i] = self._sighted[i][mask], self._since[i][mask]

    def walls(self, now, length, age, recent=math.inf, robot=None):
        """
        Return the segments the robots remember that look like walls: (M, 2, 2).

        Longer than length [m] (wider than any person), there, seen again and again, for age
        [s] at least by ``now`` (a wall, not people who walk side by side), and seen within
        ``recent`` [s]; robot : that robot's memory only, or None for every robot's.
        """
        if robot is None:
            seg = np.concatenate([np.zeros((0, 2, 2))] + self._segments)
            since = np.concatenate([np.zeros(0)] + self._since)
            seen = np.concatenate([np.zeros(0)] + self._seen)
        else:
            seg, since, seen = self._segments[robot], self._since[robot], self._seen[robot]
        chosen = (now - since >= age) & (now - seen <= recent)
        if length > 0.0:
            ends = seg[:, 1] - seg[:, 0]
            chosen &= np.einsum('ij,ij->i', ends, ends) > length * length
        return seg[chosen]

    def remembered(self, i):
        """Return the segments (M, 2, 2) robot i remembers now."""
        return self._segments[i]

    def _drop_map_walls(self, i, grid):
        """
        Forget robot i's segments lying on the map's walls (ends and middle within tolerance).

        New segments make none there (their returns are left out), but one remembered from
        before the map came stays seen by the wall's returns for ever, its overhang round the
        wall's end (``extend_ends``) a phantom where robots turn round that end.
        """
        seg = self._segments[i]
        if not len(seg):
            return
        points = np.concatenate([seg[:, 0], seg[:, 1], seg.mean(axis=1)])
        near = np.zeros(len(points), bool)
        on_map = grid.inside(points)
        near[on_map] = grid.distance_to_obstacle(points[on_map]) <= MAP_WALL_TOLERANCE
        keep = ~near.reshape(3, -1).all(axis=0)
        if not keep.all():
            self._keep(i, keep)

    def segments(self, now, agent_index, timeout, shared):
        """
        Return the remembered scan walls and their owners, for the core: (M, 2, 2), (M,).

        agent_index : (C,) row of each commanded robot among the agents handed to the core,
        -1 where the robot is not one of them; timeout [s]: segments not seen for longer are
        forgotten; shared: every agent avoids every segment (owner -1), else only the robot
        that saw it (owner = its agent row).
        """
        segments, owners = [np.zeros((0, 2, 2))], [np.zeros(0, np.int64)]
        for i, seg in enumerate(self._segments):
            recent = now - self._seen[i] <= timeout
            if not recent.all():
                self._keep(i, recent)
                seg = self._segments[i]
            if len(seg) and agent_index[i] >= 0:
                segments.append(seg)
                owners.append(np.full(len(seg), -1 if shared else agent_index[i]))
        return np.concatenate(segments), np.concatenate(owners)


def _off_map_walls(grid, scan, sensor):
    """Return the scan's ranges with the returns on the map's walls set to NaN (dropped)."""
    ranges = np.array(scan.ranges, dtype=float).reshape(-1)
    points, beam = scan_to_points(ranges, scan.angle_min, scan.angle_increment,
                                  scan.range_min, scan.range_max, sensor)
    if len(points):
        on_map = grid.inside(points)
        near = np.zeros(len(points), bool)
        near[on_map] = grid.distance_to_obstacle(points[on_map]) <= MAP_WALL_TOLERANCE
        ranges[beam[near]] = np.nan
    return ranges
