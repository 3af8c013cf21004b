"""
One control tick of the whole fleet, from arrays: no ROS, no clock, no threads.

The node copies its newest validated inputs into a ``FleetInputs`` and calls
``FleetController.step(inputs, now)``; the answer (``StepResult``) holds every commanded robot's
command and state and what the markers show. Example::

    >>> import numpy as np
    >>> from orca_nav.control import FleetConfig, FleetController, FleetInputs
    >>> ctrl = FleetController(FleetConfig.uniform(['r1']))
    >>> ctrl.set_goal(0, 2.0, 0.0)
    True
    >>> inputs = FleetInputs.empty(1)
    >>> inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    >>> result = ctrl.step(inputs, now=0.05)
    >>> str(result.states[0]), result.commands[0].round(2).tolist()
    ('active', [0.49, -0.07, 0.0])
"""

from dataclasses import dataclass, field

import numpy as np
from orca_nav.core import compute_velocities, drive, Obstacles
from orca_nav.core.geometry import compose_poses, point_segment_distance

from .config import FleetConfig
from .giveway import GiveWay
from .localisation import Localisation
from .navigation import NavigationConfig, Navigator
from .passages import narrowed
from .people import MovingObjects, PeopleTracker
from .pose_history import extrapolate, MAX_EXTRAPOLATION, PoseHistory
from .scan_memory import ScanMemory
from .states import RobotState

# Odometry whose twist is faster than PLAUSIBLE_SPEED_FACTOR x the robot's limit plus
# PLAUSIBLE_SPEED_SLACK is no measurement (a unit mistake, a glitch, a corrupt message): the
# message is refused. Generous on purpose: a robot pushed or sliding must not be refused.
PLAUSIBLE_SPEED_FACTOR = 10.0
PLAUSIBLE_SPEED_SLACK = 1.0  # [m/s] for the speed, [rad/s] for the yaw rate
# A solver call that raises is re-run without the robot that makes it fail, at most this many
# times per tick (each search costs about log2(N) solver calls); beyond, the tick fails.
MAX_SOLVER_CULPRITS = 4
# [s] between two warnings about one robot that stays stuck (where it is, what holds it).
STUCK_REPORT_PERIOD = 10.0
# At most this many stuck robots are reported (with what is near them) in one tick.
STUCK_REPORTS_PER_TICK = 5
# Known moving obstacles (``FleetInputs.set_people``) faster than this [m/s] or larger than
# this [m] are no person nor vehicle a robot shares a floor with: the row is refused.
MAX_PEOPLE_SPEED = 5.0
MAX_PEOPLE_RADIUS = 2.0


