"""
The parameter table of orca_nav: one row per parameter, read by the node and the controller.

``PARAMS`` is the table. Each row is a parameter of orca_nav_node: name, default, ROS type,
description, range or choices, read-only, and two columns of conventions:

- ``per_robot``: the parameter may be overridden per robot, as ``<robot>.<name>``; the value
  is the ROS spelling of "not overridden" (the override's default). ``robot_only`` rows exist
  only per robot (``odom_offset``, ``reciprocate``).
- ``unset``: a fleet value that means "not set" (``pref_speed`` 0: each robot's max_speed).

Conventions, converted once (``robot_values``, ``fleet_value``) and nowhere else:

- **Unset is None.** ROS has no None, so each parameter that can be unset names its ROS
  spelling in the table (the override's default: '' for names, [] for lists, 0 for a
  quantity that must be positive, -1 where 0 is a value, such as ``safety_margin``); the
  functions here turn it into None and then into the fleet value. Nothing downstream sees
  the spellings.
- **Unlimited (or off) is 0**, for every limit and time of the table (``max_accel``,
  ``slowdown_distance``, ``lock_time_after_avoid``, ...), as the FleetConfig and the core
  take them. Per-robot acceleration overrides keep 0 as "the fleet value" (their default,
  which users' files rely on): a robot cannot be unlimited in a limited fleet.

``FLEET_PARAMS`` (the node's fleet-wide parameters) and ``ROBOT_PARAMS`` (the per-robot
overrides, derived from the rows, not restated) are views of the table. ``defaults``,
``validate`` and ``robot_values`` are pure functions of a ``{name: value}`` dict; the
controller's ``FleetConfig.from_values`` builds from them what the node runs. No ROS here
(orca_nav.ros.params declares the table on a node).
"""

from dataclasses import dataclass, replace
import difflib
import math
import re

from orca_nav.core.orca.drive import DRIVES, HOLONOMIC

from .footprint import checked_footprint, footprint_radius, parse_footprint

# A robot name is a ROS name token: it becomes the namespace of the robot's topics.
ROBOT_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')
# A topic name relative to the robot namespace: tokens separated by '/', no leading '/'.
RELATIVE_TOPIC = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$')
# A frame id (no leading '/' by tf2 convention).
FRAME_ID = re.compile(r'^[A-Za-z_][A-Za-z0-9_/]*$')
# A namespace: tokens separated by '/', leading and trailing '/' optional; '' = the root.
NAMESPACE = re.compile(r'^/?([A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*)?/?$')
# No per-robot override (the per_robot column of a fleet-only row).
NO_OVERRIDE = None


@dataclass(frozen=True)
class ParamSpec:
    """
    One parameter: name, default value, type, description, numeric range or string choices.

    type is one of 'double', 'integer', 'bool', 'string', 'string_array', 'double_array'.
    range is (low, high), inclusive, for numbers; choices a tuple of allowed strings; length the
    required length of a double array; read_only parameters are fixed once the node runs.
    per_robot is the ROS spelling of "not overridden" of a per-robot override (None: none);
    robot_only rows exist only per robot; unset is the fleet value that means "not set".
    """

    name: str
    default: object
    type: str  # noqa: A003 -- the ROS parameter type
    description: str
    range: tuple = None  # noqa: A003 -- the ROS parameter range
    choices: tuple = None
    length: int = None
    read_only: bool = False
    default_from: str = None  # when not given: the value of this parameter (declared earlier)
    per_robot: object = NO_OVERRIDE
    robot_only: bool = False
    unset: object = None

    @property
    def overridable(self):
        """Whether the row has a per-robot override (``<robot>.<name>``)."""
        return self.per_robot is not NO_OVERRIDE


def _p(name, default, type_, description, **kw):
    return ParamSpec(name, default, type_, description, **kw)


