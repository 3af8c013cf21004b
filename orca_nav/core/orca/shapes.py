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
# A corner that turns a right angle but for rounding is grown in 2 pieces, not 4.
RIGHT_TURN_TOLERANCE = 1e-9


@njit(cache=True)
def disc_polygon(radius, out):
    """Write the regular polygon circumscribed about a disc at the origin into out; return n."""
    r = radius / math.cos(math.pi / DISC_SIDES)
    for k in range(DISC_SIDES):
        a = 2.0 * math.pi * (k + 0.5) / DISC_SIDES
        out[k, 0] = r * math.cos(a)
        out[k, 1] = r * math.sin(a)
    return DISC_SIDES


@njit(cache=True, inline='always')
def _turn(ox, oy, ax, ay, bx, by):
    """Return the cross product (a - o) x (b - o): > 0 when o, a, b turn left."""
    return (ax - ox) * (by - oy) - (ay - oy) * (bx - ox)


@njit(cache=True, inline='always')
def shape_difference(b, nb, a, na, out):
    """
    Write the convex polygon B (+) -A (counter-clockwise) into out; return its vertex count.

    a, b : (>= na, 2), (>= nb, 2) convex polygons either way round (or segments, points); out
    has room for na + nb rows. Each polygon taken counter-clockwise from its lowest vertex
    (least y, then x), the sum's edges are theirs merged by direction (O(na + nb); de Berg
    et al., Computational Geometry, section 13.3); parallel edges become one, and vertices
    equal but for SHAPE_EPS one.
    """
    sb = _orientation(b, nb)
    sa = _orientation(a, na)
    ib = _lowest(b, nb, 1.0)
    ia = _lowest(a, na, -1.0)  # of -A: A's highest
    i = 0
    j = 0
    n = 0
    while i < nb or j < na:
        kb = (ib + sb * i) % nb
        ka = (ia + sa * j) % na
        x = b[kb, 0] - a[ka, 0]
        y = b[kb, 1] - a[ka, 1]
        if n == 0 or abs(x - out[n - 1, 0]) > SHAPE_EPS or abs(y - out[n - 1, 1]) > SHAPE_EPS:
            out[n, 0] = x
            out[n, 1] = y
            n += 1
        if i == nb:
            j += 1
            continue
        if j == na:
            i += 1
            continue
        kb2 = (ib + sb * (i + 1)) % nb
        ka2 = (ia + sa * (j + 1)) % na
        ebx = b[kb2, 0] - b[kb, 0]
        eby = b[kb2, 1] - b[kb, 1]
        eax = a[ka, 0] - a[ka2, 0]  # -A's edge
        eay = a[ka, 1] - a[ka2, 1]
        cross = ebx * eay - eby * eax
        if cross >= 0.0:
            i += 1
        if cross <= 0.0:
            j += 1
    while n > 1 and (abs(out[n - 1, 0] - out[0, 0]) <= SHAPE_EPS
                     and abs(out[n - 1, 1] - out[0, 1]) <= SHAPE_EPS):
        n -= 1
    return n


@njit(cache=True, inline='always')
def _orientation(q, n):
    """Return 1 if polygon q (n vertices) is counter-clockwise (or degenerate), -1 if not."""
    area = 0.0
    for k in range(n):
        area += q[k, 0] * q[(k + 1) % n, 1] - q[(k + 1) % n, 0] * q[k, 1]
    return -1 if area < 0.0 else 1


@njit(cache=True, inline='always')
def _lowest(q, n, sign):
    """Return the index of q's lowest vertex (least y, then x) of sign q (-1: of -q)."""
    best = 0
    for k in range(1, n):
        dy = sign * (q[k, 1] - q[best, 1])
        if dy < 0.0 or (dy == 0.0 and sign * (q[k, 0] - q[best, 0]) < 0.0):
            best = k
    return best


