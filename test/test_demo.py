"""
The demo: metrics, picture, launch plan, and real end-to-end runs.

The end-to-end tests (marked slow) start the simulator and the orca_nav node as processes
talking over real DDS (on loopback, domains 30, 36, 46 and 47): a few runs, one per drive and
one with a map, for what only DDS can check; every scenario in both drives runs lock-stepped in
test_scenario_worlds.py. They read the results from the demo's --metrics-json.
"""

from concurrent.futures import ThreadPoolExecutor
import json
import math
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
from orca_nav.control.parameters import FLEET_BY_NAME
from orca_nav.sim import demo
from orca_nav.sim.demo import EXIT_COLLISION, EXIT_ERROR, EXIT_OK, parse_args
from orca_nav.sim.metrics import compute_metrics, format_table, metrics_record
from orca_nav.sim.plot import plot_run
from orca_nav.sim.processes import (Child, child_env, GOAL_TOLERANCE, launch_plan,
                                    write_params)
from orca_nav.sim.scenarios import load_scenario, scenario_from_dict, scenario_path
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


def _straight_poses(scenario, steps=200):
    """Every robot on the straight line from its start to its goal."""
    s = np.linspace(0.0, 1.0, steps)[:, None, None]
    starts = scenario.starts[None]
    goals = np.concatenate([scenario.goals, scenario.starts[:, 2:]], axis=1)[None]
    return (1 - s) * starts + s * goals


def test_plot_writes_a_small_png(tmp_path):
    scenario = load_scenario('blocks', robots=4)
    t = np.linspace(0.0, 20.0, 200)
    poses = _straight_poses(scenario)
    m = compute_metrics(scenario, t, poses, 0.0)
    out = plot_run(scenario, poses, m, tmp_path / 'sub' / 'run.png', title='test')
    data = out.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    assert 10_000 < len(data) < 300_000


def test_plot_draws_the_map_and_the_routes(tmp_path):
    """The map's occupied cells (grey) and each robot's route (dashed) change the picture."""
    from PIL import Image
    scenario = load_scenario('office_mapfile', robots=2)
    poses = _straight_poses(scenario, 20)
    m = compute_metrics(scenario, np.linspace(0.0, 5.0, 20), poses, 0.0)
    plain = plot_run(scenario, poses, m, tmp_path / 'plain.png')
    routes = {r.name: np.array([r.start[:2], (0.0, 0.0), r.goal]) for r in scenario.robots}
    routed = plot_run(scenario, poses, m, tmp_path / 'routed.png', routes=routes)
    a = np.asarray(Image.open(plain).convert('L'), dtype=int)
    b = np.asarray(Image.open(routed).convert('L'), dtype=int)
    assert a.shape == b.shape and np.count_nonzero(a != b) > 200
    # The walls of the map: many mid-grey pixels (0.55 * 255 = 140).
    assert np.count_nonzero(np.abs(a - 140) <= 3) > 2000


def test_metrics_json_record_is_plain_json():
    scenario = _two_robots()
    t, poses = _straight_run(0.6)
    m = compute_metrics(scenario, t, poses[:, :, :], t_goals=0.0, goal_tolerance=0.1)
    m2 = compute_metrics(scenario, t[:100], poses[:100], t_goals=0.0, goal_tolerance=0.1)
    record = json.loads(json.dumps(metrics_record(scenario, 'holonomic', 0, m, (1.5, 3.0),
                                                  'test'), allow_nan=False))
    assert record['exit_code'] == 0 and record['arrived'] == 2 and record['collisions'] == 0
    assert record['robots'] == 2 and record['robot_names'] == ['a', 'b']
    assert record['min_separation'] == pytest.approx(0.6)
    assert record['time_to_goal']['a'] == pytest.approx(9.75, abs=0.03)
    assert record['path_ratio']['b'] == pytest.approx(1.0)
    assert (record['tick_ms_p50'], record['tick_ms_p99']) == (1.5, 3.0)
    # Robots that did not arrive: null, never NaN (which is not JSON).
    partial = metrics_record(scenario, 'holonomic', 2, m2)
    assert partial['time_to_goal'] == {'a': None, 'b': None}
    assert partial['time_to_goal_mean'] is None and partial['tick_ms_p50'] is None
    failed = metrics_record(scenario, 'x', 3, error='boom')
    assert json.loads(json.dumps(failed))['error'] == 'boom'


