r"""Cells that float rounding makes or unmakes at the scale of 1e-17, decided in exact rationals: the needle between two
nearly coincident hyperplanes (its emptiness, and a point of it in the ball and on the sphere), caps at the boundary,
micro-cells around a point of S that several hyperplanes were meant to pass through (the sphere's zoom), and cells
that rounding leaves just beyond the boundary or touching it (the exact Farkas pair of a flat whose foot has
‖q‖ ≥ R: :func:`beyond_empty`, of which :func:`pinched_empty` is the point case). Every function proposes points to be
checked exactly by the caller, or proves emptiness exactly; none trusts a float.

Two float rows i, j that are equal up to rounding after scaling (W_j ≈ λW_i, b_j ≈ λb_i, as a net with cancelling
units of ±10⁶ has them) bound, with opposite sides, a cell that no float solver sees: with λ = W_jk/W_ik exactly
(k the largest coordinate of W_i), D = W_j − λW_i and c = b_j − λb_i are exact and tiny, and

    s_i u > 0,  s_j(λu + D·x + c) > 0,   u = W_i·x + b_i.

When s_i s_j λ < 0 (the two sides face each other) the cell is the needle 0 < s_i u < s_j(D·x + c)/|λ|: it exists
exactly where s_j(D·x + c) > 0. D and c are exact rationals and their floats carry full
relative precision however small they are, so the float LP

    max t  s.t.  s_l(W_l·x + b_l) ≥ t‖W_l‖ (the other rows),  s_j(D·x + c)/‖D‖ ≥ t,  W_i·x + b_i = 0,  ‖x‖ ≤ R

(an SOCP) is well scaled. From its point x̂ (exact binary rationals; pulled in by less than its margin when it
sits on the sphere) the needle's point is x = x̂ + ((u* − W_i·x̂ − b_i)/‖W_i‖²) W_i with u* half way across the
needle, computed exactly; the caller checks it exactly (:meth:`BracketNet.exact` and the pattern), so nothing here is
trusted. Used when the SOCP margin is ~0, no Farkas certificate exists and the zoom
finds no point. On the sphere the needle is a band of S ~1e-17 wide around a small circle: its point is placed on the
parallel circle half way across the band in arb arithmetic (2⁻²⁵⁶) and made an exact point of S by the inverse
stereographic map of a rounded projection (:mod:`numerics.rob.bracket_sphere_cells`), at the SOCP's point,
where g·x = 0 on the circle, and at the end of the band's arc where τ is largest (the constant is
often a supremum at a cell's boundary). Exactly parallel rows (D = 0) with s_j c > 0 bound a slab of constant width,
open along the whole plane: the same construction without the D row.
"""
from __future__ import annotations

import math
import weakref

import numpy as np
from flint import fmpq, fmpq_mat

from numerics.fallbacks import reach
from numerics.rob.bracket_ia import fmpq_float, snap_q, to_fmpq

__all__ = ["needle_point", "needle_empty", "needle_closed", "cap_points", "cap_rows", "pinched_empty", "beyond_empty",
           "facing_pairs", "needle_socps"]

COS_NEAR = 1e-9       # rows whose unit normals agree to this (and whose offsets agree to OFF_NEAR) are a pair
OFF_NEAR = 1e-6


_PAIRS = weakref.WeakKeyDictionary()    # net → its nearly coincident row pairs (they depend on the net alone)


def _near_pairs(net):
    """The unit pairs (i < j) whose unit normals agree to COS_NEAR up to sign and whose offsets agree to OFF_NEAR:
    found once per net (an m × m Gram matrix), not per cell."""
    pairs = _PAIRS.get(net)
    if pairs is None:
        nw = np.maximum(net.nW, 1e-300)
        U, off = net.W / nw[:, None], net.b / nw
        G = U @ U.T
        near = (np.abs(np.abs(G) - 1.0) <= COS_NEAR) & (np.abs(off[:, None] - np.sign(G) * off[None, :]) <= OFF_NEAR)
        pairs = [(int(i), int(j)) for i, j in zip(*np.nonzero(np.triu(near, 1)), strict=True)]
        _PAIRS[net] = pairs
    return pairs


