"""What the fleet controller needs to know about the fleet: per-robot arrays and the knobs."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FleetConfig:
    """
    Resolved settings of a fleet: N robots, the commanded ones first (rows 0..C-1).

    Per-robot arrays have one row per robot (commanded, then observed); scalars apply to all.
    The defaults are the node's (test/test_params.py holds them to the parameter table), so
    a controller built without ROS is the one the node runs.
    """

    names: tuple                   # (N,) robot names
    n_controlled: int              # C: rows 0..C-1 are commanded, the rest only observed
    radius: np.ndarray             # (N,) [m]
    max_speed: np.ndarray          # (N,) [m/s]
    max_angular_speed: np.ndarray  # (N,) [rad/s]
    pref_speed: np.ndarray         # (N,) [m/s] cruising speed toward the goal
    differential: np.ndarray       # (N,) bool: differential drive (else holonomic)
    lookahead: np.ndarray          # (N,) [m] point-ahead distance, 0 for holonomic robots
    odom_offset: np.ndarray        # (N, 3) pose of each odometry frame in the global frame
    period: float = 0.1                    # [s] control period (one step per tick)
    goal_tolerance: float = 0.1            # [m]
    slowdown_distance: float = 0.5         # [m]
    pass_on_right: float = 0.15            # tan of the keep-right turn of preferred velocities
    neighbor_dist: float = 3.0             # [m]
    max_neighbors: int = 10
    time_horizon: float = 2.0              # [s]
    time_horizon_obst: float = 2.0         # [s]
    odom_timeout: float = 0.5              # [s]
    stale_keepout_time: float = 5.0        # [s]
    scan_enabled: bool = False
    obstacle_timeout: float = 0.5          # [s]
    share_obstacles: bool = False
    scan_sensor_offset: tuple = (0.0, 0.0, 0.0)  # laser pose in the body frame [m, m, rad]
    # (N,) or scalar [m]: planning grows every radius by it (ORCA discs, route clearance);
    # contact is still judged on ``radius``.
    safety_margin: object = 0.05
    max_coordinate: float = 1e5            # [m] larger |x| or |y|: pose or goal refused
    # Plan from each pose moved on from its odometry stamp to now + command_delay (its
    # twist, then the commands sent since, each acting command_delay after it was sent);
    # false: from the odometry pose as it is.
    latency_compensation: bool = True
    command_delay: float = 0.0             # [s] from a tick to its commands acting
    # Who gives way (see control/giveway.py and docs/core.md). None: RVO2's half-half.
    avoidance_weight: object = None        # (N,) in [0, 1]; 1 keeps its course
    avoidance_group: object = None         # (N,) int group ids, rows of ``ignore``' columns
    ignore: object = None                  # (N, G) bool: robot i does not avoid group g
    observed_reciprocate: bool = False     # observed robots run ORCA too (else immovable)
    # (N,) bool or None: per robot, whether it runs ORCA too (observed rows; commanded rows
    # are ignored); None: observed_reciprocate for every observed robot.
    reciprocate: object = None
    lock_time_after_avoid: float = 0.0     # [s] keep a diverted velocity this long; 0 = off
    lock_time_after_clean: float = 0.0     # [s] keep the velocity after a diversion ends
    # Moving things in the scans (control/people.py): a PeopleConfig, or None (off). Only with
    # scan_enabled.
    people: object = None
    # [m] margin kept from every moving track and known person (FleetInputs.people) beyond
    # its radius, given up before a robot is left without a move (as safety_margin is).
    person_margin: float = 0.3
    # Who does not avoid (moving tracks, known people, immovable observed robots) is looked
    # for this far ahead [s] and this far away [m]: walkers close faster than robots.
    person_time_horizon: float = 5.0
    person_neighbor_dist: float = 10.0
    # Acceleration limits, (N,) or scalar, 0 = unlimited (docs/acceleration.md): ORCA picks
    # only velocities reachable from the last command within one period, and the drive
    # mapping clips each command's change to them.
    max_accel: object = 0.0                # [m/s^2] speeding up (and turning the velocity)
    max_decel: object = 0.0                # [m/s^2] braking toward a stop
    max_angular_accel: object = 0.0        # [rad/s^2] differential robots' yaw rate, both ways
    # Localisation poses (control/localisation.py): a robot's radius grows by
    # min(covariance_scale x sigma, max_inflation); a pose older than pose_timeout is not used.
    covariance_scale: float = 2.0
    max_inflation: float = 0.5             # [m]
    pose_timeout: float = 5.0              # [s]
    # (N,) bool: robots with a localisation pose source (the node: a pose_topic); only their
    # odometry history is kept. None: any robot may get poses.
    pose_source: object = None

    @property
    def planning_radius(self) -> np.ndarray:
        """Return (N,) radius + safety_margin [m]: the disc each robot plans with."""
        return self.radius + self.safety_margin

    @property
    def accel_limits(self) -> tuple:
        """Return (max_accel, max_decel, max_angular_accel), each (N,) float, 0 = unlimited."""
        n = len(self.names)
        return tuple(np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
                     for value in (self.max_accel, self.max_decel, self.max_angular_accel))

    @property
    def n(self) -> int:
        """Return the number of robots, commanded and observed."""
        return len(self.names)

    @classmethod
    def uniform(cls, names, n_controlled=None, *, radius=0.2, max_speed=0.5,
                max_angular_speed=1.5, drive='holonomic', lookahead_distance=0.1, **knobs):
        """
        Build a fleet of identical robots (tests, scripts): scalars go to every robot.

        >>> FleetConfig.uniform(['a', 'b'], radius=0.3).radius.tolist()
        [0.3, 0.3]
        """
        n = len(names)
        differential = np.full(n, drive == 'differential')
        return cls(names=tuple(names), n_controlled=n if n_controlled is None else n_controlled,
                   radius=np.full(n, float(radius)), max_speed=np.full(n, float(max_speed)),
                   max_angular_speed=np.full(n, float(max_angular_speed)),
                   pref_speed=np.full(n, float(max_speed)), differential=differential,
                   lookahead=np.where(differential, lookahead_distance, 0.0),
                   odom_offset=np.zeros((n, 3)), **knobs)
