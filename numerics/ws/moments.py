r"""Closed-form spectral moments of the cross-entropy Hessian and the Wolkowicz–Styan bounds (SPEC §1).

Omae et al. 2026 (arXiv 2604.10202); Wolkowicz & Styan 1980, "Bounds for eigenvalues using traces",
Linear Algebra Appl. 29, 471–506, Thm 2.1.

For z(x) = v·φ(Wx + b) + c and L = (1/n) Σ_i BCE(y_i, sigmoid(z_i)), with q_i = p_i(1 − p_i),
r_i = p_i − y_i, g_i = ∇_θ z_i, K_i = ∇²_θ z_i:

.. math::

    \operatorname{tr} H = \frac1n \sum_i q_i \|g_i\|^2 + r_i \operatorname{tr} K_i, \qquad
    \operatorname{tr} H^2 = \frac1{n^2}\sum_{i,j} q_i q_j (g_i\cdot g_j)^2
        + 2 q_i r_j\, g_i^\top K_j g_i + r_i r_j \operatorname{tr}(K_i K_j).

The block kernels g_i·g_j, g_iᵀK_j g_i, tr(K_iK_j) are polynomials in the augmented Gram entry
x̃_i·x̃_j whose coefficients are sums over hidden units of products of φ, φ′, φ″ and powers of v.
They are *generated* from ``proofs/hessian_moments.py`` into ``numerics/_derived/ws.py``:
every Σ_k is a matrix product of (rows × N) unit tables, so the cost is O(n²(M + N)) and no D×D
matrix is formed. Sample pairs are processed in blocks of ``block`` rows (upper triangle only), so
the working memory is O(block² + n(M + N)) whatever n is.

Example:
    >>> import numpy as np
    >>> from numerics.ws import ce_hessian_moments, ws_bounds
    >>> rng = np.random.default_rng(0)
    >>> W, b, v = rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=3)
    >>> X, y = rng.normal(size=(20, 2)), rng.integers(0, 2, 20)
    >>> m = ce_hessian_moments(W, b, v, 0.1, X, y, "tanh")
    >>> m.dim
    13
    >>> bool(ws_bounds(m.trace, m.trace_sq, m.dim).lmax_upper >= m.trace / m.dim)
    True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import mpmath
import numpy as np
from scipy import special

from numerics._derived import ws as ws_kernels
from numerics.ws import workspace
from numerics.ws.activations import SmoothActivation, get_activation
from numerics.ws.binary_tiles import BinaryPairTiles
from numerics.ws.bounds import WSBounds, ws_bounds
from numerics.ws.inputs import checked_array, dim_of, validate_net
from numerics.ws.pair_tiles import Recipe, TileRunner

__all__ = ["HessianMoments", "LambdaSupGrad", "PrecisionWarning", "WSBounds", "ce_hessian_moments",
           "lambda_sup_grad", "ws_bounds", "validate_net", "checked_array", "dim_of"]


@dataclass(frozen=True)
class HessianMoments:
    """tr H, tr H² = ‖H‖_F² and D for the mean-BCE Hessian of an M–N–1 net (SPEC §1 conventions).

    ``radius`` (``dps=`` with a named activation): (r_tr, r_tr2), mpmath numbers with
    |tr H − trace| ≤ r_tr and |tr H² − trace_sq| ≤ r_tr2 for the exact closed form of the float64 network: arb's
    ball radii (tables and sums), plus the final rounding to ``dps`` digits. None otherwise.
    """

    trace: Any
    trace_sq: Any
    dim: int
    n: int
    bias: bool
    activation: str
    dps: int | None
    backend: str = "numpy"  # which library ran the pair sums: "numpy" or "torch" (float64), "arb" or "mpmath" (dps)
    radius: tuple[Any, Any] | None = None  # dps: bounds on |exact closed form − returned value| (arb), else None

    @property
    def bounds(self) -> WSBounds:
        """The Wolkowicz–Styan bounds from these moments; a ``dps=`` result's in mpmath at dps + 10 digits, not at
        the caller's ambient precision (which left λ_sup of a 50-digit result with mpmath's default 15 digits).
        σ² = tr H²/D − μ² is clipped at 0 when it is negative by less than the moments' own error (their radii,
        or 4·10^-dps of its terms): a Hessian whose eigenvalues agree to more digits than dps has σ² = 0 within
        what the moments know, not "no real spectrum". How many digits λ_sup keeps is :meth:`lambda_sup_ball`'s."""
        if self.dps is None:
            return ws_bounds(self.trace, self.trace_sq, self.dim)
        with mpmath.workdps(int(self.dps) + 10):
            D = self.dim
            mu = self.trace / D
            tol = 4 * mpmath.mpf(10) ** -int(self.dps) * (abs(self.trace_sq) / D + mu * mu)
            if self.radius is not None:
                rtr, rtr2 = self.radius
                tol += rtr2 / D + 2 * abs(mu) * rtr / D + (rtr / D) ** 2
            return ws_bounds(self.trace, self.trace_sq, D, var_tol=tol)

    @property
    def lambda_sup(self):
        """λ_sup = μ + √(D−1)σ, the paper's upper bound on λ_max(H). For a ``dps=`` result with a radius, a
        :class:`PrecisionWarning` when :meth:`lambda_sup_ball` fixes fewer than ``dps`` digits (σ ≪ μ: σ² is a
        difference that cancels, and the moments' error is amplified by μ/σ)."""
        value = self.bounds.lmax_upper
        ball = self.lambda_sup_ball()
        if ball is not None and (not ball.is_finite() or _digits_fixed(ball) < int(self.dps)):
            import warnings

            got = _digits_fixed(ball) if ball.is_finite() else 0
            warnings.warn(f"dps={self.dps}: λ_sup fixes only about {got} digits (σ = {mpmath.nstr(self.bounds.std, 3)} "
                          f"against μ = {mpmath.nstr(self.bounds.mean, 3)}: σ² cancels); lambda_sup_ball() encloses it",
                          PrecisionWarning, stacklevel=2)
        return value

    def lambda_sup_ball(self):
        """A ``flint.arb`` ball containing λ_sup of the exact closed form (from ``radius``: the moments' balls
        through μ + √(D−1)σ, σ² clipped below at 0), or None without a radius (float64, a SymPy activation, the
        mpmath engine). Its width says how many of λ_sup's digits are fixed: fewer than dps when σ ≪ μ."""
        if self.dps is None or self.radius is None:
            return None
        from flint import arb, ctx

        from numerics.ws.arb_balls import bits_for, from_mpf

        with ctx.workprec(2 * bits_for(int(self.dps)) + 64):
            exact = lambda x: from_mpf(x if isinstance(x, mpmath.mpf) else mpmath.mpf(x))  # noqa: E731
            # (not mpmath.mpf(x) of an mpf: that rounds a 50-digit value to the ambient 15 digits)
            tr = arb(exact(self.trace), exact(self.radius[0]))
            tr2 = arb(exact(self.trace_sq), exact(self.radius[1]))
            D = arb(self.dim)
            mu = tr / D
            var = tr2 / D - mu * mu
            if var > 0:
                sigma = var.sqrt()
            else:  # σ² ≥ 0 for a real spectrum: σ ∈ [0, √(upper end)]
                hi = var.upper()
                top = hi.sqrt().upper() if hi > 0 else arb(0)
                sigma = arb(top / 2, top / 2)
            return mu + (D - 1).sqrt() * sigma


