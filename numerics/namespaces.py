"""The math namespaces ``NP`` (numpy/scipy, float64, vectorised) and ``MP`` (mpmath, any precision).

Every closed form generated from ``proofs/`` (e.g. ``numerics._derived.flat``) takes one of them as its
namespace argument ``_m``, so one derived expression serves float64 and high precision without a float
literal (such as 1/3) silently capping the precision: ``upsilon_neuron(A, B, abs_a, c, MP)``.
"""

from __future__ import annotations

import mpmath
import numpy as np
from scipy import special

__all__ = ["NP", "MP", "Numpy", "Mpmath"]


class Numpy:
    """numpy/scipy: float64, vectorised; ``clip`` clips a correlation into [−1, 1]."""

    pi = np.pi
    sqrt = staticmethod(np.sqrt)
    log = staticmethod(np.log)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    gamma = staticmethod(special.gamma)
    arccos = staticmethod(np.arccos)

    @staticmethod
    def rat(p, q):
        return p / q

    @staticmethod
    def clip(x):
        return np.clip(x, -1.0, 1.0)


class Mpmath:
    """mpmath at the current precision (exact rationals stay exact)."""

    pi = mpmath.pi
    sqrt = staticmethod(mpmath.sqrt)
    log = staticmethod(mpmath.log)
    sin = staticmethod(mpmath.sin)
    cos = staticmethod(mpmath.cos)
    gamma = staticmethod(mpmath.gamma)
    arccos = staticmethod(mpmath.acos)

    @staticmethod
    def rat(p, q):
        return mpmath.mpf(p) / q

    @staticmethod
    def clip(x):
        return max(mpmath.mpf(-1), min(mpmath.mpf(1), x))


NP = Numpy()
MP = Mpmath()
