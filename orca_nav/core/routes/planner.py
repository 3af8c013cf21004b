"""
Route planning on an occupancy grid, and route following helpers (no ROS).

A :class:`RoutePlanner` plans, for robots of one radius (``clearance``), routes from starts to
goals through the free space of a :class:`~orca_nav.core.routes.grid.GridMap`:

1. lethal cells: the map's obstacles grown by ``clearance`` (plus ``tolerance`` cells; half a
   cell is where the robot's true disc touches an obstacle cell) (``grid.blocked``); the free
   cells are split into 8-connected components, so a goal in another component is ``no_path``
   at once (naming the narrowest passage on the way when one is too narrow);
2. a cost field (:func:`route_costs`, Nav2's inflation layer in spirit): a free cell costs 1,
   more near obstacles: much more within ``clearance + margin`` (the distance routes keep
   where there is room), then a cost that decays out to ``inflation_band`` beyond it;
3. a cost-to-go field is computed from the goal cell with ``skimage.graph.MCP_Geometric``
   (8-neighbour moves, lethal cells impassable), shared by all robots heading for the same goal
   cell; the cell path is the field's traceback from the start: the cheapest, so through the
   middle of a narrow door and with the full margin where there is room;
4. the cell path is shortcut greedily with a conservative line-of-sight test (an any-angle-like
   polyline) that keeps the clearance of the stretch it replaces, and its ends are replaced by
   the exact start and goal.

Large maps (more than ``max_fine_cells`` cells) are searched hierarchically: a Dijkstra search
on a graph of f x f blocks (two blocks are linked when two 8-adjacent free cells straddle their
border, so walls do not leak, and narrow doors stay open; a link that only cells within the
margin cross costs more) gives the corridor, and MCP refines it on the full-resolution cost
field in short windows along the corridor (:mod:`orca_nav.core.routes.blockgraph`); if a
window fails, the full-resolution field is used.

A start inside the inflated zone (a robot squeezed against a wall) is connected to the nearest
free cell of the goal's component within a few clearances; a goal in the inflated zone (but not
in an obstacle) is snapped to the nearest free cell within two clearances. In both cases the
route still begins at the exact start and ends at the exact goal.

Cells are written (column, row) in the public functions, like world points: (x, y) order.
"Cell coordinates" are continuous (column, row) coordinates in which the centre of cell (c, r)
is at (c, r) and the cell spans [c - 0.5, c + 0.5] x [r - 0.5, r + 0.5].

Example::

    planner = RoutePlanner(grid, clearance=0.25)    # shortest, 0.25 m from obstacle centres
    planner = RoutePlanner(grid, clearance=0.2, tolerance=0.5, margin=0.15,
                           inflation_band=0.3)     # a robot of radius 0.2: costs
    route = planner.plan(start=(1.0, 2.0), goal=(8.0, 9.5))     # raises Unreachable
    # Following the route: orca_nav.core.routes.follow.follow_routes (the whole fleet at once).
"""

from collections import OrderedDict
from dataclasses import dataclass
import math
from typing import List, Optional, Tuple, Union

import numpy as np
from numpy.typing import ArrayLike
from scipy import ndimage
from skimage.graph import MCP_Geometric

from .blockgraph import BlockGraph, coarse_factor
from .footprint import (
    FootprintCells, heading_cells, inscribed_radius, polygon_width, WINDOW_CELLS, WINDOW_RADII)
from .grid import GridMap
from .sight import segments_clear, shortcut

