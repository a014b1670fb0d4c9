"""The bench's ws_deep section: its BackPACK peer is wired to the same loss, and its report renders what it ran."""

from __future__ import annotations

import numpy as np
import pytest

from checks.runners.bench import ws_deep
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


def test_trace_only_report_and_per_call_normalisation(monkeypatch):
    from checks.runners.bench import ws_trace

    calls = {"suite": 0, "peer": 0}

    def suite():
        calls["suite"] += 1
        return type("T", (), {"trace": 2.0})()

    def peer():
        calls["peer"] += 1
        return 2.0

    class FakeBench:
        targets = []

        def target(self, *a, **k):
            self.targets.append((a, k))

        def log(self, s):
            pass

    # every timed sample takes 1 s whatever it loops over: the per-call ratio must be ks/kp
    monkeypatch.setattr(ws_trace, "_repeats", lambda fn: ((10, None) if fn is suite else (2, None)))
    fake = {"ratio_median": 1.0, "ratio_min": 1.0, "ratio_max": 1.0, "pairs": 3, "spread": 1.0, "headline": True,
            "seconds_median": 1.0, "base_seconds_median": 1.0}
    def fake_paired(base, others, **kw):
        return {"BackPACK": dict(fake)}, {"base": base(), "BackPACK": others["BackPACK"]()}

    monkeypatch.setattr(ws_trace, "paired", fake_paired)
    b = FakeBench()
    row = ws_trace._row(b, "x", suite, peer, 3, 10)
    assert calls == {"suite": 10, "peer": 2}            # one looped sample each
    assert row["ratio"]["ratio_median"] == pytest.approx(5.0) and row["backpack_s"] == pytest.approx(0.5)
    assert row["suite_s"] == pytest.approx(0.1) and row["rel_diff"] == 0.0
    assert b.targets[0][0][1] == pytest.approx(5.0)
    md = "\n".join(ws_trace.report({"trace_only": {"rows": [row]}}, []))
    assert "| x |" in md and "5×" in md
    assert "not installed" in "\n".join(ws_trace.report({"trace_only": {"missing": "backpack"}}, []))
