"""ws.softmax (SPEC §1, beyond the paper): closed-form tr H and tr H² of the mean softmax cross-entropy Hessian of
an M–N–C net equal the trace and ‖H‖_F² of the Hessian; the Wolkowicz–Styan bounds follow from them.

Derivation: :mod:`proofs.ws.softmax` (the CE derivatives; the C × C block kernels and their tensor form, the same
for M = 1..3, C = 2, 3, ±bias; the contraction identities; the kernel form against ``sympy.hessian`` of the full
loss with a generic φ and a generic C-ary loss). Evaluator: :func:`numerics.ws.softmax.softmax_hessian_moments`
(generated kernels ``numerics/_derived/ws_softmax.py``). References:
:func:`numerics.ws.reference_softmax.softmax_hessian_mpmath` (SymPy derivatives of the net in mpmath, softmax from
its definition) and :func:`~numerics.ws.reference_softmax.softmax_hessian_torch` (``torch.func.hessian`` of
``F.cross_entropy``), which share no code with the closed form. F confirms in arb balls
(:func:`~numerics.ws.reference_softmax.softmax_hessian_arb`, proved either way; revision 2 of both
properties). A also checks C = 2 against the *binary* model: with v = V_1 − V_0 and
c = c_1 − c_0, H_softmax = Aᵀ H_BCE A, so tr H = tr(Λ H_BCE) and tr H² = tr((Λ H_BCE)²), Λ = AAᵀ (1 on W, b;
2 on v, c).
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np

from checks.evidence.outcome import Outcome, digits_agreed, rel_err
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.runners.falsify import Property, run_properties
from checks.ws.bound import trace_moments_property, upper_bound_property
from checks.ws.cases import ACTIVATIONS
from checks.ws.moments import saturated_nets, saturation_error
from checks.ws.strategies import SoftmaxCase, softmax_nets
from numerics.ws.reference import ce_hessian_torch, mp_trace_moments
from numerics.ws.reference_softmax import (
    softmax_hessian_arb,
    softmax_hessian_moments_arb,
    softmax_hessian_mpmath,
    softmax_hessian_torch,
)
from numerics.ws.softmax import softmax_hessian_moments, softmax_hessian_trace
from proofs.ws import softmax as proof

ID = "ws.softmax"


def softmax_cases(ctx: Context, salt: str, n: int = 12, Cs=(2, 3, 4), M: int = 2, N: int = 3):
    """Every activation × ±bias, the number of classes cycling through ``Cs``."""
    rng = ctx.rng(salt)
    for i, (act, bias) in enumerate((a, bb) for a in ACTIVATIONS for bb in (True, False)):
        C = Cs[i % len(Cs)]
        W, b, V = rng.normal(size=(N, M)), rng.normal(size=N), rng.normal(size=(C, N)) * 1.5
        X, y, c = rng.normal(size=(n, M)), rng.integers(0, C, n), rng.normal(size=C)
        yield act, bias, C, (W, b if bias else None, V, c if bias else None, X, y)


@functools.cache
def _symbolic(quick: bool):
    if quick:  # a smoke run: C = 2, the smallest sizes
        ce, ident = proof.derive_softmax_ce(2), proof.contraction_identities(2)
        _, info = proof.softmax_kernels_size_free(1, (2,), (False,))
        sizes = [(1, 1, 2, 1, False)]
    else:
        ce, ident = proof.derive_softmax_ce(4), proof.contraction_identities(3)
        _, info = proof.softmax_kernels_size_free(3, (2, 3))
        sizes = [(M, N, C, n, bias) for M in (1,) for N in (1, 2) for C in (2, 3) for n in (1, 2)
                 for bias in (True, False)] + [(2, 1, 2, 2, True), (2, 2, 2, 1, True)]
    checks = [proof.check_softmax_against_hessian(*s) for s in sizes]
    return ce, ident, info, checks


def level_S(ctx: Context) -> Outcome:
    ce, ident, info, checks = _symbolic(ctx.quick)
    tr0 = sum(c.trace_zero for c in checks)
    tr20 = sum(c.trace_sq_zero for c in checks)
    ok = (tr0 == tr20 == len(checks) and all(ce.values()) and all(ident.values())
          and all(info["identical"].values()))
    Cs = sorted({c.C for c in checks})
    return Outcome(ok, {"sizes": len(checks), "trace_exact_zero": tr0, "trace_sq_exact_zero": tr20,
                        "max_D": max(c.D for c in checks)},
                   f"tr H: {tr0}/{len(checks)}, tr H²: {tr20}/{len(checks)} sizes (C ∈ {Cs}, max D "
                   f"{max(c.D for c in checks)}) simplify to 0 vs sympy.hessian (generic φ, generic C-ary loss); "
                   f"CE derivatives for C ≤ {max(int(k[1]) for k in ce)}; tensor form identical for M ≤ "
                   f"{max(info['M_checked'])}, C ∈ {info['C_checked']}; {len(ident)} contraction identities",
                   details={"cases": [c.__dict__ for c in checks], "ce": ce, "identities": ident,
                            "block_argument": info})


def level_P(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    cases = list(softmax_cases(ctx, "ws.softmax/P", n=8))
    if ctx.quick:
        cases = cases[:1]
    rows = []
    for act, bias, _C, net in cases:
        m = softmax_hessian_moments(*net, act, bias=bias, dps=dps, block=3)
        tr, tr2 = mp_trace_moments(softmax_hessian_mpmath(*net, act, bias=bias, dps=dps + 10), dps + 10)
        with mpmath.workdps(dps):
            rows.append((digits_agreed(m.trace, tr), digits_agreed(m.trace_sq, tr2)))
    worst_tr, worst_tr2 = min(r[0] for r in rows), min(r[1] for r in rows)
    worst = min(worst_tr, worst_tr2)
    return Outcome(worst >= TOL["precision_min_digits"],
                   {"digits_agreed": worst, "trace_digits": worst_tr, "trace_sq_digits": worst_tr2, "cases": len(rows)},
                   f"closed form at dps={dps} vs SymPy derivatives in mpmath (dps={dps + 10}): tr H ≥ {worst_tr:.1f}, "
                   f"tr H² ≥ {worst_tr2:.1f} digits, {len(rows)} cases (activations × ±bias, C ∈ 2..4, n=8)")


def _binary_relation(net, act, bias):
    """C = 2 against the binary model: (rel err of tr H vs tr(ΛH_BCE), of tr H² vs tr((ΛH_BCE)²))."""
    W, b, V, c, X, y = net
    v = V[1] - V[0]
    cb = float(c[1] - c[0]) if bias else None
    Hb = ce_hessian_torch(W, b, v, cb, X, y.astype(float), act, bias=bias)
    N, M = W.shape
    lam = np.ones(Hb.shape[0])
    lam[N * M + (N if bias else 0):] = 2.0  # v (and c): the rows of A with a +1 and a −1
    LH = lam[:, None] * Hb
    m = softmax_hessian_moments(*net, act, bias=bias)
    return rel_err(m.trace, np.trace(LH)), rel_err(m.trace_sq, np.trace(LH @ LH))


def level_A(ctx: Context) -> Outcome:
    errs, rel2, diag = [], [], []
    cases = list(softmax_cases(ctx, "ws.softmax/A", n=20, Cs=(2, 3, 5)))
    for act, bias, C, net in cases[:1] if ctx.quick else cases:
        m = softmax_hessian_moments(*net, act, bias=bias, block=6)  # several blocks, a ragged last one
        H = softmax_hessian_torch(*net, act, bias=bias)
        if m.dim != H.shape[0]:
            errs.append(float("inf"))
            continue
        errs.append(max(rel_err(m.trace, np.trace(H)), rel_err(m.trace_sq, float(np.sum(H * H)))))
        # the tr-H-only path (inspect's), entry by entry: diag H, not just its sum
        t = softmax_hessian_trace(*net, act, bias=bias)
        dH = np.diag(H)
        diag.append(max(float(np.max(np.abs(t.diagonal - dH))) / max(float(np.max(np.abs(dH))), 1e-300),
                        rel_err(t.trace, np.trace(H))))
        if C == 2:
            rel2.append(max(_binary_relation(net, act, bias)))
    worst, worst2 = max(errs), max(rel2) if rel2 else float("nan")
    sat = saturation_error(softmax_hessian_moments, saturated_nets(ctx.rng("ws.softmax/A/saturated"), softmax=True))
    worst_d = max(diag, default=0.0)
    ok = worst <= TOL["autograd_rel"] and (not rel2 or worst2 <= TOL["autograd_rel"]) and sat <= TOL["autograd_rel"] \
        and worst_d <= TOL["autograd_rel"]
    return Outcome(ok, {"max_rel_err": worst, "cases": len(errs), "binary_relation_max_rel_err": worst2,
                        "binary_relation_cases": len(rel2), "saturated_max_rel_err": sat,
                        "trace_only_diagonal_max_err": worst_d},
                   f"vs torch.func.hessian of F.cross_entropy (float64): max rel err {worst:.1e} over {len(errs)} "
                   f"cases (C ∈ 2, 3, 5; tol 1e-10); C = 2 vs the binary model's Hessian (tr ΛH, tr (ΛH)²): "
                   f"{worst2:.1e} over {len(rel2)} cases; saturated logits (spread to 700): float64 vs its 50-digit "
                   f"ball evaluation {sat:.1e}; the tr-H-only path's diagonal vs the dense diagonal: {worst_d:.1e}")


# ------------------------------------------------------------------------------------------------ F
def moments_property(moments_fn=softmax_hessian_moments) -> Property:
    """(tr H, tr H², D) of the closed form equal the dense Hessian's in every corner of :func:`softmax_nets`."""
    return trace_moments_property("ws.softmax/moments", softmax_nets(), SoftmaxCase, softmax_hessian_torch,
                                  softmax_hessian_mpmath, moments_fn, dense_arb=softmax_hessian_moments_arb)


def bound_property(moments_fn=softmax_hessian_moments) -> Property:
    """λ_max(H) ≤ λ_sup = μ + √(D−1)σ for the softmax Hessian (λ_max of the dense reference)."""
    return upper_bound_property("ws.softmax/bound", softmax_nets(), SoftmaxCase, softmax_hessian_torch,
                                softmax_hessian_mpmath, moments_fn, dense_arb=softmax_hessian_arb)


PROPERTIES = (moments_property(), bound_property())


def level_F(ctx: Context) -> Outcome:
    return run_properties(ctx, PROPERTIES, ID)
