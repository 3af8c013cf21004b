"""
The numba kernels a node runs, compiled before its first tick by running ticks like its own.

numba compiles a kernel once for each combination of argument types it is called with (None
where an array may be, a read-only or non-contiguous view, an int array), at the first call
with it. Which combinations a node's ticks make follows from its settings (acceleration
limits, give-way shares, scans, people tracking), from what it is told (people, a map,
external routes) and from how the controller shapes its arrays; a list of kernels and types
kept by hand goes stale at the next change of either. So ``warmup`` runs what the node runs:
``FleetController.step`` with the node's own ``FleetConfig``, over a few ticks of a small
made-up scene that takes the paths a tick can take (holonomic and differential robots,
observed ones, map walls and routes, an external path, known people, a robot that cannot give
way, scans with an object in them, localisation poses). The rest of the node's robots have no
odometry in it, so a large fleet warms up as fast as a small one.

``kernels`` and ``signatures`` tell what numba has compiled (or loaded from its cache) in this
process: a test checks that after ``warmup`` a tick compiles nothing new.

Run ``python -m orca_nav.control.warmup`` to fill numba's cache for the copy of orca_nav that
Python imports (what ``colcon build`` and ``make`` do after installing; see
docs/performance.md#start-up).
"""

import argparse
from concurrent.futures import Future
import glob
import hashlib
import inspect
import math
import os
import shutil
import sys
import time

import numpy as np
from orca_nav.core import geometry
from orca_nav.core.routes.grid import GridMap

from .config import FleetConfig, navigation_config, node_values
from .controller import FleetController, FleetInputs
from .scan_memory import ScanInput

MAP_SIZE = 8.0          # [m] side of the warm-up's square room (map walls, routes)
MAP_RESOLUTION = 0.1    # [m / cell]
SCAN_BEAMS = 180        # beams of the made-up scans (the count does not change a type)
TICKS = 5               # ticks of each of the three scenes: routes planned, tracks confirmed
# A cart of Nav2's string form (0.9 x 0.6 m), given to two of the warm-up's robots: a mixed
# fleet of carts and discs.
CART = '[[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]'
FOOTPRINTS = {'robot0.footprint': CART, 'robot2.footprint': CART}
# Settings the build warms up besides the node's defaults (``--build``): the variants that a
# parameter makes (footprints, acceleration limits, scans with people tracking) and both
# drives. A node's own settings are warmed up by the node itself (orca_nav.ros.node). In
# ``jobs`` processes, variant k in process k % jobs: the order splits the work about evenly in
# two (the defaults and the footprints each compile most of the solver's kernels; here, cold:
# 58 s in two processes, 100 s in one).
BUILD_VARIANTS = (
    {},
    FOOTPRINTS,
    {'drive': 'differential'},
    dict(FOOTPRINTS, drive='differential'),
    {'max_accel': 1.0, 'max_decel': 2.0, 'max_angular_accel': 3.0},
    {'scan_enabled': True, 'drive': 'differential'},
)


class InlineExecutor:
    """A concurrent.futures-like executor that runs each job at once (warm-up, tests)."""

    def submit(self, fn, *args):
        """Run fn(*args) now; return its finished Future."""
        future = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, **kwargs):
        """Nothing to stop."""


def kernels() -> dict:
    """
    Return {'module.function': dispatcher} of every numba kernel of orca_nav imported so far.

    Found in the modules, not listed: a kernel added anywhere in orca_nav is counted.
    """
    from numba.core.dispatcher import Dispatcher
    found = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == 'orca_nav' or name.startswith('orca_nav.')):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, Dispatcher):
                found[f'{value.py_func.__module__}.{value.py_func.__qualname__}'] = value
    return found


def signatures() -> dict:
    """Return {kernel name: set of the argument types it is compiled for} (see ``kernels``)."""
    return {name: set(d.signatures) for name, d in kernels().items()}


def compiled_count() -> int:
    """Return how many signatures of orca_nav's kernels this process compiled (not loaded)."""
    return sum(sum(d.stats.cache_misses.values()) for d in kernels().values())


def new_signatures(before: dict, after: dict) -> dict:
    """Return {kernel name: signatures in ``after`` that ``before`` lacks}, non-empty only."""
    added = {name: sigs - before.get(name, set()) for name, sigs in after.items()}
    return {name: sigs for name, sigs in added.items() if sigs}


