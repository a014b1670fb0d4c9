r"""rob.serving: for unit data with labels y_i = ±1, a unit u, t ∈ [0, 1), α ≠ 0 and h > 0,
#{i : y_i α ReLU(u·x_i − t) ≥ h} ≤ Op (t + h/|α|)⁻², and ≤ 6 Op L²/h² when |α|√(1 − t²) ≤ 2L (the rigidity bound
with L = Lip_{S^{d−1}}(f); the lemma needs only the inequality, so L ranges over every value that satisfies it).

Why: a served index has u·x_i − t ≥ h/|α|, so the count is ≤ N_u(t + h/|α|) ≤ Op (t + h/|α|)⁻² (occupancy); equality
for data stacked at u with h = |α|(1 − t). Under rigidity (t + h/|α|)⁻² ≤ 4(1 − t)/(1 + t)·L²/h² whenever the count
is nonzero (:func:`proofs.rob.lemmas.serving`), so the sharp constant is 4 (t = 0, data at u, h = 2L): 6 holds with
room, and so would 5; 3 would not.

* F — two properties on exact unit data (:func:`checks.rob.supplement.lemma_data.unit_data`, t = 0 allowed), labels all
  of α's sign or random, h at |α|(1 − t) (only points at u served), at |α|(u·x_j − t) of a data point (tight) or
  1e-6 above it, tiny, or random; L at the rigidity bound (a rational within 1e-12 above |α|√(1 − t²)/2), 0.1 %
  above, or twice. Each bound κ·Op is decided exactly (Op < count/κ by Sturm counts and by
  :func:`numerics.rob.op_compare`); the count is recomputed in Fractions and must equal :func:`numerics.rob.served`.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.rob.supplement import lemma_data as data
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import rob
from proofs.rob import lemmas

ID = "rob.serving"


@st.composite
def serving_cases(draw):
    case = draw(data.unit_data(t_zero=True))
    X, u, t = case["X"], case["u"], case["t"]
    alpha = draw(data.rat(-6, 6).filter(lambda a: a != 0))
    sgn = 1 if alpha > 0 else -1
    y = [sgn] * len(X) if draw(st.booleans()) else [draw(st.sampled_from([-1, 1])) for _ in X]
    z = [sum((a * b for a, b in zip(u, r, strict=True)), Fraction(0)) for r in X]
    above = [v for v in z if v > t]
    hmode = draw(st.sampled_from(["top", "tight", "tight", "just_above", "tiny", "free"]))
    if hmode == "tight" and above:
        h = abs(alpha) * (draw(st.sampled_from(above)) - t)
    elif hmode == "just_above" and above:
        h = abs(alpha) * (draw(st.sampled_from(above)) - t) + Fraction(1, 10**6)
    elif hmode == "tiny":
        h = Fraction(1, 10**6)
    elif hmode == "free":
        h = draw(data.rat(1, 6))
    else:
        h = abs(alpha) * (1 - t) if t < 1 else Fraction(1)
    L = abs(alpha) * data.sqrt_up(max(1 - t * t, Fraction(0))) / 2 * draw(
        st.sampled_from([Fraction(1), Fraction(1), Fraction(1001, 1000), Fraction(2)]))
    return {**case, "y": y, "alpha": alpha, "h": h, "L": L}


def _count_exact(case) -> int:
    X, y, u, t, a, h = case["X"], case["y"], case["u"], case["t"], case["alpha"], case["h"]
    return sum(1 for r, yi in zip(X, y, strict=True)
               if yi * a * max(Fraction(0), sum((p * q for p, q in zip(u, r, strict=True)), Fraction(0)) - t) >= h)


def _count(case, exact: bool, served):
    X, y, u, t, a, h = case["X"], case["y"], case["u"], case["t"], case["alpha"], case["h"]
    if not (0 <= t < 1 and h > 0 and a != 0):
        raise NotApplicable("t ∈ [0, 1), h > 0, α ≠ 0")
    if not exact:
        Xf, uf = np.asarray(data.fl(X), float), np.asarray(data.fl(u), float)
        z = np.asarray(y, float) * float(a) * np.maximum(Xf @ uf - float(t), 0.0)
        generous = int(np.count_nonzero(z >= float(h) - TOL["rob_lemma_screen"] * (1 + abs(float(a)))))
        return max(int(served(Xf, np.asarray(y, float), uf, float(t), float(a), float(h))), generous), False
    N = _count_exact(case)
    return N, served(X, y, u, t, a, h) != N


def capacity_margin(case, *, exact: bool, coefficient=rob.serving_coefficient, served=rob.served) -> float:
    """> 0 iff the count exceeds κ·Op, κ = (t + h/|α|)⁻² in the claim."""
    N, bad = _count(case, exact, served)
    if bad:
        return 1.0
    t, h, a = case["t"], case["h"], case["alpha"]
    if not exact:
        return data.op_margin(case["X"], N / float(coefficient(float(t), float(h), float(a))),
                              exact=False) - TOL["rob_lemma_screen"]
    return data.op_margin(case["X"], Fraction(N) / Fraction(coefficient(t, h, a)), exact=True)


def rigid_margin(case, *, exact: bool, coefficient=rob.serving_rigid_coefficient, served=rob.served) -> float:
    """> 0 iff the count exceeds κ·Op, κ = 6L²/h² in the claim, for L with |α|√(1 − t²) ≤ 2L."""
    a, L, t, h = case["alpha"], case["L"], case["t"], case["h"]
    if not (L > 0 and 4 * L * L >= a * a * (1 - t * t)):
        raise NotApplicable("the rigidity hypothesis |α|√(1 − t²) ≤ 2L")
    N, bad = _count(case, exact, served)
    if bad:
        return 1.0
    if not exact:
        return data.op_margin(case["X"], N / float(coefficient(float(L), float(h))), exact=False) - TOL[
            "rob_lemma_screen"]
    return data.op_margin(case["X"], Fraction(N) / Fraction(coefficient(L, h)), exact=True)


# the equality cases: t = 0 with data stacked at u, α = 2, h = |α| = 2L (count = Op = Op(t + h/|α|)⁻² and the
# sharp rigid constant 4 = count·h²/(Op L²)), and the aimed orthonormal four at t = 0, h = |α|/2 (count 4 = Op·(½)⁻²)
SHARP_CASES = tuple({**c, "t": Fraction(0), "y": [1] * len(c["X"]), "alpha": Fraction(2), "h": h, "L": Fraction(1)}
                    for c, h in zip(data.equality_cases((Fraction(0),)), (Fraction(2), Fraction(1)), strict=True))


def serving_property(kind: str, *, coefficient=None, served=rob.served, budget: int = 200) -> Property:
    fn, default = {"capacity": (capacity_margin, rob.serving_coefficient),
                   "rigid": (rigid_margin, rob.serving_rigid_coefficient)}[kind]
    k = coefficient or default
    return Property(name=f"rob.serving/{kind}", strategy=serving_cases(),
                    screen=lambda c: fn(c, exact=False, coefficient=k, served=served),
                    confirm=lambda c: fn(c, exact=True, coefficient=k, served=served),
                    to_json=data.unit_to_json, from_json=data.unit_from_json, budget=budget,
                    examples=SHARP_CASES, ties=data.TIES, revision=2)


PROPERTIES = (serving_property("capacity"), serving_property("rigid"))


def stated_coefficient(t, h, alpha):
    """The statement's κ in count ≤ κ·Op (SPEC §4: "≤ Op (t + h/|α|)^{−2}")."""
    return 1 / (t + h / abs(alpha)) ** 2


