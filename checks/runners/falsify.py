"""Two-stage property-based falsification.

Stage 1 screens each Hypothesis example in float64 and returns a *violation margin* (> 0 means the
property looks violated). Stage 2 re-evaluates every candidate with mpmath at 50 digits; only a
confirmed margin > 0 counts as a counterexample. Each confirmed counterexample is written as a JSON
reproducer the moment it is found (so an interrupted run keeps it), and Hypothesis then shrinks it;
the shrunk one is saved too. The search is Hypothesis's generation (the strategies aim at degenerate corners)
and its shrinking, without its target phase (:data:`ENGINE_REVISION` says why).

A property that reports nothing is only as good as its search: ``tests/test_planted_bugs.py`` shows
that these properties catch planted bugs within the default budget.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import seed as hyp_seed
from hypothesis.errors import Unsatisfiable

from checks.evidence.outcome import Outcome, jsonable
from checks.evidence.tol import TOL


class NotApplicable(Exception):
    """Raised by a screen when a generated case falls outside the property's hypotheses."""


class Undecided(Exception):
    """Raised by a proved confirmation that could prove neither the hit nor its refutation (balls too wide): the
    candidate is counted as undecided, never as refuted."""


class SuiteFailed(Exception):
    """Raised by a confirmation when the suite under test itself fails on a valid case (an error, or a non-number
    where it claims a number): a confirmed counterexample to the suite whatever the precision, with margin
    :data:`SUITE_FAILED_MARGIN`; the message is saved in the reproducer as ``suite_failure``."""


SUITE_FAILED_MARGIN = 1.0


@dataclass(frozen=True)
class Property:
    """A falsifiable statement.

    ``screen(case) -> float`` is the float64 violation margin, ``confirm(case) -> float`` the
    mpmath (dps = 50) one; both are > 0 exactly when the statement fails on ``case``. Either may
    raise :class:`NotApplicable`. ``to_json`` must give enough to rebuild the case.
    """

    name: str
    strategy: Any
    screen: Callable[[Any], float]
    confirm: Callable[[Any], float]
    to_json: Callable[[Any], Any] = jsonable
    from_json: Callable[[Any], Any] | None = None  # for ``python -m checks replay``
    budget: int = 200  # default examples
    # raised whenever the screen or the confirmation changes what a shard finds: a campaign's journal is keyed by
    # it, so ``--resume`` never mixes shards of two revisions (ws.bound/moments: 2, its proved arb confirmation)
    revision: int = 1
    # two sides (SPEC §5): a float64 margin in (−ties, 0] is confirmed too, so the exact path decides every near-tie
    # (an equality case the float screen, with its tolerance, would call "holds" without asking the exact path)
    ties: float = 0.0
    # cases every run tries first, before the generated ones (outside Hypothesis: never shrunk, and one outside
    # the hypotheses is an error): the statement's equality and extremal cases, which a strategy draws only by chance
    examples: tuple = ()

    def __post_init__(self):
        PROPERTIES.setdefault(self.name, self)  # the first (the module-level real one) keeps the name


PROPERTIES: dict[str, Property] = {}

# Hypothesis draws part of its examples from the constants in the *local* modules loaded at the time
# (``hypothesis.internal.conjecture.providers._get_local_constants``: every module outside site-packages,
# so all of checks, numerics and proofs). Which of those are loaded depends on which claims ran before, so a
# property's examples would depend on the run's order and selection: ``verify --claims X`` and the full run
# would draw different cases, and so would two worker processes. Loading every module of the three packages
# before the first example makes the pool a function of the source tree alone, the same in this process, in a
# forked ``verify --jobs`` worker and in a Dask worker (which imports ``checks.runners.campaign`` to run a shard).
# Left out: entry points (``__main__``), the bench (its peers are an optional extra) and the Dask worker plugin
# (it imports ``distributed``, 1 s, and has no literal but its docstrings).
_NOT_PRELOADED = ("checks.runners.bench", "checks.runners.campaign_plugin")
_preloaded = False


def preload_local_modules() -> None:
    """Import every module of checks, numerics and proofs once (see the comment above); idempotent."""
    global _preloaded
    if _preloaded:
        return
    import importlib
    import pkgutil

    for pkg in ("checks", "numerics", "proofs"):
        root = importlib.import_module(pkg)
        for info in sorted(pkgutil.walk_packages(root.__path__, pkg + "."), key=lambda i: i.name):
            name = info.name
            if name.rsplit(".", 1)[-1] == "__main__" or name.startswith(_NOT_PRELOADED):
                continue
            importlib.import_module(name)
    _preloaded = True