PARAMS = (
    # Fleet layout and topics (fixed while the node runs).
    _p('robots', [], 'string_array',
       'Robots this node commands: it subscribes /<r>/<odom_topic> and /<r>/<goal_topic> and '
       'publishes /<r>/<cmd_vel_topic> for each', read_only=True),
    _p('observed_robots', [], 'string_array',
       'Robots whose odometry is watched as moving obstacles but which are not commanded '
       '(decentralised layout: the other robots of the fleet)', read_only=True),
    _p('robots_namespace', '', 'string',
       "Namespace of the robots' topics: robot r's topics are <robots_namespace>/<r>/<topic>, "
       "relative to the node's namespace as ROS names are unless it starts with / (node in "
       '/site: fleet_a -> /site/fleet_a/robot1/odom, /fleet_a -> /fleet_a/robot1/odom); empty = '
       "<r>/<topic> in the node's namespace. The decentralised layout's launch sets it",
       read_only=True),
    _p('odom_topic', 'odom', 'string',
       'Odometry topic (nav_msgs/Odometry) relative to each robot namespace', read_only=True),
    _p('goal_topic', 'goal_pose', 'string',
       'Goal topic (geometry_msgs/PoseStamped) relative to each robot namespace',
       read_only=True),
    _p('cancel_topic', 'cancel', 'string',
       'Goal cancel topic (std_msgs/Empty) relative to each robot namespace: the robot drops '
       'its goal or route, stops and reports idle (so does a goal with an empty frame_id)',
       read_only=True),
    _p('cmd_vel_topic', 'cmd_vel', 'string',
       'Velocity command topic relative to each robot namespace', read_only=True),
    _p('status_topic', 'orca_status', 'string',
       'Per-robot status topic (std_msgs/String, JSON, latched) relative to each robot '
       'namespace', read_only=True),
    _p('cmd_vel_stamped', False, 'bool',
       'Publish geometry_msgs/TwistStamped instead of Twist (Nav2 on Kilted expects stamped)',
       read_only=True),
    _p('rate', 10.0, 'double', 'Control rate: one ORCA step for the whole fleet per period [Hz]',
       range=(0.5, 200.0), read_only=True),
    _p('executor', 'events', 'string',
       'Executor of orca_nav_node: single (rclpy SingleThreadedExecutor), multi '
       '(MultiThreadedExecutor) or events (rclpy.experimental.EventsExecutor, Jazzy and newer; '
       'falls back to single where missing)', choices=('single', 'multi', 'events'),
       read_only=True),
    _p('global_frame', 'map', 'string',
       'Frame of goals and of the ORCA computation; goals in another frame are rejected'),
    # Robot model (fleet values; per_robot: the override of one robot, see the module).
    _p('drive', HOLONOMIC, 'string',
       'holonomic (linear.x, linear.y) or differential (linear.x, angular.z, point-ahead '
       'method)', choices=DRIVES,
       per_robot=''),
    _p('radius', 0.2, 'double',
       "Robot radius [m]; a robot with a footprint takes its footprint's instead",
       range=(0.01, 10.0),
       per_robot=0.0),
    _p('footprint', '', 'string',
       'Robot outline as in Nav2: "[[x, y], ...]" [m] in the base frame (x forward), at least '
       '3 points around the origin, every vertex within 10 m of it (a concave one is replaced '
       "by its convex hull); it overrides radius. '' or '[]' = none, a disc of radius (per "
       "robot: '[]' = a disc in a fleet with a footprint). A robot avoids and is routed with "
       'the polygon; a holonomic one turns its long axis to its way (a differential one only '
       'with footprint_differential, else as the disc that holds it)',
       per_robot=''),
    _p('footprint_padding', 0.01, 'double',
       'Added to the footprint for planning, as Nav2: the disc of a robot with a footprint is '
       'its farthest vertex + this [m]', range=(0.0, 1.0)),
    _p('footprint_differential', False, 'bool',
       'Differential robots with a footprint avoid and are routed with the polygon too, '
       'stopping to turn in place before and after narrow places (through doors their disc '
       'does not fit; still jams in some aisles and over DDS: docs/node.md); false: as the '
       'disc that holds the polygon'),
    _p('max_speed', 0.5, 'double', 'Maximum speed [m/s]', range=(0.01, 20.0),
       per_robot=0.0),
    _p('max_angular_speed', 1.5, 'double',
       'Maximum yaw rate of differential robots [rad/s]', range=(0.01, 50.0),
       per_robot=0.0),
    _p('max_accel', 0.0, 'double',
       'Largest speed-up [m/s^2]: ORCA only chooses velocities reachable within one period '
       'from the last command (0 = unlimited); see docs/acceleration.md', range=(0.0, 1000.0),
       per_robot=0.0),
    _p('max_decel', 0.0, 'double',
       'Largest braking [m/s^2] toward a stop, used when nothing safe is reachable otherwise '
       '(0 = unlimited)', range=(0.0, 1000.0),
       per_robot=0.0),
    _p('max_angular_accel', 0.0, 'double',
       'Largest change of the yaw rate of differential robots [rad/s^2] (0 = unlimited)',
       range=(0.0, 10000.0),
       per_robot=0.0),
    _p('pref_speed', 0.0, 'double',
       "Cruising speed toward the goal [m/s]; 0 = each robot's max_speed; never above it",
       range=(0.0, 20.0),
       unset=0.0),
    _p('lookahead_distance', 0.1, 'double',
       'Differential drive: distance D of the controlled point ahead of the axle [m]; the '
       'ORCA radius grows by D. Smaller D turns faster but commands larger yaw rates',
       range=(0.01, 2.0)),
    _p('pass_on_right', 0.15, 'double',
       'Symmetry breaking: preferred velocities are turned right by atan(pass_on_right) so that '
       'robots pass each other on the right; 0 = straight to the goal (symmetric scenes can '
       'then deadlock)', range=(0.0, 1.0)),
    # Goals.
    _p('goal_tolerance', 0.1, 'double',
       'A robot whose centre is this close to its goal has arrived and stops [m]',
       range=(0.001, 100.0)),
    _p('slowdown_distance', 0.5, 'double',
       'Inside this distance to the goal the speed falls linearly to zero [m]; 0 = no slowdown',
       range=(0.0, 100.0)),
    # ORCA.
    _p('neighbor_dist', 3.0, 'double',
       'Other robots farther than this are ignored [m]; larger is safer but slower',
       range=(0.01, 1000.0)),
    _p('max_neighbors', 10, 'integer',
       'At most this many nearest robots are avoided per robot', range=(0, 1000)),
    _p('time_horizon', 2.0, 'double',
       'Collisions with other robots are avoided this far ahead [s]; larger is more cautious '
       'and less agile', range=(0.01, 100.0)),
    _p('time_horizon_obst', 2.0, 'double',
       'Collisions with static (scan) obstacles are avoided this far ahead [s]',
       range=(0.01, 100.0)),
    # Safety.
    _p('odom_timeout', 0.5, 'double',
       'A robot whose last valid odometry is older than this gets zero velocity [s]',
       range=(0.01, 60.0)),
    _p('stale_keepout_time', 5.0, 'double',
       'Others keep avoiding a robot with stale odometry at its last known position this long '
       'after odom_timeout [s]', range=(0.0, 3600.0)),
    _p('latency_compensation', True, 'bool',
       'Plan from where each robot will be when the command takes effect: its odometry pose '
       'moved on from the odometry time to now + command_delay with its twist and the '
       'commands sent since (false: from the odometry pose as it is)'),
    _p('command_delay', 0.0, 'double',
       'Time from a tick to its commands acting on the robots [s]: cmd_vel transport plus the '
       "base's control cycle (measure it: a command step and the odometry's answer). With "
       'latency_compensation the robots and people are planned from where they will be then',
       range=(0.0, 2.0)),
    _p('safety_margin', 0.05, 'double',
       'Every radius grows by this for planning (ORCA discs and route clearance); contact is '
       'still the true radii touching [m]. Larger: fewer contacts from localisation error and '
       'latency, but wider detours and more deadlocks in narrow places', range=(0.0, 5.0),
       per_robot=-1.0),
    # Localisation (docs/node.md, Localisation).
    _p('pose_topic', '', 'string',
       'Localisation pose topic (geometry_msgs/PoseWithCovarianceStamped in global_frame, e.g. '
       'amcl_pose) relative to each robot namespace: corrects the odometry frame of the robot '
       '(the velocity still comes from odometry); empty = off (odometry + odom_offset)',
       read_only=True,
       per_robot=''),
    _p('odom_offset', [0.0, 0.0, 0.0], 'double_array',
       "Pose of this robot's odometry frame in global_frame [x m, y m, yaw rad]", length=3,
       robot_only=True),
    _p('covariance_scale', 2.0, 'double',
       "A localised robot's radius grows by this times the larger of its pose's x and y "
       'standard deviations (capped by max_inflation); 0 = no growth', range=(0.0, 100.0)),
    _p('max_inflation', 0.5, 'double',
       'At most this is added to a radius for pose uncertainty [m]', range=(0.0, 10.0)),
    _p('pose_timeout', 5.0, 'double',
       'A localisation pose older than this is not used; with none newer the robot goes on '
       'with odometry and the last correction [s]. AMCL publishes only when it updates (after '
       'the robot moved), so a standing robot may go this long without one',
       range=(0.01, 3600.0)),
    _p('max_coordinate', 1e5, 'double',
       'Odometry poses (after odom_offset) and goals with |x| or |y| in global_frame above '
       'this are rejected as implausible [m]', range=(1.0, 1e9)),
    # Who gives way (docs/core.md).
    _p('avoidance_weight', 0.5, 'double',
       'Share of the avoiding this robot leaves to others: robot i takes (w_j + 1 - w_i) / 2 of '
       'avoiding j; 0.5 for all = RVO2 (half each); 1 = it keeps its course and the others '
       'take all the avoiding', range=(0.0, 1.0),
       per_robot=-1.0),
    _p('avoidance_group', 'default', 'string',
       'Avoidance group of the robots (a name); see groups_to_ignore',
       per_robot=''),
    _p('groups_to_ignore', [], 'string_array',
       'Groups whose robots these robots do not avoid (they still avoid these robots unless '
       'they ignore this group too), e.g. robots on another floor',
       per_robot=[]),
    _p('observed_reciprocate', False, 'bool',
       'Observed robots run ORCA too and take their share of the avoiding (the decentralised '
       'layout); false: they are trusted with nothing, the commanded robots avoid them fully. '
       "Read-only: it is the default of each observed robot's reciprocate, fixed at start",
       read_only=True),
    _p('reciprocate', False, 'bool',
       'Observed robots: this one runs ORCA and takes its share of the avoiding (a peer robot '
       'of another node); false: it does not avoid (a forklift, a robot of another make), the '
       'commanded robots avoid it fully, looking as far ahead as for people. Default: '
       'observed_reciprocate', default_from='observed_reciprocate', read_only=True,
       robot_only=True),
    _p('lock_time_after_avoid', 0.0, 'double',
       'After a robot had to change course, it keeps the new velocity this long unless that '
       'becomes unsafe [s]; 0 = off. Less jitter, a little less agility', range=(0.0, 10.0)),
    _p('lock_time_after_clean', 0.0, 'double',
       'After a diversion ends, the robot keeps its velocity this long unless that becomes '
       'unsafe [s]; 0 = off', range=(0.0, 10.0)),
    _p('priority_topic', 'orca_priority', 'string',
       'std_msgs/Float64 [s] relative to each robot namespace: the robot is immovable (the '
       'others avoid it fully) for that long; 0 ends it', read_only=True),
    # Visualisation.
    _p('publish_markers', True, 'bool', 'Publish visualization_msgs/MarkerArray on ~/markers'),
    _p('marker_rate', 2.0, 'double', 'Rate of ~/markers [Hz]', range=(0.1, 50.0),
       read_only=True),
    # Laser scans.
    _p('scan_enabled', False, 'bool',
       'Subscribe /<r>/<scan_topic> and avoid the obstacles the scans show', read_only=True),
    _p('scan_topic', 'scan', 'string',
       'Laser scan topic (sensor_msgs/LaserScan, sensor-data QoS) relative to each robot '
       'namespace', read_only=True),
    _p('obstacle_timeout', 0.5, 'double',
       'Scan obstacles older than this are forgotten [s]', range=(0.01, 60.0)),
    _p('share_obstacles', False, 'bool',
       "Every robot avoids every robot's scan obstacles (false: only the robot that saw them)"),
    _p('scan_sensor_offset', [0.0, 0.0, 0.0], 'double_array',
       'Laser pose in the robot body frame [x m, y m, yaw rad]', length=3),
    _p('track_people', False, 'bool',
       'Track compact scan clusters that no robot or map wall explains (people, unknown '
       'robots); moving tracks are avoided where they are going, the robots taking all the '
       'avoiding; published on ~/tracks. Default: the value of scan_enabled; true needs '
       'scan_enabled', default_from='scan_enabled'),
    _p('person_margin', 0.3, 'double',
       'Margin the robots would like to keep from moving tracks and known people beyond '
       'their radius [m]; a preference, given up before a robot is left without a move',
       range=(0.0, 2.0)),
    _p('person_time_horizon', 5.0, 'double',
       'Collisions with moving tracks, known people and observed robots that do not avoid '
       'are avoided this far ahead [s]; a person walking at 1 m/s toward a robot closes at '
       '2 m/s. People who stand (slower than 0.25 m/s) are looked for time_horizon ahead',
       range=(0.01, 100.0)),
    _p('person_lead_time', 1.0, 'double',
       'Robots also keep clear of where each walking track or known person will be this far '
       'ahead [s] (its velocity held), while the margins are whole: they pass behind a walker '
       'rather than across its next steps; a preference, given up first in a crowd; '
       '0 = only where it is', range=(0.0, 5.0)),
    _p('person_keepout_time', 1.25, 'double',
       'Robots would rather not stand where a walking track or known person will be within '
       'this long [s] (its velocity held): the preferred velocity of each robot is turned out '
       'of the next steps of walkers before the avoidance (a robot no longer runs ahead of a '
       'walker behind it); 0 = off', range=(0.0, 5.0)),
    _p('person_keepout_weight', 20.0, 'double',
       'What 1 m of mean depth in the keep-outs of walkers (over the next second) is worth in m/s '
       'of nearness to the preferred velocity: larger keeps farther out of their way, at the '
       'cost of detours', range=(0.0, 1000.0)),
    _p('person_keepout_buffer', 0.2, 'double',
       'The keep-out of a walker reaches this far beyond both radii [m]', range=(0.0, 2.0)),
    _p('person_keepout_differential', True, 'bool',
       'Differential robots keep out of the next steps of walkers too (false: holonomic '
       'robots only; on CrowdNav++ it takes their intrusions from 12 to 6 % and their '
       'collisions from 0.032 to 0.024: docs/crowds.md)'),
    _p('person_way_round', True, 'bool',
       'A robot whose straight way to its goal or carrot runs into standing people (tracks '
       'and known people slower than 0.25 m/s) heads round them, planned on a small grid of '
       'its own: ORCA alone stops in the wedge between two of them'),
    _p('scan_way_round', True, 'bool',
       'A robot without a route (no map) whose straight way to its goal runs into a wall its '
       'scans show heads round it the same way (needs scan_enabled): ORCA alone slides '
       'along the wall and stops where another robot meets it there'),
    _p('person_neighbor_dist', 10.0, 'double',
       'Moving tracks, known people and observed robots that do not avoid are looked for this '
       'far [m]', range=(0.01, 1000.0)),
    _p('track_timeout', 1.0, 'double',
       'A track no scan has seen this long is forgotten [s] (a confirmed one hidden behind '
       'nearer objects: up to 3 s, or this if longer)', range=(0.1, 10.0)),
    _p('track_confirm_hits', 3, 'integer',
       'Detections that confirm a track (only confirmed tracks may be moving agents)',
       range=(1, 20)),
    _p('track_confirm_time', 0.2, 'double',
       'A track with two detections at least this far apart is confirmed, whatever '
       'track_confirm_hits says [s]: at slow scan rates hits come late (3 at 4 Hz take '
       '0.5 s)', range=(0.0, 10.0)),
    _p('track_min_speed', 0.15, 'double',
       'A confirmed track faster than this is moving (an agent), and stops below half of '
       'it [m/s]; slower tracks stay scan obstacles', range=(0.01, 5.0)),
    _p('track_max_diameter', 1.1, 'double',
       'Scan clusters (once split) wider than this are walls, not people [m]; those wider '
       'than 0.8 m are people only if they are convex arcs (a straight or concave cluster '
       'is a wall). 1.1 admits a person of radius 0.5 m; it is also the largest diameter a '
       'track is given', range=(0.2, 5.0)),
    _p('track_split_depth', 0.12, 'double',
       'Scan clusters are split where their range profile peaks this much above both sides '
       '[m] (two people side by side, one partly behind another); 0 = no split',
       range=(0.0, 2.0)),
    _p('track_gate', 0.7, 'double',
       'A track takes detections within this of its predicted position, beyond 3 sigma [m]; '
       'larger follows sharper turns but lets neighbours steal detections', range=(0.05, 5.0)),
    _p('track_accel_noise', 2.0, 'double',
       "Standard deviation of a track's velocity change over one second [m/s^2]: larger "
       'follows people who turn or slow down sooner but gives noisier velocities',
       range=(0.1, 20.0)),
    # Maps and routes.
    _p('map_topic', '/map', 'string',
       'nav_msgs/OccupancyGrid in global_frame (reliable, transient local, as a map server '
       'publishes it); routes are planned on it once it arrives', read_only=True),
    _p('occupied_threshold', 65, 'integer',
       'Map cells at or above this occupancy [0-100] are walls', range=(1, 100)),
    _p('unknown_is_free', False, 'bool',
       'Plan through unknown map cells (-1); false: they are obstacles'),
    _p('max_map_cells', 25_000_000, 'integer',
       'Maps with more cells are rejected (memory and planning time)', range=(1, 400_000_000)),
    _p('route_margin', 0.1, 'double',
       'Routes keep each robot radius (with safety_margin) plus this from occupied cells where '
       'there is room [m]; a passage narrower than that is still taken, through its middle, if '
       "the robot's true disc fits (nearer is dearer, lethal only where the disc touches)",
       range=(0.0, 5.0)),
    _p('route_inflation_band', 0.3, 'double',
       'Like Nav2 inflation_radius, relative: beyond radius + safety_margin + route_margin the '
       'cost of a route cell decays out to this much farther [m]; larger: routes keep to the '
       'middle of wider corridors', range=(0.0, 5.0)),
    _p('route_cost_scaling_factor', 10.0, 'double',
       'Like Nav2 cost_scaling_factor: how fast the route cost decays with the distance from '
       'the walls [1/m]; smaller: routes stay farther from walls', range=(0.0, 100.0)),
    _p('route_lookahead', 1.0, 'double',
       'The preferred velocity points at a carrot this far ahead along the route [m] (pulled '
       'back while out of sight on the map)', range=(0.05, 50.0)),
    _p('map_walls', True, 'bool',
       'Walls of the map near each robot are ORCA obstacles (robots keep off mapped walls '
       'even without scans)'),
    _p('progress_distance', 0.5, 'double',
       'A robot that gains less than this toward its goal in progress_timeout is stuck [m]',
       range=(0.01, 100.0)),
    _p('progress_timeout', 10.0, 'double',
       'See progress_distance [s]; a stuck robot is re-planned once (again when it is stuck away '
       "from its route's start) and reported",
       range=(0.1, 3600.0)),
    _p('plan_topic', 'plan', 'string',
       'External route (nav_msgs/Path in global_frame, e.g. from Nav2) relative to each robot '
       'namespace: followed instead of a planned route, its last pose is the goal; an empty '
       'path cancels it', read_only=True),
    _p('route_topic', 'orca_route', 'string',
       'The route each robot follows (nav_msgs/Path, latched) relative to each robot namespace',
       read_only=True),)

