r"""The gradient jump across a kink and its tangential norm on the sphere (rob.jump; SPEC §3).

* :func:`jump` — the gradient of f on the two affine pieces adjacent to hyperplane j differs by α_j u_j,
  and f is continuous across it;
* :func:`tangential` — ‖u − (u·x)x‖² = 1 − t² when ‖u‖ = ‖x‖ = 1 and u·x = t (the sphere's jump norm).
"""

from __future__ import annotations

import sympy as sp

from proofs.common import is_zero


def jump(d: int = 3) -> dict[str, bool]:
    """Across hyperplane 1 (point on no other hyperplane): ∇f₊ − ∇f₋ = α₁u₁, f₊ = f₋ on the hyperplane."""
    x = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    u1, u2, v = (sp.Matrix(sp.symbols(f"{n}1:{d + 1}", real=True)) for n in ("u", "w", "v"))
    t1, t2, a1, a2, c = sp.symbols("t1 t2 alpha1 alpha2 c", real=True)
    out = {}
    for s2 in (0, 1):  # the other unit inactive or active on both sides
        common = v.dot(x) + c + s2 * a2 * (u2.dot(x) - t2)
        f_plus = common + a1 * (u1.dot(x) - t1)  # the piece where u1·x > t1 (ReLU = its argument)
        f_minus = common
        grad = lambda f: sp.Matrix([sp.diff(f, xi) for xi in x])  # noqa: E731, B023
        diff = grad(f_plus) - grad(f_minus) - a1 * u1
        out[f"jump = alpha u (other unit {'active' if s2 else 'inactive'})"] = all(is_zero(e) for e in diff)
        out[f"continuity on the hyperplane (other unit {'active' if s2 else 'inactive'})"] = is_zero(
            (f_plus - f_minus).subs(t1, u1.dot(x)))
    return out


def tangential(d: int = 3) -> dict[str, bool]:
    """‖u − (u·x)x‖² = ‖u‖² − 2(u·x)² + (u·x)²‖x‖², which is 1 − t² on the sphere at u·x = t."""
    x = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    u = sp.Matrix(sp.symbols(f"u1:{d + 1}", real=True))
    U2, X2, s, t = sp.symbols("U2 X2 s t", real=True)
    lhs = (u - u.dot(x) * x).dot(u - u.dot(x) * x)
    identity = is_zero(lhs - (u.dot(u) - 2 * u.dot(x) ** 2 + u.dot(x) ** 2 * x.dot(x)))
    reduced = (U2 - 2 * s**2 + s**2 * X2).subs({U2: 1, X2: 1, s: t})
    return {"identity in components": identity,
            "= 1 - t^2 at |u| = |x| = 1, u.x = t": is_zero(reduced - (1 - t**2))}


def tangential_jump_norm():
    """|α| √(1 − t²) in the symbols (t, α): the closed form behind ``numerics._derived.rob``."""
    t, al = sp.symbols("t alpha", real=True)
    return sp.Abs(al) * sp.sqrt(1 - t**2)
