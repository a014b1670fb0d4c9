r"""tr H alone, with the Hessian's diagonal, in O(n·N·M) time and O(N·M) extra memory (no sample pairs).

For the mean BCE loss of z(x) = Σ_k v_k φ(w_k·x + b_k) + c, H = (1/n) Σ_i (q_i g_i g_iᵀ + r_i K_i) with
g_i = ∂z_i/∂θ, K_i = ∂²z_i/∂θ², q_i = p_i(1 − p_i), r_i = p_i − y_i, so each diagonal entry is a per-sample sum
(a_ik = w_k·x_i + b_k):

.. math::
    H_{W_{kj}W_{kj}} = \tfrac1n\sum_i x_{ij}^2\,(q_i v_k^2\varphi'(a_{ik})^2 + r_i v_k\varphi''(a_{ik})),\qquad
    H_{b_kb_k} = \tfrac1n\sum_i (q_i v_k^2\varphi'^2 + r_i v_k\varphi''),\qquad
    H_{v_kv_k} = \tfrac1n\sum_i q_i\varphi(a_{ik})^2,\qquad H_{cc} = \tfrac1n\sum_i q_i,

the W block being one (n×N)ᵀ(n×M) product. tr H is their sum. The same tables as
:func:`numerics.ws.ce_hessian_moments` (float64, or mpmath at ``dps`` digits, cancellation-free q and r); the
formulas are checked against the diagonal of torch.func's dense Hessian and of the SymPy Hessian in mpmath
(``tests/test_ws_trace_only.py``), and the trace against the pair-sum closed form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

from numerics.ws.activations import get_activation
from numerics.ws.inputs import dim_of, validate_net
from numerics.ws.moments import tables_float64, tables_mp
from numerics.ws.workspace import workspace

__all__ = ["HessianTrace", "ce_hessian_trace", "row_blocks", "trace_of"]

SMALL_GEMM = 2_000_000   # n·N·M below which numpy's einsum loop beats waking the BLAS threads


@dataclass(frozen=True)
class HessianTrace:
    """tr H of the mean BCE Hessian, its diagonal in the θ order (vec W row-major, b, v, c) and D."""

    trace: Any
    diagonal: np.ndarray | None   # None when asked for the trace alone (``diagonal=False``)
    dim: int
    n: int
    bias: bool
    dps: int | None = None


def ce_hessian_trace(W, b, v, c, X, y, activation: str | Any = "tanh", *, bias: bool = True,
                     dps: int | None = None, diagonal: bool = True, rows: int | None = None) -> HessianTrace:
    """tr H and diag H of the mean BCE Hessian (see the module docstring), O(n·N·M).

    ``diagonal=False`` (float64): the trace alone, as the issue's per-sample sum
    tr H = (1/n) Σ_i [(Σ_k U_ik)(‖x_i‖² + [bias]) + q_i(Σ_k φ(a_ik)² + [bias])], U_ik = q_i v_k²φ′² + r_i v_k φ″: no
    second n×N×M product (the W block's diagonal needs Uᵀ(X∘X)); ``.diagonal`` is then None. ``rows``: samples per
    block of the float64 path (default :func:`row_blocks`'): its working memory does not grow with n.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> W, b, v = rng.standard_normal((3, 2)), rng.standard_normal(3), rng.standard_normal(3)
        >>> X, y = rng.standard_normal((10, 2)), (rng.random(10) < 0.5).astype(float)
        >>> from numerics.ws import ce_hessian_moments
        >>> t = ce_hessian_trace(W, b, v, 0.1, X, y, "tanh")
        >>> abs(t.trace - ce_hessian_moments(W, b, v, 0.1, X, y, "tanh").trace) < 1e-12, t.diagonal.shape
        (True, (13,))
    """
    act = get_activation(activation)
    W, b, v, c, X, y = validate_net(W, b, v, c, X, y, bias=bias)
    n, (N, M) = X.shape[0], W.shape
    if dps is None:
        tr, diag = _float64_diagonal(W, b, v, c, X, y, act, bias, diagonal, rows)
        return HessianTrace(tr, diag, dim_of(N, M, bias), n, bias, dps)
    with mpmath.workdps(dps + 10):
        P, q, r, Xs = tables_mp(W, b, v, c, X, y, act)
        vv = np.vectorize(mpmath.mpf, otypes=[object])(v)
        phi, d1, d2 = P[0], P[1], P[2]
        U = (q[:, None] * (d1 * d1)) * (vv * vv)[None, :] + (r[:, None] * d2) * vv[None, :]   # n × N
        dW = (U.T @ (Xs * Xs)) / n
        dv = np.sum(q[:, None] * phi * phi, axis=0) / n
        parts = [dW.reshape(-1)]
        if bias:
            db = np.sum(U, axis=0) / n
            dc = np.sum(q) / n
            parts += [db, dv, np.array([dc], dtype=dv.dtype)]
        else:
            parts += [dv]
        tr, diag = trace_of(np.concatenate(parts), dps)
    return HessianTrace(tr, diag, dim_of(N, M, bias), n, bias, dps)


TRACE_ROWS_ELEMENTS = 2**19
"""The float64 paths run over blocks of samples with at most this many rows × max(N, M + 1) elements per table
(4 MB): working memory O(rows·(N + M) + N·M) whatever n, and no table of n rows. Whole-n tables at (784, 256),
n = 60 000 were ~1 GB of fresh pages a call, and the call's time moved 0.8–1.7 s with the kernel's page faults."""


def row_blocks(n: int, width: int, rows: int | None = None):
    """Slices of at most ``rows`` samples (default: :data:`TRACE_ROWS_ELEMENTS` // width, at least 64) covering 0..n."""
    k = max(1, rows) if rows is not None else max(64, TRACE_ROWS_ELEMENTS // max(1, width))
    return [slice(a, min(n, a + k)) for a in range(0, n, k)] or [slice(0, 0)]


def _float64_diagonal(W, b, v, c, X, y, act, bias: bool, diagonal: bool = True, rows: int | None = None):
    """The float64 diagonal over blocks of samples (:func:`row_blocks`): per block, one pass of element-wise work and
    one product U_bᵀ[X_b∘X_b | 1] that adds the W block and the b block together (the ones column is kept in the
    buffer). Without ``diagonal``: the trace alone from per-sample sums, and None."""
    n, (N, M) = X.shape[0], W.shape
    one = 1.0 if bias else 0.0
    blocks = row_blocks(n, max(N, M + 1), rows)
    if not diagonal:   # the trace alone: Σ_k U_ik = q_i (φ′²·v²)_i + r_i (φ″·v)_i and Σ_k φ_ik², three GEMVs a block
        vv, total = v * v, 0.0
        for sl in blocks:
            Xb = X[sl]
            (phi, d1, d2), q, r = tables_float64(W, b, v, c, Xb, y[sl], act)
            u = q * ((d1 * d1) @ vv) + r * (d2 @ v)   # (the tables may be read-only broadcasts: no in-place)
            xx = np.einsum("ij,ij->i", Xb, Xb)
            total += float(u @ (xx + one) + q @ (np.einsum("ik,ik->i", phi, phi) + one))
        return total / n, None
    G, dv, qsum = np.zeros((N, M + 1)), np.zeros(N), 0.0
    with workspace() as take:   # [X∘X | 1] of one block in a kept buffer: no fresh pages per block or call
        for sl in blocks:
            Xb = X[sl]
            (phi, d1, d2), q, r = tables_float64(W, b, v, c, Xb, y[sl], act)
            U = np.multiply(d1, d1)
            U *= q[:, None]
            U *= (v * v)[None, :]
            T = np.multiply(d2, r[:, None])
            T *= v[None, :]
            U += T                                                    # rows × N: q v²φ′² + r v φ″
            np.multiply(phi, phi, out=T)
            dv += q @ T                                               # Σ_i q_i φ(a_ik)²
            qsum += float(np.sum(q))
            XX = take("trace_xx1", (len(Xb), M + 1))
            np.multiply(Xb, Xb, out=XX[:, :M])
            XX[:, M] = 1.0
            if len(Xb) * N * M < SMALL_GEMM:
                # numpy's own loop, not BLAS: a small GEMM after torch work waits ~10 ms on BLAS threads
                G += np.einsum("in,im->nm", U, XX, optimize=False)
            else:
                G += U.T @ XX
    G /= n                                                    # N × (M + 1): the W block, then the b column
    parts = [G[:, :M].reshape(-1)]
    if bias:
        parts += [G[:, M], dv / n, np.array([qsum / n])]
    else:
        parts += [dv / n]
    diag = np.concatenate(parts)
    return float(np.sum(diag)), diag


def trace_of(diag, dps: int | None):
    """(tr, diag) from a Hessian diagonal: its float64 sum, or (``dps`` set; call it inside the guard-digit
    precision the entries were computed at) the mpmath sum there, then the sum and every entry rounded to ``dps``."""
    if dps is None:
        return float(np.sum(diag)), diag
    tr = mpmath.fsum(diag)
    with mpmath.workdps(dps):
        return +tr, np.array([+x for x in diag], dtype=object)
