"""
Outlines of the True cells of a boolean grid as line segments (the walls of a grid map).

:meth:`orca_nav.core.routes.grid.GridMap.wall_segments` calls :func:`outline_segments` on the
occupied mask and puts the result into the global frame. Coordinates here are in the map frame in
cell units: (0, 0) is the map's corner and cell (column c, row r) spans [c, c + 1] x [r, r + 1].
"""

import math

import numpy as np
from skimage import measure

# Marching squares cuts each cell corner of an outline by this much [cells]: the distance from
# the corner to the chord between the midpoints of its two edges, sqrt(2) / 4.
CORNER_CUT = math.sqrt(2.0) / 4.0


def outline_segments(mask: np.ndarray, tolerance: float) -> np.ndarray:
    """
    Return (M, 2, 2) segments (x, y) [cells, map frame] outlining the True cells of ``mask``.

    The outlines are traced with marching squares (skimage.measure.find_contours on the mask
    padded with False cells), put back onto the cell edges (marching squares cuts each corner
    diagonally by CORNER_CUT; the corner vertex is restored), then simplified with
    skimage.measure.approximate_polygon within ``tolerance``. When the tolerance exceeds
    CORNER_CUT, the raw contour simplified with ``tolerance - CORNER_CUT`` is used instead if it
    has fewer vertices. The mask's borders count as edges of the True cells there. Zero-length
    segments are dropped.

    Inputs:
        mask: (H, W) bool
        tolerance: simplification tolerance [cells] (>= 0)
    """
    padded = np.pad(mask, 1).astype(np.float32)
    pieces = []
    for contour in measure.find_contours(padded, 0.5):
        outline = _simplify(_restore_corners(contour), tolerance)
        if tolerance > CORNER_CUT:
            # The marching-squares contour itself (corners cut) simplified with what is
            # left of the tolerance: fewer segments on slanted walls, same guarantee.
            cut = _simplify(contour, tolerance - CORNER_CUT)
            if len(cut) < len(outline):
                outline = cut
        pieces.append(np.stack([outline[:-1], outline[1:]], axis=1))
    if not pieces:
        return np.zeros((0, 2, 2))
    rows_cols = np.concatenate(pieces)                      # (M, 2, 2) (row, col)
    # Padded pixel (row, col) centre -> map frame (x, y) [cells]: unpad, then the
    # centre of cell (c, r) is at (c + 0.5, r + 0.5).
    local = rows_cols[:, :, ::-1] - 0.5
    lengths = np.hypot(*(local[:, 1] - local[:, 0]).T)
    return local[lengths > 0.0]


def _simplify(outline: np.ndarray, tolerance: float) -> np.ndarray:
    """
    Simplify a (K, 2) outline with skimage's Douglas-Peucker, ``tolerance`` in its units.

    A closed outline is split at the vertex farthest from its start and each half simplified
    on its own: simplified whole, a small ring would collapse onto its start point (every vertex
    lies within tolerance of it) and vanish.
    """
    if len(outline) > 3 and np.array_equal(outline[0], outline[-1]):
        far = int(np.argmax(np.hypot(*(outline - outline[0]).T)))
        first = measure.approximate_polygon(outline[:far + 1], tolerance)
        second = measure.approximate_polygon(outline[far:], tolerance)
        return np.concatenate([first, second[1:]])
    return measure.approximate_polygon(outline, tolerance)


def _restore_corners(contour: np.ndarray) -> np.ndarray:
    """
    Put a marching-squares contour of a binary image back onto the pixel edges.

    Inputs:
        contour: (K, 2) (row, col) vertices from find_contours at level 0.5 on a 0/1 image:
            each is the midpoint of a pixel edge, so exactly one coordinate is a half-integer.

    Output:
        (K', 2) vertices where every diagonal step (both coordinates change) goes through the
        pixel corner it cut: the point whose two coordinates are both half-integers.
    """
    if len(contour) < 2:
        return contour
    start, end = contour[:-1], contour[1:]
    diagonal = np.all(start != end, axis=1)
    # The corner takes the half-integer coordinate of each end: the row from whichever end
    # has a half-integer row, the column from the other.
    start_row_half = (start[:, 0] % 1.0) != 0.0
    corner = np.where(start_row_half[:, np.newaxis],
                      np.stack([start[:, 0], end[:, 1]], axis=1),
                      np.stack([end[:, 0], start[:, 1]], axis=1))
    # Interleave: vertex i, then its corner if step i is diagonal; the last vertex closes.
    out = np.empty((len(start) * 2 + 1, 2))
    out[0:-1:2] = start
    out[1:-1:2] = corner
    out[-1] = contour[-1]
    keep = np.ones(len(out), dtype=bool)
    keep[1:-1:2] = diagonal
    out = out[keep]
    if len(out) > 3 and np.array_equal(out[0], out[-1]):
        # A closed outline: start it at a corner, so the simplification (which keeps the first
        # and last vertices) does not keep an edge midpoint and cut the corner next to it.
        ring = out[:-1]
        step = np.diff(np.concatenate([ring[-1:], ring, ring[:1]]), axis=0)
        direction = step / np.linalg.norm(step, axis=1, keepdims=True)
        turns = np.nonzero(np.any(np.abs(direction[1:] - direction[:-1]) > 1e-9, axis=1))[0]
        if len(turns):
            ring = np.roll(ring, -int(turns[0]), axis=0)
            out = np.concatenate([ring, ring[:1]])
    return out
