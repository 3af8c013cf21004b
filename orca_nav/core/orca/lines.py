"""
ORCA half-planes and the linear programs of RVO2, compiled per agent and run over all agents.

A half-plane ("ORCA line") is stored as one row ``[px, py, dx, dy]``: a point on the line and a
unit direction. The permitted side is the LEFT of the directed line, as in RVO2, i.e. velocities v
with ``det(d, p - v) <= 0``.

Per agent the lines are built in RVO2's order (obstacle lines first, nearest obstacle first, then
agent lines, nearest agent first) and solved by the incremental linear program 2; if the
constraints conflict, linear program 3 keeps the obstacle lines hard and minimises the largest
violation of the agent lines. The agents are independent given the current state; the only loop
over agents is compiled, never Python. It runs on one thread: numba's ``parallel=True`` was
measured 2.8x SLOWER on these 2-core machines whenever anything else runs (a ROS executor,
a simulator), as worker threads wait for a busy core; the kernel is ~1 ms for 1000 agents.

Reference: J. van den Berg, S. J. Guy, M. Lin, D. Manocha, "Reciprocal n-body Collision
Avoidance", ISRR 2011, and the RVO2 library (Agent.cpp), whose geometric cases are mirrored here.
"""

import math
from typing import NamedTuple

from numba import types
from numba.extending import overload
import numpy as np

from .escape import drive_keeps_clear, escape_unicycle, escape_velocity
from .shapes import pair_shape_line
from .._jit import njit

# Lines closer to parallel than this (|det| of unit directions) count as parallel; RVO2's value.
EPSILON = 1e-5
# Geometric cases of the obstacle half-planes (``obstacle_lines``), as in RVO2's Agent.cpp ...
CASE_COVERED = 1  # already covered by earlier obstacle lines: no line
CASE_COLLIDE_LEFT_VERTEX = 2
CASE_COLLIDE_RIGHT_VERTEX = 3
CASE_COLLIDE_SEGMENT = 4
CASE_OBLIQUE_NONCONVEX = 5  # seen obliquely past a non-convex vertex: ignored
CASE_LEFT_CUTOFF_CIRCLE = 6
CASE_RIGHT_CUTOFF_CIRCLE = 7
CASE_CUTOFF_LINE = 8
CASE_LEFT_LEG = 9
CASE_RIGHT_LEG = 10
# ... with these bits added to the projection cases (6-10).
FLAG_OBLIQUE_LEFT = 16  # both legs from the left vertex
FLAG_OBLIQUE_RIGHT = 32  # both legs from the right vertex
FLAG_NONCONVEX_LEFT = 64  # left leg extends the cut-off line
FLAG_NONCONVEX_RIGHT = 128
FLAG_LEFT_FOREIGN = 256  # left leg replaced by the neighbouring edge (no line if projected on)
FLAG_RIGHT_FOREIGN = 512
CASE_MASK = 15
# Cases of the agent half-planes (``agent_line``).
CASE_AGENT_CUTOFF = 1
CASE_AGENT_LEFT_LEG = 2
CASE_AGENT_RIGHT_LEG = 3
CASE_AGENT_OVERLAP = 4  # already overlapping: cut-off circle of one time step
CASE_AGENT_SHAPE = 5  # a pair with a polygon (``shapes.pair_shape_line``)
# In a conflict, aim this far to the right of the preferred velocity [rad]: a shared
# keep-right convention turns a head-on jam into a roundabout.
FALLBACK_TURN = 0.7
# One-step lines use radii this much larger: a thin margin keeps contacts from locking crowds.
HARD_MARGIN = 0.02
# Below this length a vector is treated as zero when it has to be normalised (avoids NaN).
TINY = 1e-12
# The circular arcs of the reachable set (``reach_lines``) are replaced by inscribed polygons of
# this many sides per full turn: the polygon lies inside the set (every answer is reachable)
# and gives up at most 1 - cos(pi / 16) = 1.9 % of the acceleration in the worst direction.
REACH_SIDES = 16
# The cone of braking is cut where it gets thinner than this half-angle [rad]: its two edges
# would otherwise be "parallel" to the linear programs (EPSILON) and bound nothing. Braking
# then reaches 1 / sin(0.01) = 100 x max_accel x time_step at most.
REACH_MIN_HALF_ANGLE = 0.01
# At most this many reach lines per agent: the arc's sides, plus the two edges to the brake
# point (or the one braking chord).
MAX_REACH_LINES = REACH_SIDES + 2


@njit(cache=True)
def _det(ax, ay, bx, by):
    return ax * by - ay * bx


# Inlined where they are called (numba's inline='always'): a compiled call that passes arrays
# costs about 0.1 us per call, and solve_all calls these for every agent (measured: 100
# agents without neighbours 20 us a step before, 10 us after; dense crowd of 100 with the
# guard 170 us before, 145 us after).
@njit(cache=True, inline='always')
def linear_program1(lines, line_no, radius, opt_x, opt_y, direction_opt):
    """
    Optimise on line ``line_no`` subject to the lines before it and the speed circle.

    Returns ``(ok, x, y)``; ``ok`` is False when the feasible interval on the line is empty.
    """
    px = lines[line_no, 0]
    py = lines[line_no, 1]
    dx = lines[line_no, 2]
    dy = lines[line_no, 3]
    dot = px * dx + py * dy
    discriminant = dot * dot + radius * radius - (px * px + py * py)
    if discriminant < 0.0:
        # Max speed circle fully invalidates this line.
        return False, 0.0, 0.0
    sqrt_disc = math.sqrt(discriminant)
    t_left = -dot - sqrt_disc
    t_right = -dot + sqrt_disc
    for i in range(line_no):
        qx = lines[i, 0]
        qy = lines[i, 1]
        ex = lines[i, 2]
        ey = lines[i, 3]
        denominator = _det(dx, dy, ex, ey)
        numerator = _det(ex, ey, px - qx, py - qy)
        if abs(denominator) <= EPSILON:
            # Lines are (almost) parallel.
            if numerator < 0.0:
                return False, 0.0, 0.0
            continue
        t = numerator / denominator
        if denominator >= 0.0:
            # Line i bounds this line on the right.
            t_right = min(t_right, t)
        else:
            # Line i bounds this line on the left.
            t_left = max(t_left, t)
        if t_left > t_right:
            return False, 0.0, 0.0
    if direction_opt:
        # Optimise direction: take the extreme that points most along opt.
        if opt_x * dx + opt_y * dy > 0.0:
            return True, px + t_right * dx, py + t_right * dy
        return True, px + t_left * dx, py + t_left * dy
    # Optimise closest point.
    t = dx * (opt_x - px) + dy * (opt_y - py)
    if t < t_left:
        t = t_left
    elif t > t_right:
        t = t_right
    return True, px + t * dx, py + t * dy


@njit(cache=True, inline='always')
def linear_program2(lines, n_lines, radius, opt_x, opt_y, direction_opt):
    """
    Closest point to ``opt`` (or furthest along it) inside all lines and the speed circle.

    Returns ``(fail, x, y)``: ``fail == n_lines`` on success, otherwise the index of the first line
    that could not be satisfied, with the result valid for the lines before it.
    """
    if direction_opt:
        # opt is a unit vector here.
        rx = opt_x * radius
        ry = opt_y * radius
    elif opt_x * opt_x + opt_y * opt_y > radius * radius:
        # Optimal point outside the circle: project on it.
        norm = math.sqrt(opt_x * opt_x + opt_y * opt_y)
        rx = opt_x / norm * radius
        ry = opt_y / norm * radius
    else:
        rx = opt_x
        ry = opt_y
    for i in range(n_lines):
        if _det(lines[i, 2], lines[i, 3], lines[i, 0] - rx, lines[i, 1] - ry) > 0.0:
            # The result violates line i: the new optimum lies on line i.
            ok, nx, ny = linear_program1(lines, i, radius, opt_x, opt_y, direction_opt)
            if not ok:
                return i, rx, ry
            rx = nx
            ry = ny
    return n_lines, rx, ry


@njit(cache=True)
def linear_program3(lines, n_lines, num_obst_lines, begin_line, radius, rx, ry, proj):
    """
    Fallback when lines conflict: minimise the largest violation of the agent lines.

    Obstacle lines (the first ``num_obst_lines``) stay hard constraints. ``proj`` is scratch
    space with at least ``n_lines`` rows. Returns the new ``(x, y)``.
    """
    distance = 0.0
    for i in range(begin_line, n_lines):
        px = lines[i, 0]
        py = lines[i, 1]
        dx = lines[i, 2]
        dy = lines[i, 3]
        if _det(dx, dy, px - rx, py - ry) > distance:
            # The result violates line i by more than the current worst: project the problem
            # onto the lines where the violation of line i equals that of each earlier line.
            for k in range(num_obst_lines):
                proj[k, 0] = lines[k, 0]
                proj[k, 1] = lines[k, 1]
                proj[k, 2] = lines[k, 2]
                proj[k, 3] = lines[k, 3]
            m = num_obst_lines
            for j in range(num_obst_lines, i):
                qx = lines[j, 0]
                qy = lines[j, 1]
                ex = lines[j, 2]
                ey = lines[j, 3]
                determinant = _det(dx, dy, ex, ey)
                if abs(determinant) <= EPSILON:
                    # Lines i and j are parallel.
                    if dx * ex + dy * ey > 0.0:
                        # Same direction: line j adds nothing.
                        continue
                    # Opposite directions: the bisector lies halfway.
                    bx = 0.5 * (px + qx)
                    by = 0.5 * (py + qy)
                else:
                    s = _det(ex, ey, px - qx, py - qy) / determinant
                    bx = px + s * dx
                    by = py + s * dy
                nx = ex - dx
                ny = ey - dy
                norm = math.sqrt(nx * nx + ny * ny)
                proj[m, 0] = bx
                proj[m, 1] = by
                proj[m, 2] = nx / norm
                proj[m, 3] = ny / norm
                m += 1
            fail, tx, ty = linear_program2(proj, m, radius, -dy, dx, True)
            if fail >= m:
                # On failure (floating point only: the current result is feasible by
                # construction) the current result is kept.
                rx = tx
                ry = ty
            distance = _det(dx, dy, px - rx, py - ry)
    return rx, ry


