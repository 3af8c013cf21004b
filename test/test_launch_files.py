"""
The launch files' own wiring, without a ROS install: launch and launch_ros stand-ins.

launch and launch_ros are not on PyPI (test_launch.py runs the files with the real ones where
ROS is installed). Here each launch file is loaded with small stand-ins for the few launch
classes it uses, which keep what the file gives them, and "launched" as launch does it: every
``name:=value`` given becomes a launch configuration (declared or not), a declared argument not
given takes its default, an include sets its arguments and runs the included file, an
OpaqueFunction runs with the context. So these tests see what the file itself passes on: all
the given arguments (a misspelt name is refused), the arguments ``--show-args`` lists, a fixed
layout, and how node and demo exits are judged.
"""

import importlib.util
from pathlib import Path
import sys
import types

from orca_nav.ros import fleet
import pytest

REPO = Path(__file__).resolve().parents[1]
LAUNCH = REPO / 'launch'
CONFIG = REPO / 'config' / 'orca_nav.yaml'


class _Action:
    """A stand-in launch action: keeps its arguments."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class LaunchDescription(_Action):
    """launch.LaunchDescription(entities)."""

    @property
    def entities(self):
        return list(self.args[0] if self.args else self.kwargs.get('initial_entities', []))


class DeclareLaunchArgument(_Action):
    """launch.actions.DeclareLaunchArgument(name, default_value=..., description=...)."""

    @property
    def name(self):
        return self.args[0]


class OpaqueFunction(_Action):
    """launch.actions.OpaqueFunction(function=..., args=..., kwargs=...)."""

    def execute(self, context):
        function = self.kwargs.get('function') or self.args[0]
        return function(context, *(self.kwargs.get('args') or []),
                        **(self.kwargs.get('kwargs') or {}))


class Node(_Action):
    """launch_ros.actions.Node(package=..., name=..., ...)."""


class GroupAction(_Action):
    """launch.actions.GroupAction(actions)."""


class IncludeLaunchDescription(_Action):
    """launch.actions.IncludeLaunchDescription(source, launch_arguments=...)."""


class PythonLaunchDescriptionSource(_Action):
    """launch.launch_description_sources.PythonLaunchDescriptionSource(path)."""


class LaunchConfiguration(_Action):
    """launch.substitutions.LaunchConfiguration(name): its value in a context."""

    def perform(self, context):
        return context.launch_configurations[self.args[0]]


class Context:
    """A launch context: the launch configurations; is_shutdown."""

    def __init__(self, given, is_shutdown=False):
        self.launch_configurations = dict(given)
        self.is_shutdown = is_shutdown


@pytest.fixture
def stand_ins(monkeypatch):
    """Install the launch, launch_ros and ament_index stand-ins for one test."""
    modules = {
        'launch': {'LaunchDescription': LaunchDescription, 'LaunchContext': Context},
        'launch.actions': {'DeclareLaunchArgument': DeclareLaunchArgument,
                           'OpaqueFunction': OpaqueFunction, 'GroupAction': GroupAction,
                           'IncludeLaunchDescription': IncludeLaunchDescription,
                           'Shutdown': type('Shutdown', (_Action,), {})},
        'launch.substitutions': {'LaunchConfiguration': LaunchConfiguration},
        'launch.utilities': {'perform_substitutions': lambda context, text: ''.join(text),
                             'normalize_to_list_of_substitutions': lambda text: [text]},
        'launch.launch_description_sources': {
            'PythonLaunchDescriptionSource': PythonLaunchDescriptionSource},
        'launch_ros': {},
        'launch_ros.actions': {'Node': Node, 'PushROSNamespace': type('PushROSNamespace',
                                                                      (_Action,), {})},
        'ament_index_python': {},
        'ament_index_python.packages': {
            'get_package_share_directory': lambda name: str(REPO)},
    }
    for name, attributes in modules.items():
        module = types.ModuleType(name)
        module.__dict__.update(attributes)
        monkeypatch.setitem(sys.modules, name, module)


def load(name):
    """Load a launch file as ros2 launch does; return its module."""
    spec = importlib.util.spec_from_file_location(name.replace('.', '_'), LAUNCH / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def show_args(description):
    """(name, default) of the arguments ``ros2 launch --show-args`` lists (includes too)."""
    out = []
    for entity in description.entities:
        if isinstance(entity, DeclareLaunchArgument):
            out.append((entity.name, entity.kwargs.get('default_value')))
        elif isinstance(entity, IncludeLaunchDescription):
            out += show_args(load(Path(entity.args[0].args[0]).name).generate_launch_description())
    return out


def run(description, given, context=None):
    """Launch: every given name:=value, declared defaults, includes; return the actions."""
    context = context or Context(given)
    actions = []
    for entity in description.entities:
        if isinstance(entity, DeclareLaunchArgument):
            context.launch_configurations.setdefault(entity.name,
                                                     entity.kwargs.get('default_value'))
            choices = entity.kwargs.get('choices')
            value = context.launch_configurations[entity.name]
            if choices and value not in choices:
                raise ValueError(f'{entity.name}:={value} is not one of {choices}')
        elif isinstance(entity, IncludeLaunchDescription):
            context.launch_configurations.update(entity.kwargs.get('launch_arguments') or {})
            included = load(Path(entity.args[0].args[0]).name)
            actions += run(included.generate_launch_description(), given, context)
        elif isinstance(entity, OpaqueFunction):
            actions += entity.execute(context) or []
    return actions


def launch(name, **given):
    """Run launch file ``name`` with ``given`` arguments; return its actions."""
    return run(load(name).generate_launch_description(), given)


def node_names(actions):
    """Return the names (name=) of the Node actions, also inside groups."""
    names = []
    for action in actions:
        if isinstance(action, GroupAction):
            names += node_names(action.args[0])
        elif isinstance(action, Node):
            names.append(action.kwargs.get('name'))
    return names


def test_the_stand_ins_launch_the_documented_invocations(stand_ins):
    """Sanity: the files start what they say with good arguments."""
    assert node_names(launch('orca_nav.launch.py', robots='robot1..robot4')) == ['orca_nav']
    assert node_names(launch('orca_nav.launch.py', robots='r0..r9', nodes='2')) == [
        'orca_nav_0', 'orca_nav_1']
    assert node_names(launch('orca_nav_decentralised.launch.py',
                             robots='robot1..robot3')) == ['orca_nav'] * 3
    assert len(launch('sim_demo.launch.py', robots='4')) == 3


@pytest.mark.parametrize('launch_file, given, hint', [
    ('orca_nav.launch.py', {'robts': 'robot1,robot2'}, 'robots'),
    ('orca_nav.launch.py', {'robots': 'r1', 'use_sim_tme': 'true'}, 'use_sim_time'),
    ('orca_nav.launch.py', {'robots': 'r1', 'drve': 'differential'}, 'drive'),
    ('orca_nav.launch.py', {'robots': 'r1', 'pose_topc': 'amcl_pose'}, 'pose_topic'),
    ('orca_nav_decentralised.launch.py', {'robots': 'r1,r2', 'local_robot': 'r1'},
     'local_robots'),
    ('sim_demo.launch.py', {'drve': 'differential'}, 'drive'),
    ('sim_demo.launch.py', {'scenaro': 'blocks'}, 'scenario'),
])
def test_a_misspelt_argument_name_is_refused_with_the_nearest_one(stand_ins, launch_file,
                                                                  given, hint):
    """robts:=... was ignored and the params file's default fleet driven: now refused."""
    with pytest.raises(fleet.FleetError, match=rf'unknown launch arguments .*did you mean '
                                               rf'{hint}:=\?'):
        launch(launch_file, **given)


