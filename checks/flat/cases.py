"""The deterministic cases of the flat P and A levels: one random net and dataset per activation.

:data:`ACTS` covers every family of the paper (ReLU, LeakyReLU, t², ReLU^c, |t|^c, integer and fractional c);
:func:`cases` draws one (a, Theta, X, y) per activation from ``ctx.rng(salt)``, as dyadic rationals when an
exact (SymPy) reference needs exact float64 inputs. :data:`DUALITY_ACTS` are the activations of the 50-digit
KKT re-solve (p = 1 and p > 1, integer and fractional c).
"""

from __future__ import annotations

import numpy as np

from checks.evidence.registry import Context

ACTS = ("relu", "leaky_relu:0.2", "quadratic", "relu_power:2", "relu_power:3", "abs_power:1.5",
        "abs_power:3")
QUICK_ACTS = ("relu", "quadratic", "abs_power:1.5")  # the smoke run: p = 1, an integer c, a fractional c
DUALITY_ACTS = ("relu", "leaky_relu", "quadratic", "relu_power:3", "abs_power:1.5")


def dyadic(rng: np.random.Generator, shape, scale: int = 16, lo: int = -24, hi: int = 24) -> np.ndarray:
    """Random k/scale (exact in float64 and in SymPy)."""
    return rng.integers(lo, hi + 1, size=shape) / scale


def cases(ctx: Context, salt: str, n: int, d: int, m: int, dyadic_data: bool = False):
    """One random (act, a, Theta, X, y) per activation of :data:`ACTS` (no a_j = 0: it is set to 0.5)."""
    rng = ctx.rng(salt)
    for act in QUICK_ACTS if ctx.quick else ACTS:
        draw = (lambda shape: dyadic(rng, shape)) if dyadic_data else (lambda shape: rng.normal(size=shape))
        a = draw(m)
        yield act, np.where(a == 0, 0.5, a), draw((m, d)), draw((n, d)), draw(n)
