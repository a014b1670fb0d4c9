"""``shallow-proofs inspect``: a safetensors model and a CSV in, every applicable section out; bad files are
one line and exit 2. The numbers are checked against the array API on the same weights (read back from the
file by safetensors itself, not by the code under test) and against a dense torch.func Hessian."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from checks.runners.cli import main
from numerics import kinks, moments
from numerics.ws.reference import ce_hessian_torch


@pytest.fixture
def files(tmp_path):
    torch.manual_seed(0)
    tanh = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    relu = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1))
    for name, m in (("tanh", tanh), ("relu", relu)):
        save_file({k: v.detach().contiguous() for k, v in m.state_dict().items()}, tmp_path / f"{name}.safetensors")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.integers(0, 2, 30).astype(float)
    np.savetxt(tmp_path / "data.csv", np.column_stack([X, y]), delimiter=",", header="a,b,c,y", comments="")
    return tmp_path, tanh, relu, X, y


def test_inspect_smooth_and_relu(files, capsys):
    d, tanh, relu, X, y = files
    out = d / "t.json"
    assert main(["inspect", str(d / "tanh.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh",
                 "--json", str(out)]) == 0
    res = json.loads(out.read_text())["ws"]
    W, b = tanh[0].weight.detach().double().numpy(), tanh[0].bias.detach().double().numpy()
    v, c = tanh[2].weight.detach().double().numpy()[0], float(tanh[2].bias.detach())
    H = ce_hessian_torch(W, b, v, c, X, y, "tanh")
    ev = np.linalg.eigvalsh(H)
    assert abs(res["trace"] - np.trace(H)) <= 1e-10 * abs(np.trace(H))
    assert abs(res["trace_sq"] - np.sum(H * H)) <= 1e-10 * np.sum(H * H)
    assert abs(res["lambda_max"] - ev[-1]) <= 1e-9 * ev[-1] and res["lambda_max"] <= res["lambda_sup"]
    assert res["dim"] == moments.dim_of(4, 3, True)
    out2 = d / "r.json"
    assert main(["inspect", str(d / "relu.safetensors"), "--data", str(d / "data.csv"), "--activation", "relu",
                 "--domain", "ball", "--json", str(out2)]) == 0
    rob = json.loads(out2.read_text())["rob"]
    W, b = relu[0].weight.detach().double().numpy(), relu[0].bias.detach().double().numpy()
    a, c = relu[2].weight.detach().double().numpy()[0], float(relu[2].bias.detach())
    L = kinks.lipschitz((W, b, a, np.zeros(3), c), kinks.Ball(3, 1.0))
    assert rob["exact"] and abs(rob["lipschitz_upper"] - L.upper) <= 1e-12 * L.upper
    assert rob["kinks"] <= rob["width"] == 5 and rob["rigidity_holds"]
    assert "flat" in json.loads(out2.read_text())


def _bad(d, kind):
    if kind == "missing":
        return ["inspect", str(d / "nope.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh"]
    if kind == "truncated":
        raw = (d / "tanh.safetensors").read_bytes()
        (d / "cut.safetensors").write_bytes(raw[: len(raw) // 2])
        return ["inspect", str(d / "cut.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh"]
    if kind == "wrong_keys":
        save_file({"only": torch.zeros(3, 3)}, d / "keys.safetensors")
        return ["inspect", str(d / "keys.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh"]
    if kind == "wrong_shape":
        save_file({"0.weight": torch.zeros(4, 3), "2.weight": torch.zeros(1, 5)}, d / "shape.safetensors")
        return ["inspect", str(d / "shape.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh"]
    if kind == "data_shape":
        (d / "bad.csv").write_text("1,2,3,0\n4,5,0\n")
        return ["inspect", str(d / "tanh.safetensors"), "--data", str(d / "bad.csv"), "--activation", "tanh"]
    if kind == "no_activation":
        return ["inspect", str(d / "tanh.safetensors"), "--data", str(d / "data.csv")]
    if kind == "pickle":
        torch.save(nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1)), d / "m.pt")
        return ["inspect", str(d / "m.pt"), "--data", str(d / "data.csv")]
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["missing", "truncated", "wrong_keys", "wrong_shape", "data_shape",
                                  "no_activation", "pickle"])
def test_bad_files_are_one_line_exit_2(files, capsys, kind):
    d = files[0]
    assert main(_bad(d, kind)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("shallow-proofs inspect: error:") and "Traceback" not in err[0]


def test_pickled_module_needs_trust(files):
    d = files[0]
    torch.save(nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1)), d / "m.pt")
    assert main(["inspect", str(d / "m.pt"), "--data", str(d / "data.csv"), "--trust-pickle"]) == 0


def test_a_float32_file_is_reported_as_float32_and_read_exactly(files):
    """The modules are float32 (the torch default): the file holds float32 numbers, inspect says so, and the numbers
    analysed are exactly those (float32 → float64 is exact), so tr H equals the float64 array API on the upcast."""
    d, tanh, _, X, y = files
    out = d / "t32.json"
    assert main(["inspect", str(d / "tanh.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh",
                 "--json", str(out)]) == 0
    rec = json.loads(out.read_text())
    assert rec["network"]["dtype"] == "float32"
    W, b = tanh[0].weight.detach().double().numpy(), tanh[0].bias.detach().double().numpy()
    v, c = tanh[2].weight.detach().double().numpy()[0], float(tanh[2].bias.detach())
    ref = moments.ce_hessian_moments(W, b, v, c, X, y, "tanh")
    assert rec["ws"]["trace"] == pytest.approx(float(ref.trace), rel=1e-13)
    # a float64 file stays float64
    save_file({k: v.detach().double().contiguous() for k, v in tanh.state_dict().items()}, d / "t64.safetensors")
    out64 = d / "t64.json"
    assert main(["inspect", str(d / "t64.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh",
                 "--json", str(out64)]) == 0
    assert json.loads(out64.read_text())["network"]["dtype"] == "float64"


def test_inspect_runs_the_pair_tiles_on_dask_workers_and_resumes(files, capsys):
    """``--workers 1`` and ``--resume`` give the bits of the plain run; the second run resumes every task."""
    d, *_ = files
    args = ["inspect", str(d / "tanh.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh"]
    assert main([*args, "--json", str(d / "plain.json")]) == 0
    assert main([*args, "--json", str(d / "dask.json"), "--workers", "1", "--tiles-dir", str(d / "tiles")]) == 0
    assert main([*args, "--json", str(d / "again.json"), "--resume", "--tiles-dir", str(d / "tiles")]) == 0
    plain, dask, again = (json.loads((d / f"{k}.json").read_text()) for k in ("plain", "dask", "again"))
    for k in ("trace", "trace_sq"):
        assert plain["ws"][k] == dask["ws"][k] == again["ws"][k]
    assert dask["tiles"]["engine"] == "1 Dask worker(s)" and dask["tiles"]["tasks_run"] >= 1
    assert again["tiles"]["tasks_run"] == 0 and again["tiles"]["tasks_resumed"] == dask["tiles"]["tasks"]
    assert "pair tiles" in capsys.readouterr().err
    assert main([*args, "--workers", "1", "--scheduler", "tcp://x:1"]) == 2
    assert "give one of them" in capsys.readouterr().err


def test_trace_only_is_the_dense_trace_and_refuses_a_relu_net(files, capsys):
    """``--trace-only``: tr H alone by per-sample sums (binary head; a softmax head and a deep stack through the API),
    equal to the dense Hessian's trace; a ReLU net has no cross-entropy Hessian of this kind: one line, exit 2."""
    from checks.runners.inspect import inspect
    from numerics.ws.reference_softmax import softmax_hessian_torch

    d, tanh, relu, X, y = files
    out = d / "tr.json"
    assert main(["inspect", str(d / "tanh.safetensors"), "--data", str(d / "data.csv"), "--activation", "tanh",
                 "--trace-only", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert set(res) >= {"network", "ws_trace"} and "ws" not in res
    W, b = tanh[0].weight.detach().double().numpy(), tanh[0].bias.detach().double().numpy()
    v, c = tanh[2].weight.detach().double().numpy()[0], float(tanh[2].bias.detach())
    H = ce_hessian_torch(W, b, v, c, X, y, "tanh")
    assert abs(res["ws_trace"]["trace"] - np.trace(H)) <= 1e-12 * abs(np.trace(H))
    assert res["ws_trace"]["dim"] == H.shape[0]
    # softmax head (C = 3) and a depth-2 stack, through the Python API
    torch.manual_seed(1)
    soft = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3)).double()
    yc = np.arange(30) % 3
    got = inspect(soft, X, yc, trace_only=True, log=lambda s: None)["ws_trace"]["trace"]
    Ws = [p.detach().numpy() for p in soft.parameters()]
    Hs = softmax_hessian_torch(Ws[0], Ws[1], Ws[2], Ws[3], X, yc, "tanh")
    assert abs(got - np.trace(Hs)) <= 1e-12 * abs(np.trace(Hs))
    deep = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1)).double()
    res_d = inspect(deep, X, y, trace_only=True, log=lambda s: None)
    full = inspect(deep, X, y, log=lambda s: None)["ws_deep"]["trace"]
    assert abs(res_d["ws_trace"]["trace"] - full) <= 1e-12 * abs(full)
    assert main(["inspect", str(d / "relu.safetensors"), "--data", str(d / "data.csv"), "--activation", "relu",
                 "--trace-only"]) == 2
    assert "--trace-only" in capsys.readouterr().err