# Maps up to this many cells are planned with a full-resolution MCP field per goal (about 0.1 s
# on a 2-core machine); larger ones use the block graph first.
FINE_MAX_CELLS = 250_000
# Cost-to-go fields kept per planner (least recently used dropped first), and the total number
# of cells they may hold (a full-resolution MCP field takes about 30 bytes per cell).
DEFAULT_CACHE_SIZE = 16
FIELD_CACHE_CELLS = 4_000_000
# Block-graph fields (one float and one int per block) are small: keep many.
COARSE_CACHE_SIZE = 256
# A start in the inflated zone connects to a free cell at most this many clearances away (a
# robot pushed against a wall by others stands well within one clearance of it).
START_SNAP_CLEARANCES = 3.0
# A goal in the inflated zone is snapped to a free cell at most this many clearances away.
GOAL_SNAP_CLEARANCES = 2.0
# Snap radii never go below this many cells, so a clearance of a cell or less still snaps.
MIN_SNAP_CELLS = 2.0
# Snapping checks that the snap crosses no wall by point samples this far apart [cells].
SNAP_LOS_STEP = 0.05
# Route costs (Nav2's inflation layer in spirit, see route_costs): a free cell costs 1 per cell
# crossed; one nearer to an obstacle than the preferred clearance (radius + margin) NEAR_COST
# more, so routes keep the margin wherever there is room; on top, a cost that decays from
# DECAY_WEIGHT at the preferred clearance at the rate cost_scaling_factor (and grows toward the
# walls inside it, so the middle of a narrow door is the cheapest way through).
NEAR_COST = 10.0
DECAY_WEIGHT = 1.0
DEFAULT_COST_SCALING = 10.0    # [1/m]
# [cells] lethal tolerance for robots of a true radius: a cell centre within radius + half a
# cell of an obstacle cell's centre is a disc that touches the obstacle cell.
LETHAL_TOLERANCE_CELLS = 0.5

UNREACHABLE_REASONS = ('goal_outside_map', 'goal_in_obstacle', 'start_outside_map', 'no_path')


class Unreachable(Exception):
    """A goal that cannot be reached; ``reason`` is one of ``UNREACHABLE_REASONS``."""

    def __init__(self, reason: str, detail: str = '') -> None:
        """Record the reason ('goal_outside_map', ...) and a human-readable detail."""
        super().__init__(reason, detail)
        self.reason = reason
        self.detail = detail

    def __str__(self) -> str:
        """Return 'reason: detail'."""
        return f'{self.reason}: {self.detail}' if self.detail else self.reason


@dataclass(frozen=True, eq=False)
class Route:
    """
    A planned route.

    Fields:
        points: (K, 2) waypoints in the global frame [m], K >= 2; the first is the exact start,
            the last the exact goal
        length: length of the polyline through the points [m]
    """

    points: np.ndarray
    length: float


# --- route following --------------------------------------------------------------------------

def _nearest_free_cell(free: np.ndarray, obstacles: np.ndarray, labels: np.ndarray,
                       point: np.ndarray, radius: float,
                       label: Optional[int] = None) -> Optional[Tuple[int, int]]:
    """
    Return the (row, col) of the nearest free cell reachable from a point, or None.

    Inputs:
        free: (H, W) bool, the cells a robot centre may occupy
        obstacles: (H, W) bool, the map's obstacle cells (not inflated)
        labels: (H, W) int, the component label of every cell
        point: (2,) cell coordinates of the point
        radius: largest distance [cells] from the point to the cell centre
        label: if given, only free cells of this component may be chosen

    The segment from the point to the cell must not run through an obstacle cell of the
    map (not the inflation), other than the point's own cell, so a snap never crosses a
    wall (touching a wall's corner or face is allowed: the point may stand on one).
    """
    height, width = free.shape
    own = np.floor(point + 0.5).astype(np.int64)
    reach = int(math.ceil(radius)) + 2
    r0, r1 = max(own[1] - reach, 0), min(own[1] + reach + 1, height)
    c0, c1 = max(own[0] - reach, 0), min(own[0] + reach + 1, width)
    if r0 >= r1 or c0 >= c1:
        return None
    rows, cols = np.mgrid[r0:r1, c0:c1]
    distance = np.hypot(cols - point[0], rows - point[1])
    candidate = free[r0:r1, c0:c1] & (distance <= radius)
    if label is not None:
        candidate &= labels[r0:r1, c0:c1] == label
    if not np.any(candidate):
        return None
    order = np.argsort(distance[candidate], kind='stable')
    cand_rows, cand_cols = rows[candidate][order], cols[candidate][order]
    walls = obstacles[r0:r1, c0:c1].copy()
    if r0 <= own[1] < r1 and c0 <= own[0] < c1:
        walls[own[1] - r0, own[0] - c0] = False
    origin = np.array([c0, r0])
    ends = np.stack([cand_cols, cand_rows], axis=1) - origin
    visible = segments_clear(walls, np.repeat((point - origin)[np.newaxis], len(ends), 0),
                             ends, half_width=0.0, step=SNAP_LOS_STEP)
    if not np.any(visible):
        return None
    best = int(np.argmax(visible))
    return int(cand_rows[best]), int(cand_cols[best])


