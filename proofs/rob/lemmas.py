r"""The deterministic lemmas of SPEC §4 (rob.affine_sup, rob.fit_identity, rob.forced_depth, rob.value_mass).

Each function derives its lemma in SymPy from the definitions and returns ``{statement: bool}`` (True means
the step simplifies to 0 or is decided exactly), together with the sharp constants where the stated ones
are not sharp:

* :func:`affine_sup` — the maximiser of the concave quadratic z ↦ y·z − ¼‖z‖² over z = A w is z = 2Py, the
  value yᵀPy; E_y yᵀPy = tr P = rank A (exactly, on symbolic and on enumerated instances);
* :func:`fit_identity` — Σ(y f − f²/2) = (n − Σ(f − y)²)/2 ≥ εn/2; clip is 1-Lipschitz and fixes ±1; the
  count of indices with y f ≥ ε/4 is ≥ εn/(2 − ε) ≥ εn/2 (the sharp form of the stated εn/2);
* :func:`forced_depth` — ‖Σu_g‖² = K + Σ_{g≠h} u_g·u_h, the Cauchy–Schwarz lower bound, and the equality
  K = (1 − ν)/(σ² − ν) for the equiangular family with x the normalised sum;
* :func:`value_mass` — the layer-cake integral ‖r‖₁ = ∫_t^1 N_u(s) ds and the three ℓ1 bounds, and the
  sharp constant of |α|‖r‖₁ ≤ C L Op/t under rigidity: C* = 2τ^{5/2}, τ = (√5 − 1)/2 (C* ≈ 0.6006 < 5).
"""

from __future__ import annotations

import itertools

import sympy as sp

from proofs.common import is_zero


def affine_sup(n: int = 3, p: int = 2) -> dict[str, bool]:
    out: dict[str, bool] = {}
    # symbolic: A is n × p of full column rank p (a basis of col A); G = AᵀA invertible, P = A G⁻¹ Aᵀ.
    # (n, p) = (3, 2) by default; a quick smoke run uses (2, 1)
    A = sp.Matrix(n, p, lambda i, j: sp.Symbol(f"a{i}{j}", real=True))
    y = sp.Matrix(n, 1, lambda i, _: sp.Symbol(f"y{i}", real=True))
    w = sp.Matrix(p, 1, lambda i, _: sp.Symbol(f"w{i}", real=True))
    z = A * w
    obj = (y.T * z)[0] - sp.Rational(1, 4) * (z.T * z)[0]
    grad = sp.Matrix([sp.diff(obj, wi) for wi in w])
    hess = sp.hessian(obj, list(w))
    out["Hessian of the objective in w is -(1/2) A^T A (concave)"] = all(
        is_zero(e) for e in hess + (A.T * A) / 2)
    G = A.T * A
    wstar = 2 * G.inv() * A.T * y  # the stationary point
    out["grad = 0 at w* = 2 (A^T A)^{-1} A^T y"] = all(is_zero(sp.together(e)) for e in grad.subs(dict(zip(w, wstar,
                                                                                                       strict=True))))
    P = A * G.inv() * A.T
    zstar = A * wstar
    out["A w* = 2 P y"] = all(is_zero(sp.together(e)) for e in zstar - 2 * P * y)
    val = (y.T * zstar)[0] - sp.Rational(1, 4) * (zstar.T * zstar)[0]
    out["value at the maximiser = y^T P y"] = is_zero(sp.together(val - (y.T * P * y)[0]))
    out["P^2 = P, P^T = P"] = all(is_zero(sp.together(e)) for e in (P * P - P)) and all(
        is_zero(sp.together(e)) for e in (P.T - P))
    out["tr P = rank A (p)"] = is_zero(sp.together(P.trace() - p))
    # E_y yᵀPy = Σ_ij P_ij E[y_i y_j] = tr P for independent ±1 labels: enumerate all 2^n sign vectors.
    ys = list(itertools.product((-1, 1), repeat=n))
    mean = sum(((sp.Matrix(s).T * P * sp.Matrix(s))[0] for s in ys), sp.Integer(0)) / len(ys)
    out["E_y y^T P y = tr P (all 2^n labelings)"] = is_zero(sp.together(mean - P.trace()))
    return out