@njit(cache=True, inline='always')
def _closest_on_segment(vx, vy, ax, ay, bx, by):
    """Return the point of segment ab closest to v."""
    ex = bx - ax
    ey = by - ay
    length_sq = ex * ex + ey * ey
    if length_sq <= SHAPE_EPS:
        return ax, ay
    t = min(1.0, max(0.0, ((vx - ax) * ex + (vy - ay) * ey) / length_sq))
    return ax + t * ex, ay + t * ey


@njit(cache=True, inline='always')
def _polygon_exit(q, n, vx, vy):
    """
    Return (ux, uy, nx, ny): v's way to the boundary of convex polygon q (CCW) and the normal.

    u = the closest boundary point - v; n = the outward normal there (of the nearest edge when
    v is inside or on it).
    """
    best, cx, cy, bnx, bny, inside = _nearest_edge(q, n, vx, vy, False, math.inf, q[0, 0],
                                                   q[0, 1], 0.0, 0.0, n >= 3)
    return _exit(vx, vy, cx, cy, bnx, bny, inside)


@njit(cache=True, inline='always')
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
            length = math.sqrt((bx - ax) ** 2 + (by - ay) ** 2)
            if length > SHAPE_EPS:
                bnx = (by - ay) / length
                bny = -(bx - ax) / length
    return best, cx, cy, bnx, bny, inside


@njit(cache=True, inline='always')
def _exit(vx, vy, cx, cy, nx, ny, inside):
    """Return (u, n) to boundary point c: n is the piece's normal, or (v - c) from outside."""
    ux = cx - vx
    uy = cy - vy
    dist = math.sqrt(ux * ux + uy * uy)
    if not inside and dist > SHAPE_EPS:
        return ux, uy, -ux / dist, -uy / dist
    if nx == 0.0 and ny == 0.0:  # a degenerate piece: push straight away from the origin
        length = math.sqrt(cx * cx + cy * cy)
        if length > SHAPE_EPS:
            nx = -cx / length
            ny = -cy / length
        else:
            nx = 1.0
    return ux, uy, nx, ny


@njit(cache=True, inline='always')
def _cone_exit(q, n, vx, vy):
    """
    Return (ux, uy, nx, ny) to the boundary of the truncated cone of q (origin outside q).

    The region is every s q' with s >= 1 and q' in q: bounded by the edges of q that face the
    origin and by the two rays from the origin through q's outermost vertices, beyond them.
    """
    # The tangent vertices: q lies within a half turn seen from the origin, where "b is left
    # of a" (a x b > 0) orders directions; the first of equals is kept.
    left = 0
    right = 0
    for k in range(1, n):
        if q[left, 0] * q[k, 1] - q[left, 1] * q[k, 0] > 0.0:
            left = k
        if q[right, 0] * q[k, 1] - q[right, 1] * q[k, 0] < 0.0:
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
        length = math.sqrt(tx * tx + ty * ty)
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


@njit(cache=True, inline='always')
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


@njit(cache=True, inline='always')
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
    # The outward normal of the edge into vertex 0 (a segment's other side).
    ix, iy = _edge_normal(q[n - 1, 0], q[n - 1, 1], q[0, 0], q[0, 1])
    for k in range(n):
        cx = q[k, 0]
        cy = q[k, 1]
        if n == 2:
            ox = -ix
            oy = -iy
        else:
            ox, oy = _edge_normal(cx, cy, q[(k + 1) % n, 0], q[(k + 1) % n, 1])
        dot = ix * ox + iy * oy
        cross = ix * oy - iy * ox
        if dot > 0.0 and abs(cross) < 1e-9:  # no turn: one piece
            out[m, 0] = cx + rho * ox
            out[m, 1] = cy + rho * oy
            m += 1
        else:
            # The corner's arc in 2 pieces (a turn up to a right angle) or 4, each replaced by
            # the tangents at its middle: directions by halving the turn, no trigonometry.
            mx, my = _half_turn(ix, iy, ox, oy, dot)
            if dot >= -RIGHT_TURN_TOLERANCE:
                m = _tangent_pieces(out, m, cx, cy, rho, ix, iy, mx, my, ox, oy, 1)
            else:
                m = _tangent_pieces(out, m, cx, cy, rho, ix, iy, mx, my, ox, oy, 2)
        ix = ox
        iy = oy
    return m