# --- passages and searches --------------------------------------------------------------------

class Passages:
    """Names the passage too narrow for a robot between two cells of different components."""

    def __init__(self, grid: GridMap, labels: np.ndarray, lethal: float,
                 width: Optional[float] = None) -> None:
        """
        Remember the map and its free space's components; no passage measured yet.

        Inputs:
            grid: the map
            labels: (H, W) int, the free space's component label of every cell (0: blocked)
            lethal: [m] the centre distance from an obstacle cell that is lethal
            width: [m] a footprint robot's width (its polygon's, plus the padding), or None
        """
        self.grid = grid
        self.labels = labels
        self.lethal = lethal
        self.width = width
        self._details = {}  # (start label, goal label) -> detail

    def detail(self, start_rc: Tuple[int, int], goal_rc: Tuple[int, int]) -> str:
        """
        Return ': the narrowest passage ...' naming what separates two cells, or ''.

        The widest way from one to the other (the path whose nearest obstacle is farthest)
        is found by bisection on the distance field; its narrowest point is the passage
        that is too narrow. '' when walls separate the cells (or the start is in a wall).
        """
        distance = self.grid.distance_cells()
        if distance[start_rc] <= 0.0:
            return ''
        key = (int(self.labels[start_rc]), int(self.labels[goal_rc]))
        if key[0] > 0 and key in self._details:
            return self._details[key]
        eight = np.ones((3, 3), dtype=bool)

        def joined(level):
            labels, _ = ndimage.label(distance >= level, structure=eight)
            return labels[start_rc] == labels[goal_rc] != 0

        top = min(distance[start_rc], distance[goal_rc],
                  self.lethal / self.grid.resolution + 1.0)
        levels = np.sqrt(np.arange(1, int(math.ceil(top * top)) + 1))
        levels = levels[levels <= top]
        if len(levels) == 0 or not joined(levels[0]):
            detail = ': walls separate them'
        else:
            low, high = 0, len(levels) - 1      # joined at levels[low]
            while low < high:
                mid = (low + high + 1) // 2
                low, high = (mid, high) if joined(levels[mid]) else (low, mid - 1)
            level = levels[low]
            mcp = MCP_Geometric(np.where(distance >= level, 1.0, np.inf))
            mcp.find_costs([goal_rc], ends=[start_rc])
            cells = np.array(mcp.traceback(start_rc))
            narrow = cells[int(np.argmin(distance[cells[:, 0], cells[:, 1]]))]
            x, y = self.grid.cell_to_world(narrow[::-1])[0]
            resolution = self.grid.resolution
            width = self._width_at(narrow, level) * resolution
            need = 2.0 * (self.lethal - 0.5 * resolution)
            robot = (f'this robot needs more than {need:.2f} m' if self.width is None else
                     f'this robot is {self.width:.2f} m wide (its footprint turned along the '
                     f'passage, with the padding) and needs more than that')
            detail = (f': the narrowest passage on the way, near ({x:.2f}, {y:.2f}), is about '
                      f'{width:.2f} m wide; {robot}')
        if key[0] > 0:
            self._details[key] = detail
        return detail

    def _width_at(self, cell: np.ndarray, level: float) -> float:
        """
        Return the width [cells] of the passage at a (row, col) cell ``level`` cells from walls.

        Face to face through the cell, along the line from its nearest obstacle cell: the
        distances to that one and to the first obstacle cell on the other side, less a cell.
        """
        obstacles = self.grid.obstacles
        height, width = obstacles.shape
        reach = int(math.ceil(level)) + 1
        r0, c0 = max(cell[0] - reach, 0), max(cell[1] - reach, 0)
        rows, cols = np.nonzero(obstacles[r0:cell[0] + reach + 1, c0:cell[1] + reach + 1])
        if len(rows) == 0:
            return 2.0 * level - 1.0
        offsets = np.stack([rows + r0 - cell[0], cols + c0 - cell[1]], axis=1)
        near = offsets[int(np.argmin(np.hypot(*offsets.T)))]
        away = -near / np.hypot(*near)
        step = 0.5
        # A loop over half-cell steps across the passage (a few cells).
        for k in range(1, int(4 * level / step) + 2):
            row, col = np.floor(cell + k * step * away + 0.5).astype(np.int64)
            if not (0 <= row < height and 0 <= col < width) or obstacles[row, col]:
                far = np.hypot(row - cell[0], col - cell[1])
                return float(np.hypot(*near) + far - 1.0)
        return 2.0 * level - 1.0


