"""
End-to-end tests of the orca_nav node with real rclpy: a small world drives the fleet.

The node under test and a world node run in one executor in this process on a private ROS
context (domain 21, DDS on loopback). The world owns simulated time: it publishes /clock and the
odometry of every robot, the node (use_sim_time) ticks on that clock, and the world moves the
robots by the published cmd_vel (the simulator's orca_nav.sim.world.World) before the next
tick. Lock-step makes the runs deterministic and faster than real time.
"""

import math

from geometry_msgs.msg import Twist
from helpers import WorldView
from nav_msgs.msg import Odometry
import numpy as np
from orca_nav.ros import messages
from orca_nav.sim.scenarios import load_scenario, scenario_from_dict
from orca_nav.sim.world import rows_scenario, Scanner, World as SimWorld
from orca_nav.testing.rig import command_recorder
import pytest
import rclpy
from rclpy.qos import qos_profile_sensor_data, QoSProfile
from sensor_msgs.msg import LaserScan

from helpers import NodeRig  # noqa: I100 -- test/ is on sys.path

DOMAIN_ID = 21
RATE = 10.0              # node rate [Hz]
SUBSTEPS = 10            # world integration (and contact checking) steps per node period
SCAN_BEAMS = 360         # beams of the simulated 360 degree laser
SCAN_RANGE = 6.0         # [m] its maximum range


class World(WorldView):
    """
    Robots on a plane over ROS: odometry out, cmd_vel in, simulated clock.

    The motion (exact holonomic or unicycle), the scans and the contact checks are those of
    ``sim``, the simulator's orca_nav.sim.world.World, stepped with the last commands.
    """

    def __init__(self, context, names, poses, drives, radii, offsets=None, walls=None,
                 walkers=()):
        """
        Create the world node with one odom publisher and cmd_vel subscriber per robot.

        walkers : scenario walkers (orca_nav.sim.scenarios Robot rows): people on scripted
        paths that only the scans show, on the world's clock from its first step.
        """
        self.node = rclpy.create_node('world', context=context)
        self.names = list(names)
        # Walls only the laser scans show: (M, 2, 2) segments.
        self.sim = SimWorld(rows_scenario(self.names, poses, radii, drives, walls, walkers),
                            Scanner(SCAN_BEAMS, 0.05, SCAN_RANGE))
        # Pose of each robot's odometry frame in the global frame (odom starts at its origin).
        self.offsets = np.zeros((len(names), 3)) if offsets is None else np.array(offsets)
        self.cmd = np.zeros((len(names), 3))
        self.cmd_count = np.zeros(len(names), int)
        self.commands = []  # (N, 3) the commands of every tick, in order
        self.t = 1.0
        self.scan_pubs = [self.node.create_publisher(LaserScan, f'/{r}/scan',
                                                     qos_profile_sensor_data) for r in names]
        self.odom_pubs = [self.node.create_publisher(Odometry, f'/{r}/odom', 10) for r in names]
        self.goal_pubs = [self.node.create_publisher(
            type(messages.make_goal(0, 0)), f'/{r}/goal_pose', 10) for r in names]
        for i, r in enumerate(names):
            self.node.create_subscription(Twist, f'/{r}/cmd_vel',
                                          command_recorder(self.cmd, self.cmd_count, i),
                                          QoSProfile(depth=10))

    def odometry(self, i):
        """Odometry of robot i in its own odometry frame, twist in the body frame."""
        ox, oy, oyaw = self.offsets[i]
        dx, dy = self.pose[i, 0] - ox, self.pose[i, 1] - oy
        c, s = math.cos(-oyaw), math.sin(-oyaw)
        msg = messages.make_odometry(c * dx - s * dy, s * dx + c * dy, self.pose[i, 2] - oyaw,
                                     self.cmd[i], f'{self.names[i]}/odom',
                                     f'{self.names[i]}/base_link')
        msg.header.stamp.sec = int(self.t)
        return msg

    def scan(self, i):
        """Return the laser scan of robot i (sensor at its centre): walls, robots, walkers."""
        return messages.make_scan(self.sim.scan_ranges(i), f'{self.names[i]}/base_link',
                                  angle_increment=2.0 * math.pi / SCAN_BEAMS,
                                  range_max=SCAN_RANGE)

    def integrate(self, dt):
        """Advance every row by dt under the last commands, checking contact at substeps."""
        commands = np.zeros((len(self.sim.poses), 3))
        commands[:len(self.names)] = self.cmd
        self.sim.step(commands, dt, SUBSTEPS)
        self.t += dt


