r"""The exact geodesic Lipschitz constant on S² (d = 3): candidates on the small-circle arrangement, decided exactly.

Kinks are the circles C_j = {x ∈ S² : w_j·x + b_j = 0} of the canonical form (|b_j| < ‖w_j‖, rational).
On the open cell with pattern σ the gradient is the rational vector g_σ and the squared tangential norm is
h_σ(x) = ‖g_σ‖² − (g_σ·x)². Its sup over a closed cell is attained (i) at a point where the great circle
G_σ = {g_σ·x = 0} meets the cell (value ‖g_σ‖²), or else on the boundary: (ii) at a vertex (a point on two
or more circles), or (iii) at a critical point of g_σ·x restricted to a circle C_j, x = c_j ± r_j P g/‖P g‖
(c_j the centre, r_j the radius, P the projection onto w_j^⊥), or (iv) anywhere on C_j when P g = 0 (then
g·x is constant there). A zero of g·x inside an edge is a point of G_σ: if G_σ crosses the edge it enters
the cell (case i), and if it touches it, the point is a critical point (case iii).

So every circle is cut at its vertices into edges (:mod:`numerics.rob.arrangement2`; an isolated circle is
ONE edge with no endpoints: there is no seam), each edge has two side cells, and the candidates are the
endpoints and the critical points inside each edge, for both sides; then, for cells in decreasing order of
‖g_σ‖², the great-circle test builds the arrangement induced on G_σ and asks whether one of its edges has
pattern σ.

All edge-sides of all circles are rows of one table, and every candidate family is one vectorised float64
interval computation (``numerics.rob.interval``) over the rows; rows the intervals cannot decide (P g or an
enclosure too close to 0, a point whose edge the angles cannot tell) go through the exact path in Q(√D)
(:mod:`numerics.rob.exact`). The maximum is finally compared exactly among all candidates whose enclosures
overlap the best, so the value returned is exact (an element a + b√D).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numerics.rob import exact as E
from numerics.rob.arrangement2 import (
    CircleArrangement,
    circle_arrangement,
    circle_arrangements,
    cross_iv,
    dot_iv,
    pair_exact,
    qpoint_interval,
    unit_frame,
)
from numerics.rob.interval import Interval, from_fractions, matmul

__all__ = ["lipschitz_s2", "S2Result", "circle_arrangement", "CircleArrangement", "gx2"]

VERTEX, CRIT, ZERO, CONST, GREAT = range(5)
KINDS = ("vertex", "critical", "zero", "constant", "great")


@dataclass(frozen=True)
class S2Result:
    value2: object        # the exact Lip², an exact.QNum
    enclosure2: tuple     # rigorous float enclosure of Lip²
    kind: str             # "vertex" | "critical" | "zero" | "constant" | "great" | "none"
    pattern: tuple        # the activation pattern of the maximising cell
    point: tuple          # a float approximation of the maximising point (None for "great")
    cells: int
    great_tests: int      # cells whose great circle was tested for lying inside them


def gx2(G: Interval, X: Interval) -> Interval:
    """(g·x)², the normal part removed from ‖g‖² to give the squared tangential norm."""
    return dot_iv(G, X).square()


def _cat(items) -> Interval:
    return Interval(np.concatenate([x.m for x in items]), np.concatenate([x.r for x in items]))


def _col(x: Interval) -> Interval:
    return x.reshape(-1, 1)


def _enclose(q) -> tuple[float, float]:
    iv = from_fractions([q])
    return float(iv.lo()[0]), float(iv.hi()[0])


class _Rows:
    """Every (circle j, edge e, side) of the arrangement as one row: its pattern (packed bits), its gradient
    enclosure G and ‖G‖², and the circle's data broadcast to rows."""

    def __init__(self, arrs, Wq, bq, Aq, vq, Wiv, biv, Aiv, viv):
        m = len(arrs)
        self.arrs, self.m, self.Wq, self.bq, self.Aq, self.vq = arrs, m, Wq, bq, Aq, vq
        Es = np.array([a.E for a in arrs])
        self.rc = np.repeat(np.arange(m), 2 * Es)                             # circle of each row
        self.re = np.concatenate([np.arange(2 * E) % E for E in Es])          # edge of each row
        packed, Gs = [], []
        for j, a in enumerate(arrs):
            full = np.zeros((2 * a.E, m), bool)
            full[:, a.others] = np.vstack([a.patterns, a.patterns])
            full[:a.E, j] = True
            packed.append(np.packbits(full, axis=1))
            Gs.append(matmul(full.astype(np.float64), Aiv))
        self.packed = np.vstack(packed)
        self.G = _cat(Gs) + viv
        self.gg = dot_iv(self.G, self.G)
        self.P = np.array([len(a.positions) for a in arrs])
        self.nw2 = [E.dot(w, w) for w in Wq]
        self.cvec = [tuple(-b * x / n for x in w) for w, b, n in zip(Wq, bq, self.nw2, strict=True)]
        self.r2 = [1 - E.dot(c, c) for c in self.cvec]
        rc = self.rc
        self.w = Wiv[rc]
        self.h1 = (-biv)[rc]
        self.nw2iv = from_fractions(self.nw2)[rc]
        self.civ = from_fractions([list(c) for c in self.cvec])[rc]
        self.r2iv = from_fractions(self.r2)[rc]

    def sig(self, r) -> np.ndarray:
        return np.unpackbits(self.packed[r])[:self.m].astype(bool)

    def g(self, r):
        return _exact_g(self.sig(r), self.Aq, self.vq)

    def crit_point(self, r, sg) -> E.QPoint:
        """The critical point c ± r Pg/‖Pg‖ of g·x on the row's circle, exactly."""
        j, g = int(self.rc[r]), self.g(r)
        w = self.Wq[j]
        pg = E.sub(g, E.scale(E.dot(g, w) / self.nw2[j], w))
        return E.QPoint(self.cvec[j], pg, self.r2[j] / E.dot(pg, pg), sg)

    def zero_point(self, r, sg) -> E.QPoint:
        j = int(self.rc[r])
        kind, pts = pair_exact(self.Wq[j], self.bq[j], self.g(r), E.ZERO)
        assert kind == "two", kind
        return pts[0] if sg > 0 else pts[1]


