"""The bench's peers (``checks/runners/bench/peers.py``: curvlinops, BackPACK, PyHessian) against the closed form and
the dense
torch.func Hessian at small sizes, before any of their times means anything (issue 14).

Independent oracles: the dense Hessian of ``numerics.ws.reference`` (torch.func from the loss definition) for H·v,
diag H and λ_max; the closed form for tr H; the exact single-probe Rademacher variances 2(‖A‖_F² − Σ A_ii²) of
A = H (trace) and A = H² (‖H‖_F²) for the statistical checks (5 standard errors; fixed seeds, so deterministic).
Each peer's tests skip, with the reason, when it is not installed (CI installs ``.[test]`` only).
"""

from __future__ import annotations

import numpy as np
import pytest

from checks.runners.bench import peers
from numerics.ws import ce_hessian_moments
from numerics.ws.reference import ce_hessian_torch

AVAIL = peers.available()


def needs(name):
    return pytest.mark.skipif(AVAIL[name] is not None, reason=str(AVAIL[name]))


def _net(seed, M=4, N=5, n=60):
    from checks.runners.bench.ws import make_net

    return make_net(M, N, n, seed)


@pytest.fixture(scope="module")
def case():
    net = _net(0)
    H = ce_hessian_torch(*net, "tanh")
    return net, H, ce_hessian_moments(*net, "tanh")


def _se(A, k):
    """Standard error of k Rademacher probes zᵀAz of a symmetric A."""
    return np.sqrt(2 * ((A * A).sum() - (np.diag(A) ** 2).sum()) / k)


@needs("backpack")
def test_backpack_diag_is_exact(case):
    net, H, m = case
    bp = peers.backpack_diag(net)
    assert bp["trace"] == pytest.approx(m.trace, rel=1e-12)
    assert bp["diag_sq"] == pytest.approx((np.diag(H) ** 2).sum(), rel=1e-12)
    batched = peers.backpack_diag(net, batch=25)  # 25 + 25 + 10 rows, weighted by n_b/n
    assert batched["trace"] == pytest.approx(m.trace, rel=1e-12)
    assert batched["diag_sq"] == pytest.approx(bp["diag_sq"], rel=1e-12)


@needs("curvlinops")
def test_curvlinops_operator_and_estimators(case):
    import torch

    net, H, m = case
    op = peers.curvlinops_operator(net, batch=40)  # two batches, a ragged last one
    V = torch.from_numpy(np.random.default_rng(3).standard_normal((H.shape[0], 3)))
    assert np.allclose((op @ V).numpy(), H @ V.numpy(), rtol=1e-11, atol=1e-13)
    k = 24
    for meth in ("hutchinson", "hutchpp", "xtrace"):  # unbiased; Hutch++/XTrace have less variance than Hutchinson
        est = peers.curvlinops_estimate(op, meth, k, seed=1)
        assert abs(est - m.trace) <= 5 * _se(H, k), (meth, est, m.trace)
    fro2 = peers.curvlinops_estimate(op, "hutchinson_fro2", k, seed=1)
    assert abs(fro2 - m.trace_sq) <= 5 * _se(H @ H, k)
    lm = peers.curvlinops_lmax(op)
    assert lm["lmax"] == pytest.approx(np.linalg.eigvalsh(H)[-1], rel=1e-8) and lm["matvecs"] > 0


@needs("pyhessian")
def test_pyhessian_trace_and_power_iteration(case):
    net, H, m = case
    tr = peers.pyhessian_run(net, what="trace", seed=2)
    assert tr["probes"] == len(tr["samples"]) == peers.pyhessian_stop_index(tr["samples"])  # the rule, replayed
    assert abs(tr["trace"] - m.trace) <= 5 * _se(H, tr["probes"])
    ev = np.linalg.eigvalsh(H)
    top = ev[np.argmax(np.abs(ev))]  # power iteration finds the eigenvalue of largest magnitude
    assert peers.pyhessian_run(net, what="lmax", seed=2)["lmax"] == pytest.approx(top, rel=2e-2)


def test_pyhessian_stop_rule_replay_stops_at_once_on_a_negative_mean():
    """PyHessian 0.1 divides by the signed running mean: a negative trace stops after probe 2, a positive one waits
    for a relative change below tol."""
    assert peers.pyhessian_stop_index([-5.0, -4.0, -9.0, -1.0]) == 2
    assert peers.pyhessian_stop_index([5.0, 4.0, 9.0, 1.0, 5.0, 4.75]) == 6
    assert peers.pyhessian_stop_index([1.0, 3.0, 2.0]) == 3  # never stops: all probes used


def test_probe_count_for_a_relative_standard_error():
    r = peers.probes_for_rel_se(trace=2.0, trace_sq=3.0, diag_sq=1.0, rel=0.01)
    assert r["var"] == 4.0 and r["probes"] == 10000  # 4 / (0.02)² = 10 000


def test_bench_extra_and_nox_install_the_same_peers():
    """pyproject's extra ``bench`` and the nox bench session (which installs them --no-deps) name the same peers."""
    import ast
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["bench"]
    names = {e.split(">")[0].split("=")[0] for e in extra}
    nox_src = ast.parse((root / "noxfile.py").read_text())
    peers_in_nox = next(
        ast.literal_eval(n.value)
        for n in nox_src.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "BENCH_PEERS"
    )
    assert names == set(peers_in_nox) == set(peers.DIST.values())
    pins = {ln.split("==")[0] for ln in (root / "constraints.txt").read_text().splitlines() if "==" in ln}
    assert names <= pins
