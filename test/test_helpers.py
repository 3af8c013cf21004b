"""The shared test helpers (test/helpers.py) over real rclpy: clock, world, spin_until."""

import math

from geometry_msgs.msg import Twist
from helpers import matched, SimClock, spin_until, World
from nav_msgs.msg import Odometry
from orca_nav.sim.world import integrate
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import LaserScan

DOMAIN_ID = 34


@pytest.fixture
def rig(context):
    """Yield a driver node (clock, world), a probe node and their executor."""
    driver = rclpy.create_node('driver', context=context)
    probe = rclpy.create_node('probe', context=context,
                              parameter_overrides=[Parameter('use_sim_time', value=True)])
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(driver)
    executor.add_node(probe)
    yield driver, probe, executor
    executor.shutdown()
    driver.destroy_node()
    probe.destroy_node()


def test_spin_until_fails_with_what_it_waited_for(rig):
    _, _, executor = rig
    assert spin_until(executor, lambda: True) == 0
    with pytest.raises(AssertionError, match='waiting for nothing'):
        spin_until(executor, lambda: False, timeout=0.05, what='nothing')


def test_sim_clock_sets_the_time_of_a_use_sim_time_node(rig):
    driver, probe, executor = rig
    clock = SimClock(driver, start=5.0)
    spin_until(executor, lambda: clock.pub.get_subscription_count() > 0)
    clock.publish()
    spin_until(executor, lambda: probe.get_clock().now().nanoseconds == 5_000_000_000)
    assert clock.advance(0.25) == pytest.approx(5.25)
    spin_until(executor, lambda: probe.get_clock().now().nanoseconds == 5_250_000_000)


def test_world_integrates_commands_and_publishes_odometry_and_scans(rig):
    driver, probe, executor = rig
    world = World(driver, ['a', 'b'], [(0.0, 0.0, 0.0), (0.0, 2.0, math.pi / 2)],
                  drives=['holonomic', 'differential'], radii=[0.2, 0.3],
                  offsets=[(0.0, 0.0, 0.0), (0.0, 2.0, math.pi / 2)],
                  walls=[[[2.0, -1.0], [2.0, 1.0]]], scan_beams=4)
    odom, scans = {}, []
    for r in ('a', 'b'):
        probe.create_subscription(Odometry, f'/{r}/odom',
                                  lambda msg, r=r: odom.__setitem__(r, msg), 10)
    probe.create_subscription(LaserScan, '/a/scan', scans.append, qos_profile_sensor_data)
    pubs = {r: probe.create_publisher(Twist, f'/{r}/cmd_vel', 10) for r in ('a', 'b')}
    spin_until(executor, matched(list(pubs.values()) + world.odom_pubs + world.scan_pubs[:1]))
    pubs['a'].publish(Twist())
    twist = Twist()
    twist.linear.x, twist.linear.y, twist.angular.z = 0.5, 0.4, 1.0   # vy dropped (differential)
    pubs['b'].publish(twist)
    a = Twist()
    a.linear.x, a.linear.y = 0.3, -0.4
    pubs['a'].publish(a)
    spin_until(executor, lambda: world.cmd_count.tolist() == [2, 1])
    world.integrate(1.0)
    # a: a straight holonomic move; b: a unicycle arc, exactly as the simulator integrates it.
    assert world.pose[0] == pytest.approx([0.3, -0.4, 0.0])
    expected = integrate((0.0, 2.0, math.pi / 2), 0.5, 0.0, 1.0, 1.0)
    assert world.pose[1, :2] == pytest.approx(expected[:2], abs=1e-12)
    assert math.remainder(world.pose[1, 2] - expected[2], 2 * math.pi) == pytest.approx(0.0)
    world.publish_odometry()
    world.publish_scans()
    spin_until(executor, lambda: len(odom) == 2 and scans)
    assert odom['a'].pose.pose.position.x == pytest.approx(0.3)
    # b's odometry frame starts at its start pose facing +y: its forward motion is +x there.
    x_b = odom['b'].pose.pose.position
    assert (x_b.x, x_b.y) == pytest.approx((0.5 * math.sin(1.0), 0.5 * (1 - math.cos(1.0))))
    # a at (0.3, -0.4) facing +x; beam k at -pi + k pi / 2: the wall straight ahead at 1.7 m.
    assert scans[-1].ranges[2] == pytest.approx(1.7)
    assert world.min_wall_gap == pytest.approx(1.7 - 0.2)
