"""The claim registry: one :class:`Claim` per spec ID, one named function per evidence level.

One mechanism serves every paper. A paper ``p`` is an entry ``[papers.p]`` in ``checks/evidence/spec.toml``
and a package ``checks/p/`` whose ``__init__`` lists its claim modules, in spec order::

    CLAIMS = ("trace", "trace_sq", ...)        # checks/ws/__init__.py

A claim module holds the claim's ID and one function per evidence level the spec lists::

    ID = "ws.trace"                             # checks/ws/trace.py

    def level_S(ctx: Context) -> Outcome:
        ...
        return Outcome(passed=ok, metric={"sizes": 24}, summary="24 sizes simplify to 0")

The statement, LaTeX and levels come from the spec, never from the module. Everything that does not
line up is a :class:`~checks.evidence.spec.SpecError`, never a skip: a listed module that is missing, a module
whose ID has no spec entry, an ID registered twice, level functions that differ from the spec's levels,
or an implemented spec entry that no module registers. The registry times each level and turns an
exception into failed evidence (nothing already computed is lost).
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from checks.evidence import spec as _spec
from checks.evidence.outcome import E_VERDICTS, LEVELS, Evidence, Level, Outcome, default_verdict
from checks.evidence.spec import Paper, Spec, SpecError


@dataclass
class Context:
    """What every level function receives: seeds, where to write, and how to report progress."""

    seed: int = 20260
    report_dir: Path = Path("reports")
    budget: int | None = None  # F: examples per property; None means the claim's default
    quick: bool = False  # smaller experiments (tests use this); the report records it
    power: bool = False  # E experiments at their planned units (``verify --power``; SPEC §0)
    progress: Any = None  # a rich.progress.Progress, or None
    log: Callable[[str], None] | None = None  # a line sink for runs without a terminal (nox, CI, a log file)
    log_every: float = 15.0  # seconds between progress lines on ``log``
    campaign: Any = None  # a checks.runners.campaign.Campaign (``--workers``/``--scheduler``/``--shards``), or None
    sweep_journal: bool = False  # E sweeps journal each finished item under report_dir/sweeps/ (``verify`` sets it)
    resume: bool = False  # ``verify --resume``: E sweeps reuse the items a killed run of the same code finished

    def rng(self, salt: str = "") -> np.random.Generator:
        """A generator seeded from (seed, salt): each check gets its own reproducible stream."""
        tag = sum((i + 1) * ord(ch) for i, ch in enumerate(salt))
        return np.random.default_rng([self.seed, tag])

    def figure_path(self, name: str) -> Path:
        d = self.report_dir / "figures"
        d.mkdir(parents=True, exist_ok=True)
        return d / name

    def track(self, iterable: Iterable, description: str, total: int | None = None):
        """Iterate with a progress bar when one is attached; else with a progress line on ``log`` at most
        every ``log_every`` seconds (so a run under nox or CI shows it is alive)."""
        if total is None:
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except TypeError:
                total = None
        if self.progress is None:
            if self.log is None:
                yield from iterable
                return
            t0 = last = time.perf_counter()
            for i, item in enumerate(iterable, 1):
                yield item
                now = time.perf_counter()
                if now - last >= self.log_every:
                    last = now
                    self.log(f"  … {description}: {i}/{total if total is not None else '?'} ({now - t0:.0f} s)")
            return
        task = self.progress.add_task(f"  {description}", total=total)
        try:
            for item in iterable:
                yield item
                self.progress.advance(task)
        finally:
            self.progress.remove_task(task)


LevelFn = Callable[[Context], Outcome]


@dataclass
class Claim:
    id: str
    paper: str  # the paper's author-year key
    statement: str
    latex: str
    spec_levels: tuple[Level, ...]
    levels: dict[Level, LevelFn] = field(default_factory=dict)
    module: str = ""  # the checks module that holds it

    def run(self, lv: Level, ctx: Context) -> Evidence:
        t0 = time.perf_counter()
        try:
            out = self.levels[lv](ctx)
            if not isinstance(out, Outcome):
                raise TypeError(f"level function returned {type(out).__name__}, not Outcome")
            verdict = out.verdict or default_verdict(lv, bool(out.passed), out.metric)
            if lv == "E" and verdict not in E_VERDICTS:
                raise ValueError(f"E verdict {verdict!r} is not one of {E_VERDICTS}")
            return Evidence(self.id, lv, bool(out.passed), dict(out.metric), out.summary,
                            time.perf_counter() - t0, dict(out.details), tuple(out.figures),
                            verdict=verdict, timing=dict(out.timing))
        except Exception as exc:  # a crash is a failed level, recorded with its traceback
            return Evidence(self.id, lv, False, {}, f"error: {type(exc).__name__}: {exc}",
                            time.perf_counter() - t0, {"traceback": traceback.format_exc()},
                            error=f"{type(exc).__name__}: {exc}", verdict="error")


_LOADED: dict[tuple, tuple[Spec, dict[str, Claim]]] = {}


def spec() -> Spec:
    """The spec the registry runs on (``checks/evidence/spec.toml`` plus any extra spec files)."""
    return _spec.load()


def papers() -> dict[str, Paper]:
    return spec().papers


def claim_from_module(mod: ModuleType, sp: Spec) -> Claim:
    """Build the :class:`Claim` that ``mod`` (with ``ID`` and ``level_X`` functions) registers."""
    cid = getattr(mod, "ID", None)
    if not isinstance(cid, str):
        raise SpecError(f"claim module {mod.__name__} has no string ID")
    entry = sp.claims.get(cid)
    if entry is None:
        raise SpecError(f"{mod.__name__} registers {cid!r}, which has no entry in the spec ({', '.join(sp.files)})")
    if entry.status != "implemented":
        raise SpecError(f"{mod.__name__} registers {cid!r}, whose spec status is {entry.status!r}: "
                        "set it to 'implemented'")
    fns = {lv: getattr(mod, f"level_{lv}") for lv in LEVELS if callable(getattr(mod, f"level_{lv}", None))}
    if set(fns) != set(entry.levels):
        raise SpecError(f"{mod.__name__} ({cid}) defines levels {','.join(fns) or 'none'}, "
                        f"the spec lists {','.join(entry.levels)}")
    key = sp.papers[entry.paper].key
    return Claim(cid, key, entry.statement, entry.latex, entry.levels,
                 {lv: fns[lv] for lv in entry.levels}, mod.__name__)


def _load(only: tuple[str, ...] | None = None) -> tuple[Spec, dict[str, Claim]]:
    """Import the claim modules of every paper (or of the papers in ``only``) and check them against
    the spec."""
    sp = _spec.load()
    if only is not None:
        unknown = [p for p in only if p not in sp.papers]
        if unknown:
            raise SpecError(f"unknown paper(s) {', '.join(unknown)}; the spec has {', '.join(sp.papers)}")
    cache_key = (sp.files, only)
    if cache_key in _LOADED:
        return _LOADED[cache_key]
    reg: dict[str, Claim] = {}
    for paper in sp.papers.values():
        if only is not None and paper.name not in only:
            continue
        try:
            pkg = importlib.import_module(paper.package)
        except ModuleNotFoundError as exc:
            raise SpecError(f"paper {paper.name!r}: its checks package {paper.package!r} cannot be imported "
                            f"({exc})") from exc
        names = getattr(pkg, "CLAIMS", None)
        if not isinstance(names, tuple | list):
            raise SpecError(f"{paper.package} must list its claim modules in a CLAIMS tuple")
        for name in names:
            modname = f"{paper.package}.{name}"
            try:
                mod = importlib.import_module(modname)
            except ModuleNotFoundError as exc:
                if exc.name == modname:
                    raise SpecError(f"{paper.package}.CLAIMS lists {name!r}, but {modname} does not exist") from exc
                raise
            c = claim_from_module(mod, sp)
            if c.id in reg:
                raise SpecError(f"claim {c.id!r} is registered twice: by {reg[c.id].module} and by {modname}")
            if c.id.split(".")[0] != paper.name:
                raise SpecError(f"{modname} registers {c.id!r}, which does not belong to paper {paper.name!r}")
            reg[c.id] = c
    missing = [cid for cid, e in sp.claims.items() if e.status == "implemented" and cid not in reg
               and (only is None or e.paper in only)]
    if missing:
        raise SpecError(f"the spec lists as implemented, but no module registers: {', '.join(missing)}")
    order = [cid for cid in sp.claims if cid in reg]  # spec order
    _LOADED[cache_key] = (sp, {cid: reg[cid] for cid in order})
    return _LOADED[cache_key]


def reset() -> None:
    """Forget what was loaded, so that the next :func:`load_all` reads the spec (and its extra files) again."""
    _LOADED.clear()


def load_all(papers: Iterable[str] | None = None) -> dict[str, Claim]:
    """Every registered claim in spec order, of every paper or of the named ``papers`` only (their claim
    modules are imported once; any disagreement with the spec raises :class:`SpecError`)."""
    return dict(_load(None if papers is None else tuple(sorted(set(papers))))[1])


def select(patterns: Iterable[str] | None) -> list[Claim]:
    """Claims whose ID equals a pattern or starts with ``pattern + '.'`` (``ws`` selects ``ws.*``)."""
    pats = list(patterns or [])
    if not pats:
        return list(load_all().values())
    names = spec().papers
    prefixes = {p.split(".")[0] for p in pats}
    reg = load_all(prefixes if prefixes <= set(names) else None)
    out = []
    for p in pats:
        hits = [c for cid, c in reg.items() if cid == p or cid.startswith(p.rstrip(".") + ".")]
        if not hits:
            raise ValueError(f"no claim matches {p!r}; known: {', '.join(reg)}")
        out.extend(h for h in hits if h not in out)
    order = list(reg)
    return sorted(out, key=lambda c: order.index(c.id))  # spec order, whatever the order of the patterns


def get(cid: str) -> Claim:
    """The registered claim ``cid`` (loads only its paper)."""
    reg = load_all([cid.split(".")[0]])
    if cid not in reg:
        raise ValueError(f"no claim with ID {cid!r}; known: {', '.join(reg)}")
    return reg[cid]