def _walker_run(w0_start=0.0):
    """
    Return the swap of _two_robots plus two walkers, sampled every 25 ms for 10 s.

    w0 walks up x = 0 from y = -2 at 0.4 m/s from t = w0_start (with 0: through the middle of
    the swap at t = 5, where robot a is); w1 walks along y = -1.5 from x = -0.5 at 0.4 m/s,
    through w0's path at t = 1.25 (when w0 is there too, for w0_start 0), 1.5 m from the robots.
    """
    scenario = scenario_from_dict({
        'robots': [{'name': 'a', 'start': [-2, 0], 'goal': [2, 0], 'radius': 0.25},
                   {'name': 'b', 'start': [2, 0.6], 'goal': [-2, 0.6], 'radius': 0.25}],
        'walkers': [{'name': 'w0', 'waypoints': [[0, -2], [0, 2]], 'speed': 0.4},
                    {'name': 'w1', 'waypoints': [[-0.5, -1.5], [3.5, -1.5]], 'speed': 0.4}]},
        name='walkers')
    t, robots = _straight_run(0.6)
    poses = np.zeros((len(t), 4, 3))
    poses[:, :2] = robots
    poses[:, 2, 1] = -2.0 + 0.4 * np.maximum(t - w0_start, 0.0)
    poses[:, 3, 0], poses[:, 3, 1] = -0.5 + 0.4 * t, -1.5
    return scenario, t, poses


def test_a_robot_crossing_a_walker_is_a_walker_collision_and_walkers_do_not_arrive():
    scenario, t, poses = _walker_run()
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    # Robots are robots only; w0 ends on its last waypoint but walkers never arrive.
    assert (m['robots'], m['walkers'], m['arrived']) == (2, 2, 2)
    assert np.isfinite(m['time_to_goal'][:2]).all() and np.isnan(m['time_to_goal'][2:]).all()
    assert np.isnan(m['path_ratio'][2:]).all() and np.isnan(m['line_deviation'][2:]).all()
    # w0 walks through both robots' discs; w0 and w1 overlap too, which does not count.
    assert m['walker_collisions'] == 2
    assert m['walker_colliding_pairs'] == [('a', 'w0'), ('b', 'w0')]
    assert m['min_walker_clearance'] == pytest.approx(-0.5)   # a and w0 at (0, 0) at t = 5
    assert (m['robot_collisions'], m['obstacle_collisions']) == (0, 0)
    assert m['collisions'] == 2
    # The robot-robot separation ignores the walkers (w0 is 0 from a at t = 5).
    assert m['min_separation'] == pytest.approx(0.6)
    assert m['closest']['robots'] == (0, 1)
    table = format_table(m, scenario, 'holonomic')
    assert 'walkers, 2 robots, holonomic, 2 walkers' in table
    assert 'arrived                 | 2/2' in table
    assert '2 (robot-robot 0, robot-obstacle 0, robot-walker 2)' in table
    assert 'walkers                 | 2, 2 robot-walker contacts, min clearance -0.500 m' in table
    record = json.loads(json.dumps(metrics_record(scenario, 'holonomic', 1, m),
                                   allow_nan=False))
    assert record['robot_names'] == ['a', 'b'] and record['walker_names'] == ['w0', 'w1']
    assert (record['robots'], record['walkers'], record['walker_collisions']) == (2, 2, 2)
    assert record['walker_colliding_pairs'] == [['a', 'w0'], ['b', 'w0']]
    assert set(record['time_to_goal']) == set(record['line_deviation']) == {'a', 'b'}


