r"""Hypothesis strategies for rob.* (SPEC §3): degenerate arrangements on purpose, and adversarial nets.

A net is f(x) = Σ_k a_k ReLU(W_k·x + b_k) + v·x + c on the sphere S^{d−1} or the ball B_R. Nets in
general position never find the bugs that matter (a seam on isolated circles, float rounding inventing
cells at tangencies, coincidences decided by tolerances), so every strategy here plants a degeneracy
exactly: the construction is done in exact rationals (:class:`fractions.Fraction`) and then rounded.

Every strategy yields a plain-JSON case; its format and the ``planted`` keys are described in
:mod:`checks.rob.rational` (the exact constructions and the case builder).

Kinds: see :data:`KINDS`. :func:`degenerate_nets` draws one of all kinds applicable to (d, sphere).
:func:`nets` is the simpler float strategy of the canonical/jump/rigidity/value properties: generic units
plus one planted feature (``ADVERSARIAL``).
Standalone on purpose (math, hypothesis, fractions and :mod:`checks.rob.rational` only).
"""

from __future__ import annotations

import math
from fractions import Fraction as Fr

from hypothesis import strategies as st

from checks.rob.rational import (
    NetBuilder,
    axpy,
    basis,
    case_exact,
    case_float,
    case_fractions,
    dot,
    generic_row,
    in_span,
    nonzero_rational,
    pyth_cs,
    rational_angle,
    rational_frame,
    rational_sphere_point,
    rational_unit_vector,
    row_scale,
    small_rational,
    smul,
    threshold_pool,
    vstr,
)

KINDS = ("single_pole", "concentric", "tangent", "through_point", "great_circles", "caps_through_data",
         "near_parallel", "cancel_1e6", "axis_aligned", "edge_threshold", "nested")

__all__ = ["KINDS", "STRATEGIES", "ADVERSARIAL", "applicable_kinds", "degenerate_nets", "nets", *KINDS,
           "rational_unit_vector", "rational_sphere_point", "case_exact", "case_float", "case_fractions"]


