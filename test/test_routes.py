"""orca_nav.core.routes: route planning on grids, line of sight, shortcutting, route following."""

import math

import numpy as np
from orca_nav.core.routes.blockgraph import coarse_factor
from orca_nav.core.routes.grid import GridMap
from orca_nav.core.routes.planner import Route, RoutePlanner, Unreachable
from orca_nav.core.routes.sight import line_of_sight, shortcut
from orca_nav.testing.route_reference import carrot, progress_along
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

RES = 0.1          # [m / cell]
CLEARANCE = 0.25   # [m]
HALF_DIAGONAL = RES * math.sqrt(2.0) / 2.0   # [m] the slack allowed by cell discretisation

# Both search strategies: the full-resolution field (small maps) and the block graph with
# corridor refinement (large maps), forced here on small maps.
MODES = {'fine': {}, 'blocks': {'max_fine_cells': 0}}


@pytest.fixture(params=sorted(MODES))
def make_planner(request):
    """Return a function (grid, clearance) -> RoutePlanner in the parametrised mode."""
    def make(grid, clearance=CLEARANCE):
        planner = RoutePlanner(grid, clearance, **MODES[request.param])
        assert planner.coarse == (request.param == 'blocks')
        return planner
    return make


def grid_of(occupancy, origin=(0.0, 0.0, 0.0)):
    """Return a GridMap of an (H, W) int array (row 0 = lowest y)."""
    occupancy = np.asarray(occupancy)
    height, width = occupancy.shape
    return GridMap.from_occupancy(occupancy.ravel(), width, height, RES, origin)


def centre(col, row):
    """Return the world centre [m] of cell (col, row) on an unrotated map at the origin."""
    return np.array([(col + 0.5) * RES, (row + 0.5) * RES])


def gap_map():
    """8 m x 6 m, a wall at x = 4.0..4.1 m with a 0.8 m gap at y = 2.6..3.4 m."""
    occupancy = np.zeros((60, 80), dtype=int)
    occupancy[:, 40] = 100
    occupancy[26:34, 40] = 0
    return occupancy


def pocket_map():
    """8 m x 8 m, a U-shaped pocket around (4, 4) open toward -x (away from a goal at +x)."""
    occupancy = np.zeros((80, 80), dtype=int)
    occupancy[25:56, 50] = 100          # the closed side, x = 5.0
    occupancy[25, 25:51] = 100          # bottom arm, y = 2.5
    occupancy[55, 25:51] = 100          # top arm, y = 5.5
    return occupancy


def room_map():
    """8 m x 6 m, a closed room x in [5, 7], y in [2, 4] (walls all round)."""
    occupancy = np.zeros((60, 80), dtype=int)
    occupancy[20, 50:71] = 100
    occupancy[40, 50:71] = 100
    occupancy[20:41, 50] = 100
    occupancy[20:41, 70] = 100
    return occupancy


def min_clearance(grid, points, step=0.005):
    """Smallest distance [m] from the polyline through (K, 2) points to an occupied centre."""
    samples = []
    for a, b in zip(points[:-1], points[1:]):
        n = max(int(np.ceil(np.linalg.norm(b - a) / step)), 1) + 1
        samples.append(a + np.linspace(0.0, 1.0, n)[:, np.newaxis] * (b - a))
    samples = np.concatenate(samples)
    rows, cols = np.nonzero(grid.occupied)
    centres = grid.cell_to_world(np.stack([cols, rows], axis=1))
    gaps = np.hypot(samples[:, 0:1] - centres[:, 0], samples[:, 1:2] - centres[:, 1])
    return gaps.min()


def assert_keeps_clearance(grid, points, clearance=CLEARANCE):
    """Assert the polyline keeps clearance from occupied centres, less half a cell diagonal."""
    assert min_clearance(grid, points) >= clearance - HALF_DIAGONAL - 1e-9


