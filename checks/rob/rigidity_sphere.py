r"""rob.rigidity_sphere: |α_j|√(1 − t_j²) ≤ 2 Lip_{S^{d−1}}(f) (geodesic) for d ≥ 3.

Evaluators: :func:`numerics.rob.canonicalize`, :func:`numerics.rob.lipschitz` on :class:`numerics.rob.Sphere`
(S² arrangement, exact; disjoint caps in closed form; certified brackets beyond), the exact single-pole
constant :func:`numerics.rob.single_pole_lipschitz`. Oracles: :func:`checks.rob.oracles.sphere_probe` and
:func:`checks.rob.oracles.sphere_sample` (float lower bounds from no arrangement code), exact re-evaluation
at rational points of the sphere.

* F — rigidity on adversarial nets on S² (exact) and S³ (exact for disjoint caps, else the certified upper
  end), degenerate arrangements, and two-sided checks of the constant: :func:`single_pole_property`
  (d = 3 exactly, d = 8 inside the bracket), :func:`probe_s2_property`, float-vs-rational; the rigidity bound at
  its equality case and the width-2n constant exactly (:mod:`checks.rob.exact_values`: a single unit, ratio 1 at
  t = 0 and v = −αu/2; width-2n nets on S² and S⁴ with disjoint caps, Lip = √((2−s)/s), ratio 1/2; two
  near-tied cells on S², decided by the exact comparison);
* P — disjoint caps: the closed form against the S² arrangement, exactly; general nets: a dense sample stays
  below the exact constant, and the rigidity margins at 50 digits; the wall time of exact constants.
"""

from __future__ import annotations

import time
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
from checks.rob.exact_values import near_tie_property, single_unit_property, width2n_property
from checks.rob.properties import (
    RoutineCrashed,
    checked_lipschitz,
    crash_is_a_hit,
    degenerate_rigidity_property,
    domain_of,
    float_vs_rational_property,
    near_triple,
    rel_diff,
    rigidity_property,
    weighted_kinds,
)
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import rob

ID = "rob.rigidity_sphere"


# ------------------------------------------------------------------------------------------ single pole
def _single_pole_margin(case):
    net = strategies.case_float(case)
    try:
        pole = rob.single_pole_lipschitz(net)
    except ValueError as exc:
        raise NotApplicable(str(exc)) from None
    # the general routines (S² arrangement, brackets), not lipschitz's own exact parallel-kink reduction
    L = checked_lipschitz(net, domain_of(case), time_limit=20, parallel_reduction=False)
    if L.exact:
        return rel_diff(L.value ** 2, pole.lipschitz2) - TOL["rob_exact_slack"]
    v = float(pole.value)
    return max(v - L.upper, L.lower - v) / max(1.0, v)


def single_pole_property(d: int, budget: int = 60) -> Property:
    """On S^{d−1} the constant of a single-pole net equals the one-dimensional formula of SPEC §4 exactly in
    d = 3; in d ≥ 4, where the general routine brackets, the bracket contains it."""
    strat = strategies.single_pole(d, sphere=True, m_max=6)
    return Property(name=f"rob.lipschitz/single_pole_d{d}", strategy=strat, screen=crash_is_a_hit(_single_pole_margin),
                    confirm=crash_is_a_hit(_single_pole_margin), to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)


# ----------------------------------------------------------------------------------------- S² probes
def rational_on_sphere(x):
    """A rational point exactly on S², near the float point x (inverse stereographic projection)."""
    x = np.asarray(x, float)
    x = x / np.linalg.norm(x)
    k = int(np.argmax(np.abs(x)))
    s = -1.0 if x[k] > 0 else 1.0  # project from the pole s·e_k, far from x
    y = [Fraction(float(t)) / Fraction(1.0 - s * x[k]) for t in x]
    y[k] = Fraction(0)
    n2 = sum(t * t for t in y)
    out = [2 * t / (n2 + 1) for t in y]
    out[k] = int(s) * (n2 - 1) / (n2 + 1)
    return out