class _Cands:
    """Candidate enclosures (lo, hi), each with (kind, row, aux) to rebuild it exactly."""

    def __init__(self):
        self.parts = []

    def add(self, kind, rows, aux, lo, hi):
        rows = np.atleast_1d(np.asarray(rows, int))
        self.parts.append((np.full(len(rows), kind), rows, np.broadcast_to(aux, rows.shape).astype(int),
                           np.atleast_1d(np.asarray(lo, float)), np.atleast_1d(np.asarray(hi, float))))

    def arrays(self):
        if not self.parts:
            return [np.zeros(0, int)] * 3 + [np.zeros(0)] * 2
        return [np.concatenate([p[i] for p in self.parts]) for i in range(5)]


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
    arrs = circle_arrangements(Wq, bq, Wiv, biv, progress=progress)
    rows = _Rows(arrs, Wq, bq, Aq, vq, Wiv, biv, Aiv, viv)
    cands = _Cands()
    _vertex_candidates(rows, cands)
    _point_candidates(rows, cands)
    kind, row, aux, lo, hi = cands.arrays()
    best_lo = float(lo.max()) if len(lo) else -np.inf
    # (i′) a great circle G = {g·x = 0} inside a cell, meeting no kink circle at all: by decreasing ‖g‖².
    # (If G meets the closed cell and crosses its boundary, a zero, vertex or critical candidate has ‖g‖².)
    nb = rows.packed.shape[1]
    _, first = np.unique(np.ascontiguousarray(rows.packed).view(np.dtype((np.void, nb))).ravel(), return_index=True)
    top = first[rows.gg[first].hi() >= best_lo]
    for r in _great_cells(rows, top, Wiv, biv):
        glo, ghi = float(rows.gg[r].lo()), float(rows.gg[r].hi())
        cands.add(GREAT, [r], 0, [glo], [ghi])
        best_lo = max(best_lo, glo)
    kind, row, aux, lo, hi = cands.arrays()
    # exact comparison of every candidate that may be the maximum
    best = None
    for i in np.flatnonzero(hi >= best_lo):
        val, point = _exact_candidate(rows, int(kind[i]), int(row[i]), int(aux[i]))
        if best is None or val.cmp(best[0]) > 0:
            best = (val, i, point)
    if best is None:
        raise AssertionError("no candidate for the maximum: every cell has an edge with candidates")
    val, i, point = best
    r = int(row[i])
    return S2Result(val, (float(lo[i]), float(hi[i])), KINDS[kind[i]], tuple(bool(x) for x in rows.sig(r)),
                    point(), len(first), len(top))


