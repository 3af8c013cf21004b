"""What a tick tells about each commanded robot: its state, and a warning while it is stuck."""

import numpy as np
from orca_nav.core.geometry import point_segment_distance

from .states import RobotState

# [s] between two warnings about one robot that stays stuck (where it is, what holds it).
STUCK_REPORT_PERIOD = 10.0
# At most this many stuck robots are reported (with what is near them) in one tick.
STUCK_REPORTS_PER_TICK = 5


def robot_state(has_pose, valid, fresh, has_goal, reached, navigation) -> RobotState:
    """One robot's state, from its odometry's flags, goal and the navigator's word."""
    if not has_pose:
        return RobotState.NO_ODOMETRY
    if not valid:
        return RobotState.REJECTED_ODOMETRY
    if not fresh:
        return RobotState.STALE_ODOMETRY
    if not has_goal:
        return RobotState.IDLE
    if reached:
        return RobotState.REACHED
    return navigation or RobotState.ACTIVE


class StuckReports:
    """Warns when a robot becomes stuck, and every STUCK_REPORT_PERIOD while it stays so."""

    def __init__(self, n_controlled: int):
        """No robot reported yet."""
        self.last = np.full(n_controlled, np.nan)  # [s] last stuck warning (NaN: not stuck)

    def report(self, now, states, pos, target, pref, vel, grid, scan_memory, warnings):
        """
        Append the due warnings: where each stuck robot is, what it steers to, what holds it.

        pos, pref, vel : (N, 2) positions, preferred and ORCA velocities; target : (C, 2);
        grid : the GridMap of the walls or None; scan_memory : the remembered segments.
        """
        stuck = np.array([state == RobotState.STUCK for state in states], bool)
        self.last[~stuck] = np.nan
        due = stuck & ~(now - self.last < STUCK_REPORT_PERIOD)  # NaN: not reported
        # A few per tick: when a whole fleet is stuck at once (a blocked hall), the reports
        # are spread over the next ticks instead of stalling one.
        due = np.flatnonzero(due)[:STUCK_REPORTS_PER_TICK]
        self.last[due] = now
        for i in due:
            near = []
            if grid is not None and grid.inside(pos[i:i + 1])[0]:
                near.append(f'map wall {grid.distance_to_obstacle(pos[i:i + 1])[0]:.2f} m')
            segments = scan_memory.remembered(i)
            if len(segments):
                d = point_segment_distance(pos[i:i + 1], segments)[0]
                (ax, ay), (bx, by) = segments[np.argmin(d)]
                near.append(f'scan segment {d.min():.2f} m ({ax:.2f}, {ay:.2f})-({bx:.2f}, '
                            f'{by:.2f}) ({int((d < 1.0).sum())} within 1 m)')
            others = np.delete(np.hypot(*(pos - pos[i]).T), i)
            if len(others):
                near.append(f'robot {others.min():.2f} m')
            warnings.append((int(i), f'progress: stuck at ({pos[i, 0]:.2f}, {pos[i, 1]:.2f}), '
                                     f'steering to ({target[i, 0]:.2f}, {target[i, 1]:.2f}) at '
                                     f'{np.hypot(*pref[i]):.2f} m/s, ORCA allows '
                                     f'{np.hypot(*vel[i]):.2f} m/s; nearest '
                                     f'{", ".join(near) or "obstacle: none"}'))


__all__ = ['robot_state', 'STUCK_REPORT_PERIOD', 'STUCK_REPORTS_PER_TICK', 'StuckReports']
