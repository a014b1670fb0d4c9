"""Timing for the bench: interleaved and paired runs, ratio summaries, log-log fits
(:mod:`checks.runners.bench.harness`)."""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np


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


def _child_loop(conn, fn, args, threads):
    """The child of :class:`ChildCall`: on each "run", fn(*args) timed here (wall and CPU), sent back."""
    if threads is not None:
        from checks.runners.bench.resources import set_threads

        set_threads(threads)
    while True:
        msg = conn.recv()
        if msg != "run":
            return
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            val = fn(*args)
        except Exception as exc:  # noqa: BLE001 - sent back and raised in the parent
            conn.send((False, f"{type(exc).__name__}: {exc}", 0.0, 0.0))
            continue
        conn.send((True, val, time.perf_counter() - t0, time.process_time() - c0))


class ChildCall:
    """fn(*args) run and timed in a separate (spawned) process, for a peer whose large allocations would otherwise
    disturb the other contender's timing in an interleaved pair (glibc hands the freed pages back and the next call
    of the other contender faults them in again). ``times`` holds the last call's (wall, CPU) seconds as measured
    in the child, which :func:`paired` uses instead of its own clock (that would add the pipe's round trip and see
    no CPU time). fn and args must pickle. ``close()`` ends the child (also on garbage collection)."""

    def __init__(self, fn: Callable[..., Any], *args: Any, threads: int | None = None):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_child_loop, args=(child, fn, args, threads), daemon=True)
        self._proc.start()
        child.close()
        self.times: tuple[float, float] | None = None

    def __call__(self) -> Any:
        self._conn.send("run")
        ok, val, wall, cpu = self._conn.recv()
        if not ok:
            raise RuntimeError(f"in the child process: {val}")
        self.times = (wall, cpu)
        return val

    def close(self) -> None:
        if self._proc.is_alive():
            try:
                self._conn.send("stop")
            except (BrokenPipeError, OSError):
                pass
            self._proc.join(timeout=10)
            if self._proc.is_alive():
                self._proc.kill()
        self._conn.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


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

    ``deadline`` (a ``time.perf_counter`` value): no new round starts after it (at least one always runs). A
    contender that is a :class:`ChildCall` runs in its own process and is timed there.
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
                if isinstance(fn, ChildCall):       # timed where it ran, without the pipe
                    got[name] = fn.times
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


def fit_exponent(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


