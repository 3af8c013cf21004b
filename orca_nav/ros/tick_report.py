"""
The node's statistics: what ``~/tick_stats`` (JSON) and ``/diagnostics`` say once a second.

See docs/node.md for the fields. The counts come from the node's parts (its TickMonitor, input
stores, controller and callback counters); the ``recent_*`` fields cover the ticks since the
last report.
"""

import numpy as np


def fresh_share(inputs, now, odom_timeout):
    """Return the share of robots whose newest odometry is within odom_timeout [s] of now."""
    age = now - inputs.odom_time
    fresh = inputs.has_pose & ~inputs.rejected & (age <= odom_timeout)
    return float(fresh.mean()) if len(fresh) else 1.0


class TickReport:
    """
    The statistics of one OrcaNavNode: ``counts`` at any time, ``take`` once per report.

    ``note_scans`` and ``note_fresh`` are called by every tick; ``take`` returns the counts
    with the figures of the ticks since the last ``take`` and starts a new window.
    """

    def __init__(self, node):
        """Report on ``node`` (an OrcaNavNode: monitor, stores, controller, counters)."""
        self._node = node
        self._fresh_min = 1.0         # the smallest fresh_share at a tick since the last take
        self._scans_limited = False   # a tick left scans waiting since the last take

    def note_scans(self, limited):
        """Note a tick that left scans waiting for later ticks (the node could not read all)."""
        self._scans_limited |= bool(limited)

    def note_fresh(self, inputs, now):
        """Note the share of robots on fresh odometry at a tick at ``now`` [s]."""
        timeout = self._node.settings.params.odom_timeout
        self._fresh_min = min(self._fresh_min, fresh_share(inputs, now, timeout))

    def counts(self):
        """Tick statistics: counts, missed periods and tick duration percentiles [ms]."""
        node = self._node
        counters, odometry = node.controller.counters(), node.odometry
        stats = node.monitor.stats()
        rejected = odometry.rejected_by_robot + counters.odom_rejected
        # False while the numba kernels compile: every command is zero (ros/startup.py).
        stats.update({'ready': node.kernels.ready,
                      'odom_received': odometry.received,
                      'odom_dropped': odometry.dropped,
                      'odom_rejected': int(rejected.sum()),
                      # per robot, only robots with refused odometry (keeps the JSON short)
                      'odom_rejected_by_robot': {node.settings.names[i]: int(rejected[i])
                                                 for i in np.flatnonzero(rejected)},
                      'solver_failures': counters.solver_failures,
                      'goals_received': node.goals_received,
                      'goals_rejected': node.goals_rejected,
                      'goals_cancelled': node.goals_cancelled,
                      'scans_received': node.scans.received,
                      'scans_rejected': counters.scans_rejected,
                      'maps_received': counters.maps_received,
                      'maps_rejected': node.maps_rejected,
                      'paths_rejected': node.paths_rejected,
                      'poses_received': node.poses.received,
                      'poses_rejected': (int(node.poses.rejected_by_robot.sum())
                                         + counters.poses_refused_late)})
        return stats

    def take(self):
        """Return ``counts`` with the figures of the recent ticks, and start a new window."""
        node = self._node
        stats = self.counts()
        stats['recent_tick_ms'] = node.monitor.take_recent_ms()
        stats['recent_odom_delay_ms'] = round(node.odometry.reset_delay() * 1e-6, 3)
        # The smallest share of robots on fresh odometry at a tick since the last stats.
        stats['recent_fresh_share'] = round(self._fresh_min, 4)
        overloaded, missed, longest = node.monitor.take_overload()
        # Scans left waiting for later ticks: the node could not read them all in time.
        stats.update(overloaded=overloaded or self._scans_limited,
                     recent_missed_periods=missed,
                     recent_tick_ms_max=round(longest * 1e3, 3),
                     scans_deferred=self._scans_limited, scan_quota=node.scan_quota.quota)
        self._fresh_min, self._scans_limited = 1.0, False
        return stats
