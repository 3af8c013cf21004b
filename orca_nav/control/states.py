"""The states a robot reports on its status topic: one Enum, one place."""

from enum import Enum


class RobotState(str, Enum):
    """
    State of one robot, as published in its status JSON (``state``).

    A ``str`` Enum: ``RobotState.ACTIVE == 'active'`` and it serialises as its value.
    """

    NO_ODOMETRY = 'no_odometry'        # no valid odometry received yet
    STALE_ODOMETRY = 'stale_odometry'  # newest valid odometry older than odom_timeout: stopped
    # newest odometry refused (NaN, zero quaternion, implausible pose or twist): stopped
    REJECTED_ODOMETRY = 'rejected_odometry'
    IDLE = 'idle'                      # no goal
    PLANNING = 'planning'              # a route to the goal is being planned on the map
    ACTIVE = 'active'                  # driving to the goal
    REACHED = 'reached'                # within goal_tolerance of the goal: stopped
    STUCK = 'stuck'                    # no progress along the route in progress_timeout
    WAITING = 'waiting'                # for its turn at a single-file passage (see reason)
    UNREACHABLE = 'unreachable'        # no route to the goal (see the status' reason)
    OBSERVED = 'observed'              # observed robot (neighbour only, never commanded)

    def __str__(self):
        """Return the value, so that f-strings and logs show 'active', not the member name."""
        return self.value
