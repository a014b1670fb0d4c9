r"""Exact geodesic Lipschitz constant of a single-pole ReLU net on S^{d-1} (SPEC §4, "Single-pole networks").

A net ``(W, b, a, v, c)`` is *single-pole* when every non-zero row ``W_k`` is parallel (either
orientation) to one unit vector ``u_0``. Then, on the sphere,

    f(x) = v·x + c + Σ_k α_k ReLU(u_0·x − t_k),      v = β u_0 + v_⊥,  v_⊥ ⊥ u_0,

and with ``B(s) = β + Σ_{t_k < s} α_k`` the largest tangential gradient norm² on the level set
``u_0·x = s`` is (d ≥ 3, so that the level set's direction ⊥ u_0 sweeps a full circle's worth of
``v_⊥·y``)

    F(s) = B(s)² + p² − max(0, |B(s) s| − √(1−s²) p)²,      p = ‖v_⊥‖,

and ``Lip_{S^{d-1}}(f)² = sup F`` over ``s ∈ (−1, 1)`` off the thresholds.

**Closed form per interval.** ``B`` is constant (= B_j) on each interval ``I_j`` between
consecutive thresholds in (−1, 1). There ``F`` depends on ``|s|`` only and is non-increasing in
``|s|``: it equals ``B_j² + p²`` while ``|B_j||s| ≤ p√(1−s²)`` (i.e. ``s²(B_j²+p²) ≤ p²``) and
beyond that ``|B_j||s| − p√(1−s²)`` grows with ``|s|``. So the supremum over ``I_j`` is ``F`` at
the point of the closure nearest to 0: ``s = 0`` if 0 lies inside ``I_j``, else the endpoint of
smaller modulus (a supremum, attained only in the closure). No grid is involved.

**Reduction (exact).** For unit k with ``W_k = λ_k u_0`` (u_0 = W_{k0}/‖W_{k0}‖ for the first
non-zero row, ``λ_k = W_k·W_{k0}/‖W_{k0}‖``):

* ``λ_k > 0``:  a_k ReLU(λ_k s + b_k) = α_k ReLU(s − t_k) with α_k = a_k λ_k, t_k = −b_k/λ_k;
* ``λ_k < 0``:  a_k ReLU(λ_k s + b_k) = α_k ReLU(t_k − s) = α_k ReLU(s − t_k) − α_k (s − t_k) with
  α_k = a_k|λ_k|, t_k = −b_k/λ_k, so β gains −α_k;
* zero rows are constants (absorbed into c; they do not affect the gradient);
* thresholds ``t_k ≤ −1`` are affine on the sphere (β gains α_k), ``t_k ≥ 1`` vanish on it; equal
  thresholds merge.

With ``N = ‖W_{k0}‖²`` (rational), every threshold is ``r_k √N``, every B value is
``q_j / √N`` (r_k, q_j rational) and ``p² = ‖v‖² − (v·W_{k0})²/N`` is rational. Hence every
candidate value has the form ``P + Q √Y`` with rational P, Q ≥ 0, Y ≥ 0, and every decision
(ordering thresholds, comparing with ±1, the region test, the final maximum) is made in exact
rational arithmetic (:class:`fractions.Fraction`, squaring with sign bookkeeping). SymPy only
builds the exact output expressions.

Inputs: ints, floats (taken as the exact binary rationals they are), ``Fraction``, SymPy
``Integer``/``Rational``/``Float``. NaN/inf, irrational SymPy entries and shape mismatches raise
``ValueError``. The domain is the sphere S^{d-1} only, d ≥ 3 (for d = 2 the level sets are two points
and the formula is wrong).

This module is an independent oracle: it imports nothing from the rest of ``numerics.rob`` or
``checks``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

__all__ = ["SinglePoleLipschitz", "single_pole_lipschitz"]


@dataclass(frozen=True)
class SinglePoleLipschitz:
    """Result of :func:`single_pole_lipschitz`.

    value        float Lip_{S^{d-1}}(f) (correctly rounded from the exact value, up to evalf)
    exact        SymPy exact Lip (sqrt of ``lipschitz2``)
    lipschitz2   SymPy exact Lip², of the form P + Q·sqrt(Y) with rationals P, Q, Y
    argmax_s     SymPy exact level s ∈ [−1, 1] (closure of the winning interval) where sup F is attained
    interval     index j of the winning interval (0 = the one starting at −1)
    B            SymPy exact B_j on each interval, in order
    thresholds   SymPy exact interior thresholds t_1 < … < t_K in (−1, 1)
    u0           SymPy exact pole direction (unit vector)
    beta, p2     SymPy exact β (after absorbing orientation flips and thresholds ≤ −1) and ‖v_⊥‖²
    parts        (P, Q, Y) as Fractions: Lip² = P + Q·√Y exactly (for exact comparisons)
    """

    value: float
    exact: sp.Expr
    lipschitz2: sp.Expr
    argmax_s: sp.Expr
    interval: int
    B: tuple
    thresholds: tuple
    u0: tuple
    beta: sp.Expr
    p2: sp.Expr
    parts: tuple = ()


# ----------------------------------------------------------------------------------------- input
def _frac(x, what: str) -> Fraction:
    if isinstance(x, bool):
        return Fraction(int(x))
    if isinstance(x, Fraction):
        return x
    if isinstance(x, sp.Basic):
        if isinstance(x, sp.Float):
            if not x.is_finite:
                raise ValueError(f"{what} is not finite: {x}")
            x = sp.Rational(x)
        if isinstance(x, sp.Rational):
            return Fraction(int(x.p), int(x.q))
        if x.is_Number and not x.is_finite:
            raise ValueError(f"{what} is not finite: {x}")
        raise ValueError(f"{what} must be rational (got the SymPy expression {x})")
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    if isinstance(x, numbers.Real):
        xf = float(x)
        if not math.isfinite(xf):
            raise ValueError(f"{what} is not finite: {x}")
        return Fraction(xf)
    raise ValueError(f"{what}: unsupported entry type {type(x).__name__}")


def _rows(M, what):
    try:
        return [list(r) for r in M]
    except TypeError as exc:  # pragma: no cover - defensive
        raise ValueError(f"{what} must be a 2-D array") from exc


def _vec(x, what):
    if hasattr(x, "shape") and len(x.shape) != 1:
        raise ValueError(f"{what} must be 1-D, got shape {x.shape}")
    try:
        return list(x)
    except TypeError as exc:
        raise ValueError(f"{what} must be 1-D") from exc


def _parse(net):
    try:
        W, b, a, v, c = net
    except (TypeError, ValueError) as exc:
        raise ValueError("net must be a tuple (W, b, a, v, c)") from exc
    v = [_frac(x, f"v[{i}]") for i, x in enumerate(_vec(v, "v"))]
    d = len(v)
    Wr = _rows(W, "W")
    if hasattr(W, "shape") and len(W.shape) == 2 and W.shape[0] == 0 and W.shape[1] not in (0, d):
        raise ValueError(f"W has {W.shape[1]} columns but v has length {d}")
    m = len(Wr)
    Wf = []
    for k, row in enumerate(Wr):
        if len(row) != d:
            raise ValueError(f"W row {k} has length {len(row)}, expected d = {d} (len(v))")
        Wf.append([_frac(x, f"W[{k},{i}]") for i, x in enumerate(row)])
    b = _vec(b, "b")
    a = _vec(a, "a")
    if len(b) != m or len(a) != m:
        raise ValueError(f"W has {m} rows but len(b) = {len(b)}, len(a) = {len(a)}")
    bf = [_frac(x, f"b[{k}]") for k, x in enumerate(b)]
    af = [_frac(x, f"a[{k}]") for k, x in enumerate(a)]
    if isinstance(c, (list, tuple)) or (hasattr(c, "shape") and c.shape not in ((), None)):
        raise ValueError("c must be a scalar")
    cf = _frac(c, "c")
    return Wf, bf, af, v, cf, d


# ------------------------------------------------------------------------ exact sign primitives
def _sgn(q: Fraction) -> int:
    return (q > 0) - (q < 0)


def _sign1(a: Fraction, b: Fraction, y: Fraction) -> int:
    """Exact sign of a + b√y (y ≥ 0)."""
    sa, sb = _sgn(a), _sgn(b) if y != 0 else 0
    if sb == 0:
        return sa
    if sa == 0 or sa == sb:
        return sb
    diff = a * a - b * b * y  # sign of |a| − |b|√y
    return sa if diff > 0 else (sb if diff < 0 else 0)


def _sign2(a: Fraction, b: Fraction, y: Fraction, c: Fraction, z: Fraction) -> int:
    """Exact sign of a + b√y + c√z (y, z ≥ 0)."""
    sx = _sign1(a, b, y)
    sc = _sgn(c) if z != 0 else 0
    if sc == 0:
        return sx
    if sx == 0 or sx == sc:
        return sc
    # compare X² with c² z, X = a + b√y: X² = a² + b² y + 2ab√y
    s = _sign1(a * a + b * b * y - c * c * z, 2 * a * b, y)
    return sx if s > 0 else (sc if s < 0 else 0)


def _isqrt_frac(q: Fraction):
    """√q as a Fraction when q is a perfect rational square, else None."""
    if q < 0:
        return None
    n, d = q.numerator, q.denominator
    rn, rd = math.isqrt(n), math.isqrt(d)
    return Fraction(rn, rd) if rn * rn == n and rd * rd == d else None


# ------------------------------------------------------------------------------------ main
def single_pole_lipschitz(net) -> SinglePoleLipschitz:
    """Exact ``Lip_{S^{d-1}}(f)`` (geodesic) of a single-pole net ``(W, b, a, v, c)``, d ≥ 3.

    Raises ``ValueError`` if the non-zero rows of W are not all parallel (exact rank-1 test), if
    d < 3, on NaN/inf or on shape mismatch. See the module docstring for the derivation.
    """
    W, b, a, v, _c, d = _parse(net)
    if d < 3:
        raise ValueError(f"the single-pole formula needs d >= 3 (got d = {d})")

    nz = [k for k, w in enumerate(W) if any(x != 0 for x in w)]
    if nz:
        w0 = W[nz[0]]
    else:
        w0 = [Fraction(1)] + [Fraction(0)] * (d - 1)
    piv = next((i for i, x in enumerate(w0) if x != 0), 0)
    for k in nz:
        w = W[k]
        for i in range(d):  # rank 1 ⟺ every 2x2 minor against the pivot column of row k0 vanishes
            if w[i] * w0[piv] - w[piv] * w0[i] != 0:
                raise ValueError(
                    f"not a single-pole net: row {k} of W is not parallel to row {nz[0]} "
                    f"(2x2 minor ({i},{piv}) is {float(w[i] * w0[piv] - w[piv] * w0[i])!r})"
                )
    N = sum(x * x for x in w0)  # ‖w0‖², rational, > 0
    vw = sum(x * y for x, y in zip(v, w0, strict=False))
    # Work in "rational coordinates": β = βq/√N, α_k = αq_k/√N, t_k = r_k √N.
    beta_q = vw
    p2 = sum(x * x for x in v) - vw * vw / N
    thr: dict[Fraction, Fraction] = {}
    for k in nz:
        D = sum(x * y for x, y in zip(W[k], w0, strict=False))  # λ_k = D/√N, D ≠ 0 since rows are parallel and non-zero
        r = -b[k] / D  # t_k = −b_k/λ_k = r √N
        aq = a[k] * abs(D)  # α_k √N
        if D < 0:
            beta_q -= aq
        tt = r * r * N  # t_k²
        if tt >= 1:
            if r < 0:  # t_k ≤ −1: always active on the sphere
                beta_q += aq
            continue  # t_k ≥ 1: never active off a measure-zero set
        thr[r] = thr.get(r, Fraction(0)) + aq
    rs = sorted(r for r, aq in thr.items() if aq != 0)  # √N > 0, so order of r = order of t

    # Intervals: (−1, t_1), (t_1, t_2), ..., (t_K, 1); B_j = Bq_j/√N.
    Bq = [beta_q]
    for r in rs:
        Bq.append(Bq[-1] + thr[r])
    K = len(rs)
    best = None  # (P, Q, Y, j, s_rat, s_kind)
    for j in range(K + 1):
        lo = rs[j - 1] if j > 0 else None  # None = −1
        hi = rs[j] if j < K else None  # None = +1
        B2 = Bq[j] * Bq[j] / N
        if (lo is None or lo < 0) and (hi is None or hi > 0):
            s_r, s2 = Fraction(0), Fraction(0)  # 0 inside the interval
        elif lo is not None and lo >= 0:
            s_r, s2 = lo, lo * lo * N
        else:
            s_r, s2 = hi, hi * hi * N
        if s2 * (B2 + p2) <= p2:
            P, Q, Y = B2 + p2, Fraction(0), Fraction(0)
        else:
            # F = B² + p² − (X − √Y)², X = |B||s| = |Bq| |r| (rational), Y = p²(1 − s²)
            X = abs(Bq[j] * s_r)
            Y = p2 * (1 - s2)
            P, Q = B2 + p2 - X * X - Y, 2 * X
        if best is None or _sign2(P - best[0], Q, Y, -best[1], best[2]) > 0:
            best = (P, Q, Y, j, s_r)
    P, Q, Y, jbest, s_r = best

    sqrtN = sp.sqrt(sp.Rational(N.numerator, N.denominator))
    inv_sqrtN = 1 / sqrtN  # one radsimp, then rational multiples (dividing each entry by √N costs one each)
    R = lambda q: sp.Rational(q.numerator, q.denominator)  # noqa: E731
    rtY = _isqrt_frac(Y)
    if Q == 0 or Y == 0:
        lip2 = R(P)
    elif rtY is not None:
        lip2 = R(P + Q * rtY)
    else:
        lip2 = R(P) + R(Q) * sp.sqrt(R(Y))
    exact = sp.sqrt(lip2)
    value = float(sp.N(exact, 30))
    return SinglePoleLipschitz(
        value=value,
        exact=exact,
        lipschitz2=lip2,
        argmax_s=R(s_r) * sqrtN,
        interval=jbest,
        B=tuple(R(q) * inv_sqrtN for q in Bq),
        thresholds=tuple(R(r) * sqrtN for r in rs),
        u0=tuple(R(x) * inv_sqrtN for x in w0),
        beta=R(beta_q) * inv_sqrtN,
        p2=R(p2),
        parts=(P, Q, Y),
    )
