r"""Certified Lipschitz bracket of a one-hidden-layer ReLU net by branch and bound (any d; ball or sphere).

Net: f(x) = v·x + c + Σ_j a_j ReLU(W_j·x + b_j). Every float64 input is an exact binary rational. On
the open cell σ (σ_j = 1 iff W_j·x + b_j > 0) the gradient is g_σ = v + Σ_j σ_j α_j with α_j = a_j W_j.
Ball B_R: Lip = max ‖g_σ‖ over cells meeting the open ball. Sphere: Lip = sup over cells and x in the
cell on S^{d-1} of τ_σ(x) = (‖g_σ‖² − (g_σ·x)²)^{1/2} ≤ ‖g_σ‖, so the ball bound (R = 1) bounds it.

Upper bound (proved)
--------------------
A node fixes the signs of the first units of a static order (decreasing ‖α_j‖); U (k units) is free.
With c = v + Σ_{fixed on} α_j, c₀ = c + ½Σ_U α_j, every gradient of the node is g = c₀ + ½A_U ε,
ε ∈ {±1}^k, i.e. g = Bε' with B = [c₀, ½α_j (j ∈ U)] and ε' = (1, ε). The node bound is
min(‖c₀‖ + ½Σ_U‖α_j‖, (λ_max(BWBᵀ) Σ_i 1/w_i)^{1/2}) for weights w > 0 (the dual of Shor's SDP
relaxation, weights from a warm-started Burer–Monteiro ascent; :mod:`numerics.rob.bracket_ia`). On a
64-unit net in d = 32 it is 2.4% above the zonotope's largest vertex at the root and ~0.1% once 16 units
are fixed (the former parallel/perpendicular split: 42% and 13%). Everything is evaluated in
midpoint–radius interval arithmetic (Rump): the exact α_j = a_j W_j are enclosed by fl(a_j W_j) ± 2u|·|,
λ_max by ‖H^{2^q}‖_F^{2^{-q}} with q = 10, scalar roots/powers use arb. So each node bound encloses the
node's exact maximum of ‖g‖ from above. When k ≤ K the 2^k gradients are enclosed exactly the same way
and sorted. Nodes are dropped only (i) when their rigorous bound ≤ the current lower bound, or
≤ (1 + rel_gap)·lower (then the bound enters `closed`, the max of dropped bounds, which enters `upper`),
or (ii) when infeasibility of {x : ‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0 for the fixed j} (a superset of the
open region) is PROVED by a Farkas/SOCP certificate: y ≥ 0 with Σ y_j s_j b_j + R‖Σ y_j s_j W_j‖ < 0,
checked in interval arithmetic (y comes from clarabel's dual; the solver is never trusted).
upper = max(closed, open node bounds, lower) rounded up. A leaf pattern whose top 2^k patterns are not
resolved after a few SOCPs is split further (down to single patterns). On the sphere a leaf pattern's
bound ‖g‖ is refined to (‖g‖² − δ²)^{1/2} when a dual certificate y ≥ 0 proves |g·x| ≥ δ on the closed
cell ∩ ball: g·x ≥ (g − Σ y_j s_j W_j)·x − Σ y_j s_j b_j ≥ −R‖g − Σ y_j s_j W_j‖ − Σ y_j s_j b_j.

Lower bound (attained)
----------------------
Every candidate is an exact rational point: a float point in the ball, or on the sphere the inverse
stereographic image (x = (2y + (‖y‖²−1)N)/(‖y‖²+1), exactly ‖x‖ = 1) of a float y, with pole
N = −sign(x_k)e_k, k = argmax |x_k| (x far from the pole). Its signs W_j·x + b_j (all ≠ 0), ‖x‖² < R²
(ball), and the value ‖g‖² or ‖g‖² − (g·x)² are computed exactly (flint fmpq); `lower` is the float of
its square root stepped down 3 ulps. Candidates (:mod:`numerics.rob.bracket_search`) come from data and
random points improved by exact 1-D maximisation along lines / great circles, then by a cell-flip ascent
(flip the unit that increases ‖g‖ most among those whose flipped cell is reached by a ray or proved
non-empty by an SOCP point), restarted during the branch and bound from the points of the top nodes; on
the sphere each ascent's cell is realised at a point of cell ∩ {g·x = 0} pushed to ‖x‖ = 1.

Limits
------
The node bound ignores the cell constraints of the free units: geometry enters only through the Farkas
pruning of fixed ones. For m ≲ 2d the best vertices are nearly realisable and the bracket closes (d = 32,
m = 64: 1% in seconds); for m ≫ d the upper end levels off at the unconstrained zonotope's largest vertex
(d = 32, m = 256: ~25% above the lower end after 60 s). On the sphere "cell meets S" is relaxed to "cell
meets B" (refined by δ); a leaf pattern still above the target is then bounded over cell ∩ S itself by
the dual of Shor's relaxation with RLT cuts, checked PSD in exact rationals (:mod:`numerics.rob.bracket_sdp`;
it closes the 1.6% stall of a d = 3, m = 6 net; used for d ≤ 12). That relaxation can still be loose, and
inner nodes keep the zonotope bound: when the tree is exhausted with the upper end above (1 + rel_gap)·lower
the status is "gap open" (never "exhausted", which means converged), and the gap stated is the one proved.
"""
from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from fractions import Fraction

