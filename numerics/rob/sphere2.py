r"""The exact geodesic Lipschitz constant on S² (d = 3): the small-circle arrangement, decided exactly.

Kinks are the circles C_j = {x ∈ S² : w_j·x + b_j = 0} of the canonical form (|b_j| < ‖w_j‖, rational).
On the open cell with pattern σ the gradient is the rational vector g_σ and the squared tangential norm is
h_σ(x) = ‖g_σ‖² − (g_σ·x)². Its sup over a closed cell is attained (i) at a point where the great circle
G_σ = {g_σ·x = 0} meets the cell (value ‖g_σ‖²), or else on the boundary: (ii) at a vertex (a point on two
or more circles), or (iii) at a critical point of g_σ·x restricted to a circle C_j, x = c_j ± r_j P g/‖P g‖
(c_j the centre, r_j the radius, P the projection onto w_j^⊥), or (iv) anywhere on C_j when P g = 0 (then
g·x is constant there). A zero of g·x inside an edge is a point of G_σ: if G_σ crosses the edge it enters
the cell (case i), and if it touches it, the point is a critical point (case iii).

So every circle is cut at its vertices into edges (an isolated circle is ONE edge with no endpoints: there
is no seam), each edge has two side cells, and the candidates are the endpoints and the critical points
inside each edge, for both sides; then, for cells in decreasing order of ‖g_σ‖², the great-circle test
builds the arrangement induced on G_σ and asks whether one of its edges has pattern σ.

Every decision is made in float64 interval arithmetic (``numerics.rob.interval``) and, where an
interval cannot decide, exactly: vertices are p ± √D q with rational p, q, D (:class:`~numerics.rob.exact.QPoint`),
and signs in Q(√D₁, √D₂) are decided by :func:`~numerics.rob.exact.sign2`. Cyclic order along a
circle comes from float angles with rigorous error bounds; points whose angles cannot be separated are
ordered by the exact sign of (P₁ × P₂)·w, and equal points (many circles through one point) are merged.
Tangent circles meet in one point and flip no sign. The maximum is finally compared exactly among all
candidates whose enclosures overlap the best, so the value returned is exact (an element a + b√D).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from numerics.rob import exact as E
from numerics.rob.interval import Interval, U, Undecided, from_fractions, matmul, stack

__all__ = ["lipschitz_s2", "S2Result", "circle_arrangement"]

F0 = Fraction(0)


def _cross_iv(a: Interval, b: Interval) -> Interval:
    """Row-wise cross product of interval arrays (…, 3)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def _dot_iv(a: Interval, b: Interval) -> Interval:
    return (a * b).sum(axis=-1)


def _unit_frame(w):
    """Float vectors e1, e2 nearly orthonormal and ⊥ w (only used to order points by angle)."""
    wf = np.array([float(x) for x in w])
    wf = wf / np.linalg.norm(wf)
    i = int(np.argmin(np.abs(wf)))
    e = np.zeros(3)
    e[i] = 1.0
    e1 = np.cross(wf, e)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(wf, e1)
    e2 /= np.linalg.norm(e2)
    return e1, e2


def _angles(P: Interval, e1, e2):
    """Float angles of points P (…, 3) in the frame (e1, e2) and rigorous error bounds."""
    X, Y = _dot_iv(P, Interval(e1)), _dot_iv(P, Interval(e2))
    phi = np.arctan2(Y.m, X.m)
    lx = np.maximum(np.abs(X.m) - X.r, 0.0)
    ly = np.maximum(np.abs(Y.m) - Y.r, 0.0)
    rho = np.sqrt(lx * lx + ly * ly) * (1 - 4 * U)
    pos = rho > 0
    err = np.where(pos, (X.r + Y.r) / np.where(pos, rho, 1.0) * (1 + 1e-9), np.inf) + 16 * U * (np.abs(phi) + 1)
    return phi, err


# --------------------------------------------------------------------------------------- the exact pair
def _pair_exact(w1, b1, w2, b2):
    """Exact intersection of the circles w1·x + b1 = 0, w2·x + b2 = 0 on S²: (kind, QPoints)."""
    h1, h2 = -b1, -b2
    g11, g12, g22 = E.dot(w1, w1), E.dot(w1, w2), E.dot(w2, w2)
    dl = g11 * g22 - g12 * g12
    if dl == 0:
        return "parallel", []
    disc = dl - (h1 * h1 * g22 - 2 * h1 * h2 * g12 + h2 * h2 * g11)
    if disc < 0:
        return "none", []
    al, be = (h1 * g22 - h2 * g12) / dl, (h2 * g11 - h1 * g12) / dl
    p0 = E.add(E.scale(al, w1), E.scale(be, w2))
    e = E.cross(w1, w2)
    if disc == 0:
        return "tangent", [E.QPoint(p0, e, F0, 1)]
    D = disc / (dl * dl)
    return "two", [E.QPoint(p0, e, D, 1), E.QPoint(p0, e, D, -1)]


