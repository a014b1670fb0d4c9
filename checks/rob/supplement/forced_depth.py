r"""rob.forced_depth: for pairwise ν-incoherent unit vectors u_1..u_K (|u_g·u_h| ≤ ν) and x on the sphere with
u_g·x ≥ σ > 0 for all g: Kσ ≤ ‖Σ_g u_g‖ ≤ √(K(1 + (K−1)ν)), so K ≤ (1 − ν)/(σ² − ν) when σ² > ν.

Derivation: :func:`proofs.rob.lemmas.forced_depth` (the expansion of ‖Σu‖², the algebra of the multiplicity
bound, and equality for the equiangular family with x the normalised sum). The quantities are elementary
(dot products), computed in float64 for the screen and in exact rationals for the confirmation.

* S — the derivation's steps, each exact;
* F — three properties (the upper bound, the lower bound, the multiplicity bound) on exact rational unit
  vectors: equiangular families u_g = a e_g + b e_0 (a² + b² = 1, every |u_g·u_h| = b² = ν, the extremal case),
  with signs flipped, random rational points of the sphere, and x = w/‖w‖ with w the aimed sum Σu_g, a
  perturbation of it or a random rational vector. ν is the exact max |u_g·u_h|; σ = min_g u_g·x, compared
  squared (σ² = min(u_g·w)²/‖w‖² is rational).
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
from proofs.rob import lemmas

ID = "rob.forced_depth"


@st.composite
def depth_cases(draw, aimed: bool = False):
    """``aimed``: only families whose aimed x has σ² > ν (the multiplicity bound's hypothesis) in the main."""
    K = draw(st.integers(1, 7))
    d = K + 1
    modes = ["equiangular", "equiangular", "mixed"] if aimed else ["equiangular", "equiangular", "signed", "random",
                                                                   "mixed"]
    mode = draw(st.sampled_from(modes))
    p = draw(data.rat(-3, 3).filter(lambda q: abs(q) != 1)) if aimed else draw(data.rat(-3, 3))
    a, b = (1 - p * p) / (1 + p * p), 2 * p / (1 + p * p)  # a² + b² = 1
    U = [[b] + [a if i == g else Fraction(0) for i in range(K)] for g in range(K)]
    if mode == "signed":
        U = [[-v for v in u] if draw(st.booleans()) else u for u in U]
    elif mode == "random":
        U = [draw(data.unit_vector(d)) for _ in range(K)]
    elif mode == "mixed" and K > 1:
        U[draw(st.integers(0, K - 1))] = draw(data.unit_vector(d))
    S = [sum((u[j] for u in U), Fraction(0)) for j in range(d)]
    wmode = draw(st.sampled_from(["aimed", "perturbed"] if aimed else ["aimed", "aimed", "perturbed", "random"]))
    if wmode == "aimed":
        w = S
    elif wmode == "perturbed":
        w = [s + draw(st.sampled_from([Fraction(0), Fraction(1, 1000), Fraction(-1, 100)])) for s in S]
    else:
        w = [draw(data.rat()) for _ in range(d)]
    return {"U": U, "w": w}


def _dot(a, b):
    return sum((x * y for x, y in zip(a, b, strict=True)), Fraction(0))


def _quantities(case, exact: bool):
    """(K, ‖Σu‖², ν, σ² or None when σ ≤ 0), exact or float64."""
    if exact:
        U, w = case["U"], case["w"]
        if any(_dot(u, u) != 1 for u in U):
            raise ValueError("non-unit vector in the case")
        K = len(U)
        S = [sum((u[j] for u in U), Fraction(0)) for j in range(len(w))]
        nu = max((abs(_dot(U[g], U[h])) for g in range(K) for h in range(g + 1, K)), default=Fraction(0))
        ww = _dot(w, w)
        if ww == 0:
            raise NotApplicable("x = w/‖w‖ needs w ≠ 0")
        m = min(_dot(u, w) for u in U)
        return K, _dot(S, S), nu, (m * m / ww if m > 0 else None)
    U, w = np.asarray(data.fl(case["U"]), float), np.asarray(data.fl(case["w"]), float)
    K = len(U)
    S = U.sum(axis=0)
    G = np.abs(U @ U.T)
    nu = float(G[np.triu_indices(K, 1)].max()) if K > 1 else 0.0
    nw = float(np.linalg.norm(w))
    if nw == 0:
        raise NotApplicable("x = w/‖w‖ needs w ≠ 0")
    m = float((U @ w).min()) / nw
    return K, float(S @ S), nu, (m * m if m > 0 else None)


def upper_margin(case, *, exact: bool, offset: int = 1) -> float:
    """‖Σu‖² − K(1 + (K − offset)ν), relative to K; > 0 is a violation (the claim has offset 1)."""
    K, s2, nu, _ = _quantities(case, exact)
    return float((s2 - K * (1 + (K - offset) * nu)) / K)


def lower_margin(case, *, exact: bool, extra: int = 0) -> float:
    """(K + extra)²σ² − ‖Σu‖² (σ > 0), relative to K; > 0 is a violation (the claim has extra 0)."""
    K, s2, _, sig2 = _quantities(case, exact)
    if sig2 is None:
        raise NotApplicable("σ = min u_g·x ≤ 0")
    return float(((K + extra) ** 2 * sig2 - s2) / K)


def multiplicity_margin(case, *, exact: bool, nu_coef: int = 1) -> float:
    """K(σ² − ν) − (1 − nu_coef·ν) when σ² > ν; > 0 is a violation (the claim has nu_coef 1)."""
    K, _, nu, sig2 = _quantities(case, exact)
    if sig2 is None or not sig2 > nu:
        raise NotApplicable("σ² ≤ ν: no multiplicity bound")
    return float(K * (sig2 - nu) - (1 - nu_coef * nu))


def depth_property(kind: str, *, offset: int = 1, extra: int = 0, nu_coef: int = 1, budget: int = 200) -> Property:
    fn = {"upper": lambda c, e: upper_margin(c, exact=e, offset=offset),
          "lower": lambda c, e: lower_margin(c, exact=e, extra=extra),
          "multiplicity": lambda c, e: multiplicity_margin(c, exact=e, nu_coef=nu_coef)}[kind]
    return Property(name=f"rob.forced_depth/{kind}", strategy=depth_cases(aimed=kind == "multiplicity"),
                    screen=lambda c: fn(c, False) - TOL["rob_lemma_screen"], confirm=lambda c: fn(c, True),
                    to_json=lambda c: {"U": data.enc(c["U"]), "w": data.enc(c["w"])},
                    from_json=lambda j: {"U": data.dec(j["U"]), "w": data.dec(j["w"])}, budget=budget)


PROPERTIES = (depth_property("upper"), depth_property("lower"), depth_property("multiplicity"))


def level_S(ctx: Context) -> Outcome:
    res = lemmas.forced_depth()
    k = sum(map(bool, res.values()))
    return Outcome(all(res.values()), {"identities": len(res), "proved": k},
                   f"{k}/{len(res)} exact: ‖Σu‖² = K + Σ_{{g≠h}} u_g·u_h ≤ K(1 + (K−1)ν); K²σ² ≤ ‖Σu‖² ⇔ "
                   "K(σ² − ν) ≤ 1 − ν; equality for the equiangular family with x the normalised sum",
                   details=res)


def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID)
    m = out.metric
    return replace(out, summary=f"{m['applicable']} exact rational unit-vector families (equiangular, signed, random; "
                                f"x aimed at Σu): {m['confirmed']} confirmed violations of Kσ ≤ ‖Σu‖ ≤ "
                                "√(K(1+(K−1)ν)) or K ≤ (1−ν)/(σ²−ν)")
