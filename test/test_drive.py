"""Tests of orca_nav.core.orca.drive: preferred velocities and the two drive mappings (no ROS)."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st
import numpy as np
from orca_nav.core.orca import drive
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


def _unicycle(pos, yaw, v, w, dt):
    """Exact unicycle motion for dt under constant (v, w): the new (positions, yaw)."""
    turning = np.abs(w) > 1e-12
    safe_w = np.where(turning, w, 1.0)
    arc = np.stack([np.sin(yaw + w * dt) - np.sin(yaw), np.cos(yaw) - np.cos(yaw + w * dt)],
                   axis=1) * (v / safe_w)[:, None]
    line = (v * dt)[:, None] * np.stack([np.cos(yaw), np.sin(yaw)], axis=1)
    return pos + np.where(turning[:, None], arc, line), yaw + w * dt


def test_the_lookahead_point_moves_with_the_orca_velocity_when_the_robot_drives():
    """
    Drive a unicycle with the commanded (v, w): its look-ahead point moves with the velocity.

    The point's displacement over dt, divided by dt, matches the ORCA velocity to first order:
    the error shrinks in proportion to dt.
    """
    rng = np.random.default_rng(1)
    n, lookahead = 200, 0.2
    vel = rng.uniform(-0.3, 0.3, (n, 2))
    pos = rng.uniform(-5, 5, (n, 2))
    yaw = rng.uniform(-math.pi, math.pi, n)
    v, w = drive.differential_command(vel, yaw, lookahead, 10.0, 100.0)
    errors = []
    for dt in (1e-2, 1e-3):
        new_pos, new_yaw = _unicycle(pos, yaw, v, w, dt)
        moved = (drive.lookahead_points(new_pos, new_yaw, lookahead)
                 - drive.lookahead_points(pos, yaw, lookahead)) / dt
        errors.append(np.abs(moved - vel).max())
    # |d2P/dt2| <= |w| (|v| + D |w|) with |w| <= 0.6 / D = 3 rad/s here: < 3 * 1.2 * dt / 2.
    assert errors[0] < 0.02
    assert errors[1] < 0.002
    assert errors[0] / errors[1] == pytest.approx(10.0, rel=0.05)   # first order in dt
    # The robot's centre itself moves with v along its heading only (no sideways slip).
    new_pos, _ = _unicycle(pos, yaw, v, w, 1e-6)
    body = drive.world_to_body((new_pos - pos) / 1e-6, yaw)
    np.testing.assert_allclose(body[:, 1], 0.0, atol=1e-5)
    np.testing.assert_allclose(body[:, 0], v, atol=1e-5)


@pytest.mark.parametrize('radius, lookahead', [(0.2, 0.1), (0.3, 0.05), (0.15, 0.4)])
def test_lookahead_disc_covers_the_robot_for_every_heading(radius, lookahead):
    """
    The disc of radius r + D around the look-ahead point holds the robot's disc of radius r.

    Checked on the boundary of the robot's disc for a full turn of headings; the bound is tight
    (a point of the robot's disc is exactly r + D away), so r + D is the smallest safe radius.
    """
    yaw = np.linspace(-math.pi, math.pi, 721)
    pos = np.tile([[1.5, -2.0]], (len(yaw), 1))
    point = drive.lookahead_points(pos, yaw, lookahead)
    phi = np.linspace(0.0, 2.0 * math.pi, 360, endpoint=False)
    rim = pos[:, None, :] + radius * np.stack([np.cos(phi), np.sin(phi)], axis=1)[None]
    farthest = np.linalg.norm(rim - point[:, None, :], axis=2).max(axis=1)
    assert np.all(farthest <= radius + lookahead + 1e-9)
    np.testing.assert_allclose(farthest, radius + lookahead, atol=1e-3)
    # The point is straight ahead: the heading rotated into the body frame is (D, 0).
    np.testing.assert_allclose(drive.world_to_body(point - pos, yaw),
                               np.tile([[lookahead, 0.0]], (len(yaw), 1)), atol=1e-12)


def test_non_finite_velocities_become_zero():
    """A NaN ORCA velocity never reaches a robot."""
    cmd = drive.holonomic_command(np.array([[np.nan, 0.1]]), np.array([0.0]), 1.0)
    v, w = drive.differential_command(np.array([[np.inf, 0.0]]), np.array([0.3]), 0.1, 1.0, 1.0)
    assert cmd.tolist() == [[0.0, 0.0]] and v.tolist() == [0.0] and w.tolist() == [0.0]
