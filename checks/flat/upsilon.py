"""flat.upsilon: min over rescalings of the trace at an interpolator is Υ = K_c Σ_j A_j^{1/(c+1)} B_j^{c/(c+1)}
|a_j|^p, p = 2c/(c+1), K_c = (c+1)c^{−c/(c+1)}, attained at λ_j^{2c+2} = a_j²B_j/(cA_j); Υ ≤ the trace under any
rescaling.

Derivation: ``proofs.flat.upsilon.derive_upsilon`` (generated ``numerics._derived.flat.upsilon_neuron``,
``lambda_opt``). Evaluators: ``numerics.flat.upsilon``, ``upsilon_mp``, ``optimal_rescaling``, ``rescale``.
P: against an mpmath minimisation with no closed form (``checks.flat.oracles.mp_min_rescaled_trace``) and the
exact trace at λ_opt; A: against ``torch.func.hessian`` after rescaling by λ_opt.

F: every property takes the per-neuron closed form it attacks (``neuron_fn``, the signature of
``numerics._derived.flat.upsilon_neuron``), so the planted-bug tests hand it a broken copy. The trace side of
every comparison is the Gauss–Newton sum Σ_j (A_j + a_j² B_j) recomputed from its definition (P and A tie it to
``sympy.hessian`` and ``torch.func.hessian``). Why two directions: "Υ ≤ trace under any rescaling" only catches
an Υ that is too large; a K_c or an exponent that makes Υ too small passes it, so the minimum is also required
to be *attained*, at λ_opt.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np

from checks.evidence.outcome import Outcome, digits_agreed, rel_err
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.flat import oracles
from checks.flat.cases import cases
from checks.flat.strategies import FlatCase, flat_nets
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import flat
from numerics._derived import flat as derived
from numerics.namespaces import MP
from proofs import flat as proof

ID = "flat.upsilon"


def level_S(ctx: Context) -> Outcome:
    ud = proof.derive_upsilon()
    return Outcome(ud.ok, {"steps": len(ud.checks), "exact": sum(ud.checks.values()), "p": str(ud.p),
                           "K_c": str(ud.K)},
                   f"{sum(ud.checks.values())}/{len(ud.checks)} steps exact: scaling exponents "
                   f"{ {k: str(v) for k, v in ud.exponents.items()} }, solve T′(λ)=0 → λ^(2c+2) = {ud.lambda_pow}, "
                   f"T″ > 0, p = {ud.p}, K_c = {ud.K} read off by log-derivatives",
                   details={k: bool(v) for k, v in ud.checks.items()})


def level_P(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    digits_u, digits_t, digits_l = [], [], []
    for act, a, Th, X, _ in cases(ctx, "flat.upsilon/P", 6, 2, 3, dyadic_data=True):
        spec = flat.get_activation(act)
        with mpmath.workdps(dps):
            md = flat.mp_inputs(a, Th, X)
            A_, B_, _, _ = flat.neuron_moments_mp(spec, md["Theta"], md["X"])
            mins = [oracles.mp_min_rescaled_trace(A_[j], B_[j], mpmath.mpf(a[j]) ** 2, spec.c, dps)
                    for j in range(len(a))]
            refs = [r[0] for r in mins]
            digits_u.append(digits_agreed(flat.upsilon_mp(a, Th, X, act, dps=dps), mpmath.fsum(refs)))
            # the minimiser too (two sides: Υ right with λ_opt wrong would pass the value alone): both generated
            # forms of λ_opt, the power and exp of the sum of logs, against the oracle's root at dps digits
            for j in range(len(a)):
                if A_[j] > 0 and B_[j] > 0 and a[j] != 0:
                    args = (A_[j], B_[j], abs(mpmath.mpf(a[j])), mpmath.mpf(spec.c))
                    digits_l.append(min(digits_agreed(derived.lambda_opt(*args, _m=MP), mins[j][1]),
                                        digits_agreed(mpmath.exp(derived.log_lambda_opt(*args, _m=MP)), mins[j][1])))
            # the trace after the optimal rescaling, from the exact sympy Hessian, equals Upsilon
            lam = flat.optimal_rescaling(a, Th, X, act)
            if not np.all(np.isfinite(lam)):  # a neuron dead on every sample: nothing to rescale
                continue
            a2, Th2 = flat.rescale(a, Th, lam, act)
            yi = [float(v) for v in flat.network(a2, Th2, X, act)]
            digits_t.append(min(16.0, digits_agreed(flat.upsilon(a, Th, X, act),
                                                    flat.flatness_trace_mp(a2, Th2, X, yi, act, dps=dps))))
    worst = min(digits_u)
    worst_l = min(digits_l, default=0.0)
    ok = (worst >= TOL["precision_min_digits"] and len(digits_t) >= (2 if ctx.quick else 4)
          and min(digits_t) >= TOL["flat_lambda_digits"] and worst_l >= TOL["precision_min_digits"])
    return Outcome(ok, {"digits_agreed": worst, "cases": len(digits_u), "trace_at_lambda_opt_digits":
                        min(digits_t), "lambda_opt_digits": worst_l, "lambda_opt_neurons": len(digits_l)},
                   f"closed-form Υ at dps={dps} vs mpmath minimisation of λ^(2c)A + λ^(−2)a²B (root of the "
                   f"derivative, no closed form): ≥ {worst:.1f} digits; its minimiser λ_opt (both generated forms) "
                   f"to ≥ {worst_l:.1f} digits over {len(digits_l)} neurons; trace after the float64 λ_opt "
                   f"rescaling equals Υ to {min(digits_t):.1f} digits (float64 λ)")


def level_A(ctx: Context) -> Outcome:
    errs, stat = [], []
    for act, a, Th, X, _ in cases(ctx, "flat.upsilon/A", 25, 3, 4):
        lam = flat.optimal_rescaling(a, Th, X, act)
        a2, Th2 = flat.rescale(a, Th, lam, act)
        yi = flat.network(a, Th, X, act)
        u = flat.upsilon(a, Th, X, act)
        t_opt = oracles.torch_hessian_trace(a2, Th2, X, yi, act)
        errs.append(rel_err(u, t_opt))
        # stationarity: perturbing every λ_j by a factor e^{±1e-3} raises the torch trace (second order)
        for eps in (1e-3, -1e-3):
            a3, Th3 = flat.rescale(a2, Th2, np.full(len(a), np.exp(eps)), act)
            stat.append(oracles.torch_hessian_trace(a3, Th3, X, yi, act) - t_opt
                        >= -TOL["flat_stationarity_rel"] * abs(t_opt))
    worst = max(errs)
    ok = worst <= TOL["autograd_rel"] and all(stat)
    return Outcome(ok, {"max_rel_err": worst, "cases": len(errs), "perturbations_not_lower": sum(stat)},
                   f"Υ vs torch.func.hessian trace after rescaling by λ_opt: max rel err {worst:.1e} "
                   f"(tol {TOL['autograd_rel']:.0e}); {sum(stat)}/{len(stat)} perturbed rescalings give a trace ≥ Υ")


# --------------------------------------------------------------------------------------------
# F: Υ ≤ trace under any rescaling, and the minimum is attained at λ_opt


def _singular(case: FlatCase, Th=None) -> bool:
    """σ″ is infinite at 0 for 1 < c < 2; a pre-activation at (or near) 0 is outside the hypotheses."""
    c = flat.get_activation(case.act).c
    Z = case.X @ (case.Theta if Th is None else Th).T
    return 1 < c < 2 and bool(np.any(np.abs(Z) < TOL["flat_singular_rel"] * (1 + np.max(np.abs(Z), initial=0.0))))


def _gn_mp(a, Theta, X, act):
    """Σ_j (A_j + a_j² B_j) in mpmath from float64 inputs: the trace at an interpolator (definition)."""
    spec = flat.get_activation(act)
    md = flat.mp_inputs(a, Theta, X)
    A_, B_, _, _ = flat.neuron_moments_mp(spec, md["Theta"], md["X"])
    return mpmath.fsum(A_[j] + md["a"][j] ** 2 * B_[j] for j in range(len(A_)))


def upsilon_le_trace_property(neuron_fn=derived.upsilon_neuron) -> Property:
    """Υ(w′) ≤ Tr ∇²F_S(w′) for the case's rescaled net w′ at its own outputs."""
    ups = functools.partial(flat.upsilon, neuron=neuron_fn)
    ups_mp = functools.partial(flat.upsilon_mp, neuron=neuron_fn)

    def screen(case):
        a2, Th2 = flat.rescale(case.a, case.Theta, case.lam, case.act)
        if _singular(case, Th2):
            raise NotApplicable
        y = flat.network(a2, Th2, case.X, case.act)  # w' interpolates its own outputs
        T = flat.flatness_trace(a2, Th2, case.X, y, case.act)
        return (ups(a2, Th2, case.X, case.act) - T) / (1 + abs(T)) - TOL["flat_screen_rel"]

    def confirm(case):
        a2, Th2 = flat.rescale(case.a, case.Theta, case.lam, case.act)
        with mpmath.workdps(TOL["confirm_dps"]):
            T = _gn_mp(a2, Th2, case.X, case.act)
            return float((ups_mp(a2, Th2, case.X, case.act, dps=TOL["confirm_dps"]) - T) / (1 + abs(T))
                         - mpmath.mpf(TOL["flat_confirm_slack"]))

    return Property("flat.upsilon/le_trace", flat_nets(), screen, confirm, FlatCase.to_json,
                    FlatCase.from_json, budget=150)


