r"""Beyond the paper: a certified two-sided bracket on Υ* in d = 2 and d = 3 (p = 1).

:math:`\Upsilon^*=\inf\{\Upsilon(w): h(w,x_i)=y_i\}` over all widths and directions. The upper bound is the
flattest interpolator over a dictionary of directions; the lower bound is that solve's dual point ν, scaled by
the exact supremum :math:`\kappa` of :math:`|(\bar\Phi^\top\nu)(\bar\theta)|/\omega(\bar\theta)` over the whole
circle (:func:`certify_circle`) or sphere (:func:`certify_sphere`), so that it is dual feasible for every
direction (:func:`upsilon_star_bracket`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import mpmath
import numpy as np

from numerics.fallbacks import reach
from numerics.flat.activations import get_activation
from numerics.flat.duality import DUAL_ROUNDING, flattest_outer_weights
from numerics.flat.inputs import as_array, check_inputs
from numerics.flat.sphere_cert import Degenerate, sphere_sup_bound

__all__ = ["CircleCertificate", "certify_circle", "certify_sphere", "Bracket", "upsilon_star_bracket",
           "SphereDictionary", "refined_dictionary", "fibonacci_sphere"]


@dataclass(frozen=True)
class CircleCertificate:
    """sup over all unit θ̄ ∈ S¹ of |Σ_i ν_i σ(θ̄·x_i)| / ω(θ̄), computed exactly cell by cell."""

    kappa: float  # the supremum (inf if some direction has ω = 0 but a nonzero dual value)
    cells: int
    argmax: float  # angle attaining it
    local_max: tuple[tuple[float, float], ...] = ()  # (angle, ratio) of each cell's maximum


def _certify_inputs(nu, X, activation, fname: str, d: int):
    """The checks shared by certify_circle (S¹, d = 2) and certify_sphere (S², d = 3)."""
    act = get_activation(activation)
    if act.c != 1:
        raise ValueError(f"{fname} needs c = 1 (p = 1): for p > 1 splitting neurons drives Υ* to 0")
    X = as_array(X, "X", 2)
    if X.shape[1] != d:
        raise ValueError(f"{fname} works on S{'¹²'[d - 2]}: X must have d = {d} columns, got {X.shape[1]}")
    return act, X, as_array(nu, "nu", 1)


def certify_circle(nu, X, activation, dps: int = 50) -> CircleCertificate:
    r"""Exact supremum of :math:`|(\bar\Phi^\top\nu)(\bar\theta)|/\omega(\bar\theta)` over the whole circle.

    For c = 1 (ReLU, LeakyReLU) the activation pattern is constant on each arc between consecutive angles
    where some :math:`\bar\theta\cdot x_i = 0`. On such an arc :math:`(\bar\Phi^\top\nu)(\bar\theta)=\bar\theta\cdot v`
    and :math:`\omega(\bar\theta)^2 = 4\bar B\,\bar\theta^\top M\bar\theta` with constant v, :math:`\bar B`, M, so the
    squared ratio is a ratio of two quadratic forms: its maximum over the arc is at an end point or at a
    generalised eigenvector of :math:`(vv^\top, 4\bar BM)` inside the arc. Everything is evaluated in mpmath at
    ``dps`` digits from the float64 inputs (a global maximisation by exhaustion of finitely many candidates,
    not by sampling).
    """
    act, X, nu = _certify_inputs(nu, X, activation, "certify_circle", 2)
    with mpmath.workdps(dps):
        Xm = [[mpmath.mpf(float(v)) for v in row] for row in X]
        num = [mpmath.mpf(float(v)) for v in nu]
        n = len(Xm)
        two_pi = 2 * mpmath.pi
        crit = sorted({(mpmath.atan2(x[1], x[0]) + s) % two_pi for x in Xm for s in (mpmath.pi / 2, -mpmath.pi / 2)})
        arcs = list(zip(crit, crit[1:] + [crit[0] + two_pi], strict=True))
        plus, minus = mpmath.mpf(act.plus), mpmath.mpf(act.minus)
        best, arg, local = mpmath.mpf(0), mpmath.mpf(0), []
        for lo, hi in arcs:
            mid = (lo + hi) / 2
            e = (mpmath.cos(mid), mpmath.sin(mid))
            slopes = [plus if x[0] * e[0] + x[1] * e[1] > 0 else -minus for x in Xm]  # σ(t) = s_i t on the arc
            v = [mpmath.fsum(num[i] * slopes[i] * Xm[i][k] for i in range(n)) for k in range(2)]
            M = [[mpmath.fsum(slopes[i] ** 2 * Xm[i][k] * Xm[i][l] for i in range(n)) / n for l in range(2)]
                 for k in range(2)]
            Bb = mpmath.fsum(slopes[i] ** 2 * (Xm[i][0] ** 2 + Xm[i][1] ** 2) for i in range(n)) / n
            N = [[4 * Bb * M[k][l] for l in range(2)] for k in range(2)]

            def ratio(phi, v=v, N=N):
                t = (mpmath.cos(phi), mpmath.sin(phi))
                num_ = (t[0] * v[0] + t[1] * v[1]) ** 2
                den = t[0] ** 2 * N[0][0] + 2 * t[0] * t[1] * N[0][1] + t[1] ** 2 * N[1][1]
                if den == 0:
                    return mpmath.inf if num_ > 0 else mpmath.mpf(0)
                return num_ / den

            # Stationary points of (t·v)²/(tᵀNt) on the circle besides t·v = 0: with u = tan φ the condition
            # is (u² + 1)(αu + β) = 0, α = a1 n01 − a0 n11, β = a1 n00 − a0 n01, i.e. t ∝ ±adj(N) v.
            a0, a1 = v
            n00, n01, n11 = N[0][0], N[0][1], N[1][1]
            live = [i for i in range(n) if slopes[i] != 0]
            if _all_parallel([X[i] for i in live]):
                # ω² ∝ (t·x̂)² and Φ̄ᵀν = (v·t) with v ∥ x̂: the ratio is constant on the arc, and its end
                # points are 0/0 limits (evaluating them there gave κ = ∞); the value is the one at mid
                cell_best = ratio(mid) if live else mpmath.mpf(0)
                local.append((float(mid % two_pi), float(mpmath.sqrt(cell_best))))
                if cell_best > best:
                    best, arg = cell_best, mid
                continue
            # two non-parallel live points: ω > 0 on the closed arc, so every candidate is a finite value
            cands = [lo, hi]
            w0, w1 = n11 * a0 - n01 * a1, n00 * a1 - n01 * a0
            if w0 != 0 or w1 != 0:
                base = mpmath.atan2(w1, w0)
                cands += [base + k * mpmath.pi for k in range(-2, 5) if lo <= base + k * mpmath.pi <= hi]
            cell_best, cell_arg = mpmath.mpf(0), mid
            for phi in cands:
                r_ = ratio(phi)
                if r_ > cell_best:
                    cell_best, cell_arg = r_, phi
            # an end-point supremum is a one-sided limit (the pattern changes there): report a direction
            # just inside the arc, which is what a dictionary can actually contain
            inside = cell_arg + (hi - lo) * mpmath.mpf(1e-9) * (1 if cell_arg == lo else -1 if cell_arg == hi else 0)
            local.append((float(inside % two_pi), float(mpmath.sqrt(cell_best))))
            if cell_best > best:
                best, arg = cell_best, cell_arg
        return CircleCertificate(float(mpmath.sqrt(best)), len(arcs), float(arg % two_pi), tuple(local))


def _all_parallel(points) -> bool:
    """Whether the float64 points in R² all lie on one line through 0, decided exactly (each cross product
    x_i × x_0 in rationals: float64 entries are binary rationals)."""
    from fractions import Fraction

    pts = [(Fraction(float(p[0])), Fraction(float(p[1]))) for p in points]
    return all(p[0] * pts[0][1] - p[1] * pts[0][0] == 0 for p in pts[1:])


@dataclass(frozen=True)
class Bracket:
    """Υ* ∈ [lower, upper] for one dataset (d = 2, p = 1), from one dictionary."""

    dictionary: int  # number of directions
    refinements: int  # exchange steps that added the certificate's violating directions
    upper: float  # Υ of the flattest interpolator over the dictionary
    lower: float  # νᵀy / κ with ν/κ dual feasible on the whole circle
    kappa: float

    @property
    def rel_width(self) -> float:
        return (self.upper - self.lower) / self.upper


def certify_sphere(nu, X, activation, dps: int = 20, *, method: str = "intervals"
                   ) -> tuple[CircleCertificate, list[np.ndarray]]:
    r"""Supremum of :math:`|(\bar\Phi^\top\nu)(\bar\theta)|/\omega(\bar\theta)` over the whole sphere S².

    ``method="intervals"`` (default): a rigorous upper bound in vectorised midpoint–radius arithmetic
    (:func:`numerics.flat.sphere_cert.sphere_sup_bound`; n = 128 in seconds), falling back to the enumeration
    below on data it calls degenerate (a vertex met by more than 8 circles, or two samples parallel to within
    rounding but not exactly). ``method="mpmath"``: the enumeration below at ``dps`` digits (about n³ mpmath
    operations: 300 s at n = 32), kept as the independent reference.
    """
    if method not in ("intervals", "mpmath"):
        raise ValueError(f"certify_sphere: method must be 'intervals' or 'mpmath', got {method!r}")
    if method == "intervals":
        act, Xa, nua = _certify_inputs(nu, X, activation, "certify_sphere", 3)
        if Xa.shape[0] != nua.shape[0]:
            raise ValueError(f"certify_sphere: nu has {nua.shape[0]} entries for {Xa.shape[0]} samples")
        if np.linalg.matrix_rank(Xa) >= 2:
            try:
                b = sphere_sup_bound(nua, Xa, act.plus, act.minus)
            except Degenerate:
                reach("flat.sphere_cert/mpmath_enumeration")
            else:
                return (CircleCertificate(b.kappa_upper, b.cells, float("nan"),
                                          tuple((j, r) for j, (r, _) in enumerate(b.violators))),
                        [t for _, t in b.violators])
    return _certify_sphere_mp(nu, X, activation, dps)


def _certify_sphere_mp(nu, X, activation, dps: int = 20) -> tuple[CircleCertificate, list[np.ndarray]]:
    r"""Exact supremum of :math:`|(\bar\Phi^\top\nu)(\bar\theta)|/\omega(\bar\theta)` over the whole sphere S².

    The great circles :math:`x_i^\perp` cut S² into cells with a fixed activation pattern, on which the squared
    ratio is :math:`(\theta\cdot v)^2/\theta^\top N\theta` (see :func:`certify_circle`). Its supremum over a
    closed cell is attained at a vertex (±x_i×x_k, every adjacent pattern), on an edge (a great-circle arc:
    the 2-D closed form in the plane x_i^⊥, either side), or in the interior at θ ∝ ±N⁻¹v (kept only if it
    has the cell's signs). All candidates are evaluated in mpmath at ``dps`` digits. A degenerate vertex
    (three circles through one point) tries every sign pattern, which can only over-estimate (safe).
    Returns the certificate (``cells`` counts the sign patterns examined) and the violated candidates
    (ratio > 1) as unit vectors moved 1e-7 into their cell, so that a dictionary can contain them.
    """
    act, X, nu = _certify_inputs(nu, X, activation, "certify_sphere", 3)
    n = X.shape[0]
    with mpmath.workdps(dps):
        Xm = mpmath.matrix(X.tolist())
        num = [mpmath.mpf(float(v)) for v in nu]
        rows = [Xm[i, :].T for i in range(n)]
        plus, minus = mpmath.mpf(act.plus), mpmath.mpf(act.minus)
        tiny = mpmath.mpf(10) ** (-dps // 2)

        def forms(signs):
            sl = [plus if s_ > 0 else -minus for s_ in signs]
            v = sum((num[i] * sl[i] * rows[i] for i in range(n)), mpmath.matrix(3, 1))
            M = sum((sl[i] ** 2 * rows[i] * rows[i].T for i in range(n)), mpmath.matrix(3, 3)) / n
            Bb = mpmath.fsum(sl[i] ** 2 * (rows[i].T * rows[i])[0] for i in range(n)) / n
            return v, 4 * Bb * M

        def ratio(t, v, N):
            num_ = ((t.T * v)[0]) ** 2
            den = (t.T * N * t)[0]
            return (mpmath.inf if num_ > tiny else mpmath.mpf(0)) if den <= 0 else num_ / den

        def unit(t):
            return t / mpmath.norm(t)

        def signs_at(t):
            return [(rows[i].T * t)[0] for i in range(n)]

        best, best_t, local = mpmath.mpf(0), None, []

        def consider(t, pattern, inward):
            nonlocal best, best_t
            v, N = forms(pattern)
            r_ = ratio(t, v, N)
            if r_ > best:
                best, best_t = r_, t
            if r_ > 1:
                local.append((unit(t + mpmath.mpf(1e-7) * inward), r_))

        cross = lambda a, b: mpmath.matrix([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                                            a[0] * b[1] - a[1] * b[0]])
        patterns = set()
        for i in range(n):  # vertices
            for k in range(i + 1, n):
                w = cross(rows[i], rows[k])
                if mpmath.norm(w) < tiny:
                    continue
                for t in (unit(w), -unit(w)):
                    sg = signs_at(t)
                    free = [l for l in range(n) if abs(sg[l]) < tiny]
                    for choice in itertools.product((1, -1), repeat=len(free)):
                        pat = [1 if sg[l] > 0 else -1 for l in range(n)]
                        inward = mpmath.matrix(3, 1)
                        for l, c_ in zip(free, choice, strict=True):
                            pat[l] = c_
                            inward += c_ * unit(rows[l])
                        patterns.add(tuple(pat))
                        consider(t, pat, inward)
        for i in range(n):  # edges: arcs of the great circle x_i^⊥ between crossings
            e1 = unit(cross(rows[i], mpmath.matrix([1, 0, 0]) if abs(rows[i][0]) < 0.9 * mpmath.norm(rows[i])
                            else mpmath.matrix([0, 1, 0])))
            e2 = unit(cross(rows[i], e1))
            crossings = [cross(rows[i], r_) for k, r_ in enumerate(rows) if k != i]
            ang = sorted({(mpmath.atan2((c_.T * e2)[0], (c_.T * e1)[0]) + s_) % (2 * mpmath.pi)
                          for c_ in crossings if mpmath.norm(c_) > tiny for s_ in (0, mpmath.pi)})
            if not ang:
                ang = [mpmath.mpf(0)]
            arcs = list(zip(ang, ang[1:] + [ang[0] + 2 * mpmath.pi], strict=True))
            for lo, hi in arcs:
                mid = (lo + hi) / 2
                tm = mpmath.cos(mid) * e1 + mpmath.sin(mid) * e2
                sg = signs_at(tm)
                for si in (1, -1):
                    pat = [1 if sg[l] > 0 else -1 for l in range(n)]
                    pat[i] = si
                    patterns.add(tuple(pat))
                    v, N = forms(pat)
                    a0, a1 = (e1.T * v)[0], (e2.T * v)[0]
                    n00, n01, n11 = (e1.T * N * e1)[0], (e1.T * N * e2)[0], (e2.T * N * e2)[0]
                    w0, w1 = n11 * a0 - n01 * a1, n00 * a1 - n01 * a0
                    if w0 == 0 and w1 == 0:
                        continue
                    base = mpmath.atan2(w1, w0)
                    for kk in range(-2, 5):
                        phi = base + kk * mpmath.pi
                        if lo <= phi <= hi:
                            consider(mpmath.cos(phi) * e1 + mpmath.sin(phi) * e2, pat, si * unit(rows[i]))
        for pat in patterns:  # interiors: θ ∝ ±N⁻¹v when it has the cell's signs
            v, N = forms(pat)
            try:
                t = mpmath.lu_solve(N, v)
            except (ZeroDivisionError, TypeError):   # singular N (mpmath's LU raises either, depending on where)
                continue
            if mpmath.norm(t) == 0:
                continue
            for tt in (unit(t), -unit(t)):
                sg = signs_at(tt)
                if all(sg[l] * pat[l] > tiny for l in range(n)):
                    consider(tt, list(pat), mpmath.matrix(3, 1))
        kappa = float(mpmath.sqrt(best)) * (1 + 1e-12)  # slack for the float64 inputs of the candidates
        pts = [np.array([float(x) for x in t], dtype=float) for t, _ in local]
        return CircleCertificate(kappa, len(patterns), float("nan"),
                                 tuple((j, float(mpmath.sqrt(r_))) for j, (_, r_) in enumerate(local))), pts


def fibonacci_sphere(K: int) -> np.ndarray:
    i = np.arange(K) + 0.5
    z = 1 - 2 * i / K
    phi = np.pi * (1 + 5**0.5) * i
    r_ = np.sqrt(1 - z**2)
    return np.stack([r_ * np.cos(phi), r_ * np.sin(phi), z], axis=1)


@dataclass(frozen=True)
class SphereDictionary:
    """A dictionary refined by exchange steps, its flattest interpolator and the certified lower end of Υ*."""

    Theta: np.ndarray   # (K, d) unit directions, the exchange steps' violated directions appended
    result: object      # FlattestResult over Theta: result.value is the upper end of Υ*
    lower: float        # νᵀy/κ: every interpolator, of any width and directions, has Υ ≥ lower
    kappa: float        # the certified sup of |Φ̄ᵀν|/ω over the whole circle or sphere
    steps: int          # exchange steps taken


def _spread(new, max_new: int | None, min_angle: float = 1e-3):
    """The most violated directions first (as given), skipping any within ``min_angle`` of one already kept
    (a cell's vertex, edge and interior candidates crowd one spot), at most ``max_new`` of them."""
    if max_new is None:
        return list(new)
    kept: list = []
    cos = math.cos(min_angle)
    for t in new:
        if all(float(np.dot(t, k)) < cos for k in kept):
            kept.append(t)
            if len(kept) >= max_new:
                break
    return kept


def refined_dictionary(X, y, activation, Theta, refine: int = 0, *, max_new: int | None = None
                       ) -> SphereDictionary:
    """The flattest interpolator over ``Theta`` and its dual point scaled to be feasible on the whole circle
    (d = 2) or sphere (d = 3); up to ``refine`` exchange steps add the violated directions (the ``max_new`` most
    violated ones that are ≥ 1e-3 rad apart, or all of them) and solve again."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    d = X.shape[1]
    Th = np.asarray(Theta, float)
    for step in range(refine + 1):
        res = flattest_outer_weights(Th, X, y, activation)
        if d == 2:
            cert = certify_circle(res.nu, X, activation)
            new = [np.array([math.cos(a_), math.sin(a_)]) for a_, r_ in cert.local_max if r_ > 1]
        else:
            cert, new = certify_sphere(res.nu, X, activation)
        lower = (math.fsum(res.nu * y) / max(cert.kappa, 1.0)) * (1 - DUAL_ROUNDING) if math.isfinite(
            cert.kappa) else 0.0
        if step == refine or cert.kappa <= 1 or not new:
            break
        Th = np.vstack([Th, *_spread(new, max_new)])  # exchange step: add violated directions
    return SphereDictionary(Th, res, lower, cert.kappa, step)


def upsilon_star_bracket(X, y, activation="relu", sizes: Sequence[int] = (16, 64, 256), *,
                         refine: int = 0) -> list[Bracket]:
    r"""Two-sided bounds on :math:`\Upsilon^*=\inf\{\Upsilon(w): h(w,x_i)=y_i\}` over all widths and directions.

    Upper: the flattest interpolator over a dictionary of directions (equally spaced on S¹, a Fibonacci
    lattice on S²). Lower: that solve's dual point ν, scaled by
    :math:`\kappa=\sup_{\bar\theta}|(\bar\Phi^\top\nu)(\bar\theta)|/\omega(\bar\theta)` over the whole sphere
    (:func:`certify_circle`, :func:`certify_sphere`) so that it is feasible for *every* direction; weak duality
    then bounds every interpolator, whatever its width (p = 1, so splitting a neuron does not help).
    ``refine`` exchange steps add the most violated directions to the dictionary and solve again.
    """
    v = check_inputs(X=X, y=y)
    d = v["X"].shape[1]
    if d not in (2, 3):
        raise ValueError(f"upsilon_star_bracket is implemented for d = 2 and 3, got d = {d}")
    out = []
    for K in sizes:
        if d == 2:
            ang = 2 * np.pi * (np.arange(K) + 0.5) / K
            Th = np.stack([np.cos(ang), np.sin(ang)], axis=1)
        else:
            Th = fibonacci_sphere(K)
        r = refined_dictionary(v["X"], v["y"], activation, Th, refine)
        out.append(Bracket(r.Theta.shape[0], r.steps, r.result.value, r.lower, r.kappa))
    return out
