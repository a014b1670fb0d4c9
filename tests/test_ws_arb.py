"""The dps= path of ce_hessian_moments in arb ball arithmetic (numerics.ws.arb_balls) against the mpmath path."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from flint import arb, ctx

from numerics._derived import ws as kernels
from numerics.ws import arb_balls as ab
from numerics.ws import ce_hessian_moments
from numerics.ws.activations import get_activation
from numerics.ws.moments import PrecisionWarning, _moments, validate_net


def _net(kind: str, act: str):
    """(args, bias, activation, block): a generic net, a bias-free one and saturated ones."""
    rng = np.random.default_rng(["generic", "nobias", "sat_pos", "sat_neg", "wide"].index(kind))
    N, M, n = (8, 5, 40) if kind == "wide" else (3, 2, 12)
    W, b, v = rng.normal(size=(N, M)), rng.normal(size=N), 1.5 * rng.normal(size=N)
    X, y, c = rng.normal(size=(n, M)), rng.integers(0, 2, n).astype(float), 0.3
    # saturated: v·φ(a) pushes z further out (φ > −0.2 for every activation here), so q, r <= e^-|c|
    if kind == "sat_pos":  # pre-activations in the hundreds, z >= 100 − 0.2 Σ|v| with every y = 1
        W, v, y, c = 300 * W, np.abs(rng.normal(size=N)), np.ones(n), 100.0
    if kind == "sat_neg":  # pre-activations in the tens, z <= −90 + 0.2 Σ|v| with every y = 0
        W, v, y, c = 30 * W, -np.abs(rng.normal(size=N)), np.zeros(n), -90.0
    bias = kind != "nobias"
    args = (W, b if bias else None, v, c if bias else None, X, y)
    return args, bias, act, 16 if kind == "wide" else 256  # wide: 3 blocks, the last ragged


CASES = [(k, a) for k in ("generic", "nobias", "sat_pos", "sat_neg") for a in ("tanh", "gelu", "sigmoid", "softplus")]
CASES += [("wide", "tanh"), ("wide", "gelu")]


def _digits(a, b) -> float:
    with mpmath.workdps(120):
        d = abs(mpmath.mpf(a) - mpmath.mpf(b))
        return float("inf") if d == 0 else float(-mpmath.log10(d / abs(mpmath.mpf(b))))


@pytest.mark.parametrize("kind,act", CASES)
def test_arb_agrees_with_mpmath_and_its_radius_holds(kind, act):
    args, bias, act, block = _net(kind, act)
    got = ce_hessian_moments(*args, act, bias=bias, dps=50, block=block)
    ref = ce_hessian_moments(*args, act, bias=bias, dps=50, block=block, _dps_engine="mpmath")
    hi = ce_hessian_moments(*args, act, bias=bias, dps=80, block=block, _dps_engine="mpmath")
    assert isinstance(got.trace, mpmath.mpf) and isinstance(got.trace_sq, mpmath.mpf)
    assert ref.radius is None and got.radius is not None
    if kind.startswith("sat"):
        assert got.trace_sq < 1e-70  # the case is what it says: a tiny Hessian
    for x, r, want, rad in ((got.trace, ref.trace, hi.trace, got.radius[0]),
                            (got.trace_sq, ref.trace_sq, hi.trace_sq, got.radius[1])):
        assert _digits(x, r) >= 45
        assert _digits(x, want) >= 49
        with mpmath.workdps(120):
            assert abs(mpmath.mpf(want) - x) <= rad  # the 80-digit value is inside value ± radius
            assert rad <= mpmath.mpf(10) ** -49 * abs(x)  # and the radius is a 50-digit one


@pytest.mark.parametrize("kind,act", [("generic", "tanh"), ("nobias", "gelu"), ("sat_pos", "tanh"),
                                      ("sat_neg", "gelu"), ("sat_pos", "softplus")])
def test_the_unrounded_ball_contains_the_80_digit_value(kind, act):
    """The ball before rounding to 50 digits (radius ~1e-68 relative) still holds the dps = 80 mpmath value."""
    args, bias, act, block = _net(kind, act)
    W, b, v, c, X, y = validate_net(*args, bias=bias)
    const = kernels.OUTPUT_BIAS if bias else dict.fromkeys(kernels.OUTPUT_BIAS, 0)
    tr, tr2, rigorous, prec = ab.moments_arb(W, b, v, c, X, y, get_activation(act), 50, moments=_moments,
                                               bias=bias, n=X.shape[0], kernels=kernels, block=block,
                                               bias_const=const)
    hi = ce_hessian_moments(*args, act, bias=bias, dps=80, _dps_engine="mpmath")
    assert rigorous and prec == ab.bits_for(50) + 64
    for ball, want in ((tr, hi.trace), (tr2, hi.trace_sq)):
        with mpmath.workdps(120):
            mid, rad = ab.to_mpf(ball), ab.to_mpf(ball.rad())
            assert abs(mpmath.mpf(want) - mid) <= rad
            assert rad <= mpmath.mpf(10) ** -60 * abs(mid)


def test_guard_bits_are_doubled_until_the_ball_fixes_dps_digits():
    args, bias, act, block = _net("wide", "tanh")
    W, b, v, c, X, y = validate_net(*args, bias=bias)
    kw = dict(moments=_moments, bias=bias, n=X.shape[0], kernels=kernels, block=block,
              bias_const=kernels.OUTPUT_BIAS)
    tr, tr2, _, prec = ab.moments_arb(W, b, v, c, X, y, get_activation(act), 50, guard_bits=1, max_doublings=0, **kw)
    assert prec == ab.bits_for(50) + 1 and not (ab.accurate(tr, 50) and ab.accurate(tr2, 50))
    tr, tr2, _, prec = ab.moments_arb(W, b, v, c, X, y, get_activation(act), 50, guard_bits=1, max_doublings=8, **kw)
    assert prec > ab.bits_for(50) + 1 and ab.accurate(tr, 50) and ab.accurate(tr2, 50)


def test_wide_balls_are_returned_with_their_radius_and_a_warning(monkeypatch):
    """Balls that never fix dps digits are not replaced by uncertified mpmath digits: the midpoints come back with
    the radii that bound them, and a PrecisionWarning (the former fallback presented 3 digits as 50)."""
    args, bias, act, _ = _net("generic", "gelu")
    ref = ce_hessian_moments(*args, act, dps=80, _dps_engine="mpmath")
    monkeypatch.setattr(ab, "accurate", lambda x, dps: False)
    with pytest.warns(PrecisionWarning, match="fix only about"):
        got = ce_hessian_moments(*args, act, dps=50)
    assert got.backend == "arb" and got.radius is not None
    with mpmath.workdps(80):  # the radius bounds the rounding to 50 digits tightly: allow the reference's own 80
        eps = mpmath.mpf(10) ** -75
        assert abs(got.trace - ref.trace) <= got.radius[0] + eps * abs(ref.trace)
        assert abs(got.trace_sq - ref.trace_sq) <= got.radius[1] + eps * ref.trace_sq


def test_mpmath_fallback_only_for_balls_that_are_not_finite(monkeypatch):
    args, bias, act, _ = _net("generic", "gelu")
    ref = ce_hessian_moments(*args, act, dps=50, _dps_engine="mpmath")
    monkeypatch.setattr(ab, "moments_arb", lambda *a, **k: (arb("inf"), arb("inf"), True, 0))
    with pytest.warns(PrecisionWarning, match="not certified"):
        got = ce_hessian_moments(*args, act, dps=50)
    assert got.backend == "mpmath" and got.radius is None and got.trace == ref.trace and got.trace_sq == ref.trace_sq


# the ws.bound campaign's reproducer (reports/counterexamples/ws.bound_moments-fd2090dacb.json): GELU, no biases, six
# equal samples at pre-activation −26.2 with balanced labels, so Σ_i r_i tr K_i cancels to about 155 digits
_DEEP = (np.array([[2.99, 2.99, 2.99]]), None, np.array([-0.000286767569564]), None,
         np.tile([-0.000867675695637, -0.0867675695637, -8.67675695637], (6, 1)), np.array([0.0, 1.0] * 3))


def test_a_cancellation_deeper_than_the_former_guard_bits_gets_its_digits():
    """Independent truth: sympy's dense Hessian in mpmath at 400 digits (at 60 and at 130 digits it gives the same
    wrong tr H, 2.2671e-300; the closed form's former fallback gave 2.2768e-300, both presented as 50 digits)."""
    from numerics.ws.reference import ce_hessian_moments_arb, ce_hessian_mpmath, mp_trace_moments

    tr, tr2 = mp_trace_moments(ce_hessian_mpmath(*_DEEP, "gelu", bias=False, dps=400), 400)
    got = ce_hessian_moments(*_DEEP, "gelu", bias=False, dps=50)
    assert got.backend == "arb" and _digits(got.trace, tr) >= 49 and _digits(got.trace_sq, tr2) >= 49
    assert got.radius[0] <= abs(got.trace) * mpmath.mpf(10) ** -49
    ref = ce_hessian_moments_arb(*_DEEP, "gelu", bias=False, dps=60)  # the falsifier's proved reference
    with mpmath.workdps(60):
        assert ref["trace"].contains(ab.from_mpf(+tr)) is not None
        assert _digits(ab.to_mpf(ref["trace"]), tr) >= 55 and _digits(ab.to_mpf(ref["trace_sq"]), tr2) >= 55
    with mpmath.workdps(60):  # the fixed-precision reference really is the one that fails here
        lo = mp_trace_moments(ce_hessian_mpmath(*_DEEP, "gelu", bias=False, dps=130), 130)[0]
        assert _digits(lo, tr) < 3


