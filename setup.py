"""ament_python packaging for orca_nav."""

from glob import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup
from setuptools.command.install import install

package_name = 'orca_nav'
# The demo's plotting (orca_nav.sim.plot) and map image files (orca_nav.sim.maps): not needed by
# the node or the controller (test/test_dependencies.py imports them with both blocked).
DEMO_REQUIRES = ['matplotlib>=3.6', 'pillow>=9.0']
# Set to 0 to install without compiling the numba kernels (the node then compiles them at its
# first start, and says so).
KERNELS_ENV = 'ORCA_NAV_BUILD_KERNELS'


class InstallWithKernels(install):
    """
    ``setup.py install`` (what ``colcon build`` runs), then the installed copy's kernels.

    numba compiles orca_nav's kernels at their first call and caches them per copy of the
    sources (``__pycache__`` beside the installed modules, or its folder under
    ``NUMBA_CACHE_DIR``): without this a fresh install's first node start spends a minute or
    more compiling. The installed copy runs ``python -m orca_nav.control.warmup`` in the
    build's environment (the cache it fills is the one a node started with the same
    ``NUMBA_CACHE_DIR``, set or not, loads): kernels cached for other sources are dropped,
    those the source folder has cached for the same sources (``make``'s set-up) taken, the
    rest compiled. Skipped for staged installs (``--root``: wheels, Debian packages), whose
    files move. A failure only warns: the node compiles at its start.
    """

    def run(self):
        """Install, then fill numba's cache of the installed copy."""
        super().run()
        if self.root is None and os.environ.get(KERNELS_ENV, '1') != '0':
            self.execute(compile_kernels, (self.install_lib,),
                         msg="compiling orca_nav's numba kernels (once per build)")


def compile_kernels(lib):
    """Run the kernels' warm-up of the orca_nav installed under ``lib``, in a new process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [lib] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, '-m', 'orca_nav.control.warmup', '--expect', lib,
                           '--seed', os.path.dirname(os.path.abspath(__file__))],
                          cwd=lib, env=env)
    if proc.returncode:
        print(f'WARNING: compiling the numba kernels failed (exit code {proc.returncode}): '
              'the node compiles them at its first start', file=sys.stderr)


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'benchmarks']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        (os.path.join('share', package_name, 'launch'), glob('launch/*.launch.py')),
        (os.path.join('share', package_name, 'launch', 'examples'),
         glob('launch/examples/*.launch.py')),
        (os.path.join('share', package_name, 'config'), glob('config/*.yaml')),
        (os.path.join('share', package_name, 'config', 'examples'),
         glob('config/examples/*.yaml')),
        (os.path.join('share', package_name, 'config', 'scenarios'),
         glob('config/scenarios/*.yaml')),
        (os.path.join('share', package_name, 'config', 'maps'),
         sorted(glob('config/maps/*.yaml') + glob('config/maps/*.pgm')
                + glob('config/maps/*.png'))),
    ],
    package_data={'orca_nav.ros': ['fastdds_profile.xml']},
    install_requires=['setuptools'],
    extras_require={'demo': DEMO_REQUIRES},
    zip_safe=True,
    maintainer='orca_nav maintainers',
    maintainer_email='maintainers@orca-nav.dev',
    description='Multi-robot ORCA collision avoidance for ROS 2 fleets.',
    license='Apache-2.0',
    tests_require=['pytest'],
    cmdclass={'install': InstallWithKernels},
    entry_points={
        'console_scripts': [
            'orca_nav_node = orca_nav.ros.main:main',
            'orca_nav_sim = orca_nav.sim.node:main',
            'orca_nav_demo = orca_nav.sim.demo:main',
        ],
    },
)
