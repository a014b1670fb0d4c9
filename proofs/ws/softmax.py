r"""ws.softmax (SPEC §1, beyond): tr H and tr H² of the softmax cross-entropy Hessian of an M–N–C net,
derived from the loss.

Definitions. z(x) = V φ(Wx + b) + c ∈ R^C, L = (1/n) Σ_i ℓ(z_i, y_i), ℓ = CE(y, softmax(z)) =
−z_y + log Σ_a e^{z_a}, θ = (vec W, b, vec V row-major, c), D = N(M+1) + C(N+1); without biases (no b,
no c) D = N(M+C).

Steps, each checked by exact simplification to 0:

1. ``derive_softmax_ce``: from the CE formula, ∇_z ℓ = p − e_y =: r and ∇²_z ℓ = diag(p) − ppᵀ =: Q
   (C = 2, 3, 4, every label). By the chain rule H = (1/n) Σ_i (J_iᵀ Q_i J_i + Σ_a r_ia K_ia),
   J_i = ∂z_i/∂θ (C × D), K_ia = ∇²_θ z_ia. With R_i = Σ_a r_ia K_ia (the residual Hessian) and the C × C
   logit Gram G_ij = J_i J_jᵀ:
   tr H = (1/n) Σ_i ⟨Q_i, G_ii⟩ + tr R_i,
   tr H² = (1/n²) Σ_ij tr(Q_i G_ij Q_j G_ijᵀ) + 2⟨Q_i, J_i R_j J_iᵀ⟩ + tr(R_i R_j).
2. ``derive_softmax_unit_kernels``: θ splits into one block (w̃_k, u_k = V[:, k]) per hidden unit plus
   the output bias c. SymPy differentiates one block z_a = u_a φ(w̃·x̃) and solves for the C × C block
   kernels G_ij, J_i R_j J_iᵀ, tr(R_i R_j) (and their diagonal forms) as polynomials in x̃_i·x̃_j, the
   same for M = 1, 2, 3 (the block argument of the binary case, now with vector outer weights).
3. ``tensor_form``: each block kernel is fitted, by solving a linear system, in a basis of C × C
   tensors (δ_ab, u_a u_b, u_a r_b, r_a u_b, r_a r_b, and those times r·u), with coefficients that are
   products of per-unit φ-tables: this is what ``numerics.ws.softmax`` contracts with Q.
4. ``contraction_identities``: with S = I − 1pᵀ and Σ p = 1, Q = diag(p) S = Sᵀ diag(p) S, so
   uᵀQu = Σ_c p_c (Su)_c², QX = diag(p) SX and tr(Q_i A Q_j Aᵀ) = Σ_cd p_ic p_jd (S_i A S_jᵀ)_cd²;
   (S u)_c = Σ_a p_a (u_c − u_a) has no cancellation when p saturates or u has a common component.
5. ``check_softmax_against_hessian``: for every (M, N, C, n) up to the stated sizes, ±bias, with a
   generic φ and a generic C-ary loss ℓ (named derivatives, Q_i a generic symmetric matrix), the kernel
   form minus the trace (and squared Frobenius norm) of ``sympy.hessian`` of the full loss is 0.

C = 2 is not the binary model: z_1 − z_0 is its logit with v = V_1 − V_0, but θ has both rows of V and
both entries of c, so H_softmax = Aᵀ H_binary A with A = ∂(W, b, v, c)/∂θ.
"""

from __future__ import annotations

import functools
import itertools
import time
from dataclasses import dataclass

import sympy as sp

from proofs.common import HEADER, Artifact, is_zero, latex_doc
from proofs.ws.definitions import DERIVS, P_I, P_J, G, phi
from proofs.ws.kernels import solve_in_gram

SOFTMAX_KERNELS = ("gg", "JRJ", "RR", "g2", "trR")  # pair: G_ij, J_i R_j J_iᵀ, tr R_iR_j; diag: G_ii, tr R_i


