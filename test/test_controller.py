"""FleetController without ROS: stale robots, goals, drives, limits and scan obstacles."""

from dataclasses import replace
import math

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs, RobotState, ScanInput
from orca_nav.control.scan_memory import MAX_HIDDEN_TIME, ScanMemory
from orca_nav.core.geometry import point_segment_distance
from orca_nav.core.perception.raycast import cast_rays, polygon_edges
from orca_nav.core.routes.grid import GridMap
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


# --- per-robot isolation of bad input -----------------------------------------------------

# Three robots 10 m apart (beyond neighbor_dist): none changes another's answer, so a bad
# robot may change no one else's command at all.
FAR = [(0.0, 0.0), (10.0, 0.0), (20.0, 0.0)]
FAR_GOALS = [(3.0, 1.0), (13.0, -1.0), (23.0, 2.0)]


def far_fleet(drive='holonomic', **kw):
    """Return a controller of three far-apart robots with goals, and their clean inputs."""
    ctrl, inputs = fleet(['a', 'b', 'c'], drive=drive, **kw)
    for i, ((x, y), goal) in enumerate(zip(FAR, FAR_GOALS)):
        inputs.set_odometry(i, x=x, y=y, yaw=0.3 * i, time=0.0, v_forward=0.2)
        ctrl.set_goal(i, *goal)
    return ctrl, inputs


@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
@pytest.mark.parametrize('bad, field', [
    ({'x': 1.7e308, 'y': -1.7e308}, 'odometry pose'),   # inf only after the rotated offset
    ({'x': 1e308, 'y': 0.0}, 'odometry pose'),          # finite, beyond max_coordinate
    ({'x': 2e5, 'y': 0.0}, 'odometry pose'),
    ({'x': 10.0, 'y': 0.0, 'v_forward': 50.0}, 'odometry twist'),   # 100x max_speed
    ({'x': 10.0, 'y': 0.0, 'yaw_rate': -40.0}, 'odometry twist'),
    ({'x': 10.0, 'y': 0.0, 'yaw': math.nan}, 'odometry pose'),
])
def test_implausible_odometry_stops_that_robot_only(drive, bad, field):
    """A refused pose or twist: that robot stops and is reported; the others' commands hold."""
    offset = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.7], [0.0, 0.0, 0.0]])
    ctrl, inputs = far_fleet(drive)
    clean, clean_inputs = far_fleet(drive)
    for c in (ctrl, clean):
        c.reconfigure(replace(c.config, odom_offset=offset))
    # b's odometry frame is rotated: its clean pose in that frame.
    bx, by = np.array([[math.cos(-0.7), -math.sin(-0.7)],
                       [math.sin(-0.7), math.cos(-0.7)]]) @ FAR[1]
    for inp in (inputs, clean_inputs):
        inp.set_odometry(1, x=bx, y=by, yaw=-0.7, time=0.0)
    first = ctrl.step(inputs, 0.0)
    np.testing.assert_allclose(first.commands, clean.step(clean_inputs, 0.0).commands,
                               atol=1e-12)
    values = {'yaw': 0.0, 'v_forward': 0.0, 'yaw_rate': 0.0}
    values.update(bad)
    for t in (0.1, 0.2):
        for inp in (inputs, clean_inputs):
            for i in (0, 2):
                inp.set_odometry(i, x=FAR[i][0], y=FAR[i][1], yaw=0.3 * i, time=t,
                                 v_forward=0.2)
        clean_inputs.set_odometry(1, x=bx, y=by, yaw=-0.7, time=t)
        inputs.set_odometry(1, time=0.1, **values)  # the same bad message at both ticks
        result = ctrl.step(inputs, t)
        reference = clean.step(clean_inputs, t)
        assert result.states[1] == RobotState.REJECTED_ODOMETRY
        np.testing.assert_array_equal(result.commands[1], 0.0)
        np.testing.assert_allclose(result.commands[[0, 2]], reference.commands[[0, 2]],
                                   atol=1e-12)
        assert result.states[0] == result.states[2] == RobotState.ACTIVE
        assert np.all(np.isfinite(result.positions))
        # b is still shown (and avoided) at its last valid pose.
        np.testing.assert_allclose(result.positions[1], FAR[1], atol=1e-9)
    assert ctrl.odom_rejected.tolist() == [0, 1, 0]  # one message, counted once
    warned = [w for w in first.warnings + result.warnings if w[0] == 1]
    assert not warned  # the warning came with the first bad tick, not again
    # A valid message again: b drives on.
    inputs.set_odometry(1, x=bx, y=by, yaw=-0.7, time=0.3)
    assert ctrl.step(inputs, 0.3).states[1] == RobotState.ACTIVE


