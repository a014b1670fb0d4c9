"""Dense references for small nets: only checks and tests use these (they build the D×D Hessian).

* :func:`ce_hessian_torch`: ``torch.func.hessian`` of the mean BCE loss in float64, written from the
  definition (the loss is ``binary_cross_entropy_with_logits``; φ is torch's own function), so it
  shares nothing with the closed form but the parameter order θ = (vec W row-major, b, v, c).
* :func:`ce_hessian_mpmath`: ``sympy.hessian`` of the per-sample BCE loss of the concrete network
  (concrete φ, concrete BCE), lambdified to mpmath and summed over samples at ``dps`` digits.
* :func:`hvp_operator`: Hessian-vector products with ``torch.func`` (forward-over-reverse), for the
  matrix-free estimators in ``numerics.ws.estimators``.

The softmax references live in :mod:`numerics.ws.reference_softmax`, the arb engine in
:mod:`numerics.ws.reference_arb`.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import sympy as sp
from scipy.special import expit

from numerics.ws.activations import T, get_activation


def _arrays(W, b, v, c, X, y, bias):
    """float64 arrays with the shapes the SPEC's net needs (this reference's own, minimal checks: it shares
    no code with the closed form it judges)."""
    W, v, X, y = (np.asarray(a, dtype=np.float64) for a in (W, v, X, y))
    N, M = W.shape
    if v.shape != (N,) or X.ndim != 2 or X.shape[1] != M or y.shape != (X.shape[0],):
        raise ValueError(f"reference: shapes W {W.shape}, v {v.shape}, X {X.shape}, y {y.shape} do not fit")
    if bias:
        b, c = np.asarray(b, dtype=np.float64).reshape(N), float(c)
    else:
        b = c = None
    return W, b, v, c, X, y


def _dim(N: int, M: int, bias: bool) -> int:
    """D from the SPEC's parameter order θ = (vec W, b, v, c): N·M + N + N + 1 with biases, N·M + N without."""
    return N * M + (N if bias else 0) + N + (1 if bias else 0)


def _theta(W, b, v, c, bias):
    parts = [W.ravel(), v] if not bias else [W.ravel(), b, v, np.atleast_1d(c)]
    return np.concatenate(parts)


def torch_loss_fn(W, b, v, c, X, y, activation="tanh", *, bias=True):
    """(loss(θ) as a torch function of the flat float64 parameter vector, θ0)."""
    import torch

    act = get_activation(activation)
    W, b, v, c, X, y = _arrays(W, b, v, c, X, y, bias)
    N, M = W.shape
    phi = act.torch()
    Xt = torch.as_tensor(X, dtype=torch.float64)
    yt = torch.as_tensor(y, dtype=torch.float64)

    def loss(theta):
        Wt = theta[: N * M].reshape(N, M)
        o = N * M
        if bias:
            bt, vt, ct = theta[o: o + N], theta[o + N: o + 2 * N], theta[o + 2 * N]
            z = phi(Xt @ Wt.T + bt) @ vt + ct
        else:
            vt = theta[o: o + N]
            z = phi(Xt @ Wt.T) @ vt
        return torch.nn.functional.binary_cross_entropy_with_logits(z, yt, reduction="mean")

    theta0 = torch.as_tensor(_theta(W, b, v, c, bias), dtype=torch.float64)
    return loss, theta0


def ce_hessian_torch(W, b, v, c, X, y, activation="tanh", *, bias=True) -> np.ndarray:
    """The dense D×D float64 Hessian by ``torch.func.hessian`` (reference only)."""
    import torch

    loss, theta0 = torch_loss_fn(W, b, v, c, X, y, activation, bias=bias)
    H = torch.func.hessian(loss)(theta0)
    return H.detach().numpy()


def hvp_operator(W, b, v, c, X, y, activation="tanh", *, bias=True):
    """(hvp(V) for a (D, k) float64 tensor of directions, D). Forward-over-reverse, batched by vmap."""
    from torch.func import grad, jvp, vmap

    loss, theta0 = torch_loss_fn(W, b, v, c, X, y, activation, bias=bias)
    g = grad(loss)

    def hv(vec):
        return jvp(g, (theta0,), (vec,))[1]

    batched = vmap(hv, in_dims=1, out_dims=1)
    return batched, theta0.numel()


