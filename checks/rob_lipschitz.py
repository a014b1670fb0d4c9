r"""Falsification properties for the certified Lipschitz routines (SPEC §0 "Certified", §3, §4).

The nets come from :mod:`checks.rob_strategies`, which builds degenerate arrangements on purpose (single
poles, concentric / tangent / nested circles, many circles through one point, great circles, caps through
data points, near-parallel pairs, ±10⁶ cancellations, axis-aligned weights, thresholds at ±1 and ±R), and
each property is two-sided: it fails on a constant that is too high as well as on one that is too low.

* ``oracle_ball`` — the exact constant on B_R equals the SOCP brute force over all 2^m patterns
  (:func:`checks.rob_oracles.ball_brute_force`, exact acceptance), as exact rationals;
* ``single_pole`` — on S^{d−1} the constant of a single-pole net equals the one-dimensional formula of
  SPEC §4 (:func:`numerics.rob.single_pole_lipschitz`) exactly in d = 3; in d ≥ 4, where the general
  routine brackets, the bracket contains it;
* ``probe_s2`` — no genuine point of S² has a larger tangential gradient than the exact constant (dense
  two-sided probes, :func:`checks.rob_oracles.sphere_probe`; a probe point above it is re-evaluated exactly at a
  rational point of the sphere), and the constant's witness is genuine: the point lies in the closure of the
  claimed cell and the tangential norm there equals the constant (computed from the net's definition);
* ``float_vs_rational`` — the float net and its exact binary-rational reading get the same exact constant.

Screens and confirmations are exact here (the routines under test return exact values), so a screen hit
is confirmed by recomputing the margin, or, for ``probe_s2``, by an exact evaluation at a rational point.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp
from hypothesis import strategies as st

from checks import rob_oracles, rob_strategies
from checks.falsify import NotApplicable, Property
from numerics import rob as K
from numerics.rob import exact as KE

__all__ = ["oracle_ball_property", "single_pole_property", "probe_s2_property", "float_vs_rational_property",
           "degenerate_rigidity_property", "exact_tangential2"]


class RoutineCrashed(Exception):
    """The routine under test raised on a valid net: a counterexample in its own right."""


def _lip(net, dom, **kw):
    try:
        return K.lipschitz(net, dom, **kw)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 — any other exception on a valid net is a bug of the routine
        raise RoutineCrashed(f"{type(exc).__name__}: {exc}") from exc


def _crash_is_a_hit(margin_fn):
    def wrapped(case):
        try:
            return margin_fn(case)
        except RoutineCrashed:
            return 1.0
    return wrapped


def _domain(case):
    return K.Sphere(case["d"]) if case["sphere"] else K.Ball(case["d"], case["rho"])


def _net(case):
    return rob_strategies.case_float(case)


def _rel(x, y) -> float:
    """|x − y| / max(1, |y|) at 60 digits, for exact SymPy numbers."""
    with mpmath.workdps(60):
        xv, yv = mpmath.mpf(sp.N(x, 70)), mpmath.mpf(sp.N(y, 70))
        return float(abs(xv - yv) / max(1, abs(yv)))


# --------------------------------------------------------------------------------------- ball oracle
def _oracle_ball_margin(case):
    net = _net(case)
    if len(net[2]) > 7:
        raise NotApplicable("brute force kept to m ≤ 7")
    L = _lip(net, _domain(case))
    bf = rob_oracles.ball_brute_force(net, Fraction(case["rho"]))
    if bf.unresolved:
        raise NotApplicable("the brute force left a pattern unresolved")
    if not L.exact:
        lo, hi = L.lower, L.upper
        v = float(bf.value)
        return max(v - hi, lo - v) / max(1.0, v)
    # exact comparison: Lip² is a + b√D (here rational), the oracle's a Fraction
    return 1.0 if L.value2.cmp(KE.QNum(bf.value2)) != 0 else -1.0


@st.composite
def near_triple(draw, d: int, sphere: bool, rho: float = 1.5):
    """Three kinks nearly through one point p: normals w₁, w₂, w₃ = base + (−0.3, 0, 0.3)·t in one plane
    (tangent to the sphere at p on S^{d−1}), so w₂ lies between the others, the exact triple point has six
    cells and misses the patterns (1,0,1) and (0,1,0), and shifting the third kink by ε = ±10^−k opens a
    triangle with one of them. Weights (2, −2, 2) make (1,0,1) the steepest cell, 2‖w₁ + w₃‖ against ≈ 2
    elsewhere: a routine that merges nearly coincident points loses the maximum."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.integers(4, 12))
    eps = draw(st.sampled_from([1.0, -1.0])) * 10.0 ** -k
    p = rng.normal(size=d)
    if sphere:
        p /= np.linalg.norm(p)
    else:
        p *= rho * draw(st.floats(0.0, 0.6)) / max(np.linalg.norm(p), 1e-12)
    base, t = rng.normal(size=d), rng.normal(size=d)
    if sphere:
        base -= (base @ p) * p
    base /= np.linalg.norm(base)
    t -= (t @ base) * base
    if sphere:
        t -= (t @ p) * p
    t /= np.linalg.norm(t)
    W = np.array([base + c * t for c in (-0.3, 0.0, 0.3)])
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    b = -(W @ p)
    b[2] += eps
    return {"d": d, "sphere": sphere, "rho": 1.0 if sphere else rho, "kind": "near_triple", "W": W.tolist(),
            "b": b.tolist(), "a": [2.0, -2.0, 2.0], "v": list(0.05 * rng.normal(size=d)), "c": 0.0}


