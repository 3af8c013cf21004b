"""
Localisation poses: the message conversion and the controller's use of them (arrays, no DDS).

A localisation pose (AMCL's amcl_pose) corrects a robot's odometry frame: the controller
places the robot at the pose moved on by the odometry's motion since the pose's stamp, and
grows its radius by min(covariance_scale x sigma, max_inflation).
"""

import math

from builtin_interfaces.msg import Time
import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs
from orca_nav.control import parameters as P
from orca_nav.control.config import resolve
from orca_nav.control.localisation import correction
from orca_nav.core.geometry import compose_poses
from orca_nav.ros import messages
import pytest

PERIOD = 0.1


def test_conversion_reads_pose_sigma_and_stamp():
    """Position, yaw, the larger position standard deviation and the stamp in seconds."""
    msg = messages.make_localisation(1.5, -2.0, 0.7, frame_id='map',
                                     stamp=Time(sec=12, nanosec=500_000_000))
    msg.pose.covariance[0] = 0.04  # sigma_x 0.2
    msg.pose.covariance[7] = 0.09  # sigma_y 0.3
    x, y, yaw, sigma, stamp = messages.localisation_from_pose(msg, 'map')
    assert (x, y) == (1.5, -2.0)
    assert yaw == pytest.approx(0.7)
    assert sigma == pytest.approx(0.3)
    assert stamp == pytest.approx(12.5)
    # A leading '/' is tolerated; a quaternion of another length is normalised.
    msg.header.frame_id = '/map'
    msg.pose.pose.orientation.z *= 3.0
    msg.pose.pose.orientation.w *= 3.0
    assert messages.localisation_from_pose(msg, 'map')[2] == pytest.approx(0.7)


@pytest.mark.parametrize('field, value, reason', [
    ('frame', 'odom', 'localisation frame'),
    ('x', math.nan, 'localisation position'),
    ('y', math.inf, 'localisation position'),
    ('quaternion', (0.0, 0.0, 0.0, 0.0), 'localisation orientation: zero quaternion'),
    ('quaternion', (0.0, 0.0, math.nan, 1.0), 'localisation orientation'),
    ('var_x', -0.01, 'localisation covariance: negative'),
    ('var_y', math.nan, 'localisation covariance'),
])
def test_conversion_refuses_bad_messages(field, value, reason):
    """Wrong frame, NaN, zero quaternion, negative or NaN variance: ValueError naming it."""
    msg = messages.make_localisation(1.0, 2.0, 0.0, sigma=0.1)
    if field == 'frame':
        msg.header.frame_id = value
    elif field in ('x', 'y'):
        setattr(msg.pose.pose.position, field, value)
    elif field == 'quaternion':
        o = msg.pose.pose.orientation
        o.x, o.y, o.z, o.w = value
    else:
        msg.pose.covariance[0 if field == 'var_x' else 7] = value
    with pytest.raises(ValueError, match=reason):
        messages.localisation_from_pose(msg, 'map')


def test_correction_is_localisation_after_inverse_odometry():
    """Compose correction and odometry pose: the localisation pose (any yaw)."""
    rng = np.random.default_rng(3)
    loc = rng.uniform(-5, 5, (20, 3))
    odom = rng.uniform(-5, 5, (20, 3))
    frame = correction(loc, odom)
    xy, yaw = compose_poses(frame, odom[:, :2], odom[:, 2])
    assert np.allclose(xy, loc[:, :2])
    assert np.allclose(np.angle(np.exp(1j * (yaw - loc[:, 2]))), 0.0)


