"""Scenario files, validation errors and generators (ROS-free)."""

import math
from pathlib import Path

import numpy as np
from orca_nav.core.grid import GridMap
from orca_nav.sim.maps import save_map_yaml, scenario_grid
from orca_nav.sim.scenarios import (available_scenarios, load_scenario, node_parameters,
                                    points_in_polygon, polygon_signed_area, scenario_from_dict,
                                    ScenarioError)
import pytest
from scipy import ndimage

SHIPPED = ('blocks', 'circle', 'corridor', 'crossing', 'random')
# Scenarios where straight lines fail: the robots need routes through the map.
MAP_SCENARIOS = {'shelf': 4, 'two_rooms': 6, 'u_pocket': 2, 'maze': 4, 'office': 8,
                 'office_mapfile': 8, 'warehouse': 16}   # name: at least this many robots
WALL_CLEARANCE = 0.4   # [m] between a robot's disc and the nearest wall at its start and goal
PASSAGE = 1.0          # [m] narrowest passage a route may need
REPO = Path(__file__).resolve().parents[1]


def _square(cx, cy, half):
    return [[cx - half, cy - half], [cx + half, cy - half], [cx + half, cy + half],
            [cx - half, cy + half]]


def test_every_shipped_scenario_loads_and_is_valid():
    assert set(SHIPPED) <= set(available_scenarios())
    for name in SHIPPED:
        scenario = load_scenario(name)
        assert len(scenario.robots) >= 4, name
        for robot in scenario.robots:
            assert 0.1 <= robot.radius <= 0.35
            assert 0.2 <= robot.max_speed <= 1.0
            assert robot.straight_line > 2.0, (name, robot.name)
        # Paths short enough that a run finishes in tens of seconds.
        assert max(r.straight_line / r.max_speed for r in scenario.robots) < 40.0, name


def test_every_scenario_file_loads():
    names = available_scenarios()
    assert set(SHIPPED) | set(MAP_SCENARIOS) <= set(names)
    for name in names:
        scenario = load_scenario(name)
        assert scenario.robots and scenario.timeout > 0.0, name


def _segment_blocked(scenario, robot, samples=400):
    """Whether the robot's disc hits an obstacle on the straight line from start to goal."""
    t = np.linspace(0.0, 1.0, samples)[:, None]
    line = (1.0 - t) * np.array(robot.start[:2]) + t * np.array(robot.goal)
    return bool((scenario.obstacle_distance(line) < robot.radius).any())


@pytest.mark.parametrize('name', sorted(MAP_SCENARIOS))
def test_map_scenarios_need_routes_and_have_them(name):
    """
    Straight lines fail, yet every goal is reachable through passages at least PASSAGE wide.

    Reachability: on the scenario's /map grid, the start and goal cells of every robot lie in
    one connected region of the cells more than PASSAGE / 2 from any occupied cell. Robots are
    radius 0.2 and max_speed 0.5, clear of the walls by WALL_CLEARANCE at start and goal.
    """
    scenario = load_scenario(name)
    assert len(scenario.robots) >= MAP_SCENARIOS[name]
    for robot in scenario.robots:
        assert robot.radius == 0.2 and robot.max_speed == 0.5, (name, robot.name)
    points = np.concatenate([scenario.starts[:, :2], scenario.goals])
    radii = np.concatenate([scenario.radii, scenario.radii])
    clearance = scenario.obstacle_distance(points) - radii
    assert clearance.min() >= WALL_CLEARANCE - 1e-9, (name, points[np.argmin(clearance)])
    blocked = [_segment_blocked(scenario, r) for r in scenario.robots]
    assert sum(blocked) >= len(blocked) / 2, (name, blocked)
    # Cells a robot centre may use in a passage PASSAGE wide (a cell of slack for rounding).
    grid = GridMap.from_occupancy(*scenario_grid(scenario))
    regions, _ = ndimage.label(~grid.blocked(0.5 * PASSAGE - grid.resolution))
    start = grid.world_to_cell(scenario.starts[:, :2])
    goal = grid.world_to_cell(scenario.goals)
    start_region = regions[start[:, 1], start[:, 0]]
    assert np.all(start_region > 0), name
    assert np.array_equal(start_region, regions[goal[:, 1], goal[:, 0]]), name


