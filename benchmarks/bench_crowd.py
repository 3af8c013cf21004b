r"""
Benchmark: crowd navigation as CrowdNav measures it (Chen, Liu, Kreiss, Alahi, ICRA 2019).

The test protocol of vita-epfl/CrowdNav (crowd_sim/envs/crowd_sim.py, crowd_nav/test.py,
crowd_nav/utils/explorer.py, crowd_nav/configs/env.config), rebuilt here with numpy and pyrvo
(the real RVO2 C++): one robot (radius 0.3 m, 1 m/s) from (0, -4) to (0, 4) through 5, 10 or 20
humans (radius 0.3 m, 1 m/s) driven by RVO2 as CrowdNav's ORCA policy drives them, on
CrowdNav's 500 seeded test cases (circle crossing, radius 4 m, or square crossing, width
10 m), with CrowdNav's collision, success and timeout rules and metrics. See docs/crowds.md.

Robots: ``rvo2`` is CrowdNav's ORCA robot (the paper's ORCA row), ``orca_nav`` the node's
FleetController built from the node's defaults, perceiving the humans either as they are
(``--perception true``, ``FleetInputs.set_people``) or through a simulated 360-beam lidar
(``--perception lidar``, the people tracker). Run from the repository root::

    python -m benchmarks.bench_crowd --robot rvo2                 # the paper's ORCA row
    python -m benchmarks.bench_crowd --robot orca_nav --period 0.1 --humans 10 \
        --metrics-json /tmp/m.json --failures /tmp/f.json
    python -m benchmarks.bench_crowd --robot orca_nav --param time_horizon:=3.0 --cases 50

From Python (a few cases quickly)::

    >>> from benchmarks.bench_crowd import CrowdConfig, run, run_episode
    >>> run_episode(7, CrowdConfig(robot='rvo2'))['outcome'] in ('success', 'collision',
    ...                                                           'timeout')
    True
    >>> run(CrowdConfig(robot='rvo2', cases=3))['cases']
    3
"""

import argparse
from dataclasses import asdict, dataclass, field
import json
import math
import time

import numpy as np
from orca_nav.control import FleetController, FleetInputs
from orca_nav.control.config import resolve
from orca_nav.control.parameters import defaults, validate
from orca_nav.control.scan_memory import ScanInput
from orca_nav.core.perception.raycast import cast_rays
from orca_nav.sim.processes import parse_param
import pyrvo

# CrowdNav's crowd_nav/configs/env.config.
TIME_LIMIT = 25.0        # [s] env.time_limit; an episode times out at global_time >= 25 - 1
TIME_STEP = 0.25         # [s] env.time_step
TEST_SIZE = 500          # env.test_size
CIRCLE_RADIUS = 4.0      # [m] sim.circle_radius (the robot starts and ends on it too)
SQUARE_WIDTH = 10.0      # [m] sim.square_width
HUMAN_RADIUS = 0.3       # [m] humans.radius
HUMAN_V_PREF = 1.0       # [m/s] humans.v_pref
ROBOT_RADIUS = 0.3       # [m] robot.radius
ROBOT_V_PREF = 1.0       # [m/s] robot.v_pref
DISCOMFORT_DIST = 0.2    # [m] reward.discomfort_dist
# crowd_sim.py reset(): the test phase seeds np.random with case_capacity['val'] + case id.
TEST_SEED_OFFSET = 1000
# crowd_sim/envs/policy/orca.py (humans and the ORCA robot alike).
ORCA_NEIGHBOR_DIST = 10.0
ORCA_MAX_NEIGHBORS = 10
ORCA_TIME_HORIZON = 5.0
ORCA_TIME_HORIZON_OBST = 5.0
ORCA_RADIUS_PAD = 0.01   # every agent's RVO2 radius is its radius + 0.01 (+ safety_space 0)
ORCA_MAX_SPEED = 1.0     # the policy's max_speed: the RVO2 speed of the *other* agents
# The simulated lidar of --perception lidar.
LIDAR_BEAMS = 360
LIDAR_RANGE = 10.0       # [m]
LIDAR_RANGE_MIN = 0.05   # [m]

# The paper's Table I (5 humans, circle crossing, invisible robot): success rate, collision
# rate, mean navigation time of the successes [s].
PUBLISHED = (
    ('ORCA', 0.43, 0.57, 10.86),
    ('CADRL', 0.78, 0.22, 10.80),
    ('LSTM-RL', 0.95, 0.03, 11.82),
    ('SARL', 0.99, 0.01, 10.55),
    ('LM-SARL', 1.00, 0.00, 10.46),
)