FLEET_PARAMS = tuple(spec for spec in PARAMS if not spec.robot_only)
FLEET_BY_NAME = {spec.name: spec for spec in FLEET_PARAMS}
PARAMS_BY_NAME = {spec.name: spec for spec in PARAMS}


def spelling(value):
    """Return a value as written in a YAML parameters file: '' and [] visible."""
    if isinstance(value, str):
        return repr(value) if not value else value
    return repr(list(value) if isinstance(value, (list, tuple)) else value)


def is_unset(spell, value):
    """Whether ``value`` is ``spell``, the ROS spelling of "unset" (no bool passes for 0)."""
    if isinstance(spell, list):
        return isinstance(value, (list, tuple)) and not value
    return type(value) is not bool and value == spell


def _override_spec(spec):
    """Return the spec of a fleet row's per-robot override: its default is the unset spelling."""
    unset = spec.per_robot
    text = (f'{spec.name} of this robot; {spelling(unset)} (the default) = the fleet '
            f'{spec.name}')
    low_high = None if spec.range is None else (min(unset, spec.range[0]), spec.range[1])
    choices = None if spec.choices is None else (unset,) + tuple(spec.choices)
    return replace(spec, default=unset, description=text, range=low_high, choices=choices,
                   default_from=None)


# The per-robot parameters, ``<robot>.<name>``: the overrides and the robot-only rows.
ROBOT_PARAMS = tuple(spec if spec.robot_only else _override_spec(spec)
                     for spec in PARAMS if spec.robot_only or spec.overridable)
