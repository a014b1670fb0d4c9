r"""Exact arithmetic for the arrangement decisions: rationals and numbers a + b√D.

Float64 inputs are exact binary rationals, so every hyperplane w·x + b = 0, every gradient
g_σ = v + Σ σ_j a_j w_j and every ‖g_σ‖² is a rational number. Points where two kink circles of S² meet,
and the critical points of g·x on a circle, are p ± √D q with p, q rational vectors and D ≥ 0 rational;
values of ‖g‖² − (g·x)² there are a + b√D. Comparing two of them (from two different D) is the sign of
A + B√D₁ + C√D₂ + E√(D₁D₂), decided exactly by squaring (:func:`sign2`), never by a tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

__all__ = ["sgn", "sign1", "sign2", "QNum", "QPoint", "dot", "cross", "sub", "add", "scale"]

ZERO = Fraction(0)


def sgn(x) -> int:
    return (x > 0) - (x < 0)



def sign1(a, b, D) -> int:
    """sign(a + b√D) for rationals a, b and D ≥ 0."""
    sa, sb = sgn(a), sgn(b)
    if sb == 0 or D == 0:
        return sa
    if sa == 0 or sa == sb:
        return sb if sa == 0 else sa
    return sa * sgn(a * a - b * b * D)


def sign2(A, B, C, E, D1, D2) -> int:
    """sign(A + B√D₁ + C√D₂ + E√D₁√D₂) for rationals and D₁, D₂ ≥ 0."""
    if D2 == 0 or (C == 0 and E == 0):
        return sign1(A, B, D1)
    if D1 == D2:  # one extension: √D₁√D₂ = D₁
        return sign1(A + E * D1, B + C, D1)
    sp_ = sign1(A, B, D1)   # P = A + B√D₁
    sq = sign1(C, E, D1)    # Q = C + E√D₁ (the coefficient of √D₂)
    if sq == 0:
        return sp_
    if sp_ == 0 or sp_ == sq:
        return sq if sp_ == 0 else sp_
    # P + Q√D₂ with opposite signs: compare P² and Q²D₂, both in Q(√D₁)
    s = sign1(A * A + B * B * D1 - (C * C + E * E * D1) * D2, 2 * A * B - 2 * C * E * D2, D1)
    return sp_ * s


@dataclass(frozen=True)
class QNum:
    """a + b√D (D ≥ 0)."""

    a: Fraction
    b: Fraction = ZERO
    D: Fraction = ZERO

    def cmp(self, o: QNum) -> int:
        """sign(self − o)."""
        return sign2(self.a - o.a, self.b, -o.b, ZERO, self.D, o.D)

    def sign(self) -> int:
        return sign1(self.a, self.b, self.D)

    def __float__(self):
        return float(_mp(self.a) + _mp(self.b) * mpmath.sqrt(_mp(self.D)))


@dataclass(frozen=True)
class QPoint:
    """The point p + s√D q (s = ±1, D ≥ 0), p and q rational tuples."""

    p: tuple
    q: tuple
    D: Fraction
    s: int = 1

    def dot(self, w) -> QNum:
        """w·x for a rational vector w."""
        return QNum(dot(self.p, w), self.s * dot(self.q, w) if self.D else ZERO, self.D)

    def floats(self):
        with mpmath.workdps(30):
            r = mpmath.sqrt(_mp(self.D)) * self.s
            return [float(_mp(pi) + r * _mp(qi)) for pi, qi in zip(self.p, self.q, strict=True)]

    def value(self, g) -> QNum:
        """‖g‖² − (g·x)² (x on the unit sphere): the squared tangential gradient at this point."""
        al, be = dot(self.p, g), self.s * dot(self.q, g)
        gg = dot(g, g)
        if not self.D:
            return QNum(gg - al * al)
        return QNum(gg - al * al - be * be * self.D, -2 * al * be, self.D)


def _mp(x):
    return mpmath.mpf(x.numerator) / x.denominator


def dot(x, y):
    return sum((a * b for a, b in zip(x, y, strict=True)), ZERO)


def cross(x, y):
    return (x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0])


def sub(x, y):
    return tuple(a - b for a, b in zip(x, y, strict=True))


def add(x, y):
    return tuple(a + b for a, b in zip(x, y, strict=True))


def scale(s, x):
    return tuple(s * a for a in x)
