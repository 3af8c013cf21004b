"""
``orca_nav_node``: run the orca_nav node until Ctrl-C or SIGTERM, then stop every robot.

Run::

    python -m orca_nav.node --ros-args --params-file config/orca_nav.yaml -p robots:='[robot1]'
"""

import os
import re
import signal
import sys

from orca_nav.ros import middleware, startup
from orca_nav.ros.node import OrcaNavNode
import rclpy
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.executors import SingleThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.signals import SignalHandlerOptions

STOP_POLL_PERIOD = 0.05  # [s] how often main() looks at the stop flag set by a signal
# [s] Python's thread switch interval in the node process (default 5 ms): a tick that waits for
# the GIL held by the route planning thread gets it back within this, not within 5 ms at each
# of its many numpy calls (what it measured: docs/performance.md, "Routes and maps").
GIL_SWITCH_INTERVAL = 0.0005


def make_executor(kind, logger=None, context=None):
    """Return an rclpy executor: 'single', 'multi' or 'events' (see the executor parameter)."""
    if kind == 'events':
        try:
            from rclpy.experimental import EventsExecutor
            return EventsExecutor(context=context)
        except ImportError:
            if logger is not None:
                logger.warning('EventsExecutor is not available here: using the '
                               'SingleThreadedExecutor')
    if kind == 'multi':
        return MultiThreadedExecutor(context=context)
    return SingleThreadedExecutor(context=context)


def missing_params_files(argv):
    """
    Return the ``--params-file`` paths of a command line that are not files.

    >>> missing_params_files(['orca_nav_node', '--ros-args', '--params-file', '/no.yaml'])
    ['/no.yaml']
    """
    return [path for flag, path in zip(argv, argv[1:])
            if flag == '--params-file' and not os.path.isfile(path)]


def main(args=None):
    """
    Run the node until Ctrl-C or SIGTERM; every robot then gets a zero command.

    SIGINT and SIGTERM stay ignored once it returns (the process is ending). A command line
    rclpy refuses (a params file that is not there) is one line, and exit code 1.
    """
    missing = missing_params_files(sys.argv if args is None else args)
    if missing:
        print(f'orca_nav_node: params file {missing[0]!r} is not a file', file=sys.stderr)
        return 1
    # rclpy's own signal handlers shut the context down before our code runs, after which no
    # zero command can be published. Raising KeyboardInterrupt from a handler can surface in
    # the middle of rclpy's C++ calls. So the handlers only set a flag that the loop checks;
    # but while the node is still being built (a large fleet's publishers take many seconds),
    # nothing has been commanded yet: a signal then ends the start at once.
    profile = middleware.use_node_profile()  # before rclpy.init: Fast DDS reads it once
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except _rclpy.RCLError as exc:  # without rcl's source locations (', at parser.c:271')
        print(f'orca_nav_node: {re.sub(r", at [^ ,]+:[0-9]+", "", str(exc))}', file=sys.stderr)
        return 1
    log = rclpy.logging.get_logger('orca_nav')
    (log.info if profile.startswith('Fast DDS profile: yours') else log.debug)(profile)
    stop = []
    building = [True]

    def on_signal(signum, frame):
        stop.append(signum)
        if building:
            building.clear()
            raise KeyboardInterrupt
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, on_signal) for sig in signals}
    node = None
    code = 0
    try:
        try:
            node = OrcaNavNode()
            building.clear()
        except KeyboardInterrupt:
            # Nothing commanded yet; rclpy's shutdown would destroy a large fleet's thousands
            # of half-built entities one by one (6 s with 1000 robots), beyond launch's grace.
            log.info(
                f'{signal.Signals(stop[0]).name} while starting: exiting')
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        node.monitor.take_over_gc()
        # The planning worker thread must not hold the GIL for long while a tick waits for it.
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        executor = make_executor(node.settings.params.executor, node.get_logger())
        executor.add_node(node)
        while not stop and rclpy.ok():
            executor.spin_once(timeout_sec=STOP_POLL_PERIOD)
        if stop:
            node.get_logger().info(f'{signal.Signals(stop[0]).name}: stopping every robot')
    except ExternalShutdownException:
        pass
    except Exception as exc:  # noqa: B902 -- report bad parameters as one readable line
        log.fatal(str(exc))
        code = 1
    finally:
        # Ignored from now on, also after main() returns: the process is ending, and a late
        # signal (launch's SIGINT comes just after the terminal's Ctrl-C) would raise
        # KeyboardInterrupt inside rclpy's C++ teardown and abort the exit.
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
        if node is not None:
            node.stop_all()
            node.destroy_node()
        rclpy.try_shutdown()
        if startup.compiling():
            # Stopped while the kernels compile (a first start): the compile is dropped
            # rather than waited for or torn down under the interpreter's exit.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return code


if __name__ == '__main__':
    sys.exit(main())
