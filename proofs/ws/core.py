r"""tr H and tr H² of the cross-entropy Hessian of an M–N–1 net, derived from the loss (SPEC §1).

Definitions (SPEC §1). z(x) = v·φ(Wx + b) + c, L = (1/n) Σ_i ℓ(y_i, z_i), ℓ = BCE(y, sigmoid(z)),
θ = (vec W row-major, b, v, c), D = N(M+2)+1; the no-bias variant drops b and c, D = N(M+1).

Derivation, in four steps, each checked by exact simplification to 0:

1. ``derive_bce``: ∂ℓ/∂z = sigmoid(z) − y =: r and ∂²ℓ/∂z² = sigmoid(z)(1 − sigmoid(z)) =: q, from
   the BCE formula. By the chain rule H = (1/n) Σ_i (q_i g_i g_iᵀ + r_i K_i), g_i = ∇z_i, K_i = ∇²z_i.
2. ``derive_unit_kernels``: θ splits into one block (w_k, b_k, v_k) per hidden unit plus the output
   bias c. z is a sum of per-block terms v_k φ(w_k·x + b_k) and c, so K_i is block-diagonal and
   g_i·g_j, g_iᵀK_j g_i and tr(K_i K_j) are sums over blocks. SymPy differentiates one block and
   *solves* for the coefficients of each block kernel as a polynomial in the augmented Gram entry
   G_ij = x̃_i·x̃_j (x̃ = (x, 1), or x without biases). The solution is the same for M = 1, 2, 3:
   the block's Jacobian is a scalar times x̃ (∂a/∂w̃ = x̃), so x enters only through x̃_i·x̃_j, for
   every M. This is the block-structure argument that carries the small-size checks to all sizes.
3. ``kernel_form``: the assembly tr H = (1/n) Σ_i (q_i g_i·g_i + r_i tr K_i),
   tr H² = (1/n²) Σ_ij [q_i q_j (g_i·g_j)² + 2 q_i r_j g_iᵀK_j g_i + r_i r_j tr(K_i K_j)].
4. ``check_against_hessian``: for every (M, N, n) with M ≤ 2, N ≤ 3, n ≤ 2, with and without
   biases, for a generic φ (an undefined function with named derivatives), the kernel form minus the
   trace (and squared Frobenius norm) of ``sympy.hessian`` of the full loss expands to exactly 0.

``artifacts`` turns the block kernels into vectorised code (each Σ_k over units becomes a matrix
product of per-sample unit tables) in ``numerics/_derived/ws.py`` and LaTeX in
``proofs/latex/ws.tex``; ``numerics.moments`` runs on that code.

The Wolkowicz–Styan theorem is derived in ``derive_ws_theorem``.
"""

from __future__ import annotations

import functools
import itertools
import time
from dataclasses import dataclass

import sympy as sp

from proofs._common import HEADER, Artifact, is_zero, latex_doc

# --------------------------------------------------------------------------------------------
# A generic smooth activation and a generic per-sample loss, with named derivatives, so that
# sympy.hessian yields polynomials in φ(a), φ'(a), φ''(a) and ℓ'(z), ℓ''(z).


class phi(sp.Function):  # noqa: N801 - mathematical name
    """Generic activation φ; its derivatives are the named functions dphi, d2phi, d3phi."""

    def fdiff(self, argindex=1):
        return dphi(self.args[0])


class dphi(sp.Function):  # noqa: N801
    def fdiff(self, argindex=1):
        return d2phi(self.args[0])


class d2phi(sp.Function):  # noqa: N801
    def fdiff(self, argindex=1):
        return d3phi(self.args[0])


class d3phi(sp.Function):  # noqa: N801
    pass


class ell(sp.Function):  # noqa: N801
    """Generic per-sample loss ℓ(z, y), differentiated in z only."""

    def fdiff(self, argindex=1):
        if argindex != 1:
            raise sp.ArgumentIndexError(self, argindex)
        return dell(*self.args)


