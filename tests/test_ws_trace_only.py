"""ce_hessian_trace: tr H and diag H in O(n·N·M), against the dense torch.func Hessian's diagonal, the SymPy Hessian
in mpmath at 50 digits, and the pair-sum closed form's trace."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from checks.evidence.outcome import digits_agreed
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


@pytest.mark.parametrize("act", ["tanh", "sigmoid", "gelu"])
@pytest.mark.parametrize("bias", [True, False])
def test_the_trace_alone_equals_the_dense_trace(act, bias):
    """``diagonal=False``: the per-sample sum of the issue, no second product; the same trace as the dense Hessian's,
    and no diagonal."""
    net = _net(3, M=4, N=5, n=30, bias=bias)
    t = ce_hessian_trace(*net, act, bias=bias, diagonal=False)
    H = ce_hessian_torch(*net, act, bias=bias)
    assert t.diagonal is None and t.dim == H.shape[0]
    assert abs(t.trace - np.trace(H)) <= 1e-12 * abs(np.trace(H))


def test_the_trace_alone_with_a_sympy_activation():
    """A user's SymPy activation (its tables may be read-only broadcasts): the trace alone equals the diagonal's sum."""
    import sympy as sp

    t_ = sp.Symbol("t")
    act = t_ / sp.sqrt(1 + t_ ** 2)
    net = _net(4, M=3, N=4, n=20)
    full = ce_hessian_trace(*net, act)
    alone = ce_hessian_trace(*net, act, diagonal=False)
    assert alone.diagonal is None and abs(alone.trace - full.trace) <= 1e-12 * abs(full.trace)


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


# ------------------------------------------------------------------------------------------------ softmax
def _softmax_net(seed, M=3, N=4, C=5, n=30):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(N, M)), rng.normal(size=N), rng.normal(size=(C, N)), rng.normal(size=C),
            rng.normal(size=(n, M)), rng.integers(0, C, n))


@pytest.mark.parametrize("act", ["tanh", "sigmoid", "softplus", "gelu"])
@pytest.mark.parametrize("bias", [True, False])
def test_softmax_diagonal_equals_the_dense_hessian(act, bias):
    """Against torch.func's dense D×D Hessian (autograd of the loss as torch writes it) and the pair-sum trace."""
    from numerics.ws import softmax_hessian_moments, softmax_hessian_trace
    from numerics.ws.reference_softmax import softmax_hessian_torch

    W, b, V, c, X, y = _softmax_net(1)
    b, c = (b, c) if bias else (None, None)
    t = softmax_hessian_trace(W, b, V, c, X, y, act, bias=bias)
    H = softmax_hessian_torch(W, b, V, c, X, y, act, bias=bias)
    assert t.dim == H.shape[0] and t.classes == 5
    assert np.max(np.abs(t.diagonal - np.diag(H))) <= 1e-13 * np.max(np.abs(np.diag(H)))
    assert abs(t.trace - softmax_hessian_moments(W, b, V, c, X, y, act, bias=bias).trace) <= 1e-12 * abs(t.trace)


def test_softmax_fifty_digits_against_the_sympy_hessian():
    from numerics.ws import softmax_hessian_trace
    from numerics.ws.reference_softmax import softmax_hessian_mpmath

    W, b, V, c, X, y = _softmax_net(2, M=2, N=2, C=3, n=6)
    t = softmax_hessian_trace(W, b, V, c, X, y, "tanh", dps=50)
    with mpmath.workdps(60):
        H = softmax_hessian_mpmath(W, b, V, c, X, y, "tanh", dps=60)
        ref = mpmath.fsum(H[i, i] for i in range(H.rows))
    with mpmath.workdps(50):
        assert digits_agreed(t.trace, ref) >= 48
        assert all(digits_agreed(t.diagonal[i], H[i, i]) >= 45 or abs(H[i, i]) < mpmath.mpf(10) ** -40
                   for i in range(H.rows))


def test_softmax_saturated_logits_keep_the_trace():
    """Logits 400 apart: 1 − p underflows as a difference; the complements Σ_{a≠k} p_a keep it."""
    from numerics.ws import softmax_hessian_trace

    W, b, V, c, X, y = _softmax_net(3)
    c = np.array([400.0, 0.0, -3.0, 1.0, 2.0])
    y = np.zeros(len(y), int)
    t = softmax_hessian_trace(W, b, V, c, X, y, "tanh")
    ref = softmax_hessian_trace(W, b, V, c, X, y, "tanh", dps=50)
    assert float(ref.trace) > 0 and abs(t.trace - float(ref.trace)) <= 1e-10 * float(ref.trace)


