"""
Metrics of one demo run from ground-truth poses, as a dict, a text table and JSON (numpy only).

``compute_metrics`` judges a run on the true robot shapes and the scenario's static obstacles
(polygons, walls and the occupied cells of its map) and, when the scenario has walkers (people
on scripted paths), the robots' contacts with them; ``format_table`` prints it and
``metrics_record`` turns it into plain JSON-able values for ``--metrics-json``. A robot with a
footprint is its polygon turned by its yaw (``poses[..., 2]``), one without the disc of its
radius; walkers are discs.
"""

import json
import math
from pathlib import Path

import numpy as np
from orca_nav.control.parameters import FLEET_BY_NAME
from orca_nav.core.geometry import (
    convex_gap, placed_polygon, point_segment_distance, polygon_disc_gap)
from orca_nav.sim.scenarios import CONTACT_TOLERANCE

# [m] the node stops a robot this close to its goal: the node's own default.
GOAL_TOLERANCE = float(FLEET_BY_NAME['goal_tolerance'].default)


def compute_metrics(scenario, t, poses, t_goals, goal_tolerance=GOAL_TOLERANCE):
    """
    Metrics of one run from ground-truth poses.

    scenario : the Scenario that was run (robots in the order of the poses' second axis)
    t : (K,) sample times [s]; poses : (K, N, 3) x, y, yaw; t_goals : time the goals were sent
    Returns a dict (see the keys below); times to goal are measured from t_goals.
    ``time_to_goal`` and ``path_ratio`` are (N,) arrays, NaN for a robot that did not arrive;
    ``line_deviation`` (N,) is each robot's largest distance from the straight line between
    its start and its goal [m] (how far it was pushed off course).

    The scenario's walkers are rows of ``poses`` too (NaN where their poses are unknown) but
    not robots: ``robots`` and ``arrived`` count the other rows, ``walkers`` the walkers, whose
    per-robot values are NaN; they are not judged against obstacles or each other. A robot
    that overlaps a walker is a ``walker_collisions`` pair (``walker_colliding_pairs``, robot
    first) and ``min_walker_clearance`` is the smallest robot-walker gap [m] (inf without
    walkers); ``collisions`` = robot + obstacle + walker collisions. Gaps and clearances are
    between the robots' footprints turned by their yaws, or their discs where they have none.
    """
    t = np.asarray(t, dtype=float)
    poses = np.asarray(poses, dtype=float)
    xy = poses[:, :, :2]
    k, n = xy.shape[:2]
    radii, goals = scenario.radii, scenario.goals
    walker = scenario.walkers
    robots = np.flatnonzero(~walker)
    out = {'robots': len(robots), 'walkers': int(walker.sum()),
           'duration': float(t[-1] - t_goals) if k else 0.0}
    out.update(_separation(scenario, t, poses, t_goals))
    out.update(_walker_contacts(scenario, poses))

    # Robot-obstacle clearance (the walkers' paths are the scenario writer's business).
    obstacle_clearance = (scenario.obstacle_distance(xy[:, robots].reshape(-1, 2))
                          .reshape(k, len(robots)) - radii[None, robots])
    for r, i in enumerate(robots):
        if scenario.robots[i].footprint is not None:
            _true_gaps(obstacle_clearance[:, r], lambda s, i=i: scenario.polygon_clearance(
                placed_polygon(scenario.robots[i].footprint, poses[s, i])))
    out['min_obstacle_clearance'] = float(obstacle_clearance.min()) if k else math.inf
    hitting = obstacle_clearance < -CONTACT_TOLERANCE
    out['obstacle_collisions'] = int(hitting.any(axis=0).sum())
    out['collisions'] = (out['robot_collisions'] + out['obstacle_collisions']
                         + out['walker_collisions'])

    # Arrival, time to goal and path length (from the moment the goals were sent).
    to_goal = np.linalg.norm(xy - goals[None], axis=-1)                  # (K, N)
    at_goal = to_goal <= goal_tolerance
    reached = at_goal & (t >= t_goals)[:, None] & ~walker[None, :]   # walkers never arrive
    first = np.where(reached.any(axis=0), np.argmax(reached, axis=0), -1)
    out['arrived'] = int((first >= 0).sum())
    times = np.array([t[f] - t_goals if f >= 0 else math.nan for f in first])
    out['time_to_goal'] = times
    done = times[np.isfinite(times)]
    out['time_to_goal_mean'] = float(done.mean()) if len(done) else math.nan
    out['time_to_goal_max'] = float(done.max()) if len(done) else math.nan
    steps = np.linalg.norm(np.diff(xy, axis=0), axis=-1)                 # (K-1, N)
    ratios = np.full(n, math.nan)
    for i, robot in enumerate(scenario.robots):
        if first[i] < 0 or robot.straight_line <= 0.0 or robot.walker:
            continue
        # Path driven until arrival over the straight line from the start to that point.
        straight = np.linalg.norm(xy[first[i], i] - xy[0, i])
        if straight > 0.0:
            ratios[i] = steps[:first[i], i].sum() / straight
    out['path_ratio'] = ratios
    starts = scenario.starts[:, :2]
    out['line_deviation'] = np.array([
        point_segment_distance(xy[:, i], np.array([[starts[i], goals[i]]]))[:, 0].max()
        if k and not walker[i] else math.nan for i in range(n)])
    done = ratios[np.isfinite(ratios)]
    out['path_ratio_mean'] = float(done.mean()) if len(done) else math.nan
    out['path_ratio_max'] = float(done.max()) if len(done) else math.nan
    return out


