"""numerics.rob.low_width: certified sphere Lipschitz brackets of width ≤ 3 nets with smooth activations.

References independent of the routine: a 1-D mpmath maximisation (one unit, v = 0), torch autograd on the raw net
in R^d, mpmath values of ψ′ and ψ″ on a grid (the wide-ball enclosures), and the exact arrangement routine (ReLU)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from flint import arb

from checks.rob.low_width import _dpsi_mp, autograd_max, one_unit_reference, target_slope
from numerics.rob import Sphere, lipschitz
from numerics.rob import low_width as lw

ACTS = ("tanh", "sigmoid", "gelu", "softplus")


@pytest.mark.parametrize("act", ACTS)
def test_one_unit_bracket_contains_the_40_digit_maximum(act):
    rng = np.random.default_rng(abs(hash(act)) % 2**32)
    for d in (3, 7):
        w, b, a = rng.standard_normal(d) * 2, rng.standard_normal(), rng.standard_normal() * 2
        L = lw.low_width_lipschitz((w[None, :], [b], [a], np.zeros(d), 0.0), d, act, rel_tol=1e-9)
        ref = one_unit_reference(w, b, a, act)
        assert L.lower <= ref <= L.upper
        assert L.upper / L.lower - 1 <= 3e-9          # and the bracket is as tight as asked
        assert L.status == "converged"


def _d2psi_mp(act, t):
    return mpmath.diff(lambda u: _dpsi_mp(act, u), t)


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("mid,rad", [(0.0, 3.0), (0.3, 1.0), (-1.5, 0.7), (2.0, 0.25), (-0.6585, 0.01), (40.0, 5.0)])
def test_wide_ball_enclosures_contain_every_value(act, mid, rad):
    """ψ′, ψ″ over a ball: the union of the end values and the critical points' values must contain the range,
    including the interior extrema (a missing critical point leaves them out)."""
    p, q = lw._dpsi_arb(act, arb(mid, rad))
    for t in np.linspace(mid - rad, mid + rad, 801):
        with mpmath.workdps(30):
            pv, qv = _dpsi_mp(act, mpmath.mpf(t)), _d2psi_mp(act, mpmath.mpf(t))
        assert p.lower() <= float(pv) + 1e-15 and float(pv) - 1e-15 <= p.upper(), (act, t)
        assert q.lower() <= float(qv) + 1e-15 and float(qv) - 1e-15 <= q.upper(), (act, t)


def test_wide_ball_enclosures_are_tight_at_the_extremum():
    """tanh′ over [−3, 3] is [sech²3, 1]: the enclosure reaches 1 (the critical point) and not far beyond (arb's
    union rounds the radius to 30 bits: ~1e-9)."""
    p, q = lw._dpsi_arb("tanh", arb(0, 3))
    assert abs(float(p.upper()) - 1) < 1e-8 and abs(float(p.lower()) - 1 / math.cosh(3) ** 2) < 1e-8
    assert abs(float(q.upper()) - 4 / (3 * math.sqrt(3))) < 1e-8   # max of −2 tanh sech² at atanh(−1/√3)


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("m,d", [(2, 3), (3, 6), (2, 20)])
def test_two_sided_against_autograd_on_the_raw_net(act, m, d):
    rng = np.random.default_rng([m, d, len(act)])
    net = (rng.standard_normal((m, d)) * 3, rng.standard_normal(m), rng.standard_normal(m) * 2,
           rng.standard_normal(d), 0.0)
    L = lw.low_width_lipschitz(net, d, act, rel_tol=1e-3, time_limit=10)
    found, at_witness = autograd_max(net, d, act, points=512, steps=120, start=L.witness)
    assert found <= L.upper                               # sound
    assert at_witness >= L.lower * (1 - 1e-9)             # the lower end is attained at the lifted witness
    assert abs(np.linalg.norm(L.witness) - 1) < 1e-12
    assert L.rank == m + 1


def test_sphere_only_case_d_equal_rank():
    """d = r: the domain is the sphere itself, not the ball (an interior maximum of the ball would be too high)."""
    rng = np.random.default_rng(5)
    net = (rng.standard_normal((2, 3)) * 2, rng.standard_normal(2), rng.standard_normal(2), rng.standard_normal(3), 0.)
    L = lw.low_width_lipschitz(net, 3, "tanh", rel_tol=1e-4)
    R = lw.reduce(*net[:4])
    assert R.sphere_only and R.r == 3
    Z = rng.standard_normal((200000, 3))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    sampled = math.sqrt(lw.phi_float(R, "tanh", Z).max())
    assert sampled <= L.upper and sampled >= L.lower * (1 - 1e-2)


def test_exact_rank_with_dependent_rows():
    """w₂ = 2w₁ and v = w₁ − w₃ exactly: rank 2, decided in rationals; 3·w₁ with float rounding would not be exact."""
    w1, w3 = np.array([1.0, 0.5, -0.25, 2.0, 0.0]), np.array([0.0, 1.0, 1.0, 0.0, -1.0])
    W = np.array([w1, 2 * w1, w3])
    R = lw.reduce(W, [0.1, 0.2, 0.3], [1.0, -1.0, 0.5], w1 - w3)
    assert R.r == 2 and not R.sphere_only
    W2 = np.array([w1, w1 + 2.0 ** -50 * np.array([0, 0, 0, 0, 1.0]), w3])
    assert lw.reduce(W2, [0, 0, 0], [1, 1, 1], np.zeros(5)).r == 3   # a 2⁻⁵⁰ difference is a new direction


def test_constant_and_purely_linear_nets():
    d = 5
    L0 = lw.low_width_lipschitz((np.ones((1, d)), [0.0], [0.0], np.zeros(d), 1.0), d, "tanh")
    assert L0.lower == 0 and L0.upper < 1e-12
    v = np.array([3.0, 4.0, 0, 0, 0])   # f = v·x: Lip on the sphere = ‖v‖ = 5
    L1 = lw.low_width_lipschitz((np.ones((1, d)), [0.0], [0.0], v, 0.0), d, "sigmoid", rel_tol=1e-10)
    assert L1.lower <= 5 <= L1.upper and L1.upper - L1.lower < 1e-8


def test_relu_goes_to_the_exact_routine():
    rng = np.random.default_rng(2)
    net = (rng.standard_normal((3, 6)), rng.standard_normal(3) * 0.3, rng.standard_normal(3), rng.standard_normal(6),
           0.0)
    L = lw.low_width_lipschitz(net, 6, "relu")
    E = lipschitz(net, Sphere(6))
    assert (L.lower, L.upper) == (float(E.lower), float(E.upper))


@pytest.mark.parametrize("bad,match", [
    (lambda n: (np.ones((5, 8)), np.zeros(5), np.ones(5), np.zeros(8), 0.0), "rank 5"),
    (lambda n: (np.full((1, 8), np.nan), [0.0], [1.0], np.zeros(8), 0.0), "NaN"),
    (lambda n: (np.ones((1, 7)), [0.0], [1.0], np.zeros(8), 0.0), "do not match"),
])
def test_bad_input_is_named(bad, match):
    net = bad(None)
    if match == "rank 5":
        net = (np.eye(8)[:5], np.zeros(5), np.ones(5), np.zeros(8), 0.0)
    with pytest.raises(ValueError, match=match):
        lw.low_width_lipschitz(net, 8, "tanh")


def test_unknown_activation():
    with pytest.raises(ValueError, match="elu"):
        lw.low_width_lipschitz((np.ones((1, 3)), [0.0], [1.0], np.zeros(3), 0.0), 3, "elu")


def test_target_slopes():
    assert target_slope(2, 3) == pytest.approx(0.5)
    t1 = target_slope(1, 3)
    assert 0.85 < t1 < 1.0     # n/√log(nd) over n ∈ 32..256: slightly below 1
