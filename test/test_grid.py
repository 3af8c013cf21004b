"""orca_nav.core.routes.grid: GridMap from an OccupancyGrid, conversions, inflation, outlines."""

import math

import numpy as np
from orca_nav.core.routes.grid import GridMap, MapError
import pytest

RES = 0.1  # [m / cell]


def grid_of(occupancy, resolution=RES, origin=(0.0, 0.0, 0.0), **kwargs):
    """Return a GridMap of an (H, W) int array in the message convention (row 0 = lowest y)."""
    occupancy = np.asarray(occupancy)
    height, width = occupancy.shape
    return GridMap.from_occupancy(occupancy.ravel().tolist(), width, height, resolution, origin,
                                  **kwargs)


def rectangle_map(height=20, width=30, rows=(5, 12), cols=(8, 20)):
    """Return an (H, W) occupancy with one occupied rectangle rows x cols (end excluded)."""
    occupancy = np.zeros((height, width), dtype=int)
    occupancy[rows[0]:rows[1], cols[0]:cols[1]] = 100
    return occupancy


# --- from_occupancy ---------------------------------------------------------------------------

@pytest.mark.parametrize('kwargs, message', [
    ({'data': [0] * 5, 'width': 2, 'height': 3}, 'data has 5 values'),
    ({'data': [], 'width': 0, 'height': 3}, 'zero size'),
    ({'data': [], 'width': 3, 'height': 0}, 'zero size'),
    ({'resolution': 0.0}, 'resolution'),
    ({'resolution': -0.05}, 'resolution'),
    ({'resolution': math.nan}, 'resolution'),
    ({'resolution': math.inf}, 'resolution'),
    ({'origin': (0.0, math.nan, 0.0)}, 'origin'),
    ({'origin': (math.inf, 0.0, 0.0)}, 'origin'),
    ({'origin': (0.0, 0.0, math.nan)}, 'origin'),
    ({'max_cells': 5}, 'map has 6 cells, above max_cells 5'),
    ({'data': [-1] * 6}, 'no known cell'),
    ({'data': [100] * 6}, 'no free cell'),
    ({'data': [100, -1, -1, 100, 100, 100]}, 'no free cell'),
    ({'data': [0, 0, 0, 0, 0, 101]}, 'outside -1..100'),
    ({'data': [0, 0, 0, 0, 0, -2]}, 'outside -1..100'),
    ({'occupied_threshold': 0}, 'occupied_threshold'),
])
def test_from_occupancy_rejects_unusable_maps(kwargs, message):
    """Each unusable map raises MapError with its reason."""
    args = {'data': [0] * 6, 'width': 3, 'height': 2, 'resolution': 0.05}
    args.update(kwargs)
    with pytest.raises(MapError, match=message):
        GridMap.from_occupancy(**args)


def test_map_error_is_a_value_error():
    """A MapError is a ValueError, so generic callers catch it."""
    assert issubclass(MapError, ValueError)


def test_unknown_cells_free_only_when_asked():
    """Unknown cells block unless unknown_is_free."""
    data = [100, -1, -1, 100, 100, 100]
    with pytest.raises(MapError, match='no free cell'):
        GridMap.from_occupancy(data, 3, 2, 0.05)
    grid = GridMap.from_occupancy(data, 3, 2, 0.05, unknown_is_free=True)
    assert grid.unknown_is_free
    assert grid.unknown.tolist() == [[False, True, True], [False, False, False]]
    assert not grid.obstacles[0, 1] and grid.obstacles[0, 0]


def test_threshold_splits_occupied_from_free():
    """Values at or above the threshold are occupied, -1 unknown."""
    occupancy = np.array([[0, 30, 64, 65, 99, 100, -1]])
    grid = grid_of(occupancy)
    assert grid.occupied.tolist() == [[False, False, False, True, True, True, False]]
    assert grid.unknown.tolist() == [[False] * 6 + [True]]
    # Unknown is an obstacle unless unknown_is_free.
    assert grid.obstacles.tolist() == [[False, False, False, True, True, True, True]]
    lower = grid_of(occupancy, occupied_threshold=30)
    assert lower.occupied.tolist() == [[False, True, True, True, True, True, False]]


