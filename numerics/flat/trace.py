r"""The network, the flatness Tr ∇²F_S, Υ and the rescaling symmetry (float64, and mpmath for P and F).

The network is :math:`h(w,x)=\sum_j a_j\sigma(\theta_j\cdot x)`, the loss
:math:`F_S(w)=\frac1{2n}\sum_i(h(w,x_i)-y_i)^2`, and its flatness is

.. math::

    \operatorname{Tr}\nabla^2F_S(w)=\sum_j\bigl(A_j+a_j^2B_j\bigr)
      +\frac1n\sum_i r_i\sum_j a_j\sigma''(\theta_j\cdot x_i)\|x_i\|^2,

:math:`A_j=\frac1n\sum_i\sigma(\theta_j\cdot x_i)^2`, :math:`B_j=\frac1n\sum_i\sigma'(\theta_j\cdot x_i)^2\|x_i\|^2`,
:math:`r_i=h(w,x_i)-y_i` (:func:`flatness_trace`). The rescaling
:math:`(a_j,\theta_j)\mapsto(\lambda_j^{-c}a_j,\lambda_j\theta_j)` (:func:`rescale`) leaves :math:`h` unchanged; the
minimum of the trace at an interpolator over rescalings is :func:`upsilon`, attained at :func:`optimal_rescaling`.
The per-neuron closed forms are generated from ``proofs/flat/upsilon.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from numerics._derived import flat as derived
from numerics.fallbacks import reach
from numerics.flat.activations import get_activation
from numerics.flat.inputs import as_array, check_inputs
from numerics.namespaces import MP

__all__ = ["network", "preactivations", "neuron_moments", "TraceParts", "trace_parts", "flatness_trace", "upsilon",
           "optimal_rescaling", "rescale", "mp_inputs", "neuron_moments_mp", "flatness_trace_mp", "upsilon_mp"]


def network(a, Theta, X, activation) -> np.ndarray:
    """h(w, x_i) = Σ_j a_j σ(θ_j·x_i) for every row x_i of X."""
    act = get_activation(activation)
    v = check_inputs(a=a, Theta=Theta, X=X)
    return act(v["X"] @ v["Theta"].T) @ v["a"]


def preactivations(X, Theta) -> np.ndarray:
    """Z = XΘᵀ (Z_ij = θ_j·x_i) with every sign and every zero right for the inputs as given: the float product, and
    where its rounding bound γ_{d+2}(|X||Θ|ᵀ) (any summation order, FMA or not; plus an underflow allowance) reaches
    0, the exact dot product in rationals, rounded to nearest — so a sample exactly on a direction's kink gets σ(0)
    and σ′(0) whatever BLAS rounds it to (an FMA leaves 2.25·0.7071… − 2.25·0.7071… at 1.1e-16, and σ′ = 1 there).
    Scale-free: Z/‖θ_j‖ keeps the signs and zeros of the normalised directions."""
    X, Theta = np.asarray(X, float), np.asarray(Theta, float)
    Z = X @ Theta.T
    d = X.shape[1]
    g = (d + 2) * 2.0**-53 / (1 - (d + 2) * 2.0**-53)
    bound = g * (np.abs(X) @ np.abs(Theta).T) * (1 + 2.0**-50) + (d + 2) * 2.0**-1074
    near = np.argwhere(np.abs(Z) <= bound)
    if near.size:
        reach("flat.moments/kink_exact")
        for i, j in near:
            Z[i, j] = float(sum((Fraction(float(X[i, k])) * Fraction(float(Theta[j, k])) for k in range(d)),
                                Fraction(0)))
    return Z


def neuron_moments(Theta, X, activation, Z=None) -> tuple[np.ndarray, np.ndarray]:
    """(A_j, B_j) = ((1/n) Σ_i σ(θ_j·x_i)², (1/n) Σ_i σ′(θ_j·x_i)² ‖x_i‖²), the kinks decided exactly
    (:func:`preactivations`; ``Z``: those pre-activations, already computed)."""
    act = get_activation(activation)
    v = check_inputs(Theta=Theta, X=X)
    Z = preactivations(v["X"], v["Theta"]) if Z is None else Z
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
    v = check_inputs(a=a, Theta=Theta, X=X, y=y)
    a_, X_ = v["a"], v["X"]
    Z = preactivations(X_, v["Theta"])
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


def upsilon(a, Theta, X, activation, *, neuron=derived.upsilon_neuron) -> float:
    r"""Υ(w) = K_c Σ_j A_j^{1/(c+1)} B_j^{c/(c+1)} |a_j|^p: the trace at an interpolator, minimised over rescalings.

    ``neuron(A, B, |a|, c, ns)`` is the per-neuron closed form (the derived one; the planted-bug tests inject
    broken copies).

    Example:
        >>> X = np.array([[1.0, 0.0], [0.0, 2.0]]); Theta = np.array([[1.0, 1.0]])
        >>> round(upsilon([1.0], Theta, X, "relu"), 12)  # K_1 = 2, A = 5/2, B = 5/2: 2·√(A B)
        5.0
    """
    act = get_activation(activation)
    A_, B_ = neuron_moments(Theta, X, act)
    a_ = check_inputs(a=a, Theta=Theta)["a"]
    return float(np.sum(neuron(A_, B_, np.abs(a_), act.c)))


def optimal_rescaling(a, Theta, X, activation) -> np.ndarray:
    r"""λ_j with λ_j^{2c+2} = a_j² B_j / (c A_j): after (a_j, θ_j) → (λ_j^{−c} a_j, λ_j θ_j) the trace is Υ.

    λ_j = 0 where a_j = 0 (the infimum is approached, not attained) and inf where A_j = 0. Evaluated as
    exp(log λ_j) (``derived.log_lambda_opt``, a sum of logs): a subnormal A_j made a_j² B_j/(c A_j) overflow
    although λ_j itself (the ratio's (2c+2)-th root) is a modest float.
    """
    act = get_activation(activation)
    A_, B_ = neuron_moments(Theta, X, act)
    a_ = check_inputs(a=a, Theta=Theta)["a"]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.asarray(np.exp(derived.log_lambda_opt(A_, B_, np.abs(a_), act.c)), dtype=float)


def rescale(a, Theta, lam, activation) -> tuple[np.ndarray, np.ndarray]:
    """(λ_j^{−c} a_j, λ_j θ_j): the symmetry that leaves h unchanged."""
    act = get_activation(activation)
    v = check_inputs(a=a, Theta=Theta)
    lam = as_array(lam, "lam", 1)
    if lam.shape[0] != v["a"].shape[0] or np.any(lam <= 0):
        raise ValueError("lam: need one positive factor per neuron")
    return v["a"] * lam ** (-act.c), v["Theta"] * lam[:, None]


# ---- mpmath versions (P level and the confirmation stage of F) -------------------------------------


def mp_inputs(a, Theta, X, y=None) -> dict[str, list]:
    """Validated inputs as mpmath numbers, exactly their float64 values: {"a": [..], "Theta": [[..]], "X": [[..]]}
    (and "y" when given)."""
    v = check_inputs(a=a, Theta=Theta, X=X, y=y)
    conv = lambda M: [[mpmath.mpf(float(e)) for e in row] for row in M]
    out = {"a": [mpmath.mpf(float(e)) for e in v["a"]], "Theta": conv(v["Theta"]), "X": conv(v["X"])}
    if y is not None:
        out["y"] = [mpmath.mpf(float(e)) for e in v["y"]]
    return out


def neuron_moments_mp(act, Th, Xs):
    """(A, B, Z, ‖x‖²) in mpmath at the working precision: A_j, B_j of :func:`neuron_moments`, the
    pre-activations Z[i][j] = θ_j·x_i and ‖x_i‖², for an :class:`Activation` and mpmath rows ``Th``, ``Xs``
    (as :func:`mp_inputs` gives them)."""
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
    v = mp_inputs(a, Theta, X, y)
    with mpmath.workdps(dps):
        A_, B_, Z, xn2 = neuron_moments_mp(act, v["Theta"], v["X"])
        n, m = len(v["X"]), len(v["a"])
        gn = mpmath.fsum(A_[j] + v["a"][j] ** 2 * B_[j] for j in range(m))
        res = 0
        if act.c != 1:
            for i in range(n):
                r_i = mpmath.fsum(v["a"][j] * act.mp(Z[i][j]) for j in range(m)) - v["y"][i]
                res += r_i * mpmath.fsum(v["a"][j] * act.mp(Z[i][j], 2) for j in range(m)) * xn2[i]
            res /= n
        return +(gn + res)


def upsilon_mp(a, Theta, X, activation, dps: int = 50, *, neuron=derived.upsilon_neuron):
    """:func:`upsilon` in mpmath at ``dps`` digits (``neuron``: the per-neuron closed form, as in :func:`upsilon`)."""
    act = get_activation(activation)
    v = mp_inputs(a, Theta, X)
    with mpmath.workdps(dps):
        A_, B_, _, _ = neuron_moments_mp(act, v["Theta"], v["X"])
        cc = mpmath.mpf(act.c)
        return mpmath.fsum(neuron(A_[j], B_[j], abs(v["a"][j]), cc, MP) for j in range(len(A_)))
