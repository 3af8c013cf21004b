"""Scenario files, validation errors and generators (ROS-free)."""

import json
import math
from pathlib import Path

import numpy as np
from orca_nav.core.geometry import points_in_polygon
from orca_nav.core.routes.grid import GridMap
from orca_nav.core.routes.planner import LETHAL_TOLERANCE_CELLS, RoutePlanner, Unreachable
from orca_nav.sim.maps import save_map_yaml, scenario_grid
from orca_nav.sim.scenarios import (available_scenarios, load_scenario, node_parameters,
                                    polygon_signed_area, scenario_from_dict, ScenarioError,
                                    walker_pose)
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


# --- walkers ----------------------------------------------------------------------------------

def _with_walkers(*walkers, robots=None, **extra):
    data = {'robots': robots or [{'name': 'a', 'start': [-3, 0], 'goal': [3, 0]},
                                 {'name': 'b', 'start': [3, 1], 'goal': [-3, 1],
                                  'observed': True}],
            'walkers': list(walkers), **extra}
    return scenario_from_dict(data)


def test_walkers_get_defaults_and_come_after_the_robots():
    s = _with_walkers({'name': 'w0', 'waypoints': [[0, -2], [0, 2], [1, 2]]},
                      {'name': 'w1', 'waypoints': [[2, -2], [2, -4]], 'radius': 0.3,
                       'speed': 0.7, 'loop': True, 'start_time': 4})
    assert s.names == ['a', 'b', 'w0', 'w1']
    assert s.walkers.tolist() == [False, False, True, True]
    assert s.observed.tolist() == [False, True, False, False]
    w0, w1 = s.robots[2:]
    assert (w0.radius, w0.max_speed, w0.loop, w0.start_time) == (0.25, 0.5, False, 0.0)
    assert (w1.radius, w1.max_speed, w1.loop, w1.start_time) == (0.3, 0.7, True, 4.0)
    # Start: the first waypoint facing the second; goal: the last; holonomic.
    assert w0.start == pytest.approx((0.0, -2.0, math.pi / 2))
    assert w0.goal == (1.0, 2.0) and w0.waypoints == ((0.0, -2.0), (0.0, 2.0), (1.0, 2.0))
    assert w1.start == pytest.approx((2.0, -2.0, -math.pi / 2))
    assert {w0.drive, w1.drive} == {'holonomic'}
    # Every per-row array covers them.
    assert s.radii.tolist() == [0.2, 0.2, 0.25, 0.3]
    assert s.starts.shape == (4, 3) and s.goals[3].tolist() == [2.0, -4.0]
    # A drive override leaves walkers holonomic.
    drives = [r.drive for r in s.with_drive('differential').robots]
    assert drives == ['differential', 'differential', 'holonomic', 'holonomic']


def test_walkers_are_not_given_to_the_node():
    s = _with_walkers({'name': 'w0', 'waypoints': [[0, -2], [0, 2]]})
    params = node_parameters(s)
    assert params['robots'] == ['a'] and params['observed_robots'] == ['b']
    for key in ('radius', 'max_speed', 'max_angular_speed', 'drive', 'avoidance_weight',
                'avoidance_group', 'groups_to_ignore'):
        assert len(params[key]) == 2, key


def test_the_robot_count_override_keeps_the_walkers():
    s = load_scenario('people', robots=2, drive='differential')
    assert s.names == ['e0', 'e1', 'w0', 'w1', 'w2']
    assert [r.drive for r in s.robots] == ['differential'] * 2 + ['holonomic'] * 3
    with pytest.raises(ScenarioError, match='lists 6 robots'):
        load_scenario('people', robots=7)


def test_walker_paths_may_cross_anything_but_not_stand_on_a_robot_at_the_start():
    # Through an obstacle, ending on a robot's goal and starting on another walker: fine.
    s = _with_walkers({'name': 'w0', 'waypoints': [[0, -3], [0, 3], [3, 0]]},
                      {'name': 'w1', 'waypoints': [[0, -3], [-3, 1]]},
                      obstacles={'polygons': [_square(0.0, 3.0, 0.5)]})
    assert s.walkers.sum() == 2
    with pytest.raises(ScenarioError, match='robot a and walker w0 overlap at their starts'):
        _with_walkers({'name': 'w0', 'waypoints': [[-3.2, 0], [0, 3]]})