def test_the_refusal_is_a_warning_naming_robot_and_field():
    """StepResult.warnings: (row, 'odometry pose: ...') once per refused message."""
    ctrl, inputs = far_fleet()
    inputs.set_odometry(2, x=1e308, y=0.0, yaw=0.0, time=0.0)
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0, v_forward=99.0)
    warnings = ctrl.step(inputs, 0.0).warnings
    fields = sorted((i, text.split(':')[0]) for i, text in warnings)
    assert fields == [(0, 'odometry twist'), (2, 'odometry pose')]
    assert 'max_coordinate' in dict(warnings)[2]
    assert ctrl.step(inputs, 0.05).warnings == []
    inputs.set_odometry(2, x=1e308, y=0.0, yaw=0.0, time=0.1)  # a new bad message
    assert [w[0] for w in ctrl.step(inputs, 0.1).warnings] == [2]
    assert ctrl.odom_rejected.tolist() == [1, 0, 2]


def test_a_rejected_robot_nearby_is_avoided_at_its_last_valid_pose_like_a_stale_one():
    """Others avoid a refused robot exactly as a stale robot standing at its last valid pose."""
    def pair():
        ctrl, inputs = fleet(['a', 'b'], odom_timeout=0.5, stale_keepout_time=5.0)
        ctrl.set_goal(0, 4.0, 0.0)
        ctrl.set_goal(1, -4.0, 0.0)
        inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
        inputs.set_odometry(1, x=1.0, y=0.05, yaw=math.pi, time=0.0, v_forward=0.3)
        ctrl.step(inputs, 0.0)
        return ctrl, inputs
    bad, bad_inputs = pair()
    stale, stale_inputs = pair()
    for inp in (bad_inputs, stale_inputs):
        inp.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=1.0)
    bad_inputs.set_odometry(1, x=math.inf, y=0.0, yaw=0.0, time=1.0)
    result = bad.step(bad_inputs, 1.0)
    reference = stale.step(stale_inputs, 1.0)  # b silent since t = 0: stale at (1, 0.05)
    assert reference.states[1] == RobotState.STALE_ODOMETRY
    assert result.states[1] == RobotState.REJECTED_ODOMETRY
    np.testing.assert_allclose(result.commands, reference.commands, atol=1e-12)
    lone, lone_inputs = fleet(['a'])
    lone.set_goal(0, 4.0, 0.0)
    lone_inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=1.0)
    assert not np.allclose(result.commands[0], lone.step(lone_inputs, 1.0).commands[0])


def test_a_message_refused_by_the_node_stops_the_robot_at_once():
    """inputs.rejected (NaN, zero quaternion seen by the node): stopped before odom_timeout."""
    ctrl, inputs = far_fleet()
    ctrl.step(inputs, 0.0)
    inputs.rejected[1] = True
    result = ctrl.step(inputs, 0.05)
    assert result.states[1] == RobotState.REJECTED_ODOMETRY
    np.testing.assert_array_equal(result.commands[1], 0.0)
    assert np.hypot(*result.commands[0, :2]) > 0.1
    assert ctrl.odom_rejected.tolist() == [0, 0, 0]  # the node counted it


