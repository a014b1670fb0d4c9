r"""Adversarial rational data and independent references for the deterministic lemmas of SPEC §4.

Strategies (Hypothesis) draw exact rational data; the cases are JSON-able (rationals as "p/q" strings):

* :func:`affine_data` — X with duplicated points, rank-deficient columns (a column an affine combination of
  others), constant columns, n < d + 1; labels ±1; rational probes (v, c);
* :func:`unit_vector` — exact rational points of S^{d−1} (inverse stereographic projection);
* :func:`unit_data` — exact unit data with stacked points, near-coincident caps and orthonormal families, u a point
  or aimed at the normalised sum of a chosen subset (:func:`rational_unit`), thresholds tight at the data;
* :func:`equiangular` — u_g = a e_g + b e_0 with a² + b² = 1 rational: |u_g·u_h| = b² exactly.

References (:func:`sympy_projection_value`, :func:`sympy_rank`, :func:`mp_op`, :func:`sympy_op_sign`) use SymPy's
exact pseudo-inverse, rank and Sturm counts, and mpmath's symmetric eigensolver; they share no code with
:mod:`numerics.rob.lemmas`. :func:`op_margin` decides "Op < c" exactly with SymPy beside the evaluator.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import sympy as sp
from hypothesis import strategies as st

DENOMS = (1, 2, 3, 4, 5, 7, 16)


def rat(lo: int = -6, hi: int = 6):
    return st.builds(Fraction, st.integers(lo, hi), st.sampled_from(DENOMS))


def enc(x):
    """JSON form of nested rationals."""
    if isinstance(x, list | tuple):
        return [enc(v) for v in x]
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}"
    return x


def dec(x):
    if isinstance(x, list):
        return [dec(v) for v in x]
    if isinstance(x, str) and "/" in x:
        return Fraction(x)
    return x


def fl(x):
    """Float64 of nested rationals (the screen's input)."""
    if isinstance(x, list | tuple):
        return [fl(v) for v in x]
    return float(x)


@st.composite
def affine_data(draw):
    d = draw(st.integers(1, 4))
    n = draw(st.integers(1, 7))
    X = [[draw(rat()) for _ in range(d)] for _ in range(n)]
    mode = draw(st.sampled_from(["random", "duplicates", "rank_deficient", "constant", "few", "collinear"]))
    if mode == "duplicates" and n > 1:
        for i in range(1, n):
            if draw(st.booleans()):
                X[i] = list(X[draw(st.integers(0, i - 1))])
    elif mode == "rank_deficient" and d > 1:
        j, k = draw(st.integers(1, d - 1)), draw(st.integers(0, d - 2))
        a, b = draw(rat(-3, 3)), draw(rat(-3, 3))
        for row in X:
            row[j] = a * row[min(k, j - 1)] + b
    elif mode == "constant":
        b = draw(rat())
        for row in X:
            row[draw(st.integers(0, d - 1))] = b
    elif mode == "few":
        X = X[: max(1, min(n, d))]  # n ≤ d < d + 1
    elif mode == "collinear":
        p0 = [draw(rat()) for _ in range(d)]
        dirn = [draw(rat()) for _ in range(d)]
        X = [[p0[j] + s * dirn[j] for j in range(d)] for s in (draw(rat()) for _ in range(n))]
    n = len(X)
    y = [draw(st.sampled_from([-1, 1])) for _ in range(n)]
    probes = [([draw(rat()) for _ in range(d)], draw(rat())) for _ in range(draw(st.integers(1, 4)))]
    delta = draw(st.sampled_from([Fraction(0), Fraction(1, 1000), Fraction(1, 10), Fraction(1)]))
    return {"X": X, "y": y, "probes": probes, "delta": delta, "mode": mode}


def affine_to_json(c):
    return {"X": enc(c["X"]), "y": c["y"], "probes": [[enc(v), enc(b)] for v, b in c["probes"]],
            "delta": enc(c["delta"]), "mode": c["mode"]}


def affine_from_json(j):
    return {"X": dec(j["X"]), "y": j["y"], "probes": [(dec(v), dec(b)) for v, b in j["probes"]],
            "delta": dec(j["delta"]), "mode": j["mode"]}


@st.composite
def unit_vector(draw, d: int, near=None):
    """An exact rational unit vector: inverse stereographic projection of a rational point p ∈ Q^{d−1}
    (|p| large gives points near the pole (0, …, 0, 1))."""
    p = [draw(rat(-8, 8)) for _ in range(d - 1)]
    if draw(st.booleans()):
        big = draw(st.sampled_from([Fraction(10), Fraction(100), Fraction(1000)]))
        p = [big + q for q in p[:1]] + p[1:]
    s = sum(q * q for q in p)
    return [2 * q / (s + 1) for q in p] + [(s - 1) / (s + 1)]


def sympy_projection_value(X, y):
    """yᵀPy with P = A A⁺ (SymPy's exact pseudo-inverse), A = [X 1]."""
    A = sp.Matrix([[sp.Rational(v.numerator, v.denominator) for v in row] + [1] for row in X])
    P = A * A.pinv()
    Y = sp.Matrix(y)
    return sp.nsimplify((Y.T * P * Y)[0]), P


def sympy_rank(X) -> int:
    return sp.Matrix([[sp.Rational(v.numerator, v.denominator) for v in row] + [1] for row in X]).rank()


def mp_op(X):
    """Op = λ_max(XᵀX) with mpmath's symmetric eigensolver at the current precision."""
    d = len(X[0])
    M = mpmath.matrix(d, d)
    for a in range(d):
        for b in range(d):
            M[a, b] = sum(mpmath.mpf(r[a].numerator) / r[a].denominator * mpmath.mpf(r[b].numerator)
                          / r[b].denominator for r in X)
    return max(mpmath.eigsy(M, eigvals_only=True))


def mpf(q: Fraction):
    return mpmath.mpf(q.numerator) / q.denominator


# ------------------------------------------------------------------ unit data for occupancy, value mass, serving
def rational_unit(w, den: int = 10**6) -> list[Fraction]:
    """An exact rational unit vector within ~1/den of the direction of w (float or rational, w ≠ 0): the
    stereographic coordinates of w/‖w‖ from the farther pole, rounded to denominators ≤ den, projected back."""
    x = [float(v) for v in w]
    nx = sum(v * v for v in x) ** 0.5
    if nx == 0:
        raise ValueError("rational_unit: w = 0 has no direction")
    x = [v / nx for v in x]
    sgn = 1 if x[-1] <= 0 else -1  # project from the pole sgn·e_d, the one away from x
    p = [Fraction(v / (1 - sgn * x[-1])).limit_denominator(den) for v in x[:-1]]
    s = sum(q * q for q in p)
    return [2 * q / (s + 1) for q in p] + [sgn * (s - 1) / (s + 1)]


def _dotq(a, b):
    return sum((x * y for x, y in zip(a, b, strict=True)), Fraction(0))


@st.composite
def unit_data(draw, *, t_zero: bool = False):
    """Exact unit data X (n × d), an exact unit u and a threshold t aimed at the lemmas' equality cases.

    Data modes: ``stacked`` (copies of u, or of a few points, with some random points), ``caps`` (clusters of
    near-coincident points around 1–3 centres), ``orthonormal`` (signed coordinate vectors: with u the
    normalised sum of 4 of them, N_u(1/2) = 4 = Op/t² exactly), ``random``. Direction modes: u a point, u a
    rational unit vector near the normalised sum of a chosen subset (``aimed``), random. Threshold modes: the
    tight ones (min over the aimed subset of u·x_i, or u·x_j of a data point, exactly), those shifted by 1e-6,
    near 0 and near 1, a grid, the golden-ratio neighbourhood of the value-mass maximiser. ``t_zero`` allows t = 0.
    """
    d = draw(st.integers(2, 5))
    n = draw(st.sampled_from([1, 2, 3, 4, 5, 8, 13, 24]))
    mode = draw(st.sampled_from(["stacked", "stacked", "caps", "orthonormal", "orthonormal", "random"]))
    X: list[list[Fraction]] = []
    u0 = draw(unit_vector(d))
    if mode == "stacked":
        k = draw(st.integers(1, n))
        X = [list(u0) for _ in range(k)] + [draw(unit_vector(d)) for _ in range(n - k)]
    elif mode == "caps":
        centres = [u0] + [draw(unit_vector(d)) for _ in range(draw(st.integers(0, 2)))]
        spread = draw(st.sampled_from([0.0, 1e-6, 1e-3, 1e-1]))
        for i in range(n):
            c = centres[i % len(centres)]
            jit = [draw(st.integers(-3, 3)) * spread for _ in range(d)]
            X.append(rational_unit([float(a) + b for a, b in zip(c, jit, strict=True)]) if spread else list(c))
    elif mode == "orthonormal":
        for i in range(n):
            e = [Fraction(0)] * d
            e[(i + draw(st.integers(0, 1))) % d] = Fraction(draw(st.sampled_from([1, 1, 1, -1])))
            X.append(e)
    else:
        X = [draw(unit_vector(d)) for _ in range(n)]
    X = [list(r) for r in X]
    # the direction
    umode = draw(st.sampled_from(["aimed", "aimed", "point", "random"]))
    S = list(range(n))
    if umode == "aimed":
        S = sorted(set(draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=min(n, 6)))))
        w = [sum((X[i][j] for i in S), Fraction(0)) for j in range(d)]
        ww = _dotq(w, w)
        if ww == 0:
            u = u0
        else:
            r = Fraction(_isqrt_ratio(ww))
            u = [a / r for a in w] if r * r == ww else rational_unit(w)
    elif umode == "point":
        u = list(X[draw(st.integers(0, n - 1))])
        S = [i for i in range(n) if X[i] == u]
    else:
        u = draw(unit_vector(d))
    # the threshold
    dots = [_dotq(u, r) for r in X]
    pos = [z for z in dots if z > 0]
    tmode = draw(st.sampled_from(["tight", "tight", "point", "shift", "near0", "near1", "one", "grid", "golden"]))
    if tmode == "tight" and any(dots[i] > 0 for i in S):
        t = min(dots[i] for i in S if dots[i] > 0)
    elif tmode == "point" and pos:
        t = draw(st.sampled_from(pos))
    elif tmode == "shift" and pos:
        t = draw(st.sampled_from(pos)) + draw(st.sampled_from([Fraction(-1, 10**6), Fraction(1, 10**6)]))
    elif tmode == "near0":
        t = Fraction(1, draw(st.sampled_from([10**3, 10**6, 10**9])))
    elif tmode == "near1":
        t = 1 - Fraction(1, draw(st.sampled_from([10**3, 10**6, 10**9])))
    elif tmode == "one":
        t = Fraction(1)
    elif tmode == "golden":
        t = draw(st.sampled_from([Fraction(3, 5), Fraction(5, 8), Fraction(8, 13), Fraction(13, 21), Fraction(21, 34)]))
    else:
        t = Fraction(draw(st.integers(1, 15)), 16)
    if t_zero and draw(st.integers(0, 4)) == 0:
        t = Fraction(0)
    return {"X": X, "u": u, "t": t, "mode": f"{mode}/{umode}/{tmode}"}


