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

**Panels.** A recipe made with ``panels=(n, block)`` (the softmax sums) can build the tables of some samples alone
(:class:`Remapped`). The runner then plans one task per pair of *panels* P ≤ Q of k blocks (:func:`panel_plan`),
and a worker makes the per-sample tables of its task's two panels only: its memory is O(k·block) rows instead of
O(n), at the cost of making ~2k blocks' tables per k² tiles (k from :data:`PANEL_TASK_FLOPS` and
:data:`PANEL_MIN_TASKS`). The tables are made
block by block everywhere, so a panel's tiles are bit for bit the whole problem's. Samples given as an
:class:`ArrayFile` (a memory-mapped ``.npy``) are read by rows on the workers instead of being sent to them.

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

__all__ = ["TILE_REVISION", "ArrayFile", "PairTiles", "ProgressLine", "Recipe", "Remapped", "TileRunner", "fingerprint",
           "forget_built", "panel_plan", "plan", "rows_of", "run_task", "tiles_of", "reduce_values", "tune_malloc"]

TILE_REVISION = 3
"""Raised with any change to a tile's arithmetic: it is part of every journal's key, so a journal written by older
tile code is never resumed. 2: the softmax cross term read off the Gauss–Newton block's diagonal. 3: the softmax
per-sample tables are made block by block (so that a worker can make those of its rows alone, bit for bit)."""

TASK_FLOPS = 4e9
"""Default work per Dask task (≈ 1 s of one core): tasks stay long against Dask's ~1 ms overhead per task and
short against a killed worker's loss."""

PANEL_TASK_FLOPS = 6.4e10
"""Default work per off-diagonal task of a *panel* plan (k² tiles, ≈ 2 s of one core): a worker makes the per-sample
tables of its task's two panels of k blocks, ~2k blocks' worth against k² tiles (softmax, (784, 256), C = 10: a
block's tables ≈ 15 ms against ≈ 35 ms a tile, so ≈ 0.86/k of the task: k = 7 here, ≈ 12%). :data:`PANEL_MIN_TASKS`
caps k for small n."""

PANEL_MIN_TASKS = 32
"""k is at most (blocks)/8, so that a panel plan has ≳ 32 tasks to share among workers (a function of n alone, so
that a journal resumes on any number of workers)."""


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


def panel_plan(n: int, block: int, k: int) -> list[tuple[tuple[int, int], ...]]:
    """The tiles cut into one task per pair of *panels* P ≤ Q (k consecutive blocks each): the task holds every
    tile (I, J), J ≥ I, with I in P and J in Q, so that it reads the samples of two panels alone."""
    if k < 1:
        raise ValueError(f"panel blocks must be a positive integer, got {k}")
    starts = list(range(0, n, block))
    panels = [starts[i:i + k] for i in range(0, len(starts), k)]
    return [tuple((I, J) for I in P for J in Q if J >= I)
            for a, P in enumerate(panels) for Q in panels[a:]]


def rows_of(tiles: Sequence[tuple[int, int]], n: int, block: int) -> tuple[tuple[int, int], ...]:
    """The sample ranges (start, stop) that ``tiles`` read: their blocks, merged where they touch, in order."""
    starts = sorted({t for IJ in tiles for t in IJ})
    out: list[list[int]] = []
    for a in starts:
        b = min(a + block, n)
        if out and out[-1][1] == a:
            out[-1][1] = b
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)


class Remapped:
    """A pair sum prepared on some sample ranges only, addressed by the full problem's block starts: ``tile(I, J)``
    is the inner problem's tile at the local starts of I and J. The ranges must be whole blocks (a range may end at
    n), so that every local block is a global one."""

    def __init__(self, inner: PairTiles, rows: Sequence[tuple[int, int]], n: int):
        self.inner, self.n, self.block, self.width = inner, n, inner.block, inner.width
        self.tile_flops = inner.tile_flops
        self.local: dict[int, int] = {}
        off = 0
        for a, b in rows:
            if a % self.block or (b % self.block and b != n):
                raise ValueError(f"rows ({a}, {b}) are not whole blocks of {self.block} samples")
            for g in range(a, b, self.block):
                self.local[g] = off + g - a
            off += b - a

    def tile(self, I: int, J: int) -> tuple:
        return self.inner.tile(self.local[I], self.local[J])