def test_a_narrower_door_would_be_caught():
    """The reachability check of the map scenarios does fail on a too narrow door."""
    data = {'robots': [{'start': [-2, 0], 'goal': [2, 0]}],
            'obstacles': {'polygons': [[[-0.1, -3], [0.1, -3], [0.1, -0.4], [-0.1, -0.4]],
                                       [[-0.1, 0.4], [0.1, 0.4], [0.1, 3], [-0.1, 3]]]},
            'arena': [-3, -3, 3, 3]}
    scenario = scenario_from_dict(data)                     # a 0.8 m door
    grid = GridMap.from_occupancy(*scenario_grid(scenario))
    regions, _ = ndimage.label(~grid.blocked(0.5 * PASSAGE - grid.resolution))
    a, b = grid.world_to_cell([[-2.0, 0.0], [2.0, 0.0]])
    assert regions[a[1], a[0]] != regions[b[1], b[0]]


def test_map_file_scenario_uses_the_occupied_cells_as_walls():
    scenario = load_scenario('office_mapfile')
    office = load_scenario('office')
    # The map next to the scenario file (the source tree, or the install's share/ under colcon).
    assert scenario.map_file.is_file()
    assert scenario.map_file.parts[-3:] == ('config', 'maps', 'office_map.yaml')
    assert scenario.polygons == [] and len(scenario.obstacle_segments()) > 20
    # The same floor as office.yaml: the distances to the walls agree to about a cell.
    rng = np.random.default_rng(0)
    points = rng.uniform([-5.8, -4.3], [5.8, 4.3], (400, 2))
    near = np.abs(office.obstacle_distance(points)) < 2.0
    diff = scenario.obstacle_distance(points) - np.maximum(office.obstacle_distance(points), 0)
    assert np.abs(diff[near]).max() <= 0.08
    # The trips of office.yaml backwards.
    assert np.allclose(scenario.starts[:, :2], office.goals)


def test_map_errors_are_reported(tmp_path):
    robots = [{'start': [0.5, 0.5], 'goal': [1.5, 1.5]}]
    with pytest.raises(ScenarioError, match='map file not found'):
        scenario_from_dict({'robots': robots, 'map': 'nope.yaml'}, base_dir=tmp_path)
    (tmp_path / 'bad.yaml').write_text('image: x.pgm\nresolution: 0.1\n')
    with pytest.raises(ScenarioError, match="missing 'origin'"):
        scenario_from_dict({'robots': robots, 'map': 'bad.yaml'}, base_dir=tmp_path)
    # A 2 x 2 m map, free but for an unknown top-right quarter.
    grid = np.zeros((20, 20), dtype=np.int8)
    grid[10:, 10:] = -1
    save_map_yaml(tmp_path / 'm.yaml', (grid.ravel(), 20, 20, 0.1, (0.0, 0.0, 0.0)))
    ok = scenario_from_dict({'robots': [{'start': [0.5, 0.5], 'goal': [1.5, 0.5]}],
                             'map': 'm.yaml'}, base_dir=tmp_path)
    assert ok.grid_map().shape == (20, 20)
    with pytest.raises(ScenarioError, match='goal .* in an unknown cell'):
        scenario_from_dict({'robots': robots, 'map': 'm.yaml'}, base_dir=tmp_path)
    with pytest.raises(ScenarioError, match='start .* off the map'):
        scenario_from_dict({'robots': [{'start': [-1, 0.5], 'goal': [0.5, 0.5]}],
                            'map': 'm.yaml'}, base_dir=tmp_path)


@pytest.mark.parametrize('name', SHIPPED)
def test_robot_count_override_keeps_a_valid_scenario(name):
    scenario = load_scenario(name, robots=4, drive='differential')
    assert len(scenario.robots) == 4
    assert {r.drive for r in scenario.robots} == {'differential'}


