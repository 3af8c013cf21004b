"""
Routes for robots with a footprint polygon, as Nav2 plans them (no ROS).

A robot with a footprint is lethal only where its INSCRIBED disc (the largest disc about its
origin inside the polygon, plus the padding) would touch an obstacle cell. Between that and
its circumscribed disc lies Nav2's "possibly in collision" band: there the polygon itself is
placed, turned to the heading the robot travels at (it drives aligned with its route), and
tested against the obstacle cells. So a 0.9 x 0.6 m cart passes a 0.8 m door turned along it,
though its circumscribed disc (0.54 m) does not.

:class:`FootprintCells` holds, for every cell centre of the band, which of ``HEADINGS``
headings the polygon fits at (a bit mask, computed by one FFT correlation per heading of the
obstacle cells with the cells the placed polygon overlaps), and tests the polygon at any
point and heading (separating axes against the obstacle cells' squares). The planner
(``orca_nav.core.routes.planner``) plans on the cells where some heading fits, checks the
route it gets at the route's own headings, and when it does not fit searches
:func:`heading_cells`: cells x 8 headings, where a robot moves along its heading and turns
in place only where the headings in between fit too.

Cells are (row, col) in arrays, points (column, row) cell coordinates, as in the planner.
"""

import math
from typing import Optional, Tuple

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import dijkstra

from ..geometry import circumscribed_radius, point_segment_distance, polygon_edges

# Headings tested at every cell of the band: 2 pi k / HEADINGS, k = 0 .. HEADINGS - 1. The
# heading search moves along the 8 grid directions (every second one of them).
HEADINGS = 16
# [cells] Squares and the polygon that only touch (within this) do not overlap.
TOUCH = 1e-6
# The heading search costs this much per 45 degrees turned in place (in cells of cost 1).
TURN_COST = 2.0
# The heading search looks this many circumscribed radii (plus WINDOW_CELLS) around the
# route it repairs.
WINDOW_RADII = 4.0
WINDOW_CELLS = 10
# [rad] A turn in place is tested at headings this far apart (``turn_hits``).
TURN_STEP = math.pi / 32
# Points tested per call at once (memory: points x window cells x axes).
CHUNK = 256
# The 8 grid directions (drow, dcol), at heading 2 pi j / 8 (column = x, row = y).
DIRECTIONS = np.array([[0, 1], [1, 1], [1, 0], [1, -1], [0, -1], [-1, -1], [-1, 0], [-1, 1]])


def inscribed_radius(polygon) -> float:
    """
    Radius [m] of the largest disc about the origin inside a (K, 2) polygon (origin inside).

    >>> inscribed_radius([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]])
    0.3
    """
    p = np.asarray(polygon, dtype=float)
    return float(point_segment_distance(np.zeros((1, 2)), polygon_edges(p)).min())


def polygon_width(polygon) -> float:
    """
    Width [m] of a convex (K, 2) polygon: the narrowest slot it passes through, turned to it.

    >>> round(polygon_width([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]), 6)
    0.6
    """
    p = np.asarray(polygon, dtype=float)
    edges = np.roll(p, -1, axis=0) - p
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    spans = p @ normals.T          # (K vertices, K edges)
    return float((spans.max(axis=0) - spans.min(axis=0)).min())


