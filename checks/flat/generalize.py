"""flat.generalize: single-index and sum-of-single-index targets, ReLU/LeakyReLU/quadratic: low flatness goes with
low population loss.

Evaluators: ``numerics.flat.flattest_outer_weights`` (the flattest interpolator for dictionaries of growing
alignment ρ with the index space) and ``numerics.flat.population_loss`` (exact Gaussian expectation). The
effect is the Spearman correlation of (Υ, population loss) over one seed's interpolators; the paper also
reports that the link is weaker for single-index ReLU targets, which is tested as a second statement.
"""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import NullLocator

from checks.evidence import figures
from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.stats import MIN_SEEDS, StatementTest, combine
from checks.evidence.tol import TOL
from checks.flat.experiments import UPS, blas_one_thread, case_label, directions, fmt_ci, spearman, streams
from checks.runners.campaign import sweep
from numerics import flat

ID = "flat.generalize"

ACTS = ("relu", "leaky_relu", "quadratic")
CASES = tuple(f"{act}/{kind}" for act in ACTS for kind in ("single", "sum"))
RHOS = (0.0, 0.25, 0.5, 0.75, 1.0)
WEAK_CASE = "relu/single"

# The paper's statements and criteria, fixed before the run. Seed s of a case draws its own target direction(s)
# and, for every alignment bound ρ and repetition, its own data and dictionary.
STATEMENT = dict(
    paper_statement="low flatness goes with low population loss",
    effect="per-seed Spearman(Υ, exact population loss) over that seed's flattest interpolators "
           "(alignment bounds ρ ∈ {0, 0.25, 0.5, 0.75, 1} × repetitions), mean over seeds",
    kind="sign", sign=1, symbol="mean per-seed ρ_s(Υ, L)")
WEAKER = dict(
    paper_statement="the link is weaker for single-index ReLU targets than for the other cases",
    effect="per seed: ρ_s(Υ, L) of the single-index ReLU case minus the mean ρ_s of the other five cases at the "
           "same seed index (independent data), mean over seeds",
    kind="sign", sign=-1, symbol="Δρ_s (ReLU single-index − others)")


def _config(ctx: Context) -> dict:
    return {"seeds": 3, "reps": 2} if ctx.quick else {"seeds": 10, "reps": 4}


def _setup(act: str) -> tuple[str, int, int]:
    """(link, d, n) of a case."""
    return ("quadratic", 8, 24) if act == "quadratic" else ("relu", 5, 32)


def _family(rng: np.random.Generator, key: str, reps: int) -> tuple[list[tuple[float, float, float]], int]:
    """One seed of one case: (ρ, Υ, exact population loss) of the flattest interpolator of fresh data for each
    alignment bound ρ and repetition, and the number of dictionaries that admit no interpolator."""
    act, kind = key.split("/")
    link, d, n = _setup(act)
    if kind == "single":
        u = rng.normal(size=d)
        U, target = u[None] / np.linalg.norm(u), flat.single_index(u, link)
    else:
        U = np.linalg.qr(rng.normal(size=(d, 3)))[0].T
        target = flat.sum_single_index(U, link)
    pts, missing = [], 0
    for rho in RHOS:
        for _ in range(reps):
            X = rng.normal(size=(n, d))
            Th = directions(U, 2 * n, rho, rng)
            if rho == 1.0:
                Th = np.vstack([U, Th])
            try:
                res = flat.flattest_outer_weights(Th, X, target(X), act)
            except ValueError:  # e.g. ρ = 0 for a sum target: the complement of span(U) is too small
                missing += 1
                continue
            pts.append((rho, res.value, flat.population_loss(res.a, Th, target, 0.0, act)))
    return pts, missing


def _family_task(args) -> tuple[list[tuple[float, float, float]], int]:
    with blas_one_thread():
        return _family(*args)


