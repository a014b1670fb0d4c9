"""Tests of numerics/rob/bracket.py (certified Lipschitz bracket by branch and bound).

The oracles are independent of the module under test:
* ball, small m: a brute force over all 2^m sign patterns written here — one cvxpy SOCP per pattern
  (max margin t with s_j(W_j x + b_j) ≥ t, ‖x‖ ≤ R; a different formulation and code path from the
  module's direct clarabel calls, no branch and bound, no interval bounds), and the solver's point is
  accepted only after an exact Fraction check of all signs and of ‖x‖² < R²; the value ‖g_σ‖ is exact;
* ball and S², small m, two-sided: the exact constants of the arrangement routines
  (:func:`numerics.rob.lipschitz` → :mod:`numerics.rob.ball` facet recursion / :mod:`numerics.rob.sphere2`),
  compared exactly (Fractions against a + b√D): exact − lower ≥ 0 and upper − exact ≥ 0, including
  degenerate nets (repeated, parallel and opposite hyperplanes, a plane through 0, a plane missing the ball);
* the Shor bound of the largest zonotope vertex against enumeration of all 2^n sign vectors;
* sphere: dense random sampling of the tangential gradient norm (a lower bound of the true constant);
* witnesses: re-verified here in Fractions with our own code (not the module's flint routine);
* caps: the width-2n "cap" net whose constant √7 is known in closed form.
"""
import itertools
import math
import time
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest

from numerics import rob as K
from numerics.rob.bracket import Bracket, certified_bracket
from numerics.rob.bracket_ia import shor_bound
from numerics.rob.exact import QNum


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


# ---------------------------------------------------------------- two-sided against exact constants
def _paper_net(d, m, seed):
    """The trained-like nets of the benchmark: rng([seed, d, m]), W/√d, b ~ 0.1, a/√m, v ~ 0.01."""
    rng = np.random.default_rng([seed, d, m])
    W = rng.standard_normal((m, d)) / np.sqrt(d)
    b = 0.1 * rng.standard_normal(m)
    a = rng.standard_normal(m) / np.sqrt(m)
    v = 0.01 * rng.standard_normal(d)
    return W, b, a, v


def _degenerate(d, m, seed):
    """Repeated, parallel, opposite hyperplanes, one through the origin and one missing the unit ball."""
    W, b, a, v = _net(d, m, seed)
    W[1], b[1] = W[0], b[0]                    # the same hyperplane twice (different a)
    W[2], b[2] = 2 * W[0], 0.5 * b[0] + 0.25   # parallel
    W[3], b[3] = -W[0], -b[0]                  # the same hyperplane, opposite orientation
    b[4] = 0.0                                 # through the origin
    W[5] = W[5] / np.linalg.norm(W[5])
    b[5] = 1.5                                 # misses the unit ball: always on
    return W, b, a, v


def _concurrent(d, m, seed):
    """Every hyperplane through one interior point p (‖p‖ = 0.3): b = −W p as float64 computes it, so the
    hyperplanes miss p by ~1e-17 and bound tiny cells there that no float point can see."""
    W, b, a, v = _paper_net(d, m, seed)
    p = np.random.default_rng(seed).standard_normal(d)
    p *= 0.3 / np.linalg.norm(p)
    return W, -W @ p, a, v


def _concurrent_exact(d, m, seed):
    """Exactly concurrent: small dyadic W and p, so b = −W p is exact in float64 (one common point)."""
    rng = np.random.default_rng(seed)
    W = rng.integers(-8, 9, (m, d)) / 8.0
    W[np.all(W == 0, axis=1), 0] = 1.0
    p = rng.integers(-2, 3, d) / 16.0
    return W, -W @ p, rng.integers(-8, 9, m) / 8.0, rng.integers(-2, 3, d) / 32.0


def _check_two_sided(L, br, rel_gap, converged=("gap reached",)):
    """exact − lower ≥ 0 and upper − exact ≥ 0, decided exactly (Lip² = a + b√D against Fractions); the
    gap is within rel_gap when the method reports convergence."""
    assert L.exact and L.value2 is not None
    assert QNum(Fraction(br.lower) ** 2).cmp(L.value2) <= 0
    assert QNum(Fraction(br.upper) ** 2).cmp(L.value2) >= 0
    if br.status in converged:
        assert br.upper <= (1 + rel_gap) * br.lower * (1 + 1e-12)


BALL_CASES = [("rand", 2, 6, 20, 1.0), ("rand", 3, 8, 21, 0.7), ("rand", 5, 9, 22, 1.5), ("rand", 8, 10, 23, 1.0),
              ("paper", 8, 10, 0, 1.0), ("paper", 6, 10, 1, 2.0), ("degen", 3, 8, 24, 1.0),
              ("degen", 6, 9, 25, 1.0), ("conc", 4, 9, 26, 1.0), ("conc", 6, 10, 27, 1.0),
              ("conc_exact", 4, 9, 28, 1.0), ("conc_exact", 5, 10, 29, 1.0)]


