"""The simulated world without ROS (orca_nav.sim.world.World): motion, rules, scans, contacts."""

import dataclasses
import math

import numpy as np
from orca_nav.core.geometry import point_segment_distance
from orca_nav.sim.scenarios import scenario_from_dict
from orca_nav.sim.world import integrate, rows_scenario, Scanner, World
import pytest

WALL = [[[2.0, -1.0], [2.0, 1.0]]]


def test_commands_move_each_drive_as_it_can():
    """Holonomic: (vx, vy) in the body frame; differential: vy dropped, the unicycle arc."""
    world = World(rows_scenario(['h', 'd'], [(0.0, 0.0, math.pi / 2), (0.0, 3.0, 0.0)],
                                drives=['holonomic', 'differential']))
    world.step([(0.3, 0.4, 0.0), (0.3, 0.4, 0.5)], 1.0)
    assert world.poses[0] == pytest.approx([-0.4, 0.3, math.pi / 2])
    assert world.twists[1].tolist() == [0.3, 0.0, 0.5]
    assert world.poses[1] == pytest.approx(integrate((0.0, 3.0, 0.0), 0.3, 0.0, 0.5, 1.0))
    assert world.time == 1.0


def test_observed_robots_and_walkers_ignore_commands():
    """An observed robot drives to its goal at its speed, a walker walks its path on the clock."""
    s = scenario_from_dict({
        'robots': [{'name': 'a', 'start': [0, 0], 'goal': [5, 0]},
                   {'name': 'agv', 'start': [0, 3], 'goal': [0, 4], 'observed': True,
                    'max_speed': 0.5}],
        'walkers': [{'name': 'w', 'waypoints': [[4, -3], [4, 3]], 'speed': 1.0,
                     'start_time': 1.0}]})
    world = World(s)
    for _ in range(30):
        world.step(np.tile([0.1, 0.1, 0.0], (3, 1)), 0.1)
    assert world.poses[0, :2] == pytest.approx([0.3, 0.3])        # the commanded robot
    assert world.poses[1, :2] == pytest.approx([0.0, 4.0])        # 1 m at 0.5 m/s, stopped
    assert world.poses[1, 2] == pytest.approx(math.pi / 2)
    assert world.poses[2, :2] == pytest.approx([4.0, -1.0], abs=1e-9)   # 2 s of walking


def test_contact_gaps_are_those_of_brute_force():
    """Robot-robot, robot-wall and robot-walker gaps: the smallest over every row and wall."""
    rng = np.random.default_rng(5)
    walker_rows = scenario_from_dict({
        'robots': [{'name': 'x', 'start': [9, 9], 'goal': [9, 9]}],
        'walkers': [{'name': f'w{k}', 'waypoints': [list(p), list(p + 1.0)], 'radius': 0.3}
                    for k, p in enumerate(rng.uniform(-3, 3, (3, 2)))]}).robots[1:]
    for _ in range(20):
        xy = rng.uniform(-3, 3, (6, 2))
        radii = rng.uniform(0.1, 0.4, 6)
        world = World(rows_scenario([f'r{k}' for k in range(6)],
                                    np.column_stack([xy, np.zeros(6)]), radii, walls=WALL,
                                    walkers=walker_rows))
        world.check_contacts()
        walkers = world.poses[6:, :2]
        pairs = [np.hypot(*(xy[i] - xy[j])) - radii[i] - radii[j]
                 for i in range(6) for j in range(i + 1, 6)]
        wall = point_segment_distance(xy, np.array(WALL))[:, 0] - radii
        people = [np.hypot(*(xy[i] - walkers[k])) - radii[i] - 0.3
                  for i in range(6) for k in range(3)]
        assert world.min_gap == pytest.approx(min(pairs), abs=1e-12)
        assert world.min_wall_gap == pytest.approx(wall.min(), abs=1e-12)
        assert world.min_walker_gap == pytest.approx(min(people), abs=1e-12)


@pytest.mark.parametrize('name', ['cart_warehouse', 'office_mapfile', 'narrow_door'])
def test_skipping_robots_far_from_walls_gives_the_wall_minimum_of_measuring_every_one(name):
    """
    ``bound_contacts``: the same ``min_wall_gap`` at every step as measuring every robot.

    Random walks (turning, both drives' commands) in scenes with polygons, free walls, a map
    from a file and carts, into and out of the walls; teleports (a test moving a robot) too.
    """
    from orca_nav.sim.scenarios import load_scenario
    scenario = load_scenario(name)
    worlds = [World(scenario, bound_contacts=bound) for bound in (True, False)]
    rng = np.random.default_rng(3)
    n = len(scenario.robots)
    for step in range(150):
        commands = rng.uniform([-0.5, -0.5, -2.0], [1.5, 0.5, 2.0], (n, 3))
        if step == 75:
            for world in worlds:
                world.poses[0, :2] = world.poses[-1, :2]
                world.min_wall_gap = math.inf   # a test starting to count again
        for world in worlds:
            world.step(commands, 0.1, substeps=3)
        assert worlds[0].min_wall_gap == worlds[1].min_wall_gap, step
    assert worlds[0].min_wall_gap < 0.0   # the walks ran into walls


@pytest.mark.parametrize('substeps, touched', [(1, False), (10, True)])
def test_substeps_catch_a_contact_between_the_ends_of_a_step(substeps, touched):
    """A robot passing another within one step: the gap is measured at every substep."""
    world = World(rows_scenario(['a', 'b'], [(-1.0, 0.0, 0.0), (0.0, 0.3, 0.0)]))
    world.step([(2.0, 0.0, 0.0), (0.0, 0.0, 0.0)], 1.0, substeps=substeps)
    assert (world.min_gap < 0.0) == touched
    if touched:
        assert world.min_gap == pytest.approx(0.3 - 0.4)


