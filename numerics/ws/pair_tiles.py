"""Sample-pair sums in tiles: in this process, or as Dask tasks with a journal that survives a kill.

Every pair sum of the moments (binary ``ce_hessian_moments``, ``softmax_hessian_moments``, ``deep_hessian_moments``)
is Σ over the upper triangle of (I, J) *tiles*: blocks of ``block`` samples with I ≤ J. A prepared pair sum (a
:class:`PairTiles`) gives each tile's value as a tuple of numbers, a function of the slices of its precomputed
per-sample arrays alone. The total is reduced per component by :func:`math.fsum` over every tile's value, which
is the correctly rounded sum of those values whatever their order. Hence:

* the result is **bit-identical for any worker count, any grouping of tiles into tasks and any completion
  order**, as long as each tile's value is (the tile computations are the same code on the same bytes; the test
  suite runs 1 and 2 Dask workers and this process with two BLAS threads and compares the bits);
* a **journal** (one JSON file per finished task, values as ``float.hex``) keeps every finished task; ``resume``
  reads it back and submits only the missing tasks; a worker killed mid-task loses only that task, which the
  scheduler runs again;
* a **progress line** reports tiles done, elapsed time and the time left (from the mean task rate so far).

Workers rebuild the prepared sum from a :class:`Recipe` (a module-level builder and its arguments, scattered to
every worker once) and keep one built problem per process, so a task's payload is only its list of tiles.

Example (in this process; ``TileRunner.local(2)`` for a local Dask cluster)::

    >>> import numpy as np
    >>> from numerics.ws import ce_hessian_moments
    >>> from numerics.ws.pair_tiles import TileRunner
    >>> rng = np.random.default_rng(0)
    >>> W, b, v, X = rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=4), rng.normal(size=(50, 3))
    >>> y = rng.integers(0, 2, 50)
    >>> a = ce_hessian_moments(W, b, v, 0.1, X, y, block=8)
    >>> b_ = ce_hessian_moments(W, b, v, 0.1, X, y, block=8, tiles=TileRunner(tiles_per_task=3))
    >>> a.trace_sq == b_.trace_sq
    True
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from numerics.cluster import atomic_write, connect_client, local_cluster, restore_environ, worker_address

__all__ = ["TILE_REVISION", "PairTiles", "ProgressLine", "Recipe", "TileRunner", "fingerprint", "forget_built", "plan",
           "run_task", "tiles_of", "reduce_values"]

TILE_REVISION = 2
"""Raised with any change to a tile's arithmetic: it is part of every journal's key, so a journal written by older
tile code is never resumed. 2: the softmax cross term read off the Gauss–Newton block's diagonal."""

TASK_FLOPS = 4e9
"""Default work per Dask task (≈ 1 s of one core): tasks stay long against Dask's ~1 ms overhead per task and
short against a killed worker's loss."""


class PairTiles(Protocol):
    """A prepared pair sum: ``tile(I, J)`` for block starts I ≤ J returns a tuple of ``width`` numbers."""

    n: int
    block: int
    width: int
    tile_flops: float

    def tile(self, I: int, J: int) -> tuple: ...


def tiles_of(n: int, block: int) -> list[tuple[int, int]]:
    """The (I, J) block starts of the upper triangle, row by row."""
    starts = range(0, n, block)
    return [(I, J) for I in starts for J in starts if J >= I]


def plan(n: int, block: int, per_task: int) -> list[tuple[tuple[int, int], ...]]:
    """The tiles cut into consecutive tasks of ``per_task`` tiles (the last may be shorter)."""
    if per_task < 1:
        raise ValueError(f"tiles_per_task must be a positive integer, got {per_task}")
    t = tiles_of(n, block)
    return [tuple(t[k:k + per_task]) for k in range(0, len(t), per_task)]


def reduce_values(values: Sequence[tuple], width: int) -> tuple:
    """Per component, the correctly rounded sum (``math.fsum``) of float values; any other number type (mpmath,
    arb, torch under autograd) is summed in order with ``+``."""
    if not values:
        return (0.0,) * width
    if all(type(x) is float for v in values for x in v):
        return tuple(_fsum([v[k] for v in values]) for k in range(width))
    out = []
    for k in range(width):
        acc = 0
        for v in values:
            acc = acc + v[k]
        out.append(acc)
    return tuple(out)