# ------------------------------------------------------------------------------------------------
# evaluation


def tables_float64(W, b, v, c, X, y, act: SmoothActivation):
    A = X @ W.T
    if b is not None:
        A += b
    P = act.float64(A)
    z = P[0] @ v + (c if c is not None else 0.0)
    p = special.expit(z)
    q = p * special.expit(-z)  # p(1 − p) without cancellation when p ≈ 1
    r = np.where(y == 1, -special.expit(-z), p)  # p − y without cancellation
    return P, q, r


def tables_mp(W, b, v, c, X, y, act: SmoothActivation):
    to = np.vectorize(mpmath.mpf, otypes=[object])
    W, v, X = to(W), to(v), to(X)
    A = X @ W.T
    if b is not None:
        A = A + to(b)
    ev = np.vectorize(act.mp, otypes=[object, object, object])
    P = ev(A)
    z = P[0] @ v + (mpmath.mpf(c) if c is not None else 0)
    p = np.array([1 / (1 + mpmath.exp(-zi)) for zi in z], dtype=object)
    pm = np.array([1 / (1 + mpmath.exp(zi)) for zi in z], dtype=object)  # 1 − p, not computed as 1 − p
    q = p * pm  # p(1 − p) without cancellation: at z = 100, 1 − p at 50 digits kept 4 of them
    r = np.where(y == 1, -pm, p)  # p − y without cancellation
    return P, q, r, X