def exact_tangential2(net, x):
    """‖g‖² − (g·x)² at the rational point x of the sphere, exactly (None if x lies on a kink)."""
    W, b, a, v = ([[Fraction(float(t)) for t in row] for row in net[0]], [Fraction(float(t)) for t in net[1]],
                  [Fraction(float(t)) for t in net[2]], [Fraction(float(t)) for t in net[3]])
    g = list(v)
    for w, bk, ak in zip(W, b, a, strict=True):
        z = sum(wi * xi for wi, xi in zip(w, x, strict=True)) + bk
        if z == 0:
            return None
        if z > 0:
            g = [gi + ak * wi for gi, wi in zip(g, w, strict=True)]
    gx = sum(gi * xi for gi, xi in zip(g, x, strict=True))
    return sum(gi * gi for gi in g) - gx * gx


def _witness_gap(net, L) -> float:
    """How far the routine's witness is from being genuine: the claimed cell must agree with the signs of
    every unit at the point (units within ``TOL["rob_witness_kink"]`` of their kink excepted: the point may be
    a vertex or on an edge), and the tangential norm there, from that pattern, must equal the constant.
    Computed in mpmath from the net's definition, not from the routine."""
    wit = L.witness or {}
    x, pat = wit.get("point"), wit.get("pattern")
    if x is None or pat is None:
        return 0.0
    cf = rob.canonicalize(net, rob.Sphere(3))
    with mpmath.workdps(40):
        xv = [mpmath.mpf(t) for t in x]
        nx = mpmath.sqrt(sum(t * t for t in xv))
        xv = [t / nx for t in xv]
        g = [mpmath.mpf(float(t)) for t in cf.vq]
        for j, (w, b, a) in enumerate(zip(cf.Wq, cf.bq, cf.aq, strict=True)):
            z = sum(mpmath.mpf(float(wi)) * xi for wi, xi in zip(w, xv, strict=True)) + mpmath.mpf(float(b))
            scale = mpmath.sqrt(sum(mpmath.mpf(float(wi)) ** 2 for wi in w))
            if abs(z) > TOL["rob_witness_kink"] * scale and (z > 0) != bool(pat[j]):
                return 1.0
            if pat[j]:
                g = [gi + mpmath.mpf(float(a)) * mpmath.mpf(float(wi)) for gi, wi in zip(g, w, strict=True)]
        gx = sum(gi * xi for gi, xi in zip(g, xv, strict=True))
        h = sum(gi * gi for gi in g) - gx * gx
        lip2 = L.mp() ** 2
        return float(abs(h - lip2) / max(1, lip2)) - TOL["rob_witness_gap"]


def _probe_margin(case, *, confirm: bool):
    """Too high: the witness (point and cell) of the exact constant must be genuine and attain it. Too low:
    no probe of a genuine point may exceed it (a probe above is re-evaluated exactly at a rational point of
    the sphere). Probes are not asked to reach the constant: cells of width 1e-9 are legitimate."""
    net = strategies.case_float(case)
    L = checked_lipschitz(net, rob.Sphere(3))
    pr = oracles.sphere_probe(net, per_circle=6000 if confirm else 1500, n_random=10000 if confirm else 4000)
    up = float(L.upper)
    above = (pr.value - up) / max(1.0, up) - TOL["rob_probe_screen"]
    if above > 0 and confirm:  # a genuine point above the exact constant? decide exactly at a rational point
        xq = rational_on_sphere(pr.point)
        h = exact_tangential2(net, xq)
        above = 1.0 if (h is not None and rob.exact.QNum(h).cmp(L.value2) > 0) else -1.0
    return max(above, _witness_gap(net, L))


