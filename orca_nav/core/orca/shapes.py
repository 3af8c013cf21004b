"""
ORCA half-planes between convex polygons: robots that are not discs.

RVO2 builds a pair's velocity obstacle from two discs. For two convex shapes with their
headings held over the horizon, the same construction holds on their Minkowski sum
(van den Berg et al. 2011, section 4, for any convex shapes): agent i at p_i with shape A
(its polygon placed at its heading, relative to its centre) touches j (shape B) when
p_j - p_i lies in ``B (+) -A``, so with the relative velocity v = v_i - v_j held, the pair
touches within tau when ``v t`` enters O = (p_j - p_i) + B (+) -A for some t <= tau. The
velocity obstacle is the cone of O truncated at O / tau; it is convex (each edge of O that
faces i bounds it, the two tangent rays do the rest), so the smallest change u that takes v
to its boundary is the closest boundary point, and the half-plane is RVO2's:
``{x : (x - (v_i + share u)) . n >= 0}`` with n the outward normal there. Pairs that touch
already leave O / time_step within the step, as RVO2's discs do.

A disc in such a pair is its circumscribed regular polygon (``disc_polygon``): never smaller.
Disc pairs keep RVO2's own lines (``lines``); nothing here is on their path.

>>> import numpy as np
>>> cart = np.array([[0.45, 0.3], [-0.45, 0.3], [-0.45, -0.3], [0.45, -0.3]])
>>> out = np.empty((16, 2))
>>> n = shape_difference(cart, 4, cart, 4, out)
>>> n, out[:n].min(axis=0).round(6).tolist(), out[:n].max(axis=0).round(6).tolist()
(4, [-0.9, -0.6], [0.9, 0.6])
>>> # Two carts side by side 0.7 m apart, closing at 1 m/s: the pair's velocity obstacle.
>>> ux, uy, nx, ny = shape_line(out, n, 0.0, 0.7, 0.0, 1.0, 0.5, 10.0)
>>> round(ux, 6), round(uy, 6), round(nx, 6), round(ny, 6)
(0.0, -0.95, 0.0, -1.0)
"""

import math

import numpy as np

from .._jit import njit

# A disc in a pair with a polygon is this regular polygon around it (circumscribed: its
# edges touch the disc, so it is 1 / cos(pi / 16) = 1.019 times the radius at its corners).
DISC_SIDES = 16
# [m] Shorter edges and distances count as none (degenerate polygons, v on the boundary).
SHAPE_EPS = 1e-12
# [m] The difference of two shapes is taken on this grid: the corners of a shape turned by
# 1e-16 rad are not told apart from those of the unturned one (the hull would lose corners).
SNAP = 1e-9


@njit(cache=True)
def disc_polygon(radius, out):
    """Write the regular polygon circumscribed about a disc at the origin into out; return n."""
    r = radius / math.cos(math.pi / DISC_SIDES)
    for k in range(DISC_SIDES):
        a = 2.0 * math.pi * (k + 0.5) / DISC_SIDES
        out[k, 0] = r * math.cos(a)
        out[k, 1] = r * math.sin(a)
    return DISC_SIDES


@njit(cache=True)
def _turn(ox, oy, ax, ay, bx, by):
    """Return the cross product (a - o) x (b - o): > 0 when o, a, b turn left."""
    return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)


@njit(cache=True)
def shape_difference(b, nb, a, na, out):
    """
    Write the convex polygon B (+) -A (counter-clockwise) into out; return its vertex count.

    a, b : (>= na, 2), (>= nb, 2) convex polygons (or segments, points), any order; out has
    room for na * nb rows. The hull of every b_k - a_l (Andrew's monotone chain).
    """
    return _difference_into(b, nb, a, na, out, np.empty((3 * na * nb + 1, 2)))


