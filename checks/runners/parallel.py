"""Claim levels in worker processes, for ``verify --jobs K`` (one machine; campaigns that outgrow it use Dask).

Every level is independent by construction: it draws its randomness from ``Context.rng(salt)`` and its
Hypothesis seeds from (seed, salt), and writes only its own figures and reproducers. So the evidence of a
level does not depend on which process runs it or when, and the report (built in spec order from the
collected evidence) is the same for every K; ``tests/test_cli.py`` checks that byte for byte.

Scheduling is longest-first, by the level's time in the last report of the same kind when there is one
(``verify.json`` or ``verify-quick.json``), else the heaviest levels of a full run (:data:`_KNOWN`), then E and F
levels. Workers are forked once, before the
caller starts any thread, and run many levels each. A worker that dies (killed, out of memory) fails only
the levels it held, each with an error naming the cause; everything already finished is kept.
"""

from __future__ import annotations

import json
import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from checks.evidence.outcome import Evidence

_GUESS = {"E": 4.0, "F": 2.0, "S": 1.5, "P": 1.0, "A": 1.0}  # seconds, when no earlier report says
# The heaviest levels of a full run (seconds, this 2-core machine, 2026-12-06), so that a fresh clone, with no report
# yet, starts them first: without it suite.controls F ran last and alone for ~170 s of an 18-min run.
_KNOWN = {("rob.structured", "E"): 450.0, ("suite.controls", "F"): 340.0, ("flat.near_flattest", "E"): 330.0,
          ("rob.low_width", "E"): 175.0, ("rob.law", "E"): 125.0, ("rob.sharpness", "E"): 60.0,
          ("rob.low_width", "P"): 55.0, ("rob.width_one", "E"): 45.0}


def _history(path: Path | None) -> dict[tuple[str, str], float]:
    if path is None or not path.is_file():
        return {}
    try:
        rep = json.loads(path.read_text())
        return {(c["id"], lv): float(v.get("timing", {}).get("seconds", 0.0))
                for c in rep.get("claims", []) for lv, v in c.get("levels", {}).items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return {}  # an unreadable old report only costs the schedule, never the run


def _run_one(cid: str, lv: str, ctx_args: dict[str, Any], log: Callable[[str], None] | None) -> Evidence:
    from checks.evidence.registry import Context, get

    return get(cid).run(lv, Context(**ctx_args, log=log))


def _stderr_line(s: str) -> None:
    import sys

    print(s, file=sys.stderr, flush=True)


class LevelPool:
    """Submits every (claim, level) job at construction (the fork happens here) and collects them in
    :meth:`collect`, returning the evidence in the order of ``jobs``."""

    def __init__(self, jobs: Sequence[tuple[Any, str]], ctx_args: dict[str, Any], n_jobs: int, *,
                 log: Callable[[str], None] | None = None, history: Path | None = None):
        self.jobs = list(jobs)
        seen = _history(history)
        order = sorted(range(len(self.jobs)), key=lambda i: (
            -seen.get((self.jobs[i][0].id, self.jobs[i][1]),
                      _KNOWN.get((self.jobs[i][0].id, self.jobs[i][1]), _GUESS.get(self.jobs[i][1], 1.0))), i))
        # fork: the parent has loaded the claims but started no thread and no torch/OpenMP pool yet; every
        # worker inherits the same Hypothesis constant pool (see checks.runners.falsify.preload_local_modules)
        from checks.runners.falsify import preload_local_modules

        preload_local_modules()
        self.pool = ProcessPoolExecutor(max_workers=n_jobs, mp_context=multiprocessing.get_context("fork"))
        worker_log = _stderr_line if log is not None else None
        self.futures: dict[Future, int] = {}
        for i in order:
            c, lv = self.jobs[i]
            self.futures[self.pool.submit(_run_one, c.id, lv, dict(ctx_args), worker_log)] = i
        self.t_submit = {i: time.perf_counter() for i in order}

    def collect(self, done: Callable[[int, Evidence], None], beat=None) -> list[Evidence]:
        out: list[Evidence | None] = [None] * len(self.jobs)
        pending = set(self.futures)
        n_done, label = 0, None
        try:
            while pending:
                finished, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                for fut in finished:
                    i = self.futures[fut]
                    c, lv = self.jobs[i]
                    try:
                        ev = fut.result()
                    except BrokenProcessPool as exc:
                        ev = Evidence(c.id, lv, False, {}, f"error: the worker process died ({exc})",
                                      time.perf_counter() - self.t_submit[i], error=f"BrokenProcessPool: {exc}",
                                      verdict="error")
                    except Exception as exc:  # pickling trouble and the like: that level fails, others go on
                        ev = Evidence(c.id, lv, False, {}, f"error: {type(exc).__name__}: {exc}",
                                      time.perf_counter() - self.t_submit[i],
                                      error=f"{type(exc).__name__}: {exc}", verdict="error")
                    out[i] = ev
                    n_done += 1
                    done(n_done, ev)
                if beat is not None:
                    running = [f"{self.jobs[self.futures[f]][0].id} {self.jobs[self.futures[f]][1]}"
                               for f in pending if f.running()]
                    # Future.running() is also true for a level handed to a worker's queue, not yet started
                    now = f"in the workers' hands: {', '.join(sorted(running))};" if running else ""
                    if now != label:  # the heartbeat's clock restarts only when the running set changes
                        beat.start(now)
                        label = now
        except BaseException:
            self.pool.shutdown(wait=False, cancel_futures=True)
            raise
        if beat is not None:
            beat.start("")
        self.pool.shutdown(wait=True)
        return [ev for ev in out if ev is not None]
