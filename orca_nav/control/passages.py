"""
Narrow passages on the routes: where a robot's way is only about as wide as the robot.

A route planned with costs goes through a door the robot's true disc fits, through its middle
(docs/routes.md). Two things then need the passage's width, measured on the map's distance
field along the route near each robot (``orca_nav.core.routes.follow.route_clearance``):

- **The point ahead yields** (``point_ahead``). A differential robot is an ORCA disc of radius
  + ``lookahead_distance`` around a point ahead of its axle (``orca_nav.core.orca.drive``); that
  disc is wider than the robot, and in a passage narrower than twice it ORCA keeps the robot
  off the jambs in front of it for good. Where the route near the robot leaves less than
  ``lookahead_distance`` + FIT_SLACK beside the true disc, the point comes nearer the axle:
  to half of what the route leaves there (at least MIN_LOOKAHEAD), so that the ORCA disc fits
  with room to spare on both sides. The robot then turns more sharply per sideways speed of
  the point (the drive mapping limits the turn rate as always). Where the nominal disc fits
  (open space: routes keep radius + ``safety_margin`` + ``route_margin`` from walls) nothing
  changes.
- **Queues at single-file passages** (``Queues``). A stretch of a route where what is free
  across it is less than four radii (``single_file``: two robots cannot be side by side
  there) is a single-file passage. A robot that comes within APPROACH of the entrance of the
  next one on its route asks for it: it may go unless a robot coming the other way holds a
  passage its own overlaps, or waits for one since earlier. Otherwise it is ``waiting``
  (reason ``passage_busy``): it steers to a spot clear of the entrance (WAIT_BACK before it
  and WAIT_SIDE to the side, on the right where there is room; robots that waited there
  before it have the spots nearer the entrance, the others lie WAIT_STEP further back each),
  and goes when its turn comes: the sides alternate, and robots going the same way follow
  each other through. A robot holds its passage from the moment it may go until its
  projection onto the route is past the exit; a robot that finds itself at or in the
  entrance (it started there, or was pushed in) holds it at once. No robot waits longer than
  MAX_WAIT: then it goes anyway (the jam rule of control/progress.py sorts out a meeting
  inside). A robot that goes through alone (``Queues.alone``: a differential robot with a
  footprint, which stops and turns in place at both ends) is neither followed nor follows,
  asks ALONE_APPROACH before the entrance and waits up to ALONE_MAX_WAIT.
"""

import dataclasses
import math

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


def lookahead_now(config, clearance):
    """
    Return every robot's point ahead [m] (N,) for this tick: yielding in narrow passages.

    config : FleetConfig; clearance : (C,) [m] (``Navigator.clearance``). Observed robots keep
    their configured lookahead, and so do robots with a footprint: their walls take the
    polygon's half-planes, placed behind the point exactly, not a disc grown by it (and a
    point nearer the axle would turn them faster per sideways speed). The tick's
    ``Observation`` carries it.
    """
    c = config.n_controlled
    ahead = point_ahead(config.lookahead[:c], config.radius[:c], clearance)
    shaped = np.array([p is not None for p in config.footprint[:c]], bool)
    ahead = np.where(shaped, config.lookahead[:c], ahead)
    return np.concatenate([ahead, config.lookahead[c:]])


# [m] a robot asks for the next single-file passage this far (along its route) before it
APPROACH = 1.5
# [s] no robot waits longer than this for a passage; then it goes anyway (0: no queues)
MAX_WAIT = 30.0
# [m] a robot that goes through alone asks this far before it
ALONE_APPROACH = 3.0
# [s] ... a robot that goes through alone waits up to this (each ahead of it stops and turns
# twice)
ALONE_MAX_WAIT = 90.0
# [radii] the waiting spot: this far before the entrance along the route ...
WAIT_BACK = (3.0, 5.0)
# [radii] ... and this far to the side of it (the right first), clear of whoever comes out
WAIT_SIDE = (3.0, 2.0)
# [radii] the spots of a queue are this far apart, WAIT_SPOTS of them (the rest share the last)
WAIT_STEP = 2.5
WAIT_SPOTS = 4
# [m] the route is examined for single-file stretches every this many metres (one sample per
# two cells of a 0.05 m map; a 0.2 m thick door has two or three samples)
SAMPLE = 0.1
BUSY = 'passage_busy'  # the status reason of a waiting robot


@dataclasses.dataclass
class Passage:
    """A single-file stretch of one robot's route, from arc ``start`` to ``end`` [m]."""

    start: float
    end: float
    points: np.ndarray      # (M, 2) [m] samples of the route inside it
    direction: np.ndarray   # (M, 2) unit tangents of the route there
    spots: np.ndarray       # (WAIT_SPOTS, 2) [m] where to wait, clear of its entrance