def _moments(P, q, r, Xt, v, *, n: int, kernels: ModuleType, block: int, bias_const: dict):
    """The kernel form of SPEC §1, with the pair sums grouped by the power of G_ij = x̃_i·x̃_j.

    2 Σ_ij q_i r_j gKg_ij and Σ_ij r_i r_j KK_ij are bilinear in the generated factors
    κ = Σ_p G^p ∘ (L_p R_pᵀ): with a = 2q or r and b = r,

    * p = 0: Σ_ij a_i b_j L_i·R_j = (aᵀL)·(bᵀR), O(nN);
    * p = 1: Σ_ij a_i b_j G_ij L_i·R_j = ⟨X̃ᵀ(a∘L), X̃ᵀ(b∘R)⟩_F, O(n(M+1)N), no pair loop;
    * p ≥ 2: Σ_i (a∘L)_i · (G^p (b∘R))_i, one (block × block)·(block × N) product per orientation.

    Only q_iq_j (g_i·g_j)² needs its block matrix. Blocks run over the upper triangle (the
    off-diagonal ones count twice for the symmetric terms, and in both orientations for the
    bilinear ones), so working memory is O(block² + n(M+N)). This is the form for any array type (mpmath object
    arrays, arb, torch under autograd); float64 runs the same terms as tiles (:func:`build_binary_tiles`).
    """
    trace, acc, far = near_terms(P, q, r, Xt, v, n=n, kernels=kernels, bias_const=bias_const)
    pairs = _pair_sums(P, q, Xt, v, far, n=n, kernels=kernels, block=block, c_gg=bias_const["gg"])
    return trace, (acc + pairs) / (n * n)


def near_terms(P, q, r, Xt, v, *, n: int, kernels: ModuleType, bias_const: dict):
    """(tr H, the pair terms without a pair loop, the far (p ≥ 2) bilinear factors) of :func:`_moments`."""
    gd = (Xt * Xt).sum(axis=1)
    g2 = kernels.g2(P, v, gd) + bias_const["g2"]
    trk = kernels.trK(P, v, gd) + bias_const["trK"]
    trace = (q @ g2 + r @ trk) / n
    acc = 0
    far = {}  # (p, id b, id R) -> [a∘L, b∘R] with p >= 2: summed inside the pair loop
    for a, b, name in ((2 * q, r, "gKg"), (r, r, "KK")):
        if bias_const[name]:  # a constant output-bias kernel: Σ_ij a_i b_j c
            acc = acc + bias_const[name] * a.sum() * b.sum()
        for p, L, R in getattr(kernels, f"{name}_factors")(P, P, v):
            aL = a[:, None] * L
            if p == 0:
                acc = acc + (aL.sum(axis=0) * (b[:, None] * R).sum(axis=0)).sum()
            elif p == 1:
                acc = acc + ((Xt.T @ aL) * (Xt.T @ (b[:, None] * R))).sum()
            elif (p, id(b), id(R)) in far:  # the same right factor (e.g. r∘φ″ in gKg and KK): add the left ones
                far[p, id(b), id(R)][0] = far[p, id(b), id(R)][0] + aL
            else:
                far[p, id(b), id(R)] = [aL, b[:, None] * R]
    return trace, acc, [(p, aL, bR) for (p, _, _), (aL, bR) in far.items()]


