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

Runs on ROS domain 84 with DDS kept on this machine (bench_node's processes, on this domain).
"""

import argparse
import os

from benchmarks import bench_node

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
    args = parser.parse_args()
    os.environ.update(ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    n = args.robots
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
