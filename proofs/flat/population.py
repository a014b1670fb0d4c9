r"""flat.population, derived: the Gaussian half moments and the degree-1/2 arc-cosine kernels.

:math:`\mathbb E[z_+^e]` by its radial integral, and :math:`\mathbb E[(u\cdot x)_+^k(v\cdot x)_+^k]` (k = 1, 2) by
polar integration in span(u, v), cross-checked against Cho & Saul's :math:`J_1, J_2`.

References:
    Cho & Saul (2009), Kernel methods for deep learning, NeurIPS (arc-cosine kernels).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import sympy as sp

from proofs.common import is_zero
from proofs.flat.definitions import E_SYM, phi

__all__ = ["KernelDerivation", "derive_kernels"]


@dataclass(frozen=True)
class KernelDerivation:
    half_moment: sp.Expr  # E[z_+^e], z ~ N(0,1)
    relu_kernels: dict[int, sp.Expr]  # E[(u.x)_+^k (v.x)_+^k] for unit u, v at angle phi
    checks: dict[str, bool]

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


@functools.lru_cache(maxsize=1)
def derive_kernels() -> KernelDerivation:
    checks: dict[str, bool] = {}
    zz = sp.Symbol("zeta", positive=True)
    hm = sp.simplify(sp.integrate(zz**E_SYM * sp.exp(-zz**2 / 2), (zz, 0, sp.oo)) / sp.sqrt(2 * sp.pi))
    hm = sp.simplify(sp.gammasimp(hm))
    checks["E[z_+^e] = 2^(e/2-1) Gamma((e+1)/2)/sqrt(pi)"] = is_zero(
        sp.gammasimp(hm - 2 ** (E_SYM / 2 - 1) * sp.gamma((E_SYM + 1) / 2) / sp.sqrt(sp.pi)))
    checks["E[z^2] = 1, E[z^4] = 3 (from 2 E[z_+^k])"] = (
        sp.simplify(2 * hm.subs(E_SYM, 2)) == 1 and sp.simplify(2 * hm.subs(E_SYM, 4)) == 3)
    kernels = {}
    rr = sp.Symbol("rho_r", positive=True)
    ang = sp.Symbol("psi", real=True)
    for k in (1, 2):
        # polar coordinates in span(u, v): u = e_1, v = (cos phi, sin phi); both positive on
        # psi in (phi - pi/2, pi/2); density (1/2pi) r exp(-r^2/2) dr dpsi.
        radial = sp.integrate(rr ** (2 * k + 1) * sp.exp(-rr**2 / 2), (rr, 0, sp.oo))
        angular = sp.integrate(sp.expand(sp.cos(ang) ** k * sp.cos(ang - phi) ** k, trig=True),
                               (ang, phi - sp.pi / 2, sp.pi / 2))
        kernels[k] = sp.simplify(radial * angular / (2 * sp.pi))
    # Cross-check against Cho & Saul's J_1, J_2 (k_n = ||x||^n ||y||^n J_n / pi = 2 E[...]).
    J1 = sp.sin(phi) + (sp.pi - phi) * sp.cos(phi)
    J2 = 3 * sp.sin(phi) * sp.cos(phi) + (sp.pi - phi) * (1 + 2 * sp.cos(phi) ** 2)
    checks["k=1 equals Cho-Saul J_1/(2 pi)"] = is_zero(sp.expand_trig(kernels[1] - J1 / (2 * sp.pi)))
    checks["k=2 equals Cho-Saul J_2/(2 pi)"] = is_zero(sp.expand_trig(kernels[2] - J2 / (2 * sp.pi)))
    checks["phi=0 gives E[z_+^2k]"] = all(
        is_zero(sp.limit(kernels[k], phi, 0) - hm.subs(E_SYM, 2 * k)) for k in (1, 2))
    return KernelDerivation(hm, kernels, checks)