def test_scans_see_walls_robots_and_walkers_and_their_noise_is_seeded():
    """Beam k at -pi + k 2 pi / B from the heading; noise only on hits, from the seed."""
    rows = rows_scenario(['a', 'b'], [(0.0, 0.0, 0.0), (0.0, 1.0, 0.0)], radii=0.2, walls=WALL)
    ranges = World(rows, Scanner(beams=4)).scan_ranges(0)
    # Behind (-pi): nothing; right (-pi/2): nothing; ahead: the wall; left: robot b.
    assert np.isinf(ranges[:2]).all()
    assert ranges[2:] == pytest.approx([2.0, 0.8])
    noisy = [World(rows, Scanner(beams=4, noise=0.05), seed=seed).scan_ranges(0)
             for seed in (1, 1, 2)]
    assert np.array_equal(noisy[0], noisy[1]) and not np.array_equal(noisy[0], noisy[2])
    assert np.isinf(noisy[0][:2]).all() and noisy[0][2:] != pytest.approx([2.0, 0.8])


CART = ((0.45, 0.3), (-0.45, 0.3), (-0.45, -0.3), (0.45, -0.3))  # 0.9 x 0.6 m


def _carts(poses, footprints, walls=None, walkers=()):
    """Return a world of robots at these poses, each with a footprint or None (a 0.2 m disc)."""
    scenario = rows_scenario([f'r{k}' for k in range(len(poses))], poses, walls=walls,
                             walkers=walkers)
    robots = [r if f is None else dataclasses.replace(r, footprint=f, radius=math.hypot(*f[0]))
              for r, f in zip(scenario.robots, footprints)] + scenario.robots[len(poses):]
    return World(dataclasses.replace(scenario, robots=robots))


def test_carts_side_by_side_are_apart_though_their_discs_overlap():
    """Two 0.6 m wide carts 0.05 m apart: gap 0.05 m; their 0.54 m discs would overlap."""
    world = _carts([(0.0, 0.0, 0.0), (0.0, 0.65, 0.0)], [CART, CART])
    world.check_contacts()
    assert world.min_gap == pytest.approx(0.05)
    assert 0.65 - 2 * world.radii[0] < -0.4


def test_carts_turned_so_that_corners_meet_touch():
    """Cart 1 turned by 45 deg, its corner 0.01 m into the corner of cart 0: contact."""
    yaw = math.pi / 4
    c, s = math.cos(yaw), math.sin(yaw)
    corner = np.array([0.45, 0.3]) - 0.01 / math.sqrt(2.0)
    centre = corner - [c * -0.45 - s * -0.3, s * -0.45 + c * -0.3]
    world = _carts([(0.0, 0.0, 0.0), (*centre, yaw)], [CART, CART])
    world.check_contacts()
    assert -0.02 < world.min_gap < 0.0


def test_a_cart_and_a_disc_robot():
    """A disc 0.1 m beyond the cart's long side: gap 0.1; turned 90 deg the cart reaches it."""
    world = _carts([(0.0, 0.0, 0.0), (0.0, 0.6, 0.0)], [CART, None])
    world.check_contacts()
    assert world.min_gap == pytest.approx(0.1)
    world.poses[0, 2] = math.pi / 2
    world.check_contacts()
    assert world.min_gap == pytest.approx(0.6 - 0.45 - 0.2)


def test_a_cart_against_walls_and_a_walker_on_its_polygon():
    """Parallel to a wall 0.05 m off: apart; turned, its corner is in the wall; a walker too."""
    wall = [[[-2.0, 0.35], [2.0, 0.35]]]
    walker = scenario_from_dict({'robots': [{'name': 'a', 'start': [9, 9], 'goal': [9, 9]}],
                                 'walkers': [{'name': 'w', 'waypoints': [[0, -0.5], [0, -0.6]],
                                              'radius': 0.1}]}).robots[1:]
    world = _carts([(0.0, 0.0, 0.0)], [CART], walls=wall, walkers=walker)
    world.check_contacts()
    assert world.min_wall_gap == pytest.approx(0.05)
    assert world.min_walker_gap == pytest.approx(0.1)
    assert 0.35 - world.radii[0] < -0.15   # the disc would be in the wall
    world.poses[0, 2] = 0.3
    world.check_contacts()
    corner = np.array([[math.cos(0.3), -math.sin(0.3)], [math.sin(0.3), math.cos(0.3)]]) @ CART[0]
    assert world.min_wall_gap == pytest.approx(0.35 - corner[1])
    assert world.min_wall_gap < 0.0


def test_scans_see_the_other_robots_footprints():
    """A cart 2 m ahead, end on: the beam reads 2 - 0.45 m (its disc would read 2 - 0.54 m)."""
    world = _carts([(0.0, 0.0, 0.0), (2.0, 0.0, 0.0)], [None, CART])
    ahead = int(np.argmin(np.abs(world.beam_offsets)))
    assert world.scan_ranges(0)[ahead] == pytest.approx(1.55)
    world.poses[1, 2] = math.pi / 2
    assert world.scan_ranges(0)[ahead] == pytest.approx(1.7)
    assert world.scan_ranges(1)[int(np.argmin(np.abs(world.beam_offsets - math.pi / 2)))] \
        == pytest.approx(1.8)
