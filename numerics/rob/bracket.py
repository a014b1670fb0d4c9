r"""Certified Lipschitz bracket of a one-hidden-layer ReLU net by branch and bound (any d; ball or sphere).

Net: f(x) = v·x + c + Σ_j a_j ReLU(W_j·x + b_j). Every float64 input is an exact binary rational. On
the open cell σ (σ_j = 1 iff W_j·x + b_j > 0) the gradient is g_σ = v + Σ_j σ_j α_j with α_j = a_j W_j.
Ball B_R: Lip = max ‖g_σ‖ over cells meeting the open ball. Sphere: Lip = sup over cells and x in the
cell on S^{d-1} of τ_σ(x) = (‖g_σ‖² − (g_σ·x)²)^{1/2} ≤ ‖g_σ‖, so the ball bound (R = 1) bounds it.

Upper bound (proved)
--------------------
A node fixes the signs of the first units of a static order (decreasing ‖α_j‖); U (k units) is free.
With c = v + Σ_{fixed on} α_j, c₀ = c + ½Σ_U α_j, every gradient of the node is g = c₀ + ½A_U ε,
ε ∈ {±1}^k, i.e. g = Bε' with B = [c₀, ½α_j (j ∈ U)] and ε' = (1, ε). The node bound is
min(‖c₀‖ + ½Σ_U‖α_j‖, (λ_max(BWBᵀ) Σ_i 1/w_i)^{1/2}) for weights w > 0 (the dual of Shor's SDP
relaxation, weights from a warm-started Burer–Monteiro ascent; :mod:`numerics.rob.bracket_ia`). On a
64-unit net in d = 32 it is 2.4% above the zonotope's largest vertex at the root and ~0.1% once 16 units
are fixed (the former parallel/perpendicular split: 42% and 13%). Everything is evaluated in
midpoint–radius interval arithmetic (Rump): the exact α_j = a_j W_j are enclosed by fl(a_j W_j) ± 2u|·|,
λ_max by ‖H^{2^q}‖_F^{2^{-q}} with q = 10, scalar roots/powers use arb. So each node bound encloses the
node's exact maximum of ‖g‖ from above. When k ≤ K the 2^k gradients are enclosed exactly the same way
and sorted. Nodes are dropped only (i) when their rigorous bound ≤ the current lower bound, or
≤ (1 + rel_gap)·lower (then the bound enters `closed`, the max of dropped bounds, which enters `upper`),
or (ii) when infeasibility of {x : ‖x‖ ≤ R, s_j(W_j x + b_j) ≥ 0 for the fixed j} (a superset of the
open region) is PROVED by a Farkas/SOCP certificate: y ≥ 0 with Σ y_j s_j b_j + R‖Σ y_j s_j W_j‖ < 0,
checked in interval arithmetic (y comes from clarabel's dual; the solver is never trusted).
upper = max(closed, open node bounds, lower) rounded up. A leaf pattern whose top 2^k patterns are not
resolved after a few SOCPs is split further (down to single patterns). On the sphere a leaf pattern's
bound ‖g‖ is refined to (‖g‖² − δ²)^{1/2} when a dual certificate y ≥ 0 proves |g·x| ≥ δ on the closed
cell ∩ ball: g·x ≥ (g − Σ y_j s_j W_j)·x − Σ y_j s_j b_j ≥ −R‖g − Σ y_j s_j W_j‖ − Σ y_j s_j b_j.

Implied signs: from depth d/2 on, a child's free units whose hyperplanes provably miss its region are fixed with the
sign they have at the child's point (:meth:`BracketNet.implied_signs`: y ≥ 0 from a non-negative least squares with
σ(W_u·x + b_u) ≥ σb_u − Σ y_j s_j b_j − R‖σW_u − Σ y_j s_j W_j‖ > 0 checked in interval arithmetic), so that they leave
the node's zonotope instead of being branched on. (d = 16, m = 64 with cancelling pairs on the sphere: 4.4% → 3.8%
after 60 s; the random d = 32, m = 256 net is unchanged, its upper end is the root's.)

Lower bound (attained)
----------------------
Every candidate is an exact rational point: a float point in the ball, or on the sphere the inverse
stereographic image (x = (2y + (‖y‖²−1)N)/(‖y‖²+1), exactly ‖x‖ = 1) of a float y, with pole
N = −sign(x_k)e_k, k = argmax |x_k| (x far from the pole). Its signs W_j·x + b_j (all ≠ 0), ‖x‖² < R²
(ball), and the value ‖g‖² or ‖g‖² − (g·x)² are computed exactly (flint fmpq); `lower` is the float of
its square root stepped down 3 ulps. Candidates (:mod:`numerics.rob.bracket_search`) come from data and
random points improved by exact 1-D maximisation along lines / great circles, then by a cell-flip ascent
(flip the unit that increases ‖g‖ most among those whose flipped cell is reached by a ray or proved
non-empty by an SOCP point), restarted during the branch and bound from the points of the top nodes; on
the sphere each ascent's cell is realised at a point of cell ∩ {g·x = 0} pushed to ‖x‖ = 1.

Sources
-------
``Bracket.sources`` says where each bound came from: for every node and leaf pattern bounded, the source of its
bound (:data:`SOURCES`: the zonotope's Shor dual or triangle bound, the parent's bound when the child's own is no
smaller, a leaf's 2^k interval gradients, the sphere leaf's δ refinement, its Shor + RLT bound on cell ∩ S, its
pieces); for every node or pattern that left the search, why (:data:`CLOSURES`); and which of them holds the upper
end (the open node on top of the heap, a kept bound, a stuck sphere leaf, or the lower end itself when the ends met).

Workers
-------
With ``workers`` > 1 the search runs on one process for ``WARMUP`` of its branch-and-bound time, then the open nodes
are dealt round-robin by bound to forked processes (:mod:`numerics.rob.bracket_team`). Every open node is in exactly
one part; the workers prune against the largest lower end any of them has witnessed (an exact point, evaluated
exactly by that worker, and again by the parent before it enters the result); the upper end is the largest of the
parts' upper ends and of that shared floor, and a part whose worker is lost enters at its largest bound. The sphere's
stuck leaves stay with the parent. ``sources["workers"]`` gives each worker's status, nodes and lower end. (d = 8,
m = 64 on S⁷, random: 1.00% in 45 s on two processes; one process needs 87 s.)

Limits
------
The node bound ignores the cell constraints of the free units: geometry enters only through the Farkas
pruning of fixed ones. For m ≲ 2d the best vertices are nearly realisable and the bracket closes (d = 32,
m = 64: 1% in seconds); for m ≫ d the upper end levels off at the unconstrained zonotope's largest vertex
(d = 32, m = 256: ~25% above the lower end after 60 s). On the sphere "cell meets S" is relaxed to "cell
meets B" (refined by δ); a leaf pattern still above the target is then bounded over cell ∩ S itself by
the dual of Shor's relaxation with RLT cuts, checked PSD in exact rationals (:mod:`numerics.rob.bracket_sdp`;
it closes the 1.6% stall of a d = 3, m = 6 net; used for d ≤ 12). That relaxation can still be loose, and
inner nodes keep the zonotope bound. A sphere leaf still above the target is cut by hyperplanes through 0 into
pieces, each bounded the same way (:mod:`numerics.rob.bracket_sphere`, d ≤ ``SPLIT_MAX_D``), and kept aside to be
cut further whenever it holds the upper end, while time remains. A pattern of margin ~0 on the sphere (the tiny
cells that nearly concurrent hyperplanes make next to their common point inside the ball) is dropped, with its
subtree, when :meth:`BracketNet.inside_ball` proves that the cell ∩ ball lies strictly inside the ball. When the
tree is exhausted with the upper end above (1 + rel_gap)·lower — the pieces could not be cut lower — the status is
"gap open" (never "exhausted", which means converged), and the gap stated is the one proved.

Degenerate cells (floats read exactly: planes meant to touch the sphere or to meet on it, units ±10⁶ on one plane) are
decided in :mod:`numerics.rob.bracket_needle`: a leaf pattern whose SOCP margin is ≤ 1e-6 (or whose SOCP fails) is
offered exact points (caps, needles and slabs on S or in the ball, the zoom in the ball and on the sphere) and exact
emptiness certificates; a sphere leaf of margin ≤ 0 is still bounded on S (δ, Shor + RLT, pieces) instead of at ‖g‖;
a pattern whose gradient is exactly 0 adds 0, so exact cancellation gives the bracket [0, 0].
"""
from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import fmpq

