r"""Exact rational constructions for the degenerate-arrangement strategies (:mod:`checks.rob.strategies`).

Rational numbers, vectors, unit vectors, frames and angles, and :class:`NetBuilder`, which collects an exact
net and what was planted in it and emits the JSON case; the readers turn a case back into a net.

Every strategy of :mod:`checks.rob.strategies` yields a plain-JSON case (built by :class:`NetBuilder`)::

    {"d", "sphere", "rho", "kind", "W", "b", "a", "v", "c",      # float64 net (the rounding)
     "exact": {"W", "b", "a", "v", "c"},                         # the intended net, "p/q" strings
     "planted": {...}}                                           # what was planted, exact strings

The floats are the correctly rounded values of the exact entries (``float(Fraction)`` rounds
correctly), so a property can compare three nets: the float net, its exact binary-rational reading
(``case_exact(case, source="float")``) and the intended configuration (``case_exact(case)``). The
float net of a tangent configuration is usually *not* tangent: that is the trap.

Constructions are in "unit-sphere coordinates" and scaled by ρ (= R on the ball, 1 on the sphere):
a unit with row λu (u a rational unit vector) and threshold t ∈ [−1, 1] has b = −λρt, so its
hyperplane is u·x = ρt. Rational unit vectors come from inverse stereographic projection
y ↦ (2y, |y|² − 1)/(|y|² + 1); rational orthonormal frames from a Householder reflection
I − 2nnᵀ/|n|² with n = e_1 − u (its columns are rational, the first is u); rational angles from the
Pythagorean parametrisation cos θ = (1 − q²)/(1 + q²), sin θ = 2q/(1 + q²), θ = 2 arctan q.

``planted`` keys (indices refer to rows of W; vectors and numbers are exact strings; thresholds t are
in unit-sphere coordinates, the hyperplane being u·x = ρt):

- ``parallel``: ``{"units", "u"}`` — every listed row is an exact nonzero multiple of u.
- ``caps``: ``{"unit", "u", "t"}`` — W_unit = λu exactly and b_unit = −λρt (so any planted geometry
  can be read off (u, t)).
- ``tangent``: ``{"units": [i, j], "type": "external"|"internal", "point"}`` — the two hyperplanes
  meet the sphere of radius ρ in exactly one point (``point``); ``{"units": [i], "type": "boundary"}``
  — the hyperplane touches the sphere of radius ρ (|t| = 1).
- ``through_point``: ``{"units", "point"}`` — W_k·p + b_k = 0 exactly for all listed k.
- ``through_line``: ``{"units", "point", "direction"}`` (d = 3, ball) — each plane contains the line.
- ``great``: ``{"units"}`` — b = 0.
- ``edge``: ``{"unit", "t", "offset"}`` — t = ±(1 − offset) exactly (offset 0: on the boundary;
  negative: just outside, the unit is affine on the domain).
- ``near_parallel``: ``{"units": [i, j], "eps", "tilt", "mu"}`` — W_j = μ(W_i + ε|W_i| g), g = tilt.
- ``cancel``: ``{"units": [i, j], "lam", "sum"}`` — W_j = λW_i, b_j = λb_i, a_i + λa_j = sum.
- ``nested``: ``{"outer": i, "inner": j}`` — cap (u_j, t_j) ⊂ interior of cap (u_i, t_i), both in
  ``caps``.
- ``data``: ``{"X", "y", "s", "units", "interpolates", "disjoint"}`` — width-2n units on data points
  (on the sphere of radius ρ); ``cap_through``: ``{"unit", "point"}`` — unit's hyperplane passes
  through data point X[point].
- ``axis``: ``{"unit", "support"}`` — the row is supported on those coordinates.

Standalone on purpose (numpy, sympy, hypothesis, fractions only).
"""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import numpy as np
import sympy
from hypothesis import strategies as st

_DENS = (1, 2, 3, 4, 5, 7, 8, 16)
_SCALES = tuple(Fr(x) for x in ("1", "2", "1/2", "3", "1/3", "5/4", "7", "1/10", "10", "3/7"))


# ------------------------------------------------------------------------------------- exact helpers
def small_rational(draw, lo, hi, dens=_DENS) -> Fr:
    """A rational in [lo, hi] with a small denominator."""
    q = draw(st.sampled_from(dens))
    return Fr(draw(st.integers(math.ceil(Fr(lo) * q), math.floor(Fr(hi) * q))), q)


def nonzero_rational(draw, lo=-3, hi=3) -> Fr:
    x = small_rational(draw, lo, hi)
    return x if x != 0 else Fr(draw(st.sampled_from([1, -1, 2, -1, 3])), 2)


def row_scale(draw) -> Fr:
    """A nonzero row scaling λ of either sign, magnitudes from 1/10 to 10."""
    return draw(st.sampled_from([1, -1])) * draw(st.sampled_from(_SCALES))


def dot(x, y) -> Fr:
    return sum((p * q for p, q in zip(x, y, strict=True)), Fr(0))


