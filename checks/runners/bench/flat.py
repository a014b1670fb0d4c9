"""flat (flatness of homogeneous nets): the flattest outer weights against general-purpose solvers.

The suite's :func:`numerics.flat.flattest_outer_weights` (an LP for ReLU, p = 1; a power cone for ReLU²,
p = 4/3) against the solvers a user would reach for, on the same random problems, with the issue's
n = 10³, m = 10⁴ LP target.

LP (issue 14, the fair baseline): every general solver in ``LP_SOLVERS`` (HiGHS's default, dual simplex and
interior point through ``scipy.optimize.linprog``; Clarabel through its own API) runs on the suite's split LP,
each in its own child process with a time limit, timed from the raw inputs like the suite. A solver counts as
correct when it reports optimal and its objective is within ``LP_AGREE`` of the suite's certified value; the
fastest correct one is the row's baseline. The solvers race (``LP_RACE``): each one after the first is stopped at
the fastest correct time so far (+ 1 s), which cannot change the winner and bounds the cost; the section has its own
time allotment (``FLAT_ALLOT_S``), and a solver it leaves no time for says so. A solver that fails, times out, is
stopped or disagrees gets its reason and no ratio. The ratio baseline/suite is the median of per-pair ratios with
its min–max (the first round's pair, plus interleaved pairs, order alternating, while they fit ``PAIR_BUDGET``),
with the CPU-time ratio beside it and ``headline`` False when the spread exceeds ``harness.SPREAD_MAX``. Power
cone: cvxpy + Clarabel (the suite's ``method="clarabel"``), one run.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from checks.runners.bench.core import Bench, pyplot, save_figure
from checks.runners.bench.resources import run_with_timeout
from checks.runners.bench.timing import ratio_summary


def flattest_section(bench: Bench):
    """The suite's flattest-outer-weights solvers against HiGHS / Clarabel, each problem in a child process."""
    try:
        from numerics.flat import flattest_outer_weights
    except ImportError as exc:
        bench.data["flatness"] = {"available": False, "reason": f"numerics.flatness not available: {exc}"}
        return
    _import_lp_solvers()
    g = bench.grid
    rows = []
    t_end = min(bench.deadline, time.perf_counter() + FLAT_ALLOT_S[0 if bench.quick else 1])
    # the power cone first: its rows are cheap, and the LP target's race would otherwise spend the allotment
    for act, grid in (("relu_power:2", g.flat_pc), ("relu", g.flat_lp)):
        last = None
        base: dict[str, Any] = {"method": "clarabel", "last": None}  # the power cone's baseline
        lp_last: dict[str, tuple] = {}  # per LP solver: (n, m, seconds or None if it timed out)
        for n, m in grid:
            rng = np.random.default_rng([bench.seed, n, m])
            X = rng.standard_normal((n, g.flat_d))
            Th = rng.standard_normal((m, g.flat_d))
            u = np.eye(g.flat_d)[0]
            y = np.maximum(X @ u, 0) + 0.1 * rng.standard_normal(n)
            row = {"activation": act, "n": n, "m": m, "d": g.flat_d}
            is_target = act == "relu" and (n, m) == (1000, 10000)  # issue 5's LP size always runs
            if not is_target and time.perf_counter() > t_end:
                row.update(skipped=True, reason="not run: the flatness section's time allotment is spent")
                rows.append(row)
                continue
            if last is not None and last[2] > 2.0 and not is_target:  # extrapolate ∝ n·m
                est = last[2] * (n * m) / (last[0] * last[1])
                if est > (60 if bench.quick else 300):
                    row.update(skipped=True, reason=f"extrapolated {est:.0f} s from ({last[0]}, {last[1]})")
                    rows.append(row)
                    continue
            limit = 60.0 if bench.quick else 240.0
            out = run_with_timeout(_flattest_job, (Th, X, y, act), limit)
            if "timeout" in out:
                row.update(timed_out=True, reason=f"timed out after {limit:.0f} s (solver still running)")
            elif "error" in out:  # recorded, not fatal: the bench measures, the tests judge
                row.update(error=out["error"])
            else:
                row.update(out)
                last = (n, m, out["seconds"])
                if act == "relu":
                    _lp_baselines(bench, row, (Th, X, y, act), lp_last, always=is_target, t_end=t_end)
                else:
                    _baseline(bench, row, (Th, X, y, act), base, always=is_target, t_end=t_end)
            rows.append(row)
            bench.log(
                f"flatness {act} n={n} m={m}: {row.get('seconds', row.get('error', '-'))}"
                f" (baseline {row.get('baseline_solver')}: {row.get('baseline_s', row.get('baseline_reason'))})"
            )
    bench.data["flatness"] = {"available": True, "rows": rows}
    if not bench.quick:
        big = next((r for r in rows if r["activation"] == "relu" and (r["n"], r["m"]) == (1000, 10000)), None)
        lp_rows = [r for r in rows if r["activation"] == "relu" and "seconds" in r]
        scaling = "; LP times: " + ", ".join(f"({r['n']}, {r['m']}) {r['seconds']:.1f} s" for r in lp_rows)
        name = "flattest LP, n = 10³ and m = 10⁴, under 30 s"
        if big is not None and "seconds" in big:
            rng = np.random.default_rng([bench.seed, 1000, 10000])
            X = rng.standard_normal((1000, g.flat_d))
            Th = rng.standard_normal((10000, g.flat_d))
            y = np.maximum(X @ np.eye(g.flat_d)[0], 0) + 0.1 * rng.standard_normal(1000)
            prof = (lambda: flattest_outer_weights(Th, X, y, "relu")) if big["seconds"] < 120 else None
            expl = f"solver {big.get('solver')}" + scaling
            bench.target(name, big["seconds"], "<=", 30.0, "s", prof, explanation=expl)
        elif big is not None and big.get("timed_out"):
            bench.target(
                name,
                240.0,
                "<=",
                30.0,
                "s (lower bound: timed out)",
                None,
                explanation="timed out after 240 s" + scaling,
            )
        else:
            bench.target(
                name,
                None,
                "<=",
                30.0,
                "s",
                None,
                skipped="the (10³, 10⁴) LP failed: " + str((big or {}).get("error")),
            )


