r"""Closed-form tr H and tr H² of the mean softmax cross-entropy Hessian of an M–N–C net (SPEC §1, ws.softmax).

For z(x) = V φ(Wx + b) + c ∈ R^C and L = (1/n) Σ_i CE(y_i, softmax(z_i)), with p_i = softmax(z_i),
Q_i = diag(p_i) − p_i p_iᵀ, r_i = p_i − e_{y_i}, J_i = ∂z_i/∂θ, R_i = Σ_a r_ia ∇²z_ia and the C × C logit
Gram G_ij = J_i J_jᵀ:

.. math::

    \operatorname{tr} H = \frac1n \sum_i \langle Q_i, G_{ii}\rangle + \operatorname{tr} R_i, \qquad
    \operatorname{tr} H^2 = \frac1{n^2}\sum_{i,j} \operatorname{tr}(Q_i G_{ij} Q_j G_{ij}^\top)
        + 2\langle Q_i, J_i R_j J_i^\top\rangle + \operatorname{tr}(R_i R_j).

The block kernels (per hidden unit k, u_k = V[:, k]) are *generated* from ``proofs/ws/softmax.py`` into
``numerics/_derived/ws_softmax.py`` as coefficients of C × C tensors (δ_ab, u_a u_b, u_a r_b + r_a u_b, …).
This module contracts them with Q through the identities the derivation proves: with S = I − 1pᵀ,
Q = diag(p) S, uᵀQu = Σ_c p_c (Su)_c² and tr(Q_i A Q_j Aᵀ) = Σ_cd p_ic p_jd (S_i A S_jᵀ)_cd². (Su)_c is
evaluated as Σ_a p_a (u_c − u_a), and 1 − p_c as Σ_{a≠c} p_a, so nothing cancels when p saturates or V has
a common row component (the null direction of Q).

Cost: O(n² C² N + n² M) for the sample pairs (one (block·C × N)·(N × block·C) product per block pair for
the Gauss–Newton C × C blocks; every other pair term is O(n²(M + N)) or, when linear in x̃_i·x̃_j, O(n M N C)
without a pair loop), and O(n C² N) per sample. Sample pairs run in blocks (upper triangle), so working memory
is O(block² C² + n C N). No D × D matrix is formed.

Example:
    >>> import numpy as np
    >>> from numerics.moments import softmax_hessian_moments
    >>> rng = np.random.default_rng(0)
    >>> W, b, V, c = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(5, 4)), rng.normal(size=5)
    >>> X, y = rng.normal(size=(30, 3)), rng.integers(0, 5, 30)
    >>> m = softmax_hessian_moments(W, b, V, c, X, y, "tanh")
    >>> m.dim, m.classes
    (41, 5)
    >>> bool(m.bounds.lmax_upper >= m.trace / m.dim)
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import mpmath
import numpy as np

from numerics._derived import ws_softmax as softmax_kernels
from numerics.ws import workspace
from numerics.ws.activations import SmoothActivation, get_activation
from numerics.ws.inputs import softmax_dim, validate_softmax_net
from numerics.ws.moments import HessianMoments
from numerics.ws.pair_tiles import ArrayFile, Recipe, Remapped, TileRunner, tiles_of
from numerics.ws.softmax_tiles import SoftmaxPairTiles, array_module, centered
from numerics.ws.trace_only import row_blocks, trace_of

__all__ = ["SoftmaxHessianMoments", "softmax_dim", "softmax_hessian_moments", "softmax_tables", "validate_softmax_net",
           "SoftmaxHessianTrace", "softmax_hessian_trace"]


@dataclass(frozen=True)
class SoftmaxHessianMoments(HessianMoments):
    """tr H, tr H² = ‖H‖_F² and D of the mean softmax-CE Hessian of an M–N–C net; ``.bounds`` and
    ``.lambda_sup`` are the Wolkowicz–Styan bounds of :class:`~numerics.ws.moments.HessianMoments`."""

    classes: int = 2


# ------------------------------------------------------------------------------------------------ tables
def softmax_tables(Zl, y, exp):
    """p, the complements s_c = Σ_{a≠c} p_a (= 1 − p_c without cancellation) and r = p − e_y."""
    n, C = Zl.shape
    top = Zl.max(axis=1)
    e = exp(Zl - top[:, None])
    p = e / e.sum(axis=1)[:, None]
    off = 1 - np.eye(C, dtype=np.int64)
    s = p @ off if p.dtype != object else np.array([[sum(p[i, a] for a in range(C) if a != cc) for cc in range(C)]
                                                    for i in range(n)], dtype=object).reshape(n, C)
    r = p.copy()
    r[np.arange(n), y] = -s[np.arange(n), y]
    return p, s, r


def _tables(W, b, V, c, X, y, act: SmoothActivation, mp: bool):
    if mp:
        to = np.vectorize(mpmath.mpf, otypes=[object])
        W, V, X = to(W), to(V), to(X)
        A = X @ W.T + (to(b) if b is not None else 0)
        P = np.vectorize(act.mp, otypes=[object, object, object])(A)
        Zl = P[0] @ V.T + (to(c) if c is not None else 0)
        exp = np.vectorize(mpmath.exp, otypes=[object])
        sqrt = np.vectorize(mpmath.sqrt, otypes=[object])
    else:
        A = X @ W.T + (b if b is not None else 0.0)
        P = act.float64(A)
        Zl = P[0] @ V.T + (c if c is not None else 0.0)
        exp, sqrt = np.exp, np.sqrt
    p, s, r = softmax_tables(Zl, y, exp)
    return P, p, s, r, V, X, sqrt


# ------------------------------------------------------------------------------------------------ sums
def _equal(a, b) -> bool:
    return bool(array_module(a).equal(a, b)) if array_module(a) is not np else bool(np.array_equal(a, b))


def _moments(P, p, s, r, V, Xt, *, n: int, kernels: ModuleType, block: int, bias: bool, sqrt, center=centered):
    """(tr H, tr H²) in any array type (mpmath, arb, torch under autograd): the terms of :func:`prepared`, its tiles
    summed in order in their own arithmetic. Float64 runs the same tiles through :func:`build_softmax_tiles`."""
    trace, acc, tiles = prepared(P, p, s, r, V, Xt, n=n, kernels=kernels, block=block, bias=bias, sqrt=sqrt,
                                 center=center)
    pairs = 0
    for I, J in tiles_of(n, block):
        pairs = pairs + tiles.tile(I, J)[0]
    return trace, (acc + pairs) / (n * n)


CHUNK_ELEMENTS = 2**23
"""Float64 per-sample work runs in chunks of samples with at most this many (rows × C × N) elements (64 MB per
array): the near terms of full MNIST (n = 60 000, C = 10, N = 256) took ~1.2 GB per (n, C, N) array before."""


def prepared(P, p, s, r, V, Xt, *, n: int, kernels: ModuleType, block: int, bias: bool, sqrt, center=centered,
             chunk: int | None = None, near: bool = True):
    """(tr H, the pair terms linear or constant in x̃_i·x̃_j, summed without a pair loop, the
    :class:`~numerics.ws.softmax_tiles.SoftmaxPairTiles` of the rest).

    The per-sample work runs over chunks of ``chunk`` samples (default: all of them, or :data:`CHUNK_ELEMENTS` for
    float64), so that memory is O(chunk·C·N + n(C² + N + M)) and the tiles keep no (n, C, N) array. ``near=False``
    skips the near terms (a Dask worker's panels need the tiles alone: their d = 1 products cost as much as ~10
    tiles per block) and returns 0 for them."""
    C, N = V.shape
    if chunk is None:
        f64 = isinstance(p, np.ndarray) and p.dtype == np.float64
        chunk = max(1, CHUNK_ELEMENTS // (C * N)) if f64 else n
    st = NearSums()
    far_parts = st.add(P, p, s, r, V, Xt, kernels=kernels, bias=bias, center=center, chunk=chunk, near=near,
                       far=True)
    trace, acc = st.trace, st.near()
    far = []
    for k in sorted(far_parts):
        d, Ls, Rs = far_parts[k]
        L, R = (Ls[0], Rs[0]) if len(Ls) == 1 else (np.concatenate(Ls), np.concatenate(Rs))
        for f in far:  # the same right factor (r·u ∘ φ″ in JRJ and RR): add the left ones
            if f[0] == d and f[2].shape == R.shape and (f[2] is R or _equal(f[2], R)):
                f[1] = f[1] + L
                break
        else:
            far.append([d, L, R])
    Qfull = -(p[:, :, None] * p[:, None, :])
    idx = list(range(C))
    Qfull[:, idx, idx] = p * s
    const = kernels.OUTPUT_BIAS if bias else {k: {} for k in kernels.OUTPUT_BIAS}
    tiles = SoftmaxPairTiles(kernels.gg_factors(P, P), const.get("gg", {}).get("I", 0), p, V, Qfull.reshape(n, C * C),
                             Xt, far, n=n, block=block, sqrt=sqrt, center=center)
    return trace / n, acc, tiles


class NearSums:
    """n · tr H and the factor sums of the near pair terms, accumulated chunk by chunk in sample order: rows added
    in several calls give the bits of one call over all of them (the same additions in the same order)."""

    def __init__(self):
        self.trace = 0
        self.sums: dict[int, list] = {}  # bilinear term k with d = 0 or 1: its two accumulated factors

    def add(self, P, p, s, r, V, Xt, *, kernels, bias: bool, center, chunk: int, near: bool = True,
            far: bool = False) -> dict[int, tuple]:
        """Accumulate these rows; with ``far``, return the far (d ≥ 2) factors' chunks {k: (d, [L], [R])}."""
        const = kernels.OUTPUT_BIAS if bias else {k: {} for k in kernels.OUTPUT_BIAS}
        far_parts: dict[int, tuple] = {}
        for c0 in range(0, p.shape[0], chunk):
            sl = slice(c0, min(p.shape[0], c0 + chunk))
            t, bil = _per_sample(tuple(a[sl] for a in P), p[sl], s[sl], r[sl], V, Xt[sl], kernels, const, center)
            self.trace = self.trace + t
            for k, (d, L, R) in enumerate(bil):
                if d <= 1 and not near:
                    continue
                if d == 0:
                    got = (L.sum(axis=0), R.sum(axis=0))
                elif d == 1:
                    got = (Xt[sl].T @ L, Xt[sl].T @ R)
                else:
                    if far:
                        far_parts.setdefault(k, (d, [], []))
                        far_parts[k][1].append(L)
                        far_parts[k][2].append(R)
                    continue
                got0 = self.sums.get(k)
                self.sums[k] = list(got) if got0 is None else [got0[0] + got[0], got0[1] + got[1]]
        return far_parts

    def near(self):
        acc = 0
        for k in sorted(self.sums):
            acc = acc + (self.sums[k][0] * self.sums[k][1]).sum()
        return acc


