"""Structured evidence: what one evidence level of one claim returns.

A level function returns an :class:`Outcome` (passed, metrics, a one-line summary, details, figures).
The registry times it and wraps it into an :class:`Evidence`, which is what the report serialises.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

Level = Literal["S", "P", "A", "F", "E"]
LEVELS: tuple[Level, ...] = ("S", "P", "A", "F", "E")
LEVEL_NAMES = {
    "S": "symbolic",
    "P": "precision",
    "A": "autograd",
    "F": "falsification",
    "E": "experiment",
}

# SPEC §0 "Verdicts": what a reviewer reads about the paper's own statement. ``passed`` says only that the
# suite's evidence was produced and is what it says; the verdict says what that evidence shows.
E_VERDICTS = ("reproduced", "partially reproduced", "not reproduced", "contradicted", "inconclusive")
# claim verdicts, most severe first: a claim's verdict is the most severe of its levels'
SEVERITY = ("error", "refuted", "contradicted", "not proved", "not verified", "does not agree", "not reproduced",
            "inconclusive",
            "partially reproduced", "reproduced", "proved", "verified", "agrees", "no counterexample")


@dataclass(frozen=True)
class Outcome:
    """What a level function returns: pass, its numbers, its pictures and (for E, required) its verdict.

    ``verdict`` is SPEC §0's word for the paper's statement; S, P, A and F levels may leave it to
    :func:`default_verdict`, E levels must give one of :data:`E_VERDICTS`. ``timing`` holds every
    number derived from wall-clock time (throughputs, per-stage seconds): it is the only part of the
    report that may differ between two runs with the same seed.
    """

    passed: bool
    metric: Mapping[str, Any]
    summary: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    figures: tuple[str, ...] = ()
    verdict: str | None = None
    timing: Mapping[str, Any] = field(default_factory=dict)


def _numbers(metric: Mapping[str, Any], word: str) -> list[float]:
    out = []
    for k, v in metric.items():
        if word in k and isinstance(v, int | float | np.floating | np.integer) and not isinstance(v, bool):
            if math.isfinite(float(v)):
                out.append(float(v))
    return out


def default_verdict(level: Level, passed: bool, metric: Mapping[str, Any]) -> str:
    """SPEC §0's verdict of an S, P, A or F level, from its metrics.

    S: ``proved`` (or ``not proved``). P: ``verified to k digits``, k the level's headline ``digits_agreed``
    (or ``min_digits``), else the fewest digits among the metrics whose name contains "digits".
    A: ``agrees to rel. err. e``, e the largest metric named "*rel_err*".
    F: ``refuted`` when a counterexample is confirmed, else ``no counterexample in N cases``.
    """
    if level == "S":
        return "proved" if passed else "not proved"
    if level == "P":
        head = [float(metric[k]) for k in ("digits_agreed", "min_digits") if isinstance(metric.get(k), int | float)]
        ds = head or [d for d in _numbers(metric, "digits") if d > 0]
        return f"verified to {min(ds):.0f} digits" if ds else ("verified" if passed else "not verified")
    if level == "A":
        es = _numbers(metric, "rel_err")
        return f"agrees to rel. err. {max(es):.0e}" if es else ("agrees" if passed else "does not agree")
    if level == "F":
        if metric.get("confirmed", 0):
            return "refuted"
        return f"no counterexample in {metric.get('examples', 0)} cases"
    raise ValueError("an E level must state its verdict (one of " + ", ".join(E_VERDICTS) + ")")


def severity(verdict: str) -> int:
    for i, word in enumerate(SEVERITY):
        if verdict.startswith(word):
            return i
    return 0  # an unknown word is treated as an error: it must be looked at


def claim_verdict(verdicts: Mapping[str, str]) -> str:
    """One claim's verdict: the most severe of its levels' (an E verdict outranks every S/P/A/F pass)."""
    return min(verdicts.values(), key=severity) if verdicts else "not run"


@dataclass(frozen=True)
class Evidence:
    """One evidence level of one claim, as recorded in the report."""

    claim: str
    level: Level
    passed: bool
    metric: Mapping[str, Any]
    summary: str
    seconds: float
    details: Mapping[str, Any] = field(default_factory=dict)
    figures: tuple[str, ...] = ()
    error: str | None = None
    verdict: str = ""
    timing: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "verdict": self.verdict,
            "metric": jsonable(self.metric),
            "summary": self.summary,
            "timing": jsonable({"seconds": round(self.seconds, 3), **self.timing}),
            "details": jsonable(self.details),
            "figures": list(self.figures),
            "error": self.error,
        }


def jsonable(obj: Any) -> Any:
    """Convert numpy/mpmath/sympy scalars and containers into plain JSON values (deterministically)."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        f = float(obj)
        if math.isnan(f) or math.isinf(f):
            return str(f)
        return float(f"{f:.12g}")
    if isinstance(obj, Path):
        return str(obj)
    if obj is None or isinstance(obj, str):
        return obj
    try:  # mpmath mpf, sympy numbers
        return jsonable(float(obj))
    except (TypeError, ValueError):
        return str(obj)


def digits_agreed(value, reference) -> float:
    """Decimal digits to which ``value`` agrees with ``reference``: -log10 of the relative error.

    Works for floats, mpmath numbers and sequences (the worst entry counts). Exact agreement is
    reported as the working precision of mpmath (``mp.dps``), never as infinity.
    """
    import mpmath

    if isinstance(value, list | tuple | np.ndarray):
        vals = [digits_agreed(a, b) for a, b in zip(np.ravel(value), np.ravel(reference), strict=True)]
        return min(vals) if vals else float(mpmath.mp.dps)
    a, b = mpmath.mpf(value), mpmath.mpf(reference)
    err = abs(a - b)
    if err == 0:
        return float(mpmath.mp.dps)
    scale = max(abs(b), mpmath.mpf(10) ** (-mpmath.mp.dps))
    return float(min(mpmath.mp.dps, -mpmath.log10(err / scale)))


def rel_err(value, reference) -> float:
    """max |value - reference| / max(|reference|, tiny), over entries, in float64."""
    v = np.asarray(value, dtype=float)
    r = np.asarray(reference, dtype=float)
    denom = np.maximum(np.max(np.abs(r)), np.finfo(float).tiny)
    return float(np.max(np.abs(v - r)) / denom)