@njit(cache=True)
def _difference_into(b, nb, a, na, out, work):
    """``shape_difference`` with scratch ``work`` of 3 na nb + 1 rows."""
    m = na * nb
    pts = work[:m]
    for k in range(nb):
        for m_l in range(na):
            # On a grid of SNAP: points equal but for rounding are equal, and sort together.
            pts[k * na + m_l, 0] = round((b[k, 0] - a[m_l, 0]) / SNAP) * SNAP
            pts[k * na + m_l, 1] = round((b[k, 1] - a[m_l, 1]) / SNAP) * SNAP
    # Sort by x, then y (insertion sort: a few dozen points).
    for s in range(1, m):
        x = pts[s, 0]
        y = pts[s, 1]
        t = s - 1
        while t >= 0 and (pts[t, 0] > x or (pts[t, 0] == x and pts[t, 1] > y)):
            pts[t + 1, 0] = pts[t, 0]
            pts[t + 1, 1] = pts[t, 1]
            t -= 1
        pts[t + 1, 0] = x
        pts[t + 1, 1] = y
    hull = work[m:3 * m + 1]
    h = 0
    for s in range(m):  # lower chain
        while h >= 2 and _turn(hull[h - 2, 0], hull[h - 2, 1], hull[h - 1, 0], hull[h - 1, 1],
                               pts[s, 0], pts[s, 1]) <= 0.0:
            h -= 1
        hull[h, 0] = pts[s, 0]
        hull[h, 1] = pts[s, 1]
        h += 1
    lower = h + 1
    for s in range(m - 2, -1, -1):  # upper chain
        while h >= lower and _turn(hull[h - 2, 0], hull[h - 2, 1], hull[h - 1, 0],
                                   hull[h - 1, 1], pts[s, 0], pts[s, 1]) <= 0.0:
            h -= 1
        hull[h, 0] = pts[s, 0]
        hull[h, 1] = pts[s, 1]
        h += 1
    n = max(h - 1, 1)  # the last point is the first again
    for k in range(n):
        out[k, 0] = hull[k, 0]
        out[k, 1] = hull[k, 1]
    return n


@njit(cache=True)
def _closest_on_segment(vx, vy, ax, ay, bx, by):
    """Return the point of segment ab closest to v."""
    ex = bx - ax
    ey = by - ay
    length_sq = ex * ex + ey * ey
    if length_sq <= SHAPE_EPS:
        return ax, ay
    t = min(1.0, max(0.0, ((vx - ax) * ex + (vy - ay) * ey) / length_sq))
    return ax + t * ex, ay + t * ey


@njit(cache=True)
def _polygon_exit(q, n, vx, vy):
    """
    Return (ux, uy, nx, ny): v's way to the boundary of convex polygon q (CCW) and the normal.

    u = the closest boundary point - v; n = the outward normal there (of the nearest edge when
    v is inside or on it).
    """
    best, cx, cy, bnx, bny, inside = _nearest_edge(q, n, vx, vy, False, math.inf, q[0, 0],
                                                   q[0, 1], 0.0, 0.0, n >= 3)
    return _exit(vx, vy, cx, cy, bnx, bny, inside)


@njit(cache=True)
def _nearest_edge(q, n, vx, vy, facing, best, cx, cy, bnx, bny, inside):
    """
    Return (best, cx, cy, bnx, bny, inside) updated by the edges of q (CCW) nearer to v.

    best : the squared distance so far to the point c, whose piece has outward normal bn;
    facing : only the edges that face the origin (it lies on their outer, right side);
    inside : cleared when v lies outside an edge looked at.
    """
    for k in range(n):
        ax = q[k, 0]
        ay = q[k, 1]
        bx = q[(k + 1) % n, 0]
        by = q[(k + 1) % n, 1]
        if facing and _turn(ax, ay, bx, by, 0.0, 0.0) >= 0.0:
            continue
        if _turn(ax, ay, bx, by, vx, vy) < 0.0:
            inside = False
        px, py = _closest_on_segment(vx, vy, ax, ay, bx, by)
        d = (px - vx) ** 2 + (py - vy) ** 2
        if d < best:
            best = d
            cx = px
            cy = py
            length = math.hypot(bx - ax, by - ay)
            if length > SHAPE_EPS:
                bnx = (by - ay) / length
                bny = -(bx - ax) / length
    return best, cx, cy, bnx, bny, inside


