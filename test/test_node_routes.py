"""
Routes through maps with the real node, rclpy and DDS: a map on /map, routes, paths, states.

The world (test/helpers.py) integrates the node's commands in simulated time, lock-step with
the node's ticks; the map's walls are checked for contact (the node sees them only in the map).
"""

import json

from nav_msgs.msg import OccupancyGrid, Path
import numpy as np
from orca_nav.core.routes.grid import GridMap
from orca_nav.ros import messages
import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from helpers import NodeRig, World  # noqa: I100 -- test/ on sys.path

DOMAIN_ID = 26
RATE = 10.0
RES = 0.05  # [m / cell]
ODOM_ATTEMPTS, ODOM_WAIT = 10, 1.0  # odometry resends, wall time [s] to wait for each
CONTACT = 1e-3  # [m] overlap below this is touching, not a collision (the demo's rule)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


def occupancy(width_m, height_m, boxes, frame='map', unknown=()):
    """Return an OccupancyGrid: a border wall, occupied and unknown boxes (x0, y0, x1, y1)."""
    w, h = int(round(width_m / RES)), int(round(height_m / RES))
    cells = np.zeros((h, w), np.int8)
    cells[0, :] = cells[-1, :] = cells[:, 0] = cells[:, -1] = 100
    for value, rects in ((100, boxes), (-1, unknown)):
        for x0, y0, x1, y1 in rects:
            cells[int(round(y0 / RES)):int(round(y1 / RES)),
                  int(round(x0 / RES)):int(round(x1 / RES))] = value
    msg = OccupancyGrid()
    msg.header.frame_id = frame
    msg.info.resolution = RES
    msg.info.width, msg.info.height = w, h
    msg.info.origin.orientation.w = 1.0
    msg.data = cells.ravel().tolist()
    return msg


def walls_of(msg):
    """Return the wall segments of an OccupancyGrid (for the world's contact check)."""
    grid = GridMap.from_occupancy(np.array(msg.data, np.int8), msg.info.width, msg.info.height,
                                  msg.info.resolution)
    return grid.wall_segments()


class Rig(NodeRig):
    """The node, a world, a clock and a map publisher on one executor, lock-stepped."""

    def __init__(self, context, names, starts, drive='holonomic', walls=(), **params):
        overrides = {'progress_timeout': 10.0, 'drive': drive,
                     # The lock-stepped world applies each command at once, without latency.
                     'latency_compensation': False}
        overrides.update(params)
        super().__init__(context, names, rate=RATE, name='route_test', start=1.0, **overrides)
        self.world = World(self.probe, names, starts, drive, walls=walls)
        self.world.scan_pubs = []  # the node knows the walls from the map only
        self.map_pub = self.probe.create_publisher(OccupancyGrid, '/map', LATCHED)
        self.plan_pubs = [self.probe.create_publisher(Path, f'/{r}/plan', 10) for r in names]
        self.status, self.routes = {}, {}
        for r in names:
            self.probe.create_subscription(
                String, f'/{r}/orca_status',
                lambda m, r=r: self.status.__setitem__(r, json.loads(m.data)), LATCHED)
            self.probe.create_subscription(
                Path, f'/{r}/orca_route', lambda m, r=r: self.routes.__setitem__(r, m), LATCHED)
        self.start(self.world.odom_pubs + self.world.goal_pubs)

    def publish_map(self, msg):
        count = self.node.controller.navigator.maps_received + self.node.maps_rejected
        self.map_pub.publish(msg)
        self.spin_until(lambda: self.node.controller.navigator.maps_received
                        + self.node.maps_rejected > count)

    def goals(self, goals):
        self.world.publish_goals(goals)
        self.spin_until(lambda: self.node.controller.has_goal.all())

    def step(self):
        """One period: odometry in, a tick, commands back, the world moves."""
        n = len(self.world.names)
        for attempt in range(ODOM_ATTEMPTS):  # odometry is best effort: resend a lost one
            self.world.publish_odometry(self.clock.stamp())
            try:
                self.spin_until(lambda: all(self.node.odometry.waiting(i) for i in range(n)),
                                timeout=ODOM_WAIT)
                break
            except AssertionError:
                if attempt == ODOM_ATTEMPTS - 1:
                    raise
        # Lock-stepped with the planner too: the node plans in a worker process off the tick;
        # the clock waits for it, so a plan comes the tick after it was asked for however
        # busy the machine is (else robots drive on without routes for more simulated time).
        self.spin_until(self.planner_idle)
        self.tick(self.commands_in(lambda: self.world.cmd_count))
        self.world.integrate(1.0 / RATE)

    def planner_idle(self):
        """Whether the node's planning worker has finished the map and the plans asked for."""
        return self.node.controller.navigator.idle()

    def step_until(self, predicate, max_time=20.0):
        """Step until predicate() holds (plans arrive at ticks); fail after max_time [s sim]."""
        start = self.clock.t
        while not predicate():
            assert self.clock.t - start < max_time, 'stepped max_time without the condition'
            self.step()

    def run(self, goals, max_time, tolerance=0.1):
        """Step until every robot rests within tolerance of its goal; return the time taken."""
        goals = np.asarray(goals, float)
        start = self.clock.t
        while self.clock.t - start < max_time:
            self.step()
            at = np.linalg.norm(self.world.pose[:, :2] - goals, axis=1) <= tolerance + 1e-6
            if at.all() and not self.world.cmd.any():
                return self.clock.t - start
        return None