@dataclass
class CrowdConfig:
    """One benchmark configuration (the command line's options)."""

    robot: str = 'orca_nav'          # 'rvo2' (CrowdNav's ORCA robot) or 'orca_nav'
    humans: int = 5
    scenario: str = 'circle'         # 'circle' (circle crossing) or 'square' (square crossing)
    visible: bool = False            # the humans see (and avoid) the robot
    perception: str = 'true'         # orca_nav: 'true' (set_people) or 'lidar' (scans)
    period: float = TIME_STEP        # [s] the world's and the controller's step
    drive: str = 'holonomic'         # orca_nav: 'holonomic' or 'differential'
    params: dict = field(default_factory=dict)  # orca_nav parameter overrides {name: value}
    cases: int = TEST_SIZE
    first_case: int = 0
    lidar_noise: float = 0.01        # [m] range noise sigma of the simulated lidar


@dataclass
class CrowdCase:
    """Start and goal of the robot and of every human of one test case."""

    case: int
    robot_start: np.ndarray   # (2,)
    robot_goal: np.ndarray    # (2,)
    human_start: np.ndarray   # (H, 2)
    human_goal: np.ndarray    # (H, 2)


def generate_case(case, humans=5, scenario='circle'):
    """
    Return the CrowdCase of test case ``case``, drawn as CrowdNav's test phase draws it.

    The same seed (TEST_SEED_OFFSET + case) and the same sequence of uniform draws as
    CrowdSim.generate_circle_crossing_human / generate_square_crossing_human, so the starts
    and goals are CrowdNav's (every radius 0.3 m, so the keep-out is 0.3 + 0.3 + 0.2 m).
    """
    rng = np.random.RandomState(TEST_SEED_OFFSET + case)
    robot_start = np.array([0.0, -CIRCLE_RADIUS])
    robot_goal = np.array([0.0, CIRCLE_RADIUS])
    pos, goal = np.empty((humans + 1, 2)), np.empty((humans + 1, 2))
    pos[0], goal[0] = robot_start, robot_goal
    keep_out = HUMAN_RADIUS + ROBOT_RADIUS + DISCOMFORT_DIST

    def near(x, y, points):
        return bool((np.hypot(points[:, 0] - x, points[:, 1] - y) < keep_out).any())

    for n in range(1, humans + 1):
        if scenario == 'circle':
            while True:
                angle = rng.random_sample() * np.pi * 2
                nx = (rng.random_sample() - 0.5) * HUMAN_V_PREF
                ny = (rng.random_sample() - 0.5) * HUMAN_V_PREF
                x = CIRCLE_RADIUS * np.cos(angle) + nx
                y = CIRCLE_RADIUS * np.sin(angle) + ny
                if not (near(x, y, pos[:n]) or near(x, y, goal[:n])):
                    break
            pos[n], goal[n] = (x, y), (-x, -y)
        elif scenario == 'square':
            sign = -1 if rng.random_sample() > 0.5 else 1
            while True:
                x = rng.random_sample() * SQUARE_WIDTH * 0.5 * sign
                y = (rng.random_sample() - 0.5) * SQUARE_WIDTH
                if not near(x, y, pos[:n]):
                    break
            pos[n] = x, y
            while True:
                x = rng.random_sample() * SQUARE_WIDTH * 0.5 * -sign
                y = (rng.random_sample() - 0.5) * SQUARE_WIDTH
                if not near(x, y, goal[:n]):
                    break
            goal[n] = x, y
        else:
            raise ValueError(f'unknown scenario {scenario!r}')
    return CrowdCase(case, robot_start, robot_goal, pos[1:].copy(), goal[1:].copy())


def crossing_gaps(rel_pos, rel_vel, dt, radius_sum):
    """
    Return the closest gap of two discs over one step of relative motion (CrowdNav's rule).

    rel_pos, rel_vel (H, 2): each human's position and velocity relative to the robot at the
    step's start. The gap is the distance from the robot (the origin) to the segment the
    human sweeps, rel_pos -> rel_pos + rel_vel dt, minus the radii; < 0 is a collision.
    """
    d = rel_vel * dt
    dd = np.einsum('ij,ij->i', d, d)
    u = np.where(dd > 0.0, -np.einsum('ij,ij->i', rel_pos, d) / np.where(dd > 0.0, dd, 1.0),
                 0.0)
    u = np.clip(u, 0.0, 1.0)
    closest = rel_pos + u[:, None] * d
    return np.hypot(closest[:, 0], closest[:, 1]) - radius_sum