@njit(cache=True)
def _exit(vx, vy, cx, cy, nx, ny, inside):
    """Return (u, n) to boundary point c: n is the piece's normal, or (v - c) from outside."""
    ux = cx - vx
    uy = cy - vy
    dist = math.hypot(ux, uy)
    if not inside and dist > SHAPE_EPS:
        return ux, uy, -ux / dist, -uy / dist
    if nx == 0.0 and ny == 0.0:  # a degenerate piece: push straight away from the origin
        length = math.hypot(cx, cy)
        if length > SHAPE_EPS:
            nx = -cx / length
            ny = -cy / length
        else:
            nx = 1.0
    return ux, uy, nx, ny


@njit(cache=True)
def _cone_exit(q, n, vx, vy):
    """
    Return (ux, uy, nx, ny) to the boundary of the truncated cone of q (origin outside q).

    The region is every s q' with s >= 1 and q' in q: bounded by the edges of q that face the
    origin and by the two rays from the origin through q's outermost vertices, beyond them.
    """
    # The tangent vertices: the extreme angles around the direction to q's mean.
    mx = 0.0
    my = 0.0
    for k in range(n):
        mx += q[k, 0]
        my += q[k, 1]
    left = 0
    right = 0
    a_max = -math.inf
    a_min = math.inf
    for k in range(n):
        a = math.atan2(mx * q[k, 1] - my * q[k, 0], mx * q[k, 0] + my * q[k, 1])
        if a > a_max:
            a_max = a
            left = k
        if a < a_min:
            a_min = a
            right = k
    lx = q[left, 0]
    ly = q[left, 1]
    rx = q[right, 0]
    ry = q[right, 1]
    # In the cone: right of the left ray, left of the right one.
    inside = lx * vy - ly * vx <= 0.0 and rx * vy - ry * vx >= 0.0
    best = math.inf
    cx = 0.0
    cy = 0.0
    bnx = 0.0
    bny = 0.0
    # The rays, outward: from the left tangent vertex its normal points left, and the right's
    # right.
    for side in range(2):
        tx = lx if side == 0 else rx
        ty = ly if side == 0 else ry
        length = math.hypot(tx, ty)
        dx = tx / length
        dy = ty / length
        t = max(0.0, (vx - tx) * dx + (vy - ty) * dy)
        px = tx + t * dx
        py = ty + t * dy
        d = (px - vx) ** 2 + (py - vy) ** 2
        if d < best:
            best = d
            cx = px
            cy = py
            bnx = -dy if side == 0 else dy
            bny = dx if side == 0 else -dx
    # The edges that face the origin.
    best, cx, cy, bnx, bny, inside = _nearest_edge(q, n, vx, vy, True, best, cx, cy, bnx, bny,
                                                   inside)
    return _exit(vx, vy, cx, cy, bnx, bny, inside)


@njit(cache=True)
def shape_line(k_poly, nk, px, py, vx, vy, inv_tau, inv_dt):
    """
    Return (ux, uy, nx, ny) of the pair whose shapes' difference is k_poly (``shape_difference``).

    (px, py) = p_j - p_i, (vx, vy) = v_i - v_j, inv_tau = 1 / time horizon, inv_dt =
    1 / time step. u is the smallest change of the relative velocity that leaves the velocity
    obstacle (truncated at tau), n its outward normal there; when the shapes overlap already,
    the change that separates them within the step. Agent i's half-plane: the velocities x
    with (x - (v_i + share u)) . n >= 0.
    """
    return _line_into(k_poly, nk, px, py, vx, vy, inv_tau, inv_dt, np.empty((nk, 2)))


