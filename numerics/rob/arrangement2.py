r"""The arrangement of kink circles on S², decided exactly: vertices, their cyclic order on each circle, and
the activation pattern of every edge.

The kinks are the circles C_j = {x ∈ S² : w_j·x + b_j = 0}. Two of them meet where

    x = p₀ ± √D e,   p₀ = α w_j + β w_k ∈ span(w_j, w_k),   e = w_j × w_k,   D = disc/δ²,

with δ = ‖w_j‖²‖w_k‖² − (w_j·w_k)² = ‖e‖² and disc = δ − ‖δ p₀‖²/δ (:func:`pair_exact`). All pairs are
computed at once, as one vectorised interval computation (:func:`circle_arrangements`); only the pairs
whose δ or disc the intervals cannot sign go through the exact path. The crossing direction needs no
decision at all: walking counter-clockwise about w_j, d/dφ (w_k·x + b_k) ∝ x·(w_k × w_j) = −(p₀·e) ∓ √D‖e‖²
= ∓√D δ, so plane k turns positive at the vertex p₀ − √D e and negative at p₀ + √D e. A plane that does
not cross C_j has on it the sign it has at the centre c_j = −b_j w_j/‖w_j‖² (a line of the plane of C_j
that misses the circle misses its disc).

Cyclic order along a circle comes from float angles with rigorous error bounds. Runs of vertices whose
angles cannot be separated (*clusters*, e.g. several circles through one point) are ordered by the exact
sign of (P₁ × P₂)·w, and equal points are merged; if no gap at all is certified the order is fully exact.
A point of the circle is located on an edge by the same angles when its interval falls strictly between
two clusters, and exactly otherwise. An isolated circle is ONE edge with no endpoints (there is no seam).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from numerics.fallbacks import reach
from numerics.rob import exact as E
from numerics.rob.interval import Interval, U, from_fractions, matmul

__all__ = ["CircleArrangement", "circle_arrangement", "circle_arrangements", "qpoint_interval", "pair_exact",
           "cmp_exact", "angles", "unit_frame", "unit_frames", "cross_iv", "dot_iv"]

F0 = Fraction(0)
TWO_PI = 2 * math.pi
SLACK = 1e-13     # absolute slack (rad) over the rounding of the float angle bookkeeping (≲ 1e-14)
MAX_SPAN = 1.0    # a cluster wider than this (rad) is not ordered by local exact comparisons
TINY_R2 = 1e-20   # circles with r² below this are ordered exactly (the float frame's origin may miss them)


def cross_iv(a: Interval, b: Interval) -> Interval:
    """Row-wise cross product of interval arrays (…, 3) (broadcasting)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    c = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    return Interval(np.stack([x.m for x in c], -1), np.stack([x.r for x in c], -1))


def dot_iv(a: Interval, b: Interval) -> Interval:
    return (a * b).sum(axis=-1)


def unit_frames(wf: np.ndarray):
    """Float vectors e1, e2 (rows), nearly orthonormal and ⊥ w, with (e1, e2, w) right-handed: they only
    order points by angle (the error bounds of :func:`angles` are relative to these float vectors)."""
    wf = wf / np.linalg.norm(wf, axis=1, keepdims=True)
    ax = np.zeros_like(wf)
    ax[np.arange(len(wf)), np.argmin(np.abs(wf), axis=1)] = 1.0
    e1 = np.cross(wf, ax)
    e1 /= np.linalg.norm(e1, axis=1, keepdims=True)
    e2 = np.cross(wf, e1)
    e2 /= np.linalg.norm(e2, axis=1, keepdims=True)
    return e1, e2


def unit_frame(w):
    e1, e2 = unit_frames(np.array([[float(x) for x in w]]))
    return e1[0], e2[0]