def _pref_velocity(pos, goal):
    """Return CrowdNav's ORCA preferred velocity: to the goal, unit length beyond 1 m."""
    dx, dy = goal[0] - pos[0], goal[1] - pos[1]
    dist = math.hypot(dx, dy)
    return (dx / dist, dy / dist) if dist > 1.0 else (dx, dy)


def _orca_sim(period, own_pos, own_vel, own_radius, own_max_speed, others_pos, others_vel,
              others_radius):
    """
    Return one ORCA policy's RVO2 simulator: itself as agent 0, then the agents it observes.

    As crowd_sim/envs/policy/orca.py builds it on its first call (it then keeps it and sets
    every agent's position and velocity on each call, which gives the same velocities).
    """
    params = (ORCA_NEIGHBOR_DIST, ORCA_MAX_NEIGHBORS, ORCA_TIME_HORIZON, ORCA_TIME_HORIZON_OBST)
    sim = pyrvo.RVOSimulator(period, *params, 0.3, 1.0)
    sim.add_agent(tuple(own_pos), *params, own_radius + ORCA_RADIUS_PAD, own_max_speed,
                  tuple(own_vel))
    for p, v, r in zip(others_pos, others_vel, others_radius):
        sim.add_agent(tuple(p), *params, r + ORCA_RADIUS_PAD, ORCA_MAX_SPEED, tuple(v))
    return sim


class OrcaAgents:
    """
    ORCA policies as CrowdNav runs them: one RVO2 simulator per agent (human or robot).

    Each call of ``act`` sets the agent's own state (agent 0, preferred velocity to its goal)
    and the observed agents' (preferred velocity zero: their goals are unknown), runs one
    RVO2 step and returns agent 0's new velocity, like ORCA.predict.
    """

    def __init__(self, period):
        """Start with no simulators (built on the first call, as CrowdNav does)."""
        self.period = period
        self.sims = {}

    def act(self, k, own_pos, own_vel, own_goal, own_radius, own_max_speed, others_pos,
            others_vel, others_radius):
        """Return the new velocity (vx, vy) of agent k from its full and observed states."""
        sim = self.sims.get(k)
        if sim is None:
            sim = self.sims[k] = _orca_sim(self.period, own_pos, own_vel, own_radius,
                                           own_max_speed, others_pos, others_vel, others_radius)
        else:
            sim.set_agent_position(0, own_pos)
            sim.set_agent_velocity(0, own_vel)
            for j, (p, v) in enumerate(zip(others_pos, others_vel)):
                sim.set_agent_position(j + 1, p)
                sim.set_agent_velocity(j + 1, v)
        sim.set_agent_pref_velocity(0, _pref_velocity(own_pos, own_goal))
        for j in range(len(others_pos)):
            sim.set_agent_pref_velocity(j + 1, (0.0, 0.0))
        sim.do_step()
        v = sim.get_agent_velocity(0)
        return v.x, v.y


def orca_nav_values(config):
    """Return the node's parameter values for the robot: defaults + the robot's facts."""
    values = defaults(['robot'])
    values.update(radius=ROBOT_RADIUS, max_speed=ROBOT_V_PREF, rate=1.0 / config.period,
                  drive=config.drive)
    if config.perception == 'lidar':
        values.update(scan_enabled=True, track_people=True)
    values.update(config.params)
    return values


def build_controller(config):
    """Return a FleetController built as the node builds it (validate, resolve, construct)."""
    values = orca_nav_values(config)
    error = validate(values)
    if error:
        raise ValueError(f'orca_nav parameters refused: {error}')
    settings = resolve(values)
    return FleetController(settings.fleet, settings.navigation)


