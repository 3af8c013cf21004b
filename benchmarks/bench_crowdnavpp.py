r"""
Benchmark: crowd navigation as CrowdNav++ measures it (Liu et al., ICRA 2023).

The test protocol of Shuijing725/CrowdNav_Prediction_AttnGraph ("Intention Aware Robot Crowd
Navigation with Attention-Based Interaction Graph"), environment ``CrowdSimVarNum-v0``, rebuilt
with numpy and pyrvo (the real RVO2 C++), from these files of that repository:

- crowd_sim/envs/crowd_sim_var_num.py: ``generate_robot_humans`` (robot start and goal in the
  12 m square, at least 8 m apart), ``generate_circle_crossing_human`` (20 humans on a circle of
  radius 6 sqrt 2 m plus a noise of 0-2 m per axis, goal the opposite point), ``reset`` (the
  seed), ``step`` (the order of one step, the replacement of a human at its goal),
  ``calc_human_future_traj`` and ``calc_reward`` (collision, success, timeout and the
  *intrusion*: the robot within 0.6 m of where a human it sees will be in 1.25 s);
- crowd_sim/envs/crowd_sim.py: ``detect_visible`` (5 m sensor range), ``update_last_human_states``
  (what the ORCA robot observes), ``update_human_goals_randomly`` (goal changes every 5 s);
- crowd_sim/envs/utils/agent.py: ``sample_random_attributes`` (radius 0.3-0.5 m, speed 0.5-1.5
  m/s) and the ORCA ``neighbor_dist`` redrawn in [5, 10] m at every agent's creation;
- crowd_nav/policy/orca.py: one RVO2 simulator per agent, built on its first call and kept;
- crowd_nav/configs/config.py, trained_models/ORCA_no_rand/{configs/config.py,arguments.py}: the
  settings (0.25 s steps, time limit 50 s, safety space 0.15 m, seed 425);
- rl/evaluation.py, rl/networks/dummy_vec_env.py, rl/networks/envs.py, test.py: the metrics and
  the seeding (two resets per test episode: episode k runs scenario 1425 + 2k mod 500).

See docs/crowds.md, section "CrowdNav++", for the rules, the traps and the figures. Robots:
``rvo2`` is the repository's ORCA robot (``--rand`` reproduces its shipped ORCA test log),
``orca_nav`` the node's FleetController (bench_crowd's OrcaNavRobot) seeing the humans within
5 m, as they are (``--perception true``) or through a simulated lidar (``lidar``)::

    python -m benchmarks.bench_crowdnavpp --robot rvo2 --rand        # the repository's ORCA log
    python -m benchmarks.bench_crowdnavpp --robot orca_nav --period 0.1 --jobs 2 --rand \
        --drive differential --metrics-json /tmp/m.json --failures /tmp/f.json

From Python::

    >>> from benchmarks.bench_crowdnavpp import PPConfig, run_episode
    >>> run_episode(3, PPConfig(robot='rvo2', rand=True))['outcome']
    'collision'
"""

import argparse
from dataclasses import asdict, dataclass, field
from fractions import Fraction
import functools
import json
import math
import multiprocessing
import time

import numpy as np
from orca_nav.control.parameters import validate
import pyrvo

try:  # as a package (python -m benchmarks...) or loaded by file (the tests' load_benchmark)
    from benchmarks.bench_crowd import _integrate, orca_nav_values, OrcaNavRobot, parse_param
except ImportError:  # pragma: no cover
    from bench_crowd import _integrate, orca_nav_values, OrcaNavRobot, parse_param

