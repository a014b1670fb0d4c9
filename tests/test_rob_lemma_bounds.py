"""The occupancy, value-mass, serving and pile-up falsifiers (SPEC §4) have teeth, and the evaluators behind them are
exact and certified.

Planted bugs: a wrong constant in a bound's coefficient (the statement's constant lives in :mod:`numerics.rob.lemmas`
and is passed to the property here) must be caught by the claim's F property with its DEFAULT budget.

Two of the plants the issue names cannot be caught by any falsifier, because the planted statements are true:
the value-mass constant 5 → 4 (the sharp constant is C* = 2τ^{5/2} ≈ 0.6006, proved by rob.value_mass's S level)
and the serving constant 6 → 5 (the sharp constant is 4, proved by :func:`proofs.rob.lemmas.serving`). The tests
below prove that they are equivalent mutants and plant instead the tightest catchable constants, just below the
sharp ones: 5 → 3/5 (< C* by 0.1 %) and 6 → 39/10 (< 4 by 2.5 %). The falsifier catches both: it reaches the
extremal configurations (data stacked at u; t near τ, or t = 0) on its own.

Why the oracles are independent: each confirmation recomputes the count or ‖r‖₁ in Fractions from the definition,
decides Op against the threshold by SymPy's Sturm counts of the Gram matrix's characteristic polynomial (beside the
evaluator's arb enclosure + exact PSD test, which must agree), decides realizable cells by the ball brute force of
:mod:`checks.rob.oracles` and ∇f by exact difference quotients of f.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks.rob.supplement import lemma_data as data
from checks.rob.supplement import occupancy, pileup, serving, value_mass
from checks.runners.falsify import falsify
from numerics import rob
from proofs.rob import lemmas

F = Fraction


def _scaled(c):
    """κ = c·(the claim's constant-free coefficient) for exact and float input."""
    return lambda t: (F(c) if isinstance(t, F) else float(c)) / t ** 2


PLANTS = {
    "occupancy: Op/t² -> (99/100) Op/t²": occupancy.occupancy_property(coefficient=_scaled(F(99, 100))),
    "value mass: (1-t)Op/t² -> (1-t)Op/2": value_mass.l1_property(coefficients=lambda t: (2, 1 / t, (1 - t) / 2)),
    "value mass: 5 L Op/t -> (3/5) L Op/t (just below C*)": value_mass.rigid_property(
        coefficient=lambda L, t: F(3, 5) * L / t if isinstance(L, F) else 0.6 * L / t),
    "serving: 6 Op L²/h² -> (39/10) Op L²/h² (just below 4)": serving.serving_property(
        "rigid", coefficient=lambda L, h: F(39, 10) * L ** 2 / h ** 2 if isinstance(L, F) else 3.9 * L ** 2 / h ** 2),
    "serving: (t + h/|α|) -> (t + 2h/|α|)": serving.serving_property(
        "capacity", coefficient=lambda t, h, a: 1 / (t + 2 * h / abs(a)) ** 2),
    "pile-up: 2 Lip -> (19/10) Lip": pileup.cloud_property(factor=F(19, 10)),
}


@pytest.mark.parametrize("name", list(PLANTS))
def test_planted_bug_is_caught(name):
    res = falsify(PLANTS[name])
    assert res.found, name
    assert res.counterexample_margin > 0


def test_the_issues_plants_5_to_4_and_6_to_5_are_true_statements():
    """Equivalent mutants: the planted constants are still above the sharp ones, proved exactly."""
    vm = lemmas.value_mass()
    assert all(v for k, v in vm.items() if not k.startswith("_"))
    assert 0.6005 < float(vm["_sharp_constant"]) < 0.6006 + 1e-4 < 4  # C* = 2τ^{5/2} ≈ 0.600566
    sv = lemmas.serving()
    assert all(v for k, v in sv.items() if not k.startswith("_")) and sv["_sharp_constant"] == 4 < 5


def test_sharp_constants_are_attained_exactly():
    """The extremal configurations, computed from the definitions: data stacked at u reach C* (value mass) and 4
    (serving) in the limit, and orthonormal points with the aimed sum make the occupancy bound an equality."""
    tau = (5 ** 0.5 - 1) / 2
    n = 7
    X = [[F(1), F(0), F(0)]] * n
    u = [F(1), F(0), F(0)]
    assert rob.op_compare(X, n) == 0  # Op = n exactly
    for t, expect in ((F(5, 8), 0.6004806), (F(3, 5), 0.6)):
        q = rob.value_mass(X, u, t)
        ratio = 2 * float(t) * float(q) / ((1 - float(t) ** 2) ** 0.5 * n)  # |α| at the rigidity bound, L = 1
        assert abs(ratio - expect) < 1e-6 and ratio < 2 * tau ** 2.5
    assert rob.served(X, [1] * n, u, 0, 2, 2) == n  # t = 0, α = 2L, h = 2L: n ≤ κ·Op needs κ ≥ 1/n·n = 4L²/h²
    E4 = [[F(int(i == j)) for j in range(4)] for i in range(4)]
    half = [F(1, 2)] * 4
    assert rob.occupancy(E4, half, F(1, 2)) == 4 and rob.op_compare(E4, 4 * F(1, 4)) == 0  # N t² = Op


@settings(max_examples=20, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data.unit_data(), st.sampled_from([F(0), F(1, 10**9), F(-1, 10**9), F(1, 3), F(-1, 2)]))
def test_op_compare_agrees_with_sympy_sturm_counts(case, shift):
    """sign(Op − c) from the evaluator (enclosure + exact PSD) equals SymPy's, at c = Op-ish ± tiny shifts,
    including exact equality cases (stacked points: Op = n is rational)."""
    X = case["X"]
    lo, hi = rob.op_enclosure(X)
    assert lo <= hi and float(hi - lo) <= 1e-30 * (1 + float(hi))
    op_f = rob.op_norm(np.asarray(data.fl(X), float))
    assert abs(op_f - float(hi)) <= 1e-12 * (1 + op_f)
    for c in (F(op_f) + shift, F(round(op_f)) + shift, F(len(X)) + shift):
        assert rob.op_compare(X, c) == data.sympy_op_sign(X, c)


def test_evaluators_exact_float_and_definition_agree():
    X = [[F(3, 5), F(4, 5), F(0)], [F(1), F(0), F(0)], [F(1), F(0), F(0)], [F(0), F(0), F(1)]]
    Xf = np.asarray(X, float)
    u, t, y = [F(1), F(0), F(0)], F(1, 2), [1, -1, 1, 1]
    assert rob.occupancy(X, u, t) == rob.occupancy(Xf, np.asarray(u, float), 0.5) == 3
    assert rob.value_mass(X, u, t) == F(1, 10) + F(1, 2) + F(1, 2)
    assert rob.served(X, y, u, t, F(2), F(1)) == 1  # only index 2: y α (1 − 1/2) = 1; index 1 has y = −1
    assert rob.served(X, y, u, t, F(-2), F(1)) == 1
    assert rob.served(Xf, np.asarray(y, float), np.asarray(u, float), 0.5, 2.0, 1.0) == 1
    W, a, v = [[F(1), F(2)], [F(0), F(-1)]], [F(3), F(1, 2)], [F(1), F(1)]
    assert rob.cell_gradient(W, a, v, (1, 0)) == [F(4), F(7)]
    assert rob.cell_gradient(W, a, v, (1, 1)) == [F(4), F(13, 2)]
    assert np.allclose(rob.cell_gradient(np.asarray(W, float), np.asarray(a, float), np.asarray(v, float), (0, 1)),
                       [1.0, 0.5])
    assert rob.occupancy_coefficient(F(1, 2)) == 4 and rob.value_mass_coefficients(F(1, 2)) == (2, 2, 2)
    assert rob.value_mass_rigid_coefficient(F(1), F(1, 2)) == 10  # the paper's constants, pinned: 5 L/t, 6 L²/h²
    assert rob.serving_rigid_coefficient(F(1), F(2)) == F(3, 2)
    assert rob.serving_coefficient(F(1, 2), F(1), F(-2)) == 1


def test_op_enclosure_is_certified_on_large_float_data():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((12, 400))
    X /= np.linalg.norm(X, axis=1)[:, None]
    lo, hi = rob.op_enclosure(X)
    op = rob.op_norm(X)
    assert lo <= F(op) * (1 + F(1, 10**12)) and hi >= F(op) * (1 - F(1, 10**12)) and float(hi - lo) < 1e-30
    assert rob.op_compare(X, hi + F(1, 10**20)) == -1 and rob.op_compare(X, lo - F(1, 10**20)) == 1


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="finite"):
        rob.op_enclosure(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="direction"):
        data.rational_unit([0.0, 0.0])