def axpy(al, x, y):
    return [al * p + q for p, q in zip(x, y, strict=True)]


def smul(al, x):
    return [al * p for p in x]


def basis(d, i, s=1):
    v = [Fr(0)] * d
    v[i] = Fr(s)
    return v


def rational_angle(draw, qmax=12):
    """(cos θ, sin θ, q) rational, θ = 2 arctan q ∈ (0, π)."""
    q = Fr(draw(st.integers(1, qmax)), draw(st.integers(1, qmax)))
    return pyth_cs(q) + (q,)


def pyth_cs(q: Fr):
    return (1 - q * q) / (1 + q * q), 2 * q / (1 + q * q)


def stereo(y):
    """Inverse stereographic projection: y ∈ Q^{d−1} ↦ an exact rational point of S^{d−1}."""
    n2 = dot(y, y)
    return [2 * p / (n2 + 1) for p in y] + [(n2 - 1) / (n2 + 1)]


def rational_unit_vector(draw, d: int, mode: str | None = None) -> list[Fr]:
    """An exact rational unit vector of R^d: ±e_i ("axis"), or a stereographic point whose preimage has
    a few nonzero coordinates ("sparse") or all of them ("dense", d ≤ 8 only), in random position."""
    if mode is None:
        mode = draw(st.sampled_from(["axis", "sparse", "sparse", "dense"] if d <= 8 else ["axis", "sparse"]))
    if mode == "axis" or d == 1:
        return basis(d, draw(st.integers(0, d - 1)), draw(st.sampled_from([1, -1])))
    k = d - 1 if mode == "dense" else draw(st.integers(1, min(d - 1, 4)))
    pos = draw(st.lists(st.integers(0, d - 2), min_size=k, max_size=k, unique=True))
    y = [Fr(0)] * (d - 1)
    for p in pos:
        y[p] = nonzero_rational(draw, -3, 3)
    x = stereo(y)
    j = draw(st.integers(0, d - 1))  # where the "height" coordinate goes
    last = x.pop()
    x.insert(j, last)
    return x


def rational_sphere_point(draw, d: int) -> list[Fr]:
    """An exact rational point of S^{d−1}, never axis-aligned unless d = 1."""
    return rational_unit_vector(draw, d, mode="sparse" if d > 8 else draw(st.sampled_from(["sparse", "dense"])))


def rational_frame(draw, d: int, k: int, mode: str | None = None) -> list[list[Fr]]:
    """k exact rational orthonormal vectors of R^d: a signed coordinate frame ("axis"), or the columns of
    the Householder reflection taking e_1 to a rational unit vector u ("rational"; the first is u)."""
    k = min(k, d)
    mode = mode or draw(st.sampled_from(["axis", "rational", "rational"]))
    if mode == "axis":
        idx = draw(st.lists(st.integers(0, d - 1), min_size=k, max_size=k, unique=True))
        return [basis(d, i, draw(st.sampled_from([1, -1]))) for i in idx]
    u = rational_sphere_point(draw, d)
    n = axpy(Fr(-1), u, basis(d, 0))  # e_1 − u
    n2 = dot(n, n)
    cols = [0] + draw(st.lists(st.integers(1, d - 1), min_size=k - 1, max_size=k - 1, unique=True))
    if n2 == 0:
        return [basis(d, i) for i in cols]
    return [axpy(-2 * n[i] / n2, n, basis(d, i)) for i in cols]


def in_span(draw, vectors, lo=-3, hi=3):
    """A nonzero rational combination of the frame vectors."""
    co = [small_rational(draw, lo, hi) for _ in vectors]
    if all(x == 0 for x in co):
        co[0] = Fr(1)
    out = [Fr(0)] * len(vectors[0])
    for al, f in zip(co, vectors, strict=True):
        out = axpy(al, f, out)
    return out


def generic_row(draw, d):
    nz = draw(st.integers(1, min(d, 5)))
    pos = draw(st.lists(st.integers(0, d - 1), min_size=nz, max_size=nz, unique=True))
    w = [Fr(0)] * d
    for p in pos:
        w[p] = nonzero_rational(draw, -2, 2)
    return w


def vstr(x):
    return [str(p) for p in x]


