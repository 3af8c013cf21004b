"""
The third phase of a tick: the velocities that avoid every robot, person, wall and scan return.

``Avoidance.avoid`` brings the scans into the people tracker and the scan memory, makes the
moving tracks and the known people immovable agents after the robots, gathers the obstacles
(map walls, remembered scan segments) and calls the core's solver once for all rows; a robot
that makes the solver fail is left out of the tick (``solve_isolating``), not the fleet.
"""

from functools import partial
import math

import numpy as np
from orca_nav.core import Obstacles
from orca_nav.core.geometry import convex_hull, placed_polygon
from orca_nav.core.orca.keepout import keep_out
from orca_nav.core.orca.lines import SLOW_SPEED
from orca_nav.core.orca.solver import Agents, solve, SolverSettings
from orca_nav.core.routes.way_round import way_blocked, way_round, WAY_ROUND_WINDOW

from .commands import align_rate
from .people import MovingObjects
from .scan_memory import ScanMemory

# A solver call that raises is re-run without the robot that makes it fail, at most this many
# times per tick (each search costs about log2(N) solver calls); beyond, the tick fails.
MAX_SOLVER_CULPRITS = 4
# Known moving obstacles (``FleetInputs.set_people``) faster than this [m/s] or larger than
# this [m] are no person nor vehicle a robot shares a floor with: the row is refused.
MAX_PEOPLE_SPEED = 5.0
MAX_PEOPLE_RADIUS = 2.0
# [m/s] People and tracks slower than this have no keep-out (``_keep_out``): they stand.
KEEPOUT_MIN_SPEED = 0.1
# How far a robot's half-planes toward people lean to the keep-out's choice: they are taken
# about (1 - f) * velocity + f * choice, not the velocity alone (``_keep_out``). 0: RVO2's,
# about the velocity; 1: about the choice (more contacts: every turn the keep-out makes is
# taken at once, also its slow candidates). Measured in docs/crowds.md.
KEEPOUT_LINE_LEAN = 0.25
# A way round standing people (``_way_round``): planned when one of them (grown by both radii
# and WAY_ROUND_PAD [m]) is within the first WAY_ROUND_LOOK [m] of a robot's straight way; the
# robot heads for the point WAY_ROUND_CARROT [m] along it.
WAY_ROUND_PAD = 0.1
WAY_ROUND_LOOK = 3.0
WAY_ROUND_CARROT = 1.0
# At most this many ways round are planned per tick (1-2 ms each); the robots beyond keep
# the direction planned for them within the last WAY_ROUND_KEEP [s] (a turn of the robots
# each tick serves them all).
WAY_ROUND_BUDGET = 16
WAY_ROUND_KEEP = 0.5
# [s] A scan segment the robots have seen in one place this long is a wall: the way round
# goes round it (scan_way_round), and when it is also wider than any person, returns on it
# are no people (a piece of it seen past a robot was taken for a walker).
SCAN_WALL_AGE = 1.0


# A robot with a footprint is avoided as the hull of its polygon at these fractions of the
# turn it may make within a period (``footprint_rows``): a holonomic one toward its way, a
# differential one either way (its turn is what the solver's velocity for its point ahead
# asks for).
SWEEP = (0.0, 0.5, 1.0)
DIFF_SWEEP = (-1.0, -0.5, 0.0, 0.5, 1.0)


def shaped_footprints(cfg):
    """
    Return (N,) the footprints avoidance and routes use (None: a disc).

    Every holonomic robot's; a differential robot's only with footprint_differential, else
    it is the disc that holds its polygon. Its point ahead cannot follow a velocity sideways,
    so its body would go where the polygon's half-planes did not plan it (carts in a door
    touched the jambs): control/corners.py makes it stop and turn in place before a narrow
    place, drive along it, and keeps its turns off walls and robots.
    """
    return tuple(None if diff and not cfg.footprint_differential else polygon
                 for polygon, diff in zip(cfg.footprint, cfg.differential))