@njit(cache=True)
def reach_lines(lines, ref_x, ref_y, accel_r, decel_r):
    """
    Write the half-planes of the velocities reachable within one step; return how many.

    At most MAX_REACH_LINES, in rows 0.. of ``lines``, counter-clockwise, permitted side on
    the left. ref : the velocity now [m/s] (in the controller: the last command).
    accel_r, decel_r : max_accel x time step and max_decel x time step [m/s], ``inf`` for
    unlimited. The set
    (see docs/acceleration.md), with u = ref / |ref| and brake = min(decel_r, |ref|), the
    speed that can be shed in one step (braking stops at a stop, it does not reverse; and
    brake is at most 100 x accel_r, REACH_MIN_HALF_ANGLE):

    - the disc of radius accel_r around ref (accelerating, in any direction, at max_accel);
    - decel_r > accel_r: its convex hull with the brake point ``ref - brake u`` (braking at
      max_decel for part of the step, accelerating for the rest), a disc with a cone toward
      the origin; every velocity in the cone outside the disc is slower than ref;
    - decel_r < accel_r: cut by the chord ``(v - ref) . u >= -decel_r`` (the speed along the
      current direction falls by at most decel_r);
    - accel_r unlimited: that cut alone (none at all when decel_r is unlimited too).

    The arcs are replaced by inscribed polygons (REACH_SIDES per turn), so every velocity inside
    the lines is reachable; the brake point is a vertex (or on the chord) and so the slowest
    reachable velocity, ``ref - brake u``, is exactly inside: its speed is ``|ref| - brake``.
    At rest (|ref| <= TINY) the set is the disc.
    """
    speed = math.sqrt(ref_x * ref_x + ref_y * ref_y)
    moving = speed > TINY
    ux = ref_x / speed if moving else 1.0
    uy = ref_y / speed if moving else 0.0
    if not accel_r < np.inf:
        if decel_r < np.inf and moving:
            # Acceleration unlimited: only the braking cut, permitted side toward +u.
            return _put(lines, 0, ref_x - decel_r * ux, ref_y - decel_r * uy, uy, -ux)
        return 0
    brake = min(decel_r, speed, accel_r / math.sin(REACH_MIN_HALF_ANGLE))
    cone = brake > accel_r
    chord = not cone and decel_r < accel_r and moving
    if cone:
        # The tangents from the brake point touch the disc this far from -u.
        theta0 = math.acos(accel_r / brake)
    elif chord:
        # The chord cuts the disc this far from -u.
        theta0 = math.acos(decel_r / accel_r)
    else:
        theta0 = 0.0
    span = 2.0 * math.pi - 2.0 * theta0
    m = max(1, int(math.ceil(span * REACH_SIDES / (2.0 * math.pi) - 1e-9)))
    step = span / m
    # Angles are counted counter-clockwise from -u (the braking direction); the lines go
    # round the polygon counter-clockwise.
    base = math.atan2(-uy, -ux)
    n = 0
    if cone:
        # Brake point -> first arc vertex (offsets from ref, so that a small accel_r keeps
        # exact directions).
        first_x = accel_r * math.cos(base + theta0) + brake * ux
        first_y = accel_r * math.sin(base + theta0) + brake * uy
        dx, dy = _unit_or(first_x, first_y, -uy, ux)
        n = _put(lines, n, ref_x - brake * ux, ref_y - brake * uy, dx, dy)
    for k in range(m):
        a = base + theta0 + k * step
        mid = a + 0.5 * step
        # One side of the arc, inscribed: from the vertex at angle a to the next.
        n = _put(lines, n, ref_x + accel_r * math.cos(a), ref_y + accel_r * math.sin(a),
                 -math.sin(mid), math.cos(mid))
    if cone:
        # Last arc vertex -> brake point.
        last_x = accel_r * math.cos(base - theta0)
        last_y = accel_r * math.sin(base - theta0)
        dx, dy = _unit_or(-brake * ux - last_x, -brake * uy - last_y, -uy, ux)
        n = _put(lines, n, ref_x + last_x, ref_y + last_y, dx, dy)
    elif chord:
        # The braking chord, from the last arc vertex to the first.
        n = _put(lines, n, ref_x - decel_r * ux, ref_y - decel_r * uy, uy, -ux)
    return n


@njit(cache=True)
def reach_floor(lines, n_reach, vx, vy):
    """
    Smallest f in [0, 1] with f v inside the first ``n_reach`` lines (1 if none is smaller).

    How far ``brake_conflicts`` may scale a reachable velocity v down and stay reachable (the
    lines are convex, so every f between this and 1 is fine when v itself is inside).
    """
    floor = 0.0
    for k in range(n_reach):
        # det(d, p - f v) <= 0  <=>  det(d, p) <= f det(d, v).
        dv = _det(lines[k, 2], lines[k, 3], vx, vy)
        dp = _det(lines[k, 2], lines[k, 3], lines[k, 0], lines[k, 1])
        if dv > 0.0:
            floor = max(floor, dp / dv)
        elif dv == 0.0 and dp > 0.0:
            return 1.0
    return min(floor, 1.0)


@njit(cache=True)
def _leg_directions(rel_x, rel_y, dist_sq, radius):
    """Return the unit directions of the left and right tangents to a disc at ``rel``."""
    leg = math.sqrt(max(dist_sq - radius * radius, 0.0))
    left_x = (rel_x * leg - rel_y * radius) / dist_sq
    left_y = (rel_x * radius + rel_y * leg) / dist_sq
    right_x = (rel_x * leg + rel_y * radius) / dist_sq
    right_y = (-rel_x * radius + rel_y * leg) / dist_sq
    return left_x, left_y, right_x, right_y


@njit(cache=True)
def _put(lines, n, px, py, dx, dy):
    """Store the line through (px, py) with direction (dx, dy) as row n; return n + 1."""
    lines[n, 0] = px
    lines[n, 1] = py
    lines[n, 2] = dx
    lines[n, 3] = dy
    return n + 1


@njit(cache=True)
def _dist_sq_to(vx, vy, bx, by, t, dx, dy):
    """Squared distance from v to the point b + t d."""
    ax = vx - (bx + t * dx)
    ay = vy - (by + t * dy)
    return ax * ax + ay * ay


@njit(cache=True)
def _unit_or(vx, vy, fallback_x, fallback_y):
    norm = math.sqrt(vx * vx + vy * vy)
    if norm <= TINY:
        return fallback_x, fallback_y
    return vx / norm, vy / norm