def test_message_layout_row_zero_is_lowest_y():
    """data[r * W + c] is row r (from the lowest y), column c."""
    occupancy = np.zeros((4, 5), dtype=int)
    occupancy[3, 1] = 100                    # data[3 * 5 + 1]
    grid = GridMap.from_occupancy(occupancy.ravel(), 5, 4, 0.5, origin=(-1.0, 2.0, 0.0))
    assert grid.shape == (4, 5)
    assert np.argwhere(grid.occupied).tolist() == [[3, 1]]
    # Cell (column 1, row 3): corner at origin + (1, 3) * 0.5, centre a quarter metre further.
    assert grid.cell_to_world([[1, 3]]).tolist() == [[-0.25, 3.75]]
    assert grid.world_to_cell([-0.25, 3.75]).tolist() == [[1, 3]]


def test_arrays_are_read_only():
    """The masks cannot be changed behind the caches."""
    grid = grid_of(rectangle_map())
    with pytest.raises(ValueError):
        grid.occupied[0, 0] = True
    with pytest.raises(ValueError):
        grid.blocked(0.2)[0, 0] = True


# --- conversions ------------------------------------------------------------------------------

@pytest.mark.parametrize('origin', [(0.0, 0.0, 0.0), (3.0, -2.0, 0.0), (3.0, -2.0, 0.7),
                                    (-1.0, 5.0, -2.5), (0.0, 0.0, math.pi / 2)])
def test_cell_world_round_trip(origin):
    """Cell centres map back to their cells, rotated origins included."""
    grid = grid_of(rectangle_map(), resolution=0.05, origin=origin)
    rng = np.random.default_rng(3)
    cells = np.stack([rng.integers(0, 30, 200), rng.integers(0, 20, 200)], axis=1)
    centres = grid.cell_to_world(cells)
    assert np.array_equal(grid.world_to_cell(centres), cells)
    assert np.all(grid.inside(centres))
    # Any point within a cell maps to that cell.
    offsets = rng.uniform(-0.49, 0.49, size=(200, 2)) * 0.05
    yaw = origin[2]
    rotation = np.array([[math.cos(yaw), -math.sin(yaw)], [math.sin(yaw), math.cos(yaw)]])
    assert np.array_equal(grid.world_to_cell(centres + offsets @ rotation.T), cells)


def test_rotated_origin_places_cells_along_rotated_axes():
    """A yawed origin turns the cell axes."""
    grid = grid_of(rectangle_map(), resolution=0.5, origin=(1.0, 2.0, math.pi / 2))
    # Map x runs along world +y, map y along world -x.
    assert np.allclose(grid.cell_to_world([[0, 0]]), [[0.75, 2.25]])
    assert np.allclose(grid.cell_to_world([[2, 0]]), [[0.75, 3.25]])
    assert np.allclose(grid.cell_to_world([[0, 2]]), [[-0.25, 2.25]])
    assert grid.world_to_cell([[0.75, 3.25]]).tolist() == [[2, 0]]


def test_inside_flags_points_off_the_map():
    """inside() is False exactly off the map."""
    grid = grid_of(rectangle_map(height=10, width=20), origin=(1.0, 1.0, 0.0))
    points = [[1.01, 1.01], [2.99, 1.99], [0.99, 1.5], [1.5, 2.01], [3.01, 1.5], [2.0, 0.9]]
    assert grid.inside(points).tolist() == [True, True, False, False, False, False]
    assert grid.world_to_cell(points[2:3])[0, 0] < 0


# --- inflation and distances ------------------------------------------------------------------

def brute_blocked(obstacles, clearance_cells):
    """(H, W) bool: cells whose centre is within clearance of an obstacle centre (brute force)."""
    rows, cols = np.nonzero(obstacles)
    grid_rows, grid_cols = np.mgrid[0:obstacles.shape[0], 0:obstacles.shape[1]]
    if len(rows) == 0:
        return np.zeros(obstacles.shape, dtype=bool)
    distance = np.hypot(grid_rows[..., np.newaxis] - rows, grid_cols[..., np.newaxis] - cols)
    return distance.min(axis=-1) <= clearance_cells + 1e-9