def replay(path: Path) -> dict[str, Any]:
    """Re-run both stages on a saved reproducer; returns the fresh margins."""
    data = json.loads(Path(path).read_text())
    from checks.evidence.registry import load_all

    load_all([str(data["property"]).split(".")[0]])  # registers the paper's real properties
    prop = PROPERTIES.get(data["property"])
    if prop is None or prop.from_json is None:
        raise ValueError(f"{path}: property {data['property']!r} is unknown or cannot rebuild cases")
    case = prop.from_json(data["case"])
    try:
        margin, escalated, dps = confirm_twice(prop, case, data["case"])
        failure = None
    except SuiteFailed as exc:  # no margins were computed: the suite's own failure, with its reason
        margin, escalated = SUITE_FAILED_MARGIN, None
        dps, failure = escalated_dps(data["case"]), str(exc)
    return {"property": prop.name, "float64_margin": float(prop.screen(case)),
            "mpmath_margin": margin, "escalated_margin": escalated, "escalated_dps": dps, "suite_failure": failure}


def _decades(case_json: Any) -> float:
    """Decimal decades spanned by the nonzero finite numbers of a case (0 for a case with none)."""
    mags: list[float] = []

    def walk(x):
        if isinstance(x, bool) or x is None:
            return
        if isinstance(x, (int, float)):
            if x != 0 and math.isfinite(x):
                mags.append(math.log10(abs(x)))
        elif isinstance(x, str):
            return
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    walk(case_json)
    return max(mags) - min(mags) if mags else 0.0


def escalated_dps(case_json: Any) -> int:
    """The precision of the second confirmation: twice ``confirm_dps`` plus ``confirm_digits_per_decade`` digits per
    decade the case's numbers span (capped at 4000). A 50-digit confirmation can be wrong in the same way as the
    float screen when the case mixes magnitudes: with W = v = 2⁻¹²⁶ the BCE Hessian's entry ∂²L/∂W∂v is
    q·t² + (σ(z) − ½) with σ(z) − ½ ≈ t²/4 ≈ 1e-77, which 50 (or 70) digits round away."""
    base = int(TOL["confirm_dps"])
    extra = TOL["confirm_digits_per_decade"] * _decades(case_json)
    return int(min(4000, 2 * base + math.ceil(extra)))


def confirm_twice(prop: Property, case: Any, case_json: Any) -> tuple[float, float | None, int]:
    """(margin at ``confirm_dps``, margin at :func:`escalated_dps` or None when the first is not > 0, that dps).
    A hit is confirmed only when both are > 0: a sign that flips with precision was rounding, not a counterexample.
    :class:`SuiteFailed` from either confirmation propagates, and the caller counts it as confirmed: the suite
    failing on a valid case at the precision the property asks for is its defect, whatever another precision gives."""
    first = float(prop.confirm(case))  # SuiteFailed propagates: the caller records why
    dps = escalated_dps(case_json)
    if not first > 0:
        return first, None, dps
    with TOL.overriding("confirm_dps", dps):
        second = float(prop.confirm(case))
    return first, second, dps


@dataclass
class FalsifyResult:
    name: str
    examples: int = 0  # generated examples up to the first confirmed hit (all of them if none)
    calls: int = 0  # every evaluation, Hypothesis's shrinking of a hit included (throughput counts these)
    not_applicable: int = 0  # of the calls
    candidates: int = 0  # float64 screen hits
    confirmed: int = 0  # confirmed at 50 digits and at the escalated precision (shrinking steps included)
    precision_artifacts: int = 0  # candidates that 50 digits confirmed and the escalated precision refuted
    undecided: int = 0  # candidates a proved confirmation could neither confirm nor refute (Undecided)
    ties: int = 0  # float64 margins in (−ties, 0] sent to the exact confirmation (Property.ties)
    explicit: int = 0  # the property's explicit cases tried (Property.examples)
    worst_screen: float = -math.inf
    worst_explicit: float = -math.inf  # the largest float64 margin over the explicit cases (0: the bound attained)
    counterexample: Any = None  # JSON of the shrunk confirmed counterexample
    counterexample_margin: float | None = None
    reproducers: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def found(self) -> bool:
        return self.counterexample is not None

    @property
    def shrink_calls(self) -> int:
        return self.calls - self.examples

    @property
    def examples_per_second(self) -> float:
        """Throughput: evaluations (screen, and confirm where flagged) per second."""
        return self.calls / self.seconds if self.seconds > 0 else float("nan")

    def metric(self) -> dict[str, Any]:
        return {
            "examples": self.examples,
            "shrink_calls": self.shrink_calls,
            "float64_candidates": self.candidates,
            "confirmed": self.confirmed,
            "precision_artifacts": self.precision_artifacts,
            "undecided": self.undecided,
            "ties_confirmed": self.ties,
            "worst_margin": self.worst_screen,
            # only for a property with explicit cases (Property.examples)
            **({"explicit_cases": self.explicit, "worst_explicit_margin": self.worst_explicit}
               if self.explicit else {}),
        }