import clarabel
import numpy as np
import scipy.sparse as sp
from flint import fmpq, fmpq_mat

from numerics.fallbacks import reach
from numerics.rob.bracket_ia import TINY, U, gamma_n, iv_add, iv_matmul, norm_up, round_up, shor_bound, sqrt_up
from numerics.rob.bracket_sdp import sphere_cell_bound
from numerics.rob.bracket_search import LowerSearch

__all__ = ["Bracket", "BracketNet", "certified_bracket"]

# the sphere leaf bound (an SDP of size d + 1, then an exact LDLᵀ) costs ≤ 0.1 s per leaf for d ≤ 10 and ~0.4 s
# in d = 32, where the branch and bound cannot afford it per leaf: above this, leaves keep the ball relaxation
SDP_MAX_D = 12
# the smoothed ascent seeds the lower end when m ≥ this × d (below it, m = 64 in d = 32 say, the bracket closes in
# under a second without it, and the ascent would only spend the time)
ANNEAL_MIN_RATIO = 4


@dataclass(frozen=True)
class Bracket:
    """lower ≤ Lip ≤ upper, both proved. ``status``: "gap reached" (upper ≤ (1 + rel_gap)·lower), "exhausted"
    (every node closed and the ends within rel_gap), "gap open" (every node closed, the ends further apart:
    a relaxation the leaves could not tighten), "time limit", "node limit"."""

    lower: float
    upper: float
    witness_point: tuple
    witness_pattern: tuple
    nodes: int
    seconds: float
    status: str

    @property
    def gap(self) -> float:
        return math.inf if self.lower <= 0 else self.upper / self.lower - 1.0


def _q(x):
    f = x if isinstance(x, Fraction) else Fraction(float(x))
    return fmpq(f.numerator, f.denominator)


def _exact_float(x) -> bool:
    return not isinstance(x, Fraction) or Fraction(float(x)) == x