def _pair_sums(P, q, Xt, v, far, *, n: int, kernels: ModuleType, block: int, c_gg):
    """Σ_ij q_i q_j (g_i·g_j)² + the far (p ≥ 2) bilinear terms, in any array type with ``@`` (float64, mpmath
    object arrays, arb matrices, torch tensors under autograd): the generated ``gg`` kernel per block pair."""
    acc = 0
    starts = range(0, n, block)
    for I in starts:
        sI = slice(I, min(I + block, n))
        TI = tuple(t[sI] for t in P)
        for J in starts:
            if J < I:
                continue
            sJ = slice(J, min(J + block, n))
            G = Xt[sI] @ Xt[sJ].T
            S = kernels.gg(TI, tuple(t[sJ] for t in P), v, G) + c_gg
            sym = q[sI] @ (S * S) @ q[sJ]
            acc = acc + (sym if I == J else 2 * sym)
            powers = {}
            for p, aL, bR in far:
                Gp = powers.setdefault(p, G**p)
                acc = acc + (aL[sI] * (Gp @ bR[sJ])).sum()
                if I != J:
                    acc = acc + (aL[sJ] * (Gp.T @ bR[sI])).sum()
    return acc


def build_binary_tiles(W, b, v, c, X, y, act_name: str, act_expr, bias: bool, block: int, *,
                       kernels: ModuleType = ws_kernels, take=None) -> BinaryPairTiles:
    """The float64 tiles of :func:`ce_hessian_moments` for these (validated) inputs, with ``.trace`` (tr H) and
    ``.near`` (n² · the pair terms summed without a pair loop): one function for this process (``take``: scratch
    buffers, :mod:`numerics.ws.workspace`) and for a Dask worker (:func:`binary_recipe`), so that both run the same
    arithmetic. Overflow raises FloatingPointError."""
    n, M = X.shape
    P, q, r = tables_float64(W, b, v, c, X, y, SmoothActivation(act_name, act_expr))
    with np.errstate(over="raise", invalid="raise"):
        if bias:
            Xt = (take or workspace.fresh)("Xt", (n, M + 1))
            Xt[:, :M], Xt[:, M] = X, 1.0
        else:
            Xt = X
        const = kernels.OUTPUT_BIAS if bias else dict.fromkeys(kernels.OUTPUT_BIAS, 0)
        trace, near, far = near_terms(P, q, r, Xt, v, n=n, kernels=kernels, bias_const=const)
        tiles = BinaryPairTiles(P, q, Xt, v, far, n=n, kernels=kernels, block=block, c_gg=const["gg"], take=take)
    tiles.trace, tiles.near = trace, near
    return tiles


def binary_recipe(W, b, v, c, X, y, act, bias: bool, block: int) -> Recipe:
    """How a worker rebuilds the binary pair tiles (validated inputs; ``act`` a SmoothActivation)."""
    return Recipe.of("binary", build_binary_tiles, W, b, v, c, X, y, act.name, act.expr, bias, int(block))


AUTO_TORCH_PAIR_FLOPS = 2e11
"""``backend="auto"`` runs the pair sums on torch from this much pair work n²(M + 1 + 4N) up.

Measured on this project's 2-core CPU (two threads each, load 1.1–1.5, two runs of each backend, wall s):
(98, 20) n = 8 000 (1.2e10): numpy 0.34–0.36, torch 0.41–0.49; (784, 256) n = 4 000 (2.9e10): 1.15–1.20 against
1.09–1.35; (98, 20) n = 20 000 (7.2e10): 2.36–2.75 against 2.42–2.79; (784, 256) n = 12 000 (2.6e11): numpy
5.56–5.86, torch 5.47–5.51. Below ~1e11 numpy is as fast or faster (and needs no torch import); above it torch's
fused in-place passes win by a few per cent, and full MNIST ((784, 256), n = 60 000, 6.5e12) ran in 130 s wall
(254 CPU-s, peak RSS 2.7 GB) on torch."""