@functools.cache
def _symbolic_sample_hessian(M: int, N: int, bias: bool, act_name: str, act_expr: sp.Expr):
    """sympy.hessian of one sample's BCE loss with the concrete φ, lambdified to mpmath.

    Fully concrete (φ and BCE both written out) and hence slow to build for D > 10: used by the
    tests at small sizes to cover each named activation end to end.
    """
    theta, x, y, z = _sample_net(M, N, bias, lambda a: act_expr.xreplace({T: a}))
    # BCE(y, sigmoid(z)), written from the definition
    loss = -y * sp.log(1 / (1 + sp.exp(-z))) - (1 - y) * sp.log(1 - 1 / (1 + sp.exp(-z)))
    H = sp.hessian(loss, theta)
    return sp.lambdify([theta, x, y], H, modules="mpmath"), len(theta)


def _sample_net(M, N, bias, phi_of):
    W = sp.Matrix(N, M, lambda k, m: sp.Symbol(f"W{k}_{m}", real=True))
    b = sp.symbols(f"b0:{N}", real=True) if bias else (0,) * N
    v = sp.symbols(f"v0:{N}", real=True)
    c = sp.Symbol("c", real=True) if bias else 0
    x = sp.symbols(f"x0:{M}", real=True)
    y = sp.Symbol("y", real=True)
    theta = [*W] + (list(b) if bias else []) + list(v) + ([c] if bias else [])
    pre = [sum(W[k, m] * x[m] for m in range(M)) + b[k] for k in range(N)]
    z = sum(v[k] * phi_of(pre[k]) for k in range(N)) + c
    return theta, x, y, z


@functools.cache
def _generic_sample_hessian_expr(M: int, N: int, bias: bool):
    """sympy.hessian of ℓ(z(θ; x)) for a generic φ and ℓ: (H, θ, x, P, (r, q)).

    The symbols after (θ, x) stand for the values φ^{(r)}(a_k) (``P[3k + r]``) and ℓ′(z), ℓ″(z); the caller
    supplies them from the SymPy derivatives of the concrete φ and from BCE (ℓ′ = p − y, ℓ″ = p(1 − p), derived
    in ``proofs.ws.derive_bce``). Fast to build at any size.
    """
    from proofs.ws import DERIVS, d2ell, dell, ell

    theta, x, y, z = _sample_net(M, N, bias, lambda a: DERIVS[0](a))
    H = sp.hessian(ell(z, y), theta)
    P = sp.symbols(f"P0:{3 * N}")
    rq = sp.symbols("r q")
    sub = {d2ell(z, y): rq[1], dell(z, y): rq[0]}
    H = H.xreplace(sub)
    W_rows = [theta[k * M:(k + 1) * M] for k in range(N)]
    bvec = theta[N * M:N * M + N] if bias else [0] * N
    for k in range(N):
        a = sum(W_rows[k][m] * x[m] for m in range(M)) + bvec[k]
        H = H.xreplace({f(a): P[3 * k + o] for o, f in enumerate(DERIVS)})
    return H, theta, x, P, rq


@functools.cache
def _generic_sample_hessian(M: int, N: int, bias: bool):
    """:func:`_generic_sample_hessian_expr` lambdified to mpmath."""
    H, theta, x, P, rq = _generic_sample_hessian_expr(M, N, bias)
    return sp.lambdify([theta, x, P, rq], H, modules="mpmath"), len(theta)


@functools.cache
def _generic_sample_hessian_numpy(M: int, N: int, bias: bool):
    """:func:`_generic_sample_hessian_expr` lambdified to numpy, entry by entry (its upper triangle), so that
    x, P and (r, q) may be arrays over the samples."""
    H, theta, x, P, rq = _generic_sample_hessian_expr(M, N, bias)
    D = len(theta)
    upper = [(i, j) for i in range(D) for j in range(i, D)]
    fn = sp.lambdify([theta, x, P, rq], [H[i, j] for i, j in upper], modules="numpy", cse=True)
    return fn, D, upper


