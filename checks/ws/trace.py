"""ws.trace: closed-form tr H equals the trace of the Hessian of the mean BCE loss.

Derivation: :mod:`proofs.ws` (generated kernels ``numerics/_derived/ws.py``); evaluator:
:func:`numerics.ws.ce_hessian_moments`; the levels are :mod:`checks.ws.moments`.
"""

from __future__ import annotations

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.ws import moments

ID = "ws.trace"


def level_S(ctx: Context) -> Outcome:
    return moments.symbolic("trace", ctx.quick)


def level_P(ctx: Context) -> Outcome:
    return moments.precision(ctx, "trace")


def level_A(ctx: Context) -> Outcome:
    return moments.autograd(ctx, "trace")
