r"""rob.stratified: stratified isolation under its hypotheses (SPEC §4, "Several poles").

f = v·x + c + Σ_c P_c(u_c·x), P_c(s) = Σ_{k∈c} α_k ReLU(s − t_k), on S^{d−1}. Hypotheses: every threshold in
[τ₀, t*], τ₀ = 2√(8 log(m′n)/d), t* ≤ 1, |u_c·u_{c′}| ≤ τ₀/(2t*) for all pairs of poles. Claim: for
s ∈ (τ₀, t*] off the thresholds of c, |β_c + A_c(s)|√(1 − s²) ≤ Lip_{S^{d−1}}(f), β_c = v·u_c,
A_c(s) = Σ_{k∈c, t_k<s} α_k. Here m′ is the number of ReLU units of f and n ≥ 1 the sample size (drawn; both
enter only through log(m′n), and a larger m′n only shrinks the admissible nets).

**Admissible nets, exactly.** τ₀ < t* ≤ 1 is needed for the threshold band to exist, so d > 32 log(m′n):
with m′n ≥ 2 the smallest d is 23 (the strategy uses d ∈ {24, 32, 64}); with one unit and n = 1, τ₀ = 0 and
d = 6 (the statement's own minimum) is used. Poles are u_c = a_c e₀ + b_c w_c with (a_c, b_c) a rational
Pythagorean pair and w_c rational unit vectors on disjoint coordinate blocks, so u_c·u_{c′} = a_c a_{c′}
exactly; a_c is drawn up to the coherence limit √(τ₀/(2t*)). Every hypothesis comparison with the irrational
τ₀ is decided in arb (python-flint), never by a float tolerance; a net not proved admissible is discarded.

**Which end of the bracket.** The inequality is LHS ≤ Lip. A *counterexample is a proof* only when LHS
exceeds a certified **upper** end of Lip (then Lip ≤ upper < LHS). Comparing with the lower end (or any
sampled value) would "refute" a true inequality whenever the lower bound is loose. Conversely the inequality
is *proved* for a case when LHS ≤ a certified **lower** bound — a witnessed point. So:

* screen: LHS² − τ(x_w)², where x_w = s u_c + √(1 − s²) y with y a unit vector ⊥ u_c, every other pole and v
  (it exists for d ≥ #poles + 2). At x_w the other poles are inactive, decided exactly: u_{c′}·x_w =
  s u_c·u_{c′} < min thresholds of c′ (rational comparison); c's units are active iff t_k < s. Then
  τ(x_w)² = ‖g‖² − (g·x_w)² with g = v + A_c(s)u_c is rational: ‖v‖² + 2A_cβ_c + A_c² − s²(β_c + A_c)². A
  screen ≤ 0 *proves* the inequality for that (net, s) (τ(x_w) ≤ Lip since x_w lies in an open cell).
* confirm (on a screen hit only): LHS − the certified upper end of :func:`numerics.rob.lipschitz`'s bracket
  on Sphere(d); > 0 proves a counterexample.

The planted bug (the √(1 − s²) factor dropped) must be caught by the confirmation, i.e. refuted with the upper
end. A second property compares the witness with the general routine's certified bracket: τ(x_w) must not
exceed the upper end (a witness above a proved upper bound would mean a wrong witness or a wrong routine).
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction as Fr

from flint import arb
from flint import ctx as flint_ctx
from hypothesis import assume
from hypothesis import strategies as st

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.rob.rational import nonzero_rational, pyth_cs, rational_unit_vector, small_rational
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import rob

ID = "rob.stratified"
BLOCK = 3  # coordinates per pole block (w_c lives on 1 + BLOCK·c .. BLOCK·(c + 1))


def _arb(q: Fr):
    return arb(q.numerator) / arb(q.denominator)


def tau0_arb(mprime: int, n: int, d: int):
    return 2 * (8 * arb(mprime * n).log() / d).sqrt()


def _certified_lt(a, b) -> bool | None:
    """a < b for arb balls: True/False when decided, None when the balls overlap (then: not admissible)."""
    if a < b:
        return True
    if a >= b:
        return False
    return None


@st.composite
def stratified_case(draw):
    single = draw(st.integers(0, 5)) == 0  # one unit, n = 1: τ₀ = 0, d = 6
    if single:
        d, n, C, sizes = 6, 1, 1, [1]
    else:
        d = draw(st.sampled_from([24, 32, 64]))
        n = draw(st.sampled_from([1, 2]))
        C = draw(st.integers(1, 3))
        sizes = [draw(st.integers(1, 3)) for _ in range(C)]
    mprime = sum(sizes)
    with_prec(200)
    tau0 = tau0_arb(mprime, n, d) if mprime * n > 1 else arb(0)
    tstar = draw(st.sampled_from([Fr(1), Fr(1) - Fr(1, 2**20), Fr(31, 32), Fr(15, 16)]))
    assume(_certified_lt(tau0, _arb(tstar)))  # else τ₀ ≥ t*: no admissible threshold band
    # thresholds: rationals in [τ₀, t*] (the band's ends included: just above τ₀, and t* itself)
    lo = Fr(math.ceil(float(tau0.upper()) * 2**30 + 1), 2**30) if mprime * n > 1 else Fr(0)
    band = tstar - lo
    assume(band > 0)
    # pole coherence: a_c ≤ √(τ₀/(2t*)) for |a_c a_c'| ≤ τ₀/(2t*)
    lim = (tau0 / (2 * _arb(tstar))).sqrt() if C > 1 else arb(1)
    poles, net_W, net_b, net_a, groups = [], [], [], [], []
    for ci in range(C):
        frac = draw(st.sampled_from([Fr(0), Fr(1, 2), Fr(9, 10), Fr(99, 100), Fr(1)]))
        target = float(lim.lower()) * float(frac) if C > 1 else float(draw(st.sampled_from([0.0, 0.6])))
        target = max(min(target, 1.0), 0.0)
        q = Fr(math.ceil(math.sqrt((1 - target) / (1 + target)) * 2**12), 2**12) if target < 1 else Fr(0)
        a_c, b_c = pyth_cs(q)  # cos ≤ target (q rounded up)
        a_c *= draw(st.sampled_from([1, -1]))
        w = rational_unit_vector(draw, BLOCK, mode=draw(st.sampled_from(["axis", "sparse"])))
        u = [Fr(0)] * d
        u[0] = a_c
        for i in range(BLOCK):
            u[1 + BLOCK * ci + i] = b_c * w[i]
        poles.append(u)
        ts = sorted(draw(st.lists(st.sampled_from([Fr(0), Fr(1, 3), Fr(1, 2), Fr(7, 8), Fr(1) - Fr(1, 2**30), Fr(1)]),
                                  min_size=sizes[ci], max_size=sizes[ci], unique=True)))
        grp = []
        for t in ts:
            tk = lo + t * band
            net_W.append(u)
            net_b.append(-tk)
            net_a.append(nonzero_rational(draw, -3, 3) * draw(st.sampled_from([1, 1, 2**10])))
            grp.append(len(net_W) - 1)
        groups.append(grp)
    v = [Fr(0)] * d
    for i in draw(st.lists(st.integers(0, d - 1), max_size=4, unique=True)):
        v[i] = small_rational(draw, -2, 2)
    if draw(st.booleans()):  # v along a pole: β_c large
        ci = draw(st.integers(0, C - 1))
        v = [x + small_rational(draw, -3, 3) * y for x, y in zip(v, poles[ci], strict=True)]
    case = {"d": d, "n": n, "mprime": mprime, "tstar": str(tstar), "lo_band": str(lo),
            "W": [[str(x) for x in w] for w in net_W], "b": [str(x) for x in net_b], "a": [str(x) for x in net_a],
            "v": [str(x) for x in v], "c": "0", "groups": groups}
    assume(admissible(case))  # every hypothesis proved, else the draw is discarded
    return case


def with_prec(bits: int):
    flint_ctx.prec = max(flint_ctx.prec, bits)


def _fr(case, key):
    return [Fr(x) for x in case[key]]


def admissible(case) -> bool:
    """Every hypothesis, decided in arb (exact rationals against the irrational τ₀)."""
    d, n, mp = case["d"], case["n"], case["mprime"]
    tau0 = tau0_arb(mp, n, d) if mp * n > 1 else arb(0)
    tstar = Fr(case["tstar"])
    if not (tstar <= 1 and _certified_lt(tau0, _arb(tstar))):
        return False
    W = [[Fr(x) for x in w] for w in case["W"]]
    b = _fr(case, "b")
    for k in range(len(W)):
        t = -b[k]
        above = t >= 0 if mp * n == 1 else _certified_lt(tau0, _arb(t))  # τ₀ = 0 exactly when m′n = 1
        if not (sum(x * x for x in W[k]) == 1 and t <= tstar and above):
            return False
    poles = [W[g[0]] for g in case["groups"]]
    for i in range(len(poles)):
        for j in range(i + 1, len(poles)):
            ip = abs(sum(x * y for x, y in zip(poles[i], poles[j], strict=True)))
            if not _arb(ip) <= tau0 / (2 * _arb(tstar)):  # certified ≤ (False when undecided)
                return False
    return True


def levels(case):
    """(pole c, s) pairs to test: each interval of (τ₀, t*] between c's thresholds, at its midpoint and 2^-30
    inside each end, rational, off the thresholds."""
    tstar, lo = Fr(case["tstar"]), Fr(case["lo_band"])
    b = _fr(case, "b")
    out = []
    for ci, grp in enumerate(case["groups"]):
        ts = sorted({-b[k] for k in grp})
        ends = [lo] + [t for t in ts if lo < t < tstar] + [tstar]
        for j in range(len(ends) - 1):
            a_, b_ = ends[j], ends[j + 1]
            if b_ <= a_:
                continue
            eps = min(Fr(1, 2**30), (b_ - a_) / 4)
            cand = [(a_ + b_) / 2, a_ + eps, b_ - eps if b_ in ts else b_]
            out += [(ci, s) for s in cand if s not in ts and lo < s <= tstar]
    return out


def lhs2(case, ci, s, *, drop_factor=False) -> Fr:
    """(β_c + A_c(s))²(1 − s²), exactly (``drop_factor``: the planted bug without (1 − s²))."""
    W = [[Fr(x) for x in w] for w in case["W"]]
    b, a, v = _fr(case, "b"), _fr(case, "a"), _fr(case, "v")
    grp = case["groups"][ci]
    u = W[grp[0]]
    beta = sum(x * y for x, y in zip(v, u, strict=True))
    A = sum((a[k] for k in grp if -b[k] < s), Fr(0))
    return (beta + A) ** 2 * (1 if drop_factor else (1 - s * s))


def witness2(case, ci, s) -> Fr:
    """τ(x_w)² at x_w = s u_c + √(1 − s²)y (y ⊥ u_c, the other poles, v), exactly; raises if x_w is not in an
    open cell of f (another pole active or on a kink)."""
    W = [[Fr(x) for x in w] for w in case["W"]]
    b, a, v = _fr(case, "b"), _fr(case, "a"), _fr(case, "v")
    d = case["d"]
    if d < len(case["groups"]) + 2:
        raise NotApplicable("no y ⊥ u_c, the other poles and v")
    grp = case["groups"][ci]
    u = W[grp[0]]
    for cj, g2 in enumerate(case["groups"]):
        if cj == ci:
            continue
        ip = sum(x * y for x, y in zip(u, W[g2[0]], strict=True))
        if not s * ip < min(-b[k] for k in g2):  # u_c'·x_w = s u_c·u_c' (y ⊥ u_c') must be below c''s kinks
            raise AssertionError("another pole is active at the witness: the hypotheses do not hold")
    beta = sum(x * y for x, y in zip(v, u, strict=True))
    A = sum((a[k] for k in grp if -b[k] < s), Fr(0))
    vv = sum(x * x for x in v)
    return vv + 2 * A * beta + A * A - s * s * (beta + A) ** 2


def _net(case):
    return ([[float(Fr(x)) for x in w] for w in case["W"]], [float(Fr(x)) for x in case["b"]],
            [float(Fr(x)) for x in case["a"]], [float(Fr(x)) for x in case["v"]], 0.0)


def _exact_net(case):
    import sympy as sp

    R = lambda x: sp.Rational(Fr(x).numerator, Fr(x).denominator)  # noqa: E731
    return ([[R(x) for x in w] for w in case["W"]], [R(x) for x in case["b"]], [R(x) for x in case["a"]],
            [R(x) for x in case["v"]], R(0))


def screen_margin(case, *, drop_factor=False) -> float:
    worst = -math.inf
    for ci, s in levels(case):
        L2, w2 = lhs2(case, ci, s, drop_factor=drop_factor), witness2(case, ci, s)
        worst = max(worst, float(L2 - w2) / (1 + float(w2)))
    return worst


def confirm_margin(case, *, drop_factor=False) -> float:
    """max over (c, s) of LHS − the certified upper end of Lip (> 0 proves a counterexample)."""
    L = rob.lipschitz(_exact_net(case), rob.Sphere(case["d"]), time_limit=30, rel_gap=1e-4)
    up = arb(float(L.upper)) if not L.exact else _qarb(L.value2)
    worst = -math.inf
    for ci, s in levels(case):
        lhs = _arb(lhs2(case, ci, s, drop_factor=drop_factor)).sqrt()
        diff = lhs - up
        if diff > 0:
            return 1.0
        worst = max(worst, float(diff.mid()) / (1 + float(up.mid())))
    return min(worst, -1e-300)


def _qarb(q):
    x = _arb(q.a)
    if q.b and q.D:
        x += _arb(q.b) * _arb(q.D).sqrt()
    return x.sqrt()


def witness_vs_bracket(case) -> float:
    """max τ(x_w) − the certified upper end of Lip (> 0: a witness above a proved upper bound)."""
    L = rob.lipschitz(_exact_net(case), rob.Sphere(case["d"]), time_limit=30, rel_gap=1e-4)
    up = arb(float(L.upper)) if not L.exact else _qarb(L.value2)
    worst = -math.inf
    for ci, s in levels(case):
        w = _arb(witness2(case, ci, s)).sqrt()
        if w - up > 0:
            return 1.0
        worst = max(worst, float((w - up).mid()) / (1 + float(up.mid())))
    return worst


def isolation_property(*, drop_factor=False, budget=150) -> Property:
    return Property(name=f"{ID}/isolation" + ("_planted" if drop_factor else ""), strategy=stratified_case(),
                    screen=lambda c: screen_margin(c, drop_factor=drop_factor),
                    confirm=lambda c: confirm_margin(c, drop_factor=drop_factor),
                    to_json=lambda c: c, from_json=lambda c: c, budget=budget)


def witness_property(budget=40) -> Property:
    return Property(name=f"{ID}/witness_below_bracket", strategy=stratified_case(), screen=witness_vs_bracket,
                    confirm=witness_vs_bracket, to_json=lambda c: c, from_json=lambda c: c, budget=budget)


def level_F(ctx: Context) -> Outcome:
    props = (isolation_property(),) + (() if ctx.quick else (witness_property(),))
    out = run_properties(ctx, props, ID)
    m = out.metric
    return replace(out, summary=(
        f"{m['applicable']} admissible multi-pole nets (d ∈ {{6 (one unit, τ₀ = 0), 24, 32, 64}}, hypotheses decided "
        "in arb; every (c, s) proved by an exact witness, a counterexample needs LHS > the certified upper end): "
        + out.summary), metric={**m, "smallest_d": 6, "smallest_d_multi_unit": 24})