def run_fleet(context, names, starts, goals, drives, radii, overrides, max_time,
              offsets=None, goal_tolerance=0.1, walls=None, walkers=(), trace=None):
    """
    Run the node and a world until every robot is at its goal or max_time [s] passes.

    Returns (world, node statistics, arrival time or None). trace(world), if given, is
    called after every period's integration.
    """
    n = len(names)
    world = World(context, names, starts, drives, radii, offsets, walls, walkers)
    # The executor orca_nav_node uses by default (EventsExecutor where rclpy has it); the
    # rig's clock is the world's time.
    rig = NodeRig(context, names, rate=RATE, executor='node', start=world.t,
                  goal_tolerance=goal_tolerance, publish_markers=True, **overrides)
    rig.executor.add_node(world.node)
    node = rig.node
    try:
        # Discovery: every publisher of the world has its subscriber in the node and back.
        scanning = walls is not None and node.settings.params.scan_enabled
        rig.start(world.odom_pubs + world.goal_pubs + (world.scan_pubs if scanning else []))
        for i, pub in enumerate(world.goal_pubs):
            pub.publish(messages.make_goal(goals[i][0], goals[i][1], frame_id='map'))
        rig.spin_until(lambda: node.controller.has_goal.all())
        arrival = None
        dt = 1.0 / RATE
        while world.t < max_time:
            # Delivered when waiting to be taken: the next tick takes them.
            for i, pub in enumerate(world.odom_pubs):
                pub.publish(world.odometry(i))
            rig.spin_until(lambda: all(node.odometry.waiting(i) for i in range(n)))
            if scanning:
                for i, pub in enumerate(world.scan_pubs):
                    pub.publish(world.scan(i))
                rig.spin_until(lambda: all(node.scans.waiting(i) for i in range(n)))
            # The clock one period on (world.t + dt); every command round the node has
            # published, received (none still in flight).
            rig.tick(rig.commands_in(lambda: world.cmd_count))
            world.commands.append(world.cmd.copy())
            world.integrate(dt)
            if trace is not None:
                trace(world)
            at_goal = np.linalg.norm(world.pose[:, :2] - np.asarray(goals), axis=1)
            if (at_goal <= goal_tolerance + 1e-6).all() and not world.cmd.any():
                arrival = world.t
                break
        return world, node.tick_stats(), arrival
    finally:
        close_run(rig, world)


def close_run(rig, world):
    """Take the world off the rig's executor and destroy it; close the rig."""
    rig.executor.remove_node(world.node)
    world.node.destroy_node()
    rig.close()


def circle_swap(n, radius):
    """Return n start poses on a circle (facing its centre) and goals at the antipodes."""
    a = 2.0 * math.pi * np.arange(n) / n
    starts = [(radius * math.cos(t), radius * math.sin(t), t + math.pi) for t in a]
    goals = [(-x, -y) for x, y, _ in starts]
    return starts, goals


def _circle_run(context, drive, **params):
    """Run eight robots of radius 0.2 swapping through the centre of a 2 m circle."""
    n, radius = 8, 0.2
    names = [f'robot{i + 1}' for i in range(n)]
    starts, goals = circle_swap(n, 2.0)
    overrides = {'drive': drive, 'radius': radius, 'max_speed': 0.5,
                 'max_angular_speed': 2.0, 'lookahead_distance': 0.1, **params}
    return run_fleet(context, names, starts, goals, [drive] * n, [radius] * n, overrides,
                     max_time=60.0)