# crowd_nav/configs/config.py (and trained_models/ORCA_no_rand/configs/config.py).
TIME_LIMIT = 50.0          # [s] env.time_limit; timeout once global_time >= 50 - 1
TIME_STEP = 0.25           # [s] env.time_step
TEST_SIZE = 500            # env.test_size (also the case counter's modulus)
HUMAN_NUM = 20             # sim.human_num (human_num_range 0)
CIRCLE_RADIUS = 6.0 * math.sqrt(2.0)  # [m] sim.circle_radius
ARENA_SIZE = 6.0           # [m] sim.arena_size: the robot's start and goal in [-6, 6]^2
ROBOT_MIN_TRAVEL = 8.0     # [m] crowd_sim_var_num.py generate_robot_humans
HUMAN_NOISE = 2.0          # [m] the start noise, uniform in [0, 2) per axis (not centred)
HUMAN_RADIUS = 0.3         # [m] humans.radius (config value; also the intrusion's)
HUMAN_V_PREF = 1.0         # [m/s] humans.v_pref
RAND_RADIUS = (0.3, 0.5)   # [m] agent.py sample_random_attributes
RAND_V_PREF = (0.5, 1.5)   # [m/s]
RAND_NEIGHBOR_DIST = (5.0, 10.0)  # [m] agent.py: config.orca.neighbor_dist at each creation
ROBOT_RADIUS = 0.3         # [m] robot.radius
ROBOT_V_PREF = 1.0         # [m/s] robot.v_pref
SENSOR_RANGE = 5.0         # [m] robot.sensor_range (gap between the discs)
DISCOMFORT_DIST = 0.25     # [m] reward.discomfort_dist (keep-out when placing humans)
GOAL_CHANGE_PERIOD = 5.0   # [s] global_time % 5 == 0
GOAL_CHANGE_CHANCE = 0.5   # humans.goal_change_chance
PREDICT_STEPS = 5          # sim.predict_steps
PREDICT_STEP = 0.25        # [s] data.pred_timestep (= env.time_step)
INTRUSION_DIST = ROBOT_RADIUS + HUMAN_RADIUS  # [m] calc_reward: robot.radius + humans.radius
# crowd_nav/policy/orca.py with config.orca.
ORCA_NEIGHBOR_DIST = 10.0
ORCA_TIME_HORIZON = 5.0
ORCA_SAFETY_SPACE = 0.15   # orca.safety_space: every RVO2 radius is radius + 0.01 + 0.15
ORCA_PAD = 0.01 + ORCA_SAFETY_SPACE
ORCA_OTHERS_MAX_SPEED = 1.0
# crowd_sim.py reset: seed = counter_offset['test'] (1000) + case counter + thisSeed, with
# thisSeed = args.seed (425, trained_models/ORCA_no_rand/arguments.py) + rank 0.
SEED_BASE = 1000 + 425

# The repository's test logs (trained_models/*/test/*.log): success, collision, timeout,
# navigation time [s], path length [m] (with the jump to the next start), intrusion ratio [%].
# The two CrowdNav++ rows are the paper's figures quoted in the task (0.924 / 0.072 / 4.2 %,
# 0.876 / 0.124 / 8.4 %), which the logs' case lists give exactly.
PUBLISHED = (
    ('CrowdNav++ (GST_predictor_non_rand)', False, 0.924, 0.072, 0.004, 15.42, 20.96, 4.23),
    ('CrowdNav++ (GST_predictor_rand)', True, 0.876, 0.124, 0.000, 14.14, 20.08, 8.35),
    ('ORCA log (ORCA_no_rand, run with rand)', True, 0.692, 0.292, 0.016, 14.77, 17.67, 19.61),
    ('social force log (SF_no_rand)', False, 0.340, 0.640, 0.024, 19.95, 17.75, 21.35),
)
# trained_models/ORCA_no_rand/test/test_00000.pt.log: the episodes that did not succeed.
LOG_ORCA_COLLISIONS = tuple(int(c) for c in """
0 3 5 6 8 12 13 16 20 21 30 31 34 36 39 42 46 47 49 51 55 62 71 78 87 88 90 92 94 102 104 105 109
112 113 115 117 118 119 120 121 123 126 130 131 133 138 142 153 160 162 172 176 181 183 189 191
194 198 200 206 211 214 219 223 227 236 243 244 245 247 248 249 250 253 255 256 258 262 263 266
270 271 280 281 284 286 289 292 296 297 299 301 305 312 321 328 337 338 340 342 344 352 354 355
359 362 363 365 367 368 369 370 371 373 376 380 381 383 388 392 403 410 412 422 426 431 433 439
441 444 448 450 456 461 464 469 473 477 486 493 494 495 497 498 499""".split())
LOG_ORCA_TIMEOUTS = (28, 150, 235, 239, 278, 400, 485, 489)


