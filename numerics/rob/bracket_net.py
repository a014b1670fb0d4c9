r"""The net of a certified Lipschitz bracket (:func:`numerics.rob.bracket.certified_bracket`) and its decisions.

:class:`BracketNet` holds the float data with interval enclosures and the exact rationals, and decides, for one
domain (ball or sphere): a candidate point's exact value and cell; node bounds (the Shor bound of the zonotope of
the free units) and leaf enumerations, in interval arithmetic; cell feasibility by SOCP; infeasibility by Farkas
certificates checked in interval arithmetic or, at ties, in exact rationals (:meth:`BracketNet.farkas_exact`); tiny
cells of hyperplanes that nearly meet at one point (:meth:`BracketNet.zoom`); and the sphere cell bound. Every
float a solver returns is only a candidate: what it proposes is checked (see the module docstring of
:mod:`numerics.rob.bracket` for the bounds and their proofs).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import clarabel
import numpy as np
import scipy.sparse as sp
from flint import fmpq, fmpq_mat

from numerics.fallbacks import reach
from numerics.rob.bracket_ia import (
    TINY,
    U,
    fmpq_float,
    gamma_n,
    iv_add,
    iv_matmul,
    norm_up,
    pow2_q,
    round_up,
    scale_exponent,
    shor_bound,
    sqrt_up_q,
    to_fmpq,
)
from numerics.rob.bracket_sdp import sphere_cell_bound

__all__ = ["BracketNet", "SRC_SHOR", "SRC_TRIANGLE"]

# the zoom's wider boxes (in units of κ) when the unit box is infeasible and no certificate is found
WIDER_BOXES = (2.0 ** 4, 2.0 ** 8, 2.0 ** 12, 2.0 ** 16, 2.0 ** 20)

# where a node's upper bound comes from (reported per node by numerics.rob.bracket.Bracket.sources)
SRC_SHOR = "zonotope: Shor dual"
SRC_TRIANGLE = "zonotope: triangle"


def _exact_float(x) -> bool:
    return not isinstance(x, Fraction) or Fraction(float(x)) == x



class BracketNet:
    """The net of a bracket: float data with interval enclosures, the exact rationals, and the SOCP, Farkas and zoom
    decisions of one domain (ball or sphere)."""

    def __init__(self, W, b, a, v, sphere, R, exact=None):
        self.W, self.b, self.a, self.v = W, b, a, v
        self.m, self.d = W.shape
        self.Rq = Fraction(1) if sphere else Fraction(R)
        self.R2q = to_fmpq(self.Rq) ** 2          # R² as a flint rational, for the exact decisions
        self.sphere, self.R = sphere, float(self.Rq)
        Wx, bx, ax, vx = exact if exact is not None else (W.tolist(), b.tolist(), a.tolist(), v.tolist())
        self.Wq = fmpq_mat(self.m, self.d, [to_fmpq(t) for row in Wx for t in row])
        self.bq = [to_fmpq(t) for t in bx]
        aq = [to_fmpq(t) for t in ax]
        self.Aq = fmpq_mat(self.m, self.d, [aq[j] * self.Wq[j, l] for j in range(self.m) for l in range(self.d)])
        self.vq = [to_fmpq(t) for t in vx]
        # α_j = a_j W_j enclosed around its correctly rounded float: |fl(q) − q| ≤ u|fl(q)|(1 + u)
        self.Am = np.array([[float(Fraction(int(self.Aq[j, l].p), int(self.Aq[j, l].q))) for l in range(self.d)]
                            for j in range(self.m)], float).reshape(self.m, self.d)
        self.Ar = round_up(2 * U * np.abs(self.Am))
        self.v_rad = round_up(2 * U * np.abs(np.asarray(v, float)))
        # Farkas pruning evaluates the hyperplanes in floats: only sound when W and b are exact floats
        self.hyper_exact = all(_exact_float(t) for row in Wx for t in row) and all(_exact_float(t) for t in bx)
        self.nW = np.linalg.norm(W, axis=1)
        self.absorbed_by = self._cancelling_pairs(Wx, bx, ax)

    @staticmethod
    def _cancelling_pairs(Wx, bx, ax) -> np.ndarray:
        """absorbed_by[j] = k ≥ 0 when units j, k cancel exactly — parallel hyperplanes with the same orientation
        (W_k = λW_j, λ > 0) and α_k = −α_j, so that their on-sets are nested — and j's on-set is the smaller
        (b_j < b_k/λ, or equal: then the pair is always 0 and k is absorbed by j in turn); −1 otherwise. Decided
        in exact rationals. While both are free, the pair's gradients are {0, α_k} (both off, k alone, both on
        = 0): the node bound keeps k as the pair's one generator (:meth:`node_bound`)."""
        m = len(Wx)
        out = -np.ones(m, int)
        groups: dict[tuple, list[int]] = {}
        for j in range(m):
            w = [Fraction(t) if isinstance(t, Fraction) else Fraction(float(t)) for t in Wx[j]]
            piv = next((abs(t) for t in w if t != 0), None)
            if piv is None:
                continue
            groups.setdefault(tuple(t / piv for t in w), []).append(j)
        for js in groups.values():
            if len(js) < 2:
                continue
            # unit j in the units of the group's direction u: W_j = λ_j u, a_j λ_j is its α along u, b_j/λ_j its offset
            key = {}
            for j in js:
                w = [Fraction(t) if isinstance(t, Fraction) else Fraction(float(t)) for t in Wx[j]]
                piv = next(abs(t) for t in w if t != 0)
                aj = Fraction(ax[j]) if isinstance(ax[j], Fraction) else Fraction(float(ax[j]))
                bj = Fraction(bx[j]) if isinstance(bx[j], Fraction) else Fraction(float(bx[j]))
                key[j] = (aj * piv, bj / piv)
            free = list(js)
            while free:
                j = free.pop(0)
                if key[j][0] == 0:
                    continue
                k = next((k for k in free if key[k][0] == -key[j][0]), None)
                if k is None:
                    continue
                free.remove(k)
                small, big = (j, k) if key[j][1] <= key[k][1] else (k, j)
                out[small] = big
                if key[j][1] == key[k][1]:       # coincident: the pair is 0 everywhere, both absorbed
                    out[big] = small
        return out

    def free_generators(self, Ui) -> np.ndarray:
        """The free units that carry the node's zonotope: Ui without the units absorbed by a free partner."""
        Ui = np.asarray(Ui, int)
        part = self.absorbed_by[Ui]
        if not np.any(part >= 0):
            return Ui
        isfree = np.zeros(self.m, bool)
        isfree[Ui] = True
        drop = (part >= 0) & isfree[np.maximum(part, 0)]
        both = drop & (self.absorbed_by[np.maximum(part, 0)] == Ui)   # coincident pairs: both go
        keep = ~drop
        keep[both] = False
        return Ui[keep]

    # ---------- exact evaluation of candidate points ----------
    def exact(self, xq):
        """xq: list of fmpq. Returns (value², pattern) if xq is a genuine point, else None."""
        d, m = self.d, self.m
        n2 = sum((t * t for t in xq), fmpq(0))
        if self.sphere:
            if n2 != 1:
                return None
        elif not n2 < self.R2q:
            return None
        Z = self.Wq * fmpq_mat(d, 1, xq)
        pat = []
        for j in range(m):
            z = Z[j, 0] + self.bq[j]
            if z == 0:
                return None
            pat.append(z > 0)
        G = fmpq_mat(1, m, [fmpq(int(p)) for p in pat]) * self.Aq
        g = [G[0, l] + self.vq[l] for l in range(d)]
        val = sum((t * t for t in g), fmpq(0))
        if self.sphere:
            gx = sum((g[l] * xq[l] for l in range(d)), fmpq(0))
            val -= gx * gx
        return val, tuple(pat)

    def rational_point(self, x):
        if not self.sphere:
            return [to_fmpq(t) for t in x]
        x = x / np.linalg.norm(x)
        k = int(np.argmax(np.abs(x)))
        sgn = -1.0 if x[k] > 0 else 1.0          # pole N = sgn e_k, x ≈ -N
        y = x / (1.0 - sgn * x[k])
        yq = [to_fmpq(t) for t in y]
        yq[k] = fmpq(0)
        s = sum((t * t for t in yq), fmpq(0))
        den = s + 1
        xq = [2 * t / den for t in yq]
        xq[k] = (s - 1) * int(sgn) / den
        return xq

    def fvalue(self, X):
        """Float values (heuristic) at points X (n, d)."""
        S = (X @ self.W.T + self.b) > 0
        G = self.v + S @ self.Am
        val = np.sum(G * G, axis=1)
        if self.sphere:
            val = val - np.sum(G * X, axis=1) ** 2
        return np.sqrt(np.maximum(val, 0)), G

    def enum_bounds(self, cm, cr, Ui):
        """Rigorous upper bounds of ‖g‖ for all 2^k patterns of the free units Ui."""
        k = len(Ui)
        S = ((np.arange(2 ** k)[:, None] >> np.arange(k)[None]) & 1).astype(float)  # (2^k, k)
        Gm, Gr = iv_matmul(S, np.zeros_like(S), self.Am[Ui], self.Ar[Ui]) if k else (np.zeros((1, self.d)),) * 2
        Gm, Gr = iv_add(Gm, Gr, cm[None], cr[None])
        X = np.abs(Gm) + Gr
        ub = round_up(np.sqrt(np.sum(X * X, axis=1)), self.d + 4)
        return S.astype(bool), ub, Gm, Gr

    # ---------- SOCP ----------
    def socp(self, idx, sg, eq=None, obj=None, tfix=None, cuts=(), extra=None, eq_dual=False):
        """max t s.t. s_j(W_j x + b_j) ≥ t‖W_j‖ (j ∈ idx), ‖x‖ ≤ R, t ≤ 1 (tfix: t fixed, maximise obj·x);
        ``cuts``: vectors u adding u·x ≥ t‖u‖ (after the sign rows); ``extra``: rows (E, e) adding E_k·x + e_k ≥
        t‖E_k‖; ``eq``: a vector w (w·x = 0) or a pair (w, β) (w·x + β = 0). Returns (t, x, y) with y the duals of
        the sign rows (and of the cuts and extra rows)."""
        d = self.d
        idx = np.asarray(idx, int)
        W, b, nw = self.W[idx], self.b[idx], self.nW[idx]
        if len(cuts):
            U_ = np.asarray(cuts, float).reshape(-1, d)
            W, b, nw = np.vstack([W, U_]), np.r_[b, np.zeros(len(U_))], np.r_[nw, np.linalg.norm(U_, axis=1)]
            sg = np.r_[sg, np.ones(len(U_))]
        if extra is not None:
            E_, e_ = np.asarray(extra[0], float).reshape(-1, d), np.asarray(extra[1], float).ravel()
            W, b, nw = np.vstack([W, E_]), np.r_[b, e_], np.r_[nw, np.linalg.norm(E_, axis=1)]
            sg = np.r_[sg, np.ones(len(e_))]
        n = len(b)
        rows = [np.hstack([-sg[:, None] * W, (nw if tfix is None else 0 * nw)[:, None]])]
        rhs = [sg * b - (0 if tfix is None else tfix * nw)]
        cones = []
        if eq is not None:
            w_eq, beta = eq if isinstance(eq, tuple) else (eq, 0.0)
            rows.insert(0, np.hstack([w_eq, 0.0])[None])
            rhs.insert(0, np.array([-float(beta)]))
            cones.append(clarabel.ZeroConeT(1))
        rows.append(np.hstack([np.zeros(d), 1.0])[None])
        rhs.append(np.ones(1))
        cones.append(clarabel.NonnegativeConeT(n + 1))
        rows.append(np.zeros((1, d + 1)))
        rows.append(np.hstack([-np.eye(d), np.zeros((d, 1))]))
        rhs += [np.array([self.R]), np.zeros(d)]
        cones.append(clarabel.SecondOrderConeT(d + 1))
        A = sp.csc_matrix(np.vstack(rows))
        q = np.zeros(d + 1)
        if tfix is None:
            q[d] = -1.0
        else:
            q[:d] = -obj
        st = clarabel.DefaultSettings()
        st.verbose = False
        st.time_limit = max(0.05, min(5.0, self.deadline - time.perf_counter()))
        try:
            sol = clarabel.DefaultSolver(sp.csc_matrix((d + 1, d + 1)), q, A, np.concatenate(rhs), cones, st).solve()
        except Exception:
            return None
        x = np.array(sol.x)
        if x.size != d + 1 or not np.all(np.isfinite(x)):
            return None
        z = np.array(sol.z)
        off = 0 if eq is None else 1
        if eq_dual:                                    # (the equality's multiplier too: free in sign)
            return x[d], x[:d], np.maximum(z[off:off + n], 0.0), float(z[0]) if eq is not None else 0.0
        return x[d], x[:d], np.maximum(z[off:off + n], 0.0)

    def dual_low(self, idx, sg, y, gm, gr):
        """Rigorous lower bound of g·x over {‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0}, g ∈ [gm ± gr], from y ≥ 0:
        g·x ≥ (g − Σ y_j s_j W_j)·x − Σ y_j s_j b_j ≥ −R‖g − z‖ − T."""
        if not self.hyper_exact:
            return -math.inf
        return float(self._dual_low_rows(idx, sg, np.asarray(y, float)[None], np.asarray(gm)[None],
                                         np.asarray(gr)[None])[0])

    def _dual_low_rows(self, idx, sg, Y, Gm, Gr):
        """:meth:`dual_low` for many (y, g) at once: row r of Y (≥ 0, one entry per constraint of idx) with the
        ball [Gm ± Gr] of row r; W and b taken as exact (``hyper_exact``)."""
        Ys = Y * sg[None, :]                              # y_j s_j: exact (s = ±1)
        zk = np.zeros_like(Ys)
        Zm, Zr = iv_matmul(Ys, zk, self.W[idx])
        Dm, Dr = iv_add(Gm, Gr, -Zm, Zr)
        N_up = round_up(self.R * round_up(np.sqrt(np.sum((np.abs(Dm) + Dr) ** 2, axis=1)), self.d + 4))
        Tm, Tr = iv_matmul(Ys, zk, self.b[idx][:, None])
        T_up = Tm[:, 0] + Tr[:, 0]
        T_up = T_up + 4 * U * np.abs(T_up) + TINY
        return -T_up - N_up - 4 * U * (np.abs(T_up) + N_up) - TINY   # minus the rounding of -T_up - N_up

    def implied_signs(self, idx, sg, Ui, x, iters: int = 40):
        """The free units of ``Ui`` whose sign is the same on the whole region {‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0 (j ∈
        idx)}: (units, signs), each proved. A unit can only keep the sign σ it has at the region's point ``x``; it is
        proved by y ≥ 0 with σ(W_u·x' + b_u) ≥ σb_u − Σ y_j s_j b_j − R‖σW_u − Σ y_j s_j W_j‖ > 0 for every x' of the
        region (the bound of :meth:`dual_low`, in interval arithmetic). y comes from a few projected-gradient steps
        of the non-negative least squares of σW_u on the rows s_j W_j, every unit at once; it is only a candidate,
        the inequality is what is checked. Deep in the tree most hyperplanes miss the node's small region: fixing
        them takes them out of the node's zonotope."""
        Ui = np.asarray(Ui, int)
        none = (np.zeros(0, int), np.zeros(0))
        if not self.hyper_exact or len(idx) == 0 or len(Ui) == 0:
            return none
        idx = np.asarray(idx, int)
        z = self.W[Ui] @ x + self.b[Ui]
        sig = np.sign(z)
        Ui, sig = Ui[sig != 0], sig[sig != 0]
        if len(Ui) == 0:
            return none
        Ws = sg[:, None] * self.W[idx]                    # k × d, exact (s = ±1)
        G = sig[:, None] * self.W[Ui]                     # n_u × d, exact
        L = float(np.sum(Ws * Ws)) + 1e-300               # ≥ λ_max(Ws Wsᵀ)
        Y = np.zeros((len(idx), len(Ui)))
        Zp, t = Y, 1.0
        WG = Ws @ G.T
        WW = Ws @ Ws.T
        for _ in range(iters):                            # FISTA on ½‖Wsᵀy − g‖², y ≥ 0, per column
            Yn = np.maximum(Zp - (WW @ Zp - WG) / L, 0.0)
            tn = (1 + math.sqrt(1 + 4 * t * t)) / 2
            Zp, Y, t = Yn + ((t - 1) / tn) * (Yn - Y), Yn, tn
        low = self._dual_low_rows(idx, sg, Y.T, G, np.zeros_like(G))   # σW_u·x' ≥ low on the region
        sb = sig * self.b[Ui]
        low = low + sb - 4 * U * (np.abs(low) + np.abs(sb)) - TINY
        ok = low > 0
        return Ui[ok], sig[ok]

    def farkas(self, idx, sg, y):
        """Proves that no open cell with the signs sg on idx meets the open ball, from y ≥ 0: in interval
        arithmetic {‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0} = ∅, else exactly (:meth:`farkas_exact`)."""
        if y is None or not np.any(y > 0):
            return False
        if not self.hyper_exact:
            return self.farkas_exact(idx, sg, y)
        ys = y * sg
        zm, zr = iv_matmul(ys[None], np.zeros((1, len(y))), self.W[idx])
        Tm, Tr = iv_matmul(ys[None], np.zeros((1, len(y))), self.b[idx])
        T_up = float(Tm[0]) + float(Tr[0])
        T_up = T_up + 4 * U * abs(T_up) + TINY              # upper bound of T despite the rounding of +
        N_up = round_up(self.R * norm_up(zm[0], zr[0]))
        return T_up + N_up + 4 * U * (abs(T_up) + N_up) + TINY < 0 or self.farkas_exact(idx, sg, y)

    def farkas_exact(self, idx, sg, y):
        """Degenerate certificates, checked in exact rationals: y' ≥ 0, y' ≠ 0 with T = Σ y'_j s_j b_j ≤ 0
        and T² ≥ R²‖Σ y'_j s_j W_j‖² prove that {‖x‖ < R, s_j(W_j x + b_j) > 0 ∀j} is empty (else
        Σ y'_j s_j(W_j x + b_j) > 0 but it is < R‖Σ y' s W‖ + T ≤ 0, or = T ≤ 0 when Σ y' s W = 0). This
        decides repeated and opposite hyperplanes and kinks tangent to the ball, where the closed system is
        feasible. y' is the solver's y snapped to a grid, or its projection onto the kernel of [s_j W_j]; when
        those fail (an interior-point y has a large support: concurrent hyperplanes), a basic solution of the LP
        min Σ y_j s_j b_j s.t. Σ y_j s_j W_j = 0, Σ y = 1, y ≥ 0 (HiGHS, support ≤ d + 1) is tried the same way."""
        reach("rob.bracket/farkas_exact")
        y = np.maximum(np.asarray(y, float), 0.0)
        if not (y.size and np.max(y) > 0 and math.isfinite(float(np.max(y)))):
            return False
        return self._try_certificate(idx, sg, y, 1e-7) or self._try_certificate(idx, sg, self._basic_kernel_y(idx, sg))

    def _try_certificate(self, idx, sg, y, rel: float = 1e-9) -> bool:
        """The exact test of :meth:`_certificate_exact` on the support of the float candidate y ≥ 0 (entries above
        ``rel`` × its largest; at most 2d + 2 of them); False for no candidate."""
        if y is None:
            return False
        y = np.maximum(np.asarray(y, float), 0.0)
        mx = float(np.max(y)) if y.size else 0.0
        if not mx > 0 or not math.isfinite(mx):
            return False
        S = np.flatnonzero(y > rel * mx)
        return bool(S.size <= 2 * self.d + 2 and self._certificate_exact(idx, sg, S, y[S] / mx))

    def _basic_kernel_y(self, idx, sg, r=None):
        """A vertex of {y ≥ 0, Σ y = 1, Σ y_j s_j W_j = 0} minimising Σ y_j s_j b_j, when that minimum is ≤ 0
        (floats from HiGHS; only a candidate: the certificate is checked exactly). ``r``: the rows' offsets to use
        in the objective instead of b — the zoom's rescaled residuals r_j/κ at the common point, which give the
        same sign of Σ y_j s_j b_j on the kernel (Σ y_j s_j W_j = 0) but are well scaled for the solver."""
        from scipy.optimize import linprog

        W = self.W[np.asarray(idx, int)]
        b = self.b[np.asarray(idx, int)] if r is None else np.asarray(r, float)
        Aeq = np.vstack([(sg[:, None] * W).T, np.ones((1, len(idx)))])
        beq = np.r_[np.zeros(self.d), 1.0]
        try:
            res = linprog(sg * b, A_eq=Aeq, b_eq=beq, bounds=(0, None), method="highs-ds")
        except Exception:       # noqa: BLE001 - a failed candidate search only means no certificate
            return None
        if res.status != 0 or res.fun > 1e-9 * (1 + float(np.max(np.abs(b)))):
            return None
        return np.maximum(res.x, 0.0)

    def _certificate_exact(self, idx, sg, S, ys):
        """The exact test of the module docstring on the support S with float weights ys (scaled to max 1)."""
        rows = [int(idx[j]) for j in S]
        sq = [int(sg[j]) for j in S]
        cands = [[fmpq(int(round(t * 2 ** 30)), 2 ** 30) for t in ys]]
        n, d = len(S), self.d
        M = fmpq_mat(d, n, [sq[c] * self.Wq[rows[c], r] for r in range(d) for c in range(n)])
        Rr, rank = M.rref()
        piv, r = [], 0
        for c in range(n):
            if r < rank and Rr[r, c] != 0:
                piv.append(c)
                r += 1
        free = [c for c in range(n) if c not in piv]
        if free:
            N = fmpq_mat(n, len(free), [0] * (n * len(free)))
            for k, f in enumerate(free):
                N[f, k] = 1
                for i, p in enumerate(piv):
                    N[p, k] = -Rr[i, f]
            yq = fmpq_mat(n, 1, cands[0])
            Nt = N.transpose()
            try:
                yp = N * (Nt * N).solve(Nt * yq)
                cands.append([yp[i, 0] for i in range(n)])
            except ZeroDivisionError:
                pass
        R2 = self.R2q
        for yc in cands:
            if any(t < 0 for t in yc) or all(t == 0 for t in yc):
                continue
            T = sum((yc[c] * sq[c] * self.bq[rows[c]] for c in range(n)), fmpq(0))
            if T > 0:
                continue
            Nv = [sum((yc[c] * sq[c] * self.Wq[rows[c], l] for c in range(n)), fmpq(0)) for l in range(d)]
            if T * T >= R2 * sum((t * t for t in Nv), fmpq(0)):
                return True
        return False

    def zoom(self, idx, sg, x):
        """Decide a pattern whose SOCP margin is ~0 and whose Farkas certificates failed, in the ball: hyperplanes
        that (nearly) meet at one interior point, so that the cell, if any, is tiny (floats cannot see it). With p
        the exact rational least-squares point of the hyperplanes through ~x, r_j = W_j·p + b_j exactly, κ a power
        of two ≥ max |r_j| over them, the LP max t s.t. s_j(r_j/κ + W_j·ζ) ≥ t‖W_j‖, ‖ζ‖_∞ ≤ 1 is well scaled:
        t* > 0 gives the candidate x = p + κζ (returned as exact rationals, to be checked exactly by the caller);
        t* ≈ 0 sends the near rows to the exact certificate test; 0 < t* ≤ 1e-7 (a cell far smaller than κ) zooms
        again at x with the rows tight there (at most four rounds); t* ≤ 0 without a certificate widens the box
        (``WIDER_BOXES``: the cell may be tiny yet longer than κ, between nearly parallel rows). Returns ("point", xq),
        ("empty", None) or None."""
        from scipy.optimize import linprog

        if self.sphere or not self.hyper_exact or x is None:
            return None
        idx = np.asarray(idx, int)
        W, b, nw = self.W[idx], self.b[idx], self.nW[idx]
        z = W @ x + b
        near = np.abs(z) <= 1e-4 * (nw + np.abs(b))          # the hyperplanes through ~x: they fix p
        if not near.any():
            return None
        Wn = W[near]
        corr = np.linalg.lstsq(Wn, Wn @ x + b[near], rcond=None)[0]
        p = x - corr
        if not np.all(np.isfinite(p)) or float(p @ p) >= (self.R * (1 + 1e-6)) ** 2:
            return None
        # a point at the ball's edge (planes meant to meet on the sphere): the ball enters the zoomed LP as the row
        # 2p·ζ ≤ (R² − ‖p‖²)/κ (its tangent half-space at scale κ; the exact check of the point decides)
        edge = float(p @ p) >= (self.R * (1 - 1e-6)) ** 2
        reach("rob.bracket/zoom_exact")
        pq = [to_fmpq(t) for t in p]
        thr = 1e-12 * (nw + np.abs(b))                      # through p up to rounding: the zoomed rows
        for _ in range(4):                                  # a cell far smaller than κ: zoom again at its point
            Z = self.Wq * fmpq_mat(self.d, 1, pq)
            r = [Z[int(j), 0] + self.bq[int(j)] for j in idx]
            rf = np.array([float(Fraction(int(t.p), int(t.q))) for t in r])
            near = np.abs(rf) <= thr
            if not near.any():
                return None
            Wn, rn, far = W[near], np.abs(rf[near]), ~near
            kap = float(np.max(rn))
            kap_e = math.frexp(kap)[1] if kap > 0 else -40
            kappa = math.ldexp(1.0, kap_e)             # a power of two ≥ max |r_near| (exact scaling)
            if np.any(sg[far] * rf[far] <= 1e3 * math.sqrt(self.d) * kappa * nw[far]):
                return None                            # far rows not clearly on their side at p: not a tiny cell
            A = np.hstack([-sg[near][:, None] * Wn, nw[near][:, None]])
            rhs = sg[near] * rf[near] / kappa
            if edge:
                pf = np.array([fmpq_float(t) for t in pq])
                room = fmpq_float(self.R2q - sum((t * t for t in pq), fmpq(0))) / kappa
                A = np.vstack([A, np.r_[2 * pf, 2 * np.linalg.norm(pf)]])
                rhs = np.r_[rhs, room]
            res = linprog(np.r_[np.zeros(self.d), -1.0], A_ub=A, b_ub=rhs,
                          bounds=[(-1, 1)] * self.d + [(None, 1.0)], method="highs")
            if res.status != 0:
                return None
            t = -res.fun
            kq = pow2_q(kap_e)
            xz = [pq[k] + kq * to_fmpq(res.x[k]) for k in range(self.d)]
            if t > 1e-7:
                return "point", xz
            rows, sn = idx[near], sg[near]
            # the scaled LP's duals: y ≥ 0 with Σ y_j s_j W_j ≈ 0 and Σ y_j s_j r_j/κ ≈ t* < 0 — at this scale a
            # robust candidate; then the basic solution of the unscaled LP. Both are checked exactly (T from the
            # exact b).
            if edge:
                return None                            # the certificates below know the rows, not the ball's row
            if self._try_certificate(rows, sn, -np.asarray(res.ineqlin.marginals, float)) or \
                    self._try_certificate(rows, sn, self._basic_kernel_y(rows, sn, rf[near] / kappa)) or \
                    self._try_certificate(rows, sn, self._basic_kernel_y(rows, sn)):
                return "empty", None
            if not t > 0:
                # no certificate: the box ‖ζ‖∞ ≤ 1 may be what is infeasible (nearly parallel rows make a tiny cell
                # much longer than κ): wider boxes, whose point the caller checks exactly
                for beta in WIDER_BOXES:
                    res = linprog(np.r_[np.zeros(self.d), -1.0], A_ub=A, b_ub=rhs,
                                  bounds=[(-beta, beta)] * self.d + [(None, 1.0)], method="highs")
                    if res.status == 0 and -res.fun > 1e-7:
                        return "point", [pq[k] + kq * to_fmpq(res.x[k]) for k in range(self.d)]
                return None
            pq = xz                                    # 0 < t* ≤ 1e-7: the LP's rows tight at xz are the new core
            thr = 1e-4 * kappa * nw
        return None

    def inside_ball(self, idx, sg) -> bool:
        """Proves that the closed cell (signs sg on idx) meets the closed ball only strictly inside it, so that no
        open cell with these signs meets the sphere ‖x‖ = R. On the cell ∩ ball, weak duality (:meth:`dual_low`,
        duals from the SOCPs min h·x there: one Clarabel setup, its objective updated d + 1 times) bounds
        x_k ≤ hi_k (h = −e_k) and Σ_l x_l ≥ S (h = 1), hence x_k ≥ S − Σ_{l≠k} hi_l; the box of those bounds
        must lie in the open ball, Σ_k max(|lo_k|, |hi_k|)², rounded up, < R². This is the sphere's decision
        for the tiny cells of nearly concurrent hyperplanes (a pattern realised only near their common point
        inside the ball): their SOCP margin is ~0 and no Farkas certificate exists, because the closed cell is
        not empty. False when a bound fails or the box reaches the sphere (then nothing is decided)."""
        if not self.hyper_exact:
            return False
        d, idx = self.d, np.asarray(idx, int)
        n = len(idx)
        A = sp.csc_matrix(np.vstack([-sg[:, None] * self.W[idx], np.zeros((1, d)), -np.eye(d)]))
        rhs = np.r_[sg * self.b[idx], self.R, np.zeros(d)]
        cones = [clarabel.NonnegativeConeT(n), clarabel.SecondOrderConeT(d + 1)]
        st = clarabel.DefaultSettings()
        st.verbose = False
        st.presolve_enable = False
        st.time_limit = max(0.05, min(5.0, self.deadline - time.perf_counter()))
        P0, zr = sp.csc_matrix((d, d)), np.zeros(d)
        solver = None
        lows = []                                      # L_k ≤ h_k·x on the closed cell ∩ ball
        for k in range(d + 1):
            h = np.ones(d) if k == d else -np.eye(d)[k]
            try:
                if solver is None:
                    solver = clarabel.DefaultSolver(P0, h, A, rhs, cones, st)
                else:
                    solver.update(q=h)
                sol = solver.solve()
            except Exception:       # noqa: BLE001 - a failed solve only means no proof
                return False
            z = np.array(sol.z)
            if z.size < n or not np.all(np.isfinite(z)):
                return False
            L = self.dual_low(idx, sg, np.maximum(z[:n], 0.0), h, zr)
            if not math.isfinite(L) or (k < d and -L >= self.R):
                return False
            lows.append(L)
        hi = -np.array(lows[:d])                       # x_k ≤ hi_k
        tot = float(np.nextafter(math.fsum(hi), np.inf))        # ≥ Σ hi (fsum is correctly rounded)
        for k in range(d):
            rest = float(np.nextafter(tot - hi[k], np.inf))      # ≥ Σ_{l≠k} hi_l
            lo = float(np.nextafter(lows[d] - rest, -np.inf))   # ≤ S − Σ_{l≠k} hi_l ≤ x_k
            hi[k] = max(abs(hi[k]), abs(lo))
        return round_up(float(np.sum(round_up(hi * hi)))) < self.R * self.R

    def exact_gradient(self, idx, sg):
        """g_σ = v + Σ_{j on} α_j as exact rationals (list of fmpq), for the units of idx with sign +1."""
        on = np.zeros(self.m, bool)
        on[np.asarray(idx, int)[np.asarray(sg) > 0]] = True
        G = fmpq_mat(1, self.m, [fmpq(int(t)) for t in on]) * self.Aq
        return [G[0, k] + self.vq[k] for k in range(self.d)]

    def sphere_cell_up(self, idx, sg, x_hint, cuts=(), gq=None):
        """Proved upper bound of τ = (‖g‖² − (g·x)²)^½ over the closed cell (signs sg on idx, all units) ∩ S
        (∩ {u·x ≥ 0, u ∈ cuts}): ‖g‖² − t with t ≤ min (g·x)² there from
        :func:`numerics.rob.bracket_sdp.sphere_cell_bound` (exact g_σ; +inf when the relaxation or its exact
        check fails)."""
        gq = self.exact_gradient(idx, sg) if gq is None else gq
        # g scaled by a power of two 2^k to ~1 (exactly), so that the relaxation's tolerances do not swamp a tiny
        # gradient; its bound on min (2^k g·x)² is divided by 4^k
        s = pow2_q(scale_exponent(max((abs(fmpq_float(y)) for y in gq), default=0.0)))
        t = sphere_cell_bound(self.Wq, self.bq, [y * s for y in gq], idx, sg, x_hint, cuts=cuts,
                              time_limit=min(2.0, max(0.05, self.deadline - time.perf_counter())))
        if t is None:
            return math.inf
        return sqrt_up_q(sum((y * y for y in gq), fmpq(0)) - t / (s * s))

    def alpha_sum(self, units):
        """An enclosure [sm ± sr] of Σ_{j ∈ units} α_j (the rows' own radii plus the rounding of the sum)."""
        Aum = self.Am[units]
        one = np.ones(len(units))
        return one @ Aum, round_up(one @ self.Ar[units] + gamma_n(len(units)) * (one @ np.abs(Aum)),
                                   2 * len(units) + 8)

    def node_bound(self, cm, cr, Ui, V, iters=15):
        """Rigorous upper bound of ‖g‖ over the node's 2^k gradients, and the ascended Shor iterate. An exactly
        cancelling pair with both units free enters as its one generator (:meth:`free_generators`); the iterate V
        keeps a row per unit of Ui (the absorbed units' rows ride along unchanged)."""
        bd, V, _ = self.node_bound_source(cm, cr, Ui, V, iters)
        return bd, V

    def node_bound_source(self, cm, cr, Ui, V, iters=15):
        """:meth:`node_bound` and the bound's source: :data:`SRC_SHOR` or :data:`SRC_TRIANGLE`, whichever is smaller
        (the triangle bound on ties)."""
        Ug = self.free_generators(Ui)
        if len(Ug) < len(Ui):
            pos = np.flatnonzero(np.isin(np.asarray(Ui, int), Ug))
            rows = np.r_[0, 1 + pos]
            bd, Vg, src = self.node_bound_source(cm, cr, Ug, None if V is None else V[rows], iters)
            if V is None or Vg is None:
                return bd, V, src
            Vn = V.copy()
            Vn[rows] = Vg
            return bd, Vn, src
        k = len(Ui)
        Aum, Aur = self.Am[Ui], self.Ar[Ui]
        sm, sr = self.alpha_sum(Ui)
        c0m, c0r = iv_add(cm, cr, 0.5 * sm, 0.5 * sr)
        tri = round_up(norm_up(c0m, c0r) + 0.5 * float(np.sum(self.nAup[Ui])), k + 4)
        if k == 0:
            return min(tri, norm_up(c0m, c0r)), V, SRC_TRIANGLE
        Bm = np.hstack([c0m[:, None], 0.5 * Aum.T])
        Br = np.hstack([c0r[:, None], round_up(0.5 * Aur.T)])
        sh, V = shor_bound(Bm, Br, V, iters)
        return (sh, V, SRC_SHOR) if sh < tri else (tri, V, SRC_TRIANGLE)
