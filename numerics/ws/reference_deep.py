r"""Dense references for deep MLPs (ws.deep): only checks and tests use these (they build the D × D Hessian).

* :func:`deep_hessian_torch`: ``torch.func.hessian`` of the mean loss written from the definition with torch's own
  φ and ``binary_cross_entropy_with_logits`` / ``cross_entropy`` in float64 (:func:`deep_hvp_operator`: its
  Hessian-vector products, matrix-free, for λ_max by Lanczos in ``inspect`` and the bench).
* :func:`deep_hessian_mpmath_ad`: second-order forward AD of the definition in mpmath (confirms falsifier hits).
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


def deep_torch_loss_fn(layers, X, y, activation="tanh", *, loss=None):
    """(mean CE loss as a torch function of the flat float64 θ, θ₀), written from the definition with torch's own
    φ and ``binary_cross_entropy_with_logits`` / ``cross_entropy``."""
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

    return f, torch.as_tensor(deep_theta(list(zip(Ws, bs, strict=True))), dtype=torch.float64)


def deep_hessian_torch(layers, X, y, activation="tanh", *, loss=None) -> np.ndarray:
    """The dense D × D float64 Hessian of the mean CE loss by ``torch.func.hessian`` (reference only)."""
    import torch

    f, th = deep_torch_loss_fn(layers, X, y, activation, loss=loss)
    return torch.func.hessian(f)(th).detach().numpy()


def deep_hvp_operator(layers, X, y, activation="tanh", *, loss=None):
    """(hvp(V) for a (D, k) float64 tensor of directions, D): forward-over-reverse, batched by vmap (matrix-free)."""
    from torch.func import grad, jvp, vmap

    f, th = deep_torch_loss_fn(layers, X, y, activation, loss=loss)
    g = grad(f)
    return vmap(lambda vec: jvp(g, (th,), (vec,))[1], in_dims=1, out_dims=1), th.numel()


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


class _Jet:
    """A scalar with its gradient and Hessian in θ (object arrays of mpmath numbers): second-order forward AD."""

    __slots__ = ("v", "g", "H")

    def __init__(self, v, g, H):
        self.v, self.g, self.H = v, g, H

    def __add__(self, o):
        if isinstance(o, _Jet):
            return _Jet(self.v + o.v, self.g + o.g, self.H + o.H)
        return _Jet(self.v + o, self.g, self.H)

    __radd__ = __add__

    def __mul__(self, o):
        if isinstance(o, _Jet):
            gg = np.outer(self.g, o.g)
            return _Jet(self.v * o.v, self.v * o.g + o.v * self.g, self.v * o.H + o.v * self.H + gg + gg.T)
        return _Jet(self.v * o, self.g * o, self.H * o)

    __rmul__ = __mul__

    def apply(self, f0, f1, f2):
        """f(self) from f(v), f′(v), f″(v)."""
        return _Jet(f0, f1 * self.g, f1 * self.H + f2 * np.outer(self.g, self.g))


def deep_hessian_mpmath_ad(layers, X, y, activation="tanh", *, loss=None, dps: int = 60) -> mpmath.matrix:
    """The dense Hessian at ``dps`` digits by second-order forward AD of the definition (value, gradient, Hessian
    carried through every product and φ; φ′, φ″ of the named activations at full precision; the loss as
    softplus(−z) + (1 − y)z, resp. logsumexp(z) − z_y, with their derivatives σ, σσ, resp. p, diag p − ppᵀ, written
    without cancellation). Cost O(D²) per scalar operation: small nets only; far cheaper than
    :func:`deep_hessian_mpmath` (no symbolic Hessian), so it confirms falsifier hits."""
    act = get_activation(activation)
    Ws, bs, X, y = _arrays(layers, X, y)
    C = Ws[-1].shape[0]
    loss = loss or ("binary" if C == 1 else "softmax")
    D = sum(W.size + (0 if b is None else b.size) for W, b in zip(Ws, bs, strict=True))
    with mpmath.workdps(dps + 10):
        zero = mpmath.mpf(0)
        zg = np.full(D, zero, dtype=object)
        zH = np.full((D, D), zero, dtype=object)

        def var(k, val):
            g = zg.copy()
            g[k] = mpmath.mpf(1)
            return _Jet(mpmath.mpf(float(val)), g, zH)

        params, k = [], 0
        for W, b in zip(Ws, bs, strict=True):
            Wj = [[var(k + i * W.shape[1] + j, W[i, j]) for j in range(W.shape[1])] for i in range(W.shape[0])]
            k += W.size
            bj = None
            if b is not None:
                bj = [var(k + i, b[i]) for i in range(b.size)]
                k += b.size
            params.append((Wj, bj))
        total = zH.copy()
        for i in range(X.shape[0]):
            h = [mpmath.mpf(float(t)) for t in X[i]]
            for li, (Wj, bj) in enumerate(params):
                z = []
                for a in range(len(Wj)):
                    s = bj[a] if bj is not None else _Jet(zero, zg, zH)
                    for c in range(len(h)):
                        s = s + Wj[a][c] * h[c]
                    z.append(s)
                if li < len(params) - 1:
                    h = [t.apply(*act.mp(t.v)) for t in z]
            if loss == "binary":
                zt = z[0]
                s_neg, s_pos = 1 / (1 + mpmath.exp(zt.v)), 1 / (1 + mpmath.exp(-zt.v))   # σ(−z), σ(z)
                sp_neg = -zt.v + mpmath.log1p(mpmath.exp(zt.v)) if zt.v < 0 else mpmath.log1p(mpmath.exp(-zt.v))
                ell = zt.apply(sp_neg, -s_neg, s_neg * s_pos) + zt * (1 - int(y[i]))
            else:
                top = max(t.v for t in z)
                e = [mpmath.exp(t.v - top) for t in z]
                p = [t / sum(e) for t in e]
                g = sum((p[c] * z[c].g for c in range(C)), zg)
                Hs = sum((p[c] * z[c].H for c in range(C)), zH)
                for c in range(C):
                    for d in range(C):
                        q = (p[c] if c == d else 0) - p[c] * p[d]
                        Hs = Hs + q * np.outer(z[c].g, z[d].g)
                ell_H = Hs - z[int(y[i])].H
                ell = _Jet(zero, g, ell_H)
            total = total + ell.H
        out = mpmath.matrix(D, D)
        for r in range(D):
            for c in range(D):
                out[r, c] = total[r, c] / X.shape[0]
        return out