def _baseline(
    bench: Bench, row: dict[str, Any], args: tuple, base: dict[str, Any], always: bool, t_end: float = math.inf
) -> None:
    """The power cone's general-purpose solver (cvxpy + Clarabel, ``method="clarabel"``) on the same problem.

    Skipped (with the reason) where the previous size already predicts more than the time limit (the issue's
    target size excepted), or where what is left of the section's time allotment (``t_end``) is below the limit.
    """
    limit = 30.0 if bench.quick else (240.0 if always else 60.0)
    n, m = row["n"], row["m"]
    row["baseline_solver"] = "cvxpy + Clarabel"
    if t_end - time.perf_counter() < limit:
        row["baseline_reason"] = (f"not run: less than its {limit:.0f} s limit is left of the flatness section's "
                                  "time allotment")
        return
    prev = base["last"]
    if prev is not None and not always:
        pn, pm, ps = prev
        est = ps * (n * m) / (pn * pm) if ps is not None else math.inf
        if est > limit:
            why = "timed out" if ps is None else f"took {ps:.0f} s"
            row["baseline_reason"] = f"not run: it {why} at ({pn}, {pm}), predicting > {limit:.0f} s here"
            return
    out = run_with_timeout(_flattest_job, (*args, base["method"]), limit)
    if "timeout" in out:
        base["last"] = (n, m, None)
        row["baseline_reason"] = f"timed out after {limit:.0f} s"
        row["speedup_lower"] = limit / row["seconds"]
    elif "error" in out:
        row["baseline_reason"] = out["error"]
    else:
        base["last"] = (n, m, out["seconds"])
        row["baseline_s"] = out["seconds"]
        row["speedup"] = out["seconds"] / row["seconds"]
        row["baseline_value_rel_diff"] = abs(out["value"] - row["value"]) / abs(row["value"])


PAIR_BUDGET = (10.0, 90.0)  # seconds (quick, full) of extra interleaved (suite, best baseline) pairs per row
PAIR_ROUNDS = 3  # at most, including the first round's pair
# The section's share of the bench's time (s; quick, full): rows, baselines and pairs stop starting past it.
FLAT_ALLOT_S = (40.0, 280.0)
# The race: the solvers run in LP_ORDER, and each one after the first is stopped at LP_RACE × the fastest correct
# solver's time so far (+ 1 s for the child's start): stopped there it is slower than that one, so it cannot be
# the baseline (the fastest correct). (1.5× in the first full run spent 100 s of the allotment on a dual simplex
# that could not have won.)
# The order changes what the section costs, never which solver wins: the interior point methods first, whose
# iteration count stays flat with size (8 to 22 here), the simplex last, whose count grows with n (1361 at n = 300,
# 3794 at n = 10³).
LP_ORDER = ("highs-ipm", "clarabel", "highs-ds", "highs")
LP_RACE = 1.0


