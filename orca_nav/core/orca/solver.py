"""
One ORCA step for a whole fleet: arrays in, new velocities out.

``solve`` takes two records, the agents (one row each: ``Agents``) and what they share
(``SolverSettings``); the fleet controller calls it every tick. ``compute_velocities`` is the
same call with the records' fields as arguments (RVO2's interface for the scenes,
orca_nav.testing.simulation.Simulation, wraps it)::

    new_vel = compute_velocities(pos, vel, pref, radius, max_speed, time_step=0.25,
                                 neighbor_dist=15.0, max_neighbors=10, time_horizon=10.0,
                                 time_horizon_obst=10.0, obstacles=obstacles)
    new_vel = solve(Agents(pos, vel, pref, radius, max_speed),
                    SolverSettings(0.25, 15.0, 10, 10.0, 10.0), obstacles)
"""

import math
from typing import NamedTuple, Optional, Tuple

import numpy as np
from numpy.typing import ArrayLike

from . import kdtree
from .lines import (brake_conflicts, Horizons, NearObstacles, ReachSet, Responsibility,
                    second_pass_rows, SoftRows, solve_all)
from .obstacles import Obstacles
from .shapes import scratch_rows
from .._jit import njit


def _check_positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value)
            and value > 0):
        raise ValueError(f'{name} must be a positive finite number, got {value!r}')
    return float(value)


def validate_params(time_step: float, neighbor_dist: float, max_neighbors: int,
                    time_horizon: float,
                    time_horizon_obst: float) -> Tuple[float, float, int, float, float]:
    """
    Check the shared ORCA parameters; raise ValueError naming the bad one.

    Returns them as (float, float, int, float, float).
    """
    time_step = _check_positive('time_step', time_step)
    neighbor_dist = _check_positive('neighbor_dist', neighbor_dist)
    if (isinstance(max_neighbors, bool) or not isinstance(max_neighbors, (int, np.integer))
            or max_neighbors < 0):
        raise ValueError(f'max_neighbors must be a non-negative integer, got {max_neighbors!r}')
    time_horizon = _check_positive('time_horizon', time_horizon)
    time_horizon_obst = _check_positive('time_horizon_obst', time_horizon_obst)
    return time_step, neighbor_dist, int(max_neighbors), time_horizon, time_horizon_obst


def _writable(value: ArrayLike, dtype=None) -> np.ndarray:
    """
    Return value as a C-ordered, writable array (a copy only where it is neither).

    numba compiles a kernel once per argument type, and a read-only array (a broadcast
    scalar, a caller's view) is another type: rows that reach the kernels are all writable,
    so that every caller shares the node's compiled variants.
    """
    if (type(value) is np.ndarray and (dtype is None or value.dtype == dtype)
            and value.flags.c_contiguous and value.flags.writeable):
        return value   # what np.require returns here, without its cost (17 calls a solve)
    return np.require(value, dtype=dtype, requirements=['C', 'W'])


def _rows(value: ArrayLike, n: int) -> np.ndarray:
    """
    Return value as (n,) floats: the array itself when it has that shape, else broadcast.

    What ``np.broadcast_to(np.asarray(value, float), (n,))`` gives, without its cost for the
    arrays the controller passes (about 4 us each, a dozen a solve); it raises as that does.
    """
    arr = np.asarray(value, dtype=float)
    return arr if arr.shape == (n,) else np.broadcast_to(arr, (n,))


def _check_array(name: str, value: ArrayLike, shape: Tuple[int, ...]) -> np.ndarray:
    arr = _writable(value, dtype=float)
    if arr.shape != shape:
        raise ValueError(f'{name} must have shape {shape}, got {arr.shape}')
    if not np.isfinite(arr).all():
        row = int(np.argwhere(~np.isfinite(arr))[0][0])
        raise ValueError(f'{name} has a NaN or infinite value at row {row}: {arr[row]!r}')
    return arr


def agent_neighbors(positions: ArrayLike, neighbor_dist: float, max_neighbors: int, *,
                    groups: Optional[ArrayLike] = None,
                    ignore: Optional[ArrayLike] = None) -> np.ndarray:
    """
    For each agent the other agents within ``neighbor_dist``, nearest first.

    positions : (N, 2) [m]
    groups, ignore : (N,) int64 group ids in [0, G) and (N, G) bool, both or neither: agent i
        leaves out every j with ``ignore[i, groups[j]]`` before counting ``max_neighbors``, so
        an ignored agent never takes the place of one that counts.
    RVO2's rule: the max_neighbors nearest with a distance strictly below neighbor_dist;
    equal distances go by the lower index (``kdtree.agent_neighbors``).
    Returns (N, max_neighbors) int64 indices, padded with -1 where there are fewer neighbours.
    """
    positions = _writable(positions, dtype=float)
    if ignore is None:
        return kdtree.agent_neighbors(positions, float(neighbor_dist), int(max_neighbors))
    return kdtree.agent_neighbors(positions, float(neighbor_dist), int(max_neighbors),
                                  _writable(groups, dtype=np.int64),
                                  _writable(ignore, dtype=bool))


