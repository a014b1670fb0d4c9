"""HVP estimators (numerics.ws.estimators) against two oracles, on one shared list of cases.

Why the oracles are independent of the code under test:

* (a) the closed form ``numerics.moments.ce_hessian_moments`` never touches torch or a probe: it sums
  SymPy-derived kernels over sample pairs in numpy. Agreement within the *reported* standard error
  checks the estimators' unbiasedness and their stderr at once.
* (b) the dense Hessian ``numerics.ws.reference.ce_hessian_torch`` is ``torch.func.hessian`` followed by
  ``numpy.linalg.eigvalsh`` (LAPACK). It shares the loss definition with the HVPs, so it checks the
  *estimators* (probing, Lanczos recurrence, reorthogonalisation), and it gives the exact single-probe
  variances 2(‖A‖_F² − Σ A_ii²) against which the reported stderr is judged.
"""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
import torch

from numerics.ws import ce_hessian_moments, estimators
from numerics.ws.estimators import hutchinson, lanczos_lmax, probes_for_rel_stderr
from numerics.ws.reference import ce_hessian_torch, hvp_operator

Z_TOL = 4.0  # |estimate − exact| ≤ 4 reported stderr (a 6e-5 two-sided chance per check for a normal mean)


def _case(M, N, n, act, bias, seed):
    rng = np.random.default_rng(seed)
    W, v = rng.normal(size=(N, M)), rng.normal(size=N)
    b, c = (rng.normal(size=N), 0.3) if bias else (None, None)
    X, y = rng.normal(size=(n, M)), rng.integers(0, 2, n)
    return (W, b, v, c, X, y), act, bias


CASES = {
    "paper-2-3-tanh": _case(2, 3, 40, "tanh", True, 0),
    "3-4-sigmoid": _case(3, 4, 30, "sigmoid", True, 1),
    "4-3-softplus-nobias": _case(4, 3, 25, "softplus", False, 2),
    "5-5-gelu": _case(5, 5, 20, "gelu", True, 3),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def case(request):
    args, act, bias = CASES[request.param]
    hvp, D = hvp_operator(*args, act, bias=bias)
    H = ce_hessian_torch(*args, act, bias=bias)
    m = ce_hessian_moments(*args, act, bias=bias)
    return {"hvp": hvp, "D": D, "H": H, "moments": m}


def test_doctests():
    res = doctest.testmod(estimators, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted >= 5


def test_hutchinson_matches_closed_form_within_stderr(case):
    r = hutchinson(case["hvp"], case["D"], n_probes=300, batch=50, seed=11)
    m = case["moments"]
    assert abs(r.trace.estimate - m.trace) <= Z_TOL * r.trace.stderr
    assert abs(r.trace_sq.estimate - m.trace_sq) <= Z_TOL * r.trace_sq.stderr
    assert r.trace.samples.shape == (300,) and r.trace.n_probes == 300 and r.seconds > 0


def test_hutchinson_matches_dense_hessian_within_stderr(case):
    H = case["H"]
    r = hutchinson(case["hvp"], case["D"], n_probes=300, batch=64, seed=12)
    assert abs(r.trace.estimate - np.trace(H)) <= Z_TOL * r.trace.stderr
    assert abs(r.trace_sq.estimate - np.sum(H * H)) <= Z_TOL * r.trace_sq.stderr


def test_reported_stderr_matches_exact_rademacher_variance(case):
    """Var(zᵀAz) = 2(‖A‖_F² − Σ A_ii²) for Rademacher z (Hutchinson 1989); the sample stderr tracks it."""
    H = case["H"]
    k = 400
    r = hutchinson(case["hvp"], case["D"], n_probes=k, batch=100, seed=13)
    for A, est in ((H, r.trace), (H @ H, r.trace_sq)):
        exact_se = math.sqrt(2 * (np.sum(A * A) - np.sum(np.diag(A) ** 2)) / k)
        assert 0.6 * exact_se <= est.stderr <= 1.6 * exact_se


def test_lanczos_full_krylov_space_is_exact(case):
    if case["D"] > 25:
        pytest.skip("D Lanczos steps: kept to the small cases for time")
    lmax = np.linalg.eigvalsh(case["H"])[-1]
    r = lanczos_lmax(case["hvp"], case["D"], steps=case["D"], seed=3)
    assert abs(r.estimate - lmax) <= 1e-8 * np.abs(case["H"]).max()


def test_lanczos_few_steps_is_a_certified_lower_estimate(case):
    ev = np.linalg.eigvalsh(case["H"])
    steps = max(2, case["D"] // 3)
    r = lanczos_lmax(case["hvp"], case["D"], steps=steps, seed=4)
    scale = np.abs(ev).max()
    assert r.estimate <= ev[-1] + 1e-10 * scale  # Ritz values interlace: never above λ_max
    assert np.min(np.abs(ev - r.estimate)) <= r.residual + 1e-10 * scale  # the residual certificate
    assert r.steps <= steps and r.ritz.shape == (r.steps,)


def test_lanczos_reorthogonalisation_options():
    H = torch.diag(torch.linspace(-1.0, 5.0, 60, dtype=torch.float64))
    full = lanczos_lmax(lambda V: H @ V, 60, steps=40, reorth="full")
    none = lanczos_lmax(lambda V: H @ V, 60, steps=40, reorth="none")
    assert abs(full.estimate - 5.0) < 1e-8 and abs(none.estimate - 5.0) < 1e-6
    stop = lanczos_lmax(lambda V: H @ V, 60, steps=60, tol=1e-6)
    assert stop.converged and stop.steps < 60


def test_probe_count_reaches_the_target_stderr():
    args, act, bias = CASES["paper-2-3-tanh"]
    hvp, D = hvp_operator(*args, act, bias=bias)
    pilot = hutchinson(hvp, D, n_probes=100, batch=100, seed=5).trace_sq
    k = pilot.probes_for(0.02)
    assert k == probes_for_rel_stderr(pilot.samples, 0.02)
    again = hutchinson(hvp, D, n_probes=k, batch=256, seed=6).trace_sq
    assert again.rel_stderr <= 0.02 * 1.3


def test_batch_does_not_change_the_draws():
    args, act, bias = CASES["3-4-sigmoid"]
    hvp, D = hvp_operator(*args, act, bias=bias)
    a = hutchinson(hvp, D, n_probes=12, batch=1, seed=9)
    b = hutchinson(hvp, D, n_probes=12, batch=5, seed=9)
    np.testing.assert_allclose(a.trace.samples, b.trace.samples, rtol=1e-12)
    np.testing.assert_allclose(a.trace_sq.samples, b.trace_sq.samples, rtol=1e-12)


@pytest.mark.parametrize("kw", [{"n_probes": 1}, {"n_probes": 2.5}, {"batch": 0},
                                {"distribution": "gaussian"}])
def test_hutchinson_rejects_bad_options(kw):
    with pytest.raises(ValueError):
        hutchinson(lambda V: V, 3, **kw)


def test_bad_options_elsewhere():
    with pytest.raises(ValueError):
        lanczos_lmax(lambda V: V, 3, steps=0)
    with pytest.raises(ValueError):
        lanczos_lmax(lambda V: V, 3, reorth="partial")
    with pytest.raises(ValueError):
        probes_for_rel_stderr([1.0], 0.1)
    with pytest.raises(ValueError):
        probes_for_rel_stderr([1.0, 2.0], 0.0)
    with pytest.raises(TypeError):  # keyword-only options
        hutchinson(lambda V: V, 3, 10)