def reference_length(free, start_rc, goal_rc):
    """
    Shortest path length [m] between two cell centres through free cells (reference).

    Dijkstra on the free cells linked to every cell up to 4 cells away (48 directions) by a
    straight segment whose dense samples all fall in free cells: within about 1 % of the
    any-angle shortest path, and a little optimistic at corners.
    """
    height, width = free.shape
    index = np.arange(height * width).reshape(height, width)
    rows, cols = np.nonzero(free)
    sources, targets, weights = [], [], []
    for dr in range(-4, 5):
        for dc in range(-4, 5):
            if (dr, dc) == (0, 0) or math.gcd(abs(dr), abs(dc)) != 1:
                continue
            r2, c2 = rows + dr, cols + dc
            ok = (r2 >= 0) & (r2 < height) & (c2 >= 0) & (c2 < width)
            r, c, r2, c2 = rows[ok], cols[ok], r2[ok], c2[ok]
            t = np.linspace(0.0, 1.0, 10 * max(abs(dr), abs(dc)) + 1)
            sample_r = np.floor(r[:, None] + t * dr + 0.5).astype(int)
            sample_c = np.floor(c[:, None] + t * dc + 0.5).astype(int)
            clear = free[sample_r, sample_c].all(axis=1)
            sources.append(index[r[clear], c[clear]])
            targets.append(index[r2[clear], c2[clear]])
            weights.append(np.full(np.count_nonzero(clear), math.hypot(dr, dc)))
    graph = csr_matrix((np.concatenate(weights), (np.concatenate(sources),
                                                  np.concatenate(targets))),
                       shape=(height * width, height * width))
    distance = dijkstra(graph, indices=index[start_rc])
    return distance[index[goal_rc]] * RES


# --- planning ---------------------------------------------------------------------------------

def test_straight_line_in_an_empty_map_has_two_points(make_planner):
    """In the open the route is the straight segment."""
    grid = grid_of(np.zeros((30, 50), dtype=int))
    start, goal = np.array([0.52, 0.61]), np.array([4.33, 2.47])
    route = make_planner(grid).plan(start, goal)
    assert isinstance(route, Route)
    assert route.points.shape == (2, 2)
    assert np.array_equal(route.points[0], start) and np.array_equal(route.points[-1], goal)
    assert route.length == pytest.approx(np.linalg.norm(goal - start))


def test_route_goes_through_the_gap_near_the_shortest_length(make_planner):
    """Through the gap, with clearance, within 5 % of the shortest."""
    grid = grid_of(gap_map())
    planner = make_planner(grid)
    start, goal = centre(10, 5), centre(70, 8)
    route = planner.plan(start, goal)
    points = route.points
    assert np.array_equal(points[0], start) and np.array_equal(points[-1], goal)
    # It crosses the wall's line (x = 4.05 m) inside the gap.
    crossing = [i for i in range(len(points) - 1) if (points[i, 0] - 4.05)
                * (points[i + 1, 0] - 4.05) <= 0.0]
    assert len(crossing) == 1
    a, b = points[crossing[0]], points[crossing[0] + 1]
    y = a[1] + (4.05 - a[0]) / (b[0] - a[0]) * (b[1] - a[1])
    assert 2.6 + CLEARANCE - HALF_DIAGONAL <= y <= 3.4 - CLEARANCE + HALF_DIAGONAL
    assert_keeps_clearance(grid, points)
    reference = reference_length(~planner.blocked, (5, 10), (8, 70))
    assert route.length <= 1.05 * reference
    assert route.length >= 0.97 * reference
    assert route.length == pytest.approx(np.sum(np.linalg.norm(np.diff(points, axis=0), axis=1)))


def test_route_leaves_a_pocket_facing_away_from_the_goal(make_planner):
    """A robot in a U pocket is routed out of its opening."""
    grid = grid_of(pocket_map())
    start, goal = centre(40, 40), centre(75, 40)
    route = make_planner(grid).plan(start, goal)
    # Out through the opening at x = 2.5 m, round an arm, then to the goal.
    assert route.points[:, 0].min() < 2.5
    assert np.abs(route.points[:, 1] - 4.05).max() > 1.5
    assert_keeps_clearance(grid, route.points)
    assert route.length > np.linalg.norm(goal - start) + 2 * 1.5


