r"""rob.occupancy: N_u(t) = #{i : u·x_i ≥ t} ≤ Op/t² for every unit u and t > 0 (Op = λ_max(Σ_i x_i x_iᵀ)), and the
bound is sharp for aimed normalised sums.

Why it holds: t² N_u(t) ≤ Σ_{u·x_i ≥ t} (u·x_i)² ≤ uᵀ(Σ x_i x_iᵀ)u ≤ Op. Equality: x_i = u for all i at t = 1
(N = n = Op), and orthonormal x_1..x_k with u their normalised sum at t = 1/√k (N = k, Op = 1).

* F — one property on exact unit data (:func:`checks.rob.supplement.lemma_data.unit_data`: stacked points,
  near-coincident caps, signed orthonormal families, u a point or aimed at the normalised sum of a chosen subset, t
  tight at the subset's smallest u·x_i or at a data point's, shifted by 1e-6, near 0, near 1, t = 1). The bound is
  decided exactly: N_u(t) > Op/t² ⇔ Op < t²N_u(t), by Sturm counts of the Gram matrix's characteristic polynomial
  (SymPy) and by :func:`numerics.rob.op_compare`, which must agree; the count is recomputed in Fractions and must equal
  :func:`numerics.rob.occupancy`.
* E — sharpness for aimed normalised sums on uniform data (n fixed, d growing): for the first k points,
  u = Σ_{i≤k} x_i/‖Σ_{i≤k} x_i‖ and t_k = min_{i≤k} u·x_i, so N_u(t_k) ≥ k; the sharpness ratio
  ρ_k = N_u(t_k) t_k²/Op ≤ 1 (Op certified by :func:`numerics.rob.op_enclosure`; u, t and N in float64).
  The paper's statement: the bound is sharp for these u (w.h.p.). The criterion, fixed before the run: with
  ρ̄(d) = min over k of ρ_k (every threshold scale t ≈ 1/√k at once), the per-seed slope of log(1 − ρ̄) against
  log(d/n) is negative, its 95 % bootstrap interval over ≥ 5 seeds excluding 0 (1 − ρ̄ → 0: the constant 1 of
  the bound is approached). Any certified ρ_k > 1 would contradict the lemma. The slope itself is reported beside
  the heuristic −1/2 (Op ≈ (1 + √(n/d))², t_k² ≈ (1 − O(√(k/d)))/k), which does not decide anything.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np

from checks.evidence import figures
from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.stats import StatementTest, bootstrap_ci
from checks.evidence.tol import TOL
from checks.rob.supplement import lemma_data as data
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import rob

ID = "rob.occupancy"

STATEMENT = dict(
    paper_statement="N_u(t) ≤ Op/t² is sharp for aimed normalised sums (w.h.p.)",
    effect="per seed, slope of log(1 − ρ̄) against log(d/n), ρ̄ = min_k N_u(t_k) t_k²/Op over the aimed sums",
    kind="sign", sign=-1, symbol="slope of log(1 − ρ̄) vs log(d/n)",
    criterion="95% bootstrap interval over seeds of the mean slope lies below 0 (ρ̄ → 1 as d/n grows), and no "
              "certified ρ_k exceeds 1")


def _count_exact(X, u, t) -> int:
    return sum(1 for r in X if sum((a * b for a, b in zip(u, r, strict=True)), Fraction(0)) >= t)


def bound_margin(case, *, exact: bool, coefficient=rob.occupancy_coefficient, count=rob.occupancy,
                 op_compare=None) -> float:
    """> 0 iff N_u(t) > κ(t)·Op (κ = 1/t² in the claim)."""
    X, u, t = case["X"], case["u"], case["t"]
    if t <= 0:
        raise NotApplicable("t > 0")
    if not exact:
        Xf, uf = np.asarray(data.fl(X), float), np.asarray(data.fl(u), float)
        # the evaluator's count, or one generous at the boundary (the confirmation is exact) if that is larger
        N = max(int(count(Xf, uf, float(t))), int(np.count_nonzero(Xf @ uf >= float(t) - TOL["rob_lemma_screen"])))
        return data.op_margin(X, N / float(coefficient(float(t))), exact=False) - TOL["rob_lemma_screen"]
    N = _count_exact(X, u, t)
    if count(X, u, t) != N:
        return 1.0  # the evaluator miscounts
    return data.op_margin(X, Fraction(N) / Fraction(coefficient(t)), exact=True, op_compare=op_compare)


def occupancy_property(*, coefficient=rob.occupancy_coefficient, count=rob.occupancy, op_compare=None,
                       budget: int = 800) -> Property:
    # 800 examples: suite.controls showed that 200 let a planted N ≤ Op/t (for Op/t²) through: its counterexamples
    # (k aimed orthonormal points at t = 1/√k) are one draw in several hundred of the strategy
    return Property(name="rob.occupancy/bound", strategy=data.unit_data(),
                    screen=lambda c: bound_margin(c, exact=False, coefficient=coefficient, count=count),
                    confirm=lambda c: bound_margin(c, exact=True, coefficient=coefficient, count=count,
                                                   op_compare=op_compare),
                    to_json=data.unit_to_json, from_json=data.unit_from_json, budget=budget,
                    examples=data.equality_cases((Fraction(1),)), ties=data.TIES, revision=2)


PROPERTIES = (occupancy_property(),)


def stated_coefficient(t):
    """The statement's κ(t) in N_u(t) ≤ κ(t)·Op (SPEC §4: "≤ Op/t²")."""
    return 1 / t ** 2


