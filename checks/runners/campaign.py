"""Falsification campaigns (and E-level sweeps) on Dask: ``falsify --workers K`` or ``--scheduler ADDRESS``.

A property's campaign of ``N`` examples is cut into ``S`` *shards* by seed. Shard ``i`` is one ordinary,
reproducible :func:`checks.runners.falsify.falsify` run with its own derived seed (:func:`shard_seed`) and its
share of the budget (:func:`plan`). Shards are independent Dask tasks; the merged result
(:func:`merge`) folds them in shard order, so it is a function of (seed, budget, shard count) alone:
neither the number of workers nor the order in which shards finish enters it. ``S`` never defaults
from the worker count (:func:`default_shards` reads the budget only). With ``S = 1`` the single shard
runs with the property's own seed, i.e. exactly the one-process run of ``python -m checks falsify``.

Nothing is lost:

* the shard that confirms a counterexample writes its reproducer at once (``falsify``'s own
  ``save_reproducer``, on the worker's file system) and sends it to the client as a Dask event
  (``Worker.log_event`` → ``Client.subscribe_topic``), which writes its own copy into
  ``REPORT_DIR/counterexamples/`` as soon as it arrives; the shard's result carries the same files again;
* the client writes every finished shard's summary to ``REPORT_DIR/campaigns/<campaign>/shard-NNNNN.json``
  (atomically) the moment it arrives, so a campaign killed at any point keeps every reproducer and every
  finished shard; ``--resume`` reads those summaries back and submits only the missing shards;
* a worker that dies takes only the shard it was running with it: the scheduler reschedules that task on
  another worker (Dask's ``distributed.scheduler.allowed-failures`` bounds the retries) and a nanny starts
  a fresh worker in its place.

A property travels to the workers by name when it is a paper's registered one (the worker imports the paper,
see :class:`checks.runners.campaign_plugin.Preload`), else by a recipe (:meth:`PropertyRef.recipe`: a module-level
factory and its arguments, e.g. a planted-bug copy) or, failing that, by value.

Every shard runs to its own first confirmed hit (or its budget), so ``examples`` of a merged result is the sum of
the shards' own counts; no shard is cancelled because another found something (that would make the result depend
on timing). The journal is keyed by (property name, seed, budget, shards, the property's ``revision``, the search
engine's :data:`checks.runners.falsify.ENGINE_REVISION`): a revision raised with a change to the screen, the
confirmation
or the search starts a fresh journal; other code changes are not seen, so resume only the campaign you interrupted.

E levels run their independent (seed, size) runs through :func:`sweep`: Dask tasks when ``verify`` has
``--workers``/``--scheduler``, else the plain loop they always were.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import os
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checks.runners.falsify import PROPERTIES, FalsifyResult, Property, falsify
from checks.runners.sweep_journal import journal_for
from numerics.cluster import atomic_write, worker_address

TOPIC = "shallow-proofs/reproducer"
# One task at a time per worker *process*, whatever its thread count: neither torch.func (its forward-AD levels)
# nor Hypothesis (it reseeds the global `random` around a run) is safe in two threads of one process at once.
# ``--workers K`` starts single-threaded worker processes; this guards an existing cluster with threaded workers.
_TASK_LOCK = threading.Lock()
SHARD_EXAMPLES = 2000  # default examples per shard: a shard's Hypothesis run stays small, its overhead negligible
MAX_SHARDS = 4096


# --------------------------------------------------------------------------------------------- the plan
@dataclass(frozen=True)
class Shard:
    prop: str  # property name
    index: int
    of: int  # shard count
    seed: int  # this shard's Hypothesis seed
    budget: int  # this shard's examples


def default_shards(budget: int) -> int:
    """Shards for a campaign of ``budget`` examples: about one per :data:`SHARD_EXAMPLES` (a function of the
    budget only, so that the result does not depend on how many workers there are)."""
    return max(1, min(MAX_SHARDS, math.ceil(budget / SHARD_EXAMPLES)))


def shard_seed(seed: int, index: int, of: int) -> int:
    """Shard ``index`` of ``of``: the property seed itself when there is one shard, else a hash of the three."""
    if of == 1:
        return int(seed)
    digest = hashlib.sha256(f"shallow-proofs/shard/{int(seed)}/{index}/{of}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


def plan(name: str, seed: int, budget: int, shards: int) -> list[Shard]:
    """``shards`` shards whose budgets add up to ``budget`` (the first ``budget mod shards`` get one more)."""
    if budget < 1:
        raise ValueError(f"budget must be a positive number of examples, got {budget!r}")
    if shards < 1:
        raise ValueError(f"--shards must be a positive integer, got {shards!r}")
    shards = min(shards, budget)  # no shard without examples
    q, r = divmod(budget, shards)
    return [Shard(name, i, shards, shard_seed(seed, i, shards), q + (i < r)) for i in range(shards)]


# ------------------------------------------------------------------------------------- one shard (worker side)
class PropertyRef:
    """How a property travels to a worker. The registered property of a paper goes by name (the worker imports
    the paper's claim modules); any other one (a planted-bug copy) by a *recipe*, ``PropertyRef.recipe(factory,
    *args)``, whose factory and arguments pickle by reference (module-level functions) and which the worker
    calls to build the property; or, as a last resort, by value (cloudpickle), which fails for many strategies."""

    def __init__(self, prop: Property | None = None, *, factory: Callable[..., Property] | None = None,
                 args: tuple = ()):
        from checks.evidence.registry import papers

        self.factory, self.args, self.obj = factory, tuple(args), None
        if factory is not None:
            prop = factory(*self.args)
        if not isinstance(prop, Property):
            raise TypeError(f"a campaign runs Property objects, got {type(prop).__name__}")
        self.name, self._local = prop.name, prop
        by_name = PROPERTIES.get(prop.name) is prop and prop.name.split(".")[0] in papers()
        if factory is None and not by_name:
            self.obj = prop

    @classmethod
    def recipe(cls, factory: Callable[..., Property], *args) -> PropertyRef:
        return cls(factory=factory, args=args)

    @property
    def by_name(self) -> bool:
        return self.factory is None and self.obj is None

    @property
    def local(self) -> Property:
        return self._local

    def __getstate__(self):
        return {"name": self.name, "factory": self.factory, "args": self.args, "obj": self.obj}

    def __setstate__(self, state):
        self.__dict__.update(state, _local=None)

    def resolve(self) -> Property:
        if self._local is not None:
            return self._local
        if self.factory is not None:
            self._local = self.factory(*self.args)
        elif self.obj is not None:
            self._local = self.obj
        else:
            from checks.evidence.registry import load_all

            load_all([self.name.split(".")[0]])
            prop = PROPERTIES.get(self.name)
            if prop is None:
                raise LookupError(f"property {self.name!r} is not registered when its paper's claim modules are "
                                  "imported (it is built at run time), so a worker cannot rebuild it by name")
            self._local = prop
        return self._local


def as_ref(prop: Property | PropertyRef) -> PropertyRef:
    return prop if isinstance(prop, PropertyRef) else PropertyRef(prop)


def run_shard(ref: PropertyRef, shard: Shard, out_dir: str | None,
              ignore: tuple[type[Warning], ...] = ()) -> dict[str, Any]:
    """Run one shard; returns its summary (JSON-able). Every reproducer it writes is also sent to the client
    at once as a ``TOPIC`` event, and carried in the summary."""
    with _TASK_LOCK:
        return _run_shard(ref, shard, out_dir, ignore)


def _run_shard(ref, shard, out_dir, ignore) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), time.thread_time()  # the shard runs in this thread
    prop = ref.resolve()
    files: dict[str, str] = {}
    worker = worker_address("local")

    def on_save(path: Path) -> None:
        text = Path(path).read_text()
        files[Path(path).name] = text
        if worker != "local":
            from distributed import get_worker

            get_worker().log_event(TOPIC, {"name": Path(path).name, "text": text, "property": shard.prop,
                                           "shard": shard.index})

    with warnings.catch_warnings():
        for cat in ignore:
            warnings.simplefilter("ignore", cat)
        if worker != "local":
            # a Dask worker's own threads (heartbeats, its event loop) call `random` while the shard draws, which
            # Hypothesis reports as the strategy's doing; the same shard run in one process does not warn
            warnings.filterwarnings("ignore", message="Do not use the `random` module inside strategies")
        res = falsify(prop, budget=shard.budget, seed=shard.seed, out_dir=out_dir, on_save=on_save)
    out = dataclasses.asdict(res)
    out.pop("reproducers")
    out.update(shard=dataclasses.asdict(shard), worker=worker, files=files,
               task_seconds=time.perf_counter() - t0, cpu_seconds=time.thread_time() - c0)
    return out


# --------------------------------------------------------------------------------------------- merging
DETERMINISTIC = ("examples", "calls", "not_applicable", "candidates", "confirmed", "precision_artifacts", "undecided",
                 "ties", "explicit", "worst_screen", "worst_explicit", "counterexample", "counterexample_margin")


def merge(name: str, summaries: Iterable[dict[str, Any]]) -> FalsifyResult:
    """One :class:`FalsifyResult` from shard summaries, folded in shard order: counts add, the worst margin is
    the maximum, and the counterexample is the one of the lowest-numbered shard that found one."""
    rows = sorted(summaries, key=lambda s: s["shard"]["index"])
    res = FalsifyResult(name)
    for key in ("examples", "calls", "not_applicable", "candidates", "confirmed"):
        setattr(res, key, sum(int(s[key]) for s in rows))
    res.precision_artifacts = sum(int(s.get("precision_artifacts", 0)) for s in rows)  # older journals lack it
    res.undecided = sum(int(s.get("undecided", 0)) for s in rows)  # journals before revision-2 proofs lack it
    res.ties = sum(int(s.get("ties", 0)) for s in rows)  # the two-sided confirmations (older journals lack them)
    res.explicit = sum(int(s.get("explicit", 0)) for s in rows)
    res.worst_screen = max((float(s["worst_screen"]) for s in rows), default=-math.inf)
    res.worst_explicit = max((float(s.get("worst_explicit", -math.inf)) for s in rows), default=-math.inf)
    hit = next((s for s in rows if s["counterexample"] is not None), None)
    if hit is not None:
        res.counterexample, res.counterexample_margin = hit["counterexample"], hit["counterexample_margin"]
    res.seconds = sum(float(s["seconds"]) for s in rows)
    return res


def fingerprint(res: FalsifyResult) -> dict[str, Any]:
    """The part of a merged result that must not depend on workers or completion order."""
    return {k: getattr(res, k) for k in DETERMINISTIC}


# ------------------------------------------------------------------------------------------- the journal
class Journal:
    """Finished shards of one property's campaign, one JSON file each, under ``root``."""

    def __init__(self, root: Path, prop: str, seed: int, budget: int, shards: int, revision: int = 1):
        from checks.runners.falsify import ENGINE_REVISION

        tag = f"{prop.replace('/', '_')}-seed{seed}-n{budget}-s{shards}" + (f"-r{revision}" if revision > 1 else "")
        self.dir = Path(root) / (tag + (f"-e{ENGINE_REVISION}" if ENGINE_REVISION > 1 else ""))

    def path(self, index: int) -> Path:
        return self.dir / f"shard-{index:05d}.json"

    def done(self) -> dict[int, dict[str, Any]]:
        out = {}
        for p in sorted(self.dir.glob("shard-*.json")):
            try:
                s = json.loads(p.read_text())
            except (OSError, json.JSONDecodeError):
                continue  # cannot happen with atomic writes; such a shard is simply run again
            out[int(s["shard"]["index"])] = s
        return out

    def record(self, summary: dict[str, Any]) -> None:
        atomic_write(self.path(summary["shard"]["index"]), json.dumps(summary, indent=1, sort_keys=True))

    def clear(self) -> None:
        for p in self.dir.glob("shard-*.json"):
            p.unlink()