# ------------------------------------------------------------------------------------------- step 1
def derive_softmax_ce(max_C: int = 4) -> dict:
    """∇ℓ = p − e_y and ∇²ℓ = diag(p) − ppᵀ from ℓ = −z_y + log Σ e^{z_a}, for C = 2..max_C, every y."""
    out = {}
    for C in range(2, max_C + 1):
        z = sp.symbols(f"z0:{C}", real=True)
        Z = sum(sp.exp(t) for t in z)
        p = [sp.exp(t) / Z for t in z]
        ok_r = ok_q = True
        for y in range(C):
            ell = -z[y] + sp.log(Z)
            for a in range(C):
                ok_r &= is_zero(sp.diff(ell, z[a]) - (p[a] - (1 if a == y else 0)))
                for b in range(a, C):
                    ok_q &= is_zero(sp.diff(ell, z[a], z[b]) - ((p[a] if a == b else 0) - p[a] * p[b]))
        out[f"C{C}_gradient_is_p_minus_e_y"] = ok_r
        out[f"C{C}_hessian_is_diag_p_minus_ppT"] = ok_q
    return out


# ------------------------------------------------------------------------------------------- step 2
def _classes(C: int):
    u = sp.symbols(f"u0:{C}", real=True)  # the unit's column of V
    ri = sp.symbols(f"ri0:{C}", real=True)  # r_i
    rj = sp.symbols(f"rj0:{C}", real=True)  # r_j
    return u, ri, rj


def _softmax_unit_block(M: int, C: int, bias: bool):
    w = sp.symbols(f"w1:{M + 1}", real=True)
    bb = sp.Symbol("b", real=True)
    xi = sp.symbols(f"xi1:{M + 1}", real=True)
    xj = sp.symbols(f"xj1:{M + 1}", real=True)
    u, ri, rj = _classes(C)
    params = [*w, *([bb] if bias else []), *u]
    ai = sum(wk * xk for wk, xk in zip(w, xi, strict=True)) + (bb if bias else 0)
    aj = sum(wk * xk for wk, xk in zip(w, xj, strict=True)) + (bb if bias else 0)
    sub = {f(ai): s for f, s in zip(DERIVS, P_I, strict=True)}
    sub.update({f(aj): s for f, s in zip(DERIVS, P_J, strict=True)})
    zi = [ua * phi(ai) for ua in u]
    zj = [ua * phi(aj) for ua in u]
    gram = sum(a * b for a, b in zip(xi, xj, strict=True)) + (1 if bias else 0)
    gram_ii = sum(a * a for a in xi) + (1 if bias else 0)
    return params, (xi, xj), zi, zj, sub, gram, gram_ii, (u, ri, rj)


@functools.cache
def derive_softmax_unit_kernels(M: int, C: int, bias: bool) -> dict[str, sp.Matrix | sp.Expr]:
    """The block kernels of one hidden unit with C outputs: C × C matrices (gg, JRJ, g2) and scalars (RR, trR),
    entries polynomials in G with coefficients in the φ-tables, u and r."""
    params, (xi, xj), zi, zj, sub, gram, gram_ii, (u, ri, rj) = _softmax_unit_block(M, C, bias)
    Ji = sp.Matrix([[sp.diff(za, t) for t in params] for za in zi]).xreplace(sub)
    Jj = sp.Matrix([[sp.diff(za, t) for t in params] for za in zj]).xreplace(sub)
    Ri = sum((ri[a] * sp.hessian(zi[a], params) for a in range(C)), sp.zeros(len(params))).xreplace(sub)
    Rj = sum((rj[a] * sp.hessian(zj[a], params) for a in range(C)), sp.zeros(len(params))).xreplace(sub)
    xs = (*xi, *xj)
    i_only = {s: t for s, t in zip(P_J, P_I, strict=True)}
    gg = (Ji * Jj.T).applyfunc(lambda e: solve_in_gram(e, gram, xs))
    jrj = (Ji * Rj * Ji.T).applyfunc(lambda e: solve_in_gram(e, gram, xs))
    g2 = (Ji * Ji.T).applyfunc(lambda e: solve_in_gram(e, gram_ii, xi).xreplace(i_only))
    return {"gg": gg, "JRJ": jrj, "RR": solve_in_gram((Ri * Rj).trace(), gram, xs),
            "g2": g2, "trR": solve_in_gram(Ri.trace(), gram_ii, xi).xreplace(i_only)}


def softmax_output_bias_kernels(C: int) -> dict:
    """The output bias c: z_a = c_a is linear, so J = I (C × C), every K is 0."""
    return {"gg": sp.eye(C), "JRJ": sp.zeros(C), "RR": sp.Integer(0), "g2": sp.eye(C), "trR": sp.Integer(0)}