@dataclass
class _Vertex:
    k: int            # the other circle (index into the circle's ``others``)
    s: int            # +1 / −1 for the two points of a crossing pair, 0 for a tangency
    point: Interval   # (3,) enclosure
    exact: object     # a callable returning the exact QPoint
    phi: float = 0.0
    err: float = 0.0
    dirn: int = 0     # sign of d/dφ (w_k·x + b_k) at the vertex (crossings only)


@dataclass
class CircleArrangement:
    """The arrangement induced on one circle: distinct vertex positions in cyclic order, and per edge
    (position e → position e+1) the pattern of the other planes. ``positions`` is a list of vertex lists."""

    w: tuple
    b: Fraction
    others: np.ndarray
    positions: list
    phi: np.ndarray
    err: np.ndarray
    patterns: np.ndarray  # (E, len(others)) bool; E = max(1, len(positions))
    coincident: list = field(default_factory=list)  # others lying in the same plane (great-circle tests)
    e1: np.ndarray | None = None
    e2: np.ndarray | None = None

    @property
    def E(self) -> int:
        return max(1, len(self.positions))

    def exact_point(self, pos: int):
        return self.positions[pos][0].exact()

    def locate(self, point: Interval, exact_point) -> int | None:
        """Index e of the open edge (position e → e+1) containing a point of the circle; None if the point
        is a vertex. Decided by angles where their error bounds allow it, else exactly."""
        P = len(self.positions)
        if P == 0:
            return 0
        phi, err = _angles(point.reshape(1, 3), self.e1, self.e2)
        phi, err = float(phi[0]), float(err[0])
        rel = self._rel()
        x = (phi - self.phi[0]) % (2 * math.pi)
        dist = np.minimum(np.abs(x - rel), 2 * math.pi - np.abs(x - rel))
        near = np.flatnonzero(dist <= (err + self.err) * (1 + 1e-12) + 1e-300)
        if len(near) == 0:
            return (int(np.searchsorted(rel, x, side="right")) - 1) % P
        if not np.isfinite(err) or err > 0.5 or len(near) == P:
            return self._locate_exact(exact_point())
        # the near positions form one cyclic run; order X among them exactly
        run = sorted(near.tolist(), key=lambda i: (i - near[0]) % P)
        if len(run) > 1 and any((b - a) % P != 1 for a, b in zip(run, run[1:], strict=False)):
            return self._locate_exact(exact_point())
        X = exact_point()
        after = None
        for i in run:
            c = _cmp_exact(self.w, self.exact_point(i), X)
            if c == 0:
                return None
            if c > 0:
                after = i
        return after if after is not None else (run[0] - 1) % P

    def locate_many(self, X: Interval) -> np.ndarray:
        """Vectorised :meth:`locate`: edge indices, −2 where the angles cannot decide (call :meth:`locate`)."""
        P = len(self.positions)
        if P == 0:  # a circle no other circle meets is ONE edge with no endpoints: every point is inside
            return np.zeros(X.shape[0], int)
        phi, err = _angles(X, self.e1, self.e2)
        if not np.all(np.isfinite(self.err)):
            return np.full(len(phi), -2)
        rel = self._rel()
        x = (phi - self.phi[0]) % (2 * math.pi)
        d = np.abs(x[:, None] - rel[None, :])
        d = np.minimum(d, 2 * math.pi - d)
        near = (d <= (err[:, None] + self.err[None, :]) * (1 + 1e-12) + 1e-300).any(axis=1) | ~np.isfinite(err)
        out = (np.searchsorted(rel, x, side="right") - 1) % P
        out[near] = -2
        return out

    def _rel(self) -> np.ndarray:
        """Position angles relative to the first position, made monotone: positions ordered exactly inside
        a cluster may disagree with their float angles by an ulp (and wrap to ≈ 2π); any query that close
        to a position is decided exactly anyway, so clamping them keeps ``searchsorted`` valid."""
        rel = (self.phi - self.phi[0]) % (2 * math.pi)
        wrap = rel > 2 * math.pi - (self.err + self.err[0]) * 2 - 1e-12
        rel = np.where(wrap & (np.arange(len(rel)) > 0), 0.0, rel)
        rel[0] = 0.0
        return np.maximum.accumulate(rel)

    def _locate_exact(self, X):
        for i in range(len(self.positions)):
            A, B = self.exact_point(i), self.exact_point((i + 1) % len(self.positions))
            if _cmp_exact(self.w, A, X) == 0:
                return None
            if _between(self.w, A, X, B, len(self.positions) == 1):
                return i
        raise AssertionError("a point of the circle lies on no edge")