# ---------------------------------------------------------------------------------------- the two sides (SPEC §5)
def test_pins_tell_a_true_but_different_constant_from_the_statements():
    """5 → 4 and 6 → 5 are true statements no data set refutes; the F levels pin each evaluator's constant to the
    statement's instead, and these plants must break the pin (while the real evaluators keep it)."""
    assert occupancy.pin()["agree"] and value_mass.pin()["agree"] and serving.pin()["agree"]
    assert not value_mass.pin(coefficient=lambda L, t: 4 * L / t)["agree"]
    assert not value_mass.pin(coefficients=lambda t: (2, 1 / t, (1 - t) / t))["agree"]
    assert not serving.pin(rigid=lambda L, h: 5 * L ** 2 / h ** 2)["agree"]
    assert not serving.pin(coefficient=lambda t, h, a: 1 / (t + h / a) ** 2)["agree"]  # |α| dropped: α < 0 rows
    assert not occupancy.pin(coefficient=lambda t: 1 / t)["agree"]
    assert occupancy.pin(coefficient=lambda t: 1 / t)["mismatches"]  # names the arguments where they differ


def test_equality_cases_are_applicable_and_attain_the_bounds_exactly():
    """The explicit cases every run tries first are inside the hypotheses, and the occupancy's two (and the serving
    capacity's two) make the bound an exact equality: margin 0 by the exact path, not merely "holds"."""
    for prop in (*occupancy.PROPERTIES, *value_mass.PROPERTIES, *serving.PROPERTIES, *pileup.PROPERTIES):
        assert prop.examples and prop.ties > 0, prop.name
        for case in prop.examples:
            assert prop.screen(case) <= 0 and prop.confirm(case) <= 0, (prop.name, case["mode"])
    assert [occupancy.bound_margin(c, exact=True) for c in occupancy.PROPERTIES[0].examples] == [0.0, 0.0]
    assert [serving.capacity_margin(c, exact=True) for c in serving.SHARP_CASES] == [0.0, 0.0]
    # the pile-up's equality nets: ‖s_A − s_A′‖ = 2 Lip exactly (margin 0 by the exact comparison)
    assert [pileup.cloud_margin(dict(c), exact=True) for c in pileup.EQUALITY_CASES] == [0.0, 0.0]
    # the rigid serving bound at its sharp case: count·h²/(Op L²) = 4 exactly, against the stated 6
    c = serving.SHARP_CASES[0]
    assert rob.served(c["X"], c["y"], c["u"], c["t"], c["alpha"], c["h"]) * c["h"] ** 2 / (3 * c["L"] ** 2) == 4


def test_an_equality_decided_as_strict_is_caught_through_the_ties():
    """sign(Op − c) = −1 at c = Op (semidefinite taken for definite): only an exact tie tells it, and the float
    screen (slack 1e-9) calls every tie "holds"; the near-tie band sends them to the exact decision."""
    def strict(X, c):
        s = rob.op_compare(X, c)
        return -1 if s == 0 else s

    res = falsify(occupancy.occupancy_property(op_compare=strict))
    assert res.found and res.ties >= 1


def test_the_top_root_planted_as_the_bottom_one_is_caught():
    """An Op enclosure of λ_min instead of λ_max disagrees with the Sturm counts at the equality cases."""
    import numerics.rob.lemmas as L

    real = L.op_enclosure

    def bottom(X):
        Xf = np.asarray(X, float)
        lo = float(np.linalg.eigvalsh(Xf.T @ Xf)[0]) if Xf.size else 0.0
        return Fraction(lo) - Fraction(1, 10**12), Fraction(lo) + Fraction(1, 10**12)

    try:
        L.op_enclosure = rob.op_enclosure = bottom
        res = falsify(occupancy.occupancy_property())
    finally:
        L.op_enclosure = rob.op_enclosure = real
    assert res.found