from numerics.fallbacks import reach
from numerics.rob.bracket_ia import U, fmpq_float, iv_add, round_up, scale_exponent, sqrt_up, sqrt_up_q
from numerics.rob.bracket_needle import (
    beyond_empty,
    cap_points,
    needle_closed,
    needle_empty,
    needle_point,
    pinched_empty,
)
from numerics.rob.bracket_net import SRC_SHOR, SRC_TRIANGLE, BracketNet
from numerics.rob.bracket_search import LowerSearch
from numerics.rob.bracket_sphere import SphereLeaf
from numerics.rob.bracket_sphere_cells import cap_bound, cap_rim_points, sphere_needle_points, sphere_zoom_points
from numerics.rob.bracket_team import Team, can_fork

__all__ = ["Bracket", "BracketNet", "certified_bracket", "SOURCES", "CLOSURES"]

# the sphere leaf bound (an SDP of size d + 1, then an exact LDLᵀ) costs ≤ 0.1 s per leaf for d ≤ 10 and ~0.4 s
# in d = 32, where the branch and bound cannot afford it per leaf: above this, leaves keep the ball relaxation
SDP_MAX_D = 12
# a sphere leaf still above the target is cut into pieces (numerics.rob.bracket_sphere) up to this dimension
SPLIT_MAX_D = 16
# the smoothed ascent seeds the lower end when m ≥ this × d (below it, m = 64 in d = 32 say, the bracket closes in
# under a second without it, and the ascent would only spend the time)
ANNEAL_MIN_RATIO = 4
# from this depth (× d) on, a child's free units whose hyperplanes provably miss its region are fixed
# (BracketNet.implied_signs): above it the regions are wide and nearly every hyperplane crosses them
IMPLIED_FROM_DEPTH = 0.5
# with workers > 1, the open nodes are dealt to the workers once this share of the branch and bound's time has passed
WARMUP = 0.1
DEAL_MIN = 4         # … and once at least this many open nodes per worker are there to deal

