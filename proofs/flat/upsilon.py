r"""flat.upsilon, derived: the minimum of the trace at an interpolator over rescalings.

The scaling exponents of :math:`A_j, B_j, a_j^2` under the rescaling are *computed*
(:math:`\lambda\,\partial_\lambda\log`), the stationarity equation of the rescaled neuron trace is solved, the
second derivative is shown positive there, the value is substituted back, and :math:`p`, the exponents of
:math:`A, B` and :math:`K_c` are read off by logarithmic derivatives.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import sympy as sp

from proofs.common import is_zero
from proofs.flat.definitions import A, B, a, c, equal_positive, lam, z

__all__ = ["UpsilonDerivation", "derive_upsilon"]


@dataclass(frozen=True)
class UpsilonDerivation:
    exponents: dict[str, sp.Expr]  # scaling exponents of A, B, a^2 under the rescaling
    neuron_trace: sp.Expr  # lambda^{2c} A + lambda^{-2} a^2 B (assembled from the exponents)
    lambda_opt: sp.Expr  # the unique positive stationary point
    lambda_pow: sp.Expr  # lambda_opt^{2c+2}
    second_derivative: sp.Expr
    upsilon_neuron: sp.Expr  # the minimum value, K A^eA B^eB |a|^p (shown equal to f(lambda_opt))
    p: sp.Expr
    exp_A: sp.Expr
    exp_B: sp.Expr
    K: sp.Expr
    checks: dict[str, bool] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


def _scaling_exponent(expr: sp.Expr) -> sp.Expr:
    """k with expr(lambda) = lambda^k expr(1): lambda d/dlambda log(expr), simplified."""
    return sp.simplify(sp.expand_log(lam * sp.diff(sp.log(expr), lam), force=True))


@functools.lru_cache(maxsize=1)
def derive_upsilon() -> UpsilonDerivation:
    checks: dict[str, bool] = {}
    # Scaling of A_j (sigma^2), B_j (sigma'^2 ||x||^2) and a_j^2 under theta -> lambda theta,
    # a -> lambda^{-c} a, computed on the branch sigma(z) = z^c, z > 0 (the other branch is the same
    # up to the constant factor, which cancels in the exponent).
    sig = z**c
    e_A = _scaling_exponent(sig.subs(z, lam * z) ** 2)
    e_B = _scaling_exponent(sp.diff(sig, z).subs(z, lam * z) ** 2)
    e_a2 = _scaling_exponent((lam ** (-c) * a) ** 2)
    f = lam**e_A * A + lam ** (e_a2 + e_B) * a**2 * B
    checks["exponents (2c, 2c-2, -2c)"] = is_zero(e_A - 2 * c) and is_zero(e_B - (2 * c - 2)) and is_zero(
        e_a2 + 2 * c)
    df = sp.diff(f, lam)
    sols = sp.solve(sp.Eq(df, 0), lam)
    checks["unique positive stationary point"] = len(sols) == 1
    lo = sols[0]
    lam_pow = sp.simplify(sp.powdenest(lo ** (2 * c + 2), force=True))
    checks["lambda^(2c+2) = a^2 B/(c A)"] = equal_positive(lam_pow, a**2 * B / (c * A))
    f2 = sp.simplify(sp.diff(f, lam, 2).subs(lam, lo))
    checks["second derivative > 0"] = bool(f2.is_positive)
    # f -> +inf at both ends, so the unique stationary point is the global minimum
    checks["coercive at 0 and infinity"] = (sp.limit(f, lam, 0, "+") == sp.oo) and (
        sp.limit(f.subs(c, 1), lam, sp.oo) == sp.oo)
    U = sp.simplify(sp.powsimp(sp.powdenest(f.subs(lam, lo), force=True), force=True))  # as SymPy gives it
    logU = sp.log(U)
    pexp = sp.simplify(sp.expand_log(a * sp.diff(logU, a), force=True))
    eA = sp.simplify(sp.expand_log(A * sp.diff(logU, A), force=True))
    eB = sp.simplify(sp.expand_log(B * sp.diff(logU, B), force=True))
    K = sp.simplify(U.subs({A: 1, B: 1, a: 1}))
    closed = K * A**eA * B**eB * a**pexp  # the derived pieces, reassembled (well defined at a = 0)
    checks["Upsilon_j = K A^eA B^eB |a|^p"] = equal_positive(U, closed)
    checks["p = 2c/(c+1)"] = is_zero(pexp - 2 * c / (c + 1))
    checks["K_c = (c+1) c^(-c/(c+1))"] = equal_positive(K, (c + 1) * c ** (-c / (c + 1)))
    checks["p, eA, eB consistent with scaling (p = 2 eB)"] = is_zero(pexp - 2 * eB) and is_zero(eA + eB - 1)
    return UpsilonDerivation({"A": e_A, "B": e_B, "a^2": e_a2}, f, lo, lam_pow, f2, closed, pexp, eA, eB, K,
                             checks)
