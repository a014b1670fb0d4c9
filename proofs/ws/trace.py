"""ws.trace and ws.trace_sq: the kernel form of tr H and tr H² against ``sympy.hessian`` of the full
loss, for every size M ≤ 2, N ≤ 3, n ≤ 2, with and without biases (step 4)."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import sympy as sp

from proofs.common import is_zero
from proofs.ws.definitions import DERIVS, KERNELS, P_I, P_J, G, V, d2ell, dell, ell, phi
from proofs.ws.kernels import derive_unit_kernels, output_bias_kernels


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