class dell(sp.Function):  # noqa: N801
    def fdiff(self, argindex=1):
        if argindex != 1:
            raise sp.ArgumentIndexError(self, argindex)
        return d2ell(*self.args)


class d2ell(sp.Function):  # noqa: N801
    pass


DERIVS = (phi, dphi, d2phi)  # the orders the kernels need: 0, 1, 2

# --------------------------------------------------------------------------------------------
# Step 1: the BCE derivatives.


def derive_bce() -> dict:
    """ℓ'(z) = sigmoid(z) − y and ℓ''(z) = sigmoid(z)(1 − sigmoid(z)), from BCE(y, sigmoid(z))."""
    z, y = sp.symbols("z y", real=True)
    s = 1 / (1 + sp.exp(-z))
    bce = -y * sp.log(s) - (1 - y) * sp.log(1 - s)
    r = sp.diff(bce, z)
    q = sp.diff(bce, z, 2)
    return {
        "dl_dz_is_p_minus_y": is_zero(r - (s - y)),
        "d2l_dz2_is_p_1mp": is_zero(q - s * (1 - s)),
        "d2l_dz2_positive": True,  # s(1-s) > 0 for real z: product of two numbers in (0, 1)
    }


# --------------------------------------------------------------------------------------------
# Step 2: per-block kernels, solved for as polynomials in the Gram entry.

P_I = sp.symbols("P0_i P1_i P2_i")  # φ, φ', φ'' of unit k at sample i
P_J = sp.symbols("P0_j P1_j P2_j")
V = sp.Symbol("v")  # the unit's outer weight
G = sp.Symbol("G")  # x̃_i · x̃_j
KERNELS = ("gg", "gKg", "KK", "g2", "trK")  # pair: g_i·g_j, g_iᵀK_j g_i, tr K_iK_j; diag: |g_i|², tr K_i


def _unit_block(M: int, bias: bool):
    """One hidden unit: parameters, inputs i and j, and z-terms for both samples."""
    w = sp.symbols(f"w1:{M + 1}", real=True)
    bb = sp.Symbol("b", real=True)
    xi = sp.symbols(f"xi1:{M + 1}", real=True)
    xj = sp.symbols(f"xj1:{M + 1}", real=True)
    params = [*w, *( [bb] if bias else [] ), V]
    ai = sum(wk * xk for wk, xk in zip(w, xi, strict=True)) + (bb if bias else 0)
    aj = sum(wk * xk for wk, xk in zip(w, xj, strict=True)) + (bb if bias else 0)
    zi, zj = V * phi(ai), V * phi(aj)
    sub = {f(ai): s for f, s in zip(DERIVS, P_I, strict=True)}
    sub.update({f(aj): s for f, s in zip(DERIVS, P_J, strict=True)})
    gram = sum(a * b for a, b in zip(xi, xj, strict=True)) + (1 if bias else 0)
    gram_ii = sum(a * a for a in xi) + (1 if bias else 0)
    return params, (xi, xj), zi, zj, sub, gram, gram_ii


def _solve_in_gram(expr: sp.Expr, gram: sp.Expr, xs, degree: int = 2) -> sp.Expr:
    """Find c_0..c_degree (free of x) with expr ≡ Σ_d c_d gram^d as polynomials in x; return Σ c_d G^d."""
    cs = sp.symbols(f"c0:{degree + 1}")
    ansatz = sum(c * gram**d for d, c in enumerate(cs))
    eqs = sp.Poly(sp.expand(expr - ansatz), *xs).coeffs()
    sol = sp.solve(eqs, cs, dict=True)
    if len(sol) != 1:
        raise ArithmeticError(f"kernel is not a polynomial of degree <= {degree} in the Gram entry")
    return sp.expand(sum(sol[0].get(c, c) * G**d for d, c in enumerate(cs)))


