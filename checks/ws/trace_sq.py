"""ws.trace_sq: closed-form tr H² equals ‖H‖_F².

Derivation: :mod:`proofs.ws` (generated kernels ``numerics/_derived/ws.py``); evaluator:
:func:`numerics.ws.ce_hessian_moments`; the levels are :mod:`checks.ws.moments`.
"""

from __future__ import annotations

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.ws import moments

ID = "ws.trace_sq"


def level_S(ctx: Context) -> Outcome:
    return moments.symbolic("trace_sq", ctx.quick)


def level_P(ctx: Context) -> Outcome:
    return moments.precision(ctx, "trace_sq")


def level_A(ctx: Context) -> Outcome:
    return moments.autograd(ctx, "trace_sq")