def test_goal_in_a_wall_is_goal_in_obstacle(make_planner):
    """A goal in an occupied cell is goal_in_obstacle."""
    planner = make_planner(grid_of(gap_map()))
    with pytest.raises(Unreachable) as caught:
        planner.plan(centre(10, 5), (4.05, 1.0))
    assert caught.value.reason == 'goal_in_obstacle'
    assert 'goal_in_obstacle' in str(caught.value)


def test_goal_deep_in_a_narrow_slot_is_goal_in_obstacle(make_planner):
    """A goal far from any free cell is goal_in_obstacle."""
    # A one-cell slot 1.5 m deep: free, but farther than 2 clearances from any free cell.
    occupancy = np.zeros((40, 40), dtype=int)
    occupancy[0:15, 18:23] = 100
    occupancy[0:15, 20] = 0
    planner = make_planner(grid_of(occupancy))
    with pytest.raises(Unreachable) as caught:
        planner.plan(centre(5, 30), centre(20, 0))
    assert caught.value.reason == 'goal_in_obstacle'


def test_goal_near_a_wall_is_reached_exactly(make_planner):
    """A goal within clearance of a wall is snapped, then reached."""
    grid = grid_of(gap_map())
    clearance = 0.4
    planner = make_planner(grid, clearance)
    goal = np.array([4.15, 1.0])           # 0.05 m from the wall face, inside the inflation
    route = planner.plan(centre(70, 5), goal)
    assert np.array_equal(route.points[-1], goal)
    # Up to the snapped goal cell (on the goal's side) the route keeps its clearance.
    assert_keeps_clearance(grid, route.points[:-1], clearance)
    assert route.points[-2, 0] > 4.1 + clearance
    assert np.linalg.norm(route.points[-2] - goal) <= 2 * clearance + 1e-9


def test_closed_room_is_no_path(make_planner):
    """Into or out of a closed room is no_path."""
    planner = make_planner(grid_of(room_map()))
    for start, goal in [(centre(10, 10), centre(60, 30)), (centre(60, 30), centre(10, 10))]:
        with pytest.raises(Unreachable) as caught:
            planner.plan(start, goal)
        assert caught.value.reason == 'no_path'
    # Inside the room itself routes exist.
    assert planner.plan(centre(55, 25), centre(65, 35)).length > 0.0


def test_goal_and_start_outside_the_map(make_planner):
    """Off-map goals and starts are reported as such."""
    planner = make_planner(grid_of(gap_map()))
    for goal in [(-0.1, 1.0), (8.01, 1.0), (1.0, 6.5), (math.nan, 1.0)]:
        with pytest.raises(Unreachable) as caught:
            planner.plan(centre(10, 5), goal)
        assert caught.value.reason == 'goal_outside_map'
    with pytest.raises(Unreachable) as caught:
        planner.plan((1.0, -0.5), centre(10, 5))
    assert caught.value.reason == 'start_outside_map'


@pytest.mark.parametrize('start', [(3.93, 1.0), (4.0, 1.0), (4.02, 1.03)])
def test_squeezed_start_still_routes(make_planner, start):
    """A start within clearance of a wall (or in it) still routes."""
    # 0.07 m from the wall, on its face, and inside its cell (a localisation error).
    grid = grid_of(gap_map())
    planner = make_planner(grid)
    start = np.array(start)
    route = planner.plan(start, centre(10, 40))
    assert np.array_equal(route.points[0], start)
    # It steps away from the wall on its own side, then keeps its clearance.
    assert route.points[1, 0] < 4.0
    assert np.linalg.norm(route.points[1] - start) <= 3 * CLEARANCE + 1e-9
    assert_keeps_clearance(grid, route.points[1:])


def test_squeezed_start_does_not_jump_through_a_wall(make_planner):
    """A squeezed start stays on its side of the wall."""
    # Left of a thin wall, squeezed; the goal's side is the right, reachable only via the gap.
    grid = grid_of(gap_map())
    route = make_planner(grid).plan((3.93, 0.5), centre(60, 5))
    assert route.points[1, 0] < 4.0
    assert route.length > 2.0 * (2.6 - 0.5)


