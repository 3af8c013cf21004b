"""benchmarks/bench_crowdnavpp.py (the CrowdNav++ protocol): seeding, log cases, intrusion."""

import math

from helpers import load_benchmark
import numpy as np
import pytest

pp = load_benchmark('bench_crowdnavpp')


def test_episode_seeds_follow_two_resets_per_episode():
    # thisSeed 425 + test offset 1000; the counter moves by 2 per episode, modulo 500.
    seeds = [pp.scenario_seed(c) for c in (0, 1, 249, 250, 499)]
    assert seeds == [1425, 1427, 1923, 1425, 1923]
    a, b = pp.World(7, True), pp.World(257, True)
    np.testing.assert_array_equal(a.hp, b.hp)
    np.testing.assert_array_equal(a.hr, b.hr)
    assert not np.array_equal(a.hp, pp.World(8, True).hp)


def test_case_generation_draws_as_the_repository():
    for rand in (False, True):
        w = pp.World(5, rand)
        rng = np.random.RandomState(1425 + 10)
        while True:  # generate_robot_humans: uniform(-6, 6, 4) until 8 m apart
            s = rng.uniform(-6, 6, 4)
            if math.hypot(s[0] - s[2], s[1] - s[3]) >= 8:
                break
        np.testing.assert_array_equal(w.rp, s[:2])
        np.testing.assert_array_equal(w.rgoal, s[2:])
        if rand:  # Agent.__init__ neighbor_dist, then v_pref, radius
            nd, v_pref, radius = rng.uniform(5, 10), rng.uniform(0.5, 1.5), rng.uniform(0.3, 0.5)
            assert (w.hs[0], w.hr[0]) == (v_pref, radius)
            assert 5 <= nd <= 10 and 5 <= w.neighbor_dist <= 10
        else:
            assert (w.hr == 0.3).all() and (w.hs == 1.0).all() and w.neighbor_dist == 10
        # the first human (its first place is free here): on the circle of radius 6 sqrt 2,
        # plus a noise of [0, 2) m per axis, not centred
        angle, nx, ny = rng.random_sample() * 2 * np.pi, rng.uniform(0, 1), rng.uniform(0, 1)
        np.testing.assert_allclose(w.hp[0], (6 * math.sqrt(2) * math.cos(angle) + 2 * nx,
                                             6 * math.sqrt(2) * math.sin(angle) + 2 * ny))
        np.testing.assert_array_equal(w.hg, -w.hp)


# trained_models/ORCA_no_rand/test/test_00000.pt.log (made with randomised humans).
@pytest.mark.parametrize('case', [0, 1, 2, 3, 28, 250])
def test_orca_robot_outcomes_match_the_repository_log(case):
    e = pp.run_episode(case, pp.PPConfig(robot='rvo2', rand=True))
    expected = ('collision' if case in pp.LOG_ORCA_COLLISIONS else
                'timeout' if case in pp.LOG_ORCA_TIMEOUTS else 'success')
    assert e['outcome'] == expected
    if expected == 'timeout':
        assert e['time'] == 49.0 and e['steps'] == 197


def test_the_orca_robot_keeps_episode_0s_simulator():
    radii, dist = pp.robot_view(True)
    w = pp.World(0, True)
    assert len(radii) == 20 and dist == w.neighbor_dist
    assert all(r == 0.3 or r == pytest.approx(h) for r, h in zip(radii, w.hr))
    assert pp.robot_view(False) == ((0.3,) * 20, 10.0)


def lone_human(offset, velocity, goal_offset, visible=True):
    """Return a world with human 0 at robot + offset and the other 19 far away, unseen."""
    w = pp.World(0, False)
    w.hp[:] = [(100.0 + 3 * i, 100.0) for i in range(20)]
    w.hg[:] = w.hp + (0.0, 50.0)
    w.hv[:] = 0.0
    w.hp[0] = w.rp + offset
    w.hv[0] = velocity
    w.hg[0] = w.rp + goal_offset
    w.visible = w.see()
    w.visible[0] &= visible
    return w


