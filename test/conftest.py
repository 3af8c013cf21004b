"""Shared fixtures: a private rclpy context per test module, DDS on loopback only."""

import os

import pytest
import rclpy
from rclpy.context import Context


@pytest.fixture(scope='module')
def context(request):
    """Return a private rclpy context on the module's ``DOMAIN_ID``, DDS on loopback only."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    ctx = Context()
    rclpy.init(context=ctx, domain_id=request.module.DOMAIN_ID)
    yield ctx
    rclpy.try_shutdown(context=ctx)
