"""ws against the libraries people use (issue 14): the ``peers`` section and the full-MNIST row (``mnist``).

``peers``: at the headline size, the closed form (:func:`numerics.ws.ce_hessian_moments`, default backend) is the
base of every per-pair ratio (:func:`checks.runners.bench.harness.paired`), against

* its own torch backend (the same generated kernels: the backend choice, measured);
* BackPACK's exact ``DiagHessian`` (exact tr H: the strongest peer for the trace);
* curvlinops' ``HessianLinearOperator`` with Hutchinson, Hutch++ and XTrace (tr H) and Hutchinson ‖H‖_F² (tr H²)
  at the probe count that reaches 1% relative standard error of tr H (from the exact single-probe variance
  2(tr H² − Σ H_ii²), the closed form's tr H² with BackPACK's diagonal), and ``eigsh`` for λ_max;
* PyHessian 0.1's ``trace()`` and ``eigenvalues()`` with their defaults (what they return is reported as is);
* the suite's own Hutchinson (``numerics.ws.estimators``), kept for two things the peers lack: tr H and tr H² from
  the *same* products (curvlinops spends separate products on each), and vmapped HVP batches.

``mnist``: (784, 256), n = 60 000, D = 201 217 (quick: a small stand-in with the same columns): the closed form
once (wall, CPU, peak RSS, load), BackPACK's tr H once, curvlinops' Hutchinson at the 1% probe count (run when it
fits the section's time budget, else timed on a few products and projected, stated as such).
"""

from __future__ import annotations

import math
import os
import time
import types
from typing import Any

from checks.runners.bench import peers as P
from checks.runners.bench.core import Bench
from checks.runners.bench.resources import GB, rss_peak
from checks.runners.bench.timing import paired
from checks.runners.bench.ws import dim_of, make_net

# full MNIST: curvlinops' Hutchinson gets at most this long (s); its 1% count (~200 products at ~1.5 s, with ~12 GB
# when they are multiplied at once) would be a third of the 15-minute bench, so beyond it the time is projected
CURV_MNIST_S = 60.0
REL_SE = 0.01  # the Hutchinson target: 1% relative standard error of tr H (issue 14)
WHY_OWN = (
    "kept: tr H and tr H² from the same Hessian products (curvlinops' Hutchinson and squared-Frobenius estimators "
    "draw separate products), and its exact single-probe variance gives the 1% probe count"
)


def _closed(net, backend="auto"):
    from numerics.ws import ce_hessian_moments

    return lambda: ce_hessian_moments(*net, "tanh", backend=backend)


def _vmhwm_bytes() -> float | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024.0
    except OSError:
        pass
    return None


