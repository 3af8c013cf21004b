"""
One simulated world without ROS: the simulator node, the lock-stepped tests and the benchmarks.

A :class:`World` holds the rows of a scenario (orca_nav.sim.scenarios): robots of either drive,
observed robots (driven straight to their goals, their commands ignored: drive_observed) and
walkers (people on scripted paths: drive_walkers). A step applies the robots' body-frame commands
(a differential robot has no vy), drives the observed robots and the walkers by their own rules,
and moves every row exactly for its constant twist (integrate). The world casts the robots' 360
degree laser scans (orca_nav.core.perception.raycast.cast_rays) against the static walls and the
other rows' bodies, and keeps the contact metrics of the run on the true shapes: the smallest
gaps robot-robot, robot-obstacle and robot-walker (negative = overlap). A robot with a footprint
is its polygon turned by its yaw, for the contacts (with robots, walls and walkers) and for the
other robots' scans (its edges are segments); a robot without one is the disc of its radius, as
every walker is. A world without footprints takes the discs' path only.

Nothing here talks to DDS: orca_nav.sim.node publishes the world's odometry and scans, the
tests hand them to the controller or to the node themselves.

Example::

    >>> from orca_nav.sim.scenarios import load_scenario
    >>> world = World(load_scenario('circle', robots=4))
    >>> world.step(np.tile([0.5, 0.0, 0.0], (4, 1)), 0.1, substeps=5)
    >>> round(world.time, 3), world.min_gap > 0.0, world.scan_ranges(0).shape
    (0.1, True, (180,))
"""

from dataclasses import dataclass
import math

import numpy as np
from orca_nav.core.geometry import convex_gap, placed_polygon, polygon_disc_gap, wrap_angle
from orca_nav.core.perception.raycast import cast_rays, polygon_edges
from orca_nav.sim.scenarios import Robot, Scenario, walker_pose

STRAIGHT_TURN = 1e-9  # [rad] a step that turns less than this is integrated as a straight line


def clamp_command(drive, vx, vy, wz, max_speed, max_angular_speed):
    """
    Clamp a body-frame command to a robot's limits.

    drive : 'holonomic' (|(vx, vy)| <= max_speed) or 'differential' (vy ignored,
        |vx| <= max_speed)
    Returns (vx, vy, wz) [m/s, m/s, rad/s]; non-finite input gives zero.
    """
    if not all(math.isfinite(v) for v in (vx, vy, wz)):
        return 0.0, 0.0, 0.0
    wz = min(max(wz, -max_angular_speed), max_angular_speed)
    if drive == 'differential':
        return min(max(vx, -max_speed), max_speed), 0.0, wz
    speed = math.hypot(vx, vy)
    if speed > max_speed:
        vx, vy = vx * max_speed / speed, vy * max_speed / speed
    return vx, vy, wz


def integrate(pose, vx, vy, wz, dt):
    """
    Advance a pose (x, y, yaw) by a constant body-frame twist for dt seconds.

    Exact for a constant twist: the robot moves on a circular arc (a straight line if wz == 0).
    Returns the new (x, y, yaw), yaw wrapped to [-pi, pi).
    """
    x, y, yaw = pose
    dth = wz * dt
    if abs(dth) < STRAIGHT_TURN:
        # Straight line: rotate the body velocity by the mid-step heading.
        c, s = math.cos(yaw + 0.5 * dth), math.sin(yaw + 0.5 * dth)
        x += (c * vx - s * vy) * dt
        y += (s * vx + c * vy) * dt
    else:
        # Arc: integrate R(yaw + w t) (vx, vy) over [0, dt] in closed form.
        s0, c0 = math.sin(yaw), math.cos(yaw)
        s1, c1 = math.sin(yaw + dth), math.cos(yaw + dth)
        x += (vx * (s1 - s0) + vy * (c1 - c0)) / wz
        y += (vx * (c0 - c1) + vy * (s1 - s0)) / wz
    # wrap_angle's formula on a scalar (float % is numpy's remainder, to the bit): numpy's
    # call costs 1 us, and every row is moved this way at every substep.
    yaw = float((yaw + dth + math.pi) % (2.0 * math.pi) - math.pi)
    return x, y, yaw


