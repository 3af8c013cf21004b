"""
Doors and gaps the robot fits through: cost routes, carrots in narrow places, honest no_path.

Robots of radius 0.2 m plan with a margin of 0.15 m (safety_margin 0.05 m + route_margin
0.1 m) on a 0.05 m grid, as the node does: lethal only where the true disc touches a wall.
"""

import numpy as np
from orca_nav.control import RobotState
from orca_nav.core.routes.follow import follow_routes, pack_routes
from orca_nav.core.routes.grid import GridMap
from orca_nav.core.routes.planner import LETHAL_TOLERANCE_CELLS, RoutePlanner, Unreachable
import pytest

RES = 0.05      # [m / cell]
RADIUS = 0.2    # [m] the true disc
MARGIN = 0.15   # [m] safety_margin + route_margin
BAND = 0.3      # [m] route_inflation_band
MODES = {'fine': {}, 'blocks': {'max_fine_cells': 0}}


def planner_of(occupancy, mode='fine', radius=RADIUS):
    """Return a cost RoutePlanner for robots of ``radius`` on an (H, W) 0/100 array."""
    occupancy = np.asarray(occupancy)
    height, width = occupancy.shape
    grid = GridMap.from_occupancy(occupancy.ravel(), width, height, RES)
    return RoutePlanner(grid, radius, margin=MARGIN, inflation_band=BAND,
                        tolerance=LETHAL_TOLERANCE_CELLS, **MODES[mode])


def door_map(door_cells, wall_col=60, rows=80, cols=120, door_low=None):
    """6 m x 4 m, a wall at column ``wall_col`` (x = 3.0 m) with a door of ``door_cells`` cells."""
    occupancy = np.zeros((rows, cols), dtype=int)
    occupancy[0, :] = occupancy[-1, :] = occupancy[:, 0] = occupancy[:, -1] = 100
    occupancy[:, wall_col:wall_col + 4] = 100       # 0.2 m thick
    low = rows // 2 - door_cells // 2 if door_low is None else door_low
    occupancy[low:low + door_cells, wall_col:wall_col + 4] = 0
    return occupancy, low


def samples(points, step=0.01):
    """Return points every ``step`` [m] along the polyline (K, 2)."""
    out = [points[:1]]
    for a, b in zip(points[:-1], points[1:]):
        n = max(int(np.ceil(np.linalg.norm(b - a) / step)), 1)
        out.append(a + np.linspace(0.0, 1.0, n + 1)[1:, np.newaxis] * (b - a))
    return np.concatenate(out)


def face_distance(grid, points):
    """Return (K,) distances [m] from points to the nearest occupied cell's square."""
    rows, cols = np.nonzero(grid.obstacles)
    lo = np.stack([cols, rows], axis=1) * RES
    delta = np.maximum(np.maximum(lo[None] - points[:, None], points[:, None] - lo[None] - RES),
                       0.0)
    return np.hypot(delta[..., 0], delta[..., 1]).min(axis=1)


@pytest.mark.parametrize('mode', sorted(MODES))
@pytest.mark.parametrize('door_cells', [9, 11, 12])
def test_a_narrow_door_is_passed_within_a_cell_of_its_middle(mode, door_cells):
    """A door 0.05 to 0.2 m wider than the disc: the route crosses it at its middle."""
    occupancy, low = door_map(door_cells)
    planner = planner_of(occupancy, mode)
    route = planner.plan((1.0, 0.7), (5.0, 3.3))
    middle = (low + door_cells / 2.0) * RES            # [m] y of the door's middle
    points = samples(np.asarray(route.points))
    inside = (points[:, 0] >= 3.0) & (points[:, 0] <= 3.2)
    assert inside.any()
    assert np.abs(points[inside, 1] - middle).max() <= RES + 1e-9
    # The true disc never touches a wall.
    assert face_distance(planner.grid, points).min() > RADIUS