def facing_pairs(net, idx, sg):
    """(p, q, i, j, λ, D, c): the pairs of nearly coincident rows of the cell (positions p < q in idx, units i, j)
    whose sides face each other, with the exact λ = W_jk/W_ik, D = W_j − λW_i, c = b_j − λb_i."""
    idx = np.asarray(idx, int)
    pos = np.full(net.m, -1)
    pos[idx] = np.arange(len(idx))
    found = sorted((min(pos[u], pos[w]), max(pos[u], pos[w])) for u, w in _near_pairs(net)
                   if pos[u] >= 0 and pos[w] >= 0)
    for p, q in found:
        p, q = int(p), int(q)
        i, j = int(idx[p]), int(idx[q])
        k = int(np.argmax(np.abs(net.W[i])))
        lam = net.Wq[j, k] / net.Wq[i, k]
        if not (sg[p] * sg[q] * fmpq_float(lam) < 0):
            continue                                   # the sides do not face each other: not a needle
        Dq = [net.Wq[j, col] - lam * net.Wq[i, col] for col in range(net.d)]
        yield p, q, i, j, lam, Dq, net.bq[j] - lam * net.bq[i]


def needle_socps(net, idx, sg, open_only: bool = True):
    """The needle SOCP of each facing pair of the cell, set up once for :func:`needle_point`, :func:`needle_closed` and
    :func:`numerics.rob.bracket_sphere_cells.sphere_needle_points`: (p, q, i, λ, D, c, ‖D‖, others, kw), D, c exact
    (:func:`facing_pairs`), ``others`` the positions of the cell's other rows and ``kw`` the keywords of
    :meth:`BracketNet.socp` on them: row p as the equality u = W_i·x + b_i = 0 and the needle's row
    s_j(D·x + c) ≥ t scaled by ‖D‖ (omitted for exactly parallel rows, D = 0, whose slab is then open everywhere on
    the plane: s_j c > 0; ``open_only`` skips the closed ones, s_j c ≤ 0, else every D = 0 pair is skipped)."""
    idx = np.asarray(idx, int)
    W, b = net.W[idx], net.b[idx]
    for p, q, i, _, lam, Dq, cq in facing_pairs(net, idx, sg):
        D, c = np.array([fmpq_float(t) for t in Dq]), fmpq_float(cq)
        nD = float(np.linalg.norm(D))
        if nD == 0.0 and not (open_only and (cq > 0 if sg[q] > 0 else cq < 0)):
            continue
        others = np.array([r for r in range(len(idx)) if r not in (p, q)], int)
        kw = dict(eq=(W[p], b[p]), extra=None if nD == 0.0 else (sg[q] * D[None] / nD, [sg[q] * c / nD]))
        yield p, q, i, lam, Dq, cq, nD, others, kw


def needle_empty(net, idx, sg) -> bool:
    """True when the pair alone proves the cell empty in the closed ball (so on the sphere too), exactly: with
    y_i = |λ|, y_j = 1, Σ y s W = s_j D and Σ y s b = s_j c, so s_j c ≤ 0 and c² ≥ R²‖D‖² leave no point of the
    ball where s_j(D·x + c) > 0, which the needle needs (the Farkas test of :meth:`BracketNet.farkas_exact` with
    the exact λ; a snapped float y misses it by far more than the needle's width)."""
    if not net.hyper_exact:
        return False
    R2 = net.R2q
    for _, q, _, _, _, Dq, cq in facing_pairs(net, idx, sg):
        T = cq if sg[q] > 0 else -cq
        if T <= 0 and T * T >= R2 * sum((t * t for t in Dq), fmpq(0)):
            return True
    return False


