"""
Shared fixtures: a private rclpy context per test module, DDS on loopback only.

Before the first test, the numba kernels are compiled once (``orca_nav.core.warmup``, what
every node process compiles when it starts) into the on-disk cache: on a fresh clone the cache
is cold, and the node, simulator and demo processes that the tests start, several at a time,
would otherwise each compile them at once (about 30 s of CPU each; on a busy 2-core machine a
demo's node took 81 s to start and the demo gave up waiting for it). With a warm cache this
takes about a second. The compile runs in a process of its own while the tests that need no
kernel (the linters, the docs and import checks: about half a minute) run first; every other
test waits for it.
"""

import os
import subprocess
import sys

import pytest
import rclpy
from rclpy.context import Context


# Test modules that use no numba kernel: they run first, beside the compile.
NO_KERNELS = ('test_flake8.py', 'test_pep257.py', 'test_docs.py', 'test_domains.py',
              'test_import_rules.py')
_compile = {}


def pytest_sessionstart(session):
    """Start compiling the numba kernels, the same modules this session imports."""
    import orca_nav
    root = os.path.dirname(os.path.dirname(os.path.abspath(orca_nav.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    # Two halves of orca_nav.core.warmup side by side (about 20 s each, cold, here).
    _compile['processes'] = [subprocess.Popen(
        [sys.executable, '-c', f'from orca_nav.core import _solver, _scan, _tracking; {part}'],
        env=env) for part in ('_solver.warmup()', '_scan.warmup(); _tracking.warmup()')]


def pytest_collection_modifyitems(session, config, items):
    """Run the modules that need no kernel first (stable otherwise)."""
    items.sort(key=lambda item: item.path.name not in NO_KERNELS)


def pytest_runtest_setup(item):
    """Before a test that may need the kernels, wait until they are compiled (once)."""
    processes = _compile.get('processes')
    if processes is None or item.path.name in NO_KERNELS:
        return
    del _compile['processes']
    codes = [process.wait() for process in processes]  # every one, not the first failure
    if any(codes):
        pytest.exit('compiling the numba kernels (orca_nav.core.warmup) failed', returncode=1)


@pytest.fixture(scope='module')
def context(request):
    """Return a private rclpy context on the module's ``DOMAIN_ID``, DDS on loopback only."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    ctx = Context()
    rclpy.init(context=ctx, domain_id=request.module.DOMAIN_ID)
    yield ctx
    rclpy.try_shutdown(context=ctx)
