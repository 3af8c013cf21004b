"""benchmarks/bench_crowd.py (the CrowdNav protocol): collision rule, seeding, a few episodes."""

import math

from helpers import load_benchmark
import numpy as np
import pytest

bc = load_benchmark('bench_crowd')
RADII = bc.HUMAN_RADIUS + bc.ROBOT_RADIUS


def gap(rel_pos, rel_vel, dt=0.25):
    """Return the closest gap of one human relative to the robot over one step."""
    return float(bc.crossing_gaps(np.array([rel_pos], float), np.array([rel_vel], float), dt,
                                  RADII)[0])


def test_a_human_crossing_the_robot_within_a_step_collides():
    # From 1 m left to 1 m right in one 0.25 s step: 0.4 m gap at both ends, through the robot.
    assert gap((-1.0, 0.0), (8.0, 0.0)) == pytest.approx(-RADII)
    assert math.hypot(-1.0, 0.0) - RADII > 0 and math.hypot(1.0, 0.0) - RADII > 0


def test_a_human_passing_at_one_centimetre_does_not_collide():
    assert gap((-1.0, RADII + 0.01), (8.0, 0.0)) == pytest.approx(0.01)
    assert gap((-1.0, RADII + 0.01), (8.0, 0.0)) > 0.0


def test_the_closest_point_may_be_an_end_of_the_step():
    assert gap((1.0, 0.0), (1.0, 0.0)) == pytest.approx(1.0 - RADII)   # moving away
    assert gap((1.0, 0.0), (-1.0, 0.0)) == pytest.approx(0.75 - RADII)  # stops short
    assert gap((0.5, 0.0), (0.0, 0.0)) == pytest.approx(0.5 - RADII)   # standing still
    assert gap((0.5, 0.0), (0.0, 0.0)) < 0.0


def test_same_case_same_start_and_crowdnav_seed():
    a, b = bc.generate_case(3, 5, 'circle'), bc.generate_case(3, 5, 'circle')
    np.testing.assert_array_equal(a.human_start, b.human_start)
    np.testing.assert_array_equal(a.human_goal, b.human_goal)
    assert not np.array_equal(a.human_start, bc.generate_case(4, 5, 'circle').human_start)
    # CrowdNav's test phase: np.random.seed(1000 + case), then angle, x noise, y noise.
    rng = np.random.RandomState(1000 + 3)
    angle, nx, ny = rng.random_sample(3)
    first = (4.0 * math.cos(2 * math.pi * angle) + nx - 0.5,
             4.0 * math.sin(2 * math.pi * angle) + ny - 0.5)
    np.testing.assert_allclose(a.human_start[0], first)  # its first draw was free
    np.testing.assert_array_equal(a.human_goal, -a.human_start)


@pytest.mark.parametrize('scenario', ['circle', 'square'])
def test_cases_keep_crowdnavs_separation(scenario):
    for case in range(20):
        c = bc.generate_case(case, 10, scenario)
        starts = np.vstack([c.robot_start, c.human_start])
        goals = np.vstack([c.robot_goal, c.human_goal])
        d = np.hypot(*(starts[:, None] - starts[None]).transpose(2, 0, 1))
        assert (d[np.triu_indices(11, 1)] >= 0.8).all()
        d = np.hypot(*(goals[:, None] - goals[None]).transpose(2, 0, 1))
        if scenario == 'square':
            assert (d[np.triu_indices(11, 1)] >= 0.8).all()
            assert (np.sign(c.human_start[:, 0]) == -np.sign(c.human_goal[:, 0])).all()


def test_a_few_rvo2_cases_run_and_repeat():
    config = bc.CrowdConfig(robot='rvo2', cases=6)
    episodes = []
    summary = bc.run(config, episodes)
    assert summary['cases'] == 6
    assert summary['success_rate'] + summary['collision_rate'] + summary['timeout_rate'] == \
        pytest.approx(1.0)
    for e in episodes:
        assert e['outcome'] in ('success', 'collision', 'timeout')
        assert e['time'] == pytest.approx(e['steps'] * config.period)
        assert (e['outcome'] == 'collision') == (e['min_gap'] < 0.0)
    again = bc.run_episode(episodes[2]['case'], config)
    assert again['outcome'] == episodes[2]['outcome'] and again['time'] == episodes[2]['time']


def test_one_orca_nav_case_runs():
    e = bc.run_episode(1, bc.CrowdConfig(robot='orca_nav'))
    assert e['outcome'] in ('success', 'collision', 'timeout')
    assert 0 < e['steps'] <= 97


def test_param_overrides_parse_as_ros_does():
    assert bc.parse_param('time_horizon:=3.0') == ('time_horizon', 3.0)
    assert bc.parse_param('latency_compensation:=false') == ('latency_compensation', False)
    with pytest.raises(ValueError):
        bc.parse_param('time_horizon=3.0')
