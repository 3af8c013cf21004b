"""
The node's warm-up compiles what its ticks run: afterwards a tick compiles nothing new.

Each check runs in a process of its own (this file as a script), so that nothing another test
compiled can hide a kernel the warm-up missed: the warm-up with a node's settings, then a
scene written apart from the warm-up's (a swap of robots that reach each other, known people,
a map with routes, scans), comparing numba's compiled signatures of every orca_nav kernel
before and after the scene.
"""

import json
import math
import os
import subprocess
import sys

import numpy as np
import orca_nav
from orca_nav.control import FleetConfig, FleetController, FleetInputs, ScanInput
from orca_nav.control import warmup as W
from orca_nav.control.config import navigation_config, node_values
from orca_nav.core.routes.grid import GridMap
import pytest

ROBOTS = ['r1', 'r2', 'r3', 'r4']
OBSERVED = ['o1']
# Parameters of the node's settings under test (given as in a params file).
SETTINGS = {
    'defaults': {},
    'differential': {'drive': 'differential'},
    'scans': {'scan_enabled': True},
    'acceleration': {'max_accel': 0.8, 'max_decel': 1.5},
    # Two carts (Nav2's footprint) among discs.
    'footprints': {'r1.footprint': '[[0.4, 0.25], [-0.4, 0.25], [-0.4, -0.25], [0.4, -0.25]]',
                   'r3.footprint': '[[0.3, 0.3], [-0.3, 0.3], [-0.3, -0.3], [0.3, -0.3]]'},
    # Not among the settings a build warms up: the node's own warm-up has them.
    'shares': {'avoidance_weight': 0.3, 'r2.avoidance_group': 'carts',
               'r1.groups_to_ignore': ['carts'], 'observed_reciprocate': True,
               'r3.drive': 'differential', 'pose_topic': 'amcl_pose'},
}
BUILD_SETTINGS = ('defaults', 'differential', 'scans', 'acceleration', 'footprints')
CHECK_TIMEOUT = 900.0  # [s] a process that compiles on a cold cache, on a busy machine


def settings(name):
    """Return the FleetConfig and NavigationConfig of a node with ``SETTINGS[name]``."""
    values = node_values(ROBOTS, OBSERVED, **SETTINGS[name])
    return FleetConfig.from_values(values), navigation_config(values)


def scene(config, navigation):
    """
    Run a node-like controller through a scene of its own; return {kernel: new signatures}.

    Four robots in two pairs that swap places (the first pair touching), the observed robot
    among them, then known people, then a map with a wall and an external route; with scans
    when the settings read them.
    """
    ctrl = FleetController(config, navigation, W.InlineExecutor())
    before = W.signatures()
    n, c = config.n, config.n_controlled
    start = np.array([[1.0, 1.0], [1.3, 1.0], [1.0, 3.0], [3.0, 3.0], [2.0, 2.0]])[:n]
    goals = start[[1, 0, 3, 2]][:c]
    for i in range(c):
        ctrl.set_goal(i, *goals[i])
    inputs = FleetInputs.empty(n)
    yaw = np.zeros(n)
    for k in range(30):
        t = 100.0 + k * config.period
        if k == 10:
            inputs.set_people([[2.0, 1.5], [0.5, 2.5]], [[-0.4, 0.0], [0.0, 0.3]], [0.3, 0.2],
                              time=t)
        if k == 20:
            cells = np.zeros((50, 50), np.int8)
            cells[25, 10:30] = 100
            ctrl.set_map(GridMap.from_occupancy(cells.ravel(), 50, 50, 0.1, (-0.5, -0.5, 0.0)))
            ctrl.set_route(0, [start[0], (2.5, 0.5), goals[0]])
        for i in range(n):
            inputs.set_odometry(i, x=start[i, 0], y=start[i, 1], yaw=yaw[i], time=t)
            if config.pose_source is not None and config.pose_source[i]:
                inputs.set_localisation(i, x=start[i, 0], y=start[i, 1], yaw=yaw[i], time=t,
                                        sigma=0.1)
        inputs.scans = [ring_scan(i, t) for i in range(c)] if config.scan_enabled else []
        result = ctrl.step(inputs, t)
        for i in range(c):  # the commands, applied for one period
            vx, vy, wz = result.commands[i]
            cos, sin = math.cos(yaw[i]), math.sin(yaw[i])
            start[i] += config.period * np.array([cos * vx - sin * vy, sin * vx + cos * vy])
            yaw[i] += config.period * wz
    ctrl.navigator.close()
    return W.new_signatures(before, W.signatures())


def ring_scan(i, t, beams=360):
    """Return robot i's scan at time t: walls 3 m round, a leg-sized object 1 m ahead."""
    inc = 2 * math.pi / beams
    ranges = np.full(beams, 3.0)
    ranges[beams // 2 - 4:beams // 2 + 4] = 1.0  # angle 0 (ahead) at the middle beam
    return ScanInput(robot=i, ranges=ranges, angle_min=-math.pi, angle_increment=inc,
                     range_min=0.1, range_max=5.0, time=t)


def check(names, build):
    """Warm up (the node's way or the build's), then each scene; return the new signatures."""
    if build:
        W.warmup_node_defaults()
    out = {}
    for name in names:
        config, navigation = settings(name)
        if not build:
            W.warmup(config, navigation)
        out[name] = {kernel: sorted(map(str, sigs))
                     for kernel, sigs in scene(config, navigation).items()}
    return out


def run_check(names, build=False):
    """Run ``check`` in a new process; return its answer."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(orca_nav.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    proc = subprocess.run([sys.executable, __file__, json.dumps([names, build])], env=env,
                          capture_output=True, text=True, timeout=CHECK_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize('name', sorted(SETTINGS))
def test_a_tick_compiles_nothing_after_the_nodes_own_warmup(name):
    """What orca_nav.ros.node runs before its first tick covers every kernel its ticks run."""
    assert run_check([name]) == {name: {}}


def test_the_builds_warmup_covers_the_default_settings():
    """The kernels a build compiles (no parameters known) are those of default-ish nodes."""
    assert run_check(list(BUILD_SETTINGS), build=True) == {name: {} for name in BUILD_SETTINGS}


def test_kernels_are_found_in_the_modules():
    """Every numba kernel of orca_nav counts, the solver's and the controller's among them."""
    names = W.kernels()
    assert any(name.startswith('orca_nav.core.orca.lines') for name in names)
    assert 'orca_nav.control.pose_history._poses_at' in names


if __name__ == '__main__':
    print(json.dumps(check(*json.loads(sys.argv[1]))))
