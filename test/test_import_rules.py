"""
The layering of orca_nav, checked on the source with ``ast`` (every import, also in functions).

- ``orca_nav.core`` (the algorithm) imports no ROS (rclpy, message and interface packages) and
  none of orca_nav.ros, orca_nav.sim, orca_nav.control; of the libraries outside Python's own,
  only numpy, scipy, numba and scikit-image;
- its subpackages ``orca``, ``perception`` and ``routes`` import none of one another (only
  core's shared ``geometry`` and ``_jit``);
- ``orca_nav.control`` (the fleet controller) imports no ROS and none of orca_nav.ros,
  orca_nav.sim;
- ``orca_nav.ros`` (the ROS node) never imports orca_nav.sim (the simulator and the demo);
- ``orca_nav.sim`` takes the parameter table and ``resolve`` from orca_nav.control, never
  through orca_nav.ros.params (which only declares them on a node).

orca_nav/node.py and orca_nav/demo.py are entry-point shims (``python -m orca_nav.node``) and
exempt.
"""

import ast
from pathlib import Path
import sys

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / 'orca_nav'
EXEMPT = {'orca_nav.node', 'orca_nav.demo'}
# The libraries orca_nav.core may import besides Python's own (and itself).
CORE_LIBRARIES = {'numpy', 'scipy', 'numba', 'skimage'}
CORE_SUBPACKAGES = ('orca_nav.core.orca', 'orca_nav.core.perception', 'orca_nav.core.routes')
ROS_PACKAGES = {'rclpy', 'rcl_interfaces', 'builtin_interfaces', 'rosgraph_msgs', 'launch',
                'launch_ros', 'tf2_ros', 'message_filters', 'rosidl_runtime_py'}


def is_ros(module):
    """Whether an imported module belongs to ROS (rclpy, *_msgs, *_srvs, *_interfaces, ...)."""
    top = module.split('.')[0]
    return top in ROS_PACKAGES or top.endswith(('_msgs', '_srvs', '_interfaces'))


def within(module, package):
    """Whether ``module`` is ``package`` or one of its submodules."""
    return module == package or module.startswith(package + '.')


def is_other_library(module):
    """Whether a module is none of Python's own, orca_nav's, CORE_LIBRARIES, ROS (own rule)."""
    top = module.split('.')[0]
    return not (top in sys.stdlib_module_names or top == 'orca_nav' or top in CORE_LIBRARIES
                or is_ros(module))


def other_core_subpackage(subpackage):
    """Return a predicate: whether a module is in a core subpackage other than ``subpackage``."""
    others = [p for p in CORE_SUBPACKAGES if p != subpackage]
    return lambda m: any(within(m, p) for p in others)


# Layer -> (what it may not import, why); a predicate on the imported module name.
RULES = {
    'orca_nav.core': [(is_ros, 'ROS'),
                      (lambda m: within(m, 'orca_nav.ros'), 'orca_nav.ros'),
                      (lambda m: within(m, 'orca_nav.sim'), 'orca_nav.sim'),
                      (lambda m: within(m, 'orca_nav.control'), 'orca_nav.control'),
                      (is_other_library, 'library but numpy, scipy, numba, skimage')],
    **{sub: [(other_core_subpackage(sub), 'other core subpackage')] for sub in CORE_SUBPACKAGES},
    'orca_nav.control': [(is_ros, 'ROS'),
                         (lambda m: within(m, 'orca_nav.ros'), 'orca_nav.ros'),
                         (lambda m: within(m, 'orca_nav.sim'), 'orca_nav.sim')],
    'orca_nav.ros': [(lambda m: within(m, 'orca_nav.sim'), 'orca_nav.sim')],
    'orca_nav.sim': [(lambda m: within(m, 'orca_nav.ros.params'), 'orca_nav.ros.params')],
}


