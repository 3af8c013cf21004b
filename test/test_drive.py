"""Tests of orca_nav.core.drive: preferred velocities and the two drive mappings (no ROS)."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from orca_nav.core import drive
import pytest


def test_preferred_velocity_profile():
    """Full speed far away, linear inside slowdown_distance, zero within the tolerance."""
    pos = np.zeros((4, 2))
    goals = np.array([[10.0, 0.0], [0.0, 0.25], [0.05, 0.0], [3.0, 4.0]])
    has = np.array([True, True, True, False])
    pref, reached, dist = drive.preferred_velocities(pos, goals, has, 0.5, 0.5, 0.1)
    np.testing.assert_allclose(pref[0], [0.5, 0.0])
    np.testing.assert_allclose(pref[1], [0.0, 0.25])      # half way into the slowdown zone
    np.testing.assert_allclose(pref[2], [0.0, 0.0])       # within goal_tolerance
    np.testing.assert_allclose(pref[3], [0.0, 0.0])       # no goal
    assert reached.tolist() == [False, False, True, False]
    assert dist[3] == math.inf and dist[0] == pytest.approx(10.0)


def test_preferred_velocity_never_overshoots_in_one_step():
    """With a time step, the speed is at most distance / time_step."""
    pref, _, _ = drive.preferred_velocities(np.zeros((1, 2)), [[0.3, 0.0]], [True], 5.0, 0.0,
                                            0.01, time_step=0.1)
    assert pref[0, 0] == pytest.approx(3.0)


def test_pass_on_right_turns_right_and_keeps_speed():
    """right_bias turns the preferred velocity clockwise by atan(bias), same speed."""
    pref, _, _ = drive.preferred_velocities(np.zeros((1, 2)), [[10.0, 0.0]], [True], 1.0, 0.0,
                                            0.1, right_bias=0.2)
    assert np.hypot(*pref[0]) == pytest.approx(1.0)
    assert math.atan2(pref[0, 1], pref[0, 0]) == pytest.approx(-math.atan(0.2))


def test_holonomic_command_is_the_velocity_in_the_body_frame():
    """A global +y velocity is 'left' for a robot facing +x and 'forward' for one facing +y."""
    vel = np.array([[0.0, 0.4], [0.0, 0.4], [3.0, 4.0]])
    yaw = np.array([0.0, math.pi / 2, 0.0])
    cmd = drive.holonomic_command(vel, yaw, np.array([1.0, 1.0, 1.0]))
    np.testing.assert_allclose(cmd[0], [0.0, 0.4], atol=1e-12)
    np.testing.assert_allclose(cmd[1], [0.4, 0.0], atol=1e-12)
    np.testing.assert_allclose(cmd[2], [0.6, 0.8])        # clamped to max_speed, same direction


def test_differential_command_realises_the_point_velocity():
    """Without saturation, the look-ahead point moves with exactly the ORCA velocity."""
    rng = np.random.default_rng(1)
    vel = rng.uniform(-0.3, 0.3, (50, 2))
    yaw = rng.uniform(-math.pi, math.pi, 50)
    v, w = drive.differential_command(vel, yaw, 0.2, 10.0, 100.0)
    np.testing.assert_allclose(drive.lookahead_velocities(v, w, yaw, 0.2), vel, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(vx=st.floats(-5, 5), vy=st.floats(-5, 5), yaw=st.floats(-4, 4),
       d=st.floats(0.01, 1.0), vmax=st.floats(0.05, 2.0), wmax=st.floats(0.05, 5.0))
def test_differential_command_respects_limits_and_keeps_curvature(vx, vy, yaw, d, vmax, wmax):
    """|v| <= max_speed, |w| <= max_angular_speed, and (v, w) is a scaled copy of the exact one."""
    vel = np.array([[vx, vy]])
    v, w = drive.differential_command(vel, np.array([yaw]), d, vmax, wmax)
    assert abs(v[0]) <= vmax * (1 + 1e-12) and abs(w[0]) <= wmax * (1 + 1e-12)
    v0, w0 = drive.differential_command(vel, np.array([yaw]), d, 1e9, 1e9)
    # Same direction in the (v, w) plane: the cross product vanishes, the dot product >= 0.
    assert abs(v[0] * w0[0] - w[0] * v0[0]) <= 1e-9 * (1 + abs(v0[0] * w0[0]))
    assert v[0] * v0[0] + w[0] * w0[0] >= -1e-12


def test_lookahead_disc_covers_the_robot():
    """A disc of radius r + D around the look-ahead point contains the robot's own disc."""
    rng = np.random.default_rng(2)
    pos = rng.uniform(-5, 5, (100, 2))
    yaw = rng.uniform(-math.pi, math.pi, 100)
    point = drive.lookahead_points(pos, yaw, 0.15)
    assert np.all(np.linalg.norm(point - pos, axis=1) <= 0.15 + 1e-12)


def test_non_finite_velocities_become_zero():
    """A NaN ORCA velocity never reaches a robot."""
    cmd = drive.holonomic_command(np.array([[np.nan, 0.1]]), np.array([0.0]), 1.0)
    v, w = drive.differential_command(np.array([[np.inf, 0.0]]), np.array([0.3]), 0.1, 1.0, 1.0)
    assert cmd.tolist() == [[0.0, 0.0]] and v.tolist() == [0.0] and w.tolist() == [0.0]
