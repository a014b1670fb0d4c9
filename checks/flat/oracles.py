"""Independent references of the flat claims: none of them uses the closed forms under test.

* :func:`exact_hessian_trace`: ``sympy.hessian`` of F_S built from its definition with exact dyadic
  rational data (so the same numbers are exact float64 inputs for the closed form), on the activation
  pattern that the data actually realise. Integer degrees give an exact rational.
* :func:`torch_hessian_trace` / :func:`torch_network`: a dense ``torch.func.hessian`` of F_S in float64.
* :func:`mp_min_rescaled_trace`: the minimum over λ > 0 of λ^{2c}A + λ^{-2}a²B by mpmath root finding on
  the derivative (no closed form for λ or Υ).
* :func:`polar_pair_expectation`: E[g1(v1·x) g2(v2·x)] for sums of positively homogeneous pieces, by
  the radial Gamma integral times an mpmath angular quadrature split at the kinks (a different route from
  the moment / arc-cosine formulas of ``numerics.flat.population``).

They use ``numerics.flat`` only to parse an activation name into (c, α₊, α₋).
"""

from __future__ import annotations

from fractions import Fraction
from fractions import Fraction as Fr

import mpmath
import sympy as sp

from numerics import flat

# ---------------------------------------------------------------------------------------------------
# exact Hessian trace


def _sp(x: float) -> sp.Rational:
    return sp.Rational(Fraction(float(x)))


def _sym_sigma(act: flat.Activation, sign: int, u: sp.Expr) -> sp.Expr:
    cc = sp.nsimplify(act.c)
    coef = _sp(act.plus) if sign > 0 else _sp(act.minus)
    return coef * ((sign * u) ** cc)  # on the branch, sign*u > 0


def exact_hessian_trace(a, Theta, X, y, activation, digits: int = 60):
    """trace(sympy.hessian(F_S)) at exact rational data; returns an mpmath number at ``digits``."""
    act = flat.get_activation(activation)
    n, d = X.shape
    m = Theta.shape[0]
    th = sp.Matrix(m, d, lambda j, k: sp.Symbol(f"t{j}_{k}", real=True))
    av = sp.symbols(f"a0:{m}", real=True)
    Xs = [[_sp(v) for v in row] for row in X]
    subs = {av[j]: _sp(a[j]) for j in range(m)}
    subs.update({th[j, k]: _sp(Theta[j, k]) for j in range(m) for k in range(d)})
    resid = []
    for i in range(n):
        hi = 0
        for j in range(m):
            z = sum(th[j, k] * Xs[i][k] for k in range(d))
            zval = z.subs(subs)
            if zval == 0:
                raise ValueError("a pre-activation is exactly 0: the pattern is ambiguous")
            hi += av[j] * _sym_sigma(act, 1 if zval > 0 else -1, z)
        resid.append(hi - _sp(y[i]))
    F = sum(r**2 for r in resid) / (2 * n)
    params = list(av) + list(th)
    tr = sp.hessian(F, params).trace().subs(subs)
    with mpmath.workdps(digits):
        return mpmath.mpf(sp.N(tr, digits + 10))


# ---------------------------------------------------------------------------------------------------
# torch


def relu_B_exact(Theta, X) -> list[Fraction]:
    """B_j = (1/n) Σ_i ReLU′(θ_j·x_i)² ‖x_i‖² from the definition in rationals, ReLU′(0) = 0: the reference for samples
    exactly on a direction's kink (the float product may round θ_j·x_i = 0 either way)."""
    out = []
    for th in Theta:
        s = Fraction(0)
        for x in X:
            if sum((Fraction(float(t)) * Fraction(float(u)) for t, u in zip(th, x, strict=True)), Fraction(0)) > 0:
                s += sum((Fraction(float(u)) ** 2 for u in x), Fraction(0))
        out.append(s / len(X))
    return out


def _torch_sigma(act: flat.Activation, z):
    import torch

    pos = torch.where(z > 0, z, torch.zeros_like(z))
    neg = torch.where(z < 0, -z, torch.zeros_like(z))
    return act.plus * pos**act.c + act.minus * neg**act.c


def torch_network(a, Theta, X, activation):
    import torch

    act = flat.get_activation(activation)
    Z = torch.as_tensor(X, dtype=torch.float64) @ torch.as_tensor(Theta, dtype=torch.float64).T
    return (_torch_sigma(act, Z) @ torch.as_tensor(a, dtype=torch.float64)).numpy()