def drive_observed(scenario, poses, twists, dt):
    """
    Set the twists (N, 3) of the scenario's observed robots: they ignore commands.

    Each drives straight to its goal at its max_speed, facing it (its yaw in ``poses`` is set),
    and stops there.
    """
    for i in np.flatnonzero(scenario.observed):
        robot = scenario.robots[i]
        to_goal = np.asarray(robot.goal) - poses[i, :2]
        dist = math.hypot(*to_goal)
        if dist < 1e-9:
            twists[i] = 0.0
            continue
        poses[i, 2] = math.atan2(to_goal[1], to_goal[0])
        twists[i] = (min(robot.max_speed, dist / dt), 0.0, 0.0)


def drive_walkers(scenario, poses, twists, t, dt):
    """
    Set the twists (N, 3) and yaws of the scenario's walkers for the step from t to t + dt.

    t : simulated time [s] at the start of the step. Each walker is steered straight to where
    its scripted path (orca_nav.sim.scenarios.walker_pose) puts it at t + dt, facing that way,
    with a holonomic body twist (speed, 0, 0); integrating the step lands it there. So its
    pose depends on the simulated time only; it stands still (zero twist, facing along its
    path) before its start_time and after its last waypoint (unless it loops).
    """
    if dt <= 0.0:
        return
    for i in np.flatnonzero(scenario.walkers):
        x, y, yaw = walker_pose(scenario.robots[i], t + dt)
        dx, dy = x - poses[i, 0], y - poses[i, 1]
        dist = math.hypot(dx, dy)
        if dist < 1e-12:
            poses[i, 2] = yaw
            twists[i] = 0.0
            continue
        poses[i, 2] = math.atan2(dy, dx)
        twists[i] = (dist / dt, 0.0, 0.0)


@dataclass(frozen=True)
class Scanner:
    """
    The 360 degree laser every robot carries at its centre (the simulator node's defaults).

    Beam k looks at body angle -pi + k * 2 pi / beams; hits farther than range_max read +inf
    (REP 117); noise is the standard deviation of Gaussian range noise [m] (hits only, clipped
    to [range_min, range_max]).
    """

    beams: int = 180
    range_min: float = 0.05   # [m]
    range_max: float = 6.0    # [m]
    noise: float = 0.0        # [m]

    @property
    def offsets(self):
        """(beams,) body angle of every beam [rad]."""
        return -math.pi + 2.0 * math.pi / self.beams * np.arange(self.beams)


def rows_scenario(names, poses, radii=0.2, drives='holonomic', walls=None, walkers=()):
    """
    Return a Scenario of plain robot rows (no goals, no limits) for a world built from arrays.

    poses : (N, 3) x, y, yaw; radii, drives : one for all or one per robot; walls : (M, 2, 2)
    segments or None; walkers : walker rows (orca_nav.sim.scenarios.Robot) appended after them.
    """
    n = len(names)
    poses = np.asarray(poses, dtype=float).reshape(n, 3)
    radii = np.broadcast_to(np.asarray(radii, dtype=float), (n,))
    drives = [drives] * n if isinstance(drives, str) else list(drives)
    robots = [Robot(name=str(name), start=tuple(float(v) for v in pose),
                    goal=(float(pose[0]), float(pose[1])), radius=float(radius),
                    max_speed=math.inf, max_angular_speed=math.inf, drive=drive)
              for name, pose, radius, drive in zip(names, poses, radii, drives)]
    segments = (np.zeros((0, 2, 2)) if walls is None
                else np.asarray(walls, dtype=float).reshape(-1, 2, 2))
    return Scenario(name='world', robots=robots + list(walkers), segments=segments)


