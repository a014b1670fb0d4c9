r"""What the ws experiments (E) share: data, nets, training, critical points (SPEC §1; Omae et al. 2026).

The net is the SPEC's M–N–1 net z(x) = v·tanh(Wx + b) + c with biases (D = N(M+2) + 1) and mean BCE.
SPEC allows several smooth activations and only the paper's abstract is public; tanh is used
throughout and named in every report line. λ_sup = μ + √(D−1)σ always comes from the closed-form moments
(:func:`numerics.moments.ce_hessian_moments`); the dense Hessian (:func:`numerics.ws.reference.ce_hessian_torch`)
is built only for the exact λ_1 it is compared with, and for the Newton polish at D = 13.

**Data.** Two Gaussian classes in R², balanced:
class 0 ~ N((−1, 0), [[1, 0.3], [0.3, 0.5]]), class 1 ~ N((1, 0.5), [[0.5, −0.2], [−0.2, 1]]).
The covariances differ, so the Bayes boundary is a conic and the N = 3 hidden units matter.

**Critical points of the regularised loss.** L_λ(θ) = L(θ) + (λ/2)‖θ‖² with λ ∈ [1e-4, 1e-1].
With λ = 0 and overlapping classes, the quasi-Newton runs we tried drifted to ‖θ‖ ~ 1e3–1e7, where
saturated units make ∇L tiny without a finite critical point in sight; the L2 term makes the critical
points genuine (finite, and reached by Newton at a quadratic rate). Its Hessian is H_λ = H + λI, and

.. math::

    \operatorname{tr} H_\lambda = \operatorname{tr} H + D\lambda, \qquad
    \operatorname{tr} H_\lambda^2 = \operatorname{tr}(H^2 + 2\lambda H + \lambda^2 I)
        = \operatorname{tr} H^2 + 2\lambda \operatorname{tr} H + D\lambda^2 .

Hence μ_λ = μ + λ and σ_λ² = tr H_λ²/D − μ_λ² = tr H²/D + 2λμ + λ² − (μ + λ)² = σ², so
λ_sup(H_λ) = λ_sup(H) + λ: the Wolkowicz–Styan bounds shift with the spectrum, exactly as λ_1 does.
:func:`l2_shift` implements the two trace identities and the experiment checks them against the dense
H + λI at every critical point (relative error ≤ 1e-10).

**Pass criteria.** ws.experiment: ≥ 90% of the runs reach ‖∇L_λ‖₂ ≤ 1e-9, every λ_1/λ_sup ≤ 1 (for H_λ
and for the BCE Hessian H at the same point) and the L2 shift holds to 1e-10; the Spearman correlation
of λ_sup with test macro-F1 is reported, with its sign and p-value, and decides nothing. ws.dependence:
Spearman(swept quantity, seed-mean λ_sup) ≥ 0.8 for each sweep. ws.overfit: see its level function.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from numerics.ws import ce_hessian_moments
from numerics.ws.reference import ce_hessian_torch, torch_loss_fn

ACT = "tanh"
MEANS = (np.array([-1.0, 0.0]), np.array([1.0, 0.5]))
COVS = (np.array([[1.0, 0.3], [0.3, 0.5]]), np.array([[0.5, -0.2], [-0.2, 1.0]]))
GRAD_TOL = TOL["ws_critical_grad"]  # a critical point: ‖∇L_λ‖₂ ≤ GRAD_TOL (torch autograd, float64)
L2_GRID = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
MIN_CONVERGED = 0.9  # ws.experiment: fraction of optimiser runs that must reach GRAD_TOL
MIN_SPEARMAN = 0.8  # ws.dependence: Spearman(swept quantity, seed-mean λ_sup) on each sweep


def two_gaussians(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """n samples, ⌊n/2⌋ of class 0 then the rest of class 1, from the two Gaussians above."""
    n0 = n // 2
    X = np.vstack([rng.multivariate_normal(MEANS[0], COVS[0], n0),
                   rng.multivariate_normal(MEANS[1], COVS[1], n - n0)])
    return X, np.r_[np.zeros(n0), np.ones(n - n0)]


def training_set(ctx: Context, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The k-th training set of ws.experiment (each seed index draws its own)."""
    return two_gaussians(ctx.rng(f"ws.experiment/train/{k}"), n)


def unpack(theta: np.ndarray, N: int, M: int):
    """θ = (vec W row-major, b, v, c) → (W, b, v, c)."""
    o = N * M
    return theta[:o].reshape(N, M), theta[o:o + N], theta[o + N:o + 2 * N], float(theta[o + 2 * N])


def logits(theta: np.ndarray, X: np.ndarray, N: int) -> np.ndarray:
    W, b, v, c = unpack(theta, N, X.shape[1])
    return np.tanh(X @ W.T + b) @ v + c


def saturation(z: np.ndarray, y: np.ndarray) -> float:
    """max_i max(q_i, |r_i|), computed without cancellation (as in numerics.moments)."""
    q = special.expit(z) * special.expit(-z)
    r = np.where(y == 1, special.expit(-z), special.expit(z))
    return float(max(q.max(), r.max()))


def l2_shift(trace, trace_sq, dim: int, l2: float) -> tuple[float, float]:
    """(tr H_λ, tr H_λ²) for H_λ = H + λI from (tr H, tr H²): see the module docstring."""
    return trace + dim * l2, trace_sq + 2 * l2 * trace + dim * l2 * l2


