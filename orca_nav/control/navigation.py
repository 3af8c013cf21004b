"""
Where each robot steers: planned routes on a map, external routes, progress and failure.

The ``Navigator`` keeps, per commanded robot, the route it follows (planned on the occupancy
grid, or given from outside, e.g. by Nav2's planner) and the state of its progress. Planning
and map processing run in a worker (``planning.PlanningWorker``, a process by default): a tick
only submits work and collects what has finished, it never waits for a plan.

A robot with a goal and a map, but no route yet, is ``planning`` and stands still (a robot
whose route is being planned again keeps following the old one meanwhile); a goal that
cannot be reached makes it ``unreachable`` (with the planner's reason) and it stops; a robot
that gains less than ``progress_distance`` toward its goal in ``progress_timeout`` is
``stuck``: its route is planned once more (again when it has moved away from where that
route starts) and it keeps trying.

The state is kept as arrays over the robots (one row each), so that a tick costs a few numpy
operations whatever the fleet size; Python loops run only over robots whose plan finished.
"""

from dataclasses import dataclass
import math

import numpy as np
from orca_nav.core.routes.planner import DEFAULT_COST_SCALING, LETHAL_TOLERANCE_CELLS

from .corners import Corners
from .following import Following
from .map_model import MapModel
from .passages import BUSY, Queues
from .planning import PlanningWorker
from .progress import Progress
from .states import RobotState


# [m] A stuck robot whose route starts farther than this from it is planned again.
REPLAN_MOVED = 0.1


@dataclass(frozen=True)
class NavigationConfig:
    """The knobs of route following (see the node's parameters)."""

    route_lookahead: float = 1.0     # [m] carrot distance ahead along the route
    progress_distance: float = 0.5   # [m] progress that counts as progress
    progress_timeout: float = 10.0   # [s] without it: stuck
    route_margin: float = 0.1        # [m] routes keep radius + margin from occupied cells
    map_walls: bool = True           # map walls are ORCA obstacles
    # Route costs (Nav2's inflation layer in spirit): lethal only where a robot's true disc
    # touches a wall; within radius + route_margin a cell costs much more (routes keep the
    # margin where there is room, and take narrow doors through the middle); beyond, a cost
    # decaying at route_cost_scaling_factor [1/m] out to route_inflation_band [m] further.
    route_inflation_band: float = 0.3
    route_cost_scaling_factor: float = DEFAULT_COST_SCALING


def planner_keys(radius, true_radius, cfg, footprints=None, turns=None):
    """
    Return each robot's planner key (planning.make_planner): true radius and costs.

    footprints : (C,) of (K, 2) polygons [m] or None (a disc), or None for all discs. A
    robot with a footprint (its true radius: the circumscribed one plus footprint_padding)
    gets its polygon's coordinates appended: lethal is then its inscribed disc, and routes
    through the band between are checked with the polygon turned along them. turns : (C,)
    bool or None: a robot with a footprint that turns in place where its route turns (a
    differential drive) gets 1.0 after them (its turns are checked too).
    """
    if footprints is None:
        footprints = [None] * len(radius)
    if turns is None:
        turns = np.zeros(len(radius), bool)
    return [(r, p - r + cfg.route_margin, cfg.route_inflation_band,
             cfg.route_cost_scaling_factor, LETHAL_TOLERANCE_CELLS)
            + (() if f is None else tuple(np.asarray(f, dtype=float).ravel().tolist())
               + ((1.0,) if t else ()))
            for r, p, f, t in zip(true_radius.tolist(), radius.tolist(), footprints,
                                  np.asarray(turns, bool).tolist())]