def test_a_walker_that_passes_when_the_robots_are_gone_is_no_collision():
    scenario, t, poses = _walker_run(w0_start=5.0)   # at y = 0 at t = 10, a at x = 2 then
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    assert (m['walker_collisions'], m['collisions'], m['arrived']) == (0, 0, 2)
    # Closest: a at (1, 0) and w0 at (0, -1) at t = 7.5.
    assert m['min_walker_clearance'] == pytest.approx(math.sqrt(2.0) - 0.5)
    # Without walkers: no walker line, clearance inf.
    m = compute_metrics(_two_robots(), t, poses[:, :2], t_goals=0.0, goal_tolerance=0.1)
    assert (m['walkers'], m['walker_collisions'], m['min_walker_clearance']) == (0, 0, math.inf)
    assert 'walker' not in format_table(m, _two_robots(), 'holonomic')


def test_walkers_the_odometry_does_not_show_are_no_contact():
    """The demo's odometry fallback has no walker poses (NaN rows): nothing is made up."""
    scenario, t, poses = _walker_run()
    poses[:, 2:] = np.nan
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    assert (m['arrived'], m['collisions'], m['walker_collisions']) == (2, 0, 0)
    assert m['min_walker_clearance'] == math.inf and m['min_separation'] == pytest.approx(0.6)
    json.dumps(metrics_record(scenario, 'holonomic', 0, m), allow_nan=False)


def test_plot_draws_the_walkers(tmp_path):
    from PIL import Image
    scenario, t, poses = _walker_run()
    m = compute_metrics(scenario, t, poses, 0.0)
    robots = _two_robots()
    plain = plot_run(robots, poses[:, :2], compute_metrics(robots, t, poses[:, :2], 0.0),
                     tmp_path / 'plain.png')
    walked = plot_run(scenario, poses, m, tmp_path / 'walked.png')
    a = np.asarray(Image.open(plain).convert('L'), dtype=int)
    b = np.asarray(Image.open(walked).convert('L'), dtype=int)
    assert a.shape == b.shape
    # The walkers' dark grey (0.35 * 255 = 89) dashed paths and markers.
    assert np.count_nonzero(np.abs(b - 89) <= 3) > np.count_nonzero(np.abs(a - 89) <= 3) + 200
    poses[:, 2:] = np.nan   # unknown walker poses still draw
    assert plot_run(scenario, poses, m, tmp_path / 'nan.png').is_file()


def test_demo_reads_the_node_defaults():
    """Goal tolerance and status topic come from the node's parameter table, not copies."""
    assert GOAL_TOLERANCE == FLEET_BY_NAME['goal_tolerance'].default
    assert demo.STATUS_TOPIC == FLEET_BY_NAME['status_topic'].default
    assert parse_args([]).goal_tolerance == FLEET_BY_NAME['goal_tolerance'].default