@njit(cache=True)
def obstacle_lines(lines, pos_x, pos_y, vel_x, vel_y, radius, inv_th_obst, edges,
                   ob_point, ob_next, ob_prev, ob_dir, ob_convex, cases):
    """
    Write the obstacle ORCA lines of one agent into ``lines``; return how many.

    ``edges`` are obstacle vertex indices (each the first vertex of an edge), nearest first.
    Obstacles carry full responsibility: the agent alone avoids them. ``cases`` (one per edge)
    receives the geometric case taken for each edge: a CASE_* code plus FLAG_* bits.
    """
    n = 0
    inv_r = radius * inv_th_obst
    radius_sq = radius * radius
    for e in range(edges.shape[0]):
        o1 = edges[e]
        o2 = ob_next[o1]
        rel1_x = ob_point[o1, 0] - pos_x
        rel1_y = ob_point[o1, 1] - pos_y
        rel2_x = ob_point[o2, 0] - pos_x
        rel2_y = ob_point[o2, 1] - pos_y

        # Is this velocity obstacle already taken care of by earlier obstacle lines?
        covered = False
        for j in range(n):
            if (_det(inv_th_obst * rel1_x - lines[j, 0], inv_th_obst * rel1_y - lines[j, 1],
                     lines[j, 2], lines[j, 3]) - inv_r >= -EPSILON
                    and _det(inv_th_obst * rel2_x - lines[j, 0],
                             inv_th_obst * rel2_y - lines[j, 1],
                             lines[j, 2], lines[j, 3]) - inv_r >= -EPSILON):
                covered = True
                break
        if covered:
            cases[e] = CASE_COVERED
            continue

        # Not yet covered. Check for collisions.
        dist_sq1 = rel1_x * rel1_x + rel1_y * rel1_y
        dist_sq2 = rel2_x * rel2_x + rel2_y * rel2_y
        obst_x = ob_point[o2, 0] - ob_point[o1, 0]
        obst_y = ob_point[o2, 1] - ob_point[o1, 1]
        s = (-rel1_x * obst_x - rel1_y * obst_y) / (obst_x * obst_x + obst_y * obst_y)
        lx = -rel1_x - s * obst_x
        ly = -rel1_y - s * obst_y
        dist_sq_line = lx * lx + ly * ly

        if s < 0.0 and dist_sq1 <= radius_sq:
            # Collision with left vertex. Ignore if non-convex.
            cases[e] = CASE_COLLIDE_LEFT_VERTEX
            if ob_convex[o1]:
                ux, uy = _unit_or(-rel1_y, rel1_x, 1.0, 0.0)
                n = _put(lines, n, 0.0, 0.0, ux, uy)
            continue
        elif s >= 1.0 and dist_sq2 <= radius_sq:
            # Collision with right vertex. Ignore if non-convex or if the neighbouring edge
            # will take care of it. (RVO2 tests s > 1 and leaves s == 1 exactly to the leg
            # code, which then divides by a zero distance.)
            cases[e] = CASE_COLLIDE_RIGHT_VERTEX
            if ob_convex[o2] and _det(rel2_x, rel2_y, ob_dir[o2, 0], ob_dir[o2, 1]) >= 0.0:
                ux, uy = _unit_or(-rel2_y, rel2_x, 1.0, 0.0)
                n = _put(lines, n, 0.0, 0.0, ux, uy)
            continue
        elif s >= 0.0 and s < 1.0 and dist_sq_line <= radius_sq:
            # Collision with the obstacle segment.
            cases[e] = CASE_COLLIDE_SEGMENT
            n = _put(lines, n, 0.0, 0.0, -ob_dir[o1, 0], -ob_dir[o1, 1])
            continue

        # No collision. Compute legs. When viewed obliquely both legs can come from a single
        # vertex. Legs extend the cut-off line at a non-convex vertex.
        flags = 0
        if s < 0.0 and dist_sq_line <= radius_sq:
            # Obstacle viewed obliquely so that the left vertex defines the velocity obstacle.
            if not ob_convex[o1]:
                cases[e] = CASE_OBLIQUE_NONCONVEX
                continue
            flags |= FLAG_OBLIQUE_LEFT
            o2 = o1
            left_x, left_y, right_x, right_y = _leg_directions(rel1_x, rel1_y, dist_sq1, radius)
        elif s > 1.0 and dist_sq_line <= radius_sq:
            # Obstacle viewed obliquely so that the right vertex defines the velocity obstacle.
            if not ob_convex[o2]:
                cases[e] = CASE_OBLIQUE_NONCONVEX
                continue
            flags |= FLAG_OBLIQUE_RIGHT
            o1 = o2
            left_x, left_y, right_x, right_y = _leg_directions(rel2_x, rel2_y, dist_sq2, radius)
        else:
            # Usual situation.
            if ob_convex[o1]:
                left_x, left_y, _, _ = _leg_directions(rel1_x, rel1_y, dist_sq1, radius)
            else:
                # Left vertex non-convex: the left leg extends the cut-off line.
                flags |= FLAG_NONCONVEX_LEFT
                left_x = -ob_dir[o1, 0]
                left_y = -ob_dir[o1, 1]
            if ob_convex[o2]:
                _, _, right_x, right_y = _leg_directions(rel2_x, rel2_y, dist_sq2, radius)
            else:
                # Right vertex non-convex: the right leg extends the cut-off line.
                flags |= FLAG_NONCONVEX_RIGHT
                right_x = ob_dir[o1, 0]
                right_y = ob_dir[o1, 1]

        # Legs can never point into the neighbouring edge at a convex vertex: take the cut-off
        # line of that edge instead. A velocity projected on such a "foreign" leg adds no line.
        left_neighbor = ob_prev[o1]
        left_foreign = False
        right_foreign = False
        if ob_convex[o1] and _det(left_x, left_y, -ob_dir[left_neighbor, 0],
                                  -ob_dir[left_neighbor, 1]) >= 0.0:
            # Left leg points into the obstacle.
            left_x = -ob_dir[left_neighbor, 0]
            left_y = -ob_dir[left_neighbor, 1]
            left_foreign = True
            flags |= FLAG_LEFT_FOREIGN
        if ob_convex[o2] and _det(right_x, right_y, ob_dir[o2, 0], ob_dir[o2, 1]) <= 0.0:
            # Right leg points into the obstacle.
            right_x = ob_dir[o2, 0]
            right_y = ob_dir[o2, 1]
            right_foreign = True
            flags |= FLAG_RIGHT_FOREIGN

        # Cut-off centres.
        lc_x = inv_th_obst * (ob_point[o1, 0] - pos_x)
        lc_y = inv_th_obst * (ob_point[o1, 1] - pos_y)
        rc_x = inv_th_obst * (ob_point[o2, 0] - pos_x)
        rc_y = inv_th_obst * (ob_point[o2, 1] - pos_y)
        cv_x = rc_x - lc_x
        cv_y = rc_y - lc_y
        same = o1 == o2

        # Project the current velocity on the velocity obstacle.
        if same:
            t = 0.5
        else:
            t = ((vel_x - lc_x) * cv_x + (vel_y - lc_y) * cv_y) / (cv_x * cv_x + cv_y * cv_y)
        t_left = (vel_x - lc_x) * left_x + (vel_y - lc_y) * left_y
        t_right = (vel_x - rc_x) * right_x + (vel_y - rc_y) * right_y

        if (t < 0.0 and t_left < 0.0) or (same and t_left < 0.0 and t_right < 0.0):
            # Project on the left cut-off circle.
            cases[e] = CASE_LEFT_CUTOFF_CIRCLE | flags
            ux, uy = _unit_or(vel_x - lc_x, vel_y - lc_y, -lc_x, -lc_y)
            n = _put(lines, n, lc_x + inv_r * ux, lc_y + inv_r * uy, uy, -ux)
            continue
        elif t > 1.0 and t_right < 0.0:
            # Project on the right cut-off circle.
            cases[e] = CASE_RIGHT_CUTOFF_CIRCLE | flags
            ux, uy = _unit_or(vel_x - rc_x, vel_y - rc_y, -rc_x, -rc_y)
            n = _put(lines, n, rc_x + inv_r * ux, rc_y + inv_r * uy, uy, -ux)
            continue

        # Project on the left leg, the right leg or the cut-off line, whichever is closest.
        dist_sq_cutoff = (np.inf if t < 0.0 or t > 1.0 or same
                          else _dist_sq_to(vel_x, vel_y, lc_x, lc_y, t, cv_x, cv_y))
        dist_sq_left = (np.inf if t_left < 0.0
                        else _dist_sq_to(vel_x, vel_y, lc_x, lc_y, t_left, left_x, left_y))
        dist_sq_right = (np.inf if t_right < 0.0
                         else _dist_sq_to(vel_x, vel_y, rc_x, rc_y, t_right, right_x, right_y))

        if dist_sq_cutoff <= dist_sq_left and dist_sq_cutoff <= dist_sq_right:
            # Project on the cut-off line.
            cases[e] = CASE_CUTOFF_LINE | flags
            dx = -ob_dir[o1, 0]
            dy = -ob_dir[o1, 1]
            n = _put(lines, n, lc_x + inv_r * -dy, lc_y + inv_r * dx, dx, dy)
        elif dist_sq_left <= dist_sq_right:
            # Project on the left leg.
            cases[e] = CASE_LEFT_LEG | flags
            if left_foreign:
                # A foreign leg adds no line: the neighbouring edge covers it.
                continue
            n = _put(lines, n, lc_x + inv_r * -left_y, lc_y + inv_r * left_x, left_x, left_y)
        else:
            # Project on the right leg.
            cases[e] = CASE_RIGHT_LEG | flags
            if right_foreign:
                continue
            dx = -right_x
            dy = -right_y
            n = _put(lines, n, rc_x + inv_r * -dy, rc_y + inv_r * dx, dx, dy)
    return n


@njit(cache=True)
def agent_line(rel_x, rel_y, rvel_x, rvel_y, vel_x, vel_y, combined_radius, inv_th,
               inv_time_step, tie_sign, share):
    """
    ORCA half-plane ``(px, py, dx, dy)`` induced on an agent by one neighbour.

    rel : neighbour position minus own position [m]; rvel : own velocity minus the neighbour's
    [m/s]; vel : own velocity. ``share`` in [0, 1] is this agent's part of the responsibility
    (``pair_share``; RVO2: 0.5): the line passes through ``vel + share * u``, u being the
    smallest change of the relative velocity that leaves the velocity obstacle. The fifth value
    is the geometric case taken (CASE_AGENT_*). ``tie_sign`` (+1/-1)
    picks opposite escape directions for two agents at the very same place and velocity.
    """
    dist_sq = rel_x * rel_x + rel_y * rel_y
    combined_sq = combined_radius * combined_radius
    if dist_sq > combined_sq:
        # No collision. w: from the cut-off centre to the relative velocity.
        w_x = rvel_x - inv_th * rel_x
        w_y = rvel_y - inv_th * rel_y
        w_len_sq = w_x * w_x + w_y * w_y
        dot1 = w_x * rel_x + w_y * rel_y
        if dot1 < 0.0 and dot1 * dot1 > combined_sq * w_len_sq:
            # Project on the cut-off circle.
            case = CASE_AGENT_CUTOFF
            w_len = math.sqrt(w_len_sq)
            ux = w_x / w_len
            uy = w_y / w_len
            dx = uy
            dy = -ux
            u_x = (combined_radius * inv_th - w_len) * ux
            u_y = (combined_radius * inv_th - w_len) * uy
        else:
            # Project on the legs.
            leg = math.sqrt(dist_sq - combined_sq)
            if _det(rel_x, rel_y, w_x, w_y) > 0.0:
                # Project on the left leg.
                case = CASE_AGENT_LEFT_LEG
                dx = (rel_x * leg - rel_y * combined_radius) / dist_sq
                dy = (rel_x * combined_radius + rel_y * leg) / dist_sq
            else:
                # Project on the right leg.
                case = CASE_AGENT_RIGHT_LEG
                dx = -(rel_x * leg + rel_y * combined_radius) / dist_sq
                dy = -(-rel_x * combined_radius + rel_y * leg) / dist_sq
            dot2 = rvel_x * dx + rvel_y * dy
            u_x = dot2 * dx - rvel_x
            u_y = dot2 * dy - rvel_y
    else:
        # Already overlapping: project on the cut-off circle of one time step.
        case = CASE_AGENT_OVERLAP
        w_x = rvel_x - inv_time_step * rel_x
        w_y = rvel_y - inv_time_step * rel_y
        w_len = math.sqrt(w_x * w_x + w_y * w_y)
        if w_len <= TINY:
            # Same place, same velocity: no direction to escape along; pick opposite ones.
            ux = tie_sign
            uy = 0.0
        else:
            ux = w_x / w_len
            uy = w_y / w_len
        dx = uy
        dy = -ux
        u_x = (combined_radius * inv_time_step - w_len) * ux
        u_y = (combined_radius * inv_time_step - w_len) * uy
    return vel_x + share * u_x, vel_y + share * u_y, dx, dy, case