ROBOT_BY_NAME = {spec.name: spec for spec in ROBOT_PARAMS}


def robot_param_name(robot, name):
    """Return the full name of a per-robot parameter: ('robot2', 'radius') -> 'robot2.radius'."""
    return f'{robot}.{name}'


def without_commanded(robots, observed_robots):
    """
    ``observed_robots`` without the robots this node commands (commanding one wins).

    So one params file that lists the whole fleet in ``observed_robots`` serves every node of
    the decentralised layout: each node observes every robot but its own.

    >>> without_commanded(['r2'], ['r1', 'r2', 'r3'])
    ['r1', 'r3']
    """
    own = set(robots)
    return [o for o in observed_robots if o not in own]


def all_specs(robots, observed_robots=()):
    """List of (full name, ParamSpec) for the fleet parameters and every robot's overrides."""
    out = [(spec.name, spec) for spec in FLEET_PARAMS]
    for robot in list(robots) + list(observed_robots):
        out.extend((robot_param_name(robot, spec.name), spec) for spec in ROBOT_PARAMS)
    return out


def defaults(robots=(), observed_robots=(), given=None):
    """
    ``{name: value}`` of every parameter of a node with these robots, as the node declares it.

    given : values set by the user (a params file); the others are defaults, a default_from
    taking the value of its parameter as given (so ``track_people`` follows ``scan_enabled``).
    """
    given = dict(given or {})
    given['robots'] = list(robots)
    given['observed_robots'] = list(observed_robots)
    values = {}
    for name, spec in all_specs(robots, observed_robots):
        if name in given:
            values[name] = given[name]
        elif spec.default_from:
            values[name] = values[spec.default_from]
        else:
            values[name] = list(spec.default) if isinstance(spec.default, list) else spec.default
    return values


