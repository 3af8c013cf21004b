"""
Line of sight on grids: whether segments cross blocked cells, and routes shortcut with it.

Used by the route planner (``orca_nav.core.routes.planner``): its routes are shortcut where a robot
sees past a corner, and a snap to the nearest free cell must not cross a wall.
"""

from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

# Line of sight samples a segment every LOS_STEP cells (along its longer axis) and checks every
# cell within LOS_HALF_WIDTH cells of each sample. LOS_HALF_WIDTH > LOS_STEP / 2, so every
# point of the segment lies strictly inside a checked box: touched corners count.
LOS_STEP = 0.5
LOS_HALF_WIDTH = 0.3
# Line-of-sight tests are batched by at most this many samples (memory bound).
LOS_BATCH_SAMPLES = 1_000_000
# Shortcutting tests the following points in windows (the first holds this many points, each
# next one twice as many), at most this many sampled points per window.
SHORTCUT_WINDOW_SAMPLES = 16


def segments_clear(mask: np.ndarray, a: np.ndarray, b: np.ndarray,
                   half_width: float = LOS_HALF_WIDTH, step: float = LOS_STEP,
                   need: Optional[np.ndarray] = None) -> np.ndarray:
    """
    Return (K,) bool: whether each segment a[k] -> b[k] avoids every True cell of ``mask``.

    Inputs:
        mask: (H, W) bool, True for cells to avoid; off the mask counts as True. With
            ``need``, an (H, W) float distance field instead [cells]
        a, b: (K, 2) float cell coordinates (column, row) of the segment ends
        half_width, step: samples every ``step`` cells along the longer axis, each checking
            the cells within ``half_width`` (Chebyshev) of it [cells]
        need: (K,) [cells] or None: segment k avoids the cells whose distance is below need[k]

    With the defaults it is conservative: a segment that touches a True cell, even at a
    corner, is not clear. With half_width 0 and a small step it only tells whether the
    segment runs through the inside of a True cell (up to the sampling).
    """
    a = np.asarray(a, dtype=float).reshape(-1, 2)
    b = np.asarray(b, dtype=float).reshape(-1, 2)
    count = len(a)
    clear = np.ones(count, dtype=bool)
    if count == 0:
        return clear
    delta = b - a
    samples = np.ceil(np.max(np.abs(delta), axis=1) / step).astype(np.int64) + 1
    height, width = mask.shape
    # Batches of whole segments, each at most LOS_BATCH_SAMPLES samples (a longer segment alone).
    ends = np.cumsum(samples)
    first = 0
    while first < count:
        last = max(int(np.searchsorted(ends, ends[first] - samples[first] + LOS_BATCH_SAMPLES,
                                       side='right')), first + 1)
        n = samples[first:last]
        segment = np.repeat(np.arange(first, last), n)
        offsets = np.cumsum(n) - n
        step = np.arange(int(n.sum())) - np.repeat(offsets, n)
        t = step / np.maximum(n - 1, 1)[segment - first]
        points = a[segment] + t[:, np.newaxis] * delta[segment]
        hit = np.zeros(len(points), dtype=bool)
        for dx in (-half_width, half_width):
            col = np.floor(points[:, 0] + dx + 0.5).astype(np.int64)
            col_out = (col < 0) | (col >= width)
            col = np.clip(col, 0, width - 1)
            for dy in (-half_width, half_width):
                row = np.floor(points[:, 1] + dy + 0.5).astype(np.int64)
                row_out = (row < 0) | (row >= height)
                cell = mask[np.clip(row, 0, height - 1), col]
                if need is not None:
                    cell = cell < need[segment]
                hit |= col_out | row_out | cell
        clear[first:last] = np.bincount(segment - first, weights=hit,
                                        minlength=last - first) == 0
        first = last
    return clear


def line_of_sight(blocked: np.ndarray, a_cell: ArrayLike, b_cell: ArrayLike) -> bool:
    """
    Return whether the segment between two cell centres crosses no blocked cell.

    Inputs:
        blocked: (H, W) bool mask, True where the robot may not be (off the mask is blocked)
        a_cell, b_cell: (column, row) cells (integers: centres; fractional cell coordinates
            are accepted too)

    Conservative: a segment that touches a blocked cell, including passing exactly through the
    corner between two diagonal blocked cells, is not clear.
    """
    return bool(segments_clear(blocked, np.asarray(a_cell, dtype=float)[np.newaxis],
                               np.asarray(b_cell, dtype=float)[np.newaxis])[0])


