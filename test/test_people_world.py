"""
People only the scans show, with the controller in the loop (no DDS).

The ring_walker scenario in a lock-stepped world (orca_nav.sim.world.World): six robots swap
through a ring while a walker the controller is not told about crosses it at 0.5 m/s. The
scans (360 beams, 0.01 m noise, ray-cast from the true poses) show the walker as a disc.
Without tracking the robots avoid where the walker was and touch it; with the people tracker
they avoid where it is going.
"""

from dataclasses import replace

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs, RobotState
from orca_nav.control.navigation import NavigationConfig
from orca_nav.control.people import PeopleConfig
from orca_nav.control.scan_memory import ScanInput
from orca_nav.sim.scenarios import load_scenario, walker_pose
from orca_nav.sim.world import Scanner, World
import pytest

from test_navigation import InlineExecutor  # noqa: I100 -- test/ is on sys.path

DT = 0.02       # [s] integration step
BEAMS = 360


def run_walker_world(name, drive, track, seed=0, timeout=60.0, goal_time=0.0, people=None,
                     errors=None):
    """
    Return (smallest robot-walker gap between discs [m], robots arrived, moving tracks seen).

    The robots get their goals at ``goal_time`` [s] (the walkers keep their own timetable);
    ``people`` is the PeopleConfig when tracking (default: the defaults). ``errors``, a list,
    gets (position error [m], velocity error [m/s]) of every moving track at every tick against
    the walker nearest to it (tracks farther than 1 m from every walker count as ghosts: NaN).
    """
    s = load_scenario(name).with_drive(drive)
    walkers = s.walkers
    robots = np.flatnonzero(~walkers)
    n = len(robots)
    rows = [s.robots[i] for i in robots]
    cfg = replace(
        FleetConfig.uniform([r.name for r in rows], drive=drive, lookahead_distance=0.1),
        radius=s.radii[robots], max_speed=np.array([r.max_speed for r in rows]),
        max_angular_speed=np.array([r.max_angular_speed for r in rows]),
        pref_speed=np.array([r.max_speed for r in rows]), period=0.1, safety_margin=0.05,
        scan_enabled=True, latency_compensation=False,
        people=(people or PeopleConfig()) if track else None)
    ctrl = FleetController(cfg, NavigationConfig(), InlineExecutor())
    world = World(s, Scanner(BEAMS, 0.05, 6.0, noise=0.01), seed=seed)
    pose = world.poses   # moved in place by the world
    applied = np.zeros((n, 3))
    inputs = FleetInputs.empty(n)
    seen, k = 0, 0
    result = None
    while k * DT < timeout:
        t = k * DT
        if k % 3 == 0:  # odometry every 0.06 s
            for j, i in enumerate(robots):
                inputs.set_odometry(j, x=pose[i, 0], y=pose[i, 1], yaw=pose[i, 2], time=t,
                                    v_forward=applied[j, 0], v_left=applied[j, 1],
                                    yaw_rate=applied[j, 2])
        if k % 5 == 2:  # scans every 0.1 s, between the ticks
            for j, i in enumerate(robots):
                inputs.scans.append(ScanInput(j, world.scan_ranges(i), -np.pi,
                                              2.0 * np.pi / BEAMS, 0.05, 6.0, t))
        if k * DT >= goal_time and not ctrl.has_goal.any():
            for j, robot in enumerate(rows):
                ctrl.set_goal(j, *robot.goal)
        if k % 5 == 0:  # the controller's tick, 10 Hz
            result = ctrl.step(inputs, t)
            inputs.scans = []
            applied = result.commands.copy()
            seen = max(seen, len(result.moving))
            if errors is not None:
                errors.extend(_track_errors(s, result.moving, t))
            if ctrl.has_goal.any() and all(state == RobotState.REACHED
                                           for state in result.states):
                break
        twists = np.zeros((len(pose), 3))
        twists[robots] = applied
        world.step(twists, DT)   # the walkers walk their paths on the world's clock
        k += 1
    arrived = int((np.hypot(*(pose[robots, :2] - s.goals[robots]).T) <= 0.1 + 1e-6).sum())
    return world.min_walker_gap, arrived, seen


def _track_errors(scenario, moving, t, dt=0.01):
    """(position error, velocity error) of each moving track against the nearest walker."""
    truth = [(np.array(walker_pose(scenario.robots[w], t)[:2]),
              (np.array(walker_pose(scenario.robots[w], t + dt)[:2])
               - np.array(walker_pose(scenario.robots[w], t - dt)[:2])) / (2 * dt))
             for w in np.flatnonzero(scenario.walkers)]
    out = []
    for p, v in zip(moving.position, moving.velocity):
        d = [np.hypot(*(p - q)) for q, _ in truth]
        k = int(np.argmin(d))
        out.append((d[k], np.hypot(*(v - truth[k][1]))) if d[k] <= 1.0 else (np.nan, np.nan))
    return out


def test_a_walker_only_the_scans_show_is_touched_without_tracking_and_not_with_it():
    """Holonomic ring: without the tracker a robot overlaps the walker; with it none does."""
    blind, _, _ = run_walker_world('ring_walker', 'holonomic', track=False)
    gap, arrived, seen = run_walker_world('ring_walker', 'holonomic', track=True)
    assert blind < 0.0          # the scenario is a real test: scans alone are not enough
    assert seen >= 1            # the walker became a moving track
    assert gap > 0.0 and arrived == 6


GOAL_TIMES = np.arange(0.0, 6.01, 0.5)  # [s] into the walker's walk


@pytest.mark.slow
@pytest.mark.parametrize('goal_time', GOAL_TIMES)
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_the_walker_is_avoided_whenever_the_robots_set_off(drive, goal_time):
    """Goals sent 0 to 6 s into the walker's walk: it meets the crowd at every stage."""
    gap, arrived, seen = run_walker_world('ring_walker', drive, track=True, goal_time=goal_time)
    assert seen >= 1 and arrived == 6, f'goals at {goal_time} s: {arrived}/6 arrived'
    assert gap > 0.0, f'goals at {goal_time} s: overlap {-gap:.3f} m'


@pytest.mark.slow
@pytest.mark.parametrize('name', ['ring_walker', 'people'])
def test_tracks_follow_the_walkers(name):
    """Moving tracks lie on the walkers and move with them; no ghost track moves."""
    errors = []
    _, arrived, seen = run_walker_world(name, 'holonomic', track=True, errors=errors)
    e = np.array(errors)
    assert seen >= 1 and len(e)
    assert not np.isnan(e).any(), f'{np.isnan(e[:, 0]).sum()} ticks of a ghost track'
    position, velocity = np.sqrt((e ** 2).mean(axis=0))
    print(f'{name}: {len(e)} track-ticks, RMS position error {position:.3f} m, '
          f'RMS velocity error {velocity:.3f} m/s, 95th percentile '
          f'{np.percentile(e[:, 0], 95):.3f} m / {np.percentile(e[:, 1], 95):.3f} m/s')
    assert position < 0.1 and velocity < 0.2
