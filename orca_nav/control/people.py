"""
Moving things the laser sees (people, robots the node does not know): detected, tracked, avoided.

Each fresh scan's returns that no known robot and no map wall explains are clustered; compact
clusters are candidate objects (orca_nav.core.perception.detection.detect_objects). One tracker for
the whole fleet (orca_nav.core.perception.tracking.Tracker) follows them across scans and robots
with a constant-velocity Kalman filter. A track that keeps moving is handed to the core as an
immovable agent (the robots take all the avoiding, since a person does not run ORCA) at its
predicted position, with its estimated velocity and its radius plus ``person_margin``; its returns
are then no wall segments. A walker who stops stays such an agent (at its estimated, slow velocity)
while it is tracked. A track never seen moving is not an agent: its returns stay scan segments, so
a person standing is an obstacle, not a ghost agent.

Crowds: clusters up to ``max_diameter`` (1.1 m: a person of radius 0.5 m) are objects, those
wider than 0.8 m only if they are convex arcs (a straight or concave cluster is a wall); a
cluster wider than one person is split where its range profile peaks (two people side
by side, one partly behind another), partial views (occluded, or parts of a split cluster) keep
updating the tracks they belong to, a confirmed track hidden behind a nearer detection is kept
up to 3 s, and a track is confirmed by two detections ``confirm_time`` apart as well as by
``confirm_hits`` (see orca_nav.core.perception.tracking).
"""

from dataclasses import dataclass

import numpy as np
from orca_nav.core.geometry import compose_pose
from orca_nav.core.perception.detection import Detector
from orca_nav.core.perception.scan import nearest_segments, outside_discs, scan_to_points
from orca_nav.core.perception.tracking import Tracker

# Returns this close [m] to a map wall (occupied cell) are the wall, not an object.
MAP_WALL_TOLERANCE = 0.15
# Returns this close [m] to a scan wall the robot remembers (observe's walls) are that wall.
SCAN_WALL_TOLERANCE = 0.1
# Returns within a known robot's radius plus this [m] are that robot (as for scan segments).
ROBOT_MARGIN = 0.1


@dataclass(frozen=True)
class PeopleConfig:
    """Tracking knobs (the node's track_* parameters)."""

    enabled: bool = True
    track_timeout: float = 1.0     # [s] a track not seen this long is forgotten
    confirm_hits: int = 3          # detections before a track counts
    confirm_time: float = 0.2      # [s] or two detections at least this far apart
    min_speed: float = 0.15        # [m/s] a confirmed track faster than this is moving
    max_diameter: float = 1.1      # [m] larger clusters (once split) are walls, not objects;
    #                                wider than 0.8 m: objects only if convex arcs (detection)
    split_depth: float = 0.12      # [m] clusters are split at range peaks this deep
    gate: float = 0.7              # [m] association distance beyond 3 sigma
    accel_noise: float = 2.0       # [m/s^2] how fast a track's velocity may change


@dataclass(frozen=True)
class MovingObjects:
    """Moving tracks at one moment, as the core takes them."""

    id: np.ndarray        # noqa: A003 -- (T,) int, the tracker's track ids
    position: np.ndarray  # (T, 2) [m] global
    velocity: np.ndarray  # (T, 2) [m/s] global
    radius: np.ndarray    # (T,) [m] estimated (no margin)

    def __len__(self):
        """Return the number of moving tracks."""
        return len(self.id)

    @classmethod
    def empty(cls):
        """Return no moving object."""
        return cls(np.zeros(0, np.int64), np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0))

    def at(self, t_from, t_to):
        """Return the positions (T, 2) moved on from ``t_from`` to ``t_to`` [s]."""
        return self.position + (t_to - t_from) * self.velocity


