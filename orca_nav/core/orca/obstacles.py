"""
Static obstacles as RVO2 stores them, plus a spatial index to find nearby edges.

Every obstacle vertex starts one edge (to its ``next`` vertex). Polygons are listed
counter-clockwise, so their outside is on the right of each edge, and an agent only sees an edge
whose outside faces it. A two-vertex obstacle is a segment made of two opposite edges, so it is
solid from both sides: that is how open polylines and laser-scan segments are represented.

Example::

    obstacles = Obstacles.build(polygons=[[(0, 0), (1, 0), (1, 1), (0, 1)]],
                                segments=np.array([[[3.0, 0.0], [3.0, 2.0]]]))
    offsets, edges = obstacles.neighbors(positions, ranges)
"""

from typing import Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike

from . import kdtree
from .._jit import njit

# Edges shorter than this [m] carry no direction worth the name (and square to zero).
MIN_EDGE = 1e-9
# Edges are sampled for the index at most this far apart [m]: a point within r of an edge is
# within r + INDEX_SPACING / 2 of one of its samples.
INDEX_SPACING = 1.0


def _as_vertices(polygon: ArrayLike, index: int) -> np.ndarray:
    vertices = np.asarray(polygon, dtype=float)
    if vertices.ndim != 2 or vertices.shape[1] != 2:
        raise ValueError(f'polygon {index} must be a list of (x, y) vertices, '
                         f'got an array of shape {vertices.shape}')
    if vertices.shape[0] < 2:
        raise ValueError(f'polygon {index} has {vertices.shape[0]} vertex; an obstacle needs '
                         'at least 2 vertices')
    if not np.all(np.isfinite(vertices)):
        raise ValueError(f'polygon {index} has a NaN or infinite vertex: {vertices.tolist()}')
    edges = np.roll(vertices, -1, axis=0) - vertices
    if np.any(np.hypot(edges[:, 0], edges[:, 1]) <= MIN_EDGE):
        raise ValueError(f'polygon {index} repeats a vertex (an edge shorter than {MIN_EDGE} m): '
                         f'{vertices.tolist()}')
    return vertices


