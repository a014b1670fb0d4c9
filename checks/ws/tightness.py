r"""ws.tightness: the paper's "the bound is tight in practice", judged on its own.

At independent critical points of the ws.experiment problem (M = 2, N = 3, tanh, two Gaussian classes, BCE + λ/2‖θ‖²
with λ = 10⁻², D = 13; one critical point per data seed, each with its own training set and initialisation, so the
units are independent and need no cluster resampling), with μ = tr H/D, σ² = tr H²/D − μ² of H_λ = H + λI:

* the paper's reading, r = λ_1/λ_sup (λ_sup = μ + √(D−1)σ). It is not shift-invariant (adding cI to H moves it
  towards 1), so beside it
* τ = (λ_1 − μ)/(σ√(D−1)) ∈ [1/(D−1), 1] (τ = 1 exactly when λ_2 = … = λ_D): the fraction of the WS slack that λ_1
  uses, unchanged by the L2 shift.

Both are compared with a stated baseline: GOE matrices of the same D, shifted and scaled to the same μ and σ (their
τ does not depend on μ, σ; their r is computed at each point's own μ, σ). And the reason: the spread of the bulk
(λ_2 − λ_D)/σ and the share λ_1²/‖H‖_F².

Fixed before the run (SPEC §0): "tight" means the mean over critical points is above 1 − δ with δ = 0.2, for each of
r and τ: statement region (0.8, ∞), negation (−∞, 0.8]; the 95% bootstrap interval over points decides. Planned
units: :data:`PLANNED_POINTS` (a per-point SD of 0.25 for τ, so that the interval is no wider than δ/2). The claim's
word is :func:`checks.evidence.stats.combine_parts` of the two readings.
"""

from __future__ import annotations

import math

import numpy as np

from checks.evidence import figures
from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.stats import Regions, bootstrap_ci, combine_parts, region_verdict, units_for_width
from checks.runners.campaign import sweep
from checks.ws.experiments import GRAD_TOL, find_critical_point, random_net, torch_one_thread, training_set
from numerics.ws import ws_bounds

ID = "ws.tightness"
N_HID, M_IN, L2 = 3, 2, 1e-2
DIM = N_HID * (M_IN + 2) + 1
DELTA = 0.2
REGIONS = Regions(DELTA, (1 - DELTA, math.inf), ((-math.inf, 1 - DELTA),),
                  describe="mean > 0.8: tight (statement); ≤ 0.8: not tight")
PILOT_SD = 0.25
PLANNED_POINTS = max(units_for_width(PILOT_SD, DELTA / 2), 40)


def _config(quick: bool) -> dict:
    return {"points": 8 if quick else PLANNED_POINTS, "n_train": 60 if quick else 100, "goe": 200 if quick else 4000}


def _point(args):
    seed, k, n_train = args
    ctx = Context(seed=seed)
    with torch_one_thread():
        X, y = training_set(ctx, 1000 + k, n_train)
        cp = find_critical_point(X, y, random_net(ctx.rng(f"ws.tightness/init/{k}"), N_HID, M_IN), L2, N=N_HID)
    if not cp.grad_norm <= GRAD_TOL:
        return {"k": k, "converged": False, "grad_norm": cp.grad_norm}
    H = cp.hessian + L2 * np.eye(DIM)
    ev = np.linalg.eigvalsh(H)
    tr, tr2 = float(np.trace(H)), float(np.sum(H * H))
    B = ws_bounds(tr, tr2, DIM)
    mu = tr / DIM
    sig = math.sqrt(max(tr2 / DIM - mu * mu, 0.0))
    return {"k": k, "converged": True, "grad_norm": cp.grad_norm, "lambda_1": float(ev[-1]), "mu": mu, "sigma": sig,
            "lambda_sup": B.lmax_upper, "r": float(ev[-1] / B.lmax_upper),
            "tau": float((ev[-1] - mu) / (sig * math.sqrt(DIM - 1))), "bulk_spread": float((ev[-2] - ev[0]) / sig),
            "share": float(ev[-1] ** 2 / tr2)}


def goe_tau(rng, D: int, count: int) -> np.ndarray:
    """τ of GOE matrices of size D (shift- and scale-invariant, so their μ and σ need not be matched for τ)."""
    out = np.empty(count)
    for i in range(count):
        A = rng.standard_normal((D, D))
        G = (A + A.T) / 2
        ev = np.linalg.eigvalsh(G)
        mu = ev.mean()
        s = math.sqrt(max(np.mean(ev * ev) - mu * mu, 1e-300))
        out[i] = (ev[-1] - mu) / (s * math.sqrt(D - 1))
    return out


