"""ws numerics against independent oracles (SPEC §1).

Oracles: ``torch.func.hessian`` of the loss written with torch's own BCE-with-logits and activation
(float64); ``sympy.hessian`` of the written-out concrete loss evaluated in mpmath; SymPy derivatives of
each activation for its float64 forms. None of them uses the generated block kernels.
"""

import mpmath
import numpy as np
import pytest
import sympy as sp

from checks.evidence.outcome import digits_agreed
from numerics.ws import ce_hessian_moments, ws_bounds
from numerics.ws.activations import NAMED, T, get_activation
from numerics.ws.reference import ce_hessian_mpmath, ce_hessian_torch, mp_trace_moments


def _net(rng, N=3, M=2, n=9, bias=True, scale=1.0):
    W, b, v = rng.normal(size=(N, M)) * scale, rng.normal(size=N), rng.normal(size=N) * scale
    X, y = rng.normal(size=(n, M)), rng.integers(0, 2, n).astype(float)
    return (W, b if bias else None, v, 0.4 if bias else None, X, y)


@pytest.mark.parametrize("act", sorted(NAMED))
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize(("N", "M", "n"), [(1, 1, 1), (3, 2, 17), (5, 4, 40)])
def test_closed_form_matches_autograd(act, bias, N, M, n):
    net = _net(np.random.default_rng(N * 100 + M * 10 + n), N, M, n, bias)
    m = ce_hessian_moments(*net, act, bias=bias, block=6)
    H = ce_hessian_torch(*net, act, bias=bias)
    assert m.dim == H.shape[0] == (N * (M + 2) + 1 if bias else N * (M + 1))
    assert abs(m.trace - np.trace(H)) <= 1e-11 * np.abs(np.diag(H)).sum()
    assert abs(m.trace_sq - np.sum(H * H)) <= 1e-11 * np.sum(H * H)


@pytest.mark.parametrize("name", ["gg", "gKg", "KK"])
def test_generated_factors_agree_with_generated_kernels(name):
    """The factored form Σ_p G^p (L_p R_pᵀ) that the blocked sums use equals the kernel function."""
    from numerics._derived import ws as ws_kernels

    rng = np.random.default_rng(1)
    Ti = tuple(rng.normal(size=(5, 4)) for _ in range(3))
    Tj = tuple(rng.normal(size=(6, 4)) for _ in range(3))
    v, G = rng.normal(size=4), rng.normal(size=(5, 6))
    ref = getattr(ws_kernels, name)(Ti, Tj, v, G)
    got = sum(G**p * (L @ R.T) for p, L, R in getattr(ws_kernels, f"{name}_factors")(Ti, Tj, v))
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13)


def test_blocking_does_not_change_the_result():
    net = _net(np.random.default_rng(5), 4, 3, 23)
    ref = ce_hessian_moments(*net, "gelu", block=23)
    for block in (1, 2, 5, 22, 1000):
        m = ce_hessian_moments(*net, "gelu", block=block)
        assert m.trace == pytest.approx(ref.trace, rel=1e-13)
        assert m.trace_sq == pytest.approx(ref.trace_sq, rel=1e-13)


@pytest.mark.parametrize("act", sorted(NAMED))
def test_mpmath_path_against_concrete_sympy_hessian(act):
    """The concrete-φ, written-out-BCE SymPy Hessian (slow to build, so a tiny net) at 50 digits."""
    net = _net(np.random.default_rng(11), 1, 1, 3)
    m = ce_hessian_moments(*net, act, dps=50)
    tr, tr2 = mp_trace_moments(ce_hessian_mpmath(*net, act, dps=60, concrete=True), 60)
    with mpmath.workdps(50):
        assert digits_agreed(m.trace, tr) >= 45
        assert digits_agreed(m.trace_sq, tr2) >= 45


def test_user_sympy_activation():
    t = sp.Symbol("u")
    expr = t / (1 + sp.exp(-t))  # SiLU
    net = _net(np.random.default_rng(3), 2, 2, 10)
    m = ce_hessian_moments(*net, expr)
    H = ce_hessian_torch(*net, expr)
    assert m.trace == pytest.approx(np.trace(H), rel=1e-12)
    assert m.trace_sq == pytest.approx(np.sum(H * H), rel=1e-12)
    mm = ce_hessian_moments(*net, expr, dps=40)
    assert float(mm.trace) == pytest.approx(m.trace, rel=1e-12)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_float64_activation_forms_match_sympy_derivatives(name):
    act = get_activation(name)
    t = np.array([-800.0, -40.0, -3.3, -0.2, 0.0, 0.7, 5.0, 40.0, 800.0])
    got = act.float64(t)
    with mpmath.workdps(50):
        for order in range(3):
            f = sp.lambdify(T, sp.diff(NAMED[name], T, order), "mpmath")
            for ti, gi in zip(t, got[order], strict=True):
                ref = f(mpmath.mpf(ti))
                assert abs(gi - ref) <= 1e-14 * max(1.0, abs(ref)) + 1e-300, (name, order, ti, gi, ref)


