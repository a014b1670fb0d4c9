r"""Two-sided rob properties: families whose Lipschitz constant and rigidity ratio are known exactly by hand.

"|α_j|·(√(1 − t_j²)) ≤ 2 Lip" alone passes a Lipschitz routine that overestimates and a rigidity ratio whose
constant was loosened. These properties compare the routines with exact values derived here, on nets where the
answer follows in two lines, and they plant the rigidity bound's equality cases:

* :func:`single_unit_property` — f = a ReLU(λu·x − λρt) + βu·x (+ v_⊥·x on the ball), ‖u‖ = 1, |t| < 1. The
  gradient is g_on = (β + aλ)u (+ v_⊥) where λ(u·x − ρt) > 0 and g_off = βu (+ v_⊥) elsewhere; both sides meet
  the open domain. On B_ρ: Lip² = max(‖g_on‖², ‖g_off‖²). On S^{d−1} (no v_⊥): the tangential norm of γu at x
  is |γ|√(1 − (u·x)²), whose maximum over a side {u·x ≥ t} is |γ| if t ≤ 0 and |γ|√(1 − t²) otherwise (and
  symmetrically for {u·x ≤ t}), so Lip² ∈ {γ², γ²(1 − t²)} is rational. The kink weight is |aλ| (ball),
  |aλ|√(1 − t²) (sphere), so the rigidity ratio w/(2 Lip) is known exactly: it is 1 exactly when β = −aλ/2
  (and t = 0 on the sphere), drawn on purpose.
* :func:`width2n_property` — the width-2n interpolant Σ_i (y_i/s)[ReLU(x_i·x − (1−s)) − ReLU(x_i·x − 1)] on a
  subset of the rotated cross-polytope ±f_k (rational orthonormal f_k) with s ≤ 29/100, so that
  x_i·x_j ∈ {0, −1} ≤ 2(1−s)² − 1 and the caps are disjoint (SPEC §3): it interpolates (f(x_i) = y_i exactly),
  Lip² = (2 − s)/s exactly, and every kink weight equals Lip, so the rigidity ratio is exactly 1/2.

* :func:`near_tie_property` — two units through 0 whose cells' squared gradient norms are c² and c²(1 + δ²),
  δ = ±2^−k (k ≥ 27): the float enclosures overlap, so the exact comparison of candidates decides (a routine
  that keeps the wrong one of two near-tied candidates is off by a relative 2⁻⁵⁴ or less, and exactly wrong).

All run the public routine (``lipschitz_fn``, ``rigidity_fn``; injectable for the planted-bug tests) and, on S²,
the small-circle arrangement itself (:func:`numerics.rob.sphere2.lipschitz_s2`), whose exact result must agree
too. Screen and confirmation are the same exact comparison (Fractions and a + b√D numbers), so there is no
tolerance: margin 1 on a disagreement, −1 otherwise.
"""

from __future__ import annotations

import math
from fractions import Fraction as Fr

from hypothesis import strategies as st

from checks.evidence.tol import TOL
from checks.rob.properties import RoutineCrashed, crash_is_a_hit
from checks.rob.rational import basis, nonzero_rational, rational_frame, row_scale, small_rational, smul, vstr
from checks.runners.falsify import NotApplicable, Property
from numerics import rob


def _F(x) -> Fr:
    return Fr(x) if isinstance(x, str) else Fr(float(x))


def _exact_case(case):
    """(W, b, a, v, c) as Fractions from the case's exact strings."""
    ex = case["exact"]
    return ([[_F(x) for x in w] for w in ex["W"]], [_F(x) for x in ex["b"]], [_F(x) for x in ex["a"]],
            [_F(x) for x in ex["v"]], _F(ex["c"]))


def _domain(case):
    return rob.Sphere(case["d"]) if case["sphere"] else rob.Ball(case["d"], Fr(case["rho"]))


