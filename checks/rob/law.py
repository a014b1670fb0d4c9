r"""rob.law: trained width-m nets that fit pure-noise ±1 labels ε below the noise floor have
Lip ≥ c ε √(n/(m̄ log(C m̄ n d/ε))): certified Lipschitz brackets against √(n/m̄) over m and n
(d = 32, n = 256, m ∈ {16, 64, 256, 1024}).

Evaluators: :func:`numerics.rob.lipschitz` (certified brackets on :class:`numerics.rob.Sphere`),
:func:`numerics.rob.canonicalize`. No derivation: the level is an experiment (E), Shmalo's simulation
rerun with certified Lipschitz brackets instead of sampling.

Data: n points uniform on S^{d−1}, pure-noise labels ±1 (noise level σ² = 1). Nets
f(x) = Σ_k a_k ReLU(w_k·x + b_k) + v·x + c are trained full-batch with Adam on
MSE + λ·(path norm Σ_k |a_k| ‖(w_k, b_k)‖) until they fit ε below the noise floor,
(1/n) Σ (f(x_i) − y_i)² ≤ 1 − ε. For each trained net :func:`numerics.rob.lipschitz` on Sphere(d) gives
a certified bracket [lower, upper] of the geodesic Lipschitz constant (exact in d = 3; in d = 32 with
overlapping caps the upper end is the all-patterns bound, so we report the gap). The law predicts
Lip ≥ c ε √(n / (m̄ log(C m̄ n d/ε))), m̄ = m + 1 for ReLU.

The paper's statement is a one-sided bound, so two things are reported separately (SPEC §0, verdicts):

* **the bound** — pass criterion, stated before running: (1) every net fits with ε ≥ 0.5
  (``TOL["rob_law_eps_min"]``) and (2) every net's *certified lower* end is at least the law's right-hand side
  with c = 1, C = 1;
* **the rate** — the fitted exponent β of Lip_lower ∝ (n/m̄)^β against the law's 0.5. A lower bound does not
  predict the Lipschitz constant of trained nets, so β is evidence, not a pass criterion; its verdict is
  ``reproduced`` only if β ≥ 0.4 (``TOL["rob_law_rate_min"]``; earlier versions required β > 0, a criterion
  the paper does not state).

The level's SPEC §0 verdict: ``contradicted`` if a fitting net's certified lower end is below the bound,
``not reproduced`` if the nets do not fit (the hypothesis is not met), else ``reproduced`` when the rate is
reproduced too and ``partially reproduced`` when it is not.
"""

from __future__ import annotations

import math
import time

import numpy as np

from checks.evidence import Outcome
from checks.registry import Context
from checks.tol import TOL
from numerics import rob

ID = "rob.law"
LAMBDA_PATH = 1e-4


def sphere_data(rng: np.random.Generator, n: int, d: int):
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.choice([-1.0, 1.0], size=n)
    return X, y


def train(X, y, m: int, seed: int, *, steps: int, lr: float = 1e-2, lam: float = LAMBDA_PATH,
          target_mse: float = 0.05):
    """Full-batch Adam on MSE + λ·path-norm, stopped once MSE ≤ target_mse; returns (net, MSE)."""
    import torch

    torch.manual_seed(seed)
    n, d = X.shape
    Xt, yt = torch.tensor(X), torch.tensor(y)
    W = torch.nn.Parameter(torch.randn(m, d, dtype=torch.float64) / math.sqrt(d))
    b = torch.nn.Parameter(0.1 * torch.randn(m, dtype=torch.float64))
    a = torch.nn.Parameter(torch.randn(m, dtype=torch.float64) / math.sqrt(m))
    v = torch.nn.Parameter(torch.zeros(d, dtype=torch.float64))
    c = torch.nn.Parameter(torch.zeros((), dtype=torch.float64))
    opt = torch.optim.Adam([W, b, a, v, c], lr=lr)
    for step in range(steps):
        opt.zero_grad()
        f = torch.relu(Xt @ W.T + b) @ a + Xt @ v + c
        mse = torch.mean((f - yt) ** 2)
        if step % 25 == 0 and float(mse.detach()) <= target_mse:
            break
        path = torch.sum(a.abs() * torch.sqrt(torch.sum(W**2, 1) + b**2))
        (mse + lam * path).backward()
        opt.step()
    with torch.no_grad():
        f = torch.relu(Xt @ W.T + b) @ a + Xt @ v + c
        mse = float(torch.mean((f - yt) ** 2))
    net = tuple(p.detach().numpy().copy() for p in (W, b, a, v)) + (float(c.detach()),)
    return net, mse


