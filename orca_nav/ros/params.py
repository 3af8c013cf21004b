"""
The orca_nav node's parameters on ROS: descriptors, declaration, ``ros2 param set``.

The parameters themselves (one table: names, defaults, types, ranges, per-robot overrides,
the unset and unlimited conventions) are ``orca_nav.control.parameters``, ROS-free, so that
the controller built without ROS is the one the node runs. Re-exported here for the node, the
launch helpers and the tools. In a params file a per-robot override is a nested mapping::

    /**:
      ros__parameters:
        robots: [robot1, robot2]
        radius: 0.2
        robot2:
          radius: 0.35                      # overrides the fleet radius for robot2
          odom_offset: [4.0, 0.0, 3.14159]  # odom frame of robot2 in the global frame

(``robot2.radius: 0.35`` on one line works too; on the command line
``-p robot2.radius:=0.35``). Floating-point values must be written with a decimal point
(``1.0``, not ``1``): ROS 2 types parameters by their YAML value and refuses an integer for a
double.

The node declares every parameter (``declare_and_resolve``), validates the declared values
at start-up and, on every ``ros2 param set``, the current values merged with the new ones
(``on_set``), so a bad set is refused as a whole; ``resolve`` turns accepted values into the
``Settings`` every consumer reads (the controller's FleetConfig and NavigationConfig, the
node's typed fleet values).
"""

from orca_nav.control.config import (  # noqa: F401 -- re-exported for the node
    FleetValues, resolve, Settings)
from orca_nav.control.parameters import (  # noqa: F401 -- the table, re-exported
    all_specs, check_robot_value, check_value, defaults, FLEET_BY_NAME, FLEET_PARAMS,
    footprint_warnings, FRAME_ID, NAMESPACE, PARAMS, ParamSpec, RELATIVE_TOPIC, ROBOT_BY_NAME,
    ROBOT_NAME, robot_param_name, ROBOT_PARAMS, robot_values, unknown_groups, unused_overrides,
    validate, without_commanded)

# The per-robot values of one parameter (the override, or the fleet value where unset).
per_robot = robot_values


def robot_topic(robots_namespace, robot, topic):
    """
    Name of a robot's topic: relative to the node's namespace unless robots_namespace is absolute.

    As ROS resolves names: for a node in /fleet, ``robot1/odom`` is /fleet/robot1/odom.

    >>> robot_topic('', 'robot1', 'odom'), robot_topic('fleet_a', 'robot1', 'odom')
    ('robot1/odom', 'fleet_a/robot1/odom')
    >>> robot_topic('/fleet_a/', 'robot1', 'odom'), robot_topic('/', 'robot1', 'odom')
    ('/fleet_a/robot1/odom', '/robot1/odom')
    """
    name = '/'.join(t for t in (robots_namespace.strip('/'), robot, topic) if t)
    return '/' + name if robots_namespace.startswith('/') else name


def descriptor(spec):
    """``rcl_interfaces/ParameterDescriptor`` of a spec (description, range, read-only, type)."""
    from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
    from rclpy.parameter import Parameter

    types = {'double': Parameter.Type.DOUBLE, 'integer': Parameter.Type.INTEGER,
             'bool': Parameter.Type.BOOL, 'string': Parameter.Type.STRING,
             'string_array': Parameter.Type.STRING_ARRAY,
             'double_array': Parameter.Type.DOUBLE_ARRAY}
    text = spec.description
    if spec.choices is not None:
        text += ' (one of: ' + ', '.join(repr(c) for c in spec.choices) + ')'
    d = ParameterDescriptor(name=spec.name, type=types[spec.type].value, description=text,
                            read_only=spec.read_only)
    if spec.range is not None and spec.type == 'double':
        d.floating_point_range = [FloatingPointRange(from_value=float(spec.range[0]),
                                                     to_value=float(spec.range[1]))]
    elif spec.range is not None and spec.type == 'integer':
        d.integer_range = [IntegerRange(from_value=int(spec.range[0]),
                                        to_value=int(spec.range[1]), step=1)]
    if spec.choices is not None:
        d.additional_constraints = 'one of: ' + ', '.join(repr(c) for c in spec.choices)
    return d


def declare_value(spec, values=None):
    """
    Value to pass to ``Node.declare_parameter``: the default, or its type for empty lists.

    rclpy types a parameter by its default, and an empty list would become a byte array.
    values : the parameters declared so far, for a spec whose default is another's value.
    """
    if spec.type == 'string_array' and not spec.default:
        from rclpy.parameter import Parameter
        return Parameter.Type.STRING_ARRAY
    if spec.default_from and values is not None:
        return values[spec.default_from]
    return spec.default


def _declare(node, name, spec, values=None):
    """
    Declare one parameter; an empty string list gets the value [] (not "no value").

    rclpy can only declare an empty string list without a value, and one parameter without a
    value makes rclpy's get_parameters service answer nothing at all (``ros2 param dump``
    printed ``{}``). So such a parameter is declared writable, given [] and then made
    read-only if its spec says so.
    """
    from rclpy.exceptions import ParameterUninitializedException
    from rclpy.parameter import Parameter

    d = descriptor(spec)
    d.name = name
    if not (spec.type == 'string_array' and not spec.default):
        node.declare_parameter(name, declare_value(spec, values), d)
        return
    read_only = d.read_only
    d.read_only = False
    node.declare_parameter(name, Parameter.Type.STRING_ARRAY, d)
    try:
        node.get_parameter(name)
    except ParameterUninitializedException:
        node.set_parameters([Parameter(name, Parameter.Type.STRING_ARRAY, [])])
    if read_only:
        final = descriptor(spec)  # a new one: the node keeps a reference to d
        final.name = name
        node.set_descriptor(name, final)


def _plain(value):
    """Return a value as validate() expects it: lists for arrays, [] for unset arrays."""
    if value is None:
        return []
    if not isinstance(value, (str, bool, int, float)):
        return list(value)  # rclpy returns double arrays as array.array
    return value


def declare_and_resolve(node):
    """
    Declare every parameter on an rclpy node (with descriptors) and return its ``Settings``.

    The fleet parameters come first: the per-robot ones depend on ``robots`` and
    ``observed_robots`` (without the commanded robots: see ``without_commanded``).
    Raises ValueError('invalid parameters: ...') with the reason.
    """
    from rclpy.exceptions import ParameterUninitializedException

    def value(name):
        try:
            return _plain(node.get_parameter(name).value)
        except ParameterUninitializedException:  # a typed list with no value: empty
            return []

    values = {}
    for spec in FLEET_PARAMS:
        _declare(node, spec.name, spec, values)
        values[spec.name] = value(spec.name)
    values['observed_robots'] = without_commanded(values['robots'], values['observed_robots'])
    for name, spec in all_specs(values['robots'], values['observed_robots']):
        if name not in values:
            _declare(node, name, spec, values)
            values[name] = value(name)
    error = validate(values)
    if error:
        raise ValueError(f'invalid parameters: {error}')
    return resolve(values)


def on_set(settings, parameters):
    """
    Check a ``ros2 param set`` against the whole set: (SetParametersResult, new Settings|None).

    The current values merged with the new ones must validate; otherwise nothing changes.
    """
    from rcl_interfaces.msg import SetParametersResult

    values = dict(settings.values)
    for p in parameters:
        if p.name in values:
            values[p.name] = _plain(p.value)
    error = validate(values)
    if error:
        return SetParametersResult(successful=False, reason=error), None
    return SetParametersResult(successful=True), resolve(values)
