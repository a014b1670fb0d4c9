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

from checks.evidence import Outcome, digits_agreed, rel_err
from checks.registry import Context
from checks.tol import TOL
from checks.ws.cases import small_cases
from numerics.ws import ce_hessian_moments
from numerics.ws.reference import ce_hessian_mpmath, ce_hessian_torch, mp_trace_moments
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


def autograd(ctx: Context, which: str) -> Outcome:
    errs = []
    for act, bias, net in small_cases(ctx, "ws.A", n=30):
        m = ce_hessian_moments(*net, act, bias=bias, block=7)  # several blocks, ragged last block
        H = ce_hessian_torch(*net, act, bias=bias)
        ref = np.trace(H) if which == "trace" else float(np.sum(H * H))
        errs.append(rel_err(m.trace if which == "trace" else m.trace_sq, ref))
    worst = max(errs)
    return Outcome(worst <= TOL["autograd_rel"], {"max_rel_err": worst, "cases": len(errs)},
                   f"vs torch.func.hessian float64: max rel err {worst:.1e} over {len(errs)} cases (tol 1e-10)")
