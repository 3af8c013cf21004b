"""
Progress of robots toward their goals: stuck robots, and jams broken by giving way.

``Progress`` keeps, per commanded robot (one row each, arrays), when it last gained ground:

- toward its goal (along its route, with one): less than ``progress_distance`` in
  ``progress_timeout`` makes it ``stuck`` (``stalled``); the Navigator then plans its route
  once more;
- while near others (``give_way``): less than JAM_PROGRESS in JAM_TIME makes it jammed. A
  jammed robot with a jammed robot of a lower row within JAM_DISTANCE gives way for
  YIELD_TIME: its target is turned round, so that it backs away from its carrot, the way it
  came, toward a point YIELD_BACK behind it, and the other can pass. A reciprocal deadlock in
  a passage too narrow for two, or at a corner, then resolves; the lowest row never gives
  way. A jammed robot with no other robot near is held by a wall: the Navigator plans it
  again from where it stands. A robot that does not move when commanded (``commanded``:
  asked to go JAM_PROGRESS or more, it moved less than UNMOVED: an e-stop, wheels off the
  ground, an unpowered base) is not jammed by the others: it neither gives way nor is given
  way to (backing away would not move it either) until it moves again; it is commanded
  toward its carrot at UNRESPONSIVE_SPEED at most (``gentle``: when it moves again, it starts
  gently) and ``stalled`` reports it stuck.
"""

import math

import numpy as np

# Jams: less progress than JAM_PROGRESS [m] in JAM_TIME [s] with a jammed robot within
# JAM_DISTANCE [m]; the robot of the higher row then stands aside for YIELD_TIME [s], backing
# toward a point YIELD_BACK [m] behind it.
JAM_PROGRESS = 0.2
JAM_TIME = 3.0
JAM_DISTANCE = 2.0
YIELD_TIME = 3.0
YIELD_BACK = 1.0
# [m] a robot asked to travel JAM_PROGRESS or more (its commanded velocities summed up since
# it was last judged: a jitter adds up to nothing) that moved less than this meanwhile does
# not respond to its commands.
UNMOVED = 0.05
# [m/s] the fastest command of a robot that does not move when commanded.
UNRESPONSIVE_SPEED = 0.1


class Check:
    """A progress check over C robots: the time and remaining distance of the last progress."""

    def __init__(self, c):
        """Start with no robot counted (time and distance infinite)."""
        self.time = np.full(c, math.inf)
        self.left = np.full(c, math.inf)

    def restart(self, mask, now, left):
        """Start counting again for the robots in ``mask`` from ``left`` [m] at ``now``."""
        self.time[mask] = now
        self.left[mask] = left[mask] if np.ndim(left) else left

    def progressed(self, now, left, distance):
        """Return where ``left`` fell by ``distance`` since the check (or the clock went back)."""
        return (left <= self.left - distance) | (now < self.time)


