r"""flat.duality, derived: the invariant form Υ = Σ ω_j|b_j|^p, the convex conjugate, weak and strong duality.

:math:`\Upsilon = \sum_j\omega_j|b_j|^p` with :math:`\omega_j` free of :math:`\|\theta_j\|`; the convex conjugate of
:math:`\omega|t|^p` from its own stationarity equation; Fenchel–Young (weak duality) and its equality case
(strong duality), for :math:`p>1` and :math:`p=1` (the conjugate is an indicator).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from proofs.common import is_zero
from proofs.flat.definitions import A, Abar, B, Bbar, a, c, equal_positive, omega, p, r, s, t
from proofs.flat.upsilon import derive_upsilon

__all__ = ["DualityDerivation", "derive_duality"]


@dataclass(frozen=True)
class DualityDerivation:
    omega: sp.Expr  # omega_j in terms of Abar, Bbar
    conjugate: sp.Expr  # (omega |.|^p)^*(s), s >= 0
    argmax: sp.Expr  # the maximiser t*(s) >= 0
    checks: dict[str, bool]

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


@functools.lru_cache(maxsize=1)
def derive_duality() -> DualityDerivation:
    ud = derive_upsilon()
    checks: dict[str, bool] = {}
    # Invariant variables: theta = r thetabar, A = r^{2c} Abar, B = r^{2c-2} Bbar (exponents from above),
    # b = a r^c. Then Upsilon_j = omega_j |b_j|^p with omega_j = K Abar^eA Bbar^eB.
    eA_, eB_ = ud.exponents["A"], ud.exponents["B"]
    Uj = ud.upsilon_neuron.subs({A: r**eA_ * Abar, B: r**eB_ * Bbar, a: t / r**c}, simultaneous=True)
    om_r = sp.simplify(Uj.subs(t, 1))
    checks["omega_j does not depend on ||theta_j||"] = sp.simplify(
        sp.expand_log(r * sp.diff(sp.log(om_r), r), force=True)) == 0
    om = sp.simplify(om_r.subs(r, 1))
    checks["Upsilon_j = omega_j |b_j|^p"] = equal_positive(Uj, om * t**ud.p)
    checks["omega_j = K Abar^(1/(c+1)) Bbar^(c/(c+1))"] = equal_positive(
        om, ud.K * Abar**ud.exp_A * Bbar**ud.exp_B)
    # Convex conjugate g*(s) = sup_t s t - omega t^p (t >= 0 suffices for s >= 0; even in s by symmetry).
    obj = s * t - omega * t**p
    tst = sp.solve(sp.Eq(sp.diff(obj, t), 0), t)
    checks["conjugate: unique stationary point"] = len(tst) == 1
    tstar = tst[0]
    conj = sp.simplify(sp.powsimp(obj.subs(t, tstar), force=True))
    q = p / (p - 1)
    target = (p - 1) * omega * (s / (p * omega)) ** q
    pgt1 = {p: 1 + sp.Symbol("e", positive=True)}  # p > 1
    checks["g*(s) = (p-1) omega (|s|/(p omega))^q"] = equal_positive(conj.subs(pgt1), target.subs(pgt1))
    f2 = sp.simplify(sp.diff(obj, t, 2).subs(t, tstar).subs(pgt1))
    checks["conjugate: maximum (second derivative < 0)"] = bool(f2.is_negative)
    # Fenchel-Young: omega t^p + g*(s) - s t >= 0, with equality exactly at t = t*(s) (strong duality:
    # the primal b_j(nu) = t*((Phi^T nu)_j) makes primal and dual values equal once Phi b = y).
    fy = (omega * t**p + conj - s * t).subs(pgt1)
    checks["Fenchel-Young equality at t*"] = is_zero(sp.simplify(fy.subs(t, tstar.subs(pgt1))))
    checks["Fenchel-Young: t* is its global minimiser (convex in t)"] = bool(
        sp.simplify(sp.diff(fy, t, 2)).is_positive)
    # p = 1: sup_t s t - omega |t| is 0 when s <= omega and +inf otherwise (the dual constraint).
    lin = (s - omega) * t
    checks["p=1: conjugate is the indicator of |s| <= omega"] = (
        sp.limit(lin.subs(s, omega / 2), t, sp.oo) == -sp.oo and sp.limit(lin.subs(s, 2 * omega), t, sp.oo)
        == sp.oo)
    # p(c) > 1 exactly when c > 1, and q = p/(p-1) = 2c/(c-1).
    checks["p > 1 iff c > 1"] = is_zero(ud.p - 1 - (c - 1) / (c + 1))
    return DualityDerivation(om, conj, tstar, checks)
