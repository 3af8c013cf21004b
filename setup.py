"""ament_python packaging for orca_nav."""

from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'orca_nav'
# The demo's plotting (orca_nav.sim.plot) and map image files (orca_nav.sim.maps): not needed by
# the node or the controller (test/test_dependencies.py imports them with both blocked).
DEMO_REQUIRES = ['matplotlib>=3.6', 'pillow>=9.0']

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
    install_requires=['setuptools'],
    extras_require={'demo': DEMO_REQUIRES},
    zip_safe=True,
    maintainer='orca_nav maintainers',
    maintainer_email='maintainers@orca-nav.dev',
    description='Multi-robot ORCA collision avoidance for ROS 2 fleets.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'orca_nav_node = orca_nav.ros.main:main',
            'orca_nav_sim = orca_nav.sim.node:main',
            'orca_nav_demo = orca_nav.sim.demo:main',
        ],
    },
)