@st.composite
def thin_cap(draw, d: int, rho: float = 1.5):
    """Generic units plus one hyperplane at distance (1 − 10^−k)R from the centre with a large weight: the
    thin cap of the ball it cuts off is the steepest cell, so a cell test that drops cells near the boundary
    loses the maximum."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.integers(2, 9))
    m = draw(st.integers(1, 3))
    W = rng.normal(size=(m + 1, d))
    b = list(0.5 * rho * rng.normal(size=m) * np.linalg.norm(W[:m], axis=1))
    u = W[m] / np.linalg.norm(W[m])
    W[m] = u
    b.append(-(1 - 10.0 ** -k) * rho)
    a = list(rng.normal(size=m)) + [draw(st.sampled_from([6.0, -6.0]))]
    return {"d": d, "sphere": False, "rho": rho, "kind": "thin_cap", "W": W.tolist(), "b": b, "a": a,
            "v": list(0.1 * rng.normal(size=d)), "c": 0.0}


def _weighted(d, sphere, extra):
    """Every applicable kind, with the given ones drawn more often (they hold the bugs that matter here)."""
    return tuple(rob_strategies.applicable_kinds(d, sphere)) + tuple(k for k, n in extra.items() for _ in range(n))


def oracle_ball_property(d: int, budget: int = 60) -> Property:
    kinds = _weighted(d, False, {"edge_threshold": 3, "tangent": 2, "through_point": 2, "near_parallel": 1})
    strat = st.one_of(rob_strategies.degenerate_nets(d, sphere=False, rho=1.5, m_max=6, kinds=kinds),
                      near_triple(d, sphere=False), thin_cap(d))
    return Property(name=f"rob.lipschitz/oracle_ball_d{d}", strategy=strat, screen=_crash_is_a_hit(_oracle_ball_margin),
                    confirm=_crash_is_a_hit(_oracle_ball_margin), to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)


# ------------------------------------------------------------------------------------------ single pole
def _single_pole_margin(case):
    net = _net(case)
    try:
        sp_ = K.single_pole_lipschitz(net)
    except ValueError as exc:
        raise NotApplicable(str(exc)) from None
    L = _lip(net, _domain(case), time_limit=20)
    if L.exact:
        return _rel(L.value ** 2, sp_.lipschitz2) - 1e-40
    v = float(sp_.value)
    return max(v - L.upper, L.lower - v) / max(1.0, v)


def single_pole_property(d: int, budget: int = 60) -> Property:
    strat = rob_strategies.single_pole(d, sphere=True, m_max=6)
    return Property(name=f"rob.lipschitz/single_pole_d{d}", strategy=strat, screen=_crash_is_a_hit(_single_pole_margin),
                    confirm=_crash_is_a_hit(_single_pole_margin), to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)


# ----------------------------------------------------------------------------------------- S² probes
def _rational_on_sphere(x):
    """A rational point exactly on S², near the float point x (inverse stereographic projection)."""
    x = np.asarray(x, float)
    x = x / np.linalg.norm(x)
    k = int(np.argmax(np.abs(x)))
    s = -1.0 if x[k] > 0 else 1.0  # project from the pole s·e_k, far from x
    y = [Fraction(float(t)) / Fraction(1.0 - s * x[k]) for t in x]
    y[k] = Fraction(0)
    n2 = sum(t * t for t in y)
    out = [2 * t / (n2 + 1) for t in y]
    out[k] = int(s) * (n2 - 1) / (n2 + 1)
    return out


def exact_tangential2(net, x):
    """‖g‖² − (g·x)² at the rational point x of the sphere, exactly (None if x lies on a kink)."""
    W, b, a, v = ([[Fraction(float(t)) for t in row] for row in net[0]], [Fraction(float(t)) for t in net[1]],
                  [Fraction(float(t)) for t in net[2]], [Fraction(float(t)) for t in net[3]])
    g = list(v)
    for w, bk, ak in zip(W, b, a, strict=True):
        z = sum(wi * xi for wi, xi in zip(w, x, strict=True)) + bk
        if z == 0:
            return None
        if z > 0:
            g = [gi + ak * wi for gi, wi in zip(g, w, strict=True)]
    gx = sum(gi * xi for gi, xi in zip(g, x, strict=True))
    return sum(gi * gi for gi in g) - gx * gx


def _witness_gap(net, L) -> float:
    """How far the routine's witness is from being genuine: the claimed cell must agree with the signs of
    every unit at the point (units within 1e-7 of their kink excepted: the point may be a vertex or on an
    edge), and the tangential norm there, from that pattern, must equal the constant. Computed in mpmath
    from the net's definition, not from the routine."""
    wit = L.witness or {}
    x, pat = wit.get("point"), wit.get("pattern")
    if x is None or pat is None:
        return 0.0
    cf = K.canonicalize(net, K.Sphere(3))
    with mpmath.workdps(40):
        xv = [mpmath.mpf(t) for t in x]
        nx = mpmath.sqrt(sum(t * t for t in xv))
        xv = [t / nx for t in xv]
        g = [mpmath.mpf(float(t)) for t in cf.vq]
        for j, (w, b, a) in enumerate(zip(cf.Wq, cf.bq, cf.aq, strict=True)):
            z = sum(mpmath.mpf(float(wi)) * xi for wi, xi in zip(w, xv, strict=True)) + mpmath.mpf(float(b))
            scale = mpmath.sqrt(sum(mpmath.mpf(float(wi)) ** 2 for wi in w))
            if abs(z) > 1e-7 * scale and (z > 0) != bool(pat[j]):
                return 1.0
            if pat[j]:
                g = [gi + mpmath.mpf(float(a)) * mpmath.mpf(float(wi)) for gi, wi in zip(g, w, strict=True)]
        gx = sum(gi * xi for gi, xi in zip(g, xv, strict=True))
        h = sum(gi * gi for gi in g) - gx * gx
        lip2 = L.mp() ** 2
        return float(abs(h - lip2) / max(1, lip2)) - 1e-8


