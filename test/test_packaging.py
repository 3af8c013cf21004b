"""
The ament packaging as colcon installed it: resource marker, data files, console scripts.

``colcon test`` runs with the installed package in the environment (AMENT_PREFIX_PATH); a plain
``pytest`` run from the source tree skips these tests.
"""

import os
import subprocess
import sys

import pytest

ament_index = pytest.importorskip('ament_index_python.packages')


def _prefix():
    try:
        return ament_index.get_package_prefix('orca_nav')
    except (ament_index.PackageNotFoundError, EnvironmentError):
        pytest.skip('orca_nav is not installed in an ament prefix (run through colcon test)')


def test_resource_marker_and_manifest_are_installed():
    """The package is registered in the ament index and ships package.xml."""
    prefix = _prefix()
    assert os.path.isfile(os.path.join(
        prefix, 'share', 'ament_index', 'resource_index', 'packages', 'orca_nav'))
    share = os.path.join(prefix, 'share', 'orca_nav')
    assert os.path.isfile(os.path.join(share, 'package.xml'))


def test_launch_and_config_files_are_installed():
    """Launch files, the params file and the demo scenarios land in share/orca_nav."""
    share = os.path.join(_prefix(), 'share', 'orca_nav')
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder, suffix in (('launch', '.launch.py'), ('config', '.yaml'),
                           (os.path.join('config', 'scenarios'), '.yaml')):
        sources = sorted(f for f in os.listdir(os.path.join(here, folder)) if f.endswith(suffix))
        assert sources, f'no {suffix} files in {folder}/'
        for name in sources:
            assert os.path.isfile(os.path.join(share, folder, name)), f'{folder}/{name} missing'


@pytest.mark.parametrize('script', ['orca_nav_node', 'orca_nav_sim', 'orca_nav_demo'])
def test_console_scripts_are_installed_under_lib(script):
    """Each console script sits in lib/orca_nav (for ros2 run) and starts."""
    path = os.path.join(_prefix(), 'lib', 'orca_nav', script)
    assert os.access(path, os.X_OK), f'{path} is not an executable'
    if script == 'orca_nav_demo':
        out = subprocess.run([sys.executable, path, '--help'], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        assert '--scenario' in out.stdout
