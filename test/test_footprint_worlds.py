"""
Rectangular robots in lock-stepped worlds: their footprints against their circumscribed discs.

The controller in the loop as in test_scenario_worlds.py (no DDS); the simulator judges
contact on the true polygons at the robots' headings.
"""

import dataclasses
import json
import re

import numpy as np
from orca_nav.control import corners
from orca_nav.control.config import FleetConfig, node_values
from orca_nav.control.map_model import MapModel
from orca_nav.core.geometry import placed_polygon, polygon_segments_gap
from orca_nav.sim.scenarios import CONTACT_TOLERANCE, load_scenario, scenario_path
import pytest

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


CART = '[[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]'   # 0.9 x 0.6 m


def _jamb_gap(cmd, wall, pose, dt):
    """Gap [m] of a cart at ``pose`` to ``wall`` once it has turned at cmd's rate for dt."""
    turned = [pose[0], pose[1], pose[2] + cmd[2] * dt]
    polygon = placed_polygon(np.array(json.loads(CART)), turned)
    return float(polygon_segments_gap(polygon, wall).min())


def test_a_holonomic_cart_does_not_turn_a_corner_into_a_jamb_beside_it():
    """Its turn is guarded over two periods: what a late command or odometry makes of it."""
    cfg = FleetConfig.from_values(node_values(['cart'], footprint=CART))
    # A jamb 2.5 cm beyond the cart's front-left corner, along y; the cart at yaw 0.
    wall = np.array([[[0.475, -1.0], [0.475, 1.0]]])
    model = MapModel(None, wall)
    centre, yaw, present = np.zeros((1, 2)), np.zeros(1), np.ones(1, bool)
    now = _jamb_gap([0, 0, 0], wall, [0, 0, 0], 0.0)
    assert now == pytest.approx(0.025)
    # Turning either way swings a front corner toward the jamb: more than 0.5 cm in two
    # periods at 0.5 rad/s. The turn is cut so that the polygon, padded, comes no nearer the
    # jamb than WALL_GAP or than it is now, in one period and in two; the velocity along the
    # jamb is ORCA's, untouched.
    floor = min(now, corners.WALL_GAP + cfg.footprint_padding)
    for w in (0.5, -0.5):
        asked = np.array([[0.0, 0.2, w]])
        cmd = corners.keep_clear(cfg, asked, centre, yaw, model, present)[0]
        assert cmd[1] == 0.2 and abs(cmd[2]) < abs(w) and np.sign(cmd[2]) in (0, np.sign(w))
        for k in (1, 2):
            pose = [0.0, 0.2 * k * cfg.period, 0.0]
            assert _jamb_gap(cmd, wall, pose, k * cfg.period) >= floor - 1e-6
        assert _jamb_gap(asked[0], wall, [0, 0, 0], 2 * cfg.period) < floor - 0.005
    # Away from the jamb (turned 0.3 rad, turning back toward 0 opens the gap): untouched.
    asked = np.array([[0.0, 0.0, -0.5]])
    assert (corners.keep_clear(cfg, asked, centre, np.array([0.3]), model, present)
            == asked).all()
    # A disc robot beside the same jamb: no footprint, nothing to guard.
    discs = FleetConfig.from_values(node_values(['disc']))
    assert not corners.turning_shapes(discs)


def test_holonomic_carts_pass_the_door_with_their_commands_a_period_late():
    """cart_door with each command in effect one period after it was sent (a network)."""
    run = run_world(load_scenario('cart_door'), 'holonomic', lag=1)
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    # Without the turn's guard the carts' corners came within 1.2 cm of a jamb (2.3 cm with it,
    # the guard's WALL_GAP of 2 cm kept).
    assert run.min_gap > -CONTACT_TOLERANCE
    assert run.min_wall >= corners.WALL_GAP - 1e-3


