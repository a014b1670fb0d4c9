"""numerics.flat.weighted_l1 (the p = 1 flattest-interpolator LP) against solvers it shares no code with.

Oracles: scipy's HiGHS on the split LP ``min c·x, [Φ, −Φ]x = y, x ≥ 0``; brute-force enumeration of
every basic solution for tiny problems; weak duality checked on the returned ν itself.
"""

import itertools

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from numerics import flat
from numerics.flat.weighted_l1 import weighted_l1_min


def highs(Phi, y, w):
    res = linprog(np.concatenate([w, w]), A_eq=np.hstack([Phi, -Phi]), b_eq=y, bounds=(0, None), method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0, res.message
    return res.fun


def relu_problem(n, m, d, seed):
    rng = np.random.default_rng([7, n, m, d, seed])
    X, Th = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    y = np.maximum(X[:, 0], 0) + 0.1 * rng.standard_normal(n)
    inv = flat.invariant_form(Th, X, "relu")
    live = inv.omega > 0
    return inv.Phibar[:, live], y, inv.omega[live]


def certified_lower(Phi, y, w, nu):
    return float(flat.certify_nu_p1(nu, Phi, w) @ y)


def assert_optimal(res, Phi, y, w, ref, rel=1e-9):
    assert res.primal_residual <= 1e-9 * (1 + np.max(np.abs(y)))
    assert np.max(np.abs(Phi @ res.b - y)) <= 1e-9 * (1 + np.max(np.abs(y)))
    assert abs(res.value - ref) <= rel * abs(ref), (res.value, ref)
    lower = certified_lower(Phi, y, w, res.nu)
    assert lower <= ref * (1 + 1e-12) + 1e-14  # weak duality for the scaled ν
    assert ref - lower <= rel * abs(ref), (lower, ref)


@pytest.mark.parametrize(("n", "m", "d"), [(4, 9, 3), (10, 40, 3), (30, 60, 5), (50, 500, 8), (120, 120, 10)])
@pytest.mark.parametrize("seed", range(3))
def test_matches_highs_on_relu_features(n, m, d, seed):
    k = seed
    Phi, y, w = relu_problem(n, m, d, k)
    while np.linalg.matrix_rank(Phi) < n:  # ReLU features of a small draw can be rank-deficient: redraw
        k += 100
        Phi, y, w = relu_problem(n, m, d, k)
    res = weighted_l1_min(Phi, y, w)
    assert_optimal(res, Phi, y, w, highs(Phi, y, w))
    assert res.optimal
    assert np.count_nonzero(res.b) <= n  # a vertex


def test_brute_force_vertices():
    """Every basic solution of a 3×7 problem, by enumeration: the LP optimum is the best of them."""
    rng = np.random.default_rng(3)
    Phi, y, w = rng.standard_normal((3, 7)), rng.standard_normal(3), rng.uniform(0.5, 2, 7)
    best = min(float(w[list(S)] @ np.abs(np.linalg.solve(Phi[:, list(S)], y)))
               for S in itertools.combinations(range(7), 3))
    res = weighted_l1_min(Phi, y, w)
    assert res.basis and res.optimal
    assert abs(res.value - best) <= 1e-12 * best


def test_degenerate_sparse_optimum():
    rng = np.random.default_rng(0)
    Phi = rng.standard_normal((20, 60))
    y = Phi[:, :3] @ np.array([1.0, -2.0, 0.5])
    res = weighted_l1_min(Phi, y, np.ones(60))
    assert res.optimal
    assert np.flatnonzero(res.b).tolist() == [0, 1, 2]
    assert abs(res.value - 3.5) <= 1e-12


def test_square_and_zero_cases():
    rng = np.random.default_rng(1)
    Phi, y, w = rng.standard_normal((30, 30)), rng.standard_normal(30), rng.uniform(0.5, 2, 30)
    res = weighted_l1_min(Phi, y, w)  # the feasible set is one point
    b = np.linalg.solve(Phi, y)
    assert abs(res.value - float(w @ np.abs(b))) <= 1e-10 * res.value
    zero = weighted_l1_min(Phi, np.zeros(30), w)
    assert zero.value == 0 and not np.any(zero.b) and zero.optimal


def test_scale_equivariance():
    """min Σ (s w)|b| s.t. Φb = t y has value s·t·v with the same support."""
    Phi, y, w = relu_problem(40, 200, 6, 0)
    r1 = weighted_l1_min(Phi, y, w)
    r2 = weighted_l1_min(Phi, 1e6 * y, 1e-4 * w)
    assert abs(r2.value - 1e2 * r1.value) <= 1e-9 * 1e2 * r1.value
    assert set(np.flatnonzero(r1.b)) == set(np.flatnonzero(r2.b))


@settings(max_examples=40, deadline=None, database=None)
@given(n=st.integers(1, 12), extra=st.integers(0, 30), seed=st.integers(0, 2**32 - 1),
       wscale=st.floats(-3, 3), yscale=st.floats(-3, 3))
def test_property_equals_highs(n, extra, seed, wscale, yscale):
    rng = np.random.default_rng(seed)
    m = n + extra
    Phi = rng.standard_normal((n, m))
    y = rng.standard_normal(n) * 10.0**yscale
    w = rng.uniform(0.1, 3.0, m) * 10.0**wscale
    res = weighted_l1_min(Phi, y, w)
    assert_optimal(res, Phi, y, w, highs(Phi, y, w), rel=1e-8)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((np.ones(3), np.ones(3), np.ones(3)), "2-d"),
        ((np.ones((3, 5)), np.ones(4), np.ones(5)), "y: expected shape"),
        ((np.ones((3, 5)), np.ones(3), np.ones(4)), "w: expected shape"),
        ((np.full((3, 5), np.nan), np.ones(3), np.ones(5)), "NaN"),
        ((np.ones((3, 5)), np.ones(3), np.zeros(5)), "weights must be > 0"),
        ((np.ones((3, 2)), np.ones(3), np.ones(2)), "m = 2 < n = 3"),
        ((np.ones((3, 5)), np.array([1.0, 2.0, 3.0]), np.ones(5)), "no solution"),
        ((np.zeros((3, 5)), np.array([1.0, 2.0, 3.0]), np.ones(5)), "rank < n"),
    ],
)
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        weighted_l1_min(*args)