def angles(P: Interval, e1, e2):
    """Float angles of points P (…, 3) in the frames (e1, e2) (broadcast against P) and rigorous error bounds
    (inf where the enclosure is too wide to give one): the points of a box at distance ≥ ρ from the origin
    subtend at most arcsin(t) ≤ t(1 + t), t = δ/ρ ≤ ½, about the midpoint; arctan2 is good to a few ulps."""
    if np.ndim(e1) == 1:  # one frame for all points
        X, Y = matmul(P, e1), matmul(P, e2)
    else:
        X, Y = dot_iv(P, Interval(e1)), dot_iv(P, Interval(e2))
    phi = np.arctan2(Y.m, X.m)
    lx = np.maximum(np.abs(X.m) - X.r, 0.0)
    ly = np.maximum(np.abs(Y.m) - Y.r, 0.0)
    rho = np.sqrt(lx * lx + ly * ly) * (1 - 4 * U)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (X.r + Y.r) / rho
    t = np.where((rho > 0) & (t <= 0.5), t, np.inf)
    err = t * (1 + t) * (1 + 1e-9) + 16 * U * (np.abs(phi) + 1)
    return phi, err


def qpoint_interval(qp: E.QPoint) -> Interval:
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


def pair_exact(w1, b1, w2, b2):
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


def cmp_exact(w, P1, P2) -> int:
    """sign((P1 × P2)·w): +1 if P2 lies (less than π) counter-clockwise of P1 about w, 0 if they coincide."""
    terms = [(P1.p, P2.p, 1, 0, 0), (P1.p, P2.q, P2.s, 0, 1), (P1.q, P2.p, P1.s, 1, 0), (P1.q, P2.q, P1.s * P2.s, 1, 1)]
    co = {}
    for a, b, s, i, j in terms:
        if (i and not P1.D) or (j and not P2.D):
            continue
        co[(i, j)] = co.get((i, j), F0) + s * E.dot(E.cross(a, b), w)
    return E.sign2(co.get((0, 0), F0), co.get((1, 0), F0), co.get((0, 1), F0), co.get((1, 1), F0), P1.D, P2.D)


def _between(w, A, X, B, single: bool) -> bool:
    """Is X strictly inside the ccw arc from A to B (the whole circle minus A when A = B)?"""
    if single:
        return True
    cAX, cAB, cXB = cmp_exact(w, A, X), cmp_exact(w, A, B), cmp_exact(w, X, B)
    if cAB > 0:      # the arc A→B is shorter than π: X inside iff X is ccw of A and B is ccw of X
        return cAX > 0 and cXB > 0
    if cAB < 0:      # longer than π: X inside unless it is in the short arc B→A
        return not (cAX <= 0 and cXB <= 0)
    return cAX > 0   # A and B antipodal: the arc is a half circle; X inside iff X is ccw of A


