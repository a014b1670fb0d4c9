"""ws.bound/upper's proved confirmation (revision 2): Cholesky in arb balls for a refutation, a Rayleigh quotient
in the same balls for a hit, and "undecided" when neither is proved."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from flint import arb, ctx
from hypothesis import strategies as st

from checks.runners.falsify import Property, Undecided, falsify
from checks.ws.bound import bound_property
from checks.ws.strategies import NetCase
from numerics.ws.arb_balls import from_mpf, proves_positive_definite, rayleigh_lower
from numerics.ws.reference import ce_hessian_arb, ce_hessian_mpmath

EPS = arb(2) ** -100  # exact


def _exact(A):
    return [[x if isinstance(x, arb) else arb(x) for x in row] for row in A]


def test_positive_definite_is_proved_for_a_pd_matrix_and_never_for_others():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(6, 6))
    A = B @ B.T + 0.1 * np.eye(6)  # the float64 matrix, exactly
    assert proves_positive_definite(_exact(A))
    lam = np.linalg.eigvalsh(A)
    assert not proves_positive_definite(_exact(A - (lam[0] + 1e-3) * np.eye(6)))  # indefinite
    u = rng.integers(-3, 4, size=5)
    assert not proves_positive_definite(_exact(np.outer(u, u).astype(float)))  # PSD and exactly singular
    assert not proves_positive_definite([[arb("inf"), arb(5)], [arb(5), arb(1)]])  # no real matrix in the balls


def test_a_pd_matrix_near_singularity_is_proved_only_with_narrow_balls():
    """[[1, 1], [1, 1 + 2⁻¹⁰⁰]] has determinant 2⁻¹⁰⁰: proved from exact entries at 200 bits, not from entries known
    to ± 2⁻⁹⁰ (the balls then contain singular and indefinite matrices)."""
    with ctx.workprec(200):
        exact = [[arb(1), arb(1)], [arb(1), 1 + EPS]]
        assert proves_positive_definite(exact)
        wide = [[arb(1, 2.0**-90) for _ in range(2)] for _ in range(2)]
        wide[1][1] = arb(1 + EPS, 2.0**-90)
        assert not proves_positive_definite(wide)


def test_rayleigh_quotient_bounds_lambda_max_from_below():
    A = _exact(np.diag([3.0, 1.0, -2.0]))
    assert rayleigh_lower(A, [1.0, 0.0, 0.0]).contains(arb(3))
    r = rayleigh_lower(A, [1.0, 1.0, 1.0])  # (3 + 1 − 2)/3
    assert r.contains(arb(2) / 3) and r < 3


def test_the_arb_dense_hessian_contains_the_400_digit_one():
    """Independent truth: sympy's dense Hessian in mpmath at 400 digits, on the campaign's deep-cancellation case
    (GELU, six equal samples at pre-activation −26.2, balanced labels)."""
    from test_ws_arb import _DEEP

    ref = ce_hessian_mpmath(*_DEEP, "gelu", bias=False, dps=400)
    got = ce_hessian_arb(*_DEEP, "gelu", bias=False, dps=60)
    H, D = got["H"], got["dim"]
    assert D == ref.rows and got["rigorous"]
    with mpmath.workdps(400):
        fro = mpmath.sqrt(mpmath.fsum(ref[i, j] ** 2 for i in range(D) for j in range(D)))
        for i in range(D):
            for j in range(D):
                assert H[i, j].contains(from_mpf(ref[i, j]))
                assert mpmath.mpf(float(H[i, j].rad())) <= fro * mpmath.mpf(10) ** -59


def _rank_one_case():
    """Equal samples, balanced labels and v = 0: Σ r_i K_i = 0 and H = q g gᵀ has rank one, the equality case
    λ_max = λ_sup of the Wolkowicz–Styan bound."""
    W = np.array([[0.7, -1.3], [0.2, 0.5]])
    X = np.tile([[0.4, -0.9]], (4, 1))
    return NetCase(W=W, b=np.array([0.1, -0.3]), v=np.zeros(2), c=0.0, X=X, y=np.array([0.0, 1.0, 0.0, 1.0]),
                   activation="tanh", bias=True)


def test_the_rank_one_equality_case_is_refuted_with_a_proof():
    case = _rank_one_case()
    H = ce_hessian_mpmath(*case.args, "tanh", bias=True, dps=60)
    with mpmath.workdps(60):
        ev = sorted(mpmath.eigsy(H, eigvals_only=True))
        assert abs(ev[-2]) <= mpmath.mpf(10) ** -50 * abs(ev[-1])  # rank one: the bound holds with equality
    assert bound_property().confirm(case) < 0  # proved: λ_max < λ_sup + 10⁻³⁰‖H‖_F, no Undecided


def test_undecided_candidates_are_counted_and_never_refutations():
    def undecided(case):
        raise Undecided("too wide")

    prop = Property("test/undecided", st.integers(0, 100), lambda c: 1.0, undecided)
    res = falsify(prop, budget=20, seed=0)
    assert not res.found and res.candidates == res.undecided == res.calls > 0
    assert res.metric()["undecided"] == res.undecided


@pytest.mark.parametrize("seed", [0, 1])
def test_upper_revision_2_refutes_what_it_screens(seed, tmp_path):
    res = falsify(bound_property(), budget=60, seed=seed, out_dir=tmp_path)
    assert not res.found and res.undecided == 0


def test_a_50_digit_result_has_a_50_digit_lambda_sup_at_any_ambient_precision():
    """Found by revision 2's proof: ``.lambda_sup`` of a dps=50 result ran at mpmath's ambient 15 digits, 1.8e-17
    below the exact value on this D = 2 GELU net, where λ_sup = λ_max exactly (D = 2 is always an equality case)."""
    from numerics.ws import ce_hessian_moments

    case = NetCase.from_json({"W": [[5.53398590529]], "X": [[-2.0]], "activation": "gelu", "b": None,
                              "bias": False, "c": None, "v": [0.0], "y": [0.0]})
    H = ce_hessian_mpmath(*case.args, "gelu", bias=False, dps=400)
    with mpmath.workdps(400):
        lmax = max(mpmath.eigsy(H, eigvals_only=True))
    assert mpmath.mp.dps == 15
    got = ce_hessian_moments(*case.args, "gelu", bias=False, dps=50).lambda_sup
    with mpmath.workdps(400):
        assert abs(got - lmax) <= mpmath.mpf(10) ** -49 * lmax


@pytest.mark.parametrize("corner", ["generic", "saturated", "nobias"])
def test_the_arb_softmax_hessian_contains_the_mpmath_one_and_agrees_with_torch(corner):
    """Two independent references: the SymPy-derivative Hessian in mpmath at 120 digits (guard digits for the logits'
    spread) must lie in the balls, and ``torch.func.hessian`` of ``F.cross_entropy`` must agree to float64."""
    from numerics.ws.reference_softmax import softmax_hessian_arb, softmax_hessian_mpmath, softmax_hessian_torch

    rng = np.random.default_rng(["generic", "saturated", "nobias"].index(corner))
    M, N, C, n = 2, 3, 3, 4
    W, V, X = rng.normal(size=(N, M)), rng.normal(size=(C, N)), rng.normal(size=(n, M))
    y = rng.integers(0, C, n)
    bias = corner != "nobias"
    b, c = (rng.normal(size=N), rng.normal(size=C)) if bias else (None, None)
    if corner == "saturated":  # 1 − p_max ≈ e^{−40·spread}: Q and r cancel in the naive form
        V, c = 40 * V, 40 * c
    ref = softmax_hessian_arb(W, b, V, c, X, y, "gelu", bias=bias, dps=60)
    Hm = softmax_hessian_mpmath(W, b, V, c, X, y, "gelu", bias=bias, dps=120)
    Ht = softmax_hessian_torch(W, b, V, c, X, y, "gelu", bias=bias)
    D = ref["dim"]
    assert D == Hm.rows == Ht.shape[0] and ref["rigorous"]
    mid = np.array([[float(ref["H"][i, j].mid()) for j in range(D)] for i in range(D)])
    assert np.abs(mid - Ht).max() <= 1e-12 * np.abs(Ht).max()
    for i in range(D):
        for j in range(D):
            assert ref["H"][i, j].contains(from_mpf(Hm[i, j]))


# found by a review of revision 2: GELU, no biases, equal samples at pre-activation ≈ −27 and labels balanced over
# the classes, so Σ_i r_i cancels to ~160 digits; the former fixed-precision softmax dps path gave tr H = 6.10e-295
_SOFTMAX_DEEP = {"W": [[2.972, 3.0, 2.999]], "b": None, "V": [[0.00176], [0.00752], [-0.00669]], "c": None,
                 "X": [[-2.944, -2.993, -2.757]] * 6, "y": [0, 1, 2, 0, 1, 2], "activation": "gelu", "bias": False}


def test_the_softmax_dps_path_keeps_its_digits_through_a_deep_cancellation():
    """Independent truth: the SymPy-derivative softmax Hessian in mpmath at 600 digits."""
    from checks.ws.strategies import SoftmaxCase
    from numerics.ws.reference import mp_trace_moments
    from numerics.ws.reference_softmax import softmax_hessian_mpmath
    from numerics.ws.softmax import softmax_hessian_moments

    case = SoftmaxCase.from_json(_SOFTMAX_DEEP)
    tr, tr2 = mp_trace_moments(softmax_hessian_mpmath(*case.args, "gelu", bias=False, dps=600), 600)
    got = softmax_hessian_moments(*case.args, "gelu", bias=False, dps=50)
    old = softmax_hessian_moments(*case.args, "gelu", bias=False, dps=50, _dps_engine="mpmath")
    with mpmath.workdps(600):
        assert got.backend == "arb" and abs(got.trace - tr) <= mpmath.mpf(10) ** -48 * tr
        assert abs(got.trace_sq - tr2) <= mpmath.mpf(10) ** -48 * tr2
        assert abs(got.trace - tr) <= got.radius[0] + mpmath.mpf(10) ** -60 * tr  # the radius bounds the error
        assert abs(old.trace - tr) > mpmath.mpf("0.1") * tr  # the uncertified engine really fails here


def test_the_softmax_properties_refute_the_deep_cancellation_case():
    from checks.ws import softmax as S
    from checks.ws.strategies import SoftmaxCase

    case = SoftmaxCase.from_json(_SOFTMAX_DEEP)
    assert S.bound_property().confirm(case) < 0 and S.moments_property().confirm(case) < 0


# found by the same review (a lattice search): D = 2, tanh, whose two eigenvalues agree to 26 digits, so σ ≈ 1e-26·μ
# is below what 50-digit moments fix: λ_sup raised "no real spectrum" (σ² = −1.2e-53)
_NEAR_SCALAR = {"W": [[-0.7267366457453927]], "b": None, "v": [0.4992231917224795], "c": None,
                "X": [[-1.6614130748481633], [-0.31118804013813856], [1.2620998565298505], [1.0426512018510086],
                      [2.247225899147928], [-2.8107271312652196], [2.2301291541087545]],
                "y": [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0], "activation": "tanh", "bias": False}


def test_a_near_scalar_hessian_gets_an_honest_lambda_sup_and_an_undecided_confirmation():
    import warnings

    from numerics.ws import ce_hessian_moments
    from numerics.ws.moments import PrecisionWarning

    case = NetCase.from_json(_NEAR_SCALAR)
    H = ce_hessian_mpmath(*case.args, "tanh", bias=False, dps=200)
    with mpmath.workdps(200):
        lmax = max(mpmath.eigsy(H, eigvals_only=True))  # D = 2: λ_sup = λ_max exactly
    m = ce_hessian_moments(*case.args, "tanh", bias=False, dps=50)
    with pytest.warns(PrecisionWarning, match=r"λ_sup fixes only about 2\d digits"):
        assert mpmath.isfinite(m.lambda_sup)  # no longer "no real spectrum", and it says how many digits it has
    ball = m.lambda_sup_ball()
    with ctx.workprec(700):
        assert ball.contains(from_mpf(lmax)) and ball.rad() < arb(10) ** -25
    with pytest.raises(Undecided):  # the ball [μ, μ + 3e-27] holds λ_max: neither side is provable
        bound_property().confirm(case)
    m80 = ce_hessian_moments(*case.args, "tanh", bias=False, dps=80)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrecisionWarning)
        rng = np.random.default_rng(0)  # generic 50-digit results: λ_sup keeps its 50 digits, no warning
        for act in ("tanh", "gelu", "sigmoid"):
            W, v, X = rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=(9, 2))
            m50 = ce_hessian_moments(W, rng.normal(size=3), v, 0.3, X, rng.integers(0, 2, 9), act, dps=50)
            assert mpmath.isfinite(m50.lambda_sup)
    with ctx.workprec(700):
        assert m80.lambda_sup_ball().contains(from_mpf(lmax)) and m80.lambda_sup_ball().rad() < arb(10) ** -50


def test_a_proved_gap_against_an_exact_zero_is_a_disagreement_and_an_unproved_scale_is_undecided():
    from checks.ws.bound import _proved_gap

    tiny = mpmath.mpf(10) ** -320
    assert _proved_gap(tiny, None, arb(0), arb(0)) == 1.0  # exact reference 0, closed form 1e-320: wrong
    assert _proved_gap(tiny, tiny, arb(0), arb(0)) == 0.0  # within its own radius of 0: no disagreement
    with ctx.workprec(400):
        assert 0 < _proved_gap(mpmath.mpf(1), None, arb(1) + EPS * EPS * EPS, arb(1))  # a gap of 2⁻³⁰⁰ stays > 0
    with pytest.raises(Undecided):
        _proved_gap(mpmath.mpf(1), None, arb(2), arb(0, 1))


def test_a_suite_failure_is_a_confirmed_counterexample_with_its_reason_saved(tmp_path, capsys):
    """A confirmation that raises SuiteFailed (the suite errs on a valid case) confirms at once, at any precision,
    and its reproducer and replay say why."""
    import json
    from pathlib import Path

    from checks.runners.falsify import PROPERTIES, SUITE_FAILED_MARGIN, SuiteFailed, replay

    def broken(case):
        raise SuiteFailed(f"the suite returned NaN at case {case}")

    prop = Property("ws.test/suite-failed", st.integers(0, 100), lambda c: 1.0, broken, from_json=int)
    res = falsify(prop, budget=20, seed=0, out_dir=tmp_path)
    assert res.found and res.confirmed >= 1 and res.counterexample_margin == SUITE_FAILED_MARGIN  # (shrinking too)
    saved = json.loads(open(res.reproducers[-1]).read())
    assert saved["suite_failure"].startswith("the suite returned NaN at case ")
    try:  # replay looks the property up by name ("ws.": the paper whose real properties it loads)
        again = replay(res.reproducers[-1])
    finally:
        PROPERTIES.pop(prop.name, None)
    assert again["suite_failure"] == saved["suite_failure"] and again["mpmath_margin"] == SUITE_FAILED_MARGIN
    assert again["escalated_margin"] is None  # no higher-precision confirmation ran
    from checks.runners.cli import _replay

    PROPERTIES[prop.name] = prop
    try:
        assert _replay(Path(res.reproducers[-1])) == 1
    finally:
        PROPERTIES.pop(prop.name, None)
    out = capsys.readouterr().out
    assert "the suite itself fails on this case (the suite returned NaN at case " in out and "digit" not in out


def test_ws_bound_counts_a_lambda_sup_that_raises_as_the_suites_failure():
    """ws.bound/upper's proved confirmation on moments with no radius whose λ_sup raises ("no real spectrum") or is
    not a finite real: the suite's failure (SuiteFailed), not a refutation and not undecided."""
    from checks.runners.falsify import SuiteFailed
    from numerics.ws import ce_hessian_moments

    class Raising:
        def __init__(self, m):
            self.m = m

        @property
        def lambda_sup(self):
            raise ValueError("no real spectrum")

    class NotANumber(Raising):
        lambda_sup = float("nan")

    for wrap, why in ((Raising, "raised on a valid net"), (NotANumber, "is not a finite real number")):
        prop = bound_property(lambda *a, _w=wrap, **k: _w(ce_hessian_moments(*a, **k)))
        with pytest.raises(SuiteFailed, match=why):
            prop.confirm(_rank_one_case())