def _agent_arrays(positions: ArrayLike, velocities: ArrayLike, pref_velocities: ArrayLike,
                  radius: ArrayLike, max_speed: ArrayLike) -> Optional[tuple]:
    """
    Return the per-agent arguments of ``compute_velocities`` as C-ordered floats, or None.

    None when any is malformed or out of range; ``_checked_agent_arrays`` then says which.
    Arrays that are already right are used as they are (no copy).
    """
    positions = _writable(positions, dtype=float)
    if positions.ndim != 2 or positions.shape[1] != 2:
        return None
    n = positions.shape[0]
    velocities = _writable(velocities, dtype=float)
    pref_velocities = _writable(pref_velocities, dtype=float)
    if velocities.shape != (n, 2) or pref_velocities.shape != (n, 2):
        return None
    radius = _per_agent(radius, n)
    max_speed = _per_agent(max_speed, n)
    if radius is None or max_speed is None or not _all_valid(
            positions, velocities, pref_velocities, radius, max_speed):
        return None
    return positions, velocities, pref_velocities, radius, max_speed


def _per_agent(value: ArrayLike, n: int) -> Optional[np.ndarray]:
    """(n,) C-ordered floats from an (n,) array or a scalar; None for another shape."""
    arr = np.asarray(value, dtype=float)
    if arr.shape == (n,):
        return _writable(arr)
    if arr.ndim == 0:
        return np.full(n, float(arr))
    return None


@njit(cache=True)
def _all_valid(positions, velocities, pref_velocities, radius, max_speed):
    """Whether everything is finite, every radius positive and every max_speed >= 0."""
    for i in range(positions.shape[0]):
        if not (math.isfinite(positions[i, 0]) and math.isfinite(positions[i, 1])
                and math.isfinite(velocities[i, 0]) and math.isfinite(velocities[i, 1])
                and math.isfinite(pref_velocities[i, 0])
                and math.isfinite(pref_velocities[i, 1]) and math.isfinite(radius[i])
                and math.isfinite(max_speed[i]) and radius[i] > 0.0 and max_speed[i] >= 0.0):
            return False
    return True


def _checked_agent_arrays(positions: ArrayLike, velocities: ArrayLike,
                          pref_velocities: ArrayLike, radius: ArrayLike,
                          max_speed: ArrayLike) -> tuple:
    """``_agent_arrays``, raising ValueError with the first problem found."""
    positions = np.asarray(positions, dtype=float)
    if positions.ndim != 2 or positions.shape[1] != 2:
        raise ValueError(f'positions must have shape (N, 2), got {positions.shape}')
    n = positions.shape[0]
    positions = _check_array('positions', positions, (n, 2))
    velocities = _check_array('velocities', velocities, (n, 2))
    pref_velocities = _check_array('pref_velocities', pref_velocities, (n, 2))
    radius = _check_array('radius', np.broadcast_to(np.asarray(radius, float), (n,)), (n,))
    max_speed = _check_array('max_speed', np.broadcast_to(np.asarray(max_speed, float), (n,)),
                             (n,))
    if (radius <= 0).any():
        raise ValueError(f'radius must be positive, got {radius[radius <= 0][0]!r}')
    if (max_speed < 0).any():
        raise ValueError(f'max_speed must be non-negative, got {max_speed[max_speed < 0][0]!r}')
    return positions, velocities, pref_velocities, radius, max_speed


_EMPTY = []


def _no_obstacles() -> Obstacles:
    """Return the (shared, never modified) empty obstacle set."""
    if not _EMPTY:
        _EMPTY.append(Obstacles.empty())
    return _EMPTY[0]


def _responsibility(n: int, weights: Optional[ArrayLike], immovable: Optional[ArrayLike],
                    groups: Optional[ArrayLike], ignore: Optional[ArrayLike]):
    """
    Check the responsibility arguments of ``compute_velocities``.

    Returns ``(responsibility, search_groups, search_ignore)``. ``responsibility`` is None when
    every pair shares half-half (RVO2; equal weights included), else ``orca.Responsibility``
    (weights (N,) float, immovable (N,) bool with the weight-1 agents, groups (N,) int64,
    ignore (N, G) bool) for ``orca.solve_all``. The search pair, for ``agent_neighbors``,
    is None when no agent leaves any other out, else groups and ignore with every group
    split in two (its movable and its immovable members) so that an immovable agent also
    ignores every movable one.
    """
    if weights is None and immovable is None and groups is None and ignore is None:
        return None, None, None
    if weights is None:
        weights = np.full(n, 0.5)
    else:
        weights = np.asarray(weights, dtype=float)
        if weights.ndim == 0:
            weights = np.full(n, float(weights))
        # A writable copy: a read-only array would compile the kernels once more.
        weights = _check_array('weights', weights, (n,)).copy()
        out_of_range = (weights < 0.0) | (weights > 1.0)
        if out_of_range.any():
            raise ValueError(f'weights must be within [0, 1], got {weights[out_of_range][0]!r}')
    if immovable is None:
        immovable = np.zeros(n, bool)
    else:
        immovable = _check_flags('immovable', immovable, (n,))
    # A weight of 1 means "the others do all the avoiding": immovable (the plain rule would
    # still give it 0.25 of the avoidance of an agent of weight 0.5).
    immovable = immovable | (weights == 1.0)
    if (groups is None) != (ignore is None):
        raise ValueError('groups and ignore must be given together (or neither)')
    if groups is None:
        groups = np.zeros(n, np.int64)
        ignore = np.zeros((n, 1), bool)
    else:
        ignore = _check_flags('ignore', ignore, None)
        if ignore.ndim != 2 or ignore.shape[0] != n or ignore.shape[1] == 0:
            raise ValueError(f'ignore must have shape ({n}, G) with G >= 1 groups, '
                             f'got {ignore.shape}')
        groups = np.asarray(groups)
        if groups.shape != (n,):
            raise ValueError(f'groups must have shape ({n},), got {groups.shape}')
        if n and not np.issubdtype(groups.dtype, np.integer):
            raise ValueError(f'groups must be integer group ids, got dtype {groups.dtype}')
        groups = _writable(groups, dtype=np.int64)
        bad = (groups < 0) | (groups >= ignore.shape[1])
        if bad.any():
            raise ValueError(f'groups must be within [0, {ignore.shape[1]}) (the columns of '
                             f'ignore), got {groups[bad][0]!r}')
    any_immovable = bool(immovable.any())
    any_ignored = bool(ignore.any())
    if not any_immovable and not any_ignored and (weights == weights[:1]).all():
        return None, None, None
    responsibility = Responsibility(weights, immovable, groups, ignore)
    if not (any_ignored or (any_immovable and not immovable.all())):
        return responsibility, None, None
    # Group g becomes 2g (its movable members) and 2g + 1 (its immovable ones).
    search_ignore = np.repeat(ignore, 2, axis=1)
    search_ignore[:, 0::2] |= immovable[:, None]
    return responsibility, 2 * groups + immovable, search_ignore


