"""
The demo's picture: a PNG of one run drawn with matplotlib (Agg, no display needed).

Obstacles (polygons, walls and the occupied cells of the scenario's map, grey), every robot's
path, start, goal and end (a robot with a footprint as its polygon turned by its yaw, else
its disc), the closest approach of two robots and, when the node published them, each robot's
last planned route (thin dashed line in the robot's colour). The scenario's
walkers (people on scripted paths) are drawn apart from the robots: a grey dashed path, their
waypoints as small grey dots, a person marker (a grey filled diamond) and their name where they
ended.
"""

from pathlib import Path

import numpy as np
from orca_nav.core.geometry import placed_polygon

MAP_GREY = '0.55'  # occupied map cells
WALKER_GREY = '0.35'  # walkers' paths and markers


def robot_colors(n):
    """Return n distinct matplotlib colours, one per robot (tab10, tab20, then turbo)."""
    from matplotlib import pyplot as plt
    cmap = plt.get_cmap('tab10' if n <= 10 else 'tab20' if n <= 20 else 'turbo')
    return [cmap(i % cmap.N if n <= 20 else i / max(n - 1, 1)) for i in range(n)]


def _draw_map(ax, grid):
    """Draw the occupied cells of a GridMap in grey; return their (lo, hi) corners or None."""
    rows, cols = np.nonzero(grid.occupied)
    if len(rows) == 0:
        return None
    height, width = grid.shape
    # Cell corners in the world (the map may be rotated), occupied cells only.
    jj, ii = np.meshgrid(np.arange(width + 1), np.arange(height + 1))
    corners = grid.local_to_world(np.stack([jj.ravel(), ii.ravel()], axis=1).astype(float))
    x = corners[:, 0].reshape(height + 1, width + 1)
    y = corners[:, 1].reshape(height + 1, width + 1)
    cells = np.ma.masked_where(~grid.occupied, np.ones(grid.shape))
    ax.pcolormesh(x, y, cells, cmap='gray', vmin=0.0, vmax=1.0 / float(MAP_GREY),
                  shading='flat', zorder=1, rasterized=True)
    occupied = grid.cell_to_world(np.stack([cols, rows], axis=1))
    pad = grid.resolution
    return occupied.min(axis=0) - pad, occupied.max(axis=0) + pad


def _body(robot, pose, **style):
    """Return a patch of a robot at pose (x, y, yaw): its placed footprint, else its disc."""
    from matplotlib.patches import Circle, Polygon
    if robot.footprint is None:
        return Circle(pose[:2], robot.radius, **style)
    return Polygon(placed_polygon(robot.footprint, pose), closed=True, **style)


def _draw_walker(ax, robot, xy):
    """Draw one walker: its scripted waypoints, its path (xy (K, 2)), a person where it ended."""
    from matplotlib.patches import Circle
    waypoints = np.asarray(robot.waypoints, dtype=float).reshape(-1, 2)
    ax.plot(waypoints[:, 0], waypoints[:, 1], ls='', marker='.', color=WALKER_GREY, ms=4,
            zorder=3)
    ax.plot(xy[:, 0], xy[:, 1], color=WALKER_GREY, lw=1.2, ls=(0, (5, 3)), zorder=3)
    known = xy[np.isfinite(xy).all(axis=1)]
    end = known[-1] if len(known) else waypoints[0]
    ax.add_patch(Circle(end, robot.radius, facecolor='none', edgecolor=WALKER_GREY, lw=1.0,
                        ls=':', zorder=4))
    ax.plot(*end, marker='D', color=WALKER_GREY, ms=6, zorder=4)
    ax.annotate(robot.name, xy=end, xytext=(4, 4), textcoords='offset points',
                color=WALKER_GREY, fontsize=8, zorder=6)


def _draw_closest(ax, scenario, poses, closest):
    """Mark the closest approach of two robots (poses (K, N, 3)) in red, with a note."""
    a, b = closest['robots']
    step = closest['step']
    pa, pb = poses[step, a, :2], poses[step, b, :2]
    for i in (a, b):
        ax.add_patch(_body(scenario.robots[i], poses[step, i], fill=False, edgecolor='red',
                           lw=1.8, zorder=5))
    ax.plot([pa[0], pb[0]], [pa[1], pb[1]], color='red', lw=1.5, zorder=5)
    mid = 0.5 * (pa + pb)
    ax.annotate(f'closest approach {closest["distance"]:.2f} m\n'
                f'{scenario.names[a]} - {scenario.names[b]}, t = {closest["time"]:.1f} s',
                xy=mid, xytext=(0.02, 0.02), textcoords='axes fraction', color='red',
                fontsize=9, arrowprops={'arrowstyle': '->', 'color': 'red', 'lw': 1.0},
                bbox={'boxstyle': 'round', 'fc': 'white', 'ec': 'red', 'alpha': 0.85},
                zorder=6)