@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_circle_swap_through_centre(context, drive):
    """Eight robots swap places through a common centre: all arrive, no two discs touch."""
    world, stats, arrival = _circle_run(context, drive)
    assert world.min_gap >= 0.0, f'robots overlapped by {-world.min_gap:.4f} m'
    assert arrival is not None, f'not all arrived: poses {world.pose.round(2).tolist()}'
    assert stats['tick_errors'] == 0
    assert stats['missed_periods'] == 0
    # Without acceleration limits the commands change by more than the limits of the
    # acceleration test allow (so that test is no foregone conclusion).
    speed_up, braking = _command_changes(world.commands, drive)
    assert speed_up.max() > ACCEL / RATE or braking.max() > DECEL / RATE, (
        speed_up.max(), braking.max())


ACCEL, DECEL = 0.5, 1.0  # [m/s^2] the limits of the acceleration test


def _command_changes(commands, drive):
    """Largest speed-up and largest braking between consecutive ticks, per robot [m/s]."""
    cmd = np.asarray(commands)
    if drive == 'differential':
        speed = np.abs(cmd[:, :, 0])
        change = np.abs(np.diff(cmd[:, :, 0], axis=0))
    else:
        speed = np.hypot(cmd[:, :, 0], cmd[:, :, 1])
        change = np.hypot(*np.diff(cmd[:, :, :2], axis=0).transpose(2, 0, 1))
    faster = np.diff(speed, axis=0) > 0.0
    return (np.where(faster, change, 0.0).max(axis=0),
            np.where(faster, 0.0, change).max(axis=0))


@pytest.mark.slow
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_acceleration_limits_hold_in_the_circle_swap(context, drive):
    """max_accel 0.5, max_decel 1.0: no command changes faster, no contact, all arrive."""
    world, _, arrival = _circle_run(context, drive, max_accel=ACCEL, max_decel=DECEL)
    assert world.min_gap >= 0.0, f'robots overlapped by {-world.min_gap:.4f} m'
    assert arrival is not None, f'not all arrived: poses {world.pose.round(2).tolist()}'
    speed_up, braking = _command_changes(world.commands, drive)
    # Speeding up: at most max_accel per period; any change: at most max_decel (+1 %).
    assert speed_up.max() <= ACCEL / RATE * 1.01, speed_up
    assert braking.max() <= DECEL / RATE * 1.01, braking


def test_mixed_fleet_crossing_with_offsets_and_overrides(context):
    """Head-on and crossing pairs, mixed drives and radii, odometry with its own origin."""
    names = ['alpha', 'bravo', 'charlie', 'delta']
    starts = [(-2.5, 0.0, 0.0), (2.5, 0.05, math.pi), (0.0, -2.5, math.pi / 2),
              (0.05, 2.5, -math.pi / 2)]
    goals = [(2.5, 0.0), (-2.5, 0.0), (0.0, 2.5), (0.0, -2.5)]
    drives = ['holonomic', 'differential', 'differential', 'holonomic']
    radii = [0.2, 0.3, 0.2, 0.25]
    # bravo's and charlie's odometry start at their own start pose.
    offsets = [(0.0, 0.0, 0.0), starts[1], starts[2], (0.0, 0.0, 0.0)]
    overrides = {'drive': 'holonomic', 'radius': 0.2, 'max_speed': 0.6,
                 'bravo.drive': 'differential', 'bravo.radius': 0.3,
                 'bravo.odom_offset': list(starts[1]),
                 'charlie.drive': 'differential', 'charlie.odom_offset': list(starts[2]),
                 'charlie.max_speed': 0.4, 'delta.radius': 0.25}
    world, stats, arrival = run_fleet(context, names, starts, goals, drives, radii, overrides,
                                      max_time=40.0, offsets=offsets)
    assert world.min_gap >= 0.0, f'robots overlapped by {-world.min_gap:.4f} m'
    assert arrival is not None, f'not all arrived: poses {world.pose.round(2).tolist()}'
    assert stats['tick_errors'] == 0


