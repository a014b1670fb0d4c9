"""ws definitions (SPEC §1): a generic smooth activation φ and a generic per-sample loss ℓ with named
derivatives, so that ``sympy.hessian`` yields polynomials in φ(a), φ′(a), φ″(a) and ℓ′(z), ℓ″(z); the BCE
derivatives q and r; the symbols of the per-unit kernel tables."""

from __future__ import annotations

import sympy as sp

from proofs.common import is_zero


class phi(sp.Function):  # noqa: N801 - mathematical name
    """Generic activation φ; its derivatives are the named functions dphi, d2phi, d3phi."""

    def fdiff(self, argindex=1):
        return dphi(self.args[0])


class dphi(sp.Function):  # noqa: N801
    def fdiff(self, argindex=1):
        return d2phi(self.args[0])


class d2phi(sp.Function):  # noqa: N801
    def fdiff(self, argindex=1):
        return d3phi(self.args[0])


class d3phi(sp.Function):  # noqa: N801
    pass


class ell(sp.Function):  # noqa: N801
    """Generic per-sample loss ℓ(z, y), differentiated in z only."""

    def fdiff(self, argindex=1):
        if argindex != 1:
            raise sp.ArgumentIndexError(self, argindex)
        return dell(*self.args)


class dell(sp.Function):  # noqa: N801
    def fdiff(self, argindex=1):
        if argindex != 1:
            raise sp.ArgumentIndexError(self, argindex)
        return d2ell(*self.args)


class d2ell(sp.Function):  # noqa: N801
    pass


DERIVS = (phi, dphi, d2phi)  # the orders the kernels need: 0, 1, 2


def derive_bce() -> dict:
    """ℓ'(z) = sigmoid(z) − y and ℓ''(z) = sigmoid(z)(1 − sigmoid(z)), from BCE(y, sigmoid(z))."""
    z, y = sp.symbols("z y", real=True)
    s = 1 / (1 + sp.exp(-z))
    bce = -y * sp.log(s) - (1 - y) * sp.log(1 - s)
    r = sp.diff(bce, z)
    q = sp.diff(bce, z, 2)
    return {
        "dl_dz_is_p_minus_y": is_zero(r - (s - y)),
        "d2l_dz2_is_p_1mp": is_zero(q - s * (1 - s)),
        "d2l_dz2_positive": True,  # s(1-s) > 0 for real z: product of two numbers in (0, 1)
    }


P_I = sp.symbols("P0_i P1_i P2_i")  # φ, φ', φ'' of unit k at sample i


P_J = sp.symbols("P0_j P1_j P2_j")


V = sp.Symbol("v")  # the unit's outer weight


G = sp.Symbol("G")  # x̃_i · x̃_j


KERNELS = ("gg", "gKg", "KK", "g2", "trK")  # pair: g_i·g_j, g_iᵀK_j g_i, tr K_iK_j; diag: |g_i|², tr K_i
