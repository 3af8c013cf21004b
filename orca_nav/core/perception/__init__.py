"""
Perception: laser scans to obstacles, people and robots to track, and synthetic scans.

Modules and their public names (import them from the module, e.g.
``from orca_nav.core.perception.scan import scan_to_segments``; ``orca_nav.core`` re-exports
the main ones):

- ``scan``: one laser scan to global points and line segments: ``scan_to_points``,
  ``scan_to_segments``, ``outside_discs``, ``recheck_segments``, ``warmup``;
- ``detection``: small objects (people, legs, robots) in one scan: ``Detector``,
  ``detect_objects``;
- ``tracking``: a Kalman filter per moving object across scans: ``Tracker``, ``Tracks``,
  ``warmup``;
- ``raycast``: rays against segments and discs (the simulator's scans): ``cast_rays``,
  ``polygon_edges``, ``polyline_edges``;
- ``checks``: the argument checks the modules above share: ``finite_scalar``, ``positive``,
  ``non_negative``, ``int_at_least``, ``as_xy``.
"""
