"""Statistics for E-level verdicts: intervals over independent seeds, and the verdict they imply.

An E claim tests the paper's own quantitative statement (a sign, a slope, a rate, a correlation). The
criterion is fixed before the run, in the claim module, as a :class:`StatementTest` without numbers; the
run fills in the per-seed effects; :meth:`StatementTest.decide` turns the interval into SPEC §0's verdict:

* ``sign`` (the paper says the effect is > 0, or < 0): the interval excludes 0 on the paper's side →
  ``reproduced``; on the other side → ``contradicted``; contains 0 → ``not reproduced``.
* ``rate`` (the paper says the effect is ≈ r, e.g. a slope): the interval contains r → ``reproduced``;
  excludes r but has r's sign → ``partially reproduced`` (the direction holds, the rate does not);
  excludes 0 on the other side → ``contradicted``; else ``not reproduced``.
* ``at_least`` (a one-sided rate, "grows at least like"): lower end ≥ r → ``reproduced``; the interval
  contains r → ``reproduced`` too (consistent); entirely below r but > 0 → ``partially reproduced``.

Intervals: the percentile bootstrap over seeds (each seed has its own data, so seeds are the independent
units), 95 %, from a seeded generator, so the report is deterministic. With fewer than 3 seeds no interval
is formed and the verdict is ``not reproduced`` (a quick run's verdicts are not evidence).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

Kind = Literal["sign", "rate", "at_least"]
LEVEL = 0.95
N_BOOT = 4000
MIN_SEEDS = 3


def bootstrap_ci(values: Sequence[float], stat: Callable[[np.ndarray], float] = np.mean, *,
                 level: float = LEVEL, n_boot: int = N_BOOT, seed: int = 0) -> tuple[float, float, float]:
    """(estimate, lo, hi): ``stat`` of the values and its percentile-bootstrap interval over them."""
    v = np.asarray([x for x in values if np.isfinite(x)], float)
    if len(v) == 0:
        return float("nan"), float("nan"), float("nan")
    est = float(stat(v))
    if len(v) < MIN_SEEDS:
        return est, float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(v), size=(n_boot, len(v)))
    boot = np.array([stat(v[i]) for i in idx])
    a = (1 - level) / 2
    return est, float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a))


def decide(kind: Kind, lo: float, hi: float, *, target: float = 0.0, sign: int = 1) -> str:
    """SPEC §0's E verdict from an interval [lo, hi] (see the module docstring)."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "not reproduced"
    if kind == "sign":
        lo_s, hi_s = sorted((sign * lo, sign * hi))
        if lo_s > 0:
            return "reproduced"
        if hi_s < 0:
            return "contradicted"
        return "not reproduced"
    r = target
    if kind == "rate":
        if lo <= r <= hi:
            return "reproduced"
        s = np.sign(r) or 1
        if s * lo > 0 and s * hi > 0:
            return "partially reproduced"
        if s * hi < 0:
            return "contradicted"
        return "not reproduced"
    if kind == "at_least":
        if hi >= r:
            return "reproduced"
        if lo > 0:
            return "partially reproduced"
        if hi < 0:
            return "contradicted"
        return "not reproduced"
    raise ValueError(f"unknown statement kind {kind!r}")


def combine(verdicts: Sequence[str]) -> str:
    """Several sub-statements of one claim: all reproduced → reproduced; any contradicted → contradicted;
    none reproduced → not reproduced; else partially reproduced."""
    vs = list(verdicts)
    if not vs:
        return "not reproduced"
    if any(v == "contradicted" for v in vs):
        return "contradicted"
    if all(v == "reproduced" for v in vs):
        return "reproduced"
    if any(v in ("reproduced", "partially reproduced") for v in vs):
        return "partially reproduced"
    return "not reproduced"


