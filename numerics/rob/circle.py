r"""The exact Lipschitz constant on the circle S¹ (d = 2), where rigidity fails (SPEC §3, rob.circle).

Cells are arcs between kink points {x ∈ S¹ : w_j·x + b_j = 0}; on an arc f′(φ) = g·τ(φ) with τ the unit
tangent, and |g·τ|² = ‖g‖² − (g·x)², whose maximum over a closed arc is ‖g‖² where the arc contains a zero
of g·x (x = ±g^⊥/‖g‖), else at an endpoint.

*Rational input* (floats included): S¹ is the great circle x₃ = 0 of S², so the arrangement of
:func:`numerics.rob.sphere2.circle_arrangement` orders the kink points exactly (points p ± √D q), merges
coinciding kinks exactly, and the candidates are compared exactly: a float net and its exact rational
reading get the same constant. Nearly coincident kinks of a float net still raise
:class:`KinkCoincidenceWarning`: the constant of the float net is right, but it jumps under tiny
perturbations.

*Irrational SymPy input* (the paper's even cycle, units (cos θ, sin θ)): the kink angles are exact SymPy
expressions θ_j ± arccos t_j, so coincident kinks coincide symbolically; the candidates are compared at
50 digits.
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

from numerics.rob import exact as E
from numerics.rob.arrangement2 import circle_arrangement, qpoint_interval
from numerics.rob.interval import from_fractions

__all__ = ["KinkCoincidenceWarning", "lipschitz_circle_rational", "lipschitz_circle_sympy"]

MP_DPS = 50
F0, F1 = Fraction(0), Fraction(1)


class KinkCoincidenceWarning(UserWarning):
    """Two distinct kinks (float input) nearly coincide: the Lipschitz constant is ill-conditioned there."""


def lipschitz_circle_rational(Wq, bq, aq, vq, *, warn_float: bool):
    """(Lip² exact QNum, pattern, float point, arcs) on S¹ for the rational canonical form."""
    m = len(Wq)
    W3 = [tuple(w) + (F0,) for w in Wq]
    v3 = tuple(vq) + (F0,)
    if m == 0:
        return E.QNum(E.dot(v3, v3)), (), None, 1
    Wiv, biv = from_fractions([list(w) for w in W3]), from_fractions(list(bq))
    arr = circle_arrangement((F0, F0, F1), F0, W3, list(bq), Wiv, biv, np.arange(m), great=True)
    if warn_float and len(arr.positions) > 1:
        ph = np.sort(arr.phi % (2 * np.pi))
        gaps = np.diff(np.r_[ph, ph[0] + 2 * np.pi])
        close = gaps[gaps < 1e-7]
        if len(close):
            warnings.warn(f"{len(close)} pairs of distinct kinks on S¹ lie within {close.min():.1e} rad: the "
                          "Lipschitz constant of the float net differs sharply from that of the exactly "
                          "coincident configuration", KinkCoincidenceWarning, stacklevel=4)
    Aq = [E.scale(a, w) for a, w in zip(aq, W3, strict=True)]
    P = len(arr.positions)
    best = None
    for e in range(arr.E):
        sig = arr.patterns[e]
        g = v3
        for k in np.flatnonzero(sig):
            g = E.add(g, Aq[k])
        cands = []
        if P:
            cands += [arr.exact_point(e), arr.exact_point((e + 1) % P)]
        gg = E.dot(g, g)
        if gg:
            for s in (1, -1):
                z = E.QPoint((F0, F0, F0), (-g[1], g[0], F0), 1 / gg, s)
                if P == 0 or arr.locate(qpoint_interval(z), lambda z=z: z) == e:
                    cands.append(z)
        for X in cands:
            val = X.value(g)
            if best is None or val.cmp(best[0]) > 0:
                best = (val, tuple(bool(x) for x in sig), X)
        if not cands:  # g = 0 and no kinks: f is constant on S¹
            if best is None:
                best = (E.QNum(F0), tuple(bool(x) for x in sig), None)
    val, sig, X = best
    return val, sig, (tuple(X.floats()[:2]) if X is not None else None), arr.E


def _exact_angle(c, s):
    """atan2(s, c) for an exact unit vector; (±cos q, ±sin q) gives q (+π) without simplify."""
    for sign, shift in ((1, 0), (-1, sp.pi)):
        cc, ss = sign * c, sign * s
        if isinstance(cc, sp.cos) and isinstance(ss, sp.sin) and cc.args[0] == ss.args[0]:
            return cc.args[0] + shift
    return sp.simplify(sp.atan2(s, c))


def _num_eq(x, y, digits: int = 40) -> bool:
    return abs(sp.N(x - y, digits + 10)) < sp.Float(10) ** (-digits)


def _same_angle(x, y) -> bool:
    """Exactly equal kink angles? Differences that vanish to 45 digits must be proved 0 by SymPy; otherwise
    the precision is raised (200, 1000 digits) until they separate, and an undecidable pair is an error —
    never merged on the strength of agreeing digits."""
    if not _num_eq(x, y, 45):
        return False
    diff = x - y
    if diff == 0 or sp.simplify(diff) == 0:
        return True
    for digits in (200, 1000):
        if not _num_eq(x, y, digits):
            return False
    raise ValueError(f"cannot decide whether the kink angles {x} and {y} coincide (they agree to 1000 digits "
                     "but SymPy cannot prove equality): give the net with rational entries")


def lipschitz_circle_sympy(cf):
    """(value at 50 digits, exact SymPy expression, arcs) for an exact canonical form with SymPy entries."""
    m = cf.m
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
        if uniq and _same_angle(phi, uniq[-1]):
            continue
        uniq.append(phi)
    if len(uniq) > 1 and _same_angle(uniq[-1] - two_pi, uniq[0]):
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
    return best, best_expr, cells