def test_goals_and_routes_beyond_max_coordinate_are_refused():
    """set_goal / set_route raise ValueError for non-finite or too-far points; goal kept."""
    ctrl, inputs = fleet(['a'], max_coordinate=100.0)
    ctrl.set_goal(0, 100.0, -100.0)
    for goal in [(100.5, 0.0), (0.0, -1e308), (math.nan, 0.0), (math.inf, math.inf)]:
        with pytest.raises(ValueError, match='goal position'):
            ctrl.set_goal(0, *goal)
    with pytest.raises(ValueError, match='goal orientation'):
        ctrl.set_goal(0, 1.0, 1.0, math.nan)
    with pytest.raises(ValueError, match='route position'):
        ctrl.set_route(0, [(1.0, 1.0), (1e6, 0.0)])
    assert ctrl.goal[0].tolist() == [100.0, -100.0] and ctrl.has_goal[0]


def solver_failing_at(monkeypatch, *places):
    """Make the controller's solver raise whenever an agent is within 0.5 m of a place."""
    from orca_nav.control import avoidance as module
    real = module.solve

    def solver(agents, *args, **kw):
        if any(np.any(np.hypot(*(agents.positions - p).T) < 0.5) for p in places):
            raise FloatingPointError('solver blew up')
        return real(agents, *args, **kw)
    monkeypatch.setattr(module, 'solve', solver)


@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_a_solver_failure_is_rerun_without_the_robot_causing_it(monkeypatch, drive):
    """The shared solver call raises because of one robot: only that robot stops."""
    clean, clean_inputs = far_fleet(drive)
    reference = clean.step(clean_inputs, 0.0)
    solver_failing_at(monkeypatch, FAR[1])
    ctrl, inputs = far_fleet(drive)
    result = ctrl.step(inputs, 0.0)
    np.testing.assert_array_equal(result.commands[1], 0.0)
    np.testing.assert_allclose(result.commands[[0, 2]], reference.commands[[0, 2]],
                               atol=1e-12)
    assert [(i, text.split(':')[0]) for i, text in result.warnings] == [(1, 'solver')]
    assert ctrl.solver_failures == 1


def test_two_robots_making_the_solver_fail_are_both_left_out(monkeypatch):
    """Each culprit is found in turn; the robot between them keeps its command."""
    clean, clean_inputs = far_fleet()
    reference = clean.step(clean_inputs, 0.0)
    solver_failing_at(monkeypatch, FAR[0], FAR[2])
    ctrl, inputs = far_fleet()
    result = ctrl.step(inputs, 0.0)
    np.testing.assert_array_equal(result.commands[[0, 2]], 0.0)
    np.testing.assert_allclose(result.commands[1], reference.commands[1], atol=1e-12)
    assert sorted(i for i, _ in result.warnings) == [0, 2]


def test_a_solver_failure_that_no_robot_explains_fails_the_tick(monkeypatch):
    """Left without a culprit (fails whatever the robots), the error reaches the node."""
    from orca_nav.control import avoidance as module

    def solver(*args, **kw):
        raise RuntimeError('always')
    monkeypatch.setattr(module, 'solve', solver)
    ctrl, inputs = far_fleet()
    with pytest.raises(RuntimeError, match='always'):
        ctrl.step(inputs, 0.0)


def test_a_drive_mapping_failure_stops_only_that_robot(monkeypatch):
    """holonomic_command raising for one robot's yaw: the others get their commands."""
    from orca_nav.core.orca import drive
    clean, clean_inputs = far_fleet()
    reference = clean.step(clean_inputs, 0.0)
    real = drive.holonomic_command

    def mapping(velocities, yaw, max_speed):
        if np.any(yaw == 0.3):  # robot b's yaw
            raise ValueError('bad mapping')
        return real(velocities, yaw, max_speed)
    monkeypatch.setattr(drive, 'holonomic_command', mapping)
    ctrl, inputs = far_fleet()
    result = ctrl.step(inputs, 0.0)
    np.testing.assert_array_equal(result.commands[1], 0.0)
    np.testing.assert_allclose(result.commands[[0, 2]], reference.commands[[0, 2]])
    assert result.warnings[0][0] == 1 and result.warnings[0][1].startswith('command:')


