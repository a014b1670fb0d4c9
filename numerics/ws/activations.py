"""Smooth activations for the cross-entropy slice (SPEC §1): φ, φ′, φ″ in three number systems.

Each activation is a SymPy expression in one variable. Its derivatives are taken by SymPy and
lambdified to mpmath (the high-precision path) and, for user expressions, to numpy and torch. The named
activations also carry overflow-safe float64 forms written with ``scipy.special``; the tests check those
against the SymPy derivatives at 50 digits, so the float64 path is not trusted on its own say-so.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from scipy import special

T = sp.Symbol("t", real=True)

NAMED: dict[str, sp.Expr] = {
    "sigmoid": 1 / (1 + sp.exp(-T)),
    "tanh": sp.tanh(T),
    "softplus": sp.log(1 + sp.exp(T)),
    "gelu": T / 2 * (1 + sp.erf(T / sp.sqrt(2))),
}

_SQRT2PI = math.sqrt(2 * math.pi)


class _NumpyOps:
    expit, tanh, exp, erfc = special.expit, np.tanh, np.exp, special.erfc
    cosh_sq_inv = staticmethod(lambda t: 1 / np.cosh(np.clip(t, -350, 350)) ** 2)
    softplus = staticmethod(lambda t: np.logaddexp(0.0, t))
    sqrt2 = staticmethod(lambda: math.sqrt(2))
    sqrt2pi = staticmethod(lambda: _SQRT2PI)


class _MpOps:
    """mpmath at the current precision: every function to full relative accuracy, constants included."""

    expit = staticmethod(lambda t: 1 / (1 + mpmath.exp(-t)))
    tanh, exp, erfc = staticmethod(mpmath.tanh), staticmethod(mpmath.exp), staticmethod(mpmath.erfc)
    cosh_sq_inv = staticmethod(lambda t: mpmath.sech(t) ** 2)
    softplus = staticmethod(lambda t: t + mpmath.log1p(mpmath.exp(-t)) if t > 0 else mpmath.log1p(mpmath.exp(t)))
    sqrt2 = staticmethod(lambda: mpmath.sqrt(2))
    sqrt2pi = staticmethod(lambda: mpmath.sqrt(2 * mpmath.pi))


class _TorchOps:
    """The same forms on torch tensors (differentiable), for the gradient of λ_sup."""

    def __getattr__(self, name):
        import torch

        return {
            "expit": torch.special.expit,
            "tanh": torch.tanh,
            "exp": torch.exp,
            "erfc": torch.special.erfc,
            "cosh_sq_inv": lambda t: 1 / torch.cosh(torch.clamp(t, -350, 350)) ** 2,
            "softplus": lambda t: torch.logaddexp(torch.zeros_like(t), t),
            "sqrt2": lambda: math.sqrt(2),
            "sqrt2pi": lambda: _SQRT2PI,
        }[name]


def _sigmoid_forms(t, ops):
    s = ops.expit(t)
    d = s * ops.expit(-t)  # s(1 - s) without cancellation
    return s, d, -d * ops.tanh(t / 2)  # 1 - 2s = -tanh(t/2), without cancellation near 0


def _tanh_forms(t, ops):
    th = ops.tanh(t)
    d = ops.cosh_sq_inv(t)  # 1 - th² without cancellation
    return th, d, -2 * th * d


def _softplus_forms(t, ops):
    s = ops.expit(t)
    return ops.softplus(t), s, s * ops.expit(-t)


def _gelu_forms(t, ops):
    cdf = ops.erfc(-t / ops.sqrt2()) / 2  # not (1 + erf)/2: no cancellation for t ≪ 0
    pdf = ops.exp(-t * t / 2) / ops.sqrt2pi()
    return t * cdf, cdf + t * pdf, (2 - t * t) * pdf


# Overflow-safe closed forms of (φ, φ′, φ″) for the named activations; the tests check them against
# the SymPy derivatives at 50 digits.
_FORMS = {"sigmoid": _sigmoid_forms, "tanh": _tanh_forms, "softplus": _softplus_forms, "gelu": _gelu_forms}


def _torch_named(name: str):
    import torch

    return {
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
        "softplus": lambda t: torch.logaddexp(torch.zeros_like(t), t),  # F.softplus thresholds at 20
        "gelu": lambda t: torch.nn.functional.gelu(t, approximate="none"),
    }[name]


@dataclass(frozen=True)
class SmoothActivation:
    """A smooth activation: its SymPy expression and evaluators for φ, φ′, φ″."""

    name: str
    expr: sp.Expr  # in the variable T

    @functools.cached_property
    def derivatives(self) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
        return (self.expr, sp.diff(self.expr, T), sp.diff(self.expr, T, 2))

    def float64(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(φ, φ′, φ″) elementwise in float64."""
        if self.name in _FORMS:
            return _FORMS[self.name](t, _NumpyOps)
        fns = self._lambdified("numpy")
        with np.errstate(all="ignore"):
            out = tuple(np.broadcast_to(np.asarray(f(t), dtype=float), t.shape) for f in fns)
        return out  # type: ignore[return-value]

    def mp(self, t: Any) -> tuple[Any, Any, Any]:
        """(φ, φ′, φ″) of one mpmath number, to the full relative accuracy of the current precision.

        Named activations use their cancellation-free forms (erfc, sech², expit, tanh(t/2)) with mpmath
        functions and constants. A user's SymPy expression is evaluated with guard digits that double
        (20, 40, 80, …) until two evaluations agree to the working precision: ``1 + erf(t/√2)`` at
        t = −11 loses 27 digits to cancellation, which plain evaluation at dps = 50 would silently keep.
        An exact 0 is confirmed up to 4·dps + 200 guard digits (a value that is 0 at all of them, like
        1 + erf(−70), is returned as 0: right in absolute terms). Raises ValueError when nonzero values
        still disagree there.
        """
        if self.name in _FORMS:
            # guard digits for the conditioning of exp(-t²/2) / erfc(-t/√2) / sech² in t (≈ t² and |t|)
            guard = 10 + int(mpmath.log10(1 + t * t))
            with mpmath.workdps(mpmath.mp.dps + guard):
                out = _FORMS[self.name](t, _MpOps)
            return tuple(+x for x in out)  # type: ignore[return-value]
        fns = self._lambdified("mpmath")
        dps = mpmath.mp.dps
        tol = mpmath.mpf(10) ** (-(dps + 3))
        prev, guard, cap = None, 20, 4 * dps + 200
        while True:
            with mpmath.workdps(dps + guard):
                cur = tuple(mpmath.mpf(f(t)) for f in fns)
            if prev is not None:
                pairs = list(zip(prev, cur, strict=True))
                agree = all(abs(a - b) <= tol * max(abs(a), abs(b)) for a, b in pairs)
                # an exact 0 may be total cancellation (1 + erf(−17.7) is 0 at 90 digits): only the cap settles it
                if agree and (guard > cap or all(b != 0 for _, b in pairs)):
                    return tuple(+x for x in cur)  # type: ignore[return-value]
            if guard > cap:
                raise ValueError(
                    f"activation {self.name}: its derivatives at t = {mpmath.nstr(t, 8)} lose more than "
                    f"{guard} digits to cancellation; rewrite the SymPy expression (e.g. erfc(-t/√2) for 1 + erf(t/√2))"
                )
            prev, guard = cur, 2 * guard

    def torch(self):
        """φ as a torch function, for the autograd reference (autograd differentiates it itself)."""
        if self.name in _FORMS:
            return _torch_named(self.name)
        return sp.lambdify(T, self.expr, modules="torch")

    def torch_tables(self, t):
        """(φ, φ′, φ″) on a torch tensor, differentiable (used for ∇_θ λ_sup)."""
        if self.name in _FORMS:
            return _FORMS[self.name](t, _TorchOps())
        return tuple(t * 0 + f(t) for f in self._lambdified("torch"))  # constants broadcast to t

    @functools.cache  # noqa: B019 - a handful of frozen activations; caching lambdify is the point
    def _lambdified(self, module: str):
        return tuple(sp.lambdify(T, d, modules=module) for d in self.derivatives)


def get_activation(activation: str | sp.Expr | SmoothActivation) -> SmoothActivation:
    """Resolve a name (sigmoid, tanh, softplus, gelu) or a SymPy expression in one variable."""
    if isinstance(activation, SmoothActivation):
        return activation
    if isinstance(activation, str):
        key = activation.lower()
        if key not in NAMED:
            raise ValueError(
                f"unknown activation {activation!r}; expected one of {sorted(NAMED)} or a SymPy expression "
                "in one variable"
            )
        return SmoothActivation(key, NAMED[key])
    if isinstance(activation, sp.Expr):
        free = sorted(activation.free_symbols, key=str)
        if len(free) != 1:
            raise ValueError(
                f"a SymPy activation must depend on exactly one variable; {activation} has {len(free)}: {free}"
            )
        expr = activation.xreplace({free[0]: T})
        return SmoothActivation(f"sympy:{sp.sstr(activation)}", expr)
    raise ValueError(f"activation must be a name or a SymPy expression, not {type(activation).__name__}")
