r"""ws.deep (SPEC §1, beyond): the closed form of :mod:`numerics.ws.deep` equals ``sympy.hessian`` of the loss.

The Hessian of the loss at θ₀ depends on each activation and on each sample's loss only through their 2-jets at
the point where they are evaluated. So the check replaces, for every hidden unit k of layer l and every sample i,
φ by the quadratic a + b(t − t₀) + c(t − t₀)²/2 around t₀ = z_{l,k}(θ₀, x_i), with a, b, c *independent symbols*,
and each sample's loss by ℓ_i(z) = r_i·(z − z₀) + ½(z − z₀)ᵀQ_i(z − z₀) with symbols r_i and a symmetric Q_i. The
weights θ₀ and inputs x_i are symbols too. ``sympy.hessian`` of the resulting polynomial loss, at θ = θ₀, is then
the Hessian of *every* net with C² activations and *every* C² loss, written in its jets; the closed form evaluated
on the same symbols (:class:`numerics.ws.deep.DeepTables` with SymPy entries, φ = a, φ′ = b, φ″ = c) must agree
with it as a polynomial: tr H and tr H² are expanded and their differences must be 0 exactly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import sympy as sp

from numerics.ws.deep import DeepTables, pair_sums


@dataclass(frozen=True)
class DeepHessianCheck:
    widths: tuple
    biases: tuple
    n: int
    D: int
    trace_zero: bool
    trace_sq_zero: bool
    seconds: float


def _obj(rows):
    a = np.empty((len(rows), len(rows[0]) if rows else 0), dtype=object)
    for i, row in enumerate(rows):
        for j, e in enumerate(row):
            a[i, j] = e
    return a


def check_deep_against_hessian(widths, biases, n: int = 2) -> DeepHessianCheck:
    """Closed form vs sympy.hessian for an MLP with the given widths (M, N_1, …, N_L, C) and per-layer biases."""
    t0 = time.perf_counter()
    nl = len(widths) - 1
    L, C = nl - 1, widths[-1]
    W0 = [sp.Matrix(widths[k + 1], widths[k], lambda i, j, k=k: sp.Symbol(f"W{k}_{i}_{j}")) for k in range(nl)]
    b0 = [sp.Matrix(widths[k + 1], 1, lambda i, _j, k=k: sp.Symbol(f"B{k}_{i}")) if biases[k] else None
          for k in range(nl)]
    # the variables the Hessian is taken in: θ = θ₀ + ε, evaluated at ε = 0
    eps, Wv, bv = [], [], []
    for k in range(nl):
        E = sp.Matrix(widths[k + 1], widths[k], lambda i, j, k=k: sp.Symbol(f"e{k}_{i}_{j}"))
        eps += list(E)
        Wv.append(W0[k] + E)
        if biases[k]:
            e = sp.Matrix(widths[k + 1], 1, lambda i, _j, k=k: sp.Symbol(f"eb{k}_{i}"))
            eps += list(e)
            bv.append(b0[k] + e)
        else:
            bv.append(None)
    zero_eps = dict.fromkeys(eps, 0)
    X = [[sp.Symbol(f"x{i}_{m}") for m in range(widths[0])] for i in range(n)]
    jets = [[[[sp.Symbol(f"{nm}{li}_{i}_{k}") for k in range(widths[li + 1])] for i in range(n)]
             for li in range(L)] for nm in ("a", "p", "q")]           # φ, φ′, φ″ of layer li+1, sample i, unit k
    rs = [[sp.Symbol(f"r{i}_{c}") for c in range(C)] for i in range(n)]
    Qs = [sp.Matrix(C, C, lambda a, b, i=i: sp.Symbol(f"Q{i}_{min(a, b)}{max(a, b)}")) for i in range(n)]
    loss = 0
    H0, U0 = [[] for _ in range(nl)], [[] for _ in range(nl)]
    for i in range(n):
        h = sp.Matrix(X[i])
        for li in range(nl):
            hv = [sp.expand(t.xreplace(zero_eps)) for t in h]
            H0[li].append(hv)
            U0[li].append(hv + ([sp.Integer(1)] if biases[li] else []))
            z = Wv[li] * h + (bv[li] if bv[li] is not None else sp.zeros(widths[li + 1], 1))
            if li == L:
                break
            z0 = [sp.expand(t.xreplace(zero_eps)) for t in z]
            h = sp.Matrix([jets[0][li][i][k] + jets[1][li][i][k] * (z[k] - z0[k])
                           + jets[2][li][i][k] * (z[k] - z0[k]) ** 2 / 2 for k in range(widths[li + 1])])
        dz = sp.Matrix([z[c] - z[c].xreplace(zero_eps) for c in range(C)])
        loss += (sp.Matrix([rs[i]]) * dz)[0] + (dz.T * Qs[i] * dz)[0] / 2
    loss = loss / n
    Hdef = sp.hessian(loss, eps).xreplace(zero_eps)
    tr_def = sp.expand(Hdef.trace())
    tr2_def = sp.expand(sum(e ** 2 for e in Hdef))

    Ws = [_obj(W0[k].tolist()) for k in range(nl)]
    tb = DeepTables(Ws, [_obj(H0[li]) for li in range(nl)], [_obj(U0[li]) for li in range(nl)],
                    [_obj(jets[1][li]) for li in range(L)], [_obj(jets[2][li]) for li in range(L)],
                    np.array([_obj(Qs[i].tolist()) for i in range(n)], dtype=object), _obj(rs), sp.Integer(0))
    tr, tr2, _ = pair_sums(tb, block=max(1, n - 1))       # a ragged last block on purpose when n > 2
    D = len(eps)
    return DeepHessianCheck(tuple(widths), tuple(bool(b) for b in biases), n, D,
                            sp.expand(tr - tr_def) == 0, sp.expand(tr2 - tr2_def) == 0, time.perf_counter() - t0)


SIZES = (  # (widths, biases, n)
    ((1, 1, 1, 1), (True, True, True), 2),
    ((2, 1, 2, 1), (True, False, True), 2),
    ((1, 2, 1, 2), (True, True, True), 2),
    ((1, 1, 1, 1, 1), (False, True, True, True), 2),
    ((1, 1, 2, 1), (True, True, True), 3),
)


def derive_deep(quick: bool = False) -> list[DeepHessianCheck]:
    """The closed form against sympy.hessian at every size in :data:`SIZES` (the first one only when quick)."""
    return [check_deep_against_hessian(*s) for s in (SIZES[:1] if quick else SIZES)]