def peers_section(bench: Bench):
    avail = P.available()
    g = bench.grid
    M, N, n = (10, 10, 300) if bench.quick else (*g.head_MN, g.head_n)
    net = make_net(M, N, n, bench.seed)
    D = dim_of(M, N)
    exact = _closed(net)()
    sec: dict[str, Any] = {"M": M, "N": N, "n": n, "D": D, "trace": exact.trace, "trace_sq": exact.trace_sq,
                           "versions": P.versions(), "missing": {k: v for k, v in avail.items() if v}}
    rows: dict[str, dict[str, Any]] = {}
    # the default backend ("auto") is the baseline; the other backend runs beside it as a contender
    other = "torch" if exact.backend == "numpy" else "numpy"
    sec["backend"] = exact.backend
    fns: dict[str, Any] = {f"suite {other} backend": _closed(net, other)}
    rows[f"suite {other} backend"] = {"quantity": "tr H, tr H² (exact)",
                                      "why": f"the same closed form on {other}" + (" (GPU path)" if other == "torch"
                                                                                  else "")}
    k = None
    if avail["backpack"] is None:
        bp = P.backpack_diag(net)
        var = P.probes_for_rel_se(exact.trace, exact.trace_sq, bp["diag_sq"], REL_SE)
        sec["hutchinson_single_probe_sd"] = var["sd"]
        sec["probes_for_1pct"] = var["probes"]
        fns["BackPACK DiagHessian"] = lambda: P.backpack_diag(net)
        rows["BackPACK DiagHessian"] = {"quantity": "tr H (exact)"}
    cap = 64 if bench.quick else 400
    if "probes_for_1pct" in sec:
        # a multiple of 6: Hutch++ splits its products in thirds, XTrace in halves (the same count for every peer)
        k = max(6, 6 * math.ceil(min(sec["probes_for_1pct"], cap, D - 7) / 6))
        sec["probes_run"] = k
        sec["probes_capped"] = k < sec["probes_for_1pct"]
    if avail["curvlinops"] is None and k:
        import torch

        op = P.curvlinops_operator(net)
        op @ torch.zeros(D, 1, dtype=torch.float64)  # warm up: its first product traces the model (seconds)
        for meth, label, q in (
            ("hutchinson", "curvlinops Hutchinson", "tr H"),
            ("hutchpp", "curvlinops Hutch++", "tr H"),
            ("xtrace", "curvlinops XTrace", "tr H"),
            ("hutchinson_fro2", "curvlinops Hutchinson ‖H‖_F²", "tr H²"),
        ):
            fns[label] = lambda meth=meth: P.curvlinops_estimate(op, meth, k, seed=bench.seed)
            rows[label] = {"quantity": f"{q} ({k} products)"}
        fns["curvlinops eigsh λ_max"] = lambda: P.curvlinops_lmax(op, seed=bench.seed)
        rows["curvlinops eigsh λ_max"] = {"quantity": "λ_max (ARPACK, tol 1e-8)"}
    if avail["pyhessian"] is None:
        fns["PyHessian trace()"] = lambda: P.pyhessian_run(net, what="trace", seed=bench.seed)
        rows["PyHessian trace()"] = {"quantity": "tr H (its own stop, ≤ 100 probes)"}
        fns["PyHessian eigenvalues()"] = lambda: P.pyhessian_run(net, what="lmax", seed=bench.seed)
        rows["PyHessian eigenvalues()"] = {"quantity": "top eigenvalue (power iteration, tol 1e-3)"}
    if k:
        from checks.runners.bench.ws import warm_hvp
        from numerics.ws.estimators import hutchinson

        hvp, _ = warm_hvp(net)
        fns["suite Hutchinson"] = lambda: hutchinson(hvp, D, n_probes=k, batch=min(k, 32), seed=bench.seed)
        rows["suite Hutchinson"] = {"quantity": f"tr H and tr H² ({k} products)", "why": WHY_OWN}
    budget = 60.0 if bench.quick else 240.0
    summ, outs = paired(_closed(net), fns, rounds=2 if bench.quick else 3, deadline=time.perf_counter() + budget)
    sd = sec.get("hutchinson_single_probe_sd")
    lmax = outs.get("curvlinops eigsh λ_max", {}).get("lmax") if "curvlinops eigsh λ_max" in outs else None
    sec["lmax"], sec["lambda_sup"] = lmax, float(exact.lambda_sup)
    for name, s in summ.items():
        r = rows[name]
        r.update(s)
        o = outs[name]
        if name == f"suite {other} backend":
            r["value"] = o.trace_sq
            r["rel_err"] = abs(o.trace_sq - exact.trace_sq) / exact.trace_sq
        elif name == "BackPACK DiagHessian":
            r["value"] = o["trace"]
            r["rel_err"] = abs(o["trace"] - exact.trace) / abs(exact.trace)
        elif name.startswith("curvlinops") and "λ_max" not in name:
            ref = exact.trace_sq if "F²" in name else exact.trace
            r["value"], r["rel_err"] = o, abs(o - ref) / abs(ref)
            if "Hutchinson" in name and "F²" not in name and sd:
                r["z"] = (o - ref) / (sd / math.sqrt(k))
        elif name == "curvlinops eigsh λ_max":
            r["value"], r["matvecs"] = o["lmax"], o["matvecs"]
        elif name == "PyHessian trace()":
            r["value"], r["probes"] = o["trace"], o["probes"]
            r["rel_err"] = abs(o["trace"] - exact.trace) / abs(exact.trace)
            r["stop_replayed"] = P.pyhessian_stop_index(o["samples"])
            if sd:
                r["rel_se_at_its_count"] = sd / math.sqrt(o["probes"]) / abs(exact.trace)
        elif name == "PyHessian eigenvalues()":
            r["value"] = o["lmax"]
            if lmax:
                r["rel_err"] = abs(o["lmax"] - lmax) / abs(lmax)
        elif name == "suite Hutchinson":
            r["value"] = o.trace.estimate
            r["value_trace_sq"] = o.trace_sq.estimate
            r["rel_err"] = abs(o.trace.estimate - exact.trace) / abs(exact.trace)
            r["rel_err_trace_sq"] = abs(o.trace_sq.estimate - exact.trace_sq) / exact.trace_sq
        if sec.get("probes_capped") and ("products" in r["quantity"]):
            r["seconds_projected_1pct"] = r["seconds_median"] * sec["probes_for_1pct"] / k
    sec["rows"] = rows
    bench.data["peers"] = sec
    for name, r in rows.items():
        bench.log(f"peers: {name}: {r['ratio_median']:.3g}x ({r['ratio_min']:.3g}-{r['ratio_max']:.3g})")


