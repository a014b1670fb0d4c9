"""The flat.* falsifier has teeth: planted bugs in copies of the Υ closed form are caught within the default budget.

Oracle independence: the properties compare the per-neuron closed form under attack with the trace at an
interpolator, Σ_j (A_j + a_j² B_j), recomputed from its definition in mpmath at 50 digits (which the P and A
levels tie to ``sympy.hessian`` and ``torch.func.hessian``), and with dual values recomputed in mpmath. The
planted copies below differ from ``numerics._derived.flat.upsilon_neuron`` in exactly one place each,
as named in issue 3; a property that cannot catch a given bug is not asked to.
"""

import pytest

from checks.flat.duality import certificate_property, weak_duality_property
from checks.flat.upsilon import upsilon_attained_property, upsilon_le_trace_property
from checks.runners.falsify import falsify, replay
from numerics._derived import flat as derived


def wrong_exponent(A, B, abs_a, c, _m=derived.NP):
    """Planted bug 1: |a|^(2c/(c+2)) instead of |a|^(2c/(c+1))."""
    return derived.k_const(c, _m) * A ** (1 / (c + 1)) * B ** (c / (c + 1)) * abs_a ** (2 * c / (c + 2))


def wrong_K(A, B, abs_a, c, _m=derived.NP):
    """Planted bug 2: K_c = c + 1 (the factor c^(−c/(c+1)) dropped)."""
    return derived.upsilon_neuron(A, B, abs_a, c, _m) * (c + 1) / derived.k_const(c, _m)


def dropped_B(A, B, abs_a, c, _m=derived.NP):
    """Planted bug 3: B_j dropped (B_j^(c/(c+1)) replaced by 1)."""
    return derived.upsilon_neuron(A, 1, abs_a, c, _m)


CASES = [
    (upsilon_attained_property, wrong_exponent),
    (weak_duality_property, wrong_exponent),
    (upsilon_attained_property, wrong_K),
    (upsilon_le_trace_property, wrong_K),  # K too large: Υ exceeds the trace at λ_opt
    (upsilon_attained_property, dropped_B),
    (upsilon_le_trace_property, dropped_B),
    (certificate_property, dropped_B),
]


@pytest.mark.parametrize(("make", "bug"), CASES, ids=[f"{m.__name__}-{b.__name__}" for m, b in CASES])
def test_planted_bug_is_caught(make, bug, tmp_path):
    res = falsify(make(bug), seed=1, out_dir=tmp_path)  # default budget
    assert res.found, f"{bug.__name__} not caught: {res.metric()}"
    assert res.counterexample_margin > 0
    again = replay(res.reproducers[-1])  # rebuilt by name: the real property refutes the planted bug's case
    assert again["mpmath_margin"] <= 0, again
    assert res.reproducers and all(p.endswith(".json") for p in res.reproducers)


@pytest.mark.parametrize("make", [upsilon_le_trace_property, upsilon_attained_property, weak_duality_property])
def test_correct_evaluator_survives(make, tmp_path):
    res = falsify(make(), budget=60, seed=2, out_dir=tmp_path)
    assert not res.found, res.counterexample


# ------------------------------------------------------------------------ certificates that pass "dual ≤ primal"
def _solver(change):
    import dataclasses

    from numerics import flat

    def solve(Theta, X, y, act, **kw):
        return dataclasses.replace(flat.flattest_outer_weights(Theta, X, y, act, **kw), **change(Theta, X, y, act))
    return solve


def _halved(Theta, X, y, act):
    """A mis-scaled certificate: ν/2, still feasible (a valid lower bound), half as tight as stated."""
    from numerics import flat

    res = flat.flattest_outer_weights(Theta, X, y, act)
    inv = flat.invariant_form(Theta, X, act)
    live = inv.omega > 0
    return {"nu": res.nu / 2, "dual_value": flat.dual_objective(res.nu / 2, inv.Phibar[:, live], y,
                                                                inv.omega[live], res.p)}


CERT_BUGS = {
    "minus-infinity": lambda *a: {"dual_value": float("-inf")},  # degenerate: passes weak duality vacuously
    "halved": _halved,
    "overstated": lambda *a: {"dual_value": _real(*a).dual_value + 1e-6 * abs(_real(*a).dual_value)},
}


def _real(Theta, X, y, act):
    from numerics import flat

    return flat.flattest_outer_weights(Theta, X, y, act)