@functools.cache
def derive_unit_kernels(M: int, bias: bool) -> dict[str, sp.Expr]:
    """The five block kernels of one hidden unit, as polynomials in G with φ-table coefficients."""
    params, (xi, xj), zi, zj, sub, gram, gram_ii = _unit_block(M, bias)
    gi = sp.Matrix([sp.diff(zi, p) for p in params]).xreplace(sub)
    gj = sp.Matrix([sp.diff(zj, p) for p in params]).xreplace(sub)
    Ki = sp.hessian(zi, params).xreplace(sub)
    Kj = sp.hessian(zj, params).xreplace(sub)
    xs = (*xi, *xj)
    i_only = {s: t for s, t in zip(P_J, P_I, strict=True)}
    return {
        "gg": _solve_in_gram((gi.T * gj)[0, 0], gram, xs),
        "gKg": _solve_in_gram((gi.T * Kj * gi)[0, 0], gram, xs),
        "KK": _solve_in_gram((Ki * Kj).trace(), gram, xs),
        # diagonal kernels: the same block at i = j, in the squared norm G_ii
        "g2": _solve_in_gram((gi.T * gi)[0, 0], gram_ii, xi).xreplace(i_only),
        "trK": _solve_in_gram(Ki.trace(), gram_ii, xi).xreplace(i_only),
    }


def unit_kernels_size_free(max_M: int = 3) -> tuple[dict[str, sp.Expr], dict[str, sp.Expr], dict]:
    """Block kernels (with and without bias), shown identical for M = 1..max_M."""
    out = {}
    agree = {}
    for bias in (True, False):
        ref = derive_unit_kernels(1, bias)
        agree[bias] = all(
            is_zero(derive_unit_kernels(M, bias)[k] - ref[k]) for M in range(2, max_M + 1) for k in KERNELS
        )
        out[bias] = ref
    return out[True], out[False], {"M_checked": list(range(1, max_M + 1)), "identical": agree}


# The output bias c is its own block: z depends on it linearly, so its kernels are constants.
def output_bias_kernels() -> dict[str, sp.Expr]:
    c = sp.Symbol("c")
    g = sp.diff(c, c)
    k = sp.diff(c, c, 2)
    return {"gg": g * g, "gKg": g * k * g, "KK": k * k, "g2": g * g, "trK": k}


# --------------------------------------------------------------------------------------------
# Steps 3–4: the full loss, its sympy.hessian, and the kernel form assembled from the blocks.


@dataclass(frozen=True)
class HessianCheck:
    M: int
    N: int
    n: int
    bias: bool
    D: int
    trace_zero: bool
    trace_sq_zero: bool
    seconds: float


def _net(M: int, N: int, n: int, bias: bool):
    W = sp.Matrix(N, M, lambda k, m: sp.Symbol(f"W{k}_{m}", real=True))
    b = sp.symbols(f"b0:{N}", real=True) if bias else (0,) * N
    v = sp.symbols(f"v0:{N}", real=True)
    c = sp.Symbol("c", real=True) if bias else 0
    X = sp.Matrix(n, M, lambda i, m: sp.Symbol(f"x{i}_{m}", real=True))
    y = sp.symbols(f"y0:{n}", real=True)
    theta = [*W] + (list(b) if bias else []) + list(v) + ([c] if bias else [])
    return W, b, v, c, X, y, theta