def check_value(name, spec, value):
    """Error message if ``value`` does not fit ``spec``, else None (pure; used by validate)."""
    t = spec.type
    if t == 'double':
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f'{name} must be a number, got {value!r}'
        if not math.isfinite(value):
            return f'{name} must be finite, got {value!r}'
    elif t == 'integer':
        if isinstance(value, bool) or not isinstance(value, int):
            return f'{name} must be an integer, got {value!r}'
    elif t == 'bool':
        if not isinstance(value, bool):
            return f'{name} must be true or false, got {value!r}'
    elif t == 'string':
        if not isinstance(value, str):
            return f'{name} must be a string, got {value!r}'
    elif t == 'string_array':
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            return f'{name} must be a list of strings, got {value!r}'
    elif t == 'double_array':
        if (isinstance(value, (str, bytes)) or not hasattr(value, '__len__')
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                           for v in value)):
            return f'{name} must be a list of numbers, got {value!r}'
        if not all(math.isfinite(v) for v in value):
            return f'{name} must contain finite numbers, got {list(value)!r}'
        if spec.length is not None and len(value) != spec.length:
            return f'{name} must have {spec.length} numbers [x, y, yaw], got {list(value)!r}'
    if spec.range is not None and not spec.range[0] <= value <= spec.range[1]:
        return (f'{name} must be between {spec.range[0]} and {spec.range[1]}, '
                f'got {value!r}')
    if spec.choices is not None and value not in spec.choices:
        allowed = ', '.join(repr(c) for c in spec.choices)
        return f'{name} must be one of {allowed}, got {value!r}'
    return None


