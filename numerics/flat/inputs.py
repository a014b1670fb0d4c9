"""Input validation shared by every evaluator of :mod:`numerics.flat`: a clear ValueError, never a NaN."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["as_array", "check_inputs"]


def as_array(x: Any, name: str, ndim: int) -> np.ndarray:
    """``x`` as a finite float64 array with ``ndim`` dimensions, or ValueError naming ``name`` and the reason."""
    from numerics.interop import to_numpy

    x = to_numpy(x)  # torch tensors (any dtype, device, requires_grad) are read exactly
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name}: cannot convert to an array ({exc})") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{name}: unsupported dtype {arr.dtype} (need real floats or integers)")
    if arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or inf")
    return arr


def check_inputs(a=None, Theta=None, X=None, y=None) -> dict[str, np.ndarray]:
    """The given ones of a (m,), Theta (m, d), X (n, d), y (n,) as float64 arrays with matching shapes."""
    out = {}
    if Theta is not None:
        out["Theta"] = as_array(Theta, "Theta", 2)
        if out["Theta"].shape[0] == 0:
            raise ValueError("Theta: need at least one neuron (m >= 1)")
    if a is not None:
        out["a"] = as_array(a, "a", 1)
        if Theta is not None and out["a"].shape[0] != out["Theta"].shape[0]:
            raise ValueError(f"a has {out['a'].shape[0]} entries but Theta has {out['Theta'].shape[0]} rows")
    if X is not None:
        out["X"] = as_array(X, "X", 2)
        if out["X"].shape[0] == 0:
            raise ValueError("X: need at least one sample")
        if Theta is not None and out["X"].shape[1] != out["Theta"].shape[1]:
            raise ValueError(f"X has d = {out['X'].shape[1]} columns but Theta has d = {out['Theta'].shape[1]}")
    if y is not None:
        out["y"] = as_array(y, "y", 1)
        if X is not None and out["y"].shape[0] != out["X"].shape[0]:
            raise ValueError(f"y has {out['y'].shape[0]} entries but X has {out['X'].shape[0]} rows")
    return out
