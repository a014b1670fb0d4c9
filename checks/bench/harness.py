"""``nox -s bench``: the suite's speed and memory against the ways people compute these numbers today.

``python -m checks.bench [--quick] [--out reports] [--with-verify]`` writes ``<out>/bench.json``,
``<out>/bench.md`` and log-log plots ``<out>/figures/bench_*.png`` (issue 5).

Method
------
* **Ratios within one run.** The machine is shared, so absolute times drift. Every comparison runs its
  contenders *interleaved* (round-robin, several rounds). The peer tables (issue 14) use :func:`paired`: each
  round runs the closed form and one peer back to back (order alternating), the ratio of that pair is one
  sample, and the report gives the median per-pair ratio with its min–max, the CPU-time ratio beside the wall
  one, and the load average; a spread max/min above ``SPREAD_MAX`` is reported as "no headline".
* **Peers** (:mod:`~checks.bench.peers`, extra ``bench``): curvlinops, BackPACK, PyHessian, each checked against
  the closed form in ``tests/test_bench_peers.py``; sections ``peers`` and ``mnist`` (:mod:`~checks.bench.ws_peers`).
* **Time budget** (``--budget``, 840 s full, 170 s quick): a section that would start after it is skipped with
  the reason; the certified-Lipschitz grid scales its time limits to its share; the report lists each
  section's cost.
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
``harness`` (this module: grids, timing and memory helpers, the run's state and targets, plotting style,
the command line and the run loop), one module per paper (``ws``, ``flat``, ``rob``: their sections and
plots) and ``report`` (``bench.json`` and the per-section writers of ``bench.md``).
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
    # (10³, 3·10³) and (10³, 10³) are left out: there the general solvers take 40 to 60 s each, and the target
    # size's race (flat.LP_RACE) needs the section's time
    flat_lp=((100, 1000), (300, 3000), (1000, 10000)),
    flat_pc=((100, 1000), (300, 3000), (1000, 3000), (1000, 10000)),
    flat_d=20,
    kink_m=(2, 4, 8, 16, 32, 64, 128),
    brute_m=(2, 4, 6, 8, 10),  # 2^12 SOCPs per d would be a minute of the 15-minute run
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
def median_time(fn: Callable[[], Any], *, reps: int, min_total: float = 0.0) -> tuple[float, Any]:
    ts, out = [], None
    t_start = time.perf_counter()
    while len(ts) < reps or (time.perf_counter() - t_start < min_total and len(ts) < 50):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def round_robin(
    fns: dict[str, Callable[[], Any]], *, rounds: int, reps: dict[str, int] | None = None
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Wall time of every round per contender, measured round-robin (``reps[name]`` rounds at most), and the last
    outputs."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    outs: dict[str, Any] = {}
    for r in range(rounds):
        for k, f in fns.items():
            if reps and r >= reps.get(k, rounds):
                continue
            t0 = time.perf_counter()
            outs[k] = f()
            times[k].append(time.perf_counter() - t0)
    return times, outs


def interleaved(
    fns: dict[str, Callable[[], Any]], *, rounds: int, reps: dict[str, int] | None = None
) -> tuple[dict[str, float], dict[str, Any]]:
    """Median wall time per contender, measured round-robin (:func:`round_robin`)."""
    times, outs = round_robin(fns, rounds=rounds, reps=reps)
    return {k: statistics.median(v) for k, v in times.items()}, outs


# A median of per-pair ratios is a headline only when the pairs agree this well: max/min of the per-pair ratios.
# On this 2-core machine shared by several jobs, single timings move by 1.5× between neighbours (issue 14: the
# headline moved from 115× to 59× between runs); a factor of 2 between the extreme pairs means the load, not the
# code, set the number.
SPREAD_MAX = 2.0


def paired(
    base: Callable[[], Any],
    others: dict[str, Callable[[], Any]],
    *,
    rounds: int,
    deadline: float | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Per-pair ratios t(other)/t(base): each round runs, for every contender, the base and the contender back to
    back (the order alternates between rounds, so neither always runs on a warmer cache), and the ratio of that
    pair is one sample. Returns ({name: summary}, {name: last output, "base": ...}); each summary has the median,
    min and max ratio, the median wall and CPU times, the load average before and after, and ``headline``: False
    with the reason when the spread max/min exceeds ``SPREAD_MAX`` or fewer than 2 pairs ran.

    ``deadline`` (a ``time.perf_counter`` value): no new round starts after it (at least one always runs).
    """
    outs: dict[str, Any] = {}
    rec: dict[str, dict[str, list[float]]] = {k: {"r": [], "t": [], "c": [], "tb": [], "rc": []} for k in others}
    load0 = os.getloadavg()
    for r in range(rounds):
        if r and deadline is not None and time.perf_counter() > deadline:
            break
        for k, f in others.items():
            pair = [("base", base), (k, f)] if r % 2 == 0 else [(k, f), ("base", base)]
            got = {}
            for name, fn in pair:
                t0, c0 = time.perf_counter(), time.process_time()
                outs[name] = fn()
                got[name] = (time.perf_counter() - t0, time.process_time() - c0)
            rec[k]["r"].append(got[k][0] / got["base"][0])
            rec[k]["rc"].append(got[k][1] / max(got["base"][1], 1e-9))
            rec[k]["t"].append(got[k][0])
            rec[k]["c"].append(got[k][1])
            rec[k]["tb"].append(got["base"][0])
    load1 = os.getloadavg()
    summ = {}
    for k, v in rec.items():
        summ[k] = ratio_summary(v["r"], v["rc"], load=(load0[0], load1[0]),
                                one="one pair only (the section's time budget ran out after the first round)")
        summ[k].update(seconds_median=statistics.median(v["t"]), cpu_seconds_median=statistics.median(v["c"]),
                       base_seconds_median=statistics.median(v["tb"]))
    return summ, outs