@pytest.fixture
def rig_factory(context):
    rigs = []

    def make(*args, **kwargs):
        rigs.append(Rig(context, *args, **kwargs))
        return rigs[-1]
    yield make
    for rig in rigs:
        rig.close()


SHELF = occupancy(10.0, 8.0, [(2.0, 3.8, 8.0, 4.2)])   # a 6 m shelf across the room
SHELF_STARTS = [(3.5, 1.5, 1.57), (6.5, 1.5, 1.57), (3.5, 6.5, -1.57), (6.5, 6.5, -1.57)]
SHELF_GOALS = [(3.5, 6.5), (6.5, 6.5), (3.5, 1.5), (6.5, 1.5)]


@pytest.mark.slow
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_shelf_between_robots_and_goals_all_arrive_with_the_map(rig_factory, drive):
    """With the map, four robots go round the shelf to goals it hides: no contact."""
    rig = rig_factory(['r0', 'r1', 'r2', 'r3'], SHELF_STARTS, drive, walls=walls_of(SHELF))
    rig.publish_map(SHELF)
    rig.goals(SHELF_GOALS)
    assert rig.run(SHELF_GOALS, max_time=90.0) is not None
    assert rig.world.min_wall_gap > -CONTACT and rig.world.min_gap > -CONTACT
    assert all(len(rig.routes[r].poses) > 2 for r in ('r0', 'r3'))  # routed round the shelf


def test_without_a_map_a_robot_held_by_the_shelf_reports_stuck(rig_factory):
    """No map: the robot drives at the shelf, stops against it and its status says stuck."""
    rig = rig_factory(['r0'], [SHELF_STARTS[0]], walls=walls_of(SHELF), progress_timeout=3.0,
                      scan_enabled=False)
    rig.goals([SHELF_GOALS[0]])
    for _ in range(120):
        rig.step()
        # The shelf holds the robot: the world does not let it pass y = 3.8 - radius.
        rig.world.pose[0, 1] = min(rig.world.pose[0, 1], 3.55)
    rig.spin_until(lambda: rig.status.get('r0', {}).get('state') == 'stuck')


def test_goal_in_a_wall_is_unreachable_and_the_robot_stays(rig_factory):
    """A goal inside the shelf: status unreachable with its reason, zero commands."""
    rig = rig_factory(['r0'], [SHELF_STARTS[0]])
    rig.publish_map(SHELF)
    rig.goals([(5.0, 4.0)])
    rig.step_until(lambda: rig.status.get('r0', {}).get('state') == 'unreachable')
    for _ in range(5):
        rig.step()
    assert rig.status['r0']['reason'] == 'goal_in_obstacle'
    assert not rig.world.cmd.any()
    assert np.allclose(rig.world.pose[0, :2], SHELF_STARTS[0][:2])


