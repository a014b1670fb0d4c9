"""ws.theorem: Wolkowicz–Styan 1980 (LAA 29, Thm 2.1) for any real-spectrum matrix: the four bounds on
λ_max and λ_min, their equality cases, and the k-th eigenvalue form.

Derivation: :func:`proofs.ws.derive_ws_theorem` (symbolic D and k; expansions for D ≤ 6). Evaluator:
:func:`numerics.ws.ws_bounds`. P: random symmetric matrices at 50 digits, eigenvalues by mpmath's
``eigsy``. F: three properties with an injectable ``bounds_fn`` (the planted-bug tests hand them a
broken copy). Why both directions: a bound that is too *loose* is also a bug (√D for √(D−1)), so the
theorem is falsified through its equality cases too, not only its inequalities: the four bounds at the
(D−1)-fold spectra (``theorem_equality_property``) and the k-th form at the k-fold two-level spectra, with
``kth(1)``/``kth(D)`` against the λ_max/λ_min fields (``theorem_kth_equality_property``).
"""

from __future__ import annotations

import mpmath
import numpy as np

from checks.evidence.outcome import Outcome, digits_agreed
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.runners.falsify import Property, run_properties
from checks.ws.strategies import SpectrumCase, kfold_spectra, spectra
from numerics.ws import ws_bounds
from proofs import ws as proof

ID = "ws.theorem"


def level_S(ctx: Context) -> Outcome:
    res = proof.derive_ws_theorem(max_D=6)
    ok = all(res.values())
    return Outcome(ok, {"identities": len(res), "exact": sum(res.values())},
                   f"{sum(res.values())}/{len(res)} steps simplify exactly (symbolic D, k; D ≤ 6 expansions)",
                   details=res)


def _spectrum_matrix(lams, rng):
    """A random orthogonal similarity of diag(lams), at the current mpmath precision."""
    D = len(lams)
    Q, _ = mpmath.qr(mpmath.matrix(rng.normal(size=(D, D)).tolist()))
    return Q * mpmath.diag(lams) * Q.T


def level_P(ctx: Context) -> Outcome:
    """Random symmetric matrices at 50 digits: bounds hold (eigsy), equality spectra attain them."""
    rng = ctx.rng("ws.theorem/P")
    dps = TOL["precision_dps"]
    worst_margin, eq_digits, n = mpmath.inf, [], 0
    with mpmath.workdps(dps):
        for D in (2, 3, 5, 8):
            for _ in range(3):
                A = mpmath.matrix(rng.normal(size=(D, D)).tolist())
                A = (A + A.T) / 2
                ev = sorted(mpmath.eigsy(A, eigvals_only=True), reverse=True)
                tr = mpmath.fsum(A[i, i] for i in range(D))
                tr2 = mpmath.fsum(A[i, j] ** 2 for i in range(D) for j in range(D))
                B = ws_bounds(tr, tr2, D)
                gaps = [ev[0] - B.lmax_lower, B.lmax_upper - ev[0], ev[-1] - B.lmin_lower, B.lmin_upper - ev[-1]]
                for k in range(1, D + 1):
                    lo, hi = B.kth(k)
                    gaps += [ev[k - 1] - lo, hi - ev[k - 1]]
                worst_margin = min(worst_margin, min(gaps))
                n += 1
            # equality case: D−1 smallest equal attains λ_max upper; D−1 largest equal attains λ_max lower
            a, bb = mpmath.mpf(rng.normal()) + 3, mpmath.mpf(rng.normal())
            for spec, which in (([a] + [bb] * (D - 1), "lmax_upper"), ([a] * (D - 1) + [bb - 3], "lmax_lower")):
                A = _spectrum_matrix(spec, rng)
                tr = mpmath.fsum(A[i, i] for i in range(D))
                tr2 = mpmath.fsum(A[i, j] ** 2 for i in range(D) for j in range(D))
                eq_digits.append(digits_agreed(getattr(ws_bounds(tr, tr2, D), which), max(spec)))
    ok = worst_margin > -mpmath.mpf(10) ** (-dps + 5) and min(eq_digits) >= TOL["precision_min_digits"]
    return Outcome(ok, {"matrices": n, "min_slack": float(worst_margin), "equality_digits": min(eq_digits)},
                   f"{n} matrices at dps={dps}: all bounds hold (min slack {float(worst_margin):.2e}); "
                   f"equality spectra attain the bounds to {min(eq_digits):.1f} digits")


def _mp_matrix(case: SpectrumCase):
    S = mpmath.matrix(case.S.tolist())
    return S * mpmath.diag([mpmath.mpf(x) for x in case.lams]) * mpmath.inverse(S)


def _float_matrix(case: SpectrumCase):
    return case.S @ np.diag(case.lams) @ np.linalg.inv(case.S)


def _moments_of(A, mp: bool):
    if mp:
        D = A.rows
        return mpmath.fsum(A[i, i] for i in range(D)), mpmath.fsum((A * A)[i, i] for i in range(D)), D
    return float(np.trace(A)), float(np.trace(A @ A)), A.shape[0]


def _bound_violation(lams, B, scale):
    """Largest violation of the four bounds and the k-th form, relative to ``scale``."""
    gaps = [lams[0] - B.lmax_upper, B.lmax_lower - lams[0], B.lmin_lower - lams[-1], lams[-1] - B.lmin_upper]
    for k in range(1, len(lams) + 1):
        lo, hi = B.kth(k)
        gaps += [lams[k - 1] - hi, lo - lams[k - 1]]
    return max(gaps) / scale


