r"""rob.sharpness: Proposition 10.1 — at m = 2n the width-2n construction (s = 1/4) fits arbitrary labels with
Lip = O(1), so the law's lower bound is tight up to its log factor at m ≍ n.

The construction f = Σ_i (y_i/s)[ReLU(x_i·x − (1−s)) − ReLU(x_i·x − 1)] (:func:`checks.rob.width_2n.width2n_net`)
interpolates when max_{i≠j} x_i·x_j ≤ 1 − s = 3/4; its caps are disjoint when max x_i·x_j ≤ 2(1−s)² − 1 = 1/8,
and then Lip = √7 exactly (rob.width_2n). At the author's settings (n = 100, d = 200; n = 200, d = 400) the caps
overlap and the constant is not known in closed form.

* **P** — the probability of each condition over random data on S^{d−1}, as a function of (n, d). For one pair,
  P(x·y > τ) = ½ I_{1−τ²}((d−1)/2, ½) (τ ≥ 0; the density of x·y is c_d (1 − t²)^{(d−3)/2}), evaluated at 50 digits
  against mpmath quadrature of that density (digits agreed). The pairs' inner products are pairwise independent,
  so the pooled Monte Carlo fraction of pairs above τ has the exact binomial variance: it must lie within 4.5 of its
  standard errors of p. The events "max ≤ τ" are bracketed rigorously by 1 − C(n, 2)p ≤ P ≤ (1 − p)^{⌊n/2⌋}
  (union bound; ⌊n/2⌋ disjoint, independent pairs), and each Monte Carlo estimate's 99.9% Wilson interval must
  meet that bracket.
* **E** — over n at fixed n/d = ½ (n ∈ {25, 50, 100, 200}, d = 2n, the author's two settings included), per seed
  its own data and labels, the construction's certified Lipschitz bracket on S^{d−1}
  (:func:`numerics.rob.lipschitz`: the cap-overlap graph, :mod:`numerics.rob.cap_graph`). The statement "Lip = O(1)"
  is judged by the fitted exponent β of Lip in n (SPEC §0, fixed before the run, :data:`REGIONS`): δ = 0.1, the
  statement region β < δ, the negation β ≥ δ. Per seed the slope of every choice of values inside the brackets
  lies in [β_min, β_max]; the deciding interval runs from the lower end of β_min's 95% bootstrap interval over
  seeds to the upper end of β_max's. Planned units: :data:`PLANNED_SEEDS` seeds (a pilot of 4 seeds gave a
  per-seed slope SD of 0.02, so 3 seeds already give a 95% interval narrower than δ; 6 are run).
"""

from __future__ import annotations

import math
import time

import mpmath
import numpy as np

from checks.evidence import figures
from checks.evidence.outcome import Outcome, digits_agreed
from checks.evidence.registry import Context
from checks.evidence.stats import Regions, bootstrap_ci, region_verdict, units_for_width
from checks.evidence.tol import TOL
from checks.rob.law import slope_bracket
from checks.rob.width_2n import width2n_net
from checks.runners.campaign import sweep
from numerics import rob

ID = "rob.sharpness"
S_CONST = 0.25
INTERP_T = 1 - S_CONST                 # 3/4
DISJOINT_T = 2 * (1 - S_CONST) ** 2 - 1  # 1/8
DELTA = 0.1
REGIONS = Regions(delta=DELTA, statement=(-math.inf, DELTA), negation=((DELTA, math.inf),),
                  describe="β < 0.1: Lip = O(1) in n at fixed n/d; β ≥ 0.1: Lip grows with n")
PILOT_SD = 0.02
PLANNED_SEEDS = max(units_for_width(PILOT_SD, DELTA), 6)
PAPER = "Proposition 10.1: at m = 2n the width-2n construction (s = 1/4) fits arbitrary labels with Lip = O(1)"


# ------------------------------------------------------------------------------ P: the two conditions
def pair_tail(tau, d: int):
    """P(x·y > τ) for independent uniform x, y on S^{d−1}, τ ∈ [0, 1): ½ I_{1−τ²}((d−1)/2, ½) (mpmath)."""
    tau = mpmath.mpf(tau)
    return mpmath.betainc(mpmath.mpf(d - 1) / 2, mpmath.mpf(1) / 2, 0, 1 - tau * tau, regularized=True) / 2


