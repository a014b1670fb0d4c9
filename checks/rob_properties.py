r"""Falsification properties for rob.* (SPEC §3): strategies, float64 screens, 50-digit confirmations.

Every case is plain JSON (floats, or integers for exact S¹ configurations), so a reproducer rebuilds it.
Screens use float64 nets and the float64 arrangement code; confirmations rebuild the case in exact
arithmetic (float64 entries are binary rationals) and decide with the 50-digit combinatorics and exact
values of :mod:`numerics.rob`.

Adversarial features the net strategy plants (``kind``): near-parallel pairs (relative tilt 1e-3..1e-9),
thresholds within 1e-9..1e-3 of ±ρ (ρ = R or 1), ±10⁶ cancelling units on one hyperplane with different
scalings, same-hyperplane pairs (λw, λb), and units that are zero or affine on the domain.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from checks.falsify import NotApplicable, Property
from numerics import rob as K

KINDS = ("plain", "near_parallel", "edge_threshold", "cancel_1e6", "same_plane", "outside")
_f = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False, width=64)


def _unit(x):
    n = math.sqrt(sum(v * v for v in x))
    return [v / n for v in x] if n > 0 else [1.0] + [0.0] * (len(x) - 1)


@st.composite
def nets(draw, d: int, rho: float, m_max: int = 5):
    """A JSON net case on a domain of radius rho with planted adversarial structure."""
    m = draw(st.integers(1, m_max))
    W = [[draw(_f) for _ in range(d)] for _ in range(m)]
    W = [w if any(abs(x) > 1e-3 for x in w) else [1.0] + w[1:] for w in W]
    b = [draw(st.floats(-1.2, 1.2, width=64)) * rho * math.sqrt(sum(x * x for x in w)) for w in W]
    a = [draw(st.floats(-3, 3, width=64)) for _ in range(m)]
    v = [draw(st.floats(-1, 1, width=64)) for _ in range(d)]
    kind = draw(st.sampled_from(KINDS))
    j = draw(st.integers(0, m - 1))
    w = W[j]
    nw = math.sqrt(sum(x * x for x in w))
    if kind == "near_parallel":
        eps = 10.0 ** -draw(st.integers(3, 9))
        tilt = [draw(_f) for _ in range(d)]
        W.append([x + eps * nw * y for x, y in zip(w, tilt, strict=True)])
        b.append(b[j] * (1 + eps * draw(_f)))
        a.append(-a[j] * draw(st.sampled_from([1.0, 0.5, 2.0])))
    elif kind == "edge_threshold":
        eps = 10.0 ** -draw(st.integers(3, 9))
        sgn = draw(st.sampled_from([-1.0, 1.0]))
        b[j] = -sgn * (rho - eps) * nw
    elif kind == "cancel_1e6":
        lam = draw(st.sampled_from([1.0, 2.0, 0.5, 3.0]))
        W += [w, [lam * x for x in w]]
        b += [b[j], lam * b[j]]
        a += [1e6, -1e6 / lam]
    elif kind == "same_plane":
        lam = draw(st.sampled_from([0.5, 2.0, 4.0]))
        W.append([lam * x for x in w])
        b.append(lam * b[j])
        a.append(draw(st.floats(-3, 3, width=64)))
    elif kind == "outside":
        W.append(list(w))
        b.append(draw(st.sampled_from([-1.0, 1.0])) * draw(st.floats(1.0, 2.0)) * rho * nw)
        a.append(draw(st.floats(-3, 3, width=64)))
    return {"d": d, "rho": rho, "kind": kind, "W": W, "b": b, "a": a, "v": v, "c": draw(st.floats(-1, 1))}


def net_of(case, exact: bool = False):
    """The case's net: float64, or exact (SymPy entries kept, floats read as binary rationals)."""
    raw = (case["W"], case["b"], case["a"], case["v"], case["c"])
    return K.as_exact(raw) if exact else K.as_float(raw)


def domain_of(case):
    return K.Sphere(case["d"]) if case.get("sphere") else K.Ball(case["d"], case["rho"])


