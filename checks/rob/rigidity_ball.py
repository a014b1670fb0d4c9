r"""rob.rigidity_ball: |α_j| ≤ 2 Lip_{B_R}(f) for every kink of the canonical form, including planted
near-cancelling units.

Evaluators: :func:`numerics.rob.canonicalize`, :func:`numerics.rob.lipschitz` on :class:`numerics.rob.Ball`
(facet recursion, exact), :func:`numerics.rob.rigidity`. Oracle: :func:`checks.rob.oracles.ball_brute_force`
(SOCP per sign pattern, exact acceptance of each cell; no arrangement code).

* F — rigidity on adversarial and degenerate nets (B_1.5 ⊂ R², B_1 ⊂ R³), and two-sided checks of the exact
  constant: :func:`oracle_ball_property` (against the brute force, exactly) and float-vs-rational; the rigidity
  bound at its equality case: single units whose Lip and ratio |α|/(2 Lip) are known by hand, ratio exactly 1
  when v = −α u/2 (:func:`checks.rob.exact_values.single_unit_property`); two near-tied cells (squared gradient
  norms c² and c²(1 + 2^−2k), k ≥ 27) whose exact comparison decides the constant (``near_tie_property``);
* P — the exact constant against the brute force to 50 digits with the same cell counts, and the rigidity
  margins, on exact nets with a planted near-cancelling pair.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp
from hypothesis import strategies as st

from checks.evidence.outcome import Outcome, digits_agreed
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.rob import cases, oracles, strategies
from checks.rob.exact_values import near_tie_property, single_unit_property
from checks.rob.properties import (
    checked_lipschitz,
    crash_is_a_hit,
    degenerate_rigidity_property,
    domain_of,
    float_vs_rational_property,
    near_triple,
    rigidity_property,
    weighted_kinds,
)
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import rob

ID = "rob.rigidity_ball"


# --------------------------------------------------------------------------------------- ball oracle
def _oracle_ball_margin(case):
    net = strategies.case_float(case)
    if len(net[2]) > 7:
        raise NotApplicable("brute force kept to m ≤ 7")
    L = checked_lipschitz(net, domain_of(case))
    bf = oracles.ball_brute_force(net, Fraction(case["rho"]))
    if bf.unresolved:
        raise NotApplicable("the brute force left a pattern unresolved")
    if not L.exact:
        lo, hi = L.lower, L.upper
        v = float(bf.value)
        return max(v - hi, lo - v) / max(1.0, v)
    # exact comparison: Lip² is a + b√D (here rational), the oracle's a Fraction
    return 1.0 if L.value2.cmp(rob.exact.QNum(bf.value2)) != 0 else -1.0


@st.composite
def thin_cap(draw, d: int, rho: float = 1.5):
    """Generic units plus one hyperplane at distance (1 − 10^−k)R from the centre with a large weight: the
    thin cap of the ball it cuts off is the steepest cell, so a cell test that drops cells near the boundary
    loses the maximum."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.integers(2, 9))
    m = draw(st.integers(1, 3))
    W = rng.normal(size=(m + 1, d))
    b = list(0.5 * rho * rng.normal(size=m) * np.linalg.norm(W[:m], axis=1))
    u = W[m] / np.linalg.norm(W[m])
    W[m] = u
    b.append(-(1 - 10.0 ** -k) * rho)
    a = list(rng.normal(size=m)) + [draw(st.sampled_from([6.0, -6.0]))]
    return {"d": d, "sphere": False, "rho": rho, "kind": "thin_cap", "W": W.tolist(), "b": b, "a": a,
            "v": list(0.1 * rng.normal(size=d)), "c": 0.0}


