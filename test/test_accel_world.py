"""
Acceleration limits in the fleet controller: the published commands, in a lock-stepped world.

The acceptance scene of issue 11: 8 robots on a ring swap places (the ``circle`` scenario),
holonomic and differential, with max_accel 0.5 m/s^2 and max_decel 1.0 m/s^2: no command differs
from the one before by more than the limit times the period (+1 %), no discs overlap (true radii)
and every robot arrives. The world is test_scenario_worlds.run_world (controller in the loop,
exact kinematics, no DDS); the node has no parameters for the limits yet, so they are set on the
FleetConfig.
"""

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs
from orca_nav.core.orca import drive
from orca_nav.sim.scenarios import load_scenario
import pytest

from test_scenario_worlds import PERIOD, QUICK, run_world  # noqa: I100 -- test/ is on sys.path

LIMITS = {'max_accel': 0.5, 'max_decel': 1.0}  # [m/s^2]
SLACK = 1.01  # the acceptance's +1 %


def command_changes(commands, differential):
    """
    Per tick and robot: the change of the linear command, whether it sped up, |dw|.

    commands : (T, N, 3) as sent, the robots at rest before the first. Holonomic: the change of
    the (vx, vy) vector and whether its length grew; differential: of v and whether |v| grew.
    """
    sent = np.concatenate([np.zeros((1,) + commands.shape[1:]), commands])
    before, after = sent[:-1], sent[1:]
    if differential:
        change = np.abs(after[..., 0] - before[..., 0])
        faster = np.abs(after[..., 0]) > np.abs(before[..., 0])
    else:
        change = np.hypot(*(after[..., :2] - before[..., :2]).transpose(2, 0, 1))
        faster = (np.hypot(after[..., 0], after[..., 1])
                  > np.hypot(before[..., 0], before[..., 1]))
    return change, faster, np.abs(after[..., 2] - before[..., 2])


def worst_ratio(commands, differential, max_accel, max_decel):
    """Largest command change over its limit x period (speeding up: max_accel, else decel)."""
    change, faster, _ = command_changes(commands, differential)
    allowed = np.where(faster, max_accel, max_decel) * PERIOD
    return float(np.max(change / allowed))


@pytest.mark.parametrize('drive_name', ['holonomic', 'differential'])
def test_ring_swap_within_acceleration_limits(drive_name):
    """8-robot ring swap, 0.5 / 1.0 m/s^2: every change within limit x period, no contact."""
    run = run_world(load_scenario('circle', robots=8), drive_name, fleet=LIMITS)
    ratio = worst_ratio(run.commands, drive_name == 'differential', **LIMITS)
    print(f'{drive_name}: largest change / (limit x period) {ratio:.4f}, min gap '
          f'{run.min_gap:.3f} m, {run.time:.1f} s')
    assert ratio <= SLACK
    assert run.min_gap > 0.0, f'discs overlap by {-run.min_gap:.3f} m'
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'


@pytest.mark.parametrize('name', QUICK)
@pytest.mark.parametrize('drive_name', ['holonomic', 'differential'])
def test_routed_scenes_within_acceleration_limits(name, drive_name):
    """Walls and routes (shelf, two rooms, U pocket): within the limits, no contact, home."""
    run = run_world(load_scenario(name), drive_name, fleet=LIMITS)
    assert worst_ratio(run.commands, drive_name == 'differential', **LIMITS) <= SLACK
    assert run.min_gap > 0.0, f'discs overlap by {-run.min_gap:.3f} m'
    assert run.min_wall > 0.0, f'a wall overlap of {-run.min_wall:.3f} m'
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'


@pytest.mark.parametrize('drive_name', ['holonomic', 'differential'])
def test_without_limits_the_commands_jump(drive_name):
    """The same scene without limits: commands jump far beyond the limits (the need)."""
    run = run_world(load_scenario('circle', robots=8), drive_name)
    assert worst_ratio(run.commands, drive_name == 'differential', **LIMITS) > 5.0