def _farthest_visible(blocked: np.ndarray, points: np.ndarray, index: int,
                      levels: Optional[np.ndarray] = None,
                      runs: Optional[np.ndarray] = None) -> int:
    """
    Return the farthest j > index visible from points[index] (index + 1 if none is).

    With ``levels`` (K,) [cells], ``blocked`` is a distance field [cells] and j is visible
    when the segment keeps min(levels[index..j]) from obstacles (the clearance of the path it
    replaces), and, with ``runs`` (K,) int, when points j and index are of the same run.

    The following points are tested in windows that double in size while some tested point
    of the latest window is visible (so the points behind a long hidden stretch are not
    searched). A window of w points is sampled every w / SHORTCUT_WINDOW_SAMPLES points; the
    points between the farthest visible sample and the next tested one are then all tested.
    """
    count = len(points)
    origin = points[index:index + 1]
    need = None
    if levels is not None:
        need = np.full(count, np.inf)
        need[index:] = np.minimum.accumulate(levels[index:])
        if runs is not None:
            need[runs != runs[index]] = np.inf

    def visible(candidates):
        return segments_clear(blocked, np.repeat(origin, len(candidates), axis=0),
                              points[candidates],
                              need=None if need is None else need[candidates])

    best, next_tested = index + 1, index + 2
    low, window = index + 2, SHORTCUT_WINDOW_SAMPLES
    while low < count:
        high = min(count, low + window)
        stride = max(1, window // SHORTCUT_WINDOW_SAMPLES)
        candidates = np.unique(np.append(np.arange(low, high, stride), high - 1))
        seen = np.nonzero(visible(candidates))[0]
        if len(seen) == 0:
            break
        best = int(candidates[seen[-1]])
        next_tested = int(candidates[seen[-1] + 1]) if seen[-1] + 1 < len(candidates) else high
        low, window = high, window * 2
    # The untested points just past the farthest visible sample.
    candidates = np.arange(best + 1, min(next_tested, count))
    if len(candidates):
        seen = np.nonzero(visible(candidates))[0]
        if len(seen):
            best = int(candidates[seen[-1]])
    return best


def shortcut(blocked: np.ndarray, cells: ArrayLike, levels: Optional[ArrayLike] = None,
             runs: Optional[ArrayLike] = None) -> np.ndarray:
    """
    Shorten a cell path by greedy line-of-sight shortcutting (any-angle-like).

    From each kept point, jump to the farthest later point visible from it (line_of_sight on
    ``blocked``); when none is, keep the next point (the original path step).

    Inputs:
        blocked: (H, W) bool mask, True where the robot may not be; with ``levels``, the
            (H, W) distance field [cells] (GridMap.distance_cells)
        cells: (K, 2) (column, row) cells or cell coordinates of the path
        levels: (K,) [cells] or None: the clearance each point of the path asks for; a
            shortcut from point i to point j keeps min(levels[i..j]) from obstacles, so it is
            never nearer to a wall than the stretch of path it replaces (through the middle
            of a narrow door, wide of the walls where the path was)
        runs: (K,) int or None (with ``levels``): a shortcut joins points of one run only
            (the planner's runs: stretches in the open, stretches through a narrow place,
            so a route enters a narrow door along its path, not at a slant from afar)

    Output:
        (K', 2) the kept points (a subset of ``cells`` in order, first and last included).
    """
    cells = np.asarray(cells)
    if len(cells) <= 2:
        return cells.copy()
    points = cells.astype(float)
    levels = None if levels is None else np.asarray(levels, dtype=float)
    runs = None if runs is None else np.asarray(runs)
    kept = [0]
    # A loop over route waypoints: each pass jumps to a later kept point.
    while kept[-1] < len(points) - 1:
        kept.append(_farthest_visible(blocked, points, kept[-1], levels, runs))
    return cells[kept]
