r"""The single-pole constant of SPEC §4 (rob.single_pole), derived from the level-set gradient.

Setting: f(x) = v·x + c + Σ_k α_k ReLU(u₀·x − t_k) on S^{d−1}, d ≥ 3, v = β u₀ + v_⊥ (v_⊥ ⊥ u₀,
p = ‖v_⊥‖). Coordinates u₀ = e₁, v_⊥ = p e₂ (a rotation fixing u₀ moves any v_⊥ there).

* :func:`level_set` — on the open cell where exactly the units with t_k < s are active, SymPy differentiates
  the net and gets ∇f = B u₀ + v_⊥ with B = β + Σ_{t_k<s} α_k; on the level set x = s u₀ + √(1−s²) y
  (y ⊥ u₀ a unit vector) the squared tangential norm from the definition ‖(I − xxᵀ)∇f‖² is
  T(s, y) = B² + p² − (Bs + √(1−s²) v_⊥·y)². Its maximum over y is derived twice: in d = 3
  (y = (0, cos φ, sin φ)) by solving ∂T/∂φ = 0 exactly and comparing the candidates, and in d = 4 by Lagrange
  multipliers on rational instances (v_⊥ not aligned with a coordinate); both give
  F(s) = B² + p² − max(0, |Bs| − √(1−s²) p)².
* :func:`interval_sup` — F is even; with h(s) = |B|s − p√(1−s²), h′ > 0 on (0, 1) and h(s₀) = 0 at
  s₀ = p/√(B² + p²), so F = B² + p² on |s| ≤ s₀ and dF/ds = −2hh′ < 0 beyond: the supremum over an interval
  I between thresholds is F(s*) at its closure point nearest 0, s* = min(max(0, lo), hi). Checked against
  maximising F over I from scratch (SymPy's real roots of F′ on each piece plus the endpoints and s₀) on
  rational instances: both sides of s₀, intervals containing 0, B = 0, p = 0, endpoints near ±1.
* :func:`static_rigidity` — y ⊥ v_⊥ (possible when d ≥ 3) gives T = B²(1 − s²) + p², so
  B(s)²(1 − s²) + p² ≤ F(s) ≤ Lip²; F − (B²(1−s²) + p²) ≥ 0 also directly; ∫_{−1}^{1} ds/√(1 − s²) = π, so
  TV(profile) = ∫|B| ≤ πL, and p² ≤ Lip².
* :func:`any_activation` — for f = v·x + c + g(u₀·x) with any differentiable g (SymPy Function), ∇f = v + g′(s)u₀,
  so the same algebra holds with B(s) = β + g′(s); checked for tanh and GELU units.

:func:`closed_forms` returns the SymPy expressions that :mod:`proofs.rob.codegen` prints into
``numerics/_derived/rob.py`` (F, s₀, the static-rigidity bound).
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp

from proofs.common import is_zero

B, s, beta, c = sp.symbols("B s beta c", real=True)
p = sp.Symbol("p", nonnegative=True)
phi = sp.Symbol("phi", real=True)


def F_expr(Bv=B, pv=p, sv=s):
    """B² + p² − max(0, |Bs| − √(1−s²) p)² (SymPy)."""
    return Bv**2 + pv**2 - sp.Max(0, sp.Abs(Bv * sv) - sp.sqrt(1 - sv**2) * pv) ** 2


def s0_expr(Bv=B, pv=p):
    """The breakpoint p/√(B² + p²): F = B² + p² exactly on |s| ≤ s₀."""
    return pv / sp.sqrt(Bv**2 + pv**2)


def static_expr(Bv=B, pv=p, sv=s):
    return Bv**2 * (1 - sv**2) + pv**2


def closed_forms() -> dict[str, sp.Expr]:
    return {"F": F_expr(), "s0": s0_expr(), "static": static_expr()}


def _tangential2(g, x):
    """‖(I − xxᵀ)g‖² from the definition (a projection of the ambient gradient)."""
    P = sp.eye(len(x)) - x * x.T
    tg = P * g
    return (tg.T * tg)[0]


def level_set(K: int = 3, instances: bool = True) -> dict[str, bool]:
    out: dict[str, bool] = {}
    X = sp.Matrix(sp.symbols("x1:4", real=True))
    al = sp.symbols(f"alpha1:{K + 1}", real=True)
    t = sp.symbols(f"t1:{K + 1}", real=True)
    v = sp.Matrix([beta, p, 0])
    for j in range(K + 1):  # the cell where units 1..j are active (t_1 < ... < t_j < s < t_{j+1})
        f = v.dot(X) + c + sum((al[k] * (X[0] - t[k]) for k in range(j)), sp.Integer(0))
        g = sp.Matrix([sp.diff(f, xi) for xi in X])
        Bj = beta + sum(al[:j], sp.Integer(0))
        out[f"grad f = B u0 + v_perp on cell {j} (B = beta + sum of the first {j} alpha)"] = all(
            is_zero(e) for e in g - sp.Matrix([Bj, p, 0]))
    # tangential norm on the level set, d = 3: x = (s, r cos φ, r sin φ), r = √(1 − s²)
    r = sp.sqrt(1 - s**2)
    x = sp.Matrix([s, r * sp.cos(phi), r * sp.sin(phi)])
    g = sp.Matrix([B, p, 0])
    T = _tangential2(g, x)
    T_claim = B**2 + p**2 - (B * s + r * p * sp.cos(phi)) ** 2
    # T − T_claim = (g·x)²(‖x‖² − 1) identically, and ‖x‖² = s² + r²(cos²φ + sin²φ) = 1
    out["||(I - x x^T) g||^2 = B^2 + p^2 - (B s + sqrt(1-s^2) v_perp.y)^2 on the level set"] = is_zero(
        T - T_claim - g.dot(x) ** 2 * (x.dot(x) - 1)) and sp.trigsimp(x.dot(x)) == 1
    dT = sp.diff(T_claim, phi)
    # critical points of T in φ: sin φ = 0 (cos φ = ±1) or B s + r p cos φ = 0
    out["dT/dphi = 2 (B s + r p cos phi) r p sin phi"] = is_zero(
        dT - 2 * (B * s + r * p * sp.cos(phi)) * r * p * sp.sin(phi))
    # case |Bs| ≤ rp: a critical point with Bs + rp cos φ = 0 exists and gives B² + p², an upper bound of T
    out["T <= B^2 + p^2, with equality where B s + r p cos phi = 0"] = is_zero(T_claim - (B**2 + p**2) + (
        B * s + r * p * sp.cos(phi)) ** 2)
    # case |Bs| > rp: the best of the two sin φ = 0 candidates is B² + p² − (|Bs| − rp)²
    X_, Y_ = sp.symbols("X Y", positive=True)  # X = |Bs|, Y = rp, Bs = σX
    ok = True
    for sigma in (1, -1):
        vals = [B**2 + p**2 - (sigma * X_ + sg * Y_) ** 2 for sg in (1, -1)]
        best = vals[1] if sigma == 1 else vals[0]  # cos φ = −σ
        ok &= is_zero(best - (B**2 + p**2 - (X_ - Y_) ** 2))
        other = vals[0] if sigma == 1 else vals[1]
        ok &= is_zero(best - other - 4 * X_ * Y_)  # the other sin φ = 0 candidate is 4XY lower
    out["|Bs| > r p: max over phi is B^2 + p^2 - (|Bs| - r p)^2 (cos phi = -sign(Bs))"] = ok
    # exact instances in d = 3: sympy solves dT/dφ = 0 and the max of T over the roots equals F
    inst = [(Fraction(3, 2), Fraction(1, 2), Fraction(1, 3)), (Fraction(-2), Fraction(1), Fraction(4, 5)),
            (Fraction(1, 3), Fraction(2), Fraction(-3, 5)), (Fraction(0), Fraction(1), Fraction(1, 2)),
            (Fraction(5), Fraction(0), Fraction(-1, 7)), (Fraction(-1), Fraction(3), Fraction(12, 13))]
    ok = True
    for Bv, pv, sv in (inst if instances else []):
        Bq, pq, sq = (sp.Rational(z.numerator, z.denominator) for z in (Bv, pv, sv))
        Ti = T.subs({B: Bq, p: pq, s: sq})
        roots = sp.solve(sp.diff(Ti, phi), phi)
        vals = [sp.nsimplify(sp.simplify(Ti.subs(phi, rt))) for rt in roots + [sp.Integer(0), sp.pi]]
        top = sp.Max(*vals)
        ok &= is_zero(top - F_expr(Bq, pq, sq))
    if instances:
        out["d = 3 instances: max over the roots of dT/dphi equals F (6 rational cases)"] = ok
        out.update(_range_d4())
    return out


def _range_d4() -> dict[str, bool]:
    """d = 4, v_⊥ = (0, p1, p2, p3) generic: T(s, y) = B² + p² − (Bs + r v_⊥·y)² for unit y ⊥ u₀ (symbolic y),
    and v_⊥·y sweeps [−p, p] (Cauchy–Schwarz, attained at ±v_⊥/p; the unit sphere of u₀^⊥ is connected for
    d ≥ 3); on rational instances SymPy's ``maximum`` over z = v_⊥·y ∈ [−p, p] equals F."""
    y = sp.Matrix(sp.symbols("y1:4", real=True))
    vp = sp.Matrix(sp.symbols("q1:4", real=True))
    Bv, sv = sp.symbols("Bv sv", real=True)
    rv = sp.Symbol("rv", positive=True)
    x = sp.Matrix([sv, rv * y[0], rv * y[1], rv * y[2]])
    g = sp.Matrix([Bv, vp[0], vp[1], vp[2]])
    T = _tangential2(g, x)
    claim = Bv**2 + vp.dot(vp) - (Bv * sv + rv * vp.dot(y)) ** 2
    # T − claim = (g·x)²(‖x‖² − 1), and ‖x‖² = s² + r²‖y‖² = 1 on the level set (r² = 1 − s², ‖y‖ = 1)
    ident = is_zero(T - claim - g.dot(x) ** 2 * (x.dot(x) - 1))
    on_sphere = is_zero((x.dot(x) - 1).subs(rv, sp.sqrt(1 - sv**2)).subs(y[2] ** 2, 1 - y[0] ** 2 - y[1] ** 2))
    out = {"d = 4: ||(I - x x^T) g||^2 = B^2 + p^2 - (B s + r v_perp.y)^2 on the level set (symbolic y)":
           ident and on_sphere}
    z = sp.Symbol("z", real=True)
    ok = True
    Q = sp.Rational
    for Bq, sq, v3 in ((Q(3, 2), Q(1, 3), (1, 2, 2)), (Q(-1, 2), Q(-4, 5), (2, 3, 6)), (Q(2), Q(1, 5), (0, 3, 4)),
                       (Q(1, 4), Q(3, 5), (1, 4, 8)), (Q(0), Q(1, 2), (2, 3, 6)), (Q(7), Q(0), (1, 2, 2))):
        pq = sp.sqrt(sum(t * t for t in v3))
        Tz = Bq**2 + pq**2 - (Bq * sq + sp.sqrt(1 - sq**2) * z) ** 2
        top = sp.calculus.util.maximum(Tz, z, sp.Interval(-pq, pq))
        ok &= is_zero(top - F_expr(Bq, pq, sq))
    out["d = 4 instances: max over v_perp.y in [-p, p] (sympy maximum) equals F (6 rational cases)"] = ok
    return out


