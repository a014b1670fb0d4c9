"""numerics.flat.duality.full_rank_check: the Cholesky rank check decides as np.linalg.matrix_rank does, and the
flattest interpolator does not change when it replaces the SVD.

Oracles: ``np.linalg.matrix_rank`` (the SVD the check replaces) and ``scipy.linalg.svdvals`` for σ_n; the old
behaviour is the SVD path itself, forced by an infinite margin (``_RANK_MARGIN``), which makes the solvers factor
ΦΦᵀ again themselves as they did before the factor was shared.
"""

import math

import numpy as np
import pytest
import scipy.linalg as sla

from numerics import flat
from numerics.flat import duality
from numerics.flat.duality import full_rank_check


def graded(n, m, decades, seed=0):
    """An n×m matrix with singular values 10^0 … 10^−decades, log-spaced, and random singular vectors."""
    rng = np.random.default_rng([seed, n, m, decades])
    U = np.linalg.qr(rng.standard_normal((n, n)))[0]
    V = np.linalg.qr(rng.standard_normal((m, n)))[0]
    return (U * np.logspace(0, -decades, n)) @ V.T


def relu_features(n, m, d, seed):
    rng = np.random.default_rng([11, n, m, d, seed])
    X, Th = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    inv = flat.invariant_form(Th, X, "relu")
    return inv.Phibar[:, inv.omega > 0]


def deficient_cases():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((12, 40))
    dup_row = A.copy()
    dup_row[5] = dup_row[2]  # two identical samples
    zero_row = A.copy()
    zero_row[0] = 0.0
    low = rng.standard_normal((12, 7)) @ rng.standard_normal((7, 40))  # rank 7
    near = A.copy()
    near[5] = near[2] + 1e-15 * rng.standard_normal(40)  # duplicate to rounding
    X = rng.standard_normal((8, 3))
    X[4] = X[1]  # ReLU features of duplicate samples
    inv = flat.invariant_form(rng.standard_normal((30, 3)), X, "relu")
    return {"duplicate row": dup_row, "zero row": zero_row, "rank 7 product": low, "rows equal to 1e-15": near,
            "ReLU, duplicate sample": inv.Phibar, "m < n": A[:, :9], "graded to 1e-16": graded(30, 90, 16)}


CASES = {
    **{f"graded 1e-{k}": graded(40, 160, k) for k in (0, 2, 4, 5, 6, 7, 8, 10, 12, 13, 14)},
    **{f"ReLU features {n}x{m}": relu_features(n, m, d, 0) for n, m, d in [(10, 40, 3), (50, 500, 8), (200, 2000, 20)]},
    **deficient_cases(),
}


@pytest.mark.parametrize("name", list(CASES))
def test_rank_is_matrix_rank(name):
    Phi = CASES[name]
    rank, factor, how = full_rank_check(Phi)
    assert rank == np.linalg.matrix_rank(Phi), (name, how)
    if factor is not None:  # what the Cholesky path proves: the SVD's own σ_n is above the margin × its tolerance
        s = sla.svdvals(Phi)
        tol = s[0] * max(Phi.shape) * np.finfo(float).eps
        assert rank == Phi.shape[0] and s[-1] > duality._RANK_MARGIN * tol, (name, s[-1], tol)
        # and the factor is the unshifted Cholesky of Phi @ Phi.T that the solvers would have computed
        assert np.array_equal(np.triu(factor[0]), np.triu(sla.cho_factor(Phi @ Phi.T, lower=False)[0]))


def test_the_cholesky_path_is_taken_where_it_should_be_and_only_there():
    """Not vacuous: the well-conditioned cases take the Cholesky path, every deficient one the SVD."""
    chol = {k for k, P in CASES.items() if full_rank_check(P)[1] is not None}
    assert {"graded 1e-0", "graded 1e-2", "graded 1e-4"} | {k for k in CASES if k.startswith("ReLU features")} <= chol
    assert not chol & set(deficient_cases())
    # beyond cond ≈ 1e6 the Gram matrix's rounding hides σ_n², so the check must hand over to the SVD
    assert not chol & {"graded 1e-8", "graded 1e-10", "graded 1e-12", "graded 1e-13", "graded 1e-14"}