def ce_hessian_numpy(W, b, v, c, X, y, activation="tanh", *, bias=True) -> np.ndarray:
    """The dense D×D float64 Hessian from the same ``sympy.hessian`` of ℓ(z(θ; x)) as :func:`ce_hessian_mpmath`,
    lambdified to numpy and evaluated on all samples at once (reference only).

    The falsifier's float screen for tiny nets: about 20× cheaper than :func:`ce_hessian_torch` there (whose
    cost is torch.func's per-call dispatch), and, like it, it shares nothing with the closed form but the
    parameter order and the activation's SymPy derivatives. ``tests/test_ws_reference.py`` holds it to
    ``torch.func`` on the falsifier's own strategy.
    """
    act = get_activation(activation)
    W, b, v, c, X, y = _arrays(W, b, v, c, X, y, bias)
    N, M = W.shape
    n = X.shape[0]
    fn, D, upper = _generic_sample_hessian_numpy(M, N, bias)
    a = X @ W.T + (b if bias else 0.0)  # (n, N) pre-activations
    tables = act.float64(a)  # φ, φ′, φ″ on (n, N)
    P = [tables[o][:, k] for k in range(N) for o in range(3)]
    z = tables[0] @ v + (c if bias else 0.0)
    p, q = expit(z), expit(-z)  # σ(z), 1 − σ(z), each to full relative accuracy in the tails
    r = np.where(y == 1.0, -q, p - y)  # ℓ′ = p − y without cancellation when y = 1 and p → 1
    with np.errstate(all="ignore"):
        vals = fn(_theta(W, b, v, c, bias), list(X.T), P, [r, p * q])
    per_sample = np.empty((len(upper), n))
    for k, e in enumerate(vals):
        per_sample[k] = e  # a constant entry (0, say) broadcasts over the samples
    H = np.zeros((D, D))
    H[tuple(np.array(upper).T)] = per_sample.mean(axis=1)
    return H + np.triu(H, 1).T


def ce_hessian_mpmath(W, b, v, c, X, y, activation="tanh", *, bias=True, dps=50,
                      concrete: bool = False) -> mpmath.matrix:
    """The dense Hessian at ``dps`` digits from sympy.hessian of the loss (reference only).

    ``concrete=False`` (default) differentiates ℓ(z(θ)) with a generic φ and ℓ and substitutes the
    concrete values (φ^{(r)} from the activation's SymPy derivatives at ``dps``; ℓ′ = σ(z) − y, with
    −σ(−z) for y = 1, and ℓ″ = σ(z)σ(−z)); the entries are evaluated on all samples at once, on numpy
    object arrays of mpmath numbers (the generated code is arithmetic only), and each entry's sample mean is an
    ``fsum``. ``concrete=True`` differentiates the written-out BCE of the concrete φ, sample by sample.
    """
    act = get_activation(activation)
    W, b, v, c, X, y = _arrays(W, b, v, c, X, y, bias)
    N, M = W.shape
    n = X.shape[0]
    with mpmath.workdps(dps):
        if concrete:
            theta = [mpmath.mpf(t) for t in _theta(W, b, v, c, bias)]
            D = len(theta)
            H = mpmath.zeros(D, D)
            fn, _ = _symbolic_sample_hessian(M, N, bias, act.name, act.expr)
            for xi, yi in zip(X, y, strict=True):
                H += mpmath.matrix(fn(theta, [mpmath.mpf(t) for t in xi], mpmath.mpf(yi)))
            H /= n
        else:
            fn, D, upper = _generic_sample_hessian_numpy(M, N, bias)
            mp = np.vectorize(mpmath.mpf, otypes=[object])
            Xm = mp(X)
            a = Xm @ mp(W).T + (mp(b) if bias else 0)  # (n, N) pre-activations at dps
            T = np.empty((3, n, N), dtype=object)
            for i in range(n):
                for k in range(N):
                    T[:, i, k] = act.mp(a[i, k])
            z = T[0] @ mp(v) + (mpmath.mpf(c) if bias else 0)
            p = np.array([mpmath.sigmoid(t) for t in z], dtype=object)
            pm = np.array([mpmath.sigmoid(-t) for t in z], dtype=object)  # 1 − σ(z) without cancelling
            r = np.array([-pm[i] if y[i] == 1 else p[i] - mpmath.mpf(y[i]) for i in range(n)], dtype=object)
            P = [T[o, :, k] for k in range(N) for o in range(3)]
            vals = fn(np.array([mpmath.mpf(t) for t in _theta(W, b, v, c, bias)], dtype=object), list(Xm.T), P,
                      [r, p * pm])
            H = mpmath.zeros(D, D)
            for (i, j), e in zip(upper, vals, strict=True):
                e = np.asarray(e, dtype=object)
                H[i, j] = H[j, i] = (mpmath.fsum(e) if e.ndim else mpmath.mpf(e) * n) / n
    assert D == _dim(N, M, bias)
    return H


