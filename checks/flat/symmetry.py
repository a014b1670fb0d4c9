"""flat.symmetry: the rescaling (a_j, θ_j) → (λ_j^{−c} a_j, λ_j θ_j), λ_j > 0, leaves h unchanged; σ′ is
(c−1)-homogeneous.

Derivation: ``proofs.flat.symmetry.derive_homogeneity`` (abstract σ, every family branch by branch).
Evaluators: ``numerics.flat.rescale``, ``numerics.flat.network`` and ``Activation.d1`` / ``Activation.mp``;
the A level compares them with torch float64 autograd (``checks.flat.oracles``), the F level attacks the
invariance and the homogeneity of σ′ with :func:`symmetry_property`.
"""

from __future__ import annotations

import mpmath
import numpy as np

from checks.evidence.outcome import Outcome, rel_err
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.flat import oracles
from checks.flat.cases import ACTS, cases
from checks.flat.strategies import FlatCase, flat_nets
from checks.runners.falsify import Property, run_properties
from numerics import flat
from proofs import flat as proof

ID = "flat.symmetry"


def level_S(ctx: Context) -> Outcome:
    res = proof.derive_homogeneity()
    ok = res.ok
    return Outcome(ok, {"families": len(res.invariance), "invariant": sum(res.invariance.values()),
                        "sigma_prime_identity": res.derivative_ok},
                   f"abstract σ: d/dt of σ(λt) = λ^c σ(t) gives σ′(λt) = {res.sigma_prime_identity} "
                   f"({'exact' if res.derivative_ok else 'FAILED'}); h invariant on both branches for "
                   f"{sum(res.invariance.values())}/{len(res.invariance)} families (symbolic c, λ > 0)",
                   details={"invariance": res.invariance})


def level_A(ctx: Context) -> Outcome:
    rng = ctx.rng("flat.symmetry/A")
    errs_h, errs_d = [], []
    for act, a, Th, X, _ in cases(ctx, "flat.symmetry/A", 20, 3, 5):
        lam = np.exp(rng.uniform(-2, 2, size=a.shape))
        a2, Th2 = flat.rescale(a, Th, lam, act)
        errs_h.append(rel_err(oracles.torch_network(a2, Th2, X, act), oracles.torch_network(a, Th, X, act)))
        c = flat.get_activation(act).c
        t = rng.normal(size=50)
        for L in (0.3, 2.7):
            errs_d.append(rel_err(oracles.torch_sigma_prime(act, L * t),
                                  L ** (c - 1) * oracles.torch_sigma_prime(act, t)))
    worst = max(max(errs_h), max(errs_d))
    return Outcome(worst <= TOL["autograd_rel"], {"max_rel_err_h": max(errs_h), "max_rel_err_sigma_prime":
                                                 max(errs_d), "activations": len(ACTS)},
                   f"torch float64: h after random rescaling rel err {max(errs_h):.1e}; autograd σ′(λt) vs "
                   f"λ^(c−1)σ′(t) rel err {max(errs_d):.1e} ({len(ACTS)} activations, tol "
                   f"{TOL['autograd_rel']:.0e})")


def _derivative_gap(case, mp: bool) -> float:
    """max |σ′(t) − dσ/dt| / (1 + |dσ/dt|) over the case's pre-activations t away from the kink at 0, with σ′ the
    float64 ``Activation.d1`` under test and dσ/dt a central difference of σ itself (float64 screen) or
    ``mpmath.diff`` of the 50-digit σ (confirmation). Homogeneity alone passes a σ′ with the wrong sign."""
    spec = flat.get_activation(case.act)
    t = (case.X @ case.Theta.T).ravel()
    t = t[np.abs(t) > 1e-3 * (1 + np.max(np.abs(t), initial=0.0))]
    if not t.size:
        return -1.0
    d1 = spec.d1(t)
    if not mp:
        h = 1e-6 * np.abs(t)
        ref = (spec(t + h) - spec(t - h)) / (2 * h)
        return float(np.max(np.abs(d1 - ref) / (1 + np.abs(ref))))
    worst = mpmath.mpf(0)
    for ti, di in zip(t, d1, strict=True):
        ref = mpmath.diff(lambda z: spec.mp(z), mpmath.mpf(float(ti)))
        worst = max(worst, abs(mpmath.mpf(float(di)) - ref) / (1 + abs(ref)))
    return worst


def symmetry_property() -> Property:
    """h(rescaled w) = h(w) and σ′(λt) = λ^{c−1}σ′(t) at the case's λ_j and pre-activations (relative), and σ′ is
    the derivative of σ there (a σ′ of the wrong sign is still homogeneous)."""

    def parts(case, mp: bool):
        spec = flat.get_activation(case.act)
        if not mp:
            a2, Th2 = flat.rescale(case.a, case.Theta, case.lam, case.act)
            h, h2 = flat.network(case.a, case.Theta, case.X, case.act), flat.network(a2, Th2, case.X, case.act)
            scale = 1 + float(np.sum(np.abs(spec(case.X @ case.Theta.T)) @ np.abs(case.a)))
            t = (case.X @ case.Theta.T).ravel()
            dd = [np.max(np.abs(spec.d1(L * t) - L ** (spec.c - 1) * spec.d1(t)) / (1 + np.abs(spec.d1(t)) * L **
                                                                                    (spec.c - 1)), initial=0.0)
                  for L in case.lam]
            return float(np.max(np.abs(h2 - h)) / scale), float(max(dd, default=0.0))
        md = flat.mp_inputs(case.a, case.Theta, case.X)
        lam = [mpmath.mpf(float(v)) for v in case.lam]
        cc = mpmath.mpf(spec.c)
        worst_h, worst_d, scale = 0, 0, 1
        for xi in md["X"]:
            zs = [mpmath.fsum(t * x for t, x in zip(th, xi, strict=True)) for th in md["Theta"]]
            h = mpmath.fsum(a * spec.mp(z) for a, z in zip(md["a"], zs, strict=True))
            h2 = mpmath.fsum(a * L ** (-cc) * spec.mp(L * z) for a, L, z in zip(md["a"], lam, zs, strict=True))
            scale += mpmath.fsum(abs(a * spec.mp(z)) for a, z in zip(md["a"], zs, strict=True))
            worst_h = max(worst_h, abs(h2 - h))
            for L, z in zip(lam, zs, strict=True):
                worst_d = max(worst_d, abs(spec.mp(L * z, 1) - L ** (cc - 1) * spec.mp(z, 1))
                              / (1 + abs(spec.mp(z, 1)) * L ** (cc - 1)))
        return worst_h / scale, worst_d

    def screen(case):
        return max(max(parts(case, False)) - TOL["flat_screen_rel"],
                   _derivative_gap(case, False) - TOL["flat_derivative_screen"])

    def confirm(case):
        with mpmath.workdps(TOL["confirm_dps"]):
            return float(max(max(parts(case, True)) - mpmath.mpf(TOL["flat_confirm_slack"]),
                             _derivative_gap(case, True) - TOL["flat_derivative_confirm"]))

    return Property("flat.symmetry/invariance", flat_nets(), screen, confirm, FlatCase.to_json,
                    FlatCase.from_json, budget=100)


# The real properties, built at import so that they are the ones registered under their names
# (``python -m checks replay`` finds them; a planted-bug copy built later does not replace them).
PROPERTIES = (symmetry_property(),)


def level_F(ctx: Context) -> Outcome:
    return run_properties(ctx, PROPERTIES, ID)