@pytest.mark.parametrize('seed', range(6))
@pytest.mark.parametrize('clearance', [0.0, 0.1, 0.15, 0.2, 0.25, 0.5, 1.3])
def test_blocked_equals_brute_force(seed, clearance):
    """Inflation equals the brute-force centre distance test."""
    rng = np.random.default_rng(seed)
    occupancy = np.where(rng.random((17, 23)) < 0.06, 100, 0)
    occupancy[rng.random((17, 23)) < 0.03] = -1
    occupancy[0, 0] = 0
    grid = grid_of(occupancy)
    expected = brute_blocked(grid.occupied | grid.unknown, clearance / RES)
    assert np.array_equal(grid.blocked(clearance), expected)
    free_unknown = grid_of(occupancy, unknown_is_free=True)
    assert np.array_equal(free_unknown.blocked(clearance),
                          brute_blocked(free_unknown.occupied, clearance / RES))


def test_blocked_is_cached_per_clearance():
    """blocked() is cached per clearance and grows with it."""
    grid = grid_of(rectangle_map())
    assert grid.blocked(0.2) is grid.blocked(0.2)
    assert grid.blocked(0.3) is not grid.blocked(0.2)
    assert np.count_nonzero(grid.blocked(0.3)) > np.count_nonzero(grid.blocked(0.2))
    with pytest.raises(ValueError):
        grid.blocked(-0.1)


def test_blocked_without_obstacles_is_empty():
    """A map without obstacles blocks nothing."""
    grid = grid_of(np.zeros((5, 6), dtype=int))
    assert not np.any(grid.blocked(10.0))
    assert np.all(np.isinf(grid.distance_to_obstacle([[0.2, 0.2], [0.5, 0.3]])))


def brute_distance(grid, points):
    """(K,) distance [m] from each point to the nearest obstacle square (brute force)."""
    local = grid.world_to_local(points)
    rows, cols = np.nonzero(grid.obstacles)
    dx = np.maximum(np.abs(local[:, 0:1] - (cols + 0.5)) - 0.5, 0.0)
    dy = np.maximum(np.abs(local[:, 1:2] - (rows + 0.5)) - 0.5, 0.0)
    return np.hypot(dx, dy).min(axis=1) * grid.resolution


@pytest.mark.parametrize('origin', [(0.0, 0.0, 0.0), (2.0, 1.0, 0.4)])
def test_distance_to_obstacle_matches_brute_force_within_a_cell(origin):
    """EDT distances match brute force within a cell."""
    rng = np.random.default_rng(11)
    occupancy = np.where(rng.random((25, 30)) < 0.02, 100, 0)
    grid = grid_of(occupancy, origin=origin)
    local = rng.uniform([0.0, 0.0], [30.0, 25.0], size=(300, 2))
    points = grid.local_to_world(local)
    distance = grid.distance_to_obstacle(points)
    expected = brute_distance(grid, points)
    assert np.all(distance >= expected - 1e-9)
    assert np.all(distance <= expected + 1.5 * RES)
    assert np.mean(np.abs(distance - expected) < 1e-9) > 0.9


def test_distance_to_obstacle_exact_cases():
    """Distances to a single obstacle cell, and off the map."""
    occupancy = np.zeros((10, 10), dtype=int)
    occupancy[4, 4] = 100                                # square [0.4, 0.5] x [0.4, 0.5]
    grid = grid_of(occupancy)
    points = [[0.45, 0.45], [0.8, 0.45], [0.45, 0.1], [0.8, 0.8], [-0.5, 0.5]]
    distance = grid.distance_to_obstacle(points)
    assert np.allclose(distance[:4], [0.0, 0.3, 0.3, math.hypot(0.3, 0.3)])
    # Off the map is unknown, hence an obstacle.
    assert distance[4] == 0.0
    free_outside = grid_of(occupancy, unknown_is_free=True)
    assert free_outside.distance_to_obstacle([[-0.5, 0.45]])[0] == pytest.approx(0.9)
    assert np.isnan(grid.distance_to_obstacle([[math.nan, 0.5]])[0])
    assert not grid.inside([[math.nan, 0.5], [0.5, math.inf]]).any()


# --- wall outlines ----------------------------------------------------------------------------

def boundary_edges(occupied):
    """(E, 2, 2) map-frame [cells] edges between occupied cells and free cells or the border."""
    padded = np.pad(occupied, 1)
    rows, cols = np.nonzero(padded[:, :-1] != padded[:, 1:])        # vertical edges
    vertical = np.stack([np.stack([cols, rows - 1], 1), np.stack([cols, rows], 1)], 1)
    rows, cols = np.nonzero(padded[:-1, :] != padded[1:, :])        # horizontal edges
    horizontal = np.stack([np.stack([cols - 1, rows], 1), np.stack([cols, rows], 1)], 1)
    return np.concatenate([vertical, horizontal]).astype(float)


