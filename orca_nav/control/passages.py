"""
Narrow passages on the routes: where a robot's way is only about as wide as the robot.

A route planned with costs goes through a door the robot's true disc fits, through its middle
(docs/routes.md). Two things then need the passage's width, measured on the map's distance
field along the route near each robot (``orca_nav.core.follow.route_clearance``):

- **The point ahead yields** (``point_ahead``). A differential robot is an ORCA disc of radius
  + ``lookahead_distance`` around a point ahead of its axle (``orca_nav.core.drive``); that
  disc is wider than the robot, and in a passage narrower than twice it ORCA keeps the robot
  off the jambs in front of it for good. Where the route near the robot leaves less than
  ``lookahead_distance`` + FIT_SLACK beside the true disc, the point comes nearer the axle:
  to half of what the route leaves there (at least MIN_LOOKAHEAD), so that the ORCA disc fits
  with room to spare on both sides. The robot then turns more sharply per sideways speed of
  the point (the drive mapping limits the turn rate as always). Where the nominal disc fits
  (open space: routes keep radius + ``safety_margin`` + ``route_margin`` from walls) nothing
  changes.
"""

import dataclasses

import numpy as np

# [m] the route is measured from this far behind the robot's projection (its body is still in
# a passage it has just left) ...
PASSAGE_BEHIND = 0.5
# [m] ... to this far ahead of it (the point ahead must fit before the robot reaches the door)
PASSAGE_AHEAD = 1.0
# [m] where less than lookahead + this is left beside the true disc, the point ahead yields
FIT_SLACK = 0.02
# [m] the point ahead never comes nearer the axle than this (the drive mapping divides by it)
MIN_LOOKAHEAD = 0.01


def point_ahead(lookahead, radius, clearance):
    """
    Return the point-ahead distance of each robot in its place on its route.

    lookahead, radius : (C,) [m] the configured point-ahead distance (0: holonomic) and the
    true radius; clearance : (C,) [m] the narrowest place of the route near the robot (inf:
    no route). Returns (C,) [m]: ``lookahead`` where the robot's ORCA disc fits with
    FIT_SLACK to spare, else half of what the route leaves beside the true disc, between
    MIN_LOOKAHEAD and ``lookahead``.

    >>> point_ahead(np.array([0.1, 0.1, 0.1, 0.0]), np.full(4, 0.2),
    ...             np.array([np.inf, 0.325, 0.275, 0.275])).round(4).tolist()
    [0.1, 0.1, 0.0375, 0.0]
    """
    lookahead = np.asarray(lookahead, dtype=float)
    with np.errstate(invalid='ignore'):  # a bad radius (inf, NaN) keeps its lookahead
        spare = np.asarray(clearance, dtype=float) - np.asarray(radius, dtype=float)
        narrow = (lookahead > 0.0) & (spare < lookahead + FIT_SLACK)
        shrunk = np.clip(0.5 * spare, MIN_LOOKAHEAD, lookahead)
    return np.where(narrow, shrunk, lookahead)


def narrowed(config, clearance):
    """
    Return the fleet's config for this tick: the point ahead yielding in narrow passages.

    config : FleetConfig; clearance : (C,) [m] (``Navigator.clearance``). Returns ``config``
    itself when no robot is in a narrow place.
    """
    c = config.n_controlled
    ahead = point_ahead(config.lookahead[:c], config.radius[:c], clearance)
    if np.array_equal(ahead, config.lookahead[:c]):
        return config
    return dataclasses.replace(config, lookahead=np.concatenate([ahead, config.lookahead[c:]]))


__all__ = ['narrowed', 'point_ahead']
