"""Ball arithmetic (python-flint ``arb``) for the ``dps=`` path of :func:`numerics.ws.ce_hessian_moments`.

The same generated kernels (``numerics/_derived/ws.py``) run on numpy object arrays of ``flint.arb`` balls;
:class:`ArbArray` sends their matrix products (the Gram blocks X̃X̃ᵀ and the unit-table products L Rᵀ) to
``arb_mat`` in C, and the elementwise steps stay on the arb entries. Every ball encloses the exact value of
what it stands for, so the result carries its own error bound: the unit tables φ^(r)(a_ik) and the output
terms q_i, r_i are evaluated by arb's own functions (tanh, sech, exp, erfc, log1p) from the float64 inputs
converted exactly, and the radius of tr H (tr H²) then bounds the distance to the closed form of the float64
network, rounding of the tables and of every sum included. A SymPy activation has no arb form: its tables come
from :meth:`SmoothActivation.mp` at extra digits, converted exactly, and its radius covers the sums only.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
from flint import arb, arb_mat, ctx

from numerics.ws.activations import SmoothActivation

__all__ = ["ArbArray", "arb_array", "arb_tables", "bits_for", "from_mpf", "to_mpf"]


def bits_for(dps: int) -> int:
    """Bits of mantissa for ``dps`` significant decimal digits."""
    return math.ceil(dps * math.log2(10))


def from_mpf(x: mpmath.mpf) -> arb:
    """The mpmath number as an exact arb (mantissa and exponent, no rounding whatever the precisions)."""
    sign, man, exp, _ = x._mpf_
    if not man and exp:  # ±inf, nan
        raise ValueError(f"cannot convert {x} to a finite arb")
    return arb((-man if sign else man, exp))


def to_mpf(x: arb) -> mpmath.mpf:
    """The ball's midpoint as an mpmath number, exactly (mpmath's precision is raised to the mantissa's)."""
    man, exp = x.mid().man_exp()
    man, exp = int(man), int(exp)
    with mpmath.workprec(max(53, man.bit_length() + 1)):
        return mpmath.mpf((man, exp))


class ArbArray(np.ndarray):
    """A numpy object array of ``flint.arb`` whose ``@`` is an ``arb_mat`` product (C loops, exact radii).

    Elementwise arithmetic, slicing, ``.T`` and ``.sum`` are numpy's on the arb entries; the result type of a
    product is again an ``ArbArray`` (an ``arb`` for vector · vector).
    """

    def __array_wrap__(self, obj, context=None, return_scalar=False):
        if obj.shape == ():  # a full reduction (.sum()) is an arb, not a 0-d array
            return obj[()]
        return super().__array_wrap__(obj, context, return_scalar)

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)


def arb_array(values) -> ArbArray:
    """An object array of arb (already arb, or exact conversions of floats and ints) viewed as ArbArray."""
    a = np.asarray(values, dtype=object)
    out = np.empty(a.shape, dtype=object)
    out.flat[:] = [x if isinstance(x, arb) else arb(x) for x in a.flat]
    return out.view(ArbArray)


def augmented(Xa: ArbArray, bias: bool) -> ArbArray:
    """The inputs x̃ = (x, 1) of a net with a hidden bias (the Gram entries x̃_i·x̃_j of the kernels), else ``Xa``."""
    return np.hstack([Xa, arb_array(np.ones((Xa.shape[0], 1)))]).view(ArbArray) if bias else Xa


def _matmul(a, b):
    a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
    if a.ndim > 2 or b.ndim > 2 or a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"ArbArray @ supports 1-d and 2-d operands, got shapes {a.shape} and {b.shape}")
    A = a.reshape(1, -1) if a.ndim == 1 else a
    B = b.reshape(-1, 1) if b.ndim == 1 else b
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not fit")
    rows, cols = A.shape[0], B.shape[1]
    if A.shape[1] == 0:
        C = [arb(0)] * (rows * cols)
    else:
        C = (arb_mat(A.tolist()) * arb_mat(B.tolist())).entries()
    out = np.fromiter(C, dtype=object, count=rows * cols)
    if a.ndim == 1 and b.ndim == 1:
        return out[0]
    shape = (cols,) if a.ndim == 1 else (rows,) if b.ndim == 1 else (rows, cols)
    return out.reshape(shape).view(ArbArray)