@dataclass
class PPConfig:
    """One benchmark configuration (the command line's options)."""

    robot: str = 'orca_nav'       # 'rvo2' (the repository's ORCA robot) or 'orca_nav'
    rand: bool = False            # randomised humans (radius, speed, neighbor_dist), goal changes
    perception: str = 'true'      # orca_nav: 'true' (set_people) or 'lidar' (scans)
    period: float = TIME_STEP     # [s] the world's and the robot's step
    drive: str = 'holonomic'      # orca_nav: 'holonomic' or 'differential'
    params: dict = field(default_factory=dict)  # orca_nav parameter overrides
    cases: int = TEST_SIZE
    first_case: int = 0
    jobs: int = 1
    lidar_noise: float = 0.01     # [m]


# Cases from TEST_SIZE on are a development set, none of them a public scenario: seeds
# DEV_SEED_BASE + the reset counter, without the modulus (tune on these, report cases 0-499).
DEV_SEED_BASE = 100000


def _reset_seed(case, reset):
    """Return the seed of reset ``reset`` (0 or 1) of test episode ``case``."""
    if case >= TEST_SIZE:
        return DEV_SEED_BASE + 2 * case + reset
    return SEED_BASE + (2 * case + reset) % TEST_SIZE


def scenario_seed(case):
    """Return the seed of test episode ``case`` (two resets per episode, counter mod 500)."""
    return _reset_seed(case, 0)


def _steps_per(seconds, period):
    """Return seconds / period as an exact fraction (periods are decimal, e.g. 0.1)."""
    return Fraction(seconds).limit_denominator(10000) / Fraction(period).limit_denominator(10000)


class _Policy:
    """
    One agent's ORCA policy (crowd_nav/policy/orca.py): its own RVO2 simulator, kept.

    Built on the first call with the agents observed then: their radii and the neighbour
    distance of that moment stay in it (the policy only sets positions and velocities later).
    Only agent 0's velocity is read, so the others get no neighbours (same answer, cheaper).
    """

    __slots__ = ('sim', 'dt')

    def __init__(self, period, own, own_radius, own_max_speed, others, others_radii,
                 neighbor_dist):
        """Build the simulator: ``own`` (pos, vel) as agent 0, ``others`` [(pos, vel)] after."""
        n = len(others)
        params = (neighbor_dist, n, ORCA_TIME_HORIZON, ORCA_TIME_HORIZON)
        self.sim = sim = pyrvo.RVOSimulator(period, *params, own_radius, ORCA_OTHERS_MAX_SPEED)
        self.dt = period
        sim.add_agent(own[0], *params, own_radius + ORCA_PAD, own_max_speed, own[1])
        for (p, v), r in zip(others, others_radii):
            a = sim.add_agent(p, *params, r + ORCA_PAD, ORCA_OTHERS_MAX_SPEED, v)
            sim.set_agent_max_neighbors(a, 0)

    def act(self, period, own_p, own_v, goal, others_p, others_v):
        """Return agent 0's velocity after one RVO2 step (ORCA.predict)."""
        sim = self.sim
        if period != self.dt:
            sim.set_time_step(period)
            self.dt = period
        sim.set_agent_position(0, own_p)
        sim.set_agent_velocity(0, own_v)
        for j in range(len(others_p)):
            sim.set_agent_position(j + 1, others_p[j])
            sim.set_agent_velocity(j + 1, others_v[j])
        dx, dy = goal[0] - own_p[0], goal[1] - own_p[1]
        d = math.hypot(dx, dy)
        sim.set_agent_pref_velocity(0, (dx / d, dy / d) if d > 1.0 else (dx, dy))
        sim.do_step()
        v = sim.get_agent_velocity(0)
        return v.x, v.y


