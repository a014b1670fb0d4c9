"""ws.softmax: the closed-form tr H, tr H² of the mean softmax cross-entropy Hessian (numerics.ws.softmax), its module
adapter and ``inspect`` section, and the falsifier's teeth on a planted bug in the C × C block.

Oracle independence: the module tests differentiate the *module's own* forward pass with ``F.cross_entropy`` by
``torch.func.hessian`` (nothing goes through the adapter or the unpacked arrays); the planted bug is confirmed by
``sympy``-derived derivatives in mpmath (``numerics.ws.reference``), which share no code with the closed form.
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from checks.runners.cli import main
from checks.runners.falsify import falsify, replay
from checks.ws.softmax import bound_property, moments_property
from numerics import moments
from numerics.ws.reference_softmax import softmax_hessian_torch, softmax_torch_loss_fn
from numerics.ws.softmax import softmax_hessian_moments


def _module_moments(model, X, y):
    """tr H, tr H² of mean softmax CE of ``model`` at its own parameters, by torch.func on a float64 copy."""
    model = model.double()
    names = [n for n, _ in model.named_parameters()]
    params = tuple(p.detach().clone() for p in model.parameters())
    Xt, yt = torch.as_tensor(X, dtype=torch.float64), torch.as_tensor(y, dtype=torch.long)
    sizes = [p.numel() for p in params]

    def loss_flat(v):
        ps = [c.reshape(p.shape) for c, p in zip(torch.split(v, sizes), params, strict=True)]
        out = torch.func.functional_call(model, dict(zip(names, ps, strict=True)), (Xt,))
        return nn.functional.cross_entropy(out, yt)

    H = torch.func.hessian(loss_flat)(torch.cat([p.reshape(-1) for p in params])).numpy()
    return np.trace(H), float(np.sum(H * H)), H.shape[0]


@pytest.mark.parametrize("act", [nn.Tanh(), nn.GELU(approximate="tanh"), nn.Softplus(beta=2.0)], ids=repr)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_NC_module_matches_torch_func_hessian(act, dtype, bias):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3, bias=bias), act, nn.Linear(3, 4, bias=bias)).to(dtype)
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(13, 2)), rng.integers(0, 4, 13)
    Xd = torch.tensor(X, dtype=dtype)
    m = moments.softmax_hessian_moments_from_module(model, Xd, torch.tensor(y))
    tr, tr2, D = _module_moments(model, np.asarray(Xd, float), y)
    assert m.dim == D == (3 * 3 + 4 * 4 if bias else 3 * (2 + 4)) and m.classes == 4
    assert abs(m.trace - tr) <= 1e-10 * abs(tr) and abs(m.trace_sq - tr2) <= 1e-10 * tr2
    assert ("float32 network itself" in m.source.note) == (dtype == torch.float32)


def test_the_head_says_which_loss():
    two = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 2))
    one = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    X, y = np.zeros((3, 2)), np.array([0, 1, 1])
    with pytest.raises(ValueError, match="softmax_hessian_moments_from_module"):
        moments.ce_hessian_moments_from_module(two, X, y)
    with pytest.raises(ValueError, match="ce_hessian_moments_from_module"):
        moments.softmax_hessian_moments_from_module(one, X, y)
    assert moments.softmax_hessian_moments_from_module(two, X, y).classes == 2


@pytest.mark.parametrize("kw, words", [
    (dict(y=np.array([0, 3, 1])), "integers in 0..2"),
    (dict(y=np.array([0, 0.5, 1])), "integers in 0..2"),
    (dict(V=np.ones((1, 2))), "C >= 2"),
    (dict(c=np.zeros(2)), "c must have shape (3,)"),
    (dict(V=np.ones((3, 4))), "N = 2 columns"),
])
def test_bad_inputs_name_the_problem(kw, words):
    args = dict(W=np.ones((2, 2)), b=np.zeros(2), V=np.ones((3, 2)), c=np.zeros(3), X=np.ones((3, 2)),
                y=np.array([0, 1, 2]))
    args.update(kw)
    with pytest.raises(ValueError) as err:
        softmax_hessian_moments(**args)
    assert words in str(err.value), str(err.value)


def test_blocks_dps_and_tensors_agree():
    rng = np.random.default_rng(3)
    W, b, V, c = rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)
    X, y = rng.normal(size=(17, 2)), rng.integers(0, 5, 17)
    ref = softmax_hessian_moments(W, b, V, c, X, y, "sigmoid", block=17)
    for blk in (1, 4, 16):
        m = softmax_hessian_moments(W, b, V, c, X, y, "sigmoid", block=blk)
        assert abs(m.trace - ref.trace) <= 1e-13 * ref.trace and abs(m.trace_sq - ref.trace_sq) <= 1e-13 * ref.trace_sq
    t = softmax_hessian_moments(*(torch.tensor(a, requires_grad=a.dtype == float) for a in (W, b, V, c, X)),
                                torch.tensor(y), "sigmoid")
    assert (t.trace, t.trace_sq) == (ref.trace, ref.trace_sq)
    mp = softmax_hessian_moments(W, b, V, c, X, y, "sigmoid", dps=40, block=5)
    assert abs(float(mp.trace) - ref.trace) <= 1e-14 * ref.trace


def test_saturated_softmax_keeps_its_digits():
    """Logits 80 apart: 1 − p_max ≈ e^{−80}. The float64 closed form keeps ~15 digits against 50-digit mpmath."""
    rng = np.random.default_rng(4)
    W, b, V, c = rng.normal(size=(2, 2)), rng.normal(size=2), rng.normal(size=(3, 2)), np.array([80.0, 0.0, -5.0])
    X, y = rng.normal(size=(6, 2)), np.array([0, 0, 0, 1, 0, 2])
    f = softmax_hessian_moments(W, b, V, c, X, y, "tanh")
    m = softmax_hessian_moments(W, b, V, c, X, y, "tanh", dps=50)
    assert abs(f.trace / float(m.trace) - 1) < 1e-13 and abs(f.trace_sq / float(m.trace_sq) - 1) < 1e-13


def _q_diagonal_only(p, V):
    """Planted bug in the C × C block: the centring S = I − 1pᵀ dropped, i.e. diag(p) for diag(p) − ppᵀ."""
    return np.broadcast_to(V, (len(p), *V.shape))


def test_planted_bug_in_the_CxC_block_is_caught(tmp_path):
    prop = moments_property(functools.partial(softmax_hessian_moments, _center=_q_diagonal_only))
    res = falsify(prop, seed=1, out_dir=tmp_path)  # the default budget
    assert res.found, f"missed the planted C×C bug in {res.examples} examples"
    case = prop.from_json(res.counterexample)
    assert prop.screen(case) > 0 and prop.confirm(case) > 0
    again = replay(res.reproducers[-1])  # the real closed form passes on the planted bug's counterexample
    assert again["property"] == prop.name and again["mpmath_margin"] <= 0, again


@pytest.mark.parametrize("make", [moments_property, bound_property])
def test_real_closed_form_survives(make, tmp_path):
    res = falsify(make(), budget=15, seed=2, out_dir=tmp_path)
    assert not res.found, res.counterexample
    assert res.examples >= 15


def test_inspect_linear_NC_head(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3))
    save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, tmp_path / "m.safetensors")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), rng.integers(0, 3, 20)
    np.savetxt(tmp_path / "d.csv", np.column_stack([X, y]), delimiter=",")
    out = tmp_path / "o.json"
    assert main(["inspect", str(tmp_path / "m.safetensors"), "--data", str(tmp_path / "d.csv"), "--activation",
                 "tanh", "--json", str(out)]) == 0
    res = json.loads(out.read_text())["ws_softmax"]
    W, b = model[0].weight.detach().double().numpy(), model[0].bias.detach().double().numpy()
    V, c = model[2].weight.detach().double().numpy(), model[2].bias.detach().double().numpy()
    H = softmax_hessian_torch(W, b, V, c, X, y, "tanh")
    ev = np.linalg.eigvalsh(H)
    assert res["classes"] == 3 and res["dim"] == H.shape[0]
    assert abs(res["trace"] - np.trace(H)) <= 1e-10 * abs(np.trace(H))
    assert abs(res["trace_sq"] - np.sum(H * H)) <= 1e-10 * np.sum(H * H)
    assert abs(res["lambda_max"] - ev[-1]) <= 1e-9 * ev[-1] and res["lambda_max"] <= res["lambda_sup"]
    # ‖∇λ_sup‖ against reverse-mode autograd through the dense torch.func Hessian (third derivatives)
    loss, th0 = softmax_torch_loss_fn(W, b, V, c, X, y, "tanh")

    def lam(th):
        Hd = torch.func.hessian(loss)(th)
        mu = torch.trace(Hd) / Hd.shape[0]
        return mu + (Hd.shape[0] - 1) ** 0.5 * torch.sqrt((Hd * Hd).sum() / Hd.shape[0] - mu**2)

    gref = float(torch.linalg.norm(torch.func.grad(lam)(th0)))
    assert abs(res["grad_lambda_sup_norm"] - gref) <= 1e-9 * gref
    np.savetxt(tmp_path / "bad.csv", np.column_stack([X, np.full(20, 3.0)]), delimiter=",")
    assert main(["inspect", str(tmp_path / "m.safetensors"), "--data", str(tmp_path / "bad.csv"), "--activation",
                 "tanh"]) == 2