def test_plan_many_shares_one_field_per_goal(make_planner):
    """10 robots, 3 goals: 3 cost-to-go fields."""
    grid = grid_of(gap_map())
    planner = make_planner(grid)
    rng = np.random.default_rng(5)
    goals_xy = np.array([centre(70, 10), centre(70, 50), centre(20, 50)])
    free_rows, free_cols = np.nonzero(~planner.blocked)
    pick = rng.choice(len(free_rows), 10, replace=False)
    starts = grid.cell_to_world(np.stack([free_cols[pick], free_rows[pick]], axis=1))
    goals = goals_xy[np.arange(10) % 3]
    results = planner.plan_many(starts, goals)
    assert planner.cost_to_go_computed == 3
    assert all(isinstance(r, Route) for r in results)
    for result, start, goal in zip(results, starts, goals):
        assert np.array_equal(result.points[0], start)
        assert np.array_equal(result.points[-1], goal)
        assert_keeps_clearance(grid, result.points)
    # Planned again: the fields are cached.
    planner.plan_many(starts, goals)
    assert planner.cost_to_go_computed == 3


def test_plan_many_reports_failures_per_robot(make_planner):
    """plan_many returns Unreachable per failed robot."""
    planner = make_planner(grid_of(room_map()))
    results = planner.plan_many([centre(10, 10), centre(10, 10), (-1.0, 0.0)],
                                [centre(30, 30), centre(60, 30), centre(30, 30)])
    assert isinstance(results[0], Route)
    assert [r.reason for r in results[1:]] == ['no_path', 'start_outside_map']
    with pytest.raises(ValueError):
        planner.plan_many([centre(1, 1)], [centre(2, 2), centre(3, 3)])


def test_cost_to_go_is_the_8_neighbour_path_length():
    """In the open the field is the octile distance."""
    occupancy = np.zeros((20, 30), dtype=int)
    occupancy[15:, 25:] = 100
    grid = grid_of(occupancy)
    planner = RoutePlanner(grid, 0.0)
    field = planner.cost_to_go(centre(3, 2))
    assert field.shape == (20, 30)
    rows, cols = np.mgrid[0:20, 0:30]
    dr, dc = np.abs(rows - 2), np.abs(cols - 3)
    octile = (np.maximum(dr, dc) - np.minimum(dr, dc) + math.sqrt(2) * np.minimum(dr, dc)) * RES
    free = ~grid.occupied
    assert np.allclose(field[free], octile[free])
    assert np.all(np.isinf(field[grid.occupied]))
    assert field[2, 3] == 0.0
    assert planner.cost_to_go(centre(3, 2)) is field
    assert planner.cost_to_go_computed == 1
    with pytest.raises(ValueError):
        field[0, 0] = 1.0


def test_cost_to_go_is_inf_where_unreachable():
    """The field is inf beyond walls."""
    planner = RoutePlanner(grid_of(room_map()), CLEARANCE)
    field = planner.cost_to_go(centre(10, 10))
    assert np.isinf(field[30, 60]) and np.isfinite(field[50, 10])
    with pytest.raises(Unreachable):
        planner.cost_to_go((50.0, 1.0))


def test_routes_on_a_rotated_map_are_the_rotated_routes():
    """A rotated map gives the rotated route."""
    occupancy = gap_map()
    yaw, offset = 0.6, np.array([3.0, -2.0])
    rotation = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
    plain = RoutePlanner(grid_of(occupancy), CLEARANCE)
    rotated = RoutePlanner(grid_of(occupancy, origin=(*offset, yaw)), CLEARANCE)
    start, goal = centre(10, 5), centre(70, 8)
    expected = plain.plan(start, goal)
    route = rotated.plan(start @ rotation.T + offset, goal @ rotation.T + offset)
    assert np.allclose(route.points, expected.points @ rotation.T + offset)
    assert route.length == pytest.approx(expected.length)


