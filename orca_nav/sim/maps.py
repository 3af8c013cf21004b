"""
Occupancy grids of the simulated world, without ROS: rasterized scenarios and map_server files.

An occupancy grid here is the tuple ``(data, width, height, resolution, origin)`` with the fields
of a ``nav_msgs/OccupancyGrid``: ``data`` an int8 array of ``width * height`` values, row-major
with row 0 at the smallest y, 100 = occupied, 0 = free, -1 = unknown; ``resolution`` [m / cell];
``origin`` the (x, y, yaw) of the lower-left corner of cell (0, 0).

- :func:`rasterize` draws a scenario's polygons and walls onto a grid.
- :func:`load_map_yaml` reads a map in the format of ROS map_server / nav2_map_server (a YAML
  file next to a PGM or PNG image) and returns what map_server would publish.
- :func:`save_map_yaml` writes a grid in that format (trinary PGM, as map_saver does).

Run ``python -m orca_nav.sim.maps --scenario office --out config/maps/office_map.yaml
--unknown-outside`` to turn a scenario's obstacles into a map file (that is how the shipped
office map was made). Example::

>>> from orca_nav.sim.scenarios import scenario_from_dict
>>> box = [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]
>>> s = scenario_from_dict({'robots': [{'start': [-2, 0], 'goal': [2, 0]}],
...                         'obstacles': {'polygons': [box]}, 'arena': [-3, -1, 3, 1]})
>>> data, width, height, resolution, origin = rasterize(s, resolution=0.1)
>>> width, height, origin
(60, 20, (-3.0, -1.0, 0.0))
>>> grid = data.reshape(height, width)
>>> int(grid[10, 30]), int(grid[10, 5])     # the box's centre, the robot's start
(100, 0)
"""

import argparse
import math
from pathlib import Path
import sys

import numpy as np
import yaml

OCCUPIED, FREE, UNKNOWN = 100, 0, -1
MODES = ('trinary', 'scale', 'raw')
MAP_KEYS = ('image', 'resolution', 'origin', 'negate', 'occupied_thresh', 'free_thresh', 'mode')
MAX_RASTER_CELLS = 16_000_000  # a scenario rasterized finer than this is refused


class MapFileError(ValueError):
    """A map file that cannot be read, with the reason."""


# --- scenarios -> grids -----------------------------------------------------------------------

def map_extent(scenario, margin=1.0):
    """
    (xmin, ymin, xmax, ymax) [m] a rasterized scenario covers.

    The arena when the scenario has one, else the bounding box of its obstacles, grown by
    ``margin``; in both cases extended to hold every start and goal with ``margin`` around it.
    """
    points = [scenario.starts[:, :2], scenario.goals]
    if scenario.arena is not None:
        lo, hi = np.array(scenario.arena[:2], float), np.array(scenario.arena[2:], float)
    else:
        corners = [np.reshape(p, (-1, 2)) for p in scenario.polygons]
        shapes = np.concatenate(corners + [scenario.segments.reshape(-1, 2), np.zeros((0, 2))])
        if len(shapes):
            lo, hi = shapes.min(axis=0) - margin, shapes.max(axis=0) + margin
        else:
            lo, hi = np.full(2, np.inf), np.full(2, -np.inf)
    robots = np.concatenate(points)
    if len(robots):
        lo = np.minimum(lo, robots.min(axis=0) - margin)
        hi = np.maximum(hi, robots.max(axis=0) + margin)
    return float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])


