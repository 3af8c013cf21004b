"""orca_nav.sim.maps: rasterized scenarios and map_server files (ROS-free)."""

import numpy as np
from orca_nav.sim.maps import (load_map_yaml, main, map_extent, MapFileError, rasterize,
                               save_map_yaml, scenario_grid, unknown_outside)
from orca_nav.sim.scenarios import load_scenario, scenario_from_dict
from PIL import Image
import pytest
import yaml


def _box_scenario(**extra):
    data = {'robots': [{'start': [-2.0, 0.0], 'goal': [2.0, 0.0]}],
            'obstacles': {'polygons': [[[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]],
                          'segments': [[[-1.0, 1.5], [1.0, 1.5]]]}}
    data.update(extra)
    return scenario_from_dict(data)


def _cells(occupancy):
    data, width, height, resolution, origin = occupancy
    return np.asarray(data).reshape(height, width)


def _value_at(occupancy, x, y):
    _, _, _, resolution, origin = occupancy
    col = int(np.floor((x - origin[0]) / resolution))
    row = int(np.floor((y - origin[1]) / resolution))
    return int(_cells(occupancy)[row, col])


def test_rasterize_marks_polygon_interiors_and_walls_occupied_and_the_rest_free():
    occupancy = rasterize(_box_scenario(), resolution=0.1, margin=1.0)
    data, width, height, resolution, origin = occupancy
    assert data.dtype == np.int8 and data.shape == (width * height,)
    assert set(np.unique(data)) == {0, 100}
    # The obstacles' bounding box (x -1..1, y -0.5..1.5) and the robots, grown by the margin.
    assert origin == (-3.0, -1.5, 0.0) and resolution == 0.1
    assert (width, height) == (60, 40)
    for x, y in ((0.0, 0.0), (0.45, -0.45), (-0.45, 0.45), (0.0, 1.5), (-0.95, 1.5)):
        assert _value_at(occupancy, x, y) == 100, (x, y)
    for x, y in ((0.0, 0.7), (0.65, 0.0), (-2.0, 0.0), (0.0, 1.7), (1.2, 1.5), (2.9, -1.4)):
        assert _value_at(occupancy, x, y) == 0, (x, y)
    # The 1 m box covers exactly 10 x 10 cells (its edges lie on cell borders).
    grid = _cells(occupancy)
    assert grid[10:30, 20:40].sum() // 100 == 100 + 20    # box + the wall's 20 cells ...
    assert grid[29:31, :].sum() // 100 == 40              # ... on both sides of y = 1.5


def test_rasterize_covers_the_arena_and_thin_or_diagonal_walls_stay_closed():
    scenario = _box_scenario(arena=[-4.0, -2.0, 4.0, 3.0],
                             obstacles={'segments': [[[-3.0, -1.0], [3.0, 2.0]]]})
    assert map_extent(scenario) == (-4.0, -2.0, 4.0, 3.0)
    occupancy = rasterize(scenario, resolution=0.05)
    assert occupancy[1:3] == (160, 100)
    grid = _cells(occupancy) > 0
    # Every column the diagonal wall spans has an occupied cell, 8-connected to the next one.
    rows = [np.flatnonzero(grid[:, c]) for c in range(21, 139)]
    assert all(len(r) for r in rows)
    assert all(abs(a.mean() - b.mean()) <= 1.5 for a, b in zip(rows, rows[1:]))
    with pytest.raises(ValueError, match='resolution'):
        rasterize(scenario, resolution=0.0)


def _write_pgm(path, pixels):
    Image.fromarray(np.asarray(pixels, dtype=np.uint8)).save(path)


def _write_yaml(path, image_file, **extra):
    spec = {'image': image_file, 'resolution': 0.5, 'origin': [1.0, -2.0, 0.0], 'negate': 0,
            'occupied_thresh': 0.65, 'free_thresh': 0.196}
    spec.update(extra)
    path.write_text(yaml.safe_dump(spec))
    return path


# A 3 x 2 image (rows top to bottom): black = occupied, white = free, 205 grey = unknown.
IMAGE = [[0, 255, 205],
         [255, 254, 0]]


@pytest.mark.parametrize('suffix', ['pgm', 'png'])
def test_load_map_yaml_flips_rows_and_applies_the_thresholds(tmp_path, suffix):
    _write_pgm(tmp_path / f'm.{suffix}', IMAGE)
    data, width, height, resolution, origin = load_map_yaml(
        _write_yaml(tmp_path / 'm.yaml', f'm.{suffix}'))
    assert (width, height, resolution, origin) == (3, 2, 0.5, (1.0, -2.0, 0.0))
    assert data.dtype == np.int8
    # OccupancyGrid row 0 is the bottom image row.
    assert data.tolist() == [0, 0, 100, 100, 0, -1]
    # negate: white is occupied, black free; 205 grey is then 0.80 occupied.
    data = load_map_yaml(_write_yaml(tmp_path / 'n.yaml', f'm.{suffix}', negate=1))[0]
    assert data.tolist() == [100, 100, 0, 0, 100, 100]


def test_load_map_yaml_scale_and_raw_modes_and_colour_images(tmp_path):
    pixels = np.array([[0, 128, 255, 230]], dtype=np.uint8)
    _write_pgm(tmp_path / 'g.pgm', pixels)
    # occupancy 1 - shade: 1.0, 0.498, 0.0, 0.098 -> scale maps 0.196..0.65 to 0..100.
    scale = load_map_yaml(_write_yaml(tmp_path / 's.yaml', 'g.pgm', mode='scale'))[0]
    assert scale.tolist() == [100, round((1 - 128 / 255 - 0.196) / (0.65 - 0.196) * 100), 0, 0]
    raw = load_map_yaml(_write_yaml(tmp_path / 'r.yaml', 'g.pgm', mode='raw'))[0]
    assert raw.tolist() == [0, -1, -1, -1]
    pixels = np.array([[0, 100, 255, 100]], dtype=np.uint8)
    _write_pgm(tmp_path / 'h.pgm', pixels)
    assert load_map_yaml(_write_yaml(tmp_path / 'h.yaml', 'h.pgm', mode='raw'))[0].tolist() == [
        0, 100, -1, 100]
    # An RGB PNG: channels averaged; a transparent pixel is unknown in scale mode.
    rgba = np.zeros((1, 2, 4), dtype=np.uint8)
    rgba[0, 0] = (255, 255, 255, 255)
    rgba[0, 1] = (0, 0, 0, 0)
    Image.fromarray(rgba, 'RGBA').save(tmp_path / 'c.png')
    assert load_map_yaml(_write_yaml(tmp_path / 'c.yaml', 'c.png'))[0].tolist() == [0, 100]
    assert load_map_yaml(_write_yaml(tmp_path / 'd.yaml', 'c.png', mode='scale'))[0].tolist() \
        == [0, -1]


@pytest.mark.parametrize('image_format', ['pgm', 'png'])
def test_save_and_load_round_trip(tmp_path, image_format):
    rng = np.random.default_rng(4)
    grid = rng.choice(np.array([-1, 0, 100], dtype=np.int8), size=(7, 11))
    occupancy = (grid.ravel(), 11, 7, 0.05, (-1.25, 2.5, 0.3))
    image = save_map_yaml(tmp_path / 'map.yaml', occupancy, image_format, comment='a test map')
    assert image.suffix == f'.{image_format}'
    assert (tmp_path / 'map.yaml').read_text().startswith('# a test map\n')
    data, width, height, resolution, origin = load_map_yaml(tmp_path / 'map.yaml')
    assert (width, height, resolution) == (11, 7, 0.05)
    assert origin == pytest.approx((-1.25, 2.5, 0.3))
    assert np.array_equal(data, grid.ravel())


def test_bad_map_files_are_refused_with_the_reason(tmp_path):
    _write_pgm(tmp_path / 'm.pgm', IMAGE)
    for extra, message in (({'mode': 'fancy'}, 'mode must be'),
                           ({'resolution': -1.0}, 'resolution must be positive'),
                           ({'origin': [0.0, 0.0]}, 'origin must be'),
                           ({'free_thresh': 0.9}, 'free_thresh'),
                           ({'imagee': 'x'}, 'unknown keys'),
                           ({'image': 'missing.pgm'}, 'cannot read the map image')):
        with pytest.raises(MapFileError, match=message):
            load_map_yaml(_write_yaml(tmp_path / 'bad.yaml', 'm.pgm', **extra))
    (tmp_path / 'list.yaml').write_text('[1, 2]\n')
    with pytest.raises(MapFileError, match='expected a mapping'):
        load_map_yaml(tmp_path / 'list.yaml')


def test_scenario_grid_of_a_map_file_draws_the_scenario_polygons_on_it(tmp_path):
    grid = np.zeros((20, 40), dtype=np.int8)
    grid[:, 0] = 100
    save_map_yaml(tmp_path / 'm.yaml', (grid.ravel(), 40, 20, 0.1, (0.0, 0.0, 0.0)))
    scenario = scenario_from_dict({
        'robots': [{'start': [1.0, 1.0], 'goal': [3.5, 1.0]}], 'map': 'm.yaml',
        'obstacles': {'polygons': [[[2.0, 0.0], [2.5, 0.0], [2.5, 1.5], [2.0, 1.5]]]}},
        base_dir=tmp_path)
    occupancy = scenario_grid(scenario, resolution=0.05)     # the map's own resolution wins
    assert occupancy[1:] == (40, 20, 0.1, (0.0, 0.0, 0.0))
    assert _value_at(occupancy, 0.05, 1.0) == 100             # the map's wall
    assert _value_at(occupancy, 2.25, 0.5) == 100             # the scenario's polygon
    assert _value_at(occupancy, 2.25, 1.8) == 0
    # The simulated walls: the map's cell outlines plus the polygon's edges.
    assert scenario.obstacle_distance([[0.5, 1.0]])[0] == pytest.approx(0.4)
    assert scenario.obstacle_distance([[2.25, 0.5]])[0] < 0.0


def test_unknown_outside_marks_only_the_free_space_reaching_the_border():
    scenario = load_scenario('two_rooms')
    occupancy = unknown_outside(rasterize(scenario, 0.1))
    assert _value_at(occupancy, -5.4, 0.0) == -1               # outside the outer walls
    assert _value_at(occupancy, -3.0, 0.0) == 0                # inside a room
    assert _value_at(occupancy, 0.0, 2.0) == 100               # the wall between the rooms


def test_the_shipped_office_map_is_the_office_scenario(tmp_path):
    assert main(['--scenario', 'office', '--out', str(tmp_path / 'o.yaml'),
                 '--unknown-outside']) == 0
    fresh = load_map_yaml(tmp_path / 'o.yaml')
    shipped = load_scenario('office_mapfile').occupancy()
    assert fresh[1:] == shipped[1:]
    assert np.array_equal(fresh[0], shipped[0])
    assert (load_scenario('office_mapfile').map_file.with_suffix('.pgm').stat().st_size
            < 100_000)