def test_circle_generator_is_an_antipodal_swap_with_a_ring_growing_with_n():
    rings = []
    for count in (4, 12, 24):
        s = load_scenario('circle', robots=count)
        ring = np.linalg.norm(s.starts[:, :2], axis=1)
        assert np.allclose(ring, ring[0])
        assert np.allclose(s.goals, -s.starts[:, :2])
        # Every robot starts facing its goal.
        heading = np.stack([np.cos(s.starts[:, 2]), np.sin(s.starts[:, 2])], axis=1)
        to_goal = s.goals - s.starts[:, :2]
        assert np.allclose((heading * to_goal).sum(1), np.linalg.norm(to_goal, axis=1))
        # Neighbours on the ring keep at least `spacing` (1.6 m) of arc between them.
        assert 2 * math.pi * ring[0] / count >= 1.6 - 1e-9
        rings.append(ring[0])
    assert rings[0] < rings[1] < rings[2]


def test_crossing_generator_makes_two_perpendicular_groups():
    s = load_scenario('crossing', robots=7)
    travel = s.goals - s.starts[:, :2]
    east = np.isclose(travel[:, 1], 0.0) & (travel[:, 0] > 0)
    north = np.isclose(travel[:, 0], 0.0) & (travel[:, 1] > 0)
    assert east.sum() == 4 and north.sum() == 3
    assert np.all(east | north)


def test_random_generator_is_seeded_clear_of_obstacles_and_spread_out():
    a = load_scenario('random', robots=10)
    b = load_scenario('random', robots=10)
    assert np.array_equal(a.starts, b.starts) and np.array_equal(a.goals, b.goals)
    for pts in (a.starts[:, :2], a.goals):
        d = np.linalg.norm(pts[:, None] - pts[None], axis=-1) + np.eye(len(pts)) * 1e9
        assert d.min() >= 0.9 - 1e-9
        assert np.all(a.obstacle_distance(pts) >= a.radii + 0.3 - 1e-9)
    assert np.all(np.linalg.norm(a.goals - a.starts[:, :2], axis=1) >= 4.0)
    data = {'arena': [-5, -5, 5, 5],
            'generator': {'type': 'random', 'count': 10, 'seed': 8}}
    c = scenario_from_dict(data)
    assert not np.array_equal(a.starts, c.starts)


def test_random_generator_reports_a_crowded_arena():
    data = {'arena': [-1, -1, 1, 1], 'generator': {'type': 'random', 'count': 30, 'seed': 1}}
    with pytest.raises(ScenarioError, match='could not place 30 robots'):
        scenario_from_dict(data)


def test_truncating_an_explicit_list_keeps_both_corridor_directions():
    s = load_scenario('corridor', robots=4)
    directions = np.sign(s.goals[:, 0] - s.starts[:, 0])
    assert sorted(directions) == [-1, -1, 1, 1]
    with pytest.raises(ScenarioError, match='lists 8 robots'):
        load_scenario('corridor', robots=9)


