"""PyTorch modules in (numerics.interop): each result against an oracle that does not go through the adapter.

Smooth nets: tr H and tr H² against a torch.func Hessian of the *module's own* forward pass and BCE loss
(torch computes it from the module, not from our unpacked arrays). Homogeneous nets: Υ against the array
API on weights read off the module by hand. ReLU nets: the certified constant against the exact routine on
the hand-unpacked tuple, and against a sampled lower bound of the module's own gradient norm.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from numerics import flatness, kinks, moments
from numerics.interop import ReLUPower, unpack


def _module_hessian_moments(model, X, y):
    """tr H, tr H² of mean BCE of ``model`` at its own parameters, by torch.func (float64 copy)."""
    model = model.double()
    names = [n for n, _ in model.named_parameters()]
    params = tuple(p.detach().clone() for p in model.parameters())
    Xt, yt = torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(y, dtype=torch.float64)

    def loss(*ps):
        out = torch.func.functional_call(model, dict(zip(names, ps, strict=True)), (Xt,))[:, 0]
        return nn.functional.binary_cross_entropy_with_logits(out, yt)

    flat = torch.cat([p.reshape(-1) for p in params])
    sizes = [p.numel() for p in params]

    def loss_flat(v):
        return loss(*[c.reshape(p.shape) for c, p in zip(torch.split(v, sizes), params, strict=True)])

    H = torch.func.hessian(loss_flat)(flat).numpy()
    return np.trace(H), float(np.sum(H * H))


SMOOTH = [nn.Sigmoid(), nn.Tanh(), nn.Softplus(beta=2.0), nn.GELU(), nn.GELU(approximate="tanh")]


@pytest.mark.parametrize("act", SMOOTH, ids=lambda a: repr(a))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_smooth_module_matches_torch_func_hessian(act, dtype, bias):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3, bias=bias), act, nn.Linear(3, 1, bias=bias)).to(dtype)
    for p in model.parameters():
        p.requires_grad_(True)
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(15, 2)), rng.integers(0, 2, 15).astype(float)
    m = moments.ce_hessian_moments_from_module(model, torch.tensor(X, dtype=dtype), torch.tensor(y))
    tr, tr2 = _module_hessian_moments(model, np.asarray(torch.tensor(X, dtype=dtype), float), y)
    assert abs(m.trace - tr) <= 1e-10 * abs(tr) and abs(m.trace_sq - tr2) <= 1e-10 * tr2
    assert m.source.dtype == str(dtype).replace("torch.", "")
    assert ("float32 network itself" in m.source.note) == (dtype == torch.float32)


def test_float32_weights_are_read_exactly():
    lin = nn.Linear(3, 2).to(torch.float32)
    net = unpack(nn.Sequential(lin, nn.Tanh(), nn.Linear(2, 1)))
    assert np.array_equal(net.W, lin.weight.detach().numpy().astype(np.float64))
    assert net.W.dtype == np.float64


@pytest.mark.parametrize("act, name", [(nn.ReLU(), "relu"), (nn.LeakyReLU(0.2), "leaky_relu:0.2"),
                                       (ReLUPower(2.0), "relu_power:2.0")])
def test_homogeneous_module_matches_array_api(act, name):
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 5, bias=False), act, nn.Linear(5, 1, bias=False))
    X = np.random.default_rng(2).normal(size=(20, 3))
    a = model[2].weight.detach().numpy()[0].astype(float)
    Theta = model[0].weight.detach().numpy().astype(float)
    assert flatness.upsilon_from_module(model, X) == flatness.upsilon(a, Theta, X, name)


@pytest.mark.parametrize("act", [nn.ReLU(), nn.LeakyReLU(0.2)], ids=["relu", "leaky"])
def test_relu_module_matches_exact_routine_and_its_own_gradients(act):
    torch.manual_seed(4)
    model = nn.Sequential(nn.Linear(3, 6), act, nn.Linear(6, 1)).double()
    L = kinks.lipschitz(model, kinks.Ball(3, 1.0))  # a module is accepted directly
    W, b = model[0].weight.detach().numpy(), model[0].bias.detach().numpy()
    a, c = model[2].weight.detach().numpy()[0], float(model[2].bias.detach())
    slope = 0.2 if isinstance(act, nn.LeakyReLU) else 0.0
    # LeakyReLU(z) = slope·z + (1 − slope)·ReLU(z): the same function as a ReLU net with a skip term
    v = slope * (a @ W)
    ref = kinks.lipschitz((W, b, (1 - slope) * a, v, c + slope * float(a @ b)), kinks.Ball(3, 1.0))
    assert L.exact and ref.exact and abs(L.upper - ref.upper) <= 1e-12 * ref.upper
    x = torch.tensor(np.random.default_rng(5).normal(size=(4000, 3)))
    x2 = x / x.norm(dim=1, keepdim=True) * torch.rand(4000, 1, dtype=torch.float64) ** (1 / 3)
    # the sampled gradient norm of the module itself never exceeds the certified constant
    gn = torch.autograd.functional.jacobian(lambda z: model(z).sum(), x2.detach()).norm(dim=1).max()
    assert float(gn) <= L.upper * (1 + 1e-12) and float(gn) >= 0.5 * L.lower


@pytest.mark.parametrize("model, words", [
    (lambda: nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1)), "layer"),
    (lambda: nn.Sequential(nn.Linear(2, 3), nn.ELU(), nn.Linear(3, 1)), "'1' (ELU) is not a supported activation"),
    (lambda: nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 2)), "Linear(N, 1) head"),
    (lambda: nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(4, 1)), "does not take the 3 hidden units"),
])
def test_bad_modules_name_the_layer(model, words):
    with pytest.raises(ValueError, match=None) as err:
        moments.ce_hessian_moments_from_module(model(), np.zeros((3, 2)), np.zeros(3))
    assert words in str(err.value), str(err.value)


def test_wrong_kind_of_activation_says_what_works():
    relu = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    with pytest.raises(ValueError, match="not smooth"):
        moments.ce_hessian_moments_from_module(relu, np.zeros((3, 2)), np.zeros(3))
    tanh = nn.Sequential(nn.Linear(2, 3, bias=False), nn.Tanh(), nn.Linear(3, 1, bias=False))
    with pytest.raises(ValueError, match="not positively homogeneous"):
        flatness.upsilon_from_module(tanh, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="bias=False"):
        flatness.upsilon_from_module(relu, np.ones((3, 2)))


def test_tensors_with_requires_grad_are_accepted_by_the_array_api():
    W = torch.randn(3, 2, requires_grad=True)
    rng = np.random.default_rng(0)
    m = moments.ce_hessian_moments(W, torch.zeros(3), torch.ones(3, requires_grad=True), 0.0,
                                   torch.tensor(rng.normal(size=(5, 2))), torch.tensor([0, 1, 0, 1, 1]), "tanh")
    assert np.isfinite(m.trace)