def interval_sup(instances: bool = True) -> dict[str, bool]:
    out: dict[str, bool] = {}
    Bp = sp.Symbol("Bp", positive=True)  # |B|
    pp = sp.Symbol("pp", positive=True)
    sp_ = sp.Symbol("sp", positive=True)
    h = Bp * sp_ - pp * sp.sqrt(1 - sp_**2)
    dh = sp.diff(h, sp_)
    out["h' = |B| + p s/sqrt(1-s^2) (> 0 on (0,1))"] = is_zero(dh - (Bp + pp * sp_ / sp.sqrt(1 - sp_**2)))
    roots = sp.solve(sp.Eq(Bp * sp_, pp * sp.sqrt(1 - sp_**2)), sp_)
    out["h(s) = 0 only at s0 = p/sqrt(B^2+p^2)"] = len(roots) == 1 and is_zero(roots[0] - s0_expr(Bp, pp))
    Fh = Bp**2 + pp**2 - h**2
    out["dF/ds = -2 h h' where h > 0"] = is_zero(sp.diff(Fh, sp_) + 2 * h * dh)
    out["F is even in s"] = is_zero(F_expr(B, p, -s) - F_expr(B, p, s))
    # instances: maximise F over [lo, hi] from scratch and compare with F at the nearest-to-0 point
    Q = sp.Rational
    inst = [(Q(3, 2), Q(1, 2), Q(-1, 3), Q(1, 4)), (Q(3, 2), Q(1, 2), Q(1, 10), Q(1, 5)),
            (Q(3, 2), Q(1, 2), Q(1, 2), Q(9, 10)), (Q(-2), Q(1), Q(-99, 100), Q(-1, 2)),
            (Q(0), Q(1), Q(1, 2), Q(3, 4)), (Q(4), Q(0), Q(1, 3), Q(2, 3)), (Q(1), Q(1), Q(-1), Q(1)),
            (Q(1), Q(3), Q(1, 2), Q(1) - Q(1, 2**20)), (Q(-5, 2), Q(2), Q(-1), Q(-3, 4)),
            (Q(1, 7), Q(1, 9), Q(0), Q(1, 2))]
    ok, cases = True, 0
    for Bv, pv, lo, hi in (inst if instances else []):
        Fs = F_expr(Bv, pv, s)
        cands = [lo, hi, sp.Integer(0)]
        if Bv != 0 or pv != 0:
            s0 = s0_expr(Bv, pv)
            cands += [s0, -s0]
        piece = Bv**2 + pv**2 - (sp.Abs(Bv) * s - pv * sp.sqrt(1 - s**2)) ** 2  # h > 0, s > 0
        for pc in (piece, piece.subs(s, -s)):
            for rt in sp.solve(sp.diff(pc, s), s):
                if rt.is_real:
                    cands.append(rt)
        cands = [z for z in cands if (z - lo).is_nonnegative and (hi - z).is_nonnegative]
        top = sp.Max(*[sp.simplify(Fs.subs(s, z)) for z in cands])
        star = sp.Min(sp.Max(0, lo), hi)
        ok &= is_zero(sp.simplify(top - Fs.subs(s, star)))
        cases += 1
    if instances:
        key = f"sup of F over [lo, hi] = F(min(max(0, lo), hi)) ({cases} rational instances, maximised from scratch)"
        out[key] = ok
    return out