def _true_gaps(gaps, true_gap):
    """
    Replace a row pair's disc gaps (K,) in place by its least gap on the true shapes.

    gaps : lower bounds of the true gaps (a footprint's disc holds it), NaN unknown;
    true_gap(step) : the gap at one sample. The samples are measured from the least disc gap
    up until no disc gap is below the least true gap found; then every sample is inf except
    the one of that least gap (enough for the minima and the collisions).
    """
    best, best_step = math.inf, -1
    for step in np.argsort(gaps):   # NaN last
        if not gaps[step] < best:
            break
        gap = true_gap(step)
        if gap < best:
            best, best_step = gap, step
    gaps[:] = math.inf
    if best_step >= 0:
        gaps[best_step] = best


def _pair_gap(scenario, poses, i, j):
    """Return gap(step) [m] between rows i and j at a sample: polygon-polygon or polygon-disc."""
    robots = scenario.robots
    if robots[i].footprint is None:
        i, j = j, i   # the polygon first

    def gap(step):
        a = placed_polygon(robots[i].footprint, poses[step, i])
        if robots[j].footprint is None:
            return polygon_disc_gap(a, poses[step, j, :2], robots[j].radius)
        return convex_gap(a, placed_polygon(robots[j].footprint, poses[step, j]))
    return gap


def _separation(scenario, t, poses, t_goals):
    """Robot-robot separation at every sample (walkers left out): minimum, closest, collisions."""
    xy = poses[:, :, :2]
    rows = np.flatnonzero(~scenario.walkers)
    n = len(rows)
    if n < 2 or len(t) == 0:
        return {'min_separation': math.inf, 'min_clearance': math.inf, 'closest': None,
                'robot_collisions': 0, 'colliding_pairs': []}
    radii = scenario.radii
    iu, ju = np.triu_indices(n, 1)
    iu, ju = rows[iu], rows[ju]   # scenario rows
    dist = np.linalg.norm(xy[:, iu] - xy[:, ju], axis=-1)          # (K, P)
    limit = radii[iu] + radii[ju]                                    # (P,)
    gap = dist - limit                                               # (K, P)
    shaped = np.array([scenario.robots[i].footprint is not None
                       or scenario.robots[j].footprint is not None for i, j in zip(iu, ju)])
    for p in np.flatnonzero(shaped):
        _true_gaps(gap[:, p], _pair_gap(scenario, poses, iu[p], ju[p]))
    step, pair = np.unravel_index(np.argmin(gap), dist.shape)
    # Robot-robot collisions: pairs that overlap at some sample (a long contact counts once).
    collided = np.where(shaped, gap < -CONTACT_TOLERANCE,
                        dist < limit - CONTACT_TOLERANCE).any(axis=0)
    return {'min_separation': float(dist.min()),
            'min_clearance': float(gap[step, pair]),
            'closest': {'time': float(t[step] - t_goals), 'step': int(step),
                        'robots': (int(iu[pair]), int(ju[pair])),
                        'distance': float(dist[step, pair])},
            'robot_collisions': int(collided.sum()),
            'colliding_pairs': [(scenario.names[iu[p]], scenario.names[ju[p]])
                                for p in np.flatnonzero(collided)]}


def _walker_contacts(scenario, poses):
    """Robot-walker gaps at every sample: minimum and the pairs that overlap."""
    xy = poses[:, :, :2]
    walker = scenario.walkers
    robots, walkers = np.flatnonzero(~walker), np.flatnonzero(walker)
    if len(walkers) == 0 or len(robots) == 0 or len(xy) == 0:
        return {'min_walker_clearance': math.inf, 'walker_collisions': 0,
                'walker_colliding_pairs': []}
    radii = scenario.radii
    dist = np.linalg.norm(xy[:, robots, None] - xy[:, None, walkers], axis=-1)   # (K, R, W)
    gap = dist - radii[robots, None] - radii[None, walkers]
    for a, i in enumerate(robots):
        if scenario.robots[i].footprint is not None:
            for b, w in enumerate(walkers):
                _true_gaps(gap[:, a, b], _pair_gap(scenario, poses, i, w))
    # A walker's unknown pose (NaN: odometry does not show it) is no contact.
    collided = (np.nan_to_num(gap, nan=np.inf) < -CONTACT_TOLERANCE).any(axis=0)   # (R, W)
    known = gap[np.isfinite(gap)]
    return {'min_walker_clearance': float(known.min()) if len(known) else math.inf,
            'walker_collisions': int(collided.sum()),
            'walker_colliding_pairs': [(scenario.names[robots[a]], scenario.names[walkers[b]])
                                       for a, b in zip(*np.nonzero(collided))]}


