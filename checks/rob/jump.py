r"""rob.jump: across hyperplane j (at a point on no other) ∇f jumps by α_j u_j; on the sphere the tangential
jump has norm |α_j|√(1 − t_j²).

Derivations: :func:`proofs.rob.jump`, :func:`proofs.rob.tangential`; the closed form
:func:`numerics._derived.rob.tangential_jump_norm`. Evaluator: :func:`numerics.rob.canonicalize` (α_j, u_j, t_j).

* S — the jump identity, continuity and ‖u − (u·x)x‖² = 1 − t² simplify to 0 in d = 2, 3, 4;
* P — one-sided gradients of the original net by 100-digit differences against the exact canonical form;
* F — :func:`jump_property`: float64 central differences at points on a kink, confirmed at 60 digits.
"""

from __future__ import annotations

import math
from dataclasses import replace

import mpmath
import numpy as np
import sympy as sp
from hypothesis import strategies as st

from checks.evidence.outcome import Outcome, digits_agreed
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.rob import cases, strategies
from checks.rob.properties import domain_of, net_of
from checks.runners.falsify import NotApplicable, Property, run_properties
from numerics import rob
from numerics._derived import rob as derived
from proofs import rob as proof

ID = "rob.jump"


# ------------------------------------------------------------------------------------------ property
@st.composite
def jump_cases(draw, d: int, sphere: bool):
    case = draw(strategies.nets(d, 1.0 if sphere else 1.5, m_max=4))
    case["sphere"] = sphere
    case["j"] = draw(st.integers(0, 50))
    case["y"] = [draw(st.floats(-1, 1, width=64)) for _ in range(d)]
    return case


def _jump_point(case, cf):
    """A point on kink j inside the domain (on the sphere: on the small circle), or NotApplicable."""
    j = case["j"] % cf.m
    U, t = np.asarray(rob.f64(cf.U), float).reshape(cf.m, -1), np.asarray(rob.f64(cf.t), float)
    u = U[j]
    y = np.asarray(case["y"], float)
    y = y - (y @ u) * u
    if np.linalg.norm(y) < 1e-3:  # fall back to the coordinate axis least aligned with u
        e = np.eye(len(u))[int(np.argmin(np.abs(u)))]
        y = e - (e @ u) * u
    if case.get("sphere"):
        x = t[j] * u + math.sqrt(1 - t[j] ** 2) * y / np.linalg.norm(y)
    else:
        room = math.sqrt(max(case["rho"] ** 2 - t[j] ** 2, 0.0))
        x = t[j] * u + 0.9 * room * y / max(1.0, np.linalg.norm(y))
    others = np.abs(np.delete(U @ x - t, j))
    if len(others) and others.min() < TOL["rob_jump_clearance"]:
        raise NotApplicable("the point is near another kink")
    return j, x


def jump_margin(case, *, exact: bool) -> float:
    """‖(∇f(x + h u) − ∇f(x − h u)) − α_j u_j‖ (ball) or |‖P_x^⊥ jump‖ − |α_j|√(1−t_j²)| (sphere), relative.

    The one-sided gradients come from central differences of the ORIGINAL net (not the canonical form)
    inside each adjacent piece, where f is affine, so they are exact up to rounding.
    """
    dom = domain_of(case)
    cf_f = rob.canonicalize(net_of(case), dom)
    if cf_f.m == 0:
        raise NotApplicable("no kink meets the domain")
    j, x = _jump_point(case, cf_f)
    if not exact:
        W, b, a, v, c = net_of(case)
        f = lambda z: float(np.maximum(W @ z + b, 0) @ a + v @ z + c)  # noqa: E731
        u, al, t = cf_f.U[j], cf_f.alpha[j], cf_f.t[j]
        h, k = 1e-5, 1e-6
        sides = []
        for s in (1, -1):
            p = x + s * h * u
            g = np.array([(f(p + k * e) - f(p - k * e)) / (2 * k) for e in np.eye(len(x))])
            sides.append(g)
        jmp = sides[0] - sides[1]
        scale = 1 + float(np.max(np.abs(a)) * np.max(np.linalg.norm(W, axis=1)))
        if case.get("sphere"):
            return abs(float(np.linalg.norm(jmp - (jmp @ x) * x)) - abs(al) * math.sqrt(1 - t * t)) / scale
        return float(np.linalg.norm(jmp - al * u)) / scale
    with mpmath.workdps(60):
        exact_net = net_of(case, exact=True)
        cf = rob.canonicalize(exact_net, dom)
        # the same hyperplane in the exact form: the one closest to the float one
        Uf = np.asarray(rob.f64(cf.U), float).reshape(cf.m, -1)
        je = int(np.argmin(np.linalg.norm(Uf - cf_f.U[j], axis=1) + np.abs(np.asarray(rob.f64(cf.t)) - cf_f.t[j])))
        a = rob.to_mp(exact_net[2])
        W = rob.to_mp(exact_net[0])
        X = [mpmath.mpf(z) for z in x]
        u = [mpmath.mpf(rob.to_mp(z)) for z in cf.U[je]]
        al, t = mpmath.mpf(rob.to_mp(cf.alpha[je])), mpmath.mpf(rob.to_mp(cf.t[je]))
        # move x exactly onto the exact kink (it is within ~1e-16 of it)
        off = sum(ui * xi for ui, xi in zip(u, X, strict=True)) - t
        X = [xi - off * ui for xi, ui in zip(X, u, strict=True)]
        f = cases.mp_net(exact_net)
        h, k = mpmath.mpf(10) ** -25, mpmath.mpf(10) ** -35
        sides = []
        for s in (1, -1):
            p = [xi + s * h * ui for xi, ui in zip(X, u, strict=True)]
            g = []
            for i in range(len(X)):
                e = [k if q == i else 0 for q in range(len(X))]
                g.append((f([pi + ei for pi, ei in zip(p, e, strict=True)])
                          - f([pi - ei for pi, ei in zip(p, e, strict=True)])) / (2 * k))
            sides.append(g)
        jmp = [p - q for p, q in zip(*sides, strict=True)]
        scale = 1 + max(abs(z) for z in a) * max(mpmath.sqrt(sum(w * w for w in wk)) for wk in W)
        if case.get("sphere"):
            nx = mpmath.sqrt(sum(z * z for z in X))
            xh = [z / nx for z in X]
            jx = sum(p * q for p, q in zip(jmp, xh, strict=True))
            tang = mpmath.sqrt(sum((p - jx * q) ** 2 for p, q in zip(jmp, xh, strict=True)))
            err = abs(tang - abs(al) * mpmath.sqrt(1 - t * t)) / scale
        else:
            err = mpmath.sqrt(sum((p - al * q) ** 2 for p, q in zip(jmp, u, strict=True))) / scale
        return float(err - mpmath.mpf(TOL["rob_jump_confirm"]))


