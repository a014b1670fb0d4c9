"""Weights that describe themselves: save_safetensors writes architecture, activation, dtype and version into the
safetensors __metadata__; inspect reads them back (no --activation needed), keeps a float32 file float32, and
refuses an --activation that contradicts the file."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from checks.runners.cli import main
from numerics.interop import read_safetensors_metadata, save_safetensors


@pytest.fixture()
def data(tmp_path):
    rng = np.random.default_rng(0)
    p = tmp_path / "data.npz"
    np.savez(p, X=rng.standard_normal((30, 3)), y=(rng.random(30) < 0.5).astype(float))
    return p


@pytest.mark.parametrize("act, spec", [(torch.nn.Tanh(), "tanh"), (torch.nn.Softplus(beta=2.0), "softplus:2"),
                                       (torch.nn.GELU(approximate="tanh"), "gelu_tanh")])
def test_metadata_round_trip(tmp_path, act, spec):
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), act, torch.nn.Linear(4, 1))   # float32
    meta = save_safetensors(model, tmp_path / "m.safetensors")
    back = read_safetensors_metadata(tmp_path / "m.safetensors")
    assert back == meta and back["activation"] == spec and back["dtype"] == "float32"
    assert back["architecture"].startswith("Linear(3, 4)") and back["format"] == "shallow-proofs/two-layer"


def test_inspect_reads_the_activation_and_keeps_float32(tmp_path, data, capsys):
    torch.manual_seed(2)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    path = tmp_path / "m.safetensors"
    save_safetensors(model, path)
    out = tmp_path / "out.json"
    assert main(["inspect", str(path), "--data", str(data), "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    text = json.dumps(rep)
    assert "Tanh" in text and "float32" in text and "float64 network" not in text


def test_a_contradicting_activation_and_a_bare_file_are_refused(tmp_path, data, capsys):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()
    path = tmp_path / "m.safetensors"
    save_safetensors(model, path)
    assert main(["inspect", str(path), "--data", str(data), "--activation", "sigmoid"]) == 2
    assert "contradicts" in capsys.readouterr().err
    bare = tmp_path / "bare.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(bare))
    assert main(["inspect", str(bare), "--data", str(data)]) == 2
    assert "no activation" in capsys.readouterr().err