# ------------------------------------------------------------------------------------------- step 3
def _basis(C: int, kernel: str):
    """Candidate C × C tensors (or scalars) for each kernel; the fit decides which appear."""
    u, ri, rj = _classes(C)
    ru_i = sum(a * b for a, b in zip(ri, u, strict=True))
    ru_j = sum(a * b for a, b in zip(rj, u, strict=True))
    rr = sum(a * b for a, b in zip(ri, rj, strict=True))
    d = lambda a, b: 1 if a == b else 0
    if kernel in ("gg", "g2"):
        r = rj if kernel == "gg" else ri
        return {"I": lambda a, b: d(a, b), "uu": lambda a, b: u[a] * u[b], "ur": lambda a, b: u[a] * r[b],
                "ru": lambda a, b: r[a] * u[b]}
    if kernel == "JRJ":
        return {"I": lambda a, b: d(a, b), "uu": lambda a, b: u[a] * u[b],
                "uu_ru": lambda a, b: u[a] * u[b] * ru_j, "ur_ru": lambda a, b: u[a] * rj[b] + rj[a] * u[b],
                "rr": lambda a, b: rj[a] * rj[b], "I_ru": lambda a, b: d(a, b) * ru_j}
    if kernel == "RR":
        return {"1": sp.Integer(1), "ru_ru": ru_i * ru_j, "rr": rr, "ru_i": ru_i, "ru_j": ru_j}
    if kernel == "trR":
        return {"1": sp.Integer(1), "ru": ru_i}
    raise KeyError(kernel)


def tensor_form(kernels: dict, C: int, degree: int = 2) -> dict[str, dict[str, sp.Expr]]:
    """Solve kernel = Σ_basis Σ_d coef_{basis,d} G^d basis for coefficients free of u, r and x̃.

    Returns {kernel: {basis: Σ_d coef G^d}} (zero coefficients dropped); ArithmeticError if no solution
    exists (the basis does not span the kernel) or it is not unique (the basis is degenerate at this C).
    """
    u, ri, rj = _classes(C)
    gens = (*u, *ri, *rj, G)
    out = {}
    for name in SOFTMAX_KERNELS:
        basis = _basis(C, name)
        unknowns = {(bn, dd): sp.Symbol(f"k_{bn}_{dd}") for bn in basis for dd in range(degree + 1)}
        eqs = []
        K = kernels[name]
        if isinstance(K, sp.MatrixBase):
            for a, b in itertools.product(range(C), range(C)):
                ans = sum(s * G**dd * basis[bn](a, b) for (bn, dd), s in unknowns.items())
                eqs += sp.Poly(sp.expand(K[a, b] - ans), *gens).coeffs()
        else:
            ans = sum(s * G**dd * basis[bn] for (bn, dd), s in unknowns.items())
            eqs += sp.Poly(sp.expand(K - ans), *gens).coeffs()
        syms = list(unknowns.values())
        sol = sp.linsolve(list(dict.fromkeys(eqs)), syms)  # a linear system in the unknowns
        if not isinstance(sol, sp.FiniteSet) or len(sol) != 1:
            raise ArithmeticError(f"softmax kernel {name}: no fit in the tensor basis at C = {C}")
        (vals,) = sol
        if any(v.free_symbols & set(syms) for v in vals):
            raise ArithmeticError(f"softmax kernel {name}: the tensor basis is degenerate at C = {C} (no unique fit)")
        sol = dict(zip(syms, vals, strict=True))
        fit = {}
        for bn in basis:
            e = sp.expand(sum(sol[unknowns[bn, dd]] * G**dd for dd in range(degree + 1)))
            if e != 0:
                fit[bn] = e
        out[name] = fit
    return out


def softmax_kernels_size_free(max_M: int = 3, Cs=(2, 3), biases=(True, False)) -> tuple[dict, dict]:
    """The tensor form (bias and no bias give the same unit blocks), shown identical for M = 1..max_M and
    every C in ``Cs``; C = 1 is excluded since u_a u_b and δ_ab coincide there."""
    ref = None
    agree = {}
    for C in Cs:
        for M in range(1, max_M + 1):
            for bias in biases:
                tf = tensor_form(derive_softmax_unit_kernels(M, C, bias), C)
                if ref is None:
                    ref = tf
                agree[f"C{C}_M{M}_{'bias' if bias else 'nobias'}"] = tf == ref
    return ref, {"M_checked": list(range(1, max_M + 1)), "C_checked": list(Cs), "identical": agree}