def format_table(metrics, scenario, drive, tick=None):
    """Return the metrics as an aligned two-column text table."""
    def f(value, unit='', digits=2):
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            return 'n/a'
        return f'{value:.{digits}f}{unit}'

    limit = 2.0 * float(scenario.radii[~scenario.walkers].min())
    shaped = [r.name for r in scenario.robots if r.footprint is not None and not r.walker]
    if shaped:
        judged = (f'footprints turned by their yaws ({", ".join(shaped)})'
                  + (', discs for the others' if len(shaped) < metrics['robots'] else ''))
    else:
        judged = "discs of the robots' radii"
    closest = metrics.get('closest')
    pair = ''
    if closest:
        a, b = closest['robots']
        pair = f'  ({scenario.names[a]} - {scenario.names[b]} at {closest["time"]:.1f} s)'
    walkers = metrics.get('walkers', 0)
    with_walkers = f', {walkers} walkers' if walkers else ''
    walker_collisions = (f', robot-walker {metrics["walker_collisions"]}' if walkers else '')
    rows = [
        ('scenario', f'{scenario.name}, {metrics["robots"]} robots, {drive}{with_walkers}'),
        ('arrived', f'{metrics["arrived"]}/{metrics["robots"]}'),
        ('collisions', f'{metrics["collisions"]} (robot-robot {metrics["robot_collisions"]}, '
                       f'robot-obstacle {metrics["obstacle_collisions"]}{walker_collisions})'),
        ('contact judged on', judged),
        ('min separation', f'{f(metrics["min_separation"], " m", 3)} centre to centre'
                           + ('' if shaped else f' (contact at {limit:.3f} m)')),
        ('min clearance', f'{f(metrics["min_clearance"], " m", 3)} between '
                          f'{"shapes" if shaped else "discs"}{pair}'),
        ('min obstacle clearance', f(metrics['min_obstacle_clearance'], ' m', 3)),
    ]
    if walkers:
        rows.append(('walkers', f'{walkers}, {metrics["walker_collisions"]} robot-walker '
                                f'contacts, min clearance '
                                f'{f(metrics["min_walker_clearance"], " m", 3)}'))
    rows += [
        ('time to goal mean / max', f'{f(metrics["time_to_goal_mean"], " s", 1)} / '
                                    f'{f(metrics["time_to_goal_max"], " s", 1)}'),
        ('path / straight line', f'{f(metrics["path_ratio_mean"], "", 3)} mean, '
                                 f'{f(metrics["path_ratio_max"], "", 3)} max'),
        ('node tick p50 / p99', (f'{f(tick[0], " ms")} / {f(tick[1], " ms")}' if tick
                                 else 'n/a (the node published no tick statistics)')),
        ('run time', f(metrics['duration'], ' s', 1)),
    ]
    width = max(len(r[0]) for r in rows)
    line = '-' * (width + 3 + max(len(r[1]) for r in rows))
    return '\n'.join([line] + [f'{k:<{width}} | {v}' for k, v in rows] + [line])


def _plain(value):
    """Return value as JSON-able Python: numpy to lists and floats, inf and NaN to None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value


def metrics_record(scenario, drive, exit_code, metrics=None, tick=None, source=None,
                   error=None):
    """
    Return the record ``--metrics-json`` writes for one run: plain JSON values, null for n/a.

    Keys: scenario, drive, robot_names, walker_names, exit_code, error (a message or null),
    and when the run produced a trajectory: robots, walkers, arrived, collisions,
    robot_collisions, obstacle_collisions, walker_collisions, colliding_pairs,
    walker_colliding_pairs, min_separation, min_clearance, min_obstacle_clearance,
    min_walker_clearance, time_to_goal, path_ratio and line_deviation ({robot: value or null},
    robots only), their means and maxima, duration, closest, tick_ms_p50, tick_ms_p99 and
    ground_truth (where the poses came from).
    """
    walker = scenario.walkers
    robot_names = [name for name, w in zip(scenario.names, walker) if not w]
    record = {'scenario': scenario.name, 'drive': drive, 'robot_names': robot_names,
              'walker_names': [name for name, w in zip(scenario.names, walker) if w],
              'exit_code': int(exit_code), 'error': error}
    if metrics is not None:
        per_robot = {key: {name: value
                           for name, value, w in zip(scenario.names, metrics[key], walker)
                           if not w}
                     for key in ('time_to_goal', 'path_ratio', 'line_deviation')}
        record.update({k: v for k, v in metrics.items() if k not in per_robot})
        record.update(per_robot)
        record['tick_ms_p50'], record['tick_ms_p99'] = tick if tick else (None, None)
        record['ground_truth'] = source
    return _plain(record)


def write_metrics_json(path, record):
    """Write one run's record (see metrics_record) to ``path`` as indented JSON."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, allow_nan=False) + '\n')
    return path