# ------------------------------------------------------------------------------------- the arrangement
@dataclass
class CircleArrangement:
    """The arrangement induced on one circle by the planes ``others``.

    Vertices are rows of the vertex table (``vk``: the other plane, as an index into ``others``; ``vs``:
    +1/−1 for the two points p₀ ± √D e of a crossing, 0 for a tangency). ``positions`` lists the distinct
    vertex points in cyclic (ccw) order, each a list of coinciding vertex ids; edge e runs from position e to
    position e+1, and ``patterns[e]`` holds the signs (> 0) of the planes ``others`` on it. Clusters
    (``blo``/``bhi``: unwrapped angle bounds; ``bfirst``/``blast``: their first and last positions) are what
    the float angles separate; ``exact_mode`` means they separate nothing and every location is exact."""

    w: tuple
    b: Fraction
    others: np.ndarray
    positions: list
    phi: np.ndarray        # per position: float angle of its first vertex
    err: np.ndarray        # per position: the largest error bound of its vertices (inf: exact mode)
    patterns: np.ndarray   # (E, len(others)) bool; E = max(1, len(positions))
    pos_point: Interval    # (P, 3) enclosures of the positions (first vertex)
    blo: np.ndarray
    bhi: np.ndarray
    bfirst: np.ndarray
    blast: np.ndarray
    exact_mode: bool
    e1: np.ndarray
    e2: np.ndarray
    vk: np.ndarray
    vs: np.ndarray
    Wq: list
    bq: list
    coincident: list = field(default_factory=list)  # others lying in the same plane (great-circle tests)
    exact_pts: dict = field(default_factory=dict)   # vertex id → QPoint (cache, and the exact-path vertices)
    gap: float = 0.0  # an angle no vertex's interval covers: the clusters lie in (gap, gap + 2π)

    @property
    def E(self) -> int:
        return max(1, len(self.positions))

    def vertex_exact(self, v: int) -> E.QPoint:
        qp = self.exact_pts.get(v)
        if qp is None:
            k = int(self.others[self.vk[v]])
            kind, pts = pair_exact(self.w, self.b, self.Wq[k], self.bq[k])
            assert kind == "two", kind
            qp = self.exact_pts[v] = pts[0] if self.vs[v] > 0 else pts[1]
        return qp

    def exact_point(self, pos: int) -> E.QPoint:
        return self.vertex_exact(self.positions[pos][0])

    def locate_many(self, X: Interval) -> np.ndarray:
        """Edge indices of points X (n, 3) of the circle, decided by angles; −2 where they cannot decide
        (call :meth:`locate`)."""
        if not self.positions:  # a circle no other circle meets is ONE edge with no endpoints
            return np.zeros(X.shape[0], int)
        if self.exact_mode:
            return np.full(X.shape[0], -2)
        c, ok = self._block_of(X)
        return np.where(ok, self.blast[c], -2)

    def _block_of(self, X: Interval):
        """(c, ok): the last cluster c (−1: before the first) starting at or before each point's angle, and
        whether the point's angle interval lies strictly between cluster c and cluster c + 1 (cyclically)."""
        phi, err = angles(X, self.e1, self.e2)
        B = len(self.blo)
        x = self.gap + (phi - self.gap) % TWO_PI
        c = np.searchsorted(self.blo, x, side="right") - 1
        prev_hi = np.where(c >= 0, self.bhi[c], self.bhi[-1] - TWO_PI)
        next_lo = np.where(c + 1 < B, self.blo[np.minimum(c + 1, B - 1)], self.blo[0] + TWO_PI)
        ok = np.isfinite(err) & (x - err - SLACK > prev_hi) & (x + err + SLACK < next_lo)
        return c, ok

    def locate(self, point: Interval, exact_point) -> int | None:
        """Index e of the open edge (position e → e+1) containing a point of the circle; None if the point
        is a vertex. Decided by angles where their error bounds allow it, else exactly."""
        P = len(self.positions)
        if P == 0:
            return 0
        e = int(self.locate_many(point.reshape(1, 3))[0])
        if e >= 0:
            return e
        if not self.exact_mode:
            run = self._near_run(point)
            if run is not None:
                X = exact_point()
                after = None
                for i in run:
                    c = cmp_exact(self.w, self.exact_point(i), X)
                    if c == 0:
                        return None
                    if c > 0:
                        after = i
                return after if after is not None else (run[0] - 1) % P
        return self._locate_exact(exact_point())

    def _near_run(self, point: Interval):
        """The positions of the clusters a point's angle interval meets, if they form a run short enough to be
        ordered against the point by local exact comparisons; else None."""
        phi, err = angles(point.reshape(1, 3), self.e1, self.e2)
        phi, err = float(phi[0]), float(err[0])
        if not (np.isfinite(err) and err <= 0.5):
            return None
        B = len(self.blo)
        x = self.gap + (phi - self.gap) % TWO_PI
        lo, hi = x - err - SLACK, x + err + SLACK
        meet = [c for c in range(B) if any(lo < self.bhi[c] + s and self.blo[c] + s < hi for s in (-TWO_PI, 0, TWO_PI))]
        if not meet or len(meet) == B:
            return None
        # the met clusters form one cyclic run c0, c0+1, …
        start = next(c for c in meet if (c - 1) % B not in meet)
        run_c = [(start + i) % B for i in range(len(meet))]
        if set(run_c) != set(meet):
            return None
        first, last = int(self.bfirst[run_c[0]]), int(self.blast[run_c[-1]])
        span = (self.bhi[run_c[-1]] - self.blo[run_c[0]]) % TWO_PI
        if span + 2 * err > MAX_SPAN:
            return None
        return [(first + i) % len(self.positions) for i in range((last - first) % len(self.positions) + 1)]

    def _locate_exact(self, X):
        reach("rob.s2/locate_exact")
        P = len(self.positions)
        for i in range(P):
            A, B = self.exact_point(i), self.exact_point((i + 1) % P)
            if cmp_exact(self.w, A, X) == 0:
                return None
            if _between(self.w, A, X, B, P == 1):
                return i
        raise AssertionError("a point of the circle lies on no edge")