def _check_flags(name: str, value: ArrayLike, shape: Optional[Tuple[int, ...]]) -> np.ndarray:
    """Booleans (or 0 / 1) of the given shape (any shape when None), as a C-ordered bool array."""
    arr = np.asarray(value)
    if shape is not None and arr.shape != shape:
        raise ValueError(f'{name} must have shape {shape}, got {arr.shape}')
    if arr.dtype != bool and not (arr.dtype.kind in 'iuf' and ((arr == 0) | (arr == 1)).all()):
        raise ValueError(f'{name} must hold booleans, got {arr.dtype} values')
    return _writable(arr, dtype=bool)


class Agents(NamedTuple):
    """
    The agents of one solver call, one row each; every field but the first five is optional.

    positions, velocities, pref_velocities : (N, 2) [m], [m/s], [m/s]
    radius, max_speed : (N,) or scalar [m], [m/s]; radius > 0, max_speed >= 0
    active : (N,) bool or None; inactive agents are neighbours only and keep their velocity

    Who gives way (None: RVO2's half-half):

    weights : (N,) or scalar in [0, 1], or None (0.5 each, RVO2). Agent i takes the share
        ``(w_j + 1 - w_i) / 2`` of avoiding neighbour j (``orca.pair_share``): a heavier agent
        gives way less; equal weights share half-half, RVO2's answer exactly. Weight 1 counts
        as immovable, so that such an agent keeps its course and the others take all the
        avoiding (the plain rule would leave it 0.25 of the avoidance of a 0.5 agent).
    immovable : (N,) bool or None. The movable agents take all the avoiding of an immovable
        one, treating it as a moving obstacle with its new velocity; an immovable agent does
        not avoid movable agents at all (it keeps to its preferred velocity as far as
        obstacles and other immovable agents let it); two immovable agents share half-half.
    groups, ignore : (N,) int group ids in [0, G) and (N, G) bool, both or neither. Agent i
        does not avoid neighbour j at all when ``ignore[i, groups[j]]`` (no half-plane, no
        one-step line, no neighbour place taken); j then avoids i alone, unless j ignores i's
        group too.

    Acceleration limits (None: none, RVO2):

    max_accel, max_decel : (N,) or scalar [m/s^2], or None; 0, inf or None: unlimited. The
        new velocity is one the agent can reach from ``accel_from`` within ``time_step``:
        within max_accel x time_step of it in any direction, and, where max_decel is larger,
        also braking toward a stop at up to max_decel x time_step (the convex hull of both;
        where max_decel is smaller, the speed along the current direction falls by at most
        max_decel x time_step). See ``orca.reach_lines`` and docs/acceleration.md. These
        constraints are never relaxed: where no collision-free velocity is reachable, the
        agent takes the reachable one that least violates the obstacle (and one-step) lines,
        i.e. brakes as hard as it may, and only max_speed can override them (an agent faster
        than max_speed + max_decel x time_step is given max_speed). Braking reaches at most
        100 x max_accel x time_step (``orca.REACH_MIN_HALF_ANGLE``). Without limits (the
        default) the answer is RVO2's, bit for bit.
    accel_from : (N, 2) [m/s] or None: the velocity the limits are measured from (a robot's
        last command); None: ``velocities``.

    Margins that yield (all three None: RVO2):

    margin, agent_horizon, neighbor_reach : (N,) or scalar, or None. The soft mode
        (``orca.solve_all``'s ``soft``): ``radius`` is then the contact radius and ``margin``
        [m] (default 0) what each agent would like to keep beyond it, given up in steps while
        the half-planes conflict; a pair looks ``max`` of the two ``agent_horizon`` [s] ahead
        (default ``time_horizon``: a walker needs a longer one than a slow robot) and counts
        within ``max`` of the two ``neighbor_reach`` [m] (default ``neighbor_dist``). Where
        even the smallest margins' half-planes conflict, the agent takes the velocity of the
        least contact, then the latest (``escape.escape_velocity``) instead of program 3's
        compromise,
        and with the guard, only pairs of two active agents are braked: standing still is no
        way out from a neighbour that does not avoid.
    keep_margin : (N,) bool or None (none): such an agent's margin (a fleet's robot's
        safety margin) is part of its disc against every other agent and never yields there
        (its one-step lines include it); against obstacles it yields as above.

    Differential drives (all three None: every agent is a disc that moves in any direction):

    heading, lookahead, max_turn_rate : (N,) or scalar, or None; only with the margins. An
        agent with lookahead D > 0 [m] is the point D ahead of the axle of a unicycle with
        this heading [rad] and yaw rate at most max_turn_rate [rad/s] (``drive``): it
        cannot step sideways. Beside a neighbour that does not avoid, its way out of a
        conflict is chosen among drives rolled out over the next seconds
        (``escape.escape_unicycle``), and it takes that way out also when the drive that
        gives its answer as well as it can (``drive.differential_command``'s scaling) would
        come into contact (``escape.drive_keeps_clear``). lookahead 0: a disc as before.
    lead_time : (N,) or scalar [s], or None (0); only with the margins. A walking agent that
        does not avoid (immovable) with lead_time > 0 is also avoided, while the margins are
        whole, where it will be lead_time on (the same disc, the same velocity): the others
        pass behind it rather than across its next steps. A preference: it is the first to
        go when the half-planes conflict or leave no way forward.
    line_reference : (N, 2) [m/s] or None; only with the margins. Agent i's half-planes
        toward neighbours it avoids alone (share 1: people, robots that do not avoid) are
        taken about this velocity instead of its own: RVO2 takes the side of the velocity
        obstacle nearest to the velocity, this the side nearest to the reference (the
        half-plane still leaves the whole obstacle out, the obstacle being convex). A row of
        NaN (or None): about the velocity, as RVO2.

    Shapes (None: every agent a disc; only with the margins):

    footprint : (N, V, 2) [m] or None. Agent i's convex polygon, counter-clockwise, relative to
        its position and turned to its heading (held over the horizon), in its first rows;
        the other rows NaN; all NaN: a disc. Its pairs and obstacles take the polygons'
        half-planes (``shapes``), while ``radius`` must hold the polygon grown by
        ``footprint_body``: it bounds the agent where distances between centres decide (the
        neighbour search, the way out beside walkers, the brake).
    footprint_body : (N,) or scalar [m] or None (0): what the polygon grows by (padding,
        localisation), margins added as for discs.
    """

    positions: ArrayLike
    velocities: ArrayLike
    pref_velocities: ArrayLike
    radius: ArrayLike
    max_speed: ArrayLike
    active: Optional[ArrayLike] = None
    weights: Optional[ArrayLike] = None
    immovable: Optional[ArrayLike] = None
    groups: Optional[ArrayLike] = None
    ignore: Optional[ArrayLike] = None
    max_accel: Optional[ArrayLike] = None
    max_decel: Optional[ArrayLike] = None
    accel_from: Optional[ArrayLike] = None
    margin: Optional[ArrayLike] = None
    agent_horizon: Optional[ArrayLike] = None
    neighbor_reach: Optional[ArrayLike] = None
    keep_margin: Optional[ArrayLike] = None
    heading: Optional[ArrayLike] = None
    lookahead: Optional[ArrayLike] = None
    max_turn_rate: Optional[ArrayLike] = None
    lead_time: Optional[ArrayLike] = None
    line_reference: Optional[ArrayLike] = None
    footprint: Optional[ArrayLike] = None
    footprint_body: Optional[ArrayLike] = None

    def take(self, rows: ArrayLike) -> 'Agents':
        """Return the agents of these rows (indices or a mask); scalars stay scalars."""
        return Agents(*(value if value is None or np.ndim(value) == 0
                        else np.asarray(value)[rows] for value in self))

    def concat(self, other: 'Agents') -> 'Agents':
        """
        Return these agents followed by ``other``'s; a field must be set in both or neither.

        ``ignore`` tables of different widths are padded with False (no group ignored).
        """
        fields = []
        for name, mine, theirs in zip(self._fields, self, other):
            if mine is None and theirs is None:
                fields.append(None)
                continue
            if mine is None or theirs is None:
                raise ValueError(f'{name} must be set in both agent records or in neither')
            parts = [np.asarray(mine), np.asarray(theirs)]
            if name == 'ignore':
                width = max(part.shape[1] for part in parts)
                parts = [np.pad(part, ((0, 0), (0, width - part.shape[1])))
                         for part in parts]
            else:
                parts = [np.broadcast_to(part, (len(agents.positions),))
                         if part.ndim == 0 else part
                         for part, agents in zip(parts, (self, other))]
            fields.append(np.concatenate(parts))
        return Agents(*fields)