def _between(w, A, X, B, single: bool) -> bool:
    """Is X strictly inside the ccw arc from A to B (the whole circle minus A when A = B)?"""
    if single:
        return True
    # ccw angle from A: compare via the half-plane of the chord direction, using exact cross signs
    cAX, cAB, cXB = _cmp_exact(w, A, X), _cmp_exact(w, A, B), _cmp_exact(w, X, B)
    if cAB > 0:      # the arc A→B is shorter than π: X inside iff X is ccw of A and B is ccw of X
        return cAX > 0 and cXB > 0
    if cAB < 0:      # longer than π: X inside unless it is in the short arc B→A
        return not (cAX <= 0 and cXB <= 0)
    # A and B antipodal on the circle: the arc is a half circle; X inside iff X is ccw of A (cAX > 0)
    return cAX > 0


def _cmp_exact(w, P1, P2) -> int:
    """sign((P1 × P2)·w): +1 if P2 lies (a little) counter-clockwise of P1 about w, 0 if they coincide."""
    terms = [(P1.p, P2.p, 1, 0, 0), (P1.p, P2.q, P2.s, 0, 1), (P1.q, P2.p, P1.s, 1, 0), (P1.q, P2.q, P1.s * P2.s, 1, 1)]
    co = {}
    for a, b, s, i, j in terms:
        if (i and not P1.D) or (j and not P2.D):
            continue
        co[(i, j)] = co.get((i, j), F0) + s * E.dot(E.cross(a, b), w)
    return E.sign2(co.get((0, 0), F0), co.get((1, 0), F0), co.get((0, 1), F0), co.get((1, 1), F0), P1.D, P2.D)


