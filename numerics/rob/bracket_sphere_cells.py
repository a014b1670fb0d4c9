r"""Points and bounds for the sphere's cells that float rounding makes at the scale of 1e-17, in exact rationals and
arb arithmetic (2⁻²⁵⁶): exact points of S near a high-precision target (:func:`sphere_point`), the needle's band on S
(:func:`sphere_needle_points`, searched along its circle to the corner where τ is largest), the micro-cells around a
point of S that several hyperplanes were meant to pass through (:func:`sphere_zoom_points`), and caps at the sphere's
edge (:func:`cap_bound`, a proved bound of τ on the cap; :func:`cap_rim_points`, points near its rim). Points are
only proposed: the caller checks each exactly (:meth:`BracketNet.exact` and the pattern). The emptiness certificates
and the ball's constructions are in :mod:`numerics.rob.bracket_needle`.
"""
from __future__ import annotations

import math

import numpy as np
from flint import arb, ctx, fmpq, fmpq_mat

from numerics.fallbacks import reach
from numerics.rob.bracket_ia import arb_mid_fmpq, fmpq_float, pow2_q, to_fmpq
from numerics.rob.bracket_needle import cap_rows, needle_socps

__all__ = ["sphere_point", "sphere_needle_points", "sphere_zoom_points", "cap_bound", "cap_rim_points", "arc_best"]

PREC = 256            # bits of the arb arithmetic that places points on the sphere


def sphere_point(xs) -> list:
    """An exact rational point of the unit sphere within ~2⁻²⁴⁰ of xs/‖xs‖ (xs: arbs or rationals, not 0): the
    inverse stereographic image, from the pole N = −sign(x_k)e_k (k = argmax |x_k|), of the rounded projection y.
    Far below a float's resolution, so that a band of S ~1e-17 wide (the sphere's needle) can be hit exactly."""
    reach("rob.bracket/sphere_point_exact")
    old = ctx.prec
    ctx.prec = PREC
    try:
        X = [a if isinstance(a, arb) else arb(a) for a in xs]
        nrm = sum((a * a for a in X), arb(0)).sqrt()
        X = [a / nrm for a in X]
        k = max(range(len(X)), key=lambda i: abs(float(X[i].mid())))
        sgn = -1 if float(X[k].mid()) > 0 else 1
        den = 1 - sgn * X[k]
        yq = [arb_mid_fmpq(X[i] / den) if i != k else fmpq(0) for i in range(len(X))]
    finally:
        ctx.prec = old
    s2 = sum((t * t for t in yq), fmpq(0))
    xq = [2 * t / (s2 + 1) for t in yq]
    xq[k] = (s2 - 1) * sgn / (s2 + 1)
    return xq


def _needle_on_sphere(net, i, lam, Dq, cq, sp, sq, z):
    """The exact point of S on the parallel circle W_i·x + b_i = u*, u* half way across the needle at the float
    point z (which must open it: s_q(D·z + c) > 0, decided exactly), in the direction of z within the plane; or None."""
    d = net.d
    zq = [to_fmpq(t) for t in z]
    ev = sum((Dq[col] * zq[col] for col in range(d)), fmpq(0)) + cq
    if not (ev > 0 if sq > 0 else ev < 0):
        return None
    lam_abs = lam if lam > 0 else -lam
    ustar = ev / (2 * lam_abs) * int(sp * sq)
    Wi = [net.Wq[i, col] for col in range(d)]
    n2 = sum((t * t for t in Wi), fmpq(0))
    cen = [(ustar - net.bq[i]) / n2 * t for t in Wi]     # centre of the circle W_i·x + b_i = u* on S
    rho2 = 1 - sum((t * t for t in cen), fmpq(0))
    if not rho2 > 0:
        return None
    zi = sum((Wi[col] * zq[col] for col in range(d)), fmpq(0))
    ev_dir = [zq[col] - zi / n2 * Wi[col] for col in range(d)]   # z's direction in the plane, exactly ⊥ W_i
    old = ctx.prec
    ctx.prec = PREC
    try:
        en = sum((arb(t) * arb(t) for t in ev_dir), arb(0)).sqrt()
        if not en > 0:
            return None
        rho = arb(rho2).sqrt()
        target = [arb(cen[col]) + rho * arb(ev_dir[col]) / en for col in range(d)]
    finally:
        ctx.prec = old
    return sphere_point(target)


