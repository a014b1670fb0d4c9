r"""Falsification machinery shared by several rob.* claims (SPEC §3): case readers, the rigidity margin and
the properties of the certified Lipschitz routines that serve both rigidity claims.

Every case is plain JSON (floats, or exact strings), so a reproducer rebuilds it. Screens use float64 nets;
confirmations rebuild the case in exact arithmetic (float64 entries are binary rationals) and decide with
the 50-digit combinatorics and exact values of :mod:`numerics.rob`.

* :func:`rigidity_property` — max_j |α_j| (ball) or |α_j|√(1 − t_j²) (sphere) against 2 Lip, on the
  adversarial nets of :func:`checks.rob.strategies.nets` (rob.rigidity_ball, rob.rigidity_sphere; the
  d = 3 lift of rob.circle uses its screen and confirmation);
* :func:`degenerate_rigidity_property` — the same through :func:`numerics.rob.rigidity`, on the degenerate
  arrangements of :func:`checks.rob.strategies.degenerate_nets`;
* :func:`float_vs_rational_property` — the float net and its exact binary-rational reading get the same
  exact constant;
* :func:`near_triple` — three kinks nearly through one point (the oracle-ball and S²-probe properties).

The properties of the certified routines are two-sided: they fail on a constant that is too high as well
as on one that is too low, and a routine that raises on a valid net is a counterexample
(:class:`RoutineCrashed`).
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp
from hypothesis import strategies as st

from checks.evidence.tol import TOL
from checks.rob import strategies
from checks.runners.falsify import NotApplicable, Property
from numerics import rob


# ------------------------------------------------------------------------------------- case readers
def net_of(case, exact: bool = False):
    """The case's net: float64, or exact (SymPy entries kept, floats read as binary rationals)."""
    raw = (case["W"], case["b"], case["a"], case["v"], case["c"])
    return rob.as_exact(raw) if exact else rob.as_float(raw)


def domain_of(case):
    return rob.Sphere(case["d"]) if case.get("sphere") else rob.Ball(case["d"], case["rho"])


def mp_scalar(x):
    return mpmath.mpf(rob.to_mp(x)) if not isinstance(x, mpmath.mpf) else x


# ------------------------------------------------------------------------------------------ rigidity
def rigidity_margin(case, *, exact: bool, constant: float = 2.0) -> float:
    """max_j w_j − constant·Lip, w_j = |α_j| (ball) or |α_j|√(1 − t_j²) (sphere); > 0 is a violation.

    One-sided by the claim: an overestimated Lip passes it. Its other side is in the two-sided properties of the
    routine (oracle_ball, probe_s2, single_pole, float_vs_rational) and the equality cases of
    :mod:`checks.rob.exact_values` (ratio exactly 1 and 1/2).

    Scaled by 1 + max w_j so that float64 noise stays far below the screen's threshold of 0.
    """
    dom = domain_of(case)
    cf = rob.canonicalize(net_of(case, exact), dom)
    if cf.m == 0:
        raise NotApplicable("no kink meets the domain")
    L = rob.lipschitz(cf, dom)
    with mpmath.workdps(rob.MP_DPS):
        if isinstance(dom, rob.Sphere):
            w = [mp_scalar(x) for x in cf.tangential_jumps()] if exact else list(cf.tangential_jumps())
        else:
            w = [abs(mp_scalar(x)) for x in cf.alpha] if exact else list(np.abs(cf.alpha))
        top = max(w)
        up = L.mp() if exact else float(L.upper)
        return float((top - constant * up) / (1 + top))


def screen_rigidity(constant):
    def screen(case):
        # float64 noise on an equality case (|α| = 2 Lip happens) is not a hit
        return rigidity_margin(case, exact=False, constant=constant) - TOL["rob_screen_slack"]
    return screen


def confirm_rigidity(constant):
    def confirm(case):
        return rigidity_margin(case, exact=True, constant=constant)
    return confirm


def rigidity_property(name: str, d: int, *, sphere: bool, rho: float = 1.0, constant: float = 2.0,
                      budget: int = 120) -> Property:
    strat = strategies.nets(d, rho).map(lambda c: {**c, "sphere": sphere})
    return Property(name=name, strategy=strat, screen=screen_rigidity(constant),
                    confirm=confirm_rigidity(constant), to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)


# ------------------------------------------------------------------------- certified routines, shared
class RoutineCrashed(Exception):
    """The routine under test raised on a valid net: a counterexample in its own right."""


def checked_lipschitz(net, dom, **kw):
    """:func:`numerics.rob.lipschitz`, with any exception but ValueError turned into :class:`RoutineCrashed`."""
    try:
        return rob.lipschitz(net, dom, **kw)
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 — any other exception on a valid net is a bug of the routine
        raise RoutineCrashed(f"{type(exc).__name__}: {exc}") from exc