@pytest.mark.parametrize('data, message', [
    ({'robots': [{'name': 'a', 'strat': [0, 0, 0], 'goal': [1, 1]}]},
     "unknown key 'strat' .*did you mean 'start'"),
    ({'generator': {'type': 'circel', 'count': 3}}, "did you mean 'circle'"),
    ({'generator': {'type': 'circle', 'cuont': 3}}, "did you mean 'count'"),
    ({'obstacle': {}}, "did you mean 'obstacles'"),
    ({'robot_defaults': {'max_sped': 1.0}, 'generator': {'type': 'circle'}},
     "did you mean 'max_speed'"),
    ({'robots': [{'start': [0, 0], 'goal': [1, 0], 'drive': 'diferential'}]},
     "did you mean 'differential'"),
    ({'robots': [{'start': [0, 0], 'goal': [1, 0], 'radius': -0.2}]}, 'must be positive'),
    ({'robots': [{'start': [0, 0], 'goal': [1, 0], 'name': 'bad name'}]}, 'must match'),
    ({'robots': [{'start': [0, 0], 'goal': [1, 0]}, {'start': [0.3, 0], 'goal': [3, 0]}]},
     'overlap at their starts'),
    ({'robots': [{'start': [0, 0], 'goal': [2, 0]}, {'start': [3, 0], 'goal': [2.1, 0]}]},
     'overlap at their goals'),
    ({'robots': [{'name': 'a', 'start': [0, 0], 'goal': [2, 0]},
                 {'name': 'a', 'start': [3, 0], 'goal': [5, 0]}]}, 'duplicate robot names'),
    ({'robots': [{'start': [0, 0], 'goal': [3, 0]}],
      'obstacles': {'polygons': [_square(0.3, 0.0, 0.2)]}}, 'overlaps an obstacle at its start'),
    ({'robots': [{'start': [0, 0], 'goal': [3, 0]}],
      'obstacles': {'polygons': [_square(3.0, 0.0, 1.0)]}}, 'overlaps an obstacle at its goal'),
    ({'robots': [{'start': [0, 0], 'goal': [3, 0]}],
      'obstacles': {'polygons': [_square(6.0, 0.0, 1.0)[::-1]]}}, 'counter-clockwise'),
    ({'robots': [{'start': [0, 0], 'goal': [3, 0]}],
      'obstacles': {'segments': [[[5, 0], [5, 0]]]}}, 'zero-length'),
    ({'robots': [{'start': [0, 0], 'goal': [3, 0]}], 'generator': {'type': 'circle'}},
     'exactly one of'),
    ({'robots': []}, 'non-empty list'),
    ({'robots': [{'start': [0, 0]}]}, "missing 'goal'"),
    ({'robots': [{'start': [0, 'x'], 'goal': [1, 0]}]}, 'expected 2 numbers'),
    ({'generator': {'type': 'random', 'count': 3}}, 'needs an "arena"'),
    ({'generator': {'type': 'circle', 'count': 0}}, 'positive integer'),
])
def test_invalid_scenarios_fail_with_an_actionable_message(data, message):
    with pytest.raises(ScenarioError, match=message):
        scenario_from_dict(data)


def test_unknown_scenario_name_suggests_the_nearest():
    with pytest.raises(ScenarioError, match="did you mean 'circle'"):
        load_scenario('circel')


def test_obstacle_distance_is_signed_and_matches_the_geometry():
    s = scenario_from_dict({
        'robots': [{'start': [-3, 0], 'goal': [-3, 3]}],
        'obstacles': {'polygons': [_square(0.0, 0.0, 1.0)], 'segments': [[[3, -1], [3, 1]]]}})
    pts = np.array([[0.0, 0.0], [0.5, 0.0], [2.0, 0.0], [2.0, 2.0], [3.0, 3.0], [4.0, 0.5]])
    expected = [-1.0, -0.5, 1.0, math.sqrt(2.0), 2.0, 1.0]
    assert np.allclose(s.obstacle_distance(pts), expected)
    # Four polygon edges plus the free wall.
    assert s.obstacle_segments().shape == (5, 2, 2)


def test_polygon_helpers():
    square = np.array(_square(0.0, 0.0, 1.0), dtype=float)
    assert polygon_signed_area(square) == pytest.approx(4.0)
    assert polygon_signed_area(square[::-1]) == pytest.approx(-4.0)
    inside = points_in_polygon(np.array([[0.0, 0.0], [0.99, -0.99], [1.5, 0.0]]), square)
    assert inside.tolist() == [True, True, False]


def test_node_parameters_are_plain_lists_in_robot_order():
    s = load_scenario('blocks', robots=5, drive='differential')
    params = node_parameters(s)
    assert params['robots'] == s.names
    assert params['drive'] == ['differential'] * 5
    assert params['radius'] == [0.2] * 5
    assert all(isinstance(v, float) for v in params['max_speed'])
