"""
Walls only the laser shows, and late odometry and commands, with the controller in the loop.

A small discrete-time world without DDS: the simulator's World (orca_nav.sim.world) moves the
robots at SIM_DT; the controller gets odometry (stamped when it was measured) at ODOM_PERIOD
and 360-beam scans ray-cast from the true poses (the walls and the other robots as discs,
Gaussian range noise) at SCAN_PERIOD, half a control period out of phase with its ticks. The
controller gets no map: it learns the wall from the scans. Delays model a late odometry
(``odom_delay``: it arrives, correctly stamped, that much after it was measured) and a late
command (``cmd_delay``: it takes effect that much after the tick that computed it). Contact is
judged on the true radii.
"""

from dataclasses import replace

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs, RobotState
from orca_nav.control.navigation import NavigationConfig
from orca_nav.control.people import PeopleConfig
from orca_nav.control.scan_memory import ScanInput
from orca_nav.core.routes.grid import GridMap
from orca_nav.sim.maps import scenario_grid
from orca_nav.sim.processes import SAFETY_MARGIN
from orca_nav.sim.scenarios import load_scenario
from orca_nav.sim.world import Scanner, World
import pytest

from test_navigation import InlineExecutor  # noqa: I100 -- test/ is on sys.path

PERIOD = 0.1        # [s] control period
SIM_DT = 0.02       # [s] integration step (the simulator's 50 Hz)
ODOM_PERIOD = 0.05  # [s] odometry every 2.5 steps -> every 3rd step: 0.06 s (20 Hz nominal)
SCAN_PERIOD = 0.1   # [s] one scan per robot per control period
SCAN_PHASE = 0.04   # [s] scans are taken this long after a tick (before the next)
BEAMS = 360
RANGE_MIN, RANGE_MAX = 0.05, 6.0  # [m] the simulator's defaults
SEEDS = (0, 1, 2)
DRIVES = ('holonomic', 'differential')


def run_world(scenario, drive, *, seed=0, scan_noise=0.01, map_time=None, scans=True,
              odom_delay=0.0, cmd_delay=0.0, margin=SAFETY_MARGIN, knobs=None,
              trace=None):
    """
    Run the scenario to the end; return (arrived (N,), min gap, min wall gap, time) [m, s].

    map_time : [s] when the controller gets the scenario's map (the simulator's /map), or
    None for never. trace(t, poses, controller), if given, is called after every integration
    step.
    """
    s = scenario.with_drive(drive)
    n = len(s.robots)
    cfg = replace(FleetConfig.uniform(s.names, drive=drive, lookahead_distance=0.1),
                  radius=s.radii, max_speed=np.array([r.max_speed for r in s.robots]),
                  max_angular_speed=np.array([r.max_angular_speed for r in s.robots]),
                  pref_speed=np.array([r.max_speed for r in s.robots]), period=PERIOD,
                  safety_margin=margin, scan_enabled=scans, **(knobs or {}))
    ctrl = FleetController(cfg, NavigationConfig(), InlineExecutor())
    for i, goal in enumerate(s.goals):
        ctrl.set_goal(i, *goal)
    world = World(s, Scanner(BEAMS, RANGE_MIN, RANGE_MAX, scan_noise), seed=seed)
    pose = world.poses                # moved in place by the world
    applied = np.zeros((n, 3))        # command in effect [body vx, vy, wz]
    pending = []                      # (time it takes effect, command)
    odom_queue = []                   # (time it arrives, stamp, poses, twists)
    inputs = FleetInputs.empty(n)
    steps_per_tick = int(round(PERIOD / SIM_DT))
    next_odom = next_scan = 0.0
    next_scan = SCAN_PHASE
    new_scans = []
    k = 0
    while k * SIM_DT < s.timeout:
        t = k * SIM_DT
        # Sensors, as the simulator publishes them.
        if t >= next_odom - 1e-9:
            odom_queue.append((t + odom_delay, t, pose.copy(), applied.copy()))
            next_odom += ODOM_PERIOD
        while odom_queue and odom_queue[0][0] <= t + 1e-9:
            _, stamp, poses, twists = odom_queue.pop(0)
            for i in range(n):
                inputs.set_odometry(i, x=poses[i, 0], y=poses[i, 1], yaw=poses[i, 2],
                                    time=stamp, v_forward=twists[i, 0], v_left=twists[i, 1],
                                    yaw_rate=twists[i, 2])
        if scans and t >= next_scan - 1e-9:
            for i in range(n):
                new_scans.append(ScanInput(robot=i, ranges=world.scan_ranges(i),
                                           angle_min=-np.pi, angle_increment=2 * np.pi / BEAMS,
                                           range_min=RANGE_MIN, range_max=RANGE_MAX, time=t))
            next_scan += SCAN_PERIOD
        if map_time is not None and t >= map_time - 1e-9:
            ctrl.set_map(GridMap.from_occupancy(*scenario_grid(s)))
            map_time = None
        # The controller's tick.
        if k % steps_per_tick == 0:
            inputs.scans, new_scans = new_scans, []
            result = ctrl.step(inputs, t)
            if all(state == RobotState.REACHED for state in result.states):
                break
            pending.append((t + cmd_delay, result.commands.copy()))
        while pending and pending[0][0] <= t + 1e-9:
            applied = pending.pop(0)[1]
        world.step(applied, SIM_DT)
        if trace is not None:
            trace(t + SIM_DT, pose, ctrl)
        k += 1
    arrived = np.hypot(*(pose[:, :2] - s.goals).T) <= 0.1 + 1e-6
    return arrived, world.min_gap, world.min_wall_gap, k * SIM_DT


