"""Flatness slice (SPEC §2, Vardhan–Taheri–Mazumdar 2026): numerics against oracles they do not share code with.

Oracle independence:

* hand-computable values (K_1 = 2, p(2) = 4/3, one neuron on one sample, Gaussian facts such as
  E[ReLU(z)²] = 1/2 and E[ReLU(u·x)ReLU(v·x)] = 1/(2π) for u ⟂ v), typed from textbooks, not from our output;
* a central-difference Hessian trace of F_S in numpy (no closed form, no autograd);
* brute-force optima: every basic solution of the p = 1 LP (enumerated n-subsets), and a generic
  quasi-Newton minimisation over the interpolating affine space for p > 1;
* a Monte Carlo sampler for the population loss that evaluates h and f* directly;
* each evidence level of every flat.* claim, in quick mode (the levels themselves compare against SymPy,
  mpmath and torch references in ``checks/flat/oracles.py``).
"""

import doctest
import itertools
import math

import numpy as np
import pytest

from numerics import flat


def _rng(k=0):
    return np.random.default_rng(1234 + k)



# ---------------------------------------------------------------------------------------------------
# hand-computable values


def test_constants_known_values():
    assert flat.get_activation("relu").p == 1.0 and flat.get_activation("relu").K == pytest.approx(2.0, rel=1e-15)
    q = flat.get_activation("quadratic")
    assert q.p == pytest.approx(4 / 3, rel=1e-15)
    assert q.K == pytest.approx(3 / 2 ** (2 / 3), rel=1e-15)


def test_one_neuron_one_sample():
    # n = 1, x = (1, 0), θ = (1, 0), a = 1, ReLU: A = 1, B = 1; λ* = 1 so Υ = trace = 2
    X, Th = np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]])
    assert flat.upsilon([1.0], Th, X, "relu") == pytest.approx(2.0, rel=1e-15)
    assert flat.flatness_trace([1.0], Th, X, [1.0], "relu") == pytest.approx(2.0, rel=1e-15)
    assert flat.optimal_rescaling([1.0], Th, X, "relu")[0] == pytest.approx(1.0, rel=1e-15)
    # a = 4: λ⁴ = 16 → λ = 2; Υ = 2·|a| = 8 (p = 1), the trace at λ=1 is 1 + 16 = 17
    assert flat.optimal_rescaling([4.0], Th, X, "relu")[0] == pytest.approx(2.0, rel=1e-15)
    assert flat.upsilon([4.0], Th, X, "relu") == pytest.approx(8.0, rel=1e-15)


def _fd_trace(a, Th, X, y, act, h=1e-4):
    """Σ_k ∂²F_S/∂w_k² by central second differences (float64)."""
    m, d = Th.shape

    def F(w):
        return 0.5 * np.mean((flat.network(w[:m], w[m:].reshape(m, d), X, act) - y) ** 2)

    w0 = np.concatenate([a, Th.ravel()])
    tot = 0.0
    for k in range(w0.size):
        e = np.zeros_like(w0)
        e[k] = h
        tot += (F(w0 + e) - 2 * F(w0) + F(w0 - e)) / h**2
    return tot


@pytest.mark.parametrize("act", ["quadratic", "relu_power:3", "abs_power:2.5", "leaky_relu:0.3"])
def test_trace_against_finite_differences(act):
    rng = _rng(1)
    a, Th, X, y = rng.normal(size=3), rng.normal(size=(3, 2)), rng.normal(size=(7, 2)), rng.normal(size=7)
    assert flat.flatness_trace(a, Th, X, y, act) == pytest.approx(_fd_trace(a, Th, X, y, act), rel=1e-5)