def rasterize(scenario, resolution=0.05, margin=1.0):
    """
    Draw a scenario's polygons and free walls onto an occupancy grid.

    A cell is occupied when its centre lies inside a polygon, or a polygon edge cuts through the
    cell (its centre is less than half a cell from the edge), or its centre is within half a
    cell of a free wall (walls are one or two cells thick: never lost); all other cells are
    free. The grid covers :func:`map_extent` (origin on a whole number of
    cells, yaw 0). A map file of the scenario, if any, is not drawn: see :func:`scenario_grid`.
    Returns (data int8 (H*W,), width, height, resolution, (x, y, 0.0)).
    """
    resolution = float(resolution)
    if not (math.isfinite(resolution) and resolution > 0.0):
        raise ValueError(f'resolution must be positive, got {resolution}')
    xmin, ymin, xmax, ymax = map_extent(scenario, margin)
    # The corner on a whole number of cells (rounded: -30 * 0.1 is -3.0000000000000004).
    x0 = round(math.floor(xmin / resolution + 1e-9) * resolution, 9)
    y0 = round(math.floor(ymin / resolution + 1e-9) * resolution, 9)
    width = max(1, int(math.ceil((xmax - x0) / resolution - 1e-9)))
    height = max(1, int(math.ceil((ymax - y0) / resolution - 1e-9)))
    if width * height > MAX_RASTER_CELLS:
        raise ValueError(f'a {width} x {height} grid at {resolution} m is too large; use a '
                         'coarser resolution')
    occupied = np.zeros((height, width), dtype=bool)
    _draw_shapes(occupied, scenario, (x0, y0), resolution)
    data = np.where(occupied, OCCUPIED, FREE).astype(np.int8).ravel()
    return data, width, height, resolution, (x0, y0, 0.0)


def _draw_shapes(occupied, scenario, corner, resolution, yaw=0.0):
    """Mark the cells of `occupied` that the scenario's polygons and walls cover (in place)."""
    from orca_nav.core.geometry import point_segment_distance
    from orca_nav.sim.scenarios import points_in_polygon
    height, width = occupied.shape
    c, s = math.cos(yaw), math.sin(yaw)
    to_map = np.array([[c, s], [-s, c]])  # world offset -> map axes

    def cells_near(points, pad):
        """Row/column windows of the cells around (K, 2) world points, pad cells wider."""
        local = (np.asarray(points, float) - corner[:2]) @ to_map.T / resolution
        lo = np.clip(np.floor(local.min(axis=0)).astype(int) - pad, 0, [width, height])
        hi = np.clip(np.ceil(local.max(axis=0)).astype(int) + pad, 0, [width, height])
        cols, rows = np.arange(lo[0], hi[0]), np.arange(lo[1], hi[1])
        cc, rr = np.meshgrid(cols, rows)
        centres = np.stack([cc.ravel() + 0.5, rr.ravel() + 0.5], axis=1) * resolution
        return rr.ravel(), cc.ravel(), centres @ to_map + corner[:2]

    for poly in scenario.polygons:
        poly = np.asarray(poly, float)
        rows, cols, centres = cells_near(poly, 1)
        if len(rows):
            # Cells whose centre is inside, and cells an edge cuts through (a polygon thinner
            # than a cell stays visible); an edge along a cell border marks neither neighbour.
            edges = np.stack([poly, np.roll(poly, -1, axis=0)], axis=1)
            near = point_segment_distance(centres, edges).min(axis=1) < 0.5 * resolution - 1e-6
            inside = points_in_polygon(centres, poly) | near
            occupied[rows[inside], cols[inside]] = True
    for seg in scenario.segments.reshape(-1, 2, 2):
        rows, cols, centres = cells_near(seg, 2)
        if len(rows):
            # A wall is never lost: along a cell border it marks the cells on both sides.
            near = point_segment_distance(centres, seg[None])[:, 0] <= 0.5 * resolution + 1e-6
            occupied[rows[near], cols[near]] = True


def scenario_grid(scenario, resolution=0.05, margin=1.0):
    """
    Return the occupancy grid the simulator publishes on /map for a scenario.

    With a map file: that map (at its own resolution) with the scenario's polygons and walls
    drawn onto it; without one: :func:`rasterize` (scenario, resolution, margin).
    """
    occupancy = scenario.occupancy()
    if occupancy is None:
        return rasterize(scenario, resolution, margin)
    data, width, height, map_resolution, origin = occupancy
    occupied = np.zeros((height, width), dtype=bool)
    _draw_shapes(occupied, scenario, origin, map_resolution, origin[2])
    data = np.where(occupied.ravel(), np.int8(OCCUPIED), data).astype(np.int8)
    return data, width, height, map_resolution, origin


# --- map_server files ---------------------------------------------------------------------