def plot_run(scenario, poses, metrics, out_path, title='', routes=None):
    """
    Write a PNG of the run: obstacles, map, paths, starts, goals, routes, closest approach.

    poses : (K, N, 3) ground truth; metrics : compute_metrics' dict (for the closest approach)
    routes : {robot name: (P, 2) route the node planned}, optional; robots without one (or
        all, with None) are drawn without a route.
    Returns the path written.
    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Polygon

    poses = np.asarray(poses, dtype=float)
    xy = poses[:, :, :2]
    routes = routes or {}
    fig, ax = plt.subplots(figsize=(7.0, 7.0), dpi=100)
    grid = scenario.grid_map()
    map_box = _draw_map(ax, grid) if grid is not None else None
    for poly in scenario.polygons:
        ax.add_patch(Polygon(poly, closed=True, facecolor='0.75', edgecolor='0.3', zorder=1))
    for seg in scenario.segments:
        ax.plot(seg[:, 0], seg[:, 1], color='0.3', lw=3, solid_capstyle='round', zorder=1)
    walker = scenario.walkers
    colors = robot_colors(int((~walker).sum()))
    drawn_route = False
    for i, robot in enumerate(scenario.robots):
        if robot.walker:
            _draw_walker(ax, robot, xy[:, i])
            continue
        color = colors[i - int(walker[:i].sum())]
        route = np.asarray(routes.get(robot.name, ()), dtype=float).reshape(-1, 2)
        if len(route) >= 2:
            ax.plot(route[:, 0], route[:, 1], color=color, lw=0.9, ls=(0, (4, 3)), alpha=0.9,
                    zorder=2)
            drawn_route = True
        ax.plot(xy[:, i, 0], xy[:, i, 1], color=color, lw=1.4, zorder=3)
        ax.add_patch(_body(robot, robot.start, fill=False, edgecolor=color, lw=1.2,
                           zorder=4))
        ax.plot(*robot.goal, marker='x', color=color, ms=8, mew=2, zorder=4)
        ax.add_patch(_body(robot, poses[-1, i], color=color, alpha=0.35, zorder=2))
    closest = metrics.get('closest')
    if closest:
        _draw_closest(ax, scenario, poses, closest)
    key = [Line2D([], [], ls='', marker='o', mfc='none', mec='0.3', ms=8, label='start'),
           Line2D([], [], ls='', marker='x', mec='0.3', ms=7, mew=2, label='goal'),
           Line2D([], [], ls='', marker='o', mfc='0.6', mec='none', ms=8, label='end')]
    if drawn_route:
        key.append(Line2D([], [], color='0.3', lw=0.9, ls=(0, (4, 3)), label='planned route'))
    if walker.any():
        key.append(Line2D([], [], color=WALKER_GREY, lw=1.2, ls=(0, (5, 3)), marker='D', ms=5,
                          label='walker (scripted)'))
    if closest:
        key.append(Line2D([], [], color='red', marker='o', mfc='none', label='closest approach'))
    ax.legend(handles=key, loc='best', fontsize=8, framealpha=0.85)
    # The arena (else the map's walls) and everything the robots did, with a margin.
    pad = max(0.5, 2.0 * float(scenario.radii.max()))
    lo, hi = np.nanmin(xy.reshape(-1, 2), axis=0) - pad, np.nanmax(xy.reshape(-1, 2), axis=0) + pad
    if scenario.arena is not None:
        lo, hi = np.minimum(lo, scenario.arena[:2]), np.maximum(hi, scenario.arena[2:])
    elif map_box is not None:
        lo, hi = np.minimum(lo, map_box[0]), np.maximum(hi, map_box[1])
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect('equal')
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.grid(True, color='0.9', zorder=0)
    ax.set_title(title, fontsize=10)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out_path)
    plt.close(fig)
    return out_path
