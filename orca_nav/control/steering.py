"""
The second phase of a tick: where each commanded robot would like to go, ignoring the others.

Toward its goal, or toward the carrot on its route (``Navigator``); standing while its route
is planned or when there is none; the velocity a give-way lock holds instead while it holds.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np
from orca_nav.core.orca import drive

from .commands import aligning
from .states import RobotState


@dataclass
class Steering:
    """The preferred velocities of one tick: C commanded robots, N rows for the solver."""

    reached: np.ndarray   # (C,) bool: within goal_tolerance of the goal
    distance: np.ndarray  # (C,) [m] to the goal, inf without a goal or a known pose
    target: np.ndarray    # (C, 2) [m] the goal or the route's carrot
    navigation: list      # (C,) RobotState or None: what the navigator says of the robot
    pref: np.ndarray      # (C, 2) [m/s] the robots' own preferred velocities
    prefs: np.ndarray     # (N, 2) [m/s] for the solver: locks applied, zero beyond C
    locked: np.ndarray    # (C,) bool: a give-way lock holds the preferred velocity
    # (N, 2) [m/s] the ways the robots with a footprint turn their long axes to (the route's
    # at a door ahead or beside a robot met head-on: ``commands.through_doors``), or None:
    # the preferred velocities
    ways: Optional[np.ndarray] = None


def steer(cfg, now: float, pos: np.ndarray, known: np.ndarray, fresh: np.ndarray, goal,
          has_goal, navigator, give_way) -> Steering:
    """
    Preferred velocities toward the goals (or the routes' carrots) at ``now`` [s].

    pos, known, fresh : (N, 2), (N,), (N,) of the ``Observation``; goal, has_goal : (C, 2),
    (C,) the commanded robots' goals. Updates the navigator (routes, carrots, progress).
    """
    c = cfg.n_controlled
    _, reached, dist = drive.preferred_velocities(
        pos[:c], goal, has_goal, 0.0, 0.0, cfg.goal_tolerance)
    dist = np.where(known[:c], dist, np.inf)
    # Toward the goal, or toward a carrot on the route; standing while planning.
    target, navigation = navigator.update(now, pos[:c], goal, has_goal, fresh[:c], reached)
    steering = has_goal & ~reached & np.array(
        [s not in (RobotState.PLANNING, RobotState.UNREACHABLE) for s in navigation], bool)
    pref, _, _ = drive.preferred_velocities(
        pos[:c], target, steering, cfg.pref_speed[:c], cfg.slowdown_distance,
        cfg.goal_tolerance, time_step=cfg.period,
        # Keep-right breaks symmetric jams among robots that avoid each other; a robot the
        # others avoid fully keeps its straight course, and so does a holonomic cart whose
        # route near it is narrower than the disc that holds it (at a door the bias would
        # steer it off the door's line into a jamb; differential carts: corners.py).
        right_bias=np.where(give_way.keeps_course(cfg, now) | (
            aligning(cfg)[:c] & (navigator.clearance < navigator.true_radius)), 0.0,
            cfg.pass_on_right))
    prefs = np.zeros_like(pos)
    prefs[:c], locked = give_way.hold(now, pref, steering & fresh[:c])
    return Steering(reached, dist, target, navigation, pref, prefs, locked)


__all__ = ['steer', 'Steering']