def load_map_yaml(path):
    """
    Read a map_server map: a YAML file and its image (PGM or PNG, read with Pillow).

    YAML keys (as map_server): image (path relative to the YAML file), resolution [m / cell],
    origin [x, y, yaw] of the lower-left pixel, negate (0/1), occupied_thresh, free_thresh and
    optionally mode (trinary, the default; scale; raw). A pixel's occupancy is
    ``1 - brightness`` (``brightness`` with negate); above occupied_thresh it is 100, below
    free_thresh 0, else -1 in trinary mode or a value in 1..99 in scale mode (-1 for a
    transparent pixel); in raw mode the value is the brightness in 0..255 itself (-1 above 100).
    Row 0 of the image is the top of the map: rows are flipped into OccupancyGrid order.
    Returns (data int8 (H*W,), width, height, resolution, (x, y, yaw)); raises MapFileError.
    """
    path = Path(path)
    try:
        spec = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise MapFileError(f'{path}: cannot read the map YAML: {exc}') from None
    if not isinstance(spec, dict):
        raise MapFileError(f'{path}: expected a mapping with the keys {", ".join(MAP_KEYS)}')
    unknown = sorted(set(spec) - set(MAP_KEYS))
    if unknown:
        raise MapFileError(f'{path}: unknown keys {unknown}; valid keys: {", ".join(MAP_KEYS)}')
    for key in ('image', 'resolution', 'origin'):
        if key not in spec:
            raise MapFileError(f'{path}: missing {key!r}')
    try:
        resolution = float(spec['resolution'])
        origin = tuple(float(v) for v in spec['origin'])
        negate = bool(int(spec.get('negate', 0)))
        occupied_thresh = float(spec.get('occupied_thresh', 0.65))
        free_thresh = float(spec.get('free_thresh', 0.196))
    except (TypeError, ValueError) as exc:
        raise MapFileError(f'{path}: bad value: {exc}') from None
    mode = str(spec.get('mode', 'trinary')).lower()
    if mode not in MODES:
        raise MapFileError(f'{path}: mode must be one of {MODES}, got {spec["mode"]!r}')
    if not (math.isfinite(resolution) and resolution > 0.0):
        raise MapFileError(f'{path}: resolution must be positive, got {resolution}')
    if len(origin) != 3 or not all(math.isfinite(v) for v in origin):
        raise MapFileError(f'{path}: origin must be [x, y, yaw], got {spec["origin"]!r}')
    if not 0.0 <= free_thresh <= occupied_thresh <= 1.0:
        raise MapFileError(f'{path}: need 0 <= free_thresh <= occupied_thresh <= 1, got '
                           f'{free_thresh} and {occupied_thresh}')
    image = path.parent / str(spec['image'])
    shade, alpha = _read_image(image)
    height, width = shade.shape
    data = _occupancy_values(shade, alpha, negate, occupied_thresh, free_thresh, mode)
    # Image row 0 is the top of the map (largest y); OccupancyGrid row 0 is the bottom.
    data = data[::-1].astype(np.int8).ravel()
    return data, width, height, resolution, origin


def _read_image(path):
    """Return (brightness in 0..1, (H, W) float; opaque (H, W) bool) of an image file."""
    from PIL import Image, UnidentifiedImageError
    try:
        with Image.open(path) as img:
            img.load()
            has_alpha = img.mode in ('LA', 'RGBA', 'PA') or 'transparency' in img.info
            if img.mode in ('I', 'I;16', 'I;16B', 'I;16L', 'F'):
                values = np.asarray(img, dtype=float)
                scale = 65535.0 if img.mode.startswith('I;16') else max(values.max(), 1.0)
                return values / scale, np.ones(values.shape, bool)
            rgba = np.asarray(img.convert('RGBA'), dtype=float) / 255.0
    except (OSError, UnidentifiedImageError) as exc:
        raise MapFileError(f'cannot read the map image {path}: {exc}') from None
    # map_server averages the colour channels.
    shade = rgba[:, :, :3].mean(axis=2)
    opaque = rgba[:, :, 3] >= 1.0 if has_alpha else np.ones(shade.shape, bool)
    return shade, opaque


