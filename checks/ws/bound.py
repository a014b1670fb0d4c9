"""ws.bound: λ_max(H) ≤ λ_sup = μ + √(D−1)σ, μ = tr H/D, σ² = tr H²/D − μ², for all θ and data.

Evaluator: :func:`numerics.ws.ce_hessian_moments` (``lambda_sup``). A: the exact λ_max of a torch.func
Hessian. F: λ_max of the dense reference against λ_sup, and λ_sup's inputs (tr H, tr H²) against the
reference's, with an injectable ``moments_fn``. The float screen is ``sympy.hessian`` of the per-sample loss
lambdified to numpy (:func:`numerics.ws.reference.ce_hessian_numpy`: 12–20× cheaper per example than torch.func
on these tiny nets, and accurate in the saturated tails where torch.func's float64 Hessian is off by up to 3%);
the confirmation is the same derivative lambdified to mpmath at 60 digits (``eigsy``) for the bound, and evaluated
in arb balls (proved distances, :func:`_proved_gap`) for λ_sup's inputs tr H, tr H².
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.runners.falsify import NotApplicable, Property, SuiteFailed, Undecided, run_properties
from checks.ws.cases import small_cases
from checks.ws.strategies import NetCase, ce_nets
from numerics.ws import ce_hessian_moments
from numerics.ws.reference import (
    ce_hessian_arb,
    ce_hessian_moments_arb,
    ce_hessian_mpmath,
    ce_hessian_numpy,
    ce_hessian_torch,
    mp_trace_moments,
)

ID = "ws.bound"


def level_A(ctx: Context) -> Outcome:
    ratios, slack = [], []
    for act, bias, net in small_cases(ctx, "ws.bound/A", n=25):
        H = ce_hessian_torch(*net, act, bias=bias)
        lmax = float(np.linalg.eigvalsh(H)[-1])
        lsup = float(ce_hessian_moments(*net, act, bias=bias).lambda_sup)
        ratios.append(lmax / lsup)
        slack.append(lsup - lmax)
    # one-sided by the claim (an inequality with no equality case for CE Hessians); a λ_sup that is too large is
    # caught where it is computed: ws.theorem (the bounds at their equality cases) and ws.bound/moments (tr H, tr H², D)
    ok = min(slack) >= 0
    digits = dps_lambda_sup_digits(ctx)
    ok_d = digits >= TOL["precision_min_digits"]
    verdict = (f"agrees: λ_max ≤ λ_sup in all {len(ratios)} autograd cases" if ok else
               f"does not agree: λ_max > λ_sup in {sum(x < 0 for x in slack)} of {len(ratios)} cases")
    return Outcome(ok and ok_d, {"cases": len(ratios), "max_lmax_over_lsup": max(ratios), "min_slack": min(slack),
                                 "dps_lambda_sup_digits": digits},
                   f"λ_max(torch Hessian) ≤ λ_sup in {len(ratios)} cases; λ_max/λ_sup ∈ "
                   f"[{min(ratios):.3f}, {max(ratios):.3f}]; a dps = {TOL['precision_dps']} result's λ_sup is "
                   f"μ + √(D−1)σ of its own moments to {digits:.1f} digits", verdict=verdict)


def dps_lambda_sup_digits(ctx: Context) -> float:
    """The fewest digits, over small nets and the D = 2 equality-prone nets, to which a ``dps=`` result's reported
    λ_sup equals μ + √(D − 1)σ recomputed here from its tr H and tr H² at 2·dps digits (the formula of the claim,
    not the evaluator's ``ws_bounds``): a λ_sup evaluated at a lower working precision than the moments it is built
    from agrees to ~16 digits only."""
    dps = int(TOL["precision_dps"])
    worst = math.inf
    rng = ctx.rng("ws.bound/A/dps")
    nets = [(net, act, bias) for act, bias, net in small_cases(ctx, "ws.bound/A/dps", n=6)][:4]
    for _ in range(2):  # M = 1, N = 1 without biases: D = 2
        X = rng.standard_normal((5, 1))
        nets.append(((rng.standard_normal((1, 1)), None, rng.standard_normal(1), None, X,
                      (rng.random(5) < 0.5).astype(float)), "tanh", False))
    for net, act, bias in nets:
        m = ce_hessian_moments(*net, act, bias=bias, dps=dps)
        with mpmath.workdps(2 * dps):
            D = mpmath.mpf(m.dim)
            mu = m.trace / D
            var = m.trace_sq / D - mu * mu
            ref = mu + mpmath.sqrt(D - 1) * mpmath.sqrt(max(var, 0))
            got = m.lambda_sup
            err = abs(got - ref) / max(abs(ref), mpmath.mpf(10) ** (-4 * dps))
            worst = min(worst, float(-mpmath.log10(err)) if err > 0 else float(2 * dps))
    return worst


def upper_bound_property(name, strategy, case_type, dense_float, dense_mpmath, moments_fn,
                         dense_arb=None) -> Property:
    """λ_max(H) ≤ λ_sup for one loss (BCE here, softmax CE in :mod:`checks.ws.softmax`): λ_max of the dense
    reference (eigvalsh in float64 to screen), λ_sup from ``moments_fn``.

    With ``dense_arb`` (BCE: :func:`numerics.ws.reference.ce_hessian_arb`; revision 2) the confirmation is a proof
    either way, about the number the suite reports: L = ``moments_fn(..., dps=50).lambda_sup`` taken as given,
    t = L + slack·‖H‖_F. A refutation is (tI − H) ≻ 0 proved by Cholesky in arb balls of the exact H
    (:func:`numerics.ws.arb_balls.proves_positive_definite`); a confirmation is a Rayleigh quotient uᵀHu/uᵀu > t proved
    in the same balls, u the top eigenvector of the midpoints (a lower bound on λ_max). Neither proved is
    :class:`checks.runners.falsify.Undecided`, counted apart, never a refutation. The reference runs at 2·dps + 10
    digits:
    near the rank-one equality case tI − H has condition ≈ 1/slack = 10³⁰, which the Cholesky's balls must
    absorb. Without it (softmax; revision 1) the confirmation is mpmath at 60 digits: a Cholesky, else eigsy."""

    def screen(case):
        H = dense_float(*case.args, case.activation, bias=case.bias)
        lmax = float(np.linalg.eigvalsh(H)[-1])
        try:
            lsup = float(moments_fn(*case.args, case.activation, bias=case.bias).lambda_sup)
        except ValueError as exc:  # float64 overflow: the closed form asks for dps; not a verdict
            raise NotApplicable(str(exc)) from exc
        return (lmax - lsup) / (np.linalg.norm(H) + 1e-300) - TOL["ws_screen_slack"]

    def confirm(case):
        dps = TOL["confirm_dps"]
        H = dense_mpmath(*case.args, case.activation, bias=case.bias, dps=dps + 10)
        with mpmath.workdps(dps + 10):
            scale = mpmath.sqrt(mp_trace_moments(H, dps + 10)[1]) + mpmath.mpf(10) ** -300
            lsup = moments_fn(*case.args, case.activation, bias=case.bias, dps=dps).lambda_sup
            slack = TOL["ws_confirm_slack"]
            # λ_max < λ_sup + slack·scale iff (λ_sup + slack·scale)I − H is positive definite: a Cholesky at dps + 10
            # digits settles most candidates (the screen's near-equality cases) at a sixth of eigsy's cost. It then
            # returns −slack, an upper bound on the margin (only its sign is used), not the margin itself.
            try:
                mpmath.cholesky((lsup + slack * scale) * mpmath.eye(H.rows) - H)
                return -slack
            except (ValueError, ZeroDivisionError):
                pass  # not positive definite at this precision: the margin itself, from the spectrum
            lmax = max(mpmath.eigsy(H, eigvals_only=True))
            return float((lmax - lsup) / scale - slack)

    def confirm_arb(case):
        from flint import arb

        from numerics.ws.arb_balls import ctx, from_mpf, proves_positive_definite, rayleigh_lower

        dps = TOL["confirm_dps"]
        ref = dense_arb(*case.args, case.activation, bias=case.bias, dps=2 * dps + 10)
        if not ref["rigorous"]:
            raise Undecided(f"{name}: the reference's unit tables are not enclosures (a SymPy activation)")
        m = moments_fn(*case.args, case.activation, bias=case.bias, dps=dps)
        H, D = ref["H"], ref["dim"]
        slack = TOL["ws_confirm_slack"]
        with ctx.workprec(ref["prec"]):
            ball = m.lambda_sup_ball() if hasattr(m, "lambda_sup_ball") else None
            if ball is None:  # no radius: the reported number, taken as given
                try:
                    lsup = m.lambda_sup
                except ValueError as exc:  # moments the suite claims exact, yet "no real spectrum": its failure
                    raise SuiteFailed(f"{name}: λ_sup raised on a valid net ({exc})") from exc
                if isinstance(lsup, int | float):
                    lsup = mpmath.mpf(lsup)
                if not (isinstance(lsup, mpmath.mpf) and mpmath.isfinite(lsup)):
                    raise SuiteFailed(f"{name}: λ_sup = {lsup!r} is not a finite real number")
                lo = hi = from_mpf(lsup)
            elif not ball.is_finite():
                raise Undecided(f"{name}: the closed form's λ_sup ball is not finite ({ball})")
            else:
                lo, hi = ball.lower(), ball.upper()
            fro = ref["frobenius"]
            if all(h.is_exact() and h == 0 for h in H.flat):  # H = 0: λ_max = 0 exactly
                if lo >= 0:
                    return -slack
                if hi < 0:
                    raise SuiteFailed(f"{name}: λ_sup < 0 = λ_max for H = 0")
                raise Undecided(f"{name}: H = 0 and the λ_sup ball {ball} contains 0")
            if not fro > 0:
                raise Undecided(f"{name}: ‖H‖_F is not proved positive ({fro})")
            # refuted: λ_max < lo + slack·‖H‖_F ≤ λ_sup + slack·‖H‖_F, by a Cholesky proof
            t_lo = lo + arb(slack) * fro.lower()
            if proves_positive_definite([[(t_lo if i == j else 0) - H[i, j] for j in range(D)] for i in range(D)]):
                return -slack  # an upper bound on the margin (its sign is what counts)
            mid = np.array([[float(H[i, j].mid()) for j in range(D)] for i in range(D)])
            u = np.linalg.eigh(mid)[1][:, -1]
            gap = (rayleigh_lower(H, u) - hi - arb(slack) * fro.upper()) / fro.upper()
            if gap > 0:  # proved: λ_max ≥ uᵀHu/uᵀu > λ_sup + slack·‖H‖_F
                return max(float(gap.lower()), math.ulp(0.0))
        raise Undecided(f"{name}: neither λ_max < λ_sup + slack·‖H‖_F nor the converse proved at "
                        f"{ref['prec']} bits (λ_sup ∈ [{lo}, {hi}], Rayleigh gap {gap})")

    return Property(name, strategy, screen, confirm if dense_arb is None else confirm_arb, case_type.to_json,
                    case_type.from_json, budget=120, revision=1 if dense_arb is None else 2)


def bound_property(moments_fn=ce_hessian_moments) -> Property:
    """λ_max(H) ≤ λ_sup, with λ_max exact (eigvalsh / mpmath eigsy of the dense reference). One-sided by the claim;
    :func:`moments_property` is its other side (λ_sup's inputs exactly), ws.theorem the bound's own."""
    return upper_bound_property("ws.bound/upper", ce_nets(), NetCase, ce_hessian_numpy, ce_hessian_mpmath,
                                moments_fn, dense_arb=ce_hessian_arb)


def _proved_gap(value, radius, ball, scale) -> float:
    """A lower bound on |value − x| / scale over x in the arb ``ball`` and value ± ``radius`` (0 if they meet).

    ``scale`` is an arb ball: proved positive, the gap is relative to its upper end; an exact 0 (the reference is
    exactly zero) makes any proved gap unbounded relative to it, reported as 1.0; a ball that straddles 0 proves
    nothing (:class:`Undecided`). A positive gap never rounds to 0.0."""
    from flint import arb

    from numerics.ws.arb_balls import from_mpf

    # from_mpf is exact at any precision; mpmath.mpf(value) would round a 50-digit value to the working 15 digits
    r = from_mpf(radius) if radius is not None else arb(0)
    lower = arb((from_mpf(value) - ball).abs_lower()) - r
    if not lower > 0:
        return 0.0
    if scale > 0:
        return max(float((lower / scale.upper()).lower()), math.ulp(0.0))
    if scale.is_exact() and scale == 0:
        return 1.0
    raise Undecided(f"the scale {scale} of a proved gap {lower} is not proved positive")


def trace_moments_property(name, strategy, case_type, dense_float, dense_mpmath, moments_fn,
                           dense_arb=None) -> Property:
    """λ_sup's inputs for one loss (BCE here, softmax CE in :mod:`checks.ws.softmax`): the closed-form
    (tr H, tr H²) equal the dense Hessian's, in every corner, and the reported D is the dense Hessian's dimension
    (μ = tr H/D and σ use it).

    With ``dense_arb`` (BCE: :func:`numerics.ws.reference.ce_hessian_moments_arb`) the confirmation is proved: the
    reference is a ball containing the exact dense value, the closed form comes with its own radius, and the margin
    is a lower bound on their relative distance, so a positive one is a disagreement whatever the working
    precision. Without it (softmax) the reference is the mpmath dense Hessian at ``confirm_dps + 10`` digits."""

    def rel(a, b, scale):
        return abs(a - b) / scale

    def screen(case):
        H = dense_float(*case.args, case.activation, bias=case.bias)
        try:
            m = moments_fn(*case.args, case.activation, bias=case.bias)
        except ValueError as exc:  # float64 overflow: the closed form asks for dps; not a verdict
            raise NotApplicable(str(exc)) from exc
        if m.dim != H.shape[0]:  # D enters μ = tr H/D and σ: it must be the number of parameters
            return 1.0
        fro2 = float(np.sum(H * H))
        s1 = float(np.sum(np.abs(np.diag(H)))) + 1e-300
        return max(rel(m.trace, np.trace(H), s1), rel(m.trace_sq, fro2, fro2 + 1e-300)) - TOL["ws_moments_screen"]

    def confirm_arb(case):

        dps = TOL["confirm_dps"]
        ref = dense_arb(*case.args, case.activation, bias=case.bias, dps=dps + 10)
        m = moments_fn(*case.args, case.activation, bias=case.bias, dps=dps)
        if m.dim != ref["dim"]:
            return 1.0
        if not ref["rigorous"]:
            raise Undecided(f"{name}: the reference's unit tables are not enclosures (a SymPy activation)")
        rad = m.radius or (None, None)
        return max(_proved_gap(m.trace, rad[0], ref["trace"], ref["abs_diag"]),
                   _proved_gap(m.trace_sq, rad[1], ref["trace_sq"], abs(ref["trace_sq"]))) \
            - TOL["ws_confirm_slack"]

    def confirm(case):
        dps = TOL["confirm_dps"]
        H = dense_mpmath(*case.args, case.activation, bias=case.bias, dps=dps + 10)
        tr, tr2 = mp_trace_moments(H, dps + 10)
        m = moments_fn(*case.args, case.activation, bias=case.bias, dps=dps)
        if m.dim != H.rows:
            return 1.0
        with mpmath.workdps(dps + 10):
            s1 = mpmath.fsum(abs(H[i, i]) for i in range(H.rows)) + mpmath.mpf(10) ** -300
            return float(max(rel(m.trace, tr, s1), rel(m.trace_sq, tr2, tr2 + mpmath.mpf(10) ** -300))
                         - TOL["ws_confirm_slack"])

    # revision 3: the proved gap has no 1e-300 floor in its scale (revision 2's floor hid disagreements in tr H below
    # ~1e-300, where the campaign's deep cancellations live)
    return Property(name, strategy, screen, confirm if dense_arb is None else confirm_arb, case_type.to_json,
                    case_type.from_json, budget=120, revision=1 if dense_arb is None else 3)


def moments_property(moments_fn=ce_hessian_moments) -> Property:
    """λ_sup's inputs: the closed-form (tr H, tr H²) equal the dense Hessian's, in every corner, and the reported
    D is the dense Hessian's dimension (μ = tr H/D and σ use it)."""
    return trace_moments_property("ws.bound/moments", ce_nets(), NetCase, ce_hessian_numpy, ce_hessian_mpmath,
                                  moments_fn, dense_arb=ce_hessian_moments_arb)


PROPERTIES = (bound_property(), moments_property())


def level_F(ctx: Context) -> Outcome:
    return run_properties(ctx, PROPERTIES, ID)
