"""ws.deep: the deep-MLP closed form against torch.func.hessian, its blocking, its inputs, its checks' teeth."""

from __future__ import annotations

import dataclasses

import mpmath
import numpy as np
import pytest
import torch

from checks.ws import deep as claim
from numerics.ws import deep as D
from numerics.ws.deep import deep_hessian_moments, deep_hessian_trace, deep_layers_from_module
from numerics.ws.reference_deep import deep_hessian_torch
from proofs.ws.deep import check_deep_against_hessian


def _net(seed, widths, biases=None, n=9, scale=1.0):
    rng = np.random.default_rng(seed)
    biases = biases or (True,) * (len(widths) - 1)
    layers = [(rng.normal(size=(widths[k + 1], widths[k])) * scale,
               rng.normal(size=widths[k + 1]) if biases[k] else None) for k in range(len(widths) - 1)]
    C = widths[-1]
    return layers, rng.normal(size=(n, widths[0])), rng.integers(0, 2 if C == 1 else C, n)


@pytest.mark.parametrize("widths,biases,act", [
    ((3, 4, 5, 1), None, "tanh"),
    ((2, 3, 3, 4), (True, False, True), "gelu"),
    ((2, 3, 2, 3, 1), (False, True, True, True), "sigmoid"),
    ((2, 2, 3, 2, 3), None, "softplus"),
])
def test_matches_torch_hessian(widths, biases, act):
    layers, X, y = _net(1, widths, biases)
    H = deep_hessian_torch(layers, X, y, act)
    m = deep_hessian_moments(layers, X, y, act, block=4)
    assert m.dim == H.shape[0]
    assert m.trace == pytest.approx(np.trace(H), rel=1e-11)
    assert m.trace_sq == pytest.approx(float(np.sum(H * H)), rel=1e-11)
    assert deep_hessian_trace(layers, X, y, act).trace == pytest.approx(np.trace(H), rel=1e-11)
    lmax = float(np.linalg.eigvalsh(H)[-1])
    assert lmax <= float(m.lambda_sup) * (1 + 1e-12)


def test_block_size_does_not_change_the_sums():
    layers, X, y = _net(2, (3, 3, 4, 3), n=11)
    vals = [deep_hessian_moments(layers, X, y, "tanh", block=b) for b in (1, 3, 11, 64)]
    assert vals[0].pairs == vals[-1].pairs == 11 * 12 // 2
    for v in vals[1:]:
        assert v.trace == pytest.approx(vals[0].trace, rel=1e-13)
        assert v.trace_sq == pytest.approx(vals[0].trace_sq, rel=1e-13)
    # a memory budget chooses a block that bounds the working set
    small = deep_hessian_moments(layers, X, y, "tanh", memory_mb=0.05)
    assert 1 <= small.block < 11 and small.trace_sq == pytest.approx(vals[0].trace_sq, rel=1e-13)


def test_dps_path_agrees_with_float64():
    layers, X, y = _net(3, (2, 2, 2, 1), n=4)
    f = deep_hessian_moments(layers, X, y, "gelu")
    m = deep_hessian_moments(layers, X, y, "gelu", dps=30)
    assert isinstance(m.trace, mpmath.mpf) and m.dps == 30
    assert float(m.trace) == pytest.approx(f.trace, rel=1e-12)
    assert float(m.trace_sq) == pytest.approx(f.trace_sq, rel=1e-12)


def test_one_hidden_layer_equals_the_one_layer_closed_form():
    from numerics.ws import ce_hessian_moments

    layers, X, y = _net(4, (3, 5, 1), n=10)
    (W, b), (V, c) = layers
    m = deep_hessian_moments(layers, X, y, "tanh")
    ref = ce_hessian_moments(W, b, V[0], float(c[0]), X, y, "tanh")
    assert m.dim == ref.dim
    assert m.trace == pytest.approx(ref.trace, rel=1e-12) and m.trace_sq == pytest.approx(ref.trace_sq, rel=1e-12)


@pytest.mark.parametrize("mutate,match", [
    (lambda L, X, y: ([(L[0][0][:, :2], L[0][1])] + L[1:], X, y), "columns|X must be"),
    (lambda L, X, y: (L, X, np.where(np.arange(len(y)) == 0, 2, y)), "labels"),
    (lambda L, X, y: ([(L[0][0], L[0][1][:2])] + L[1:], X, y), "b1 must have shape"),
    (lambda L, X, y: (L[:1], X, y), "at least one hidden layer"),
    (lambda L, X, y: (L, np.where(X > 0, np.nan, X), y), "NaN"),
])
def test_bad_input_is_named(mutate, match):
    layers, X, y = _net(5, (3, 4, 2, 1))
    with pytest.raises(ValueError, match=match):
        deep_hessian_moments(*mutate(layers, X, y), "tanh")