class Progress:
    """Stuck and jam checks of C commanded robots (see the module's docstring)."""

    def __init__(self, c):
        """Start with every robot moving freely."""
        self.stuck = np.zeros(c, bool)
        self.goal = Check(c)                 # progress toward the goal (stuck)
        self.jam = Check(c)                  # progress while near others (jams)
        self.yield_until = np.full(c, -math.inf)  # [s] standing aside until then
        self.asked = np.zeros((c, 2))        # [m] commanded travel since last judged
        self.asked_at = np.zeros((c, 2))     # [m] where each was then
        self.unresponsive = np.zeros(c, bool)  # does not move when commanded (module doc)
        self.held_at = np.zeros((c, 2))      # [m] where an unresponsive robot stands
        self._velocity, self._velocity_time = np.zeros((c, 2)), None  # the last commands

    def forget(self, i):
        """Robot i has a new goal: nothing counted yet."""
        self.stuck[i] = False
        self.goal.restart(i, math.inf, math.inf)

    def pause(self, mask, now, remaining):
        """Count nothing for the robots in ``mask`` (C,) (waiting their turn) at ``now``."""
        self.goal.restart(mask, now, remaining)
        self.jam.restart(mask, now, remaining)

    def stalled(self, now, remaining, moving, examined, distance, timeout):
        """
        Progress check of the ``examined`` robots (C,) bool.

        remaining (C,) [m] to the goal; moving (C,) bool: robots with fresh odometry that have
        not arrived; distance [m], timeout [s]: ``progress_distance``, ``progress_timeout``.
        Returns (stuck, late): where they are stuck, and where they became stuck just now.
        """
        check = self.goal
        idle = examined & ~moving
        check.restart(idle, now, math.inf)
        self.stuck[idle] = False
        going = examined & moving
        progress = going & check.progressed(now, remaining, distance)
        check.restart(progress, now, remaining)
        self.stuck[progress] = False
        late = going & ~progress & (now - check.time > timeout)
        self.stuck[late] = True
        check.time[late] = now
        return examined & self.stuck, late

    def commanded(self, now, velocity):
        """Count the travel asked: ``velocity`` (C, 2) [m/s, global] was commanded at ``now``."""
        if self._velocity_time is not None and now > self._velocity_time:
            self.asked += self._velocity * (now - self._velocity_time)
        self._velocity, self._velocity_time = np.array(velocity, float), now

    def _unresponsive(self, pos, examined):
        """
        Update and return which robots do not move when commanded (C,) bool.

        Each ``examined`` robot is judged once it was asked to travel JAM_PROGRESS, then
        counted again from where it is; the others are counted from where they are.
        """
        judged = examined & (np.hypot(*self.asked.T) >= JAM_PROGRESS)
        found = judged & (np.hypot(*(pos - self.asked_at).T) < UNMOVED) & ~self.unresponsive
        self.held_at[found] = pos[found]
        self.unresponsive |= found
        self.unresponsive &= np.hypot(*(pos - self.held_at).T) < UNMOVED  # it moves again
        again = judged | ~examined
        self.asked[again] = 0.0
        self.asked_at[again] = pos[again]
        return self.unresponsive

    def gentle(self, velocities):
        """Slow unresponsive robots' velocities (C, 2) [m/s] to UNRESPONSIVE_SPEED, in place."""
        held = self.unresponsive
        if held.any():
            speed = np.hypot(*velocities[held].T)
            velocities[held] *= np.minimum(1.0, UNRESPONSIVE_SPEED
                                           / np.maximum(speed, 1e-9))[:, None]
        return velocities

    def give_way(self, now, pos, target, remaining, moving, replannable):
        """
        Break jams: of robots that block each other, all but the first stand aside a while.

        pos, target (C, 2) [m] (``target`` is turned round in place for robots giving way);
        remaining (C,) [m]; moving (C,) bool: the robots examined; replannable (C,) bool:
        robots on a planned route. Returns (C,) bool: robots held by a wall, to plan again.
        """
        unresponsive = self._unresponsive(pos, moving)
        self.yield_until[unresponsive] = -math.inf  # it could not back away either
        yielding = now < self.yield_until
        reset = ~moving | yielding | self.jam.progressed(now, remaining, JAM_PROGRESS)
        self.jam.restart(reset, now, remaining)
        rows = np.flatnonzero(~reset & ~unresponsive & (now - self.jam.time >= JAM_TIME))
        held = np.zeros(len(moving), bool)
        if len(rows):
            near = np.hypot(*(pos[rows, None] - pos[None, rows]).transpose(2, 0, 1))
            gives = np.tril(near <= JAM_DISTANCE, -1).any(axis=1)
            self.yield_until[rows[gives]] = now + YIELD_TIME
            # Held by a wall, not by a robot (e.g. at a door jamb, off its route): a new route
            # from where it stands leads round the corner.
            alone = np.hypot(*(pos[None] - pos[rows, None]).transpose(2, 0, 1))
            alone = (alone <= JAM_DISTANCE).sum(axis=1) == 1
            held[rows[~gives & alone]] = True
            held &= replannable
            self.jam.restart(rows[gives | (alone & replannable[rows])], now, remaining)
        back = moving & (now < self.yield_until)
        if back.any():
            # Back away from where it was heading: the way it came, clear of the others.
            away = pos[back] - target[back]
            norm = np.hypot(*away.T)
            scale = np.divide(YIELD_BACK, norm, out=np.zeros_like(norm), where=norm > 1e-9)
            target[back] = pos[back] + away * scale[:, None]
        return held


__all__ = ['Check', 'Progress']
