"""
Plotting libraries are the demo's: the node and the controller run without matplotlib and Pillow.

And the test suite itself runs without pytest-xdist (which `make test` uses).

package.xml and setup.py declare matplotlib and Pillow for the demo only (a test dependency and
the ``demo`` extra). A fresh interpreter with both blocked (a ``sys.meta_path`` finder that
refuses them) imports the node and the controller and drives one robot round a wall on a map
(route planning and map walls included); the demo's plotting, in the same interpreter, fails
for want of them, and the demo itself stops at once saying what to install. The demo's
pictures themselves are checked in test_demo.py (test_plot_*).
"""

import ast
import json
import os
from pathlib import Path
import re
import subprocess
import sys

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKED = ('matplotlib', 'PIL')
# rosdep keys of the Python libraries orca_nav imports (its modules and launch files).
ROSDEP_KEYS = {'numpy': 'python3-numpy', 'scipy': 'python3-scipy', 'yaml': 'python3-yaml',
               'skimage': 'python3-skimage', 'numba': 'python3-numba',
               'matplotlib': 'python3-matplotlib', 'PIL': 'python3-pil'}
# Imported by the tests' support only (orca_nav/testing), from PyPI: no rosdep key.
TEST_ONLY = {'pyrvo'}
# ROS packages imported under their own name (messages, rclpy, launch).
ROS_PACKAGE = re.compile(r'^(rclpy|launch|launch_ros|ament_index_python|\w+_msgs|\w+_interfaces)$')
SCRIPT = '''
import importlib.abc
import json
import sys
import time

BLOCKED = {blocked!r}


class Blocker(importlib.abc.MetaPathFinder):
    """Refuse every module of the blocked packages, as if they were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in BLOCKED:
            raise ModuleNotFoundError(f'No module named {{name!r}} (blocked)', name=name)
        return None


sys.meta_path.insert(0, Blocker())
import numpy as np  # noqa: E402
import orca_nav.ros.main  # noqa: E402,F401 (the node's console script)
from orca_nav.ros.node import OrcaNavNode  # noqa: E402,F401
from orca_nav.control import FleetConfig, FleetController, FleetInputs  # noqa: E402
from orca_nav.core.routes.grid import GridMap  # noqa: E402

# A 5 m x 4 m room, a wall across the straight line from (1, 2) to (4, 2): a route goes round.
cells = np.zeros((80, 100), np.int8)
cells[0, :] = cells[-1, :] = cells[:, 0] = cells[:, -1] = 100
cells[20:60, 48:52] = 100
ctrl = FleetController(FleetConfig.uniform(['r0'], radius=0.2, max_speed=0.5))
ctrl.set_map(GridMap.from_occupancy(cells.ravel(), 100, 80, 0.05))
ctrl.set_goal(0, 4.0, 2.0, 0.0)
inputs = FleetInputs.empty(1)
deadline, t = time.monotonic() + 60.0, 0.0
while not ctrl.navigator.routed[0] and time.monotonic() < deadline:
    inputs.set_odometry(0, x=1.0, y=2.0, yaw=0.0, time=t)
    result = ctrl.step(inputs, t)
    t += 0.1
    time.sleep(0.01)
route = ctrl.navigator.points[0]
ctrl.navigator.close()
try:
    from orca_nav.sim.plot import robot_colors
    robot_colors(2)
    plotted = True
except ImportError:
    plotted = False
# The demo says what to install before anything else (a scenario that does not exist: no
# process can start, whatever the demo does).
from orca_nav.sim.demo import parse_args, run  # noqa: E402
demo_code = run(parse_args(['--scenario', 'no_such_scenario', '--metrics-json', {metrics!r}]))
print(json.dumps({{
    'routed': bool(ctrl.navigator.routed[0]),
    'route_leaves_the_line': float(np.abs(route[:, 1] - 2.0).max()) if route is not None else 0,
    'commands_finite': bool(np.isfinite(result.commands).all()),
    'loaded': sorted(m for m in sys.modules if m.split('.')[0] in BLOCKED),
    'plotted': plotted,
    'demo_code': demo_code,
}}))
'''