def check_robot_value(name, key, value):
    """
    Error message if ``value`` does not fit the per-robot parameter ``key``, else None.

    An override is unset (its ROS spelling) or a value the fleet parameter could have.
    """
    spec = PARAMS_BY_NAME[key]
    if spec.robot_only:
        return check_value(name, spec, value)
    if is_unset(spec.per_robot, value):
        return None
    error = check_value(name, spec, value)
    return error and f'{error} (or {spelling(spec.per_robot)}: the fleet value)'


def validate(values):
    """
    Check a complete ``{name: value}`` parameter set; return an error message or None.

    Checks each value against its spec and the fleet as a whole: at least one robot, valid and
    unique robot names, no robot both commanded and observed, topic and frame names.
    """
    robots = values.get('robots') or []
    observed = values.get('observed_robots') or []
    for name, spec in all_specs([], []):
        if name not in values:
            return f'parameter {name} is missing'
        error = check_value(name, spec, values[name] if values[name] is not None else [])
        if error:
            return error
    if not robots:
        return 'robots is empty: list the robots this node commands, e.g. robots: [robot1, robot2]'
    names = list(robots) + list(observed)
    for robot in names:
        if not ROBOT_NAME.match(robot):
            return (f'robot name {robot!r} is not a valid ROS name token (a letter, then letters, '
                    'digits or _)')
        if robot in FLEET_BY_NAME:
            return f'robot name {robot!r} clashes with the parameter of the same name'
    seen = set()
    for robot in names:
        if robot in seen:
            where = ('both robots and observed_robots' if robot in robots and robot in observed
                     else 'robots twice' if robot in robots else 'observed_robots twice')
            return f'robot {robot!r} is listed in {where}'
        seen.add(robot)
    for robot in names:
        for spec in ROBOT_PARAMS:
            name = robot_param_name(robot, spec.name)
            if name in values:
                error = check_robot_value(name, spec.name, values[name])
                if error:
                    return error
    return _check_footprints(values, names) or _check_names(values, names)