def test_angular_acceleration_limit_of_differential_robots():
    """With max_angular_accel too, |dw| stays within it; the ring still swaps without contact."""
    limits = {**LIMITS, 'max_angular_accel': 2.0}
    run = run_world(load_scenario('circle', robots=8), 'differential', fleet=limits)
    assert worst_ratio(run.commands, True, **LIMITS) <= SLACK
    _, _, turn = command_changes(run.commands, True)
    assert turn.max() <= 2.0 * PERIOD * SLACK
    assert run.min_gap > 0.0
    assert run.arrived.all()


@pytest.mark.parametrize('drive_name', ['holonomic', 'differential'])
def test_limits_are_measured_from_the_last_command_not_odometry(drive_name):
    """Odometry that claims full speed does not let the next command jump there."""
    cfg = FleetConfig.uniform(['a'], drive=drive_name, **LIMITS, period=PERIOD)
    ctrl = FleetController(cfg)
    ctrl.set_goal(0, 5.0, 0.0)
    inputs = FleetInputs.empty(1)
    sent = np.zeros(3)
    for k in range(5):
        # At rest at first (before the first command the limits start from the odometry),
        # then noisy odometry: full speed ahead, whatever was commanded.
        inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=k * PERIOD,
                            v_forward=0.5 if k else 0.0)
        cmd = ctrl.step(inputs, k * PERIOD).commands[0]
        assert np.hypot(*(cmd[:2] - sent[:2])) <= 0.5 * PERIOD * SLACK
        sent = cmd
    assert sent[0] == pytest.approx(5 * 0.5 * PERIOD, rel=0.05)


def test_differential_command_clips_each_change():
    """The drive mapping clips v and w to what is reachable from the previous command."""
    yaw = np.zeros(3)
    vel = np.array([[0.5, 0.0], [-0.5, 0.0], [0.0, 0.2]])  # P: ahead, behind, sideways
    v, w = drive.differential_command(vel, yaw, 0.1, 0.5, 2.0,
                                      previous=(np.array([0.0, 0.3, 0.0]), np.zeros(3)),
                                      max_accel=0.5, max_decel=1.0, max_angular_accel=3.0,
                                      dt=0.1)
    assert v.tolist() == pytest.approx([0.05, 0.2, 0.0])
    assert w.tolist() == pytest.approx([0.0, 0.0, 0.3])
    # Without a previous command, or with no limits: the plain mapping.
    plain = drive.differential_command(vel, yaw, 0.1, 0.5, 2.0)
    unlimited = drive.differential_command(vel, yaw, 0.1, 0.5, 2.0,
                                           previous=(np.zeros(3), np.zeros(3)), dt=0.1)
    assert np.array_equal(plain[0], unlimited[0]) and np.array_equal(plain[1], unlimited[1])


@pytest.mark.parametrize('previous, value, expected', [
    (0.5, 1.0, 0.55),     # speeding up: max_accel x dt
    (0.5, 0.0, 0.4),      # braking: max_decel x dt
    (0.05, -1.0, 0.0),    # braking stops at a stop, it does not reverse
    (0.0, -1.0, -0.05),   # from rest either way at max_accel
    (-0.5, 0.0, -0.4),    # braking backward
])
def test_limit_change_model(previous, value, expected):
    """1-D reachable interval: accel away from zero, decel toward it down to a stop."""
    out = drive.limit_change([value], [previous], 0.5, 1.0, 0.1)
    assert out[0] == pytest.approx(expected)


def test_limit_change_with_weaker_brakes():
    """max_decel below max_accel: braking by max_decel x dt, even through zero."""
    out = drive.limit_change([0.0, -1.0], [0.5, 0.01], 1.0, 0.5, 0.1)
    assert out.tolist() == pytest.approx([0.45, -0.04])
