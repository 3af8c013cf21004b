"""
Localisation poses over DDS: the node places a robot by its amcl_pose and gives it room.

The node under test and test_node_world's lock-stepped World run in one executor on a private
ROS context (domain 75, DDS on loopback), on simulated time. ``mover`` (commanded) drives from
(-2.5, 0) to (2.5, 0) through where ``parked`` (observed, immovable) really stands, at
(0, 0.05). parked's odometry may drift (its odometry frame slides, so its odometry pose moves
0.3 m/s sideways while it stands still); its ``amcl_pose`` (PoseWithCovarianceStamped,
reliable, transient local, as AMCL publishes it) says where it is, every 0.5 s.
"""

import math

from geometry_msgs.msg import PoseWithCovarianceStamped
import numpy as np
from orca_nav.ros import messages
from orca_nav.ros.intake import POSE_QOS

from helpers import NodeRig  # noqa: I100 -- test/ is on sys.path
from test_node_world import close_run, World  # noqa: I100 -- test/ is on sys.path

DOMAIN_ID = 75
RATE = 10.0
RADIUS = 0.2
PARKED = (0.0, 0.05)
POSE_EVERY = 5  # ticks between two amcl_pose messages


def run(context, drift=0.0, sigma=0.02, localised=True, bad_pose_at=None, max_time=14.0):
    """
    Run the scene; return (world, node facts) with the smallest centre distance of the pair.

    drift [m/s]: parked's odometry pose moves so fast along +y while it stands still.
    bad_pose_at: a tick at which a pose in the wrong frame is sent instead of a good one.
    """
    names = ['mover', 'parked']
    starts = [(-2.5, 0.0, 0.0), PARKED + (0.0,)]
    given = {'observed_robots': ['parked'], 'radius': RADIUS, 'max_speed': 0.5,
             'publish_markers': False}
    if localised:
        given['parked.pose_topic'] = 'amcl_pose'
    world = World(context, names, starts, ['holonomic'] * 2, [RADIUS] * 2)
    pose_pub = world.node.create_publisher(PoseWithCovarianceStamped, '/parked/amcl_pose',
                                           POSE_QOS)
    # The node's own executor; the rig's clock is the world's time.
    rig = NodeRig(context, ['mover'], rate=RATE, executor='node', start=world.t, **given)
    rig.executor.add_node(world.node)
    node = rig.node
    facts = {'closest': math.inf, 'placement_error': 0.0, 'odometry_error': 0.0}
    try:
        rig.start(world.odom_pubs + world.goal_pubs[:1] + ([pose_pub] if localised else []))
        world.goal_pubs[0].publish(messages.make_goal(2.5, 0.0, frame_id='map'))
        rig.spin_until(lambda: node.controller.has_goal.all())
        dt = 1.0 / RATE
        tick = 0
        while world.t < max_time:
            world.offsets[1, 1] -= drift * dt  # the odometry frame slides: odom y grows
            stamp = world.odometry(1).header.stamp
            stamp.nanosec = int(round((world.t - int(world.t)) * 1e9))
            for i, pub in enumerate(world.odom_pubs):
                msg = world.odometry(i)
                msg.header.stamp = stamp  # World stamps whole seconds only
                pub.publish(msg)
            sent_pose = tick % POSE_EVERY == 0
            if sent_pose:
                frame = 'odom' if tick == bad_pose_at else 'map'
                pose_pub.publish(messages.make_localisation(
                    *world.pose[1], sigma=sigma, frame_id=frame, stamp=stamp))
            rig.spin_until(lambda: all(node.odometry.waiting(i) for i in range(2))
                           and (not (sent_pose and localised) or node.poses.waiting(1)))
            # The clock to world.t + dt: a tick, and its command received.
            rig.tick(lambda: world.cmd_count[0] == node.outputs.commands_published)
            placed = node.last_result.positions[1]
            err = float(np.hypot(*(placed - world.pose[1, :2])))
            facts.setdefault('errors', []).append(round(err, 3))
            facts['placement_error'] = max(facts['placement_error'], err)
            odom = world.odometry(1).pose.pose.position
            facts['odometry_error'] = max(facts['odometry_error'], float(np.hypot(
                odom.x - world.pose[1, 0], odom.y - world.pose[1, 1])))
            world.integrate(dt)
            world.pose[1] = PARKED + (0.0,)  # parked is not commanded: it stays
            facts['closest'] = min(facts['closest'],
                                   float(np.hypot(*(world.pose[0, :2] - world.pose[1, :2]))))
            tick += 1
        facts['arrived'] = bool(np.hypot(world.pose[0, 0] - 2.5, world.pose[0, 1]) < 0.15)
        stats = node.tick_stats()
        facts.update({key: stats[key]
                      for key in ('poses_received', 'poses_rejected', 'tick_errors')})
        return world, facts
    finally:
        close_run(rig, world)


def test_drifting_odometry_robot_is_placed_by_its_amcl_pose(context):
    """
    Place a robot whose odometry drifts by its amcl_pose: the others avoid it where it is.

    parked's odometry drifts 0.3 m/s (4 m in the run); a pose in the wrong frame is refused
    without effect. Control run without pose_topic: the node believes the odometry and mover
    drives into parked.
    """
    world, facts = run(context, drift=0.3, bad_pose_at=3 * POSE_EVERY)
    print(f"localised: closest {facts['closest']:.3f} m, placement error max "
          f"{facts['placement_error']:.3f} m, odometry error max {facts['odometry_error']:.2f} m")
    assert facts['odometry_error'] > 3.5
    # Between two poses the drift since the last one accumulates: 4 ticks' worth, 9 around the
    # refused pose (0.03 m a tick).
    assert facts['placement_error'] < 0.3 / RATE * (2 * POSE_EVERY - 1) + 0.01
    # At the ticks of a good pose (stamped as the odometry) it is exact.
    at_pose = [e for k, e in enumerate(facts['errors'])
               if k % POSE_EVERY == 0 and k != 3 * POSE_EVERY]
    assert max(at_pose) < 0.005, at_pose
    assert facts['closest'] >= 2 * RADIUS, facts
    assert facts['arrived'] and facts['tick_errors'] == 0
    assert facts['poses_rejected'] == 1
    _, control = run(context, drift=0.3, localised=False)
    print(f"odometry alone: closest {control['closest']:.3f} m, placement error max "
          f"{control['placement_error']:.2f} m")
    assert control['placement_error'] > 3.5
    assert control['closest'] < 2 * RADIUS  # contact: it avoided a robot that was elsewhere


def test_growing_covariance_gives_more_room(context):
    """Pass parked farther when its amcl_pose covariance is larger."""
    _, small = run(context, sigma=0.02)
    _, large = run(context, sigma=0.2)
    print(f"passing distance: sigma 0.02 {small['closest']:.3f} m, "
          f"sigma 0.2 {large['closest']:.3f} m")
    assert small['closest'] >= 2 * RADIUS and small['arrived'] and large['arrived']
    # 2 x 0.2 = 0.4 m more radius: at least 0.3 m farther, give or take ORCA's slack.
    assert large['closest'] > small['closest'] + 0.3
