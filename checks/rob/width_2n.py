r"""rob.width_2n: the width-2n interpolant Σ_i (y_i/s)[ReLU(x_i·x − (1−s)) − ReLU(x_i·x − 1)] interpolates when
max_{i≠j} x_i·x_j ≤ 1 − s; its caps are disjoint when max x_i·x_j ≤ 2(1−s)² − 1, and then Lip = √((2−s)/s)
exactly (√7 at s = 1/4).

Derivation: :func:`proofs.rob.width_2n`; the closed forms :func:`numerics._derived.rob.width2n_lipschitz`
and :func:`numerics._derived.rob.cap_threshold`. Evaluator: :func:`numerics.rob.lipschitz` on
:class:`numerics.rob.Sphere`.

* S — the derivation's claims, and an exact 6-point instance on S² that interpolates with error 0;
* P — rotated cross-polytopes (n = 2d, d = 3, 4): exact interpolation and Lip = √7 exactly, the closed form
  to 50 digits; the generated cap threshold and Lip against their definitions (cos 2 arccos(1 − s), the
  tangential norm on the cap boundary) at three s; overlapping caps; the dimension uniform data need for the cap
  condition (a metric).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import sympy as sp

from checks.evidence.outcome import Outcome, digits_agreed
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.rob import cases
from numerics import rob
from numerics._derived import rob as derived
from proofs import rob as proof

ID = "rob.width_2n"


def width2n_net(X, y, s):
    """Σ_i (y_i/s)[ReLU(x_i·x − (1−s)) − ReLU(x_i·x − 1)] as a net tuple."""
    W = [list(x) for x in X] * 2
    n = len(X)
    b = [-(1 - s)] * n + [-sp.Integer(1)] * n
    a = [yi / s for yi in y] + [-yi / s for yi in y]
    return (W, b, a, [0] * len(X[0]), 0)


def level_S(ctx: Context) -> Outcome:
    w = proof.width_2n()
    rng = ctx.rng("rob.width_2n/S")
    s = sp.Rational(1, 4)
    # an exact instance: n = 6 points ±(rotated e_i) on S², labels ±1
    Qm = cases.rational_orthogonal(rng, 3)
    X = [list(Qm[:, i]) for i in range(3)] + [[-z for z in Qm[:, i]] for i in range(3)]
    y = [1, -1, 1, 1, -1, -1]
    net = width2n_net(X, y, s)
    err = [sp.simplify(cases.exact_eval(net, x) - yi) for x, yi in zip(X, y, strict=True)]
    ok = all(w.checks.values()) and all(e == 0 for e in err)
    return Outcome(ok, {"derivations": f"{sum(w.checks.values())}/{len(w.checks)}", "interp_error": "0 (exact)",
                        "lip": str(w.lipschitz), "threshold": str(w.threshold)},
                   f"unit profile, separation ⇒ exact interpolation, threshold cos(2 arccos(1−s)) = "
                   f"{w.threshold}, Lip² = (2−s)/s on each cap, √7 at s = 1/4; exact 6-point instance on S² "
                   f"interpolates with error 0", details=w.checks)


def level_P(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.width_2n/P")
    s = sp.Rational(1, 4)
    digits, rows = [], []
    with mpmath.workdps(TOL["precision_dps"]):
        for d in ((3,) if ctx.quick else (3, 4)):
            Qm = cases.rational_orthogonal(rng, d)
            X = [list(Qm[:, i]) for i in range(d)] + [[-z for z in Qm[:, i]] for i in range(d)]
            y = [int(z) for z in rng.choice([-1, 1], size=2 * d)]
            net = width2n_net(X, y, s)
            err = max(abs(sp.simplify(cases.exact_eval(net, x) - yi)) for x, yi in zip(X, y, strict=True))
            L = rob.lipschitz(net, rob.Sphere(d))
            exact_eq = sp.simplify(L.value - sp.sqrt(7)) == 0
            digits.append(digits_agreed(L.mp(), derived.width2n_lipschitz(mpmath.mpf(1) / 4)))
            rows.append({"d": d, "n": 2 * d, "interp_error": str(err), "lip": str(L.value), "exact_sqrt7": exact_eq,
                         "method": L.method})
        # caps not disjoint (max x_i·x_j = 3/5 > 1/8, still ≤ 1 − s so it interpolates): exact Lip on S²
        X = [[1, 0, 0], [sp.Rational(3, 5), sp.Rational(4, 5), 0], [0, 0, 1]]
        net = width2n_net(X, [1, -1, 1], s)
        Lo = rob.lipschitz(net, rob.Sphere(3))
        rows.append({"d": 3, "n": 3, "caps": "overlapping (x1·x2 = 3/5)", "lip": float(Lo.upper),
                     "vs_sqrt7": float(Lo.upper) / math.sqrt(7), "method": Lo.method})
        # the generated cap threshold against its definition: caps of angular radius θ = arccos(1 − s) around
        # x_i, x_j are disjoint iff the angle between the centres is ≥ 2θ, i.e. x_i·x_j ≤ cos 2θ
        for sv in (mpmath.mpf(1) / 4, mpmath.mpf(1) / 10, mpmath.mpf(29) / 100):
            digits.append(digits_agreed(derived.cap_threshold(sv), mpmath.cos(2 * mpmath.acos(1 - sv))))
            # and the generated Lip against the tangential norm (1/s)√(1 − (1 − s)²) on the cap boundary
            digits.append(digits_agreed(derived.width2n_lipschitz(sv), mpmath.sqrt(1 - (1 - sv) ** 2) / sv))
    pairs = pair_instances(ctx)
    need = d_needed(ctx)
    low = min(digits)
    ok = low >= TOL["precision_min_digits"] and all(r.get("exact_sqrt7", True) for r in rows) and all(
        r.get("interp_error", "0") == "0" for r in rows) and all(r["contains"] and r["gap"] <= 1e-6 for r in pairs)
    return Outcome(ok, {"min_digits": low, "overlap_lip_over_sqrt7": rows[-1]["vs_sqrt7"], "d_needed": need},
                   f"rotated cross-polytopes (n = 2d, d = 3, 4): interpolation error exactly 0, Lip = √7 exactly "
                   f"(closed form vs derived, {low:.0f} digits); overlapping caps in d = 3 give Lip = "
                   f"{rows[-1]['lip']:.4f} = {rows[-1]['vs_sqrt7']:.3f}·√7; {len(pairs)} exact two-point instances "
                   f"in d = 6 and 200 (overlapping, tangent; opposite and equal labels) inside their certified "
                   f"cap-graph brackets (widest {max(r['gap'] for r in pairs):.1e}); uniform data need d ≈ {need}",
                   details={"instances": rows, "pairs": pairs})


# Two data points with x_1·x_2 = ρ exactly, both rational on S^{d−1}: x_1 = e_1, x_2 = (ρ, y/q) with
# ‖y‖² = q²(1 − ρ²) a sum of four integer squares. ρ = 1/8 is the tangency of the s = 1/4 caps
# (2(1 − s)² − 1 = 1/8): 1 − 1/64 = (7² + 3² + 2² + 1²)/64.
PAIR_POINTS = {"3/5": (Fraction(3, 5), (Fraction(4, 5), 0, 0, 0)),
               "1/5": (Fraction(1, 5), (Fraction(4, 5), Fraction(2, 5), Fraction(2, 5), 0)),
               "1/8": (Fraction(1, 8), (Fraction(7, 8), Fraction(3, 8), Fraction(2, 8), Fraction(1, 8)))}


def pair_exact_lip2(rho: Fraction, same_label: bool) -> Fraction:
    """Lip² of the two-point construction (s = 1/4, labels ±1) on S^{d−1}, d ≥ 4, by hand: the caps are the only
    cells besides the outside; a cap alone gives 7 (its rim); when the caps meet (ρ > 1/8) the lens adds
    ‖g‖² − min_lens (g·x)²: opposite labels, g = 4(x_1 − x_2), g·x = 0 at the lens' symmetric point: 32(1 − ρ);
    equal labels, g = 4(x_1 + x_2), g·x ≥ 4(3/4 + 3/4) = 6 on the lens, attained on its rim: 32(1 + ρ) − 36.
    Tangent caps (ρ = 1/8) do not meet: 7."""
    if rho <= Fraction(1, 8):
        return Fraction(7)
    lens = 32 * (1 + rho) - 36 if same_label else 32 * (1 - rho)
    return max(Fraction(7), lens)


def _check(L, ex: Fraction) -> tuple[bool, float]:
    """(the exact Lip² lies in the result, its relative gap): exact results compared as a + b√D, brackets as floats
    squared exactly."""
    from numerics.rob import exact as E

    if L.exact:
        return E.QNum(ex).cmp(L.value2) == 0, 0.0
    lo2, up2 = Fraction(float(L.lower)) ** 2, Fraction(float(L.upper)) ** 2
    return lo2 <= ex <= up2, float(L.gap)


def pair_instances(ctx: Context) -> list[dict]:
    """The certified bracket of rob.lipschitz (the cap-overlap graph, d ≥ 4) on exact instances against
    :func:`pair_exact_lip2`: two points overlapping (opposite and equal labels) or tangent; and three points where
    x_1, x_2 are tangent and x_1, x_3 overlap (x_3 = (3/5, 0, 0, 0, 0, 4/5, 0, …), x_2·x_3 = 3/40 < 1/8), so that
    the caps are not pairwise disjoint and the cap graph must decide the tangency by its rational fall-back."""
    s = Fraction(1, 4)
    out = []
    dims = (6,) if ctx.quick else (6, 200)
    for d in dims:
        x1 = [Fraction(1)] + [Fraction(0)] * (d - 1)
        x3 = [Fraction(3, 5), 0, 0, 0, 0, Fraction(4, 5)] + [Fraction(0)] * (d - 6)
        for key, (rho, y) in PAIR_POINTS.items():
            x2 = [rho, *y] + [Fraction(0)] * (d - 5)
            assert sum(t * t for t in x2) == 1 and sum(a * b for a, b in zip(x1, x2, strict=True)) == rho
            for same in (False, True):
                labels = [1, 1] if same else [1, -1]
                pts = [x1, x2]
                exact = pair_exact_lip2(rho, same)
                if key == "1/8":          # add x_3: a lens with x_1 (ρ = 3/5), none with x_2
                    pts, labels = [x1, x2, x3], labels + [-labels[0]]
                    exact = max(exact, pair_exact_lip2(Fraction(3, 5), False))
                n = len(pts)
                W = pts + pts
                b = [-(1 - s)] * n + [Fraction(-1)] * n
                a = [Fraction(lab) / s for lab in labels] + [-Fraction(lab) / s for lab in labels]
                L = rob.lipschitz((W, b, a, [Fraction(0)] * d, Fraction(0)), rob.Sphere(d), time_limit=30)
                contains, gap = _check(L, exact)
                out.append({"d": d, "rho": key, "points": n, "labels": "equal" if same else "opposite",
                            "lower": float(L.lower), "upper": float(L.upper), "exact": math.sqrt(float(exact)),
                            "contains": contains, "gap": gap, "method": L.method.split(" (")[0]})
    return out


def d_needed(ctx: Context) -> dict:
    """Smallest d on a doubling grid where n uniform points on S^{d−1} meet the s = 1/4 cap condition."""
    rng = ctx.rng("rob.width_2n/d")
    thr = derived.cap_threshold(0.25)
    out = {}
    for n in ((16, 64) if ctx.quick else (16, 64, 256)):
        d = 8
        while d <= 8192:
            X = rng.normal(size=(n, d))
            X /= np.linalg.norm(X, axis=1, keepdims=True)
            G = X @ X.T
            np.fill_diagonal(G, -1)
            if G.max() <= thr:
                break
            d *= 2
        out[n] = d
    return out
