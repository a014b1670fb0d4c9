"""The dense float references of numerics.ws.reference against each other and against 60 digits.

``ce_hessian_numpy`` is the falsifier's float screen for ws.bound (sympy.hessian of the per-sample loss,
lambdified to numpy). Its independent judge is torch.func's Hessian of the written-out loss; where the two differ
(saturated tails, where torch.func's float64 Hessian loses digits), the mpmath Hessian at 60 digits decides.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, seed, settings

from checks.ws.strategies import ce_nets
from numerics.ws.reference import ce_hessian_mpmath, ce_hessian_numpy, ce_hessian_torch


def _rel(A, B):
    return float(np.linalg.norm(A - B) / (np.linalg.norm(B) + 1e-300))


@settings(max_examples=150, deadline=None, database=None)
@seed(20261201)
@given(ce_nets())
def test_numpy_hessian_is_torch_func_hessian_or_closer_to_sixty_digits(case):
    A = ce_hessian_numpy(*case.args, case.activation, bias=case.bias)
    B = ce_hessian_torch(*case.args, case.activation, bias=case.bias)
    assert A.shape == B.shape and np.allclose(A, A.T, rtol=0, atol=0)
    if _rel(A, B) <= 1e-12:
        return
    R = np.array(ce_hessian_mpmath(*case.args, case.activation, bias=case.bias, dps=60).tolist(), dtype=float)
    assert _rel(A, R) <= 1e-12, (case, _rel(A, R), _rel(B, R))


def test_numpy_hessian_keeps_the_saturated_tail():
    """A saturated tanh net (z ≈ 37, σ(−z) ≈ 1e-16): ℓ″ = σ(z)σ(−z) is computed without 1 − σ(z) cancelling."""
    W = np.array([[9.0, -4.0]])
    v, b, c = np.array([4.0]), np.array([0.5]), 33.0
    X = np.array([[1.0, 0.25], [0.75, -0.5]])
    y = np.array([1.0, 1.0])
    A = ce_hessian_numpy(W, b, v, c, X, y, "tanh")
    R = np.array(ce_hessian_mpmath(W, b, v, c, X, y, "tanh", dps=60).tolist(), dtype=float)
    assert _rel(A, R) <= 1e-13
    assert np.linalg.norm(R) > 0


def test_fifty_digits_are_not_enough_for_mixed_magnitudes_and_the_escalation_says_so():
    """W = v = 2⁻¹²⁶ (a Hypothesis 'nasty' float), two samples at x = 1 with labels 0 and 1. ∂²L/∂W∂v has the term
    σ(z) − ½ ≈ z/4 ≈ 3.5e-77 beside ½ per sample: 50 and 70 digits round it away, in the closed form and in the
    reference alike, so tr H² differ by 2× there (a 'confirmed' counterexample that is rounding). The exact value
    is tr H² = 5t⁴/8 (t = 2⁻¹²⁶), which the escalated precision gives. Since revision 2 of ws.bound/moments the
    confirmation is proved (the closed form's arb ball against the dense Hessian in arb, both with their guard bits
    raised until they fix the digits), so already the first, 50-digit confirmation refutes it."""
    import mpmath

    from checks.runners.falsify import confirm_twice, escalated_dps
    from checks.ws.bound import moments_property
    from numerics.ws import ce_hessian_moments
    from numerics.ws.reference import mp_trace_moments

    t = 2.0 ** -126
    cj = {"W": [[t]], "b": None, "v": [t], "c": None, "X": [[1.0], [1.0]], "y": [0.0, 1.0], "activation": "tanh",
          "bias": False}
    prop = moments_property()
    first, second, dps = confirm_twice(prop, prop.from_json(cj), cj)
    assert dps == escalated_dps(cj) >= 200
    assert first <= 0 and second is None
    args = prop.from_json(cj).args
    with mpmath.workdps(60):  # what the fixed-precision confirmation (revision 1) compared against: off by 2×
        wrong = mp_trace_moments(ce_hessian_mpmath(*args, "tanh", bias=False, dps=60), 60)[1]
        assert abs(wrong / (mpmath.mpf(5) / 8 * mpmath.mpf(t) ** 4) - 1) > 0.1
    with mpmath.workdps(dps):
        # the chain rule by hand: z = v tanh(W) on both samples, q = σ(z)σ(−z), mean ℓ′ = σ(z) − ½
        w = v = mpmath.mpf(t)
        z = v * mpmath.tanh(w)
        q, rbar = mpmath.sigmoid(z) * mpmath.sigmoid(-z), mpmath.sigmoid(z) - mpmath.mpf(1) / 2
        s2, th = mpmath.sech(w) ** 2, mpmath.tanh(w)
        hww = q * (v * s2) ** 2 + rbar * v * (-2 * th * s2)
        hvv = q * th ** 2
        hwv = q * v * s2 * th + rbar * s2
        exact = hww ** 2 + hvv ** 2 + 2 * hwv ** 2
        assert abs(exact / (mpmath.mpf(5) / 8 * w ** 4) - 1) < 1e-60  # ≈ 5t⁴/8, not the 50-digit t⁴/4
        tr2 = mp_trace_moments(ce_hessian_mpmath(*args, "tanh", bias=False, dps=dps), dps)[1]
        closed = ce_hessian_moments(*args, "tanh", bias=False, dps=dps).trace_sq
        # the cancellation costs the 77 digits it spans: > 100 of the 252 agree
        assert abs(tr2 / exact - 1) < mpmath.mpf(10) ** -100 and abs(closed / exact - 1) < mpmath.mpf(10) ** -100


def test_a_hit_that_flips_sign_with_precision_is_counted_not_reported(tmp_path):
    """A property whose confirmation is positive at 50 digits and negative above 100: falsify must report no
    counterexample, count the candidates as precision artifacts and write no reproducer."""
    import mpmath
    from hypothesis import strategies as st

    from checks.evidence.tol import TOL
    from checks.runners.falsify import Property, falsify

    def confirm(x):
        with mpmath.workdps(TOL["confirm_dps"]):
            return 1.0 if TOL["confirm_dps"] < 100 else -1.0

    prop = Property("test/precision_flip", st.floats(1, 2), lambda x: 1.0, confirm, float, float, budget=20)
    res = falsify(prop, budget=20, seed=1, out_dir=tmp_path)
    assert not res.found and res.confirmed == 0 and res.precision_artifacts == res.candidates > 0
    assert not list(tmp_path.iterdir())


def test_the_reference_shares_no_interval_helper_with_the_closed_form():
    """numerics.ws.reference judges the closed form: it must not import the closed form's ball helper."""
    import inspect as _inspect

    import numerics.ws.reference as ref

    src = _inspect.getsource(ref)
    assert "arb_balls" not in src and "numerics.ws.moments" not in src


