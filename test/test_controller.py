"""FleetController without ROS: stale robots, goals, drives, limits and scan obstacles."""

import math

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs, RobotState, ScanInput
from orca_nav.core.raycast import cast_rays
import pytest


def fleet(names=('a', 'b'), n_controlled=None, **kw):
    """Return a controller and empty inputs for identical robots."""
    cfg = FleetConfig.uniform(list(names), n_controlled, **kw)
    return FleetController(cfg), FleetInputs.empty(len(names))


def test_no_odometry_then_active_then_reached():
    """States follow odometry and goals; a robot at its goal stops."""
    ctrl, inputs = fleet(['a'])
    assert ctrl.step(inputs, 0.0).states == [RobotState.NO_ODOMETRY]
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    assert ctrl.step(inputs, 0.0).states == [RobotState.IDLE]
    ctrl.set_goal(0, 3.0, 0.0)
    result = ctrl.step(inputs, 0.0)
    assert result.states == [RobotState.ACTIVE]
    assert result.commands[0, 0] > 0.4 and result.distance[0] == pytest.approx(3.0)
    inputs.set_odometry(0, x=2.95, y=0.0, yaw=0.0, time=0.0)
    result = ctrl.step(inputs, 0.0)
    assert result.states == [RobotState.REACHED]
    np.testing.assert_array_equal(result.commands, 0.0)


def test_stale_odometry_gives_zero_and_others_keep_avoiding_the_last_position():
    """After odom_timeout a robot is stopped; the other still avoids where it stood."""
    ctrl, inputs = fleet(['a', 'b'], odom_timeout=0.5, stale_keepout_time=5.0)
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=8.0)    # a is 2 s old at t = 10
    inputs.set_odometry(1, x=1.0, y=0.0, yaw=0.0, time=10.0)   # b is fresh
    ctrl.set_goal(0, 5.0, 0.0)
    ctrl.set_goal(1, 2.0, 0.0)
    result = ctrl.step(inputs, 10.0)
    assert result.states[0] == RobotState.STALE_ODOMETRY
    np.testing.assert_array_equal(result.commands[0], 0.0)
    # b drives away from a: a stale a still counts, so b's answer differs from a lone b's.
    lone, lone_inputs = fleet(['b'])
    lone_inputs.set_odometry(0, x=1.0, y=0.0, yaw=0.0, time=10.0)
    lone.set_goal(0, -2.0, 0.0)
    ctrl.set_goal(1, -2.0, 0.0)
    assert not np.allclose(ctrl.step(inputs, 10.0).commands[1],
                           lone.step(lone_inputs, 10.0).commands[0])
    # Past the keep-out time (0.5 + 5 s) a is forgotten.
    inputs.odom_time[1] = 20.0
    np.testing.assert_allclose(ctrl.step(inputs, 20.0).commands[1],
                               lone.step(lone_inputs, 10.0).commands[0])


def test_resent_goal_is_not_new_and_cancel_makes_idle():
    """set_goal says whether the goal changed; cancel_goal stops the robot."""
    ctrl, inputs = fleet(['a'])
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    assert ctrl.set_goal(0, 1.0, 2.0) is True
    assert ctrl.set_goal(0, 1.0, 2.0) is False
    assert ctrl.set_goal(0, 1.0, 2.5) is True
    ctrl.cancel_goal(0)
    result = ctrl.step(inputs, 0.0)
    assert result.states == [RobotState.IDLE]
    np.testing.assert_array_equal(result.commands, 0.0)


@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_commands_respect_limits_for_both_drives(drive):
    """Random poses and goals: commands finite, within max_speed / max_angular_speed."""
    rng = np.random.default_rng(3)
    n = 12
    ctrl, inputs = fleet([f'r{k}' for k in range(n)], drive=drive, max_speed=0.7,
                         max_angular_speed=1.2)
    for i in range(n):
        x, y = rng.uniform(-4, 4, 2)
        inputs.set_odometry(i, x=x, y=y, yaw=rng.uniform(-3, 3), time=0.0,
                            v_forward=rng.uniform(-0.7, 0.7),
                            yaw_rate=rng.uniform(-1, 1) if drive == 'differential' else 0.0)
        ctrl.set_goal(i, *rng.uniform(-4, 4, 2))
    cmd = ctrl.step(inputs, 0.0).commands
    assert np.all(np.isfinite(cmd))
    assert np.all(np.hypot(cmd[:, 0], cmd[:, 1]) <= 0.7 + 1e-9)
    assert np.all(np.abs(cmd[:, 2]) <= 1.2 + 1e-9)
    if drive == 'differential':
        np.testing.assert_array_equal(cmd[:, 1], 0.0)
    else:
        np.testing.assert_array_equal(cmd[:, 2], 0.0)