def test_flattest_methods_agree():
    rng = np.random.default_rng(5)
    X, Th = rng.standard_normal((25, 4)), rng.standard_normal((150, 4))
    y = np.abs(X[:, 1])
    for act in ("relu", "leaky_relu"):
        a = flat.flattest_outer_weights(Th, X, y, act, method="ipm")
        b = flat.flattest_outer_weights(Th, X, y, act, method="highs")
        assert "interior point" in a.solver and "HiGHS" in b.solver
        assert abs(a.value - b.value) <= 1e-9 * b.value
        assert a.rel_gap <= 1e-9 and a.dual_value <= b.value * (1 + 1e-12)
    with pytest.raises(ValueError, match="method"):
        flat.flattest_outer_weights(Th, X, y, "relu", method="simplex")
    with pytest.raises(ValueError, match="is for p > 1"):
        flat.flattest_outer_weights(Th, X, y, "relu", method="clarabel")
    with pytest.raises(ValueError, match="is for p = 1"):
        flat.flattest_outer_weights(Th, X, y, "quadratic", method="highs")


@pytest.mark.parametrize("act", ["quadratic", "relu_power:2", "relu_power:3", "abs_power:1.5"])
def test_power_dual_newton_matches_clarabel(act):
    """p > 1: the dual Newton solve agrees with the cvxpy + Clarabel power-cone program, and its ν certifies."""
    rng = np.random.default_rng(11)
    n = 12 if act == "quadratic" else 30  # quadratic features span d(d+1)/2 = 15 dimensions
    X, Th = rng.standard_normal((n, 5)), rng.standard_normal((200, 5))
    y = np.tanh(X[:, 0]) + 0.1 * rng.standard_normal(n)
    res = flat.flattest_outer_weights(Th, X, y, act)
    assert res.solver.startswith("dual Newton") and res.p > 1
    inv = flat.invariant_form(Th, X, act)
    live = inv.omega > 0
    ref = flat.flattest_outer_weights(Th, X, y, act, method="clarabel")
    assert "clarabel" in ref.solver
    ref = float(inv.omega[live] @ np.abs(ref.b[live]) ** res.p)
    assert abs(res.value - ref) <= 1e-9 * ref
    assert res.dual_value <= ref * (1 + 1e-12) and res.rel_gap <= 1e-10
    assert res.interpolation_residual <= 1e-10