@pytest.mark.parametrize('draw', [0, 4])
def test_holonomic_carts_turn_along_the_door_before_they_reach_it(draw):
    """
    cart_door with the starts moved (up to 5 cm, 0.1 rad): no cart is held at the door.

    A cart's route turns onto the door's line just before the wall; following its diagonal way
    up to there (turned right by pass_on_right, too), a cart reached the jambs turned 28
    degrees from the door and could neither turn nor enter until the jam rule backed it off:
    these two draws took 89 and 97 s. Turning along the door on the way to it (its route's
    way at the door ahead, ``Following.narrow_way``), without the bias there, they take 49 s.
    """
    scenario = load_scenario('cart_door')
    rng = np.random.default_rng(draw)
    robots = [dataclasses.replace(r, start=tuple(np.array(r.start) + np.r_[
        rng.uniform(-0.05, 0.05, 2), rng.uniform(-0.1, 0.1)])) for r in scenario.robots]
    moved = dataclasses.replace(scenario, robots=robots, timeout=60.0)
    run = run_world(moved, 'holonomic', latency_compensation=True)
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE
    assert run.min_wall >= corners.WALL_GAP - 1e-3


def test_holonomic_carts_meeting_head_on_in_an_aisle_step_aside_and_pass(tmp_path):
    """
    cart_aisle: two 0.9 x 0.6 m carts meet head-on in a 1.5 m aisle (side by side: 1.2 m).

    Their routes follow the aisle's middle. Queued as their discs, one waited for the other
    (46 s, as long as their circumscribed discs, which cannot pass); not queued, ORCA between
    polygons only slowed them (the flat face of the pair's difference, docs/core.md) and one
    backed out (52 s). Stepping aside before they meet (control/lanes.py), they pass side by
    side in 27 s.
    """
    scenario = load_scenario('cart_aisle')
    run = run_world(scenario, 'holonomic')
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE
    # Neither backs out: along its way to its goal no cart ever falls back 0.2 m.
    way = np.sign(scenario.goals[:, 0] - scenario.starts[:, 0])
    progress = run.poses[:, :, 0] * way
    assert (np.maximum.accumulate(progress, axis=0) - progress).max() < 0.2
    assert run.time < 36.0
    discs = run_world(as_discs('cart_aisle', tmp_path), 'holonomic')
    assert discs.time > run.time + 10.0


def test_carts_wait_for_their_routes_while_a_busy_machine_prepares_the_map():
    """
    cart_aisle with the goals before the map and the planning worker 25 s late.

    On a busy machine (CI: two test workers beside the demo) the worker process, at its
    lower priority, took tens of seconds for the first map. The carts drove straight at their
    goals meanwhile, met yawed on the aisle's middle without the aisle's axis to step aside
    along, and stood face to face (the demo over DDS: 0/2 in 120 s). This world has no scans:
    here they drove into the aisle's walls (0.44 m). Robots without a route now wait for
    one once a map has come: the map, then their routes, each 25 s late, then 27 s.
    """
    delay = 25.0
    scenario = load_scenario('cart_aisle')
    run = run_world(scenario, 'holonomic', planner_delay=delay)
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE
    way = np.sign(scenario.goals[:, 0] - scenario.starts[:, 0])
    progress = run.poses[:, :, 0] * way
    assert (np.maximum.accumulate(progress, axis=0) - progress).max() < 0.2
    assert run.time < 2 * delay + 36.0


@pytest.mark.parametrize('draw', [25, 37, 43])
def test_carts_pass_each_other_in_the_rooms_and_enter_the_door_unpushed(draw):
    """
    cart_door with the starts moved and every command in effect one period late.

    Carts that met head-on in the rooms (one leaving the door, one going to it) stopped face
    to face and crawled round each other: draws 25 and 43 took 106 and 112 s. Stepping aside
    (control/lanes.py), they take 44 s. Coming sooner to the door, a cart going in with
    another close behind it was pushed into a jamb by that one's ORCA share (draw 37: 0.014 m
    into it); a cart within DOOR_RIGHT_OF_WAY of its door is now avoided fully by the others.
    """
    scenario = load_scenario('cart_door')
    rng = np.random.default_rng(draw)
    robots = [dataclasses.replace(r, start=tuple(np.array(r.start) + np.r_[
        rng.uniform(-0.05, 0.05, 2), rng.uniform(-0.1, 0.1)])) for r in scenario.robots]
    moved = dataclasses.replace(scenario, robots=robots, timeout=60.0)
    run = run_world(moved, 'holonomic', lag=1, latency_compensation=(draw // 2) % 2 == 0)
    assert run.arrived.all(), f'{np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE
    assert run.min_wall >= corners.WALL_GAP - 1e-3