def point_segment_distance(points, segments):
    """(K,) distance from each (K, 2) point to the nearest of the (M, 2, 2) segments."""
    a, b = segments[:, 0], segments[:, 1]
    d = b - a
    t = np.clip(np.einsum('kmi,mi->km', points[:, None, :] - a, d) / np.sum(d * d, 1), 0, 1)
    closest = a + t[..., None] * d
    return np.hypot(*(points[:, None, :] - closest).transpose(2, 0, 1)).min(axis=1)


def check_wall_segments(grid, tolerance):
    """Assert the wall_segments contract on a grid for one tolerance [m]."""
    segments = grid.wall_segments(tolerance)
    assert segments.ndim == 3 and segments.shape[1:] == (2, 2) and len(segments) > 0
    lengths = np.hypot(*(segments[:, 1] - segments[:, 0]).T)
    assert np.all(lengths > 0.0)
    # Every occupied/free cell edge (ends and middle) lies within tolerance of a segment.
    edges = grid.local_to_world(boundary_edges(grid.occupied).reshape(-1, 2)).reshape(-1, 2, 2)
    probes = np.concatenate([edges[:, 0], edges[:, 1], edges.mean(axis=1)])
    assert np.max(point_segment_distance(probes, segments)) <= tolerance + 1e-9
    # No point of a segment is farther than tolerance into free space.
    t = np.linspace(0.0, 1.0, 41)[:, None, None]
    samples = (segments[:, 0] + t * (segments[:, 1] - segments[:, 0])).reshape(-1, 2)
    rows, cols = np.nonzero(grid.occupied)
    local = grid.world_to_local(samples)
    dx = np.maximum(np.abs(local[:, 0:1] - (cols + 0.5)) - 0.5, 0.0)
    dy = np.maximum(np.abs(local[:, 1:2] - (rows + 0.5)) - 0.5, 0.0)
    into_free = np.hypot(dx, dy).min(axis=1) * grid.resolution
    assert np.max(into_free) <= tolerance + 1e-9
    return segments


@pytest.mark.parametrize('origin', [(0.0, 0.0, 0.0), (-3.0, 2.0, 0.0), (1.0, 1.0, 0.6)])
def test_wall_segments_outline_a_rectangle(origin):
    """A rectangle block gives its 4 sides."""
    grid = grid_of(rectangle_map(), origin=origin)
    segments = check_wall_segments(grid, 0.5 * RES)
    # A rectangle needs 4 sides (the contour may start mid-side and split one in two).
    assert 4 <= len(segments) <= 5
    assert np.sum(np.hypot(*(segments[:, 1] - segments[:, 0]).T)) == pytest.approx(
        2 * (1.2 + 0.7))
    # The default tolerance is half a cell.
    assert np.array_equal(grid.wall_segments(), segments)


@pytest.mark.parametrize('seed', range(5))
@pytest.mark.parametrize('tolerance', [0.0, 0.02, 0.05, 0.15])
def test_wall_segments_contract_on_random_maps(seed, tolerance):
    """Segments cover every wall edge and stay out of free space."""
    rng = np.random.default_rng(seed)
    occupancy = np.where(rng.random((24, 28)) < 0.2, 100, 0)
    # Some blobs and a diagonal wall, touching the map border too.
    occupancy[np.add.outer(np.arange(24), np.arange(28)) % 17 == 0] = 100
    occupancy[0:4, 20:28] = 100
    grid = grid_of(occupancy)
    check_wall_segments(grid, tolerance)


def test_wall_segments_of_a_diagonal_wall_are_few():
    """A slanted staircase wall simplifies to few segments."""
    occupancy = np.zeros((40, 40), dtype=int)
    occupancy[np.abs(np.subtract.outer(np.arange(40), np.arange(40))) <= 1] = 100
    grid = grid_of(occupancy)
    segments = check_wall_segments(grid, 0.5 * RES)
    # A staircase simplified at half a cell: long segments, not one per cell edge.
    assert len(segments) < 12


def test_wall_segments_of_a_map_without_walls():
    """No occupied cell, no segment."""
    grid = grid_of(np.zeros((4, 4), dtype=int))
    assert grid.wall_segments().shape == (0, 2, 2)