def test_launch_and_launch_ros_own_configurations_are_not_refused(stand_ins):
    """ros2 launch --launch-prefix and PushROSNamespace around an include set configurations."""
    assert launch('orca_nav.launch.py', robots='r1', **{'launch-prefix': 'xterm -e',
                                                        'ros_namespace': '/site'})


def test_decentralised_file_has_no_layout_argument_and_refuses_central(stand_ins):
    """--show-args listed layout (default central); layout:=central was overridden silently."""
    description = load('orca_nav_decentralised.launch.py').generate_launch_description()
    shown = dict(show_args(description))
    assert 'layout' not in shown and 'robots' in shown and 'local_robots' in shown
    with pytest.raises(fleet.FleetError, match='runs the decentralised layout; layout:=central'):
        launch('orca_nav_decentralised.launch.py', robots='r1,r2', layout='central')
    assert node_names(launch('orca_nav_decentralised.launch.py', robots='r1,r2',
                             layout='decentralised')) == ['orca_nav'] * 2
    assert dict(show_args(load('orca_nav.launch.py').generate_launch_description()))[
        'layout'] == 'central'


def test_sim_demo_names_a_missing_params_file(stand_ins):
    """params_file:=/nonexistent.yaml printed only "[Errno 2] No such file or directory"."""
    with pytest.raises(fleet.FleetError, match="params_file '/nonexistent.yaml' is not a file"):
        launch('sim_demo.launch.py', params_file='/nonexistent.yaml')