@pytest.mark.parametrize("name", sorted(NAMED))
def test_mp_activation_forms_keep_full_relative_precision(name):
    """At dps = 50, φ, φ′, φ″ keep ≥ 49 digits *relative* even where they are tiny (saturation): the
    reference is the SymPy derivative evaluated at 3000 digits, which outlasts the 1 + erf(t/√2)
    cancellation (≈ 784 digits at t = −60). Before the fix, GELU at t = −11 kept only 23 digits."""
    act = get_activation(name)
    for tv in ("-60", "-20", "-11", "-1e-20", "0", "1e-20", "0.7", "11", "60"):
        with mpmath.workdps(50):
            t = mpmath.mpf(tv)
            got = act.mp(t)
        with mpmath.workdps(3000):
            for order in range(3):
                ref = sp.lambdify(T, sp.diff(NAMED[name], T, order), "mpmath")(t)
                err = abs(got[order] - ref)
                assert err <= mpmath.mpf(10) ** -49 * abs(ref), (name, order, tv, got[order], ref)


def test_mp_user_expression_gets_guard_digits():
    """A user's expression with cancellation (GELU written with 1 + erf) matches the named form."""
    user = get_activation(T / 2 * (1 + sp.erf(T / sp.sqrt(2))))
    with mpmath.workdps(50):
        for tv in (-11, -25, 3):
            t = mpmath.mpf(tv)
            for a, b in zip(user.mp(t), get_activation("gelu").mp(t), strict=True):
                assert abs(a - b) <= mpmath.mpf(10) ** -48 * abs(b)


def test_gelu_counterexample_from_a_fresh_clone_is_refuted():
    """Regression: the two-stage falsifier once *confirmed* λ_max > λ_sup on this D = 2 GELU net (exact
    equality case, H entries ~1e-26): the 50-digit closed form had lost 27 digits in 1 + erf(t/√2)."""
    from checks.ws.bound import bound_property
    from checks.ws.strategies import NetCase

    case = NetCase.from_json({"W": [[5.53398590529]], "X": [[-2.0]], "activation": "gelu", "b": None,
                              "bias": False, "c": None, "v": [0.0], "y": [0.0]})
    assert bound_property().confirm(case) <= 0


def test_saturated_labels_give_no_cancellation():
    """p − y and p(1 − p) are formed without cancellation: a saturated correct prediction has
    tiny but nonzero curvature, matching the 50-digit value."""
    W, b, v, X = np.array([[1.0]]), np.array([0.0]), np.array([60.0]), np.array([[3.0]])
    y = np.array([1.0])
    m = ce_hessian_moments(W, b, v, 0.0, X, y, "tanh")
    mm = ce_hessian_moments(W, b, v, 0.0, X, y, "tanh", dps=50)
    assert m.trace > 0
    assert float(mm.trace) == pytest.approx(m.trace, rel=1e-12)


def test_ws_bounds_properties():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 6))
    A = A + A.T
    ev = np.linalg.eigvalsh(A)
    B = ws_bounds(np.trace(A), np.sum(A * A), 6)
    assert B.lmax_lower <= ev[-1] <= B.lmax_upper
    assert B.lmin_lower <= ev[0] <= B.lmin_upper
    for k in range(1, 7):
        lo, hi = B.kth(k)
        assert lo - 1e-12 <= ev[-k] <= hi + 1e-12
    # D = 2: all four bounds are equalities
    A2 = np.array([[1.0, 2.0], [2.0, -3.0]])
    e2 = np.linalg.eigvalsh(A2)
    B2 = ws_bounds(np.trace(A2), np.sum(A2 * A2), 2)
    assert B2.lmax_upper == pytest.approx(e2[1]) and B2.lmax_lower == pytest.approx(e2[1])
    assert B2.lmin_lower == pytest.approx(e2[0]) and B2.lmin_upper == pytest.approx(e2[0])


@pytest.mark.parametrize("D", [2, 3, 5, 8])
def test_kth_bounds_are_attained_by_two_level_spectra(D):
    """The other side of the k-th form: (a, …, a, b, …, b) with k copies of a attains λ_k ≤ m + s√((D−k)/k) and
    λ_{k+1} ≥ m − s√(k/(D−k)) exactly (hand algebra: m = (ka + (D−k)b)/D, s = √(k(D−k))|a − b|/D), so a looser or
    tighter k-th bound fails here; kth(1) and kth(D) are the λ_max upper and λ_min lower fields."""
    a, b = 1.75, -0.5
    for k in range(1, D):
        lam = [a] * k + [b] * (D - k)
        tr, tr2 = sum(lam), sum(x * x for x in lam)
        B = ws_bounds(tr, tr2, D)
        assert B.kth(k)[1] == pytest.approx(a, rel=1e-13, abs=1e-13)
        assert B.kth(k + 1)[0] == pytest.approx(b, rel=1e-13, abs=1e-13)
    assert B.kth(1) == (pytest.approx(B.mean, abs=1e-15), pytest.approx(B.lmax_upper, rel=1e-15))
    assert B.kth(D) == (pytest.approx(B.lmin_lower, rel=1e-15), pytest.approx(B.mean, abs=1e-15))
    # the four fields at their (D−1)-fold equality cases
    top = ws_bounds(a + (D - 1) * b, a * a + (D - 1) * b * b, D)
    assert top.lmax_upper == pytest.approx(a, rel=1e-13) and top.lmin_upper == pytest.approx(b, rel=1e-13)
    bot = ws_bounds((D - 1) * a + b, (D - 1) * a * a + b * b, D)
    assert bot.lmax_lower == pytest.approx(a, rel=1e-13) and bot.lmin_lower == pytest.approx(b, rel=1e-13)