def test_children_run_on_a_private_domain_on_loopback():
    env = child_env(142, base={'PATH': '/bin', 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'SUBNET'})
    assert env['ROS_DOMAIN_ID'] == '142'
    assert env['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    # The package root (the folder holding orca_nav/) comes first on PYTHONPATH.
    assert (Path(env['PYTHONPATH'].split(os.pathsep)[0]) / 'orca_nav' / 'demo.py').is_file()


def test_a_bad_scenario_still_writes_the_metrics_json(tmp_path):
    out = tmp_path / 'm.json'
    code = demo.run(parse_args(['--scenario', 'no_such_scenario', '--metrics-json', str(out)]))
    assert code == EXIT_ERROR
    record = json.loads(out.read_text())
    assert record['exit_code'] == EXIT_ERROR and 'unknown scenario' in record['error']


def test_launch_plan_matches_the_scenario():
    plan = launch_plan('corridor', robots=4, drive='differential', ground_truth='/tmp/x.npz')
    assert plan['sim']['robots'] == 4 and plan['sim']['drive'] == 'differential'
    assert plan['sim']['scenario'].endswith('corridor.yaml')
    assert plan['sim']['trajectory_file'] == '/tmp/x.npz'
    assert plan['node']['robots'] == plan['scenario'].names
    # The node gets the true radii and its safety_margin (it plans with the radii grown by
    # the margin; the metrics judge contact on the true ones) and learns obstacles from scans.
    assert plan['node']['scan_enabled'] is True
    assert plan['node']['east0.radius'] == pytest.approx(0.2)
    assert plan['node']['radius'] == pytest.approx(0.2)
    assert plan['node']['safety_margin'] == pytest.approx(0.05)
    assert plan['node']['west0.drive'] == 'differential'
    args = parse_args(plan['demo_args'] + ['--ros-args', '-r', '__node:=x'])
    assert args.attach and args.robots == 4 and args.drive == 'differential'
    assert args.ground_truth == '/tmp/x.npz'


def test_bad_options_are_refused():
    for argv in (['--robots', '0'], ['--domain-id', '300'], ['--drive', 'omni'],
                 ['--timeout', '-1'], ['--safety-margin', '-0.1'], ['--safety-margin', '5.5'],
                 ['--map-delay', '-1'], ['--map-delay', 'nan']):
        with pytest.raises(SystemExit):
            parse_args(argv)
    # The node's range: a margin the node takes is one the demo takes.
    assert parse_args(['--safety-margin', '2.0']).safety_margin == 2.0
    assert parse_args(['--map-delay', '16']).map_delay == 16.0


def test_node_parameters_can_be_set_for_a_run(tmp_path):
    """--param sets a node parameter as ``ros2 run -p`` does; the node's checks apply first."""
    args = parse_args(['--scenario', 'cart_warehouse', '--param', 'footprint_differential:=true',
                       '--param', 'cart0.max_speed:=0.3'])
    assert args.param == {'footprint_differential': True, 'cart0.max_speed': 0.3}
    scenario = load_scenario(scenario_path('cart_warehouse'))
    node = demo._node_params(args, scenario)
    assert node['footprint_differential'] is True and node['cart0.max_speed'] == 0.3
    assert node['safety_margin'] == parse_args([]).safety_margin  # the rest as before
    with pytest.raises(SystemExit):
        parse_args(['--param', 'max_speed=0.3'])
    # Refused before anything starts: a misspelt name (with the nearest one) and a value the
    # node would refuse; the metrics JSON says why.
    for given, words in (('footprint_diferential:=true', 'did you mean footprint_differential'),
                         ('max_speed:=-1', 'max_speed')):
        out = tmp_path / 'm.json'
        code = demo.run(parse_args(['--scenario', 'cart_warehouse', '--param', given,
                                    '--metrics-json', str(out)]))
        assert code == EXIT_ERROR
        assert words in json.loads(out.read_text())['error']


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
#
# Over DDS, only what only DDS can check: the simulator, the node and the demo as processes, the
# default command and attach mode (one run per drive), the map latched by the simulator with
# the routes the node publishes, and an observed robot the simulator drives and the node hears.
# Whether every scenario arrives without contact, in both drives, is checked lock-stepped
# (deterministic, faster than real time) with the same node parameters:
#   every scenario, map scenarios included, and that a heavy robot keeps its line:
#       test_scenario_worlds.py::test_every_robot_arrives_without_contact
#   goals sent before the map comes (two_rooms differential, map 12 s late, and others):
#       test_scan_world.py::test_robots_that_set_off_before_the_map_came_arrive
#   an oblique wall only the scans show: test_scan_world.py::
#       test_a_wall_only_the_scans_show_is_never_touched (and test_node_world.py, the node)
#
# The six runs start together at this module's first test, two at a time: each is three
# processes (demo, simulator, node) mostly waiting on real time (about a quarter of a core
# each run), so two fit beside the other tests without starving the 10 Hz control loop. Each
# run has its own domain.
DOMAIN_IDS = {'default': 46, 'attach': 47, 'two_rooms': 36, 'mixed': 30, 'cart_door': 48,
              'cart_aisle': 49}


def _env(**extra):
    return dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST',
                PYTHONPATH=os.pathsep.join([str(REPO)] + [
                    p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]),
                **extra)