# ------------------------------------------------------------------------------------------------ tables
def _expit(t: arb) -> arb:
    """σ(t) = 1/(1 + e^−t); for t < 0 as e^t/(1 + e^t), whose e^t cannot overflow (arb's exp of 1e300 is nan)."""
    if t.mid() >= 0:
        return 1 / (1 + (-t).exp())
    e = t.exp()
    return e / (1 + e)


def _sigmoid(t: arb):
    s, sm = _expit(t), _expit(-t)
    d = s * sm  # s(1 − s) without cancellation
    return s, d, -d * (t / 2).tanh()  # 1 − 2s = −tanh(t/2)


def _tanh(t: arb):
    th, d = t.tanh(), t.sech() ** 2  # 1 − th² without cancellation
    return th, d, -2 * th * d


def _softplus(t: arb):
    sp = t + (-t).exp().log1p() if t.mid() > 0 else t.exp().log1p()  # the branch only picks the accurate form
    return sp, _expit(t), _expit(t) * _expit(-t)


def _gelu(t: arb):
    cdf = (-t / arb(2).sqrt()).erfc() / 2  # not (1 + erf)/2: no cancellation for t ≪ 0
    pdf = (-t * t / 2).exp() / (2 * arb.pi()).sqrt()
    return t * cdf, cdf + t * pdf, (2 - t * t) * pdf


_FORMS: dict[str, Callable[[arb], tuple[arb, arb, arb]]] = {
    "sigmoid": _sigmoid, "tanh": _tanh, "softplus": _softplus, "gelu": _gelu,
}


def arb_tables(W, b, v, c, X, y, act: SmoothActivation, dps: int):
    """(P, q, r, X, v, rigorous): the unit tables, the output terms and the inputs as ArbArrays at the current
    ``ctx.prec``, from the float64 inputs converted exactly.

    ``rigorous`` is True when every entry is an arb enclosure (a named activation), False when the unit tables
    came from :meth:`SmoothActivation.mp` at ``dps + 20`` digits (a SymPy activation), converted exactly.
    """
    va = arb_array(v)
    P, Xa, rigorous = unit_tables(W, b, X, act, dps)
    z = P[0] @ va + (arb(c) if c is not None else 0)
    p, pm = np.frompyfunc(_expit, 1, 1)(z), np.frompyfunc(_expit, 1, 1)(-z)  # σ(z), σ(−z) = 1 − σ(z)
    q = (p * pm).view(ArbArray)  # p(1 − p) without cancellation when p ≈ 1
    r = np.where(np.asarray(y) == 1, -pm, p).view(ArbArray)  # p − y without cancellation
    return P, q, r, Xa, va, rigorous


def unit_tables(W, b, X, act: SmoothActivation, dps: int):
    """((φ, φ′, φ″) of the pre-activations XWᵀ + b as (n, N) ArbArrays, X as an ArbArray, rigorous) at the current
    ``ctx.prec``, from the float64 inputs converted exactly; ``rigorous`` as in :func:`arb_tables`."""
    Wa, Xa = arb_array(W), arb_array(X)
    A = Xa @ Wa.T
    if b is not None:
        A = A + arb_array(b)
    form = _FORMS.get(act.name)
    if form is None:
        def form(t: arb):
            with mpmath.workdps(dps + 20):
                return tuple(from_mpf(x) for x in act.mp(to_mpf(t)))

    return tuple(t.view(ArbArray) for t in np.frompyfunc(form, 1, 3)(A)), Xa, act.name in _FORMS


def accurate(x: arb, dps: int) -> bool:
    """The ball fixes ``dps`` digits: its radius is at most 2^-(bits_for(dps) + 4) of its midpoint (or it is
    exact)."""
    return x.is_exact() or (x.is_finite() and int(x.rel_accuracy_bits()) >= bits_for(dps) + 4)


