r"""Canonical forms and certified Lipschitz constants of one-hidden-layer ReLU nets (Shmalo 2026, SPEC §3–4).

A network is ``net = (W, b, a, v, c)`` for f(x) = Σ_k a_k ψ(W_k·x + b_k) + v·x + c, ψ = ReLU unless
``activation=`` gives another continuous piecewise-linear :class:`PiecewiseLinear`. Entries are float64
(exact binary rationals), integers, SymPy Rationals, or torch tensors.

Modules, one concern each:

* :mod:`~numerics.rob.net` — domains :class:`Sphere`, :class:`Ball`, activations, parsing, evaluation;
* :mod:`~numerics.rob.canonical` — :func:`canonicalize`, in exact rationals;
* :mod:`~numerics.rob.interval`, :mod:`~numerics.rob.exact` — the interval filter and the exact fall-back
  behind every decision;
* :mod:`~numerics.rob.arrangement2` — the arrangement of kink circles on S², all circle pairs as one
  interval table (undecided pairs go exact);
* :mod:`~numerics.rob.ball`, :mod:`~numerics.rob.sphere2`, :mod:`~numerics.rob.circle`,
  :mod:`~numerics.rob.caps` — exact constants;
* :mod:`~numerics.rob.bracket` — certified brackets by branch and bound (any d);
* :mod:`~numerics.rob.single_pole` — the exact single-pole constant of SPEC §4 (an independent oracle);
* :mod:`~numerics.rob.lemmas` — the deterministic lemmas of SPEC §4: Op, N_u(t), ‖r_{u,t}‖₁, the fitting
  functional, yᵀPy;
* :mod:`~numerics.rob.lipschitz` — :func:`lipschitz` (the cost model), :func:`rigidity`.

Example:
    >>> from numerics.rob import Sphere, lipschitz
    >>> L = lipschitz(([[1, 0, 0], [1, 0, 0]], [-1/3, -2/5], [-0.22, -0.05], [-0.8, 0.18, 0.0], 0.0), Sphere(3))
    >>> L.exact, round(L.upper, 6)
    (True, 1.052671)
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from numerics.rob.canonical import Canonical, canonicalize
from numerics.rob.circle import KinkCoincidenceWarning
from numerics.rob.lemmas import (
    affine_maximiser,
    affine_objective,
    affine_rank,
    cell_gradient,
    clip,
    fit_functional,
    mse,
    occupancy,
    occupancy_coefficient,
    op_compare,
    op_enclosure,
    op_exceeds,
    op_norm,
    projection_value,
    served,
    serving_coefficient,
    serving_rigid_coefficient,
    value_mass,
    value_mass_coefficients,
    value_mass_rigid_coefficient,
    well_served,
)
from numerics.rob.lipschitz import (
    MP_DPS,
    Lipschitz,
    Rigidity,
    caps_disjoint,
    cost_model,
    lipschitz,
    lipschitz_from_module,
    rigidity,
)
from numerics.rob.net import RELU, Ball, PiecewiseLinear, Sphere, as_exact, as_float, evaluate, f64
from numerics.rob.single_pole import single_pole_lipschitz

__all__ = ["lipschitz_from_module", "Ball", "Sphere", "PiecewiseLinear", "RELU", "Canonical", "Lipschitz",
           "canonicalize", "lipschitz", "evaluate", "gradient", "as_float", "as_exact", "rigidity", "Rigidity",
           "KinkCoincidenceWarning", "caps_disjoint", "cost_model", "single_pole_lipschitz", "f64", "to_mp",
           "MP_DPS", "op_norm", "op_exceeds", "occupancy", "value_mass", "fit_functional", "mse", "clip",
           "well_served", "projection_value", "affine_rank", "affine_maximiser", "affine_objective",
           "op_enclosure", "op_compare", "served", "occupancy_coefficient", "value_mass_coefficients",
           "value_mass_rigid_coefficient", "serving_coefficient", "serving_rigid_coefficient", "cell_gradient"]


def to_mp(x):
    """mpmath numbers (at the current precision) of an exact scalar or nested sequence."""
    if isinstance(x, list | tuple | np.ndarray):
        return [to_mp(y) for y in x]
    if isinstance(x, sp.Basic):
        return mpmath.mpf(sp.N(x, mpmath.mp.dps + 10))
    if hasattr(x, "numerator") and hasattr(x, "denominator") and not isinstance(x, float | int):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def gradient(cf: Canonical, X):
    """∇f at the rows of X (float64; at a kink, the side where u·x > t counts as inactive)."""
    X = np.atleast_2d(np.asarray(X, float))
    U, t, al, v = (np.asarray(f64(z), float) for z in (cf.U, cf.t, cf.alpha, cf.v))
    U = U.reshape(len(al), -1)
    S = (X @ U.T - t) > 0
    return v + (S * al) @ U