def _mp(x):
    return mpmath.mpf(K.to_mp(x)) if not isinstance(x, mpmath.mpf) else x


# ------------------------------------------------------------------------------------------ rigidity
def rigidity_margin(case, *, exact: bool, constant: float = 2.0) -> float:
    """max_j w_j − constant·Lip, w_j = |α_j| (ball) or |α_j|√(1 − t_j²) (sphere); > 0 is a violation.

    Scaled by 1 + max w_j so that float64 noise stays far below the screen's threshold of 0.
    """
    dom = domain_of(case)
    cf = K.canonicalize(net_of(case, exact), dom)
    if cf.m == 0:
        raise NotApplicable("no kink meets the domain")
    L = K.lipschitz(cf, dom)
    with mpmath.workdps(K.MP_DPS):
        if isinstance(dom, K.Sphere):
            w = [_mp(x) for x in cf.tangential_jumps()] if exact else list(cf.tangential_jumps())
        else:
            w = [abs(_mp(x)) for x in cf.alpha] if exact else list(np.abs(cf.alpha))
        top = max(w)
        up = L.mp() if exact else float(L.upper)
        return float((top - constant * up) / (1 + top))


def _screen_rigidity(constant):
    def screen(case):
        m = rigidity_margin(case, exact=False, constant=constant)
        return m - 1e-9  # float64 noise on an equality case (|α| = 2 Lip happens) is not a hit
    return screen


def _confirm_rigidity(constant):
    def confirm(case):
        return rigidity_margin(case, exact=True, constant=constant)
    return confirm


def rigidity_property(name: str, d: int, *, sphere: bool, rho: float = 1.0, constant: float = 2.0,
                      budget: int = 120) -> Property:
    strat = nets(d, rho).map(lambda c: {**c, "sphere": sphere})
    return Property(name=name, strategy=strat, screen=_screen_rigidity(constant),
                    confirm=_confirm_rigidity(constant), to_json=lambda c: c, from_json=lambda c: c,
                    budget=budget)


# ------------------------------------------------------------------------------------------------ jump
@st.composite
def jump_cases(draw, d: int, sphere: bool):
    case = draw(nets(d, 1.0 if sphere else 1.5, m_max=4))
    case["sphere"] = sphere
    case["j"] = draw(st.integers(0, 50))
    case["y"] = [draw(st.floats(-1, 1, width=64)) for _ in range(d)]
    return case


def _jump_point(case, cf):
    """A point on kink j inside the domain (on the sphere: on the small circle), or NotApplicable."""
    j = case["j"] % cf.m
    U, t = np.asarray(K.f64(cf.U), float).reshape(cf.m, -1), np.asarray(K.f64(cf.t), float)
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
    if len(others) and others.min() < 1e-4:
        raise NotApplicable("the point is near another kink")
    return j, x


def jump_margin(case, *, exact: bool) -> float:
    """‖(∇f(x + h u) − ∇f(x − h u)) − α_j u_j‖ (ball) or |‖P_x^⊥ jump‖ − |α_j|√(1−t_j²)| (sphere), relative.

    The one-sided gradients come from central differences of the ORIGINAL net (not the canonical form)
    inside each adjacent piece, where f is affine, so they are exact up to rounding.
    """
    dom = domain_of(case)
    cf_f = K.canonicalize(net_of(case), dom)
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
        cf = K.canonicalize(net_of(case, exact=True), dom)
        # the same hyperplane in the exact form: the one closest to the float one
        Uf = np.asarray(K.f64(cf.U), float).reshape(cf.m, -1)
        je = int(np.argmin(np.linalg.norm(Uf - cf_f.U[j], axis=1) + np.abs(np.asarray(K.f64(cf.t)) - cf_f.t[j])))
        W, b, a, v, c = (K.to_mp(z) for z in net_of(case, exact=True))
        X = [mpmath.mpf(z) for z in x]
        u = [mpmath.mpf(K.to_mp(z)) for z in cf.U[je]]
        al, t = mpmath.mpf(K.to_mp(cf.alpha[je])), mpmath.mpf(K.to_mp(cf.t[je]))
        # move x exactly onto the exact kink (it is within ~1e-16 of it)
        off = sum(ui * xi for ui, xi in zip(u, X, strict=True)) - t
        X = [xi - off * ui for xi, ui in zip(X, u, strict=True)]

        def f(z):
            return sum(ak * max(sum(wi * zi for wi, zi in zip(wk, z, strict=True)) + bk, 0)
                       for wk, bk, ak in zip(W, b, a, strict=True)) + sum(vi * zi for vi, zi in zip(v, z,
                                                                                                    strict=True)) + c
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
        return float(err - mpmath.mpf(10) ** -20)


