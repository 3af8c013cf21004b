"""
How a differential robot with a footprint drives where its heading decides whether it fits.

A differential robot cannot crab: its polygon goes where its heading points, and the solver
steers only its point ahead (the rest of the body turns about the axle, the rear swinging
the other way). So, besides avoiding with its polygon (``avoidance.footprint_rows``):

- **Corners are stops** (``Corners.update``). Where its route turns next to a narrow
  stretch (a door its polygon passes only turned along it), following the carrot round the
  corner would bring it in at a slant, a corner of its body on a jamb. The carrot stays at
  the corner's stop until the robot stands there (within CORNER_REACH; it turns to face the
  stop when it is more than SHIM_ANGLE off), then the robot turns in place toward the
  route's point AIM beyond the corner and only then drives on (``align_prefs``,
  ``steer_commands``). The stop is on the narrow stretch's line, out where the
  circumscribed disc has CORNER_ROOM (routes put their turns where the polygon can turn,
  ``FootprintCells.turn_hits``). A robot that cannot turn in place where it stands and has
  the stop beside it drives on along its route instead (``_cramped``).
- **In a passage it drives along its route** (``steer_commands``): the speed the solver gave
  its point ahead along its heading, a yaw rate toward its target (the sideways part of an
  avoiding velocity would turn it across the passage), no pass-on-right bias, and at most
  NARROW_TURN_RATE (``narrow_turns``: its polygon is swept over that turn only).
- **No command swings its body into a wall or robot** (``keep_clear``); nor does a holonomic
  robot's turn swing its polygon into one (its turn, over two periods, as late commands make
  it last).

A corner is a vertex of the route where it turns by more than CORNER_ANGLE and where the
route within NARROW_SPAN circumscribed radii before or after the vertex comes nearer a
wall than the circumscribed radius: there the polygon's heading decides whether it fits.
"""

import dataclasses
import math

import numpy as np
from orca_nav.core.geometry import (
    convex_gap, placed_polygon, polygon_disc_gap, polygon_segments_gap, wrap_angle)
from orca_nav.core.orca import drive
from orca_nav.core.routes.follow import route_clearance

from .states import RobotState

# [rad] A route that turns by less than this at a vertex is followed through it.
CORNER_ANGLE = 0.1
# [circumscribed radii] The route this far before and after a vertex is searched for walls.
NARROW_SPAN = 2.0
# [m] A robot this near its corner stands at it (its axle; the point ahead is beyond).
CORNER_REACH = 0.05
# [m] There it turns toward the route's point this far beyond the corner.
AIM = 1.0
# [rad] A robot on its way to a corner turns in place while the corner is farther than this
# off its heading.
SHIM_ANGLE = 0.3
# [m/s] It drives to a corner at least this fast (or as far as it is in a period).
MIN_APPROACH = 0.05
# [rad] A robot turns in place until its heading is this near the next segment's ...
ALIGN_TOLERANCE = 0.05
# [1/s] ... at this rate per radian left (within its max_angular_speed).
ALIGN_GAIN = 2.0
# [m] A stop leaves the circumscribed disc this much room from walls, moved up to MAX_SHIFT
# in SHIFT_STEP steps along the narrow stretch's line.
CORNER_ROOM = 0.25
MAX_SHIFT = 1.0
SHIFT_STEP = 0.05
# [rad/s] Where its way is narrower than its circumscribed disc, such a robot turns at most
# this fast (``narrow_turns``).
NARROW_TURN_RATE = 0.5
# [m] A command may bring a turning robot's polygon this near a wall, no nearer unless it
# is already (``keep_clear``); else its (v, w) are scaled by the first of GUARD_SCALES
# that keeps to that: less turn first (the point ahead then moves sideways by at most
# lookahead x w less than ORCA chose), then slower on the same arc, then not at all.
WALL_GAP = 0.02
ROBOT_GAP = 0.05
GUARD_SCALES = ((1.0, 1.0), (1.0, 0.5), (1.0, 0.25), (1.0, 0.0), (0.5, 0.5), (0.25, 0.25),
                (0.0, 0.0))
TURN_SCALES = (1.0, 0.5, 0.25, 0.0)
# Corners judged are remembered, up to this many.
CACHE = 4096