def _lp_baselines(
    bench: Bench, row: dict[str, Any], args: tuple, last: dict[str, tuple], always: bool, t_end: float = math.inf
) -> None:
    """Every LP_SOLVERS entry on the row's split LP, raced (see ``LP_RACE``); the fastest correct one is the baseline.

    Writes ``row["lp_baselines"]`` ({solver: its run or its reason}) and, for the best correct solver,
    ``baseline_solver``, ``baseline_s``, ``baseline_cpu_s``, ``speedup`` (median per-pair ratio) and
    ``speedup_pairs`` (the summary); with none correct, ``baseline_reason`` (and ``speedup_lower`` when every
    solver ran into the row's limit). Not run, each with its reason: a solver whose previous size took or predicted
    more than the limit (∝ n·m; except at the issue's target size); HiGHS's default where at every earlier size it
    ran the dual simplex (the same iterations as highs-ds); any solver once the section's time (``t_end``, a
    ``time.perf_counter`` value) is spent.
    """
    row_limit = 30.0 if bench.quick else (240.0 if always else 120.0)
    n, m = row["n"], row["m"]
    runs: dict[str, dict[str, Any]] = {}
    best_s = math.inf
    names = {solver: name for name, solver in LP_SOLVERS.items()}
    for solver in LP_ORDER:
        name = names[solver]
        prev = last.get(name)
        if prev is not None and not always:
            pn, pm, ps = prev
            est = ps * (n * m) / (pn * pm) if ps is not None else math.inf
            if est > row_limit:
                why = "timed out" if ps is None else f"took {ps:.0f} s"
                runs[name] = {"reason": f"not run: it {why} at ({pn}, {pm}), predicting > {row_limit:.0f} s here"}
                continue
        if solver == "highs" and last.get("highs_is_ds"):
            runs[name] = {"reason": "not run: at every smaller size HiGHS's default chose the dual simplex (the same "
                                    "iteration count and objective as highs-ds, timed in the row)"}
            continue
        left = t_end - time.perf_counter()
        race = LP_RACE * best_s + 1.0  # plus a second for the child's start
        limit = min(row_limit, race, left)
        if left < 1.0:
            runs[name] = {"reason": "not run: the flatness section's time allotment is spent"}
            continue
        load0 = os.getloadavg()[0]
        out = run_with_timeout(_lp_job, (*args, solver, limit), limit + 10.0)  # its own limit, then the kill
        rec: dict[str, Any] = {"load_before": load0, "load_after": os.getloadavg()[0], "limit_s": limit}
        stop = (f"stopped at {limit:.1f} s = {LP_RACE:g}× the fastest correct solver so far + 1 s: slower, so not "
                "the baseline") if limit == race else (
                f"timed out after {limit:.0f} s" + (" (the section's time allotment)" if limit == left else ""))
        if "timeout" in out:
            rec["reason"], rec["timed_out"] = stop + " (killed)", True
            last[name] = (n, m, None) if limit == row_limit else (n, m, limit)  # a race stop: a lower bound
        elif "error" in out:
            rec["reason"] = out["error"]
        else:
            rec.update(out)
            rec["value_rel_diff"] = abs(out["value"] - row["value"]) / abs(row["value"])
            if not out["optimal"]:
                timed = out["seconds"] >= 0.95 * limit
                rec["reason"] = (stop + " (its own limit): " if timed else "not optimal: ") + str(out["status"])[:120]
                rec["timed_out"] = timed
                last[name] = (n, m, None if timed and limit == row_limit else out["seconds"])
            else:
                last[name] = (n, m, out["seconds"])
                if not rec["value_rel_diff"] <= LP_AGREE:
                    rec["reason"] = (f"wrong: objective {out['value']:.12g} differs from the suite's certified "
                                     f"{row['value']:.12g} by {rec['value_rel_diff']:.1e} relative > {LP_AGREE:g}")
            rec["correct"] = "reason" not in rec
            if rec["correct"]:
                best_s = min(best_s, out["seconds"])
        runs[name] = rec
    ds, dflt = runs.get(names["highs-ds"], {}), runs.get(names["highs"], {})
    if "iterations" in dflt:  # the default ran here: does it still resolve to the dual simplex?
        last["highs_is_ds"] = last.get("highs_is_ds", True) and dflt["iterations"] == ds.get("iterations") and \
            dflt.get("value") == ds.get("value")
    row["lp_baselines"] = {name: runs[name] for name in LP_SOLVERS if name in runs}
    ok = {k: r for k, r in runs.items() if r.get("correct")}
    if not ok:
        row["baseline_solver"] = "best general LP solver"
        row["baseline_reason"] = "none correct: " + "; ".join(
            f"{k}: {r['reason']}" for k, r in row["lp_baselines"].items())
        if all(r.get("timed_out") for r in runs.values()):  # a bound, not a ratio: every solver ran out of time
            row["speedup_lower"] = min(r["limit_s"] for r in runs.values()) / row["seconds"]
        return
    best = min(ok, key=lambda k: ok[k]["seconds"])
    b = ok[best]
    row.update(baseline_solver=best, baseline_s=b["seconds"], baseline_cpu_s=b["cpu_seconds"],
               baseline_value_rel_diff=b["value_rel_diff"])
    pairs = [(b["seconds"] / row["seconds"], b["cpu_seconds"] / max(row["cpu_seconds"], 1e-9))]
    load0 = min(b["load_before"], os.getloadavg()[0])
    budget = PAIR_BUDGET[0] if bench.quick else PAIR_BUDGET[1]
    spent, per_pair = 0.0, b["seconds"] + row["seconds"]
    for r in range(1, PAIR_ROUNDS):
        if spent + per_pair > budget or time.perf_counter() + per_pair > t_end:
            break
        got = {}
        order = [("base", _lp_job, (*args, LP_SOLVERS[best], row_limit)), ("ours", _flattest_job, args)]
        for who, fn, a in order if r % 2 else order[::-1]:
            out = run_with_timeout(fn, a, row_limit + 10.0)
            if "seconds" not in out or (who == "base" and not out.get("optimal")):
                break
            got[who] = out
        if len(got) < 2:
            break
        pairs.append((got["base"]["seconds"] / got["ours"]["seconds"],
                      got["base"]["cpu_seconds"] / max(got["ours"]["cpu_seconds"], 1e-9)))
        spent += got["base"]["seconds"] + got["ours"]["seconds"]
    summ = ratio_summary([p[0] for p in pairs], [p[1] for p in pairs], load=(load0, os.getloadavg()[0]),
                         one=f"one pair only (a further pair would not fit the section's pair budget of {budget:.0f} s "
                         "or its time allotment)")
    row["speedup"], row["speedup_pairs"] = summ["ratio_median"], summ