def probe_s2_property(budget: int = 40) -> Property:
    """No genuine point of S² has a larger tangential gradient than the exact constant (dense two-sided
    probes), and the constant's witness is genuine: the point lies in the closure of the claimed cell and the
    tangential norm there equals the constant (computed from the net's definition)."""
    kinds = weighted_kinds(3, True, {"near_parallel": 3, "tangent": 2, "through_point": 2, "nested": 1})
    strat = st.one_of(strategies.degenerate_nets(3, sphere=True, m_max=6, kinds=kinds), near_triple(3, sphere=True))
    return Property(name="rob.lipschitz/probe_s2", strategy=strat,
                    screen=crash_is_a_hit(lambda c: _probe_margin(c, confirm=False)),
                    confirm=crash_is_a_hit(lambda c: _probe_margin(c, confirm=True)), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


# ------------------------------------------------------------------------ the bracket on degenerate S² nets
def _bracket_margin(case):
    """The certified branch and bound (:func:`numerics.rob.bracket.certified_bracket`, called directly: lipschitz
    itself would take the exact S² path) against the exact S² constant: both ends must hold, decided exactly
    (Lip² is a + b√D). Concurrent and tangent kinks are the inputs where the sphere bracket decides tiny cells
    (``BracketNet.inside_ball``) and cuts stuck leaves (``numerics.rob.bracket_sphere``)."""
    from numerics.rob.bracket import certified_bracket

    W, b, a, v, _c = strategies.case_float(case)
    L = checked_lipschitz((W, b, a, v, 0.0), rob.Sphere(3), time_limit=20)
    if not L.exact:
        raise NotApplicable("no exact S² constant to judge against")
    try:
        br = certified_bracket(W, b, a, v, sphere=True, rel_gap=0.01, time_limit=5)
    except Exception as exc:  # noqa: BLE001 - a crash on a valid net is a hit
        raise RoutineCrashed(f"{type(exc).__name__}: {exc}") from exc
    lo = rob.exact.QNum(Fraction(br.lower) ** 2).cmp(L.value2)
    up = rob.exact.QNum(Fraction(br.upper) ** 2).cmp(L.value2)
    return 1.0 if lo > 0 or up < 0 else -1.0


@st.composite
def with_cancelling_partners(draw, base):
    """A degenerate net with exactly cancelling partners added: unit j = λ·unit i shifted by ε (W_j = λW_i,
    b_j = λ(b_i + ε), a_j = −a_i/λ, λ a power of two so that the float net has the structure exactly). The pair's
    on-sets are nested and its gradients are {0, α_outer}: the bracket's node bound keeps one generator for it."""
    case = dict(draw(base))
    W, b, a = [list(map(float, w)) for w in case["W"]], list(map(float, case["b"])), list(map(float, case["a"]))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(W) - 1))
        lam = draw(st.sampled_from([1.0, 2.0, 0.5]))
        eps = draw(st.sampled_from([1e-3, 2.0 ** -30, 0.25, -0.1, 0.0]))
        W.append([lam * t for t in W[i]])
        b.append(lam * (b[i] + eps))
        a.append(-a[i] / lam)
    case.update(W=W, b=b, a=a, kind=f"{case.get('kind')}+cancelling")
    return case


def bracket_vs_s2_property(budget: int = 40) -> Property:
    """The certified bracket on S² contains the exact constant, on degenerate nets (concurrent, tangent,
    nearly parallel, nested kinks, near triple points, exactly cancelling partners)."""
    kinds = weighted_kinds(3, True, {"through_point": 4, "tangent": 2, "near_parallel": 1, "nested": 1})
    base = strategies.degenerate_nets(3, sphere=True, m_max=6, kinds=kinds)
    strat = st.one_of(base, near_triple(3, sphere=True), with_cancelling_partners(base))
    return Property(name="rob.lipschitz/bracket_vs_s2", strategy=strat, screen=crash_is_a_hit(_bracket_margin),
                    confirm=crash_is_a_hit(_bracket_margin), to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)


PROPERTIES = (rigidity_property("rob.rigidity_sphere/d3", 3, sphere=True, budget=160),
              # d = 4: exact when the caps are disjoint, else against the certified upper end (still sound)
              rigidity_property("rob.rigidity_sphere/d4", 4, sphere=True, budget=60),
              degenerate_rigidity_property(3, sphere=True), single_pole_property(3),
              single_pole_property(8, budget=30), probe_s2_property(), float_vs_rational_property(3, True),
              # equality cases and exact values (checks.rob.exact_values): a single unit, ratio exactly 1 at t = 0,
              # v = −αu/2; the width-2n interpolant with disjoint caps, Lip = √((2−s)/s) and ratio exactly 1/2
              single_unit_property(3, sphere=True), single_unit_property(4, sphere=True), width2n_property(3),
              width2n_property(5), near_tie_property(3, sphere=True), bracket_vs_s2_property())


# ------------------------------------------------------------------------------------------ levels
def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID, ignore=(rob.KinkCoincidenceWarning,))
    m = out.metric
    return replace(out, summary=f"{m['applicable']} nets on S² (exact geodesic Lip) and S³ (exact for "
                                f"disjoint caps, else the certified upper end), and exact-value families (single "
                                f"units at the equality case, width-2n nets on S² and S⁴, near ties): "
                                f"{m['confirmed']} confirmed violations")