def stated_rigid_coefficient(L, h):
    """The statement's κ under rigidity (SPEC §4: "≤ 6 Op L²/h²")."""
    return 6 * L ** 2 / h ** 2


def pin(coefficient=rob.serving_coefficient, rigid=rob.serving_rigid_coefficient) -> dict:
    grid3 = [(t, h, a) for (h, t) in data.PIN_GRID for a in (Fraction(-3, 2), Fraction(2))]
    cap = data.pinned(coefficient, stated_coefficient, grid3 + [(Fraction(0), Fraction(2), Fraction(2))])
    rig = data.pinned(rigid, stated_rigid_coefficient, list(data.PIN_GRID))
    spec = data.spec_states(ID, "Op (t + h/|α|)^{−2}", "6 Op L²/h²")
    return {"capacity": cap, "rigid": rig, "spec_says": spec, "agree": cap["agree"] and rig["agree"] and spec}


def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID)
    m = out.metric
    res = lemmas.serving()
    p = pin()
    ok = all(v for k, v in res.items() if not k.startswith("_")) and p["agree"]
    return replace(out, passed=out.passed and ok,
                   metric={**m, "sharp_constant": res["_sharp_constant"], "stated_constant": 6,
                           "pinned_constants": p["agree"]},
                   details={**out.details, "sharp_constant_derivation": {k: str(v) for k, v in res.items()},
                            "pinned_constants": p},
                   summary=f"the evaluator's constants {'are' if p['agree'] else 'are NOT'} the statement's; "
                           f"{m['ties_confirmed']} near-ties decided exactly; {m['applicable']} exact cases (data "
                           "stacked at u, caps, orthonormal, aimed u; t = 0, "
                           f"tight, near 0 and 1; h at |α|(1 − t) and at data points; L at the rigidity bound): "
                           f"{m['confirmed']} confirmed violations of count ≤ Op(t + h/|α|)⁻² or ≤ 6 Op L²/h² "
                           f"(exact decisions); sharp rigid constant {res['_sharp_constant']} (SymPy), not 6")