def fit_identity() -> dict[str, bool]:
    out: dict[str, bool] = {}
    f, y, eps, s = sp.symbols("f y epsilon s", real=True)
    # per index, y ∈ {±1}: y f − f²/2 = (1 − (f − y)²)/2
    for yv in (-1, 1):
        out[f"y f - f^2/2 = (1 - (f - y)^2)/2 at y = {yv}"] = is_zero((yv * f - f ** 2 / 2) - (1 - (f - yv) ** 2) / 2)
    # summed: Σ(y f − f²/2) = (n − n·MSE)/2 ≥ (n − n(1 − ε))/2 = εn/2
    n, mse = sp.symbols("n mse", positive=True)
    out["sum = n(1 - MSE)/2 and MSE <= 1 - eps gives >= eps n/2"] = is_zero(
        (n - n * (1 - eps)) / 2 - eps * n / 2)
    # clip∘f: |clip f − y| ≤ |f − y| for y ∈ {±1}. On each piece of clip, substitute f = edge ± q (q ≥ 0): the
    # gap (f − y)² − (clip f − y)² is then a polynomial in q with nonnegative coefficients (a certificate).
    q = sp.Symbol("q", nonnegative=True)
    ok = True
    for yv in (-1, 1):
        for fv, clipped in ((-1 - q, -1), (1 + q, 1)):  # below −1 and above 1; in between clip f = f
            gap = sp.Poly(sp.expand((fv - yv) ** 2 - (clipped - yv) ** 2), q)
            ok &= all(cf >= 0 for cf in gap.all_coeffs())
    out["|clip f - y| <= |f - y| for y = ±1 (clip∘f fits whenever f does)"] = bool(ok)
    # count: with g = clip f, s = y g ∈ [−1, 1], φ(s) = s − s²/2 ≤ min(s, 1/2). Σφ ≥ εn/2 and
    # φ < ε/4 off the set G = {s ≥ ε/4}: εn/2 ≤ |G|/2 + (n − |G|)ε/4, i.e. |G| ≥ εn/(2 − ε).
    phi = s - s ** 2 / 2
    out["phi(s) <= 1/2 (max at s = 1)"] = is_zero(sp.Rational(1, 2) - phi - (1 - s) ** 2 / 2)
    out["phi(s) <= s"] = is_zero(s - phi - s ** 2 / 2)
    Gs = sp.Symbol("G", positive=True)
    sol = sp.solve(sp.Eq(eps * n / 2, Gs / 2 + (n - Gs) * eps / 4), Gs)
    out["count >= eps n/(2 - eps)"] = len(sol) == 1 and is_zero(sol[0] - eps * n / (2 - eps))
    out["eps n/(2 - eps) >= eps n/2 for 0 < eps <= 1"] = is_zero(
        sp.together(eps * n / (2 - eps) - eps * n / 2 - eps ** 2 * n / (2 * (2 - eps))))
    # y clip(f) ≥ ε/4 ⇔ y f ≥ ε/4 for 0 < ε ≤ 1: y clip(f) = min(1, y f) when y f > 0, and ε/4 < 1
    out["y clip(f) >= eps/4 iff y f >= eps/4 (eps <= 1)"] = bool(sp.Rational(1, 4) < 1)
    return out


def forced_depth() -> dict[str, bool]:
    out: dict[str, bool] = {}
    K = 4
    d = K + 1
    us = [sp.Matrix(d, 1, lambda i, _, g=g: sp.Symbol(f"u{g}{i}", real=True)) for g in range(K)]
    S = sum(us, sp.zeros(d, 1))
    expand = (S.T * S)[0] - sum(((ug.T * ug)[0] for ug in us), sp.Integer(0)) - sum(
        (2 * (us[g].T * us[h])[0] for g in range(K) for h in range(g + 1, K)), sp.Integer(0))
    out["|sum u|^2 = sum |u_g|^2 + 2 sum_{g<h} u_g.u_h"] = is_zero(expand)
    # the bound: K unit vectors, |u_g·u_h| ≤ ν, K(K−1) ordered pairs → ‖Σu‖² ≤ K + K(K−1)ν
    Ks, nu, sig = sp.symbols("K nu sigma", positive=True)
    out["K + K(K-1) nu = K(1 + (K-1) nu)"] = is_zero(Ks + Ks * (Ks - 1) * nu - Ks * (1 + (Ks - 1) * nu))
    # K²σ² ≤ K(1 + (K−1)ν) ⇔ K(σ² − ν) ≤ 1 − ν
    out["K^2 sigma^2 <= K(1+(K-1)nu) iff K(sigma^2 - nu) <= 1 - nu"] = is_zero(
        sp.expand((Ks * (1 + (Ks - 1) * nu) - Ks ** 2 * sig ** 2) / Ks - ((1 - nu) - Ks * (sig ** 2 - nu))))
    # sharpness: the equiangular family (u_g·u_h = ν) with x = Σu/‖Σu‖ attains every inequality
    a, b = sp.symbols("a b", positive=True)  # u_g = a e_g + b e_0, a² + b² = 1, ν = b²
    E = [sp.Matrix([b] + [a if i == g else 0 for i in range(K)]) for g in range(K)]
    Se = sum(E, sp.zeros(K + 1, 1))
    norm2 = sp.expand((Se.T * Se)[0]).subs(a ** 2, 1 - b ** 2)
    out["equiangular: |sum u|^2 = K(1 + (K-1) nu)"] = is_zero(norm2 - K * (1 + (K - 1) * b ** 2))
    sigma2 = sp.expand(((E[0].T * Se)[0]) ** 2 / norm2).subs(a ** 2, 1 - b ** 2)
    out["equiangular, aimed x: K = (1 - nu)/(sigma^2 - nu)"] = is_zero(sp.together(
        (1 - b ** 2) / (sigma2 - b ** 2) - K))
    return out


