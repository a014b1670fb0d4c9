"""∇_θ λ_sup (beyond the paper) against two independent references.

Oracles: (1) reverse-mode autograd *through the dense* ``torch.func.hessian`` of the loss (third
derivatives of the loss written from its definition), and (2) central finite differences of the
float64 closed form λ_sup along random directions. Neither uses the gradient code under test.
"""

import numpy as np
import pytest
import sympy as sp
import torch

from numerics.ws import ce_hessian_moments, lambda_sup_grad
from numerics.ws.reference import torch_loss_fn


def _net(seed, N=3, M=2, n=14, bias=True):
    rng = np.random.default_rng(seed)
    W, b, v = rng.normal(size=(N, M)), rng.normal(size=N), rng.normal(size=N)
    X, y = rng.normal(size=(n, M)), rng.integers(0, 2, n).astype(float)
    return W, (b if bias else None), v, (0.3 if bias else None), X, y


def _dense_lambda_sup_grad(net, act, bias):
    loss, th0 = torch_loss_fn(*net, act, bias=bias)

    def lam(th):
        H = torch.func.hessian(loss)(th)
        D = H.shape[0]
        mu = torch.trace(H) / D
        return mu + (D - 1) ** 0.5 * torch.sqrt((H * H).sum() / D - mu**2)

    return torch.func.grad(lam)(th0).numpy(), th0.numpy()


@pytest.mark.parametrize("act", ["tanh", "sigmoid", "softplus", "gelu", sp.Symbol("t") ** 3 / 3 + sp.Symbol("t")])
@pytest.mark.parametrize("bias", [True, False])
def test_gradient_matches_dense_third_order_autograd(act, bias):
    net = _net(7, bias=bias)
    g = lambda_sup_grad(*net, act, bias=bias, block=5)
    ref, _ = _dense_lambda_sup_grad(net, act, bias)
    assert np.max(np.abs(g.flat() - ref)) <= 1e-10 * np.max(np.abs(ref))
    assert g.lambda_sup == pytest.approx(float(ce_hessian_moments(*net, act, bias=bias).lambda_sup), rel=1e-13)


def test_gradient_matches_finite_differences():
    N, M = 3, 2
    W, b, v, c, X, y = _net(3, N, M)
    g = lambda_sup_grad(W, b, v, c, X, y, "tanh").flat()
    th = np.concatenate([W.ravel(), b, v, [c]])

    def lam(t):
        return ce_hessian_moments(t[: N * M].reshape(N, M), t[N * M: N * M + N], t[N * M + N: N * M + 2 * N],
                                  t[-1], X, y, "tanh").lambda_sup

    rng = np.random.default_rng(0)
    for _ in range(3):
        d = rng.normal(size=th.size)
        h = 1e-5
        fd = (lam(th + h * d) - lam(th - h * d)) / (2 * h)
        assert fd == pytest.approx(g @ d, rel=1e-6, abs=1e-9)
