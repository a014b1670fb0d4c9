r"""Matrix-free (HVP-based) estimators of tr H, tr H² and λ_max(H): the alternatives to the closed form.

These are what a user computes today when no closed form is available (PyHessian, curvlinops,
pytorch-hessian-eigenthings); the suite uses them as baseline (c) of ``checks.runners.bench`` and cross-checks
them against the closed form of :mod:`numerics.moments` and the dense Hessian of :mod:`numerics.ws.reference`.
Every function takes ``hvp(V) -> H V`` for a (D, k) float64 tensor of k directions, e.g. from
:func:`numerics.ws.reference.hvp_operator` (``torch.func`` forward-over-reverse, batched with ``vmap``).

Hutchinson (1989) / Avron & Toledo (2011)
-----------------------------------------
For a Rademacher probe z (i.i.d. ±1 entries) :math:`\mathbb E[zz^\top] = I`, hence

.. math::

    \mathbb E[z^\top H z] = \operatorname{tr}(H\,\mathbb E[zz^\top]) = \operatorname{tr} H, \qquad
    \mathbb E[\|Hz\|^2] = \mathbb E[z^\top H^2 z] = \operatorname{tr} H^2 = \|H\|_F^2 ,

so the sample means over k independent probes are unbiased, and their standard errors are the sample
standard deviations over √k. For Rademacher probes the single-probe variances are known exactly:
:math:`\operatorname{Var}(z^\top A z) = 2(\|A\|_F^2 - \sum_i A_{ii}^2)` for symmetric A (A = H for the
trace, A = H² for tr H²), the smallest of any i.i.d. probe distribution (Avron & Toledo 2011, Thm 1).
Both estimates come from the *same* products Hz, so tr H² costs nothing extra.

Lanczos (as in PyHessian, Yao et al. 2020, and curvlinops)
----------------------------------------------------------
k steps of the symmetric Lanczos recurrence from a Rademacher start give the tridiagonal T_k whose
largest eigenvalue (Ritz value) θ approaches λ_max from below. We re-orthogonalise every new vector
against the whole basis (twice, "full"), which costs O(D k²) and keeps the Ritz values free of ghost
copies for the k ≤ 100 steps used here. The residual norm ‖Hu − θu‖ = β_k |e_kᵀs| (s the top eigenvector
of T_k) bounds the distance from θ to *some* eigenvalue of H (Parlett, The Symmetric Eigenvalue Problem,
Thm 4.5.1); it is a certificate for that, not for λ_max itself.

References
----------
.. code-block:: bibtex

    @article{hutchinson1989stochastic, author = {Hutchinson, M. F.}, title = {A stochastic estimator of
      the trace of the influence matrix for {L}aplacian smoothing splines}, journal = {Comm. Statist.
      Simulation Comput.}, volume = {18}, number = {3}, pages = {1059--1076}, year = {1989}}
    @article{avron2011randomized, author = {Avron, Haim and Toledo, Sivan}, title = {Randomized algorithms
      for estimating the trace of an implicit symmetric positive semi-definite matrix}, journal = {J. ACM},
      volume = {58}, number = {2}, pages = {8:1--8:34}, year = {2011}}
    @inproceedings{yao2020pyhessian, author = {Yao, Zhewei and Gholami, Amir and Keutzer, Kurt and
      Mahoney, Michael W.}, title = {{PyHessian}: Neural networks through the lens of the {H}essian},
      booktitle = {IEEE Big Data}, pages = {581--590}, year = {2020}}

Example:
    >>> import numpy as np
    >>> from numerics.ws.reference import hvp_operator
    >>> from numerics.ws import ce_hessian_moments
    >>> rng = np.random.default_rng(0)
    >>> W, b, v = rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=3)
    >>> X, y = rng.normal(size=(50, 2)), rng.integers(0, 2, 50)
    >>> hvp, D = hvp_operator(W, b, v, 0.1, X, y, "tanh")
    >>> est = hutchinson(hvp, D, n_probes=400, batch=400, seed=1)  # one vmapped call
    >>> exact = ce_hessian_moments(W, b, v, 0.1, X, y, "tanh")
    >>> bool(abs(est.trace.estimate - exact.trace) <= 4 * est.trace.stderr)
    True
    >>> bool(abs(est.trace_sq.estimate - exact.trace_sq) <= 4 * est.trace_sq.stderr)
    True
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

__all__ = ["TraceEstimate", "HutchinsonResult", "LanczosResult", "hutchinson", "hutchinson_trace",
           "hutchinson_trace_sq", "lanczos_lmax", "probes_for_rel_stderr"]

HVP = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class TraceEstimate:
    """A Monte-Carlo estimate: the mean of ``samples``, its standard error, and the raw samples."""

    quantity: Literal["trace", "trace_sq"]
    estimate: float
    stderr: float
    samples: np.ndarray  # one value per probe: zᵀHz or ‖Hz‖²
    n_probes: int
    seconds: float

    @property
    def rel_stderr(self) -> float:
        return self.stderr / abs(self.estimate) if self.estimate else math.inf

    def probes_for(self, rel_stderr: float) -> int:
        """Probes needed for a relative standard error ``rel_stderr`` (from this run's sample variance)."""
        return probes_for_rel_stderr(self.samples, rel_stderr)


@dataclass(frozen=True)
class HutchinsonResult:
    """tr H and tr H² from one set of Rademacher probes (each probe costs one HVP)."""

    trace: TraceEstimate
    trace_sq: TraceEstimate
    n_probes: int
    seconds: float


@dataclass(frozen=True)
class LanczosResult:
    """Largest Ritz value after ``steps`` Lanczos steps; ``residual`` = ‖Hu − θu‖ for its Ritz vector."""

    estimate: float
    residual: float
    ritz: np.ndarray  # all Ritz values, ascending
    steps: int
    seconds: float
    converged: bool  # residual ≤ tol·|θ| (or an invariant subspace was found)


def probes_for_rel_stderr(samples, rel_stderr: float) -> int:
    r"""Probes k with :math:`s/(\sqrt k\,|\bar x|) \le \epsilon` (ε = ``rel_stderr``).

    That is :math:`k = \lceil (s/(\epsilon|\bar x|))^2\rceil`.

    ``samples`` are single-probe values (their sample mean x̄ and standard deviation s are plug-in
    estimates of the mean and the per-probe spread). Returns at least 1.

    Example:
        >>> probes_for_rel_stderr([0.9, 1.1, 0.9, 1.1], 0.01)  # s ≈ 0.115, mean 1
        134
    """
    x = np.asarray(samples, dtype=float)
    if x.size < 2:
        raise ValueError("need at least 2 samples to estimate the per-probe variance")
    if not rel_stderr > 0:
        raise ValueError(f"rel_stderr must be > 0, got {rel_stderr!r}")
    mean, sd = float(x.mean()), float(x.std(ddof=1))
    if mean == 0:
        return math.inf if sd > 0 else 1
    return max(1, math.ceil((sd / (rel_stderr * abs(mean))) ** 2))


def _rademacher(dim: int, k: int, gen: torch.Generator) -> torch.Tensor:
    return torch.randint(0, 2, (dim, k), generator=gen, dtype=torch.int8).to(torch.float64).mul_(2).sub_(1)


def _summary(quantity, samples: np.ndarray, seconds: float) -> TraceEstimate:
    k = samples.size
    se = float(samples.std(ddof=1) / math.sqrt(k)) if k > 1 else math.inf
    return TraceEstimate(quantity, float(samples.mean()), se, samples, k, seconds)


def hutchinson(hvp: HVP, dim: int, *, n_probes: int = 100, batch: int = 8, seed: int = 0,
               distribution: Literal["rademacher"] = "rademacher") -> HutchinsonResult:
    r"""Hutchinson estimates of tr H (samples zᵀHz) and tr H² (samples ‖Hz‖²) from the same probes.

    Both are unbiased (module docstring). ``batch`` probes go through ``hvp`` at once (a vmap over the
    columns), trading memory for speed; the result does not depend on ``batch`` for a given ``seed``.

    Example:
        >>> H = torch.diag(torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
        >>> r = hutchinson(lambda V: H @ V, 3, n_probes=10, seed=0)
        >>> r.trace.estimate, r.trace.stderr, r.trace_sq.estimate  # diagonal H: every probe is exact
        (6.0, 0.0, 14.0)
    """
    if distribution != "rademacher":
        raise ValueError(f"distribution must be 'rademacher', got {distribution!r}")
    if not (isinstance(n_probes, int) and n_probes >= 2):
        raise ValueError(f"n_probes must be an integer >= 2 (the stderr needs two), got {n_probes!r}")
    if not (isinstance(batch, int) and batch >= 1):
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    gen = torch.Generator().manual_seed(seed)
    t0 = time.perf_counter()
    # all probes are drawn up front (int8) so that the draws do not depend on ``batch``
    Z = torch.randint(0, 2, (dim, n_probes), generator=gen, dtype=torch.int8)
    quad, sq = np.empty(n_probes), np.empty(n_probes)
    with torch.no_grad():
        for s in range(0, n_probes, batch):
            z = Z[:, s:s + batch].to(torch.float64).mul_(2).sub_(1)
            Hz = hvp(z)
            quad[s:s + batch] = (z * Hz).sum(0).numpy()
            sq[s:s + batch] = (Hz * Hz).sum(0).numpy()
    sec = time.perf_counter() - t0
    return HutchinsonResult(_summary("trace", quad, sec), _summary("trace_sq", sq, sec), n_probes, sec)


def hutchinson_trace(hvp: HVP, dim: int, **kw) -> TraceEstimate:
    """tr H by Hutchinson (see :func:`hutchinson`; the same keyword options)."""
    return hutchinson(hvp, dim, **kw).trace


def hutchinson_trace_sq(hvp: HVP, dim: int, **kw) -> TraceEstimate:
    """tr H² = E‖Hz‖² by Hutchinson (see :func:`hutchinson`; the same keyword options)."""
    return hutchinson(hvp, dim, **kw).trace_sq


def lanczos_lmax(hvp: HVP, dim: int, *, steps: int = 100, seed: int = 0, tol: float = 0.0,
                 reorth: Literal["full", "none"] = "full") -> LanczosResult:
    r"""λ_max(H) by ``steps`` Lanczos steps from a Rademacher start (one HVP per step).

    The Ritz value θ = λ_max(T_k) satisfies θ ≤ λ_max(H) in exact arithmetic (Cauchy interlacing of the
    Rayleigh quotient on the Krylov space). ``tol > 0`` stops early once ‖Hu − θu‖ ≤ tol·|θ|
    (PyHessian uses a relative change of 1e-3 instead; we report the residual, which is a certificate).
    An exact invariant subspace (β = 0, e.g. k ≥ rank) also stops the iteration.

    Example:
        >>> H = torch.diag(torch.arange(1.0, 21.0, dtype=torch.float64))
        >>> r = lanczos_lmax(lambda V: H @ V, 20, steps=20)
        >>> round(r.estimate, 10), r.converged
        (20.0, True)
    """
    if not (isinstance(steps, int) and steps >= 1):
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    if reorth not in ("full", "none"):
        raise ValueError(f"reorth must be 'full' or 'none', got {reorth!r}")
    gen = torch.Generator().manual_seed(seed)
    t0 = time.perf_counter()
    k_max = min(steps, dim)
    Q = torch.zeros(dim, k_max + 1, dtype=torch.float64) if reorth == "full" else None
    q = _rademacher(dim, 1, gen)[:, 0]
    q /= q.norm()
    q_prev = torch.zeros_like(q)
    alphas, betas = [], []
    beta = 0.0
    with torch.no_grad():
        for j in range(k_max):
            if Q is not None:
                Q[:, j] = q
            w = hvp(q[:, None])[:, 0]
            a = float(q @ w)
            w = w - a * q - beta * q_prev
            if Q is not None:  # twice is enough (Kahan–Parlett)
                for _ in range(2):
                    w -= Q[:, : j + 1] @ (Q[:, : j + 1].T @ w)
            alphas.append(a)
            beta = float(w.norm())
            betas.append(beta)
            if beta <= 1e-14 * max(abs(a), 1.0):  # invariant subspace: T_j is exact
                break
            ritz, vec = _tridiag_eig(alphas, betas[:-1])
            if tol > 0 and beta * abs(vec[-1, -1]) <= tol * abs(ritz[-1]):
                break
            q_prev, q = q, w / beta
    ritz, vec = _tridiag_eig(alphas, betas[:-1])
    residual = abs(betas[-1] * vec[-1, -1])
    converged = residual <= max(tol, 1e-12) * max(abs(ritz[-1]), np.finfo(float).tiny)
    return LanczosResult(float(ritz[-1]), float(residual), ritz, len(alphas), time.perf_counter() - t0,
                         bool(converged))


def _tridiag_eig(alphas, offdiag):
    from scipy.linalg import eigh_tridiagonal

    if len(alphas) == 1:
        return np.array(alphas, float), np.ones((1, 1))
    return eigh_tridiagonal(np.asarray(alphas), np.asarray(offdiag))