def _relu_case(n, m, d, seed):
    rng = np.random.default_rng([5, n, m, d, seed])
    X, Th = rng.standard_normal((n, d)), rng.standard_normal((m, d))
    return Th, X, np.maximum(X[:, 0], 0) + 0.1 * rng.standard_normal(n)


def _assert_same(r_new, r_old):
    # the solvers see bit-identical data (the factor is the one they computed themselves), so: identical
    assert np.array_equal(np.flatnonzero(r_new.b), np.flatnonzero(r_old.b))
    np.testing.assert_array_equal(r_new.b, r_old.b)
    np.testing.assert_array_equal(r_new.a, r_old.a)
    assert r_new.value == r_old.value and r_new.dual_value == r_old.dual_value
    assert r_new.solver == r_old.solver and r_new.extra["rank"] == r_old.extra["rank"]
    assert math.isfinite(r_new.dual_value) and 0 <= r_new.rel_gap <= 1e-8  # still certified


@pytest.mark.parametrize(("act", "method", "n", "m", "d", "seed"), [
    ("relu", "auto", 4, 9, 3, 0), ("relu", "auto", 30, 60, 5, 1), ("relu", "auto", 50, 500, 8, 2),
    ("relu", "auto", 120, 120, 10, 3), ("relu", "highs", 30, 60, 5, 1), ("relu_power:2", "auto", 20, 60, 4, 0),
    ("quadratic", "auto", 6, 20, 4, 0), ("abs_power:1.5", "auto", 10, 30, 3, 0),
])
def test_flattest_outer_weights_unchanged(monkeypatch, act, method, n, m, d, seed):
    Th, X, y = _relu_case(n, m, d, seed)
    r_new = flat.flattest_outer_weights(Th, X, y, act, method=method)
    assert r_new.extra["rank_check"].startswith("Cholesky")  # these are well-conditioned: the new path ran
    monkeypatch.setattr(duality, "_RANK_MARGIN", math.inf)  # the SVD, and the solvers factor ΦΦᵀ themselves
    r_old = flat.flattest_outer_weights(Th, X, y, act, method=method)
    assert r_old.extra["rank_check"].startswith("SVD")
    _assert_same(r_new, r_old)


@pytest.mark.parametrize("margin", [2.0, math.inf])
def test_rank_deficient_features_raise_the_same_error(monkeypatch, margin):
    monkeypatch.setattr(duality, "_RANK_MARGIN", margin)
    rng = np.random.default_rng(8)
    X = rng.standard_normal((5, 2))
    with pytest.raises(ValueError, match=r"rank 3 < n"):  # quadratic features of d = 2 span d(d+1)/2 = 3
        flat.flattest_outer_weights(rng.standard_normal((20, 2)), X, rng.standard_normal(5), "quadratic")
    X[3] = X[0]  # a duplicate sample: ReLU features of rank n − 1 (and y differs there)
    y = rng.standard_normal(5)
    with pytest.raises(ValueError, match=r"rank 4 < n"):
        flat.flattest_outer_weights(rng.standard_normal((40, 2)), X, y, "relu")


def test_primal_degenerate_optimum_unchanged(monkeypatch):
    """y in the span of 3 directions: a degenerate vertex (fewer than n nonzeros), same either way."""
    rng = np.random.default_rng(2)
    X, Th = rng.standard_normal((15, 4)), rng.standard_normal((60, 4))
    y = flat.network(np.array([1.0, -2.0, 0.5]), Th[:3], X, "relu")
    r_new = flat.flattest_outer_weights(Th, X, y, "relu")
    monkeypatch.setattr(duality, "_RANK_MARGIN", math.inf)
    r_old = flat.flattest_outer_weights(Th, X, y, "relu")
    _assert_same(r_new, r_old)
    assert np.count_nonzero(r_new.b) < 15  # degenerate indeed
