r"""The canonical form of a two-layer ReLU net on a ball or a sphere (SPEC §3), in exact arithmetic.

``f = v·x + c + Σ_j α_j ReLU(u_j·x − t_j)`` with ‖u_j‖ = 1, α_j ≠ 0, t_j ∈ [0, ρ) and pairwise distinct
hyperplanes (ρ = R on B_R, 1 on the sphere):

1. a K-piece ψ is written ψ(z) = ψ₀ + s₀ z + Σ_i (s_i − s_{i−1}) ReLU(z − β_i) (K − 1 kinks);
2. a ReLU(w·x + b) = a‖w‖ ReLU(u·x − t), u = w/‖w‖, t = −b/‖w‖;
3. a unit with t ≥ ρ is zero on the domain and dropped; one with t ≤ −ρ is affine there and goes into (v, c);
4. orientation: ReLU(z) = ReLU(−z) + z flips every unit to t > 0; at t = 0 the first nonzero coordinate of
   u is made positive;
5. equal hyperplanes are merged and zero coefficients dropped;
6. hyperplanes are sorted, so that two parametrisations of one function give equal forms.

Every step is done on the exact rationals of the input, without normalising: a unit is kept as
a_j ReLU(w_j·x + b_j) with w_j scaled to max_i |w_ij| = 1, so α_j u_j = a_j w_j, t_j² = b_j²/‖w_j‖² and the
tangential jump norm |α_j|√(1 − t_j²) = |a_j|√(‖w_j‖² − b_j²) are exact. Tests "t ≥ ρ" become
b ≤ 0 ∧ b² ≥ ρ²‖w‖², and "same hyperplane" is equality of the scaled rational tuples: no tolerance
decides anything. A ±10⁶ pair that cancels to a tiny nonzero coefficient in float64 keeps that
coefficient: it is a genuine kink of the float net. The public fields ``alpha, U, t`` are SymPy numbers
for SymPy input and float64 arrays (rounded from the exact values) otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from numerics.rob.net import RELU, PiecewiseLinear, check_domain, f64, parse, to_fraction

__all__ = ["Canonical", "canonicalize"]


@dataclass(frozen=True, eq=False)
class Canonical:
    """f = v·x + c + Σ_j alpha_j ReLU(U_j·x − t_j) on ``domain`` (t_j ∈ [0, radius), ‖U_j‖ = 1).

    ``Wq, bq, aq, vq, cq`` hold the exact rational form (unit j is aq_j·ReLU(Wq_j·x + bq_j)); they are
    ``None`` when the input had irrational SymPy entries.
    """

    alpha: Any
    U: Any
    t: Any
    v: Any
    c: Any
    domain: Any
    exact: bool
    Wq: tuple | None = None
    bq: tuple | None = None
    aq: tuple | None = None
    vq: tuple | None = None
    cq: Any = None

    @property
    def m(self) -> int:
        return len(self.alpha)

    @property
    def rational(self) -> bool:
        return self.Wq is not None

    def net(self):
        """The canonical form as a net (W, b, a, v, c) = (U, −t, alpha, v, c)."""
        if self.exact:
            return ([list(r) for r in self.U], [-x for x in self.t], list(self.alpha), list(self.v), self.c)
        return (self.U.copy(), -self.t, self.alpha.copy(), self.v.copy(), self.c)

    def rational_net(self):
        """The exact form as a net of Fractions: (Wq, bq, aq, vq, cq)."""
        if not self.rational:
            raise ValueError("this canonical form has irrational entries; no rational form exists")
        return (self.Wq, self.bq, self.aq, self.vq, self.cq)

    def normalised(self) -> tuple:
        """The exact form with every hyperplane scaled to max_i |w_i| = 1: equal for equal functions."""
        rows = []
        for w, b, a in zip(self.Wq, self.bq, self.aq, strict=True):
            s = max(abs(x) for x in w)
            rows.append((tuple(x / s for x in w), b / s, a * s))
        return tuple(rows), tuple(self.vq), self.cq

    def jumps2(self, sphere: bool) -> list:
        """Exact squared kink sizes: a²(‖w‖² − b²) = α²(1 − t²) on a sphere, a²‖w‖² = α² on a ball."""
        out = []
        for w, b, a in zip(self.Wq, self.bq, self.aq, strict=True):
            nw2 = sum(x * x for x in w)
            out.append(a * a * (nw2 - b * b) if sphere else a * a * nw2)
        return out

    def tangential_jumps(self):
        """|α_j|·√(1 − t_j²): the norm of the tangential gradient jump across kink j on the sphere."""
        if self.exact:
            if self.rational:
                return [sp.sqrt(_sym(j)) for j in self.jumps2(True)]
            return [sp.Abs(a) * sp.sqrt(1 - t**2) for a, t in zip(self.alpha, self.t, strict=True)]
        if self.rational:
            return np.array([_fsqrt(j) for j in self.jumps2(True)], float)
        return np.abs(self.alpha) * np.sqrt(1 - self.t**2)

    def equals(self, other: Canonical, tol: float = 1e-9) -> bool:
        """Same canonical form: exact equality when both are rational; else within ``tol`` (floats, relative
        to the largest coefficient; a hyperplane present in only one form counts as a coefficient of 0)."""
        if self.rational and other.rational:
            return self.normalised() == other.normalised()
        if self.exact and other.exact:
            if self.m != other.m:
                return False
            pairs = [*zip(self.alpha, other.alpha, strict=True), *zip(self.t, other.t, strict=True),
                     *zip(self.v, other.v, strict=True), (self.c, other.c)]
            pairs += [(x, y) for r1, r2 in zip(self.U, other.U, strict=True) for x, y in zip(r1, r2, strict=True)]
            return all(x == y or sp.simplify(x - y) == 0 for x, y in pairs)
        f = lambda cf: [np.asarray(f64(x), float) for x in (cf.alpha, cf.U, cf.t, cf.v, [cf.c])]  # noqa: E731
        (a1, U1, t1, v1, c1), (a2, U2, t2, v2, c2) = f(self), f(other)
        U1, U2 = U1.reshape(len(a1), len(v1)), U2.reshape(len(a2), len(v2))
        scale = max(1.0, *(float(np.max(np.abs(x), initial=0)) for x in (a1, a2, v1, v2, c1, c2)))
        atol = tol * scale
        if not (np.allclose(v1, v2, rtol=0, atol=atol) and np.allclose(c1, c2, rtol=0, atol=atol)):
            return False
        used = np.zeros(len(a2), bool)
        for i in range(len(a1)):
            d = np.max(np.abs(U2 - U1[i]), axis=1, initial=0) + np.abs(t2 - t1[i]) if len(a2) else np.zeros(0)
            hit = np.flatnonzero((d <= tol) & ~used)
            if len(hit):
                used[hit[0]] = True
                if abs(a1[i] - a2[hit[0]]) > atol:
                    return False
            elif abs(a1[i]) > atol:
                return False
        return bool(np.all(np.abs(a2[~used]) <= atol))


def _sym(x):
    return sp.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else x


def _expand_units(n, activation: PiecewiseLinear):
    """ReLU units (w, b, a) plus the affine part (v, c) of Σ a_k ψ(W_k·x + b_k) + v·x + c."""
    c0, s0, jumps = activation.relu_expansion()
    c0, s0 = to_fraction(c0, "activation"), to_fraction(s0, "activation")
    jumps = [(to_fraction(bt, "activation"), to_fraction(j, "activation")) for bt, j in jumps]
    units, v, c = [], list(n.v), n.c
    for w, bk, ak in zip(n.W, n.b, n.a, strict=True):
        if s0 != 0:
            v = [vi + ak * s0 * wi for vi, wi in zip(v, w, strict=True)]
            c = c + ak * s0 * bk
        c = c + ak * c0
        for bt, jmp in jumps:
            if jmp != 0:
                units.append((w, bk - bt, ak * jmp))
    return units, v, c


def canonicalize(net, domain, *, activation: PiecewiseLinear = RELU, tol: float | None = None) -> Canonical:
    """The canonical form of ``net`` on ``domain`` (see the module docstring; ``tol`` is accepted for
    backward compatibility and ignored: every decision is exact)."""
    check_domain(domain)
    if not isinstance(activation, PiecewiseLinear):
        raise ValueError("activation must be a PiecewiseLinear")
    n = parse(net, domain.d)
    units, v, c = _expand_units(n, activation)
    rho = to_fraction(domain.radius, "R")
    if n.rational and isinstance(rho, Fraction):
        return _canon_rational(units, v, c, domain, rho, n.exact)
    return _canon_sympy(units, v, c, domain)


def _pow2(s: Fraction) -> Fraction:
    """The power of two 2^k with 2^k ≤ s < 2^(k+1)."""
    k = s.numerator.bit_length() - s.denominator.bit_length()
    p = Fraction(2) ** k
    if p > s:
        p /= 2
    elif 2 * p <= s:
        p *= 2
    return p


def _fsqrt(q: Fraction) -> float:
    return float(mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator))


def _canon_rational(units, v, c, domain, rho, exact) -> Canonical:
    d = domain.d
    v, c = list(v), c
    groups: dict[tuple, list] = {}  # normalised hyperplane → [w, b, a], (w, b) its first unit scaled by 2^k
    for w, b, a in units:
        nw2 = sum(x * x for x in w)
        if nw2 == 0:
            c += a * max(b, Fraction(0))
            continue
        if a == 0:
            continue
        if b <= 0 and b * b >= rho * rho * nw2:  # t ≥ ρ: zero on the domain
            continue
        if b >= 0 and b * b >= rho * rho * nw2:  # t ≤ −ρ: affine on the domain
            v = [vi + a * wi for vi, wi in zip(v, w, strict=True)]
            c += a * b
            continue
        first = next(x for x in w if x != 0)
        if b > 0 or (b == 0 and first < 0):  # a ReLU(z) = a ReLU(−z) + a z
            v = [vi + a * wi for vi, wi in zip(v, w, strict=True)]
            c += a * b
            w, b = tuple(-x for x in w), -b
        s = max(abs(x) for x in w)
        key = (tuple(x / s for x in w), b / s)
        # the representative: this unit scaled by a power of two to max_i |w_i| ∈ [1, 2) (exact in binary)
        p2 = _pow2(s)
        w2, b2, a2 = tuple(x / p2 for x in w), b / p2, a * p2
        if key in groups:  # the same hyperplane: λ·(representative) with λ = s2 / s2_rep > 0
            g = groups[key]
            g[2] += a2 * max(abs(x) for x in w2) / max(abs(x) for x in g[0])
        else:
            groups[key] = [w2, b2, a2]
    # sorted by t² = b²/‖w‖², ties by the normalised hyperplane: the same order for every parametrisation
    kept = sorted(((key, g) for key, g in groups.items() if g[2] != 0),
                  key=lambda kg: (kg[1][1] ** 2 / sum(x * x for x in kg[1][0]), kg[0]))
    rows = [tuple(g) for _, g in kept]
    Wq = tuple(r[0] for r in rows)
    bq = tuple(r[1] for r in rows)
    aq = tuple(r[2] for r in rows)
    vq, cq = tuple(v), c
    if exact:
        nrm = [sp.sqrt(_sym(sum(x * x for x in w))) for w in Wq]
        U = tuple(tuple(sp.radsimp(_sym(x) / r) for x in w) for w, r in zip(Wq, nrm, strict=True))
        t = tuple(sp.radsimp(-_sym(b) / r) for b, r in zip(bq, nrm, strict=True))
        al = tuple(sp.radsimp(_sym(a) * r) for a, r in zip(aq, nrm, strict=True))
        return Canonical(al, U, t, tuple(_sym(x) for x in vq), _sym(cq), domain, True, Wq, bq, aq, vq, cq)
    nrm = np.array([_fsqrt(sum(x * x for x in w)) for w in Wq], float)
    Wf = np.array([[float(x) for x in w] for w in Wq], float).reshape(len(Wq), d)
    U = Wf / nrm[:, None] if len(Wq) else np.zeros((0, d))
    t = np.array([-float(b) for b in bq], float) / nrm if len(Wq) else np.zeros(0)
    al = np.array([float(a) for a in aq], float) * nrm if len(Wq) else np.zeros(0)
    vf, cf_ = np.array([float(x) for x in vq], float), float(cq)
    if not (np.all(np.isfinite(al)) and np.all(np.isfinite(vf)) and math.isfinite(cf_)):
        raise ValueError("the canonical form has coefficients outside the float64 range (merged units whose "
                         "scales differ by more than 1e308?): rescale the net")
    return Canonical(al, U, t, vf, cf_, domain, False, Wq, bq, aq, vq, cq)


def _num_eq(x, y, digits: int = 40) -> bool:
    return abs(sp.N(x - y, digits + 10)) < sp.Float(10) ** (-digits)


def _canon_sympy(units, v, c, domain) -> Canonical:
    """Irrational SymPy entries: the same rules in SymPy arithmetic (used for exact S¹ configurations)."""
    def sym(x):
        return _sym(x) if isinstance(x, Fraction) else x

    rho = sym(to_fraction(domain.radius, "R"))
    v = [sym(x) for x in v]
    c = sym(c)
    items = []
    for w, b, a in units:
        w, b, a = [sym(x) for x in w], sym(b), sym(a)
        r2 = sp.expand(sum(x * x for x in w))
        for fs in r2.atoms(sp.sin):  # cos²θ + sin²θ = 1 for units written as (cos θ, sin θ)
            r2 = sp.expand(r2.subs(fs**2, 1 - sp.cos(fs.args[0]) ** 2))
        if r2 == 0:
            c = c + a * sp.Max(b, 0)
            continue
        r = sp.sqrt(r2)
        u = [sp.radsimp(x / r) for x in w]
        t, al = sp.radsimp(-b / r), sp.radsimp(a * r)
        if al == 0 or bool(t >= rho):
            continue
        if bool(t <= -rho):
            v = [vi + al * ui for vi, ui in zip(v, u, strict=True)]
            c = c - al * t
            continue
        first = next(x for x in u if x != 0)
        if bool(t < 0) or (t == 0 and bool(first < 0)):
            v = [vi + al * ui for vi, ui in zip(v, u, strict=True)]
            c = c - al * t
            u, t = [-x for x in u], -t
        items.append((u, t, al))
    groups: list[list] = []
    for u, t, al in items:
        for g in groups:
            if all(_num_eq(x, y) for x, y in zip([*u, t], [*g[0], g[1]], strict=True)):
                if not all(sp.simplify(x - y) == 0 for x, y in zip([*u, t], [*g[0], g[1]], strict=True)):
                    raise ValueError("two hyperplanes agree to 40 digits but are not provably equal")
                g[2] = g[2] + al
                break
        else:
            groups.append([u, t, al])
    rows = []
    for u, t, al in groups:
        if al == 0 or (not al.is_Rational and _num_eq(al, 0, 45) and sp.simplify(al) == 0):
            continue
        rows.append(([float(t), *(float(x) for x in u)], u, t, al))
    rows.sort(key=lambda r: r[0])
    v = [x if x.is_Rational else sp.radsimp(x) for x in v]
    c = c if c.is_Rational else sp.radsimp(c)
    return Canonical(tuple(r[3] for r in rows), tuple(tuple(r[1]) for r in rows), tuple(r[2] for r in rows),
                     tuple(v), c, domain, True)