def pair_tail_quadrature(tau, d: int):
    """The same tail from its definition: ∫_τ^1 c_d (1 − t²)^{(d−3)/2} dt, c_d = Γ(d/2)/(√π Γ((d−1)/2)), by
    tanh-sinh quadrature at 40 guard digits above the caller's precision (at 50 digits alone it keeps only ~22 of
    a 10⁻³⁸ tail in d = 200)."""
    with mpmath.workdps(mpmath.mp.dps + 40):
        return +_tail_quad(tau, d)


def _tail_quad(tau, d: int):
    c = mpmath.gamma(mpmath.mpf(d) / 2) / (mpmath.sqrt(mpmath.pi) * mpmath.gamma(mpmath.mpf(d - 1) / 2))
    e = mpmath.mpf(d - 3) / 2
    tau = mpmath.mpf(tau)
    # the integrand falls by e per width w = (1 − τ²)/(2eτ) past τ: split geometrically at τ + 2^k w
    w = (1 - tau * tau) / (2 * e * tau) if e > 0 and tau > 0 else mpmath.mpf(1)
    pts = [tau] + [tau + w * 2 ** k for k in range(-2, 40) if tau + w * 2 ** k < 1] + [mpmath.mpf(1)]
    return c * mpmath.quad(lambda t: (1 - t * t) ** e, pts)


