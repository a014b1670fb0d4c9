r"""rob.structured: Corollaries 1.6–1.7 — weight sharing (1-D convolution), tied weights, low-rank factorisations and
vector outputs: the law with k̄(f) = k(f) + 1, k(f) the distinct kink hyperplanes the net realizes (SPEC §3).

Evaluators: :mod:`numerics.rob.structured` (the constructions, k(f) over all outputs, the exact vector-output
Lipschitz constant on a ball) and :func:`numerics.rob.lipschitz` (scalar brackets).

* **S** — k(f) against a definition-level oracle that shares nothing with the canonical form
  (:func:`kinks_by_gradient_jump`: a hyperplane meeting the open ball is a kink exactly when the Jacobian differs on
  its two sides, at a rational point of it off every other hyperplane, computed in Fractions), and against the
  constructions' own counts: a 1-D convolution (k = the shifts with a_j ≠ 0 when β² < R²‖h‖²; 0 when the
  hyperplanes are tangent or miss), tied groups (one group the double of another: coinciding hyperplanes whose
  weights add, and cancel in a variant), a low-rank W = UVᵀ (k = m: the corollary then gives nothing new, as SPEC
  says) and a two-output net (a unit in one output only, a pair cancelling in one output but not the other, a unit
  zero in both). The exact vector constant ‖J‖₂ on B_{3/2}: two-sided against the scalar constants, max_k Lip(f_k)²
  ≤ Lip² ≤ Σ_k Lip(f_k)² exactly, and attained: max over 65 rational unit vectors u of the exact scalar Lip(u·f)²
  is ≤ Lip² (exactly) and within 10⁻³ of it; no random rational point's ‖J(x)‖₂² exceeds it.
* **F** — over the degenerate strategies (tangent, concurrent, coincident, cancelling kinks) with a second output
  drawn from the first's weights (zeroed, negated, rescaled entries): max_k Lip_k² ≤ Lip² ≤ Σ_k Lip_k², max_k k(f_k) ≤
  k(f) ≤ Σ_k k(f_k), and padding (a unit split in two, a unit zero in both outputs) changes neither k(f) nor Lip,
  all decided exactly.
* **E** — structured nets that fit noise on S^{d−1} (d = 16, n ∈ {32, 64, 128}; pure-noise labels ±1): a 1-D
  convolution (one filter of width 4, m = 13), a rank-2 factorisation (m = 24) and tied weights (8 weight vectors,
  each shared by 3 units with their own biases, m = 24; :class:`numerics.rob.structured_modules.TiedReLU`), trained
  with Adam on MSE + a small path-norm penalty. k(f) exact, the certified Lipschitz bracket, and Theorem 1.5's
  right-hand side ε√(n/(k̄ log(k̄ n d/ε))) with c = C = 1 (stated, as in rob.realized_kinks). Per seed and family the
  effect is min over fitting nets of log(Lip_lo / RHS(k̄)); SPEC §0 with δ = 0.2: statement effect > 0, negation ≤ 0.
  In these three families k(f) = m generically (a tied group's kinks are parallel but distinct; a unit whose
  hyperplane misses the sphere is no kink), so k̄ ≈ m̄ and the corollaries say little beyond Theorem 1.1 here: the
  report says where k(f) = m for every net.
  Vector outputs (K = 3, a dense net of m = 24 units, ±1 noise in every coordinate): fit means
  (1/n)Σ‖f(x_i) − y_i‖² ≤ K − ε·K, and since some coordinate then fits with ε_k ≥ ε and Lip(f) ≥ Lip(f_k), the
  scalar law with k̄(f) ≥ k̄(f_k) bounds Lip(f) ≥ RHS(ε, k̄(f)); Lip(f), the ℓ2 operator norm on the sphere, is
  certified by :func:`numerics.rob.vector_sphere.vector_lipschitz` (direction branching, 3 s a net: the lower end
  decides here; the bracket is wide). Each family runs its own planned seeds.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
from hypothesis import strategies as st

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.stats import Regions, achieved_power, bootstrap_ci, combine_parts, region_verdict, units_for_power
from checks.evidence.tol import TOL
from checks.rob import strategies
from checks.rob.law import law_rhs, sphere_data
from checks.rob.rational import case_fractions
from checks.runners.falsify import Property, run_properties
from numerics import rob
from numerics.rob import exact as E
from numerics.rob.structured import VectorNet, conv1d, kink_count, largest_eigenvalue, low_rank, vector_lipschitz_ball

ID = "rob.structured"
Fr = Fraction
R32 = Fr(3, 2)


# ------------------------------------------------------------------------------------------ the oracle
def _jac(W, b, A, V, x):
    """J(x) = V + Σ_{w_j·x + b_j > 0} A_{:,j} w_jᵀ, exactly (x off every hyperplane)."""
    J = [list(row) for row in V]
    for j, (w, bj) in enumerate(zip(W, b, strict=True)):
        if E.dot(w, x) + bj > 0:
            for k in range(len(J)):
                J[k] = [p + A[k][j] * q for p, q in zip(J[k], w, strict=True)]
    return J


def _proportional(w1, b1, w2, b2) -> bool:
    """Same hyperplane: (w2, b2) = λ(w1, b1), λ ≠ 0 (cross-multiplication, exact)."""
    u, v = [*w1, b1], [*w2, b2]
    i = next(k for k, x in enumerate(u) if x != 0)
    return all(u[i] * y == v[i] * x for x, y in zip(u, v, strict=True)) and v[i] != 0


def kinks_by_gradient_jump(W, b, A, V, R) -> int:
    """k(f) on the open ball B_R from the definition: for each distinct hyperplane meeting it, a rational point p of
    the hyperplane inside the ball and off every other hyperplane, and the Jacobian at p ± t w (t small enough to
    cross no other hyperplane and stay inside): a kink iff the two differ. Exact Fractions."""
    m, d = len(W), len(V[0])
    reps: list[int] = []
    for j in range(m):
        if any(x != 0 for x in W[j]) and not any(_proportional(W[i], b[i], W[j], b[j]) for i in reps):
            reps.append(j)
    count = 0
    for j in reps:
        w, bj = W[j], b[j]
        ww = E.dot(w, w)
        if bj * bj >= R * R * ww:
            continue   # misses the open ball, or touches it at one point only
        same = [i for i in range(m) if any(x != 0 for x in W[i]) and _proportional(w, bj, W[i], b[i])]
        others = [i for i in range(m) if i not in same and any(x != 0 for x in W[i])]
        p0 = [-bj * x / ww for x in w]
        tang = [[Fr(int(i == k)) - w[i] * w[k] / ww for i in range(d)] for k in range(d)]
        p = None
        gen = np.random.default_rng(j)   # generic directions inside the hyperplane: integer combinations
        for attempt in range(400):
            coef = [0] * d if attempt == 0 else [int(x) for x in gen.integers(-5, 6, d)]
            t_dir = [sum(ck * tk[i] for ck, tk in zip(coef, tang, strict=True)) for i in range(d)]
            r = Fr(1, 2 + attempt % 40) * (R - abs(bj) / (1 + ww)) / (1 + sum(abs(x) for x in t_dir))
            cand = [x + r * y for x, y in zip(p0, t_dir, strict=True)]
            if E.dot(cand, cand) < R * R and all(E.dot(W[i], cand) + b[i] != 0 for i in others):
                p = cand
                break
        if p is None:
            raise RuntimeError("no generic rational point found on a hyperplane (widen the search)")
        t = Fr(1)
        for i in others:
            rate = abs(E.dot(W[i], w))
            if rate:
                t = min(t, abs(E.dot(W[i], p) + b[i]) / rate / 2)
        while True:
            plus = [x + t * y for x, y in zip(p, w, strict=True)]
            minus = [x - t * y for x, y in zip(p, w, strict=True)]
            if E.dot(plus, plus) < R * R and E.dot(minus, minus) < R * R:
                break
            t /= 2
        if _jac(W, b, A, V, plus) != _jac(W, b, A, V, minus):
            count += 1
    return count


def _vec(W, b, A, V, c=None) -> VectorNet:
    obj = lambda x: np.array(x, dtype=object)  # noqa: E731
    K = len(A)
    return VectorNet(obj([list(r) for r in W]), obj(list(b)), obj([list(r) for r in A]), obj([list(r) for r in V]),
                     obj(list(c) if c is not None else [Fr(0)] * K))


# ------------------------------------------------------------------------------------------ S
def _conv_cases():
    """numerics.rob.structured.conv1d nets with binary-exact entries: h = (3/4, 0, −1), ‖h‖ = 5/4, R = 1."""
    h, a, d = [0.75, 0.0, -1.0], [2.0, 0.0, -1.0, 0.5], 6
    out = []
    for beta in (0.25, 1.25, 1.5, 0.0, -1.2):   # 1.25: every hyperplane tangent to B_1 and S⁵; 1.5: all miss
        W, b, aa, v, c = conv1d(h, beta, a, d)
        net = ([[Fr(x) for x in w] for w in W], [Fr(x) for x in b], [Fr(x) for x in aa], [Fr(x) for x in v], Fr(c))
        expected = sum(x != 0 for x in a) if beta * beta < 1.25 ** 2 else 0
        out.append((f"conv1d β={beta:g}", net, expected))
    return out


def _tied_cases():
    Wg = [[Fr(1), Fr(2), Fr(0)], [Fr(0), Fr(1), Fr(-1)], [Fr(2), Fr(4), Fr(0)]]
    biases = [[Fr(1, 4), Fr(1, 4), Fr(-1, 3)], [Fr(1, 5)], [Fr(1, 2)]]   # group 3 = 2 × group 1's first plane
    W = [w for w, bs in zip(Wg, biases, strict=True) for _ in bs]
    b = [x for bs in biases for x in bs]
    out = []
    # (1,2,0 | 1/4) carries 1 − 1 + 2·a₅; (1,2,0 | −1/3) carries 2; (0,1,−1 | 1/5) carries 3
    for a5, expected in ((Fr(1, 2), 3), (Fr(0), 2)):
        out.append((f"tied a5={a5}", (W, b, [Fr(1), Fr(-1), Fr(2), Fr(3), a5], [Fr(1), Fr(0), Fr(0)], Fr(0)),
                    expected))
    return out


def _low_rank_case(rng):
    """numerics.rob.structured.low_rank with binary-exact entries (W = UVᵀ exact in float64), as Fractions."""
    U = rng.integers(-3, 4, (6, 2)).astype(float)
    U[np.all(U == 0, axis=1)] = 1.0
    V = rng.integers(-3, 4, (3, 2)) / 2
    W, b, a, v, c = low_rank(U, V, rng.integers(-3, 4, 6) / 8, [float(x or 1) for x in rng.integers(-2, 3, 6)])
    return [[Fr(x) for x in w] for w in W], [Fr(x) for x in b], [Fr(x) for x in a], [Fr(x) for x in v], Fr(c)


def vector_case():
    """A two-output net in R² with a unit in output 1 only, a pair cancelling in output 0 only, a unit zero in both
    outputs: k(f) = 3 of its 5 units."""
    W = [[Fr(1), Fr(1, 2)], [Fr(-1, 3), Fr(1)], [Fr(-2, 3), Fr(2)], [Fr(1, 4), Fr(-1)], [Fr(1, 2), Fr(1, 5)]]
    b = [Fr(1, 5), Fr(-1, 4), Fr(-1, 2), Fr(0), Fr(-1, 3)]   # units 1 and 2: one hyperplane (2 = 2 × 1)
    A = [[Fr(0), Fr(2), Fr(-1), Fr(0), Fr(3, 2)],            # output 0: 2·ReLU(z) − ReLU(2z) = 0
         [Fr(-1), Fr(1), Fr(1), Fr(0), Fr(-1, 2)]]
    V = [[Fr(1, 3), Fr(0)], [Fr(0), Fr(-1, 2)]]
    return W, b, A, V


def known_vector_case():
    """One hyperplane x₁ = 0 in R²: J = [[13/10, 0], [0, 0]] on one side (‖J‖₂² = 169/100) and [[1, 0], [1, 0]] on the
    other (rows parallel, ‖J‖₂² = 2, though each row has norm 1): Lip² = 2 exactly, known by hand."""
    W, b = [[Fr(1), Fr(0)]], [Fr(0)]
    A = [[Fr(-3, 10)], [Fr(1)]]
    V = [[Fr(13, 10), Fr(0)], [Fr(0), Fr(0)]]
    return W, b, A, V, Fr(2)


def known_three_output_case():
    """K = 3, the same hyperplane: J = [[1, 0], [1, 0], [1, 0]] on x₁ > 0 (‖J‖₂² = 3, rows of norm 1) and
    [[13/10, 0], [0, 0], [0, 0]] on x₁ < 0 (169/100): Lip² = 3 exactly, known by hand."""
    W, b = [[Fr(1), Fr(0)]], [Fr(0)]
    A = [[Fr(-3, 10)], [Fr(1)], [Fr(1)]]
    V = [[Fr(13, 10), Fr(0)], [Fr(0), Fr(0)], [Fr(0), Fr(0)]]
    return W, b, A, V, Fr(3)


def _scalar_ball2(net, R):
    """The exact scalar Lip² on B_R as a QNum."""
    L = rob.lipschitz(net, rob.Ball(len(net[3]), R))
    if not L.exact:
        raise RuntimeError("the scalar ball constant was not exact")
    return L.value2


def _rational_units(k: int = 32):
    ts = [Fr(i, k // 2) for i in range(-k, k + 1)]
    return [((1 - t * t) / (1 + t * t), 2 * t / (1 + t * t)) for t in ts]


def vector_checks(W, b, A, V, R=R32, rng=None) -> dict:
    """The exact vector constant, two-sided against the scalar constants and the rational directions u."""
    net = _vec(W, b, A, V)
    L = vector_lipschitz_ball(net, R)
    scal = [_scalar_ball2((W, b, A[k], V[k], Fr(0)), R) for k in range(len(A))]
    lower_ok = all(L.value2.cmp(s) >= 0 for s in scal)
    total = E.QNum(sum(Fr(s.a) for s in scal)) if all(s.b == 0 for s in scal) else None
    upper_ok = total is not None and L.value2.cmp(total) <= 0
    best_u, u_ok = 0.0, True
    for u in _rational_units():
        au = [u[0] * x + u[1] * y for x, y in zip(A[0], A[1], strict=True)]
        vu = [u[0] * x + u[1] * y for x, y in zip(V[0], V[1], strict=True)]
        s = _scalar_ball2((W, b, au, vu, Fr(0)), R)
        u_ok &= L.value2.cmp(s) >= 0
        best_u = max(best_u, float(s))
    pts_ok, rng = True, rng or np.random.default_rng(0)
    for _ in range(300):
        x = [Fr(int(q), 64) for q in rng.integers(-64, 65, 2)]
        if E.dot(x, x) >= R * R or any(E.dot(w, x) + bj == 0 for w, bj in zip(W, b, strict=True)):
            continue
        J = _jac(W, b, A, V, x)
        lam = E.QNum(*_lam2(J))
        pts_ok &= L.value2.cmp(lam) >= 0
    v2 = float(L.value2)
    return {"value": L.value, "value2": v2, "cells": L.cells, "scalar2": [float(s) for s in scal],
            "lower_ok": bool(lower_ok), "upper_ok": bool(upper_ok), "u_below": bool(u_ok),
            "u_attained_rel": 1 - best_u / v2, "points_below": bool(pts_ok)}


def sphere_multiple_check(rng) -> dict:
    """f = α g with three outputs on S²: Lip(f) = ‖α‖·Lip(g) exactly (‖J(I − xxᵀ)‖₂ = ‖α‖‖∇_S g‖), against the
    vector bracket of :func:`numerics.rob.vector_sphere.vector_lipschitz` (direction branching)."""
    import sympy as sp

    from numerics.rob.vector_sphere import vector_lipschitz

    W = rng.integers(-4, 5, (6, 3)) / 4.0
    b = rng.integers(-2, 3, 6) / 8.0
    a, v = rng.integers(-4, 5, 6) / 4.0, rng.integers(-2, 3, 3) / 4.0
    al = np.array([2.0, -1.0, 2.0])                     # ‖α‖ = 3
    g = rob.lipschitz((W, b, a, v, 0.0), rob.Sphere(3))
    B = vector_lipschitz(VectorNet(W, b, np.outer(al, a), np.outer(al, v), np.zeros(3)), rob.Sphere(3), rel_gap=1e-6,
                         time_limit=60)
    target = float(3 * sp.sympify(g.value)) if g.exact else float("nan")
    ok = bool(g.exact and B.lower <= target * (1 + 1e-15) and target <= B.upper * (1 + 1e-15) and B.gap <= 1e-6)
    return {"ok": ok, "lower": B.lower, "upper": B.upper, "target": target, "calls": B.scalar_calls}


def direction_branch_ball_check(net: VectorNet, vec: dict) -> dict:
    """The direction branch of :func:`numerics.rob.vector_sphere.vector_lipschitz` on B_3/2 against the exact
    two-output constant (decided exactly: lower² ≤ Lip² ≤ upper²), closed to 1e-6."""
    from numerics.rob.vector_sphere import vector_lipschitz

    B = vector_lipschitz(net, rob.Ball(2, R32), rel_gap=1e-6, time_limit=60)
    ex = vector_lipschitz_ball(net, R32).value2
    ok = E.QNum(Fr(B.lower) ** 2).cmp(ex) <= 0 <= E.QNum(Fr(B.upper) ** 2).cmp(ex) and B.gap <= 1e-6
    return {"ok": bool(ok), "lower": B.lower, "upper": B.upper, "exact": vec["value"], "calls": B.scalar_calls}


def _lam2(J):
    a, bb, c = E.dot(J[0], J[0]), E.dot(J[0], J[1]), E.dot(J[1], J[1])
    disc = (a - c) ** 2 + 4 * bb * bb
    return (a + c) / 2, (Fr(1, 2) if disc else Fr(0)), disc


def level_S(ctx: Context) -> Outcome:
    rng = ctx.rng(f"{ID}/S")
    rows = []
    for name, net, expected in _conv_cases():
        d = len(net[3])
        W, b, a, v, c = net
        orc = kinks_by_gradient_jump(W, b, [a], [v], Fr(1))
        rows.append({"case": name, "domain": "B_1", "expected": expected, "oracle": orc,
                     "k": kink_count(net, rob.Ball(d, 1))})
        rows.append({"case": name, "domain": f"S^{d - 1}", "expected": expected, "oracle": None,
                     "k": kink_count(net, rob.Sphere(d))})
    for name, net, expected in _tied_cases():
        W, b, a, v, c = net
        rows.append({"case": name, "domain": "B_3/2", "expected": expected,
                     "oracle": kinks_by_gradient_jump(W, b, [a], [v], R32), "k": kink_count(net, rob.Ball(3, R32))})
    lr = _low_rank_case(rng)
    orc = kinks_by_gradient_jump(lr[0], lr[1], [lr[2]], [lr[3]], R32)
    rows.append({"case": "low rank W = UVᵀ (r = 2, m = 6)", "domain": "B_3/2", "expected": orc, "oracle": orc,
                 "k": kink_count(lr, rob.Ball(3, R32)), "m": 6})
    W, b, A, V = vector_case()
    vn = _vec(W, b, A, V)
    rows.append({"case": "two outputs", "domain": "B_3/2", "expected": 3,
                 "oracle": kinks_by_gradient_jump(W, b, A, V, R32), "k": kink_count(vn, rob.Ball(2, R32))})
    vec = vector_checks(W, b, A, V, R32, rng)
    kW, kb, kA, kV, k2 = known_vector_case()
    known = vector_lipschitz_ball(_vec(kW, kb, kA, kV), 1)
    tW, tb, tA, tV, t2 = known_three_output_case()
    three = vector_lipschitz_ball(_vec(tW, tb, tA, tV), 1)
    vec["known_case_exact"] = known.value2.cmp(E.QNum(k2)) == 0 and \
        three.value2.cmp(largest_eigenvalue([[t2]])) == 0 and three.cells == 2
    vec["sphere"] = sphere_multiple_check(rng)
    vec["branch_ball"] = direction_branch_ball_check(vn, vec)
    ok_k = all(r["k"] == r["expected"] and (r["oracle"] is None or r["oracle"] == r["expected"]) for r in rows)
    ok_v = (vec["known_case_exact"] and vec["sphere"]["ok"] and vec["branch_ball"]["ok"] and vec["lower_ok"]
            and vec["upper_ok"] and vec["u_below"] and vec["points_below"] and vec["u_attained_rel"] <= 1e-3)
    lr_row = rows[-2]
    metric = {"cases": len(rows), "k_right": sum(r["k"] == r["expected"] for r in rows),
              "oracle_right": sum(r["oracle"] == r["expected"] for r in rows if r["oracle"] is not None),
              "low_rank_k_equals_m": lr_row["k"] == 6, "vector_lip": vec["value"],
              "vector_u_attained_rel": vec["u_attained_rel"]}
    summary = (f"k(f) exact on {len(rows)} structured nets (1-D convolution with tangent, missing and central "
               f"hyperplanes on B_1 and S⁵; tied groups with coinciding and cancelling hyperplanes; low rank; two "
               f"outputs): {metric['k_right']}/{len(rows)} equal the construction's count and "
               f"{metric['oracle_right']} the gradient-jump oracle; low rank W = UVᵀ realizes k = {lr_row['k']} = m "
               f"(nothing new from the corollary); two-output ‖J‖₂ on B_3/2 = {vec['value']:.6f} exactly, with "
               f"max_k Lip_k² ≤ Lip² ≤ Σ Lip_k² exactly, every rational direction's scalar Lip(u·f)² below it and "
               f"the best within {vec['u_attained_rel']:.1e}, no rational point's ‖J(x)‖₂ above it; a hand case with "
               f"parallel rows (Lip² = 2 exactly, each row of norm 1) and its three-output twin (Lip² = 3) "
               + ("matched exactly; " if vec["known_case_exact"] else "MISSED; ")
               + f"on S² three outputs α·g: the certified ‖J(I − xxᵀ)‖₂ bracket [{vec['sphere']['lower']:.9f}, "
               f"{vec['sphere']['upper']:.9f}] holds ‖α‖·Lip(g) = {vec['sphere']['target']:.9f} (exact S² routine)"
               + ("" if vec["sphere"]["ok"] else " — MISSED")
               + f"; the same direction branch on B_3/2 brackets the exact two-output constant "
               f"[{vec['branch_ball']['lower']:.9f}, {vec['branch_ball']['upper']:.9f}]"
               + ("" if vec["branch_ball"]["ok"] else " — MISSED"))
    return Outcome(ok_k and ok_v, metric, summary, details={"rows": rows, "vector": vec})


# ------------------------------------------------------------------------------------------ F
@st.composite
def vector_cases(draw, d: int):
    case = draw(strategies.degenerate_nets(d, sphere=False, rho=1.5, m_max=4))
    m = len(case["a"])
    ops = draw(st.lists(st.sampled_from(("keep", "zero", "negate", "half", "double")), min_size=m, max_size=m))
    case["a2_ops"] = ops
    case["v2"] = [draw(st.sampled_from(("0", "1/3", "-1/2", "1"))) for _ in range(d)]
    case["pad_at"] = draw(st.integers(0, 50))
    return case


def _vector_from_case(case, exact: bool):
    W, b, a, v, c = case_fractions(case) if exact else case_fractions(case, "float")
    f = {"keep": Fr(1), "zero": Fr(0), "negate": Fr(-1), "half": Fr(1, 2), "double": Fr(2)}
    a2 = [x * f[o] for x, o in zip(a, case["a2_ops"], strict=True)]
    return W, b, [a, a2], [v, [Fr(x) for x in case["v2"]]]


def _vector_margin(case, exact: bool) -> float:
    """> 0 when a vector-output statement fails (all decided exactly on the net's rationals)."""
    W, b, A, V = _vector_from_case(case, exact)
    d = len(V[0])
    dom = rob.Ball(d, R32)
    net = _vec(W, b, A, V)
    L = vector_lipschitz_ball(net, R32, time_limit=60)
    scal = [_scalar_ball2((W, b, A[k], V[k], Fr(0)), R32) for k in range(2)]
    if not all(L.value2.cmp(s) >= 0 for s in scal):
        return 1.0
    if all(s.b == 0 for s in scal) and L.value2.cmp(E.QNum(sum(Fr(s.a) for s in scal))) > 0:
        return 1.0
    ks = [rob.canonicalize((W, b, A[k], V[k], Fr(0)), dom).m for k in range(2)]
    k = kink_count(net, dom)
    if not (max(ks) <= k <= sum(ks)):
        return 1.0
    if W:   # padding: unit j split in two halves (both outputs), and a unit zero in both outputs
        j = case["pad_at"] % len(W)
        W2, b2 = [*W, W[j], [x + 1 for x in W[j]]], [*b, b[j], b[j] + 1]
        A2 = [[*row[:j], row[j] / 2, *row[j + 1:], row[j] / 2, Fr(0)] for row in A]
        padded = _vec(W2, b2, A2, V)
        if kink_count(padded, dom) != k:
            return 1.0
        if vector_lipschitz_ball(padded, R32, time_limit=60).value2.cmp(L.value2) != 0:
            return 1.0
    return 0.0


def vector_property(name: str, d: int, budget: int = 40) -> Property:
    return Property(name=name, strategy=vector_cases(d), screen=lambda c: _vector_margin(c, False),
                    confirm=lambda c: _vector_margin(c, True), to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)


PROPERTIES = (vector_property(f"{ID}/vector_ball2", 2, budget=150), vector_property(f"{ID}/vector_ball3", 3, budget=80))


def level_F(ctx: Context) -> Outcome:
    from dataclasses import replace

    out = run_properties(ctx, PROPERTIES, ID, ignore=(rob.KinkCoincidenceWarning,))
    m = out.metric
    return replace(out, summary=f"{m['examples']} degenerate two-output nets on B_3/2 ⊂ R², R³ (tangent, concurrent, "
                                f"coincident, cancelling kinks; the second output's weights zeroed, negated, "
                                f"rescaled): "
                                f"{m['confirmed']} confirmed failures of max_k Lip_k² ≤ Lip² ≤ Σ Lip_k², of "
                                f"max_k k(f_k) ≤ k(f) ≤ Σ k(f_k), or of invariance under padding (exact)")


# ------------------------------------------------------------------------------------------ E
DELTA = 0.2
REGIONS = Regions(DELTA, (0.0, math.inf), ((-math.inf, 0.0),),
                  describe="min log(Lip_lo/RHS(k̄)) > 0: the k̄ bound holds (c = C = 1); ≤ 0: it fails")
FAMILIES = ("conv1d", "low_rank", "tied", "vector")
# Pilot (master seed 20260, seed indices 0-2, this design; the run's seeds start at FIRST_SEED), fixed before the
# run: per-seed effects 3.91, 3.51, 3.72 (conv1d: SD 0.20) and 3.36, 3.40, 3.25 (low rank: SD 0.08); power 0.8 for
# δ = 0.2 needs ⌈(2.80·SD/0.2)²⌉: 8 and 2 (at least 5 planned). The effects sit far above 0: with c = C = 1 the
# bound is far below trained nets' constants, so `reproduced` here is weak evidence.
# Vector outputs (K = 3, dense m = 24, pilot seed indices 0-2): effects 3.10, 3.04, 2.96 (SD 0.067): 5 planned.
# Tied weights (8 groups of 3 units, m = 24; biases drawn 0.5·N(0, 1) so that a group's parallel kinks spread over
# the data's projections; pilot seed indices 0-2, 2026-12-07): effects 2.93, 2.98, 2.95 (SD 0.024), every net fits,
# brackets ≤ 1.0%, 2.5–5 s a seed: 5 planned.
PILOT_SD = {"conv1d": 0.20, "low_rank": 0.08, "tied": 0.024, "vector": 0.067}
PLANNED = {f: max(units_for_power(sd, DELTA), 5) for f, sd in PILOT_SD.items()}
FIRST_SEED = 100


def _config(quick: bool) -> dict:
    if quick:
        return {"d": 8, "n": (16, 32), "seeds": 3, "first_seed": 0, "steps": 1000, "time_limit": 5.0, "s": 3,
                "m_low": 8, "r": 2, "tied_counts": (3, 3, 2), "m_vec": 8, "K": 3, "time_limit_vec": 5.0}
    return {"d": 16, "n": (32, 64, 128), "seeds": max(PLANNED.values()), "family_seeds": PLANNED,
            "first_seed": FIRST_SEED, "steps": 3000, "time_limit": 30.0, "s": 4,
            "m_low": 24, "r": 2, "tied_counts": (3,) * 8, "m_vec": 24, "K": 3, "time_limit_vec": 3.0}


def train_structured(family: str, X, y, cfg, rng, *, lam: float = 1e-4, lr: float = 1e-2, target_mse: float = 0.05):
    """Adam on MSE + λ·path norm for a 1-D convolution (one filter of width s, shared bias), W = UVᵀ (rank r), as the
    PyTorch modules of :mod:`numerics.rob.structured_modules`, or a dense net with K outputs (``vector``; MSE summed
    over the outputs), initialised from ``rng``. Returns the module's exact float64 net (W, b, a, v, c) (``net()``;
    for ``vector`` :func:`net_from_module`'s) and its training MSE."""
    import torch

    from numerics.rob.structured_modules import Conv1dReLU, LowRankReLU, TiedReLU, net_from_module

    n, d = X.shape
    Xt, yt = torch.tensor(X, dtype=torch.float64), torch.tensor(y, dtype=torch.float64)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        K = 1 if np.ndim(y) == 1 else y.shape[1]
        if family == "vector":
            m = cfg["m_vec"]
            mod = torch.nn.Sequential(torch.nn.Linear(d, m, dtype=torch.float64), torch.nn.ReLU(),
                                      torch.nn.Linear(m, K, dtype=torch.float64))
            init = {"0.weight": rng.standard_normal((m, d)) / math.sqrt(d), "0.bias": 0.1 * rng.standard_normal(m),
                    "2.weight": rng.standard_normal((K, m)) / math.sqrt(m), "2.bias": np.zeros(K)}
            hidden = lambda: (mod[0].weight, mod[0].bias)            # noqa: E731
            head = lambda: mod[2].weight.abs().sum(0)                # noqa: E731  Σ over the K outputs of |a_kj|
            residual = lambda: mod(Xt) - yt                          # noqa: E731
        else:
            if family == "conv1d":
                s = cfg["s"]
                mod = Conv1dReLU(d, s)
                init = {"conv.weight": rng.standard_normal(s).reshape(1, 1, s) / math.sqrt(s),
                        "conv.bias": 0.1 * rng.standard_normal(1)}
            elif family == "tied":
                counts = list(cfg["tied_counts"])
                mod = TiedReLU(d, counts)
                init = {"Wg": rng.standard_normal((len(counts), d)) / math.sqrt(d),
                        "bias": 0.5 * rng.standard_normal(sum(counts))}
            else:
                m, r = cfg["m_low"], cfg["r"]
                mod = LowRankReLU(d, m, r)
                init = {"U": rng.standard_normal((m, r)) / math.sqrt(r),
                        "V": rng.standard_normal((d, r)) / math.sqrt(d), "bias": 0.1 * rng.standard_normal(m)}
            init.update({"head.weight": rng.standard_normal((1, mod.m)) / math.sqrt(mod.m), "head.bias": np.zeros(1),
                         "skip.weight": np.zeros((1, d))})
            hidden = mod.weights
            head = lambda: mod.head.weight[0].abs()                  # noqa: E731
            residual = lambda: mod(Xt)[:, 0] - yt                    # noqa: E731
        mod.load_state_dict({k: torch.tensor(np.asarray(x, float)) for k, x in init.items()})
        opt = torch.optim.Adam(mod.parameters(), lr=lr)
        for step in range(cfg["steps"]):   # one loop for every family: MSE (summed over outputs) + λ·path norm
            res = residual()
            mse = torch.mean(torch.sum(res * res, 1)) if K > 1 else torch.mean(res * res)
            if step % 25 == 0 and float(mse.detach()) <= target_mse * K:
                break
            W, b = hidden()
            path = torch.sum(head() * torch.sqrt(torch.sum(W * W, 1) + b * b))
            opt.zero_grad()
            (mse + lam * path).backward()
            opt.step()
        if family == "vector":
            net = net_from_module(mod)
            return net, float(np.mean(np.sum((net(X) - y) ** 2, axis=1)))
        net = mod.net()
    finally:
        torch.set_num_threads(threads)
    Wn, bn, an, vn, cn = net
    f = np.maximum(X @ Wn.T + bn, 0) @ an + X @ vn + cn
    return net, float(np.mean((f - y) ** 2))


def _seed_rows(args):
    seed, k, cfg = args
    rows = []
    for fam in FAMILIES:
        if k - cfg.get("first_seed", FIRST_SEED) >= cfg.get("family_seeds", {}).get(fam, cfg["seeds"]):
            continue   # each family runs its own plan
        rng = Context(seed=seed).rng(f"{ID}/seed/{k}/{fam}")
        d = cfg["d"]
        Xall, yall = sphere_data(rng, max(cfg["n"]), d)
        if fam == "vector":   # K outputs, each a noise coordinate of variance 1
            yall = rng.choice([-1.0, 1.0], size=(max(cfg["n"]), cfg["K"]))
        for n in cfg["n"]:
            X, y = Xall[:n], yall[:n]
            net, mse = train_structured(fam, X, y, cfg, rng)
            dom = rob.Sphere(d)
            kf = kink_count(net, dom)
            if fam == "vector":
                from numerics.rob.vector_sphere import vector_lipschitz

                L = vector_lipschitz(net, dom, rel_gap=0.05, time_limit=cfg["time_limit_vec"])
                eps = 1.0 - mse / cfg["K"]   # the per-coordinate average: some output fits at least this well
                m = net.W.shape[0]
            else:
                L = rob.lipschitz(net, dom, seed=k, data_points=X, time_limit=cfg["time_limit"])
                eps = 1.0 - mse
                m = len(net[2])
            rows.append({"family": fam, "seed_index": k, "n": n, "m": m, "k": kf, "kbar": kf + 1, "mbar": m + 1,
                         "mse": mse, "eps": eps, "fits": eps >= TOL["rob_law_eps_min"], "lower": float(L.lower),
                         "upper": float(L.upper), "gap": float(L.gap), "status": L.status,
                         "rhs_kbar": law_rhs(max(eps, 1e-12), n, kf + 1, d),
                         "rhs_mbar": law_rhs(max(eps, 1e-12), n, m + 1, d)})
    return rows


def level_E(ctx: Context) -> Outcome:
    from checks.runners.campaign import sweep

    cfg = _config(ctx.quick)
    t0 = time.perf_counter()
    first = 0 if ctx.quick else FIRST_SEED
    per_seed = sweep(ctx, _seed_rows, [(ctx.seed, first + k, cfg) for k in range(cfg["seeds"])], f"{ID}: seeds")
    rows = [r for rs in per_seed for r in rs]
    words, fams = {}, []
    for fam in FAMILIES:
        eff = [min((math.log(r["lower"] / r["rhs_kbar"]) for r in rs if r["family"] == fam and r["fits"]
                    and r["lower"] > 0), default=math.nan) for rs in per_seed if any(r["family"] == fam for r in rs)]
        est, lo, hi = bootstrap_ci(eff, seed=ctx.seed)
        units = int(np.sum(np.isfinite(eff)))
        planned = 3 if ctx.quick else PLANNED[fam]
        word = region_verdict(lo, hi, REGIONS, units=units, planned=planned)
        mine = [r for r in rows if r["family"] == fam]
        sd = float(np.nanstd(eff, ddof=1)) if units >= 2 else math.nan
        fams.append({"family": fam, "effect": est, "ci": [lo, hi], "units": units, "planned": planned,
                     "achieved_power": achieved_power(sd, DELTA, units), "verdict": word,
                     "k_max": max(r["k"] for r in mine), "m": mine[0]["m"],
                     "k_equals_m": all(r["k"] == r["m"] for r in mine),
                     "fitting": sum(r["fits"] for r in mine), "nets": len(mine),
                     "max_rel_gap": max(r["gap"] for r in mine)})
        words[fam] = word
    verdict, parts = combine_parts(words)
    # evidence produced: valid brackets, k(f) ≤ m, and fitting nets in every family (the word judges the rest)
    passed = all(r["lower"] <= r["upper"] and r["k"] <= r["m"] for r in rows) and all(f["fitting"] > 0 for f in fams)
    metric = {"seeds": len(per_seed), "planned_seeds": {f["family"]: f["planned"] for f in fams}, "nets": len(rows),
              **{f"effect_{f['family']}": f["effect"] for f in fams},
              **{f"k_max_{f['family']}": f["k_max"] for f in fams},
              "max_rel_gap": max(r["gap"] for r in rows)}
    summary = (f"structured ReLU nets fitting noise on S^{cfg['d'] - 1}, n ∈ {list(cfg['n'])}, {len(per_seed)} seeds: "
               + "; ".join(f"{f['family']} (m = {f['m']}, k(f) ≤ {f['k_max']}"
                           + (", = m: k̄ = m̄, nothing beyond Theorem 1.1" if f["k_equals_m"] else "")
                           + f"; {f['fitting']}/{f['nets']} fit; brackets ≤ {f['max_rel_gap']:.1%}): min "
                           f"log(Lip_lo/RHS(k̄)) = {f['effect']:.2f} [{f['ci'][0]:.2f}, {f['ci'][1]:.2f}] (δ = {DELTA}, "
                           f"power {f['achieved_power']:.2f}, {f['units']}/{f['planned']} units) → {f['verdict']}"
                           for f in fams) + f"; {parts}: {verdict}")
    details = {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in cfg.items()}, "nets": rows,
               "families": fams, "regions": REGIONS.describe,
               "statement_test": {"paper_statement": "Corollaries 1.6-1.7: structured nets (weight sharing, tied "
                                                     "weights, low rank, vector outputs) "
                                                     "that fit noise have Lip ≥ c ε √(n/(k̄ log(C k̄ n d/ε)))",
                                  "effect": "per seed and family, min over fitting nets of log(Lip_lo / RHS(k̄)), "
                                            "c = C = 1", "delta": DELTA, "parts": parts, "verdict": verdict,
                                  "planned_units": {f["family"]: f["planned"] for f in fams}}}
    return Outcome(passed, metric, summary, details=details, verdict=verdict,
                   timing={"seconds": round(time.perf_counter() - t0, 3)})