class _Confirmed(AssertionError):
    pass


ENGINE_REVISION = 3
"""Raised with every change to how :func:`falsify` searches (a campaign's journal is keyed by it, so ``--resume``
never mixes shards of two engines).

1. ``hypothesis.target`` on the margin, with ``Phase.target``.
2. The margin rounded to 3 significant digits as the target (a margin is often a tolerance minus float64 noise,
   and the hill climber climbed the noise).
3. No target phase. Why: its hill climber is budgeted by valid examples only, and its attempts cost datatree
   simulations that grow with the choice sequence. In the 10⁶-example ws.bound campaign about one shard in ten
   (revision 1) and one in thirty (revision 2) took 100–1 100 s instead of 4–12 s: one profiled shard made 201 065
   cached calls in ``optimise_targets`` for 382 examples. Two such shards idled a 2-worker campaign for 20 minutes
   at a time. Every planted bug and mutant is still found without it, and the first test run under revision 3
   found a real suite defect the targeted search had missed (``tests/test_flatness_planted_bugs.py``)."""


def save_reproducer(out_dir: Path, prop: Property, case_json: Any, seed: int,
                    screen_margin: float, confirm_margin: float, suite_failure: str | None = None) -> Path:
    from checks.runners.report import versions

    out_dir.mkdir(parents=True, exist_ok=True)
    payload = {
        "property": prop.name,
        "seed": seed,
        "case": case_json,
        "float64_margin": screen_margin,
        "mpmath_margin": confirm_margin,
        "confirm_dps": TOL["confirm_dps"],
        "escalated_dps": escalated_dps(case_json),
        "versions": versions(),
        "replay": "python -m checks replay {this file}",
    }
    if suite_failure is not None:  # the suite itself failed on this case (SuiteFailed): why
        payload["suite_failure"] = suite_failure
    text = json.dumps(jsonable(payload), indent=2, sort_keys=True)
    digest = hashlib.sha1(json.dumps(jsonable(case_json), sort_keys=True).encode()).hexdigest()[:10]
    path = out_dir / f"{prop.name.replace('/', '_')}-{digest}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)  # atomic: an interrupted write never leaves half a reproducer
    return path