class Corners:
    """The corners of C robots' routes (see the module's docstring)."""

    def __init__(self, c):
        """Start with no corner reached; ``turns`` (C,) bool: the robots that stop there."""
        self.turns = np.zeros(c, bool)
        self.heading = np.full(c, np.nan)   # [rad] to turn to in place (NaN: none)
        self.stop = np.full((c, 2), np.nan)  # [m] the corner driven to (NaN: none)
        self.rate = np.full(c, np.nan)      # [rad/s] this tick's turn in place (NaN: none)
        self._reached = [None] * c          # (route version, vertex) of the last corner
        self._cache = {}                    # (route, version, vertex) -> a corner or not

    def update(self, robots, routes, versions, segment, pos, yaw, carrot, grid, reach):
        """
        Hold the carrots of ``robots`` (R,) at their next corners; set ``heading``.

        routes, versions : the C routes and their change counters; segment (C,) the segment
        each robot is on (``Following.segment``); pos (C, 2) [m], yaw (C,) [rad]; carrot
        (C, 2) [m], changed in place; grid : GridMap or None; reach (C,) [m] the
        circumscribed radii. A corner the robot's projection has passed without it standing
        there (it came from the far side) is still its stop while the robot is within
        ``reach`` of it; a robot already on the line from the stop through the corner,
        heading along it (a route planned again from there), has reached it.
        """
        for i in robots[self.turns[robots]]:
            points = routes[i]
            if points is None or grid is None:
                self.heading[i] = np.nan
                self.stop[i] = np.nan
                continue
            if np.isfinite(self.heading[i]) and self._reached[i][0] == versions[i]:
                continue   # turning in place at the corner it stands at
            self.heading[i] = np.nan
            self.stop[i] = np.nan
            last = (self._reached[i][1] if self._reached[i] is not None
                    and self._reached[i][0] == versions[i] else 0)
            seg = int(segment[i])
            # The carrot's segment: the corners up to it are ahead of the robot.
            ahead = seg
            while (ahead < len(points) - 2
                   and _off_segment(carrot[i], points[ahead], points[ahead + 1])):
                ahead += 1
            k = None
            for j in range(max(last + 1, 1), min(ahead, len(points) - 2) + 1):
                if ((j > seg or math.hypot(*(pos[i] - points[j])) < reach[i])
                        and self._corner(points, versions[i], j, grid, reach[i]) is not None):
                    k = j
                    break
            if k is None:
                continue
            stop, aim = self._corner(points, versions[i], k, grid, reach[i])
            if _cramped(pos[i], yaw[i], stop, grid, reach[i]):
                self._reached[i] = (versions[i], k)   # it drives on along its route
                continue
            if math.hypot(*(pos[i] - stop)) <= CORNER_REACH or _on_line(
                    pos[i], yaw[i], stop, points[k], aim):
                self._reached[i] = (versions[i], k)
                self.heading[i] = math.atan2(aim[1] - pos[i, 1], aim[0] - pos[i, 0])
            else:
                carrot[i] = self.stop[i] = stop

    def _corner(self, points, version, k, grid, reach):
        """
        Return vertex k's (stop (2,), aim (2,)) if it is a corner, else None; cached.

        The stop is on the narrow side's line through the vertex, moved out of the narrow
        stretch while that gives the robot more room, until the circumscribed disc has
        CORNER_ROOM to spare (at most MAX_SHIFT); the aim is the route's point AIM beyond the
        vertex: the robot turns toward it there.
        """
        key = (id(points), version, k)
        if key not in self._cache:
            if len(self._cache) > CACHE:
                self._cache.clear()
            self._cache[key] = _corner(np.ascontiguousarray(points, dtype=float), k, grid,
                                       reach)
        return self._cache[key]

    def align_prefs(self, cfg, pos, yaw, lookahead, steering, narrow, straight):
        """
        Steer the robots that turn at corners: in place at a corner, straight in a passage.

        pos (C, 2) [m]; yaw (C,) [rad]; lookahead (C,) [m] their points ahead; steering : the
        tick's ``Steering``, whose prefs (N, 2) [m/s] change in place. A robot standing at a
        corner with its heading away from its aim: its point ahead asked to move sideways at
        the speed of the turn; one within ALIGN_TOLERANCE is done (``heading`` NaN). A robot
        on its way to a corner turns in place likewise while the corner is more than
        SHIM_ANGLE off its heading, then drives to it (a point it can reach exactly).
        narrow (C,) bool: the robots whose way near them is narrower than their
        circumscribed disc; their preferred velocities are turned back left by
        atan(straight) (C,) (the pass-on-right bias would turn them toward a jamb), unless
        a give-way lock holds them.
        """
        c = len(self.heading)
        prefs = steering.prefs
        b = np.broadcast_to(np.asarray(straight, dtype=float), (c,))
        for i in np.flatnonzero(self.turns & narrow & ~steering.locked & (b > 0.0)):
            x, y = prefs[i]
            prefs[i] = np.array([x - b[i] * y, y + b[i] * x]) / math.hypot(1.0, b[i])
        error = wrap_angle(self.heading - yaw[:c])
        self.heading[np.abs(error) <= ALIGN_TOLERANCE] = np.nan
        self.rate[:] = np.nan
        steered = np.array([state in (None, RobotState.STUCK) for state in steering.navigation],
                           bool)
        for i in np.flatnonzero(self.turns & steered & ~steering.reached):
            if np.isnan(self.heading[i]):
                if not np.allclose(steering.target[i], self.stop[i]):
                    continue   # not on its way to a corner (or waiting clear of a passage)
                # Straight at the corner, as near as it is (no goal tolerance), slowing down.
                way = self.stop[i] - pos[i]
                dist = math.hypot(*way)
                cruise = cfg.pref_speed[i] if cfg.pref_speed[i] > 0.0 else cfg.max_speed[i]
                speed = min(cruise * min(1.0, dist / max(cfg.slowdown_distance, 1e-9)),
                            dist / cfg.period)
                prefs[i] = max(speed, min(MIN_APPROACH, dist / cfg.period)) * way / dist
                error[i] = wrap_angle(math.atan2(way[1], way[0]) - yaw[i])
                if abs(error[i]) <= SHIM_ANGLE:
                    continue
            self.rate[i] = float(np.clip(ALIGN_GAIN * error[i], -cfg.max_angular_speed[i],
                                         cfg.max_angular_speed[i]))
            # What the others see it do: its point ahead moves sideways as it turns.
            side = np.array([-math.sin(yaw[i]), math.cos(yaw[i])])
            prefs[i] = self.rate[i] * lookahead[i] * side

    def steer_commands(self, cfg, cmd, velocities, pos, yaw, steering, narrow, active,
                       previous):
        """
        Return the commands (C, 3) of the robots that turn at corners, where that decides.

        A robot turning in place this tick (``align_prefs``): v = 0 and the yaw rate chosen
        there, whatever the solver made of its sideways point ahead (its velocity near
        others is theirs to avoid; walls and robots beside its body ``keep_clear``'s). A
        robot driving along its route where it is narrow (narrow (C,) bool): the speed along
        its heading the solver gave its point ahead (velocities (C, 2)), and a yaw rate
        toward its target (ALIGN_GAIN per radian, within max_angular_speed): in a passage
        its polygon fits only along it, and the sideways part of an avoiding velocity would
        turn it across. pos (C, 2) [m], yaw (C,) [rad]; active (C,) bool: the robots
        commanded (the others keep their zero commands); previous (C, 3): the last commands,
        from which v and w change within the acceleration limits.
        """
        cmd = cmd.copy()
        c = len(cmd)
        turning = np.isfinite(self.rate) & active
        cmd[turning, 0] = cmd[turning, 1] = 0.0
        cmd[turning, 2] = self.rate[turning]
        steered = np.array([state in (None, RobotState.STUCK) for state in steering.navigation],
                           bool)
        along = (self.turns[:c] & narrow & steered & active & ~turning & ~steering.reached
                 & np.isnan(self.stop[:, 0]) & np.any(cmd != 0.0, axis=1))
        for i in np.flatnonzero(along):
            way = steering.target[i] - pos[i]
            if math.hypot(*way) <= 0.0:
                continue
            h = np.array([math.cos(yaw[i]), math.sin(yaw[i])])
            error = wrap_angle(math.atan2(way[1], way[0]) - yaw[i])
            v = float(np.clip(velocities[i] @ h, -cfg.max_speed[i], cfg.max_speed[i]))
            cmd[i] = (v, 0.0, float(np.clip(ALIGN_GAIN * error, -cfg.max_angular_speed[i],
                                            cfg.max_angular_speed[i])))
        changed = turning | along
        if changed.any():
            accel, decel, angular = (value[:c][changed] for value in cfg.accel_limits)
            cmd[changed, 0] = drive.limit_change(cmd[changed, 0], previous[changed, 0],
                                                 accel, decel, cfg.period)
            cmd[changed, 2] = drive.limit_change(cmd[changed, 2], previous[changed, 2],
                                                 angular, angular, cfg.period)
        return cmd