def test_drifting_odometry_is_placed_by_the_localisation_pose():
    """
    Place a robot with drifting odometry at its localisation pose, moved on by odometry.

    The robot stands; its odometry slides away (0.2 m/s, turning 0.05 rad/s); the pose arrives
    0.2 s late, every 0.5 s. Without localisation it would be where its odometry says.
    """
    cfg = FleetConfig.uniform(['r1'], pose_timeout=1.0)
    ctrl = FleetController(cfg)
    plain = FleetController(cfg)
    inputs = FleetInputs.empty(1)
    odometry_only = FleetInputs.empty(1)
    truth = np.array([1.0, 2.0, 0.5])

    def odom(t):  # slides along its x and turns: pure drift, the robot stands still
        return np.array([0.2 * t, 0.01 * t, 0.05 * t])

    errors, plain_errors = [], []
    for k in range(1, 101):
        t = k * PERIOD
        o = odom(t)
        inputs.set_odometry(0, x=o[0], y=o[1], yaw=o[2], time=t)
        odometry_only.set_odometry(0, x=o[0], y=o[1], yaw=o[2], time=t)
        if k % 5 == 0 and t > 0.2:
            inputs.set_localisation(0, x=truth[0], y=truth[1], yaw=truth[2], sigma=0.05,
                                    time=t - 0.2)
        result = ctrl.step(inputs, t)
        plain_errors.append(np.hypot(*(plain.step(odometry_only, t).positions[0] - truth[:2])))
        errors.append(np.hypot(*(result.positions[0] - truth[:2])))
        if np.isfinite(inputs.loc_time[0]):
            # Expected: the pose moved on by the odometry motion since its stamp.
            stamp = inputs.loc_time[0]
            frame = correction(truth[None], odom(stamp)[None])
            xy, _ = compose_poses(frame, o[None, :2], o[None, 2])
            assert np.allclose(result.positions[0], xy[0], atol=1e-9)
    # Between poses the error is the drift since the last stamp (0.2 to 0.7 s of 0.2 m/s).
    assert max(errors[10:]) < 0.2 * 0.7 + 0.01
    assert plain_errors[-1] > 2.0  # odometry alone: 10 s of drift
    print(f'placement error: localised max {max(errors[10:]):.3f} m, odometry alone '
          f'{plain_errors[-1]:.3f} m after 10 s')
    assert not ctrl.localisation.stale(0)


def test_stale_pose_keeps_the_last_correction_and_warns_once():
    """No pose for longer than pose_timeout: odometry + the last correction, one warning."""
    cfg = FleetConfig.uniform(['r1'], pose_timeout=0.5)
    ctrl = FleetController(cfg)
    inputs = FleetInputs.empty(1)
    inputs.set_odometry(0, x=0.0, y=0.0, yaw=0.0, time=0.1)
    inputs.set_localisation(0, x=3.0, y=4.0, yaw=0.0, sigma=0.1, time=0.1)
    ctrl.step(inputs, 0.1)
    warned = []
    for k in range(2, 20):
        t = k * PERIOD
        inputs.set_odometry(0, x=0.1 * t, y=0.0, yaw=0.0, time=t)
        result = ctrl.step(inputs, t)
        warned += [text for _, text in result.warnings if text.startswith('localisation')]
    assert result.positions[0] == pytest.approx([3.0 + 0.1 * t, 4.0])
    assert len(warned) == 1 and 'pose_timeout' in warned[0], warned
    # A pose that is already older than pose_timeout when it arrives is not used.
    inputs.set_localisation(0, x=-5.0, y=0.0, yaw=0.0, sigma=0.1, time=t - 1.0)
    result = ctrl.step(inputs, t + PERIOD)
    assert result.positions[0, 0] > 0.0
    assert any('not used' in text for _, text in result.warnings)
    assert ctrl.localisation.refused_late[0] == 1


