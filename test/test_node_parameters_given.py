"""
The node's parameters as launch files and params files give them, real rclpy (domain 70).

Every parameter has a value (so ``ros2 param dump`` works: one without a value made rclpy's
get_parameters service answer nothing); overrides no parameter takes are reported by name;
a node never observes the robots it commands; robots_namespace moves the robots' topics.
"""

from orca_nav.ros.node import OrcaNavNode
from orca_nav.testing.rig import spin_until
import pytest
from rcl_interfaces.srv import GetParameters, ListParameters
import rclpy
from rclpy.executors import SingleThreadedExecutor

DOMAIN_ID = 70


def _node(context, tmp_path, text, **kwargs):
    """Start the node with a params file (``/**: ros__parameters:`` + text)."""
    f = tmp_path / 'p.yaml'
    f.write_text('/**:\n  ros__parameters:\n' + text)
    return OrcaNavNode(context=context, cli_args=['--ros-args', '--params-file', str(f)],
                       **kwargs)


def _call(executor, client, request):
    spin_until(executor, client.service_is_ready, what=client.srv_name)
    future = client.call_async(request)
    spin_until(executor, future.done, what=f'the reply of {client.srv_name}')
    return future.result()


def test_every_parameter_is_readable_over_the_parameter_services(context, tmp_path):
    """
    What ros2 param dump does: list every parameter, then get them all, over DDS.

    Central layout, no observed robots, empty groups: every value comes back.
    """
    node = _node(context, tmp_path, '    robots: [robot1, robot2]\n')
    client_node = rclpy.create_node('dump_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(client_node)
    try:
        names = _call(executor, client_node.create_client(ListParameters,
                                                          '/orca_nav/list_parameters'),
                      ListParameters.Request()).result.names
        assert 'observed_robots' in names and 'robot1.groups_to_ignore' in names
        values = _call(executor, client_node.create_client(GetParameters,
                                                           '/orca_nav/get_parameters'),
                       GetParameters.Request(names=names)).values
        assert len(values) == len(names)
        by_name = dict(zip(names, values))
        assert list(by_name['observed_robots'].string_array_value) == []
        assert list(by_name['robots'].string_array_value) == ['robot1', 'robot2']
        assert node.describe_parameter('observed_robots').read_only
        assert not node.set_parameters([rclpy.parameter.Parameter(
            'observed_robots', value=['x'])])[0].successful
    finally:
        executor.shutdown()
        client_node.destroy_node()
        node.destroy_node()


def test_overrides_no_parameter_takes_are_named(context, tmp_path):
    """A misspelt fleet or per-robot name, and other robots' values, are reported."""
    node = _node(context, tmp_path, '    robots: [robot1, robot2]\n    radious: 0.3\n'
                                    '    robot2:\n      avoidance_weigth: 1.0\n'
                                    '    robot9:\n      radius: 0.3\n')
    try:
        assert node.unused_parameters == ['radious', 'robot2.avoidance_weigth', 'robot9.radius']
        assert node.settings.fleet.radius.tolist() == [0.2, 0.2]
    finally:
        node.destroy_node()


def test_a_node_does_not_observe_the_robots_it_commands(context, tmp_path):
    """One file listing the whole fleet as observed_robots serves every robot's node."""
    node = _node(context, tmp_path,
                 '    observed_robots: [robot1, robot2, robot3]\n', namespace='robot2',
                 parameter_overrides=[rclpy.parameter.Parameter('robots', value=['robot2'])])
    try:
        assert node.settings.names == ('robot2', 'robot1', 'robot3')
        assert node.settings.n_controlled == 1
    finally:
        node.destroy_node()


@pytest.mark.parametrize('namespace, prefix', [('', '/robot1'), ('/fleet_a', '/fleet_a/robot1')])
def test_robots_namespace_moves_the_robot_topics(context, tmp_path, namespace, prefix):
    """robots_namespace: fleet_a -> /fleet_a/robot1/odom, cmd_vel, cancel, ..."""
    node = _node(context, tmp_path, f"    robots: [robot1]\n    robots_namespace: '{namespace}'\n")
    try:
        # Odometry and scans are subscribed by the node's intake node (taken by the tick).
        subscribed = {s.topic_name for n in (node, node.intake) for s in n.subscriptions}
        published = {p.topic_name for p in node.publishers}
        assert {f'{prefix}/odom', f'{prefix}/goal_pose', f'{prefix}/cancel',
                f'{prefix}/plan', f'{prefix}/orca_priority', '/map'} <= subscribed
        assert {f'{prefix}/cmd_vel', f'{prefix}/orca_status', f'{prefix}/orca_route'} <= published
    finally:
        node.destroy_node()


def test_people_are_tracked_by_default_where_there_are_scans(context, tmp_path):
    """track_people follows scan_enabled unless given; given true without scans it is refused."""
    node = _node(context, tmp_path, '    robots: [robot1]\n    scan_enabled: true\n')
    try:
        assert node.get_parameter('track_people').value is True
        assert node.settings.fleet.people is not None
    finally:
        node.destroy_node()
    node = _node(context, tmp_path, '    robots: [robot1]\n')
    try:
        assert node.get_parameter('track_people').value is False
        assert node.settings.fleet.people is None
    finally:
        node.destroy_node()
    with pytest.raises(ValueError, match='track_people needs scan_enabled'):
        _node(context, tmp_path, '    robots: [robot1]\n    track_people: true\n')