def single_file(points, grid, radius, half_width=None):
    """
    Return the single-file passages on a route (a list of ``Passage``, in route order).

    points : (K, 2) [m] the route; grid : GridMap; radius : [m] the robot's true radius;
    half_width : [m] half of what the robot takes across its way (a footprint turned along
    it, with its padding), or None: ``radius``. A route sample is single-file when the free
    width across the route there (along its normal, obstacle cells both ways) is less than
    4 x ``half_width``: two such robots cannot be side by side. Samples nearer each other than
    2 x ``radius`` join into one passage.
    """
    points = np.asarray(points, dtype=float).reshape(-1, 2)
    if len(points) < 2 or not math.isfinite(radius) or radius <= 0.0:
        return []
    seg = np.diff(points, axis=0)
    length = np.hypot(*seg.T)
    arc = np.concatenate([[0.0], np.cumsum(length)])
    s = np.arange(0.0, arc[-1], SAMPLE)
    k = np.clip(np.searchsorted(arc, s, side='right') - 1, 0, len(seg) - 1)
    t = np.divide(seg[k], length[k, None], out=np.zeros((len(k), 2)),
                  where=length[k, None] > 0.0)
    p = points[k] + t * (s - arc[k])[:, None]
    big = 2.0 * radius
    wide = 4.0 * (radius if half_width is None else min(half_width, radius))
    across = free_width(grid, p, t, wide)
    narrow = (across < wide) & grid.inside(p)
    field = (grid.distance_cells() - 0.5) * grid.resolution    # [m] to an obstacle's edge
    passages = []
    for run in _runs(np.flatnonzero(narrow), int(big / SAMPLE)):
        start, end = s[run[0]], s[run[-1]]
        spots = np.array([_wait_spot(field, grid, p[run[0]], t[run[0]], radius,
                                     k * WAIT_STEP) for k in range(WAIT_SPOTS)])
        passages.append(Passage(start, end, p[run], t[run], spots))
    return passages


def free_width(grid, p, t, limit):
    """
    Return (S,) [m] the free width across the route at samples p (S, 2), tangents t (S, 2).

    Measured along the normal both ways, in steps of half a cell, up to ``limit`` each way
    (inf where one side finds no obstacle cell: not a passage).
    """
    step = 0.5 * grid.resolution
    u = np.arange(step, limit + step, step)
    normal = np.stack([-t[:, 1], t[:, 0]], axis=1)
    h, w = grid.shape
    blocked = grid.obstacles
    reach = []
    for side in (1.0, -1.0):
        q = p[:, None] + side * normal[:, None] * u[None, :, None]          # (S, U, 2)
        cells = grid.world_to_cell(q.reshape(-1, 2))
        inside = ((cells[:, 0] >= 0) & (cells[:, 0] < w) & (cells[:, 1] >= 0)
                  & (cells[:, 1] < h))
        hit = np.ones(len(cells), bool)   # off the map counts as an obstacle
        hit[inside] = blocked[cells[inside, 1], cells[inside, 0]]
        hit = hit.reshape(len(p), len(u))
        first = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
        reach.append(np.where(first >= 0, u[first] - step, np.inf))
    return reach[0] + reach[1]


def _runs(index, gap):
    """Split sorted sample indices into runs; indices at most ``gap`` apart stay together."""
    if len(index) == 0:
        return []
    cut = np.flatnonzero(np.diff(index) > max(gap, 1)) + 1
    return np.split(index, cut)


def _wait_spot(field, grid, entrance, tangent, radius, further):
    """Return a free point clear of the entrance: back along the route (+ further radii)."""
    right = np.array([tangent[1], -tangent[0]])
    candidates = [entrance - tangent * (back + further) * radius
                  + right * side * lateral * radius
                  for back in WAIT_BACK for lateral in WAIT_SIDE for side in (1.0, -1.0)]
    candidates += [entrance - tangent * (back + further) * radius for back in WAIT_BACK]
    candidates = np.array(candidates)
    cells = grid.world_to_cell(candidates)
    ok = grid.inside(candidates)
    room = np.zeros(len(candidates))
    room[ok] = field[cells[ok, 1], cells[ok, 0]]
    fits = np.flatnonzero(room >= 1.5 * radius)
    return candidates[fits[0]] if len(fits) else entrance - tangent * WAIT_BACK[0] * radius


