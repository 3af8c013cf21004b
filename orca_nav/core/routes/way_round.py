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
from scipy.ndimage import distance_transform_edt
from skimage.graph import MCP_Geometric

from ..geometry import point_segment_distance

# [m] Cells of the local grid, and its half-width around the robot.
WAY_ROUND_RESOLUTION = 0.1
WAY_ROUND_WINDOW = 4.0


def way_blocked(start, target, centres, reach, look, walls=None, wall_reach=0.0):
    """
    Whether the segment from start toward target (its first ``look`` metres) passes a disc.

    centres : (K, 2); reach : (K,) [m] each disc's radius grown by the robot's. walls : None
    or (M, 2, 2) segments, passed within wall_reach [m] (the robot's radius and a pad) too.
    """
    way = np.asarray(target, float) - start
    length = math.hypot(*way)
    if length < 1e-9 or not (len(centres) or (walls is not None and len(walls))):
        return False
    end = start + way * min(1.0, look / length)
    seg = end - start
    t = np.clip((centres - start) @ seg / (seg @ seg), 0.0, 1.0)
    near = start + t[:, None] * seg
    if np.any(np.hypot(*(centres - near).T) < reach):
        return True
    return walls is not None and bool(np.any(
        segments_distance(np.asarray(walls, float), start, end) < wall_reach))


def segments_distance(walls, a, b):
    """Return the distances (M,) [m] between segments walls (M, 2, 2) and the segment ab."""
    p, q = walls[:, 0], walls[:, 1]
    # Apart, two segments are nearest at an end of one of them.
    ends = np.minimum(point_segment_distance(np.array([a, b]), walls).min(axis=0),
                      point_segment_distance(np.concatenate([p, q]),
                                             np.array([[a, b]])).reshape(2, -1).min(axis=0))
    d = b - a
    e = q - p
    denom = d[0] * e[:, 1] - d[1] * e[:, 0]
    ap = p - a
    with np.errstate(divide='ignore', invalid='ignore'):
        t = (ap[:, 0] * e[:, 1] - ap[:, 1] * e[:, 0]) / denom
        u = (ap[:, 0] * d[1] - ap[:, 1] * d[0]) / denom
    cross = (denom != 0.0) & (t >= 0.0) & (t <= 1.0) & (u >= 0.0) & (u <= 1.0)
    return np.where(cross, 0.0, ends)


def way_round(start, target, centres, reach, carrot, window=WAY_ROUND_WINDOW,
              resolution=WAY_ROUND_RESOLUTION, walls=None, wall_reach=0.0):
    """
    Return the unit direction from start round the discs toward target, or None.

    start, target : (2,) [m]; centres (K, 2), reach (K,) [m]: the standing discs grown by the
    robot's radius and a pad; a disc that already reaches the robot shrinks to leave it free
    (squeezed against a person, the robot must still get out). walls : None or (M, 2, 2)
    segments, grown by wall_reach [m] and shrunk as the discs. The direction is toward the
    farthest point within ``carrot`` [m] along the way that is in sight over free cells.
    Shut in, the way leads to the reachable cell nearest the target; None when that is the
    robot's own.
    """
    start = np.asarray(start, float)
    n = int(round(window / resolution))
    size = 2 * n + 1
    # The cells lie on multiples of resolution in the world, the robot in the one nearest it
    # (its centre ``cell``): a start that moves by less than a cell (a differential robot's
    # point ahead, when it turns) sees the same cells and gets the same way. A grid laid
    # from the start itself opened and shut a gap of a few cells between two people as the
    # start moved by millimetres, and the way flipped between the gap and round either side.
    cell = np.round(start / resolution) * resolution
    origin = cell - n * resolution
    axis = origin[0] + resolution * np.arange(size), origin[1] + resolution * np.arange(size)
    own = np.hypot(*(centres - start).T)
    squeezed = own < reach
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
    if walls is not None and len(walls):
        _grow_walls(lethal, axis, start, np.asarray(walls, float), wall_reach, resolution)
    lethal[n, n] = False  # the robot's cell (its centre may be within a disc shrunk to free it)
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
    # Within a disc's reach already, the way does not go deeper (the robot's cell may lie a
    # little nearer the disc than the robot).
    for c in centres[squeezed]:
        toward = (c - start) / max(math.hypot(*(c - start)), 1e-9)
        way = way - max(way @ toward, 0.0) * toward
    length = math.hypot(*way)
    return way / length if length > 1e-9 else None


def _grow_walls(lethal, axis, start, walls, wall_reach, resolution):
    """
    Mark the cells within wall_reach of the walls lethal, in place.

    The walls are drawn into the grid and grown by a distance transform (exact to the cells'
    size). Where the robot is nearer a wall than wall_reach already, the walls are grown by
    a little less than that distance instead, so that its own cell stays free.
    """
    own = point_segment_distance(start[None], walls)[0].min()
    reach = min(wall_reach, own - 0.5 * resolution)
    if reach <= 0.0:
        return
    size = lethal.shape[0]
    drawn = np.zeros_like(lethal)
    # Every wall sampled at half-cell steps, all at once (a wall longer than the window's
    # diagonal is cut to its part nearest the robot).
    a, ab = walls[:, 0], walls[:, 1] - walls[:, 0]
    length = np.hypot(*ab.T)
    keep = 2.0 * math.sqrt(2.0) * (axis[0][-1] - axis[0][0])
    along = np.einsum('ij,ij->i', start - a, ab) / np.maximum(length * length, 1e-12)
    lo = np.clip(along - 0.5 * keep / np.maximum(length, 1e-12), 0.0, 1.0)
    hi = np.clip(along + 0.5 * keep / np.maximum(length, 1e-12), 0.0, 1.0)
    counts = np.ceil((hi - lo) * length / (0.5 * resolution)).astype(int) + 1
    first = np.repeat(np.cumsum(counts) - counts, counts)
    row = np.repeat(np.arange(len(walls)), counts)
    t = lo[row] + (hi - lo)[row] * (np.arange(counts.sum()) - first) / np.maximum(
        counts[row] - 1, 1)
    points = a[row] + t[:, None] * ab[row]
    cols = np.rint((points[:, 0] - axis[0][0]) / resolution).astype(int)
    rows = np.rint((points[:, 1] - axis[1][0]) / resolution).astype(int)
    inside = (cols >= 0) & (cols < size) & (rows >= 0) & (rows < size)
    drawn[rows[inside], cols[inside]] = True
    if not drawn.any():
        return
    lethal |= distance_transform_edt(~drawn, sampling=resolution) < reach


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


__all__ = ['segments_distance', 'way_blocked', 'way_round', 'WAY_ROUND_RESOLUTION',
           'WAY_ROUND_WINDOW']
