r"""Exact tr H and tr H² of the mean cross-entropy Hessian of a smooth MLP of any depth (SPEC §1, ws.deep).

Net: h₀ = x, z_l = W_l h_{l−1} + b_l, h_l = φ(z_l) for l = 1..L (L ≥ 1 hidden layers), logits f = z_{L+1} ∈ R^C.
Loss: binary cross-entropy on one logit (C = 1, y ∈ {0, 1}) or softmax cross-entropy (C ≥ 2, y ∈ 0..C−1), averaged
over the n samples. θ stacks each layer's vec W_l (row-major), then b_l, in layer order (SPEC §1); a layer without
bias has no b_l. Trace and Frobenius norm do not depend on that order.

Derivation (the second-order chain rule, checked in :mod:`proofs.ws.deep` against ``sympy.hessian``)
----------------------------------------------------------------------------------------------------------
Per sample, with p = σ(f) or softmax(f), Q = p(1−p) or diag(p) − ppᵀ and r = p − y (resp. p − e_y),
H_i = J_iᵀ Q J_i + ∇²_θ(r·f) with r held fixed. Along a direction V of θ, forward tangents dz_l, dh_l = φ′∘dz_l and
the adjoints of r·f, δ_{L+1} = r, g_l = W_{l+1}ᵀ δ_{l+1}, δ_l = φ′(z_l)∘g_l give

    Vᵀ ∇²(r·f) V = Σ_{l ≤ L} (g_l ∘ φ″(z_l))·dz_l² + 2 Σ_{l=2}^{L+1} δ_lᵀ dW_l dh_{l−1}.

So H_i = A_iᵀ M_i A_i with r = C + 2 Σ_l N_l rows of A_i: Z_l = ∂z_l/∂θ (l = 1..L+1) and R_l (l = 2..L+1; row b
has δ_l[a] at W_l[a, b], zero elsewhere); M_i holds Q on Z_{L+1}, diag(g_l∘φ″_l) on Z_l and diag(φ′_{l−1}) on the
off-diagonal blocks (Z_{l−1}, R_l) and (R_l, Z_{l−1}). With G_ij = A_i A_jᵀ:

    tr H = (1/n) Σ_i tr(M_i G_ii),        tr H² = (1/n²) Σ_{i,j} tr(M_i G_ij M_j G_ijᵀ),

and G_ij is computed without any D-vector: with u_l = (h_{l−1}, 1) (or h_{l−1} without bias), κ_l = u_{l,i}·u_{l,j},
T_{l←k} = ∂z_l/∂z_k, F_{lm} = Z_{l,i} Z_{m,j}ᵀ:

    F_{11} = κ₁ I,   F_{mm} = κ_m I + W_m diag(φ′_{m−1,i}) F_{m−1,m−1} diag(φ′_{m−1,j}) W_mᵀ,
    F_{lm} = W_l diag(φ′_{l−1,i}) F_{l−1,m} (l > m),   F_{lm} = F_{l,m−1} diag(φ′_{m−1,j}) W_mᵀ (l < m),
    Z_{l,i} R_{m,j}ᵀ = (T_{l←m,i} δ_{m,j}) h_{m−1,i}ᵀ (m ≤ l, else 0),   R_{l,i} R_{m,j}ᵀ = [l = m] (δ_{l,i}·δ_{l,j}) I.

Cost: per sample pair O(L² N³) for width N (the F blocks; one layer needs only O(N + M) per pair, see
:mod:`numerics.ws.moments`), plus O(r²) for the contraction Σ_ab (M_i G)_ab (G M_j)_ab; n(n+1)/2 pairs (the summand is
symmetric in i, j). Sample pairs run in blocks sized to a memory budget (``memory_mb``): the working set is
O(block² r²) floats, never D × D. tr H alone (:func:`deep_hessian_trace`) costs O(n L N³) without pairs.

Example:
    >>> import numpy as np
    >>> from numerics.ws.deep import deep_hessian_moments
    >>> rng = np.random.default_rng(0)
    >>> layers = [(rng.normal(size=(4, 3)), rng.normal(size=4)), (rng.normal(size=(5, 4)), rng.normal(size=5)),
    ...           (rng.normal(size=(1, 5)), rng.normal(size=1))]
    >>> X, y = rng.normal(size=(20, 3)), rng.integers(0, 2, 20)
    >>> m = deep_hessian_moments(layers, X, y, "tanh")
    >>> m.dim, m.loss, m.widths
    (47, 'binary', (3, 4, 5, 1))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
from scipy import special

from numerics.interop import to_numpy
from numerics.ws.activations import SmoothActivation, get_activation
from numerics.ws.inputs import checked_array
from numerics.ws.moments import HessianMoments
from numerics.ws.pair_tiles import Recipe, TileRunner, tiles_of
from numerics.ws.softmax import softmax_tables

__all__ = ["DeepHessianMoments", "DeepHessianTrace", "DeepTables", "pair_sums", "deep_dim", "deep_hessian_moments",
           "deep_hessian_trace", "validate_deep", "deep_layers_from_module"]

MEMORY_MB = 256


@dataclass(frozen=True)
class DeepHessianMoments(HessianMoments):
    """tr H, tr H² = ‖H‖_F² and D of the mean CE Hessian of a smooth MLP; ``.bounds`` / ``.lambda_sup`` are the
    Wolkowicz–Styan bounds. ``widths`` = (M, N_1, …, N_L, C); ``loss`` is "binary" or "softmax"; ``pairs`` the
    number of sample pairs summed and ``block`` their block size."""

    widths: tuple = ()
    loss: str = "binary"
    pairs: int = 0
    block: int = 0


@dataclass(frozen=True)
class DeepHessianTrace:
    """tr H of the mean CE Hessian of a smooth MLP (per-sample sums only) and D."""

    trace: Any
    dim: int
    n: int
    widths: tuple
    loss: str
    dps: int | None


def deep_dim(widths, biases) -> int:
    """D = Σ_l N_l N_{l−1} + Σ_l [bias_l] N_l for widths (M, N_1, …, N_L, C)."""
    return sum(widths[i + 1] * widths[i] + (widths[i + 1] if biases[i] else 0) for i in range(len(widths) - 1))


def validate_deep(layers, X, y, loss: str | None = None):
    """Check a list of (W_l, b_l) layers (b_l None for no bias), X and y; return (Ws, bs, X, y, loss)."""
    try:
        layers = list(layers)
    except TypeError as exc:
        raise ValueError("layers must be a list of (W, b) pairs, one per linear layer (b may be None)") from exc
    if len(layers) < 2:
        raise ValueError(f"an MLP needs at least one hidden layer: got {len(layers)} linear layer(s); "
                         "for a linear model the Hessian has no φ terms")
    Ws, bs = [], []
    for li, layer in enumerate(layers, 1):
        if not isinstance(layer, (tuple, list)) or len(layer) != 2:
            raise ValueError(f"layer {li} must be a (W, b) pair, got {type(layer).__name__}")
        W = checked_array(f"W{li}", layer[0], 2)
        if Ws and W.shape[1] != Ws[-1].shape[0]:
            raise ValueError(f"W{li} must have {Ws[-1].shape[0]} columns (the width of layer {li - 1}), "
                             f"got shape {W.shape}")
        if min(W.shape) < 1:
            raise ValueError(f"W{li} has an empty dimension: shape {W.shape}")
        b = None
        if layer[1] is not None:
            b = checked_array(f"b{li}", layer[1], 1)
            if b.shape != (W.shape[0],):
                raise ValueError(f"b{li} must have shape ({W.shape[0]},) to match W{li} of shape {W.shape}, "
                                 f"got {b.shape}")
        Ws.append(W)
        bs.append(b)
    X = checked_array("X", X, 2)
    if X.shape[1] != Ws[0].shape[1] or X.shape[0] < 1:
        raise ValueError(f"X must be n×{Ws[0].shape[1]} with n ≥ 1 to match W1 of shape {Ws[0].shape}, got {X.shape}")
    C = Ws[-1].shape[0]
    loss = loss or ("binary" if C == 1 else "softmax")
    if loss not in ("binary", "softmax"):
        raise ValueError(f"loss must be 'binary' or 'softmax', got {loss!r}")
    if loss == "binary" and C != 1:
        raise ValueError(f"binary cross-entropy needs one logit; the last layer has {C} outputs (use loss='softmax')")
    if loss == "softmax" and C < 2:
        raise ValueError("softmax needs C ≥ 2 logits; the last layer has 1 (use loss='binary')")
    yr = checked_array("y", y, 1)
    if yr.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {yr.shape}")
    top = 1 if loss == "binary" else C - 1
    bad = (yr != np.round(yr)) | (yr < 0) | (yr > top)
    if bad.any():
        raise ValueError(f"labels y must be integers in 0..{top} for {loss} cross-entropy, found {yr[bad][0]!r}")
    return Ws, bs, X, yr.astype(np.int64), loss


# ------------------------------------------------------------------------------------------------ tables
class DeepTables:
    """Per-sample forward and adjoint quantities of :func:`deep_hessian_moments`: float64 arrays, or object arrays
    (mpmath numbers, or SymPy expressions in :mod:`proofs.ws.deep`). ``H[l-1]`` = h_{l−1} (n, N_{l−1}), ``U[l-1]`` =
    u_l (h_{l−1} with a column of ones when layer l has a bias), ``d1[l-1]``, ``d2[l-1]`` = φ′, φ″ at z_l (l ≤ L),
    ``Q`` (n, C, C) and ``r`` (n, C) the loss's Hessian and gradient at the logits; ``zero`` is the scalar 0."""

    def __init__(self, Ws, H, U, d1, d2, Q, r, zero=0.0):
        self.Ws, self.H, self.U, self.d1, self.d2, self.Q, self.r = Ws, H, U, d1, d2, Q, r
        self.zero = zero
        self.mp = not isinstance(zero, float)
        self.L = len(Ws) - 1
        self._adjoints_and_layout([W.shape[0] for W in Ws])

    @classmethod
    def forward(cls, Ws, bs, X, y, act: SmoothActivation, loss: str, mp: bool) -> DeepTables:
        """The tables of a net at its samples, in float64 or (``mp``) mpmath at the current precision."""
        to = np.vectorize(mpmath.mpf, otypes=[object]) if mp else (lambda a: a)
        Ws = [to(W) for W in Ws]
        L = len(Ws) - 1
        n = X.shape[0]
        h = to(X)
        U, H, d1, d2 = [], [], [], []
        for li, (W, b) in enumerate(zip(Ws, bs, strict=True)):
            H.append(h)
            one = np.ones((n, 1), dtype=object if mp else float)
            if mp:
                one[:] = mpmath.mpf(1)
            U.append(np.hstack([h, one]) if b is not None else h)
            z = h @ W.T + (to(b) if b is not None else 0)
            if li == L:
                break
            P = np.vectorize(act.mp, otypes=[object, object, object])(z) if mp else act.float64(z)
            h = P[0]
            d1.append(P[1])
            d2.append(P[2])
        Q, r = _loss_tables(z, y, loss, mp)
        return cls(Ws, H, U, d1, d2, Q, r, mpmath.mpf(0) if mp else 0.0)

    def _adjoints_and_layout(self, widths):
        # adjoints of r·f: δ_{L+1} = r, g_l = W_{l+1}ᵀ δ_{l+1}, δ_l = φ′_l ∘ g_l
        self.delta = [None] * (self.L + 1)   # delta[l-1] = δ_l
        self.g = [None] * self.L              # g[l-1] = g_l
        self.delta[self.L] = self.r
        for li in range(self.L, 0, -1):
            g = self.delta[li] @ self.Ws[li]
            self.g[li - 1] = g
            self.delta[li - 1] = self.d1[li - 1] * g
        # row layout of A_i: Z_1..Z_{L+1}, then R_2..R_{L+1}
        self.zoff = np.concatenate([[0], np.cumsum(widths)]).astype(int)
        base = int(self.zoff[-1])
        self.roff = np.concatenate([[base], base + np.cumsum(widths[:-1])]).astype(int)  # R_{l+1} at roff[l-1]
        self.r_dim = base + sum(widths[:-1])
        self.widths = widths

    def mdiag_and_pairs(self):
        """md (n, r): the diagonal of M_i off the output block; w (n, r) and perm (r,): the off-diagonal
        involution Z_k ↔ R_{k+1} with weights φ′_k."""
        n = self.r.shape[0]
        dt = object if self.mp else float
        md = np.zeros((n, self.r_dim), dtype=dt)
        w = np.zeros((n, self.r_dim), dtype=dt)
        if self.mp:
            md[:] = self.zero
            w[:] = self.zero
        perm = np.arange(self.r_dim)
        for k in range(1, self.L + 1):
            zs = slice(self.zoff[k - 1], self.zoff[k])
            rs = slice(self.roff[k - 1], self.roff[k - 1] + self.widths[k - 1])
            md[:, zs] = self.g[k - 1] * self.d2[k - 1]
            w[:, zs] = self.d1[k - 1]
            w[:, rs] = self.d1[k - 1]
            perm[zs], perm[rs] = np.arange(rs.start, rs.stop), np.arange(zs.start, zs.stop)
        return md, w, perm


