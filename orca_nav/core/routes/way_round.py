"""
A way round standing people: the direction that goes round the discs in a robot's way.

ORCA only looks one velocity ahead. Where people stand still (a crowd that has reached its
goals, a queue, a group talking), a robot whose straight way runs into them slides along the
nearest one's half-plane and, between two of them, stops in the wedge they make: a local
minimum that no margin or horizon opens, however long it waits. A route planner would go round;
people are not on the map, so ``way_round`` plans on a small grid of its own, each time the
straight way is blocked: the cells within reach of a standing disc (both radii plus a pad) are
lethal, a cost field is grown from the robot (``skimage.graph.MCP_Geometric``, 8-neighbour
moves), and the cell that minimises its cost plus its straight distance to the target is the
way's end (the target itself when it is in the window and reachable). The answer is the
direction toward a point ``carrot`` metres along that way; the solver still decides what is
safe, this only says which way round.
"""

import math

import numpy as np
from skimage.graph import MCP_Geometric

# [m] Cells of the local grid, and its half-width around the robot.
WAY_ROUND_RESOLUTION = 0.1
WAY_ROUND_WINDOW = 4.0


def way_blocked(start, target, centres, reach, look):
    """
    Whether the segment from start toward target (its first ``look`` metres) passes a disc.

    centres : (K, 2); reach : (K,) [m] each disc's radius grown by the robot's.
    """
    way = np.asarray(target, float) - start
    length = math.hypot(*way)
    if length < 1e-9 or not len(centres):
        return False
    end = start + way * min(1.0, look / length)
    seg = end - start
    t = np.clip((centres - start) @ seg / (seg @ seg), 0.0, 1.0)
    near = start + t[:, None] * seg
    return bool(np.any(np.hypot(*(centres - near).T) < reach))


def way_round(start, target, centres, reach, carrot, window=WAY_ROUND_WINDOW,
              resolution=WAY_ROUND_RESOLUTION):
    """
    Return the unit direction from start round the discs toward target, or None.

    start, target : (2,) [m]; centres (K, 2), reach (K,) [m]: the standing discs grown by the
    robot's radius and a pad; a disc that already reaches the robot shrinks to leave it free
    (squeezed against a person, the robot must still get out). The direction is toward the
    farthest point within ``carrot`` [m] along the way that is in sight over free cells.
    Shut in, the way leads to the reachable cell nearest the target; None when that is the
    robot's own.
    """
    start = np.asarray(start, float)
    n = int(round(window / resolution))
    size = 2 * n + 1
    origin = start - n * resolution
    axis = origin[0] + resolution * np.arange(size), origin[1] + resolution * np.arange(size)
    own = np.hypot(*(centres - start).T)
    reach = np.minimum(reach, own - 0.5 * resolution)
    lethal = np.zeros((size, size), bool)
    for (cx, cy), r in zip(centres, reach):
        if r <= 0.0 or abs(cx - start[0]) > window + r or abs(cy - start[1]) > window + r:
            continue
        lo_c, hi_c = np.searchsorted(axis[0], [cx - r, cx + r])
        lo_r, hi_r = np.searchsorted(axis[1], [cy - r, cy + r])
        xs = axis[0][lo_c:hi_c] - cx
        ys = axis[1][lo_r:hi_r] - cy
        lethal[lo_r:hi_r, lo_c:hi_c] |= xs[None, :] ** 2 + ys[:, None] ** 2 < r * r
    costs = np.where(lethal, -1.0, 1.0)
    mcp = MCP_Geometric(costs, fully_connected=True)
    travelled, _ = mcp.find_costs([(n, n)])
    travelled *= resolution
    best = _way_end(travelled, lethal, axis, target, n)
    if best is None:
        return None
    path = np.array(mcp.traceback(best), float)  # (row, col) from the robot's cell
    points = origin + resolution * path[:, ::-1]
    steps = np.hypot(*np.diff(points, axis=0).T)
    along = np.concatenate([[0.0], np.cumsum(steps)])
    # The farthest point within carrot along the way that the robot sees over free cells.
    k = min(int(np.searchsorted(along, carrot)), len(points) - 1)
    while k > 1 and not _clear(lethal, path[0], path[k]):
        k -= 1
    way = points[k] - start
    length = math.hypot(*way)
    return way / length if length > 1e-9 else None


def _clear(lethal, a, b):
    """Whether the cells on the straight line from cell a to cell b (row, col) are free."""
    count = int(np.ceil(2.0 * np.abs(b - a).max())) + 1
    rows, cols = np.rint(np.linspace(a, b, count)).astype(int).T
    return not lethal[rows, cols].any()


def _way_end(travelled, lethal, axis, target, n):
    """
    Return the (row, col) where the way leaves the window, or None.

    The target's cell when it lies in the window and is reachable; else the border cell of
    least travel plus straight distance to the target (beyond the window the way is taken as
    clear); the reachable cell nearest the target when neither is reachable. None when that
    is the robot's own cell (n, n).
    """
    col, row = (np.searchsorted(a, t - 0.5 * (a[1] - a[0])) for a, t in zip(axis, target))
    size = len(axis[0])
    reachable = np.isfinite(travelled) & ~lethal
    if 0 <= row < size and 0 <= col < size and reachable[row, col]:
        return row, col
    xs, ys = np.meshgrid(axis[0], axis[1])
    straight = np.hypot(xs - target[0], ys - target[1])
    border = np.zeros_like(lethal)
    border[[0, -1], :] = border[:, [0, -1]] = True
    if not (0 <= row < size and 0 <= col < size) and (border & reachable).any():
        total = np.where(border & reachable, travelled + straight, np.inf)
    else:
        total = np.where(reachable, straight, np.inf)
    best = np.unravel_index(np.argmin(total), total.shape)
    return None if best == (n, n) or not np.isfinite(total[best]) else best


__all__ = ['way_blocked', 'way_round', 'WAY_ROUND_RESOLUTION', 'WAY_ROUND_WINDOW']
