r"""Derivations for the law of robustness for two-layer nets (Shmalo 2026, arXiv 2607.07778; SPEC §3).

Everything starts from the definition ReLU(z) = max(0, z) and the network
f(x) = Σ_k a_k ReLU(w_k·x + b_k) + v·x + c; nothing below writes a closed form by hand and then trusts it.

* :func:`relu_identities` — ReLU(−z) = ReLU(z) − z and ReLU(λz) = λ ReLU(z) (λ > 0), hence the unit
  normalisation a ReLU(w·x + b) = a‖w‖ ReLU(u·x − t), case by case on the sign of z.
* :func:`jump` — the gradient of f on the two affine pieces adjacent to hyperplane j differs by α_j u_j,
  and f is continuous across it.
* :func:`tangential` — ‖u − (u·x)x‖² = 1 − t² when ‖u‖ = ‖x‖ = 1 and u·x = t (the sphere's jump norm).
* :func:`width_2n` — the interpolant's unit profile, exact interpolation under max x_i·x_j ≤ 1 − s,
  the cap-disjointness threshold cos(2 arccos(1 − s)) = 2(1 − s)² − 1 and Lip = √((2 − s)/s).
* :func:`even_cycle` — the d = 2 counterexample with exact rational angles: the kink angles coincide in
  pairs, every jump of f′ cancels, |α_j|√(1 − t_j²) = κ, and the exact Lipschitz constant on S¹ from
  f(φ) = Σ α_j max(0, cos(φ − θ_j) − cos a_j), arc by arc.

``artifacts()`` writes ``proofs/latex/rob.tex`` and ``numerics/_derived/rob.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp
from sympy.printing.pycode import MpmathPrinter

from proofs._common import HEADER, Artifact, is_zero, latex_doc

relu = lambda z: sp.Max(0, z)  # noqa: E731


def _cases(expr, z):
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
        "flip: ReLU(-z) = ReLU(z) - z": _cases(relu(-z) - relu(z) + z, z),
        "homogeneity: ReLU(lambda z) = lambda ReLU(z)": _cases(relu(lam * z) - lam * relu(z), z),
        "normalisation: w.x + b = |w| (u.x - t)": lin,
        "orientation: a ReLU(u.x - t) = a ReLU(-u.x + t) + a (u.x - t)": _cases(
            a * relu(z) - a * relu(-z) - a * z, z),
    }


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


@dataclass(frozen=True)
class Width2n:
    checks: dict
    lipschitz: sp.Expr  # √((2−s)/s) as derived
    threshold: sp.Expr  # 2(1−s)² − 1 as derived
    s: sp.Symbol


def width_2n() -> Width2n:
    s = sp.Symbol("s", positive=True)
    q = sp.Symbol("q", positive=True)  # a nonnegative gap
    rho = sp.Symbol("rho", real=True)
    phi = (relu(rho - (1 - s)) - relu(rho - 1)) / s  # one unit's profile in ρ = x_i·x
    checks = {
        "phi(1) = 1 (the unit reproduces its own label), 0 < s <= 1": is_zero(
            phi.subs(rho, 1).subs(s, 1 / (1 + q)) - 1) and is_zero(phi.subs({rho: 1, s: 1}) - 1),
        "phi(rho) = 0 for rho <= 1 - s (separation gives exact interpolation)": is_zero(
            phi.subs(rho, 1 - s - q)) and is_zero(phi.subs(rho, 1 - s)),
    }
    # cap of unit i: {x: x_i·x > 1 − s}, angular radius arccos(1 − s); caps i, j are disjoint iff the
    # angle between x_i and x_j is >= twice that, i.e. x_i·x_j <= cos(2 arccos(1 − s)).
    threshold = sp.expand(sp.expand_trig(sp.cos(2 * sp.acos(1 - s))))
    checks["threshold = 2(1-s)^2 - 1"] = is_zero(threshold - (2 * (1 - s) ** 2 - 1))
    # Lip on one cap: f = (y/s)(u·x − t) + const there, g = (y/s) u, |y| = 1, t = 1 − s > 0. The great
    # sphere {g·x = 0} misses the cap, so the max of ‖g‖² − (g·x)² is at the cap's rim u·x = t.
    y = sp.Symbol("y", real=True)
    g2 = (y / s) ** 2
    tangential2 = g2 - (y / s * (1 - s)) ** 2  # ‖g‖² − (g·x)² at u·x = 1 − s
    lip2 = sp.factor(sp.simplify(tangential2.subs(y, 1)))
    checks["Lip^2 = (2 - s)/s on each cap (|y| = 1)"] = is_zero(lip2 - (2 - s) / s)
    lip = sp.sqrt((2 - s) / s)
    checks["s = 1/4 gives sqrt(7)"] = is_zero(lip.subs(s, sp.Rational(1, 4)) - sp.sqrt(7))
    return Width2n(checks, lip, sp.expand(2 * (1 - s) ** 2 - 1), s)


# ----------------------------------------------------------------------------------------- even cycle
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


# ------------------------------------------------------------------------------------------ artifacts
def artifacts() -> list[Artifact]:
    w = width_2n()
    t, al = sp.symbols("t alpha", real=True)
    jump_norm = sp.Abs(al) * sp.sqrt(1 - t**2)
    ec = even_cycle()
    code = HEADER.format(source="proofs/rob/core.py") + "\n".join([
        '"""Closed forms derived in proofs/rob/core.py (SPEC §3)."""',
        "",
        "import mpmath",
        "",
        "from sympy import Rational",
        "",
        "",
        "def width2n_lipschitz(s):",
        '    """Lip of the width-2n interpolant on S^{d-1} when its caps are disjoint."""',
        f"    return {MpmathPrinter().doprint(w.lipschitz)}",
        "",
        "",
        "def cap_threshold(s):",
        '    """Caps of the width-2n interpolant are disjoint iff max_{i != j} x_i.x_j <= this."""',
        f"    return {sp.pycode(w.threshold)}",
        "",
        "",
        "def tangential_jump_norm(alpha, t):",
        '    """|alpha| sqrt(1 - t^2): the tangential gradient jump at a kink u.x = t on the sphere."""',
        f"    return {MpmathPrinter().doprint(jump_norm)}",
        "",
        "",
        "# The paper's even-cycle example on S^1 (exact): u_j = (cos theta_j, sin theta_j), t_j = cos a_j,",
        "# alpha_j = kappa * sign_j / sin a_j.",
        f"EVEN_CYCLE_THETA = ({', '.join(f'Rational({x.p}, {x.q})' for x in EVEN_CYCLE_THETA)})",
        f"EVEN_CYCLE_A = ({', '.join(f'Rational({x.p}, {x.q})' for x in EVEN_CYCLE_A)})",
        f"EVEN_CYCLE_SIGNS = {EVEN_CYCLE_SIGNS}",
        f"EVEN_CYCLE_LIPSCHITZ_PER_KAPPA = {sp.N(ec.lipschitz, 30)!s}  # float of the exact value below",
        f"EVEN_CYCLE_LIPSCHITZ_EXACT = {str(sp.sstr(ec.lipschitz))!r}",
        "",
    ])
    tex = latex_doc("law of robustness (Shmalo 2026), derived in proofs/rob/core.py", [
        ("ReLU orientation flip", r"\operatorname{ReLU}(-z) = \operatorname{ReLU}(z) - z"),
        ("unit normalisation", r"a\operatorname{ReLU}(w\cdot x+b) = a\|w\|\operatorname{ReLU}(u\cdot x - t),"
                               r"\quad u = w/\|w\|,\ t = -b/\|w\|"),
        ("gradient jump", r"\nabla f_+ - \nabla f_- = \alpha_j u_j"),
        ("tangential jump", r"\|u - (u\cdot x)x\|^2 = 1 - t^2 \quad (\|u\|=\|x\|=1,\ u\cdot x = t)"),
        ("cap threshold", sp.Eq(sp.Symbol(r"\max_{i\neq j} x_i\cdot x_j"), w.threshold)),
        ("width-2n Lipschitz constant", sp.Eq(sp.Symbol(r"\operatorname{Lip}"), w.lipschitz)),
        ("even cycle, exact Lipschitz constant (kappa = 1)",
         sp.Eq(sp.Symbol(r"\operatorname{Lip}"), ec.lipschitz)),
        ("even cycle, violation ratio", sp.Eq(sp.Symbol(r"\kappa/(2\operatorname{Lip})"), ec.ratio)),
    ])
    return [Artifact("proofs/latex/rob.tex", tex), Artifact("numerics/_derived/rob.py", code)]
