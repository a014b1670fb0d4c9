"""Tests of numerics/kinks/bracket.py (certified Lipschitz bracket by branch and bound).

The oracles are independent of the module under test:
* ball, small m: a brute force over all 2^m sign patterns written here — one cvxpy SOCP per pattern
  (max margin t with s_j(W_j x + b_j) ≥ t, ‖x‖ ≤ R; a different formulation and code path from the
  module's direct clarabel calls, no branch and bound, no interval bounds), and the solver's point is
  accepted only after an exact Fraction check of all signs and of ‖x‖² < R²; the value ‖g_σ‖ is exact;
* sphere: dense random sampling of the tangential gradient norm (a lower bound of the true constant);
* witnesses: re-verified here in Fractions with our own code (not the module's flint routine);
* caps: the width-2n "cap" net whose constant √7 is known in closed form.
"""
import math
import time
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest

from numerics.rob.bracket import Bracket, certified_bracket


def _net(d, m, seed, bscale=0.3):
    r = np.random.default_rng(seed)
    W = r.standard_normal((m, d)) / np.sqrt(d)
    b = bscale * r.standard_normal(m)
    a = r.standard_normal(m) / np.sqrt(m)
    v = 0.1 * r.standard_normal(d)
    return W, b, a, v


def _exact_check(W, b, a, v, x, pat, sphere, R=1.0):
    """Exact value² at x if x is a genuine point of the open cell `pat` (ball: open ball; sphere: ‖x‖=1),
    else None."""
    F = Fraction
    n2 = sum(t * t for t in x)
    if (n2 != 1) if sphere else not (n2 < F(R) ** 2):
        return None
    for j in range(W.shape[0]):
        z = sum(F(W[j, l]) * x[l] for l in range(W.shape[1])) + F(b[j])
        if z == 0 or (z > 0) != bool(pat[j]):
            return None
    g = [F(v[l]) + sum(F(a[j]) * F(W[j, l]) for j in range(W.shape[0]) if pat[j]) for l in range(W.shape[1])]
    val = sum(t * t for t in g)
    if sphere:
        val -= sum(g[l] * x[l] for l in range(len(g))) ** 2
    return val


def _brute_ball(W, b, a, v, R=1.0):
    m, d = W.shape
    x, t = cp.Variable(d), cp.Variable()
    s = cp.Parameter(m)
    nw = np.linalg.norm(W, axis=1)
    prob = cp.Problem(cp.Maximize(t), [cp.multiply(s, W @ x + b) >= t * nw, cp.norm(x) <= R, t <= 1])
    best = 0.0
    for k in range(2 ** m):
        pat = [(k >> j) & 1 for j in range(m)]
        s.value = np.where(pat, 1.0, -1.0)
        prob.solve(solver=cp.CLARABEL)
        if t.value is None or t.value < 1e-7:
            continue
        xq = [Fraction(float(c)) for c in x.value * (1 - 1e-6)]
        val = _exact_check(W, b, a, v, xq, pat, False, R)
        assert val is not None                   # margin t ≥ 1e-7: the exact check must pass
        best = max(best, math.sqrt(val))
    return best


def _verify_witness(W, b, a, v, br: Bracket, sphere, R=1.0):
    val = _exact_check(W, b, a, v, list(br.witness_point), br.witness_pattern, sphere, R)
    assert val is not None
    assert br.lower <= math.sqrt(val) <= br.lower * (1 + 1e-12)


@pytest.mark.parametrize("d,m,seed", [(3, 6, 0), (4, 7, 1), (5, 8, 2), (3, 9, 3)])
def test_ball_against_brute_force(d, m, seed):
    W, b, a, v = _net(d, m, seed)
    R = 1.0 + 0.5 * seed
    truth = _brute_ball(W, b, a, v, R)
    br = certified_bracket(W, b, a, v, sphere=False, R=R, rel_gap=0.0, time_limit=60)
    assert br.status == "exhausted"
    assert br.lower <= truth * (1 + 1e-12) and truth <= br.upper * (1 + 1e-12)
    assert br.lower >= truth * (1 - 1e-12)          # run to completion: lower is the maximum
    assert br.upper <= truth * (1 + 1e-9)
    _verify_witness(W, b, a, v, br, False, R)


@pytest.mark.parametrize("d,m,seed", [(4, 8, 5), (5, 10, 6), (6, 12, 7)])
def test_sphere_against_sampling(d, m, seed):
    W, b, a, v = _net(d, m, seed)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((200000, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    S = (X @ W.T + b) > 0
    G = v + S @ (a[:, None] * W)
    samp = math.sqrt(np.max(np.sum(G * G, 1) - np.sum(G * X, 1) ** 2))
    br = certified_bracket(W, b, a, v, sphere=True, rel_gap=0.01, time_limit=20)
    assert samp <= br.upper * (1 + 1e-9)
    assert br.lower <= br.upper
    assert br.lower >= samp * (1 - 0.02)           # the search is at least as good as sampling
    if br.status == "gap reached":
        assert br.upper <= (1 + 0.01) * br.lower * (1 + 1e-12)
    _verify_witness(W, b, a, v, br, True)


def test_trained_like_d32_and_progress():
    W, b, a, v = _net(32, 16, 11, bscale=0.1)
    calls = []
    br = certified_bracket(W, b, a, v, sphere=False, rel_gap=0.01, time_limit=20,
                           progress=lambda *t: calls.append(t))
    assert br.status in ("gap reached", "exhausted") and br.gap <= 0.01 + 1e-12
    assert calls
    _verify_witness(W, b, a, v, br, False)


def test_time_limit_honoured():
    W, b, a, v = _net(32, 1024, 12, bscale=0.1)
    t0 = time.perf_counter()
    br = certified_bracket(W, b, a, v, sphere=True, time_limit=3)
    assert time.perf_counter() - t0 < 4.5
    assert br.status == "time limit" and 0 < br.lower <= br.upper
    _verify_witness(W, b, a, v, br, True)


def _cap_net(d=200, n=20, s=0.25, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    wts = rng.choice([-1.0, 1.0], n)
    W = np.vstack([X / s, X / s])
    b = np.concatenate([-(1 - s) / s * np.ones(n), -np.ones(n) / s])
    a = np.concatenate([wts, -wts])
    return W, b, a, np.zeros(d), X


def test_caps_lower_positive():
    W, b, a, v, X = _cap_net()
    G = X @ X.T - np.eye(len(X))
    assert np.max(G) < 0.5                     # caps {x_i·x > 3/4} pairwise disjoint
    br = certified_bracket(W, b, a, v, sphere=True, time_limit=8, data_points=X)
    assert br.lower >= 2.6 and br.upper >= math.sqrt(7) - 1e-9
    _verify_witness(W, b, a, v, br, True)
