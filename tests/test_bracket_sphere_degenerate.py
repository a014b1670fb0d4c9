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
import warnings

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from numerics import rob as K
from numerics.rob import bracket as KB
from numerics.rob.bracket import certified_bracket
from numerics.rob.bracket_needle import sphere_point

CANCEL = ([[0.6, 0.8, 0.0], [1.8, 2.4, 0.0]], [0.0, 0.0], [1000000.0, -333333.3333333333], [0.0, 0.0, 0.0])
NEAR_PARALLEL = ([[2.788381742738589, 2.091286307053942, -6.070539419087137],
                  [5.576763485472996, 4.18257261412099, -12.14107883817168]], [5.0, 10.00000000001], [-2.5, 2.5],
                 [0.0, 0.0, 0.0])
THROUGH_POINT = ([[0.0, -1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.6666666666666667, 0.0],
                  [0.7738095238095238, -0.23809523809523808, 0.9523809523809523], [0.0, 2.0, 0.0]],
                 [-0.19047619047619047, -0.7619047619047619, 1.1428571428571428, -1.25, -2.0],
                 [-3.0, -2.25, -0.5, 3.0, -3.0], [-0.25, -0.5, 0.0])


def _exact(net):
    W, b, a, v = net
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", K.KinkCoincidenceWarning)
        ref = K.lipschitz((W, b, a, v, 0.0), K.Sphere(3))
    assert ref.exact
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