def _per_sample(P, p, s, r, V, Xt, kernels, const, center):
    """n · (tr H of these samples) and the bilinear pair factors [(d, L, R)] of their rows."""
    n, (C, N) = p.shape[0], V.shape
    SV = center(p, V)  # (n, C, N)
    QV = p[:, :, None] * SV  # Q_i u_k = diag(p_i) S_i u_k
    qV = (QV * SV).sum(axis=1)  # u_kᵀ Q_i u_k = Σ_c p_ic (S_i u_k)_c²
    rV = r @ V  # r_i · u_k
    trQ = (p * s).sum(axis=1)
    gd = (Xt * Xt).sum(axis=1)

    # tr H = (1/n) Σ_i ⟨Q_i, G_ii⟩ + tr R_i
    diag_weight = {"I": trQ[:, None], "uu": qV, "ru": rV}
    trace = 0
    for name in ("g2", "trR"):
        for bn, terms in getattr(kernels, f"{name}_factors")(P).items():
            if bn not in diag_weight:
                raise ValueError(f"softmax kernel {name}: no contraction for the tensor {bn!r}")
            for d, L in terms:
                trace = trace + ((L * diag_weight[bn]).sum(axis=1) * gd**d).sum()
        for bn, k in const.get(name, {}).items():  # the output bias: a constant tensor per sample
            if bn != "I":
                raise ValueError(f"softmax output bias {name}: no contraction for the tensor {bn!r}")
            trace = trace + k * trQ.sum()

    # bilinear pair terms Σ_ij G_ij^d L_i·R_j from 2⟨Q_i, J_i R_j J_iᵀ⟩ and tr(R_i R_j)
    def with_classes(L, M):  # (n, N) ∘ (n, C, N) -> (n, C·N)
        return (L[:, None, :] * M).reshape(n, C * N)

    rr = r[:, :, None]  # r_i along the classes, broadcast over the units by with_classes
    bil = []
    for bn, terms in kernels.JRJ_factors(P, P).items():
        for d, L, R in terms:
            if bn == "uu_ru":  # ⟨Q_i, u uᵀ⟩ (r_j·u)
                bil.append((d, 2 * L * qV, R * rV))
            elif bn == "ur_ru":  # ⟨Q_i, u r_jᵀ + r_j uᵀ⟩ = 2 (Q_i u)·r_j
                bil.append((d, 4 * with_classes(L, QV), with_classes(R, rr)))
            else:
                raise ValueError(f"softmax kernel JRJ: no contraction for the tensor {bn!r}")
    for bn, terms in kernels.RR_factors(P, P).items():
        for d, L, R in terms:
            if bn == "ru_ru":
                bil.append((d, L * rV, R * rV))
            elif bn == "rr":
                bil.append((d, with_classes(L, rr), with_classes(R, rr)))
            else:
                raise ValueError(f"softmax kernel RR: no contraction for the tensor {bn!r}")
    return trace, bil


