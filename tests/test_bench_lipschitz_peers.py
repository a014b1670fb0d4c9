"""The certified-Lipschitz bench's peers (checks.runners.bench.lipschitz_peers) against exact constants: LipSDP is an
upper
bound of the global constant and of the zonotope's largest vertex, SCIP's bracket holds the exact ball constant, and
the suite's upper end is below LipSDP's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from checks.runners.bench import lipschitz_peers as P
from numerics import rob

pytest.importorskip("pyscipopt")


def _zonotope_max(W, a, v):
    A = a[:, None] * W
    return max(float(np.linalg.norm(v + np.array(s) @ A)) for s in itertools.product((0, 1), repeat=len(a)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lipsdp_is_above_the_zonotope_vertex_and_the_global_constant(seed):
    rng = np.random.default_rng(seed)
    W, b, a, v = P.random_net(rng, 4, 7)
    sdp = P.lipsdp(W, a, v)
    assert sdp["status"] == "optimal"
    z = _zonotope_max(W, a, v)
    glob = rob.lipschitz((W, b, a, v, 0.0), rob.Ball(4, 1000.0))
    assert glob.exact
    assert sdp["value"] >= z * (1 - 1e-6)
    assert z >= glob.upper * (1 - 1e-12)
    assert P.naive_bound(W, a, v) >= sdp["value"] * (1 - 1e-6)
    # two-sided: for one hidden layer the S-procedure is nearly tight at the zonotope vertex (never 10% above it)
    assert sdp["value"] <= 1.1 * z


@pytest.mark.parametrize("arr", ["random", "concurrent", "cancelling"])
def test_scip_bracket_holds_the_exact_ball_constant(arr):
    rng = np.random.default_rng(5)
    W, b, a, v = P.random_net(rng, 3, 8, arr)
    ex = rob.lipschitz((W, b, a, v, 0.0), rob.Ball(3, 1.0))
    assert ex.exact
    mp = P.scip_mip(W, b, a, v, 1.0, time_limit=30)
    assert mp["lower"] <= ex.upper * (1 + 1e-6) and mp["upper"] >= ex.lower * (1 - 1e-6)
    assert mp["status"] == "optimal" and abs(mp["lower"] - ex.upper) <= 1e-5 * ex.upper


def test_quick_grid_rows_and_table():
    rec = P.peer_rows(0, quick=True, log=lambda s: None)
    assert len(rec["rows"]) == len(P.GRID_QUICK)
    for r in rec["rows"]:
        assert r["suite_lower"] <= r["suite_upper"]
        assert r["suite_upper_le_lipsdp"] is True
        assert r["sampled"] <= r["suite_upper"] * (1 + 1e-12)
        assert r["suite_upper_source"] not in ("", "?")     # what holds the upper end is named
        if "mip_lower" in r:
            assert r["suite_within_mip"]
    md = "\n".join(P.markdown(rec))
    assert md.count("\n| ball") + md.count("\n| sphere") == len(rec["rows"])