def test_differential_robot_turns_toward_a_goal_behind_it():
    """A differential robot facing away from its goal turns (angular.z) and never strafes."""
    ctrl, inputs = fleet(['a'], drive='differential')
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    ctrl.set_goal(0, -3.0, 0.5)
    cmd = ctrl.step(inputs, 0.0).commands[0]
    assert abs(cmd[2]) > 0.1 and cmd[1] == 0.0


def test_limit_replaces_nan_and_clamps():
    """The last line of defence: NaN -> 0, speed and yaw rate clipped per drive."""
    ctrl, _ = fleet(['a', 'b'], max_speed=0.5, max_angular_speed=1.0)
    out = ctrl.limit(np.array([[math.nan, 3.0, 9.0], [3.0, 4.0, -9.0]]))
    assert np.all(np.isfinite(out))
    assert np.hypot(*out[1, :2]) == pytest.approx(0.5)
    np.testing.assert_array_equal(out[:, 2], 0.0)  # holonomic robots do not turn


def test_observed_robots_are_avoided_but_never_commanded():
    """Rows past n_controlled are neighbours only: the commanded robot gives way."""
    ctrl, inputs = fleet(['a', 'obs'], n_controlled=1)
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    inputs.set_odometry(1, x=1.0, y=0.0, yaw=math.pi, time=0.0, v_forward=0.5)
    ctrl.set_goal(0, 4.0, 0.0)
    result = ctrl.step(inputs, 0.0)
    assert result.commands.shape == (1, 3) and len(result.states) == 1
    assert abs(result.commands[0, 1]) > 0.05 or result.commands[0, 0] < 0.45


def wall_scan(position, wall):
    """Return a 360-beam scan of one wall segment seen from ``position`` (yaw 0)."""
    angles = -math.pi + np.arange(360) * (2 * math.pi / 360)
    ranges = cast_rays(np.asarray(position, float), angles, 6.0, np.array([wall]), None, None)
    return ScanInput(robot=0, ranges=ranges, angle_min=-math.pi,
                     angle_increment=2 * math.pi / 360, range_min=0.05, range_max=6.0, time=0.0)


def test_scan_walls_are_avoided_and_forgotten_after_the_timeout():
    """A wall seen by the scan changes the command; after obstacle_timeout it is forgotten."""
    wall = [[0.6, -2.0], [0.6, 2.0]]
    ctrl, inputs = fleet(['a'], scan_enabled=True, obstacle_timeout=0.5)
    blind, _ = fleet(['a'])
    for c in (ctrl, blind):
        c.set_goal(0, 3.0, 0.0)
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0, v_forward=0.5)
    inputs.scans = [wall_scan((0.0, 0.0), wall)]
    seen = ctrl.step(inputs, 0.0).commands[0]
    free = blind.step(inputs, 0.0).commands[0]
    assert seen[0] < free[0] - 0.1  # brakes for the wall
    inputs.scans = []
    inputs.odom_time[0] = 1.0
    np.testing.assert_allclose(ctrl.step(inputs, 1.0).commands[0], free)


def test_a_malformed_scan_is_counted_and_reported_not_raised():
    """A scan with a bad angle increment is a warning and a count, not an exception."""
    ctrl, inputs = fleet(['a'], scan_enabled=True)
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    ctrl.set_goal(0, 1.0, 0.0)
    inputs.scans = [ScanInput(0, np.ones(10), 0.0, math.nan, 0.05, 6.0, 0.0)]
    result = ctrl.step(inputs, 0.0)
    assert ctrl.scan_memory.rejected == 1 and result.warnings[0][0] == 0
    assert 'scan rejected' in result.warnings[0][1]


def test_reconfigure_keeps_goals_and_refuses_other_robots():
    """New knobs apply from the next step; the robot list is fixed."""
    ctrl, inputs = fleet(['a'])
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    ctrl.set_goal(0, 5.0, 0.0)
    ctrl.reconfigure(FleetConfig.uniform(['a'], max_speed=0.2))
    assert np.hypot(*ctrl.step(inputs, 0.0).commands[0, :2]) == pytest.approx(0.2)
    with pytest.raises(ValueError, match='robots'):
        ctrl.reconfigure(FleetConfig.uniform(['a', 'b']))