def test_a_node_killed_by_a_signal_is_reported_as_killed(stand_ins):
    """A node killed by SIGKILL was reported as "its log above says why" (its log is empty)."""
    module = load('orca_nav.launch.py')
    event = types.SimpleNamespace(process_name='orca_nav_node-1', returncode=-9)
    with pytest.raises(RuntimeError, match='orca_nav_node-1 was killed by SIGKILL'):
        module.on_node_exit(event, Context({}))
    event.returncode = 1
    with pytest.raises(RuntimeError, match='its log above says why'):
        module.on_node_exit(event, Context({}))
    assert module.on_node_exit(event, Context({}, is_shutdown=True)) is None


def test_ctrl_c_on_the_demo_is_no_failure_of_the_launch(stand_ins):
    """The demo exits 130 on Ctrl-C (or -15 once launch escalates): the launch just ends."""
    module = load('sim_demo.launch.py')
    for code, shutting_down in ((130, False), (-2, False), (0, False), (130, True), (-15, True)):
        event = types.SimpleNamespace(returncode=code)
        action = module.on_demo_exit(event, Context({}, is_shutdown=shutting_down))
        assert type(action).__name__ == 'Shutdown'
    with pytest.raises(RuntimeError, match='exit code 1'):
        module.on_demo_exit(types.SimpleNamespace(returncode=1), Context({}))


@pytest.mark.parametrize('section, given', [
    ('orca_nav', {'namespace': 'fleet', 'nodes': '2'}),
    ('/orca_nav', {'layout': 'decentralised'}),
    ('/fleet/orca_nav', {'layout': 'decentralised', 'namespace': 'fleet'}),
    ('robot9/orca_nav', {'layout': 'decentralised'}),
])
def test_params_file_sections_that_reach_no_node_are_refused(stand_ins, tmp_path, section,
                                                             given):
    """orca_nav: with nodes in a namespace: the radius was dropped silently (0.2, not 0.3)."""
    path = tmp_path / 'fleet.yaml'
    path.write_text(f'{section}:\n  ros__parameters:\n    robots: [robot1, robot2]\n'
                    '    radius: 0.3\n')
    message = rf"section '{section}'.* reaches no node of this launch .*under '/\*\*"
    with pytest.raises(fleet.FleetError, match=message):
        launch('orca_nav.launch.py', params_file=str(path), **given)


@pytest.mark.parametrize('section, given', [
    ('orca_nav', {}),
    ('orca_nav', {'layout': 'decentralised'}),   # as Nav2's RewrittenYaml: in each namespace
    ('orca_nav', {'namespace': 'fleet'}),
    ('/**/orca_nav', {'layout': 'decentralised'}),
    ('/**', {'namespace': 'fleet'}),
    ('/fleet/orca_nav', {'namespace': 'fleet'}),
    ('/*/orca_nav', {'layout': 'decentralised'}),
    ('robot2/orca_nav', {'layout': 'decentralised', 'local_robots': 'robot1'}),
])
def test_params_file_sections_that_reach_a_node_of_the_fleet_are_taken(stand_ins, tmp_path,
                                                                       section, given):
    """A section for any node of the fleet (also on another computer: local_robots) is fine."""
    path = tmp_path / 'fleet.yaml'
    path.write_text(f'{section}:\n  ros__parameters:\n    radius: 0.3\n')
    assert launch('orca_nav.launch.py', params_file=str(path), robots='robot1,robot2', **given)
    nested = tmp_path / 'nested.yaml'
    nested.write_text('robot1:\n  orca_nav:\n    ros__parameters:\n      radius: 0.3\n'
                      'robot7:\n  orca_nav:\n    ros__parameters:\n      radius: 0.3\n')
    assert launch('orca_nav.launch.py', params_file=str(nested), robots='robot1,robot7',
                  layout='decentralised')
    with pytest.raises(fleet.FleetError, match="section 'robot7: orca_nav:' reaches no node"):
        launch('orca_nav.launch.py', params_file=str(nested), robots='robot1,robot2',
               layout='decentralised')
