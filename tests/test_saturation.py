"""Saturation (issue "Checks with two sides, round 2"): the sigmoid and softmax curvature factors keep their relative
accuracy as p → 0 or 1, for logits up to |z| = 700, against mpmath at 50 digits — the tables themselves, and the
traces built from them (float64 against the dps = 50 path)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from numerics.ws import ce_hessian_moments
from numerics.ws.activations import get_activation
from numerics.ws.moments import tables_float64
from numerics.ws.softmax import softmax_hessian_moments, softmax_tables

LOGITS = (0.5, 30.0, 100.0, 300.0, 700.0)
TINY = 1e-300   # below this float64 is subnormal: relative accuracy is not promised there


def _rel(a, b) -> float:
    return abs(float(a) - float(b)) / abs(float(b)) if b != 0 else abs(float(a))


@pytest.mark.parametrize("z", [s * t for t in LOGITS for s in (1, -1)])
def test_binary_q_and_r_keep_their_relative_digits(z):
    """q = p(1 − p) and r = p − y at one sample whose logit is z (a bias-only net: φ(0)·v + c = c)."""
    act = get_activation("tanh")
    W, b, v, X = np.zeros((1, 1)), np.zeros(1), np.zeros(1), np.zeros((2, 1))
    y = np.array([0.0, 1.0])
    _, q, r = tables_float64(W, b, v, z, X, y, act)
    with mpmath.workdps(50):   # p and 1 − p each from its own formula (1 − p in 50 digits would cancel too)
        p, pm = 1 / (1 + mpmath.exp(-mpmath.mpf(z))), 1 / (1 + mpmath.exp(mpmath.mpf(z)))
        q_ref, r_ref = p * pm, (p, -pm)
    for got, ref in ((q[0], q_ref), (r[0], r_ref[0]), (r[1], r_ref[1])):
        if abs(ref) > TINY:
            assert _rel(got, ref) <= 4e-16 * 8, (z, got, ref)


@pytest.mark.parametrize("spread", LOGITS)
def test_softmax_tables_keep_their_relative_digits(spread):
    """p, the complements s_c = 1 − p_c and r = p − e_y for logits spread over [0, spread], C = 4."""
    Zl = np.array([[0.0, spread / 3, spread, -spread / 2], [spread, spread, 0.0, -spread]])
    y = np.array([2, 0])
    p, s, r = softmax_tables(Zl, y, np.exp)
    with mpmath.workdps(50):
        for i in range(2):
            e = [mpmath.exp(mpmath.mpf(z)) for z in Zl[i]]
            tot = mpmath.fsum(e)
            P = [x / tot for x in e]
            for c in range(4):
                S = mpmath.fsum(e[a] for a in range(4) if a != c) / tot   # 1 − p_c with no cancellation
                R = -S if c == y[i] else P[c]
                # float64 logits: z_c − max z rounds by ≤ ½ulp(spread), and exp turns that into a relative error
                # of |z_c − max z|·ulp: the data's own conditioning, not the method's
                tol = 8e-16 * (4 + 2 * spread)
                for got, ref in ((p[i, c], P[c]), (s[i, c], S), (r[i, c], R)):
                    if abs(ref) > TINY:
                        assert _rel(got, ref) <= tol, (spread, i, c, got, ref)


@pytest.mark.parametrize("c_out", [30.0, 300.0, 700.0])
def test_binary_traces_at_saturation_agree_with_50_digits(c_out):
    """A net whose logits sit near ±c_out (wrong labels included, so r does not vanish): float64 against dps = 50."""
    rng = np.random.default_rng(int(c_out))
    W, b, v = rng.standard_normal((3, 2)), rng.standard_normal(3), 0.1 * rng.standard_normal(3)
    X = rng.standard_normal((12, 2))
    y = (rng.random(12) < 0.5).astype(float)
    for c in (c_out, -c_out):
        m = ce_hessian_moments(W, b, v, c, X, y, "tanh")
        ref = ce_hessian_moments(W, b, v, c, X, y, "tanh", dps=50)
        assert _rel(m.trace, ref.trace) <= 1e-12 and _rel(m.trace_sq, ref.trace_sq) <= 1e-12


@pytest.mark.parametrize("spread", [30.0, 300.0])
def test_softmax_traces_at_saturation_agree_with_50_digits(spread):
    rng = np.random.default_rng(int(spread))
    W, b = rng.standard_normal((3, 2)), rng.standard_normal(3)
    V, c = 0.1 * rng.standard_normal((3, 3)), np.array([0.0, spread, -spread / 2])
    X = rng.standard_normal((8, 2))
    y = rng.integers(0, 3, 8)
    m = softmax_hessian_moments(W, b, V, c, X, y, "tanh")
    ref = softmax_hessian_moments(W, b, V, c, X, y, "tanh", dps=50)
    assert _rel(m.trace, ref.trace) <= 1e-12 and _rel(m.trace_sq, ref.trace_sq) <= 1e-12
