"""The claim registry: one :class:`Claim` per SPEC ID, one function per evidence level.

Usage, in ``checks/<paper>.py``::

    TRACE = claim("ws.trace", paper="omae2026", statement="closed-form tr H equals ...",
                  latex=r"\\operatorname{tr} H = \\dots")

    @TRACE.level("S")
    def _(ctx: Context) -> Outcome:
        ...
        return Outcome(passed=ok, metric={"sizes": 24}, summary="24 sizes simplify to 0")

The registry times each level, turns exceptions into failed evidence (nothing already computed is
lost), and keeps claims in SPEC order.
"""

from __future__ import annotations

import importlib
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from checks.evidence import LEVELS, Evidence, Level, Outcome

PAPERS = {
    "ws": ("omae2026", "Omae et al. 2026, arXiv 2604.10202: Wolkowicz–Styan bound for the CE Hessian"),
    "flat": ("vardhan2026", "Vardhan, Taheri, Mazumdar 2026, arXiv 2606.04429: flatness of homogeneous nets"),
    "rob": ("shmalo2026", "Shmalo 2026, arXiv 2607.07778: law of robustness for two-layer nets"),
}
# Modules that register claims, in SPEC order. Importing them fills the registry.
CLAIM_MODULES = ("checks.ws", "checks.ws_properties", "checks.ws_experiments", "checks.flatness", "checks.robustness")


@dataclass
class Context:
    """What every level function receives: seeds, where to write, and how to report progress."""

    seed: int = 20260
    report_dir: Path = Path("reports")
    budget: int | None = None  # F: examples per property; None means the claim's default
    quick: bool = False  # smaller experiments (tests use this); the report records it
    progress: Any = None  # a rich.progress.Progress, or None

    def rng(self, salt: str = "") -> np.random.Generator:
        """A generator seeded from (seed, salt): each check gets its own reproducible stream."""
        tag = sum((i + 1) * ord(ch) for i, ch in enumerate(salt))
        return np.random.default_rng([self.seed, tag])

    def figure_path(self, name: str) -> Path:
        d = self.report_dir / "figures"
        d.mkdir(parents=True, exist_ok=True)
        return d / name

    def track(self, iterable: Iterable, description: str, total: int | None = None):
        """Iterate with a progress bar when one is attached."""
        if self.progress is None:
            yield from iterable
            return
        if total is None:
            try:
                total = len(iterable)  # type: ignore[arg-type]
            except TypeError:
                total = None
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
    paper: str
    statement: str
    latex: str
    spec_levels: tuple[Level, ...]
    levels: dict[Level, LevelFn] = field(default_factory=dict)

    def level(self, lv: Level) -> Callable[[LevelFn], LevelFn]:
        if lv not in LEVELS:
            raise ValueError(f"unknown evidence level {lv!r}; expected one of {LEVELS}")
        if lv not in self.spec_levels:
            raise ValueError(f"{self.id}: SPEC does not list level {lv} (it lists {self.spec_levels})")

        def deco(fn: LevelFn) -> LevelFn:
            if lv in self.levels:
                raise ValueError(f"{self.id}: level {lv} registered twice")
            self.levels[lv] = fn
            return fn

        return deco

    def run(self, lv: Level, ctx: Context) -> Evidence:
        t0 = time.perf_counter()
        try:
            out = self.levels[lv](ctx)
            if not isinstance(out, Outcome):
                raise TypeError(f"level function returned {type(out).__name__}, not Outcome")
            return Evidence(self.id, lv, bool(out.passed), dict(out.metric), out.summary,
                            time.perf_counter() - t0, dict(out.details), tuple(out.figures))
        except Exception as exc:  # a crash is a failed level, recorded with its traceback
            return Evidence(self.id, lv, False, {}, f"error: {type(exc).__name__}: {exc}",
                            time.perf_counter() - t0, {"traceback": traceback.format_exc()},
                            error=f"{type(exc).__name__}: {exc}")


_REGISTRY: dict[str, Claim] = {}


def claim(id: str, *, statement: str, latex: str, levels: str) -> Claim:
    """Declare a claim. ``levels`` is the SPEC's level string, e.g. ``"S, P, A"``."""
    prefix = id.split(".")[0]
    if prefix not in PAPERS:
        raise ValueError(f"claim {id!r}: unknown paper prefix {prefix!r}")
    if id in _REGISTRY:
        return _REGISTRY[id]
    spec_levels = tuple(s.strip() for s in levels.split(",") if s.strip())
    c = Claim(id, PAPERS[prefix][0], statement, latex, spec_levels)  # type: ignore[arg-type]
    _REGISTRY[id] = c
    return c


def load_all() -> dict[str, Claim]:
    for mod in CLAIM_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # a paper slice not yet written
            if exc.name != mod:
                raise
    return dict(_REGISTRY)


def select(patterns: Iterable[str] | None) -> list[Claim]:
    """Claims whose ID equals a pattern or starts with ``pattern + '.'`` (``ws`` selects ``ws.*``)."""
    reg = load_all()
    pats = list(patterns or [])
    if not pats:
        return list(reg.values())
    out = []
    for p in pats:
        hits = [c for cid, c in reg.items() if cid == p or cid.startswith(p.rstrip(".") + ".")]
        if not hits:
            raise ValueError(f"no claim matches {p!r}; known: {', '.join(reg)}")
        out.extend(h for h in hits if h not in out)
    return out
