"""ws.overfit: every kernel monomial carries a factor q_i or r_i, so tr H, tr H² and λ_sup vanish at
q = r = 0."""

from __future__ import annotations

import sympy as sp

from proofs.ws.kernels import unit_kernels_size_free


def saturation_limit() -> dict:
    """ws.overfit (S): every monomial of the kernel form carries a factor q_i or r_i.

    Hence tr H and tr H² → 0 as q, r → 0 (bounded φ-tables), so μ → 0 and σ² = tr H²/D − μ² → 0,
    and λ_sup = μ + √(D−1)σ → 0.
    """
    kb, _, _ = unit_kernels_size_free(1)
    q_i, q_j, r_i, r_j = sp.symbols("q_i q_j r_i r_j")
    tr_i = q_i * kb["g2"] + r_i * kb["trK"]
    tr2_ij = q_i * q_j * kb["gg"] ** 2 + 2 * q_i * r_j * kb["gKg"] + r_i * r_j * kb["KK"]
    zero = {q_i: 0, q_j: 0, r_i: 0, r_j: 0}
    # σ² → 0 implies λ_sup → 0: λ_sup is continuous in (μ, σ) and vanishes at (0, 0)
    mu, s, D = sp.symbols("mu sigma D", nonnegative=True)
    lam = mu + sp.sqrt(D - 1) * s
    return {
        "trace_vanishes": sp.expand(tr_i.xreplace(zero)) == 0,
        "trace_sq_vanishes": sp.expand(tr2_ij.xreplace(zero)) == 0,
        "lambda_sup_vanishes": lam.subs({mu: 0, s: 0}) == 0,
    }
