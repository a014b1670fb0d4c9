"""S, P and A evidence that ws.trace and ws.trace_sq share, each reporting its own quantity.

Derivation: :mod:`proofs.ws` (``all_size_checks``: the closed forms against ``sympy.hessian`` of the
loss, for every size M ≤ 2, N ≤ 3, n ≤ 2; ``unit_kernels_size_free``: the block argument for all M).
Evaluator: :func:`numerics.ws.ce_hessian_moments`. References: :mod:`numerics.ws.reference` (a SymPy
Hessian evaluated in mpmath; a torch.func Hessian), which share no code with the closed form.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np

from checks.evidence.outcome import Outcome, digits_agreed, rel_err
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.ws.cases import small_cases
from numerics.ws import ce_hessian_moments
from numerics.ws.reference import ce_hessian_mpmath, ce_hessian_torch, mp_trace_moments
from numerics.ws.trace_only import ce_hessian_trace
from proofs import ws as proof


@functools.cache
def size_checks(max_M: int, max_N: int, max_n: int) -> tuple:
    """The sympy.hessian comparisons, computed once per run for ws.trace and ws.trace_sq together."""
    return tuple(proof.all_size_checks(max_M, max_N, max_n))


_size_free = functools.cache(proof.unit_kernels_size_free)
_bce = functools.cache(proof.derive_bce)


def symbolic(which: str, quick: bool = False) -> Outcome:
    sizes = (1, 2, 2) if quick else (2, 3, 2)  # quick: a smoke run on the smaller sizes
    checks = list(size_checks(*sizes))
    _, _, info = _size_free(3)
    bce = _bce()
    key = "trace_zero" if which == "trace" else "trace_sq_zero"
    zero = sum(getattr(c, key) for c in checks)
    ok = zero == len(checks) and all(info["identical"].values()) and all(bce.values())
    return Outcome(ok, {"sizes": len(checks), "exact_zero": zero, "max_D": max(c.D for c in checks)},
                   f"{zero}/{len(checks)} (M≤{sizes[0]}, N≤{sizes[1]}, n≤{sizes[2]}, ±bias) simplify to 0 vs "
                   f"sympy.hessian; "
                   f"block kernels identical for M=1..3; BCE derivatives exact",
                   details={"cases": [c.__dict__ for c in checks], "block_argument": info, "bce": bce})


def precision(ctx: Context, which: str) -> Outcome:
    dps = TOL["precision_dps"]
    digits = {"arb": [], "mpmath": []}
    for act, bias, net in small_cases(ctx, "ws.P"):
        tr, tr2 = mp_trace_moments(ce_hessian_mpmath(*net, act, bias=bias, dps=dps + 10), dps + 10)
        # both dps engines: the arb balls, and the mpmath object arrays they fall back to when the balls are not
        # finite (a fall-back no ordinary input reaches, so it is run here by name: SPEC §5)
        for engine, got in digits.items():
            m = ce_hessian_moments(*net, act, bias=bias, dps=dps, _dps_engine=engine)
            with mpmath.workdps(dps):
                got.append(digits_agreed(m.trace if which == "trace" else m.trace_sq,
                                         tr if which == "trace" else tr2))
    worst = min(min(v) for v in digits.values())
    return Outcome(worst >= TOL["precision_min_digits"],
                   {"digits_agreed": worst, "cases": len(digits["arb"]),
                    **{f"digits_{k}": min(v) for k, v in digits.items()}},
                   f"closed form at dps={dps} vs sympy.hessian in mpmath (dps={dps + 10}): ≥ "
                   f"{min(digits['arb']):.1f} digits in arb balls, ≥ {min(digits['mpmath']):.1f} in the mpmath "
                   f"fall-back, {len(digits['arb'])} cases (4 activations × ±bias, n=12)")


SATURATION = (40.0, 300.0, 700.0)   # |output logit| of the saturated cases: p = σ(z) within e^{−|z|} of 0 or 1


def saturated_nets(rng, *, softmax: bool = False, n: int = 10):
    """(net, L): nets whose output logits sit near ±L, L ∈ :data:`SATURATION`, with every label on the logit's side
    (then q and r are both O(e^{−L}) and set the traces' leading digits: a cancelling p(1 − p) or p − y loses them)
    and with mixed labels. Binary: (W, b, v, c, X, y); softmax (C = 3): (W, b, V, c, X, y), c = (0, L, −L/2)."""
    for L in SATURATION:
        W, b = rng.standard_normal((3, 2)), rng.standard_normal(3)
        X = rng.standard_normal((n, 2))
        if softmax:
            V, c = 0.1 * rng.standard_normal((3, 3)), np.array([0.0, L, -L / 2])
            yield (W, b, V, c, X, np.ones(n, dtype=int)), L                 # every label the saturated class
            yield (W, b, V, c, X, rng.integers(0, 3, n)), L
        else:
            v = 0.1 * rng.standard_normal(3)
            for cc in (L, -L):
                yield (W, b, v, cc, X, np.full(n, 1.0 if cc > 0 else 0.0)), cc   # every sample right
                yield (W, b, v, cc, X, (rng.random(n) < 0.5).astype(float)), cc


def saturation_error(fn, nets, which: str | None = None) -> float:
    """Largest relative error of the float64 closed form against its own dps = 50 ball evaluation (arb: no float64
    curvature factor) at saturated nets: p(1 − p)-type factors that cancel would lose every digit here."""
    worst = 0.0
    for net, _ in nets:
        m, ref = fn(*net, "tanh"), fn(*net, "tanh", dps=50)
        for key in (("trace", "trace_sq") if which is None else (which,)):
            worst = max(worst, rel_err(getattr(m, key), float(getattr(ref, key))))
    return worst


def autograd(ctx: Context, which: str) -> Outcome:
    errs, diag = [], []
    for act, bias, net in small_cases(ctx, "ws.A", n=30):
        m = ce_hessian_moments(*net, act, bias=bias, block=7)  # several blocks, ragged last block
        H = ce_hessian_torch(*net, act, bias=bias)
        ref = np.trace(H) if which == "trace" else float(np.sum(H * H))
        errs.append(rel_err(m.trace if which == "trace" else m.trace_sq, ref))
        if which == "trace":   # the tr-H-only path (inspect's), entry by entry: diag H, not just its sum
            t = ce_hessian_trace(*net, act, bias=bias)
            dH = np.diag(H)
            alone = ce_hessian_trace(*net, act, bias=bias, diagonal=False)   # the per-sample sums, no diagonal
            diag.append(max(float(np.max(np.abs(t.diagonal - dH))) / max(float(np.max(np.abs(dH))), 1e-300),
                            rel_err(t.trace, np.trace(H)), rel_err(alone.trace, np.trace(H))))
    worst = max(errs)
    worst_d = max(diag, default=0.0)
    sat = saturation_error(ce_hessian_moments, saturated_nets(ctx.rng(f"ws.A/saturated/{which}")), which)
    return Outcome(worst <= TOL["autograd_rel"] and sat <= TOL["autograd_rel"] and worst_d <= TOL["autograd_rel"],
                   {"max_rel_err": worst, "cases": len(errs), "saturated_max_rel_err": sat,
                    **({"trace_only_diagonal_max_err": worst_d} if diag else {})},
                   f"vs torch.func.hessian float64: max rel err {worst:.1e} over {len(errs)} cases (tol 1e-10); "
                   f"saturated outputs (|z| = {', '.join(f'{x:g}' for x in SATURATION)}): float64 vs its own 50-digit "
                   f"ball evaluation, max rel err {sat:.1e}"
                   + (f"; the tr-H-only path (its diagonal, and its trace alone) vs the dense diagonal: max err "
                      f"{worst_d:.1e} (relative to max |H_ii|)" if diag else ""))