@pytest.mark.parametrize("act", ["tanh", "sigmoid", "softplus", "gelu"])
def test_two_independent_ball_tables_agree_to_the_saturated_tails(act):
    """The reference's unit tables (numerics.ws.reference_arb) and the closed form's (numerics.ws.arb_balls), written
    apart, enclose the same numbers: their balls intersect everywhere, out to |t| = 700 where the activations
    saturate, and both fix at least 40 digits there."""
    from flint import ctx

    from numerics.ws import arb_balls as _arb
    from numerics.ws import reference_arb as RA
    from numerics.ws.activations import get_activation

    a = get_activation(act)
    t = np.array([[-700.0, -35.5, -1e-300, 0.0, 3e-8, 1.25, 36.0, 700.0]])
    W = np.ones((1, 1))
    with ctx.workprec(300):
        P1, _, r1 = RA.unit_tables(W, None, t.T, a, 50)
        P2, _, r2 = _arb.unit_tables(W, None, t.T, a, 50)
    assert r1 and r2
    for o in range(3):
        for x, y in zip(np.asarray(P1[o]).ravel(), np.asarray(P2[o]).ravel(), strict=True):
            assert x.overlaps(y), (act, o, x, y)
            assert x.is_exact() or x == 0 or int(x.rel_accuracy_bits()) >= 130 or abs(x) < arb_tiny()


def arb_tiny():
    from flint import arb

    return arb("1e-280")
