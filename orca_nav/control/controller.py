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

from .avoidance import Avoidance, shaped_footprints, wall_model
from .commands import aligning, Commands, limit, through_doors
from .config import FleetConfig
from .corners import keep_clear, narrow_turns, turning_shapes, turns_at_corners
from .giveway import GiveWay
from .lanes import step_aside
from .navigation import NavigationConfig, Navigator
from .observation import Observer
from .passages import lookahead_now
from .people import MovingObjects, PeopleTracker
from .reports import robot_state, StuckReports
from .steering import steer

# [m] a holonomic cart whose route's door (``Following.narrow_way``) lies this near ahead has
# right of way over the other robots: they avoid it fully
DOOR_RIGHT_OF_WAY = 1.0


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
class Routes:
    """The commanded robots' routes as a tick left them (what a node publishes of them)."""

    version: np.ndarray  # (C,) int64: changes whenever a robot's route does
    points: list         # (C,) (P, 2) global route points, or None (no route)
    routed: np.ndarray   # (C,) bool: points[i] is not None
    carrot: np.ndarray   # (C, 2) global: the point each routed robot steers for


@dataclass
class Counters:
    """What the controller refused or failed at since it started (for a node's statistics)."""

    solver_failures: int = 0       # solver calls that raised (then re-run)
    odom_rejected: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per row
    scans_rejected: int = 0        # scans refused as malformed
    maps_received: int = 0
    poses_refused_late: int = 0    # localisation poses older than pose_timeout on arrival


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
    # What a node publishes beside the commands, as this tick left it:
    goals: np.ndarray = None      # (C, 2) global goal of each commanded robot
    has_goal: np.ndarray = None   # (C,) bool
    reasons: list = None          # (C,) why a robot has no route ('' when it has or needs none)
    priority: np.ndarray = None   # (C,) bool: its priority overrides the give-way rules now
    locked: np.ndarray = None     # (C,) bool: its velocity is locked now
    weights: np.ndarray = None    # (C,) its avoidance weight (0.5: RVO2's share)
    routes: Routes = None
    counters: Counters = field(default_factory=Counters)
    yaws: np.ndarray = None       # (N,) global yaw [rad] (with positions: footprint markers)


