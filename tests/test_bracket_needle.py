"""The needle between two nearly coincident hyperplanes (:mod:`numerics.rob.bracket_needle`), judged against the exact
ball routine.

The falsifier's ``cancel_1e6`` family plants units ±10⁶ on one hyperplane; in float64 the second row is the first
times λ only up to rounding, so the two hyperplanes meet at a tiny angle and bound a needle whose gradient is ~10⁶.
Before the needle routines the bracket stopped at "gap open" with a lower end of 2.70 against an exact 333333.42
(no float solver sees a cell 1e-17 wide, and a snapped Farkas multiplier misses the other needle's emptiness).
"""

from __future__ import annotations

import numpy as np
import pytest

from numerics import rob as K
from numerics.rob import bracket as KB
from numerics.rob.bracket import certified_bracket
from numerics.rob.bracket_needle import needle_empty, needle_point
from numerics.rob.bracket_net import BracketNet

# a reproducer of the falsifier (checks.rob.strategies.cancel_1e6, d = 4, ball)
W = [[-0.30144113309269177, 0.4737183758450818, 0.15659279641178792, 0.02192299149765031],
     [-0.17225207605296672, 0.27069621476861816, 0.0894815979495931, 0.012527423712943034],
     [0.0, 0.0, 0.0, -1.0], [0.0, 0.0, 0.0, 0.75], [0.0, 0.0, 0.5, 0.0]]
B = [0.4010416666666667, 0.22916666666666666, -0.4, -0.3333333333333333, 0.0]
A = [-571428.5714285715, 1000000.0, 0.625, -3.0, 3.0]
V = [0.0, 0.0, 0.0, 0.0]


def _net():
    net = BracketNet(np.array(W), np.array(B), np.array(A), np.array(V), False, 1.0, None)
    net.deadline = float("inf")
    return net


def test_the_bracket_closes_on_the_needle_at_the_exact_constant():
    with pytest.warns(K.KinkCoincidenceWarning):          # the float net's two kinks are 1e-17 apart
        ref = K.lipschitz((W, B, A, V, 0.0), K.Ball(4, 1.0))
    assert ref.exact and ref.upper > 3e5                     # the needle's gradient is the constant
    br = certified_bracket(W, B, A, V, sphere=False, rel_gap=0.0, time_limit=20)
    assert br.lower <= ref.upper <= br.upper
    assert br.status in ("exhausted", "gap reached") and br.gap < 1e-12


def test_needle_point_is_a_genuine_point_of_the_needle_and_nothing_else():
    net = _net()
    idx = np.arange(5)
    found = 0
    for s0, s1 in ((1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)):
        for rest in ((1.0, -1.0, -1.0), (-1.0, 1.0, -1.0), (-1.0, -1.0, -1.0), (1.0, 1.0, 1.0)):
            sg = np.array([s0, s1, *rest])
            xq = needle_point(net, idx, sg)
            if s0 * s1 > 0:
                assert xq is None                      # same sides: not a needle
                continue
            if xq is None:
                continue
            r = net.exact(xq)                          # exactly inside the ball, no zero pre-activation
            assert r is not None
            assert r[1] == tuple(s > 0 for s in sg)    # exactly the cell asked for
            found += 1
    assert found >= 2


def test_needle_empty_proves_only_what_is_empty():
    """Facing signs (−1, +1) on the pair: the needle would need s_j(D·x + c) > 0 somewhere in the ball, and this pair's
    c is too negative for that: proved empty. The opposite needle (+1, −1) holds the constant: never called empty."""
    net = _net()
    idx = np.arange(5)
    for rest in ((1.0, -1.0, -1.0), (-1.0, 1.0, -1.0), (-1.0, -1.0, -1.0)):
        assert needle_empty(net, idx, np.array([-1.0, 1.0, *rest]))
        assert not needle_empty(net, idx, np.array([1.0, -1.0, *rest]))
        assert not needle_empty(net, idx, np.array([1.0, 1.0, *rest]))