@pytest.mark.parametrize("act", ["relu", "leaky_relu", "quadratic", "relu_power:1.5", "abs_power:3"])
def test_upsilon_is_the_minimum_over_rescalings(act):
    rng = _rng(2)
    a, Th, X = rng.normal(size=4), rng.normal(size=(4, 3)), rng.normal(size=(9, 3))
    U = flat.upsilon(a, Th, X, act)
    for _ in range(20):
        a2, Th2 = flat.rescale(a, Th, np.exp(rng.uniform(-2, 2, 4)), act)
        parts = flat.trace_parts(a2, Th2, X, flat.network(a2, Th2, X, act), act)
        assert U <= parts.gauss_newton * (1 + 1e-12)
        assert flat.upsilon(a2, Th2, X, act) == pytest.approx(U, rel=1e-10)  # Υ is rescaling invariant
    a3, Th3 = flat.rescale(a, Th, flat.optimal_rescaling(a, Th, X, act), act)
    assert flat.trace_parts(a3, Th3, X, flat.network(a, Th, X, act), act).gauss_newton == pytest.approx(U, rel=1e-10)


def test_gaussian_facts():
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    relu = flat.single_index(e1, "relu")
    # ½ E[(0 − ReLU(z))²] = ¼
    assert flat.population_loss([0.0], [e2], relu, 0.0, "relu") == pytest.approx(0.25, rel=1e-14)
    # h = ReLU(e2·x): ½(½ − 2/(2π) + ½) = ½ − 1/(2π)
    assert flat.population_loss([1.0], [e2], relu, 0.0, "relu") == pytest.approx(0.5 - 1 / (2 * math.pi), rel=1e-14)
    # leaky: E[σ(z)²] = (1 + s²)/2; noise adds ½ σ_ξ²
    t = flat.single_index(e1, "linear")
    s = 0.3
    assert flat.population_loss([1.0], [e2], t, 2.0, f"leaky_relu:{s}") == pytest.approx(
        0.5 * ((1 + s**2) / 2 + 1 + 4), rel=1e-14)
    # quadratic net = (u·x)² exactly: loss 0; and E[(θ·x)⁴] = 3‖θ‖⁴
    q = flat.single_index(e1, "quadratic")
    assert abs(flat.population_loss([1.0], [e1], q, 0.0, "quadratic")) < 1e-14
    assert flat.population_loss([1.0], [2 * e2], flat.single_index(e1, "linear"), 0.0, "quadratic") == pytest.approx(
        0.5 * (3 * 16 + 1), rel=1e-14)


@pytest.mark.parametrize(("act", "target"), [
    ("relu", flat.sum_single_index(np.eye(4)[:2] + 0.3, ["relu", "he3"])),
    ("leaky_relu", flat.multi_index(np.eye(4)[:2], "product")),
    ("quadratic", flat.single_index(np.ones(4), "tanh")),
    ("relu_power:2", flat.single_index(np.arange(4.0), "cubic")),
])
def test_population_loss_against_monte_carlo(act, target):
    rng = _rng(3)
    a, Th = rng.normal(size=3), rng.normal(size=(3, 4)) / 2
    exact = flat.population_loss(a, Th, target, 0.1, act)
    # independent sampler: h and f* evaluated directly (multi-index product as v1·v2, not via ridges)
    X = rng.standard_normal((400_000, 4))
    f = (X[:, 0] * X[:, 1]) if target.kind == "multi_index" else target(X)
    vals = 0.5 * (flat.get_activation(act)(X @ Th.T) @ a - f) ** 2 + 0.5 * 0.1**2
    assert abs(exact - vals.mean()) <= 4.5 * vals.std() / math.sqrt(vals.size)


# ---------------------------------------------------------------------------------------------------
# flattest interpolators against brute force


def test_flattest_p1_matches_vertex_enumeration():
    rng = _rng(4)
    n, m = 3, 7
    X, Th, y = rng.normal(size=(n, 2)), rng.normal(size=(m, 2)), rng.normal(size=n)
    res = flat.flattest_outer_weights(Th, X, y, "relu")
    inv = flat.invariant_form(Th, X, "relu")
    best = math.inf
    for S in itertools.combinations(range(m), n):  # LP optimum is attained at a basic solution
        P = inv.Phibar[:, S]
        if abs(np.linalg.det(P)) < 1e-12:
            continue
        b = np.linalg.solve(P, y)
        best = min(best, float(inv.omega[list(S)] @ np.abs(b)))
    assert res.value == pytest.approx(best, rel=1e-9)
    assert res.dual_value <= res.value and res.rel_gap <= 1e-8
    assert np.max(np.abs(flat.network(res.a, Th, X, "relu") - y)) < 1e-10


