"""
The demo: metrics, picture, launch plan, and real end-to-end runs.

The end-to-end tests start the simulator and the orca_nav node as processes talking over real
DDS (on loopback, domains 40..49) and check every scenario runs to completion without a
collision at a small size.
"""

from concurrent.futures import ThreadPoolExecutor
import math
import os
from pathlib import Path
import signal
import subprocess
import sys

import numpy as np
from orca_nav.sim.demo import (compute_metrics, EXIT_COLLISION, EXIT_OK, format_table, launch_plan,
                               parse_args, plot_run, write_params)
from orca_nav.sim.scenarios import load_scenario, scenario_from_dict
import pytest

REPO = Path(__file__).resolve().parent.parent


def _two_robots(obstacles=None):
    data = {'robots': [{'name': 'a', 'start': [-2, 0], 'goal': [2, 0], 'radius': 0.25},
                       {'name': 'b', 'start': [2, 0.6], 'goal': [-2, 0.6], 'radius': 0.25}]}
    if obstacles:
        data['obstacles'] = obstacles
    return scenario_from_dict(data, name='two')


def _straight_run(offset_y, steps=401, duration=10.0):
    """Two robots swapping along y = 0 and y = offset_y at constant speed."""
    t = np.linspace(0.0, duration, steps)
    x = np.linspace(-2.0, 2.0, steps)
    poses = np.zeros((steps, 2, 3))
    poses[:, 0, 0], poses[:, 1, 0] = x, -x
    poses[:, 1, 1] = offset_y
    return t, poses


def test_metrics_of_a_clean_swap():
    scenario = _two_robots()
    t, poses = _straight_run(0.6)
    m = compute_metrics(scenario, t + 100.0, poses, t_goals=100.0, goal_tolerance=0.1)
    assert m['collisions'] == 0
    assert m['min_separation'] == pytest.approx(0.6)
    assert m['min_clearance'] == pytest.approx(0.1)
    assert m['closest']['robots'] == (0, 1)
    assert m['closest']['time'] == pytest.approx(5.0)
    assert m['arrived'] == 2
    # Within 0.1 m of the goal after covering 3.9 of 4 m at 0.4 m/s.
    assert m['time_to_goal_mean'] == pytest.approx(9.75, abs=0.03)
    assert m['path_ratio_mean'] == pytest.approx(1.0)


def test_a_long_overlap_counts_as_one_collision_and_a_detour_lengthens_the_path():
    scenario = _two_robots()
    t, poses = _straight_run(0.3)   # discs of 0.25 m overlap while |dx| < 0.4 m
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    assert m['robot_collisions'] == 1
    assert m['colliding_pairs'] == [('a', 'b')]
    # A detour: robot a goes up 1.5 m and back (path 4 + 3 m).
    t = np.linspace(0.0, 10.0, 3)
    poses = np.array([[[-2, 0, 0], [2, 0.6, 0]], [[0, 1.5, 0], [-2, 0.6, 0]],
                      [[2, 0, 0], [-2, 0.6, 0]]], dtype=float)
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    assert m['collisions'] == 0
    assert m['path_ratio_max'] == pytest.approx(2 * math.hypot(2, 1.5) / 4.0)


def test_driving_through_an_obstacle_is_a_collision_and_not_arriving_is_reported():
    box = [[-0.5, -1.0], [0.5, -1.0], [0.5, -0.4], [-0.5, -0.4]]
    scenario = _two_robots({'polygons': [box]})
    t, poses = _straight_run(1.2)
    poses[:, 0, 1] = -0.5 + 0.5 * np.abs(poses[:, 0, 0]) / 2.0   # robot a dips into the box
    m = compute_metrics(scenario, t[:300], poses[:300], t_goals=0.0, goal_tolerance=0.1)
    assert m['obstacle_collisions'] == 1
    assert m['min_obstacle_clearance'] < -0.25
    assert m['arrived'] == 0 and math.isnan(m['time_to_goal_mean'])
    table = format_table(m, scenario, 'holonomic', tick=(1.234, 5.678))
    assert 'arrived                 | 0/2' in table
    assert 'robot-obstacle 1' in table
    assert '1.23 ms / 5.68 ms' in table


def test_plot_writes_a_small_png(tmp_path):
    scenario = load_scenario('blocks', robots=4)
    t = np.linspace(0.0, 20.0, 200)
    s = np.linspace(0.0, 1.0, 200)[:, None, None]
    starts = scenario.starts[None]
    goals = np.concatenate([scenario.goals, scenario.starts[:, 2:]], axis=1)[None]
    poses = (1 - s) * starts + s * goals
    m = compute_metrics(scenario, t, poses, 0.0)
    out = plot_run(scenario, poses, m, tmp_path / 'sub' / 'run.png', title='test')
    data = out.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    assert 10_000 < len(data) < 300_000


