"""Routes of robots with a footprint: lethal on the inscribed disc, the polygon turned along."""

import math

import numpy as np
from orca_nav.control.navigation import NavigationConfig, Navigator, planner_keys
from orca_nav.control.planning import make_planner
from orca_nav.control.warmup import InlineExecutor
from orca_nav.core.geometry import convex_gap, placed_polygon
from orca_nav.core.routes import planner as planner_module
from orca_nav.core.routes.footprint import inscribed_radius, polygon_width
from orca_nav.core.routes.grid import GridMap
from orca_nav.core.routes.planner import LETHAL_TOLERANCE_CELLS, RoutePlanner, Unreachable
import pytest

RES = 0.05      # [m / cell]
CART = np.array([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]])
PADDING = 0.01  # [m] footprint_padding
CIRCUMSCRIBED = math.hypot(0.45, 0.3) + PADDING
COSTS = {'margin': 0.1, 'inflation_band': 0.3, 'tolerance': LETHAL_TOLERANCE_CELLS}


def grid_of(occupancy):
    """Return a GridMap of an (H, W) int array (row 0 = lowest y) at the origin."""
    height, width = occupancy.shape
    return GridMap.from_occupancy(occupancy.ravel(), width, height, RES, (0.0, 0.0, 0.0))


def two_rooms(door):
    """10 m x 6 m, two rooms split by a wall at x = 5.0..5.05 m, a door ``door`` m wide."""
    occupancy = np.zeros((120, 200), dtype=int)
    occupancy[[0, -1], :] = occupancy[:, [0, -1]] = 100
    occupancy[:, 100] = 100
    cells = int(round(door / RES))
    occupancy[60 - cells // 2:60 - cells // 2 + cells, 100] = 0
    return grid_of(occupancy)


def l_corridor(width):
    """Return an L corridor ``width`` m wide: along y = 1.05 m from x = 0.5 m, up x = 6 m."""
    occupancy = np.full((120, 140), 100)
    cells = int(round(width / RES))
    occupancy[21:21 + cells, 10:120] = 0      # the horizontal leg
    occupancy[21:110, 120 - cells:120] = 0    # the vertical leg
    return grid_of(occupancy)


def cart_planner(grid, **kwargs):
    """Return the RoutePlanner of the cart (padding PADDING), as the navigator builds it."""
    return RoutePlanner(grid, CIRCUMSCRIBED, footprint=CART, **COSTS, **kwargs)


def footprint_collisions(grid, points, step=0.02):
    """Return the points (turned along the route) where the padded cart meets an obstacle."""
    rows, cols = np.nonzero(grid.obstacles)
    centres = (np.stack([cols, rows], axis=1) + 0.5) * RES
    half = RES / 2.0
    square = np.array([[half, half], [-half, half], [-half, -half], [half, -half]])
    grown = CART + np.sign(CART) * PADDING
    bad = []
    for a, b in zip(points[:-1], points[1:]):
        heading = math.atan2(b[1] - a[1], b[0] - a[0])
        n = max(int(np.ceil(np.linalg.norm(b - a) / step)), 1) + 1
        for p in a + np.linspace(0.0, 1.0, n)[:, np.newaxis] * (b - a):
            polygon = placed_polygon(grown, (p[0], p[1], heading))
            near = centres[np.hypot(*(centres - p).T) < CIRCUMSCRIBED + RES]
            if any(convex_gap(polygon, c + square) < -1e-9 for c in near):
                bad.append(p)
    return bad


def test_polygon_measures():
    assert inscribed_radius(CART) == pytest.approx(0.3)
    assert polygon_width(CART) == pytest.approx(0.6)
    triangle = [[1.0, 0.0], [-0.5, 0.5], [-0.5, -0.5]]
    assert polygon_width(triangle) == pytest.approx(3.0 / math.sqrt(10.0))


@pytest.mark.parametrize('goal', [(8.0, 3.0), (8.5, 5.2), (9.0, 0.8)])
def test_cart_passes_a_door_turned_along_it(goal):
    grid = two_rooms(0.8)
    route = cart_planner(grid).plan((1.0, 3.0), goal)
    assert route.points[0].tolist() == [1.0, 3.0] and route.points[-1].tolist() == list(goal)
    assert np.any(route.points[:, 0] > 5.0)
    assert footprint_collisions(grid, route.points) == []
    # Through the door it travels along x (the cart turned to the door).
    a, b = route.points[:-1], route.points[1:]
    door = np.flatnonzero((a[:, 0] <= 5.0) & (b[:, 0] >= 5.05))
    assert len(door) == 1
    assert abs(b[door[0], 1] - a[door[0], 1]) < 0.01


def test_disc_of_the_carts_circumscribed_radius_does_not_pass():
    planner = RoutePlanner(two_rooms(0.8), CIRCUMSCRIBED, **COSTS)
    with pytest.raises(Unreachable) as error:
        planner.plan((1.0, 3.0), (8.0, 3.0))
    assert error.value.reason == 'no_path'


def test_door_narrower_than_the_cart_is_refused_and_named():
    with pytest.raises(Unreachable) as error:
        cart_planner(two_rooms(0.55)).plan((1.0, 3.0), (8.0, 3.0))
    assert error.value.reason == 'no_path'
    detail = str(error.value)
    assert 'is about 0.55 m wide' in detail
    assert 'this robot is 0.62 m wide' in detail, detail


def test_cart_follows_an_l_corridor(monkeypatch):
    """
    1.2 m wide: room to turn at the corner (the cart's half diagonal is 0.55 m).

    The shortcut across the corner does not fit turned along it: the heading search finds
    the way.
    """
    searches = []
    search = planner_module.heading_cells
    monkeypatch.setattr(planner_module, 'heading_cells',
                        lambda *args: searches.append(1) or search(*args))
    grid = l_corridor(1.2)
    for kwargs in ({}, {'max_fine_cells': 0}):
        route = cart_planner(grid, **kwargs).plan((1.0, 1.6), (5.4, 5.0))
        assert footprint_collisions(grid, route.points) == []
        assert route.length < 4.4 + 3.4 + 0.5
    assert searches


def test_cart_cannot_turn_the_corner_of_a_narrow_l_corridor():
    """0.9 m wide: the cart fits each leg but cannot turn between them."""
    with pytest.raises(Unreachable) as error:
        cart_planner(l_corridor(0.9)).plan((1.0, 1.5), (5.55, 5.0))
    assert error.value.reason == 'no_path'
    assert '0.62 m wide' in str(error.value)


def test_cart_turns_to_a_door_before_it():
    """A door 0.65 m wide near a corner, approached at a slant: straight through it."""
    occupancy = np.zeros((120, 200), dtype=int)
    occupancy[[0, -1], :] = occupancy[:, [0, -1]] = 100
    occupancy[:, 100] = 100
    occupancy[24:37, 100] = 0          # 0.65 m door at y = 1.2..1.85 m
    grid = grid_of(occupancy)
    route = cart_planner(grid).plan((1.0, 5.0), (9.0, 5.0))
    assert footprint_collisions(grid, route.points) == []


def test_planner_keys_of_discs_are_unchanged():
    radius, true_radius = np.array([0.4, 0.6]), np.array([0.3, CIRCUMSCRIBED])
    config = NavigationConfig()
    plain = planner_keys(radius, true_radius, config)
    assert planner_keys(radius, true_radius, config, [None, None]) == plain
    keys = planner_keys(radius, true_radius, config, [None, CART])
    assert keys[0] == plain[0] and keys[1][:5] == plain[1] and len(keys[1]) == 5 + CART.size


def test_navigator_routes_the_cart_through_the_door():
    navigator = Navigator(np.array([CIRCUMSCRIBED + 0.05]), NavigationConfig(), InlineExecutor(),
                          true_radius=np.array([CIRCUMSCRIBED]), footprints=[CART])
    navigator.set_map(two_rooms(0.8))
    pos, goal = np.array([[1.0, 3.0]]), np.array([[8.0, 3.0]])
    yes = np.ones(1, bool)
    for _ in range(3):
        navigator.update(0.0, pos, goal, yes, yes, ~yes)
    assert navigator.points[0] is not None, navigator.reason
    assert footprint_collisions(navigator.model.grid, navigator.points[0]) == []
    navigator.close()


def test_a_differential_cart_is_routed_only_where_it_can_turn_in_place():
    """A U-turn in a corridor 0.8 m wide: each leg fits the cart, the turn between does not."""
    occupancy = np.full((60, 120), 100)
    occupancy[20:36, 5:115] = 0                  # free from y = 1.0 to 1.8 m
    grid = grid_of(occupancy)
    cells = cart_planner(grid, turn_in_place=True)._footprint
    back = grid.world_to_local(np.array([[1.0, 1.4], [4.0, 1.4], [2.0, 1.4]]))
    assert cells.polyline_hits(back, np.ones(2, bool)) is None           # crabbing round
    assert np.allclose(cells.polyline_hits(back, np.ones(2, bool), turns=True), back[1])
    assert cells.turn_hits(back[1], 0.0, 0.05) is False
    assert cells.turn_hits(back[1], 0.0, math.pi / 2) is True
    # Off the map (nothing to meet) any turn fits.
    assert cells.turn_hits(np.array([1000.0, 1000.0]), 0.0, math.pi) is False


def test_planner_keys_of_differential_carts_ask_for_turns_in_place():
    radius, true_radius = np.array([0.6, 0.6]), np.array([CIRCUMSCRIBED, CIRCUMSCRIBED])
    config = NavigationConfig()
    keys = planner_keys(radius, true_radius, config, [CART, CART], [False, True])
    assert keys[1][:-1] == keys[0] and keys[1][-1] == 1.0
    grid = two_rooms(0.8)
    assert [make_planner(grid, key)._turns for key in keys] == [False, True]
