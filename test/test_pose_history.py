"""Tests for orca_nav.control.pose_history: where each robot was at another moment."""

import numpy as np
from orca_nav.control.pose_history import DEPTH, MAX_EXTRAPOLATION, PoseHistory


def _history():
    """Robot 0 drives +x at 1 m/s sampled every 0.1 s; robot 1 has no sample yet."""
    h = PoseHistory(2)
    for k in range(5):
        t = 0.1 * k
        h.record(np.array([True, False]), np.array([[t, 0.0, 0.0], [9.0, 9.0, 0.0]]),
                 np.array([t, t]), np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    return h


def test_between_samples_the_pose_is_interpolated():
    assert np.allclose(_history().at(0.25)[0], [0.25, 0.0, 0.0])


def test_after_the_newest_sample_the_twist_carries_it_on_for_a_while():
    h = _history()
    assert np.allclose(h.at(0.5)[0], [0.5, 0.0, 0.0])
    assert np.allclose(h.at(5.0)[0], [0.4 + MAX_EXTRAPOLATION, 0.0, 0.0])


def test_before_the_oldest_sample_the_oldest_pose_is_used():
    assert np.allclose(_history().at(-1.0)[0], [0.0, 0.0, 0.0])


def test_a_robot_without_samples_gets_zeros():
    assert np.allclose(_history().at(0.25)[1], 0.0)


def test_yaw_turns_the_short_way_across_pi():
    h = PoseHistory(1)
    h.record(np.array([True]), np.array([[0.0, 0.0, 3.0]]), np.array([0.0]), np.zeros((1, 3)))
    h.record(np.array([True]), np.array([[0.0, 0.0, -3.0]]), np.array([1.0]), np.zeros((1, 3)))
    yaw = h.at(0.5)[0, 2]
    assert abs(abs(yaw) - np.pi) < 1e-9


def test_many_times_at_once_equal_one_time_at_a_time():
    rng = np.random.default_rng(3)
    h = PoseHistory(4)
    t = 0.0
    for _ in range(DEPTH + 5):
        t += rng.uniform(0.02, 0.08)
        h.record(rng.random(4) < 0.7, rng.normal(size=(4, 3)), t + rng.normal(0.0, 0.01, 4),
                 rng.normal(size=(4, 3)))
    times = np.concatenate([rng.uniform(-0.2, t + 1.0, 20), [t - 10.0, t + 10.0]])
    many = h.at(times)
    assert many.shape == (len(times), 4, 3)
    for k, when in enumerate(times):
        assert np.array_equal(many[k], h.at(when))