class Navigator:
    """
    Routes of C commanded robots on the newest map; plans in a worker.

    Per robot i: ``points[i]`` the (K, 2) route followed (None: straight to the goal),
    ``version[i]`` bumped on every change of it (the node republishes the route),
    ``reason[i]`` why the goal is unreachable or why it waits ('' when neither),
    ``carrot[i]`` the point steered to on the route.
    """

    def __init__(self, radius, config: NavigationConfig = NavigationConfig(), executor=None,
                 true_radius=None, footprints=None, turns=None):
        """
        Keep routes of robots of these radii (C,) [m]; plan on ``executor`` (futures).

        radius : the planning radii (with the safety margin); true_radius : the true discs,
        lethal for routes (default: radius); footprints : (C,) polygons (K, 2) [m] or None
        per robot (FleetConfig.footprint), or None: all discs; turns : (C,) bool, the robots
        that turn in place at their routes' corners (``Corners``: differential robots with a
        footprint), or None: none.
        """
        self.radius = np.asarray(radius, dtype=float)
        self.true_radius = np.asarray(radius if true_radius is None else true_radius,
                                      dtype=float).copy()
        self.footprints = None if footprints is None else tuple(footprints)
        self.config = config
        c = len(self.radius)
        self.points = [None] * c
        self.routed = np.zeros(c, bool)      # points[i] is not None
        self.external = np.zeros(c, bool)    # given from outside (not re-planned)
        self.version = np.zeros(c, np.int64)
        self.request = np.zeros(c, np.int64)  # newest plan request; older answers are dropped
        self.needs_plan = np.zeros(c, bool)  # plan at the next tick (the position is needed)
        self.planning = np.zeros(c, bool)    # a plan is on its way
        self.reason = np.full(c, '', dtype=object)
        self.failed = np.zeros(c, bool)      # no route to the goal (reason: the planner's)
        self.length = np.zeros(c)            # [m] of the route
        self.queues = Queues(c)              # turns at single-file passages
        self.following = Following(c)        # carrots, segments, the width of the way
        self.carrot, self.clearance = self.following.carrot, self.following.clearance
        self.narrow_way = self.following.narrow_way  # (C, 2) the route's way through a door
        self.replanned = np.zeros(c, bool)   # a stuck robot's route was planned once more
        self.progress = Progress(c)          # stuck and jams
        self.corners = Corners(c)            # stops at corners to turn in place
        self.yaw = np.zeros(c)               # [rad] headings this tick (the controller's)
        if turns is not None:
            self.corners.turns[:] = self.queues.alone[:] = turns
        self.model = None            # MapModel in use
        self._pending_map = None     # (grid, map id, Future of its wall pieces)
        self._jobs = []              # Futures of plan batches
        self._worker = PlanningWorker(executor)
        self.maps_received = 0
        self.plans_done = 0
        self.warnings = []           # (None, text) for the log, taken by the controller

    # --- inputs ----------------------------------------------------------------------------

    def idle(self) -> bool:
        """Whether the planning worker has finished the map and every plan asked for."""
        return ((self._pending_map is None or self._pending_map[2].done())
                and all(job.done() for job in self._jobs))

    def set_map(self, grid) -> None:
        """Use a new map (GridMap) once its walls and inflation are ready; re-plan every route."""
        self.maps_received += 1
        self._use_map(grid)

    def _use_map(self, grid):
        future = self._worker.submit_map(grid, self._clearances())
        self._pending_map = (grid, self._worker.map_id, future)
        # From now on a robot without a route waits for one (PLANNING), as one whose goal came
        # with a map does. Driving straight at its goal while the worker prepares the map (on
        # a busy machine, seconds), it would meet the others where routes keep them apart:
        # two carts head-on in an aisle, yawed, stuck face to face.
        self.needs_plan |= ~self.external

    def _sight_radius(self):
        """
        Return (C,) [m] the least a line to a robot's carrot keeps from walls.

        The true disc, or for a robot with a footprint half its width (+ its padding): it
        turns its long axis along its way (a cart sees through a door it fits turned).
        """
        if self.footprints is None:
            return self.true_radius
        return np.array([self._half_width(i) for i in range(len(self.true_radius))])

    def _half_width(self, i):
        """Return [m] robot i's ``_sight_radius``: half its width (+ padding), or its disc."""
        polygon = None if self.footprints is None else self.footprints[i]
        if polygon is None:
            return float(self.true_radius[i])
        polygon = np.asarray(polygon, dtype=float)
        padding = self.true_radius[i] - float(np.hypot(*polygon.T).max())
        return float(np.abs(polygon[:, 1]).max()) + max(padding, 0.0)

    def route_ways(self):
        """Return (C, 2) unit directions of the route segments the robots are on (NaN: none)."""
        out = np.full((len(self.points), 2), np.nan)
        for i in np.flatnonzero(self.routed):
            points = self.points[i]
            k = int(np.clip(self.following.segment[i], 0, len(points) - 2))
            if len(points) >= 2:
                d = points[k + 1] - points[k]
                length = float(np.hypot(*d))
                if length > 0.0:
                    out[i] = d / length
        return out

    def _shaped_reach(self):
        """Return (C,) [m] the circumscribed discs of robots with a footprint, NaN of others."""
        if self.footprints is None:
            return None
        shaped = np.array([p is not None for p in self.footprints], bool)
        return np.where(shaped, self.true_radius, np.nan)

    def reconfigure(self, radius, true_radius, config: NavigationConfig,
                    footprints=False, turns=None) -> None:
        """
        Plan with new radii (C,) [m] (planning and true) and settings from now on.

        footprints : as in the constructor; False (the default) keeps the current ones;
        turns : as in the constructor, None keeps the current ones.

        When the routes' clearances change (a runtime change of radius, safety_margin,
        route_margin or the route costs), the map's planners are built again and every
        route is planned again, as for a new map.
        """
        before = self._clearances()
        self.radius = np.asarray(radius, dtype=float).copy()
        self.true_radius = np.asarray(true_radius, dtype=float).copy()
        self.config = config
        if footprints is not False:
            self.footprints = None if footprints is None else tuple(footprints)
        if turns is not None:
            self.corners.turns[:] = self.queues.alone[:] = turns
        grid = (self._pending_map[0] if self._pending_map is not None
                else None if self.model is None else self.model.grid)
        if grid is not None and self._clearances() != before:
            self._use_map(grid)

    def goal_changed(self, i: int) -> None:
        """Robot i has a new goal (or none): forget its route; plan when a map exists."""
        self._set_route(i, None)
        self.external[i], self.reason[i], self.failed[i] = False, '', False
        self.replanned[i] = False
        self.progress.forget(i)
        self.needs_plan[i] = self.model is not None or self._pending_map is not None
        self.request[i] += 1
        self.planning[i] = False

    def set_external_route(self, i: int, points) -> None:
        """Follow ``points`` (K, 2) given from outside; the caller made its end the goal."""
        self.goal_changed(i)
        self._set_route(i, np.asarray(points, dtype=float))
        self.external[i], self.needs_plan[i] = True, False

    def close(self) -> None:
        """Stop the worker (pending plans are dropped)."""
        self._worker.close()

    def _set_route(self, i, points):
        self.points[i] = points
        self.routed[i] = points is not None
        self.following.segment[i] = 0
        self.version[i] += 1
        self.length[i] = 0.0 if points is None else np.hypot(*np.diff(points, axis=0).T).sum()
        # A holonomic cart passes another in an aisle two of them fit turned along it (it
        # steps aside, control/lanes.py); a differential one cannot: it queues as its disc.
        self.queues.route_changed(i, points, None if self.model is None else self.model.grid,
                                  self.true_radius[i],
                                  None if self.corners.turns[i] else self._half_width(i))

    def _replan(self, mask, force=False):
        """
        Plan the routes of the robots in ``mask`` (C,) once more, from where they stand.

        A robot whose plan is already on its way keeps waiting for it, unless ``force`` (the
        map changed: that answer would be dropped).
        """
        if not force:
            mask = mask & ~(self.planning | self.needs_plan)
        self.needs_plan |= mask
        self.request[mask] += 1

    def _clearances(self):
        return sorted(set(planner_keys(self.radius, self.true_radius, self.config,
                                       self.footprints, self.corners.turns)))

    # --- one tick --------------------------------------------------------------------------

    def update(self, now, pos, goal, has_goal, fresh, reached):
        """
        Collect finished work, submit new plans, follow routes; return targets and states.

        pos, goal (C, 2) [m]; has_goal, fresh, reached (C,) bool. Returns target (C, 2): the
        point each robot steers to (its goal, or a carrot on its route), and a list of C
        states overriding ACTIVE (None where the robot is simply active).
        """
        has_goal = np.asarray(has_goal, bool)
        self._collect()
        self._submit(pos, goal, has_goal, np.asarray(fresh, bool))
        target = np.array(goal, dtype=float)
        remaining = np.hypot(*(target - pos).T)
        states = np.full(len(target), None, dtype=object)
        unreachable = has_goal & self.failed
        # A robot re-planned (stuck, pushed off its route, a new map) keeps its old route
        # until the new one comes; only a robot without a route waits for one.
        unplanned = has_goal & ~unreachable & (self.planning | self.needs_plan) & ~self.routed
        states[unreachable] = RobotState.UNREACHABLE
        states[unplanned] = RobotState.PLANNING
        target[unreachable | unplanned] = pos[unreachable | unplanned]
        steering = has_goal & ~unreachable & ~unplanned
        self.clearance[:] = math.inf
        self.narrow_way[:] = np.nan
        if (steering & self.routed).any():
            self._follow(np.flatnonzero(steering & self.routed), pos, target, remaining)
        # Single-file passages: a robot whose turn has not come waits clear of the entrance
        # (its progress is not counted meanwhile).
        waiting, spots = self.queues.update(now, self.length - remaining, self.true_radius,
                                            steering & self.routed)
        target[waiting], states[waiting] = spots[waiting], RobotState.WAITING
        self.reason[~self.failed] = np.where(waiting, BUSY, '')[~self.failed]
        self.progress.pause(waiting, now, remaining)
        steering &= ~waiting
        moving = np.asarray(fresh, bool) & ~np.asarray(reached, bool)
        stuck, late = self.progress.stalled(now, remaining, moving, steering,
                                            self.config.progress_distance,
                                            self.config.progress_timeout)
        states[stuck] = RobotState.STUCK
        if self.model is not None:
            # Stuck: its route is planned once more (once per goal), and again whenever its
            # route does not start where it stands (it moved while that plan was made).
            again = late & ~self.external & (~self.replanned | self._moved_off_start(pos))
            self.replanned |= again
            self._replan(again)
        # Only robots on routes give way: without a map the node behaves as plain ORCA.
        self._replan(self.progress.give_way(now, pos, target, remaining,
                                            moving & steering & self.routed,
                                            self.routed & ~self.external))
        return target, states.tolist()

    def _moved_off_start(self, pos):
        """(C,) bool: robots with a route that starts farther than REPLAN_MOVED from them."""
        out = np.zeros(len(self.routed), bool)
        for i in np.flatnonzero(self.routed):
            out[i] = math.hypot(*(pos[i] - self.points[i][0])) > REPLAN_MOVED
        return out

    def _follow(self, robots, pos, target, remaining):
        """Carrots of the robots following routes; plan again those pushed off theirs."""
        target[robots], remaining[robots], lost = self.following.follow(
            robots, self.points, self.version, pos,
            None if self.model is None else self.model.grid, self.config.route_lookahead,
            self.radius + self.config.route_margin, self._sight_radius(), self._shaped_reach())
        grid = None if self.model is None else self.model.grid
        self.corners.update(robots, self.points, self.version, self.following.segment, pos,
                            self.yaw, target, grid, self.true_radius)
        self.carrot[robots] = target[robots]
        if self.model is not None:
            # Pushed off its route (e.g. through another door): plan from where it is.
            pushed = np.zeros(len(self.routed), bool)
            pushed[robots[lost]] = True
            self._replan(pushed & ~self.external)

    def _collect(self):
        """Adopt a finished map (all routes re-planned) and finished plans."""
        if self._pending_map is not None and self._pending_map[2].done():
            (grid, map_id, future), self._pending_map = self._pending_map, None
            try:
                self.model = MapModel(grid, future.result(), map_id)
            except Exception as exc:  # noqa: B902 -- e.g. the worker process died
                self._worker_failed(exc)
                self.set_map(grid)
                self.maps_received -= 1  # the same map, once more
                return
            self._replan(~self.external, force=True)
            self.planning[~self.external] = False
        still = []
        for job in self._jobs:
            if not job.done():
                still.append(job)
                continue
            try:
                map_id, answers = job.result()
            except Exception as exc:  # noqa: B902 -- e.g. the worker process died
                self._worker_failed(exc)
                self.needs_plan |= self.planning
                self.planning[:] = False
                continue
            for i, request, result in answers:
                if (request != self.request[i] or self.model is None
                        or map_id != self.model.map_id):
                    continue  # the goal or the map changed meanwhile
                self.planning[i] = False
                self.plans_done += 1
                self.failed[i] = isinstance(result, Exception)
                if isinstance(result, Exception):
                    self.reason[i] = getattr(result, 'reason', str(result))
                    self._set_route(i, None)
                    # The planner's detail (e.g. the narrowest passage on the way) for the log.
                    self.warnings.append((i, f'goal unreachable: {result}'))
                else:
                    self.reason[i] = ''
                    self._set_route(i, result.points)
        self._jobs = still

    def _worker_failed(self, exc):
        """Report a failed planning worker; plan in a thread of this process instead."""
        self.warnings.append((None, f'route planning worker failed ({exc!r}); planning in a '
                                    'thread of this process from now on'))
        self._worker.use_thread()
        if self.model is not None:
            self._worker.submit_map(self.model.grid, self._clearances())
            self.model.map_id = self._worker.map_id

    def _submit(self, pos, goal, has_goal, fresh):
        """One batch of plans for the robots that need one and whose pose is known."""
        if self.model is None or self._pending_map is not None:
            return  # plans wait for the newest map
        self.needs_plan &= has_goal
        ready = np.flatnonzero(self.needs_plan & fresh)
        if len(ready):
            self.needs_plan[ready], self.planning[ready] = False, True
            batch = [(i, int(self.request[i]), pos[i].copy(), goal[i].copy()) for i in ready]
            keys = planner_keys(self.radius, self.true_radius, self.config, self.footprints,
                                self.corners.turns)
            self._jobs.append(self._worker.submit_plans(batch, keys))


__all__ = ['NavigationConfig', 'Navigator']
