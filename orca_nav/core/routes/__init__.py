"""
Routes: occupancy grid maps, route planning on them and route following for a fleet.

Modules and their public names (import them from the module, e.g.
``from orca_nav.core.routes.planner import RoutePlanner``):

- ``grid``: an OccupancyGrid as masks, inflation, distances, wall outlines: ``GridMap``,
  ``MapError``;
- ``outline``: the outlines of a boolean grid's True cells as segments:
  ``outline_segments``;
- ``planner``: cheapest routes through a cost field: ``RoutePlanner``, ``Route``,
  ``Passages``, ``CostToGo``, ``Unreachable``, ``route_costs`` and the defaults
  ``LETHAL_TOLERANCE_CELLS``, ``DEFAULT_COST_SCALING``;
- ``blockgraph``: the coarse graph of blocks used first on large maps: ``BlockGraph``,
  ``coarse_factor``;
- ``sight``: line of sight on grids and shortcutting: ``segments_clear``, ``line_of_sight``,
  ``shortcut``;
- ``follow``: carrots and progress along routes for the whole fleet: ``pack_routes``,
  ``follow_routes``, ``route_clearance``.
"""