def _loss_tables(out, y, loss, mp):
    """Q (n, C, C) and r (n, C) of the loss at the logits, without cancellation when p saturates."""
    n, C = out.shape
    if loss == "binary":
        z = out[:, 0]
        if mp:
            p = np.array([1 / (1 + mpmath.exp(-t)) for t in z], dtype=object)
            pm = np.array([1 / (1 + mpmath.exp(t)) for t in z], dtype=object)
        else:
            p, pm = special.expit(z), special.expit(-z)
        q = p * pm
        r = np.where(y == 1, -pm, p)
        return q.reshape(n, 1, 1), r.reshape(n, 1)
    p, s, r = softmax_tables(out, y, np.vectorize(mpmath.exp, otypes=[object]) if mp else np.exp)
    Q = -p[:, :, None] * p[:, None, :]
    idx = np.arange(C)
    Q[:, idx, idx] = p * s                      # p_c(1 − p_c)
    return Q, r


# ------------------------------------------------------------------------------------------------ the Gram blocks
def _gram(tb: DeepTables, I, J):
    """G_ij = A_i A_jᵀ for i ∈ I, j ∈ J: shape (|I|, |J|, r, r)."""
    L, Ws = tb.L, tb.Ws
    bi, bj = len(I), len(J)
    dt = object if tb.mp else float
    G = np.zeros((bi, bj, tb.r_dim, tb.r_dim), dtype=dt)
    if tb.mp:
        G[...] = tb.zero
    kap = [U[I] @ U[J].T for U in tb.U]                     # κ_l (bi, bj)
    F = {}
    for m in range(1, L + 2):                                # diagonal blocks F_mm by the recursion
        Nm = Ws[m - 1].shape[0]
        eye = np.eye(Nm, dtype=int)
        Fm = kap[m - 1][:, :, None, None] * eye
        if m > 1:
            Wm = Ws[m - 1]
            inner = tb.d1[m - 2][I][:, None, :, None] * F[(m - 1, m - 1)] * tb.d1[m - 2][J][None, :, None, :]
            Fm = Fm + Wm @ inner @ Wm.T
        F[(m, m)] = Fm
    for m in range(1, L + 2):                                # off-diagonal: F_lm (l > m) and F_ml
        for li in range(m + 1, L + 2):
            Wl = Ws[li - 1]
            F[(li, m)] = Wl @ (tb.d1[li - 2][I][:, None, :, None] * F[(li - 1, m)])
            F[(m, li)] = (F[(m, li - 1)] * tb.d1[li - 2][J][None, :, None, :]) @ Wl.T
    zo = tb.zoff
    for (li, m), blk in F.items():
        G[:, :, zo[li - 1]:zo[li], zo[m - 1]:zo[m]] = blk
    # T_{l←m} δ_{m,j} for the Z–R blocks: t[l] = T_{l←m,i} δ_{m,j}, (bi, bj, N_l), by the forward recursion
    for m in range(2, L + 2):
        ro = tb.roff[m - 2]
        Nh = tb.widths[m - 2]
        dj = tb.delta[m - 1][J]
        di = tb.delta[m - 1][I]
        hi, hj = tb.H[m - 1][I], tb.H[m - 1][J]
        t = np.broadcast_to(dj[None], (bi, bj, dj.shape[1]))      # T_{m←m} δ_{m,j} = δ_{m,j}
        s = np.broadcast_to(di[:, None], (bi, bj, di.shape[1]))   # for R–Z: T_{l←m,j} δ_{m,i}
        for li in range(m, L + 2):
            if li > m:
                Wl = Ws[li - 1]
                t = (tb.d1[li - 2][I][:, None, :] * t) @ Wl.T
                s = (tb.d1[li - 2][J][None, :, :] * s) @ Wl.T
            # Z_{l,i} R_{m,j}ᵀ = t hᵢᵀ ; R_{m,i} Z_{l,j}ᵀ = h_j sᵀ
            G[:, :, zo[li - 1]:zo[li], ro:ro + Nh] = t[:, :, :, None] * hi[:, None, None, :]
            G[:, :, ro:ro + Nh, zo[li - 1]:zo[li]] = hj[None, :, :, None] * s[:, :, None, :]
        dd = di @ dj.T                                            # R_m R_mᵀ = (δ_i·δ_j) I
        idx = np.arange(ro, ro + Nh)
        G[:, :, idx, idx] = dd[:, :, None]
    return G