def passing_distance(sigma, **knobs):
    """
    Robot a crosses from (-2, 0) to (2, 0) past b, localised at (0, 0.05) with ``sigma``.

    b is observed (does not move): a avoids it fully. Returns the smallest centre distance.
    """
    # An ideal loop, and b looked for as far ahead as a robot (the slack measured here).
    knobs = {'safety_margin': 0.0, 'latency_compensation': False, 'person_time_horizon': 2.0,
             **knobs}
    cfg = FleetConfig.uniform(['a', 'b'], n_controlled=1, radius=0.2, max_speed=0.5, **knobs)
    ctrl = FleetController(cfg)
    ctrl.set_goal(0, 2.0, 0.0)
    inputs = FleetInputs.empty(2)
    a = np.array([-2.0, 0.0])
    b = np.array([0.0, 0.05])
    closest = np.inf
    for k in range(1, 160):
        t = k * PERIOD
        inputs.set_odometry(0, x=a[0], y=a[1], yaw=0.0, time=t)
        inputs.set_odometry(1, x=0.0, y=0.0, yaw=0.0, time=t)  # odom origin: wrong, see below
        inputs.set_localisation(1, x=b[0], y=b[1], yaw=0.0, sigma=sigma, time=t)
        cmd = ctrl.step(inputs, t).commands[0]
        a = a + PERIOD * cmd[:2]
        closest = min(closest, float(np.hypot(*(a - b))))
    assert a[0] > 1.8, 'a should have passed b'
    return closest


def test_larger_covariance_gives_more_room_capped_by_max_inflation():
    """
    Give a localised robot more room the larger its covariance, up to max_inflation.

    The others keep their distance from its localisation pose (not its odometry's).
    """
    small = passing_distance(0.01)
    large = passing_distance(0.15)
    capped = passing_distance(1.0)
    huge = passing_distance(10.0)
    # Radii 0.2 + 0.2: 0.4; ORCA keeps the planning discs apart up to its tolerances.
    assert small > 0.4
    assert large > small + 0.2  # 2 x 0.15 = 0.3 m more room, give or take ORCA's slack
    assert capped > large + 0.1
    assert capped == pytest.approx(huge, abs=1e-9)  # both at max_inflation 0.5
    no_scale = passing_distance(1.0, covariance_scale=0.0)
    assert no_scale == pytest.approx(small, abs=0.03)
    print(f'passing distance: sigma 0.01 {small:.3f} m, 0.15 {large:.3f} m, 1.0 {capped:.3f} m')


def test_parameters_validated():
    """The localisation parameters: ranges and topic names; bad values refused with reasons."""
    values = P.defaults(['r1', 'r2'])
    assert P.validate(values) is None
    settings = resolve(dict(values, covariance_scale=3.0, max_inflation=0.25, pose_timeout=2.0))
    fleet = settings.fleet
    assert (fleet.covariance_scale, fleet.max_inflation, fleet.pose_timeout) == (3.0, 0.25, 2.0)
    for name, bad, reason in [('covariance_scale', -1.0, 'between'),
                              ('max_inflation', 11.0, 'between'),
                              ('pose_timeout', 0.0, 'between'),
                              ('pose_timeout', math.nan, 'finite'),
                              ('pose_topic', '/amcl_pose', 'relative'),
                              ('r2.pose_topic', 'amcl pose', 'relative'),
                              ('pose_topic', 3, 'string')]:
        error = P.validate(dict(values, **{name: bad}))
        assert error and name in error and reason in error, (name, error)
    topics = P.robot_values(dict(values, pose_topic='amcl_pose', **{'r2.pose_topic': 'loc'}),
                            ['r1', 'r2'], 'pose_topic')
    assert topics == ['amcl_pose', 'loc']


def test_robots_without_a_pose_source_ignore_poses():
    """pose_source False (no pose_topic): poses change nothing; the node sets it per robot."""
    cfg = FleetConfig.uniform(['r1', 'r2'], pose_source=np.array([False, True]))
    ctrl = FleetController(cfg)
    inputs = FleetInputs.empty(2)
    for i in range(2):
        inputs.set_odometry(i, x=1.0, y=0.0, yaw=0.0, time=0.1)
        inputs.set_localisation(i, x=5.0, y=5.0, yaw=0.0, sigma=0.1, time=0.1)
    positions = ctrl.step(inputs, 0.1).positions
    assert positions.tolist() == [[1.0, 0.0], [5.0, 5.0]]
    values = P.defaults(['r1', 'r2'])
    assert not resolve(values).fleet.pose_source.any()
    values['r2.pose_topic'] = 'amcl_pose'
    assert resolve(values).fleet.pose_source.tolist() == [False, True]
