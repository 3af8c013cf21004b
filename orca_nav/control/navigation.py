"""
Where each robot steers: planned routes on a map, external routes, progress and failure.

The ``Navigator`` keeps, per commanded robot, the route it follows (planned on the occupancy
grid, or given from outside, e.g. by Nav2's planner) and the state of its progress. Planning
and map processing run in a worker (``planning.PlanningWorker``, a process by default): a tick
only submits work and collects what has finished, it never waits for a plan.

A robot with a goal and a map, but no route yet, is ``planning`` and stands still; a goal that
cannot be reached makes it ``unreachable`` (with the planner's reason) and it stops; a robot
that gains less than ``progress_distance`` toward its goal in ``progress_timeout`` is
``stuck``: its route is planned once more and it keeps trying.
"""

from dataclasses import dataclass, field
import math

import numpy as np
from orca_nav.core.follow import follow_routes, pack_routes

from .map_model import MapModel
from .planning import PlanningWorker
from .states import RobotState


# Jams (see Navigator._give_way): less progress than JAM_PROGRESS [m] in JAM_TIME [s] with a
# jammed robot within JAM_DISTANCE [m]; the robot of the higher row then stands aside for
# YIELD_TIME [s], backing toward a point YIELD_BACK [m] behind it.
JAM_PROGRESS = 0.2
JAM_TIME = 3.0
JAM_DISTANCE = 2.0
YIELD_TIME = 3.0
YIELD_BACK = 1.0


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
    jam: tuple = (math.inf, math.inf)  # (time [s], remaining [m]) of the jam check
    yield_until: float = -math.inf     # [s] standing aside for another robot until then
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
    """Routes of C commanded robots on the newest map; plans in a worker."""

    def __init__(self, radius, config: NavigationConfig = NavigationConfig(), executor=None):
        """Keep routes of robots of these radii (C,) [m]; plan on ``executor`` (futures)."""
        self.radius = np.asarray(radius, dtype=float)
        self.config = config
        self.routes = [RouteState() for _ in self.radius]
        self.model = None            # MapModel in use
        self._pending_map = None     # (grid, map id, Future of its wall pieces)
        self._jobs = []              # Futures of plan batches
        self._worker = PlanningWorker(executor)
        self.maps_received = 0
        self.plans_done = 0
        self.warnings = []           # (None, text) for the log, taken by the controller
        self._packed = (None, None)  # (key, packed routes) of the last tick

    # --- inputs ----------------------------------------------------------------------------

    def set_map(self, grid) -> None:
        """Use a new map (GridMap) once its walls and inflation are ready; re-plan every route."""
        self.maps_received += 1
        clearances = sorted(set((self.radius + self.config.route_margin).tolist()))
        future = self._worker.submit_map(grid, clearances)
        self._pending_map = (grid, self._worker.map_id, future)

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
        self._worker.close()

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
        remaining = np.hypot(*(target - pos).T)
        following = []
        for i, r in enumerate(self.routes):
            if not has_goal[i]:
                continue
            if r.unreachable:
                states[i] = RobotState.UNREACHABLE
                target[i] = pos[i]
            elif r.planning or r.needs_plan:
                states[i] = RobotState.PLANNING
                target[i] = pos[i]
            elif r.points is not None:
                following.append(i)
        if following:
            self._follow(following, pos, target, remaining)
        moving = np.asarray(fresh) & ~np.asarray(reached)
        for i, r in enumerate(self.routes):
            if has_goal[i] and states[i] is None and self._stalled(r, now, remaining[i],
                                                                   moving[i]):
                states[i] = RobotState.STUCK
        # Only robots on routes give way: without a map the node behaves as plain ORCA.
        self._give_way(now, pos, target, remaining, moving & np.array(
            [has_goal[i] and states[i] in (None, RobotState.STUCK)
             and self.routes[i].points is not None for i in range(len(states))], bool))
        return target, states

    def _give_way(self, now, pos, target, remaining, moving):
        """
        Break jams: of robots that block each other, all but the first stand aside a while.

        A robot that gained less than JAM_PROGRESS in JAM_TIME is jammed; a jammed robot with a
        jammed robot of a lower row within JAM_DISTANCE gives way: its preferred velocity is
        turned round for YIELD_TIME: it backs away from its carrot, the way it came, and
        the other can pass. A reciprocal deadlock in a passage too narrow for two (common for
        differential robots, whose ORCA disc is larger) or at a corner then resolves; the
        lowest row never gives way.
        """
        jammed = np.zeros(len(self.routes), bool)
        for i, r in enumerate(self.routes):
            if not moving[i] or now < r.yield_until:
                r.jam = (now, remaining[i])
            elif remaining[i] <= r.jam[1] - JAM_PROGRESS or now < r.jam[0]:
                r.jam = (now, remaining[i])
            elif now - r.jam[0] >= JAM_TIME:
                jammed[i] = True
        rows = np.flatnonzero(jammed)
        for k, i in enumerate(rows):
            r = self.routes[i]
            others = np.hypot(*(pos[rows] - pos[i]).T) <= JAM_DISTANCE
            others[k] = False
            if others[:k].any():
                r.yield_until, r.jam = now + YIELD_TIME, (now, remaining[i])
            elif (r.points is not None and not r.external
                  and np.sum(np.hypot(*(pos - pos[i]).T) <= JAM_DISTANCE) == 1):
                # Held by a wall, not by a robot (e.g. at a door jamb, off its route): a new
                # route from where it stands leads round the corner.
                r.needs_plan, r.request, r.jam = True, r.request + 1, (now, remaining[i])
        for i, r in enumerate(self.routes):
            if moving[i] and now < r.yield_until:
                # Back away from where it was heading: the way it came, clear of the others.
                away = pos[i] - target[i]
                norm = math.hypot(away[0], away[1])
                target[i] = pos[i] + (away / norm * YIELD_BACK if norm > 1e-9 else 0.0)

    def _follow(self, robots, pos, target, remaining):
        """Carrots of the robots following routes (one compiled call for all of them)."""
        key = tuple((i, self.routes[i].version) for i in robots)
        if key != self._packed[0]:  # routes changed: pack them again
            self._packed = (key, pack_routes([self.routes[i].points for i in robots]))
        points, offsets = self._packed[1]
        segment = np.array([self.routes[i].segment for i in robots], np.int64)
        grid = self.model.grid if self.model is not None else None
        carrot, segment, left, lost = follow_routes(
            points, offsets, segment, pos[robots], self.config.route_lookahead,
            None if grid is None else grid.obstacles,
            (0.0, 0.0, 0.0) if grid is None else grid.origin,
            1.0 if grid is None else grid.resolution, self.radius[robots])
        target[robots] = carrot
        remaining[robots] = left
        for k, i in enumerate(robots):
            r = self.routes[i]
            r.segment = int(segment[k])
            r.carrot = carrot[k]
            if lost[k] and not r.external and self.model is not None:
                # Pushed off its route (e.g. through another door): plan from where it is.
                r.needs_plan, r.request = True, r.request + 1

    def _stalled(self, r, now, remaining, moving):
        """Progress check: True while a robot has not gained progress_distance in time."""
        if not moving:
            r.checkpoint, r.stuck = (now, math.inf), False
            return False
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
        if self._pending_map is not None and self._pending_map[2].done():
            (grid, map_id, future), self._pending_map = self._pending_map, None
            try:
                self.model = MapModel(grid, future.result(), map_id)
            except Exception as exc:  # noqa: B902 -- e.g. the worker process died
                self._worker_failed(exc)
                self.set_map(grid)
                self.maps_received -= 1  # the same map, once more
                return
            for r in self.routes:
                if not r.external:
                    r.request += 1
                    r.needs_plan, r.planning = True, False
        still = []
        for job in self._jobs:
            if not job.done():
                still.append(job)
                continue
            try:
                map_id, answers = job.result()
            except Exception as exc:  # noqa: B902 -- e.g. the worker process died
                self._worker_failed(exc)
                for r in self.routes:
                    r.needs_plan, r.planning = r.planning or r.needs_plan, False
                continue
            for i, request, result in answers:
                r = self.routes[i]
                if request != r.request or self.model is None or map_id != self.model.map_id:
                    continue  # the goal or the map changed meanwhile
                r.planning = False
                self.plans_done += 1
                if isinstance(result, Exception):
                    r.unreachable, r.points = getattr(result, 'reason', str(result)), None
                else:
                    r.points, r.segment, r.unreachable = result.points, 0, ''
                r.version += 1
        self._jobs = still

    def _worker_failed(self, exc):
        """Report a failed planning worker; plan in a thread of this process instead."""
        self.warnings.append((None, f'route planning worker failed ({exc!r}); planning in a '
                                    'thread of this process from now on'))
        self._worker.use_thread()
        if self.model is not None:
            self._worker.submit_map(self.model.grid, sorted(set(
                (self.radius + self.config.route_margin).tolist())))
            self.model.map_id = self._worker.map_id

    def _submit(self, pos, goal, has_goal, fresh):
        """One batch of plans for the robots that need one and whose pose is known."""
        if self.model is None or self._pending_map is not None:
            return  # plans wait for the newest map
        batch = []
        for i, r in enumerate(self.routes):
            if r.needs_plan and has_goal[i] and fresh[i]:
                r.needs_plan, r.planning = False, True
                batch.append((i, r.request, pos[i].copy(), goal[i].copy()))
            elif r.needs_plan and not has_goal[i]:
                r.needs_plan = False
        if batch:
            clearance = self.radius + self.config.route_margin
            self._jobs.append(self._worker.submit_plans(batch, clearance))


__all__ = ['NavigationConfig', 'Navigator', 'RouteState']