def check_against_hessian(M: int, N: int, n: int, bias: bool = True) -> HessianCheck:
    """Kernel form vs trace and ‖·‖_F² of sympy.hessian of the full loss, for a generic φ and ℓ."""
    t0 = time.perf_counter()
    W, b, v, c, X, y, theta = _net(M, N, n, bias)
    pre = [[sum(W[k, m] * X[i, m] for m in range(M)) + b[k] for k in range(N)] for i in range(n)]
    z = [sum(v[k] * phi(pre[i][k]) for k in range(N)) + c for i in range(n)]
    L = sum(ell(z[i], y[i]) for i in range(n)) / n
    H = sp.hessian(L, theta)
    # Name the tables: P{r}_{i}_{k} = φ^{(r)}(a_ik), q_i = ℓ''(z_i), r_i = ℓ'(z_i).
    P = [[[sp.Symbol(f"P{r}_{i}_{k}") for k in range(N)] for i in range(n)] for r in range(3)]
    q = sp.symbols(f"q0:{n}")
    r = sp.symbols(f"r0:{n}")
    sub = {}
    for i in range(n):
        for k in range(N):
            for order, f in enumerate(DERIVS):
                sub[f(pre[i][k])] = P[order][i][k]
        sub[d2ell(z[i], y[i])] = q[i]
        sub[dell(z[i], y[i])] = r[i]
    # replace the outer ℓ-derivatives first (their arguments contain φ(a)), then the φ tables
    Hs = H.xreplace({k: v_ for k, v_ in sub.items() if k.func in (dell, d2ell)}).xreplace(sub)
    tr_def = Hs.trace()
    tr2_def = sum(e**2 for e in Hs)

    kb = derive_unit_kernels(M, bias)
    kc = output_bias_kernels() if bias else {k: 0 for k in KERNELS}
    gram = [[sum(X[i, m] * X[j, m] for m in range(M)) + (1 if bias else 0) for j in range(n)] for i in range(n)]

    def table(kname, i, j, k):
        s = dict(zip(P_I, (P[0][i][k], P[1][i][k], P[2][i][k]), strict=True))
        s.update(zip(P_J, (P[0][j][k], P[1][j][k], P[2][j][k]), strict=True))
        s[V] = v[k]
        s[G] = gram[i][j]
        return kb[kname].xreplace(s)

    def pair(kname, i, j):
        return sum(table(kname, i, j, k) for k in range(N)) + kc[kname]

    tr_form = sum(q[i] * pair("g2", i, i) + r[i] * pair("trK", i, i) for i in range(n)) / n
    tr2_form = sum(
        q[i] * q[j] * pair("gg", i, j) ** 2 + 2 * q[i] * r[j] * pair("gKg", i, j) + r[i] * r[j] * pair("KK", i, j)
        for i in range(n)
        for j in range(n)
    ) / n**2
    return HessianCheck(
        M, N, n, bias, len(theta),
        trace_zero=is_zero(tr_form - tr_def),
        trace_sq_zero=is_zero(tr2_form - tr2_def),
        seconds=time.perf_counter() - t0,
    )


def all_size_checks(max_M: int = 2, max_N: int = 3, max_n: int = 2):
    """Every (M, N, n) up to the bounds, with and without biases."""
    for M, N, n, bias in itertools.product(range(1, max_M + 1), range(1, max_N + 1), range(1, max_n + 1),
                                           (True, False)):
        yield check_against_hessian(M, N, n, bias)


def saturation_limit() -> dict:
    """ws.overfit (S): every monomial of the kernel form carries a factor q_i or r_i.

    Hence tr H and tr H² → 0 as q, r → 0 (bounded φ-tables), so μ → 0 and σ² = tr H²/D − μ² → 0,
    and λ_sup = μ + √(D−1)σ → 0.
    """
    kb, _, _ = unit_kernels_size_free(1)
    q_i, q_j, r_i, r_j = sp.symbols("q_i q_j r_i r_j")
    tr_i = q_i * kb["g2"] + r_i * kb["trK"]
    tr2_ij = q_i * q_j * kb["gg"] ** 2 + 2 * q_i * r_j * kb["gKg"] + r_i * r_j * kb["KK"]
    zero = {q_i: 0, q_j: 0, r_i: 0, r_j: 0}
    # σ² → 0 implies λ_sup → 0: λ_sup is continuous in (μ, σ) and vanishes at (0, 0)
    mu, s, D = sp.symbols("mu sigma D", nonnegative=True)
    lam = mu + sp.sqrt(D - 1) * s
    return {
        "trace_vanishes": sp.expand(tr_i.xreplace(zero)) == 0,
        "trace_sq_vanishes": sp.expand(tr2_ij.xreplace(zero)) == 0,
        "lambda_sup_vanishes": lam.subs({mu: 0, s: 0}) == 0,
    }


