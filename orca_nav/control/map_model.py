"""A map made ready for a fleet: its wall segments, indexed for ORCA."""

import numpy as np
from orca_nav.core import Obstacles
from scipy.spatial import cKDTree

# Map walls are cut into pieces at most this long [m], indexed by their midpoints: a wall
# within r of a point has a piece whose midpoint is within r + WALL_PIECE / 2 of it.
WALL_PIECE = 1.0


class MapModel:
    """
    One map (a GridMap) and its wall segments as ORCA obstacles.

    The walls are extracted off the control tick (planning.prepare_map, in the worker); a tick
    then asks ``walls_near``.
    """

    def __init__(self, grid, walls, map_id=0):
        """Hold a GridMap and its wall pieces (M, 2, 2) of at most WALL_PIECE [m]."""
        self.grid = grid
        self.map_id = map_id
        self.walls = np.asarray(walls, dtype=float).reshape(-1, 2, 2)
        self._tree = cKDTree(self.walls.mean(axis=1)) if len(self.walls) else None
        self._obstacles = None

    @property
    def obstacles(self):
        """Return all the walls as ORCA obstacles, built once (the core indexes them)."""
        if self._obstacles is None:
            self._obstacles = Obstacles.build(segments=self.walls)
        return self._obstacles

    @classmethod
    def build(cls, grid):
        """Extract and cut the walls here (tests, tools; the node does it in the worker)."""
        return cls(grid, wall_pieces(grid))

    def walls_near(self, points, ranges):
        """
        Return the wall pieces within ``ranges`` (K,) [m] of any of ``points`` (K, 2).

        Conservative: every piece within range is returned, a few farther ones may be.
        """
        if self._tree is None or len(points) == 0:
            return np.zeros((0, 2, 2))
        hits = self._tree.query_ball_point(np.asarray(points, dtype=float),
                                           np.asarray(ranges, dtype=float) + 0.5 * WALL_PIECE)
        idx = np.unique(np.concatenate([np.asarray(h, dtype=np.int64) for h in hits]))
        return self.walls[idx]


def wall_pieces(grid):
    """Return a GridMap's wall outline cut into pieces of at most WALL_PIECE [m]: (M, 2, 2)."""
    return split_segments(grid.wall_segments(), WALL_PIECE)


def split_segments(segments, max_length):
    """
    Cut (M, 2, 2) segments into collinear pieces no longer than ``max_length`` [m].

    >>> split_segments(np.array([[[0.0, 0.0], [2.5, 0.0]]]), 1.0)[:, :, 0].round(3).tolist()
    [[0.0, 0.833], [0.833, 1.667], [1.667, 2.5]]
    """
    segments = np.asarray(segments, dtype=float).reshape(-1, 2, 2)
    if len(segments) == 0:
        return segments
    a, b = segments[:, 0], segments[:, 1]
    count = np.maximum(1, np.ceil(np.hypot(*(b - a).T) / max_length).astype(int))
    owner = np.repeat(np.arange(len(segments)), count)
    k = np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
    t0 = (k / count[owner])[:, None]
    t1 = ((k + 1) / count[owner])[:, None]
    d = (b - a)[owner]
    return np.stack([a[owner] + t0 * d, a[owner] + t1 * d], axis=1)
