"""``bench.json`` and ``bench.md``: the report is a sequence of per-section writers (:data:`WRITERS`).

Each writer takes the run's ``data`` and ``targets`` and returns its lines of ``bench.md`` (none if its
section did not run); the ws, flat and rob writers carry their paper's name. Plots are the paper
modules' own (:func:`plots` collects them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from checks.runners.bench import flat, lipschitz_peers, rob, ws, ws_dask, ws_deep, ws_peers, ws_softmax, ws_trace
from checks.runners.bench.core import figure_dir, fmt
from checks.runners.bench.timing import ratio_text

Data = dict[str, Any]
Targets = list[dict[str, Any]]


def write_report(out: Path, data: Data, targets: Targets) -> None:
    """``<out>/bench.json`` (meta, targets, then the sections in run order) and ``<out>/bench.md``."""
    out.mkdir(parents=True, exist_ok=True)
    payload = {"meta": data.pop("meta"), "targets": targets, **data}
    (out / "bench.json").write_text(json.dumps(payload, indent=2, default=_json_default))
    data["meta"] = payload["meta"]
    md = [line for writer in WRITERS for line in writer(data, targets)]
    (out / "bench.md").write_text("\n".join(md) + "\n")


def plots(out: Path, data: Data) -> list[str]:
    """The log-log figures ``<out>/figures/bench_*.png`` of every paper; returns their paths."""
    figure_dir(out)
    return ws.plots(out, data) + flat.plots(out, data) + rob.plots(out, data)


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


# ----------------------------------------------------------------------------------- header and headline
def header(data: Data, targets: Targets) -> list[str]:
    return [
        f"# Benchmarks ({'quick' if data['meta']['quick'] else 'full'} run)",
        "",
        f"Machine: {data['machine']['cpu_count']} cores, load average at start "
        f"{data['machine']['loadavg_start'][0]:.1f} (shared), float64 GEMM "
        f"{data['machine']['gemm_gflops']:.1f} GFLOP/s, triad {data['machine']['triad_gbs']:.1f} GB/s. "
        "All comparisons are medians of interleaved runs within this one run"
        + ("." if not data["meta"].get("merged") else
           ", except the sections re-run later and merged in: " + "; ".join(
               f"{', '.join(m.get('only') or only_of(m))} ({m.get('started', '?')})"
               for m in data["meta"]["merged"]) + "."),
        "",
    ]


def only_of(meta: dict) -> list[str]:
    """The sections a merged run re-ran, from its argv (``--only a b --merge``)."""
    argv = list(meta.get("argv", []))
    if "--only" not in argv:
        return ["?"]
    out = []
    for a in argv[argv.index("--only") + 1:]:
        if a.startswith("--"):
            break
        out.append(a)
    return out


def headline(data: Data, targets: Targets) -> list[str]:
    return ["## Headline", "", headline_table(data, targets)]


def headline_table(data: Data, targets: Targets) -> str:
    """One row per comparison: ws (closed form), flat, rob, the falsifier and the whole verify."""
    lines = ["| Comparison | Suite (closed form) | Alternative | Ratio |", "|---|---|---|---|"]
    for rows in (_ws_headline, _flat_headline, _rob_headline, _suite_headline):
        lines += rows(data)
    return "\n".join(lines)


def _rounds_text(s: dict[str, Any]) -> str:
    """'1.2× (1.1–1.3×, 5 rounds)', or with 'no headline: ...' when the spread is too wide."""
    txt = f"{s['ratio_median']:.3g}× ({s['ratio_min']:.3g}–{s['ratio_max']:.3g}×, {s['pairs']} rounds)"
    return txt if s["headline"] else f"{txt}; no headline: {s['why_no_headline']}"


def _ws_headline(data: Data) -> list[str]:
    h, mn = data.get("headline", {}), data.get("mnist", {})
    lines = []
    if h:
        lines.append(
            f"| tr H, tr H², D = {h['D']}, n = {h['n']} | {fmt(h.get('closed_s_with_dense'), ' s')} | "
            f"dense torch.func "
            f"Hessian + eigvalsh {fmt(h.get('dense_s'), ' s')} | {fmt(h.get('ratio'), '×')} |"
        )
        lines.append(
            f"| same, vs roofline ({h.get('gemm_gflops', 0):.1f} GFLOP/s, "
            f"{h.get('triad_gbs', 0):.1f} GB/s) | {fmt(h['closed_s'], ' s')} | roofline "
            f"{fmt(h['roofline_s'], ' s')} | "
            + (_rounds_text(h["closed_over_roofline_rounds"]) if "closed_over_roofline_rounds" in h
               else fmt(h["closed_over_roofline"], "×"))
            + " |"
        )
    if mn and "closed_cpu_s" in mn:
        bp, cv = mn.get("backpack", {}), mn.get("curvlinops_hutchinson", {})
        full = data.get("mnist_1pct", {})
        lines.append(
            f"| tr H, tr H², ({mn['M']}, {mn['N']}), n = {mn['n']}, D = {mn['D']} | "
            f"{mn['closed_s']:.1f} s wall ({mn['closed_cpu_s']:.0f} s CPU, load {mn['load_before']:.1f}), "
            f"peak {mn['process_peak_rss_gb']:.2f} GB | "
            + (f"BackPACK tr H only: {bp['seconds']:.1f} s" if "seconds" in bp else "BackPACK not run")
            + (
                f"; curvlinops Hutchinson tr H at 1% ({cv['probes']} probes): "
                + (f"{cv['seconds']:.0f} s" if cv.get("run") else
                   f"{full['seconds']:.0f} s (rel. err {full['rel_err']:.1e})" if "seconds" in full else
                   f"≈ {cv['seconds_projected']:.0f} s projected")
                if cv
                else ""
            )
            + " | "
            + (f"BackPACK/closed {bp['seconds'] / mn['closed_s']:.3g}× (one pair: no headline, a second pair "
               "would cost minutes)" if "seconds" in bp else "one run")
            + " |"
        )
    pe = data.get("peers", {}).get("rows", {})
    for name in ("BackPACK DiagHessian", "curvlinops Hutchinson", "curvlinops XTrace", "PyHessian trace()"):
        if name in pe:
            r = pe[name]
            lines.append(
                f"| {r['quantity']}, D = {data['peers']['D']}, n = {data['peers']['n']} | closed form "
                f"{r['base_seconds_median']:.3g} s | {name} {r['seconds_median']:.3g} s | {ratio_text(r)} |"
            )
    mp = data.get("mpmath", {}).get("rows")
    if mp:
        r = mp[-1]
        lines.append(
            f"| mpmath dps = 50 vs float64, ({r['M']}, {r['N']}), n = {r['n']} | "
            f"{fmt(r['float64_s'], ' s')} "
            f"| {fmt(r['mpmath50_s'], ' s')} | {fmt(r['ratio'], '×')} slower |"
        )
        if "arb50_s" in r:
            lines.append(
                f"| dps = 50: arb balls vs mpmath object arrays, ({r['M']}, {r['N']}), n = {r['n']} | "
                f"{fmt(r['arb50_s'], ' s')} | {fmt(r['mpmath50_s'], ' s')} | {fmt(r['arb_speedup'], '×')} faster, "
                f"{fmt(r['arb_digits'])} digits agreed |"
            )
    return lines


def _flat_headline(data: Data) -> list[str]:
    lines = []
    fl = data.get("flatness", {})
    if fl.get("available"):
        for act, nm in (("relu", "LP (ReLU, p = 1)"), ("relu_power:2", "power cone (ReLU², p = 4/3)")):
            rr = [r for r in fl["rows"] if r["activation"] == act and "seconds" in r]
            if rr:
                for r in _flat_cases(rr):
                    if "speedup_pairs" in r:  # LP: the fastest correct general solver, per-pair ratios
                        base = (f"fastest correct of {len(r['lp_baselines'])} general LP solvers: "
                                f"{r['baseline_solver']} {fmt(r['baseline_s'], ' s')}")
                        ratio = ratio_text(r["speedup_pairs"])
                    elif "baseline_s" in r:
                        base, ratio = f"{r['baseline_solver']} {fmt(r['baseline_s'], ' s')}", fmt(r["speedup"], "×")
                    elif "speedup_lower" in r:  # measured: the baseline ran into the time limit
                        base, ratio = f"{r['baseline_solver']}: {r['baseline_reason']}", f"> {r['speedup_lower']:.0f}×"
                    elif "baseline_reason" in r:
                        base, ratio = f"{r['baseline_solver']}: {r['baseline_reason']}", "—"
                    else:
                        base, ratio = "—", "—"
                    lines.append(
                        f"| flattest outer weights, {nm}, n = {r['n']}, m = {r['m']} | "
                        f"{fmt(r['seconds'], ' s')} (certified gap {r['rel_gap']:.0e}) | {base} | {ratio} |"
                    )
    return lines


def _flat_cases(rr: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The largest problem, and the largest one on which the baseline also finished (if different)."""
    big = max(rr, key=lambda r: r["n"] * r["m"])
    both = [r for r in rr if "baseline_s" in r]
    if both and max(both, key=lambda r: r["n"] * r["m"]) is not big:
        return [max(both, key=lambda r: r["n"] * r["m"]), big]
    return [big]


