"""
Benchmark: route planning on a warehouse-sized occupancy grid.

Run from the repository root::

    python -m benchmarks.bench_routes [--robots 100] [--seed 1] [--check 3] [--shortest]

Map: 100 m x 100 m at 0.05 m (2000 x 2000 cells): outer walls, a row of offices along the
north side (0.1 m walls, 1 m doors), and a warehouse hall of shelf rows (1 m deep, 12 m long,
2.4 m aisles) with cross aisles. Robots of radius 0.25 m start and finish at random free
positions. By default the planner is the node's (cost routes for robots of radius 0.25 m:
lethal where the disc touches, margin 0.15 m = the default safety_margin + route_margin, the
default route_inflation_band and route_cost_scaling_factor); ``--shortest`` plans plain
shortest routes that keep 0.25 m from obstacle cell centres (the planner before costs).
Printed: map building, planner construction (inflation, costs, components, block graph), one
route for a new goal (target under 1 s), ``--robots`` robots with as many different goals
(target under 10 s in total), a quality check of a few routes against the full-resolution
8-neighbour path that keeps radius + margin, and the wall outline extraction (time and segment
count).
"""

import argparse
import time

import numpy as np
from orca_nav.core.routes.grid import GridMap
from orca_nav.core.routes.planner import LETHAL_TOLERANCE_CELLS, RoutePlanner, Unreachable

RESOLUTION = 0.05   # [m / cell]
SIZE = 100.0        # [m] map side
CLEARANCE = 0.25    # [m] robot radius
WALL = 0.1          # [m] office wall thickness
MARGIN = 0.15       # [m] safety_margin + route_margin (the node's defaults)
BAND = 0.3          # [m] route_inflation_band (the node's default)
TARGET_ONE_S = 1.0  # [s] one route for a new goal
TARGET_MANY_S = 10.0  # [s] all robots, each with its own goal


def warehouse(resolution=RESOLUTION, size=SIZE):
    """Return the (H, W) int8 occupancy (0 free, 100 occupied) of the benchmark warehouse."""
    n = int(round(size / resolution))
    cells = np.zeros((n, n), dtype=np.int8)

    def box(x0, y0, x1, y1):
        """Mark the rectangle [x0, x1] x [y0, y1] [m] occupied."""
        c0, c1 = int(round(x0 / resolution)), int(round(x1 / resolution))
        r0, r1 = int(round(y0 / resolution)), int(round(y1 / resolution))
        cells[max(r0, 0):min(max(r1, r0 + 1), n), max(c0, 0):min(max(c1, c0 + 1), n)] = 100

    # Outer walls.
    box(0, 0, size, WALL)
    box(0, size - WALL, size, size)
    box(0, 0, WALL, size)
    box(size - WALL, 0, size, size)
    # Offices: y in [80, 100], 10 m wide, a 1 m door in each front wall, a corridor wall
    # with doors every 20 m at y = 80.
    box(0, 80, size, 80 + WALL)
    for x in np.arange(10.0, size, 10.0):
        box(x, 80, x + WALL, size)
    for x in np.arange(0.0, size, 10.0):
        box(x + 4.5, 80, x + 5.5, 80 + WALL)    # door gap: cleared below
        cells[int(80 / resolution):int((80 + WALL) / resolution) + 1,
              int((x + 4.5) / resolution):int((x + 5.5) / resolution)] = 0
    # Shelf rows in the hall y in [5, 75]: 12 m long, 1 m deep, 2.4 m aisles, cross aisles
    # every 12 m + 3 m.
    for y in np.arange(6.0, 74.0, 3.4):
        for x in np.arange(5.0, 90.0, 15.0):
            box(x, y, x + 12.0, y + 1.0)
    # A few interior partitions with openings, so routes must detour.
    box(30, 20, 30 + WALL, 60)
    box(60, 10, 60 + WALL, 45)
    box(60, 50, 60 + WALL, 75)
    return cells


