r"""rob.pileup: on the ball B_R, off the kinks ∇f = v + s_A with s_A = Σ_{k∈A} α_k u_k over the active set A, so any two
realizable active sets have ‖s_A − s_{A′}‖ ≤ 2 Lip_{B_R}(f).

Why: s_A − s_{A′} = ∇f(x) − ∇f(x′) for points x, x′ of the two open cells, and each gradient has norm ≤ Lip (the
ball is convex). Equality: one unit a ReLU(w·x) with v = −a w/2, whose two gradients are ±a w/2. The constant 2 is
sharp.

* F — one property on exact rational nets (W, b, a, v, c), d ≤ 3, m ≤ 4, adversarial: the equality family,
  duplicated and oppositely oriented hyperplanes, planes through one point, near-cancelling pairs, hyperplanes
  near-tangent to the sphere ‖x‖ = R. Realizability of an active set is decided by the ball brute force
  :func:`checks.rob.oracles.ball_brute_force` (every one of the 2^m patterns: an exact rational witness in the open
  cell inside the open ball, or an exact emptiness certificate; the undecided are counted and left out).
  Lip_{B_R} is the suite's certified routine :func:`numerics.kinks.lipschitz` (domain ``Ball``), exact as
  Lip² = a + b√D; the comparison ‖g_A − g_{A′}‖² ≤ 4 Lip² is exact. At each witness, ∇f is recomputed from the
  definition by exact difference quotients inside the cell and must equal v + s_A
  (:func:`numerics.rob.cell_gradient`); the largest cell gradient must not exceed Lip either.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction

from hypothesis import strategies as st

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.rob.oracles import ball_brute_force
from checks.rob.supplement import lemma_data as data
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import kinks, rob
from numerics.rob import exact as E

ID = "rob.pileup"
TWO = Fraction(2)


@st.composite
def ball_nets(draw):
    d = draw(st.integers(1, 3))
    m = draw(st.integers(1, 4))
    R = draw(st.sampled_from([Fraction(1), Fraction(1, 2), Fraction(3)]))
    W = [[draw(data.rat(-3, 3)) for _ in range(d)] for _ in range(m)]
    for row in W:
        if all(x == 0 for x in row):
            row[0] = Fraction(1)
    b = [draw(data.rat(-2, 2)) * R / 2 for _ in range(m)]
    a = [draw(data.rat(-4, 4)) for _ in range(m)]
    v = [draw(data.rat(-3, 3)) for _ in range(d)]
    mode = draw(st.sampled_from(["equality", "equality", "duplicate", "opposite", "concurrent", "cancelling",
                                 "tangent", "random"]))
    if mode == "equality":  # v = −(1/2)Σ_k a_k W_k for parallel units: gradients ±(1/2)Σ a_k W_k
        v = [-sum((a[k] * W[k][j] for k in range(1 if m == 1 or draw(st.booleans()) else m)), Fraction(0)) / 2
             for j in range(d)]
        if draw(st.booleans()):
            for k in range(1, m):
                W[k] = list(W[0])
    elif mode == "duplicate" and m > 1:
        s = draw(st.sampled_from([Fraction(1), Fraction(2), Fraction(1, 3)]))
        W[1], b[1] = [s * x for x in W[0]], s * b[0]
    elif mode == "opposite" and m > 1:
        W[1], b[1] = [-x for x in W[0]], -b[0]
    elif mode == "concurrent":
        p = [draw(data.rat(-1, 1)) * R / 4 for _ in range(d)]
        b = [-sum((w * x for w, x in zip(W[k], p, strict=True)), Fraction(0)) for k in range(m)]
    elif mode == "cancelling" and m > 1:
        W[1] = [x + draw(st.sampled_from([Fraction(0), Fraction(1, 10**6)])) for x in W[0]]
        b[1], a[1] = b[0], -a[0]
    elif mode == "tangent":  # w = e_1 scaled: the plane w·x + b = 0 at distance |b|/|w| = R(1 − δ) from 0
        k = draw(st.integers(0, m - 1))
        s = draw(st.sampled_from([Fraction(1), Fraction(3)]))
        W[k] = [s] + [Fraction(0)] * (d - 1)
        b[k] = -s * R * (1 - draw(st.sampled_from([Fraction(1, 10**3), Fraction(1, 10**9)])))
    return {"W": W, "b": b, "a": a, "v": v, "c": Fraction(0), "R": R, "mode": mode}


def _to_json(case):
    return {k: (data.enc(v) if k != "mode" else v) for k, v in case.items() if not k.startswith("_")}


def _from_json(j):
    return {k: (data.dec(v) if k != "mode" else v) for k, v in j.items()}


def _f(case, x) -> Fraction:
    """f(x) from the definition, exactly."""
    z = sum((vi * xi for vi, xi in zip(case["v"], x, strict=True)), case["c"])
    for w, bk, ak in zip(case["W"], case["b"], case["a"], strict=True):
        z += ak * max(Fraction(0), sum((wi * xi for wi, xi in zip(w, x, strict=True)), bk))
    return z


def _in_cell(case, x, pattern) -> bool:
    if sum((xi * xi for xi in x), Fraction(0)) >= case["R"] ** 2:
        return False
    for w, bk, on in zip(case["W"], case["b"], pattern, strict=True):
        z = sum((wi * xi for wi, xi in zip(w, x, strict=True)), bk)
        if (z > 0) != bool(on) or z == 0:
            return False
    return True


def definitional_gradient(case, x, pattern) -> list[Fraction]:
    """∇f at x (an exact point of the open cell ``pattern``): central differences with h = 2^−k, the first k for
    which both x ± h e_j lie in the cell (f is affine there, so the quotient is exact)."""
    g = []
    for j in range(len(x)):
        h = Fraction(1)
        for _ in range(200):
            xp = [xi + (h if i == j else 0) for i, xi in enumerate(x)]
            xm = [xi - (h if i == j else 0) for i, xi in enumerate(x)]
            if _in_cell(case, xp, pattern) and _in_cell(case, xm, pattern):
                break
            h /= 2
        else:
            raise RuntimeError("no in-cell step found for a witness")
        g.append((_f(case, xp) - _f(case, xm)) / (2 * h))
    return g


def _analyse(case):
    """(oracle result, Lipschitz result), cached on the case (the screen and the confirmation share them)."""
    if "_res" not in case:
        net = (case["W"], case["b"], case["a"], case["v"], case["c"])
        bf = ball_brute_force(net, case["R"])
        L = kinks.lipschitz(net, kinks.Ball(len(case["v"]), case["R"]))
        case["_res"] = (bf, L)
    return case["_res"]


def cloud_margin(case, *, exact: bool, factor=TWO, gradient=rob.cell_gradient) -> float:
    """> 0 iff two realizable active sets have ‖s_A − s_{A′}‖ > factor·Lip (factor 2 in the claim), a cell gradient
    exceeds Lip, or ∇f at a witness is not v + s_A."""
    bf, L = _analyse(case)
    if not bf.patterns:
        raise NotApplicable("no certified cell")
    if not L.exact:
        raise NotApplicable("Lip not exact")
    W, a, v = case["W"], case["a"], case["v"]
    grads = {p: gradient(W, a, v, p) for p in bf.patterns}
    # the identity ∇f = v + s_A, from the definition at each exact witness (exact in both stages: it is cheap)
    for p in bf.patterns:
        if [Fraction(x) for x in grads[p]] != definitional_gradient(case, list(bf.witnesses[p]), p):
            return 1.0
    if not exact:
        lip = float(L.upper)
        worst = max((sum((float(x) - float(y)) ** 2 for x, y in zip(grads[p], grads[q], strict=True)) ** 0.5
                     for p, q in itertools.combinations(bf.patterns, 2)), default=0.0)
        return (worst - float(factor) * lip) / (1 + lip) - 1e-9
    lip2 = L.value2
    worst, out = Fraction(-1), -1.0
    for p in bf.patterns:  # every cell gradient ≤ Lip (else the certified routine is wrong)
        if E.QNum(E.dot(grads[p], grads[p])).cmp(lip2) > 0:
            return 1.0
    f2 = Fraction(factor) ** 2
    bound = E.QNum(f2 * lip2.a, f2 * lip2.b, lip2.D)
    for p, q in itertools.combinations(bf.patterns, 2):
        diff = [x - y for x, y in zip(grads[p], grads[q], strict=True)]
        dd = E.dot(diff, diff)
        worst = max(worst, dd)
        s = E.QNum(dd).cmp(bound)
        if s > 0:
            out = max(out, (float(dd) ** 0.5 - float(factor) * float(L.upper)) / (1 + float(L.upper)) + 1e-300)
        elif s == 0:
            out = max(out, 0.0)
    if out < 0 and worst >= 0:
        out = (float(worst) ** 0.5 - float(factor) * float(L.upper)) / (1 + float(L.upper))
        out = min(out, -1e-300)
    return out


F_ = Fraction
# the equality family, every run: one unit a ReLU(w·x + b) with v = −aw/2 (gradients ±aw/2, so ‖s_A − s_A′‖ = 2 Lip
# exactly), in R² through the centre and in R¹ off it
EQUALITY_CASES = (
    {"W": [[F_(1), F_(0)]], "b": [F_(0)], "a": [F_(2)], "v": [F_(-1), F_(0)], "c": F_(0), "R": F_(1),
     "mode": "explicit/equality"},
    {"W": [[F_(3)]], "b": [F_(1, 2)], "a": [F_(-1)], "v": [F_(3, 2)], "c": F_(0), "R": F_(1),
     "mode": "explicit/equality"},
)


def cloud_property(*, factor=TWO, gradient=rob.cell_gradient, budget: int = 60) -> Property:
    return Property(name="rob.pileup/cloud", strategy=ball_nets(),
                    screen=lambda c: cloud_margin(c, exact=False, factor=factor, gradient=gradient),
                    confirm=lambda c: cloud_margin(c, exact=True, factor=factor, gradient=gradient),
                    to_json=_to_json, from_json=_from_json, budget=budget,
                    examples=tuple(dict(c) for c in EQUALITY_CASES), ties=data.TIES, revision=2)


PROPERTIES = (cloud_property(),)


def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID)
    m = out.metric
    att = out.details["rob.pileup/cloud"].get("worst_explicit_margin")
    return replace(out, summary=f"{m['applicable']} exact rational nets on B_R (d ≤ 3, m ≤ 4; the equality family v = "
                                "−aw/2, duplicated, opposite, concurrent, cancelling, near-tangent hyperplanes): "
                                f"{m['confirmed']} confirmed violations of ∇f = v + s_A or ‖s_A − s_A′‖ ≤ 2 Lip over "
                                "the realizable active sets (certified cells, exact Lip, exact comparisons); the two "
                                f"equality nets run every time and attain it (float margin {att:.1e}, decided "
                                f"exactly with the {m['ties_confirmed']} near-ties)")

