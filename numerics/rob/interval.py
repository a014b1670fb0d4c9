r"""Rigorous float64 interval arrays: the fast filter in front of every exact decision.

An :class:`Interval` is a midpoint–radius pair of float64 arrays ``(m, r)`` standing for the real set
``[m − r, m + r]`` elementwise. Every operation returns an interval that provably contains the exact
result of the operation on any reals in the operands. IEEE-754 round-to-nearest gives
|fl(x ∘ y) − x ∘ y| ≤ u|fl(x ∘ y)| (u = 2⁻⁵³) plus an underflow term; the radii are computed from
nonnegative terms, each rounded with relative error ≤ u, and are then inflated by (1 + 2(k+2)u) for k
rounded steps, which bounds (1 + u)^k with room to spare. A dot product of length k computed in any order
(BLAS included; FMA only helps) obeys |fl(x·y) − x·y| ≤ γ_k |x|·|y|, γ_k = ku/(1 − ku) (Higham, *Accuracy
and Stability of Numerical Algorithms*, §3.1), which is what :func:`matmul` adds.

:meth:`Interval.sign` is the filter: +1 / −1 where the whole interval is on one side of 0, and 0 where it
cannot tell. Callers then decide those entries exactly (``numerics.rob.exact``); an undecided entry is
never guessed. Division by an interval that contains 0 raises :class:`Undecided`.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

U = 2.0**-53
TINY = 2.0**-1060  # absolute slack per rounded step for underflow (a subnormal result is off by ≤ 2⁻¹⁰⁷⁵)

__all__ = ["Interval", "Undecided", "matmul", "from_fractions", "U"]


class Undecided(ArithmeticError):
    """An interval computation needs a decision it cannot certify (an interval containing 0)."""


def _up(x, k: int = 1):
    return x * (1.0 + 2.0 * (k + 2) * U) + (k + 2) * TINY


class Interval:
    """Elementwise enclosure [m − r, m + r] of real arrays (see the module docstring)."""

    __slots__ = ("m", "r")

    def __init__(self, m, r=None):
        self.m = np.asarray(m, dtype=np.float64)
        if r is None:
            self.r = np.zeros_like(self.m)
        else:
            r = np.asarray(r, np.float64)
            self.r = r if r.shape == self.m.shape else np.broadcast_to(r, self.m.shape).copy()

    # ---------------------------------------------------------------------------------- structure
    @property
    def shape(self):
        return self.m.shape

    def __len__(self):
        return len(self.m)

    def __getitem__(self, k):
        return Interval(self.m[k], self.r[k])

    def reshape(self, *s):
        return Interval(self.m.reshape(*s), self.r.reshape(*s))

    @property
    def T(self):
        return Interval(self.m.T, self.r.T)

    def __repr__(self):
        return f"Interval(m={self.m!r}, r={self.r!r})"

    # ---------------------------------------------------------------------------------- arithmetic
    def __add__(self, o):
        o = _iv(o)
        m = self.m + o.m
        return Interval(m, _up(self.r + o.r + U * np.abs(m), 2))

    __radd__ = __add__

    def __neg__(self):
        return Interval(-self.m, self.r)

    def __sub__(self, o):
        return self + (-_iv(o))

    def __rsub__(self, o):
        return _iv(o) - self

    def __mul__(self, o):
        o = _iv(o)
        m = self.m * o.m
        r = np.abs(self.m) * o.r + self.r * np.abs(o.m) + self.r * o.r + U * np.abs(m)
        return Interval(m, _up(r, 4))

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = _iv(o)
        den = np.abs(o.m) - o.r
        if np.any(den <= 0):
            raise Undecided("division by an interval that contains 0")
        den = den * (1 - 4 * U)
        m = self.m / o.m
        r = (self.r + np.abs(m) * (1 + 2 * U) * o.r) / den + U * np.abs(m)
        return Interval(m, _up(r, 5))

    def __rtruediv__(self, o):
        return _iv(o) / self

    def square(self):
        """x² (tighter than x·x: never negative)."""
        lo = np.maximum(np.abs(self.m) - self.r, 0.0)
        hi = np.abs(self.m) + self.r
        lo2, hi2 = lo * lo * (1 - 4 * U), _up(hi * hi, 1)
        return Interval((lo2 + hi2) / 2, _up((hi2 - lo2) / 2 + U * hi2, 2))

    def sqrt(self):
        if np.any(self.m + self.r < 0):
            raise Undecided("square root of a negative interval")
        lo = np.maximum(self.m - self.r, 0.0)
        hi = self.m + self.r
        slo = np.sqrt(lo) * (1 - 4 * U)
        shi = _up(np.sqrt(hi), 1)
        mid = (slo + shi) / 2
        return Interval(mid, _up(np.maximum(shi - mid, mid - slo), 2))

    def abs(self):
        lo = np.maximum(np.abs(self.m) - self.r, 0.0)
        hi = np.abs(self.m) + self.r
        return Interval((lo + hi) / 2, _up((hi - lo) / 2 + U * hi, 2))

    def sum(self, axis=None):
        m = self.m.sum(axis=axis)
        k = self.m.size if axis is None else self.m.shape[axis]
        g = k * U / (1 - k * U)
        r = self.r.sum(axis=axis) + g * np.abs(self.m).sum(axis=axis)
        return Interval(m, _up(r, k))

    def __matmul__(self, o):
        return matmul(self, o)

    def __rmatmul__(self, o):
        return matmul(_iv(o), self)

    # --------------------------------------------------------------------------------- decisions
    def lo(self):
        x = self.m - self.r
        return np.nextafter(x - U * np.abs(x), -np.inf)

    def hi(self):
        x = self.m + self.r
        return np.nextafter(x + U * np.abs(x), np.inf)

    def sign(self) -> np.ndarray:
        """+1 / −1 where certain, 0 where the interval contains 0 (undecided, NOT 'zero')."""
        out = np.zeros(self.m.shape, np.int8)
        out[self.lo() > 0] = 1
        out[self.hi() < 0] = -1
        return out


def _iv(x) -> Interval:
    if isinstance(x, Interval):
        return x
    if isinstance(x, Fraction) or (isinstance(x, np.ndarray) and x.dtype == object):
        return from_fractions(x)
    return Interval(np.asarray(x, np.float64))


def matmul(a, b) -> Interval:
    a, b = _iv(a), _iv(b)
    m = a.m @ b.m
    k = a.m.shape[-1] if a.m.ndim else 1
    g = k * U / (1 - k * U)
    Am, Bm = np.abs(a.m), np.abs(b.m)
    r = Am @ b.r + a.r @ Bm + a.r @ b.r + g * (Am @ Bm)
    return Interval(m, _up(r, k + 2))


def stack(items, axis=0) -> Interval:
    items = [_iv(x) for x in items]
    return Interval(np.stack([x.m for x in items], axis), np.stack([x.r for x in items], axis))


def from_fractions(x) -> Interval:
    """The enclosure of an array of Fractions (or ints/floats): midpoint the nearest float, radius one ulp
    (zero where the entry is itself a float64)."""
    arr = np.asarray(x, dtype=object)
    flat = arr.ravel()
    try:
        m = np.array([float(q) for q in flat], np.float64)
    except OverflowError:
        raise ValueError("an exact quantity of the net lies outside the float64 range (|x| > 1.8e308): rescale "
                         "the net or the domain") from None
    r = np.array([0.0 if Fraction(mi) == Fraction(q) else np.spacing(abs(mi)) for mi, q in zip(m, flat,
                                                                                                strict=True)])
    return Interval(m.reshape(arr.shape), r.reshape(arr.shape))