def random_free(planner, rng, count):
    """Return (count, 2) random points [m] at the centres of free (unblocked) cells."""
    rows, cols = np.nonzero(planner.free)
    pick = rng.choice(len(rows), size=count, replace=False)
    return planner.grid.cell_to_world(np.stack([cols[pick], rows[pick]], axis=1))


def main(argv=None):
    """Build the map, time the planner and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--robots', type=int, default=100)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--check', type=int, default=3,
                        help='compare this many routes with the full-grid path (slow)')
    parser.add_argument('--shortest', action='store_true',
                        help='plain shortest routes (no costs), as before cost routes')
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)

    occupancy = warehouse()
    height, width = occupancy.shape
    t0 = time.perf_counter()
    grid = GridMap.from_occupancy(occupancy.ravel(), width, height, RESOLUTION)
    t1 = time.perf_counter()
    if args.shortest:
        planner = RoutePlanner(grid, CLEARANCE)
    else:
        planner = RoutePlanner(grid, CLEARANCE, margin=MARGIN, inflation_band=BAND,
                               tolerance=LETHAL_TOLERANCE_CELLS)
    t2 = time.perf_counter()
    print(f'map {width} x {height} cells ({SIZE:.0f} m x {SIZE:.0f} m at {RESOLUTION} m), '
          f'clearance {CLEARANCE} m, '
          + ('shortest routes' if args.shortest else f'cost routes, margin {MARGIN} m'))
    print(f'GridMap.from_occupancy          {t1 - t0:8.3f} s')
    print(f'RoutePlanner construction       {t2 - t1:8.3f} s  (inflation, components, '
          f'block graph)')

    starts = random_free(planner, rng, args.robots + 1)
    goals = random_free(planner, rng, args.robots + 1)
    t0 = time.perf_counter()
    route = planner.plan(starts[-1], goals[-1])
    one = time.perf_counter() - t0
    print(f'one route, new goal             {one:8.3f} s  ({len(route.points)} points, '
          f'{route.length:.1f} m; target < {TARGET_ONE_S} s)')

    t0 = time.perf_counter()
    results = planner.plan_many(starts[:-1], goals[:-1])
    many = time.perf_counter() - t0
    routes = [r for r in results if not isinstance(r, Unreachable)]
    failed = [r.reason for r in results if isinstance(r, Unreachable)]
    print(f'{args.robots} robots, {args.robots} goals      {many:8.3f} s  '
          f'({many / max(args.robots, 1) * 1e3:.0f} ms per route; target < {TARGET_MANY_S} s)')
    print(f'  routes {len(routes)}, unreachable {len(failed)} {sorted(set(failed))}, '
          f'fields computed {planner.cost_to_go_computed}, mean length '
          f'{np.mean([r.length for r in routes]):.1f} m, mean points '
          f'{np.mean([len(r.points) for r in routes]):.1f}')

    if args.check:
        # Route quality: the any-angle route against the full-resolution 8-neighbour path
        # (which is up to 8 % longer than the true shortest path) that keeps the margin.
        t0 = time.perf_counter()
        shortest = planner if args.shortest else RoutePlanner(grid, CLEARANCE + MARGIN)
        ratios = [routes[i].length / shortest.cost_to_go(routes[i].points[-1])[
            tuple(grid.world_to_cell(routes[i].points[0])[0, ::-1])]
            for i in range(min(args.check, len(routes)))]
        print(f'quality check ({len(ratios)} routes, full-grid fields, '
              f'{time.perf_counter() - t0:.1f} s): route length / 8-neighbour path length '
              f'{", ".join(f"{r:.3f}" for r in ratios)}')

    t0 = time.perf_counter()
    segments = grid.wall_segments()
    walls = time.perf_counter() - t0
    print(f'wall_segments                   {walls:8.3f} s  ({len(segments)} segments)')
    print(f'targets: one route {"met" if one < TARGET_ONE_S else "MISSED"}, '
          f'{args.robots} routes {"met" if many < TARGET_MANY_S else "MISSED"}')


if __name__ == '__main__':
    main()
