"""Ball arithmetic for the ws *references* (:mod:`numerics.ws.reference`), written apart from the closed form's
helper (:mod:`numerics.ws.arb_balls`) so that a defect in one cannot hide in the other: the reference judges the closed
form, so it shares no code with it below SymPy's generated Hessian entries and python-flint itself.

Every function returns ``flint.arb`` balls that enclose the exact value of what they stand for, from float64 inputs
converted exactly. The unit tables (φ, φ′, φ″) of the named activations are written from their definitions in forms
that lose no digits where the activation saturates; a SymPy activation is evaluated by mpmath at extra digits and
converted exactly (its tables are then not enclosures, and ``rigorous`` says so).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
from flint import arb, arb_mat, ctx

__all__ = ["bits", "exact_arb", "object_array", "matmul", "unit_tables", "logistic", "refine"]


def bits(dps: int) -> int:
    return int(math.ceil(dps * 3.3219280948873626)) + 1


def exact_arb(x) -> arb:
    """A float, an int or an mpmath number as an exact arb (no rounding)."""
    if isinstance(x, arb):
        return x
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            raise ValueError(f"cannot convert {x} to a finite arb")
        man, exp = int(x.man), int(x.exp)
        return arb((man, exp))
    f = float(x)
    if not math.isfinite(f):
        raise ValueError(f"cannot convert {x} to a finite arb")
    m, e = math.frexp(f)
    return arb((int(m * 2**53), e - 53))


def object_array(values) -> np.ndarray:
    a = np.asarray(values, dtype=object)
    out = np.empty(a.shape, dtype=object)
    out.flat[:] = [exact_arb(x) for x in a.flat]
    return out


def matmul(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """(n × k) @ (k × m) of object arrays of arb, by arb_mat."""
    n, k = A.shape
    m = B.shape[1]
    if k == 0:
        return np.full((n, m), arb(0), dtype=object)
    C = arb_mat(A.tolist()) * arb_mat(B.tolist())
    return np.array(C.entries(), dtype=object).reshape(n, m)


def logistic(t: arb) -> tuple[arb, arb]:
    """(σ(t), σ(−t)) = (1/(1 + e^{−t}), 1/(1 + e^{t})), each from the exponential of a non-positive number (no
    overflow; no 1 − σ cancellation)."""
    if t >= 0:
        e = (-t).exp()
        return 1 / (1 + e), e / (1 + e)
    if t < 0:
        e = t.exp()
        return e / (1 + e), 1 / (1 + e)
    # a ball around 0: both forms are accurate there
    e = (-t).exp()
    return 1 / (1 + e), 1 - 1 / (1 + e)


def _tables_sigmoid(t):
    s, sm = logistic(t)
    d = s * sm
    return s, d, d * (sm - s)                          # σ″ = σ′(1 − 2σ) = σ′(σ(−t) − σ(t))


def _tables_tanh(t):
    th = t.tanh()
    ch = t.cosh()
    d = 1 / (ch * ch)                                  # sech², no 1 − tanh² cancellation
    return th, d, -2 * th * d


def _tables_softplus(t):
    s, sm = logistic(t)
    val = (t.exp()).log1p() if t < 0 else t + ((-t).exp()).log1p()
    return val, s, s * sm


def _tables_gelu(t):
    big = 1 / arb(2).sqrt()
    cdf = (-t * big).erfc() / 2
    pdf = (-(t * t) / 2).exp() / (2 * arb.pi()).sqrt()
    return t * cdf, cdf + t * pdf, (2 - t * t) * pdf


_NAMED: dict[str, Callable] = {"sigmoid": _tables_sigmoid, "tanh": _tables_tanh, "softplus": _tables_softplus,
                               "gelu": _tables_gelu}


def unit_tables(W, b, X, act, dps: int):
    """((φ, φ′, φ″) at the pre-activations XWᵀ + b, each an (n, N) object array of arb; X as an object array;
    rigorous) at the current ``ctx.prec``."""
    Wa, Xa = object_array(W), object_array(X)
    A = matmul(Xa, Wa.T)
    if b is not None:
        A = A + object_array(b)[None, :]
    form = _NAMED.get(act.name)
    rigorous = form is not None
    if form is None:
        def form(t):
            with mpmath.workdps(dps + 20):
                mid = t.mid()
                man, exp = mid.man_exp()
                x = mpmath.mpf((int(man), int(exp)))
                return tuple(exact_arb(mpmath.mpf(v)) for v in act.mp(x))
    out = np.frompyfunc(form, 1, 3)(A)
    return tuple(np.asarray(o, dtype=object) for o in out), Xa, rigorous


def fixes(x: arb, dps: int) -> bool:
    return x.is_exact() or (x.is_finite() and int(x.rel_accuracy_bits()) >= bits(dps) + 4)


def refine(evaluate: Callable[[], tuple], dps: int, *, guard_bits: int = 64, max_doublings: int = 6):
    """``evaluate()`` (returning (balls to check, anything)) at bits(dps) + guard bits, the guard doubled until the
    balls fix ``dps`` digits or ``max_doublings`` is reached. Returns (the result, the precision in bits)."""
    guard = guard_bits
    for attempt in range(max_doublings + 1):
        prec = bits(dps) + guard
        with ctx.workprec(prec):
            out = evaluate()
        if attempt == max_doublings or all(fixes(x, dps) for x in out[0]):
            return out, prec
        guard *= 2
    raise AssertionError("unreachable")