def level_E(ctx: Context) -> Outcome:
    cfg = _config(ctx.quick)
    rows = sweep(ctx, _point, [(ctx.seed, k, cfg["n_train"]) for k in range(cfg["points"])],
                 "ws.tightness: critical points")
    pts = [r for r in rows if r["converged"]]
    planned = 8 if ctx.quick else PLANNED_POINTS
    r = np.array([p["r"] for p in pts])
    tau = np.array([p["tau"] for p in pts])
    est_r, lo_r, hi_r = bootstrap_ci(r, seed=ctx.seed)
    est_t, lo_t, hi_t = bootstrap_ci(tau, seed=ctx.seed)
    v_r = region_verdict(lo_r, hi_r, REGIONS, units=len(pts), planned=planned)
    v_t = region_verdict(lo_t, hi_t, REGIONS, units=len(pts), planned=planned)
    verdict, parts = combine_parts({"λ_1/λ_sup": v_r, "τ": v_t})
    g = goe_tau(ctx.rng("ws.tightness/goe"), DIM, cfg["goe"])
    g_r = np.array([(p["mu"] + gt * p["sigma"] * math.sqrt(DIM - 1)) / p["lambda_sup"]
                    for p in pts for gt in g[:50]]) if pts else np.array([math.nan])
    share = np.array([p["share"] for p in pts])
    spread = np.array([p["bulk_spread"] for p in pts])
    in_range = bool(np.all((tau >= 1 / (DIM - 1) - 1e-9) & (tau <= 1 + 1e-9))) and bool(np.all(r <= 1 + 1e-12))
    passed = len(pts) >= math.ceil(0.8 * cfg["points"]) and in_range
    metric = {"points": len(pts), "planned_points": planned, "ratio_mean": est_r, "ratio_ci_lo": lo_r,
              "ratio_ci_hi": hi_r, "tau_mean": est_t, "tau_ci_lo": lo_t, "tau_ci_hi": hi_t, "delta": DELTA,
              "goe_tau_mean": float(g.mean()), "goe_ratio_mean": float(np.nanmean(g_r)),
              "share_mean": float(share.mean()) if len(share) else math.nan,
              "bulk_spread_mean": float(spread.mean()) if len(spread) else math.nan}
    summary = (f"{len(pts)}/{cfg['points']} independent critical points (D = {DIM}, λ = {L2}; planned {planned}): "
               f"λ_1/λ_sup = {est_r:.3f} [{lo_r:.3f}, {hi_r:.3f}] (GOE at the same μ, σ: "
               f"{metric['goe_ratio_mean']:.3f}); τ = {est_t:.3f} [{lo_t:.3f}, {hi_t:.3f}] (GOE "
               f"{metric['goe_tau_mean']:.3f}); threshold 0.8 (δ = {DELTA}): "
               f"{parts} → {verdict}; why: λ_1²/‖H‖_F² = {metric['share_mean']:.2f}, bulk spread "
               f"(λ_2 − λ_D)/σ = {metric['bulk_spread_mean']:.2f}")
    fig, (ax, bx) = figures.figure(2, width=4.6, height=3.8)
    bins = np.linspace(0, 1, 26)
    ax.hist(tau, bins=bins, alpha=0.7, label="critical points", density=True)
    ax.hist(g, bins=bins, alpha=0.5, label="GOE, same D", density=True)
    ax.axvline(1 - DELTA, color="0.3", ls="--", lw=1, label="threshold 0.8")
    ax.set(xlabel="τ = (λ₁ − μ)/(σ√(D−1))", ylabel="density", title="shift-invariant tightness")
    ax.legend(fontsize=8)
    bx.scatter(share, tau, s=14)
    bx.set(xlabel="λ₁²/‖H‖_F²", ylabel="τ", title="why: one dominant eigenvalue")
    details = {"config": cfg, "points": rows, "regions": REGIONS.describe,
               "statement_test": {"paper_statement": "the Wolkowicz–Styan bound λ_sup is tight in practice",
                                  "effect": "mean over independent critical points of λ_1/λ_sup and of τ",
                                  "symbol": "τ = (λ_1 − μ)/(σ√(D−1))", "delta": DELTA, "planned_units": planned,
                                  "estimate": est_t, "ci": [lo_t, hi_t], "verdict": verdict, "parts": parts}}
    return Outcome(passed, metric, summary, details=details, figures=(figures.save(ctx, fig, "ws_tightness.png"),),
                   verdict=verdict)
