"""
Occupancy grid maps without ROS: cell/world conversion, inflation, distances and wall outlines.

A :class:`GridMap` holds a map in the ``nav_msgs/OccupancyGrid`` convention (row 0 is the
smallest y, ``data[r * W + c]`` is the cell in row r, column c) as two boolean masks. It answers
the questions a route planner and an ORCA controller ask of a map:

- which cells a robot of a given radius cannot stand in (:meth:`GridMap.blocked`),
- how far a point is from the nearest obstacle (:meth:`GridMap.distance_to_obstacle`),
- the wall outlines as line segments (:meth:`GridMap.wall_segments`), to give ORCA as obstacles.

Cell indices are written (column, row) = (x, y) order, like world points; numpy arrays are
indexed ``[row, column]``.

Example::

    grid = GridMap.from_occupancy(msg_data, width, height, 0.05, origin=(-10.0, -10.0, 0.0))
    blocked = grid.blocked(0.25)            # (H, W) bool
    segments = grid.wall_segments()         # (M, 2, 2) [m]
"""

from dataclasses import dataclass, field
import math
from typing import Optional, Sequence, Tuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import ndimage

from .outline import outline_segments

# ROS map_server writes 100 for occupied, 0 for free and -1 for unknown; cells at or above this
# probability [%] count as occupied (map_server's own default occupied_thresh is 0.65).
DEFAULT_OCCUPIED_THRESHOLD = 65
# Largest map accepted by default: 25 M cells (5 km x 5 km at 1 m, 250 m x 250 m at 5 cm) keeps
# the masks, the distance field and the planner's arrays within a few GB.
DEFAULT_MAX_CELLS = 25_000_000
# Cell distances are square roots of integers; this slack [cells] keeps a clearance equal to
# such a distance (e.g. exactly 2 cells) on the blocked side despite floating-point rounding.
DISTANCE_SLACK = 1e-9


class MapError(ValueError):
    """A map that cannot be used, with the reason."""


def _rotation(yaw: float) -> np.ndarray:
    """Return the (2, 2) rotation matrix of angle ``yaw`` [rad]."""
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s], [s, c]])


def _as_points(xy: ArrayLike) -> np.ndarray:
    """Return ``xy`` as a (K, 2) float array; a single point (2,) becomes (1, 2)."""
    points = np.asarray(xy, dtype=float)
    if points.ndim == 1:
        points = points[np.newaxis, :]
    if points.ndim != 2 or points.shape[1] != 2:
        raise ValueError(f'expected points of shape (K, 2) or (2,), got {points.shape}')
    return points


def _occupancy_masks(data: ArrayLike, width: int, height: int, resolution: float,
                     occupied_threshold: int, unknown_is_free: bool,
                     max_cells: int) -> Tuple[np.ndarray, np.ndarray, float]:
    """
    Check the fields of an OccupancyGrid; return (H, W) occupied and unknown masks, resolution.

    Raise MapError for the reasons listed in :meth:`GridMap.from_occupancy`.
    """
    width, height = int(width), int(height)
    if width <= 0 or height <= 0:
        raise MapError(f'map has zero size: width {width}, height {height}')
    cells = width * height
    # Checked before touching the data, so a huge map is refused without allocating it.
    if cells > max_cells:
        raise MapError(f'map has {cells} cells, above max_cells {max_cells}')
    resolution = float(resolution)
    if not math.isfinite(resolution) or resolution <= 0.0:
        raise MapError(f'resolution must be positive and finite, got {resolution}')
    if not 1 <= occupied_threshold <= 100:
        raise MapError(f'occupied_threshold must be in 1..100, got {occupied_threshold}')
    values = np.asarray(data)
    if values.ndim != 1:
        raise MapError(f'data must be a flat sequence (row-major), got shape {values.shape}')
    if values.size != cells:
        raise MapError(f'data has {values.size} values, expected width * height = '
                       f'{width} * {height} = {cells}')
    values = values.astype(np.int16)
    bad = (values < -1) | (values > 100)
    if np.any(bad):
        raise MapError(f'{int(np.count_nonzero(bad))} values outside -1..100, e.g. '
                       f'{int(values[np.argmax(bad)])}')
    grid = values.reshape(height, width)
    unknown = grid == -1
    occupied = grid >= occupied_threshold
    if np.all(unknown):
        raise MapError('map has no known cell (all unknown)')
    free = ~occupied & (~unknown | unknown_is_free)
    if not np.any(free):
        raise MapError('map has no free cell')
    return occupied, unknown, resolution


