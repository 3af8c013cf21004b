"""The people tracker of the controller: scans in, moving objects out (no DDS)."""

import math

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs
from orca_nav.control.navigation import NavigationConfig
from orca_nav.control.people import PeopleConfig, PeopleTracker
from orca_nav.control.scan_memory import ScanInput
from orca_nav.core.perception.raycast import cast_rays

from test_navigation import InlineExecutor  # noqa: I100 -- test/ is on sys.path

BEAMS = 720
ANGLES = -np.pi + 2.0 * np.pi / BEAMS * np.arange(BEAMS)


def _scan(robot, pose, discs, radii, t):
    """Return a noiseless 720-beam scan from ``pose`` of discs (K, 2), radii (K,), no walls."""
    ranges = cast_rays(pose[:2], pose[2] + ANGLES, 8.0, np.zeros((0, 2, 2)),
                       np.asarray(discs, float).reshape(-1, 2), np.asarray(radii, float))
    return ScanInput(robot, ranges, -np.pi, 2.0 * np.pi / BEAMS, 0.05, 8.0, t)


def _observe(tracker, robots, radius, person, person_radius, t):
    """Every robot scans the robots and the person at time t."""
    scans = []
    for i, pose in enumerate(robots):
        others = [p[:2] for k, p in enumerate(robots) if k != i]
        scans.append(_scan(i, pose, others + [person], [radius] * len(others)
                           + [person_radius], t))
    poses = np.repeat(np.asarray(robots, float)[None], len(scans), axis=0)
    tracker.observe(scans, poses, np.ones(len(robots), bool), np.full(len(robots), radius),
                    np.zeros(3))


def test_a_walker_becomes_a_moving_object_with_its_velocity_and_robots_do_not():
    tracker = PeopleTracker(PeopleConfig())
    robots = [(0.0, 0.0, 0.0), (4.0, 0.0, np.pi)]
    for k in range(30):
        t = 0.1 * k
        _observe(tracker, robots, 0.2, (2.0, -1.5 + 0.5 * t), 0.25, t)
    moving = tracker.moving(2.9)
    assert len(moving) == 1  # the walker; the two robots explain their own returns
    assert np.allclose(moving.position[0], (2.0, -1.5 + 0.5 * 2.9), atol=0.05)
    assert np.allclose(moving.velocity[0], (0.0, 0.5), atol=0.1)
    assert abs(moving.radius[0] - 0.25) < 0.05


def test_a_person_standing_still_is_no_moving_object():
    tracker = PeopleTracker(PeopleConfig())
    for k in range(30):
        _observe(tracker, [(0.0, 0.0, 0.0)], 0.2, (2.0, 0.5), 0.25, 0.1 * k)
    assert len(tracker.moving(2.9)) == 0


def test_a_walker_who_stops_stays_an_agent_and_a_stander_never_becomes_one():
    """A walker stops 2 m from the robot beside a person standing all along."""
    tracker = PeopleTracker(PeopleConfig())
    stander = np.array([2.0, 0.0])
    for k in range(60):
        t = 0.1 * k
        walker = np.array([2.0, -4.0 + min(t, 3.0)])  # 1 m/s for 3 s, then stands
        scan = _scan(0, (0.0, 0.0, 0.0), [walker, stander], [0.3, 0.3], t)
        tracker.observe([scan], np.zeros((1, 1, 3)), np.ones(1, bool), np.full(1, 0.2),
                        np.zeros(3))
        moving = tracker.moving(t)
        if t >= 0.5:
            # The walker, and only the walker, is an agent, moving or stopped.
            assert len(moving) == 1, t
            assert np.linalg.norm(moving.position[0] - walker) <= 0.1, t
    assert np.linalg.norm(moving.velocity[0]) <= 0.1


def test_a_walker_partly_hidden_beside_a_robot_keeps_its_size():
    """Returns within a robot's margin are that robot's: the walker's arc shrinks, not it."""
    tracker = PeopleTracker(PeopleConfig())
    robots = [(0.0, 0.0, 0.0), (2.0, 1.2, -np.pi / 2)]
    radii = []
    for k in range(40):
        t = 0.1 * k
        # The walker comes from the left and stops its last metres beside robot 1.
        person = (2.0 - 2.0 + 0.5 * min(t, 3.0), 0.6)
        _observe(tracker, robots, 0.2, person, 0.25, t)
        moving = tracker.moving(t)
        if len(moving):
            radii.append(moving.radius[0])
    assert len(radii) > 10
    # Largest so far: never below what it was seen to be, whatever the view.
    assert np.all(np.diff(radii) >= 0.0) and radii[-1] > 0.2


def test_a_robot_whose_odometry_pauses_spawns_no_ghost_track():
    """Robot b's odometry stops for 0.4 s while it drives on: a's scans of b make no track."""
    cfg = FleetConfig.uniform(['a', 'b'], scan_enabled=True, odom_timeout=0.5,
                              people=PeopleConfig())
    ctrl = FleetController(cfg, NavigationConfig(), InlineExecutor())
    inputs = FleetInputs.empty(2)
    seen = 0
    for k in range(40):
        t = 0.1 * k
        b = (2.0, -1.0 + 0.5 * t, np.pi / 2)  # b drives along y at 0.5 m/s all along
        inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=t)
        if not 1.0 <= t < 1.45:
            inputs.set_odometry(1, x=b[0], y=b[1], yaw=b[2], time=t, v_forward=0.5)
        inputs.scans = [_scan(0, (0.0, 0.0, 0.0), [b[:2]], [0.2], t)]
        seen = max(seen, len(ctrl.step(inputs, t).moving))
    assert seen == 0


