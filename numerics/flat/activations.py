r"""Positively :math:`c`-homogeneous activations :math:`\sigma(t)=\alpha_+t_+^c+\alpha_-t_-^c`, validated.

Every positively homogeneous :math:`\sigma` (:math:`\sigma(\lambda t)=\lambda^c\sigma(t)`, :math:`\lambda>0`) has this
form with :math:`\alpha_\pm=\sigma(\pm1)`; :func:`get_activation` builds one from a name or tests a callable, and
says why when the function is not homogeneous (the flatness results need it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np

from numerics._derived import flat as derived

__all__ = ["Activation", "get_activation", "HOMOGENEOUS"]

HOMOGENEOUS = ("relu", "leaky_relu", "quadratic", "relu_power", "abs_power")  # the names get_activation knows


@dataclass(frozen=True)
class Activation:
    r"""A positively :math:`c`-homogeneous activation :math:`\sigma(t)=\alpha_+t_+^c+\alpha_-t_-^c`.

    Every positively homogeneous :math:`\sigma` has this form with :math:`\alpha_\pm=\sigma(\pm1)`.
    ReLU is :math:`(1, 0)`, LeakyReLU(slope) is :math:`(1, -\text{slope})`, :math:`t^2` is :math:`(1, 1)` with
    :math:`c=2`, ReLU\ :sup:`c` is :math:`(1,0)` and :math:`|t|^c` is :math:`(1,1)`. Use :func:`get_activation`
    to build one; it validates.

    Example:
        >>> act = get_activation("leaky_relu", slope=0.2)
        >>> act(np.array([-1.0, 2.0])).tolist(), act.c, act.slope
        ([-0.2, 2.0], 1.0, 0.2)
    """

    name: str
    c: float
    plus: float = 1.0
    minus: float = 0.0

    @property
    def slope(self) -> float:
        """LeakyReLU's negative-side slope (σ(t) = slope·t for t < 0)."""
        return -self.minus

    @property
    def p(self) -> float:
        return float(derived.p_exponent(self.c))

    @property
    def K(self) -> float:
        return float(derived.k_const(self.c))

    @property
    def poly(self) -> tuple[float, ...] | None:
        """Monomial coefficients when σ is a polynomial (σ = α₊ t^k with α₋ = (−1)^k α₊), else None."""
        k = round(self.c)
        if self.c == k and self.minus == (-1) ** k * self.plus:
            return (0.0,) * k + (float(self.plus),)
        return None

    # float64, vectorised -------------------------------------------------------------------------
    def _branches(self, t: np.ndarray, e: float) -> tuple[np.ndarray, np.ndarray]:
        pos, neg = t > 0, t < 0
        at = np.where(pos | neg, np.abs(t), 1.0) ** e  # |t|^e off 0; the value at 0 is set by the caller
        return np.where(pos, at, 0.0), np.where(neg, at, 0.0)

    def __call__(self, t):
        t = np.asarray(t, dtype=float)
        p_, n_ = self._branches(t, self.c)
        return self.plus * p_ + self.minus * n_

    def d1(self, t):
        """σ′(t) = c(α₊ t₊^{c−1} − α₋ t₋^{c−1}); σ′(0) := 0 (the torch convention for ReLU)."""
        t = np.asarray(t, dtype=float)
        p_, n_ = self._branches(t, self.c - 1)
        return self.c * (self.plus * p_ - self.minus * n_)

    def d2(self, t):
        """σ″(t) = c(c−1)(α₊ t₊^{c−2} + α₋ t₋^{c−2}) off 0; at 0 see :meth:`d2_at_zero`."""
        t = np.asarray(t, dtype=float)
        if self.c == 1:
            return np.zeros_like(t)
        p_, n_ = self._branches(t, self.c - 2)
        out = self.c * (self.c - 1) * (self.plus * p_ + self.minus * n_)
        return np.where(t == 0, self.d2_at_zero, out)

    @property
    def d2_at_zero(self) -> float:
        """σ″(0): 0 for c = 1 or c > 2; the mean of the one-sided values for c = 2 (2 for t²); ∞ for 1 < c < 2."""
        if self.c == 1 or self.c > 2:
            return 0.0
        if self.c == 2:
            return float(self.plus + self.minus)
        return math.inf if (self.plus or self.minus) else 0.0

    # mpmath, scalar ------------------------------------------------------------------------------
    def mp(self, t, k: int = 0):
        """The k-th derivative (k = 0, 1, 2) at an mpmath scalar, in the current precision."""
        t = mpmath.mpf(t)
        cc = mpmath.mpf(self.c)
        if t == 0:
            return mpmath.mpf(0) if k < 2 else mpmath.mpf(self.d2_at_zero)
        coef = [mpmath.mpf(1), cc, cc * (cc - 1)][k]
        if coef == 0:
            return mpmath.mpf(0)
        if t > 0:
            return coef * mpmath.mpf(self.plus) * t ** (cc - k)
        return coef * mpmath.mpf(self.minus) * (-1) ** k * (-t) ** (cc - k)


