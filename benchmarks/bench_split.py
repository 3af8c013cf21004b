"""
Benchmark: the cost of observing, for a fleet split over several nodes (launch ``nodes:=K``).

Run from the repository root::

    python -m benchmarks.bench_split [--robots 250] [--observed 0 1 3] [--odom-rate 10]

A node of a fleet split over K nodes commands N robots and observes the other (K - 1) N. This
runs one node commanding N robots (``python -m orca_nav.node``, rate 10 Hz, default parameters,
``observed_reciprocate`` true) while it observes 0, N and 3 N other robots (``--observed``:
multiples of N; 3 N is one node of ``nodes:=4``). The load process of bench_node
(``bench_node.run_load``) publishes the odometry of all of them (the commanded ones first, on
one 1.5 m grid, so the observed robots next to the commanded share are their neighbours, as in
a split fleet) and far goals for the commanded robots only. Reported over the measurement
window (``bench_node.bench_fleet``): the node's CPU share and CPU time per odometry message
sent to it, tick duration p50 / p99 / max, missed periods, the smallest share of robots on fresh
odometry at a tick, and the extra CPU per observed robot against the run observing none.

``--breakdown`` measures where the tick's time goes instead, in this one process (no load
process, no timer): the odometry of every robot is published, then the node's tick is called;
reported are the median tick and the part of it that takes and reads the odometry.

Runs on ROS domain 84 with DDS kept on this machine (bench_node's processes, on this domain).
"""

import argparse
import os
import time

from benchmarks import bench_node
import numpy as np

DOMAIN_ID = 84


