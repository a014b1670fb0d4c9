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
    """The three ℓ1 bounds by the layer-cake integral, the constant 5 under rigidity, and its sharp value.

    Each key is a step; True means SymPy reduced it to an exact identity or decided the inequality exactly
    (a difference with a positive closed form, or a sign on an interval). ``_sharp_constant`` is C* to 20
    digits, ``_stated_bounds_constant`` the constant the three stated bounds give (4/√3)."""
    out: dict[str, object] = {}
    s, t, n, op, N = sp.symbols("s t n Op N", positive=True)
    # layer cake: for a data value a = u·x_i ∈ (t, 1], ReLU(a − t) = ∫_t^1 1[a ≥ s] ds = ∫_t^a ds + ∫_a^1 0 ds;
    # for a ≤ t both sides are 0. Summed over i: ‖r‖₁ = ∫_t^1 N_u(s) ds.
    aa = sp.Symbol("a", positive=True)
    out["ReLU(a - t) = int_t^1 1[a >= s] ds (split at a)"] = is_zero(
        sp.integrate(1, (s, t, aa)) + sp.integrate(0, (s, aa, 1)) - (aa - t))
    # N_u(s) ≤ n and N_u(s) ≤ Op/s² (occupancy): the integrand ≤ min(n, Op/s²), switching at s0 = √(Op/n)
    s0 = sp.sqrt(op / n)
    out["n = Op/s^2 at s0 = sqrt(Op/n)"] = is_zero(n - op / s0 ** 2)
    lc = sp.integrate(n, (s, 0, s0)) + sp.integrate(op / s ** 2, (s, s0, sp.oo))
    out["bound 1: int_0^inf min(n, Op/s^2) ds = 2 sqrt(n Op)"] = is_zero(sp.simplify(lc - 2 * sp.sqrt(n * op)))
    tail = sp.integrate(op / s ** 2, (s, t, 1))
    out["int_t^1 Op/s^2 ds = Op (1 - t)/t"] = is_zero(sp.simplify(tail - op * (1 - t) / t))
    out["bound 2: Op/t - Op(1 - t)/t = Op > 0"] = is_zero(sp.simplify(op / t - tail - op))
    # N_u is non-increasing, so ∫_t^1 N_u(s) ds ≤ ∫_t^1 N_u(t) ds = (1 − t) N_u(t) ≤ (1 − t) Op/t²
    out["bound 3: int_t^1 N_u(t) ds = (1 - t) N_u(t), with N_u(t) <= Op/t^2"] = is_zero(
        sp.integrate(N, (s, t, 1)) - (1 - t) * N) and is_zero(sp.integrate(op / t ** 2, (s, t, 1))
                                                                   - (1 - t) * op / t ** 2)
    # rigidity |α| ≤ 2L/√(1 − t²): |α|‖r‖₁ t/(L Op) ≤ 2t/√(1 − t²) · min(1/t, (1 − t)/t²) =: g(t)
    g1 = 2 / sp.sqrt(1 - t ** 2)  # t ≤ 1/2 (1/t ≤ (1 − t)/t² ⇔ t ≤ 1 − t)
    g2 = 2 * (1 - t) / (t * sp.sqrt(1 - t ** 2))  # t ≥ 1/2
    half = sp.Rational(1, 2)
    out["the min switches at t = 1/2: 1/t = (1 - t)/t^2 there"] = is_zero((1 / t - (1 - t) / t ** 2).subs(t, half))
    out["g increasing on (0, 1/2]: g1' = 2t/(1 - t^2)^(3/2) > 0"] = is_zero(sp.diff(g1, t) - 2 * t / (1 - t ** 2)
                                                                           ** sp.Rational(3, 2))
    # g2² = 4(1 − t)/(t²(1 + t)); its derivative is 8(t² − t − 1)/(t³(1 + t)²), and t² − t − 1 < 0 on (0, 1)
    dg = sp.together(sp.diff(4 * (1 - t) / (t ** 2 * (1 + t)), t))
    quad = t ** 2 - t - 1
    out["g decreasing on [1/2, 1): (g2^2)' = 8(t^2 - t - 1)/(t^3 (1 + t)^2), t^2 - t - 1 < 0 on (0, 1)"] = is_zero(
        dg - 8 * quad / (t ** 3 * (1 + t) ** 2)) and not [
        r for r in sp.real_roots(sp.Poly(quad, t)) if 0 <= r <= 1] and bool(quad.subs(t, half) < 0)
    c_stated = sp.nsimplify(g1.subs(t, half))
    out["the stated bounds give the constant max g = g(1/2) = 4/sqrt(3) <= 5"] = is_zero(
        c_stated - 4 / sp.sqrt(3)) and is_zero(g2.subs(t, half) - c_stated) and bool(c_stated < 5)
    # with the integral Op(1 − t)/t itself: 2√((1 − t)/(1 + t)) < 2
    ratio = 2 * (1 - t) / sp.sqrt(1 - t ** 2)
    out["with Op(1-t)/t: ratio^2 = 4(1 - t)/(1 + t) and 4 - ratio^2 = 8t/(1 + t) > 0"] = is_zero(
        sp.simplify(ratio ** 2 - 4 * (1 - t) / (1 + t))) and is_zero(sp.simplify(4 - ratio ** 2 - 8 * t / (1 + t)))
    # the sharp constant. Σ_{s_i > t} s_i² ≤ uᵀXᵀXu ≤ Op (s_i = u·x_i ≤ 1), so ‖r‖₁ ≤ Op·m(t),
    # m(t) = max_{t < s ≤ 1} (s − t)/s²; ∂_s (s − t)/s² = (2t − s)/s³.
    m = (s - t) / s ** 2
    out["d/ds (s - t)/s^2 = (2t - s)/s^3"] = is_zero(sp.simplify(sp.diff(m, s) - (2 * t - s) / s ** 3))
    out["t <= 1/2: m(t) = m(2t) = 1/(4t)"] = is_zero(m.subs(s, 2 * t) - 1 / (4 * t))
    out["t >= 1/2: m increasing on (t, 1], m(t) = 1 - t"] = is_zero(m.subs(s, 1) - (1 - t))
    # the ratio |α|‖r‖₁ t/(L Op) ≤ 2t m(t)/√(1 − t²); equality for x_i = u (Op = n, ‖r‖₁ = n(1 − t)), L at rigidity
    low = 2 * t * (1 / (4 * t)) / sp.sqrt(1 - t ** 2)  # = 1/(2√(1 − t²)), increasing: its max on (0, 1/2] at 1/2
    low_ok = is_zero(sp.diff(low, t) - t / (2 * (1 - t ** 2) ** sp.Rational(3, 2)))
    h2 = 4 * t ** 2 * (1 - t) / (1 + t)  # (2t(1 − t)/√(1 − t²))², t ≥ 1/2
    crit = [c for c in sp.solve(sp.diff(h2, t), t) if c.is_real and 0 < c < 1]
    tau = (sp.sqrt(5) - 1) / 2
    out["argmax of h on (0, 1) is unique: tau = (sqrt 5 - 1)/2 >= 1/2, h(0) = h(1) = 0"] = (
        len(crit) == 1 and is_zero(sp.radsimp(crit[0] - tau)) and bool(tau > half)
        and is_zero(h2.subs(t, 0)) and is_zero(h2.subs(t, 1)))
    out["tau^2 = 1 - tau and tau (1 + tau) = 1"] = is_zero(sp.expand(tau ** 2 - 1 + tau)) and is_zero(
        sp.expand(tau * (1 + tau) - 1))
    out["h(tau)^2 = 4 tau^5 exactly: C* = 2 tau^(5/2)"] = is_zero(sp.radsimp(sp.expand(h2.subs(t, tau) - 4 * tau ** 5)))
    cstar = 2 * tau ** sp.Rational(5, 2)
    low_max = sp.radsimp(low.subs(t, half))
    out["t <= 1/2 branch: 1/(2 sqrt(1 - t^2)) increasing, max 1/sqrt(3) < C*"] = low_ok and is_zero(
        low_max - 1 / sp.sqrt(3)) and bool(sp.N(low_max - cstar, 50) < 0)
    out["3/5 < C* < 1: the stated 5 (and 4) hold, 3/5 does not"] = bool(
        sp.Rational(3, 5) < cstar) and bool(cstar < 1)
    out["_sharp_constant"] = sp.N(cstar, 20)
    out["_stated_bounds_constant"] = sp.N(c_stated, 20)
    return out