def pin(coefficient=rob.occupancy_coefficient) -> dict:
    res = data.pinned(coefficient, stated_coefficient, [(t,) for _, t in data.PIN_GRID] + [(Fraction(1),)])
    return {**res, "spec_says": data.spec_states(ID, "≤ Op/t²")}


def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID)
    m = out.metric
    p = pin()
    ok = p["agree"] and p["spec_says"]
    return replace(out, passed=out.passed and ok, metric={**m, "pinned_constant": ok},
                   details={**out.details, "pinned_constant": p},
                   summary=f"{m['applicable']} exact unit data sets (stacked, caps, orthonormal; u aimed at "
                           f"normalised sums; t tight, ±1e-6, near 0 and 1; both equality cases every run), "
                           f"{m['ties_confirmed']} near-ties decided exactly: {m['confirmed']} confirmed "
                           "violations of N_u(t) ≤ Op/t² (exact: Sturm counts and the evaluator agree); the "
                           f"evaluator's 1/t² {'is' if ok else 'is NOT'} the statement's at {p['points']} exact t")


# ------------------------------------------------------------------------------------------- E
def config(quick: bool) -> dict:
    if quick:  # a smoke run: its verdict is not evidence
        return {"n": 8, "d": (16, 64), "k": (1, 4), "seeds": 3}
    return {"n": 32, "d": (32, 128, 512, 2048, 8192), "k": (1, 2, 4, 8, 16, 32), "seeds": 5}


def aimed_ratios(X: np.ndarray, ks, op_hi: float) -> list[dict]:
    """For each k: u = normalised sum of the first k rows, t = min_{i<k} u·x_i, N = N_u(t), ρ = N t²/Op."""
    rows = []
    for k in ks:
        w = X[:k].sum(axis=0)
        u = w / np.linalg.norm(w)
        z = X @ u
        t = float(z[:k].min())
        N = int(np.count_nonzero(z >= t))
        rows.append({"k": k, "t": t, "N": N, "bound": op_hi / t ** 2, "rho": N * t * t / op_hi})
    return rows