def oracle_ball_property(d: int, budget: int = 60) -> Property:
    """The exact constant on B_R equals the SOCP brute force over all 2^m patterns, as exact rationals."""
    kinds = weighted_kinds(d, False, {"edge_threshold": 3, "tangent": 2, "through_point": 2, "near_parallel": 1})
    strat = st.one_of(strategies.degenerate_nets(d, sphere=False, rho=1.5, m_max=6, kinds=kinds),
                      near_triple(d, sphere=False), thin_cap(d))
    return Property(name=f"rob.lipschitz/oracle_ball_d{d}", strategy=strat, screen=crash_is_a_hit(_oracle_ball_margin),
                    confirm=crash_is_a_hit(_oracle_ball_margin), to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)


PROPERTIES = (rigidity_property("rob.rigidity_ball/d2", 2, sphere=False, rho=1.5),
              rigidity_property("rob.rigidity_ball/d3", 3, sphere=False, rho=1.0),
              # degenerate arrangements (checks.rob.strategies) and two-sided checks of the exact constant
              degenerate_rigidity_property(2, sphere=False), degenerate_rigidity_property(3, sphere=False),
              oracle_ball_property(2), oracle_ball_property(3), float_vs_rational_property(3, False),
              # the equality case |α| = 2 Lip and exact Lip and ratio of single units (checks.rob.exact_values)
              single_unit_property(2, sphere=False, rho=Fraction(3, 2)), single_unit_property(3, sphere=False),
              # two cells within a relative 2^-54 of each other: the exact comparison picks the larger
              near_tie_property(2, sphere=False, rho=Fraction(3, 2)), near_tie_property(3, sphere=False))


# ------------------------------------------------------------------------------------------ levels
def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID, ignore=(rob.KinkCoincidenceWarning,))
    m = out.metric
    return replace(out, summary=f"{m['applicable']} nets on B_1.5 ⊂ R², B_1 ⊂ R³ (near-parallel pairs, "
                                f"thresholds within 1e-9 of ±R, ±1e6 pairs, same-plane pairs), exact Lip: "
                                f"{m['confirmed']} confirmed violations")


def _brute_ball(net, R) -> tuple:
    """The ball oracle's exact constant at the working precision, and its cell count."""
    bf = oracles.ball_brute_force(net, R)
    return mpmath.sqrt(mpmath.mpf(bf.value2.numerator) / bf.value2.denominator), bf.cells


def level_P(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.rigidity_ball/P")
    digits, margins, cells = [], [], []
    with mpmath.workdps(TOL["precision_dps"]):
        for dom in (rob.Ball(2, sp.Rational(3, 2)), rob.Ball(3, 1)):
            for _ in range(1 if ctx.quick else 2):
                net = cases.exact_net(rng, 3, dom.d, planted=False)
                W, b, a, v, c = net  # plant a near-cancelling pair: a ReLU(z) − a(1 − 10⁻⁸) ReLU(z')
                w2 = [x + sp.Rational(1, 1000) * (1 if i == 0 else 0) for i, x in enumerate(W[0])]
                net = (W + [w2], b + [b[0]], a + [-a[0] * (1 - sp.Rational(1, 10**8))], v, c)
                cf = rob.canonicalize(net, dom)
                L = rob.lipschitz(cf, dom)
                ref, nfeas = _brute_ball(net, dom.R)
                digits.append(digits_agreed(L.mp(), ref))
                cells.append((L.cells, nfeas))
                for al in cf.alpha:
                    margins.append(float((2 * L.mp() - abs(mpmath.mpf(sp.N(al, 60)))) / (2 * L.mp())))
    low = min(digits)
    # margins ≥ 0 is the claim's one side; the constant they use is pinned two-sidedly (digits vs the brute force)
    ok = low >= TOL["precision_min_digits"] and min(margins) >= 0 and all(a == b for a, b in cells)
    return Outcome(ok, {"min_digits": low, "min_rel_margin": min(margins), "cells_vs_oracle": cells},
                   f"exact Lip (facet recursion, 50 digits) vs brute force over 2^m patterns with SOCP "
                   f"feasibility: {low:.0f} digits, same cell counts; 2Lip − |α_j| ≥ {min(margins):.3g}·2Lip "
                   f"with planted near-cancelling pairs")