def _flattest_job(Th, X, y, act, method="auto"):
    from numerics.flat import flattest_outer_weights

    t0, c0 = time.perf_counter(), time.process_time()
    res = flattest_outer_weights(Th, X, y, act, method=method)
    return {
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
        "value": res.value,
        "p": res.p,
        "solver": res.solver,
        "rel_gap": res.rel_gap,
        "interp_resid": res.interpolation_residual,
    }


# The general LP solvers on the suite's split LP min (ω, ω)·x s.t. [Φ̄, −Φ̄] x = y, x ≥ 0 (Φ̄, ω on the live
# columns, as in ``flattest_outer_weights``), each called directly: scipy's HiGHS front end with each method, and
# Clarabel's own Python API (not through cvxpy). Each is asked for LP_TOL (HiGHS: primal and dual feasibility;
# Clarabel: feasibility and absolute and relative gap), about the suite's certified gap (~1e-11).
LP_SOLVERS = {
    "HiGHS default (highs)": "highs",
    "HiGHS dual simplex (highs-ds)": "highs-ds",
    "HiGHS interior point (highs-ipm)": "highs-ipm",
    "Clarabel (direct, split LP)": "clarabel",
}
LP_TOL = 1e-10
# A baseline is correct when it reports optimal and its objective is within LP_AGREE (relative) of the suite's
# certified value: 100× the tolerance asked, for the objective error that primal and dual infeasibility of
# LP_TOL allow (Clarabel's interior point ends 1e-10 below the optimum at (300, 3000), its x ≥ 0 met to LP_TOL).
LP_AGREE = 1e-8