def test_coarse_factor_keeps_blocks_inside_the_inflation_band():
    """Blocks are the largest whose diagonal fits in a band."""
    for clearance, resolution in [(0.25, 0.05), (0.2, 0.1), (0.5, 0.05), (0.05, 0.05)]:
        f = coarse_factor(clearance, resolution)
        band = 2 * clearance / resolution + 1
        assert (f - 1) * math.sqrt(2) < band <= f * math.sqrt(2)
    assert coarse_factor(0.25, 0.05) == 8


@pytest.mark.slow
def test_large_map_uses_the_block_graph_and_finds_the_same_route_length():
    """The block graph finds a route as short as the full grid."""
    occupancy = np.zeros((300, 300), dtype=int)
    for x in range(40, 260, 60):
        occupancy[0:250, x] = 100                # walls open at the top, alternately
        occupancy[50:300, x + 30] = 100
    grid = grid_of(occupancy)
    big = RoutePlanner(grid, CLEARANCE, max_fine_cells=10_000)
    small = RoutePlanner(grid, CLEARANCE, max_fine_cells=10 ** 9)
    assert big.coarse and not small.coarse
    start, goal = centre(10, 10), centre(290, 10)
    coarse, fine = big.plan(start, goal), small.plan(start, goal)
    assert_keeps_clearance(grid, coarse.points)
    assert coarse.length <= 1.03 * fine.length
    assert big.full_grid_fallbacks == 0


# --- line of sight and shortcutting -----------------------------------------------------------

def test_line_of_sight_refuses_diagonal_corner_cutting():
    """Touching a blocked corner is not clear."""
    blocked = np.zeros((4, 4), dtype=bool)
    blocked[0, 1] = blocked[1, 0] = True        # (row, col): diagonal pair round (0,0)-(1,1)
    assert not line_of_sight(blocked, (0, 0), (1, 1))
    assert not line_of_sight(blocked, (0, 0), (3, 3))
    assert line_of_sight(blocked, (2, 2), (3, 3))
    assert line_of_sight(blocked, (2, 0), (3, 3))
    # Only one of the two corner cells blocked: the segment still touches it.
    blocked[1, 0] = False
    assert not line_of_sight(blocked, (0, 0), (1, 1))
    # Off the grid is blocked.
    assert not line_of_sight(blocked, (3, 3), (4, 3))


@pytest.mark.parametrize('seed', range(4))
def test_line_of_sight_is_conservative(seed):
    """A clear segment touches no blocked cell (dense sampling)."""
    rng = np.random.default_rng(seed)
    blocked = rng.random((30, 30)) < 0.05
    pairs = rng.integers(0, 30, size=(300, 2, 2))
    t = np.linspace(0.0, 1.0, 2001)[:, np.newaxis]
    said_clear = 0
    for a, b in pairs:
        if not line_of_sight(blocked, a, b):
            continue
        said_clear += 1
        samples = a + t * (b - a)
        # Every cell the segment touches (points on a cell border touch both sides).
        for eps in (-1e-7, 1e-7):
            cols = np.floor(samples[:, 0] + 0.5 + eps).astype(int)
            rows = np.floor(samples[:, 1] + 0.5 + eps).astype(int)
            inside = (cols >= 0) & (cols < 30) & (rows >= 0) & (rows < 30)
            assert not np.any(blocked[rows[inside], cols[inside]])
            cols2 = np.floor(samples[:, 0] + 0.5 - eps).astype(int)
            assert not np.any(blocked[rows[inside], np.clip(cols2[inside], 0, 29)])
    assert said_clear > 20


def test_shortcut_keeps_the_corner_of_an_l_path():
    """An L path keeps its corner, an open path only its ends."""
    blocked = np.zeros((10, 10), dtype=bool)
    blocked[3:, :7] = True                          # the block inside the L's corner
    path = [(c, 1) for c in range(0, 9)] + [(8, r) for r in range(2, 10)]
    kept = shortcut(blocked, path)
    assert kept.tolist() == [[0, 1], [8, 1], [8, 9]] or (
        len(kept) == 3 and kept[0].tolist() == [0, 1] and kept[-1].tolist() == [8, 9])
    for a, b in zip(kept[:-1], kept[1:]):
        assert line_of_sight(blocked, a, b)
    # In the open, a path collapses to its two ends.
    assert shortcut(np.zeros((10, 10), dtype=bool), path).tolist() == [[0, 1], [8, 9]]