def _run_demo(argv, domain_id, timeout):
    return subprocess.run([sys.executable, '-m', 'orca_nav.demo', '--domain-id', str(domain_id),
                           '--quiet'] + argv, env=_env(), cwd=str(REPO), capture_output=True,
                          text=True, timeout=timeout)


def _read_metrics(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def _default_run(tmp_path):
    """Run the README's demo command; return (result, metrics, picture)."""
    out, metrics = tmp_path / 'demo.png', tmp_path / 'demo.json'
    result = _run_demo(['--out', str(out), '--metrics-json', str(metrics)],
                       DOMAIN_IDS['default'], timeout=180)
    return result, _read_metrics(metrics), out


def _attach_run(tmp_path):
    """
    Do what sim_demo.launch.py does, without launch; return (result, metrics, picture).

    The simulator and the node from the plan (circle, 4 differential robots), then the demo
    attached to them.
    """
    plan = launch_plan('circle', robots=4, drive='differential',
                       ground_truth=tmp_path / 'truth.npz')
    env = _env(ROS_DOMAIN_ID=str(DOMAIN_IDS['attach']))
    procs = []
    for module, params in (('orca_nav.sim.node', plan['sim']), ('orca_nav.node', plan['node'])):
        path = write_params(tmp_path / f'{module}.yaml', params)
        procs.append(Child(module, [sys.executable, '-m', module, '--ros-args',
                                    '--params-file', str(path)], env, tmp_path))
    metrics, out = tmp_path / 'attach.json', tmp_path / 'attach.png'
    try:
        result = subprocess.run([sys.executable, '-m', 'orca_nav.demo', '--quiet', '--out',
                                 str(out), '--metrics-json', str(metrics)] + plan['demo_args'],
                                env=env, cwd=str(REPO), capture_output=True, text=True,
                                timeout=120)
    finally:
        for proc in procs:
            proc.stop()
    return result, _read_metrics(metrics), out


def _scenario_run(tmp_path, scenario, drive, domain_id):
    """Run the demo on a scenario; return (result, metrics, picture)."""
    out, metrics = tmp_path / f'{scenario}.png', tmp_path / f'{scenario}.json'
    timeout = load_scenario(scenario).timeout + 120.0
    result = _run_demo(['--scenario', scenario, '--drive', drive, '--out', str(out),
                        '--metrics-json', str(metrics)], domain_id, timeout=timeout)
    return result, _read_metrics(metrics), out


# name -> (the test that reads it, what runs it), the longest first (alone here: cart_door 50 s,
# cart_aisle 30 s, two_rooms 27 s, attach about 25 s, mixed 23 s, default 21 s).
E2E_RUNS = {
    'cart_door': ('test_carts_pass_a_door_they_fit_turned_end_to_end_over_dds',
                  lambda tmp: _scenario_run(tmp, 'cart_door', 'holonomic',
                                            DOMAIN_IDS['cart_door'])),
    'cart_aisle': ('test_carts_pass_side_by_side_in_an_aisle_end_to_end_over_dds',
                   lambda tmp: _scenario_run(tmp, 'cart_aisle', 'holonomic',
                                             DOMAIN_IDS['cart_aisle'])),
    'two_rooms': ('test_a_map_scenario_runs_end_to_end_over_dds',
                  lambda tmp: _scenario_run(tmp, 'two_rooms', 'holonomic',
                                            DOMAIN_IDS['two_rooms'])),
    'attach': ('test_attach_mode_follows_a_fleet_started_elsewhere', _attach_run),
    'mixed': ('test_an_observed_robot_runs_end_to_end_over_dds',
              lambda tmp: _scenario_run(tmp, 'mixed', 'holonomic', DOMAIN_IDS['mixed'])),
    'default': ('test_the_default_demo_command_runs_end_to_end', _default_run),
}


@pytest.fixture(scope='session')
def end_to_end(request, tmp_path_factory):
    """
    Start the DDS runs of the selected tests together, two at a time: name -> Future.

    For the session, started by this module's first test (``_runs_in_the_background``): the
    runs mostly wait on real time, so the other real-time modules' tests run meanwhile and
    the tests that read them come last (conftest.py orders every test that uses this fixture
    after the rest of the real-time ones).
    """
    selected = {item.originalname for item in request.session.items}
    pool = ThreadPoolExecutor(max_workers=2)
    futures = {name: pool.submit(run, tmp_path_factory.mktemp(name))
               for name, (test, run) in E2E_RUNS.items() if test in selected}
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope='session', autouse=True)
def _runs_in_the_background(end_to_end):
    """Start the end-to-end runs at this module's first test (see ``end_to_end``)."""