def jump_property(name: str, d: int, *, sphere: bool, budget: int = 100) -> Property:
    return Property(name=name, strategy=jump_cases(d, sphere),
                    screen=lambda c: jump_margin(c, exact=False) - TOL["rob_jump_screen"],
                    confirm=lambda c: jump_margin(c, exact=True), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


PROPERTIES = (jump_property("rob.jump/ball2", 2, sphere=False), jump_property("rob.jump/ball3", 3, sphere=False),
              jump_property("rob.jump/sphere3", 3, sphere=True))


# ------------------------------------------------------------------------------------------ levels
def level_S(ctx: Context) -> Outcome:
    res = {f"d={d}: {k}": v for d in (2, 3, 4) for k, v in {**proof.jump(d), **proof.tangential(d)}.items()}
    ok = all(res.values())
    return Outcome(ok, {"identities": f"{sum(res.values())}/{len(res)}"},
                   f"∇f₊ − ∇f₋ = α u on the adjacent affine pieces, continuity, and ‖u − (u·x)x‖² = 1 − t², "
                   f"d = 2, 3, 4: {sum(res.values())}/{len(res)} simplify to 0", details=res)


def level_P(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.jump/P")
    digits = []
    with mpmath.workdps(100):
        for dom in (rob.Ball(3, 1), rob.Sphere(3)):
            for _ in range(1 if ctx.quick else 3):
                net = cases.exact_net(rng, 4, 3, planted=False)
                cf = rob.canonicalize(net, dom)
                f = cases.mp_net(net)
                for j in range(cf.m):
                    u = [mpmath.mpf(sp.N(z, 110)) for z in cf.U[j]]
                    t, al = mpmath.mpf(sp.N(cf.t[j], 110)), mpmath.mpf(sp.N(cf.alpha[j], 110))
                    y = [mpmath.mpf(float(z)) for z in rng.normal(size=3)]
                    yu = sum(p * q for p, q in zip(y, u, strict=True))
                    y = [p - yu * q for p, q in zip(y, u, strict=True)]
                    ny = mpmath.sqrt(sum(p * p for p in y))
                    r = mpmath.sqrt(1 - t * t) if isinstance(dom, rob.Sphere) else mpmath.sqrt(1 - t * t) / 2
                    x = [t * p + r * q / ny for p, q in zip(u, y, strict=True)]
                    h, k = mpmath.mpf(10) ** -30, mpmath.mpf(10) ** -45
                    g = []
                    for s in (1, -1):
                        p = [xi + s * h * ui for xi, ui in zip(x, u, strict=True)]
                        g.append([(f([pi + (k if q == i else 0) for q, pi in enumerate(p)])
                                   - f([pi - (k if q == i else 0) for q, pi in enumerate(p)])) / (2 * k)
                                  for i in range(3)])
                    jmp = [p - q for p, q in zip(*g, strict=True)]
                    with mpmath.workdps(TOL["precision_dps"]):
                        if isinstance(dom, rob.Sphere):
                            jx = sum(p * q for p, q in zip(jmp, x, strict=True))
                            tang = mpmath.sqrt(sum((p - jx * q) ** 2 for p, q in zip(jmp, x, strict=True)))
                            digits.append(digits_agreed(tang, derived.tangential_jump_norm(al, t)))
                        else:
                            digits.append(digits_agreed(jmp, [al * q for q in u]))
    low = min(digits)
    return Outcome(low >= TOL["precision_min_digits"], {"min_digits": low, "kinks": len(digits)},
                   f"one-sided gradients of the original net by 100-digit differences vs α_j u_j (ball) and "
                   f"|α_j|√(1−t_j²) (sphere) from the exact canonical form: ≥ {low:.0f} digits at {len(digits)} kinks")


def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID, ignore=(rob.KinkCoincidenceWarning,))
    m = out.metric
    return replace(out, summary=f"{m['applicable']} kink points (B², B³, S²; near-parallel, edge thresholds, "
                                f"±1e6 pairs): {m['confirmed']} confirmed jump mismatches")