def auto_backend(n: int, M: int, N: int, bias: bool = True) -> str:
    """The backend ``backend="auto"`` picks for n samples of an M–N–1 net: "torch" for large pair sums when torch
    imports, else "numpy"."""
    if float(n) * n * (M + int(bias) + 4 * N) < AUTO_TORCH_PAIR_FLOPS:
        return "numpy"
    try:
        import torch  # noqa: F401
    except ImportError:
        return "numpy"
    return "torch"


def ce_hessian_moments(W, b, v, c, X, y, activation: str | Any = "tanh", *, bias: bool = True,
                       dps: int | None = None, block: int | None = None, backend: str = "auto",
                       tiles=None, _kernels: ModuleType = ws_kernels, _dps_engine: str = "arb") -> HessianMoments:
    """tr H and tr H² of the mean binary-cross-entropy Hessian, without forming H.

    Parameters
    ----------
    W : (N, M) array; b : (N,) array; v : (N,) array; c : float
        The net z(x) = v·φ(Wx + b) + c. With ``bias=False`` (D = N(M+1)) pass ``b = c = None``.
    X : (n, M) array; y : (n,) array of labels in {0, 1}
    activation : "sigmoid" | "tanh" | "softplus" | "gelu" | sympy.Expr in one variable
    dps : int, optional
        Evaluate the same closed form to ``dps`` digits. Inputs are converted exactly from float64, so the
        result is the closed form of the float64 network to ``dps`` digits, returned as mpmath numbers. The sums
        run in python-flint's arb ball arithmetic (matrix products in ``arb_mat``; 28× less CPU than mpmath
        object arrays at n = 300, (M, N) = (5, 8)) with guard bits that are raised until each ball's relative
        radius is below 10^-dps / 16 (see :mod:`numerics.ws.arb_balls`; at most :data:`DPS_MAX_DOUBLINGS` doublings);
        ``.radius`` bounds the error. Where the balls stay wider, the result says so with a
        :class:`PrecisionWarning` and its radius, rather than present fewer digits as ``dps``.
        ``_dps_engine="mpmath"`` runs the former mpmath object arrays instead (tests compare them).
    block : int, optional
        Rows per block of the sample-pair sums: memory is O(block² + n(M+N)). Default: 1024 for the torch
        backend (its threaded GEMMs want the work), 256 for numpy (the temporaries stay in cache). The numpy
        path keeps its scratch buffers per thread between calls (at most 64 MiB; so that a call touches no fresh
        pages), freed by ``numerics.ws.workspace.release()``.
    backend : "auto" | "numpy" | "torch"
        Which array library runs the float64 pair sums: the same generated kernels either way
        (:mod:`numerics.ws.torch_pairs`); the result is the same to rounding. ``"auto"`` (default) takes torch
        when the pair work n²(M + 1 + 4N) is at least :data:`AUTO_TORCH_PAIR_FLOPS` and torch is installed, numpy
        below it: the faster of the two on each side of the crossover measured on this project's 2-core CPU (see
        :data:`AUTO_TORCH_PAIR_FLOPS`). torch is also the path for a GPU. ``dps`` always uses numpy/mpmath.
    tiles : numerics.ws.pair_tiles.TileRunner, optional
        Run the sample-pair tiles on it: Dask workers (``TileRunner.local(k)``, ``TileRunner.connect(address)``),
        with a journal to resume from, and a progress line. The float64 result is bit-identical to the run without
        it (every tile's value is the same; they are reduced by ``math.fsum``). Implies ``backend="numpy"``.

    Returns
    -------
    HessianMoments with ``.trace``, ``.trace_sq``, ``.dim`` (floats, or mpmath numbers if ``dps``).
    """
    act = get_activation(activation)
    W, b, v, c, X, y = validate_net(W, b, v, c, X, y, bias=bias)
    if backend not in ("auto", "torch", "numpy"):
        raise ValueError(f"backend must be 'auto', 'torch' or 'numpy', got {backend!r}")
    if tiles is not None and _kernels is not ws_kernels:
        raise ValueError("tiles= runs the package's own kernels on its workers: not with _kernels=")
    if tiles is not None and (dps is not None or backend == "torch"):
        raise ValueError("tiles= runs the float64 numpy pair sums: it cannot be combined with "
                         + ("dps=" if dps is not None else "backend='torch'"))
    if backend == "auto":
        backend = auto_backend(X.shape[0], W.shape[1], W.shape[0], bias) if dps is None and tiles is None \
            else "numpy"
    if block is None:
        block = 1024 if backend == "torch" and dps is None else 256
    if not (isinstance(block, int | np.integer) and block >= 1):
        raise ValueError(f"block must be a positive integer, got {block!r}")
    if dps is not None and not (isinstance(dps, int | np.integer) and dps >= 15):
        raise ValueError(f"dps must be an integer >= 15 (mpmath digits), got {dps!r}")
    if _dps_engine not in ("arb", "mpmath"):
        raise ValueError(f"_dps_engine must be 'arb' or 'mpmath', got {_dps_engine!r}")
    radius = None
    n, (N, M) = X.shape[0], W.shape
    const = _kernels.OUTPUT_BIAS if bias else dict.fromkeys(_kernels.OUTPUT_BIAS, 0)
    ones = np.ones((n, 1))
    if dps is None:
        if backend == "torch":
            P, q, r = tables_float64(W, b, v, c, X, y, act)
            from numerics.ws.torch_pairs import moments_torch

            Xt = np.hstack([X, ones]) if bias else X
            tr, tr2 = moments_torch(P, q, r, Xt, v, n=n, kernels=_kernels, block=int(block), bias_const=const)
            if not (np.isfinite(tr) and np.isfinite(tr2)):
                raise ValueError(f"float64 overflow in the moment sums (tr {tr}, tr² {tr2}); retry with dps=50")
        else:
            recipe = None if tiles is None else binary_recipe(W, b, v, c, X, y, act, bias, int(block))
            with workspace.workspace() as take:
                try:
                    tl = build_binary_tiles(W, b, v, c, X, y, act.name, act.expr, bias, int(block), kernels=_kernels,
                                            take=take)
                    with np.errstate(over="raise", invalid="raise"):
                        (pairs,) = (tiles or TileRunner()).run(recipe, tl)
                except FloatingPointError as exc:
                    raise ValueError(f"float64 overflow in the moment sums ({exc}); retry with dps=50") from exc
                tr, tr2 = tl.trace, (tl.near + pairs) / (n * n)
            if not (np.isfinite(tr) and np.isfinite(tr2)):  # BLAS reductions (vdot, @) do not raise on overflow
                raise ValueError(f"float64 overflow in the moment sums (tr {tr}, tr² {tr2}); retry with dps=50")
        tr, tr2 = float(tr), float(tr2)
    else:
        kw = dict(bias=bias, n=n, kernels=_kernels, block=int(block), bias_const=const)
        got = _moments_dps_arb(W, b, v, c, X, y, act, int(dps), **kw) if _dps_engine == "arb" else None
        if got is None and _dps_engine == "arb":
            import warnings

            warnings.warn(f"dps={dps}: the arb balls are not finite (units saturated beyond arb's exponent range); "
                          "the mpmath object arrays ran instead, and their digits are not certified (radius None)",
                          PrecisionWarning, stacklevel=2)
        tr, tr2, radius = got if got is not None else (*_moments_dps_mpmath(W, b, v, c, X, y, act, int(dps), **kw),
                                                       None)
        backend = "arb" if got is not None else "mpmath"
    return HessianMoments(tr, tr2, dim_of(N, M, bias), n, bias, act.name, dps, backend,
                          None if dps is None else radius)


