"""``nox -s bench``: the suite's speed and memory against the ways people compute these numbers today.

``python -m checks.bench [--quick] [--out reports] [--with-verify]`` writes ``<out>/bench.json``,
``<out>/bench.md`` and log-log plots ``<out>/figures/bench_*.png`` (issue 5).

Method
------
* **Ratios within one run.** The machine is shared, so absolute times drift. Every comparison runs its
  contenders *interleaved* (round-robin, several rounds) and reports medians and their ratio.
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
  (stated in the JSON), compared with the O(n²(M+N)) time and O(block·n) memory predictions.
* A missed target is followed by a cProfile of the missing computation (top functions by own time).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import math
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

GB = 1024**3
MB = 1024**2


# ------------------------------------------------------------------------------------------------ config
@dataclass(frozen=True)
class Grid:
    """Sizes for one mode. ``full`` is the issue's grid; ``quick`` keeps the same sections under 60 s."""

    n_sweep_MN: tuple[int, int]
    n_sweep: tuple[int, ...]
    dense_n_max: int
    D_sweep_n: int
    D_sweep: tuple[tuple[int, int], ...]
    head_MN: tuple[int, int]  # D ≈ 2000
    head_n: int
    big_MN: tuple[int, int]  # MNIST-sized
    big_n: int
    lanczos_steps: int
    hutch_probes: int
    block_sweep_n: int
    blocks: tuple[int, ...]
    mp_MN: tuple[int, int]
    mp_n: tuple[int, ...]
    flat_lp: tuple[tuple[int, int], ...]  # (n, m)
    flat_pc: tuple[tuple[int, int], ...]
    flat_d: int
    kink_m: tuple[int, ...]
    brute_m: tuple[int, ...]
    falsify_budget: tuple[int, int]  # (cheap theorem property, dense-Hessian bound property)
    reps: int


FULL = Grid(
    n_sweep_MN=(98, 20),
    n_sweep=(100, 200, 500, 1000, 2000, 5000, 10000, 20000),
    dense_n_max=2000,
    D_sweep_n=2000,
    D_sweep=((2, 3), (10, 10), (30, 16), (98, 20), (198, 40), (784, 64), (784, 256)),
    head_MN=(98, 20),
    head_n=2000,
    big_MN=(784, 256),
    big_n=10000,
    lanczos_steps=100,
    hutch_probes=16,
    block_sweep_n=8000,
    blocks=(256, 512, 1024, 2048, 4096),
    mp_MN=(2, 3),
    mp_n=(20, 50, 100),
    flat_lp=((100, 1000), (300, 3000), (1000, 1000), (1000, 3000), (1000, 10000)),
    flat_pc=((100, 1000), (300, 3000), (1000, 3000), (1000, 10000)),
    flat_d=20,
    kink_m=(2, 4, 8, 16, 32, 64, 128),
    brute_m=(2, 4, 6, 8, 10, 12),
    falsify_budget=(200, 30),
    reps=5,
)
QUICK = Grid(
    n_sweep_MN=(10, 10),
    n_sweep=(100, 300, 600),
    dense_n_max=300,
    D_sweep_n=300,
    D_sweep=((2, 3), (10, 10), (30, 16)),
    head_MN=(30, 16),
    head_n=300,
    big_MN=(30, 16),
    big_n=1000,
    lanczos_steps=10,
    hutch_probes=8,
    block_sweep_n=2000,
    blocks=(256, 1024),
    mp_MN=(2, 3),
    mp_n=(5, 10),
    flat_lp=((30, 100),),
    flat_pc=((20, 60),),
    flat_d=8,
    kink_m=(2, 4, 8),
    brute_m=(2, 4),
    falsify_budget=(10, 1),
    reps=3,
)


