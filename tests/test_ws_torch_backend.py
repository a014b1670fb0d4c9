"""The torch backend of ``ce_hessian_moments`` (``numerics/ws/torch_pairs.py``) against the numpy backend and the
dense torch.func Hessian: the same generated kernels, a different pair loop, so they must agree to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from numerics.ws import ce_hessian_moments
from numerics.ws.reference import ce_hessian_torch


def _net(M, N, n, seed):
    rng = np.random.default_rng(seed)
    W, b, v = rng.normal(size=(N, M)), rng.normal(size=N), rng.normal(size=N)
    X, y = rng.normal(size=(n, M)), rng.integers(0, 2, n)
    return W, b, v, 0.3, X, y


@pytest.mark.parametrize("act", ["tanh", "sigmoid", "softplus", "gelu"])
@pytest.mark.parametrize("bias", [True, False])
def test_torch_matches_numpy_and_dense(act, bias):
    W, b, v, c, X, y = _net(3, 4, 23, 5)
    if not bias:
        b = c = None
    ref = ce_hessian_moments(W, b, v, c, X, y, act, bias=bias, backend="numpy", block=6)
    H = ce_hessian_torch(W, b, v, c, X, y, act, bias=bias)
    for block in (5, 23, 1024):  # ragged blocks, one block, the default
        m = ce_hessian_moments(W, b, v, c, X, y, act, bias=bias, backend="torch", block=block)
        assert m.trace == pytest.approx(ref.trace, rel=1e-12, abs=1e-14)
        assert m.trace_sq == pytest.approx(ref.trace_sq, rel=1e-12)
    assert m.trace == pytest.approx(np.trace(H), rel=1e-10, abs=1e-12)
    assert m.trace_sq == pytest.approx((H * H).sum(), rel=1e-10)


def test_torch_backend_catches_a_planted_kernel_bug():
    """A wrong kernel reaches the torch path too (it reads the same generated factors)."""
    import types

    from numerics._derived import ws as K

    bad = types.SimpleNamespace(**{k: getattr(K, k) for k in dir(K) if not k.startswith("_")})
    bad.gg_factors = lambda Ti, Tj, v: [(p, 1.01 * L, R) for p, L, R in K.gg_factors(Ti, Tj, v)]
    net = _net(2, 3, 17, 1)
    good = ce_hessian_moments(*net, "tanh", backend="torch")
    wrong = ce_hessian_moments(*net, "tanh", backend="torch", _kernels=bad)
    assert abs(wrong.trace_sq - good.trace_sq) > 1e-3 * good.trace_sq


def test_backend_is_validated():
    with pytest.raises(ValueError, match="backend"):
        ce_hessian_moments(*_net(2, 2, 4, 0), "tanh", backend="jax")


def test_auto_backend_picks_by_pair_work_and_says_which(monkeypatch):
    """backend="auto" (the default) runs numpy below AUTO_TORCH_PAIR_FLOPS of pair work and torch from it up, and
    the result says which ran; with dps it is arb (or mpmath) whatever the size."""
    import numerics.ws.moments as mo

    net = _net(3, 4, 40, 2)
    work = 40.0 * 40 * (3 + 1 + 4 * 4)
    monkeypatch.setattr(mo, "AUTO_TORCH_PAIR_FLOPS", work + 1)
    small = ce_hessian_moments(*net, "tanh")
    monkeypatch.setattr(mo, "AUTO_TORCH_PAIR_FLOPS", work)
    large = ce_hessian_moments(*net, "tanh")
    assert (small.backend, large.backend) == ("numpy", "torch")
    assert large.trace_sq == pytest.approx(small.trace_sq, rel=1e-12)
    assert ce_hessian_moments(*net, "tanh", dps=20).backend == "arb"
    assert ce_hessian_moments(*net, "tanh", dps=20, _dps_engine="mpmath").backend == "mpmath"
    monkeypatch.undo()  # the measured crossover: full MNIST runs on torch, the bench's headline size on numpy
    assert mo.auto_backend(60000, 784, 256) == "torch" and mo.auto_backend(2000, 98, 20) == "numpy"