class OrcaNavRobot:
    """The orca_nav controller as the robot's policy: odometry and people or scans in."""

    def __init__(self, config, case):
        """Build the controller and give it the goal."""
        self.config = config
        self.ctrl = build_controller(config)
        self.ctrl.set_goal(0, float(case.robot_goal[0]), float(case.robot_goal[1]))
        self.inputs = FleetInputs.empty(1)
        self.radii = np.full(len(case.human_start), HUMAN_RADIUS)
        self.beams = -np.pi + 2.0 * np.pi / LIDAR_BEAMS * np.arange(LIDAR_BEAMS)
        self.rng = np.random.default_rng(case.case)
        self.state = None  # the controller's state of the robot after the last step

    def act(self, now, pose, twist, hp, hv, radii=None):
        """
        Return the body-frame command (vx, vy, wz) for robot pose (x, y, yaw) at ``now``.

        hp, hv (H, 2): the humans it perceives; radii (H,): theirs (default 0.3 m each).
        """
        x, y, yaw = pose
        if radii is None:
            radii = self.radii if len(self.radii) == len(hp) else np.full(len(hp), HUMAN_RADIUS)
        self.inputs.set_odometry(0, x=x, y=y, yaw=yaw, time=now, v_forward=twist[0],
                                 v_left=twist[1], yaw_rate=twist[2])
        if self.config.perception == 'true':
            self.inputs.set_people(hp, hv, radii, time=now)
        else:
            ranges = cast_rays(np.array([x, y]), yaw + self.beams, LIDAR_RANGE, None, hp, radii)
            if self.config.lidar_noise > 0.0:
                hit = np.isfinite(ranges)
                noisy = ranges + self.rng.normal(0.0, self.config.lidar_noise, LIDAR_BEAMS)
                ranges = np.where(hit, np.clip(noisy, LIDAR_RANGE_MIN, LIDAR_RANGE), ranges)
            self.inputs.scans = [ScanInput(0, ranges, -np.pi, 2.0 * np.pi / LIDAR_BEAMS,
                                           LIDAR_RANGE_MIN, LIDAR_RANGE, now)]
        result = self.ctrl.step(self.inputs, now)
        self.state = str(result.states[0])
        return result.commands[0].copy()

    def close(self):
        """Stop the controller's planning worker."""
        self.ctrl.navigator.close()


def _integrate(pose, cmd, dt, differential):
    """Return the exact pose after dt of body command (vx, vy, wz); returns (x, y, yaw)."""
    x, y, yaw = pose
    vx, vy, wz = cmd
    if not differential:
        c, s = math.cos(yaw), math.sin(yaw)
        return x + (c * vx - s * vy) * dt, y + (s * vx + c * vy) * dt, yaw + wz * dt
    if abs(wz) < 1e-9:
        return x + vx * math.cos(yaw) * dt, y + vx * math.sin(yaw) * dt, yaw + wz * dt
    yaw1 = yaw + wz * dt
    return (x + vx / wz * (math.sin(yaw1) - math.sin(yaw)),
            y - vx / wz * (math.cos(yaw1) - math.cos(yaw)), yaw1)


def _nearest(hp, hv, rp, rv, gaps):
    """Return the human with the smallest gap: index, relative position and velocity, gap."""
    i = int(np.argmin(gaps))
    return {'human': i, 'rel_pos': (hp[i] - rp).round(3).tolist(),
            'rel_vel': (hv[i] - rv).round(3).tolist(), 'gap': round(float(gaps[i]), 4)}


