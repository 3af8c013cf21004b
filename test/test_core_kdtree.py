"""
The compiled k-d tree gives exactly the neighbours of a search through all pairs, ties included.

Agents: the max_neighbors nearest with a squared distance strictly below neighbor_dist squared,
by squared distance, then index. Obstacle edges: RVO2's selection, by distance, then edge id.
"""

import numpy as np
from orca_nav.core import agent_neighbors, Obstacles
from orca_nav.core.orca import kdtree
import pytest


def brute_neighbors(pos, neighbor_dist, max_neighbors):
    """Every pair, the same arithmetic as the tree: (dx * dx + dy * dy, index) order."""
    n = pos.shape[0]
    out = np.full((n, max_neighbors), -1, np.int64)
    for i in range(n):
        dx = pos[:, 0] - pos[i, 0]
        dy = pos[:, 1] - pos[i, 1]
        d = dx * dx + dy * dy
        keep = np.flatnonzero((np.arange(n) != i) & (d < neighbor_dist * neighbor_dist))
        keep = keep[np.lexsort((keep, d[keep]))][:max_neighbors]
        out[i, :keep.shape[0]] = keep
    return out


def scenes():
    """Random crowds, grids (many exact ties), a ring and stacks of identical points."""
    rng = np.random.default_rng(5)
    out = [rng.uniform(-20.0, 20.0, (300, 2)), rng.normal(0.0, 3.0, (500, 2))]
    grid = np.stack(np.meshgrid(np.arange(20.0), np.arange(15.0)), -1).reshape(-1, 2)
    out += [grid, grid * 0.5 + 1e6, grid[rng.permutation(grid.shape[0])]]
    angles = 2.0 * np.pi * np.arange(200) / 200
    out.append(60.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1))
    out.append(np.zeros((40, 2)))
    out.append(np.repeat(rng.uniform(-3.0, 3.0, (12, 2)), 7, axis=0))
    out += [np.zeros((0, 2)), np.ones((1, 2)), rng.uniform(0.0, 1.0, (2, 2))]
    return out


@pytest.mark.parametrize('scene', range(len(scenes())))
@pytest.mark.parametrize('neighbor_dist, max_neighbors', [(1.01, 4), (2.5, 10), (15.0, 10),
                                                          (100.0, 25), (3.0, 0), (0.5, 3)])
def test_agent_neighbors_equal_all_pairs(scene, neighbor_dist, max_neighbors):
    """The same neighbours in the same order as a search through all pairs."""
    pos = scenes()[scene]
    got = agent_neighbors(pos, neighbor_dist, max_neighbors)
    np.testing.assert_array_equal(got, brute_neighbors(pos, neighbor_dist, max_neighbors))


def test_tree_holds_every_point_once_in_boxes_that_contain_it():
    """Each leaf lists its points, children partition their parent, boxes are tight."""
    pos = np.random.default_rng(2).normal(0.0, 5.0, (1000, 2))
    order, begin, end, child, box, pts = kdtree.build(pos)
    assert sorted(order.tolist()) == list(range(1000))
    np.testing.assert_array_equal(pts, pos[order])
    for m in range(begin.shape[0]):
        inside = pos[order[begin[m]:end[m]]]
        assert inside.shape[0] > 0
        np.testing.assert_array_equal(box[m], [inside[:, 0].min(), inside[:, 0].max(),
                                               inside[:, 1].min(), inside[:, 1].max()])
        if child[m] < 0:
            assert end[m] - begin[m] <= kdtree.LEAF_SIZE
        else:
            c = child[m]
            assert (begin[c], end[c + 1], end[c]) == (begin[m], end[m], begin[c + 1])


def test_within_finds_every_point_in_range():
    """The range search returns exactly the points at squared distance <= range_sq."""
    rng = np.random.default_rng(4)
    pos = rng.uniform(-10.0, 10.0, (700, 2))
    tree = kdtree.build(pos)
    out = np.empty(700, np.int64)
    stack = np.empty(tree[1].shape[0] + 2, np.int64)
    for x, y, r in rng.uniform(-12.0, 12.0, (50, 3)):
        m = kdtree.within(tree, x, y, r * r, out, stack)
        d = (pos[:, 0] - x) ** 2 + (pos[:, 1] - y) ** 2
        assert sorted(out[:m].tolist()) == np.flatnonzero(d <= r * r).tolist()


def brute_edges(obstacles, pos, ranges):
    """RVO2's obstacle neighbours through all pairs, with the arithmetic of the selection."""
    offsets, edges = [0], []
    point, nxt, length, owner = obstacles.point, obstacles.next, obstacles.length, obstacles.owner
    for a in range(pos.shape[0]):
        kept = []
        for e in range(obstacles.num_vertices):
            ax, ay = point[e]
            abx, aby = point[nxt[e], 0] - ax, point[nxt[e], 1] - ay
            acx, acy = pos[a, 0] - ax, pos[a, 1] - ay
            if not abx * acy - aby * acx < 0.0 or (owner[e] >= 0 and owner[e] != a):
                continue
            r = min(max((acx * abx + acy * aby) / (length[e] * length[e]), 0.0), 1.0)
            cx, cy = ax + r * abx - pos[a, 0], ay + r * aby - pos[a, 1]
            if cx * cx + cy * cy < ranges[a] * ranges[a]:
                kept.append((cx * cx + cy * cy, e))
        edges += [e for _, e in sorted(kept)]
        offsets.append(len(edges))
    return np.array(offsets), np.array(edges, np.int64)


@pytest.mark.parametrize('seed', range(6))
def test_obstacle_neighbors_equal_all_pairs(seed):
    """Squares (shared nearest vertices: ties), long walls, owned segments: all pairs' answer."""
    rng = np.random.default_rng(seed)
    square = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    polygons = [square * rng.uniform(0.2, 2.0) + rng.uniform(-15.0, 15.0, 2) for _ in range(8)]
    polygons.append(np.array([[-30.0, -30.0], [30.0, -30.0], [30.0, 30.0]]))
    segments = rng.uniform(-20.0, 20.0, (30, 2, 2))
    n = 150
    owner = rng.integers(-1, n, 30)
    obstacles = Obstacles.build(polygons, segments, owner)
    pos = rng.uniform(-25.0, 25.0, (n, 2))
    pos[:10] = np.round(pos[:10])  # on the grid of the squares' centres sometimes
    ranges = rng.uniform(0.5, 12.0, n)
    offsets, edges = obstacles.neighbors(pos, ranges)
    want_offsets, want_edges = brute_edges(obstacles, pos, ranges)
    np.testing.assert_array_equal(offsets, want_offsets)
    np.testing.assert_array_equal(edges, want_edges)
