r"""Adversarial rational data and independent references for the deterministic lemmas of SPEC §4.

Strategies (Hypothesis) draw exact rational data; the cases are JSON-able (rationals as "p/q" strings):

* :func:`affine_data` — X with duplicated points, rank-deficient columns (a column an affine combination of
  others), constant columns, n < d + 1; labels ±1; rational probes (v, c);
* :func:`unit_vector` — exact rational points of S^{d−1} (inverse stereographic projection);
* :func:`sphere_data` — unit data with stacked caps (repeated points, points at u), aimed sums u ∝ Σ y_i x_i;
* :func:`equiangular` — u_g = a e_g + b e_0 with a² + b² = 1 rational: |u_g·u_h| = b² exactly.

References (:func:`sympy_projection_value`, :func:`sympy_rank`, :func:`mp_op`) use SymPy's exact
pseudo-inverse and rank and mpmath's symmetric eigensolver; they share no code with :mod:`numerics.rob.lemmas`.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy as sp
from hypothesis import strategies as st

DENOMS = (1, 2, 3, 4, 5, 7, 16)


def rat(lo: int = -6, hi: int = 6):
    return st.builds(Fraction, st.integers(lo, hi), st.sampled_from(DENOMS))


def enc(x):
    """JSON form of nested rationals."""
    if isinstance(x, list | tuple):
        return [enc(v) for v in x]
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}"
    return x


def dec(x):
    if isinstance(x, list):
        return [dec(v) for v in x]
    if isinstance(x, str) and "/" in x:
        return Fraction(x)
    return x


def fl(x):
    """Float64 of nested rationals (the screen's input)."""
    if isinstance(x, list | tuple):
        return [fl(v) for v in x]
    return float(x)


@st.composite
def affine_data(draw):
    d = draw(st.integers(1, 4))
    n = draw(st.integers(1, 7))
    X = [[draw(rat()) for _ in range(d)] for _ in range(n)]
    mode = draw(st.sampled_from(["random", "duplicates", "rank_deficient", "constant", "few", "collinear"]))
    if mode == "duplicates" and n > 1:
        for i in range(1, n):
            if draw(st.booleans()):
                X[i] = list(X[draw(st.integers(0, i - 1))])
    elif mode == "rank_deficient" and d > 1:
        j, k = draw(st.integers(1, d - 1)), draw(st.integers(0, d - 2))
        a, b = draw(rat(-3, 3)), draw(rat(-3, 3))
        for row in X:
            row[j] = a * row[min(k, j - 1)] + b
    elif mode == "constant":
        b = draw(rat())
        for row in X:
            row[draw(st.integers(0, d - 1))] = b
    elif mode == "few":
        X = X[: max(1, min(n, d))]  # n ≤ d < d + 1
    elif mode == "collinear":
        p0 = [draw(rat()) for _ in range(d)]
        dirn = [draw(rat()) for _ in range(d)]
        X = [[p0[j] + s * dirn[j] for j in range(d)] for s in (draw(rat()) for _ in range(n))]
    n = len(X)
    y = [draw(st.sampled_from([-1, 1])) for _ in range(n)]
    probes = [([draw(rat()) for _ in range(d)], draw(rat())) for _ in range(draw(st.integers(1, 4)))]
    delta = draw(st.sampled_from([Fraction(0), Fraction(1, 1000), Fraction(1, 10), Fraction(1)]))
    return {"X": X, "y": y, "probes": probes, "delta": delta, "mode": mode}


def affine_to_json(c):
    return {"X": enc(c["X"]), "y": c["y"], "probes": [[enc(v), enc(b)] for v, b in c["probes"]],
            "delta": enc(c["delta"]), "mode": c["mode"]}


def affine_from_json(j):
    return {"X": dec(j["X"]), "y": j["y"], "probes": [(dec(v), dec(b)) for v, b in j["probes"]],
            "delta": dec(j["delta"]), "mode": j["mode"]}


@st.composite
def unit_vector(draw, d: int, near=None):
    """An exact rational unit vector: inverse stereographic projection of a rational point p ∈ Q^{d−1}
    (|p| large gives points near the pole (0, …, 0, 1))."""
    p = [draw(rat(-8, 8)) for _ in range(d - 1)]
    if draw(st.booleans()):
        big = draw(st.sampled_from([Fraction(10), Fraction(100), Fraction(1000)]))
        p = [big + q for q in p[:1]] + p[1:]
    s = sum(q * q for q in p)
    return [2 * q / (s + 1) for q in p] + [(s - 1) / (s + 1)]


def sympy_projection_value(X, y):
    """yᵀPy with P = A A⁺ (SymPy's exact pseudo-inverse), A = [X 1]."""
    A = sp.Matrix([[sp.Rational(v.numerator, v.denominator) for v in row] + [1] for row in X])
    P = A * A.pinv()
    Y = sp.Matrix(y)
    return sp.nsimplify((Y.T * P * Y)[0]), P


def sympy_rank(X) -> int:
    return sp.Matrix([[sp.Rational(v.numerator, v.denominator) for v in row] + [1] for row in X]).rank()


def mp_op(X):
    """Op = λ_max(XᵀX) with mpmath's symmetric eigensolver at the current precision."""
    d = len(X[0])
    M = mpmath.matrix(d, d)
    for a in range(d):
        for b in range(d):
            M[a, b] = sum(mpmath.mpf(r[a].numerator) / r[a].denominator * mpmath.mpf(r[b].numerator)
                          / r[b].denominator for r in X)
    return max(mpmath.eigsy(M, eigvals_only=True))


def mpf(q: Fraction):
    return mpmath.mpf(q.numerator) / q.denominator
