"""What the node publishes per robot: commands, status, routes; and the fleet's markers."""

import json
import time

from nav_msgs.msg import Path
import numpy as np
from orca_nav.control import RobotState
from orca_nav.ros import messages
from orca_nav.ros import params as P
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

# Commands: reliable, as Nav2 and teleop use them.
RELIABLE_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                          reliability=ReliabilityPolicy.RELIABLE)
# Status and routes: latched, so a late subscriber gets the current one at once.
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                         reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
SHUTDOWN_ACK_TIMEOUT = 0.5  # [s] waiting for subscribers to acknowledge the zero commands
# Changed routes published per tick at most (about 0.5 ms each with the message): when a fleet is
# re-planned at once, the routes go out over a few ticks instead of stretching one tick.
ROUTES_PER_TICK = 3
NO_CLOCK = 'no_clock'  # status state while use_sim_time waits for /clock
STARTING = 'starting'  # status state while the numba kernels compile (orca_nav.ros.startup)


class FleetOutputs:
    """
    The publishers of one node.

    ``/<r>/cmd_vel``, ``/<r>/orca_status`` and ``/<r>/orca_route`` per commanded robot, and
    ``~/markers``. Public counters: ``commands_published``, ``states``.
    """

    def __init__(self, node, settings):
        """Create the publishers on ``node`` for the commanded robots of ``settings``."""
        p = settings.params
        self._node = node
        self._names = settings.names
        self._frame = p.global_frame
        self._stamped = p.cmd_vel_stamped
        c = settings.n_controlled
        robots = settings.names[:c]
        # Commands are published serialized (see CommandEncoder): one tick publishes C of them.
        self._encoder = messages.CommandEncoder(p.cmd_vel_stamped,
                                                [r + '/base_link' for r in robots])

        def topic(robot, name):
            return P.robot_topic(p.robots_namespace, robot, name)
        command_type = type(messages.new_command(p.cmd_vel_stamped))
        self._cmd = [node.create_publisher(command_type, topic(r, p.cmd_vel_topic),
                                           RELIABLE_QOS) for r in robots]
        self._topic = topic
        self._status_topic, self._route_topic = p.status_topic, p.route_topic
        # Status and route publishers are made by add(): the node makes a large fleet's after
        # every robot's odometry, goal and cmd_vel topics (see OrcaNavNode.make_extras).
        self._status = [None] * c
        self._route = [None] * c
        self._added = np.zeros(c, bool)
        self._markers = node.create_publisher(MarkerArray, '~/markers', 1)
        self._tracks = (node.create_publisher(String, '~/tracks', 10)
                        if settings.fleet.people is not None else None)
        self.last_commands = np.zeros((c, 3))  # vx, vy, wz per commanded robot
        self.commands_published = 0            # command rounds (one message per robot)
        self.states = [None] * c               # last published RobotState per robot
        self._give_way = np.zeros((c, 2), bool)  # last published (priority, locked)
        self._route_versions = np.full(c, -1, np.int64)
        self._route_markers = {}  # robot -> (route version, its LINE_STRIP marker)
        self._groups = P.per_robot(settings.values, settings.names, 'avoidance_group')
        self._starting_sent = False  # the status 'starting' is out (FleetOutputs.starting)
        self._held = None  # (state, reason): 'starting' or 'no_clock', until a tick's states

    def add(self, rows):
        """Make the status and route publishers of the commanded robots ``rows``."""
        for i in rows:
            robot = self._names[i]
            self._status[i] = self._node.create_publisher(
                String, self._topic(robot, self._status_topic), LATCHED_QOS)
            self._route[i] = self._node.create_publisher(
                Path, self._topic(robot, self._route_topic), LATCHED_QOS)
            self._added[i] = True
            if self._held is not None:  # the status the others were given meanwhile
                self._status[i].publish(messages.status_message(robot, self._held[0],
                                                                reason=self._held[1]))

    def reconfigure(self, settings):
        """
        Use new settings (a ``ros2 param set``): frame and groups; publish again in them.

        Every route and status is published again at the next tick (latched: a late
        subscriber gets the new frame and group); ~/tracks appears when tracking is set on.
        """
        self._frame = settings.params.global_frame
        self._groups = P.per_robot(settings.values, settings.names, 'avoidance_group')
        self._route_versions[:] = -1
        self._route_markers = {}
        self.states = [None] * len(self.states)
        if settings.fleet.people is not None and self._tracks is None:
            self._tracks = self._node.create_publisher(String, '~/tracks', 10)

    def _now(self):
        return self._node.get_clock().now().to_msg()

    def tracks(self, result):
        """
        Publish the moving tracks avoided this tick on ``~/tracks`` (JSON), when tracking.

        ``{"stamp": t [s], "frame": global_frame, "tracks": [{"id", "x", "y", "vx", "vy",
        "radius"}, ...]}``, positions and velocities in the global frame [m, m/s].
        """
        if self._tracks is None:
            return
        m = result.moving
        rows = np.column_stack([m.position, m.velocity, m.radius]).round(3).tolist()
        tracks = [dict(zip(('x', 'y', 'vx', 'vy', 'radius'), row), id=int(k))
                  for k, row in zip(m.id, rows)]
        self._tracks.publish(String(data=json.dumps(
            {'stamp': round(result.time, 3), 'frame': self._frame, 'tracks': tracks})))

    def commands(self, cmd):
        """Publish (C, 3) body-frame commands, one message per commanded robot."""
        stamp = (self._node.get_clock().now().seconds_nanoseconds() if self._stamped
                 else None)
        for pub, data in zip(self._cmd, self._encoder.encode(cmd, stamp)):
            pub.publish(data)
        self.last_commands = cmd
        self.commands_published += 1

    def status(self, result):
        """Publish the status of every robot whose state (or priority, lock) changed (latched)."""
        self._held = None  # a robot added from now on gets its state
        give_way = np.column_stack([result.priority, result.locked])
        changed = (give_way != self._give_way).any(axis=1)
        for i, state in enumerate(result.states):
            if self._added[i] and (state != self.states[i] or changed[i]):
                self.states[i] = state
                self._give_way[i] = give_way[i]
                goal = result.goals[i] if result.has_goal[i] else None
                self._status[i].publish(messages.status_message(
                    self._names[i], state.value, goal, float(result.distance[i]),
                    result.reasons[i], weight=float(result.weights[i]),
                    group=self._groups[i], priority=bool(give_way[i, 0]),
                    locked=bool(give_way[i, 1])))

    def no_clock(self, reason):
        """
        Publish every robot's status as ``no_clock`` with the ``reason`` (no /clock yet).

        The states are forgotten, so that each robot's next state is published again.
        """
        self._held = (NO_CLOCK, reason)
        for i in np.flatnonzero(self._added):
            self._status[i].publish(messages.status_message(
                self._names[i], self._held[0], reason=self._held[1]))
        self.states = [None] * len(self.states)

    def starting(self, reason):
        """
        Publish zero commands to every robot, and its status ``starting`` once (latched).

        While the kernels compile; the states are forgotten, so that each robot's first
        state after is published.
        """
        self.commands(np.zeros((len(self._cmd), 3)))
        if self._starting_sent:
            return
        self._starting_sent = True
        self._held = (STARTING, reason)
        for i in np.flatnonzero(self._added):
            self._status[i].publish(messages.status_message(
                self._names[i], self._held[0], reason=self._held[1]))
        self.states = [None] * len(self.states)

    def routes(self, routes):
        """Publish routes that changed (an empty Path: no route), ROUTES_PER_TICK at most."""
        changed = np.flatnonzero((routes.version != self._route_versions) & self._added)
        for i in changed[:ROUTES_PER_TICK]:
            self._route_versions[i] = routes.version[i]
            points = routes.points[i] if routes.routed[i] else np.zeros((0, 2))
            self._route[i].publish(messages.path_message(points, self._frame, self._now()))

    def markers(self, result, radius, footprints=None):
        """
        Publish the fleet's MarkerArray: discs, footprints, velocities, goals, routes, carrots.

        footprints : (N,) each robot's (K, 2) footprint in its base frame, or None (the
        config's ``footprint``); drawn at the robots' yaws (``result.yaws``).

        Only while someone subscribes (RViz): with a thousand robots the array takes tens of
        milliseconds to build, between two ticks.
        """
        if not self._markers.get_subscription_count():
            return
        n, c = len(self._names), len(self._cmd)
        goals, has_goal = np.zeros((n, 2)), np.zeros(n, bool)
        goals[:c], has_goal[:c] = result.goals, result.has_goal
        states = [s.value for s in result.states] + [RobotState.OBSERVED.value] * (n - c)
        nav = result.routes
        carrots = np.where(nav.routed[:, None], nav.carrot, np.nan)
        stamp = self._now()
        lines = []
        for i, points in enumerate(nav.points):  # a route's marker is built once per route
            cached = self._route_markers.get(i)
            if points is None or len(points) < 2:
                lines.append(None)
                continue
            if cached is None or cached[0] != nav.version[i]:
                cached = (nav.version[i], messages.route_marker(self._frame, stamp, i, points))
                self._route_markers[i] = cached
            lines.append(cached[1])
        self._markers.publish(messages.build_markers(
            self._frame, stamp, self._names, result.positions, radius, result.velocities,
            goals, has_goal, states, result.known, lines, carrots, footprints, result.yaws))

    def matched(self):
        """Return True once every command topic has a subscriber (tests and tools wait)."""
        return all(pub.get_subscription_count() > 0 for pub in self._cmd)

    def stop_all(self, wait=True):
        """Publish a zero command to every commanded robot; optionally wait for delivery."""
        self.commands(np.zeros((len(self._cmd), 3)))
        if wait:
            deadline = time.monotonic() + SHUTDOWN_ACK_TIMEOUT
            for pub in self._cmd:
                left = deadline - time.monotonic()
                if left <= 0.0:
                    break
                pub.wait_for_all_acked(Duration(nanoseconds=int(left * 1e9)))
