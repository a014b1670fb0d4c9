"""The sample-pair sums of the softmax moments as tiles (:mod:`numerics.ws.pair_tiles`).

:class:`SoftmaxPairTiles` holds the prepared factors of the Gauss–Newton term Σ_ij tr(Q_i G_ij Q_j G_ijᵀ) and of the
far (Gram power ≥ 2) bilinear terms of :func:`numerics.ws.softmax._moments`; ``tile(I, J)`` is one (I, J) block
pair's share. It serves float64, mpmath object arrays, arb arrays and torch tensors under autograd alike (the
float64 values are Python floats, so that :class:`~numerics.ws.pair_tiles.TileRunner` reduces them exactly).
:func:`numerics.ws.softmax.build_softmax_tiles` rebuilds the same object on a Dask worker.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SoftmaxPairTiles", "array_module", "centered"]


def centered(p, V, out=None):
    """S_i V for every sample: (S_i V)[c, k] = Σ_a p_ia (V[c, k] − V[a, k]), shape (n, C, N); S = I − 1pᵀ.
    ``out``: a float64 (n, C·N) array to write into (the tiles' kept buffer)."""
    C, N = V.shape
    delta = (V[None, :, :] - V[:, None, :]).reshape(C, C * N)  # delta[a, (c, k)] = V[c, k] − V[a, k]
    if out is not None:
        return np.matmul(p, delta, out=out).reshape(len(p), C, N)
    return (p @ delta).reshape(len(p), C, N)


def array_module(a):
    """numpy, or torch for a torch tensor (the sums serve float64, mpmath object arrays and, for
    :func:`numerics.ws.softmax.softmax_lambda_sup_grad`, torch tensors under autograd)."""
    if type(a).__module__.startswith("torch"):
        import torch

        return torch
    return np


SIDES_BYTES = 512 * 2**20
"""Float64 tiles keep the two (n, C, N) side arrays when together they fit in this many bytes (n = 12 000 at
C·N = 2560), and make them per tile above it."""


class SoftmaxPairTiles:
    """The Gauss–Newton C × C blocks tr(Q_i G_ij Q_j G_ijᵀ), G_ij = Σ_d G^d F_i F_jᵀ (the u uᵀ kernel) + β_ij I,
    through Q = diag(p) S: Σ_cd p_ic p_jd (S_i F_i F_jᵀ S_jᵀ)_cd² for the u uᵀ part, (Q_i F_i)·(Q_j F_j) for the
    cross term and ⟨Q_i, Q_j⟩ for β², plus the far bilinear terms Σ G^d_ij L_i·R_j (d ≥ 2)."""

    width = 1

    def __init__(self, gg: dict, beta_const, p, V, Qflat, Xt, far, *, n: int, block: int, sqrt, center):
        if set(gg) - {"uu", "I"} or len(gg.get("uu", [])) != 1:
            raise ValueError(f"softmax kernel gg: the contraction needs one u uᵀ term and δ terms, got {sorted(gg)}")
        (self.du, self.Lu, self.Ru), = gg["uu"]
        self.beta_terms, self.beta_const = gg.get("I", []), beta_const
        self.n, self.block, self.Xt, self.far, self.Qflat = n, block, Xt, far, Qflat
        self.p, self.V, self.sqrt, self.center = p, V, sqrt, center
        C, N = V.shape
        self.C, self.N = C, N
        b = min(block, n)
        self.float64 = isinstance(Xt, np.ndarray) and Xt.dtype == np.float64
        self.tile_flops = self.cost(b, b, off_diagonal=True)[0]
        self._row: tuple | None = None  # the I side of the last tile: tasks run a row's tiles in a row
        self._bufs: dict | None = None
        self._kept: dict | None = None
        self._sq = sqrt(p) if self.float64 else None

    def cost(self, bI: int, bJ: int, *, off_diagonal: bool, kept: bool | None = None) -> tuple[float, float]:
        """(flops in matrix products, bytes streamed by the element-wise passes) of one tile of bI × bJ samples: the
        method's own account, for the bench's roofline. Products: the Gauss–Newton block Z (2 bI C · bJ C · N), the
        Gram block (2 bI bJ (M + 1)), ⟨Q_i, Q_j⟩ (2 bI bJ C²), the δ-kernel and far terms (2 bI bJ w each, both
        orientations off the diagonal) and the J side's centring (2 bJ C · C N; the I side is shared by a row).
        Passes: Z read twice (the u uᵀ sum and the diagonal cross term, which touches a cache line per (i, c, j)),
        the J side made (three (bJ, C, N) passes) unless kept, and about 16 passes over bI × bJ arrays."""
        C, N, M1 = self.C, self.N, self.Xt.shape[1]
        kept = (2 * self.n * C * N * 8 <= SIDES_BYTES) if kept is None else kept
        flops = 2.0 * bI * C * bJ * C * N + 2.0 * bI * bJ * (M1 + C * C)
        flops += sum(2.0 * bI * bJ * L.shape[1] for _, L, _ in self.beta_terms)
        flops += sum(2.0 * bI * bJ * L.shape[1] * (2 if off_diagonal else 1) for _, L, _ in self.far)
        streamed = 8.0 * bI * C * bJ * C + 64.0 * bI * C * bJ + 16 * 8.0 * bI * bJ
        if not kept:
            flops += 2.0 * bJ * C * C * N
            streamed += 3 * 8.0 * bJ * C * N
        return flops, streamed

    def _side(self, sl: slice, F, slot: str):
        """diag(√p_i) S_i V diag(F_i) for the samples of ``sl``: the left (F = L) or right (F = R) factor of the
        u uᵀ kernel. Float64 keeps both for all samples when they fit in :data:`SIDES_BYTES`, else makes them per
        tile (in buffers kept by the object, ``slot`` "row" or "col": fresh 3 MB arrays per tile cost page
        faults), so that memory stays O(n(C² + N + M) + block·C·N)."""
        p, C, N = self.p[sl], self.C, self.N
        b = p.shape[0]
        if not self.float64:
            SV = self.center(p, self.V)
            return (self.sqrt(p)[:, :, None] * SV) * F[sl][:, None, :]
        if self._bufs is None:
            rows = min(self.block, self.n)
            self._bufs = {k: np.empty(rows * C * N) for k in ("SV", "rowY", "colY")}
            self._bufs["Z"] = np.empty(rows * rows * C * C)
            if 2 * self.n * C * N * 8 <= SIDES_BYTES:  # both, once, by the same arithmetic as per tile
                self._kept = {k: np.empty((self.n, C, N)) for k in ("row", "col")}
                for a in range(0, self.n, rows):
                    r = slice(a, min(self.n, a + rows))
                    for F, k in ((self.Lu, "row"), (self.Ru, "col")):
                        self._side_f64(r, F, self._kept[k][r])
        if self._kept is not None:
            return self._kept[slot][sl]
        Y = self._bufs[slot + "Y"][:b * C * N].reshape(b, C, N)
        self._side_f64(sl, F, Y)
        return Y

    def _side_f64(self, sl: slice, F, Y) -> None:
        p, C, N = self.p[sl], self.C, self.N
        b = p.shape[0]
        SVF = self._bufs["SV"][:b * C * N].reshape(b, C, N)
        if self.center is centered:
            centered(p, self.V, out=SVF.reshape(b, C * N))
        else:
            SVF[...] = self.center(p, self.V)
        Fb = F[sl][:, None, :]
        np.multiply(self._sq[sl][:, :, None], SVF, out=Y)
        np.multiply(Y, Fb, out=Y)

    def tile(self, I: int, J: int) -> tuple:
        n, block, C, N, Xt = self.n, self.block, self.C, self.N, self.Xt
        sI, sJ = slice(I, min(I + block, n)), slice(J, min(J + block, n))
        bI, bJ = sI.stop - sI.start, sJ.stop - sJ.start
        if self._row is None or self._row[0] != I:
            self._row = (I, self._side(sI, self.Lu, "row"))
        Yl = self._row[1]
        Yr = self._side(sJ, self.Ru, "col")
        Gt = Xt[sI] @ Xt[sJ].T
        powers: dict = {}

        def gp(e):
            return powers.setdefault(e, Gt**e)

        beta = self.beta_const
        for d, L, R in self.beta_terms:
            beta = beta + gp(d) * (L[sI] @ R[sJ].T)
        if self.float64:
            Z = np.matmul(Yl.reshape(bI * C, N), Yr.reshape(bJ * C, N).T,
                          out=self._bufs["Z"][:bI * C * bJ * C].reshape(bI * C, bJ * C)).reshape(bI, C, bJ, C)
        else:
            Z = (Yl.reshape(bI * C, N) @ Yr.reshape(bJ * C, N).T).reshape(bI, C, bJ, C)
        xp = array_module(Z)
        uu = xp.einsum("icjd,icjd->ij", Z, Z)  # Σ_cd p_ic p_jd (S_i F_i F_jᵀ S_jᵀ)_cd²
        # (Q_i F_i)·(Q_j F_j) = Σ_c p_ic p_jc (S_i F_i F_jᵀ S_jᵀ)_cc: Z's diagonal, weighted by √p_ic √p_jc
        sq = self._sq if self.float64 else None
        sqI, sqJ = (sq[sI], sq[sJ]) if sq is not None else (self.sqrt(self.p[sI]), self.sqrt(self.p[sJ]))
        cross = xp.einsum("icjc,ic,jc->ij", Z, sqI, sqJ)
        qq = self.Qflat[sI] @ self.Qflat[sJ].T
        du = self.du
        blk = (gp(2 * du) * uu + 2 * gp(du) * beta * cross + beta * beta * qq).sum()
        acc = blk if I == J else 2 * blk
        for d, L, R in self.far:
            acc = acc + (L[sI] * (gp(d) @ R[sJ])).sum()
            if I != J:
                acc = acc + (L[sJ] * (gp(d).T @ R[sI])).sum()
        return (float(acc),) if self.float64 else (acc,)