def warmup(config: FleetConfig, navigation=None) -> float:
    """
    Compile (or load from numba's cache) every kernel that ticks of a node with ``config`` run.

    config : the node's FleetConfig (any number of robots); navigation : its
    NavigationConfig (None: the defaults). Runs ``FleetController.step`` on a throwaway
    controller with these settings; nothing of the caller's changes. Returns the seconds
    it took (about a second with a warm cache; a minute or more with a cold one).
    """
    start = time.perf_counter()
    geometry.warmup()  # what a footprint's wall checks use, whether or not the scene meets one
    ctrl = FleetController(config, *(() if navigation is None else (navigation,)),
                           executor=InlineExecutor())
    try:
        _run_scene(ctrl, config)
    finally:
        ctrl.navigator.close()
    return time.perf_counter() - start


def warmup_node_defaults(variants=BUILD_VARIANTS, robots=4, observed=2, jobs=1) -> float:
    """
    Warm up the node's defaults and ``variants`` (parameter changes), holonomic first.

    What a package build runs, not knowing the parameters its nodes will get; with ``jobs`` >
    1 the variants are shared out among that many processes (this one and jobs - 1 started
    for it; numba's cache is what they share). Returns seconds.
    """
    return warm_build(variants, robots, observed, jobs)[0]


def warm_build(variants=BUILD_VARIANTS, robots=4, observed=2, jobs=1, library=False):
    """
    Do ``warmup_node_defaults``; return (seconds, kernels compiled in all processes).

    library : also compile the core's library modes (``orca_nav.core.warmup``: what tests and
    benchmarks call), after the node's variants in the same processes (most of the modes are
    theirs: compiled once, not in a process of their own at the same time).
    """
    start = time.perf_counter()
    jobs = max(1, min(int(jobs), len(variants)))
    parts = [list(variants[k::jobs]) for k in range(jobs)]
    pool = None
    if jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        try:
            pool = ProcessPoolExecutor(jobs - 1, mp_context=multiprocessing.get_context('spawn'))
        except (OSError, NotImplementedError, ValueError):  # no processes here: one at a time
            parts = [list(variants)]
    try:
        tasks = [(_warm_variants, part, robots, observed) for part in parts[1:]]
        # The library's modes after the node's variants, which compile most of them (numba's
        # cache is shared): in this process in order, in the last worker in reverse order,
        # so that the two meet halfway.
        tasks += [(_warm_library, True)] if library and pool is not None else []
        others = [pool.submit(*task) for task in tasks] if pool is not None else []
        _warm_variants(parts[0], robots, observed)
        if pool is None:
            for fn, *args in tasks:
                fn(*args)
        if library:
            _warm_library()
        # Each process counts its own compiles (this one: everything it ran).
        compiled = compiled_count() + sum(future.result() for future in others)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return time.perf_counter() - start, compiled


def _warm_library(reverse=False):
    """Compile the core's library modes; return how many kernels this process compiled."""
    from orca_nav import core
    core.warmup(reverse)
    return compiled_count()


def _warm_variants(variants, robots, observed):
    """Warm up each of ``variants``; return how many kernels this process compiled."""
    names = [f'robot{k}' for k in range(robots)]
    watched = [f'watched{k}' for k in range(observed)]
    for given in variants:
        values = node_values(names, watched, **given)
        warmup(FleetConfig.from_values(values), navigation_config(values))
    return compiled_count()


def _pick(mask, k):
    """Return the first k rows where ``mask`` holds."""
    return list(np.flatnonzero(mask)[:k])


