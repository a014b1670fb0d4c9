"""Dense references for the M–N–C softmax net (SPEC §1, ws.softmax): only checks and tests use these.

* :func:`softmax_hessian_torch`: ``torch.func.hessian`` of ``F.cross_entropy`` in float64, from the definition.
* :func:`softmax_hessian_mpmath`: SymPy derivatives of the concrete net, the softmax from its definition, summed
  in mpmath at ``dps`` digits.
* :func:`softmax_hessian_arb`: the same in arb balls, with the guard bits doubled until the radii are small
  (:func:`numerics.ws.reference.arb_dense`).

Like :mod:`numerics.ws.reference`, they share nothing with the closed form of :mod:`numerics.ws.softmax` but the
parameter order θ = (vec W row-major, b, vec V row-major, c).
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import sympy as sp

from numerics.ws.activations import get_activation
from numerics.ws.reference import arb_dense, arb_dense_moments


def _softmax_arrays(W, b, V, c, X, y, bias):
    """float64 arrays for the M–N–C softmax net (this reference's own minimal checks)."""
    W, V, X = (np.asarray(a, dtype=np.float64) for a in (W, V, X))
    y = np.asarray(y).astype(np.int64)
    N, M = W.shape
    C = V.shape[0]
    if V.shape != (C, N) or X.ndim != 2 or X.shape[1] != M or y.shape != (X.shape[0],):
        raise ValueError(f"reference: shapes W {W.shape}, V {V.shape}, X {X.shape}, y {y.shape} do not fit")
    if bias:
        b, c = np.asarray(b, dtype=np.float64).reshape(N), np.asarray(c, dtype=np.float64).reshape(C)
    else:
        b = c = None
    return W, b, V, c, X, y


def _softmax_theta(W, b, V, c, bias):
    """θ = (vec W row-major, b, vec V row-major, c) (SPEC §1, softmax)."""
    return np.concatenate([W.ravel(), V.ravel()] if not bias else [W.ravel(), b, V.ravel(), c])


def softmax_torch_loss_fn(W, b, V, c, X, y, activation="tanh", *, bias=True):
    """(mean softmax cross-entropy as a torch function of the flat float64 θ, θ0); the loss is
    ``torch.nn.functional.cross_entropy`` of the logits, φ torch's own function."""
    import torch

    act = get_activation(activation)
    W, b, V, c, X, y = _softmax_arrays(W, b, V, c, X, y, bias)
    N, M = W.shape
    C = V.shape[0]
    phi = act.torch()
    Xt = torch.as_tensor(X, dtype=torch.float64)
    yt = torch.as_tensor(y, dtype=torch.long)

    def loss(theta):
        Wt = theta[: N * M].reshape(N, M)
        o = N * M
        if bias:
            bt = theta[o: o + N]
            Vt = theta[o + N: o + N + C * N].reshape(C, N)
            ct = theta[o + N + C * N:]
            z = phi(Xt @ Wt.T + bt) @ Vt.T + ct
        else:
            Vt = theta[o: o + C * N].reshape(C, N)
            z = phi(Xt @ Wt.T) @ Vt.T
        return torch.nn.functional.cross_entropy(z, yt, reduction="mean")

    theta0 = torch.as_tensor(_softmax_theta(W, b, V, c, bias), dtype=torch.float64)
    return loss, theta0


def softmax_hessian_torch(W, b, V, c, X, y, activation="tanh", *, bias=True) -> np.ndarray:
    """The dense D×D float64 Hessian of the mean softmax CE by ``torch.func.hessian`` (reference only)."""
    import torch

    loss, theta0 = softmax_torch_loss_fn(W, b, V, c, X, y, activation, bias=bias)
    return torch.func.hessian(loss)(theta0).detach().numpy()


def softmax_hvp_operator(W, b, V, c, X, y, activation="tanh", *, bias=True):
    """(hvp(V) for a (D, k) float64 tensor of directions, D) for the softmax loss (forward-over-reverse)."""
    from torch.func import grad, jvp, vmap

    loss, theta0 = softmax_torch_loss_fn(W, b, V, c, X, y, activation, bias=bias)
    g = grad(loss)
    return vmap(lambda vec: jvp(g, (theta0,), (vec,))[1], in_dims=1, out_dims=1), theta0.numel()


def _softmax_sample_net(M: int, N: int, C: int, bias: bool):
    """(θ, x, z, P, tables) for one sample of the M–N–C net with a generic φ: ``tables(expr)`` replaces
    φ^{(r)}(a_k) by the symbols ``P[3k + r]``."""
    from proofs.ws import DERIVS

    W = sp.Matrix(N, M, lambda k, m: sp.Symbol(f"W{k}_{m}", real=True))
    b = sp.symbols(f"b0:{N}", real=True) if bias else (0,) * N
    V = sp.Matrix(C, N, lambda a, k: sp.Symbol(f"V{a}_{k}", real=True))
    c = sp.symbols(f"c0:{C}", real=True) if bias else (0,) * C
    x = sp.symbols(f"x0:{M}", real=True)
    theta = [*W] + (list(b) if bias else []) + [*V] + (list(c) if bias else [])
    pre = [sum(W[k, m] * x[m] for m in range(M)) + b[k] for k in range(N)]
    z = [sum(V[a, k] * DERIVS[0](pre[k]) for k in range(N)) + c[a] for a in range(C)]
    Pt = sp.symbols(f"P0:{3 * N}")

    def tables(expr):
        for k in range(N):
            expr = expr.xreplace({f(pre[k]): Pt[3 * k + o] for o, f in enumerate(DERIVS)})
        return expr

    return theta, x, z, Pt, tables


@functools.cache
def _softmax_sample_jk(M: int, N: int, C: int, bias: bool):
    """(J = ∂z/∂θ, [∇²z_a]) of one sample for a generic φ, in the table symbols of :func:`_softmax_sample_net`:
    derived once for the mpmath and the arb references."""
    theta, x, z, Pt, tables = _softmax_sample_net(M, N, C, bias)
    J = tables(sp.Matrix([[sp.diff(za, t) for t in theta] for za in z]))
    return J, [tables(sp.hessian(za, theta)) for za in z]


@functools.cache
def _softmax_sample_derivatives(M: int, N: int, C: int, bias: bool, concrete: bool):
    """One sample's softmax CE Hessian in θ from SymPy, lambdified to mpmath.

    ``concrete=False``: the Jacobian J = ∂z/∂θ and the logit Hessians ∇²z_a of z(θ) for a generic φ (its values
    φ^{(r)}(a_k) are arguments); the caller forms Jᵀ Q J + Σ_a r_a ∇²z_a with Q, r of softmax at ``dps`` digits.
    ``concrete=True``: sympy.hessian of −e·z + log Σ_a exp(z_a) written out (slow to build; tests only).
    """
    theta, x, z, Pt, tables = _softmax_sample_net(M, N, C, bias)
    if concrete:
        e = sp.symbols(f"e0:{C}", real=True)
        zmax = sp.Symbol("zmax", real=True)  # a shift the loss does not depend on: keeps exp in range
        loss = -sum(ea * za for ea, za in zip(e, z, strict=True)) + zmax + sp.log(sum(sp.exp(za - zmax) for za in z))
        H = tables(sp.hessian(loss, theta))
        return sp.lambdify([theta, x, Pt, e, zmax], H, modules="mpmath"), len(theta)
    J, K = _softmax_sample_jk(M, N, C, bias)
    return (sp.lambdify([theta, x, Pt], J, modules="mpmath"),
            [sp.lambdify([theta, x, Pt], Ka, modules="mpmath") for Ka in K]), len(theta)


def softmax_hessian_mpmath(W, b, V, c, X, y, activation="tanh", *, bias=True, dps=50,
                           concrete: bool = False) -> mpmath.matrix:
    """The dense softmax-CE Hessian at ``dps`` digits from SymPy derivatives of the net (reference only).

    The softmax p = e^{z − max z}/Σ e^{z − max z}, Q = diag(p) − ppᵀ and r = p − e_y are evaluated here from
    their definition, with guard digits for the logits' spread (a saturated softmax needs them: 1 − p_max can be
    e^{−300}); ``concrete=True`` differentiates the written-out loss instead (no guard digits: tests only).
    """
    act = get_activation(activation)
    W, b, V, c, X, y = _softmax_arrays(W, b, V, c, X, y, bias)
    N, M = W.shape
    C = V.shape[0]
    fns, D = _softmax_sample_derivatives(M, N, C, bias, concrete)
    if not concrete:
        # 1 − p_max ≥ e^{−spread}/C, spread = max z − min z: carry that many more digits so that diag(p) − ppᵀ
        # and p − e_y keep ``dps`` digits when the softmax saturates
        with mpmath.workdps(dps):
            spread = 0
            for xi in X:
                hid = [act.mp(mpmath.fsum(mpmath.mpf(W[k, m]) * mpmath.mpf(xi[m]) for m in range(M))
                              + (mpmath.mpf(b[k]) if bias else 0))[0] for k in range(N)]
                z = [mpmath.fsum(mpmath.mpf(V[a, k]) * hid[k] for k in range(N)) + (mpmath.mpf(c[a]) if bias else 0)
                     for a in range(C)]
                spread = max(spread, max(z) - min(z))
        dps = dps + int(spread / mpmath.log(10)) + 10
    with mpmath.workdps(dps):
        theta = [mpmath.mpf(t) for t in _softmax_theta(W, b, V, c, bias)]
        Wm = [[mpmath.mpf(w) for w in row] for row in W]
        bm = [mpmath.mpf(t) for t in b] if bias else [0] * N
        Vm = [[mpmath.mpf(t) for t in row] for row in V]
        cm = [mpmath.mpf(t) for t in c] if bias else [0] * C
        H = mpmath.zeros(D, D)
        for xi, yi in zip(X, y, strict=True):
            xm = [mpmath.mpf(t) for t in xi]
            Pv = []
            for k in range(N):
                Pv.extend(act.mp(mpmath.fsum(Wm[k][m] * xm[m] for m in range(M)) + bm[k]))
            z = [mpmath.fsum(Vm[a][k] * Pv[3 * k] for k in range(N)) + cm[a] for a in range(C)]
            onehot = [mpmath.mpf(1 if a == yi else 0) for a in range(C)]
            if concrete:
                H += mpmath.matrix(fns(theta, xm, Pv, onehot, max(z)))
                continue
            ez = [mpmath.exp(za - max(z)) for za in z]
            p = [t / mpmath.fsum(ez) for t in ez]
            Q = mpmath.matrix([[(p[a] if a == bb else 0) - p[a] * p[bb] for bb in range(C)] for a in range(C)])
            J = mpmath.matrix(fns[0](theta, xm, Pv))
            H += J.T * Q * J
            for a in range(C):
                H += (p[a] - onehot[a]) * mpmath.matrix(fns[1][a](theta, xm, Pv))
        H /= len(y)
    return H


@functools.cache
def _softmax_sample_derivatives_numpy(M: int, N: int, C: int, bias: bool):
    """J = ∂z/∂θ and the upper triangles of ∇²z_a of :func:`_softmax_sample_derivatives` (generic φ) as one flat
    list, lambdified with plain arithmetic (``modules="numpy"``, no mpmath constants) so that it evaluates on arb."""
    theta, x, z, Pt, tables = _softmax_sample_net(M, N, C, bias)
    D = len(theta)
    J, K = _softmax_sample_jk(M, N, C, bias)
    flat = [J[a, t] for a in range(C) for t in range(D)] + [Ka[i, j] for Ka in K for i in range(D)
                                                            for j in range(i, D)]
    return sp.lambdify([theta, x, Pt], flat, modules="numpy", cse=True), D


def softmax_hessian_arb(W, b, V, c, X, y, activation="tanh", *, bias=True, dps=50, guard_bits: int = 64,
                        max_doublings: int = 6) -> dict:
    """The dense softmax-CE Hessian as a D×D object array of arb balls (reference only; the falsifier's proved
    confirmations of ws.softmax/moments and ws.softmax/bound), in the format of :func:`ce_hessian_arb`.

    Per sample, Jᵀ Q J + Σ_a r_a ∇²z_a with J, ∇²z_a from the SymPy derivatives of the net
    (:func:`_softmax_sample_derivatives_numpy`, generic φ) on arb enclosures of the unit tables, and the softmax
    from its definition in arb: p_a = 1/Σ_b e^{z_b − z_a}, Q_aa = p_a Σ_{b≠a} p_b and r_y = −Σ_{b≠y} p_b (no
    cancellation when the softmax saturates). Any cancellation left widens the balls, and the guard bits are
    doubled until each radius is at most 2^-(bits for ``dps``) of ‖H‖_F / D.
    """
    from flint import arb

    from numerics.ws import reference_arb as RA

    act = get_activation(activation)
    W, b, V, c, X, y = _softmax_arrays(W, b, V, c, X, y, bias)
    N, M = W.shape
    C, n = V.shape[0], X.shape[0]
    fn, D = _softmax_sample_derivatives_numpy(M, N, C, bias)
    upper = [(i, j) for i in range(D) for j in range(i, D)]
    per = len(upper)  # entries of one ∇²z_a in the flat list

    def entries():
        P, Xa, rigorous = RA.unit_tables(W, b if bias else None, X, act, dps)
        tables = [np.asarray(t) for t in P]
        Va = RA.object_array(V)
        ca = RA.object_array(c) if bias else None
        theta = [arb(float(t)) for t in _softmax_theta(W, b, V, c, bias)]
        H = np.full((D, D), arb(0), dtype=object)
        for i in range(n):
            hid = [tables[0][i, k] for k in range(N)]
            z = [sum((Va[a, k] * hid[k] for k in range(N)), arb(0)) + (ca[a] if bias else 0) for a in range(C)]
            p = [1 / sum(((z[bb] - z[a]).exp() for bb in range(C)), arb(0)) for a in range(C)]
            rest = [sum((p[bb] for bb in range(C) if bb != a), arb(0)) for a in range(C)]  # 1 − p_a
            r = [-rest[a] if a == y[i] else p[a] for a in range(C)]
            Pv = [tables[o][i, k] for k in range(N) for o in range(3)]
            vals = fn(theta, [Xa[i, m] for m in range(M)], Pv)
            J = np.array(vals[:C * D], dtype=object).reshape(C, D)
            Kflat = vals[C * D:]
            Q = [[p[a] * rest[a] if a == bb else -p[a] * p[bb] for bb in range(C)] for a in range(C)]
            QJ = [[sum((Q[a][bb] * J[bb, t] for bb in range(C)), arb(0)) for t in range(D)] for a in range(C)]
            for u, (s_, t) in enumerate(upper):
                h = sum((J[a, s_] * QJ[a][t] for a in range(C)), arb(0))
                h += sum((r[a] * Kflat[a * per + u] for a in range(C)), arb(0))
                H[s_, t] = H[s_, t] + h
        for s_, t in upper:
            H[s_, t] = H[t, s_] = H[s_, t] / n
        return H, rigorous

    return arb_dense(entries, dps, guard_bits, max_doublings)


def softmax_hessian_moments_arb(W, b, V, c, X, y, activation="tanh", *, bias=True, dps=50, **kw) -> dict:
    """(tr H, ‖H‖_F², Σ|H_ii|) of :func:`softmax_hessian_arb` as arb balls (the format of
    :func:`ce_hessian_moments_arb`)."""
    return arb_dense_moments(softmax_hessian_arb(W, b, V, c, X, y, activation, bias=bias, dps=dps, **kw))