def _isqrt_ratio(q: Fraction) -> Fraction:
    """√q when q is the square of a rational, else some rational (the caller checks r² == q)."""
    import math

    a, b = math.isqrt(q.numerator), math.isqrt(q.denominator)
    return Fraction(a, b)


def sqrt_up(q: Fraction, den: int = 10**12) -> Fraction:
    """A rational r ≥ √q (q ≥ 0) within ~1/den of it, exactly: r² ≥ q is checked."""
    r = Fraction(float(q) ** 0.5).limit_denominator(den)
    while r * r < q:
        r += Fraction(1, den)
    return r


def unit_to_json(c):
    return {k: (enc(v) if k != "mode" and k != "y" else v) for k, v in c.items()}


def unit_from_json(j):
    return {k: (dec(v) if k != "mode" and k != "y" else v) for k, v in j.items()}


def sympy_op_sign(X, c: Fraction) -> int:
    """sign(Op − c) by SymPy alone: Sturm counts of the characteristic polynomial of the Gram matrix of the smaller
    side (XᵀX or XXᵀ: the same largest eigenvalue), formed here in Fractions."""
    n, d = len(X), len(X[0])
    if d <= n:
        G = [[sum((r[a] * r[b] for r in X), Fraction(0)) for b in range(d)] for a in range(d)]
    else:
        G = [[sum((p * q for p, q in zip(X[i], X[j], strict=True)), Fraction(0)) for j in range(n)] for i in range(n)]
    k = len(G)
    M = sp.Matrix(k, k, lambda a, b: sp.Rational(G[a][b].numerator, G[a][b].denominator))
    lam = sp.Symbol("lam")
    p = M.charpoly(lam)
    cs = sp.Rational(c.numerator, c.denominator)
    top = sum((G[i][i] for i in range(k)), Fraction(0)) + 1  # the trace + 1 exceeds every eigenvalue (PSD)
    if c >= top:
        return -1
    at_c = p.eval(cs) == 0
    above = p.count_roots(cs, sp.Rational(top.numerator, top.denominator)) - (1 if at_c else 0)  # in (c, top]
    if above > 0:
        return 1
    return 0 if at_c else -1


