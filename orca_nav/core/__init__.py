"""
The ORCA algorithm (RVO2) without ROS: numpy, scipy and a numba JIT only.

Public API::

    from orca_nav.core import compute_velocities, Obstacles
    from orca_nav.core import scan_to_segments, cast_rays
"""

from . import scan as _scan
from . import solver as _solver
from . import tracking as _tracking
from .geometry import compose_pose, point_segment_distance, wrap_angle
from .obstacles import Obstacles
from .raycast import cast_rays, polygon_edges, polyline_edges
from .scan import scan_to_points, scan_to_segments
from .solver import agent_neighbors, compute_velocities, validate_params


def warmup() -> None:
    """Compile every JIT kernel now (solver, scans, tracking): seconds once, then cached."""
    _solver.warmup()
    _scan.warmup()
    _tracking.warmup()


__all__ = ['Obstacles', 'agent_neighbors', 'cast_rays', 'compose_pose',
           'compute_velocities', 'point_segment_distance', 'polygon_edges', 'polyline_edges',
           'scan_to_points', 'scan_to_segments', 'validate_params', 'warmup', 'wrap_angle']