class SolverSettings(NamedTuple):
    """
    What every agent of one solver call shares.

    time_step : [s] used only when agents already overlap (escape within one step)
    neighbor_dist : [m] agents farther than this are ignored; max_neighbors : at most this many
    time_horizon, time_horizon_obst : [s] how far ahead collisions with agents / obstacles count;
        time_horizon is every agent's, or in the soft mode the default of agents given no
        ``agent_horizon`` (``_time_horizon`` decides, ``Horizons`` carries it)
    collision_guard : keep agents out of contact even where the ORCA half-planes conflict.
        RVO2 then minimises the violation of the agent lines (linear program 3) and lets
        agents overlap (0.50 m in its own Circle scene). With the guard, in order:
        1. each agent also keeps, for each neighbour close enough to touch it within
           ``time_step``, the ORCA line for a horizon of one time step (radii 2 % larger);
        2. in a conflict it stays inside those and the obstacle lines, as close as it can to
           its preferred velocity turned right (a shared keep-right rule, which turns
           head-on jams into roundabouts), or, if even that is empty, least-violates them;
        3. neighbours of agents that could not give way re-plan avoiding them alone;
        4. pairs still touching within the step are braked (``orca.brake_conflicts``).
        Off by default, so the answer is RVO2's; the node and ``Simulation`` use it.
    """

    time_step: float
    neighbor_dist: float
    max_neighbors: int
    time_horizon: float
    time_horizon_obst: float
    collision_guard: bool = False


