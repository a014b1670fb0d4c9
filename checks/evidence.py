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

@dataclass(frozen=True)
class Outcome:
    """What a level function returns: the verdict, its numbers and its pictures."""

    passed: bool
    metric: Mapping[str, Any]
    summary: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)
    figures: tuple[str, ...] = ()


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

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "metric": jsonable(self.metric),
            "summary": self.summary,
            "seconds": round(self.seconds, 3),
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