def build_softmax_tiles(W, b, V, c, X, y, act_name: str, act_expr, bias: bool, block: int, *,
                        kernels: ModuleType = softmax_kernels, center=centered, rows=None):
    """The float64 tiles of :func:`softmax_hessian_moments` for these (validated) inputs, with ``.trace`` (tr H) and
    ``.near`` (n² · the pair terms summed without a pair loop): one function for this process and for a Dask worker
    (:func:`softmax_recipe`), so that both run the same arithmetic. Overflow raises FloatingPointError.

    Every per-sample table is made block by block (``block`` samples at a time, from sample 0), so that ``rows``
    — sample ranges of whole blocks — makes the tiles of those samples alone, bit for bit those of the whole problem,
    as a :class:`~numerics.ws.pair_tiles.Remapped` addressed by the whole problem's block starts (a Dask worker's
    panels: memory O(panel) instead of O(n)). ``X`` may be an :class:`~numerics.ws.pair_tiles.ArrayFile`, read by
    row ranges."""
    n_all = X.shape[0]
    if isinstance(X, ArrayFile):
        X = X.read(rows)
    elif rows is not None:
        X = np.concatenate([X[a:e] for a, e in rows])
    if rows is not None:
        y = np.concatenate([np.asarray(y)[a:e] for a, e in rows])
    n = X.shape[0]
    P, p, s, r, Vt, Xt, sqrt = _block_tables(W, b, V, c, X, y, SmoothActivation(act_name, act_expr), bias, block)
    with np.errstate(over="raise", invalid="raise"):
        trace, near, tiles = prepared(P, p, s, r, Vt, Xt, n=n, kernels=kernels, block=block, bias=bias, sqrt=sqrt,
                                      center=center, chunk=block, near=rows is None)
    tiles.trace, tiles.near = trace, near
    return tiles if rows is None else Remapped(tiles, rows, n_all)


