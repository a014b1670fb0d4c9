r"""Certified sphere Lipschitz constants of low-width nets with any Lipschitz activation (SPEC §3, rob.low_width).

f(x) = Σ_{k≤m} a_k ψ(w_k·x + b_k) + v·x + c on S^{d−1}, ψ ∈ {tanh, sigmoid, GELU, softplus} (ReLU goes to the exact
arrangement routine :func:`numerics.rob.lipschitz`). The geodesic constant is sup_x ‖(I − xxᵀ)∇f(x)‖.

**The reduction.** ∇f(x) = v + Σ_k a_k ψ′(w_k·x + b_k) w_k lies in S = span(w_1..w_m, v), of dimension r ≤ m + 1.
With Q an orthonormal basis of S (d × r) and z = Qᵀx, f depends on x only through z, and
‖(I − xxᵀ)∇f‖² = φ(z) = ‖h(z)‖² − (z·h(z))², h(z) = Qᵀv + Σ_k a_k ψ′(w̃_k·z + b_k) w̃_k, w̃_k = Qᵀw_k.
When d > r every z of the closed unit ball of R^r is Qᵀx for some x on the sphere (add a unit vector ⟂ S times
√(1 − ‖z‖²)); when d = r the domain is the unit sphere of R^r itself (then Q = I exactly). So Lip² = max φ over a
ball (or sphere) of dimension r ≤ 4.

**What is certified.** The rank r is decided in exact rational arithmetic (every float64 is an exact binary
rational). Q is Gram–Schmidt on an exactly independent subset, computed in arb: every coordinate is a ball that
contains the exact Gram–Schmidt coordinate, raising the precision until no norm ball contains 0. The maximum of φ
is bracketed by interval branch and bound over boxes of [−1, 1]^r: a box's upper bound is the smaller of φ's
natural interval extension and its mean-value form φ(c) + ∇φ(box)·(box − c), with ψ′, ψ″ evaluated on arb balls
(arb encloses a function's range over a ball); a box is dropped when its nearest point is outside the unit ball
(and, for d = r, its farthest point inside it) — decided in arb. The lower end is φ's arb lower end at a genuine
point: a float z checked in arb to lie in the ball, or (d = r) the exact normalisation z/‖z‖, enclosed in arb.
The bracket [√lower, √upper] is rounded outward.

∇φ = 2Jh − 2(z·h)(h + Jz), J = ∂h/∂z = Σ_k a_k ψ″(s_k) w̃_k w̃_kᵀ (symmetric).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import arb, ctx

__all__ = ["SMOOTH", "ACTIVATIONS", "LowWidthLipschitz", "low_width_lipschitz", "reduce", "phi_float",
           "derivatives_float"]

SMOOTH = ("tanh", "sigmoid", "gelu", "softplus")
ACTIVATIONS = ("relu",) + SMOOTH
MAX_RANK = 4


# ------------------------------------------------------------------------------------------ the activations
def _sig(t):
    return 1 / (1 + (-t).exp())


def _point_dpsi(act: str, s):
    """(ψ′(s), ψ″(s)) at an arb ball s of small radius (arb encloses the range over the ball)."""
    if act == "tanh":
        th = s.tanh()
        p = 1 - th * th
        return p, -2 * th * p
    if act == "sigmoid":
        g = _sig(s)
        p = g * (1 - g)
        return p, p * (1 - 2 * g)
    if act == "softplus":
        g = _sig(s)
        return g, g * (1 - g)
    if act == "gelu":
        dens = (-(s * s) / 2).exp() / (2 * arb.pi()).sqrt()
        cdf = (1 + (s / arb(2).sqrt()).erf()) / 2
        return cdf + s * dens, dens * (2 - s * s)
    raise ValueError(f"activation {act!r} is not one of {SMOOTH}")


def _critical_points():
    """The critical points of ψ′ and of ψ″ (where ψ″ = 0, resp. ψ‴ = 0), as arb balls around the exact ones:
    tanh: ψ″ = −2 tanh·sech² → ψ′ at 0; ψ‴ = −2 sech²(sech² − 2 tanh²) → ±atanh(1/√3).
    sigmoid: ψ′ = σ(1−σ) at 0; ψ‴ = σ(1−σ)(1 − 6σ + 6σ²) → σ = (3 ± √3)/6, t = ±log(2 + √3).
    softplus: ψ′ = σ is monotone; ψ″ = σ(1−σ) at 0.
    GELU: ψ″ = φ(t)(2 − t²) → ψ′ at ±√2; ψ‴ = φ(t)·t(t² − 4) → 0, ±2."""
    r3 = arb(3).sqrt()
    a_t = (1 / r3).atanh()
    a_s = (2 + r3).log()
    r2 = arb(2).sqrt()
    return {"tanh": ([arb(0)], [-a_t, a_t]), "sigmoid": ([arb(0)], [-a_s, a_s]),
            "softplus": ([], [arb(0)]), "gelu": ([-r2, r2], [arb(-2), arb(0), arb(2)])}


_CRIT = None
_SMALL = 2.0 ** -20


def _dpsi_arb(act: str, s):
    """(ψ′, ψ″) enclosing their ranges over the ball s. Small balls: arb directly. Wide balls: each function's
    values at the two (exact) ends and at its critical points inside, joined — the range of a C¹ function on an
    interval is spanned by those (arb's own functions may return NaN on wide balls)."""
    global _CRIT
    if not s.is_finite():
        return arb(0, math.inf), arb(0, math.inf)
    if float(s.rad()) <= _SMALL:
        return _point_dpsi(act, s)
    if _CRIT is None:
        _CRIT = _critical_points()
    lo, hi = s.lower(), s.upper()
    ends = [_point_dpsi(act, lo), _point_dpsi(act, hi)]
    out = []
    for k in (0, 1):
        val = ends[0][k].union(ends[1][k])
        for c in _CRIT[act][k]:
            if not (c < lo or c > hi):
                val = val.union(_point_dpsi(act, c)[k])
        out.append(val)
    return out[0], out[1]


def derivatives_float(act: str, s):
    """(ψ′, ψ″) in float64 (numpy arrays), for the search only."""
    s = np.asarray(s, float)
    if act == "tanh":
        p = 1 / np.cosh(np.clip(s, -350, 350)) ** 2
        return p, -2 * np.tanh(s) * p
    if act in ("sigmoid", "softplus"):
        g = 0.5 * (1 + np.tanh(s / 2))
        return (g * (1 - g), g * (1 - g) * (1 - 2 * g)) if act == "sigmoid" else (g, g * (1 - g))
    if act == "gelu":
        from scipy.special import ndtr
        dens = np.exp(-s * s / 2) / math.sqrt(2 * math.pi)
        return ndtr(s) + s * dens, dens * (2 - s * s)
    raise ValueError(f"activation {act!r} is not one of {SMOOTH}")


# ------------------------------------------------------------------------------------------ the reduction
@dataclass
class Reduced:
    """The net in the coordinates z = Qᵀx: arb coordinates (balls around the exact ones) and float copies."""

    r: int
    sphere_only: bool          # d = r: z on the unit sphere of R^r; else the closed unit ball
    Wt: list                   # m × r arb
    vt: list                   # r arb
    a: list                    # m arb (exact)
    b: list                    # m arb (exact)
    Wf: np.ndarray = field(repr=False)
    vf: np.ndarray = field(repr=False)
    af: np.ndarray = field(repr=False)
    bf: np.ndarray = field(repr=False)
    Qf: np.ndarray = field(repr=False)   # d × r float approximation of Q (witness lifting only)


def _exact_independent(vectors: list[np.ndarray]) -> list[int]:
    """Indices of an exactly independent subset spanning the same space (Gaussian elimination over Fraction)."""
    rows, keep = [], []
    for idx, v in enumerate(vectors):
        u = [Fraction(float(t)) for t in v]
        for piv, row in rows:
            if u[piv] != 0:
                f = u[piv] / row[piv]
                u = [x - f * y for x, y in zip(u, row, strict=True)]
        nz = next((i for i, x in enumerate(u) if x != 0), None)
        if nz is not None:
            rows.append((nz, u))
            keep.append(idx)
    return keep


def reduce(W, b, a, v, *, max_rank: int = MAX_RANK) -> Reduced:
    """The reduction of the module docstring: exact rank, arb Gram–Schmidt, coordinates of every w_k and v."""
    W = np.atleast_2d(np.asarray(W, float))
    m, d = W.shape
    vecs = [W[k] for k in range(m)] + [np.asarray(v, float)]
    keep = _exact_independent(vecs)
    r = len(keep)
    if r > max_rank:
        raise ValueError(f"span(w_1..w_m, v) has rank {r} > {max_rank}: the branch and bound works in dimension "
                         f"≤ {max_rank} (m ≤ 3 with a skip term)")
    if r == 0:
        r = 1  # f is constant: one dummy coordinate, φ ≡ 0
        keep = []
    if r >= d:  # the whole space: Q = I exactly
        Q = [[arb(int(i == j)) for i in range(d)] for j in range(d)]
        r = d
        Qf = np.eye(d)
    else:
        prec0 = ctx.prec
        try:
            Q = None
            for prec in (64, 128, 256, 512, 1024):
                ctx.prec = prec
                Q = []
                ok = True
                for idx in keep:
                    u = [arb(float(t)) for t in vecs[idx]]
                    for q in Q:
                        c = sum((qi * ui for qi, ui in zip(q, u, strict=True)), arb(0))
                        u = [ui - c * qi for ui, qi in zip(u, q, strict=True)]
                    n2 = sum((ui * ui for ui in u), arb(0))
                    if not n2 > 0:
                        ok = False
                        break
                    nrm = n2.sqrt()
                    Q.append([ui / nrm for ui in u])
                if ok:
                    break
            else:
                raise ArithmeticError("Gram–Schmidt: a norm ball still contains 0 at 1024 bits")
        finally:
            ctx.prec = prec0
        if not keep:
            Q = [[arb(1)] + [arb(0)] * (d - 1)]
        Qf = np.array([[float(t.mid()) for t in q] for q in Q]).T
    coords = [[sum((qi * arb(float(t)) for qi, t in zip(q, vec, strict=True)), arb(0)) for q in Q] for vec in vecs]
    Wt, vt = coords[:m], coords[m]
    return Reduced(r=r, sphere_only=(r == d), Wt=Wt, vt=vt, a=[arb(float(t)) for t in np.ravel(a)],
                   b=[arb(float(t)) for t in np.ravel(b)],
                   Wf=np.array([[float(t.mid()) for t in row] for row in Wt]).reshape(m, r),
                   vf=np.array([float(t.mid()) for t in vt]), af=np.asarray(a, float).ravel(),
                   bf=np.asarray(b, float).ravel(), Qf=Qf)


# ------------------------------------------------------------------------------------------ φ and its bounds
def phi_float(R: Reduced, act: str, Z: np.ndarray) -> np.ndarray:
    """φ(z) = ‖h‖² − (z·h)² at the rows of Z, float64 (the search only)."""
    Z = np.atleast_2d(Z)
    p, _ = derivatives_float(act, Z @ R.Wf.T + R.bf)
    H = R.vf + (p * R.af) @ R.Wf
    return (H * H).sum(1) - (Z * H).sum(1) ** 2


def _phi_grad_float(R: Reduced, act: str, z: np.ndarray):
    p, q = derivatives_float(act, R.Wf @ z + R.bf)
    h = R.vf + (p * R.af) @ R.Wf
    J = (R.Wf.T * (q * R.af)) @ R.Wf
    zh = z @ h
    return h @ h - zh * zh, 2 * J @ h - 2 * zh * (h + J @ z)


def _eval_arb(R: Reduced, act: str, Z: list, with_grad: bool):
    """φ (and ∇φ) enclosed over the arb box Z (a point when the radii are 0)."""
    r = R.r
    h = list(R.vt)
    J = [[arb(0)] * r for _ in range(r)] if with_grad else None
    for wk, ak, bk in zip(R.Wt, R.a, R.b, strict=True):
        s = sum((wi * zi for wi, zi in zip(wk, Z, strict=True)), bk)
        p, q = _dpsi_arb(act, s)
        ap = ak * p
        h = [hi + ap * wi for hi, wi in zip(h, wk, strict=True)]
        if with_grad:
            aq = ak * q
            J = [[J[i][j] + aq * wk[i] * wk[j] for j in range(r)] for i in range(r)]
    hh = sum((hi * hi for hi in h), arb(0))
    zh = sum((zi * hi for zi, hi in zip(Z, h, strict=True)), arb(0))
    phi = hh - zh * zh
    if not with_grad:
        return phi, hh, None
    Jh = [sum((J[i][j] * h[j] for j in range(r)), arb(0)) for i in range(r)]
    Jz = [sum((J[i][j] * Z[j] for j in range(r)), arb(0)) for i in range(r)]
    grad = [2 * Jh[i] - 2 * zh * (h[i] + Jz[i]) for i in range(r)]
    return phi, hh, grad


def _box_upper(R: Reduced, act: str, c: np.ndarray, rad: np.ndarray) -> float:
    """An upper bound of φ over the box ∩ the domain: the least of the natural extension, ‖h‖² (over the box) and
    the mean-value form φ(c) + G·(z − c), G ∈ ∇φ(box). In the last, G = ĝ + (G − ĝ) with ĝ the midpoints:
    ĝ·(z − c) ≤ min(Σ|ĝ_i| rad_i, ‖ĝ‖ − ĝ·c) (the box, resp. the unit ball, which contains the domain), and
    (G − ĝ)·(z − c) ≤ Σ |G_i − ĝ_i|·rad_i. The ball term keeps the bound second-order where the maximum sits on
    the boundary ‖z‖ = 1 with a nonzero gradient."""
    Z = [arb(float(ci), float(ri)) for ci, ri in zip(c, rad, strict=True)]
    phi_nat, hh, grad = _eval_arb(R, act, Z, True)
    phi_c, _, _ = _eval_arb(R, act, [arb(float(ci)) for ci in c], False)
    best = min(_up(phi_nat), _up(hh))
    if not all(g.is_finite() for g in grad) or not phi_c.is_finite():
        return best
    gm = [arb(float(g.mid())) for g in grad]
    spread = sum(((g - m).abs_upper() * arb(float(ri)) for g, m, ri in zip(grad, gm, rad, strict=True)), arb(0))
    in_box = sum((m.abs_upper() * arb(float(ri)) for m, ri in zip(gm, rad, strict=True)), arb(0))
    in_ball = sum((m * m for m in gm), arb(0)).sqrt() - sum((m * arb(float(ci)) for m, ci in zip(gm, c, strict=True)),
                                                             arb(0))
    lin = _up(in_box) if not _up(in_ball) < _up(in_box) else _up(in_ball)
    mv = phi_c + arb(lin) + spread
    return min(best, _up(mv))


def _up(x) -> float:
    """A float ≥ every point of the arb ball x (float() rounds to nearest, so step one ulp up)."""
    u = float(x.upper())
    return math.inf if math.isnan(u) else math.nextafter(u, math.inf)


def _down(x) -> float:
    lo = float(x.lower())
    return -math.inf if math.isnan(lo) else math.nextafter(lo, -math.inf)


def _feasible(R: Reduced, c: np.ndarray, rad: np.ndarray) -> bool:
    """Does the box meet the domain (the closed unit ball; for d = r, the unit sphere)? Decided in arb."""
    lo, hi = c - rad, c + rad
    near = sum((arb(0) if a <= 0 <= b else min(arb(float(a)) ** 2, arb(float(b)) ** 2)
                for a, b in zip(lo, hi, strict=True)), arb(0))
    if near > 1:
        return False
    if R.sphere_only:
        far = sum((max(arb(float(a)) ** 2, arb(float(b)) ** 2) for a, b in zip(lo, hi, strict=True)), arb(0))
        if far < 1:
            return False
    return True


def _certified_value(R: Reduced, act: str, z: np.ndarray):
    """(arb lower end of φ at a genuine domain point near z, that point in float) or None."""
    z = np.asarray(z, float)
    nz = float(np.linalg.norm(z))
    if R.sphere_only:
        if nz == 0:
            return None
        Z = [arb(float(t)) for t in z]
        n = sum((t * t for t in Z), arb(0)).sqrt()
        Z = [t / n for t in Z]  # balls around the exact normalisation, a point of the sphere
        pt = z / nz
    else:
        if nz > 1:
            z = z / nz * (1 - 2.0 ** -40)
        Z = [arb(float(t)) for t in z]
        if not sum((t * t for t in Z), arb(0)) <= 1:
            return None
        pt = z
    phi, _, _ = _eval_arb(R, act, Z, False)
    return _down(phi), pt


# ------------------------------------------------------------------------------------------ the search
def _search_starts(R: Reduced, act: str, rng: np.random.Generator, k: int = 400) -> list[np.ndarray]:
    """Float candidates for the maximiser: random points of the domain, the best polished by projected ascent."""
    Z = rng.standard_normal((k, R.r))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    if not R.sphere_only:
        Z *= rng.random((k, 1)) ** (1 / R.r)
    vals = phi_float(R, act, Z)
    out = []
    for z in Z[np.argsort(vals)[::-1][:8]]:
        out.append(_ascend(R, act, z.copy()))
    return out


def _project(R: Reduced, z):
    n = np.linalg.norm(z)
    if R.sphere_only:
        return z / n if n > 0 else z
    return z / n if n > 1 else z


def _ascend(R: Reduced, act: str, z, steps: int = 200):
    f, g = _phi_grad_float(R, act, z)
    lr = 0.1 / (1 + np.linalg.norm(g))
    for _ in range(steps):
        zn = _project(R, z + lr * g)
        fn, gn = _phi_grad_float(R, act, zn)
        if fn >= f:
            z, f, g = zn, fn, gn
            lr *= 1.5
        else:
            lr *= 0.3
            if lr < 1e-16:
                break
    return z


@dataclass
class LowWidthLipschitz:
    """A certified bracket of the geodesic Lipschitz constant on S^{d−1}: lower ≤ Lip ≤ upper."""

    lower: float
    upper: float
    activation: str
    rank: int
    status: str                      # "converged" | "time limit" | "exact" (ReLU)
    boxes: int = 0
    seconds: float = 0.0
    witness: np.ndarray | None = None    # a point x ∈ S^{d−1} (float) near the certified lower end's point
    source: str = "interval branch and bound (arb), mean-value form"

    @property
    def rel_gap(self) -> float:
        return self.upper / self.lower - 1 if self.lower > 0 else math.inf


def _lift(R: Reduced, z: np.ndarray, d: int) -> np.ndarray:
    x = R.Qf @ z
    rest = 1 - float(z @ z)
    if rest > 0 and R.r < d:
        e = np.random.default_rng(0).standard_normal(d)
        e -= R.Qf @ (R.Qf.T @ e)
        e -= R.Qf @ (R.Qf.T @ e)
        x = x + math.sqrt(rest) * e / np.linalg.norm(e)
    return x


def low_width_lipschitz(net, d: int, activation: str = "tanh", *, rel_tol: float = 1e-4, time_limit: float = 30.0,
                        max_boxes: int = 200_000, seed: int = 0, max_rank: int = MAX_RANK) -> LowWidthLipschitz:
    """Certified bracket of the geodesic Lipschitz constant on S^{d−1} of f = Σ a_k ψ(w_k·x + b_k) + v·x + c.

    ``net = (W, b, a, v, c)``; ``rel_tol`` is the target relative width of the bracket on Lip (the search stops
    there, or at ``time_limit`` seconds, with the bracket it has). ReLU goes to :func:`numerics.rob.lipschitz`
    (exact on the arrangement)."""
    t0 = time.perf_counter()
    W, b, a, v, _c = net
    W = np.atleast_2d(np.asarray(W, float))
    if W.shape[1] != d or np.asarray(v, float).shape != (d,):
        raise ValueError(f"net shapes {W.shape} and v {np.asarray(v).shape} do not match d = {d}")
    for name, arr in (("W", W), ("b", b), ("a", a), ("v", v)):
        if not np.all(np.isfinite(np.asarray(arr, float))):
            raise ValueError(f"{name} has NaN or inf entries")
    if d < 2:
        raise ValueError("S^{d−1} needs d ≥ 2")
    if activation == "relu":
        from numerics.rob import Sphere, lipschitz
        L = lipschitz((W, np.ravel(b), np.ravel(a), np.asarray(v, float), 0.0), Sphere(d))
        return LowWidthLipschitz(float(L.lower), float(L.upper), "relu", W.shape[0], "exact" if L.exact else L.status,
                                 seconds=time.perf_counter() - t0, source="numerics.rob.lipschitz (arrangement)")
    if activation not in SMOOTH:
        raise ValueError(f"activation {activation!r}: supported are {ACTIVATIONS}")
    R = reduce(W, b, a, v, max_rank=max_rank)
    rng = np.random.default_rng(seed)
    best_lo, best_pt = 0.0, np.zeros(R.r)
    for z in _search_starts(R, act := activation, rng):
        got = _certified_value(R, act, z)
        if got is not None and got[0] > best_lo:
            best_lo, best_pt = got
    c0, r0 = np.zeros(R.r), np.ones(R.r)
    heap = [(-_box_upper(R, act, c0, r0), 0, c0, r0)]
    tick, boxes, status = 1, 1, "converged"
    dropped = 0.0  # the largest upper bound of a box dropped below the stopping threshold (it still counts)
    while heap:
        ub = -heap[0][0]
        if ub <= best_lo * (1 + rel_tol) ** 2 or ub <= 1e-300:
            break
        if time.perf_counter() - t0 > time_limit or boxes >= max_boxes:
            status = "time limit"
            break
        _, _, c, rad = heapq.heappop(heap)
        i = int(np.argmax(rad))
        for sgn in (-1.0, 1.0):
            cc, rr = c.copy(), rad.copy()
            rr[i] = rad[i] / 2
            cc[i] = c[i] + sgn * rr[i]
            if not _feasible(R, cc, rr):
                continue
            boxes += 1
            got = _certified_value(R, act, cc)
            if got is not None and got[0] > best_lo:
                best_lo, best_pt = got
                if boxes % 16 == 0:  # polish a new best point now and then
                    got2 = _certified_value(R, act, _ascend(R, act, best_pt.copy(), 50))
                    if got2 is not None and got2[0] > best_lo:
                        best_lo, best_pt = got2
            u = _box_upper(R, act, cc, rr)
            if u > best_lo * (1 + rel_tol) ** 2:
                heapq.heappush(heap, (-u, tick, cc, rr))
                tick += 1
            else:
                dropped = max(dropped, u)
    ub = max(-heap[0][0] if heap else 0.0, best_lo, dropped)
    lo = math.nextafter(math.sqrt(max(best_lo, 0.0)), -math.inf) if best_lo > 0 else 0.0
    hi = math.nextafter(math.sqrt(ub), math.inf)
    if best_lo > 0:
        lo = max(0.0, lo * (1 - 2.0 ** -50))
    hi = hi * (1 + 2.0 ** -50)
    return LowWidthLipschitz(lo, hi, act, R.r, status, boxes, time.perf_counter() - t0, _lift(R, best_pt, d))