def _run_scene(ctrl, cfg):
    """Tick ``ctrl`` through the warm-up scenes (see the module's docstring)."""
    c, n = cfg.n_controlled, cfg.n
    commanded = np.arange(n) < c
    diff = np.asarray(cfg.differential, bool)
    # Two robots of each drive, two observed robots: the rest stay without odometry.
    rows = (_pick(commanded & ~diff, 2) + _pick(commanded & diff, 2)
            + _pick(~commanded, 2))
    k = len(rows)
    # On a circle in the middle of the room, each heading across it; the first two touch
    # (a robot that cannot give way: the guard's second pass and its brakes).
    centre = MAP_SIZE / 2
    angle = 2 * math.pi * np.arange(k) / max(k, 1)
    start = centre + 1.5 * np.column_stack([np.cos(angle), np.sin(angle)])
    if k > 1:
        start[1] = start[0] + [0.6 * float(cfg.radius[rows[0]]), 0.0]
    yaw = angle + math.pi
    routed = [i for i in rows if i < c]
    goal = {i: 2 * centre - start[rows.index(i)] for i in routed}
    for i in routed:
        ctrl.set_goal(i, float(goal[i][0]), float(goal[i][1]), 0.0)
    inputs = FleetInputs.empty(n)
    period = cfg.period
    person = np.array([[centre, centre - 0.3]])
    # Three scenes: the commanded robots alone in open space (every pair shares half-half:
    # RVO2's kernels' way); then on a map (walls, routes, an external route); then with the
    # observed robots, known people and a priority override (immovable rows).
    for tick in range(3 * TICKS):
        t = tick * period
        scene = tick // TICKS
        if tick == TICKS:
            ctrl.set_map(_room())
            if len(routed) > 1:  # an external route (Nav2's planner) for one of them
                i = routed[1]
                ctrl.set_route(i, [start[rows.index(i)], (centre, centre + 0.5), goal[i]])
        if tick == 2 * TICKS and routed:
            ctrl.set_priority(routed[-1], TICKS * period, t)
        for j, i in enumerate(rows):
            if i >= c and scene < 2:
                continue
            inputs.set_odometry(i, x=start[j, 0], y=start[j, 1], yaw=yaw[j], time=t,
                                v_forward=0.2, stamp=t)
            if cfg.pose_source is not None and cfg.pose_source[i]:
                inputs.set_localisation(i, x=start[j, 0], y=start[j, 1], yaw=yaw[j],
                                        sigma=0.05, time=t)
        person = person + [0.5 * period, 0.0]
        if scene == 2:
            inputs.set_people(person, [[0.5, 0.0]], [0.25], time=t)
        inputs.scans = ([_scan(i, start[rows.index(i)], yaw[rows.index(i)], person[0], t)
                         for i in routed] if cfg.scan_enabled else [])
        ctrl.step(inputs, t)