def _left_M(tb, md, w, perm, I, G):
    """M_i G for i ∈ I (rows)."""
    out = md[I][:, None, :, None] * G + w[I][:, None, :, None] * G[:, :, perm, :]
    zs = slice(tb.zoff[tb.L], tb.zoff[tb.L + 1])
    out[:, :, zs, :] = tb.Q[I][:, None] @ G[:, :, zs, :]
    return out


def _right_M(tb, md, w, perm, J, G):
    """G M_j for j ∈ J (columns)."""
    out = G * md[J][None, :, None, :] + G[:, :, :, perm] * w[J][None, :, None, :]
    zs = slice(tb.zoff[tb.L], tb.zoff[tb.L + 1])
    out[:, :, :, zs] = G[:, :, :, zs] @ tb.Q[J][None]
    return out


def _contract_f64(tb, md, w, I, J, G):
    """Σ_ab (M_i G)_ab (G M_j)_ab for every pair, float64, with M's structure: rows/columns are
    [Z_1..Z_L | Z_{L+1} | R_2..R_{L+1}], Z_k and R_{k+1} in the same unit order, so the off-diagonal part of M is a
    swap of two equal-sized slices (no gathered copy of G, no products with M's zeros)."""
    h = int(tb.zoff[tb.L])                     # Σ_{l ≤ L} N_l: the hidden Z rows, and the R rows
    o = slice(h, int(tb.zoff[tb.L + 1]))
    Zh, R = slice(0, h), slice(int(tb.zoff[tb.L + 1]), tb.r_dim)
    mi, wi = md[I][:, None, :h, None], w[I][:, None, :h, None]
    mj, wj = md[J][None, :, None, :h], w[J][None, :, None, :h]
    X = np.empty_like(G)
    np.multiply(mi, G[:, :, Zh], out=X[:, :, Zh])
    X[:, :, Zh] += wi * G[:, :, R]
    C = o.stop - o.start
    if C == 1:                                 # a scalar Q: a broadcast product, not stacks of 1 × 1 matmuls
        np.multiply(tb.Q[I][:, None, :, :], G[:, :, o], out=X[:, :, o])
    else:
        X[:, :, o] = np.einsum("iac,ijcb->ijab", tb.Q[I], G[:, :, o])
    np.multiply(wi, G[:, :, Zh], out=X[:, :, R])
    Y = np.empty_like(G)
    np.multiply(G[..., Zh], mj, out=Y[..., Zh])
    Y[..., Zh] += G[..., R] * wj
    if C == 1:
        np.multiply(G[..., o], tb.Q[J][None, :, :, :], out=Y[..., o])
    else:
        Y[..., o] = np.einsum("ijac,jcb->ijab", G[..., o], tb.Q[J])
    np.multiply(G[..., Zh], wj, out=Y[..., R])
    return np.einsum("ijab,ijab->ij", X, Y), X