@pytest.mark.parametrize('mode', sorted(MODES))
def test_in_open_space_routes_keep_radius_plus_margin(mode):
    """Round a pillar and through a wide door, the route keeps radius + margin from walls."""
    occupancy, _ = door_map(30)                         # a 1.5 m door
    occupancy[20:30, 25:35] = 100                      # a pillar in the way
    planner = planner_of(occupancy, mode)
    for start, goal in [((0.6, 0.6), (5.4, 3.4)), ((0.5, 3.5), (5.5, 0.5)),
                        ((2.0, 0.6), (0.6, 2.5))]:
        route = planner.plan(start, goal)
        distance = planner.grid.distance_cells() * RES
        points = samples(np.asarray(route.points))
        cells = np.floor(points / RES).astype(int)
        # Cell centres the route crosses keep radius + margin from obstacle cell centres.
        assert distance[cells[1:-1, 1], cells[1:-1, 0]].min() >= RADIUS + MARGIN - 1e-9


@pytest.mark.parametrize('mode', sorted(MODES))
def test_the_wide_door_is_preferred_to_a_narrow_one_nearby(mode):
    """Two doors, the narrow one a little shorter: the route takes the wide one."""
    occupancy, _ = door_map(11, door_low=18)           # narrow door at y = 0.9..1.45
    occupancy[50:80, 60:64] = 0                        # and a 1.5 m one at y = 2.5..4.0
    occupancy[-1, :] = 100
    planner = planner_of(occupancy, mode)
    route = planner.plan((2.0, 1.2), (4.0, 1.2))
    crossing = samples(np.asarray(route.points))
    crossing = crossing[(crossing[:, 0] >= 3.0) & (crossing[:, 0] <= 3.2)]
    assert crossing[:, 1].min() > 2.5


@pytest.mark.parametrize('mode', sorted(MODES))
def test_a_door_as_wide_as_the_disc_is_no_path_naming_the_passage(mode):
    """A 0.4 m door for a 0.4 m disc is refused; the reason names the door and its width."""
    occupancy, low = door_map(8)
    planner = planner_of(occupancy, mode)
    with pytest.raises(Unreachable) as caught:
        planner.plan((1.0, 2.0), (5.0, 2.0))
    assert caught.value.reason == 'no_path'
    detail = caught.value.detail
    assert 'narrowest passage' in detail and 'about 0.40 m wide' in detail, detail
    assert 'needs more than 0.40 m' in detail, detail
    assert '(3.' in detail, detail                       # near x = 3.0..3.2 m
    # One cell wider: passed.
    assert planner_of(door_map(9)[0], mode).plan((1.0, 2.0), (5.0, 2.0)).length > 0.0


def test_walls_that_close_a_room_are_named_as_walls():
    """No passage at all: the reason says walls separate start and goal."""
    occupancy, _ = door_map(0)
    with pytest.raises(Unreachable) as caught:
        planner_of(occupancy).plan((1.0, 2.0), (5.0, 2.0))
    assert caught.value.reason == 'no_path'
    assert 'walls separate' in caught.value.detail


def test_one_cell_gaps_from_sensor_noise_are_not_a_passage():
    """A wall with single free cells every few cells (noise) stays a wall."""
    occupancy, _ = door_map(0)
    occupancy[5:75:4, 60:64] = 0                        # one-cell holes right through the wall
    occupancy[7:75:6, 61] = 0
    with pytest.raises(Unreachable) as caught:
        planner_of(occupancy).plan((1.0, 2.0), (5.0, 2.0))
    assert caught.value.reason == 'no_path'


def test_a_goal_inside_a_doorway_is_reached():
    """A goal in the middle of a narrow door, and one beside its middle: routes end there."""
    occupancy, low = door_map(11)
    planner = planner_of(occupancy)
    middle = (low + 5.5) * RES
    for goal in [(3.1, middle), (3.1, middle + 0.04)]:
        route = planner.plan((1.0, 1.0), goal)
        assert np.allclose(route.points[-1], goal)
        assert face_distance(planner.grid, samples(np.asarray(route.points))[:-2]).min() > \
            RADIUS - 1e-9