# ------------------------------------------------------------------------------------------- step 4
def contraction_identities(max_C: int = 4) -> dict:
    """The identities ``numerics.ws.softmax`` contracts with, for C = 2..max_C, with p_{C−1} = 1 − Σ_{a<C−1} p_a."""
    out = {}
    for C in range(2, max_C + 1):
        pf = sp.symbols(f"p0:{C - 1}", positive=True)
        p = sp.Matrix([*pf, 1 - sum(pf)])
        pj_f = sp.symbols(f"q0:{C - 1}", positive=True)
        pj = sp.Matrix([*pj_f, 1 - sum(pj_f)])
        Q = sp.diag(*p) - p * p.T
        Qj = sp.diag(*pj) - pj * pj.T
        one = sp.ones(C, 1)
        S = sp.eye(C) - one * p.T
        Sj = sp.eye(C) - one * pj.T
        u = sp.Matrix(sp.symbols(f"u0:{C}"))
        A = sp.Matrix(C, C, lambda a, b: sp.Symbol(f"A{a}{b}"))
        X = sp.Matrix(C, 2, lambda a, b: sp.Symbol(f"X{a}{b}"))
        Su_diff = sp.Matrix([sum(p[a] * (u[c] - u[a]) for a in range(C)) for c in range(C)])
        M = S * A * Sj.T
        out[f"C{C}_Q_is_DS"] = all(is_zero(e) for e in Q - sp.diag(*p) * S)
        out[f"C{C}_Q_is_StDS"] = all(is_zero(e) for e in Q - S.T * sp.diag(*p) * S)
        out[f"C{C}_Su_difference_form"] = all(is_zero(e) for e in S * u - Su_diff)
        out[f"C{C}_uQu"] = is_zero((u.T * Q * u)[0, 0] - sum(p[c] * (S * u)[c] ** 2 for c in range(C)))
        out[f"C{C}_QX"] = all(is_zero(e) for e in Q * X - sp.diag(*p) * S * X)
        out[f"C{C}_trQAQA"] = is_zero((Q * A * Qj * A.T).trace()
                                      - sum(p[c] * pj[d] * M[c, d] ** 2 for c in range(C) for d in range(C)))
        out[f"C{C}_Q_null_1"] = all(is_zero(e) for e in Q * one)
    return out


# ------------------------------------------------------------------------------------------- step 5
@functools.cache
def _generic_loss(C: int):
    """A generic loss ℓ(z_0, …, z_{C−1}, y) whose derivatives are named functions d1_a and d2_ab = d2_ba."""
    d2 = {(a, b): type(f"d2ell_{a}_{b}", (sp.Function,), {}) for a in range(C) for b in range(a, C)}

    def make_d1(a):
        def fdiff(self, argindex=1):
            if not 1 <= argindex <= C:
                raise sp.ArgumentIndexError(self, argindex)
            return d2[tuple(sorted((a, argindex - 1)))](*self.args)
        return type(f"dell_{a}", (sp.Function,), {"fdiff": fdiff})

    d1 = [make_d1(a) for a in range(C)]

    def fdiff(self, argindex=1):
        if not 1 <= argindex <= C:
            raise sp.ArgumentIndexError(self, argindex)
        return d1[argindex - 1](*self.args)

    ell = type(f"ellC{C}", (sp.Function,), {"fdiff": fdiff})
    return ell, d1, d2


@dataclass(frozen=True)
class SoftmaxHessianCheck:
    M: int
    N: int
    C: int
    n: int
    bias: bool
    D: int
    trace_zero: bool
    trace_sq_zero: bool
    seconds: float


def softmax_dim(N: int, M: int, C: int, bias: bool) -> int:
    return N * (M + 1) + C * (N + 1) if bias else N * (M + C)