def keep_clear(cfg, cmd, centre, yaw, model, present):
    """
    Return the commands (C, 3), slowed where a robot's polygon would swing near a wall.

    For the robots that turn at corners, and for holonomic robots with a footprint that turn:
    the polygon, padded, placed where the command takes the robot in one and in two periods,
    against the map's walls near it (model : MapModel or None) and the other robots where
    they are now (polygons, or discs of their radius; present (N,) bool: the rows avoided).
    ORCA steers the point ahead; the rest of the body turns about the axle, and a rear corner
    swings sideways by its distance behind the axle over the point ahead's distance times as
    much as the point does, the other way: beside the rear, no half-plane of the point's
    velocity stops that. A holonomic robot's polygon is swept over one period's turn in its
    half-planes; a turn that goes on for a period or two more (its odometry and its commands
    late, over a network) would swing a corner into a jamb it had centimetres from. A command
    that would bring the polygon nearer a wall or robot than it is now, within WALL_GAP
    (ROBOT_GAP) of it, is scaled by the first of GUARD_SCALES (a holonomic robot: of
    TURN_SCALES, its velocity is ORCA's) that does not. centre (N, 2) [m] the axles and yaw
    (N,) [rad] when the command takes effect.
    """
    cmd = cmd.copy()
    c = len(cmd)
    shaped = np.array([p is not None for p in cfg.footprint[:c]], bool)
    turning = shaped & ~np.asarray(cfg.differential[:c], bool) & (cmd[:, 2] != 0.0)
    guarded = (turns_at_corners(cfg)[:c] & np.any(cmd != 0.0, axis=1)) | turning
    for i in np.flatnonzero(guarded):
        polygon = np.asarray(cfg.footprint[i], dtype=float)
        reach = float(np.hypot(*polygon.T).max()) + cfg.footprint_padding
        travel = 2.0 * cfg.period * float(np.hypot(cmd[i, 0], cmd[i, 1]))
        walls = (np.zeros((0, 2, 2)) if model is None else model.walls_near(
            centre[i:i + 1], np.array([reach + travel + WALL_GAP])))
        near = present & (np.hypot(*(centre - centre[i]).T)
                          < reach + travel + ROBOT_GAP + cfg.radius)
        near[i] = False
        others = [(np.asarray(cfg.footprint[j], dtype=float), cfg.radius[j], centre[j], yaw[j])
                  for j in np.flatnonzero(near)]
        if not len(walls) and not others:
            continue
        pose = np.array([centre[i, 0], centre[i, 1], yaw[i]])
        now = _gaps(polygon, cfg.footprint_padding, pose, walls, others)
        gap = np.where(np.arange(len(now)) == 0, WALL_GAP, ROBOT_GAP)
        # No point of the polygon moves farther in two periods than the speed and the turn at
        # its reach take it, and no gap shrinks by more: the command as it is passes.
        sweep = 2.0 * cfg.period * (float(np.hypot(cmd[i, 0], cmd[i, 1]))
                                    + reach * abs(float(cmd[i, 2])))
        if (now - sweep >= gap).all():
            continue
        floor = np.minimum(now, gap)
        if turning[i]:
            moves = [(cmd[i, 0], cmd[i, 1], turn * cmd[i, 2], _glide) for turn in TURN_SCALES]
        else:
            moves = [(forward * cmd[i, 0], cmd[i, 1], turn * cmd[i, 2], _arc)
                     for forward, turn in GUARD_SCALES]
        for vx, vy, w, pose_after in moves:
            if all((_gaps(polygon, cfg.footprint_padding,
                          pose_after(pose, vx, vy, w, k * cfg.period), walls, others)
                    >= floor - 1e-6).all() for k in (1, 2)):
                break
        cmd[i] = vx, vy, w
    return cmd


