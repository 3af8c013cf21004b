"""
What the fleet controller needs to know about the fleet: per-robot arrays and the knobs.

A ``FleetConfig`` has no defaults of its own: it is built from the parameter table
(control/parameters.py) by ``from_values`` (what the node runs), ``from_params`` (the same
without ROS: the node's defaults with the given changes) or ``uniform`` (tests).
"""

from dataclasses import dataclass, fields, make_dataclass, replace
import difflib

import numpy as np
from orca_nav.core.orca.drive import DIFFERENTIAL

from . import parameters as T
from .footprint import footprint_radius
from .navigation import NavigationConfig
from .people import PeopleConfig


@dataclass(frozen=True)
class FleetConfig:
    """
    Resolved settings of a fleet: N robots, the commanded ones first (rows 0..C-1).

    Per-robot arrays have one row per robot (commanded, then observed); scalars apply to all.
    A field named as a parameter of the table holds that parameter (per robot where it has
    per-robot overrides); the others are derived from parameters (``_derived``).
    """

    names: tuple                   # (N,) robot names
    n_controlled: int              # C: rows 0..C-1 are commanded, the rest only observed
    # (N,) [m] the disc each robot avoids and is routed as: its radius parameter, or for a
    # robot with a footprint the footprint's farthest vertex + footprint_padding.
    radius: np.ndarray
    # (N,) each robot's footprint, (K, 2) [m] counter-clockwise in its base frame (x
    # forward), or None (a disc of radius). Avoidance does not use it yet.
    footprint: tuple
    footprint_padding: float               # [m] added to footprints for planning
    footprint_differential: bool           # differential robots use their footprints too
    max_speed: np.ndarray          # (N,) [m/s]
    max_angular_speed: np.ndarray  # (N,) [rad/s]
    pref_speed: np.ndarray         # (N,) [m/s] cruising speed toward the goal
    differential: np.ndarray       # (N,) bool: differential drive (else holonomic)
    lookahead: np.ndarray          # (N,) [m] point-ahead distance, 0 for holonomic robots
    odom_offset: np.ndarray        # (N, 3) pose of each odometry frame in the global frame
    period: float                          # [s] control period (one step per tick)
    goal_tolerance: float                  # [m]
    slowdown_distance: float               # [m]
    pass_on_right: float                   # tan of the keep-right turn of preferred velocities
    neighbor_dist: float                   # [m]
    max_neighbors: int
    time_horizon: float                    # [s]
    time_horizon_obst: float               # [s]
    odom_timeout: float                    # [s]
    stale_keepout_time: float              # [s]
    scan_enabled: bool
    obstacle_timeout: float                # [s]
    share_obstacles: bool
    scan_sensor_offset: tuple              # laser pose in the body frame [m, m, rad]
    # (N,) or scalar [m]: planning grows every radius by it (ORCA discs, route clearance);
    # contact is still judged on ``radius``.
    safety_margin: object
    max_coordinate: float                  # [m] larger |x| or |y|: pose or goal refused
    # Plan from each pose moved on from its odometry stamp to now + command_delay (its
    # twist, then the commands sent since, each acting command_delay after it was sent);
    # false: from the odometry pose as it is.
    latency_compensation: bool
    command_delay: float                   # [s] from a tick to its commands acting
    # Who gives way (see control/giveway.py and docs/core.md). None: RVO2's half-half.
    avoidance_weight: object               # (N,) in [0, 1]; 1 keeps its course
    avoidance_group: object                # (N,) int group ids, rows of ``ignore``' columns
    ignore: object                         # (N, G) bool: robot i does not avoid group g
    observed_reciprocate: bool             # observed robots run ORCA too (else immovable)
    # (N,) bool or None: per robot, whether it runs ORCA too (observed rows; commanded rows
    # are ignored); None: observed_reciprocate for every observed robot.
    reciprocate: object
    lock_time_after_avoid: float           # [s] keep a diverted velocity this long; 0 = off
    lock_time_after_clean: float           # [s] keep the velocity after a diversion ends
    # Moving things in the scans (control/people.py): a PeopleConfig, or None (off). Only with
    # scan_enabled.
    people: object
    # [m] margin kept from every moving track and known person (FleetInputs.people) beyond
    # its radius, given up before a robot is left without a move (as safety_margin is).
    person_margin: float
    # Who does not avoid (moving tracks, known people, immovable observed robots) is looked
    # for this far ahead [s] and this far away [m]: walkers close faster than robots.
    person_time_horizon: float
    person_neighbor_dist: float
    # [s] Walking people and tracks are also avoided where they will be this far ahead,
    # while the margins are whole (a preference; 0 = off).
    person_lead_time: float
    # Preferred velocities are turned out of walkers' keep-outs (core.orca.keepout): how far along
    # its velocity a walker's keep-out reaches [s] (0 = off), what 1 m of depth in them is
    # worth [m/s], and how far beyond both radii they reach [m].
    person_keepout_time: float
    person_keepout_weight: float
    person_keepout_buffer: float
    person_keepout_differential: bool      # differential robots keep out too
    # Robots whose straight way runs into standing people plan a way round them
    # (core.routes.way_round).
    person_way_round: bool
    scan_way_round: bool                   # the way round walls the scans show
    # Acceleration limits, (N,) or scalar, 0 = unlimited (docs/acceleration.md): ORCA picks
    # only velocities reachable from the last command within one period, and the drive
    # mapping clips each command's change to them.
    max_accel: object                      # [m/s^2] speeding up (and turning the velocity)
    max_decel: object                      # [m/s^2] braking toward a stop
    max_angular_accel: object              # [rad/s^2] differential robots' yaw rate, both ways
    # Localisation poses (control/localisation.py): a robot's radius grows by
    # min(covariance_scale x sigma, max_inflation); a pose older than pose_timeout is not used.
    covariance_scale: float
    max_inflation: float                   # [m]
    pose_timeout: float                    # [s]
    # (N,) bool: robots with a localisation pose source (the node: a pose_topic); only their
    # odometry history is kept. None: any robot may get poses.
    pose_source: object

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
    def from_values(cls, values) -> 'FleetConfig':
        """
        Build the config of a validated ``{name: value}`` parameter set (what the node runs).

        One loop over the fields: a field named as a parameter takes its value (an (N,) array
        of the robots' values where the parameter has per-robot overrides), the few others
        are derived from parameters.
        """
        names = tuple(values['robots']) + tuple(values.get('observed_robots') or ())
        derived = _derived(values, names)
        return cls(**{f.name: derived[f.name] if f.name in derived
                      else _column(values, names, T.PARAMS_BY_NAME[f.name])
                      for f in fields(cls)})

    @classmethod
    def from_params(cls, robots, observed_robots=(), **given) -> 'FleetConfig':
        """
        Build the config the node runs with these robots and parameters, without ROS.

        given : parameters by name, as in a params file (``radius=0.3``,
        ``**{'r2.radius': 0.4}``); the rest are the node's defaults. Raises ValueError for
        an unknown name (with the nearest one) or an invalid value (with the reason).

        >>> FleetConfig.from_params(['a', 'b'], radius=0.3).radius.tolist()
        [0.3, 0.3]
        """
        return cls.from_values(node_values(robots, observed_robots, **given))

    @classmethod
    def uniform(cls, names, n_controlled=None, **knobs) -> 'FleetConfig':
        """
        Build a fleet of identical robots (tests, scripts): the node's defaults, then knobs.

        knobs ``radius``, ``max_speed``, ``max_angular_speed``, ``drive`` and
        ``lookahead_distance`` are parameters (scalars, for every robot); the other knobs
        replace fields of the config as they are. Unlike the node's config, ``reciprocate``
        and ``pose_source`` are None (every observed robot as observed_reciprocate says;
        any robot may get poses) unless given. Not validated.

        >>> FleetConfig.uniform(['a', 'b'], radius=0.3).radius.tolist()
        [0.3, 0.3]
        """
        c = len(names) if n_controlled is None else n_controlled
        given = {key: knobs.pop(key) for key in UNIFORM_PARAMS if key in knobs}
        values = T.defaults(list(names[:c]), list(names[c:]), given)
        knobs = {'reciprocate': None, 'pose_source': None, **knobs}
        return replace(cls.from_values(values), **knobs)