@dataclass
class FleetInputs:
    """
    The newest valid odometry of every robot (N rows) and the scans received since last tick.

    Odometry as REP 105 gives it: pose in the robot's odometry frame, twist in its body frame.
    """

    odom_xy: np.ndarray     # (N, 2) [m] odometry frame
    odom_yaw: np.ndarray    # (N,) [rad]
    twist: np.ndarray       # (N, 3) v_forward [m/s], v_left [m/s], yaw rate [rad/s]
    has_pose: np.ndarray    # (N,) bool: a valid odometry message has arrived
    odom_time: np.ndarray   # (N,) [s] when the newest valid odometry was received
    scans: list = field(default_factory=list)  # ScanInput received since the last tick
    # (N,) bool: the newest odometry message was refused (unreadable, NaN, zero quaternion);
    # the robot is stopped until a valid one arrives. None: all False.
    rejected: np.ndarray = None
    # Localisation (control/localisation.py): the newest valid pose of each robot in the
    # global frame (N, 3), its position standard deviation sigma (N,) [m] and its stamp (N,)
    # [s], NaN without one. None: no robot has one.
    loc_pose: np.ndarray = None
    loc_sigma: np.ndarray = None
    loc_time: np.ndarray = None
    # (N,) [s] the newest odometry's header stamp, which localisation poses' stamps are
    # matched against; NaN (or None: all): unknown, odom_time instead.
    odom_stamp: np.ndarray = None
    # Moving things the fleet is told about from outside (an external people tracker, a
    # forklift's own localisation): world position and velocity at ``people_time`` and radius
    # (no margin: ``person_margin`` is kept beyond it, yielding). They never avoid the robots.
    people: MovingObjects = None
    people_time: float = 0.0  # [s] the clock of ``odom_time``

    def __post_init__(self):
        """Give ``rejected`` and the localisation arrays their N rows when not passed."""
        n = len(self.has_pose)
        if self.rejected is None:
            self.rejected = np.zeros(n, bool)
        if self.loc_pose is None:
            self.loc_pose = np.zeros((n, 3))
        if self.loc_sigma is None:
            self.loc_sigma = np.zeros(n)
        if self.loc_time is None:
            self.loc_time = np.full(n, np.nan)
        if self.odom_stamp is None:
            self.odom_stamp = np.full(n, np.nan)

    @classmethod
    def empty(cls, n: int) -> 'FleetInputs':
        """Return the inputs of N robots of which none has odometry yet."""
        return cls(np.zeros((n, 2)), np.zeros(n), np.zeros((n, 3)), np.zeros(n, bool),
                   np.zeros(n))

    def set_odometry(self, i: int, *, x, y, yaw, time, v_forward=0.0, v_left=0.0,
                     yaw_rate=0.0, stamp=np.nan) -> None:
        """Store robot i's odometry (tests and scripts; the node writes the arrays)."""
        self.odom_stamp[i] = stamp
        self.odom_xy[i] = (x, y)
        self.odom_yaw[i] = yaw
        self.twist[i] = (v_forward, v_left, yaw_rate)
        self.has_pose[i] = True
        self.odom_time[i] = time
        self.rejected[i] = False

    def set_localisation(self, i: int, *, x, y, yaw, sigma=0.0, time) -> None:
        """Store robot i's localisation pose (global frame), its sigma [m] and stamp [s]."""
        self.loc_pose[i] = (x, y, yaw)
        self.loc_sigma[i] = sigma
        self.loc_time[i] = time

    def set_people(self, position, velocity, radius, *, time) -> None:
        """
        Store the known moving obstacles: position, velocity (K, 2) global, radius (K,) [m].

        ``time`` [s] is when the positions were true; the controller moves them on with
        their velocity. Rows with a value that is not finite, a speed above
        ``MAX_PEOPLE_SPEED`` or a radius outside (0, ``MAX_PEOPLE_RADIUS``] are refused by
        the controller (counted in ``people_rejected`` and warned about), the rest used.
        """
        position = np.asarray(position, dtype=float).reshape(-1, 2)
        k = len(position)
        self.people = MovingObjects(
            np.arange(k), position, np.asarray(velocity, dtype=float).reshape(k, 2),
            np.broadcast_to(np.asarray(radius, dtype=float), (k,)).copy())
        self.people_time = float(time)


@dataclass
class StepResult:
    """What one tick decided: commands and states of the C commanded robots, markers of all N."""

    commands: np.ndarray    # (C, 3) body frame vx [m/s], vy [m/s], wz [rad/s]
    states: list            # (C,) RobotState
    distance: np.ndarray    # (C,) [m] to the goal, inf without a goal
    positions: np.ndarray   # (N, 2) global [m]
    velocities: np.ndarray  # (N, 2) global ORCA velocities [m/s]
    known: np.ndarray       # (N,) bool: a valid pose has been received
    # (robot row or None, '<field>: message') for the log; the text before the first ':'
    # names what was wrong (e.g. 'odometry pose'), so a log can throttle per robot and field.
    warnings: list = field(default_factory=list)
    time: float = 0.0       # [s] the tick's time (``now`` of ``step``)
    # Moving tracks (people, unknown robots) avoided this tick, at ``time``.
    moving: MovingObjects = field(default_factory=MovingObjects.empty)