class World:
    """
    Every row of a scenario on a plane: commands in, exact motion, scans and contacts out.

    scenario : orca_nav.sim.scenarios.Scenario (its rows in order; the poses start at its
        starts); scanner : the robots' laser (Scanner); seed : of the scan noise
    track_contacts : update the contact metrics after every (sub)step
    bound_contacts : skip the robots that cannot lower ``min_wall_gap`` (the same minimum;
        False measures every robot at every check)

    State: ``poses`` (N, 3) x, y, yaw [m, rad]; ``twists`` (N, 3) the body twists (vx, vy, wz)
    of the last step; ``time`` [s] simulated (the walkers' clock); ``min_gap``,
    ``min_wall_gap``, ``min_walker_gap`` [m] the smallest robot-robot, robot-obstacle and
    robot-walker gaps so far, on footprints or discs (inf until measured; walkers are not
    robots).
    """

    def __init__(self, scenario, scanner=Scanner(), seed=0, track_contacts=True,
                 bound_contacts=True):
        """Place every row at its start; no contact measured yet."""
        self.scenario = scenario
        self.scanner = scanner
        self.rng = np.random.default_rng(seed)
        self.track_contacts = bool(track_contacts)
        self.poses = scenario.starts.copy()
        n = len(self.poses)
        self.twists = np.zeros((n, 3))
        self.time = 0.0
        self.radii = scenario.radii
        # (N,) each row's footprint, (K, 2) in its body frame, or None (a disc of its radius).
        self.footprints = [None if r.footprint is None else np.array(r.footprint, dtype=float)
                           for r in scenario.robots]
        self.differential = np.array([r.drive == 'differential' for r in scenario.robots], bool)
        self.walkers = np.flatnonzero(scenario.walkers)
        self.robots = np.flatnonzero(~scenario.walkers)
        self.segments = scenario.obstacle_segments()
        self.beam_offsets = scanner.offsets
        self._pairs = tuple(self.robots[k] for k in np.triu_indices(len(self.robots), 1))
        self.min_gap = self.min_wall_gap = self.min_walker_gap = math.inf
        # The walls' bounds (``_wall_gaps``): each robot's last measured wall gap, as its disc
        # and as its footprint, and the pose it was measured at (NaN: never).
        self.bound_contacts = bool(bound_contacts)
        k = len(self.robots)
        self._disc_ref = (np.full((k, 2), np.nan), np.full(k, np.nan))
        self._shape_ref = (np.full((k, 3), np.nan), np.full(k, np.nan))
        self._reach = np.array([0.0 if f is None else float(np.hypot(*f.T).max())
                                for f in self.footprints])
        grid = scenario.grid_map()
        # The map's wall distance is exact to within a cell's diagonal (GridMap).
        self._wall_slack = 1e-9 + (0.0 if grid is None else math.sqrt(2.0) * grid.resolution)

    # --- motion ---------------------------------------------------------------------------

    def drive(self, commands, dt):
        """
        Set the twists of the step from ``time`` to ``time + dt`` (no motion yet).

        commands : (N, 3) body-frame (vx, vy, wz) per row; a differential robot's vy is
        dropped, the observed robots' and the walkers' rows are replaced by their own rules
        (which also turn them to face where they go). Returns ``twists``.
        """
        self.twists = np.array(commands, dtype=float).reshape(self.poses.shape)
        self.twists[self.differential, 1] = 0.0
        drive_observed(self.scenario, self.poses, self.twists, dt)
        drive_walkers(self.scenario, self.poses, self.twists, self.time, dt)
        return self.twists

    def advance(self, dt, substeps=1):
        """Move every row by its twist for ``dt`` [s] in ``substeps`` equal steps."""
        h = dt / substeps
        for _ in range(substeps):
            for i in range(len(self.poses)):
                self.poses[i] = integrate(self.poses[i], *self.twists[i], h)
            if self.track_contacts:
                self.check_contacts()
        self.time += dt

    def step(self, commands, dt, substeps=1):
        """``drive(commands, dt)`` then ``advance(dt, substeps)``."""
        self.drive(commands, dt)
        self.advance(dt, substeps)

    # --- sensors and contacts -------------------------------------------------------------

    def scan_ranges(self, i):
        """
        Ranges [m] robot i's laser reads now, beam k at body angle ``beam_offsets[k]``.

        Every other row is in the way (robots and walkers: the edges of its placed footprint,
        else its disc) and every static wall.
        """
        sc = self.scanner
        others = np.arange(len(self.poses)) != i
        segments = self.segments
        shaped = [k for k in np.flatnonzero(others) if self.footprints[k] is not None]
        if shaped:
            others[shaped] = False
            segments = np.concatenate([segments, polygon_edges(
                [placed_polygon(self.footprints[k], self.poses[k]) for k in shaped])])
        ranges = cast_rays(self.poses[i, :2], self.poses[i, 2] + self.beam_offsets,
                           sc.range_max, segments, self.poses[others, :2],
                           self.radii[others])
        if sc.noise > 0.0:
            hit = np.isfinite(ranges)
            noisy = ranges + self.rng.normal(0.0, sc.noise, ranges.shape)
            ranges = np.where(hit, np.clip(noisy, sc.range_min, sc.range_max), ranges)
        return ranges

    def check_contacts(self):
        """Update min_gap, min_wall_gap and min_walker_gap with the present poses [m]."""
        xy, radii, robots = self.poses[:, :2], self.radii, self.robots
        iu, ju = self._pairs
        if len(iu):
            gap = np.hypot(*(xy[iu] - xy[ju]).T) - radii[iu] - radii[ju]
            self.min_gap = min(self.min_gap, float(self._shape_gaps(gap).min()))
        if len(robots):
            self.min_wall_gap = min(self.min_wall_gap, self._wall_gaps())
        if len(robots) and len(self.walkers):
            d = xy[robots, None] - xy[None, self.walkers]
            gap = (np.hypot(d[..., 0], d[..., 1]) - radii[robots, None]
                   - radii[None, self.walkers])
            for k, w in zip(*np.nonzero(gap < self.min_walker_gap)):
                if self.footprints[robots[k]] is not None:
                    walker = self.walkers[w]
                    gap[k, w] = polygon_disc_gap(self._placed(robots[k]), xy[walker],
                                                 radii[walker])
            self.min_walker_gap = min(self.min_walker_gap, float(gap.min()))

    def _wall_gaps(self):
        """
        Return the least robot-wall gap [m] now, or inf where none can lower ``min_wall_gap``.

        A robot's disc gap is a lower bound of its footprint's, so its polygon is measured only
        where that could matter. A gap measured at one pose shrinks by at most as much as the
        robot moved since (its disc: the centre's travel; its footprint: that plus its
        farthest vertex's arc, plus a map cell's diagonal for the map's distances): a robot
        whose last gap less that travel stays above ``min_wall_gap`` is not measured again
        (``bound_contacts``; the minimum is the same as measuring every robot).
        """
        robots, poses, least = self.robots, self.poses[self.robots], self.min_wall_gap
        slack = self._wall_slack
        disc_xy, disc_gap = self._disc_ref
        shape_pose, shape_gap = self._shape_ref
        need = np.ones(len(robots), bool)
        if self.bound_contacts:
            travel = np.hypot(*(poses[:, :2] - disc_xy).T)
            # Never measured (NaN): needed. No walls at all (inf): never.
            need = ~((disc_gap - travel > least + slack) | (disc_gap == math.inf))
        rows = np.flatnonzero(need)
        if len(rows) == 0:
            return math.inf
        disc_xy[rows] = poses[rows, :2]
        disc_gap[rows] = (self.scenario.obstacle_distance(poses[rows, :2])
                          - self.radii[robots[rows]])
        gaps = disc_gap[rows].copy()
        for n, k in enumerate(rows):
            if self.footprints[robots[k]] is None or not gaps[n] < least:
                continue
            if self.bound_contacts:
                turn = abs(float(wrap_angle(poses[k, 2] - shape_pose[k, 2])))
                travel = (math.hypot(*(poses[k, :2] - shape_pose[k, :2]))
                          + self._reach[robots[k]] * turn)
                if shape_gap[k] - travel > least + slack:
                    gaps[n] = math.inf
                    continue
            shape_pose[k] = poses[k]
            shape_gap[k] = gaps[n] = self.scenario.polygon_clearance(self._placed(robots[k]))
        return float(gaps.min())

    def _placed(self, i):
        """Return row i's footprint (K, 2) placed at its present pose [m]."""
        return placed_polygon(self.footprints[i], self.poses[i])

    def _shape_gaps(self, gap):
        """
        Return the robot pairs' gaps (P,) [m] on their true shapes, given their disc gaps.

        A robot with a footprint is its polygon turned by its yaw; its radius is the
        circumscribed one, so its disc gap is a lower bound and only the pairs whose disc gap
        could lower ``min_gap`` are measured again. Disc pairs keep their disc gap.
        """
        footprints = self.footprints
        iu, ju = self._pairs
        for p in np.flatnonzero(gap < self.min_gap):
            i, j = int(iu[p]), int(ju[p])
            if footprints[i] is None and footprints[j] is None:
                continue
            shape = [None if footprints[k] is None else self._placed(k) for k in (i, j)]
            if shape[0] is not None and shape[1] is not None:
                gap[p] = convex_gap(shape[0], shape[1])
            else:
                polygon, disc = (shape[0], j) if shape[0] is not None else (shape[1], i)
                gap[p] = polygon_disc_gap(polygon, self.poses[disc, :2], self.radii[disc])
        return gap
