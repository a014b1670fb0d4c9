"""λ_sup in a training loop: lambda_sup(model, X, y).backward() fills .grad with exactly the closed-form gradient
(lambda_sup_grad / softmax_lambda_sup_grad) to 1e-10; the monitor logs a plain torch loop."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from numerics import rob
from numerics.ws import CurvatureMonitor, lambda_sup, lambda_sup_grad, softmax_lambda_sup_grad


def _model(M, N, C, act, dtype, bias=True):
    torch.manual_seed(M * 100 + N * 10 + C)
    return torch.nn.Sequential(torch.nn.Linear(M, N, bias=bias), act(), torch.nn.Linear(N, C, bias=bias)).to(dtype)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("act, name", [(torch.nn.Tanh, "tanh"), (torch.nn.Sigmoid, "sigmoid"),
                                       (torch.nn.GELU, "gelu")])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_binary_backward_equals_lambda_sup_grad(act, name, dtype):
    model = _model(3, 4, 1, act, dtype)
    rng = np.random.default_rng(1)
    X, y = rng.standard_normal((25, 3)), (rng.random(25) < 0.5).astype(float)
    lam = lambda_sup(model, torch.tensor(X), torch.tensor(y))
    lam.backward()
    W, b = model[0].weight.detach().double().numpy(), model[0].bias.detach().double().numpy()
    v, c = model[2].weight.detach().double().numpy()[0], float(model[2].bias.detach().double())
    ref = lambda_sup_grad(W, b, v, c, X, y, name)
    assert abs(float(lam.detach()) - ref.lambda_sup) <= 1e-12 * ref.lambda_sup
    tol = 1e-10 if dtype == torch.float64 else 1e-6   # float32 .grad holds the float64 gradient rounded
    assert _rel(model[0].weight.grad.double().numpy(), ref.W) <= tol
    assert _rel(model[0].bias.grad.double().numpy(), ref.b) <= tol
    assert _rel(model[2].weight.grad.double().numpy()[0], ref.v) <= tol
    assert abs(float(model[2].bias.grad) - ref.c) <= tol * max(abs(ref.c), np.max(np.abs(ref.v)))


@pytest.mark.parametrize("bias", [True, False])
def test_softmax_backward_equals_softmax_lambda_sup_grad(bias):
    model = _model(2, 5, 3, torch.nn.Tanh, torch.float64, bias=bias)
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((18, 2)), rng.integers(0, 3, 18)
    lam = lambda_sup(model, torch.tensor(X), torch.tensor(y))
    lam.backward()
    W, V = model[0].weight.detach().numpy(), model[2].weight.detach().numpy()
    b = model[0].bias.detach().numpy() if bias else None
    c = model[2].bias.detach().numpy() if bias else None
    ref = softmax_lambda_sup_grad(W, b, V, c, X, y, "tanh", bias=bias)
    assert abs(float(lam.detach()) - ref.lambda_sup) <= 1e-12 * ref.lambda_sup
    assert _rel(model[0].weight.grad.numpy(), ref.W) <= 1e-10 and _rel(model[2].weight.grad.numpy(), ref.V) <= 1e-10
    if bias:
        assert _rel(model[0].bias.grad.numpy(), ref.b) <= 1e-10 and _rel(model[2].bias.grad.numpy(), ref.c) <= 1e-10


def test_bad_inputs_name_the_problem():
    model = _model(3, 4, 1, torch.nn.Tanh, torch.float64)
    with pytest.raises(ValueError):
        lambda_sup(model, torch.zeros(5, 2), torch.zeros(5))      # wrong input width
    relu = _model(3, 4, 1, torch.nn.ReLU, torch.float64)
    with pytest.raises(ValueError):
        lambda_sup(relu, torch.zeros(5, 3), torch.zeros(5))       # ReLU has no Hessian curvature here


def test_monitor_in_a_plain_loop_and_as_a_regulariser(tmp_path):
    model = _model(2, 6, 1, torch.nn.Tanh, torch.float64)
    rng = np.random.default_rng(3)
    X = torch.tensor(rng.standard_normal((40, 2)))
    y = (X[:, 0] * X[:, 1] > 0).double()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    mon = CurvatureMonitor(X, y, every=5)
    for step in range(21):
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(X)[:, 0], y) + 0.01 * lambda_sup(model, X, y)
        loss.backward()
        opt.step()
        mon(step, model)
    assert [r["step"] for r in mon.rows] == [0, 5, 10, 15, 20]
    assert all(r["lambda_sup"] > 0 and r["trace_sq"] > 0 for r in mon.rows)
    assert mon.plot(tmp_path / "lsup.png").stat().st_size > 1000
    relu = _model(2, 4, 1, torch.nn.ReLU, torch.float64)
    m2 = CurvatureMonitor(X, every=1, domain=rob.Ball(2, 1))
    row = m2(0, relu)
    assert 0 < row["lip_lower"] <= row["lip_upper"]


def test_the_runnable_example_trains_and_the_penalty_lowers_lambda_sup():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).parents[1] / "examples" / "lambda_sup_training.py"
    spec = importlib.util.spec_from_file_location("lambda_sup_training", path)
    ex = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ex)
    plain, penalised = ex.run(0.0, steps=60), ex.run(0.5, steps=60)
    assert penalised.rows[-1]["lambda_sup"] < plain.rows[-1]["lambda_sup"]
