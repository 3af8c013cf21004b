"""
Plane geometry shared by the core, the controller and the simulator (numpy only).

Each word is defined once here: angle wrapping, pose composition (a frame placed in another),
and point-to-segment distance.

Example::

    >>> import numpy as np
    >>> compose_pose([1.0, 2.0, np.pi / 2], [0.5, 0.0, 0.0]).round(6).tolist()
    [1.0, 2.5, 1.570796]
    >>> float(wrap_angle(3 * np.pi).round(6))
    -3.141593
"""

import math
from typing import Tuple

import numpy as np
from numpy.typing import ArrayLike

# Segments shorter than this [m] count as a point in point_segment_distance (no division by 0).
MIN_SEGMENT_LENGTH_SQ = 1e-18


def wrap_angle(angle: 'np.ndarray | float') -> np.ndarray:
    """Wrap angles [rad] to [-pi, pi)."""
    return (np.asarray(angle, dtype=float) + np.pi) % (2.0 * np.pi) - np.pi


def as_pose(pose: ArrayLike, name: str) -> np.ndarray:
    """Validate a finite (3,) pose [x m, y m, yaw rad]; return float64 (3,) or raise ValueError."""
    arr = np.asarray(pose, dtype=np.float64).reshape(-1)
    if arr.shape != (3,) or not np.isfinite(arr).all():
        raise ValueError(f'{name} must be a finite (3,) array [x, y, yaw], got {pose!r}')
    return arr


def compose_pose(frame: ArrayLike, pose: ArrayLike) -> np.ndarray:
    """
    Pose given in ``frame`` expressed in the frame's parent: ``frame (+) pose``.

    frame : (3,) x [m], y [m], yaw [rad] of the frame in its parent (e.g. the robot in the
        global frame); pose : (3,) the pose in that frame (e.g. a sensor's mounting offset).
    Returns (3,) float64 x, y, yaw in the parent frame, yaw wrapped to [-pi, pi).
    """
    fx, fy, fyaw = as_pose(frame, 'frame').tolist()
    px, py, pyaw = as_pose(pose, 'pose').tolist()
    c, s = math.cos(fyaw), math.sin(fyaw)
    yaw = (fyaw + pyaw + math.pi) % (2.0 * math.pi) - math.pi
    return np.array([fx + c * px - s * py, fy + s * px + c * py, yaw])


def compose_poses(frames: np.ndarray, xy: np.ndarray,
                  yaw: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """
    Vectorised ``compose_pose``: N poses, each in its own frame, into the parent frame.

    frames : (N, 3) x, y, yaw of each frame in the parent (e.g. each robot's odometry frame in
    the global frame); xy : (N, 2) [m]; yaw : (N,) [rad]. Returns xy (N, 2), yaw (N,) (not
    wrapped).
    """
    frames = np.asarray(frames, dtype=float)
    c, s = np.cos(frames[:, 2]), np.sin(frames[:, 2])
    gx = frames[:, 0] + c * xy[:, 0] - s * xy[:, 1]
    gy = frames[:, 1] + s * xy[:, 0] + c * xy[:, 1]
    return np.stack([gx, gy], axis=1), yaw + frames[:, 2]


def point_segment_distance(points: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """
    Distance from every point to every segment.

    points : (P, 2) [m]; segments : (M, 2, 2) [m]. Returns (P, M) [m].
    """
    points = np.asarray(points, dtype=float)
    segments = np.asarray(segments, dtype=float)
    a = segments[None, :, 0, :]
    ab = segments[None, :, 1, :] - a
    ap = points[:, None, :] - a
    length_sq = np.maximum((ab * ab).sum(axis=-1), MIN_SEGMENT_LENGTH_SQ)
    t = np.clip((ap * ab).sum(axis=-1) / length_sq, 0.0, 1.0)
    return np.linalg.norm(ap - t[..., None] * ab, axis=-1)


def points_in_polygon(points, polygon):
    """Even-odd test of (P, 2) points against one (K, 2) polygon. Returns (P,) bool."""
    x, y = points[:, 0:1], points[:, 1:2]
    x0, y0 = polygon[None, :, 0], polygon[None, :, 1]
    x1, y1 = np.roll(polygon, -1, axis=0)[None, :, 0], np.roll(polygon, -1, axis=0)[None, :, 1]
    straddles = (y0 > y) != (y1 > y)
    with np.errstate(divide='ignore', invalid='ignore'):
        x_cross = x0 + (y - y0) * (x1 - x0) / (y1 - y0)
    return ((straddles & (x < x_cross)).sum(axis=1) % 2) == 1