def crash_is_a_hit(margin_fn):
    def wrapped(case):
        try:
            return margin_fn(case)
        except RoutineCrashed:
            return 1.0
    return wrapped


def rel_diff(x, y) -> float:
    """|x − y| / max(1, |y|) at 60 digits, for exact SymPy numbers."""
    with mpmath.workdps(60):
        xv, yv = mpmath.mpf(sp.N(x, 70)), mpmath.mpf(sp.N(y, 70))
        return float(abs(xv - yv) / max(1, abs(yv)))


def weighted_kinds(d, sphere, extra):
    """Every applicable kind, with the given ones drawn more often (they hold the bugs that matter here)."""
    return tuple(strategies.applicable_kinds(d, sphere)) + tuple(k for k, n in extra.items() for _ in range(n))


@st.composite
def near_triple(draw, d: int, sphere: bool, rho: float = 1.5):
    """Three kinks nearly through one point p: normals w₁, w₂, w₃ = base + (−0.3, 0, 0.3)·t in one plane
    (tangent to the sphere at p on S^{d−1}), so w₂ lies between the others, the exact triple point has six
    cells and misses the patterns (1,0,1) and (0,1,0), and shifting the third kink by ε = ±10^−k opens a
    triangle with one of them. Weights (2, −2, 2) make (1,0,1) the steepest cell, 2‖w₁ + w₃‖ against ≈ 2
    elsewhere: a routine that merges nearly coincident points loses the maximum."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.integers(4, 12))
    eps = draw(st.sampled_from([1.0, -1.0])) * 10.0 ** -k
    p = rng.normal(size=d)
    if sphere:
        p /= np.linalg.norm(p)
    else:
        p *= rho * draw(st.floats(0.0, 0.6)) / max(np.linalg.norm(p), 1e-12)
    base, t = rng.normal(size=d), rng.normal(size=d)
    if sphere:
        base -= (base @ p) * p
    base /= np.linalg.norm(base)
    t -= (t @ base) * base
    if sphere:
        t -= (t @ p) * p
    t /= np.linalg.norm(t)
    W = np.array([base + c * t for c in (-0.3, 0.0, 0.3)])
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    b = -(W @ p)
    b[2] += eps
    return {"d": d, "sphere": sphere, "rho": 1.0 if sphere else rho, "kind": "near_triple", "W": W.tolist(),
            "b": b.tolist(), "a": [2.0, -2.0, 2.0], "v": list(0.05 * rng.normal(size=d)), "c": 0.0}


def _float_vs_rational_margin(case):
    net = strategies.case_float(case)
    dom = domain_of(case)
    if dom.d > 3 and not isinstance(dom, rob.Ball):
        raise NotApplicable("the exact routines cover d ≤ 3 here")
    a, b = checked_lipschitz(net, dom, time_limit=20), checked_lipschitz(rob.as_exact(net), dom, time_limit=20)
    if a.exact != b.exact:
        return 1.0
    if a.exact:
        return rel_diff(a.value, b.value) - TOL["rob_exact_slack"] if a.value != b.value else -1.0
    return 1.0 if (a.lower, a.upper) != (b.lower, b.upper) else -1.0


def float_vs_rational_property(d: int, sphere: bool, budget: int = 40) -> Property:
    strat = strategies.degenerate_nets(d, sphere=sphere, rho=1.0 if sphere else 1.5, m_max=8)
    return Property(name=f"rob.lipschitz/float_vs_rational_{'sphere' if sphere else 'ball'}{d}", strategy=strat,
                    screen=crash_is_a_hit(_float_vs_rational_margin),
                    confirm=crash_is_a_hit(_float_vs_rational_margin), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


def _degenerate_rigidity_margin(case):
    r = rob.rigidity(strategies.case_float(case), domain_of(case), time_limit=20)
    if len(r.weights) == 0:
        raise NotApplicable("no kink meets the domain")
    if r.holds_exactly is not None:
        return -1.0 if r.holds_exactly else 1.0
    return r.ratio - 1.0


def degenerate_rigidity_property(d: int, sphere: bool, budget: int = 60) -> Property:
    strat = strategies.degenerate_nets(d, sphere=sphere, rho=1.0 if sphere else 1.5, m_max=8)
    return Property(name=f"rob.rigidity_{'sphere' if sphere else 'ball'}/degenerate_d{d}", strategy=strat,
                    screen=_degenerate_rigidity_margin, confirm=_degenerate_rigidity_margin, to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)