class World:
    """
    One test episode's world as CrowdSimVarNum keeps it: robot, humans, the seeded draws.

    ``reset`` draws exactly as the repository's reset does (the robot's start and goal, then each
    human: with ``rand`` its neighbour distance, speed and radius, then its place), from a
    RandomState seeded as the evaluation seeds episode ``case``; later draws (goal changes,
    replacements) come from the same stream in the same order.
    """

    def __init__(self, case, rand, period=TIME_STEP):
        """Reset the world to test episode ``case``."""
        self.rand = rand
        self.period = period
        self.rng = np.random.RandomState(scenario_seed(case))
        self.neighbor_dist = ORCA_NEIGHBOR_DIST   # config.orca.neighbor_dist, shared
        rng = self.rng
        while True:
            px, py, gx, gy = rng.uniform(-ARENA_SIZE, ARENA_SIZE, 4)
            if math.hypot(px - gx, py - gy) >= ROBOT_MIN_TRAVEL:
                break
        self.rp = np.array([px, py])
        self.rgoal = np.array([gx, gy])
        h = HUMAN_NUM
        self.hp = np.zeros((h, 2))
        self.hv = np.zeros((h, 2))
        self.hg = np.zeros((h, 2))
        self.hr = np.full(h, HUMAN_RADIUS)
        self.hs = np.full(h, HUMAN_V_PREF)
        self.policies = [None] * h
        self.policy_dist = [ORCA_NEIGHBOR_DIST] * h  # neighbour distance when created
        for i in range(h):
            self._place_human(i, i)
        self.visible = self.see()
        # update_last_human_states(reset=True): the unseen at (15, 15), radius 0.3
        self.last = np.tile([15.0, 15.0, 0.0, 0.0, 0.3], (h, 1))
        self._observe(reset=True)

    def _new_attributes(self):
        """Draw a new Human's attributes (Agent.__init__, sample_random_attributes)."""
        if self.rand:
            self.neighbor_dist = self.rng.uniform(*RAND_NEIGHBOR_DIST)
            v_pref = self.rng.uniform(*RAND_V_PREF)
            radius = self.rng.uniform(*RAND_RADIUS)
            return radius, v_pref
        return HUMAN_RADIUS, HUMAN_V_PREF

    def _clear(self, x, y, radius, agents):
        """Return True if (x, y) keeps radius + theirs + 0.25 m from the agents' places, goals."""
        for (px, py), (gx, gy), r in agents:
            d = radius + r + DISCOMFORT_DIST
            if math.hypot(x - px, y - py) < d or math.hypot(x - gx, y - gy) < d:
                return False
        return True

    def _agents(self, n, skip=None):
        """Return [(pos, goal, radius)] of the robot and humans 0..n-1 but ``skip``."""
        out = [(self.rp, self.rgoal, ROBOT_RADIUS)]
        out += [(self.hp[j], self.hg[j], self.hr[j]) for j in range(n) if j != skip]
        return out

    def _place_human(self, i, n):
        """generate_circle_crossing_human into slot i, kept clear of robot and humans 0..n-1."""
        radius, v_pref = self._new_attributes()
        agents = self._agents(n)
        rng = self.rng
        while True:
            angle = rng.random_sample() * np.pi * 2
            nx = rng.uniform(0, 1) * HUMAN_NOISE
            ny = rng.uniform(0, 1) * HUMAN_NOISE
            x = CIRCLE_RADIUS * np.cos(angle) + nx
            y = CIRCLE_RADIUS * np.sin(angle) + ny
            if self._clear(x, y, radius, agents):
                break
        self.hp[i] = x, y
        self.hg[i] = -x, -y
        self.hv[i] = 0.0
        self.hr[i] = radius
        self.hs[i] = v_pref
        self.policies[i] = None

    def change_goals(self):
        """update_human_goals_randomly: each human, with chance 0.5, a new goal on the circle."""
        rng = self.rng
        for i in range(HUMAN_NUM):
            if rng.random_sample() <= GOAL_CHANGE_CHANCE:
                agents = self._agents(HUMAN_NUM, skip=i)
                while True:
                    angle = rng.random_sample() * np.pi * 2
                    nx = (rng.random_sample() - 0.5) * self.hs[i]
                    ny = (rng.random_sample() - 0.5) * self.hs[i]
                    x = CIRCLE_RADIUS * np.cos(angle) + nx
                    y = CIRCLE_RADIUS * np.sin(angle) + ny
                    if self._clear(x, y, self.hr[i], agents):
                        break
                self.hg[i] = x, y

    def replace_arrived(self):
        """Replace every human within its radius of its goal by a new one (holonomic robot)."""
        for i in range(HUMAN_NUM):
            if math.hypot(*(self.hg[i] - self.hp[i])) < self.hr[i]:
                self._place_human(i, HUMAN_NUM)

    def see(self, rp=None):
        """Return which humans the robot sees: disc gap within the 5 m sensor range."""
        rp = self.rp if rp is None else rp
        d = np.hypot(self.hp[:, 0] - rp[0], self.hp[:, 1] - rp[1]) - ROBOT_RADIUS - self.hr
        return d <= SENSOR_RANGE

    def _observe(self, reset=False):
        """update_last_human_states: the seen as they are, the unseen moving on as last seen."""
        last = self.last
        if not reset:
            last[~self.visible, :2] += last[~self.visible, 2:4] * self.period
        v = self.visible
        last[v, :2], last[v, 2:4], last[v, 4] = self.hp[v], self.hv[v], self.hr[v]

    def human_velocities(self, period, hp, hv):
        """Return every human's ORCA velocity from positions hp and velocities hv (lists)."""
        out = []
        for i in range(HUMAN_NUM):
            others_p = hp[:i] + hp[i + 1:]
            others_v = hv[:i] + hv[i + 1:]
            pol = self.policies[i]
            if pol is None:
                radii = np.delete(self.hr, i).tolist()
                pol = self.policies[i] = _Policy(period, (hp[i], hv[i]), self.hr[i],
                                                 self.hs[i], list(zip(others_p, others_v)),
                                                 radii, self.neighbor_dist)
            out.append(pol.act(period, hp[i], hv[i], self.hg[i], others_p, others_v))
        return out

    def intrusion(self, rp, actions=None):
        """
        Return the smallest distance under 0.6 m from ``rp`` to a seen human's true future.

        calc_human_future_traj('truth'): every human's own ORCA rolled out five 0.25 s steps
        from the true states (goals as now), then calc_reward: the robot's centre within robot
        radius + humans.radius of a seen human's position at any of the five. None: no
        intrusion. ``actions``: the humans' velocities of this 0.25 s step, if known.
        """
        v = self.visible
        d0 = np.hypot(self.hp[:, 0] - rp[0], self.hp[:, 1] - rp[1])
        reach = INTRUSION_DIST + PREDICT_STEPS * PREDICT_STEP * self.hs + 0.01
        if not (v & (d0 < reach)).any():
            return None  # no seen human can come that close in 1.25 s (|v| <= v_pref)
        hp, hv = self.hp.tolist(), self.hv.tolist()
        best = math.inf
        for k in range(PREDICT_STEPS):
            vel = actions if (k == 0 and actions is not None) else \
                self.human_velocities(PREDICT_STEP, hp, hv)
            hp = [(p[0] + u[0] * PREDICT_STEP, p[1] + u[1] * PREDICT_STEP)
                  for p, u in zip(hp, vel)]
            hv = [tuple(u) for u in vel]
            a = np.array(hp)
            d = np.hypot(a[:, 0] - rp[0], a[:, 1] - rp[1])
            hit = v & (d < INTRUSION_DIST)
            if hit.any():
                best = min(best, float(d[hit].min()))
        return None if best == math.inf else best