CACHE_BYTES = 32 * 2 ** 20   # the float64 block's working set (G, M_iG, GM_j) is kept near the L3 size: at D = 1889
#                              blocks of 8 pairs ran 12% faster than the 256 MB budget's 22


def _block_for(r: int, memory_mb: float, mp: bool) -> int:
    per_pair = 4 * r * r * (8 if not mp else 200)      # G, two products and their product, bytes
    blk = max(1, int(math.isqrt(max(1, int(memory_mb * 2 ** 20 // per_pair)))))
    return blk if mp else min(blk, max(1, int(math.isqrt(CACHE_BYTES // (3 * 8 * r * r)))))


class DeepPairTiles:
    """The pair sums of :func:`pair_sums` as tiles (:mod:`numerics.ws.pair_tiles`): ``tile(I, J)`` is the block pair's
    (n · tr H share, n² · tr H² share); the tr H share is nonzero on the diagonal blocks only."""

    width = 2

    def __init__(self, tb: DeepTables, block: int):
        self.tb, self.block, self.n = tb, block, tb.r.shape[0]
        self.md, self.w, self.perm = tb.mdiag_and_pairs()
        b = min(block, self.n)
        self.tile_flops = 2.0 * b * b * tb.r_dim * tb.r_dim * 4

    def tile(self, i0: int, j0: int) -> tuple:
        tb, md, w, perm, zero = self.tb, self.md, self.w, self.perm, self.tb.zero
        I = np.arange(i0, min(self.n, i0 + self.block))
        J = np.arange(j0, min(self.n, j0 + self.block))
        G = _gram(tb, I, J)
        if tb.mp:
            X, Y = _left_M(tb, md, w, perm, I, G), _right_M(tb, md, w, perm, J, G)
            S = np.sum(X * Y, axis=(2, 3))               # tr(M_i G M_j Gᵀ) for every pair
        else:
            S, X = _contract_f64(tb, md, w, I, J, G)
        tr = zero
        if j0 == i0:
            S = np.triu(S) * 2 - np.diag(np.diag(S)) if not tb.mp else _triu2(S)
            tr = sum((np.trace(X[k, k]) for k in range(len(I))), zero)
        else:
            S = 2 * S
        tr2 = np.sum(S) if not tb.mp else sum(S.ravel().tolist(), zero)
        return (float(tr), float(tr2)) if not tb.mp else (tr, tr2)


def pair_sums(tb: DeepTables, block: int, progress=None, *, runner=None, recipe=None):
    """(tr H, tr H², pairs) from the tables: (1/n) Σ_i tr(M_i G_ii) and (1/n²) Σ_ij tr(M_i G_ij M_j G_ijᵀ) over
    blocks of sample pairs (upper triangle; the summand is symmetric in i, j). Float64 tiles run on ``runner`` (a
    :class:`~numerics.ws.pair_tiles.TileRunner`, default in this process; ``progress(done, total)`` over tiles
    when it is the default), mpmath ones in order."""
    n = tb.r.shape[0]
    tiles = DeepPairTiles(tb, block)
    if tb.mp:
        tr, tr2 = tb.zero, tb.zero
        todo = tiles_of(n, block)
        for k, (i0, j0) in enumerate(todo):
            a, b = tiles.tile(i0, j0)
            tr, tr2 = tr + a, tr2 + b
            if progress is not None:
                progress(k + 1, len(todo))
    else:
        if runner is None:
            runner = TileRunner(progress=None if progress is None else lambda d, t, *_: progress(d, t))
        tr, tr2 = runner.run(recipe, tiles)
    return tr / n, tr2 / (n * n), n * (n + 1) // 2


def build_deep_tiles(Ws, bs, X, y, act_name: str, act_expr, loss: str, block: int) -> DeepPairTiles:
    """The float64 tiles :func:`deep_hessian_moments` runs for these (validated) inputs, rebuilt on a Dask worker."""
    with np.errstate(over="ignore", under="ignore"):
        tb = DeepTables.forward(Ws, bs, X, y, SmoothActivation(act_name, act_expr), loss, mp=False)
    return DeepPairTiles(tb, block)


def deep_recipe(Ws, bs, X, y, act: SmoothActivation, loss: str, block: int) -> Recipe:
    """How a worker rebuilds the deep pair tiles."""
    return Recipe.of("deep", build_deep_tiles, list(Ws), list(bs), X, y, act.name, act.expr, loss, int(block))


def _triu2(S):
    out = S.copy()
    k = S.shape[0]
    for i in range(k):
        for j in range(k):
            out[i, j] = 0 if j < i else (S[i, j] if i == j else 2 * S[i, j])
    return out


def deep_hessian_moments(layers, X, y, activation: str | Any = "tanh", *, loss: str | None = None,
                         dps: int | None = None, block: int | None = None, memory_mb: float = MEMORY_MB,
                         progress=None, tiles=None) -> DeepHessianMoments:
    """tr H and tr H² of the mean cross-entropy Hessian of a smooth MLP, by per-sample and sample-pair sums.

    Parameters
    ----------
    layers : list of (W_l, b_l), l = 1..L+1 (L ≥ 1 hidden layers; b_l None for a layer without bias)
        W_l has shape (N_l, N_{l−1}), N_0 = M; the last layer's N_{L+1} = C is the number of logits.
    X : (n, M) array; y : (n,) integer labels (0/1 for binary, 0..C−1 for softmax)
    activation : a name ("sigmoid", "tanh", "softplus", "gelu") or a SymPy expression in one variable (every
        hidden layer uses it)
    loss : "binary" (C = 1) or "softmax" (C ≥ 2); inferred from C when omitted
    dps : evaluate the same sums in mpmath at ``dps`` digits (inputs read exactly from float64); small nets only
    block, memory_mb : sample-pair block size, or the memory budget it is chosen from (default 256 MB)
    progress : callable(done, total) over the blocks of sample pairs
    tiles : numerics.ws.pair_tiles.TileRunner, optional
        Run the float64 pair tiles on it (Dask workers, a journal to resume from; its own progress line); the
        result is bit-identical to the run without it. Not with ``dps``.
    """
    act = get_activation(activation)
    Ws, bs, X, y, loss = validate_deep(layers, X, y, loss)
    n = X.shape[0]
    widths = (Ws[0].shape[1],) + tuple(W.shape[0] for W in Ws)
    D = deep_dim(widths, [b is not None for b in bs])
    if dps is not None and tiles is not None:
        raise ValueError("tiles= runs the float64 pair sums: it cannot be combined with dps=")
    if dps is not None:
        with mpmath.workdps(int(dps) + 10):
            tb = DeepTables.forward(Ws, bs, X, y, act, loss, mp=True)
            blk = int(block or _block_for(tb.r_dim, memory_mb, True))
            tr, tr2, pairs = pair_sums(tb, blk, progress)
        with mpmath.workdps(int(dps)):
            tr, tr2 = +tr, +tr2
    else:
        with np.errstate(over="ignore", under="ignore"):
            tb = DeepTables.forward(Ws, bs, X, y, act, loss, mp=False)
            blk = int(block or _block_for(tb.r_dim, memory_mb, False))
            recipe = None if tiles is None else deep_recipe(Ws, bs, X, y, act, loss, blk)
            tr, tr2, pairs = pair_sums(tb, blk, progress, runner=tiles, recipe=recipe)
        tr, tr2 = float(tr), float(tr2)
        if not (math.isfinite(tr) and math.isfinite(tr2)):
            raise ValueError(f"float64 overflow in the moment sums (tr {tr}, tr² {tr2}); retry with dps=50")
    return DeepHessianMoments(tr, tr2, D, n, any(b is not None for b in bs), act.name, dps, "numpy" if dps is None
                              else "mpmath", None, widths, loss, pairs, blk)


def deep_hessian_trace(layers, X, y, activation: str | Any = "tanh", *, loss: str | None = None,
                       dps: int | None = None, block: int = 64) -> DeepHessianTrace:
    """tr H alone, per-sample sums only: tr(M_i G_ii) = Σ_{l ≤ L} Σ_a (g_l∘φ″_l)_a (F_ll)_aa + ⟨Q_i, F_{L+1,L+1}⟩,
    since M_i is zero on the R rows and the blocks Z_k R_{k+1}ᵀ that its off-diagonal pairs meet vanish (a layer's
    pre-activations do not depend on the next layer's weights). Only the diagonal F blocks enter, by the same
    recursion as the pairs: O(n L N³) time for width N, samples in blocks of ``block``, O(block · N²) memory."""
    act = get_activation(activation)
    Ws, bs, X, y, loss = validate_deep(layers, X, y, loss)
    n = X.shape[0]
    widths = (Ws[0].shape[1],) + tuple(W.shape[0] for W in Ws)
    D = deep_dim(widths, [b is not None for b in bs])
    ctx = mpmath.workdps(int(dps) + 10) if dps is not None else np.errstate(over="ignore", under="ignore")
    with ctx:
        tb = DeepTables.forward(Ws, bs, X, y, act, loss, mp=dps is not None)
        tr = tb.zero
        for i0 in range(0, n, block):
            I = np.arange(i0, min(n, i0 + block))
            F = None
            for m in range(1, tb.L + 2):
                kap = np.sum(tb.U[m - 1][I] * tb.U[m - 1][I], axis=1)          # κ_m(i, i)
                eye = np.eye(tb.Ws[m - 1].shape[0], dtype=int)
                Fm = kap[:, None, None] * eye
                if m > 1:
                    d = tb.d1[m - 2][I]
                    Fm = Fm + tb.Ws[m - 1] @ (d[:, :, None] * F * d[:, None, :]) @ tb.Ws[m - 1].T
                F = Fm
                diag = np.diagonal(F, axis1=1, axis2=2)
                if m <= tb.L:
                    tr = tr + np.sum(tb.g[m - 1][I] * tb.d2[m - 1][I] * diag)
                else:
                    tr = tr + np.sum(tb.Q[I] * F)
        tr = tr / n
    if dps is not None:
        with mpmath.workdps(int(dps)):
            tr = +tr
    else:
        tr = float(tr)
    return DeepHessianTrace(tr, D, n, widths, loss, dps)


def deep_layers_from_module(model):
    """(layers, activation) of an ``nn.Sequential`` of Linear layers separated by one smooth activation
    (Sigmoid, Tanh, Softplus with beta 1, GELU exact): ValueError naming the first module it cannot read."""
    import torch.nn as tnn

    names = {tnn.Sigmoid: "sigmoid", tnn.Tanh: "tanh", tnn.GELU: "gelu", tnn.Softplus: "softplus"}
    mods = list(model) if isinstance(model, tnn.Sequential) else None
    if mods is None:
        raise ValueError(f"expected an nn.Sequential of Linear layers and smooth activations, got "
                         f"{type(model).__name__}")
    layers, act = [], None
    for k, mod in enumerate(mods):
        want_linear = k % 2 == 0
        if want_linear:
            if not isinstance(mod, tnn.Linear):
                raise ValueError(f"module {k} ({type(mod).__name__}): expected Linear (layers alternate Linear, "
                                 "activation, …, Linear)")
            W = to_numpy(mod.weight)
            b = None if mod.bias is None else to_numpy(mod.bias)
            layers.append((np.asarray(W, float), None if b is None else np.asarray(b, float)))
            continue
        kind = type(mod)
        if kind not in names:
            raise ValueError(f"module {k} ({kind.__name__}): unsupported activation; supported are "
                             f"{sorted(c.__name__ for c in names)} (smooth, so that the Hessian exists)")
        if kind is tnn.GELU and getattr(mod, "approximate", "none") != "none":
            raise ValueError(f"module {k}: GELU(approximate='tanh') is not the exact GELU the suite differentiates")
        if kind is tnn.Softplus and (mod.beta != 1 or mod.threshold < 30):
            raise ValueError(f"module {k}: Softplus(beta={mod.beta}, threshold={mod.threshold}) is not log(1 + eᵗ) "
                             "(use beta=1 and threshold ≥ 30)")
        if act is not None and names[kind] != act:
            raise ValueError(f"module {k}: every hidden layer must use one activation ({act} before, "
                             f"{names[kind]} here)")
        act = names[kind]
    if len(mods) % 2 == 0 or len(layers) < 2:
        raise ValueError("the Sequential must end with a Linear layer and have at least one hidden layer")
    return layers, act