def test_without_the_needle_the_bracket_stays_open(monkeypatch):
    """The teeth of the test above: with the needle routines switched off the same net is left wide open. (The
    emptiness of this net's closed needle is also proved by ``beyond_empty`` — the two rows' common flat lies outside
    the ball — and by ``needle_closed``; so all three are switched off, and each alone is tested below.)"""
    monkeypatch.setattr(KB, "needle_point", lambda *a: None)
    monkeypatch.setattr(KB, "needle_empty", lambda *a: False)
    monkeypatch.setattr(KB, "beyond_empty", lambda *a: False)
    monkeypatch.setattr(KB, "needle_closed", lambda *a: False)
    br = certified_bracket(W, B, A, V, sphere=False, rel_gap=0.0, time_limit=20)
    assert br.status == "gap open" and br.gap > 1.0


@pytest.mark.parametrize("keep", ["needle_empty", "beyond_empty", "needle_closed"])
def test_each_certificate_alone_closes_the_needle(monkeypatch, keep):
    for off in {"needle_empty", "beyond_empty", "needle_closed"} - {keep}:
        monkeypatch.setattr(KB, off, lambda *a: False)
    br = certified_bracket(W, B, A, V, sphere=False, rel_gap=0.0, time_limit=20)
    assert br.status in ("exhausted", "gap reached") and br.gap < 1e-12


def _through_point_net():
    """S²: two planes through p = (13, −4, 16)/21 ∈ S², the plane tangent to S² at p (the falsifier's through_point
    draw, in exact rationals), and two more planes."""
    from fractions import Fraction as F
    W = [[0, -1, 0], [0, 0, 1], [0, F(5, 3), 0], [F(65, 84), F(-5, 21), F(20, 21)], [0, 2, 0]]
    b = [F(-4, 21), F(-16, 21), F(8, 7), F(-5, 4), -2]
    a = [-3, F(-9, 4), F(-1, 2), 3, -3]
    v = [F(-1, 4), F(-1, 2), 0]
    return ([[F(x) for x in r] for r in W], [F(x) for x in b], [F(x) for x in a], [F(x) for x in v])


def test_a_cell_pinched_at_a_point_of_the_sphere_is_proved_empty():
    """The cell on the tangent plane's outer side touches the closed ball only at p: its ball bound (4.08) held the
    upper end 79% above the exact S² constant until y ≥ 0 with Σ y s W = p exactly proved the open cell misses S."""
    W_, b_, a_, v_ = _through_point_net()
    ref = K.lipschitz((W_, b_, a_, v_, 0), K.Sphere(3))
    assert ref.exact
    br = certified_bracket(W_, b_, a_, v_, sphere=True, rel_gap=0.0, time_limit=20)
    assert br.lower <= ref.upper and br.upper >= ref.lower
    assert br.gap < 1e-6


def test_without_the_pinch_certificate_the_pinched_cells_are_not_proved_empty(monkeypatch):
    """The pinched cells are also bounded on S now (a leaf of margin ≤ 0 is refined like any other, see
    tests/test_bracket_sphere_degenerate.py), so the bracket closes either way; the certificate is what proves them
    empty: without it two fewer cells leave the search as empty."""
    W_, b_, a_, v_ = _through_point_net()
    with_pinch = certified_bracket(W_, b_, a_, v_, sphere=True, rel_gap=0.0, time_limit=20)
    monkeypatch.setattr(KB, "pinched_empty", lambda *a: False)
    without = certified_bracket(W_, b_, a_, v_, sphere=True, rel_gap=0.0, time_limit=20)
    empty = "region empty: Farkas certificate"
    assert without.sources["closed"].get(empty, 0) < with_pinch.sources["closed"][empty]
    assert without.lower <= with_pinch.upper and with_pinch.lower <= without.upper


# the falsifier's tangent draw in d = 6 (checks.rob.strategies.tangent), read as floats: planes meant to touch the
# sphere, which float64 leaves cutting caps ~1e-17 deep; the constant lives in one of them
TW = [[0.009338975631110462, 0.0011673719538888077, 0.01494236100977674, 0.09066102436888954, 0.02801692689333139,
       0.026149131767109295], [0.0, 0.37209302325581395, 0.21262458471760798, 0.0, 0.0, -0.0033222591362126247],
      [0.14766391078638724, 0.09844260719092482, -0.07075562391847721, 0.09844260719092482, 0.024610651797731205,
       -0.4507786964045376], [1.75, -1.0, -0.5, 0.0, 0.0, 0.0]]
