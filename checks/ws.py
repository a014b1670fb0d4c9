r"""Claims ws.* (SPEC §1): Omae et al. 2026, arXiv 2604.10202, and Wolkowicz & Styan 1980.

Each claim: its statement, then one small function per evidence level. The experiments (E) live in
``checks/ws_experiments.py``; the falsification properties in ``checks/ws_properties.py``.
"""

from __future__ import annotations

import mpmath
import numpy as np

from checks.evidence import TOL, Outcome, digits_agreed, rel_err
from checks.registry import Context, claim
from numerics.ws import ce_hessian_moments, ws_bounds
from numerics.ws.reference import ce_hessian_mpmath, ce_hessian_torch, mp_trace_moments
from proofs.ws import core as hm

THEOREM = claim(
    "ws.theorem",
    statement="Wolkowicz–Styan: for real-spectrum A with m = tr A/D, s² = tr A²/D − m²: "
              "m + s/√(D−1) ≤ λ_max ≤ m + s√(D−1), m − s√(D−1) ≤ λ_min ≤ m − s/√(D−1); equality cases; "
              "k-th form m − s√((k−1)/(D−k+1)) ≤ λ_k ≤ m + s√((D−k)/k).",
    latex=r"m+\frac{s}{\sqrt{D-1}}\le\lambda_{\max}\le m+s\sqrt{D-1},\quad "
          r"m-s\sqrt{\tfrac{k-1}{D-k+1}}\le\lambda_k\le m+s\sqrt{\tfrac{D-k}{k}}",
    levels="S, P, F",
)
TRACE = claim(
    "ws.trace",
    statement="The closed-form tr H (per-sample kernels) equals the trace of the Hessian of the mean BCE loss.",
    latex=r"\operatorname{tr}H=\frac1n\sum_i q_i\|g_i\|^2+r_i\operatorname{tr}K_i",
    levels="S, P, A",
)
TRACE_SQ = claim(
    "ws.trace_sq",
    statement="The closed-form tr H² (sample-pair kernels) equals ‖H‖_F².",
    latex=r"\operatorname{tr}H^2=\frac1{n^2}\sum_{i,j}q_iq_j(g_i\!\cdot\!g_j)^2+2q_ir_j\,g_i^\top K_jg_i"
          r"+r_ir_j\operatorname{tr}(K_iK_j)",
    levels="S, P, A",
)
BOUND = claim(
    "ws.bound",
    statement="λ_max(H) ≤ λ_sup = μ + √(D−1)σ, μ = tr H/D, σ² = tr H²/D − μ², for all θ and data.",
    latex=r"\lambda_{\max}(H)\le\mu+\sqrt{D-1}\,\sigma",
    levels="A, F",
)
DEPENDENCE = claim(
    "ws.dependence",
    statement="λ_sup grows with ‖v‖, with N, and with the correlation of the samples.",
    latex=r"\partial\lambda_{\sup}/\partial\|v\|>0,\ \partial\lambda_{\sup}/\partial N>0,\ "
          r"\partial\lambda_{\sup}/\partial\rho>0",
    levels="E",
)
OVERFIT = claim(
    "ws.overfit",
    statement="As the predictions saturate (q_i, r_i → 0), λ_sup → 0.",
    latex=r"q_i,r_i\to0\ \Rightarrow\ \lambda_{\sup}\to0",
    levels="S, E",
)
EXPERIMENT = claim(
    "ws.experiment",
    statement="M=2, N=3, two Gaussian classes: λ_sup against the exact λ_1 at many critical points, "
              "and λ_sup against test macro-F1.",
    latex=r"\lambda_1(H)\le\lambda_{\sup}\ \text{at critical points};\ \rho_s(\lambda_{\sup},F_1)",
    levels="E",
)

# --------------------------------------------------------------------------------------------
# shared cases for P and A: the paper's size (M=2, N=3), with and without biases, every activation

ACTIVATIONS = ("sigmoid", "tanh", "softplus", "gelu")


