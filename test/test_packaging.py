"""
The ament packaging as colcon installed it: resource marker, data files, console scripts.

``colcon test`` runs with the installed package in the environment (AMENT_PREFIX_PATH); a plain
``pytest`` run from the source tree skips these tests.
"""

import json
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


def test_the_node_fast_dds_profile_is_installed_beside_its_module():
    """orca_nav.ros.middleware finds fastdds_profile.xml in the installed copy too."""
    version = f'python{sys.version_info[0]}.{sys.version_info[1]}'
    lib = os.path.join(_prefix(), 'lib', version, 'site-packages')
    if not os.path.isdir(os.path.join(lib, 'orca_nav')):
        pytest.skip(f'no orca_nav under {lib}')
    assert os.path.isfile(os.path.join(lib, 'orca_nav', 'ros', 'fastdds_profile.xml'))


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


def test_the_build_compiled_the_installed_copys_node_kernels(tmp_path):
    """The build (setup.py) filled numba's cache: the installed copy loads, compiles none."""
    prefix = _prefix()
    version = f'python{sys.version_info[0]}.{sys.version_info[1]}'
    lib = os.path.join(prefix, 'lib', version, 'site-packages')
    if not os.path.isdir(os.path.join(lib, 'orca_nav')):
        pytest.skip(f'no orca_nav under {lib}')
    # What a node started from the install loads: the same environment (NUMBA_CACHE_DIR set
    # or not), the installed copy first on the path.
    code = ('import json, orca_nav\n'
            'from orca_nav.control import warmup as W\n'
            'W.warmup_node_defaults()\n'
            'print(json.dumps({"file": orca_nav.__file__, "compiled": W.compiled_count()}))\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [lib] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    out = subprocess.run([sys.executable, '-c', code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report['file'].startswith(lib), report
    assert report['compiled'] == 0, report
