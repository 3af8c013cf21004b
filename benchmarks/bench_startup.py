"""
Benchmark: how long the orca_nav node takes from its start to driving the robots.

Run from the repository root (``make`` exports NUMBA_CACHE_DIR; run it the same way the
node is run, so that "warm" means the cache that node finds)::

    python -m benchmarks.bench_startup [--robots 4 1000] [--cache cold warm] [--hog]
    python -m benchmarks.bench_startup --install .colcon/install   # the colcon install's node
    python -m benchmarks.bench_startup --robots 4 --cache cold --ctrl-c 5

Each run starts the node as users do (``python -m orca_nav.node`` from the source tree, or
the console script ``orca_nav_node`` of a colcon install with that install's Python path)
beside a load process (benchmarks.bench_node's), started a few seconds before, that
publishes every robot's odometry and a far goal, re-sent every second, as a fleet that is
already running when the node starts (the load publishes once it has found the node's
subscriptions). This process samples the cmd_vel of every robot (every K-th of a large
fleet) over real DDS on loopback and prints, from the node's start: the first command heard
(zero commands included: the node is built and its publishers matched), the first driving
(non-zero) command of any sampled robot, the moment every sampled robot had one, and the
moment from which every sampled robot was commanded at the node's rate (at least
``RATE_SHARE`` of its periods in each second after, watched for ``HOLD`` seconds), and when
the node said that every robot's cancel, plan, priority, status and route topics were made
(``all_topics_s``: a fleet of over 100 robots gets them after its first commands).
``--cache cold`` gives the node a new, empty NUMBA_CACHE_DIR (a fresh clone, a new install,
an edit); ``warm`` the environment as it is (after ``make``'s set-up, or the colcon build,
which fill the cache). ``--hog`` runs a
busy loop of one core beside it. ``--ctrl-c S`` sends SIGINT S seconds after the start and
prints how long the node took to exit, and its exit code. ``--log`` prints the node's log
after each run, every line with the seconds since the node's start.

Targets: first driving command within 5 s (4 robots) and 15 s (1000 robots) from
the colcon install after its build; a 1000-robot node started on a fresh clone commands
every sampled robot at its rate within 20 s.

Everything runs on ROS domain 86 with DDS kept on this machine.
"""

import argparse
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

DOMAIN_ID = 86
NODE_RATE = 10.0         # [Hz]
RATE_SHARE = 0.8         # of the node's periods a robot must be commanded in, each second
SAMPLED = 20             # robots sampled at most (every K-th of the fleet)
TIMEOUT = 240.0          # [s] a run gives up
# [s] watched at the node's rate before a run ends: a fleet of over 100 robots gets its
# cancel, plan, priority, status and route topics after the first commands, meanwhile.
HOLD = 15.0
LOAD_HEAD_START = 4.0    # [s] the load runs before the node starts (imports, publishers)
HOG = [sys.executable, '-c', 'while 1: pass']
# Per fleet size: odometry rate per robot [Hz] and extra node parameters (as make bench's
# thousand-robot run: odometry at 3 Hz, so the node's odometry timeout is 1 s).
LOADS = {4: (20.0, []), 1000: (3.0, ['odom_timeout:=1.0'])}


def node_command(n, install, params):
    """Return (argv, environment) of the node commanding n robots (r000...)."""
    from benchmarks import bench_node
    names = bench_node.robot_names(n)
    args = ['--ros-args', '-p', 'robots:=[' + ','.join(names) + ']', '-p',
            f'rate:={NODE_RATE}'] + [a for p in params for a in ('-p', p)]
    env = bench_node.env()
    env['ROS_DOMAIN_ID'] = str(DOMAIN_ID)
    if install is None:
        return [sys.executable, '-m', 'orca_nav.node'] + args, env
    prefix = os.path.join(os.path.abspath(install), 'orca_nav')
    lib = os.path.join(prefix, 'lib', f'python{sys.version_info[0]}.{sys.version_info[1]}',
                       'site-packages')
    env['PYTHONPATH'] = os.pathsep.join(
        [lib] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p])
    env['AMENT_PREFIX_PATH'] = os.pathsep.join(
        [prefix] + [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p])
    return [os.path.join(prefix, 'lib', 'orca_nav', 'orca_nav_node')] + args, env


