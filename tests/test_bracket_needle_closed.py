"""A needle closed wherever the cell's other rows hold (:func:`numerics.rob.bracket_needle.needle_closed`), judged
against the exact ball routine, and never claimed for a needle that a genuine point shows open.

The seeded d = 6 hunt's ``concentric`` draw: units 5 and 6 are the plane u·x = ½ up to rounding (W₆ = −3W₅ in
float64 only to 1e-16), facing each other, so their cell is a needle ~1e-17 wide; it opens on one side of a
hyperplane D·x + c = 0 that the cell's other rows keep it from, so it is empty — but the pair alone does not say so
(``needle_empty``), and the bracket kept its gradient, 8.04 against the exact 7.66, as the upper end.
"""

from __future__ import annotations

import numpy as np
import pytest

from checks.rob.degenerate_nets import NEEDLE_D6, exact_constant
from numerics.rob import bracket as KB
from numerics.rob.bracket import certified_bracket
from numerics.rob.bracket_needle import needle_closed, needle_point
from numerics.rob.bracket_net import BracketNet

NET = dict(zip("Wbav", NEEDLE_D6, strict=True))


def _exact():
    ref = exact_constant(NEEDLE_D6, 6, False)
    return float(ref.lower), float(ref.upper)


def _bracket():
    return certified_bracket(NET["W"], NET["b"], NET["a"], NET["v"], sphere=False, rel_gap=0.0, time_limit=10)


def test_the_closed_needle_is_proved_empty_and_the_bracket_closes():
    lo, up = _exact()
    br = _bracket()
    assert br.lower <= up * (1 + 1e-15) and br.upper >= lo * (1 - 1e-15)
    assert br.gap < 1e-9


def test_without_it_the_needle_holds_the_upper_end(monkeypatch):
    monkeypatch.setattr(KB, "needle_closed", lambda *a: False)
    _, up = _exact()
    assert _bracket().upper > 1.03 * up


@pytest.mark.parametrize("seed", range(6))
def test_needle_closed_never_closes_a_needle_with_a_genuine_point(seed):
    """Pairs of rows equal up to rounding after scaling by λ (±10⁶-style), random other rows: every pattern of the pair
    facing itself whose needle_point is a genuine point of that very cell must not be declared closed."""
    rng = np.random.default_rng(seed)
    d, checked = 4, 0
    for _ in range(30):
        w = rng.standard_normal(d)
        lam = float(rng.choice([3.0, 0.1, 7.0]))
        W = np.vstack([w, lam * w, rng.standard_normal((3, d))])
        b = np.r_[0.3 * rng.standard_normal(), 0.0, 0.4 * rng.standard_normal(3)]
        b[1] = lam * b[0]
        net = BracketNet(W, b, np.ones(5), np.zeros(d), False, 1.0, None)
        net.deadline = float("inf")
        idx = np.arange(5)
        for s0 in (1.0, -1.0):
            for rest in rng.choice([-1.0, 1.0], size=(4, 3)):
                sg = np.r_[s0, -s0, rest]
                xq = needle_point(net, idx, sg)
                if xq is None or net.exact(xq) is None or net.exact(xq)[1] != tuple(s > 0 for s in sg):
                    continue
                checked += 1
                assert not needle_closed(net, idx, sg)
    assert checked >= 1


@pytest.mark.parametrize("seed", range(3))
def test_no_multipliers_whatever_close_a_needle_with_a_genuine_point(seed):
    """The solver is never trusted: on a needle that an exact point shows open, needle_closed is fed adversarial
    'infeasible' answers (t* = −1, random multipliers y ≥ 0 and μ of either sign, large and small) in place of the
    SOCP's, and must still refuse — only the exact Farkas test decides."""
    rng = np.random.default_rng(100 + seed)
    d, fed = 4, 0
    for _ in range(40):
        w = rng.standard_normal(d)
        lam = float(rng.choice([3.0, 0.1, 7.0]))
        W = np.vstack([w, lam * w, rng.standard_normal((3, d))])
        b = np.r_[0.3 * rng.standard_normal(), 0.0, 0.4 * rng.standard_normal(3)]
        b[1] = lam * b[0]
        net = BracketNet(W, b, np.ones(5), np.zeros(d), False, 1.0, None)
        net.deadline = float("inf")
        idx = np.arange(5)
        for s0 in (1.0, -1.0):
            sg = np.r_[s0, -s0, rng.choice([-1.0, 1.0], size=3)]
            xq = needle_point(net, idx, sg)
            if xq is None or net.exact(xq) is None or net.exact(xq)[1] != tuple(s > 0 for s in sg):
                continue
            for _ in range(40):
                y = rng.exponential(size=4) * (rng.random(4) < 0.7)
                y[-1] = rng.exponential() * 10.0 ** rng.integers(-2, 17)
                mu = rng.standard_normal() * 10.0 ** rng.integers(-2, 18)
                net.socp = lambda *a, _y=y, _mu=mu, **k: (-1.0, np.zeros(d), _y, _mu)
                assert not needle_closed(net, idx, sg)
                fed += 1
    assert fed >= 200
