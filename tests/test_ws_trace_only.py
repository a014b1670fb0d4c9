"""ce_hessian_trace: tr H and diag H in O(n·N·M), against the dense torch.func Hessian's diagonal, the SymPy Hessian
in mpmath at 50 digits, and the pair-sum closed form's trace."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from checks.evidence import digits_agreed
from numerics.ws import ce_hessian_moments, ce_hessian_trace
from numerics.ws.reference import ce_hessian_mpmath, ce_hessian_torch


def _net(seed, M=3, N=4, n=25, bias=True):
    rng = np.random.default_rng(seed)
    W, b, v = rng.standard_normal((N, M)), rng.standard_normal(N), rng.standard_normal(N)
    X, y = rng.standard_normal((n, M)), (rng.random(n) < 0.5).astype(float)
    return (W, b if bias else None, v, 0.3 if bias else None, X, y)


@pytest.mark.parametrize("act", ["tanh", "sigmoid", "softplus", "gelu"])
@pytest.mark.parametrize("bias", [True, False])
def test_diagonal_equals_the_dense_hessian(act, bias):
    net = _net(1, bias=bias)
    t = ce_hessian_trace(*net, act, bias=bias)
    H = ce_hessian_torch(*net, act, bias=bias)
    assert t.dim == H.shape[0]
    assert np.max(np.abs(t.diagonal - np.diag(H))) <= 1e-12 * np.max(np.abs(np.diag(H)))
    assert abs(t.trace - ce_hessian_moments(*net, act, bias=bias).trace) <= 1e-12 * abs(t.trace)


def test_fifty_digits_against_the_sympy_hessian():
    net = _net(2, M=2, N=3, n=8)
    t = ce_hessian_trace(*net, "tanh", dps=50)
    with mpmath.workdps(60):
        H = ce_hessian_mpmath(*net, "tanh", dps=60)
        ref = mpmath.fsum(H[i, i] for i in range(H.rows))
    with mpmath.workdps(50):
        assert digits_agreed(t.trace, ref) >= 48
        assert all(digits_agreed(t.diagonal[i], H[i, i]) >= 45 or abs(H[i, i]) < mpmath.mpf(10) ** -40
                   for i in range(H.rows))


def test_saturated_outputs_keep_the_trace():
    W, b, v, _, X, y = _net(3)
    y = np.ones(len(y))
    t, ref = ce_hessian_trace(W, b, v, 300.0, X, y, "tanh"), ce_hessian_trace(W, b, v, 300.0, X, y, "tanh", dps=50)
    assert abs(t.trace - float(ref.trace)) <= 1e-12 * float(ref.trace)