def circle_arrangement(w, b, Wq, bq, Wiv: Interval, biv: Interval, others: np.ndarray, *,
                       great: bool = False) -> CircleArrangement:
    """The arrangement induced on C = {x ∈ S² : w·x + b = 0} by the planes ``others`` (indices into Wq)."""
    K = len(others)
    wiv = from_fractions(list(w))
    nw2 = E.dot(w, w)
    h1 = from_fractions([-b])[0]
    e1, e2 = _unit_frame(w)
    verts: list[_Vertex] = []
    const_sign = np.zeros(K, np.int8)  # sign of plane k on C when it does not cross C (0: crosses C)
    coincident = []
    if K:
        n2, hk = Wiv[others], -biv[others]
        g11 = _dot_iv(wiv, wiv)
        g12 = n2 @ wiv
        g22 = _dot_iv(n2, n2)
        dl = g11 * g22 - g12.square()
        disc = dl - (h1 * h1 * g22 - 2 * h1 * hk * g12 + hk.square() * g11)
        sdl, sdisc = dl.sign(), disc.sign()
        # the centre rule: sign(w_k·c + b_k), c = −b w/‖w‖², times ‖w‖² > 0
        cen = (-biv[others]) * (-g11) + h1 * g12  # = b_k‖w‖² − b (w_k·w)
        scen = cen.sign()
        good = (sdl > 0) & (sdisc != 0)
        cross = _cross_iv(n2, stack([wiv] * K))  # n_k × w, for crossing directions
        # the certified two-point pairs, vectorised
        two = np.flatnonzero(good & (sdisc > 0))
        if len(two):
            dl2 = dl[two]
            al = (h1 * g22[two] - hk[two] * g12[two]) / dl2
            be = (hk[two] * g11 - h1 * g12[two]) / dl2
            p0 = stack([al * wiv[i] + be * n2[two][:, i] for i in range(3)], axis=-1)
            e = _cross_iv(stack([wiv] * len(two)), n2[two])
            s = disc[two].sqrt() / dl2
            for sg in (1, -1):
                P = stack([p0[:, i] + (s * e[:, i] if sg > 0 else -(s * e[:, i])) for i in range(3)], axis=-1)
                dirs = _dot_iv(P, cross[two]).sign()  # crossing directions, vectorised (0: decided exactly below)
                for r, k in enumerate(two):
                    vx = _Vertex(int(k), sg, Interval(P.m[r], P.r[r]), _lazy_point(w, b, Wq, bq, others[k], sg))
                    vx.dirn = int(dirs[r])
                    verts.append(vx)
        for k in np.flatnonzero(~good):  # exact decision for this pair
            kind, pts = _pair_exact(w, b, Wq[others[k]], bq[others[k]])
            if kind == "two":
                for sg, qp in zip((1, -1), pts, strict=True):
                    verts.append(_Vertex(int(k), sg, _qp_iv(qp), (lambda qp=qp: qp)))
            elif kind == "tangent":
                verts.append(_Vertex(int(k), 0, _qp_iv(pts[0]), (lambda qp=pts[0]: qp)))
        crosses = {v.k for v in verts if v.s != 0}
        for k in range(K):
            if k in crosses:
                continue
            sg = int(scen[k])
            if sg == 0:
                wk, bk = Wq[others[k]], bq[others[k]]
                sg = E.sgn(bk * nw2 - b * E.dot(wk, w))
                if sg == 0:
                    if not great:
                        raise AssertionError("two distinct kink planes coincide on a circle")
                    coincident.append(int(others[k]))
                    sg = 0
            const_sign[k] = sg
        # crossing directions
        for v in verts:
            if v.s == 0 or v.dirn != 0:
                continue
            v.dirn = int(_dot_iv(v.point, cross[v.k]).sign())
            if v.dirn == 0:
                qp = v.exact()
                v.dirn = qp.dot(E.cross(Wq[others[v.k]], w)).sign()
                if v.dirn == 0:
                    raise AssertionError("a transversal crossing with zero derivative")
    positions, phi, err = _order(verts, w, e1, e2)
    P = len(positions)
    Ecount = max(1, P)
    pat = np.zeros((Ecount, K), bool)
    for k in range(K):
        if const_sign[k] > 0:
            pat[:, k] = True
    if P:
        posof = {}
        for i, grp in enumerate(positions):
            for v in grp:
                posof[(v.k, v.s)] = (i, v.dirn)
        ks = np.array(sorted({v.k for v in verts if v.s != 0}), int)
        if len(ks):
            i1 = np.array([posof[(k, 1)][0] for k in ks])
            d1 = np.array([posof[(k, 1)][1] for k in ks])
            i2 = np.array([posof[(k, -1)][0] for k in ks])
            i_in, i_out = np.where(d1 > 0, i1, i2), np.where(d1 > 0, i2, i1)
            span = (i_out - i_in) % P
            eidx = np.arange(Ecount)[:, None]
            pat[:, ks] = ((eidx - i_in[None, :]) % P) < span[None, :]
    return CircleArrangement(tuple(w), b, others, positions, phi, err, pat, coincident, e1, e2)


def _lazy_point(w, b, Wq, bq, k, sg):
    def make():
        kind, pts = _pair_exact(w, b, Wq[k], bq[k])
        assert kind == "two", kind
        return pts[0] if sg > 0 else pts[1]
    return make


def _qp_iv(qp: E.QPoint) -> Interval:
    """Float enclosure of the point p ± √D q, evaluated in arb balls (D may be far outside the float range)."""
    if not qp.D:
        return from_fractions(list(qp.p))
    from flint import arb, ctx

    old = ctx.prec
    ctx.prec = 128
    try:
        rD = (arb(qp.D.numerator) / arb(qp.D.denominator)).sqrt() * qp.s
        xs = [arb(p.numerator) / arb(p.denominator) + rD * (arb(q.numerator) / arb(q.denominator))
              for p, q in zip(qp.p, qp.q, strict=True)]
        try:
            mid = np.array([float(x.mid()) for x in xs])
            rad = np.array([float(x.rad()) for x in xs]) + np.spacing(np.abs(mid)) * 2
        except OverflowError:  # an enclosure too wide for float64: no decision is taken from it
            mid, rad = np.zeros(len(xs)), np.full(len(xs), np.inf)
        if not (np.all(np.isfinite(mid)) and np.all(np.isfinite(rad))):
            mid, rad = np.zeros(len(xs)), np.full(len(xs), np.inf)
    finally:
        ctx.prec = old
    return Interval(mid, rad)