def _vertex_candidates(rows: _Rows, cands: _Cands) -> None:
    """(ii) both endpoints of every edge, for both side cells."""
    arrs = rows.arrs
    has = np.flatnonzero(rows.P[rows.rc] > 0)
    if not len(has):
        return
    off = np.r_[0, np.cumsum(rows.P)]
    pts = _cat([a.pos_point for a in arrs if len(a.positions)])
    rc, re = rows.rc[has], rows.re[has]
    G, gg = rows.G[has], rows.gg[has]
    for end in (0, 1):
        X = pts[off[rc] + (re + end) % rows.P[rc]]
        h = gg - gx2(G, X)
        cands.add(VERTEX, has, end, h.lo(), h.hi())


def _point_candidates(rows: _Rows, cands: _Cands) -> None:
    """(iii) critical points of g·x on the circle and (iv) the constant case P g = 0; (i) zeros of g·x (points
    of the great circle G_σ) inside the row's edge. Points are located on their circle per circle, by angles,
    exactly where the angles cannot decide."""
    G, gg, w = rows.G, rows.gg, rows.w
    gw = dot_iv(G, w)
    Pg = G - _col(gw / rows.nw2iv) * w
    pp = dot_iv(Pg, Pg)
    spp = pp.sign()
    exact_crit = np.flatnonzero((spp == 0) | ((spp > 0) & ~(rows.r2iv.lo() > 0)))
    crit = np.flatnonzero((spp > 0) & (rows.r2iv.lo() > 0))
    dl = rows.nw2iv * gg - gw.square()                     # ‖w‖²‖g‖² − (g·w)²
    disc = dl - rows.h1.square() * gg                     # δ(1 − ‖p0‖²) with h2 = 0
    sdl, sdisc = dl.sign(), disc.sign()
    zero = np.flatnonzero((sdl > 0) & (sdisc > 0))
    exact_zero = np.flatnonzero(~((sdl > 0) & (sdisc != 0)))
    queries = []  # (kind, sign, rows, X)
    if len(crit):
        sc = _col((rows.r2iv[crit] / pp[crit]).sqrt())
        for sg in (1, -1):
            queries.append((CRIT, sg, crit, rows.civ[crit] + (sc * Pg[crit] if sg > 0 else -(sc * Pg[crit]))))
    if len(zero):
        d2, h1 = _col(dl[zero]), _col(rows.h1[zero])
        Gz, wz = G[zero], w[zero]
        p0 = h1 * _col(gg[zero]) / d2 * wz - h1 * _col(gw[zero]) / d2 * Gz
        se = _col(disc[zero].sqrt()) / d2 * cross_iv(wz, Gz)
        for sg in (1, -1):
            queries.append((ZERO, sg, zero, p0 + se if sg > 0 else p0 - se))
    if queries:
        qkind = np.concatenate([np.full(len(q[2]), q[0]) for q in queries])
        qsign = np.concatenate([np.full(len(q[2]), q[1]) for q in queries])
        qrow = np.concatenate([q[2] for q in queries])
        X = _cat([q[3] for q in queries])
        order = np.argsort(rows.rc[qrow], kind="stable")
        qkind, qsign, qrow, X = qkind[order], qsign[order], qrow[order], X[order]
        edge = np.empty(len(qrow), int)
        bounds = np.searchsorted(rows.rc[qrow], np.arange(rows.m + 1))
        for j in range(rows.m):
            s, e = bounds[j], bounds[j + 1]
            if s == e:
                continue
            arr = rows.arrs[j]
            ej = arr.locate_many(X[s:e])
            for q in np.flatnonzero(ej == -2):  # undecided by angles: exact
                r, sg, kd = int(qrow[s + q]), int(qsign[s + q]), int(qkind[s + q])
                make = (lambda r=r, sg=sg: rows.crit_point(r, sg)) if kd == CRIT else \
                    (lambda r=r, sg=sg: rows.zero_point(r, sg))
                loc = arr.locate(X[s + q], make)
                ej[q] = -1 if loc is None else loc
            edge[s:e] = ej
        ok = edge == rows.re[qrow]
        for kd in (CRIT, ZERO):
            sel = np.flatnonzero(ok & (qkind == kd))
            if not len(sel):
                continue
            r = qrow[sel]
            h = gg[r] - gx2(G[r], X[sel]) if kd == CRIT else gg[r]
            cands.add(kd, r, qsign[sel], h.lo(), h.hi())
    for r in exact_crit:
        _exact_crits(rows, cands, int(r))
    for r in exact_zero:
        _exact_zeros(rows, cands, int(r))