@pytest.mark.parametrize("name", sorted(CERT_BUGS))
def test_vacuous_or_loose_certificate_is_caught(name, tmp_path):
    res = falsify(certificate_property(solver_fn=_solver(CERT_BUGS[name])), seed=1, out_dir=tmp_path)
    assert res.found, f"{name} not caught: {res.metric()}"


def test_minus_infinity_dual_is_caught_by_weak_duality(tmp_path):
    """p = 1: a float dual of −∞ at a certified ν is the degenerate certificate "dual ≤ primal" cannot see."""
    from numerics import flat

    def dual(nu, Phi, y, om, p):
        return float("-inf") if p == 1 else flat.dual_objective(nu, Phi, y, om, p)

    res = falsify(weak_duality_property(dual_fn=dual), seed=1, out_dir=tmp_path)
    assert res.found


# Found by this test when the search lost its target phase (checks.runners.falsify.ENGINE_REVISION 3): two samples 7e-11
# apart make Φ̄ nearly singular; the interpolator is unique (n = m = 2), but the dual optimum ν ≈ ±1.45e7 and the
# float64 dual Newton polish stops at a ν whose dual value is 3.78 against Υ = 4.76: a stated gap of 0.98, where
# the claim's certificate is 1e-8 relative. The solver states its gap honestly; it does not reach the claim's.
_NEAR_DUPLICATE = {"act": "quadratic", "a": [0.0, 1.0], "Theta": [[0.0, 1.0], [1.0, 1.0]],
                   "X": [[7.158767607628488e-11, 1.0], [0.0, 1.0]], "lam": [1.0, 1.0], "nu": None}


def test_certificate_survives_the_real_solver_but_for_the_known_gap_shortfall(tmp_path):
    """The real solver's certificate holds, except that on nearly singular Φ̄ it may state a gap above the claim's
    1e-8 (the known defect below): a counterexample found here must be exactly that: interpolating weights, weak
    duality intact, the stated value Υ of the weights, and only the stated gap too wide."""
    from checks.flat.duality import _interpolator
    from checks.flat.strategies import FlatCase
    from numerics import flat

    res = falsify(certificate_property(), budget=40, seed=2, out_dir=tmp_path)
    if not res.found:
        return
    case = FlatCase.from_json(res.counterexample)
    got = flat.flattest_outer_weights(case.Theta, case.X, _interpolator(case), case.act)
    a2, Th2 = flat.rescale(case.a, case.Theta, case.lam, case.act)
    U = flat.upsilon(a2, Th2, case.X, case.act)
    assert got.interpolation_residual < 1e-12 and got.dual_value <= U * (1 + 1e-9) + 1e-12
    assert abs(got.value - flat.upsilon(got.a, case.Theta, case.X, case.act)) <= 1e-9 * (1 + abs(got.value))
    assert got.gap > 1e-8 * abs(got.value), res.counterexample  # the known shortfall, and nothing else


def test_the_certificate_reaches_the_claims_gap_on_near_duplicate_samples():
    """Was a known limit (xfail): on near-duplicate samples (σ_min(Φ̄) = 5e-11) the float solvers stop on Φ̄'s
    near-null line and the arb-certified dual fell 1.7e-7 short. With as many live directions as samples the
    interpolator is unique: Φ̄ is nonsingular in rationals, b* is solved exactly, and Υ* = Υ(b*) is enclosed in arb
    (the fall-back ``flat.duality/unique_exact``)."""
    from checks.flat.duality import _interpolator
    from checks.flat.strategies import FlatCase
    from numerics import flat

    case = FlatCase.from_json(_NEAR_DUPLICATE)
    res = flat.flattest_outer_weights(case.Theta, case.X, _interpolator(case), case.act)
    assert res.interpolation_residual < 1e-12  # the weights interpolate: only the certificate falls short
    assert res.gap <= 1e-8 * abs(res.value), f"stated gap {res.gap:.3g} at value {res.value:.6g}"
    assert "unique interpolator" in res.solver


def test_derivative_with_the_wrong_sign_is_caught(monkeypatch, tmp_path):
    """σ′ of the wrong sign on t < 0 is still (c−1)-homogeneous and leaves B_j = mean σ′² unchanged: only the
    comparison with the derivative of σ sees it."""
    import numpy as np

    from checks.flat.symmetry import symmetry_property
    from numerics.flat import activations as A

    def d1(self, t):
        p_, n_ = self._branches(np.asarray(t, dtype=float), self.c - 1)
        return self.c * (self.plus * p_ + self.minus * n_)

    monkeypatch.setattr(A.Activation, "d1", d1)
    assert falsify(symmetry_property(), seed=1, out_dir=tmp_path).found
