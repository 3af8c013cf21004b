"""
Every shipped scenario, both drives, with the fleet controller in the loop (no DDS).

The controller gets the map the simulator would publish (orca_nav.sim.maps.scenario_grid) and
plans routes synchronously; the robots follow their commands exactly (the simulator's
kinematics) for one control period at a time. Contact is judged on the true radii against the
scenario's own geometry, while the controller plans with the demo's safety margin, as in
``python -m orca_nav.demo``. The same scenarios run end to end over DDS in test_demo.py.
"""

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs, RobotState
from orca_nav.control.navigation import NavigationConfig
from orca_nav.core.grid import GridMap
from orca_nav.sim.maps import scenario_grid
from orca_nav.sim.node import integrate
from orca_nav.sim.processes import SAFETY_MARGIN
from orca_nav.sim.scenarios import available_scenarios, CONTACT_TOLERANCE, load_scenario
import pytest

from test_navigation import InlineExecutor  # noqa: I100 -- test/ is on sys.path

PERIOD = 0.1       # [s] control period (the node's default rate)
SUBSTEPS = 5       # contact checks per period
# Scenarios where a straight line to the goal is blocked: they need routes.
ROUTED = ('maze', 'office', 'office_mapfile', 'shelf', 'two_rooms', 'u_pocket', 'warehouse')
QUICK = ('shelf', 'two_rooms', 'u_pocket')


def run_world(scenario, drive):
    """Drive the scenario to the end; return (arrived (N,), min gap, min wall gap, time)."""
    s = scenario.with_drive(drive)
    n = len(s.robots)
    data, width, height, resolution, origin = scenario_grid(s)
    grid = GridMap.from_occupancy(data, width, height, resolution, origin)
    cfg = FleetConfig(names=tuple(s.names), n_controlled=n, radius=s.radii,
                      max_speed=np.array([r.max_speed for r in s.robots]),
                      max_angular_speed=np.array([r.max_angular_speed for r in s.robots]),
                      pref_speed=np.array([r.max_speed for r in s.robots]),
                      differential=np.full(n, drive == 'differential'),
                      lookahead=np.full(n, 0.1 if drive == 'differential' else 0.0),
                      odom_offset=np.zeros((n, 3)), period=PERIOD, safety_margin=SAFETY_MARGIN)
    ctrl = FleetController(cfg, NavigationConfig(), InlineExecutor())
    ctrl.set_map(grid)
    for i, goal in enumerate(s.goals):
        ctrl.set_goal(i, *goal)
    pose = s.starts.copy()
    inputs = FleetInputs.empty(n)
    cmd = np.zeros((n, 3))
    min_gap = min_wall = np.inf
    iu, ju = np.triu_indices(n, 1)
    t = 0.0
    while t < s.timeout:
        for i in range(n):
            inputs.set_odometry(i, x=pose[i, 0], y=pose[i, 1], yaw=pose[i, 2], time=t,
                                v_forward=cmd[i, 0], v_left=cmd[i, 1], yaw_rate=cmd[i, 2])
        result = ctrl.step(inputs, t)
        cmd = result.commands
        if all(state == RobotState.REACHED for state in result.states):
            break
        for _ in range(SUBSTEPS):
            for i in range(n):
                pose[i] = integrate(pose[i], *cmd[i], PERIOD / SUBSTEPS)
            d = np.hypot(*(pose[iu, :2] - pose[ju, :2]).T) - s.radii[iu] - s.radii[ju]
            min_gap = min(min_gap, d.min()) if n > 1 else min_gap
            min_wall = min(min_wall, (s.obstacle_distance(pose[:, :2]) - s.radii).min())
        t += PERIOD
    arrived = np.hypot(*(pose[:, :2] - s.goals).T) <= 0.1 + 1e-6
    return arrived, min_gap, min_wall, t


CASES = [pytest.param(name, drive, marks=() if name in QUICK else pytest.mark.slow)
         for name in available_scenarios() for drive in ('holonomic', 'differential')]


@pytest.mark.parametrize('name, drive', CASES)
def test_every_robot_arrives_without_contact(name, drive):
    """All robots reach their goals; no two discs and no disc and wall overlap."""
    arrived, min_gap, min_wall, t = run_world(load_scenario(name), drive)
    assert arrived.all(), f'{name} {drive}: {np.flatnonzero(~arrived)} did not arrive in {t} s'
    assert min_gap > -CONTACT_TOLERANCE, f'{name} {drive}: robots overlap by {-min_gap:.3f} m'
    assert min_wall > -CONTACT_TOLERANCE, f'{name} {drive}: a wall overlap of {-min_wall:.3f} m'


def test_without_routes_the_shelf_blocks_every_robot():
    """The same shelf scene with no map: robots drive straight and none arrives (the need)."""
    s = load_scenario('shelf')
    n = len(s.robots)
    ctrl = FleetController(FleetConfig.uniform(s.names, radius=0.25), NavigationConfig(),
                           InlineExecutor())
    for i, goal in enumerate(s.goals):
        ctrl.set_goal(i, *goal)
    pose, inputs = s.starts.copy(), FleetInputs.empty(n)
    for k in range(300):
        for i in range(n):
            inputs.set_odometry(i, x=pose[i, 0], y=pose[i, 1], yaw=pose[i, 2], time=k * PERIOD)
        cmd = ctrl.step(inputs, k * PERIOD).commands
        step = np.array([integrate(pose[i], *cmd[i], PERIOD) for i in range(n)])
        # The world's walls stop a robot: it does not move into them.
        blocked = s.obstacle_distance(step[:, :2]) < s.radii
        pose = np.where(blocked[:, None], pose, step)
    assert not (np.hypot(*(pose[:, :2] - s.goals).T) <= 0.1).any()
    assert ROUTED  # the routed scenarios above are the ones that need maps
