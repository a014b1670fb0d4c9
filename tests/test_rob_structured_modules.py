"""rob.structured's PyTorch modules: net() is the function the module computes, k(f) of each family, vector outputs
read from an nn.Sequential, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from numerics import rob
from numerics.rob.structured import VectorNet, kink_count, vector_lipschitz_ball
from numerics.rob.structured_modules import Conv1dReLU, LowRankReLU, TiedReLU, net_from_module


def _eval(net, X):
    if isinstance(net, VectorNet):
        return net(X)
    W, b, a, v, c = net
    return (np.maximum(X @ W.T + b, 0) @ a + X @ v + c)[:, None]


@pytest.mark.parametrize("make", [lambda: Conv1dReLU(8, 3), lambda: Conv1dReLU(8, 3, K=3),
                                  lambda: TiedReLU(6, [2, 1, 3]), lambda: TiedReLU(6, [2, 2], K=2, skip=False),
                                  lambda: LowRankReLU(7, 10, 2), lambda: LowRankReLU(7, 10, 3, K=4)])
def test_net_is_the_modules_function(make):
    torch.manual_seed(0)
    mod = make()
    with torch.no_grad():
        for p in mod.parameters():
            p.add_(0.3 * torch.randn_like(p))       # the skip and head away from their defaults
    X = np.random.default_rng(1).standard_normal((200, mod.d))
    with torch.no_grad():
        y = mod(torch.tensor(X)).numpy()
    net = net_from_module(mod)
    assert y.shape == (200, mod.K)
    assert np.max(np.abs(_eval(net, X) - y)) <= 1e-12 * (1 + np.max(np.abs(y)))
    assert (isinstance(net, VectorNet)) == (mod.K > 1)


def test_kinks_of_each_family():
    torch.manual_seed(2)
    conv = Conv1dReLU(9, 4)
    assert kink_count(net_from_module(conv), rob.Ball(9, 1)) == 6       # six shifts of one filter
    t = TiedReLU(5, [3, 2])
    with torch.no_grad():
        t.bias.copy_(torch.tensor([0.1, 0.1, 0.2, -0.3, -0.3]))           # repeated biases: one kink each
    assert kink_count(net_from_module(t), rob.Ball(5, 10)) == 3
    lr = LowRankReLU(6, 8, 1)
    assert kink_count(net_from_module(lr), rob.Ball(6, 10)) == 8          # rank 1: parallel, distinct offsets


def test_vector_sequential_is_read_and_its_constant_bounds_autograd():
    torch.manual_seed(3)
    seq = torch.nn.Sequential(torch.nn.Linear(3, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3)).double()
    net = net_from_module(seq)
    assert isinstance(net, VectorNet) and net.K == 3
    L = vector_lipschitz_ball(net, 1)
    X = torch.randn(400, 3, dtype=torch.float64)
    X = X / X.norm(dim=1, keepdim=True) * torch.rand(400, 1, dtype=torch.float64) ** (1 / 3)
    J = torch.func.vmap(torch.func.jacrev(seq))(X)
    assert float(torch.linalg.matrix_norm(J.detach(), 2).max()) <= L.value * (1 + 1e-12)


def test_bad_inputs_name_the_problem():
    with pytest.raises(ValueError, match="filter width"):
        Conv1dReLU(4, 5)
    with pytest.raises(ValueError, match="at least one unit"):
        TiedReLU(4, [2, 0])
    with pytest.raises(ValueError, match="rank"):
        LowRankReLU(4, 3, 4)
    with pytest.raises(ValueError, match="features"):
        Conv1dReLU(6, 2)(torch.zeros(2, 5, dtype=torch.float64))
    tanh = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    with pytest.raises(ValueError, match="Tanh"):
        net_from_module(tanh)
    mod = TiedReLU(3, [1, 1])
    with torch.no_grad():
        mod.bias[0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        net_from_module(mod)