def max_ip_bounds(p: float, n: int) -> tuple[float, float]:
    """Rigorous [lower, upper] of P(max_{i≠j} x_i·x_j ≤ τ) from the pair tail p: the union bound, and ⌊n/2⌋
    disjoint (independent) pairs."""
    return max(0.0, 1.0 - math.comb(n, 2) * p), (1.0 - p) ** (n // 2)


def wilson(k: int, N: int, z: float = 3.29) -> tuple[float, float]:
    """Wilson score interval (z = 3.29: 99.9%)."""
    if N == 0:
        return 0.0, 1.0
    ph = k / N
    den = 1 + z * z / N
    mid = (ph + z * z / (2 * N)) / den
    half = z * math.sqrt(ph * (1 - ph) / N + z * z / (4 * N * N)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def _mc_conditions(args):
    seed, n, d, trials = args
    rng = np.random.default_rng([seed, n, d])
    maxes, above = [], {INTERP_T: 0, DISJOINT_T: 0}
    iu = np.triu_indices(n, 1)
    for _ in range(trials):
        X = rng.standard_normal((n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        G = (X @ X.T)[iu]
        maxes.append(float(G.max()))
        for t in above:
            above[t] += int(np.sum(G > t))
    return {"n": n, "d": d, "trials": trials, "pairs": trials * len(iu[0]), "max": maxes,
            "above": {str(t): c for t, c in above.items()}}


def level_P(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    digits, rows = [], []
    with mpmath.workdps(dps):
        for tau in (INTERP_T, DISJOINT_T, 0.5):
            for d in (3, 10, 200, 400):
                a, b = pair_tail(tau, d), pair_tail_quadrature(tau, d)
                digits.append(digits_agreed(a, b))
                rows.append({"tau": tau, "d": d, "p": float(a), "digits": digits[-1]})
    grid_n = (10, 25) if ctx.quick else (25, 50, 100, 200)
    grid_d = (20, 50) if ctx.quick else (50, 100, 200, 400, 800)
    trials = 60 if ctx.quick else 200
    mc = [_mc_conditions((ctx.seed, n, d, trials)) for n in grid_n for d in grid_d]
    table, ok_mc = [], True
    for r in mc:
        n, d, N = r["n"], r["d"], r["trials"]
        for name, tau in (("interpolation", INTERP_T), ("disjoint caps", DISJOINT_T)):
            p = float(pair_tail(tau, d))
            k = sum(x <= tau for x in r["max"])
            lo_b, up_b = max_ip_bounds(p, n)
            w_lo, w_hi = wilson(k, N)
            meets = w_lo <= up_b + 1e-15 and w_hi >= lo_b - 1e-15
            pooled = r["above"][str(tau)] / r["pairs"]
            se = math.sqrt(max(p * (1 - p), 1e-300) / r["pairs"])
            z = (pooled - p) / se if se > 0 else 0.0
            good = meets and abs(z) <= 4.5
            ok_mc &= good
            table.append({"condition": name, "n": n, "d": d, "tau": tau, "pair_tail": p, "P_mc": k / N,
                          "wilson_99.9": [w_lo, w_hi], "bounds": [lo_b, up_b], "pooled_pair_fraction": pooled,
                          "pair_z": z, "ok": good})
    at_author = [t for t in table if (t["n"], t["d"]) in ((100, 200), (200, 400))]
    ok = min(digits) >= dps - 5 and ok_mc
    metric = {"min_digits": min(digits), "grid_points": len(mc), "mc_trials": trials,
              "max_abs_pair_z": max(abs(t["pair_z"]) for t in table)}
    for t in at_author:
        metric[f"P_{t['condition'].replace(' ', '_')}_n{t['n']}_d{t['d']}"] = t["P_mc"]
    author = "; ".join(f"(n={t['n']}, d={t['d']}) P({t['condition']}) ≈ {t['P_mc']:.2f}" for t in at_author)
    summary = (f"pair tail ½I_(1−τ²)((d−1)/2, ½) = the density's quadrature to ≥ {min(digits):.0f} digits at "
               f"{len(rows)} (τ, d); Monte Carlo over {len(mc)} (n, d) × {trials} draws: every estimate meets the "
               f"rigorous bracket [1 − C(n,2)p, (1−p)^⌊n/2⌋], pooled pair fractions within "
               f"{metric['max_abs_pair_z']:.1f} SE of p" + (f"; {author}" if author else ""))
    return Outcome(ok, metric, summary, details={"tail": rows, "conditions": table})


# ------------------------------------------------------------------------------ E: Lip = O(1) over n
def _config(quick: bool) -> dict:
    if quick:
        return {"n": (10, 20), "ratio": 0.5, "seeds": 3, "time_limit": 20.0}
    return {"n": (25, 50, 100, 200), "ratio": 0.5, "seeds": PLANNED_SEEDS, "time_limit": 60.0}


def _seed_rows(args) -> list[dict]:
    seed, k, cfg = args
    rng = Context(seed=seed).rng(f"rob.sharpness/seed/{k}")
    rows = []
    for n in cfg["n"]:
        d = int(round(n / cfg["ratio"]))
        X = rng.standard_normal((n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        y = rng.choice([-1.0, 1.0], size=n)
        W, b, a, v, c = width2n_net(X.tolist(), y.tolist(), S_CONST)
        net = (np.asarray(W, float), np.asarray([float(t) for t in b]), np.asarray(a, float), np.zeros(d), 0.0)
        G = X @ X.T
        np.fill_diagonal(G, -np.inf)
        fx = np.maximum(X @ net[0].T + net[1], 0.0) @ net[2]
        L = rob.lipschitz(net, rob.Sphere(d), seed=k, time_limit=cfg["time_limit"])
        rows.append({"seed_index": k, "n": n, "d": d, "max_ip": float(G.max()),
                     "interpolates": bool(G.max() <= INTERP_T), "caps_disjoint": bool(G.max() <= DISJOINT_T),
                     "interp_residual": float(np.max(np.abs(fx - y))), "lower": float(L.lower),
                     "upper": float(L.upper), "gap": float(L.gap), "status": L.status, "method": L.method,
                     "seconds": round(L.seconds, 3)})
    return rows


def level_E(ctx: Context) -> Outcome:
    cfg = _config(ctx.quick)
    t0 = time.perf_counter()
    per_seed = sweep(ctx, _seed_rows, [(ctx.seed, k, cfg) for k in range(cfg["seeds"])], "rob.sharpness: seeds")
    rows = [r for rs in per_seed for r in rs]
    slopes = [slope_bracket([r["n"] for r in rs], [r["lower"] for r in rs], [r["upper"] for r in rs])
              for rs in per_seed]
    b_lo, b_up, b_min, b_max = (list(col) for col in zip(*slopes, strict=True))
    est = float(np.mean(b_lo))
    ci_min, ci_max = bootstrap_ci(b_min, seed=ctx.seed), bootstrap_ci(b_max, seed=ctx.seed)
    ci = (ci_min[1], ci_max[2])
    planned = PLANNED_SEEDS if not ctx.quick else 3
    verdict = region_verdict(*ci, REGIONS, units=len(per_seed), planned=planned)
    width_ok = np.isfinite(ci[0]) and ci[1] - ci[0] <= DELTA
    worst_gap = max(r["gap"] for r in rows)
    all_interp = all(r["interpolates"] for r in rows)
    passed = (all(0 < r["lower"] <= r["upper"] < math.inf for r in rows) and worst_gap <= 0.01
              and all(np.isfinite(b_min + b_max)) and all_interp)
    author = [r for r in rows if (r["n"], r["d"]) in ((100, 200), (200, 400))]
    metric = {"seeds": len(per_seed), "planned_seeds": planned, "nets": len(rows), "beta": est,
              "beta_ci_lo": ci[0], "beta_ci_hi": ci[1], "delta": DELTA, "ci_width_le_delta": bool(width_ok),
              "worst_gap": worst_gap, "lip_max_upper": max(r["upper"] for r in rows),
              "overlapping_cap_nets": sum(not r["caps_disjoint"] for r in rows)}
    summary = (f"width-2n construction (s = 1/4) at n/d = ½, n ∈ {list(cfg['n'])}, {len(per_seed)} seeds "
               f"(planned {planned}): {sum(r['interpolates'] for r in rows)}/{len(rows)} interpolate, "
               f"{metric['overlapping_cap_nets']} with overlapping caps; certified brackets ≤ {worst_gap:.1e} wide, "
               f"Lip ≤ {metric['lip_max_upper']:.4f}"
               + (" (author's settings: " + ", ".join(_bracket_text(r) for r in author[:2]) + ")" if author else "")
               + f"; exponent β = {est:.3f}, interval [{ci[0]:.3f}, {ci[1]:.3f}] vs δ = {DELTA} "
               f"(statement β < δ): {verdict}")
    details = {"config": cfg, "nets": rows, "regions": REGIONS.describe,
               "statement_test": {"paper_statement": PAPER, "effect": "exponent β of Lip in n at fixed n/d = ½",
                                  "symbol": "β: Lip ∝ n^β", "delta": DELTA, "statement_region": "β < 0.1",
                                  "negation_region": "β ≥ 0.1", "planned_units": planned,
                                  "units": len(per_seed), "estimate": est, "ci": list(ci),
                                  "ci_width_le_delta": bool(width_ok), "verdict": verdict,
                                  "per_seed": {"lower_ends": b_lo, "upper_ends": b_up, "min": b_min, "max": b_max}}}
    fig = _figure(rows, cfg, est, ci)
    return Outcome(passed, metric, summary, details=details, figures=(figures.save(ctx, fig, "rob_sharpness.png"),),
                   verdict=verdict, timing={"seconds": round(time.perf_counter() - t0, 3),
                                            "certify_s": [r["seconds"] for r in rows]})


def _bracket_text(r) -> str:
    return f"n={r['n']}: [{r['lower']:.4f}, {r['upper']:.4f}]"


def _figure(rows, cfg, est, ci):
    from matplotlib.ticker import NullFormatter

    fig, ax = figures.figure(1, width=5.6, height=4.0)
    for k in sorted({r["seed_index"] for r in rows}):
        rs = [r for r in rows if r["seed_index"] == k]
        figures.errorbars(ax, [r["n"] * (1 + 0.01 * k) for r in rs], [r["lower"] for r in rs],
                          [r["lower"] for r in rs], [r["upper"] for r in rs], color=f"C{k % 10}", fmt="o", ms=4)
    ns = np.array(sorted(cfg["n"]), float)
    ax.axhline(math.sqrt(7), color="0.3", ls=":", lw=1.2, label="√7 (disjoint caps)")
    ax.axhline(4 * math.sqrt(1.75), color="0.5", ls="--", lw=1.0, label="4√(7/4): a pair at x_i·x_j = 1/8")
    ax.set_xscale("log")
    ax.set_xlabel("n (d = 2n)")
    ax.set_ylabel(r"certified Lip on $S^{d-1}$")
    ax.set_ylim(0, 8)
    ax.set_xticks(ns, [str(int(x)) for x in ns])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_title(f"width-2n construction: β = {est:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    return fig
