r"""rob.cluster_failure: per-cluster rigidity fails for coherent clusters (SPEC §4, the supplement's remark
"Per-cluster rigidity fails below the coherence floor"). Two poles at separation ρ, each with the same
N = ⌊t*/(2ρ)⌋ thresholds t_j = (j − 1)t*/N evenly spaced in [0, t*), weights +α_0 on one and −α_0 on the
other: the net is 2α_0-Lipschitz while each profile's total variation is ≥ α_0 t*²/(4ρ).

Construction (:func:`cluster_net`, exact rationals): u_1 = e_1 and the rational unit vector
u_2 = ((1−q²)/(1+q²), 2q/(1+q²), 0, …) with q = ρ/2, so that the separation ρ' = ‖u_1 − u_2‖ = ρ/√(1 + ρ²/4) is
≤ ρ (a rational pole pair at exactly ρ does not exist for ρ = 2^{−k}); N and the thresholds use the nominal ρ.

Derivation: :func:`proofs.rob.cluster.cluster_failure` — Lip_{S^{d−1}}(f) = α_0 *exactly* for every ρ ≤ t*/2,
t* ≤ 1 and d ≥ 3 (sharper than the stated 2α_0 and the remark's 3α_0/2), TV(P_c) on [−1, 1] =
α_0(N − t*(N−1)/2), and P_c(t*) − P_c(0) = α_0 t*(N + 1)/2 > α_0 t*²/(4ρ). Evaluators:
:func:`numerics.rob.lipschitz` (exact on S², the small-circle arrangement; since f depends on x only through its
projection z onto span(u_1, u_2) and F = ‖∇f‖² − (∇f·z)², which ranges over the same closed disc for every
d ≥ 3, the S² constant is the constant in every d ≥ 3) and, at P, its certified bracket in d = 5;
:func:`profile_tv` (exact rational integration of |P_c′| from the net's own units, not the closed form).

* S — the derivation's steps, each an identity that simplifies to 0 or a factorisation; plus the count lemma
  (|n_1 − n_2| ≤ 1 when |s_1 − s_2| < h) decided exactly on every pair of a rational grid;
* P — ρ = 2^{−k}, k = 1..4 at a rational t* (and t* = 1): the exact Lipschitz constant is the SymPy number α_0
  (decided exactly, not by a tolerance); the exact TV equals the closed form; mpmath quad of |P_c′| at 50 digits
  agrees (digits reported); a certified bracket in d = 5 contains α_0;
* E — ρ = 2^{−k}, k = 1..8 (k ≥ 2 when t* < 1, where N ≥ 1 needs ρ ≤ t*/2), over 5 seeds (seed 0: t* = 1; the
  others: t* uniform on a 1/64 grid in [1/2, 1) and a random rational rotation of the pair). Exact constant in
  d = 3, exact TV. The statements and criteria (:data:`STATEMENTS`) are fixed before the run.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction as Fr

import mpmath
import numpy as np
import sympy as sp

from checks.evidence import figures
from checks.evidence.outcome import Outcome, digits_agreed
from checks.evidence.registry import Context
from checks.evidence.stats import StatementTest, combine
from checks.evidence.tol import TOL
from checks.rob import cases
from numerics import rob
from numerics.rob import exact as E
from proofs.rob.cluster import cluster_failure

ID = "rob.cluster_failure"
ALPHA0 = 1
PAPER = ("two poles at separation ρ, N = ⌊t*/(2ρ)⌋ thresholds evenly spaced in [0, t*], weights ±α_0: the net is "
         "2α_0-Lipschitz while each profile's TV ≥ α_0t*²/(4ρ) — the ratio doubles as ρ halves, Lip flat")

STATEMENTS = {
    "lipschitz": dict(
        paper_statement="the net is 2α_0-Lipschitz for every ρ (flat in ρ)",
        effect="per seed, slope of log(exact Lip) on log(1/ρ) over the last four doublings",
        symbol="slope of log Lip on log(1/ρ)", kind="rate", target=0.0,
        criterion="certified, ρ by ρ: contradicted if some exact Lip > 2α_0 (decided exactly); reproduced if every "
                  "exact Lip ≤ 2α_0 and the 95% interval of the slope lies in [−m, m], m = rob_cluster_rate_margin; "
                  "else not reproduced"),
    "doubling": dict(
        paper_statement="TV(P_c) ≥ α_0t*²/(4ρ) and the ratio TV/Lip doubles as ρ halves",
        effect="per seed, slope of log(exact TV/exact Lip) on log(1/ρ) over the last four doublings",
        symbol="slope of log(TV/Lip) on log(1/ρ)", kind="rate", target=1.0,
        criterion="contradicted if some exact TV < α_0t*²/(4ρ) (decided exactly); reproduced if every TV meets the "
                  "bound and the 95% interval of the slope lies in [1 − m, 1 + m]; partially reproduced if it is "
                  "positive but outside; else not reproduced"),
}


def cluster_net(k: int, tstar: Fr = Fr(1), d: int = 3, rotation=None, alpha0=ALPHA0):
    """(net, info) of the two-cluster construction at ρ = 2^{−k}; ``rotation`` an exact orthogonal d×d matrix."""
    if d < 3:
        raise ValueError(f"the construction lives on S^{{d−1}} with d ≥ 3, got d = {d}")
    rho = Fr(1, 2**k)
    if not (0 < rho <= Fr(tstar) / 2 and Fr(tstar) <= 1):
        raise ValueError(f"need 0 < ρ ≤ t*/2 and t* ≤ 1 (N ≥ 1), got ρ = {rho}, t* = {tstar}")
    q = rho / 2
    u1 = [Fr(1)] + [Fr(0)] * (d - 1)
    u2 = [(1 - q * q) / (1 + q * q), 2 * q / (1 + q * q)] + [Fr(0)] * (d - 2)
    if rotation is not None:
        u1, u2 = ([sum(Fr(rotation[i][j]) * u[j] for j in range(d)) for i in range(d)] for u in (u1, u2))
    N = math.floor(Fr(tstar) / (2 * rho))
    ts = [Fr(tstar) * j / N for j in range(N)]
    net = ([u1] * N + [u2] * N, [-t for t in ts] * 2, [alpha0] * N + [-alpha0] * N, [0] * d, 0)
    sep2 = sum((a - b) ** 2 for a, b in zip(u1, u2, strict=True))
    return net, {"rho": rho, "N": N, "tstar": Fr(tstar), "thresholds": ts, "sep2": sep2}


def profile_tv(thresholds, alpha0=ALPHA0) -> Fr:
    """TV of P(s) = α_0 Σ ReLU(s − t_j) on [−1, 1]: Σ over the pieces between breakpoints of |P′|·length, exactly."""
    pts = sorted({Fr(-1), Fr(1), *[Fr(t) for t in thresholds if -1 < t < 1]})
    tv = Fr(0)
    for lo, hi in zip(pts, pts[1:], strict=False):
        mid = (lo + hi) / 2
        slope = sum(Fr(alpha0) for t in thresholds if t < mid)
        tv += abs(slope) * (hi - lo)
    return tv


def profile_value(thresholds, s, alpha0=ALPHA0) -> Fr:
    return sum(Fr(alpha0) * max(Fr(s) - t, Fr(0)) for t in thresholds)


def _lip_exact(net, d=3):
    L = rob.lipschitz(net, rob.Sphere(d), max_exact_units=400, time_limit=120.0)
    if not L.exact:
        raise RuntimeError(f"the S² routine did not return an exact constant ({L.method})")
    le_2a = E.QNum(Fr(4 * ALPHA0**2)).cmp(L.value2) >= 0  # Lip² ≤ 4α_0², exactly
    eq_a = L.value2.cmp(E.QNum(Fr(ALPHA0**2))) == 0
    return L, le_2a, eq_a


def level_S(ctx: Context) -> Outcome:
    c = cluster_failure()
    # the count lemma, exactly: on a grid of spacing h, |#{t_j < s1} − #{t_j < s2}| ≤ 1 whenever |s1 − s2| < h
    N, h = 5, Fr(1, 5)
    ts = [h * j for j in range(N)]
    grid = [Fr(i, 37) for i in range(-37, 38)]
    count = lambda s: sum(t < s for t in ts)  # noqa: E731
    pairs = [(a, b) for a in grid for b in grid if abs(a - b) < h]
    worst = max(abs(count(a) - count(b)) for a, b in pairs)
    ok = all(c.checks.values()) and worst <= 1
    return Outcome(ok, {"derivations": f"{sum(c.checks.values())}/{len(c.checks)}", "lipschitz": str(c.lipschitz),
                        "tv": str(c.tv), "count_pairs": len(pairs), "count_max_diff": worst},
                   f"Lip_S^(d−1) = {c.lipschitz} exactly for every ρ ≤ t*/2, d ≥ 3 (stated: ≤ 2α_0); TV(P_c) = "
                   f"{c.tv}; P_c(t*) − P_c(0) = {c.ramp} > α_0t*²/(4ρ) = {c.tv_floor}; count lemma on {len(pairs)} "
                   f"exact pairs (max |n_1 − n_2| = {worst})", details=c.checks)


def level_P(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.cluster_failure/P")
    c = cluster_failure()
    rows, digits = [], []
    tstars = [Fr(1), Fr(int(rng.integers(33, 64)), 64)]
    ks = (1, 2) if ctx.quick else (1, 2, 3, 4)
    with mpmath.workdps(TOL["precision_dps"]):
        for tstar in tstars:
            for k in ks:
                if Fr(1, 2**k) > tstar / 2:
                    continue
                net, info = cluster_net(k, tstar)
                L, le_2a, eq_a = _lip_exact(net)
                sym_eq = sp.simplify(L.value - ALPHA0) == 0
                tv = profile_tv(info["thresholds"])
                vals = {"alpha0": ALPHA0, "N": info["N"], "tstar": sp.Rational(tstar.numerator, tstar.denominator)}
                closed = c.tv.subs({sym: vals[sym.name] for sym in c.tv.free_symbols})
                closed_ok = sp.Rational(tv.numerator, tv.denominator) == closed
                ths = [mpmath.mpf(t.numerator) / t.denominator for t in info["thresholds"]]
                pts = sorted(set([mpmath.mpf(-1), mpmath.mpf(1), *ths]))
                def dP(s, ths=ths):
                    return abs(sum(1 for t in ths if t < s))
                quad = sum(mpmath.quad(dP, [a, b]) for a, b in zip(pts, pts[1:], strict=False))
                dg = digits_agreed(quad, mpmath.mpf(tv.numerator) / tv.denominator)
                digits.append(dg)
                rows.append({"k": k, "tstar": str(tstar), "N": info["N"], "lip": str(L.value), "lip_is_alpha0": sym_eq
                             and eq_a, "lip_le_2alpha0": le_2a, "tv": str(tv), "tv_closed_form": closed_ok,
                             "tv_quad_digits": dg, "tv_ge_floor": tv >= Fr(tstar) ** 2 / (4 * info["rho"])})
    # d = 5: a certified bracket (branch and bound) contains α_0
    brackets = []
    for k in ((1,) if ctx.quick else (1, 2)):
        net, _ = cluster_net(k, Fr(1), d=5)
        B = rob.lipschitz(net, rob.Sphere(5), time_limit=3.0 if ctx.quick else 10.0, rel_gap=1e-3, seed=k)
        brackets.append({"k": k, "d": 5, "lower": float(B.lower), "upper": float(B.upper), "exact": B.exact,
                         "method": B.method, "contains_alpha0": float(B.lower) <= ALPHA0 <= float(B.upper)})
    low = min(digits)
    ok = (all(r["lip_is_alpha0"] and r["lip_le_2alpha0"] and r["tv_closed_form"] and r["tv_ge_floor"] for r in rows)
          and low >= TOL["precision_min_digits"] and all(b["contains_alpha0"] for b in brackets))
    return Outcome(ok, {"min_digits": low, "instances": len(rows), "d5_brackets": len(brackets),
                        "d5_worst_gap": max(b["upper"] / b["lower"] - 1 for b in brackets)},
                   f"{len(rows)} instances (ρ = 2^−k, k ≤ {max(ks)}, t* ∈ {{{', '.join(map(str, tstars))}}}): "
                   "exact Lip = "
                   f"α_0 (decided exactly), TV exact = closed form, 50-digit quad of |P′| to {low:.0f} digits; d = 5 "
                   f"certified brackets {[(round(b['lower'], 6), round(b['upper'], 6)) for b in brackets]} contain α_0",
                   details={"instances": rows, "d5": brackets})


def _config(quick: bool) -> dict:
    if quick:
        return {"seeds": 3, "k": (1, 2, 3, 4), "fit_k": (2, 3, 4)}
    return {"seeds": 5, "k": tuple(range(1, 9)), "fit_k": (5, 6, 7, 8)}


def _slope(x, y) -> float:
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    return float(np.polyfit(lx, ly, 1)[0]) if len(set(lx)) >= 2 else float("nan")


def _window(ci, target, m) -> bool:
    return bool(np.isfinite(ci[0]) and np.isfinite(ci[1]) and target - m <= ci[0] and ci[1] <= target + m)


def level_E(ctx: Context) -> Outcome:
    cfg = _config(ctx.quick)
    margin = TOL["rob_cluster_rate_margin"]
    rows, t0, c0 = [], time.perf_counter(), time.process_time()
    seeds = []
    for sd in range(cfg["seeds"]):
        rng = ctx.rng(f"rob.cluster_failure/E/{sd}")
        tstar = Fr(1) if sd == 0 else Fr(int(rng.integers(32, 64)), 64)
        Q = None if sd == 0 else cases.rational_orthogonal(rng, 3)
        seeds.append({"seed_index": sd, "tstar": str(tstar), "rotated": Q is not None})
        for k in cfg["k"]:
            if Fr(1, 2**k) > tstar / 2:
                continue
            net, info = cluster_net(k, tstar, rotation=None if Q is None else [[Q[i, j] for j in range(3)]
                                                                              for i in range(3)])
            L, le_2a, eq_a = _lip_exact(net)
            tv = profile_tv(info["thresholds"])
            floor = tstar**2 / (4 * info["rho"])
            rows.append({"seed_index": sd, "k": k, "rho": float(info["rho"]), "inv_rho": 2**k, "tstar": float(tstar),
                         "N": info["N"], "units": 2 * info["N"], "separation": math.sqrt(info["sep2"]),
                         "lip": float(L.upper), "lip_exact": str(L.value), "lip_le_2alpha0": le_2a,
                         "lip_eq_alpha0": eq_a, "tv": float(tv), "tv_exact": str(tv), "tv_floor": float(floor),
                         "tv_ge_floor": tv >= floor, "ratio": float(tv) / float(L.upper), "cells": L.cells,
                         "seconds": round(L.seconds, 3), "method": L.method})
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    # per seed slopes over the fit window
    sl_lip, sl_ratio = [], []
    for sd in range(cfg["seeds"]):
        rs = [r for r in rows if r["seed_index"] == sd and r["k"] in cfg["fit_k"]]
        sl_lip.append(_slope([r["inv_rho"] for r in rs], [r["lip"] for r in rs]))
        sl_ratio.append(_slope([r["inv_rho"] for r in rs], [r["ratio"] for r in rs]))
    lip_t = StatementTest(**STATEMENTS["lipschitz"]).decide(sl_lip, seed=ctx.seed)
    dbl_t = StatementTest(**STATEMENTS["doubling"]).decide(sl_ratio, seed=ctx.seed)
    all_le = all(r["lip_le_2alpha0"] for r in rows)
    all_tv = all(r["tv_ge_floor"] for r in rows)
    enough = lip_t.seeds >= 3
    lip_t.verdict = ("contradicted" if not all_le else
                     "reproduced" if enough and _window(lip_t.ci, 0.0, margin) else "not reproduced")
    if not all_tv:
        dbl_t.verdict = "contradicted"
    elif enough and _window(dbl_t.ci, 1.0, margin):
        dbl_t.verdict = "reproduced"
    elif enough and np.isfinite(dbl_t.ci[0]) and dbl_t.ci[0] > 0:
        dbl_t.verdict = "partially reproduced"
    else:
        dbl_t.verdict = "not reproduced"
    verdict = combine([lip_t.verdict, dbl_t.verdict])
    # the doubling shown: successive ratios R(k+1)/R(k) on seed 0
    s0 = sorted((r for r in rows if r["seed_index"] == 0), key=lambda r: r["k"])
    doubling = [{"k": b["k"], "ratio_over_previous": b["ratio"] / a["ratio"]} for a, b in zip(s0, s0[1:], strict=False)]
    n_eq = sum(r["lip_eq_alpha0"] for r in rows)
    details = {"config": cfg, "seeds": seeds, "rows": rows, "doubling_seed0": doubling,
               "slopes": {"lip": sl_lip, "ratio": sl_ratio},
               "lipschitz": "exact (S² arrangement, d = 3; the constant is the same for every d ≥ 3: f depends on x "
                            "through its projection onto span(u_1, u_2), which covers the closed disc for d ≥ 3)",
               "statement_tests": {"lipschitz": lip_t.to_json(), "doubling": dbl_t.to_json()}}
    details["statement_test"] = {**dbl_t.to_json(), "paper_statement": PAPER, "verdict": verdict,
                                 "criterion": "combine(lipschitz, doubling)",
                                 "lipschitz_verdict": lip_t.verdict, "doubling_verdict": dbl_t.verdict}
    passed = bool(rows) and all(np.isfinite(sl_ratio)) and all(np.isfinite(sl_lip)) and all_le and all_tv
    metric = {"seeds": cfg["seeds"], "instances": len(rows), "lip_eq_alpha0": n_eq,
              "max_lip": max(r["lip"] for r in rows),
              "slope_ratio": dbl_t.estimate, "slope_ratio_ci_lo": dbl_t.ci[0], "slope_ratio_ci_hi": dbl_t.ci[1],
              "slope_lip": lip_t.estimate, "last_doubling_seed0": doubling[-1]["ratio_over_previous"] if doubling
              else float("nan"), "max_units": max(r["units"] for r in rows)}
    summary = (f"ρ = 2^−k, k ∈ {list(cfg['k'])}, {cfg['seeds']} seeds (t*): exact Lip (d = 3, every d ≥ 3) = α_0 in "
               f"{n_eq}/{len(rows)} instances (≤ 2α_0 in all, decided exactly), up to {metric['max_units']} units; "
               "TV ≥ "
               f"α_0t*²/(4ρ) in all; slope of log(TV/Lip) on log(1/ρ) over k ∈ {list(cfg['fit_k'])} = "
               f"{dbl_t.estimate:.3f} [{dbl_t.ci[0]:.3f}, {dbl_t.ci[1]:.3f}]; last doubling (seed 0) ×"
               f"{metric['last_doubling_seed0']:.3f}; Lip slope {lip_t.estimate:.3g}: {verdict}")
    fig = _figure(rows, cfg, dbl_t, doubling)
    return Outcome(passed, metric, summary, details, (figures.save(ctx, fig, "rob_cluster_failure.png"),),
                   verdict=verdict, timing={"seconds": round(secs, 3), "cpu_seconds": round(cpu, 3),
                                            "per_instance_s": [r["seconds"] for r in rows]})


def _figure(rows, cfg, dbl: StatementTest, doubling):
    fig, (ax, bx) = figures.figure(2, width=5.0, height=4.0)
    for sd in range(cfg["seeds"]):
        rs = sorted((r for r in rows if r["seed_index"] == sd), key=lambda r: r["k"])
        x = [r["inv_rho"] for r in rs]
        def lab(s, sd=sd):
            return s if sd == 0 else None
        ax.plot(x, [r["tv"] for r in rs], "o-", color="C0", alpha=1 if sd == 0 else 0.35, ms=4,
                label=lab("TV(P_c), exact"))
        ax.plot(x, [r["tv_floor"] for r in rs], "v:", color="C2", alpha=1 if sd == 0 else 0.35, ms=4,
                label=lab("stated floor α_0t*²/(4ρ)"))
        ax.plot(x, [r["lip"] for r in rs], "s-", color="C3", alpha=1 if sd == 0 else 0.35, ms=4,
                label=lab("Lip on S^{d−1}, exact (d = 3, all d ≥ 3)"))
    ax.axhline(2 * ALPHA0, color="C3", ls="--", lw=1, label="stated bound 2α_0")
    xs = np.array(sorted({r["inv_rho"] for r in rows}), float)
    s0 = [r for r in rows if r["seed_index"] == 0]
    if s0:
        last = max(s0, key=lambda r: r["k"])
        figures.rate_line(ax, xs, 1.0, through=(last["inv_rho"], last["tv"]), label="∝ 1/ρ")
    ax.set_xlabel("1/ρ (pole separation ρ = 2^−k, dimensionless)")
    ax.set_ylabel("TV of one profile; Lip (per unit length, α_0 = 1)")
    ax.set_title("faint: seeds with t* < 1 (rotated pair)")
    figures.log_axis(ax)
    ax.legend(loc="upper left")
    ks = [d["k"] for d in doubling]
    bx.plot(ks, [d["ratio_over_previous"] for d in doubling], "o-", color="C0",
            label="(TV/Lip)(ρ/2) / (TV/Lip)(ρ), t* = 1")
    bx.axhline(2.0, ls="--", color="0.35", lw=1.2, label="doubling (×2)")
    bx.set_xlabel("k (ρ = 2^−k)")
    bx.set_ylabel("factor per halving of ρ (dimensionless)")
    bx.set_ylim(1.0, 2.3)
    bx.set_title(f"slope over k ∈ {list(cfg['fit_k'])}: {dbl.estimate:.3f} [{dbl.ci[0]:.3f}, {dbl.ci[1]:.3f}]")
    bx.legend(loc="lower right")
    fig.suptitle("rob.cluster_failure: coherent two-cluster construction, exact constants")
    return fig
