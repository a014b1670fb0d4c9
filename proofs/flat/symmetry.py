r"""flat.symmetry, derived: σ′ is (c−1)-homogeneous, and the rescaling leaves h unchanged.

From :math:`\sigma(\lambda t) = \lambda^c\sigma(t)` for an *abstract* function, differentiating in :math:`t` gives
:math:`\sigma'(\lambda t) = \lambda^{c-1}\sigma'(t)`; the rescaling :math:`(a_j,\theta_j)\mapsto(\lambda^{-c}a_j,
\lambda\theta_j)` leaves :math:`h` unchanged, branch by branch, for every family (symbolic c, λ > 0).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from proofs.common import is_zero
from proofs.flat.definitions import FAMILIES, c, family_degree, lam, piece, z

__all__ = ["HomogeneityResult", "derive_homogeneity"]


@dataclass(frozen=True)
class HomogeneityResult:
    """σ′ is (c−1)-homogeneous (abstract σ) and h is rescaling invariant (each family, both signs)."""

    sigma_prime_identity: sp.Expr  # sigma'(lambda t) expressed through sigma'(t)
    derivative_ok: bool
    invariance: dict[str, bool]

    @property
    def ok(self) -> bool:
        return self.derivative_ok and all(self.invariance.values())


@functools.lru_cache(maxsize=1)
def derive_homogeneity() -> HomogeneityResult:
    sig = sp.Function("sigma")
    tt = sp.Symbol("t", real=True)
    # d/dt [sigma(lambda t)] = d/dt [lambda^c sigma(t)]  =>  lambda sigma'(lambda t) = lambda^c sigma'(t)
    lhs = sp.diff(sig(lam * tt), tt)  # lambda * Subs(Derivative(sigma(u), u), u, lambda t)
    rhs = sp.diff(lam**c * sig(tt), tt)
    dsig_at_lt = sp.solve(sp.Eq(lhs, rhs), lhs / lam)  # solve for sigma'(lambda t)
    identity = sp.simplify(dsig_at_lt[0]) if dsig_at_lt else sp.nan
    expected = lam ** (c - 1) * sp.diff(sig(tt), tt)
    derivative_ok = bool(dsig_at_lt) and is_zero(identity - expected)
    # Rescaling invariance, branch by branch: a lambda^{-c} sigma(lambda z) = a sigma(z) on z > 0 and z < 0.
    inv = {}
    aa = sp.Symbol("a_j", real=True)
    for fam in FAMILIES:
        cc = family_degree(fam)
        ok = True
        for sign in (1, -1):
            zz = sign * z  # z > 0 symbol; the branch argument has the branch's sign
            e = aa * lam ** (-cc) * piece(fam, sign, lam * zz, cc) - aa * piece(fam, sign, zz, cc)
            e = sp.powsimp(sp.powdenest(sp.expand_power_base(e, force=True), force=True), force=True)
            ok = ok and is_zero(e)
        inv[fam] = ok
    return HomogeneityResult(identity, derivative_ok, inv)