# Parameters that FleetConfig.uniform takes as parameters (the rest of its knobs are fields).
UNIFORM_PARAMS = ('radius', 'max_speed', 'max_angular_speed', 'drive', 'lookahead_distance')


def node_values(robots, observed_robots=(), **given):
    """
    Return the validated ``{name: value}`` set of a node with these robots and parameters.

    As the node declares them: observed_robots without the commanded robots, the defaults
    where nothing is given. Raises ValueError for an unknown name or an invalid value.
    """
    observed = T.without_commanded(robots, observed_robots)
    values = T.defaults(list(robots), observed, given)
    unknown = sorted(set(given) - set(values))
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(values), n=1, cutoff=0.6)
        hint = f' (did you mean {close[0]!r}?)' if close else ''
        raise ValueError(f'{unknown[0]!r} is not a parameter of orca_nav{hint}')
    error = T.validate(values)
    if error:
        raise ValueError(f'invalid parameters: {error}')
    return values


def navigation_config(values) -> NavigationConfig:
    """Return the NavigationConfig of a parameter set (its fields are parameters by name)."""
    return NavigationConfig(**{f.name: values[f.name] for f in fields(NavigationConfig)})


def people_config(values) -> PeopleConfig:
    """Return the PeopleConfig of a parameter set: field f is parameter f or track_f."""
    return PeopleConfig(**{f.name: values[f.name if f.name in values else 'track_' + f.name]
                           for f in fields(PeopleConfig) if f.name != 'enabled'})


