"""
What the node watches on wall time: the process that started it, and /clock in a simulation.

ROS timers do not run on simulated time until a ``/clock`` message arrives, so both checks run
on a steady-clock timer of their own (``WATCH_PERIOD``), whatever clock the node ticks on.
``watch_parent`` is the same parent watch for the simulator and the demo: ``ros2 launch``
killed with SIGTERM exits without stopping its processes.
"""

import os
import signal
import sys
import threading
import time

# [s] wall (steady) time between two looks at the process that started the node and at /clock.
WATCH_PERIOD = 0.2
NO_CLOCK_WARN_AFTER = 3.0   # [s] of wall time without /clock (use_sim_time) before a warning


class NodeWatch:
    """
    The parent process and the sim clock of one node; ``check`` is its steady timer's callback.

    - The process that started the node (ros2 launch, a shell, systemd): when it is gone
      (``ros2 launch`` killed with SIGTERM exits without stopping its nodes), every robot is
      stopped and the node sends itself SIGTERM (orca_nav.ros.main turns it into a clean
      stop). A node started by init (pid 1) directly has nothing to watch.
    - ``use_sim_time`` and no ``/clock`` after NO_CLOCK_WARN_AFTER seconds: one warning, and
      every robot's status says why nothing is commanded (FleetOutputs.no_clock).
    """

    def __init__(self, node, outputs, stop_all):
        """
        Watch for ``node`` (an rclpy Node: its clock and logger).

        outputs : the node's FleetOutputs; stop_all : callable(wait) that stops every robot.
        """
        self._node = node
        self._outputs = outputs
        self._stop_all = stop_all
        self.parent_pid = os.getppid()
        self._started = time.monotonic()
        self._clock_warned = False
        self._parent_gone = False

    def check(self):
        """Stop when the starting process is gone; warn when /clock never came."""
        if self._parent_gone:
            return
        if parent_gone(self.parent_pid):
            self._parent_gone = True
            self._node.get_logger().error(f'the process that started this node (pid '
                                          f'{self.parent_pid}) is gone: stopping every robot '
                                          'and exiting')
            self._stop_all(wait=False)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        clock = self._node.get_clock()
        if (not self._clock_warned and clock.ros_time_is_active
                and clock.now().nanoseconds == 0
                and time.monotonic() - self._started > NO_CLOCK_WARN_AFTER):
            self._clock_warned = True
            reason = (f'use_sim_time is true and no /clock message has come in '
                      f'{NO_CLOCK_WARN_AFTER:.0f} s: nothing is commanded until one does')
            self._node.get_logger().warning(f'{reason} (is the simulator running? '
                                            'use_sim_time:=false on real robots)')
            self._outputs.no_clock(reason)


def parent_gone(parent_pid):
    """Whether the process ``parent_pid`` that started this one is gone (init started it: no)."""
    return parent_pid != 1 and os.getppid() != parent_pid


def watch_parent(name, period=WATCH_PERIOD):
    """
    Send this process SIGTERM once the process that started it is gone; return the thread.

    A daemon thread on wall time: the process's own SIGTERM handling then ends it cleanly
    (the simulator saves its ground truth, the demo stops the fleet). ``name`` is the
    process's, for the one line it prints.
    """
    parent = os.getppid()

    def watch():
        while not parent_gone(parent):
            time.sleep(period)
        os.kill(os.getpid(), signal.SIGTERM)
        try:  # the launch that read this process's output may have gone with its pipe
            print(f'{name}: the process that started it (pid {parent}) is gone: exiting',
                  file=sys.stderr, flush=True)
        except OSError:
            pass

    thread = threading.Thread(target=watch, name=f'{name} parent watch', daemon=True)
    thread.start()
    return thread