def jump_property(name: str, d: int, *, sphere: bool, budget: int = 100) -> Property:
    return Property(name=name, strategy=jump_cases(d, sphere),
                    screen=lambda c: jump_margin(c, exact=False) - 1e-6,
                    confirm=lambda c: jump_margin(c, exact=True), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


# ------------------------------------------------------------------------------------------ canonical
RECIPES = ("split", "flip", "cancel_1e6", "scale", "zero_unit", "affine_unit", "permute")


@st.composite
def canon_cases(draw, d: int, sphere: bool):
    case = draw(nets(d, 1.0 if sphere else 1.5, m_max=4))
    case["sphere"] = sphere
    case["recipe"] = draw(st.lists(st.sampled_from(RECIPES), min_size=1, max_size=3))
    case["pick"] = draw(st.integers(0, 50))
    case["X"] = [[draw(st.floats(-1, 1, width=64)) for _ in range(d)] for _ in range(6)]
    return case


def reparametrise(case, exact: bool):
    """A different parametrisation of the same function (exact when ``exact``), by the case's recipe."""
    import sympy as sp

    W, b, a, v, c = net_of(case, exact)
    num = (lambda x: sp.Rational(x)) if exact else float
    W = [list(r) for r in W]
    b, a, v = list(b), list(a), list(v)
    rho = num(case["rho"]) if not case.get("sphere") else num(1)
    for step, op in enumerate(case["recipe"]):
        j = (case["pick"] + step) % len(a)
        w, bj, aj = W[j], b[j], a[j]
        if op == "split":  # a ReLU(z) = (a/2) ReLU(z) + (a/4) ReLU(2z)
            a[j] = aj / 2
            W.append([2 * x for x in w])
            b.append(2 * bj)
            a.append(aj / 4)
        elif op == "flip":  # a ReLU(z) = a ReLU(−z) + a z
            W[j], b[j] = [-x for x in w], -bj
            v = [vi + aj * x for vi, x in zip(v, w, strict=True)]
            c = c + aj * bj
        elif op == "cancel_1e6":
            W += [list(w), [3 * x for x in w]]
            b += [bj, 3 * bj]
            a += [num(10**6), num(-10**6) / 3]
        elif op == "scale":
            W[j], b[j], a[j] = [4 * x for x in w], 4 * bj, aj / 4
        elif op == "zero_unit":  # a unit that is zero on the domain: threshold beyond rho (‖w‖₁ ≥ ‖w‖: rational)
            nw = sum(abs(x) for x in w)
            W.append(list(w))
            b.append(-(rho + 1) * nw)
            a.append(num(5))
        elif op == "affine_unit":  # ReLU(z) = z where z > 0 on the whole domain; compensate in (v, c)
            nw = sum(abs(x) for x in w)
            bb = (rho + 1) * nw
            W.append(list(w))
            b.append(bb)
            a.append(num(7))
            v = [vi - 7 * x for vi, x in zip(v, w, strict=True)]
            c = c - 7 * bb
        elif op == "permute":
            order = list(range(len(a)))[::-1]
            W, b, a = [W[i] for i in order], [b[i] for i in order], [a[i] for i in order]
    if exact:
        return (W, b, a, v, c)
    return (np.array(W, float), np.array(b, float), np.array(a, float), np.array(v, float), float(c))


def canon_margin(case, *, exact: bool) -> float:
    """> 0 when canonicalisation changes f on the domain or two parametrisations give two forms."""
    dom = domain_of(case)
    net1, net2 = net_of(case, exact), reparametrise(case, exact)
    c1, c2 = K.canonicalize(net1, dom), K.canonicalize(net2, dom)
    X = np.asarray(case["X"], float)
    if case.get("sphere"):
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    else:
        X = X * case["rho"] / max(1.0, float(np.max(np.linalg.norm(X, axis=1))))
    if not exact:
        scale = 1 + float(np.sum(np.abs(np.asarray(net2[2])) * np.linalg.norm(net2[0], axis=1)))
        err = max(float(np.max(np.abs(K.evaluate(net1, X) - K.evaluate(c1, X)))),
                  float(np.max(np.abs(K.evaluate(net2, X) - K.evaluate(c2, X))))) / scale
        same = c1.equals(c2, tol=1e-7)
        return (err - 1e-9) if same else 1.0
    import sympy as sp

    if not c1.equals(c2):
        return 1.0
    Xq = [[sp.Rational(float(x)) for x in row] for row in X]
    if case.get("sphere"):  # rational points on the sphere: inverse stereographic projection
        Xq = [_stereo(row) for row in Xq]
    worst = 0
    for row in Xq:
        f1 = _exact_eval(net1, row)
        fc = _exact_eval(c1.net(), row)
        worst = max(worst, abs(sp.N(f1 - fc, 60)))
    return float(worst) - 1e-40


def _stereo(y):
    """Inverse stereographic projection of y ∈ Q^{d−1}×{·}: a rational point on S^{d−1}."""
    import sympy as sp

    z = y[:-1]
    s = sum(q * q for q in z)
    return [2 * q / (1 + s) for q in z] + [(s - 1) / (1 + s)] if z else [sp.Integer(1)]


def _exact_eval(net, x):
    import sympy as sp

    W, b, a, v, c = net
    out = c + sum(vi * xi for vi, xi in zip(v, x, strict=True))
    for wk, bk, ak in zip(W, b, a, strict=True):
        z = sp.radsimp(sp.together(sp.expand(sum(wi * xi for wi, xi in zip(wk, x, strict=True)) + bk)))
        out += ak * sp.Max(0, z)
    return out


def canon_property(name: str, d: int, *, sphere: bool, budget: int = 60) -> Property:
    return Property(name=name, strategy=canon_cases(d, sphere), screen=lambda c: canon_margin(c, exact=False),
                    confirm=lambda c: canon_margin(c, exact=True), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


# -------------------------------------------------------------------------------------------- circle
@st.composite
def cycle_cases(draw, kmax: int = 3):
    """A configuration of 2k units on S¹ whose kinks meet in pairs along an even cycle of units.

    2k distinct kink angles p_i (milliradians in [−400, 400]) are visited in a random cyclic order; unit j
    spans the arc between the j-th and (j+1)-th visited angles, so consecutive units share a kink. The
    weights are α_j = κ_j s_j / sin a_j with alternating s_j (cancelling jumps when all κ_j are equal);
    ``kappa`` lets the search break the cancellation too. This is NOT the paper's example: nothing
    fixes the angles or the order.
    """
    k = draw(st.integers(2, kmax))
    pts = draw(st.lists(st.integers(-400, 400), min_size=2 * k, max_size=2 * k, unique=True))
    order = draw(st.permutations(list(range(2 * k))))
    kap = draw(st.lists(st.sampled_from([8, 8, 8, 7, 9, 4, 16]), min_size=2 * k, max_size=2 * k))
    case = {"pts": pts, "order": list(order), "kappa8": kap}
    assume(not is_papers_example(case))
    return case


def is_papers_example(case) -> bool:
    """Does the case reproduce the paper's even cycle (kinks at −0.1, 0, 0.08, 0.1 rad, the same units)?"""
    units = {(float(t), float(a)) for t, a, _ in cycle_units(case)}
    paper = {(0.0, 0.1), (0.05, 0.05), (0.04, 0.04), (-0.01, 0.09)}
    return units == paper


def cycle_units(case):
    """(θ_j, a_j, α_j) in exact rationals / SymPy: θ = midpoint, a = half-length, α = κ_j s_j / sin a."""
    import sympy as sp

    pts = [sp.Rational(p, 1000) for p in case["pts"]]
    o = case["order"]
    n = len(o)
    units = []
    for j in range(n):
        p, q = pts[o[j]], pts[o[(j + 1) % n]]
        lo, hi = min(p, q), max(p, q)
        th, a = (lo + hi) / 2, (hi - lo) / 2
        units.append((th, a, sp.Rational(case["kappa8"][j], 8) * (-1) ** j))
    return units


def cycle_net(case):
    import sympy as sp

    us = cycle_units(case)
    W = [[sp.cos(th), sp.sin(th)] for th, _, _ in us]
    b = [-sp.cos(a) for _, a, _ in us]
    al = [k / sp.sin(a) for _, a, k in us]
    return (W, b, al, [0, 0], 0)


def cycle_lip_float(theta, a, alpha) -> float:
    """max |f′| on S¹ from the exact kink angles θ_j ± a_j (given, so coincidences are exact)."""
    theta, a, alpha = (np.asarray(x, float) for x in (theta, a, alpha))
    kinks = np.sort(np.concatenate([theta - a, theta + a]))
    # θ ± a recomputes a shared kink with ~1e-17 rounding: angles closer than 1e-12 are the same kink
    # (case angles are multiples of 1e-3; the exact confirmation needs no tolerance)
    kinks = kinks[np.r_[True, np.diff(kinks) > 1e-12]]
    lo, hi = kinks, np.r_[kinks[1:], kinks[0] + 2 * np.pi]
    mid = (lo + hi) / 2
    act = np.cos(mid[:, None] - theta[None, :]) > np.cos(a)[None, :]
    P = (act * alpha) @ np.cos(theta)
    Q = (act * alpha) @ np.sin(theta)
    fp = lambda p: -P * np.sin(p) + Q * np.cos(p)  # noqa: E731
    vals = np.maximum(np.abs(fp(lo)), np.abs(fp(hi)))
    amp = np.hypot(P, Q)
    for s in (0.0, np.pi):
        star = np.mod(np.arctan2(Q, -P) + np.pi / 2 + s - lo, 2 * np.pi) + lo
        vals = np.where((star > lo) & (star < hi), amp, vals)
    return float(vals.max())


def circle_margin(case, *, exact: bool) -> float:
    """(max_j |α_j|√(1 − t_j²) − 2 Lip_{S¹}) / (1 + max): > 0 means rigidity fails on S¹."""
    us = cycle_units(case)
    if not exact:
        th = [float(t) for t, _, _ in us]
        a = [float(x) for _, x, _ in us]
        al = [float(k) / math.sin(float(x)) for _, x, k in us]
        top = max(abs(x) * math.sin(y) for x, y in zip(al, a, strict=True))
        return (top - 2 * cycle_lip_float(th, a, al)) / (1 + top) - 1e-9
    L = K.lipschitz(cycle_net(case), K.Sphere(2))
    with mpmath.workdps(K.MP_DPS):
        top = max(abs(mpmath.mpf(k.p) / k.q) for _, _, k in us)  # |α| sin a = κ_j exactly
        return float((top - 2 * L.mp()) / (1 + top))


def circle_property(budget: int = 200) -> Property:
    return Property(name="rob.circle/d2", strategy=cycle_cases(), screen=lambda c: circle_margin(c, exact=False),
                    confirm=lambda c: circle_margin(c, exact=True), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


@st.composite
def lifted_cycles(draw):
    """The same cycle configurations lifted to S² (u_j tilted out of the plane by up to 0.3 rad)."""
    case = draw(cycle_cases())
    tilt = draw(st.lists(st.integers(-300, 300), min_size=len(case["order"]), max_size=len(case["order"])))
    us = cycle_units(case)
    W = []
    for (th, _, _), z in zip(us, tilt, strict=True):
        e = math.sin(z / 1000.0)
        W.append([math.cos(float(th)) * math.cos(z / 1000.0), math.sin(float(th)) * math.cos(z / 1000.0), e])
    b = [-math.cos(float(a)) for _, a, _ in us]
    al = [float(k) / math.sin(float(a)) for _, a, k in us]
    return {"d": 3, "rho": 1.0, "sphere": True, "kind": "lifted_cycle", "W": W, "b": b, "a": al,
            "v": [0.0, 0.0, 0.0], "c": 0.0}


def circle_d3_property(budget: int = 80) -> Property:
    return Property(name="rob.circle/d3", strategy=lifted_cycles(), screen=_screen_rigidity(2.0),
                    confirm=_confirm_rigidity(2.0), to_json=lambda c: c, from_json=lambda c: c, budget=budget)


# ---------------------------------------------------------------------------------------------- value
@st.composite
def value_cases(draw, d: int, sphere: bool):
    case = draw(nets(d, 1.0 if sphere else 2.0, m_max=5))
    case["sphere"] = sphere
    n = draw(st.integers(1, 6))
    case["Xdata"] = [[draw(st.floats(-1, 1, width=64)) for _ in range(d)] for _ in range(n)]
    case["flip"] = [draw(st.booleans()) for _ in range(n)]
    scale = draw(st.sampled_from([0.1, 0.3, 1.0, 3.0]))  # small outputs fit ±1 labels more often
    case["a"] = [scale * x for x in case["a"]]
    case["v"] = [scale * x for x in case["v"]]
    case["c"] = scale * case["c"]
    return case


def _value_points(case):
    d = case["d"]
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    Xd = np.asarray(case["Xdata"], float)
    Xd = Xd / np.maximum(np.linalg.norm(Xd, axis=1, keepdims=True), 1e-12)
    if case.get("sphere"):
        return X, Xd
    R = case["rho"]
    return X * R, Xd * R * 0.9


def value_margin(case, *, exact: bool, constant: float = 4.0) -> float:
    """max_sample |f| − (2 + 4 Lip) for nets that fit ±1 labels below the noise floor (σ² = 1).

    The sampled maximum is a lower bound on sup|f| (genuine points), so a positive margin is a genuine
    violation. Labels are sign(f(x_i)), flipped where ``flip``; nets with mean squared error ≥ 1 are
    outside the hypothesis.
    """
    dom = domain_of(case)
    net = net_of(case)
    X, Xd = _value_points(case)
    fd = K.evaluate(net, Xd)
    y = np.where(fd >= 0, 1.0, -1.0) * np.where(case["flip"], -1.0, 1.0)
    if not np.mean((fd - y) ** 2) < 1.0:
        raise NotApplicable("the net does not fit the labels below the noise floor")
    L = K.lipschitz(net, dom)
    if not exact:
        top = float(np.max(np.abs(K.evaluate(net, np.vstack([X, Xd])))))
        return (top - (2 + constant * float(L.upper))) / (1 + top)
    with mpmath.workdps(K.MP_DPS):
        ex = net_of(case, exact=True)
        Le = K.lipschitz(ex, dom)
        W, b, a, v, c = (K.to_mp(z) for z in ex)
        f = lambda z: sum(ak * max(sum(wi * zi for wi, zi in zip(wk, z, strict=True)) + bk, 0)  # noqa: E731
                          for wk, bk, ak in zip(W, b, a, strict=True)) + sum(
            vi * zi for vi, zi in zip(v, z, strict=True)) + c
        pts = np.vstack([X, Xd])
        best = np.argsort(-np.abs(K.evaluate(net, pts)))[:8]  # any genuine point gives a lower bound
        top = max(abs(f([mpmath.mpf(float(q)) for q in pts[i]])) for i in best)
        return float((top - (2 + constant * Le.mp())) / (1 + top))


def value_property(name: str, d: int, *, sphere: bool, constant: float = 4.0, budget: int = 80) -> Property:
    return Property(name=name, strategy=value_cases(d, sphere),
                    screen=lambda c: value_margin(c, exact=False, constant=constant) - 1e-9,
                    confirm=lambda c: value_margin(c, exact=True, constant=constant), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)