def falsify(prop: Property, *, budget: int | None = None, seed: int = 0,
            out_dir: Path | str | None = None, on_save: Callable[[Path], None] | None = None) -> FalsifyResult:
    """Search for a confirmed counterexample to ``prop`` with ``budget`` Hypothesis examples. ``on_save`` is
    called with the path of every reproducer as soon as it is written (a campaign shard sends it on)."""
    preload_local_modules()
    res = FalsifyResult(prop.name)
    out_dir = None if out_dir is None else Path(out_dir)
    n = int(budget if budget is not None else prop.budget)
    if n < 1:
        raise ValueError(f"budget must be a positive number of examples, got {budget!r}")
    last: dict[str, Any] = {}
    first_hit: list[int] = []

    def body(case, is_explicit=False):
        res.calls += 1
        res.explicit += is_explicit
        try:
            m = float(prop.screen(case))
        except NotApplicable:
            res.not_applicable += 1
            if is_explicit:
                raise ValueError(f"{prop.name}: an explicit case is outside the property's hypotheses") from None
            assume(False)
            return
        if math.isnan(m):
            m = math.inf  # a NaN from an evaluator is itself suspicious: confirm it
        res.worst_screen = max(res.worst_screen, m)
        if is_explicit:
            res.worst_explicit = max(res.worst_explicit, m)
        if m <= -prop.ties or (m <= 0 and not prop.ties):
            return
        if m <= 0:
            res.ties += 1
        else:
            res.candidates += 1
        cj = prop.to_json(case)
        failure = None
        try:
            c0, c, _ = confirm_twice(prop, case, cj)
        except NotApplicable:
            return
        except Undecided:
            res.undecided += 1
            return
        except SuiteFailed as exc:
            c0 = c = SUITE_FAILED_MARGIN
            failure = str(exc)
        if not c0 > 0:
            return
        if not (c is not None and c > 0):
            res.precision_artifacts += 1  # confirmed at confirm_dps, refuted at the escalated precision
            return
        res.confirmed += 1
        if res.confirmed == 1:
            first_hit.append(res.calls)
        last.update(case=cj, screen=m, confirm=c, failure=failure)
        if not res.reproducers and out_dir is not None:  # the first hit is saved at once
            res.reproducers.append(str(save_reproducer(out_dir, prop, cj, seed, m, c, failure)))
            if on_save is not None:
                on_save(Path(res.reproducers[-1]))
        raise _Confirmed(f"{prop.name}: confirmed margin {c:.3e}")

    hyp = settings(max_examples=n, database=None, deadline=None, print_blob=False, report_multiple_bugs=False,
                   phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
    run = hyp(hyp_seed(seed)(given(prop.strategy)(lambda case: body(case))))
    t0 = time.perf_counter()
    try:
        for c in prop.examples:  # the explicit cases first, outside Hypothesis (no shrinking of a given case)
            body(c, is_explicit=True)
        run()
    except _Confirmed:
        res.counterexample = last["case"]
        res.counterexample_margin = last["confirm"]
        if out_dir is not None:
            p = str(save_reproducer(out_dir, prop, last["case"], seed, last["screen"], last["confirm"],
                                    last["failure"]))
            if p not in res.reproducers:
                res.reproducers.append(p)
                if on_save is not None:
                    on_save(Path(p))
    except Unsatisfiable:
        pass
    finally:
        res.seconds = time.perf_counter() - t0
        res.examples = first_hit[0] if first_hit else res.calls
    return res


def property_budget(ctx, prop: Property) -> int:
    """Examples for ``prop``: ``--budget`` when given, else the property's default (a smoke run in quick mode:
    a twentieth, at least 3)."""
    if ctx.budget is not None:
        return int(ctx.budget)
    return max(prop.budget // 20, 3) if ctx.quick else prop.budget


def property_seed(ctx, salt: str, prop: Property) -> int:
    """The Hypothesis seed of ``prop`` within a claim: derived from (ctx.seed, claim salt, property name)."""
    return int(ctx.rng(f"{salt}/{prop.name}").integers(2**31))


def run_properties(ctx, props, salt: str, *, expect_found: bool = False,
                   ignore: tuple[type[Warning], ...] = ()) -> Outcome:
    """The F level of a claim, for every paper: falsify each property and pass iff none has a confirmed
    counterexample (with ``expect_found``: iff each has one, for planted-bug controls). ``salt`` is the
    claim ID. Warnings of the ``ignore`` categories are silenced (a strategy that draws degenerate cases
    on purpose expects them). With a campaign attached (``ctx.campaign``: ``--workers``, ``--scheduler``,
    ``--shards``) each property runs as seed shards on Dask (:mod:`checks.runners.campaign`)."""
    import warnings

    results, engine = [], None
    props = list(props)
    if getattr(ctx, "campaign", None) is not None:
        results, engine = ctx.campaign.falsify_many(ctx, props, [property_seed(ctx, salt, p) for p in props],
                                                    [property_budget(ctx, p) for p in props], ignore)
    else:
        with warnings.catch_warnings():
            for cat in ignore:
                warnings.simplefilter("ignore", cat)
            for p in ctx.track(props, f"{salt} falsify"):
                results.append(falsify(p, budget=property_budget(ctx, p), seed=property_seed(ctx, salt, p),
                                       out_dir=ctx.report_dir / "counterexamples"))
    metric = {
        "examples": sum(r.examples for r in results),
        "applicable": sum(r.calls - r.not_applicable for r in results),
        "shrink_calls": sum(r.shrink_calls for r in results),
        "not_applicable": sum(r.not_applicable for r in results),
        "float64_candidates": sum(r.candidates for r in results),
        "confirmed": sum(r.confirmed for r in results),
        "undecided": sum(r.undecided for r in results),
        "worst_margin": max((r.worst_screen for r in results), default=-math.inf),
        "ties_confirmed": sum(r.ties for r in results),
        "explicit_cases": sum(r.explicit for r in results),
    }
    timing = {"examples_per_s": round(sum(r.calls for r in results) / max(sum(r.seconds for r in results), 1e-9), 1),
              "per_property_s": {r.name: round(r.seconds, 3) for r in results}}
    summary = "; ".join(f"{r.name}: {r.examples} ex ({r.not_applicable} n/a), {r.candidates} float64 hits, "
                        f"{r.confirmed} confirmed" + (f", {r.undecided} undecided" if r.undecided else "")
                        for r in results)
    if engine is not None:
        timing["campaign"] = engine
        # the summary stays a function of (seed, budget, shards): throughputs and worker addresses differ between
        # two identical campaigns, so they live only under ``timing.campaign``
        summary += f" [campaign: {engine['shards_run']} shards run, {engine['shards_resumed']} resumed]"
    passed = all(r.found == expect_found for r in results)
    return Outcome(passed, metric, summary,
                   details={r.name: {**r.metric(), "not_applicable": r.not_applicable,
                                     "counterexample": r.counterexample, "reproducers": r.reproducers}
                            for r in results}, timing=timing)