def compute_velocities(positions: ArrayLike, velocities: ArrayLike, pref_velocities: ArrayLike,
                       radius: ArrayLike, max_speed: ArrayLike, *, time_step: float,
                       neighbor_dist: float, max_neighbors: int, time_horizon: float,
                       time_horizon_obst: float, obstacles: Optional[Obstacles] = None,
                       collision_guard: bool = False, **optional: ArrayLike) -> np.ndarray:
    """
    ORCA velocities for every agent at once (RVO2's ``computeNewVelocity`` for all agents).

    ``solve`` with its records spelled out as arguments: the first five and ``optional``
    (active, weights, immovable, groups, ignore, max_accel, max_decel, accel_from, margin,
    agent_horizon, neighbor_reach, keep_margin) are the fields of ``Agents``, the shared
    settings those of ``SolverSettings``; obstacles : Obstacles or None.
    Returns (N, 2) float64 new velocities, finite, with |v_i| <= max_speed_i.
    Raises ValueError when an argument is out of range or not finite.
    """
    settings = SolverSettings(time_step, neighbor_dist, max_neighbors, time_horizon,
                              time_horizon_obst, collision_guard)
    return solve(Agents(positions, velocities, pref_velocities, radius, max_speed, **optional),
                 settings, obstacles)


def solve(agents: Agents, settings: SolverSettings,
          obstacles: Optional[Obstacles] = None) -> np.ndarray:
    """
    ORCA velocities (N, 2) for the agents (``Agents``) among the obstacles (None: none).

    Returns (N, 2) float64 new velocities, finite, with |v_i| <= max_speed_i.
    Raises ValueError when a field or setting is out of range or not finite.
    """
    time_step, neighbor_dist, max_neighbors, time_horizon, time_horizon_obst = validate_params(
        *settings[:5])
    guard = settings.collision_guard
    rows = _agent_arrays(*agents[:5])
    if rows is None:
        # Something is wrong: find it and say what (raises).
        rows = _checked_agent_arrays(*agents[:5])
    positions, velocities, pref_velocities, radius, max_speed = rows
    n = positions.shape[0]
    active = _active(agents.active, n)
    responsibility, search_groups, search_ignore = _responsibility(
        n, agents.weights, agents.immovable, agents.groups, agents.ignore)
    reach_set = _reach_set(n, agents.max_accel, agents.max_decel, agents.accel_from,
                           velocities, time_step)
    horizon = _time_horizon(n, agents.agent_horizon, time_horizon, not (
        agents.margin is None and agents.agent_horizon is None
        and agents.neighbor_reach is None))
    soft = _soft(n, agents.margin, horizon, agents.neighbor_reach, neighbor_dist,
                 agents.keep_margin,
                 _drive_set(n, agents.heading, agents.lookahead, agents.max_turn_rate),
                 agents.lead_time, agents.line_reference)
    shapes = _shapes(n, agents.footprint, agents.footprint_body, soft)
    if obstacles is None:
        obstacles = _no_obstacles()
    out = velocities.copy()
    if n == 0:
        return out
    search_dist = neighbor_dist if soft is None else float(np.max(soft.reach))
    if search_ignore is None:
        nbrs = kdtree.agent_neighbors(positions, search_dist, max_neighbors)
    else:
        nbrs = kdtree.agent_neighbors(positions, search_dist, max_neighbors, search_groups,
                                      search_ignore)
    offsets, edges = _near_edges(obstacles, positions, max_speed, radius, time_horizon_obst,
                                 soft)
    # Plain tuples in the records' order: numba dispatches a NamedTuple ~4 us slower.
    return _solve_rows((positions, velocities, pref_velocities, radius, max_speed, nbrs),
                       tuple(NearObstacles(offsets, edges, obstacles.point, obstacles.next,
                                           obstacles.prev, obstacles.unit_dir,
                                           obstacles.convex)),
                       tuple(Horizons(time_step, horizon, time_horizon_obst)),
                       None if responsibility is None else tuple(responsibility),
                       None if reach_set is None else tuple(reach_set),
                       None if soft is None else tuple(soft), active, guard, out, shapes)


def _near_edges(obstacles: Obstacles, positions: np.ndarray, max_speed: np.ndarray,
                radius: np.ndarray, time_horizon_obst: float,
                soft: Optional[SoftRows]) -> Tuple[np.ndarray, np.ndarray]:
    """``obstacles.neighbors`` within RVO2's reach (plus the margins); at once when empty."""
    if obstacles.point.shape[0] == 0:
        # What ``edges_near`` returns for no obstacles, without the call.
        return np.zeros(positions.shape[0] + 1, np.int64), np.zeros(0, np.int64)
    obstacle_reach = time_horizon_obst * max_speed + radius
    if soft is not None:
        obstacle_reach = obstacle_reach + soft.margin
    return obstacles.neighbors(positions, obstacle_reach)


