"""
The coarse level of route planning on large maps: a graph of f x f blocks of free cells.

:class:`~orca_nav.core.routes.planner.RoutePlanner` uses it on maps larger than ``max_fine_cells``:
a Dijkstra search on the block graph (two blocks are linked when two 8-adjacent free cells straddle
their border, so walls do not leak, and a passage only the robot's disc fits through stays open; a
link that no two cells keeping the full margin cross costs ``near_cost`` times its length) gives
the corridor, and MCP refines it on the full-resolution grid in short windows along the corridor
(:meth:`BlockGraph.corridor_cells`); if a window fails, the planner uses its full-resolution field
instead.

Cells are (row, col) here, as numpy indexes them; blocks are numbered row-major
(block row * block columns + block col).
"""

import math
from typing import Optional, Sequence, Tuple

import numpy as np
from scipy import ndimage
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra
from skimage.graph import MCP_Geometric

# Coarse corridor refinement: consecutive blocks of the block path refined by one MCP search.
WINDOW_BLOCKS = 16


def coarse_factor(clearance: float, resolution: float) -> int:
    """
    Return the block size [cells] of the block graph for robots of radius ``clearance`` [m].

    The obstacles grown by ``clearance`` form bands at least 2 * clearance / resolution + 1
    cells wide; blocks whose diagonal is shorter than that cannot hold free cells on both sides
    of a band, so the free cells of a block are (nearly always) connected inside it.
    """
    band = 2.0 * clearance / resolution + 1.0
    return max(1, int(math.floor(band / math.sqrt(2.0) + 1.0 - 1e-9)))


