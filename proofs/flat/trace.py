r"""flat.trace, derived: the closed-form trace of ∇²F_S against ``sympy.hessian``.

:math:`F_S = \frac1{2n}\sum_i (h(w,x_i)-y_i)^2` is built from its definition for small :math:`(n,d,m)`;
``sympy.hessian`` gives its trace, which must equal
:math:`\sum_j (A_j + a_j^2 B_j) + \frac1n\sum_i r_i\sum_j a_j\sigma''(\theta_j\cdot x_i)\|x_i\|^2`.
ReLU / LeakyReLU / ReLU\ :sup:`c` are handled on a fixed activation pattern (where they are smooth);
:math:`|t|^c = (t^2)^{c/2}` and :math:`t^2` directly.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import sympy as sp

from proofs.common import is_zero
from proofs.flat.definitions import FAMILIES, empirical_loss, family_degree, network, piece

__all__ = ["TraceCase", "TraceCheck", "trace_case", "TRACE_SIZES", "check_trace_against_hessian"]


@dataclass(frozen=True)
class TraceCase:
    family: str
    n: int
    d: int
    m: int
    general_zero: bool  # trace(hessian F_S) - [sum_j (A_j + a_j^2 B_j) + residual term] == 0
    interpolating_zero: bool  # the same at y_i = h(x_i), where the residual term vanishes
    params: int
    seconds: float


@dataclass(frozen=True)
class TraceCheck:
    cases: tuple[TraceCase, ...]

    @property
    def checked(self) -> int:
        return 2 * len(self.cases)

    @property
    def zeros(self) -> int:
        return sum(cs.general_zero + cs.interpolating_zero for cs in self.cases)

    @property
    def ok(self) -> bool:
        return self.zeros == self.checked and self.checked > 0


def _pattern(i: int, j: int) -> int:
    """A fixed mixed activation pattern (both signs occur for n, m >= 2)."""
    return 1 if (i + 2 * j) % 3 != 2 else -1


def trace_case(family: str, n: int, d: int, m: int, cc: sp.Expr | None = None) -> TraceCase:
    """One size: build F_S from its definition, take ``sympy.hessian`` and compare with the closed form."""
    t0 = time.perf_counter()
    cc = family_degree(family) if cc is None else cc
    X = sp.Matrix(n, d, lambda i, k: sp.Symbol(f"x_{i}{k}", real=True))
    y = [sp.Symbol(f"y_{i}", real=True) for i in range(n)]
    th = sp.Matrix(m, d, lambda j, k: sp.Symbol(f"theta_{j}{k}", real=True))
    av = [sp.Symbol(f"a_{j}", real=True) for j in range(m)]
    params = list(av) + list(th)
    u = sp.Symbol("u", real=True)

    def sig(i, j, e):  # sigma evaluated on the pattern branch at expression e
        return piece(family, _pattern(i, j), u, cc).subs(u, e)

    def dsig(i, j, e, k):  # k-th derivative of the branch, then evaluated
        return sp.diff(piece(family, _pattern(i, j), u, cc), u, k).subs(u, e)

    zs = [[(th[j, :] * X[i, :].T)[0] for j in range(m)] for i in range(n)]
    h = network(av, zs, sig)
    F = empirical_loss(h, y)
    tr_hess = sp.hessian(F, params).trace()
    xn2 = [sum(X[i, k] ** 2 for k in range(d)) for i in range(n)]
    Aj = [sum(sig(i, j, zs[i][j]) ** 2 for i in range(n)) / n for j in range(m)]
    Bj = [sum(dsig(i, j, zs[i][j], 1) ** 2 * xn2[i] for i in range(n)) / n for j in range(m)]
    resid = sum((h[i] - y[i]) * sum(av[j] * dsig(i, j, zs[i][j], 2) for j in range(m)) * xn2[i]
                for i in range(n)) / n
    closed = sum(Aj[j] + av[j] ** 2 * Bj[j] for j in range(m))
    general = is_zero(tr_hess - closed - resid)
    interp = {y[i]: h[i] for i in range(n)}
    interpolating = is_zero(tr_hess.subs(interp) - closed)
    return TraceCase(family, n, d, m, general, interpolating, len(params), time.perf_counter() - t0)


TRACE_SIZES = ((1, 1, 1), (2, 1, 2), (1, 2, 2), (2, 2, 2))


@functools.lru_cache(maxsize=4)
def check_trace_against_hessian(sizes: tuple[tuple[int, int, int], ...] = TRACE_SIZES,
                                families: tuple[str, ...] = FAMILIES) -> TraceCheck:
    """Every family at every size: the closed-form trace minus ``trace(sympy.hessian(F_S))`` is 0.

    Block structure for the general size: ``hessian(F_S)`` is a sum over samples of
    ``g_i g_i^T + r_i H_i`` with ``g_i = grad h_i``; its diagonal only couples (a_j, theta_j) of one neuron
    with itself, so the per-neuron, per-sample terms checked here are the terms of every larger size.
    """
    cases = [trace_case(fam, *size) for fam in families for size in sizes]
    return TraceCheck(tuple(cases))