@dataclass(frozen=True)
class ArrayFile:
    """A float64 ``.npy`` file read by row ranges (memory-mapped): the way to give a pair sum samples that should
    not be copied to every Dask worker. ``digest`` is a sha256 of the file's bytes (part of the journal's key);
    ``stamp`` (size, mtime in ns) is checked at every read, so that a file rewritten after the digest is refused."""

    path: str
    shape: tuple
    digest: str
    stamp: tuple = ()

    @classmethod
    def of(cls, array_or_path) -> ArrayFile:
        """From a path, or from an ``np.load(path, mmap_mode="r")`` array that is the whole file."""
        if isinstance(array_or_path, np.memmap):
            path = array_or_path.filename
        else:
            path = str(array_or_path)
        a = np.load(path, mmap_mode="r")
        if a.dtype != np.float64 or a.ndim != 2:
            raise ValueError(f"{path}: expected a 2-D float64 array, got {a.dtype} of shape {a.shape}")
        if isinstance(array_or_path, np.memmap) and array_or_path.shape != a.shape:
            raise ValueError(f"{path}: the memmap is a part ({array_or_path.shape}) of the file's array ({a.shape}); "
                             "pass the whole file")
        stamp = _stamp(path)
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 24), b""):
                h.update(chunk)
        return cls(str(path), tuple(a.shape), h.hexdigest(), stamp)

    def read(self, rows: Sequence[tuple[int, int]] | None = None) -> np.ndarray:
        """The rows of these (start, stop) ranges, concatenated (all rows for None)."""
        if _stamp(self.path) != self.stamp:
            raise ValueError(f"{self.path} changed since its sha256 was taken (size or modification time differ)")
        a = np.load(self.path, mmap_mode="r")
        if rows is None:
            return np.array(a)
        return np.concatenate([a[r0:r1] for r0, r1 in rows]) if rows else np.empty((0, self.shape[1]))


def _stamp(path) -> tuple:
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns)


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
        elif isinstance(p, ArrayFile):
            h.update(f"file{p.shape}{p.digest}".encode())
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
    panels: tuple[int, int] | None = None  # (n, block): build(*args, rows=ranges) makes the sum on those samples
                                           # alone (a Remapped), and the runner plans tasks by panels

    @classmethod
    def of(cls, kind: str, build: Callable[..., PairTiles], *args, panels: tuple[int, int] | None = None) -> Recipe:
        """``build(*args)``, keyed by a :func:`fingerprint` of the kind, the builder's name and every argument.
        ``panels=(n, block)``: the builder takes ``rows=``, and a worker makes only the rows of its task."""
        return cls(kind, build, args, fingerprint(kind, f"{build.__module__}.{build.__qualname__}", *args),
                   panels=panels)


_BUILT: dict[tuple, PairTiles] = {}  # this process's one built problem, by recipe token (and rows, for panels)


def _built(recipe: Recipe, rows: tuple | None = None) -> PairTiles:
    key = (recipe.token, rows)
    got = _BUILT.get(key)
    if got is None:
        _BUILT.clear()  # one problem per worker process: its memory is bounded by the largest one
        got = _BUILT[key] = recipe.build(*recipe.args) if rows is None else recipe.build(*recipe.args, rows=rows)
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
    tune_malloc()
    if recipe.revision != TILE_REVISION:
        raise RuntimeError(f"this worker's tile code is revision {TILE_REVISION}, the client's {recipe.revision}: "
                           "install the same version of shallow-proofs on the workers")
    return _summary(_task_problem(recipe, tiles), index, tiles, t0, c0)


