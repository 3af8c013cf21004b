"""
What a scenario is once read: its robots and walkers (``Robot``), obstacles and map (``Scenario``).

``orca_nav.sim.scenarios`` reads scenarios (its docstring describes the file format); the
parsing and generators are ``orca_nav.sim.scenario_parse``.
"""

from dataclasses import dataclass, field, replace
import difflib
import math
from pathlib import Path

import numpy as np
from orca_nav.core.geometry import (point_segment_distance, points_in_polygons,
                                    polygon_segments_gap)
from orca_nav.core.orca.drive import DRIVES
from orca_nav.core.perception.raycast import polygon_edges

CONTACT_TOLERANCE = 1e-3  # [m] overlap smaller than this counts as touching, not colliding


class ScenarioError(ValueError):
    """A scenario file or generator spec that cannot be used, with a message to act on."""


@dataclass(frozen=True)
class Robot:
    """
    One robot of a scenario.

    start : (x [m], y [m], yaw [rad]) in the global frame ``map``
    goal : (x [m], y [m])
    footprint : ((x, y), ...) [m] counter-clockwise in the base frame (x forward), or None (a
    disc); with one, radius is its circumscribed radius (the footprint's farthest vertex).
    A walker (``walker`` set) follows ``waypoints`` ((x, y) tuples) at max_speed from
    ``start_time`` [s], round again with ``loop``; see walker_pose.
    """

    name: str
    start: tuple
    goal: tuple
    radius: float
    max_speed: float
    max_angular_speed: float
    drive: str
    footprint: tuple = None
    avoidance_weight: float = 0.5
    avoidance_group: str = 'default'
    groups_to_ignore: tuple = ()
    observed: bool = False   # driven straight to its goal by the simulator, commands ignored
    walker: bool = False     # a person on a scripted path: unknown to the node, in the scans
    waypoints: tuple = ()    # walker: its path, ((x, y), ...), >= 2 points
    loop: bool = False       # walker: from the last waypoint back to the first, forever
    start_time: float = 0.0  # walker: [s] of simulated time it stands still before walking

    @property
    def straight_line(self):
        """Distance from start to goal [m]."""
        return math.hypot(self.goal[0] - self.start[0], self.goal[1] - self.start[1])