def ratio_summary(rs, rc=None, *, load=(None, None), one: str, what: str = "pair") -> dict[str, Any]:
    """The summary of per-pair (or per-round) ratios every ratio in bench.md is printed from: median, min, max,
    count, spread, the CPU-time ratios ``rc`` beside them, the load before/after, and ``headline`` False with
    ``why_no_headline`` (``one`` for a single ratio) when fewer than 2 ran or the spread exceeds ``SPREAD_MAX``."""
    spread = max(rs) / min(rs)
    s: dict[str, Any] = {"ratio_median": statistics.median(rs), "ratio_min": min(rs), "ratio_max": max(rs),
                         "pairs": len(rs), "spread": spread}
    if rc is not None:
        s.update(cpu_ratio_median=statistics.median(rc), cpu_ratio_min=min(rc), cpu_ratio_max=max(rc))
    s.update(load_before=load[0], load_after=load[1], headline=len(rs) >= 2 and spread <= SPREAD_MAX)
    if len(rs) < 2:
        s["why_no_headline"] = one
    elif spread > SPREAD_MAX:
        s["why_no_headline"] = f"per-{what} ratios spread {spread:.2f}× > {SPREAD_MAX}×: the load set the number"
    return s


def ratio_text(s: dict[str, Any]) -> str:
    """'42× (38–47×, 5 pairs)', or the same with 'no headline: ...' when the spread is too wide."""
    txt = f"{s['ratio_median']:.3g}× ({s['ratio_min']:.3g}–{s['ratio_max']:.3g}×, {s['pairs']} pairs)"
    if "cpu_ratio_median" in s:
        txt += f"; CPU time {s['cpu_ratio_median']:.3g}× ({s['cpu_ratio_min']:.3g}–{s['cpu_ratio_max']:.3g}×)"
    return txt if s["headline"] else f"{txt}; no headline: {s['why_no_headline']}"


