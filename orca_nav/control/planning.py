"""
The route-planning worker: map preparation and route plans off the control tick.

Planning is CPU-bound Python and numpy; in a thread of the node's process it would take the
GIL from the ticks (measured: tick p99 from 9 ms to 34 ms at 100 robots while 100 routes were
planned). So by default it runs in one worker process. The worker keeps the newest map's
planners in a module-level dict; the node's process gets only small answers back: the map's
wall segments and the routes.

``PlanningWorker(executor)`` also accepts any concurrent.futures executor (tests pass one that
runs each job at once, in this process; the functions below then simply run here).
"""

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
import itertools
import multiprocessing
import os
import signal

import numpy as np
from orca_nav.core.routes.planner import RoutePlanner

from .map_model import wall_pieces

# Maps held by the worker, (owner, map id) -> (grid, {key: RoutePlanner}); each owner's newest
# only. The owner is the PlanningWorker's number: in a process of its own a worker holds one
# owner's maps, but workers that plan in this process (the node's warm-up, a worker fallen back
# to a thread, several controllers in one process) share the dict and must not clear each
# other's map. A key is
# a clearance [m] (shortest routes that keep it) or the tuple (clearance, margin,
# inflation_band, cost_scaling_factor, tolerance) of RoutePlanner's arguments (cost routes),
# for a robot with a footprint followed by its polygon's x0, y0, x1, y1, ... [m], and for
# one that turns in place where its route turns (a differential drive) then by 1.0.
_MAPS = {}
_OWNERS = itertools.count()
# The worker process runs at this lower priority (nice increment): on a busy machine the
# control ticks get the CPU first and plans simply take longer.
WORKER_NICENESS = 10


def _lower_priority():
    """Worker process initializer: leave Ctrl-C to the control process; be nice to it."""
    # Ctrl-C reaches every process of the terminal's group: the node stops its worker itself
    # (a KeyboardInterrupt here would only print a traceback, or fail a plan under way).
    # The worker starts with SIGINT blocked (``PlanningWorker._pool``): one that came meanwhile
    # is dropped here.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(WORKER_NICENESS)


def planner_key(key):
    """Return a planner key (see _MAPS) in its canonical, hashable form."""
    if isinstance(key, (tuple, list)):
        return tuple(float(v) for v in key)
    return float(key)


def make_planner(grid, key):
    """Return the RoutePlanner of a key (see _MAPS)."""
    if isinstance(key, tuple):
        clearance, margin, band, scaling, tolerance = key[:5]
        rest = key[5:]
        turns = len(rest) % 2 == 1 and rest[-1] > 0.0   # a last odd value: turns in place
        rest = rest[:len(rest) - len(rest) % 2]
        footprint = np.reshape(rest, (-1, 2)) if len(rest) else None
        return RoutePlanner(grid, clearance, margin=margin, inflation_band=band,
                            cost_scaling_factor=scaling, tolerance=tolerance,
                            footprint=footprint, turn_in_place=turns)
    return RoutePlanner(grid, key)


def prepare_map(owner, map_id, grid, clearances):
    """Worker: hold ``grid`` as owner's ``map_id``, a planner per key; return its wall pieces."""
    for held in [k for k in _MAPS if k[0] == owner]:
        del _MAPS[held]
    keys = [planner_key(c) for c in clearances]
    _MAPS[owner, map_id] = (grid, {key: make_planner(grid, key) for key in keys})
    return wall_pieces(grid)


def plan_batch(owner, map_id, batch, clearance):
    """
    Worker: plan [(robot, request, start (2,), goal (2,))] on owner's map ``map_id``.

    ``clearance`` holds each robot's planner key (see _MAPS). Returns (map_id, [(robot,
    request, Route or Unreachable)]); robots of one key share the planner (and its cost-to-go
    fields).
    """
    grid, planners = _MAPS[owner, map_id]
    by_clearance = {}
    for item in batch:
        by_clearance.setdefault(planner_key(clearance[item[0]]), []).append(item)
    answers = []
    for c, items in by_clearance.items():
        if c not in planners:
            planners[c] = make_planner(grid, c)
        results = planners[c].plan_many([it[2] for it in items], [it[3] for it in items])
        answers += [(it[0], it[1], res) for it, res in zip(items, results)]
    return map_id, answers


class PlanningWorker:
    """One worker (a process unless an executor is given), started at the first job."""

    def __init__(self, executor=None):
        """Use ``executor`` (concurrent.futures) or, by default, a worker process."""
        self._executor = executor
        self.map_id = 0
        self.owner = next(_OWNERS)   # its maps' first key in _MAPS

    def worker_pid(self) -> int:
        """Return the process id of the worker that plans (it is started if it is not yet)."""
        return self._pool().submit(os.getpid).result(timeout=120.0)

    def _pool(self):
        if self._executor is None:
            # forkserver: the worker does not inherit this process's DDS threads and sockets.
            # Started here with SIGINT blocked (the forkserver, if this starts it, and the
            # worker inherit the mask): a Ctrl-C while the worker starts up, before its
            # initializer ignores it, printed a KeyboardInterrupt traceback (a busy machine,
            # the launch test's Ctrl-C 4.5 s after the map came). This thread's SIGINT is
            # delivered when the mask is restored.
            old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                executor = ProcessPoolExecutor(
                    1, mp_context=multiprocessing.get_context('forkserver'),
                    initializer=_lower_priority)
                executor.submit(int)  # starts the worker now, under the mask
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
            self._executor = executor
        return self._executor

    def submit_map(self, grid, clearances):
        """Future of the new map's wall pieces (M, 2, 2); the map becomes the worker's map."""
        self.map_id += 1
        return self._pool().submit(prepare_map, self.owner, self.map_id, grid, clearances)

    def submit_plans(self, batch, clearance):
        """Future of (map id, answers) for a batch of plans on the newest map."""
        return self._pool().submit(plan_batch, self.owner, self.map_id, batch, clearance)

    def use_thread(self):
        """Plan in a thread of this process from now on (when the worker process died)."""
        self.close()
        self._executor = ThreadPoolExecutor(1, thread_name_prefix='orca_plan')

    def close(self):
        """
        Stop the worker; pending jobs are dropped, a job under way too.

        A worker process is killed: the interpreter's exit joins it, and it would finish its
        job first (a large map on a busy machine: seconds, beyond launch's grace after
        Ctrl-C). Its plans are the only thing it holds.
        """
        if self._executor is None:
            return
        # The processes before shutdown forgets them (Python 3.14 has terminate_workers).
        processes = list((getattr(self._executor, '_processes', None) or {}).values())
        self._executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            try:
                process.kill()
            except (OSError, ValueError, AttributeError):  # gone already, or closed
                pass