def serving() -> dict[str, object]:
    """The serving capacity: the count is an occupancy at t + h/|α|, and the sharp constant under rigidity is 4.

    y_i α ReLU(u·x_i − t) ≥ h > 0 forces u·x_i ≥ t + h/|α|, so the count is ≤ N_u(t + h/|α|) ≤ Op (t + h/|α|)⁻².
    A nonzero count needs t + h/|α| ≤ 1. Write a = |α| ≤ 2L/√(1 − t²) and h = a·q with 0 < q ≤ 1 − t:
    (t + h/a)⁻² h²/L² = a² q²/(L² (t + q)²), increasing in q and in a, so ≤ 4(1 − t)²/(1 − t²) = 4(1 − t)/(1 + t)
    ≤ 4 (t ≥ 0), with equality at t = 0 for data stacked at u: the sharp constant is 4, not 6."""
    out: dict[str, object] = {}
    t, q, a, L = sp.symbols("t q a L", positive=True)
    e = a ** 2 * q ** 2 / (L ** 2 * (t + q) ** 2)
    out["d/dq of a^2 q^2/(L^2 (t+q)^2) = 2 a^2 q t/(L^2 (t+q)^3) > 0"] = is_zero(sp.simplify(
        sp.diff(e, q) - 2 * a ** 2 * q * t / (L ** 2 * (t + q) ** 3)))
    top = sp.simplify(e.subs(q, 1 - t).subs(a, 2 * L / sp.sqrt(1 - t ** 2)))
    out["at q = 1 - t, a = 2L/sqrt(1 - t^2): 4(1 - t)/(1 + t)"] = is_zero(sp.simplify(top - 4 * (1 - t) / (1 + t)))
    out["4 - 4(1 - t)/(1 + t) = 8t/(1 + t) >= 0"] = is_zero(sp.simplify(4 - top - 8 * t / (1 + t)))
    out["t -> 0: the supremum 4 is attained (data at u, t = 0, h = 2L)"] = is_zero(sp.limit(top, t, 0) - 4)
    out["_sharp_constant"] = 4
    return out
