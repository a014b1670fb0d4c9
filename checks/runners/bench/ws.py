"""ws (Wolkowicz–Styan Hessian bounds): the closed-form moments tr H, tr H² against the alternatives.

(a) the suite's closed form :func:`numerics.ws.ce_hessian_moments`, (b) the dense Hessian by
``torch.func`` plus ``eigvalsh``, (c) the HVP estimators of :mod:`numerics.ws.estimators`; their scaling
in n and D, memory against the block size, the roofline at the headline size, the MNIST-sized case,
dps = 50 (arb balls, mpmath object arrays) against float64, and the falsifier's throughput on the ws properties.
"""

from __future__ import annotations

import math
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from checks.runners.bench.core import Bench, pyplot, save_figure
from checks.runners.bench.resources import GB, MB, profile_top, rss_peak, traced_peak
from checks.runners.bench.timing import fit_exponent, fit_power, interleaved, median_time, ratio_summary, round_robin


# --------------------------------------------------------------------------------------------- problems
def make_net(M: int, N: int, n: int, seed: int = 0):
    """A generic tanh net and a two-class Gaussian data set (scales keep p away from 0 and 1)."""
    rng = np.random.default_rng([seed, M, N, n])
    W = rng.normal(size=(N, M)) / math.sqrt(M)
    b = 0.1 * rng.normal(size=N)
    v = rng.normal(size=N) / math.sqrt(N)
    y = rng.integers(0, 2, n)
    X = rng.normal(size=(n, M)) + 0.5 * (2 * y[:, None] - 1) / math.sqrt(M)
    return W, b, v, 0.1, X, y


def dim_of(M: int, N: int) -> int:
    return N * (M + 2) + 1


def closed_form_cost(n: int, M: int, N: int, block: int = 256) -> dict[str, float]:
    """Flops of the GEMMs and bytes of the block-sized elementwise passes of ``numerics.ws.moments._pair_sums_f64``.

    Counted from the code (pair sums grouped by the power of G, gKg's and KK's G² terms sharing their right factor
    r∘φ″; bias=True, so g_i·g_j's p = 0 GEMM has the output-bias column of ones): per pair of blocks (I ≤ J) one
    Gram GEMM (K = M+1), gg's GEMMs with K = N+1 and K = N, the 2e flops of Σ S′² (√q folded into gg's factors),
    and one (b×b)·(b×N) G² product per orientation (one on the diagonal). Elementwise traffic per b_I×b_J block,
    8 bytes each: writes G, gg's 2 GEMM outputs, T∘G, S′ + T, G² (6); reads T∘G 2, S′ + T 2, vdot(S′, S′) 1, G² 1
    and one per G² product (2 off the diagonal, 1 on it). The O(n(M+1)N) G-linear terms, the factor stacks and the
    per-sample tables are omitted.
    """
    flops = bytes_ = 0.0
    starts = list(range(0, n, block))
    for I in starts:
        bi = min(block, n - I)
        for J in starts:
            if J < I:
                continue
            bj = min(block, n - J)
            e = bi * bj
            diag = I == J
            flops += 2 * e * (M + 1) + 2 * e + 2 * e * N * (3 if diag else 4)
            bytes_ += 8 * e * (6 + (7 if diag else 8))
    return {"flops": flops, "bytes": bytes_}


# ----------------------------------------------------------------------------------------------- sections
def closed(net, block=None, backend=None):
    """The suite's closed form as a user calls it (its default block and backend unless given)."""
    from numerics.ws import ce_hessian_moments

    kw = {} if block is None else {"block": block}
    if backend is not None:
        kw["backend"] = backend
    return lambda: ce_hessian_moments(*net, "tanh", **kw)


def warm_hvp(net):
    """Batched Hessian-vector products of the net (torch.func), traced once."""
    from numerics.ws.reference import hvp_operator

    hvp, D = hvp_operator(*net, "tanh")
    import torch

    hvp(torch.ones(D, 2, dtype=torch.float64))  # warm up torch.func tracing
    return hvp, D


# A dense Hessian estimated to take longer than this runs once (its memory run is also its timing): at D = 8001
# one run is a minute, and the ratio to a 0.1 s closed form does not need a median to be read.
DENSE_ONE_RUN_S = 30.0