class FleetController:
    """
    Goals in, ORCA velocities and drive commands out, for a fleet described by a FleetConfig.

    Holds what persists between ticks: each commanded robot's goal and the scan memory.
    """

    def __init__(self, config: FleetConfig, navigation: NavigationConfig = NavigationConfig(),
                 executor=None):
        """
        Start with no goals, no map and no scan obstacles.

        executor : concurrent.futures executor for planning (default: one worker thread; a
        test may pass one that runs each job at once).
        """
        self.config = config
        c = config.n_controlled
        self.goal = np.zeros((c, 2))
        self.goal_yaw = np.zeros(c)
        self.has_goal = np.zeros(c, bool)
        self.scan_memory = ScanMemory(c)
        # Routes keep the planning radius (radius + safety_margin) + route_margin from walls.
        self.navigator = Navigator(config.planning_radius[:c], navigation, executor,
                                   true_radius=config.radius[:c])
        self.give_way = GiveWay(c)  # priority overrides and velocity locks
        self.people = PeopleTracker(config.people) if config.people is not None else None
        n = config.n
        self._good_pose = np.zeros((n, 3))        # last global pose that passed the checks
        self._good_time = np.full(n, -np.inf)     # its odometry time [s]
        self._bad_time = np.full(n, np.nan)       # odometry time of the last refused pose
        self.pose_history = PoseHistory(n)        # where each robot was (scans' poses)
        self.pose_history.at(np.zeros(1))  # compile its kernel now, not in the first tick
        self.localisation = Localisation(n)       # corrections from localisation poses
        self._sent = []  # (time it takes effect [s], (C, 3) command) of the last ticks
        self._stuck_report = np.full(c, np.nan)   # [s] last stuck warning (NaN: not stuck)
        self._last_command = None  # (C, 3) the commands of the last tick: accelerations' origin
        self.odom_rejected = np.zeros(n, np.int64)  # odometry refused here, per robot
        self.solver_failures = 0                  # solver calls that raised (then re-run)
        self.people_rejected = 0                  # known people rows refused (set_people)

    def reconfigure(self, config: FleetConfig, navigation: NavigationConfig = None) -> None:
        """Use new settings from the next tick on (same robots; goals and memory are kept)."""
        if config.names != self.config.names or config.n_controlled != self.config.n_controlled:
            raise ValueError('the robots of a running controller cannot change')
        self.config = config
        if config.people is None:
            self.people = None
        elif self.people is None:
            self.people = PeopleTracker(config.people)
        else:
            self.people.reconfigure(config.people)
        c = config.n_controlled
        self.navigator.reconfigure(config.planning_radius[:c], config.radius[:c],
                                   self.navigator.config if navigation is None else navigation)

    def set_map(self, grid) -> None:
        """Plan on this GridMap from now on (walls and routes are ready a moment later)."""
        self.navigator.set_map(grid)

    def set_route(self, i: int, points) -> None:
        """
        Follow an external route (K, 2) [m] to its last point; an empty one cancels it.

        After a cancel the robot keeps its goal and plans its own route (or goes straight).
        """
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        if len(points) == 0:
            self.navigator.goal_changed(i)
            return
        self._check_goal('route', points)
        self.goal[i] = points[-1]
        self.has_goal[i] = True
        self.navigator.set_external_route(i, points)

    def set_goal(self, i: int, x: float, y: float, yaw: float = 0.0) -> bool:
        """
        Give commanded robot i a goal in the global frame; False if it already had it.

        Raises ValueError (and keeps the old goal) when a value is not finite or |x| or |y|
        exceeds max_coordinate.
        """
        self._check_goal('goal', np.array([[x, y]], dtype=float))
        if not np.isfinite(yaw):
            raise ValueError(f'goal orientation: yaw {yaw} is not finite')
        if self.has_goal_at(i, x, y, yaw):
            return False
        self.goal[i] = (x, y)
        self.goal_yaw[i] = yaw
        self.has_goal[i] = True
        self.navigator.goal_changed(i)
        return True

    def has_goal_at(self, i: int, x: float, y: float, yaw: float) -> bool:
        """Whether commanded robot i has exactly this goal now."""
        return bool(self.has_goal[i] and self.goal[i, 0] == x and self.goal[i, 1] == y
                    and self.goal_yaw[i] == yaw)

    def _check_goal(self, what, points):
        """Raise ValueError '<what> position: ...' unless every point is finite and in range."""
        limit = self.config.max_coordinate
        bad = ~(np.abs(points) <= limit).all(axis=1)  # NaN compares False: refused too
        if bad.any():
            x, y = points[np.flatnonzero(bad)[0]]
            raise ValueError(f'{what} position: ({x:.6g}, {y:.6g}) is not finite or beyond '
                             f'max_coordinate ({limit:g} m)')

    def set_priority(self, i: int, seconds: float, now: float) -> None:
        """Make commanded robot i immovable for ``seconds`` (the others avoid it fully)."""
        self.give_way.set_priority(i, seconds, now)

    def cancel_goal(self, i: int) -> None:
        """Forget robot i's goal: it stops and reports idle."""
        self.has_goal[i] = False
        self.navigator.goal_changed(i)

    def step(self, inputs: FleetInputs, now: float) -> StepResult:
        """
        One ORCA step for the fleet at time ``now`` [s] (the clock of ``inputs.odom_time``).

        Robots whose odometry is older than odom_timeout get zero commands; others keep avoiding
        them at their last position for stale_keepout_time more. A robot whose newest odometry
        is refused (``inputs.rejected``, or here: a pose after odom_offset that is not finite or
        beyond max_coordinate, a twist faster than plausible) is stopped at once and avoided at
        its last valid pose, as a stale one; the others' commands do not change. Every command
        is finite and within the robot's limits.
        """
        # Narrow passages (control/passages.py): this tick, a differential robot's point ahead
        # comes nearer its axle where its route is narrower than its ORCA disc.
        cfg = narrowed(self.config, self.navigator.clearance)
        c = cfg.n_controlled
        warnings = []
        offset = self.localisation.update(inputs, cfg, now, warnings)
        valid = self._check_odometry(inputs, warnings, offset)
        pos, yaw = self._good_pose[:, :2].copy(), self._good_pose[:, 2].copy()
        twist = np.where(valid[:, None], inputs.twist, 0.0)
        known = np.isfinite(self._good_time)
        age = now - self._good_time
        fresh = valid & (age <= cfg.odom_timeout)
        present = known & (age <= cfg.odom_timeout + cfg.stale_keepout_time)
        active = fresh.copy()
        active[c:] = False

        self.pose_history.record(valid, self._good_pose, self._good_time, np.column_stack(
            [drive.body_to_world(twist[:, :2], yaw), twist[:, 2]]))
        # Latency: ORCA plans from where each fresh robot will be when this tick's command
        # takes effect (now + command_delay), its odometry moved on from its stamp with its
        # twist and then with the commands it was sent since (each acting command_delay on).
        ahead_pos, ahead_yaw = pos, yaw
        if cfg.latency_compensation:
            ahead = extrapolate(self._good_pose, twist, np.where(fresh, self._good_time, np.inf),
                                now + cfg.command_delay, self._sent)
            ahead_pos, ahead_yaw = ahead[:, :2], ahead[:, 2]

        # Every robot as an ORCA disc: the centre for holonomic robots, the point ahead of the
        # axle (radius + margin + lookahead) for differential ones. Stale robots stand still.
        diff = cfg.differential
        centre_vel = drive.body_to_world(twist[:, :2], ahead_yaw)
        point_vel = drive.lookahead_velocities(twist[:, 0], twist[:, 2], ahead_yaw,
                                               cfg.lookahead)
        orca_pos = np.where(diff[:, None],
                            drive.lookahead_points(ahead_pos, ahead_yaw, cfg.lookahead),
                            ahead_pos)
        orca_vel = np.where(diff[:, None], point_vel, centre_vel)
        orca_vel[~fresh] = 0.0
        # Localised robots grow by their pose uncertainty (covariance_scale, max_inflation).
        contact_radius = cfg.radius + cfg.lookahead + self.localisation.inflation(cfg)
        orca_radius = contact_radius + cfg.safety_margin
        max_accel, max_decel, accel_from, previous = self._accel_arguments(twist, ahead_yaw, cfg)

        _, reached, dist = drive.preferred_velocities(
            pos[:c], self.goal, self.has_goal, 0.0, 0.0, cfg.goal_tolerance)
        dist = np.where(known[:c], dist, np.inf)
        # Toward the goal, or toward a carrot on the route; standing while planning.
        target, nav_states = self.navigator.update(now, pos[:c], self.goal, self.has_goal,
                                                   fresh[:c], reached)
        steering = self.has_goal & ~reached & np.array(
            [s not in (RobotState.PLANNING, RobotState.UNREACHABLE) for s in nav_states], bool)
        pref, _, _ = drive.preferred_velocities(
            pos[:c], target, steering, cfg.pref_speed[:c], cfg.slowdown_distance,
            cfg.goal_tolerance, time_step=cfg.period,
            # Keep-right breaks symmetric jams among robots that avoid each other; a robot the
            # others avoid fully keeps its straight course.
            right_bias=np.where(self.give_way.keeps_course(cfg, now), 0.0, cfg.pass_on_right))
        all_pref = np.zeros_like(pos)
        all_pref[:c], locked = self.give_way.hold(now, pref, steering & fresh[:c])

        new_vel = np.zeros_like(pos)
        moving = MovingObjects.empty()
        if active.any():
            if cfg.scan_enabled:
                # Every robot's pose at each fresh scan's time, for the tracker and the memory.
                scans = [scan for scan in inputs.scans if fresh[scan.robot]]
                poses = self.pose_history.at(np.array([scan.time for scan in scans], float))
                moving = self._track(scans, poses, now, present)
                warnings += self.scan_memory.update(scans, pos, yaw, fresh, present,
                                                    cfg.radius, cfg.scan_sensor_offset,
                                                    poses, self._wall_grid(),
                                                    moving=(moving, now))
            # Moving tracks and known people are immovable agents after the robots: where
            # they will be when the commands take effect, going on with their velocity.
            lead = cfg.command_delay if cfg.latency_compensation else 0.0
            known_people = self._known_people(inputs, warnings)
            extra = (np.concatenate([moving.at(now, now + lead),
                                     known_people.at(inputs.people_time, now + lead)]),
                     np.concatenate([moving.velocity, known_people.velocity]),
                     np.concatenate([moving.radius, known_people.radius]))
            # Margins are preferences: they yield before a robot is left without a move (a
            # door the true disc passes, a gap between people). A robot's safety_margin
            # yields against walls only; against every agent it stays part of the disc (with
            # acceleration limits, robots whose margins yielded touched: two_rooms, 0.02 m).
            # person_margin and the margins of robots that do not avoid yield; those are
            # looked for as far ahead as a walker's speed needs.
            yields = ~self.give_way.reciprocates(cfg)
            margin = np.broadcast_to(cfg.safety_margin, (cfg.n,))
            horizon = np.where(yields, cfg.person_time_horizon, cfg.time_horizon)
            reach = np.where(yields, cfg.person_neighbor_dist, cfg.neighbor_dist)

            def solve(rows):
                obstacles = self._obstacles(now, rows, orca_pos, orca_radius, active)
                k = len(extra[2])
                speed = np.hypot(*extra[1].T) if k else np.zeros(0)
                zeros = np.zeros(k)  # moving tracks: no acceleration limits
                person = np.ones(k)
                args = self.give_way.core_arguments(cfg, now, rows)
                return compute_velocities(
                    np.concatenate([orca_pos[rows], extra[0]]),
                    np.concatenate([orca_vel[rows], extra[1]]),
                    np.concatenate([all_pref[rows], extra[1]]),
                    np.concatenate([contact_radius[rows], extra[2]]),
                    np.concatenate([cfg.max_speed[rows], speed]), time_step=cfg.period,
                    margin=np.concatenate([margin[rows], cfg.person_margin * person]),
                    agent_horizon=np.concatenate([horizon[rows],
                                                  cfg.person_time_horizon * person]),
                    neighbor_reach=np.concatenate([reach[rows],
                                                   cfg.person_neighbor_dist * person]),
                    keep_margin=np.concatenate([~yields[rows], np.zeros(k, bool)]),
                    neighbor_dist=cfg.neighbor_dist,
                    max_neighbors=cfg.max_neighbors, time_horizon=cfg.time_horizon,
                    time_horizon_obst=cfg.time_horizon_obst, obstacles=obstacles,
                    active=np.concatenate([active[rows], np.zeros(k, bool)]),
                    collision_guard=True, max_accel=np.concatenate([max_accel[rows], zeros]),
                    max_decel=np.concatenate([max_decel[rows], zeros]),
                    accel_from=np.concatenate([accel_from[rows], extra[1]]),
                    **_with_immovable(args, k))[:len(rows)]

            def finite(rows):
                values = np.column_stack([orca_pos[rows], orca_vel[rows], all_pref[rows],
                                          orca_radius[rows], cfg.max_speed[rows]])
                return np.isfinite(values).all(axis=1)

            idx, vel = self._solve_isolating(solve, finite, np.flatnonzero(present), warnings)
            new_vel[idx] = vel
            left_out = present.copy()
            left_out[idx] = False
            active &= ~left_out  # robots the solver failed with: stopped this tick
            self.give_way.update(cfg, now, pref, new_vel[:c], active[:c], locked)

        warnings += self.navigator.warnings
        self.navigator.warnings = []
        cmd = self._commands(new_vel[:c], ahead_yaw[:c], active[:c], warnings, previous, cfg)
        self._last_command = cmd.copy()
        self._sent = [(t, sent) for t, sent in self._sent if t > now - MAX_EXTRAPOLATION]
        self._sent.append((now + cfg.command_delay, cmd.copy()))
        states = [self._state(i, inputs.has_pose[i], valid[i], fresh[i], reached[i],
                              nav_states[i]) for i in range(c)]
        self._report_stuck(now, states, pos, target, all_pref, new_vel, warnings)
        return StepResult(commands=cmd, states=states, distance=dist, positions=pos,
                          velocities=new_vel, known=known, warnings=warnings, time=now,
                          moving=moving)

    def _report_stuck(self, now, states, pos, target, pref, vel, warnings):
        """Warn when a robot becomes stuck, and every STUCK_REPORT_PERIOD while it stays so."""
        stuck = np.array([state == RobotState.STUCK for state in states], bool)
        self._stuck_report[~stuck] = np.nan
        due = stuck & ~(now - self._stuck_report < STUCK_REPORT_PERIOD)  # NaN: not reported
        # A few per tick: when a whole fleet is stuck at once (a blocked hall), the reports
        # are spread over the next ticks instead of stalling one.
        due = np.flatnonzero(due)[:STUCK_REPORTS_PER_TICK]
        self._stuck_report[due] = now
        for i in due:
            near = []
            grid = self._wall_grid()
            if grid is not None and grid.inside(pos[i:i + 1])[0]:
                near.append(f'map wall {grid.distance_to_obstacle(pos[i:i + 1])[0]:.2f} m')
            segments = self.scan_memory.remembered(i)
            if len(segments):
                d = point_segment_distance(pos[i:i + 1], segments)[0]
                (ax, ay), (bx, by) = segments[np.argmin(d)]
                near.append(f'scan segment {d.min():.2f} m ({ax:.2f}, {ay:.2f})-({bx:.2f}, '
                            f'{by:.2f}) ({int((d < 1.0).sum())} within 1 m)')
            others = np.delete(np.hypot(*(pos - pos[i]).T), i)
            if len(others):
                near.append(f'robot {others.min():.2f} m')
            warnings.append((int(i), f'progress: stuck at ({pos[i, 0]:.2f}, {pos[i, 1]:.2f}), '
                                     f'steering to ({target[i, 0]:.2f}, {target[i, 1]:.2f}) at '
                                     f'{np.hypot(*pref[i]):.2f} m/s, ORCA allows '
                                     f'{np.hypot(*vel[i]):.2f} m/s; nearest '
                                     f'{", ".join(near) or "obstacle: none"}'))

    def _track(self, scans, poses, now, present):
        """Update the people tracker with the fresh robots' scans; return the moving tracks."""
        if self.people is None:
            return MovingObjects.empty()
        if scans:
            self.people.observe(scans, poses, present, self.config.radius,
                                self.config.scan_sensor_offset, self._wall_grid())
        return self.people.moving(now)

    def _known_people(self, inputs, warnings):
        """Return the rows of ``inputs.people`` that are plausible; warn about the rest."""
        people = inputs.people
        if people is None or len(people) == 0:
            return MovingObjects.empty()
        with np.errstate(invalid='ignore', over='ignore'):
            ok = ((np.abs(people.position) <= self.config.max_coordinate).all(axis=1)
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

    def _check_odometry(self, inputs, warnings, offset=None):
        """
        Judge every robot's odometry in the global frame; remember the poses that pass.

        Returns valid (N,) bool: odometry received, its newest message not refused, the pose
        after odom_offset finite and within max_coordinate, the twist plausible. A refused
        message is counted (``odom_rejected``) and warned about once, not at every tick.
        offset : (N, 3) global <- odom frames (default: odom_offset).
        """
        cfg = self.config
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
        for i in np.flatnonzero(bad & (inputs.odom_time != self._bad_time)):
            self._bad_time[i] = inputs.odom_time[i]
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
        self._good_pose[valid, :2] = pos[valid]
        self._good_pose[valid, 2] = yaw[valid]
        self._good_time[valid] = inputs.odom_time[valid]
        return valid

    def _solve_isolating(self, solve, finite, idx, warnings):
        """
        Run ``solve(rows)`` on rows idx; if it raises, re-run it without the robots causing it.

        Robots whose solver inputs are not finite (``finite(rows)`` -> bool per row) go first;
        then, while it still fails, the first row whose addition makes it fail (binary search
        over prefixes of the rows) is left out, MAX_SOLVER_CULPRITS times at most. Returns
        (rows solved, their velocities); re-raises the first error when that does not help.
        """
        try:
            return idx, solve(idx)
        except Exception as exc:  # noqa: B902 -- the solver failing must not stop everyone
            first = exc
        self.solver_failures += 1
        ok = finite(idx)
        left_out = list(idx[~ok])
        rows = idx[ok]
        for _ in range(MAX_SOLVER_CULPRITS + 1):
            try:
                vel = solve(rows)
                break
            except Exception:  # noqa: B902 -- searched for below
                if len(left_out) >= MAX_SOLVER_CULPRITS or len(rows) == 0:
                    raise first
            culprit = self._first_failing_row(solve, rows)
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

    @staticmethod
    def _first_failing_row(solve, rows):
        """Return the row whose addition makes solve(rows[:k]) fail; rows[:all] must fail."""
        def fails(k):
            try:
                solve(rows[:k])
            except Exception:  # noqa: B902 -- any failure counts
                return True
            return False

        if len(rows) == 0:
            return None
        lo, hi = 0, len(rows)  # solve(rows[:lo]) succeeds (none: trivially), rows[:hi] fails
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fails(mid):
                hi = mid
            else:
                lo = mid
        return rows[hi - 1]

    def _state(self, i, has_pose, valid, fresh, reached, navigation):
        if not has_pose:
            return RobotState.NO_ODOMETRY
        if not valid:
            return RobotState.REJECTED_ODOMETRY
        if not fresh:
            return RobotState.STALE_ODOMETRY
        if not self.has_goal[i]:
            return RobotState.IDLE
        if reached:
            return RobotState.REACHED
        return navigation or RobotState.ACTIVE

    def _wall_grid(self):
        """Return the GridMap whose walls are ORCA obstacles, or None (no map, map_walls off)."""
        model = self.navigator.model
        if model is None or not self.navigator.config.map_walls:
            return None
        return model.grid

    def _obstacles(self, now, idx, orca_pos, orca_radius, active):
        """
        Obstacles for the core: map walls near the active robots and remembered scan segments.

        idx : rows of the robots handed to the core; returns None when there is nothing.
        """
        cfg = self.config
        c = cfg.n_controlled
        model = self.navigator.model
        if model is None or not self.navigator.config.map_walls:
            model = None
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
            reach = cfg.time_horizon_obst * cfg.max_speed + orca_radius
            walls = model.walls_near(orca_pos[active], reach[active])
            parts.append(walls)
            owners.append(np.full(len(walls), -1))
        if sum(len(p) for p in parts) == 0:
            return None
        return Obstacles.build(segments=np.concatenate(parts),
                               segment_owner=np.concatenate(owners))

    def _accel_arguments(self, twist, yaw, cfg):
        """
        Return the core's acceleration arguments for the N rows and their origin commands.

        Returns max_accel, max_decel (N,) [m/s^2] (0 = unlimited), accel_from (N, 2) [m/s]
        global, previous (C, 3). The limits are measured from the last commands sent
        (``previous``: what each robot was told, not its noisy odometry; the odometry twist
        before the first tick). A differential robot's ORCA agent is its look-ahead point P,
        whose velocity changes by dv forward and D dw sideways: P gets the tighter of
        max_accel (max_decel) and D x max_angular_accel, so that what ORCA picks keeps
        |dv| and |dw| within the limits (the drive mapping clips what rounding or the speed
        scaling leaves). cfg : this tick's FleetConfig (control/passages.py).
        """
        c = cfg.n_controlled
        accel, decel, angular = cfg.accel_limits
        previous = twist[:c].copy() if self._last_command is None else self._last_command
        body = twist.copy()
        body[:c] = previous
        diff = cfg.differential
        accel_from = np.where(
            diff[:, None],
            drive.lookahead_velocities(body[:, 0], body[:, 2], yaw, cfg.lookahead),
            drive.body_to_world(body[:, :2], yaw))
        sideways = np.where(angular > 0.0, cfg.lookahead * angular, 0.0)
        max_accel = np.where(diff, _tighter(accel, sideways), accel)
        max_decel = np.where(diff, _tighter(decel, sideways), decel)
        return max_accel, max_decel, accel_from, previous

    def _commands(self, velocities, yaw, active, warnings, previous=None, cfg=None):
        """
        Global ORCA velocities (C, 2) -> body-frame commands (C, 3) of active robots.

        previous : (C, 3) the last commands (the acceleration limits' origin) or None.
        Computed for all robots at once; if that raises, robot by robot, and a robot whose
        own mapping fails gets a zero command (and a warning), the others theirs.
        """
        try:
            return self._map_commands(velocities, yaw, active, previous, cfg)
        except Exception:  # noqa: B902 -- isolate the robot it fails for, below
            pass
        cmd = np.zeros((self.config.n_controlled, 3))
        for i in np.flatnonzero(active):
            alone = np.zeros_like(active)
            alone[i] = True
            try:
                cmd[i] = self._map_commands(velocities, yaw, alone, previous, cfg)[i]
            except Exception as exc:  # noqa: B902 -- only this robot stops
                warnings.append((int(i), f'command: drive mapping failed ({exc!r}); stopped'))
        return cmd

    def _map_commands(self, velocities, yaw, active, previous=None, cfg=None):
        """
        Map the velocities of the active robots to their drives' commands, then limit.

        Differential robots' (v, w) changes are clipped to the acceleration limits from
        ``previous`` (C, 3); holonomic robots' velocities are reachable already (the core).
        cfg : this tick's FleetConfig (control/passages.py; None: the fleet's).
        """
        cfg = self.config if cfg is None else cfg
        c = cfg.n_controlled
        cmd = np.zeros((c, 3))
        diff = cfg.differential[:c]
        hol = active & ~diff
        dif = active & diff
        if hol.any():
            cmd[hol, :2] = drive.holonomic_command(velocities[hol], yaw[hol],
                                                   cfg.max_speed[:c][hol])
        if dif.any():
            accel, decel, angular = (limit[:c][dif] for limit in cfg.accel_limits)
            lin, ang = drive.differential_command(
                velocities[dif], yaw[dif], cfg.lookahead[:c][dif], cfg.max_speed[:c][dif],
                cfg.max_angular_speed[:c][dif],
                None if previous is None else (previous[dif, 0], previous[dif, 2]),
                accel, decel, angular, cfg.period)
            cmd[dif, 0] = lin
            cmd[dif, 2] = ang
        return self.limit(cmd)

    def limit(self, cmd: np.ndarray) -> np.ndarray:
        """Last line of defence: finite, and within each robot's limits whatever happened."""
        cfg = self.config
        c = cfg.n_controlled
        cmd = np.where(np.isfinite(cmd), cmd, 0.0)
        cmd[:, :2] = drive.clamp_speed(cmd[:, :2], cfg.max_speed[:c])
        cmd[cfg.differential[:c], 1] = 0.0
        cmd[~cfg.differential[:c], 2] = 0.0
        cmd[:, 2] = np.clip(cmd[:, 2], -cfg.max_angular_speed[:c], cfg.max_angular_speed[:c])
        return cmd


def _tighter(a, b):
    """Elementwise the smaller of two limits where 0 means unlimited."""
    return np.where(a > 0.0, np.where(b > 0.0, np.minimum(a, b), a), b)


def _with_immovable(args, k):
    """Extend the core's give-way arguments by k immovable agents (moving tracks)."""
    if k == 0:
        return args
    out = dict(args)
    out['immovable'] = np.concatenate([args['immovable'], np.ones(k, bool)])
    if 'weights' in args:
        out['weights'] = np.concatenate([args['weights'], np.ones(k)])
    if 'groups' in args:
        # A group of their own that no robot ignores.
        own = int(args['ignore'].shape[1])
        out['groups'] = np.concatenate([args['groups'], np.full(k, own, np.int64)])
        ignore = np.zeros((len(out['groups']), own + 1), bool)
        ignore[:len(args['groups']), :own] = args['ignore']
        out['ignore'] = ignore
    return out