class Obstacles:
    """
    Obstacle vertices with RVO2's links (next, prev), edge directions and convexity.

    Attributes (V vertices, each the start of one edge):
        point : (V, 2) vertex positions [m]
        next, prev : (V,) indices of the neighbouring vertices
        unit_dir : (V, 2) unit direction from each vertex to the next
        convex : (V,) bool, RVO2's per-vertex convexity (two-vertex obstacles are convex)
        owner : (V,) int, -1 if every agent avoids the edge, else the only agent that does
    """

    def __init__(self, point: ArrayLike, next_: ArrayLike, prev: ArrayLike, owner: ArrayLike,
                 convex: Optional[ArrayLike] = None) -> None:
        self.point = np.ascontiguousarray(point, dtype=float).reshape(-1, 2)
        self.next = np.ascontiguousarray(next_, dtype=np.int64)
        self.prev = np.ascontiguousarray(prev, dtype=np.int64)
        self.owner = np.ascontiguousarray(owner, dtype=np.int64)
        vec = self.point[self.next] - self.point
        self.length = np.hypot(vec[:, 0], vec[:, 1])
        self.unit_dir = vec / np.where(self.length > 0.0, self.length, 1.0)[:, None]
        # RVO2: convex where leftOf(prev, vertex, next) >= 0, i.e. (v - p) x (n - p) >= 0.
        u = self.point - self.point[self.prev]
        w = self.point[self.next] - self.point[self.prev]
        left_of = u[:, 0] * w[:, 1] - u[:, 1] * w[:, 0]
        two_vertex = self.next == self.prev
        self.convex = two_vertex | (left_of >= 0.0)
        if convex is not None:
            # Explicit convexity, e.g. RVO2's split vertices (collinear, declared convex).
            self.convex = np.asarray(convex, dtype=bool).copy()
        self._build_index()

    @classmethod
    def empty(cls) -> 'Obstacles':
        """Return an obstacle set with nothing in it."""
        return cls(np.zeros((0, 2)), np.zeros(0, np.int64), np.zeros(0, np.int64),
                   np.zeros(0, np.int64))

    @classmethod
    def build(cls, polygons: Sequence[ArrayLike] = (), segments: Optional[ArrayLike] = None,
              segment_owner: Optional[ArrayLike] = None, first_index: int = 0) -> 'Obstacles':
        """
        Build from CCW polygons and free segments.

        polygons : list of (K, 2) array_like, counter-clockwise, K >= 2
        segments : (M, 2, 2) array_like of free segments, each solid from both sides; segments
            shorter than MIN_EDGE are dropped (scans produce them)
        segment_owner : (M,) int array_like; -1 = avoided by every agent, i = only by agent i
        first_index : number of the first polygon in error messages
        """
        points, nexts, prevs, owners = [], [], [], []
        start = 0
        for index, polygon in enumerate(polygons):
            vertices = _as_vertices(polygon, first_index + index)
            k = vertices.shape[0]
            ids = np.arange(start, start + k)
            points.append(vertices)
            nexts.append(np.roll(ids, -1))
            prevs.append(np.roll(ids, 1))
            owners.append(np.full(k, -1))
            start += k
        if segments is not None:
            seg = np.asarray(segments, dtype=float).reshape(-1, 2, 2)
            own = (np.full(len(seg), -1) if segment_owner is None
                   else np.asarray(segment_owner, dtype=np.int64).reshape(-1))
            if own.shape[0] != seg.shape[0]:
                raise ValueError(f'segment_owner has {own.shape[0]} entries for '
                                 f'{seg.shape[0]} segments')
            if not np.all(np.isfinite(seg)):
                raise ValueError('segments contain NaN or infinite coordinates')
            keep = np.hypot(*(seg[:, 1] - seg[:, 0]).T) > MIN_EDGE
            seg, own = seg[keep], own[keep]
            m = seg.shape[0]
            first = start + 2 * np.arange(m)
            points.append(seg.reshape(-1, 2))
            pair = np.stack([first + 1, first], axis=1).reshape(-1)
            nexts.append(pair)
            prevs.append(pair)
            owners.append(np.repeat(own, 2))
            start += 2 * m
        if not points:
            return cls.empty()
        return cls(np.concatenate(points), np.concatenate(nexts), np.concatenate(prevs),
                   np.concatenate(owners))

    @property
    def num_vertices(self) -> int:
        """Return the number of vertices (= number of edges)."""
        return self.point.shape[0]

    def _build_index(self) -> None:
        v = self.num_vertices
        per_edge = np.maximum(1, np.ceil(self.length / INDEX_SPACING).astype(np.int64))
        edge_of_sample = np.repeat(np.arange(v), per_edge)
        first = np.cumsum(per_edge) - per_edge
        # Samples at the centres of equal chunks: fraction (k + 0.5) / n along each edge.
        k = np.arange(edge_of_sample.shape[0]) - first[edge_of_sample]
        frac = (k + 0.5) / per_edge[edge_of_sample]
        samples = (self.point[edge_of_sample]
                   + frac[:, None] * (self.point[self.next[edge_of_sample]]
                                      - self.point[edge_of_sample]))
        self._edge_of_sample = edge_of_sample
        self._half_chunk = 0.5 * float(np.max(self.length / per_edge)) if v else 0.0
        self._tree = kdtree.build(np.ascontiguousarray(samples, dtype=float).reshape(-1, 2))

    def neighbors(self, positions: np.ndarray,
                  ranges: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """
        Edges each agent must consider, nearest first, as RVO2 selects them.

        An edge is a neighbour of agent i when the agent is strictly on its right (outside) and
        the edge is closer than ``ranges[i]`` (RVO2: time_horizon_obst * max_speed + radius).
        Edges owned by another agent are skipped. Equal distances go by the lower edge id.

        positions : (N, 2) [m]; ranges : (N,) [m]
        Returns offsets (N + 1,) and edges (E,); agent i's edges are
        edges[offsets[i]:offsets[i + 1]].
        """
        return edges_near(np.ascontiguousarray(positions, dtype=float),
                          np.ascontiguousarray(ranges, dtype=float), self.index)

    @property
    def index(self) -> tuple:
        """Return what ``edges_near`` needs: the sample tree and the edges' geometry."""
        return (self._tree, self._edge_of_sample, self._half_chunk, self.point, self.next,
                self.length, self.owner)


@njit(cache=True)
def edges_near(positions, ranges, index):
    """
    ``Obstacles.neighbors`` compiled: offsets (N + 1,) and edges (E,) of each agent.

    Keeps the edges that face the agent (it is strictly on their right), are nearer than its
    range and are not owned by another agent; each agent's edges nearest first, ties by
    edge id. Candidates are the edges with a sample within range + half a chunk.
    """
    tree, edge_of_sample, half_chunk, point, nxt, length, owner = index
    n = positions.shape[0]
    v = point.shape[0]
    offsets = np.zeros(n + 1, np.int64)
    if v == 0 or n == 0:
        return offsets, np.zeros(0, np.int64)
    edges = np.empty(max(16, 2 * n), np.int64)
    seen = np.full(v, -1, np.int64)
    candidates = np.empty(edge_of_sample.shape[0], np.int64)
    stack = np.empty(tree[1].shape[0] + 2, np.int64)
    sel_edge = np.empty(v, np.int64)
    sel_dist = np.empty(v)
    total = 0
    for a in range(n):
        px = positions[a, 0]
        py = positions[a, 1]
        # A point within r of an edge is within r + half a chunk of one of its samples
        # (the slack covers the rounding of the samples).
        reach = (ranges[a] + half_chunk) * (1.0 + 1e-9) + 1e-9
        found = kdtree.within(tree, px, py, reach * reach, candidates, stack)
        k = 0
        for c in range(found):
            e = edge_of_sample[candidates[c]]
            if seen[e] == a:
                continue
            seen[e] = a
            ax = point[e, 0]
            ay = point[e, 1]
            abx = point[nxt[e], 0] - ax
            aby = point[nxt[e], 1] - ay
            acx = px - ax
            acy = py - ay
            if not abx * acy - aby * acx < 0.0 or (owner[e] >= 0 and owner[e] != a):
                continue
            r = min(max((acx * abx + acy * aby) / (length[e] * length[e]), 0.0), 1.0)
            cx = ax + r * abx - px
            cy = ay + r * aby - py
            dist_sq = cx * cx + cy * cy
            if not dist_sq < ranges[a] * ranges[a]:
                continue
            sel_edge[k] = e
            sel_dist[k] = dist_sq
            k += 1
        if total + k > edges.shape[0]:
            grown = np.empty(max(2 * edges.shape[0], total + k), np.int64)
            grown[:total] = edges[:total]
            edges = grown
        if k > 1:
            # By distance, equal distances by edge id.
            by_id = np.argsort(sel_edge[:k])
            order = np.argsort(sel_dist[:k][by_id], kind='mergesort')
            edges[total:total + k] = sel_edge[:k][by_id][order]
        elif k == 1:
            edges[total] = sel_edge[0]
        total += k
        offsets[a + 1] = total
    return offsets, edges[:total].copy()