def _occupancy_values(shade, opaque, negate, occupied_thresh, free_thresh, mode):
    """Per-pixel OccupancyGrid values (H, W) int16 in image row order, as map_server computes."""
    if mode == 'raw':
        value = np.round(shade * 255.0)
        return np.where(value <= OCCUPIED, value, UNKNOWN).astype(np.int16)
    occ = shade if negate else 1.0 - shade
    out = np.full(shade.shape, UNKNOWN, dtype=np.int16)
    if mode == 'scale':
        span = max(occupied_thresh - free_thresh, 1e-12)
        out[:] = np.rint((occ - free_thresh) / span * 100.0)
    out[occ > occupied_thresh] = OCCUPIED
    out[occ < free_thresh] = FREE
    if mode == 'scale':
        out[~opaque] = UNKNOWN
    return out


def unknown_outside(occupancy):
    """
    Return the grid with the free space connected to the map's border marked unknown (-1).

    What a mapping run of a closed building leaves: everything outside its outer walls unseen.
    """
    from scipy import ndimage
    data, width, height, resolution, origin = occupancy
    grid = np.asarray(data, dtype=np.int8).reshape(height, width).copy()
    labels, _ = ndimage.label(grid == FREE)
    border = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    grid[np.isin(labels, border[border > 0])] = UNKNOWN
    return grid.ravel(), width, height, resolution, origin


def save_map_yaml(path, occupancy, image_format='pgm', comment=''):
    """
    Write an occupancy grid as a map_server map: ``path`` (YAML) and an image next to it.

    Trinary, as map_saver writes it: occupied 0 (black), free 254, unknown 205 with
    occupied_thresh 0.65 and free_thresh 0.196; image_format 'pgm' or 'png'; ``comment`` lines
    go at the top of the YAML. Reading the file back with :func:`load_map_yaml` gives the same
    grid. Returns the image path.
    """
    from PIL import Image
    data, width, height, resolution, origin = occupancy
    grid = np.asarray(data).reshape(height, width)
    pixels = np.full(grid.shape, 205, dtype=np.uint8)
    pixels[grid == FREE] = 254
    pixels[grid >= 65] = 0
    path = Path(path)
    image = path.with_suffix('.' + image_format)
    Image.fromarray(pixels[::-1]).save(image)
    spec = {'image': image.name, 'mode': 'trinary', 'resolution': float(resolution),
            'origin': [float(v) for v in origin], 'negate': 0, 'occupied_thresh': 0.65,
            'free_thresh': 0.196}
    header = ''.join(f'# {line}\n'.rstrip(' ') for line in comment.splitlines())
    path.write_text(header + yaml.safe_dump(spec, default_flow_style=None, sort_keys=False))
    return image


def main(argv=None):
    """Write a scenario's obstacles as a map_server map (YAML + PGM)."""
    from orca_nav.sim.scenarios import load_scenario, ScenarioError
    parser = argparse.ArgumentParser(prog='python -m orca_nav.sim.maps',
                                     description=main.__doc__)
    parser.add_argument('--scenario', required=True, help='scenario name or YAML path')
    parser.add_argument('--out', required=True, help='map YAML to write (image next to it)')
    parser.add_argument('--resolution', type=float, default=0.05, help='[m / cell]')
    parser.add_argument('--margin', type=float, default=0.5,
                        help='[m] around the obstacles when the scenario has no arena')
    parser.add_argument('--format', choices=('pgm', 'png'), default='pgm')
    parser.add_argument('--unknown-outside', action='store_true',
                        help='mark the free space connected to the map border unknown (what a '
                             'mapping run of a closed building leaves)')
    args = parser.parse_args(argv)
    try:
        scenario = load_scenario(args.scenario)
    except ScenarioError as exc:
        print(f'orca_nav.sim.maps: {exc}', file=sys.stderr)
        return 2
    occupancy = scenario_grid(scenario, args.resolution, args.margin)
    if args.unknown_outside:
        occupancy = unknown_outside(occupancy)
    arguments = sys.argv[1:] if argv is None else list(argv)
    command = ' '.join(['python -m orca_nav.sim.maps'] + arguments)
    comment = (f'The obstacles of scenario {scenario.name!r} as a map_server map, made with\n'
               f'  {command}')
    image = save_map_yaml(args.out, occupancy, args.format, comment)
    print(f'{args.out}: {occupancy[1]} x {occupancy[2]} cells at {occupancy[3]} m; {image}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