def _column(values, names, spec):
    """Return a parameter as a FleetConfig field: (N,) or (N, length) per robot, else the value."""
    if spec.robot_only or spec.overridable:
        dtype = bool if spec.type == 'bool' else float
        column = np.array(T.robot_values(values, names, spec.name), dtype=dtype)
        return column.reshape(len(names), spec.length) if spec.length else column
    value = values[spec.name]
    return tuple(value) if spec.type == 'double_array' else value


def _derived(values, names):
    """Return the FleetConfig fields that are no parameter of their own (from parameters)."""
    max_speed = np.array(T.robot_values(values, names, 'max_speed'), dtype=float)
    differential = np.array([d == DIFFERENTIAL for d in
                             T.robot_values(values, names, 'drive')], dtype=bool)
    pref_speed = T.fleet_value(values, 'pref_speed')  # None: each robot's max_speed
    footprint = tuple(T.robot_footprints(values, names))
    radius = [r if polygon is None else footprint_radius(polygon, values['footprint_padding'])
              for r, polygon in zip(T.robot_values(values, names, 'radius'), footprint)]
    return {
        'names': names, 'n_controlled': len(values['robots']),
        'radius': np.array(radius, dtype=float), 'footprint': footprint,
        'pref_speed': (max_speed.copy() if pref_speed is None
                       else np.minimum(pref_speed, max_speed)),
        'differential': differential,
        'lookahead': np.where(differential, values['lookahead_distance'], 0.0),
        'period': 1.0 / values['rate'],
        'pose_source': np.array([bool(t) for t in T.robot_values(values, names, 'pose_topic')],
                                dtype=bool),
        'people': people_config(values) if values['track_people'] else None,
        **_give_way(values, names)}


def _give_way(values, names):
    """
    Return the FleetConfig fields of who gives way: weights, group ids, ignore mask.

    None where they change nothing (every weight 0.5: RVO2's half-half; no group ignored).
    """
    weights = np.array(T.robot_values(values, names, 'avoidance_weight'), dtype=float)
    group = T.robot_values(values, names, 'avoidance_group')
    ignored = [list(g) for g in T.robot_values(values, names, 'groups_to_ignore')]
    out = {'avoidance_weight': weights if np.any(weights != 0.5) else None,
           'avoidance_group': None, 'ignore': None}
    if any(ignored):
        ids = sorted(set(group) | {g for row in ignored for g in row})
        out['avoidance_group'] = np.array([ids.index(g) for g in group], np.int64)
        mask = np.zeros((len(names), len(ids)), bool)
        for i, row in enumerate(ignored):
            mask[i, [ids.index(g) for g in row]] = True
        out['ignore'] = mask
    return out


# Python type of each ROS parameter type (the typed fields of FleetValues).
PY_TYPES = {'double': float, 'integer': int, 'bool': bool, 'string': str, 'string_array': list,
            'double_array': list}

# Every fleet parameter as a typed, read-only field: ``settings.params.goal_tolerance``.
FleetValues = make_dataclass(
    'FleetValues', [(spec.name, PY_TYPES[spec.type]) for spec in T.FLEET_PARAMS], frozen=True,
    namespace={'__doc__': 'The fleet parameters as typed fields (built from FLEET_PARAMS).'})


@dataclass(frozen=True)
class Settings:
    """Accepted parameters: typed fleet values, the controller's FleetConfig and the raw dict."""

    params: FleetValues  # every fleet parameter, typed
    fleet: FleetConfig   # per-robot arrays (robots + observed_robots, commanded first)
    navigation: NavigationConfig  # route following
    values: dict         # the accepted {name: value}, merged with new ones on a parameter set

    @property
    def names(self):
        """Return the robot names, commanded first, then observed."""
        return self.fleet.names

    @property
    def n_controlled(self):
        """Return the number of commanded robots (the first rows)."""
        return self.fleet.n_controlled


def resolve(values):
    """Turn a validated ``{name: value}`` set into ``Settings``: every consumer's config."""
    params = FleetValues(**{spec.name: values[spec.name] for spec in T.FLEET_PARAMS})
    return Settings(params=params, fleet=FleetConfig.from_values(values),
                    navigation=navigation_config(values), values=dict(values))