def test_softmax_trace_rejects_bad_input():
    from numerics.ws import softmax_hessian_trace

    W, b, V, c, X, y = _softmax_net(4)
    with pytest.raises(ValueError, match="C >= 2"):
        softmax_hessian_trace(W, b, V[:1], c[:1], X, np.zeros(len(y), int))
    with pytest.raises(ValueError, match="labels"):
        softmax_hessian_trace(W, b, V, c, X, y + 5)


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("rows", [1, 7, 64])
def test_blocks_of_samples_give_the_one_block_result(rows, bias):
    """The float64 paths over blocks of samples (a short last block: n = 150 is no multiple of 7 or 64) sum the
    same per-sample terms as one block of all n: every diagonal entry and the trace agree to rounding."""
    from numerics.ws import softmax_hessian_trace

    net = _net(21, M=5, N=6, n=150, bias=bias)
    whole = ce_hessian_trace(*net, "tanh", bias=bias, rows=150)
    blocked = ce_hessian_trace(*net, "tanh", bias=bias, rows=rows)
    assert np.max(np.abs(blocked.diagonal - whole.diagonal)) <= 1e-13 * np.max(np.abs(whole.diagonal))
    alone = ce_hessian_trace(*net, "tanh", bias=bias, rows=rows, diagonal=False)
    assert abs(blocked.trace - whole.trace) <= 1e-13 * abs(whole.trace)
    assert abs(alone.trace - whole.trace) <= 1e-13 * abs(whole.trace)
    rng = np.random.default_rng(22)
    W, b = rng.standard_normal((6, 5)), rng.standard_normal(6)
    V, c = rng.standard_normal((4, 6)), rng.standard_normal(4)
    X, y = rng.standard_normal((150, 5)), rng.integers(0, 4, 150)
    if not bias:
        b = c = None
    sw = softmax_hessian_trace(W, b, V, c, X, y, "tanh", bias=bias, rows=150)
    sb = softmax_hessian_trace(W, b, V, c, X, y, "tanh", bias=bias, rows=rows)
    assert np.max(np.abs(sb.diagonal - sw.diagonal)) <= 1e-13 * np.max(np.abs(sw.diagonal))
    assert abs(sb.trace - sw.trace) <= 1e-13 * abs(sw.trace)


def test_working_memory_does_not_grow_with_n():
    """O(N·M) extra memory, as the module promises: the traced peak of a call (numpy's allocations) at 4× the samples
    stays within one n-vector of labels of the peak at n, and far below the input itself (X is 16 MB at n = 40 000).
    Whole-n tables (the form before the blocks) would add ≥ 3·n·N·8 bytes (19 MB here)."""
    import tracemalloc

    from numerics.ws import softmax_hessian_trace

    rng = np.random.default_rng(5)
    M, N, C = 50, 20, 4
    W, b, v = rng.standard_normal((N, M)) / 7, rng.standard_normal(N), rng.standard_normal(N)
    V, c = rng.standard_normal((C, N)), rng.standard_normal(C)
    peaks = {}
    for n in (10000, 40000):
        X, y, yc = rng.standard_normal((n, M)), (rng.random(n) < 0.5).astype(float), rng.integers(0, C, n)
        calls = {"diagonal": lambda X=X, y=y: ce_hessian_trace(W, b, v, 0.1, X, y, "tanh", rows=500),
                 "trace": lambda X=X, y=y: ce_hessian_trace(W, b, v, 0.1, X, y, "tanh", rows=500, diagonal=False),
                 "softmax": lambda X=X, yc=yc: softmax_hessian_trace(W, b, V, c, X, yc, "tanh", rows=500)}
        for name, call in calls.items():
            call()                      # kept workspace buffers are made once, outside the traced call
            tracemalloc.start()
            try:
                call()
                peaks[name, n] = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
    for name in ("diagonal", "trace", "softmax"):
        assert peaks[name, 40000] <= peaks[name, 10000] + 8 * 40000, (name, peaks)
        assert peaks[name, 40000] <= 0.15 * 40000 * M * 8, (name, peaks)
