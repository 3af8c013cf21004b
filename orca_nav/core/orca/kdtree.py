"""
A compiled 2-D k-d tree: the agents' nearest neighbours and the obstacle edges near each agent.

Built as RVO2 builds its agent tree (split the longer side of the bounding box in the middle,
leaves of at most LEAF_SIZE points) and walked without recursion, nearer child first. Built
and queried inside one compiled call, it replaces scipy's cKDTree: measured in a dense crowd of
1000, 0.63 ms for every agent's 10 neighbours against cKDTree's 1.4 ms (build and query), and
at 100 agents 0.01 ms against 0.08 ms, most of which was Python around the calls.

A tree is the tuple ``(order, begin, end, child, box, pts)``: ``order`` (N,) the points in
leaf order, node ``m`` holds ``order[begin[m]:end[m]]``, its children are ``child[m]`` and
``child[m] + 1`` (``-1`` for a leaf), ``box[m]`` is its bounding box (min x, max x, min y,
max y) and ``pts`` (N, 2) the points in leaf order.
"""

import numpy as np

from .._jit import njit

# At most this many points in a leaf (RVO2's MAX_LEAF_SIZE).
LEAF_SIZE = 10


@njit(cache=True)
def build(points):
    """Return the k-d tree of ``points`` (N, 2) (see the module docstring)."""
    n = points.shape[0]
    order = np.arange(n)
    max_nodes = max(1, 2 * n)
    begin = np.empty(max_nodes, np.int64)
    end = np.empty(max_nodes, np.int64)
    child = np.full(max_nodes, -1, np.int64)
    box = np.empty((max_nodes, 4))
    stack = np.empty(max_nodes, np.int64)
    begin[0] = 0
    end[0] = n
    count = 1
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        b = begin[node]
        e = end[node]
        min_x = np.inf
        max_x = -np.inf
        min_y = np.inf
        max_y = -np.inf
        for q in range(b, e):
            x = points[order[q], 0]
            y = points[order[q], 1]
            min_x = min(min_x, x)
            max_x = max(max_x, x)
            min_y = min(min_y, y)
            max_y = max(max_y, y)
        box[node, 0] = min_x
        box[node, 1] = max_x
        box[node, 2] = min_y
        box[node, 3] = max_y
        if e - b <= LEAF_SIZE:
            continue
        axis = 0 if max_x - min_x > max_y - min_y else 1
        split = 0.5 * (min_x + max_x) if axis == 0 else 0.5 * (min_y + max_y)
        left = b
        right = e
        while left < right:
            while left < right and points[order[left], axis] < split:
                left += 1
            while right > left and points[order[right - 1], axis] >= split:
                right -= 1
            if left < right:
                tmp = order[left]
                order[left] = order[right - 1]
                order[right - 1] = tmp
                left += 1
                right -= 1
        if left == b or left == e:
            # Every point on one side (all equal along the axis, up to rounding): halve.
            left = (b + e) // 2
        child[node] = count
        begin[count] = b
        end[count] = left
        begin[count + 1] = left
        end[count + 1] = e
        stack[top] = count
        stack[top + 1] = count + 1
        top += 2
        count += 2
    pts = np.empty((n, 2))
    for q in range(n):
        pts[q, 0] = points[order[q], 0]
        pts[q, 1] = points[order[q], 1]
    return order, begin[:count], end[:count], child[:count], box[:count], pts


@njit(cache=True)
def _box_dist_sq(box, m, x, y):
    """Squared distance from (x, y) to node m's box (never more than to a point in it)."""
    dx = max(box[m, 0] - x, 0.0, x - box[m, 1])
    dy = max(box[m, 2] - y, 0.0, y - box[m, 3])
    return dx * dx + dy * dy


