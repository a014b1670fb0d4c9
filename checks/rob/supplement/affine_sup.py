r"""rob.affine_sup: with A = [X 1] and P the orthogonal projection onto col A,
sup_{v,c} [Σ_i y_i(v·x_i + c) − ¼ Σ_i (v·x_i + c)²] = yᵀPy, attained at (v·x_i + c)_i = 2Py; E_y yᵀPy = rank A.

Derivation: :func:`proofs.rob.lemmas.affine_sup`. Evaluators: :func:`numerics.rob.projection_value`,
:func:`numerics.rob.affine_maximiser`, :func:`numerics.rob.affine_rank` (exact Gram–Schmidt for rational
input, float64 SVD otherwise). References: SymPy's exact pseudo-inverse and rank, mpmath's SVD at 50 digits.

* S — the stationary point of the concave quadratic, its value, P² = P, tr P = rank, E_y yᵀPy = tr P over
  all 2^n labelings (symbolic A of full column rank; a rank-deficient A has the projection of a column basis);
* P — deterministic rational data sets (generic, duplicated points, rank-deficient, n < d + 1, collinear):
  the exact yᵀPy against mpmath's SVD projection at 50 digits, the exact maximiser's value, E_y yᵀPy = rank A
  exactly by enumeration;
* F — three properties on adversarial rational data: no probe (v, c) beats yᵀPy; the evaluator's maximiser
  attains yᵀPy with z = 2Py; E_y yᵀPy = rank A over all 2^n labelings. Confirmation is exact (SymPy).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction

import mpmath
import numpy as np

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.rob.supplement import lemma_data as data
from checks.runners.falsify import Property, run_properties
from numerics import rob
from proofs.rob import lemmas

ID = "rob.affine_sup"
QUARTER = Fraction(1, 4)


def objective(X, y, v, c, quarter=QUARTER):
    """Σ y_i z_i − quarter·Σ z_i², z_i = v·x_i + c, from the definition (exact for rationals)."""
    z = [sum((a * b for a, b in zip(v, row, strict=True)), Fraction(0)) + c for row in X]
    return sum((yi * zi for yi, zi in zip(y, z, strict=True)), Fraction(0)) - quarter * sum(zi * zi for zi in z)


def objective_f(X, y, v, c, quarter=QUARTER):
    z = np.asarray(X, float) @ np.asarray(v, float) + float(c)
    return float(np.asarray(y, float) @ z - float(quarter) * (z @ z))


# ------------------------------------------------------------------------------------------- S
def level_S(ctx: Context) -> Outcome:
    res = lemmas.affine_sup(*((2, 1) if ctx.quick else (3, 2)))
    ok = all(res.values())
    return Outcome(ok, {"identities": len(res), "proved": sum(map(bool, res.values()))},
                   "maximiser of the concave quadratic z = 2Py, value yᵀPy, P² = P, tr P = rank A, "
                   f"E_y yᵀPy = tr P over all 2^n labelings: {sum(map(bool, res.values()))}/{len(res)} exact",
                   details=res)


# ------------------------------------------------------------------------------------------- P
def p_cases():
    F = Fraction
    return {
        "generic d=3 n=6": [[F(1, 2), F(-1), F(2, 3)], [F(0), F(1, 5), F(1)], [F(3), F(1), F(-1, 7)],
                            [F(-2), F(1, 3), F(0)], [F(1, 16), F(5), F(2)], [F(-1, 2), F(-3), F(1, 4)]],
        "duplicated points": [[F(1), F(2)], [F(1), F(2)], [F(-1, 3), F(1)], [F(-1, 3), F(1)], [F(5), F(0)]],
        "rank deficient (x2 = 2 x1 + 1)": [[F(a), F(2 * a + 1)] for a in (F(-1), F(0), F(1, 3), F(2), F(5, 7))],
        "n < d + 1": [[F(1), F(0), F(2), F(-1)], [F(0), F(3), F(1), F(1, 2)], [F(-1), F(1), F(1), F(0)]],
        "collinear in d=3": [[F(1) + s, F(2) - s, F(3) * s] for s in (F(0), F(1, 2), F(-1), F(7, 3), F(4))],
        "one point": [[F(1, 3), F(-2)]],
    }


def mp_projection_value(X, y):
    """yᵀPy from mpmath's SVD of A = [X 1] (rank cut 10^{-30} of the largest singular value)."""
    A = mpmath.matrix([[data.mpf(v) for v in row] + [1] for row in X])
    U, S, _ = mpmath.svd_r(A, full_matrices=False)
    top = max(S[i] for i in range(len(S)))
    r = [i for i in range(len(S)) if S[i] > top * mpmath.mpf(10) ** (-30)]
    Y = mpmath.matrix([[v] for v in y])
    return sum((sum(U[k, i] * Y[k] for k in range(len(y)))) ** 2 for i in r)