def _shared(a, b, reach):
    """
    Return how passages a and b share ground (within ``reach`` [m]).

    0: they do not; -1: they do, in opposite ways; 1: in the same way.
    """
    d = np.hypot(*(a.points[:, None] - b.points[None]).transpose(2, 0, 1))
    k = np.unravel_index(np.argmin(d), d.shape)
    if d[k] >= reach:
        return 0
    return -1 if a.direction[k[0]] @ b.direction[k[1]] < 0.0 else 1


class Queues:
    """
    Turns at the single-file passages of C robots' routes (see the module's docstring).

    Per robot i: ``passages[i]`` (list of Passage) on its route, ``next[i]`` the first one it
    has not left yet, ``holds[i]`` whether it may go through that one, ``since[i]`` when it
    began to wait for it (inf: not waiting). ``alone[i]``: robot i goes through alone, no
    robot following it or followed by it (a differential robot with a footprint: it stops
    and turns in place before and after a passage, where the one behind it would stand),
    and waits up to ALONE_MAX_WAIT.
    """

    def __init__(self, c):
        """Start with no passages."""
        self.passages = [[] for _ in range(c)]
        self.next = np.zeros(c, np.int64)
        self.holds = np.zeros(c, bool)
        self.since = np.full(c, math.inf)
        self.alone = np.zeros(c, bool)

    def route_changed(self, i, points, grid, radius, half_width=None):
        """
        Robot i follows ``points`` (None: no route) on ``grid`` (None: no map) now.

        A robot that held a passage keeps its turn when its new route's first passage is the
        same way through the same place (a route planned again in a door is not a new
        queue: the robot coming the other way would otherwise take the turn from it there).
        """
        held = (self.passages[i][self.next[i]]
                if self.holds[i] and self.next[i] < len(self.passages[i]) else None)
        self.passages[i] = ([] if points is None or grid is None
                            else single_file(points, grid, radius, half_width))
        self.next[i], self.holds[i], self.since[i] = 0, False, math.inf
        if held is not None and self.passages[i]:
            self.holds[i] = _shared(held, self.passages[i][0], 2.0 * radius) > 0

    def update(self, now, arc, radius, examined):
        """
        Give turns; return (C,) bool: the robots that wait, and (C, 2) their spots.

        arc (C,) [m]: each robot's projection onto its route (distance from the route's start);
        radius (C,) [m] true radii; examined (C,) bool: robots following their routes (the
        others neither hold nor wait).
        """
        c = len(self.next)
        waiting, spots = np.zeros(c, bool), np.full((c, 2), np.nan)
        self.holds &= examined
        self.since[~examined] = math.inf
        for i in np.flatnonzero(examined & np.array([bool(p) for p in self.passages])):
            own = self.passages[i]
            while self.next[i] < len(own) and arc[i] > own[self.next[i]].end + radius[i]:
                self.next[i] += 1           # left it behind
                self.holds[i], self.since[i] = False, math.inf
            if self.next[i] >= len(own) or self.holds[i]:
                continue
            passage = own[self.next[i]]
            approach = ALONE_APPROACH if self.alone[i] else APPROACH
            if arc[i] < passage.start - approach and self.since[i] == math.inf:
                continue                    # not there yet (a queue's far spots lie further)
            oncoming, ahead = self._others(i, passage, radius, now)
            patience = ALONE_MAX_WAIT if self.alone[i] else MAX_WAIT
            if (arc[i] >= passage.start - radius[i] or now - self.since[i] >= patience
                    or not oncoming):
                self.holds[i], self.since[i] = True, math.inf
                continue
            self.since[i] = min(self.since[i], now)
            waiting[i], spots[i] = True, passage.spots[min(ahead, WAIT_SPOTS - 1)]
        return waiting, spots

    def _others(self, i, passage, radius, now):
        """
        Return (whether a robot coming the other way goes first, the robots queued before i).

        One coming the other way goes first when it holds a passage that shares ground with
        i's, or waits for one since earlier (so does one going the same way when either goes
        ``alone``); queued before i: those waiting longer (lower rows first on a tie) to go
        the same way.
        """
        mine = (min(self.since[i], now), i)
        oncoming, ahead = False, 0
        for j in range(len(self.next)):
            if j == i or self.next[j] >= len(self.passages[j]):
                continue
            earlier = (self.since[j], j) < mine
            if not (self.holds[j] or earlier):
                continue
            way = _shared(passage, self.passages[j][self.next[j]], radius[i] + radius[j])
            oncoming |= way < 0 or (way > 0 and (self.alone[i] or self.alone[j]))
            ahead += int(way > 0 and earlier and not self.holds[j])
        return oncoming, ahead


__all__ = ['BUSY', 'lookahead_now', 'point_ahead', 'Passage', 'Queues', 'single_file']
