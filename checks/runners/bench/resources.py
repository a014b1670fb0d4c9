"""Memory, profiles, threads and time limits for the bench: peak RSS, tracemalloc peaks, cProfile tops, a child process
with a timeout (see :mod:`checks.runners.bench.harness`)."""

from __future__ import annotations

import contextlib
import cProfile
import io
import pstats
import resource
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

GB = 1024**3
MB = 1024**2


# ------------------------------------------------------------------------------------------------ config
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


@contextlib.contextmanager
def kept_threads():
    """Whatever :func:`set_threads` does inside, the process gets its torch thread count (and OpenBLAS's, set to
    the same) back on exit."""
    import torch

    before = torch.get_num_threads()
    try:
        yield
    finally:
        set_threads(before)


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