def op_margin(X, c, *, exact: bool, op_compare=None) -> float:
    """The margin of "Op < c": > 0 exactly when c exceeds Op (a bound κ·Op broken by q when c = q/κ).

    Float: (c − Op)/(1 + c) with numpy's eigvalsh. Exact: the sign is SymPy's (Sturm counts of the Gram
    matrix's characteristic polynomial) and the evaluator's (:func:`numerics.rob.op_compare`, or the plant
    passed in); if they disagree the evaluator is wrong and the margin is 1. The magnitude comes from the
    evaluator's certified enclosure; an equality (c = Op) gives 0."""
    import numpy as np

    from numerics import rob

    if not exact:
        A = np.asarray(fl(X), float)
        op = float(np.linalg.eigvalsh(A.T @ A)[-1]) if A.size else 0.0
        return (float(c) - op) / (1 + abs(float(c)))
    c = Fraction(c)
    ref = sympy_op_sign(X, c)
    lo, hi = rob.op_enclosure(X)
    ev = op_compare(X, c) if op_compare is not None else rob.op_compare(X, c, enclosure=(lo, hi))
    if ref != ev:
        return 1.0
    if ref == 0:
        return 0.0
    mag = max(float(abs(c - (lo + hi) / 2)), 1e-300) / (1 + abs(float(c)))
    return mag if ref < 0 else -mag