@pytest.mark.parametrize("act", ["quadratic", "relu_power:3", "abs_power:1.5"])
def test_flattest_pgt1_matches_generic_minimiser(act):
    from scipy.optimize import minimize

    rng = _rng(5)
    n, m = 3, 6
    X, Th, y = rng.normal(size=(n, 3)), rng.normal(size=(m, 3)), rng.normal(size=n)
    res = flat.flattest_outer_weights(Th, X, y, act)
    inv = flat.invariant_form(Th, X, act)
    b0 = np.linalg.lstsq(inv.Phibar, y, rcond=None)[0]
    N = np.linalg.svd(inv.Phibar)[2][n:].T  # null space basis
    obj = lambda z: float(inv.omega @ np.abs(b0 + N @ z) ** inv.p)
    best = min((minimize(obj, rng.normal(size=N.shape[1]), method="Nelder-Mead",
                         options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20000}) for _ in range(4)),
               key=lambda r: r.fun)
    assert res.value <= best.fun * (1 + 1e-9)
    assert res.value == pytest.approx(best.fun, rel=1e-6)
    assert res.dual_value <= res.value and res.rel_gap <= 1e-8


def test_dual_value_bounds_other_interpolators():
    rng = _rng(6)
    n, m = 4, 9
    X, Th = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
    for act in ("relu", "quadratic"):
        a = rng.normal(size=m)
        y = flat.network(a, Th, X, act)
        res = flat.flattest_outer_weights(Th, X, y, act)
        assert res.dual_value <= flat.upsilon(a, Th, X, act)
        assert res.value <= flat.upsilon(a, Th, X, act) * (1 + 1e-9)


# ---------------------------------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize(("call", "match"), [
    (lambda: flat.flatness_trace([1.0, 2.0], np.ones((3, 2)), np.ones((4, 2)), np.ones(4), "relu"), "a has 2"),
    (lambda: flat.flatness_trace([1.0], np.ones((1, 3)), np.ones((4, 2)), np.ones(4), "relu"), "d = 2"),
    (lambda: flat.flatness_trace([1.0], np.ones((1, 2)), np.ones((4, 2)), np.ones(3), "relu"), "y has 3"),
    (lambda: flat.upsilon([np.nan], np.ones((1, 2)), np.ones((4, 2)), "relu"), "a: contains NaN"),
    (lambda: flat.upsilon([1.0], np.ones((1, 2)), np.full((4, 2), np.inf), "relu"), "X: contains NaN or inf"),
    (lambda: flat.upsilon([1.0], np.ones((1, 2), dtype=complex), np.ones((4, 2)), "relu"), "unsupported dtype"),
    (lambda: flat.upsilon([True], np.ones((1, 2)), np.ones((4, 2)), "relu"), "unsupported dtype"),
    (lambda: flat.upsilon([1.0], np.ones(2), np.ones((4, 2)), "relu"), "Theta: expected a 2-d"),
    (lambda: flat.get_activation("tanh"), "not positively homogeneous"),
    (lambda: flat.get_activation(lambda t: t + 1.0), "not positively homogeneous"),
    (lambda: flat.get_activation(np.sin), "not positively homogeneous"),
    (lambda: flat.get_activation("relu_power"), "needs its degree c"),
    (lambda: flat.get_activation("abs_power", c=0.5), ">= 1"),
    (lambda: flat.get_activation("relu", c=2), "degree c = 1"),
    (lambda: flat.get_activation("swish"), "unknown activation"),
    (lambda: flat.flattest_outer_weights(np.ones((2, 2)) + np.eye(2), np.eye(3, 2), np.ones(3), "relu"), "m = 2 < n"),
    (lambda: flat.flattest_outer_weights(_rng().normal(size=(20, 2)), _rng(1).normal(size=(4, 2)), np.ones(4),
                                       "quadratic"), "rank 3 < n"),
    (lambda: flat.population_loss([1.0], np.ones((1, 3)), flat.single_index([1.0, 0.0], "relu")), "d = 2"),
    (lambda: flat.population_loss([1.0], np.ones((1, 2)), flat.single_index([1.0, 0.0], "relu"), -1.0), "noise"),
    (lambda: flat.population_loss([1.0], np.ones((1, 2)), "relu"), "target must be a Target"),
    (lambda: flat.single_index([1.0, 0.0], "softmax"), "unknown link"),
    (lambda: flat.multi_index(np.ones((2, 3)), "product"), "orthonormal"),
])
def test_bad_input_is_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_homogeneous_callable_is_accepted():
    act = flat.get_activation(lambda t: np.where(t > 0, 2 * t**3, -0.5 * t**3))
    assert (act.c, act.plus, act.minus) == (3.0, 2.0, 0.5)