def test_launch_plan_matches_the_scenario():
    plan = launch_plan('corridor', robots=4, drive='differential', ground_truth='/tmp/x.npz')
    assert plan['sim']['robots'] == 4 and plan['sim']['drive'] == 'differential'
    assert plan['sim']['scenario'].endswith('corridor.yaml')
    assert plan['sim']['trajectory_file'] == '/tmp/x.npz'
    assert plan['node']['robots'] == plan['scenario'].names
    # The node plans with inflated radii and learns obstacles from the scans.
    assert plan['node']['scan_enabled'] is True
    assert plan['node']['east0']['radius'] == pytest.approx(0.2 + 0.05)
    assert plan['node']['west0']['drive'] == 'differential'
    args = parse_args(plan['demo_args'] + ['--ros-args', '-r', '__node:=x'])
    assert args.attach and args.robots == 4 and args.drive == 'differential'
    assert args.ground_truth == '/tmp/x.npz'


def test_bad_options_are_refused():
    for argv in (['--robots', '0'], ['--domain-id', '300'], ['--drive', 'omni'],
                 ['--timeout', '-1'], ['--safety-margin', '-0.1']):
        with pytest.raises(SystemExit):
            parse_args(argv)


def test_launch_file_builds_where_launch_ros_is_installed():
    pytest.importorskip('launch_ros')
    import importlib.util
    spec = importlib.util.spec_from_file_location('sim_demo',
                                                  REPO / 'launch' / 'sim_demo.launch.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    names = [a.name for a in description.entities if hasattr(a, 'name')]
    assert {'scenario', 'robots', 'drive', 'params_file', 'out'} <= set(names)


# --- end to end -------------------------------------------------------------------------------

def _run_demo(argv, domain_id, timeout):
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
               PYTHONPATH=os.pathsep.join([str(REPO)] + [
                   p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    return subprocess.run([sys.executable, '-m', 'orca_nav.demo', '--domain-id', str(domain_id),
                           '--quiet'] + argv, env=env, cwd=str(REPO), capture_output=True,
                          text=True, timeout=timeout)


def _run_scenarios(runs, tmp_path):
    """Run the demo on each (scenario, robots, drive, domain); return the failure reports."""
    # Two runs at a time: each is three processes (demo, simulator, node) mostly waiting on
    # real time, so two fit on two cores without starving the 10 Hz control loop.
    def run(spec):
        scenario, robots, drive, domain_id = spec
        out = tmp_path / f'{scenario}.png'
        result = _run_demo(['--scenario', scenario, '--robots', str(robots), '--drive', drive,
                            '--out', str(out)], domain_id, timeout=150)
        return spec, out, result

    failures = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for (scenario, robots, _, _), out, result in pool.map(run, runs):
            ok = (result.returncode == EXIT_OK and out.is_file()
                  and f'arrived                 | {robots}/{robots}' in result.stdout
                  and 'collisions              | 0 ' in result.stdout)
            if not ok:
                failures.append(f'--- {scenario} (exit code {result.returncode}):\n'
                                f'{result.stdout}{result.stderr}')
    return failures


def test_every_scenario_runs_to_completion_without_collisions(tmp_path):
    failures = _run_scenarios([('circle', 6, 'holonomic', 41),
                               ('crossing', 4, 'differential', 42),
                               ('corridor', 4, 'holonomic', 43),
                               ('blocks', 4, 'differential', 44),
                               ('random', 5, 'holonomic', 45)], tmp_path)
    assert not failures, '\n'.join(failures)


def test_the_default_demo_command_runs_end_to_end(tmp_path):
    out = tmp_path / 'demo.png'
    result = _run_demo(['--out', str(out)], 46, timeout=180)
    report = result.stdout + result.stderr
    assert result.returncode in (EXIT_OK, EXIT_COLLISION), report
    assert 'min separation' in result.stdout and 'node tick p50 / p99' in result.stdout, report
    # The simulator saved its ground truth on SIGINT and the metrics come from it.
    assert 'metrics (from the simulator ground truth)' in result.stdout, report
    assert 'n/a (the node published no tick statistics)' not in result.stdout, report
    assert out.read_bytes()[:4] == b'\x89PNG'
    assert result.returncode == EXIT_OK, report


def test_attach_mode_follows_a_fleet_started_elsewhere(tmp_path):
    # What sim_demo.launch.py does, without launch: the simulator and the node from the plan,
    # then the demo attached to them.
    plan = launch_plan('circle', robots=4, drive='differential',
                       ground_truth=tmp_path / 'truth.npz')
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', ROS_DOMAIN_ID='47',
               PYTHONPATH=os.pathsep.join([str(REPO)] + [
                   p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    procs = []
    for module, params in (('orca_nav.sim.node', plan['sim']), ('orca_nav.node', plan['node'])):
        path = write_params(tmp_path / f'{module}.yaml', params)
        procs.append(subprocess.Popen([sys.executable, '-m', module, '--ros-args',
                                       '--params-file', str(path)], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        out = tmp_path / 'attach.png'
        result = subprocess.run([sys.executable, '-m', 'orca_nav.demo', '--quiet', '--out',
                                 str(out)] + plan['demo_args'], env=env, cwd=str(REPO),
                                capture_output=True, text=True, timeout=120)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGINT)
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    report = result.stdout + result.stderr
    assert result.returncode == EXIT_OK, report
    assert 'metrics (from the simulator ground truth)' in result.stdout, report
    assert 'arrived                 | 4/4' in result.stdout, report
    assert out.is_file()
