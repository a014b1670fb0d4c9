r"""Canonical forms and exact Lipschitz constants of one-hidden-layer ReLU nets (Shmalo 2026, SPEC §3).

A network is ``net = (W, b, a, v, c)`` for

.. math:: f(x) = \sum_k a_k\,\psi(W_k\cdot x + b_k) + v\cdot x + c,

with ψ = ReLU unless ``activation=`` gives another continuous piecewise-linear :class:`PiecewiseLinear`.
Entries are float64 arrays (or anything ``numpy.asarray`` turns into real floats) or nested sequences of
exact SymPy numbers; one SymPy entry makes the whole net exact.

Canonical form (:func:`canonicalize`)
-------------------------------------
``f = v·x + c + Σ_j α_j ReLU(u_j·x − t_j)`` with ‖u_j‖ = 1, α_j ≠ 0 and pairwise distinct hyperplanes:

1. a K-piece ψ is written as ψ(z) = ψ₀ + s₀ z + Σ_i (s_i − s_{i−1}) ReLU(z − β_i) (K − 1 kinks);
2. a ReLU(w·x + b) = a‖w‖ ReLU(u·x − t) with u = w/‖w‖, t = −b/‖w‖ (positive homogeneity);
3. on a domain of radius ρ (ρ = 1 for the sphere, R for the ball) a unit with t ≥ ρ is zero there and
   is dropped; one with t ≤ −ρ is affine there and goes into (v, c);
4. **orientation rule**: ReLU(z) = ReLU(−z) + z flips every unit to t > 0; at t = 0 the first nonzero
   coordinate of u is made positive. Hence t ∈ [0, ρ) on both domains;
5. equal hyperplanes are merged (exactly for SymPy input, within ``tol`` for floats) and zero
   coefficients are dropped (exactly; for floats when |α| ≤ tol · Σ|merged parts| — a ±10⁶ pair cancels —
   or |α| ≤ tol · max_k |α_k|, below what float64 resolves against the other units);
6. hyperplanes are sorted by (t, u) so that two parametrisations of one function compare equal.

Lipschitz constants (:func:`lipschitz`)
---------------------------------------
On the open cell with sign pattern σ (σ_j = 1 where u_j·x > t_j) the gradient is the constant
g_σ = v + Σ_j σ_j α_j u_j.

*Ball B_R.* The ball is convex, so Lip = max ‖g_σ‖ over the cells meeting the open ball. Every such cell
(unless no hyperplane meets the ball) has a facet meeting the open ball, and the facet contains a cell of
the arrangement induced on that hyperplane's slice of the ball (a (d−1)-ball). So the cells are the two
sides of the cells of the induced arrangements, found by recursion down to d = 1 (intervals). No sign
pattern is guessed and nothing is sampled; this is exact for any d, and fast for d ≤ 3 (O(m^d) cells).

*Sphere S^{d−1}, d = 3.* The geodesic constant is the ess-sup of the tangential gradient
‖P_x^⊥ g_σ‖² = ‖g_σ‖² − (g_σ·x)², attained on the closure of some cell (continuity). Fix a cell and a
maximiser x*. If g·x* = 0 the value is ‖g‖² and x* lies on the great circle G_σ = {g_σ·x = 0}: we test
whether G_σ meets the cell's closure (its open arcs, or its crossings with one circle). Otherwise x* is a
critical point of h = ‖g‖² − (g·x)² on the stratum of its active constraints: interior points give h = 0
(x* = ±ĝ), points on one circle are the two critical points of g·x on that circle, and points on two or
more circles are vertices. Every cell with a vertex in its closure is one side of an arc ending there, so
enumerating the arcs of each circle (cut at vertices) with their two side cells, their two endpoints and
their interior critical points, plus the great-circle test per cell, is exact.

*Sphere S¹.* Cells are arcs between kink angles θ_j ± arccos t_j; f′(φ) = g·(−sin φ, cos φ) and its
maximum modulus on an arc is at an endpoint or equals ‖g‖. With SymPy input the kink angles are exact
expressions (units written as (cos q, sin q) give q itself), so coincident kinks coincide: two angles are
merged when their difference is exactly 0 (a warning is raised if it only vanishes to 45 digits); with
floats, nearly coincident kinks raise :class:`KinkCoincidenceWarning`.

*Sphere, disjoint caps (any d).* Cap j is {u_j·x > t_j}. If the open caps are pairwise disjoint
(u_j·u_k ≤ t_j t_k − r_j r_k with r = √(1 − t²)), the cells are the caps and the outside. The outside gives
‖v‖ (d ≥ 3: the great sphere {v·x = 0} is connected and cannot be covered by disjoint open caps), and cap j
gives ‖g‖ if the great sphere {g·x = 0} meets it (√(1 − (u·ĝ)²) ≥ t), else
‖g‖² − (|t g·u| − r‖P_u^⊥ g‖)².

*Otherwise* (sphere d ≥ 4 with overlapping caps, ball d ≥ 4 with many units: exact but possibly slow, so
``max_exact_units``): a certified bracket. The lower end is the tangential gradient at a genuine point in a
genuine cell (sampled), the upper end max_s ‖c₀ + ½Aᵀs‖ ≤ ‖c₀‖ + ½ min(√m ‖A‖₂, Σ‖A_j‖) with
c₀ = v + ½Σα_j u_j, A_j = α_j u_j, valid because every g_σ has this form with s ∈ {±1}^m and the geodesic
constant is at most max ‖g_σ‖.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np
import sympy as sp

__all__ = ["Ball", "Sphere", "PiecewiseLinear", "RELU", "Canonical", "Lipschitz", "canonicalize",
           "lipschitz", "evaluate", "gradient", "as_float", "as_exact",
           "rigidity", "Rigidity", "KinkCoincidenceWarning", "caps_disjoint"]

MP_DPS = 50
TOL_FLOAT = 1e-9  # combinatorial decisions (on a hyperplane / same point) in float64
TOL_MP = mpmath.mpf(10) ** -35  # the same at 50 digits


class KinkCoincidenceWarning(UserWarning):
    """Two distinct kinks (float input) nearly coincide: the Lipschitz constant is ill-conditioned there."""


# ----------------------------------------------------------------------------------------------- domains
@dataclass(frozen=True)
class Sphere:
    """The unit sphere S^{d−1} ⊂ R^d with the geodesic (arc-length) metric."""

    d: int

    def __post_init__(self):
        if not isinstance(self.d, int | np.integer) or self.d < 2:
            raise ValueError(f"Sphere(d): d must be an integer >= 2, got {self.d!r}")

    @property
    def radius(self):
        return 1


@dataclass(frozen=True)
class Ball:
    """The closed ball {‖x‖ ≤ R} ⊂ R^d with the Euclidean metric."""

    d: int
    R: Any = 1

    def __post_init__(self):
        if not isinstance(self.d, int | np.integer) or self.d < 1:
            raise ValueError(f"Ball(d, R): d must be an integer >= 1, got {self.d!r}")
        try:
            r = float(self.R)
        except (TypeError, ValueError):
            raise ValueError(f"Ball(d, R): R must be a real number, got {self.R!r}") from None
        if not (math.isfinite(r) and r > 0):
            raise ValueError(f"Ball(d, R): R must be finite and > 0, got {self.R!r}")

    @property
    def radius(self):
        return self.R


@dataclass(frozen=True)
class PiecewiseLinear:
    """Continuous ψ with breakpoints β_1 < … < β_{K−1}, slopes s_0..s_{K−1} and ψ(β_1) given by ``value``.

    ψ(z) = value + s_0 (z − β_1) + Σ_i (s_i − s_{i−1}) ReLU(z − β_i).
    """

    breakpoints: tuple
    slopes: tuple
    value: Any = 0

    def __post_init__(self):
        if len(self.slopes) != len(self.breakpoints) + 1 or not self.breakpoints:
            raise ValueError("PiecewiseLinear: need K-1 >= 1 breakpoints and K slopes")
        if any(not (float(b2) > float(b1)) for b1, b2 in zip(self.breakpoints, self.breakpoints[1:],
                                                             strict=False)):
            raise ValueError("PiecewiseLinear: breakpoints must increase strictly")

    @property
    def K(self) -> int:
        return len(self.slopes)

    def relu_expansion(self):
        """(c0, s0, [(β_i, jump_i)]) with ψ(z) = c0 + s0 z + Σ_i jump_i ReLU(z − β_i)."""
        b1 = self.breakpoints[0]
        c0 = self.value - self.slopes[0] * b1
        jumps = [(b, self.slopes[i + 1] - self.slopes[i]) for i, b in enumerate(self.breakpoints)]
        return c0, self.slopes[0], jumps


RELU = PiecewiseLinear((0,), (0, 1), 0)


# ---------------------------------------------------------------------------------------------- parsing
def _is_exact(obj) -> bool:
    if isinstance(obj, sp.Basic):
        return True
    if isinstance(obj, list | tuple):
        return any(_is_exact(o) for o in obj)
    if isinstance(obj, np.ndarray) and obj.dtype == object:
        return any(_is_exact(o) for o in obj.ravel())
    return False


def _to_exact(x, what: str):
    if isinstance(x, sp.Float | float | np.floating):
        if not math.isfinite(float(x)):
            raise ValueError(f"{what} contains a non-finite value ({x})")
        return sp.Rational(float(x))
    if isinstance(x, bool | np.bool_):
        raise ValueError(f"{what}: booleans are not a supported dtype")
    if isinstance(x, int | np.integer):
        return sp.Integer(int(x))
    if isinstance(x, sp.Basic):
        if x.free_symbols:
            raise ValueError(f"{what} contains free symbols {x.free_symbols}: numbers are required")
        if x.has(sp.nan, sp.oo, -sp.oo, sp.zoo):
            raise ValueError(f"{what} contains a non-finite value ({x})")
        if x.is_real is False or x.is_extended_real is False:
            raise ValueError(f"{what} contains a non-real value ({x})")
        return x
    raise ValueError(f"{what}: unsupported entry type {type(x).__name__}")


def _float_array(x, what: str) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists etc.
        raise ValueError(f"{what}: cannot be read as an array ({exc})") from None
    if arr.dtype == object or arr.dtype.kind not in "fiu":
        raise ValueError(f"{what}: unsupported dtype {arr.dtype} (need real float64 or exact SymPy)")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} contains NaN or inf")
    return arr


@dataclass(frozen=True)
class _Net:
    W: Any
    b: Any
    a: Any
    v: Any
    c: Any
    exact: bool
    m: int
    d: int


def _parse(net, d: int | None = None) -> _Net:
    if not isinstance(net, list | tuple) or len(net) != 5:
        raise ValueError("net must be a 5-tuple (W, b, a, v, c)")
    W, b, a, v, c = net
    exact = _is_exact(net)
    if exact:
        Wl = [list(r) for r in (W.tolist() if isinstance(W, np.ndarray) else W)]
        m = len(Wl)
        dd = len(Wl[0]) if m else (len(v) if hasattr(v, "__len__") else -1)
        if any(len(r) != dd for r in Wl):
            raise ValueError("W: rows have different lengths")
        W_ = [[_to_exact(x, "W") for x in r] for r in Wl]
        b_ = [_to_exact(x, "b") for x in _seq(b, m, "b")]
        a_ = [_to_exact(x, "a") for x in _seq(a, m, "a")]
        v_ = [_to_exact(x, "v") for x in _seq(v, dd, "v")]
        if isinstance(c, list | tuple | np.ndarray):
            raise ValueError("c must be a scalar")
        c_ = _to_exact(c, "c")
        out = _Net(W_, b_, a_, v_, c_, True, m, dd)
    else:
        W_ = _float_array(W, "W")
        v_ = _float_array(v, "v")
        if v_.ndim != 1:
            raise ValueError(f"v must be a vector, got shape {v_.shape}")
        if W_.size == 0:
            W_ = W_.reshape(0, v_.shape[0])
        if W_.ndim != 2:
            raise ValueError(f"W must be a (m, d) matrix, got shape {W_.shape}")
        m, dd = W_.shape
        b_, a_ = _float_array(b, "b").reshape(-1), _float_array(a, "a").reshape(-1)
        c_ = _float_array(c, "c")
        if c_.ndim != 0:
            raise ValueError(f"c must be a scalar, got shape {c_.shape}")
        for name, arr, n in (("b", b_, m), ("a", a_, m), ("v", v_, dd)):
            if arr.shape != (n,):
                raise ValueError(f"{name} has shape {arr.shape}, expected ({n},)")
        out = _Net(W_, b_, a_, v_, float(c_), False, m, dd)
    if d is not None and out.d != d:
        raise ValueError(f"the net has input dimension {out.d} but the domain has d = {d}")
    return out


def _seq(x, n, what):
    x = x.tolist() if isinstance(x, np.ndarray) else x
    if not isinstance(x, list | tuple) or len(x) != n:
        raise ValueError(f"{what} must have length {n}")
    return list(x)


# ------------------------------------------------------------------------------------------- canonical
@dataclass(frozen=True, eq=False)
class Canonical:
    """f = v·x + c + Σ_j alpha_j ReLU(U_j·x − t_j) on ``domain`` (t_j ∈ [0, radius), ‖U_j‖ = 1)."""

    alpha: Any
    U: Any
    t: Any
    v: Any
    c: Any
    domain: Any
    exact: bool

    @property
    def m(self) -> int:
        return len(self.alpha)

    def net(self):
        """The canonical form as a net (W, b, a, v, c) = (U, −t, alpha, v, c)."""
        if self.exact:
            return ([list(r) for r in self.U], [-x for x in self.t], list(self.alpha), list(self.v), self.c)
        return (self.U.copy(), -self.t, self.alpha.copy(), self.v.copy(), self.c)

    def tangential_jumps(self):
        """|α_j|·√(1 − t_j²): the norm of the tangential gradient jump across kink j on the sphere."""
        if self.exact:
            return [sp.Abs(a) * sp.sqrt(1 - t**2) for a, t in zip(self.alpha, self.t, strict=True)]
        return np.abs(self.alpha) * np.sqrt(1 - self.t**2)

    def equals(self, other: Canonical, tol: float = 1e-9) -> bool:
        """Same canonical form: exact equality for SymPy; for floats, equal within ``tol`` (relative to the
        largest coefficient), a hyperplane present in only one form counting as a coefficient of 0."""
        if self.exact and other.exact:
            if self.m != other.m:
                return False
            pairs = [*zip(self.alpha, other.alpha, strict=True), *zip(self.t, other.t, strict=True),
                     *zip(self.v, other.v, strict=True), (self.c, other.c)]
            pairs += [(x, y) for r1, r2 in zip(self.U, other.U, strict=True)
                      for x, y in zip(r1, r2, strict=True)]
            return all(x == y or sp.simplify(x - y) == 0 for x, y in pairs)
        # floats: hyperplanes are matched within tol; an unmatched one must have |α| ≤ atol (a coefficient
        # float64 resolves in one parametrisation and cancels away in the other)
        f = lambda cf: [np.asarray(_f64(x), float) for x in (cf.alpha, cf.U, cf.t, cf.v, [cf.c])]  # noqa: E731
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


def _f64(x):
    if isinstance(x, list | tuple):
        return [_f64(y) for y in x]
    if isinstance(x, np.ndarray):
        return x.astype(float)
    return float(x)


def _expand_units(n: _Net, activation: PiecewiseLinear):
    """ReLU units (w, b, a) plus the affine part (v, c) of Σ a_k ψ(W_k·x + b_k) + v·x + c."""
    c0, s0, jumps = activation.relu_expansion()
    if n.exact:
        c0, s0 = _to_exact(c0, "activation"), _to_exact(s0, "activation")
        jumps = [(_to_exact(bt, "activation"), _to_exact(j, "activation")) for bt, j in jumps]
    units, v, c = [], list(n.v) if n.exact else n.v.astype(float).copy(), n.c
    for k in range(n.m):
        w, bk, ak = n.W[k], n.b[k], n.a[k]
        if s0 != 0:  # the linear part of ψ
            if n.exact:
                v = [vi + ak * s0 * wi for vi, wi in zip(v, w, strict=True)]
            else:
                v = v + ak * s0 * w
            c = c + ak * s0 * bk
        c = c + ak * c0
        for bt, jmp in jumps:
            if jmp != 0:
                units.append((w, bk - bt, ak * jmp))
    return units, v, c


def canonicalize(net, domain, *, activation: PiecewiseLinear = RELU, tol: float = 1e-12) -> Canonical:
    """The canonical form of ``net`` on ``domain`` (see the module docstring for the rules)."""
    _check_domain(domain)
    if not isinstance(activation, PiecewiseLinear):
        raise ValueError("activation must be a PiecewiseLinear")
    n = _parse(net, domain.d)
    units, v, c = _expand_units(n, activation)
    return _canon_exact(units, v, c, domain) if n.exact else _canon_float(units, v, c, domain, tol)


def _check_domain(domain):
    if not isinstance(domain, Sphere | Ball):
        raise ValueError(f"domain must be Sphere(d) or Ball(d, R), got {domain!r}")


def _canon_float(units, v, c, domain, tol):
    rho = float(domain.radius)
    d = domain.d
    v = np.asarray(v, float).copy()
    c = float(c)
    U, T, A, S = [], [], [], []
    for w, b, a in units:
        w = np.asarray(w, float)
        r = float(np.linalg.norm(w))
        if r == 0.0:
            c += a * max(b, 0.0)
            continue
        u, t, al = w / r, -b / r, a * r
        if al == 0.0 or t >= rho:
            continue
        if t <= -rho:  # affine on the domain
            v += al * u
            c -= al * t
            continue
        if abs(t) <= tol:
            t = 0.0
        if t < 0 or (t == 0 and u[np.flatnonzero(u)[0]] < 0):  # ReLU(z) = ReLU(-z) + z
            v += al * u
            c -= al * t
            u, t = -u, -t
        U.append(u)
        T.append(t)
        A.append(al)
        S.append(abs(al))
    if not U:
        return Canonical(np.zeros(0), np.zeros((0, d)), np.zeros(0), v, c, domain, False)
    U, T, A, S = np.array(U), np.array(T), np.array(A), np.array(S)
    # merge equal hyperplanes (union-find on the pairwise closeness graph)
    key = np.hstack([U, T[:, None] / rho])
    order = np.lexsort(key.T[::-1])
    parent = list(range(len(A)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    close = np.max(np.abs(key[:, None, :] - key[None, :, :]), axis=2) <= tol
    for i, j in zip(*np.nonzero(np.triu(close, 1)), strict=True):
        parent[find(i)] = find(j)
    groups: dict[int, list[int]] = {}
    for i in order:
        groups.setdefault(find(i), []).append(i)
    rows = []
    floor = tol * float(np.max(S))  # float64 cannot resolve coefficients below this against the others
    for idx in groups.values():
        al, sc = float(np.sum(A[idx])), float(np.sum(S[idx]))
        if abs(al) <= tol * sc or abs(al) <= floor:
            continue
        u = U[idx[0]]
        rows.append((T[idx[0]], *u, al))
    rows.sort()
    if not rows:
        return Canonical(np.zeros(0), np.zeros((0, d)), np.zeros(0), v, c, domain, False)
    R = np.array(rows)
    return Canonical(R[:, -1].copy(), R[:, 1:-1].copy(), R[:, 0].copy(), v, c, domain, False)


def _canon_exact(units, v, c, domain):
    rho = _to_exact(domain.radius, "R")
    v = list(v)
    items = []
    for w, b, a in units:
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
    # merge equal hyperplanes: group at 40 digits, then require exact equality
    groups: list[list] = []
    for u, t, al in items:
        for g in groups:
            gu, gt = g[0], g[1]
            if all(_num_eq(x, y) for x, y in zip([*u, t], [*gu, gt], strict=True)):
                if not all(sp.simplify(x - y) == 0 for x, y in zip([*u, t], [*gu, gt], strict=True)):
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


def _num_eq(x, y, digits: int = 40) -> bool:
    return abs(sp.N(x - y, digits + 10)) < sp.Float(10) ** (-digits)


def as_float(net):
    """The float64 version of a (possibly exact) net tuple."""
    n = _parse(net)
    W = np.array(_f64(n.W), float).reshape(n.m, n.d)
    return (W, np.array(_f64(n.b), float), np.array(_f64(n.a), float), np.array(_f64(n.v), float), float(n.c))


def as_exact(net):
    """The exact (binary-rational) SymPy version of a float net tuple."""
    n = _parse(net)
    if n.exact:
        return (n.W, n.b, n.a, n.v, n.c)
    q = lambda x: sp.Rational(float(x))  # noqa: E731
    return ([[q(x) for x in r] for r in n.W], [q(x) for x in n.b], [q(x) for x in n.a], [q(x) for x in n.v],
            q(n.c))


# ---------------------------------------------------------------------------------------- evaluation
def evaluate(net, X, *, activation: PiecewiseLinear = RELU):
    """f at the rows of X (float64), for a net tuple or a :class:`Canonical`."""
    if isinstance(net, Canonical):
        net = net.net()
    n = _parse(net)
    X = np.atleast_2d(np.asarray(X, float))
    W, b, a, v = (np.asarray(_f64(z), float) for z in (n.W, n.b, n.a, n.v))
    W = W.reshape(n.m, n.d)
    Z = X @ W.T + b
    return _psi(Z, activation) @ a + X @ v + float(n.c)


def _psi(Z, act: PiecewiseLinear):
    c0, s0, jumps = act.relu_expansion()
    out = float(c0) + float(s0) * Z
    for bt, j in jumps:
        out = out + float(j) * np.maximum(Z - float(bt), 0.0)
    return out


def gradient(cf: Canonical, X):
    """∇f at the rows of X (float64; at a kink, the side where u·x > t counts as inactive)."""
    X = np.atleast_2d(np.asarray(X, float))
    U, t, al, v = (np.asarray(_f64(z), float) for z in (cf.U, cf.t, cf.alpha, cf.v))
    U = U.reshape(len(al), -1)
    S = (X @ U.T - t) > 0
    return v + (S * al) @ U


# ------------------------------------------------------------------------------------------- Lipschitz
@dataclass(frozen=True)
class Lipschitz:
    """lower ≤ Lip ≤ upper. ``exact`` means lower == upper from the arrangement (no sampling)."""

    lower: Any
    upper: Any
    method: str
    exact: bool
    value: Any = None  # a SymPy expression for exact input, when available
    cells: int | None = None
    seconds: float = 0.0
    argmax: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        """upper/lower − 1 (0 when exact)."""
        lo, up = float(self.lower), float(self.upper)
        return up / lo - 1 if lo > 0 else (0.0 if up == 0 else math.inf)


class _Num:
    """float64 or 50-digit mpmath arithmetic for the arrangement code (same code, two precisions)."""

    def __init__(self, mp: bool):
        self.mp = mp
        self.tol = TOL_MP if mp else TOL_FLOAT
        if mp:
            self._sqrt = np.frompyfunc(mpmath.sqrt, 1, 1)
            self._atan2 = np.frompyfunc(mpmath.atan2, 2, 1)
            self.pi = mpmath.pi
        else:
            self.pi = math.pi

    def arr(self, x):
        if self.mp:
            return np.array(_to_mp(x), dtype=object)
        return np.asarray(_f64(x), float)

    def sqrt(self, x):
        return self._sqrt(x) if self.mp else np.sqrt(x)

    def atan2(self, y, x):
        return self._atan2(y, x) if self.mp else np.arctan2(y, x)

    def zeros(self, shape):
        z = np.zeros(shape, dtype=object if self.mp else float)
        if self.mp:
            z[...] = mpmath.mpf(0)
        return z


def _to_mp(x):
    if isinstance(x, list | tuple | np.ndarray):
        return [_to_mp(y) for y in x]
    if isinstance(x, sp.Basic):
        return mpmath.mpf(sp.N(x, MP_DPS + 10))
    return mpmath.mpf(x)


def caps_disjoint(cf: Canonical) -> bool:
    """Are the open caps {u_j·x > t_j} of a sphere canonical form pairwise disjoint?"""
    if cf.m < 2:
        return True
    if cf.exact:
        with mpmath.workdps(MP_DPS):
            U, t = np.array(_to_mp(cf.U), dtype=object), np.array(_to_mp(cf.t), dtype=object)
            r = np.array([mpmath.sqrt(1 - x * x) for x in t], dtype=object)
            G = U @ U.T
            bound = np.outer(t, t) - np.outer(r, r)
            return all(G[i, j] <= bound[i, j] + TOL_MP for i in range(cf.m) for j in range(i + 1, cf.m))
    U, t = np.asarray(cf.U), np.asarray(cf.t)
    r = np.sqrt(1 - t**2)
    G = U @ U.T - (np.outer(t, t) - np.outer(r, r))
    iu = np.triu_indices(cf.m, 1)
    return bool(np.all(G[iu] <= 1e-12))


def lipschitz(net, domain, *, activation: PiecewiseLinear = RELU, samples: int = 20000, seed: int = 0,
              max_exact_units: int = 200) -> Lipschitz:
    """The Lipschitz constant of f on ``domain`` (exact where the module docstring says so).

    ``net`` is a net tuple or a :class:`Canonical`. SymPy input is computed at 50 digits (the
    combinatorics) and, where a closed form is cheap, returned exactly in ``.value``.
    """
    _check_domain(domain)
    t0 = time.perf_counter()
    cf = net if isinstance(net, Canonical) else canonicalize(net, domain, activation=activation)
    if cf.domain != domain:
        raise ValueError("the canonical form was computed on a different domain")
    with mpmath.workdps(MP_DPS):
        if isinstance(domain, Sphere):
            if domain.d == 2:
                res = _lip_circle(cf)
            elif caps_disjoint(cf):
                res = _lip_disjoint_caps(cf)
            elif domain.d == 3:
                res = _lip_sphere3(cf)
            else:
                res = _bracket(cf, domain, samples, seed)
        else:
            if domain.d <= 3 or cf.m <= max(domain.d, min(max_exact_units, 12)):
                res = _lip_ball(cf, domain)
            else:
                res = _bracket(cf, domain, samples, seed)
    return Lipschitz(**{**res.__dict__, "seconds": time.perf_counter() - t0})


def _res(value, method, cells=None, exact_value=None, argmax=None):
    return Lipschitz(value, value, method, True, exact_value, cells, 0.0, argmax or {})


@dataclass(frozen=True)
class Rigidity:
    """Kink sizes w_j (|α_j| on a ball, |α_j|√(1 − t_j²) on a sphere) against 2·Lip."""

    weights: Any
    lipschitz: Lipschitz
    ratio: float  # max_j w_j / (2 Lip.upper); the rigidity bound says ≤ 1 (certified when Lip is exact)

    @property
    def holds(self) -> bool:
        return self.ratio <= 1


def rigidity(net, domain, *, activation: PiecewiseLinear = RELU) -> Rigidity:
    """The rigidity ratio max_j w_j / (2 Lip) of SPEC §3 (needs d ≥ 3 on the sphere: it fails on S¹)."""
    _check_domain(domain)
    if isinstance(domain, Sphere) and domain.d < 3:
        raise ValueError("rigidity on the sphere needs d >= 3 (on S^1 it fails: see rob.circle)")
    cf = net if isinstance(net, Canonical) else canonicalize(net, domain, activation=activation)
    L = lipschitz(cf, domain)
    w = cf.tangential_jumps() if isinstance(domain, Sphere) else (
        [abs(a) for a in cf.alpha] if cf.exact else np.abs(cf.alpha))
    top = max((float(x) for x in w), default=0.0)
    up = float(L.upper)
    return Rigidity(w, L, top / (2 * up) if up > 0 else (math.inf if top > 0 else 0.0))


# --- ball: recursion over facets ------------------------------------------------------------------
def _orth_complement(n, num: _Num):
    """An orthonormal basis (k × (k−1)) of n^⊥, by Gram–Schmidt on the standard basis."""
    k = len(n)
    skip = int(np.argmax([abs(x) for x in n]))
    basis = []
    for i in range(k):
        if i == skip:
            continue
        e = num.zeros(k)
        e[i] = 1 + e[i]
        for q in [n, *basis]:
            e = e - (e @ q) * q
        e = e / num.sqrt(np.array([e @ e], dtype=e.dtype))[0]
        basis.append(e)
    return np.array(basis, dtype=n.dtype).T if basis else num.zeros((k, 0))


def _cells_ball(N, h, r, num: _Num) -> np.ndarray:
    """Sign patterns (True: N_l·y > h_l) of the open cells of the arrangement meeting {‖y‖ < r}."""
    q, k = N.shape
    if q == 0:
        return np.zeros((1, 0), bool)
    norms = num.sqrt(np.sum(N * N, axis=1))
    dist = h / norms
    meets = np.asarray(np.abs(dist) < r, bool)
    if not meets.any():
        return np.asarray(h < 0, bool)[None, :]
    if k == 1:
        y = np.sort((h / N[:, 0])[meets])
        keep = y[np.r_[True, np.asarray(np.diff(y) > num.tol, bool)]]
        ends = np.r_[np.array([-r], dtype=N.dtype), keep, np.array([r], dtype=N.dtype)]
        mids = (ends[:-1] + ends[1:]) / 2
        return np.asarray(np.outer(mids, N[:, 0]) - h > 0, bool)
    out = []
    for l in np.flatnonzero(meets):
        n = N[l] / norms[l]
        cen = dist[l] * n
        E = _orth_complement(n, num)
        oth = np.r_[0:l, l + 1:q]
        N2 = N[oth] @ E
        h2 = h[oth] - N[oth] @ cen
        n2 = num.sqrt(np.sum(N2 * N2, axis=1)) if len(oth) else np.zeros(0)
        par = np.asarray(n2 <= num.tol * norms[oth], bool)
        r2 = num.sqrt(np.array([r * r - dist[l] * dist[l]], dtype=N.dtype))[0]
        sub = _cells_ball(N2[~par], h2[~par], r2, num)
        pat = np.empty((2 * len(sub), q), bool)
        fixed = np.asarray(h2[par] < 0, bool)
        for s, side in enumerate((True, False)):
            blk = pat[s * len(sub):(s + 1) * len(sub)]
            blk[:, oth[~par]] = sub
            blk[:, oth[par]] = fixed
            blk[:, l] = side
        out.append(pat)
    return _unique_rows(np.vstack(out))


def _unique_rows(P: np.ndarray) -> np.ndarray:
    packed = np.packbits(P, axis=1)
    seen: dict[bytes, int] = {}
    for i, row in enumerate(packed):
        seen.setdefault(row.tobytes(), i)
    return P[sorted(seen.values())]


def _lip_ball(cf: Canonical, domain: Ball) -> Lipschitz:
    num = _Num(cf.exact)
    U, t, al, v = num.arr(cf.U).reshape(cf.m, domain.d), num.arr(cf.t), num.arr(cf.alpha), num.arr(cf.v)
    R = num.arr([domain.R])[0]
    P = _cells_ball(U, t, R, num)
    G = v + (P * al) @ U if cf.m else v[None, :]
    n2 = np.sum(G * G, axis=1)
    i = int(np.argmax(n2))
    val = num.sqrt(n2[i:i + 1])[0]
    exact_value = None
    if cf.exact:
        g = [cf.v[k] + sum(cf.alpha[j] * cf.U[j][k] for j in range(cf.m) if P[i, j]) for k in range(domain.d)]
        exact_value = sp.sqrt(sp.radsimp(sp.expand(sum(x * x for x in g))))
    method = (f"exact: max ‖g_σ‖ over the {len(P)} cells meeting the open ball (facet recursion"
              + (", 50-digit combinatorics)" if cf.exact else ", float64)"))
    return _res(val, method, len(P), exact_value, {"pattern": P[i].tolist()})


# --- sphere S¹ ---------------------------------------------------------------------------------------
def _lip_circle(cf: Canonical) -> Lipschitz:
    """Exact: arcs between kink angles; max |f′| on an arc is at an endpoint or equals ‖g‖."""
    m = cf.m
    if cf.exact:
        two_pi = 2 * sp.pi
        kinks = []
        for j in range(m):
            th = _exact_angle(cf.U[j][0], cf.U[j][1])
            a = sp.acos(cf.t[j])
            if isinstance(a, sp.acos):
                a = sp.simplify(a)
            for s in (1, -1):
                phi = th + s * a
                k = sp.floor(sp.N(phi / two_pi, 60))  # reduce into [0, 2π)
                kinks.append(phi - k * two_pi)
        uniq: list = []
        for phi in sorted(kinks, key=lambda z: sp.N(z, 60)):
            if uniq and _num_eq(phi, uniq[-1], 45):
                diff = phi - uniq[-1]
                if not (diff == 0 or sp.simplify(diff) == 0):
                    warnings.warn(f"kink angles {uniq[-1]} and {phi} agree to 45 digits but equality was not "
                                  "proved; they are treated as one kink", KinkCoincidenceWarning, stacklevel=3)
                continue
            uniq.append(phi)
        if len(uniq) > 1 and _num_eq(uniq[-1] - two_pi, uniq[0], 45):
            uniq.pop()
        fl = lambda z: mpmath.mpf(sp.N(z, MP_DPS + 10))  # noqa: E731
        best, best_expr, cells = mpmath.mpf(-1), None, 0
        Uf, tf = [[fl(z) for z in row] for row in cf.U], [fl(z) for z in cf.t]
        Af, vf = [fl(z) for z in cf.alpha], [fl(z) for z in cf.v]
        arcs = [(uniq[i], uniq[(i + 1) % len(uniq)] + (two_pi if i == len(uniq) - 1 else 0))
                for i in range(len(uniq))] if uniq else [(sp.Integer(0), two_pi)]
        for lo, hi in arcs:
            cells += 1
            mid = (fl(lo) + fl(hi)) / 2
            xm = (mpmath.cos(mid), mpmath.sin(mid))
            on = [Uf[j][0] * xm[0] + Uf[j][1] * xm[1] - tf[j] > 0 for j in range(m)]
            g = [cf.v[k] + sum(cf.alpha[j] * cf.U[j][k] for j in range(m) if on[j]) for k in range(2)]
            gf = (sum((Af[j] * Uf[j][0] for j in range(m) if on[j]), vf[0]),
                  sum((Af[j] * Uf[j][1] for j in range(m) if on[j]), vf[1]))
            cands = []  # (modulus at 50 digits, exact signed expression)
            for e in (lo, hi):
                ef = fl(e)
                cands.append((-gf[0] * mpmath.sin(ef) + gf[1] * mpmath.cos(ef), -g[0] * sp.sin(e) + g[1] * sp.cos(e)))
            if gf != (0, 0):
                psi = mpmath.atan2(gf[1], gf[0])
                for star in (psi + mpmath.pi / 2, psi - mpmath.pi / 2):
                    kk = mpmath.floor((star - fl(lo)) / (2 * mpmath.pi))
                    star = star - kk * 2 * mpmath.pi
                    if fl(lo) < star < fl(hi):
                        cands.append((mpmath.sqrt(gf[0] ** 2 + gf[1] ** 2), sp.sqrt(g[0] ** 2 + g[1] ** 2)))
            for val, e in cands:
                if abs(val) > best:
                    best, best_expr = abs(val), (e if val >= 0 else -e)
        return Lipschitz(best, best, f"exact: {cells} arcs between exact kink angles on S¹", True,
                         best_expr, cells, 0.0, {})
    U, t, al, v = (np.asarray(x, float) for x in (cf.U, cf.t, cf.alpha, cf.v))
    U = U.reshape(m, 2)
    th = np.arctan2(U[:, 1], U[:, 0])
    a = np.arccos(t)
    kinks = np.mod(np.concatenate([th + a, th - a]), 2 * np.pi)
    kinks = np.sort(kinks)
    if len(kinks) > 1:
        gaps = np.diff(np.concatenate([kinks, [kinks[0] + 2 * np.pi]]))
        close = gaps[(gaps > 0) & (gaps < 1e-7)]
        if len(close):
            warnings.warn(f"{len(close)} pairs of distinct kinks on S¹ lie within {close.min():.1e} rad: "
                          "the Lipschitz constant of the float net differs sharply from that of the exactly "
                          "coincident configuration", KinkCoincidenceWarning, stacklevel=3)
        kinks = np.unique(kinks)
    if len(kinks) == 0:
        return _res(float(np.linalg.norm(v)), "exact: no kinks on S¹", 1)
    lo = kinks
    hi = np.concatenate([kinks[1:], [kinks[0] + 2 * np.pi]])
    mid = (lo + hi) / 2
    Xm = np.stack([np.cos(mid), np.sin(mid)], 1)
    G = v + ((Xm @ U.T - t) > 0) * al @ U
    tau = lambda p: np.stack([-np.sin(p), np.cos(p)], 1)  # noqa: E731
    vals = np.maximum(np.abs(np.sum(G * tau(lo), 1)), np.abs(np.sum(G * tau(hi), 1)))
    gn = np.linalg.norm(G, axis=1)
    psi = np.arctan2(G[:, 1], G[:, 0])
    for sgn in (1, -1):
        star = np.mod(psi + sgn * np.pi / 2 - lo, 2 * np.pi) + lo
        inside = (star > lo) & (star < hi) & (gn > 0)
        vals = np.where(inside, gn, vals)
    return _res(float(np.max(vals)), f"exact: {len(lo)} arcs between kink angles on S¹ (float64)", len(lo))


def _exact_angle(c, s):
    """atan2(s, c) for an exact unit vector; (±cos q, ±sin q) gives q (+π) without simplify."""
    for sign, shift in ((1, 0), (-1, sp.pi)):
        cc, ss = sign * c, sign * s
        if isinstance(cc, sp.cos) and isinstance(ss, sp.sin) and cc.args[0] == ss.args[0]:
            return cc.args[0] + shift
    return sp.simplify(sp.atan2(s, c))


# --- sphere, disjoint caps -----------------------------------------------------------------------------
def _cap_value2(g, u, t, r, num):
    """max over the closed cap {u·x ≥ t} of ‖g‖² − (g·x)²."""
    gg = g @ g
    if gg == 0:
        return gg
    gu = g @ u
    res = g - gu * u  # ‖P_u^⊥ g‖ from the residual vector: no cancellation under a square root
    pg = num.sqrt(np.array([res @ res], dtype=g.dtype))[0]
    # the great sphere {g·x = 0} meets the cap iff max_{g·x=0} u·x = √(1 − (u·ĝ)²) ≥ t
    if pg * pg >= t * t * gg:
        return gg
    low = abs(t * gu) - r * pg
    return gg - low * low


def _lip_disjoint_caps(cf: Canonical) -> Lipschitz:
    num = _Num(cf.exact)
    d = cf.domain.d
    U, t, al, v = num.arr(cf.U).reshape(cf.m, d), num.arr(cf.t), num.arr(cf.alpha), num.arr(cf.v)
    vals = [v @ v]  # the outside of the caps (d ≥ 3, see the module docstring)
    for j in range(cf.m):
        r = num.sqrt(np.array([1 - t[j] * t[j]], dtype=U.dtype))[0]
        vals.append(_cap_value2(v + al[j] * U[j], U[j], t[j], r, num))
    i = int(np.argmax(vals))
    val = num.sqrt(np.array([vals[i]], dtype=U.dtype))[0]
    exact_value = None
    if cf.exact:
        exact_value = _exact_cap_value(cf, i - 1)
    return _res(val, f"exact: {cf.m} pairwise disjoint caps (closed form per cap)", cf.m + 1, exact_value,
                {"cap": i - 1})


def _exact_cap_value(cf: Canonical, j: int):
    d = cf.domain.d
    g = list(cf.v) if j < 0 else [cf.v[k] + cf.alpha[j] * cf.U[j][k] for k in range(d)]
    gg = sp.expand(sum(x * x for x in g))
    if j < 0 or gg == 0:
        return sp.sqrt(gg)
    u, t = cf.U[j], cf.t[j]
    gu = sp.expand(sum(x * y for x, y in zip(g, u, strict=True)))
    pg = sp.sqrt(sp.expand(gg - gu**2))
    if bool(sp.N(pg**2 - t**2 * gg, 60) >= 0):
        return sp.sqrt(gg)
    low = sp.Abs(t * gu) - sp.sqrt(1 - t**2) * pg
    return sp.sqrt(sp.radsimp(sp.expand(gg - low**2)))


# --- sphere S² -------------------------------------------------------------------------------------
def _circle_pair(u1, t1, u2, t2, num: _Num):
    """Points of S² with u1·x = t1, u2·x = t2 (0, 1 or 2 of them)."""
    c = u1 @ u2
    det = 1 - c * c
    if abs(det) <= num.tol:
        return []
    a = (t1 - c * t2) / det
    b = (t2 - c * t1) / det
    p0 = a * u1 + b * u2
    s = 1 - p0 @ p0
    if s < -num.tol:
        return []
    e = np.cross(u1, u2)
    e = e / num.sqrt(np.array([e @ e], dtype=e.dtype))[0]
    if s <= num.tol:
        return [p0]
    h = num.sqrt(np.array([s], dtype=e.dtype))[0]
    return [p0 + h * e, p0 - h * e]


def _lip_sphere3(cf: Canonical) -> Lipschitz:
    if not cf.exact and cf.m:
        return _lip_sphere3_float(cf)
    num = _Num(cf.exact)
    m = cf.m
    U, t, al, v = num.arr(cf.U).reshape(m, 3), num.arr(cf.t), num.arr(cf.alpha), num.arr(cf.v)
    two_pi = 2 * num.pi
    best = [v @ v * 0 - 1, None]
    cells: dict[bytes, np.ndarray] = {}

    def consider(val2, desc):
        if val2 > best[0]:
            best[0], best[1] = val2, desc

    for j in range(m):
        r = num.sqrt(np.array([1 - t[j] * t[j]], dtype=U.dtype))[0]
        E = _orth_complement(U[j], num)
        e1, e2 = E[:, 0], E[:, 1]
        pts = []
        for l in range(m):
            if l != j:
                pts += _circle_pair(U[j], t[j], U[l], t[l], num)
        ang = sorted({_key(a, num) for a in
                      (np.mod(num.atan2(np.array([p @ e2]), np.array([p @ e1]))[0], two_pi) for p in pts)})
        ang = _dedupe_sorted([a for _, a in ang], num.tol)
        xs = lambda phi: t[j] * U[j] + r * (_cos(phi, num) * e1 + _sin(phi, num) * e2)  # noqa: B023,E731
        if ang:
            arcs = [(ang[i], ang[i + 1] if i + 1 < len(ang) else ang[0] + two_pi) for i in range(len(ang))]
        else:
            arcs = [(0 * two_pi, two_pi)]
        for lo, hi in arcs:
            xm = xs((lo + hi) / 2)
            base = np.array([x > 0 for x in U @ xm - t], bool)
            for side in (True, False):
                sig = base.copy()
                sig[j] = side
                cells.setdefault(sig.tobytes(), sig)
                g = v + (sig * al) @ U
                gg = g @ g
                if ang:
                    for end in (lo, hi):
                        x = xs(end)
                        consider(gg - (g @ x) ** 2, ("arcend", j, end, sig))
                w1, w2 = g @ e1, g @ e2
                if w1 * w1 + w2 * w2 > 0:
                    psi = num.atan2(np.array([w2]), np.array([w1]))[0]
                    for crit in (psi, psi + num.pi):
                        crit = lo + np.mod(np.array([crit - lo]), two_pi)[0]
                        if lo < crit < hi:
                            x = xs(crit)
                            consider(gg - (g @ x) ** 2, ("crit", j, crit, sig))
    if m == 0:
        cells[b""] = np.zeros(0, bool)
    for sig in cells.values():
        g = v + (sig * al) @ U if m else v
        gg = g @ g
        if not gg > best[0] or gg == 0:
            continue
        gn = num.sqrt(np.array([gg], dtype=U.dtype))[0]
        gh = g / gn
        if _great_meets(gh, sig, U, t, num):
            consider(gg, ("great", sig))
    val = num.sqrt(np.array([best[0]], dtype=U.dtype))[0]
    exact_value = None
    if cf.exact and best[1] is not None and best[1][0] == "great":
        sig = best[1][1]
        g = [cf.v[k] + sum(cf.alpha[i] * cf.U[i][k] for i in range(m) if sig[i]) for k in range(3)]
        exact_value = sp.sqrt(sp.radsimp(sp.expand(sum(x * x for x in g))))
    method = (f"exact: {len(cells)} cells of the small-circle arrangement on S² (arcs, vertices, critical "
              "points, great-circle test" + (", 50-digit combinatorics)" if cf.exact else ", float64)"))
    return _res(val, method, len(cells), exact_value, {"kind": best[1][0] if best[1] else "none"})


def _lip_sphere3_float(cf: Canonical) -> Lipschitz:
    """The same algorithm as :func:`_lip_sphere3`, vectorised over the arcs of each circle (float64)."""
    num = _Num(False)
    tol = num.tol
    U, t, al, v = (np.asarray(x, float) for x in (cf.U, cf.t, cf.alpha, cf.v))
    m = len(al)
    best, kind = -1.0, "none"
    cells: dict[bytes, np.ndarray] = {}
    for j in range(m):
        u, tj = U[j], t[j]
        r = math.sqrt(1 - tj * tj)
        E = _orth_complement(u, num)
        e1, e2 = E[:, 0], E[:, 1]
        oth = np.r_[0:j, j + 1:m]
        c = U[oth] @ u
        det = 1 - c * c
        ok = np.abs(det) > tol
        a_ = (tj - c * t[oth]) / np.where(ok, det, 1)
        b_ = (t[oth] - c * tj) / np.where(ok, det, 1)
        p0 = a_[:, None] * u + b_[:, None] * U[oth]
        sq = 1 - np.sum(p0 * p0, 1)
        ok &= sq >= -tol
        e = np.cross(u, U[oth])
        e /= np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-300)
        h = np.sqrt(np.maximum(sq, 0))[:, None]
        P = np.vstack([(p0 + h * e)[ok], (p0 - h * e)[ok]])
        ang = np.sort(np.mod(np.arctan2(P @ e2, P @ e1), 2 * np.pi))
        if len(ang):
            ang = ang[np.r_[True, np.diff(ang) > tol]]
            if len(ang) > 1 and ang[0] + 2 * np.pi - ang[-1] <= tol:
                ang = ang[:-1]
        if len(ang):
            lo, hi = ang, np.r_[ang[1:], ang[0] + 2 * np.pi]
        else:
            lo, hi = np.array([0.0]), np.array([2 * np.pi])
        xs = lambda phi: tj * u + r * (np.cos(phi)[:, None] * e1 + np.sin(phi)[:, None] * e2)  # noqa: E731,B023
        base = (xs((lo + hi) / 2) @ U.T - t) > 0
        for side in (True, False):
            S = base.copy()
            S[:, j] = side
            for row in S:
                cells.setdefault(row.tobytes(), row)
            G = v + (S * al) @ U
            gg = np.sum(G * G, 1)
            vals = []
            if len(ang):
                for end in (lo, hi):
                    X = xs(end)
                    vals.append(gg - np.sum(G * X, 1) ** 2)
            w1, w2 = G @ e1, G @ e2
            psi = np.arctan2(w2, w1)
            for crit in (psi, psi + np.pi):
                cr = lo + np.mod(crit - lo, 2 * np.pi)
                inside = (cr > lo) & (cr < hi) & (w1 * w1 + w2 * w2 > 0)
                X = xs(cr)
                vals.append(np.where(inside, gg - np.sum(G * X, 1) ** 2, -1.0))
            top = max(float(np.max(x)) for x in vals)
            if top > best:
                best, kind = top, "arc"
    for sig in cells.values():
        g = v + (sig * al) @ U
        gg = float(g @ g)
        if gg > best and _great_meets(g / math.sqrt(gg), sig, U, t, num):
            best, kind = gg, "great"
    val = math.sqrt(max(best, 0.0))
    return _res(val, f"exact: {len(cells)} cells of the small-circle arrangement on S² (arcs, vertices, critical "
                     "points, great-circle test, float64)", len(cells), None, {"kind": kind})


def _key(a, num):
    return (float(a), a)


def _dedupe_sorted(a, tol):
    out = []
    for x in a:
        if not out or x - out[-1] > tol:
            out.append(x)
    pi = math.pi if isinstance(out[0] if out else 0.0, float) else mpmath.pi
    if len(out) > 1 and out[0] + 2 * pi - out[-1] <= tol:
        out.pop()
    return out


def _cos(x, num):
    return mpmath.cos(x) if num.mp else math.cos(x)


def _sin(x, num):
    return mpmath.sin(x) if num.mp else math.sin(x)


def _great_meets(gh, sig, U, t, num) -> bool:
    """Does the great circle {ĝ·x = 0} meet the closure of the cell with pattern sig?"""
    E = _orth_complement(gh, num)
    f1, f2 = E[:, 0], E[:, 1]
    zero = gh[0] * 0
    pts = []
    for l in range(len(t)):
        pts += _circle_pair(gh, zero, U[l], t[l], num)
    two_pi = 2 * num.pi
    ang = sorted((np.mod(num.atan2(np.array([p @ f2]), np.array([p @ f1])), two_pi)[0] for p in pts),
                 key=float)
    ang = _dedupe_sorted(ang, num.tol)
    xs = lambda phi: _cos(phi, num) * f1 + _sin(phi, num) * f2  # noqa: E731
    tests = []
    if not ang:
        tests.append((f1, False))
    else:
        for i, a in enumerate(ang):
            b = ang[i + 1] if i + 1 < len(ang) else ang[0] + two_pi
            tests.append((xs(a), True))
            tests.append((xs((a + b) / 2), False))
    for x, is_cut in tests:
        z = U @ x - t
        act = np.array([abs(w) <= num.tol for w in z], bool)
        pos = np.array([w > 0 for w in z], bool)
        if is_cut:
            if act.sum() != 1:
                continue  # vertices are covered by the arc endpoints
            if np.all((pos == sig) | act):
                return True
        elif not act.any() and np.all(pos == sig):
            return True
    return False


# --- certified bracket ----------------------------------------------------------------------------
def _bracket(cf: Canonical, domain, samples: int, seed: int) -> Lipschitz:
    d = domain.d
    U, t, al, v = (np.asarray(_f64(x), float) for x in (cf.U, cf.t, cf.alpha, cf.v))
    U = U.reshape(cf.m, d)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((samples, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    if isinstance(domain, Sphere):
        if cf.m:  # also points just inside each cap, where single units act
            X = np.vstack([X, U * 0.999 + 0.0])
            X /= np.linalg.norm(X, axis=1, keepdims=True)
    else:
        X *= float(domain.R) * rng.random((len(X), 1)) ** (1 / d)
    lower = 0.0
    for lo in range(0, len(X), 4096):
        Xb = X[lo:lo + 4096]
        Z = Xb @ U.T - t
        G = v + (Z > 0) * al @ U
        if isinstance(domain, Sphere):
            n2 = np.sum(G * G, 1) - np.sum(G * Xb, 1) ** 2
        else:
            n2 = np.sum(G * G, 1)
        lower = max(lower, float(np.sqrt(max(n2.max(initial=0.0), 0.0))))
    A = al[:, None] * U
    c0 = v + 0.5 * A.sum(0)
    spec = 0.5 * min(math.sqrt(cf.m) * float(np.linalg.norm(A, 2)) if cf.m else 0.0,
                     float(np.sum(np.abs(al))))
    upper = (float(np.linalg.norm(c0)) + spec) * (1 + 1e-12)
    method = (f"bracket: lower = max tangential/Euclidean gradient at {len(X)} genuine points; upper = "
              "‖c₀‖ + ½·min(√m‖A‖₂, Σ|α|) over all sign patterns")
    return Lipschitz(lower, max(upper, lower), method, False, None, None, 0.0, {})