class BracketNet:
    """The net of a bracket: float data with interval enclosures, the exact rationals, and the SOCP, Farkas and zoom
    decisions of one domain (ball or sphere)."""

    def __init__(self, W, b, a, v, sphere, R, exact=None):
        self.W, self.b, self.a, self.v = W, b, a, v
        self.m, self.d = W.shape
        self.Rq = Fraction(1) if sphere else Fraction(R)
        self.sphere, self.R = sphere, float(self.Rq)
        Wx, bx, ax, vx = exact if exact is not None else (W.tolist(), b.tolist(), a.tolist(), v.tolist())
        self.Wq = fmpq_mat(self.m, self.d, [_q(t) for row in Wx for t in row])
        self.bq = [_q(t) for t in bx]
        aq = [_q(t) for t in ax]
        self.Aq = fmpq_mat(self.m, self.d, [aq[j] * self.Wq[j, l] for j in range(self.m) for l in range(self.d)])
        self.vq = [_q(t) for t in vx]
        # α_j = a_j W_j enclosed around its correctly rounded float: |fl(q) − q| ≤ u|fl(q)|(1 + u)
        self.Am = np.array([[float(Fraction(int(self.Aq[j, l].p), int(self.Aq[j, l].q))) for l in range(self.d)]
                            for j in range(self.m)], float).reshape(self.m, self.d)
        self.Ar = round_up(2 * U * np.abs(self.Am))
        self.v_rad = round_up(2 * U * np.abs(np.asarray(v, float)))
        # Farkas pruning evaluates the hyperplanes in floats: only sound when W and b are exact floats
        self.hyper_exact = all(_exact_float(t) for row in Wx for t in row) and all(_exact_float(t) for t in bx)
        self.nW = np.linalg.norm(W, axis=1)

    # ---------- exact evaluation of candidate points ----------
    def exact(self, xq):
        """xq: list of fmpq. Returns (value², pattern) if xq is a genuine point, else None."""
        d, m = self.d, self.m
        n2 = sum((t * t for t in xq), fmpq(0))
        if self.sphere:
            if n2 != 1:
                return None
        elif not n2 < fmpq(self.Rq.numerator, self.Rq.denominator) ** 2:
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
            return [_q(t) for t in x]
        x = x / np.linalg.norm(x)
        k = int(np.argmax(np.abs(x)))
        sgn = -1.0 if x[k] > 0 else 1.0          # pole N = sgn e_k, x ≈ -N
        y = x / (1.0 - sgn * x[k])
        yq = [_q(t) for t in y]
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
    def socp(self, idx, sg, eq=None, obj=None, tfix=None):
        """max t s.t. s_j(W_j x + b_j) ≥ t‖W_j‖ (j ∈ idx), ‖x‖ ≤ R, t ≤ 1 (tfix: t fixed, maximise obj·x).
        Returns (t, x, y) with y the duals of the sign rows."""
        d, n = self.d, len(idx)
        W, b = self.W[idx], self.b[idx]
        rows = [np.hstack([-sg[:, None] * W, (self.nW[idx] if tfix is None else 0 * self.nW[idx])[:, None]])]
        rhs = [sg * b - (0 if tfix is None else tfix * self.nW[idx])]
        cones = []
        if eq is not None:
            rows.insert(0, np.hstack([eq, 0.0])[None])
            rhs.insert(0, np.zeros(1))
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
        return x[d], x[:d], np.maximum(z[off:off + n], 0.0)

    def dual_low(self, idx, sg, y, gm, gr):
        """Rigorous lower bound of g·x over {‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0}, g ∈ [gm ± gr], from y ≥ 0:
        g·x ≥ (g − Σ y_j s_j W_j)·x − Σ y_j s_j b_j ≥ −R‖g − z‖ − T."""
        if not self.hyper_exact:
            return -math.inf
        ys = y * sg
        zm, zr = iv_matmul(ys[None], np.zeros((1, len(y))), self.W[idx])
        Tm, Tr = iv_matmul(ys[None], np.zeros((1, len(y))), self.b[idx])
        dm, dr = iv_add(gm, gr, -zm[0], zr[0])
        T_up = float(Tm[0]) + float(Tr[0])
        T_up = T_up + 4 * U * abs(T_up) + TINY
        N_up = round_up(self.R * norm_up(dm, dr))
        return -T_up - N_up - 4 * U * (abs(T_up) + N_up) - TINY   # minus the rounding of -T_up - N_up

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

    def _basic_kernel_y(self, idx, sg):
        """A vertex of {y ≥ 0, Σ y = 1, Σ y_j s_j W_j = 0} minimising Σ y_j s_j b_j, when that minimum is ≤ 0
        (floats from HiGHS; only a candidate: the certificate is checked exactly)."""
        from scipy.optimize import linprog

        W, b = self.W[np.asarray(idx, int)], self.b[np.asarray(idx, int)]
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
        R2 = fmpq(self.Rq.numerator, self.Rq.denominator) ** 2
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
        again at x with the rows tight there (at most four rounds). Returns ("point", xq), ("empty", None) or None."""
        from scipy.optimize import linprog

        if self.sphere or not self.hyper_exact or x is None:
            return None
        idx = np.asarray(idx, int)
        W, b, nw = self.W[idx], self.b[idx], self.nW[idx]
        z = W @ x + b
        near = np.abs(z) <= 1e-6 * (nw + np.abs(b))          # the hyperplanes through ~x: they fix p
        if not near.any():
            return None
        Wn = W[near]
        corr = np.linalg.lstsq(Wn, Wn @ x + b[near], rcond=None)[0]
        p = x - corr
        if not np.all(np.isfinite(p)) or float(p @ p) >= (self.R * (1 - 1e-6)) ** 2:
            return None
        reach("rob.bracket/zoom_exact")
        pq = [_q(t) for t in p]
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
            res = linprog(np.r_[np.zeros(self.d), -1.0], A_ub=A, b_ub=sg[near] * rf[near] / kappa,
                          bounds=[(-1, 1)] * self.d + [(None, 1.0)], method="highs")
            if res.status != 0:
                return None
            t = -res.fun
            kq = fmpq(1, 2 ** (-kap_e)) if kap_e < 0 else fmpq(2 ** kap_e)
            xz = [pq[k] + kq * _q(res.x[k]) for k in range(self.d)]
            if t > 1e-7:
                return "point", xz
            rows, sn = idx[near], sg[near]
            # the scaled LP's duals: y ≥ 0 with Σ y_j s_j W_j ≈ 0 and Σ y_j s_j r_j/κ ≈ t* < 0 — at this scale a
            # robust candidate; then the basic solution of the unscaled LP. Both are checked exactly (T from the
            # exact b).
            if self._try_certificate(rows, sn, -np.asarray(res.ineqlin.marginals, float)) or \
                    self._try_certificate(rows, sn, self._basic_kernel_y(rows, sn)):
                return "empty", None
            if not t > 0:
                return None
            pq = xz                                    # 0 < t* ≤ 1e-7: the LP's rows tight at xz are the new core
            thr = 1e-4 * kappa * nw
        return None

    def sphere_cell_up(self, idx, sg, x_hint):
        """Proved upper bound of τ = (‖g‖² − (g·x)²)^½ over the closed cell (signs sg on idx, all units) ∩ S:
        ‖g‖² − t with t ≤ min (g·x)² there from :func:`numerics.rob.bracket_sdp.sphere_cell_bound`
        (exact g_σ; +inf when the relaxation or its exact check fails)."""
        on = np.zeros(self.m, bool)
        on[np.asarray(idx, int)[np.asarray(sg) > 0]] = True
        G = fmpq_mat(1, self.m, [fmpq(int(t)) for t in on]) * self.Aq
        gq = [G[0, k] + self.vq[k] for k in range(self.d)]
        t = sphere_cell_bound(self.Wq, self.bq, gq, idx, sg, x_hint,
                              time_limit=min(2.0, max(0.05, self.deadline - time.perf_counter())))
        if t is None:
            return math.inf
        val = sum((y * y for y in gq), fmpq(0)) - t
        if val <= 0:
            return 0.0
        f = float(np.nextafter(float(Fraction(int(val.p), int(val.q))), np.inf))
        return sqrt_up(f)

    def node_bound(self, cm, cr, Ui, V, iters=15):
        """Rigorous upper bound of ‖g‖ over the node's 2^k gradients, and the ascended Shor iterate."""
        k = len(Ui)
        Aum, Aur = self.Am[Ui], self.Ar[Ui]
        one = np.ones(k)
        sm, sr = one @ Aum, round_up(one @ Aur + gamma_n(k) * (one @ np.abs(Aum)), 2 * k + 8)
        c0m, c0r = iv_add(cm, cr, 0.5 * sm, 0.5 * sr)
        tri = round_up(norm_up(c0m, c0r) + 0.5 * float(np.sum(self.nAup[Ui])), k + 4)
        if k == 0:
            return min(tri, norm_up(c0m, c0r)), V
        Bm = np.hstack([c0m[:, None], 0.5 * Aum.T])
        Br = np.hstack([c0r[:, None], round_up(0.5 * Aur.T)])
        sh, V = shor_bound(Bm, Br, V, iters)
        return min(tri, sh), V