def level_E(ctx: Context) -> Outcome:
    cfg = config(ctx.quick)
    n = cfg["n"]
    rows, per_seed, tail, certified_above = [], [], [], 0
    for s in range(cfg["seeds"]):
        rng = ctx.rng(f"{ID}/E/{s}")
        xs, ys = [], []
        for d in cfg["d"]:
            X = rng.standard_normal((n, d))
            X /= np.linalg.norm(X, axis=1)[:, None]
            lo, hi = rob.op_enclosure(X)
            rs = aimed_ratios(X, cfg["k"], float(hi))
            for r in rs:
                # certified comparison of N t² with Op (t, N in float64: an exact binary rational t² N)
                c = Fraction(r["t"]) ** 2 * r["N"]
                above = c > hi or (c >= lo and rob.op_compare(X, c, enclosure=(lo, hi)) > 0)
                certified_above += bool(above)
                rows.append({"seed": s, "d": d, **r, "op_lo": float(lo), "op_hi": float(hi)})
            rho_bar = min(r["rho"] for r in rs)
            xs.append(np.log(d / n))
            ys.append(np.log(max(1 - rho_bar, 1e-300)))
        per_seed.append(float(np.polyfit(xs, ys, 1)[0]))
        tail.append(float((ys[-1] - ys[-2]) / (xs[-1] - xs[-2])))  # the local slope at the two largest d/n
    test = StatementTest(**STATEMENT).decide(per_seed, seed=ctx.seed)
    verdict = "contradicted" if certified_above else test.verdict
    test.verdict = verdict
    big = cfg["d"][-1]
    rb = [min(r["rho"] for r in rows if r["seed"] == s and r["d"] == big) for s in range(cfg["seeds"])]
    est, lo_ci, hi_ci = bootstrap_ci(rb, seed=ctx.seed)
    tail_est, tail_lo, tail_hi = bootstrap_ci(tail, seed=ctx.seed)
    test.note = (f"ρ̄ at d/n = {big // n}: {est:.3f} [{lo_ci:.3f}, {hi_ci:.3f}]; local slope at the two largest d/n "
                 f"{tail_est:.3f} [{tail_lo:.3f}, {tail_hi:.3f}] beside the heuristic −1/2 (the fit over all d/n is "
                 f"flattened by the pre-asymptotic plateau at d ≈ n); {certified_above} certified ρ > 1")
    fig = occupancy_figure(rows, cfg, per_seed)
    metric = {"seeds": cfg["seeds"], "configurations": len(rows), "slope_mean": test.estimate,
              "slope_ci_lo": test.ci[0], "slope_ci_hi": test.ci[1], "rho_bar_at_max_d": est,
              "rho_max": max(r["rho"] for r in rows), "certified_above_1": certified_above,
              "tail_slope_mean": tail_est, "tail_slope_ci_lo": tail_lo, "tail_slope_ci_hi": tail_hi}
    summary = (f"n={n}, d∈{list(cfg['d'])}, k∈{list(cfg['k'])}, {cfg['seeds']} seeds: aimed sums reach ρ = N t²/Op up "
               f"to {metric['rho_max']:.3f} (never > 1, Op certified); worst-scale ρ̄ at d/n={big // n}: {est:.3f} "
               f"[{lo_ci:.3f}, {hi_ci:.3f}]; slope of log(1 − ρ̄) vs log(d/n) {test.estimate:.3f} "
               f"[{test.ci[0]:.3f}, {test.ci[1]:.3f}], locally {tail_est:.3f} at the largest d/n (heuristic −0.5): "
               f"{verdict}")
    details = {"config": cfg, "rows": rows, "statement_test": test.to_json(), "rho_bar_at_max_d": rb,
               "tail_slopes": tail}
    return Outcome(passed=len(per_seed) == cfg["seeds"] and all(np.isfinite(per_seed)) and not certified_above,
                   metric=metric, summary=summary, details=details,
                   figures=(figures.save(ctx, fig, "rob_occupancy.png"),), verdict=verdict)


def occupancy_figure(rows, cfg, per_seed):
    """Left: N_u(t) against the bound Op/t² for every aimed sum (the diagonal is equality). Right: 1 − ρ̄ against
    d/n, one line per seed, with the heuristic rate (d/n)^{−1/2}."""
    fig, (ax, bx) = figures.figure(2, width=4.8, height=4.0)
    for j, d in enumerate(cfg["d"]):
        rs = [r for r in rows if r["d"] == d]
        ax.scatter([r["bound"] for r in rs], [r["N"] for r in rs], s=14, color=f"C{j}", label=f"d = {d}")
    top = max(r["bound"] for r in rows)
    ymax = 3 * max(r["N"] for r in rows)
    ax.plot([0.5, top * 1.2], [0.5, top * 1.2], color="0.3", lw=1, ls="--", label="N = Op/t² (the bound)")
    ax.set_ylim(0.5, ymax)
    figures.log_axis(ax)
    ax.set_xlabel("Op/t² (count)")
    ax.set_ylabel("N_u(t) (count)")
    ax.set_title(f"aimed normalised sums, n = {cfg['n']}")
    ax.legend(loc="upper left")
    n = cfg["n"]
    x = np.array(cfg["d"], float) / n
    for s in range(cfg["seeds"]):
        y = [1 - min(r["rho"] for r in rows if r["seed"] == s and r["d"] == d) for d in cfg["d"]]
        bx.plot(x, y, marker="o", ms=3, lw=1, color="C0", alpha=0.6,
                label="1 − ρ̄, one line per seed" if s == 0 else None)
    y0 = 1 - min(r["rho"] for r in rows if r["d"] == cfg["d"][0])
    figures.rate_line(bx, x, -0.5, through=(x[0], y0), label="heuristic (d/n)^(−1/2)")
    figures.log_axis(bx)
    bx.set_xlabel("d/n (dimensionless)")
    bx.set_ylabel("1 − min_k N t²/Op (dimensionless)")
    bx.set_title(f"slope {np.mean(per_seed):.2f} (mean over seeds)")
    bx.legend(loc="lower left")
    return fig
