"""
The node's intake: a node that no executor spins, whose subscriptions the tick takes from.

The hot path of the orca_nav node: odometry, localisation poses and scans are not delivered
to a Python callback per message (see orca_nav.ros.inputs). Their subscriptions (keep-last 1)
belong to this second node, ``<node>_intake`` in the node's namespace, and each tick takes the
newest message of every robot from them. ``IntakeNode.of(node)`` builds it for an orca_nav
node from that node's settings; ``read`` gives the tick its ``FleetInputs``.
"""

from geometry_msgs.msg import PoseWithCovarianceStamped
from nav_msgs.msg import Odometry
from orca_nav.ros import params as P
from orca_nav.ros.inputs import OdometryStore, PoseStore, ScanStore
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import LaserScan

# Odometry and scans: the newest message only, best effort so that reliable and best-effort
# publishers both match. The tick takes it from the middleware (see orca_nav.ros.inputs).
NEWEST_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                        reliability=ReliabilityPolicy.BEST_EFFORT)
# Localisation poses: AMCL publishes amcl_pose reliable and transient local; so is this (the
# newest pose, also one published before the node started). Best-effort publishers do not match.
POSE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL)


class IntakeNode(Node):
    """
    Odometry (every robot), localisation poses (robots with a ``pose_topic``) and scans.

    Scans only of the commanded robots, and only with ``scan_enabled``. Public stores:
    ``odometry`` (OdometryStore), ``poses`` (PoseStore), ``scans`` (ScanStore).
    """

    def __init__(self, name, settings, clock, context=None, namespace=''):
        """
        Subscribe the robots of ``settings`` (orca_nav.ros.params.Settings).

        ``clock`` stamps the receive times (the orca_nav node's: ROS time in a simulation).
        The node keeps the command line's topic remappings; its own name wins over a node
        name remapping (launch's ``name=``) that would otherwise give it the orca_nav node's,
        and ``clock``'s kind wins over a ``use_sim_time`` for every node of the process (a
        launch's SetParameter): the two nodes are on one clock.
        """
        super().__init__(name, context=context, namespace=namespace,
                         cli_args=['--ros-args', '-r', f'__node:={name}'],
                         parameter_overrides=[Parameter('use_sim_time',
                                                        value=clock.ros_time_is_active)],
                         start_parameter_services=False, enable_rosout=False)
        self.odometry = OdometryStore(len(settings.names), clock, self.context)
        self.poses = PoseStore(len(settings.names), clock, self.context)
        self.scans = ScanStore(settings.n_controlled, clock, self.context)
        subscribed = False
        try:  # a topic DDS refuses (too long) must not leave this node behind
            self._subscribe(settings)
            subscribed = True
        finally:
            if not subscribed:
                self.destroy_node()

    def _subscribe(self, settings):
        """Create every robot's subscriptions and hand them to the stores."""
        p, names, c = settings.params, settings.names, settings.n_controlled
        pose_topics = P.per_robot(settings.values, names, 'pose_topic')
        for i, robot in enumerate(names):
            def topic(name, robot=robot):
                return P.robot_topic(p.robots_namespace, robot, name)
            # raw=True: the tick reads the few numbers it needs from the serialized message.
            self.odometry.attach(i, self.create_subscription(
                Odometry, topic(p.odom_topic), _never, NEWEST_QOS, raw=True))
            if pose_topics[i]:
                self.poses.attach(i, self.create_subscription(
                    PoseWithCovarianceStamped, topic(pose_topics[i]), _never, POSE_QOS))
            if i < c and p.scan_enabled:
                self.scans.attach(i, self.create_subscription(
                    LaserScan, topic(p.scan_topic), _never, NEWEST_QOS, raw=True))

    @classmethod
    def of(cls, node, settings=None):
        """Build the intake of an orca_nav ``node``: ``<name>_intake`` in its namespace."""
        return cls(f'{node.get_name()}_intake', settings or node.settings, node.get_clock(),
                   node.context, node.get_namespace())

    def read(self, global_frame, scan_quota=None):
        """
        Take the new messages: return (FleetInputs, [(robot row, warning), ...]).

        ``scan_quota``: read the scans of this many robots at most (None: all; see ScanQuota).
        """
        warnings = self.odometry.update()
        inputs = self.odometry.inputs
        warnings += self.poses.update(inputs, global_frame)
        inputs.scans = self.scans.take(scan_quota)
        return inputs, warnings


def _never(msg):
    """Do nothing: the callback of the taken subscriptions (no executor spins their node)."""