@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_wall_seen_only_by_the_scan_is_never_touched(context, drive):
    """
    A robot driving at a wall that only its laser scan shows never touches it.

    Control run: with scan_enabled false the same robot drives into the wall, so the world
    test does detect contact.
    """
    wall = [[[2.0, -1.5], [2.0, 1.5]]]
    overrides = {'drive': drive, 'radius': 0.2, 'max_speed': 0.5, 'max_angular_speed': 2.0,
                 'scan_enabled': True, 'obstacle_timeout': 0.5, 'time_horizon_obst': 2.0}
    world, stats, _ = run_fleet(context, ['robot1'], [(0.0, 0.0, 0.0)], [(4.0, 0.0)], [drive],
                                [0.2], overrides, max_time=12.0, walls=wall)
    assert world.min_wall_gap >= 0.0, f'touched the wall by {-world.min_wall_gap:.4f} m'
    assert world.pose[0, 0] > 1.0, 'the robot should have driven toward the wall'
    assert stats['tick_errors'] == 0 and stats['scans_rejected'] == 0
    overrides['scan_enabled'] = False
    world, _, _ = run_fleet(context, ['robot1'], [(0.0, 0.0, 0.0)], [(4.0, 0.0)], [drive],
                            [0.2], overrides, max_time=12.0, walls=wall)
    assert world.min_wall_gap < 0.0


def _ring_walker(context, drive, track):
    """Run ring_walker here (6 robots swap, a walker crosses); return run_fleet's answer."""
    s = load_scenario('ring_walker').with_drive(drive)
    robots = [r for r in s.robots if not r.walker]
    walkers = [r for r in s.robots if r.walker]
    overrides = {'drive': drive, 'radius': 0.2, 'max_speed': 0.5, 'max_angular_speed': 2.0,
                 'lookahead_distance': 0.1, 'scan_enabled': True, 'track_people': track}
    return run_fleet(context, [r.name for r in robots], [r.start for r in robots],
                     [r.goal for r in robots], [drive] * len(robots), [0.2] * len(robots),
                     overrides, max_time=40.0, walls=np.zeros((0, 2, 2)), walkers=walkers)


@pytest.mark.slow
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_a_walker_only_the_scans_show_is_never_touched_with_people_tracking(context, drive):
    """ring_walker: with track_people no robot overlaps the walker, all arrive; blind, they do."""
    world, _, arrival = _ring_walker(context, drive, track=True)
    assert world.min_walker_gap >= 0.0, f'a robot overlapped the walker by ' \
                                        f'{-world.min_walker_gap:.3f} m'
    assert world.min_gap >= 0.0 and arrival is not None
    if drive == 'holonomic':
        blind, _, _ = _ring_walker(context, drive, track=False)
        assert blind.min_walker_gap < 0.0  # the scenario is a real test


# Lock-stepped, the run is the same on every machine (the node takes messages at the
# simulation's time and sizes its scan quota by it).
@pytest.mark.slow
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_a_ring_swap_with_two_walkers_only_the_scans_show(context, drive):
    """
    The node's defaults plus scan_enabled: ring_two_walkers, two 1 m/s walkers unseen else.

    They ignore the robots (one south to north, one west to east, through the centre while
    the robots crowd it); people tracking is on because scans are. No robot overlaps a
    walker or a robot, and all arrive. benchmarks/bench_walkers.py sweeps the walkers'
    timing in process.
    """
    s = load_scenario('ring_two_walkers').with_drive(drive)
    robots = [r for r in s.robots if not r.walker]
    walkers = [r for r in s.robots if r.walker]
    world, _, arrival = run_fleet(context, [r.name for r in robots], [r.start for r in robots],
                                  [r.goal for r in robots], [drive] * len(robots),
                                  [0.2] * len(robots), {'scan_enabled': True, 'drive': drive},
                                  max_time=60.0, walls=np.zeros((0, 2, 2)), walkers=walkers)
    assert world.min_walker_gap >= 0.0, f'a robot overlapped a walker by ' \
                                        f'{-world.min_walker_gap:.3f} m'
    assert world.min_gap >= 0.0 and arrival is not None


