"""benchmarks/bench_walkers.py: the variants are the shipped scenario, retimed; a run's record."""

from helpers import load_benchmark
import numpy as np
from orca_nav.sim.scenarios import load_scenario, walker_pose

bw = load_benchmark('bench_walkers')


def test_a_variant_is_the_shipped_scenario_with_the_walkers_retimed_and_moved():
    """The robots as shipped, in the drive asked for; the walkers set off and walk as given."""
    shipped = load_scenario(bw.SCENARIO)
    v = bw.variant('differential', 2.0, 1.0, -0.3)
    robots = [r for r in v.robots if not r.walker]
    assert [r.start for r in robots] == [r.start for r in shipped.robots if not r.walker]
    assert all(r.drive == 'differential' for r in robots)
    first, second = (r for r in v.robots if r.walker)
    assert (first.start_time, second.start_time) == (2.0, 3.0)
    assert second.waypoints == ((-6.0, -0.3), (6.0, -0.3))
    # The second walker is at the centre's x 6 s after it sets off (1 m/s), on its line.
    assert np.allclose(walker_pose(second, 9.0)[:2], [0.0, -0.3])


def test_a_run_reports_its_gaps_and_arrival(monkeypatch):
    """Cut short at 2 s (nobody has met yet): finite gaps, nobody arrived."""
    monkeypatch.setattr(bw, 'TIMEOUT', 2.0)
    record = bw.run(bw.variant('holonomic', 3.0, 1.0, 0.4), 'holonomic')
    assert record['arrived'] is False and record['time'] >= 2.0
    assert record['walker_gap'] > 0.0 and record['robot_gap'] > 0.0
