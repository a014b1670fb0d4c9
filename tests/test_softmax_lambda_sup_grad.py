"""∇_θ λ_sup for softmax cross-entropy against reverse-mode autograd *through the dense* ``torch.func.hessian``
of ``F.cross_entropy`` (third derivatives of the loss from its definition; no code shared with the closed form),
and λ_sup itself against :func:`softmax_hessian_moments`."""

import numpy as np
import pytest
import torch

from numerics.ws.reference_softmax import softmax_torch_loss_fn
from numerics.ws.softmax import softmax_hessian_moments, softmax_lambda_sup_grad


def _net(seed, N=3, M=2, C=3, n=11, bias=True):
    rng = np.random.default_rng(seed)
    W, b, V, c = rng.normal(size=(N, M)), rng.normal(size=N), rng.normal(size=(C, N)), rng.normal(size=C)
    X, y = rng.normal(size=(n, M)), rng.integers(0, C, n)
    return W, (b if bias else None), V, (c if bias else None), X, y


def _dense(net, act, bias):
    loss, th0 = softmax_torch_loss_fn(*net, act, bias=bias)

    def lam(th):
        H = torch.func.hessian(loss)(th)
        D = H.shape[0]
        mu = torch.trace(H) / D
        return mu + (D - 1) ** 0.5 * torch.sqrt((H * H).sum() / D - mu**2)

    return torch.func.grad(lam)(th0).numpy()


@pytest.mark.parametrize("act,bias,C", [("tanh", True, 3), ("gelu", False, 2), ("softplus", True, 4)])
def test_softmax_gradient_matches_dense_third_order_autograd(act, bias, C):
    net = _net(5 + C, C=C, bias=bias)
    g = softmax_lambda_sup_grad(*net, act, bias=bias, block=4)  # several blocks, ragged last one
    ref = _dense(net, act, bias)
    assert np.max(np.abs(g.flat() - ref)) <= 1e-10 * np.max(np.abs(ref))
    assert g.lambda_sup == pytest.approx(float(softmax_hessian_moments(*net, act, bias=bias).lambda_sup), rel=1e-12)