# Four differential robots with the node's defaults swap across a square (a ring of radius
# 2.5 m) while three people walk through it southward at 1.20-1.36 m/s, seen only in the scans
# and avoiding nobody: w0 and w1 overtake robot4 (heading south) from behind, all three cross
# robot1's and robot3's lines (east and west) from the side, w2 from the north-east. Found in
# process among random rings with walkers. Over DDS, lock-stepped (deterministic), the
# smallest robot-walker gap with every walker's start moved by -0.5 ... +0.2 s (11 timings):
# before 31a28b9 (a differential robot asked to step aside turned on the spot) negative in 9,
# -0.50 to -0.20 m (-0.37 m at the timing here); at 31a28b9 (core/orca/escape.py's escape_unicycle,
# drive_keeps_clear) positive in 8 (0.13-0.15 m in six, 0.002 and 0.003 m in two) and negative
# in 3 (-0.20 to -0.17 m, at -0.05, +0.1 and +0.2 s): the timing here keeps 0.133 m, and
# walkers closing from two sides at once can still be met. With the spins and SWITCH_COST of
# the way out (8ddfa76) this timing keeps 0.120 m, every robot there at 16.7 s; with the
# roll-out's PREDICTION_GROWTH, 0.179 m, every robot there at 17.6 s.
SQUARE_OF_FOUR = [('robot1', (-2.46, -0.445, 0.179), (2.46, 0.445)),
                  ('robot2', (0.445, -2.46, 1.75), (-0.445, 2.46)),
                  ('robot3', (2.46, 0.445, -2.962), (-2.46, -0.445)),
                  ('robot4', (-0.445, 2.46, -1.391), (0.445, -2.46))]
SOUTHWARD_WALKERS = [{'name': 'w0', 'radius': 0.3, 'speed': 1.26, 'start_time': 2.9,
                      'waypoints': [[-0.017, 6.021], [1.097, -6.932]]},
                     {'name': 'w1', 'radius': 0.3, 'speed': 1.2, 'start_time': 2.05,
                      'waypoints': [[-1.569, 5.793], [2.145, -6.665]]},
                     {'name': 'w2', 'radius': 0.3, 'speed': 1.36, 'start_time': 1.77,
                      'waypoints': [[4.567, 3.929], [-4.482, -5.405]]}]


def walkers_through_a_square():
    """Return the scenario: four differential robots of the node's defaults, three walkers."""
    return scenario_from_dict({
        'robot_defaults': {'radius': 0.2, 'max_speed': 0.5, 'max_angular_speed': 1.5,
                           'drive': 'differential'},
        'robots': [{'name': name, 'start': list(start), 'goal': list(goal)}
                   for name, start, goal in SQUARE_OF_FOUR],
        'walkers': SOUTHWARD_WALKERS}, 'walkers_through_a_square')


@pytest.mark.slow
def test_differential_robots_step_aside_from_walkers_from_behind_and_the_side(context):
    """
    The node's defaults (differential, 1.5 rad/s, lookahead 0.1 m) plus scan_enabled.

    Walkers who ignore the robots come from behind and from the side while four robots swap
    across a square: no robot overlaps a walker or a robot (at the world's substeps), and all
    arrive within 40 s. A robot asked to step sideways must drive there, not turn on the spot
    while the walker closes in (it was walked into by 0.3 m before 31a28b9).
    """
    s = walkers_through_a_square()
    robots = [r for r in s.robots if not r.walker]
    walkers = [r for r in s.robots if r.walker]
    world, stats, arrival = run_fleet(
        context, [r.name for r in robots], [r.start for r in robots], [r.goal for r in robots],
        ['differential'] * len(robots), [0.2] * len(robots),
        {'drive': 'differential', 'scan_enabled': True}, max_time=40.0,
        walls=np.zeros((0, 2, 2)), walkers=walkers)
    print(f'walker gap {world.min_walker_gap:.3f} m, robot gap {world.min_gap:.3f} m, '
          f'arrival {arrival}')
    assert world.min_walker_gap > 0.0, f'a robot overlapped a walker by ' \
                                       f'{-world.min_walker_gap:.3f} m'
    assert world.min_gap > 0.0, f'robots overlapped by {-world.min_gap:.3f} m'
    assert arrival is not None, f'not all arrived: poses {world.pose.round(2).tolist()}'
    assert stats['tick_errors'] == 0


