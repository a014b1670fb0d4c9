r"""The Wolkowicz–Styan eigenvalue bounds from the first two spectral moments (SPEC §1).

Wolkowicz & Styan 1980, "Bounds for eigenvalues using traces", Linear Algebra Appl. 29, 471–506, Thm 2.1 and
Cor. 2.1: for a D×D matrix with real spectrum, m = tr A / D and s² = tr A²/D − m²,
m + s/√(D−1) ≤ λ_max ≤ m + s√(D−1) and m − s√(D−1) ≤ λ_min ≤ m − s/√(D−1). They need nothing of the
Hessian but its moments, which :mod:`numerics.ws.moments` (binary), :mod:`numerics.ws.softmax` and
:mod:`numerics.ws.deep` compute in closed form.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np

__all__ = ["WSBounds", "ws_bounds"]

@dataclass(frozen=True)
class WSBounds:
    """Wolkowicz–Styan bounds from (tr A, tr A², D) for any D×D matrix with real spectrum."""

    mean: Any  # m = tr A / D
    std: Any  # s = sqrt(tr A²/D − m²)
    dim: int
    lmax_lower: Any  # m + s/√(D−1)
    lmax_upper: Any  # m + s√(D−1)   (λ_sup in the paper)
    lmin_lower: Any  # m − s√(D−1)
    lmin_upper: Any  # m − s/√(D−1)

    def kth(self, k: int) -> tuple[Any, Any]:
        """Bounds (lower, upper) on the k-th largest eigenvalue, k = 1..D:
        m − s√((k−1)/(D−k+1)) ≤ λ_k ≤ m + s√((D−k)/k)."""
        D = self.dim
        if not (isinstance(k, int | np.integer) and 1 <= k <= D):
            raise ValueError(f"k must be an integer in 1..{D}, got {k!r}")
        k, mp = int(k), isinstance(self.std, mpmath.mpf)
        sqrt = mpmath.sqrt if mp else np.sqrt

        def q(a: int, b: int):  # the ratios in the bound's own precision, not as Python floats
            return mpmath.mpf(a) / b if mp else a / b

        return self.mean - self.std * sqrt(q(k - 1, D - k + 1)), self.mean + self.std * sqrt(q(D - k, k))


def ws_bounds(trace, trace_sq, dim: int, *, var_tol=None) -> WSBounds:
    """The four Wolkowicz–Styan eigenvalue bounds (and, via ``.kth``, the k-th eigenvalue form).

    ``trace`` and ``trace_sq`` may be floats or mpmath numbers; the result uses the same arithmetic.
    Rounding can make tr A²/D − m² slightly negative for a multiple of the identity; it is clipped
    to 0 only when within 64 ulps of 0 relative to tr A²/D (or within ``var_tol``, a bound on its error that the
    caller knows, e.g. from the inputs' own radii), and otherwise is an error.
    """
    if not isinstance(dim, int | np.integer) or isinstance(dim, bool):
        raise ValueError(f"dim must be an integer, got {type(dim).__name__}")
    if dim < 2:
        raise ValueError(f"dim must be >= 2 for the Wolkowicz–Styan bounds (they divide by D − 1), got {dim}")
    mp = isinstance(trace, mpmath.mpf) or isinstance(trace_sq, mpmath.mpf)
    if mp:
        tr, tr2 = mpmath.mpf(trace), mpmath.mpf(trace_sq)
        if not (mpmath.isfinite(tr) and mpmath.isfinite(tr2)):
            raise ValueError("trace and trace_sq must be finite")
        sqrt, eps = mpmath.sqrt, mpmath.eps
    else:
        tr, tr2 = float(trace), float(trace_sq)
        if not (np.isfinite(tr) and np.isfinite(tr2)):
            raise ValueError(f"trace and trace_sq must be finite, got {trace!r}, {trace_sq!r}")
        sqrt, eps = np.sqrt, np.finfo(float).eps
    if tr2 < 0:
        raise ValueError(f"trace_sq = tr A² must be >= 0 for a real spectrum, got {trace_sq!r}")
    m = tr / dim
    var = tr2 / dim - m * m
    if var < 0:
        if -var > 64 * eps * (tr2 / dim) and not (var_tol is not None and -var <= var_tol):
            raise ValueError(
                f"tr A²/D − (tr A/D)² = {float(var):.3e} < 0: no real spectrum has these moments"
            )
        var = var * 0
    s = sqrt(var)
    r = sqrt(dim - 1)
    return WSBounds(m, s, int(dim), m + s / r, m + s * r, m - s * r, m - s / r)