def _all_arrived(result, m, out):
    """Failure report of a run in which not every robot arrived without contact, else ''."""
    ok = (result.returncode == EXIT_OK and out.is_file() and m is not None
          and m['exit_code'] == EXIT_OK and m['arrived'] == m['robots']
          and m['collisions'] == 0)
    return '' if ok else (f'exit code {result.returncode}, metrics {m}:\n'
                          f'{result.stdout}{result.stderr}')


@pytest.mark.slow
def test_the_default_demo_command_runs_end_to_end(end_to_end):
    result, m, out = end_to_end['default'].result()
    report = result.stdout + result.stderr
    assert result.returncode in (EXIT_OK, EXIT_COLLISION), report
    assert m is not None, report
    assert m['exit_code'] == result.returncode
    assert m['scenario'] == 'circle' and m['drive'] == 'holonomic', report
    # The simulator saved its ground truth on SIGINT and the metrics come from it.
    assert m['ground_truth'] == 'simulator ground truth', report
    assert m['tick_ms_p50'] is not None and m['tick_ms_p99'] >= m['tick_ms_p50'], report
    assert m['robots'] == 10 and all(v is not None for v in m['time_to_goal'].values()), report
    assert out.read_bytes()[:4] == b'\x89PNG'
    assert result.returncode == EXIT_OK, report


@pytest.mark.slow
def test_attach_mode_follows_a_fleet_started_elsewhere(end_to_end):
    result, m, out = end_to_end['attach'].result()
    report = result.stdout + result.stderr
    assert result.returncode == EXIT_OK, report
    assert m['ground_truth'] == 'simulator ground truth', report
    assert (m['arrived'], m['robots'], m['collisions']) == (4, 4, 0), report
    assert out.is_file()


@pytest.mark.slow
def test_a_map_scenario_runs_end_to_end_over_dds(end_to_end):
    """two_rooms: the map over DDS, routes through the doors; all arrive without contact."""
    result, m, out = end_to_end['two_rooms'].result()
    assert not _all_arrived(result, m, out), _all_arrived(result, m, out)
    assert m['scenario'] == 'two_rooms' and m['drive'] == 'holonomic'


@pytest.mark.slow
def test_an_observed_robot_runs_end_to_end_over_dds(end_to_end):
    """mixed: an observed robot (the simulator drives it) crosses a ring; no contact."""
    result, m, out = end_to_end['mixed'].result()
    assert not _all_arrived(result, m, out), _all_arrived(result, m, out)
    assert 'agv' in m['robot_names'] and m['time_to_goal']['agv'] is not None


@pytest.mark.slow
def test_carts_pass_a_door_they_fit_turned_end_to_end_over_dds(end_to_end):
    """cart_door: four 0.9 x 0.6 m carts through a 0.8 m door; contact on the polygons."""
    result, m, out = end_to_end['cart_door'].result()
    assert not _all_arrived(result, m, out), _all_arrived(result, m, out)
    assert m['scenario'] == 'cart_door' and m['drive'] == 'holonomic'


@pytest.mark.slow
def test_carts_pass_side_by_side_in_an_aisle_end_to_end_over_dds(end_to_end):
    """cart_aisle: two 0.9 x 0.6 m carts meet head-on in a 1.5 m aisle; no contact."""
    result, m, out = end_to_end['cart_aisle'].result()
    assert not _all_arrived(result, m, out), _all_arrived(result, m, out)
    assert m['scenario'] == 'cart_aisle' and m['drive'] == 'holonomic'


CART = [[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]]   # 0.9 x 0.6 m


