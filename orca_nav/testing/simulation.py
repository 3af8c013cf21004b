"""
A small ORCA simulator with RVO2's interface, on top of ``compute_velocities``: for RVO2's scenes.

Agents are points with a radius that move by their new velocity (RVO2's ``doStep``), the way
RVO2 runs its examples; the tests and the benchmarks compare it with RVO2 (pyrvo). Robots with
drives, walkers and scans are orca_nav.sim.world.World's.

Example (RVO2's Circle scene, shortened)::

    sim = Simulation(time_step=0.25, neighbor_dist=15.0, max_neighbors=10, time_horizon=10.0,
                     time_horizon_obst=10.0, radius=1.5, max_speed=2.0)
    for angle in np.linspace(0, 2 * np.pi, 8, endpoint=False):
        sim.add_agent((200 * np.cos(angle), 200 * np.sin(angle)))
    sim.set_preferred_velocities(goals - sim.positions)
    sim.step()
"""

import math
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from orca_nav.core.orca.obstacles import Obstacles
from orca_nav.core.orca.solver import compute_velocities, validate_params


class Simulation:
    """
    Agents, obstacles and a clock; ``step`` moves every agent by its new ORCA velocity.

    radius, max_speed are the defaults for agents added later [m], [m/s].
    collision_guard: keep agents out of contact even where ORCA's half-planes conflict (see
    ``compute_velocities``). RVO2 has no such guard and overlaps in its own Circle scene
    (0.50 m measured with pyrvo); pass False for RVO2's exact answers.

    Who gives way: the attributes ``weights``, ``immovable``, ``groups`` and ``ignore`` are
    passed to ``compute_velocities`` as they are; None (the default) is RVO2's half-half.
    Set them after adding the agents, one row per agent, e.g.
    ``sim.immovable = np.arange(sim.num_agents) == 0``.
    """

    def __init__(self, time_step: float, neighbor_dist: float, max_neighbors: int,
                 time_horizon: float, time_horizon_obst: float, radius: float,
                 max_speed: float, collision_guard: bool = True) -> None:
        (self.time_step, self.neighbor_dist, self.max_neighbors, self.time_horizon,
         self.time_horizon_obst) = validate_params(time_step, neighbor_dist, max_neighbors,
                                                   time_horizon, time_horizon_obst)
        self.default_radius = self._check_radius(radius)
        self.default_max_speed = self._check_max_speed(max_speed)
        self.positions = np.zeros((0, 2))
        self.velocities = np.zeros((0, 2))
        self.pref_velocities = np.zeros((0, 2))
        self.radius = np.zeros(0)
        self.max_speed = np.zeros(0)
        self.collision_guard = bool(collision_guard)
        self.weights: Optional[ArrayLike] = None
        self.immovable: Optional[ArrayLike] = None
        self.groups: Optional[ArrayLike] = None
        self.ignore: Optional[ArrayLike] = None
        self.global_time = 0.0
        self._polygons = []
        self._obstacles = Obstacles.empty()
        self._obstacles_dirty = False

    @staticmethod
    def _check_radius(radius: float) -> float:
        if not (math.isfinite(radius) and radius > 0):
            raise ValueError(f'radius must be positive, got {radius!r}')
        return float(radius)

    @staticmethod
    def _check_max_speed(max_speed: float) -> float:
        if not (math.isfinite(max_speed) and max_speed >= 0):
            raise ValueError(f'max_speed must be non-negative, got {max_speed!r}')
        return float(max_speed)

    @property
    def num_agents(self) -> int:
        """Return the number of agents."""
        return self.positions.shape[0]

    @property
    def obstacles(self) -> Obstacles:
        """Return the processed obstacle set (built on first use after ``add_obstacle``)."""
        if self._obstacles_dirty:
            self._obstacles = Obstacles.build(self._polygons)
            self._obstacles_dirty = False
        return self._obstacles

    def add_agent(self, position: ArrayLike, radius: Optional[float] = None,
                  max_speed: Optional[float] = None, velocity: ArrayLike = (0.0, 0.0)) -> int:
        """Add an agent at ``position`` (x, y); return its index."""
        position = np.asarray(position, dtype=float).reshape(-1)
        if position.shape != (2,) or not np.all(np.isfinite(position)):
            raise ValueError(f'position must be a finite (x, y), got {position.tolist()!r}')
        velocity = np.asarray(velocity, dtype=float).reshape(-1)
        if velocity.shape != (2,) or not np.all(np.isfinite(velocity)):
            raise ValueError(f'velocity must be a finite (vx, vy), got {velocity.tolist()!r}')
        radius = self.default_radius if radius is None else self._check_radius(radius)
        max_speed = (self.default_max_speed if max_speed is None
                     else self._check_max_speed(max_speed))
        self.positions = np.vstack([self.positions, position])
        self.velocities = np.vstack([self.velocities, velocity])
        self.pref_velocities = np.vstack([self.pref_velocities, np.zeros(2)])
        self.radius = np.append(self.radius, radius)
        self.max_speed = np.append(self.max_speed, max_speed)
        return self.num_agents - 1

    def add_obstacle(self, vertices: ArrayLike) -> int:
        """
        Add a polygon (counter-clockwise vertices); two vertices make one segment.

        Returns the index of the obstacle's first vertex, as RVO2 does.
        """
        first = sum(len(p) for p in self._polygons)
        # Validates, raising ValueError with the reason.
        Obstacles.build([vertices], first_index=len(self._polygons))
        self._polygons.append(np.asarray(vertices, dtype=float))
        self._obstacles_dirty = True
        return first

    def set_preferred_velocities(self, prefs: ArrayLike) -> None:
        """Set every agent's preferred velocity from an (N, 2) array [m/s]."""
        prefs = np.asarray(prefs, dtype=float)
        if prefs.shape != self.positions.shape:
            raise ValueError(f'preferred velocities must have shape {self.positions.shape}, '
                             f'got {prefs.shape}')
        if not np.all(np.isfinite(prefs)):
            raise ValueError('preferred velocities contain NaN or infinite values')
        self.pref_velocities = prefs.copy()

    def compute_new_velocities(self) -> np.ndarray:
        """ORCA velocities for the current state, without moving anything."""
        return compute_velocities(
            self.positions, self.velocities, self.pref_velocities, self.radius,
            self.max_speed, time_step=self.time_step, neighbor_dist=self.neighbor_dist,
            max_neighbors=self.max_neighbors, time_horizon=self.time_horizon,
            time_horizon_obst=self.time_horizon_obst, obstacles=self.obstacles,
            collision_guard=self.collision_guard, weights=self.weights,
            immovable=self.immovable, groups=self.groups, ignore=self.ignore)

    def step(self) -> None:
        """Compute every new velocity first, then move: positions += velocity * time_step."""
        self.velocities = self.compute_new_velocities()
        self.positions = self.positions + self.velocities * self.time_step
        self.global_time += self.time_step
