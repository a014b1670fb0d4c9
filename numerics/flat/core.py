r"""Flatness of homogeneous two-layer nets: trace, Υ, flattest interpolators, Gaussian population loss.

The network is :math:`h(w,x)=\sum_{j\le m}a_j\,\sigma(\theta_j\cdot x)` with a positively
:math:`c`-homogeneous activation, :math:`\sigma(\lambda t)=\lambda^c\sigma(t)` for :math:`\lambda>0`. Every such
:math:`\sigma` is :math:`\sigma(t)=\alpha_+t_+^c+\alpha_-t_-^c` (:class:`Activation`). The loss is
:math:`F_S(w)=\frac1{2n}\sum_i(h(w,x_i)-y_i)^2` and its flatness is

.. math::

    \operatorname{Tr}\nabla^2F_S(w)=\sum_j\bigl(A_j+a_j^2B_j\bigr)
      +\frac1n\sum_i r_i\sum_j a_j\sigma''(\theta_j\cdot x_i)\|x_i\|^2,

:math:`A_j=\frac1n\sum_i\sigma(\theta_j\cdot x_i)^2`, :math:`B_j=\frac1n\sum_i\sigma'(\theta_j\cdot x_i)^2\|x_i\|^2`,
:math:`r_i=h(w,x_i)-y_i` (Gauss–Newton part plus residual part; :func:`flatness_trace`). The rescaling
:math:`(a_j,\theta_j)\mapsto(\lambda_j^{-c}a_j,\lambda_j\theta_j)` leaves :math:`h` unchanged and turns neuron
:math:`j`'s share into :math:`\lambda^{2c}A_j+\lambda^{-2}a_j^2B_j`; its minimum over :math:`\lambda>0` is

.. math::

    \Upsilon(w)=K_c\sum_j A_j^{1/(c+1)}B_j^{c/(c+1)}|a_j|^p,\qquad p=\frac{2c}{c+1},\qquad
    K_c=(c+1)c^{-c/(c+1)},

attained at :math:`\lambda_j^{2c+2}=a_j^2B_j/(cA_j)` (:func:`upsilon`, :func:`optimal_rescaling`). In the
invariant variables :math:`\bar\theta_j=\theta_j/\|\theta_j\|`, :math:`b_j=a_j\|\theta_j\|^c`,
:math:`\Upsilon=\sum_j\omega_j|b_j|^p`, so for fixed directions the flattest interpolator solves a convex
program whose dual certifies lower bounds (:func:`flattest_outer_weights`).

All closed forms (:math:`p`, :math:`K_c`, :math:`\lambda_j`, :math:`\omega_j`, the conjugate of
:math:`|t|^p`, the Gaussian kernels) are generated from ``proofs/flatness.py``.

References:
    Vardhan, Taheri, Mazumdar (2026). Flatness of homogeneous two-layer nets. arXiv 2606.04429.
    Cho, Saul (2009). Kernel methods for deep learning. NeurIPS (arc-cosine kernels).

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X, Theta = rng.standard_normal((4, 3)), rng.standard_normal((6, 3))
    >>> y = np.tanh(X[:, 0])
    >>> res = flattest_outer_weights(Theta, X, y, "quadratic")
    >>> bool(np.allclose(network(res.a, Theta, X, "quadratic"), y))
    True
    >>> res.dual_value <= res.value and res.rel_gap < 1e-8
    True
    >>> bool(upsilon(res.a, Theta, X, "quadratic") <= flatness_trace(res.a, Theta, X, y, "quadratic"))
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import mpmath
import numpy as np
import scipy.linalg as sla

from numerics._derived import flat as _d
from numerics.flat.weighted_l1 import _factor, interpolates, lstsq_correct, weighted_l1_min

__all__ = [
    "Activation", "get_activation", "network", "neuron_moments", "trace_parts", "flatness_trace",
    "upsilon", "optimal_rescaling", "rescale", "invariant_form", "flattest_outer_weights",
    "FlattestResult", "dual_objective", "Link", "LINKS", "Target", "single_index", "sum_single_index",
    "multi_index", "population_loss", "population_loss_mc", "flatness_trace_mp", "upsilon_mp", "MP",
    "upsilon_star_bracket", "certify_circle", "certify_sphere",
]


class _Numpy(_d._Numpy):
    arccos = staticmethod(np.arccos)

    @staticmethod
    def clip(x):
        return np.clip(x, -1.0, 1.0)


class _Mpmath:
    """The mpmath namespace for the derived closed forms (exact rationals stay exact)."""

    pi = mpmath.pi
    sqrt = staticmethod(mpmath.sqrt)
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


NP = _Numpy()
MP = _Mpmath()

# ---------------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------------

ActivationName = Literal["relu", "leaky_relu", "quadratic", "relu_power", "abs_power", "custom"]
_HOMOGENEOUS = ("relu", "leaky_relu", "quadratic", "relu_power", "abs_power")


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
        return float(_d.p_exponent(self.c))

    @property
    def K(self) -> float:
        return float(_d.k_const(self.c))

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
                    f"{', '.join(_HOMOGENEOUS)} or a homogeneous callable")
    if cdeg < 1 - 1e-12:
        raise ValueError(f"activation {name!r} has degree c = {cdeg:.4g} < 1: σ′ is unbounded at 0 and the "
                         "Hessian trace is undefined; need c ≥ 1")
    cr = round(cdeg)
    return (float(cr) if abs(cdeg - cr) < 1e-9 else cdeg), s1, sm1


_NOT_HOMOGENEOUS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
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
        if spec.name != "custom" and spec.name not in _HOMOGENEOUS:
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
    if name in _NOT_HOMOGENEOUS:
        _homogeneity_reason(_NOT_HOMOGENEOUS[name], name)  # raises, with the reason
    if name not in _HOMOGENEOUS:
        raise ValueError(f"unknown activation {spec!r}; supported: {', '.join(_HOMOGENEOUS)} "
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


# ---------------------------------------------------------------------------------------------------
# Input validation
# ---------------------------------------------------------------------------------------------------


def _arr(x: Any, name: str, ndim: int) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise ValueError(f"{name}: cannot convert to an array ({exc})") from None
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{name}: unsupported dtype {arr.dtype} (need real floats or integers)")
    if arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {arr.shape}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or inf")
    return arr


def _inputs(a=None, Theta=None, X=None, y=None):
    out = {}
    if Theta is not None:
        out["Theta"] = _arr(Theta, "Theta", 2)
        if out["Theta"].shape[0] == 0:
            raise ValueError("Theta: need at least one neuron (m >= 1)")
    if a is not None:
        out["a"] = _arr(a, "a", 1)
        if Theta is not None and out["a"].shape[0] != out["Theta"].shape[0]:
            raise ValueError(f"a has {out['a'].shape[0]} entries but Theta has {out['Theta'].shape[0]} rows")
    if X is not None:
        out["X"] = _arr(X, "X", 2)
        if out["X"].shape[0] == 0:
            raise ValueError("X: need at least one sample")
        if Theta is not None and out["X"].shape[1] != out["Theta"].shape[1]:
            raise ValueError(f"X has d = {out['X'].shape[1]} columns but Theta has d = {out['Theta'].shape[1]}")
    if y is not None:
        out["y"] = _arr(y, "y", 1)
        if X is not None and out["y"].shape[0] != out["X"].shape[0]:
            raise ValueError(f"y has {out['y'].shape[0]} entries but X has {out['X'].shape[0]} rows")
    return out


# ---------------------------------------------------------------------------------------------------
# Trace, Upsilon, rescaling
# ---------------------------------------------------------------------------------------------------


def network(a, Theta, X, activation) -> np.ndarray:
    """h(w, x_i) = Σ_j a_j σ(θ_j·x_i) for every row x_i of X."""
    act = get_activation(activation)
    v = _inputs(a=a, Theta=Theta, X=X)
    return act(v["X"] @ v["Theta"].T) @ v["a"]


def neuron_moments(Theta, X, activation) -> tuple[np.ndarray, np.ndarray]:
    """(A_j, B_j) = ((1/n) Σ_i σ(θ_j·x_i)², (1/n) Σ_i σ′(θ_j·x_i)² ‖x_i‖²)."""
    act = get_activation(activation)
    v = _inputs(Theta=Theta, X=X)
    Z = v["X"] @ v["Theta"].T
    xn2 = np.sum(v["X"] ** 2, axis=1)
    return np.mean(act(Z) ** 2, axis=0), np.mean(act.d1(Z) ** 2 * xn2[:, None], axis=0)


@dataclass(frozen=True)
class TraceParts:
    """Tr ∇²F_S split as Σ_j (A_j + a_j² B_j) (Gauss–Newton) + residual term."""

    A: np.ndarray
    B: np.ndarray
    gauss_newton: float
    residual_term: float

    @property
    def total(self) -> float:
        return self.gauss_newton + self.residual_term


def trace_parts(a, Theta, X, y, activation) -> TraceParts:
    """The two parts of the flatness; see the module docstring. O(n m d), no Hessian is formed."""
    act = get_activation(activation)
    v = _inputs(a=a, Theta=Theta, X=X, y=y)
    a_, X_ = v["a"], v["X"]
    Z = X_ @ v["Theta"].T
    xn2 = np.sum(X_**2, axis=1)
    S, D1 = act(Z), act.d1(Z)
    A_ = np.mean(S**2, axis=0)
    B_ = np.mean(D1**2 * xn2[:, None], axis=0)
    r_ = S @ a_ - v["y"]
    if act.c == 1:
        resid = 0.0  # σ'' = 0 off the kinks
    else:
        with np.errstate(invalid="ignore"):
            resid = float(np.mean(r_ * (act.d2(Z) @ a_) * xn2))
    return TraceParts(A_, B_, float(np.sum(A_ + a_**2 * B_)), resid)


def flatness_trace(a, Theta, X, y, activation) -> float:
    r"""Tr ∇²F_S(w) for F_S = (1/(2n)) Σ_i (h(w,x_i) − y_i)², at any w (residual term included).

    .. math:: \sum_j(A_j+a_j^2B_j)+\frac1n\sum_i r_i\sum_j a_j\sigma''(\theta_j\cdot x_i)\|x_i\|^2

    Example:
        >>> X = np.array([[1.0, 0.0], [0.0, 2.0]]); Theta = np.array([[1.0, 1.0]])
        >>> # z = (1, 2): A = (1 + 16)/2, B = (4·1 + 16·4)/2, residual (1·2·1 + 4·2·4)/2 = 17
        >>> flatness_trace([1.0], Theta, X, [0.0, 0.0], "quadratic")
        59.5
    """
    return trace_parts(a, Theta, X, y, activation).total


def upsilon(a, Theta, X, activation, *, _neuron=_d.upsilon_neuron) -> float:
    r"""Υ(w) = K_c Σ_j A_j^{1/(c+1)} B_j^{c/(c+1)} |a_j|^p: the trace at an interpolator, minimised over rescalings.

    Example:
        >>> X = np.array([[1.0, 0.0], [0.0, 2.0]]); Theta = np.array([[1.0, 1.0]])
        >>> round(upsilon([1.0], Theta, X, "relu"), 12)  # K_1 = 2, A = 5/2, B = 5/2: 2·√(A B)
        5.0
    """
    act = get_activation(activation)
    A_, B_ = neuron_moments(Theta, X, act)
    a_ = _inputs(a=a, Theta=Theta)["a"]
    return float(np.sum(_neuron(A_, B_, np.abs(a_), act.c)))


def optimal_rescaling(a, Theta, X, activation) -> np.ndarray:
    r"""λ_j with λ_j^{2c+2} = a_j² B_j / (c A_j): after (a_j, θ_j) → (λ_j^{−c} a_j, λ_j θ_j) the trace is Υ.

    λ_j = 0 where a_j = 0 (the infimum is approached, not attained) and inf where A_j = 0.
    """
    act = get_activation(activation)
    A_, B_ = neuron_moments(Theta, X, act)
    a_ = _inputs(a=a, Theta=Theta)["a"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(_d.lambda_opt(A_, B_, np.abs(a_), act.c), dtype=float)


def rescale(a, Theta, lam, activation) -> tuple[np.ndarray, np.ndarray]:
    """(λ_j^{−c} a_j, λ_j θ_j): the symmetry that leaves h unchanged."""
    act = get_activation(activation)
    v = _inputs(a=a, Theta=Theta)
    lam = _arr(lam, "lam", 1)
    if lam.shape[0] != v["a"].shape[0] or np.any(lam <= 0):
        raise ValueError("lam: need one positive factor per neuron")
    return v["a"] * lam ** (-act.c), v["Theta"] * lam[:, None]


# ---- mpmath versions (P level and the confirmation stage of F) -------------------------------------


def _mp_data(a, Theta, X, y=None):
    v = _inputs(a=a, Theta=Theta, X=X, y=y)
    conv = lambda M: [[mpmath.mpf(float(e)) for e in row] for row in M]
    out = {"a": [mpmath.mpf(float(e)) for e in v["a"]], "Theta": conv(v["Theta"]), "X": conv(v["X"])}
    if y is not None:
        out["y"] = [mpmath.mpf(float(e)) for e in v["y"]]
    return out


def _mp_moments(act, Th, Xs):
    n = len(Xs)
    A_, B_, Z = [], [], [[mpmath.fsum(t * x for t, x in zip(th, xi, strict=True)) for th in Th] for xi in Xs]
    xn2 = [mpmath.fsum(x * x for x in xi) for xi in Xs]
    for j in range(len(Th)):
        A_.append(mpmath.fsum(act.mp(Z[i][j]) ** 2 for i in range(n)) / n)
        B_.append(mpmath.fsum(act.mp(Z[i][j], 1) ** 2 * xn2[i] for i in range(n)) / n)
    return A_, B_, Z, xn2


def flatness_trace_mp(a, Theta, X, y, activation, dps: int = 50):
    """:func:`flatness_trace` in mpmath at ``dps`` digits (inputs are taken exactly as float64 values)."""
    act = get_activation(activation)
    v = _mp_data(a, Theta, X, y)
    with mpmath.workdps(dps):
        A_, B_, Z, xn2 = _mp_moments(act, v["Theta"], v["X"])
        n, m = len(v["X"]), len(v["a"])
        gn = mpmath.fsum(A_[j] + v["a"][j] ** 2 * B_[j] for j in range(m))
        res = 0
        if act.c != 1:
            for i in range(n):
                r_i = mpmath.fsum(v["a"][j] * act.mp(Z[i][j]) for j in range(m)) - v["y"][i]
                res += r_i * mpmath.fsum(v["a"][j] * act.mp(Z[i][j], 2) for j in range(m)) * xn2[i]
            res /= n
        return +(gn + res)


def upsilon_mp(a, Theta, X, activation, dps: int = 50, *, _neuron=_d.upsilon_neuron):
    """:func:`upsilon` in mpmath at ``dps`` digits. (``_neuron``: the per-neuron closed form, injectable.)"""
    act = get_activation(activation)
    v = _mp_data(a, Theta, X)
    with mpmath.workdps(dps):
        A_, B_, _, _ = _mp_moments(act, v["Theta"], v["X"])
        cc = mpmath.mpf(act.c)
        return mpmath.fsum(_neuron(A_[j], B_[j], abs(v["a"][j]), cc, _m=MP) for j in range(len(A_)))


# ---------------------------------------------------------------------------------------------------
# Invariant form and the flattest interpolator
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InvariantForm:
    """θ̄_j = θ_j/‖θ_j‖, ω_j = K_c Ā_j^{1/(c+1)} B̄_j^{c/(c+1)} (Ā, B̄ at θ̄_j), Φ̄_ij = σ(θ̄_j·x_i)."""

    theta_bar: np.ndarray
    norms: np.ndarray
    omega: np.ndarray
    Phibar: np.ndarray
    p: float


def invariant_form(Theta, X, activation) -> InvariantForm:
    act = get_activation(activation)
    v = _inputs(Theta=Theta, X=X)
    norms = np.linalg.norm(v["Theta"], axis=1)
    if np.any(norms == 0):
        raise ValueError("Theta: a zero direction has no invariant form (θ_j = 0)")
    tb = v["Theta"] / norms[:, None]
    Ab, Bb = neuron_moments(tb, v["X"], act)
    return InvariantForm(tb, norms, np.asarray(_d.omega_weight(Ab, Bb, act.c), dtype=float),
                         act(v["X"] @ tb.T), act.p)


_ROUND = 1e-13  # relative float64 rounding allowance subtracted from dual values


def _abs_s_upper(nu, Phibar, k: float = 1.0) -> np.ndarray:
    """A float64 upper bound on |(Φ̄ᵀν)_j| for the exact product: |fl(s_j)|(1 + 2u) + k γ_{n+4} (|Φ̄|ᵀ|ν|)_j.

    γ_k = k u / (1 − k u) (u = 2⁻⁵³) bounds the rounding of a length-k dot product in any summation
    order (Higham, *Accuracy and Stability*, §3.1); the extra terms cover the rounding of the bound itself.
    When ν is large and Φ̄ᵀν cancels (ill-conditioned Φ̄), this is what keeps a certificate honest.
    """
    n = Phibar.shape[0]
    u = 2.0**-53
    gamma = (n + 4) * u / (1 - (n + 4) * u)
    return np.abs(Phibar.T @ nu) * (1 + 2 * u) + k * gamma * (np.abs(Phibar).T @ np.abs(nu))


def dual_objective(nu, Phibar, y, omega, p: float) -> float:
    r"""A float64 lower bound on the dual function at ν: ν·y − Σ_j g_j^*((Φ̄ᵀν)_j), g_j = ω_j|·|^p.

    For p = 1 the conjugate is the indicator of |s| ≤ ω_j: returns −inf unless ν is feasible, with the
    rounding of Φ̄ᵀν bounded (``_abs_s_upper``). For p > 1 the conjugate (increasing in |s|) is taken at
    that upper bound. By weak duality (Fenchel–Young) the value is ≤ Υ of every interpolator with these
    directions, for the float64 problem data Φ̄, ω as computed. Never NaN: an overflow gives −inf.
    """
    nuy = math.fsum(nu * y)
    s_up = _abs_s_upper(nu, Phibar)
    if p == 1:
        return nuy - _ROUND * math.fsum(np.abs(nu * y)) if np.all(s_up <= omega) else -math.inf
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        conj = np.where(omega > 0, _d.conjugate_power(s_up, np.where(omega > 0, omega, 1.0), p),
                        np.where(s_up == 0, 0.0, np.inf))
        # minus an allowance for float64 rounding, so that the value stays a lower bound
        val = nuy - math.fsum(conj) - _ROUND * (math.fsum(np.abs(nu * y)) + math.fsum(conj))
    return val if math.isfinite(val) else -math.inf


@dataclass(frozen=True)
class FlattestResult:
    """The flattest interpolating outer weights for fixed directions, with a dual certificate.

    ``dual_value`` ≤ Υ(w) for *every* interpolator w whose directions are those of Theta (any rescaling);
    ``gap = value − dual_value`` ≥ 0 and ``rel_gap = gap / value`` bound the suboptimality of ``a``.
    """

    a: np.ndarray
    b: np.ndarray  # invariant weights b_j = a_j ‖θ_j‖^c
    value: float  # Υ(a, Theta)
    dual_value: float
    nu: np.ndarray
    p: float
    omega: np.ndarray
    interpolation_residual: float  # max_i |h(x_i) − y_i|
    solver: str
    extra: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return self.value - self.dual_value

    @property
    def rel_gap(self) -> float:
        return self.gap / max(abs(self.value), np.finfo(float).tiny)


_FEAS_SAFETY = 1e-12  # relative slack for float64 rounding in Φ̄ᵀν and ω when certifying p = 1


def certify_nu_p1(nu, Phibar, omega) -> np.ndarray:
    """Scale ν so that |Φ̄ᵀν|_j ≤ (1 − 1e-12) ω_j for every j, for the *exact* product (its float64
    rounding bounded as in ``_abs_s_upper``): exact p = 1 dual feasibility, with slack."""
    nu = np.asarray(nu, dtype=float)
    if not np.all(np.isfinite(nu)):
        return np.zeros_like(nu)
    # 3γ, not γ: the product for the *scaled* ν rounds differently (by up to 2γ|Φ̄|ᵀ|ν|), and the
    # check in dual_objective must still pass on it
    s_ = _abs_s_upper(nu, Phibar, k=3.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(omega > 0, s_ / omega, np.where(s_ > 0, np.inf, 0.0))
    worst = float(np.max(ratio)) if ratio.size else 0.0
    if not math.isfinite(worst):
        return np.zeros_like(nu)
    return nu * min(1.0, (1 - _FEAS_SAFETY) / worst) if worst > 0 else nu


def _p1_rel_gap(b, nu_certified, Phi, y, om) -> float:
    """Relative gap of a p = 1 pair: b interpolating, ν already through ``certify_nu_p1``."""
    val = math.fsum(om * np.abs(b))
    return (val - dual_objective(nu_certified, Phi, y, om, 1)) / max(val, np.finfo(float).tiny)


def _solve_p1(Phi, y, om, method: str = "auto"):
    """p = 1: the interior point with crossover (``numerics.flat.weighted_l1``), or HiGHS on the split LP.

    ``auto`` runs the interior point and keeps it when its certified gap is ≤ 1e-9 relative, or ≤ 1e-6
    when it is optimal to float64 rounding; otherwise (or if it fails) HiGHS runs too and the pair with
    the smaller certified gap is returned. Either way ``rel_gap`` of the result states what is certified.
    """
    cands = []
    if method in ("auto", "ipm"):
        try:
            r = weighted_l1_min(Phi, y, om)
        except ValueError:
            if method == "ipm":
                raise
        else:
            how = ("optimal vertex by crossover" if r.basis else "optimal" if r.optimal
                   else "converged" if r.converged else "NOT converged")
            solver = f"interior point (Mehrotra), {r.iterations} iterations, {how}"
            cands.append((r.b, certify_nu_p1(r.nu, Phi, om), solver))
            gap = _p1_rel_gap(r.b, cands[0][1], Phi, y, om)
            # Optimal in float64 terms, with a certified gap at the level that rounding of Φ̄ᵀν allows
            # (γ_n|Φ̄|ᵀ|ν| grows with n and cond Φ̄: ~1e-8 at n = m = 10³); HiGHS could do no better.
            if method == "ipm" or gap <= 1e-9 or (r.optimal and gap <= 1e-6):
                return cands[0]
    try:
        cands.append(_solve_p1_highs(Phi, y, om))
    except ValueError:
        if not cands:
            raise
    return min(cands, key=lambda c: _p1_rel_gap(c[0], c[1], Phi, y, om))


def _solve_p1_highs(Phi, y, om):
    from scipy.optimize import linprog

    m = Phi.shape[1]
    res = linprog(np.concatenate([om, om]), A_eq=np.hstack([Phi, -Phi]), b_eq=y, bounds=(0, None),
                  method="highs", options={"primal_feasibility_tolerance": 1e-10,
                                           "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise ValueError(f"flattest interpolator LP failed: {res.message}")
    b = res.x[:m] - res.x[m:]
    nu = np.asarray(res.eqlin.marginals, dtype=float)
    # Polish on the optimal support: an exact vertex, and ν from the active dual constraints.
    supp = np.flatnonzero(np.abs(b) > 1e-9 * max(1.0, float(np.max(np.abs(b)))))
    cands_b, cands_nu = [b], [nu]
    if 0 < supp.size <= Phi.shape[0]:
        bs = np.zeros(m)
        bs[supp] = np.linalg.lstsq(Phi[:, supp], y, rcond=None)[0]
        cands_b.append(bs)
        if supp.size == Phi.shape[0]:
            cands_nu.append(np.linalg.solve(Phi[:, supp].T, om[supp] * np.sign(bs[supp])))
    b = min(cands_b, key=lambda bb: (not interpolates(Phi, bb, y), float(om @ np.abs(bb))))
    if not interpolates(Phi, b, y):
        raise ValueError(f"flattest interpolator LP: HiGHS returned b with max|Φ̄b − y| = "
                         f"{float(np.max(np.abs(Phi @ b - y))):.1e}; Φ̄ is too ill-conditioned for float64 "
                         f"(cond ≈ {np.linalg.cond(Phi):.1e}); nearly duplicate samples?")
    nus = [certify_nu_p1(v, Phi, om) for v in cands_nu]
    nu = max(nus, key=lambda v: dual_objective(v, Phi, y, om, 1))
    return b, nu, "HiGHS (split LP), support polish"


def _dual_parts(nu, Phi, y, om, p, *, hess: bool):
    """Dual value ν·y − Σ g_j^*(s_j), its gradient y − Φb(ν) and (optionally) √(db/ds) at s = Φᵀν."""
    s_ = Phi.T @ nu
    t_ = _d.conjugate_argmax(np.abs(s_), om, p)
    bb = np.sign(s_) * t_
    val = math.fsum(nu * y) - math.fsum(_d.conjugate_power(np.abs(s_), om, p))
    if not hess:
        return val, bb
    with np.errstate(divide="ignore", invalid="ignore"):
        db = np.where(t_ > 0, t_ / ((p - 1) * np.abs(s_)), 0.0)  # d b_j / d s_j ≥ 0
    return val, bb, y - Phi @ bb, np.sqrt(db)


def _dual_newton(nu, Phi, y, om, p, *, tol: float = 1e-13, maxiter: int = 100):
    r"""Maximise the smooth concave dual :math:`\nu^\top y-\sum_j g_j^*((\Phi^\top\nu)_j)` (p > 1) by
    damped Newton from ν; returns (ν, converged).

    The gradient is the interpolation residual y − Φb(ν) with the KKT weights :math:`b_j(\nu)`, the
    negative Hessian is :math:`\Phi\,\mathrm{diag}(db_j/ds_j)\,\Phi^\top` (n×n; one symmetric rank-m
    product, Cholesky), and an Armijo backtracking line search on the dual value keeps every step an
    ascent step. Converged: max|y − Φb(ν)| ≤ tol·(1 + max|y|), or the Newton decrement (the predicted
    gain g·H⁻¹g / 2) is below float64 resolution of the dual value (1e-15 relative), where the dual
    cannot be improved further in float64.
    """
    scale = tol * (1.0 + float(np.max(np.abs(y))))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        val, _, g, sq = _dual_parts(nu, Phi, y, om, p, hess=True)
        for _ in range(maxiter):
            if float(np.max(np.abs(g))) <= scale:
                return nu, True
            B = Phi * sq
            try:
                step = sla.cho_solve(_factor(B @ B.T), g, check_finite=False)
            except np.linalg.LinAlgError:
                return nu, False
            slope = float(g @ step)
            if slope / 2 <= 1e-15 * max(1.0, abs(val)):
                return nu, True
            tau = 1.0
            while tau > 1e-12:
                v2 = nu + tau * step
                val2 = _dual_parts(v2, Phi, y, om, p, hess=False)[0]
                if math.isfinite(val2) and val2 >= val + 1e-4 * tau * slope:
                    break
                tau /= 2
            else:
                return nu, False
            nu = v2
            val, _, g, sq = _dual_parts(nu, Phi, y, om, p, hess=True)
        return nu, float(np.max(np.abs(g))) <= scale


def _ray_start(Phi, y, om, p):
    """ν = t·(ΦΦᵀ)⁻¹y with the t that maximises the dual along that ray (the conjugate is q-homogeneous)."""
    nu_hat = sla.cho_solve(_factor(Phi @ Phi.T), y, check_finite=False)
    q = p / (p - 1)
    a = float(nu_hat @ y)  # > 0 for y ≠ 0
    C = math.fsum(_d.conjugate_power(np.abs(Phi.T @ nu_hat), om, p))
    return nu_hat * (a / (q * C)) ** (1 / (q - 1)) if a > 0 and C > 0 else nu_hat


def _primal_from_dual(nu, Phi, y, om, p):
    s_ = Phi.T @ nu
    b = np.sign(s_) * _d.conjugate_argmax(np.abs(s_), om, p)  # the KKT map
    return lstsq_correct(Phi, y, b)  # exact interpolation (tiny correction)


def _solve_pgt1(Phi, y, om, p, method: str = "auto"):
    """p > 1: damped Newton on the n-dimensional smooth dual; cvxpy + Clarabel if Newton stalls or if asked."""
    if not np.any(y):
        return np.zeros(Phi.shape[1]), np.zeros(Phi.shape[0]), "trivial (y = 0)"
    if method in ("auto", "newton"):
        # Solve for y / max|y| (b scales like y, ν like max|y|^(p−1)) so that the stopping rules,
        # which have absolute floors, see O(1) data whatever the units of y.
        sy = float(np.max(np.abs(y)))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            nu, ok = _dual_newton(_ray_start(Phi, y / sy, om, p), Phi, y / sy, om, p)
            nu = nu * sy ** (p - 1)
            b = _primal_from_dual(nu, Phi, y, om, p)
        primal = math.fsum(om * np.abs(b) ** p)
        certified = ok and np.all(np.isfinite(b)) and primal - dual_objective(nu, Phi, y, om, p) <= 1e-8 * primal
        if certified or method == "newton":
            return b, nu, "dual Newton (n×n normal equations)" + ("" if certified else ", NOT converged")
    return _solve_pgt1_conic(Phi, y, om, p)


def _solve_pgt1_conic(Phi, y, om, p):
    import cvxpy as cp

    m = Phi.shape[1]
    bvar = cp.Variable(m)
    cons = [Phi @ bvar == y]
    prob = cp.Problem(cp.Minimize(om @ cp.power(cp.abs(bvar), p, approx=False)), cons)
    try:
        prob.solve(solver="CLARABEL")  # default tolerances; the dual Newton polish does the rest
    except cp.error.SolverError as exc:
        raise ValueError(f"flattest interpolator power-cone program failed: {exc}") from None
    if prob.status not in ("optimal", "optimal_inaccurate") or cons[0].dual_value is None:
        raise ValueError(f"flattest interpolator power-cone program: status {prob.status}")
    nu0 = np.asarray(cons[0].dual_value, dtype=float)
    nu0 = max((nu0, -nu0), key=lambda v: dual_objective(v, Phi, y, om, p))  # sign convention agnostic
    nu = _dual_newton(nu0, Phi, y, om, p)[0]
    b = _primal_from_dual(nu, Phi, y, om, p)
    b_cvx = np.asarray(bvar.value, dtype=float)
    b_cvx = lstsq_correct(Phi, y, b_cvx)
    obj = lambda bb: float(om @ np.abs(bb) ** p)
    return (b if obj(b) <= obj(b_cvx) else b_cvx), nu, "cvxpy+clarabel (power cone), dual Newton polish"


FlattestMethod = Literal["auto", "ipm", "highs", "newton", "clarabel"]
_P1_METHODS, _PGT1_METHODS = ("ipm", "highs"), ("newton", "clarabel")


def flattest_outer_weights(Theta, X, y, activation, *, method: FlattestMethod = "auto") -> FlattestResult:
    r"""Outer weights of least Υ among all interpolators with the directions of Theta.

    Solves :math:`\min_b\sum_j\omega_j|b_j|^p` s.t. :math:`\bar\Phi b=y` and returns :math:`a_j=b_j/\|\theta_j\|^c`.
    p = 1 is a weighted basis pursuit LP: ``method="auto"``/``"ipm"`` solve it with the normal-equation
    interior point of :mod:`numerics.flat.weighted_l1` plus a crossover to an optimal vertex (7 s at n = 10³,
    m = 10⁴); ``"highs"`` uses scipy's HiGHS on the split form (the independent cross-check; slow beyond
    n·m ≈ 10⁶). p > 1 is solved on its smooth n-dimensional dual by damped Newton (``"newton"``; n×n
    normal equations, 8 s at n = 10³, m = 10⁴); ``"auto"`` keeps it when its certified gap is ≤ 1e-8
    relative and otherwise falls back to ``"clarabel"``: the power-cone program (cvxpy + Clarabel) with a
    dual Newton polish (the independent cross-check; 196 s at n = 10³, m = 3·10³). The dual point
    ν is made exactly feasible (p = 1: scaled into :math:`|\bar\Phi^\top\nu|\le\omega`, with a 1e-12 slack for
    float64 rounding; p > 1: every ν is feasible), so ``dual_value`` is a certified lower bound.

    Raises ValueError when no interpolator exists with these directions (m < n or Φ̄ rank-deficient).

    Example:
        >>> rng = np.random.default_rng(1)
        >>> X, Theta = rng.standard_normal((5, 3)), rng.standard_normal((12, 3))
        >>> res = flattest_outer_weights(Theta, X, X[:, 0] ** 2, "relu")
        >>> res.p, res.dual_value <= res.value, res.rel_gap < 1e-8
        (1.0, True, True)
    """
    if method not in ("auto", *_P1_METHODS, *_PGT1_METHODS):
        raise ValueError(f"method: expected one of 'auto', 'ipm', 'highs' (p = 1), 'newton', 'clarabel' (p > 1); "
                         f"got {method!r}")
    act = get_activation(activation)
    if method in (_PGT1_METHODS if act.p == 1 else _P1_METHODS):
        raise ValueError(f"method={method!r} is for p {'> 1' if act.p == 1 else '= 1'}, but {act.name} has "
                         f"c = {act.c:g}, p = {act.p:g}")
    v = _inputs(Theta=Theta, X=X, y=y)
    n, m = v["X"].shape[0], v["Theta"].shape[0]
    inv = invariant_form(v["Theta"], v["X"], act)
    live = np.flatnonzero(inv.omega > 0)
    Phi, om = inv.Phibar[:, live], inv.omega[live]
    rank = np.linalg.matrix_rank(Phi) if live.size else 0
    if m < n or rank < n:
        why = f"m = {m} < n = {n} directions" if m < n else f"the {n}×{m} feature matrix Φ̄ has rank {rank} < n"
        raise ValueError(f"no interpolator for every y with these directions: {why}. Use at least n directions in "
                         "general position (for the quadratic activation, n ≤ d(d+1)/2)")
    p = inv.p
    if p == 1:
        bl, nu, solver = _solve_p1(Phi, v["y"], om, method)
    else:
        bl, nu, solver = _solve_pgt1(Phi, v["y"], om, p, method)
    b = np.zeros(m)
    b[live] = bl
    a_ = b / inv.norms**act.c
    value = upsilon(a_, v["Theta"], v["X"], act)
    dual = dual_objective(nu, Phi, v["y"], om, p)
    resid = float(np.max(np.abs(network(a_, v["Theta"], v["X"], act) - v["y"])))
    return FlattestResult(a_, b, value, dual, nu, p, inv.omega, resid, solver,
                          {"rank": int(rank), "live": int(live.size)})


# ---------------------------------------------------------------------------------------------------
# Targets and the Gaussian population loss
# ---------------------------------------------------------------------------------------------------


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
        X = _arr(X, "X", 2)
        if X.shape[1] != self.d:
            raise ValueError(f"X has d = {X.shape[1]} but the target has d = {self.d}")
        return sum(rg.coef * rg.link(X @ rg.v) for rg in self.ridges)


def _link(name: str) -> Link:
    if name not in LINKS:
        raise ValueError(f"unknown link {name!r}; known: {', '.join(LINKS)}")
    return LINKS[name]


def _unit_rows(U, name="U") -> np.ndarray:
    U = _arr(np.atleast_2d(U), name, 2)
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
    U = _arr(np.atleast_2d(U), "U", 2)
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


# ---- exact pair expectations E[g1(v1.x) g2(v2.x)], x ~ N(0, I) --------------------------------------


def _gauss_moment(e: int, _m):
    """E[u^e], u ~ N(0,1), from the derived half moment."""
    return 0 if e % 2 else 2 * _d.half_moment(e, _m=_m)


def _cond(j: int, rho, s2, _m):
    """Terms of z2^j = s2^j (ρu + √(1−ρ²) w)^j: yields (k, C(j,k) s2^j ρ^k (1−ρ²)^{(j−k)/2} E[w^{j−k}])."""
    for k in range(j + 1):
        if (j - k) % 2:
            continue
        yield k, math.comb(j, k) * s2**j * rho**k * (1 - rho * rho) ** ((j - k) // 2) * _gauss_moment(j - k, _m)


def _e_mono_mono(i, j, s1, s2, rho, _m):
    return sum(w * s1**i * _gauss_moment(i + k, _m) for k, w in _cond(j, rho, s2, _m))


def _e_hom_mono(act, j, s1, s2, rho, _m):
    cc, cp, cm = (act.c, act.plus, act.minus) if _m is NP else map(mpmath.mpf, (act.c, act.plus, act.minus))
    return sum(w * s1**cc * (cp + cm * (-1) ** k) * _d.half_moment(cc + k, _m=_m)
               for k, w in _cond(j, rho, s2, _m))


def _e_hom_hom(h1, h2, s1, s2, rho, _m):
    kern = {1: _d.relu_kernel_1, 2: _d.relu_kernel_2}[int(h1.c)]
    tot = 0
    num = (lambda x: x) if _m is NP else mpmath.mpf  # float coefficients enter exactly in mpmath
    for e1, c1 in ((1, h1.plus), (-1, h1.minus)):
        for e2, c2 in ((1, h2.plus), (-1, h2.minus)):
            if c1 == 0 or c2 == 0:
                continue
            tot = tot + num(c1) * num(c2) * kern(_m.arccos(_m.clip(e1 * e2 * rho)), _m=_m)
    return tot * (s1 * s2) ** int(h1.c)


def _kind(g):
    """('poly', coeffs) | ('hom', Activation) | ('fn', Link) for a link or activation."""
    if isinstance(g, Activation):
        return ("poly", g.poly) if g.poly is not None else ("hom", g)
    if g.poly is not None:
        return "poly", g.poly
    if g.hom is not None:
        return ("poly", g.hom.poly) if g.hom.poly is not None else ("hom", g.hom)
    return "fn", g


def _exact_ok(k1, k2) -> bool:
    if k1[0] == "fn" or k2[0] == "fn":
        return False
    if k1[0] == "hom" and k2[0] == "hom":
        return k1[1].c == k2[1].c and k1[1].c in (1.0, 2.0)
    return True


def _pair_exact(k1, k2, s1, s2, rho, _m):
    """E[g1(z1) g2(z2)] for Var z_i = s_i², Corr = ρ, by Gaussian moments and arc-cosine kernels."""
    num = (lambda x: x) if _m is NP else mpmath.mpf
    if k1[0] == "poly" and k2[0] == "poly":
        return sum(num(ai) * num(bj) * _e_mono_mono(i, j, s1, s2, rho, _m)
                   for i, ai in enumerate(k1[1]) if ai for j, bj in enumerate(k2[1]) if bj)
    if k1[0] == "poly":
        k1, k2, s1, s2 = k2, k1, s2, s1
    if k2[0] == "poly":
        return sum(num(bj) * _e_hom_mono(k1[1], j, s1, s2, rho, _m) for j, bj in enumerate(k2[1]) if bj)
    return _e_hom_hom(k1[1], k2[1], s1, s2, rho, _m)


def _gfun_mp(g):
    return g.mp if isinstance(g, Activation | Link) else g


def _cond_mean_mp(kind, mu, tau):
    """E[g(μ + τ w)], w ~ N(0,1), in closed form for polynomials and homogeneous g of degree 1 or 2."""
    if kind[0] == "poly":
        return mpmath.fsum(cf * mpmath.fsum(math.comb(i, k) * mu**k * tau ** (i - k) * _gauss_moment(i - k, MP)
                                            for k in range(i + 1)) for i, cf in enumerate(kind[1]) if cf)
    h = kind[1]
    tot = mpmath.mpf(0)
    for sgn, cf in ((1, h.plus), (-1, h.minus)):
        if cf == 0:
            continue
        m_ = sgn * mu  # E[(m_ + τ w)_+^c]
        if tau == 0:
            val = max(m_, 0) ** int(h.c)
        else:
            Phi, phi_ = mpmath.ncdf(m_ / tau), mpmath.npdf(m_ / tau)
            val = m_ * Phi + tau * phi_ if h.c == 1 else (m_**2 + tau**2) * Phi + m_ * tau * phi_
        tot += cf * val
    return tot


_GH_NODES = 160


def _pair_quad(g1, v1, g2, v2, dps: int = 15):
    """E[g1(v1·x) g2(v2·x)] by mpmath quadrature of the 2-D Gaussian integral.

    With z2 = s2 u and z1 = s1(ρu + √(1−ρ²) w): when g1 is a polynomial or homogeneous of degree 1 or 2
    the inner w-integral is done in closed form (E[(μ + τw)_+] = μΦ(μ/τ) + τφ(μ/τ), ...) and only the
    u-integral is numerical (mpmath); two smooth links use a 160-node tensor Gauss–Hermite rule in float64;
    otherwise both integrals are mpmath quadratures, split at the kinks of homogeneous functions.
    """
    k1, k2 = _kind(g1), _kind(g2)
    if k1[0] == "fn" and k2[0] != "fn":
        g1, v1, g2, v2, k1, k2 = g2, v2, g1, v1, k2, k1
    with mpmath.workdps(dps):
        f1, f2 = _gfun_mp(g1), _gfun_mp(g2)
        s1 = mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(x)) ** 2 for x in v1))
        s2 = mpmath.sqrt(mpmath.fsum(mpmath.mpf(float(x)) ** 2 for x in v2))
        dot = mpmath.fsum(mpmath.mpf(float(x)) * mpmath.mpf(float(y)) for x, y in zip(v1, v2, strict=True))
        rho = dot / (s1 * s2) if s1 > 0 and s2 > 0 else mpmath.mpf(0)
        rho = max(mpmath.mpf(-1), min(mpmath.mpf(1), rho))
        rp = mpmath.sqrt(1 - rho**2)
        dens = mpmath.npdf
        line = [-mpmath.inf, 0, mpmath.inf]
        if k1[0] == "fn" and k2[0] == "fn":  # smooth x smooth: tensor Gauss-Hermite (probabilists')
            from scipy.special import roots_hermitenorm

            nodes, wts = roots_hermitenorm(_GH_NODES)
            wts = wts / math.sqrt(2 * math.pi)
            fa, fb = g1.fn, g2.fn
            U, W = np.meshgrid(nodes, nodes, indexing="ij")
            vals = fa(float(s1) * U) * fb(float(s2) * (float(rho) * U + float(rp) * W))
            return mpmath.mpf(float(wts @ vals @ wts))
        if k1[0] == "poly" or (k1[0] == "hom" and k1[1].c in (1.0, 2.0)):
            return mpmath.quad(lambda u: dens(u) * f2(s2 * u) * _cond_mean_mp(k1, s1 * rho * u, s1 * rp), line)
        if rp == 0:
            return mpmath.quad(lambda u: dens(u) * f1(s1 * u) * f2(s2 * rho * u), line)

        def inner(u):
            w0 = -rho * u / rp
            return mpmath.quad(lambda w: dens(w) * f2(s2 * (rho * u + rp * w)), [-mpmath.inf, w0, mpmath.inf])
        return mpmath.quad(lambda u: dens(u) * f1(s1 * u) * inner(u), line)


def _geometry(V1, V2, _m):
    """Norms and correlations of the rows of V1 against the rows of V2 (numpy, vectorised)."""
    s1 = np.linalg.norm(V1, axis=1)[:, None]
    s2 = np.linalg.norm(V2, axis=1)[None, :]
    den = s1 * s2
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(den > 0, (V1 @ V2.T) / np.where(den > 0, den, 1.0), 0.0)
    return s1, s2, np.clip(rho, -1.0, 1.0)


def _gram(g1, V1, g2, V2, dps: int | None):
    """Matrix of E[g1(V1_i·x) g2(V2_j·x)]: exact when possible (float64 or mpmath at ``dps``), else quadrature."""
    k1, k2 = _kind(g1), _kind(g2)
    if _exact_ok(k1, k2):
        if dps is None:
            s1, s2, rho = _geometry(V1, V2, NP)
            return np.asarray(_pair_exact(k1, k2, s1, s2, rho, NP), dtype=float) * np.ones(rho.shape)
        with mpmath.workdps(dps):
            out = mpmath.matrix(V1.shape[0], V2.shape[0])
            for i, va in enumerate(V1):
                for j, vb in enumerate(V2):
                    A1 = [mpmath.mpf(float(x)) for x in va]
                    A2 = [mpmath.mpf(float(x)) for x in vb]
                    s1 = mpmath.sqrt(mpmath.fsum(x * x for x in A1))
                    s2 = mpmath.sqrt(mpmath.fsum(x * x for x in A2))
                    rho = (mpmath.fsum(x * y for x, y in zip(A1, A2, strict=True)) / (s1 * s2)
                           if s1 > 0 and s2 > 0 else mpmath.mpf(0))
                    out[i, j] = _pair_exact(k1, k2, s1, s2, MP.clip(rho), MP)
            return out
    out = np.empty((V1.shape[0], V2.shape[0]))
    for i, va in enumerate(V1):
        for j, vb in enumerate(V2):
            out[i, j] = float(_pair_quad(g1, va, g2, vb, dps or 15))
    return out


def population_loss(a, Theta, target: Target, noise: float = 0.0, activation="relu", *,
                    dps: int | None = None):
    r"""Population loss :math:`\tfrac12\mathbb E_{x\sim N(0,I_d)}[(h(w,x)-y)^2]`, :math:`y=f^*(x)+\xi`.

    The same ½ convention as :math:`F_S` (whose empirical version this is); ``noise`` is the standard
    deviation of ξ, so it adds :math:`\tfrac12\,\text{noise}^2`. Expanding the square gives pair
    expectations :math:`\mathbb E[g_1(v_1\cdot x)g_2(v_2\cdot x)]` of a bivariate Gaussian:

    * polynomial × polynomial and homogeneous × polynomial: Gaussian moments, with
      :math:`\mathbb E[z_+^e]=2^{e/2-1}\Gamma(\tfrac{e+1}2)/\sqrt\pi` (derived);
    * homogeneous × homogeneous of degree 1 or 2 (ReLU, LeakyReLU, ReLU²): arc-cosine kernels (derived);
    * anything else (tanh, sin links, other degrees): mpmath 2-D quadrature split at the kinks.

    ``dps=None`` evaluates the exact formulas in float64; an integer evaluates them in mpmath.

    Example:
        >>> t = single_index([1.0, 0.0], "relu")
        >>> round(float(population_loss([1.0], [[1.0, 0.0]], t, activation="relu")), 15)  # h = f*
        0.0
        >>> round(float(population_loss([0.0], [[1.0, 0.0]], t, noise=1.0)), 12)  # ½(E[z_+²] + 1)
        0.75
    """
    act = get_activation(activation)
    v = _inputs(a=a, Theta=Theta)
    a_, Th = v["a"], v["Theta"]
    if not isinstance(target, Target):
        raise ValueError(f"target must be a Target (see single_index, ...), not {type(target).__name__}")
    if target.d != Th.shape[1]:
        raise ValueError(f"Theta has d = {Th.shape[1]} but the target has d = {target.d}")
    if not (math.isfinite(float(noise)) and noise >= 0):
        raise ValueError(f"noise must be a finite standard deviation >= 0, got {noise}")
    with mpmath.workdps(dps or mpmath.mp.dps):  # products below stay at the working precision
        G = _gram(act, Th, act, Th, dps)
        cross = [(rg.coef, _gram(act, Th, rg.link, rg.v[None, :], dps)) for rg in target.ridges]
        ff = [[rg.coef * rh.coef * _gram(rg.link, rg.v[None, :], rh.link, rh.v[None, :], dps)[0, 0]
               for rh in target.ridges] for rg in target.ridges]
    if dps is None:
        Eh2 = float(a_ @ G @ a_)
        Ehf = sum(cf * float(a_ @ np.asarray(C, dtype=float)[:, 0]) for cf, C in cross)
        Ef2 = math.fsum(float(x) for row in ff for x in row)
        return 0.5 * (Eh2 - 2 * Ehf + Ef2 + float(noise) ** 2)
    with mpmath.workdps(dps):
        am = [mpmath.mpf(float(x)) for x in a_]
        m = len(am)
        Eh2 = mpmath.fsum(am[i] * am[j] * G[i, j] for i in range(m) for j in range(m))
        Ehf = mpmath.fsum(cf * am[i] * C[i, 0] for cf, C in cross for i in range(m))
        Ef2 = mpmath.fsum(x for row in ff for x in row)
        return (Eh2 - 2 * Ehf + Ef2 + mpmath.mpf(float(noise)) ** 2) / 2


def population_loss_mc(a, Theta, target: Target, noise: float = 0.0, activation="relu", *,
                       samples: int = 200_000, rng: np.random.Generator | None = None) -> tuple[float, float]:
    """Monte Carlo estimate of :func:`population_loss` and its standard error (an independent check)."""
    act = get_activation(activation)
    v = _inputs(a=a, Theta=Theta)
    rng = np.random.default_rng(0) if rng is None else rng
    vals = []
    for start in range(0, samples, 50_000):
        Xs = rng.standard_normal((min(50_000, samples - start), v["Theta"].shape[1]))
        err = act(Xs @ v["Theta"].T) @ v["a"] - target(Xs)
        vals.append(0.5 * err**2)
    allv = np.concatenate(vals) + 0.5 * float(noise) ** 2
    return float(np.mean(allv)), float(np.std(allv) / math.sqrt(allv.size))


# ---------------------------------------------------------------------------------------------------
# Beyond: a two-sided bracket on Υ* in d = 2 (p = 1)


@dataclass(frozen=True)
class CircleCertificate:
    """sup over all unit θ̄ ∈ S¹ of |Σ_i ν_i σ(θ̄·x_i)| / ω(θ̄), computed exactly cell by cell."""

    kappa: float  # the supremum (inf if some direction has ω = 0 but a nonzero dual value)
    cells: int
    argmax: float  # angle attaining it
    local_max: tuple[tuple[float, float], ...] = ()  # (angle, ratio) of each cell's maximum


def _certify_inputs(nu, X, activation, fname: str, d: int):
    """The checks shared by certify_circle (S¹, d = 2) and certify_sphere (S², d = 3)."""
    act = get_activation(activation)
    if act.c != 1:
        raise ValueError(f"{fname} needs c = 1 (p = 1): for p > 1 splitting neurons drives Υ* to 0")
    X = _arr(X, "X", 2)
    if X.shape[1] != d:
        raise ValueError(f"{fname} works on S{'¹²'[d - 2]}: X must have d = {d} columns, got {X.shape[1]}")
    return act, X, _arr(nu, "nu", 1)


def certify_circle(nu, X, activation, dps: int = 50) -> CircleCertificate:
    r"""Exact supremum of :math:`|(\bar\Phi^\top\nu)(\bar\theta)|/\omega(\bar\theta)` over the whole circle.

    For c = 1 (ReLU, LeakyReLU) the activation pattern is constant on each arc between consecutive angles
    where some :math:`\bar\theta\cdot x_i = 0`. On such an arc :math:`(\bar\Phi^\top\nu)(\bar\theta)=\bar\theta\cdot v`
    and :math:`\omega(\bar\theta)^2 = 4\bar B\,\bar\theta^\top M\bar\theta` with constant v, :math:`\bar B`, M, so the
    squared ratio is a ratio of two quadratic forms: its maximum over the arc is at an end point or at a
    generalised eigenvector of :math:`(vv^\top, 4\bar BM)` inside the arc. Everything is evaluated in mpmath at
    ``dps`` digits from the float64 inputs (a global maximisation by exhaustion of finitely many candidates,
    not by sampling).
    """
    act, X, nu = _certify_inputs(nu, X, activation, "certify_circle", 2)
    with mpmath.workdps(dps):
        Xm = [[mpmath.mpf(float(v)) for v in row] for row in X]
        num = [mpmath.mpf(float(v)) for v in nu]
        n = len(Xm)
        two_pi = 2 * mpmath.pi
        crit = sorted({(mpmath.atan2(x[1], x[0]) + s) % two_pi for x in Xm for s in (mpmath.pi / 2, -mpmath.pi / 2)})
        arcs = list(zip(crit, crit[1:] + [crit[0] + two_pi], strict=True))
        plus, minus = mpmath.mpf(act.plus), mpmath.mpf(act.minus)
        best, arg, local = mpmath.mpf(0), mpmath.mpf(0), []
        for lo, hi in arcs:
            mid = (lo + hi) / 2
            e = (mpmath.cos(mid), mpmath.sin(mid))
            slopes = [plus if x[0] * e[0] + x[1] * e[1] > 0 else -minus for x in Xm]  # σ(t) = s_i t on the arc
            v = [mpmath.fsum(num[i] * slopes[i] * Xm[i][k] for i in range(n)) for k in range(2)]
            M = [[mpmath.fsum(slopes[i] ** 2 * Xm[i][k] * Xm[i][l] for i in range(n)) / n for l in range(2)]
                 for k in range(2)]
            Bb = mpmath.fsum(slopes[i] ** 2 * (Xm[i][0] ** 2 + Xm[i][1] ** 2) for i in range(n)) / n
            N = [[4 * Bb * M[k][l] for l in range(2)] for k in range(2)]

            def ratio(phi, v=v, N=N):
                t = (mpmath.cos(phi), mpmath.sin(phi))
                num_ = (t[0] * v[0] + t[1] * v[1]) ** 2
                den = t[0] ** 2 * N[0][0] + 2 * t[0] * t[1] * N[0][1] + t[1] ** 2 * N[1][1]
                if den == 0:
                    return mpmath.inf if num_ > 0 else mpmath.mpf(0)
                return num_ / den

            # Stationary points of (t·v)²/(tᵀNt) on the circle besides t·v = 0: with u = tan φ the condition
            # is (u² + 1)(αu + β) = 0, α = a1 n01 − a0 n11, β = a1 n00 − a0 n01, i.e. t ∝ ±adj(N) v.
            a0, a1 = v
            n00, n01, n11 = N[0][0], N[0][1], N[1][1]
            cands = [lo, hi]
            w0, w1 = n11 * a0 - n01 * a1, n00 * a1 - n01 * a0
            if w0 != 0 or w1 != 0:
                base = mpmath.atan2(w1, w0)
                cands += [base + k * mpmath.pi for k in range(-2, 5) if lo <= base + k * mpmath.pi <= hi]
            cell_best, cell_arg = mpmath.mpf(0), mid
            for phi in cands:
                r_ = ratio(phi)
                if r_ > cell_best:
                    cell_best, cell_arg = r_, phi
            # an end-point supremum is a one-sided limit (the pattern changes there): report a direction
            # just inside the arc, which is what a dictionary can actually contain
            inside = cell_arg + (hi - lo) * mpmath.mpf(1e-9) * (1 if cell_arg == lo else -1 if cell_arg == hi else 0)
            local.append((float(inside % two_pi), float(mpmath.sqrt(cell_best))))
            if cell_best > best:
                best, arg = cell_best, cell_arg
        return CircleCertificate(float(mpmath.sqrt(best)), len(arcs), float(arg % two_pi), tuple(local))


@dataclass(frozen=True)
class Bracket:
    """Υ* ∈ [lower, upper] for one dataset (d = 2, p = 1), from one dictionary."""

    dictionary: int  # number of directions
    refinements: int  # exchange steps that added the certificate's violating directions
    upper: float  # Υ of the flattest interpolator over the dictionary
    lower: float  # νᵀy / κ with ν/κ dual feasible on the whole circle
    kappa: float

    @property
    def rel_width(self) -> float:
        return (self.upper - self.lower) / self.upper


def certify_sphere(nu, X, activation, dps: int = 20) -> tuple[CircleCertificate, list[np.ndarray]]:
    r"""Exact supremum of :math:`|(\bar\Phi^\top\nu)(\bar\theta)|/\omega(\bar\theta)` over the whole sphere S².

    The great circles :math:`x_i^\perp` cut S² into cells with a fixed activation pattern, on which the squared
    ratio is :math:`(\theta\cdot v)^2/\theta^\top N\theta` (see :func:`certify_circle`). Its supremum over a
    closed cell is attained at a vertex (±x_i×x_k, every adjacent pattern), on an edge (a great-circle arc:
    the 2-D closed form in the plane x_i^⊥, either side), or in the interior at θ ∝ ±N⁻¹v (kept only if it
    has the cell's signs). All candidates are evaluated in mpmath at ``dps`` digits. A degenerate vertex
    (three circles through one point) tries every sign pattern, which can only over-estimate (safe).
    Returns the certificate (``cells`` counts the sign patterns examined) and the violated candidates
    (ratio > 1) as unit vectors moved 1e-7 into their cell, so that a dictionary can contain them.
    """
    act, X, nu = _certify_inputs(nu, X, activation, "certify_sphere", 3)
    n = X.shape[0]
    with mpmath.workdps(dps):
        Xm = mpmath.matrix(X.tolist())
        num = [mpmath.mpf(float(v)) for v in nu]
        rows = [Xm[i, :].T for i in range(n)]
        plus, minus = mpmath.mpf(act.plus), mpmath.mpf(act.minus)
        tiny = mpmath.mpf(10) ** (-dps // 2)

        def forms(signs):
            sl = [plus if s_ > 0 else -minus for s_ in signs]
            v = sum((num[i] * sl[i] * rows[i] for i in range(n)), mpmath.matrix(3, 1))
            M = sum((sl[i] ** 2 * rows[i] * rows[i].T for i in range(n)), mpmath.matrix(3, 3)) / n
            Bb = mpmath.fsum(sl[i] ** 2 * (rows[i].T * rows[i])[0] for i in range(n)) / n
            return v, 4 * Bb * M

        def ratio(t, v, N):
            num_ = ((t.T * v)[0]) ** 2
            den = (t.T * N * t)[0]
            return (mpmath.inf if num_ > tiny else mpmath.mpf(0)) if den <= 0 else num_ / den

        def unit(t):
            return t / mpmath.norm(t)

        def signs_at(t):
            return [(rows[i].T * t)[0] for i in range(n)]

        best, best_t, local = mpmath.mpf(0), None, []

        def consider(t, pattern, inward):
            nonlocal best, best_t
            v, N = forms(pattern)
            r_ = ratio(t, v, N)
            if r_ > best:
                best, best_t = r_, t
            if r_ > 1:
                local.append((unit(t + mpmath.mpf(1e-7) * inward), r_))

        import itertools as _it

        cross = lambda a, b: mpmath.matrix([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                                            a[0] * b[1] - a[1] * b[0]])
        patterns = set()
        for i in range(n):  # vertices
            for k in range(i + 1, n):
                w = cross(rows[i], rows[k])
                if mpmath.norm(w) < tiny:
                    continue
                for t in (unit(w), -unit(w)):
                    sg = signs_at(t)
                    free = [l for l in range(n) if abs(sg[l]) < tiny]
                    for choice in _it.product((1, -1), repeat=len(free)):
                        pat = [1 if sg[l] > 0 else -1 for l in range(n)]
                        inward = mpmath.matrix(3, 1)
                        for l, c_ in zip(free, choice, strict=True):
                            pat[l] = c_
                            inward += c_ * unit(rows[l])
                        patterns.add(tuple(pat))
                        consider(t, pat, inward)
        for i in range(n):  # edges: arcs of the great circle x_i^⊥ between crossings
            e1 = unit(cross(rows[i], mpmath.matrix([1, 0, 0]) if abs(rows[i][0]) < 0.9 * mpmath.norm(rows[i])
                            else mpmath.matrix([0, 1, 0])))
            e2 = unit(cross(rows[i], e1))
            crossings = [cross(rows[i], r_) for k, r_ in enumerate(rows) if k != i]
            ang = sorted({(mpmath.atan2((c_.T * e2)[0], (c_.T * e1)[0]) + s_) % (2 * mpmath.pi)
                          for c_ in crossings if mpmath.norm(c_) > tiny for s_ in (0, mpmath.pi)})
            if not ang:
                ang = [mpmath.mpf(0)]
            arcs = list(zip(ang, ang[1:] + [ang[0] + 2 * mpmath.pi], strict=True))
            for lo, hi in arcs:
                mid = (lo + hi) / 2
                tm = mpmath.cos(mid) * e1 + mpmath.sin(mid) * e2
                sg = signs_at(tm)
                for si in (1, -1):
                    pat = [1 if sg[l] > 0 else -1 for l in range(n)]
                    pat[i] = si
                    patterns.add(tuple(pat))
                    v, N = forms(pat)
                    a0, a1 = (e1.T * v)[0], (e2.T * v)[0]
                    n00, n01, n11 = (e1.T * N * e1)[0], (e1.T * N * e2)[0], (e2.T * N * e2)[0]
                    w0, w1 = n11 * a0 - n01 * a1, n00 * a1 - n01 * a0
                    if w0 == 0 and w1 == 0:
                        continue
                    base = mpmath.atan2(w1, w0)
                    for kk in range(-2, 5):
                        phi = base + kk * mpmath.pi
                        if lo <= phi <= hi:
                            consider(mpmath.cos(phi) * e1 + mpmath.sin(phi) * e2, pat, si * unit(rows[i]))
        for pat in patterns:  # interiors: θ ∝ ±N⁻¹v when it has the cell's signs
            v, N = forms(pat)
            try:
                t = mpmath.lu_solve(N, v)
            except ZeroDivisionError:
                continue
            if mpmath.norm(t) == 0:
                continue
            for tt in (unit(t), -unit(t)):
                sg = signs_at(tt)
                if all(sg[l] * pat[l] > tiny for l in range(n)):
                    consider(tt, list(pat), mpmath.matrix(3, 1))
        kappa = float(mpmath.sqrt(best)) * (1 + 1e-12)  # slack for the float64 inputs of the candidates
        pts = [np.array([float(x) for x in t], dtype=float) for t, _ in local]
        return CircleCertificate(kappa, len(patterns), float("nan"),
                                 tuple((j, float(mpmath.sqrt(r_))) for j, (_, r_) in enumerate(local))), pts


def _fibonacci_sphere(K: int) -> np.ndarray:
    i = np.arange(K) + 0.5
    z = 1 - 2 * i / K
    phi = np.pi * (1 + 5**0.5) * i
    r_ = np.sqrt(1 - z**2)
    return np.stack([r_ * np.cos(phi), r_ * np.sin(phi), z], axis=1)


def upsilon_star_bracket(X, y, activation="relu", sizes: Sequence[int] = (16, 64, 256), *,
                         refine: int = 0) -> list[Bracket]:
    r"""Two-sided bounds on :math:`\Upsilon^*=\inf\{\Upsilon(w): h(w,x_i)=y_i\}` over all widths and directions.

    Upper: the flattest interpolator over a dictionary of directions (equally spaced on S¹, a Fibonacci
    lattice on S²). Lower: that solve's dual point ν, scaled by
    :math:`\kappa=\sup_{\bar\theta}|(\bar\Phi^\top\nu)(\bar\theta)|/\omega(\bar\theta)` over the whole sphere
    (:func:`certify_circle`, :func:`certify_sphere`) so that it is feasible for *every* direction; weak duality
    then bounds every interpolator, whatever its width (p = 1, so splitting a neuron does not help).
    ``refine`` exchange steps add the most violated directions to the dictionary and solve again.
    """
    v = _inputs(X=X, y=y)
    d = v["X"].shape[1]
    if d not in (2, 3):
        raise ValueError(f"upsilon_star_bracket is implemented for d = 2 and 3, got d = {d}")
    out = []
    for K in sizes:
        if d == 2:
            ang = 2 * np.pi * (np.arange(K) + 0.5) / K
            Th = np.stack([np.cos(ang), np.sin(ang)], axis=1)
        else:
            Th = _fibonacci_sphere(K)
        for step in range(refine + 1):
            res = flattest_outer_weights(Th, v["X"], v["y"], activation)
            if d == 2:
                cert = certify_circle(res.nu, v["X"], activation)
                new = [np.array([math.cos(a_), math.sin(a_)]) for a_, r_ in cert.local_max if r_ > 1]
            else:
                cert, new = certify_sphere(res.nu, v["X"], activation)
            lower = (math.fsum(res.nu * v["y"]) / max(cert.kappa, 1.0)) * (1 - _ROUND) if math.isfinite(
                cert.kappa) else 0.0
            if step == refine or cert.kappa <= 1 or not new:
                break
            Th = np.vstack([Th, *new])  # exchange step: add violated directions
        out.append(Bracket(Th.shape[0], step, res.value, lower, cert.kappa))
    return out
