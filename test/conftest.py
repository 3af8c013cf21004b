"""
Shared fixtures: a private rclpy context per test module, DDS on loopback only.

Before the first test, the numba kernels are compiled once (``WARMUPS``: what a node process
compiles when it starts, and the core's library modes) into the on-disk cache: on a fresh
clone the cache is cold, and the node, simulator and demo processes that the tests start,
several at a time, would otherwise each compile them at once (about 30 s of CPU each; on a
busy 2-core machine a demo's node took 81 s to start and the demo gave up waiting for it).
With a warm cache this takes about a second. The compile runs in two processes of their own
while the tests that need no kernel (the linters, the docs and import checks: about half a
minute) run first; every other test waits for it (with pytest-xdist, in every worker: the
controller compiles).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest
import rclpy
from rclpy.context import Context


# Test modules that use no numba kernel: they run first, beside the compile.
NO_KERNELS = ('test_flake8.py', 'test_pep257.py', 'test_docs.py', 'test_domains.py',
              'test_import_rules.py')
# Modules whose premise is real time (processes, signals, DDS at its own pace, the demo end to
# end): with pytest-xdist (``make test``: ``-n`` workers) they run one after another on one
# worker, while the other workers run the lock-stepped and pure tests.
REAL_TIME = ('test_demo.py', 'test_node_overload.py', 'test_node_signals.py',
             'test_node_shutdown.py', 'test_launch_sim_demo.py', 'test_node_robustness.py',
             'test_node_split.py', 'test_sim_node.py', 'test_launch_include.py')
# Lock-stepped in-process worlds: pure CPU, no module fixture, each test one long run (up to
# tens of seconds). With pytest-xdist each of their tests is a unit of its own, so a module's
# runs spread over the workers instead of queueing on one; they come last, where small units
# even out the workers' ends.
PER_TEST = ('test_scenario_worlds.py', 'test_scan_world.py', 'test_people_world.py')
# Side by side (about 40 s each, cold, here): the node's kernels (what a node's ticks run,
# orca_nav.control.warmup, with the settings a build warms up) and orca_nav.core.warmup (the
# solver's every mode as a library, scans and tracking).
WARMUPS = ('from orca_nav.control import warmup; warmup.warmup_node_defaults()',
           '_solver.warmup(); _scan.warmup(); _tracking.warmup()')
# Where the compiling processes leave their exit codes (a folder; inherited by the workers).
KERNELS_ENV = 'ORCA_NAV_TEST_KERNELS'
KERNELS_TIMEOUT = 900.0  # [s]
NO_COMPILE_ENV = 'ORCA_NAV_TEST_NO_WARMUP'  # set (non-empty): no compile at the session's start
_waited = {}


def pytest_sessionstart(session):
    """Start compiling the numba kernels, the same modules this session imports (once)."""
    if hasattr(session.config, 'workerinput'):
        return  # an xdist worker: the controller started the compile
    if os.environ.get(NO_COMPILE_ENV):
        return  # a session a test starts for a few tests of its own: they compile what they use
    import orca_nav
    root = os.path.dirname(os.path.dirname(os.path.abspath(orca_nav.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    folder = tempfile.mkdtemp(prefix='orca_nav_kernels_')
    os.environ[KERNELS_ENV] = folder
    for k, part in enumerate(WARMUPS):
        done = os.path.join(folder, f'{k}.code')
        code = ('import sys\n'
                'try:\n'
                '    from orca_nav.core import _solver, _scan, _tracking\n'
                f'    {part}\n'
                '    code = 0\n'
                'except BaseException as exc:\n'
                '    print(f"compiling the kernels failed: {exc!r}", file=sys.stderr)\n'
                '    code = 1\n'
                'try:\n'
                f'    open({done!r} + ".tmp", "w").write(str(code))\n'
                f'    __import__("os").replace({done!r} + ".tmp", {done!r})\n'
                'except OSError:\n'
                '    pass  # the session ended first and took the folder\n')
        subprocess.Popen([sys.executable, '-c', code], env=env)


def pytest_sessionfinish(session):
    """Remove the compile's exit codes (the controller, at the very end)."""
    if not hasattr(session.config, 'workerinput') and KERNELS_ENV in os.environ:
        shutil.rmtree(os.environ.pop(KERNELS_ENV), ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """
    Return pytest-xdist's scheduler: by module, the REAL_TIME modules together.

    Each module is one unit (its module fixtures run once, in one worker), the REAL_TIME
    modules together one, each test of the PER_TEST modules one, in the order collected.
    Optional: without pytest-xdist (a ROS install's colcon test) the suite runs in one
    process.
    """
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):

        def _split_scope(self, nodeid):
            name = os.path.basename(nodeid.split('::', 1)[0])
            if name in REAL_TIME:
                return 'real_time'
            return nodeid if name in PER_TEST else nodeid.split('::', 1)[0]

    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(session, config, items):
    """
    Order the tests: no kernel, real time, the rest, the PER_TEST modules (stable).

    Among the real-time ones, those that read runs started in the background (test_demo.py's
    ``end_to_end``) come last: the other real-time tests run while they wait.
    """
    def rank(item):
        name = item.path.name
        if name in REAL_TIME:
            return 1, 'end_to_end' in getattr(item, 'fixturenames', ())
        return (0 if name in NO_KERNELS else 3 if name in PER_TEST else 2), False
    items.sort(key=rank)


def pytest_runtest_setup(item):
    """
    Before a test that may need the kernels, wait until they are compiled (once).

    The REAL_TIME modules' tests run the node's kernels (``WARMUPS[0]``; their processes
    too), not the solver's library modes: they wait for the first compile only.
    """
    folder = os.environ.get(KERNELS_ENV)
    if folder is None or item.path.name in NO_KERNELS:
        return
    needed = 1 if item.path.name in REAL_TIME else len(WARMUPS)
    if _waited.get('count', 0) >= needed:
        return
    deadline = time.monotonic() + KERNELS_TIMEOUT
    codes = []
    for k in range(needed):
        path = os.path.join(folder, f'{k}.code')
        while not os.path.exists(path):
            if time.monotonic() > deadline:
                pytest.exit(f'compiling the numba kernels took over {KERNELS_TIMEOUT:.0f} s',
                            returncode=1)
            time.sleep(0.1)
        with open(path) as f:
            codes.append(f.read().strip())
    if any(code != '0' for code in codes):
        pytest.exit('compiling the numba kernels (orca_nav.core.warmup) failed', returncode=1)
    _waited['count'] = needed


@pytest.fixture(scope='module')
def context(request):
    """Return a private rclpy context on the module's ``DOMAIN_ID``, DDS on loopback only."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    ctx = Context()
    rclpy.init(context=ctx, domain_id=request.module.DOMAIN_ID)
    yield ctx
    rclpy.try_shutdown(context=ctx)