def test_any_scan_failure_is_that_robots_only(monkeypatch):
    """A scan that makes the segment extraction raise (any error) is refused, not the tick."""
    from orca_nav.control import scan_memory

    def broken(*args, **kw):
        raise IndexError('broken scan')
    monkeypatch.setattr(scan_memory, 'scan_to_segments', broken)
    ctrl, inputs = fleet(['a'], scan_enabled=True)
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0)
    ctrl.set_goal(0, 1.0, 0.0)
    inputs.scans = [ScanInput(0, np.ones(10), 0.0, 0.1, 0.05, 6.0, 0.0)]
    result = ctrl.step(inputs, 0.0)
    assert ctrl.scan_memory.rejected == 1 and result.commands[0, 0] > 0.1


# --- safety margin --------------------------------------------------------------------------

def test_safety_margin_grows_the_planning_radius_only():
    """Margin m plans exactly as radius r + m without margin; routes get it too."""
    def pair(**kw):
        ctrl, inputs = fleet(['a', 'b'], pass_on_right=0.0, **kw)
        ctrl.set_goal(0, 4.0, 0.0)
        ctrl.set_goal(1, -4.0, 0.0)
        inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.0, v_forward=0.5)
        inputs.set_odometry(1, x=1.2, y=0.1, yaw=math.pi, time=0.0, v_forward=0.5)
        return ctrl, inputs
    margin, margin_inputs = pair(radius=0.2, safety_margin=0.1)
    grown, grown_inputs = pair(radius=0.3, safety_margin=0.0)
    plain, plain_inputs = pair(radius=0.2, safety_margin=0.0)
    cmd = margin.step(margin_inputs, 0.0).commands
    np.testing.assert_allclose(cmd, grown.step(grown_inputs, 0.0).commands, atol=1e-12)
    assert not np.allclose(cmd, plain.step(plain_inputs, 0.0).commands)
    np.testing.assert_allclose(margin.navigator.radius, [0.3, 0.3])
    assert margin.config.radius.tolist() == [0.2, 0.2]  # the true radii are kept


def test_a_robot_with_non_finite_solver_input_is_left_out_first(monkeypatch):
    """A solver failure with a robot whose solver input is not finite: it goes, no search."""
    from orca_nav.control import avoidance as module
    real = module.solve
    calls = []

    def solver(agents, *args, **kw):
        calls.append(len(agents.positions))
        if not np.isfinite(agents.radius).all():
            raise ValueError('radius must be finite')
        return real(agents, *args, **kw)
    monkeypatch.setattr(module, 'solve', solver)
    ctrl, inputs = far_fleet()
    ctrl.reconfigure(replace(ctrl.config, radius=np.array([0.2, math.inf, 0.2])))
    result = ctrl.step(inputs, 0.0)
    assert calls == [3, 2]
    np.testing.assert_array_equal(result.commands[1], 0.0)
    assert np.hypot(*result.commands[0, :2]) > 0.1 and result.warnings[0][0] == 1


def test_returns_on_map_walls_make_no_scan_segments_and_the_rest_do():
    """With a map, a mapped wall seen by the scan is not added again; a box it lacks is."""
    # 10 x 10 m map, 0.05 m cells, origin (-5, -5): one mapped wall along x = 2.
    res, size = 0.05, 200
    occupancy = np.zeros((size, size), np.int8)
    occupancy[:, int((2.0 + 5.0) / res)] = 100
    grid = GridMap.from_occupancy(occupancy.ravel(), size, size, res, (-5.0, -5.0, 0.0))
    mapped = [[2.0, -3.0], [2.0, 3.0]]
    box = [[-1.5, -0.3], [-1.5, 0.3]]  # not on the map
    angles = -math.pi + 2 * math.pi / 360 * np.arange(360)
    ranges = cast_rays(np.zeros(2), angles, 6.0, np.array([mapped, box]), None, None)
    scan = ScanInput(robot=0, ranges=ranges, angle_min=-math.pi,
                     angle_increment=2 * math.pi / 360, range_min=0.05, range_max=6.0,
                     time=0.0)
    args = ([scan], np.zeros((1, 2)), np.zeros(1), np.ones(1, bool), np.ones(1, bool),
            np.full(1, 0.2), (0.0, 0.0, 0.0))
    for use_map in (False, True):
        memory = ScanMemory(1)
        memory.update(*args, grid=grid if use_map else None)
        segments, _ = memory.segments(0.0, np.zeros(1, np.int64), 1.0, False)
        xs = segments[:, :, 0]
        on_box = np.all(np.abs(xs + 1.5) < 0.05, axis=1)
        on_wall = np.all(np.abs(xs - 2.0) < 0.05, axis=1)
        assert on_box.any()
        assert on_wall.any() != use_map


