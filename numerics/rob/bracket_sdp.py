r"""A proved upper bound of the tangential gradient over one cell ∩ S^{d−1}: Shor's relaxation with RLT cuts.

On the sphere the bracket's leaf pattern σ (cell C, gradient g) contributes sup_{x ∈ C ∩ S} ‖g‖² − (g·x)².
The relaxation "C meets the ball" loses the sphere: a cell whose part inside the ball crosses g^⊥ while its
part on the sphere stays away from it is bounded by ‖g‖ (the 1.6% stall of a d = 3, m = 6 net). Here

    min (g·x)²  s.t.  ‖x‖² = 1,  ℓ_j(x) = s_j(W_j·x + b_j) ≥ 0,

over the closed cell is bounded from below by the dual of its Shor relaxation with the products
ℓ_iℓ_j ≥ 0 (RLT): any t, λ ∈ R, μ ≥ 0, ν ≥ 0 with

    Q = [[0, 0], [0, ggᵀ]] − t E₀₀ − λ diag(−1, I) − Σ_j μ_j L_j − Σ_{i<j} ν_ij sym(l_i l_jᵀ)  ⪰ 0

(l_j = (s_j b_j, s_j W_j), L_j the matrix of ℓ_j as a quadratic form in z = (1, x)) prove
(g·x)² − t = zᵀQz + λ(‖x‖² − 1) + Σ μ_j ℓ_j + Σ ν_ij ℓ_iℓ_j ≥ 0 on the closed cell ∩ S, so
sup τ² ≤ ‖g‖² − t. The multipliers come from Clarabel's SDP; they are snapped to dyadic rationals, the
matrix is shifted by ε I (λ → λ − ε, t → t − 2ε, ε above the float λ_min deficit) and then checked PSD in
exact rationals (an LDLᵀ in flint fmpq). The solver is never trusted: a failed check gives no bound.
"""

from __future__ import annotations

import math
from fractions import Fraction

import clarabel
import numpy as np
import scipy.sparse as sp
from flint import fmpq, fmpq_mat

from numerics.rob.bracket_ia import snap_q, to_fmpq

__all__ = ["sphere_cell_bound", "psd_exact"]

MAX_RLT = 18          # products among at most this many constraints (the tightest at the SOCP point)
SQ2 = math.sqrt(2.0)


def _svec(M):
    n = M.shape[0]
    iu = np.triu_indices(n)
    # column-wise upper triangle: for j, for i ≤ j
    order = np.lexsort((iu[0], iu[1]))
    r, c = iu[0][order], iu[1][order]
    return M[r, c] * np.where(r == c, 1.0, SQ2)


def psd_exact(Q) -> bool:
    """Is the symmetric rational matrix Q (list of lists of fmpq) positive semidefinite? (exact LDLᵀ)"""
    A = [row[:] for row in Q]
    n = len(A)
    for k in range(n):
        p = A[k][k]
        if p < 0:
            return False
        if p == 0:
            if any(A[k][i] != 0 for i in range(k + 1, n)):
                return False
            continue
        for i in range(k + 1, n):
            f = A[i][k] / p
            if f == 0:
                continue
            for j in range(k + 1, i + 1):
                A[i][j] -= f * A[k][j]
                A[j][i] = A[i][j]
    return True


def _solve(g, Aw, c, pairs, gg, time_limit):
    """Clarabel on the dual: max t s.t. Q(t, λ, μ, ν) ⪰ 0, μ, ν ≥ 0, t ≤ ‖g‖². Returns (t, λ, μ, ν) floats."""
    n, d = Aw.shape
    D = d + 1
    G0 = np.zeros((D, D))
    G0[1:, 1:] = np.outer(g, g)
    E00 = np.zeros((D, D))
    E00[0, 0] = 1.0
    Dm = np.diag(np.r_[-1.0, np.ones(d)])
    cols = [_svec(E00), _svec(Dm)]
    Lfull = np.hstack([c[:, None], Aw])        # l_j = (c_j, a_j)
    for j in range(n):
        L = np.zeros((D, D))
        L[0, 0] = c[j]
        L[0, 1:] = L[1:, 0] = Aw[j] / 2
        cols.append(_svec(L))
    for i, j in pairs:
        R = np.outer(Lfull[i], Lfull[j])
        cols.append(_svec((R + R.T) / 2))
    Apsd = np.column_stack(cols)                  # svec(Q) = svec(G0) − Apsd·y
    nv = Apsd.shape[1]
    # nonnegativity of μ, ν (s = y_k ≥ 0 → row −e_k), and t ≤ ‖g‖² (s = gg − t)
    nn = nv - 2
    Ann = np.zeros((nn + 1, nv))
    Ann[np.arange(nn), 2 + np.arange(nn)] = -1.0
    Ann[nn, 0] = 1.0
    bnn = np.zeros(nn + 1)
    bnn[nn] = gg
    A = sp.csc_matrix(np.vstack([Ann, Apsd]))
    b = np.r_[bnn, _svec(G0)]
    q = np.zeros(nv)
    q[0] = -1.0
    st = clarabel.DefaultSettings()
    st.verbose = False
    st.time_limit = max(0.05, time_limit)
    cones = [clarabel.NonnegativeConeT(nn + 1), clarabel.PSDTriangleConeT(D)]
    try:
        sol = clarabel.DefaultSolver(sp.csc_matrix((nv, nv)), q, A, b, cones, st).solve()
    except Exception:
        return None
    y = np.array(sol.x)
    if y.size != nv or not np.all(np.isfinite(y)):
        return None
    return y[0], y[1], np.maximum(y[2:2 + n], 0.0), np.maximum(y[2 + n:], 0.0)