@pytest.mark.parametrize("kind,d,m,seed,R", BALL_CASES)
@pytest.mark.parametrize("rel_gap", [0.0, 0.01])
def test_ball_two_sided_against_exact(kind, d, m, seed, R, rel_gap):
    W, b, a, v = {"rand": _net, "paper": _paper_net, "degen": _degenerate, "conc": _concurrent,
                  "conc_exact": _concurrent_exact}[kind](d, m, seed)
    L = K.lipschitz((W, b, a, v, 0.0), K.Ball(d, R))
    assert L.exact                               # the exact facet recursion (numerics.rob.ball)
    br = certified_bracket(W, b, a, v, sphere=False, R=R, rel_gap=rel_gap, time_limit=30)
    assert br.status in ("gap reached", "exhausted")
    _check_two_sided(L, br, rel_gap, ("gap reached", "exhausted"))   # ball: an exhausted tree is converged
    _verify_witness(W, b, a, v, br, False, R)


def test_a_cell_of_size_1e_21_is_found_and_is_the_maximum():
    """x > 0, y > 0, x + y < 2⁻⁷⁰: a triangle of size ~1e-21 where g = 2(1, 1) (elsewhere ‖g‖ ≤ √2 + 0.02), next to a
    fourth line 1e-13 away that sets the first zoom's scale too coarse: the second zoom finds a rational point in
    it. The exact B_R routine is the reference; a cell declared empty from the floats alone would put the upper end
    below it."""
    W = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])
    b, a, v = np.array([0.0, 0.0, 2.0 ** -70, 1e-13]), np.array([1.0, 1.0, -1.0, 0.01]), np.zeros(2)
    L = K.lipschitz((W, b, a, v, 0.0), K.Ball(2, 1))
    br = certified_bracket(W, b, a, v, sphere=False, rel_gap=0.0, time_limit=20)
    _check_two_sided(L, br, 0.0, ("gap reached", "exhausted"))
    assert br.status in ("gap reached", "exhausted") and br.lower > 2.8
    _verify_witness(W, b, a, v, br, False, 1.0)


@pytest.mark.parametrize("kind,m,seed", [("rand", 6, 30), ("rand", 9, 31), ("paper", 10, 2), ("degen", 8, 32)])
def test_sphere_two_sided_against_exact_s2(kind, m, seed):
    W, b, a, v = {"rand": _net, "paper": _paper_net, "degen": _degenerate}[kind](3, m, seed)
    L = K.lipschitz((W, b, a, v, 0.0), K.Sphere(3))
    assert L.exact                               # the exact small-circle arrangement (numerics.rob.sphere2)
    br = certified_bracket(W, b, a, v, sphere=True, rel_gap=0.01, time_limit=20)
    _check_two_sided(L, br, 0.01)
    assert QNum(Fraction(br.lower * 1.01) ** 2).cmp(L.value2) >= 0   # the search finds the maximum to 1%
    _verify_witness(W, b, a, v, br, True)


def test_shor_bound_is_an_upper_bound_of_the_largest_vertex():
    rng = np.random.default_rng(40)
    tight = 0
    for t in range(150):
        d, n = int(rng.integers(1, 7)), int(rng.integers(1, 11))
        B = rng.standard_normal((d, n)) * rng.choice([1.0, 1e-3, 1e3])
        if t % 7 == 0:
            B[:, 0] = 0.0
        if t % 5 == 0:
            B[:, -1] = B[:, 0]
        E = np.array(list(itertools.product([-1, 1], repeat=n))).T
        exact = max(math.sqrt(sum(Fraction(float(x)) ** 2 for x in col)) for col in (B @ E).T)
        V = rng.standard_normal((n, min(n, 8)))
        V /= np.linalg.norm(V, axis=1, keepdims=True)
        ub, _ = shor_bound(B, np.zeros_like(B), V, iters=int(rng.integers(0, 40)))
        assert ub >= exact * (1 + 1e-15)
        tight += ub <= exact * (1 + 1e-3)
    assert tight >= 60                           # and usually tight (Shor's relaxation is exact in rank 1)


# ---------------------------------------------------------------- the target regime: d = 32
@pytest.mark.parametrize("sphere", [False, True])
def test_d32_m32_reaches_one_percent(sphere):
    W, b, a, v = _paper_net(32, 32, 0)
    br = certified_bracket(W, b, a, v, sphere=sphere, rel_gap=0.01, time_limit=120)
    assert br.status in ("gap reached", "exhausted")
    assert br.gap <= 0.01 + 1e-12 and br.seconds < 120
    _verify_witness(W, b, a, v, br, sphere)


def test_d32_m64_through_lipschitz():
    """The public route (the cost model hands d = 32, m = 64 to the bracket) reaches the 1% target."""
    W, b, a, v = _paper_net(32, 64, 1)
    L = K.lipschitz((W, b, a, v, 0.0), K.Ball(32), rel_gap=0.01, time_limit=120)
    assert not L.exact and L.status in ("gap reached", "exhausted")
    assert 0 < L.lower <= L.upper <= 1.01 * L.lower * (1 + 1e-12)