def test_sympy_activation_uses_mpmath_tables_and_reports_no_radius():
    t = sp.Symbol("t")
    args, bias, _, _ = _net("generic", "tanh")
    got = ce_hessian_moments(*args, t * sp.tanh(t), dps=40)
    ref = ce_hessian_moments(*args, t * sp.tanh(t), dps=40, _dps_engine="mpmath")
    assert got.radius is None
    assert _digits(got.trace, ref.trace) >= 37 and _digits(got.trace_sq, ref.trace_sq) >= 37


def test_the_mpmath_path_keeps_its_digits_when_the_output_saturates():
    """q = p(1 − p) and r = p − 1 at p = 1 − e^-100 kept 4 of 50 digits before σ(z)σ(−z), −σ(−z)."""
    args, bias, act, _ = _net("sat_pos", "tanh")
    lo = ce_hessian_moments(*args, act, dps=50, _dps_engine="mpmath")
    hi = ce_hessian_moments(*args, act, dps=80, _dps_engine="mpmath")
    assert _digits(lo.trace, hi.trace) >= 48 and _digits(lo.trace_sq, hi.trace_sq) >= 48


def test_dps_results_feed_the_bounds_in_mpmath():
    args, bias, act, _ = _net("generic", "sigmoid")
    m = ce_hessian_moments(*args, act, dps=50)
    assert isinstance(m.lambda_sup, mpmath.mpf) and m.lambda_sup >= m.trace / m.dim