def small_cases(ctx: Context, salt: str, n: int = 12):
    rng = ctx.rng(salt)
    for act in ACTIVATIONS:
        for bias in (True, False):
            N, M = 3, 2
            W, b, v = rng.normal(size=(N, M)), rng.normal(size=N), rng.normal(size=N) * 1.5
            X, y = rng.normal(size=(n, M)), rng.integers(0, 2, n).astype(float)
            c = float(rng.normal())
            yield act, bias, (W, b if bias else None, v, c if bias else None, X, y)


# --------------------------------------------------------------------------------------------
# ws.theorem


@THEOREM.level("S")
def _(ctx: Context) -> Outcome:
    res = hm.derive_ws_theorem(max_D=6)
    ok = all(res.values())
    return Outcome(ok, {"identities": len(res), "exact": sum(res.values())},
                   f"{sum(res.values())}/{len(res)} steps simplify exactly (symbolic D, k; D ≤ 6 expansions)",
                   details=res)


def _spectrum_matrix(lams, rng):
    """A random orthogonal similarity of diag(lams), at the current mpmath precision."""
    D = len(lams)
    Q, _ = mpmath.qr(mpmath.matrix(rng.normal(size=(D, D)).tolist()))
    return Q * mpmath.diag(lams) * Q.T


@THEOREM.level("P")
def _(ctx: Context) -> Outcome:
    """Random symmetric matrices at 50 digits: bounds hold (eigsy), equality spectra attain them."""
    rng = ctx.rng("ws.theorem/P")
    dps = TOL["precision_dps"]
    worst_margin, eq_digits, n = mpmath.inf, [], 0
    with mpmath.workdps(dps):
        for D in (2, 3, 5, 8):
            for _ in range(3):
                A = mpmath.matrix(rng.normal(size=(D, D)).tolist())
                A = (A + A.T) / 2
                ev = sorted(mpmath.eigsy(A, eigvals_only=True), reverse=True)
                tr = mpmath.fsum(A[i, i] for i in range(D))
                tr2 = mpmath.fsum(A[i, j] ** 2 for i in range(D) for j in range(D))
                B = ws_bounds(tr, tr2, D)
                gaps = [ev[0] - B.lmax_lower, B.lmax_upper - ev[0], ev[-1] - B.lmin_lower, B.lmin_upper - ev[-1]]
                for k in range(1, D + 1):
                    lo, hi = B.kth(k)
                    gaps += [ev[k - 1] - lo, hi - ev[k - 1]]
                worst_margin = min(worst_margin, min(gaps))
                n += 1
            # equality case: D−1 smallest equal attains λ_max upper; D−1 largest equal attains λ_max lower
            a, bb = mpmath.mpf(rng.normal()) + 3, mpmath.mpf(rng.normal())
            for spec, which in (([a] + [bb] * (D - 1), "lmax_upper"), ([a] * (D - 1) + [bb - 3], "lmax_lower")):
                A = _spectrum_matrix(spec, rng)
                tr = mpmath.fsum(A[i, i] for i in range(D))
                tr2 = mpmath.fsum(A[i, j] ** 2 for i in range(D) for j in range(D))
                eq_digits.append(digits_agreed(getattr(ws_bounds(tr, tr2, D), which), max(spec)))
    ok = worst_margin > -mpmath.mpf(10) ** (-dps + 5) and min(eq_digits) >= TOL["precision_min_digits"]
    return Outcome(ok, {"matrices": n, "min_slack": float(worst_margin), "equality_digits": min(eq_digits)},
                   f"{n} matrices at dps={dps}: all bounds hold (min slack {float(worst_margin):.2e}); "
                   f"equality spectra attain the bounds to {min(eq_digits):.1f} digits")


# --------------------------------------------------------------------------------------------
# ws.trace and ws.trace_sq share S, P, A evidence, each reporting its own quantity