def _gaps(polygon, padding, pose, walls, others):
    """
    Return [m] the gaps of the polygon at ``pose``, less padding: walls first, then others.

    walls (M, 2, 2) (none: inf); others : [(polygon or None, radius, centre, yaw)].
    """
    placed = placed_polygon(polygon, pose)
    out = [float(polygon_segments_gap(placed, walls).min()) if len(walls) else math.inf]
    for shape, radius, centre, yaw in others:
        if shape.ndim == 2:
            out.append(convex_gap(placed, placed_polygon(shape, [centre[0], centre[1], yaw])))
        else:
            out.append(polygon_disc_gap(placed, centre, radius))
    return np.array(out) - padding


def _glide(pose, vx, vy, w, dt):
    """Return the pose (3,) a holonomic robot reaches with body velocity (vx, vy), w in dt."""
    x, y, yaw = pose
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([x + (c * vx - s * vy) * dt, y + (s * vx + c * vy) * dt, yaw + w * dt])


def _arc(pose, v, vy, w, dt):
    """Return the pose (3,) a unicycle reaches from ``pose`` with (v, w) in dt [s] (not vy)."""
    x, y, yaw = pose
    turn = w * dt
    if abs(turn) < 1e-9:
        return np.array([x + v * dt * math.cos(yaw), y + v * dt * math.sin(yaw), yaw])
    r = v / w
    return np.array([x + r * (math.sin(yaw + turn) - math.sin(yaw)),
                     y - r * (math.cos(yaw + turn) - math.cos(yaw)), yaw + turn])


