"""
Shared fixtures: a private rclpy context per test module, DDS on loopback only.

Before the first test, the numba kernels are compiled once (``orca_nav.core.warmup``, what
every node process compiles when it starts) into the on-disk cache: on a fresh clone the cache
is cold, and the node, simulator and demo processes that the tests start, several at a time,
would otherwise each compile them at once (about 30 s of CPU each; on a busy 2-core machine a
demo's node took 81 s to start and the demo gave up waiting for it). With a warm cache this
takes about a second.
"""

import os

import pytest
import rclpy
from rclpy.context import Context


def pytest_sessionstart(session):
    """Compile the numba kernels once, before any test starts a process that needs them."""
    from orca_nav.core import warmup
    warmup()


@pytest.fixture(scope='module')
def context(request):
    """Return a private rclpy context on the module's ``DOMAIN_ID``, DDS on loopback only."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    ctx = Context()
    rclpy.init(context=ctx, domain_id=request.module.DOMAIN_ID)
    yield ctx
    rclpy.try_shutdown(context=ctx)