def footprint_rows(cfg, obs, ways):
    """
    Return the core's footprint arguments: each robot's polygon as its ORCA row sees it.

    Turned to the robot's heading when the command takes effect and placed relative to its
    ORCA point (a differential robot's point ahead); grown by footprint_padding and the
    localisation's inflation (``footprint_body``). No footprint in the fleet: none. The
    polygon covers every heading the robot may turn to within the period toward its way
    (ways: the preferred velocities, ``commands.align_rate``); a differential robot's every
    heading within max_angular_speed x period either way (the tick's, ``corners.narrow_turns``).
    """
    shaped = shaped_footprints(cfg)
    polygons = [p for p in shaped if p is not None]
    if not polygons:
        return {}
    c = cfg.n_controlled
    turns = np.zeros(cfg.n)
    turns[:c] = np.clip(align_rate(ways[:c], obs.ahead_yaw[:c]), -cfg.max_angular_speed[:c],
                        cfg.max_angular_speed[:c]) * cfg.period
    copies = max(len(DIFF_SWEEP) if diff else len(SWEEP)
                 for p, diff in zip(shaped, cfg.differential) if p is not None)
    rows = np.full((cfg.n, copies * max(len(p) for p in polygons), 2), np.nan)
    body = np.zeros(cfg.n)
    for r, polygon in enumerate(shaped):
        if polygon is None:
            continue
        yaw = obs.ahead_yaw[r]
        c, s = np.cos(yaw), np.sin(yaw)
        # Every heading the robot may turn to within the step: the hull of the turned copies
        # (the arcs its corners sweep bulge by R (1 - cos(turn / 2)) beyond it: 1.5 mm for a
        # 0.54 m corner at 1.5 rad/s and 10 Hz, in the body's padding).
        if cfg.differential[r]:
            sweep = cfg.max_angular_speed[r] * cfg.period * np.array(DIFF_SWEEP)
        else:
            sweep = turns[r] * np.array(SWEEP)
        copies = np.concatenate([placed_polygon(polygon, [0.0, 0.0, yaw + a]) for a in sweep])
        swept = convex_hull(copies) - obs.lookahead[r] * np.array([c, s])
        rows[r, :len(swept)] = swept
        # contact_radius = the disc that holds it (+ padding) + lookahead + inflation.
        body[r] = (obs.contact_radius[r] - obs.lookahead[r] - cfg.radius[r]
                   + cfg.footprint_padding)
    return {'footprint': rows, 'footprint_body': body}


def wall_model(navigator):
    """Return the MapModel whose walls are ORCA obstacles, or None (no map, map_walls off)."""
    model = navigator.model
    if model is None or not navigator.config.map_walls:
        return None
    return model