@dataclass
class Scenario:
    """
    Robots and static obstacles of one run.

    polygons : list of (K, 2) float arrays, counter-clockwise
    segments : (M, 2, 2) float array of free walls
    arena : (xmin, ymin, xmax, ymax) or None
    map_file : path of a map_server YAML whose occupied cells are walls too, or None
    """

    name: str
    robots: list
    polygons: list = field(default_factory=list)
    segments: np.ndarray = field(default_factory=lambda: np.zeros((0, 2, 2)))
    arena: tuple = None
    timeout: float = 60.0
    description: str = ''
    map_file: Path = None
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def names(self):
        """Robot names in order."""
        return [r.name for r in self.robots]

    @property
    def observed(self):
        """(N,) bool: robots the simulator drives itself (the node only observes them)."""
        return np.array([r.observed for r in self.robots], dtype=bool)

    @property
    def walkers(self):
        """(N,) bool: the rows of walkers, people on scripted paths unknown to the node."""
        return np.array([r.walker for r in self.robots], dtype=bool)

    @property
    def robot_count(self):
        """Return the number of robots (walkers are no robots)."""
        return sum(1 for r in self.robots if not r.walker)

    @property
    def radii(self):
        """(N,) robot radii [m]."""
        return np.array([r.radius for r in self.robots], dtype=float)

    @property
    def starts(self):
        """(N, 3) start poses x, y, yaw."""
        return np.array([r.start for r in self.robots], dtype=float).reshape(-1, 3)

    @property
    def goals(self):
        """(N, 2) goal positions."""
        return np.array([r.goal for r in self.robots], dtype=float).reshape(-1, 2)

    def occupancy(self):
        """
        Return the scenario's map file as an occupancy grid, or None without a map (cached).

        Returns (data int8 (H*W,), width, height, resolution, (x, y, yaw) origin), values
        100 / 0 / -1 as map_server publishes them (see orca_nav.sim.mapfile.load_map_yaml).
        """
        if self.map_file is None:
            return None
        if 'occupancy' not in self._cache:
            from orca_nav.sim.mapfile import load_map_yaml, MapFileError
            try:
                self._cache['occupancy'] = load_map_yaml(self.map_file)
            except MapFileError as exc:
                raise ScenarioError(str(exc)) from None
        return self._cache['occupancy']

    def grid_map(self):
        """
        Return the map file as a GridMap (core.routes.grid; walls: occupied cells), or None.

        Unknown cells are free here: in the simulated world only occupied cells are solid.
        """
        occupancy = self.occupancy()
        if occupancy is None:
            return None
        if 'grid' not in self._cache:
            from orca_nav.core.routes.grid import GridMap, MapError
            data, width, height, resolution, origin = occupancy
            try:
                self._cache['grid'] = GridMap.from_occupancy(
                    data, width, height, resolution, origin, unknown_is_free=True)
            except MapError as exc:
                raise ScenarioError(f'{self.map_file}: {exc}') from None
        return self._cache['grid']

    def shape_segments(self):
        """Every polygon edge and free wall of the file's obstacles as an (M, 2, 2) array."""
        if 'shape_segments' not in self._cache:
            segments = np.concatenate([self.segments.reshape(-1, 2, 2),
                                       polygon_edges(self.polygons)], axis=0).astype(float)
            segments.flags.writeable = False  # cached: shared by every caller
            self._cache['shape_segments'] = segments
        return self._cache['shape_segments']

    def inside_polygons(self, points):
        """
        Whether each (P, 2) point lies inside one of the polygons (even-odd), as (P,) bool.

        All polygons at once: each edge's crossings of the ray from a point towards +x,
        counted per polygon.
        """
        if 'polygon_edges' not in self._cache:
            edges = [np.stack([p, np.roll(p, -1, axis=0)], axis=1) for p in self.polygons]
            sizes = [len(e) for e in edges]
            self._cache['polygon_edges'] = (
                np.concatenate(edges, axis=0) if edges else np.zeros((0, 2, 2)),
                np.cumsum([0] + sizes[:-1]) if edges else np.zeros(0, int))
        edges, starts = self._cache['polygon_edges']
        return points_in_polygons(points, edges, starts)

    def obstacle_segments(self):
        """
        Every static wall as an (M, 2, 2) array (for ray casting).

        The polygon edges, the free walls and the outlines of the map's occupied cells.
        """
        segments = self.shape_segments()
        grid = self.grid_map()
        if grid is not None:
            segments = np.concatenate([segments, grid.wall_segments()], axis=0)
        return segments

    def shape_distance(self, points):
        """
        Signed distance from each point to the nearest polygon or free wall (not the map).

        points : (P, 2) array [m]
        Returns (P,) [m]: negative inside a polygon, inf when there are none.
        """
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        segs = self.shape_segments()
        if len(segs) == 0:
            return np.full(len(points), np.inf)
        if len(points) <= 4096:
            dist = point_segment_distance(points, segs).min(axis=1)
        else:  # (P, M) at a time would be large
            dist = np.concatenate([point_segment_distance(chunk, segs).min(axis=1)
                                   for chunk in np.array_split(points, 1 + len(points) // 4096)])
        return np.where(self.inside_polygons(points), -dist, dist)

    def obstacle_distance(self, points):
        """
        Signed distance from each point to the nearest static obstacle.

        points : (P, 2) array [m]
        Returns (P,) [m]: negative inside a polygon, 0 in an occupied map cell (the distance
        to a map cell is exact to about one cell), inf when the world has no obstacles.
        """
        dist = self.shape_distance(points)
        grid = self.grid_map()
        if grid is not None and len(dist):
            dist = np.minimum(dist, grid.distance_to_obstacle(
                np.asarray(points, dtype=float).reshape(-1, 2)))
        return dist

    def polygon_clearance(self, polygon):
        """
        Signed gap between a convex (K, 2) polygon [m] (counter-clockwise) and the obstacles.

        Exact against the polygons' edges, the free walls and the map's outlines
        (obstacle_segments, cached); a polygon wholly inside an obstacle is caught at its
        vertices (obstacle_distance). Negative: overlap; inf when there are no obstacles.
        """
        p = np.asarray(polygon, dtype=float)
        if 'segments' not in self._cache:
            self._cache['segments'] = self.obstacle_segments()
        segments = self._cache['segments']
        gap = float(self.obstacle_distance(p).min())
        if len(segments):
            # Only the segments the polygon could be nearest to: within its reach of the
            # nearest one, seen from its centroid.
            centre = p.mean(axis=0, keepdims=True)
            reach = float(np.hypot(*(p - centre).T).max())
            to_centre = point_segment_distance(centre, segments)[0]
            near = segments[to_centre <= to_centre.min() + 2.0 * reach]
            gap = min(gap, float(polygon_segments_gap(p, near).min()))
        return gap

    def with_drive(self, drive):
        """Return a copy with every robot's drive set to ``drive`` (walkers stay holonomic)."""
        check_drive(drive, 'drive')
        return replace(self, robots=[r if r.walker else replace(r, drive=drive)
                                     for r in self.robots])


def walker_pose(robot, t):
    """
    Return the pose (x, y, yaw) of a walker at ``t`` [s] of simulated time on its path.

    It stands at its first waypoint until start_time, then moves max_speed * (t - start_time)
    metres along its waypoints (round again from the last to the first with ``loop``) and
    stands at the last one; yaw is the direction of the leg it is on.
    """
    points = np.asarray(robot.waypoints, dtype=float).reshape(-1, 2)
    if robot.loop:
        points = np.concatenate([points, points[:1]])
    legs = np.diff(points, axis=0)
    lengths = np.hypot(legs[:, 0], legs[:, 1])
    total = float(lengths.sum())
    if len(legs) == 0 or total <= 0.0:
        return float(points[0, 0]), float(points[0, 1]), float(robot.start[2])
    ends = np.cumsum(lengths)
    s = robot.max_speed * max(0.0, t - robot.start_time)
    s = math.fmod(s, total) if robot.loop else min(s, total)
    k = min(int(np.searchsorted(ends, s, side='right')), len(legs) - 1)
    while lengths[k] <= 0.0 and k > 0:   # a repeated waypoint: the leg before it
        k -= 1
    frac = min(max((s - (ends[k] - lengths[k])) / lengths[k], 0.0), 1.0) if lengths[k] else 0.0
    x, y = points[k] + frac * legs[k]
    yaw = math.atan2(legs[k, 1], legs[k, 0]) if lengths[k] else float(robot.start[2])
    return float(x), float(y), yaw


def polygon_signed_area(polygon):
    """Shoelace area of a (K, 2) polygon: positive when counter-clockwise."""
    x, y = polygon[:, 0], polygon[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def suggest_name(word, valid):
    """Return ' (did you mean ...?)' with the nearest valid name, or ''."""
    close = difflib.get_close_matches(str(word), list(valid), n=1, cutoff=0.5)
    return f' (did you mean {close[0]!r}?)' if close else ''


def check_drive(drive, where):
    """Raise ScenarioError when ``drive`` is not one of DRIVES."""
    if drive not in DRIVES:
        raise ScenarioError(f'{where}: drive must be one of {DRIVES}, got {drive!r}'
                            f'{suggest_name(drive, DRIVES)}')
    return drive
