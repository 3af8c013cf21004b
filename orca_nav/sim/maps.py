"""
Occupancy grids of the simulated world, without ROS: rasterized scenarios and map_server files.

An occupancy grid here is the tuple ``(data, width, height, resolution, origin)`` with the fields
of a ``nav_msgs/OccupancyGrid``: ``data`` an int8 array of ``width * height`` values, row-major
with row 0 at the smallest y, 100 = occupied, 0 = free, -1 = unknown; ``resolution`` [m / cell];
``origin`` the (x, y, yaw) of the lower-left corner of cell (0, 0).

- :func:`rasterize` draws a scenario's polygons and walls onto a grid.
- ``orca_nav.sim.mapfile`` reads and writes maps in the format of ROS map_server /
  nav2_map_server (a YAML file next to a PGM or PNG image): :func:`load_map_yaml` returns
  what map_server would publish, :func:`save_map_yaml` writes a trinary PGM as map_saver
  does (both also importable from here).

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
import sys

import numpy as np
from orca_nav.core.geometry import point_segment_distance, points_in_polygon
from orca_nav.sim.mapfile import (  # noqa: F401 -- the file functions, here too
    FREE, load_map_yaml, MAP_KEYS, MapFileError, MODES, OCCUPIED, save_map_yaml, UNKNOWN,
    unknown_outside)

MAX_RASTER_CELLS = 16_000_000  # a scenario rasterized finer than this is refused


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
