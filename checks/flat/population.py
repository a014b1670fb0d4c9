"""flat.population: the exact Gaussian population loss (arc-cosine kernels for ReLU/LeakyReLU; moments for
polynomials) matches quadrature and Monte Carlo.

Derivation: ``proofs.flat.population.derive_kernels`` (half moments and arc-cosine kernels by polar
integration; generated ``numerics._derived.flat.half_moment``, ``relu_kernel_1``, ``relu_kernel_2``).
Evaluators: ``numerics.flat.population_loss``, ``population_loss_mc``, ``pair_expectations``,
``pair_expectation_quad`` and the moment formula ``monomial_pair_moment`` (checked symbolically against the
bivariate normal's moment generating function). P: against a polar Γ × angular quadrature that shares no
formula with them (``checks.flat.oracles.polar_population_loss``) and Monte Carlo.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from checks.evidence.outcome import Outcome, digits_agreed
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.flat import oracles
from numerics import flat
from proofs import flat as proof

ID = "flat.population"


class _Sym:
    """The SymPy namespace for the numerics' own moment formula (``flat.monomial_pair_moment``)."""

    pi, sqrt, gamma = sp.pi, staticmethod(sp.sqrt), staticmethod(sp.gamma)
    rat = staticmethod(sp.Rational)


def level_S(ctx: Context) -> Outcome:
    kd = proof.derive_kernels()
    rho = sp.Symbol("rho", real=True)
    s1, s2 = sp.symbols("s1 s2", positive=True)
    t1, t2 = sp.symbols("t1 t2", real=True)
    # moment generating function of the bivariate normal, from its definition E exp(t·z) = exp(tᵀΣt/2)
    mgf = sp.exp((s1**2 * t1**2 + 2 * rho * s1 * s2 * t1 * t2 + s2**2 * t2**2) / 2)
    ok_pairs, total = 0, 0
    for i in range(5):
        for j in range(5 - i):
            total += 1
            moment = sp.diff(mgf, t1, i, t2, j).subs({t1: 0, t2: 0}) if i + j else sp.Integer(1)
            formula = sp.sympify(flat.monomial_pair_moment(i, j, s1, s2, rho, _Sym))
            ok_pairs += bool(sp.expand(moment - formula) == 0)
    ok = kd.ok and ok_pairs == total
    return Outcome(ok, {"kernel_steps": len(kd.checks), "exact": sum(kd.checks.values()),
                        "moment_pairs_exact": ok_pairs, "moment_pairs": total},
                   f"E[z_+^e] = {kd.half_moment} and the degree-1/2 arc-cosine kernels derived by polar "
                   f"integration ({sum(kd.checks.values())}/{len(kd.checks)} checks incl. Cho–Saul J_1, J_2); "
                   f"numerics' moment formula E[z1^i z2^j] = MGF derivative for {ok_pairs}/{total} (i+j ≤ 4, symbolic "
                   f"s1, s2, ρ)",
                   details={k: bool(v) for k, v in kd.checks.items()})


def level_P(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    rng = ctx.rng("flat.population/P")
    d = 3
    digits, zs = [], []
    targets = [flat.single_index(rng.normal(size=d), "relu"),
               flat.sum_single_index(rng.normal(size=(2, d)), ["he2", "cubic"]),
               flat.multi_index(np.linalg.qr(rng.normal(size=(d, 2)))[0].T, "product")]
    combos = (("relu", targets[0]), ("leaky_relu", targets[1]), ("quadratic", targets[2]),
              ("leaky_relu", targets[0]), ("relu", targets[2]))
    for act, tg in combos[:2] if ctx.quick else combos:
        a, Th = rng.normal(size=2), rng.normal(size=(2, d))
        exact = flat.population_loss(a, Th, tg, 0.25, act, dps=dps)
        with mpmath.workdps(dps):
            digits.append(digits_agreed(exact, oracles.polar_population_loss(a, Th, tg, act, 0.25, dps)))
    # links without a closed form: quadrature vs Monte Carlo (z-scores), and quadrature vs exact
    for act in ("relu",) if ctx.quick else ("relu", "quadratic"):
        for tg in (flat.single_index(rng.normal(size=d), "tanh"),
                   flat.sum_single_index(rng.normal(size=(2, d)), ["tanh", "sin"])):
            a, Th = rng.normal(size=3), rng.normal(size=(3, d))
            L = flat.population_loss(a, Th, tg, 0.0, act)
            mc, se = flat.population_loss_mc(a, Th, tg, 0.0, act, samples=40_000 if ctx.quick else 400_000,
                                             rng=rng)
            zs.append(abs(L - mc) / se)
    qdps = int(TOL["flat_quadrature_dps"])
    relu, link = flat.get_activation("relu"), flat.LINKS["relu"]
    quad_digits = []
    for _ in range(1 if ctx.quick else 3):
        u, v = rng.normal(size=d), rng.normal(size=d)
        with mpmath.workdps(qdps):
            quad_digits.append(digits_agreed(flat.pair_expectation_quad(relu, u, link, v, qdps),
                                             flat.pair_expectations(relu, u[None], link, v[None], qdps)[0, 0]))
    worst = min(digits)
    ok = (worst >= TOL["precision_min_digits"] and max(zs) <= TOL["flat_mc_max_z"]
          and min(quad_digits) >= TOL["flat_quadrature_digits"])
    return Outcome(ok, {"digits_agreed": worst, "cases": len(digits), "mc_max_abs_z": max(zs),
                        "quadrature_vs_exact_digits": min(quad_digits)},
                   f"exact loss at dps={dps} vs polar Γ × angular quadrature: ≥ {worst:.1f} digits ({len(digits)} "
                   f"nets × targets); quadrature links (tanh, sin) vs Monte Carlo |z| ≤ {max(zs):.2f}; "
                   f"quadrature vs arc-cosine kernel {min(quad_digits):.1f} digits at dps={qdps}")
