"""The float64 sample-pair sums of the binary moments as tiles (:mod:`numerics.ws.pair_tiles`).

:class:`BinaryPairTiles` holds the prepared factors of Σ_ij q_i q_j (g_i·g_j)² and of the far (p ≥ 2) bilinear
terms of :func:`numerics.ws.moments.near_terms`; ``tile(I, J)`` is one (I, J) block pair's share (both orientations,
the off-diagonal blocks of the symmetric term twice). :func:`numerics.ws.moments.build_binary_tiles` makes it from
the network and the data, in this process and on a Dask worker alike (:func:`numerics.ws.moments.binary_recipe`).
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from numerics.ws import workspace

__all__ = ["BinaryPairTiles"]


class BinaryPairTiles:
    """The float64 pair sums, with every block-sized result written into scratch buffers.

    The same terms as the generic loop (:func:`numerics.ws.moments._pair_sums`), from the same generated factors:
    g_i·g_j = Σ_p G^p ∘ (L_p R_pᵀ) from ``gg_factors`` (the factors of one power side by side; the output-bias
    constant as a column of ones in the p = 0 group), with √q folded into the rows of every factor, so that
    Σ_ij q_i q_j (g_i·g_j)² of a block is the squared Frobenius norm of S′ = diag(√q_I) S diag(√q_J)
    (q = p(1 − p) ≥ 0): one read of the block instead of squaring it in place and reading it twice. Only the
    order and the rounding of the float64 operations differ from the generic loop.

    ``take`` (from :func:`numerics.ws.workspace.workspace`) supplies the buffers; without it they are made here
    and kept by the object. Why buffers at all: on this project's 2-core EPYC (OpenBLAS, two threads, b = 256,
    quiet) ``A @ B.T`` with K = 20 ran at 9 GFLOP/s into a new 512 KB array and at 66 GFLOP/s with ``out=`` when
    timed alone.
    """

    width = 1

    def __init__(self, P, q, Xt, v, far, *, n: int, kernels: ModuleType, block: int, c_gg, take=None):
        take = take or workspace.fresh
        self.n, self.block, self.Xt, self.far = n, block, Xt, far
        groups: dict[int, list] = {}
        for p, L, R in kernels.gg_factors(P, P, v):
            groups.setdefault(p, []).append((L, R))
        if c_gg:
            groups.setdefault(0, []).append((np.full((n, 1), float(c_gg)), np.ones((n, 1))))
        sq = np.sqrt(q)[:, None]
        self.ggLR = {}
        for p, lr in sorted(groups.items()):
            width = sum(L.shape[1] for L, _ in lr)
            L, R = take(f"gg{p}L", (n, width)), take(f"gg{p}R", (n, width))
            k = 0
            for Lk, Rk in lr:
                w = Lk.shape[1]
                np.multiply(Lk, sq, out=L[:, k:k + w])
                np.multiply(Rk, sq, out=R[:, k:k + w])
                k += w
            self.ggLR[p] = (L, R)
        b2 = min(block, n) ** 2
        self.bufG, self.bufS, self.bufT = take("G", (b2,)), take("S", (b2,)), take("T", (b2,))
        self.bufGp = take("Gp", (b2,)) if far else None
        b = min(block, n)
        k = Xt.shape[1] + sum(L.shape[1] for L, _ in self.ggLR.values()) + 2 * sum(aL.shape[1] for _, aL, _ in far)
        self.tile_flops = 2.0 * b * b * k

    def tile(self, I: int, J: int) -> tuple[float]:
        n, block, Xt = self.n, self.block, self.Xt
        sI, sJ = slice(I, min(I + block, n)), slice(J, min(J + block, n))
        shape = (sI.stop - sI.start, sJ.stop - sJ.start)
        e = shape[0] * shape[1]
        G = np.matmul(Xt[sI], Xt[sJ].T, out=self.bufG[:e].reshape(shape))
        S = None
        for p, (L, R) in self.ggLR.items():
            T = np.matmul(L[sI], R[sJ].T, out=(self.bufS if S is None else self.bufT)[:e].reshape(shape))
            for _ in range(p):
                np.multiply(T, G, out=T)
            S = T if S is None else np.add(S, T, out=S)
        sym = float(np.vdot(S, S))
        acc = sym if I == J else 2 * sym
        have = 0  # the power of G now in bufGp
        for p, aL, bR in self.far:  # p >= 2 (p = 0, 1 need no pair loop)
            if have != p:
                Gp = np.multiply(G, G, out=self.bufGp[:e].reshape(shape))
                for _ in range(p - 2):
                    np.multiply(Gp, G, out=Gp)
                have = p
            acc += float(np.vdot(aL[sI], Gp @ bR[sJ]))
            if I != J:
                acc += float(np.vdot(aL[sJ], Gp.T @ bR[sI]))
        return (acc,)
