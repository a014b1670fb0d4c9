"""Step 2 of the ws derivation: the per-unit block kernels as polynomials in the augmented Gram entry
(the block-structure argument that carries the small-size checks to every M)."""

from __future__ import annotations

import functools

import sympy as sp

from proofs.common import is_zero
from proofs.ws.definitions import DERIVS, KERNELS, P_I, P_J, G, V, phi


def _unit_block(M: int, bias: bool):
    """One hidden unit: parameters, inputs i and j, and z-terms for both samples."""
    w = sp.symbols(f"w1:{M + 1}", real=True)
    bb = sp.Symbol("b", real=True)
    xi = sp.symbols(f"xi1:{M + 1}", real=True)
    xj = sp.symbols(f"xj1:{M + 1}", real=True)
    params = [*w, *( [bb] if bias else [] ), V]
    ai = sum(wk * xk for wk, xk in zip(w, xi, strict=True)) + (bb if bias else 0)
    aj = sum(wk * xk for wk, xk in zip(w, xj, strict=True)) + (bb if bias else 0)
    zi, zj = V * phi(ai), V * phi(aj)
    sub = {f(ai): s for f, s in zip(DERIVS, P_I, strict=True)}
    sub.update({f(aj): s for f, s in zip(DERIVS, P_J, strict=True)})
    gram = sum(a * b for a, b in zip(xi, xj, strict=True)) + (1 if bias else 0)
    gram_ii = sum(a * a for a in xi) + (1 if bias else 0)
    return params, (xi, xj), zi, zj, sub, gram, gram_ii


def solve_in_gram(expr: sp.Expr, gram: sp.Expr, xs, degree: int = 2) -> sp.Expr:
    """Find c_0..c_degree (free of x) with expr ≡ Σ_d c_d gram^d as polynomials in x; return Σ c_d G^d."""
    cs = sp.symbols(f"c0:{degree + 1}")
    ansatz = sum(c * gram**d for d, c in enumerate(cs))
    eqs = sp.Poly(sp.expand(expr - ansatz), *xs).coeffs()
    sol = sp.solve(eqs, cs, dict=True)
    if len(sol) != 1:
        raise ArithmeticError(f"kernel is not a polynomial of degree <= {degree} in the Gram entry")
    return sp.expand(sum(sol[0].get(c, c) * G**d for d, c in enumerate(cs)))


@functools.cache
def derive_unit_kernels(M: int, bias: bool) -> dict[str, sp.Expr]:
    """The five block kernels of one hidden unit, as polynomials in G with φ-table coefficients."""
    params, (xi, xj), zi, zj, sub, gram, gram_ii = _unit_block(M, bias)
    gi = sp.Matrix([sp.diff(zi, p) for p in params]).xreplace(sub)
    gj = sp.Matrix([sp.diff(zj, p) for p in params]).xreplace(sub)
    Ki = sp.hessian(zi, params).xreplace(sub)
    Kj = sp.hessian(zj, params).xreplace(sub)
    xs = (*xi, *xj)
    i_only = {s: t for s, t in zip(P_J, P_I, strict=True)}
    return {
        "gg": solve_in_gram((gi.T * gj)[0, 0], gram, xs),
        "gKg": solve_in_gram((gi.T * Kj * gi)[0, 0], gram, xs),
        "KK": solve_in_gram((Ki * Kj).trace(), gram, xs),
        # diagonal kernels: the same block at i = j, in the squared norm G_ii
        "g2": solve_in_gram((gi.T * gi)[0, 0], gram_ii, xi).xreplace(i_only),
        "trK": solve_in_gram(Ki.trace(), gram_ii, xi).xreplace(i_only),
    }


def unit_kernels_size_free(max_M: int = 3) -> tuple[dict[str, sp.Expr], dict[str, sp.Expr], dict]:
    """Block kernels (with and without bias), shown identical for M = 1..max_M."""
    out = {}
    agree = {}
    for bias in (True, False):
        ref = derive_unit_kernels(1, bias)
        agree[bias] = all(
            is_zero(derive_unit_kernels(M, bias)[k] - ref[k]) for M in range(2, max_M + 1) for k in KERNELS
        )
        out[bias] = ref
    return out[True], out[False], {"M_checked": list(range(1, max_M + 1)), "identical": agree}


# The output bias c is its own block: z depends on it linearly, so its kernels are constants.
def output_bias_kernels() -> dict[str, sp.Expr]:
    c = sp.Symbol("c")
    g = sp.diff(c, c)
    k = sp.diff(c, c, 2)
    return {"gg": g * g, "gKg": g * k * g, "KK": k * k, "g2": g * g, "trK": k}
