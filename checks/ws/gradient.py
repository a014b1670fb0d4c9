r"""ws.gradient (beyond the paper; the same authors' follow-up uses it as a regulariser): the closed-form ∇_θ λ_sup,
λ_sup = μ + √(D−1)σ, μ = tr H/D, σ² = tr H²/D − μ², for φ three times differentiable and σ > 0.

Evaluators: :func:`numerics.ws.lambda_sup_grad` (binary) and :func:`numerics.ws.softmax.softmax_lambda_sup_grad`:
reverse mode through the closed-form moments, O(n²(M+N)), no D×D matrix.

* S — SymPy, from the definition: with tr H and tr H² as functions T₁(θ), T₂(θ), the derivative of
  T₁/D + √(D−1)·√(T₂/D − T₁²/D²) is ∇T₁/D + √(D−1)(∇T₂/D − 2μ∇T₁/D)/(2σ) (the formula the evaluator's
  docstring states), symbolically for general D; and σ = 0 is an error, not a number (H = I).
* P — a high-precision reference: the 5-point stencil (h = 2⁻³⁰ on dyadic weights, so every point is exact;
  error O(h⁴) ≈ 1e-36) of λ_sup at 70 digits computed from the dense mpmath Hessian of SymPy's differentiation
  of the loss (:func:`numerics.ws.reference.ce_hessian_mpmath`), every coordinate of θ. The evaluator runs in
  float64, so the digits agreed are bounded by float64 (~13-15); the
  criterion is ≥ 11 digits on every coordinate's scale (‖∇‖_∞-relative).
* A — reverse-mode autograd through ``torch.func.hessian`` of the loss (third derivatives from the definition), for
  tanh, sigmoid, softplus and GELU, with and without biases, binary and softmax: relative error ≤ 1e-10.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from checks.evidence.outcome import Outcome, digits_agreed
from checks.evidence.registry import Context
from checks.evidence.tol import TOL

ID = "ws.gradient"
A_TOL = 1e-10
P_MIN_DIGITS = 11.0


def _net(rng, N=3, M=2, n=8, bias=True):
    W, b, v = rng.normal(size=(N, M)), rng.normal(size=N), rng.normal(size=N)
    X, y = rng.normal(size=(n, M)), rng.integers(0, 2, n).astype(float)
    return W, (b if bias else None), v, (0.3 if bias else None), X, y


def level_S(ctx: Context) -> Outcome:
    D, t = sp.symbols("D t", positive=True)
    T1, T2 = sp.Function("T1")(t), sp.Function("T2")(t)
    mu = T1 / D
    sigma = sp.sqrt(T2 / D - mu**2)
    lam = mu + sp.sqrt(D - 1) * sigma
    formula = sp.diff(T1, t) / D + sp.sqrt(D - 1) * (sp.diff(T2, t) / D - 2 * mu * sp.diff(T1, t) / D) / (2 * sigma)
    chain_ok = sp.simplify(sp.diff(lam, t) - formula) == 0
    # σ = 0 has no gradient: H = I (a multiple of the identity) must raise, not return a number
    from numerics.ws import lambda_sup_grad

    raised = False
    try:
        # H = 0 exactly: W = 0, v = 0 and every sample at x = 0 (no bias) make g_i = 0 and K_i = 0
        lambda_sup_grad(np.zeros((1, 1)), None, np.zeros(1), None, np.zeros((2, 1)), np.array([0.0, 1.0]), "tanh",
                        bias=False)
    except ValueError:
        raised = True
    ok = chain_ok and raised
    return Outcome(ok, {"chain_rule_simplifies_to_0": chain_ok, "sigma_zero_raises": raised},
                   "d/dθ [T₁/D + √(D−1)√(T₂/D − T₁²/D²)] − (∇T₁/D + √(D−1)(∇T₂/D − 2μ∇T₁/D)/(2σ)) simplifies to 0 "
                   f"for general D; σ = 0 raises: {raised}")


def _lam_mp(W, b, v, c, X, y, act, bias, dps):
    from numerics.ws.reference import ce_hessian_mpmath, mp_trace_moments

    H = ce_hessian_mpmath(W, b, v, c, X, y, act, bias=bias, dps=dps)
    with mpmath.workdps(dps):
        tr, tr2 = mp_trace_moments(H, dps)
        D = H.rows
        mu = tr / D
        return mu + mpmath.sqrt(D - 1) * mpmath.sqrt(tr2 / D - mu * mu)


def level_P(ctx: Context) -> Outcome:
    from numerics.ws import lambda_sup_grad

    rng = ctx.rng("ws.gradient/P")
    dps = TOL["precision_dps"] + 20
    worst, rows = np.inf, []
    cases = [("tanh", True)] if ctx.quick else [("tanh", True), ("softplus", False)]
    for act, bias in cases:
        # dyadic weights (multiples of 2^-12), so that θ ± j·2^-30 are exact floats: the reference sees exactly the
        # perturbed parameters, and the 5-point stencil's error is O(h⁴) ≈ 1e-36
        W, b, v, c, X, y = (None if t is None else np.round(np.asarray(t, float) * 4096) / 4096
                            for t in _net(rng, N=2, M=2, n=5, bias=bias))
        net = (W, b, v, (float(c) if bias else None), X, y)
        g = lambda_sup_grad(*net, act, bias=bias).flat()
        parts = [W.ravel()] + ([b] if bias else []) + [v] + ([np.array([c])] if bias else [])
        th = np.concatenate(parts)
        N, M = W.shape
        h = 2.0 ** -30

        def lam_at(t, N=N, M=M, bias=bias, X=X, y=y, act=act):
            Wk = t[:N * M].reshape(N, M)
            off = N * M
            bk = t[off:off + N] if bias else None
            off += N if bias else 0
            return _lam_mp(Wk, bk, t[off:off + N], (t[-1] if bias else None), X, y, act, bias, dps)

        ref = []
        with mpmath.workdps(dps):
            for k in range(th.size):
                f = {}
                for j in (-2, -1, 1, 2):
                    t = th.copy()
                    t[k] += j * h
                    assert t[k] - th[k] == j * h            # exact: the stencil's points are the ones evaluated
                    f[j] = lam_at(t)
                ref.append((-f[2] + 8 * f[1] - 8 * f[-1] + f[-2]) / (12 * mpmath.mpf(h)))
            scale = max(abs(r) for r in ref)
            digs = [digits_agreed(mpmath.mpf(float(gk)) / scale, r / scale) for gk, r in zip(g, ref, strict=True)]
        worst = min(worst, min(digs))
        rows.append({"activation": act, "bias": bias, "D": int(th.size), "min_digits": min(digs)})
    ok = worst >= P_MIN_DIGITS
    return Outcome(ok, {"min_digits": worst, "cases": len(rows)},
                   f"∇λ_sup (float64 closed form) against the 5-point stencil of the 70-digit dense-Hessian λ_sup, "
                   f"every coordinate: ≥ {worst:.1f} digits (‖∇‖_∞-relative; float64 bounds it near 15)",
                   details={"cases": rows})


def level_A(ctx: Context) -> Outcome:
    import torch

    from numerics.ws import lambda_sup_grad
    from numerics.ws.reference import torch_loss_fn
    from numerics.ws.reference_softmax import softmax_torch_loss_fn
    from numerics.ws.softmax import softmax_lambda_sup_grad

    def dense_grad(loss, th0):
        def lam(th):
            H = torch.func.hessian(loss)(th)
            D = H.shape[0]
            mu = torch.trace(H) / D
            return mu + (D - 1) ** 0.5 * torch.sqrt((H * H).sum() / D - mu**2)
        return torch.func.grad(lam)(th0).numpy()

    rng = ctx.rng("ws.gradient/A")
    acts = ("tanh", "gelu") if ctx.quick else ("tanh", "sigmoid", "softplus", "gelu")
    worst, rows = 0.0, []
    for act in acts:
        for bias in (True, False):
            net = _net(rng, bias=bias)
            g = lambda_sup_grad(*net, act, bias=bias, block=3).flat()
            ref = dense_grad(*torch_loss_fn(*net, act, bias=bias))
            e = float(np.max(np.abs(g - ref)) / np.max(np.abs(ref)))
            worst = max(worst, e)
            rows.append({"model": "binary", "activation": act, "bias": bias, "rel_err": e})
            W, b, v, c, X, _ = net
            C = 3
            V, cc = rng.normal(size=(C, W.shape[0])), (rng.normal(size=C) if bias else None)
            ys = rng.integers(0, C, X.shape[0])
            snet = (W, b, V, cc, X, ys)
            gs = softmax_lambda_sup_grad(*snet, act, bias=bias, block=3).flat()
            refs = dense_grad(*softmax_torch_loss_fn(*snet, act, bias=bias))
            e = float(np.max(np.abs(gs - refs)) / np.max(np.abs(refs)))
            worst = max(worst, e)
            rows.append({"model": "softmax", "activation": act, "bias": bias, "rel_err": e})
    ok = worst <= A_TOL
    return Outcome(ok, {"max_rel_err": worst, "cases": len(rows)},
                   f"∇λ_sup against autograd through torch.func.hessian (binary and softmax, {len(acts)} activations, "
                   f"with and without biases): max rel. err {worst:.1e}", details={"cases": rows})