def needle_point(net, idx, sg):
    """An exact rational point (list of fmpq) proposed for the cell (signs sg on idx) when it is the needle of one
    pair of nearly coincident rows facing each other, else None. (A candidate only: the caller decides it exactly
    from the exact rows, so rows that are not exact floats are no obstacle.)"""
    if net.sphere:
        return None
    idx = np.asarray(idx, int)
    d = net.d
    # the needle opens where s_j(D·x + c) > 0: on u = 0 in the ball, with the other rows (exactly parallel rows that
    # are closed are left to a Farkas certificate)
    for p, q, i, lam, Dq, cq, _, others, kw in needle_socps(net, idx, sg):
        res = net.socp(idx[others], sg[others], **kw)
        if res is None or not res[0] > 0:
            continue
        t = float(res[0])
        # the SOCP's point may sit on the sphere or beyond it by the solver's tolerance: pulled in towards the foot x₀
        # of the plane u = 0 (its point nearest 0: the norm falls and u stays 0, so a needle inside a cap ~1e-6 deep
        # is not left, as it is by a radial shrink), then radially by its margin
        x0 = -float(net.b[i]) / float(net.nW[i]) ** 2 * net.W[i]
        pts = [x0 + f * (res[1] - x0) for f in (1.0, 1 - 1e-9, 1 - 1e-6, 0.999, 0.9, 0.5)]
        for xf in pts + [res[1] * (1.0 - 0.25 * min(t / net.R, 1e-3))]:
            xq = [to_fmpq(z) for z in xf]
            e = sum((Dq[col] * xq[col] for col in range(d)), fmpq(0)) + cq
            if not (e > 0 if sg[q] > 0 else e < 0):
                continue                                # (decided exactly) the needle is closed at this point
            # u* half way: s_i u ∈ (0, s_j e / |λ|) when s_i s_j λ < 0; u* = s_i s_j e / (2|λ|)
            lam_abs = lam if lam > 0 else -lam
            ustar = e / (2 * lam_abs) * int(sg[p] * sg[q])
            ui = sum((net.Wq[i, col] * xq[col] for col in range(d)), fmpq(0)) + net.bq[i]
            n2 = sum((net.Wq[i, col] ** 2 for col in range(d)), fmpq(0))
            step = (ustar - ui) / n2
            x = [xq[col] + step * net.Wq[i, col] for col in range(d)]
            if net.exact(x) is not None:
                reach("rob.bracket/needle_point_exact")
                return x
    return None


def cap_rows(net, idx, sg):
    """(position in idx, s_j) of the cell's rows whose side is a cap at the domain's edge: −s_j b_j ≥ (1 − 1e-6)R‖W_j‖
    (the hyperplane within 1e-6 of touching the sphere of radius R, its side away from the centre)."""
    return [(r, 1 if sg[r] > 0 else -1) for r, j in enumerate(np.asarray(idx, int))
            if net.nW[j] > 0 and -(1 if sg[r] > 0 else -1) * float(net.b[j]) >= (1 - 1e-6) * net.R * float(net.nW[j])]


def cap_points(net, idx, sg):
    """Exact rational points proposed for a cell cut off by a hyperplane that nearly touches the domain's boundary
    (a cap of depth ~2⁻⁴⁰, where the SOCP's margin is below its tolerance): for each such row j of the cell, on its
    side, the point half way between the hyperplane and the boundary along s_jW_j (ball: x = τ s_jW_j with rational τ
    strictly between the hyperplane's and the sphere's; sphere: the exact rational point of S nearest the float
    direction s_jW_j/‖W_j‖). Only candidates: the caller checks each exactly, with its pattern."""
    out = []
    idx = np.asarray(idx, int)
    for r, s in cap_rows(net, idx, sg):
        j = int(idx[r])
        nw = float(net.nW[j])
        w = [s * net.Wq[j, col] for col in range(net.d)]
        if net.sphere:
            out.append(net.rational_point(np.array([fmpq_float(t) for t in w]) / nw))
            continue
        n2 = sum((t * t for t in w), fmpq(0))
        lo = -s * net.bq[int(j)] / n2                     # τ at the hyperplane (> 0 here)
        Rq2 = net.R2q
        if not (lo > 0 and lo * lo * n2 < Rq2):
            continue                                      # the cap misses the open ball
        # τ = lo(1 + ε) with (1 + ε)² < R²/(lo²‖w‖²) exactly: inside the cap however thin, below any float's
        # resolution when the cap is a float-rounded tangency (depth ~1e-17)
        gap = Rq2 / (lo * lo * n2) - 1                    # (1 + ε)² < 1 + gap
        eps = fmpq(1, 4) if gap >= 1 else gap / 4
        tau = lo * (1 + eps)
        if tau * tau * n2 < Rq2:
            reach("rob.bracket/cap_point_exact")
            out.append([tau * t for t in w])
    return out