def torch_hessian_trace(a, Theta, X, y, activation) -> float:
    """Trace of the dense torch.func.hessian of F_S with respect to (a, vec Theta), float64."""
    import torch
    from torch.func import hessian

    act = flat.get_activation(activation)
    m, d = Theta.shape
    Xt = torch.as_tensor(X, dtype=torch.float64)
    yt = torch.as_tensor(y, dtype=torch.float64)

    def F(w):
        aa, th = w[:m], w[m:].reshape(m, d)
        h = _torch_sigma(act, Xt @ th.T) @ aa
        return 0.5 * torch.mean((h - yt) ** 2)

    w0 = torch.cat([torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(Theta, dtype=torch.float64).ravel()])
    return float(torch.trace(hessian(F)(w0)))


def torch_sigma_prime(activation, t):
    """σ′(t) by autograd."""
    import torch

    act = flat.get_activation(activation)
    tt = torch.as_tensor(t, dtype=torch.float64).clone().requires_grad_(True)
    (g,) = torch.autograd.grad(_torch_sigma(act, tt).sum(), tt)
    return g.numpy()


# ---------------------------------------------------------------------------------------------------
# Upsilon by numerical minimisation


def mp_min_rescaled_trace(A, B, a2, c, dps: int = 50):
    """min_{λ>0} λ^{2c}A + λ^{-2} a²B by mpmath root finding on d/d(log λ) (no closed form used)."""
    with mpmath.workdps(dps + 10):
        A, B, a2, c = (mpmath.mpf(x) for x in (A, B, a2, c))
        f = lambda L: mpmath.exp(2 * c * L) * A + mpmath.exp(-2 * L) * a2 * B  # L = log λ
        df = lambda L: 2 * c * mpmath.exp(2 * c * L) * A - 2 * mpmath.exp(-2 * L) * a2 * B
        lo, hi = mpmath.mpf(-60), mpmath.mpf(60)
        for _ in range(400):  # bisection: df is increasing in L
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if df(mid) < 0 else (lo, mid)
        L = mpmath.findroot(df, (lo + hi) / 2)
        return f(L), mpmath.exp(L)


# ---------------------------------------------------------------------------------------------------
# Gaussian expectations in polar coordinates


def pieces(g) -> list[tuple[float, float, float]]:
    """(degree, coef_plus, coef_minus) with g(t) = Σ coef_plus t_+^deg + coef_minus t_-^deg."""
    if isinstance(g, flat.Activation):
        return [(g.c, g.plus, g.minus)]
    if g.poly is not None:
        return [(float(k), float(cf), float(cf) * (-1) ** k) for k, cf in enumerate(g.poly) if cf]
    if g.hom is not None:
        return [(g.hom.c, g.hom.plus, g.hom.minus)]
    raise ValueError(f"{g.name}: not a sum of homogeneous pieces")


def polar_pair_expectation(g1, v1, g2, v2, dps: int = 50):
    """E[g1(v1·x) g2(v2·x)], x ~ N(0, I): ∫ r^{e+1} e^{-r²/2} dr / (2π) × ∫ angular, per pair of pieces."""
    with mpmath.workdps(dps + 10):
        V1 = [mpmath.mpf(float(x)) for x in v1]
        V2 = [mpmath.mpf(float(x)) for x in v2]
        s1 = mpmath.sqrt(mpmath.fsum(x * x for x in V1))
        s2 = mpmath.sqrt(mpmath.fsum(x * x for x in V2))
        cosphi = max(-1, min(1, mpmath.fsum(x * y for x, y in zip(V1, V2, strict=True)) / (s1 * s2)))
        phi = mpmath.acos(cosphi)
        # in the plane of v1, v2: v1 = s1 e_0, v2 = s2 (cos phi, sin phi); kinks where cos ψ or cos(ψ−φ) = 0
        two_pi = 2 * mpmath.pi
        pts = sorted({mpmath.mpf(0), two_pi, mpmath.pi / 2, 3 * mpmath.pi / 2,
                      (phi + mpmath.pi / 2) % two_pi, (phi + 3 * mpmath.pi / 2) % two_pi})
        total = mpmath.mpf(0)

        def piece(t, deg, cp, cm):
            if t > 0:
                return cp * t**deg
            if t < 0:
                return cm * (-t) ** deg
            return mpmath.mpf(cp if deg == 0 else 0)

        for d1, p1, m1 in pieces(g1):
            for d2, p2, m2 in pieces(g2):
                e = mpmath.mpf(d1) + mpmath.mpf(d2)
                radial = 2 ** (e / 2) * mpmath.gamma(e / 2 + 1)
                ang = mpmath.quad(lambda ps, d1=d1, p1=p1, m1=m1, d2=d2, p2=p2, m2=m2:
                                  piece(s1 * mpmath.cos(ps), d1, p1, m1)
                                  * piece(s2 * mpmath.cos(ps - phi), d2, p2, m2), pts)
                total += radial * ang / (2 * mpmath.pi)
        return +total


