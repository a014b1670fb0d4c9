r"""Tests that make the independent Lipschitz oracles trustworthy on their own.

Why each oracle is independent of the code it judges (``numerics.rob``, the rob claim modules):

* ``checks.rob.oracles.ball_brute_force`` enumerates all 2^m sign patterns and decides each by an SOCP
  plus an *exact rational witness point* (or an exact rational emptiness certificate); it never builds
  an arrangement, a canonical form or an adjacency graph.
* ``checks.rob.oracles.sphere_probe`` / ``sphere_sample`` only evaluate the tangential gradient at float
  points (probes along kink circles, great circles, random points); they are lower bounds by
  construction.
* ``numerics.rob.single_pole.single_pole_lipschitz`` uses the one-dimensional closed form of SPEC §4
  in exact rational arithmetic; it imports nothing from the rest of ``numerics.rob``.

Here they are checked against hand-derived constants and against each other, two-sided where possible
(lower bounds from genuine points, exact values from the formulas, cell counts from combinatorics).
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
import sympy as sp

from checks.rob.oracles import ball_brute_force, sphere_probe, sphere_sample


def _load_single_pole():
    return importlib.import_module("numerics.rob.single_pole")


single_pole_lipschitz = _load_single_pole().single_pole_lipschitz

REPRO = ([[1.0, 0, 0], [1.0, 0, 0]], [-1 / 3, -2 / 5], [-0.22, -0.05], [-0.8, 0.18, 0.0], 0.0)
R_ = sp.Rational
REPRO_Q = (
    [[1, 0, 0], [1, 0, 0]],
    [R_(-1, 3), R_(-2, 5)],
    [R_(-22, 100), R_(-5, 100)],
    [R_(-8, 10), R_(18, 100), 0],
    0,
)
REPRO_LIP2 = R_(9669, 10000) + R_(963, 31250) * sp.sqrt(21)  # = 1.0526711987205...²


def _f(net, X):
    W, b, a, v, c = (np.asarray(t, dtype=float) for t in net)
    return np.maximum(X @ W.T + b, 0.0) @ a + X @ v + c


# ============================================================================ ball brute force
@pytest.mark.parametrize(
    "b, expect_cells, which",
    [
        (0.3, 2, "both"),  # plane meets the ball
        (-5.0, 1, "v"),  # tangent plane (3,4)·x = 5 at R = 1: misses the OPEN ball, inactive
        (5.0, 1, "v+aw"),  # tangent on the other side: active on the whole open ball
        (-4.999999, 2, "both"),  # meets the ball in a cap of depth 2e-7
        (-7.0, 1, "v"),
        (9.0, 1, "v+aw"),
    ],
)
def test_ball_one_unit(b, expect_cells, which):
    w, a, v = [3.0, 4.0], -0.7, [0.25, -1.5]
    r = ball_brute_force(([w], [b], [a], v, 0.0), 1)
    assert r.cells == expect_cells and r.unresolved == 0
    g0 = [Fraction(x) for x in v]
    g1 = [Fraction(x) + Fraction(a) * Fraction(y) for x, y in zip(v, w, strict=False)]
    n0, n1 = sum(x * x for x in g0), sum(x * x for x in g1)
    want = {"both": max(n0, n1), "v": n0, "v+aw": n1}[which]
    assert r.value2 == want
    assert r.value == pytest.approx(math.sqrt(want), rel=1e-15)


def test_ball_parallel_and_duplicate_planes():
    # planes x1 = 0, 0.5 (twice, once reversed), 2 (outside R = 1): cells x1<0, 0<x1<.5, .5<x1<1
    W = [[1, 0], [2, 0], [-4, 0], [1, 0]]
    b = [0, -1, 2, -2]
    a = [1.0, 2.0, -0.5, 3.0]
    v = [0.5, 0.25]
    r = ball_brute_force((W, b, a, v, 0), 1)
    assert r.cells == 3 and r.unresolved == 0 and r.rejected == 0
    # hand gradients per cell (unit 2 is active for x1 < 0.5)
    g = {
        "x1<0": (0.5 + (-0.5) * (-4), 0.25),
        "0<x1<.5": (0.5 + 1 + (-0.5) * (-4), 0.25),
        ".5<x1<1": (0.5 + 1 + 2 * 2, 0.25),
    }
    want = max(Fraction(x) ** 2 + Fraction(y) ** 2 for x, y in g.values())
    assert r.value2 == want
    assert sorted(r.patterns) == sorted([(0, 0, 1, 0), (1, 0, 1, 0), (1, 1, 0, 0)])


def test_ball_three_lines_through_a_point():
    r = ball_brute_force(([[1, 0], [0, 1], [1, 1]], [0, 0, 0], [1.0, 2.0, 3.0], [0.0, 0.0], 0), 1)
    assert r.cells == 6 and r.unresolved == 0
    assert r.certified_empty == 2  # (+,+,−) and (−,−,+) proved empty exactly
    assert (1, 1, 0) not in r.patterns and (0, 0, 1) not in r.patterns
    assert r.value2 == 4**2 + 5**2  # pattern (1,1,1): g = 1·(1,0) + 2·(0,1) + 3·(1,1) = (4, 5)
    assert r.pattern == (1, 1, 1)


@pytest.mark.parametrize("e", [2.0**-20, 2.0**-40, 2.0**-60, -(2.0**-40)])
def test_ball_tiny_triangle_is_found(e):
    # x = 0, y = 0, x + y = e: 7 cells, one a triangle of side |e|, far below the solver's tolerance;
    # the 8th pattern is empty and must be proved so exactly (not merely dropped)
    r = ball_brute_force(([[1, 0], [0, 1], [1, 1]], [0, 0, -e], [1.0, 2.0, 3.0], [0.0, 0.0], 0), 1)
    assert (r.cells, r.unresolved, r.certified_empty, r.rejected) == (7, 0, 1, 0)
    tri = (1, 1, 0) if e > 0 else (0, 0, 1)
    assert tri in r.patterns
    x = r.witnesses[tri]
    assert abs(x[0]) < abs(Fraction(e)) and abs(x[1]) < abs(Fraction(e))


def test_ball_witnesses_are_exact_and_general_position_count():
    rng = np.random.default_rng(3)
    m = 6
    W = rng.standard_normal((m, 2))
    b = rng.standard_normal(m)
    R = 1000  # all pairwise intersections inside: 1 + m + C(m,2) cells
    r = ball_brute_force((W, b, rng.standard_normal(m), rng.standard_normal(2), 0.0), R)
    assert r.cells == 1 + m + m * (m - 1) // 2 and r.unresolved == 0
    Wq = [[Fraction(x) for x in row] for row in W]
    bq = [Fraction(x) for x in b]
    for pat, x in r.witnesses.items():
        assert sum(t * t for t in x) < R * R
        for k in range(m):
            z = sum(wi * xi for wi, xi in zip(Wq[k], x, strict=False)) + bq[k]
            assert (z > 0) == bool(pat[k]) and z != 0


def test_ball_one_dimensional_against_interval_enumeration():
    rng = np.random.default_rng(7)
    for _ in range(5):
        m = 6
        W = rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 3.0], size=(m, 1))
        b = np.round(rng.uniform(-1.5, 1.5, m), 3)
        a, v, R = rng.standard_normal(m), rng.standard_normal(1), Fraction(1)
        r = ball_brute_force((W, b, a, v, 0.0), R)
        ts = {-Fraction(bk) / Fraction(wk[0]) for wk, bk in zip(W, b, strict=False)}
        t = sorted(x for x in ts if abs(x) < R)
        pts = [-R] + t + [R]
        mids = [(p + q) / 2 for p, q in zip(pts, pts[1:], strict=False)]
        best = Fraction(-1)
        for x in mids:
            g = Fraction(v[0]) + sum(
                Fraction(ak) * Fraction(wk[0]) for wk, bk, ak in zip(W, b, a, strict=False)
                if Fraction(wk[0]) * x + Fraction(bk) > 0
            )
            best = max(best, g * g)
        assert r.cells == len(mids) and r.unresolved == 0
        assert r.value2 == best


def test_ball_random_sampling_is_below_and_patterns_are_accepted():
    rng = np.random.default_rng(11)
    d, m = 3, 7
    W, b = rng.standard_normal((m, d)), 0.6 * rng.standard_normal(m)
    a, v = rng.standard_normal(m), rng.standard_normal(d)
    r = ball_brute_force((W, b, a, v, 0.0), 1.0)
    assert r.unresolved == 0
    X = rng.standard_normal((40000, d))
    X *= (rng.uniform(0, 1, 40000) ** (1 / d) / np.linalg.norm(X, axis=1))[:, None]
    P = (X @ W.T + b > 0).astype(int)
    G = v + (P * a) @ W
    top = float(np.max(np.einsum("ij,ij->i", G, G)))
    assert top <= float(r.value2) * (1 + 1e-12)
    # and attained: the samples visit 40 of the 41 cells, the steepest among them (else an oracle that
    # overestimates, or invents a cell, would pass)
    assert top >= float(r.value2) * (1 - 1e-9)
    assert {tuple(p) for p in P} <= set(r.patterns)


def test_ball_rejects_too_many_units():
    with pytest.raises(ValueError, match="max_units"):
        ball_brute_force((np.ones((13, 2)), np.zeros(13), np.ones(13), np.zeros(2), 0.0), 1.0)


# ============================================================================ sphere probes
def test_probe_width_2n_sqrt7():
    s = 0.25
    X = np.vstack([np.eye(3), -np.eye(3)])  # pairwise x_i·x_j ≤ 0 ≤ 2(1−s)²−1: disjoint caps
    y = np.array([1, -1, 1, 1, -1, -1], dtype=float)
    W = np.vstack([X, X])
    b = np.concatenate([np.full(6, -(1 - s)), np.full(6, -1.0)])
    a = np.concatenate([y / s, -y / s])
    net = (W, b, a, np.zeros(3), 0.0)
    assert np.allclose(_f(net, X), y)  # interpolates
    p = sphere_probe(net, per_circle=1000)
    assert p.value <= math.sqrt(7) + 1e-12
    assert math.sqrt(7) - p.value < 1e-6 * math.sqrt(7)


@pytest.mark.parametrize(
    "w, b, a, v, want",
    [
        ([0.0, 2.0, 1.0], 0.5, 1.5, [0, 0, 0], 1.5 * math.sqrt(5)),  # t < 0: cap holds a great circle
        ([0.0, 2.0, 1.0], -1.0, 1.5, [0, 0, 0], 1.5 * math.sqrt(5) * math.sqrt(1 - 1 / 5)),  # t = 1/√5
        ([1.0, 0, 0], 0.0, -2.0, [0, 0.5, 0.5], math.sqrt(4 + 0.5)),  # v ⊥ w, t = 0
    ],
)
def test_probe_single_unit_closed_form(w, b, a, v, want):
    net = ([w], [b], [a], v, 0.0)
    p = sphere_probe(net, per_circle=800)
    assert p.value <= want * (1 + 1e-12)
    assert want - p.value < 1e-6 * want
    assert abs(np.linalg.norm(p.point) - 1) < 1e-12
    s = sphere_sample(net, 3, n=50000)
    assert s.value <= want * (1 + 1e-12)
    assert want - s.value < 1e-4 * want  # the sample comes close too (5e-6 at worst here)


# ============================================================================ single pole
def test_single_pole_repro_exact():
    r = single_pole_lipschitz(REPRO_Q)
    assert sp.simplify(r.lipschitz2 - REPRO_LIP2) == 0
    assert r.argmax_s == R_(2, 5) and r.interval == 2
    assert r.B == (R_(-4, 5), R_(-51, 50), R_(-107, 100))
    assert r.value == pytest.approx(1.0526711987205497, rel=1e-15)
    rf = single_pole_lipschitz(REPRO)  # floats: exact binary rationals, same constant to ~1e-16
    assert abs(rf.value - r.value) < 1e-14
    # independent lower bounds: probe and a geodesic difference quotient near the argmax
    p = sphere_probe(REPRO)
    assert p.value <= rf.value + 1e-12 and rf.value - p.value < 1e-8
    x = np.array([0.4001, math.sqrt(1 - 0.4001**2), 0.0])
    e = np.array([-x[1], x[0], 0.0])  # tangent along the great circle through e1, e2
    h = 1e-6
    X2 = np.array([math.cos(h) * x + math.sin(h) * e, math.cos(h) * x - math.sin(h) * e])
    f2 = _f(REPRO, X2)
    q = abs(f2[0] - f2[1]) / (2 * h)
    assert 1.0526 < q <= rf.value + 1e-9


def _tangential_at(net, x):
    W, b, a, v, _ = (np.asarray(t, dtype=float) for t in net)
    g = v + ((W @ x + b > 0) * a) @ W
    return math.sqrt(max(g @ g - (g @ x) ** 2, 0.0))


def _attaining_point(r, v, d, side_sign, eps=1e-9):
    """A float point on S^{d-1} near the level s* realising the sup (on the interval's side)."""
    u0 = np.array([float(t) for t in r.u0])
    s = float(r.argmax_s) + side_sign * eps
    vp = np.asarray(v, dtype=float) - (np.asarray(v, dtype=float) @ u0) * u0
    p = np.linalg.norm(vp)
    B = float(r.B[r.interval])
    rad = math.sqrt(1 - s * s)
    e = np.linalg.svd(np.vstack([u0, vp if p > 0 else np.zeros(d)]))[2][-1]  # ⊥ u0, v_⊥
    if p > 0:
        c = min(1.0, max(-1.0, -B * s / (rad * p)))
        y = c * vp / p + math.sqrt(1 - c * c) * e
    else:
        y = e
    return s * u0 + rad * y


@pytest.mark.parametrize("seed", range(6))
def test_single_pole_random_against_probes(seed):
    rng = np.random.default_rng(100 + seed)
    d = 3 if seed < 4 else 5
    w0 = rng.standard_normal(d)
    m = int(rng.integers(1, 6))
    lam = rng.choice([-4.0, -2.0, -1.0, -0.5, 0.5, 1.0, 2.0, 4.0], size=m)  # exact multiples of w0
    W = lam[:, None] * w0
    b = rng.uniform(-1.3, 1.3, m) * np.linalg.norm(W, axis=1)
    a = 1.5 * rng.standard_normal(m)
    v = rng.standard_normal(d) * rng.choice([0.0, 0.3, 1.0])
    net = (W, b, a, v, 0.3)
    r = single_pole_lipschitz(net)
    if d == 3:
        p = sphere_probe(net, per_circle=1000)
        assert p.value <= r.value * (1 + 1e-12) + 1e-15
        assert r.value - p.value <= 1e-6 * max(r.value, 1e-300)
    s = sphere_sample(net, d, n=40000, seed=seed)
    assert s.value <= r.value * (1 + 1e-12) + 1e-15
    # the sup is approached at a genuine point next to the argmax level, on the winning interval's side
    t = [float(x) for x in r.thresholds]
    lo = t[r.interval - 1] if r.interval > 0 else -1.0
    hi = t[r.interval] if r.interval < len(t) else 1.0
    s_star = float(r.argmax_s)
    side = 0.0 if lo < s_star < hi else (1.0 if abs(s_star - lo) <= abs(s_star - hi) else -1.0)
    x = _attaining_point(r, v, d, side)
    assert _tangential_at(net, x) == pytest.approx(r.value, rel=1e-6, abs=1e-12)


def test_single_pole_hand_cases():
    v = [R_(3, 10), R_(-6, 5), R_(2, 5)]
    # no units at all, and only units that are affine/zero on the sphere
    assert single_pole_lipschitz((np.zeros((0, 3)), [], [], v, 0.0)).value == pytest.approx(1.3, rel=1e-15)
    assert single_pole_lipschitz(([[0, 0, 2]], [-5], [0.7], v, 0)).value == pytest.approx(1.3, rel=1e-15)
    r = single_pole_lipschitz(([[0, 0, 2]], [5], [R_(7, 10)], v, 0))  # always active: v + 1.4 e3
    assert sp.simplify(r.lipschitz2 - (R_(3, 10) ** 2 + R_(6, 5) ** 2 + (R_(2, 5) + R_(7, 5)) ** 2)) == 0
    # a single threshold, v = 0: |α| if t < 0, |α|√(1−t²) if t ≥ 0  (α = a‖w‖)
    r = single_pole_lipschitz(([[0, 3, 4]], [1], [R_(2)], [0, 0, 0], 0))  # t = −1/5
    assert r.lipschitz2 == 100
    r = single_pole_lipschitz(([[0, 3, 4]], [-3], [R_(2)], [0, 0, 0], 0))  # t = 3/5
    assert r.lipschitz2 == 100 * R_(16, 25)
    # orientation: a ReLU(−z) = a ReLU(z) − a z
    a = R_(9, 10)
    r1 = single_pole_lipschitz(([[-2, 0, 0]], [R_(3, 5)], [a], v, 0))
    r2 = single_pole_lipschitz(([[2, 0, 0]], [R_(-3, 5)], [a], [v[0] - 2 * a, v[1], v[2]], 0))
    assert sp.simplify(r1.lipschitz2 - r2.lipschitz2) == 0
    # duplicates merge; a cancelled threshold disappears
    r = single_pole_lipschitz(([[1, 1, 0], [2, 2, 0]], [0.5, 1.0], [1.0, -0.5], v, 0))
    assert r.thresholds == () and sp.simplify(r.lipschitz2 - R_(169, 100)) == 0


def test_single_pole_errors():
    with pytest.raises(ValueError, match="not a single-pole"):
        single_pole_lipschitz(([[1, 0, 0], [1, 1e-30, 0]], [0, 0], [1, 1], [0, 0, 0], 0))
    with pytest.raises(ValueError, match="d >= 3"):
        single_pole_lipschitz(([[1, 0]], [0], [1], [0, 0], 0))
    with pytest.raises(ValueError, match="finite"):
        single_pole_lipschitz(([[1, 0, 0]], [float("nan")], [1], [0, 0, 0], 0))
    with pytest.raises(ValueError, match="finite"):
        single_pole_lipschitz(([[1, 0, 0]], [0], [float("inf")], [0, 0, 0], 0))
    with pytest.raises(ValueError, match="length"):
        single_pole_lipschitz(([[1, 0, 0]], [0], [1], [0, 0], 0))
    with pytest.raises(ValueError, match="rows"):
        single_pole_lipschitz(([[1, 0, 0]], [0, 1], [1], [0, 0, 0], 0))
    with pytest.raises(ValueError, match="rational"):
        single_pole_lipschitz(([[1, 0, 0]], [sp.sqrt(2) / 2], [1], [0, 0, 0], 0))


def test_all_combinations_small_single_pole_match_probe():
    """Every subset of three fixed thresholds on one pole, both orientations: exact vs probe."""
    u = np.array([2.0, -1.0, 2.0])
    base = [(1.0, 0.9, 1.2), (-2.0, 0.2, -0.8), (0.5, -0.25, 2.5)]  # (λ, b, a)
    for k in (1, 2, 3):
        for sub in combinations(base, k):
            W = np.array([lam * u for lam, _, _ in sub])
            net = (W, [bb for _, bb, _ in sub], [aa for _, _, aa in sub], [0.1, 0.7, -0.2], 0.0)
            r = single_pole_lipschitz(net)
            p = sphere_probe(net, per_circle=600, n_random=5000)
            assert p.value <= r.value * (1 + 1e-12) and r.value - p.value < 1e-6 * r.value
