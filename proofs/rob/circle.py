r"""The d = 2 failure of rigidity: the even cycle on S¹ (rob.circle; SPEC §3).

:func:`even_cycle` — the counterexample with exact rational angles: the kink angles coincide in pairs,
every jump of f′ cancels, |α_j|√(1 − t_j²) = κ, and the exact Lipschitz constant on S¹ from
f(φ) = Σ α_j max(0, cos(φ − θ_j) − cos a_j), arc by arc (:func:`circle_lipschitz`); :func:`cycle_net` is
the example as a net.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from proofs.common import is_zero

EVEN_CYCLE_THETA = (sp.Integer(0), sp.Rational(1, 20), sp.Rational(1, 25), sp.Rational(-1, 100))
EVEN_CYCLE_A = (sp.Rational(1, 10), sp.Rational(1, 20), sp.Rational(1, 25), sp.Rational(9, 100))
EVEN_CYCLE_SIGNS = (1, -1, 1, -1)


def cycle_net(theta, a, signs, kappa=1):
    """The S¹ net Σ_j α_j ReLU(u_j·x − cos a_j), u_j = (cos θ_j, sin θ_j), α_j = κ s_j / sin a_j."""
    W = [[sp.cos(th), sp.sin(th)] for th in theta]
    b = [-sp.cos(x) for x in a]
    alpha = [kappa * s / sp.sin(x) for s, x in zip(signs, a, strict=True)]
    return (W, b, alpha, [0, 0], 0)


def circle_lipschitz(theta, a, alpha):
    """Exact max |f′(φ)| of f(φ) = Σ α_j max(0, cos(φ − θ_j) − cos a_j) on S¹ (a_j ∈ (0, π/2)).

    Derived from the definition: on each arc between consecutive kink angles θ_j ± a_j the active set is
    fixed, f′ = Σ_active d/dφ α_j cos(φ − θ_j), and |f′| is largest at an arc end or where f″ = 0.
    Returns (value, arcs) with value a SymPy expression. Angles must be exact reals in (−π, π).
    """
    phi = sp.Symbol("phi", real=True)
    kinks = sorted({sp.Rational(th + s * x) for th, x in zip(theta, a, strict=True) for s in (1, -1)},
                   key=lambda z: float(z))
    arcs = list(zip(kinks, [*kinks[1:], kinks[0] + 2 * sp.pi], strict=True))
    best, best_val = None, -1.0
    for lo, hi in arcs:
        mid = (lo + hi) / 2
        active = [j for j in range(len(theta)) if sp.N(sp.cos(mid - theta[j]) - sp.cos(a[j]), 50) > 0]
        f = sum((alpha[j] * sp.cos(phi - theta[j]) for j in active), sp.Integer(0))
        fp = sp.diff(f, phi)
        cands = [fp.subs(phi, lo), fp.subs(phi, hi)]
        if active:
            # f′ = A sin φ + B cos φ on the arc; f″ = 0 at φ = atan2(A, B) + kπ, where |f′| = √(A² + B²)
            e = sp.expand(sp.expand_trig(fp))
            A, B = e.coeff(sp.sin(phi)), e.coeff(sp.cos(phi))
            assert is_zero(e - A * sp.sin(phi) - B * sp.cos(phi)), "f' is not a sinusoid on the arc"
            root = sp.atan2(A, B)
            for k in range(-3, 4):
                r = root + k * sp.pi
                if sp.N(lo, 50) < sp.N(r, 50) < sp.N(hi, 50):
                    cands.append(sp.sqrt(A**2 + B**2))
        for cand in cands:
            val = abs(float(sp.N(cand, 30)))
            if val > best_val:
                best, best_val = sp.Abs(cand), val
    return best, arcs


@dataclass(frozen=True)
class EvenCycle:
    kink_pairs: list  # (angle, unit j, unit k) with θ_j ± a_j = θ_k ∓ a_k exactly
    jump_sums: list  # Σ of the jumps of f′ at each shared kink (exactly 0)
    tangential_jumps: list  # |α_j|√(1 − t_j²) − κ (exactly 0)
    lipschitz: sp.Expr  # exact Lip on S¹ for κ = 1
    ratio: sp.Expr  # κ / (2 Lip)


def even_cycle(theta=EVEN_CYCLE_THETA, a=EVEN_CYCLE_A, signs=EVEN_CYCLE_SIGNS) -> EvenCycle:
    phi = sp.Symbol("phi", real=True)
    kappa = sp.Integer(1)
    alpha = [kappa * s / sp.sin(x) for s, x in zip(signs, a, strict=True)]
    at: dict = {}
    for j, (th, x) in enumerate(zip(theta, a, strict=True)):
        for s in (1, -1):
            at.setdefault(sp.Rational(th + s * x), []).append((j, s))
    pairs, sums = [], []
    for ang, units in sorted(at.items(), key=lambda kv: float(kv[0])):
        total = sp.Integer(0)
        for j, s in units:
            # a unit's jump of f′ at its kink: right − left derivative of α max(0, cos(φ−θ) − cos a)
            active = alpha[j] * sp.cos(phi - theta[j])
            d_active = sp.diff(active, phi).subs(phi, ang)
            total += d_active if s == -1 else -d_active  # entering the cap at θ − a, leaving at θ + a
        pairs.append((ang, *[j for j, _ in units]))
        sums.append(sp.simplify(total))
    tj = [sp.simplify(sp.Abs(al) * sp.sqrt(1 - sp.cos(x) ** 2) - kappa)
          for al, x in zip(alpha, a, strict=True)]
    lip, _ = circle_lipschitz(theta, a, alpha)
    return EvenCycle(pairs, sums, tj, lip, kappa / (2 * lip))