def _circle_points(c0, rho, wi, e, g):
    """Float points of the circle c0 + ρ·(unit vectors ⊥ wi): in the direction e, and where g·x is 0 (or least)."""
    def unit(v):
        v = v - (v @ wi) * wi
        n = np.linalg.norm(v)
        return v / n if n > 1e-300 else None
    eh = unit(e)
    pts = [c0 + rho * eh] if eh is not None else []
    if g is None:
        return pts
    gp = unit(np.asarray(g, float))
    if gp is None or eh is None:
        return pts
    k0 = -float(g @ c0) / (rho * float(np.linalg.norm(g - (g @ wi) * wi)))
    w = unit(eh - (eh @ gp) * gp)
    if abs(k0) <= 1 and w is not None:
        for sgn in (1.0, -1.0):
            pts.append(c0 + rho * (k0 * gp + sgn * math.sqrt(1 - k0 * k0) * w))
    else:
        pts.append(c0 + rho * math.copysign(1.0, k0) * gp)
    return pts


def arc_best(W, b, sg, c0, rho, wi, z, g, rounds: int = 3, grid: int = 721):
    """Float points of the circle c0 + ρ·(unit ⊥ wi) where the rows s_r(W_r·x + b_r) > 0 hold and |g·x| is least (τ
    greatest): from z, along the great circle of the circle's plane towards the in-plane direction that lowers |g·x|,
    the feasible arc through z found on a grid and its ends by bisection, then its best point (an end of the arc is
    stepped ~1e-13 inside; the sup of τ on a cell is often at its boundary). A heuristic: the caller checks exactly."""
    def unit(v, scale=1.0):
        v = v - (v @ wi) * wi
        n = np.linalg.norm(v)
        return v / n if n > 1e-9 * scale else None

    e1 = unit(z - c0, np.linalg.norm(z - c0))
    out = []
    for _ in range(rounds):
        if e1 is None:
            break
        x0 = c0 + rho * e1
        gp = unit(-np.sign(g @ x0) * g, np.linalg.norm(g))
        e2 = unit(gp - (gp @ e1) * e1) if gp is not None else None
        if e2 is None:             # g gives no direction in the plane beside e1: any unit vector ⊥ wi, e1
            basis = np.linalg.svd(np.vstack([wi, e1]))[2][2:]
            if not len(basis):
                break
            e2 = basis[0]
        th = np.linspace(-np.pi, np.pi, grid)

        def ok(t, e1=e1, e2=e2):
            x = c0 + rho * (np.cos(t)[:, None] * e1 + np.sin(t)[:, None] * e2)
            return np.all(sg * (x @ W.T + b) > 0, axis=1), x

        good, X = ok(th)
        k0 = grid // 2                                   # θ = 0 (the point z)
        if not good[k0]:                                 # z misses the cell: the circle's best feasible grid point
            if not good.any():
                break
            k0 = int(np.flatnonzero(good)[np.argmin(np.abs(X[good] @ g))])
        lo_k, hi_k = k0, k0
        while lo_k > 0 and good[lo_k - 1]:
            lo_k -= 1
        while hi_k < grid - 1 and good[hi_k + 1]:
            hi_k += 1
        ends = []
        for k_in, k_out in ((lo_k, lo_k - 1), (hi_k, hi_k + 1)):
            if not 0 <= k_out < grid:
                continue
            a, c = th[k_in], th[k_out]                   # a feasible, c not: bisect to the boundary
            for _ in range(60):
                mid = 0.5 * (a + c)
                if ok(np.array([mid]))[0][0]:
                    a = mid
                else:
                    c = mid
            ends.append(a - 1e-13 * np.sign(a - th[k0]) if a != th[k0] else a)
        cand = np.r_[th[lo_k:hi_k + 1], ends]
        g_ok, Xc = ok(cand)
        if not g_ok.any():
            break
        Xc = Xc[g_ok]
        best = Xc[int(np.argmin(np.abs(Xc @ g)))]
        out.append(best)
        e1 = unit(best - c0)
    return out