def law_rhs(eps: float, n: int, mbar: int, d: int, c: float = 1.0, C: float = 1.0) -> float:
    return c * eps * math.sqrt(n / (mbar * math.log(C * mbar * n * d / eps)))


def fit_exponent(x, y) -> float:
    """Least-squares slope of log y against log x."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(lx, ly, 1)[0])


def level_E(ctx: Context) -> Outcome:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small matrices: one thread beats contended threads on a shared machine
    try:
        return _run(ctx)
    finally:
        torch.set_num_threads(threads)


def _run(ctx: Context) -> Outcome:
    d = 32
    if ctx.quick:
        grid_m, n_main, grid_n, m_for_n, steps, limit = (8, 32), 48, (24, 48), 16, 400, 3.0
    else:
        grid_m, n_main, grid_n, m_for_n, steps, limit = (16, 64, 256, 1024), 256, (64, 128, 256), 64, 1500, 15.0
    rng = ctx.rng("rob.law")
    rows = []
    jobs = [("m", n_main, m) for m in grid_m] + [("n", n, m_for_n) for n in grid_n if n != n_main]
    data, certify_s = {}, []
    t0 = time.perf_counter()
    for i, (grid, n, m) in enumerate(ctx.track(jobs, "rob.law: train + certify")):
        if n not in data:
            data[n] = sphere_data(rng, n, d)
        X, y = data[n]
        net, mse = train(X, y, m, seed=ctx.seed * 1000 + i, steps=steps)
        # certified bracket; the data (where the caps sit) seed its lower end, which is attained at a genuine
        # exact point of the sphere
        L = rob.lipschitz(net, rob.Sphere(d), seed=i, data_points=X, time_limit=limit, rel_gap=0.01)
        cf = rob.canonicalize(net, rob.Sphere(d))
        lower = float(L.lower)
        eps = 1 - mse
        rows.append({"grid": grid, "n": n, "m": m, "kinks": cf.m, "mse": mse, "eps": eps, "lower": lower,
                     "upper": float(L.upper), "gap": float(L.upper) / lower if lower > 0 else math.inf,
                     "sqrt_n_over_m": math.sqrt(n / (m + 1)),
                     "ratio_lower": lower / math.sqrt(n / (m + 1)),
                     "law_rhs": law_rhs(max(eps, 1e-12), n, m + 1, d), "exact": L.exact, "status": L.status})
        certify_s.append(round(L.seconds, 3))
    secs = time.perf_counter() - t0
    mrows = [r for r in rows if r["grid"] == "m"]
    beta_lo = fit_exponent([r["n"] / (r["m"] + 1) for r in mrows], [r["lower"] for r in mrows])
    beta_up = fit_exponent([r["n"] / (r["m"] + 1) for r in mrows], [r["upper"] for r in mrows])
    nrows = sorted([r for r in rows if r["m"] == m_for_n], key=lambda r: r["n"])
    beta_n = fit_exponent([r["n"] for r in nrows], [r["lower"] for r in nrows]) if len(nrows) > 1 else float("nan")
    fits = all(r["eps"] >= TOL["rob_law_eps_min"] for r in rows)
    law_ok = all(r["lower"] >= r["law_rhs"] for r in rows)
    passed = fits and law_ok
    rate_verdict = "reproduced" if beta_lo >= TOL["rob_law_rate_min"] else "not reproduced"
    verdict = {"bound": "holds" if law_ok else "violated", "rate": rate_verdict, "beta_lower": beta_lo,
               "law_rate": 0.5}
    # SPEC §0 verdict on the paper's statement: the bound is the claim, the rate is evidence beside it
    if not fits:
        overall = "not reproduced"  # the nets do not meet the hypothesis: the experiment says nothing
    elif not law_ok:
        overall = "contradicted"
    else:
        overall = "reproduced" if rate_verdict == "reproduced" else "partially reproduced"
    verdict["overall"] = overall
    fig = _plot(ctx, rows, beta_lo)
    worst_gap = max(r["gap"] for r in rows)
    log_factor = {r["m"]: math.log((r["m"] + 1) * r["n"] * d / max(r["eps"], 1e-12)) for r in mrows}
    above = min(r["lower"] / r["law_rhs"] for r in rows)
    summary = (f"d={d}, n={n_main}, m∈{list(grid_m)}: ε ≥ {min(r['eps'] for r in rows):.2f}; certified lower end ≥ "
               f"{above:.1f}× the law's RHS (c=C=1) for every net; Lip_lower ∝ (n/m̄)^{beta_lo:.2f} (the bound's "
               f"exponent is 0.5: trained nets sit far above it, so the m-dependence is weak); over n at m="
               f"{m_for_n}: ∝ n^{beta_n:.2f}; bracket upper/lower up to ×{worst_gap:.3f} (d=32, overlapping caps); "
               f"verdict: bound {verdict['bound']}, rate {rate_verdict} (β = {beta_lo:.2f} vs 0.5): {overall}")
    return Outcome(passed=passed, metric={"beta_lower": beta_lo, "beta_upper": beta_up, "beta_n_at_fixed_m": beta_n,
                                          "min_eps": min(r["eps"] for r in rows), "worst_gap": worst_gap,
                                          "min_lower_over_law_rhs": above},
                   summary=summary, details={"nets": rows, "log_factor": log_factor, "verdict": verdict,
                                             "criterion": f"eps >= {TOL['rob_law_eps_min']}; certified lower >= "
                                                          "law RHS (c=1, C=1)"},
                   figures=(fig,), verdict=overall,
                   timing={"seconds_train_and_certify": round(secs, 3), "certify_s": certify_s})


def _plot(ctx: Context, rows, beta) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(9, 3.6))
    for grid, axi, key in (("m", ax[0], "m"), ("n", ax[1], "n")):
        rs = sorted([r for r in rows if r["grid"] == grid or (grid == "n" and r["m"] == rows[-1]["m"])],
                    key=lambda r: r["n"] / (r["m"] + 1))
        x = [r["n"] / (r["m"] + 1) for r in rs]
        axi.fill_between(x, [r["lower"] for r in rs], [r["upper"] for r in rs], alpha=0.25, label="certified bracket")
        axi.plot(x, [r["lower"] for r in rs], "o-", label="Lip lower (genuine points)")
        axi.plot(x, [r["sqrt_n_over_m"] for r in rs], "k--", label="√(n/m̄)")
        axi.plot(x, [r["law_rhs"] for r in rs], ":", label="law RHS (c=C=1)")
        for r in rs:
            axi.annotate(f"{key}={r[key]}", (r["n"] / (r["m"] + 1), r["lower"]), fontsize=7)
        axi.set_xscale("log")
        axi.set_yscale("log")
        axi.set_xlabel("n / m̄")
        axi.set_title("over m (n fixed)" if grid == "m" else "over n (m fixed)")
    ax[0].set_ylabel("geodesic Lipschitz constant on S^31")
    ax[0].legend(fontsize=7)
    fig.suptitle(f"rob.law: d=32, pure-noise ±1 labels; fitted exponent of lower end β={beta:.2f}")
    fig.tight_layout()
    path = ctx.figure_path("rob_law.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return "figures/rob_law.png"