def _arb_dense_entries(W, b, v, c, X, y, act, bias, dps):
    """(upper, entries, D, rigorous): the dense Hessian's upper-triangle entries (i, j) → arb ball at the current
    ``ctx.prec``, from the generated ``sympy.hessian`` entries on object arrays of arb enclosures."""
    from flint import arb

    from numerics.ws import reference_arb as RA

    N, M = W.shape
    n = X.shape[0]
    fn, D, upper = _generic_sample_hessian_numpy(M, N, bias)
    P, Xa, rigorous = RA.unit_tables(W, b if bias else None, X, act, dps)
    va = RA.object_array(v)
    z = [sum((P[0][i, k] * va[k] for k in range(N)), RA.exact_arb(c) if bias else arb(0)) for i in range(n)]
    lg = [RA.logistic(t) for t in z]                        # (σ(z), σ(−z)): p and 1 − p without cancellation
    q = np.array([s * sm for s, sm in lg], dtype=object)
    r = np.array([-sm if y[i] == 1 else s for i, (s, sm) in enumerate(lg)], dtype=object)
    tables = [np.asarray(t) for t in P]
    Pl = [tables[o][:, k] for k in range(N) for o in range(3)]
    theta = np.array([arb(float(t)) for t in _theta(W, b, v, c, bias)], dtype=object)
    vals = fn(theta, list(np.asarray(Xa).T), Pl, [np.asarray(r), np.asarray(q)])
    entries = []
    for e in vals:
        e = np.asarray(e, dtype=object)
        entries.append((sum(e.tolist(), arb(0)) if e.ndim else arb(e) * n) / n)
    return upper, entries, D, rigorous


def _arb_upper_moments(upper_entries):
    """(tr H, ‖H‖_F², Σ|H_ii|) as arb balls at the current ``ctx.prec`` from ((i, j), H_ij) over i ≤ j of a
    symmetric H (each off-diagonal entry counts twice in ‖H‖_F²)."""
    from flint import arb

    tr = tr2 = ad = arb(0)
    for (i, j), h in upper_entries:
        if i == j:
            tr, tr2, ad = tr + h, tr2 + h * h, ad + abs(h)
        else:
            tr2 += 2 * h * h
    return tr, tr2, ad


def ce_hessian_moments_arb(W, b, v, c, X, y, activation="tanh", *, bias=True, dps=50, guard_bits: int = 64,
                           max_doublings: int = 6) -> dict:
    """(tr H, ‖H‖_F², Σ|H_ii|) of the dense Hessian of :func:`ce_hessian_mpmath`'s ``sympy.hessian`` as arb balls
    (reference only; the falsifier's confirmation of ws.bound/moments).

    The same generated entries as the mpmath path, evaluated on numpy object arrays of ``flint.arb`` whose unit
    tables and output terms are arb's enclosures (:mod:`numerics.ws.reference_arb`, from the float64 inputs
    converted exactly), so each ball contains the exact value for a named activation. The evaluation is repeated
    with the guard bits doubled (at most ``max_doublings`` times) until tr H and ‖H‖_F² fix ``dps`` digits:
    unlike a fixed-precision mpmath Hessian, a cancellation deeper than the working precision shows up as a wide
    ball instead of agreeing digits at two precisions (a GELU net with σ(z) − y cancelling to 155 digits gave the
    same wrong tr H at 60 and at 130 digits). Returns ``{"trace", "trace_sq", "abs_diag", "dim", "rigorous",
    "prec"}``.
    """
    from numerics.ws import reference_arb as RA

    act = get_activation(activation)
    W, b, v, c, X, y = _arrays(W, b, v, c, X, y, bias)

    def evaluate():
        upper, entries, D, rigorous = _arb_dense_entries(W, b, v, c, X, y, act, bias, dps)
        tr, tr2, ad = _arb_upper_moments(zip(upper, entries, strict=True))
        return (tr, tr2), (ad, rigorous, D)

    ((tr, tr2), (ad, rigorous, D)), prec = RA.refine(evaluate, dps, guard_bits=guard_bits,
                                                     max_doublings=max_doublings)
    return {"trace": tr, "trace_sq": tr2, "abs_diag": ad, "dim": D, "rigorous": rigorous, "prec": prec}


