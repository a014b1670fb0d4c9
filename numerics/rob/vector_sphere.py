r"""Certified Lipschitz bracket of a vector-output ReLU net (rob.structured, SPEC §3) in the ℓ2 operator norm, on
S^{d−1} or B_R, by branching over output directions.

For f: R^d → R^K with Jacobian J on each cell, the sphere constant is sup_x ‖J(I − xxᵀ)‖₂ and, for any unit u,
‖J(I − xxᵀ)‖₂ = sup_u ‖(I − xxᵀ)Jᵀu‖. The two suprema commute, so

    Lip(f) = sup_{u ∈ S^{K−1}} Lip(u·f),

a supremum of *scalar* constants, each certified by :func:`numerics.rob.lipschitz` (exact on S² and on balls
the cost model allows, a proved bracket otherwise). The same identity holds on B_R without the projection.

Directions are the images p/‖p‖ of boxes on the faces p_i = +1 of the cube [−1, 1]^K (u and −u give the same
scalar constant, so these faces cover every direction). g(p) = sup_x ‖P_x J_xᵀ p‖ is a supremum of seminorms, hence
sublinear: for p = Σ_i λ_i p_i in the cone of a box's corners p_i (λ ≥ 0), g(p) ≤ Σ_i λ_i G_i with G_i ≥ g(p_i)
proved, so

    sup_{u in the box} Lip(u·f) = sup_λ g(Σλ_i p_i)/‖Σλ_i p_i‖ ≤ 1 / dist(0, conv{p_i/G_i}),

and for any vector n, dist(0, conv{q_i}) ≥ min_i n·q_i / ‖n‖ (a separating hyperplane; n is the float min-norm
point of the hull, from NNLS: any n is valid, a good one is tight). The bound is exact when g is linear on the box
and within O(h²) of the truth where g is a norm ‖M^{1/2}p‖ (the hull's chords against the unit ball's arc), so the
branch converges fast near the maximising direction. G_i = the proved upper end of Lip(p_i·f) for the exact
rational net p_i·f (:func:`numerics.rob.lipschitz`: exact on S² and on small balls, a certified bracket otherwise);
corners are shared between boxes and computed once. The lower end is max_i low(p_i·f)/‖p_i‖, attained at the
direction p_i/‖p_i‖. Boxes whose bound is ≤ (1 + rel_gap)·lower are closed; the others are split in two along their
longest side. The float arithmetic on both ends is rounded outwards (two ulps per operation).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.optimize import nnls

from numerics.rob.net import Ball, Sphere, check_domain, to_fraction
from numerics.rob.structured import VectorNet

__all__ = ["VectorBracket", "vector_lipschitz"]


def _up(x: float, k: int = 2) -> float:
    for _ in range(k):
        x = math.nextafter(x, math.inf)
    return x


def _down(x: float, k: int = 2) -> float:
    for _ in range(k):
        x = math.nextafter(x, -math.inf)
    return max(x, 0.0)


@dataclass(frozen=True)
class VectorBracket:
    """lower ≤ Lip(f) ≤ upper (ℓ2 operator norm, proved). ``direction``: the unit output direction u (floats) whose
    scalar u·f attains ``lower``; ``scalar_calls``: scalar constants computed; ``status``: "gap reached", "time
    limit" or "box limit"."""

    lower: float
    upper: float
    direction: tuple
    scalar_calls: int
    seconds: float
    status: str
    K: int

    @property
    def gap(self) -> float:
        return math.inf if self.lower <= 0 else self.upper / self.lower - 1.0


def _exact_rows(net: VectorNet):
    """(W, b, A, V, c) as lists of Fractions (:func:`numerics.rob.net.to_fraction`: the exact value of each entry)."""
    def rows(name, x):
        return [[to_fraction(t, name) for t in r] for r in np.atleast_2d(np.asarray(x, dtype=object)).tolist()]

    W, A, V = rows("W", net.W), rows("A", net.A), rows("V", net.V)
    return W, rows("b", net.b)[0], A, V, rows("c", net.c)[0]


