r"""The paper's definitions, as SymPy objects: the symbols, the activation families, the network and the loss.

A positively :math:`c`-homogeneous activation is :math:`\sigma(\lambda t)=\lambda^c\sigma(t)` for
:math:`\lambda>0`; the families of the paper (:data:`FAMILIES`) are handled branch by branch (:func:`piece`:
the smooth branch on a fixed sign of the argument). The network is :math:`h(w,x)=\sum_j a_j\sigma(\theta_j\cdot x)`
(:func:`network`) and the loss :math:`F_S(w)=\frac1{2n}\sum_i(h(w,x_i)-y_i)^2` (:func:`empirical_loss`).
The derivations (``symmetry``, ``trace``, ``upsilon``, ``duality``, ``population``) start from these.

References:
    Vardhan, Taheri, Mazumdar (2026), arXiv 2606.04429.
"""

from __future__ import annotations

import sympy as sp

from proofs.common import is_zero

__all__ = ["c", "A", "B", "a", "lam", "r", "Abar", "Bbar", "omega", "s", "t", "p", "z", "phi", "E_SYM",
           "FAMILIES", "piece", "family_degree", "network", "empirical_loss", "equal_positive"]

c = sp.Symbol("c", positive=True)
A, B = sp.symbols("A B", positive=True)
a = sp.Symbol("a", positive=True)  # |a_j|: the neuron trace only sees a_j^2 = |a_j|^2
lam = sp.Symbol("lambda", positive=True)
r = sp.Symbol("r", positive=True)  # ||theta_j||
Abar, Bbar, omega = sp.symbols("Abar Bbar omega", positive=True)
s = sp.Symbol("s", positive=True)  # |(Phi^T nu)_j|
t = sp.Symbol("t", positive=True)
p = sp.Symbol("p", positive=True)
z = sp.Symbol("z", positive=True)
phi = sp.Symbol("phi", positive=True)  # angle between two directions, in (0, pi)

FAMILIES = ("relu", "leaky_relu", "quadratic", "relu_power", "abs_power")
E_SYM = sp.Symbol("e", positive=True)  # the exponent of a Gaussian half moment E[z_+^e]


def piece(family: str, sign: int, zz: sp.Expr, cc: sp.Expr = c, slope: sp.Expr | None = None) -> sp.Expr:
    """σ restricted to sign(z) = ``sign``: the smooth branch used on a fixed activation pattern."""
    slope = sp.Symbol("beta", positive=True) if slope is None else slope
    pw = (zz**2) ** (cc / 2)  # |z|^c, smooth away from 0
    table = {
        "relu": (zz, sp.Integer(0)),
        "leaky_relu": (zz, slope * zz),
        "quadratic": (zz**2, zz**2),
        "relu_power": (pw, sp.Integer(0)),
        "abs_power": (pw, pw),
    }
    return table[family][0 if sign > 0 else 1]


def family_degree(family: str) -> sp.Expr:
    """The degree c of a family: 1 for ReLU and LeakyReLU, 2 for t², the symbol c for the power families."""
    return {"relu": sp.Integer(1), "leaky_relu": sp.Integer(1), "quadratic": sp.Integer(2)}.get(family, c)


def network(av, Z, sigma) -> list[sp.Expr]:
    """h(w, x_i) = Σ_j a_j σ(θ_j·x_i) for every sample i, from the pre-activations ``Z[i][j]`` = θ_j·x_i and
    ``sigma(i, j, z)``, the activation at sample i and neuron j (a branch of :func:`piece`)."""
    return [sum(av[j] * sigma(i, j, Z[i][j]) for j in range(len(av))) for i in range(len(Z))]


def empirical_loss(h, y) -> sp.Expr:
    """F_S = (1/(2n)) Σ_i (h_i − y_i)²."""
    n = len(y)
    return sum((h[i] - y[i]) ** 2 for i in range(n)) / (2 * n)


def equal_positive(lhs: sp.Expr, rhs: sp.Expr) -> bool:
    """lhs == rhs for expressions of positive symbols: log(lhs/rhs) expands to exactly 0."""
    if is_zero(lhs - rhs):
        return True
    return sp.simplify(sp.expand_log(sp.log(sp.powsimp(lhs / rhs, force=True)), force=True)) == 0

