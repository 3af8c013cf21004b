"""
Goals to preferred velocities, and ORCA velocities to drive commands. numpy only, no ROS.

Every function works on a whole fleet at once: N robots, arrays indexed by robot.

Preferred velocity (``preferred_velocities``): toward the goal at ``pref_speed`` when far away,
slowing linearly inside ``slowdown_distance`` (speed proportional to the distance left), never
faster than would overshoot the goal within one time step, and zero within ``goal_tolerance``;
optionally turned slightly to the right so that robots pass each other on the right (ORCA alone
deadlocks in perfectly symmetric scenes; RVO2's examples add random noise instead, which makes
runs irreproducible).

Holonomic robots (``holonomic_command``): the ORCA velocity is global; the command is the same
vector in the robot's body frame (linear.x forward, linear.y left) and no rotation.

Differential-drive robots: the point-ahead (effective centre) method. The controlled point is the
point P at distance D (``lookahead``) ahead of the wheel axle::

    P = p + D (cos th, sin th)
    dP/dt = v (cos th, sin th) + w D (-sin th, cos th)

For D > 0 this map from (v, w) to the velocity of P is invertible, so P moves like a holonomic
agent: ORCA plans for P with radius r + D (a disc of radius r + D around P covers the robot's own
disc of radius r around p, whatever the heading), and the ORCA velocity (vx, vy) of P becomes::

    v = cos th vx + sin th vy
    w = (-sin th vx + cos th vy) / D

then (v, w) are scaled together by one factor so that |v| <= max_speed and |w| <=
max_angular_speed: the curvature v / w of the path is kept and the velocity of P keeps its
direction. Why this method rather than NH-ORCA (Alonso-Mora et al. 2010):

- exact: the velocity ORCA picks is the one P gets (up to the common scaling), with no tracking
  error bound to estimate, no tracking-time parameter and no lookup table of reachable
  velocities;
- every robot, holonomic or differential, is then a disc agent of the plain ORCA core, so a
  mixed fleet shares one solver call and the reciprocity assumption holds between drive types;
- the price is a radius enlarged by D (choose D small, ~ half the robot radius) and a robot that
  may back up briefly when its goal is behind it (P then moves toward the goal while the robot
  turns).

Acceleration limits (``limit_change``): ORCA itself only picks velocities of P reachable within
one period (``compute_velocities(max_accel=..., max_decel=...)``); the drive mapping then clips
the change of each command, v and w separately, to what the robot can do within one period, so
that the published commands respect the limits even where the common scaling above moved them.

Goals are tracked by the robot centre p, not by P: the preferred velocity of P points from p to
the goal and is zero once p is within the goal tolerance, so a robot stops with its centre on
the goal.
"""

from typing import Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike

HOLONOMIC = 'holonomic'
DIFFERENTIAL = 'differential'
DRIVES = (HOLONOMIC, DIFFERENTIAL)

# Distances below this count as "at the point" when normalising directions [m].
TINY_DISTANCE = 1e-9


def _shaped(value: ArrayLike, shape) -> np.ndarray:
    """
    Return value as floats of ``shape``: the array itself when it has it, else broadcast.

    What ``np.broadcast_to(np.asarray(value, dtype=float), shape)`` gives (read here, never
    written), without its cost of about 4 us for the arrays of the fleet's shape, a dozen a tick.
    """
    arr = np.asarray(value, dtype=float)
    return arr if arr.shape == tuple(shape) else np.broadcast_to(arr, shape)