def _import_lp_solvers() -> None:
    """Import the LP solvers in the parent, so that no forked child's time includes an import (a missing one
    shows up as that solver's error)."""
    import contextlib

    import scipy.optimize  # noqa: F401
    import scipy.sparse  # noqa: F401

    with contextlib.suppress(ImportError):
        import clarabel  # noqa: F401


def split_lp(Th, X, act):
    """(c, A_eq, Φ̄, ω) of the split LP on the live columns (ω_j > 0), the features as the suite computes them."""
    from numerics.flat.duality import invariant_form

    inv = invariant_form(Th, X, act)
    live = np.flatnonzero(inv.omega > 0)
    Phi, om = inv.Phibar[:, live], inv.omega[live]
    return np.concatenate([om, om]), np.hstack([Phi, -Phi]), Phi, om


def _lp_job(Th, X, y, act, solver, time_limit=math.inf):
    """One general LP solver on the split LP, timed from the raw inputs (features included, as for the suite).

    Returns seconds (wall), cpu_seconds, lp_seconds (the solver call alone), value = c·x, optimal (the solver's
    own status says optimal), status (its message), iterations and max|Φ̄b − y|; NaN where it has no x.
    """
    t0, c0 = time.perf_counter(), time.process_time()
    c, A, Phi, _ = split_lp(Th, X, act)
    t1 = time.perf_counter()
    if solver == "clarabel":
        import clarabel
        import scipy.sparse as sp

        n, k = A.shape
        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.tol_feas = settings.tol_gap_abs = settings.tol_gap_rel = LP_TOL
        settings.time_limit = float(time_limit)
        Ac = sp.vstack([sp.csc_matrix(A), -sp.identity(k, format="csc")], format="csc")  # Ax + s = b
        cones = [clarabel.ZeroConeT(n), clarabel.NonnegativeConeT(k)]
        sol = clarabel.DefaultSolver(sp.csc_matrix((k, k)), c, Ac, np.concatenate([y, np.zeros(k)]), cones,
                                     settings).solve()
        status, x, nit = str(sol.status), np.asarray(sol.x, dtype=float), int(sol.iterations)
        optimal = status == "Solved"
    else:
        from scipy.optimize import linprog

        res = linprog(c, A_eq=A, b_eq=y, bounds=(0, None), method=solver,
                      options={"primal_feasibility_tolerance": LP_TOL, "dual_feasibility_tolerance": LP_TOL,
                               "time_limit": float(time_limit)})
        x = res.x if res.x is not None else np.full(c.size, np.nan)
        status, nit, optimal = res.message, int(res.nit), res.status == 0
    lp = time.perf_counter() - t1
    m = Phi.shape[1]
    return {
        "seconds": time.perf_counter() - t0,
        "cpu_seconds": time.process_time() - c0,
        "lp_seconds": lp,
        "value": float(c @ x),
        "optimal": bool(optimal),
        "status": status,
        "iterations": nit,
        "interp_resid": float(np.max(np.abs(Phi @ (x[:m] - x[m:]) - y))),
    }


def plots(out: Path, data: dict[str, Any]) -> list[str]:
    """Time against n·m, ours and the baseline (a timed-out baseline is drawn at its lower bound)."""
    fl = data.get("flatness", {})
    if not fl.get("available"):
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 4))
    for act in ("relu", "relu_power:2"):
        rr = [r for r in fl["rows"] if r["activation"] == act and "seconds" in r]
        if rr:
            ax.loglog([r["n"] * r["m"] for r in rr], [r["seconds"] for r in rr], "o-", label=f"{act}: ours")
            bb = [r for r in rr if "baseline_s" in r]
            if bb:
                line = ax.loglog(
                    [r["n"] * r["m"] for r in bb],
                    [r["baseline_s"] for r in bb],
                    "x--",
                    label=f"{act}: " + ("fastest correct general LP solver" if act == "relu"
                                        else bb[0]["baseline_solver"]),
                )[0]
                to = [r for r in rr if "speedup_lower" in r]  # timed out: the limit is a lower bound
                if to:
                    ax.loglog(
                        [r["n"] * r["m"] for r in to],
                        [r["speedup_lower"] * r["seconds"] for r in to],
                        "^",
                        color=line.get_color(),
                        label=f"{act}: baseline timed out (≥)",
                    )
    ax.set(xlabel="n·m", ylabel="seconds", title="flattest outer weights")
    ax.legend(fontsize=7, loc="upper left")
    return [save_figure(fig, out, "flatness")]
