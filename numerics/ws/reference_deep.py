r"""Dense references for deep MLPs (ws.deep): only checks and tests use these (they build the D × D Hessian).

* :func:`deep_hessian_torch`: ``torch.func.hessian`` of the mean loss written from the definition with torch's own
  φ and ``binary_cross_entropy_with_logits`` / ``cross_entropy`` in float64.
* :func:`deep_hessian_mpmath`: ``sympy.hessian`` of each sample's loss as a SymPy expression in the parameter symbols
  (concrete φ, concrete BCE or log-sum-exp), lambdified to mpmath and summed over samples at ``dps`` digits.

Neither shares code with :mod:`numerics.ws.deep` but the parameter order (each layer's vec W row-major, then b).
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from numerics.ws.activations import T, get_activation


def _arrays(layers, X, y):
    Ws = [np.asarray(W, dtype=np.float64) for W, _ in layers]
    bs = [None if b is None else np.asarray(b, dtype=np.float64).ravel() for _, b in layers]
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
    for k in range(1, len(Ws)):
        if Ws[k].shape[1] != Ws[k - 1].shape[0]:
            raise ValueError(f"reference: W{k + 1} {Ws[k].shape} does not follow W{k} {Ws[k - 1].shape}")
    if X.ndim != 2 or X.shape[1] != Ws[0].shape[1] or y.shape != (X.shape[0],):
        raise ValueError(f"reference: X {X.shape}, y {y.shape} do not fit W1 {Ws[0].shape}")
    return Ws, bs, X, y


def deep_theta(layers) -> np.ndarray:
    """θ in the SPEC's order: vec W_1 (row-major), b_1, vec W_2, b_2, …"""
    parts = []
    for W, b in layers:
        parts.append(np.asarray(W, float).ravel())
        if b is not None:
            parts.append(np.asarray(b, float).ravel())
    return np.concatenate(parts)


def deep_hessian_torch(layers, X, y, activation="tanh", *, loss=None) -> np.ndarray:
    """The dense D × D float64 Hessian of the mean CE loss by ``torch.func.hessian`` (reference only)."""
    import torch

    act = get_activation(activation)
    phi = act.torch()
    Ws, bs, X, y = _arrays(layers, X, y)
    C = Ws[-1].shape[0]
    loss = loss or ("binary" if C == 1 else "softmax")
    Xt = torch.as_tensor(X, dtype=torch.float64)
    shapes = [(W.shape, b is not None) for W, b in zip(Ws, bs, strict=True)]

    def f(theta):
        h, o = Xt, 0
        for k, (shp, has_b) in enumerate(shapes):
            W = theta[o:o + shp[0] * shp[1]].reshape(shp)
            o += shp[0] * shp[1]
            h = h @ W.T
            if has_b:
                h = h + theta[o:o + shp[0]]
                o += shp[0]
            if k < len(shapes) - 1:
                h = phi(h)
        if loss == "binary":
            return torch.nn.functional.binary_cross_entropy_with_logits(
                h[:, 0], torch.as_tensor(y, dtype=torch.float64), reduction="mean")
        return torch.nn.functional.cross_entropy(h, torch.as_tensor(y, dtype=torch.long), reduction="mean")

    th = torch.as_tensor(deep_theta(list(zip(Ws, bs, strict=True))), dtype=torch.float64)
    return torch.func.hessian(f)(th).detach().numpy()


def deep_hessian_mpmath(layers, X, y, activation="tanh", *, loss=None, dps: int = 50) -> mpmath.matrix:
    """The dense Hessian at ``dps`` digits from ``sympy.hessian`` of each sample's loss (tiny nets only)."""
    act = get_activation(activation)
    Ws, bs, X, y = _arrays(layers, X, y)
    C = Ws[-1].shape[0]
    loss = loss or ("binary" if C == 1 else "softmax")
    syms, Wsym, bsym = [], [], []
    for k, (W, b) in enumerate(zip(Ws, bs, strict=True)):
        Ws_k = sp.Matrix(W.shape[0], W.shape[1], lambda i, j: sp.Symbol(f"w{k}_{i}_{j}"))  # noqa: B023
        syms += list(Ws_k)                                   # row-major
        Wsym.append(Ws_k)
        if b is not None:
            b_k = sp.Matrix(W.shape[0], 1, lambda i, _j: sp.Symbol(f"b{k}_{i}"))  # noqa: B023
            syms += list(b_k)
            bsym.append(b_k)
        else:
            bsym.append(None)
    xs = sp.symbols(f"x0:{X.shape[1]}")
    phi = sp.Lambda(T, act.expr)
    h = sp.Matrix(xs)
    for k in range(len(Ws)):
        h = Wsym[k] * h + (bsym[k] if bsym[k] is not None else sp.zeros(Ws[k].shape[0], 1))
        if k < len(Ws) - 1:
            h = h.applyfunc(phi)
    lab = sp.Symbol("label")
    if loss == "binary":
        z = h[0]
        ell = sp.log(1 + sp.exp(-z)) + (1 - lab) * z           # BCE with logits, y ∈ {0, 1}
        exprs = {None: ell}
    else:
        lse = sp.log(sum(sp.exp(h[c]) for c in range(C)))
        exprs = {c: lse - h[c] for c in range(C)}
    theta = deep_theta(list(zip(Ws, bs, strict=True)))
    fns = {}
    for key, e in exprs.items():
        Hs = sp.hessian(e, syms)
        fns[key] = sp.lambdify((syms, xs, lab), Hs, modules="mpmath")
    D = len(syms)
    with mpmath.workdps(dps):
        th = [mpmath.mpf(float(t)) for t in theta]
        tot = mpmath.zeros(D, D)
        for i in range(X.shape[0]):
            xi = [mpmath.mpf(float(t)) for t in X[i]]
            key = None if loss == "binary" else int(y[i])
            tot += mpmath.matrix(fns[key](th, xi, mpmath.mpf(int(y[i]))))
        return tot / X.shape[0]