def _called(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 — a crash on a valid net is a bug of the routine
        raise RoutineCrashed(f"{type(exc).__name__}: {exc}") from exc


def _lip2_of(L) -> rob.exact.QNum:
    """The routine's exact Lip² (a + b√D), or None when it only bracketed."""
    return L.value2 if (L.exact and L.value2 is not None) else None


def _ratio_gap(r, w2, lip2: Fr) -> float:
    """How far rob.rigidity's report is from the exact rigidity data: weights² (as floats, relative), the ratio
    w/(2 Lip) (relative) and the exact decision w² ≤ 4 Lip²; > 0 on a disagreement."""
    want_ratio = math.sqrt(float(w2 / (4 * lip2))) if lip2 > 0 else math.inf
    got = [float(x) ** 2 for x in r.weights]
    bad_w = not got or any(abs(g - float(w2)) > TOL["rob_ratio_rel"] * max(1.0, float(w2)) for g in got)
    bad_ratio = abs(r.ratio - want_ratio) > TOL["rob_ratio_rel"] * max(1.0, want_ratio)
    bad_hold = r.holds_exactly is not None and r.holds_exactly != (w2 <= 4 * lip2)
    return 1.0 if (bad_w or bad_ratio or bad_hold or r.holds_exactly is None) else -1.0


# ------------------------------------------------------------------------------------------ single unit
@st.composite
def single_units(draw, d: int, sphere: bool, rho: Fr = Fr(1)):
    """One unit a ReLU(λu·x − λρt), λ of either sign, and v = βu (+ γe, e ⊥ u, on the ball); a third of the
    draws plant the rigidity equality β = −aλ/2 (and t = 0 on the sphere)."""
    fr = rational_frame(draw, d, 2) if d >= 2 else [basis(d, 0)]
    u = fr[0]
    lam, a = row_scale(draw), nonzero_rational(draw)
    equality = draw(st.integers(0, 2)) == 0
    t = Fr(0) if (equality and sphere) else small_rational(draw, Fr(-19, 20), Fr(19, 20))
    beta = -a * lam / 2 if equality else small_rational(draw, -2, 2)
    v = smul(beta, u)
    if not sphere and d >= 2 and draw(st.booleans()):
        gam = nonzero_rational(draw, -2, 2)
        v = [vi + gam * ei for vi, ei in zip(v, fr[1], strict=True)]
    w, b = smul(lam, u), -lam * rho * t
    return {"d": d, "sphere": sphere, "rho": float(rho), "kind": "single_unit", "equality": equality,
            "W": [[float(x) for x in w]], "b": [float(b)], "a": [float(a)], "v": [float(x) for x in v], "c": 0.0,
            "exact": {"W": [vstr(w)], "b": vstr([b]), "a": vstr([a]), "v": vstr(v), "c": "0"},
            "hand": {"u": vstr(u), "t": str(t), "lam": str(lam), "beta": str(beta)}}


def single_unit_exact(case) -> tuple[Fr, Fr]:
    """(Lip², kink weight²) of a :func:`single_units` case, by hand (see the module docstring)."""
    W, _, A, v, _ = _exact_case(case)
    t, lam = _F(case["hand"]["t"]), _F(case["hand"]["lam"])
    a = A[0]
    g_off = v
    g_on = [vi + a * wi for vi, wi in zip(v, W[0], strict=True)]
    nrm2 = lambda g: sum(x * x for x in g)  # noqa: E731
    if not case["sphere"]:
        return max(nrm2(g_on), nrm2(g_off)), a * a * lam * lam
    # on the sphere v = βu: g = γu on each side; side {u·x ≥ t} reaches u·x = 0 iff t ≤ 0
    beta = _F(case["hand"]["beta"])
    on_up = lam > 0  # the active side is {u·x > t} for λ > 0, {u·x < t} for λ < 0
    reach = lambda upper_side: (t <= 0) if upper_side else (t >= 0)  # noqa: E731
    side = lambda gam, upper_side: gam * gam * (1 if reach(upper_side) else 1 - t * t)  # noqa: E731
    return max(side(beta + a * lam, on_up), side(beta, not on_up)), a * a * lam * lam * (1 - t * t)


def _single_unit_margin(case, lipschitz_fn, rigidity_fn):
    net = _exact_case(case)
    dom = _domain(case)
    lip2, w2 = single_unit_exact(case)
    L = _called(lipschitz_fn, net, dom)
    got = _lip2_of(L)
    if got is None or got.cmp(rob.exact.QNum(lip2)) != 0:
        return 1.0
    if case["sphere"] and case["d"] == 3:  # the S² arrangement on its own, exactly
        cf = _called(rob.canonicalize, net, dom)
        r2 = _called(rob.sphere2.lipschitz_s2, cf.Wq, cf.bq, cf.aq, cf.vq)
        if r2.value2.cmp(rob.exact.QNum(lip2)) != 0:
            return 1.0
    return _ratio_gap(_called(rigidity_fn, net, dom), w2, lip2)


def single_unit_property(d: int, sphere: bool, rho: Fr = Fr(1), budget: int = 60, lipschitz_fn=None,
                         rigidity_fn=None) -> Property:
    """Lip and the rigidity ratio of a single unit, exactly, with the equality case |α|(√(1−t²)) = 2 Lip planted."""
    lf = rob.lipschitz if lipschitz_fn is None else lipschitz_fn
    rf = rob.rigidity if rigidity_fn is None else rigidity_fn
    margin = crash_is_a_hit(lambda c: _single_unit_margin(c, lf, rf))
    name = f"rob.rigidity_{'sphere' if sphere else 'ball'}/single_unit_d{d}"
    return Property(name=name, strategy=single_units(d, sphere, rho), screen=margin, confirm=margin,
                    to_json=lambda c: c, from_json=lambda c: c, budget=budget)


# --------------------------------------------------------------------------------------------- width 2n
@st.composite
def width2n_nets(draw, d: int):
    """The width-2n interpolant on a nonempty subset of ±f_1..±f_d (a rational orthonormal frame), labels ±1,
    s ∈ {1/100, …, 29/100}: disjoint caps (x_i·x_j ∈ {0, −1} ≤ 2(1−s)² − 1 needs s ≤ 1 − 1/√2)."""
    fr = rational_frame(draw, d, d)
    pts = [f for f in fr] + [smul(-1, f) for f in fr]
    idx = draw(st.lists(st.integers(0, 2 * d - 1), min_size=1, max_size=2 * d, unique=True))
    X = [pts[i] for i in idx]
    y = [Fr(draw(st.sampled_from([1, -1]))) for _ in X]
    s = Fr(draw(st.integers(1, 29)), 100)
    W, b, a = [], [], []
    for x, yi in zip(X, y, strict=True):
        W += [x, x]
        b += [-(1 - s), Fr(-1)]
        a += [yi / s, -yi / s]
    v = [Fr(0)] * d
    return {"d": d, "sphere": True, "rho": 1.0, "kind": "width_2n",
            "W": [[float(x) for x in w] for w in W], "b": [float(x) for x in b], "a": [float(x) for x in a],
            "v": [0.0] * d, "c": 0.0,
            "exact": {"W": [vstr(w) for w in W], "b": vstr(b), "a": vstr(a), "v": vstr(v), "c": "0"},
            "hand": {"X": [vstr(x) for x in X], "y": vstr(y), "s": str(s)}}


def _width2n_margin(case, lipschitz_fn, rigidity_fn):
    net = _exact_case(case)
    dom = _domain(case)
    s = _F(case["hand"]["s"])
    X = [[_F(t) for t in x] for x in case["hand"]["X"]]
    y = [_F(t) for t in case["hand"]["y"]]
    if max((sum(p * q for p, q in zip(X[i], X[j], strict=True)) for i in range(len(X)) for j in range(len(X))
            if i != j), default=Fr(-1)) > 2 * (1 - s) ** 2 - 1:
        raise NotApplicable("caps not disjoint")
    # interpolation, exactly, from the net's definition
    W, b, a, _, _ = net
    for x, yi in zip(X, y, strict=True):
        fx = sum(ak * max(Fr(0), sum(wi * xi for wi, xi in zip(w, x, strict=True)) + bk)
                 for w, bk, ak in zip(W, b, a, strict=True))
        if fx != yi:
            return 1.0
    lip2 = (2 - s) / s
    L = _called(lipschitz_fn, net, dom)
    got = _lip2_of(L)
    if got is None or got.cmp(rob.exact.QNum(lip2)) != 0:
        return 1.0
    if case["d"] == 3:
        cf = _called(rob.canonicalize, net, dom)
        r2 = _called(rob.sphere2.lipschitz_s2, cf.Wq, cf.bq, cf.aq, cf.vq)
        if r2.value2.cmp(rob.exact.QNum(lip2)) != 0:
            return 1.0
    # every cap's kink weight is (1/s)√(1 − (1 − s)²) = Lip: the ratio is 1/2
    return _ratio_gap(_called(rigidity_fn, net, dom), lip2, lip2)


def width2n_property(d: int, budget: int = 40, lipschitz_fn=None, rigidity_fn=None) -> Property:
    """SPEC §3's width-2n construction with disjoint caps: exact interpolation, Lip = √((2−s)/s) exactly, and
    the rigidity ratio exactly 1/2 (every kink weight equals Lip)."""
    lf = rob.lipschitz if lipschitz_fn is None else lipschitz_fn
    rf = rob.rigidity if rigidity_fn is None else rigidity_fn
    margin = crash_is_a_hit(lambda c: _width2n_margin(c, lf, rf))
    return Property(name=f"rob.rigidity_sphere/width_2n_d{d}", strategy=width2n_nets(d), screen=margin,
                    confirm=margin, to_json=lambda c: c, from_json=lambda c: c, budget=budget)


# ------------------------------------------------------------------------------------------ near ties
@st.composite
def near_ties(draw, d: int, sphere: bool, rho: Fr = Fr(1)):
    """f = c[ReLU(λ₁f₁·x)/λ₁ + ReLU(λ₂(−f₁ + δf₂)·x)/λ₂] (f₁, f₂ rational orthonormal, δ = ±2^−k, k = 27..40,
    the roles of the two units drawn): the cells' gradients are 0, cf₁, c(−f₁ + δf₂), cδf₂, all meeting the domain
    (both hyperplanes pass through 0; on the sphere each constant gradient's great circle meets its closed cell),
    so Lip² = c²(1 + δ²) exactly, a hair above the runner-up c²: the float enclosures of the two overlap and the
    exact comparison decides. A routine that keeps the wrong one of two near-tied candidates fails here."""
    fr = rational_frame(draw, d, 2)
    k = draw(st.integers(27, 40))
    delta = Fr(draw(st.sampled_from([1, -1])), 2**k)
    c = nonzero_rational(draw, -3, 3)
    l1, l2 = row_scale(draw), row_scale(draw)
    l1, l2 = abs(l1), abs(l2)  # positive scalings keep the active sides as written
    r1 = smul(l1, fr[0])
    r2 = smul(l2, [-x + delta * y for x, y in zip(fr[0], fr[1], strict=True)])
    rows, a = [r1, r2], [c / l1, c / l2]
    if draw(st.booleans()):
        rows, a = rows[::-1], a[::-1]
    v = [Fr(0)] * d
    b = [Fr(0), Fr(0)]
    return {"d": d, "sphere": sphere, "rho": float(rho), "kind": "near_tie",
            "W": [[float(x) for x in w] for w in rows], "b": [0.0, 0.0], "a": [float(x) for x in a],
            "v": [0.0] * d, "c": 0.0,
            "exact": {"W": [vstr(w) for w in rows], "b": vstr(b), "a": vstr(a), "v": vstr(v), "c": "0"},
            "hand": {"lip2": str(c * c * (1 + delta * delta))}}


def _near_tie_margin(case, lipschitz_fn):
    net = _exact_case(case)
    dom = _domain(case)
    lip2 = _F(case["hand"]["lip2"])
    got = _lip2_of(_called(lipschitz_fn, net, dom))
    if got is None or got.cmp(rob.exact.QNum(lip2)) != 0:
        return 1.0
    if case["sphere"] and case["d"] == 3:
        cf = _called(rob.canonicalize, net, dom)
        r2 = _called(rob.sphere2.lipschitz_s2, cf.Wq, cf.bq, cf.aq, cf.vq)
        if r2.value2.cmp(rob.exact.QNum(lip2)) != 0:
            return 1.0
    return -1.0


def near_tie_property(d: int, sphere: bool, rho: Fr = Fr(1), budget: int = 30, lipschitz_fn=None) -> Property:
    """Two cells whose squared gradient norms differ by c²δ² ≤ 2⁻⁵⁴c²: the exact constant is the larger one."""
    lf = rob.lipschitz if lipschitz_fn is None else lipschitz_fn
    margin = crash_is_a_hit(lambda c: _near_tie_margin(c, lf))
    name = f"rob.rigidity_{'sphere' if sphere else 'ball'}/near_tie_d{d}"
    return Property(name=name, strategy=near_ties(d, sphere, rho), screen=margin, confirm=margin,
                    to_json=lambda c: c, from_json=lambda c: c, budget=budget)