def test_external_path_is_followed_and_republished(rig_factory):
    """A Path on /r0/plan is followed (round its corner) to its last pose."""
    rig = rig_factory(['r0'], [(1.0, 1.0, 0.0)])
    corner = (1.0, 3.0)
    path = messages.path_message(np.array([(1.0, 1.0), corner, (3.0, 3.0)]), 'map',
                                 rig.clock.stamp())
    rig.plan_pubs[0].publish(path)
    rig.spin_until(lambda: rig.node.controller.has_goal[0])
    trace = []
    start = rig.clock.t
    while rig.clock.t - start < 30.0:
        rig.step()
        trace.append(rig.world.pose[0, :2].copy())
        if np.hypot(*(rig.world.pose[0, :2] - (3.0, 3.0))) < 0.11 and not rig.world.cmd.any():
            break
    trace = np.array(trace)
    assert np.hypot(*(trace[-1] - (3.0, 3.0))) < 0.11
    # It went up the first leg: it passed close to the corner, far from the diagonal.
    assert np.linalg.norm(trace - corner, axis=1).min() < 0.8
    rig.step_until(lambda: 'r0' in rig.routes and len(rig.routes['r0'].poses) == 3)
    # A path in another frame or with NaN is refused and counted.
    bad = messages.path_message(np.array([(1.0, 1.0), (2.0, 2.0)]), 'odom', rig.clock.stamp())
    rig.plan_pubs[0].publish(bad)
    rig.spin_until(lambda: rig.node.paths_rejected == 1)


@pytest.mark.slow
def test_map_replaced_at_run_time_replans_round_the_new_wall(rig_factory):
    """A new map with a wall across the straight route: the route bends, no contact."""
    open_room = occupancy(10.0, 6.0, [])
    walled = occupancy(10.0, 6.0, [(4.8, 1.2, 5.2, 6.0)])
    rig = rig_factory(['r0'], [(1.0, 3.0, 0.0)], walls=walls_of(walled))
    rig.publish_map(open_room)
    rig.goals([(9.0, 3.0)])
    rig.step_until(lambda: 'r0' in rig.routes and len(rig.routes['r0'].poses) == 2)
    rig.publish_map(walled)
    rig.step_until(lambda: len(rig.routes['r0'].poses) > 2)
    assert rig.run([(9.0, 3.0)], max_time=60.0) is not None
    assert rig.world.min_wall_gap > -CONTACT


def test_bad_maps_are_rejected_and_the_previous_one_kept(rig_factory):
    """Wrong frame, all unknown, too large, empty: each refused and counted; routes stay."""
    rig = rig_factory(['r0'], [SHELF_STARTS[0]], max_map_cells=200_000)
    rig.publish_map(SHELF)
    rig.goals([SHELF_GOALS[0]])
    rig.step_until(lambda: 'r0' in rig.routes and len(rig.routes['r0'].poses) > 2)
    route = [(p.pose.position.x, p.pose.position.y) for p in rig.routes['r0'].poses]
    empty = OccupancyGrid()
    empty.header.frame_id = 'map'
    bad = [occupancy(10.0, 8.0, [], frame='odom'),
           occupancy(10.0, 8.0, [], unknown=[(0, 0, 10.0, 8.0)]),
           occupancy(30.0, 30.0, []),  # 360 000 cells > max_map_cells
           empty]
    for k, msg in enumerate(bad):
        rig.publish_map(msg)
        assert rig.node.maps_rejected == k + 1
    rig.step()
    assert [(p.pose.position.x, p.pose.position.y) for p in rig.routes['r0'].poses] == route
    assert rig.node.controller.navigator.maps_received == 1