def test_a_robot_that_cannot_move_is_reported_stuck_with_where_and_why():
    """Its base ignores the commands: STUCK after progress_timeout, a warning now and then."""
    ctrl = FleetController(FleetConfig.uniform(['r1']))
    ctrl.set_goal(0, 5.0, 0.0)
    inputs = FleetInputs.empty(1)
    reports = []
    for k in range(260):
        t = 0.1 * k
        inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=t)
        result = ctrl.step(inputs, t)
        reports += [(t, text) for _, text in result.warnings if text.startswith('progress')]
    assert result.states[0] == RobotState.STUCK
    times = [t for t, _ in reports]
    # Reported when it became stuck (after the 10 s progress timeout), then every 10 s.
    assert len(times) == 2 and 10.0 < times[0] < 10.5 and abs(times[1] - times[0] - 10.0) < 0.15
    assert 'stuck at (0.00, 0.00), steering to (5.00, 0.00) at 0.50 m/s' in reports[0][1]


def _memory_after(scenes, robot_xy=(0.0, 0.0), grid=None, map_time=0.0):
    """
    Feed one robot's memory a scan of each scene ((time, walls (K, 2, 2), discs (D, 2))).

    A scene may end with the robot's position, else it is at ``robot_xy``. The memory has
    the map ``grid`` from ``map_time`` on. Returns the segments it hands the core at the last
    scene's time (obstacle timeout 0.5 s).
    """
    angles = -math.pi + 2 * math.pi / 360 * np.arange(360)
    memory = ScanMemory(1)
    for t, walls, discs, *where in scenes:
        robot_xy = where[0] if where else robot_xy
        discs = np.asarray(discs, float).reshape(-1, 2)
        ranges = cast_rays(np.asarray(robot_xy, float), angles, 6.0,
                           np.asarray(walls, float).reshape(-1, 2, 2), discs,
                           np.full(len(discs), 0.2))
        scan = ScanInput(0, ranges, -math.pi, 2 * math.pi / 360, 0.05, 6.0, t)
        memory.update([scan], np.array([robot_xy], float), np.zeros(1), np.ones(1, bool),
                      np.ones(1, bool), np.full(1, 0.2), (0.0, 0.0, 0.0),
                      grid=grid if t >= map_time else None)
    return memory.segments(t, np.zeros(1, np.int64), 0.5, False)[0]


WALL = [[-3.0, 2.0], [3.0, 2.0]]


def _near(segments, point, tol=0.1):
    """Whether some segment passes within tol of point."""
    return len(segments) > 0 and point_segment_distance(
        np.array([point], float), segments).min() < tol


def test_a_phantom_touching_a_wall_is_forgotten_when_the_beams_pass_through_it():
    """A segment from the wall into free space: its end is seen, the rest seen through."""
    phantom = [[1.0, 2.0], [1.0, 0.8]]
    first = _memory_after([(0.0, [WALL, phantom], [])])
    assert _near(first, (1.0, 1.4))
    # Gone after the obstacle timeout: not refreshed by the few beams that return on its end.
    later = _memory_after([(0.0, [WALL, phantom], [])]
                          + [(0.1 * k, [WALL], []) for k in range(1, 10)])
    assert not _near(later, (1.0, 1.4)) and _near(later, (0.0, 2.0))


