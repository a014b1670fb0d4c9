"""flat.trace: Tr ∇²F_S = Σ_j (A_j + a_j² B_j) at an interpolator, plus (1/n) Σ_i r_i Σ_j a_j σ″(θ_j·x_i)‖x_i‖²
away from one.

Derivation: ``proofs.flat.trace.check_trace_against_hessian`` (``sympy.hessian`` of F_S built from its
definition, 5 families, symbolic c and slope). Evaluators: ``numerics.flat.flatness_trace``,
``numerics.flat.trace_parts`` (float64) and ``numerics.flat.flatness_trace_mp`` (mpmath). P: against the exact
``sympy.hessian`` at dyadic data (``checks.flat.oracles.exact_hessian_trace``); A: against
``torch.func.hessian`` (``checks.flat.oracles.torch_hessian_trace``).
"""

from __future__ import annotations

import mpmath

from checks.evidence.outcome import Outcome, digits_agreed, rel_err
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.flat import oracles
from checks.flat.cases import cases
from numerics import flat
from proofs import flat as proof

ID = "flat.trace"


def level_S(ctx: Context) -> Outcome:
    # quick: a smoke run on the two smallest sizes (the full run adds (1,2,2) and (2,2,2))
    res = proof.check_trace_against_hessian(proof.TRACE_SIZES[:2] if ctx.quick else proof.TRACE_SIZES)
    sizes = sorted({(cs.n, cs.d, cs.m) for cs in res.cases})
    return Outcome(res.ok, {"checked": res.checked, "exact_zero": res.zeros, "families": len(proof.FAMILIES),
                            "max_params": max(cs.params for cs in res.cases)},
                   f"{res.zeros}/{res.checked} differences trace(sympy.hessian F_S) − closed form simplify to 0 "
                   f"(with residual term, and at y = h(X)); 5 families (symbolic c, slope), (n,d,m) ∈ {sizes}",
                   details={"cases": [cs.__dict__ for cs in res.cases]})


def level_P(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    digits = []
    for act, a, Th, X, y in cases(ctx, "flat.trace/P", 3, 2, 3, dyadic_data=True):
        exact = oracles.exact_hessian_trace(a, Th, X, y, act, digits=dps + 10)
        with mpmath.workdps(dps):
            digits.append(digits_agreed(flat.flatness_trace_mp(a, Th, X, y, act, dps=dps), exact))
    worst = min(digits)
    return Outcome(worst >= TOL["precision_min_digits"], {"digits_agreed": worst, "cases": len(digits)},
                   f"closed form in mpmath (dps={dps}) vs exact sympy.hessian at dyadic data: ≥ {worst:.1f} digits "
                   f"({len(digits)} activations, n=3, d=2, m=3, residual term on)")


def level_A(ctx: Context) -> Outcome:
    errs, errs_i = [], []
    for act, a, Th, X, y in cases(ctx, "flat.trace/A", 25, 3, 4):
        errs.append(rel_err(flat.flatness_trace(a, Th, X, y, act), oracles.torch_hessian_trace(a, Th, X, y, act)))
        yi = flat.network(a, Th, X, act)  # an interpolator of its own outputs: residual term vanishes
        parts = flat.trace_parts(a, Th, X, yi, act)
        errs_i.append(rel_err(parts.gauss_newton, oracles.torch_hessian_trace(a, Th, X, yi, act)))
    worst = max(errs + errs_i)
    return Outcome(worst <= TOL["autograd_rel"], {"max_rel_err": max(errs), "max_rel_err_interpolating":
                                                 max(errs_i), "cases": len(errs)},
                   f"vs torch.func.hessian float64: rel err {max(errs):.1e} at random w, {max(errs_i):.1e} for "
                   f"Σ(A_j + a_j²B_j) at interpolators ({len(errs)} activations, n=25, d=3, m=4; tol "
                   f"{TOL['autograd_rel']:.0e})")
