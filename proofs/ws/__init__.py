r"""ws derivations (SPEC §1): tr H and tr H² of the cross-entropy Hessian of an M–N–1 net, derived from the loss.

Modules: ``definitions`` (the net, the loss), ``kernels`` (step 2), ``trace`` (step 4, ws.trace and
ws.trace_sq), ``theorem`` (ws.theorem), ``overfit`` (ws.overfit), ``codegen`` (``artifacts``).

Definitions (SPEC §1). z(x) = v·φ(Wx + b) + c, L = (1/n) Σ_i ℓ(y_i, z_i), ℓ = BCE(y, sigmoid(z)),
θ = (vec W row-major, b, v, c), D = N(M+2)+1; the no-bias variant drops b and c, D = N(M+1).

Derivation, in four steps, each checked by exact simplification to 0:

1. ``derive_bce``: ∂ℓ/∂z = sigmoid(z) − y =: r and ∂²ℓ/∂z² = sigmoid(z)(1 − sigmoid(z)) =: q, from
   the BCE formula. By the chain rule H = (1/n) Σ_i (q_i g_i g_iᵀ + r_i K_i), g_i = ∇z_i, K_i = ∇²z_i.
2. ``derive_unit_kernels``: θ splits into one block (w_k, b_k, v_k) per hidden unit plus the output
   bias c. z is a sum of per-block terms v_k φ(w_k·x + b_k) and c, so K_i is block-diagonal and
   g_i·g_j, g_iᵀK_j g_i and tr(K_i K_j) are sums over blocks. SymPy differentiates one block and
   *solves* for the coefficients of each block kernel as a polynomial in the augmented Gram entry
   G_ij = x̃_i·x̃_j (x̃ = (x, 1), or x without biases). The solution is the same for M = 1, 2, 3:
   the block's Jacobian is a scalar times x̃ (∂a/∂w̃ = x̃), so x enters only through x̃_i·x̃_j, for
   every M. This is the block-structure argument that carries the small-size checks to all sizes.
3. ``kernel_form``: the assembly tr H = (1/n) Σ_i (q_i g_i·g_i + r_i tr K_i),
   tr H² = (1/n²) Σ_ij [q_i q_j (g_i·g_j)² + 2 q_i r_j g_iᵀK_j g_i + r_i r_j tr(K_i K_j)].
4. ``check_against_hessian``: for every (M, N, n) with M ≤ 2, N ≤ 3, n ≤ 2, with and without
   biases, for a generic φ (an undefined function with named derivatives), the kernel form minus the
   trace (and squared Frobenius norm) of ``sympy.hessian`` of the full loss expands to exactly 0.

``artifacts`` turns the block kernels into vectorised code (each Σ_k over units becomes a matrix
product of per-sample unit tables) in ``numerics/_derived/ws.py`` and LaTeX in
``proofs/latex/ws.tex``; ``numerics.moments`` runs on that code.

The Wolkowicz–Styan theorem is derived in ``derive_ws_theorem``; multi-class softmax cross-entropy
(ws.softmax) in ``softmax`` (its kernels go to ``numerics/_derived/ws_softmax.py``).
"""

from proofs.ws.codegen import artifacts as binary_artifacts
from proofs.ws.definitions import DERIVS, d2ell, dell, derive_bce, ell
from proofs.ws.kernels import derive_unit_kernels, output_bias_kernels, unit_kernels_size_free
from proofs.ws.overfit import saturation_limit
from proofs.ws.softmax import (
    check_softmax_against_hessian,
    contraction_identities,
    derive_softmax_ce,
    derive_softmax_unit_kernels,
    softmax_artifacts,
    softmax_kernels_size_free,
    softmax_size_checks,
)
from proofs.ws.theorem import derive_ws_theorem
from proofs.ws.trace import HessianCheck, all_size_checks, check_against_hessian


def artifacts():
    """The binary kernels (``numerics/_derived/ws.py``) and the softmax ones (``numerics/_derived/ws_softmax.py``)."""
    return binary_artifacts() + softmax_artifacts()


__all__ = ["all_size_checks", "artifacts", "binary_artifacts", "check_against_hessian",
           "check_softmax_against_hessian", "contraction_identities", "d2ell", "dell", "derive_bce",
           "derive_softmax_ce", "derive_softmax_unit_kernels", "derive_unit_kernels", "derive_ws_theorem", "DERIVS",
           "ell", "HessianCheck", "output_bias_kernels", "saturation_limit", "softmax_artifacts",
           "softmax_kernels_size_free", "softmax_size_checks", "unit_kernels_size_free"]
