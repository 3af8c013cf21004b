"""
The fleet controller: one tick of the whole fleet from arrays, no ROS.

``FleetController.step(inputs, now) -> StepResult`` is what the node calls every period.
"""

from .config import FleetConfig
from .controller import FleetController, FleetInputs, StepResult
from .scan_memory import ScanInput, ScanMemory
from .states import RobotState

__all__ = ['FleetConfig', 'FleetController', 'FleetInputs', 'RobotState', 'ScanInput',
           'ScanMemory', 'StepResult']
