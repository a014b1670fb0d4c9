r"""Targets f*(x) = Σ_r coef_r g_r(v_r·x) for the population loss: single-index, sum-of-single-index, multi-index.

A link g is a polynomial, a positively homogeneous function or a smooth function (:class:`Link`, named in
:data:`LINKS`); polynomial multi-index links are rewritten exactly as sums of ridge functions, so that every
target is a sum of :class:`Ridge` terms whose pair expectations :mod:`numerics.flat.population` evaluates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import mpmath
import numpy as np

from numerics.flat.activations import Activation
from numerics.flat.inputs import as_array

__all__ = ["Link", "LINKS", "Ridge", "Target", "single_index", "sum_single_index", "multi_index"]


@dataclass(frozen=True)
class Link:
    """A link g: a polynomial (``poly``), a homogeneous function (``hom``), or a smooth function (``fn``)."""

    name: str
    poly: tuple[float, ...] | None = None
    hom: Activation | None = None
    fn: Callable | None = None  # numpy
    fn_mp: Callable | None = None  # mpmath

    def __call__(self, t):
        t = np.asarray(t, dtype=float)
        if self.poly is not None:
            return np.polynomial.polynomial.polyval(t, self.poly)
        if self.hom is not None:
            return self.hom(t)
        return self.fn(t)

    def mp(self, t):
        if self.poly is not None:
            return mpmath.fsum(cf * t**k for k, cf in enumerate(self.poly))
        if self.hom is not None:
            return self.hom.mp(t)
        return self.fn_mp(t)


LINKS: dict[str, Link] = {
    "linear": Link("linear", poly=(0.0, 1.0)),
    "quadratic": Link("quadratic", poly=(0.0, 0.0, 1.0)),
    "he2": Link("he2", poly=(-1.0, 0.0, 1.0)),
    "cubic": Link("cubic", poly=(0.0, 0.0, 0.0, 1.0)),
    "he3": Link("he3", poly=(0.0, -3.0, 0.0, 1.0)),
    "relu": Link("relu", hom=Activation("relu", 1.0, 1.0, 0.0)),
    "abs": Link("abs", hom=Activation("abs_power", 1.0, 1.0, 1.0)),
    "tanh": Link("tanh", fn=np.tanh, fn_mp=mpmath.tanh),
    "sin": Link("sin", fn=np.sin, fn_mp=mpmath.sin),
}


@dataclass(frozen=True, eq=False)
class Ridge:
    """One ridge function coef · g(v·x) (v need not be a unit vector)."""

    coef: float
    v: np.ndarray
    link: Link


@dataclass(frozen=True, eq=False)
class Target:
    r"""A target f*(x) = Σ_r coef_r g_r(v_r·x), built by :func:`single_index`, :func:`sum_single_index` or
    :func:`multi_index` (polynomial multi-index links are rewritten exactly as sums of ridge functions,
    e.g. :math:`v_1v_2=\tfrac12[(w_+\cdot x)^2-(w_-\cdot x)^2]`, :math:`w_\pm=(u_1\pm u_2)/\sqrt2`)."""

    kind: str
    U: np.ndarray  # index directions, one per row
    link: str | tuple[str, ...]
    ridges: tuple[Ridge, ...]

    @property
    def d(self) -> int:
        return int(self.U.shape[1])

    def __call__(self, X) -> np.ndarray:
        X = as_array(X, "X", 2)
        if X.shape[1] != self.d:
            raise ValueError(f"X has d = {X.shape[1]} but the target has d = {self.d}")
        return sum(rg.coef * rg.link(X @ rg.v) for rg in self.ridges)


def _link(name: str) -> Link:
    if name not in LINKS:
        raise ValueError(f"unknown link {name!r}; known: {', '.join(LINKS)}")
    return LINKS[name]


def _unit_rows(U, name="U") -> np.ndarray:
    U = as_array(np.atleast_2d(U), name, 2)
    nr = np.linalg.norm(U, axis=1)
    if np.any(nr == 0):
        raise ValueError(f"{name}: zero direction")
    return U / nr[:, None]


def single_index(u, link: str = "relu") -> Target:
    """f*(x) = g(u·x) with u normalised to unit length."""
    U = _unit_rows(u, "u")
    return Target("single_index", U, link, (Ridge(1.0, U[0], _link(link)),))


def sum_single_index(U, links: str | Sequence[str] = "relu", coef: Sequence[float] | None = None) -> Target:
    """f*(x) = Σ_k coef_k g_k(u_k·x) with unit u_k."""
    U = _unit_rows(U)
    links = (links,) * U.shape[0] if isinstance(links, str) else tuple(links)
    coef = (1.0,) * U.shape[0] if coef is None else tuple(float(x) for x in coef)
    if not (len(links) == len(coef) == U.shape[0]):
        raise ValueError(f"need one link and one coefficient per direction ({U.shape[0]})")
    return Target("sum_single_index", U, links, tuple(Ridge(cf, u, _link(g)) for cf, u, g in
                                                       zip(coef, U, links, strict=True)))


def multi_index(U, link: Literal["product", "norm_sq"] = "product") -> Target:
    """f*(x) = g(Ux) with orthonormal rows U: ``"product"`` (v₁v₂, k = 2) or ``"norm_sq"`` (‖v‖²)."""
    U = as_array(np.atleast_2d(U), "U", 2)
    if not np.allclose(U @ U.T, np.eye(U.shape[0]), atol=1e-10):
        raise ValueError("multi_index: U must have orthonormal rows")
    q = LINKS["quadratic"]
    if link == "norm_sq":
        ridges = tuple(Ridge(1.0, u, q) for u in U)
    elif link == "product":
        if U.shape[0] != 2:
            raise ValueError("multi_index 'product' is implemented for k = 2 index directions")
        wp, wm = (U[0] + U[1]) / math.sqrt(2), (U[0] - U[1]) / math.sqrt(2)
        ridges = (Ridge(0.5, wp, q), Ridge(-0.5, wm, q))
    else:
        raise ValueError(f"unknown multi-index link {link!r}; known: product, norm_sq")
    return Target("multi_index", U, link, ridges)