# ------------------------------------------------------------------------------------------ 1 single pole
@st.composite
def single_pole(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """All rows λ_k u_0 (both signs), distinct thresholds in (−1, 1), v = βu_0 + v_⊥ with v_⊥ zero, along a
    frame vector, in a coordinate plane (v_⊥ = γ(u0_j e_i − u0_i e_j), so all but two coordinates of v_⊥
    vanish exactly — e.g. v_3 = 0 on S²), or generic ⊥ u_0."""
    net = NetBuilder(d, rho, m_max)
    fr = rational_frame(draw, d, 3)
    if draw(st.booleans()):  # u_0 = e_1 exactly, with the standard frame
        fr = [basis(d, i) for i in range(min(d, 3))]
    u0 = fr[0]
    m = draw(st.integers(1, max(1, m_max)))
    for t in threshold_pool(draw, m):
        net.cap(u0, t, row_scale(draw), nonzero_rational(draw))
    beta = small_rational(draw, -2, 2)
    vmode = draw(st.sampled_from(["zero", "parallel", "frame", "coord_plane", "generic"] if d > 1 else ["parallel"]))
    vperp = [Fr(0)] * d
    if vmode == "frame" and len(fr) > 1:
        vperp = smul(nonzero_rational(draw, -2, 2), fr[1])
    elif vmode == "coord_plane":
        nz = [i for i in range(d) if u0[i] != 0]
        i = nz[0]
        j = draw(st.sampled_from([k for k in range(d) if k != i]))
        g = nonzero_rational(draw, -2, 2)
        vperp[i], vperp[j] = g * u0[j], -g * u0[i]
        if all(x == 0 for x in vperp):  # u0 = ±e_i: take e_j itself
            vperp[j] = g
    elif vmode == "generic":
        vperp = [Fr(0)] * d
        for f in fr[1:]:
            vperp = axpy(small_rational(draw, -2, 2), f, vperp)
    net.v = axpy(beta if vmode != "zero" else Fr(0), u0, vperp)
    net.c = small_rational(draw, -1, 1)
    net.plant("parallel", {"units": list(range(m)), "u": vstr(u0)})
    net.plant("pole", {"u": vstr(u0), "beta": str(beta if vmode != "zero" else 0), "v_perp": vstr(vperp),
                       "v_mode": vmode})
    return net.case(draw, "single_pole", sphere)


# ------------------------------------------------------------------------------------------ 2 concentric
@st.composite
def concentric(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """One or two groups of parallel hyperplanes (same u, distinct thresholds, both orientations), plus a
    couple of generic units; sometimes one hyperplane repeated with another scaling."""
    net = NetBuilder(d, rho, m_max)
    groups = draw(st.integers(1, 2 if m_max >= 6 else 1))
    room = max(2, m_max - 1)  # at least one generic unit when m_max allows
    for _ in range(groups):
        u = rational_unit_vector(draw, d)
        k = draw(st.integers(2, max(2, room // groups - 1)))
        idx = [net.cap(u, t, row_scale(draw), nonzero_rational(draw)) for t in threshold_pool(draw, k)]
        if draw(st.booleans()):  # the same hyperplane once more, another scaling
            i = idx[0]
            lam = row_scale(draw)
            idx.append(net.add(smul(lam, net.W[i]), lam * net.b[i], nonzero_rational(draw)))
        net.plant("parallel", {"units": idx, "u": vstr(u)})
    net.generic(draw, draw(st.integers(0, 2)))
    net.affine(draw)
    return net.case(draw, "concentric", sphere)


# ------------------------------------------------------------------------------------------- 3 tangent
def _tangent_pair(draw, net, fr, third=False):
    """Two circles u_i·x = ρ cos θ_i touching at exactly one point, in the plane of fr[0], fr[1]."""
    e, f = fr[0], fr[1]
    c1, s1, q1 = rational_angle(draw)
    c2, s2, q2 = rational_angle(draw)
    typ = draw(st.sampled_from(["external", "internal"]))
    if typ == "internal" and q1 == q2:  # θ1 = θ2: the centres would coincide
        typ = "external"
    if typ == "external" and q1 * q2 == 1:  # θ1 + θ2 = π: antipodal centres; shrink θ2
        c2, s2 = pyth_cs(q2 / 2)
    if typ == "external":
        cg, sg = c1 * c2 - s1 * s2, s1 * c2 + c1 * s2  # γ = θ1 + θ2
    else:
        cg, sg = c1 * c2 + s1 * s2, s1 * c2 - c1 * s2  # γ = θ1 − θ2
    assert sg != 0
    u1 = e
    u2 = axpy(cg, e, smul(sg, f))
    i = net.cap(u1, c1, row_scale(draw), nonzero_rational(draw))
    j = net.cap(u2, c2, row_scale(draw), nonzero_rational(draw))
    point = smul(net.R, axpy(c1, e, smul(s1, f)))
    net.plant("tangent", {"units": [i, j], "type": typ, "point": vstr(point)})
    if third:  # a third hyperplane through the tangency point
        w = generic_row(draw, net.d)
        k = net.add(w, -dot(w, point), nonzero_rational(draw))
        net.plant("through_point", {"units": [i, j, k], "point": vstr(point)})
    return i, j


@st.composite
def tangent(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Pairs of circles (hyperplanes, on the ball: scaled by R) touching the sphere of radius ρ in exactly
    one common point, externally (θ1 + θ2 = γ) or internally (|θ1 − θ2| = γ), sometimes with a third
    hyperplane through the touching point. On the ball also: planes tangent to the boundary (|t| = R),
    three planes through one point of the boundary, three planes through one line (d = 3)."""
    net = NetBuilder(d, rho, m_max)
    variants = ["circles", "circles"]
    if not sphere:
        variants += ["boundary", "point3"] + (["line3"] if d == 3 else [])
    var = draw(st.sampled_from(variants))
    if var == "circles":
        npairs = draw(st.integers(1, max(1, min(2, m_max // 3))))
        for _ in range(npairs):
            _tangent_pair(draw, net, rational_frame(draw, d, 2), third=draw(st.booleans()))
    elif var == "boundary":
        for _ in range(draw(st.integers(1, 3))):
            u = rational_unit_vector(draw, d)
            s = draw(st.sampled_from([1, -1]))
            k = net.cap(u, Fr(s), row_scale(draw), nonzero_rational(draw))
            net.plant("tangent", {"units": [k], "type": "boundary", "point": vstr(smul(s * net.R, u))})
            net.plant("edge", {"unit": k, "t": str(s), "offset": "0"})
    elif var == "point3":
        p = smul(net.R, rational_sphere_point(draw, d))
        idx = []
        for _ in range(3):
            w = smul(row_scale(draw), rational_unit_vector(draw, d)) if draw(st.booleans()) else generic_row(draw, d)
            idx.append(net.add(w, -dot(w, p), nonzero_rational(draw)))
        net.plant("through_point", {"units": idx, "point": vstr(p)})
    else:  # line3, d = 3: the line p + s·n, p ⊥ n, |p| = R·r with r ∈ {0, ½, 1} (r = 1: tangent line)
        fr = rational_frame(draw, 3, 3)
        r = draw(st.sampled_from([Fr(0), Fr(1, 2), Fr(1)]))
        cp, sp, _ = rational_angle(draw)
        p = smul(net.R * r, axpy(cp, fr[0], smul(sp, fr[1])))
        n = fr[2]
        idx = []
        for _ in range(3):
            cu, su, _ = rational_angle(draw)
            w = smul(row_scale(draw), axpy(cu, fr[0], smul(su, fr[1])))  # ⊥ n
            idx.append(net.add(w, -dot(w, p), nonzero_rational(draw)))
        net.plant("through_line", {"units": idx, "point": vstr(p), "direction": vstr(n)})
    net.generic(draw, draw(st.integers(0, max(0, min(2, m_max - len(net.W))))))
    net.affine(draw)
    return net.case(draw, "tangent", sphere)


# ------------------------------------------------------------------------------------- 4 through point
@st.composite
def through_point(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """3–5 (sometimes 2) hyperplanes through one rational point p of the sphere of radius ρ (on the ball
    also p = 0 or |p| = R/2), sometimes with a great circle through p and the point cap touching at p."""
    net = NetBuilder(d, rho, m_max)
    q = rational_sphere_point(draw, d)
    r = Fr(1) if sphere else draw(st.sampled_from([Fr(1), Fr(1), Fr(1, 2), Fr(0)]))
    p = smul(net.R * r, q)
    k = draw(st.integers(2, max(2, min(5, m_max))))
    idx = []
    for _ in range(k):
        w = smul(row_scale(draw), rational_unit_vector(draw, d)) if draw(st.booleans()) else generic_row(draw, d)
        if all(x == 0 for x in w):
            w = basis(d, 0)
        idx.append(net.add(w, -dot(w, p), nonzero_rational(draw)))
    if r == 1 and d > 1 and draw(st.booleans()):  # a great circle through p, from the Householder frame of q
        n = axpy(Fr(-1), q, basis(d, 0))
        n2 = dot(n, n)
        j = draw(st.integers(1, d - 1))
        f = axpy(-2 * n[j] / n2, n, basis(d, j)) if n2 else basis(d, j)
        g = net.add(smul(row_scale(draw), f), 0, nonzero_rational(draw))
        idx.append(g)
        net.plant("great", {"units": [g]})
    if r == 1 and draw(st.booleans()):  # the cap {q·x ≥ 1} degenerates to the point p
        lam = row_scale(draw)
        t = net.cap(q, Fr(1), lam, nonzero_rational(draw))
        idx.append(t)
        net.plant("edge", {"unit": t, "t": "1", "offset": "0"})
    net.plant("through_point", {"units": idx, "point": vstr(p)})
    net.generic(draw, draw(st.integers(0, max(0, min(2, m_max - len(net.W))))))
    net.affine(draw)
    return net.case(draw, "through_point", sphere)


# ------------------------------------------------------------------------------------- 5 great circles
@st.composite
def great_circles(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Thresholds exactly 0. A hub point p = a frame vector and 2–4 great circles with rows in the span of
    the other frame vectors (all through ±p; with the axis frame these are the coordinate great circles
    meeting at ±e_i), plus a few other b = 0 units."""
    net = NetBuilder(d, rho, m_max)
    if d < 2:
        raise ValueError("great circles need d ≥ 2")
    fr = rational_frame(draw, d, min(d, 4))
    hub, rest = fr[0], fr[1:]
    k = draw(st.integers(2, max(2, min(4, m_max - 1))))
    idx = []
    for _ in range(k):
        if draw(st.booleans()):
            w = smul(row_scale(draw), draw(st.sampled_from(rest)))
        else:
            w = in_span(draw, rest)
        idx.append(net.add(w, 0, nonzero_rational(draw)))
    extra = []
    for _ in range(draw(st.integers(0, max(0, min(2, m_max - k))))):
        extra.append(net.add(generic_row(draw, d), 0, nonzero_rational(draw)))
    net.plant("great", {"units": idx + extra})
    pt = smul(net.R, hub)
    net.plant("through_point", {"units": idx, "point": vstr(pt)})
    net.plant("through_point", {"units": idx, "point": vstr(smul(-1, pt))})
    net.affine(draw)
    return net.case(draw, "great_circles", sphere)


# -------------------------------------------------------------------------------- 6 caps through data
_S_PYTH = tuple(1 - pyth_cs(Fr(q))[0] for q in ("1/3", "1/2", "1/4", "2/3"))  # 1 − s has a rational sine


@st.composite
def caps_through_data(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Width-2n units (1/s)[ReLU(x_i·x/ρ − (1−s)) − ReLU(x_i·x/ρ − 1)] on rational data ρx_i with labels
    ±1 (s = 1/4, or s with a rational 1 − s, sin), whose second unit touches the sphere exactly at the data
    point; variants: data point x_j exactly on cap i's boundary (x_i·x_j = 1 − s), and an extra unit whose
    hyperplane passes through a data point."""
    net = NetBuilder(d, rho, m_max)
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
        fr = rational_frame(draw, d, 1 + len(comp))
        xi = fr[0]
        xj = smul(1 - s, xi)
        for co, f in zip(comp, fr[1:], strict=True):
            xj = axpy(draw(st.sampled_from([1, -1])) * co, f, xj)
        X = [xi, xj] + X[: max(0, n - 2)]
        n = len(X)
    y = [draw(st.sampled_from([1, -1])) for _ in range(n)]
    P = [smul(net.R, x) for x in X]  # the data on the sphere of radius ρ
    units = []
    for i, x in enumerate(X):
        row = smul(1 / net.R, x)
        k1 = net.add(row, -(1 - s), Fr(y[i]) / s)
        k2 = net.add(row, Fr(-1), -Fr(y[i]) / s)
        units.append([k1, k2])
        net.plant("caps", {"unit": k1, "u": vstr(x), "t": str(1 - s)})
        net.plant("caps", {"unit": k2, "u": vstr(x), "t": "1"})
        net.plant("edge", {"unit": k2, "t": "1", "offset": "0"})
        net.plant("cap_through", {"unit": k2, "point": i})
    if variant == "on_boundary":
        net.plant("cap_through", {"unit": units[0][0], "point": 1})
    if variant == "extra_through":
        j = draw(st.integers(0, n - 1))
        if draw(st.booleans()) and n > 1:  # a cap centred at x_i of the radius that reaches x_j
            i = (j + 1) % n
            k = net.add(smul(1 / net.R, X[i]), -dot(X[i], X[j]), nonzero_rational(draw))
        else:
            w = generic_row(draw, d)
            k = net.add(w, -dot(w, P[j]), nonzero_rational(draw))
        net.plant("cap_through", {"unit": k, "point": j})
    G = max((dot(X[i], X[j]) for i in range(n) for j in range(n) if i != j), default=Fr(-1))
    net.plant("data", {"X": [vstr(p) for p in P], "y": y, "s": str(s), "units": [u for pr in units for u in pr],
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
    net = NetBuilder(d, rho, m_max)
    fr = rational_frame(draw, d, 2)
    u = fr[0]
    t = threshold_pool(draw, 1)[0]
    lam = row_scale(draw)
    a0 = nonzero_rational(draw)
    i = net.cap(u, t, lam, a0)
    eps = Fr(1, 10 ** draw(st.integers(3, 12)))
    g = fr[1]
    if draw(st.booleans()):  # a small integer-ish direction, minus its component along u
        g0 = generic_row(draw, d)
        g0 = axpy(-dot(g0, u), u, g0)
        g = g0 if any(x != 0 for x in g0) else g
    mu = draw(st.sampled_from([Fr(1), Fr(1, 2), Fr(2), Fr(-1)]))
    r = draw(st.sampled_from([Fr(0), Fr(0), Fr(1), Fr(-1), Fr(1, 3)]))
    wj = smul(mu, axpy(eps * abs(lam), g, net.W[i]))
    j = net.add(wj, mu * net.b[i] * (1 + eps * r), -a0 * draw(st.sampled_from([Fr(1), Fr(1, 2), Fr(2)])))
    net.plant("near_parallel", {"units": [i, j], "eps": str(eps), "tilt": vstr(g), "mu": str(mu)})
    net.generic(draw, draw(st.integers(0, max(0, min(3, m_max - 2)))))
    net.affine(draw)
    return net.case(draw, "near_parallel", sphere)


@st.composite
def cancel_1e6(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """±10⁶ units on one hyperplane, W_j = λW_i, b_j = λb_i (λ > 0), a_i = 10⁶, a_j = −(10⁶ − δ)/λ: the
    hyperplane's coefficient a_i + λa_j = δ ∈ {0, 1, 2⁻²⁰, 10⁻³} is exact, but not in float64 when λ = 3."""
    net = NetBuilder(d, rho, m_max)
    u = rational_unit_vector(draw, d)
    t = threshold_pool(draw, 1)[0]
    lam0 = row_scale(draw)
    big = Fr(10**6)
    i = net.cap(u, t, lam0, big)
    lam = draw(st.sampled_from([Fr(2), Fr(1, 2), Fr(3), Fr(1, 3), Fr(1), Fr(7, 4)]))
    delta = draw(st.sampled_from([Fr(0), Fr(1), Fr(1, 2**20), Fr(1, 1000)]))
    j = net.add(smul(lam, net.W[i]), lam * net.b[i], -(big - delta) / lam)
    net.plant("cancel", {"units": [i, j], "lam": str(lam), "sum": str(delta)})
    net.plant("parallel", {"units": [i, j], "u": vstr(u)})
    net.generic(draw, draw(st.integers(0, max(0, min(3, m_max - 2)))))
    net.affine(draw)
    return net.case(draw, "cancel_1e6", sphere)


# -------------------------------------------------------------------------------------- 8 axis aligned
@st.composite
def axis_aligned(draw, d: int, sphere: bool = True, rho: float = 1.0, m_max: int = 8):
    """Rows λe_i and λ(e_i ± e_j), dyadic λ; for λe_i the threshold is dyadic (0, ±¼, ±½, ±¾, ±1)·ρ, for
    λ(e_i ± e_j) the bias is dyadic; v axis-aligned."""
    net = NetBuilder(d, rho, m_max)
    m = draw(st.integers(1, max(1, m_max)))
    dy = [Fr(k, 4) for k in range(-4, 5)]
    for _ in range(m):
        lam = draw(st.sampled_from([Fr(1), Fr(-1), Fr(2), Fr(-1, 2), Fr(4), Fr(-3)]))
        i = draw(st.integers(0, d - 1))
        if d > 1 and draw(st.booleans()):
            j = draw(st.sampled_from([k for k in range(d) if k != i]))
            sg = draw(st.sampled_from([1, -1]))
            w = axpy(Fr(sg), basis(d, j), basis(d, i))
            k = net.add(smul(lam, w), draw(st.sampled_from(dy)) * net.R * abs(lam), nonzero_rational(draw))
            net.plant("axis", {"unit": k, "support": sorted([i, j])})
        else:
            t = draw(st.sampled_from(dy))
            k = net.cap(basis(d, i), t, lam, nonzero_rational(draw))
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
    net = NetBuilder(d, rho, m_max)
    k = draw(st.integers(1, max(1, min(4, m_max))))
    for _ in range(k):
        u = rational_unit_vector(draw, d)
        sg = draw(st.sampled_from([1, -1]))
        off = draw(st.sampled_from(_OFFSETS))
        t = sg * (1 - off)
        j = net.cap(u, t, row_scale(draw), nonzero_rational(draw))
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
    net = NetBuilder(d, rho, m_max)
    fr = rational_frame(draw, d, 2)
    e, f = fr[0], fr[1] if d > 1 else fr[0]
    depth = draw(st.integers(2, max(2, min(3, m_max))))
    # outer cap: centre at angle phi0 = 0 from e, half-angle tangent q
    q = Fr(draw(st.integers(4, 12)), draw(st.integers(1, 4)))  # a big cap (θ near π is allowed)
    phi_q = Fr(0)  # half-angle tangent of the centre's angle from e
    prev = None
    for _ in range(depth):
        c, s = pyth_cs(phi_q)
        u = axpy(c, e, smul(s, f))
        t = pyth_cs(q)[0]
        k = net.cap(u, t, row_scale(draw), nonzero_rational(draw))
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



# ------------------------------------------------------------------------------ adversarial float nets
ADVERSARIAL = ("plain", "near_parallel", "edge_threshold", "cancel_1e6", "same_plane", "outside")
_coord = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def nets(draw, d: int, rho: float, m_max: int = 5):
    """A JSON net case on a domain of radius rho with planted adversarial structure (``kind``): near-parallel
    pairs (relative tilt 1e-3..1e-9), thresholds within 1e-9..1e-3 of ±ρ, ±10⁶ cancelling units on one
    hyperplane with different scalings, same-hyperplane pairs (λw, λb), and units that are zero or affine on
    the domain."""
    m = draw(st.integers(1, m_max))
    W = [[draw(_coord) for _ in range(d)] for _ in range(m)]
    W = [w if any(abs(x) > 1e-3 for x in w) else [1.0] + w[1:] for w in W]
    b = [draw(st.floats(-1.2, 1.2, width=64)) * rho * math.sqrt(sum(x * x for x in w)) for w in W]
    a = [draw(st.floats(-3, 3, width=64)) for _ in range(m)]
    v = [draw(st.floats(-1, 1, width=64)) for _ in range(d)]
    kind = draw(st.sampled_from(ADVERSARIAL))
    j = draw(st.integers(0, m - 1))
    w = W[j]
    nw = math.sqrt(sum(x * x for x in w))
    if kind == "near_parallel":
        eps = 10.0 ** -draw(st.integers(3, 9))
        tilt = [draw(_coord) for _ in range(d)]
        W.append([x + eps * nw * y for x, y in zip(w, tilt, strict=True)])
        b.append(b[j] * (1 + eps * draw(_coord)))
        a.append(-a[j] * draw(st.sampled_from([1.0, 0.5, 2.0])))
    elif kind == "edge_threshold":
        eps = 10.0 ** -draw(st.integers(3, 9))
        sgn = draw(st.sampled_from([-1.0, 1.0]))
        b[j] = -sgn * (rho - eps) * nw
    elif kind == "cancel_1e6":
        lam = draw(st.sampled_from([1.0, 2.0, 0.5, 3.0]))
        W += [w, [lam * x for x in w]]
        b += [b[j], lam * b[j]]
        a += [1e6, -1e6 / lam]
    elif kind == "same_plane":
        lam = draw(st.sampled_from([0.5, 2.0, 4.0]))
        W.append([lam * x for x in w])
        b.append(lam * b[j])
        a.append(draw(st.floats(-3, 3, width=64)))
    elif kind == "outside":
        W.append(list(w))
        b.append(draw(st.sampled_from([-1.0, 1.0])) * draw(st.floats(1.0, 2.0)) * rho * nw)
        a.append(draw(st.floats(-3, 3, width=64)))
    return {"d": d, "rho": rho, "kind": kind, "W": W, "b": b, "a": a, "v": v, "c": draw(st.floats(-1, 1))}