def _pair_table(Wr: Interval, br: Interval, Wc: Interval, bc: Interval, e1, e2):
    """Interval data of every (circle r, plane c) pair: signs of δ, disc and the centre value, and for the
    pairs certified to cross in two points, the enclosures and angles of p₀ + √D e (slot 0), p₀ − √D e (1)."""
    R, K = len(br), len(bc)
    g11, g22 = dot_iv(Wr, Wr).reshape(R, 1), dot_iv(Wc, Wc).reshape(1, K)
    g12 = matmul(Wr, Wc.T)
    h1, hk = (-br).reshape(R, 1), (-bc).reshape(1, K)
    dl = g11 * g22 - g12.square()
    disc = dl - (h1.square() * g22 - 2 * (h1 * hk * g12) + hk.square() * g11)
    cen = bc.reshape(1, K) * g11 - br.reshape(R, 1) * g12   # b_k‖w‖² − b (w_k·w)
    sdl, sdisc, scen = dl.sign(), disc.sign(), cen.sign()
    ri, ci = np.nonzero((sdl > 0) & (sdisc > 0))
    n = len(ri)
    pm, pr = np.zeros((n, 2, 3)), np.zeros((n, 2, 3))
    phi, err = np.zeros((n, 2)), np.zeros((n, 2))
    if n:
        d2 = dl[ri, ci].reshape(n, 1)
        G11, G22, G12 = g11[ri, 0].reshape(n, 1), g22[0, ci].reshape(n, 1), g12[ri, ci].reshape(n, 1)
        H1, Hk = h1[ri, 0].reshape(n, 1), hk[0, ci].reshape(n, 1)
        w1, w2 = Wr[ri], Wc[ci]
        p0 = (H1 * G22 - Hk * G12) / d2 * w1 + (Hk * G11 - H1 * G12) / d2 * w2
        se = disc[ri, ci].reshape(n, 1).sqrt() / d2 * cross_iv(w1, w2)
        for slot, P in enumerate((p0 + se, p0 - se)):
            pm[:, slot], pr[:, slot] = P.m, P.r
            phi[:, slot], err[:, slot] = angles(P, e1[ri], e2[ri])
    return sdl, sdisc, scen, ri, ci, pm, pr, phi, err


def circle_arrangement(w, b, Wq, bq, Wiv: Interval, biv: Interval, others: np.ndarray, *,
                       great: bool = False) -> CircleArrangement:
    """The arrangement induced on C = {x ∈ S² : w·x + b = 0} by the planes ``others`` (indices into Wq)."""
    others = np.asarray(others, int)
    e1, e2 = unit_frame(w)
    table = _pair_table(from_fractions([list(w)]), from_fractions([b]), Wiv[others], biv[others],
                        e1.reshape(1, 3), e2.reshape(1, 3))
    return _build(w, b, Wq, bq, others, table, 0, np.arange(len(others)), e1, e2, great)


def circle_arrangements(Wq, bq, Wiv: Interval, biv: Interval, progress=None) -> list[CircleArrangement]:
    """The arrangements induced on every kink circle C_j by all other planes, from one pair table."""
    m = len(Wq)
    e1, e2 = unit_frames(Wiv.m)
    table = _pair_table(Wiv, biv, Wiv, biv, e1, e2)
    out = []
    for j in range(m):
        if progress is not None:
            progress(j, m)
        others = np.r_[0:j, j + 1:m]
        out.append(_build(Wq[j], bq[j], Wq, bq, others, table, j, others, e1[j], e2[j], False))
    return out