def level_E(ctx: Context) -> Outcome:
    cfg = _config(ctx)
    seeds = cfg["seeds"]
    rngs = streams(ctx, ID, seeds, len(CASES))
    points = {k: [[] for _ in range(seeds)] for k in CASES}
    missing = dict.fromkeys(CASES, 0)
    jobs = [(s, i, k) for s in range(seeds) for i, k in enumerate(CASES)]
    runs = sweep(ctx, _family_task, [(rngs[s][i], key, cfg["reps"]) for s, i, key in jobs],
                 "flat.generalize: seeds × cases")  # Dask tasks under verify --workers/--scheduler
    for (s, _, key), (pts, m) in zip(jobs, runs, strict=True):
        points[key][s] = pts
        missing[key] += m
    rho_s = {k: [spearman([p[1] for p in P], [p[2] for p in P]) for P in points[k]] for k in CASES}
    tests = {k: StatementTest(**STATEMENT).decide(rho_s[k], seed=ctx.seed) for k in CASES}
    verdict = combine([t.verdict for t in tests.values()])
    others = np.nanmean(np.array([rho_s[k] for k in CASES if k != WEAK_CASE]), axis=0)
    weaker = StatementTest(**WEAKER).decide(np.asarray(rho_s[WEAK_CASE]) - others, seed=ctx.seed)
    if weaker.verdict == "contradicted":
        weaker.note = ("discrepancy: the interval puts the single-index ReLU link above the other cases', "
                       "not below as the paper reports")
    elif weaker.verdict == "not reproduced":
        weaker.note = "the interval contains 0: no weaker link for single-index ReLU is resolved"
    main_verdict = verdict
    if verdict == "reproduced" and weaker.verdict != "reproduced":
        # the main link holds in every case, but the paper's observation that it is weaker for single-index
        # ReLU is not borne out: the claim as the paper makes it is only partially reproduced
        verdict = "partially reproduced"
    weakest = min(CASES, key=lambda k: tests[k].ci[0] if np.isfinite(tests[k].ci[0]) else -np.inf)
    combined = {**tests[weakest].to_json(), "paper_statement": STATEMENT["paper_statement"] + " (six cases)",
                "verdict": verdict,
                "effect": f"{STATEMENT['effect']}; shown: the weakest case ({case_label(weakest)}); the verdict "
                          f"combines the {len(CASES)} cases' sign tests ({main_verdict}) with the paper's "
                          f"'weaker for single-index ReLU' ({weaker.verdict}): a main link that holds everywhere "
                          "with that observation not borne out is 'partially reproduced'",
                "symbol": f"ρ_s(Υ, L), weakest: {case_label(weakest)}"}

    # evidence produced, and the suite's earlier criterion: Spearman of the pooled points > threshold for every
    # sum-of-single-index case (the paper's strong link)
    pooled = {k: spearman([p[1] for P in points[k] for p in P], [p[2] for P in points[k] for p in P])
              for k in CASES}
    thr = TOL["flat_generalize_spearman"]
    ok = (all(tests[k].seeds >= MIN_SEEDS for k in CASES)
          and all(v > thr for k, v in pooled.items() if k.endswith("/sum")))

    figs = _figures(ctx, points, tests, weaker)
    n_pts = {k: sum(len(P) for P in points[k]) for k in CASES}
    metric = {"seeds": seeds, **{f"spearman_{k}": tests[k].estimate for k in CASES},
              **{f"spearman_ci_{k}": list(tests[k].ci) for k in CASES},
              "relu_single_minus_others": weaker.estimate, "relu_single_minus_others_ci": list(weaker.ci),
              "verdict_relu_single_weaker": weaker.verdict, "pooled_spearman": pooled,
              "interpolators": sum(n_pts.values()), "dictionaries_without_interpolator": sum(missing.values())}
    comp = (f"single-index ReLU vs the others: Δρ_s = {fmt_ci(weaker)} (paper: weaker, Δ < 0): "
            f"{weaker.verdict}")
    if weaker.verdict == "contradicted":
        comp = "DISCREPANCY: " + comp + " — the link is stronger there, not weaker"
    elif weaker.verdict == "not reproduced":
        comp = "DISCREPANCY: " + comp + " — no weaker link is resolved"
    summary = (f"{seeds} seeds × {len(RHOS)} alignment bounds × {cfg['reps']} datasets per case; mean per-seed "
               f"Spearman(Υ, population loss) [95% CI]: "
               + ", ".join(f"{case_label(k)} {fmt_ci(tests[k])}" for k in CASES)
               + f": {sum(t.verdict == 'reproduced' for t in tests.values())}/{len(CASES)} reproduced, verdict "
               f"{verdict}; {comp} (pass: ≥ {MIN_SEEDS} seeds per case, pooled Spearman > {thr:g} for every "
               f"sum-of-single-index case)")
    details = {"config": {**cfg, "rhos": RHOS, "d_n": {a: _setup(a)[1:] for a in ACTS},
                          "dictionary_size": "2n (+ the index directions at ρ = 1)"},
               "points": {k: points[k] for k in CASES}, "per_seed_spearman": rho_s, "pooled_spearman": pooled,
               "dictionaries_without_interpolator": missing,
               "relu_single_vs_others": {"per_seed_difference": weaker.per_seed, "estimate": weaker.estimate,
                                         "ci": list(weaker.ci), "verdict": weaker.verdict, "note": weaker.note,
                                         "paper": "weaker for single-index ReLU"},
               "statement_tests": {**{k: t.to_json() for k, t in tests.items()},
                                   "relu_single_weaker": weaker.to_json()}}
    details["statement_test"] = combined
    return Outcome(ok, metric, summary, details, figs, verdict=verdict)


