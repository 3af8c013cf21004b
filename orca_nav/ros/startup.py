"""
How the node starts: its numba kernels, what it controls, the parameters ROS 2 would ignore.

The kernels compile on a thread of their own (``Kernels``) while the node already spins:
until they are ready every robot gets zero commands and the status ``starting``, and a start
that compiles (numba's cache empty or out of date) says so in one line with the time to
expect. ROS 2 ignores a parameter override that no declared parameter takes (a misspelt name,
a robot the node does not know) without a word: ``log_start`` says so, with the nearest name.
"""

import gc
import threading
import time

from orca_nav.control import warmup as W
from orca_nav.ros import params as P

SHOWN_ROBOTS = 10  # robot names in the start-up line at most (one short line)
# [s] a warm-up still running this long after the node started compiles (a warm cache loads
# the kernels in about a second): the node says so.
COMPILING_AFTER = 2.0
# [s] what a cold start's compile takes, measured on an idle 2-core machine (docs/performance.md,
# start-up): the node's defaults; scans (and people tracking) add about half.
COMPILE_SECONDS = 30.0
COMPILE_SECONDS_SCANS = 15.0
THREAD_NAME = 'orca_nav_kernels'


def compiling():
    """Whether a node's warm-up thread still runs in this process (an exit need not wait)."""
    return any(t.name == THREAD_NAME and t.is_alive() for t in threading.enumerate())


def freeze_heap():
    """
    After a process froze its heap (``TickMonitor.take_over_gc``), freeze what came since.

    The node's process freezes its start-up objects once the node is built, and runs a full
    collection every 10 s. numba compiles on the kernels' thread, often after that: a cold
    start of 1000 robots left about 590 000 objects, which every full collection then walked
    (0.3-0.7 s each, every 10 s: a node of 1000 robots beside a busy CPU missed periods
    for as long as it ran, docs/performance.md, start-up). Collected once first, on this
    thread, while the ticks still command zero. Elsewhere (tests, scripts) nothing happens.
    """
    if gc.get_freeze_count():
        gc.collect()
        gc.freeze()


class Kernels:
    """
    The numba kernels of one node, compiled (or loaded from numba's cache) on a thread.

    ``ready`` once ``orca_nav.control.warmup.warmup`` has run the node's own settings; until
    then the node's ticks command nothing (``FleetOutputs.starting``). ``check`` (each tick
    until ready) logs one line when it compiles (a kernel missing from the cache) for long,
    and one when it is over.
    """

    def __init__(self, node):
        """Start compiling the kernels of ``node``'s settings (an OrcaNavNode)."""
        self._node = node
        settings = node.settings
        self.started = time.monotonic()
        self.seconds = None          # [s] the warm-up took, once over
        self._announced = False
        self._ready = threading.Event()
        expect = COMPILE_SECONDS + (COMPILE_SECONDS_SCANS if settings.params.scan_enabled
                                    else 0.0)
        folder = next((d.stats.cache_path for d in W.kernels().values()
                       if d.stats.cache_path), None)
        where = (f"numba's cache in {folder} lacks them" if folder else
                 'numba finds no folder it may write its cache in')
        self.reason = (f'compiling the numba kernels ({where}: the first start after a build, '
                       f'an upgrade or an edit); expect about {expect:.0f} s, longer on a busy '
                       'machine')
        self._thread = threading.Thread(target=self._run, name=THREAD_NAME, daemon=True,
                                        args=(settings.fleet, settings.navigation))
        self._thread.start()

    @property
    def ready(self):
        """Whether the kernels are compiled (the warm-up is over)."""
        return self._ready.is_set()

    def _run(self, fleet, navigation):
        try:
            W.warmup(fleet, navigation)
        except Exception as exc:  # noqa: B902 -- the ticks then compile what they need
            self._node.get_logger().error(f'compiling the numba kernels failed ({exc!r}); '
                                          'the first ticks compile them')
        self.seconds = time.monotonic() - self.started
        freeze_heap()
        self._node.get_logger().debug(f'numba kernels ready in {self.seconds:.1f} s')
        self._ready.set()

    def check(self):
        """Return ``ready``; log a compile that takes longer than a warm cache's load, once."""
        if self.ready:
            if self._announced:
                self._announced = False
                self._node.get_logger().info(f'numba kernels compiled in {self.seconds:.1f} '
                                             's: commanding')
            return True
        # Loading a warm cache can take longer on a busy machine: said only once numba has
        # missed its cache for a kernel (it compiles).
        if (not self._announced and time.monotonic() - self.started > COMPILING_AFTER
                and _compiles()):
            self._announced = True
            self._node.get_logger().warning(f'{self.reason}; until then every robot gets '
                                            "zero commands and the status 'starting'")
        return False


def _compiles():
    """Whether numba has compiled a kernel of orca_nav in this process (missed its cache)."""
    try:
        return W.compiled_count() > 0
    except RuntimeError:  # the warm-up's thread changed the counts being read: it compiles
        return True


def log_start(node):
    """
    Log a node's start: robots, dropped observers, unused overrides, footprints, unknown groups.

    Misspelt parameter names are logged as WARNING, with the nearest parameter; overrides of
    robots the node neither commands nor observes as INFO (a shared params file). Returns the
    unused override names (misspelt first), the node's ``unused_parameters``.
    """
    p, c = node.settings.params, node.settings.n_controlled
    robots = list(node.settings.names)
    shown = robots[:min(c, SHOWN_ROBOTS)] + (['...'] if c > SHOWN_ROBOTS else [])
    node.get_logger().info(f'controlling {c} robot(s) {shown}, observing '
                           f'{len(robots) - c}, at {p.rate} Hz')
    given = node.get_parameter('observed_robots').value or []
    dropped = [o for o in given if o in robots[:c]]
    if dropped:
        node.get_logger().info(f'observed_robots: {dropped} not observed: this node '
                               'commands them')
    # rclpy has no public accessor for the overrides it was given (params files, -p).
    overrides = list(getattr(node, '_parameter_overrides', {}))
    declared = list(node.get_parameters_by_prefix(''))
    misspelt, other = P.unused_overrides(overrides, declared, robots)
    for name, hint in misspelt:
        suggestion = f' (did you mean {hint!r}?)' if hint else ''
        node.get_logger().warning(f'parameter {name!r} is not a parameter of this node'
                                  f'{suggestion}: ignored')
    if other:
        node.get_logger().info(f'parameters of robots this node neither commands nor '
                               f'observes, ignored: {other}')
    for line in P.footprint_warnings(node.settings.values):
        node.get_logger().warning(line)
    unknown = P.unknown_groups(node.settings.values)
    if unknown:
        node.get_logger().warning(f'groups_to_ignore names groups no robot belongs to: '
                                  f'{unknown} (allowed; check the spelling)')
    return [name for name, _ in misspelt] + other