# ---------------------------------------------------------------------------------------------------
# Regressions from a review: certificates under ill-conditioning, badly scaled data.


def _exact_upper(Phi, y, om, p, b, dps=60):
    """Σ ω|b'|^p at `dps` digits for b' = b plus the exact least-norm correction (an exact interpolator)."""
    with mpmath.workdps(dps):
        P, Y, B = mpmath.matrix(Phi.tolist()), mpmath.matrix(y.tolist()), mpmath.matrix(b.tolist())
        B2 = B + P.T * mpmath.lu_solve(P * P.T, Y - P * B)
        return mpmath.fsum(mpmath.mpf(om[j]) * abs(B2[j]) ** mpmath.mpf(p) for j in range(Phi.shape[1]))


@pytest.mark.parametrize("act", ["relu", "quadratic", "relu_power:1.5"])
@pytest.mark.parametrize("gap", [1e-4, 1e-6])
def test_certificate_is_a_lower_bound_for_near_duplicate_samples(act, gap):
    """Two samples `gap` apart make Φ̄ ill-conditioned and Φ̄ᵀν cancel; the float64 certificate must
    still be ≤ the value of an exact (60-digit) interpolator, and finite."""
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((8, 4))
        X[1] = X[0] + gap * rng.standard_normal(4)
        Th, y = rng.standard_normal((30, 4)), rng.standard_normal(8)
        res = flat.flattest_outer_weights(Th, X, y, act)
        inv = flat.invariant_form(Th, X, act)
        live = inv.omega > 0
        upper = _exact_upper(inv.Phibar[:, live], y, inv.omega[live], res.p, res.b[live])
        assert np.isfinite(res.dual_value), (seed, res.solver)
        assert res.dual_value <= upper, (seed, res.dual_value, upper)


def test_weights_spanning_many_decades():
    """w over 12 decades: the answer must be optimal relative to the (tiny) optimum, not to max(w)."""
    rng = np.random.default_rng(537)
    n, m = 3, 9
    Phi, y, w = rng.standard_normal((n, m)), rng.standard_normal(n), 10.0 ** rng.uniform(-6, 6, m)
    ref = min(float(w[list(S)] @ np.abs(np.linalg.solve(Phi[:, list(S)], y)))
              for S in itertools.combinations(range(m), n))
    b, nu, _ = flat.solve_p1(Phi, y, w)
    assert abs(float(w @ np.abs(b)) - ref) <= 1e-9 * ref
    assert ref - flat.dual_objective(nu, Phi, y, w, 1) <= 1e-9 * ref


@pytest.mark.parametrize("scale", [1e-10, 1e10])
def test_power_newton_is_scale_free(scale):
    rng = np.random.default_rng(4)
    X, Th = rng.standard_normal((12, 5)), rng.standard_normal((80, 5))
    y = scale * np.tanh(X[:, 0])
    res = flat.flattest_outer_weights(Th, X, y, "quadratic")
    assert res.solver.startswith("dual Newton") and res.rel_gap <= 1e-10


def test_complementarity_that_underflows_to_zero_stops_instead_of_dividing_by_it():
    """Found by Hypothesis (the certificate property's degenerate strategy): directions with entries −5.9e-79 make
    every x_j z_j underflow, μ = 0 exactly, and the Mehrotra step divided by it. The solver now leaves the interior
    loop there; the crossover still returns a certified optimum (checked against HiGHS)."""
    from numerics import flat

    t = -5.90242406e-79
    Theta = np.array([[0, 0, t], [-1, t, t], [1, t, t], [t, t, t], [t, t, t]])
    X = np.array([[0.0, -1, -1], [-1, 0, -1], [-1, -1, -1]])
    y = np.maximum(X @ Theta.T, 0).sum(axis=1)   # the case's interpolator: every unit with outer weight 1
    r = flat.flattest_outer_weights(Theta, X, y, "relu")
    ref = flat.flattest_outer_weights(Theta, X, y, "relu", method="highs")
    assert r.dual_value <= r.value and r.rel_gap < 1e-8
    assert r.value == pytest.approx(ref.value, rel=1e-9)