# --------------------------------------------------------------------------------------------- the engine
class Campaign:
    """Runs shards on a Dask client (or in this process, in shard order, when ``client`` is None).

    ``Campaign.local(k)`` starts a LocalCluster of ``k`` single-threaded worker processes;
    ``Campaign.connect(address)`` joins an existing scheduler (``address=None``: Dask's ``scheduler-address``
    configuration). Use it as a context manager; it closes what it started.
    """

    def __init__(self, client=None, *, shards: int | None = None, resume: bool = False, cluster=None,
                 on_shard: Callable[[dict[str, Any]], None] | None = None, own_client: bool = False):
        self.client, self.cluster, self.own_client = client, cluster, own_client
        self.shards, self.resume, self.on_shard = shards, resume, on_shard
        self.received: list[dict[str, Any]] = []  # reproducer events, as they arrived
        self._out_dir: Path | None = None
        self._preloaded: set[str] = set()
        self._environ: dict[str, str] | None = None  # os.environ before a cluster this campaign started
        if client is not None:
            client.subscribe_topic(TOPIC, self._on_reproducer)

    # -- construction
    @classmethod
    def local(cls, workers: int, *, processes: bool = True, **kw) -> Campaign:
        from numerics.cluster import local_cluster

        if workers < 1:
            raise ValueError(f"--workers must be a positive integer, got {workers}")
        cluster, client, environ = local_cluster(workers, processes=processes)  # leaves os.environ as it was
        camp = cls(client, cluster=cluster, own_client=True, **kw)
        camp._environ = environ
        return camp

    @classmethod
    def connect(cls, address: str | None, **kw) -> Campaign:
        from numerics.cluster import connect_client

        return cls(connect_client(address), own_client=True, **kw)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        # an exception (Ctrl-C included) ends the campaign: its finished shards are in the journal already, and a
        # worker asked to close first finishes the shard it is running (up to 20 minutes for a stalled one)
        self.close(abort=exc_type is not None)

    def close(self, *, abort: bool = False) -> None:
        """Close the client and the cluster if this campaign started them (a client passed in stays open).
        ``abort``: first kill the worker processes of a LocalCluster this campaign started, so that closing does
        not wait for their running shards (whose results are lost either way)."""
        if abort and self.cluster is not None:
            import signal

            for nanny in list(getattr(self.cluster, "workers", {}).values()):
                pid = getattr(nanny, "pid", None)
                if pid:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
        if self.client is not None:
            self.client.unsubscribe_topic(TOPIC)
            if self.own_client:
                self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        if self._environ is not None:  # a nanny that restarted a killed worker wrote its variables again
            from numerics.cluster import restore_environ

            restore_environ(self._environ)
            self._environ = None
        self.client = self.cluster = None

    @property
    def workers(self) -> int:
        return len(self.client.scheduler_info(n_workers=-1)["workers"]) if self.client is not None else 1

    def describe(self) -> str:
        if self.client is None:
            return "in this process"
        return f"{self.workers} Dask worker(s) at {self.client.scheduler.address}"

    # -- reproducers
    def _on_reproducer(self, event) -> None:
        _, msg = event
        self.received.append(msg)
        self._write_reproducer(msg["name"], msg["text"])

    def _write_reproducer(self, name: str, text: str) -> Path | None:
        if self._out_dir is None:
            return None
        path = self._out_dir / name
        atomic_write(path, text)
        return path

    # -- a sweep (E levels): one task per item, results in item order
    def map(self, ctx, fn: Callable, items: Sequence, description: str,
            on_result: Callable[[int, Any], None] | None = None) -> list:
        """``[fn(x) for x in items]`` as Dask tasks, with the progress line; a worker lost mid-task costs only
        that task, which the scheduler runs again. ``fn`` and the items must pickle (module-level functions).
        ``on_result(i, result)`` is called in this process as each item finishes (the sweep's journal)."""
        items = list(items)
        if self.client is None:
            out = []
            for i, x in enumerate(ctx.track(items, description)):
                out.append(fn(x))
                if on_result is not None:
                    on_result(i, out[-1])
            return out
        from distributed import as_completed

        keys = [f"{description}-{i}-{os.urandom(4).hex()}" for i in range(len(items))]
        futs = self.client.map(functools.partial(_locked, fn), items, pure=False, key=keys)
        index = {f.key: i for i, f in enumerate(futs)}
        out: list = [None] * len(items)
        tick = _Ticker(ctx, description, len(items), 0)
        try:
            for fut in as_completed(futs):
                i = index[fut.key]
                out[i] = fut.result()
                if on_result is not None:
                    on_result(i, out[i])
                tick.advance()
        finally:
            tick.close()
            self.client.cancel([f for f in futs if not f.done()])
        return out

    # -- a falsification campaign
    def falsify_many(self, ctx, props: Sequence[Property | PropertyRef], seeds: Sequence[int], budgets: Sequence[int],
                     ignore: tuple[type[Warning], ...] = ()) -> tuple[list[FalsifyResult], dict[str, Any]]:
        """Every property's shards; returns the merged results (in ``props`` order) and the campaign timing."""
        refs = [as_ref(p) for p in props]
        self._out_dir = Path(ctx.report_dir).resolve() / "counterexamples"
        journal_root = Path(ctx.report_dir) / "campaigns"
        jobs, done, journals = [], {}, {}
        for p, seed, n in zip(refs, seeds, budgets, strict=True):
            k = self.shards or default_shards(n)
            j = Journal(journal_root, p.name, seed, n, k, p.local.revision)
            journals[p.name] = j
            if self.resume:
                done[p.name] = j.done()
            else:
                j.clear()
                done[p.name] = {}
            jobs += [(p, s) for s in plan(p.name, seed, n, k) if s.index not in done[p.name]]
        skipped = sum(len(d) for d in done.values())
        setup = time.perf_counter()
        if self.client is not None:
            papers = {r.name.split(".")[0] for r in refs if r.by_name} - self._preloaded
            if papers:
                from checks.runners.campaign_plugin import Preload

                self.client.register_plugin(Preload(sorted(papers | self._preloaded)), name="shallow-proofs-preload")
                self._preloaded |= papers
        setup = time.perf_counter() - setup  # the workers importing the papers: apart from the shards' wall time
        t0 = time.perf_counter()
        total = len(jobs) + skipped
        tick = _Ticker(ctx, f"{refs[0].name.split('/')[0]} shards" if refs else "shards", total, skipped)
        new: list[dict[str, Any]] = []

        def finish(summary: dict[str, Any]) -> None:
            for name, text in summary.get("files", {}).items():
                self._write_reproducer(name, text)
            journals[summary["shard"]["prop"]].record(summary)
            done[summary["shard"]["prop"]][summary["shard"]["index"]] = summary
            new.append(summary)
            tick.advance()
            if self.on_shard is not None:
                self.on_shard(summary)

        try:
            if self.client is None:
                for r, s in jobs:
                    finish(run_shard(r, s, str(self._out_dir), ignore))
            else:
                from distributed import as_completed

                futs = [self.client.submit(run_shard, r, s, str(self._out_dir), ignore, pure=False,
                                           key=f"shard-{s.prop}-{s.index}-of-{s.of}-{os.urandom(4).hex()}")
                        for r, s in jobs]
                try:
                    for fut in as_completed(futs):
                        finish(fut.result())
                finally:
                    self.client.cancel([f for f in futs if not f.done()])
        finally:
            tick.close()
        wall = time.perf_counter() - t0
        results = [merge(r.name, done[r.name].values()) for r in refs]
        for r in results:
            r.reproducers = sorted({str(self._out_dir / f) for s in done[r.name].values() for f in s.get("files", {})})
        return results, {**self.timing(new, wall, skipped), "worker_setup_s": round(setup, 3)}

    def timing(self, new: list[dict[str, Any]], wall: float, skipped: int) -> dict[str, Any]:
        """Throughput of the shards run now (resumed ones are not counted): overall and per worker."""
        per: dict[str, list[float]] = {}
        for s in new:
            acc = per.setdefault(s["worker"], [0.0, 0.0, 0.0, 0])
            acc[0] += s["calls"]
            acc[1] += s["task_seconds"]
            acc[2] += s["cpu_seconds"]
            acc[3] += 1
        calls = sum(s["calls"] for s in new)
        busy = sum(s["task_seconds"] for s in new)
        nw = max(len(per), 1)
        return {
            "engine": self.describe(),
            "shards_run": len(new),
            "shards_resumed": skipped,
            "wall_s": round(wall, 3),
            "examples_per_s": round(calls / wall, 1) if wall > 0 else None,
            "per_worker": {w: {"shards": int(a[3]), "examples_per_s": round(a[0] / a[1], 1) if a[1] else None,
                               "busy_s": round(a[1], 3), "cpu_s": round(a[2], 3)} for w, a in sorted(per.items())},
            "shard_cpu_s": round(sum(s["cpu_seconds"] for s in new), 3),
            # wall time the workers were not inside a shard, per shard: scheduling, transfer, idling at the end
            "overhead_per_shard_s": round(max(nw * wall - busy, 0.0) / len(new), 4) if new else None,
        }


