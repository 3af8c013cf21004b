"""Tick statistics of the node: durations, missed periods, errors, and quiet garbage collection."""

import gc

import numpy as np

STATS_WINDOW = 1000      # ticks kept for the tick-duration percentiles
STATS_PERIOD_NS = 1_000_000_000  # statistics once per second of the node's clock
# A tick up to this fraction of a period early still counts for its own period (timer jitter).
MISSED_PERIOD_SLACK = 0.1
# Full garbage collections run right after a tick this often [s]: Python's own were measured at
# 50-70 ms with 100 robots, at random moments, enough to push a tick past its period.
FULL_GC_PERIOD = 10.0
# Automatic full collections are pushed this far away (gen-1 collections between two).
GC_THRESHOLD_2 = 1_000_000


# A loaded tick should end within this share of its period (the rest: publishing, jitter).
SCAN_TARGET_SHARE = 0.8
# Ticks this far below the target take more scans again (between the two: hold).
SCAN_RAISE_SHARE = 0.6


class ScanQuota:
    """
    How many robots' new scans a tick reads: all while ticks fit their period, fewer when not.

    Under a load the node cannot keep up with (too many robots' scans for the processor), a
    tick that reads every scan overruns its period and every robot's command comes late. The
    quota then shrinks in proportion (``update``), the scans left wait in the middleware (the
    newest of each robot) and the next ticks read them, round robin; it grows back by a fifth
    per tick once ticks are short again. It never falls below the share that reads every
    robot's scan at least every ``obstacle_timeout / 2``, so that no robot's scan obstacles
    expire between two reads: safety comes before the rate. Public: ``quota``, ``floor``.
    """

    def __init__(self, n, period, obstacle_timeout):
        """Quota for N robots' scans, ticks of ``period`` [s]."""
        self.n, self.period = n, period
        self.quota = n
        self.set_obstacle_timeout(obstacle_timeout)

    def set_obstacle_timeout(self, obstacle_timeout):
        """Set the floor for scan obstacles kept ``obstacle_timeout`` [s] (a parameter change)."""
        every = max(1, int(obstacle_timeout / (2.0 * self.period)))  # ticks between two reads
        self.floor = min(self.n, -(-self.n // every))
        self.quota = max(self.quota, self.floor)

    def update(self, duration, taken):
        """Adjust the quota after a tick of ``duration`` [s] that read ``taken`` scans."""
        target = SCAN_TARGET_SHARE * self.period
        if duration > target and taken:
            self.quota = max(self.floor, min(self.quota, int(taken * target / duration)))
        elif duration < SCAN_RAISE_SHARE * self.period and self.quota < self.n:
            self.quota = min(self.n, int(self.quota * 1.2) + 1)


class TickMonitor:
    """
    Counts ticks, missed timer periods and tick errors; keeps recent durations.

    Public read-only counters: ``ticks``, ``missed``, ``errors``.
    """

    def __init__(self, period):
        """Monitor a timer of ``period`` seconds."""
        self.period = period
        self.ticks = 0
        self.missed = 0
        self.errors = 0
        self._durations = np.zeros(STATS_WINDOW)
        self._recent_ms = []
        self._first_ns = None
        self._last_ns = None
        self._stats_ns = None    # clock of the last tick that asked for statistics
        self._since_first = 0
        self._full_gc_every = 0  # ticks between full collections, 0 = Python decides
        self._window_missed = 0  # missed periods at the start of the current stats window
        self._window_longest = 0.0  # [s] the longest tick of the current stats window

    def start(self, now_ns):
        """
        Note a tick starting at ``now_ns`` and count the timer periods in which none ran.

        Period k of the timer starts at first + k * period; by now, floor((now - first) /
        period) + 1 ticks should have run. A tick that is late but runs within its period is
        not a missed one; a clock jumping back (simulation restarted) starts a new count.
        """
        if self._first_ns is None or now_ns < self._last_ns:
            self._first_ns = now_ns
            self._since_first = 0
        self._last_ns = now_ns
        expected = int((now_ns - self._first_ns) * 1e-9 / self.period
                       + MISSED_PERIOD_SLACK) + 1
        self._since_first += 1
        if expected > self._since_first:
            self.missed += expected - self._since_first
            self._since_first = expected

    def end(self, duration):
        """
        Record a tick's duration [s]; True once per second of the clock (time for statistics).

        Runs a full garbage collection when it is due (see take_over_gc).
        """
        self._durations[self.ticks % STATS_WINDOW] = duration
        self._recent_ms.append(round(duration * 1e3, 3))
        self._window_longest = max(self._window_longest, duration)
        self.ticks += 1
        if self._full_gc_every and self.ticks % self._full_gc_every == 0:
            gc.collect()  # in the idle rest of this period, not in the middle of a tick
        # Once per second of the clock the ticks run on (an overloaded node ticks less often).
        if self._stats_ns is None or self._last_ns < self._stats_ns:
            self._stats_ns = self._last_ns
        if self._last_ns - self._stats_ns >= STATS_PERIOD_NS:
            self._stats_ns = self._last_ns
            return True
        return False

    def take_overload(self):
        """
        Whether the node was overloaded since the last call, and start a new window.

        Overloaded: the timer missed a period, or a tick took longer than one (the next one
        then starts late). Returns (overloaded, missed periods, longest tick [s]).
        """
        missed = self.missed - self._window_missed
        longest = self._window_longest
        self._window_missed, self._window_longest = self.missed, 0.0
        return missed > 0 or longest > self.period, missed, longest

    def take_recent_ms(self):
        """Durations [ms] of the ticks since the last call."""
        recent, self._recent_ms = self._recent_ms, []
        return recent

    def take_over_gc(self):
        """
        Run the full garbage collections at quiet moments (for the node's own process).

        Freezes the start-up objects (never collected again), stops automatic full
        collections and instead runs one every FULL_GC_PERIOD seconds right after a tick.
        """
        gc.freeze()
        gen0, gen1, _ = gc.get_threshold()
        gc.set_threshold(gen0, gen1, GC_THRESHOLD_2)
        self._full_gc_every = max(1, int(round(FULL_GC_PERIOD / self.period)))

    def stats(self):
        """Return counts and tick duration percentiles [ms] over the last STATS_WINDOW ticks."""
        k = min(self.ticks, STATS_WINDOW)
        d = self._durations[:k] * 1e3
        return {
            'ticks': self.ticks,
            'missed_periods': self.missed,
            'tick_errors': self.errors,
            'tick_ms_p50': float(np.percentile(d, 50)) if k else None,
            'tick_ms_p99': float(np.percentile(d, 99)) if k else None,
            'tick_ms_max': float(d.max()) if k else None,
        }
