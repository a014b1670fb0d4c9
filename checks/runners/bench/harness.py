"""``nox -s bench``: the suite's speed and memory against the ways people compute these numbers today.

``python -m checks.runners.bench [--quick] [--out reports] [--with-verify]`` writes ``<out>/bench.json``,
``<out>/bench.md`` and log-log plots ``<out>/figures/bench_*.png`` (issue 5).

Method
------
* **Ratios within one run.** The machine is shared, so absolute times drift. Every comparison runs its
  contenders *interleaved* (round-robin, several rounds). The peer tables (issue 14) use :func:`paired`: each
  round runs the closed form and one peer back to back (order alternating), the ratio of that pair is one
  sample, and the report gives the median per-pair ratio with its min–max, the CPU-time ratio beside the wall
  one, and the load average; a spread max/min above ``SPREAD_MAX`` is reported as "no headline".
* **Peers** (:mod:`~checks.runners.bench.peers`, extra ``bench``): curvlinops, BackPACK, PyHessian, each checked against
  the closed form in ``tests/test_bench_peers.py``; sections ``peers`` and ``mnist``
  (:mod:`~checks.runners.bench.ws_peers`).
* **Time budget** (``--budget``, 3600 s full, 170 s quick): a section that would start after it is skipped with
  the reason; the certified-Lipschitz grid runs its quick grid when less than its full grid's ~25 min is left;
  the report lists each section's cost. The default holds every section of a full run on a 2-core machine
  (measured: ~47 min, the longest trace_only ~12 min, lipschitz_peers ~22 min, flatness and mnist ~5 min
  each; the full-MNIST Dask run, 23.5 min, is carried from the last report unless asked for by name), so that
  one ``nox -s bench`` prints every target.
* **Time** is ``time.perf_counter`` wall time. The machine's float64 GEMM rate and memory bandwidth are
  measured at the start (and the load average is recorded) so that the roofline uses this run's machine.
* **Memory.** Closed form (numpy): ``tracemalloc`` peak (numpy reports every array allocation to it), i.e.
  the bytes the call itself allocates. Torch paths (dense Hessian, HVPs) and the end-to-end target: the
  process peak RSS delta, reading ``VmHWM`` from ``/proc/self/status`` after resetting it through
  ``/proc/self/clear_refs`` (falls back to ``ru_maxrss``, which can only grow: then stated).
* **Dense Hessian** (b) is the D columns H e_j by ``torch.func`` forward-over-reverse (as in
  ``torch.func.hessian``), vmapped over chunks of columns to bound memory, then ``torch.linalg.eigvalsh``;
  its memory and time are *estimated first* (8·D² for H, twice that for eigvalsh, plus the chunked
  intermediates; time from this run's HVP and eigvalsh rates) and the size is skipped, with the reason
  recorded, when the estimate exceeds the budget (``--dense-mem-gb``, ``--dense-time-s``).
* **HVP estimators** (c) are :mod:`numerics.ws.estimators` on :func:`numerics.ws.reference.hvp_operator`.
  The probe count that matches the closed form's accuracy is ``k = (s/(ε·|tr|))²`` from the per-probe
  spread s of this run's probes, with ε the closed form's measured relative error (float64 vs dps = 50).
* **Exponents** are least-squares slopes in log-log coordinates over the asymptotic part of each sweep
  (stated in the JSON), compared with the O(n²(M+N)) time and O(block·n) memory predictions; :func:`fit_power`
  adds the slope's standard error, r² and the rms residual, and calls a fit with r² < 0.9 or a slope within two
  standard errors of 0 "noise".
* A missed target is followed by a cProfile of the missing computation (top functions by own time).

Layout
------
``harness`` (this module: the command line and the run loop; it re-exports the helpers under their old
names), ``core`` (grids, :class:`Bench`: the run's state and targets, formatting, plotting style), ``timing``
(interleaved and paired runs, ratios, fits), ``resources`` (memory, profiles, threads, time limits), one module
per paper (``ws``, ``flat``, ``rob``, the peers: their sections and plots) and ``report`` (``bench.json`` and the
per-section writers of ``bench.md``). Imports run one way: sections → core/timing/resources; report → sections;
harness → report and sections.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from checks.runners.bench.core import FULL, QUICK, Bench, Grid, figure_dir, fmt, pyplot, save_figure  # noqa: F401
from checks.runners.bench.resources import (  # noqa: F401
    GB,
    MB,
    kept_threads,
    profile_top,
    rss_peak,
    run_with_timeout,
    set_threads,
    traced_peak,
)
from checks.runners.bench.timing import (  # noqa: F401 - re-exported: the bench's helpers, under their old address
    SPREAD_MAX,
    fit_exponent,
    fit_power,
    interleaved,
    median_time,
    paired,
    ratio_summary,
    ratio_text,
    round_robin,
)

# the full run's default budget: every section of a full run fits in it on a 2-core machine (module docstring)
FULL_BUDGET_S = 3600.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m checks.runners.bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, < 60 s (for the tests)")
    ap.add_argument("--out", type=Path, default=Path("reports"))
    ap.add_argument("--with-verify", action="store_true", help="also time a whole `python -m checks verify`")
    ap.add_argument("--dense-mem-gb", type=float, default=4.0, help="memory budget for the dense Hessian")
    ap.add_argument("--dense-time-s", type=float, default=None, help="time budget per dense Hessian")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--threads",
        type=int,
        default=os.cpu_count() or 1,
        help="BLAS and torch threads for every contender (default: all cores)",
    )
    ap.add_argument("--only", nargs="*", default=None, help="run only these sections (for development)")
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="time budget in s for the whole run (default 3600 full, 170 quick): a section that would start after it "
        "is skipped with the reason, and the long sections cut their grids to fit",
    )
    ap.add_argument("--render-only", action="store_true", help="rewrite bench.md and plots from bench.json")
    ap.add_argument(
        "--reuse-mnist-closed",
        action="store_true",
        help="with --merge --only mnist: keep the earlier run's full-MNIST closed-form row, rerun only the peers",
    )
    ap.add_argument(
        "--readme",
        action="store_true",
        help="with --render-only: also rewrite the README's speed table (between <!-- bench:start/end -->) from it",
    )
    ap.add_argument(
        "--merge",
        action="store_true",
        help="with --only: replace just these sections (and their targets) in an existing bench.json",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        from checks.runners.bench.report import plots, write_report

        payload = json.loads((args.out / "bench.json").read_text())
        targets = payload.pop("targets")
        payload["figures"] = plots(args.out, payload)
        write_report(args.out, payload, targets)
        if args.readme:
            from checks.runners.bench.readme import write_readme

            write_readme(payload, targets)
        return 0

    with kept_threads():  # a caller's process (e.g. pytest) gets its thread counts back
        return _run(args)


def _run(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    # the paper modules import this one
    from checks.runners.bench import flat, rob, ws, ws_dask, ws_deep, ws_peers, ws_softmax, ws_trace
    from checks.runners.bench.report import plots, write_report

    console = Console(stderr=True)
    g = QUICK if args.quick else FULL
    b = Bench(
        g,
        args.quick,
        args.out,
        args.dense_mem_gb * GB,
        # full: 60 s keeps D = 2001 (5 s) and skips D = 8001 (estimated 130 s; 64 s measured in one run) in the
        # 15-minute run, with the reason; ``--dense-time-s 180`` brings it back
        args.dense_time_s if args.dense_time_s is not None else (5.0 if args.quick else 60.0),
        args.seed,
    )
    b.data["meta"] = {
        "quick": args.quick,
        "argv": sys.argv[1:],
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "grid": g.__dict__,
        "threads": set_threads(args.threads),
    }
    n_cases = [(*g.n_sweep_MN, n) for n in g.n_sweep]
    D_cases = [(M, N, g.D_sweep_n) for M, N in g.D_sweep]
    sections: list[tuple[str, Callable[[], None]]] = [
        ("machine", b.machine),
        ("mpmath", lambda: ws.mpmath_section(b)),
        ("n_sweep", lambda: ws.sweep(b, "n_sweep", n_cases)),
        ("D_sweep", lambda: ws.sweep(b, "D_sweep", D_cases)),
        ("fits", lambda: ws.fits(b)),
        ("block_sweep", lambda: ws.block_sweep(b)),
        ("headline", lambda: ws.headline(b)),
        ("peers", lambda: ws_peers.peers_section(b)),
        ("mnist", lambda: ws_peers.mnist_section(b)),
        ("ws_deep", lambda: ws_deep.deep_section(b)),
        ("trace_only", lambda: ws_trace.trace_section(b)),
        ("flatness", lambda: flat.flattest_section(b)),
        ("kinks", lambda: rob.lipschitz_section(b)),
        ("kinks_certified", lambda: rob.certified_section(b)),
        ("lipschitz_peers", lambda: rob.peers_section(b)),
        ("falsify", lambda: ws.falsify_section(b)),
        # after the papers' sections: their own runs of minutes (the full-MNIST Dask run is carried from the last
        # run that measured it unless asked for by name)
        ("softmax_floor", lambda: ws_softmax.floor_section(b)),
        ("softmax_dask", lambda: ws_dask.dask_section(b)),
        ("mnist_1pct", lambda: ws_peers.mnist_1pct_section(b)),  # last: on what the budget has left
    ]
    if args.with_verify:
        sections.append(("verify", b.verify))
    if (args.out / "bench.json").exists() and not args.quick:  # a long measurement a later run may keep
        old = json.loads((args.out / "bench.json").read_text())
        if old.get("mnist_1pct"):
            b.data["prior_mnist_1pct"] = old["mnist_1pct"]
        if old.get("softmax_dask", {}).get("full"):
            b.data["prior_softmax_dask"] = old["softmax_dask"]["full"]
    if args.only:
        b.only = tuple(args.only)
        keep = set(args.only) | {"machine"}
        sections = [s for s in sections if s[0] in keep]
    if args.merge and args.only and (args.out / "bench.json").exists():
        prior = json.loads((args.out / "bench.json").read_text())
        for k, v in prior.items():  # later sections (fits, headline) read earlier ones
            if k not in ("meta", "targets", "machine", "errors") and k not in b.data:
                b.data[k] = v
        b.reuse_mnist_closed = args.reuse_mnist_closed
        b.data["meta_prior_started"] = prior.get("meta", {}).get("started")
    b.ran = tuple(name for name, _ in sections)
    t_all = time.perf_counter()
    budget = args.budget if args.budget is not None else (170.0 if args.quick else FULL_BUDGET_S)
    b.deadline = t_all + budget
    b.data["meta"]["budget_s"] = budget
    skipped: dict[str, str] = {}
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as prog:
        b.log = lambda s: prog.console.log(s)
        task = prog.add_task("bench", total=len(sections))
        for name, fn in sections:
            b.section = name
            prog.update(task, description=f"bench: {name}")
            t0 = time.perf_counter()
            if name != "machine" and b.out_of_time():
                skipped[name] = f"not run: the run's {budget:.0f} s budget was spent before it"
                prog.advance(task)
                continue
            try:
                fn()
            except Exception as exc:  # one broken section must not lose the others' numbers
                b.data.setdefault("errors", {})[name] = f"{type(exc).__name__}: {exc}"
                prog.console.log(f"[red]{name} failed: {type(exc).__name__}: {exc}")
            b.data.setdefault("section_seconds", {})[name] = time.perf_counter() - t0
            prog.advance(task)
    b.data.pop("prior_mnist_1pct", None)  # read by the mnist_1pct section only
    b.data.pop("prior_softmax_dask", None)  # read by the softmax_dask section only
    b.data["meta"]["seconds"] = time.perf_counter() - t_all
    if skipped:
        b.data["meta"]["skipped_sections"] = skipped
    b.data["meta"]["loadavg_end"] = os.getloadavg()
    if args.merge and args.only and (args.out / "bench.json").exists():
        old = json.loads((args.out / "bench.json").read_text())
        ran = {name for name, _ in sections}
        fresh = {t["target"][:25] for t in b.targets}
        old_targets = [t for t in old.pop("targets") if t.get("section") not in ran and t["target"][:25] not in fresh]
        merged = old.pop("meta")
        merged.setdefault("merged", []).append(b.data.pop("meta"))
        for k, v in b.data.items():
            if k == "section_seconds":
                old.setdefault(k, {}).update(v)
            elif k != "machine":  # keep the first run's machine record; the merged run's is in meta
                old[k] = v
        merged["merged"][-1]["machine"] = b.data.get("machine")
        errs = {k: v for k, v in old.pop("errors", {}).items() if k not in ran} | b.data.get("errors", {})
        old.pop("errors", None)
        if errs:
            old["errors"] = errs
        old["meta"] = merged
        b.data, b.targets = old, old_targets + b.targets
    b.data["figures"] = plots(args.out, b.data)
    write_report(args.out, b.data, b.targets)
    table = Table(title="targets: each measured number against its threshold")
    for col in ("target", "measured", "threshold", "status"):
        table.add_column(col)
    for t in b.targets:
        table.add_row(t["target"], fmt(t["value"]), f"{t['op']} {t['threshold']} {t['unit']}", t["status"])
    console.print(table)
    console.print(f"wrote {args.out / 'bench.json'}, {args.out / 'bench.md'} in {b.data['meta']['seconds']:.0f} s")
    return 1 if b.data.get("errors") else 0