@pytest.mark.parametrize('walker, message', [
    ({'name': 'w0', 'waypoints': [[0, -2], [0, 2]], 'sped': 1.0}, "did you mean 'speed'"),
    ({'name': 'w0', 'waypoints': [[0, -2], [0, 2]], 'start_tim': 1.0},
     "did you mean 'start_time'"),
    ({'waypoints': [[0, -2], [0, 2]]}, "missing 'name'"),
    ({'name': 'w0'}, "missing 'waypoints'"),
    ({'name': 'w0', 'waypoints': [[0, -2]]}, 'at least 2'),
    ({'name': 'w0', 'waypoints': [[0, -2], [0, 'x']]}, r'waypoints\[1\]: expected 2 numbers'),
    ({'name': 'w0', 'waypoints': [[0, -2], [0, 2, 1]]}, r'waypoints\[1\]: expected 2'),
    ({'name': 'w0', 'waypoints': [[0, -2], [0, float('inf')]]}, 'finite'),
    ({'name': 'w0', 'waypoints': 'north'}, 'at least 2'),
    ({'name': 'w0', 'waypoints': [[0, -2], [0, 2]], 'speed': 0}, 'speed: must be positive'),
    ({'name': 'w0', 'waypoints': [[0, -2], [0, 2]], 'radius': -1}, 'radius: must be positive'),
    ({'name': 'w0', 'waypoints': [[0, -2], [0, 2]], 'loop': 'yes'}, 'true or false'),
    ({'name': 'w0', 'waypoints': [[0, -2], [0, 2]], 'start_time': -1}, 'start_time'),
    ({'name': 'bad name', 'waypoints': [[0, -2], [0, 2]]}, 'must match'),
    ({'name': 'a', 'waypoints': [[0, -2], [0, 2]]}, "duplicate robot names \\['a'\\]"),
])
def test_invalid_walkers_fail_with_an_actionable_message(walker, message):
    with pytest.raises(ScenarioError, match=message):
        _with_walkers(walker)


def test_two_walkers_with_one_name_are_refused():
    with pytest.raises(ScenarioError, match="duplicate robot names \\['w'\\]"):
        _with_walkers({'name': 'w', 'waypoints': [[0, -2], [0, 2]]},
                      {'name': 'w', 'waypoints': [[1, -2], [1, 2]]})
    with pytest.raises(ScenarioError, match="unknown key 'walker' .*did you mean 'walkers'"):
        scenario_from_dict({'robots': [{'start': [0, 0], 'goal': [1, 0]}], 'walker': []})
    with pytest.raises(ScenarioError, match='walkers must be a list'):
        scenario_from_dict({'robots': [{'start': [0, 0], 'goal': [1, 0]}], 'walkers': {}})


def test_walker_pose_follows_the_polyline_at_its_speed():
    s = _with_walkers({'name': 'w', 'waypoints': [[0, -3], [3, -3], [3, 1]], 'speed': 0.5,
                       'start_time': 2.0})
    w = s.robots[-1]
    # Standing at the first waypoint, facing the second, until start_time.
    for t in (0.0, 1.0, 2.0):
        assert walker_pose(w, t) == pytest.approx((0.0, -3.0, 0.0))
    # Arc length 0.5 * (t - 2): 1 m along the first leg, the corner, 1.5 m up the second leg.
    assert walker_pose(w, 4.0) == pytest.approx((1.0, -3.0, 0.0))
    assert walker_pose(w, 8.0)[:2] == pytest.approx((3.0, -3.0))
    assert walker_pose(w, 11.0) == pytest.approx((3.0, -1.5, math.pi / 2))
    # At the last waypoint after 7 m (t = 16) and standing there for ever.
    for t in (16.0, 17.0, 1000.0):
        assert walker_pose(w, t) == pytest.approx((3.0, 1.0, math.pi / 2))