def module_name(path, root=PACKAGE):
    """Dotted module name of a file under the package (a package's __init__ is the package)."""
    parts = list(path.relative_to(root.parent).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def imports(source, module, is_package=False):
    """
    Yield (names, line) for every import of ``source`` (relative ones resolved).

    names: the modules the import may load: ``from a import b`` gives (a, a.b), as b may be a
    submodule (``from orca_nav import sim``).
    """
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield (alias.name,), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split('.')
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                target = '.'.join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            yield (target,) + tuple(f'{target}.{a.name}' for a in node.names), node.lineno


def violations(source, module, is_package=False):
    """Return 'module:line imports X (no Y in layer Z)' for every broken rule."""
    out = []
    for layer, rules in RULES.items():
        if not within(module, layer):
            continue
        for names, line in imports(source, module, is_package):
            for forbidden, what in rules:
                hits = [n for n in names if forbidden(n)]
                if hits:
                    out.append(f'{module}:{line} imports {hits[0]} (no {what} in {layer})')
    return out


def package_modules():
    """Return (module name, path) of every Python file of orca_nav."""
    return sorted((module_name(p), p) for p in PACKAGE.rglob('*.py')
                  if '__pycache__' not in p.parts)


@pytest.mark.parametrize('module, path', package_modules(),
                         ids=[m for m, _ in package_modules()])
def test_layers_import_only_what_they_may(module, path):
    if module in EXEMPT:
        pytest.skip('entry-point shim')
    found = violations(path.read_text(), module, path.name == '__init__.py')
    assert not found, '\n'.join(found)


def test_every_layer_exists():
    modules = {m for m, _ in package_modules()}
    for layer in ('orca_nav.core', 'orca_nav.ros', 'orca_nav.sim') + CORE_SUBPACKAGES:
        assert layer in modules


@pytest.mark.parametrize('source, module, expected', [
    ('import rclpy', 'orca_nav.core.x', ['ROS']),
    ('def f():\n    from nav_msgs.msg import Path', 'orca_nav.core.x', ['ROS']),
    ('from rcl_interfaces.msg import ParameterDescriptor', 'orca_nav.control.x', ['ROS']),
    ('from orca_nav.ros.params import FLEET_PARAMS', 'orca_nav.core.x', ['orca_nav.ros']),
    ('from orca_nav import sim', 'orca_nav.ros.node', ['orca_nav.sim']),
    ('from ..sim import demo', 'orca_nav.ros.node', ['orca_nav.sim']),
    ('from . import grid', 'orca_nav.core.x', []),
    ('from ..control import fleet', 'orca_nav.core.x', ['orca_nav.control']),
    ('import orca_nav.sim.maps', 'orca_nav.control.x', ['orca_nav.sim']),
    ('import rclpy\nfrom orca_nav.sim import maps', 'orca_nav.sim.node', []),
    ('from orca_nav.ros import params as P', 'orca_nav.sim.demo', ['orca_nav.ros.params']),
    ('from orca_nav.control.parameters import ROBOT_NAME', 'orca_nav.sim.demo', []),
    ('from orca_nav.core.routes import grid\nimport numpy', 'orca_nav.control.x', []),
    ('import yaml\nimport math\nfrom scipy import ndimage', 'orca_nav.core.x',
     ['library but numpy, scipy, numba, skimage']),
    ('from ..routes.grid import GridMap', 'orca_nav.core.perception.scan',
     ['other core subpackage']),
    ('from orca_nav.core.orca import drive', 'orca_nav.core.routes.follow',
     ['other core subpackage']),
    ('from .._jit import njit\nfrom ..geometry import wrap_angle', 'orca_nav.core.orca.x', []),
])
def test_the_checker_catches_what_it_should(source, module, expected):
    found = violations(source, module)
    assert [v.split('(no ')[1].split(' in ')[0] for v in found] == expected, found


def import_graph():
    """Return {module: set of orca_nav modules it imports} (function-level imports too)."""
    modules = dict(package_modules())
    graph = {}
    for module, path in modules.items():
        targets = set()
        for names, _ in imports(path.read_text(), module, path.name == '__init__.py'):
            targets.update(n for n in names if n in modules and n != module)
        graph[module] = targets
    return graph


def test_no_import_cycles():
    """No orca_nav module imports itself through others (maps and scenarios did)."""
    graph = import_graph()
    state, cycles = {}, []

    def visit(module, path):
        state[module] = 'open'
        for target in sorted(graph[module]):
            if state.get(target) == 'open':
                cycles.append(path[path.index(target):] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = 'done'

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # A package's __init__ re-exporting its submodules is no cycle of concern: each cycle
    # through a package's own __init__ and its submodules is left out.
    cycles = [c for c in cycles
              if not any(c[k + 1].startswith(c[k] + '.') for k in range(len(c) - 1))]
    assert not cycles, '\n'.join(' -> '.join(c) for c in cycles)