def _active(active: Optional[ArrayLike], n: int) -> np.ndarray:
    """
    (n,) bool: ``active``, or every agent when it is None; raise ValueError for another shape.

    Always an array: a None would be a kernel variant of its own for numba to compile.
    """
    if active is None:
        return np.ones(n, np.bool_)
    active = _writable(active, dtype=bool)
    if active.shape != (n,):
        raise ValueError(f'active must have shape ({n},), got {active.shape}')
    return active


def _time_horizon(n: int, agent_horizon: Optional[ArrayLike], time_horizon: float,
                  per_agent: bool):
    """
    Return how far ahead each agent looks [s]: the one place that decides it.

    Without ``per_agent`` (RVO2's mode) the settings' ``time_horizon``, a float, every
    agent's; with it (the soft mode) (n,) floats: ``agent_horizon`` (an array or a scalar), or
    ``time_horizon`` for every agent when that is None. ``Horizons`` carries the answer.
    """
    if not per_agent:
        return time_horizon
    arr = _rows(time_horizon if agent_horizon is None else agent_horizon, n)
    ok = np.isfinite(arr) & (arr > 0.0)
    if not ok.all():
        raise ValueError(f'agent_horizon must be finite and positive, got {arr[~ok][0]!r}')
    return _writable(arr)


def _soft(n: int, margin: Optional[ArrayLike], horizon, neighbor_reach: Optional[ArrayLike],
          neighbor_dist: float, keep_margin: Optional[ArrayLike] = None,
          drive_set: Optional[tuple] = None,
          lead_time: Optional[ArrayLike] = None,
          line_reference: Optional[ArrayLike] = None) -> Optional[SoftRows]:
    """
    Check the soft-mode arguments of ``compute_velocities``.

    horizon : ``_time_horizon``'s answer, (n,) in the soft mode (margin, agent_horizon or
    neighbor_reach given), a float otherwise. Returns None outside the soft mode (RVO2),
    else ``orca.SoftRows`` for ``solve_all``: (margin, reach, cap, keep, heading, lookahead,
    turn_rate, lead, reference) with (N,) float arrays, cap the largest horizon [s], keep
    (N,) bool, then ``_drive_set``'s three (lookahead 0 everywhere without one), lead_time (0
    without) and line_reference (N, 2) (NaN without).
    """
    if not isinstance(horizon, np.ndarray):
        if keep_margin is not None:
            raise ValueError('keep_margin needs margin')
        if drive_set is not None or lead_time is not None or line_reference is not None:
            raise ValueError('lookahead, lead_time and line_reference need margin (they are '
                             "the soft mode's)")
        return None
    out = []
    for name, value, default, lowest in (('margin', margin, 0.0, 0.0),
                                         ('neighbor_reach', neighbor_reach, neighbor_dist,
                                          None)):
        arr = _rows(default if value is None else value, n)
        ok = np.isfinite(arr) & ((arr >= 0.0) if lowest is not None else (arr > 0.0))
        if not ok.all():
            kind = 'non-negative' if lowest is not None else 'positive'
            raise ValueError(f'{name} must be finite and {kind}, got {arr[~ok][0]!r}')
        out.append(_writable(arr))
    # The way out looks as far as the farthest-looking agent (n == 0 is never solved).
    cap = float(np.max(horizon)) if n else 0.0
    keep = (np.zeros(n, bool) if keep_margin is None
            else _check_flags('keep_margin', keep_margin, (n,)))
    if drive_set is None:
        drive_set = (np.zeros(n), np.zeros(n), np.zeros(n))
    lead = np.zeros(n) if lead_time is None else _check_array(
        'lead_time', _rows(lead_time, n), (n,)).copy()
    if (lead < 0.0).any():
        raise ValueError(f'lead_time must be non-negative, got {lead[lead < 0][0]!r}')
    return SoftRows(out[0], out[1], cap, keep, *drive_set, lead,
                    _line_reference(n, line_reference))


def _line_reference(n: int, value: Optional[ArrayLike]) -> np.ndarray:
    """Check ``line_reference``: (n, 2), each row finite or both NaN; None: all NaN."""
    if value is None:
        return np.full((n, 2), np.nan)
    arr = _writable(value, dtype=float)
    if arr.shape != (n, 2):
        raise ValueError(f'line_reference must have shape {(n, 2)}, got {arr.shape}')
    nan = np.isnan(arr)
    bad = ~(np.isfinite(arr).all(axis=1) | nan.all(axis=1))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f'line_reference row {row} must be finite or NaN, got {arr[row]!r}')
    return arr.copy()


