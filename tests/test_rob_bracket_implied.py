"""Implied signs in the Lipschitz branch and bound (:meth:`numerics.rob.bracket_net.BracketNet.implied_signs`): a free
unit is fixed only when its sign is proved constant on the node's region {‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0}.

Both sides: a unit whose hyperplane crosses the region (points of both signs found in it, by sampling) is never
returned, and a unit whose hyperplane clearly misses it is returned (the rule has teeth); on random regions the
returned signs hold at every sampled point of the region; and the brackets with the rule on contain the exact
constants of small nets (the arrangement's)."""

from __future__ import annotations

import numpy as np
import pytest

from numerics import rob
from numerics.rob.bracket import certified_bracket
from numerics.rob.bracket_net import BracketNet


def _net(W, b, R=1.0, sphere=False):
    W = np.asarray(W, float)
    m, d = W.shape
    return BracketNet(W, np.asarray(b, float), np.ones(m), np.zeros(d), sphere, R)


def _region_points(net, idx, sg, rng, n=20000):
    d = net.d
    X = rng.standard_normal((n, d))
    X *= (rng.random(n) ** (1 / d) * net.R / np.linalg.norm(X, axis=1))[:, None]
    ok = np.all(sg[None, :] * (X @ net.W[idx].T + net.b[idx]) >= 0, axis=1)
    return X[ok]


def test_a_cap_implies_the_parallel_unit_and_not_the_crossing_ones():
    # region: the cap x₁ ≥ ½ of the unit ball (unit 0, sign +)
    W = [[1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [-1, 0, 0]]
    b = [-0.5, -0.2, 0.0, -0.7, 0.3]
    net = _net(W, b)
    units, sig = net.implied_signs(np.array([0]), np.array([1.0]), np.array([1, 2, 3, 4]), np.array([0.8, 0, 0]))
    got = dict(zip(units.tolist(), sig.tolist(), strict=True))
    assert got == {1: 1.0, 4: -1.0}   # x₁ − 0.2 ≥ 0.3 > 0 and −x₁ + 0.3 ≤ −0.2 < 0 on the cap; 2 and 3 cross it


def test_a_tangent_hyperplane_is_not_fixed():
    # x₁ − ½ = 0 touches the cap x₁ ≥ ½ along its face: the sign is not strict there
    net = _net([[1, 0], [1, 0]], [-0.5, -0.5])
    units, _ = net.implied_signs(np.array([0]), np.array([1.0]), np.array([1]), np.array([0.7, 0.0]))
    assert len(units) == 0


@pytest.mark.parametrize("seed", range(8))
def test_random_regions_never_fix_a_crossing_unit(seed):
    rng = np.random.default_rng(seed)
    d = 2 + seed % 4
    m = 6 + 3 * d
    W = rng.standard_normal((m, d))
    b = 0.3 * rng.standard_normal(m)
    net = _net(W, b)
    k = d + 1 + seed % 3
    idx = np.arange(k)
    x0 = rng.standard_normal(d)
    x0 *= 0.5 / np.linalg.norm(x0)
    sg = np.where(W[idx] @ x0 + b[idx] > 0, 1.0, -1.0)
    units, sig = net.implied_signs(idx, sg, np.arange(k, m), x0)
    P = _region_points(net, idx, sg, rng)
    assert len(P) > 20
    for u, s in zip(units, sig, strict=True):
        assert np.all(s * (P @ W[u] + b[u]) > 0), (seed, u)
    # and the rule has teeth: over these regions some units are fixed
    if seed == 0:
        assert len(units) >= 1


@pytest.mark.parametrize("sphere", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_brackets_with_implied_signs_contain_the_exact_constant(sphere, seed):
    rng = np.random.default_rng(40 + seed)
    d, m = 3, 20   # more units than a leaf enumerates (14): the tree branches, and fixes by implication
    W = rng.standard_normal((m, d))
    b = 0.3 * rng.standard_normal(m)
    a = rng.standard_normal(m)
    v = 0.1 * rng.standard_normal(d)
    net = (W, b, a, v, 0.0)
    exact = rob.lipschitz(net, rob.Sphere(d) if sphere else rob.Ball(d, 1.0))
    assert exact.exact
    br = certified_bracket(W.tolist(), b.tolist(), a.tolist(), v.tolist(), sphere=sphere, rel_gap=1e-9,
                           time_limit=8.0, implied=True)
    assert br.lower <= float(exact.upper) * (1 + 1e-12) and float(exact.lower) <= br.upper * (1 + 1e-12)
    assert br.implied > 0
    if not sphere:   # (on the sphere a 1e-9 gap can stay open: its cells are bounded through the ball)
        assert br.status in ("gap reached", "exhausted")
