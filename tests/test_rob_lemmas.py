"""The SPEC §4 lemma falsifiers have teeth: a bug planted in each bound's constant (or in an evaluator) is caught
by the claim's F property with its DEFAULT budget, and the real statements give no counterexample.

Why the oracles are independent: every confirmation is exact and recomputes the judged quantity from its
definition, not through :mod:`numerics.rob.lemmas`. yᵀPy and rank [X 1] come from SymPy's exact pseudo-inverse
and rank (the evaluator uses its own rational Gram–Schmidt, or float64 SVD in the screen); the fitting
functional, the count and clip are summed in Fractions inside the property; the forced-depth quantities are
rational dot products of exactly unit vectors. A plant that only changes the float64 screen cannot pass the
exact confirmation, and a plant in the statement's constant is judged against those exact references.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from checks.rob.supplement import affine_sup, fit_identity, forced_depth
from checks.runners.falsify import falsify
from numerics import rob


@pytest.mark.parametrize("prop", affine_sup.PROPERTIES + fit_identity.PROPERTIES + forced_depth.PROPERTIES,
                         ids=lambda p: p.name)
def test_without_a_plant_nothing_is_found(prop):
    assert not falsify(prop).found


def _no_intercept(X, y):
    """yᵀPy with P the projection onto col X only (the column of ones forgotten)."""
    if isinstance(X, list):  # exact rationals
        import sympy as sp

        A = sp.Matrix([[sp.Rational(v.numerator, v.denominator) for v in row] for row in X])
        val = (sp.Matrix(y).T * A * A.pinv() * sp.Matrix(y))[0]
        return Fraction(int(val.p), int(val.q))
    U, s, _ = np.linalg.svd(np.asarray(X, float), full_matrices=False)
    U = U[:, s > 1e-12 * max(s.max(), 1e-300)]
    c = U.T @ np.asarray(y, float)
    return float(c @ c)


PLANTS = {
    "affine: 1/4 -> 1/2": affine_sup.affine_property("attained", quarter=Fraction(1, 2)),
    "affine: projection without the intercept": affine_sup.affine_property("upper", value=_no_intercept),
    "affine: rank off by one": affine_sup.affine_property("expectation", rank=lambda X: rob.affine_rank(X) - 1),
    "fit: eps n/2 -> eps n": fit_identity.fit_property("functional", half=Fraction(1)),
    "fit: clip∘f, eps n/2 -> eps n": fit_identity.fit_property("clipped", half=Fraction(1)),
    "fit: count eps n/2 -> eps n": fit_identity.fit_property("count", coef=Fraction(1)),
    "depth: K(1+(K-1)nu) -> K(1+(K-2)nu)": forced_depth.depth_property("upper", offset=2),
    "depth: K sigma -> (K+1) sigma": forced_depth.depth_property("lower", extra=1),
    "depth: (1-nu) -> (1-2nu)": forced_depth.depth_property("multiplicity", nu_coef=2),
}


@pytest.mark.parametrize("name", list(PLANTS))
def test_planted_bug_is_caught(name):
    res = falsify(PLANTS[name])
    assert res.found, name
    assert res.counterexample_margin > 0


def test_evaluators_exact_and_float_agree():
    F = Fraction
    X = [[F(1), F(2)], [F(1), F(2)], [F(0), F(1)], [F(-1, 3), F(5)]]
    y = [1, -1, 1, 1]
    Xf = np.asarray(X, float)
    assert abs(float(rob.projection_value(X, y)) - rob.projection_value(Xf, np.asarray(y, float))) < 1e-12
    assert rob.affine_rank(X) == rob.affine_rank(Xf) == 3
    v, c = rob.affine_maximiser(X, y)
    assert rob.affine_objective(X, y, v, c) == rob.projection_value(X, y)
    u = [F(3, 5), F(4, 5)]
    assert rob.occupancy(X, u, F(2)) == rob.occupancy(Xf, np.asarray(u, float), 2.0)
    assert float(rob.value_mass(X, u, F(1))) == pytest.approx(rob.value_mass(Xf, np.asarray(u, float), 1.0))
    op = rob.op_norm(Xf)
    assert rob.op_exceeds(X, F(op) * (1 - F(1, 10**9))) and not rob.op_exceeds(X, F(op) * (1 + F(1, 10**9)))
    assert rob.op_exceeds(X, F(op) ** 2 * (1 - F(1, 10**9)), power=2)
