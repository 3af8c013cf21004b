"""
Walkers who do not give way, through a fleet: the ring swap with two 1 m/s walkers, swept.

The shipped scenario ``ring_two_walkers`` (six robots of 0.5 m/s swap through a ring while two
people cross it at 1 m/s, seen only in the laser scans) with the walkers' timing and the second
walker's line varied: the first walker sets off at 2, 3 or 4 s, the second 0, 1 or 2 s after
it, along y = 0.4 m or y = -0.3 m (18 variants per drive). The fleet controller runs in process,
built as the node builds it (its defaults, ``scan_enabled``, so people tracking is on), on
360-beam scans ray cast in the simulator's world (orca_nav.sim.world.World, the motion exact,
contact judged on the true discs), at the node's 10 Hz. ``test/test_node_world.py`` runs the
scenario itself over DDS.

Reported per drive: how many variants a robot overlapped a walker in, the smallest and the
median robot-walker gap [m] (negative: overlap), the smallest robot-robot gap, how many
variants every robot arrived in, and the mean time of those.

    python -m benchmarks.bench_walkers                     # both drives, 18 variants each
    python -m benchmarks.bench_walkers --drive differential --metrics-json w.json
"""

import argparse
import dataclasses
import itertools
import json
import time

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs, RobotState
from orca_nav.control.scan_memory import ScanInput
from orca_nav.sim.scenarios import load_scenario
from orca_nav.sim.world import Scanner, World

SCENARIO = 'ring_two_walkers'
PERIOD = 0.1          # [s] the node's control period
SUBSTEPS = 5          # contact checks per period
BEAMS = 360
RANGE_MIN, RANGE_MAX = 0.05, 8.0  # [m]
FIRST_STARTS = (2.0, 3.0, 4.0)    # [s] when the first walker sets off
SECOND_DELAYS = (0.0, 1.0, 2.0)   # [s] how much later the second one does
SECOND_LINES = (0.4, -0.3)        # [m] the second walker's line, y
TIMEOUT = 60.0        # [s] simulated


def variant(drive, first_start, second_delay, second_y):
    """Return ring_two_walkers in this drive, its walkers timed and placed as given."""
    s = load_scenario(SCENARIO).with_drive(drive)
    first, second = (r for r in s.robots if r.walker)
    first = dataclasses.replace(first, start_time=first_start)
    second = dataclasses.replace(second, start_time=first_start + second_delay,
                                 start=(-6.0, second_y, 0.0),
                                 waypoints=((-6.0, second_y), (6.0, second_y)))
    return dataclasses.replace(s, robots=[r for r in s.robots if not r.walker] + [first, second])


def run(scenario, drive):
    """Run one variant to the end; return its record (gaps [m], arrival, time [s])."""
    robots = np.flatnonzero(~scenario.walkers)
    rows = [scenario.robots[i] for i in robots]
    config = FleetConfig.from_params([r.name for r in rows], radius=rows[0].radius,
                                     max_speed=rows[0].max_speed,
                                     max_angular_speed=rows[0].max_angular_speed, drive=drive,
                                     scan_enabled=True)
    ctrl = FleetController(config)
    for k, robot in enumerate(rows):
        ctrl.set_goal(k, *robot.goal)
    world = World(scenario, Scanner(BEAMS, RANGE_MIN, RANGE_MAX))
    inputs = FleetInputs.empty(len(rows))
    twists = np.zeros((len(scenario.robots), 3))
    arrived = False
    while world.time < TIMEOUT:
        t, pose = world.time, world.poses
        for k, i in enumerate(robots):
            inputs.set_odometry(k, x=pose[i, 0], y=pose[i, 1], yaw=pose[i, 2], time=t,
                                v_forward=twists[i, 0], v_left=twists[i, 1],
                                yaw_rate=twists[i, 2])
            inputs.scans.append(ScanInput(k, world.scan_ranges(i), -np.pi,
                                          2.0 * np.pi / BEAMS, RANGE_MIN, RANGE_MAX, t))
        result = ctrl.step(inputs, t)
        inputs.scans = []
        if all(state == RobotState.REACHED for state in result.states):
            arrived = True
            break
        commands = np.zeros_like(twists)
        commands[robots] = result.commands
        twists = world.drive(commands, PERIOD)
        world.advance(PERIOD, SUBSTEPS)
    return {'walker_gap': float(world.min_walker_gap), 'robot_gap': float(world.min_gap),
            'arrived': arrived, 'time': float(world.time)}


def sweep(drive):
    """Run every variant in this drive; return (records, summary)."""
    records = []
    for first, delay, y in itertools.product(FIRST_STARTS, SECOND_DELAYS, SECOND_LINES):
        record = run(variant(drive, first, delay, y), drive)
        records.append({'first_start': first, 'second_delay': delay, 'second_y': y, **record})
    gaps = np.array([r['walker_gap'] for r in records])
    times = [r['time'] for r in records if r['arrived']]
    summary = {'drive': drive, 'variants': len(records), 'overlaps': int((gaps < 0.0).sum()),
               'worst_walker_gap': float(gaps.min()), 'median_walker_gap': float(np.median(gaps)),
               'worst_robot_gap': float(min(r['robot_gap'] for r in records)),
               'all_arrived': len(times), 'mean_time': float(np.mean(times)) if times else None}
    return records, summary


def main(argv=None):
    """Run the sweep and print a line per drive (and the records with --metrics-json)."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--drive', choices=('holonomic', 'differential', 'both'),
                        default='both')
    parser.add_argument('--metrics-json', help='write every record and the summaries here')
    args = parser.parse_args(argv)
    drives = ('holonomic', 'differential') if args.drive == 'both' else (args.drive,)
    print(f'{SCENARIO}: {len(FIRST_STARTS) * len(SECOND_DELAYS) * len(SECOND_LINES)} '
          'variants per drive (walker timing and line), node defaults + scan_enabled')
    print('drive          overlaps  worst gap  median gap  robot gap  arrived  mean time  wall')
    out = {}
    for drive in drives:
        start = time.perf_counter()
        records, s = sweep(drive)
        wall = time.perf_counter() - start
        out[drive] = {'summary': s, 'records': records, 'wall_time_s': wall}
        mean = '-' if s['mean_time'] is None else f"{s['mean_time']:.1f} s"
        print(f"{drive:14s} {s['overlaps']:4d}/{s['variants']:<4d} {s['worst_walker_gap']:+9.3f}"
              f"  {s['median_walker_gap']:+9.3f}  {s['worst_robot_gap']:+9.3f}"
              f"  {s['all_arrived']:3d}/{s['variants']:<3d} {mean:>9s}  {wall:4.0f} s")
    if args.metrics_json:
        with open(args.metrics_json, 'w') as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == '__main__':
    main()