@functools.lru_cache(maxsize=4)
def robot_view(rand):
    """
    Return what the ORCA robot's simulator keeps: (the humans' radii, neighbour distance).

    The robot (and its policy) lives across episodes and its RVO2 simulator is built once, on
    the first step of test episode 0, from that observation: seen humans' radii, 0.3 for the
    unseen, and config.orca.neighbor_dist as the last human created left it.
    """
    w = World(0, rand)
    return tuple(w.last[:, 4].tolist()), w.neighbor_dist


class OrcaRobot:
    """The repository's ORCA robot: RVO2 on what it observes (update_last_human_states)."""

    def __init__(self, rand, period):
        """Build the simulator as episode 0 left it."""
        self.radii, self.dist = robot_view(rand)
        self.period = period
        self.policy = None

    def act(self, rp, rv, goal, last):
        """Return the robot's velocity (ORCA.predict on the robot's observation ``last``)."""
        others_p = [tuple(r) for r in last[:, :2].tolist()]
        others_v = [tuple(r) for r in last[:, 2:4].tolist()]
        own_p, own_v = (float(rp[0]), float(rp[1])), (float(rv[0]), float(rv[1]))
        if self.policy is None:
            self.policy = _Policy(self.period, (own_p, own_v), ROBOT_RADIUS, ROBOT_V_PREF,
                                  list(zip(others_p, others_v)), self.radii, self.dist)
        return self.policy.act(self.period, own_p, own_v, goal, others_p, others_v)


