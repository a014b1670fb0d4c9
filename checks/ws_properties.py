"""Falsification (F) for ws.theorem and ws.bound: properties with injectable evaluators.

Each property builder takes the evaluator it attacks (``bounds_fn`` or ``moments_fn``), so the
planted-bug tests can hand it a broken copy and require a confirmed counterexample within the default
budget. Screens run in float64; confirmations at 50 digits with mpmath (eigenvalues by ``eigsy`` or
exactly known by construction, Hessians by ``sympy.hessian`` in mpmath).

Why both directions: a bound that is too *loose* is also a bug (e.g. √D for √(D−1)), so the theorem
is falsified through its equality cases too, not just its inequalities; and λ_sup is only as right
as its inputs, so ws.bound also checks the closed-form moments against the dense Hessian's.
"""

from __future__ import annotations

import mpmath
import numpy as np

from checks.evidence import TOL, Outcome
from checks.falsify import NotApplicable, Property, run_properties
from checks.registry import Context
from checks.strategies import NetCase, SpectrumCase, ce_nets, spectra
from checks.ws import BOUND, THEOREM
from numerics.ws import ce_hessian_moments, ws_bounds
from numerics.ws.reference import ce_hessian_mpmath, ce_hessian_torch, mp_trace_moments

SCREEN_TOL = 1e-9  # relative float64 slack before a screen hit becomes a candidate
CONFIRM_TOL = mpmath.mpf(10) ** -30  # relative slack at 50 digits


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
        return _bound_violation(case.lams, bounds_fn(tr, tr2, D), scale) - 1e-7 * np.linalg.cond(case.S)

    def confirm(case):
        with mpmath.workdps(TOL["confirm_dps"]):
            tr, tr2, D = _moments_of(_mp_matrix(case), True)
            lams = [mpmath.mpf(x) for x in case.lams]
            scale = 1 + max(abs(x) for x in lams)
            return float(_bound_violation(lams, bounds_fn(tr, tr2, D), scale) - CONFIRM_TOL)

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
        return gap(case, case.lams, bounds_fn(tr, tr2, D), abs) - 1e-6 * np.linalg.cond(case.S)

    def confirm(case):
        with mpmath.workdps(TOL["confirm_dps"]):
            tr, tr2, D = _moments_of(_mp_matrix(case), True)
            lams = [mpmath.mpf(x) for x in case.lams]
            return float(gap(case, lams, bounds_fn(tr, tr2, D), abs) - CONFIRM_TOL)

    return Property("ws.theorem/equality", strat, screen, confirm, SpectrumCase.to_json,
                    SpectrumCase.from_json, budget=100)


def bound_property(moments_fn=ce_hessian_moments) -> Property:
    """λ_max(H) ≤ λ_sup, with λ_max exact (eigvalsh / mpmath eigsy of the dense reference)."""

    def screen(case: NetCase):
        H = ce_hessian_torch(*case.args, case.activation, bias=case.bias)
        lmax = float(np.linalg.eigvalsh(H)[-1])
        try:
            lsup = float(moments_fn(*case.args, case.activation, bias=case.bias).lambda_sup)
        except ValueError as exc:  # float64 overflow: the closed form asks for dps; not a verdict
            raise NotApplicable(str(exc)) from exc
        return (lmax - lsup) / (np.linalg.norm(H) + 1e-300) - SCREEN_TOL

    def confirm(case: NetCase):
        dps = TOL["confirm_dps"]
        H = ce_hessian_mpmath(*case.args, case.activation, bias=case.bias, dps=dps + 10)
        with mpmath.workdps(dps + 10):
            lmax = max(mpmath.eigsy(H, eigvals_only=True))
            scale = mpmath.sqrt(mp_trace_moments(H, dps + 10)[1]) + mpmath.mpf(10) ** -300
            lsup = moments_fn(*case.args, case.activation, bias=case.bias, dps=dps).lambda_sup
            return float((lmax - lsup) / scale - CONFIRM_TOL)

    return Property("ws.bound/upper", ce_nets(), screen, confirm, NetCase.to_json, NetCase.from_json, budget=120)


def moments_property(moments_fn=ce_hessian_moments) -> Property:
    """λ_sup's inputs: the closed-form (tr H, tr H²) equal the dense Hessian's, in every corner."""

    def rel(a, b, scale):
        return abs(a - b) / scale

    def screen(case: NetCase):
        H = ce_hessian_torch(*case.args, case.activation, bias=case.bias)
        try:
            m = moments_fn(*case.args, case.activation, bias=case.bias)
        except ValueError as exc:
            raise NotApplicable(str(exc)) from exc
        fro2 = float(np.sum(H * H))
        s1 = float(np.sum(np.abs(np.diag(H)))) + 1e-300
        return max(rel(m.trace, np.trace(H), s1), rel(m.trace_sq, fro2, fro2 + 1e-300)) - 1e-8

    def confirm(case: NetCase):
        dps = TOL["confirm_dps"]
        H = ce_hessian_mpmath(*case.args, case.activation, bias=case.bias, dps=dps + 10)
        tr, tr2 = mp_trace_moments(H, dps + 10)
        m = moments_fn(*case.args, case.activation, bias=case.bias, dps=dps)
        with mpmath.workdps(dps + 10):
            s1 = mpmath.fsum(abs(H[i, i]) for i in range(H.rows)) + mpmath.mpf(10) ** -300
            return float(max(rel(m.trace, tr, s1), rel(m.trace_sq, tr2, tr2 + mpmath.mpf(10) ** -300))
                         - CONFIRM_TOL)

    return Property("ws.bound/moments", ce_nets(), screen, confirm, NetCase.to_json, NetCase.from_json,
                    budget=120)


# The real properties, built at import so that they are the ones registered under their names
# (``python -m checks replay`` finds them; a planted-bug copy built later does not replace them).
P_THEOREM = (theorem_bounds_property(), theorem_equality_property())
P_BOUND = (bound_property(), moments_property())


@THEOREM.level("F")
def _(ctx: Context) -> Outcome:
    return run_properties(ctx, list(P_THEOREM), "ws.theorem/F")


@BOUND.level("F")
def _(ctx: Context) -> Outcome:
    return run_properties(ctx, list(P_BOUND), "ws.bound/F")
