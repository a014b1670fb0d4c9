r"""Domains, piecewise-linear activations and the parsing of net tuples (Shmalo 2026, SPEC §3).

A net is ``(W, b, a, v, c)`` for f(x) = Σ_k a_k ψ(W_k·x + b_k) + v·x + c. Entries are float64 arrays (or
anything ``numpy.asarray`` reads as real numbers, torch tensors included) or nested sequences of SymPy
numbers; one SymPy entry makes the whole net *exact* (results are returned as SymPy numbers).

Either way the certified routines see the same thing: every float64 is an exact binary rational, read
with ``fractions.Fraction`` without rounding, so "exact" always means exact for the net as given.
Irrational SymPy entries (√3, cos(1/20)) are kept as SymPy expressions; only the S¹ routine and the
canonical form accept them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

__all__ = ["Sphere", "Ball", "PiecewiseLinear", "RELU", "piecewise_linear_of", "parse", "Net", "as_float", "as_exact",
           "evaluate", "to_fraction", "is_exact_input"]


@dataclass(frozen=True)
class Sphere:
    """The unit sphere S^{d−1} ⊂ R^d with the geodesic (arc-length) metric."""

    d: int

    def __post_init__(self):
        if not isinstance(self.d, int | np.integer) or self.d < 2:
            raise ValueError(f"Sphere(d): d must be an integer >= 2, got {self.d!r}")

    @property
    def radius(self):
        return 1


@dataclass(frozen=True)
class Ball:
    """The closed ball {‖x‖ ≤ R} ⊂ R^d with the Euclidean metric."""

    d: int
    R: Any = 1

    def __post_init__(self):
        if not isinstance(self.d, int | np.integer) or self.d < 1:
            raise ValueError(f"Ball(d, R): d must be an integer >= 1, got {self.d!r}")
        try:
            r = float(self.R)
        except (TypeError, ValueError):
            raise ValueError(f"Ball(d, R): R must be a real number, got {self.R!r}") from None
        if not (math.isfinite(r) and r > 0):
            raise ValueError(f"Ball(d, R): R must be finite and > 0, got {self.R!r}")

    @property
    def radius(self):
        return self.R


def check_domain(domain):
    if not isinstance(domain, Sphere | Ball):
        raise ValueError(f"domain must be Sphere(d) or Ball(d, R), got {domain!r}")


@dataclass(frozen=True)
class PiecewiseLinear:
    """Continuous ψ with breakpoints β_1 < … < β_{K−1}, slopes s_0..s_{K−1} and ψ(β_1) given by ``value``.

    ψ(z) = value + s_0 (z − β_1) + Σ_i (s_i − s_{i−1}) ReLU(z − β_i).
    """

    breakpoints: tuple
    slopes: tuple
    value: Any = 0

    def __post_init__(self):
        if len(self.slopes) != len(self.breakpoints) + 1 or not self.breakpoints:
            raise ValueError("PiecewiseLinear: need K-1 >= 1 breakpoints and K slopes")
        if any(not (float(b2) > float(b1)) for b1, b2 in zip(self.breakpoints, self.breakpoints[1:],
                                                             strict=False)):
            raise ValueError("PiecewiseLinear: breakpoints must increase strictly")

    @property
    def K(self) -> int:
        return len(self.slopes)

    def relu_expansion(self):
        """(c0, s0, [(β_i, jump_i)]) with ψ(z) = c0 + s0 z + Σ_i jump_i ReLU(z − β_i)."""
        b1 = self.breakpoints[0]
        c0 = self.value - self.slopes[0] * b1
        jumps = [(b, self.slopes[i + 1] - self.slopes[i]) for i, b in enumerate(self.breakpoints)]
        return c0, self.slopes[0], jumps


RELU = PiecewiseLinear((0,), (0, 1), 0)


# ------------------------------------------------------------------------------------------- numbers
def to_fraction(x, what: str = "value"):
    """The exact value of a float / int / SymPy rational as a Fraction; SymPy irrationals are returned as
    SymPy expressions (checked finite and real)."""
    if isinstance(x, bool | np.bool_):
        raise ValueError(f"{what}: booleans are not a supported dtype")
    if isinstance(x, int | np.integer):
        return Fraction(int(x))
    if isinstance(x, float | np.floating):
        if not math.isfinite(float(x)):
            raise ValueError(f"{what} contains a non-finite value ({x})")
        return Fraction(float(x))
    if isinstance(x, Fraction):
        return x
    if isinstance(x, sp.Basic):
        if x.free_symbols:
            raise ValueError(f"{what} contains free symbols {x.free_symbols}: numbers are required")
        if x.has(sp.nan, sp.oo, -sp.oo, sp.zoo):
            raise ValueError(f"{what} contains a non-finite value ({x})")
        if isinstance(x, sp.Float):
            return Fraction(float(x)) if x._prec <= 53 else Fraction(str(sp.Rational(x)))
        if x.is_Rational:
            return Fraction(int(x.p), int(x.q))
        if x.is_real is False or x.is_extended_real is False:
            raise ValueError(f"{what} contains a non-real value ({x})")
        return x
    raise ValueError(f"{what}: unsupported entry type {type(x).__name__}")


def is_exact_input(obj) -> bool:
    if isinstance(obj, sp.Basic | Fraction):
        return True
    if isinstance(obj, list | tuple):
        return any(is_exact_input(o) for o in obj)
    if isinstance(obj, np.ndarray) and obj.dtype == object:
        return any(is_exact_input(o) for o in obj.ravel())
    return False


def _to_numpy(x, what):
    """torch tensors (any device, requires_grad) and array-likes to a numeric numpy array or a list."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    if isinstance(x, np.ndarray) and x.dtype == object:
        return x.tolist()
    return x