def _exact_crits(rows: _Rows, cands: _Cands, r: int) -> None:
    """Row r's critical points (or its constant case P g = 0), decided exactly."""
    j = int(rows.rc[r])
    w, g = rows.Wq[j], rows.g(r)
    pg = E.sub(g, E.scale(E.dot(g, w) / rows.nw2[j], w))
    if all(x == 0 for x in pg):
        gc = E.dot(g, rows.cvec[j])
        lo, hi = _enclose(E.dot(g, g) - gc * gc)
        cands.add(CONST, [r], 0, [lo], [hi])
        return
    for sg in (1, -1):
        qp = rows.crit_point(r, sg)
        X = qpoint_interval(qp)
        if rows.arrs[j].locate(X, lambda qp=qp: qp) == rows.re[r]:
            h = rows.gg[r] - gx2(rows.G[r], X)
            cands.add(CRIT, [r], sg, [h.lo()], [h.hi()])


def _exact_zeros(rows: _Rows, cands: _Cands, r: int) -> None:
    j = int(rows.rc[r])
    g = rows.g(r)
    kind, pts = pair_exact(rows.Wq[j], rows.bq[j], g, E.ZERO)
    if kind != "two":
        return
    lo, hi = _enclose(E.dot(g, g))
    for sg, pt in zip((1, -1), pts, strict=True):
        if rows.arrs[j].locate(qpoint_interval(pt), lambda pt=pt: pt) == rows.re[r]:
            cands.add(ZERO, [r], sg, [lo], [hi])


def _great_cells(rows: _Rows, top, Wiv, biv):
    """Rows (one per cell) among ``top`` whose great circle G = {g·x = 0} lies inside the open cell."""
    if not len(top):
        return
    m, Wq, bq = rows.m, rows.Wq, rows.bq
    Gt, ggt = rows.G[top], rows.gg[top]
    GW = matmul(Gt, Wiv.T)                                      # (T, m): g·w_k
    ww = dot_iv(Wiv, Wiv).reshape(1, -1)
    dl = _col(ggt) * ww - GW.square()                           # ‖g‖²‖w‖² − (g·w)²
    sdisc = (dl - biv.square().reshape(1, -1) * _col(ggt)).sign()
    sb = biv.sign()
    for t, r in enumerate(top):
        if (sdisc[t] > 0).any():      # G crosses a kink circle: not inside one cell
            continue
        sig = rows.sig(r)
        g = None
        inside = True
        for k in range(m):
            if sdisc[t, k] == 0:
                g = rows.g(r) if g is None else g
                wk, bk = Wq[k], bq[k]
                dk = E.dot(g, g) * E.dot(wk, wk) - E.dot(g, wk) ** 2 - bk * bk * E.dot(g, g)
                if dk > 0:
                    inside = False
                    break
            sgn_b = int(sb[k]) if sb[k] != 0 else E.sgn(bq[k])
            if sgn_b == 0 or (sgn_b > 0) != bool(sig[k]):
                inside = False  # coincident with C_k (covered by its constant candidates) or wrong side
                break
        if inside and any(x != 0 for x in (rows.g(r) if g is None else g)):
            yield int(r)


def _exact_candidate(rows: _Rows, kind: int, r: int, aux: int):
    """(exact value, lazy float point) of one candidate."""
    g = rows.g(r)
    gg = E.dot(g, g)
    j = int(rows.rc[r])
    if kind == VERTEX:
        arr = rows.arrs[j]
        qp = arr.exact_point(int((rows.re[r] + aux) % len(arr.positions)))
        return qp.value(g), lambda: tuple(qp.floats())
    if kind in (CRIT, ZERO):
        qp = rows.crit_point(r, aux) if kind == CRIT else rows.zero_point(r, aux)
        return (qp.value(g) if kind == CRIT else E.QNum(gg)), lambda: tuple(qp.floats())
    if kind == GREAT:
        return E.QNum(gg), lambda: tuple(unit_frame(g)[0])
    # constant: P g = 0 on circle j, g·x = g·c everywhere on it; the point: any point of the circle
    w, c = rows.Wq[j], rows.cvec[j]
    gc = E.dot(g, c)

    def point():
        cf = np.array([float(x) for x in c])
        return tuple(cf + math.sqrt(max(1 - float(cf @ cf), 0.0)) * unit_frame(w)[0])
    return E.QNum(gg - gc * gc), point


def _exact_g(sig, Aq, vq):
    g = list(vq)
    for k in np.flatnonzero(sig):
        g = [x + y for x, y in zip(g, Aq[k], strict=True)]
    return tuple(g)