TB, TA, TV = [-0.1, -0.42857142857142855, -0.5, -3.0], [2.5, -0.25, 2.0, -0.5], [0.0, 2.0, 0.0, 0.0, 0.8, 0.0]


def test_a_float_rounded_tangency_cap_is_realised_exactly():
    """The best cell is a cap far thinner than a float's resolution: its point τ·s·w with τ = lo(1 + ε) is built in
    exact rationals (the lower end was 18% short)."""
    ref = K.lipschitz((TW, TB, TA, TV, -0.8), K.Ball(6, 1.0))
    assert ref.exact
    br = certified_bracket(TW, TB, TA, TV, sphere=False, rel_gap=0.0, time_limit=20)
    assert br.lower <= ref.upper <= br.upper and br.gap < 1e-12


def test_without_the_cap_points_the_tangency_cap_is_missed(monkeypatch):
    monkeypatch.setattr(KB, "cap_points", lambda *a: [])
    br = certified_bracket(TW, TB, TA, TV, sphere=False, rel_gap=0.0, time_limit=20)
    assert br.gap > 0.1


# the falsifier's near_parallel draw in d = 6: a unit and its copy tilted by 1e-8, offsets 4e-9 apart (relative)
NW = [[0.0, -0.7180851063829787, 0.0, -1.0106382978723405, 0.1595744680851064, 1.25e-08],
      [0.0, -0.7180851063829787, 0.0, -1.0106382978723405, 0.1595744680851064, 0.0], [2.0, 2.0, 1.0, 0.0, 0.0, 2.0]]
NB, NA, NV = [0.4687499953125, 0.46875, -3.142857142857143], [1.0714285714285714, -2.142857142857143, 1.5], \
    [0.0, 1.75, 0.0, 0.0, 0.0, 0.0]


def test_a_wedge_between_nearly_parallel_planes_is_a_needle_too(monkeypatch):
    """Not coincident up to rounding but 1e-8 apart in angle and 4e-9 in offset: the scaled SOCP of the needle finds
    its point (the lower end was 11.6% short); with the pair thresholds of coincidence only, it is missed again."""
    from numerics.rob import bracket_needle as BN

    ref = K.lipschitz((NW, NB, NA, NV, 0.0), K.Ball(6, 1.0))
    assert ref.exact
    br = certified_bracket(NW, NB, NA, NV, sphere=False, rel_gap=0.0, time_limit=20)
    assert br.lower <= ref.upper <= br.upper and br.gap < 1e-12
    monkeypatch.setattr(BN, "OFF_NEAR", 1e-9)
    br2 = certified_bracket(NW, NB, NA, NV, sphere=False, rel_gap=0.0, time_limit=20)
    assert br2.gap > 0.05


def test_a_needle_inside_a_cap_at_the_sphere_is_witnessed():
    """NEEDLE_IN_CAP_B6 (exact rationals, the ball hunt's seed-1 draw): the needle where unit 0 alone is on lies in a
    cap ~9.5e-7 deep; the needle SOCP's point is 1.7e-7 outside the ball, and pulling it in radially by its margin
    left the cap (lower end 0.32 against the constant 2). Pulled in along the plane towards its foot, it stays."""
    from checks.rob.degenerate_nets import NEEDLE_IN_CAP_B6, exact_constant

    exact = float(exact_constant(NEEDLE_IN_CAP_B6, 6, False).upper)
    assert exact == 2.0
    br = certified_bracket(*NEEDLE_IN_CAP_B6, sphere=False, R=1.0, rel_gap=0.0, time_limit=10)
    assert br.lower <= exact * (1 + 1e-15) <= br.upper * (1 + 1e-15)
    assert br.lower >= exact * (1 - 1e-12) and br.status == "exhausted"