def sphere_needle_points(net, idx, sg, g=None):
    """Exact rational points of the unit sphere proposed for the cell (signs sg on idx) when it is the needle of a pair
    of nearly coincident rows facing each other (a band of S ~1e-17 wide that no float point lies in): for each such
    pair, a float point z of the other rows on the small circle {W_i·x + b_i = 0} ∩ S where the needle opens (an SOCP
    scaled by the exact difference row, pushed out along the plane) and, with the cell's gradient ``g``, the points of
    that circle where g·x = 0 (τ = ‖g‖ there) or is least; then for each, the point of S on the parallel circle
    W_i·x + b_i = u*, u* half way across the needle there, in the same direction (arb, 2⁻²⁵⁶), made an exact point of
    S by :func:`sphere_point`. Only candidates: the caller checks each exactly, with its pattern."""
    if not (net.sphere and net.hyper_exact):
        return []
    idx = np.asarray(idx, int)
    W, b = net.W[idx], net.b[idx]
    out = []
    for p, q, i, lam, Dq, cq, _, others, kw in needle_socps(net, idx, sg):
        res = net.socp(idx[others], sg[others], **kw)
        if res is None or not res[0] > 0:
            continue
        wi = net.W[i] / net.nW[i]
        off = -float(net.b[i]) / float(net.nW[i])
        c0 = off * wi                                    # the small circle's centre
        rho = math.sqrt(max(1.0 - off * off, 0.0))
        e = res[1] - c0
        e -= (e @ wi) * wi
        if not (np.linalg.norm(e) > 1e-12 and rho > 0):
            continue
        r2 = net.socp(idx[others], sg[others], obj=e / np.linalg.norm(e), tfix=0.5 * float(res[0]), **kw)
        z = r2[1] if r2 is not None else res[1]
        zs = [z] + _circle_points(c0, rho, wi, z - c0, g)
        if g is not None and len(others):
            zs += arc_best(W[others], b[others], sg[others], c0, rho, wi, c0 + rho * (z - c0) / max(
                np.linalg.norm(z - c0), 1e-300), np.asarray(g, float))
        for zc in zs:
            xq = _needle_on_sphere(net, i, lam, Dq, cq, sg[p], sg[q], zc)
            if xq is not None:
                out.append(xq)
    return out