# One differential or holonomic robot of the node's defaults (scan_enabled, so people
# tracking) on its way east, and a walker who does not see it coming up behind it on its
# line at the robot's own speed (0.5 m/s): CrowdNav++'s intrusion (the robot's centre within
# both radii of where the walker will truly be 0.25-1.25 s on) with the keep-out and without.
OVERTAKING_WALKER = [{'name': 'w0', 'radius': 0.3, 'speed': 0.5, 'start_time': 0.0,
                      'waypoints': [[-0.95, 0.05], [14.0, 0.05]]}]


def _overtaken(context, drive, keepout_time):
    """Run the overtaking walker; return (world, arrival, intrusion share of the ticks)."""
    s = scenario_from_dict({
        'robot_defaults': {'radius': 0.2, 'max_speed': 0.5, 'max_angular_speed': 1.5,
                           'drive': drive},
        'robots': [{'name': 'robot1', 'start': [0.0, 0.0, 0.0], 'goal': [7.0, 0.0]}],
        'walkers': OVERTAKING_WALKER}, 'overtaking_walker')
    walkers = [r for r in s.robots if r.walker]
    xy = []   # robot and walker positions after each period
    world, _, arrival = run_fleet(
        context, ['robot1'], [s.robots[0].start], [s.robots[0].goal], [drive], [0.2],
        {'drive': drive, 'scan_enabled': True, 'person_keepout_time': keepout_time},
        max_time=30.0, walls=np.zeros((0, 2, 2)), walkers=walkers,
        trace=lambda w: xy.append(w.sim.poses[:, :2].copy()))
    xy = np.array(xy)
    ahead = np.arange(3, 13, 2)   # ticks 0.3 ... 1.1 s on (the period is 0.1 s)
    ticks = len(xy) - ahead[-1]
    inside = [bool((np.hypot(*(xy[k + ahead, 1] - xy[k, 0]).T) < 0.5).any())
              for k in range(ticks)]
    return world, arrival, float(np.mean(inside)) if ticks > 0 else 0.0


@pytest.mark.slow
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_a_walker_from_behind_is_let_past_not_run_ahead_of(context, drive):
    """
    With person_keepout_time (the node's defaults, either drive) it steps out of the way.

    Without it (0) the robot runs on ahead of the walker, inside its next second, for most
    of the overtaking; with it, intrusions fall to at most half (a differential robot, which
    must turn first, to 0.8), no contact, and it arrives. Measured: holonomic 0.452 -> 0.062,
    differential 0.123 -> 0.084.
    """
    on_world, on_arrival, on_share = _overtaken(context, drive, 1.25)
    off_world, _, off_share = _overtaken(context, drive, 0.0)
    print(f'{drive}: intrusion {on_share:.3f} with the keep-out, {off_share:.3f} without; '
          f'gap {on_world.min_walker_gap:.3f} / {off_world.min_walker_gap:.3f} m')
    assert on_world.min_walker_gap > 0.0, f'overlapped the walker by {-on_world.min_walker_gap}'
    assert on_arrival is not None
    assert off_share >= 0.1, f'the scene is no test: {off_share:.3f} without the keep-out'
    assert on_share <= (0.5 if drive == 'holonomic' else 0.8) * off_share, (on_share, off_share)


# Three people walk in across a robot's way and stop in a cup that opens toward it; the
# robot (the node's defaults: scan_enabled, so people tracking) is on its way east through
# them. ORCA alone slides into the cup and stands in the wedge of the people for good.
CUP_WALKERS = [{'name': f'p{k}', 'radius': 0.25, 'speed': 1.0, 'waypoints': [start, stop]}
               for k, (start, stop) in enumerate([([4.6, 2.5], [4.6, 0.0]),
                                                  ([4.1, 2.5], [4.1, 0.6]),
                                                  ([4.1, -2.5], [4.1, -0.6])])]