@njit(cache=True)
def _pair_line(i, j, rel_x, rel_y, rvel_x, rvel_y, vel_x, vel_y, combined_radius, inv_th,
               inv_time_step, tie_sign, share, radius, shapes):
    """
    ``agent_line`` for agents i and j, or their shapes' half-plane when either has a polygon.

    shapes : None or (polygons (N, V, 2), counts (N,), bodies (N,)): see ``solve_all``. What
    combined_radius adds to the two contact radii (margins) grows the shapes' difference.
    """
    if shapes is not None:
        polygons, counts, bodies, scratch = shapes
        if counts[i] > 0 or counts[j] > 0:
            rho = combined_radius - radius[i] - radius[j]
            rho += bodies[i] if counts[i] > 0 else radius[i]
            rho += bodies[j] if counts[j] > 0 else radius[j]
            ux, uy, nx, ny = pair_shape_line(polygons[i], max(counts[i], 1), polygons[j],
                                             max(counts[j], 1), rho, rel_x, rel_y, rvel_x,
                                             rvel_y, inv_th, inv_time_step, scratch)
            return vel_x + share * ux, vel_y + share * uy, ny, -nx, CASE_AGENT_SHAPE
    return agent_line(rel_x, rel_y, rvel_x, rvel_y, vel_x, vel_y, combined_radius, inv_th,
                      inv_time_step, tie_sign, share)


@njit(cache=True)
def shape_obstacle_lines(lines, i, positions, velocities, polygons, counts, rho, inv_th_obst,
                         inv_dt, edges, ob_point, ob_next, scratch):
    """
    Write the obstacle lines of agent i, a polygon, into ``lines``; return how many.

    One half-plane per near edge (``edges``, as ``obstacle_lines``): the segment's velocity
    obstacle against the agent's polygon grown by rho [m], the agent alone avoiding it.
    """
    n = 0
    segment = np.empty((2, 2))
    # The segment's vertex count as an int64, not the literal 2: numba would compile
    # pair_shape_line once more for the literal's own type (seconds of a cold start).
    n_segment = np.int64(2)
    vx = velocities[i, 0]
    vy = velocities[i, 1]
    for e in range(edges.shape[0]):
        o1 = edges[e]
        o2 = ob_next[o1]
        for end, o in ((0, o1), (1, o2)):
            segment[end, 0] = ob_point[o, 0] - positions[i, 0]
            segment[end, 1] = ob_point[o, 1] - positions[i, 1]
        ux, uy, nx, ny = pair_shape_line(polygons[i], counts[i], segment, n_segment, rho, 0.0, 0.0,
                                         vx, vy, inv_th_obst, inv_dt, scratch)
        n = _put(lines, n, vx + ux, vy + uy, ny, -nx)
    return n


@njit(cache=True)
def pair_share(i, j, weights, immovable, groups, ignore):
    """
    Agent i's share of the avoidance of neighbour j, in [0, 1]; RVO2's is 0.5.

    Full (1) when j does not avoid i: j ignores i's group, or j is immovable and i is not.
    Half between two immovable agents; none from an immovable agent toward a movable one (the
    solver never asks: an immovable agent's neighbour list holds no movable agent). Otherwise
    ``(w_j + 1 - w_i) / 2``, Unreal Engine's AvoidanceManager rule, within [0, 1] for weights
    in [0, 1], 0.5 for equal weights, and ``share(i, j) + share(j, i) == 1`` always.
    """
    if ignore[j, groups[i]] or (immovable[j] and not immovable[i]):
        return 1.0
    if immovable[i]:
        return 0.5 if immovable[j] else 0.0
    # Written so that equal weights give exactly 0.5.
    return 0.5 * (1.0 + (weights[j] - weights[i]))


@njit(cache=True)
def _neighbor_terms(i, agent_nbrs, velocities, chosen, weights, immovable, groups, ignore,
                    shares, nbr_vel):
    """
    Fill agent i's share of avoiding each neighbour and the velocity it expects each to keep.

    shares : (K,) ``pair_share``; nbr_vel : (K, 2) [m/s], the current velocity, or for an
    immovable neighbour of a movable agent its new one from ``chosen`` (planned first).
    """
    for k in range(agent_nbrs.shape[1]):
        j = agent_nbrs[i, k]
        if j < 0:
            break
        shares[k] = pair_share(i, j, weights, immovable, groups, ignore)
        source = chosen if immovable[j] and not immovable[i] else velocities
        nbr_vel[k, 0] = source[j, 0]
        nbr_vel[k, 1] = source[j, 1]


@njit(cache=True)
def _share_and_velocity(k, j, velocities, shares, nbr_vel):
    """
    Return (share, vx, vy): the k-th neighbour j's share and the velocity it is expected to keep.

    shares, nbr_vel : from ``_neighbor_terms``, or both None for RVO2's half-half with the
    neighbour's current velocity.
    """
    if shares is None:
        return 0.5, velocities[j, 0], velocities[j, 1]
    return shares[k], nbr_vel[k, 0], nbr_vel[k, 1]


@njit(cache=True, inline='always')
def _agent_lines(lines, n, i, positions, velocities, radius, agent_nbrs, inv_th, inv_dt, cases,
                 shares, nbr_vel):
    """
    Append agent i's ORCA lines, one per neighbour, nearest first; return the new count.

    shares, nbr_vel : from ``_neighbor_terms``, or both None for RVO2's half-half with the
    neighbours' current velocities.
    """
    for k in range(agent_nbrs.shape[1]):
        j = agent_nbrs[i, k]
        if j < 0:
            break
        share, vj_x, vj_y = _share_and_velocity(k, j, velocities, shares, nbr_vel)
        lx, ly, ldx, ldy, cases[k] = agent_line(
            positions[j, 0] - positions[i, 0], positions[j, 1] - positions[i, 1],
            velocities[i, 0] - vj_x, velocities[i, 1] - vj_y,
            velocities[i, 0], velocities[i, 1], radius[i] + radius[j], inv_th, inv_dt,
            1.0 if i < j else -1.0, share)
        n = _put(lines, n, lx, ly, ldx, ldy)
    return n


@njit(cache=True)
def _pair_margin(soft, i, j, scale):
    """Return the margin [m] a pair keeps at this scale: a kept one whole, others scaled."""
    margin, reach, cap, keep, heading, lookahead, turn_rate, lead, reference = soft
    return ((margin[i] if keep[i] else scale * margin[i])
            + (margin[j] if keep[j] else scale * margin[j]))


@njit(cache=True)
def _level_margin(soft, i, j, scale, moving_scale, stall, share, vj_x, vj_y):
    """
    Return the margin [m] a pair keeps at one level of ``solve_all``'s soft mode.

    ``_pair_margin`` at scale; toward a neighbour that does not avoid (share 1), at
    moving_scale while it walks (faster than ``SLOW_SPEED``), and only ``STANDING_MARGIN``
    at the stall level while it stands (a gap wider than the true discs is passable).
    """
    if share >= 1.0:
        if vj_x * vj_x + vj_y * vj_y > SLOW_SPEED * SLOW_SPEED:
            return _pair_margin(soft, i, j, moving_scale)
        if stall:
            return STANDING_MARGIN
    return _pair_margin(soft, i, j, scale)


@njit(cache=True)
def _agent_lines_soft(lines, n, i, positions, velocities, radius, agent_nbrs, soft, horizon,
                      scale, moving_scale, stall, inv_dt, cases, shares, nbr_vel,
                      lead_on=False, shapes=None):
    """
    ``_agent_lines`` with margins, per-agent horizons and look-ahead ranges.

    soft : (margin, reach, cap, keep, ...), see ``solve_all``; horizon : (N,) [s], each
    agent's (``Horizons``). A pair keeps ``_level_margin`` beyond the contact radii, looks
    ``max(horizon_i, horizon_j)`` ahead and counts only within ``max(reach_i, reach_j)``.
    Toward a neighbour agent i avoids alone (share 1) the lines are taken about its
    ``reference`` velocity where that is not NaN (the velocity obstacle is convex: any
    velocity gives a half-plane that leaves all of it out; the reference picks the side).
    """
    margin, reach, cap, keep, heading, lookahead, turn_rate, lead, reference = soft
    for k in range(agent_nbrs.shape[1]):
        j = agent_nbrs[i, k]
        if j < 0:
            break
        rel_x = positions[j, 0] - positions[i, 0]
        rel_y = positions[j, 1] - positions[i, 1]
        far = max(reach[i], reach[j])
        if rel_x * rel_x + rel_y * rel_y > far * far:
            continue
        share, vj_x, vj_y = _share_and_velocity(k, j, velocities, shares, nbr_vel)
        combined = radius[i] + radius[j] + _level_margin(soft, i, j, scale, moving_scale,
                                                         stall, share, vj_x, vj_y)
        inv_th = 1.0 / max(horizon[i], horizon[j])
        # Toward a neighbour that does not avoid, about the reference if there is one.
        vi_x, vi_y = velocities[i, 0], velocities[i, 1]
        if share >= 1.0 and not math.isnan(reference[i, 0]):
            vi_x, vi_y = reference[i, 0], reference[i, 1]
        lx, ly, ldx, ldy, cases[k] = _pair_line(
            i, j, rel_x, rel_y, vi_x - vj_x, vi_y - vj_y, vi_x, vi_y, combined, inv_th,
            inv_dt, 1.0 if i < j else -1.0, share, radius, shapes)
        n = _put(lines, n, lx, ly, ldx, ldy)
        if (lead_on and lead[j] > 0.0 and share >= 1.0
                and vj_x * vj_x + vj_y * vj_y > SLOW_SPEED * SLOW_SPEED
                and _in_path(rel_x, rel_y, vj_x * lead[j], vj_y * lead[j], combined)):
            # Where the walker will be: the same disc lead[j] ahead on its way, avoided as
            # the walker is; inside it already (in the walker's next steps), out of it
            # within lead[j]. Passing behind a walker beats crossing its next steps, and
            # stepping aside beats running ahead of it.
            lx, ly, ldx, ldy, _ = _pair_line(
                i, j, rel_x + vj_x * lead[j], rel_y + vj_y * lead[j], vi_x - vj_x,
                vi_y - vj_y, vi_x, vi_y, combined, inv_th,
                1.0 / lead[j], 1.0 if i < j else -1.0, share, radius, shapes)
            n = _put(lines, n, lx, ly, ldx, ldy)
    return n


