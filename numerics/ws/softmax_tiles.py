"""The sample-pair sums of the softmax moments as tiles (:mod:`numerics.ws.pair_tiles`).

:class:`SoftmaxPairTiles` holds the prepared factors of the Gauss–Newton term Σ_ij tr(Q_i G_ij Q_j G_ijᵀ) and of the
far (Gram power ≥ 2) bilinear terms of :func:`numerics.ws.softmax._moments`; ``tile(I, J)`` is one (I, J) block
pair's share. It serves float64, mpmath object arrays, arb arrays and torch tensors under autograd alike (the
float64 values are Python floats, so that :class:`~numerics.ws.pair_tiles.TileRunner` reduces them exactly).
:func:`numerics.ws.softmax.build_softmax_tiles` rebuilds the same object on a Dask worker.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SoftmaxPairTiles", "array_module"]


def array_module(a):
    """numpy, or torch for a torch tensor (the sums serve float64, mpmath object arrays and, for
    :func:`numerics.ws.softmax.softmax_lambda_sup_grad`, torch tensors under autograd)."""
    if type(a).__module__.startswith("torch"):
        import torch

        return torch
    return np


class SoftmaxPairTiles:
    """The Gauss–Newton C × C blocks tr(Q_i G_ij Q_j G_ijᵀ), G_ij = Σ_d G^d F_i F_jᵀ (the u uᵀ kernel) + β_ij I,
    through Q = diag(p) S: Σ_cd p_ic p_jd (S_i F_i F_jᵀ S_jᵀ)_cd² for the u uᵀ part, (Q_i F_i)·(Q_j F_j) for the
    cross term and ⟨Q_i, Q_j⟩ for β², plus the far bilinear terms Σ G^d_ij L_i·R_j (d ≥ 2)."""

    width = 1

    def __init__(self, gg: dict, beta_const, p, SV, QV, Qflat, Xt, far, *, n: int, block: int, sqrt):
        if set(gg) - {"uu", "I"} or len(gg.get("uu", [])) != 1:
            raise ValueError(f"softmax kernel gg: the contraction needs one u uᵀ term and δ terms, got {sorted(gg)}")
        (self.du, Lu, Ru), = gg["uu"]
        self.beta_terms, self.beta_const = gg.get("I", []), beta_const
        self.n, self.block, self.Xt, self.far, self.Qflat = n, block, Xt, far, Qflat
        C, N = SV.shape[1], SV.shape[2]
        self.C, self.N = C, N
        sq = sqrt(p)
        self.Yl = (sq[:, :, None] * SV) * Lu[:, None, :]  # diag(√p_i) S_i V diag(L_i)
        self.Yr = (sq[:, :, None] * SV) * Ru[:, None, :]
        self.Dl = (QV * Lu[:, None, :]).reshape(n, C * N)  # Q_i F_i
        self.Dr = (QV * Ru[:, None, :]).reshape(n, C * N)
        b = min(block, n)
        k = Xt.shape[1] + 2 * len(self.beta_terms) + 2 * C * N + C * N * C + C * C + 2 * sum(L.shape[1]
                                                                                          for _, L, _ in far)
        self.tile_flops = 2.0 * b * b * k
        self.float64 = isinstance(Xt, np.ndarray) and Xt.dtype == np.float64

    def tile(self, I: int, J: int) -> tuple:
        n, block, C, N, Xt = self.n, self.block, self.C, self.N, self.Xt
        sI, sJ = slice(I, min(I + block, n)), slice(J, min(J + block, n))
        bI, bJ = sI.stop - sI.start, sJ.stop - sJ.start
        Gt = Xt[sI] @ Xt[sJ].T
        powers: dict = {}

        def gp(e):
            return powers.setdefault(e, Gt**e)

        beta = self.beta_const
        for d, L, R in self.beta_terms:
            beta = beta + gp(d) * (L[sI] @ R[sJ].T)
        Z = (self.Yl[sI].reshape(bI * C, N) @ self.Yr[sJ].reshape(bJ * C, N).T).reshape(bI, C, bJ, C)
        uu = array_module(Z).einsum("icjd,icjd->ij", Z, Z)  # Σ_cd p_ic p_jd (S_i F_i F_jᵀ S_jᵀ)_cd²
        cross = self.Dl[sI] @ self.Dr[sJ].T
        qq = self.Qflat[sI] @ self.Qflat[sJ].T
        du = self.du
        blk = (gp(2 * du) * uu + 2 * gp(du) * beta * cross + beta * beta * qq).sum()
        acc = blk if I == J else 2 * blk
        for d, L, R in self.far:
            acc = acc + (L[sI] * (gp(d) @ R[sJ])).sum()
            if I != J:
                acc = acc + (L[sJ] * (gp(d).T @ R[sI])).sum()
        return (float(acc),) if self.float64 else (acc,)