def narrow_turns(cfg, narrow):
    """
    Return the tick's FleetConfig: robots that turn at corners turn slowly where narrow.

    narrow (C,) bool: the way near the robot is narrower than its circumscribed disc. Such a
    robot's max_angular_speed is at most NARROW_TURN_RATE this tick: its polygon is swept
    over that turn only (``avoidance.footprint_rows``), which leaves it room in a door it
    fits with a few centimetres to spare, and its commands keep to it. ``cfg`` itself when
    no robot is slowed.
    """
    c = len(narrow)
    slow = np.zeros(cfg.n, bool)
    slow[:c] = turns_at_corners(cfg)[:c] & narrow
    slow &= cfg.max_angular_speed > NARROW_TURN_RATE
    if not slow.any():
        return cfg
    return dataclasses.replace(cfg, max_angular_speed=np.where(
        slow, NARROW_TURN_RATE, cfg.max_angular_speed))


def turning_shapes(cfg):
    """Whether a commanded robot is holonomic with a footprint (keep_clear guards its turn)."""
    c = cfg.n_controlled
    return any(p is not None and not diff
               for p, diff in zip(cfg.footprint[:c], cfg.differential[:c]))


def turns_at_corners(cfg):
    """(N,) bool: the robots that stop and turn in place at corners (differential, shaped)."""
    shaped = np.array([p is not None for p in cfg.footprint], bool)
    return cfg.differential & shaped & bool(cfg.footprint_differential)