def level_P(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.affine_sup/P")
    rows, digits, ok = {}, [], True
    with mpmath.workdps(TOL["precision_dps"]):
        for name, X in p_cases().items():
            y = [int(s) for s in rng.choice([-1, 1], size=len(X))]
            val = rob.projection_value(X, y)
            ref = mp_projection_value(X, y)
            err = abs(data.mpf(val) - ref)
            dg = float(-mpmath.log10(err / max(abs(ref), 1))) if err else float(TOL["precision_dps"])
            v, c = rob.affine_maximiser(X, y)
            attained = objective(X, y, v, c) == val
            rank = rob.affine_rank(X)
            mean = sum((rob.projection_value(X, list(s)) for s in itertools.product((-1, 1), repeat=len(X))),
                       Fraction(0)) / 2 ** len(X)
            good = dg >= TOL["precision_min_digits"] and attained and mean == rank
            ok &= good
            digits.append(dg)
            rows[name] = {"yPy": str(val), "digits": round(dg, 1), "attained": attained, "rank": rank,
                          "E_y yPy": str(mean), "ok": good}
    return Outcome(ok, {"cases": len(rows), "min_digits": min(digits)},
                   f"{len(rows)} rational data sets: exact yᵀPy = mpmath SVD projection to ≥ {min(digits):.0f} "
                   "digits, the exact maximiser attains it, E_y yᵀPy = rank A exactly", details=rows)


# ------------------------------------------------------------------------------------------- F
def _screen_value(case, value):
    return value(np.asarray(data.fl(case["X"]), float), np.asarray(case["y"], float))


def upper_margin(case, *, exact: bool, value=rob.projection_value, quarter=QUARTER) -> float:
    """max over probes (and the maximiser shifted by δ) of objective − yᵀPy; > 0 is a violation."""
    X, y = case["X"], case["y"]
    v0, c0 = rob.affine_maximiser(X, y)
    probes = list(case["probes"]) + [([a + case["delta"] for a in v0], c0 - case["delta"])]
    if not exact:
        top = _screen_value(case, value)
        best = max(objective_f(data.fl(X), y, data.fl(v), float(c), quarter) for v, c in probes)
        return (best - top) / (1 + abs(top))
    ref, _ = data.sympy_projection_value(X, y)
    best = max(objective(X, y, v, c, quarter) for v, c in probes)
    # a probe beating SymPy's yᵀPy refutes the claim; one beating the evaluator's exact yᵀPy refutes the evaluator
    return float(best - min(Fraction(int(ref.p), int(ref.q)), Fraction(value(X, y))))


def attained_margin(case, *, exact: bool, value=rob.projection_value, maximiser=rob.affine_maximiser,
                    quarter=QUARTER) -> float:
    """|objective(maximiser) − yᵀPy| + max_i |z_i − 2(Py)_i|; > 0 is a violation."""
    X, y = case["X"], case["y"]
    if not exact:
        Xf = np.asarray(data.fl(X), float)
        v, c = maximiser(Xf, np.asarray(y, float))
        top = _screen_value(case, value)
        z = Xf @ np.asarray(v, float) + float(c)
        Pf = np.hstack([Xf, np.ones((len(Xf), 1))])
        Py = Pf @ np.linalg.pinv(Pf) @ np.asarray(y, float)  # numpy's pseudo-inverse, not the evaluator's SVD cut
        gap = abs(objective_f(Xf, y, v, c, quarter) - top) / (1 + abs(top)) + float(np.abs(z - 2 * Py).max())
        return gap - TOL["rob_lemma_screen"] * (1 + float(np.abs(z).max()) + float(np.abs(Xf).max()) ** 2)
    ref, P = data.sympy_projection_value(X, y)
    v, c = maximiser(X, y)
    z = [sum((a * b for a, b in zip(v, row, strict=True)), Fraction(0)) + c for row in X]
    Py = P * data.sp.Matrix(y)
    zgap = max(abs(Fraction(zi) - 2 * Fraction(int(p.p), int(p.q))) for zi, p in zip(z, Py, strict=True))
    return float(abs(objective(X, y, v, c, quarter) - Fraction(int(ref.p), int(ref.q))) + zgap)


def expectation_margin(case, *, exact: bool, value=rob.projection_value, rank=rob.affine_rank) -> float:
    """|mean over all 2^n labelings of yᵀPy − rank A|; > 0 is a violation."""
    X = case["X"]
    n = len(X)
    labels = list(itertools.product((-1, 1), repeat=n))
    if not exact:
        Xf = np.asarray(data.fl(X), float)
        mean = sum(value(Xf, np.asarray(s, float)) for s in labels) / len(labels)
        return abs(mean - rank(Xf)) - TOL["rob_lemma_screen"] * (1 + n)
    _, P = data.sympy_projection_value(X, [1] * n)
    # E_y yᵀPy by enumeration with SymPy's P, against SymPy's rank and the evaluator's exact value/rank
    mean_ref = sum(((data.sp.Matrix(s).T * P * data.sp.Matrix(s))[0] for s in labels), data.sp.Integer(0)) / len(labels)
    mean_ev = sum((value(X, list(s)) for s in labels), Fraction(0)) / len(labels)
    r_ref = data.sympy_rank(X)
    return float(abs(Fraction(str(mean_ref)) - r_ref) + abs(mean_ev - r_ref) + abs(rank(X) - r_ref))


def affine_property(kind: str, *, value=rob.projection_value, maximiser=rob.affine_maximiser,
                    rank=rob.affine_rank, quarter=QUARTER, budget: int = 150) -> Property:
    if kind == "upper":
        def m(c, exact):
            return upper_margin(c, exact=exact, value=value, quarter=quarter)
        screen = lambda c: m(c, False) - TOL["rob_lemma_screen"]  # noqa: E731
    elif kind == "attained":
        def m(c, exact):
            return attained_margin(c, exact=exact, value=value, maximiser=maximiser, quarter=quarter)
        screen = lambda c: m(c, False)  # noqa: E731
    elif kind == "expectation":
        def m(c, exact):
            return expectation_margin(c, exact=exact, value=value, rank=rank)
        screen = lambda c: m(c, False)  # noqa: E731
    else:
        raise ValueError(kind)
    return Property(name=f"rob.affine_sup/{kind}", strategy=data.affine_data(), screen=screen,
                    confirm=lambda c: m(c, True), to_json=data.affine_to_json, from_json=data.affine_from_json,
                    budget=budget)


PROPERTIES = (affine_property("upper"), affine_property("attained"), affine_property("expectation", budget=100))


def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID)
    m = out.metric
    return replace(out, summary=f"{m['applicable']} adversarial rational data sets (duplicates, rank-deficient, "
                                f"n < d + 1, collinear): {m['confirmed']} confirmed violations of sup = yᵀPy, "
                                f"attainment at 2Py or E_y yᵀPy = rank A (exact SymPy confirmation)")