def _build(w, b, Wq, bq, others, table, row, cols, e1, e2, great) -> CircleArrangement:
    """Circle ``row`` of the pair table; ``cols`` are the table columns of ``others``."""
    sdl, sdisc, scen, ri, ci, pm, pr, phi, err = table
    K = len(others)
    inv = np.full(sdl.shape[1], -1)
    inv[cols] = np.arange(K)
    lo, hi = np.searchsorted(ri, row), np.searchsorted(ri, row, side="right")
    kk = inv[ci[lo:hi]]
    sel = kk >= 0
    kk, sl = kk[sel], np.arange(lo, hi)[sel]
    vk, vs = np.r_[kk, kk], np.r_[np.ones(len(kk), int), -np.ones(len(kk), int)]
    vm, vr = np.vstack([pm[sl, 0], pm[sl, 1]]), np.vstack([pr[sl, 0], pr[sl, 1]])
    vphi, verr = np.r_[phi[sl, 0], phi[sl, 1]], np.r_[err[sl, 0], err[sl, 1]]
    exact_pts = {}
    sdl_r, sdisc_r, scen_r = sdl[row, cols], sdisc[row, cols], scen[row, cols]
    extra = []  # (k, s, QPoint) of the pairs the intervals could not classify, decided exactly
    for k in np.flatnonzero(~((sdl_r > 0) & (sdisc_r != 0))):
        kind, pts = pair_exact(w, b, Wq[others[k]], bq[others[k]])
        if kind == "two":
            extra += [(int(k), 1, pts[0]), (int(k), -1, pts[1])]
        elif kind == "tangent":
            extra.append((int(k), 0, pts[0]))
    if extra:
        n0 = len(vk)
        ivs = [qpoint_interval(qp) for _, _, qp in extra]
        xm, xr = np.array([iv.m for iv in ivs]), np.array([iv.r for iv in ivs])
        xphi, xerr = angles(Interval(xm, xr), e1, e2)
        vk = np.r_[vk, [k for k, _, _ in extra]].astype(int)
        vs = np.r_[vs, [s for _, s, _ in extra]].astype(int)
        vm, vr, vphi, verr = np.vstack([vm, xm]), np.vstack([vr, xr]), np.r_[vphi, xphi], np.r_[verr, xerr]
        exact_pts = {n0 + i: qp for i, (_, _, qp) in enumerate(extra)}
    # the sign on C of every plane that does not cross it (centre rule, exact where the interval cannot tell)
    crossing = np.zeros(K, bool)
    crossing[vk[vs != 0]] = True
    const_sign = np.where(crossing, 0, scen_r).astype(np.int8)
    coincident = []
    nw2 = E.dot(w, w)
    for k in np.flatnonzero(~crossing & (scen_r == 0)):
        wk, bk = Wq[others[k]], bq[others[k]]
        const_sign[k] = E.sgn(bk * nw2 - b * E.dot(wk, w))
        if const_sign[k] == 0:
            if not great:
                raise AssertionError("two distinct kink planes coincide on a circle")
            coincident.append(int(others[k]))
    arr = CircleArrangement(tuple(w), b, others, [], np.zeros(0), np.zeros(0), np.zeros((1, K), bool),
                            Interval(np.zeros((0, 3))), np.zeros(0), np.zeros(0), np.zeros(0, int),
                            np.zeros(0, int), False, e1, e2, vk, vs, Wq, bq, coincident, exact_pts)
    r2 = 1 - b * b / nw2
    if r2 < TINY_R2:
        verr = np.full(len(verr), np.inf)
    order_vertices(arr, vphi, verr)
    P = len(arr.positions)
    pat = np.zeros((max(1, P), K), bool)
    pat[:, const_sign > 0] = True
    if P:
        rep = np.array([g[0] for g in arr.positions])
        arr.pos_point = Interval(vm[rep], vr[rep])
        pos_of = np.empty(len(vk), int)
        if P == len(vk):
            pos_of[rep] = np.arange(P)
        else:
            pos_of[np.concatenate(arr.positions)] = np.repeat(np.arange(P), [len(g) for g in arr.positions])
        cr = vs != 0
        i_out, i_in = np.full(K, -1), np.full(K, -1)
        i_out[vk[vs > 0]] = pos_of[vs > 0]   # plane k turns negative at p₀ + √D e …
        i_in[vk[vs < 0]] = pos_of[vs < 0]    # … and positive at p₀ − √D e (see the module docstring)
        ks = np.flatnonzero(crossing)
        if cr.any():
            span = (i_out[ks] - i_in[ks]) % P
            assert (span > 0).all(), "the two points of a crossing were merged"
            eidx = np.arange(P)[:, None]
            pat[:, ks] = ((eidx - i_in[ks][None, :]) % P) < span[None, :]
    arr.patterns = pat
    return arr