def _symbolic(which: str) -> Outcome:
    checks = list(hm.all_size_checks(2, 3, 2))
    _, _, info = hm.unit_kernels_size_free(3)
    bce = hm.derive_bce()
    key = "trace_zero" if which == "trace" else "trace_sq_zero"
    zero = sum(getattr(c, key) for c in checks)
    ok = zero == len(checks) and all(info["identical"].values()) and all(bce.values())
    return Outcome(ok, {"sizes": len(checks), "exact_zero": zero, "max_D": max(c.D for c in checks)},
                   f"{zero}/{len(checks)} (M≤2, N≤3, n≤2, ±bias) simplify to 0 vs sympy.hessian; "
                   f"block kernels identical for M=1..3; BCE derivatives exact",
                   details={"cases": [c.__dict__ for c in checks], "block_argument": info, "bce": bce})


def _precision(ctx: Context, which: str) -> Outcome:
    dps = TOL["precision_dps"]
    digits = []
    for act, bias, net in small_cases(ctx, "ws.P"):
        m = ce_hessian_moments(*net, act, bias=bias, dps=dps)
        tr, tr2 = mp_trace_moments(ce_hessian_mpmath(*net, act, bias=bias, dps=dps + 10), dps + 10)
        with mpmath.workdps(dps):
            digits.append(digits_agreed(m.trace if which == "trace" else m.trace_sq,
                                        tr if which == "trace" else tr2))
    worst = min(digits)
    return Outcome(worst >= TOL["precision_min_digits"], {"digits_agreed": worst, "cases": len(digits)},
                   f"closed form at dps={dps} vs sympy.hessian in mpmath (dps={dps + 10}): ≥ {worst:.1f} digits, "
                   f"{len(digits)} cases (4 activations × ±bias, n=12)")


def _autograd(ctx: Context, which: str) -> Outcome:
    errs = []
    for act, bias, net in small_cases(ctx, "ws.A", n=30):
        m = ce_hessian_moments(*net, act, bias=bias, block=7)  # several blocks, ragged last block
        H = ce_hessian_torch(*net, act, bias=bias)
        ref = np.trace(H) if which == "trace" else float(np.sum(H * H))
        errs.append(rel_err(m.trace if which == "trace" else m.trace_sq, ref))
    worst = max(errs)
    return Outcome(worst <= TOL["autograd_rel"], {"max_rel_err": worst, "cases": len(errs)},
                   f"vs torch.func.hessian float64: max rel err {worst:.1e} over {len(errs)} cases (tol 1e-10)")


for _claim, _which in ((TRACE, "trace"), (TRACE_SQ, "trace_sq")):
    _claim.level("S")(lambda ctx, w=_which: _symbolic(w))
    _claim.level("P")(lambda ctx, w=_which: _precision(ctx, w))
    _claim.level("A")(lambda ctx, w=_which: _autograd(ctx, w))


# --------------------------------------------------------------------------------------------
# ws.bound (A): exact λ_max of the autograd Hessian vs λ_sup from the closed form


@BOUND.level("A")
def _(ctx: Context) -> Outcome:
    ratios, slack = [], []
    for act, bias, net in small_cases(ctx, "ws.bound/A", n=25):
        H = ce_hessian_torch(*net, act, bias=bias)
        lmax = float(np.linalg.eigvalsh(H)[-1])
        lsup = float(ce_hessian_moments(*net, act, bias=bias).lambda_sup)
        ratios.append(lmax / lsup)
        slack.append(lsup - lmax)
    ok = min(slack) >= 0
    return Outcome(ok, {"cases": len(ratios), "max_lmax_over_lsup": max(ratios), "min_slack": min(slack)},
                   f"λ_max(torch Hessian) ≤ λ_sup in {len(ratios)} cases; λ_max/λ_sup ∈ "
                   f"[{min(ratios):.3f}, {max(ratios):.3f}]")


# --------------------------------------------------------------------------------------------
# ws.overfit (S)


@OVERFIT.level("S")
def _(ctx: Context) -> Outcome:
    res = hm.saturation_limit()
    return Outcome(all(res.values()), {"facts": len(res), "exact": sum(res.values())},
                   "every kernel monomial carries q_i or r_i: tr H, tr H², λ_sup vanish at q = r = 0",
                   details=res)
