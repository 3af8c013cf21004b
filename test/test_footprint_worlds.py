"""
Rectangular robots in lock-stepped worlds: their footprints against their circumscribed discs.

The controller in the loop as in test_scenario_worlds.py (no DDS); the simulator judges
contact on the true polygons at the robots' headings.
"""

import dataclasses
import re

import numpy as np
from orca_nav.sim.scenarios import CONTACT_TOLERANCE, load_scenario, scenario_path

from test_scenario_worlds import run_world  # noqa: I100 -- test/ is on sys.path


def as_discs(name, tmp_path):
    """Return scenario ``name`` with each footprint replaced by the disc that holds it."""
    text = open(scenario_path(name)).read()
    scenario = load_scenario(name)
    radius = max(float(np.hypot(*np.array(r.footprint).T).max()) for r in scenario.robots)
    path = tmp_path / f'{name}_discs.yaml'
    path.write_text(re.sub(r'^  footprint: .*$', f'  radius: {radius:.3f}', text,
                           flags=re.MULTILINE))
    return load_scenario(str(path))


def crossed(run, scenario):
    """(N,) bool: the robots that ever stood in the other room (x of the other sign)."""
    side = np.sign(scenario.starts[:, 0])
    return (np.sign(run.poses[:, :, 0]) == -side).any(axis=0)


def test_carts_change_rooms_through_a_door_two_decimetres_wider_than_them(tmp_path):
    scenario = load_scenario('cart_door')
    run = run_world(scenario, 'holonomic')
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE
    # The discs that hold the carts (1.1 m across) do not fit the 0.8 m door: no way at all.
    discs = dataclasses.replace(as_discs('cart_door', tmp_path), timeout=run.time)
    run = run_world(discs, 'holonomic')
    assert not crossed(run, discs).any() and not run.arrived.any()


def test_differential_carts_pass_the_door_with_their_footprints_not_as_their_discs(tmp_path):
    # A differential cart cannot crab: it stops before the door on the door's line, turns
    # in place to it, drives through along it and turns again after it, one cart at a time
    # (control/corners.py), with footprint_differential. Contact is judged on the polygons.
    scenario = load_scenario('cart_door')
    run = run_world(scenario, 'differential', footprint_differential=True)
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE
    # As the discs that hold them (1.1 m across) they find no way through the 0.8 m door,
    # and so without footprint_differential (the default): the same discs.
    discs = dataclasses.replace(as_discs('cart_door', tmp_path), timeout=60.0)
    for world in (discs, dataclasses.replace(scenario, timeout=60.0)):
        run = run_world(world, 'differential')
        assert not crossed(run, world).any() and not run.arrived.any()
        assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE


def test_differential_carts_in_a_warehouse_with_their_footprints():
    # Four carts start inside 1.8 m aisles, two per aisle facing each other, while four disc
    # robots cross: with footprint_differential the carts stop and turn at the aisle ends.
    scenario = load_scenario('cart_warehouse')
    run = run_world(scenario, 'differential', footprint_differential=True)
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE
