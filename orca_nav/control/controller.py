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
from orca_nav.core.geometry import compose_poses

from .config import FleetConfig
from .navigation import NavigationConfig, Navigator
from .scan_memory import ScanMemory
from .states import RobotState


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

    @classmethod
    def empty(cls, n: int) -> 'FleetInputs':
        """Return the inputs of N robots of which none has odometry yet."""
        return cls(np.zeros((n, 2)), np.zeros(n), np.zeros((n, 3)), np.zeros(n, bool),
                   np.zeros(n))

    def set_odometry(self, i: int, *, x, y, yaw, time, v_forward=0.0, v_left=0.0,
                     yaw_rate=0.0) -> None:
        """Store robot i's odometry (tests and scripts; the node writes the arrays)."""
        self.odom_xy[i] = (x, y)
        self.odom_yaw[i] = yaw
        self.twist[i] = (v_forward, v_left, yaw_rate)
        self.has_pose[i] = True
        self.odom_time[i] = time


@dataclass
class StepResult:
    """What one tick decided: commands and states of the C commanded robots, markers of all N."""

    commands: np.ndarray    # (C, 3) body frame vx [m/s], vy [m/s], wz [rad/s]
    states: list            # (C,) RobotState
    distance: np.ndarray    # (C,) [m] to the goal, inf without a goal
    positions: np.ndarray   # (N, 2) global [m]
    velocities: np.ndarray  # (N, 2) global ORCA velocities [m/s]
    known: np.ndarray       # (N,) bool: a pose has been received
    warnings: list = field(default_factory=list)  # (robot row or None, message) for the log


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
        self.navigator = Navigator(config.radius[:c], navigation, executor)

    def reconfigure(self, config: FleetConfig, navigation: NavigationConfig = None) -> None:
        """Use new settings from the next tick on (same robots; goals and memory are kept)."""
        if config.names != self.config.names or config.n_controlled != self.config.n_controlled:
            raise ValueError('the robots of a running controller cannot change')
        self.config = config
        if navigation is not None:
            self.navigator.config = navigation

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
        self.goal[i] = points[-1]
        self.has_goal[i] = True
        self.navigator.set_external_route(i, points)

    def set_goal(self, i: int, x: float, y: float, yaw: float = 0.0) -> bool:
        """Give commanded robot i a goal in the global frame; False if it already had it."""
        if self.has_goal[i] and self.goal[i, 0] == x and self.goal[i, 1] == y \
                and self.goal_yaw[i] == yaw:
            return False
        self.goal[i] = (x, y)
        self.goal_yaw[i] = yaw
        self.has_goal[i] = True
        self.navigator.goal_changed(i)
        return True

    def cancel_goal(self, i: int) -> None:
        """Forget robot i's goal: it stops and reports idle."""
        self.has_goal[i] = False
        self.navigator.goal_changed(i)

    def step(self, inputs: FleetInputs, now: float) -> StepResult:
        """
        One ORCA step for the fleet at time ``now`` [s] (the clock of ``inputs.odom_time``).

        Robots whose odometry is older than odom_timeout get zero commands; others keep avoiding
        them at their last position for stale_keepout_time more. Every command is finite and
        within the robot's limits.
        """
        cfg = self.config
        c = cfg.n_controlled
        pos, yaw = compose_poses(cfg.odom_offset, inputs.odom_xy, inputs.odom_yaw)
        age = now - inputs.odom_time
        fresh = inputs.has_pose & (age <= cfg.odom_timeout)
        present = inputs.has_pose & (age <= cfg.odom_timeout + cfg.stale_keepout_time)
        active = fresh.copy()
        active[c:] = False

        # Every robot as an ORCA disc: the centre for holonomic robots, the point ahead of the
        # axle (radius + lookahead) for differential ones. Stale robots stand still.
        diff = cfg.differential
        centre_vel = drive.body_to_world(inputs.twist[:, :2], yaw)
        point_vel = drive.lookahead_velocities(inputs.twist[:, 0], inputs.twist[:, 2], yaw,
                                               cfg.lookahead)
        orca_pos = np.where(diff[:, None], drive.lookahead_points(pos, yaw, cfg.lookahead), pos)
        orca_vel = np.where(diff[:, None], point_vel, centre_vel)
        orca_vel[~fresh] = 0.0
        orca_radius = cfg.radius + cfg.lookahead

        _, reached, dist = drive.preferred_velocities(
            pos[:c], self.goal, self.has_goal, 0.0, 0.0, cfg.goal_tolerance)
        # Toward the goal, or toward a carrot on the route; standing while planning.
        target, nav_states = self.navigator.update(now, pos[:c], self.goal, self.has_goal,
                                                   fresh[:c], reached)
        steering = self.has_goal & ~reached & np.array(
            [s not in (RobotState.PLANNING, RobotState.UNREACHABLE) for s in nav_states], bool)
        pref, _, _ = drive.preferred_velocities(
            pos[:c], target, steering, cfg.pref_speed[:c], cfg.slowdown_distance,
            cfg.goal_tolerance, time_step=cfg.period, right_bias=cfg.pass_on_right)
        all_pref = np.zeros_like(pos)
        all_pref[:c] = pref

        warnings = []
        new_vel = np.zeros_like(pos)
        idx = np.flatnonzero(present)
        if active.any():
            if cfg.scan_enabled:
                warnings += self.scan_memory.update(inputs.scans, pos, yaw, fresh, present,
                                                    cfg.radius, cfg.scan_sensor_offset)
            obstacles = self._obstacles(now, idx, orca_pos, orca_radius, active)
            new_vel[idx] = compute_velocities(
                orca_pos[idx], orca_vel[idx], all_pref[idx], orca_radius[idx],
                cfg.max_speed[idx], time_step=cfg.period, neighbor_dist=cfg.neighbor_dist,
                max_neighbors=cfg.max_neighbors, time_horizon=cfg.time_horizon,
                time_horizon_obst=cfg.time_horizon_obst, obstacles=obstacles,
                active=active[idx], collision_guard=True)

        warnings += self.navigator.warnings
        self.navigator.warnings = []
        cmd = self._commands(new_vel[:c], yaw[:c], active[:c])
        states = [self._state(i, inputs.has_pose[i], fresh[i], reached[i], nav_states[i])
                  for i in range(c)]
        return StepResult(commands=cmd, states=states, distance=dist, positions=pos,
                          velocities=new_vel, known=inputs.has_pose.copy(), warnings=warnings)

    def _state(self, i, has_pose, fresh, reached, navigation):
        if not has_pose:
            return RobotState.NO_ODOMETRY
        if not fresh:
            return RobotState.STALE_ODOMETRY
        if not self.has_goal[i]:
            return RobotState.IDLE
        if reached:
            return RobotState.REACHED
        return navigation or RobotState.ACTIVE

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

    def _commands(self, velocities, yaw, active):
        """Global ORCA velocities (C, 2) -> body-frame commands (C, 3) of active robots."""
        cfg = self.config
        c = cfg.n_controlled
        cmd = np.zeros((c, 3))
        diff = cfg.differential[:c]
        hol = active & ~diff
        dif = active & diff
        if hol.any():
            cmd[hol, :2] = drive.holonomic_command(velocities[hol], yaw[hol],
                                                   cfg.max_speed[:c][hol])
        if dif.any():
            lin, ang = drive.differential_command(velocities[dif], yaw[dif],
                                                  cfg.lookahead[:c][dif], cfg.max_speed[:c][dif],
                                                  cfg.max_angular_speed[:c][dif])
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
