"""Input validation shared by the closed forms of :mod:`numerics.ws`: float64 arrays with named errors for bad
shapes, dtypes, NaN/inf and labels, and D for the SPEC §1 parameter order."""
from __future__ import annotations

import math

import numpy as np

from numerics.interop import to_numpy

__all__ = ["checked_array", "dim_of", "validate_net"]



def checked_array(name: str, x, ndim: int) -> np.ndarray:
    """``x`` (array-like or tensor) as a float64 array of ``ndim`` dimensions; ValueError naming ``name`` else."""
    x = to_numpy(x)  # torch tensors (any dtype, device, requires_grad) are read exactly
    try:
        a = np.asarray(x)
    except Exception as exc:  # ragged input
        raise ValueError(f"{name} must be a numeric array: {exc}") from exc
    if a.dtype == object or a.dtype.kind not in "biuf":
        raise ValueError(f"{name} has unsupported dtype {a.dtype}; use a real float or integer array")
    if a.dtype.kind == "f" and a.dtype.itemsize > 8:
        raise ValueError(f"{name} has dtype {a.dtype}; pass float64 (use dps=... for extended precision)")
    a = a.astype(np.float64, copy=False)   # no copy of a float64 input: nothing here writes into its inputs
    if a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    # a finite sum proves every entry finite (a NaN or an infinity makes the sum NaN or infinite); only an overflowing
    # or non-finite sum needs the entry-by-entry test (which also names the first bad index)
    if not math.isfinite(float(np.sum(a))) and not np.all(np.isfinite(a)):
        bad = "NaN" if np.isnan(a).any() else "inf"
        raise ValueError(f"{name} contains {bad} at index {tuple(int(i) for i in np.argwhere(~np.isfinite(a))[0])}")
    return a


def validate_net(W, b, v, c, X, y, *, bias: bool = True):
    """Check shapes, finiteness, dtypes and labels; return float64 arrays (b, c are None without bias)."""
    W = checked_array("W", W, 2)
    N, M = W.shape
    if N < 1 or M < 1:
        raise ValueError(f"W must be N×M with N, M >= 1, got shape {W.shape}")
    v = checked_array("v", v, 1)
    X = checked_array("X", X, 2)
    y = checked_array("y", y, 1)
    if v.shape != (N,):
        raise ValueError(f"v must have shape ({N},) to match W of shape {W.shape}, got {v.shape}")
    if X.shape[1] != M:
        raise ValueError(f"X must have M = {M} columns to match W of shape {W.shape}, got shape {X.shape}")
    if X.shape[0] < 1:
        raise ValueError("X must contain at least one sample")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {y.shape}")
    if not np.all((y == 0) | (y == 1)):
        bad = y[(y != 0) & (y != 1)][0]
        raise ValueError(f"labels y must be in {{0, 1}}, found {bad!r}")
    if bias:
        if b is None or c is None:
            raise ValueError("bias=True needs b and c; for the no-bias variant pass bias=False")
        b = checked_array("b", b, 1)
        if b.shape != (N,):
            raise ValueError(f"b must have shape ({N},), got {b.shape}")
        c = float(checked_array("c", c, 0))
    else:
        for name, val in (("b", b), ("c", c)):
            if val is not None and np.any(np.asarray(val, dtype=float) != 0):
                raise ValueError(f"bias=False (D = N(M+1)) has no {name}; pass None, not a nonzero {name}")
        b = c = None
    return W, b, v, c, X, y



def dim_of(N: int, M: int, bias: bool) -> int:
    """D = N(M + 2) + 1 with biases (vec W, b, v, c), N(M + 1) without."""
    return N * (M + 2) + 1 if bias else N * (M + 1)