class BlockGraph:
    """The free space as a graph of f x f blocks of cells (the coarse level for large maps)."""

    def __init__(self, free: np.ndarray, factor: int, resolution: float,
                 costs: Optional[np.ndarray] = None, roomy: Optional[np.ndarray] = None,
                 near_cost: float = 1.0) -> None:
        """
        Link blocks that hold two 8-adjacent free cells across their border.

        Inputs:
            free: (H, W) bool, the free (not blocked) cells (kept, not copied)
            factor: block side f [cells]
            resolution: cell side [m]
            costs: (H, W) float cost of crossing each cell for the refinement (kept; None:
                1 on free cells)
            roomy: (H, W) bool, the free cells that keep the full margin from obstacles, or
                None (all free cells do)
            near_cost: a link that no two 8-adjacent roomy cells cross (a narrow passage) is
                this many times longer
        """
        f = factor
        height, width = free.shape
        self.free = free
        self.costs = np.where(free, 1.0, np.inf) if costs is None else costs
        self.factor = f
        self.shape = (-(-height // f), -(-width // f))
        rows, cols = self.shape
        # Cell levels: 0 blocked, 1 free, 2 free and keeping the full margin (roomy).
        level = free.astype(np.uint8)
        if roomy is not None and near_cost != 1.0 and np.any(free & ~roomy):
            level[roomy] = 2
        source, target, best = self._links(level)
        nodes = rows * cols
        # Link length: distance between the block centres [m]; through a narrow passage only
        # (no two roomy cells cross the border), near_cost times that.
        weight = np.hypot(source // cols - target // cols,
                          source % cols - target % cols) * f * resolution
        weight = np.where(best < level.max(initial=1), weight * near_cost, weight)
        self.graph = csr_matrix((weight, (source, target)), shape=(nodes, nodes))

    def _links(self, level: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """
        Return the block links through cells of ``level`` > 0 (H, W) uint8.

        Output: (L,) sources < targets, and (L,) the best level of a pair of 8-adjacent cells
        that crosses the border (a pair's level: the lower of its two cells').
        """
        f = self.factor
        height, width = level.shape
        rows, cols = self.shape
        padded = np.zeros((rows * f, cols * f), dtype=np.uint8)
        padded[:height, :width] = level
        sources, targets, levels = [], [], []
        row_in_block = np.arange(rows * f) % f
        col_in_block = np.arange(cols * f) % f
        # Each of the 4 undirected 8-neighbour offsets (dr, dc) pairs cell p = (r, c) with
        # q = (r + dr, c + dc). The block step from p's block to q's block depends only on
        # (r % f, c % f), so the pairs of each block step are reduced block by block.
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            pair = np.zeros_like(padded)
            lo, hi = max(0, -dc), cols * f - max(0, dc)
            pair[:rows * f - dr, lo:hi] = np.minimum(padded[:rows * f - dr, lo:hi],
                                                     padded[dr:, lo + dc:hi + dc])
            block_dr = (row_in_block + dr) // f
            block_dc = np.floor_divide(col_in_block + dc, f)
            for step_r in (0, 1):
                for step_c in (-1, 0, 1):
                    if (step_r, step_c) == (0, 0):
                        continue
                    row_sel = block_dr == step_r
                    col_sel = block_dc == step_c
                    if not (row_sel.any() and col_sel.any()):
                        continue
                    crossing = pair * (row_sel[:, np.newaxis] & col_sel[np.newaxis, :])
                    best = crossing.reshape(rows, f, cols, f).max(axis=(1, 3))
                    br, bc = np.nonzero(best)
                    sources.append(br * cols + bc)
                    targets.append((br + step_r) * cols + bc + step_c)
                    levels.append(best[br, bc])
        source = np.concatenate(sources) if sources else np.zeros(0, dtype=np.int64)
        target = np.concatenate(targets) if targets else np.zeros(0, dtype=np.int64)
        best = np.concatenate(levels) if levels else np.zeros(0, dtype=np.uint8)
        nodes = rows * cols
        # The same block pair is found through several offsets: keep each link once, with
        # its best level.
        code = np.minimum(source, target) * nodes + np.maximum(source, target)
        order = np.lexsort((-best.astype(np.int64), code))
        code, best = code[order], best[order]
        first = np.concatenate([[True], code[1:] != code[:-1]]) if len(code) else code > 0
        code, best = code[first], best[first]
        return code // nodes, code % nodes, best

    def block(self, cell_rc: Sequence[int]) -> int:
        """Return the node index of the block holding the (row, col) cell."""
        f = self.factor
        return int(cell_rc[0] // f * self.shape[1] + cell_rc[1] // f)

    def field(self, goal_node: int) -> Tuple[np.ndarray, np.ndarray]:
        """Return ((N,) distance [m] to the goal block, (N,) predecessor toward it)."""
        return dijkstra(self.graph, directed=False, indices=goal_node, return_predecessors=True)

    def corridor_cells(self, start_rc: tuple, goal_rc: tuple,
                       field: Tuple[np.ndarray, np.ndarray],
                       labels: np.ndarray) -> Optional[np.ndarray]:
        """
        Return the (K, 2) (row, col) cell path along the block graph's corridor, or None.

        Inputs:
            start_rc, goal_rc: (row, col) free cells of the start and the goal
            field: (distance, predecessor) toward the goal's block (:meth:`field`)
            labels: (H, W) int, the component label of every cell (8-connected free space)

        None when the start's block cannot reach the goal's, or when the corridor refinement
        fails (free cells of a block not connected inside the corridor); the caller then
        searches the full grid.
        """
        goal_node, node = self.block(goal_rc), self.block(start_rc)
        distance, predecessor = field
        if not np.isfinite(distance[node]):
            return None
        nodes = [node]
        # A loop over the block path (the coarse waypoints).
        while nodes[-1] != goal_node:
            nodes.append(int(predecessor[nodes[-1]]))
        path_blocks = np.stack(np.divmod(np.array(nodes), self.shape[1]), axis=1)
        pieces = [np.array([start_rc])]
        current = start_rc
        goal_label = labels[goal_rc]
        last = len(path_blocks) - 1
        for first in range(0, max(last, 1), WINDOW_BLOCKS):
            end = min(first + WINDOW_BLOCKS, last)
            piece = self._window_cells(current, path_blocks[first:end + 1],
                                       goal_rc if end == last else None, goal_label, labels)
            if piece is None:
                return None
            pieces.append(piece[1:])
            current = tuple(int(v) for v in piece[-1])
        return np.concatenate(pieces)

    def _window_cells(self, start_rc: tuple, path_blocks: np.ndarray, goal_rc: Optional[tuple],
                      goal_label: int, labels: np.ndarray) -> Optional[np.ndarray]:
        """
        Refine a stretch of the block path on the full grid.

        Inputs:
            start_rc: (row, col) cell the stretch starts from (in path_blocks[0])
            path_blocks: (B, 2) (block row, block col) of the stretch
            goal_rc: the goal cell if the stretch ends at the goal, else None: then the stretch
                ends at the first free cell of the last block (of the goal's component) reached
            goal_label: component label of the goal cell
            labels: (H, W) int, the component label of every cell

        Output:
            (K, 2) (row, col) cells from start_rc, or None if the corridor (the stretch's
            blocks and their 8 neighbours) holds no path.
        """
        f = self.factor
        height, width = self.free.shape
        rows, cols = self.shape
        br0, bc0 = np.maximum(path_blocks.min(axis=0) - 1, 0)
        br1, bc1 = np.minimum(path_blocks.max(axis=0) + 1, (rows - 1, cols - 1))
        corridor = np.zeros((br1 - br0 + 1, bc1 - bc0 + 1), dtype=bool)
        corridor[path_blocks[:, 0] - br0, path_blocks[:, 1] - bc0] = True
        corridor = ndimage.binary_dilation(corridor, structure=np.ones((3, 3), dtype=bool))
        r0, c0 = br0 * f, bc0 * f
        r1, c1 = min((br1 + 1) * f, height), min((bc1 + 1) * f, width)
        corridor = np.repeat(np.repeat(corridor, f, axis=0), f, axis=1)[:r1 - r0, :c1 - c0]
        passable = corridor & self.free[r0:r1, c0:c1]
        if goal_rc is not None:
            ends = np.array([[goal_rc[0] - r0, goal_rc[1] - c0]])
        else:
            # The free cells of the last block that lead on to the goal.
            end_r, end_c = path_blocks[-1] * f - (r0, c0)
            in_block = np.zeros_like(passable)
            in_block[end_r:end_r + f, end_c:end_c + f] = True
            in_block &= passable & (labels[r0:r1, c0:c1] == goal_label)
            ends = np.argwhere(in_block)
            if len(ends) == 0:
                return None
        mcp = MCP_Geometric(np.where(passable, self.costs[r0:r1, c0:c1], np.inf))
        costs, _ = mcp.find_costs([(start_rc[0] - r0, start_rc[1] - c0)], ends=ends,
                                  find_all_ends=False)
        end_costs = costs[ends[:, 0], ends[:, 1]]
        if not np.isfinite(end_costs.min()):
            return None
        reached = ends[int(np.argmin(end_costs))]
        return np.array(mcp.traceback(tuple(int(v) for v in reached))) + (r0, c0)
