r"""Certified Lipschitz bracket of a one-hidden-layer ReLU net by branch and bound (any d; ball or sphere).

Net: f(x) = v·x + c + Σ_j a_j ReLU(W_j·x + b_j). Every float64 input is an exact binary rational. On
the open cell σ (σ_j = 1 iff W_j·x + b_j > 0) the gradient is g_σ = v + Σ_j σ_j α_j with α_j = a_j W_j.
Ball B_R: Lip = max ‖g_σ‖ over cells meeting the open ball. Sphere: Lip = sup over cells and x in the
cell on S^{d-1} of τ_σ(x) = (‖g_σ‖² − (g_σ·x)²)^{1/2} ≤ ‖g_σ‖, so the ball bound (R = 1) bounds it.

Upper bound (proved)
--------------------
A node fixes the signs of the first units of a static order (decreasing ‖α_j‖); U (k units) is free.
With c = v + Σ_{fixed on} α_j, c₀ = c + ½Σ_U α_j, every gradient of the node is g = c₀ + ½A_U ε,
ε ∈ {±1}^k. For any w ≠ 0 and û = w/‖w‖ (we take w = c₀ in floats):
    ‖g‖² = (û·g)² + ‖P⊥g‖²,  |û·g| ≤ |û·c₀| + ½Σ_U |û·α_j|,
    ‖P⊥g‖ ≤ ‖P⊥c₀‖ + ½ max_ε ‖P⊥A_U ε‖,  max_ε ‖P⊥A_Uε‖² ≤ min(Σ_ij |G⊥_ij|, k λ_max(G⊥)),
G⊥ = Gram of the P⊥α_j; and ‖g‖ ≤ ‖c₀‖ + ½Σ‖α_j‖ too. λ_max(G⊥) = ‖H‖₂ (H = B B^T, d × d, B the
P⊥α_j) is bounded by ‖H^{2^q}‖_F^{2^{-q}} (≥ ‖H‖₂ since ‖H‖₂^p = ‖H^p‖₂ ≤ ‖H^p‖_F), computed by q
squarings with power-of-two rescaling. All of this is evaluated in midpoint–radius interval arithmetic
(Rump): each float op's rounding error (γ_n|x|·|y| for a length-n dot product, u|x| per op, plus an
absolute 1e-300 per op for underflow) is added to the radius and the radii are inflated by (1 + γ); the
exact α_j = a_j W_j are enclosed by fl(a_j W_j) ± 2u|·|; scalar roots/powers use arb. So each node
bound encloses the node's exact maximum of ‖g‖ from above. When k ≤ K the 2^k gradients are enclosed
exactly the same way and sorted. Nodes are dropped only (i) when their rigorous bound ≤ the current
lower bound, or ≤ (1 + rel_gap)·lower (then the bound enters `closed`, the max of dropped bounds, which
enters `upper`), or (ii) when infeasibility of {x : ‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0 for the fixed j}
(a superset of the open region) is PROVED by a Farkas/SOCP certificate: y ≥ 0 with
Σ y_j s_j b_j + R‖Σ y_j s_j W_j‖ < 0, checked in interval arithmetic (y comes from clarabel's dual; the
solver is never trusted). upper = max(closed, open node bounds, lower) rounded up. A leaf pattern whose
top 2^k patterns are not resolved after a few SOCPs is split further (down to single patterns). On the
sphere a leaf pattern's
bound ‖g‖ is refined to (‖g‖² − δ²)^{1/2} when a dual certificate y ≥ 0 proves |g·x| ≥ δ on the closed
cell ∩ ball: g·x ≥ (g − Σ y_j s_j W_j)·x − Σ y_j s_j b_j ≥ −R‖g − Σ y_j s_j W_j‖ − Σ y_j s_j b_j.

Lower bound (attained)
----------------------
Every candidate is an exact rational point: a float point in the ball, or on the sphere the inverse
stereographic image (x = (2y + (‖y‖²−1)N)/(‖y‖²+1), exactly ‖x‖ = 1) of a float y, with pole
N = −sign(x_k)e_k, k = argmax |x_k| (x far from the pole). Its signs W_j·x + b_j (all ≠ 0), ‖x‖² < R²
(ball), and the value ‖g‖² or ‖g‖² − (g·x)² are computed exactly (flint fmpq); `lower` is the float of
its square root stepped down 3 ulps. Candidates come from: data points and random points; exact 1-D
maximisation along lines (ball) / great circles (sphere) through the current points (all kink crossings
are found analytically, each arc's maximiser of τ is the zero of g·x(θ) or an end pulled inward), which
moves across adjacent cells and, from a cap's pole, reaches the cap's boundary where τ is largest;
clarabel points of B&B nodes and of top leaf patterns (on the sphere: a point of cell ∩ {g·x = 0} pushed
to ‖x‖ = 1).
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
from flint import arb, fmpq, fmpq_mat

U = 2.0 ** -53
TINY = 1e-300


def _gam(n):
    return n * U / (1 - n * U)


def _up(x, n=4):
    return x * (1 + _gam(n + 2)) + TINY * (n + 2)


def _mm(Am, Ar, Bm, Br=None):
    """Enclosure of the product of [Am ± Ar] and [Bm ± Br] (Br None: B exact)."""
    n = Am.shape[-1]
    Cm = Am @ Bm
    aA, aB = np.abs(Am), np.abs(Bm)
    Cr = Ar @ aB + _gam(n) * (aA @ aB)
    if Br is not None:
        Cr = Cr + aA @ Br + Ar @ Br
    return Cm, _up(Cr, 2 * n + 8)


def _add(am, ar, bm, br):
    m = am + bm
    return m, _up(ar + br + U * np.abs(m))


def _norm_up(m, r):
    x = np.abs(m) + r
    return _up(math.sqrt(float(np.sum(x * x))), x.size + 4)


def _sqrt_up(x):
    return _up(math.sqrt(max(x, 0.0)))


def _lam_up(Hm, Hr, q=8):
    """Upper bound of λ_max of the exact PSD matrix in [Hm ± Hr] via ‖H^{2^q}‖_F^{2^-q}."""
    S = 0
    for _ in range(q):
        s = float(np.max(np.abs(Hm) + Hr))
        if s == 0.0:
            return 0.0
        e = math.frexp(s)[1]
        Hm, Hr = np.ldexp(Hm, -e), _up(np.ldexp(Hr, -e))
        S += e
        Hm, Hr = _mm(Hm, Hr, Hm, Hr)
        S *= 2
    F = _norm_up(Hm, Hr)
    if F == 0.0:
        return 0.0
    val = (arb(2) ** (arb(S) / 2 ** q)) * (arb(F) ** (arb(1) / 2 ** q))
    return float(np.nextafter(float(val.upper()), np.inf)) * (1 + 4 * U)


@dataclass(frozen=True)
class Bracket:
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


class _Net:
    def __init__(self, W, b, a, v, sphere, R, exact=None):
        self.W, self.b, self.a, self.v = W, b, a, v
        self.m, self.d = W.shape
        self.sphere, self.R = sphere, (1.0 if sphere else float(R))
        Wx, bx, ax, vx = exact if exact is not None else (W.tolist(), b.tolist(), a.tolist(), v.tolist())
        self.Wq = fmpq_mat(self.m, self.d, [_q(t) for row in Wx for t in row])
        self.bq = [_q(t) for t in bx]
        aq = [_q(t) for t in ax]
        self.Aq = fmpq_mat(self.m, self.d, [aq[j] * self.Wq[j, l] for j in range(self.m) for l in range(self.d)])
        self.vq = [_q(t) for t in vx]
        # α_j = a_j W_j enclosed around its correctly rounded float: |fl(q) − q| ≤ u|fl(q)|(1 + u)
        self.Am = np.array([[float(Fraction(int(self.Aq[j, l].p), int(self.Aq[j, l].q))) for l in range(self.d)]
                            for j in range(self.m)], float).reshape(self.m, self.d)
        self.Ar = _up(2 * U * np.abs(self.Am))
        self.v_rad = _up(2 * U * np.abs(np.asarray(v, float)))
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
        elif not n2 < fmpq(*Fraction(self.R).as_integer_ratio()) ** 2:
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

    # ---------- rigorous node bound ----------
    def node_bound(self, cm, cr, Ui):
        k = len(Ui)
        Aum, Aur = self.Am[Ui], self.Ar[Ui]
        one = np.ones(k)
        sm, sr = one @ Aum, _up(one @ Aur + _gam(k) * (one @ np.abs(Aum)), 2 * k + 8)
        c0m, c0r = _add(cm, cr, 0.5 * sm, 0.5 * sr)
        tri = _up(_norm_up(c0m, c0r) + 0.5 * float(np.sum(self.nAup[Ui])), k + 4)
        if k == 0:
            return min(tri, _norm_up(c0m, c0r))
        if k > 12:                          # ‖g‖ ≤ ‖c₀‖ + ½√k‖A_U‖₂
            Hm, Hr = _mm(Aum.T, Aur.T, Aum, Aur)
            tri = min(tri, _up(_norm_up(c0m, c0r) + 0.5 * _sqrt_up(_up(k * _lam_up(Hm, Hr)))))
        w = c0m
        wwm, wwr = _mm(w[None], np.zeros((1, self.d)), w)
        wwm, wwr = float(wwm[0]), float(wwr[0])
        ww_low = (wwm - wwr) * (1 - 4 * U) - TINY
        if ww_low <= 1e-200:
            return tri
        ww_up = _up(wwm + wwr)
        nw_low = math.sqrt(ww_low) * (1 - 4 * U)
        bm, br = _mm(Aum, Aur, w)
        gm, gr = _mm(c0m[None], c0r[None], w)
        Lnum = _up(abs(float(gm[0])) + float(gr[0]) + 0.5 * float(np.sum(np.abs(bm) + br)), k + 6)
        L = _up(Lnum / nw_low)
        Pc = _norm_up(np.zeros(self.d), c0r)
        lo, hi = (1 / ww_up) * (1 - 4 * U), _up(1 / ww_low)
        im, ir = 0.5 * (lo + hi), _up(0.5 * (hi - lo) + U * hi)
        # β·inv (MR)
        bim = bm * im
        bir = _up(np.abs(bm) * ir + br * (im + ir) + U * np.abs(bim))
        Q = math.inf
        if k <= 400 and self.Gm is not None:
            om = np.outer(bim, bm)
            orr = _up(np.outer(np.abs(bim), br) + np.outer(bir, np.abs(bm) + br) + U * np.abs(om))
            Gm = self.Gm[np.ix_(Ui, Ui)] - om
            Gr = _up(self.Gr[np.ix_(Ui, Ui)] + orr + U * np.abs(Gm))
            Q = _up(float(np.sum(np.abs(Gm) + Gr)), k * k + 4)
        if k > 12:
            om = np.outer(bim, w)
            orr = _up(np.outer(bir, np.abs(w)) + U * np.abs(om))
            Bm, Br = Aum - om, _up(Aur + orr + U * np.abs(Aum - om))
            Hm, Hr = _mm(Bm.T, Br.T, Bm, Br)
            Q = min(Q, _up(k * _lam_up(Hm, Hr)))
        P = _up(Pc + 0.5 * _sqrt_up(Q))
        return min(tri, _sqrt_up(_up(L * L + P * P)))

    def enum_bounds(self, cm, cr, Ui):
        """Rigorous upper bounds of ‖g‖ for all 2^k patterns of the free units Ui."""
        k = len(Ui)
        S = ((np.arange(2 ** k)[:, None] >> np.arange(k)[None]) & 1).astype(float)  # (2^k, k)
        Gm, Gr = _mm(S, np.zeros_like(S), self.Am[Ui], self.Ar[Ui]) if k else (np.zeros((1, self.d)),) * 2
        Gm, Gr = _add(Gm, Gr, cm[None], cr[None])
        X = np.abs(Gm) + Gr
        ub = _up(np.sqrt(np.sum(X * X, axis=1)), self.d + 4)
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
        zm, zr = _mm(ys[None], np.zeros((1, len(y))), self.W[idx])
        Tm, Tr = _mm(ys[None], np.zeros((1, len(y))), self.b[idx])
        dm, dr = _add(gm, gr, -zm[0], zr[0])
        T_up = float(Tm[0]) + float(Tr[0])
        T_up = T_up + 4 * U * abs(T_up) + TINY
        N_up = _up(self.R * _norm_up(dm, dr))
        return -T_up - N_up - 4 * U * (abs(T_up) + N_up) - TINY   # minus the rounding of -T_up - N_up

    def farkas(self, idx, sg, y):
        """Proves {‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0, j ∈ idx} = ∅ from y ≥ 0 (interval arithmetic)."""
        if not self.hyper_exact:
            return False
        if y is None or not np.any(y > 0):
            return False
        ys = y * sg
        zm, zr = _mm(ys[None], np.zeros((1, len(y))), self.W[idx])
        Tm, Tr = _mm(ys[None], np.zeros((1, len(y))), self.b[idx])
        T_up = float(Tm[0]) + float(Tr[0])
        T_up = T_up + 4 * U * abs(T_up) + TINY              # upper bound of T despite the rounding of +
        N_up = _up(self.R * _norm_up(zm[0], zr[0]))
        return T_up + N_up + 4 * U * (abs(T_up) + N_up) + TINY < 0


def certified_bracket(W, b, a, v, *, sphere: bool, R=1.0, rel_gap: float = 0.01, time_limit: float = 60.0,
                      seed: int = 0, data_points=None, progress=None) -> Bracket:
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    exact = ([list(r) for r in W], list(b), list(a), list(v))
    W = np.array([[float(t) for t in r] for r in W], dtype=float, ndmin=2)
    b, a, v = (np.array([float(t) for t in x], dtype=float).ravel() for x in (b, a, v))
    net = _Net(W, b, a, v, sphere, R, exact)
    net.deadline = deadline
    m, d, Rr = net.m, net.d, net.R
    rng = np.random.default_rng(seed)
    net.nAup = _up(np.sqrt(np.sum((np.abs(net.Am) + net.Ar) ** 2, axis=1)), d + 4)
    net.Gm = net.Gr = None
    if m <= 400:
        net.Gm, net.Gr = _mm(net.Am, net.Ar, net.Am.T, net.Ar.T)
    best = {"v2": fmpq(-1), "x": None, "pat": None, "low": 0.0}
    last = [t0]
    nodes = [0]

    def low_of(v2):
        f = float(Fraction(int(v2.p), int(v2.q)))
        x = math.sqrt(max(f, 0.0))
        for _ in range(3):
            x = float(np.nextafter(x, 0.0))
        return max(x, 0.0)

    def offer(x):
        """Try the float point x as a witness; returns True if the lower bound improved."""
        if not np.all(np.isfinite(x)) or not np.any(x):
            return False
        xq = net.rational_point(x)
        r = net.exact(xq)
        if r is None or not r[0] > best["v2"]:
            return False
        best.update(v2=r[0], x=tuple(Fraction(int(t.p), int(t.q)) for t in xq), pat=r[1], low=low_of(r[0]))
        return True

    def offer_in(x, t):
        """Ball: a solver point of margin t, shrunk towards 0 by less than its margin."""
        for e in (0.25 * min(t / Rr, 1e-6), 0.25 * min(t / Rr, 1e-3)):
            if offer(x * (1 - e)) or best["x"] is not None and net.fvalue(x[None] * (1 - e))[0][0] <= best["low"]:
                return

    def tick(upper_now):
        now = time.perf_counter()
        if progress is not None and now - last[0] >= 1.0:
            last[0] = now
            progress(best["low"], upper_now, nodes[0], now - t0)

    # ---------- local search: exact 1-D maximisation along lines / great circles ----------
    def line_best(x, r):
        P, Qv = net.W @ x, net.W @ r
        if sphere:
            rho = np.hypot(P, Qv)
            ok = np.abs(net.b) < rho
            ph = np.arctan2(Qv, P)[ok]
            ac = np.arccos(np.clip(-net.b[ok] / rho[ok], -1, 1))
            th = np.sort(np.mod(np.concatenate([ph + ac, ph - ac, [0.0]]), 2 * np.pi))
            lo, hi = th, np.append(th[1:], 2 * np.pi)
            keep = hi - lo > 1e-12
            lo, hi = lo[keep], hi[keep]
            mid = 0.5 * (lo + hi)
            pts = np.cos(mid)[:, None] * x + np.sin(mid)[:, None] * r
            _, G = net.fvalue(pts)
            A_, B_ = G @ x, G @ r
            z0 = np.mod(np.arctan2(-A_, B_), np.pi)
            cand = []
            for off in (0.0, np.pi):
                cand.append(np.clip(z0 + off, lo, hi))
            dl = np.minimum(1e-9, 0.25 * (hi - lo))
            cand = [np.clip(c, lo + dl, hi - dl) for c in cand]
            vals = [np.sum(G * G, 1) - (A_ * np.cos(c) + B_ * np.sin(c)) ** 2 for c in cand]
            i2 = np.argmax(np.maximum(vals[0], vals[1]))
            c = cand[0][i2] if vals[0][i2] >= vals[1][i2] else cand[1][i2]
            return np.cos(c) * x + np.sin(c) * r, math.sqrt(max(vals[0][i2], vals[1][i2], 0))
        # ball: x + t r, ‖x + t r‖ < R
        rr, xr, xx = r @ r, x @ r, x @ x
        disc = xr * xr - rr * (xx - (Rr * (1 - 1e-9)) ** 2)
        if disc <= 0:
            return x, -1.0
        tmin, tmax = (-xr - math.sqrt(disc)) / rr, (-xr + math.sqrt(disc)) / rr
        with np.errstate(divide="ignore", invalid="ignore"):
            tc = -(P + net.b) / Qv
        tc = tc[np.isfinite(tc) & (tc > tmin) & (tc < tmax)]
        th = np.sort(np.concatenate([[tmin, tmax], tc]))
        mid = 0.5 * (th[:-1] + th[1:])
        pts = x + mid[:, None] * r
        val, _ = net.fvalue(pts)
        i = int(np.argmax(val))
        return pts[i], val[i]

    def local_search(x, iters=6, ndir=6):
        cur, curv = x, net.fvalue(x[None])[0][0]
        for _ in range(iters):
            if time.perf_counter() > deadline:
                break
            _, G = net.fvalue(cur[None])
            g = G[0]
            dirs = list(rng.standard_normal((ndir, d)))
            dirs.append(g)
            if sphere:
                dirs.append(g - (g @ cur) * cur)
            improved = False
            for r in dirs:
                if sphere:
                    r = r - (r @ cur) * cur
                nr = np.linalg.norm(r)
                if nr == 0:
                    continue
                p, val = line_best(cur, r / nr)
                if val > curv * (1 + 1e-12):
                    cur, curv, improved = p, val, True
            if not improved:
                break
        if curv > best["low"]:
            offer(cur)
        return cur

    starts = []
    if data_points is not None:
        starts += list(np.array(data_points, dtype=float, ndmin=2))
    rnd = rng.standard_normal((max(8, min(64, 2 * m)), d))
    rnd /= np.linalg.norm(rnd, axis=1, keepdims=True)
    starts += list(rnd * (1.0 if sphere else 0.5 * Rr))
    if not sphere:
        starts += list(rnd[: len(rnd) // 2] * 0.999 * Rr)
    t_starts = t0 + 0.15 * float(time_limit)          # the seeding phase gets 15% of the budget
    for x0 in starts:
        if time.perf_counter() > min(deadline, t_starts):
            break
        x0 = x0 / np.linalg.norm(x0) if sphere else x0
        local_search(x0 if sphere or x0 @ x0 < Rr * Rr else 0.5 * Rr * x0 / np.linalg.norm(x0))

    # ---------- branch and bound ----------
    order = np.argsort(-net.nAup, kind="stable")
    KE = 16 if m <= 16 else min(14, max(8, int(math.log2(2e6 / max(d, 1)))))
    closed = [0.0]
    heap = []
    cnt = [0]

    def push(depth, signs, cm, cr, pt):
        Ui = order[depth:]
        bd = net.node_bound(cm, cr, Ui)
        if bd <= best["low"]:
            return
        if bd <= best["low"] * (1 + rel_gap):
            closed[0] = max(closed[0], bd)
            return
        cnt[0] += 1
        heapq.heappush(heap, (-bd, cnt[0], depth, signs, cm, cr, pt))

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
            if t <= 0:
                if net.farkas(idx, sg, y):
                    continue
                return V
            if not sphere:
                offer_in(x, t)
                heapq.heappush(h, (nV, i, True))
                continue
            g = Gm[i]
            z = x - (x @ g) / max(g @ g, 1e-300) * g
            if np.linalg.norm(z) < 1e-12:
                z = rng.standard_normal(d)
                z -= (z @ g) / max(g @ g, 1e-300) * g
            r2 = net.socp(idx, sg, eq=g, obj=z / np.linalg.norm(z), tfix=0.5 * t)
            if r2 is not None and np.linalg.norm(r2[1]) > 0.999:
                offer(r2[1])
            local_search(x / np.linalg.norm(x), iters=3, ndir=3)
            dl = 0.0                       # rigorous lower bound of |g·x| on the cell ∩ ball
            for sgn in (1.0, -1.0):
                r3 = net.socp(idx, sg, obj=-sgn * g, tfix=0.0)
                if r3 is not None:
                    dl = max(dl, net.dual_low(idx, sg, r3[2], sgn * Gm[i], Gr[i]))
            V2 = V
            if dl > 0:
                V2 = min(V, _sqrt_up(_up(_up(V * V) - dl * dl * (1 - 8 * U))))
            heapq.heappush(h, (-V2, i, True))
        return 0.0

    c_m, c_r = v.copy(), net.v_rad.copy()
    push(0, np.zeros(0), c_m, c_r, None)
    status = "exhausted"
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
        nbd, _, depth, signs, cm, cr, pt = heapq.heappop(heap)
        bd = -nbd
        nodes[0] += 1
        if bd <= best["low"]:
            continue
        if m - depth <= KE:
            lv = leaf(depth, signs, cm, cr)
            if lv is not None:
                closed[0] = max(closed[0], lv)
                continue
        j = int(order[depth])
        for s in (0, 1):
            sg = np.append(signs, 1.0 if s else -1.0)
            ch_pt = None
            if pt is not None and (1.0 if s else -1.0) * (net.W[j] @ pt + net.b[j]) > 1e-12:
                ch_pt = pt
            else:
                idx = order[:depth + 1]
                res = net.socp(idx, sg)
                if res is not None:
                    t, x, y = res
                    if t > 1e-10:
                        ch_pt = x
                        if not sphere and net.fvalue(x[None])[0][0] > best["low"]:
                            offer_in(x, t)
                    elif t < 0 and net.farkas(idx, sg, y):
                        continue
            if s:
                ccm, ccr = _add(cm, cr, net.Am[j], net.Ar[j])
            else:
                ccm, ccr = cm, cr
            push(depth + 1, sg, ccm, ccr, ch_pt)
        if sphere and pt is not None and nodes[0] % 16 == 0:
            local_search(pt / np.linalg.norm(pt), iters=2, ndir=2)
    else:
        status = "exhausted" if time.perf_counter() <= deadline else "time limit"
    top = -heap[0][0] if heap else 0.0
    upper = max(top, closed[0], best["low"])
    upper = float(np.nextafter(upper, np.inf))
    if best["x"] is None:
        wp, wpat = tuple(Fraction(0) for _ in range(d)), tuple()
    else:
        wp, wpat = best["x"], best["pat"]
    sec = time.perf_counter() - t0
    if progress is not None:
        progress(best["low"], upper, nodes[0], sec)
    return Bracket(best["low"], upper, wp, wpat, nodes[0], sec, status)