@njit(cache=True)
def nearest(tree, i, x, y, range_sq, out, out_dist, stack, stack_dist, groups=None,
            ignore=None):
    """
    Write the points nearest to (x, y) into ``out``, nearest first; return how many.

    At most ``out.shape[0]`` points closer than ``sqrt(range_sq)`` (squared distance strictly
    below range_sq), point ``i`` left out (the asking agent), and with ``ignore`` (N, G) bool
    every point j with ``ignore[i, groups[j]]``. Equal distances go by the lower index, so the
    answer does not depend on the tree. ``out_dist`` receives the squared distances;
    ``stack``, ``stack_dist`` are scratch of at least the tree's node count.
    """
    order, begin, end, child, box, pts = tree
    k = out.shape[0]
    m = 0
    if k == 0 or order.shape[0] == 0:
        return 0
    stack[0] = 0
    stack_dist[0] = _box_dist_sq(box, 0, x, y)
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        bd = stack_dist[top]
        # Prune: nothing in the box can be kept any more.
        if (m == k and bd > out_dist[k - 1]) or (m < k and bd >= range_sq):
            continue
        c = child[node]
        if c >= 0:
            d_left = _box_dist_sq(box, c, x, y)
            d_right = _box_dist_sq(box, c + 1, x, y)
            # The nearer child on top, so that it is searched first.
            if d_left <= d_right:
                stack[top] = c + 1
                stack_dist[top] = d_right
                stack[top + 1] = c
                stack_dist[top + 1] = d_left
            else:
                stack[top] = c
                stack_dist[top] = d_left
                stack[top + 1] = c + 1
                stack_dist[top + 1] = d_right
            top += 2
            continue
        for q in range(begin[node], end[node]):
            j = order[q]
            if j == i:
                continue
            dx = pts[q, 0] - x
            dy = pts[q, 1] - y
            d = dx * dx + dy * dy
            if m == k:
                if d > out_dist[k - 1] or (d == out_dist[k - 1] and j > out[k - 1]):
                    continue
            elif not d < range_sq:
                continue
            if ignore is not None:
                if ignore[i, groups[j]]:
                    continue
            # Insert (d, j), the list sorted by distance, then index.
            p = m if m < k else k - 1
            while p > 0 and (out_dist[p - 1] > d or (out_dist[p - 1] == d and out[p - 1] > j)):
                out[p] = out[p - 1]
                out_dist[p] = out_dist[p - 1]
                p -= 1
            out[p] = j
            out_dist[p] = d
            if m < k:
                m += 1
    return m


@njit(cache=True)
def agent_neighbors(positions, neighbor_dist, max_neighbors, groups=None, ignore=None):
    """
    (N, max_neighbors) int64: each agent's nearest others within neighbor_dist, -1 padded.

    RVO2's rule (the max_neighbors nearest, squared distance strictly below neighbor_dist
    squared, nearest first), equal distances by the lower index; ``groups``, ``ignore`` as in
    ``nearest``.
    """
    n = positions.shape[0]
    out = np.full((n, max_neighbors), -1, np.int64)
    if n < 2 or max_neighbors == 0:
        return out
    tree = build(positions)
    nodes = tree[1].shape[0]
    stack = np.empty(nodes + 2, np.int64)
    stack_dist = np.empty(nodes + 2)
    dist = np.empty(max_neighbors)
    range_sq = neighbor_dist * neighbor_dist
    for i in range(n):
        nearest(tree, i, positions[i, 0], positions[i, 1], range_sq, out[i], dist, stack,
                stack_dist, groups, ignore)
    return out


@njit(cache=True)
def within(tree, x, y, range_sq, out, stack):
    """
    Write the indices of the points at squared distance <= range_sq into ``out``; count.

    ``stack`` is scratch of at least the tree's node count.
    """
    order, begin, end, child, box, pts = tree
    m = 0
    if order.shape[0] == 0:
        return 0
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        node = stack[top]
        if _box_dist_sq(box, node, x, y) > range_sq:
            continue
        c = child[node]
        if c >= 0:
            stack[top] = c
            stack[top + 1] = c + 1
            top += 2
            continue
        for q in range(begin[node], end[node]):
            dx = pts[q, 0] - x
            dy = pts[q, 1] - y
            if dx * dx + dy * dy <= range_sq:
                out[m] = order[q]
                m += 1
    return m