def _locked(fn: Callable, x):
    with _TASK_LOCK:
        return fn(x)


def sweep(ctx, fn: Callable, items: Sequence, description: str) -> list:
    """An E level's independent runs: ``[fn(x) for x in items]``, on the campaign's Dask client when the run has
    one (``verify --workers K`` / ``--scheduler``), else in this process exactly as a plain loop (with
    ``ctx.track``'s progress). Each item must carry its own seed, so the results do not depend on where they ran.

    In a full run every finished item is journaled at once (:mod:`checks.runners.sweep_journal`), and under
    ``verify --resume`` the items a killed run of the same code finished are read back instead of run again."""
    items = list(items)
    journal = journal_for(ctx, fn, description)
    results = journal.load(items) if journal is not None else {}
    todo = [i for i in range(len(items)) if i not in results]

    def record(j: int, result: Any) -> None:
        results[todo[j]] = result
        if journal is not None:
            journal.record(todo[j], result)

    campaign = getattr(ctx, "campaign", None)
    if todo:
        if campaign is None:
            for j, i in enumerate(ctx.track(todo, description)):
                record(j, fn(items[i]))
        else:
            campaign.map(ctx, fn, [items[i] for i in todo], description, on_result=record)
    return [results[i] for i in range(len(items))]


class _Ticker:
    """The progress line over shards: a rich task when a progress display is attached, else a line on
    ``ctx.log`` at most every ``ctx.log_every`` seconds and one at the end."""

    def __init__(self, ctx, description: str, total: int, start: int):
        self.ctx, self.description, self.total, self.n = ctx, description, total, start
        self.t0 = self.last = time.perf_counter()
        self.task = None
        if ctx.progress is not None:
            self.task = ctx.progress.add_task(f"  {description}", total=total, completed=start)

    def advance(self) -> None:
        self.n += 1
        if self.task is not None:
            self.ctx.progress.advance(self.task)
            return
        now = time.perf_counter()
        if self.ctx.log is not None and (now - self.last >= self.ctx.log_every or self.n == self.total):
            self.last = now
            self.ctx.log(f"  … {self.description}: {self.n}/{self.total} shards ({now - self.t0:.0f} s)")

    def close(self) -> None:
        if self.task is not None:
            self.ctx.progress.remove_task(self.task)
