"""
Who gives way: avoidance weights, groups, priority overrides and velocity locks.

The core (``compute_velocities``) splits each avoidance by per-agent weights, immovable flags
and group masks. ``GiveWay`` turns a fleet's settings and what happens at run time into those
arrays, tick by tick:

- a robot's ``avoidance_weight`` (1: it keeps its course, the others take all the avoiding);
- a priority override (``set_priority``, Unreal's ``OverrideWeightTime``): immovable for a
  while, e.g. a robot carrying a load through a crowd;
- observed robots (which the node does not command) are immovable unless the fleet says they
  run ORCA too (``observed_reciprocate``, or per robot ``reciprocate``): a robot that does not
  avoid back must not be trusted with half of the avoiding;
- velocity locks (Unreal's ``LockTimeAfterAvoid`` / ``LockTimeAfterClean``): once a robot had
  to divert (or stops having to), its preferred velocity is its new velocity for the lock
  time, so ORCA keeps it while it stays safe; a lock ends as soon as ORCA must change it (a
  new conflict) or the robot stops steering. Fewer small changes of course: less jitter.
"""

import math

import numpy as np

# [m/s] a velocity this close to the preferred one is "clean" (no diversion), and a locked
# velocity this close to ORCA's answer is "kept".
LOCK_TOLERANCE = 0.01


class GiveWay:
    """Per-robot priority overrides and velocity locks of a fleet (C commanded robots)."""

    def __init__(self, n_controlled: int):
        """Start with no override and no lock."""
        c = n_controlled
        self.priority_until = np.full(c, -math.inf)  # [s] immovable until then
        self.lock_until = np.full(c, -math.inf)      # [s] locked velocity held until then
        self.locked = np.zeros((c, 2))               # [m/s] the locked ORCA velocity
        self.diverted = np.zeros(c, bool)            # last tick's velocity was not preferred
        # This tick's robots entering a door (set by the controller): immovable toward the
        # other robots, which avoid them fully, as under an override (no one pushes a cart
        # into a jamb from behind).
        self.at_door = np.zeros(c, bool)

    def set_priority(self, i: int, seconds: float, now: float) -> None:
        """Make commanded robot i immovable for ``seconds`` from ``now`` (0 ends it)."""
        if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds >= 0):
            raise ValueError(f'priority duration must be a finite number of seconds >= 0, '
                             f'got {seconds!r}')
        self.priority_until[i] = now + seconds

    def overridden(self, now: float) -> np.ndarray:
        """Return (C,) bool: robots under a priority override at ``now``."""
        return now < self.priority_until

    def keeps_course(self, config, now: float) -> np.ndarray:
        """Return (C,) bool: commanded robots the others avoid fully (weight 1, override)."""
        c = config.n_controlled
        heavy = (np.zeros(c, bool) if config.avoidance_weight is None
                 else np.asarray(config.avoidance_weight)[:c] >= 1.0)
        return heavy | self.overridden(now)

    @staticmethod
    def reciprocates(config) -> np.ndarray:
        """Return (N,) bool: robots that avoid back (ours; observed ones if they run ORCA)."""
        out = np.ones(config.n, bool)
        c = config.n_controlled
        out[c:] = (config.observed_reciprocate if config.reciprocate is None
                   else np.asarray(config.reciprocate, bool)[c:])
        return out

    def core_arguments(self, config, now: float, rows: np.ndarray) -> dict:
        """Keyword arguments of ``compute_velocities`` for these rows of the fleet."""
        c = config.n_controlled
        immovable = np.zeros(config.n, bool)
        immovable[:c] = self.overridden(now) | self.at_door
        immovable[c:] = ~self.reciprocates(config)[c:]
        args = {'immovable': immovable[rows]}
        if config.avoidance_weight is not None:
            args['weights'] = np.asarray(config.avoidance_weight, float)[rows]
        if config.ignore is not None:
            args['groups'] = np.asarray(config.avoidance_group, np.int64)[rows]
            args['ignore'] = np.asarray(config.ignore, bool)[rows]
        return args

    def hold(self, now: float, pref: np.ndarray, steering: np.ndarray):
        """
        Preferred velocities (C, 2) with the locked velocities where a lock holds.

        Returns (preferences, locked (C,) bool). Robots that stopped steering lose their lock.
        """
        self.lock_until[~steering] = -math.inf
        locked = now < self.lock_until
        out = pref.copy()
        out[locked] = self.locked[locked]
        return out, locked

    def update(self, config, now: float, pref, velocity, active, locked) -> None:
        """
        After the solve: end broken locks, start new ones.

        pref : (C, 2) the robots' own preferred velocities; velocity : (C, 2) ORCA's answer;
        active : (C,) robots commanded this tick; locked : (C,) as ``hold`` returned it.
        """
        broken = locked & (np.hypot(*(velocity - self.locked).T) > LOCK_TOLERANCE)
        self.lock_until[broken | ~active] = -math.inf
        held = locked & ~broken & active
        diverted = np.hypot(*(velocity - pref).T) > LOCK_TOLERANCE
        free = active & ~held
        starts = []
        if config.lock_time_after_avoid > 0.0:
            starts.append((free & diverted, config.lock_time_after_avoid))
        if config.lock_time_after_clean > 0.0:
            starts.append((free & ~diverted & self.diverted, config.lock_time_after_clean))
        for start, seconds in starts:
            self.lock_until[start] = now + seconds
            self.locked[start] = velocity[start]
        self.diverted = np.where(active & ~held, diverted, self.diverted)


__all__ = ['GiveWay', 'LOCK_TOLERANCE']