def check_softmax_against_hessian(M: int, N: int, C: int, n: int, bias: bool = True) -> SoftmaxHessianCheck:
    """Kernel form (from the derived unit kernels) vs the trace and ‖·‖_F² of sympy.hessian of the full loss."""
    t0 = time.perf_counter()
    ell, d1, d2 = _generic_loss(C)
    W = sp.Matrix(N, M, lambda k, m: sp.Symbol(f"W{k}_{m}", real=True))
    b = sp.symbols(f"b0:{N}", real=True) if bias else (0,) * N
    V = sp.Matrix(C, N, lambda a, k: sp.Symbol(f"V{a}_{k}", real=True))
    c = sp.symbols(f"c0:{C}", real=True) if bias else (0,) * C
    X = sp.Matrix(n, M, lambda i, m: sp.Symbol(f"x{i}_{m}", real=True))
    y = sp.symbols(f"y0:{n}", real=True)
    theta = [*W] + (list(b) if bias else []) + [*V] + (list(c) if bias else [])  # vec V row-major
    pre = [[sum(W[k, m] * X[i, m] for m in range(M)) + b[k] for k in range(N)] for i in range(n)]
    z = [[sum(V[a, k] * phi(pre[i][k]) for k in range(N)) + c[a] for a in range(C)] for i in range(n)]
    L = sum(ell(*z[i], y[i]) for i in range(n)) / n
    H = sp.hessian(L, theta)
    P = [[[sp.Symbol(f"P{r}_{i}_{k}") for k in range(N)] for i in range(n)] for r in range(3)]
    r = [sp.symbols(f"r{i}_0:{C}") for i in range(n)]
    Q = [sp.Matrix(C, C, lambda a, bb, i=i: sp.Symbol(f"Q{i}_{min(a, bb)}{max(a, bb)}")) for i in range(n)]
    outer = {}
    for i in range(n):
        args = (*z[i], y[i])
        for a in range(C):
            outer[d1[a](*args)] = r[i][a]
            for bb in range(a, C):
                outer[d2[a, bb](*args)] = Q[i][a, bb]
    tables = {f(pre[i][k]): P[o][i][k] for i in range(n) for k in range(N) for o, f in enumerate(DERIVS)}
    Hs = H.xreplace(outer).xreplace(tables)
    tr_def = Hs.trace()
    tr2_def = sum(e**2 for e in Hs)

    kb = derive_softmax_unit_kernels(M, C, bias)
    kc = softmax_output_bias_kernels(C) if bias else {k: 0 * v for k, v in softmax_output_bias_kernels(C).items()}
    gram = [[sum(X[i, m] * X[j, m] for m in range(M)) + (1 if bias else 0) for j in range(n)] for i in range(n)]
    u_s, ri_s, rj_s = _classes(C)

    def unit(name, i, j, k):
        s = dict(zip(P_I, (P[0][i][k], P[1][i][k], P[2][i][k]), strict=True))
        s.update(zip(P_J, (P[0][j][k], P[1][j][k], P[2][j][k]), strict=True))
        s.update(zip(u_s, [V[a, k] for a in range(C)], strict=True))
        s.update(zip(ri_s, r[i], strict=True))
        s.update(zip(rj_s, r[j], strict=True))
        s[G] = gram[i][j]
        K = kb[name]
        return K.xreplace(s) if isinstance(K, sp.MatrixBase) else K.xreplace(s)

    def pair(name, i, j):
        return sum((unit(name, i, j, k) for k in range(N)), kc[name])

    frob = lambda A, B: sum(A[a, bb] * B[a, bb] for a in range(C) for bb in range(C))
    tr_form = sum(frob(Q[i], pair("g2", i, i)) + pair("trR", i, i) for i in range(n)) / n
    tr2_form = 0
    for i, j in itertools.product(range(n), range(n)):
        Gij = pair("gg", i, j)
        tr2_form += (Q[i] * Gij * Q[j] * Gij.T).trace() + 2 * frob(Q[i], pair("JRJ", i, j)) + pair("RR", i, j)
    tr2_form = tr2_form / n**2
    return SoftmaxHessianCheck(M, N, C, n, bias, len(theta), is_zero(tr_form - tr_def),
                               is_zero(tr2_form - tr2_def), time.perf_counter() - t0)


def softmax_size_checks(max_M: int = 2, max_N: int = 2, Cs=(2, 3), max_n: int = 2):
    for M, N, C, n, bias in itertools.product(range(1, max_M + 1), range(1, max_N + 1), Cs, range(1, max_n + 1),
                                              (True, False)):
        yield check_softmax_against_hessian(M, N, C, n, bias)


# ------------------------------------------------------------------------------------------- codegen
_TABLES = {P_I[0]: ("i", 0), P_I[1]: ("i", 1), P_I[2]: ("i", 2), P_J[0]: ("j", 0), P_J[1]: ("j", 1),
           P_J[2]: ("j", 2)}