def _fsum(xs: list[float]) -> float:
    try:
        return math.fsum(xs)
    except (OverflowError, ValueError):  # an inf or nan tile, or a sum beyond float64: the caller sees it
        return float(sum(xs))


def fingerprint(*parts: Any) -> str:
    """sha256 over arrays (dtype, shape, bytes) and the repr of everything else, with :data:`TILE_REVISION`."""
    h = hashlib.sha256(f"tiles-r{TILE_REVISION}".encode())
    for p in parts:
        if p is None or isinstance(p, str | int | float | bool):
            h.update(repr(p).encode())
        elif isinstance(p, np.ndarray):
            a = np.ascontiguousarray(p)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
        elif isinstance(p, list | tuple):
            h.update(f"seq{len(p)}(".encode())
            h.update(fingerprint(*p).encode())
        else:
            h.update(repr(p).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Recipe:
    """How a worker rebuilds a prepared pair sum: ``build(*args)``, a module-level function (it pickles by name)."""

    kind: str
    build: Callable[..., PairTiles]
    args: tuple
    token: str
    revision: int = TILE_REVISION  # the client's tile code: a worker with other tile code refuses the task

    @classmethod
    def of(cls, kind: str, build: Callable[..., PairTiles], *args) -> Recipe:
        """``build(*args)``, keyed by a :func:`fingerprint` of the kind, the builder's name and every argument."""
        return cls(kind, build, args, fingerprint(kind, f"{build.__module__}.{build.__qualname__}", *args))


_BUILT: dict[str, PairTiles] = {}  # this process's one built problem, by recipe token


def _built(recipe: Recipe) -> PairTiles:
    got = _BUILT.get(recipe.token)
    if got is None:
        _BUILT.clear()  # one problem per worker process: its memory is bounded by the largest one
        got = _BUILT[recipe.token] = recipe.build(*recipe.args)
    return got


def _peak_rss_mb() -> float | None:
    try:
        import resource
    except ImportError:  # pragma: no cover (Windows)
        return None
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(kb / (2**20 if sys.platform == "darwin" else 2**10), 1)


def run_task(recipe: Recipe, index: int, tiles: tuple[tuple[int, int], ...]) -> dict[str, Any]:
    """One task on a worker: the values of its tiles (``float.hex`` strings) with its timing and the process's peak
    memory; the worker builds the problem from ``recipe`` once and keeps it for the next task."""
    t0, c0 = time.perf_counter(), time.process_time()
    if recipe.revision != TILE_REVISION:
        raise RuntimeError(f"this worker's tile code is revision {TILE_REVISION}, the client's {recipe.revision}: "
                           "install the same version of shallow-proofs on the workers")
    return _summary(_built(recipe), index, tiles, t0, c0)


def forget_built() -> int:
    """Drop this process's built problem (run on every worker after a run unless ``keep_built``); returns how many
    were dropped."""
    k = len(_BUILT)
    _BUILT.clear()
    return k


def _summary(problem: PairTiles, index: int, tiles, t0: float, c0: float) -> dict[str, Any]:
    values = [problem.tile(I, J) for I, J in tiles]
    return {"task": index, "tiles": [list(t) for t in tiles],
            "values": [[float(x).hex() for x in v] for v in values],
            "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0,
            "worker": worker_address(f"pid {os.getpid()}"), "peak_rss_mb": _peak_rss_mb()}


class _Journal:
    """Finished tasks of one pair sum, one JSON file each (written atomically)."""

    def __init__(self, root: Path, recipe: Recipe, block: int, per_task: int):
        self.dir = Path(root) / f"{recipe.kind}-{recipe.token[:20]}-b{block}-t{per_task}"

    def done(self) -> dict[int, dict[str, Any]]:
        out = {}
        for p in sorted(self.dir.glob("task-*.json")):
            try:
                s = json.loads(p.read_text())
            except (OSError, json.JSONDecodeError):
                continue  # cannot happen with atomic writes; such a task simply runs again
            out[int(s["task"])] = s
        return out

    def record(self, summary: dict[str, Any]) -> None:
        atomic_write(self.dir / f"task-{summary['task']:06d}.json", json.dumps(summary, sort_keys=True))

    def clear(self) -> None:
        for p in self.dir.glob("task-*.json"):
            p.unlink()


class ProgressLine:
    """``say(line)`` at most every ``every`` seconds and once at the end: tiles done, elapsed, time left."""

    def __init__(self, say: Callable[[str], None], label: str = "pair tiles", every: float = 5.0):
        self.say, self.label, self.every = say, label, every
        self.last = -math.inf

    def __call__(self, done: int, total: int, elapsed: float, left: float | None) -> None:
        now = time.perf_counter()
        if done < total and now - self.last < self.every:
            return
        self.last = now
        rest = "" if left is None or done == total else f", ≈ {_span(left)} left"
        self.say(f"{self.label} {done}/{total} ({100 * done / max(total, 1):.1f}%), {_span(elapsed)}{rest}")


def _span(s: float) -> str:
    return f"{s:.0f} s" if s < 120 else f"{s / 60:.1f} min" if s < 7200 else f"{s / 3600:.1f} h"


class TileRunner:
    """Runs a prepared pair sum's tiles: in this process (``client=None``) or as Dask tasks.

    Parameters
    ----------
    client : distributed.Client, optional
        Tasks go to its workers; ``TileRunner.local(k)`` starts a LocalCluster of ``k`` single-threaded worker
        processes and ``TileRunner.connect(address)`` joins an existing scheduler (both close what they started
        when used as context managers).
    journal : directory, optional
        Every finished task is written there at once; with ``resume=True`` finished tasks are read back and only
        the missing ones run. The key is (kind, a sha256 of the inputs and the tile code's revision, block,
        tiles per task), so a journal is never resumed for other inputs.
    tiles_per_task : int, optional
        Default: about :data:`TASK_FLOPS` of work per task. The result does not depend on it.
    progress : callable(done_tiles, total_tiles, elapsed_s, left_s or None), optional
        E.g. ``ProgressLine(print)``.
    on_task : callable(summary), optional
        Called with every finished task's summary (after the journal has it), in journaled or Dask runs (a run in
        this process without a journal makes no per-task summaries).
    keep_built : bool
        Keep each worker's built problem after the run (a rerun on the same inputs then skips building it); by
        default the workers drop it, so that a long-lived cluster gets its memory back.

    After a run, ``stats`` holds the wall time, tasks run and resumed, and per worker its tasks, busy seconds and
    peak resident memory (MB).
    """

    def __init__(self, client=None, *, journal: str | Path | None = None, resume: bool = False,
                 tiles_per_task: int | None = None, progress: Callable | None = None,
                 on_task: Callable[[dict], None] | None = None, keep_built: bool = False, cluster=None,
                 own_client: bool = False):
        if resume and journal is None:
            raise ValueError("resume=True needs a journal directory to resume from")
        if tiles_per_task is not None and not (isinstance(tiles_per_task, int) and tiles_per_task >= 1):
            raise ValueError(f"tiles_per_task must be a positive integer, got {tiles_per_task!r}")
        self.client, self.cluster, self.own_client = client, cluster, own_client
        self.journal = None if journal is None else Path(journal)
        self.resume, self.tiles_per_task, self.progress, self.on_task = resume, tiles_per_task, progress, on_task
        self.keep_built = keep_built
        self._environ: dict[str, str] | None = None  # os.environ before a cluster this runner started
        self.stats: dict[str, Any] = {}

    @classmethod
    def local(cls, workers: int, **kw) -> TileRunner:
        if not (isinstance(workers, int) and workers >= 1):
            raise ValueError(f"workers must be a positive integer, got {workers!r}")
        cluster, client, environ = local_cluster(workers)
        runner = cls(client, cluster=cluster, own_client=True, **kw)
        runner._environ = environ
        return runner

    @classmethod
    def connect(cls, address: str | None, **kw) -> TileRunner:
        return cls(connect_client(address), own_client=True, **kw)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        if self.client is not None and self.own_client:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        if self._environ is not None:
            restore_environ(self._environ)
            self._environ = None
        self.client = self.cluster = None

    # ------------------------------------------------------------------------------------------------ running
    def per_task(self, problem: PairTiles) -> int:
        if self.tiles_per_task is not None:
            return self.tiles_per_task
        return max(1, int(TASK_FLOPS // max(problem.tile_flops, 1.0)))

    def run(self, recipe: Recipe | None, problem: PairTiles) -> tuple:
        """The reduced tile values of ``problem`` (built here from ``recipe``, or passed in). In this process
        without a journal, the tiles run in order with no per-task bookkeeping."""
        t0 = time.perf_counter()
        tasks = plan(problem.n, problem.block, self.per_task(problem))
        total = sum(len(t) for t in tasks)
        if self.client is None and self.journal is None:
            values = []
            for tiles in tasks:
                values += [problem.tile(I, J) for I, J in tiles]
                self._tick(len(values), total, t0, len(values))
            self.stats = {"engine": "this process", "tasks": len(tasks), "tiles": total,
                          "wall_s": time.perf_counter() - t0}
            return reduce_values(values, problem.width)
        if recipe is None:
            raise ValueError("a journal or a Dask client needs the pair sum's recipe")
        journal = None if self.journal is None else _Journal(self.journal, recipe, problem.block, len(tasks[0]))
        done: dict[int, dict[str, Any]] = {}
        if journal is not None:
            if self.resume:
                done = {k: s for k, s in journal.done().items()
                        if k < len(tasks) and [tuple(t) for t in s["tiles"]] == list(tasks[k])}
            else:
                journal.clear()
        resumed = len(done)
        todo = [k for k in range(len(tasks)) if k not in done]
        new: list[dict[str, Any]] = []
        count = {"resumed": sum(len(tasks[k]) for k in done), "run": 0}

        def finish(summary):
            done[summary["task"]] = summary
            new.append(summary)
            if journal is not None:
                journal.record(summary)
            count["run"] += len(summary["tiles"])
            self._tick(count["resumed"] + count["run"], total, t0, count["run"])
            if self.on_task is not None:
                self.on_task(summary)

        if self.client is None:
            for k in todo:
                finish(_summary(problem, k, tasks[k], time.perf_counter(), time.process_time()))
        else:
            from distributed import as_completed

            shared = self.client.scatter(recipe, broadcast=True, hash=False)
            futs = [self.client.submit(run_task, shared, k, tasks[k], pure=False,
                                       key=f"tiles-{recipe.kind}-{k}-{os.urandom(4).hex()}") for k in todo]
            try:
                for fut in as_completed(futs):
                    finish(fut.result())
            finally:
                self.client.cancel([f for f in futs if not f.done()])
                if not self.keep_built:  # the workers' memory goes back with the run
                    self.client.run(forget_built)
        values = [tuple(float.fromhex(x) for x in v) for k in range(len(tasks)) for v in done[k]["values"]]
        self.stats = self._stats(new, len(tasks), resumed, total, time.perf_counter() - t0)
        return reduce_values(values, problem.width)

    def _tick(self, done: int, total: int, t0: float, run_now: int) -> None:
        if self.progress is None:
            return
        elapsed = time.perf_counter() - t0
        left = elapsed / run_now * (total - done) if run_now else None
        self.progress(done, total, elapsed, left)

    def _stats(self, new, tasks, resumed, tiles, wall) -> dict[str, Any]:
        per: dict[str, dict[str, Any]] = {}
        for s in new:
            w = per.setdefault(s["worker"], {"tasks": 0, "busy_s": 0.0, "cpu_s": 0.0, "peak_rss_mb": 0.0})
            w["tasks"] += 1
            w["busy_s"] += s["seconds"]
            w["cpu_s"] += s["cpu_seconds"]
            w["peak_rss_mb"] = max(w["peak_rss_mb"], s["peak_rss_mb"] or 0.0)
        engine = "this process" if self.client is None else \
            f"{len(self.client.scheduler_info(n_workers=-1)['workers'])} Dask worker(s)"
        per_worker = {k: {**v, "busy_s": round(v["busy_s"], 3), "cpu_s": round(v["cpu_s"], 3)}
                      for k, v in sorted(per.items())}
        return {"engine": engine, "tasks": tasks, "tasks_run": len(new), "tasks_resumed": resumed, "tiles": tiles,
                "tiles_run": sum(len(s["tiles"]) for s in new), "wall_s": wall, "per_worker": per_worker}