def static_rigidity() -> dict[str, bool]:
    out: dict[str, bool] = {}
    r = sp.sqrt(1 - s**2)
    x = sp.Matrix([s, 0, r])  # y = e3 ⊥ v_⊥ = p e2
    T = _tangential2(sp.Matrix([B, p, 0]), x)
    out["y perp v_perp: tangential norm^2 = B^2 (1 - s^2) + p^2"] = is_zero(T - static_expr())
    # where |Bs| > rp: F − (B²(1−s²) + p²) = B²s² − (|Bs| − rp)² = X² − (X − Y)² = Y(2X − Y) > 0 (X > Y ≥ 0)
    X_, Y_ = sp.symbols("X Y", nonnegative=True)
    step1 = is_zero((B**2 + p**2 - (X_ - Y_) ** 2 - static_expr()) - (B**2 * s**2 - (X_ - Y_) ** 2))
    step2 = is_zero((X_**2 - (X_ - Y_) ** 2) - Y_ * (2 * X_ - Y_))
    out["F - (B^2(1-s^2) + p^2) = Y (2X - Y) > 0 where X = |Bs| > Y = r p"] = step1 and step2
    out["integral_{-1}^{1} ds/sqrt(1-s^2) = pi (TV <= pi L)"] = is_zero(sp.integrate(1 / r, (s, -1, 1)) - sp.pi)
    return out