def is_instant(k, period):
    """Return True if step k is one of the 0.25 s instants (the nearest step to m x 0.25 s)."""
    r = _steps_per(TIME_STEP, period)      # world steps per protocol step
    m = round(Fraction(k) / r)
    return math.floor(m * r + Fraction(1, 2)) == k


def _nearest(w, rp, rv, yaw, heading_from_velocity):
    """Return the human nearest to contact: relative state, radius, speed, bearing, behind."""
    gaps = np.hypot(w.hp[:, 0] - rp[0], w.hp[:, 1] - rp[1]) - w.hr - ROBOT_RADIUS
    i = int(np.argmin(gaps))
    rel = w.hp[i] - rp
    heading = yaw
    if heading_from_velocity and math.hypot(*rv) > 0.05:
        heading = math.atan2(rv[1], rv[0])
    bearing = math.atan2(rel[1], rel[0]) - heading
    bearing = math.degrees(math.atan2(math.sin(bearing), math.cos(bearing)))
    return {'human': i, 'rel_pos': rel.round(3).tolist(),
            'rel_vel': (w.hv[i] - rv).round(3).tolist(), 'radius': round(float(w.hr[i]), 3),
            'speed': round(float(math.hypot(*w.hv[i])), 3), 'gap': round(float(gaps[i]), 4),
            'bearing_deg': round(bearing, 1), 'from_behind': abs(bearing) > 90.0}


def run_episode(case, config):
    """
    Run test episode ``case`` under ``config``; return the episode's record.

    One CrowdSimVarNum.step per period: the robot's action (from the observation of the step's
    start), the humans' ORCA actions, then the checks on the state at the step's start in the
    repository's order (timeout at t >= 49 s, collision = discs overlap, success = centre within
    0.3 m of the goal, else intrusion), then everyone moves, the robot observes, goals change
    (``rand``, every 5 s) and humans at their goals are replaced.
    """
    dt = config.period
    w = World(case, config.rand, dt)
    per_change = _steps_per(GOAL_CHANGE_PERIOD, dt)
    if per_change.denominator != 1:
        raise ValueError(f'period {dt} does not divide {GOAL_CHANGE_PERIOD} s')
    per_change = int(per_change)
    rp, rv, yaw, cmd = w.rp.copy(), np.zeros(2), math.pi / 2, np.zeros(3)
    goal = (float(w.rgoal[0]), float(w.rgoal[1]))
    differential = config.robot == 'orca_nav' and config.drive == 'differential'
    if config.robot == 'rvo2':
        robot, nav = OrcaRobot(config.rand, dt), None
    else:
        robot = None
        nav = OrcaNavRobot(config, _Case(case, w.rgoal))
    steps = instants = intrusions = 0
    intrusion_dists = []
    path = 0.0
    outcome, detail, k = None, {}, 0
    try:
        while outcome is None:
            now = k * dt
            if robot is not None:
                vx, vy = robot.act(rp, rv, goal, w.last)
                x1, y1, yaw1 = rp[0] + vx * dt, rp[1] + vy * dt, yaw
                cmd[:] = vx, vy, 0.0
            else:
                seen = w.see(rp)
                cmd = nav.act(now, (rp[0], rp[1], yaw), cmd, w.hp[seen], w.hv[seen],
                              radii=w.hr[seen])
                x1, y1, yaw1 = _integrate((rp[0], rp[1], yaw), cmd, dt, differential)
            hp_l = [tuple(p) for p in w.hp.tolist()]
            hv_l = [tuple(v) for v in w.hv.tolist()]
            actions = w.human_velocities(dt, hp_l, hv_l)
            gaps = np.hypot(w.hp[:, 0] - rp[0], w.hp[:, 1] - rp[1]) - w.hr - ROBOT_RADIUS
            steps += 1
            instant = is_instant(k, dt)
            instants += instant
            if now >= TIME_LIMIT - 1 - 1e-9:
                outcome = 'timeout'
            elif (gaps < 0.0).any():
                outcome = 'collision'
            elif math.hypot(rp[0] - goal[0], rp[1] - goal[1]) < ROBOT_RADIUS:
                outcome = 'success'
            elif instant:
                d = w.intrusion(rp, actions if dt == PREDICT_STEP else None)
                if d is not None:
                    intrusions += 1
                    intrusion_dists.append(d)
            if outcome is not None:
                detail = {'robot': [round(rp[0], 3), round(rp[1], 3), round(yaw, 3)],
                          'speed': round(float(math.hypot(*rv)), 3),
                          'command': np.asarray(cmd).round(3).tolist(),
                          'goal_distance': round(math.hypot(rp[0] - goal[0], rp[1] - goal[1]),
                                                 3)}
                if outcome != 'success':
                    detail['nearest'] = _nearest(w, rp, rv, yaw, not differential)
                if nav is not None:
                    detail['state'] = nav.state
                break
            if robot is not None:
                new_rv = np.array([vx, vy])  # Agent.step: the velocity is the action
            else:
                new_rv = np.array([(x1 - rp[0]) / dt, (y1 - rp[1]) / dt])
            path += math.hypot(x1 - rp[0], y1 - rp[1])
            rp[:] = x1, y1
            w.rp = rp
            rv = new_rv
            yaw = math.atan2(math.sin(yaw1), math.cos(yaw1))
            w.hp += np.array(actions) * dt
            w.hv[:] = actions
            w.visible = w.see()
            w._observe()
            k += 1
            if config.rand and k % per_change == 0:
                w.change_goals()
            w.replace_arrived()
    finally:
        if nav is not None:
            nav.close()
    # rl/evaluation.py adds the jump to the next reset's start (scenario 2 case + 1).
    nxt = np.random.RandomState(_reset_seed(case, 1))
    while True:
        s = nxt.uniform(-ARENA_SIZE, ARENA_SIZE, 4)
        if math.hypot(s[0] - s[2], s[1] - s[3]) >= ROBOT_MIN_TRAVEL:
            break
    jump = math.hypot(s[0] - rp[0], s[1] - rp[1])
    return {'case': case, 'outcome': outcome, 'time': k * dt, 'steps': steps,
            'instants': instants, 'intrusions': intrusions,
            'intrusion_ratio': 100.0 * intrusions / instants,
            'intrusion_dist_sum': float(sum(intrusion_dists)), 'path': path,
            'path_logged': path + jump, **detail}


