r"""Hypothesis strategies that build DEGENERATE arrangements for rob.* on purpose (SPEC §3).

A net is f(x) = Σ_k a_k ReLU(W_k·x + b_k) + v·x + c on the sphere S^{d−1} or the ball B_R. Nets in
general position never find the bugs that matter (a seam on isolated circles, float rounding inventing
cells at tangencies, coincidences decided by tolerances), so every strategy here plants a degeneracy
exactly: the construction is done in exact rationals (:class:`fractions.Fraction`) and then rounded.

Every strategy yields a plain-JSON case::

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

Kinds: see :data:`KINDS`. :func:`degenerate_nets` draws one of all kinds applicable to (d, sphere).
Standalone on purpose (numpy, sympy, hypothesis, fractions only).
"""

from __future__ import annotations

import math
from fractions import Fraction as Fr

import numpy as np
import sympy
from hypothesis import strategies as st

KINDS = ("single_pole", "concentric", "tangent", "through_point", "great_circles", "caps_through_data",
         "near_parallel", "cancel_1e6", "axis_aligned", "edge_threshold", "nested")

_DENS = (1, 2, 3, 4, 5, 7, 8, 16)
_SCALES = tuple(Fr(x) for x in ("1", "2", "1/2", "3", "1/3", "5/4", "7", "1/10", "10", "3/7"))


# ------------------------------------------------------------------------------------- exact helpers
def _rat(draw, lo, hi, dens=_DENS) -> Fr:
    """A rational in [lo, hi] with a small denominator."""
    q = draw(st.sampled_from(dens))
    return Fr(draw(st.integers(math.ceil(Fr(lo) * q), math.floor(Fr(hi) * q))), q)


def _nonzero(draw, lo=-3, hi=3) -> Fr:
    x = _rat(draw, lo, hi)
    return x if x != 0 else Fr(draw(st.sampled_from([1, -1, 2, -1, 3])), 2)


def _scale(draw) -> Fr:
    """A nonzero row scaling λ of either sign, magnitudes from 1/10 to 10."""
    return draw(st.sampled_from([1, -1])) * draw(st.sampled_from(_SCALES))


def _dot(x, y) -> Fr:
    return sum((p * q for p, q in zip(x, y, strict=True)), Fr(0))


def _axpy(al, x, y):
    return [al * p + q for p, q in zip(x, y, strict=True)]


def _smul(al, x):
    return [al * p for p in x]


def _e(d, i, s=1):
    v = [Fr(0)] * d
    v[i] = Fr(s)
    return v


def _angle(draw, qmax=12):
    """(cos θ, sin θ, q) rational, θ = 2 arctan q ∈ (0, π)."""
    q = Fr(draw(st.integers(1, qmax)), draw(st.integers(1, qmax)))
    return _cs(q) + (q,)


def _cs(q: Fr):
    return (1 - q * q) / (1 + q * q), 2 * q / (1 + q * q)


def _stereo(y):
    """Inverse stereographic projection: y ∈ Q^{d−1} ↦ an exact rational point of S^{d−1}."""
    n2 = _dot(y, y)
    return [2 * p / (n2 + 1) for p in y] + [(n2 - 1) / (n2 + 1)]


def rational_unit_vector(draw, d: int, mode: str | None = None) -> list[Fr]:
    """An exact rational unit vector of R^d: ±e_i ("axis"), or a stereographic point whose preimage has
    a few nonzero coordinates ("sparse") or all of them ("dense", d ≤ 8 only), in random position."""
    if mode is None:
        mode = draw(st.sampled_from(["axis", "sparse", "sparse", "dense"] if d <= 8 else ["axis", "sparse"]))
    if mode == "axis" or d == 1:
        return _e(d, draw(st.integers(0, d - 1)), draw(st.sampled_from([1, -1])))
    k = d - 1 if mode == "dense" else draw(st.integers(1, min(d - 1, 4)))
    pos = draw(st.lists(st.integers(0, d - 2), min_size=k, max_size=k, unique=True))
    y = [Fr(0)] * (d - 1)
    for p in pos:
        y[p] = _nonzero(draw, -3, 3)
    x = _stereo(y)
    j = draw(st.integers(0, d - 1))  # where the "height" coordinate goes
    last = x.pop()
    x.insert(j, last)
    return x