def any_activation() -> dict[str, bool]:
    out: dict[str, bool] = {}
    X = sp.Matrix(sp.symbols("x1:4", real=True))
    g = sp.Function("g")
    f = beta * X[0] + p * X[1] + c + g(X[0])
    grad = sp.Matrix([sp.diff(f, xi) for xi in X])
    gp = sp.diff(g(X[0]), X[0])
    out["grad (v.x + g(u0.x)) = (beta + g'(s)) u0 + v_perp"] = all(
        is_zero(e) for e in grad - sp.Matrix([beta + gp, p, 0]))
    z = sp.Symbol("z", real=True)
    a1, w1, b1 = sp.symbols("a1 w1 b1", real=True)
    acts = {"tanh": a1 * sp.tanh(w1 * z + b1),
            "GELU": a1 * (w1 * z + b1) * (1 + sp.erf((w1 * z + b1) / sp.sqrt(2))) / 2}
    ders = {"tanh": a1 * w1 * (1 - sp.tanh(w1 * z + b1) ** 2),
            "GELU": a1 * w1 * ((1 + sp.erf((w1 * z + b1) / sp.sqrt(2))) / 2
                               + (w1 * z + b1) * sp.exp(-(w1 * z + b1) ** 2 / 2) / sp.sqrt(2 * sp.pi))}
    for name, act in acts.items():
        fa = beta * X[0] + p * X[1] + c + act.subs(z, X[0])
        ga = sp.Matrix([sp.diff(fa, xi) for xi in X])
        Bz = beta + ders[name].subs(z, X[0])
        out[f"{name}: grad = (beta + g'(s)) u0 + v_perp, g' = the closed form used by the evaluators"] = all(
            is_zero(sp.simplify(e)) for e in ga - sp.Matrix([Bz, p, 0]))
    return out


def derive_all(quick: bool = False) -> dict[str, bool]:
    """Every step; ``quick`` skips the exact instances of :func:`level_set` (the symbolic steps stay)."""
    out = {}
    out.update(level_set(K=1 if quick else 3, instances=not quick))
    out.update(interval_sup(instances=not quick))
    out.update(static_rigidity())
    out.update(any_activation())
    return out