@njit(cache=True)
def _in_path(rel_x, rel_y, way_x, way_y, distance):
    """Whether the origin is within distance of the segment rel -> rel + way."""
    way_sq = way_x * way_x + way_y * way_y
    t = 0.0 if way_sq == 0.0 else min(max(-(rel_x * way_x + rel_y * way_y) / way_sq, 0.0), 1.0)
    qx = rel_x + t * way_x
    qy = rel_y + t * way_y
    return qx * qx + qy * qy < distance * distance


@njit(cache=True)
def _avoids_a_walker(i, agent_nbrs, responsibility, lead=None):
    """
    Whether movable agent i has a neighbour that does not avoid it (an immovable one).

    lead : (N,) or None; given, only such a neighbour with lead > 0 counts.
    """
    if responsibility is None:
        return False
    weights, immovable, groups, ignore = responsibility
    if immovable[i]:
        return False
    for k in range(agent_nbrs.shape[1]):
        j = agent_nbrs[i, k]
        if j < 0:
            break
        if immovable[j] and (lead is None or lead[j] > 0.0):
            return True
    return False


# An answer whose progress along the preferred velocity is below this fraction of it (in
# soft mode) is no way forward: margins yield while they leave an agent none. Beside people
# (a neighbour that does not avoid, with a lead time: a person, not a robot that stands for
# a priority or stale odometry), PEOPLE_STALL_FRACTION: a robot that slides sideways past
# people standing round its goal is not making its way (docs/crowds.md, "Dense crowds");
# among robots and walls, margins that yield that early left robots deadlocked in a jam.
STALL_FRACTION = 0.1
PEOPLE_STALL_FRACTION = 0.3

# [m/s] A neighbour slower than this is standing (a tracked person's velocity noise stays
# under it). When margins yield for a way forward (a stall, not a conflict), they yield
# toward the agents that avoid back, standing people and obstacles, not toward people who
# walk: a walker crossing ahead is waited for with the margin whole, not cut behind at a
# quarter of it on a track velocity one step old. Past the last of MARGIN_SCALES, a stall
# takes one level more, at which standing people count with their bodies plus
# STANDING_MARGIN: the gap between two standing people opens as soon as the bodies pass.
SLOW_SPEED = 0.25
# [m] What a pair keeps toward a standing person at the stall level (and in the way out):
# the step's rounding and a person's sway, not a preference. Two people 1.30 m apart (centre
# to centre, 0.3 m radius) leave a 0.3 m robot 0.70 m; it needs 0.64 m.
STANDING_MARGIN = 0.02


@njit(cache=True)
def _progresses(vx, vy, pref_x, pref_y, people):
    """
    Whether v goes forward along pref (or pref is 0).

    By at least STALL_FRACTION of it; PEOPLE_STALL_FRACTION beside people (``people``).
    """
    fraction = PEOPLE_STALL_FRACTION if people else STALL_FRACTION
    return vx * pref_x + vy * pref_y >= fraction * (pref_x * pref_x + pref_y * pref_y)


@njit(cache=True, inline='always')
def _levels(i, agent_nbrs, soft, shares, responsibility, near):
    """
    Return (ahead, the number of levels) of agent i's soft mode in ``solve_all``.

    ahead: it avoids a walker with a lead (each scale first with where the walker will be).
    The levels: MARGIN_SCALES (twice, ahead) and the stall level; or one, when every level
    would build the first's lines: no margin of them is given up (its own and each
    neighbour's are kept or zero, and no obstacle edge is near while its own is not zero:
    its obstacle lines take the level's share of it) and every neighbour avoids back (share
    below 1: no walking and standing rules of ``_level_margin``, no lines of where it will
    be). The first level's answer is then each level's: a fleet of robots in a jam solved
    the same linear program four times (each polygon pair's half-plane costs about 0.4 us).
    """
    margin, reach, cap, keep, heading, lookahead, turn_rate, lead, reference = soft
    ahead = _avoids_a_walker(i, agent_nbrs, responsibility, lead)
    n_levels = len(MARGIN_SCALES) * (1 + ahead) + 1
    if margin[i] != 0.0 and (not keep[i] or near[0][i + 1] > near[0][i]):
        return ahead, n_levels
    for k in range(agent_nbrs.shape[1]):
        j = agent_nbrs[i, k]
        if j < 0:
            break
        if margin[j] != 0.0 and not keep[j]:
            return ahead, n_levels
        if responsibility is not None and shares[k] >= 1.0:
            return ahead, n_levels
    return ahead, 1


# Margins (``solve_all``'s soft mode) are given up in these steps before an agent is left
# without a velocity that keeps every half-plane: full, half, a quarter. A quarter stays: it
# absorbs a step of prediction error (a walker turning, a command in effect earlier than
# planned); the escape beyond judges contact on the true discs. The crowd runs that chose
# these steps: docs/core.md, "Margins that yield".
MARGIN_SCALES = (1.0, 0.5, 0.25)


@njit(cache=True)
def _way_out(i, positions, reach, contact, agent_nbrs, nbr_vel, lines, n_hard, max_speed,
             pref_x, pref_y, lp_x, lp_y, cap, time_step, drive_i, now):
    """
    Return agent i's way out: a differential robot's (drive_i's lookahead > 0) or a disc's.

    now : (2,) agent i's velocity now (a differential robot keeps to its way out).
    """
    heading, lookahead, turn_rate = drive_i
    if lookahead > 0.0:
        return escape_unicycle(i, positions, reach, contact, agent_nbrs, nbr_vel, lines,
                               n_hard, max_speed, pref_x, pref_y, lp_x, lp_y, cap, time_step,
                               heading, lookahead, turn_rate, now[0], now[1])
    return escape_velocity(i, positions, reach, contact, agent_nbrs, nbr_vel, lines, n_hard,
                           max_speed, pref_x, pref_y, lp_x, lp_y, cap, time_step)


class AgentRows(NamedTuple):
    """The agents as ``solve_all`` reads them: C-ordered float64 rows, checked by the solver."""

    positions: np.ndarray   # (N, 2) [m]
    velocities: np.ndarray  # (N, 2) [m/s]
    prefs: np.ndarray       # (N, 2) [m/s] preferred velocities
    radius: np.ndarray      # (N,) [m]
    max_speed: np.ndarray   # (N,) [m/s]
    # (N, K) int64 neighbour indices, nearest first, -1 padded; the neighbours each agent
    # avoids (ignored ones already left out).
    nbrs: np.ndarray


class NearObstacles(NamedTuple):
    """The obstacle edges near each agent and the edges' geometry (``Obstacles``)."""

    offsets: np.ndarray  # (N + 1,) CSR offsets into edges
    edges: np.ndarray    # obstacle edge ids, nearest first per agent
    point: np.ndarray    # the ``Obstacles`` arrays point, next, prev, unit_dir, convex
    next_edge: np.ndarray
    prev_edge: np.ndarray
    unit_dir: np.ndarray
    convex: np.ndarray


def _shared_inverse(time_horizon):
    """Return 1 / time_horizon of every agent (a float); 0 for per-agent ones (an array)."""
    return 1.0 / time_horizon if np.ndim(time_horizon) == 0 else 0.0


@overload(_shared_inverse)
def _shared_inverse_compiled(time_horizon):
    # ``_shared_inverse`` in compiled code, picked by the type: no array division.
    if isinstance(time_horizon, types.Float):
        return lambda time_horizon: 1.0 / time_horizon
    # Per pair, from each agent's horizon (``_agent_lines_soft``).
    return lambda time_horizon: 0.0


class Horizons(NamedTuple):
    """
    The times of one step [s].

    time_horizon is the one channel of the agents' horizons: a float, every agent's, without
    ``soft``; with it (N,) floats, each agent's (a pair looks as far as the larger of its
    two), the solver's ``SolverSettings.time_horizon`` where an agent was given none.
    """

    time_step: float
    time_horizon: float  # or (N,) with ``soft``
    time_horizon_obst: float


class Responsibility(NamedTuple):
    """
    Who gives way how much (``pair_share``); ``solve_all``'s ``responsibility``.

    Movable agents avoid immovable ones with full responsibility, as moving obstacles with
    the velocity in ``out``: plan the immovable agents first (``active`` only them), then
    the others; ``out`` must hold the current velocity of the agents not planned yet.
    """

    weights: np.ndarray    # (N,) float avoidance weights in [0, 1]
    immovable: np.ndarray  # (N,) bool: does not avoid movable agents
    groups: np.ndarray     # (N,) int64 group of each agent
    ignore: np.ndarray     # (N, G) bool: agent i ignores group g


class ReachSet(NamedTuple):
    """
    Acceleration limits; ``solve_all``'s ``reach_set``.

    The lines of ``reach_lines`` come first and are never relaxed: linear program 3 keeps
    them hard with the obstacle lines. If obstacles (and, with the guard, one-step lines)
    cannot be kept within them, program 3 least-violates those, reach lines hard (the agent
    brakes as hard as it may), agent lines dropped, and the agent is marked in
    ``stuck_out`` (guard on). If even max_speed is out of reach (the brake point of
    ``reach_lines`` is faster), the answer is ref scaled to max_speed (max_speed wins).
    ``floor[i]`` receives ``reach_floor`` of the answer.
    """

    accel_r: np.ndarray  # (N,) max_accel x time_step [m/s] (inf: unlimited)
    decel_r: np.ndarray  # (N,) max_decel x time_step [m/s] (inf: unlimited)
    ref: np.ndarray      # (N, 2) the velocity they are measured from
    floor: np.ndarray    # (N,) output: how far ``brake_conflicts`` may slow each down


