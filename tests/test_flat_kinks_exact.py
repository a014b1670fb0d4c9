"""Samples exactly on a direction's kink (θ_j·x_i = 0) in the flatness routines: σ(0) and σ′(0) must be taken there
whatever the float product rounds to (:func:`numerics.flat.trace.preactivations`).

Found by the falsifier (``certificate_property``, seed 2) once a new module's constants changed Hypothesis's pool:
θ = (1, −1) and x = (2.25, 2.25) give θ·x = 0 exactly, but the normalised θ̂ = θ/√2 gives X θ̂ᵀ = 1.1e-16 under the
FMA of BLAS, so ReLU′ = 1 there in the flattest solver's ω and 0 in Υ: the solver stated Υ* = 34.06 and a
"certified" dual 34.06 for weights whose Υ is 32.21.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pytest

from checks.flat.oracles import relu_B_exact
from numerics import flat
from numerics.flat.duality import invariant_form
from numerics.flat.trace import neuron_moments, preactivations

THETA = np.array([[1.0, 0.0], [1.0, -1.0], [0.0, 1.0], [1.0, 1.0]])
X = np.array([[0.0, 2.25], [-1.0, 2.25], [2.25, 0.0], [2.25, 2.25]])


def test_the_invariant_form_takes_the_kink_exactly_like_upsilon():
    nr = np.linalg.norm(THETA, axis=1)
    _, B = neuron_moments(THETA, X, "relu")
    Bb = neuron_moments(THETA / nr[:, None], X, "relu", Z=preactivations(X, THETA) / nr[None, :])[1]
    ref = [float(t) for t in relu_B_exact(THETA, X)]
    assert list(B) == ref and list(Bb) == ref             # σ′ is 0-homogeneous: B(θ̂) = B(θ), both exact
    inv = invariant_form(THETA, X, "relu")
    assert np.all(inv.Phibar[3, 1] == 0.0)                # x₄ on θ₂'s kink: σ(θ̂₂·x₄) = 0 exactly


def test_the_flattest_solver_states_the_upsilon_of_its_own_weights_on_a_kink():
    y = flat.network(np.ones(4), THETA, X, "relu")
    got = flat.flattest_outer_weights(THETA, X, y, "relu")
    U_case = flat.upsilon(np.ones(4), THETA, X, "relu")
    assert got.interpolation_residual < 1e-12
    assert abs(got.value - flat.upsilon(got.a, THETA, X, "relu")) <= 1e-9 * got.value
    assert got.dual_value <= U_case * (1 + 1e-12)           # weak duality: was 34.06 against Υ = 32.21


@pytest.mark.parametrize("seed", range(4))
def test_preactivations_agree_with_rationals_in_sign_and_zero(seed):
    """Directions and samples built so that many products cancel exactly (integer multiples of one vector and its
    perpendicular), others by one ulp: every sign and zero of Z equals the rational dot product's."""
    rng = np.random.default_rng(seed)
    d = 2 + seed
    base = rng.standard_normal(d)
    perp = rng.standard_normal(d)
    perp -= (perp @ base) / (base @ base) * base
    Th = np.vstack([base, perp, base / np.sqrt(3.0), rng.standard_normal((3, d))])
    Xs = np.vstack([perp * 2.25, base * 0.5, np.nextafter(perp, 1.0), rng.standard_normal((3, d))])
    Z = preactivations(Xs, Th)
    for i in range(len(Xs)):
        for j in range(len(Th)):
            z = sum((F(float(Xs[i, k])) * F(float(Th[j, k])) for k in range(d)), F(0))
            assert (Z[i, j] > 0) == (z > 0) and (Z[i, j] == 0) == (z == 0)