# the sources of a node's upper bound (Bracket.sources): the first two from BracketNet.node_bound_source
SRC_PARENT = "parent's bound"
SRC_ENUM = "leaf: 2^k gradients in interval arithmetic"
SRC_DELTA = "sphere leaf: ‖g‖² − δ², |g·x| ≥ δ by an SOCP dual"
SRC_SDP = "sphere leaf: Shor + RLT on cell ∩ S"
SRC_CAP = "sphere leaf: a row's cap at the sphere's edge, τ bounded on it"
SRC_PIECES = "sphere leaf: cut into pieces"
SRC_LOWER = "the lower end (the ends met)"
SRC_LOST = "a lost worker's part, at its largest bound"
SOURCES = (SRC_SHOR, SRC_TRIANGLE, SRC_PARENT, SRC_ENUM, SRC_DELTA, SRC_CAP, SRC_SDP, SRC_PIECES, SRC_LOWER,
           SRC_LOST)
# why a node or a leaf pattern left the search
KEPT_TIME = "kept at the time limit (its bound enters the upper end)"
KEPT_REALISED = "leaf pattern realised at a point (its bound enters the upper end)"
KEPT_UNDECIDED = "leaf pattern undecided by the SOCP (its bound enters the upper end)"
KEPT_UNCUT = "sphere leaf that no cut lowers further (its bound enters the upper end)"
KEPT_SPHERE = "sphere leaf pattern bounded on its cell (its bound enters the upper end)"
CLOSURES = ("bound ≤ lower end", "bound within the gap", KEPT_TIME, KEPT_REALISED, KEPT_SPHERE, KEPT_UNDECIDED,
            KEPT_UNCUT, "region empty: Farkas certificate", "region empty: exact zoom",
            "cell strictly inside the ball (sphere)")


@dataclass(frozen=True)
class Bracket:
    """lower ≤ Lip ≤ upper, both proved. ``status``: "gap reached" (upper ≤ (1 + rel_gap)·lower), "exhausted"
    (every node closed and the ends within rel_gap), "gap open" (every node closed, the ends further apart:
    a relaxation the leaves could not tighten), "time limit", "node limit"."""

    lower: float
    upper: float
    witness_point: tuple
    witness_pattern: tuple
    nodes: int
    seconds: float
    status: str
    implied: int = 0   # free units fixed because their hyperplanes provably miss a node's region (not branched on)
    # where the bounds came from: {"upper end": the source (SOURCES) of the bound that holds it, "upper end value":
    # that bound before the final rounding up, "nodes": {source: the nodes and leaf patterns it bounded},
    # "closed": {reason (CLOSURES): count}}
    sources: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        """upper/lower − 1; inf when the lower end is 0 (a constant ~0, say two units that cancel exactly)."""
        return math.inf if self.lower <= 0 else self.upper / self.lower - 1.0

    @property
    def abs_gap(self) -> float:
        """upper − lower: what the bracket says when the relative gap is undefined (a lower end of 0)."""
        return self.upper - self.lower