def macro_f1(y: np.ndarray, pred: np.ndarray) -> float:
    """Unweighted mean over the two classes of F1 = 2TP / (2TP + FP + FN) (0 for an empty class)."""
    f1 = []
    for cls in (0, 1):
        tp = np.sum((pred == cls) & (y == cls))
        denom = 2 * tp + np.sum((pred == cls) & (y != cls)) + np.sum((pred != cls) & (y == cls))
        f1.append(2 * tp / denom if denom else 0.0)
    return float(np.mean(f1))


@contextlib.contextmanager
def torch_one_thread():
    """Tiny tensors: intra-op threads only contend for the shared cores (10× slower measured)."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def random_net(rng: np.random.Generator, N: int, M: int) -> np.ndarray:
    W, b, v = rng.normal(size=(N, M)), 0.5 * rng.normal(size=N), rng.normal(size=N)
    return np.concatenate([W.ravel(), b, v, [0.0]])


def spearman(a, b, *, pvalue: bool = False):
    """Spearman's rank correlation (and its two-sided p-value if asked); NaN when undefined."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return (float("nan"), float("nan")) if pvalue else float("nan")
    res = stats.spearmanr(a, b)
    return (float(res.statistic), float(res.pvalue)) if pvalue else float(res.statistic)


@dataclass(frozen=True)
class CriticalPoint:
    theta: np.ndarray
    l2: float
    grad_norm: float  # ‖∇L_λ(θ)‖₂ by torch autograd
    lbfgs_iters: int
    newton_steps: int
    hessian: np.ndarray  # dense BCE Hessian H at θ (numerics.ws.reference), without the λI


def find_critical_point(X, y, theta0: np.ndarray, l2: float, *, N: int, max_newton: int = 8) -> CriticalPoint:
    """float64 BFGS on L_λ with torch-autograd gradients, then Newton steps on the dense H + λI.

    Dense BFGS rather than L-BFGS-B: at D = 13 its inverse-Hessian estimate is free, and scipy's
    L-BFGS-B calls threaded OpenBLAS on 13-vectors, measured 50× slower per step on shared cores.

    BFGS stops at ‖∇‖_∞ ≤ 1e-6 (its last digits cost the most line searches); Newton then converges
    quadratically to ‖∇‖₂ ~ 1e-16. A Newton step is accepted only while it lowers ‖∇L_λ‖₂. The
    returned ``hessian`` is the dense BCE Hessian at the returned θ (reused for the exact λ_1).
    """
    import torch

    M = X.shape[1]
    loss, _ = torch_loss_fn(*unpack(theta0, N, M), X, y, ACT)

    def fg(th):
        t = torch.tensor(th, dtype=torch.float64, requires_grad=True)
        val = loss(t) + 0.5 * l2 * torch.dot(t, t)
        (g,) = torch.autograd.grad(val, t)
        return float(val.detach()), g.numpy().copy()

    res = optimize.minimize(fg, theta0, jac=True, method="BFGS",
                            options={"maxiter": 3000, "gtol": 1e-6})
    th, g = res.x, fg(res.x)[1]
    gn, steps, H = float(np.linalg.norm(g)), 0, None
    for _ in range(max_newton):
        H = ce_hessian_torch(*unpack(th, N, M), X, y, ACT)
        cand = th - np.linalg.lstsq(H + l2 * np.eye(th.size), g, rcond=None)[0]
        g_c = fg(cand)[1]
        if not np.linalg.norm(g_c) < gn:
            break
        th, g, gn, steps, H = cand, g_c, float(np.linalg.norm(g_c)), steps + 1, None
    if H is None:
        H = ce_hessian_torch(*unpack(th, N, M), X, y, ACT)
    return CriticalPoint(th, l2, gn, int(res.nit), steps, H)


def lambda_sup_at(theta: np.ndarray, X, y, N: int) -> float:
    return float(ce_hessian_moments(*unpack(theta, N, X.shape[1]), X, y, ACT).lambda_sup)


def separable_set(rng: np.random.Generator, n: int, margin: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Alternating labels; x = (±2, 0) + N(0, 0.6² I), resampled until ±x₁ ≥ margin (so separable)."""
    y = (np.arange(n) % 2).astype(float)
    X = np.empty((n, 2))
    for i in range(n):
        while True:
            x = 0.6 * rng.normal(size=2) + [2.0 if y[i] else -2.0, 0.0]
            if (x[0] if y[i] else -x[0]) >= margin:
                X[i] = x
                break
    return X, y


def train_to_zero_loss(X, y, theta0: np.ndarray, *, N: int, max_iter: int, stop_at: float = 1e-30):
    """Unregularised BFGS on separable data; the iterates, until max(q, |r|) < ``stop_at``."""
    import torch

    loss, _ = torch_loss_fn(*unpack(theta0, N, X.shape[1]), X, y, ACT)

    def fg(th):
        t = torch.tensor(th, dtype=torch.float64, requires_grad=True)
        val = loss(t)
        (g,) = torch.autograd.grad(val, t)
        return float(val.detach()), g.numpy().copy()

    path = [theta0.copy()]

    def callback(th):
        path.append(th.copy())
        if saturation(logits(th, X, N), y) < stop_at:
            raise StopIteration

    optimize.minimize(fg, theta0, jac=True, method="BFGS", callback=callback,
                      options={"maxiter": max_iter, "gtol": 0.0})
    return path


def scale_outer(theta: np.ndarray, t: float, N: int, M: int) -> np.ndarray:
    out = theta.copy()
    out[N * (M + 1):] *= t  # (v, c) → t(v, c): every logit z_i → t z_i
    return out
