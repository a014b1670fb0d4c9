"""The level-at-a-time exact ball recursion (:mod:`numerics.rob.ball`): every decision its float filter takes is
the one its exact path takes, and the speed it was written for (d = 3, 128 units).

Oracles: the exact paths themselves (every interval sign made undecided, or every batched sub-flat
parametrisation refused, so that each decision is taken in rationals instead: the result must not move), and
genuine sample points of the ball (the constant is at least every sampled gradient norm). The old per-flat
recursion (commit 943bf2e) gives the same BallResult on 2020 random and degenerate nets
(``scripts/compare_ball.py``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

from numerics import rob as K
from numerics.rob import ball as KB
from numerics.rob.canonical import canonicalize
from numerics.rob.interval import Interval, Undecided


def _nets():
    rng = np.random.default_rng(7)
    out = []
    for d, m in ((2, 9), (3, 8), (3, 9)):
        W = rng.standard_normal((m, d))
        out.append(((W, rng.uniform(-0.8, 0.8, m) * np.linalg.norm(W, axis=1), rng.standard_normal(m),
                     0.3 * rng.standard_normal(d), 0.0), d))
        Wi = rng.integers(-2, 3, (m, d)).astype(float)        # coincident, parallel, concurrent hyperplanes
        Wi[~Wi.any(axis=1), 0] = 1.0
        out.append(((Wi, rng.integers(-2, 3, m) / 2.0, rng.integers(-2, 3, m).astype(float),
                     np.zeros(d), 0.0), d))
    return out


def _run(net, d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cf = canonicalize(net, K.Ball(d, 1.0))
    r = KB.lipschitz_ball(cf.Wq, cf.bq, cf.aq, cf.vq, 1)
    return r.value2, r.pattern, r.cells, r.nodes


@pytest.mark.parametrize("plant", ["no_sign", "no_subflat"])
def test_the_exact_paths_agree_with_the_filter(monkeypatch, plant):
    nets = _nets()
    ref = [_run(net, d) for net, d in nets]
    if plant == "no_sign":
        monkeypatch.setattr(Interval, "sign", lambda self: np.zeros(self.m.shape, np.int8))
    else:
        def refuse(*a, **k):
            raise Undecided("forced")
        monkeypatch.setattr(KB, "_sub_flats_iv", refuse)
    assert [_run(net, d) for net, d in nets] == ref


def test_128_units_in_d3_take_about_a_second_of_cpu():
    rng = np.random.default_rng([0, 3, 128, True])       # the bench's net family (checks/runners/bench/rob.py)
    W = rng.standard_normal((128, 3))
    b = rng.uniform(-0.8, 0.8, 128) * np.linalg.norm(W, axis=1)
    a, v = rng.standard_normal(128), 0.3 * rng.standard_normal(3)
    c0 = time.process_time()
    L = K.lipschitz((W, b, a, v, 0.0), K.Ball(3, 1.0), time_limit=None)
    cpu = time.process_time() - c0
    assert L.exact
    assert cpu < 5.0                                      # 10.5 s before (median of 3 seeds, CPU), ~1.8 s now
    X = rng.standard_normal((20000, 3))
    X *= (rng.random((20000, 1)) ** (1 / 3)) / np.linalg.norm(X, axis=1, keepdims=True)
    G = v + ((X @ W.T + b) > 0) @ (a[:, None] * W)
    assert np.sqrt(np.max(np.sum(G * G, 1))) <= L.upper * (1 + 1e-12)