def footprint_names(values, names):
    """Return the footprint parameters of a set that are given: the fleet's, then overrides."""
    out = ['footprint'] if values.get('footprint') else []
    return out + [robot_param_name(r, 'footprint') for r in names
                  if values.get(robot_param_name(r, 'footprint'))]


def _check_footprints(values, names):
    """Error message if a footprint given does not parse or is no robot outline, else None."""
    for name in footprint_names(values, names):
        try:
            points = parse_footprint(values[name], name)
            if points is not None:
                checked_footprint(points, name)
        except ValueError as exc:
            return str(exc)
    return None


def robot_footprints(values, names):
    """
    Each robot's footprint: (K, 2) polygon [m] counter-clockwise in its base frame, or None.

    Its override, else the fleet's; '' and '[]' are none (a disc). ``values`` must validate.
    """
    return [None if points is None else checked_footprint(points)[0]
            for points in (parse_footprint(text) for text in
                           robot_values(values, names, 'footprint'))]


def footprint_warnings(values):
    """
    Return the lines to log about the footprints of a valid set, one per case.

    A concave footprint replaced by its hull; a footprint and a radius given for the same
    robot (the footprint wins).
    """
    names = list(values['robots']) + list(values.get('observed_robots') or [])
    lines = []
    for name in footprint_names(values, names):
        points = parse_footprint(values[name], name)
        warning = None if points is None else checked_footprint(points, name)[1]
        if warning:
            lines.append(warning)
    padding = values.get('footprint_padding', PARAMS_BY_NAME['footprint_padding'].default)
    fleet_radius = values.get('radius', PARAMS_BY_NAME['radius'].default)
    if (parse_footprint(values.get('footprint') or '') is not None
            and fleet_radius != PARAMS_BY_NAME['radius'].default):
        lines.append(f'footprint and radius are both given: the footprint wins (radius '
                     f'{fleet_radius} ignored where a robot has a footprint)')
    for robot, polygon in zip(names, robot_footprints(values, names)):
        radius = values.get(robot_param_name(robot, 'radius'), 0.0)
        if polygon is not None and not is_unset(PARAMS_BY_NAME['radius'].per_robot, radius):
            given = robot_param_name(robot, 'footprint')
            given = given if values.get(given) else 'footprint'
            lines.append(f'{given} and {robot}.radius are both given: the footprint wins '
                         f'({robot} avoids as a disc of {footprint_radius(polygon, padding):.3f}'
                         f' m, not {radius})')
    return lines