def _order(verts, w, e1, e2):
    """Distinct vertex positions in cyclic order (certified), each a list of coinciding vertices."""
    if not verts:
        return [], np.zeros(0), np.zeros(0)
    P = stack([v.point for v in verts])
    phi, err = _angles(P, e1, e2)
    for v, f, e in zip(verts, phi, err, strict=True):
        v.phi, v.err = float(f), float(e)
    order = np.argsort(phi, kind="stable")
    n = len(order)
    ph, er = phi[order], err[order]
    gaps = np.r_[np.diff(ph), ph[0] + 2 * math.pi - ph[-1]]
    sure = gaps > (er + np.roll(er, -1)) * (1 + 1e-12) + 1e-300
    if n == 1:
        return [[verts[order[0]]]], ph, er
    if not sure.any() or not np.isfinite(er).all() or er.max() > 0.5:
        return _order_exact(verts, w, e1, e2)
    start = (int(np.flatnonzero(sure)[0]) + 1) % n
    idx = np.r_[order[start:], order[:start]]
    sure = np.r_[sure[start:], sure[:start]]
    positions, cluster = [], [verts[idx[0]]]
    for i in range(1, n + 1):
        if i < n and not sure[i - 1]:
            cluster.append(verts[idx[i]])
            continue
        positions.extend(_resolve_cluster(cluster, w))
        if i < n:
            cluster = [verts[idx[i]]]
    pphi = np.array([g[0].phi for g in positions])
    perr = np.array([max(v.err for v in g) for g in positions])
    return positions, pphi, perr


def _resolve_cluster(cluster, w):
    """Exactly order a run of vertices whose angles the filter could not separate (span ≪ π)."""
    if len(cluster) == 1:
        return [cluster]
    import functools

    pts = {id(v): v.exact() for v in cluster}
    key = functools.cmp_to_key(lambda a, b: -_cmp_exact(w, pts[id(a)], pts[id(b)]))
    cl = sorted(cluster, key=key)
    out = [[cl[0]]]
    for v in cl[1:]:
        if _cmp_exact(w, pts[id(out[-1][0])], pts[id(v)]) == 0:
            out[-1].append(v)
        else:
            out.append([v])
    return out


def _order_exact(verts, w, e1, e2):
    """Fully exact cyclic order (used when the float filter cannot find one certified gap)."""
    import functools

    ref1 = E.cross(w, tuple(Fraction(int(i == int(np.argmin(np.abs([float(x) for x in w]))))) for i in range(3)))
    ref2 = E.cross(w, ref1)
    pts = {id(v): v.exact() for v in verts}

    def half(qp):
        X, Y = qp.dot(ref1), qp.dot(ref2)
        sy, sx = Y.sign(), X.sign()
        return 0 if (sy > 0 or (sy == 0 and sx > 0)) else 1

    def cmp(a, b):
        pa, pb = pts[id(a)], pts[id(b)]
        ha, hb = half(pa), half(pb)
        if ha != hb:
            return ha - hb
        return -_cmp_exact(w, pa, pb)

    cl = sorted(verts, key=functools.cmp_to_key(cmp))
    out = [[cl[0]]]
    for v in cl[1:]:
        if cmp(out[-1][0], v) == 0:
            out[-1].append(v)
        else:
            out.append([v])
    pphi = np.array([g[0].phi for g in out])
    perr = np.array([max(v.err for v in g) for g in out])
    perr[:] = np.inf  # angles are not trusted: locate() falls back to exact comparisons
    return out, pphi, perr


# ------------------------------------------------------------------------------------------- candidates
@dataclass(frozen=True)
class S2Result:
    value2: object        # the exact Lip², an exact.QNum
    enclosure2: tuple     # rigorous float enclosure of Lip²
    kind: str             # "vertex" | "critical" | "constant" | "great" | "none"
    pattern: tuple        # the activation pattern of the maximising cell
    point: tuple          # a float approximation of the maximising point (None for "great")
    cells: int
    great_tests: int      # cells whose great circle was tested for lying inside them


def _gradients(pats: np.ndarray, Aiv: Interval, viv: Interval) -> Interval:
    S = Interval(pats.astype(np.float64))
    return matmul(S, Aiv) + viv


