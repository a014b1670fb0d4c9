"""Input validation shared by the closed forms of :mod:`numerics.ws`: float64 arrays with named errors for bad
shapes, dtypes, NaN/inf and labels, and D for the SPEC §1 parameter order."""
from __future__ import annotations

import math

import numpy as np

from numerics.interop import to_numpy

__all__ = ["checked_array", "dim_of", "softmax_dim", "validate_net", "validate_softmax_net"]



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


def softmax_dim(N: int, M: int, C: int, bias: bool) -> int:
    """D = N(M+1) + C(N+1) with biases (θ = (vec W, b, vec V, c)), N(M+C) without."""
    return N * (M + 1) + C * (N + 1) if bias else N * (M + C)


def validate_softmax_net(W, b, V, c, X, y, *, bias: bool = True):
    """Check shapes, finiteness and labels; return float64 arrays and integer labels (b, c None without bias)."""
    W = checked_array("W", W, 2)
    N, M = W.shape
    if N < 1 or M < 1:
        raise ValueError(f"W must be N×M with N, M >= 1, got shape {W.shape}")
    V = checked_array("V", V, 2)
    if V.shape[1] != N:
        raise ValueError(f"V must be C×N with N = {N} columns to match W of shape {W.shape}, got {V.shape}")
    C = V.shape[0]
    if C < 2:
        raise ValueError(f"softmax needs C >= 2 classes (V has {C} row); for one logit use ce_hessian_moments (BCE)")
    X = checked_array("X", X, 2)
    if X.shape[1] != M:
        raise ValueError(f"X must have M = {M} columns to match W of shape {W.shape}, got shape {X.shape}")
    if X.shape[0] < 1:
        raise ValueError("X must contain at least one sample")
    yr = checked_array("y", y, 1)
    if yr.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X, got {yr.shape}")
    bad = (yr != np.round(yr)) | (yr < 0) | (yr > C - 1)
    if bad.any():
        raise ValueError(f"labels y must be integers in 0..{C - 1} (C = {C} classes), found {yr[bad][0]!r}")
    yi = yr.astype(np.int64)
    if bias:
        if b is None or c is None:
            raise ValueError("bias=True needs b and c; for the no-bias variant pass bias=False")
        b = checked_array("b", b, 1)
        if b.shape != (N,):
            raise ValueError(f"b must have shape ({N},), got {b.shape}")
        c = checked_array("c", c, 1)
        if c.shape != (C,):
            raise ValueError(f"c must have shape ({C},) to match V of shape {V.shape}, got {c.shape}")
    else:
        for name, val in (("b", b), ("c", c)):
            if val is not None and np.any(np.asarray(to_numpy(val), dtype=float) != 0):
                raise ValueError(f"bias=False (D = N(M+C)) has no {name}; pass None, not a nonzero {name}")
        b = c = None
    return W, b, V, c, X, yi
