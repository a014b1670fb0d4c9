"""Cells at the ball's edge that float rounding makes or unmakes, in the certified bracket, judged against the exact
ball routine (:func:`numerics.rob.lipschitz` on Ball(4), the recursion over flats).

Three draws of the d = 4 hunt (``python -m checks.rob.bracket_hunt --d 4``) that it left open:

* a plane meant to be tangent to the sphere (W = (−5, 0, 0, 12)/13, b = −1) that float64 leaves cutting a cap ~5e-17
  deep, where the gradient 3W lives: the SOCP reports a margin above 1e-9 there (its tolerance), so the exact cap
  point was never offered (lower end 0 against 3);
* the same with (8, 0, 0, 15)/17: now ‖W‖ < 1 after rounding, the cap is empty, the constant 0 (upper end 0.5,
  the empty cap's gradient, until the exact certificates were tried at margins up to 1e-6);
* five planes meant to meet at a point p of the sphere (one of them tangent there): the constant lives in a
  micro-cell at p, inside the ball; the zoom asked for p strictly inside (lower end 3.68 against 16.73).
"""

from __future__ import annotations

import pytest

from checks.rob.degenerate_nets import BALL_CUT as CUT
from checks.rob.degenerate_nets import BALL_EDGE_POINT as EDGE_POINT
from checks.rob.degenerate_nets import BALL_MISS as MISS
from checks.rob.degenerate_nets import exact_constant
from numerics.rob.bracket import certified_bracket
from numerics.rob.bracket_net import BracketNet


def _exact(net):
    ref = exact_constant(net, 4, False)
    return float(ref.lower), float(ref.upper)


def _bracket(net):
    W, b, a, v = net
    return certified_bracket(W, b, a, v, sphere=False, rel_gap=0.0, time_limit=10)


def test_a_float_cut_cap_is_realised_whatever_margin_the_solver_reports():
    lo, up = _exact(CUT)
    assert up == pytest.approx(3.0, rel=1e-12)        # the cap exists: the constant is ‖3W‖ = 3
    br = _bracket(CUT)
    assert br.lower <= up * (1 + 1e-15) <= br.upper * (1 + 1e-15)
    assert br.lower >= lo * (1 - 1e-12) and br.status == "exhausted"


def test_a_float_missed_cap_is_proved_empty():
    lo, up = _exact(MISS)
    assert up == 0.0                                  # the cap is empty: the net is affine on the ball
    br = _bracket(MISS)
    assert br.lower == 0.0 and br.upper <= 1e-290
    assert br.gap == float("inf") and 0.0 <= br.abs_gap <= 1e-290     # relative gap undefined, absolute not


def test_a_micro_cell_at_a_point_of_the_sphere_is_found_by_the_zoom_at_the_edge():
    lo, up = _exact(EDGE_POINT)
    br = _bracket(EDGE_POINT)
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.lower >= lo * (1 - 1e-12)


def test_without_the_zoom_the_micro_cell_at_the_edge_is_missed(monkeypatch):
    monkeypatch.setattr(BracketNet, "zoom", lambda *a: None)
    lo, _ = _exact(EDGE_POINT)
    assert _bracket(EDGE_POINT).lower < 0.5 * lo
