"""
Lock-stepped runs side by side, in worker processes: one per core.

The in-process worlds (test_scenario_worlds.py, test_people_world.py) are pure CPU: every run
is a function of its arguments, no DDS, no clock. A module starts all its runs at once with
:func:`worker_pool` and each test reads its own result, so a 2-core machine does two runs at a
time instead of one. Workers are spawned (not forked: the test process may hold rclpy
contexts and DDS threads) and import the test module by name, so the function a test submits
must be a module-level function of a test module (pytest puts test/ on sys.path and the
workers inherit it). A run that raises raises again in the test that reads it.
"""

from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
import multiprocessing
import os


def workers():
    """Return how many runs go side by side: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def worker_pool():
    """Yield a process pool of ``workers()`` spawned processes; wait for them on exit."""
    pool = ProcessPoolExecutor(max_workers=workers(),
                               mp_context=multiprocessing.get_context('spawn'))
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def selected_params(request, test_name, names):
    """
    Return the parameter tuples of the selected items of ``test_name`` in this module.

    names : the parametrize argument names, in the order of the tuples returned.
    """
    return [tuple(item.callspec.params[n] for n in names) for item in request.session.items
            if item.module is request.module and item.originalname == test_name]