def order_vertices(arr: CircleArrangement, phi: np.ndarray, err: np.ndarray) -> None:
    """Distinct vertex positions in certified cyclic order, and the clusters that locate points by angle.

    Each vertex's true angle lies in [φ − ε, φ + ε]. Unwrapped from a point g that no such interval covers
    (the middle of the widest gap), the connected components of the union of these intervals are the
    clusters: disjoint, so their cyclic order is certain; inside a cluster (span < MAX_SPAN) the order is
    exact. Without such a g, or with an unusable bound, the order is fully exact."""
    n = len(phi)
    if n == 0:
        return
    if not np.isfinite(err).all() or err.max() > 0.5:
        return _order_exact(arr, phi)
    ph = np.sort(phi)
    gaps = np.r_[np.diff(ph), ph[0] + TWO_PI - ph[-1]]
    k = int(np.argmax(gaps))
    if gaps[k] <= 2 * (err.max() + SLACK) * (1 + 1e-12):
        return _order_exact(arr, phi)
    g = ph[k] + gaps[k] / 2
    th = g + (phi - g) % TWO_PI
    lo_, hi_ = th - err, th + err
    order = np.argsort(lo_, kind="stable")
    los, his = lo_[order], hi_[order]
    hmax = np.maximum.accumulate(his)
    starts = np.r_[0, np.flatnonzero(los[1:] > hmax[:-1] + SLACK) + 1]
    blo, bhi = los[starts], np.maximum.reduceat(his, starts)
    sizes = np.diff(np.r_[starts, n])
    if (sizes == 1).all():
        positions = [[v] for v in order.tolist()]
        bfirst = blast = np.arange(n)
    else:
        if ((bhi - blo)[sizes > 1] > MAX_SPAN).any():
            return _order_exact(arr, phi)
        positions, bfirst, blast = [], [], []
        ol = order.tolist()
        for s, z in zip(starts.tolist(), sizes.tolist(), strict=True):
            bfirst.append(len(positions))
            positions.extend([[ol[s]]] if z == 1 else resolve_cluster(arr, ol[s:s + z]))
            blast.append(len(positions) - 1)
    arr.positions, arr.gap = positions, float(g)
    rep = np.array([p[0] for p in positions])
    arr.phi, arr.err = phi[rep], err[rep]
    if len(positions) < n:
        arr.err = np.array([max(err[v] for v in p) for p in positions])
    arr.blo, arr.bhi = blo, bhi
    arr.bfirst, arr.blast = np.asarray(bfirst, int), np.asarray(blast, int)


def resolve_cluster(arr, cluster):
    """Exactly order a run of vertices whose angles the filter could not separate (span < MAX_SPAN < π),
    merging equal points."""
    w = arr.w
    key = functools.cmp_to_key(lambda a, b: -cmp_exact(w, arr.vertex_exact(a), arr.vertex_exact(b)))
    cl = sorted(cluster, key=key)
    out = [[cl[0]]]
    for v in cl[1:]:
        if cmp_exact(w, arr.vertex_exact(out[-1][0]), arr.vertex_exact(v)) == 0:
            out[-1].append(v)
        else:
            out.append([v])
    return out


def _order_exact(arr: CircleArrangement, phi) -> None:
    """Fully exact cyclic order (when the float filter cannot find one certified gap); locations are exact."""
    reach("rob.s2/order_exact")
    w = arr.w
    i0 = int(np.argmin(np.abs([float(x) for x in w])))
    ref1 = E.cross(w, tuple(Fraction(int(i == i0)) for i in range(3)))
    ref2 = E.cross(w, ref1)

    def half(qp):
        sy, sx = qp.dot(ref2).sign(), qp.dot(ref1).sign()
        return 0 if (sy > 0 or (sy == 0 and sx > 0)) else 1

    def cmp(a, b):
        pa, pb = arr.vertex_exact(a), arr.vertex_exact(b)
        ha, hb = half(pa), half(pb)
        if ha != hb:
            return ha - hb
        return -cmp_exact(w, pa, pb)

    cl = sorted(range(len(phi)), key=functools.cmp_to_key(cmp))
    out = [[cl[0]]]
    for v in cl[1:]:
        if cmp(out[-1][0], v) == 0:
            out[-1].append(v)
        else:
            out.append([v])
    arr.positions = out
    arr.phi = np.array([phi[g[0]] for g in out])
    arr.err = np.full(len(out), np.inf)  # angles are not trusted: every location is exact
    arr.exact_mode = True