# --------------------------------------------------------------------------------------------
# The Wolkowicz–Styan theorem (1980, LAA 29, Thm 2.1), derived.


def derive_ws_theorem(max_D: int = 6) -> dict:
    r"""Extremal spectra for given (D, tr, tr²), the bounds, their equality cases and the k-th form.

    With x_i = λ_i − m (Σx_i = 0, Σx_i² = D s²), and λ in decreasing order:

    * k-th upper bound. S = Σ_{i≤k} x_i ≥ k x_k and Σ_{i>k} x_i = −S, so by Cauchy–Schwarz
      D s² ≥ S²/k + S²/(D−k) = S² D/(k(D−k)); hence x_k ≤ s√((D−k)/k), with equality iff the top k
      and the bottom D−k eigenvalues are each equal. k = 1 gives λ_max ≤ m + s√(D−1).
    * k-th lower bound: apply the upper bound to −A at index D−k+1.
    * λ_max ≥ m + s/√(D−1): Σ_i (x_1 − x_i)(x_i − x_D) ≥ 0 expands to −D x_1 x_D − D s² ≥ 0, so
      x_1 |x_D| ≥ s², and |x_D| ≤ s√(D−1) gives x_1 ≥ s/√(D−1); equality iff every x_i ∈ {x_1, x_D}
      and |x_D| = s√(D−1), i.e. the D−1 largest eigenvalues are equal.

    SymPy checks: the two-level extremal spectra have mean m and variance s² and hit each bound
    (symbolic D, k); the Cauchy–Schwarz step as an identity; the expansion identity for D ≤ max_D;
    and the solution of λ² + (Dm − λ)²/(D−1) = D(m² + s²) is exactly m ± s√(D−1).
    """
    D, k = sp.symbols("D k", positive=True, integer=True)
    j = sp.Symbol("j", positive=True, integer=True)  # D − k > 0 for the two-level spectra
    m = sp.Symbol("m", real=True)
    s = sp.Symbol("s", positive=True)
    res = {}
    # extremal spectrum for the k-th upper bound: k copies of hi, D-k copies of lo
    hi = m + s * sp.sqrt(j / k)
    lo = m - s * sp.sqrt(k / j)
    Dk = k + j
    res["kth_extremal_mean"] = is_zero((k * hi + j * lo) / Dk - m)
    res["kth_extremal_var"] = is_zero((k * hi**2 + j * lo**2) / Dk - m**2 - s**2)
    # the CS step: S²/k + S²/(D−k) = S² D/(k(D−k))
    S = sp.Symbol("S")
    res["cauchy_schwarz_step"] = is_zero(S**2 / k + S**2 / (D - k) - S**2 * D / (k * (D - k)))
    # kth lower from kth upper of -A at index D-k+1
    kth_lower = m - s * sp.sqrt((k - 1) / (D - k + 1))
    mirrored = -((-m) + s * sp.sqrt((D - (D - k + 1)) / (D - k + 1)))
    res["kth_lower_by_mirror"] = is_zero(kth_lower - mirrored)
    # λ_max upper bound: the quadratic's roots are m ± s√(D−1)
    lam = sp.Symbol("lam", real=True)
    roots = sp.solve(sp.Eq(lam**2 + (D * m - lam) ** 2 / (D - 1), D * (m**2 + s**2)), lam)
    res["lmax_upper_roots"] = (
        len(roots) == 2
        and {sp.simplify(rt - m - s * sp.sqrt(D - 1)) == 0 or sp.simplify(rt - m + s * sp.sqrt(D - 1)) == 0
             for rt in roots} == {True}
    )
    # λ_max lower bound: the extremal spectrum (D−1 copies of m + s/√(D−1), one of m − s√(D−1))
    top = m + s / sp.sqrt(D - 1)
    bot = m - s * sp.sqrt(D - 1)
    res["lmax_lower_extremal_mean"] = is_zero(((D - 1) * top + bot) / D - m)
    res["lmax_lower_extremal_var"] = is_zero(sp.simplify(((D - 1) * top**2 + bot**2) / D - m**2 - s**2))
    # the expansion identity Σ(x1 − xi)(xi − xD) = −D x1 xD − Σ xi² given Σ xi = 0, for each D ≤ max_D
    ok = True
    for d in range(2, max_D + 1):
        xs = sp.symbols(f"x1:{d + 1}", real=True)
        xs_c = list(xs[:-1]) + [-sum(xs[:-1])]  # impose Σ x = 0
        lhs = sum((xs_c[0] - xi) * (xi - xs_c[-1]) for xi in xs_c)
        rhs = -d * xs_c[0] * xs_c[-1] - sum(xi**2 for xi in xs_c)
        ok &= is_zero(lhs - rhs)
    res["lmax_lower_expansion_identity"] = ok
    # D = 2: all four bounds are equalities (s/√1 = s√1)
    res["D2_all_equal"] = is_zero((s / sp.sqrt(D - 1) - s * sp.sqrt(D - 1)).subs(D, 2))
    return res