def _flat_foot(net, rows, with_rows: bool = False):
    """The point nearest 0 of the flat where the given rows (nearest first) vanish, exactly: rows are taken greedily
    while they raise the rank and keep the system consistent (at most d), then p = Aᵀμ, μ = (AAᵀ)⁻¹(−b_A). None if
    none. ``with_rows``: (p, the rows taken, μ)."""
    d = net.d
    sel, rank = [], 0
    for j in rows:
        trial = sel + [j]
        M = fmpq_mat(len(trial), d + 1, [v for r in trial for v in ([net.Wq[r, c] for c in range(d)] + [-net.bq[r]])])
        Mw = fmpq_mat(len(trial), d, [net.Wq[r, c] for r in trial for c in range(d)])
        rw, ra = Mw.rref()[1], M.rref()[1]
        if rw == rank + 1 and ra == rw:               # independent and consistent
            sel, rank = trial, rw
            if rank == d:
                break
    if not sel:
        return None
    A = fmpq_mat(len(sel), d, [net.Wq[r, c] for r in sel for c in range(d)])
    rhs = fmpq_mat(len(sel), 1, [-net.bq[r] for r in sel])
    try:
        mu = (A * A.transpose()).solve(rhs)
    except ZeroDivisionError:
        return None
    P = A.transpose() * mu
    p = [P[c, 0] for c in range(d)]
    return (p, sel, [mu[k, 0] for k in range(len(sel))]) if with_rows else p


def pinched_empty(net, idx, sg, x) -> bool:
    """True when the closed cell meets the closed ball only at one point p of the sphere, proved exactly, so that the
    open cell misses S (the sphere's cells pinched at a point that several hyperplanes pass through, or at the point
    where their common flat touches S): p is the point nearest 0 of the flat of the rows tight at the solver's point x
    (:func:`_flat_foot`), ‖p‖ = R exactly, and y ≥ 0 on the rows through p with
    Σ y_j s_j W_j = p exactly; then Σ y_j s_j(W_j·x + b_j) = p·x − R² ≤ 0 on the closed ball, while it is > 0 on the
    open cell (the Farkas test of the ball with T = −R², ‖N‖ = R: the equality case a snapped multiplier misses)."""
    from scipy.optimize import linprog

    if x is None:
        return False
    idx = np.asarray(idx, int)
    d = net.d
    W, b, nw = net.W[idx], net.b[idx], net.nW[idx]
    res_n = np.abs(W @ x + b) / (nw + np.abs(b))
    near = [int(t) for t in np.argsort(res_n, kind="stable") if res_n[t] <= 1e-3]   # a guess, decided exactly below
    p = _flat_foot(net, [int(idx[t]) for t in near])
    if p is None or sum((t * t for t in p), fmpq(0)) != net.R2q:
        return False
    reach("rob.bracket/pinched_exact")
    tight = np.array([t for t in near
                      if sum((net.Wq[int(idx[t]), c] * p[c] for c in range(d)), fmpq(0)) + net.bq[int(idx[t])] == 0])
    rows = [int(idx[t]) for t in tight]
    # y ≥ 0 with Σ y s W = p: a basic solution from HiGHS, then exactly on its support
    ssub = np.asarray(sg, float)[tight]
    A = (ssub[:, None] * W[tight]).T
    pf = np.array([fmpq_float(t) for t in p])
    res = linprog(np.ones(len(rows)), A_eq=A, b_eq=pf, bounds=(0, None), method="highs-ds")
    if res.status != 0:
        return False
    sup = [k for k in range(len(rows)) if res.x[k] > 1e-12 * max(1.0, float(np.max(res.x)))]
    if not sup or len(sup) > d:
        return False
    S = fmpq_mat(d, len(sup), [int(ssub[k]) * net.Wq[rows[k], c] for c in range(d) for k in sup])
    P = fmpq_mat(d, 1, p)
    try:
        St = S.transpose()
        y = (St * S).solve(St * P)
    except ZeroDivisionError:
        return False
    if any(y[k, 0] < 0 for k in range(len(sup))) or S * y != P:
        return False
    return any(y[k, 0] > 0 for k in range(len(sup)))