# ------------------------------------------------------------------------------------------------
# bad input: a clear ValueError naming the problem


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda a: {**a, "v": np.ones(4)}, r"v must have shape \(3,\)"),
        (lambda a: {**a, "X": np.ones((9, 5))}, "X must have M = 2 columns"),
        (lambda a: {**a, "y": np.ones(8)}, r"y must have shape \(9,\)"),
        (lambda a: {**a, "y": np.full(9, 0.5)}, r"labels y must be in \{0, 1\}"),
        (lambda a: {**a, "W": np.where(np.eye(3, 2) > 0, np.nan, 1.0)}, "W contains NaN"),
        (lambda a: {**a, "X": np.full((9, 2), np.inf)}, "X contains inf"),
        (lambda a: {**a, "X": np.ones((9, 2), dtype=np.complex128)}, "unsupported dtype complex128"),
        (lambda a: {**a, "X": np.ones((9, 2), dtype=np.longdouble)}, "pass float64"),
        (lambda a: {**a, "activation": "relu6"}, "unknown activation 'relu6'"),
        (lambda a: {**a, "activation": sp.Symbol("a") * sp.Symbol("b")}, "exactly one variable"),
        (lambda a: {**a, "b": None}, "bias=True needs b and c"),
    ],
)
def test_bad_input(mutate, match):
    rng = np.random.default_rng(0)
    W, b, v, c, X, y = _net(rng)
    args = mutate({"W": W, "b": b, "v": v, "c": c, "X": X, "y": y, "activation": "tanh"})
    with pytest.raises(ValueError, match=match):
        ce_hessian_moments(args["W"], args["b"], args["v"], args["c"], args["X"], args["y"], args["activation"])


def test_no_bias_variant_rejects_a_bias():
    W, b, v, c, X, y = _net(np.random.default_rng(0))
    with pytest.raises(ValueError, match="bias=False"):
        ce_hessian_moments(W, b, v, None, X, y, bias=False)
    m = ce_hessian_moments(W, np.zeros(3), v, 0.0, X, y, bias=False)  # explicit zeros are fine
    assert m.dim == 3 * 3


@pytest.mark.parametrize(("args", "match"), [((1.0, 2.0, 1), "dim must be >= 2"),
                                             ((1.0, 2.0, 2.5), "dim must be an integer"),
                                             ((1.0, -1.0, 3), "trace_sq"),
                                             ((3.0, 1.0, 3), "no real spectrum"),
                                             ((np.nan, 1.0, 3), "finite")])
def test_ws_bounds_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        ws_bounds(*args)


def test_kth_bounds_keep_full_precision_at_50_digits():
    """The k-th eigenvalue bounds of an mpmath ws_bounds are exact to its precision: the ratios
    (k−1)/(D−k+1) and (D−k)/k were once Python floats (≈ 1e-17 relative), wrong past digit 16."""
    import mpmath

    from numerics.ws.moments import ws_bounds

    with mpmath.workdps(50):
        tr, tr2, D = mpmath.mpf(10), mpmath.mpf(31), 7
        m = tr / D
        s = mpmath.sqrt(tr2 / D - m**2)
        for k in (2, 3, 6):
            lo, hi = ws_bounds(tr, tr2, D).kth(k)
            assert abs(lo - (m - s * mpmath.sqrt(mpmath.mpf(k - 1) / (D - k + 1)))) < mpmath.mpf(10) ** -48
            assert abs(hi - (m + s * mpmath.sqrt(mpmath.mpf(D - k) / k))) < mpmath.mpf(10) ** -48


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("scale", [1e152, 3e153])
def test_float64_overflow_in_the_pair_sums_is_an_error_never_an_inf(backend, scale):
    """Units at ~1e153 with v ~ 1e-153 (z moderate, q not small): tr H is finite, Σ q_i q_j (g_i·g_j)² is not.
    BLAS reductions do not raise under np.errstate (the √q-folded loop's vdot returned tr² = inf as a number until
    the result was checked), so the result itself is checked: a ValueError that says to retry with dps=50."""
    W = np.array([[scale, 0.0], [2 * scale, 1.0]])
    v = np.array([1 / scale, 1 / scale])
    X, y = np.array([[1.0, 0.5], [0.7, -0.2], [0.9, 0.1]]), np.array([0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="retry with dps=50"):
        ce_hessian_moments(W, np.zeros(2), v, 0.0, X, y, "softplus", backend=backend)
