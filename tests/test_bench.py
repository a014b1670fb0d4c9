"""``checks.runners.bench``: its measuring helpers (harness), the ws cost model, the rob brute-force baseline, then a
``--quick`` run.

Why the oracles are independent of the code under test:

* the flop model ``closed_form_cost`` is checked against a hand count for one block and against the
  n²(M+1+6N) leading term read off ``numerics/ws/moments.py`` and its generated kernels (not a timing);
* the exponent fitter is checked on exact power laws;
* the brute-force Lipschitz baseline (an SOCP per sign pattern) and ``numerics.rob.lipschitz`` (a
  recursive arrangement enumeration) share no code; they must agree on the value;
* the quick run is checked for the files and keys it promises, not for its numbers.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from checks.runners.bench import flat, harness, ws
from checks.runners.bench.rob import brute_force_lipschitz


def test_cost_model_one_block_by_hand():
    n, M, N = 100, 7, 5
    c = ws.closed_form_cost(n, M, N, block=1024)
    e = n * n
    # Gram + gg (two GEMMs, K = N + 1 with the output bias's column of ones and K = N) + one G² product (gKg and KK
    # share their right factor; one orientation on the diagonal); writes G, L₀R₀ᵀ, L₁R₁ᵀ, T∘G, S + T, G² and
    # reads T∘G 2, S + T 2, vdot(S, S) 1 (√q folded into the factors), G² 1, the G² product 1
    assert c["flops"] == 2 * e * (M + 1) + 2 * e * (N + 1) + 2 * e * N + 2 * e * N
    assert c["bytes"] == 8 * e * (6 + 7)


def test_cost_model_leading_term():
    n, M, N = 8192, 30, 10
    c = ws.closed_form_cost(n, M, N, block=512)
    assert c["flops"] == pytest.approx(n * n * (M + 2 + 4 * N), rel=0.05)


def test_fit_exponent_on_exact_power_laws():
    x = np.array([1e2, 1e3, 1e4])
    assert harness.fit_exponent(x, 3 * x**2) == pytest.approx(2.0)
    assert harness.fit_exponent(x, 0.5 * x**-1) == pytest.approx(-1.0)
    assert np.isnan(harness.fit_exponent([1.0], [1.0]))


def test_fit_power_says_noise_when_it_is_noise():
    x = np.array([100.0, 200, 400, 800, 1600])
    clean = harness.fit_power(x, 2 * x**2)
    assert clean["slope"] == pytest.approx(2.0) and clean["verdict"] == "measured" and clean["r2"] > 0.999
    flat = harness.fit_power(x, np.array([1.0, 1.3, 0.8, 1.2, 0.9]))  # no trend: the slope is within its error
    assert flat["verdict"] == "noise"


def test_paired_ratios_and_the_spread_rule():
    import itertools

    ticks = itertools.count()
    slow = lambda: sum(range(20000))
    summ, outs = harness.paired(lambda: next(ticks), {"slow": slow}, rounds=3)
    s = summ["slow"]
    assert s["pairs"] == 3 and s["ratio_min"] <= s["ratio_median"] <= s["ratio_max"] and s["ratio_median"] > 1
    assert s["headline"] == (s["spread"] <= harness.SPREAD_MAX) and "load_before" in s
    assert outs["slow"] == sum(range(20000))
    one, _ = harness.paired(lambda: 0, {"x": lambda: 1}, rounds=3, deadline=0.0)  # past the deadline: one round
    assert one["x"]["pairs"] == 1 and not one["x"]["headline"] and "one pair" in one["x"]["why_no_headline"]


def test_readme_speed_table_is_replaced_between_its_markers(tmp_path):
    from checks.runners.bench import readme as report

    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.README_START}\nold table\n{report.README_END}\n"
                      f"{report.TARGETS_START}\nold targets\n{report.TARGETS_END}\noutro\n")
    data = {"meta": {"quick": True, "started": "T"}, "machine": {"loadavg_start": [3.0]}}
    report.write_readme(data, [], readme)
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("outro\n") and "old table" not in text
    assert "old targets" not in text and "| Target | Measured | Threshold | Status |" in text
    assert "| Comparison |" in text and "load average 3.0" in text
    readme.write_text("no markers")
    with pytest.raises(ValueError, match="bench:start"):
        report.write_readme(data, [], readme)


def test_interleaved_medians_and_per_contender_rounds():
    calls = []
    med, outs = harness.interleaved(
        {"a": lambda: calls.append("a") or 1, "b": lambda: calls.append("b") or 2}, rounds=3, reps={"b": 1}
    )
    assert calls == ["a", "b", "a", "a"] and outs == {"a": 1, "b": 2} and set(med) == {"a", "b"}


def test_memory_helpers_see_a_large_allocation():
    """Both ways: the helpers see a 32 MB / 64 MB array (not less: a meter that reports 0 passes ``rss >= 0``)
    and do not report several times what was allocated (not more: a meter that adds the process's whole RSS)."""
    traced, _ = harness.traced_peak(lambda: np.ones(4_000_000).sum())
    assert 30e6 <= traced <= 40e6  # one 32 MB array, plus small change
    big = 8_000_000 * 8  # 64 MB
    rss, how, _ = harness.rss_peak(lambda: np.ones(8_000_000).sum())
    if how.startswith("VmHWM"):  # the high-water mark was reset: the growth during fn is measured
        assert 0.9 * big <= rss <= 3 * big, (rss, how)
    else:  # ru_maxrss only shows growth past the process's earlier peak: a lower bound, never above the truth
        assert how.startswith("ru_maxrss") and 0 <= rss <= 3 * big, (rss, how)


def test_rss_fallback_sees_growth_past_the_earlier_peak(monkeypatch):
    """The ru_maxrss fallback (no /proc/self/clear_refs): an allocation larger than the process's peak so far shows
    at least its own size beyond that peak."""
    import resource

    from checks.runners.bench import resources

    monkeypatch.setattr(resources, "_hwm_reset", lambda: False)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if peak > 2e9:
        pytest.skip("the process's peak RSS is over 2 GB: allocating past it is too much for a unit test")
    n = int(peak // 8) + 8_000_000  # 64 MB more than the peak so far
    rss, how, _ = resources.rss_peak(lambda: np.ones(n).sum())
    assert how.startswith("ru_maxrss") and 0.9 * 64e6 <= rss <= 8 * n + 64e6, (rss, how)


def test_brute_force_baseline_agrees_with_exact_lipschitz():
    rob = pytest.importorskip("numerics.rob")
    rng = np.random.default_rng(7)
    for d in (2, 3):
        m = 5
        W = rng.standard_normal((m, d))
        b = rng.uniform(-0.7, 0.7, m) * np.linalg.norm(W, axis=1)
        a, v = rng.standard_normal(m), 0.3 * rng.standard_normal(d)
        lip = rob.lipschitz((W, b, a, v, 0.0), rob.Ball(d, 1.0))
        brute, feasible = brute_force_lipschitz(W, b, a, v)
        assert brute == pytest.approx(float(lip.upper), rel=1e-7)
        assert 1 <= feasible <= 2**m


@pytest.mark.slow
def test_quick_run_writes_report(tmp_path):
    import torch

    threads = torch.get_num_threads()
    rc = harness.main(["--quick", "--out", str(tmp_path), "--threads", "1"])
    assert torch.get_num_threads() == threads  # the caller's thread count is restored
    data = json.loads((tmp_path / "bench.json").read_text())
    assert rc == 0, data.get("errors")
    assert data["meta"]["quick"] and data["meta"]["seconds"] < data["meta"]["budget_s"] + 30
    for key in ("machine", "n_sweep", "D_sweep", "exponents", "headline", "mnist", "mpmath", "peers", "targets"):
        assert key in data
    # each peer agrees with the closed form where it should (issue 14); peers that are not installed have no row
    pe = data["peers"]["rows"]
    other = "torch" if data["peers"]["backend"] == "numpy" else "numpy"
    assert pe[f"suite {other} backend"]["rel_err"] < 1e-12
    if "BackPACK DiagHessian" in pe:  # exact tr H
        assert pe["BackPACK DiagHessian"]["rel_err"] < 1e-10
    for name in ("curvlinops Hutchinson", "curvlinops Hutch++", "curvlinops XTrace"):
        if name in pe:  # unbiased estimates: within 5 Hutchinson standard errors at their product count
            k, sd = data["peers"]["probes_run"], data["peers"]["hutchinson_single_probe_sd"]
            assert abs(pe[name]["value"] - data["peers"]["trace"]) <= 5 * sd / k**0.5, (name, pe[name])
    full = data.get("mnist_1pct", {})
    if "seconds" in full:  # curvlinops at the 1% count, in chunks: unbiased, so within 5 standard errors
        assert full["probes"] == data["mnist"]["probes_for_1pct"]
        assert full["calls"] == -(-full["probes"] // full["chunk"])
        assert abs(full["z"]) <= 5 and full["rel_err"] <= 5 * 0.01, full
    if "curvlinops eigsh λ_max" in pe and "PyHessian eigenvalues()" in pe:
        assert pe["PyHessian eigenvalues()"]["rel_err"] < 5e-2  # power iteration to tol 1e-3 on a gapped top
    if "PyHessian trace()" in pe:  # what it returns is its own stopping rule, replayed
        assert pe["PyHessian trace()"]["probes"] == pe["PyHessian trace()"]["stop_replayed"]
    for r in pe.values():
        assert r["ratio_min"] <= r["ratio_median"] <= r["ratio_max"] and r["pairs"] >= 1
    # stand-in sizes judge nothing: a quick run prints each number and no hit or miss
    assert {t["status"] for t in data["targets"]} <= {"quick sizes", "not run"} and data["targets"]
    assert all(t["passed"] is None for t in data["targets"])
    # softmax pair tiles on Dask: the same bits in this process and on 1 and 2 workers, a full run with a journal
    sd = data.get("softmax_dask", {})
    if sd:
        assert sd["bit_identical"] and sd["full"]["tasks_run"] == sd["full"]["tasks"] >= 1
        assert sd["full"]["peak_rss_mb_per_worker"] > 0 and sd["model"]["rows"]
    sf = data.get("softmax_floor", {})
    if sf:  # the method's own count: half the naive product's flops (upper triangle) plus the smaller products
        assert 0.5 < sf["method_flops"] / sf["naive_flops"] < 1.0 and sf["roofline_tiles_s"] > 0
    md = (tmp_path / "bench.md").read_text()
    assert "## Headline" in md and "| Comparison |" in md
    assert any(p.endswith("bench_n_sweep.png") for p in data["figures"])
    # the closed form and the dense Hessian agree wherever both ran (the bench cross-checks (a) and (b))
    for r in data["n_sweep"]["rows"] + data["D_sweep"]["rows"]:
        if "rel_err_trace_sq" in r:
            assert r["rel_err_trace_sq"] < 1e-9 and r["rel_err_trace"] < 1e-9
    # the flattest-weights solvers and their general-purpose baselines agree, each with a certified gap
    for r in data["flatness"]["rows"]:
        assert r["rel_gap"] <= 1e-9 and r["baseline_value_rel_diff"] <= 1e-9, r
        assert r["speedup"] > 0 and r["baseline_solver"] in (*flat.LP_SOLVERS, "cvxpy + Clarabel")
        if r["activation"] == "relu":  # the fastest of the general LP solvers that agree (issue 14)
            assert r["baseline_s"] == min(b["seconds"] for b in r["lp_baselines"].values() if b.get("correct"))