def beyond_empty(net, idx, sg, x, max_subsets: int = 64) -> bool:
    """True when the closed cell meets the closed ball at most at one point of the sphere, proved exactly, for a cell
    that rows meant to touch the sphere (or to meet on it) leave, after float rounding, ~1e-17 beyond it or exactly at
    it: a set of rows of the cell through ~x whose flat's point nearest 0, q (exact, :func:`_flat_foot`), has
    ‖q‖ ≥ R, with q = Σ y_j s_j W_j for y ≥ 0 (y ≠ 0) on those rows. Then Σ y_j s_j b_j = −‖q‖² (the rows vanish
    at q), so N = q and T = −‖q‖² pass the ball's Farkas test in its exact rational form, T ≤ 0 and T² ≥ R²‖N‖²:
    Σ y_j s_j(W_j·x + b_j) = q·x − ‖q‖² ≤ R‖q‖ − ‖q‖² ≤ 0 on the closed ball, while it is > 0 on the open cell. No
    norm is taken, so the tangent case ‖q‖ = R is decided too (a flat of any dimension tangent to the sphere, of which
    :func:`pinched_empty` is the point case). The row sets tried: all rows through ~x (greedily independent), the
    support of the LP min x̂·ζ over the cell near x (HiGHS), and the subsets of the rows through ~x by size (at most
    ``max_subsets``)."""
    from itertools import combinations, islice

    from scipy.optimize import linprog

    if not net.hyper_exact or x is None or not np.all(np.isfinite(x)):
        return False
    idx = np.asarray(idx, int)
    d = net.d
    W, b, nw = net.W[idx], net.b[idx], net.nW[idx]
    res_n = np.abs(W @ x + b) / (nw + np.abs(b))
    near = [int(k) for k in np.argsort(res_n, kind="stable") if res_n[k] <= 1e-6]
    if not near:
        return False
    # every subset's flat contains the flat of all the rows through ~x, so its foot is no farther from 0: when those
    # rows meet (in floats) well inside the ball, no subset can give ‖q‖ ≥ R (a filter; the decision stays exact)
    Un = W[near] / nw[near][:, None]
    q_all = np.linalg.lstsq(W[near], -b[near], rcond=None)[0]
    if np.min(np.linalg.svd(Un, compute_uv=False)) >= 1e-6 and \
            np.all(np.abs(W[near] @ q_all + b[near]) <= 1e-9 * (nw[near] + np.abs(b[near]))) and \
            float(np.linalg.norm(q_all)) < net.R * (1 - 1e-6):
        return False                       # (well conditioned only: nearly parallel rows meet far away exactly)
    cands = [near]
    xn = x / max(np.linalg.norm(x), 1e-300)
    lp = linprog(xn, A_ub=-sg[near][:, None] * W[near], b_ub=sg[near] * (W[near] @ x + b[near]),
                 bounds=[(-1.0, 1.0)] * d, method="highs-ds")
    if lp.status == 0:
        mu = -np.asarray(lp.ineqlin.marginals, float)
        cands.append([near[k] for k in np.flatnonzero(mu > 1e-12 * max(1.0, float(np.max(mu))))])
    by_size = (list(c) for r in range(1, min(d, len(near)) + 1) for c in combinations(near, r))
    cands += list(islice(by_size, max_subsets))
    seen = set()
    for sup in cands:
        key = tuple(sorted(sup))
        if not sup or key in seen:
            continue
        seen.add(key)
        qf = np.linalg.lstsq(W[sup], -b[sup], rcond=None)[0]     # the flat's foot in floats: a filter only,
        if float(np.linalg.norm(qf)) < net.R * (1 - 1e-6) and \
                np.min(np.linalg.svd(W[sup] / nw[sup][:, None], compute_uv=False)) >= 1e-6:
            continue                                              # and only where the rows are well conditioned
        found = _flat_foot(net, [int(idx[k]) for k in sup], with_rows=True)
        if found is None:
            continue
        q, rows, mu = found
        q2 = sum((t * t for t in q), fmpq(0))
        if not (q2 > 0 and q2 >= net.R2q):
            continue
        reach("rob.bracket/beyond_exact")
        sgn = {int(idx[k]): (1 if sg[k] > 0 else -1) for k in sup}
        y = [mu[a] * sgn[r] for a, r in enumerate(rows)]       # Σ y_j s_j W_j = Σ μ_j W_j = q exactly
        if any(t < 0 for t in y) or not any(t > 0 for t in y):
            continue
        T = sum((mu[a] * net.bq[r] for a, r in enumerate(rows)), fmpq(0))
        if T <= 0 and T * T >= net.R2q * q2:
            return True
    return False


