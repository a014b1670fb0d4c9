"""checks.runners.bench.flat: the fair LP baseline (issue 14). Every general LP solver on the suite's split LP agrees
with
the suite's certified value; the section takes the fastest correct one as the baseline and gives the others
their reason and no ratio.

Oracles: the suite's certified bracket [dual_value, value] (weak duality, certified in float64) for the solvers'
objectives; hand-made solver outcomes (fast, slow, wrong, failed, timed out) for the selection logic.
"""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from checks.runners.bench import flat, report
from numerics import flat as nflat


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng([14, 20, 80])
    X, Th = rng.standard_normal((20, 4)), rng.standard_normal((80, 4))
    y = np.maximum(X[:, 0], 0) + 0.1 * rng.standard_normal(20)
    return Th, X, y, nflat.flattest_outer_weights(Th, X, y, "relu")


def test_the_split_lp_is_the_suites_lp(small):
    Th, X, y, res = small
    c, A, Phi, om = flat.split_lp(Th, X, "relu")
    live = res.omega > 0
    b = res.b[live]
    x = np.concatenate([np.maximum(b, 0), np.maximum(-b, 0)])
    assert A.shape == (20, 2 * Phi.shape[1]) and np.array_equal(A[:, : Phi.shape[1]], -A[:, Phi.shape[1]:])
    assert abs(float(c @ x) - res.value) <= 1e-12 * res.value  # the suite's b is feasible there, at its value
    assert np.max(np.abs(A @ x - y)) <= 1e-9


@pytest.mark.parametrize("name", list(flat.LP_SOLVERS))
def test_each_lp_solver_agrees_with_the_certified_value(small, name):
    Th, X, y, res = small
    assert res.rel_gap <= 1e-9  # a tight certified bracket, so that the comparison below means something
    out = flat._lp_job(Th, X, y, "relu", flat.LP_SOLVERS[name], 30.0)
    assert out["optimal"], out["status"]
    assert abs(out["value"] - res.value) <= flat.LP_AGREE * res.value, (out["value"], res.value)
    # no primal value may undercut the certified lower bound by more than the tolerance asked of the solver
    assert out["value"] >= res.dual_value - 10 * flat.LP_TOL * res.value
    assert out["interp_resid"] <= 1e-8 and out["cpu_seconds"] > 0 and out["seconds"] >= out["lp_seconds"] > 0


def _fake_runs(outcomes, ours_s=1.0):
    """A run_with_timeout stand-in: the suite takes ours_s, each LP solver what ``outcomes`` says."""

    def run(fn, args, limit):
        if fn is flat._flattest_job:
            return {"seconds": ours_s, "cpu_seconds": ours_s, "value": 10.0, "rel_gap": 1e-12}
        return dict(outcomes[args[4]])

    return run


def _ok(seconds, value=10.0):
    return {"seconds": seconds, "cpu_seconds": seconds / 2, "lp_seconds": seconds, "value": value, "optimal": True,
            "status": "Optimal", "iterations": 7, "interp_resid": 1e-14}


