"""The bench's ws_deep section: its BackPACK peer is wired to the same loss, and its report renders what it ran."""

from __future__ import annotations

import numpy as np
import pytest

from checks.bench import ws_deep
from numerics.ws.deep import deep_hessian_trace
from numerics.ws.reference_deep import deep_hessian_torch


@pytest.mark.parametrize("C", [1, 3])
def test_backpack_trace_is_the_mean_loss_trace(C):
    pytest.importorskip("backpack")
    rng = np.random.default_rng(0)
    layers, X, y = ws_deep._net(rng, (4, 5, 3, C), 13, C)
    H = deep_hessian_torch(layers, X, y, "tanh")
    assert ws_deep.backpack_trace(layers, X, y, batch=5) == pytest.approx(np.trace(H), rel=1e-10)  # ragged batches
    assert deep_hessian_trace(layers, X, y, "tanh").trace == pytest.approx(np.trace(H), rel=1e-10)


def test_report_renders_and_refuses_a_wide_spread():
    summ = {"ratio_median": 0.3, "ratio_min": 0.05, "ratio_max": 0.6, "pairs": 2, "spread": 12.0, "headline": False,
            "why_no_headline": "per-pair ratios spread 12.00× > 2.0×: the load set the number"}
    data = {"ws_deep": {"d2000": {"widths": [8, 16, 16, 1], "n": 100, "D": 433, "trace": 1.5, "trace_sq": 2.5,
                                  "rel_err_trace": 1e-16, "rel_err_trace_sq": 2e-16, "dense_bytes": 2 ** 21,
                                  "pairs": 5050, "block": 44, "vs": {"dense torch.func.hessian": summ},
                                  "backpack_rel_err_trace": 1e-16, "trace_only_rel_err": 0.0},
                        "mnist_depth3": {"widths": [784, 64, 64, 64, 10], "n": 200, "D": 59210, "trace": -19.4,
                                         "vs": {}, "n_pairs_samples": 4, "pairs": 10, "seconds_per_pair": 0.01}}}
    md = "\n".join(ws_deep.report(data, []))
    assert "D = 433" in md and "no headline" in md and "2.0 MiB" in md and "10 pairs" in md
    assert ws_deep.report({}, []) == []