# ------------------------------------------------------------------------------------------- measuring
def _median_time(fn: Callable[[], Any], *, reps: int, min_total: float = 0.0) -> tuple[float, Any]:
    ts, out = [], None
    t_start = time.perf_counter()
    while len(ts) < reps or (time.perf_counter() - t_start < min_total and len(ts) < 50):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def interleaved(
    fns: dict[str, Callable[[], Any]], *, rounds: int, reps: dict[str, int] | None = None
) -> tuple[dict[str, float], dict[str, Any]]:
    """Median wall time per contender, measured round-robin (``reps[name]`` rounds at most)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    outs: dict[str, Any] = {}
    for r in range(rounds):
        for k, f in fns.items():
            if reps and r >= reps.get(k, rounds):
                continue
            t0 = time.perf_counter()
            outs[k] = f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}, outs


def _hwm_reset() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def rss_peak(fn: Callable[[], Any]) -> tuple[float, str, Any]:
    """(peak RSS growth in bytes during fn, method, fn's result)."""
    try:
        if _hwm_reset():
            base = _status_kb("VmRSS")
            out = fn()
            return max(0, _status_kb("VmHWM") - base) * 1024.0, "VmHWM delta (clear_refs reset)", out
    except (OSError, KeyError):
        pass
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = fn()
    return (
        max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * 1024.0,
        "ru_maxrss delta (a lower bound: only growth past the earlier peak shows)",
        out,
    )


def traced_peak(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Peak bytes allocated (and traced) during fn: numpy arrays report to tracemalloc."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return float(tracemalloc.get_traced_memory()[1] - base), out
    finally:
        tracemalloc.stop()


def profile_top(fn: Callable[[], Any], k: int = 6) -> list[dict[str, Any]]:
    """The k functions with the most own time in one run of fn (cProfile)."""
    pr = cProfile.Profile()
    pr.enable()
    try:
        fn()
    finally:
        pr.disable()
    st = pstats.Stats(pr, stream=io.StringIO())
    total = sum(v[2] for v in st.stats.values()) or 1.0
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:k]
    return [
        {
            "function": f"{Path(f).name}:{ln}({name})",
            "calls": int(v[1]),
            "own_s": round(v[2], 4),
            "share": round(v[2] / total, 3),
        }
        for (f, ln, name), v in rows
    ]


def fit_exponent(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def set_threads(n: int) -> dict[str, Any]:
    """Use n threads in every loaded OpenBLAS (numpy's, scipy's) and in torch; returns what was set.

    Both contenders always get the same thread count. On a shared, oversubscribed machine a
    multi-threaded OpenBLAS can be many times slower than one thread (threads wait for descheduled
    peers), so the count is a recorded option (``--threads``), not a hidden choice.
    """
    import ctypes

    import scipy.linalg  # noqa: F401  (load scipy's OpenBLAS too, so that it is limited as well)
    import torch

    done = []
    with open("/proc/self/maps") as fh:
        libs = sorted({p for p in (ln.split()[-1] for ln in fh) if "openblas" in p.lower() and ".so" in p})
    for path in libs:
        with contextlib.suppress(OSError):
            lib = ctypes.CDLL(path)
            for sym in (
                "scipy_openblas_set_num_threads64_",
                "scipy_openblas_set_num_threads",
                "openblas_set_num_threads64_",
                "openblas_set_num_threads",
            ):
                if hasattr(lib, sym):
                    getattr(lib, sym)(ctypes.c_int(n))
                    done.append(f"{Path(path).name}:{sym}")
                    break
    torch.set_num_threads(n)
    return {"threads": n, "openblas": done, "torch": torch.get_num_threads()}


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
    """Flops of the GEMMs and bytes of the block-sized elementwise passes of ``numerics.moments._moments``.

    Counted from the code as of 4a6081f (pair sums grouped by the power of G, gKg's and KK's G² terms
    sharing their right factor r∘φ″; bias=True): per pair of blocks (I ≤ J) one Gram GEMM (K = M+1),
    2 GEMMs with K = N in gg, and one (b×b)·(b×N) G² product per orientation (one on the diagonal).
    Elementwise traffic per b_I×b_J block, 8 bytes each: writes G, gg's 2 GEMM outputs and 3
    temporaries, S², G² (8); reads gg 5, S² 1, qᵀS²q 1, G² 1 and one per G² product (2 off the
    diagonal, 1 on it). The O(n(M+1)N) G-linear terms and the per-sample tables are omitted.
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
            flops += 2 * e * (M + 1) + 2 * e * N * (3 if diag else 4)
            bytes_ += 8 * e * (8 + (9 if diag else 10))
    return {"flops": flops, "bytes": bytes_}


# ----------------------------------------------------------------------------------------------- sections
@dataclass
class Bench:
    grid: Grid
    quick: bool
    out: Path
    dense_mem: float
    dense_time: float
    seed: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    targets: list[dict[str, Any]] = field(default_factory=list)
    log: Callable[[str], None] = print
    section: str = ""
    ran: tuple[str, ...] = ()

    # -- machine ------------------------------------------------------------------------------------
    def machine(self):
        import torch

        rng = np.random.default_rng(0)
        s = 768 if self.quick else 2048
        A, B = rng.random((s, s)), rng.random((s, s))
        t, _ = _median_time(lambda: A @ B, reps=3)
        gemm = 2 * s**3 / t
        big = rng.random((16 if self.quick else 32) * MB // 8)
        outb = np.empty_like(big)
        tb, _ = _median_time(lambda: np.add(big, big, out=outb), reps=5)
        bw = 3 * big.nbytes / tb
        d_e = 300 if self.quick else 800
        S = rng.random((d_e, d_e))
        S = torch.as_tensor(S + S.T)
        te, _ = _median_time(lambda: torch.linalg.eigvalsh(S), reps=3)
        self.data["machine"] = {
            "cpu_count": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(),
            "loadavg_start": os.getloadavg(),
            "gemm_gflops": gemm / 1e9,
            "gemm_size": s,
            "triad_gbs": bw / 1e9,
            "eigvalsh_s_per_D3": te / d_e**3,
            "eigvalsh_calibration_D": d_e,
        }
        self.log(f"GEMM {gemm / 1e9:.1f} GFLOP/s, triad {bw / 1e9:.1f} GB/s, load {os.getloadavg()[0]:.1f}")

    # -- helpers for (a), (b), (c) --------------------------------------------------------------------
    def closed(self, net, block=None):
        """The suite's closed form as a user calls it (its default block unless one is given)."""
        from numerics.ws import ce_hessian_moments

        kw = {} if block is None else {"block": block}
        return lambda: ce_hessian_moments(*net, "tanh", **kw)

    def hvp(self, net):
        from numerics.ws.reference import hvp_operator

        hvp, D = hvp_operator(*net, "tanh")
        import torch

        hvp(torch.ones(D, 2, dtype=torch.float64))  # warm up torch.func tracing
        return hvp, D

    def dense_plan(self, M, N, n, t_probe: float) -> dict[str, Any]:
        D = dim_of(M, N)
        per_dir = 8.0 * n * (M + 6 * N) * 3  # tangents of the forward/backward intermediates
        chunk = int(max(1, min(D, (256 * MB) // per_dir)))
        mem = 8.0 * D * D * 4 + chunk * per_dir  # H, the identity, eigvalsh copy + work
        t_est = t_probe * D + self.data["machine"]["eigvalsh_s_per_D3"] * D**3
        plan = {"D": D, "chunk": chunk, "mem_est_gb": mem / GB, "time_est_s": t_est, "run": True}
        if mem > self.dense_mem:
            plan.update(
                run=False,
                reason=f"estimated memory {mem / GB:.1f} GB > budget {self.dense_mem / GB:.1f} GB "
                f"(H alone is 8·D² = {8 * D * D / GB:.1f} GB)",
            )
        elif t_est > self.dense_time:
            plan.update(
                run=False,
                reason=f"estimated time {t_est:.0f} s > budget {self.dense_time:.0f} s "
                "(D HVP columns + eigvalsh, at this run's measured rates)",
            )
        return plan

    def dense(self, net, chunk):
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

    # -- (a) vs (b) vs (c), n sweep at D ≈ 2000 and D sweep -----------------------------------------
    def sweep(self, key: str, cases: list[tuple[int, int, int]], progress=None):
        from numerics.ws.estimators import hutchinson, lanczos_lmax

        g = self.grid
        rows = []
        for M, N, n in cases:
            net = make_net(M, N, n, self.seed)
            row: dict[str, Any] = {"M": M, "N": N, "n": n, "D": dim_of(M, N)}
            cf = self.closed(net)
            t_cf, m = _median_time(cf, reps=g.reps if n <= 5000 else 2, min_total=0 if self.quick else 0.3)
            row["closed_s"] = t_cf
            row["closed_mem_traced_mb"] = traced_peak(cf)[0] / MB
            row["trace"], row["trace_sq"] = m.trace, m.trace_sq
            cost = closed_form_cost(n, M, N)
            row.update(closed_gflop=cost["flops"] / 1e9, closed_gbytes=cost["bytes"] / 1e9)
            hvp, D = self.hvp(net)
            hres = hutchinson(hvp, D, n_probes=g.hutch_probes, batch=8, seed=self.seed)
            row["hvp_s_per_probe"] = hres.seconds / hres.n_probes
            row["hutch_rel_sd_trace"] = float(np.std(hres.trace.samples, ddof=1) / abs(hres.trace.estimate))
            row["hutch_rel_sd_trace_sq"] = float(
                np.std(hres.trace_sq.samples, ddof=1) / hres.trace_sq.estimate
            )
            steps = min(20, D)
            lz = lanczos_lmax(hvp, D, steps=steps, seed=self.seed)
            row["lanczos_s_per_step"] = lz.seconds / lz.steps
            plan = (
                self.dense_plan(M, N, n, row["hvp_s_per_probe"])
                if n <= g.dense_n_max
                else {
                    "run": False,
                    "reason": f"n > {g.dense_n_max}: dense only at n ≤ {g.dense_n_max} in this sweep "
                    "(its cost is linear in n at fixed D; see the D sweep)",
                }
            )
            row["dense_plan"] = plan
            if plan["run"]:
                dn = self.dense(net, plan["chunk"])
                mem, how, _ = rss_peak(dn)
                row["dense_mem_rss_mb"], row["rss_method"] = mem / MB, how
                # interleaved: the closed form runs between dense runs, medians of each
                rounds = 2 if plan["time_est_s"] > 10 else 3
                med, outs = interleaved({"closed": cf, "dense": dn}, rounds=rounds)
                row["dense_s"], row["closed_s_interleaved"] = med["dense"], med["closed"]
                row["ratio_dense_over_closed"] = med["dense"] / med["closed"]
                lmax, tr, tr2 = outs["dense"]
                row["dense_lmax"] = lmax
                row["rel_err_trace"] = abs(m.trace - tr) / abs(tr)
                row["rel_err_trace_sq"] = abs(m.trace_sq - tr2) / tr2
                row["lanczos_steps"], row["lanczos_lmax"] = steps, lz.estimate
                row["lanczos_rel_err"] = abs(lz.estimate - lmax) / abs(lmax)
            rows.append(row)
            self.log(
                f"{key}: M={M} N={N} n={n} D={row['D']}: closed {t_cf:.3g}s"
                + (
                    f", dense {row['dense_s']:.3g}s ({row['ratio_dense_over_closed']:.0f}x)"
                    if "dense_s" in row
                    else f", dense skipped ({plan['reason'][:60]})"
                )
            )
            if progress:
                progress()
        self.data[key] = {"rows": rows}
        return rows

    def fits(self):
        n_rows = self.data["n_sweep"]["rows"]
        ns = [r["n"] for r in n_rows]
        tail = [r for r in n_rows if r["n"] >= 1000] or n_rows
        big = [r for r in n_rows if r["n"] >= 2048] or n_rows[-2:]
        D_rows = self.data["D_sweep"]["rows"]
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
            "time_vs_D_predicted": fit_exponent(
                [r["D"] for r in dbig], [r["M"] + 1 + 6 * r["N"] for r in dbig]
            ),
            "time_vs_D_range": [dbig[0]["D"], dbig[-1]["D"]],
            "time_vs_cost_model": fit_exponent(
                [c for c, r in zip(flopsD, D_rows, strict=True) if r["D"] >= 500],
                [r["closed_s"] for r in dbig],
            ),
            "mem_vs_D": fit_exponent([r["D"] for r in dbig], [r["closed_mem_traced_mb"] for r in dbig]),
            "hvp_time_vs_n": fit_exponent(ns, [r["hvp_s_per_probe"] for r in n_rows]),
            "hvp_time_vs_D": fit_exponent([r["D"] for r in dbig], [r["hvp_s_per_probe"] for r in dbig]),
        }
        dn = [r for r in n_rows if "dense_s" in r]
        if len(dn) >= 2:
            f["dense_time_vs_n"] = fit_exponent([r["n"] for r in dn], [r["dense_s"] for r in dn])
        dd = [r for r in D_rows if "dense_s" in r and r["D"] >= 100]
        if len(dd) >= 2:
            f["dense_time_vs_D"] = fit_exponent([r["D"] for r in dd], [r["dense_s"] for r in dd])
        self.data["exponents"] = f

    def block_sweep(self):
        g = self.grid
        M, N = g.n_sweep_MN
        net = make_net(M, N, g.block_sweep_n, self.seed)
        rows = []
        for blk in g.blocks:
            cf = self.closed(net, block=blk)
            t, _ = _median_time(cf, reps=2)
            rows.append(
                {"block": blk, "n": g.block_sweep_n, "closed_s": t, "mem_traced_mb": traced_peak(cf)[0] / MB}
            )
        self.data["block_sweep"] = {
            "rows": rows,
            "mem_vs_block": fit_exponent([r["block"] for r in rows], [r["mem_traced_mb"] for r in rows]),
        }

    # -- headline D ≈ 2000, n = 2000 with the roofline ---------------------------------------------
    def headline(self):
        g = self.grid
        (M, N), n = g.head_MN, g.head_n
        row = None
        if "D_sweep" in self.ran:  # else (a --merge re-run of the headline alone) measure the case afresh
            rows = self.data.get("D_sweep", {}).get("rows", [])
            row = next((r for r in rows if (r["M"], r["N"], r["n"]) == (M, N, n)), None)
        if row is None:
            row = self.sweep("headline_case", [(M, N, n)])[0]
        mach = self.data["machine"]
        cost = closed_form_cost(n, M, N)
        net = make_net(M, N, n, self.seed)
        where = f"(D = {row['D']}, n = {n})" + (" [quick stand-in for D≈2000, n=2000]" if self.quick else "")
        # the roofline's rates are measured interleaved with the closed form (the load drifts)
        rng = np.random.default_rng(1)
        s_g = 768 if self.quick else 1536
        A, B = rng.random((s_g, s_g)), rng.random((s_g, s_g))
        big = rng.random((16 if self.quick else 32) * MB // 8)
        outb = np.empty_like(big)
        med, outs = interleaved(
            {
                "closed": self.closed(net),
                "gemm": lambda: A @ B,
                "triad": lambda: np.add(big, big, out=outb),
            },
            rounds=g.reps,
        )
        gemm_rate, bw = 2 * s_g**3 / med["gemm"], 3 * big.nbytes / med["triad"]
        t_flop = cost["flops"] / gemm_rate
        t_mem = cost["bytes"] / bw
        roof = t_flop + t_mem
        t_cf = med["closed"]
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
            "achieved_gflops": cost["flops"] / t_cf / 1e9,
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
            self._target(
                f"closed form ≥ 100× faster than dense Hessian + eigvalsh {where}",
                row["ratio_dense_over_closed"],
                ">=",
                100.0,
                "×",
                lambda: self.closed(net)(),
                explanation=expl,
            )
        else:
            self._target(
                f"closed form ≥ 100× faster than dense Hessian + eigvalsh {where}",
                None,
                ">=",
                100.0,
                "×",
                None,
                skipped=row["dense_plan"].get("reason"),
            )
        self._target(
            f"closed form within 2× of the roofline {where}",
            t_cf / roof,
            "<=",
            2.0,
            "×",
            lambda: self.closed(net)(),
        )
        # what the time goes to: kernel GEMMs vs the rest (profile, always recorded)
        h["profile"] = profile_top(lambda: self.closed(net)())
        self.data["headline"] = h
        self.log(f"headline: closed {t_cf:.3g}s, roofline {roof:.3g}s ({t_cf / roof:.1f}x)")

    # -- MNIST-sized: exact moments vs Lanczos vs Hutchinson ---------------------------------------
    def mnist(self):
        from numerics.ws.estimators import hutchinson, lanczos_lmax

        g = self.grid
        (M, N), n = g.big_MN, g.big_n
        net = make_net(M, N, n, self.seed)
        D = dim_of(M, N)
        cf = self.closed(net)
        mem_rss, how, _ = rss_peak(cf)  # the first call: freed blocks are not yet cached by malloc
        mem_tr, _ = traced_peak(cf)
        hvp, _ = self.hvp(net)
        lz_box: dict[str, Any] = {}

        def lanczos():
            lz_box["r"] = lanczos_lmax(hvp, D, steps=g.lanczos_steps, seed=self.seed)
            return lz_box["r"]

        med, outs = interleaved({"closed": cf, "lanczos": lanczos}, rounds=2, reps={"lanczos": 1})
        m, lz = outs["closed"], lz_box["r"]
        lz_mem, _, _ = rss_peak(lambda: lanczos_lmax(hvp, D, steps=3, seed=self.seed))
        hres = hutchinson(hvp, D, n_probes=g.hutch_probes, batch=8, seed=self.seed)
        t_probe = hres.seconds / hres.n_probes
        eps = self.data.get("mpmath", {}).get("closed_rel_err_max") or 1e-13
        eps = max(eps, 1e-16)
        need = {}
        for name, est in (("trace", hres.trace), ("trace_sq", hres.trace_sq)):
            for tgt in (1e-2, 1e-3, eps):
                k = est.probes_for(tgt)
                need[f"{name}@{tgt:.0e}"] = {"probes": k, "seconds": k * t_probe}
        r = {
            "M": M,
            "N": N,
            "n": n,
            "D": D,
            "closed_s": med["closed"],
            "closed_mem_rss_mb": mem_rss / MB,
            "closed_mem_traced_mb": mem_tr / MB,
            "rss_method": how,
            "trace": m.trace,
            "trace_sq": m.trace_sq,
            "lambda_sup": float(m.lambda_sup),
            "lanczos_steps": lz.steps,
            "lanczos_s": med["lanczos"],
            "lanczos_lmax": lz.estimate,
            "lanczos_residual": lz.residual,
            "lanczos_mem_rss_mb": lz_mem / MB,
            "hutch_probes": hres.n_probes,
            "hutch_s_per_probe": t_probe,
            "hutch_trace": [hres.trace.estimate, hres.trace.stderr],
            "hutch_trace_sq": [hres.trace_sq.estimate, hres.trace_sq.stderr],
            "hutch_z_trace": (hres.trace.estimate - m.trace) / hres.trace.stderr,
            "hutch_z_trace_sq": (hres.trace_sq.estimate - m.trace_sq) / hres.trace_sq.stderr,
            "closed_rel_accuracy_used": eps,
            "hutch_probes_needed": need,
            "lanczos_over_closed": med["lanczos"] / med["closed"],
        }
        self.data["mnist"] = r
        label = f"({M}, {N}), n={n}"
        prof = lambda: self.closed(net)()
        if self.quick:
            label += " [quick stand-in for (784, 256), n=10⁴]"
        self._target(f"exact tr H, tr H² under 60 s at {label}", med["closed"], "<=", 60.0, "s", prof)
        self._target(f"peak memory under 2 GB at {label}", max(mem_rss, mem_tr) / GB, "<=", 2.0, "GB", prof)
        self._target(
            f"faster than a {lz.steps}-step Lanczos λ_max at {label}",
            med["lanczos"] / med["closed"],
            ">=",
            1.0,
            "× (Lanczos/closed)",
            prof,
        )
        self.log(f"mnist: closed {med['closed']:.3g}s {mem_rss / MB:.0f} MB, lanczos {med['lanczos']:.3g}s")

    # -- mpmath dps=50 vs float64 ----------------------------------------------------------------------
    def mpmath_section(self):
        import mpmath

        from numerics.ws import ce_hessian_moments

        g = self.grid
        M, N = g.mp_MN
        rows = []
        for n in g.mp_n:
            net = make_net(M, N, n, self.seed)
            t64, m64 = _median_time(
                lambda net=net: ce_hessian_moments(*net, "tanh"), reps=g.reps, min_total=0.2
            )
            tmp, mmp = _median_time(lambda net=net: ce_hessian_moments(*net, "tanh", dps=50), reps=1)
            err = max(
                abs(m64.trace - float(mmp.trace)) / abs(float(mmp.trace)),
                abs(m64.trace_sq - float(mmp.trace_sq)) / float(mmp.trace_sq),
            )
            with mpmath.workdps(50):
                digits = -float(
                    mpmath.log10(
                        max(
                            abs(mpmath.mpf(m64.trace_sq) - mmp.trace_sq) / mmp.trace_sq, mpmath.mpf(10) ** -30
                        )
                    )
                )
            rows.append(
                {
                    "M": M,
                    "N": N,
                    "n": n,
                    "float64_s": t64,
                    "mpmath50_s": tmp,
                    "ratio": tmp / t64,
                    "float64_rel_err": err,
                    "float64_digits": digits,
                }
            )
        self.data["mpmath"] = {
            "rows": rows,
            "closed_rel_err_max": max(r["float64_rel_err"] for r in rows),
            "time_vs_n_mp": fit_exponent([r["n"] for r in rows], [r["mpmath50_s"] for r in rows]),
        }
        self.log(f"mpmath: {rows[-1]['ratio']:.0f}x slower than float64 at n={rows[-1]['n']}")

    # -- flattest outer weights -----------------------------------------------------------------------
    def flatness(self):
        try:
            from numerics.flat import flattest_outer_weights
        except ImportError as exc:
            self.data["flatness"] = {"available": False, "reason": f"numerics.flatness not available: {exc}"}
            return
        g = self.grid
        rows = []
        for act, grid in (("relu", g.flat_lp), ("relu_power:2", g.flat_pc)):
            last = None
            base: dict[str, Any] = {"method": "highs" if act == "relu" else "clarabel", "last": None}
            for n, m in grid:
                rng = np.random.default_rng([self.seed, n, m])
                X = rng.standard_normal((n, g.flat_d))
                Th = rng.standard_normal((m, g.flat_d))
                u = np.eye(g.flat_d)[0]
                y = np.maximum(X @ u, 0) + 0.1 * rng.standard_normal(n)
                row = {"activation": act, "n": n, "m": m, "d": g.flat_d}
                is_target = act == "relu" and (n, m) == (1000, 10000)  # issue 5's LP size always runs
                if last is not None and last[2] > 2.0 and not is_target:  # extrapolate ∝ n·m
                    est = last[2] * (n * m) / (last[0] * last[1])
                    if est > (60 if self.quick else 300):
                        row.update(
                            skipped=True, reason=f"extrapolated {est:.0f} s from ({last[0]}, {last[1]})"
                        )
                        rows.append(row)
                        continue
                limit = 60.0 if self.quick else 240.0
                out = run_with_timeout(_flattest_job, (Th, X, y, act), limit)
                if "timeout" in out:
                    row.update(timed_out=True, reason=f"timed out after {limit:.0f} s (solver still running)")
                elif "error" in out:  # recorded, not fatal: the bench measures, the tests judge
                    row.update(error=out["error"])
                else:
                    row.update(out)
                    last = (n, m, out["seconds"])
                    self._flat_baseline(row, (Th, X, y, act), base, always=is_target)
                rows.append(row)
                self.log(
                    f"flatness {act} n={n} m={m}: {row.get('seconds', row.get('error', '-'))}"
                    f" (baseline {row.get('baseline_solver')}: {row.get('baseline_s', row.get('baseline_reason'))})"
                )
        self.data["flatness"] = {"available": True, "rows": rows}
        if not self.quick:
            big = next(
                (r for r in rows if r["activation"] == "relu" and (r["n"], r["m"]) == (1000, 10000)), None
            )
            lp_rows = [r for r in rows if r["activation"] == "relu" and "seconds" in r]
            scaling = "; LP times: " + ", ".join(
                f"({r['n']}, {r['m']}) {r['seconds']:.1f} s" for r in lp_rows
            )
            name = "flattest LP, n = 10³ and m = 10⁴, under 30 s"
            if big is not None and "seconds" in big:
                rng = np.random.default_rng([self.seed, 1000, 10000])
                X = rng.standard_normal((1000, g.flat_d))
                Th = rng.standard_normal((10000, g.flat_d))
                y = np.maximum(X @ np.eye(g.flat_d)[0], 0) + 0.1 * rng.standard_normal(1000)
                prof = (lambda: flattest_outer_weights(Th, X, y, "relu")) if big["seconds"] < 120 else None
                expl = f"solver {big.get('solver')}" + scaling
                self._target(name, big["seconds"], "<=", 30.0, "s", prof, explanation=expl)
            elif big is not None and big.get("timed_out"):
                self._target(
                    name,
                    240.0,
                    "<=",
                    30.0,
                    "s (lower bound: timed out)",
                    None,
                    explanation="timed out after 240 s" + scaling,
                )
            else:
                self._target(
                    name,
                    None,
                    "<=",
                    30.0,
                    "s",
                    None,
                    skipped="the (10³, 10⁴) LP failed: " + str((big or {}).get("error")),
                )

    def _flat_baseline(self, row: dict[str, Any], args: tuple, base: dict[str, Any], always: bool) -> None:
        """The general-purpose solver a user would reach for (HiGHS / Clarabel) on the same problem.

        Skipped (with the reason) where the previous size already predicts more than the time limit,
        except on the issue's target size, where it always runs, with a longer limit.
        """
        limit = 30.0 if self.quick else (240.0 if always else 120.0)
        n, m = row["n"], row["m"]
        row["baseline_solver"] = "HiGHS (split LP)" if base["method"] == "highs" else "cvxpy + Clarabel"
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

    # -- exact Lipschitz vs brute force --------------------------------------------------------------
    def kinks(self):
        try:
            from numerics.rob import Ball, lipschitz
        except ImportError as exc:
            self.data["kinks"] = {"available": False, "reason": f"numerics.rob not available: {exc}"}
            return
        g = self.grid
        rows = []
        for d in (2, 3):
            for m in sorted(set(g.kink_m) | set(g.brute_m)):
                rng = np.random.default_rng([self.seed, d, m])
                W = rng.standard_normal((m, d))
                b = rng.uniform(-0.8, 0.8, m) * np.linalg.norm(W, axis=1)
                a, v = rng.standard_normal(m), 0.3 * rng.standard_normal(d)
                net = (W, b, a, v, 0.0)
                row = {"d": d, "m": m}
                if m in g.kink_m or m in g.brute_m:
                    t0 = time.perf_counter()
                    L = lipschitz(net, Ball(d, 1.0))
                    row.update(
                        exact_s=time.perf_counter() - t0,
                        cells=L.cells,
                        lip=float(L.upper),
                        exact=bool(L.exact),
                        method=L.method,
                    )
                if m in g.brute_m:
                    t0 = time.perf_counter()
                    lb, feas = brute_force_lipschitz(W, b, a, v)
                    row.update(
                        brute_s=time.perf_counter() - t0,
                        brute_cells=feas,
                        brute_lip=lb,
                        patterns=2**m,
                        agree=abs(lb - row["lip"]) <= 1e-7 * max(1.0, lb),
                    )
                rows.append(row)
            self.log(f"kinks d={d}: done up to m={max(g.kink_m)}")
        fits = {}
        for d in (2, 3):
            ex = [r for r in rows if r["d"] == d and "exact_s" in r and r["m"] >= 8]
            br = [r for r in rows if r["d"] == d and "brute_s" in r and r["m"] >= 4]
            fits[f"d{d}_cells_vs_m"] = fit_exponent([r["m"] for r in ex], [r["cells"] for r in ex])
            fits[f"d{d}_exact_time_vs_m"] = fit_exponent([r["m"] for r in ex], [r["exact_s"] for r in ex])
            fits[f"d{d}_brute_time_per_m"] = (
                float(np.polyfit([r["m"] for r in br], np.log2([r["brute_s"] for r in br]), 1)[0])
                if len(br) >= 2
                else math.nan
            )
        self.data["kinks"] = {
            "available": True,
            "rows": rows,
            "fits": fits,
            "brute_method": "every sign pattern σ ∈ {0,1}^m; cell ∩ open ball nonempty iff the SOCP "
            "max δ s.t. σ-signed (u_j·x − t_j) ≥ δ, ‖x‖ ≤ R has δ* > 0 (cvxpy)",
        }

    def kinks_certified(self):
        from checks import bench_kinks

        self.data["kinks_certified"] = bench_kinks.run(self.seed, quick=self.quick, log=self.log)

    # -- falsification throughput --------------------------------------------------------------------
    def falsify(self):
        try:
            from checks.falsify import falsify
            from checks.ws_properties import bound_property, theorem_bounds_property
        except ImportError as exc:
            self.data["falsify"] = {
                "available": False,
                "reason": f"checks.ws_properties not available: {exc}",
            }
            return
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            for prop, budget in (
                (theorem_bounds_property(), self.grid.falsify_budget[0]),
                (bound_property(), self.grid.falsify_budget[1]),
            ):
                res = falsify(prop, budget=budget, seed=self.seed, out_dir=Path(tmp))
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
                self.log(f"falsify {prop.name}: {res.examples_per_second:.1f} ex/s")
        self.data["falsify"] = {"available": True, "rows": rows}

    # -- whole verify ---------------------------------------------------------------------------------
    def verify(self):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "checks", "verify", "--report-dir", tmp, "--no-progress"],
                capture_output=True,
                text=True,
            )
            t = time.perf_counter() - t0
            slow = []
            with contextlib.suppress(Exception):
                rep = json.loads((Path(tmp) / "verify.json").read_text())
                for c in rep["claims"]:
                    for lvl, ev in c["levels"].items():
                        slow.append({"claim": c["id"], "level": lvl, "seconds": ev.get("seconds", 0.0)})
            slow.sort(key=lambda r: -r["seconds"])
        self.data["verify"] = {
            "seconds": t,
            "returncode": proc.returncode,
            "slowest": slow[:8],
            "stderr_tail": proc.stderr[-500:],
        }
        expl = None
        if t > 300 and slow:
            expl = "slowest claim levels: " + ", ".join(
                f"{r['claim']}/{r['level']} {r['seconds']:.0f}s" for r in slow[:5]
            )
        self._target(
            "whole `python -m checks verify` under 5 minutes", t, "<=", 300.0, "s", None, explanation=expl
        )

    # -- targets --------------------------------------------------------------------------------------
    def _target(
        self,
        name,
        value,
        op,
        threshold,
        unit,
        prof: Callable | None,
        *,
        skipped: str | None = None,
        explanation: str | None = None,
    ):
        if value is None:
            self.targets.append(
                {
                    "section": self.section,
                    "target": name,
                    "value": None,
                    "threshold": threshold,
                    "op": op,
                    "unit": unit,
                    "passed": None,
                    "status": "not run",
                    "reason": skipped,
                }
            )
            return
        ok = value >= threshold if op == ">=" else value <= threshold
        t = {
            "section": self.section,
            "target": name,
            "value": value,
            "threshold": threshold,
            "op": op,
            "unit": unit,
            "passed": bool(ok),
            "status": "hit" if ok else "MISSED",
        }
        if not ok:
            if prof is not None:
                t["profile"] = profile_top(prof)
            if explanation:
                t["explanation"] = explanation
        self.targets.append(t)


def _flattest_job(Th, X, y, act, method="auto"):
    from numerics.flat import flattest_outer_weights

    t0 = time.perf_counter()
    res = flattest_outer_weights(Th, X, y, act, method=method)
    return {
        "seconds": time.perf_counter() - t0,
        "value": res.value,
        "p": res.p,
        "solver": res.solver,
        "rel_gap": res.rel_gap,
        "interp_resid": res.interpolation_residual,
    }


def _child(conn, fn, args):
    try:
        conn.send(fn(*args))
    except Exception as exc:
        conn.send({"error": f"{type(exc).__name__}: {exc}"[:300]})
    conn.close()


def run_with_timeout(fn, args, limit: float) -> dict[str, Any]:
    """fn(*args) in a forked child; {"timeout": limit} if it has not finished after ``limit`` seconds.

    A solver that runs away is stopped (only that child, by its own pid) and recorded as timed out.
    """
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, args), daemon=True)
    proc.start()
    child.close()
    if parent.poll(limit):
        out = parent.recv()
        proc.join()
        return out
    proc.terminate()
    proc.join()
    return {"timeout": limit}


def brute_force_lipschitz(W, b, a, v, R: float = 1.0) -> tuple[float, int]:
    """Max ‖∇f‖ over the sign patterns whose cell meets the open ball B_R, by enumerating all 2^m: the one
    copy of this oracle, :func:`checks.rob_oracles.ball_brute_force` (SOCP per pattern, exact acceptance)."""
    from checks.rob_oracles import ball_brute_force

    bf = ball_brute_force((W, b, a, v, 0.0), R)
    return bf.value, bf.cells


# ----------------------------------------------------------------------------------------------- report
def _fmt(x, unit=""):
    if x is None:
        return "—"
    if isinstance(x, float):
        if x == 0 or (1e-3 <= abs(x) < 1e5):
            return f"{x:.3g}{unit}"
        return f"{x:.2e}{unit}"
    return f"{x}{unit}"


def headline_table(data: dict[str, Any], targets: list[dict[str, Any]]) -> str:
    h, mn = data.get("headline", {}), data.get("mnist", {})
    lines = ["| Comparison | Suite (closed form) | Alternative | Ratio |", "|---|---|---|---|"]
    if h:
        lines.append(
            f"| tr H, tr H², D = {h['D']}, n = {h['n']} | {_fmt(h.get('closed_s_with_dense'), ' s')} | "
            f"dense torch.func "
            f"Hessian + eigvalsh {_fmt(h.get('dense_s'), ' s')} | {_fmt(h.get('ratio'), '×')} |"
        )
        lines.append(
            f"| same, vs roofline ({h.get('gemm_gflops', 0):.1f} GFLOP/s, "
            f"{h.get('triad_gbs', 0):.1f} GB/s) | {_fmt(h['closed_s'], ' s')} | roofline "
            f"{_fmt(h['roofline_s'], ' s')} | {_fmt(h['closed_over_roofline'], '×')} |"
        )
    if mn:
        need = mn["hutch_probes_needed"]
        k3 = need.get("trace_sq@1e-03", {})
        keps = [v for k, v in need.items() if k.startswith("trace_sq@") and not k.endswith(("e-02", "e-03"))]
        lines.append(
            f"| tr H, tr H², ({mn['M']}, {mn['N']}), D = {mn['D']}, n = {mn['n']} | "
            f"{_fmt(mn['closed_s'], ' s')}, {_fmt(mn['closed_mem_rss_mb'] / 1024, ' GB')} | "
            f"{mn['lanczos_steps']}-step Lanczos λ_max {_fmt(mn['lanczos_s'], ' s')} | "
            f"{_fmt(mn['lanczos_over_closed'], '×')} |"
        )
        lines.append(
            f"| same, Hutchinson tr H² at 0.1% rel. stderr | exact (rel. err "
            f"{mn['closed_rel_accuracy_used']:.0e}) | {k3.get('probes', '—')} probes ≈ "
            f"{_fmt(k3.get('seconds'), ' s')} | {_fmt(k3.get('seconds', 0) / mn['closed_s'], '×')} |"
        )
        if keps:
            lines.append(
                f"| same, Hutchinson tr H² at the closed form's accuracy | — | {keps[0]['probes']:.2e} "
                f"probes ≈ {keps[0]['seconds'] / 86400 / 365:.2g} years | — |"
            )
    mp = data.get("mpmath", {}).get("rows")
    if mp:
        r = mp[-1]
        lines.append(
            f"| mpmath dps = 50 vs float64, ({r['M']}, {r['N']}), n = {r['n']} | "
            f"{_fmt(r['float64_s'], ' s')} "
            f"| {_fmt(r['mpmath50_s'], ' s')} | {_fmt(r['ratio'], '×')} slower |"
        )
    fl = data.get("flatness", {})
    if fl.get("available"):
        for act, nm in (("relu", "LP (ReLU, p = 1)"), ("relu_power:2", "power cone (ReLU², p = 4/3)")):
            rr = [r for r in fl["rows"] if r["activation"] == act and "seconds" in r]
            if rr:
                for r in _flat_headline_rows(rr):
                    if "baseline_s" in r:
                        base, ratio = f"{r['baseline_solver']} {_fmt(r['baseline_s'], ' s')}", _fmt(r["speedup"], "×")
                    elif "speedup_lower" in r:  # measured: the baseline ran into the time limit
                        base, ratio = f"{r['baseline_solver']}: {r['baseline_reason']}", f"> {r['speedup_lower']:.0f}×"
                    elif "baseline_reason" in r:
                        base, ratio = f"{r['baseline_solver']}: {r['baseline_reason']}", "—"
                    else:
                        base, ratio = "—", "—"
                    lines.append(
                        f"| flattest outer weights, {nm}, n = {r['n']}, m = {r['m']} | "
                        f"{_fmt(r['seconds'], ' s')} (certified gap {r['rel_gap']:.0e}) | {base} | {ratio} |"
                    )
    kk = data.get("kinks", {})
    if kk.get("available"):
        for d in (2, 3):
            both = [r for r in kk["rows"] if r["d"] == d and "brute_s" in r]
            if both:
                r = both[-1]
                lines.append(
                    f"| exact Lipschitz on B₁ ⊂ R^{d}, m = {r['m']} | "
                    f"{_fmt(r['exact_s'], ' s')}, {r['cells']} "
                    f"cells | brute force over 2^{r['m']} patterns {_fmt(r['brute_s'], ' s')} | "
                    f"{_fmt(r['brute_s'] / r['exact_s'], '×')} |"
                )
    fz = data.get("falsify", {})
    if fz.get("available"):
        for r in fz["rows"]:
            lines.append(
                f"| falsification `{r['property']}` | {r['examples_per_s']:.1f} examples/s | — | — |"
            )
    if "verify" in data:
        lines.append(f"| whole `python -m checks verify` | {_fmt(data['verify']['seconds'], ' s')} | — | — |")
    return "\n".join(lines)


def _flat_headline_rows(rr: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The largest problem, and the largest one on which the baseline also finished (if different)."""
    big = max(rr, key=lambda r: r["n"] * r["m"])
    both = [r for r in rr if "baseline_s" in r]
    if both and max(both, key=lambda r: r["n"] * r["m"]) is not big:
        return [max(both, key=lambda r: r["n"] * r["m"]), big]
    return [big]


def write_report(out: Path, data: dict[str, Any], targets: list[dict[str, Any]]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    payload = {"meta": data.pop("meta"), "targets": targets, **data}
    (out / "bench.json").write_text(json.dumps(payload, indent=2, default=_json_default))
    data["meta"] = payload["meta"]
    md = [
        f"# Benchmarks ({'quick' if data['meta']['quick'] else 'full'} run)",
        "",
        f"Machine: {data['machine']['cpu_count']} cores, load average at start "
        f"{data['machine']['loadavg_start'][0]:.1f} (shared), float64 GEMM "
        f"{data['machine']['gemm_gflops']:.1f} GFLOP/s, triad {data['machine']['triad_gbs']:.1f} GB/s. "
        "All comparisons are medians of interleaved runs within this one run.",
        "",
        "## Headline",
        "",
        headline_table(data, targets),
        "",
        "## Targets (issue 5)",
        "",
        "| Target | Measured | Threshold | Status |",
        "|---|---|---|---|",
    ]
    for t in targets:
        md.append(
            f"| {t['target']} | {_fmt(t['value'])} {t['unit'] if t['value'] is not None else ''} | "
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
                f"| `{p['function']}` | {p['calls']} | {p['own_s']} | {p['share']:.0%} |"
                for p in t.get("profile", [])
            ]
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
            f"| HVP time per probe vs n / vs D | {ex['hvp_time_vs_n']:.2f} / "
            f"{ex['hvp_time_vs_D']:.2f} | 1 / 1 | |",
        ]
        if "dense_time_vs_n" in ex:
            md.append(f"| dense Hessian + eigvalsh time vs n | {ex['dense_time_vs_n']:.2f} | 1 | |")
        if "dense_time_vs_D" in ex:
            md.append(f"| dense Hessian + eigvalsh time vs D | {ex['dense_time_vs_D']:.2f} | 2–3 | |")
        bs = data.get("block_sweep")
        if bs:
            md.append(
                f"| closed-form peak memory vs block (n = {bs['rows'][0]['n']}) | {bs['mem_vs_block']:.2f} "
                "| 2 (block² temporaries) | |"
            )
    for key, title in (("n_sweep", "n sweep"), ("D_sweep", "D sweep")):
        rows = data.get(key, {}).get("rows", [])
        if not rows:
            continue
        md += [
            "",
            f"## {title}: (a) closed form, (b) dense, (c) HVP estimators",
            "",
            "| M | N | D | n | (a) s | (a) MB traced | (b) s | (b)/(a) | (b) MB RSS | HVP s/probe | "
            "rel. err tr H² (a vs b) | note |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            md.append(
                f"| {r['M']} | {r['N']} | {r['D']} | {r['n']} | {_fmt(r['closed_s'])} | "
                f"{_fmt(r['closed_mem_traced_mb'])} | {_fmt(r.get('dense_s'))} | "
                f"{_fmt(r.get('ratio_dense_over_closed'))} | {_fmt(r.get('dense_mem_rss_mb'))} | "
                f"{_fmt(r['hvp_s_per_probe'])} | {_fmt(r.get('rel_err_trace_sq'))} | "
                f"{'' if r['dense_plan']['run'] else 'dense skipped: ' + r['dense_plan']['reason']} |"
            )
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
            f"(**{h['closed_over_roofline']:.2f}×** the roofline, "
            f"{h['achieved_gflops']:.1f} GFLOP/s achieved).",
            "",
            "Profile of one call:",
            "",
            "| function | calls | own s | share |",
            "|---|---|---|---|",
        ]
        md += [
            f"| `{p['function']}` | {p['calls']} | {p['own_s']} | {p['share']:.0%} |" for p in h["profile"]
        ]
    mn = data.get("mnist")
    if mn:
        md += [
            "",
            f"## MNIST-sized: ({mn['M']}, {mn['N']}), D = {mn['D']}, n = {mn['n']}",
            "",
            f"Closed form {mn['closed_s']:.3g} s, peak RSS growth {mn['closed_mem_rss_mb']:.0f} MB "
            f"({mn['rss_method']}), tracemalloc peak {mn['closed_mem_traced_mb']:.0f} MB; "
            f"{mn['lanczos_steps']}-step Lanczos {mn['lanczos_s']:.3g} s (λ_max ≈ {mn['lanczos_lmax']:.6g}, "
            f"residual {mn['lanczos_residual']:.1e}; λ_sup = {mn['lambda_sup']:.6g}). Hutchinson: "
            f"{mn['hutch_s_per_probe']:.3g} s/probe; with {mn['hutch_probes']} probes tr H is "
            f"{mn['hutch_z_trace']:+.2f} stderr and tr H² {mn['hutch_z_trace_sq']:+.2f} stderr "
            "from the exact value.",
            "",
            "| Hutchinson target (rel. stderr) | probes | seconds |",
            "|---|---|---|",
        ]
        md += [
            f"| {k} | {v['probes']:.3g} | {v['seconds']:.3g} |" for k, v in mn["hutch_probes_needed"].items()
        ]
    for key, title, cols in (
        ("mpmath", "mpmath dps = 50 vs float64", ("n", "float64_s", "mpmath50_s", "ratio", "float64_digits")),
        (
            "block_sweep",
            "Block size (memory O(block²) + O(n(M+N)))",
            ("block", "n", "closed_s", "mem_traced_mb"),
        ),
        (
            "flatness",
            "Flattest outer weights",
            ("activation", "n", "m", "seconds", "rel_gap", "solver", "baseline_solver", "baseline_s", "speedup",
             "speedup_lower", "baseline_value_rel_diff", "baseline_reason", "reason", "error"),
        ),
        (
            "kinks",
            "Exact Lipschitz (ball) vs brute force",
            ("d", "m", "cells", "exact_s", "brute_cells", "brute_s", "agree"),
        ),
        ("falsify", "Falsification throughput", ("property", "examples", "seconds", "examples_per_s")),
    ):
        sec = data.get(key)
        if not sec:
            continue
        md += ["", f"## {title}", ""]
        if sec.get("available") is False:
            md.append(f"Not available: {sec['reason']}")
            continue
        md += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        md += ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in sec["rows"]]
    if "verify" in data:
        v = data["verify"]
        md += [
            "",
            "## Whole verify",
            "",
            f"{v['seconds']:.0f} s (return code {v['returncode']}); slowest: "
            + ", ".join(f"{r['claim']}/{r['level']} {r['seconds']:.0f} s" for r in v["slowest"][:5]),
        ]
    from checks import bench_kinks

    md.append(bench_kinks.markdown(data.get("kinks_certified", {})))
    (out / "bench.md").write_text("\n".join(md) + "\n")


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


def plots(out: Path, data: dict[str, Any]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig_dir = out / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
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
            ax1.loglog(
                [r[xkey] for r in dn], [r["dense_s"] for r in dn], "s-", label="(b) dense Hessian + eigvalsh"
            )
        ax1.loglog(
            x, [r["hvp_s_per_probe"] for r in rows], "^--", label="(c) one HVP (per probe / Lanczos step)"
        )
        ax1.set(xlabel=xlabel, ylabel="seconds", title=f"time, {key.replace('_', ' ')}")
        ax1.legend(fontsize=7)
        ax2.loglog(x, [r["closed_mem_traced_mb"] for r in rows], "o-", label="(a) tracemalloc peak")
        if dn:
            ax2.loglog(
                [r[xkey] for r in dn],
                [max(r["dense_mem_rss_mb"], 1e-3) for r in dn],
                "s-",
                label="(b) RSS peak growth",
            )
        ax2.set(xlabel=xlabel, ylabel="MB", title="peak memory")
        ax2.legend(fontsize=7)
        fig.tight_layout()
        p = fig_dir / f"bench_{key}.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(str(p))
    fl = data.get("flatness", {})
    if fl.get("available"):
        fig, ax = plt.subplots(figsize=(5, 4))
        for act in ("relu", "relu_power:2"):
            rr = [r for r in fl["rows"] if r["activation"] == act and "seconds" in r]
            if rr:
                ax.loglog([r["n"] * r["m"] for r in rr], [r["seconds"] for r in rr], "o-", label=f"{act}: ours")
                bb = [r for r in rr if "baseline_s" in r]
                if bb:
                    line = ax.loglog([r["n"] * r["m"] for r in bb], [r["baseline_s"] for r in bb], "x--",
                                     label=f"{act}: {bb[0]['baseline_solver']}")[0]
                    to = [r for r in rr if "speedup_lower" in r]  # timed out: the limit is a lower bound
                    if to:
                        ax.loglog([r["n"] * r["m"] for r in to], [r["speedup_lower"] * r["seconds"] for r in to],
                                  "^", color=line.get_color(), label=f"{act}: baseline timed out (≥)")
        ax.set(xlabel="n·m", ylabel="seconds", title="flattest outer weights")
        ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        p = fig_dir / "bench_flatness.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(str(p))
    kk = data.get("kinks", {})
    if kk.get("available"):
        fig, ax = plt.subplots(figsize=(5, 4))
        for d in (2, 3):
            ex = [r for r in kk["rows"] if r["d"] == d and "exact_s" in r]
            br = [r for r in kk["rows"] if r["d"] == d and "brute_s" in r]
            ax.loglog([r["m"] for r in ex], [r["exact_s"] for r in ex], "o-", label=f"exact, d={d}")
            ax.loglog([r["m"] for r in br], [r["brute_s"] for r in br], "x--", label=f"brute 2^m, d={d}")
        ax.set(xlabel="m (units)", ylabel="seconds", title="Lipschitz constant on the ball")
        ax.legend(fontsize=7)
        fig.tight_layout()
        p = fig_dir / "bench_kinks.png"
        fig.savefig(p, dpi=110)
        plt.close(fig)
        written.append(str(p))
    return written


# ------------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m checks.bench", description=__doc__.splitlines()[0])
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
    ap.add_argument("--render-only", action="store_true", help="rewrite bench.md and plots from bench.json")
    ap.add_argument(
        "--merge",
        action="store_true",
        help="with --only: replace just these sections (and their targets) in an existing bench.json",
    )
    args = ap.parse_args(argv)
    if args.render_only:
        payload = json.loads((args.out / "bench.json").read_text())
        targets = payload.pop("targets")
        payload["figures"] = plots(args.out, payload)
        write_report(args.out, payload, targets)
        return 0

    import torch

    threads_before = torch.get_num_threads()
    try:
        return _run(args)
    finally:  # a caller's process (e.g. pytest) gets its thread counts back
        set_threads(threads_before)


def _run(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    console = Console(stderr=True)
    g = QUICK if args.quick else FULL
    b = Bench(
        g,
        args.quick,
        args.out,
        args.dense_mem_gb * GB,
        args.dense_time_s if args.dense_time_s is not None else (5.0 if args.quick else 180.0),
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
        ("mpmath", b.mpmath_section),
        ("n_sweep", lambda: b.sweep("n_sweep", n_cases)),
        ("D_sweep", lambda: b.sweep("D_sweep", D_cases)),
        ("fits", b.fits),
        ("block_sweep", b.block_sweep),
        ("headline", b.headline),
        ("mnist", b.mnist),
        ("flatness", b.flatness),
        ("kinks", b.kinks),
        ("kinks_certified", b.kinks_certified),
        ("falsify", b.falsify),
    ]
    if args.with_verify:
        sections.append(("verify", b.verify))
    if args.only:
        keep = set(args.only) | {"machine"}
        sections = [s for s in sections if s[0] in keep]
    if args.merge and args.only and (args.out / "bench.json").exists():
        prior = json.loads((args.out / "bench.json").read_text())
        for k, v in prior.items():  # later sections (fits, headline) read earlier ones
            if k not in ("meta", "targets", "machine", "errors") and k not in b.data:
                b.data[k] = v
    b.ran = tuple(name for name, _ in sections)
    t_all = time.perf_counter()
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
            try:
                fn()
            except Exception as exc:  # one broken section must not lose the others' numbers
                b.data.setdefault("errors", {})[name] = f"{type(exc).__name__}: {exc}"
                prog.console.log(f"[red]{name} failed: {type(exc).__name__}: {exc}")
            b.data.setdefault("section_seconds", {})[name] = time.perf_counter() - t0
            prog.advance(task)
    b.data["meta"]["seconds"] = time.perf_counter() - t_all
    b.data["meta"]["loadavg_end"] = os.getloadavg()
    if args.merge and args.only and (args.out / "bench.json").exists():
        old = json.loads((args.out / "bench.json").read_text())
        ran = {name for name, _ in sections}
        fresh = {t["target"][:25] for t in b.targets}
        old_targets = [
            t for t in old.pop("targets") if t.get("section") not in ran and t["target"][:25] not in fresh
        ]
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
    table = Table(title="issue 5 targets")
    for col in ("target", "measured", "threshold", "status"):
        table.add_column(col)
    for t in b.targets:
        table.add_row(t["target"], _fmt(t["value"]), f"{t['op']} {t['threshold']} {t['unit']}", t["status"])
    console.print(table)
    console.print(
        f"wrote {args.out / 'bench.json'}, {args.out / 'bench.md'} in {b.data['meta']['seconds']:.0f} s"
    )
    return 1 if b.data.get("errors") else 0


if __name__ == "__main__":
    sys.exit(main())