# --------------------------------------------------------------------------------------------
# Code generation: each block kernel, a polynomial in G with coefficients built from unit tables at
# i and at j, becomes a sum of matrix products  (v^e * F_i) @ F_j.T  scaled by G^d.

_TABLE_NAMES = {P_I[0]: ("i", 0), P_I[1]: ("i", 1), P_I[2]: ("i", 2),
                P_J[0]: ("j", 0), P_J[1]: ("j", 1), P_J[2]: ("j", 2)}


def _split_monomial(mono: sp.Expr, name_i: str = "Ti", name_j: str = "Tj"):
    """A monomial c·v^e·Π(i-tables)·Π(j-tables) as (c, i-factor code with v^e, j-factor code)."""
    coeff, factors = mono.as_coeff_mul()
    fi, fj, vpow = [], [], 0
    for f in factors:
        base, e = f.as_base_exp()
        if base == V:
            vpow += int(e)
            continue
        side, order = _TABLE_NAMES[base]
        term = f"{name_i if side == 'i' else name_j}[{order}]" + (f"**{int(e)}" if e != 1 else "")
        (fi if side == "i" else fj).append(term)
    if vpow:
        fi.append("v" if vpow == 1 else f"v**{vpow}")
    return sp.nsimplify(coeff), fi, fj


def _side_code(names: list[str], ones_like: str) -> str:
    return " * ".join(names) if names else f"({ones_like} * 0 + 1)"


def _monomial_code(mono: sp.Expr, diag: bool) -> str:
    c, fi, fj = _split_monomial(mono, "Ti", "Ti" if diag else "Tj")
    if diag:  # i = j: a row sum over units of one table
        code = f"({_side_code(fi + fj, 'Ti[0]')}).sum(axis=1)"
    else:
        code = f"({_side_code(fi, 'Ti[0]')}) @ ({_side_code(fj, 'Tj[0]')}).T"
    return code if c == 1 else f"{c} * {code}"


def _kernel_code(expr: sp.Expr, diag: bool) -> str:
    poly = sp.Poly(expr, G)
    terms = []
    for (d,), coeff in sorted(poly.terms()):
        monos = sp.Add.make_args(sp.expand(coeff))
        body = " + ".join(_monomial_code(mn, diag) for mn in monos)
        g = "" if d == 0 else ("Gm * " if d == 1 else f"Gm**{d} * ")
        terms.append(f"{g}({body})")
    return " + ".join(terms) if terms else "0"