def _block_tables(W, b, V, c, X, y, act: SmoothActivation, bias: bool, block: int):
    """The float64 per-sample tables, made ``block`` samples at a time (so that any whole blocks give the same
    bits alone), and X̃ = [X | 1]."""
    parts = [_tables(W, b, V, c, X[a:a + block], y[a:a + block], act, mp=False) for a in range(0, X.shape[0], block)]
    P = tuple(np.concatenate([q[0][k] for q in parts]) for k in range(len(parts[0][0])))
    p, s, r = (np.concatenate([q[i] for q in parts]) for i in (1, 2, 3))
    Xt = np.hstack([X, np.ones((X.shape[0], 1))]) if bias else X
    return P, p, s, r, parts[0][4], Xt, parts[0][6]


GROUP_BLOCKS = 64
"""Blocks per pass of :func:`streamed_near_terms`: its memory is that of GROUP_BLOCKS blocks' tables."""


@dataclass(frozen=True)
class TileShape:
    """What a :class:`~numerics.ws.pair_tiles.TileRunner` needs to plan a pair sum whose tiles are built per task."""

    n: int
    block: int
    tile_flops: float
    width: int = 1


def streamed_near_terms(W, b, V, c, X, y, act: SmoothActivation, bias: bool, block: int, *,
                        kernels: ModuleType = softmax_kernels, center=centered) -> tuple[float, Any, TileShape]:
    """(tr H, the near pair terms, the tiles' shape) of :func:`build_softmax_tiles` without keeping any per-sample
    array: GROUP_BLOCKS blocks at a time (``X`` an array or an :class:`~numerics.ws.pair_tiles.ArrayFile`), the
    same additions in the same order, so the same bits. The client of a panel run needs no more: its workers make
    the tiles' tables."""
    n = X.shape[0]
    st = NearSums()
    step = GROUP_BLOCKS * block
    with np.errstate(over="raise", invalid="raise"):
        for g0 in range(0, n, step):
            rows = ((g0, min(n, g0 + step)),)
            Xg = X.read(rows) if isinstance(X, ArrayFile) else X[g0:g0 + step]
            P, p, s, r, Vt, Xt, sqrt = _block_tables(W, b, V, c, Xg, np.asarray(y)[g0:g0 + step], act, bias, block)
            st.add(P, p, s, r, Vt, Xt, kernels=kernels, bias=bias, center=center, chunk=block)
    first = build_softmax_tiles(W, b, V, c, X, y, act.name, act.expr, bias, block, kernels=kernels, center=center,
                                rows=((0, min(n, block)),))
    return st.trace / n, st.near(), TileShape(n, block, first.tile_flops)


def softmax_recipe(W, b, V, c, X, y, act: SmoothActivation, bias: bool, block: int) -> Recipe:
    """How a worker rebuilds the softmax pair tiles: by panels, each task making the tables of its own samples
    (``X`` an array, or an :class:`~numerics.ws.pair_tiles.ArrayFile` that the workers read by rows)."""
    return Recipe.of("softmax", build_softmax_tiles, W, b, V, c, X, y, act.name, act.expr, bias, int(block),
                     panels=(int(X.shape[0]), int(block)))