def rational_sphere_point(draw, d: int) -> list[Fr]:
    """An exact rational point of S^{d−1}, never axis-aligned unless d = 1."""
    return rational_unit_vector(draw, d, mode="sparse" if d > 8 else draw(st.sampled_from(["sparse", "dense"])))


def _frame(draw, d: int, k: int, mode: str | None = None) -> list[list[Fr]]:
    """k exact rational orthonormal vectors of R^d: a signed coordinate frame ("axis"), or the columns of
    the Householder reflection taking e_1 to a rational unit vector u ("rational"; the first is u)."""
    k = min(k, d)
    mode = mode or draw(st.sampled_from(["axis", "rational", "rational"]))
    if mode == "axis":
        idx = draw(st.lists(st.integers(0, d - 1), min_size=k, max_size=k, unique=True))
        return [_e(d, i, draw(st.sampled_from([1, -1]))) for i in idx]
    u = rational_sphere_point(draw, d)
    n = _axpy(Fr(-1), u, _e(d, 0))  # e_1 − u
    n2 = _dot(n, n)
    cols = [0] + draw(st.lists(st.integers(1, d - 1), min_size=k - 1, max_size=k - 1, unique=True))
    if n2 == 0:
        return [_e(d, i) for i in cols]
    return [_axpy(-2 * n[i] / n2, n, _e(d, i)) for i in cols]


def _in_span(draw, frame, lo=-3, hi=3):
    """A nonzero rational combination of the frame vectors."""
    co = [_rat(draw, lo, hi) for _ in frame]
    if all(x == 0 for x in co):
        co[0] = Fr(1)
    out = [Fr(0)] * len(frame[0])
    for al, f in zip(co, frame, strict=True):
        out = _axpy(al, f, out)
    return out


def _generic_row(draw, d):
    nz = draw(st.integers(1, min(d, 5)))
    pos = draw(st.lists(st.integers(0, d - 1), min_size=nz, max_size=nz, unique=True))
    w = [Fr(0)] * d
    for p in pos:
        w[p] = _nonzero(draw, -2, 2)
    return w


def _vstr(x):
    return [str(p) for p in x]


