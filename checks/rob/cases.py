r"""The rob paper's deterministic cases (P, A and S levels): exact rational nets and exact evaluation.

A net is ``(W, b, a, v, c)`` for f(x) = Σ_k a_k ReLU(W_k·x + b_k) + v·x + c. The builders here draw
small-denominator rationals from a seeded generator, so every level sees the same nets for a seed; the
evaluators work from the definition of f (never from a canonical form).

* :func:`exact_net` — a random rational net, optionally with planted structure (a same-hyperplane pair
  and a ±10⁶ cancelling pair with different scalings);
* :func:`mp_net` — f of a net in mpmath at the working precision;
* :func:`exact_eval` — f at an exact point, in SymPy;
* :func:`stereo` — rational points of S^{d−1} (inverse stereographic projection);
* :func:`rational_orthogonal` — an exact rational rotation (Cayley transform).
"""

from __future__ import annotations

import sympy as sp

from numerics import rob


def rat(x, den=64):
    """The nearest rational with denominator ``den``."""
    return sp.Rational(round(float(x) * den), den)


def exact_net(rng, m, d, *, planted=True):
    """A random net with small-denominator rational entries, optionally with planted structure."""
    W = [[rat(x) for x in rng.normal(size=d)] for _ in range(m)]
    W = [w if any(w) else [sp.Integer(1)] + w[1:] for w in W]
    b = [rat(x) for x in 0.4 * rng.normal(size=m)]
    a = [rat(x) for x in rng.normal(size=m)]
    v = [rat(x) for x in 0.5 * rng.normal(size=d)]
    if planted:  # a same-hyperplane pair (2w, 2b) and a ±10⁶ cancelling pair with different scalings
        W += [[2 * x for x in W[0]], W[1], [3 * x for x in W[1]]]
        b += [2 * b[0], b[1], 3 * b[1]]
        a += [sp.Rational(1, 3), sp.Integer(10) ** 6, -sp.Integer(10) ** 6 / 3]
    return (W, b, a, v, rat(rng.normal()))


def case_of(net):
    """The JSON-case fields of a net tuple."""
    W, b, a, v, c = net
    return {"W": W, "b": b, "a": a, "v": v, "c": c, "d": len(v)}


def mp_net(net):
    """f of a net tuple, evaluated in mpmath at the current precision (from the definition)."""
    W, b, a, v, c = (rob.to_mp(z) for z in net)

    def f(x):
        hidden = sum(ak * max(sum(wi * xi for wi, xi in zip(wk, x, strict=True)) + bk, 0)
                     for wk, bk, ak in zip(W, b, a, strict=True))
        return hidden + sum(vi * xi for vi, xi in zip(v, x, strict=True)) + c
    return f


def exact_eval(net, x):
    """f(x) in SymPy, from the definition (each pre-activation simplified before its ReLU)."""
    W, b, a, v, c = net
    out = c + sum(vi * xi for vi, xi in zip(v, x, strict=True))
    for wk, bk, ak in zip(W, b, a, strict=True):
        z = sp.radsimp(sp.together(sp.expand(sum(wi * xi for wi, xi in zip(wk, x, strict=True)) + bk)))
        out += ak * sp.Max(0, z)
    return out


def stereo(y):
    """Inverse stereographic projection of y ∈ Q^{d−1}×{·}: a rational point on S^{d−1}."""
    y = list(y)
    z = y[:-1]
    s = sum(q * q for q in z)
    return [2 * q / (1 + s) for q in z] + [(s - 1) / (1 + s)] if z else [sp.Integer(1)]


def rational_orthogonal(rng, d):
    """Cayley transform (I − S)(I + S)⁻¹ of a rational skew matrix: an exact rational rotation."""
    S = sp.zeros(d, d)
    for i in range(d):
        for j in range(i + 1, d):
            S[i, j] = rat(rng.normal(), 4)
            S[j, i] = -S[i, j]
    return (sp.eye(d) - S) * (sp.eye(d) + S).inv()
