"""
Every shipped scenario, both drives, with the fleet controller in the loop (no DDS).

The controller gets the map the simulator would publish (orca_nav.sim.maps.scenario_grid) and
plans routes synchronously; the robots follow their commands exactly for one control period
at a time in the simulator's own world (orca_nav.sim.world.World, which judges contact too).
Contact is judged on the true radii against the scenario's own geometry, while the controller
plans with the demo's safety margin, as in ``python -m orca_nav.demo``. The same scenarios run
end to end over DDS in test_demo.py. Walkers walk their scripted paths as in the simulator,
but this world has no scans, so the controller cannot see them: they are neither robots to
arrive nor judged for contact here.
"""

from concurrent.futures import Future
import dataclasses
from dataclasses import dataclass

import numpy as np
from orca_nav.control import FleetConfig, FleetController, FleetInputs, RobotState
from orca_nav.control import parameters as P
from orca_nav.control.config import resolve
from orca_nav.control.navigation import NavigationConfig
from orca_nav.core.routes.grid import GridMap
from orca_nav.sim.maps import scenario_grid
from orca_nav.sim.metrics import compute_metrics
from orca_nav.sim.processes import node_params
from orca_nav.sim.scenarios import available_scenarios, CONTACT_TOLERANCE, load_scenario
from orca_nav.sim.world import World
import pytest

from test_navigation import InlineExecutor  # noqa: I100 -- test/ is on sys.path

PERIOD = 0.1       # [s] control period (the node's default rate)
HEAVY_LINE = 0.05  # [m] how far a heavy robot (avoidance_weight 1) may leave its straight line
SUBSTEPS = 5       # contact checks per period
# Scenarios where a straight line to the goal is blocked: they need routes.
ROUTED = ('maze', 'office', 'office_mapfile', 'shelf', 'two_rooms', 'u_pocket', 'warehouse')
QUICK = ('shelf', 'two_rooms', 'u_pocket')
# Passages one robot fits through (0.15-0.2 m wider than a robot): routes through them exist
# since routes are planned with costs. A differential robot's ORCA disc (radius +
# lookahead_distance against walls, 0.3 m) is wider than half the passage (0.275-0.3 m): its
# point ahead yields there (control/passages.py), so both drives pass with the node's defaults.
NARROW = ('narrow_aisles', 'narrow_door', 'single_lane')


@dataclass
class WorldRun:
    """The outcome of one world run (scenario order of robots)."""

    arrived: np.ndarray   # (N,) bool (walkers: True, they do not count)
    min_gap: float        # [m] smallest distance between two robots' discs (true radii)
    min_wall: float       # [m] smallest distance between a robot's disc and a wall
    time: float           # [s] simulated
    poses: np.ndarray     # (T, N, 3) at every control period
    commands: np.ndarray  # (T, N, 3) the commands sent (zero for observed robots)


class LatePlanner:
    """
    A planning executor that runs each job at once but answers ``delay`` [s] later.

    Later on ``clock()``, the world's time: the worker process of a node on a busy machine
    (at its lower priority it may take tens of seconds for the first map).
    """

    def __init__(self, clock, delay):
        """Answer ``delay`` [s] of ``clock()`` after each job is submitted."""
        self.clock, self.delay = clock, delay

    def submit(self, fn, *args):
        """Run fn(*args) now; return a Future that is done ``delay`` from now."""
        ready = self.clock() + self.delay
        future = _LateFuture(lambda: self.clock() >= ready)
        future.set_result(fn(*args))
        return future

    def shutdown(self, **kwargs):
        """Nothing to stop."""


class _LateFuture(Future):
    """A finished Future that says it is done only once ``ready()``."""

    def __init__(self, ready):
        super().__init__()
        self.ready = ready

    def done(self):
        return self.ready()