def default_block(C: int) -> int:
    """Samples per block of the softmax pair sums for C classes (block·C ≈ 1536)."""
    return int(max(8, min(256, 1536 // C)))  # block·C ≈ 1536: the Gauss–Newton product stays ~20 MB


def softmax_hessian_moments(W, b, V, c, X, y, activation: str | Any = "tanh", *, bias: bool = True,
                            dps: int | None = None, block: int | None = None, tiles=None,
                            _kernels: ModuleType = softmax_kernels, _center=centered,
                            _dps_engine: str = "arb") -> SoftmaxHessianMoments:
    """tr H and tr H² of the mean softmax cross-entropy Hessian, without forming H.

    Parameters
    ----------
    W : (N, M) array; b : (N,) array; V : (C, N) array, C >= 2; c : (C,) array
        The net z(x) = V φ(Wx + b) + c ∈ R^C. With ``bias=False`` (D = N(M+C)) pass ``b = c = None``.
        Torch tensors are accepted (read exactly, any dtype/device/requires_grad).
    X : (n, M) array; y : (n,) integer labels in 0..C−1
    activation : "sigmoid" | "tanh" | "softplus" | "gelu" | sympy.Expr in one variable
    dps : int, optional
        Evaluate the same closed form to ``dps`` digits (inputs converted exactly from float64), in arb balls with
        guard bits raised until both results fix ``dps`` digits; ``.radius`` bounds their errors (None for a SymPy
        activation), and wider balls come with a :class:`~numerics.ws.moments.PrecisionWarning`.
        ``_dps_engine="mpmath"`` runs the former fixed-precision mpmath object arrays (uncertified).
    block : int, optional
        Samples per block of the pair sums (memory O(block² C²)); default about 1536 / C.
    tiles : numerics.ws.pair_tiles.TileRunner, optional
        Run the (float64) sample-pair tiles on it: Dask workers, a journal to resume from, a progress line. The
        result is bit-identical to the run without it (the same tile values, reduced by ``math.fsum``). Each task
        makes the per-sample tables of its own two panels of samples, so a worker's memory does not grow with n;
        give ``X`` as ``np.load(path, mmap_mode="r")`` (a float64 ``.npy`` file the workers can read) and they read
        those rows from the file instead of receiving all of X.

    Returns
    -------
    SoftmaxHessianMoments with ``.trace``, ``.trace_sq``, ``.dim``, ``.classes`` and the WS ``.bounds``.
    """
    act = get_activation(activation)
    X_file = ArrayFile.of(X) if tiles is not None and isinstance(X, np.memmap) else None
    W, b, V, c, X, y = validate_softmax_net(W, b, V, c, X, y, bias=bias)
    n, (N, M), C = X.shape[0], W.shape, V.shape[0]
    block = default_block(C) if block is None else block
    if not (isinstance(block, int | np.integer) and block >= 1):
        raise ValueError(f"block must be a positive integer, got {block!r}")
    if dps is not None and not (isinstance(dps, int | np.integer) and dps >= 15):
        raise ValueError(f"dps must be an integer >= 15 (mpmath digits), got {dps!r}")
    if _dps_engine not in ("arb", "mpmath"):
        raise ValueError(f"_dps_engine must be 'arb' or 'mpmath', got {_dps_engine!r}")
    radius = None
    if tiles is not None and (dps is not None or _kernels is not softmax_kernels or _center is not centered):
        raise ValueError("tiles= runs the float64 pair sums of the package's own kernels: not with dps= or _kernels=")
    kw = dict(n=n, kernels=_kernels, block=int(block), bias=bias, center=_center)
    if dps is None:
        Xr = X if X_file is None else X_file
        recipe = None if tiles is None else softmax_recipe(W, b, V, c, Xr, y, act, bias, int(block))
        try:
            if recipe is not None and tiles.panels(recipe):   # the workers make the tables: keep none here
                trace, near, tl = streamed_near_terms(W, b, V, c, Xr, y, act, bias, int(block))
            else:
                tl = build_softmax_tiles(W, b, V, c, X, y, act.name, act.expr, bias, int(block), kernels=_kernels,
                                         center=_center)
                trace, near = tl.trace, tl.near
            with np.errstate(over="raise", invalid="raise"):
                (pairs,) = (tiles or TileRunner()).run(recipe, tl)
        except FloatingPointError as exc:
            raise ValueError(f"float64 overflow in the moment sums ({exc}); retry with dps=50") from exc
        tr, tr2 = float(trace), float((near + pairs) / (n * n))
        if not (math.isfinite(tr) and math.isfinite(tr2)):  # Dask workers do not raise on overflow: say it here
            raise ValueError(f"float64 overflow in the moment sums (tr {tr}, tr² {tr2}); retry with dps=50")
    elif _dps_engine == "mpmath":
        with mpmath.workdps(int(dps)):
            P, p, s, r, Vt, Xm, sqrt = _tables(W, b, V, c, X, y, act, mp=True)
            Xt = np.hstack([Xm, np.full((n, 1), mpmath.mpf(1), dtype=object)]) if bias else Xm
            tr, tr2 = _moments(P, p, s, r, Vt, Xt, sqrt=sqrt, **kw)
            tr, tr2 = +mpmath.mpf(tr), +mpmath.mpf(tr2)
    else:
        tr, tr2, radius = _moments_dps_arb(W, b, V, c, X, y, act, int(dps), **kw)
    return SoftmaxHessianMoments(tr, tr2, softmax_dim(N, M, C, bias), n, bias, act.name, dps,
                                 "numpy" if dps is None else _dps_engine, radius, classes=C)


def _moments_dps_arb(W, b, V, c, X, y, act: SmoothActivation, dps: int, *, n: int, bias: bool, **kw):
    """(tr H, tr H², radius) of the ``dps=`` path in arb balls, as :func:`numerics.ws.moments._moments_dps_arb` for
    BCE: the same closed form on ArbArrays (unit tables and softmax enclosures from the float64 inputs converted
    exactly), the guard bits doubled until both balls fix ``dps`` digits (at most ``DPS_MAX_DOUBLINGS`` times);
    wider balls are returned with their radii and a :class:`PrecisionWarning`, never as ``dps`` digits. Found by
    the proved confirmation of ws.softmax: GELU, no biases, equal samples at pre-activation −27 and labels balanced
    over the classes make Σ_i r_i cancel to ~160 digits, and the former fixed-precision mpmath path returned tr H
    6.10e-295 against the exact 8.94e-295."""
    from flint import arb

    from numerics.ws import arb_balls
    from numerics.ws.moments import DPS_MAX_DOUBLINGS, rounded_moments

    exp = np.frompyfunc(lambda t: t.exp(), 1, 1)
    sqrt = np.frompyfunc(lambda t: t.sqrt(), 1, 1)

    def evaluate():
        P, Xa, rigorous = arb_balls.unit_tables(W, b, X, act, dps)
        Va = arb_balls.arb_array(V)
        Zl = P[0] @ Va.T + (arb_balls.arb_array(c) if c is not None else 0)
        p, s, r = (np.asarray(t, dtype=object).view(arb_balls.ArbArray) for t in softmax_tables(Zl, y, exp))
        Xt = arb_balls.augmented(Xa, bias)
        tr, tr2 = _moments(P, p, s, r, Va, Xt, n=n, bias=bias, sqrt=sqrt, **kw)
        return (arb(tr), arb(tr2)), rigorous

    ((btr, btr2), rigorous), _ = arb_balls.until_accurate(evaluate, dps, max_doublings=DPS_MAX_DOUBLINGS)
    if not (btr.is_finite() and btr2.is_finite()):
        raise ValueError(f"dps={dps}: the arb balls of the softmax moments are not finite (units saturated beyond "
                         "arb's exponent range); retry with _dps_engine='mpmath' (uncertified)")
    return rounded_moments(btr, btr2, dps, rigorous, "the softmax (tr H, tr H²)")


@dataclass(frozen=True)
class SoftmaxLambdaSupGrad:
    """λ_sup of the softmax CE Hessian and its gradient with respect to (W, b, V, c), shaped like the inputs."""

    lambda_sup: float
    W: np.ndarray
    b: np.ndarray | None
    V: np.ndarray
    c: np.ndarray | None

    def flat(self) -> np.ndarray:
        """The gradient as one vector in the θ order (vec W row-major, b, vec V row-major, c)."""
        parts = [self.W.ravel()] + ([self.b] if self.b is not None else []) + [self.V.ravel()]
        return np.concatenate(parts + ([self.c] if self.c is not None else []))


def softmax_lambda_sup_grad(W, b, V, c, X, y, activation: str | Any = "tanh", *, bias: bool = True,
                            block: int | None = None) -> SoftmaxLambdaSupGrad:
    r"""∇_θ λ_sup for softmax cross-entropy, λ_sup = μ + √(D−1)σ, the multi-class counterpart of
    :func:`numerics.ws.lambda_sup_grad`: the same closed-form sums as :func:`softmax_hessian_moments`, on torch
    float64 tensors, differentiated in reverse mode. Cost O(n²C²N + n²M) like the forward pass; no D×D matrix."""
    import torch

    act = get_activation(activation)
    W, b, V, c, X, y = validate_softmax_net(W, b, V, c, X, y, bias=bias)
    C = V.shape[0]
    block = default_block(C) if block is None else block
    if not (isinstance(block, int | np.integer) and block >= 1):
        raise ValueError(f"block must be a positive integer, got {block!r}")
    f64 = dict(dtype=torch.float64)
    Wt, Vt = torch.tensor(W, **f64, requires_grad=True), torch.tensor(V, **f64, requires_grad=True)
    bt = torch.tensor(b, **f64, requires_grad=True) if bias else None
    ct = torch.tensor(c, **f64, requires_grad=True) if bias else None
    lam = softmax_lambda_sup_tensor(Wt, bt, Vt, ct, torch.tensor(X, **f64), y, act, block=block)
    leaves = [Wt, Vt] + ([bt, ct] if bias else [])
    grads = torch.autograd.grad(lam, leaves)
    gb, gc = (grads[2].numpy(), grads[3].numpy()) if bias else (None, None)
    return SoftmaxLambdaSupGrad(float(lam.detach()), grads[0].numpy(), gb, grads[1].numpy(), gc)


def softmax_lambda_sup_tensor(Wt, bt, Vt, ct, Xt, y, act: SmoothActivation, *, block: int | None = None):
    """λ_sup of the mean softmax-CE Hessian as a torch float64 scalar, differentiable in (Wt, bt, Vt, ct) (bt, ct
    None: no biases); the closed form of :func:`softmax_hessian_moments` on tensors. Inputs already validated."""
    import torch

    block = default_block(Vt.shape[0]) if block is None else int(block)
    f64 = dict(dtype=torch.float64)
    bias = bt is not None
    n, (N, M), C = Xt.shape[0], Wt.shape, Vt.shape[0]
    P = act.torch_tables(Xt @ Wt.T + (bt if bias else 0))
    Zl = P[0] @ Vt.T + (ct if bias else 0)
    p = torch.softmax(Zl, dim=1)
    off = 1 - torch.eye(C, **f64)
    s = p @ off  # Σ_{a≠c} p_a, as the float64 path computes it
    rows = torch.arange(n)
    yt = torch.as_tensor(y, dtype=torch.long)
    r = p.clone()
    r[rows, yt] = -s[rows, yt]
    Xa = torch.cat([Xt, torch.ones(n, 1, **f64)], dim=1) if bias else Xt
    tr, tr2 = _moments(P, p, s, r, Vt, Xa, n=n, kernels=softmax_kernels, block=int(block), bias=bias,
                       sqrt=torch.sqrt, center=centered)
    D = softmax_dim(N, M, C, bias)
    m = tr / D
    var = tr2 / D - m * m
    if not float(var.detach()) > 0:
        raise ValueError("σ = 0 (H is a multiple of the identity): λ_sup = μ + √(D−1)σ is not differentiable")
    return m + (D - 1) ** 0.5 * torch.sqrt(var)


# ------------------------------------------------------------------------------------------------ tr H alone
@dataclass(frozen=True)
class SoftmaxHessianTrace:
    """tr H of the mean softmax CE Hessian, its diagonal in the θ order (vec W, b, vec V, c; row-major) and D."""

    trace: Any
    diagonal: np.ndarray
    dim: int
    n: int
    classes: int
    bias: bool
    dps: int | None = None


def _uQu(p, V):
    """u_lᵀ Q_i u_l = Σ_c p_ic (S_i u_l)_c² for every sample and unit (n × N), centred (no cancellation). Float64
    runs over chunks of samples in one kept (rows, C, N) buffer: at n = 5000, C = 10, N = 256 the whole (n, C, N)
    product was three 102 MB temporaries and 6 620 fresh pages a call."""
    n, (C, N) = p.shape[0], V.shape
    if not (isinstance(p, np.ndarray) and p.dtype == np.float64):
        SV = centered(p, V)
        return (p[:, :, None] * SV * SV).sum(axis=1)
    rows = max(1, min(n, CHUNK_ELEMENTS // 16 // (C * N)))
    out, buf = np.empty((n, N)), np.empty(rows * C * N)
    for a in range(0, n, rows):
        pc = p[a:a + rows]
        SV = centered(pc, V, out=buf[:len(pc) * C * N].reshape(len(pc), C * N))
        np.multiply(SV, SV, out=SV)
        np.multiply(SV, pc[:, :, None], out=SV)
        SV.sum(axis=1, out=out[a:a + rows])
    return out


def _trace_block(W, b, V, c, X, y, act, mp: bool):
    """One block's per-sample tables for :func:`softmax_hessian_trace`: A (rows × N, the W and b diagonal weights),
    φ (rows × N), p_ik(1 − p_ik) (rows × C) and X as the tables hold it."""
    P, p, s, r, Vt, Xt, _ = _tables(W, b, V, c, X, y, act, mp)
    phi, d1, d2 = P[0], P[1], P[2]
    A = d1 * d1 * _uQu(p, Vt) + d2 * (r @ Vt)                 # u_lᵀ Q_i u_l φ′² + (r_i·u_l) φ″
    return A, phi, p * s, Xt


def softmax_hessian_trace(W, b, V, c, X, y, activation: str | Any = "tanh", *, bias: bool = True,
                          dps: int | None = None, rows: int | None = None) -> SoftmaxHessianTrace:
    r"""tr H and diag H of the mean softmax cross-entropy Hessian in O(n·N·(M + C)) time, no sample pairs.

    Each diagonal entry is a per-sample sum (a_il = w_l·x_i + b_l, h = φ(a), u_l = V[:, l], Q_i = diag(p_i) −
    p_ip_iᵀ, r_i = p_i − e_{y_i}; ∂z/∂W_lj = u_l φ′(a_l) x_j, ∂²z/∂W_lj² = u_l φ″(a_l) x_j²):

    .. math::
        H_{W_{lj}W_{lj}} = \tfrac1n\sum_i x_{ij}^2 A_{il},\quad A_{il} = \varphi'(a_{il})^2\,u_l^\top Q_i u_l
            + \varphi''(a_{il})\, r_i\cdot u_l,\qquad H_{b_lb_l} = \tfrac1n\sum_i A_{il},

    .. math::
        H_{V_{kl}V_{kl}} = \tfrac1n\sum_i p_{ik}(1 - p_{ik})\,h_{il}^2,\qquad
        H_{c_kc_k} = \tfrac1n\sum_i p_{ik}(1-p_{ik}),

    with u_lᵀQ_iu_l = Σ_c p_ic (S_i u_l)_c² and 1 − p_ik = Σ_{a≠k} p_ia, the cancellation-free forms of
    :func:`softmax_hessian_moments` (same tables; ``dps`` digits in mpmath). Checked against the diagonal of
    torch.func's dense Hessian and against :func:`softmax_hessian_moments`' trace (``tests/test_ws_trace_only.py``).
    Float64 runs over blocks of ``rows`` samples (default :func:`numerics.ws.trace_only.row_blocks`'), so its
    working memory does not grow with n.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> W, b, V, c = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(5, 4)), rng.normal(size=5)
        >>> X, y = rng.normal(size=(30, 3)), rng.integers(0, 5, 30)
        >>> t = softmax_hessian_trace(W, b, V, c, X, y, "tanh")
        >>> bool(abs(t.trace - softmax_hessian_moments(W, b, V, c, X, y, "tanh").trace) < 1e-12), t.diagonal.shape
        (True, (41,))
    """
    act = get_activation(activation)
    W, b, V, c, X, y = validate_softmax_net(W, b, V, c, X, y, bias=bias)
    n, (N, M), C = X.shape[0], W.shape, V.shape[0]
    with mpmath.workdps((dps or 15) + 10):
        if dps is None:   # float64: blocks of samples, working memory O(rows·(N + M + C) + N·(M + C)) whatever n
            dW, db, dV, dc = np.zeros((N, M)), np.zeros(N), np.zeros((C, N)), np.zeros(C)
            with workspace.workspace() as take:   # X_b∘X_b in a kept buffer: no fresh pages per block
                for sl in row_blocks(n, max(N, M, C * N // 4), rows):
                    A, phi, ps, _ = _trace_block(W, b, V, c, X[sl], y[sl], act, False)
                    dW += A.T @ np.multiply(X[sl], X[sl], out=take("trace_xx", X[sl].shape))
                    db, dV, dc = db + A.sum(axis=0), dV + ps.T @ (phi * phi), dc + ps.sum(axis=0)
            dW, db, dV, dc = dW / n, db / n, dV / n, dc / n
        else:
            A, phi, ps, Xt = _trace_block(W, b, V, c, X, y, act, True)
            dW, db = (A.T @ (Xt * Xt)) / n, A.sum(axis=0) / n
            dV, dc = (ps.T @ (phi * phi)) / n, ps.sum(axis=0) / n
        parts = [dW.reshape(-1), db, dV.reshape(-1), dc] if bias else [dW.reshape(-1), dV.reshape(-1)]
        tr, diag = trace_of(np.concatenate(parts), dps)
    return SoftmaxHessianTrace(tr, diag, softmax_dim(N, M, C, bias), n, C, bias, dps)