def _wall_between(context, drive, way_round):
    """Two robots, no map, their goals straight behind a 4 m wall only the scans show."""
    return run_fleet(context, ['robot1', 'robot2'], [(0.0, 0.0, 0.0), (4.0, 0.3, np.pi)],
                     [(4.0, 0.0), (0.0, 0.3)], [drive] * 2, [0.2] * 2,
                     {'drive': drive, 'scan_enabled': True, 'scan_way_round': way_round},
                     max_time=40.0, walls=np.array([[[2.0, -2.0], [2.0, 2.0]]]))


@pytest.mark.slow
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_robots_without_a_map_go_round_a_wall_their_scans_show(context, drive):
    """
    With scan_way_round the robots go round the wall's end; without it, they stand at it.

    ORCA alone slides along a wall only as far as the goal's direction leans along it: here
    it does not lean at all. Measured: both arrive in 14.5 s (holonomic) or 17.4 s
    (differential) with the way round; neither in 40 s without.
    """
    world, stats, arrival = _wall_between(context, drive, True)
    print(f'arrival {arrival} s with the way round; wall gap {world.min_wall_gap:.3f} m')
    assert arrival is not None, f'not all arrived: poses {world.pose.round(2).tolist()}'
    assert world.min_wall_gap >= 0.0 and world.min_gap >= 0.0
    assert stats['tick_errors'] == 0
    _, _, without = _wall_between(context, drive, False)
    assert without is None, 'the scene is no test: they got round without the way round'


def _among_walkers(context, name, drive, start, goal, walkers, radius, max_speed, max_time,
                   overrides, trace=None):
    """Run one robot among walkers, no walls, scans on; return (world, arrival time or None)."""
    s = scenario_from_dict({
        'robot_defaults': {'radius': radius, 'max_speed': max_speed, 'drive': drive},
        'robots': [{'name': 'robot1', 'start': list(start), 'goal': list(goal)}],
        'walkers': walkers}, name)
    world, _, arrival = run_fleet(
        context, ['robot1'], [s.robots[0].start], [s.robots[0].goal], [drive], [radius],
        dict({'drive': drive, 'scan_enabled': True}, **overrides), max_time=max_time,
        walls=np.zeros((0, 2, 2)), walkers=[r for r in s.robots if r.walker], trace=trace)
    return world, arrival


def _cup(context, drive, way_round):
    """Run the robot into the cup; return (world, arrival time or None)."""
    return _among_walkers(context, 'cup', drive, [0.0, 0.0, 0.0], [8.0, 0.0], CUP_WALKERS,
                          0.2, 0.5, 40.0, {'person_way_round': way_round})


# Two people walk in and stand either side of the robot's way: 1.06 m between them, the
# robot 0.6 m wide (0.23 m to spare each side).
GATE_WALKERS = [{'name': f'p{k}', 'radius': 0.3, 'speed': 1.0,
                 'waypoints': [[2.5, side * 3.0], [2.5, side * 0.83]]}
                for k, side in enumerate((1.0, -1.0))]


def _gate(context, drive, start):
    """Run a robot of radius 0.3 through the gate of two people; (arrival, y at the gate, gap)."""
    at_gate = []

    def trace(world):
        if not at_gate and world.pose[0, 0] >= 2.5:
            at_gate.append(float(world.pose[0, 1]))

    world, arrival = _among_walkers(context, 'gate', drive, start, [4.5, 0.0], GATE_WALKERS,
                                    0.3, 0.5, 30.0, {'radius': 0.3, 'max_speed': 0.5}, trace)
    return arrival, (at_gate or [None])[0], world.min_walker_gap


@pytest.mark.slow
@pytest.mark.parametrize('drive, start', [
    ('differential', (0.0, 0.0, 0.0)), ('differential', (0.0, 0.3, 0.5)),
    ('holonomic', (0.0, -0.4, -0.6))], ids=['differential', 'differential_askew', 'holonomic'])