@dataclass
class _Case:
    """What OrcaNavRobot reads of a case: its id (the lidar noise's seed) and the goal."""

    case: int
    robot_goal: np.ndarray
    human_start: np.ndarray = field(default_factory=lambda: np.zeros((HUMAN_NUM, 2)))


def summarize(episodes, config, wall_time=None):
    """Return rl/evaluation.py's test metrics of a list of episode records, and more."""
    n = len(episodes)
    succ = [e for e in episodes if e['outcome'] == 'success']
    coll = [e for e in episodes if e['outcome'] == 'collision']
    tout = [e for e in episodes if e['outcome'] == 'timeout']
    intr = sum(e['intrusions'] for e in episodes)
    out = {
        'cases': n,
        'success_rate': len(succ) / n if n else math.nan,
        'collision_rate': len(coll) / n if n else math.nan,
        'timeout_rate': len(tout) / n if n else math.nan,
        'nav_time': sum(e['time'] for e in succ) / len(succ) if succ else TIME_LIMIT,
        'path_length_logged': float(np.mean([e['path_logged'] for e in episodes])),
        'path_length': float(np.mean([e['path'] for e in episodes])),
        'path_length_success': (float(np.mean([e['path'] for e in succ])) if succ
                                else math.nan),
        'intrusion_ratio': float(np.mean([e['intrusion_ratio'] for e in episodes])),
        'intrusion_min_dist': (sum(e['intrusion_dist_sum'] for e in episodes) / intr
                               if intr else math.nan),
        'collision_cases': [e['case'] for e in coll],
        'timeout_cases': [e['case'] for e in tout],
        'config': asdict(config),
    }
    if wall_time is not None:
        out['wall_time_s'] = wall_time
        out['ms_per_case'] = 1000.0 * wall_time / n if n else math.nan
    return out