def sphere_zoom_points(net, idx, sg, x, rounds: int = 4):
    """Exact rational points of the unit sphere proposed for a cell (signs sg on idx) too small for floats near the
    solver's point x: the micro-cells that float rounding leaves around a point of S that several hyperplanes were
    meant to pass through (~1e-17 across). The sphere's zoom: p̃ an exact point of S at the rows' least-squares point
    (:func:`sphere_point`), r_j = W_j·p̃ + b_j exactly, κ a power of two ≥ max |r_j| over the rows through p̃, T a basis
    of p̃'s tangent plane (binary rationals), and the LP max t s.t. s_j(r_j/κ + W_jT·ζ) ≥ t‖W_j‖, ‖ζ‖∞ ≤ β: at scale
    κ the sphere is its tangent plane (x₀ = p̃ + κTζ is ~κ² off S, far below the cell's size κt), and x₀ pushed onto S
    by :func:`sphere_point` is the candidate. A cell far smaller than κ (0 < t ≤ 1e-7) is zoomed again at its point.
    Only candidates: the caller checks each exactly, with its pattern."""
    from scipy.optimize import linprog

    from numerics.rob.bracket_net import WIDER_BOXES

    if not (net.sphere and net.hyper_exact) or x is None or not np.all(np.isfinite(x)):
        return []
    idx = np.asarray(idx, int)
    d = net.d
    W, b, nw = net.W[idx], net.b[idx], net.nW[idx]
    near = np.abs(W @ x + b) <= 1e-6 * (nw + np.abs(b))
    if not near.any():
        return []
    p = x - np.linalg.lstsq(W[near], W[near] @ x + b[near], rcond=None)[0]
    if not (np.all(np.isfinite(p)) and np.linalg.norm(p) > 0.5):
        return []
    pq = sphere_point([to_fmpq(t) for t in p])
    thr = 1e-12 * (nw + np.abs(b))
    out = []
    for _ in range(rounds):
        pf = np.array([fmpq_float(t) for t in pq])
        T = np.linalg.qr(np.column_stack([pf, np.eye(d)]))[0][:, 1:d]     # p̃'s tangent plane (floats: a heuristic)
        Tq = [[to_fmpq(T[r, c]) for c in range(d - 1)] for r in range(d)]
        Z = net.Wq * fmpq_mat(d, 1, pq)
        r = [Z[int(j), 0] + net.bq[int(j)] for j in idx]
        rf = np.array([fmpq_float(t) for t in r])
        near = np.abs(rf) <= thr
        if not near.any():
            return out
        kap_e = math.frexp(float(np.max(np.abs(rf[near]))))[1] if np.any(rf[near]) else -60
        kappa = math.ldexp(1.0, kap_e)
        far = ~near
        if np.any(sg[far] * rf[far] <= 1e3 * math.sqrt(d) * kappa * nw[far]):
            return out                                 # far rows not clearly on their side at p̃: not a tiny cell
        A = np.hstack([-sg[near][:, None] * (W[near] @ T), nw[near][:, None]])
        kq = pow2_q(kap_e)
        t, zeta = -math.inf, None
        for beta in (1.0,) + tuple(WIDER_BOXES):
            res = linprog(np.r_[np.zeros(d - 1), -1.0], A_ub=A, b_ub=sg[near] * rf[near] / kappa,
                          bounds=[(-beta, beta)] * (d - 1) + [(None, 1.0)], method="highs")
            if res.status == 0 and -res.fun > 0:
                t, zeta = -res.fun, res.x[:d - 1]
                break
        if zeta is None:
            return out
        zq = [to_fmpq(z) for z in zeta]
        x0 = [pq[r_] + kq * sum((Tq[r_][c] * zq[c] for c in range(d - 1)), fmpq(0)) for r_ in range(d)]
        pq = sphere_point(x0)
        out.append(pq)
        if t > 1e-7:
            return out
        thr = 1e-4 * kappa * nw                         # a cell far smaller than κ: zoom again at its point
    return out


def _arb_up(a) -> float:
    """A float ≥ every point of the arb ``a`` (its exact upper end, rounded up)."""
    u = arb_mid_fmpq(a.upper())
    f = fmpq_float(u)
    while to_fmpq(f) < u:
        f = float(np.nextafter(f, np.inf))
    return f


def _sqrt_of_up(a):
    """√ of the upper end of the arb ``a`` (0 when it is ≤ 0), an arb: an upper bound of √a where a ≥ 0."""
    u = a.upper()
    return u.sqrt() if u > 0 else arb(0)


