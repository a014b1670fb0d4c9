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
    """The teeth of the test above: with the needle routines switched off the same net is left wide open."""
    monkeypatch.setattr(KB, "needle_point", lambda *a: None)
    monkeypatch.setattr(KB, "needle_empty", lambda *a: False)
    br = certified_bracket(W, B, A, V, sphere=False, rel_gap=0.0, time_limit=20)
    assert br.status == "gap open" and br.gap > 1.0
