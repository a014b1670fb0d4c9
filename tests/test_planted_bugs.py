"""The falsifier has teeth: planted bugs in copies of the evaluators are caught within the default budget.

Oracle independence: each property compares the evaluator under attack with something it does not
share code with (eigenvalues known by construction, ``torch.func.hessian`` in float64, and
``sympy.hessian`` evaluated in mpmath for the 50-digit confirmation). The planted copies below differ
from the real evaluators in exactly one place each, as named in issue 2.
"""

import dataclasses
import functools
import types

import mpmath
import numpy as np
import pytest

from checks.runners.falsify import falsify, replay
from checks.ws.bound import bound_property, moments_property
from checks.ws.theorem import theorem_bounds_property, theorem_equality_property
from numerics._derived import ws as ws_kernels
from numerics.ws import ce_hessian_moments, ws_bounds


def ws_bounds_sqrt_d(trace, trace_sq, dim):
    """Planted bug 1: √D instead of √(D−1) in the λ_max upper bound."""
    B = ws_bounds(trace, trace_sq, dim)
    return dataclasses.replace(B, lmax_upper=B.mean + B.std * np.sqrt(dim))


def _kernels_with(**override):
    names = ("gg", "gKg", "KK", "g2", "trK", "gg_factors", "gKg_factors", "KK_factors", "OUTPUT_BIAS")
    ns = types.SimpleNamespace(**{k: getattr(ws_kernels, k) for k in names})
    for k, f in override.items():
        setattr(ns, k, f)
    return ns


# Planted bug 2: the residual term r_i tr K_i dropped from tr H.
dropped_residual = functools.partial(
    ce_hessian_moments, _kernels=_kernels_with(trK=lambda Ti, v, Gm: 0 * Gm))
# Planted bug 3: a wrong sign in the pair kernel g_iᵀ K_j g_i (its G-linear monomial).
def _gkg_sign_flipped(Ti, Tj, v):
    (p1, L1, R1), rest = ws_kernels.gKg_factors(Ti, Tj, v)[0], ws_kernels.gKg_factors(Ti, Tj, v)[1:]
    return [(p1, -L1, R1), *rest]


wrong_sign = functools.partial(ce_hessian_moments, _kernels=_kernels_with(gKg_factors=_gkg_sign_flipped))


def shaved_lambda_sup(*args, **kw):
    """Planted bug 4: λ_sup = μ + √(D−1)σ(1 − 10⁻⁸), wrong only within 10⁻⁸ of the rank-one equality case
    λ_max = λ_sup, and only ws.bound/upper's proved confirmation (revision 2) can tell it from rounding there."""
    m = ce_hessian_moments(*args, **kw)
    B = m.bounds
    if kw.get("dps"):
        return types.SimpleNamespace(lambda_sup=B.mean + B.std * mpmath.sqrt(m.dim - 1) * (1 - mpmath.mpf("1e-8")))
    return types.SimpleNamespace(lambda_sup=B.mean + B.std * np.sqrt(m.dim - 1) * (1 - 1e-8))


@pytest.mark.parametrize(
    ("make", "bug"),
    [
        (theorem_equality_property, ws_bounds_sqrt_d),
        (moments_property, dropped_residual),
        (moments_property, wrong_sign),
        (bound_property, shaved_lambda_sup),
    ],
    ids=["sqrtD", "dropped-residual", "pair-kernel-sign", "shaved-lambda-sup"],
)
def test_planted_bug_is_caught(make, bug, tmp_path):
    prop = make(bug)
    res = falsify(prop, seed=1, out_dir=tmp_path)  # default budget
    assert res.found, f"{prop.name} missed the planted bug in {res.examples} examples"
    assert res.counterexample_margin > 0
    assert res.reproducers and all(p.endswith(".json") for p in res.reproducers)
    # the saved reproducer reproduces: replaying both stages on the shrunk case still fails
    case = prop.from_json(res.counterexample)
    assert prop.screen(case) > 0 and prop.confirm(case) > 0
    # `python -m checks replay` rebuilds the *real* property by name: it refutes the planted bug's case
    again = replay(res.reproducers[-1])
    assert again["property"] == prop.name and again["mpmath_margin"] <= 0, again


@pytest.mark.parametrize("make", [theorem_bounds_property, theorem_equality_property, bound_property,
                                  moments_property])
def test_real_evaluators_survive(make, tmp_path):
    res = falsify(make(), budget=40, seed=2, out_dir=tmp_path)
    assert not res.found, res.counterexample
    assert res.examples >= 40


def test_example_count_stops_at_the_first_confirmed_hit():
    """`examples` counts generated cases up to the first confirmed hit; Hypothesis's shrinking is
    reported apart (`shrink_calls`), so "caught in k examples" is not inflated by shrinking."""
    from hypothesis import strategies as st

    from checks.runners.falsify import Property

    prop = Property("test/always-false", st.integers(0, 10**6), lambda c: 1.0 + c, lambda c: 1.0 + c)
    res = falsify(prop, budget=50, seed=0)
    assert res.found and res.examples == 1
    assert res.calls == res.examples + res.shrink_calls  # shrinking towards 0 is counted apart
    assert res.counterexample == 0


# ---------------------------------------------------------------------------- the k-th form at its equality cases
def _with_kth(upper=None, lower=None):
    """ws_bounds whose WSBounds.kth has one end replaced (a looser or a tighter k-th bound)."""
    import mpmath

    from numerics.ws import WSBounds

    class Planted(WSBounds):
        def kth(self, k):
            lo, hi = WSBounds.kth(self, k)
            sq = mpmath.sqrt if isinstance(self.std, mpmath.mpf) else np.sqrt
            D = self.dim
            return (lo if lower is None else self.mean - self.std * sq(lower(k, D)),
                    hi if upper is None else self.mean + self.std * sq(upper(k, D)))

    def bounds(tr, tr2, D):
        B = ws_bounds(tr, tr2, D)
        return Planted(**{f.name: getattr(B, f.name) for f in dataclasses.fields(B)})
    return bounds


@pytest.mark.parametrize("bug", [
    _with_kth(upper=lambda k, D: (D - k + 1) / k),        # looser upper end: still valid
    _with_kth(upper=lambda k, D: (D - k) / (k + 1)),      # tighter upper end: invalid
    _with_kth(lower=lambda k, D: k / (D - k + 1)),        # looser lower end: still valid
    _with_kth(lower=lambda k, D: (k - 1) / (D - k + 2)),  # tighter lower end: invalid
], ids=["upper-looser", "upper-tighter", "lower-looser", "lower-tighter"])
def test_kth_bound_moved_either_way_is_caught(bug, tmp_path):
    """A k-th bound made looser passes every inequality; the k-fold two-level spectra attain both ends exactly."""
    from checks.ws.theorem import theorem_kth_equality_property

    res = falsify(theorem_kth_equality_property(bug), seed=1, out_dir=tmp_path)
    assert res.found and res.counterexample_margin > 0


def test_kth_equality_survives_the_real_bounds(tmp_path):
    from checks.ws.theorem import theorem_kth_equality_property

    res = falsify(theorem_kth_equality_property(), budget=60, seed=2, out_dir=tmp_path)
    assert not res.found, res.counterexample


def test_reported_dimension_is_checked(tmp_path):
    """D enters μ and σ: a D off by one is caught by ws.bound/moments (the dense Hessian's dimension)."""
    def off_by_one(*a, **k):
        m = ce_hessian_moments(*a, **k)
        return dataclasses.replace(m, dim=m.dim - 1)

    res = falsify(moments_property(off_by_one), seed=1, out_dir=tmp_path)
    assert res.found
