"""
Lock-stepped runs side by side, in worker processes: one per core.

The in-process worlds (test_scenario_worlds.py, test_people_world.py) are pure CPU: every run
is a function of its arguments, no DDS, no clock. A module starts all its runs at once with
:func:`worker_pool` and each test reads its own result, so a 2-core machine does two runs at a
time instead of one. Workers are spawned (not forked: the test process may hold rclpy
contexts and DDS threads) and import the test module by name, so the function a test submits
must be a module-level function of a test module (pytest puts test/ on sys.path and the
workers inherit it). A run that raises raises again in the test that reads it. Inside a
pytest-xdist worker (``make test``) the runs are made in the worker itself, one after another.
"""

from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
import multiprocessing
import os


def workers():
    """
    Return how many runs go side by side: the cores this process may use.

    One inside a pytest-xdist worker: the other cores run other test modules already.
    """
    if os.environ.get('PYTEST_XDIST_WORKER'):
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class _Later:
    """A call made when its result is first asked for (the Future interface tests use)."""

    def __init__(self, fn, args):
        self._call = (fn, args)
        self._value = None

    def result(self):
        """Return the call's result, making the call the first time."""
        if self._call is not None:
            fn, args = self._call
            self._call = None
            self._value = fn(*args)
        return self._value


class _InTurn:
    """The part of an executor the tests use, calling in this process, in turn."""

    def submit(self, fn, *args):
        """Return a _Later of fn(*args)."""
        return _Later(fn, args)

    def map(self, fn, *iterables):  # noqa: A003 -- the executor's name
        """Return the results of fn over the iterables, lazily."""
        return map(fn, *iterables)


@contextmanager
def worker_pool():
    """
    Yield a process pool of ``workers()`` spawned processes; wait for them on exit.

    With one worker there is no pool: the calls run in this process when their results are
    asked for.
    """
    if workers() == 1:
        yield _InTurn()
        return
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