def run_episode(case, config):
    """
    Run test case ``case`` (int or CrowdCase) under ``config``; return the episode's record.

    One CrowdSim.step per period: every human's ORCA action and the robot's action from the
    state at the step's start; then CrowdNav's checks in its order (timeout at
    t >= TIME_LIMIT - 1, collision over the step, goal reached at the step's end, discomfort);
    then everyone moves. The record: outcome ('success', 'collision', 'timeout'), time [s],
    steps, danger steps and their gaps, the smallest gap, and for failures what happened.
    """
    if not isinstance(case, CrowdCase):
        case = generate_case(case, config.humans, config.scenario)
    dt = config.period
    h = len(case.human_start)
    hp = case.human_start.astype(float).copy()
    hv = np.zeros((h, 2))
    hg = case.human_goal
    rp = case.robot_start.astype(float).copy()
    rv = np.zeros(2)
    yaw = np.pi / 2
    cmd = np.zeros(3)
    goal = case.robot_goal
    humans = OrcaAgents(dt)
    robot_orca = OrcaAgents(dt) if config.robot == 'rvo2' else None
    robot = OrcaNavRobot(config, case) if config.robot == 'orca_nav' else None
    differential = config.robot == 'orca_nav' and config.drive == 'differential'
    radius_sum = HUMAN_RADIUS + ROBOT_RADIUS
    human_radius = [HUMAN_RADIUS] * h
    danger_gaps = []
    min_gap = min_gap_moved = math.inf
    outcome, detail, k = None, {}, 0
    try:
        while outcome is None:
            now = k * dt
            hp_l, hv_l, rp_t, rv_t = hp.tolist(), hv.tolist(), tuple(rp), tuple(rv)
            actions = np.empty((h, 2))
            for i in range(h):
                others_p = hp_l[:i] + hp_l[i + 1:]
                others_v = hv_l[:i] + hv_l[i + 1:]
                radii = human_radius[:h - 1]
                if config.visible:
                    others_p, others_v = others_p + [rp_t], others_v + [rv_t]
                    radii = radii + [ROBOT_RADIUS]
                actions[i] = humans.act(i, hp_l[i], hv_l[i], tuple(hg[i]), HUMAN_RADIUS,
                                        HUMAN_V_PREF, others_p, others_v, radii)
            if robot_orca is not None:
                cmd[:2] = robot_orca.act(0, rp_t, rv_t, tuple(goal), ROBOT_RADIUS, ROBOT_V_PREF,
                                         hp_l, hv_l, human_radius)
                cmd[2] = 0.0
                x1, y1 = rp[0] + cmd[0] * dt, rp[1] + cmd[1] * dt
                yaw1 = yaw
            else:
                cmd = robot.act(now, (rp[0], rp[1], yaw), cmd, hp, hv)
                x1, y1, yaw1 = _integrate((rp[0], rp[1], yaw), cmd, dt, differential)
            new_rv = np.array([(x1 - rp[0]) / dt, (y1 - rp[1]) / dt])
            # CrowdSim.step: the humans' velocities of the step's start (their last actions)
            # against the robot's action over the step.
            gaps = crossing_gaps(hp - rp, hv - new_rv, dt, radius_sum)
            moved = crossing_gaps(hp - rp, actions - new_rv, dt, radius_sum)
            dmin = float(gaps.min()) if h else math.inf
            min_gap = min(min_gap, dmin)
            min_gap_moved = min(min_gap_moved, float(moved.min()) if h else math.inf)
            reached = math.hypot(x1 - goal[0], y1 - goal[1]) < ROBOT_RADIUS
            if now >= TIME_LIMIT - 1 - 1e-9:
                outcome = 'timeout'
            elif dmin < 0.0:
                outcome = 'collision'
            elif reached:
                outcome = 'success'
            elif dmin < DISCOMFORT_DIST:
                danger_gaps.append(dmin)
            if outcome in ('collision', 'timeout'):
                detail = {'command': cmd.round(3).tolist(),
                          'speed': round(float(np.hypot(*new_rv)), 3),
                          'robot': [round(rp[0], 3), round(rp[1], 3), round(yaw, 3)],
                          'goal_distance': round(math.hypot(*(goal - rp)), 3),
                          'nearest': _nearest(hp, hv, rp, new_rv, gaps) if h else None}
                if robot is not None:
                    detail['state'] = robot.state
            rp[:] = (x1, y1)
            yaw = math.atan2(math.sin(yaw1), math.cos(yaw1))
            rv = new_rv
            hp += actions * dt
            hv = actions
            k += 1
    finally:
        if robot is not None:
            robot.close()
    return {'case': case.case, 'outcome': outcome, 'time': k * dt, 'steps': k,
            'danger_steps': len(danger_gaps), 'danger_gap_sum': float(sum(danger_gaps)),
            'min_gap': min_gap, 'min_gap_moved': min_gap_moved, **detail}


def summarize(episodes, config, wall_time=None):
    """Return CrowdNav's test metrics (Explorer.run_k_episodes) of a list of episode records."""
    n = len(episodes)
    succ = [e for e in episodes if e['outcome'] == 'success']
    coll = [e for e in episodes if e['outcome'] == 'collision']
    tout = [e for e in episodes if e['outcome'] == 'timeout']
    # Explorer counts a timeout as time_limit long when it divides the danger steps.
    steps = (sum(e['time'] for e in succ + coll) + TIME_LIMIT * len(tout)) / config.period
    danger = sum(e['danger_steps'] for e in episodes)
    out = {
        'cases': n,
        'success_rate': len(succ) / n if n else math.nan,
        'collision_rate': len(coll) / n if n else math.nan,
        'timeout_rate': len(tout) / n if n else math.nan,
        'nav_time': (sum(e['time'] for e in succ) / len(succ)) if succ else TIME_LIMIT,
        'discomfort_frequency': danger / steps if steps else math.nan,
        'discomfort_mean_gap': (sum(e['danger_gap_sum'] for e in episodes) / danger
                                if danger else math.nan),
        'closest_gap': min((e['min_gap'] for e in episodes), default=math.nan),
        'closest_gap_moved': min((e['min_gap_moved'] for e in episodes), default=math.nan),
        'collision_cases': [e['case'] for e in coll],
        'timeout_cases': [e['case'] for e in tout],
        'config': asdict(config),
    }
    if wall_time is not None:
        out['wall_time_s'] = wall_time
        out['ms_per_case'] = 1000.0 * wall_time / n if n else math.nan
    return out