def run(config, episodes_out=None):
    """Run cases first_case .. first_case + cases - 1 on ``jobs`` processes; return the summary."""
    t0 = time.perf_counter()
    cases = range(config.first_case, config.first_case + config.cases)
    work = functools.partial(run_episode, config=config)
    if config.jobs > 1:
        with multiprocessing.get_context('fork').Pool(config.jobs) as pool:
            episodes = list(pool.imap(work, cases, chunksize=1))
    else:
        episodes = [work(c) for c in cases]
    summary = summarize(episodes, config, time.perf_counter() - t0)
    if episodes_out is not None:
        episodes_out.extend(episodes)
    return summary


def label(config):
    """Return a short name of a configuration for the table."""
    name = config.robot
    if config.robot == 'orca_nav':
        name += f' {config.perception} {config.drive[:4]}'
        if config.params:
            name += ' ' + ' '.join(f'{k}:={v}' for k, v in config.params.items())
    name += f' {config.period:g}s' + (' rand' if config.rand else '')
    return name


def table(summary, config):
    """Return the printed table: the repository's rows and this run."""
    lines = [f'{"policy":<44} {"success":>7} {"collis.":>7} {"timeout":>7} {"time":>6} '
             f'{"path":>6} {"intrus.%":>8}']
    for name, rand, s, c, t, nav, path, intr in PUBLISHED:
        lines.append(f'{name + (" rand" if rand else ""):<44} {s:7.3f} {c:7.3f} {t:7.3f} '
                     f'{nav:6.2f} {path:6.2f} {intr:8.2f}')
    m = summary
    lines.append(f'{label(config):<44} {m["success_rate"]:7.3f} {m["collision_rate"]:7.3f} '
                 f'{m["timeout_rate"]:7.3f} {m["nav_time"]:6.2f} {m["path_length_logged"]:6.2f} '
                 f'{m["intrusion_ratio"]:8.2f}')
    return '\n'.join(lines)


def main(argv=None):
    """Command line: run one configuration, print the table, write the JSON files."""
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--robot', choices=('rvo2', 'orca_nav'), default='orca_nav')
    ap.add_argument('--rand', action='store_true',
                    help='randomised humans and goal changes (the shipped ORCA log)')
    ap.add_argument('--perception', choices=('true', 'lidar'), default='true')
    ap.add_argument('--period', type=float, default=TIME_STEP)
    ap.add_argument('--drive', choices=('holonomic', 'differential'), default='holonomic')
    ap.add_argument('--param', action='append', default=[], metavar='NAME:=VALUE',
                    help='orca_nav parameter override (repeatable)')
    ap.add_argument('--cases', type=int, default=TEST_SIZE)
    ap.add_argument('--first-case', type=int, default=0)
    ap.add_argument('--jobs', type=int, default=1)
    ap.add_argument('--lidar-noise', type=float, default=0.01)
    ap.add_argument('--metrics-json', help='write every metric and the settings here')
    ap.add_argument('--failures', help='write one record per failed case here (JSON)')
    args = ap.parse_args(argv)
    config = PPConfig(robot=args.robot, rand=args.rand, perception=args.perception,
                      period=args.period, drive=args.drive,
                      params=dict(parse_param(p) for p in args.param), cases=args.cases,
                      first_case=args.first_case, jobs=args.jobs, lidar_noise=args.lidar_noise)
    if config.robot == 'orca_nav':
        error = validate(orca_nav_values(config))
        if error:
            ap.error(error)
    episodes = []
    summary = run(config, episodes)
    print(table(summary, config))
    print(f'{summary["cases"]} cases in {summary["wall_time_s"]:.1f} s '
          f'({summary["ms_per_case"]:.0f} ms per case, {config.jobs} jobs); path length '
          f'{summary["path_length"]:.2f} m without the logged jump, '
          f'{summary["path_length_success"]:.2f} m over the successes; mean distance in '
          f'intrusions {summary["intrusion_min_dist"]:.2f} m')
    if args.metrics_json:
        with open(args.metrics_json, 'w') as f:
            json.dump(summary, f, indent=1)
    if args.failures:
        with open(args.failures, 'w') as f:
            json.dump([e for e in episodes if e['outcome'] != 'success'], f, indent=1)


if __name__ == '__main__':
    main()