@dataclass(frozen=True)
class Net:
    """A parsed net: every entry exact (Fraction, or SymPy for irrational entries)."""

    W: tuple  # m rows of d entries
    b: tuple
    a: tuple
    v: tuple
    c: Any
    exact: bool  # the input had SymPy entries (results are returned as SymPy numbers)
    m: int
    d: int

    @property
    def rational(self) -> bool:
        return all(isinstance(x, Fraction) for x in (*[z for r in self.W for z in r], *self.b, *self.a, *self.v,
                                                     self.c))


def parse(net, d: int | None = None) -> Net:
    if not isinstance(net, list | tuple) or len(net) != 5:
        raise ValueError("net must be a 5-tuple (W, b, a, v, c)" + (
            "; for a torch.nn.Module use numerics.rob.lipschitz_from_module" if hasattr(net, "parameters")
            else ""))
    W, b, a, v, c = (_to_numpy(x, n) for x, n in zip(net, "Wbavc", strict=True))
    exact = is_exact_input([W, b, a, v, c])
    if not exact:
        for name, arr in (("W", W), ("b", b), ("a", a), ("v", v), ("c", c)):
            try:
                A = np.asarray(arr)
            except Exception as exc:  # ragged lists etc.
                raise ValueError(f"{name}: cannot be read as an array ({exc})") from None
            if A.dtype == object or A.dtype.kind not in "fiu":
                raise ValueError(f"{name}: unsupported dtype {A.dtype} (need real floats or exact SymPy numbers)")
            if A.dtype.kind == "f" and not np.all(np.isfinite(A)):
                raise ValueError(f"{name} contains NaN or inf")
    v_ = _flat(v, "v")
    dd = len(v_)
    Wl = W.tolist() if isinstance(W, np.ndarray) else list(W)
    if isinstance(W, np.ndarray) and W.ndim != 2 and W.size:
        raise ValueError(f"W must be a (m, d) matrix, got shape {W.shape}")
    Wl = [list(r) if isinstance(r, list | tuple | np.ndarray) else None for r in Wl]
    if any(r is None for r in Wl):
        raise ValueError("W must be a (m, d) matrix")
    m = len(Wl)
    if any(len(r) != dd for r in Wl):
        raise ValueError(f"W: rows must have length d = {len(v_)} (the length of v)")
    b_, a_ = _flat(b, "b"), _flat(a, "a")
    for name, arr in (("b", b_), ("a", a_)):
        if len(arr) != m:
            raise ValueError(f"{name} has shape ({len(arr)},), expected ({m},)")
    if isinstance(c, list | tuple) or (isinstance(c, np.ndarray) and c.ndim):
        raise ValueError("c must be a scalar")
    out = Net(tuple(tuple(to_fraction(x, "W") for x in r) for r in Wl), tuple(to_fraction(x, "b") for x in b_),
              tuple(to_fraction(x, "a") for x in a_), tuple(to_fraction(x, "v") for x in v_),
              to_fraction(c.item() if isinstance(c, np.ndarray) else c, "c"), exact, m, dd)
    if d is not None and out.d != d:
        raise ValueError(f"the net has input dimension {out.d} but the domain has d = {d}")
    return out


