"""Hypothesis strategies of the ws paper (the F levels of ws.theorem and ws.bound).

The net strategy aims at the hard corners on purpose: n = 1, D = 2 (M = N = 1 without biases),
near-duplicate samples, saturated sigmoids, huge and tiny weights, and ill-conditioned Hessians
(tiny and huge scales mixed in one net). The spectrum strategy draws real spectra with clusters and
exact ties, and a similarity transform that is orthogonal or a general well-conditioned matrix.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from checks.ws.cases import ACTIVATIONS

_unit = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)


# The strategies a draw uses, built once per shape: Hypothesis validates a strategy object on first use, and
# building fresh ``arrays``/``integers``/``lists`` inside every draw spent more time validating them than drawing
# (5.6 ms an example for ce_nets). The same definitions draw the same examples.
@functools.cache
def _arr(*shape: int):
    return arrays(np.float64, shape, elements=_unit)


@functools.cache
def _ints(lo: int, hi: int):
    return st.integers(lo, hi)


@functools.cache
def _labels(n: int, classes: int = 2):
    return st.lists(_ints(0, classes - 1), min_size=n, max_size=n)


@functools.cache
def _choice(*options):
    return st.sampled_from(options)


_BOOL = st.booleans()
_HUGE, _TINY = st.floats(0.5, 1.5), st.floats(-4, -1)


@dataclass(frozen=True)
class NetCase:
    """A cross-entropy net and its data, as a falsification case."""

    W: np.ndarray
    b: np.ndarray | None
    v: np.ndarray
    c: float | None
    X: np.ndarray
    y: np.ndarray
    activation: str
    bias: bool

    @property
    def args(self):
        return (self.W, self.b, self.v, self.c, self.X, self.y)

    def to_json(self):
        arr = lambda a: None if a is None else np.asarray(a).tolist()
        return {"W": arr(self.W), "b": arr(self.b), "v": arr(self.v), "c": self.c, "X": arr(self.X),
                "y": arr(self.y), "activation": self.activation, "bias": self.bias}

    @classmethod
    def from_json(cls, d):
        arr = lambda a: None if a is None else np.asarray(a, dtype=float)
        return cls(arr(d["W"]), arr(d["b"]), arr(d["v"]), d["c"], arr(d["X"]), arr(d["y"]),
                   d["activation"], d["bias"])


@st.composite
def ce_nets(draw, max_M: int = 3, max_N: int = 4, max_n: int = 8) -> NetCase:
    corner = draw(_choice("generic", "n1", "D2", "near_duplicate", "saturated", "huge", "tiny",
                                   "ill_conditioned"))
    bias = draw(_BOOL) if corner != "D2" else False
    M = 1 if corner == "D2" else draw(_ints(1, max_M))
    N = 1 if corner == "D2" else draw(_ints(1, max_N))
    n = 1 if corner == "n1" else draw(_ints(1, max_n))
    act = draw(_choice(*ACTIVATIONS))
    W = draw(_arr(N, M))
    v = draw(_arr(N))
    X = draw(_arr(n, M))
    y = np.array(draw(_labels(n)), dtype=float)
    b = draw(_arr(N)) if bias else None
    c = draw(_unit) if bias else None
    if corner == "near_duplicate" and n >= 2:
        X[1] = X[0] + 1e-9 * np.sign(X[0] + 0.5)
    elif corner == "saturated":
        v = v * 40.0
        c = None if c is None else c * 40.0
    elif corner in ("huge", "tiny"):
        scale = 10.0 ** draw(_HUGE if corner == "huge" else _TINY)
        W, v = W * scale, v * scale
    elif corner == "ill_conditioned":
        v = v * np.logspace(-4, 1, N)
        X = X * np.logspace(-3, 1, M)
    return NetCase(W, b, v, c, X, y, act, bias)


@dataclass(frozen=True)
class SpectrumCase:
    """A matrix A = S diag(λ) S⁻¹ with known real spectrum (λ exact in the drawn floats)."""

    lams: np.ndarray
    S: np.ndarray  # similarity; orthogonal or general

    def to_json(self):
        return {"lams": self.lams.tolist(), "S": self.S.tolist()}

    @classmethod
    def from_json(cls, d):
        return cls(np.asarray(d["lams"], dtype=float), np.asarray(d["S"], dtype=float))


@st.composite
def spectra(draw, max_D: int = 9, equality: str | None = None) -> SpectrumCase:
    """Real spectra. ``equality`` plants a WS equality case: "top" (D−1 smallest equal, λ_max upper
    bound attained), "bottom" (D−1 largest equal, λ_max lower bound attained)."""
    D = draw(st.integers(2, max_D))
    if equality is None:
        base = draw(arrays(np.float64, (D,), elements=_unit))
        ties = draw(st.integers(0, D - 1))  # exact ties: clustered spectra
        lams = base.copy()
        lams[:ties] = base[0]
    else:
        a, b = draw(_unit), draw(_unit)
        if a == b:
            b = a - 1.0
        hi, lo = max(a, b), min(a, b)
        lams = np.array([hi] + [lo] * (D - 1)) if equality == "top" else np.array([hi] * (D - 1) + [lo])
    raw = draw(arrays(np.float64, (D, D), elements=_unit))
    if draw(st.booleans()):
        S, _ = np.linalg.qr(raw + 3 * np.eye(D))
    else:
        S = np.eye(D) + raw / (4 * D)  # strictly diagonally dominant: invertible, well conditioned
    return SpectrumCase(np.sort(lams)[::-1], S)


@st.composite
def kfold_spectra(draw, max_D: int = 9) -> SpectrumCase:
    """The two-level spectrum (a, …, a, b, …, b) with k copies of a > b, 1 ≤ k ≤ D − 1, the equality
    case of both k-th Wolkowicz–Styan bounds next to the step: λ_k = m + s√((D−k)/k) and
    λ_{k+1} = m − s√(k/(D−k)). k = 1 is the λ_max-upper / λ_min-upper case, k = D − 1 the λ_max-lower one (k is the
    multiplicity of the largest eigenvalue)."""
    D = draw(st.integers(2, max_D))
    k = draw(st.integers(1, D - 1))
    a, b = draw(_unit), draw(_unit)
    if a == b:
        b = a - 1.0
    hi, lo = max(a, b), min(a, b)
    lams = np.array([hi] * k + [lo] * (D - k))
    raw = draw(arrays(np.float64, (D, D), elements=_unit))
    if draw(st.booleans()):
        S, _ = np.linalg.qr(raw + 3 * np.eye(D))
    else:
        S = np.eye(D) + raw / (4 * D)
    return SpectrumCase(lams, S)


# ------------------------------------------------------------------------------------------------ softmax
@dataclass(frozen=True)
class SoftmaxCase:
    """A softmax cross-entropy net (V: C × N, c ∈ R^C) and its data, as a falsification case."""

    W: np.ndarray
    b: np.ndarray | None
    V: np.ndarray
    c: np.ndarray | None
    X: np.ndarray
    y: np.ndarray
    activation: str
    bias: bool

    @property
    def args(self):
        return (self.W, self.b, self.V, self.c, self.X, self.y)

    def to_json(self):
        arr = lambda a: None if a is None else np.asarray(a).tolist()
        return {"W": arr(self.W), "b": arr(self.b), "V": arr(self.V), "c": arr(self.c), "X": arr(self.X),
                "y": arr(self.y), "activation": self.activation, "bias": self.bias}

    @classmethod
    def from_json(cls, d):
        arr = lambda a: None if a is None else np.asarray(a, dtype=float)
        return cls(arr(d["W"]), arr(d["b"]), arr(d["V"]), arr(d["c"]), arr(d["X"]),
                   np.asarray(d["y"], dtype=np.int64), d["activation"], d["bias"])


@st.composite
def softmax_nets(draw, max_M: int = 3, max_N: int = 3, max_C: int = 4, max_n: int = 6) -> SoftmaxCase:
    """Softmax nets in the corners: n = 1, C = 2, saturated logits (p at a vertex), V with a dominant common row
    (the null direction 1 of Q), one label for every sample, near-duplicate samples, huge and tiny weights."""
    corner = draw(_choice("generic", "n1", "C2", "saturated", "common_row", "one_label",
                          "near_duplicate", "huge", "tiny"))
    bias = draw(_BOOL)
    M, N = draw(_ints(1, max_M)), draw(_ints(1, max_N))
    C = 2 if corner == "C2" else draw(_ints(2, max_C))
    n = 1 if corner == "n1" else draw(_ints(1, max_n))
    act = draw(_choice(*ACTIVATIONS))
    W = draw(_arr(N, M))
    V = draw(_arr(C, N))
    X = draw(_arr(n, M))
    y = np.array(draw(_labels(n, C)), dtype=np.int64)
    b = draw(_arr(N)) if bias else None
    c = draw(_arr(C)) if bias else None
    if corner == "saturated":
        V = V * 40.0
        c = None if c is None else c * 40.0
    elif corner == "common_row":
        V = 30.0 * V[:1] + 1e-3 * V  # every row ≈ the same: Q annihilates the common part
    elif corner == "one_label":
        y[:] = y[0]
    elif corner == "near_duplicate" and n >= 2:
        X[1] = X[0] + 1e-9 * np.sign(X[0] + 0.5)
    elif corner in ("huge", "tiny"):
        scale = 10.0 ** draw(_HUGE if corner == "huge" else _TINY)
        W, V = W * scale, V * scale
    return SoftmaxCase(W, b, V, c, X, y, act, bias)
