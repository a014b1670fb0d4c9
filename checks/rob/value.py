r"""rob.value: if the data are fitted below the noise floor, Lip_D(f) ≤ L and diam D ≤ 4, then
sup_D |f| ≤ 2 + 4L.

Evaluators: :func:`numerics.rob.lipschitz` (exact on B_2 ⊂ R², R³ and on S²), :func:`numerics.rob.evaluate`.

* F — :func:`value_property`: nets that fit ±1 labels below the noise floor (σ² = 1), the sampled max |f|
  (a lower bound on sup|f|) against 2 + 4 Lip, confirmed at 50 digits with the exact constant.
"""

from __future__ import annotations

from dataclasses import replace

import mpmath
import numpy as np
from hypothesis import strategies as st

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.rob import cases, strategies
from checks.rob.properties import domain_of, net_of
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import rob

ID = "rob.value"


@st.composite
def value_cases(draw, d: int, sphere: bool):
    case = draw(strategies.nets(d, 1.0 if sphere else 2.0, m_max=5))
    case["sphere"] = sphere
    n = draw(st.integers(1, 6))
    case["Xdata"] = [[draw(st.floats(-1, 1, width=64)) for _ in range(d)] for _ in range(n)]
    case["flip"] = [draw(st.booleans()) for _ in range(n)]
    scale = draw(st.sampled_from([0.1, 0.3, 1.0, 3.0]))  # small outputs fit ±1 labels more often
    case["a"] = [scale * x for x in case["a"]]
    case["v"] = [scale * x for x in case["v"]]
    case["c"] = scale * case["c"]
    return case


def _value_points(case):
    d = case["d"]
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    Xd = np.asarray(case["Xdata"], float)
    Xd = Xd / np.maximum(np.linalg.norm(Xd, axis=1, keepdims=True), 1e-12)
    if case.get("sphere"):
        return X, Xd
    R = case["rho"]
    return X * R, Xd * R * 0.9


# One-sided by the claim (sup|f| ≤ 2 + 4L, a strict and unattained supremum): an overestimated Lip passes it; the
# Lipschitz constant it uses is pinned two-sidedly by rob.rigidity_ball and rob.rigidity_sphere.
def value_margin(case, *, exact: bool, constant: float = 4.0) -> float:
    """max_sample |f| − (2 + 4 Lip) for nets that fit ±1 labels below the noise floor (σ² = 1).

    The sampled maximum is a lower bound on sup|f| (genuine points), so a positive margin is a genuine
    violation. Labels are sign(f(x_i)), flipped where ``flip``; nets with mean squared error ≥ 1 are
    outside the hypothesis.
    """
    dom = domain_of(case)
    net = net_of(case)
    X, Xd = _value_points(case)
    fd = rob.evaluate(net, Xd)
    y = np.where(fd >= 0, 1.0, -1.0) * np.where(case["flip"], -1.0, 1.0)
    if not np.mean((fd - y) ** 2) < 1.0:
        raise NotApplicable("the net does not fit the labels below the noise floor")
    L = rob.lipschitz(net, dom)
    if not exact:
        top = float(np.max(np.abs(rob.evaluate(net, np.vstack([X, Xd])))))
        return (top - (2 + constant * float(L.upper))) / (1 + top)
    with mpmath.workdps(rob.MP_DPS):
        ex = net_of(case, exact=True)
        Le = rob.lipschitz(ex, dom)
        f = cases.mp_net(ex)
        pts = np.vstack([X, Xd])
        best = np.argsort(-np.abs(rob.evaluate(net, pts)))[:8]  # any genuine point gives a lower bound
        top = max(abs(f([mpmath.mpf(float(q)) for q in pts[i]])) for i in best)
        return float((top - (2 + constant * Le.mp())) / (1 + top))


def value_property(name: str, d: int, *, sphere: bool, constant: float = 4.0, budget: int = 80) -> Property:
    return Property(name=name, strategy=value_cases(d, sphere),
                    screen=lambda c: value_margin(c, exact=False, constant=constant) - TOL["rob_screen_slack"],
                    confirm=lambda c: value_margin(c, exact=True, constant=constant), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


PROPERTIES = (value_property("rob.value/ball2", 2, sphere=False), value_property("rob.value/ball3", 3, sphere=False),
              value_property("rob.value/sphere3", 3, sphere=True))


def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID, ignore=(rob.KinkCoincidenceWarning,))
    m = out.metric
    return replace(out, summary=f"{m['applicable']} nets fitting ±1 labels below the noise floor on B_2 ⊂ R², "
                                f"R³ and S² (diam ≤ 4), exact Lip: {m['confirmed']} confirmed sup|f| > 2 + 4L")