def mnist_section(bench: Bench):
    """The full-MNIST row (issue 14): exact tr H, tr H² under 5 minutes and 4 GB, beside BackPACK and curvlinops."""
    avail = P.available()
    M, N, n = (30, 16, 2000) if bench.quick else (784, 256, 60000)
    D = dim_of(M, N)
    net = make_net(M, N, n, bench.seed)  # synthetic, MNIST's shape; nothing is downloaded
    r: dict[str, Any] = {"M": M, "N": N, "n": n, "D": D, "threads": int(__import__("torch").get_num_threads())}
    prior = bench.data.get("mnist") if bench.reuse_mnist_closed else None
    if prior and (prior.get("M"), prior.get("N"), prior.get("n")) == (M, N, n) and "closed_cpu_s" in prior:
        # --reuse-mnist-closed (with --merge): the closed form's row from the earlier run, stated as such
        keep = ("closed_s", "closed_cpu_s", "closed_mem_rss_gb", "rss_method", "process_peak_rss_gb", "load_before",
                "load_after", "trace", "trace_sq", "lambda_sup", "threads", "backend")
        r.update({k: prior[k] for k in keep if k in prior})
        r["closed_from_run"] = bench.data.get("meta_prior_started", "an earlier run (--reuse-mnist-closed)")
        m = types.SimpleNamespace(trace=r["trace"], trace_sq=r["trace_sq"])
    else:
        load0 = os.getloadavg()
        t0, c0 = time.perf_counter(), time.process_time()
        mem, how, m = rss_peak(_closed(net))
        r.update(
            closed_s=time.perf_counter() - t0,
            closed_cpu_s=time.process_time() - c0,
            closed_mem_rss_gb=mem / GB,
            rss_method=how,
            process_peak_rss_gb=(_vmhwm_bytes() or math.nan) / GB,
            load_before=load0[0],
            load_after=os.getloadavg()[0],
            trace=m.trace,
            trace_sq=m.trace_sq,
            lambda_sup=float(m.lambda_sup),
            backend=m.backend,
        )
    bench.data["mnist"] = r  # kept if a peer below fails
    bench.log(f"mnist: closed {r['closed_s']:.1f}s wall, {r['closed_cpu_s']:.1f}s CPU, {r['closed_mem_rss_gb']:.2f} GB")
    if avail["backpack"] is None:  # the peers get what the run's budget has left, at least 30 s, at most 300 s each
        t0, c0 = time.perf_counter(), time.process_time()
        # DiagHessian materialises an (rows, N, N) tensor (31 GB for one batch of 60 000 at N = 256): batches of 1000
        allowed = max(30.0, bench.seconds_left(cap=600.0) / 2)
        try:
            bmem, _, bp = rss_peak(lambda: P.backpack_diag(net, batch=1000, allowed_s=allowed))
        except P.OverBudget as exc:
            bp = None
            r["backpack"] = {"reason": str(exc), "seconds_projected": exc.projected_s, "batch": 1000}
    else:
        bp = None
        r["backpack"] = {"reason": avail["backpack"]}
    if bp is not None:
        r["backpack"] = {
            "seconds": time.perf_counter() - t0,
            "cpu_s": time.process_time() - c0,
            "mem_rss_gb": bmem / GB,
            "trace": bp["trace"],
            "rel_diff_trace": abs(bp["trace"] - m.trace) / abs(m.trace),
            "batch": 1000,
        }
        need = P.probes_for_rel_se(m.trace, m.trace_sq, bp["diag_sq"], REL_SE)
        r["probes_for_1pct"] = need["probes"]
        r["hutchinson_single_probe_sd"] = need["sd"]
    if avail["curvlinops"] is None and "probes_for_1pct" in r:
        op = P.curvlinops_operator(net, batch=10000)
        k_try = 2 if bench.quick else 4
        wt, ct, _ = P.timed(lambda: P.curvlinops_estimate(op, "hutchinson", k_try, seed=bench.seed))
        per = wt / k_try
        k = r["probes_for_1pct"]
        budget = 60.0 if bench.quick else bench.seconds_left(floor=30.0, cap=CURV_MNIST_S)
        cv: dict[str, Any] = {"probes": k, "seconds_per_product": per, "cpu_s_per_product": ct / k_try}
        if k * per <= budget and k < D:
            wt, ct, est = P.timed(lambda: P.curvlinops_estimate(op, "hutchinson", k, seed=bench.seed))
            cv.update(run=True, seconds=wt, cpu_s=ct, estimate=est, rel_err=abs(est - m.trace) / abs(m.trace))
        else:  # as many products as the budget allows (at most 32 a call: curvlinops multiplies them at once)
            k_run = int(max(k_try, min(32, budget // per)))
            wt, ct, est = P.timed(lambda: P.curvlinops_estimate(op, "hutchinson", k_run, seed=bench.seed))
            sd = r["hutchinson_single_probe_sd"]
            cv.update(
                run=False,
                seconds_projected=k * wt / k_run,
                ran_probes=k_run,
                ran_seconds=wt,
                ran_estimate=est,
                ran_rel_err=abs(est - m.trace) / abs(m.trace),
                ran_z=(est - m.trace) / (sd / math.sqrt(k_run)),
                reason=f"{k} products ≈ {k * wt / k_run:.0f} s > the section's {budget:.0f} s: ran {k_run} "
                f"({wt:.0f} s, estimate {est:.6g}, z = {(est - m.trace) / (sd / math.sqrt(k_run)):+.2f} against the "
                f"exact tr H) and projected the time",
            )
        r["curvlinops_hutchinson"] = cv
    bench.data["mnist"] = r
    label = f"({M}, {N}), n = {n}, D = {D}" + ("" if not bench.quick else " [quick stand-in for full MNIST]")
    bench.target(f"exact tr H, tr H² under 5 minutes at {label}", r["closed_s"], "<=", 300.0, "s", None)
    bench.target(
        f"peak memory under 4 GB at {label} (process high-water mark)",
        r["process_peak_rss_gb"],
        "<=",
        4.0,
        "GB",
        None,
    )
    return r


def mnist_1pct_section(bench: Bench):
    """curvlinops' Hutchinson at full MNIST size run to the 1% probe count, in chunks of at most 32 products
    (curvlinops multiplies a call's probes at once: ~2 GB for 32 at D = 201 217), each chunk seeded apart.

    The count (~200) and the per-product time (~1.6 s) make it ~5 minutes, which the 15-minute run cannot hold
    beside the other sections, so it runs last, on what the run's budget has left. If that is too little it is
    not run, and a measurement from an earlier run of the same net (``python -m checks.runners.bench --only mnist_1pct
    --merge``) is kept with the date of that run, or the row says it was not measured."""
    r = bench.data.get("mnist", {})
    cv = r.get("curvlinops_hutchinson", {})
    prior = bench.data.get("prior_mnist_1pct")
    key = {"M": r.get("M"), "N": r.get("N"), "n": r.get("n"), "seed": bench.seed, "probes": cv.get("probes")}
    if not cv or P.available()["curvlinops"] is not None:
        bench.data["mnist_1pct"] = {"reason": "no curvlinops row in the mnist section (or curvlinops missing)"}
        return
    k, per = cv["probes"], cv["seconds_per_product"]
    need = 1.15 * k * per
    asked = bench.only is not None and "mnist_1pct" in bench.only
    if not asked and bench.out_of_time(need):
        if prior and prior.get("key") == key and "seconds" in prior:
            bench.data["mnist_1pct"] = {**prior, "carried_from": prior.get("run_started", "an earlier run")}
        else:
            bench.data["mnist_1pct"] = {"key": key, "reason": f"{k} products ≈ {k * per:.0f} s do not fit what the "
                                        f"run's budget has left ({bench.seconds_left():.0f} s); run `python -m "
                                        "checks.runners.bench --only mnist_1pct --merge`"}
        return
    net = make_net(r["M"], r["N"], r["n"], bench.seed)
    op = P.curvlinops_operator(net, batch=10000)
    total, done, chunks = 0.0, 0, []
    t0, c0 = time.perf_counter(), time.process_time()
    chunk = 32  # ~2 GB per call at full MNIST; at the quick stand-in's D = 513, chunks of 512 ran 1.6× slower
    while done < k:
        size = min(chunk, k - done)
        est = P.curvlinops_estimate(op, "hutchinson", size, seed=bench.seed + 1000 + len(chunks))
        total += est * size
        done += size
        chunks.append(size)
        bench.log(f"mnist_1pct: {done}/{k} products, {time.perf_counter() - t0:.0f} s")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    est = total / done
    sd = r["hutchinson_single_probe_sd"]
    bench.data["mnist_1pct"] = {
        "key": key, "probes": done, "chunk": chunk, "calls": len(chunks), "seconds": wall, "cpu_s": cpu,
        "estimate": est,
        "rel_err": abs(est - r["trace"]) / abs(r["trace"]), "z": (est - r["trace"]) / (sd / math.sqrt(done)),
        "projected_s": cv.get("seconds_projected"), "run_started": bench.data.get("meta", {}).get("started"),
        "process_peak_rss_gb": (_vmhwm_bytes() or math.nan) / GB,
    }


def _rel(x):
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1e}"


def report_peers(data: dict[str, Any], targets) -> list[str]:
    from checks.runners.bench.timing import ratio_text

    sec = data.get("peers")
    if not sec:
        return []
    md = [
        "",
        f"## Peers: curvlinops, BackPACK, PyHessian and the suite's own (D = {sec['D']}, n = {sec['n']})",
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in sec["versions"].items()) + ". "
        + ("Not installed: " + "; ".join(sec["missing"].values()) + ". " if sec["missing"] else "")
        + f"Exact: tr H = {sec['trace']:.10g}, tr H² = {sec['trace_sq']:.10g}"
        + (f", λ_max = {sec['lmax']:.10g} (eigsh)" if sec.get("lmax") else "")
        + f", λ_sup = {sec['lambda_sup']:.6g}. "
        + (
            f"1% relative standard error of tr H needs {sec['probes_for_1pct']} Rademacher probes (exact "
            f"single-probe sd {sec['hutchinson_single_probe_sd']:.3g}); the stochastic peers ran with "
            f"{sec['probes_run']}{' (capped; time projected to the 1% count)' if sec.get('probes_capped') else ''}."
            if "probes_for_1pct" in sec
            else ""
        ),
        "",
        "Time ratio = peer / closed form (default backend), median of per-pair ratios with min–max; each pair runs "
        "back to back, the order alternating. Load average before/after in the last column.",
        "",
        "| peer | computes | value | rel. err vs exact | time (s) | ratio peer/closed | load |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in sec["rows"].items():
        val = r.get("value")
        note = ""
        if "z" in r:
            note = f" (z = {r['z']:+.2f})"
        if name == "PyHessian trace()":
            note = (f" after {r['probes']} probes (its stop; rel. stderr there "
                    f"{r.get('rel_se_at_its_count', math.nan):.1%})")
        if name == "suite Hutchinson":
            note = f"; tr H² {r['value_trace_sq']:.6g} (rel. err {_rel(r['rel_err_trace_sq'])})"
        if name == "curvlinops eigsh λ_max":
            note = f" ({r['matvecs']} products)"
        t = f"{r['seconds_median']:.3g}"
        if "seconds_projected_1pct" in r:
            t += f" (→ {r['seconds_projected_1pct']:.3g} at 1%)"
        md.append(
            f"| {name} | {r['quantity']} | {val:.8g}{note} | {_rel(r.get('rel_err'))} | {t} | "
            f"{ratio_text(r)} | {r['load_before']:.1f}/{r['load_after']:.1f} |"
        )
    why = [f"- **{k}**: {r['why']}" for k, r in sec["rows"].items() if r.get("why")]
    if why:
        md += ["", *why]
    return md


def report_mnist(data: dict[str, Any], targets) -> list[str]:
    r = data.get("mnist")
    if not r or "closed_cpu_s" not in r:
        return []
    md = [
        "",
        f"## Full MNIST size: ({r['M']}, {r['N']}), n = {r['n']}, D = {r['D']} (synthetic data)",
        "",
        f"Closed form (exact tr H = {r['trace']:.10g}, tr H² = {r['trace_sq']:.10g}): **{r['closed_s']:.1f} s wall, "
        f"{r['closed_cpu_s']:.1f} s CPU** on {r['threads']} threads, load {r['load_before']:.1f} → "
        f"{r['load_after']:.1f}; RSS growth {r['closed_mem_rss_gb']:.2f} GB ({r['rss_method']}), process peak "
        f"{r['process_peak_rss_gb']:.2f} GB; backend {r.get('backend', '?')}. One run (a repeated pair would cost "
        "minutes each)" + (f"; closed-form row from {r['closed_from_run']}." if r.get("closed_from_run") else "."),
        "",
        "| contender | computes | wall (s) | CPU (s) | memory (GB) | agreement |",
        "|---|---|---|---|---|---|",
        f"| closed form | tr H, tr H² exact | {r['closed_s']:.1f} | {r['closed_cpu_s']:.1f} | "
        f"{r['closed_mem_rss_gb']:.2f} | — |",
    ]
    bp = r.get("backpack", {})
    if "seconds" in bp:
        md.append(
            f"| BackPACK DiagHessian (batches of {bp.get('batch', 'all')}) | tr H exact | {bp['seconds']:.1f} | "
            f"{bp['cpu_s']:.1f} | {bp['mem_rss_gb']:.2f} | "
            f"rel. diff {bp['rel_diff_trace']:.1e} |"
        )
    elif bp:
        md.append(f"| BackPACK | not run | — | — | — | {bp['reason']} |")
    cv = r.get("curvlinops_hutchinson")
    full = data.get("mnist_1pct", {})
    if "seconds" in full:
        md.append(
            f"| curvlinops Hutchinson | tr H, {full['probes']} probes (1% rel. stderr; chunks of ≤ {full['chunk']}) | "
            f"{full['seconds']:.1f} | {full['cpu_s']:.1f} | {full['process_peak_rss_gb']:.2f} (process peak) | "
            f"rel. err {full['rel_err']:.1e}, z = {full['z']:+.2f}"
            + (f"; measured in the run of {full['carried_from']}" if full.get("carried_from") else "") + " |"
        )
    if cv and "seconds" not in full:
        if full.get("reason"):
            md.append(f"| curvlinops Hutchinson at 1% | not measured in full | — | — | — | {full['reason']} |")
        if cv["run"]:
            md.append(
                f"| curvlinops Hutchinson | tr H, {cv['probes']} probes (1% rel. stderr) | {cv['seconds']:.1f} | "
                f"{cv['cpu_s']:.1f} | — | rel. err {cv['rel_err']:.1e} |"
            )
        else:
            md.append(
                f"| curvlinops Hutchinson | tr H, {cv['probes']} probes (1% rel. stderr) | ≈ "
                f"{cv['seconds_projected']:.0f} (projected) | ≈ {cv['cpu_s_per_product'] * cv['probes']:.0f} | — | "
                f"{cv['reason']} |"
            )
    return md
