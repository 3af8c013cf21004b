"""
Avoidance: one ORCA (RVO2) step for a whole fleet, numpy and numba only.

Modules and their public names (import them from the module, e.g.
``from orca_nav.core.orca.solver import solve``; ``orca_nav.core`` re-exports the main ones):

- ``solver``: the fleet's step, arrays in, velocities out: ``solve``, ``Agents``,
  ``SolverSettings``, ``compute_velocities`` (RVO2's interface), ``validate_params``,
  ``agent_neighbors``, ``warmup``;
- ``lines``: ORCA half-planes and RVO2's linear programs, compiled per agent:
  ``solve_all``, ``obstacle_lines``, ``agent_line``, ``linear_program1``/``2``/``3``,
  ``reach_lines``, ``reach_floor``, ``brake_conflicts``, ``pair_share`` and the row records
  ``AgentRows``, ``NearObstacles``, ``Horizons``, ``Responsibility``, ``ReachSet``,
  ``SoftRows``;
- ``escape``: the way out when no velocity keeps every neighbour away: ``escape_velocity``,
  ``escape_unicycle``, ``drive_keeps_clear``, ``time_to_contact``, ``step_intrusion``,
  ``rollout_value``, ``unicycle_of``;
- ``keepout``: preferred velocities out of walkers' next steps: ``keep_out``;
- ``obstacles``: static obstacles as RVO2 stores them: ``Obstacles``, ``edges_near``;
- ``kdtree``: the compiled k-d tree of agents and obstacle edges: ``build``, ``nearest``,
  ``agent_neighbors``, ``within``;
- ``drive``: goals to preferred velocities, velocities to drive commands:
  ``preferred_velocities``, ``holonomic_command``, ``differential_command``,
  ``lookahead_points``, ``lookahead_velocities``, ``limit_change``, ``clamp_speed``,
  ``world_to_body``, ``body_to_world`` and the drive names ``DRIVES``, ``HOLONOMIC``,
  ``DIFFERENTIAL``.
"""