def preferred_velocities(positions: ArrayLike, goals: ArrayLike, has_goal: ArrayLike,
                         pref_speed: ArrayLike, slowdown_distance: float, goal_tolerance: float,
                         time_step: Optional[float] = None, right_bias: ArrayLike = 0.0
                         ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    Preferred velocities toward the goals, and which robots have reached theirs.

    positions, goals : (N, 2) [m]; goals rows are ignored where ``has_goal`` is False
    has_goal : (N,) bool
    pref_speed : (N,) or scalar [m/s] cruising speed far from the goal
    slowdown_distance : scalar [m]; inside it the speed falls linearly with the distance left
        (0 disables the slowdown)
    goal_tolerance : scalar [m]; within it the robot has arrived and its preferred velocity is 0
    time_step : [s] or None; if given the speed never exceeds distance / time_step (no overshoot)
    right_bias : the direction is turned right by atan(right_bias), speed unchanged: robots
        then pass each other on the right, which breaks the symmetric deadlocks of ORCA
        (e.g. robots on a circle swapping through its centre all stop in a ring). Scalar or
        (N,): a robot that keeps its course while the others avoid it needs none.

    Returns pref (N, 2) [m/s], reached (N,) bool, distance (N,) [m] (inf where no goal).
    """
    positions = np.asarray(positions, dtype=float)
    goals = np.asarray(goals, dtype=float)
    has_goal = np.asarray(has_goal, dtype=bool)
    delta = np.where(has_goal[:, None], goals - positions, 0.0)
    dist = np.hypot(delta[:, 0], delta[:, 1])
    reached = has_goal & (dist <= goal_tolerance)
    speed = _shaped(pref_speed, dist.shape).copy()
    if slowdown_distance > 0.0:
        speed *= np.minimum(dist / slowdown_distance, 1.0)
    if time_step is not None and time_step > 0.0:
        speed = np.minimum(speed, dist / time_step)
    speed = np.where(has_goal & ~reached, speed, 0.0)
    pref = delta * (speed / np.maximum(dist, TINY_DISTANCE))[:, None]
    bias = _shaped(right_bias, dist.shape)
    if np.any(bias):
        # (x, y) + b (y, -x) is turned right by atan(b); divide by its length factor.
        pref = ((pref + bias[:, None] * np.stack([pref[:, 1], -pref[:, 0]], axis=1))
                / np.hypot(1.0, bias)[:, None])
    return pref, reached, np.where(has_goal, dist, np.inf)


def world_to_body(vectors: ArrayLike, yaw: ArrayLike) -> np.ndarray:
    """Rotate global (N, 2) vectors into the body frames of robots with heading yaw (N,) [rad]."""
    vectors = np.asarray(vectors, dtype=float)
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack([c * vectors[:, 0] + s * vectors[:, 1],
                     -s * vectors[:, 0] + c * vectors[:, 1]], axis=1)


def body_to_world(vectors: ArrayLike, yaw: ArrayLike) -> np.ndarray:
    """Rotate body-frame (N, 2) vectors of robots with heading yaw (N,) [rad] to global."""
    vectors = np.asarray(vectors, dtype=float)
    c, s = np.cos(yaw), np.sin(yaw)
    return np.stack([c * vectors[:, 0] - s * vectors[:, 1],
                     s * vectors[:, 0] + c * vectors[:, 1]], axis=1)


def holonomic_command(velocities: ArrayLike, yaw: ArrayLike, max_speed: ArrayLike) -> np.ndarray:
    """
    Body-frame (vx, vy) commands for holonomic robots from global ORCA velocities.

    velocities : (N, 2) global [m/s]; yaw : (N,) [rad]; max_speed : (N,) or scalar [m/s]
    Returns (N, 2) body-frame [m/s], finite, with |(vx, vy)| <= max_speed.
    """
    body = world_to_body(velocities, yaw)
    return clamp_speed(body, max_speed)


def clamp_speed(vectors: np.ndarray, max_speed: ArrayLike) -> np.ndarray:
    """Scale (N, 2) vectors down to at most max_speed (N,) or scalar; non-finite rows become 0."""
    out = np.where(np.isfinite(vectors).all(axis=1)[:, None], vectors, 0.0)
    speed = np.hypot(out[:, 0], out[:, 1])
    limit = _shaped(max_speed, speed.shape)
    scale = np.where(speed > limit, limit / np.maximum(speed, TINY_DISTANCE), 1.0)
    return out * scale[:, None]


def lookahead_points(positions: ArrayLike, yaw: np.ndarray, lookahead: ArrayLike) -> np.ndarray:
    """Positions (N, 2) of the points at distance lookahead (N,) or scalar [m] ahead."""
    positions = np.asarray(positions, dtype=float)
    d = _shaped(lookahead, yaw.shape)
    return positions + d[:, None] * np.stack([np.cos(yaw), np.sin(yaw)], axis=1)


def lookahead_velocities(v: np.ndarray, w: np.ndarray, yaw: ArrayLike,
                         lookahead: ArrayLike) -> np.ndarray:
    """
    Global velocities (N, 2) of the look-ahead points of unicycles with (v, w) and heading yaw.

    v : (N,) forward speed [m/s]; w : (N,) yaw rate [rad/s]; yaw : (N,) [rad]; lookahead [m].
    """
    c, s = np.cos(yaw), np.sin(yaw)
    d = _shaped(lookahead, np.shape(yaw))
    return np.stack([v * c - w * d * s, v * s + w * d * c], axis=1)


def limit_change(values: ArrayLike, previous: ArrayLike, max_accel: ArrayLike,
                 max_decel: ArrayLike, dt: float) -> np.ndarray:
    """
    Clip each of (N,) ``values`` to what is reachable from ``previous`` (N,) within ``dt`` [s].

    The 1-D form of the core's reachable set (``orca.reach_lines``) along the direction of
    motion: away from zero by at most max_accel x dt; toward zero by at most max_decel x dt,
    but where max_decel is the larger only down to a stop (braking does not reverse: past
    zero it is accelerating again), never less than max_accel x dt. max_accel, max_decel :
    (N,) or scalar [units/s^2], 0 or inf = unlimited. At zero, max_accel x dt either way.

    >>> limit_change([1.0, -1.0, 0.0], [0.5, 0.5, 0.05], 0.5, 1.0, 0.1).tolist()
    [0.55, 0.4, 0.0]
    """
    values = np.asarray(values, dtype=float)
    previous = np.asarray(previous, dtype=float)
    a_r = _reach(max_accel, dt, values.shape)
    b_r = _reach(max_decel, dt, values.shape)
    sign = np.where(previous < 0.0, -1.0, 1.0)
    x0 = np.abs(previous)
    with np.errstate(invalid='ignore'):
        lower = np.where(b_r < a_r, b_r, np.maximum(np.minimum(b_r, x0), a_r))
        lower = np.where(x0 > 0.0, lower, a_r)
        x = np.clip(sign * values, x0 - lower, x0 + a_r)
    return sign * x


def _reach(limit: ArrayLike, dt: float, shape) -> np.ndarray:
    """Limits (0 or inf: unlimited) x dt, broadcast to ``shape``; inf where unlimited."""
    limit = _shaped(limit, shape)
    return np.where((limit > 0.0) & np.isfinite(limit), limit * dt, np.inf)


def differential_command(velocities: ArrayLike, yaw: ArrayLike, lookahead: ArrayLike,
                         max_speed: ArrayLike, max_angular_speed: ArrayLike,
                         previous: Optional[Tuple[ArrayLike, ArrayLike]] = None,
                         max_accel: ArrayLike = 0.0, max_decel: ArrayLike = 0.0,
                         max_angular_accel: ArrayLike = 0.0,
                         dt: float = 0.0) -> Tuple[np.ndarray, np.ndarray]:
    """
    Unicycle commands (v, w) that give the look-ahead points the ORCA velocities.

    velocities : (N, 2) global ORCA velocities of the look-ahead points [m/s]
    yaw : (N,) [rad]; lookahead : (N,) or scalar D > 0 [m]
    max_speed : (N,) or scalar [m/s]; max_angular_speed : (N,) or scalar [rad/s]
    previous : (v (N,), w (N,)) the last commands, or None (no acceleration limits).
    max_accel, max_decel [m/s^2], max_angular_accel [rad/s^2] : (N,) or scalar, 0 =
        unlimited; with ``previous`` and ``dt`` [s], v and w are then each clipped to what
        is reachable from the previous command within dt (``limit_change``; the angular
        limit applies both ways).
    Returns v (N,) [m/s], w (N,) [rad/s], finite, |v| <= max_speed, |w| <= max_angular_speed,
    scaled by one common factor per robot (the curvature v / w is kept, unless the
    acceleration limits clip one of them).
    """
    velocities = np.asarray(velocities, dtype=float)
    c, s = np.cos(yaw), np.sin(yaw)
    d = _shaped(lookahead, np.shape(yaw))
    v = c * velocities[:, 0] + s * velocities[:, 1]
    w = (-s * velocities[:, 0] + c * velocities[:, 1]) / d
    ok = np.isfinite(v) & np.isfinite(w)
    v = np.where(ok, v, 0.0)
    w = np.where(ok, w, 0.0)
    v_max = _shaped(max_speed, v.shape)
    w_max = _shaped(max_angular_speed, w.shape)
    # One factor for both: the smallest of 1, v_max / |v| and w_max / |w|.
    scale = np.minimum(1.0, np.minimum(v_max / np.maximum(np.abs(v), TINY_DISTANCE),
                                       w_max / np.maximum(np.abs(w), TINY_DISTANCE)))
    v = v * scale
    w = w * scale
    if previous is not None and dt > 0.0:
        v_prev, w_prev = (_shaped(p, v.shape)
                          for p in previous)
        # Within the speed limits still, when the previous command was: the clip moves each
        # value toward the previous one.
        v = limit_change(v, v_prev, max_accel, max_decel, dt)
        w = limit_change(w, w_prev, max_angular_accel, max_angular_accel, dt)
    return v, w