def test_shortcut_keeps_points_in_order():
    """Shortcutting keeps a subset of the points in order."""
    blocked = np.zeros((20, 20), dtype=bool)
    blocked[5:15, 8:12] = True
    path = np.array([(2, 10), (2, 17), (10, 17), (18, 17), (18, 10), (18, 2), (10, 2)])
    kept = shortcut(blocked, path)
    positions = [int(np.nonzero(np.all(path == k, axis=1))[0][0]) for k in kept]
    assert positions == sorted(positions) and positions[0] == 0 and positions[-1] == 6


# --- route following --------------------------------------------------------------------------

L_ROUTE = np.array([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0]])


def test_progress_along_projects_onto_the_nearest_segment():
    """Projection arc length and segment."""
    assert progress_along(L_ROUTE, (1.5, -0.3)) == (pytest.approx(1.5), 0)
    assert progress_along(L_ROUTE, (4.3, 2.0)) == (pytest.approx(6.0), 1)
    assert progress_along(L_ROUTE, (-1.0, -1.0)) == (pytest.approx(0.0), 0)
    assert progress_along(L_ROUTE, (5.0, 9.0)) == (pytest.approx(8.0), 1)


def test_progress_along_a_route_that_loops_back():
    """start_index keeps a loop from being short-cut."""
    # Out along y = 0 and back along y = 1: a point midway is as near to both.
    loop = np.array([[0.0, 0.0], [5.0, 0.0], [5.0, 1.0], [0.0, 1.0]])
    assert progress_along(loop, (1.0, 0.5)) == (pytest.approx(1.0), 0)
    assert progress_along(loop, (1.0, 0.5), start_index=2) == (pytest.approx(10.0), 2)


def test_carrot_goes_round_the_corner():
    """The carrot follows the route round a corner."""
    point, segment = carrot(L_ROUTE, (3.5, 0.1), 1.0)
    assert np.allclose(point, [4.0, 0.5])
    assert segment == 0
    point, segment = carrot(L_ROUTE, (4.1, 1.0), 1.5)
    assert np.allclose(point, [4.0, 2.5]) and segment == 1


def test_carrot_past_the_end_is_the_goal():
    """Lookahead past the end gives the goal."""
    point, _ = carrot(L_ROUTE, (3.9, 3.0), 50.0)
    assert np.array_equal(point, L_ROUTE[-1])
    point, _ = carrot(L_ROUTE, (4.0, 4.0), 0.5)
    assert np.array_equal(point, L_ROUTE[-1])


def test_carrot_is_pulled_back_until_visible():
    """A hidden carrot is pulled back toward the robot."""
    # Only the first leg is visible (the corner hides the second).
    def visible(p):
        return abs(p[1]) <= 1e-9

    point, segment = carrot(L_ROUTE, (3.0, 0.0), 2.0, visible=visible)
    assert visible(point) and 3.0 <= point[0] <= 4.0 + 1e-9
    assert segment == 0
    # Nothing ahead visible: the projection itself.
    point, _ = carrot(L_ROUTE, (3.0, 0.2), 2.0, visible=lambda p: False)
    assert np.allclose(point, [3.0, 0.0])


def test_carrot_respects_progress_index_on_a_loop():
    """progress_index selects the leg of a loop."""
    loop = np.array([[0.0, 0.0], [5.0, 0.0], [5.0, 1.0], [0.0, 1.0]])
    point, segment = carrot(loop, (1.0, 0.5), 1.0, progress_index=2)
    assert np.allclose(point, [0.0, 1.0]) and segment == 2
    point, segment = carrot(loop, (1.0, 0.5), 1.0)
    assert np.allclose(point, [2.0, 0.0]) and segment == 0


def test_unreachable_carries_its_reason():
    """Unreachable keeps its reason and prints it."""
    error = Unreachable('no_path', 'walls')
    assert error.reason == 'no_path' and str(error) == 'no_path: walls'
    assert str(Unreachable('no_path')) == 'no_path'