def lipschitz_s2(Wq, bq, aq, vq, *, progress=None) -> S2Result:
    """Exact Lip on S² of v·x + Σ_j a_j ReLU(w_j·x + b_j) (rational, canonical: distinct planes meeting S²)."""
    m = len(Wq)
    vq = tuple(vq)
    if m == 0:
        vv = E.dot(vq, vq)
        return S2Result(E.QNum(vv), (float(vv), float(vv)), "none", (), None, 1, 0)
    Aq = [E.scale(a, w) for a, w in zip(aq, Wq, strict=True)]
    Wiv, biv = from_fractions([list(w) for w in Wq]), from_fractions(list(bq))
    Aiv, viv = from_fractions([list(x) for x in Aq]), from_fractions(list(vq))
    cands = []   # (lo, hi, descriptor)
    cells: dict[bytes, np.ndarray] = {}
    for j in range(m):
        if progress is not None:
            progress(j, m)
        others = np.r_[0:j, j + 1:m]
        arr = circle_arrangement(Wq[j], bq[j], Wq, bq, Wiv, biv, others)
        _edge_candidates(arr, j, m, Wq, bq, Aq, vq, Aiv, viv, cands, cells)
    best_lo = max((float(c.lo.max()) for c in cands if len(c.lo)), default=-np.inf)
    # (i′) a great circle G = {g·x = 0} inside a cell, meeting no kink circle at all: by decreasing ‖g‖².
    # (If G meets the closed cell and crosses its boundary, a zero, vertex or critical candidate has ‖g‖².)
    keys = list(cells)
    pats = np.array([cells[k] for k in keys])
    G = _gradients(pats, Aiv, viv)
    gg = _dot_iv(G, G)
    gg_lo, gg_hi = gg.lo(), gg.hi()
    top = np.flatnonzero(gg_hi >= best_lo)
    tests = len(top)
    if len(top):
        Gt, ggt = G[top], gg[top]
        GW = matmul(Gt, Wiv.T)                                      # (T, m): g·w_k
        ww = _dot_iv(Wiv, Wiv).reshape(1, -1)
        dl = ggt.reshape(-1, 1) * ww - GW.square()                  # ‖g‖²‖w‖² − (g·w)²
        disc = dl - biv.square().reshape(1, -1) * ggt.reshape(-1, 1)
        sdisc = disc.sign()
        sb = biv.sign()
        for t, i in enumerate(top):
            sig = pats[i]
            if (sdisc[t] > 0).any():      # G crosses a kink circle: not inside one cell
                continue
            g = None
            inside = True
            for k in range(m):
                if sdisc[t, k] == 0:
                    g = _exact_g(sig, Aq, vq) if g is None else g
                    wk, bk = Wq[k], bq[k]
                    dk = E.dot(g, g) * E.dot(wk, wk) - E.dot(g, wk) ** 2 - bk * bk * E.dot(g, g)
                    if dk > 0:
                        inside = False
                        break
                sgn_b = int(sb[k]) if sb[k] != 0 else E.sgn(bq[k])
                if sgn_b == 0 or (sgn_b > 0) != bool(sig[k]):
                    inside = False  # coincident with C_k (covered by its constant candidates) or wrong side
                    break
            if not inside:
                continue
            g = _exact_g(sig, Aq, vq) if g is None else g
            if all(x == 0 for x in g):
                continue
            e1, _ = _unit_frame(g)
            cands.append(_Block([gg_lo[i]], [gg_hi[i]], lambda _, sig=sig, g=g, pt=tuple(e1): (
                "great", tuple(bool(x) for x in sig), E.QNum(E.dot(g, g)), pt)))
            best_lo = max(best_lo, float(gg_lo[i]))
    # exact comparison of every candidate that may be the maximum
    best = None
    for blk in cands:
        for i in np.flatnonzero(blk.hi >= best_lo):
            desc = blk.make(int(i))
            val = desc[2] if desc[0] == "great" else _exact_value(desc, Wq, bq, Aq, vq)
            if best is None or val.cmp(best[0]) > 0:
                best = (val, desc, float(blk.lo[i]), float(blk.hi[i]))
    if best is None:
        raise AssertionError("no candidate for the maximum: every cell has an edge with candidates")
    val, desc, lo, hi = best
    if desc[0] in ("vertex", "critical", "zero"):
        point = tuple(desc[3]().floats())
    elif desc[0] == "great":
        point = desc[3]
    else:  # constant: any point of circle j
        w, b = Wq[desc[2]], bq[desc[2]]
        nw2 = E.dot(w, w)
        c = np.array([float(-b * x / nw2) for x in w])
        e1, _ = _unit_frame(w)
        point = tuple(c + math.sqrt(max(1 - float(c @ c), 0.0)) * e1)
    return S2Result(val, (lo, hi), desc[0], desc[1], point, len(cells), tests)


def _exact_g(sig, Aq, vq):
    g = list(vq)
    for k in np.flatnonzero(sig):
        g = [x + y for x, y in zip(g, Aq[k], strict=True)]
    return tuple(g)