def test_a_robot_starting_inside_a_narrow_passage_gets_out():
    """A robot standing in a door (off its middle) is routed out through the door's middle."""
    occupancy, low = door_map(11)
    planner = planner_of(occupancy)
    middle = (low + 5.5) * RES
    for start, goal in [((3.1, middle + 0.03), (5.0, 1.0)), ((3.1, middle - 0.03), (1.0, 3.0))]:
        route = planner.plan(start, goal)
        assert np.allclose(route.points[0], start)
        points = samples(np.asarray(route.points))[3:]
        assert face_distance(planner.grid, points).min() > RADIUS - 1e-9


def test_a_single_lane_corridor_is_planned_along_its_middle():
    """A 3 m corridor 0.15 m wider than the disc: the route runs along its centre line."""
    occupancy = np.zeros((80, 120), dtype=int)
    occupancy[0, :] = occupancy[-1, :] = occupancy[:, 0] = occupancy[:, -1] = 100
    occupancy[:, 30:90] = 100
    occupancy[34:45, 30:90] = 0                          # 11 cells: 0.55 m wide
    planner = planner_of(occupancy)
    route = planner.plan((0.5, 0.5), (5.5, 3.5))
    points = samples(np.asarray(route.points))
    inside = (points[:, 0] > 1.6) & (points[:, 0] < 4.4)
    assert np.abs(points[inside, 1] - 39.5 * RES).max() <= RES + 1e-9


def test_carrots_pass_a_narrow_door_the_route_goes_through():
    """
    In front of a narrow door the carrot beyond it is in sight.

    The clearance asked shrinks to the route's, never below the disc (a jamb nearer than the
    disc still hides the carrot).
    """
    occupancy, low = door_map(9)      # 0.45 m
    planner = planner_of(occupancy)
    grid = planner.grid
    middle = (low + 4.5) * RES
    route = np.array([[2.0, middle], [4.5, middle]])
    points, offsets = pack_routes([route])
    position = np.array([[2.5, middle]])
    args = (points, offsets, np.zeros(1, np.int64), position, 0.8, grid.obstacles,
            grid.origin, RES)
    old, _, _, _ = follow_routes(*args, RADIUS + MARGIN, grid.distance_cells())
    new, _, _, lost = follow_routes(*args, RADIUS + MARGIN, grid.distance_cells(),
                                    RADIUS + LETHAL_TOLERANCE_CELLS * RES)
    assert old[0, 0] < 3.0                     # margin everywhere: held in front of the door
    assert new[0, 0] == pytest.approx(3.3)     # through the door, 0.8 m ahead
    assert not lost[0]
    # A route that grazes the jamb (not planned by the planner): the floor still holds.
    graze = np.array([[2.0, low * RES + 0.1], [4.5, low * RES + 0.1]])
    points, offsets = pack_routes([graze])
    carrot, _, _, _ = follow_routes(points, offsets, np.zeros(1, np.int64),
                                    np.array([[2.5, low * RES + 0.1]]), 0.8, grid.obstacles,
                                    grid.origin, RES, RADIUS + MARGIN, grid.distance_cells(),
                                    RADIUS + LETHAL_TOLERANCE_CELLS * RES)
    assert carrot[0, 0] < 3.0


@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_in_motion_a_robot_leaves_the_door_it_starts_in_and_ends_in_another(drive):
    """
    The controller in the loop, the default lookahead: out of a 0.5 m door, and into one.

    A robot that starts inside the door drives out and arrives; a robot whose goal is in the
    doorway reaches it; neither touches a jamb.
    """
    from test_navigation import box_map, run, wall_clearance  # noqa: I100 -- test/ on path
    grid = box_map(10.0, 8.0, [(5.0, 0.0, 5.2, 3.75), (5.0, 4.25, 5.2, 8.0)])
    for start, goal in [((5.1, 4.0, 0.3), (8.0, 6.0)), ((3.0, 2.0, 0.0), (5.1, 4.0))]:
        history, _, states = run(grid, [start], [goal], steps=800, drive=drive)
        assert states == [RobotState.REACHED], (start, goal)
        assert wall_clearance(grid, history) > RADIUS - 1e-6