def run(config, episodes_out=None):
    """Run cases first_case .. first_case + cases - 1; return the summary (``summarize``)."""
    t0 = time.perf_counter()
    episodes = [run_episode(c, config)
                for c in range(config.first_case, config.first_case + config.cases)]
    summary = summarize(episodes, config, time.perf_counter() - t0)
    if episodes_out is not None:
        episodes_out.extend(episodes)
    return summary


def label(config):
    """Return a short name of a configuration for the table."""
    name = config.robot
    if config.robot == 'orca_nav':
        name += f' {config.perception} {config.drive[:4]} {config.period:g}s'
        if config.params:
            name += ' ' + ' '.join(f'{k}:={v}' for k, v in config.params.items())
    else:
        name += f' {config.period:g}s'
    name += f' {config.humans}h {config.scenario}' + (' visible' if config.visible else '')
    return name


def table(summary, config):
    """Return the printed table: the paper's rows (5 humans, circle, invisible) and this run."""
    lines = [f'{"policy":<48} {"success":>7} {"collis.":>7} {"timeout":>7} {"time":>6} '
             f'{"discomf":>7} {"gap":>6} {"closest":>7}']
    for name, s, c, t in PUBLISHED:
        lines.append(f'{"published " + name:<48} {s:7.2f} {c:7.2f} {"":>7} {t:6.2f}')
    m = summary
    lines.append(f'{label(config):<48} {m["success_rate"]:7.2f} {m["collision_rate"]:7.2f} '
                 f'{m["timeout_rate"]:7.2f} {m["nav_time"]:6.2f} '
                 f'{m["discomfort_frequency"]:7.3f} {m["discomfort_mean_gap"]:6.3f} '
                 f'{m["closest_gap"]:7.3f}')
    return '\n'.join(lines)


def main(argv=None):
    """Command line: run one configuration, print the table, write the JSON files."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--robot', choices=('rvo2', 'orca_nav'), default='orca_nav')
    ap.add_argument('--humans', type=int, default=5)
    ap.add_argument('--scenario', choices=('circle', 'square'), default='circle')
    ap.add_argument('--visible', action='store_true', help='the humans see the robot')
    ap.add_argument('--perception', choices=('true', 'lidar'), default='true')
    ap.add_argument('--period', type=float, default=TIME_STEP)
    ap.add_argument('--drive', choices=('holonomic', 'differential'), default='holonomic')
    ap.add_argument('--param', action='append', default=[], metavar='NAME:=VALUE',
                    help='orca_nav parameter override (repeatable), e.g. time_horizon:=3.0')
    ap.add_argument('--cases', type=int, default=TEST_SIZE)
    ap.add_argument('--first-case', type=int, default=0)
    ap.add_argument('--lidar-noise', type=float, default=0.01)
    ap.add_argument('--metrics-json', help='write every metric and the settings here')
    ap.add_argument('--failures', help='write one record per failed case here (JSON)')
    args = ap.parse_args(argv)
    config = CrowdConfig(robot=args.robot, humans=args.humans, scenario=args.scenario,
                         visible=args.visible, perception=args.perception, period=args.period,
                         drive=args.drive, params=dict(parse_param(p) for p in args.param),
                         cases=args.cases, first_case=args.first_case,
                         lidar_noise=args.lidar_noise)
    if config.robot == 'orca_nav':
        error = validate(orca_nav_values(config))
        if error:
            ap.error(error)
    episodes = []
    summary = run(config, episodes)
    print(table(summary, config))
    print(f'{summary["cases"]} cases in {summary["wall_time_s"]:.1f} s '
          f'({summary["ms_per_case"]:.0f} ms per case); closest gap with the humans\' actual '
          f'motion {summary["closest_gap_moved"]:.3f} m')
    if args.metrics_json:
        with open(args.metrics_json, 'w') as f:
            json.dump(summary, f, indent=1)
    if args.failures:
        with open(args.failures, 'w') as f:
            json.dump([e for e in episodes if e['outcome'] != 'success'], f, indent=1)


if __name__ == '__main__':
    main()