def _exact_value(desc, Wq, bq, Aq, vq):
    kind, sig = desc[0], desc[1]
    g = _exact_g(np.array(sig), Aq, vq)
    if kind in ("vertex", "critical"):
        return desc[3]().value(g)
    if kind == "zero":  # g·x = 0 there
        return E.QNum(E.dot(g, g))
    if kind == "constant":  # P g = 0 on circle j: g·x = g·c everywhere on it
        j = desc[2]
        w, b = Wq[j], bq[j]
        gc = -b * E.dot(g, w) / E.dot(w, w)
        return E.QNum(E.dot(g, g) - gc * gc)
    raise AssertionError(kind)


def gx2(G: Interval, X: Interval) -> Interval:
    """(g·x)², the normal part removed from ‖g‖² to give the squared tangential norm."""
    return _dot_iv(G, X).square()


class _Block:
    """Candidates of one kind on one circle: enclosures (lo, hi) and a lazy descriptor per entry."""

    def __init__(self, lo, hi, make):
        self.lo, self.hi, self.make = np.asarray(lo, float), np.asarray(hi, float), make


def _edge_candidates(arr: CircleArrangement, j, m, Wq, bq, Aq, vq, Aiv, viv, cands, cells):
    Ecount = arr.E
    full = np.zeros((2 * Ecount, m), bool)
    full[:, arr.others] = np.vstack([arr.patterns, arr.patterns])
    full[:Ecount, j] = True
    packed = np.packbits(full, axis=1)
    for r in range(len(full)):
        cells.setdefault(packed[r].tobytes(), full[r])
    Gv = _gradients(full, Aiv, viv)
    gg = _dot_iv(Gv, Gv)
    w, b = Wq[j], bq[j]
    P = len(arr.positions)
    sig = lambda r: tuple(bool(x) for x in full[r])  # noqa: E731
    # (ii) endpoints
    if P:
        pts = stack([grp[0].point for grp in arr.positions])  # (P, 3)
        for end in (0, 1):
            pidx = (np.arange(Ecount) + end) % P
            X = Interval(np.vstack([pts.m[pidx]] * 2), np.vstack([pts.r[pidx]] * 2))
            h = gg - gx2(Gv, X)
            cands.append(_Block(h.lo(), h.hi(), lambda r, pidx=pidx: (
                "vertex", sig(r), j, arr.positions[int(pidx[r % Ecount])][0].exact)))
    # (iii) critical points of g·x on the circle, and (iv) the constant case P g = 0
    wiv = from_fractions(list(w))
    nw2 = E.dot(w, w)
    nw2iv = from_fractions([nw2])[0]
    gw = Gv @ wiv
    _zero_candidates(arr, j, full, Gv, gg, gw, w, b, Aq, vq, cands, sig)
    Pg = Gv - stack([gw * wiv[i] / nw2iv for i in range(3)], axis=-1)
    pp = _dot_iv(Pg, Pg)
    cvec = [-b * x / nw2 for x in w]
    civ = from_fractions(cvec)
    r2 = 1 - E.dot(cvec, cvec)
    r2iv = from_fractions([r2])[0]
    spp = pp.sign()
    pos_rows = np.flatnonzero(spp > 0)

    def exact_crits(r):
        """Both critical points of row r from their exact form p ± √D q, located exactly on the circle."""
        for sg in (1, -1):
            lazy = _lazy_crit(full[r], Aq, vq, w, cvec, r2, sg)
            X = _qp_iv(lazy())
            e = arr.locate(X, lazy) if P else 0
            if e is not None and e == r % Ecount:
                h = gg[r] - gx2(Gv[r], X)
                cands.append(_Block([h.lo()], [h.hi()], lambda _, r=r, lazy=lazy: ("critical", sig(r), j, lazy)))

    for r in np.flatnonzero(spp == 0):  # P g = 0 exactly, or too small for the filter
        g = _exact_g(full[r], Aq, vq)
        pg = E.sub(g, E.scale(E.dot(g, w) / nw2, w))
        if all(x == 0 for x in pg):
            gc = E.dot(g, cvec)
            val = E.dot(g, g) - gc * gc
            cands.append(_Block([float(val)], [float(val)], lambda _, r=r: ("constant", sig(r), j)))
            continue
        exact_crits(r)
    if not len(pos_rows):
        return
    try:
        sc = (r2iv / pp[pos_rows]).sqrt()
    except Undecided:  # enclosures near the underflow range: every critical point exactly
        for r in pos_rows:
            exact_crits(r)
        return
    for sg in (1, -1):
        X = civ + Pg[pos_rows] * Interval((sc.m * sg)[:, None], sc.r[:, None])
        edge = arr.locate_many(X)
        want = pos_rows % Ecount
        for q in np.flatnonzero(edge == -2):  # undecided by angles: exact
            r = int(pos_rows[q])
            lazy = _lazy_crit(full[r], Aq, vq, w, cvec, r2, sg)
            e = arr.locate(X[q], lazy)
            edge[q] = -1 if e is None else e
        ok = np.flatnonzero(edge == want)
        if not len(ok):
            continue
        rows = pos_rows[ok]
        h = gg[rows] - gx2(Gv[rows], X[ok])
        cands.append(_Block(h.lo(), h.hi(), lambda i, rows=rows, sg=sg: (
            "critical", sig(int(rows[i])), j, _lazy_crit(full[int(rows[i])], Aq, vq, w, cvec, r2, sg))))


