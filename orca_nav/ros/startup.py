"""
What the node says when it starts: what it controls, and the parameters ROS 2 would ignore.

ROS 2 ignores a parameter override that no declared parameter takes (a misspelt name, a robot
the node does not know) without a word: ``log_start`` says so, with the nearest name.
"""

from orca_nav.ros import params as P

SHOWN_ROBOTS = 10  # robot names in the start-up line at most (one short line)


def log_start(node):
    """
    Log an orca_nav node's start: robots, dropped observers, unused overrides, unknown groups.

    Misspelt parameter names are logged as WARNING, with the nearest parameter; overrides of
    robots the node neither commands nor observes as INFO (a shared params file). Returns the
    unused override names (misspelt first), the node's ``unused_parameters``.
    """
    p, c = node.settings.params, node.settings.n_controlled
    robots = list(node.settings.names)
    shown = robots[:min(c, SHOWN_ROBOTS)] + (['...'] if c > SHOWN_ROBOTS else [])
    node.get_logger().info(f'controlling {c} robot(s) {shown}, observing '
                           f'{len(robots) - c}, at {p.rate} Hz')
    given = node.get_parameter('observed_robots').value or []
    dropped = [o for o in given if o in robots[:c]]
    if dropped:
        node.get_logger().info(f'observed_robots: {dropped} not observed: this node '
                               'commands them')
    # rclpy has no public accessor for the overrides it was given (params files, -p).
    overrides = list(getattr(node, '_parameter_overrides', {}))
    declared = list(node.get_parameters_by_prefix(''))
    misspelt, other = P.unused_overrides(overrides, declared, robots)
    for name, hint in misspelt:
        suggestion = f' (did you mean {hint!r}?)' if hint else ''
        node.get_logger().warning(f'parameter {name!r} is not a parameter of this node'
                                  f'{suggestion}: ignored')
    if other:
        node.get_logger().info(f'parameters of robots this node neither commands nor '
                               f'observes, ignored: {other}')
    unknown = P.unknown_groups(node.settings.values)
    if unknown:
        node.get_logger().warning(f'groups_to_ignore names groups no robot belongs to: '
                                  f'{unknown} (allowed; check the spelling)')
    return [name for name, _ in misspelt] + other