def test_a_gap_between_two_people_that_the_robot_fits_is_passed(context, drive, start):
    """
    Two people stand either side of the way, 0.23 m to spare each side of the robot: it passes.

    The way round standing people planned from a differential robot's point ahead, with the
    disc grown by the lookahead that the solver needs there: the gap was 0.2 m narrower than
    the body's, open or shut by the grid's place, and the way flipped between the gap and
    round either person as the point moved by millimetres; the robot turned on the spot and
    never arrived in 30 s (from all five starts tried; holonomic 10.8-13.0 s). Now planned
    from the axle with the body's radius, on a grid fixed in the world: 13.0-16.0 s.
    """
    arrival, y_at_gate, gap = _gate(context, drive, start)
    print(f'{drive} from {start}: arrival {arrival} s, through the gate at y = {y_at_gate}, '
          f'gap to the people {gap:.3f} m')
    assert arrival is not None and arrival < 25.0
    assert y_at_gate is not None and abs(y_at_gate) < 0.2, 'it went round, not through'
    assert gap > 0.0


@pytest.mark.slow
@pytest.mark.parametrize('drive', ['holonomic', 'differential'])
def test_people_standing_in_the_way_are_gone_round_not_waited_in_the_wedge_of(context, drive):
    """
    With person_way_round the robot goes round the cup; without it, it stands in it.

    Measured: holonomic 19.3 s with, 28.4 s without (never within 40 s while people who
    stand were looked for person_time_horizon ahead); differential 19.9 s with, never
    without.
    """
    on_world, on_arrival = _cup(context, drive, True)
    off_world, off_arrival = _cup(context, drive, False)
    print(f'arrival {on_arrival} with the way round, {off_arrival} without; '
          f'gap {on_world.min_walker_gap:.3f} / {off_world.min_walker_gap:.3f} m; '
          f'without, it stood at {off_world.pose[0, :2].round(2).tolist()}')
    assert on_arrival is not None and on_world.min_walker_gap > 0.0
    assert off_arrival is None or off_arrival > on_arrival + 3.0, (
        'the scene is no test: the robot got out as soon without the way round')


# Three people walk in and stand round the robot's goal: either side of it and just beyond
# it, 0.4 m and 0.35 m from the robot's body when it is there (person_margin 0.3 m).
POCKET_WALKERS = [{'name': f'p{k}', 'radius': 0.3, 'speed': 1.0, 'waypoints': way}
                  for k, way in enumerate(([[4.0, 3.0], [4.0, 1.0]], [[4.0, -3.0], [4.0, -1.0]],
                                           [[7.0, 0.0], [4.95, 0.0]]))]


def _pocket(context, drive, start):
    """Run a robot of radius 0.3 to its goal among the standing people; (world, arrival)."""
    return _among_walkers(context, 'pocket', drive, start, [4.0, 0.0], POCKET_WALKERS, 0.3,
                          1.0, 30.0, {'radius': 0.3, 'max_speed': 1.0})


@pytest.mark.slow
@pytest.mark.parametrize('drive, start, within', [
    ('differential', (0.0, 0.0, 0.0), 13.0), ('differential', (0.0, 0.5, -0.3), 13.0),
    ('holonomic', (0.0, 0.0, 0.0), 10.5), ('holonomic', (0.0, -0.6, 0.0), 10.5)],
    ids=['differential', 'differential_askew', 'holonomic', 'holonomic_aside'])
def test_a_goal_among_standing_people_is_reached_without_creeping(context, drive, start,
                                                                  within):
    """
    People stand round the robot's goal (room for it and its margins): it drives in.

    4 m to go at 1 m/s. Standing people were avoided as far ahead as walkers
    (person_time_horizon, 5 s): the last metre toward the one beyond the goal went at a fifth
    of the gap per second; arrival after 18.2-21.4 s (differential), 11.5-11.9 s
    (holonomic). People who stand are now avoided time_horizon (2 s) ahead, as robots and
    walls: 9.9-10.0 s and 8.4-8.6 s.
    """
    world, arrival = _pocket(context, drive, start)
    print(f'{drive} from {start}: arrival {arrival} s, gap to the people '
          f'{world.min_walker_gap:.3f} m')
    assert arrival is not None and arrival < within
    assert world.min_walker_gap > 0.0