def _factor(mono: sp.Expr, diag: bool) -> str:
    """c·G^d·Π(i-tables)·Π(j-tables) as the code tuple (d, L, R) (or (d, L) for a diagonal kernel)."""
    d = sp.degree(mono, G)
    coeff, factors = (mono / G**d).as_coeff_mul()
    side = {"i": [], "j": []}
    for f in factors:
        base, e = f.as_base_exp()
        s, order = _TABLES[base]
        side[s].append(f"T{s}[{order}]" + (f"**{int(e)}" if e != 1 else ""))
    code = lambda names, t: " * ".join(names) if names else f"(T{t}[0] * 0 + 1)"
    left = code(side["i"], "i")
    left = left if coeff == 1 else f"{sp.nsimplify(coeff)} * {left}"
    if diag:
        if side["j"]:
            raise ArithmeticError("a diagonal kernel has a j-table")
        return f"({d}, {left})"
    return f"({d}, {left}, {code(side['j'], 'j')})"


def softmax_artifacts() -> list[Artifact]:
    tf, info = softmax_kernels_size_free(3)
    if not all(info["identical"].values()):
        raise ArithmeticError("softmax block kernels depend on M, C or the bias: the block argument fails")
    C = 3
    kc = tensor_form(softmax_output_bias_kernels(C), C)
    bias_consts = {k: {bn: int(e) for bn, e in v.items()} for k, v in kc.items()}
    lines = [HEADER.format(source="proofs/ws/softmax.py"),
             '"""Block kernels of the softmax cross-entropy Hessian of an M-N-C net, as derived by SymPy.',
             "",
             "Each kernel is a sum over C x C tensors (the basis names of proofs.ws.softmax.tensor_form: I = delta_ab,",
             "uu = u_a u_b, uu_ru = u_a u_b (r_j . u), ur_ru = u_a r_jb + r_ja u_b, ru_ru = (r_i . u)(r_j . u),",
             "rr = r_i . r_j, ru = r_i . u; u = V[:, k]) with coefficients G**d * L_i * R_j per hidden unit k:",
             "a factor (d, L, R) has L from the i-tables Ti = (phi, phi', phi'') (rows x N), R from Tj.",
             "The output bias c adds the constants in OUTPUT_BIAS (per basis tensor, G**0).",
             '"""', "",
             f"OUTPUT_BIAS = {bias_consts!r}",
             ""]
    for name in SOFTMAX_KERNELS:
        diag = name in ("g2", "trR")
        args = "Ti" if diag else "Ti, Tj"
        body = []
        for bn, e in tf[name].items():
            monos = sp.Add.make_args(sp.expand(e))
            body.append(f"{bn!r}: [" + ", ".join(_factor(mo, diag) for mo in monos) + "]")
        doc = "; ".join(f"{bn}: {sp.sstr(e)}" for bn, e in tf[name].items())
        lines += [f"def {name}_factors({args}):", f'    """{doc}"""', "    return {" + ", ".join(body) + "}", "", ""]
    code = "\n".join(lines).rstrip() + "\n"
    def tex_term(bn, e):
        return r"\left(" + sp.latex(e) + r"\right)\,[\mathrm{" + bn.replace("_", r"\_") + "}]"

    items = [(f"softmax kernel {name}", r"\kappa_{\mathrm{" + name + "}}="
              + " + ".join(tex_term(bn, e) for bn, e in tf[name].items())) for name in SOFTMAX_KERNELS]
    items += [("trace", r"\operatorname{tr}H=\frac1n\sum_i\langle Q_i,G_{ii}\rangle+\operatorname{tr}R_i"),
              ("trace of square", r"\operatorname{tr}H^2=\frac1{n^2}\sum_{i,j}"
                                  r"\operatorname{tr}(Q_iG_{ij}Q_jG_{ij}^\top)"
                                  r"+2\langle Q_i,J_iR_jJ_i^\top\rangle+\operatorname{tr}(R_iR_j)")]
    tex = latex_doc("block kernels of the softmax cross-entropy Hessian (proofs/ws/softmax.py)", items)
    return [Artifact("numerics/_derived/ws_softmax.py", code), Artifact("proofs/latex/ws_softmax.tex", tex)]
