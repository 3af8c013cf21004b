"""
The ORCA algorithm (RVO2) without ROS: numpy, scipy and a numba JIT only.

Three subpackages (docs/core.md) and the helpers they share:

- ``orca_nav.core.orca``: one ORCA step for a fleet (the solver, its half-planes and linear
  programs, the escape, obstacles, the k-d tree, drive mappings);
- ``orca_nav.core.perception``: laser scans to segments and points, detection and tracking of
  moving objects, ray casting;
- ``orca_nav.core.routes``: grid maps, route planning and route following;
- ``geometry`` (angles, poses, point-segment distances) and ``_jit`` (numba's ``njit``).

Public API::

    from orca_nav.core import compute_velocities, Obstacles
    from orca_nav.core import scan_to_segments, cast_rays
"""

from . import geometry as _geometry
from .geometry import compose_pose, point_segment_distance, wrap_angle
from .orca import solver as _solver
from .orca.obstacles import Obstacles
from .orca.solver import agent_neighbors, compute_velocities, validate_params
from .perception import scan as _scan
from .perception import tracking as _tracking
from .perception.raycast import cast_rays, polygon_edges, polyline_edges
from .perception.scan import scan_to_points, scan_to_segments


def warmup(reverse: bool = False) -> None:
    """
    Compile every JIT kernel now (solver, scans, tracking, geometry): seconds once, then cached.

    reverse : in the opposite order (``solver.warmup``: two processes meet halfway).
    """
    steps = [lambda: _solver.warmup(reverse), _scan.warmup, _tracking.warmup, _geometry.warmup]
    for step in reversed(steps) if reverse else steps:
        step()


__all__ = ['Obstacles', 'agent_neighbors', 'cast_rays', 'compose_pose',
           'compute_velocities', 'point_segment_distance', 'polygon_edges', 'polyline_edges',
           'scan_to_points', 'scan_to_segments', 'validate_params', 'warmup', 'wrap_angle']