def _factor_code(expr: sp.Expr) -> str:
    """κ = Σ_p G^p ∘ (L_p R_pᵀ), one (p, L, R) per monomial, L from the i-tables (and v), R from j."""
    out = []
    for (d,), coeff in sorted(sp.Poly(expr, G).terms()):
        for mono in sp.Add.make_args(sp.expand(coeff)):
            c, fi, fj = _split_monomial(mono)
            left = _side_code(fi, "Ti[0]")
            out.append(f"({d}, {left if c == 1 else f'{c} * {left}'}, {_side_code(fj, 'Tj[0]')})")
    return "[" + ", ".join(out) + "]"


def artifacts() -> list[Artifact]:
    kb_bias, kb_nobias, info = unit_kernels_size_free(3)
    if not all(info["identical"].values()):
        raise ArithmeticError("block kernels depend on M: the block-structure argument fails")
    if kb_bias != kb_nobias:
        raise ArithmeticError("block kernels differ with/without bias in the unit block")
    kc = output_bias_kernels()
    lines = [HEADER.format(source="proofs/ws/core.py"),
             '"""Block kernels of the CE Hessian of an M-N-1 net, as derived by SymPy.',
             "",
             "Ti, Tj: tuples (P0, P1, P2) of unit tables phi^(r)(a_ik), shape (rows, N); v: (N,);",
             "Gm: block of augmented Gram entries x~_i . x~_j (pair kernels) or squared norms (diag kernels).",
             "The output bias c adds the constants in OUTPUT_BIAS. Works on float64 and on object",
             "arrays of mpmath numbers alike.",
             '"""', "",
             f"OUTPUT_BIAS = {{{', '.join(f'{k!r}: {int(kc[k])}' for k in KERNELS)}}}", ""]
    doc = {
        "gg": "g_i . g_j (unit blocks only)",
        "gKg": "g_i^T K_j g_i (unit blocks only)",
        "KK": "tr(K_i K_j) (unit blocks only)",
        "g2": "|g_i|^2 (unit blocks only), one value per row",
        "trK": "tr K_i, one value per row",
    }
    for name in KERNELS:
        diag = name in ("g2", "trK")
        args = "Ti, v, Gm" if diag else "Ti, Tj, v, Gm"
        lines += [f"def {name}({args}):", f'    """{doc[name]}: {sp.sstr(kb_bias[name])}"""',
                  f"    return {_kernel_code(kb_bias[name], diag)}", "", ""]
        if not diag:
            lines += [f"def {name}_factors(Ti, Tj, v):",
                      f'    """{name} = sum over (p, L, R) of G**p * (L @ R.T); L rows follow Ti, R rows Tj."""',
                      f"    return {_factor_code(kb_bias[name])}", "", ""]
    code = "\n".join(lines).rstrip() + "\n"
    tex = latex_doc("block kernels of the cross-entropy Hessian (proofs/ws/core.py)", [
        (f"kernel {name}", sp.Eq(sp.Symbol(r"\kappa_{\mathrm{" + name + "}}"), kb_bias[name])) for name in KERNELS
    ] + [
        ("trace", r"\operatorname{tr}H=\frac1n\sum_i\Big(q_i\big(\textstyle\sum_k\kappa_{g2}+[c]\big)"
                  r"+r_i\sum_k\kappa_{trK}\Big)"),
        ("trace of square", r"\operatorname{tr}H^2=\frac1{n^2}\sum_{i,j}\Big(q_iq_j\big(\textstyle\sum_k"
                            r"\kappa_{gg}+[c]\big)^2+2q_ir_j\sum_k\kappa_{gKg}+r_ir_j\sum_k\kappa_{KK}\Big)"),
    ])
    return [Artifact("numerics/_derived/ws.py", code), Artifact("proofs/latex/ws.tex", tex)]