def level_P(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.rigidity_sphere/P")
    digits, margins, sample_gap = [], [], []
    with mpmath.workdps(TOL["precision_dps"]):
        # (i) disjoint caps: closed form per cap vs the general S² arrangement algorithm
        for _ in range(1 if ctx.quick else 3):
            Rm = cases.rational_orthogonal(rng, 3)
            P3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [-sp.Rational(2, 3), -sp.Rational(2, 3), -sp.Rational(1, 3)]]
            Q = [list(Rm * sp.Matrix(q)) for q in P3]
            net = ([list(q) for q in Q], [-sp.Rational(9, 10)] * 4, [cases.rat(x) for x in rng.normal(size=4)],
                   [cases.rat(x) for x in 0.3 * rng.normal(size=3)], 0)
            cf = rob.canonicalize(net, rob.Sphere(3))
            if not rob.caps_disjoint(cf):
                continue
            q1, _ = rob.caps.lipschitz_disjoint_caps(cf.Wq, cf.bq, cf.aq, cf.vq)
            q2 = rob.sphere2.lipschitz_s2(cf.Wq, cf.bq, cf.aq, cf.vq).value2
            same = q1.cmp(q2) == 0  # two derivations give one exact number: report it as 60 digits
            digits.append(60.0 if same else digits_agreed(mpmath.sqrt(mpmath.mpf(float(q2))),
                                                          mpmath.sqrt(mpmath.mpf(float(q1)))))
        # (ii) general nets: exact value ≥ a dense sample (a lower bound) and rigidity margins at 50 digits
        for _ in range(2 if ctx.quick else 4):
            net = cases.exact_net(rng, 4, 3)
            cf = rob.canonicalize(net, rob.Sphere(3))
            L = rob.lipschitz(cf, rob.Sphere(3))
            # the sample reads the exact canonical form in float64 (the raw net's ±10⁶/3 pair does not round
            # to the same function)
            samp = oracles.sphere_sample(rob.as_float(cf.net()), 3, n=40000, seed=int(rng.integers(2**31))).value
            sample_gap.append((float(L.upper) - samp) / float(L.upper))
            for tj in cf.tangential_jumps():
                margins.append(float((2 * L.mp() - mpmath.mpf(sp.N(tj, 60))) / (2 * L.mp())))
    low = min(digits) if digits else 0.0
    # margins ≥ 0 is the claim's one side; the constant is pinned by the closed form (digits) and from below and
    # above by the sample (no sample above it, and the sample within rob_sample_gap of it)
    ok = (low >= TOL["precision_min_digits"] and min(margins) >= 0 and min(sample_gap) >= -TOL["rob_sample_above"]
          and max(sample_gap) < TOL["rob_sample_gap"])
    timing, cells = _timing(ctx)
    return Outcome(ok, {"min_digits": low, "cases": len(digits), "min_rel_margin": min(margins),
                        "sample_below_exact": f"{min(sample_gap):.2e}..{max(sample_gap):.2e}", **cells},
                   f"disjoint caps: closed form vs S² arrangement agree to {low:.0f} digits ({len(digits)} nets); "
                   f"general nets: 4e4 samples (the author's method) stay ≤ the exact constant (within "
                   f"{max(sample_gap):.1e}), 2Lip − |α|√(1−t²) ≥ {min(margins):.3g}·2Lip", timing=timing)


def _timing(ctx: Context) -> tuple[dict, dict]:
    """Wall time (timing) and cell counts (metric) of exact constants for m random units in d = 3 (m = 64; 16 in
    quick mode)."""
    rng = ctx.rng("rob.timing")
    m = 16 if ctx.quick else 64
    seconds, cells = {}, {}
    for name, dom in (("ball", rob.Ball(3, 1.0)), ("sphere", rob.Sphere(3))):
        net = (rng.normal(size=(m, 3)), 0.5 * rng.normal(size=m), rng.normal(size=m), rng.normal(size=3), 0.0)
        t0 = time.perf_counter()
        L = rob.lipschitz(net, dom)
        seconds[f"exact_{name}_m{m}_s"] = round(time.perf_counter() - t0, 3)
        cells[f"exact_{name}_m{m}_cells"] = L.cells
    return seconds, cells