def cap_bound(net, idx, sg, gq=None) -> float:
    """A proved upper bound of τ over the cell ∩ S when one of its rows cuts a cap at the sphere's edge (+inf when none
    does): on the cap {x ∈ S: ŵ·x ≥ c}, ŵ = s_jW_j/‖W_j‖, c = −s_jb_j/‖W_j‖ > 0, every x is cos θ ŵ + sin θ e with
    cos θ ≥ c and e ⊥ ŵ a unit vector, so |g·x| ≥ |g·ŵ|c − ‖g − (g·ŵ)ŵ‖(1 − c²)^½ and
    τ² ≤ ‖g‖² − (|g·ŵ|c − ‖g_⊥‖(1 − c²)^½)₊² (arb, from the exact g and rows). Caps ~1e-17 deep hold constants of
    ~1e-8 that the Shor + RLT relaxation cannot resolve (it stops at ~1e-5)."""
    best = math.inf
    caps = cap_rows(net, idx, sg) if net.sphere else []
    if not caps:
        return best
    gq = net.exact_gradient(idx, sg) if gq is None else gq     # (exact g only when a cap is there)
    reach("rob.bracket/cap_bound_arb")
    old = ctx.prec
    ctx.prec = PREC
    try:
        G = [arb(t) for t in gq]
        g2 = sum((t * t for t in G), arb(0))
        for r, s in caps:
            j = int(np.asarray(idx, int)[r])
            Wj = [arb(s * net.Wq[j, c]) for c in range(net.d)]
            nw = sum((t * t for t in Wj), arb(0)).sqrt()
            c = arb(-s * net.bq[j]) / nw
            if not c > 0:
                continue
            gw = sum((G[k] * Wj[k] for k in range(net.d)), arb(0)) / nw
            # one-sided throughout: upper ends of ‖g_⊥‖ and (1 − c²)^½ (they are subtracted), the lower end of |g·ŵ|c
            gperp = _sqrt_of_up(g2 - gw * gw)
            st = _sqrt_of_up(1 - c * c)
            low = (abs(gw) * c - gperp * st).lower()
            low = low if low > 0 else arb(0)
            best = min(best, _arb_up(_sqrt_of_up(g2 - low * low)))
    except (ValueError, ArithmeticError):
        return math.inf
    finally:
        ctx.prec = old
    return best


def cap_rim_points(net, idx, sg, g):
    """Exact points of S proposed for a cell with a cap row at the sphere's edge, near the cap's rim where τ is
    largest: x = cos θ ŵ + sin θ e, cos θ = c + (1 − c)·f for f ∈ {2⁻³⁰, 2⁻¹⁰, ½} (inside the cap), e ⊥ ŵ the
    direction that lowers |g·x| (arb, then :func:`sphere_point`). Only candidates: the caller checks them exactly."""
    if not net.sphere:
        return []
    out = []
    g = np.asarray(g, float)
    for r, s in cap_rows(net, idx, sg):
        j = int(np.asarray(idx, int)[r])
        wh = s * net.W[j] / net.nW[j]
        e = -np.sign(g @ wh) * (g - (g @ wh) * wh)
        e = e - (e @ wh) * wh
        if not np.linalg.norm(e) > 1e-12 * (np.linalg.norm(g) + 1e-300):
            e = np.linalg.svd(wh[None])[2][-1]         # g along the axis (or 0): any direction ⊥ ŵ
            e = e - (e @ wh) * wh
        e /= np.linalg.norm(e)
        eq = [to_fmpq(t) for t in e]
        old = ctx.prec
        ctx.prec = PREC
        try:
            Wj = [arb(s * net.Wq[j, c]) for c in range(net.d)]
            nw = sum((t * t for t in Wj), arb(0)).sqrt()
            c = arb(-s * net.bq[j]) / nw
            wq = [t / nw for t in Wj]
            eh = [arb(t) for t in eq]
            ew = sum((eh[k] * wq[k] for k in range(net.d)), arb(0))
            eh = [eh[k] - ew * wq[k] for k in range(net.d)]           # exactly-enough ⊥ ŵ, then normalised
            en = sum((t * t for t in eh), arb(0)).sqrt()
            for f in (fmpq(1, 2 ** 30), fmpq(1, 2 ** 10), fmpq(1, 2)):
                ct = c + (1 - c) * arb(f)
                if not (ct < 1):
                    continue
                stt = (1 - ct * ct).sqrt()
                out.append(sphere_point([ct * wq[k] + stt * eh[k] / en for k in range(net.d)]))
        except (ValueError, ArithmeticError, ZeroDivisionError):
            pass
        finally:
            ctx.prec = old
    return out