def dense_plan(bench: Bench, M, N, n, t_probe: float) -> dict[str, Any]:
    D = dim_of(M, N)
    per_dir = 8.0 * n * (M + 6 * N) * 3  # tangents of the forward/backward intermediates
    chunk = int(max(1, min(D, (256 * MB) // per_dir)))
    mem = 8.0 * D * D * 4 + chunk * per_dir  # H, the identity, eigvalsh copy + work
    t_est = t_probe * D + bench.data["machine"]["eigvalsh_s_per_D3"] * D**3
    plan = {"D": D, "chunk": chunk, "mem_est_gb": mem / GB, "time_est_s": t_est, "run": True}
    if mem > bench.dense_mem:
        plan.update(
            run=False,
            reason=f"estimated memory {mem / GB:.1f} GB > budget {bench.dense_mem / GB:.1f} GB "
            f"(H alone is 8·D² = {8 * D * D / GB:.1f} GB)",
        )
    elif t_est > bench.dense_time:
        plan.update(
            run=False,
            reason=f"estimated time {t_est:.0f} s > budget {bench.dense_time:.0f} s "
            "(D HVP columns + eigvalsh, at this run's measured rates)",
        )
    return plan


def dense(net, chunk):
    """The dense Hessian, block of columns by block (forward-over-reverse, ``chunk`` columns a vmap)."""
    import torch

    from numerics.ws.reference import hvp_operator

    hvp, D = hvp_operator(*net, "tanh")

    def run():
        H = torch.empty(D, D, dtype=torch.float64)
        eye = torch.eye(D, dtype=torch.float64)
        for s in range(0, D, chunk):
            H[:, s : s + chunk] = hvp(eye[:, s : s + chunk])
        H = 0.5 * (H + H.T)
        ev = torch.linalg.eigvalsh(H)
        return float(ev[-1]), float(torch.trace(H)), float((H * H).sum())

    return run


def sweep(bench: Bench, key: str, cases: list[tuple[int, int, int]], progress=None):
    from numerics.ws.estimators import hutchinson, lanczos_lmax

    g = bench.grid
    rows = []
    for M, N, n in cases:
        net = make_net(M, N, n, bench.seed)
        row: dict[str, Any] = {"M": M, "N": N, "n": n, "D": dim_of(M, N)}
        cf = closed(net)
        t_cf, m = median_time(cf, reps=g.reps if n <= 5000 else 2, min_total=0 if bench.quick else 0.3)
        row["closed_s"] = t_cf
        row["closed_mem_traced_mb"] = traced_peak(cf)[0] / MB  # the numpy path: tracemalloc sees its arrays
        row["trace"], row["trace_sq"] = m.trace, m.trace_sq
        cost = closed_form_cost(n, M, N)
        row.update(closed_gflop=cost["flops"] / 1e9, closed_gbytes=cost["bytes"] / 1e9)
        hvp, D = warm_hvp(net)
        hres = hutchinson(hvp, D, n_probes=g.hutch_probes, batch=8, seed=bench.seed)
        row["hvp_s_per_probe"] = hres.seconds / hres.n_probes
        row["hutch_rel_sd_trace"] = float(np.std(hres.trace.samples, ddof=1) / abs(hres.trace.estimate))
        row["hutch_rel_sd_trace_sq"] = float(np.std(hres.trace_sq.samples, ddof=1) / hres.trace_sq.estimate)
        steps = min(20, D)
        lz = lanczos_lmax(hvp, D, steps=steps, seed=bench.seed)
        row["lanczos_s_per_step"] = lz.seconds / lz.steps
        plan = (
            dense_plan(bench, M, N, n, row["hvp_s_per_probe"])
            if n <= g.dense_n_max
            else {
                "run": False,
                "reason": f"n > {g.dense_n_max}: dense only at n ≤ {g.dense_n_max} in this sweep "
                "(its cost is linear in n at fixed D; see the D sweep)",
            }
        )
        row["dense_plan"] = plan
        if plan["run"]:
            dn = dense(net, plan["chunk"])
            t0 = time.perf_counter()
            mem, how, out1 = rss_peak(dn)
            t1 = time.perf_counter() - t0
            row["dense_mem_rss_mb"], row["rss_method"] = mem / MB, how
            if plan["time_est_s"] > DENSE_ONE_RUN_S:  # one dense run (the memory run), the closed form around it
                med = {"dense": t1, "closed": median_time(cf, reps=3)[0]}
                outs, row["dense_runs"] = {"dense": out1}, 1
            else:  # interleaved: the closed form runs between dense runs, medians of each
                rounds = 2 if plan["time_est_s"] > 10 else 3
                med, outs = interleaved({"closed": cf, "dense": dn}, rounds=rounds)
                row["dense_runs"] = rounds
            row["dense_s"], row["closed_s_interleaved"] = med["dense"], med["closed"]
            row["ratio_dense_over_closed"] = med["dense"] / med["closed"]
            lmax, tr, tr2 = outs["dense"]
            row["dense_lmax"] = lmax
            row["rel_err_trace"] = abs(m.trace - tr) / abs(tr)
            row["rel_err_trace_sq"] = abs(m.trace_sq - tr2) / tr2
            row["lanczos_steps"], row["lanczos_lmax"] = steps, lz.estimate
            row["lanczos_rel_err"] = abs(lz.estimate - lmax) / abs(lmax)
        rows.append(row)
        bench.log(
            f"{key}: M={M} N={N} n={n} D={row['D']}: closed {t_cf:.3g}s"
            + (
                f", dense {row['dense_s']:.3g}s ({row['ratio_dense_over_closed']:.0f}x)"
                if "dense_s" in row
                else f", dense skipped ({plan['reason'][:60]})"
            )
        )
        if progress:
            progress()
    bench.data[key] = {"rows": rows}
    return rows


def fits(bench: Bench):
    n_rows = bench.data["n_sweep"]["rows"]
    ns = [r["n"] for r in n_rows]
    tail = [r for r in n_rows if r["n"] >= 1000] or n_rows
    big = [r for r in n_rows if r["n"] >= 2048] or n_rows[-2:]
    D_rows = bench.data["D_sweep"]["rows"]
    flopsD = [r["M"] + 1 + 6 * r["N"] for r in D_rows]
    dbig = [r for r in D_rows if r["D"] >= 500] or D_rows
    f = {
        "time_vs_n": fit_exponent([r["n"] for r in tail], [r["closed_s"] for r in tail]),
        "time_vs_n_range": [tail[0]["n"], tail[-1]["n"]],
        "time_vs_n_predicted": 2.0,
        "mem_vs_n": fit_exponent([r["n"] for r in big], [r["closed_mem_traced_mb"] for r in big]),
        "mem_vs_n_range": [big[0]["n"], big[-1]["n"]],
        "mem_vs_n_predicted": 1.0,
        "time_vs_D": fit_exponent([r["D"] for r in dbig], [r["closed_s"] for r in dbig]),
        "time_vs_D_predicted": fit_exponent([r["D"] for r in dbig], [r["M"] + 1 + 6 * r["N"] for r in dbig]),
        "time_vs_D_range": [dbig[0]["D"], dbig[-1]["D"]],
        "time_vs_cost_model": fit_exponent(
            [c for c, r in zip(flopsD, D_rows, strict=True) if r["D"] >= 500],
            [r["closed_s"] for r in dbig],
        ),
        "mem_vs_D": fit_exponent([r["D"] for r in dbig], [r["closed_mem_traced_mb"] for r in dbig]),
        "hvp_time_vs_n": fit_exponent(ns, [r["hvp_s_per_probe"] for r in n_rows]),
        "hvp_time_vs_D": fit_exponent([r["D"] for r in dbig], [r["hvp_s_per_probe"] for r in dbig]),
    }
    f["fits"] = {
        "time_vs_n": fit_power([r["n"] for r in tail], [r["closed_s"] for r in tail]),
        "time_vs_D": fit_power([r["D"] for r in dbig], [r["closed_s"] for r in dbig]),
        "time_vs_cost_model": fit_power(
            [c for c, r in zip(flopsD, D_rows, strict=True) if r["D"] >= 500], [r["closed_s"] for r in dbig]
        ),
        "hvp_time_vs_n": fit_power(ns, [r["hvp_s_per_probe"] for r in n_rows]),
    }
    dn = [r for r in n_rows if "dense_s" in r]
    if len(dn) >= 2:
        f["dense_time_vs_n"] = fit_exponent([r["n"] for r in dn], [r["dense_s"] for r in dn])
    dd = [r for r in D_rows if "dense_s" in r and r["D"] >= 100]
    if len(dd) >= 2:
        f["dense_time_vs_D"] = fit_exponent([r["D"] for r in dd], [r["dense_s"] for r in dd])
    bench.data["exponents"] = f


def block_sweep(bench: Bench):
    g = bench.grid
    M, N = g.n_sweep_MN
    net = make_net(M, N, g.block_sweep_n, bench.seed)
    rows = []
    for blk in g.blocks:
        cf = closed(net, block=blk, backend="numpy")  # tracemalloc sees numpy's allocations only
        t, _ = median_time(cf, reps=2)
        rows.append({"block": blk, "n": g.block_sweep_n, "closed_s": t, "mem_traced_mb": traced_peak(cf)[0] / MB})
    bench.data["block_sweep"] = {
        "rows": rows,
        "mem_vs_block": fit_exponent([r["block"] for r in rows], [r["mem_traced_mb"] for r in rows]),
    }


def _faults_per_call(fn, calls: int) -> dict[str, float]:
    """Minor page faults, kernel (system) CPU seconds and wall seconds per call of ``fn`` (getrusage of this
    process around ``calls`` calls after one warm-up): the first touch of a call's fresh temporaries, which glibc
    returns to the kernel between calls, is kernel time that no flop or byte count of the roofline includes."""
    import resource

    fn()
    r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(calls):
        fn()
    wall, r1 = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF)
    return {"closed_minflt_per_call": (r1.ru_minflt - r0.ru_minflt) / calls,
            "closed_sys_s_per_call": (r1.ru_stime - r0.ru_stime) / calls, "closed_wall_s_faults_run": wall / calls}


def headline(bench: Bench):
    g = bench.grid
    (M, N), n = g.head_MN, g.head_n
    row = None
    if "D_sweep" in bench.ran:  # else (a --merge re-run of the headline alone) measure the case afresh
        rows = bench.data.get("D_sweep", {}).get("rows", [])
        row = next((r for r in rows if (r["M"], r["N"], r["n"]) == (M, N, n)), None)
    if row is None:
        row = sweep(bench, "headline_case", [(M, N, n)])[0]
    mach = bench.data["machine"]
    cost = closed_form_cost(n, M, N)
    net = make_net(M, N, n, bench.seed)
    where = f"(D = {row['D']}, n = {n})" + (" [quick stand-in for D≈2000, n=2000]" if bench.quick else "")
    # the roofline's rates are measured interleaved with the closed form (the load drifts)
    rng = np.random.default_rng(1)
    s_g = 768 if bench.quick else 1536
    A, B = rng.random((s_g, s_g)), rng.random((s_g, s_g))
    big = rng.random((16 if bench.quick else 32) * MB // 8)
    outb = np.empty_like(big)
    fns = {
        "closed": closed(net),
        "closed_torch": closed(net, backend="torch"),
        "gemm": lambda: A @ B,
        "triad": lambda: np.add(big, big, out=outb),
    }
    per, _ = round_robin(fns, rounds=max(g.reps, 5))  # each round: the closed form, its torch backend, the rates
    faults = _faults_per_call(fns["closed"], calls=5)  # what the roofline does not count: first-touch page faults
    med = {k: statistics.median(v) for k, v in per.items()}
    gemm_rate, bw = 2 * s_g**3 / med["gemm"], 3 * big.nbytes / med["triad"]
    t_flop = cost["flops"] / gemm_rate
    t_mem = cost["bytes"] / bw
    roof = t_flop + t_mem
    t_cf = med["closed"]
    # per round: the closed form over the roofline of that round's own GEMM and triad rates
    rr = [
        tc / (cost["flops"] * tg / (2 * s_g**3) + cost["bytes"] * tt / (3 * big.nbytes))
        for tc, tg, tt in zip(per["closed"], per["gemm"], per["triad"], strict=True)
    ]
    roof_rounds = ratio_summary(rr, one="one round only", what="round")
    h = {
        "M": M,
        "N": N,
        "n": n,
        "D": row["D"],
        "closed_s": t_cf,
        "closed_s_with_dense": row.get("closed_s_interleaved", row["closed_s"]),
        "gemm_gflops": gemm_rate / 1e9,
        "triad_gbs": bw / 1e9,
        "roofline_s": roof,
        "roofline_flop_s": t_flop,
        "roofline_mem_s": t_mem,
        "gflop": cost["flops"] / 1e9,
        "gbytes": cost["bytes"] / 1e9,
        "closed_over_roofline": t_cf / roof,
        "closed_over_roofline_rounds": roof_rounds,
        "closed_torch_s": med["closed_torch"],
        "torch_over_roofline": med["closed_torch"] / roof,
        "achieved_gflops": cost["flops"] / t_cf / 1e9,
        **faults,
    }
    if "dense_s" in row:
        h.update(dense_s=row["dense_s"], ratio=row["ratio_dense_over_closed"])
        D = row["D"]
        t_cols = row["hvp_s_per_probe"] * D
        t_eig = mach["eigvalsh_s_per_D3"] * D**3
        expl = (
            f"Measured split. Dense = {D} HVP columns (≈{t_cols:.1f} s at "
            f"{row['hvp_s_per_probe'] * 1e3:.1f} ms/probe, batched) +"
            f" eigvalsh (≈{t_eig:.1f} s): it costs "
            f"O(n·D·(M+N)) + O(D³) and is fast at "
            f"this D. Closed form {t_cf:.3g} s = {cost['flops'] / 1e9:.2f} GFLOP of GEMMs "
            f"({t_flop:.3g} s at the GEMM peak) + {cost['bytes'] / 1e9:.2f} GB of b×b elementwise passes "
            f"({t_mem:.3g} s): it is at {t_cf / roof:.2f}× its roofline, so only less work helps."
        )
        bench.target(
            f"closed form ≥ 100× faster than dense Hessian + eigvalsh {where}",
            row["ratio_dense_over_closed"],
            ">=",
            100.0,
            "×",
            lambda: closed(net)(),
            explanation=expl,
        )
    else:
        bench.target(
            f"closed form ≥ 100× faster than dense Hessian + eigvalsh {where}",
            None,
            ">=",
            100.0,
            "×",
            None,
            skipped=row["dense_plan"].get("reason"),
        )
    bench.target(
        f"closed form within 1.3× of the roofline {where}",
        t_cf / roof,
        "<=",
        1.3,
        "×",
        lambda: closed(net)(),
    )
    # what the time goes to: kernel GEMMs vs the rest (profile, always recorded)
    h["profile"] = profile_top(lambda: closed(net)())
    bench.data["headline"] = h
    bench.log(f"headline: closed {t_cf:.3g}s, roofline {roof:.3g}s ({t_cf / roof:.1f}x)")


def mpmath_section(bench: Bench):
    """dps = 50 against float64: the arb path (the default of ``dps=``) and the mpmath object arrays it replaced."""
    import mpmath

    from numerics.ws import ce_hessian_moments

    def digits(x, ref, cap: int) -> float:  # of x against ref; equal numbers count as ``cap`` digits
        with mpmath.workdps(70):
            err = abs(mpmath.mpf(x) - ref) / abs(ref)
            return -float(mpmath.log10(max(err, mpmath.mpf(10) ** -cap)))

    g = bench.grid
    M, N = g.mp_MN
    rows = []
    for n in g.mp_n:
        net = make_net(M, N, n, bench.seed)
        t64, m64 = median_time(lambda net=net: ce_hessian_moments(*net, "tanh"), reps=g.reps, min_total=0.2)
        tmp, mmp = median_time(lambda net=net: ce_hessian_moments(*net, "tanh", dps=50, _dps_engine="mpmath"), reps=1)
        tarb, marb = median_time(lambda net=net: ce_hessian_moments(*net, "tanh", dps=50), reps=g.reps)
        err = max(
            abs(m64.trace - float(mmp.trace)) / abs(float(mmp.trace)),
            abs(m64.trace_sq - float(mmp.trace_sq)) / float(mmp.trace_sq),
        )
        rows.append(
            {
                "M": M,
                "N": N,
                "n": n,
                "float64_s": t64,
                "mpmath50_s": tmp,
                "arb50_s": tarb,
                "ratio": tmp / t64,
                "arb_ratio": tarb / t64,
                "arb_speedup": tmp / tarb,
                "float64_rel_err": err,
                "float64_digits": digits(m64.trace_sq, mmp.trace_sq, 30),
                "arb_digits": min(digits(marb.trace, mmp.trace, 50), digits(marb.trace_sq, mmp.trace_sq, 50)),
                "arb_radius_rel": float(max(marb.radius[0] / abs(marb.trace), marb.radius[1] / marb.trace_sq)),
            }
        )
    bench.data["mpmath"] = {
        "rows": rows,
        "closed_rel_err_max": max(r["float64_rel_err"] for r in rows),
        "arb_digits_min": min(r["arb_digits"] for r in rows),
        "time_vs_n_mp": fit_exponent([r["n"] for r in rows], [r["mpmath50_s"] for r in rows]),
        "time_vs_n_arb": fit_exponent([r["n"] for r in rows], [r["arb50_s"] for r in rows]),
    }
    r = rows[-1]
    bench.log(f"dps=50 at n={r['n']}: mpmath {r['ratio']:.0f}x, arb {r['arb_ratio']:.0f}x float64's time "
              f"(arb {r['arb_speedup']:.1f}x faster, {r['arb_digits']:.1f} digits agreed)")


def falsify_section(bench: Bench):
    """Examples per second of the two-stage falsifier on a cheap and on a dense-Hessian ws property."""
    from checks.runners.falsify import falsify
    from checks.ws.bound import bound_property
    from checks.ws.theorem import theorem_bounds_property

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for prop, budget in (
            (theorem_bounds_property(), bench.grid.falsify_budget[0]),
            (bound_property(), bench.grid.falsify_budget[1]),
        ):
            res = falsify(prop, budget=budget, seed=bench.seed, out_dir=Path(tmp))
            rows.append(
                {
                    "property": prop.name,
                    "examples": res.calls,
                    "seconds": res.seconds,
                    "examples_per_s": res.examples_per_second,
                    "candidates": res.candidates,
                    "confirmed": res.confirmed,
                }
            )
            bench.log(f"falsify {prop.name}: {res.examples_per_second:.1f} ex/s")
    bench.data["falsify"] = {"available": True, "rows": rows}


# ------------------------------------------------------------------------------------------------ plots
def plots(out: Path, data: dict[str, Any]) -> list[str]:
    """Time and peak memory of (a), (b), (c) along the n sweep and the D sweep."""
    plt = pyplot()
    written = []
    for key, xkey, xlabel in (("n_sweep", "n", "n (samples)"), ("D_sweep", "D", "D (parameters)")):
        rows = data.get(key, {}).get("rows", [])
        if not rows:
            continue
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
        x = [r[xkey] for r in rows]
        ax1.loglog(x, [r["closed_s"] for r in rows], "o-", label="(a) closed form")
        dn = [r for r in rows if "dense_s" in r]
        if dn:
            ax1.loglog([r[xkey] for r in dn], [r["dense_s"] for r in dn], "s-", label="(b) dense Hessian + eigvalsh")
        ax1.loglog(x, [r["hvp_s_per_probe"] for r in rows], "^--", label="(c) one HVP (per probe / Lanczos step)")
        ax1.set(xlabel=xlabel, ylabel="seconds", title=f"time, {key.replace('_', ' ')}")
        ax1.legend(fontsize=7)
        ax2.loglog(x, [r["closed_mem_traced_mb"] for r in rows], "o-", label="(a) tracemalloc peak (numpy path)")
        if dn:
            ax2.loglog(
                [r[xkey] for r in dn],
                [max(r["dense_mem_rss_mb"], 1e-3) for r in dn],
                "s-",
                label="(b) RSS peak growth",
            )
        ax2.set(xlabel=xlabel, ylabel="MB", title="peak memory")
        ax2.legend(fontsize=7)
        written.append(save_figure(fig, out, key))
    return written