# ------------------------------------------------------------------------------------------ the two sides (SPEC §5)
# Every lemma property also runs (i) its equality and extremal cases, every run, before the generated ones
# (Property.examples), and (ii) the exact path at every near-tie (Property.ties). And (iii) each stated constant is
# pinned: the evaluator's coefficient must be the statement's expression exactly (a looser constant that is still
# true, 5 → 4 in |α|‖r‖₁ ≤ 5 L Op/t, is refuted by no data set; only the statement itself tells it from the paper's).

TIES = 1e-6  # float64 margins within this of 0 go to the exact decision (the screens' slack is 1e-9)


def stacked(n: int, d: int = 2) -> list[list[Fraction]]:
    """n copies of e₁ in R^d: Op = n, and every u·x_i = 1 for u = e₁ (the occupancy's equality at t = 1)."""
    return [[Fraction(1)] + [Fraction(0)] * (d - 1) for _ in range(n)]


def orthonormal(k: int) -> list[list[Fraction]]:
    """e₁, …, e_k in R^k: Op = 1; with u = (1, …, 1)/√k (rational for k = 4: u = (½, ½, ½, ½)) every u·x_i = 1/√k."""
    return [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]


def equality_cases(t_values=(Fraction(1),), *, include_orthonormal: bool = True) -> tuple[dict, ...]:
    """Data stacked at u = e₁ (n = 3) at each t, and 4 orthonormal points with u their normalised sum at t = ½
    (N_u(½) = 4 = Op/t²): the lemmas' equality cases, as exact cases of :func:`unit_data`'s form."""
    out = [{"X": stacked(3), "u": [Fraction(1), Fraction(0)], "t": Fraction(t), "mode": f"explicit/stacked/{t}"}
           for t in t_values]
    if include_orthonormal:
        out.append({"X": orthonormal(4), "u": [Fraction(1, 2)] * 4, "t": Fraction(1, 2),
                    "mode": "explicit/orthonormal/aimed"})
    return tuple(out)


def pinned(evaluator, stated, grid) -> dict:
    """The evaluator's coefficient against the statement's expression on exact rational arguments: {"points",
    "mismatches": [args as strings], "agree"}. ``stated`` is typed from the paper's statement (SPEC.md), and
    :func:`spec_states` checks that SPEC's text still says it."""
    bad = [", ".join(map(str, a)) for a in grid if Fraction(evaluator(*a)) != Fraction(stated(*a))]
    return {"points": len(grid), "mismatches": bad, "agree": not bad}


def spec_states(claim_id: str, *fragments: str) -> bool:
    """True when the claim's statement in the spec contains every fragment (the constants the checks pin)."""
    from checks.evidence.spec import load

    text = load().claims[claim_id].statement
    return all(f in text for f in fragments)


PIN_GRID = tuple((Fraction(p, q), Fraction(r, s)) for p, q in ((1, 1), (3, 7), (5, 2), (1, 1000))
                 for r, s in ((1, 2), (1, 3), (9, 10), (1, 10**6)))