def certified_bracket(W, b, a, v, *, sphere: bool, R=1.0, rel_gap: float = 0.01, time_limit: float = 60.0,
                      seed: int = 0, data_points=None, progress=None, implied: bool = True,
                      workers: int = 1) -> Bracket:
    t0 = time.perf_counter()
    deadline = t0 + float(time_limit)
    exact = ([list(r) for r in W], list(b), list(a), list(v))
    W = np.array([[float(t) for t in r] for r in W], dtype=float, ndmin=2)
    b, a, v = (np.array([float(t) for t in x], dtype=float).ravel() for x in (b, a, v))
    net = BracketNet(W, b, a, v, sphere, R, exact)
    net.deadline = deadline
    m, d, Rr = net.m, net.d, net.R
    rng = np.random.default_rng(seed)
    net.nAup = round_up(np.sqrt(np.sum((np.abs(net.Am) + net.Ar) ** 2, axis=1)), d + 4)
    net.all_idx = np.arange(m)
    srch = LowerSearch(net, rng, deadline)
    best = srch.best
    floor = [0.0]          # the largest lower end any worker has witnessed (workers > 1); pruning uses lo()

    def lo():
        return max(best["low"], floor[0])
    last = [t0]
    nodes = [0]

    def tick(upper_now):
        now = time.perf_counter()
        if progress is not None and now - last[0] >= 1.0:
            last[0] = now
            progress(best["low"], upper_now, nodes[0], now - t0)

    def climb_from(x, budget):
        """Cell-flip ascent from a float point, then the exact offer of its cell."""
        if sphere:
            x = x * (1 - 1e-6) / max(np.linalg.norm(x), 1e-300)
        res = srch.climb(x, t_end=time.perf_counter() + budget)
        if res is not None and res[3] > best["low"] and time.perf_counter() < deadline:
            srch.settle(res[0], res[1], res[2])

    # the root bound first: it is the upper end whatever happens to the time budget
    order = np.argsort(-net.nAup, kind="stable")
    V0 = rng.standard_normal((m + 1, min(m + 1, 8)))
    V0 /= np.linalg.norm(V0, axis=1, keepdims=True)
    root = net.node_bound_source(v.copy(), net.v_rad.copy(), order, V0, iters=60 if m > 256 else 200)

    # ---------- seeding: line / great-circle search from data and random points, then cell-flip ascent
    starts = []
    if data_points is not None:
        starts += list(np.array(data_points, dtype=float, ndmin=2))
    rnd = rng.standard_normal((max(8, min(64, 2 * m)), d))
    rnd /= np.linalg.norm(rnd, axis=1, keepdims=True)
    starts += list(rnd * (1.0 if sphere else 0.5 * Rr))
    if not sphere:
        starts += list(rnd[: len(rnd) // 2] * 0.999 * Rr)
    seeded = []
    t_s = time.perf_counter()
    span = max(deadline - t_s, 0.0)
    t_starts, t_climb = t_s + 0.08 * span, t_s + (0.32 if m >= ANNEAL_MIN_RATIO * d and m >= 64 else 0.2) * span
    for i, x0 in enumerate(starts):
        now = time.perf_counter()
        if now > deadline or i > 0 and now > t_starts:
            break
        x0 = x0 / np.linalg.norm(x0) if sphere else x0
        x0 = x0 if sphere or x0 @ x0 < Rr * Rr else 0.5 * Rr * x0 / np.linalg.norm(x0)
        seeded.append(srch.local_search(x0, t_end=max(t_starts, now + 0.02 * span)))
    # the smoothed (annealed) ascent, for nets too large for line searches alone to find good cells
    if m >= ANNEAL_MIN_RATIO * d and m >= 64:
        for x0 in srch.anneal(time.perf_counter() + min(0.12 * span, 15.0)):
            seeded.append((x0, net.fvalue(x0[None])[0][0]))
    seeded.sort(key=lambda t: -t[1])
    for x0, _ in seeded[:8]:
        now = time.perf_counter()
        if now > min(deadline, t_climb):
            break
        climb_from(x0, t_climb - now)

    # ---------- branch and bound ----------
    KE = 16 if m <= 16 else min(14, max(8, int(math.log2(2e6 / max(d, 1)))))
    implied_from = IMPLIED_FROM_DEPTH * d if implied else m + 1
    fixed_by_implication = [0]
    closed, closed_src = [0.0], [SRC_LOWER]
    tally = dict.fromkeys(SOURCES, 0)        # nodes and leaf patterns bounded, by the bound's source
    shut = dict.fromkeys(CLOSURES, 0)        # why nodes and leaf patterns left the search

    def close(val, src, why=None):
        """A node or leaf pattern dropped with bound ``val``: ``closed`` keeps the largest (it enters the upper end)."""
        if val > lo():
            shut[why or ("bound within the gap" if val <= lo() * (1 + rel_gap) else KEPT_TIME)] += 1
            if val > closed[0]:
                closed[0], closed_src[0] = val, src
        else:
            shut["bound ≤ lower end"] += 1

    stuck, stuck_all = [], []          # sphere leaves above the target, cut into pieces (bracket_sphere)
    heap = []
    cnt = [0]

    def push(Fi, signs, Ui, cm, cr, pt, V, root=None):
        bd, V, src = net.node_bound_source(cm, cr, Ui, V) if root is None else root
        tally[src] += 1
        if bd <= lo() * (1 + rel_gap):
            close(bd, src)
            return
        cnt[0] += 1
        heapq.heappush(heap, (-bd, cnt[0], Fi, signs, Ui, cm, cr, pt, V, src))

    def leaf(Fi, signs, Ui, cm, cr):
        """Max over the node's 2^k patterns: (the node's bound, its source, why it is kept), or None (split further)."""
        S, ub, Gm, Gr = net.enum_bounds(cm, cr, Ui)
        idx = np.concatenate([Fi, Ui]).astype(int)
        h = [(-float(u), int(i), False, SRC_ENUM) for i, u in enumerate(ub)]
        heapq.heapify(h)
        tests = 0
        while h:
            nV, i, refined, src = heapq.heappop(h)
            V = -nV
            if V <= lo():
                return 0.0, src, None
            if V <= lo() * (1 + rel_gap) or time.perf_counter() > deadline:
                return V, src, None
            if refined:
                return V, src, KEPT_SPHERE if sphere else KEPT_REALISED
            tests += 1
            if tests > 6 and len(Ui) > 0:
                return None
            tally[SRC_ENUM] += 1
            sg = np.concatenate([signs, np.where(S[i], 1.0, -1.0)])
            want = np.zeros(m, bool)
            want[idx] = sg > 0                      # the leaf's pattern, in the units' own order
            want = tuple(bool(w) for w in want)
            if np.all(np.abs(Gm[i]) <= Gr[i]):     # the enclosure holds 0 (units that cancel to ~1 ulp of ±10⁶)
                reach("rob.bracket/zero_gradient_exact")
                gq = net.exact_gradient(idx, sg)     # in rationals: g = 0 exactly, or tiny
                if not any(gq):
                    shut["bound ≤ lower end"] += 1  # g exactly 0: it adds 0 ≤ lower
                    continue
                # g ≠ 0 but far below the enclosure's radius: the pattern's bound and gradient from the exact g
                Gm[i] = np.array([fmpq_float(t) for t in gq])
                Gr[i] = round_up(2 * U * np.abs(Gm[i]))
                Vq = sqrt_up_q(sum((t * t for t in gq), fmpq(0)))
                if Vq < V:
                    heapq.heappush(h, (-Vq, i, False, src))
                    continue
            res = net.socp(idx, sg)
            # a failed SOCP (a cell at the solver's resolution) still gets the exact constructions below, without x
            t, x, y = res if res is not None else (0.0, None, None)
            if t <= 1e-6 and (y is not None and net.farkas(idx, sg, y) or needle_empty(net, idx, sg)
                              or needle_closed(net, idx, sg)
                              or sphere and pinched_empty(net, idx, sg, x) or beyond_empty(net, idx, sg, x)):
                shut["region empty: Farkas certificate"] += 1
                continue
            if not sphere:
                # realised only when a point of this very cell is found, exactly: the solver's point, else the exact
                # zoom, the needle of two nearly coincident rows, a cap of depth ~2⁻⁴⁰ at the ball's edge; else
                # undecided
                if not (t > 0 and srch.realise_in(x, t, want)):
                    zm = net.zoom(idx, sg, x)
                    if zm is not None and zm[0] == "empty":
                        shut["region empty: exact zoom"] += 1
                        continue
                    if not (zm is not None and srch.offer_exact(zm[1], pattern=want)
                            or srch.offer_exact_opt(needle_point(net, idx, sg), pattern=want)
                            or any([srch.offer_exact(xc, pattern=want) for xc in cap_points(net, idx, sg)])):
                        return V, src, KEPT_UNDECIDED
                heapq.heappush(h, (nV, i, True, src))
                continue
            if t <= 1e-6:                    # (the solver's margin on a degenerate cell can exceed its tolerance)
                for xc in cap_points(net, idx, sg) + cap_rim_points(net, idx, sg, Gm[i]) + \
                        sphere_needle_points(net, idx, sg, Gm[i]) + sphere_zoom_points(net, idx, sg, x):
                    srch.offer_exact(xc, pattern=want)   # a cap or a needle at S: can only raise the lower end
            if t <= 1e-9 and net.inside_ball(idx, sg):
                shut["cell strictly inside the ball (sphere)"] += 1
                continue                     # realised only strictly inside the ball: never on the sphere
            xs = srch.realise_on_sphere(idx, sg, Gm[i], x, t) if t > 0 else None
            dl = 0.0                       # rigorous lower bound of |g·x| on the cell ∩ ball
            # g scaled by a power of two to ~1 (exact), so that the solver's tolerances do not swamp a tiny gradient
            sc = math.ldexp(1.0, scale_exponent(float(np.max(np.abs(Gm[i])))))
            for sgn in (1.0, -1.0):
                r3 = net.socp(idx, sg, obj=-sgn * sc * Gm[i], tfix=0.0)
                if r3 is not None:
                    dl = max(dl, net.dual_low(idx, sg, r3[2], sgn * sc * Gm[i], sc * Gr[i]) / sc)
            V2, src2 = V, src
            if dl > 0:
                tally[SRC_DELTA] += 1
                Vd = sqrt_up(round_up(round_up(V * V) - dl * dl * (1 - 8 * U)))
                if Vd < V2:
                    V2, src2 = Vd, SRC_DELTA
            if V2 > lo() * (1 + rel_gap) and (t <= 1e-6 or d <= SDP_MAX_D):
                Vc = cap_bound(net, idx, sg)   # +inf unless a row cuts a cap at S
                if Vc < V2:
                    tally[SRC_CAP] += 1
                    V2, src2 = Vc, SRC_CAP
            if V2 > lo() * (1 + rel_gap) and d <= SDP_MAX_D and time.perf_counter() < deadline:
                tally[SRC_SDP] += 1
                V3 = net.sphere_cell_up(idx, sg, x)   # the cell on the sphere, not in the ball
                if V3 < V2:
                    V2, src2 = V3, SRC_SDP
            if V2 > lo() * (1 + rel_gap) and d <= SPLIT_MAX_D and time.perf_counter() < deadline:
                # still above the target: the cell is cut into pieces (bracket_sphere), and kept aside to be
                # cut further while it holds the upper end
                srch.climb_boundary(idx, sg, Gm[i], xs)   # its supremum may be on its boundary
                sl = SphereLeaf(net, idx, sg, V2, x)
                tally[SRC_PIECES] += 1
                if d <= SDP_MAX_D:
                    sl.refine(lo() * (1 + rel_gap), lo(), 2, deadline)
                if sl.bound > lo():
                    heapq.heappush(stuck, (-sl.bound, len(stuck_all), sl))
                    stuck_all.append(sl)
                else:
                    shut["bound ≤ lower end"] += 1
                continue
            heapq.heappush(h, (-V2, i, True, src2))
        return 0.0, SRC_ENUM, None

    def refine_stuck(t_end):
        """Cut the stuck leaf that holds the upper end (a few pieces), then re-file it by its new bound."""
        nb, k, sl = heapq.heappop(stuck)
        before = sl.splits
        sl.refine(lo() * (1 + rel_gap), lo(), 2 + sl.splits // 2, t_end)
        if sl.bound > lo() and (sl.splits > before or time.perf_counter() >= t_end):
            heapq.heappush(stuck, (-sl.bound, k, sl))
        else:                               # below the lower end, or a piece that cannot be cut: final
            close(sl.bound, SRC_PIECES, KEPT_UNCUT)

    push(np.zeros(0, int), np.zeros(0), order, v.copy(), net.v_rad.copy(), None, V0, root=root)
    t_bb = time.perf_counter()
    spent, share = [0.0], [0.3]     # climbs take ≤ 30% of the branch-and-bound phase, down to 10% while they do
    #                                 not raise the lower end
    team = [None]

    def run(split_at=None):
        """Best-first search until the ends meet, the open set is empty, or the limits: its status. With
        ``split_at`` (a time), returns "split" once that time has passed and enough nodes are open to deal."""
        while heap or stuck and -stuck[0][0] > lo() * (1 + rel_gap):
            if team[0] is not None:
                floor[0] = max(floor[0], team[0].share(best["low"]))
            status = step(split_at)
            if status is not None:
                return status
        return "exhausted" if time.perf_counter() <= deadline else "time limit"

    def step(split_at):
        """One node of the search: None, or the status that ends it."""
        now = time.perf_counter()
        top = -heap[0][0] if heap else 0.0
        top_stuck = -stuck[0][0] if stuck else 0.0
        upper_now = max(top, top_stuck, closed[0], lo())
        tick(upper_now)
        if upper_now <= lo() * (1 + rel_gap):
            return "gap reached"
        if now > deadline:
            return "time limit"
        if nodes[0] >= 10 ** 7:
            return "node limit"
        if split_at is not None and now >= split_at and len(heap) >= DEAL_MIN * workers:
            return "split"
        if top_stuck >= top:                # a stuck sphere leaf holds the upper end: cut it further
            refine_stuck(deadline)
            return None
        nbd, _, Fi, signs, Ui, cm, cr, pt, V, _src = heapq.heappop(heap)
        bd = -nbd
        nodes[0] += 1
        if bd <= lo():
            shut["bound ≤ lower end"] += 1
            return None
        if pt is not None and spent[0] < share[0] * (now - t_bb):
            low0 = best["low"]
            climb_from(pt, min(2.0, deadline - now))
            spent[0] += time.perf_counter() - now
            share[0] = 0.3 if best["low"] > low0 else max(0.1, 0.8 * share[0])
        if len(Ui) <= KE:
            lv = leaf(Fi, signs, Ui, cm, cr)
            if lv is not None:
                close(*lv)
                return None
        j = int(Ui[0])
        Uc, Vc = Ui[1:], np.delete(V, 1, axis=0)
        Fc = np.append(Fi, j)
        for s in (0, 1):
            sg = np.append(signs, 1.0 if s else -1.0)
            ccm, ccr = iv_add(cm, cr, net.Am[j], net.Ar[j]) if s else (cm, cr)
            cb, cV, csrc = net.node_bound_source(ccm, ccr, Uc, Vc)
            if bd < cb:                             # the child's gradients are among the parent's
                cb, csrc = bd, SRC_PARENT
            if cb <= lo() * (1 + rel_gap):   # closed by its bound: no feasibility test needed
                tally[csrc] += 1
                close(cb, csrc)
                continue
            ch_pt = None
            if pt is not None and (1.0 if s else -1.0) * (net.W[j] @ pt + net.b[j]) > 1e-12:
                ch_pt = pt
            else:
                idx = Fc
                res = net.socp(idx, sg)
                if res is not None:
                    t, x, y = res
                    if t <= 1e-9 and (net.farkas(idx, sg, y) or needle_empty(net, idx, sg)
                                      or needle_closed(net, idx, sg)):
                        shut["region empty: Farkas certificate"] += 1
                        continue
                    if t <= 1e-9 and sphere and net.inside_ball(idx, sg):
                        shut["cell strictly inside the ball (sphere)"] += 1
                        continue                 # the whole subtree lies strictly inside the ball
                    if t > 1e-10:
                        ch_pt = x
                        if not sphere and net.fvalue(x[None])[0][0] > best["low"]:
                            srch.offer_in(x, t)
            Fn, Un = Fc, Uc
            if ch_pt is not None and len(Fc) >= implied_from and len(Uc) > 0:
                # the free units whose hyperplanes miss the child's region are fixed (proved), not branched on
                units, sig = net.implied_signs(Fc, sg, Uc, ch_pt)
                if len(units):
                    keep = ~np.isin(Uc, units)
                    on = units[sig > 0]
                    if len(on):
                        ccm, ccr = iv_add(ccm, ccr, *net.alpha_sum(on))
                    Fn, sg = np.append(Fc, units), np.append(sg, sig)
                    Un = Uc[keep]
                    cV = cV[np.r_[0, 1 + np.flatnonzero(keep)]] if cV is not None else None
                    cb2, cV, src2 = net.node_bound_source(ccm, ccr, Un, cV)
                    fixed_by_implication[0] += len(units)
                    if cb2 < cb:
                        cb, csrc = cb2, src2
                    if cb <= lo() * (1 + rel_gap):
                        tally[csrc] += 1
                        close(cb, csrc)
                        continue
            push(Fn, sg, Un, ccm, ccr, ch_pt, None, root=(cb, cV, csrc))
        if sphere and pt is not None and nodes[0] % 16 == 0:
            srch.local_search(pt / np.linalg.norm(pt), iters=2, ndir=2)
        return None

    def holders():
        """(bound, source) of everything that enters this process's upper end; the floor it pruned against too."""
        h = [(best["low"], SRC_LOWER), (floor[0], SRC_LOWER), (closed[0], closed_src[0])]
        if heap:
            h.append((-heap[0][0], heap[0][-1]))
        if stuck:
            h.append((-stuck[0][0], SRC_PIECES))
        return h

    def merge_team(tm, status):
        """The parent: every child's part into this result. A child's witness raises the lower end only after it is
        evaluated again here, exactly; a lost child's part enters the upper end at its largest bound."""
        held, statuses = holders(), [status]
        crew = [{"worker": 0, "status": status, "nodes": nodes[0] - counts0[2], "lower": best["low"]}]
        for i, (res, top, msg) in enumerate(tm.collect(deadline), start=1):
            if res is None:
                held.append((top, SRC_LOST))
                statuses.append("time limit")
                crew.append({"worker": i, "status": "lost", "why": msg, "part's largest bound": top})
                continue
            held += [tuple(h) for h in res["holders"]]
            if res["x"] is not None:
                srch.offer_exact([fmpq(f.numerator, f.denominator) for f in res["x"]])
            for k, n in res["tally"].items():
                tally[k] += n
            for k, n in res["shut"].items():
                shut[k] += n
            nodes[0] += res["nodes"]
            fixed_by_implication[0] += res["implied"]
            statuses.append(res["status"])
            crew.append({"worker": i, "status": res["status"], "nodes": res["nodes"], "lower": res["low"]})
        for word in ("time limit", "node limit", "gap reached"):
            if word in statuses:
                return held, word, crew
        return held, "exhausted", crew

    workers = max(1, int(workers)) if can_fork() else 1
    status = run(t_bb + WARMUP * max(deadline - t_bb, 0.0) if workers > 1 else None)
    held, crew = holders(), []
    counts0 = (dict(tally), dict(shut), nodes[0], fixed_by_implication[0])
    if status == "split":
        team[0] = Team(workers)
        team[0].fork(heap, stuck)
        if team[0].role > 0:              # a child: quiet, and its own random stream for the climbs
            progress = None
            srch.rng = np.random.default_rng([seed, team[0].role])
        try:
            status = run()
        except BaseException as exc:
            if team[0].role == 0:
                team[0].abandon()
                raise
            status = exc

        def part_result():
            if isinstance(status, BaseException):
                raise status
            return {"status": status, "holders": holders(), "x": best["x"], "low": best["low"],
                    "tally": {k: n - counts0[0][k] for k, n in tally.items()},
                    "shut": {k: n - counts0[1][k] for k, n in shut.items()},
                    "nodes": nodes[0] - counts0[2], "implied": fixed_by_implication[0] - counts0[3]}

        if team[0].role > 0:              # a child: its part's result to the parent, then the process ends
            team[0].child_exit(part_result)
        held, status, crew = merge_team(team[0], status)
    upper_raw, held_by = max(held, key=lambda t: t[0])     # ties: the first (the lower end, then closed bounds)
    # (every bound ≤ 0 = the lower end: the constant is exactly 0, say units that cancel exactly, and 0 is its bound)
    upper = 0.0 if upper_raw == 0.0 else float(np.nextafter(upper_raw, np.inf))
    if status in ("exhausted", "gap reached") and upper > best["low"] * (1 + rel_gap) * (1 + 1e-9):
        status = "gap open"     # every node closed, but the ends stay further apart than the target gap
    if best["x"] is None:
        wp, wpat = tuple(Fraction(0) for _ in range(d)), tuple()
    else:
        wp, wpat = best["x"], best["pat"]
    sec = time.perf_counter() - t0
    if progress is not None:
        progress(best["low"], upper, nodes[0], sec)
    sources = {"upper end": held_by, "upper end value": float(upper_raw),
               "nodes": {k: n for k, n in tally.items() if n},
               "closed": {k: n for k, n in shut.items() if n}}
    if crew:
        sources["workers"] = crew
    return Bracket(best["low"], upper, wp, wpat, nodes[0], sec, status, fixed_by_implication[0], sources)
