r"""Certified Lipschitz bracket on S^{d−1} by the graph of overlapping caps (any d ≥ 3).

On the sphere a canonical unit α_j ReLU(w_j·x + b_j) (b_j ≤ 0, t_j = −b_j/‖w_j‖ ∈ [0, 1)) is active on the
open cap C_j = {w_j·x + b_j > 0}, so a point's gradient is g_A = v + Σ_{j∈A} α_j with A the set of caps that
contain it, and the tangential norm there is τ_A(x) = (‖g_A‖² − (g_A·x)²)^{1/2}. Lip_{S^{d−1}} is the largest
sup of τ_A over the cells {x ∈ S: x ∈ C_j ⟺ j ∈ A}. When the caps are small (the width-2n construction of
SPEC §3 at s = 1/4 in high dimension), only a few of them meet, and the realizable sets A are the cliques
of a sparse graph. This module

1. decides every edge of the *overlap graph* (open caps j, k meet) exactly: in float64 interval arithmetic,
   with an exact rational fall-back when the enclosure cannot decide (tangent caps, for instance). Caps j and
   k are disjoint iff s = w_j·w_k − b_j b_k ≤ 0 and s² ≥ (‖w_j‖² − b_j²)(‖w_k‖² − b_k²)
   (:mod:`numerics.rob.caps`);
2. enumerates the cliques A of that graph by size, dropping a clique (and with it every superset) only when
   the closed set K_A = {‖x‖ ≤ 1, w_j·x + b_j ≥ 0 (j ∈ A)} is *proved* empty by a Farkas certificate
   y ≥ 0: Σ y_j b_j + ‖Σ y_j w_j‖ < 0, checked in arb ball arithmetic (y comes from a solver and is not
   trusted). Every realizable A is therefore visited; a non-realizable one only loosens the bound;
3. bounds each clique: for x in the cell of A, x ∈ K_A ∩ S, so
   sup τ_A² ≤ ‖g_A‖² − δ_A², with δ_A ≤ min_{K_A} |g_A·x| proved by weak duality: for y ≥ 0,
   g·x = (g − Σ y_j w_j)·x + Σ y_j w_j·x ≥ −‖g − Σ y_j w_j‖ − Σ y_j b_j on K_A (and the same for −g).
   Everything lives in span(g_A, w_A), so the duals come from a second-order cone program of dimension
   |A| + 1, and the bound is evaluated in arb from an enclosure of the Gram matrix of (g_A, w_A). The empty
   set contributes ‖v‖. The upper end is the largest of these bounds: proved for the whole sphere;
4. attains the lower end at witnesses: for the cliques in decreasing order of their bound, a point of K_A
   where |g_A·x| is (nearly) least, with the largest margin to the caps of A, lifted to the sphere along a
   direction orthogonal to span(g_A, w_A) (and, when the dimension allows, to every w_k), turned into an exact
   rational point of S^{d−1} (inverse stereographic projection) and evaluated exactly
   (:class:`numerics.rob.bracket_net.BracketNet`): its cell is read off exactly, whichever it is.

The bound per clique ignores the caps outside A (the cell is smaller than K_A ∩ S), so it is exact when the
maximising point of K_A lies in no other cap and d ≥ |A| + 2 (then K_A ∩ S and K_A have the same range of
g·x). Cost: the Gram matrix O(m²d), then per clique O(|A|²d) and three SOCPs of dimension |A| + 1. When the
caps are large (hemispheres: every pair meets), the cliques are exponentially many: the routine gives up
after ``max_cliques`` and returns None, and the branch and bound of :mod:`numerics.rob.bracket` runs.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import clarabel
import numpy as np
import scipy.sparse as sps
from flint import arb

from numerics.fallbacks import reach
from numerics.rob import exact as E
from numerics.rob.bracket_ia import TINY, U, iv_matmul, norm_up, round_up

__all__ = ["CapBracket", "cap_graph_bracket", "overlap_graph"]


@dataclass(frozen=True)
class CapBracket:
    """lower ≤ Lip_{S^{d−1}} ≤ upper, both proved; ``cliques`` realizable-or-unrefuted active sets visited."""

    lower: float
    upper: float
    witness_point: tuple | None
    witness_pattern: tuple | None
    cliques: int
    edges: int
    exact_edges: int
    pruned: int
    seconds: float
    status: str
    top: list = field(default_factory=list)   # the largest clique bounds: (upper, clique, δ source)

    @property
    def gap(self) -> float:
        return math.inf if self.lower <= 0 else self.upper / self.lower - 1.0


# ---------------------------------------------------------------- rigorous float helpers
def _enc(vals) -> tuple[np.ndarray, np.ndarray]:
    """Float enclosure (mid, rad) of exact rationals: float() of a Fraction is correctly rounded."""
    m = np.array([float(x) for x in vals], dtype=float)
    return m, round_up(U * np.abs(m)) + TINY


def _ball(mid: float, rad: float) -> arb:
    return arb(float(mid), float(rad))


def _up(x: arb) -> float:
    """A float ≥ every point of the ball x (proved by arb's comparison)."""
    if not x.is_finite():
        raise ArithmeticError(f"non-finite enclosure {x}")
    f = float(x.mid()) + float(x.rad())
    step = abs(f) * 4 * U + TINY
    while not arb(f) >= x:
        f += step
        step *= 2
    return f


def _lo(x: arb) -> float:
    """A float ≤ every point of the ball x."""
    return -_up(-x)


def overlap_graph(Wq, bq, Wm=None, Wr=None):
    """Adjacency sets of the open caps {w_j·x + b_j > 0} that meet, decided exactly.

    Returns (adj, exact_count): ``exact_count`` pairs needed the rational fall-back."""
    m = len(Wq)
    if Wm is None:
        Wm, Wr = _enc_matrix(Wq)
    bm, br = _enc(bq)
    Gm, Gr = iv_matmul(Wm, Wr, Wm.T, Wr.T)
    # s = w_j·w_k − b_j b_k, P = (‖w_j‖² − b_j²)(‖w_k‖² − b_k²), as mid ± rad
    bb_m = np.outer(bm, bm)
    bb_r = round_up(np.outer(br, np.abs(bm)) + np.outer(np.abs(bm), br) + np.outer(br, br) + U * np.abs(bb_m))
    s_m = Gm - bb_m
    s_r = round_up(Gr + bb_r + U * np.abs(s_m))
    n_m = np.diag(Gm) - bm * bm
    n_r = round_up(np.diag(Gr) + 2 * br * np.abs(bm) + br * br + 2 * U * (np.diag(Gm) + bm * bm))
    P_m = np.outer(n_m, n_m)
    P_r = round_up(np.outer(n_r, np.abs(n_m)) + np.outer(np.abs(n_m), n_r) + np.outer(n_r, n_r) + U * np.abs(P_m))
    s_lo, s_up = s_m - s_r, s_m + s_r
    P_lo, P_up = P_m - P_r, P_m + P_r
    smax = np.maximum(np.abs(s_lo), np.abs(s_up))
    meet = (s_lo > 0) | (smax * smax * (1 + 4 * U) < P_lo)            # proved: the caps meet
    apart = (s_up <= 0) & (s_up * s_up * (1 - 4 * U) >= P_up)          # proved: disjoint (tangent included)
    adj = [set() for _ in range(m)]
    upper_tri = np.triu(np.ones((m, m), bool), 1)
    for j, k in zip(*np.nonzero(meet & upper_tri), strict=True):
        adj[int(j)].add(int(k))
        adj[int(k)].add(int(j))
    n2 = [None] * m
    undecided = np.nonzero(~meet & ~apart & upper_tri)
    exact_count = len(undecided[0])
    for j, k in zip(undecided[0].tolist(), undecided[1].tolist(), strict=True):   # exact rationals
        reach("rob.cap_graph/overlap_exact")
        for i in (j, k):
            if n2[i] is None:
                n2[i] = E.dot(Wq[i], Wq[i]) - bq[i] * bq[i]
        s = E.dot(Wq[j], Wq[k]) - bq[j] * bq[k]
        if s > 0 or s * s < n2[j] * n2[k]:
            adj[j].add(k)
            adj[k].add(j)
    return adj, exact_count


def _enc_matrix(Wq):
    Wm = np.array([[float(x) for x in row] for row in Wq], dtype=float)
    return Wm, round_up(U * np.abs(Wm)) + TINY


# ---------------------------------------------------------------- the small cone programs
def _socp(C, b, nrm, obj=None, eq=None, margin=False):
    """Over z ∈ R^r, ‖z‖ ≤ 1 and C z + b ≥ t·nrm: minimise obj·z (t = 0), or (``margin``) maximise t ≤ 1,
    optionally with eq = (e, value): e·z = value. Returns (value, z, y ≥ 0 duals of the rows) or None."""
    k, r = C.shape
    nv = r + 1
    rows, rhs, cones = [], [], []
    if eq is not None:
        rows.append(np.hstack([eq[0], 0.0])[None])
        rhs.append(np.array([eq[1]]))
        cones.append(clarabel.ZeroConeT(1))
    # −C z + t·nrm ≤ b   (i.e. C z + b ≥ t nrm)
    rows.append(np.hstack([-C, (nrm if margin else 0 * nrm)[:, None]]))
    rhs.append(np.asarray(b, float))
    rows.append(np.hstack([np.zeros(r), 1.0])[None])
    rhs.append(np.ones(1))
    cones.append(clarabel.NonnegativeConeT(k + 1))
    rows.append(np.zeros((1, nv)))
    rows.append(np.hstack([-np.eye(r), np.zeros((r, 1))]))
    rhs += [np.ones(1), np.zeros(r)]
    cones.append(clarabel.SecondOrderConeT(r + 1))
    q = np.zeros(nv)
    if margin:
        q[r] = -1.0
    else:
        q[:r] = obj
    st = clarabel.DefaultSettings()
    st.verbose = False
    st.max_iter = 200
    st.tol_gap_abs = st.tol_gap_rel = st.tol_feas = 1e-13   # tight duals: the proved δ is only as good as y
    st.tol_ktratio = 1e-10
    try:
        sol = clarabel.DefaultSolver(sps.csc_matrix((nv, nv)), q, sps.csc_matrix(np.vstack(rows)),
                                     np.concatenate(rhs), cones, st).solve()
    except Exception:   # noqa: BLE001 - a solver failure only costs tightness, never soundness
        return None
    x = np.asarray(sol.x, float)
    if x.size != nv or not np.all(np.isfinite(x)):
        return None
    off = 0 if eq is None else 1
    y = np.maximum(np.asarray(sol.z, float)[off:off + k], 0.0)
    val = x[r] if margin else float(obj @ x[:r])
    return val, x[:r], y


class _Clique:
    """The reduced problem of one clique A: Gram enclosure of (g, w_A), reduced coordinates, bounds."""

    def __init__(self, ctx, A):
        self.A = A
        k = len(A)
        gm, gr = ctx.vm.copy(), ctx.vr.copy()
        for j in A:
            gm2 = gm + ctx.Am[j]
            gr = round_up(gr + ctx.Ar[j] + U * np.abs(gm2))
            gm = gm2
        Mm = np.vstack([gm[None], ctx.Wm[list(A)]])
        Mr = np.vstack([gr[None], ctx.Wr[list(A)]])
        self.Gm, self.Gr = iv_matmul(Mm, Mr, Mm.T, Mr.T)
        self.Mm, self.Mr = Mm, Mr
        self.gm = gm
        self.b = ctx.bm[list(A)]
        self.bq = [ctx.bq[j] for j in A]
        self.bb = [_ball(ctx.bm[j], ctx.br[j]) for j in A]
        # reduced coordinates (floats, only to find duals and witness points): QR of (g, w_A)ᵀ
        Q, R = np.linalg.qr(Mm.T)
        self.Q = Q
        self.gz = R[:, 0]
        self.C = R[:, 1:].T                     # (k, r): row j is w_j in reduced coordinates
        self.nrm = np.linalg.norm(self.C, axis=1) if k else np.zeros(0)
        self.k = k

    def G(self, i, j) -> arb:
        return _ball(self.Gm[i, j], self.Gr[i, j])

    def _comb_norm_up(self, c) -> float:
        """An upper bound of ‖Σ_i c_i M_i‖ (rows M = (g, w_A), float coefficients c), in interval arithmetic
        on the d-vector itself (the Gram matrix would lose half the digits under the square root near 0)."""
        c = np.asarray(c, float)[None]
        rm, rr = iv_matmul(c, np.zeros_like(c), self.Mm, self.Mr)
        return norm_up(rm[0], rr[0])

    def dual_low(self, y, sign) -> arb:
        """Proved lower bound of sign·g·x on K_A from y ≥ 0: −‖sign·g − Σ y w‖ − Σ y b."""
        nr = self._comb_norm_up([float(sign)] + [-float(t) for t in y])
        tb = sum((arb(float(t)) * bj for t, bj in zip(y, self.bb, strict=True)), arb(0))
        return -arb(nr) - tb

    def farkas_empty(self, y) -> bool:
        """y ≥ 0 with Σ y b + ‖Σ y w‖ < 0 proves K_A empty (arb)."""
        if y is None or not np.any(y > 0):
            return False
        nr = self._comb_norm_up([0.0] + [float(t) for t in y])
        tb = sum((arb(float(t)) * bj for t, bj in zip(y, self.bb, strict=True)), arb(0))
        return bool(tb + arb(nr) < 0)


class _Ctx:
    def __init__(self, Wq, bq, aq, vq):
        self.Wq, self.bq = Wq, bq
        self.m, self.d = len(Wq), len(vq)
        self.Wm, self.Wr = _enc_matrix(Wq)
        self.bm, self.br = _enc(bq)
        self.Am, self.Ar = _enc_matrix([[a * w for w in row] for a, row in zip(aq, Wq, strict=True)])
        self.vm, self.vr = _enc(vq)


def count_cliques(adj, limit: int) -> int:
    """The number of nonempty cliques of the graph, counted up to ``limit`` (returns limit + 1 beyond it)."""
    count = 0
    stack = [((j,), adj[j]) for j in range(len(adj))]
    while stack:
        A, common = stack.pop()
        count += 1
        if count > limit:
            return limit + 1
        last = A[-1]
        stack.extend((A + (k,), common & adj[k]) for k in common if k > last)
    return count


def cap_graph_bracket(Wq, bq, aq, vq, *, rel_gap: float = 0.01, time_limit: float = 60.0,
                      max_cliques: int = 200_000, seed: int = 0, net=None, progress=None) -> CapBracket | None:
    """Certified bracket of Lip_{S^{d−1}} for the canonical sphere form (Wq, bq, aq, vq) (exact rationals,
    b_j ≤ 0), or None when the overlap graph has more than ``max_cliques`` cliques or time runs out before
    every clique is bounded (then nothing is proved here). ``net``: a :class:`numerics.rob.bracket_net.BracketNet`
    of the same form, for the exact witness checks (built if None)."""
    t0 = time.perf_counter()
    deadline = t0 + time_limit
    m, d = len(Wq), len(vq)
    if d < 3:
        raise ValueError("cap_graph_bracket needs d >= 3 (S^1 has its own exact routine)")
    if any(b > 0 for b in bq):
        raise ValueError("cap_graph_bracket needs a sphere canonical form (b_j <= 0: caps of angular radius <= 90°)")
    ctx = _Ctx(Wq, bq, aq, vq)
    adj, n_exact = overlap_graph(Wq, bq, ctx.Wm, ctx.Wr)
    edges = sum(len(a) for a in adj) // 2
    if count_cliques(adj, max_cliques) > max_cliques:
        return None

    # ---- bounds per clique, enumerated by size; supersets of a proved-empty K_A are never generated
    bounds = []                         # (ub float, A, clique object, δ source)
    vv = arb(0)
    for i in range(d):
        bi = _ball(ctx.vm[i], ctx.vr[i])
        vv += bi * bi
    vu = _up(vv)
    bounds.append((_up(arb(vu).sqrt()) if vu > 0 else 0.0, (), None, "‖v‖"))
    level = [(j,) for j in range(m)]
    visited, pruned = 0, 0
    last = t0
    while level:
        nxt = []
        for A in level:
            if visited >= max_cliques or time.perf_counter() > deadline:
                return None
            visited += 1
            cl = _Clique(ctx, A)
            if len(A) >= 3:                 # pairs are decided exactly by the graph; larger sets by Farkas
                res = _socp(cl.C, cl.b, cl.nrm, margin=True)
                if res is not None and res[0] < 0 and cl.farkas_empty(res[2]):
                    pruned += 1
                    continue
            ub, src = _clique_upper(cl)
            bounds.append((ub, A, cl, src))
            last_j = A[-1]
            common = set.intersection(*(adj[j] for j in A))
            nxt.extend(A + (k,) for k in sorted(common) if k > last_j)
            if progress is not None and time.perf_counter() - last > 1.0:
                last = time.perf_counter()
                progress(visited, len(level) + len(nxt))
        level = nxt
    bounds.sort(key=lambda t: -t[0])
    upper = bounds[0][0]

    # ---- witnesses, from the largest bound down
    if net is None:
        from numerics.rob.bracket_net import BracketNet
        net = BracketNet(ctx.Wm, ctx.bm, np.array([float(a) for a in aq]), ctx.vm, True, 1.0,
                   exact=([list(r) for r in Wq], list(bq), list(aq), list(vq)))
    from numerics.rob.bracket_search import LowerSearch
    rng = np.random.default_rng(seed)
    srch = LowerSearch(net, rng, deadline)
    best = srch.best
    # the outside of every cap: random points, pushed off the caps they hit
    for _ in range(4):
        x = rng.standard_normal(d)
        x /= np.linalg.norm(x)
        if np.all(ctx.Wm @ x + ctx.bm < 0):
            srch.offer(x)
            break
    Wall = ctx.Wm
    for ub, A, cl, _src in bounds:
        if time.perf_counter() > deadline or ub <= best["low"] * (1 + 1e-12):
            break
        if cl is None:
            continue
        for x in _witness_points(cl, Wall, A, rng):
            srch.offer(x)
    if best["x"] is not None and best["low"] < upper / (1 + 1e-12) and time.perf_counter() < deadline:
        x0 = np.array([float(t) for t in best["x"]])   # polish: exact maxima along great circles through it
        srch.local_search(x0, iters=4, ndir=4, t_end=min(deadline, time.perf_counter() + 2.0))
    lower = best["low"]
    upper = max(upper, lower)
    status = "gap reached" if upper <= lower * (1 + rel_gap) else "gap open"
    top = [(ub, A, src) for ub, A, _cl, src in bounds[:5]]
    wp = best["x"]
    return CapBracket(lower, float(np.nextafter(upper, math.inf)), wp, best["pat"], visited, edges, n_exact,
                      pruned, time.perf_counter() - t0, status, top)


def _clique_upper(cl: _Clique) -> tuple[float, str]:
    """Proved upper bound of τ_A over K_A ∩ S: (‖g‖²_up − δ²)^{1/2}, δ ≤ min_{K_A} |g·x| by duality."""
    g2 = cl.G(0, 0)
    delta = arb(0)
    src = "δ = 0 (g·x = 0 on K_A, or not proved otherwise)"
    sols = []
    for sign in (1.0, -1.0):
        res = _socp(cl.C, cl.b, cl.nrm, obj=sign * cl.gz)
        sols.append(res)
        if res is None or res[0] <= 0:
            continue
        for y in (res[2], _polish_dual(cl, sign * cl.gz, res[1], res[2])):
            if y is None:
                continue
            lb = cl.dual_low(y, sign)
            if lb.lower() > 0 and lb.lower() > delta.lower():
                delta = arb(_lo(lb))
                src = f"δ = {float(delta):.6g} proved by an SOCP dual ({'+' if sign > 0 else '−'}g)"
    cl.sols = sols
    vu = _up(g2 - delta * delta)
    return (_up(arb(vu).sqrt()) if vu > 0 else 0.0), src


def _polish_dual(cl: _Clique, obj, z, y):
    """The solver's dual made exact to float precision on its active set: obj = Σ_S y_j w_j − μ z (μ ≥ 0 when
    ‖z‖ = 1), solved by least squares. Only a candidate: the bound it gives is proved (or not) by
    :meth:`_Clique.dual_low` like any other y ≥ 0."""
    if cl.k == 0:
        return None
    slack = cl.C @ z + cl.b
    S = np.flatnonzero((np.abs(slack) <= 1e-7 * (1 + cl.nrm)) | (y > 1e-9 * max(1.0, float(np.max(y)))))
    cols = [cl.C[S].T]
    on_sphere = abs(float(z @ z) - 1.0) < 1e-7
    if on_sphere:
        cols.append(-z[:, None])
    M = np.hstack(cols)
    if M.shape[1] == 0:
        return None
    sol, *_ = np.linalg.lstsq(M, obj, rcond=None)
    if np.any(sol < -1e-9):
        return None
    out = np.zeros(cl.k)
    out[S] = np.maximum(sol[:len(S)], 0.0)
    return out


def _witness_points(cl: _Clique, Wall, A, rng, etas=(1e-3, 3e-2)):
    """Float points of S^{d−1} near the maximiser of τ_A over K_A (offered to the exact check): the point of
    K_A with g·x = 0 (or nearly the least |g·x|) of largest margin, and convex combinations of the minimiser of
    |g·x| with the centre of K_A (margin ∝ λ, value lost ∝ λ)."""
    if not getattr(cl, "sols", None) or any(s is None for s in cl.sols):
        return []
    lo, hi = cl.sols[0][0], -cl.sols[1][0]          # range of g·z over K_A
    zs = []
    if lo < 0 < hi:
        res = _socp(cl.C, cl.b, cl.nrm, eq=(cl.gz, 0.0), margin=True)
        if res is not None and res[0] > 0:
            zs.append(res[1])
    else:
        zmin = cl.sols[0][1] if lo >= 0 else cl.sols[1][1]
        for eta in etas:
            target = lo + eta * (hi - lo) if lo >= 0 else hi - eta * (hi - lo)
            res = _socp(cl.C, cl.b, cl.nrm, eq=(cl.gz, target), margin=True)
            if res is not None and res[0] > 0:
                zs.append(res[1])
        cen = _socp(cl.C, cl.b, cl.nrm, margin=True)
        if cen is not None and cen[0] > 0:
            zs += [(1 - lam) * zmin + lam * cen[1] for lam in (1e-10, 1e-8, 1e-6, 1e-4)]
    out = []
    for z in zs:
        p = cl.Q @ z
        r2 = 1.0 - float(z @ z)
        if r2 <= 0:
            out.append(p / np.linalg.norm(p))
            continue
        out.append(p / np.linalg.norm(p))    # radial: stays in the caps of A (b ≤ 0), changes g·x
        for _ in range(2):
            e = _orth_direction(cl.Q, Wall, A, rng)
            if e is None:
                break
            for sgn in (1.0, -1.0):
                out.append(p + sgn * math.sqrt(r2) * e)
    return out


def _orth_direction(Q, Wall, A, rng):
    """A unit vector ⊥ span(Q); also ⊥ every hyperplane normal when the dimension allows (so that the lift to
    the sphere enters no further cap), else random in span(Q)^⊥."""
    d = Q.shape[0]
    e = rng.standard_normal(d)
    if Wall.shape[0] + Q.shape[1] < d:
        B, _ = np.linalg.qr(np.hstack([Q, Wall.T]))
    else:
        B = Q
    e -= B @ (B.T @ e)
    ne = float(np.linalg.norm(e))
    return None if ne < 1e-8 else e / ne