def test_a_looping_walker_walks_back_to_the_first_waypoint_and_round_again():
    s = _with_walkers({'name': 'w', 'waypoints': [[0, -3], [2, -3]], 'speed': 1.0,
                       'loop': True})
    w = s.robots[-1]
    # 4 m round: out along +x, back along -x, out again.
    assert walker_pose(w, 1.0) == pytest.approx((1.0, -3.0, 0.0))
    assert walker_pose(w, 3.0) == pytest.approx((1.0, -3.0, math.pi))
    assert walker_pose(w, 5.5) == pytest.approx((1.5, -3.0, 0.0))
    assert walker_pose(w, 403.0) == pytest.approx((1.0, -3.0, math.pi))
    # A triangle: the closing leg from the last waypoint to the first.
    s = _with_walkers({'name': 'w', 'waypoints': [[0, -3], [3, -3], [3, -7]], 'speed': 1.0,
                       'loop': True})
    assert walker_pose(s.robots[-1], 9.5) == pytest.approx((1.5, -5.0, math.atan2(4, -3)))
    assert walker_pose(s.robots[-1], 12.0 + 1.0) == pytest.approx((1.0, -3.0, 0.0))


def test_the_walker_scenarios_have_walkers_crossing_the_robots():
    ring = load_scenario('ring_walker')
    assert ring.names == ['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'w0']
    w0 = ring.robots[-1]
    assert (w0.waypoints, w0.radius, w0.max_speed, w0.start_time, w0.loop) == (
        ((0.0, -5.0), (0.0, 5.0)), 0.25, 0.5, 2.0, False)
    assert walker_pose(w0, 12.0)[:2] == pytest.approx((0.0, 0.0))
    people = load_scenario('people')
    walkers = [r for r in people.robots if r.walker]
    assert people.walkers.sum() == 3 and (~people.walkers).sum() == 6
    assert timeout_and_arena(people) == (120.0, (-6.0, -5.0, 6.0, 5.0))
    assert any(w.loop for w in walkers) and any(w.start_time == 10.0 for w in walkers)
    assert all(0.3 <= w.max_speed <= 0.6 for w in walkers)
    assert len({w.max_speed for w in walkers}) == 3


def timeout_and_arena(scenario):
    """Return (timeout, arena) of a scenario."""
    return scenario.timeout, tuple(scenario.arena)


# Scenarios whose passages one robot just fits through: name -> how much wider than a robot [m].
NARROW_SCENARIOS = {'narrow_door': 0.15, 'single_lane': 0.15, 'narrow_aisles': 0.2}


@pytest.mark.parametrize('name', sorted(NARROW_SCENARIOS))
def test_narrow_scenarios_need_their_narrow_passages(name):
    """
    Straight lines fail; every robot has a route for its true disc and none a wider one.

    The map published for the scenario shows the passages at their width: a disc a cell
    wider than the passage allows finds no way, the robot's own disc does.
    """
    scenario = load_scenario(name)
    data, width, height, resolution, origin = scenario_grid(scenario)
    grid = GridMap.from_occupancy(data, width, height, resolution, origin)
    radius = max(r.radius for r in scenario.robots)
    wide = radius + NARROW_SCENARIOS[name] / 2.0 + resolution
    fits = RoutePlanner(grid, radius, tolerance=LETHAL_TOLERANCE_CELLS)
    too_wide = RoutePlanner(grid, wide, tolerance=LETHAL_TOLERANCE_CELLS)
    for robot in scenario.robots:
        assert _segment_blocked(scenario, robot), robot.name
        assert fits.plan(robot.start[:2], robot.goal).length > 0.0
        with pytest.raises(Unreachable):
            too_wide.plan(robot.start[:2], robot.goal)


# --- footprints -------------------------------------------------------------------------------

CART = [[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]


def _carts(defaults=None, **robot):
    data = {'robot_defaults': defaults or {},
            'robots': [{'name': 'a', 'start': [-3, 0], 'goal': [3, 0], **robot},
                       {'name': 'b', 'start': [3, 2], 'goal': [-3, 2]}]}
    return scenario_from_dict(data)


def test_footprints_in_robot_defaults_and_per_robot():
    """A footprint (defaults or per robot) wins over radius: the radius is its farthest vertex."""
    s = _carts({'footprint': CART, 'radius': 0.3}, footprint=[])
    assert s.robots[0].footprint is None and s.robots[0].radius == 0.3  # [] = a disc
    assert sorted(s.robots[1].footprint) == sorted(map(tuple, CART))
    assert s.robots[1].radius == pytest.approx(math.hypot(0.45, 0.3))
    s = _carts(footprint=CART[::-1])  # clockwise: turned counter-clockwise
    assert polygon_signed_area(np.array(s.robots[0].footprint)) > 0
    assert s.robots[1].footprint is None and s.robots[1].radius == 0.2


@pytest.mark.parametrize('footprint, message', [
    ([[0.45, 0.3], [-0.45, 0.3]], 'robots\\[0\\]: footprint needs at least 3 points'),
    ([[0.45, 0.3], [-0.45, 0.3], [0.0, float('nan')]], 'finite'),
    ([[1, 1], [-1, -1], [-1, 1], [1, -1]], 'self-intersecting'),
    ([[1, 0], [2, 0], [2, 1]], 'must contain the robot origin'),
    ([[50, 50], [-50, 50], [-50, -50], [50, -50]], 'at most 10 m'),
    ([[0.5, 0.5], [-0.5, 0.5], [-0.5, -0.5], [0, -0.5], [0, 0], [0.5, 0]], 'write its convex'),
    ('[[1, 0], [0, 1], [-1, -1]]', 'list of \\[x, y\\] points'),
])
def test_bad_footprints_in_scenarios_are_refused(footprint, message):
    """The node's checks, with the scenario's place in the message; concave is refused here."""
    with pytest.raises(ScenarioError, match=message):
        _carts(footprint=footprint)


def test_node_parameters_pass_footprints_as_nav2_strings():
    """The node gets <robot>.footprint (no radius of its own) and runs the circumscribed disc."""
    from orca_nav.control.config import FleetConfig
    from orca_nav.sim.processes import node_params

    s = _carts(footprint=CART)
    lists = node_parameters(s)
    assert lists['footprint'][1] == ''
    assert sorted(json.loads(lists['footprint'][0])) == sorted(CART)
    params = node_params(s)
    assert 'a.radius' not in params and params['b.radius'] == 0.2
    config = FleetConfig.from_params(**params)
    assert config.radius.tolist() == [pytest.approx(math.hypot(0.45, 0.3) + 0.01), 0.2]


def _two_carts(b_start, obstacles=None):
    data = {'robot_defaults': {'footprint': CART},
            'robots': [{'name': 'a', 'start': [0, 0, 0], 'goal': [3, 3]},
                       {'name': 'b', 'start': b_start, 'goal': [-3, 3]}]}
    if obstacles:
        data['obstacles'] = obstacles
    return scenario_from_dict(data)


def test_starts_are_judged_on_the_footprints_at_their_headings():
    """Carts side by side 0.05 m apart start fine (their discs overlap); turned, they overlap."""
    assert len(_two_carts([0, 0.65, 0]).robots) == 2
    with pytest.raises(ScenarioError, match='overlap at their starts'):
        _two_carts([0, 0.65, math.pi / 2])
    # A wall 0.05 m beside a cart's long side: its disc crosses the wall, the cart does not.
    wall = {'segments': [[[-2.0, 0.35], [2.0, 0.35]]]}
    assert len(_two_carts([0, -2.0, 0], wall).robots) == 2
    with pytest.raises(ScenarioError, match='overlaps an obstacle at its start'):
        _two_carts([0, -2.0, 0], {'segments': [[[-2.0, 0.25], [2.0, 0.25]]]})