class SoftRows(NamedTuple):
    """
    Margins that yield, horizons, reaches and the way out; ``solve_all``'s ``soft``.

    The margin of an agent that keeps it never yields against other agents, and its one-step
    lines include it; against obstacles it does. The agents' horizons are ``Horizons``' (per
    agent in this mode). The half-planes are built with the margins, then, while they conflict
    or leave no way forward (``STALL_FRACTION``; ``PEOPLE_STALL_FRACTION`` beside people), with
    half of them and a quarter (``MARGIN_SCALES``); an answer kept with a larger margin stands
    when a smaller one makes them conflict. Once the half-planes are kept but leave no way
    forward, the margins toward walking neighbours that do not avoid stay as they are; those
    toward the others, standing ones (``SLOW_SPEED``) and obstacles yield further, and one
    level more counts standing neighbours that do not avoid with their bodies plus
    ``STANDING_MARGIN`` (``_level_margin``). If they still conflict, the agent takes
    ``escape.escape_velocity`` (the least contact within the step, then of the bodies, then the
    latest first contact, up to ``cap``; acceleration reach and obstacle lines kept), not
    program 3's compromise nor the keep-right fallback; it is marked in ``stuck_out`` (guard
    on) only when even that touches a neighbour within the step. An agent with lookahead > 0 is
    the point ahead of a differential robot, whose way out is ``escape.escape_unicycle`` and
    which takes it also when the drive of its answer would not keep clear
    (``escape.drive_keeps_clear``). With the margins whole, a walking neighbour that does not
    avoid (share 1) and has lead > 0 is also avoided where it will be lead seconds on
    (``_agent_lines_soft``). The lines toward such neighbours are taken about ``reference``
    where it is not NaN, else about the velocity (RVO2's).
    """

    margin: np.ndarray     # (N,) [m] beyond the contact radius
    reach: np.ndarray      # (N,) [m] how far each is looked for (a pair uses the larger)
    cap: float             # [s] how far ahead the way out looks (the largest horizon)
    keep: np.ndarray       # (N,) bool: never yields its margin against other agents
    heading: np.ndarray    # (N,) [rad] a differential robot's heading
    lookahead: np.ndarray  # (N,) [m] its point ahead (0: not differential)
    turn_rate: np.ndarray  # (N,) [rad/s] its max yaw rate
    lead: np.ndarray       # (N,) [s] walkers also avoided where they will be this far on
    reference: np.ndarray  # (N, 2) [m/s] lines toward those that do not avoid (NaN: velocity)


@njit(cache=True)
def solve_all(agents, near, times, responsibility, active, hard_step_lines, stuck_in,
              fixed_vel, stuck_out, out, reach_set=None, soft=None, shapes=None):
    """
    Write the new velocities of all active agents into ``out`` (N, 2).

    agents, near, times : AgentRows, NearObstacles and Horizons as plain tuples (numba's
        dispatcher types a NamedTuple argument in Python, about 4 us per call, a tuple in C);
        the kernels unpack them by the records' field names.
    responsibility, reach_set, soft : the optional records ``Responsibility`` (who gives way
        how much), ``ReachSet`` (acceleration limits) and ``SoftRows`` (margins that yield
        and the way out), as tuples; their docstrings say how each steers the solution.
        None: RVO2's (compiled without a trace of it).
    shapes : None (discs), or with ``soft`` (polygons (N, V, 2), counts (N,), bodies (N,),
        scratch): agents with a polygon take the shapes' half-planes (``_pair_line``,
        ``shape_obstacle_lines``; solver.Agents' footprint says what each field holds).
    hard_step_lines : the collision guard. RVO2's program 3 keeps only the obstacle lines hard
        and lets agents overlap in dense crowds; with the guard each agent also keeps, toward
        each neighbour that could touch it within a step, the ORCA line of a ONE-step horizon
        (``_step_lines``), and in a conflict those and the obstacle lines as close as it can
        to its preferred velocity turned FALLBACK_TURN right (``_fallback``; else program 3,
        and it is marked in ``stuck_out``).
    stuck_in, fixed_vel : (N,) bool, (N, 2). A neighbour marked stuck (it could not take its
        share of the one-step responsibility, e.g. pinned against a wall) is avoided with FULL
        responsibility, as a moving obstacle with its already chosen velocity ``fixed_vel``.
    Rows of ``out`` of inactive agents are left as they are.
    """
    positions, velocities, prefs, radius, max_speed, agent_nbrs = agents
    obst_offsets, obst_edges, ob_point, ob_next, ob_prev, ob_dir, ob_convex = near
    time_step, time_horizon, time_horizon_obst = times
    n_agents = positions.shape[0]
    k_max = agent_nbrs.shape[1]
    max_obst, n_rows = _line_rows(obst_offsets, k_max, reach_set, soft)
    touchy = _may_touch(positions, radius, max_speed, agent_nbrs, soft, time_step,
                        hard_step_lines)
    if reach_set is not None:
        accel_r, decel_r, ref, floor = reach_set
    inv_th = _shared_inverse(time_horizon)
    inv_th_obst = 1.0 / time_horizon_obst
    inv_dt = 1.0 / time_step
    # Agent i's share of each neighbour and the velocity it expects the neighbour to keep
    # (``_neighbor_terms``; read only with ``responsibility``).
    shares = np.empty(k_max)
    nbr_vel = np.empty((k_max, 2))
    if responsibility is not None:
        weights, immovable, groups, ignore = responsibility
    if soft is not None:
        escape = (np.empty((k_max, 2)), np.empty(k_max), np.empty(k_max), np.empty(k_max))
    # Scratch of every agent's lines (written before they are read), allocated once per call.
    lines = np.empty((n_rows, 4))
    proj = np.empty((n_rows, 4))
    cases = np.empty(max_obst, np.int64)
    agent_cases = np.empty(k_max, np.int64)
    for i in range(n_agents):
        if not active[i]:
            continue
        if responsibility is not None:
            _neighbor_terms(i, agent_nbrs, velocities, out, weights, immovable, groups, ignore,
                            shares, nbr_vel)
        # Soft mode: the MARGIN_SCALES, then the stall level (reached only after a stall);
        # beside walkers with a lead, each scale first with the lines of where they will be.
        ahead, n_scales = False, 1
        if soft is not None:
            margin, reach, cap, keep, heading, lookahead, turn_rate, lead, reference = soft
            ahead, n_scales = _levels(i, agent_nbrs, soft, shares, responsibility, near)
        n_reach = 0
        kept, kept_x, kept_y = False, 0.0, 0.0
        # The scale of the margins toward walking neighbours that do not avoid: the levels'
        # until a stall (not a conflict) sends the loop on, then held (SLOW_SPEED).
        moving_scale = MARGIN_SCALES[0]
        for level in range(n_scales):
            lead_on = ahead and level % 2 == 0
            margin_level = level // 2 if ahead else level
            stall = margin_level == len(MARGIN_SCALES)
            if stall and not kept:
                break  # the last scale conflicts: the way out below
            scale = MARGIN_SCALES[min(margin_level, len(MARGIN_SCALES) - 1)]
            if not kept:
                moving_scale = scale
            own_radius = radius[i]
            if soft is not None:
                own_radius += scale * margin[i]
            if reach_set is not None:
                # The reachable velocities first (hardest of all), then the obstacle lines.
                n_reach = reach_lines(lines, ref[i, 0], ref[i, 1], accel_r[i], decel_r[i])
            n_obst = _own_obstacle_lines(lines, n_reach, i, positions, velocities, own_radius,
                                         inv_th_obst, inv_dt, near, cases, radius, shapes)
            n = n_obst
            if touchy[i]:
                n = _step_lines(lines, n, i, positions, velocities, radius, max_speed,
                                agent_nbrs, responsibility, soft, stuck_in, fixed_vel, shares,
                                nbr_vel, stall, time_step, shapes)
            n_hard = n
            n = _neighbor_lines(lines, n, i, positions, velocities, radius, agent_nbrs,
                                responsibility, soft, shares, nbr_vel, scale, moving_scale,
                                stall, inv_th, time_horizon, inv_dt, agent_cases,
                                lead_on, shapes)
            fail, rx, ry = linear_program2(lines, n, max_speed[i], prefs[i, 0], prefs[i, 1],
                                           False)
            if fail == n:
                last = level == n_scales - 1
                if soft is None or last or _progresses(rx, ry, prefs[i, 0], prefs[i, 1], ahead):
                    break
                # Kept, but no way forward: a smaller margin may open one (a gap the discs
                # pass); if none keeps every half-plane, this answer stands.
                kept = True
                kept_x = rx
                kept_y = ry
            elif kept:
                fail = n
                rx = kept_x
                ry = kept_y
                break
        if soft is not None and _way_out_wanted(i, agents, responsibility, reach_set, soft,
                                                fail, n, n_reach):
            # The way out that delays the first contact longest (``_soft_way_out``).
            rx, ry, contact = _soft_way_out(
                i, agents, time_step, responsibility, soft, shares, nbr_vel,
                (scale, moving_scale, stall), escape, lines, n_obst, fail, n, rx, ry)
            fail = n
            if hard_step_lines and contact < time_step:
                stuck_out[i] = True
        if fail < n:
            # The half-planes conflict: program 3 or the guard's fallbacks.
            rx, ry = _fallback(i, prefs, max_speed, reach_set, hard_step_lines, stuck_out,
                               lines, fail, n, (n_reach, n_obst, n_hard), rx, ry, proj)
        out[i, 0] = rx
        out[i, 1] = ry
        if reach_set is not None:
            floor[i] = reach_floor(lines, n_reach, rx, ry)