def _drive_set(n: int, heading: Optional[ArrayLike], lookahead: Optional[ArrayLike],
               max_turn_rate: Optional[ArrayLike]) -> Optional[tuple]:
    """
    Check the differential-drive arguments of ``compute_velocities``.

    Returns None when no agent has a lookahead > 0, else (heading, lookahead, turn_rate),
    (N,) C-ordered floats each.
    """
    if heading is None and lookahead is None and max_turn_rate is None:
        return None
    if heading is None or lookahead is None or max_turn_rate is None:
        raise ValueError('heading, lookahead and max_turn_rate must be given together')
    heading = _check_array('heading', _rows(heading, n), (n,))
    lookahead = _check_array('lookahead', _rows(lookahead, n), (n,))
    turn = _check_array('max_turn_rate', _rows(max_turn_rate, n), (n,))
    if (lookahead < 0.0).any():
        raise ValueError(f'lookahead must be non-negative, got {lookahead[lookahead < 0][0]!r}')
    if ((lookahead > 0.0) & (turn <= 0.0)).any():
        raise ValueError('max_turn_rate must be positive where lookahead > 0, got '
                         f'{turn[(lookahead > 0.0) & (turn <= 0.0)][0]!r}')
    if not (lookahead > 0.0).any():
        return None
    return heading.copy(), lookahead.copy(), turn.copy()


def _reach_set(n: int, max_accel: Optional[ArrayLike], max_decel: Optional[ArrayLike],
               accel_from: Optional[ArrayLike], velocities: np.ndarray,
               time_step: float) -> Optional[ReachSet]:
    """
    Check the acceleration arguments of ``compute_velocities``.

    Returns None when no agent has a limit (RVO2's kernels), else ``orca.ReachSet`` for
    ``solve_all``: (accel_r, decel_r, ref, floor), limits x time_step with inf for unlimited.
    """
    if max_accel is None and max_decel is None and accel_from is None:
        return None
    radii = []
    for name, value in (('max_accel', max_accel), ('max_decel', max_decel)):
        if value is None:
            radii.append(np.full(n, np.inf))
            continue
        arr = _rows(value, n)
        if np.isnan(arr).any() or (arr < 0).any():
            bad = arr[np.isnan(arr) | (arr < 0)][0]
            raise ValueError(f'{name} must be non-negative (0 or inf: unlimited), got {bad!r}')
        radii.append(np.where((arr > 0) & np.isfinite(arr), arr * time_step, np.inf))
    accel_r, decel_r = radii
    if not (np.isfinite(accel_r).any() or np.isfinite(decel_r).any()):
        if accel_from is not None:
            _check_array('accel_from', accel_from, (n, 2))
        return None
    ref = velocities if accel_from is None else _check_array('accel_from', accel_from, (n, 2))
    return ReachSet(accel_r, decel_r, ref, np.ones(n))


@njit(cache=True)
def _solve_rows(rows, near, times, responsibility, reach_set, soft, active, guard, out,
                shapes=None):
    """
    Write the new velocities of the ``active`` agents into ``out``; return it, limited.

    rows, near, times : ``AgentRows``, ``NearObstacles``, ``Horizons`` as tuples;
    responsibility, reach_set, soft, shapes : the optional records as tuples, or None;
    active : (N,) bool. One compiled call for the guard's passes:
    the first pass, the second for the neighbours of agents that could not give way (they
    take it all on, avoiding the stuck agents' velocities of the first pass), the brake and
    ``_enforce_limits``.
    """
    positions, velocities, prefs, radius, max_speed, nbrs = rows
    problem = (rows, near, times)
    time_step = times[0]
    n = positions.shape[0]
    stuck = np.zeros(n, np.bool_)
    # First pass: nobody is stuck yet (no fixed velocities to read: ``out`` stands in).
    _plan(problem, responsibility, reach_set, soft, active, guard, np.zeros(n, np.bool_),
          out, stuck, out, shapes)
    if guard and np.any(stuck):
        redo = second_pass_rows(problem[0], time_step, responsibility, soft, stuck, active)
        # ``guard`` (True here), not a literal True: numba would compile _plan and solve_all
        # once more for the literal's own type.
        _plan(problem, responsibility, reach_set, soft, redo, guard, stuck, out.copy(),
              np.zeros(n, np.bool_), out, shapes)
        if soft is None:
            if reach_set is None:
                brake_conflicts(positions, out, radius, nbrs, time_step, active)
            else:
                brake_conflicts(positions, out, radius, nbrs, time_step, active, reach_set[3])
        elif reach_set is None:
            brake_conflicts(positions, out, radius, nbrs, time_step, active, None, True)
        else:
            brake_conflicts(positions, out, radius, nbrs, time_step, active, reach_set[3],
                            True)
    return _enforce_limits(out, max_speed)


@njit(cache=True)
def _plan(problem, responsibility, reach_set, soft, active, hard_step_lines, stuck_in,
          fixed_vel, stuck_out, out, shapes=None):
    """
    ``orca.solve_all`` for the ``active`` agents, the immovable ones first.

    The movable agents avoid the immovable ones' new velocity, so those are planned first.
    The optional records are passed on as they are: where they are None, the kernels are
    compiled without a trace of them (RVO2's).
    """
    agents, near, times = problem
    if responsibility is not None:
        first = active & responsibility[1]
        if np.any(first):
            solve_all(agents, near, times, responsibility, first, hard_step_lines, stuck_in,
                      fixed_vel, stuck_out, out, reach_set, soft, shapes)
            active = active & ~responsibility[1]
    solve_all(agents, near, times, responsibility, active, hard_step_lines, stuck_in,
              fixed_vel, stuck_out, out, reach_set, soft, shapes)