def _homogeneity_reason(fn: Callable[[np.ndarray], np.ndarray], name: str) -> tuple[float, float, float]:
    """(c, σ(1), σ(−1)) if ``fn`` is positively homogeneous of degree c ≥ 1, else ValueError saying why."""
    ts = np.array([-2.3, -1.0, -0.37, 0.37, 1.0, 2.3])
    with np.errstate(all="ignore"):
        s1, sm1 = float(fn(np.array([1.0]))[0]), float(fn(np.array([-1.0]))[0])
        base = s1 if abs(s1) >= abs(sm1) else sm1
        x0 = 1.0 if abs(s1) >= abs(sm1) else -1.0
        if base == 0 or not math.isfinite(base):
            raise ValueError(f"activation {name!r} is not positively homogeneous: σ(±1) = ({s1}, {sm1}) "
                             "gives no degree c (σ must satisfy σ(λt) = λ^c σ(t) for λ > 0)")
        ratio = float(fn(np.array([2 * x0]))[0]) / base
        cdeg = math.log2(abs(ratio)) if ratio > 0 else float("nan")
        for lam in (0.5, 3.7):
            lhs = np.asarray(fn(lam * ts), dtype=float)
            rhs = lam**cdeg * np.asarray(fn(ts), dtype=float)
            err = float(np.max(np.abs(lhs - rhs)) / max(1.0, float(np.max(np.abs(rhs)))))
            if not math.isfinite(cdeg) or not err < 1e-9:
                k = int(np.argmax(np.abs(lhs - rhs)))
                raise ValueError(
                    f"activation {name!r} is not positively homogeneous: no c gives σ(λt) = λ^c σ(t) for "
                    f"λ > 0 (σ(2)/σ(1) suggests c = {cdeg:.4g}, but at t = {ts[k]}, λ = {lam}: "
                    f"σ(λt) = {lhs[k]:.6g} vs λ^c σ(t) = {rhs[k]:.6g}). The flatness results (Υ, the "
                    "rescaling symmetry) need a positively homogeneous σ; use one of "
                    f"{', '.join(HOMOGENEOUS)} or a homogeneous callable")
    if cdeg < 1 - 1e-12:
        raise ValueError(f"activation {name!r} has degree c = {cdeg:.4g} < 1: σ′ is unbounded at 0 and the "
                         "Hessian trace is undefined; need c ≥ 1")
    cr = round(cdeg)
    return (float(cr) if abs(cdeg - cr) < 1e-9 else cdeg), s1, sm1


_NOTHOMOGENEOUS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh,
    "sigmoid": lambda t: 1 / (1 + np.exp(-t)),
    "softplus": lambda t: np.logaddexp(0, t),
    "gelu": lambda t: 0.5 * t * (1 + np.vectorize(math.erf)(t / math.sqrt(2))),
    "silu": lambda t: t / (1 + np.exp(-t)),
    "elu": lambda t: np.where(t > 0, t, np.expm1(np.minimum(t, 0))),
    "exp": np.exp,
}


def get_activation(spec: Activation | str | Callable, *, c: float | None = None,
                   slope: float | None = None) -> Activation:
    """Build and validate an activation.

    ``spec`` is an :class:`Activation`, a name (``"relu"``, ``"leaky_relu"``, ``"quadratic"``,
    ``"relu_power"``, ``"abs_power"``), a name with its parameter (``"relu_power:3"``, ``"leaky_relu:0.2"``),
    or a callable that is tested for positive homogeneity. Anything else raises ValueError saying why.

    Example:
        >>> get_activation("relu_power:3")
        Activation(name='relu_power', c=3.0, plus=1.0, minus=0.0)
        >>> get_activation(lambda t: np.maximum(t, 0) ** 2).c
        2.0
        >>> get_activation("tanh")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: activation 'tanh' is not positively homogeneous: ...
    """
    if isinstance(spec, Activation):
        if spec.name != "custom" and spec.name not in HOMOGENEOUS:
            raise ValueError(f"unknown activation name {spec.name!r}")
        if not (math.isfinite(spec.c) and spec.c >= 1 and math.isfinite(spec.plus) and math.isfinite(spec.minus)):
            raise ValueError(f"activation {spec}: need finite c >= 1 and finite coefficients")
        return spec
    if callable(spec):
        name = getattr(spec, "__name__", "custom")
        cdeg, s1, sm1 = _homogeneity_reason(spec, name)
        return Activation("custom", cdeg, s1, sm1)
    if not isinstance(spec, str):
        raise ValueError(f"activation must be a name, an Activation or a callable, not {type(spec).__name__}")
    name, _, arg = spec.strip().lower().partition(":")
    if arg:
        val = float(arg)
        if name == "leaky_relu":
            slope = val if slope is None else slope
        else:
            c = val if c is None else c
    if name in _NOTHOMOGENEOUS:
        _homogeneity_reason(_NOTHOMOGENEOUS[name], name)  # raises, with the reason
    if name not in HOMOGENEOUS:
        raise ValueError(f"unknown activation {spec!r}; supported: {', '.join(HOMOGENEOUS)} "
                         "(or a positively homogeneous callable)")
    if slope is not None and name != "leaky_relu":
        raise ValueError(f"slope applies only to leaky_relu, not {name!r}")
    if name in ("relu", "leaky_relu", "quadratic"):
        fixed = 2.0 if name == "quadratic" else 1.0
        if c is not None and float(c) != fixed:
            raise ValueError(f"{name} has degree c = {fixed:g}; got c = {c}")
        if name == "relu":
            return Activation("relu", 1.0, 1.0, 0.0)
        if name == "quadratic":
            return Activation("quadratic", 2.0, 1.0, 1.0)
        sl = 0.1 if slope is None else float(slope)
        if not math.isfinite(sl):
            raise ValueError(f"leaky_relu slope must be finite, got {slope}")
        return Activation("leaky_relu", 1.0, 1.0, -sl)
    if c is None:
        raise ValueError(f"{name} needs its degree c, e.g. get_activation({name!r}, c=3) or '{name}:3'")
    cf = float(c)
    if not (math.isfinite(cf) and cf >= 1):
        raise ValueError(f"{name}: degree c must be finite and >= 1 (σ′ must be bounded at 0), got {c}")
    return Activation(name, cf, 1.0, 1.0 if name == "abs_power" else 0.0)