def _rob_headline(data: Data) -> list[str]:
    lines = []
    kk = data.get("kinks", {})
    if kk.get("available"):
        for d in (2, 3):
            both = [r for r in kk["rows"] if r["d"] == d and "brute_s" in r]
            if both:
                r = both[-1]
                lines.append(
                    f"| exact Lipschitz on B₁ ⊂ R^{d}, m = {r['m']} | "
                    f"{fmt(r['exact_s'], ' s')}, {r['cells']} "
                    f"cells | brute force over 2^{r['m']} patterns {fmt(r['brute_s'], ' s')} | "
                    f"{fmt(r['brute_s'] / r['exact_s'], '×')} |"
                )
    return lines


def _suite_headline(data: Data) -> list[str]:
    """The falsifier (on the ws properties) and the whole ``python -m checks verify``."""
    lines = []
    fz = data.get("falsify", {})
    if fz.get("available"):
        for r in fz["rows"]:
            lines.append(f"| falsification `{r['property']}` | {r['examples_per_s']:.1f} examples/s | — | — |")
    if "verify" in data:
        lines.append(f"| whole `python -m checks verify` | {fmt(data['verify']['seconds'], ' s')} | — | — |")
    return lines


# ----------------------------------------------------------------------------------------------- targets
def target_table(data: Data, targets: Targets) -> list[str]:
    md = [
        "",
        "## Targets: each measured number against its threshold",
        "",
        "\"hit\" or \"MISSED\" only for a number that was measured and, for a time ratio, whose interleaved pairs "
        "agree within the spread limit; otherwise \"not run\" with the reason (\"quick sizes\": `--quick` measures "
        "stand-ins and judges nothing).",
        "",
        "| Target | Measured | Threshold | Status |",
        "|---|---|---|---|",
    ]
    for t in targets:
        md.append(
            f"| {t['target']} | {fmt(t['value'])} {t['unit'] if t['value'] is not None else ''} | "
            f"{t['op']} {t['threshold']} | {t['status']}{' — ' + t['reason'] if t.get('reason') else ''} |"
        )
    for t in targets:
        if t["status"] == "MISSED":
            md += [
                "",
                f"**Missed: {t['target']}.** " + (t.get("explanation") or ""),
                "",
                "| function | calls | own s | share |",
                "|---|---|---|---|",
            ]
            md += [
                f"| `{p['function']}` | {p['calls']} | {p['own_s']} | {p['share']:.0%} |" for p in t.get("profile", [])
            ]
    return md