def test_two_walkers_side_by_side_are_two_moving_objects_not_a_wall():
    """Shoulder to shoulder (one cluster 1.25 m wide), seen by a 360-beam lidar at 4 Hz."""
    cfg = FleetConfig.uniform(['a'], scan_enabled=True, period=0.25, people=PeopleConfig())
    ctrl = FleetController(cfg, NavigationConfig(), InlineExecutor())
    inputs = FleetInputs.empty(1)
    beams = -np.pi + 2.0 * np.pi / 360 * np.arange(360)
    for k in range(16):
        t = 0.25 * k
        walkers = np.array([[-0.325, 1.5 + t], [0.325, 1.5 + t]])  # 1 m/s, away
        inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=t)
        ranges = cast_rays(np.zeros(2), beams, 8.0, np.zeros((0, 2, 2)), walkers,
                           np.full(2, 0.3))
        inputs.scans = [ScanInput(0, ranges, -np.pi, 2.0 * np.pi / 360, 0.05, 8.0, t)]
        result = ctrl.step(inputs, t)
        if t < 0.5:
            continue
        moving = result.moving
        assert len(moving) == 2, t
        gaps = np.linalg.norm(moving.position[:, None] - walkers[None], axis=2)
        assert np.all(gaps.min(axis=0) <= 0.15), t
        assert np.allclose(moving.velocity, [0.0, 1.0], atol=0.25), t
        # Their returns are agents, not scan walls (walls seen before they were known to
        # move are left behind them, forgotten after obstacle_timeout).
        segments = ctrl.scan_memory.remembered(0)
        if len(segments):
            ends = np.concatenate([segments[:, 0], segments[:, 1], segments.mean(axis=1)])
            gaps = np.linalg.norm(ends[:, None] - walkers[None], axis=2)
            assert gaps.min() > 0.3 + 0.05, (t, segments)


def _wall_behind_a_passing_robot(wall_age):
    """
    Robot a looks at a 2 m wall 2 m ahead; from 1.5 s robot b drives along it, 0.8 m before it.

    Returns the most moving objects the controller (scans and tracking on, no map) had in one
    tick from 1.5 s on, with scan walls counting as walls after ``wall_age`` [s].
    """
    cfg = FleetConfig.uniform(['a', 'b'], scan_enabled=True, people=PeopleConfig())
    ctrl = FleetController(cfg, NavigationConfig(), InlineExecutor())
    ctrl.avoidance.scan_wall_age = wall_age
    inputs = FleetInputs.empty(2)
    wall = np.array([[[2.0, -1.0], [2.0, 1.0]]])
    seen = 0
    for k in range(50):
        t = 0.1 * k
        b = np.array([1.2, -2.0]) if t < 1.5 else np.array([1.2, -1.2 + 0.8 * (t - 1.5)])
        scans = []
        for i, (pose, other) in enumerate((((0.0, 0.0, 0.0), b), ((*b, np.pi / 2), (0.0, 0.0)))):
            inputs.set_odometry(i, x=pose[0], y=pose[1], yaw=pose[2], time=t,
                                v_forward=0.8 if i == 1 and t >= 1.5 else 0.0)
            ranges = cast_rays(np.array(pose[:2]), pose[2] + ANGLES, 8.0, wall,
                               np.array([other]), np.array([0.2]))
            scans.append(ScanInput(i, ranges, -np.pi, 2.0 * np.pi / BEAMS, 0.05, 8.0, t))
        inputs.scans = scans
        moving = ctrl.step(inputs, t).moving
        if t >= 1.5:
            seen = max(seen, len(moving))
    return seen


def test_a_wall_seen_whole_is_no_walker_where_a_passing_robot_hides_part_of_it():
    """
    Pieces of a wall seen past a robot are the wall the robots saw whole, not people.

    The robot's returns are its own; the wall's pieces on either side of it are narrow and
    move with it. Taken for people (walkers), the robots went round them, or were let through
    where they hid the wall (six robots at an oblique wall: one short of its goal in 90 s).
    """
    assert _wall_behind_a_passing_robot(math.inf) > 0  # what happened before: phantoms
    assert _wall_behind_a_passing_robot(1.0) == 0


def test_tracker_thresholds_are_node_parameters():
    from orca_nav.control.config import resolve
    from orca_nav.control.parameters import defaults, validate
    values = defaults(['r1'])
    values.update(scan_enabled=True, track_people=True, track_confirm_hits=4,
                  track_confirm_time=0.3, track_min_speed=0.2, track_max_diameter=1.0,
                  track_split_depth=0.0, track_gate=0.5, track_timeout=2.0,
                  track_accel_noise=1.0)
    assert validate(values) is None
    assert resolve(values).fleet.people == PeopleConfig(
        track_timeout=2.0, confirm_hits=4, confirm_time=0.3, min_speed=0.2, max_diameter=1.0,
        split_depth=0.0, gate=0.5, accel_noise=1.0)
    values.update(track_split_depth=-0.1)
    assert 'track_split_depth' in validate(values)