def _zero_candidates(arr, j, full, Gv, gg, gw, w, b, Aq, vq, cands, sig):
    """(i) Zeros of g·x on circle j inside an edge: there the great circle of g crosses the cell's boundary and
    the squared tangential norm is ‖g‖² (a tangency is a critical point, already a candidate)."""
    Ecount = arr.E
    wiv = from_fractions(list(w))
    nw2 = from_fractions([E.dot(w, w)])[0]
    h1 = from_fractions([-b])[0]
    dl = nw2 * gg - gw.square()                       # ‖w‖²‖g‖² − (g·w)²
    disc = dl - h1 * h1 * gg                          # δ(1 − ‖p0‖²) with h2 = 0
    sdl, sdisc = dl.sign(), disc.sign()
    good = np.flatnonzero((sdl > 0) & (sdisc > 0))
    unsure = np.flatnonzero(~((sdl > 0) & (sdisc != 0)))
    if len(good):
        d2 = dl[good]
        al = h1 * gg[good] / d2
        be = -(h1 * gw[good]) / d2
        Gg = Gv[good]
        p0 = stack([al * wiv[i] + be * Gg[:, i] for i in range(3)], axis=-1)
        e = _cross_iv(stack([wiv] * len(good)), Gg)
        sc = disc[good].sqrt() / d2
        for sg in (1, -1):
            X = stack([p0[:, i] + (sc * e[:, i] if sg > 0 else -(sc * e[:, i])) for i in range(3)], axis=-1)
            edge = arr.locate_many(X)
            for q in np.flatnonzero(edge == -2):
                r = int(good[q])
                qp = _pair_exact(w, b, _exact_g(full[r], Aq, vq), F0)[1]
                if len(qp) == 2:
                    pt = qp[0] if sg > 0 else qp[1]
                    e_ = arr.locate(_qp_iv(pt), lambda pt=pt: pt)
                    edge[q] = -1 if e_ is None else e_
            ok = np.flatnonzero(edge == good % Ecount)
            if len(ok):
                rows = good[ok]
                cands.append(_Block(gg[rows].lo(), gg[rows].hi(), lambda i, rows=rows, sg=sg: (
                    "zero", sig(int(rows[i])), j, _lazy_zero(full[int(rows[i])], Aq, vq, w, b, sg))))
    for r in unsure:  # decided exactly
        g = _exact_g(full[r], Aq, vq)
        kind, pts = _pair_exact(w, b, g, F0)
        if kind != "two":
            continue
        for sg, pt in zip((1, -1), pts, strict=True):
            e_ = arr.locate(_qp_iv(pt), lambda pt=pt: pt)
            if e_ is not None and e_ == r % Ecount:
                v2 = float(E.dot(g, g))
                cands.append(_Block([v2], [v2], lambda _, r=r, sg=sg: (
                    "zero", sig(int(r)), j, _lazy_zero(full[int(r)], Aq, vq, w, b, sg))))


def _lazy_zero(row, Aq, vq, w, b, sg):
    def make():
        kind, pts = _pair_exact(w, b, _exact_g(row, Aq, vq), F0)
        return pts[0] if sg > 0 else pts[1]
    return make


def _lazy_crit(row, Aq, vq, w, cvec, r2, sg):
    cache = {}

    def make():
        if "p" not in cache:
            g = _exact_g(row, Aq, vq)
            nw2 = E.dot(w, w)
            pg = E.sub(g, E.scale(E.dot(g, w) / nw2, w))
            cache["p"] = E.QPoint(tuple(cvec), pg, r2 / E.dot(pg, pg), sg)
        return cache["p"]
    return make