# ---------------------------------------------------------------------------------------------------- ws
def ws_exponents(data: Data, targets: Targets) -> list[str]:
    md: list[str] = []
    ex = data.get("exponents", {})
    if ex:
        md += [
            "",
            "## Fitted exponents (log-log least squares)",
            "",
            "| quantity | fitted | predicted | range |",
            "|---|---|---|---|",
            f"| closed-form time vs n | {ex['time_vs_n']:.2f} | 2 (n²) | n ∈ {ex['time_vs_n_range']} |",
            f"| closed-form peak memory vs n (default block) | {ex['mem_vs_n']:.2f} | 1 (block·n) | "
            f"n ∈ {ex['mem_vs_n_range']} |",
            f"| closed-form time vs D (n fixed) | {ex['time_vs_D']:.2f} | {ex['time_vs_D_predicted']:.2f} "
            f"(GEMM flop model along this path) | D ∈ {ex['time_vs_D_range']} |",
            f"| closed-form time vs the flop model per pair | {ex['time_vs_cost_model']:.2f} | 1 | same |",
            f"| HVP time per probe vs n / vs D | {ex['hvp_time_vs_n']:.2f} / {ex['hvp_time_vs_D']:.2f} | 1 / 1 | |",
        ]
        if "dense_time_vs_n" in ex:
            md.append(f"| dense Hessian + eigvalsh time vs n | {ex['dense_time_vs_n']:.2f} | 1 | |")
        if "dense_time_vs_D" in ex:
            md.append(f"| dense Hessian + eigvalsh time vs D | {ex['dense_time_vs_D']:.2f} | 2–3 | |")
        fits = ex.get("fits", {})
        if fits:
            md += [
                "",
                "Fit quality (slope ± standard error, r², rms log residual); a fit with r² < 0.9 or a slope within "
                "2 standard errors of 0 is reported as noise, not as an exponent:",
                "",
                "| fit | slope | ± se | r² | rms resid | points | verdict |",
                "|---|---|---|---|---|---|---|",
            ]
            md += [
                f"| {k} | {f['slope']:.2f} | {f.get('se', math.nan):.2f} | {f.get('r2', math.nan):.3f} | "
                f"{f.get('rms_log_resid', math.nan):.2f} | {f['points']} | **{f['verdict']}** |"
                for k, f in fits.items()
            ]
        bs = data.get("block_sweep")
        if bs:
            md.append(
                f"| closed-form peak memory vs block (n = {bs['rows'][0]['n']}) | {bs['mem_vs_block']:.2f} "
                "| 2 (block² temporaries) | |"
            )
    return md