def test_intrusion_is_the_true_future_within_0_6_m():
    # Walking at 1 m/s straight at the robot from 1.5 m: 1.25, 1.0, 0.75, 0.5, 0.25 m.
    w = lone_human((1.5, 0.0), (-1.0, 0.0), (-10.0, 0.0))
    assert w.intrusion(w.rp) == pytest.approx(0.25, abs=1e-5)
    # From 2.3 m it is at 1.05 m after 1.25 s: no intrusion.
    assert lone_human((2.3, 0.0), (-1.0, 0.0), (-10.0, 0.0)).intrusion(w.rp) is None
    # Walking away, or unseen: no intrusion.
    assert lone_human((0.7, 0.0), (1.0, 0.0), (10.0, 0.0)).intrusion(w.rp) is None
    unseen = lone_human((1.5, 0.0), (-1.0, 0.0), (-10.0, 0.0), visible=False)
    assert unseen.intrusion(unseen.rp) is None
    # Standing 0.5 m away at its goal: inside already, and stays.
    assert lone_human((0.5, 0.0), (0.0, 0.0), (0.5, 0.0)).intrusion(w.rp) == \
        pytest.approx(0.5, abs=1e-5)


def test_protocol_instants_at_other_periods():
    assert [k for k in range(12) if pp.is_instant(k, 0.1)] == [0, 3, 5, 8, 10]
    assert all(pp.is_instant(k, 0.25) for k in range(10))
    assert [k for k in range(6) if pp.is_instant(k, 0.125)] == [0, 2, 4]


def test_jobs_do_not_change_the_records():
    config = pp.PPConfig(robot='rvo2', rand=True, cases=3, first_case=4)
    one, two = [], []
    pp.run(config, one)
    config.jobs = 2
    pp.run(config, two)
    assert one == two and [e['case'] for e in one] == [4, 5, 6]


# Public cases where the robot starts just ahead of a walker going its way at its speed (a
# walker behind it that it runs ahead of): of the 250 distinct scenarios those whose intrusion
# the lean changed most (docs/crowds.md). Without the lean the keep-out asks to step aside,
# and the half-plane toward the walker, taken about the velocity, allows only running on.
HERDED_CASES = (39, 43, 111, 139, 141)


@pytest.mark.parametrize('case', HERDED_CASES)
def test_half_planes_leaned_to_the_keep_out_let_a_walker_behind_pass(case, monkeypatch):
    """With KEEPOUT_LINE_LEAN the robot leaves the walker's next second; without it, not."""
    from orca_nav.control import avoidance
    config = pp.PPConfig(period=0.1)
    monkeypatch.setattr(avoidance, 'KEEPOUT_LINE_LEAN', 0.0)
    without = pp.run_episode(case, config)
    monkeypatch.undo()
    leaned = pp.run_episode(case, config)
    assert without['intrusion_ratio'] >= 25.0, f'no test: {without["intrusion_ratio"]:.1f} %'
    assert leaned['outcome'] == 'success'
    assert leaned['intrusion_ratio'] <= 5.0, (leaned['intrusion_ratio'],
                                              without['intrusion_ratio'])


# Public cases where the differential robot was hit before its way out's turns ended on world
# headings (e8b3c1e; traced in docs/crowds.md): it circled, backing on 0.4 m circles, or
# switched drives every step while a walker closed. Case 78 circled there too; since people
# who stand are looked for only time_horizon ahead it is hit at 23.5 s, 0.5 m outside the
# 12 m square, between a walker behind it and a human who appears (a new one, in the place
# of one that arrived) 0.5 m ahead and walks into it: a contact this test is not about.
CIRCLED_CASES = (54, 197, 207)


@pytest.mark.parametrize('case', CIRCLED_CASES)
def test_a_differential_robot_completes_its_turns_out_of_a_walkers_way(case):
    """The node's defaults, differential: it arrives, untouched, within 40 s (e8b3c1e: hit)."""
    record = pp.run_episode(case, pp.PPConfig(period=0.1, drive='differential'))
    assert record['outcome'] == 'success', record
    assert record['time'] <= 40.0, record['time']


# Lidar, randomised humans: cases where the differential robot was hit while it swung on the
# spot about a grid heading, a spin past it and back every step (cfcdc4b: each step's command
# turned a whole step where its drive's turn ended within the step; docs/crowds.md). Case 27
# swung there too; since the way round standing people is planned from the robot's centre it
# meets a walker who turns into it at a goal change (0.35 m ahead, then 1 m/s toward it while
# it backs at 0.6 m/s): a contact this test is not about.
SWUNG_CASES = (59, 67, 151)


@pytest.mark.parametrize('case', SWUNG_CASES)
def test_a_differential_robot_does_not_swing_about_the_end_of_its_turn(case):
    """The node's defaults, differential, lidar and tracking, --rand: it arrives, untouched."""
    config = pp.PPConfig(period=0.1, drive='differential', rand=True, perception='lidar')
    record = pp.run_episode(case, config)
    assert record['outcome'] == 'success', record