def polar_population_loss(a, Theta, target, activation, noise: float = 0.0, dps: int = 50):
    """½E[(h − f* − ξ)²] assembled from :func:`polar_pair_expectation` (reference for flat.population P)."""
    act = flat.get_activation(activation)
    with mpmath.workdps(dps + 10):
        am = [mpmath.mpf(float(x)) for x in a]
        m = len(am)
        Eh2 = mpmath.fsum(am[i] * am[j] * polar_pair_expectation(act, Theta[i], act, Theta[j], dps)
                          for i in range(m) for j in range(m))
        Ehf = mpmath.fsum(rg.coef * am[i] * polar_pair_expectation(act, Theta[i], rg.link, rg.v, dps)
                          for rg in target.ridges for i in range(m))
        Ef2 = mpmath.fsum(rg.coef * rh.coef * polar_pair_expectation(rg.link, rg.v, rh.link, rh.v, dps)
                          for rg in target.ridges for rh in target.ridges)
        return (Eh2 - 2 * Ehf + Ef2 + mpmath.mpf(float(noise)) ** 2) / 2


# ---------------------------------------------------------------------------------------------------------------
# An exact oracle: every candidate of the supremum in rationals, for data in general position (no three circles
# through one point, no parallel samples: checked exactly, else the case is skipped). Written from the geometry,
# not from the module: cells are read off the vertices (four around each), and the supremum of
# r_P = n²(Σ c ν t)²/(4 B̃ Σ c² t²) over a closed cell is the largest of its vertex values, the critical value of
# each edge circle whose critical point lies in the closed cell, and the interior critical value when its point
# lies in the cell (or, with two live samples, when the cell meets the critical circle away from 0/0).



def _fx(v):
    return [Fr(float(t)) for t in v]