def ws_sweeps(data: Data, targets: Targets) -> list[str]:
    md: list[str] = []
    for key, title in (("n_sweep", "n sweep"), ("D_sweep", "D sweep")):
        rows = data.get(key, {}).get("rows", [])
        if not rows:
            continue
        md += [
            "",
            f"## {title}: (a) closed form, (b) dense, (c) HVP estimators",
            "",
            "| M | N | D | n | (a) s | (a) MB traced (numpy path) | (b) s | (b)/(a) | (b) MB RSS | HVP s/probe | "
            "rel. err tr H² (a vs b) | note |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            md.append(
                f"| {r['M']} | {r['N']} | {r['D']} | {r['n']} | {fmt(r['closed_s'])} | "
                f"{fmt(r['closed_mem_traced_mb'])} | {fmt(r.get('dense_s'))} | "
                f"{fmt(r.get('ratio_dense_over_closed'))} | {fmt(r.get('dense_mem_rss_mb'))} | "
                f"{fmt(r['hvp_s_per_probe'])} | {fmt(r.get('rel_err_trace_sq'))} | "
                f"{'' if r['dense_plan']['run'] else 'dense skipped: ' + r['dense_plan']['reason']} |"
            )
    return md


def ws_roofline(data: Data, targets: Targets) -> list[str]:
    md: list[str] = []
    h = data.get("headline")
    if h:
        md += [
            "",
            f"## Roofline (D = {h['D']}, n = {h['n']})",
            "",
            f"Counted from the code: {h['gflop']:.2f} GFLOP of GEMMs and {h['gbytes']:.2f} GB of block-sized "
            f"elementwise traffic. At the rates measured interleaved with it (GEMM "
            f"{h.get('gemm_gflops', math.nan):.1f} GFLOP/s, triad {h.get('triad_gbs', math.nan):.1f} GB/s) "
            f"that is {h['roofline_flop_s']:.3g} s + "
            f"{h['roofline_mem_s']:.3g} s = {h['roofline_s']:.3g} s; measured {h['closed_s']:.3g} s "
            f"(**{h['closed_over_roofline']:.2f}×** the roofline"
            + (f"; per round, against that round's own rates, {_rounds_text(h['closed_over_roofline_rounds'])}"
               if "closed_over_roofline_rounds" in h else "")
            + f", "
            f"{h['achieved_gflops']:.1f} GFLOP/s achieved)"
            + (
                f"; the torch backend of the same kernels {h['closed_torch_s']:.3g} s "
                f"({h['torch_over_roofline']:.2f}× the roofline)."
                if "closed_torch_s" in h
                else "."
            )
            + (
                f" Not in the roofline: each call takes {h['closed_minflt_per_call']:.0f} minor page faults (the "
                f"first touch of its temporaries, which glibc hands back to the kernel between calls) and "
                f"{h['closed_sys_s_per_call'] * 1e3:.1f} ms of kernel time, "
                f"{h['closed_sys_s_per_call'] / h['closed_wall_s_faults_run']:.0%} of its wall time in that run "
                f"({h['closed_wall_s_faults_run'] * 1e3:.1f} ms a call)."
                if "closed_minflt_per_call" in h
                else ""
            ),
            "",
            "Profile of one call:",
            "",
            "| function | calls | own s | share |",
            "|---|---|---|---|",
        ]
        md += [f"| `{p['function']}` | {p['calls']} | {p['own_s']} | {p['share']:.0%} |" for p in h["profile"]]
    return md


