"""The E levels of ws.experiment, ws.dependence and ws.overfit (SPEC §1), in quick mode.

Why the oracle is independent: the optimiser under test takes its gradients from
``numerics.ws.reference.torch_loss_fn`` (BCE with logits) and its Hessians from ``ce_hessian_torch``
(``torch.func``); λ_sup comes from the closed-form moments. This module writes the regularised loss
again from the definition, BCE(y, σ(z)) = softplus(z) − y·z with z = v·tanh(Wx + b) + c, plus (λ/2)‖θ‖²,
and differentiates it with ``torch.autograd`` (gradient) and ``torch.autograd.functional.hessian``.
So "critical point", "λ_1 ≤ λ_sup" and the L2 shift formula tr H_λ = tr H + Dλ,
tr H_λ² = tr H² + 2λ tr H + Dλ² are each checked against a Hessian of the regularised objective that
the code under test never built. Only the SPEC's parameter order θ = (vec W, b, v, c) is shared.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from checks.evidence.registry import Context, get
from checks.ws.experiments import GRAD_TOL, l2_shift, macro_f1, training_set
from numerics.ws import ce_hessian_moments, ws_bounds

N, M = 3, 2
D = N * (M + 2) + 1
REL = 1e-10  # SPEC level A tolerance, reused for the L2 shift identity


def reg_loss(theta: torch.Tensor, X, y, l2: float) -> torch.Tensor:
    """Mean BCE of the tanh net + (λ/2)‖θ‖², from the definition (SPEC §1)."""
    X, y = torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(y, dtype=torch.float64)
    W = theta[: N * M].reshape(N, M)
    b, v, c = theta[N * M: N * M + N], theta[N * M + N: N * M + 2 * N], theta[-1]
    z = torch.tanh(X @ W.T + b) @ v + c
    return (torch.nn.functional.softplus(z) - y * z).mean() + 0.5 * l2 * theta @ theta


def grad_norm(theta, X, y, l2) -> float:
    t = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(reg_loss(t, X, y, l2), t)
    return float(g.norm())


def hessian(theta, X, y, l2) -> np.ndarray:
    t = torch.tensor(theta, dtype=torch.float64)
    return torch.autograd.functional.hessian(lambda s: reg_loss(s, X, y, l2), t).numpy()


@pytest.fixture(scope="module")
def ctx(tmp_path_factory) -> Context:
    return Context(quick=True, report_dir=tmp_path_factory.mktemp("ws_e"))


@pytest.fixture(scope="module")
def experiment(ctx):
    return get("ws.experiment").run("E", ctx)


def _figures_exist(ctx, ev):
    assert ev.figures
    for f in ev.figures:
        path = ctx.report_dir / f
        assert path.is_file() and path.stat().st_size > 1000, f


def test_experiment_passes(ctx, experiment):
    ev = experiment
    assert ev.error is None, ev.details.get("traceback")
    assert ev.passed, ev.summary
    assert ev.metric["critical_points"] == ev.metric["attempts"] >= 4
    assert ev.metric["ratio_max"] <= 1
    _figures_exist(ctx, ev)


def test_critical_points_are_genuine(ctx, experiment):
    """Every reported point: ‖∇(L + λ/2‖θ‖²)‖ ≤ 1e-9 and λ_1 ≤ λ_sup, by the independent loss."""
    n_train = experiment.details["config"]["n_train"]
    for p in experiment.details["points"]:
        X, y = training_set(ctx, p["seed_index"], n_train)
        theta, l2 = np.asarray(p["theta"]), p["l2"]
        assert grad_norm(theta, X, y, l2) <= GRAD_TOL
        lam1 = np.linalg.eigvalsh(hessian(theta, X, y, l2))[-1]
        assert abs(lam1 - p["lambda_1"]) <= 1e-10 * abs(lam1)
        assert lam1 <= p["lambda_sup"]


def test_l2_shift_matches_dense_hessian(ctx, experiment):
    """tr and ‖·‖_F² of the Hessian of L + λ/2‖θ‖² against l2_shift of the closed-form moments."""
    n_train = experiment.details["config"]["n_train"]
    cases = [(np.asarray(p["theta"]), p["seed_index"]) for p in experiment.details["points"][:2]]
    rng = np.random.default_rng(7)
    cases.append((rng.normal(size=D), 0))  # off a critical point too: the r_i terms matter
    for theta, k in cases:
        X, y = training_set(ctx, k, n_train)
        W, b, v, c = theta[:6].reshape(N, M), theta[6:9], theta[9:12], theta[12]
        mom = ce_hessian_moments(W, b, v, c, X, y, "tanh")
        for l2 in (0.0, 0.3):
            H = hessian(theta, X, y, l2)
            tr, tr2 = l2_shift(mom.trace, mom.trace_sq, D, l2)
            assert abs(tr - np.trace(H)) <= REL * abs(np.trace(H))
            assert abs(tr2 - np.sum(H * H)) <= REL * np.sum(H * H)
            # the WS bounds move with the spectrum: λ_sup(H + λI) = λ_sup(H) + λ
            lsup = ws_bounds(tr, tr2, D).lmax_upper
            assert lsup == pytest.approx(mom.lambda_sup + l2, rel=1e-12)
            assert np.linalg.eigvalsh(H)[-1] <= lsup


def test_dependence_passes_and_is_deterministic(ctx):
    ev = get("ws.dependence").run("E", ctx)
    assert ev.passed, ev.summary
    for k in ("v_norm", "N", "rho"):
        assert ev.metric[f"spearman_{k}"] >= 0.8
    _figures_exist(ctx, ev)
    again = get("ws.dependence").run("E", Context(quick=True, report_dir=ctx.report_dir))
    assert again.metric == ev.metric


def test_overfit_passes(ctx):
    ev = get("ws.overfit").run("E", ctx)
    assert ev.passed, ev.summary
    assert ev.metric["monotone_seeds"] == ev.metric["seeds"]
    assert ev.metric["slope_scaled_min"] > 0
    assert ev.metric["last_lambda_sup_scaled_max"] < 1e-100
    _figures_exist(ctx, ev)


def test_macro_f1_by_hand():
    y = np.array([0, 0, 1, 1, 1.0])
    pred = np.array([0, 1, 1, 1, 0.0])
    # class 0: TP 1, FP 1, FN 1 → 1/2; class 1: TP 2, FP 1, FN 1 → 2/3
    assert macro_f1(y, pred) == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert macro_f1(y, y) == 1.0


def test_correlation_power_matches_simulation():
    """Fisher-z power of a two-sided Spearman test at ρ = 0.2 against a simulation with bivariate normals."""
    from checks.ws.experiment import PLANNED_UNITS, correlation_power

    assert correlation_power(0.2, PLANNED_UNITS) >= 0.8 > correlation_power(0.2, 150)
    rng = np.random.default_rng(3)
    n, rho, hits, reps = 120, 0.2, 0, 1500
    from scipy.stats import pearsonr

    for _ in range(reps):
        x = rng.standard_normal(n)
        y = rho * x + np.sqrt(1 - rho ** 2) * rng.standard_normal(n)
        hits += pearsonr(x, y).pvalue < 0.05
    assert abs(hits / reps - correlation_power(0.2, n)) < 0.05


def test_correlation_interval_covers_and_separates():
    from checks.ws.experiment import correlation_test

    rng = np.random.default_rng(4)
    x = rng.standard_normal(200)
    est, lo, hi = correlation_test(x, -x + 0.3 * rng.standard_normal(200), seed=1)
    assert lo <= est <= hi < -0.8
    est, lo, hi = correlation_test(x, rng.standard_normal(200), seed=1)
    assert lo < 0 < hi and hi - lo < 0.4