def run_blocked(metrics):
    """
    Run SCRIPT in a fresh interpreter with the plotting libraries blocked.

    Returns its JSON report and its standard error; the demo writes ``metrics`` (a path).
    """
    script = SCRIPT.format(blocked=BLOCKED, metrics=str(metrics))
    result = subprocess.run([sys.executable, '-c', script], cwd=ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


@pytest.mark.slow  # a fresh interpreter that plans a route: 10-45 s on the shared machine
def test_node_and_controller_run_without_matplotlib_and_pillow(tmp_path):
    """Imports and a routed step on a map succeed; neither library is loaded; the demo refuses."""
    report, stderr = run_blocked(tmp_path / 'metrics.json')
    assert report['loaded'] == []
    assert report['routed'] and report['route_leaves_the_line'] > 0.5, report
    assert report['commands_finite']
    assert not report['plotted']  # the blocker works: the demo's plotting needs matplotlib
    # The demo stops at once with what to install (exit code 3), before starting anything.
    assert report['demo_code'] == 3
    assert "pip install 'orca_nav[demo]'" in stderr, stderr[-2000:]
    record = json.loads((tmp_path / 'metrics.json').read_text())
    assert record['exit_code'] == 3 and 'matplotlib' in record['error']


def test_plotting_libraries_are_declared_for_the_demo_only():
    """package.xml: test dependencies, not exec; setup.py: the demo extra; requirements: kept."""
    package = (ROOT / 'package.xml').read_text()
    setup = (ROOT / 'setup.py').read_text()
    for name in ('python3-matplotlib', 'python3-pil'):
        assert f'<exec_depend>{name}</exec_depend>' not in package
        assert f'<test_depend>{name}</test_depend>' in package
    assert "extras_require={'demo': DEMO_REQUIRES}" in setup
    assert "DEMO_REQUIRES = ['matplotlib>=3.6', 'pillow>=9.0']" in setup
    # make demo installs requirements.txt: the demo still gets both.
    requirements = (ROOT / 'requirements.txt').read_text().split()
    assert 'matplotlib>=3.6' in requirements and 'pillow>=9.0' in requirements


def imported_packages():
    """Return {top-level module: files} that orca_nav's modules and launch files import."""
    found = {}
    for path in sorted(ROOT.glob('orca_nav/**/*.py')) + sorted(ROOT.glob('launch/*.py')):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split('.')[0]
                if top not in sys.stdlib_module_names and top != 'orca_nav':
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_run_dependency_is_declared_in_package_xml():
    """What the package imports is an exec_depend of package.xml (rosdep installs it)."""
    package = (ROOT / 'package.xml').read_text()
    exec_depends = set(re.findall(r'<exec_depend>([^<]+)</exec_depend>', package))
    test_depends = set(re.findall(r'<test_depend>([^<]+)</test_depend>', package))
    imported = imported_packages()
    assert 'numba' in imported and 'rclpy' in imported  # the scan finds them
    for module, files in sorted(imported.items()):
        if module in TEST_ONLY:
            assert all(f.startswith('orca_nav/testing/') for f in files), (module, files)
            continue
        if ROS_PACKAGE.match(module):
            key = module
        else:
            assert module in ROSDEP_KEYS, f'{module} (imported by {sorted(files)}) has no ' \
                                          'rosdep key in ROSDEP_KEYS'
            key = ROSDEP_KEYS[module]
        depends = test_depends if module in BLOCKED else exec_depends
        assert key in depends, f'package.xml lacks {key} (imported by {sorted(files)})'


def test_the_suite_runs_without_pytest_xdist():
    """A ROS install's colcon test may have no pytest-xdist: conftest.py's hook is optional."""
    # Not this run's options: colcon passes its pytest arguments (xdist's among them) in
    # PYTEST_ADDOPTS.
    env = {k: v for k, v in os.environ.items() if not k.startswith(('PYTEST_', 'ORCA_NAV_'))}
    env['ORCA_NAV_TEST_NO_WARMUP'] = '1'  # the grid's few kernels, not the session's warm-up
    result = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider',
                             '-p', 'no:xdist', 'test/test_grid.py'], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert 'passed' in result.stdout