def test_the_fastest_correct_solver_is_the_baseline(monkeypatch):
    outcomes = {
        "highs": _ok(3.0),
        "highs-ds": _ok(0.5, value=10.0 * (1 + 1e-6)),  # fastest, but wrong
        "highs-ipm": {"timeout": 30.0},
        "clarabel": {"error": "ValueError: something broke"},
    }
    monkeypatch.setattr(flat, "run_with_timeout", _fake_runs(outcomes))
    bench = SimpleNamespace(quick=True)
    row = {"n": 10, "m": 40, "seconds": 1.0, "cpu_seconds": 1.0, "value": 10.0}
    last: dict = {}
    flat._lp_baselines(bench, row, (None, None, None, "relu"), last, always=False)
    runs = row["lp_baselines"]
    assert row["baseline_solver"] == "HiGHS default (highs)" and row["baseline_s"] == 3.0
    assert runs["HiGHS default (highs)"]["correct"]
    assert runs["HiGHS dual simplex (highs-ds)"]["reason"].startswith("wrong") and not runs[
        "HiGHS dual simplex (highs-ds)"]["correct"]
    assert runs["HiGHS interior point (highs-ipm)"]["reason"].startswith("timed out")
    assert runs["Clarabel (direct, split LP)"]["reason"] == "ValueError: something broke"
    s = row["speedup_pairs"]  # (3 + 1) s a pair fits the quick pair budget twice more: 3 pairs of ratio 3
    assert s["pairs"] == 3 and s["ratio_min"] == s["ratio_median"] == s["ratio_max"] == 3.0 == row["speedup"]
    assert s["cpu_ratio_median"] == 1.5 and s["headline"]
    # a solver that timed out is not run at the next size (the prediction is recorded), the others are
    flat._lp_baselines(bench, {**row, "n": 20, "m": 80}, (None, None, None, "relu"), last, always=False)
    assert last["HiGHS interior point (highs-ipm)"][2] is None
    # and the target size runs every solver whatever the previous size predicted
    row3 = {**row, "n": 40, "m": 160}
    flat._lp_baselines(bench, row3, (None, None, None, "relu"), last, always=True)
    assert row3["lp_baselines"]["HiGHS interior point (highs-ipm)"]["reason"].startswith("timed out after")


def test_none_correct_gives_reasons_and_only_a_bound_when_all_timed_out(monkeypatch):
    bench = SimpleNamespace(quick=True)
    row = {"n": 10, "m": 40, "seconds": 2.0, "cpu_seconds": 2.0, "value": 10.0}
    monkeypatch.setattr(flat, "run_with_timeout", _fake_runs({k: {"timeout": 30.0} for k in flat.LP_SOLVERS.values()}))
    flat._lp_baselines(bench, row, (None, None, None, "relu"), {}, always=True)
    assert "baseline_s" not in row and "speedup" not in row and row["speedup_lower"] == 15.0
    assert row["baseline_reason"].startswith("none correct") and row["baseline_reason"].count("timed out") == 4
    row = {"n": 10, "m": 40, "seconds": 2.0, "cpu_seconds": 2.0, "value": 10.0}
    out = {k: {"timeout": 30.0} for k in flat.LP_SOLVERS.values()}
    out["clarabel"] = {**_ok(1.0), "optimal": False, "status": "InsufficientProgress"}
    monkeypatch.setattr(flat, "run_with_timeout", _fake_runs(out))
    flat._lp_baselines(bench, row, (None, None, None, "relu"), {}, always=True)
    assert "speedup_lower" not in row and "speedup" not in row  # a failure is not a time-out: no bound either
    assert row["lp_baselines"]["Clarabel (direct, split LP)"]["reason"] == "not optimal: InsufficientProgress"


def test_real_solvers_in_child_processes_and_the_report(small):
    """The section's own path on a small problem: four real runs in forked children, then bench.md's tables."""
    Th, X, y, _ = small
    row = {"activation": "relu", "n": 20, "m": 80, "d": 4, **flat._flattest_job(Th, X, y, "relu")}
    flat._import_lp_solvers()
    flat._lp_baselines(SimpleNamespace(quick=True), row, (Th, X, y, "relu"), {}, always=False)
    runs = row["lp_baselines"]
    assert all(r.get("correct") for r in runs.values()), runs
    assert row["baseline_s"] == min(r["seconds"] for r in runs.values())
    assert row["baseline_value_rel_diff"] <= flat.LP_AGREE and math.isfinite(row["speedup"])
    data = {"flatness": {"available": True, "rows": [row]}}
    md = "\n".join(report.flat_lp_baselines(data, []))
    assert all(name in md for name in flat.LP_SOLVERS) and md.count("| yes |") == 4
    head = "\n".join(report._flat_headline(data))
    assert f"fastest correct of 4 general LP solvers: {row['baseline_solver']}" in head and "pairs" in head