@njit(cache=True, inline='always')
def _own_obstacle_lines(lines, n_reach, i, positions, velocities, own_radius, inv_th_obst,
                        inv_dt, near, cases, radius, shapes):
    """
    Add agent i's obstacle lines after its n_reach first lines; return the count of both.

    No call (nor its slices, ~30 ns an agent) without obstacle edges near. An agent with a
    polygon (``shapes``) takes ``shape_obstacle_lines``.
    """
    obst_offsets, obst_edges, ob_point, ob_next, ob_prev, ob_dir, ob_convex = near
    if obst_offsets[i + 1] == obst_offsets[i]:
        return n_reach
    if shapes is not None and shapes[1][i] > 0:
        return n_reach + shape_obstacle_lines(
            lines[n_reach:], i, positions, velocities, shapes[0], shapes[1],
            own_radius - radius[i] + shapes[2][i], inv_th_obst, inv_dt,
            obst_edges[obst_offsets[i]:obst_offsets[i + 1]], ob_point, ob_next, shapes[3])
    return n_reach + obstacle_lines(
        lines[n_reach:], positions[i, 0], positions[i, 1], velocities[i, 0], velocities[i, 1],
        own_radius, inv_th_obst, obst_edges[obst_offsets[i]:obst_offsets[i + 1]], ob_point,
        ob_next, ob_prev, ob_dir, ob_convex, cases)


@njit(cache=True)
def _line_rows(obst_offsets, k_max, reach_set, soft):
    """Return (the most obstacle edges near one agent, the rows of one agent's lines)."""
    max_obst = 0
    for i in range(obst_offsets.shape[0] - 1):
        max_obst = max(max_obst, obst_offsets[i + 1] - obst_offsets[i])
    n_rows = max_obst + 2 * k_max + 1
    if soft is not None:
        n_rows += k_max  # the lines of where walkers will be (``soft``'s lead)
    if reach_set is not None:
        n_rows += MAX_REACH_LINES
    return max_obst, n_rows


@njit(cache=True)
def _may_touch(positions, radius, max_speed, agent_nbrs, soft, time_step, hard_step_lines):
    """
    Return (N,) bool: whether the nearest neighbour of each agent could touch it in a step.

    A bound over every pair (the largest radius, margin and speed of all), so an agent with
    False has no neighbour close enough for a one-step line (``_step_lines``). All False
    without the guard.
    """
    n = positions.shape[0]
    out = np.zeros(n, np.bool_)
    if not hard_step_lines or n == 0:
        return out
    big_r = radius.max()
    big_v = max_speed.max()
    big_m = 0.0
    if soft is not None:
        margin, reach, cap, keep, heading, lookahead, turn_rate, lead, reference = soft
        big_m = margin.max()
    for i in range(n):
        j = agent_nbrs[i, 0] if agent_nbrs.shape[1] else -1
        if j < 0:
            continue
        hard_r = (radius[i] + big_r + 2.0 * big_m + STANDING_MARGIN) * (1.0 + HARD_MARGIN)
        touch = hard_r + (max_speed[i] + big_v) * time_step
        dx = positions[j, 0] - positions[i, 0]
        dy = positions[j, 1] - positions[i, 1]
        out[i] = dx * dx + dy * dy < touch * touch
    return out


@njit(cache=True, inline='always')
def _step_reach(i, j, k, radius, max_speed, responsibility, soft, shares, nbr_vel, stall,
                time_step):
    """
    Return (hard_r, touch) of agent i's k-th neighbour j: the one-step lines' radius [m].

    touch [m]: the pair can touch within a step only when nearer than that.
    """
    hard_r = radius[i] + radius[j]
    if soft is not None:
        # The margins as far as they are always kept: perception and
        # prediction err (none toward a standing person at the stall level).
        if responsibility is None:
            hard_r += _pair_margin(soft, i, j, MARGIN_SCALES[-1])
        else:
            hard_r += _level_margin(soft, i, j, MARGIN_SCALES[-1], MARGIN_SCALES[-1],
                                    stall, shares[k], nbr_vel[k, 0], nbr_vel[k, 1])
    hard_r *= 1.0 + HARD_MARGIN
    return hard_r, hard_r + (max_speed[i] + max_speed[j]) * time_step


@njit(cache=True)
def second_pass_rows(agents, time_step, responsibility, soft, stuck, active):
    """
    (N,) bool: the agents the guard's second pass plans again (``solve_all``'s stuck_in).

    The active agents, not stuck themselves, with a stuck neighbour whose one-step line they
    take (``_step_lines``, the only reader of stuck_in): their other lines, hence the
    answers of the rest, are the first pass's. With ``responsibility`` every agent with a
    stuck neighbour: a movable one also reads its immovable neighbours' new velocities,
    which the second pass may change.
    """
    positions, velocities, prefs, radius, max_speed, agent_nbrs = agents
    n = positions.shape[0]
    redo = np.zeros(n, np.bool_)
    touchy = _may_touch(positions, radius, max_speed, agent_nbrs, soft, time_step, True)
    for i in range(n):
        if not active[i] or stuck[i] or not (touchy[i] or responsibility is not None):
            continue
        for k in range(agent_nbrs.shape[1]):
            j = agent_nbrs[i, k]
            if j < 0:
                break
            if not stuck[j]:
                continue
            if responsibility is not None:
                redo[i] = True
                break
            rel_x = positions[j, 0] - positions[i, 0]
            rel_y = positions[j, 1] - positions[i, 1]
            touch = _step_reach(i, j, k, radius, max_speed, None, soft, None, None, False,
                                time_step)[1]
            if rel_x * rel_x + rel_y * rel_y < touch * touch:
                redo[i] = True
                break
    return redo


@njit(cache=True, inline='always')
def _step_lines(lines, n, i, positions, velocities, radius, max_speed, agent_nbrs,
                responsibility, soft, stuck_in, fixed_vel, shares, nbr_vel, stall, time_step,
                shapes=None):
    """
    Add the guard's one-step lines of agent i's neighbours that could touch it within a step.

    The others' one-step lines lie beyond both speed circles. Returns the new line count.
    """
    px = positions[i, 0]
    py = positions[i, 1]
    vx = velocities[i, 0]
    vy = velocities[i, 1]
    inv_dt = 1.0 / time_step
    for k in range(agent_nbrs.shape[1]):
        j = agent_nbrs[i, k]
        if j < 0:
            break
        rel_x = positions[j, 0] - px
        rel_y = positions[j, 1] - py
        hard_r, touch = _step_reach(i, j, k, radius, max_speed, responsibility, soft, shares,
                                    nbr_vel, stall, time_step)
        if rel_x * rel_x + rel_y * rel_y >= touch * touch:
            continue
        if stuck_in[j]:
            # The neighbour cannot give way: avoid its chosen velocity all alone.
            lx, ly, ldx, ldy, _ = _pair_line(
                i, j, rel_x, rel_y, vx - fixed_vel[j, 0], vy - fixed_vel[j, 1], vx, vy,
                hard_r, inv_dt, inv_dt, 1.0 if i < j else -1.0, 0.5, radius, shapes)
            lx = 2.0 * lx - vx
            ly = 2.0 * ly - vy
        else:
            if responsibility is None:
                share, vj_x, vj_y = _share_and_velocity(k, j, velocities, None, None)
            else:
                share, vj_x, vj_y = _share_and_velocity(k, j, velocities, shares, nbr_vel)
            lx, ly, ldx, ldy, _ = _pair_line(
                i, j, rel_x, rel_y, vx - vj_x, vy - vj_y, vx, vy, hard_r, inv_dt, inv_dt,
                1.0 if i < j else -1.0, share, radius, shapes)
        n = _put(lines, n, lx, ly, ldx, ldy)
    return n


@njit(cache=True, inline='always')
def _neighbor_lines(lines, n, i, positions, velocities, radius, agent_nbrs, responsibility,
                    soft, shares, nbr_vel, scale, moving_scale, stall, inv_th, horizon,
                    inv_dt, agent_cases, lead_on, shapes=None):
    """
    Add agent i's ORCA lines toward its neighbours: RVO2's, or with margins (``soft``).

    inv_th : 1 / the horizon of every agent, without ``soft``; horizon : (N,) each agent's,
    with it (``Horizons``' time_horizon either way).
    """
    if soft is not None:
        if responsibility is None:
            return _agent_lines_soft(lines, n, i, positions, velocities, radius, agent_nbrs,
                                     soft, horizon, scale, moving_scale, stall, inv_dt,
                                     agent_cases, None, None, lead_on, shapes)
        return _agent_lines_soft(lines, n, i, positions, velocities, radius, agent_nbrs, soft,
                                 horizon, scale, moving_scale, stall, inv_dt, agent_cases,
                                 shares, nbr_vel, lead_on, shapes)
    if responsibility is None:
        # RVO2's case, compiled without the shares (as fast as before them).
        return _agent_lines(lines, n, i, positions, velocities, radius, agent_nbrs, inv_th,
                            inv_dt, agent_cases, None, None)
    return _agent_lines(lines, n, i, positions, velocities, radius, agent_nbrs, inv_th,
                        inv_dt, agent_cases, shares, nbr_vel)


@njit(cache=True)
def _way_out_wanted(i, agents, responsibility, reach_set, soft, fail, n, n_reach):
    """
    Whether agent i looks for a way out (``_soft_way_out``).

    Beside a neighbour that does not avoid, when no velocity keeps every half-plane (even
    without margins), or always for a differential robot. Among agents that all avoid, the
    guard's shared rules (keep-right, second pass, brake) stay. With acceleration limits,
    not when even its reach conflicts.
    """
    out_of_reach = reach_set is not None and fail < n_reach
    margin, reach, cap, keep, heading, lookahead, turn_rate, lead, reference = soft
    unicycle = lookahead[i] > 0.0
    return (_avoids_a_walker(i, agents[5], responsibility) and not out_of_reach
            and (fail < n or unicycle))


