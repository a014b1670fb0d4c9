"""Sphere cells that no float solver sees, in the certified bracket (:mod:`numerics.rob.bracket`,
:mod:`numerics.rob.bracket_needle`), judged against the exact S² arrangement (:func:`numerics.rob.lipschitz` on
Sphere(3)).

Three float nets the hunt (``python -m checks.rob.bracket_hunt --d 3 --sphere``) left open:

* ``cancel_1e6``: units ±10⁶ on one hyperplane through 0; in float64 the second row is 3× the first only up to
  rounding, so the two planes bound a lune of S ~1e-16 wide where the gradient is 10⁶ (lower end 1.2e-10 before
  the sphere's needle point);
* ``near_parallel``: two planes 1e-12 apart; the sliver between them crosses S along a circle where g·x ≈ −25,
  so τ = (35² − 25²)^½ = √600 there, not ‖g‖ = 35 (upper end 35 before a leaf of margin ≤ 0 was refined);
* ``through_point``: hyperplanes that meet at a point of S only up to rounding (upper end 79% loose before).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from checks.rob.degenerate_nets import (
    AXIS,
    CANCEL,
    CAP,
    MICRO_IN,
    MICRO_OUT,
    NEAR_PARALLEL,
    SLAB,
    THROUGH_POINT,
    ULP_S7,
    exact_constant,
)
from numerics.rob import bracket as KB
from numerics.rob import bracket_sphere_cells as BN
from numerics.rob.bracket import certified_bracket
from numerics.rob.bracket_needle import beyond_empty
from numerics.rob.bracket_net import BracketNet
from numerics.rob.bracket_sphere_cells import sphere_point


def _exact(net):
    ref = exact_constant(net, 3, True)
    return float(ref.lower), float(ref.upper)


def _bracket(net, time_limit=10.0):
    W, b, a, v = net
    return certified_bracket(W, b, a, v, sphere=True, rel_gap=0.0, time_limit=time_limit)


@pytest.mark.parametrize("seed", range(5))
def test_sphere_point_is_exactly_on_the_sphere_and_far_below_float_resolution(seed):
    rng = np.random.default_rng(seed)
    d = 2 + seed
    p = [fmpq(int(t), 2 ** 40) for t in rng.integers(-2 ** 40, 2 ** 40, d)]
    x = sphere_point(p)
    assert sum((t * t for t in x), fmpq(0)) == 1
    old = ctx.prec
    ctx.prec = 400
    try:
        nrm = sum((arb(t) * arb(t) for t in p), arb(0)).sqrt()
        err = max(abs(float((arb(x[i]) - arb(p[i]) / nrm).mid())) for i in range(d))
    finally:
        ctx.prec = old
    assert err < 2.0 ** -200


def test_the_lune_of_two_cancelling_units_is_hit_on_the_sphere():
    lo, up = _exact(CANCEL)
    assert up > 9e5                                   # the lune's gradient is the constant
    br = _bracket(CANCEL)
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.lower >= lo * (1 - 1e-9)


def test_without_the_sphere_needle_point_the_lune_is_missed(monkeypatch):
    monkeypatch.setattr(KB, "sphere_needle_points", lambda *a: [])
    lo, _ = _exact(CANCEL)
    assert _bracket(CANCEL).lower < 1e-3 * lo


@pytest.mark.parametrize("net,tol", [(NEAR_PARALLEL, 1e-8), (THROUGH_POINT, 1e-6)],
                         ids=["near_parallel", "through_point"])
def test_a_sphere_cell_of_margin_zero_is_bounded_on_the_sphere_not_by_its_gradient(net, tol):
    lo, up = _exact(net)
    br = _bracket(net)
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.upper <= up * (1 + tol), (br.upper, up, br.sources.get("upper end"))
    assert br.sources.get("upper end") != KB.SRC_ENUM


def test_the_sliver_between_nearly_parallel_planes_is_bounded_by_its_tangential_gradient():
    # independent of the routine: on the sliver g = 5 W₀, ‖g‖ = 35, and g·x = 5(W₀·x) = −25 on the plane W₀·x = −5
    lo, up = _exact(NEAR_PARALLEL)
    assert math.isclose(up, math.sqrt(35.0 ** 2 - 25.0 ** 2), rel_tol=1e-9)
    assert _bracket(NEAR_PARALLEL).upper < 0.75 * 35.0


# the falsifier's axis_aligned draw: units 0 and 3 are one hyperplane, 1 and 2 parallel; the cell with all four on
# is {−x + z > 1, x + z < −1}, whose closure meets the ball only where the line x = −1, z = 0 touches S, at (−1, 0, 0)


def test_a_cell_pinched_where_a_line_touches_the_sphere_is_proved_empty():
    lo, up = _exact(AXIS)
    assert math.isclose(up, 4.625, rel_tol=1e-12)     # the cell {1, 2 on; 0, 3 off}: g = (4.625, 0, −4.625) ⊥ x there
    br = _bracket(AXIS)
    assert br.lower <= up * (1 + 1e-15) and br.upper <= up * (1 + 1e-8)


def test_without_the_pinch_the_tangent_line_cell_holds_the_upper_end(monkeypatch):
    # both certificates decide it (the line's foot is the tangency point, ‖q‖ = 1 exactly): each alone, then neither
    for off in ("pinched_empty", "beyond_empty"):
        with monkeypatch.context() as mp:
            mp.setattr(KB, off, lambda *a: False)
            assert _bracket(AXIS).upper <= 4.625 * (1 + 1e-8)
    monkeypatch.setattr(KB, "pinched_empty", lambda *a: False)
    monkeypatch.setattr(KB, "beyond_empty", lambda *a: False)
    _, up = _exact(AXIS)
    assert _bracket(AXIS).upper > 1.2 * up             # the empty cell's ‖g‖ = (3.425² + 5.825²)^½ … on S ≈ 5.825


# the falsifier's through_point draws with seven units: six planes meant to pass through p = (350, 3578, −3185)/4803
# on S, which float64 leaves meeting in micro-cells ~1e-17 across around p


def test_a_micro_cell_on_the_sphere_is_found_by_the_sphere_zoom():
    lo, up = _exact(MICRO_IN)
    br = _bracket(MICRO_IN)
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.lower >= lo * (1 - 1e-12)                # the constant lives in a cell ~1e-17 across


def test_without_the_sphere_zoom_the_micro_cell_is_missed(monkeypatch):
    monkeypatch.setattr(KB, "sphere_zoom_points", lambda *a: [])
    lo, _ = _exact(MICRO_IN)
    assert _bracket(MICRO_IN).lower < 0.95 * lo


def test_a_micro_cell_just_beyond_the_sphere_is_proved_empty():
    lo, up = _exact(MICRO_OUT)
    br = _bracket(MICRO_OUT)
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.upper <= up * (1 + 1e-9)


def test_without_the_beyond_certificate_the_empty_micro_cell_holds_the_upper_end(monkeypatch):
    monkeypatch.setattr(KB, "beyond_empty", lambda *a: False)
    _, up = _exact(MICRO_OUT)
    assert _bracket(MICRO_OUT).upper > 1.05 * up       # its τ at p, 5.476, against the constant 5.001


def _concurrent_net(rng, d, radius):
    """d + 2 hyperplanes through p, ‖p‖ = radius (exact binary rationals up to the float rounding of b)."""
    p = rng.standard_normal(d)
    p *= radius / np.linalg.norm(p)
    W = rng.standard_normal((d + 2, d))
    return BracketNet(W, -(W @ p), np.ones(d + 2), np.zeros(d), True, 1.0, None), p


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("radius", [1.0 - 1e-9, 1.0 + 1e-12])
def test_beyond_empty_never_empties_a_cell_that_meets_the_ball(seed, radius):
    rng = np.random.default_rng(seed)
    d = 3 + seed % 2
    net, p = _concurrent_net(rng, d, radius)
    net.deadline = float("inf")
    idx = np.arange(d + 2)
    u = p / np.linalg.norm(p)
    tried = 0
    for _ in range(200):
        z = rng.standard_normal(d)
        if not z @ u < -0.05 * np.linalg.norm(z):
            continue
        # the cone cell of z: p + εz is inside the ball for small ε (p·z < 0 and ‖p‖² − 1 ≤ 2e-12), so it meets it
        sg = np.where(net.W @ z > 0, 1.0, -1.0)
        assert not beyond_empty(net, idx, sg, p)
        tried += 1
    assert tried >= 40


def test_beyond_empty_proves_the_outward_cells_of_a_point_just_outside():
    rng = np.random.default_rng(7)
    d = 3
    proved, outward = 0, 0
    for _ in range(4):
        net, p = _concurrent_net(rng, d, 1.0 + 1e-12)
        net.deadline = float("inf")
        idx = np.arange(d + 2)
        u = p / np.linalg.norm(p)
        for _ in range(30):
            z = rng.standard_normal(d)
            sg = np.where(net.W @ z > 0, 1.0, -1.0)
            cone = [z] + [rng.standard_normal(d) for _ in range(400)]
            inside = [c for c in cone if np.all(sg * (net.W @ c) > 0)]
            if min(c @ u / np.linalg.norm(c) for c in inside) > 0.05:     # the cone points clearly outward
                outward += 1
                proved += beyond_empty(net, idx, sg, p)
    assert outward >= 5 and proved >= outward // 2


# the falsifier's concentric draw: units 0 and 5 are one plane u·x = −1/7 up to rounding (3u, 3/7 and 0.3u, 3/70),
# so their cell {0 off, 5 on} is a band of S ~1e-17 wide, cut by y ∈ (−3/4, −1/2); g ≈ −24.8 e_y there, so τ is
# largest at the band's corner y → −1/2, where the constant 21.4879 is a supremum
_Q = [[(140, 83), (49, 83), (200, 83)], [0, -1, 0], [0, -7, 0], [(-175, 249), (-245, 996), (-250, 249)],
      [(175, 249), (245, 996), (250, 249)], [(14, 83), (49, 830), (20, 83)], [0, -10, 0], [0, 10, 0]]
BAND = ([[float(F(*t)) if isinstance(t, tuple) else float(t) for t in r] for r in _Q],
        [3 / 7, 0.625, -5.25, 5 / 14, 5497558138875 / 4398046511104, 3 / 70, -5.0, 5.0],
        [5 / 3, 1.0, -3.0, 2.0, 1.0, -3.0, 7 / 3, -0.5], [0.0, 0.0, 0.0])


def test_the_band_of_s_is_searched_to_its_corner():
    lo, up = _exact(BAND)
    br = _bracket(BAND)
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.lower >= lo * (1 - 1e-9) and br.gap < 1e-8


def test_without_the_arc_search_the_band_stops_short_of_its_corner(monkeypatch):
    monkeypatch.setattr(BN, "arc_best", lambda *a, **k: [])
    lo, _ = _exact(BAND)
    assert _bracket(BAND).lower < (1 - 1e-3) * lo


# the falsifier's cancel_1e6 draw with exactly parallel rows (W₀ = 1.75·W₄ exactly in float64, b₀ = 1.5 against
# 1.75·b₄ = 1.4999999999999999 rounded): a slab of S ~1e-17 wide, open along the whole circle, where the gradient is
# ~2.9e6 (the needle routine skipped exactly parallel pairs)


def test_a_slab_between_exactly_parallel_rows_is_hit_on_the_sphere():
    lo, up = _exact(SLAB)
    assert up > 1e6
    br = _bracket(SLAB)
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.lower >= lo * (1 - 1e-9)


def test_units_that_cancel_exactly_give_the_exact_bracket_zero():
    """10⁶ ReLU(x₁ − ½) − 5·10⁵ ReLU(2x₁ − 1) ≡ 0 on S⁷ (one hyperplane, exact cancellation): the pattern's gradient
    is exactly 0, decided in rationals, so the bracket is [0, 0] and "exhausted" (it was [0, 9e-10], "gap open": the
    interval enclosure of ±10⁶ sums, and an undefined relative gap)."""
    W = [[1.0] + [0.0] * 7, [2.0] + [0.0] * 7]
    br = certified_bracket(W, [-0.5, -1.0], [1e6, -5e5], [0.0] * 8, sphere=True, rel_gap=0.0, time_limit=10)
    assert (br.lower, br.upper, br.status) == (0.0, 0.0, "exhausted")
    br = certified_bracket(W, [-0.5, -1.0], [1e6, -5e5 * (1 + 2 ** -40)], [0.0] * 8, sphere=True, rel_gap=0.0,
                           time_limit=10)
    assert br.upper > 0.0                                # not exactly cancelling: the cell's gradient is not 0


def test_units_one_ulp_from_cancelling_get_their_constant_from_the_exact_gradient():
    """ULP_S7: a₂ one ulp from −5·10⁵, so g = −2⁻³³e₁ on the cap x₁ > ½, whose enclosure (radius ~2e-10) holds 0; the
    constant, by hand, is 2⁻³³·√3/2 (τ = 2⁻³³(1 − x₁²)^½ at the cap's rim). The bracket was [1.008e-10, 1.0e-9]
    ("gap open": the enclosure's norm, then ‖g‖ = 2⁻³³ with δ lost in the solver's tolerance); now the pattern's
    bound is the exact ‖g‖ and δ comes from g scaled to ~1."""
    br = certified_bracket(*ULP_S7, sphere=True, rel_gap=0.0, time_limit=10)
    exact = 2.0 ** -33 * math.sqrt(3.0) / 2
    assert br.lower <= exact * (1 + 1e-15) and br.upper >= exact * (1 - 1e-15)
    assert br.upper <= exact * (1 + 1e-8)
    assert br.lower >= exact * (1 - 1e-8)


def test_in_the_ball_the_ulp_net_needs_the_exact_gradients_norm(monkeypatch):
    """ULP_S7 on B⁸: the constant is ‖g‖ = 2⁻³³ (the cap x₁ > ½ meets the ball), and no sphere refinement follows a
    ball leaf, so only the exact ‖g‖ brings the upper end below the enclosure's (~1e-9)."""
    br = certified_bracket(*ULP_S7, sphere=False, rel_gap=0.0, time_limit=5)
    assert br.lower <= 2.0 ** -33 <= br.upper and br.upper <= 2.0 ** -33 * (1 + 1e-12)
    monkeypatch.setattr(KB, "sqrt_up_q", lambda q: float("inf"))   # the exact gradient's norm not used
    br = certified_bracket(*ULP_S7, sphere=False, rel_gap=0.0, time_limit=5)
    assert br.upper > 2 * 2.0 ** -33


# the falsifier's edge_threshold draw: W₀ = (95, −168)/193/3 in (y, z), b₀ = −1/3, a plane meant to touch S that
# float64 leaves cutting a cap ~1e-17 deep; g = a₀W₀ is along the cap's axis, so τ ≈ 3.3e-9 only at the cap's rim


def test_a_float_cap_on_the_sphere_is_bounded_and_reached_at_its_rim():
    lo, up = _exact(CAP)
    assert 1e-9 < up < 1e-8
    br = _bracket(CAP)
    assert br.lower <= up * (1 + 1e-12) and br.upper >= lo * (1 - 1e-12)
    assert br.gap < 1e-6                               # was [1.5e-17, 2.3e-5]: the relaxation cannot resolve the cap


def test_without_the_cap_bound_and_rim_the_cap_stays_open(monkeypatch):
    monkeypatch.setattr(KB, "cap_bound", lambda *a: float("inf"))
    monkeypatch.setattr(KB, "cap_rim_points", lambda *a: [])
    _, up = _exact(CAP)
    br = _bracket(CAP)
    assert br.upper > 100 * up and br.lower < 0.01 * up


@pytest.mark.parametrize("seed", range(8))
def test_cap_bound_holds_at_sampled_points_of_the_cap(seed):
    """τ at points of the cap ∩ cell (sampled on S near the axis, kept where the signs hold) never exceeds the bound."""
    rng = np.random.default_rng(seed)
    d = 3 + seed % 3
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    depth = 10.0 ** -rng.integers(7, 12)                 # the caps the routine takes: depth below 1e-6
    W = np.vstack([w, rng.standard_normal((2, d))])
    b = np.r_[-(1 - depth), rng.standard_normal(2) * 0.3]
    a = rng.standard_normal(3)
    net = BracketNet(W, b, a, np.zeros(d), True, 1.0, None)
    net.deadline = float("inf")
    th = math.acos(1 - depth)
    for sg2 in ((1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)):
        idx, sg = np.arange(3), np.array([1.0, *sg2])
        gq = net.exact_gradient(idx, sg)
        g = np.array([float(t) for t in gq])
        bound = BN.cap_bound(net, idx, sg, gq)
        assert bound < math.inf
        for _ in range(300):
            e = rng.standard_normal(d)
            e -= (e @ w) * w
            e /= np.linalg.norm(e)
            x = math.cos(th * rng.random() ** 0.5) * w
            x = x + math.sqrt(max(1 - x @ x, 0.0)) * e
            if np.all(sg * (W @ x + b) > 0):
                assert math.sqrt(max(g @ g - (g @ x) ** 2, 0.0)) <= bound * (1 + 1e-9)


def test_a_supremum_at_a_caps_rim_is_approached_in_d16(monkeypatch):
    """Two nested caps on S¹⁵ (the falsifier's nested draw): on the inner cap (centre u, cos θ_r = 40/41) the gradient
    g = −½W₀ + W₁ makes the angle α with u, so sup τ = ‖g‖ sin(α + θ_r) at the rim, derived here by hand; the lower
    end reaches it by climbing to the cell's boundary (it stopped 2.5% short before)."""
    e0, e13 = np.eye(16)[0], np.eye(16)[13]
    W = [list(1.25 * e0), list(-1.2 * e0 + 1.6 * e13)]
    b, a = [1.1029411764705883, -1.951219512195122], [-0.5, 1.0]
    g = -0.5 * 1.25 * e0 + (-1.2 * e0 + 1.6 * e13)
    u = (-1.2 * e0 + 1.6 * e13) / 2.0
    sup = np.linalg.norm(g) * math.sin(math.acos(g @ u / np.linalg.norm(g)) + math.acos(-b[1] / 2.0))   # ‖W₁‖ = 2
    br = certified_bracket(W, b, a, [0.0] * 16, sphere=True, rel_gap=0.0, time_limit=10)
    assert br.lower <= sup * (1 + 1e-12) <= br.upper * (1 + 1e-12)
    assert br.lower >= sup * (1 - 1e-9)
    from numerics.rob.bracket_search import LowerSearch
    monkeypatch.setattr(LowerSearch, "climb_boundary", lambda *a, **k: None)
    assert certified_bracket(W, b, a, [0.0] * 16, sphere=True, rel_gap=0.0, time_limit=10).lower < sup * (1 - 1e-3)


# the falsifier's concentric draw whose cell {3 on, 7 on} is the slab between two planes 1e-17 apart (u·x = −½ up to
# rounding), cut by z ∈ (⅓, 9/16); every plane is parallel to e₁, so the SOCP's points lie in x₁ = 0 and the slab's
# circle must be walked in the direction the gradient does not give (x₁); τ is largest at the slab's end z → 9/16
SLAB_END = ([[0.0, 0.0, 0.42857142857142855], [0.0, 0.0, -0.42857142857142855],
             [0.0, -1.0769230769230769, 0.6346153846153846], [0.0, 1.1076923076923078, -0.6527472527472528],
             [0.0, 0.0, 0.5], [0.0, -0.08615384615384615, 0.05076923076923077], [0.0, 0.0, -1.0],
             [0.0, -0.36923076923076925, 0.2175824175824176]],
            [-0.14285714285714285, 0.14285714285714285, 0.7142857142857143, 0.6428571428571429, -0.07142857142857142,
             -0.08571428571428572, 0.5625, -0.21428571428571427],
            [-0.5, 1.0, 0.2857142857142857, -2.5, -2.25, -2.0, 1.7142857142857142, 1.6666666666666667], [0.0] * 3)


def test_the_slab_is_walked_off_the_plane_of_its_solver_points():
    lo, up = _exact(SLAB_END)
    br = _bracket(SLAB_END)
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.lower >= lo * (1 - 1e-8)                 # was 1.9% short


def test_a_cap_whose_gradient_lies_on_its_axis_does_not_crash_the_rim_points():
    """The seeded hunt's cancel_1e6 draw: two units on one cap (W₁ = 3W₀ up to rounding) whose outer weights nearly
    cancel, so the cell's gradient is along the cap's axis (or 0) and gives the rim no direction; the rim points
    divided by a zero norm (NaN → a crash of the whole bracket) until any direction ⊥ the axis was taken."""
    W = [[0.2222222222222222, 0.4444444444444444, 0.4444444444444444],
         [0.6666666666666666, 1.3333333333333333, 1.3333333333333333]]
    b, a = [-0.6666660308837891, -1.9999980926513672], [-2999999.999997139, 1000000.0]
    lo, up = _exact((W, b, a, [0.0] * 3))
    br = _bracket((W, b, a, [0.0] * 3))
    assert br.lower <= up * (1 + 1e-15) + 1e-300 and br.upper >= lo * (1 - 1e-15)


def test_a_tiny_gradient_on_a_cap_is_bounded_at_its_own_scale():
    """SMALL_CAP_S2: g = 2⁻²⁰w on the cap w·x > 1/7 (units ±10⁶ cancelling to 2⁻²⁰), a constant ~9.4e-7. The Shor + RLT
    bound on cell ∩ S worked at the solver's absolute tolerance and stopped 0.1% high ("gap open"); with g scaled by a
    power of two (exactly) it closes to ~5e-10."""
    from checks.rob.degenerate_nets import SMALL_CAP_S2

    lo, up = _exact(SMALL_CAP_S2)
    assert 9e-7 < up < 1e-6
    br = _bracket(SMALL_CAP_S2)
    assert br.lower <= up * (1 + 1e-12) and br.upper >= lo * (1 - 1e-12)
    assert br.gap < 1e-8