def _check_names(values, names):
    """Error message if a topic, frame, namespace or group name is malformed, else None."""
    for name in ('odom_topic', 'goal_topic', 'cancel_topic', 'cmd_vel_topic', 'status_topic',
                 'scan_topic', 'plan_topic', 'route_topic', 'priority_topic'):
        if not RELATIVE_TOPIC.match(values[name]):
            return (f'{name} must be a topic name relative to the robot namespace '
                    f'(e.g. "odom", no leading /), got {values[name]!r}')
    for robot in names:
        for name in ('pose_topic', robot_param_name(robot, 'pose_topic')):
            topic = values.get(name) or ''
            if topic and not RELATIVE_TOPIC.match(topic):
                return (f'{name} must be empty (off) or a topic name relative to the robot '
                        f'namespace (e.g. "amcl_pose", no leading /), got {topic!r}')
    if not NAMESPACE.match(values['robots_namespace']):
        return ('robots_namespace must be a namespace such as "fleet_a" (or empty), got '
                f'{values["robots_namespace"]!r}')
    if not RELATIVE_TOPIC.match(values['map_topic'].lstrip('/')):
        return f'map_topic must be a topic name such as "/map", got {values["map_topic"]!r}'
    if not values['avoidance_group'].strip():
        return 'avoidance_group must be a group name such as "default", got an empty string'
    if not FRAME_ID.match(values['global_frame']):
        return f'global_frame must be a frame id such as "map", got {values["global_frame"]!r}'
    if values['track_people'] and not values['scan_enabled']:
        return ('track_people needs scan_enabled: people are tracked in the laser scans (set '
                'scan_enabled: true, or track_people: false)')
    return None


def fleet_value(values, name):
    """Return fleet parameter ``name``, or None where it is unset (``pref_speed`` 0)."""
    spec = FLEET_BY_NAME[name]
    value = values.get(name, spec.default)
    return None if spec.unset is not None and is_unset(spec.unset, value) else value


def robot_values(values, names, key):
    """
    One per-robot parameter for every robot: its override, or the fleet value where unset.

    A missing override is unset too; a robot-only row (``odom_offset``, ``reciprocate``)
    takes its default (or its default_from parameter's value).
    """
    spec = PARAMS_BY_NAME[key]
    if spec.robot_only:
        fallback = (values.get(spec.default_from, spec.default) if spec.default_from
                    else spec.default)
    else:
        fallback = values.get(key, spec.default)
    out = []
    for robot in names:
        value = values.get(robot_param_name(robot, key))
        unset = value is None or (not spec.robot_only and is_unset(spec.per_robot, value))
        out.append(fallback if unset else value)
    return out


def unknown_groups(values):
    """Group names in groups_to_ignore that no robot belongs to (allowed; worth a warning)."""
    names = list(values['robots']) + list(values.get('observed_robots') or [])
    groups = set(robot_values(values, names, 'avoidance_group'))
    return sorted({g for row in robot_values(values, names, 'groups_to_ignore') for g in row}
                  - groups)


def unused_overrides(overrides, declared, robots):
    """
    Sort the parameter overrides that no declared parameter takes (ROS 2 ignores them).

    overrides, declared : parameter names; robots : every robot of the node (commanded and
    observed). Returns (misspelt, other_robots): misspelt is a list of (name, hint) for names
    that are no parameter of this node, hint the nearest declared name or None; other_robots
    the per-robot overrides of robots the node neither commands nor observes (a params file
    shared by several nodes).

    >>> unused_overrides(['radious', 'r2.avoidance_weigth', 'r9.radius', 'radius'],
    ...                  ['radius', 'r2.avoidance_weight', 'r2.radius'], ['r2'])
    ([('radious', 'radius'), ('r2.avoidance_weigth', 'r2.avoidance_weight')], ['r9.radius'])
    """
    declared = set(declared)
    robots = set(robots)
    misspelt, other = [], []
    for name in overrides:
        if name in declared or name.startswith('qos_overrides.'):
            continue
        robot, _, key = name.partition('.')
        if key in ROBOT_BY_NAME and robot not in robots and ROBOT_NAME.match(robot):
            other.append(name)
            continue
        close = difflib.get_close_matches(name, sorted(declared), n=1, cutoff=0.6)
        misspelt.append((name, close[0] if close else None))
    return misspelt, other