def sphere_cell_bound(Wq, bq, gq, idx, sg, x_hint=None, time_limit=1.0, cuts=()):
    """A proved lower bound t (fmpq) of min (g·x)² over the closed cell {s_j(W_j·x + b_j) ≥ 0, j ∈ idx} ∩ S,
    or None. Wq (fmpq_mat m × d), bq (list of fmpq), gq (list of fmpq, the exact gradient), sg (±1 floats);
    ``x_hint``: a point of the cell (the products are taken among the constraints tightest there). ``cuts``:
    float vectors u (exact binary rationals) adding the constraints u·x ≥ 0, a piece of the cell cut by
    hyperplanes through the origin (:func:`refine_sphere_cell`); they always enter the products."""
    idx = np.asarray(idx, int)
    n0, d = len(idx), len(gq)
    cuts = [np.asarray(u, float) for u in cuts]
    Wf = np.array([[float(Fraction(int(Wq[int(j), k].p), int(Wq[int(j), k].q))) for k in range(d)] for j in idx]
                  + [list(u) for u in cuts]).reshape(n0 + len(cuts), d)
    bf = np.array([float(Fraction(int(bq[int(j)].p), int(bq[int(j)].q))) for j in idx] + [0.0] * len(cuts))
    s = np.r_[np.asarray(sg, float), np.ones(len(cuts))]
    n = n0 + len(cuts)
    Aw, c = s[:, None] * Wf, s * bf
    nrm = np.maximum(np.linalg.norm(Aw, axis=1), 1e-300)
    Aw, c = Aw / nrm[:, None], c / nrm               # scaled rows: the same constraints, better conditioned
    g = np.array([float(Fraction(int(t.p), int(t.q))) for t in gq])
    gg = float(g @ g)
    if gg == 0.0:
        return None
    sel = np.arange(n)
    if n > MAX_RLT:
        slack = Aw @ x_hint + c if x_hint is not None else np.abs(c)
        slack[n0:] = -np.inf                           # the cuts first
        sel = np.sort(np.argsort(slack, kind="stable")[:MAX_RLT])
    pairs = [(int(sel[a]), int(sel[b])) for a in range(len(sel)) for b in range(a + 1, len(sel))]
    res = _solve(g, Aw, c, pairs, gg, time_limit)
    if res is None:
        return None
    t, lam, mu, nu = res
    if not t > 0:
        return None
    # exact data: l_j = (c_j, a_j) scaled by the same (float) factors, as rationals
    scale = [to_fmpq(1.0 / x) for x in nrm]   # any positive rational scaling keeps ℓ_j ≥ 0
    Lq = []
    for r, j in enumerate(idx):
        sj = 1 if s[r] > 0 else -1
        row = [sj * bq[int(j)] * scale[r]] + [sj * Wq[int(j), k] * scale[r] for k in range(d)]
        Lq.append(row)
    for r, u in enumerate(cuts, start=n0):
        Lq.append([fmpq(0)] + [to_fmpq(t) * scale[r] for t in u])
    D = d + 1
    base = np.zeros((D, D))
    base[1:, 1:] = np.outer(g, g)
    # the float Q of the snapped multipliers, for the shift ε
    mu_q = [snap_q(x, max(float(mu.max()), 1e-300)) for x in mu] if n else []
    nu_q = [snap_q(x, max(float(nu.max()), 1e-300)) for x in nu] if len(nu) else []
    lam_q = snap_q(lam, max(abs(lam), gg))
    t_q = snap_q(t, gg)

    NL = None
    if any(w != 0 for w in nu_q):   # Σ ν_ij sym(l_i l_jᵀ) = Lᵀ N L with N_ij = N_ji = ν_ij / 2
        Lm = fmpq_mat(n, D, [x for row in Lq for x in row])
        Nm = fmpq_mat(n, n, [0] * (n * n))
        for (i, j), w in zip(pairs, nu_q, strict=True):
            if w != 0:
                Nm[i, j] = Nm[j, i] = w / 2
        NL = Lm.transpose() * (Nm * Lm)

    def q_exact(eps):
        Q = [[fmpq(0)] * D for _ in range(D)]
        for a in range(d):
            for b in range(d):
                Q[1 + a][1 + b] = gq[a] * gq[b]
        Q[0][0] -= t_q - 2 * eps
        lam_e = lam_q - eps
        Q[0][0] += lam_e
        for a in range(d):
            Q[1 + a][1 + a] -= lam_e
        for r in range(n):
            if mu_q[r] == 0:
                continue
            lj = Lq[r]
            Q[0][0] -= mu_q[r] * lj[0]
            for a in range(d):
                h = mu_q[r] * lj[1 + a] / 2
                Q[0][1 + a] -= h
                Q[1 + a][0] -= h
        if NL is not None:
            for a in range(D):
                for b in range(D):
                    Q[a][b] -= NL[a, b]
        return Q

    Q0 = q_exact(fmpq(0))
    Qf = np.array([[float(Fraction(int(x.p), int(x.q))) for x in row] for row in Q0])
    lmin = float(np.linalg.eigvalsh((Qf + Qf.T) / 2)[0])
    eps = max(0.0, -lmin) + 1e-10 * gg
    for _ in range(3):
        e = snap_q(eps, eps, 20)
        if psd_exact(q_exact(e)):
            tb = t_q - 2 * e
            return tb if tb > 0 else None
        eps *= 16
    return None