def needle_closed(net, idx, sg) -> bool:
    """True when a needle of the cell is closed wherever the cell's other rows hold in the closed ball, proved
    exactly (:func:`needle_empty` argues from the pair alone). On the cell, u = W_i·x + b_i has s_i u > 0 and the
    needle's row s_j(D·x + c) = s_j(W_j·x + b_j) + |λ| s_i u is > 0. The SOCP of :func:`needle_point` — max t s.t.
    (other rows) ≥ t‖·‖, s_j(D·x + c)/‖D‖ ≥ t, u = 0, ‖x‖ ≤ R (well scaled) — gives, when t* < 0, multipliers y ≥ 0 of
    the other rows, y_n of the needle's row and μ of u = 0 (free). They are snapped to rationals and spread over the
    cell's own rows: y_n/‖D‖ on row j, y_n|λ|/‖D‖ ± μ s_i on row i (either sign is tried; it must be ≥ 0), so that
    N = Σ y s W and T = Σ y s b are exact (the pair's cancellation is left to rationals, not to rounding) and
    T ≤ 0, T² ≥ R²‖N‖² is the ball's Farkas test. Used on the ball and the sphere (the closed ball contains S)."""
    if not net.hyper_exact:
        return False
    idx = np.asarray(idx, int)
    d = net.d
    for p, q, i, lam, _, _, nD, others, kw in needle_socps(net, idx, sg, open_only=False):
        j = int(idx[q])
        res = net.socp(idx[others], sg[others], eq_dual=True, **kw)
        if res is None or not res[0] < 0:
            continue
        y, mu = np.asarray(res[2], float), float(res[3])
        if y.size != len(others) + 1 or not np.all(np.isfinite(y)) or not math.isfinite(mu) or not np.max(y) > 0:
            continue
        mx = max(float(np.max(y)), abs(mu))
        yq = [snap_q(float(t), mx, 30) for t in y]     # (y ≥ 0: the grid keeps it ≥ 0)
        nDq = to_fmpq(nD)
        lam_abs = lam if lam > 0 else -lam
        si = 1 if sg[p] > 0 else -1
        sgn = {int(idx[r]): (1 if sg[r] > 0 else -1) for r in range(len(idx))}
        for mu_s in (mu, -mu):
            muq = snap_q(abs(mu_s), mx, 30) * (1 if mu_s >= 0 else -1)
            coef = {j: yq[-1] / nDq, i: yq[-1] * lam_abs / nDq + muq * si}
            if coef[i] < 0:
                continue
            for k, r in enumerate(others):
                if yq[k] != 0:
                    coef[int(idx[r])] = coef.get(int(idx[r]), fmpq(0)) + yq[k]
            if all(v == 0 for v in coef.values()):
                continue
            N = [sum((v * sgn[u] * net.Wq[u, col] for u, v in coef.items()), fmpq(0)) for col in range(d)]
            T = sum((v * sgn[u] * net.bq[u] for u, v in coef.items()), fmpq(0))
            reach("rob.bracket/needle_closed_exact")
            if T <= 0 and T * T >= net.R2q * sum((t * t for t in N), fmpq(0)):
                return True
    return False