class PeopleTracker:
    """Detections from the fleet's scans, one tracker, the moving tracks (see the module)."""

    def __init__(self, config: PeopleConfig = PeopleConfig()):
        """Start with no track."""
        self.config = config
        self.tracker = self._new_tracker(config)
        self.detect = self._new_detector(config)
        self._largest = {}   # track id -> largest radius estimated so far [m]
        self._walked = set()  # ids of the tracks that have been moving

    @staticmethod
    def _new_detector(config):
        return Detector(max_diameter=config.max_diameter, split_depth=config.split_depth)

    @staticmethod
    def _new_tracker(config):
        return Tracker(**PeopleTracker._tracker_knobs(config))

    @staticmethod
    def _tracker_knobs(config):
        return {'confirm_hits': config.confirm_hits, 'track_timeout': config.track_timeout,
                'min_speed': config.min_speed, 'confirm_time': config.confirm_time,
                'gate': config.gate, 'accel_noise': config.accel_noise}

    def reconfigure(self, config: PeopleConfig) -> None:
        """Use new knobs; a change of the tracker's own ones starts it afresh."""
        old, self.config = self.config, config
        self.detect = self._new_detector(config)
        if self._tracker_knobs(old) != self._tracker_knobs(config):
            self.tracker = self._new_tracker(config)
            self._largest, self._walked = {}, set()  # the new tracker's ids start at 0

    def observe(self, scans, poses, present, radius, sensor_offset, grid=None, walls=None):
        """
        Detect objects in each scan and update the tracks, scan by scan in time order.

        scans : list of ScanInput (fresh robots only); poses : (S, N, 3) every robot's pose at
        each scan's time; present (N,) bool robots to explain returns with; radius (N,) [m];
        grid : GridMap or None (returns on its walls are no objects); walls : None, or
        walls(i) -> (M, 2, 2) the scan walls robot i knows (returns on them are no objects). A
        scan that cannot be read is skipped (ScanMemory reports it).
        """
        if not self.config.enabled:
            return
        for k in np.argsort([scan.time for scan in scans], kind='stable'):
            scan = scans[k]
            i = scan.robot
            try:
                sensor = compose_pose(poses[k, i], sensor_offset)
                points, beam = scan_to_points(scan.ranges, scan.angle_min,
                                              scan.angle_increment, scan.range_min,
                                              scan.range_max, sensor)
            except ValueError:
                continue
            # The scanning robot's own body is below range_min: dropping returns within its
            # radius + margin would hide the nearest part of a person beside it (the partial
            # view left then misplaces them, when it matters most).
            others = np.array(present, bool)
            others[i] = False
            keep = self._unexplained(points, poses[k, :, :2], others, radius, grid,
                                     None if walls is None else walls(i))
            centres, radii, partial = self.detect(
                points[keep], beam[keep], len(scan.ranges), scan.angle_increment, sensor[:2],
                partial=True)
            self.tracker.update(scan.time, centres, radii, partial, sensor[:2])

    @staticmethod
    def _unexplained(points, robots, present, radius, grid, walls=None):
        """Return (P,) bool: returns on no known robot (scanner included) and no map wall."""
        keep = np.ones(len(points), bool)
        if len(points) == 0:
            return keep
        rows = np.flatnonzero(present)
        if len(rows):
            keep = outside_discs(points[:, 0].copy(), points[:, 1].copy(), robots[rows, 0],
                                 robots[rows, 1], radius[rows] + ROBOT_MARGIN)
        if grid is not None and keep.any():
            inside = grid.inside(points[keep])
            near_wall = np.zeros(int(keep.sum()), bool)
            near_wall[inside] = grid.distance_to_obstacle(
                points[keep][inside]) <= MAP_WALL_TOLERANCE
            idx = np.flatnonzero(keep)
            keep[idx[near_wall]] = False
        if walls is not None and keep.any():
            idx = np.flatnonzero(keep)
            # Called with no walls too: the kernel is compiled when a node warms up.
            dist, _ = nearest_segments(points[idx, 0].copy(), points[idx, 1].copy(),
                                       np.ascontiguousarray(walls, float))
            keep[idx[dist <= SCAN_WALL_TOLERANCE]] = False
        return keep

    def moving(self, now: float) -> MovingObjects:
        """Return the moving tracks predicted to ``now`` [s]."""
        if not self.config.enabled:
            return MovingObjects.empty()
        tracks = self.tracker.tracks(now)
        # A person does not shrink: a smaller estimate is a partial view (a robot in front,
        # returns beside a known robot taken for that robot), so each track keeps the largest
        # radius it has had.
        largest = {}
        for k, r in zip(tracks.id.tolist(), tracks.radius.tolist()):
            largest[k] = max(r, self._largest.get(k, 0.0))
        self._largest = largest
        # A walker who stops stays an agent (at its slow or zero velocity) while tracked: its
        # returns were no scan walls while it walked, and a person about to stop is where
        # the robots' paths had been planned round with person_margin. A track never seen
        # moving (a person standing, a pillar) stays scan walls.
        self._walked = {k for k in self._walked if k in largest}
        self._walked.update(tracks.id[tracks.moving].tolist())
        m = np.array([k in self._walked for k in tracks.id.tolist()], bool)
        radius = np.array([largest[k] for k in tracks.id[m].tolist()], float)
        return MovingObjects(tracks.id[m], tracks.position[m], tracks.velocity[m], radius)

    def reset(self) -> None:
        """Forget every track."""
        self.tracker.reset()
        self._largest = {}
        self._walked = set()


__all__ = ['MovingObjects', 'PeopleConfig', 'PeopleTracker']