def load_average():
    """Return the 1-minute load average of this machine (Linux), or nan."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float('nan')


def bench_observing(n, observed, warmup, measure, odom_rate, executor='events'):
    """Run one node commanding n robots and observing ``observed`` more; return the results."""
    bench_node.DOMAIN_ID = DOMAIN_ID  # bench_node's processes and probe read it when started
    before = load_average()
    r = bench_node.bench_fleet(n, warmup, measure, executor,
                               params=('observed_reciprocate:=true',), observed=observed,
                               odom_rate=odom_rate)
    r.update(observed=observed, load_before=before, load_after=load_average(),
             odom_per_s=r['odom_rate_per_robot'] * (n + observed))
    return r


def tick_breakdown(n, observed, ticks=30):
    """
    Time the node's tick in this process: (tick ms, odometry intake ms), medians.

    The node commands n robots with far goals and observes ``observed`` more; before each tick
    every robot's odometry is published once (grid positions as bench_node's load).
    """
    import rclpy
    from rclpy.context import Context
    from rclpy.parameter import Parameter
    from nav_msgs.msg import Odometry
    from orca_nav.ros.node import OrcaNavNode

    names = bench_node.robot_names(n + observed)
    ctx = Context()
    rclpy.init(context=ctx, domain_id=DOMAIN_ID)
    params = [Parameter('robots', value=names[:n]), Parameter('publish_markers', value=False)]
    if observed:
        params += [Parameter('observed_robots', value=names[n:]),
                   Parameter('observed_reciprocate', value=True)]
    node = OrcaNavNode(context=ctx, parameter_overrides=params)
    load = rclpy.create_node('odom_load', context=ctx)
    try:
        node.destroy_timer(node._timer)  # the benchmark calls the tick itself
        pubs = [load.create_publisher(Odometry, f'/{r}/odom', 10) for r in names]
        side = max(1, int(round(len(names) ** 0.5)))
        msgs = []
        for i in range(len(names)):
            m = Odometry()
            m.header.frame_id = 'map'
            m.pose.pose.position.x = bench_node.GRID_SPACING * (i % side)
            m.pose.pose.position.y = bench_node.GRID_SPACING * (i // side)
            m.pose.pose.orientation.w = 1.0
            msgs.append(m)
        for i in range(n):
            node.controller.set_goal(i, msgs[i].pose.pose.position.x + 1000.0,
                                     msgs[i].pose.pose.position.y, 0.0)
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline and not all(p.get_subscription_count() for p in pubs):
            time.sleep(0.05)
        intake = []
        update = node.odometry.update

        def timed_update():
            start = time.perf_counter()
            try:
                return update()
            finally:
                intake.append(time.perf_counter() - start)
        node.odometry.update = timed_update
        durations = []
        for _ in range(ticks + 5):
            stamp = node.get_clock().now().to_msg()
            for m, pub in zip(msgs, pubs):
                m.header.stamp = stamp
                pub.publish(m)
            time.sleep(0.1)
            start = time.perf_counter()
            node._tick()
            durations.append(time.perf_counter() - start)
        return 1e3 * np.median(durations[5:]), 1e3 * np.median(intake[5:])
    finally:
        node.destroy_node()
        load.destroy_node()
        rclpy.try_shutdown(context=ctx)


def main():
    """Run the node observing each number of robots and print one table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[1])
    parser.add_argument('--robots', type=int, default=250, help='robots the node commands (N)')
    parser.add_argument('--observed', type=float, nargs='+', default=[0, 1, 3],
                        help='robots it observes, in multiples of N')
    parser.add_argument('--odom-rate', type=float, default=10.0,
                        help='[Hz] odometry of every robot')
    parser.add_argument('--warmup', type=float, default=4.0, help='[s] before measuring')
    parser.add_argument('--measure', type=float, default=12.0, help='[s] measurement window')
    parser.add_argument('--repeats', type=int, default=1, help='runs per configuration')
    parser.add_argument('--breakdown', action='store_true',
                        help="time the node's tick and its odometry intake in this process")
    args = parser.parse_args()
    os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    n = args.robots
    if args.breakdown:
        print(f'orca_nav tick breakdown: node commanding {n} robots, in one process, '
              f'{os.cpu_count()} CPUs, load average {load_average():.2f}')
        print(f'{"observed":>8} {"tick ms":>8} {"odometry intake ms":>18} {"us/robot":>8}')
        for multiple in args.observed:
            observed = int(round(multiple * n))
            tick, intake = tick_breakdown(n, observed)
            print(f'{observed:>8} {tick:>8.2f} {intake:>18.2f} '
                  f'{1e3 * intake / (n + observed):>8.1f}', flush=True)
        return
    print(f'orca_nav cost of observing: node commanding {n} robots, rate '
          f'{bench_node.NODE_RATE:g} Hz, odometry {args.odom_rate:g} Hz per robot, '
          f'{args.measure:g} s window, {os.cpu_count()} CPUs')
    print(f'{"observed":>8} {"odom/s":>7} {"Hz/robot":>8} {"cpu":>5} {"us/odom":>7} {"p50 ms":>7} '
          f'{"p99 ms":>7} {"max ms":>7} {"missed":>6} {"fresh":>5} {"delay ms":>8} '
          f'{"+cpu per observed robot":>23} {"load avg":>11}')
    baseline = None
    for multiple in args.observed:
        for _ in range(args.repeats):
            observed = int(round(multiple * n))
            r = bench_observing(n, observed, args.warmup, args.measure, args.odom_rate)
            if observed == 0 and baseline is None:
                baseline = r['node_cpu_share']
            extra = ('' if not observed or baseline is None else
                     f'{1e3 * (r["node_cpu_share"] - baseline) / observed:.3f} ms/s')
            print(f'{observed:>8} {r["odom_per_s"]:>7.0f} {r["odom_rate_per_robot"]:>8.1f} '
                  f'{r["node_cpu_share"]:>5.2f} '
                  f'{r["node_cpu_us_per_odom"]:>7.1f} {r["tick_p50_ms"]:>7.2f} '
                  f'{r["tick_p99_ms"]:>7.2f} {r["tick_max_ms"]:>7.2f} '
                  f'{r["missed_periods"]:>6} {r["fresh_share_min"]:>5.2f} '
                  f'{r["odom_delay_max_ms"]:>8.1f} {extra:>23} '
                  f'{r["load_before"]:>5.2f}/{r["load_after"]:<5.2f}', flush=True)


if __name__ == '__main__':
    main()