def _cr(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _dt(a, b):
    return sum(s * t for s, t in zip(a, b, strict=True))


def _solve(M, v):
    """M⁻¹v for a nonsingular square Fraction matrix (Gauss–Jordan), None if singular."""
    k = len(v)
    A = [list(M[i]) + [v[i]] for i in range(k)]
    for c in range(k):
        p = next((r for r in range(c, k) if A[r][c] != 0), None)
        if p is None:
            return None
        A[c], A[p] = A[p], A[c]
        for r in range(k):
            if r != c and A[r][c] != 0:
                f = A[r][c] / A[c][c]
                A[r] = [x - f * y for x, y in zip(A[r], A[c], strict=True)]
    return [A[i][k] / A[i][i] for i in range(k)]


def sphere_sup_squared_exact(nu, X, plus=1.0, minus=0.0, record=None):
    """The exact sup of r over S² (a Fraction), None if the data are not in general position. ``record`` (a dict)
    receives each cell's interior critical value and each (cell, circle)'s edge critical value when their points
    lie in the closed cell."""
    n = len(X)
    Xf, nuf = [_fx(x) for x in X], _fx(nu)
    cp, cm = Fr(plus), -Fr(minus)
    for i in range(n):
        for k in range(i + 1, n):
            w = _cr(Xf[i], Xf[k])
            if not any(w) or any(_dt(Xf[l], w) == 0 for l in range(n) if l not in (i, k)):
                return None   # not in general position
    def coefs(P):
        return [cp if P[l] else cm for l in range(n)]

    def ratio(P, th):
        c = coefs(P)
        lin = sum(c[l] * nuf[l] * _dt(Xf[l], th) for l in range(n))
        q = sum(c[l] ** 2 * _dt(Xf[l], th) ** 2 for l in range(n))
        B = sum(c[l] ** 2 * _dt(Xf[l], Xf[l]) for l in range(n))
        return None if q == 0 or B == 0 else Fr(n * n) * lin * lin / (4 * B * q)

    def in_closure(P, th, skip=()):
        return all((_dt(Xf[l], th) >= 0) if P[l] else (_dt(Xf[l], th) <= 0) for l in range(n) if l not in skip)

    cells = {}   # pattern -> list of (vertex, its two circles)
    best = Fr(0)
    for i in range(n):
        for k in range(i + 1, n):
            for s in (1, -1):
                w = [s * t for t in _cr(Xf[i], Xf[k])]
                base = [_dt(Xf[l], w) > 0 for l in range(n)]
                for bi in (True, False):
                    for bk in (True, False):
                        P = list(base)
                        P[i], P[k] = bi, bk
                        cells.setdefault(tuple(P), []).append((w, (i, k)))
                        r = ratio(P, w)
                        if r is not None:
                            best = max(best, r)
    for P, verts in cells.items():
        c = coefs(P)
        live = [l for l in range(n) if c[l] != 0]
        v = [sum(c[l] * nuf[l] * Xf[l][a] for l in range(n)) for a in range(3)]
        M = [[sum(c[l] ** 2 * Xf[l][a] * Xf[l][b] for l in range(n)) for b in range(3)] for a in range(3)]
        t = _solve(M, v)
        if t is not None:
            for th in (t, [-x for x in t]):
                if in_closure(P, th) and ratio(P, th) is not None:
                    best = max(best, ratio(P, th))
                    if record is not None:
                        record[("interior", P)] = ratio(P, th)
        elif len(live) == 2:
            a, b = live
            side = {(1 if val > 0 else -1 if val < 0 else 0)
                    for w, _ in verts
                    for za, zb in [(c[a] * _dt(Xf[a], w), c[b] * _dt(Xf[b], w))] if za or zb
                    for val in [nuf[b] * za - nuf[a] * zb]}
            if not (side == {1} or side == {-1}):
                B = sum(c[l] ** 2 * _dt(Xf[l], Xf[l]) for l in range(n))
                best = max(best, Fr(n * n) * (nuf[a] ** 2 + nuf[b] ** 2) / (4 * B))
                if record is not None:
                    record[("interior2", P)] = Fr(n * n) * (nuf[a] ** 2 + nuf[b] ** 2) / (4 * B)
        for circ in {j for _, ik in verts for j in ik}:
            x = Xf[circ]
            j = max(range(3), key=lambda q: abs(x[q]))
            E = [_cr(x, [Fr(int(q == e)) for q in range(3)]) for e in range(3) if e != j]
            a2 = [_dt(e, v) for e in E]
            N2 = [[sum(M[p][q] * E[r][p] * E[s][q] for p in range(3) for q in range(3)) for s in range(2)]
                  for r in range(2)]
            cc = _solve(N2, a2)
            if cc is None:
                continue   # rank ≤ 1 on this circle: r_P constant there, met at a vertex of the edge
            phi = [cc[0] * E[0][q] + cc[1] * E[1][q] for q in range(3)]
            for th in (phi, [-q for q in phi]):
                if in_closure(P, th, skip=(circ,)) and ratio(P, th) is not None:
                    best = max(best, ratio(P, th))
                    if record is not None:
                        record[("edge", P, circ)] = ratio(P, th)
    return best


def clustered_sphere_data(seed: int):
    """(X, ν): 5 or 6 samples clustered around a random unit u (spread 0.6) with ν ≈ X u, the data on which the
    candidate-by-candidate comparisons run (with the leaky activation the all-inactive cell holds the supremum)."""
    import numpy as np

    rng = np.random.default_rng(700 + seed)
    u = rng.standard_normal(3)
    u /= np.linalg.norm(u)
    X = u + 0.6 * rng.standard_normal((5 + seed % 2, 3))
    return X, X @ u + 0.1 * rng.standard_normal(len(X))


def sphere_candidates_vs_exact(nu, X, plus: float = 1.0, minus: float = 0.0) -> dict:
    """The routine under test (:mod:`numerics.flat.sphere_cert`) against :func:`sphere_sup_squared_exact`, both
    sides: every interior and edge critical value the oracle finds in its closed cell must be ≤ the routine's bound
    for that candidate (:func:`numerics.flat.sphere_cert.candidate_bound`), compared as exact rationals, and the
    whole-sphere bound must be ≥ the exact supremum and within 1e-12 of it. Returns {"exact", "record", "below"
    (the candidates bounded too low), "seen" (interior/edge counts), "bound" (the SphereBound), "whole_ok"}."""
    import math

    from numerics.flat import sphere_cert as sc

    rec: dict = {}
    exact = sphere_sup_squared_exact(nu, X, plus, minus, record=rec)
    below, seen = [], {"interior": 0, "edge": 0}
    for key, val in rec.items():
        got = sc.candidate_bound(nu, X, key[1], plus, minus,
                                 circle=None if key[0] in ("interior", "interior2") else key[2])
        seen[key[0][:8]] += 1
        if not Fr(got) >= val:
            below.append(f"{key[0]} bound {got:.6g} < exact {float(val):.6g}")
    b = sc.sphere_sup_bound(nu, X, plus, minus)
    whole = exact is not None and Fr(b.kappa_upper) ** 2 >= exact and \
        b.kappa_upper <= math.sqrt(float(exact)) * (1 + 1e-12)
    return {"exact": exact, "record": rec, "below": below, "seen": seen, "bound": b, "whole_ok": bool(whole)}
