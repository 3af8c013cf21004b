"""
A mixed fleet of carts and discs in a warehouse with aisles, against the same carts as discs.

The controller in the loop as in test_scenario_worlds.py (no DDS); the simulator judges
contact on the true polygons at the robots' headings.
"""

import dataclasses

import numpy as np
from orca_nav.sim.scenarios import CONTACT_TOLERANCE, load_scenario
import pytest

from test_scenario_worlds import run_world  # noqa: I100 -- test/ is on sys.path


def circumscribed(scenario):
    """Return the scenario with each cart given the disc that holds its footprint."""
    robots = [r if not r.footprint else dataclasses.replace(
        r, footprint=None, radius=float(np.hypot(*np.array(r.footprint).T).max()))
        for r in scenario.robots]
    return dataclasses.replace(scenario, robots=robots)


def arrival_times(run, scenario):
    """(N,) [s] when each robot first stood within the goal tolerance (inf: never)."""
    near = np.hypot(*(run.poses[:, :, :2] - scenario.goals[None]).transpose(2, 0, 1)) <= 0.1
    period = run.time / max(len(run.poses) - 1, 1)
    return np.where(near.any(axis=0), near.argmax(axis=0) * period, np.inf)


@pytest.mark.slow
def test_carts_and_discs_cross_a_warehouse_sooner_with_the_carts_true_shapes():
    scenario = load_scenario('cart_warehouse')
    carts = np.array([bool(r.footprint) for r in scenario.robots])
    assert carts.sum() == 4 and (~carts).sum() == 4
    run = run_world(scenario, 'holonomic')
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE
    # The same fleet with each cart as the disc that holds it (1.1 m across): two of those
    # cannot pass in a 1.8 m aisle, so one of each pair backs out and goes round.
    discs = circumscribed(scenario)
    slow = run_world(discs, 'holonomic')
    assert slow.min_gap > -CONTACT_TOLERANCE
    shaped = arrival_times(run, scenario)
    as_discs = arrival_times(slow, discs)
    assert shaped.max() < 0.85 * as_discs.max(), (shaped, as_discs)
