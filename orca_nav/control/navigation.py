"""
Where each robot steers: planned routes on a map, external routes, progress and failure.

The ``Navigator`` keeps, per commanded robot, the route it follows (planned on the occupancy
grid, or given from outside, e.g. by Nav2's planner) and the state of its progress. Planning
and map processing run on a worker thread (``concurrent.futures``): a tick only submits work
and collects what has finished, it never waits for a plan.

A robot with a goal and a map, but no route yet, is ``planning`` and stands still; a goal that
cannot be reached makes it ``unreachable`` (with the planner's reason) and it stops; a robot
that gains less than ``progress_distance`` toward its goal in ``progress_timeout`` is
``stuck``: its route is planned once more and it keeps trying.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
import math

import numpy as np
from orca_nav.core.routes import carrot, line_of_sight, progress_along, RoutePlanner

from .map_model import MapModel
from .states import RobotState


@dataclass
class RouteState:
    """The route and progress of one commanded robot."""

    points: np.ndarray = None   # (K, 2) route [m]; None: straight to the goal
    external: bool = False      # given from outside (not re-planned)
    segment: int = 0            # segment of the route holding the robot's projection
    version: int = 0            # bumped on every change (the node republishes the route)
    request: int = 0            # id of the newest plan request; older answers are dropped
    needs_plan: bool = False    # plan at the next tick (the robot's position is needed)
    planning: bool = False      # a plan is on its way
    unreachable: str = ''       # reason, '' when reachable
    checkpoint: tuple = (math.inf, math.inf)  # (time [s], remaining distance [m])
    stuck: bool = False
    replanned: bool = False     # a stuck robot's route was planned once more
    carrot: np.ndarray = field(default_factory=lambda: np.full(2, np.nan))


@dataclass(frozen=True)
class NavigationConfig:
    """The knobs of route following (see the node's parameters)."""

    route_lookahead: float = 1.0     # [m] carrot distance ahead along the route
    progress_distance: float = 0.5   # [m] progress that counts as progress
    progress_timeout: float = 10.0   # [s] without it: stuck
    route_margin: float = 0.1        # [m] routes keep radius + margin from occupied cells
    map_walls: bool = True           # map walls are ORCA obstacles


class Navigator:
    """Routes of C commanded robots on the newest map; plans on a worker thread."""

    def __init__(self, radius, config: NavigationConfig = NavigationConfig(), executor=None):
        """Keep routes of robots of these radii (C,) [m]; plan on ``executor`` (futures)."""
        self.radius = np.asarray(radius, dtype=float)
        self.config = config
        self.routes = [RouteState() for _ in self.radius]
        self.model = None            # MapModel in use
        self._pending_map = None     # Future of the MapModel being built
        self._jobs = []              # Futures of plan batches
        self._executor = executor or ThreadPoolExecutor(1, thread_name_prefix='orca_plan')
        self.maps_received = 0
        self.plans_done = 0

    # --- inputs ----------------------------------------------------------------------------

    def set_map(self, grid) -> None:
        """Use a new map (GridMap) once its walls and inflation are ready; re-plan every route."""
        self.maps_received += 1
        clearances = sorted(set((self.radius + self.config.route_margin).tolist()))
        self._pending_map = self._executor.submit(MapModel.build, grid, clearances)

    def goal_changed(self, i: int) -> None:
        """Robot i has a new goal (or none): forget its route; plan when a map exists."""
        r = self.routes[i]
        r.points, r.external, r.unreachable = None, False, ''
        r.stuck, r.replanned, r.checkpoint = False, False, (math.inf, math.inf)
        r.needs_plan = self.model is not None or self._pending_map is not None
        r.request += 1
        r.planning = False
        r.version += 1

    def set_external_route(self, i: int, points) -> None:
        """Follow ``points`` (K, 2) given from outside; the caller made its end the goal."""
        self.goal_changed(i)
        r = self.routes[i]
        r.points, r.external, r.needs_plan = np.asarray(points, dtype=float), True, False

    def close(self) -> None:
        """Stop the worker (pending plans are dropped)."""
        self._executor.shutdown(wait=False, cancel_futures=True)

    # --- one tick --------------------------------------------------------------------------

    def update(self, now, pos, goal, has_goal, fresh, reached):
        """
        Collect finished work, submit new plans, follow routes; return targets and states.

        pos, goal (C, 2) [m]; has_goal, fresh, reached (C,) bool. Returns target (C, 2): the
        point each robot steers to (its goal, or a carrot on its route), and a list of C
        states overriding ACTIVE (None where the robot is simply active).
        """
        self._collect()
        self._submit(pos, goal, has_goal, fresh)
        target = np.array(goal, dtype=float)
        states = [None] * len(self.routes)
        for i, r in enumerate(self.routes):
            if not has_goal[i]:
                continue
            if r.unreachable:
                states[i] = RobotState.UNREACHABLE
                target[i] = pos[i]
                continue
            if r.planning or r.needs_plan:
                states[i] = RobotState.PLANNING
                target[i] = pos[i]
                continue
            if r.points is not None:
                target[i], r.segment = carrot(r.points, pos[i], self.config.route_lookahead,
                                              r.segment, self._visible(pos[i]))
                r.carrot = target[i]
            if self._stalled(r, i, now, pos[i], goal[i], fresh[i] and not reached[i]):
                states[i] = RobotState.STUCK
        return target, states

    def _visible(self, position):
        """Line of sight from the robot on the map's occupied cells (None without a map)."""
        if self.model is None:
            return None
        grid, occupied = self.model.grid, self.model.grid.obstacles
        start = grid.world_to_cell(position[None, :])[0]
        return lambda q: line_of_sight(occupied, start, grid.world_to_cell(q[None, :])[0])

    def _stalled(self, r, i, now, position, goal, moving):
        """Progress check: True while robot i has not gained progress_distance in time."""
        if not moving:
            r.checkpoint, r.stuck = (now, math.inf), False
            return False
        if r.points is not None:
            arc, _ = progress_along(r.points, position, r.segment)
            remaining = _length(r.points) - arc
        else:
            remaining = float(np.hypot(*(goal - position)))
        if remaining <= r.checkpoint[1] - self.config.progress_distance or now < r.checkpoint[0]:
            r.checkpoint, r.stuck = (now, remaining), False
        elif now - r.checkpoint[0] > self.config.progress_timeout:
            r.stuck = True
            r.checkpoint = (now, r.checkpoint[1])
            if not r.replanned and not r.external and self.model is not None:
                r.replanned, r.needs_plan = True, True
                r.request += 1
        return r.stuck

    def _collect(self):
        """Adopt a finished map (all routes re-planned) and finished plans."""
        if self._pending_map is not None and self._pending_map.done():
            future, self._pending_map = self._pending_map, None
            self.model = future.result()
            for r in self.routes:
                if not r.external:
                    r.request += 1
                    r.needs_plan, r.planning = True, False
        still = []
        for job in self._jobs:
            if not job.done():
                still.append(job)
                continue
            model, answers = job.result()
            for i, request, result in answers:
                r = self.routes[i]
                if request != r.request or model is not self.model:
                    continue  # the goal or the map changed meanwhile
                r.planning = False
                self.plans_done += 1
                if isinstance(result, Exception):
                    r.unreachable, r.points = getattr(result, 'reason', str(result)), None
                else:
                    r.points, r.segment, r.unreachable = result.points, 0, ''
                r.version += 1
        self._jobs = still

    def _submit(self, pos, goal, has_goal, fresh):
        """One batch of plans for the robots that need one and whose pose is known."""
        if self.model is None:
            return
        batch = []
        for i, r in enumerate(self.routes):
            if r.needs_plan and has_goal[i] and fresh[i]:
                r.needs_plan, r.planning = False, True
                batch.append((i, r.request, pos[i].copy(), goal[i].copy()))
            elif r.needs_plan and not has_goal[i]:
                r.needs_plan = False
        if batch:
            clearance = self.radius + self.config.route_margin
            self._jobs.append(self._executor.submit(_plan_batch, self.model, batch, clearance))


def _length(points):
    d = np.diff(points, axis=0)
    return float(np.hypot(d[:, 0], d[:, 1]).sum())


def _plan_batch(model, batch, clearance):
    """Worker: plan a batch [(robot, request, start, goal)]; robots of one radius share work."""
    answers = []
    by_clearance = {}
    for item in batch:
        by_clearance.setdefault(float(clearance[item[0]]), []).append(item)
    for c, items in by_clearance.items():
        planner = model.planner(c)
        results = planner.plan_many([it[2] for it in items], [it[3] for it in items])
        answers += [(it[0], it[1], res) for it, res in zip(items, results)]
    return model, answers


__all__ = ['NavigationConfig', 'Navigator', 'RoutePlanner', 'RouteState']