# ------------------------------------------------------------------------------------------- builder
class NetBuilder:
    """Collects an exact net and what was planted in it, then emits the JSON case."""

    def __init__(self, d: int, rho: float, m_max: int = 8):
        self.d, self.rho, self.R, self.m_max = d, rho, Fr(rho), m_max
        self.W, self.b, self.a = [], [], []
        self.v = [Fr(0)] * d
        self.c = Fr(0)
        self.planted: dict[str, list] = {}

    def add(self, w, b, a) -> int:
        assert any(x != 0 for x in w) and len(w) == self.d
        self.W.append([Fr(x) for x in w])
        self.b.append(Fr(b))
        self.a.append(Fr(a))
        return len(self.W) - 1

    def cap(self, u, t, lam, a, record=True) -> int:
        """A unit with row λu and hyperplane u·x = ρt."""
        k = self.add(smul(lam, u), -lam * self.R * t, a)
        if record:
            self.plant("caps", {"unit": k, "u": vstr(u), "t": str(t)})
        return k

    def plant(self, key, item):
        self.planted.setdefault(key, []).append(item)

    def generic(self, draw, n):
        """n generic units (small rational rows and biases), never beyond m_max units in all."""
        for _ in range(max(0, min(n, self.m_max - len(self.W)))):
            w = generic_row(draw, self.d)
            bound = self.R * sum(abs(x) for x in w) * Fr(6, 5)
            self.add(w, small_rational(draw, -bound, bound), nonzero_rational(draw))

    def affine(self, draw, zero_ok=True):
        mode = draw(st.sampled_from(["zero", "sparse", "sparse"] if zero_ok else ["sparse"]))
        if mode == "sparse":
            for i in draw(st.lists(st.integers(0, self.d - 1), max_size=3, unique=True)):
                self.v[i] = small_rational(draw, -2, 2)
        self.c = small_rational(draw, -1, 1)

    def case(self, draw, kind, sphere, shuffle=True) -> dict:
        m = len(self.W)
        perm = list(range(m))
        if shuffle and m > 1:
            perm = draw(st.permutations(perm))  # new position p holds old unit perm[p]
        inv = {old: new for new, old in enumerate(perm)}
        W = [self.W[i] for i in perm]
        b = [self.b[i] for i in perm]
        a = [self.a[i] for i in perm]
        flt = lambda x: float(x)  # noqa: E731  (Fraction → float is correctly rounded)
        return {
            "d": self.d, "sphere": bool(sphere), "rho": float(self.rho), "kind": kind,
            "W": [[flt(x) for x in w] for w in W], "b": [flt(x) for x in b], "a": [flt(x) for x in a],
            "v": [flt(x) for x in self.v], "c": flt(self.c),
            "exact": {"W": [vstr(w) for w in W], "b": vstr(b), "a": vstr(a), "v": vstr(self.v),
                      "c": str(self.c)},
            "planted": _remap(self.planted, inv),
        }


def _remap(obj, inv):
    if isinstance(obj, dict):
        out = {}
        for k, x in obj.items():
            if k in ("unit", "outer", "inner"):
                out[k] = inv[x]
            elif k == "units":
                out[k] = [inv[i] for i in x]
            else:
                out[k] = _remap(x, inv)
        return out
    if isinstance(obj, list):
        return [_remap(x, inv) for x in obj]
    return obj


def threshold_pool(draw, m, lo=-1, hi=1):
    """m distinct thresholds in (lo, hi): specials (0, ±½, ±(1 − 2⁻²⁰), ±(1 − 2⁻⁴⁰)) and small rationals."""
    special = [Fr(0), Fr(1, 2), Fr(-1, 2), 1 - Fr(1, 2**20), -1 + Fr(1, 2**20), 1 - Fr(1, 2**40), -1 + Fr(1, 2**40),
               Fr(-3, 4), Fr(1, 3)]
    pool = st.one_of(st.sampled_from([s for s in special if lo < s < hi]),
                     st.builds(Fr, st.integers(-15, 15), st.just(16)).filter(lambda x: lo < x < hi),
                     st.builds(Fr, st.integers(-6, 6), st.just(7)).filter(lambda x: lo < x < hi))
    return draw(st.lists(pool, min_size=m, max_size=m, unique=True))



# ------------------------------------------------------------------------------------------- readers
def _exact_entry(x):
    return sympy.Rational(x) if isinstance(x, str) else sympy.Rational(Fr(x))


def case_exact(case: dict, source: str | None = None):
    """(W, b, a, v, c) as SymPy Rationals: the intended configuration (``case["exact"]``) when present and
    ``source != "float"``, else the binary rationals of the float64 entries. W is a list of rows."""
    src = case["exact"] if (source != "float" and case.get("exact")) else case
    W = [[_exact_entry(x) for x in w] for w in src["W"]]
    return (W, [_exact_entry(x) for x in src["b"]], [_exact_entry(x) for x in src["a"]],
            [_exact_entry(x) for x in src["v"]], _exact_entry(src["c"]))


def case_fractions(case: dict, source: str | None = None):
    """As :func:`case_exact`, with :class:`fractions.Fraction` entries (faster for exact tests)."""
    src = case["exact"] if (source != "float" and case.get("exact")) else case
    F = lambda x: Fr(x) if isinstance(x, str) else Fr(float(x))  # noqa: E731
    return ([[F(x) for x in w] for w in src["W"]], [F(x) for x in src["b"]], [F(x) for x in src["a"]],
            [F(x) for x in src["v"]], F(src["c"]))


def case_float(case: dict):
    """(W (m, d), b (m,), a (m,), v (d,), c) as float64 numpy arrays."""
    d = case["d"]
    W = np.asarray(case["W"], dtype=float).reshape(len(case["W"]), d)
    return W, np.asarray(case["b"], float), np.asarray(case["a"], float), np.asarray(case["v"], float), float(case["c"])