def test_loss_must_fit_the_logits():
    layers, X, y = _net(6, (3, 4, 2, 3))
    with pytest.raises(ValueError, match="one logit"):
        deep_hessian_moments(layers, X, y, "tanh", loss="binary")
    with pytest.raises(ValueError, match="loss must be"):
        deep_hessian_moments(layers, X, y, "tanh", loss="mse")


def test_sequential_modules():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 4), torch.nn.Tanh(),
                                torch.nn.Linear(4, 2)).double()
    layers, act = deep_layers_from_module(model)
    assert act == "tanh" and [W.shape for W, _ in layers] == [(4, 3), (4, 4), (2, 4)]
    X = np.random.default_rng(0).normal(size=(6, 3))
    y = np.array([0, 1, 1, 0, 1, 0])
    m = deep_hessian_moments(layers, X, y, act)
    H = deep_hessian_torch(layers, X, y, act)
    assert m.trace == pytest.approx(np.trace(H), rel=1e-11)
    bad = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    with pytest.raises(ValueError, match="ReLU.*unsupported"):
        deep_layers_from_module(bad)
    mixed = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 4), torch.nn.Sigmoid(),
                                torch.nn.Linear(4, 1))
    with pytest.raises(ValueError, match="one activation"):
        deep_layers_from_module(mixed)


# ------------------------------------------------------------------------------------------------ teeth
def test_symbolic_check_has_teeth(monkeypatch):
    ok = check_deep_against_hessian((1, 1, 1, 1), (True, True, True), 2)
    assert ok.trace_zero and ok.trace_sq_zero
    orig = D.DeepTables.mdiag_and_pairs

    def half_cross(self):                     # the bilinear (W_l, h_{l−1}) term counted once instead of twice
        md, w, perm = orig(self)
        return md, w / 2, perm

    monkeypatch.setattr(D.DeepTables, "mdiag_and_pairs", half_cross)
    bad = check_deep_against_hessian((1, 1, 1, 1), (True, True, True), 2)
    assert not bad.trace_sq_zero


def test_falsifier_property_has_teeth():
    """A closed form that drops the second layer's φ″ term is caught by the moments property's screen."""
    layers, X, y = _net(7, (2, 3, 3, 1), n=4)
    case = claim.DeepCase(tuple(layers), X, y, "tanh")
    good = claim.moments_property()
    assert good.screen(case) < 0

    def wrong(layers, X, y, act, **kw):
        m = deep_hessian_moments(layers, X, y, act, **kw)
        return dataclasses.replace(m, trace_sq=m.trace_sq * (1 + 1e-6))

    assert claim.moments_property(wrong).screen(case) > 0


# ------------------------------------------------------------------------------------------------ inspect
def test_inspect_deep_state_dict(tmp_path, capsys):
    import json

    from checks.runners.cli import main

    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.GELU(), torch.nn.Linear(5, 3), torch.nn.GELU(),
                                torch.nn.Linear(3, 2)).double()
    torch.save(model.state_dict(), tmp_path / "deep.pt")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 4)), rng.integers(0, 2, 12)
    np.savez(tmp_path / "data.npz", X=X, y=y)
    rc = main(["inspect", str(tmp_path / "deep.pt"), "--data", str(tmp_path / "data.npz"), "--activation", "gelu",
               "--json", str(tmp_path / "out.json")])
    assert rc == 0
    res = json.loads((tmp_path / "out.json").read_text())["ws_deep"]
    layers, act = deep_layers_from_module(model)
    H = deep_hessian_torch(layers, X, y, act)                  # the dense reference, not the code under test
    assert res["dim"] == H.shape[0] and res["loss"] == "softmax"
    assert res["trace"] == pytest.approx(np.trace(H), rel=1e-10)
    assert res["trace_sq"] == pytest.approx(float(np.sum(H * H)), rel=1e-10)
    assert res["lambda_max"] == pytest.approx(float(np.linalg.eigvalsh(H)[-1]), rel=1e-8)
    assert res["lambda_max"] <= res["lambda_sup"]
    # a deep ReLU net is named, one line, exit 2
    relu = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3), torch.nn.ReLU(),
                               torch.nn.Linear(3, 1))
    torch.save(relu.state_dict(), tmp_path / "relu.pt")
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "relu.pt"), "--data", str(tmp_path / "data.npz"), "--activation",
                 "relu"]) == 2
    assert "ReLU" in capsys.readouterr().err
