r"""Midpoint–radius interval arithmetic (Rump) and the rigorous node bounds of :mod:`numerics.rob.bracket`.

Every enclosure is a pair (mid, rad) of float arrays with |exact − mid| ≤ rad entrywise. Each float op's
rounding error (γ_n|x|·|y| for a length-n dot product, u|x| per op, plus an absolute 1e-300 per op for
underflow) is added to the radius and radii are inflated by (1 + γ); scalar roots/powers use arb.

Shor bound of a zonotope's largest vertex
-----------------------------------------
For a d × n matrix B (columns b_i) and any weights w_i > 0, every ε ∈ {±1}^n satisfies
    ‖Bε‖² = ‖B W^{1/2} · W^{-1/2} ε‖² ≤ λ_max(B W Bᵀ) · Σ_i 1/w_i        (W = diag w, ε_i² = 1),
so max_ε ‖Bε‖ ≤ (λ_max(BWBᵀ) Σ 1/w_i)^{1/2}. Minimising over w is the dual of Shor's SDP relaxation
max tr(BᵀB Y), diag Y = 1, Y ⪰ 0. The weights come from a warm-started Burer–Monteiro ascent
(v_i ← normalise(Bᵀ B V)_i, rank ≤ 8; at its fixed point 1/w_i = ‖(BᵀBV)_i‖ is dual optimal); they are
only a heuristic choice: the inequality holds for every w, and λ_max of the enclosed PSD d × d matrix
BWBᵀ is bounded rigorously by ‖H^{2^q}‖_F^{2^{-q}} (≥ ‖H‖₂ = λ_max; q = 10, at most (multiplicity)^{2^{-q}}
above it), computed by q squarings with power-of-two rescaling.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb, fmpq

U = 2.0 ** -53
TINY = 1e-300


def to_fmpq(x) -> fmpq:
    """x exactly as a flint rational: a Fraction as it is, a float as the binary rational it is."""
    f = x if isinstance(x, Fraction) else Fraction(float(x))
    return fmpq(f.numerator, f.denominator)


def fmpq_float(q) -> float:
    """The float nearest to the flint rational q (correctly rounded by Fraction)."""
    return float(Fraction(int(q.p), int(q.q)))


def pow2_q(e: int) -> fmpq:
    """2^e as an exact rational (any integer e)."""
    e = int(e)
    return fmpq(2 ** e) if e >= 0 else fmpq(1, 2 ** -e)


def scale_exponent(m: float) -> int:
    """k with 2^k·m in [½, 1) for m > 0 (0 for m ≤ 0): the power of two that scales a magnitude to ~1 exactly."""
    return -math.frexp(m)[1] if m > 0 else 0


def snap_q(x: float, scale: float, bits: int = 40) -> fmpq:
    """x rounded to a multiple of 2^(e − bits), e the exponent of ``scale``: a short exact rational for a solver's
    multiplier (0 for a scale ≤ 0 or a non-finite x)."""
    if scale <= 0 or not math.isfinite(x):
        return fmpq(0)
    e = math.frexp(scale)[1] - bits
    k = round(math.ldexp(x, -e))
    return fmpq(k) * pow2_q(e)


def arb_mid_fmpq(a) -> fmpq:
    """The midpoint of the arb ``a`` as an exact rational."""
    man, exp = a.mid().man_exp()
    return fmpq(int(man)) * pow2_q(exp)


def gamma_n(n):
    return n * U / (1 - n * U)


def round_up(x, n=4):
    return x * (1 + gamma_n(n + 2)) + TINY * (n + 2)


def iv_matmul(Am, Ar, Bm, Br=None):
    """Enclosure of the product of [Am ± Ar] and [Bm ± Br] (Br None: B exact)."""
    n = Am.shape[-1]
    Cm = Am @ Bm
    aA, aB = np.abs(Am), np.abs(Bm)
    Cr = Ar @ aB + gamma_n(n) * (aA @ aB)
    if Br is not None:                  # Σ_k Ar_ik Br_kj ≤ (Σ_k Ar_ik)·max_k Br_kj: no subnormal matmul
        rr = np.multiply.outer(np.sum(Ar, axis=-1), np.max(Br, axis=0)) if Ar.ndim == 2 and Br.ndim == 2 \
            else Ar @ Br
        Cr = Cr + aA @ Br + round_up(rr, n)
    return Cm, round_up(Cr, 2 * n + 8)


def iv_add(am, ar, bm, br):
    m = am + bm
    return m, round_up(ar + br + U * np.abs(m))


def norm_up(m, r):
    x = np.abs(m) + r
    return round_up(math.sqrt(float(np.sum(x * x))), x.size + 4)


def sqrt_up(x):
    return round_up(math.sqrt(max(x, 0.0)))


def sqrt_up_q(q) -> float:
    """A float ≥ √q for the flint rational q ≥ 0 (0 for q ≤ 0): the correctly rounded float of q stepped up, then a
    rounded-up square root."""
    if q <= 0:
        return 0.0
    return sqrt_up(float(np.nextafter(fmpq_float(q), np.inf)))


def _lam_up(Hm, Hr, q=8):
    """Upper bound of λ_max of the exact PSD matrix in [Hm ± Hr] via ‖H^{2^q}‖_F^{2^-q}."""
    S = 0
    for _ in range(q):
        s = float(np.max(np.abs(Hm) + Hr))
        if s == 0.0:
            return 0.0
        e = math.frexp(s)[1]
        Hm, Hr = np.ldexp(Hm, -e), round_up(np.ldexp(Hr, -e))
        S += e
        Hm, Hr = iv_matmul(Hm, Hr, Hm, Hr)
        S *= 2
    F = norm_up(Hm, Hr)
    if F == 0.0:
        return 0.0
    val = (arb(2) ** (arb(S) / 2 ** q)) * (arb(F) ** (arb(1) / 2 ** q))
    return float(np.nextafter(float(val.upper()), np.inf)) * (1 + 4 * U)


def bm_ascent(Bm, V, iters):
    """Burer–Monteiro ascent for max tr(BᵀB VVᵀ), unit rows of V (floats; heuristic)."""
    for _ in range(iters):
        Y = Bm.T @ (Bm @ V)
        V = Y / np.maximum(np.linalg.norm(Y, axis=1), 1e-300)[:, None]
    return V


def shor_bound(Bm, Br, V, iters=15, q=10):
    """Rigorous upper bound of max_{ε ∈ {±1}^n} ‖Bε‖ over every exact B in [Bm ± Br] (d × n), and the
    ascended V (n × r) to warm-start the children."""
    V = bm_ascent(Bm, V, iters)
    D = np.linalg.norm(Bm.T @ (Bm @ V), axis=1)
    top = float(np.max(D)) if D.size else 0.0
    if not top > 0 or not math.isfinite(top):
        return math.inf, V
    w = 1.0 / np.maximum(D, 1e-12 * top)                     # any w > 0 is valid
    BWm = Bm * w
    BWr = round_up(Br * w + U * np.abs(BWm))
    Hm, Hr = iv_matmul(BWm, BWr, Bm.T, Br.T)
    lam = _lam_up(Hm, Hr, q)
    S = round_up(float(np.sum(1.0 / w)) * (1 + 2 * U), w.size + 4)
    ub = sqrt_up(round_up(lam * S))
    return (ub if math.isfinite(ub) else math.inf), V