def _axes(polygon: np.ndarray, heading: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """
    Return the placed polygon's vertices (P, K, 2) and separating axes (P, K + 2, 2).

    polygon : (K, 2) [cells] in the body frame; heading : (P,) [rad] in cell coordinates.
    The axes: the turned edges' normals, then x and y (the cell squares' own).
    """
    c, s = np.cos(heading)[:, None], np.sin(heading)[:, None]
    x, y = polygon[None, :, 0], polygon[None, :, 1]
    vertices = np.stack([c * x - s * y, s * x + c * y], axis=-1)
    edges = np.roll(vertices, -1, axis=1) - vertices
    normals = np.stack([edges[..., 1], -edges[..., 0]], axis=-1)
    normals /= np.linalg.norm(normals, axis=-1, keepdims=True)
    square = np.broadcast_to(np.eye(2), (len(heading), 2, 2))
    return vertices, np.concatenate([normals, square], axis=1)


def _overlaps(vertices: np.ndarray, axes: np.ndarray, centres: np.ndarray,
              padding: float) -> np.ndarray:
    """
    Return (P, M) bool: whether the unit square about centres[p, m] overlaps polygon p.

    vertices (P, K, 2), axes (P, A, 2) from _axes; centres (P, M, 2) relative to the
    polygon's origin [cells]; the polygon grown by ``padding`` [cells] along every axis.
    """
    project = np.einsum('pkd,pad->pka', vertices, axes)        # (P, K, A)
    low = project.min(axis=1)[:, None, :] - padding
    high = project.max(axis=1)[:, None, :] + padding
    middle = np.einsum('pmd,pad->pma', centres, axes)          # (P, M, A)
    half = 0.5 * np.abs(axes).sum(axis=-1)[:, None, :]          # (P, 1, A)
    apart = (middle - half >= high - TOUCH) | (middle + half <= low + TOUCH)
    return ~apart.any(axis=-1)


class FootprintCells:
    """
    Where a footprint polygon fits on a map, at which headings.

    Fields:
        polygon: (K, 2) [cells] counter-clockwise in the body frame (x forward)
        padding: [cells] the polygon is grown by it
        reach: [cells] the polygon's circumscribed radius + padding
        fits: (H, W) uint16, bit k set where the polygon fits at the cell centre at heading
            2 pi k / HEADINGS (all bits beyond the band, none on cells ``possible`` excludes)
    """

    def __init__(self, obstacles: np.ndarray, distance: np.ndarray, polygon, padding: float,
                 possible: np.ndarray) -> None:
        """
        Test the polygon at every heading on the band's cells.

        obstacles (H, W) bool; distance (H, W) [cells] to the nearest obstacle centre;
        polygon (K, 2) and padding [cells]; possible (H, W) bool: the cells the inscribed
        disc leaves free (the others fit at no heading).
        """
        self.obstacles = obstacles
        self.polygon = np.asarray(polygon, dtype=float)
        self.padding = float(padding)
        self.reach = circumscribed_radius(self.polygon) + self.padding
        # Beyond reach + half a cell's diagonal no obstacle square reaches the polygon.
        self.band = possible & (distance < self.reach + math.sqrt(0.5) + TOUCH)
        self.fits = np.where(possible, np.uint16(0xFFFF), np.uint16(0))
        if not self.band.any():
            return
        span = int(math.ceil(self.reach + 1.0))
        rows, cols = np.mgrid[-span:span + 1, -span:span + 1]
        offsets = np.stack([cols.ravel(), rows.ravel()], axis=1).astype(float)  # (x, y)
        headings = 2.0 * math.pi * np.arange(HEADINGS) / HEADINGS
        vertices, axes = _axes(self.polygon, headings)
        hit = _overlaps(vertices, axes, np.broadcast_to(offsets, (HEADINGS,) + offsets.shape),
                        self.padding)
        # Only the band's bounding box (plus the kernel) is correlated.
        r, c = np.nonzero(self.band)
        r0, r1 = max(r.min() - span, 0), min(r.max() + span + 1, obstacles.shape[0])
        c0, c1 = max(c.min() - span, 0), min(c.max() + span + 1, obstacles.shape[1])
        box = obstacles[r0:r1, c0:c1].astype(float)
        band = self.band[r0:r1, c0:c1]
        fits = self.fits[r0:r1, c0:c1]
        # Imported here: scipy.signal takes 0.4 s to import (scipy.stats with it), and only
        # footprints need it; every node process would pay for it at start-up.
        from scipy.signal import fftconvolve
        for k in range(HEADINGS):
            kernel = hit[k].reshape(rows.shape)
            # Correlation: cell (r, c) meets obstacle (r + dr, c + dc) where kernel[dr, dc].
            touched = fftconvolve(box, kernel[::-1, ::-1], mode='same') > 0.5
            fits[band & touched] &= np.uint16(~(1 << k) & 0xFFFF)
        self.fits.setflags(write=False)

    def hits(self, points: np.ndarray, heading: np.ndarray) -> np.ndarray:
        """
        Return (P,) bool: whether the polygon at each point, turned to heading, meets obstacles.

        points (P, 2) (column, row) cell coordinates; heading (P,) [rad]. Exact (separating
        axes) against the obstacle cells' squares, off the map counting as free.
        """
        points = np.asarray(points, dtype=float).reshape(-1, 2)
        heading = np.asarray(heading, dtype=float).reshape(-1)
        out = np.zeros(len(points), dtype=bool)
        span = int(math.ceil(self.reach + 1.5))
        rows, cols = np.mgrid[-span:span + 1, -span:span + 1]
        height, width = self.obstacles.shape
        for first in range(0, len(points), CHUNK):
            p, h = points[first:first + CHUNK], heading[first:first + CHUNK]
            base = np.floor(p + 0.5).astype(np.int64)
            cc = base[:, 0:1] + cols.ravel()[None]
            rr = base[:, 1:2] + rows.ravel()[None]
            inside = (rr >= 0) & (rr < height) & (cc >= 0) & (cc < width)
            occupied = np.zeros(cc.shape, dtype=bool)
            occupied[inside] = self.obstacles[rr[inside], cc[inside]]
            if not occupied.any():
                continue
            vertices, axes = _axes(self.polygon, h)
            centres = np.stack([cc - p[:, 0:1], rr - p[:, 1:2]], axis=-1)
            out[first:first + CHUNK] = (_overlaps(vertices, axes, centres, self.padding)
                                        & occupied).any(axis=1)
        return out

    def polyline_hits(self, path: np.ndarray, check: np.ndarray, step: float = 0.5,
                      turns: bool = False) -> Optional[np.ndarray]:
        """
        Return the first point (2,) of a polyline where the polygon meets obstacles, or None.

        path (K, 2) cell coordinates; the polygon is turned along each segment, tested every
        ``step`` cells on it and at both its ends; check (K - 1,) bool: the segments to test.
        turns: the polygon also turns in place at each vertex between two segments of which
        one is tested (``turn_hits``): a robot that cannot crab (a differential drive).
        """
        if turns:
            for k in range(1, len(path) - 1):
                if (check[k - 1] or check[k]) and self.turn_hits(
                        path[k], _heading(path[k - 1], path[k]), _heading(path[k], path[k + 1])):
                    return path[k]
        samples, heading = [], []
        for k in np.flatnonzero(check):
            a, b = path[k], path[k + 1]
            length = float(np.hypot(*(b - a)))
            if length <= 0.0:
                continue
            n = int(math.ceil(length / step)) + 1
            samples.append(a + np.linspace(0.0, 1.0, n)[:, None] * (b - a))
            heading.append(np.full(n, math.atan2(b[1] - a[1], b[0] - a[0])))
        if not samples:
            return None
        samples, heading = np.concatenate(samples), np.concatenate(heading)
        cells = np.floor(samples + 0.5).astype(np.int64)
        height, width = self.band.shape
        inside = ((cells[:, 0] >= 0) & (cells[:, 0] < width)
                  & (cells[:, 1] >= 0) & (cells[:, 1] < height))
        near = np.zeros(len(samples), dtype=bool)
        near[inside] = self.band[cells[inside, 1], cells[inside, 0]]
        hit = np.zeros(len(samples), dtype=bool)
        hit[near] = self.hits(samples[near], heading[near])
        return samples[int(np.argmax(hit))] if hit.any() else None

    def turn_hits(self, point: np.ndarray, start: float, end: float) -> bool:
        """
        Return whether the polygon turning in place at ``point`` meets obstacles.

        point (2,) cell coordinates; from heading ``start`` to ``end`` [rad] the shorter way,
        tested every TURN_STEP and at both ends. Beyond the band (the circumscribed disc
        free) it turns freely.
        """
        cell = np.floor(np.asarray(point, dtype=float) + 0.5).astype(np.int64)
        height, width = self.band.shape
        inside = 0 <= cell[0] < width and 0 <= cell[1] < height
        if not inside or not self.band[cell[1], cell[0]]:
            return False
        turn = math.remainder(end - start, 2.0 * math.pi)
        n = int(math.ceil(abs(turn) / TURN_STEP)) + 1
        heading = start + np.linspace(0.0, turn, n)
        return bool(self.hits(np.broadcast_to(point, (n, 2)), heading).any())

    def shortcut(self, path: np.ndarray, turns: bool = False) -> np.ndarray:
        """
        Return a (K', 2) polyline of some of a (K, 2) path's points (ends kept) that fits.

        Greedy: from each kept point, the farthest later point joined to it by a segment the
        polygon, turned along it, fits all along (``polyline_hits``); else the next point.
        turns: and the polygon fits turning in place at the kept point from the segment
        before to that one (``turn_hits``; the next point is taken when none fits).
        """
        kept = [0]
        one = np.ones(1, dtype=bool)
        # A loop over the kept points, each trying the later ones from the farthest.
        while kept[-1] < len(path) - 1:
            i = kept[-1]
            j = len(path) - 1
            while j > i + 1 and (self.polyline_hits(path[[i, j]], one) is not None or (
                    turns and len(kept) > 1 and self.turn_hits(
                        path[i], _heading(path[kept[-2]], path[i]),
                        _heading(path[i], path[j])))):
                j -= 1
            kept.append(j)
        return path[kept]


def _heading(a: np.ndarray, b: np.ndarray) -> float:
    """Return the heading [rad] from point a to point b (column, row) cell coordinates."""
    return math.atan2(b[1] - a[1], b[0] - a[0])


def heading_cells(fits: np.ndarray, costs: np.ndarray, start_rc, goal_rc,
                  window: Tuple[int, int, int, int]) -> Optional[np.ndarray]:
    """
    Return the cheapest (K, 2) (row, col) cell path whose every move fits, or None.

    States are (cell, one of the 8 grid directions); a robot moves one cell along its heading
    where the polygon fits at that heading in both cells, and turns in place by 45 degrees
    where it fits at both headings and the one between (``fits`` bits, HEADINGS = 16). Only
    the cells of ``window`` (row0, row1, col0, col1) are searched (scipy's Dijkstra).
    """
    r0, r1, c0, c1 = window
    fit = fits[r0:r1, c0:c1]
    cost = costs[r0:r1, c0:c1]
    height, width = fit.shape
    cells = height * width
    bit = (fit[None] >> (2 * np.arange(8))[:, None, None]) & 1          # (8, h, w)
    half = (fit[None] >> (2 * np.arange(8) + 1)[:, None, None]) & 1     # the headings between
    index = np.arange(cells).reshape(height, width)
    sources, targets, weights = [], [], []
    for j, (dr, dc) in enumerate(DIRECTIONS):
        a = index[max(-dr, 0):height - max(dr, 0), max(-dc, 0):width - max(dc, 0)]
        b = a + dr * width + dc
        ok = (bit[j].ravel()[a] & bit[j].ravel()[b]).astype(bool)
        length = math.hypot(dr, dc)
        sources.append(j * cells + a[ok])
        targets.append(j * cells + b[ok])
        weights.append(0.5 * length * (cost.ravel()[a[ok]] + cost.ravel()[b[ok]]))
        turn = (bit[j] & half[j] & bit[(j + 1) % 8]).astype(bool).ravel()
        here = index.ravel()[turn]
        for one, other in ((j, (j + 1) % 8), ((j + 1) % 8, j)):
            sources.append(one * cells + here)
            targets.append(other * cells + here)
            weights.append(np.full(len(here), TURN_COST))
    source = 8 * cells                    # one more node: joined to the start's headings
    start = (start_rc[0] - r0) * width + start_rc[1] - c0
    goal = (goal_rc[0] - r0) * width + goal_rc[1] - c0
    begin = [j * cells + start for j in range(8) if bit[j].ravel()[start]]
    sources.append(np.full(len(begin), source))
    targets.append(np.array(begin, dtype=np.int64))
    weights.append(np.full(len(begin), 1e-9))
    graph = coo_matrix((np.concatenate(weights),
                        (np.concatenate(sources), np.concatenate(targets))),
                       shape=(source + 1, source + 1)).tocsr()
    distance, predecessor = dijkstra(graph, indices=source, return_predecessors=True)
    ends = goal + cells * np.arange(8)
    best = int(ends[np.argmin(distance[ends])])
    if not math.isfinite(distance[best]):
        return None
    path = []
    node = best
    # A loop over the path's states, goal to start.
    while node != source and node >= 0:
        path.append(node % cells)
        node = int(predecessor[node])
    path = np.array(path[::-1])
    path = path[np.concatenate([[True], path[1:] != path[:-1]])]   # turns in place
    return np.stack([path // width + r0, path % width + c0], axis=1)
