"""
The ORCA algorithm (RVO2) without ROS: numpy, scipy and a numba JIT only.

Public API::

    from orca_nav.core import Simulation, compute_velocities, Obstacles
"""

from .obstacles import Obstacles
from .simulation import Simulation
from .solver import agent_neighbors, compute_velocities, validate_params, warmup

__all__ = ['Obstacles', 'Simulation', 'agent_neighbors', 'compute_velocities',
           'validate_params', 'warmup']