class Avoidance:
    """The solver's call for the fleet and what it remembers: scan segments, failures."""

    def __init__(self, n_controlled: int, navigator, give_way, pose_history):
        """
        Start with no scan obstacles.

        navigator : has the map; give_way : the shares and locks; pose_history : where each
        robot was (``PoseHistory``), for the scans' poses.
        """
        self.scan_memory = ScanMemory(n_controlled)
        self.navigator = navigator
        self.give_way = give_way
        self.pose_history = pose_history
        self.solver_failures = 0   # solver calls that raised (then re-run)
        self.people_rejected = 0   # known people rows refused (set_people)
        self.ways_round = {}       # robot row -> (time, direction) of its last way round
        self._way_turn = 0         # the row the next tick's way-round budget starts at
        self.scan_wall_age = SCAN_WALL_AGE  # [s] (a test sets it to compare)

    def avoid(self, cfg, now, inputs, obs, steering, limits, people, warnings):
        """
        Return the new global velocities (N, 2) of the present rows at ``now`` [s].

        obs : the tick's ``Observation`` (its ``active`` loses the robots the solver failed
        with); steering : the tick's ``Steering``; limits : (max_accel, max_decel,
        accel_from) of ``Commands.reach``; people : PeopleTracker or None.
        Returns (velocities, moving tracks avoided). Updates the give-way locks.
        """
        new_vel = np.zeros_like(obs.pos)
        if not obs.active.any():
            return new_vel, MovingObjects.empty()
        moving = self._sense(cfg, now, inputs, obs, people, warnings)
        others = self._people_agents(cfg, now, inputs, moving, warnings)
        prefs = self._way_round(cfg, now, obs, steering, others)
        prefs, reference = self._keep_out(cfg, obs, prefs, others)
        ways = steering.prefs if steering.ways is None else steering.ways
        robots = self._robot_agents(cfg, now, obs, prefs, limits, ways, reference)
        settings = SolverSettings(cfg.period, cfg.neighbor_dist, cfg.max_neighbors,
                                  cfg.time_horizon, cfg.time_horizon_obst, True)
        idx, vel = self.solve_isolating(
            partial(self._solve_rows, cfg, now, obs, robots, others, settings),
            partial(_finite_rows, robots, obs.orca_radius), np.flatnonzero(obs.present),
            warnings)
        new_vel[idx] = vel
        left_out = obs.present.copy()
        left_out[idx] = False
        obs.active &= ~left_out  # robots the solver failed with: stopped this tick
        c = cfg.n_controlled
        self.give_way.update(cfg, now, steering.pref, new_vel[:c], obs.active[:c],
                             steering.locked)
        return new_vel, moving

    def _way_round(self, cfg, now, obs, steering, others):
        """
        Return the preferred velocities turned round standing people (``core.routes.way_round``).

        Standing: the moving tracks and known people slower than SLOW_SPEED. A robot keeps its
        preferred velocity (bit for bit) unless one of them blocks its straight way toward its
        target (the goal or its route's carrot). With ``scan_way_round``, a robot without a
        route (no map) also goes round the walls the scans show (``ScanMemory.walls`` of
        every robot, seen within obstacle_timeout); a robot on a route leaves walls to its
        route and the solver.
        At most WAY_ROUND_BUDGET robots are planned per tick; the others blocked keep a
        direction planned within WAY_ROUND_KEEP, or their preferred velocity.
        """
        prefs = steering.prefs
        centres, radius = np.zeros((0, 2)), np.zeros(0)
        if cfg.person_way_round and len(others.positions):
            standing = np.hypot(*others.velocities.T) < SLOW_SPEED
            centres, radius = others.positions[standing], others.radius[standing]
        c = cfg.n_controlled
        walls = np.zeros((0, 2, 2))
        unrouted = np.zeros(c, bool)
        if cfg.scan_way_round and cfg.scan_enabled:
            unrouted = ~self.navigator.routed & obs.active[:c]
            if unrouted.any():
                # Walls, not people: in one place for scan_wall_age.
                walls = self.scan_memory.walls(now, 0.0, self.scan_wall_age,
                                               cfg.obstacle_timeout)
        if not len(centres) and not (len(walls) and unrouted.any()):
            return prefs
        middle = walls.mean(axis=1)
        half = 0.5 * np.hypot(*(walls[:, 1] - walls[:, 0]).T)
        out = prefs.copy()
        speed = np.hypot(*prefs[:c].T)
        rows = np.flatnonzero(obs.active[:c] & (speed > 0.0) & ~steering.locked)
        rows = np.roll(rows, -int(np.searchsorted(rows, self._way_turn)))
        planned = 0
        # From the robot's centre, round people with its body's radius: a differential
        # robot's ORCA disc is its point ahead grown by the lookahead, which narrowed every
        # gap between two people by twice that, and the start moved as the robot turned.
        # Walls keep the reach of that disc: a scan's segment can end short of the wall, and
        # a robot that passed a wall's end at its body's reach (plus the pad) touched it.
        yaw = obs.ahead_yaw[:c]
        centre = obs.orca_pos[:c] - obs.lookahead[:c, None] * np.column_stack(
            [np.cos(yaw), np.sin(yaw)])
        body = obs.contact_radius[:c] - obs.lookahead[:c]
        for i in rows:
            reach = radius + body[i] + WAY_ROUND_PAD
            wall_reach = obs.contact_radius[i] + WAY_ROUND_PAD
            start = centre[i]
            seen = None
            if unrouted[i]:
                # Only the walls that may come within its look (and the grid's window).
                near = (np.hypot(*(middle - start).T) - half
                        < max(WAY_ROUND_LOOK, math.sqrt(2.0) * WAY_ROUND_WINDOW) + wall_reach)
                seen = walls[near]
            if not way_blocked(start, steering.target[i], centres, reach, WAY_ROUND_LOOK,
                               seen, wall_reach):
                continue
            if planned < WAY_ROUND_BUDGET:
                planned += 1
                self._way_turn = i + 1
                way = way_round(start, steering.target[i], centres, reach, WAY_ROUND_CARROT,
                                walls=seen, wall_reach=wall_reach)
                self.ways_round[i] = (now, way)
            else:
                then, way = self.ways_round.get(i, (-np.inf, None))
                if now - then > WAY_ROUND_KEEP:
                    continue
            if way is not None:
                out[i] = speed[i] * way
        return out

    def _keep_out(self, cfg, obs, prefs, others):
        """
        Return the preferred velocities turned out of walkers' ways (``core.orca.keepout``).

        Walkers: the moving tracks and known people faster than KEEPOUT_MIN_SPEED; the
        preferred velocities are unchanged without them (or with person_keepout_time 0), and
        those of differential robots unless person_keepout_differential. Also returns the
        solver's ``line_reference`` (N, 2): for a robot the keep-out turned, its half-planes
        toward people are taken about its velocity leaned KEEPOUT_LINE_LEAN to the turned
        preference (a side of a walker the velocity alone would not pass on); NaN rows: about
        the velocity, as RVO2.
        """
        reference = np.full((cfg.n, 2), np.nan)
        if cfg.person_keepout_time <= 0.0 or not len(others.positions):
            return prefs, reference
        walking = np.hypot(*others.velocities.T) > KEEPOUT_MIN_SPEED
        if not walking.any():
            return prefs, reference
        out = np.empty((cfg.n, 2))
        keeping = obs.active & (~cfg.differential | cfg.person_keepout_differential)
        keep_out(obs.orca_pos, np.ascontiguousarray(prefs, float), obs.contact_radius,
                 keeping, np.ascontiguousarray(others.positions[walking]),
                 np.ascontiguousarray(others.velocities[walking]),
                 np.ascontiguousarray(others.radius[walking]), cfg.person_keepout_time,
                 cfg.person_keepout_buffer, cfg.person_keepout_weight, out)
        turned = (out != prefs).any(axis=1)
        reference[turned] = (KEEPOUT_LINE_LEAN * out[turned]
                             + (1.0 - KEEPOUT_LINE_LEAN) * obs.orca_vel[turned])
        return out, reference

    def _sense(self, cfg, now, inputs, obs, people, warnings):
        """Bring the fresh robots' scans into the tracker and the memory; the moving tracks."""
        if not cfg.scan_enabled:
            return MovingObjects.empty()
        # Every robot's pose at each fresh scan's time, for the tracker and the memory.
        scans = [scan for scan in inputs.scans if obs.fresh[scan.robot]]
        poses = self.pose_history.at(np.array([scan.time for scan in scans], float))
        moving = self._track(cfg, people, scans, poses, now, obs.present)
        model = wall_model(self.navigator)
        warnings += self.scan_memory.update(scans, obs.pos, obs.yaw, obs.fresh, obs.present,
                                            cfg.radius, cfg.scan_sensor_offset, poses,
                                            None if model is None else model.grid,
                                            moving=(moving, now))
        return moving

    def _solve_rows(self, cfg, now, obs, robots, others, settings, rows):
        """Return the velocities of robot rows ``rows`` (every other row follows them)."""
        agents = robots.take(rows)
        if len(others.positions):
            if agents.footprint is not None:
                # People and observed robots are discs beside the robots' polygons.
                k = len(others.positions)
                others = others._replace(
                    footprint=np.full((k,) + agents.footprint.shape[1:], np.nan),
                    footprint_body=np.zeros(k))
            agents = agents.concat(others)
        return solve(agents, settings, self._obstacles(cfg, now, rows, obs))[:len(rows)]

    def _robot_agents(self, cfg, now, obs, prefs, limits, ways, reference):
        """
        Every robot's row (N), with the margins that yield and the give-way shares.

        Margins are preferences: they yield before a robot is left without a move (a door
        the true disc passes, a gap between people). A robot's safety_margin yields against
        walls only; against every agent it stays part of the disc (with acceleration limits,
        robots whose margins yielded touched: two_rooms, 0.02 m). person_margin and the
        margins of robots that do not avoid yield; those are looked for as far ahead as a
        walker's speed needs.
        """
        yields = ~self.give_way.reciprocates(cfg)
        max_accel, max_decel, accel_from = limits
        return Agents(
            obs.orca_pos, obs.orca_vel, prefs, obs.contact_radius, cfg.max_speed,
            active=obs.active, max_accel=max_accel, max_decel=max_decel, accel_from=accel_from,
            margin=np.broadcast_to(cfg.safety_margin, (cfg.n,)),
            agent_horizon=np.where(yields, cfg.person_time_horizon, cfg.time_horizon),
            neighbor_reach=np.where(yields, cfg.person_neighbor_dist, cfg.neighbor_dist),
            keep_margin=~yields, heading=obs.ahead_yaw,
            lookahead=np.where(cfg.differential, obs.lookahead, 0.0),
            max_turn_rate=np.broadcast_to(cfg.max_angular_speed, (cfg.n,)),
            lead_time=np.zeros(cfg.n), line_reference=reference,
            **footprint_rows(cfg, obs, ways),
            **self.give_way.core_arguments(cfg, now, np.arange(cfg.n)))

    def _people_agents(self, cfg, now, inputs, moving, warnings):
        """
        Rows (K) of the moving tracks and the known people: immovable, no acceleration limits.

        Where they will be when the commands take effect, going on with their velocity.
        Those who stand (slower than SLOW_SPEED) are looked for only time_horizon ahead, as
        robots are: a walker's person_time_horizon toward a person who stands let a robot
        close only a fifth of the gap per second (a goal among people took twice as long).
        """
        lead = cfg.command_delay if cfg.latency_compensation else 0.0
        known = self.known_people(cfg, inputs, warnings)
        position = np.concatenate([moving.at(now, now + lead),
                                   known.at(inputs.people_time, now + lead)])
        velocity = np.concatenate([moving.velocity, known.velocity])
        radius = np.concatenate([moving.radius, known.radius])
        k = len(radius)
        speed = np.hypot(*velocity.T) if k else np.zeros(0)
        ones = np.ones(k)
        shares = {'immovable': np.ones(k, bool)}
        if cfg.avoidance_weight is not None:
            shares['weights'] = ones
        if cfg.ignore is not None:
            # A group of their own that no robot ignores.
            own = np.asarray(cfg.ignore).shape[1]
            shares['groups'] = np.full(k, own, np.int64)
            shares['ignore'] = np.zeros((k, own + 1), bool)
        return Agents(position, velocity, velocity, radius, speed, active=np.zeros(k, bool),
                      max_accel=np.zeros(k), max_decel=np.zeros(k), accel_from=velocity,
                      margin=cfg.person_margin * ones,
                      agent_horizon=np.where(speed < SLOW_SPEED, cfg.time_horizon,
                                             cfg.person_time_horizon),
                      neighbor_reach=cfg.person_neighbor_dist * ones,
                      keep_margin=np.zeros(k, bool), heading=np.zeros(k),
                      lookahead=np.zeros(k), max_turn_rate=np.zeros(k),
                      lead_time=cfg.person_lead_time * ones,
                      line_reference=np.full((k, 2), np.nan), **shares)

    def _track(self, cfg, people, scans, poses, now, present):
        """Update the people tracker with the fresh robots' scans; return the moving tracks."""
        if people is None:
            return MovingObjects.empty()
        if scans:
            model = wall_model(self.navigator)
            people.observe(scans, poses, present, cfg.radius, cfg.scan_sensor_offset,
                           None if model is None else model.grid,
                           lambda i: self.scan_memory.walls(
                               now, people.config.max_diameter, self.scan_wall_age, robot=i))
        return people.moving(now)

    def known_people(self, cfg, inputs, warnings):
        """Return the rows of ``inputs.people`` that are plausible; warn about the rest."""
        people = inputs.people
        if people is None or len(people) == 0:
            return MovingObjects.empty()
        with np.errstate(invalid='ignore', over='ignore'):
            ok = ((np.abs(people.position) <= cfg.max_coordinate).all(axis=1)
                  & (np.hypot(*people.velocity.T) <= MAX_PEOPLE_SPEED)
                  & (people.radius > 0.0) & (people.radius <= MAX_PEOPLE_RADIUS)
                  & np.isfinite(inputs.people_time))
        if not ok.all():
            bad = np.flatnonzero(~ok)
            self.people_rejected += len(bad)
            k = bad[0]
            warnings.append((None, f'people: {len(bad)} known moving obstacle(s) refused, e.g. '
                                   f'at {people.position[k].tolist()} with velocity '
                                   f'{people.velocity[k].tolist()} m/s and radius '
                                   f'{people.radius[k]:g} m (not finite, faster than '
                                   f'{MAX_PEOPLE_SPEED:g} m/s or radius not in (0, '
                                   f'{MAX_PEOPLE_RADIUS:g}] m)'))
            people = MovingObjects(people.id[ok], people.position[ok], people.velocity[ok],
                                   people.radius[ok])
        return people

    def _obstacles(self, cfg, now, idx, obs):
        """
        Obstacles for the core: map walls near the active robots and remembered scan segments.

        idx : rows of the robots handed to the core; returns None when there is nothing.
        """
        c = cfg.n_controlled
        model = wall_model(self.navigator)
        parts, owners = [], []
        if cfg.scan_enabled:
            agent = np.full(cfg.n, -1)
            agent[idx] = np.arange(len(idx))
            segments, owner = self.scan_memory.segments(now, agent[:c], cfg.obstacle_timeout,
                                                        cfg.share_obstacles)
            parts.append(segments)
            owners.append(owner)
        if model is not None and sum(len(p) for p in parts) == 0:
            return model.obstacles  # the map's walls alone: built once per map
        if model is not None:
            reach = cfg.time_horizon_obst * cfg.max_speed + obs.orca_radius
            walls = model.walls_near(obs.orca_pos[obs.active], reach[obs.active])
            parts.append(walls)
            owners.append(np.full(len(walls), -1))
        if sum(len(p) for p in parts) == 0:
            return None
        return Obstacles.build(segments=np.concatenate(parts),
                               segment_owner=np.concatenate(owners))

    def solve_isolating(self, solve_rows, finite, idx, warnings):
        """
        Run ``solve_rows(rows)`` on rows idx; if it raises, re-run it without the culprits.

        Robots whose solver inputs are not finite (``finite(rows)`` -> bool per row) go first;
        then, while it still fails, the first row whose addition makes it fail (binary search
        over prefixes of the rows) is left out, MAX_SOLVER_CULPRITS times at most. Returns
        (rows solved, their velocities); re-raises the first error when that does not help.
        """
        try:
            return idx, solve_rows(idx)
        except Exception as exc:  # noqa: B902 -- the solver failing must not stop everyone
            first = exc
        self.solver_failures += 1
        ok = finite(idx)
        left_out = list(idx[~ok])
        rows = idx[ok]
        for _ in range(MAX_SOLVER_CULPRITS + 1):
            try:
                vel = solve_rows(rows)
                break
            except Exception:  # noqa: B902 -- searched for below
                if len(left_out) >= MAX_SOLVER_CULPRITS or len(rows) == 0:
                    raise first
            culprit = _first_failing_row(solve_rows, rows)
            if culprit is None:
                raise first
            left_out.append(culprit)
            rows = rows[rows != culprit]
        else:
            raise first
        for i in left_out:
            warnings.append((int(i), f'solver: failed with this robot ({first!r}); left out '
                                     'of this tick and stopped'))
        return rows, vel


def _finite_rows(robots, orca_radius, rows):
    """(len(rows),) bool: the robot rows whose solver inputs are all finite."""
    values = np.column_stack([robots.positions[rows], robots.velocities[rows],
                              robots.pref_velocities[rows], orca_radius[rows],
                              robots.max_speed[rows]])
    return np.isfinite(values).all(axis=1)


def _first_failing_row(solve_rows, rows):
    """Return the row whose addition makes solve_rows(rows[:k]) fail; rows[:all] must fail."""
    def fails(k):
        try:
            solve_rows(rows[:k])
        except Exception:  # noqa: B902 -- any failure counts
            return True
        return False

    if len(rows) == 0:
        return None
    lo, hi = 0, len(rows)  # solve_rows(rows[:lo]) succeeds (none: trivially), rows[:hi] fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fails(mid):
            hi = mid
        else:
            lo = mid
    return rows[hi - 1]


__all__ = ['Avoidance', 'MAX_PEOPLE_RADIUS', 'MAX_PEOPLE_SPEED', 'MAX_SOLVER_CULPRITS',
           'wall_model']