def _corner(points, k, grid, reach):
    """``Corners._corner`` uncached."""
    d0, d1 = points[k] - points[k - 1], points[k + 1] - points[k]
    h0, h1 = math.atan2(d0[1], d0[0]), math.atan2(d1[1], d1[0])
    if abs(wrap_angle(h1 - h0)) <= CORNER_ANGLE:
        return None
    arc = float(np.hypot(*np.diff(points[:k + 1], axis=0).T).sum())
    span = NARROW_SPAN * reach
    before = _least_clearance(points, arc - span, arc, grid) < reach
    after = _least_clearance(points, arc, arc + span, grid) < reach
    if not (before or after):
        return None
    # Entering a narrow stretch: back along its line; leaving one: on along it.
    way = (-np.array([math.cos(h1), math.sin(h1)]) if after
           else np.array([math.cos(h0), math.sin(h0)]))
    stop, room = points[k], _clearance_at(grid, points[k])
    for shift in np.arange(SHIFT_STEP, MAX_SHIFT + 1e-9, SHIFT_STEP):
        if room >= reach + CORNER_ROOM:
            break
        there = _clearance_at(grid, points[k] + shift * way)
        if there <= room:
            break   # no more room that way
        stop, room = points[k] + shift * way, there
    return stop, _point_at(points, arc + AIM)


def _clearance_at(grid, point):
    """Return [m] from ``point`` (2,) to the nearest occupied cell's edge (inf off the map)."""
    if not grid.inside(point[None])[0]:
        return math.inf
    col, row = grid.world_to_cell(point[None])[0]
    return (float(grid.distance_cells()[row, col]) - 0.5) * grid.resolution


def _least_clearance(points, arc0, arc1, grid):
    """Return [m] how near the route comes to an occupied cell's edge from arc0 to arc1 [m]."""
    middle = 0.5 * (arc0 + arc1)
    segment = np.zeros(1, np.int64)
    start = _point_at(points, middle)
    return float(route_clearance(points, np.array([0, len(points)], np.int64), segment,
                                 start[None], middle - arc0, arc1 - middle,
                                 grid.distance_cells(), grid.origin, grid.resolution)[0])


def _point_at(points, arc):
    """Return the point (2,) at arc length ``arc`` [m] along a (K, 2) polyline (clamped)."""
    lengths = np.hypot(*np.diff(points, axis=0).T)
    ends = np.cumsum(lengths)
    k = int(min(np.searchsorted(ends, arc), len(lengths) - 1))
    t = 0.0 if lengths[k] <= 0.0 else float(np.clip((arc - (ends[k] - lengths[k]))
                                                    / lengths[k], 0.0, 1.0))
    return points[k] + t * (points[k + 1] - points[k])


def _on_line(pos, yaw, stop, corner, aim):
    """
    Whether a robot at pos (2,), yaw [rad] stands between a stop and its corner, turned on.

    Within CORNER_REACH of the line from ``stop`` through ``corner`` (between them), and
    within SHIM_ANGLE of the heading toward ``aim``.
    """
    d = corner - stop
    length = math.hypot(*d)
    if length <= 0.0:
        return False
    t = float((pos - stop) @ d) / length
    across = abs(float(d[0] * (pos[1] - stop[1]) - d[1] * (pos[0] - stop[0]))) / length
    heading = math.atan2(aim[1] - pos[1], aim[0] - pos[0])
    return (-CORNER_REACH <= t <= length + CORNER_REACH and across <= CORNER_REACH
            and abs(wrap_angle(heading - yaw)) <= SHIM_ANGLE)


def _cramped(pos, yaw, stop, grid, reach):
    """
    Whether a robot at pos (2,), yaw [rad] can neither turn toward its stop nor is there.

    Where the map leaves it less than its circumscribed radius ``reach`` [m] (it cannot turn
    in place) and the stop is nearer than that, more than SHIM_ANGLE off its heading (a
    route planned from where it stands, stepping sideways onto its lane): turning toward the
    stop would swing its body into a wall, so it drives on along its route instead.
    """
    way = stop - pos
    dist = math.hypot(*way)
    if dist <= CORNER_REACH or dist >= reach or _clearance_at(grid, pos) >= reach:
        return False
    return abs(wrap_angle(math.atan2(way[1], way[0]) - yaw)) > SHIM_ANGLE


def _off_segment(point, a, b):
    """Whether ``point`` (2,) lies beyond segment a -> b (not on it, within a millimetre)."""
    d = b - a
    length2 = float(d @ d)
    if length2 <= 0.0:
        return True
    t = float(np.clip((point - a) @ d / length2, 0.0, 1.0))
    return math.hypot(*(a + t * d - point)) > 1e-3


__all__ = ['Corners', 'keep_clear', 'narrow_turns', 'turning_shapes', 'turns_at_corners']