@pytest.mark.parametrize('drive', DRIVES)
@pytest.mark.parametrize('seed', SEEDS)
def test_a_wall_only_the_scans_show_is_never_touched(drive, seed):
    """Six robots swap across an oblique wall they only see: no disc overlaps it, all arrive."""
    arrived, min_gap, min_wall, t = run_world(load_scenario('oblique_wall'), drive, seed=seed)
    assert min_wall >= 0.0, f'{drive} seed {seed}: a disc overlaps the wall by {-min_wall:.3f} m'
    assert min_gap >= 0.0, f'{drive} seed {seed}: discs overlap by {-min_gap:.3f} m'
    assert arrived.all(), f'{drive} seed {seed}: {np.flatnonzero(~arrived)} not there in {t} s'


def turned_wall(degrees):
    """Return the oblique_wall scenario with its 2 m wall turned to ``degrees`` from x."""
    s = load_scenario('oblique_wall')
    a = np.radians(degrees)
    end = np.array([np.cos(a), np.sin(a)])
    return replace(s, segments=np.array([[-end, end]]))


@pytest.mark.parametrize('degrees,seed', [(75, 1), (75, 2), (150, 5)])
def test_differential_robots_pass_a_turned_wall_with_the_nodes_scan_defaults(degrees, seed):
    """
    The oblique wall turned, people tracked as the node does with scans: all arrive.

    Without a map the robots drive straight at their goals. Before, pieces of the wall seen
    past a robot were taken for people and went round (150 degrees: two robots short after
    90 s), and at 75 degrees three robots met on the wall's face, one whose goal lay straight
    behind it pressing the others against it: a deadlock of plain ORCA (three short).
    """
    arrived, min_gap, min_wall, t = run_world(turned_wall(degrees), 'differential', seed=seed,
                                              knobs={'people': PeopleConfig()})
    assert min_wall >= 0.0, f'a disc overlaps the wall by {-min_wall:.3f} m'
    assert min_gap >= 0.0, f'discs overlap by {-min_gap:.3f} m'
    assert arrived.all(), f'{np.flatnonzero(~arrived)} not there in {t} s'
    assert t < 45.0, f'all there only after {t} s'


@pytest.mark.parametrize('drive', DRIVES)
def test_late_odometry_and_commands_are_compensated(drive):
    """Odometry 0.2 s old, commands in effect 0.1 s late: 8 robots swap apart, all arrive."""
    arrived, min_gap, _, t = run_world(load_scenario('circle', robots=8), drive, scans=False,
                                       odom_delay=0.2, cmd_delay=0.1,
                                       knobs={'latency_compensation': True,
                                              'command_delay': 0.1})
    assert min_gap >= 0.02, f'{drive}: discs came within {min_gap:.3f} m'
    assert arrived.all(), f'{drive}: {np.flatnonzero(~arrived)} not there in {t} s'


@pytest.mark.parametrize('scenario,drive,map_time', [
    ('maze', 'holonomic', 4.0), ('two_rooms', 'differential', 12.0),
    ('office', 'differential', 1.0), ('office_mapfile', 'differential', 6.0)])
def test_robots_that_set_off_before_the_map_came_arrive(scenario, drive, map_time):
    """
    Goals before the map: robots drive straight, learn walls from the scans, then get routes.

    What they saw before the map stays in their scan memory with the map's walls on top (a
    wall's end seen at a grazing angle overhangs into the way round it), and they are off
    the routes planned when the map comes, some beside a door jamb that stands between them
    and their route: all must still arrive.
    """
    arrived, min_gap, min_wall, t = run_world(load_scenario(scenario), drive, map_time=map_time)
    assert min_wall >= 0.0, f'a disc overlaps a wall by {-min_wall:.3f} m'
    assert min_gap >= 0.0, f'discs overlap by {-min_gap:.3f} m'
    assert arrived.all(), f'{np.flatnonzero(~arrived)} not there in {t:.0f} s'
