"""ws.deep (SPEC §1, beyond the paper): exact tr H and tr H² of the mean CE Hessian of smooth MLPs with two or more
hidden layers (binary and softmax), by per-sample and sample-pair reductions, equal the Hessian's.

Derivation: :mod:`proofs.ws.deep` (``sympy.hessian`` of a loss whose activations and per-sample losses are replaced
by independent symbolic 2-jets, so the identity is proved for every C² activation and C² loss at those sizes).
Evaluator: :func:`numerics.ws.deep.deep_hessian_moments`. References (:mod:`numerics.ws.reference_deep`):
``torch.func.hessian`` of the loss written with torch's own functions, and ``sympy.hessian`` of the concrete loss in
mpmath; neither shares code with the closed form. A also checks L = 1 against the one-layer closed forms
(:func:`numerics.ws.ce_hessian_moments`, :func:`numerics.ws.softmax_hessian_moments`), written separately.
F: the closed form against the dense Hessian, and λ_max ≤ λ_sup = μ + √(D−1)σ, on deep nets in hard corners; a
float64 hit is confirmed by :func:`~numerics.ws.reference_deep.deep_hessian_mpmath_ad` (second-order forward AD
of the definition at 60 digits; it agrees with the SymPy reference to 1e-61 on the P nets).

Cost (stated, SPEC): per sample pair O(L² N³) for width N plus O(r²), r = C + 2ΣN_l; n(n+1)/2 pairs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import hypothesis.strategies as st
import mpmath
import numpy as np
from hypothesis.extra.numpy import arrays

from checks.evidence.outcome import Outcome, digits_agreed, rel_err
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.runners.falsify import NotApplicable, Property, run_properties
from checks.ws.cases import ACTIVATIONS
from numerics.ws import ce_hessian_moments, softmax_hessian_moments
from numerics.ws.deep import deep_hessian_moments, deep_hessian_trace
from numerics.ws.reference import mp_trace_moments
from numerics.ws.reference_deep import deep_hessian_mpmath, deep_hessian_mpmath_ad, deep_hessian_torch
from proofs.ws import deep as proof

ID = "ws.deep"


def _net(rng, widths, biases, n, scale=1.0):
    layers = [(rng.normal(size=(widths[k + 1], widths[k])) * scale, rng.normal(size=widths[k + 1]) if biases[k]
               else None) for k in range(len(widths) - 1)]
    C = widths[-1]
    X = rng.normal(size=(n, widths[0]))
    y = rng.integers(0, 2 if C == 1 else C, n)
    return layers, X, y


@functools.cache
def _symbolic(quick: bool):
    return proof.derive_deep(quick)


def level_S(ctx: Context) -> Outcome:
    checks = _symbolic(ctx.quick)
    t0, t2 = sum(c.trace_zero for c in checks), sum(c.trace_sq_zero for c in checks)
    ok = t0 == t2 == len(checks)
    depths = sorted({len(c.widths) - 2 for c in checks})
    return Outcome(ok, {"sizes": len(checks), "trace_exact_zero": t0, "trace_sq_exact_zero": t2,
                        "max_D": max(c.D for c in checks), "depths": depths},
                   f"closed form − sympy.hessian expands to 0: tr H {t0}/{len(checks)}, tr H² {t2}/{len(checks)} "
                   f"sizes (L ∈ {depths} hidden layers, C ∈ {sorted({c.widths[-1] for c in checks})}, with and "
                   f"without biases, max D {max(c.D for c in checks)}), every activation and loss as a symbolic "
                   "2-jet, weights and inputs symbols",
                   details={"cases": [c.__dict__ for c in checks]})


P_CASES = (((2, 2, 2, 1), (True, True, True), 3, "tanh"),
           ((1, 2, 1, 2), (True, False, True), 2, "gelu"),
           ((1, 1, 2, 1, 1), (False, True, True, True), 2, "sigmoid"))


def level_P(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    rng = ctx.rng("ws.deep/P")
    rows = []
    for widths, biases, n, act in P_CASES[:1] if ctx.quick else P_CASES:
        layers, X, y = _net(rng, widths, biases, n)
        m = deep_hessian_moments(layers, X, y, act, dps=dps, block=max(1, n - 1))
        H = deep_hessian_mpmath(layers, X, y, act, dps=dps + 10)
        tr, tr2 = mp_trace_moments(H, dps + 10)
        with mpmath.workdps(dps):
            rows.append((digits_agreed(m.trace, tr), digits_agreed(m.trace_sq, tr2)))
    w1, w2 = min(r[0] for r in rows), min(r[1] for r in rows)
    return Outcome(min(w1, w2) >= TOL["precision_min_digits"],
                   {"digits_agreed": min(w1, w2), "trace_digits": w1, "trace_sq_digits": w2, "cases": len(rows)},
                   f"closed form at dps={dps} vs sympy.hessian of the concrete loss in mpmath (dps={dps + 10}): tr H ≥ "
                   f"{w1:.1f}, tr H² ≥ {w2:.1f} digits, {len(rows)} nets (L = 2, 3; binary and softmax; ±bias)")


A_CASES = (((3, 4, 5, 1), (True,) * 3, 17, "tanh", 1.0),
           ((2, 3, 3, 4), (True,) * 3, 15, "gelu", 1.0),
           ((3, 4, 2, 3, 1), (False, True, True, True), 12, "softplus", 1.0),
           ((2, 3, 4, 3, 3), (True,) * 4, 11, "sigmoid", 1.0),
           ((4, 3, 3, 2), (True, True, False), 14, "tanh", 6.0),          # saturated units and logits
           ((2, 1, 3, 1), (True,) * 3, 9, "gelu", 1.0))                 # a width-1 bottleneck


def level_A(ctx: Context) -> Outcome:
    rng = ctx.rng("ws.deep/A")
    errs, tr_only, one_layer = [], [], []
    for widths, biases, n, act, scale in A_CASES[:2] if ctx.quick else A_CASES:
        layers, X, y = _net(rng, widths, biases, n, scale)
        m = deep_hessian_moments(layers, X, y, act, block=4)              # several blocks, a ragged last one
        H = deep_hessian_torch(layers, X, y, act)
        errs.append(1.0 if m.dim != H.shape[0] else
                    max(rel_err(m.trace, np.trace(H)), rel_err(m.trace_sq, float(np.sum(H * H)))))
        tr_only.append(rel_err(deep_hessian_trace(layers, X, y, act).trace, np.trace(H)))
    # L = 1 against the one-layer closed forms (their own kernels, written separately)
    for C, act in ((1, "tanh"), (3, "gelu")) if not ctx.quick else ((1, "tanh"),):
        layers, X, y = _net(rng, (3, 4, C), (True, True), 13)
        (W, b), (V, c) = layers
        m = deep_hessian_moments(layers, X, y, act, block=5)
        ref = ce_hessian_moments(W, b, V[0], float(c[0]), X, y, act) if C == 1 else \
            softmax_hessian_moments(W, b, V, c, X, y, act)
        one_layer.append(max(rel_err(m.trace, ref.trace), rel_err(m.trace_sq, ref.trace_sq)) if m.dim == ref.dim
                         else 1.0)
    worst = max(errs + tr_only + one_layer)
    return Outcome(worst <= TOL["autograd_rel"],
                   {"max_rel_err": max(errs), "trace_only_max_rel_err": max(tr_only),
                    "one_layer_max_rel_err": max(one_layer), "cases": len(errs)},
                   f"vs torch.func.hessian (float64): max rel err {max(errs):.1e} over {len(errs)} nets (L = 2, 3; "
                   f"binary, softmax C ∈ 3, 4; saturated; width-1 bottleneck; tol 1e-10); tr H alone "
                   f"{max(tr_only):.1e}; L = 1 vs the one-layer closed forms {max(one_layer):.1e}")


# ------------------------------------------------------------------------------------------------ F
@dataclass(frozen=True)
class DeepCase:
    layers: tuple
    X: np.ndarray
    y: np.ndarray
    activation: str

    def to_json(self):
        return {"layers": [[np.asarray(W).tolist(), None if b is None else np.asarray(b).tolist()]
                           for W, b in self.layers], "X": self.X.tolist(), "y": self.y.tolist(),
                "activation": self.activation}

    @classmethod
    def from_json(cls, d):
        layers = tuple((np.asarray(W, float), None if b is None else np.asarray(b, float)) for W, b in d["layers"])
        return cls(layers, np.asarray(d["X"], float), np.asarray(d["y"], np.int64), d["activation"])


_unit = st.floats(-2, 2, allow_nan=False, allow_infinity=False, width=64)


@st.composite
def deep_nets(draw, max_width: int = 3, max_n: int = 5) -> DeepCase:
    """Deep nets in the corners: L = 2 or 3; one logit or C = 2, 3; n = 1; saturated hidden units or logits; a width-1
    bottleneck; a dead layer (every unit saturated: φ′ ≈ 0 for sigmoid and tanh); near-duplicate samples; one label
    for all; huge and tiny weights; layers without bias."""
    corner = draw(st.sampled_from(("generic", "n1", "saturated_hidden", "saturated_logits", "bottleneck", "dead",
                                   "near_duplicate", "one_label", "huge", "tiny")))
    L = draw(st.integers(2, 3))
    C = draw(st.sampled_from((1, 1, 2, 3)))
    M = draw(st.integers(1, max_width))
    hidden = [draw(st.integers(1, max_width)) for _ in range(L)]
    if corner == "bottleneck":
        hidden[draw(st.integers(0, L - 1))] = 1
    widths = [M, *hidden, C]
    n = 1 if corner == "n1" else draw(st.integers(1, max_n))
    layers = []
    for k in range(L + 1):
        W = draw(arrays(np.float64, (widths[k + 1], widths[k]), elements=_unit))
        b = draw(arrays(np.float64, (widths[k + 1],), elements=_unit)) if draw(st.booleans()) else None
        layers.append([W, b])
    if corner == "saturated_hidden":
        layers[0][0] = layers[0][0] * 25.0
    elif corner == "saturated_logits":
        layers[-1][0] = layers[-1][0] * 40.0
    elif corner == "dead":
        k = draw(st.integers(0, L - 1))
        layers[k][1] = np.full(widths[k + 1], 30.0)
    elif corner in ("huge", "tiny"):
        f = 10.0 ** draw(st.floats(0.5, 1.2)) if corner == "huge" else 10.0 ** -draw(st.floats(1, 4))
        layers = [[W * f, None if b is None else b * f] for W, b in layers]
    X = draw(arrays(np.float64, (n, M), elements=_unit))
    if corner == "near_duplicate" and n >= 2:
        X[1] = X[0] + 1e-9
    y = np.array(draw(st.lists(st.integers(0, 1 if C == 1 else C - 1), min_size=n, max_size=n)), dtype=np.int64)
    if corner == "one_label":
        y[:] = y[0]
    act = draw(st.sampled_from(ACTIVATIONS))
    return DeepCase(tuple((W, b) for W, b in layers), X, y, act)


def moments_property(moments_fn=deep_hessian_moments) -> Property:
    """(tr H, tr H², D) of the closed form equal the dense Hessian's (torch to screen; second-order forward AD of
    the definition in mpmath at 60 digits to confirm: torch's float64 Hessian loses its relative accuracy where the
    logits saturate and H is tiny, so screen hits there are common and only the confirmation counts)."""

    def screen(case):
        H = deep_hessian_torch(case.layers, case.X, case.y, case.activation)
        try:
            m = moments_fn(case.layers, case.X, case.y, case.activation, block=2)
        except ValueError as exc:
            raise NotApplicable(str(exc)) from exc
        if m.dim != H.shape[0]:
            return 1.0
        fro2 = float(np.sum(H * H))
        s1 = max(float(np.sum(np.abs(np.diag(H)))), abs(float(m.trace)), 1e-300)
        s2 = max(fro2, abs(float(m.trace_sq)), 1e-300)
        return max(abs(m.trace - np.trace(H)) / s1, abs(m.trace_sq - fro2) / s2) - TOL["ws_moments_screen"]

    def confirm(case):
        dps = TOL["confirm_dps"]
        H = deep_hessian_mpmath_ad(case.layers, case.X, case.y, case.activation, dps=dps + 10)
        m = moments_fn(case.layers, case.X, case.y, case.activation, dps=dps, block=2)
        if m.dim != H.rows:
            return 1.0
        with mpmath.workdps(dps + 10):
            tr, tr2 = mp_trace_moments(H, dps + 10)
            s1 = sum(abs(H[i, i]) for i in range(H.rows)) + mpmath.mpf(10) ** -300
            return float(max(abs(m.trace - tr) / s1, abs(m.trace_sq - tr2) / (abs(tr2) + mpmath.mpf(10) ** -300))
                         - TOL["ws_confirm_slack"])

    return Property("ws.deep/moments", deep_nets(), screen, confirm, to_json=lambda c: c.to_json(),
                    from_json=DeepCase.from_json, budget=120)


def bound_property(moments_fn=deep_hessian_moments) -> Property:
    """λ_max(H) ≤ λ_sup = μ + √(D−1)σ for deep nets (λ_max of the torch Hessian to screen; eigsy of the 60-digit
    forward-AD Hessian to confirm)."""

    def screen(case):
        H = deep_hessian_torch(case.layers, case.X, case.y, case.activation)
        lmax = float(np.linalg.eigvalsh(H)[-1])
        try:
            lsup = float(moments_fn(case.layers, case.X, case.y, case.activation).lambda_sup)
        except ValueError as exc:
            raise NotApplicable(str(exc)) from exc
        return (lmax - lsup) / (np.linalg.norm(H) + 1e-300) - TOL["ws_screen_slack"]

    def confirm(case):
        dps = TOL["confirm_dps"]
        H = deep_hessian_mpmath_ad(case.layers, case.X, case.y, case.activation, dps=dps + 10)
        with mpmath.workdps(dps + 10):
            lsup = moments_fn(case.layers, case.X, case.y, case.activation, dps=dps).lambda_sup
            scale = mpmath.sqrt(mp_trace_moments(H, dps + 10)[1]) + mpmath.mpf(10) ** -300
            lmax = max(mpmath.eigsy(H, eigvals_only=True))
            return float((lmax - lsup) / scale - TOL["ws_confirm_slack"])

    return Property("ws.deep/bound", deep_nets(), screen, confirm, to_json=lambda c: c.to_json(),
                    from_json=DeepCase.from_json, budget=120)


PROPERTIES = (moments_property(), bound_property())


def level_F(ctx: Context) -> Outcome:
    return run_properties(ctx, PROPERTIES, ID)