def vector_lipschitz(net: VectorNet, domain, *, rel_gap: float = 1e-3, time_limit: float = 60.0,
                     scalar_time_limit: float = 10.0, max_boxes: int = 100000) -> VectorBracket:
    """Certified [lower, upper] of the ℓ2-operator Lipschitz constant of ``net`` on ``domain`` (Sphere or Ball),
    to ``rel_gap`` within ``time_limit`` seconds (module docstring)."""
    from numerics.rob.lipschitz import lipschitz

    if not isinstance(net, VectorNet):
        raise TypeError(f"vector_lipschitz takes a VectorNet, not {type(net).__name__}")
    check_domain(domain)
    if not isinstance(domain, (Sphere, Ball)):
        raise ValueError(f"vector_lipschitz needs a Sphere or a Ball, not {domain!r}")
    if isinstance(domain, Sphere) and domain.d < 3:
        raise ValueError("vector_lipschitz on S^{d−1} needs d ≥ 3 (the scalar routine's sphere canonical forms)")
    if net.W.shape[1] != domain.d:
        raise ValueError(f"the net takes d = {net.W.shape[1]} inputs, the domain is in R^{domain.d}")
    if not (rel_gap > 0 and math.isfinite(rel_gap)):
        raise ValueError(f"rel_gap must be a positive number, got {rel_gap}")
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    W, b, A, V, c0 = _exact_rows(net)
    K = len(A)
    calls = [0]

    def scalar(cq):
        """Proved (low, up) of Lip(c·f) for the rational vector c (not normalised)."""
        a = [sum((cq[k] * A[k][j] for k in range(K)), Fraction(0)) for j in range(len(W))]
        v = [sum((cq[k] * V[k][i] for k in range(K)), Fraction(0)) for i in range(domain.d)]
        cc = sum((cq[k] * c0[k] for k in range(K)), Fraction(0))
        if not any(a) and not any(v):
            return 0.0, 0.0
        calls[0] += 1
        left = max(0.05, min(scalar_time_limit, deadline - time.perf_counter()))
        L = lipschitz((W, b, a, v, cc), domain, time_limit=left, rel_gap=min(0.01, rel_gap / 2))
        if L.exact and L.enclosure is not None:
            return float(L.enclosure[0]), float(L.enclosure[1])
        return float(L.lower), float(L.upper)

    def norm_up(cq):
        return _up(math.sqrt(_up(float(sum((x * x for x in cq), Fraction(0))))))

    best = {"low": 0.0, "dir": tuple([1.0] + [0.0] * (K - 1))}
    corner_cache: dict = {}

    def corner(cq):
        """The proved upper end G of Lip(c·f) at the corner c (computed once); its lower end may raise ``best``."""
        key = tuple(cq)
        if key not in corner_cache:
            low, up = scalar(cq)
            nhi = norm_up(cq)
            if low > 0 and _down(low / nhi) > best["low"]:
                best["low"] = _down(low / nhi)
                best["dir"] = tuple(float(x) / float(nhi) for x in cq)
            corner_cache[key] = up
        return corner_cache[key]

    if K == 1:      # one output: the scalar constant itself
        low, up = scalar([Fraction(1)])
        return VectorBracket(low, up, (1.0,), calls[0], time.perf_counter() - t0,
                             "gap reached" if up <= low * (1 + rel_gap) else "time limit", 1)

    def box_bound(ax, lo_box, hi_box):
        """1/dist(0, conv{p_i/G_i}) over the box's corners, rounded up (module docstring)."""
        P, G = [], []
        for bits in range(2 ** (K - 1)):
            free = [hi_box[t] if bits >> t & 1 else lo_box[t] for t in range(K - 1)]
            cq = free[:ax] + [Fraction(1)] + free[ax:]
            up = corner(cq)
            P.append([float(x) for x in cq])       # corners are dyadic: exact floats
            G.append(up)
        gmax = max(G)
        if not gmax > 0:
            return 0.0                              # g = 0 at every corner: by sublinearity, on the whole box
        G = [max(x, 1e-6 * gmax) for x in G]        # any G_i ≥ g(p_i) is valid; zeros would put q_i at infinity
        Q = np.array(P) / np.array(G)[:, None]
        # float min-norm point of conv{q_i}: min ‖Qᵀλ‖ with Σλ = 1, λ ≥ 0, by NNLS with a heavy sum row
        rho = 1e3 * float(np.max(np.abs(Q)))
        lam, _ = nnls(np.vstack([Q.T, rho * np.ones((1, len(Q)))]), np.r_[np.zeros(K), rho])
        n = Q.T @ lam
        if not np.all(np.isfinite(n)) or not np.any(n):
            n = np.sum(Q, axis=0)
        nn = _up(math.sqrt(_up(float(np.sum(n * n)))), 4)
        # n·q_i = Σ_k n_k p_ik / G_i, each rounded down: (n·p_i) by an error-bounded float dot, then / G_i
        dots = []
        for i in range(len(P)):
            s_ = math.fsum(float(n[k]) * P[i][k] for k in range(K))
            err = _up(K * 2.3e-16 * math.fsum(abs(float(n[k]) * P[i][k]) for k in range(K)))
            dots.append(_down(_down(s_ - err) / _up(G[i]) if s_ - err > 0 else 0.0))
        delta = _down(min(dots) / nn)
        return _up(1.0 / delta) if delta > 0 else math.inf

    heap: list = []
    cnt = [0]

    def push(ax, lo_box, hi_box):
        bound = box_bound(ax, lo_box, hi_box)
        cnt[0] += 1
        heapq.heappush(heap, (-bound, cnt[0], ax, lo_box, hi_box))

    for i in range(K):
        push(i, [Fraction(-1)] * (K - 1), [Fraction(1)] * (K - 1))
    status = "gap reached"
    while heap:
        top = -heap[0][0]
        if top <= best["low"] * (1 + rel_gap):
            break
        if time.perf_counter() > deadline:
            status = "time limit"
            break
        if cnt[0] >= max_boxes:
            status = "box limit"
            break
        _, _, ax, lo_box, hi_box = heapq.heappop(heap)
        j = max(range(K - 1), key=lambda t: hi_box[t] - lo_box[t])
        mid = (lo_box[j] + hi_box[j]) / 2
        for a_, b_ in ((lo_box[j], mid), (mid, hi_box[j])):
            lo2, hi2 = list(lo_box), list(hi_box)
            lo2[j], hi2[j] = a_, b_
            push(ax, lo2, hi2)
    upper = max(-heap[0][0] if heap else 0.0, best["low"])
    return VectorBracket(best["low"], _up(upper), best["dir"], calls[0], time.perf_counter() - t0, status, K)