def _figures(ctx: Context, points: dict, tests: dict, weaker: StatementTest) -> tuple[str, ...]:
    fig, axes = figures.figure(3, 2, width=4.0, height=3.5)
    sc = None
    for ax, key in zip(axes, CASES, strict=True):
        P = np.array([p for ps in points[key] for p in ps])
        keep, dropped = figures.floor_positive(P[:, 2])
        sc = ax.scatter(P[keep, 1], P[keep, 2], c=P[keep, 0], cmap="viridis", vmin=0, vmax=1, s=12)
        figures.log_axis(ax)
        for axis in (ax.xaxis, ax.yaxis):  # many decades: the labelled decades suffice, and 6 panels draw faster
            axis.set_minor_locator(NullLocator())
        t = tests[key]
        ax.set_title(f"{case_label(key)}\nρ_s = {fmt_ci(t)}")
        if dropped:
            ax.text(0.97, 0.03, f"{dropped} with L ≤ 1e-12\nnot shown", transform=ax.transAxes, ha="right",
                    va="bottom")
        ax.set(xlabel=f"{UPS} of the flattest interpolator (dimensionless)",
               ylabel="exact population loss (dimensionless)")
    fig.colorbar(sc, ax=list(axes), label="alignment bound ρ (dimensionless)")
    out = [figures.save(ctx, fig, "flat_generalize.png")]

    fig, ax = figures.figure(width=7.6, height=3.8)
    for i, key in enumerate(CASES):
        t = tests[key]
        xerr = np.clip([[t.estimate - t.ci[0]], [t.ci[1] - t.estimate]], 0, None)
        ax.errorbar([t.estimate], [i], xerr=xerr, fmt="o", ms=5, capsize=3,
                    color="C3" if key == WEAK_CASE else "C0")
    ax.axvline(0, color="k", lw=0.8, ls=":")
    ax.set_yticks(range(len(CASES)), [case_label(k) for k in CASES])
    ax.invert_yaxis()
    ax.set(xlabel=f"ρ_s({UPS}, population loss), mean over seeds (dimensionless)",
           title=f"95% CI over {tests[CASES[0]].seeds} seeds\nReLU single-index − the others: Δρ_s = {fmt_ci(weaker)}")
    out.append(figures.save(ctx, fig, "flat_generalize_spearman.png"))
    return tuple(out)