class CostToGo:
    """
    Cost-to-go fields toward goal cells and the cheapest cell paths they give; cached per goal.

    Fields:
        computed: number of cost-to-go fields computed so far (cache misses; on a large map,
            block-graph fields and full-resolution fallbacks both count)
        full_grid_fallbacks: routes of a large map that needed the full-resolution field
            because the block corridor held no path
    """

    def __init__(self, costs: np.ndarray, resolution: float, cache_size: int,
                 blocks: Optional[BlockGraph] = None) -> None:
        """
        Start with no field computed.

        Inputs:
            costs: (H, W) float, the cost of crossing each cell (inf where blocked)
            resolution: [m] per cell
            cache_size: number of full-resolution cost-to-go fields kept
            blocks: the block graph of a large map (its corridors are searched first) or None
        """
        self.costs = costs
        self.resolution = resolution
        self.blocks = blocks
        self.computed = 0
        self.full_grid_fallbacks = 0
        self._cache_size = max(1, int(cache_size))
        self._fields = OrderedDict()           # goal (row, col) -> (MCP, (H, W) costs [m])
        self._block_fields = OrderedDict()     # goal block -> (distance, predecessor)

    def cells(self, start_rc: tuple, goal_rc: tuple, labels: np.ndarray) -> np.ndarray:
        """
        Return the cheapest (K, 2) (row, col) cell path from start to goal.

        labels : (H, W) the free space's component labels (the corridors stay in one).
        """
        # Large map: along the block graph's corridor first.
        cells = self._coarse_cells(start_rc, goal_rc, labels) if self.blocks is not None else None
        if cells is None:
            # Small map, or the corridor missed a detour: the full grid (exact, slower).
            if self.blocks is not None:
                self.full_grid_fallbacks += 1
            cells = self._fine_cells(start_rc, goal_rc)
        return cells

    def field(self, goal_rc: tuple) -> Tuple[MCP_Geometric, np.ndarray]:
        """Return (MCP searched from the goal cell, (H, W) read-only cost-to-go [m]); cached."""
        entry = self._fields.get(goal_rc)
        if entry is not None:
            self._fields.move_to_end(goal_rc)
            return entry
        mcp = MCP_Geometric(self.costs)
        costs, _ = mcp.find_costs([goal_rc])
        costs = costs * self.resolution
        costs.setflags(write=False)
        self.computed += 1
        entry = (mcp, costs)
        self._fields[goal_rc] = entry
        limit = max(1, min(self._cache_size, FIELD_CACHE_CELLS // self.costs.size))
        while len(self._fields) > limit:
            self._fields.popitem(last=False)
        return entry

    def _fine_cells(self, start_rc: tuple, goal_rc: tuple) -> np.ndarray:
        """Return the (K, 2) (row, col) cell path from start to goal on the full grid."""
        mcp, _ = self.field(goal_rc)
        return np.array(mcp.traceback(start_rc))[::-1]

    def _block_field(self, goal_node: int) -> Tuple[np.ndarray, np.ndarray]:
        """Return the block graph's (distance, predecessor) arrays toward a goal block."""
        entry = self._block_fields.get(goal_node)
        if entry is not None:
            self._block_fields.move_to_end(goal_node)
            return entry
        entry = self.blocks.field(goal_node)
        self.computed += 1
        self._block_fields[goal_node] = entry
        while len(self._block_fields) > COARSE_CACHE_SIZE:
            self._block_fields.popitem(last=False)
        return entry

    def _coarse_cells(self, start_rc: tuple, goal_rc: tuple,
                      labels: np.ndarray) -> Optional[np.ndarray]:
        """
        Return the (K, 2) (row, col) cell path along the block graph's corridor, or None.

        None when the corridor refinement fails (free cells of a block not connected inside
        the corridor); the caller then searches the full grid.
        """
        field = self._block_field(self.blocks.block(goal_rc))
        return self.blocks.corridor_cells(start_rc, goal_rc, field, labels)


# --- the planner ------------------------------------------------------------------------------

class RoutePlanner:
    """
    Plan routes for robots of one radius through a map's free space, cheapest by a cost field.

    Fields:
        grid: the map
        clearance: robot radius [m]: cells whose centre is within ``clearance`` + ``tolerance``
            cells of an obstacle cell's centre are lethal (with tolerance 0.5, exactly the
            cells where the true disc would overlap the obstacle cell)
        margin: [m] beyond the clearance, the distance routes keep where there is room
        inflation_band, cost_scaling_factor: the decaying cost beyond clearance + margin
            (see :func:`route_costs`)
        blocked: (H, W) bool, the lethal cells (read-only)
        free: (H, W) bool, its complement: the cells a robot centre may occupy (read-only)
        costs: (H, W) float, the cost of crossing each cell (inf where blocked; read-only)
        cost_to_go_computed: number of cost-to-go fields computed so far (cache misses; on a
            large map, block-graph fields and full-resolution fallbacks both count)
        full_grid_fallbacks: routes of a large map that needed the full-resolution field
            because the block corridor held no path

    With margin 0 and inflation_band 0 every free cell costs the same: the shortest route
    that keeps ``clearance`` + ``tolerance`` cells from obstacle cell centres.
    """

    def __init__(self, grid: GridMap, clearance: float, *, margin: float = 0.0,
                 inflation_band: float = 0.0,
                 cost_scaling_factor: float = DEFAULT_COST_SCALING, tolerance: float = 0.0,
                 max_fine_cells: int = FINE_MAX_CELLS,
                 cache_size: int = DEFAULT_CACHE_SIZE,
                 footprint: Optional[ArrayLike] = None, turn_in_place: bool = False) -> None:
        """
        Inflate the map, weigh its cells and prepare the search.

        Inputs:
            grid: the map
            clearance: robot radius [m]
            margin: [m] routes keep clearance + margin from obstacles where there is room
            inflation_band: [m] the cost decays out to clearance + margin + inflation_band
            cost_scaling_factor: [1/m] how fast it decays (Nav2's cost_scaling_factor)
            tolerance: [cells] the lethal zone's extra width (0.5: where the disc touches)
            max_fine_cells: maps with more cells are searched on the block graph first
            cache_size: number of full-resolution cost-to-go fields kept
            footprint: (K, 2) [m] the robot's polygon (convex, counter-clockwise, its origin
                inside) or None (a disc). With one, ``clearance`` is its circumscribed
                radius plus padding (the padding: clearance less the farthest vertex), the
                lethal zone is its inscribed disc's (plus padding), and the band between is
                checked with the polygon turned along the route (see ``footprint``)
            turn_in_place: with a footprint, the robot cannot crab (a differential drive):
                where the route turns, the polygon turning in place there must fit too
        """
        self.grid = grid
        self.clearance = float(clearance)
        self.margin = max(float(margin), 0.0)
        self.inflation_band = max(float(inflation_band), 0.0)
        self.cost_scaling_factor = float(cost_scaling_factor)
        self.tolerance = max(float(tolerance), 0.0)
        resolution = grid.resolution
        self._footprint = None
        self._turns = bool(turn_in_place) and footprint is not None
        width = None
        if footprint is None:
            self._lethal = self.clearance + self.tolerance * resolution   # [m] centre distance
            self.blocked = grid.blocked(self._lethal)
        else:
            polygon = np.asarray(footprint, dtype=float)
            padding = max(self.clearance - float(np.hypot(*polygon.T).max()), 0.0)
            width = polygon_width(polygon) + 2.0 * padding
            self._lethal = (inscribed_radius(polygon) + padding
                            + self.tolerance * resolution)
            self._footprint = FootprintCells(grid.obstacles, grid.distance_cells(),
                                             polygon / resolution, padding / resolution,
                                             ~grid.blocked(self._lethal))
            self.blocked = self._footprint.fits == 0   # no heading fits
        self.free = ~self.blocked
        self.free.setflags(write=False)
        # 8-connected components of the free space: same connectivity as the MCP moves.
        self._labels, _ = ndimage.label(self.free, structure=np.ones((3, 3), dtype=bool))
        self.costs, roomy = route_costs(grid.distance_cells() * resolution, self.free,
                                        self.clearance + self.margin, self.inflation_band,
                                        self.cost_scaling_factor)
        # [cells] a shortcut keeps at most this from obstacles (more is not asked for).
        self._level_cap = max(self.clearance + self.margin, self._lethal) / resolution + 1e-6
        self._passages = Passages(grid, self._labels, self._lethal, width)  # no_path details
        self._blocks = None
        factor = coarse_factor(self._lethal, resolution)
        if grid.occupied.size > max_fine_cells and factor >= 2:
            # Large map: the block graph guides the search (built now, with the inflation).
            self._blocks = BlockGraph(self.free, factor, resolution, costs=self.costs,
                                      roomy=roomy, near_cost=1.0 + NEAR_COST)
        self._search = CostToGo(self.costs, resolution, cache_size, self._blocks)

    @property
    def coarse(self) -> bool:
        """Whether the planner searches a block graph first (a large map), not cells alone."""
        return self._blocks is not None

    @property
    def cost_to_go_computed(self) -> int:
        """Cost-to-go fields computed so far (``CostToGo.computed``)."""
        return self._search.computed

    @property
    def full_grid_fallbacks(self) -> int:
        """Routes of a large map that needed the full-resolution field."""
        return self._search.full_grid_fallbacks

    # --- public API ---------------------------------------------------------------------------

    def plan(self, start: ArrayLike, goal: ArrayLike) -> Route:
        """
        Plan a route from ``start`` (2,) to ``goal`` (2,) [m, global frame].

        Errors:
            Unreachable: reason 'goal_outside_map', 'goal_in_obstacle', 'start_outside_map' or
                'no_path'.
        """
        result = self.plan_many([start], [goal])[0]
        if isinstance(result, Unreachable):
            raise result
        return result

    def plan_many(self, starts: ArrayLike, goals: ArrayLike) -> List[Union[Route, Unreachable]]:
        """
        Plan one route per robot.

        Inputs:
            starts: (N, 2) start positions [m]
            goals: (N, 2) goal positions [m]

        Output:
            N items, each a Route or an Unreachable instance (not raised). Robots sharing a goal
            cell share one cost-to-go field (computed once).
        """
        starts = np.asarray(starts, dtype=float).reshape(-1, 2)
        goals = np.asarray(goals, dtype=float).reshape(-1, 2)
        if len(starts) != len(goals):
            raise ValueError(f'{len(starts)} starts but {len(goals)} goals')
        results = [None] * len(starts)
        goal_cells = []
        for goal in goals:
            try:
                goal_cells.append(self._goal_cell(goal))
            except Unreachable as error:
                goal_cells.append(error)
        # Robots grouped by goal cell, so each group's field is computed once even with a
        # small cache.
        keys = [cell if isinstance(cell, tuple) else (-1, -1) for cell in goal_cells]
        for index in sorted(range(len(starts)), key=lambda i: keys[i]):
            goal_cell = goal_cells[index]
            if isinstance(goal_cell, Unreachable):
                results[index] = Unreachable(goal_cell.reason, goal_cell.detail)
                continue
            try:
                results[index] = self._route(starts[index], goals[index], goal_cell)
            except Unreachable as error:
                results[index] = error
        return results

    def cost_to_go(self, goal: ArrayLike) -> np.ndarray:
        """
        Return the (H, W) cost-to-go [m] from every cell to ``goal`` (2,) [m] (read-only).

        Path cost along 8-neighbour moves between free cell centres: the length weighted by
        ``costs`` (the path length when every free cell costs 1); inf on blocked cells and
        where the goal cannot be reached. Cached per goal cell. A goal within clearance of a
        wall is snapped as in plan(). On a large map this is a full-resolution search (about
        2 s for 4 M cells), which plan() avoids.

        Errors:
            Unreachable: 'goal_outside_map' or 'goal_in_obstacle'.
        """
        return self._search.field(self._goal_cell(np.asarray(goal, dtype=float)))[1]

    # --- cells --------------------------------------------------------------------------------

    def _cell_coordinates(self, xy: ArrayLike) -> np.ndarray:
        """Return the (2,) cell coordinates (column, row) of a (2,) point [m]."""
        return self.grid.world_to_local(xy)[0] - 0.5

    def _snap_radius(self, clearances: float) -> float:
        """Return a snap radius [cells] of ``clearances`` robot radii (at least MIN_SNAP_CELLS)."""
        return max(clearances * self.clearance / self.grid.resolution, MIN_SNAP_CELLS)

    def _goal_cell(self, goal: np.ndarray) -> Tuple[int, int]:
        """Return the free (row, col) cell a goal [m] is planned to, or raise Unreachable."""
        if not np.all(np.isfinite(goal)) or not self.grid.inside(goal)[0]:
            raise Unreachable('goal_outside_map', f'goal {goal.tolist()} is off the map')
        col, row = self.grid.world_to_cell(goal)[0]
        if self.grid.obstacles[row, col]:
            raise Unreachable('goal_in_obstacle', f'goal {goal.tolist()} is in an obstacle cell')
        if self.free[row, col]:
            return int(row), int(col)
        # Goal within clearance of a wall: the nearest free cell within two clearances.
        cell = _nearest_free_cell(self.free, self.grid.obstacles, self._labels,
                                  self._cell_coordinates(goal),
                                  self._snap_radius(GOAL_SNAP_CLEARANCES))
        if cell is None:
            raise Unreachable('goal_in_obstacle', f'goal {goal.tolist()} is within '
                              f'{self.clearance} m of obstacles, no free cell nearby')
        return cell

    def _start_cell(self, start: np.ndarray, goal_label: int,
                    goal_rc: Tuple[int, int]) -> Tuple[int, int]:
        """Return the free (row, col) cell a start [m] is planned from, or raise Unreachable."""
        if not np.all(np.isfinite(start)) or not self.grid.inside(start)[0]:
            raise Unreachable('start_outside_map', f'start {start.tolist()} is off the map')
        col, row = self.grid.world_to_cell(start)[0]
        if self.free[row, col]:
            if self._labels[row, col] != goal_label:
                # Free start in another component than the goal's: walls separate them, or a
                # passage narrower than the robot.
                raise Unreachable('no_path', f'no path from {start.tolist()} to the goal'
                                  + self._passages.detail((int(row), int(col)), goal_rc))
            return int(row), int(col)
        # Start squeezed within clearance of a wall (or in it): join the goal's component.
        cell = _nearest_free_cell(self.free, self.grid.obstacles, self._labels,
                                  self._cell_coordinates(start),
                                  self._snap_radius(START_SNAP_CLEARANCES), goal_label)
        if cell is None:
            raise Unreachable('no_path', f'start {start.tolist()} is blocked and no free cell '
                              'leading to the goal is near it'
                              + self._passages.detail((int(row), int(col)), goal_rc))
        return cell

    def _levels(self, path: np.ndarray) -> np.ndarray:
        """
        Return the (K,) clearance [cells] each point of a (K, 2) (column, row) path asks for.

        The distance from its cell's centre to the nearest obstacle cell's, at most the
        clearance + margin the routes keep where there is room; that much on a blocked cell
        (an exact start or goal within clearance of a wall, which sees nothing then: its
        route goes by the free cell it was snapped to).
        """
        distance = self.grid.distance_cells()
        height, width = distance.shape
        cell = np.floor(path + 0.5).astype(np.int64)
        inside = ((cell[:, 0] >= 0) & (cell[:, 0] < width)
                  & (cell[:, 1] >= 0) & (cell[:, 1] < height))
        level = np.full(len(path), self._level_cap)
        rows, cols = cell[inside, 1], cell[inside, 0]
        level[inside] = np.where(self.free[rows, cols], distance[rows, cols], self._level_cap)
        return np.minimum(level, self._level_cap)

    def _route(self, start: np.ndarray, goal: np.ndarray, goal_rc: tuple) -> Route:
        """Plan one route to a goal whose planning cell is known; raise Unreachable."""
        start_rc = self._start_cell(start, self._labels[goal_rc], goal_rc)
        cells = self._search.cells(start_rc, goal_rc, self._labels)
        path = cells[:, ::-1].astype(float)     # (column, row)
        path = np.concatenate([self._cell_coordinates(start)[np.newaxis], path,
                               self._cell_coordinates(goal)[np.newaxis]])
        # Shortcuts keep the clearance of the path they replace (at most clearance + margin),
        # and do not join a point in the open to one in a narrow place.
        levels = self._levels(path)
        narrow = levels < self._level_cap
        runs = np.cumsum(np.concatenate([[0], narrow[1:] != narrow[:-1]]))
        kept = shortcut(self.grid.distance_cells(), path, levels, runs)
        if self._footprint is not None:
            kept = self._footprint_fit(kept, cells, start_rc, goal_rc)
        points = self.grid.local_to_world(kept + 0.5)
        points[0], points[-1] = start, goal
        # Drop repeated points (e.g. the start at its cell centre), keeping both ends.
        step = np.hypot(*np.diff(points, axis=0).T)
        keep = np.concatenate([[True], step[:-1] > 0.0, [True]])
        points = points[keep]
        points.setflags(write=False)
        return Route(points, float(np.sum(np.hypot(*np.diff(points, axis=0).T))))

    def _footprint_fit(self, kept: np.ndarray, cells: np.ndarray, start_rc: tuple,
                       goal_rc: tuple) -> np.ndarray:
        """
        Return a (K, 2) (column, row) polyline along which the footprint fits, or raise.

        ``kept`` (the shortcut route) when the polygon, turned along each segment, fits all
        along it (tested in the band only), and turning in place at its vertices for a robot
        that turns in place; else the cheapest way of the heading search
        (``footprint.heading_cells``) near the cell path ``cells`` (K, 2) (row, col), its
        straight stretches joined, from the exact start to the exact goal.
        """
        check = np.ones(len(kept) - 1, dtype=bool)
        hit = self._footprint.polyline_hits(kept, check, turns=self._turns)
        if hit is None:
            return kept
        reach = int(math.ceil(WINDOW_RADII * self._footprint.reach)) + WINDOW_CELLS
        height, width = self.free.shape
        window = (max(int(cells[:, 0].min()) - reach, 0),
                  min(int(cells[:, 0].max()) + reach + 1, height),
                  max(int(cells[:, 1].min()) - reach, 0),
                  min(int(cells[:, 1].max()) + reach + 1, width))
        found = heading_cells(self._footprint.fits, self.costs, start_rc, goal_rc, window)
        if found is None:
            x, y = self.grid.local_to_world(hit + 0.5)[0]
            raise Unreachable('no_path', f'no way found near ({x:.2f}, {y:.2f}) along which '
                              f'the footprint, {self._passages.width:.2f} m wide, fits '
                              'turned along its way')
        path = found[:, ::-1].astype(float)
        turn = np.any(np.diff(np.diff(path, axis=0), axis=0) != 0, axis=1)
        path = path[np.concatenate([[True], turn, [True]])]
        # The exact ends instead of their cells' centres (a step aside would turn the robot).
        path[0], path[-1] = kept[0], kept[-1]
        return self._footprint.shortcut(path, turns=self._turns)


def route_costs(distance: np.ndarray, free: np.ndarray, preferred: float, band: float,
                scaling: float) -> Tuple[np.ndarray, np.ndarray]:
    """
    Return ((H, W) cost of crossing each cell, (H, W) bool cells that keep ``preferred``).

    Inputs:
        distance: (H, W) [m] from each cell's centre to the nearest obstacle cell's centre
        free: (H, W) bool, the cells a robot centre may occupy (the rest costs inf)
        preferred: [m] the distance routes keep where there is room (radius + margin)
        band: [m] the decaying cost reaches out to preferred + band
        scaling: [1/m] its decay rate

    Like Nav2's inflation layer: a free cell costs 1 (per cell crossed), plus
    DECAY_WEIGHT * exp(-scaling * (distance - preferred)) within preferred + band (larger
    toward the walls: a route takes the middle of a passage), plus NEAR_COST where it is
    within ``preferred`` (a route enters the margin only where there is no room to keep it,
    e.g. through a narrow door, unless the way round is many times longer).
    """
    costs = np.full(distance.shape, np.inf)
    costs[free] = 1.0
    roomy = free & (distance > preferred + 1e-9)
    if band <= 0.0 and not np.any(free & ~roomy):
        costs.setflags(write=False)
        return costs, roomy
    excess = distance - preferred
    decayed = free & (excess <= band)
    costs[decayed] += DECAY_WEIGHT * np.exp(np.minimum(-scaling * excess[decayed], 50.0))
    costs[free & ~roomy] += NEAR_COST
    costs.setflags(write=False)
    roomy.setflags(write=False)
    return costs, roomy