class FleetController:
    """
    Goals in, ORCA velocities and drive commands out, for a fleet described by a FleetConfig.

    Holds what persists between ticks: each commanded robot's goal, its route (``navigator``)
    and the phases' memories. A tick (``step``) runs four phases: observe (``Observer``: the
    robots now, as ORCA discs), steer (``steer``: preferred velocities toward goals and
    carrots), avoid (``Avoidance``: the solver for the fleet, people and obstacles) and
    command (``Commands``: drive mappings and limits).
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
        # Routes keep the planning radius (radius + safety_margin) + route_margin from walls.
        self.navigator = Navigator(config.planning_radius[:c], navigation, executor,
                                   true_radius=config.radius[:c],
                                   footprints=shaped_footprints(config)[:c],
                                   turns=turns_at_corners(config)[:c])
        self.give_way = GiveWay(c)  # priority overrides and velocity locks
        self.people = PeopleTracker(config.people) if config.people is not None else None
        self.observer = Observer(config.n)
        self.avoidance = Avoidance(c, self.navigator, self.give_way,
                                   self.observer.pose_history)
        self.commands = Commands()
        self.stuck_reports = StuckReports(c)
        self.scan_memory = self.avoidance.scan_memory  # remembered scan segments
        self.localisation = self.observer.localisation  # corrections from localisation poses
        self.odom_rejected = self.observer.odom_rejected  # odometry refused here, per robot

    @property
    def solver_failures(self) -> int:
        """Solver calls that raised (and were re-run without the robots causing it)."""
        return self.avoidance.solver_failures

    @property
    def people_rejected(self) -> int:
        """Known people rows refused (``FleetInputs.set_people``)."""
        return self.avoidance.people_rejected

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
                                   self.navigator.config if navigation is None else navigation,
                                   footprints=shaped_footprints(config)[:c],
                                   turns=turns_at_corners(config)[:c])

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
        cfg = self.config
        c = cfg.n_controlled
        warnings = []
        # Narrow passages (control/passages.py): this tick, a differential robot's point ahead
        # comes nearer its axle where its route is narrower than its ORCA disc.
        lookahead = lookahead_now(cfg, self.navigator.clearance)
        # Observe: every robot now (valid, fresh, stale), as an ORCA disc when the command acts.
        obs = self.observer.observe(inputs, cfg, now, warnings, lookahead)
        # Steer: preferred velocities toward the goals or the routes' carrots.
        self.navigator.yaw = obs.ahead_yaw[:c]
        steering = steer(cfg, now, obs.pos, obs.known, obs.fresh, self.goal, self.has_goal,
                         self.navigator, self.give_way)
        # Holonomic carts that meet a robot head-on step aside before they meet (lanes.py).
        # Not at a door: there the cart keeps to the door's line (following.py), and the
        # others avoid it fully while it goes in (DOOR_RIGHT_OF_WAY).
        turned = aligning(cfg)[:c]
        nav = self.navigator
        self.give_way.at_door[:] = turned & (nav.following.narrow_ahead < DOOR_RIGHT_OF_WAY)
        if turned.any():
            door = np.isfinite(nav.narrow_way).all(axis=1)
            present = np.where(obs.present[:, None], obs.pos, np.nan)
            wanted = np.concatenate([steering.prefs[:c], obs.orca_vel[c:]])
            steering.prefs[:c], ways = step_aside(
                cfg, present, wanted, obs.ahead_yaw, steering.prefs[:c],
                np.broadcast_to(np.asarray(cfg.safety_margin, float), (len(obs.pos),)),
                ~steering.locked & ~door & (nav.clearance >= nav.true_radius), nav.route_ways())
            nav.narrow_way[~door] = ways[~door]
            # Its polygon in the solver is swept over the turn toward that way, not toward the
            # preferred velocity with the step aside in it (that turn would widen it).
            aside = np.isfinite(ways).all(axis=1)
            steering.ways = steering.prefs.copy()
            steering.ways[:c][aside] = through_doors(steering.prefs[:c], ways)[aside]
        # A differential robot with a footprint turns in place at a corner before a door and
        # goes straight through it (no pass-on-right bias where its way is narrow).
        shaped = self.navigator.corners.turns.any()
        if shaped:
            narrow = self.navigator.clearance < self.navigator.true_radius
            cfg = narrow_turns(cfg, narrow)
            self.navigator.corners.align_prefs(
                cfg, obs.pos, obs.ahead_yaw, obs.lookahead, steering, narrow,
                np.where(self.give_way.keeps_course(cfg, now), 0.0, cfg.pass_on_right))
        # Avoid: one solver call for robots, people and obstacles, within each robot's reach.
        *reach, previous = self.commands.reach(cfg, obs.twist, obs.ahead_yaw, obs.lookahead)
        velocities, moving = self.avoidance.avoid(cfg, now, inputs, obs, steering, reach,
                                                  self.people, warnings)
        warnings += self.navigator.warnings
        self.navigator.warnings = []
        # A robot that does not move when commanded (an e-stop): gently, not at full speed.
        self.navigator.progress.gentle(velocities[:c])
        # Command: each drive's command within its limits, remembered for the next ticks.
        cmd = self.commands.command(cfg, velocities[:c], obs.ahead_yaw[:c], obs.active[:c],
                                    warnings, previous, obs.lookahead,
                                    through_doors(steering.prefs[:c], self.navigator.narrow_way))
        # A differential robot with a footprint: turning in place at a corner, along its route
        # in a passage, and no turn that swings its body into a wall or robot; nor a holonomic
        # one's turn.
        if shaped or turning_shapes(cfg):
            yaw = obs.ahead_yaw
            centre = obs.orca_pos - obs.lookahead[:, None] * np.stack(
                [np.cos(yaw), np.sin(yaw)], axis=1)
            if shaped:
                cmd = self.navigator.corners.steer_commands(
                    cfg, cmd, velocities[:c], obs.pos[:c], yaw[:c], steering, narrow,
                    obs.active[:c], previous)
            cmd = limit(cfg, keep_clear(cfg, cmd, centre, yaw, wall_model(self.navigator),
                                        obs.present))
            self.commands.last = cmd.copy()
        self.observer.commanded(now, cmd, cfg.command_delay)
        # Travel asked of each robot: one that does not move when commanded gives no way.
        self.navigator.progress.commanded(now, velocities[:c])
        states = self._states(inputs, obs, steering, velocities, now, warnings)
        nav = self.navigator
        weights = cfg.avoidance_weight
        return StepResult(commands=cmd, states=states, distance=steering.distance,
                          positions=obs.pos, velocities=velocities, known=obs.known,
                          yaws=obs.yaw,
                          warnings=warnings, time=now, moving=moving,
                          goals=self.goal.copy(), has_goal=self.has_goal.copy(),
                          reasons=list(nav.reason), priority=self.give_way.overridden(now),
                          locked=now < self.give_way.lock_until,
                          weights=(np.full(c, 0.5) if weights is None
                                   else np.asarray(weights, float)[:c]),
                          routes=Routes(nav.version.copy(), list(nav.points),
                                        nav.routed.copy(), nav.carrot.copy()),
                          counters=self.counters())

    def close(self) -> None:
        """Stop the route planning worker (the controller plans no more)."""
        self.navigator.close()

    def counters(self) -> Counters:
        """Return what the controller refused or failed at so far."""
        return Counters(self.avoidance.solver_failures, self.odom_rejected.copy(),
                        self.scan_memory.rejected, self.navigator.maps_received,
                        int(self.localisation.refused_late.sum()))

    def _states(self, inputs, obs, steering, velocities, now, warnings):
        """Return the commanded robots' states; warn about the robots that stay stuck."""
        states = [robot_state(inputs.has_pose[i], obs.valid[i], obs.fresh[i], self.has_goal[i],
                              steering.reached[i], steering.navigation[i])
                  for i in range(self.config.n_controlled)]
        model = wall_model(self.navigator)
        self.stuck_reports.report(now, states, obs.pos, steering.target, steering.prefs,
                                  velocities, None if model is None else model.grid,
                                  self.scan_memory, warnings)
        return states

    def limit(self, cmd: np.ndarray) -> np.ndarray:
        """Last line of defence: finite, and within each robot's limits whatever happened."""
        return limit(self.config, cmd)