def _shapes(n: int, footprint: Optional[ArrayLike], body: Optional[ArrayLike],
            soft: Optional[SoftRows]) -> Optional[tuple]:
    """Return ``solve_all``'s shapes (polygons, counts, bodies), or None without polygons."""
    if footprint is None:
        return None
    polygons = np.asarray(footprint, dtype=float)
    if polygons.ndim != 3 or polygons.shape[0] != n or polygons.shape[2] != 2:
        raise ValueError(f'footprint must have shape ({n}, V, 2), got {polygons.shape}')
    given = np.isfinite(polygons).all(axis=2)
    counts = given.sum(axis=1).astype(np.int64)
    if (given & (np.arange(polygons.shape[1]) >= counts[:, None])).any():
        raise ValueError('footprint: the vertices of a polygon must come first, NaN rows after')
    if not counts.any():
        return None
    if soft is None:
        raise ValueError('footprint needs the margins (margin=, the soft mode)')
    if ((counts > 0) & (counts < 3)).any():
        raise ValueError('footprint: a polygon needs at least 3 vertices')
    bodies = np.zeros(n) if body is None else _rows(body, n).copy()
    if not np.isfinite(bodies).all() or (bodies < 0.0).any():
        raise ValueError('footprint_body must be finite and >= 0')
    width = max(polygons.shape[1], 2)
    return (_writable(np.nan_to_num(polygons)), counts, bodies,
            np.empty((scratch_rows(2 * width), 2)))


@njit(cache=True)
def _enforce_limits(vel, max_speed):
    """Never return NaN or a speed above the limit (guards against rounding, not a policy)."""
    for i in range(vel.shape[0]):
        vx = vel[i, 0]
        vy = vel[i, 1]
        if not (math.isfinite(vx) and math.isfinite(vy)):
            vel[i, 0] = 0.0
            vel[i, 1] = 0.0
            continue
        speed = math.hypot(vx, vy)
        if speed > max_speed[i]:
            scale = max_speed[i] / speed
            vel[i, 0] = vx * scale
            vel[i, 1] = vy * scale
    return vel


def warmup(reverse: bool = False) -> None:
    """
    Compile the JIT kernels of ``compute_velocities``' modes now (cached on disk afterwards).

    For library use, benchmarks and tests. The node compiles what its own ticks run
    (``orca_nav.control.warmup``), whose argument types differ from these calls'.
    reverse : the modes in the opposite order (a second process warming up beside a first
    one meets it halfway: each mode compiled once, the other process loads it).
    """
    calls = _warmup_calls()
    for call in reversed(calls) if reverse else calls:
        call()


def _warmup_calls() -> list:
    """``warmup``'s calls, each a mode (RVO2's first, the node's soft mode after)."""
    square = [(1.0, 1.0), (2.0, 1.0), (2.0, 2.0), (1.0, 2.0)]
    obstacles = Obstacles.build([square], segments=[[[-2.0, 0.0], [-2.0, 1.0]]])
    pos = np.array([[0.0, 0.0], [0.5, 0.1], [3.0, 3.0]])
    prefs = np.array([[1.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
    params = {'time_step': 0.1, 'neighbor_dist': 5.0, 'max_neighbors': 4, 'time_horizon': 2.0,
              'time_horizon_obst': 2.0, 'obstacles': obstacles, 'collision_guard': True}

    def mode(velocities=None, radius=0.3, max_speed=1.0, **kwargs):
        velocities = np.zeros((3, 2)) if velocities is None else velocities
        return lambda: compute_velocities(pos, velocities, prefs, radius, max_speed,
                                          **kwargs, **params)

    calls = [
        mode(),
        # The kernels with shares: weights, an immovable agent and an ignored group.
        mode(weights=[0.2, 0.5, 1.0], groups=[0, 1, 0],
             ignore=[[False, True], [False, False], [False, False]]),
        # The kernels with acceleration limits, plain and with shares (the controller's case).
        mode(max_accel=0.5, max_decel=1.0),
        mode(weights=[0.2, 0.5, 1.0], max_accel=0.5, max_decel=1.0),
    ]
    # The soft mode (margins that yield, the ways out), the node's mode: with and without
    # shares and acceleration limits, a differential row among them (its way out), a walker
    # (immovable) beside it.
    soft = {'margin': [0.05, 0.3, 0.05], 'agent_horizon': [2.0, 5.0, 2.0],
            'neighbor_reach': [3.0, 10.0, 3.0], 'heading': [0.0, 3.0, 1.0],
            'lookahead': [0.1, 0.0, 0.0], 'max_turn_rate': 1.5, 'lead_time': [0.0, 1.0, 0.0]}
    moving = np.array([[0.0, 0.0], [-1.0, 0.0], [0.0, 0.0]])
    for shares in ({}, {'immovable': [False, True, False]}):
        for limits in ({}, {'max_accel': 0.5, 'max_decel': 1.0}):
            calls.append(mode(moving, **soft, **shares, **limits))
    # Footprints (0.9 x 0.6 m carts, two of them turned) with the margins they keep.
    cart = np.array([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]])
    calls.append(mode(radius=np.full(3, 0.55), max_speed=np.ones(3), margin=np.full(3, 0.05),
                      keep_margin=np.ones(3, bool),
                      footprint=np.stack([cart, cart[:, ::-1], cart]),
                      footprint_body=np.full(3, 0.01)))
    # The guard's last resort, which only agents that could not give way reach.
    guard_args = (pos, np.array(prefs), np.full(3, 0.3), agent_neighbors(pos, 5.0, 4), 0.1,
                  np.ones(3, bool))
    calls.append(lambda: brake_conflicts(*guard_args))
    calls.append(lambda: brake_conflicts(*guard_args, np.ones(3)))
    return calls