@njit(cache=True)
def _soft_way_out(i, agents, time_step, responsibility, soft, shares, nbr_vel, level, escape,
                  lines, n_obst, fail, n, rx, ry):
    """
    Agent i's way out when its answer (rx, ry) breaks or does not keep its half-planes.

    Returns (rx, ry, contact). The way out delays the first contact longest (reach and
    obstacle lines hard). Contact counts at the margin always kept (as the one-step lines):
    what a walker's track velocity gets wrong within a step; toward a standing person who
    does not avoid, STANDING_MARGIN (as the stall level). A differential robot also takes it
    when the drive that gives the answer as well as it can (it cannot step sideways) would
    not keep clear: then ``contact`` is inf when the answer stands.
    """
    positions, velocities, prefs, radius, max_speed, agent_nbrs = agents
    scale, moving_scale, stall = level
    esc_vel, esc_reach, esc_contact, esc_kept = escape
    # (heading, lookahead, max yaw rate) of a differential robot; lookahead 0: none.
    margin, reach, cap, keep, heading, lookahead, turn_rate, lead, reference = soft
    drive_i = (heading[i], lookahead[i], turn_rate[i])
    for k in range(agent_nbrs.shape[1]):
        j = agent_nbrs[i, k]
        if j < 0:
            break
        if responsibility is None:
            margin_k = _pair_margin(soft, i, j, MARGIN_SCALES[-1])
            kept_k = _pair_margin(soft, i, j, scale)
            esc_vel[k, 0] = velocities[j, 0]
            esc_vel[k, 1] = velocities[j, 1]
        else:
            margin_k = _level_margin(soft, i, j, MARGIN_SCALES[-1], MARGIN_SCALES[-1], True,
                                     shares[k], nbr_vel[k, 0], nbr_vel[k, 1])
            kept_k = _level_margin(soft, i, j, scale, moving_scale, stall, shares[k],
                                   nbr_vel[k, 0], nbr_vel[k, 1])
            esc_vel[k, 0] = nbr_vel[k, 0]
            esc_vel[k, 1] = nbr_vel[k, 1]
        esc_contact[k] = radius[i] + radius[j]
        esc_reach[k] = esc_contact[k] + margin_k
        # What the answer keeps: the margins of the level it was found at.
        esc_kept[k] = esc_contact[k] + max(kept_k, margin_k)
    if fail == n and drive_keeps_clear(
            i, positions, esc_kept, esc_contact, agent_nbrs, esc_vel, max_speed[i], rx, ry,
            cap, time_step, heading[i], lookahead[i], turn_rate[i]):
        return rx, ry, math.inf
    return _way_out(i, positions, esc_reach, esc_contact, agent_nbrs, esc_vel, lines, n_obst,
                    max_speed[i], prefs[i, 0], prefs[i, 1], rx, ry, cap, time_step,
                    drive_i, velocities[i])


@njit(cache=True)
def _fallback(i, prefs, max_speed, reach_set, hard_step_lines, stuck_out, lines, fail, n,
              counts, rx, ry, proj):
    """
    Agent i's velocity when its half-planes conflict (program 2 failed at line ``fail``).

    With acceleration limits and a conflict within the reach or obstacle lines: the brake
    or program 3 on those. With the guard: the keep-right fallback within the obstacle and
    one-step lines, else program 3 on those. Otherwise RVO2's program 3. ``proj`` : scratch
    of program 3, as many rows as ``lines``.
    """
    n_reach, n_obst, n_hard = counts
    if reach_set is not None and fail < n_obst:
        if fail < n_reach:
            # Not even max_speed is reachable: shed as much speed as possible, then
            # max_speed wins (the brake point's direction, at max_speed).
            accel_r, decel_r, ref, floor = reach_set
            speed = math.sqrt(ref[i, 0] ** 2 + ref[i, 1] ** 2)
            scale = max_speed[i] / speed if speed > max_speed[i] else 1.0
            rx = ref[i, 0] * scale
            ry = ref[i, 1] * scale
        else:
            # Obstacles (and one-step lines) cannot be kept within reach: least
            # violation of those, reach lines hard, agent lines dropped.
            rx, ry = linear_program3(lines, n_hard, n_reach, fail, max_speed[i], rx, ry, proj)
        if hard_step_lines:
            stuck_out[i] = True
        return rx, ry
    if n_hard > n_obst:
        # Conflict: stay inside the obstacle and one-step lines, as close as possible
        # to the preferred velocity turned to the right (keep-right convention).
        c = math.cos(FALLBACK_TURN)
        s = math.sin(FALLBACK_TURN)
        hard_fail, hx, hy = linear_program2(
            lines, n_hard, max_speed[i], c * prefs[i, 0] + s * prefs[i, 1],
            -s * prefs[i, 0] + c * prefs[i, 1], False)
        if hard_fail == n_hard:
            return hx, hy
        # Not even the next step can be made contact-free: least violation of
        # the one-step lines, obstacle lines hard (program 3 on those lines).
        stuck_out[i] = True
        return linear_program3(lines, n_hard, n_obst, hard_fail, max_speed[i], hx, hy, proj)
    # RVO2's fallback: obstacle lines hard, least violation of the agent lines.
    return linear_program3(lines, n, n_obst, fail, max_speed[i], rx, ry, proj)


# Braking margin: contact is pushed just past the end of the step.
GUARD_SHRINK = 1.0 - 1e-9
# Rounds of proportional braking before the agents still in conflict are stopped outright.
GUARD_ROUNDS = 8


@njit(cache=True)
def _safe_fraction(dx, dy, wx, wy, combined_radius, time_step):
    """
    Largest fraction f of both velocities keeping a pair out of contact for one time step.

    d : other minus own position [m]; w : other minus own velocity [m/s].
    Every case is computed and the answer selected, without branches: whether a pair closes
    in is a coin toss the processor would mispredict, and the brake asks it of every pair.
    """
    approach = dx * wx + dy * wy
    c = dx * dx + dy * dy - combined_radius * combined_radius
    a = wx * wx + wy * wy
    disc = approach * approach - a * c
    # a > 0 wherever this is selected (approach < 0); NaN elsewhere is never chosen.
    t_contact = (-approach - math.sqrt(max(disc, 0.0))) / a
    f = max(0.0, t_contact / time_step * GUARD_SHRINK)
    # The path reaches the other disc only after the step.
    f = 1.0 if t_contact >= time_step else f
    # The relative path misses the other disc.
    f = 1.0 if disc <= 0.0 else f
    # Already overlapping and getting closer: must not approach at all.
    f = 0.0 if c <= 0.0 else f
    # Not getting closer.
    return 1.0 if approach >= 0.0 else f


@njit(cache=True)
def _closing_anyway(positions, velocities, radius, other, own, time_step):
    """Whether ``other`` (not braked by us) touches a standing ``own`` within time_step."""
    return _safe_fraction(positions[other, 0] - positions[own, 0],
                          positions[other, 1] - positions[own, 1],
                          velocities[other, 0], velocities[other, 1],
                          radius[own] + radius[other], time_step) < 1.0


@njit(cache=True)
def brake_conflicts(positions, velocities, radius, agent_nbrs, time_step, active, floor=None,
                    steered_pairs_only=False):
    """
    Last resort: brake pairs whose chosen velocities still touch within one time step.

    Only reached when even the one-step lines were infeasible for an agent. Both agents of such
    a pair are slowed to the time of contact; after GUARD_ROUNDS rounds the agents still in
    conflict are stopped, round after round, until none is (all stopped is safe for agents that
    are apart). Inactive agents are not ours to brake. Modifies ``velocities``; returns the
    number of agents braked.

    floor : (N,) or None. With acceleration limits an agent is slowed to at most ``floor[i]``
    times its velocity (``reach_floor``: slower is out of reach within the step), even when
    "stopped"; the rounds end early once none changes (a contact no reachable velocity
    avoids is left as it is).
    steered_pairs_only : only pairs of two active agents are braked. Beside a neighbour that
    is not steered here (a person), braking is no way out: the escape chose the velocity.
    """
    n = positions.shape[0]
    k_max = agent_nbrs.shape[1]
    braked = np.zeros(n, np.bool_)
    scale = np.ones(n)
    # Agents whose pairs must be looked at (again): all at first, then those braked or in a
    # conflict in the last round. A pair of two others is as it was when last looked at,
    # and then it was not in conflict.
    dirty = np.ones(n, np.bool_)
    # Each round past GUARD_ROUNDS stops at least one more agent, so this ends.
    for rnd in range(GUARD_ROUNDS + n + 1):
        scale[:] = 1.0
        conflict = False
        for i in range(n):
            for k in range(k_max):
                j = agent_nbrs[i, k]
                if j < 0:
                    break
                if not (dirty[i] or dirty[j]) or not (active[i] or active[j]):
                    continue
                if steered_pairs_only and not (active[i] and active[j]):
                    continue
                if not (active[i] and active[j]) and _closing_anyway(
                        positions, velocities, radius, i if active[j] else j,
                        j if active[j] else i, time_step):
                    # The neighbour we do not steer (a person, an observed robot) reaches
                    # this one within the step even if it stands still: braking does not
                    # help, getting away does; keep the velocity chosen.
                    continue
                f = _safe_fraction(positions[j, 0] - positions[i, 0],
                                   positions[j, 1] - positions[i, 1],
                                   velocities[j, 0] - velocities[i, 0],
                                   velocities[j, 1] - velocities[i, 1],
                                   radius[i] + radius[j], time_step)
                if f < 1.0 and (velocities[i, 0] != 0.0 or velocities[i, 1] != 0.0
                                or velocities[j, 0] != 0.0 or velocities[j, 1] != 0.0):
                    if active[i]:
                        scale[i] = min(scale[i], f)
                        conflict = True
                    if active[j]:
                        scale[j] = min(scale[j], f)
                        conflict = True
        if not conflict:
            break
        for i in range(n):
            dirty[i] = scale[i] < 1.0
        if floor is None:
            for i in range(n):
                if scale[i] < 1.0:
                    braked[i] = True
                    s = 0.0 if rnd >= GUARD_ROUNDS else scale[i]
                    velocities[i, 0] *= s
                    velocities[i, 1] *= s
        else:
            changed = False
            for i in range(n):
                s = max(0.0 if rnd >= GUARD_ROUNDS else scale[i], floor[i])
                if s < 1.0 and (velocities[i, 0] != 0.0 or velocities[i, 1] != 0.0):
                    braked[i] = True
                    changed = True
                    dirty[i] = True
                    velocities[i, 0] *= s
                    velocities[i, 1] *= s
                    # What is left of the floor after this scaling.
                    floor[i] = min(floor[i] / s, 1.0) if s > 0.0 else 1.0
            if not changed:
                break
    return int(np.sum(braked))