def run_world(scenario, drive, fleet=None, lag=0, planner_delay=0.0, **params):
    """
    Drive the scenario to the end with the controller in the loop; return a WorldRun.

    fleet : FleetConfig fields to replace after the node's resolution (settings the node has
    no parameter for yet), or None. lag : periods by which every command takes effect late
    (the robots keep their previous commands meanwhile: a network, a slow base).
    planner_delay : [s] the planning worker's answers (the map's preparation, each batch of
    routes) come that late (LatePlanner); then, as in the demo, the goals come first and the
    map one period later.

    The controller's settings are the node's: the demo's parameters for this scenario
    (orca_nav.sim.processes.node_params, incl. observed robots, weights and groups) plus
    ``params``, through the node's own validation and resolution. Observed robots are driven
    as the simulator drives them (straight to their goals, ignoring commands), and so are
    walkers (along their waypoints; the node does not know them and this world has no scans).
    """
    s = scenario.with_drive(drive)
    n = len(s.robots)
    params.setdefault('scan_enabled', False)  # no scans in this world: the map's walls only
    # Commands take effect at once here and odometry is exact: nothing to compensate (the
    # node's default assumes commands one period late; test_scan_world.py tests that case).
    params.setdefault('latency_compensation', False)
    values = node_params(s)
    values = {**P.defaults(values['robots'], values.get('observed_robots', [])), **values,
              **params}
    assert P.validate(values) is None, P.validate(values)
    settings = resolve(values)
    row = np.array([s.names.index(name) for name in settings.names])  # node row -> scenario
    c = settings.n_controlled
    data, width, height, resolution, origin = scenario_grid(s)
    grid = GridMap.from_occupancy(data, width, height, resolution, origin)
    config = settings.fleet if fleet is None else dataclasses.replace(settings.fleet, **fleet)
    world = None
    executor = (LatePlanner(lambda: world.time, planner_delay) if planner_delay
                else InlineExecutor())
    ctrl = FleetController(config, settings.navigation, executor)
    if not planner_delay:
        ctrl.set_map(grid)
    for k in range(c):
        ctrl.set_goal(k, *s.goals[row[k]])
    world = World(s)
    inputs = FleetInputs.empty(len(row))
    cmd = np.zeros((n, 3))
    late = [np.zeros((n, 3))] * lag   # commands sent, not yet in effect (oldest first)
    poses, commands = [], []
    while world.time < s.timeout:
        t, pose = world.time, world.poses
        if planner_delay and abs(t - PERIOD) < 1e-9:
            ctrl.set_map(grid)
        for k in range(len(row)):
            i = row[k]
            inputs.set_odometry(k, x=pose[i, 0], y=pose[i, 1], yaw=pose[i, 2], time=t,
                                v_forward=cmd[i, 0], v_left=cmd[i, 1], yaw_rate=cmd[i, 2])
        result = ctrl.step(inputs, t)
        cmd = np.zeros((n, 3))
        cmd[row[:c]] = result.commands
        if lag:
            late.append(cmd)
            cmd = late.pop(0)
        cmd = world.drive(cmd, PERIOD)   # observed robots and walkers: their own twists
        poses.append(pose.copy())
        commands.append(cmd.copy())
        if (all(state == RobotState.REACHED for state in result.states)
                and np.allclose(pose[s.observed, :2], s.goals[s.observed])):
            break
        world.advance(PERIOD, SUBSTEPS)
    pose = world.poses
    arrived = (np.hypot(*(pose[:, :2] - s.goals).T) <= 0.1 + 1e-6) | s.walkers
    return WorldRun(arrived, world.min_gap, world.min_wall_gap, world.time, np.array(poses),
                    np.array(commands))


def _marks(name, drive):
    return [] if name in QUICK else [pytest.mark.slow]


# Differential carts are the discs that hold them unless footprint_differential: the cart
# door is refused them (test_footprint_worlds.py checks that they stay out, untouched, and
# that they pass with the parameter).
NOT_FOR = {('cart_door', 'differential')}
CASES = [pytest.param(name, drive, marks=_marks(name, drive))
         for name in available_scenarios() for drive in ('holonomic', 'differential')
         if (name, drive) not in NOT_FOR]


@pytest.mark.parametrize('name, drive', CASES)
def test_every_robot_arrives_without_contact(name, drive):
    """
    All robots reach their goals; no two discs and no disc and wall overlap.

    A heavy robot (avoidance_weight 1, the priority scenarios) is given way: it stays within
    HEAVY_LINE of the straight line from its start to its goal (the demo's line_deviation).
    """
    scenario = load_scenario(name)
    run = run_world(load_scenario(name), drive)
    assert run.arrived.all(), \
        f'{name} {drive}: {np.flatnonzero(~run.arrived)} did not arrive in {run.time} s'
    assert run.min_gap > -CONTACT_TOLERANCE, \
        f'{name} {drive}: robots overlap by {-run.min_gap:.3f} m'
    assert run.min_wall > -CONTACT_TOLERANCE, \
        f'{name} {drive}: a wall overlap of {-run.min_wall:.3f} m'
    heavy = [i for i, r in enumerate(scenario.robots) if r.avoidance_weight == 1.0]
    if heavy:
        poses = np.concatenate([scenario.starts[None], run.poses])
        m = compute_metrics(scenario, PERIOD * np.arange(len(poses)), poses, 0.0)
        deviation = m['line_deviation'][heavy]
        assert (deviation <= HEAVY_LINE).all(), f'{name} {drive}: heavy robots {deviation} m off'


@pytest.mark.slow
@pytest.mark.parametrize('name', NARROW)
def test_narrow_passages_with_a_short_lookahead(name):
    """Differential robots whose ORCA disc fits the passage (lookahead 0.02 m) all arrive."""
    run = run_world(load_scenario(name), 'differential', lookahead_distance=0.02)
    assert run.arrived.all(), f'{name}: {np.flatnonzero(~run.arrived)} did not arrive'
    assert run.min_gap > -CONTACT_TOLERANCE and run.min_wall > -CONTACT_TOLERANCE


def test_without_routes_the_shelf_blocks_every_robot():
    """The same shelf scene with no map: robots drive straight and none arrives (the need)."""
    s = load_scenario('shelf')
    n = len(s.robots)
    ctrl = FleetController(FleetConfig.uniform(s.names, radius=0.25), NavigationConfig(),
                           InlineExecutor())
    for i, goal in enumerate(s.goals):
        ctrl.set_goal(i, *goal)
    world, inputs = World(s, track_contacts=False), FleetInputs.empty(n)
    pose = world.poses
    for k in range(300):
        for i in range(n):
            inputs.set_odometry(i, x=pose[i, 0], y=pose[i, 1], yaw=pose[i, 2], time=k * PERIOD)
        before = pose.copy()
        world.step(ctrl.step(inputs, k * PERIOD).commands, PERIOD)
        # The walls stop a robot here: it does not move into them.
        blocked = s.obstacle_distance(pose[:, :2]) < s.radii
        pose[blocked] = before[blocked]
    assert not (np.hypot(*(pose[:, :2] - s.goals).T) <= 0.1).any()
    assert ROUTED  # the routed scenarios above are the ones that need maps