def _moments_dps_mpmath(W, b, v, c, X, y, act: SmoothActivation, dps: int, *, bias: bool, n: int, **kw):
    """(tr H, tr H²) in mpmath object arrays at ``dps`` digits."""
    with mpmath.workdps(dps):
        P, q, r, Xm = tables_mp(W, b, v, c, X, y, act)
        Xt = np.hstack([Xm, np.full((n, 1), mpmath.mpf(1), dtype=object)]) if bias else Xm
        vm = np.array([mpmath.mpf(x) for x in v], dtype=object)
        tr, tr2 = _moments(P, q, r, Xt, vm, n=n, **kw)
        return +tr, +tr2


class PrecisionWarning(UserWarning):
    """A ``dps=`` result that does not carry ``dps`` certified digits: see its ``radius`` (None: uncertified)."""


DPS_MAX_DOUBLINGS = 6
"""Guard-bit doublings of the arb path (64 → 4096 bits). Found by the 10⁶-example ws.bound campaign: a GELU net
with six identical samples at pre-activation −26.2 and balanced labels has Σ r_i tr K_i ≈ 1.5·z·tr K with
z = v·φ(a) ≈ 10⁻¹⁵⁴, so r_i = σ(z) − y_i cancel to 155 digits; at 3 doublings (512 guard bits) the balls stayed
wide and the former mpmath fallback returned tr H = 2.27676e-300 as 50 digits, against 2.28639e-300 (sympy's
dense Hessian at 400 digits). 1024 guard bits fix it (``tests/test_ws_arb.py``)."""


