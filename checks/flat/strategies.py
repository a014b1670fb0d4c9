"""Hypothesis strategies of the flat F levels: :class:`FlatCase` (a net, its data, rescaling factors, a dual point).

:func:`flat_nets` mixes generic draws with the corners where a closed form is most fragile: tiny outer
weights, huge or mixed-scale directions, one sample, one neuron. Labels are never drawn: a property uses the
net's own outputs, so every case is an interpolator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

ACT_SPECS = ("relu", "leaky_relu:0.1", "leaky_relu:0.5", "quadratic", "relu_power:1.5", "relu_power:2",
             "relu_power:3", "abs_power:1.5", "abs_power:2.5", "abs_power:3")


@dataclass(frozen=True)
class FlatCase:
    """A net, its data and per-neuron rescaling factors (labels are the net's own outputs: an interpolator)."""

    act: str
    a: np.ndarray
    Theta: np.ndarray
    X: np.ndarray
    lam: np.ndarray
    nu: np.ndarray | None = None

    def to_json(self):
        return {"act": self.act, "a": self.a.tolist(), "Theta": self.Theta.tolist(), "X": self.X.tolist(),
                "lam": self.lam.tolist(), "nu": None if self.nu is None else self.nu.tolist()}

    @classmethod
    def from_json(cls, d):
        arr = lambda v: None if v is None else np.asarray(v, dtype=float)
        return cls(d["act"], arr(d["a"]), arr(d["Theta"]), arr(d["X"]), arr(d["lam"]), arr(d.get("nu")))


_el = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def flat_nets(draw, max_n: int = 6, max_d: int = 3, max_m: int = 4, min_m: int = 1, with_nu: bool = False,
              square: bool = False) -> FlatCase:
    """A :class:`FlatCase`; ``with_nu`` adds a dual point, ``square`` makes m ≥ n (an interpolator exists)."""
    corner = draw(st.sampled_from(["generic", "tiny_a", "huge_theta", "mixed_scale", "n1", "m1"]))
    act = draw(st.sampled_from(ACT_SPECS))
    d = draw(st.integers(1, max_d))
    n = 1 if corner == "n1" else draw(st.integers(1, max_n))
    m = 1 if corner == "m1" and min_m <= 1 else draw(st.integers(max(min_m, n if square else 1),
                                                                 max(max_m, n if square else 1)))
    a = draw(arrays(np.float64, (m,), elements=_el))
    Th = draw(arrays(np.float64, (m, d), elements=_el))
    X = draw(arrays(np.float64, (n, d), elements=_el))
    loglam = draw(arrays(np.float64, (m,), elements=st.floats(-4, 4, width=64)))
    if corner == "tiny_a":
        a = a * 1e-6
    elif corner == "huge_theta":
        Th = Th * 1e3
    elif corner == "mixed_scale":
        Th = Th * np.logspace(-3, 3, m)[:, None]
    nu = draw(arrays(np.float64, (n,), elements=_el)) if with_nu else None
    return FlatCase(act, a, Th, X, np.exp(loglam), nu)
