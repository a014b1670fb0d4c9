"""The single-pole nets of ``rob.single_pole`` (SPEC §4): a Hypothesis strategy aimed at the degenerate cases
(thresholds near ±1 and coinciding after rounding, β = 0, v_⊥ = 0, spikes of 2²⁰ cancelling units, integer
norms from Pythagorean quadruples) and the reader that turns a JSON case back into an exact or a float net."""

from __future__ import annotations

from fractions import Fraction as Fr

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from checks.rob.rational import basis, nonzero_rational, rational_unit_vector, small_rational, threshold_pool

DIMS = (3, 8, 64)
PYTH = ((1, 2, 2), (2, 3, 6), (1, 4, 8), (2, 6, 9), (4, 4, 7), (1, 12, 12), (3, 4, 12))  # integer norms


def _frac_str(x: Fr) -> str:
    return str(x)


@st.composite
def pole_case(draw, dims=DIMS):
    """A single-pole net on S^{d−1} as plain JSON. ``mode``: "exact" (rational strings) or "float" (rows
    λ_k w₀ with integer w₀ and dyadic λ_k, so that the float net is still exactly single-pole)."""
    d = draw(st.sampled_from(dims))
    mode = draw(st.sampled_from(["exact", "float"]))
    dkind = draw(st.sampled_from(["axis", "pyth", "integer"] + (["rational_unit"] if mode == "exact" else [])))
    if dkind == "axis":
        w0 = [Fr(x) for x in basis(d, draw(st.integers(0, d - 1)), draw(st.sampled_from([1, -1])))]
        q = Fr(1)
    elif dkind == "pyth":
        trip = draw(st.sampled_from(PYTH))
        pos = draw(st.lists(st.integers(0, d - 1), min_size=3, max_size=3, unique=True))
        w0 = [Fr(0)] * d
        for p_, t_ in zip(pos, trip, strict=True):
            w0[p_] = Fr(t_ * draw(st.sampled_from([1, -1])))
        q = Fr(int(round(sum(float(x) ** 2 for x in w0) ** 0.5)))
    elif dkind == "integer":
        k = draw(st.integers(1, min(d, 6)))
        pos = draw(st.lists(st.integers(0, d - 1), min_size=k, max_size=k, unique=True))
        w0 = [Fr(0)] * d
        for p_ in pos:
            w0[p_] = Fr(draw(st.integers(-4, 4).filter(lambda z: z != 0)))
        q = Fr(float(sum(x * x for x in w0)) ** 0.5)  # ≈ ‖w₀‖: thresholds are then t·q/‖w₀‖ (some cross ±1)
    else:
        w0 = rational_unit_vector(draw, d, mode=draw(st.sampled_from(["sparse", "axis"])))
        q = Fr(1)
    amode = draw(st.sampled_from(["small", "small", "cancel", "spike"]))
    if amode == "spike" and dkind != "integer":
        W, b, a, v = _spike(draw, w0, q)
    else:
        W, b, a, v = _generic_pole(draw, d, w0, q, amode)
    c = small_rational(draw, -1, 1)
    conv = (lambda x: _frac_str(x)) if mode == "exact" else (lambda x: float(x))
    return {"d": d, "mode": mode, "dir": dkind, "amode": amode,
            "W": [[conv(x) for x in w] for w in W], "b": [conv(x) for x in b], "a": [conv(x) for x in a],
            "v": [conv(x) for x in v], "c": conv(c)}


SPIKE_LADDER = (-(1 - Fr(1, 2**10)), Fr(-7, 8), Fr(-1, 2), Fr(0), Fr(1, 2), Fr(7, 8), 1 - Fr(1, 2**10),
                1 - Fr(1, 2**30))


def _spike(draw, w0, q):
    """The extremal profile of static rigidity: |B_j| just below L/√(1 − s_j*²) on every interval (L = 1, p = 0,
    s_j* the interval's point nearest 0), random signs. TV/L then approaches π (≈ 2.4 with this ladder)."""
    ts = sorted(draw(st.lists(st.sampled_from(SPIKE_LADDER), min_size=2, max_size=len(SPIKE_LADDER), unique=True)))
    ends = [None, *ts, None]
    Bs = []
    for j in range(len(ts) + 1):
        lo, hi = ends[j], ends[j + 1]
        if (lo is None or lo < 0) and (hi is None or hi > 0):
            sstar = Fr(0)
        else:
            sstar = lo if lo is not None and lo >= 0 else hi
        cap = 1 / (1 - float(sstar) ** 2) ** 0.5
        Bs.append(Fr(int(cap * 2**20) - 1, 2**20) * draw(st.sampled_from([1, -1])))
    unit = [x / q for x in w0]  # rational unit vector (q = ‖w₀‖ exactly for axis/pyth/rational poles)
    W = [list(w0) for _ in ts]
    b = [-t * q for t in ts]
    a = [(Bs[k + 1] - Bs[k]) / q for k in range(len(ts))]  # α_k = a_k‖w₀‖
    v = [Bs[0] * x for x in unit]
    return W, b, a, v


def _generic_pole(draw, d, w0, q, amode):
    m = draw(st.integers(1, 6))
    ts = threshold_pool(draw, m)
    if m >= 2 and draw(st.booleans()):  # two thresholds 2^-60 apart: distinct exactly, one after rounding
        ts[1] = ts[0] + Fr(1, 2**60) if ts[0] + Fr(1, 2**60) < 1 else ts[0] - Fr(1, 2**60)
    W, b, a = [], [], []
    for k, t in enumerate(ts):
        lam = Fr(draw(st.sampled_from([1, 3, 5, 7])) * draw(st.sampled_from([1, -1])))
        lam *= Fr(2) ** draw(st.integers(-3, 3))
        W.append([lam * x for x in w0])
        b.append(-lam * t * q)
        if amode == "cancel":
            a.append(Fr((-1) ** k * 2**20) + small_rational(draw, -1, 1))
        else:
            a.append(nonzero_rational(draw, -3, 3))
    vmode = draw(st.sampled_from(["zero", "parallel", "perp", "pole_plane", "generic"]))
    N = sum(x * x for x in w0)
    beta = Fr(0) if draw(st.booleans()) else small_rational(draw, -2, 2)
    if amode == "cancel":
        beta = Fr(-(2**20)) + beta  # cancels the first kink's 2^20 on one side
    z = [Fr(draw(st.integers(-3, 3))) for _ in range(d)]
    zperp = [zi - sum(x * y for x, y in zip(z, w0, strict=True)) / N * wi for zi, wi in zip(z, w0, strict=True)]
    if vmode == "zero":
        v = [Fr(0)] * d
    elif vmode == "parallel":
        v = [beta * x for x in w0]
    elif vmode == "perp":
        v = zperp
    elif vmode == "pole_plane":
        j = draw(st.integers(0, d - 1))
        v = [beta * x for x in w0]
        v[j] += small_rational(draw, -2, 2)
    else:
        v = [beta * x + y for x, y in zip(w0, z, strict=True)]
    return W, b, a, v


def read_net(case):
    if case["mode"] == "exact":
        R = lambda x: sp.Rational(Fr(x).numerator, Fr(x).denominator)  # noqa: E731
        return ([[R(x) for x in w] for w in case["W"]], [R(x) for x in case["b"]], [R(x) for x in case["a"]],
                [R(x) for x in case["v"]], R(case["c"]))
    d = case["d"]
    return (np.asarray(case["W"], float).reshape(len(case["W"]), d), np.asarray(case["b"], float),
            np.asarray(case["a"], float), np.asarray(case["v"], float), float(case["c"]))