def _task_problem(recipe: Recipe, tiles) -> PairTiles:
    """The built problem a task runs on: for a panel recipe, the samples of its panels alone (memory O(panel))."""
    if recipe.panels is None:
        return _built(recipe)
    n, block = recipe.panels
    return _built(recipe, rows_of(tiles, n, block))


_MALLOC_TUNED: list[bool] = []


def tune_malloc() -> bool:
    """Once per process, on glibc: serve allocations below 32 MB from the heap and keep up to 512 MB of freed heap
    (``mallopt``). Dask's nanny starts workers with ``MALLOC_TRIM_THRESHOLD_=65536``, which also freezes glibc's
    mmap threshold at 128 KB: every tile's temporaries and every task's tables were then fresh pages, faulted in
    and zeroed again (softmax at (784, 256), C = 10: 39.4 ms a tile against 30.3 ms with this, one process, the
    nanny's setting in both). Memory stays bounded by the largest task's; returns whether it was applied."""
    if not _MALLOC_TUNED:
        ok = False
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                libc = ctypes.CDLL("libc.so.6")
                M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
                ok = bool(libc.mallopt(M_MMAP_THRESHOLD, 32 * 2**20)) and bool(libc.mallopt(M_TRIM_THRESHOLD,
                                                                                           512 * 2**20))
            except (OSError, AttributeError):  # not glibc (musl, …): the default allocator's behaviour stays
                ok = False
        _MALLOC_TUNED.append(ok)
    return _MALLOC_TUNED[0]


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

    def __init__(self, root: Path, recipe: Recipe, block: int, tasks: str):
        self.dir = Path(root) / f"{recipe.kind}-{recipe.token[:20]}-b{block}-{tasks}"

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

    def panel_blocks(self, problem: PairTiles) -> int:
        """Blocks per panel of a panel plan: √(tiles_per_task) when given, else about :data:`PANEL_TASK_FLOPS`
        of work per task (an off-diagonal task holds k² tiles)."""
        if self.tiles_per_task is not None:
            return max(1, math.ceil(math.sqrt(self.tiles_per_task)))
        blocks = math.ceil(problem.n / problem.block)
        cap = max(1, int(blocks / math.sqrt(2 * PANEL_MIN_TASKS)))
        return max(1, min(cap, round(math.sqrt(PANEL_TASK_FLOPS / max(problem.tile_flops, 1.0)))))

    def panels(self, recipe: Recipe | None) -> bool:
        """Will this runner plan ``recipe`` by panels (each task building its own samples' tables)? Yes when the
        recipe can build rows alone and the tiles leave this process or are journaled."""
        return recipe is not None and recipe.panels is not None and (self.client is not None
                                                                      or self.journal is not None)

    def _plan(self, recipe: Recipe | None, problem: PairTiles) -> tuple[list, str]:
        """The tasks, and their tag in the journal's key: by panels (:meth:`panels`), else consecutive runs of
        tiles."""
        if self.panels(recipe):
            k = self.panel_blocks(problem)
            return panel_plan(problem.n, problem.block, k), f"p{k}"
        per = self.per_task(problem)
        return plan(problem.n, problem.block, per), f"t{per}"

    def run(self, recipe: Recipe | None, problem: PairTiles) -> tuple:
        """The reduced tile values of ``problem`` (built here from ``recipe``, or passed in). In this process
        without a journal, the tiles run in order with no per-task bookkeeping."""
        t0 = time.perf_counter()
        tasks, tag = self._plan(recipe, problem)
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
        journal = None if self.journal is None else _Journal(self.journal, recipe, problem.block, tag)
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
            for k in todo:   # a panel recipe is built per task here too: the problem passed may be its shape alone
                here = _task_problem(recipe, tasks[k]) if self.panels(recipe) else problem   # no mallopt here:
                finish(_summary(here, k, tasks[k], time.perf_counter(), time.process_time()))  # the caller's process
            if self.panels(recipe):
                forget_built()
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