def test_an_overhang_past_a_walls_end_goes_when_the_laser_sees_past_it():
    """
    A wall's end seen at a grazing angle overhangs into a door; looking through it cuts it off.

    The wall x = 0.1, y 0.6 to 2.9 is a door jamb (two_rooms): seen along it from (0.4, 2.5),
    the beam past its end crosses the wall's line far below it, so the segment's end is put
    0.14 m into the door. From the door, at (0.32, 0.48), the laser sees through most of that
    part into the next room (the beams closest to the end return from the jamb's underside,
    within range noise of the line), and sees the rest of the wall: the overhang goes, the
    wall stays. With the map (it came after the first scan), the segment goes altogether.
    """
    corners = np.array([[-0.1, 0.6], [0.1, 0.6], [0.1, 2.9], [-0.1, 2.9]])
    walls = np.concatenate([polygon_edges(corners), [[[-4.9, -2.9], [-4.9, 2.9]]]])
    along = [(0.0, walls, [], (0.4, 2.5))]
    door = [(0.1 * k, walls, [], (0.32, 0.48)) for k in range(1, 4)]
    assert _near(_memory_after(along), (0.1, 0.47), tol=0.02)  # the overhang
    later = _memory_after(along + door)
    assert not _near(later, (0.1, 0.47), tol=0.04)
    assert _near(later, (0.1, 0.62), tol=0.02) and _near(later, (0.1, 2.0), tol=0.02)
    # The map's walls are the ORCA obstacles: the remembered segment on them goes.
    res, size = 0.05, 200
    occupancy = np.zeros((size, size), np.int8)
    occupancy[round((0.6 + 5.0) / res):round((2.9 + 5.0) / res),
              round((-0.1 + 5.0) / res):round((0.1 + 5.0) / res)] = 100
    grid = GridMap.from_occupancy(occupancy.ravel(), size, size, res, (-5.0, -5.0, 0.0))
    mapped = _memory_after(along + door, grid=grid, map_time=0.1)
    assert not _near(mapped, (0.1, 0.47), tol=0.1) and _near(mapped, (-4.9, 0.0))


def test_a_wall_a_robot_hides_stays_and_a_hidden_phantom_goes_after_max_hidden_time():
    """Occluded: kept as seen; never seen again for MAX_HIDDEN_TIME: forgotten."""
    # A robot parks at (0, 1) between the scanner and the wall: the wall behind it is hidden.
    scenes = [(0.0, [WALL], [])] + [(0.1 * k, [WALL], [(0.0, 1.0)]) for k in range(1, 10)]
    kept = _memory_after(scenes)
    assert _near(kept, (0.0, 2.0))  # the part behind the robot too: occluded, not seen through
    # Behind the wall (from the scanner), never seen again.
    behind = [[-0.5, 2.3], [0.5, 2.3]]
    assert 3.9 < MAX_HIDDEN_TIME < 6.9
    scenes = [(0.0, [behind], [])] + [(0.1 * k, [WALL], []) for k in range(1, 70)]
    hidden = _memory_after(scenes[:40])  # 3.9 s: still kept (it might be there)
    assert _near(hidden, (0.0, 2.3))
    gone = _memory_after(scenes)          # 6.9 s > MAX_HIDDEN_TIME
    assert not _near(gone, (0.0, 2.3)) and _near(gone, (0.0, 2.0))


def test_segments_remembered_on_walls_before_the_map_came_go_when_it_comes():
    """A wall seen before the map: its segment (and overhang) goes once the map shows it."""
    res, size = 0.05, 200
    occupancy = np.zeros((size, size), np.int8)
    occupancy[int((2.0 + 5.0) / res), :int((1.0 + 5.0) / res)] = 100  # wall y = 2, x < 1
    grid = GridMap.from_occupancy(occupancy.ravel(), size, size, res, (-5.0, -5.0, 0.0))
    wall = [[-3.0, 2.0], [1.0, 2.0]]
    angles = -math.pi + 2 * math.pi / 360 * np.arange(360)
    ranges = cast_rays(np.zeros(2), angles, 6.0, np.array([wall]), None, None)
    memory = ScanMemory(1)
    for t, use_map in ((0.0, False), (0.1, True)):
        scan = ScanInput(0, ranges, -math.pi, 2 * math.pi / 360, 0.05, 6.0, t)
        memory.update([scan], np.zeros((1, 2)), np.zeros(1), np.ones(1, bool),
                      np.ones(1, bool), np.full(1, 0.2), (0.0, 0.0, 0.0),
                      grid=grid if use_map else None)
        on_wall = _near(memory.remembered(0), (0.0, 2.0))
        assert on_wall != use_map