def ce_hessian_arb(W, b, v, c, X, y, activation="tanh", *, bias=True, dps=50, guard_bits: int = 64,
                   max_doublings: int = 6) -> dict:
    """The dense Hessian as a D×D object array of arb balls (reference only; the falsifier's proved confirmation
    of ws.bound/upper), with every entry's radius at most 2^-(bits for ``dps`` digits) of ‖H‖_F / D.

    The entries of :func:`ce_hessian_moments_arb` (``sympy.hessian`` of ℓ(z(θ; x)) on arb enclosures of the unit
    tables), the guard bits doubled until that accuracy holds (at most ``max_doublings`` times; the last balls are
    returned whatever their width, and a proof built on them simply fails). Returns ``{"H", "frobenius", "dim",
    "rigorous", "prec"}``; ``frobenius`` is a ball containing ‖H‖_F.
    """
    act = get_activation(activation)
    W, b, v, c, X, y = _arrays(W, b, v, c, X, y, bias)

    def entries():
        upper, vals, D, rigorous = _arb_dense_entries(W, b, v, c, X, y, act, bias, dps)
        H = np.empty((D, D), dtype=object)
        for (i, j), h in zip(upper, vals, strict=True):
            H[i, j] = H[j, i] = h
        return H, rigorous

    return arb_dense(entries, dps, guard_bits, max_doublings)


def arb_dense(entries, dps, guard_bits, max_doublings) -> dict:
    """``entries() -> (H, rigorous)`` (a symmetric D×D object array of arb) repeated with the guard bits doubled
    until every radius is at most 2^-(bits for ``dps`` + 4) of ‖H‖_F / D; see :func:`ce_hessian_arb`."""
    from flint import arb

    from numerics.ws import reference_arb as RA

    def evaluate():
        H, rigorous = entries()
        D = H.shape[0]
        fro2 = sum((h * h for h in H.flat), arb(0))
        fro = fro2.sqrt() if fro2 > 0 else arb(0, fro2.abs_upper().sqrt().abs_upper())
        worst = max(arb(h.rad()) for h in H.flat)
        # accurate() on this ball asks D·max radius ≤ 2^-(bits + 4)·‖H‖_F (an exact zero H passes: no radius)
        proxy = arb(fro.mid(), D * worst) if worst > 0 else arb(fro.mid())
        return (proxy,), (H, fro, D, rigorous)

    (_, (H, fro, D, rigorous)), prec = RA.refine(evaluate, dps, guard_bits=guard_bits,
                                                 max_doublings=max_doublings)
    return {"H": H, "frobenius": fro, "dim": D, "rigorous": rigorous, "prec": prec}


def arb_dense_moments(ref: dict) -> dict:
    """(tr H, ‖H‖_F², Σ|H_ii|) as arb balls from an arb dense Hessian (:func:`softmax_hessian_arb`), in the
    format of :func:`ce_hessian_moments_arb`."""
    from flint import ctx

    H, D = ref["H"], ref["dim"]
    with ctx.workprec(ref["prec"]):
        tr, tr2, ad = _arb_upper_moments(((i, j), H[i, j]) for i in range(D) for j in range(i, D))
    return {"trace": tr, "trace_sq": tr2, "abs_diag": ad, "dim": D, "rigorous": ref["rigorous"], "prec": ref["prec"]}


def mp_trace_moments(H: mpmath.matrix, dps: int = 50) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(tr H, ‖H‖_F²) summed at ``dps`` digits."""
    with mpmath.workdps(dps):
        D = H.rows
        tr = mpmath.fsum(H[i, i] for i in range(D))
        tr2 = mpmath.fsum(H[i, j] ** 2 for i in range(D) for j in range(D))
        return +tr, +tr2