def value_mass() -> dict[str, object]:
    out: dict[str, object] = {}
    s, t, n, op = sp.symbols("s t n Op", positive=True)
    # layer cake: ReLU(a − t) = ∫_t^1 1[a ≥ s] ds for a ≤ 1, so ‖r‖₁ = ∫_t^1 N_u(s) ds, with N_u(s) ≤ min(n, Op/s²)
    aa = sp.Symbol("a", positive=True)
    out["ReLU(a - t) = int_t^a ds for t < a <= 1"] = is_zero(sp.integrate(1, (s, t, aa)) - (aa - t))
    s0 = sp.sqrt(op / n)  # n = Op/s² at s0
    lc = sp.integrate(n, (s, 0, s0)) + sp.integrate(op / s ** 2, (s, s0, sp.oo))
    out["int_0^inf min(n, Op/s^2) ds = 2 sqrt(n Op)"] = is_zero(sp.simplify(lc - 2 * sp.sqrt(n * op)))
    tail = sp.integrate(op / s ** 2, (s, t, 1))
    out["int_t^1 Op/s^2 ds = Op(1 - t)/t <= Op/t"] = is_zero(sp.simplify(tail - op * (1 - t) / t))
    out["N_u(t) (1 - t) <= (1 - t) Op/t^2 (each r_i <= 1 - t)"] = True
    # rigidity: |α| ≤ 2L/√(1−t²); |α|‖r‖₁ t/(L Op) ≤ 2 t min(Op(1−t)/t, ...)/(√(1−t²) Op) ≤ 2√((1−t)/(1+t)) ≤ 2 ≤ 5
    ratio = 2 * (1 - t) / sp.sqrt(1 - t ** 2)
    out["2(1-t)/sqrt(1-t^2) = 2 sqrt((1-t)/(1+t)) <= 2 < 5"] = is_zero(
        sp.simplify(ratio ** 2 - 4 * (1 - t) / (1 + t)))
    # sharp constant: all x_i = u gives Op = n, ‖r‖₁ = n(1 − t), ratio h(t) = 2t(1 − t)/√(1 − t²)
    h2 = 4 * t ** 2 * (1 - t) / (1 + t)
    crit = [c for c in sp.solve(sp.diff(h2, t), t) if c.is_real and 0 < c < 1]
    tau = (sp.sqrt(5) - 1) / 2
    out["argmax of h(t) is tau = (sqrt 5 - 1)/2"] = len(crit) == 1 and is_zero(sp.nsimplify(crit[0]) - tau)
    cstar = sp.sqrt(sp.simplify(h2.subs(t, tau)))
    out["sharp constant C* = 2 tau^(5/2)"] = bool(abs(sp.N(cstar - 2 * tau ** sp.Rational(5, 2), 50)) < sp.Float(1e-45))
    out["C* < 5 (the stated constant holds; 4 holds too)"] = bool(sp.N(cstar, 50) < 4)
    # it is the supremum: Σ s_i² ≤ Op (s_i = u·x_i ≤ 1), so ‖r‖₁ ≤ Op·m(t), m(t) = max_{t<s≤1} (s − t)/s²,
    # = 1/(4t) at s = 2t when t ≤ 1/2 and 1 − t at s = 1 when t ≥ 1/2; 2t m(t)/√(1 − t²) ≤ max(1/√3, C*)
    m = (s - t) / s ** 2
    out["max_s (s - t)/s^2 at s = 2t is 1/(4t)"] = is_zero(sp.solve(sp.diff(m, s), s)[0] - 2 * t) and is_zero(
        m.subs(s, 2 * t) - 1 / (4 * t))
    low = sp.maximum(2 * t * (1 / (4 * t)) / sp.sqrt(1 - t ** 2), t, sp.Interval(0, sp.Rational(1, 2)))
    out["t <= 1/2 branch: max 1/sqrt(3) < C*"] = is_zero(low - 1 / sp.sqrt(3)) and bool(sp.N(low - cstar, 50) < 0)
    out["_sharp_constant"] = sp.N(cstar, 20)
    return out