@njit(cache=True, inline='always')
def _edge_normal(ax, ay, bx, by):
    """Return the unit outward normal of edge ab of a counter-clockwise polygon (its right)."""
    ex = bx - ax
    ey = by - ay
    length = math.sqrt(ex * ex + ey * ey)
    if length <= SHAPE_EPS:
        return 0.0, 0.0
    return ey / length, -ex / length


@njit(cache=True, inline='always')
def _unit_sum(ax, ay, bx, by):
    """Return (a + b) / |a + b| for unit a, b less than a half turn apart."""
    x = ax + bx
    y = ay + by
    length = math.sqrt(x * x + y * y)
    if length <= SHAPE_EPS:  # a degenerate edge's missing normal
        return ax, ay
    return x / length, y / length


@njit(cache=True, inline='always')
def _half_turn(ix, iy, ox, oy, dot):
    """Return the unit direction halfway from unit i to unit o, turning counter-clockwise."""
    if dot >= 0.0:
        return _unit_sum(ix, iy, ox, oy)
    # Near a half turn i + o vanishes: halve the turn between i turned left and o turned right.
    return _unit_sum(-iy, ix, oy, -ox)


@njit(cache=True, inline='always')
def _tangent_pieces(out, m, cx, cy, rho, ix, iy, mx, my, ox, oy, halvings):
    """
    Write the 2 halvings tangent points' vertices of the arc of c from i to o; return m.

    mx, my : halfway from i to o. Each piece's vertex lies along its middle direction, at
    rho / cos(half a piece's turn).
    """
    ax, ay = _unit_sum(ix, iy, mx, my)  # a quarter of the turn
    bx, by = _unit_sum(mx, my, ox, oy)  # three quarters
    if halvings == 1:
        reach = rho / (ax * ix + ay * iy)
        out[m, 0] = cx + reach * ax
        out[m, 1] = cy + reach * ay
        out[m + 1, 0] = cx + reach * bx
        out[m + 1, 1] = cy + reach * by
        return m + 2
    d = (_unit_sum(ix, iy, ax, ay), _unit_sum(ax, ay, mx, my), _unit_sum(mx, my, bx, by),
         _unit_sum(bx, by, ox, oy))
    reach = rho / (d[0][0] * ix + d[0][1] * iy)
    for s in range(4):
        out[m + s, 0] = cx + reach * d[s][0]
        out[m + s, 1] = cy + reach * d[s][1]
    return m + 4


@njit(cache=True, inline='always')
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
    paddings, margins); scratch : None or (>= ``scratch_rows(na + nb)``, 2) work rows (a
    solver call allocates them once). Otherwise as ``shape_line``.
    """
    if scratch is None:
        scratch = np.empty((scratch_rows(na + nb), 2))
    k_poly = scratch[:na + nb]
    nk = shape_difference(b, nb, a, na, k_poly)
    return grown_shape_line(k_poly, nk, rho, px, py, vx, vy, inv_tau, inv_dt,
                            scratch[na + nb:])


@njit(cache=True, inline='always')
def grown_shape_line(k_poly, nk, rho, px, py, vx, vy, inv_tau, inv_dt, scratch):
    """
    ``shape_line`` of difference k_poly (nk vertices) grown by rho [m] (``offset_polygon``).

    scratch : (>= 8 nk + 2 DISC_SIDES, 2) work rows.
    """
    grown = scratch[:4 * nk + DISC_SIDES]
    ng = offset_polygon(k_poly, nk, rho, grown)
    return _line_into(grown, ng, px, py, vx, vy, inv_tau, inv_dt,
                      scratch[4 * nk + DISC_SIDES:8 * nk + 2 * DISC_SIDES])


@njit(cache=True)
def scratch_rows(m):
    """Return the work rows ``pair_shape_line`` needs for shapes of na + nb = m vertices."""
    return 9 * m + 2 * DISC_SIDES