def _moments_dps_arb(W, b, v, c, X, y, act: SmoothActivation, dps: int, *, bias: bool, **kw):
    """(tr H, tr H², radius) of the ``dps=`` path in arb: mpmath numbers rounded to ``dps`` digits and, when
    every table entry is an arb enclosure (a named activation), bounds on their errors.

    When the balls do not reach ``dps`` digits within ``DPS_MAX_DOUBLINGS`` guard-bit doublings but are finite, the
    rounded midpoints are returned with the radii that bound their errors, and a :class:`PrecisionWarning` says how
    many digits they fix: never fewer digits presented as ``dps``. None only when a ball is not finite (every unit
    saturated beyond arb's exponent range, tables [0 ± 1e-10⁹]): the caller then runs the mpmath path, which has
    no error bound (radius None) and warns."""

    from numerics.ws import arb_balls

    btr, btr2, rigorous, _ = arb_balls.moments_arb(W, b, v, c, X, y, act, dps, moments=_moments, bias=bias,
                                              max_doublings=DPS_MAX_DOUBLINGS, **kw)
    if not (btr.is_finite() and btr2.is_finite()):
        return None
    return rounded_moments(btr, btr2, dps, rigorous, "(tr H, tr H²)")


def rounded_moments(btr, btr2, dps: int, rigorous: bool, what: str, stacklevel: int = 4):
    """(tr, tr², radius) from the two result balls: their midpoints rounded to ``dps`` digits and, when ``rigorous``,
    bounds on the errors; a :class:`PrecisionWarning` when either ball fixes fewer than ``dps`` digits."""
    import warnings

    from numerics.ws import arb_balls

    (tr, rtr), (tr2, rtr2) = arb_balls.round_to_dps(btr, dps), arb_balls.round_to_dps(btr2, dps)
    if not (arb_balls.accurate(btr, dps) and arb_balls.accurate(btr2, dps)):
        got = min(_digits_fixed(btr), _digits_fixed(btr2))
        warnings.warn(f"dps={dps}: the arb balls fix only about {got} digits of {what} after "
                      f"{DPS_MAX_DOUBLINGS} guard-bit doublings (cancellation in the sums); the radii bound the errors"
                      + ("" if rigorous else " of the sums only (a SymPy activation's tables have no enclosure)"),
                      PrecisionWarning, stacklevel=stacklevel)
    return tr, tr2, ((rtr, rtr2) if rigorous else None)


def _digits_fixed(x) -> int:
    """Decimal digits a ball fixes (0 if its radius reaches its midpoint)."""
    return 10**9 if x.is_exact() else max(0, int(int(x.rel_accuracy_bits()) * math.log10(2)))


