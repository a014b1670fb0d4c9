"""ws.dependence: λ_sup grows with ‖v‖, with N, and with the correlation of the samples (the paper's
qualitative findings, as sweeps over seeds).

Evaluator: :func:`numerics.ws.ce_hessian_moments` (λ_sup); nets and data in :mod:`checks.ws.experiments`.
"""

from __future__ import annotations

import numpy as np

from checks.evidence import figures
from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.stats import StatementTest, combine
from checks.ws.experiments import (
    ACT,
    MIN_SPEARMAN,
    lambda_sup_at,
    random_net,
    spearman,
    two_gaussians,
    unpack,
)

ID = "ws.dependence"

# The paper's statement (qualitative: λ_sup grows with each quantity), tested as a sign per sweep; each
# seed draws its own data and net. Fixed before the run.
STATEMENTS = {
    "v_norm": "λ_sup grows with ‖v‖",
    "N": "λ_sup grows with the hidden width N",
    "rho": "λ_sup grows with the correlation ρ of the samples",
}


def dependence_sweeps(ctx: Context, seeds: int, n: int = 100) -> dict[str, dict]:
    """λ_sup at random nets (W, v ~ N(0, 1), b ~ N(0, 1/4), c = 0) along three sweeps, per seed.

    * ‖v‖: v = s·u with u a random unit vector, N = 3, two-Gaussian data;
    * N: the first N of 16 random units (standard parametrisation: v_k ~ N(0, 1)), two-Gaussian data;
    * ρ: x_i = √ρ·u + √(1−ρ)·ξ_i (u, ξ_i ~ N(0, I₂)), so corr(x_i, x_j) = ρ entrywise; labels are fair
      coin flips independent of x, so only the geometry of the inputs changes. N = 3.
    """
    grids = {"v_norm": np.geomspace(0.25, 4.0, 9), "N": np.array([1, 2, 3, 4, 6, 8, 12, 16]),
             "rho": np.linspace(0.0, 0.95, 9)}
    out = {k: np.zeros((seeds, len(g))) for k, g in grids.items()}
    for s in ctx.track(range(seeds), "ws.dependence: seeds"):
        rng = ctx.rng(f"ws.dependence/{s}")
        X, y = two_gaussians(rng, n)
        th = random_net(rng, 3, 2)
        u = th[9:12] / np.linalg.norm(th[9:12])
        for i, t in enumerate(grids["v_norm"]):
            out["v_norm"][s, i] = lambda_sup_at(np.r_[th[:9], t * u, th[12:]], X, y, 3)
        big = random_net(rng, 16, 2)
        W, b, v, c = unpack(big, 16, 2)
        for i, Nk in enumerate(grids["N"]):
            out["N"][s, i] = lambda_sup_at(np.r_[W[:Nk].ravel(), b[:Nk], v[:Nk], c], X, y, Nk)
        common, xi = rng.normal(size=2), rng.normal(size=(n, 2))
        y_coin = rng.integers(0, 2, n).astype(float)
        for i, rho in enumerate(grids["rho"]):
            out["rho"][s, i] = lambda_sup_at(th, np.sqrt(rho) * common + np.sqrt(1 - rho) * xi, y_coin, 3)
    return {k: {"grid": grids[k], "per_seed": out[k]} for k in grids}


def level_E(ctx: Context) -> Outcome:
    seeds = 6 if ctx.quick else 32
    sweeps = dependence_sweeps(ctx, seeds)
    metric, details = {"seeds": seeds}, {"activation": ACT, "bias": True}
    for name, sw in sweeps.items():
        per = sw["per_seed"]
        mean, se = per.mean(0), per.std(0, ddof=1) / np.sqrt(seeds)
        sw["mean"], sw["stderr"] = mean, se
        per_rho = [spearman(sw["grid"], row) for row in per]
        metric[f"spearman_{name}"] = spearman(sw["grid"], mean)
        metric[f"seeds_increasing_{name}"] = float(np.mean(np.array(per_rho) > 0))
        details[name] = {"grid": sw["grid"], "mean": mean, "stderr": se, "per_seed_spearman": per_rho}
    passed = all(metric[f"spearman_{k}"] >= MIN_SPEARMAN for k in sweeps)
    tests = {k: StatementTest(STATEMENTS[k], "per-seed Spearman(swept quantity, λ_sup), mean over seeds", "sign")
             .decide(details[k]["per_seed_spearman"], seed=ctx.seed) for k in sweeps}
    verdict = combine([t.verdict for t in tests.values()])
    weakest = min(tests.values(), key=lambda t: t.ci[0] if np.isfinite(t.ci[0]) else -np.inf)
    details["statement_tests"] = {k: t.to_json() for k, t in tests.items()}
    details["statement_test"] = {**weakest.to_json(), "paper_statement": "λ_sup grows with ‖v‖, with N and with "
                                 "the correlation of the samples", "verdict": verdict,
                                 "effect": f"weakest sweep ({weakest.paper_statement}): per-seed Spearman",
                                 "symbol": "weakest mean per-seed ρ_s(sweep, λ_sup)"}
    fig, axes = figures.figure(3, width=4.4, height=3.8)
    labels = {"v_norm": "‖v‖, N = 3 (dimensionless)", "N": "hidden width N (units)",
              "rho": "sample correlation ρ, coin labels (dimensionless)"}
    for ax, (name, sw) in zip(axes, sweeps.items(), strict=True):
        t = tests[name]
        ax.errorbar(sw["grid"], sw["mean"], yerr=sw["stderr"], marker="o", ms=4, capsize=3, label="mean ± s.e.")
        ax.set(xlabel=labels[name], ylabel="λ_sup (dimensionless)",
               title=f"ρ_s per seed {t.estimate:+.2f} [{t.ci[0]:+.2f}, {t.ci[1]:+.2f}]")
        if name == "v_norm":
            figures.log_axis(ax, "x")
        ax.legend(loc="upper left")
    fig.suptitle(f"ws.dependence: λ_sup at random tanh nets, M = 2, n = 100, {seeds} seeds: {verdict}")
    figs = (figures.save(ctx, fig, "ws_dependence.png"),)
    s = {k: metric[f"spearman_{k}"] for k in sweeps}
    f = {k: metric[f"seeds_increasing_{k}"] for k in sweeps}
    summary = (f"seed-mean λ_sup over {seeds} seeds (tanh): Spearman ‖v‖ {s['v_norm']:+.2f}, N {s['N']:+.2f}, "
               f"ρ {s['rho']:+.2f} (pass: each ≥ {MIN_SPEARMAN}); per-seed increasing: "
               f"{f['v_norm']:.0%}, {f['N']:.0%}, {f['rho']:.0%}")
    summary += "; " + ", ".join(f"{k} [{t.ci[0]:+.2f}, {t.ci[1]:+.2f}]" for k, t in tests.items()) + f": {verdict}"
    return Outcome(passed, metric, summary, details, figs, verdict=verdict)