def certified_bracket(W, b, a, v, *, sphere: bool, R=1.0, rel_gap: float = 0.01, time_limit: float = 60.0,
                      seed: int = 0, data_points=None, progress=None) -> Bracket:
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    exact = ([list(r) for r in W], list(b), list(a), list(v))
    W = np.array([[float(t) for t in r] for r in W], dtype=float, ndmin=2)
    b, a, v = (np.array([float(t) for t in x], dtype=float).ravel() for x in (b, a, v))
    net = BracketNet(W, b, a, v, sphere, R, exact)
    net.deadline = deadline
    m, d, Rr = net.m, net.d, net.R
    rng = np.random.default_rng(seed)
    net.nAup = round_up(np.sqrt(np.sum((np.abs(net.Am) + net.Ar) ** 2, axis=1)), d + 4)
    net.all_idx = np.arange(m)
    srch = LowerSearch(net, rng, deadline)
    best = srch.best
    last = [t0]
    nodes = [0]

    def tick(upper_now):
        now = time.perf_counter()
        if progress is not None and now - last[0] >= 1.0:
            last[0] = now
            progress(best["low"], upper_now, nodes[0], now - t0)

    def climb_from(x, budget):
        """Cell-flip ascent from a float point, then the exact offer of its cell."""
        if sphere:
            x = x * (1 - 1e-6) / max(np.linalg.norm(x), 1e-300)
        res = srch.climb(x, t_end=time.perf_counter() + budget)
        if res is not None and res[3] > best["low"] and time.perf_counter() < deadline:
            srch.settle(res[0], res[1], res[2])

    # the root bound first: it is the upper end whatever happens to the time budget
    order = np.argsort(-net.nAup, kind="stable")
    V0 = rng.standard_normal((m + 1, min(m + 1, 8)))
    V0 /= np.linalg.norm(V0, axis=1, keepdims=True)
    root = net.node_bound(v.copy(), net.v_rad.copy(), order, V0, iters=60 if m > 256 else 200)

    # ---------- seeding: line / great-circle search from data and random points, then cell-flip ascent
    starts = []
    if data_points is not None:
        starts += list(np.array(data_points, dtype=float, ndmin=2))
    rnd = rng.standard_normal((max(8, min(64, 2 * m)), d))
    rnd /= np.linalg.norm(rnd, axis=1, keepdims=True)
    starts += list(rnd * (1.0 if sphere else 0.5 * Rr))
    if not sphere:
        starts += list(rnd[: len(rnd) // 2] * 0.999 * Rr)
    seeded = []
    t_s = time.perf_counter()
    span = max(deadline - t_s, 0.0)
    t_starts, t_climb = t_s + 0.08 * span, t_s + (0.32 if m >= ANNEAL_MIN_RATIO * d and m >= 64 else 0.2) * span
    for i, x0 in enumerate(starts):
        now = time.perf_counter()
        if now > deadline or i > 0 and now > t_starts:
            break
        x0 = x0 / np.linalg.norm(x0) if sphere else x0
        x0 = x0 if sphere or x0 @ x0 < Rr * Rr else 0.5 * Rr * x0 / np.linalg.norm(x0)
        seeded.append(srch.local_search(x0, t_end=max(t_starts, now + 0.02 * span)))
    # the smoothed (annealed) ascent, for nets too large for line searches alone to find good cells
    if m >= ANNEAL_MIN_RATIO * d and m >= 64:
        for x0 in srch.anneal(time.perf_counter() + min(0.12 * span, 15.0)):
            seeded.append((x0, net.fvalue(x0[None])[0][0]))
    seeded.sort(key=lambda t: -t[1])
    for x0, _ in seeded[:8]:
        now = time.perf_counter()
        if now > min(deadline, t_climb):
            break
        climb_from(x0, t_climb - now)

    # ---------- branch and bound ----------
    KE = 16 if m <= 16 else min(14, max(8, int(math.log2(2e6 / max(d, 1)))))
    closed = [0.0]
    heap = []
    cnt = [0]

    def push(depth, signs, cm, cr, pt, V, root=None):
        Ui = order[depth:]
        bd, V = net.node_bound(cm, cr, Ui, V) if root is None else root
        if bd <= best["low"]:
            return
        if bd <= best["low"] * (1 + rel_gap):
            closed[0] = max(closed[0], bd)
            return
        cnt[0] += 1
        heapq.heappush(heap, (-bd, cnt[0], depth, signs, cm, cr, pt, V))

    def leaf(depth, signs, cm, cr):
        """Max over the node's 2^k patterns. Returns the node's bound, or None (then split further)."""
        Fi, Ui = order[:depth], order[depth:]
        S, ub, Gm, Gr = net.enum_bounds(cm, cr, Ui)
        idx = np.concatenate([Fi, Ui]).astype(int)
        h = [(-float(u), int(i), False) for i, u in enumerate(ub)]
        heapq.heapify(h)
        tests = 0
        while h:
            nV, i, refined = heapq.heappop(h)
            V = -nV
            if V <= best["low"]:
                return 0.0
            if V <= best["low"] * (1 + rel_gap) or time.perf_counter() > deadline:
                return V
            if refined:
                return V
            tests += 1
            if tests > 6 and len(Ui) > 0:
                return None
            sg = np.concatenate([signs, np.where(S[i], 1.0, -1.0)])
            res = net.socp(idx, sg)
            if res is None:
                return V
            t, x, y = res
            if t <= 1e-9:
                if net.farkas(idx, sg, y):
                    continue
                zm = net.zoom(idx, sg, x)
                if zm is not None and zm[0] == "empty":
                    continue
                if zm is not None:
                    want = np.zeros(m, bool)
                    want[idx] = sg > 0              # the leaf's pattern, in the units' own order
                    if srch.offer_exact(zm[1], pattern=tuple(bool(w) for w in want)):
                        heapq.heappush(h, (nV, i, True))
                        continue
                if t <= 0:
                    return V
            if not sphere:
                srch.offer_in(x, t)
                heapq.heappush(h, (nV, i, True))
                continue
            srch.realise_on_sphere(idx, sg, Gm[i], x, t)
            dl = 0.0                       # rigorous lower bound of |g·x| on the cell ∩ ball
            for sgn in (1.0, -1.0):
                r3 = net.socp(idx, sg, obj=-sgn * Gm[i], tfix=0.0)
                if r3 is not None:
                    dl = max(dl, net.dual_low(idx, sg, r3[2], sgn * Gm[i], Gr[i]))
            V2 = V
            if dl > 0:
                V2 = min(V, sqrt_up(round_up(round_up(V * V) - dl * dl * (1 - 8 * U))))
            if V2 > best["low"] * (1 + rel_gap) and d <= SDP_MAX_D and time.perf_counter() < deadline:
                V2 = min(V2, net.sphere_cell_up(idx, sg, x))   # the cell on the sphere, not in the ball
            heapq.heappush(h, (-V2, i, True))
        return 0.0

    push(0, np.zeros(0), v.copy(), net.v_rad.copy(), None, V0, root=root)
    status = "exhausted"
    t_bb, spent = time.perf_counter(), 0.0          # climbs take ≤ 30% of the branch-and-bound phase,
    share = [0.3]                                     # down to 10% while they do not raise the lower end
    while heap:
        now = time.perf_counter()
        top = -heap[0][0]
        upper_now = max(top, closed[0], best["low"])
        tick(upper_now)
        if upper_now <= best["low"] * (1 + rel_gap):
            status = "gap reached"
            break
        if now > deadline:
            status = "time limit"
            break
        if nodes[0] >= 10 ** 7:
            status = "node limit"
            break
        nbd, _, depth, signs, cm, cr, pt, V = heapq.heappop(heap)
        bd = -nbd
        nodes[0] += 1
        if bd <= best["low"]:
            continue
        if pt is not None and spent < share[0] * (now - t_bb):
            low0 = best["low"]
            climb_from(pt, min(2.0, deadline - now))
            spent += time.perf_counter() - now
            share[0] = 0.3 if best["low"] > low0 else max(0.1, 0.8 * share[0])
        if m - depth <= KE:
            lv = leaf(depth, signs, cm, cr)
            if lv is not None:
                closed[0] = max(closed[0], lv)
                continue
        j = int(order[depth])
        Uc, Vc = order[depth + 1:], np.delete(V, 1, axis=0)
        for s in (0, 1):
            sg = np.append(signs, 1.0 if s else -1.0)
            ccm, ccr = iv_add(cm, cr, net.Am[j], net.Ar[j]) if s else (cm, cr)
            cb, cV = net.node_bound(ccm, ccr, Uc, Vc)
            cb = min(cb, bd)                        # the child's gradients are among the parent's
            if cb <= best["low"] * (1 + rel_gap):   # closed by its bound: no feasibility test needed
                if cb > best["low"]:
                    closed[0] = max(closed[0], cb)
                continue
            ch_pt = None
            if pt is not None and (1.0 if s else -1.0) * (net.W[j] @ pt + net.b[j]) > 1e-12:
                ch_pt = pt
            else:
                idx = order[:depth + 1]
                res = net.socp(idx, sg)
                if res is not None:
                    t, x, y = res
                    if t <= 1e-9 and net.farkas(idx, sg, y):
                        continue
                    if t > 1e-10:
                        ch_pt = x
                        if not sphere and net.fvalue(x[None])[0][0] > best["low"]:
                            srch.offer_in(x, t)
            push(depth + 1, sg, ccm, ccr, ch_pt, None, root=(cb, cV))
        if sphere and pt is not None and nodes[0] % 16 == 0:
            srch.local_search(pt / np.linalg.norm(pt), iters=2, ndir=2)
    else:
        status = "exhausted" if time.perf_counter() <= deadline else "time limit"
    top = -heap[0][0] if heap else 0.0
    upper = max(top, closed[0], best["low"])
    upper = float(np.nextafter(upper, np.inf))
    if status == "exhausted" and upper > best["low"] * (1 + rel_gap) * (1 + 1e-9):
        status = "gap open"     # every node closed, but the ends stay further apart than the target gap
    if best["x"] is None:
        wp, wpat = tuple(Fraction(0) for _ in range(d)), tuple()
    else:
        wp, wpat = best["x"], best["pat"]
    sec = time.perf_counter() - t0
    if progress is not None:
        progress(best["low"], upper, nodes[0], sec)
    return Bracket(best["low"], upper, wp, wpat, nodes[0], sec, status)