def _room():
    """Return the warm-up's map: a square room with a wall piece inside."""
    cells = int(round(MAP_SIZE / MAP_RESOLUTION))
    grid = np.zeros((cells, cells), np.int8)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = 100
    grid[cells // 5, cells // 5:cells // 3] = 100
    return GridMap.from_occupancy(grid.ravel(), cells, cells, MAP_RESOLUTION)


def _scan(i, position, yaw, person, t):
    """Return robot i's made-up scan at ``position``: the room's walls and a moving person."""
    inc = 2 * math.pi / SCAN_BEAMS
    angles = yaw - math.pi + inc * np.arange(SCAN_BEAMS)
    dx, dy = np.cos(angles), np.sin(angles)
    with np.errstate(divide='ignore'):
        to_x = np.where(dx > 0, (MAP_SIZE - position[0]) / dx, -position[0] / dx)
        to_y = np.where(dy > 0, (MAP_SIZE - position[1]) / dy, -position[1] / dy)
    ranges = np.minimum(np.abs(to_x), np.abs(to_y))
    # The person: a disc of 0.25 m, where the beams meet it.
    rel = person - position
    along = rel[0] * dx + rel[1] * dy
    miss = (rel[0] * dy - rel[1] * dx) ** 2
    inside = (along > 0) & (miss < 0.25 ** 2)
    hit = along - np.sqrt(np.maximum(0.25 ** 2 - miss, 0.0))
    ranges = np.where(inside, np.minimum(ranges, hit), ranges)
    return ScanInput(robot=i, ranges=ranges, angle_min=-math.pi, angle_increment=inc,
                     range_min=0.05, range_max=MAP_SIZE, time=t)


STAMP = 'orca_nav_sources.sha1'  # in each cache folder: the sources its kernels came from


def sources_hash(package=None) -> str:
    """Return a hash of every module of the orca_nav package at ``package`` (default: this)."""
    package = package or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    digest = hashlib.sha1()
    for path in sorted(glob.glob(os.path.join(package, '**', '*.py'), recursive=True)):
        digest.update(os.path.relpath(path, package).encode())
        with open(path, 'rb') as f:
            digest.update(f.read())
    return digest.hexdigest()


def _folders():
    """Return {cache folder: [kernels cached there]} of this copy's kernels."""
    folders = {}
    for d in kernels().values():
        if d.stats.cache_path:
            folders.setdefault(d.stats.cache_path, []).append(d)
    return folders


def _stamp(folder):
    try:
        with open(os.path.join(folder, STAMP)) as f:
            return f.read().strip()
    except OSError:
        return None


def drop_stale(sources: str) -> int:
    """
    Remove this copy's cached kernels that other sources left (a build into an old install).

    numba checks only that the file defining a cached kernel is unchanged, not the files of
    the kernels it calls: after an edit of escape.py alone, lines.py's cached kernels would
    keep the old code of escape.py's. So a cache folder whose stamp is not ``sources`` (the
    hash of every module) loses its kernels. Only the folders of orca_nav's own kernels are
    touched (__pycache__ beside the modules, or their folders under NUMBA_CACHE_DIR). Returns
    the number of files removed.
    """
    removed = 0
    for folder in _folders():
        if not os.path.isdir(folder) or _stamp(folder) == sources:
            continue
        for name in os.listdir(folder):
            if name.endswith(('.nbi', '.nbc')):
                os.remove(os.path.join(folder, name))
                removed += 1
    return removed


def seed_from(source_root: str, sources: str) -> int:
    """
    Copy the kernels the same sources at ``source_root`` have cached, into this copy's cache.

    A build's sources (colcon's source folder) hold the same modules as the copy it installs;
    numba's cache files are keyed by a module's content and the kernel's code, not its path,
    so the kernels ``make``'s set-up compiled for them load for the installed copy too. Only
    from cache folders stamped with ``sources``; the warm-up then compiles what is missing.
    Returns the number of files copied.
    """
    from numba.core.caching import _CacheLocator
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if sources_hash(os.path.join(source_root, 'orca_nav')) != sources:
        return 0
    copied = 0
    for folder, found in _folders().items():
        module_file = inspect.getfile(found[0].py_func)
        seed_file = os.path.join(source_root, 'orca_nav', os.path.relpath(module_file, package))
        if folder == os.path.join(os.path.dirname(module_file), '__pycache__'):
            seed = os.path.join(os.path.dirname(seed_file), '__pycache__')
        else:
            from numba.core import config
            seed = os.path.join(config.CACHE_DIR,
                                _CacheLocator.get_suitable_cache_subpath(seed_file))
        if os.path.realpath(seed) == os.path.realpath(folder) or _stamp(seed) != sources:
            continue
        for name in os.listdir(seed):
            if name.endswith(('.nbi', '.nbc')):
                shutil.copy2(os.path.join(seed, name), os.path.join(folder, name))
                copied += 1
    return copied


def main(argv=None):
    """Fill numba's cache for this copy of orca_nav: the node's defaults and variants."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--expect', metavar='DIR',
                        help='fail unless orca_nav is imported from under DIR')
    parser.add_argument('--seed', metavar='DIR',
                        help='first take the kernels cached for the same sources in DIR (the '
                             "folder holding orca_nav/: a build's source folder)")
    parser.add_argument('--jobs', type=int, default=min(2, os.cpu_count() or 1),
                        help='processes that compile side by side (default: 2, or 1 on one '
                             'core)')
    parser.add_argument('--library', action='store_true',
                        help="also the core's library modes (orca_nav.core.warmup: what the "
                             "tests and benchmarks call), after the node's variants")
    args = parser.parse_args(argv)
    import orca_nav
    here = os.path.realpath(orca_nav.__path__[0])
    if args.expect and not here.startswith(os.path.realpath(args.expect) + os.sep):
        print(f'orca_nav: imported from {here}, not from under {args.expect}', file=sys.stderr)
        return 2
    sources = sources_hash()
    drop_stale(sources)
    seeded = 0
    if args.seed:
        try:
            seeded = seed_from(args.seed, sources)
        except (OSError, ImportError, AttributeError) as exc:  # numba's layout changed
            print(f'orca_nav: kernels not taken from {args.seed}: {exc!r}', file=sys.stderr)
    seconds, compiled = warm_build(jobs=args.jobs, library=args.library)
    for folder in _folders():
        with open(os.path.join(folder, STAMP), 'w') as f:
            f.write(sources + '\n')
    print(f'orca_nav: numba kernels of {here} ready in {seconds:.1f} s ({compiled} compiled '
          f'in {args.jobs} process{"es" if args.jobs > 1 else ""}'
          f'{" with the library modes" if args.library else ""}, '
          f"{seeded} files taken from the sources' cache; cached in "
          f'{", ".join(sorted(_folders()))})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