# ------------------------------------------------------------------------------------------- builder
class _Net:
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
        k = self.add(_smul(lam, u), -lam * self.R * t, a)
        if record:
            self.plant("caps", {"unit": k, "u": _vstr(u), "t": str(t)})
        return k

    def plant(self, key, item):
        self.planted.setdefault(key, []).append(item)

    def generic(self, draw, n):
        """n generic units (small rational rows and biases), never beyond m_max units in all."""
        for _ in range(max(0, min(n, self.m_max - len(self.W)))):
            w = _generic_row(draw, self.d)
            bound = self.R * sum(abs(x) for x in w) * Fr(6, 5)
            self.add(w, _rat(draw, -bound, bound), _nonzero(draw))

    def affine(self, draw, zero_ok=True):
        mode = draw(st.sampled_from(["zero", "sparse", "sparse"] if zero_ok else ["sparse"]))
        if mode == "sparse":
            for i in draw(st.lists(st.integers(0, self.d - 1), max_size=3, unique=True)):
                self.v[i] = _rat(draw, -2, 2)
        self.c = _rat(draw, -1, 1)

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
            "exact": {"W": [_vstr(w) for w in W], "b": _vstr(b), "a": _vstr(a), "v": _vstr(self.v),
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


def _threshold_pool(draw, m, lo=-1, hi=1):
    """m distinct thresholds in (lo, hi): specials (0, ±½, ±(1 − 2⁻²⁰), ±(1 − 2⁻⁴⁰)) and small rationals."""
    special = [Fr(0), Fr(1, 2), Fr(-1, 2), 1 - Fr(1, 2**20), -1 + Fr(1, 2**20), 1 - Fr(1, 2**40), -1 + Fr(1, 2**40),
               Fr(-3, 4), Fr(1, 3)]
    pool = st.one_of(st.sampled_from([s for s in special if lo < s < hi]),
                     st.builds(Fr, st.integers(-15, 15), st.just(16)).filter(lambda x: lo < x < hi),
                     st.builds(Fr, st.integers(-6, 6), st.just(7)).filter(lambda x: lo < x < hi))
    return draw(st.lists(pool, min_size=m, max_size=m, unique=True))


# ------------------------------------------------------------------------------------------ 1 single pole
@st.composite
def single_pole(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """All rows λ_k u_0 (both signs), distinct thresholds in (−1, 1), v = βu_0 + v_⊥ with v_⊥ zero, along a
    frame vector, in a coordinate plane (v_⊥ = γ(u0_j e_i − u0_i e_j), so all but two coordinates of v_⊥
    vanish exactly — e.g. v_3 = 0 on S²), or generic ⊥ u_0."""
    net = _Net(d, rho, m_max)
    fr = _frame(draw, d, 3)
    if draw(st.booleans()):  # u_0 = e_1 exactly, with the standard frame
        fr = [_e(d, i) for i in range(min(d, 3))]
    u0 = fr[0]
    m = draw(st.integers(1, max(1, m_max)))
    for t in _threshold_pool(draw, m):
        net.cap(u0, t, _scale(draw), _nonzero(draw))
    beta = _rat(draw, -2, 2)
    vmode = draw(st.sampled_from(["zero", "parallel", "frame", "coord_plane", "generic"] if d > 1 else ["parallel"]))
    vperp = [Fr(0)] * d
    if vmode == "frame" and len(fr) > 1:
        vperp = _smul(_nonzero(draw, -2, 2), fr[1])
    elif vmode == "coord_plane":
        nz = [i for i in range(d) if u0[i] != 0]
        i = nz[0]
        j = draw(st.sampled_from([k for k in range(d) if k != i]))
        g = _nonzero(draw, -2, 2)
        vperp[i], vperp[j] = g * u0[j], -g * u0[i]
        if all(x == 0 for x in vperp):  # u0 = ±e_i: take e_j itself
            vperp[j] = g
    elif vmode == "generic":
        vperp = [Fr(0)] * d
        for f in fr[1:]:
            vperp = _axpy(_rat(draw, -2, 2), f, vperp)
    net.v = _axpy(beta if vmode != "zero" else Fr(0), u0, vperp)
    net.c = _rat(draw, -1, 1)
    net.plant("parallel", {"units": list(range(m)), "u": _vstr(u0)})
    net.plant("pole", {"u": _vstr(u0), "beta": str(beta if vmode != "zero" else 0), "v_perp": _vstr(vperp),
                       "v_mode": vmode})
    return net.case(draw, "single_pole", sphere)


# ------------------------------------------------------------------------------------------ 2 concentric
@st.composite
def concentric(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """One or two groups of parallel hyperplanes (same u, distinct thresholds, both orientations), plus a
    couple of generic units; sometimes one hyperplane repeated with another scaling."""
    net = _Net(d, rho, m_max)
    groups = draw(st.integers(1, 2 if m_max >= 6 else 1))
    room = max(2, m_max - 1)  # at least one generic unit when m_max allows
    for _ in range(groups):
        u = rational_unit_vector(draw, d)
        k = draw(st.integers(2, max(2, room // groups - 1)))
        idx = [net.cap(u, t, _scale(draw), _nonzero(draw)) for t in _threshold_pool(draw, k)]
        if draw(st.booleans()):  # the same hyperplane once more, another scaling
            i = idx[0]
            lam = _scale(draw)
            idx.append(net.add(_smul(lam, net.W[i]), lam * net.b[i], _nonzero(draw)))
        net.plant("parallel", {"units": idx, "u": _vstr(u)})
    net.generic(draw, draw(st.integers(0, 2)))
    net.affine(draw)
    return net.case(draw, "concentric", sphere)


# ------------------------------------------------------------------------------------------- 3 tangent
def _tangent_pair(draw, net, fr, third=False):
    """Two circles u_i·x = ρ cos θ_i touching at exactly one point, in the plane of fr[0], fr[1]."""
    e, f = fr[0], fr[1]
    c1, s1, q1 = _angle(draw)
    c2, s2, q2 = _angle(draw)
    typ = draw(st.sampled_from(["external", "internal"]))
    if typ == "internal" and q1 == q2:  # θ1 = θ2: the centres would coincide
        typ = "external"
    if typ == "external" and q1 * q2 == 1:  # θ1 + θ2 = π: antipodal centres; shrink θ2
        c2, s2 = _cs(q2 / 2)
    if typ == "external":
        cg, sg = c1 * c2 - s1 * s2, s1 * c2 + c1 * s2  # γ = θ1 + θ2
    else:
        cg, sg = c1 * c2 + s1 * s2, s1 * c2 - c1 * s2  # γ = θ1 − θ2
    assert sg != 0
    u1 = e
    u2 = _axpy(cg, e, _smul(sg, f))
    i = net.cap(u1, c1, _scale(draw), _nonzero(draw))
    j = net.cap(u2, c2, _scale(draw), _nonzero(draw))
    point = _smul(net.R, _axpy(c1, e, _smul(s1, f)))
    net.plant("tangent", {"units": [i, j], "type": typ, "point": _vstr(point)})
    if third:  # a third hyperplane through the tangency point
        w = _generic_row(draw, net.d)
        k = net.add(w, -_dot(w, point), _nonzero(draw))
        net.plant("through_point", {"units": [i, j, k], "point": _vstr(point)})
    return i, j


@st.composite
def tangent(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Pairs of circles (hyperplanes, on the ball: scaled by R) touching the sphere of radius ρ in exactly
    one common point, externally (θ1 + θ2 = γ) or internally (|θ1 − θ2| = γ), sometimes with a third
    hyperplane through the touching point. On the ball also: planes tangent to the boundary (|t| = R),
    three planes through one point of the boundary, three planes through one line (d = 3)."""
    net = _Net(d, rho, m_max)
    variants = ["circles", "circles"]
    if not sphere:
        variants += ["boundary", "point3"] + (["line3"] if d == 3 else [])
    var = draw(st.sampled_from(variants))
    if var == "circles":
        npairs = draw(st.integers(1, max(1, min(2, m_max // 3))))
        for _ in range(npairs):
            _tangent_pair(draw, net, _frame(draw, d, 2), third=draw(st.booleans()))
    elif var == "boundary":
        for _ in range(draw(st.integers(1, 3))):
            u = rational_unit_vector(draw, d)
            s = draw(st.sampled_from([1, -1]))
            k = net.cap(u, Fr(s), _scale(draw), _nonzero(draw))
            net.plant("tangent", {"units": [k], "type": "boundary", "point": _vstr(_smul(s * net.R, u))})
            net.plant("edge", {"unit": k, "t": str(s), "offset": "0"})
    elif var == "point3":
        p = _smul(net.R, rational_sphere_point(draw, d))
        idx = []
        for _ in range(3):
            w = _smul(_scale(draw), rational_unit_vector(draw, d)) if draw(st.booleans()) else _generic_row(draw, d)
            idx.append(net.add(w, -_dot(w, p), _nonzero(draw)))
        net.plant("through_point", {"units": idx, "point": _vstr(p)})
    else:  # line3, d = 3: the line p + s·n, p ⊥ n, |p| = R·r with r ∈ {0, ½, 1} (r = 1: tangent line)
        fr = _frame(draw, 3, 3)
        r = draw(st.sampled_from([Fr(0), Fr(1, 2), Fr(1)]))
        cp, sp, _ = _angle(draw)
        p = _smul(net.R * r, _axpy(cp, fr[0], _smul(sp, fr[1])))
        n = fr[2]
        idx = []
        for _ in range(3):
            cu, su, _ = _angle(draw)
            w = _smul(_scale(draw), _axpy(cu, fr[0], _smul(su, fr[1])))  # ⊥ n
            idx.append(net.add(w, -_dot(w, p), _nonzero(draw)))
        net.plant("through_line", {"units": idx, "point": _vstr(p), "direction": _vstr(n)})
    net.generic(draw, draw(st.integers(0, max(0, min(2, m_max - len(net.W))))))
    net.affine(draw)
    return net.case(draw, "tangent", sphere)


# ------------------------------------------------------------------------------------- 4 through point
@st.composite
def through_point(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """3–5 (sometimes 2) hyperplanes through one rational point p of the sphere of radius ρ (on the ball
    also p = 0 or |p| = R/2), sometimes with a great circle through p and the point cap touching at p."""
    net = _Net(d, rho, m_max)
    q = rational_sphere_point(draw, d)
    r = Fr(1) if sphere else draw(st.sampled_from([Fr(1), Fr(1), Fr(1, 2), Fr(0)]))
    p = _smul(net.R * r, q)
    k = draw(st.integers(2, max(2, min(5, m_max))))
    idx = []
    for _ in range(k):
        w = _smul(_scale(draw), rational_unit_vector(draw, d)) if draw(st.booleans()) else _generic_row(draw, d)
        if all(x == 0 for x in w):
            w = _e(d, 0)
        idx.append(net.add(w, -_dot(w, p), _nonzero(draw)))
    if r == 1 and d > 1 and draw(st.booleans()):  # a great circle through p, from the Householder frame of q
        n = _axpy(Fr(-1), q, _e(d, 0))
        n2 = _dot(n, n)
        j = draw(st.integers(1, d - 1))
        f = _axpy(-2 * n[j] / n2, n, _e(d, j)) if n2 else _e(d, j)
        g = net.add(_smul(_scale(draw), f), 0, _nonzero(draw))
        idx.append(g)
        net.plant("great", {"units": [g]})
    if r == 1 and draw(st.booleans()):  # the cap {q·x ≥ 1} degenerates to the point p
        lam = _scale(draw)
        t = net.cap(q, Fr(1), lam, _nonzero(draw))
        idx.append(t)
        net.plant("edge", {"unit": t, "t": "1", "offset": "0"})
    net.plant("through_point", {"units": idx, "point": _vstr(p)})
    net.generic(draw, draw(st.integers(0, max(0, min(2, m_max - len(net.W))))))
    net.affine(draw)
    return net.case(draw, "through_point", sphere)


# ------------------------------------------------------------------------------------- 5 great circles
@st.composite
def great_circles(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Thresholds exactly 0. A hub point p = a frame vector and 2–4 great circles with rows in the span of
    the other frame vectors (all through ±p; with the axis frame these are the coordinate great circles
    meeting at ±e_i), plus a few other b = 0 units."""
    net = _Net(d, rho, m_max)
    if d < 2:
        raise ValueError("great circles need d ≥ 2")
    fr = _frame(draw, d, min(d, 4))
    hub, rest = fr[0], fr[1:]
    k = draw(st.integers(2, max(2, min(4, m_max - 1))))
    idx = []
    for _ in range(k):
        if draw(st.booleans()):
            w = _smul(_scale(draw), draw(st.sampled_from(rest)))
        else:
            w = _in_span(draw, rest)
        idx.append(net.add(w, 0, _nonzero(draw)))
    extra = []
    for _ in range(draw(st.integers(0, max(0, min(2, m_max - k))))):
        extra.append(net.add(_generic_row(draw, d), 0, _nonzero(draw)))
    net.plant("great", {"units": idx + extra})
    pt = _smul(net.R, hub)
    net.plant("through_point", {"units": idx, "point": _vstr(pt)})
    net.plant("through_point", {"units": idx, "point": _vstr(_smul(-1, pt))})
    net.affine(draw)
    return net.case(draw, "great_circles", sphere)


# -------------------------------------------------------------------------------- 6 caps through data
_S_PYTH = tuple(1 - _cs(Fr(q))[0] for q in ("1/3", "1/2", "1/4", "2/3"))  # 1 − s has a rational sine


@st.composite
def caps_through_data(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Width-2n units (1/s)[ReLU(x_i·x/ρ − (1−s)) − ReLU(x_i·x/ρ − 1)] on rational data ρx_i with labels
    ±1 (s = 1/4, or s with a rational 1 − s, sin), whose second unit touches the sphere exactly at the data
    point; variants: data point x_j exactly on cap i's boundary (x_i·x_j = 1 − s), and an extra unit whose
    hyperplane passes through a data point."""
    net = _Net(d, rho, m_max)
    n = draw(st.integers(1, max(1, min(5, (m_max - 1) // 2))))
    variant = draw(st.sampled_from(["plain", "on_boundary", "extra_through"]))
    s = Fr(1, 4)
    X = [rational_sphere_point(draw, d) for _ in range(n)]
    if variant == "on_boundary":
        if d >= 5 and draw(st.booleans()):
            s, comp = Fr(1, 4), [Fr(2, 4), Fr(1, 4), Fr(1, 4), Fr(1, 4)]  # 7/16 = (4 + 1 + 1 + 1)/16
        else:
            s = draw(st.sampled_from(_S_PYTH))
            comp = [_cs_sin(1 - s)]
        fr = _frame(draw, d, 1 + len(comp))
        xi = fr[0]
        xj = _smul(1 - s, xi)
        for co, f in zip(comp, fr[1:], strict=True):
            xj = _axpy(draw(st.sampled_from([1, -1])) * co, f, xj)
        X = [xi, xj] + X[: max(0, n - 2)]
        n = len(X)
    y = [draw(st.sampled_from([1, -1])) for _ in range(n)]
    P = [_smul(net.R, x) for x in X]  # the data on the sphere of radius ρ
    units = []
    for i, x in enumerate(X):
        row = _smul(1 / net.R, x)
        k1 = net.add(row, -(1 - s), Fr(y[i]) / s)
        k2 = net.add(row, Fr(-1), -Fr(y[i]) / s)
        units.append([k1, k2])
        net.plant("caps", {"unit": k1, "u": _vstr(x), "t": str(1 - s)})
        net.plant("caps", {"unit": k2, "u": _vstr(x), "t": "1"})
        net.plant("edge", {"unit": k2, "t": "1", "offset": "0"})
        net.plant("cap_through", {"unit": k2, "point": i})
    if variant == "on_boundary":
        net.plant("cap_through", {"unit": units[0][0], "point": 1})
    if variant == "extra_through":
        j = draw(st.integers(0, n - 1))
        if draw(st.booleans()) and n > 1:  # a cap centred at x_i of the radius that reaches x_j
            i = (j + 1) % n
            k = net.add(_smul(1 / net.R, X[i]), -_dot(X[i], X[j]), _nonzero(draw))
        else:
            w = _generic_row(draw, d)
            k = net.add(w, -_dot(w, P[j]), _nonzero(draw))
        net.plant("cap_through", {"unit": k, "point": j})
    G = max((_dot(X[i], X[j]) for i in range(n) for j in range(n) if i != j), default=Fr(-1))
    net.plant("data", {"X": [_vstr(p) for p in P], "y": y, "s": str(s), "units": [u for pr in units for u in pr],
                       "interpolates": bool(G <= 1 - s), "disjoint": bool(G <= 2 * (1 - s) ** 2 - 1)})
    return net.case(draw, "caps_through_data", sphere)


def _cs_sin(cos: Fr) -> Fr:
    """The rational sine of a Pythagorean cosine (raises if it is not one)."""
    s2 = 1 - cos * cos
    num, den = math.isqrt(s2.numerator), math.isqrt(s2.denominator)
    assert Fr(num, den) ** 2 == s2, cos
    return Fr(num, den)


# -------------------------------------------------------------------------- 7 near parallel, cancel 1e6
@st.composite
def near_parallel(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """A unit and a copy tilted by a relative ε = 10^−k (k = 3..12): W_j = μ(W_i + ε|W_i| g) with g a
    rational unit vector ⊥ u (or a small integer vector), b_j = μ b_i (1 + ε r), a_j = −κ a_i."""
    if d < 2:
        raise ValueError("near-parallel needs d ≥ 2")
    net = _Net(d, rho, m_max)
    fr = _frame(draw, d, 2)
    u = fr[0]
    t = _threshold_pool(draw, 1)[0]
    lam = _scale(draw)
    a0 = _nonzero(draw)
    i = net.cap(u, t, lam, a0)
    eps = Fr(1, 10 ** draw(st.integers(3, 12)))
    g = fr[1]
    if draw(st.booleans()):  # a small integer-ish direction, minus its component along u
        g0 = _generic_row(draw, d)
        g0 = _axpy(-_dot(g0, u), u, g0)
        g = g0 if any(x != 0 for x in g0) else g
    mu = draw(st.sampled_from([Fr(1), Fr(1, 2), Fr(2), Fr(-1)]))
    r = draw(st.sampled_from([Fr(0), Fr(0), Fr(1), Fr(-1), Fr(1, 3)]))
    wj = _smul(mu, _axpy(eps * abs(lam), g, net.W[i]))
    j = net.add(wj, mu * net.b[i] * (1 + eps * r), -a0 * draw(st.sampled_from([Fr(1), Fr(1, 2), Fr(2)])))
    net.plant("near_parallel", {"units": [i, j], "eps": str(eps), "tilt": _vstr(g), "mu": str(mu)})
    net.generic(draw, draw(st.integers(0, max(0, min(3, m_max - 2)))))
    net.affine(draw)
    return net.case(draw, "near_parallel", sphere)


@st.composite
def cancel_1e6(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """±10⁶ units on one hyperplane, W_j = λW_i, b_j = λb_i (λ > 0), a_i = 10⁶, a_j = −(10⁶ − δ)/λ: the
    hyperplane's coefficient a_i + λa_j = δ ∈ {0, 1, 2⁻²⁰, 10⁻³} is exact, but not in float64 when λ = 3."""
    net = _Net(d, rho, m_max)
    u = rational_unit_vector(draw, d)
    t = _threshold_pool(draw, 1)[0]
    lam0 = _scale(draw)
    big = Fr(10**6)
    i = net.cap(u, t, lam0, big)
    lam = draw(st.sampled_from([Fr(2), Fr(1, 2), Fr(3), Fr(1, 3), Fr(1), Fr(7, 4)]))
    delta = draw(st.sampled_from([Fr(0), Fr(1), Fr(1, 2**20), Fr(1, 1000)]))
    j = net.add(_smul(lam, net.W[i]), lam * net.b[i], -(big - delta) / lam)
    net.plant("cancel", {"units": [i, j], "lam": str(lam), "sum": str(delta)})
    net.plant("parallel", {"units": [i, j], "u": _vstr(u)})
    net.generic(draw, draw(st.integers(0, max(0, min(3, m_max - 2)))))
    net.affine(draw)
    return net.case(draw, "cancel_1e6", sphere)


# -------------------------------------------------------------------------------------- 8 axis aligned
@st.composite
def axis_aligned(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Rows λe_i and λ(e_i ± e_j), dyadic λ; for λe_i the threshold is dyadic (0, ±¼, ±½, ±¾, ±1)·ρ, for
    λ(e_i ± e_j) the bias is dyadic; v axis-aligned."""
    net = _Net(d, rho, m_max)
    m = draw(st.integers(1, max(1, m_max)))
    dy = [Fr(k, 4) for k in range(-4, 5)]
    for _ in range(m):
        lam = draw(st.sampled_from([Fr(1), Fr(-1), Fr(2), Fr(-1, 2), Fr(4), Fr(-3)]))
        i = draw(st.integers(0, d - 1))
        if d > 1 and draw(st.booleans()):
            j = draw(st.sampled_from([k for k in range(d) if k != i]))
            sg = draw(st.sampled_from([1, -1]))
            w = _axpy(Fr(sg), _e(d, j), _e(d, i))
            k = net.add(_smul(lam, w), draw(st.sampled_from(dy)) * net.R * abs(lam), _nonzero(draw))
            net.plant("axis", {"unit": k, "support": sorted([i, j])})
        else:
            t = draw(st.sampled_from(dy))
            k = net.cap(_e(d, i), t, lam, _nonzero(draw))
            net.plant("axis", {"unit": k, "support": [i]})
            if abs(t) == 1:
                net.plant("edge", {"unit": k, "t": str(t), "offset": "0"})
        if net.b[k] == 0:
            net.plant("great", {"units": [k]})
    for i in draw(st.lists(st.integers(0, d - 1), max_size=2, unique=True)):
        net.v[i] = draw(st.sampled_from(dy))
    net.c = draw(st.sampled_from(dy))
    return net.case(draw, "axis_aligned", sphere)


# ------------------------------------------------------------------------------------ 9 edge threshold
_OFFSETS = (Fr(0), Fr(0), Fr(1, 2**40), Fr(1, 2**52), Fr(1, 2**30), Fr(1, 10**12), Fr(-1, 2**40), Fr(-1, 2**20))


@st.composite
def edge_threshold(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Thresholds t = ±(1 − δ)ρ with δ ∈ {0, 2⁻⁴⁰, 2⁻⁵², 2⁻³⁰, 10⁻¹²} (inside or on the boundary) and
    δ < 0 (just outside: the unit is affine on the domain)."""
    net = _Net(d, rho, m_max)
    k = draw(st.integers(1, max(1, min(4, m_max))))
    for _ in range(k):
        u = rational_unit_vector(draw, d)
        sg = draw(st.sampled_from([1, -1]))
        off = draw(st.sampled_from(_OFFSETS))
        t = sg * (1 - off)
        j = net.cap(u, t, _scale(draw), _nonzero(draw))
        net.plant("edge", {"unit": j, "t": str(t), "offset": str(off)})
    net.generic(draw, draw(st.integers(0, max(0, min(2, m_max - k)))))
    net.affine(draw)
    return net.case(draw, "edge_threshold", sphere)


# ------------------------------------------------------------------------------------------- 10 nested
@st.composite
def nested(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Chains of 2–3 caps, each strictly inside the previous one: same centre (t increasing) or a nearby
    centre at angle γ with θ_inner < θ_outer − γ, built with half-angle tangents (tan((θ1 − γ)/2) =
    (q1 − q_γ)/(1 + q1 q_γ)) so everything is rational."""
    net = _Net(d, rho, m_max)
    fr = _frame(draw, d, 2)
    e, f = fr[0], fr[1] if d > 1 else fr[0]
    depth = draw(st.integers(2, max(2, min(3, m_max))))
    # outer cap: centre at angle phi0 = 0 from e, half-angle tangent q
    q = Fr(draw(st.integers(4, 12)), draw(st.integers(1, 4)))  # a big cap (θ near π is allowed)
    phi_q = Fr(0)  # half-angle tangent of the centre's angle from e
    prev = None
    for _ in range(depth):
        c, s = _cs(phi_q)
        u = _axpy(c, e, _smul(s, f))
        t = _cs(q)[0]
        k = net.cap(u, t, _scale(draw), _nonzero(draw))
        if prev is not None:
            net.plant("nested", {"outer": prev, "inner": k})
        prev = k
        same = d == 1 or draw(st.booleans())
        if same:
            q = q * draw(st.sampled_from([Fr(1, 2), Fr(2, 3), Fr(1, 3), Fr(9, 10)]))
        else:
            qg = q * draw(st.sampled_from([Fr(1, 4), Fr(1, 2), Fr(1, 3)]))  # γ < θ
            room = (q - qg) / (1 + q * qg)  # tan((θ − γ)/2)
            q = room * draw(st.sampled_from([Fr(1, 2), Fr(3, 4), Fr(99, 100)]))
            sgn = draw(st.sampled_from([1, -1]))
            if 1 - sgn * phi_q * qg == 0:
                sgn = -sgn
            phi_q = (phi_q + sgn * qg) / (1 - sgn * phi_q * qg)  # compose rotations by ±γ
    net.generic(draw, draw(st.integers(0, max(0, min(2, m_max - depth)))))
    net.affine(draw)
    return net.case(draw, "nested", sphere)


# ----------------------------------------------------------------------------------------- aggregates
STRATEGIES = {"single_pole": single_pole, "concentric": concentric, "tangent": tangent,
              "through_point": through_point, "great_circles": great_circles,
              "caps_through_data": caps_through_data, "near_parallel": near_parallel, "cancel_1e6": cancel_1e6,
              "axis_aligned": axis_aligned, "edge_threshold": edge_threshold, "nested": nested}
assert tuple(STRATEGIES) == KINDS


def applicable_kinds(d: int, sphere: bool) -> tuple[str, ...]:
    out = list(KINDS)
    if d < 2:
        out = [k for k in out if k not in ("great_circles", "near_parallel", "tangent", "nested")]
    return tuple(out)


def degenerate_nets(d: int, sphere: bool, rho: float = 1.0, m_max: int = 8, kinds=None):
    """Any applicable kind (or one of the given ones), each equally likely: a one_of over the kinds."""
    rho = 1.0 if sphere else float(rho)
    ks = kinds or applicable_kinds(d, sphere)
    strats = {k: STRATEGIES[k](d, sphere=sphere, rho=rho, m_max=m_max) for k in ks}
    # sampled_from + flatmap rather than one_of: every kind gets an even share of the examples
    return st.sampled_from(tuple(ks)).flatmap(strats.__getitem__)


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
