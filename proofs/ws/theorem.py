"""ws.theorem: the Wolkowicz–Styan bounds (1980, LAA 29, Thm 2.1), derived symbolically."""

from __future__ import annotations

import sympy as sp

from proofs.common import is_zero


def derive_ws_theorem(max_D: int = 6) -> dict:
    r"""Extremal spectra for given (D, tr, tr²), the bounds, their equality cases and the k-th form.

    With x_i = λ_i − m (Σx_i = 0, Σx_i² = D s²), and λ in decreasing order:

    * k-th upper bound. S = Σ_{i≤k} x_i ≥ k x_k and Σ_{i>k} x_i = −S, so by Cauchy–Schwarz
      D s² ≥ S²/k + S²/(D−k) = S² D/(k(D−k)); hence x_k ≤ s√((D−k)/k), with equality iff the top k
      and the bottom D−k eigenvalues are each equal. k = 1 gives λ_max ≤ m + s√(D−1).
    * k-th lower bound: apply the upper bound to −A at index D−k+1.
    * λ_max ≥ m + s/√(D−1): Σ_i (x_1 − x_i)(x_i − x_D) ≥ 0 expands to −D x_1 x_D − D s² ≥ 0, so
      x_1 |x_D| ≥ s², and |x_D| ≤ s√(D−1) gives x_1 ≥ s/√(D−1); equality iff every x_i ∈ {x_1, x_D}
      and |x_D| = s√(D−1), i.e. the D−1 largest eigenvalues are equal.

    SymPy checks: the two-level extremal spectra have mean m and variance s² and hit each bound
    (symbolic D, k); the Cauchy–Schwarz step as an identity; the expansion identity for D ≤ max_D;
    and the solution of λ² + (Dm − λ)²/(D−1) = D(m² + s²) is exactly m ± s√(D−1).
    """
    D, k = sp.symbols("D k", positive=True, integer=True)
    j = sp.Symbol("j", positive=True, integer=True)  # D − k > 0 for the two-level spectra
    m = sp.Symbol("m", real=True)
    s = sp.Symbol("s", positive=True)
    res = {}
    # extremal spectrum for the k-th upper bound: k copies of hi, D-k copies of lo
    hi = m + s * sp.sqrt(j / k)
    lo = m - s * sp.sqrt(k / j)
    Dk = k + j
    res["kth_extremal_mean"] = is_zero((k * hi + j * lo) / Dk - m)
    res["kth_extremal_var"] = is_zero((k * hi**2 + j * lo**2) / Dk - m**2 - s**2)
    # the CS step: S²/k + S²/(D−k) = S² D/(k(D−k))
    S = sp.Symbol("S")
    res["cauchy_schwarz_step"] = is_zero(S**2 / k + S**2 / (D - k) - S**2 * D / (k * (D - k)))
    # kth lower from kth upper of -A at index D-k+1
    kth_lower = m - s * sp.sqrt((k - 1) / (D - k + 1))
    mirrored = -((-m) + s * sp.sqrt((D - (D - k + 1)) / (D - k + 1)))
    res["kth_lower_by_mirror"] = is_zero(kth_lower - mirrored)
    # λ_max upper bound: the quadratic's roots are m ± s√(D−1)
    lam = sp.Symbol("lam", real=True)
    roots = sp.solve(sp.Eq(lam**2 + (D * m - lam) ** 2 / (D - 1), D * (m**2 + s**2)), lam)
    res["lmax_upper_roots"] = (
        len(roots) == 2
        and {sp.simplify(rt - m - s * sp.sqrt(D - 1)) == 0 or sp.simplify(rt - m + s * sp.sqrt(D - 1)) == 0
             for rt in roots} == {True}
    )
    # λ_max lower bound: the extremal spectrum (D−1 copies of m + s/√(D−1), one of m − s√(D−1))
    top = m + s / sp.sqrt(D - 1)
    bot = m - s * sp.sqrt(D - 1)
    res["lmax_lower_extremal_mean"] = is_zero(((D - 1) * top + bot) / D - m)
    res["lmax_lower_extremal_var"] = is_zero(sp.simplify(((D - 1) * top**2 + bot**2) / D - m**2 - s**2))
    # the expansion identity Σ(x1 − xi)(xi − xD) = −D x1 xD − Σ xi² given Σ xi = 0, for each D ≤ max_D
    ok = True
    for d in range(2, max_D + 1):
        xs = sp.symbols(f"x1:{d + 1}", real=True)
        xs_c = list(xs[:-1]) + [-sum(xs[:-1])]  # impose Σ x = 0
        lhs = sum((xs_c[0] - xi) * (xi - xs_c[-1]) for xi in xs_c)
        rhs = -d * xs_c[0] * xs_c[-1] - sum(xi**2 for xi in xs_c)
        ok &= is_zero(lhs - rhs)
    res["lmax_lower_expansion_identity"] = ok
    # D = 2: all four bounds are equalities (s/√1 = s√1)
    res["D2_all_equal"] = is_zero((s / sp.sqrt(D - 1) - s * sp.sqrt(D - 1)).subs(D, 2))
    return res