def _carts(obstacles=None, walkers=None):
    """
    Two carts (footprints) driving along x, b 0.65 m left of a: 0.05 m between their sides.

    The scenario's starts are farther apart (a file's starts may not overlap as discs).
    """
    data = {'robots': [{'name': 'a', 'start': [-2, 0], 'goal': [2, 0], 'footprint': CART},
                       {'name': 'b', 'start': [-2, 1.5], 'goal': [2, 1.5],
                        'footprint': CART}]}
    if obstacles:
        data['obstacles'] = obstacles
    if walkers:
        data['walkers'] = walkers
    scenario = scenario_from_dict(data, name='carts')
    t = np.linspace(0.0, 10.0, 101)
    poses = np.zeros((101, 2, 3))
    poses[:, :, 0] = np.linspace(-2.0, 2.0, 101)[:, None]
    poses[:, 1, 1] = 0.65
    return scenario, t, poses


def test_carts_side_by_side_are_no_collision_though_their_discs_overlap():
    scenario, t, poses = _carts()
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    assert (m['robot_collisions'], m['collisions']) == (0, 0)
    assert m['min_clearance'] == pytest.approx(0.05)
    assert m['min_separation'] == pytest.approx(0.65)
    assert 0.65 < 2 * scenario.radii[0]   # the discs overlap
    table = format_table(m, scenario, 'holonomic')
    assert 'contact judged on       | footprints turned by their yaws (a, b)' in table
    assert 'between shapes' in table
    assert 'discs of the robots' in format_table(m, _two_robots(), 'holonomic')
    # Turned 90 deg at one sample, a's long side reaches b: one collision.
    poses[50, 0, 2] = math.pi / 2
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    assert m['robot_collisions'] == 1 and m['closest']['step'] == 50
    assert m['min_clearance'] == pytest.approx(0.65 - 0.3 - 0.45)


def test_a_carts_corner_in_a_wall_is_an_obstacle_collision_its_side_along_it_is_not():
    wall = {'segments': [[[-1.4, -0.35], [1.4, -0.35]]]}   # clear of the discs at the ends
    scenario, t, poses = _carts(wall)
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    assert (m['obstacle_collisions'], m['collisions']) == (0, 0)
    assert m['min_obstacle_clearance'] == pytest.approx(0.05)
    poses[30:40, 0, 2] = -0.3   # a turns: its front right corner dips 0.07 m into the wall
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    corner_y = 0.45 * math.sin(-0.3) - 0.3 * math.cos(-0.3)
    assert m['obstacle_collisions'] == 1
    assert m['min_obstacle_clearance'] == pytest.approx(corner_y + 0.35)


def test_a_walker_beside_a_cart_is_judged_on_its_polygon():
    scenario, t, poses = _carts(walkers=[{'name': 'w', 'waypoints': [[0, -0.5], [0, -0.6]],
                                          'radius': 0.1}])
    poses = np.concatenate([poses, np.zeros((101, 1, 3))], axis=1)
    poses[:, 2, 1] = -0.5
    m = compute_metrics(scenario, t, poses, t_goals=0.0, goal_tolerance=0.1)
    assert m['walker_collisions'] == 0
    assert m['min_walker_clearance'] == pytest.approx(0.1)


def test_plot_draws_footprints_as_turned_polygons(tmp_path):
    """Carts are drawn as their polygons: a PNG, and turning a cart changes the picture."""
    from PIL import Image
    scenario, t, poses = _carts()
    m = compute_metrics(scenario, t, poses, 0.0)
    straight = plot_run(scenario, poses, m, tmp_path / 'carts.png')
    assert straight.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    poses[-1, 0, 2] = math.pi / 4
    turned = plot_run(scenario, poses, compute_metrics(scenario, t, poses, 0.0),
                      tmp_path / 'turned.png')
    a = np.asarray(Image.open(straight).convert('L'), dtype=int)
    b = np.asarray(Image.open(turned).convert('L'), dtype=int)
    assert a.shape == b.shape and np.count_nonzero(a != b) > 100