def fit_power(x, y) -> dict[str, Any]:
    """Least-squares slope of log y on log x with its standard error and residual; ``verdict`` is "noise" when the
    slope is within 2 standard errors of 0 or the fit explains less than 90% of the variance (r² < 0.9), else
    "measured"."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0)
    lx, ly = np.log(x[ok]), np.log(y[ok])
    k = int(ok.sum())
    if k < 2:
        return {"slope": math.nan, "points": k, "verdict": "too few points"}
    (slope, icpt) = np.polyfit(lx, ly, 1)
    resid = ly - (slope * lx + icpt)
    ss_res, ss_tot = float(resid @ resid), float(((ly - ly.mean()) ** 2).sum())
    se = math.sqrt(ss_res / (k - 2) / float(((lx - lx.mean()) ** 2).sum())) if k > 2 else math.nan
    r2 = 1 - ss_res / ss_tot if ss_tot > 0 else 0.0
    out = {
        "slope": float(slope),
        "se": se,
        "r2": r2,
        "rms_log_resid": math.sqrt(ss_res / k),
        "points": k,
    }
    noise = r2 < 0.9 or (not math.isnan(se) and abs(slope) < 2 * se)
    out["verdict"] = "noise" if noise else ("measured" if k > 2 else "two points (no residual)")
    return out


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


def _child(conn, fn, args):
    try:
        conn.send(fn(*args))
    except Exception as exc:
        conn.send({"error": f"{type(exc).__name__}: {exc}"[:300]})
    conn.close()


# ------------------------------------------------------------------------------------- the run's state
@dataclass
class Bench:
    """What every section reads (grid, budgets, seed) and writes (``data``, ``targets``)."""

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
    deadline: float = math.inf  # time.perf_counter() value after which sections stop starting new rows
    reuse_mnist_closed: bool = False  # with --merge: the mnist section keeps the earlier run's closed-form row
    only: tuple[str, ...] | None = None  # --only: the sections asked for by name

    def out_of_time(self, need: float = 0.0) -> bool:
        """True when ``need`` more seconds would pass the run's time budget."""
        return time.perf_counter() + need > self.deadline

    def seconds_left(self, *, floor: float = 0.0, cap: float = math.inf) -> float:
        """What is left of the run's time budget, clamped to [floor, cap] (inf without a budget, then cap)."""
        return max(floor, min(cap, self.deadline - time.perf_counter()))

    # -- machine ------------------------------------------------------------------------------------
    def machine(self):
        import torch

        rng = np.random.default_rng(0)
        s = 768 if self.quick else 2048
        A, B = rng.random((s, s)), rng.random((s, s))
        t, _ = median_time(lambda: A @ B, reps=3)
        gemm = 2 * s**3 / t
        big = rng.random((16 if self.quick else 32) * MB // 8)
        outb = np.empty_like(big)
        tb, _ = median_time(lambda: np.add(big, big, out=outb), reps=5)
        bw = 3 * big.nbytes / tb
        d_e = 300 if self.quick else 800
        S = rng.random((d_e, d_e))
        S = torch.as_tensor(S + S.T)
        te, _ = median_time(lambda: torch.linalg.eigvalsh(S), reps=3)
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
                        secs = ev.get("timing", {}).get("seconds", 0.0)
                        slow.append({"claim": c["id"], "level": lvl, "seconds": secs})
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
        self.target("whole `python -m checks verify` under 5 minutes", t, "<=", 300.0, "s", None, explanation=expl)

    # -- targets --------------------------------------------------------------------------------------
    def target(
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


# ---------------------------------------------------------------------------------------------- output
def fmt(x, unit=""):
    if x is None:
        return "—"
    if isinstance(x, float):
        if x == 0 or (1e-3 <= abs(x) < 1e5):
            return f"{x:.3g}{unit}"
        return f"{x:.2e}{unit}"
    return f"{x}{unit}"


def pyplot():
    """matplotlib.pyplot on the Agg backend (the bench writes files only)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure_dir(out: Path) -> Path:
    fig_dir = out / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    return fig_dir


def save_figure(fig, out: Path, name: str) -> str:
    """Lay out, write ``<out>/figures/bench_<name>.png`` (dpi 110) and close; returns the path."""
    fig.tight_layout()
    p = figure_dir(out) / f"bench_{name}.png"
    fig.savefig(p, dpi=110)
    pyplot().close(fig)
    return str(p)


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
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="time budget in s for the whole run (default 840 full, 170 quick): a section that would start after it "
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
        from checks.bench.report import plots, write_report

        payload = json.loads((args.out / "bench.json").read_text())
        targets = payload.pop("targets")
        payload["figures"] = plots(args.out, payload)
        write_report(args.out, payload, targets)
        if args.readme:
            from checks.bench.report import write_readme

            write_readme(payload, targets)
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

    from checks.bench import flat, rob, ws, ws_peers  # the paper modules import this one
    from checks.bench.report import plots, write_report

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
        ("flatness", lambda: flat.flattest_section(b)),
        ("kinks", lambda: rob.lipschitz_section(b)),
        ("kinks_certified", lambda: rob.certified_section(b)),
        ("lipschitz_peers", lambda: rob.peers_section(b)),
        ("falsify", lambda: ws.falsify_section(b)),
        ("mnist_1pct", lambda: ws_peers.mnist_1pct_section(b)),  # last: on what the budget has left
    ]
    if args.with_verify:
        sections.append(("verify", b.verify))
    if (args.out / "bench.json").exists() and not args.quick:  # a long measurement a later run may keep
        old_1pct = json.loads((args.out / "bench.json").read_text()).get("mnist_1pct")
        if old_1pct:
            b.data["prior_mnist_1pct"] = old_1pct
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
    budget = args.budget if args.budget is not None else (170.0 if args.quick else 840.0)
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
    table = Table(title="issue 5 targets")
    for col in ("target", "measured", "threshold", "status"):
        table.add_column(col)
    for t in b.targets:
        table.add_row(t["target"], fmt(t["value"]), f"{t['op']} {t['threshold']} {t['unit']}", t["status"])
    console.print(table)
    console.print(f"wrote {args.out / 'bench.json'}, {args.out / 'bench.md'} in {b.data['meta']['seconds']:.0f} s")
    return 1 if b.data.get("errors") else 0
