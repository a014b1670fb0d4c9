r"""The network and the ReLU identities its canonical form rests on (Shmalo 2026, SPEC §3).

Everything starts from the definition ReLU(z) = max(0, z) and the network
f(x) = Σ_k a_k ReLU(w_k·x + b_k) + v·x + c, written ``net = (W, b, a, v, c)``; nothing in :mod:`proofs.rob`
writes a closed form by hand and then trusts it.

* :func:`relu` — the definition;
* :func:`holds_on_signs` — an identity in z holds for z > 0, z < 0 and z = 0;
* :func:`relu_identities` — ReLU(−z) = ReLU(z) − z and ReLU(λz) = λ ReLU(z) (λ > 0), hence the unit
  normalisation a ReLU(w·x + b) = a‖w‖ ReLU(u·x − t), case by case on the sign of z (rob.canonical).
"""

from __future__ import annotations

import sympy as sp

from proofs.common import is_zero


def relu(z):
    """ReLU(z) = max(0, z)."""
    return sp.Max(0, z)


def holds_on_signs(expr, z) -> bool:
    """expr is 0 for z > 0, z < 0 and z = 0 (z real): substitute z = ±p with p > 0, and z = 0."""
    p = sp.Symbol("p", positive=True)
    return all(is_zero(expr.subs(z, val)) for val in (p, -p, 0))


def relu_identities() -> dict[str, bool]:
    z = sp.Symbol("z", real=True)
    lam = sp.Symbol("lambda", positive=True)
    a, b = sp.symbols("a b", real=True)
    w = sp.symbols("w1:4", real=True)
    x = sp.symbols("x1:4", real=True)
    r = sp.sqrt(sum(wi**2 for wi in w))
    pre = sum(wi * xi for wi, xi in zip(w, x, strict=True)) + b
    u_dot_x = sum(wi / r * xi for wi, xi in zip(w, x, strict=True))
    t = -b / r
    # a ReLU(w·x + b) = a r ReLU(u·x − t), since w·x + b = r (u·x − t) and r > 0
    lin = is_zero(pre - r * (u_dot_x - t))
    return {
        "flip: ReLU(-z) = ReLU(z) - z": holds_on_signs(relu(-z) - relu(z) + z, z),
        "homogeneity: ReLU(lambda z) = lambda ReLU(z)": holds_on_signs(relu(lam * z) - lam * relu(z), z),
        "normalisation: w.x + b = |w| (u.x - t)": lin,
        "orientation: a ReLU(u.x - t) = a ReLU(-u.x + t) + a (u.x - t)": holds_on_signs(
            a * relu(z) - a * relu(-z) - a * z, z),
    }