def theorem_bounds_property(bounds_fn=ws_bounds) -> Property:
    def screen(case):
        tr, tr2, D = _moments_of(_float_matrix(case), False)
        scale = 1 + float(np.max(np.abs(case.lams)))
        slack = TOL["ws_theorem_cond_slack"] * np.linalg.cond(case.S)
        return _bound_violation(case.lams, bounds_fn(tr, tr2, D), scale) - slack

    def confirm(case):
        with mpmath.workdps(TOL["confirm_dps"]):
            tr, tr2, D = _moments_of(_mp_matrix(case), True)
            lams = [mpmath.mpf(x) for x in case.lams]
            scale = 1 + max(abs(x) for x in lams)
            return float(_bound_violation(lams, bounds_fn(tr, tr2, D), scale) - TOL["ws_confirm_slack"])

    return Property("ws.theorem/bounds", spectra(), screen, confirm, SpectrumCase.to_json,
                    SpectrumCase.from_json, budget=150)


def theorem_equality_property(bounds_fn=ws_bounds) -> Property:
    """Equality cases: (hi, lo, …, lo) attains λ_max ≤ m + s√(D−1) and λ_min ≥ m − s/√(D−1)…"""
    from hypothesis import strategies as st

    strat = st.one_of(spectra(equality="top"), spectra(equality="bottom"))

    def gap(case, lams, B, absf):
        D = len(lams)
        top = absf(lams[1] - lams[-1]) == 0  # D−1 smallest equal
        if top:
            g = [absf(B.lmax_upper - lams[0]), absf(B.lmin_upper - lams[-1])]
        else:
            g = [absf(B.lmax_lower - lams[0]), absf(B.lmin_lower - lams[-1])]
        if D == 2:  # all four are equalities
            g = [absf(B.lmax_upper - lams[0]), absf(B.lmax_lower - lams[0]),
                 absf(B.lmin_lower - lams[-1]), absf(B.lmin_upper - lams[-1])]
        return max(g) / (1 + max(absf(x) for x in lams))

    def screen(case):
        tr, tr2, D = _moments_of(_float_matrix(case), False)
        return gap(case, case.lams, bounds_fn(tr, tr2, D), abs) - TOL["ws_equality_cond_slack"] * np.linalg.cond(case.S)

    def confirm(case):
        with mpmath.workdps(TOL["confirm_dps"]):
            tr, tr2, D = _moments_of(_mp_matrix(case), True)
            lams = [mpmath.mpf(x) for x in case.lams]
            return float(gap(case, lams, bounds_fn(tr, tr2, D), abs) - TOL["ws_confirm_slack"])

    return Property("ws.theorem/equality", strat, screen, confirm, SpectrumCase.to_json,
                    SpectrumCase.from_json, budget=100)


def _kth_equality_gaps(lams, B, absf):
    """(k-th form gaps, field gaps) on a two-level spectrum with k copies of the top: |kth(k).upper − λ_k|,
    |kth(k+1).lower − λ_{k+1}| (both equalities), and the identities kth(1) = (m, λ_max upper),
    kth(D) = (λ_min lower, m); plus the four fields where this spectrum attains them (k = 1: λ_max upper and
    λ_min upper; k = D − 1: λ_max lower and λ_min lower). A bound made looser *or* tighter moves a gap off 0."""
    D = len(lams)
    k = sum(1 for x in lams if x == lams[0])
    kth = [absf(B.kth(k)[1] - lams[0]), absf(B.kth(k + 1)[0] - lams[-1])]
    fields = [absf(B.kth(1)[1] - B.lmax_upper), absf(B.kth(D)[0] - B.lmin_lower),
              absf(B.kth(1)[0] - B.mean), absf(B.kth(D)[1] - B.mean)]
    if k == 1:
        fields += [absf(B.lmax_upper - lams[0]), absf(B.lmin_upper - lams[-1])]
    if k == D - 1:
        fields += [absf(B.lmax_lower - lams[0]), absf(B.lmin_lower - lams[-1])]
    scale = 1 + max(absf(x) for x in lams)
    return max(kth) / scale, max(fields) / scale


def theorem_kth_equality_property(bounds_fn=ws_bounds) -> Property:
    """The k-th form at its equality cases, both ways: on (a, …, a, b, …, b) with k copies of a > b,
    λ_k = m + s√((D−k)/k) and λ_{k+1} = m − s√(k/(D−k)) exactly (every k = 1..D−1), and ``kth(1)``/``kth(D)``
    agree with the λ_max/λ_min fields. An inequality check alone passes a k-th bound made looser."""

    def screen(case):
        tr, tr2, D = _moments_of(_float_matrix(case), False)
        slack = TOL["ws_equality_cond_slack"] * np.linalg.cond(case.S)
        return max(_kth_equality_gaps(case.lams, bounds_fn(tr, tr2, D), abs)) - slack

    def confirm(case):
        with mpmath.workdps(TOL["confirm_dps"]):
            tr, tr2, D = _moments_of(_mp_matrix(case), True)
            lams = [mpmath.mpf(x) for x in case.lams]
            g_kth, g_fields = _kth_equality_gaps(lams, bounds_fn(tr, tr2, D), abs)
            return float(max(g_kth - TOL["ws_kth_confirm_slack"], g_fields - TOL["ws_confirm_slack"]))

    return Property("ws.theorem/kth_equality", kfold_spectra(), screen, confirm, SpectrumCase.to_json,
                    SpectrumCase.from_json, budget=100)


# The real properties, built at import so that they are the ones registered under their names
# (``python -m checks replay`` finds them; a planted-bug copy built later does not replace them).
PROPERTIES = (theorem_bounds_property(), theorem_equality_property(), theorem_kth_equality_property())


def level_F(ctx: Context) -> Outcome:
    return run_properties(ctx, PROPERTIES, ID)