@dataclass
class StatementTest:
    """The paper's quantitative statement, its effect and the criterion, fixed before the run."""

    paper_statement: str  # one line: what the paper says
    effect: str  # the measured quantity, e.g. "slope of log ratio against log n"
    kind: Kind
    target: float = 0.0  # the rate for "rate"/"at_least"; for "sign", the sign is ``sign``
    sign: int = 1
    symbol: str = ""  # a short name of the effect for tables, e.g. "ρ_s(λ_sup, F1)"
    criterion: str = ""
    per_seed: list[float] = field(default_factory=list)
    estimate: float = float("nan")
    ci: tuple[float, float] = (float("nan"), float("nan"))
    seeds: int = 0
    verdict: str = "not reproduced"
    note: str = ""

    def __post_init__(self):
        if not self.criterion:
            pct = int(round(LEVEL * 100))
            self.criterion = {
                "sign": f"{pct}% bootstrap interval over seeds of the mean effect excludes 0 on the paper's side",
                "rate": f"{pct}% bootstrap interval over seeds contains the paper's rate {self.target:.4g}",
                "at_least": f"{pct}% bootstrap interval over seeds reaches the paper's rate {self.target:.4g}",
            }[self.kind]

    def decide(self, per_seed: Sequence[float], *, seed: int = 0) -> StatementTest:
        self.per_seed = [float(x) for x in per_seed]
        self.seeds = int(np.sum(np.isfinite(self.per_seed)))
        self.estimate, lo, hi = bootstrap_ci(self.per_seed, seed=seed)
        self.ci = (lo, hi)
        self.verdict = decide(self.kind, lo, hi, target=self.target, sign=self.sign)
        return self

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci"] = list(self.ci)
        return d


# ------------------------------------------------------------------ SPEC §0: power, regions and `inconclusive`
@dataclass(frozen=True)
class Regions:
    """SPEC §0's split of the effect axis by δ, the smallest effect that matters, stated before the run.

    ``statement``: the open interval (a, b) of effects the paper's statement allows (its finite ends belong to
    the negation: "a boundary point belongs to the negation region"). ``negation``: the closed intervals where the
    statement is false. ``opposite``: for a one-sided statement, the closed interval of the opposite sign (a part
    of the negation; an interval inside it is `contradicted`). ±inf ends are allowed.
    """

    delta: float
    statement: tuple[float, float]
    negation: tuple[tuple[float, float], ...]
    opposite: tuple[float, float] | None = None
    describe: str = ""


def region_verdict(lo: float, hi: float, regions: Regions, *, units: int, planned: int) -> str:
    """SPEC §0's table: the interval [lo, hi] of the effect → `reproduced` (inside the statement region),
    `contradicted` (inside the opposite-sign region), `not reproduced` (inside the negation region), else
    `inconclusive` (it meets two regions, is not a finite interval, or the run has fewer units than planned)."""
    if units < planned or not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        return "inconclusive"
    a, b = regions.statement
    if a < lo and hi < b:
        return "reproduced"
    if regions.opposite is not None and regions.opposite[0] <= lo and hi <= regions.opposite[1]:
        return "contradicted"
    if any(c <= lo and hi <= d for c, d in regions.negation):
        return "not reproduced"
    return "inconclusive"


def units_for_width(sd: float, width: float, level: float = LEVEL) -> int:
    """Independent units that make a normal-theory interval of the mean (z·sd/√k each side) no wider than
    ``width``: k = ⌈(2 z sd / width)²⌉, at least :data:`MIN_SEEDS`."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + level / 2)
    return max(MIN_SEEDS, int(np.ceil((2 * z * sd / width) ** 2)))


def units_for_power(sd: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Independent units that detect a shift of ``delta`` in the mean with the given power by a two-sided level-α
    normal test (SPEC §0's other criterion): k = ⌈((z_{1−α/2} + z_{power})·sd/δ)²⌉, at least :data:`MIN_SEEDS`."""
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return max(MIN_SEEDS, int(np.ceil((z * sd / delta) ** 2)))


def achieved_power(sd: float, delta: float, units: int, alpha: float = 0.05) -> float:
    """The power the run had to detect ``delta`` (two-sided level-α normal test, the observed per-unit SD):
    Φ(δ√k/sd − z_{1−α/2}) + Φ(−δ√k/sd − z_{1−α/2}); NaN when sd or k cannot say."""
    from statistics import NormalDist

    if not (units >= 2 and sd > 0 and math.isfinite(sd)):
        return math.nan
    nd, z = NormalDist(), NormalDist().inv_cdf(1 - alpha / 2)
    shift = delta * math.sqrt(units) / sd
    return nd.cdf(shift - z) + nd.cdf(-shift - z)


def combine_parts(words: dict[str, str]) -> tuple[str, str]:
    """SPEC §0's compound statement: (the claim's word, the words of its parts named). Parts with one word give that
    word; a contradicted part makes the claim contradicted; otherwise parts with different words give `partially
    reproduced`, with each part's word named (e.g. "bound reproduced, rate not reproduced")."""
    named = ", ".join(f"{k} {v}" for k, v in words.items())
    vs = set(words.values())
    if len(vs) == 1:
        return vs.pop(), named
    if "contradicted" in vs:
        return "contradicted", named
    return "partially reproduced", named