def run(n, cache, install=None, hog=False, ctrl_c=None, timeout=TIMEOUT, show_log=False):
    """Start the node and its load; return the start-up figures (a dict)."""
    import rclpy
    from geometry_msgs.msg import Twist
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from benchmarks import bench_node
    odom_rate, params = LOADS.get(n, (20.0, []))
    argv, env = node_command(n, install, params)
    cold_dir = None
    if cache == 'cold':
        cold_dir = tempfile.mkdtemp(prefix='orca_nav_cold_cache_')
        env['NUMBA_CACHE_DIR'] = cold_dir
    names = bench_node.robot_names(n)
    every = max(1, n // SAMPLED)
    sampled = names[::every]
    ctx = Context()
    rclpy.init(context=ctx, domain_id=DOMAIN_ID)
    probe = rclpy.create_node('startup_probe', context=ctx)
    executor = SingleThreadedExecutor(context=ctx)
    executor.add_node(probe)
    heard = {r: [] for r in sampled}  # (monotonic time, driving) per command received
    qos = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)
    for r in sampled:
        probe.create_subscription(
            Twist, f'/{r}/cmd_vel',
            lambda m, r=r: heard[r].append((time.monotonic(),
                                            abs(m.linear.x) + abs(m.linear.y) > 1e-6)), qos)
    hog_proc = subprocess.Popen(HOG) if hog else None
    node_log = tempfile.TemporaryFile('w+')
    load_env = dict(bench_node.env(), ROS_DOMAIN_ID=str(DOMAIN_ID))
    # The fleet runs already: the load has started and waits for the node's subscriptions.
    load = subprocess.Popen(
        [sys.executable, '-m', 'benchmarks.bench_node', '--load', str(n), '--goals', str(n),
         '--duration', str(timeout + LOAD_HEAD_START), '--odom-rate', str(odom_rate),
         '--resend-goals', '1.0'],
        env=load_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(LOAD_HEAD_START)
    start = time.monotonic()
    start_wall = time.time()
    node = subprocess.Popen(argv, env=env, stdout=node_log, stderr=subprocess.STDOUT,
                            cwd=tempfile.gettempdir(), text=True)
    result = {'robots': n, 'cache': cache, 'hog': hog, 'node': 'install' if install else
              'source', 'sampled': len(sampled)}
    try:
        while time.monotonic() - start < timeout and node.poll() is None:
            executor.spin_once(timeout_sec=0.05)
            if ctrl_c is not None and time.monotonic() - start >= ctrl_c:
                node.send_signal(signal.SIGINT)
                sent = time.monotonic()
                try:
                    result['exit_code'] = node.wait(timeout=30.0)
                    result['exit_s'] = round(time.monotonic() - sent, 3)
                except subprocess.TimeoutExpired:
                    result['exit_s'] = math.inf
                break
            at_rate = rate_since(heard, start)
            if at_rate is not None and time.monotonic() - start > at_rate + HOLD:
                break  # HOLD seconds at the rate seen
    finally:
        for proc in (load, hog_proc):
            if proc is not None:
                proc.kill()
                proc.wait()
        if node.poll() is None:
            node.send_signal(signal.SIGINT)
            try:
                node.wait(timeout=30.0)
            except subprocess.TimeoutExpired:
                node.kill()
                node.wait()
        executor.shutdown()
        probe.destroy_node()
        rclpy.try_shutdown(context=ctx)
    node_log.seek(0)
    log = node_log.read()
    node_log.close()
    if show_log:  # each line with the seconds since the node's start, from its stamp
        for line in log.splitlines():
            stamp = re.search(r'\] \[([0-9]+\.[0-9]+)\]', line)
            since = f'{float(stamp.group(1)) - start_wall:7.2f}' if stamp else ' ' * 7
            print(since, line[:160], file=sys.stderr)
    firsts = [next((t for t, driving in heard[r] if driving), None) for r in sampled]
    known = [t - start for t in firsts if t is not None]
    heard_any = [cmds[0][0] - start for cmds in heard.values() if cmds]
    result.update(
        first_command_s=round(min(heard_any), 2) if heard_any else None,
        first_driving_s=round(min(known), 2) if known else None,
        all_driving_s=(round(max(known), 2) if len(known) == len(firsts) else None),
        at_rate_s=_round(rate_since(heard, start)),
        compiled=_compiled(log), said_compiling='compiling the numba kernels' in log,
        all_topics_s=_logged_at(log, 'route topics of all', start_wall),
        numba_cache_dir=env.get('NUMBA_CACHE_DIR', '(unset: beside the modules)'))
    if cold_dir is not None:
        subprocess.run(['rm', '-rf', cold_dir])
    return result


def rate_since(heard, start):
    """
    Return when [s after start] every sampled robot was driven at the node's rate from on.

    From the moment every sampled robot has had a driving command, each whole second that
    follows (up to the last command heard) must hold at least RATE_SHARE of the node's
    periods for every robot: the end of the last second that did not, or that moment; None
    before two such seconds have passed.
    """
    firsts = [next((t for t, driving in cmds if driving), None) for cmds in heard.values()]
    if not firsts or any(t is None for t in firsts):
        return None
    t0 = max(firsts)
    end = min(cmds[-1][0] for cmds in heard.values())
    if end - t0 < 2.0:
        return None
    need = RATE_SHARE * NODE_RATE
    since = t0
    for k in range(int(end - t0)):
        lo, hi = t0 + k, t0 + k + 1.0
        if any(sum(lo <= t < hi for t, _ in cmds) < need for cmds in heard.values()):
            since = hi  # a slow second after every robot was driven: not at its rate yet
    return since - start if end - since >= 2.0 else None


def _round(value):
    return None if value is None else round(value, 2)


def _compiled(log):
    """Return the compile time the node logged [s], or None (it said nothing: a warm cache)."""
    for line in log.splitlines():
        if 'numba kernels compiled in' in line:
            return float(line.split('compiled in')[1].split('s')[0])
    return None


def _logged_at(log, text, start_wall):
    """Return when [s after start_wall] the node logged a line with text, or None."""
    for line in log.splitlines():
        stamp = re.search(r'\] \[([0-9]+\.[0-9]+)\]', line)
        if text in line and stamp:
            return round(float(stamp.group(1)) - start_wall, 2)
    return None


def main():
    """Run each configuration and print one line of figures per run."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--robots', type=int, nargs='+', default=[4, 1000])
    parser.add_argument('--cache', nargs='+', default=['cold', 'warm'],
                        choices=['cold', 'warm'])
    parser.add_argument('--hog', action='store_true', help='a busy loop on one core beside')
    parser.add_argument('--install', metavar='BASE',
                        help="run the colcon install's node (e.g. .colcon/install)")
    parser.add_argument('--ctrl-c', type=float, metavar='S',
                        help='send SIGINT S seconds after the start; print the exit')
    parser.add_argument('--repeats', type=int, default=1)
    parser.add_argument('--timeout', type=float, default=TIMEOUT)
    parser.add_argument('--log', action='store_true',
                        help="print the node's log, with seconds since its start")
    args = parser.parse_args()
    os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    print(f'orca_nav start-up benchmark: node rate {NODE_RATE:g} Hz, {os.cpu_count()} CPUs, '
          f'NUMBA_CACHE_DIR={os.environ.get("NUMBA_CACHE_DIR", "(unset)")}', flush=True)
    for n in args.robots:
        for cache in args.cache:
            for _ in range(args.repeats):
                r = run(n, cache, args.install, args.hog, args.ctrl_c, args.timeout, args.log)
                print(json.dumps(r), flush=True)


if __name__ == '__main__':
    main()