@dataclass(frozen=True, eq=False)
class GridMap:
    """
    An occupancy grid in the ROS nav_msgs/OccupancyGrid convention.

    Fields:
        occupied: (H, W) bool; row r, column c is the cell whose lower-left corner is
            origin + (c, r) * resolution (ROS: data[r * W + c], row 0 = smallest y)
        unknown: (H, W) bool, cells never observed (-1 in the message)
        resolution: cell side [m / cell]
        origin: (x, y, yaw) of cell (0, 0)'s corner in the global frame [m, m, rad]
        unknown_is_free: whether unknown cells may be driven through (else they are obstacles)

    The arrays are made read-only: derived fields (distance field, inflated masks, wall
    segments) are cached on the instance.
    """

    occupied: np.ndarray
    unknown: np.ndarray
    resolution: float
    origin: tuple
    unknown_is_free: bool = False
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Check the fields, store them as read-only arrays and plain floats."""
        occupied = np.array(self.occupied, dtype=bool)
        unknown = np.array(self.unknown, dtype=bool)
        if occupied.ndim != 2 or occupied.shape != unknown.shape:
            raise MapError(f'occupied and unknown must be (H, W) masks of the same shape, got '
                           f'{occupied.shape} and {unknown.shape}')
        if occupied.size == 0:
            raise MapError(f'map has zero size {occupied.shape}')
        resolution = float(self.resolution)
        if not math.isfinite(resolution) or resolution <= 0.0:
            raise MapError(f'resolution must be positive and finite, got {self.resolution}')
        origin = tuple(float(v) for v in self.origin)
        if len(origin) == 2:
            # An (x, y) origin is an unrotated map.
            origin = origin + (0.0,)
        if len(origin) != 3 or not all(math.isfinite(v) for v in origin):
            raise MapError(f'origin must be three finite numbers (x, y, yaw), got {self.origin}')
        occupied.setflags(write=False)
        unknown.setflags(write=False)
        object.__setattr__(self, 'occupied', occupied)
        object.__setattr__(self, 'unknown', unknown)
        object.__setattr__(self, 'resolution', resolution)
        object.__setattr__(self, 'origin', origin)
        object.__setattr__(self, 'unknown_is_free', bool(self.unknown_is_free))

    @classmethod
    def from_occupancy(cls, data: ArrayLike, width: int, height: int, resolution: float,
                       origin: Sequence[float] = (0.0, 0.0, 0.0), *,
                       occupied_threshold: int = DEFAULT_OCCUPIED_THRESHOLD,
                       unknown_is_free: bool = False,
                       max_cells: int = DEFAULT_MAX_CELLS) -> 'GridMap':
        """
        Build a map from the fields of a nav_msgs/OccupancyGrid message.

        Inputs:
            data: flat int sequence of length width * height, values -1 (unknown) or 0..100
                (occupancy probability [%]), row-major with row 0 at the smallest y
            width, height: map size [cells]
            resolution: cell side [m]
            origin: (x, y, yaw) of cell (0, 0)'s lower-left corner [m, m, rad]
            occupied_threshold: cells with a value >= this are occupied (1..100)
            unknown_is_free: treat unknown cells as free space (else as obstacles)
            max_cells: refuse larger maps (memory bound)

        Errors:
            MapError: wrong data length, zero size, non-positive or non-finite resolution,
                non-finite origin, more cells than max_cells, values outside -1..100, a map
                with no known cell (all unknown) or with no free cell.
        """
        occupied, unknown, resolution = _occupancy_masks(
            data, width, height, resolution, occupied_threshold, unknown_is_free, max_cells)
        return cls(occupied, unknown, resolution, tuple(origin), unknown_is_free)

    # --- geometry -----------------------------------------------------------------------------

    @property
    def shape(self) -> Tuple[int, int]:
        """Return (H, W), the map size [cells]."""
        return self.occupied.shape

    @property
    def obstacles(self) -> np.ndarray:
        """(H, W) bool: cells a robot may not enter, occupied plus unknown unless it is free."""
        mask = self._cache.get('obstacles')
        if mask is None:
            mask = self.occupied if self.unknown_is_free else self.occupied | self.unknown
            mask.setflags(write=False)
            self._cache['obstacles'] = mask
        return mask

    def world_to_local(self, xy: ArrayLike) -> np.ndarray:
        """Return (K, 2) points in the map frame [cells]: (0, 0) is the map's corner."""
        points = _as_points(xy)
        x0, y0, yaw = self.origin
        local = points - (x0, y0)
        if yaw != 0.0:
            # Rotated origin (rare but legal): express the point in the map's axes.
            local = local @ _rotation(yaw)
        return local / self.resolution

    def local_to_world(self, local: ArrayLike) -> np.ndarray:
        """Return (K, 2) world points [m] of (K, 2) map-frame points in cell units."""
        points = _as_points(local) * self.resolution
        x0, y0, yaw = self.origin
        if yaw != 0.0:
            points = points @ _rotation(yaw).T
        return points + (x0, y0)

    def world_to_cell(self, xy: ArrayLike) -> np.ndarray:
        """
        Return the (K, 2) int (column, row) of the cells holding (K, 2) points [m].

        Points outside the map give indices outside [0, W) x [0, H): check with :meth:`inside`.
        """
        return np.floor(self.world_to_local(xy)).astype(np.int64)

    def cell_to_world(self, cells: ArrayLike) -> np.ndarray:
        """Return the (K, 2) world centres [m] of (K, 2) (column, row) cells."""
        return self.local_to_world(np.asarray(cells, dtype=float) + 0.5)

    def inside(self, xy: ArrayLike) -> np.ndarray:
        """Return (K,) bool: which of the (K, 2) points [m] lie on the map (NaN: not)."""
        local = self.world_to_local(xy)
        height, width = self.shape
        # Compared as floats, so NaN and huge values are simply outside.
        return ((local[:, 0] >= 0.0) & (local[:, 0] < width)
                & (local[:, 1] >= 0.0) & (local[:, 1] < height))

    # --- distances and inflation --------------------------------------------------------------

    def distance_cells(self) -> np.ndarray:
        """Return (H, W) distances [cells] from each cell centre to the nearest obstacle centre."""
        distance = self._cache.get('edt')
        if distance is None:
            obstacles = self.obstacles
            if np.any(obstacles):
                distance = ndimage.distance_transform_edt(~obstacles)
            else:
                # No obstacle at all: the EDT of an all-background mask is meaningless.
                distance = np.full(self.shape, np.inf)
            distance.setflags(write=False)
            self._cache['edt'] = distance
        return distance

    def blocked(self, clearance: float) -> np.ndarray:
        """
        Return the (H, W) bool mask of cells a robot of radius ``clearance`` [m] cannot occupy.

        A cell is blocked if it is an obstacle (occupied, and unknown unless unknown_is_free) or
        its centre lies within ``clearance`` of an obstacle cell's centre (the obstacles grown by
        a Euclidean distance transform of the free space). Cached per clearance value.
        """
        clearance = float(clearance)
        if not math.isfinite(clearance) or clearance < 0.0:
            raise ValueError(f'clearance must be finite and >= 0, got {clearance}')
        key = ('blocked', clearance)
        mask = self._cache.get(key)
        if mask is None:
            limit = clearance / self.resolution + DISTANCE_SLACK
            mask = self.distance_cells() <= limit
            mask.setflags(write=False)
            self._cache[key] = mask
        return mask

    def distance_to_obstacle(self, xy: ArrayLike) -> np.ndarray:
        """
        Return (K,) distances [m] from (K, 2) points [m] to the nearest obstacle cell.

        The obstacle cell is the one nearest to the centre of the point's cell (EDT, cached);
        the distance is measured from the point to that cell's square, so it is exact up to
        about one cell. 0 inside an obstacle. Points off the map: 0 when unknown cells are
        obstacles (the outside is unknown), else measured from the nearest map cell's obstacle;
        inf on a map without obstacles; NaN for a NaN point.
        """
        local = self.world_to_local(xy)
        obstacles = self.obstacles
        if not np.any(obstacles):
            return np.full(len(local), np.inf)
        nearest = self._cache.get('edt_indices')
        if nearest is None:
            nearest = ndimage.distance_transform_edt(~obstacles, return_distances=False,
                                                     return_indices=True)
            nearest.setflags(write=False)
            self._cache['edt_indices'] = nearest
        height, width = self.shape
        finite = np.all(np.isfinite(local), axis=1)
        clamped = np.clip(np.where(finite[:, np.newaxis], local, 0.0), 0.0, (width, height))
        col = np.minimum(np.floor(clamped[:, 0]).astype(np.int64), width - 1)
        row = np.minimum(np.floor(clamped[:, 1]).astype(np.int64), height - 1)
        obstacle_row = nearest[0, row, col]
        obstacle_col = nearest[1, row, col]
        # Distance from the point to the obstacle cell's square [cells].
        dx = np.maximum(np.abs(local[:, 0] - (obstacle_col + 0.5)) - 0.5, 0.0)
        dy = np.maximum(np.abs(local[:, 1] - (obstacle_row + 0.5)) - 0.5, 0.0)
        distance = np.hypot(dx, dy) * self.resolution
        if not self.unknown_is_free:
            # Off the map is unknown, and unknown is an obstacle.
            distance[~self.inside(xy)] = 0.0
        distance[~finite] = np.nan
        return distance

    # --- wall outlines ------------------------------------------------------------------------

    def wall_segments(self, tolerance: Optional[float] = None) -> np.ndarray:
        """
        Return (M, 2, 2) wall segments [m] in the global frame: the outlines of occupied cells.

        The outlines are traced (:func:`~orca_nav.core.routes.outline.outline_segments`) with
        marching squares (skimage.measure.find_contours on the occupied mask padded with free
        cells), put back onto the cell edges (marching squares cuts each corner diagonally by
        ``outline.CORNER_CUT``;
        the corner vertex is restored), then simplified with skimage.measure.approximate_polygon:
        every simplified vertex is a point of the exact staircase outline, and the outline stays
        within ``tolerance`` of the segments. When the tolerance exceeds CORNER_CUT, the raw
        contour simplified with ``tolerance - CORNER_CUT`` is used instead if it has fewer
        vertices (a slanted wall's staircase becomes one segment). Either way no segment enters
        free space by more than ``tolerance`` and every occupied/free cell edge is within
        ``tolerance`` of a segment. Map borders count as edges of the occupied cells there.
        Zero-length segments are dropped. Cached per tolerance.

        Inputs:
            tolerance: simplification tolerance [m], default half a cell (>= 0).
        """
        if tolerance is None:
            tolerance = 0.5 * self.resolution
        tolerance = float(tolerance)
        if not math.isfinite(tolerance) or tolerance < 0.0:
            raise ValueError(f'tolerance must be finite and >= 0, got {tolerance}')
        key = ('walls', tolerance)
        segments = self._cache.get(key)
        if segments is not None:
            return segments
        local = outline_segments(self.occupied, tolerance / self.resolution)
        segments = self.local_to_world(local.reshape(-1, 2)).reshape(-1, 2, 2)
        segments.setflags(write=False)
        self._cache[key] = segments
        return segments