def test_doctests():
    import importlib
    import pkgutil

    mods = [flat] + [importlib.import_module(f"numerics.flat.{m.name}") for m in pkgutil.iter_modules(flat.__path__)]
    results = [doctest.testmod(m, optionflags=doctest.ELLIPSIS) for m in mods]
    assert sum(r.failed for r in results) == 0 and sum(r.attempted for r in results) > 5


# ---------------------------------------------------------------------------------------------------
# beyond: the certified circle supremum against dense sampling


@pytest.mark.parametrize("act", ["relu", "leaky_relu:0.3"])
def test_certify_circle_against_dense_sampling(act):
    rng = _rng(7)
    X, nu = rng.normal(size=(5, 2)), rng.normal(size=5)
    cert = flat.certify_circle(nu, X, act)
    ang = np.linspace(0, 2 * np.pi, 400_001)
    inv = flat.invariant_form(np.stack([np.cos(ang), np.sin(ang)], axis=1), X, act)
    with np.errstate(divide="ignore", invalid="ignore"):
        sampled = np.nanmax(np.abs(inv.Phibar.T @ nu) / inv.omega)
    assert sampled <= cert.kappa * (1 + 1e-12)  # sampling can only under-estimate a supremum
    assert sampled == pytest.approx(cert.kappa, rel=1e-4)


def test_bracket_orders_and_rejects_unsupported():
    rng = _rng(8)
    X, y = rng.normal(size=(5, 2)), rng.normal(size=5)
    (b,) = flat.upsilon_star_bracket(X, y, "relu", (32,), refine=4)
    assert b.lower <= b.upper
    # any interpolator with random directions is at least as sharp as the certified lower bound
    Th = rng.normal(size=(12, 2))
    assert flat.flattest_outer_weights(Th, X, y, "relu").value >= b.lower
    with pytest.raises(ValueError, match="c = 1"):
        flat.certify_circle(np.ones(5), X, "quadratic")
    with pytest.raises(ValueError, match="d = 2"):
        flat.certify_circle(np.ones(5), rng.normal(size=(5, 3)), "relu")


def test_certify_sphere_against_dense_sampling():
    rng = _rng(9)
    X, nu = rng.normal(size=(4, 3)), rng.normal(size=4)
    cert, _ = flat.certify_sphere(nu, X, "relu")
    P = rng.normal(size=(300_000, 3))
    P /= np.linalg.norm(P, axis=1)[:, None]
    inv = flat.invariant_form(P, X, "relu")
    with np.errstate(divide="ignore", invalid="ignore"):
        sampled = np.nanmax(np.abs(inv.Phibar.T @ nu) / inv.omega)
    assert sampled <= cert.kappa * (1 + 1e-12)
    assert sampled == pytest.approx(cert.kappa, rel=1e-2)