def upsilon_attained_property(neuron_fn=derived.upsilon_neuron) -> Property:
    """Υ(w) equals the trace at w rescaled by λ_opt (to float64 rounding of λ_opt)."""
    ups = functools.partial(flat.upsilon, neuron=neuron_fn)
    ups_mp = functools.partial(flat.upsilon_mp, neuron=neuron_fn)

    def opt_point(case):
        """(a, Theta) without the a_j = 0 neurons (their infimum, λ → 0, is not attained) and w at λ_opt."""
        keep = case.a != 0
        if not np.any(keep):
            raise NotApplicable
        a, Th = case.a[keep], case.Theta[keep]
        A_, B_ = flat.neuron_moments(Th, case.X, case.act)
        lam = flat.optimal_rescaling(a, Th, case.X, case.act)
        lam = np.where((A_ == 0) & (B_ == 0), 1.0, lam)  # a neuron dead on all samples contributes 0 anyway
        if not np.all(np.isfinite(lam) & (lam > 1e-30) & (lam < 1e30)):
            raise NotApplicable
        return a, Th, *flat.rescale(a, Th, lam, case.act)

    def screen(case):
        a, Th, a2, Th2 = opt_point(case)
        y = flat.network(a2, Th2, case.X, case.act)
        if _singular(case, Th2):
            raise NotApplicable
        T = flat.flatness_trace(a2, Th2, case.X, y, case.act)
        return abs(ups(a, Th, case.X, case.act) - T) / (1 + abs(T)) - TOL["flat_rounded_rel"]

    def confirm(case):
        a, Th, a2, Th2 = opt_point(case)
        with mpmath.workdps(TOL["confirm_dps"]):
            T = _gn_mp(a2, Th2, case.X, case.act)
            U = ups_mp(a, Th, case.X, case.act, dps=TOL["confirm_dps"])
            return float(abs(U - T) / (1 + abs(T)) - TOL["flat_rounded_rel"])

    return Property("flat.upsilon/attained", flat_nets(), screen, confirm, FlatCase.to_json,
                    FlatCase.from_json, budget=150)


# The real properties, built at import so that they are the ones registered under their names
# (``python -m checks replay`` finds them; a planted-bug copy built later does not replace them).
PROPERTIES = (upsilon_le_trace_property(), upsilon_attained_property())


def level_F(ctx: Context) -> Outcome:
    return run_properties(ctx, PROPERTIES, ID)