def _probe_margin(case, *, confirm: bool):
    """Too high: the witness (point and cell) of the exact constant must be genuine and attain it. Too low:
    no probe of a genuine point may exceed it (a probe above is re-evaluated exactly at a rational point of
    the sphere). Probes are not asked to reach the constant: cells of width 1e-9 are legitimate."""
    net = _net(case)
    L = _lip(net, K.Sphere(3))
    pr = rob_oracles.sphere_probe(net, per_circle=6000 if confirm else 1500, n_random=10000 if confirm else 4000)
    up = float(L.upper)
    above = (pr.value - up) / max(1.0, up) - 1e-9  # the probe's own float rounding is ~1e-12
    if above > 0 and confirm:  # a genuine point above the exact constant? decide exactly at a rational point
        xq = _rational_on_sphere(pr.point)
        h = exact_tangential2(net, xq)
        above = 1.0 if (h is not None and KE.QNum(h).cmp(L.value2) > 0) else -1.0
    return max(above, _witness_gap(net, L))


def probe_s2_property(budget: int = 40) -> Property:
    kinds = _weighted(3, True, {"near_parallel": 3, "tangent": 2, "through_point": 2, "nested": 1})
    strat = st.one_of(rob_strategies.degenerate_nets(3, sphere=True, m_max=6, kinds=kinds), near_triple(3, sphere=True))
    return Property(name="rob.lipschitz/probe_s2", strategy=strat,
                    screen=_crash_is_a_hit(lambda c: _probe_margin(c, confirm=False)),
                    confirm=_crash_is_a_hit(lambda c: _probe_margin(c, confirm=True)), to_json=lambda c: c,
                    from_json=lambda c: c,
                    budget=budget)


# ------------------------------------------------------------------------------------ float vs exact
def _float_vs_rational_margin(case):
    net = _net(case)
    dom = _domain(case)
    if dom.d > 3 and not isinstance(dom, K.Ball):
        raise NotApplicable("the exact routines cover d ≤ 3 here")
    a, b = _lip(net, dom, time_limit=20), _lip(K.as_exact(net), dom, time_limit=20)
    if a.exact != b.exact:
        return 1.0
    if a.exact:
        return _rel(a.value, b.value) - 1e-40 if a.value != b.value else -1.0
    return 1.0 if (a.lower, a.upper) != (b.lower, b.upper) else -1.0


def float_vs_rational_property(d: int, sphere: bool, budget: int = 40) -> Property:
    strat = rob_strategies.degenerate_nets(d, sphere=sphere, rho=1.0 if sphere else 1.5, m_max=8)
    return Property(name=f"rob.lipschitz/float_vs_rational_{'sphere' if sphere else 'ball'}{d}", strategy=strat,
                    screen=_crash_is_a_hit(_float_vs_rational_margin),
                    confirm=_crash_is_a_hit(_float_vs_rational_margin), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


# ------------------------------------------------------------------------------------------ rigidity
def _rigidity_margin(case):
    dom = _domain(case)
    r = K.rigidity(_net(case), dom, time_limit=20)
    if len(r.weights) == 0:
        raise NotApplicable("no kink meets the domain")
    if r.holds_exactly is not None:
        return -1.0 if r.holds_exactly else 1.0
    return r.ratio - 1.0


def degenerate_rigidity_property(d: int, sphere: bool, budget: int = 60) -> Property:
    strat = rob_strategies.degenerate_nets(d, sphere=sphere, rho=1.0 if sphere else 1.5, m_max=8)
    return Property(name=f"rob.rigidity_{'sphere' if sphere else 'ball'}/degenerate_d{d}", strategy=strat,
                    screen=_rigidity_margin, confirm=_rigidity_margin, to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)