@dataclass(frozen=True)
class LambdaSupGrad:
    """λ_sup and its gradient with respect to (W, b, v, c), shaped like the inputs."""

    lambda_sup: float
    W: np.ndarray
    b: np.ndarray | None
    v: np.ndarray
    c: float | None

    def flat(self) -> np.ndarray:
        """The gradient as one vector in the θ order of SPEC §1 (vec W row-major, b, v, c)."""
        parts = [self.W.ravel()] + ([self.b] if self.b is not None else []) + [self.v]
        return np.concatenate(parts + ([np.atleast_1d(self.c)] if self.c is not None else []))


def lambda_sup_grad(W, b, v, c, X, y, activation: str | Any = "tanh", *, bias: bool = True,
                    block: int = 1024) -> LambdaSupGrad:
    r"""∇_θ λ_sup, λ_sup = μ + √(D−1)σ (beyond the paper: its follow-up, arXiv 2606.28662, uses it as a regulariser).

    The same generated kernel form as :func:`ce_hessian_moments`, evaluated on torch float64 tensors and
    differentiated in reverse mode: the cost stays O(n²(M+N)) (about 3× the forward pass) and no D×D
    matrix (nor a third-derivative tensor) is formed. With m = tr H / D, s² = tr H²/D − m²,

    .. math:: \nabla\lambda_{\sup} = \frac{\nabla \operatorname{tr}H}{D}
              + \sqrt{D-1}\,\frac{\nabla\operatorname{tr}H^2/D - 2m\,\nabla\operatorname{tr}H/D}{2s},

    which autograd applies for us; s = 0 (a multiple of the identity) has no gradient and is an error.
    """
    import torch

    act = get_activation(activation)
    W, b, v, c, X, y = validate_net(W, b, v, c, X, y, bias=bias)
    f64 = dict(dtype=torch.float64)
    Wt = torch.tensor(W, **f64, requires_grad=True)
    vt = torch.tensor(v, **f64, requires_grad=True)
    bt = torch.tensor(b, **f64, requires_grad=True) if bias else None
    ct = torch.tensor(c, **f64, requires_grad=True) if bias else None
    lam = lambda_sup_tensor(Wt, bt, vt, ct, torch.tensor(X, **f64), torch.tensor(y, **f64), act, block=block)
    leaves = [Wt, vt] + ([bt, ct] if bias else [])
    grads = torch.autograd.grad(lam, leaves)
    gW, gv = grads[0].numpy(), grads[1].numpy()
    gb, gc = (grads[2].numpy(), float(grads[3])) if bias else (None, None)
    return LambdaSupGrad(float(lam.detach()), gW, gb, gv, gc)


def lambda_sup_tensor(Wt, bt, vt, ct, Xt, yt, act: SmoothActivation, *, block: int | None = None):
    """λ_sup of the mean BCE Hessian as a torch float64 scalar, differentiable in (Wt, bt, vt, ct) (bt, ct None:
    no biases); the closed form of :func:`ce_hessian_moments` on tensors. Inputs already validated."""
    import torch

    f64 = dict(dtype=torch.float64)
    bias = bt is not None
    n, (N, M) = Xt.shape[0], Wt.shape
    A = Xt @ Wt.T + (bt if bias else 0)
    P = act.torch_tables(A)
    z = P[0] @ vt + (ct if bias else 0)
    p = torch.special.expit(z)
    q = p * torch.special.expit(-z)
    r = torch.where(yt == 1, -torch.special.expit(-z), p)
    Xa = torch.cat([Xt, torch.ones(n, 1, **f64)], dim=1) if bias else Xt
    const = ws_kernels.OUTPUT_BIAS if bias else dict.fromkeys(ws_kernels.OUTPUT_BIAS, 0)
    tr, tr2 = _moments(P, q, r, Xa, vt, n=n, kernels=ws_kernels, block=int(block or 1024), bias_const=const)
    D = dim_of(N, M, bias)
    m = tr / D
    var = tr2 / D - m * m
    if not float(var.detach()) > 0:
        raise ValueError("σ = 0 (H is a multiple of the identity): λ_sup = μ + √(D−1)σ is not differentiable")
    return m + (D - 1) ** 0.5 * torch.sqrt(var)