@njit(cache=True)
def _line_into(k_poly, nk, px, py, vx, vy, inv_tau, inv_dt, q):
    """``shape_line`` with scratch q of nk rows."""
    overlap = nk >= 3
    for k in range(nk):
        q[k, 0] = px + k_poly[k, 0]
        q[k, 1] = py + k_poly[k, 1]
    for k in range(nk):
        if _turn(q[k, 0], q[k, 1], q[(k + 1) % nk, 0], q[(k + 1) % nk, 1], 0.0, 0.0) < 0.0:
            overlap = False
    scale = inv_dt if overlap else inv_tau
    for k in range(nk):
        q[k, 0] *= scale
        q[k, 1] *= scale
    if overlap:
        return _polygon_exit(q, nk, vx, vy)
    return _cone_exit(q, nk, vx, vy)


@njit(cache=True)
def offset_polygon(q, n, rho, out):
    """
    Write convex polygon q (CCW, n vertices) grown by rho >= 0 into out; return its count.

    Each edge moves out by rho; each corner's arc of radius rho is replaced by the two
    segments that touch it (so the result holds q (+) disc(rho) and exceeds it by at most
    rho (1 / cos(a / 4) - 1) at a corner turning by a: 8 % at a right angle). A point (n 1)
    or a segment (n 2) becomes a polygon around it. out has room for 4 n + DISC_SIDES rows.
    """
    if rho <= 0.0:
        for k in range(n):
            out[k, 0] = q[k, 0]
            out[k, 1] = q[k, 1]
        return n
    if n == 1:
        return _circumscribed(q[0, 0], q[0, 1], rho, out)
    m = 0
    for k in range(n):
        # The outward normals of the edges into and out of vertex k (a segment's two sides).
        px = q[(k - 1) % n, 0]
        py = q[(k - 1) % n, 1]
        cx = q[k, 0]
        cy = q[k, 1]
        nx_ = q[(k + 1) % n, 0]
        ny_ = q[(k + 1) % n, 1]
        a_in = math.atan2(-(cx - px), cy - py)
        a_out = math.atan2(-(nx_ - cx), ny_ - cy)
        turn = (a_out - a_in) % (2.0 * math.pi)
        if n == 2:
            turn = math.pi
        pieces = 1 if turn < 1e-9 else (2 if turn <= 0.5 * math.pi else 4)
        step = turn / pieces
        reach = rho / math.cos(0.5 * step)
        for s in range(pieces):
            a = a_in + (s + 0.5) * step
            out[m, 0] = cx + reach * math.cos(a)
            out[m, 1] = cy + reach * math.sin(a)
            m += 1
    return m


@njit(cache=True)
def _circumscribed(cx, cy, rho, out):
    """Write the regular DISC_SIDES-gon circumscribed about disc (c, rho); return its count."""
    n = disc_polygon(rho, out)
    for k in range(n):
        out[k, 0] += cx
        out[k, 1] += cy
    return n


@njit(cache=True)
def pair_shape_line(a, na, b, nb, rho, px, py, vx, vy, inv_tau, inv_dt, scratch=None):
    """
    Return (ux, uy, nx, ny) for agent i of shape a (na vertices) and neighbour j of shape b.

    a, b : the shapes' polygons relative to each agent's position, at their headings (one
    vertex at the origin: a disc's centre); rho [m] : what both grow by (a disc's radius,
    paddings, margins); scratch : None or (>= ``scratch_rows(na * nb)``, 2) work rows (a
    solver call allocates them once). Otherwise as ``shape_line``.
    """
    m = na * nb
    if scratch is None:
        scratch = np.empty((scratch_rows(m), 2))
    k_poly = scratch[:m]
    nk = _difference_into(b, nb, a, na, k_poly, scratch[m:4 * m + 1])
    rest = scratch[4 * m + 1:]
    grown = rest[:4 * nk + DISC_SIDES]
    ng = offset_polygon(k_poly, nk, rho, grown)
    return _line_into(grown, ng, px, py, vx, vy, inv_tau, inv_dt,
                      rest[4 * nk + DISC_SIDES:8 * nk + 2 * DISC_SIDES])


@njit(cache=True)
def scratch_rows(m):
    """Return the work rows ``pair_shape_line`` needs for shapes of na nb = m vertex pairs."""
    return 4 * m + 1 + 8 * m + 2 * DISC_SIDES