def test_arb_array_products_match_numpy_on_integers():
    rng = np.random.default_rng(5)
    A, B = rng.integers(-9, 9, (4, 3)), rng.integers(-9, 9, (3, 5))
    u, w = rng.integers(-9, 9, 4), rng.integers(-9, 9, 3)
    with ctx.workprec(64):
        Aa, Ba, ua, wa = (ab.arb_array(x.astype(float)) for x in (A, B, u, w))
        for got, want in ((Aa @ Ba, A @ B), (ua @ Aa, u @ A), (Aa @ wa, A @ w), (Aa.T @ ua, A.T @ u)):
            assert isinstance(got, ab.ArbArray) and got.shape == want.shape
            assert all(g == int(x) for g, x in zip(got.flat, want.flat, strict=True))
        s = wa @ wa
        assert isinstance(s, arb) and s == int(w @ w)
        assert isinstance((Aa * Aa).sum(), arb)
        with pytest.raises(ValueError, match="do not fit"):
            Aa @ ua


def test_mpf_arb_conversions_are_exact():
    with mpmath.workprec(400):
        x = mpmath.mpf(1) / 3 - mpmath.mpf(2) ** -390
        with ctx.workprec(53):  # far below x's 400 bits: from_mpf must not round
            a = ab.from_mpf(x)
            assert a.is_exact()
        assert ab.to_mpf(a) == x and ab.to_mpf(ab.from_mpf(-x)) == -x
    assert ab.to_mpf(arb(0)) == 0
    with pytest.raises(ValueError):
        ab.from_mpf(mpmath.inf)


def test_round_to_dps_bound_covers_the_rounding():
    with ctx.workprec(300):
        x = arb(1) / 7
        out, bound = ab.round_to_dps(x, 20)
    with mpmath.workdps(100):
        exact = mpmath.mpf(1) / 7
        assert abs(exact - out) <= bound <= mpmath.mpf(10) ** -20
        assert abs(exact - out) > 0  # the rounding is not 0, so the bound was tested