def until_accurate(evaluate: Callable[[], tuple], dps: int, *, guard_bits: int = 64,
                   max_doublings: int = 3) -> tuple[tuple, int]:
    """``evaluate()`` at ``bits_for(dps) + guard_bits`` bits, repeated with the guard bits doubled (at most
    ``max_doublings`` times) until the balls it returns first, a tuple, all fix ``dps`` digits (:func:`accurate`).
    Returns (the last call's result, its precision in bits); the last balls whatever their width."""
    guard = guard_bits
    for attempt in range(max_doublings + 1):
        prec = bits_for(dps) + guard
        with ctx.workprec(prec):
            out = evaluate()
        if all(accurate(x, dps) for x in out[0]) or attempt == max_doublings:
            return out, prec
        guard *= 2
    raise AssertionError("unreachable")


def proves_positive_definite(A) -> bool:
    """True only if every real symmetric matrix whose entries lie in the balls of ``A`` (a D×D array of arb, read
    from its upper triangle) is positive definite: Cholesky in ball arithmetic, each pivot proved > 0.

    Each ball operation contains the exact result for every point of its operands, so a pivot proved positive is
    positive for every symmetric matrix in the balls, and all D pivots positive is positive definiteness. False
    means "not proved": the matrix may still be positive definite with balls too wide for the proof (the radii
    grow by about its condition number)."""
    D = len(A)
    if not all(A[i][j].is_finite() for i in range(D) for j in range(i, D)):
        return False  # an infinite or nan ball contains no real matrix to prove anything about
    L = [[None] * D for _ in range(D)]
    for k in range(D):
        d = A[k][k] - sum((L[k][j] * L[k][j] for j in range(k)), arb(0))
        if not d > 0:  # arb's > is proved, never a float guess
            return False
        L[k][k] = d.sqrt()
        for i in range(k + 1, D):
            L[i][k] = (A[min(i, k)][max(i, k)] - sum((L[i][j] * L[k][j] for j in range(k)), arb(0))) / L[k][k]
    return True


def rayleigh_lower(A, u) -> arb:
    """A ball containing uᵀAu / uᵀu for the exact vector ``u`` (floats or arbs, converted exactly) and every
    symmetric matrix in the balls of ``A``: its lower end is a proved lower bound on λ_max."""
    u = [x if isinstance(x, arb) else arb(float(x)) for x in u]
    D = len(u)
    num = sum((A[min(i, j)][max(i, j)] * u[i] * u[j] for i in range(D) for j in range(D)), arb(0))
    return num / sum((x * x for x in u), arb(0))


def moments_arb(W, b, v, c, X, y, act: SmoothActivation, dps: int, *, moments: Callable, bias: bool,
                guard_bits: int = 64, max_doublings: int = 3, **kw) -> tuple[arb, arb, bool, int]:
    """(tr H ball, tr H² ball, rigorous, bits): ``moments`` (the kernel sums) run on ArbArrays.

    Starts at ``bits_for(dps) + guard_bits`` bits; while a result ball does not fix ``dps`` digits
    (:func:`accurate`: cancellation in the sums, or saturated units whose sech² lost bits to their arguments'
    widths), the whole evaluation is repeated with the guard bits doubled, at most ``max_doublings`` times
    (:func:`until_accurate`). The last balls are returned whatever their width: their radii say what was achieved.
    """

    def evaluate():
        P, q, r, Xa, va, rigorous = arb_tables(W, b, v, c, X, y, act, dps)
        Xt = augmented(Xa, bias)
        return tuple(arb(x) for x in moments(P, q, r, Xt, va, **kw)), rigorous

    ((tr, tr2), rigorous), prec = until_accurate(evaluate, dps, guard_bits=guard_bits, max_doublings=max_doublings)
    return tr, tr2, rigorous, prec


def round_to_dps(x: arb, dps: int) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(the midpoint rounded to ``dps`` digits, an upper bound on |exact − that number|), as mpmath numbers.

    The bound is computed in arb (the ball minus the rounded number, its |·| taken upward), so it covers the
    ball's radius and the rounding of its midpoint.
    """
    mid = to_mpf(x)
    with mpmath.workdps(dps):
        out = +mid
    with ctx.workprec(2 * bits_for(dps) + 128):  # any precision is rigorous (arb widens); this one is tight
        bound = (x - from_mpf(out)).abs_upper()
    return out, to_mpf(arb(bound))