def _flat(x, what):
    if isinstance(x, np.ndarray):
        if x.ndim != 1:
            raise ValueError(f"{what} must be a vector, got shape {x.shape}")
        return x.tolist()
    if not isinstance(x, list | tuple):
        raise ValueError(f"{what} must be a vector")
    return list(x)


def f64(x):
    """float64 of an exact scalar or nested sequence."""
    if isinstance(x, list | tuple):
        return [f64(y) for y in x]
    if isinstance(x, np.ndarray):
        return x.astype(float)
    return float(x)


def as_float(net):
    """The float64 version of a (possibly exact) net tuple."""
    n = parse(net)
    W = np.array(f64(n.W), float).reshape(n.m, n.d)
    return (W, np.array(f64(n.b), float), np.array(f64(n.a), float), np.array(f64(n.v), float), float(n.c))


def _sym(x):
    return sp.Rational(x.numerator, x.denominator) if isinstance(x, Fraction) else x


def as_exact(net):
    """The exact SymPy version of a net tuple (floats read as binary rationals)."""
    n = parse(net)
    return ([[_sym(x) for x in r] for r in n.W], [_sym(x) for x in n.b], [_sym(x) for x in n.a],
            [_sym(x) for x in n.v], _sym(n.c))


def evaluate(net, X, *, activation: PiecewiseLinear = RELU):
    """f at the rows of X (float64), for a net tuple or a canonical form (anything with ``.net()``)."""
    if hasattr(net, "net") and callable(net.net):
        net = net.net()
    n = parse(net)
    X = np.atleast_2d(np.asarray(X, float))
    W, b, a, v = (np.asarray(f64(z), float) for z in (n.W, n.b, n.a, n.v))
    W = W.reshape(n.m, n.d)
    Z = X @ W.T + b
    c0, s0, jumps = activation.relu_expansion()
    out = float(c0) + float(s0) * Z
    for bt, j in jumps:
        out = out + float(j) * np.maximum(Z - float(bt), 0.0)
    return out @ a + X @ v + float(n.c)


def piecewise_linear_of(two) -> PiecewiseLinear:
    """The activation of a :class:`numerics.interop.TwoLayer` read from a torch module, as a
    :class:`PiecewiseLinear` (ReLU, LeakyReLU(slope)); ValueError naming the module's activation else."""
    from numerics.interop import PIECEWISE_LINEAR

    if two.activation == "ReLU":
        return RELU
    if two.activation == "LeakyReLU":
        return PiecewiseLinear((0.0,), (float(two.params["slope"]), 1.0), 0.0)
    raise ValueError(f"activation {two.activation} is not piecewise linear: Lipschitz constants here need "
                     f"one of {PIECEWISE_LINEAR}")