def ws_mpmath(data: Data, targets: Targets) -> list[str]:
    return _table(
        data.get("mpmath"),
        "dps = 50 vs float64: arb balls (the dps= path) and mpmath object arrays",
        ("n", "float64_s", "mpmath50_s", "arb50_s", "ratio", "arb_ratio", "arb_speedup", "float64_digits",
         "arb_digits", "arb_radius_rel"),
    )


def ws_block_sweep(data: Data, targets: Targets) -> list[str]:
    return _table(
        data.get("block_sweep"),
        "Block size, numpy path (memory O(block²) + O(n(M+N)))",
        ("block", "n", "closed_s", "mem_traced_mb"),
    )


# -------------------------------------------------------------------------------------------- flat, rob
def flat_table(data: Data, targets: Targets) -> list[str]:
    return _table(
        data.get("flatness"),
        "Flattest outer weights",
        (
            "activation",
            "n",
            "m",
            "seconds",
            "cpu_seconds",
            "rel_gap",
            "solver",
            "baseline_solver",
            "baseline_s",
            "baseline_cpu_s",
            "speedup",
            "speedup_lower",
            "baseline_value_rel_diff",
            "baseline_reason",
            "reason",
            "error",
        ),
    )


def flat_lp_baselines(data: Data, targets: Targets) -> list[str]:
    """flat: every general LP solver on the split LP, per size; the fastest correct one is the baseline above."""
    fl = data.get("flatness", {})
    rows = [r for r in fl.get("rows", []) if "lp_baselines" in r] if fl.get("available") else []
    if not rows:
        return []
    md = [
        "",
        "## Flattest LP: the general solvers (split LP, each in its own process)",
        "",
        "Each solver on the suite's split LP, asked for 1e-10 feasibility (and gap); correct = optimal by its own "
        "status and within 1e-8 of the suite's certified value. Ratio = solver / suite, one run (the "
        "headline's ratio for the fastest correct one adds interleaved pairs).",
        "",
        "| n | m | solver | seconds | CPU s | iterations | value rel. diff | load | ratio (wall / CPU) | "
        "correct or why not |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        for name, b in r["lp_baselines"].items():
            ratio = (f"{b['seconds'] / r['seconds']:.3g}× / {b['cpu_seconds'] / r['cpu_seconds']:.3g}×"
                     if b.get("correct") else "—")
            load = f"{b['load_before']:.1f}/{b['load_after']:.1f}" if "load_before" in b else "—"
            md.append(
                f"| {r['n']} | {r['m']} | {name} | {fmt(b.get('seconds'))} | {fmt(b.get('cpu_seconds'))} | "
                f"{fmt(b.get('iterations'))} | {fmt(b.get('value_rel_diff'))} | {load} | {ratio} | "
                f"{'yes' if b.get('correct') else b.get('reason', '—')} |"
            )
    return md


def rob_table(data: Data, targets: Targets) -> list[str]:
    return _table(
        data.get("kinks"),
        "Exact Lipschitz (ball) vs brute force",
        ("d", "m", "cells", "exact_s", "brute_cells", "brute_s", "agree"),
    )


def rob_certified(data: Data, targets: Targets) -> list[str]:
    """rob: certified constants, time and gap against m and d; the certified routine against the brute force."""
    kc = data.get("kinks_certified", {})
    if not kc or not kc.get("available"):
        return [""]
    out = [
        "## Certified Lipschitz constants: time and gap against m and d",
        "",
        "Each net once, with the cost model of `numerics.rob.lipschitz` (exact, or a branch-and-bound bracket "
        "to `rel_gap = 1%` within the time limit). *Sampling* is the author's method (20 000 uniform points); "
        "its under-report is (certified lower end − sampled max)/(certified lower end).",
        "",
        "| domain | d | m | limit (s) | time (s) | result | lower | upper | certified gap | sampling under-reports |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in kc["rows"]:
        res = "exact" if r["exact"] else r["status"]
        ur = "—" if r["sampling_under_report_pct"] is None else f"{r['sampling_under_report_pct']:.2f}%"
        out.append(
            f"| {r['domain']} | {r['d']} | {r['m']} | {r['time_limit']:.3g} | {r['seconds']:.2f} | {res} | "
            f"{r['lower']:.6g} | {r['upper']:.6g} | {r['gap']:.2e} | {ur} |"
        )
    out += [
        "",
        "Exact routine against the SOCP brute force over all 2^m sign patterns (ball B₁ ⊂ R³):",
        "",
        "| m | exact (s) | cells | brute force (s) | cells accepted | unresolved | same constant | speedup |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in kc["brute"]:
        out.append(
            f"| {r['m']} | {r['exact_s']:.3f} | {r['cells']} | {r['brute_s']:.1f} | {r['brute_cells']} | "
            f"{r['unresolved']} | {'yes' if r['agree'] else 'NO'} | {r['brute_s'] / r['exact_s']:.0f}× |"
        )
    return ["\n".join(out) + "\n"]


# ------------------------------------------------------------------------------------------------- suite
def falsify_table(data: Data, targets: Targets) -> list[str]:
    return _table(
        data.get("falsify"), "Falsification throughput", ("property", "examples", "seconds", "examples_per_s")
    )


def verify_summary(data: Data, targets: Targets) -> list[str]:
    md: list[str] = []
    if "verify" in data:
        v = data["verify"]
        md += [
            "",
            "## Whole verify",
            "",
            f"{v['seconds']:.0f} s (return code {v['returncode']}); slowest: "
            + ", ".join(f"{r['claim']}/{r['level']} {r['seconds']:.0f} s" for r in v["slowest"][:5]),
        ]
    return md


def _table(sec: dict[str, Any] | None, title: str, cols: tuple[str, ...]) -> list[str]:
    """A ``## title`` section: one row per ``sec["rows"]`` entry, or why the section is unavailable."""
    if not sec:
        return []
    md = ["", f"## {title}", ""]
    if sec.get("available") is False:
        return [*md, f"Not available: {sec['reason']}"]
    md += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    return md + ["| " + " | ".join(fmt(r.get(c)) for c in cols) + " |" for r in sec["rows"]]


def time_budget(data: Data, targets: Targets) -> list[str]:
    secs = data.get("section_seconds", {})
    if not secs:
        return []
    meta = data["meta"]
    md = [
        "",
        f"## Time budget: {meta.get('seconds', 0):.0f} s of {meta.get('budget_s', math.nan):.0f} s",
        "",
        "| section | seconds |",
        "|---|---|",
    ]
    md += [f"| {k} | {v:.1f} |" for k, v in secs.items()]
    md += [f"| {k} | {v} |" for k, v in meta.get("skipped_sections", {}).items()]
    kc = data.get("kinks_certified", {})
    if kc.get("limit_scale", 1.0) < 1.0:
        md += ["", f"The certified-Lipschitz grid's time limits ({kc['limits_total_s']:.0f} s in all) were scaled by "
               f"{kc['limit_scale']:.2f} to fit the budget."]
    return md


#: bench.md, top to bottom.
WRITERS: tuple[Callable[[Data, Targets], list[str]], ...] = (
    header,
    headline,
    target_table,
    ws_exponents,
    ws_sweeps,
    ws_roofline,
    ws_peers.report_peers,
    ws_peers.report_mnist,
    ws_deep.report,
    ws_trace.report,
    ws_softmax.report,
    ws_dask.report,
    ws_mpmath,
    ws_block_sweep,
    flat_table,
    flat_lp_baselines,
    rob_table,
    falsify_table,
    verify_summary,
    rob_certified,
    lambda data, targets: lipschitz_peers.markdown(data.get("lipschitz_peers", {})),
    time_budget,
)
