r"""The exact Lipschitz constant on a ball B_R ⊂ R^d: the cells of a hyperplane arrangement, decided exactly.

The ball is convex, so Lip = max ‖g_σ‖ over the cells σ of the arrangement {w_j·x + b_j = 0} that meet the
open ball, with g_σ = v + Σ_j σ_j a_j w_j rational. If a hyperplane meets the open ball, every cell has a
facet meeting it, and the facet contains a cell of the arrangement induced on that hyperplane's slice of
the ball. So the cells are the two sides of the cells of the induced arrangements, down to lines.

A node of this recursion is a flat F (the intersection of the hyperplanes in a set S) with a rational
parametrisation x = c + A y whose columns are mutually orthogonal and orthogonal to c (Gram–Schmidt
without normalising: everything stays rational). On F the ball is the open ellipsoid
Σ_i M_ii y_i² < ρ² (M = AᵀA diagonal, ρ² = R² − ‖c‖²), and hyperplane j is n_j·y + h_j = 0 with
n_j = Aᵀw_j, h_j = w_j·c + b_j; it meets the ellipsoid iff h_j² < ρ² Σ_i n_ij²/M_ii. Hyperplanes that
coincide on F (pencils: three planes through one line, many lines through one point) are merged into one
group whose members flip together, so degenerate arrangements give exactly their own cells. A flat is
identified by the set S of hyperplanes containing it, so every flat is visited once (not once per
ordering: the old recursion took 11! steps for 11 units in d = 32).

The flats are processed a level (a dimension) at a time, breadth first: the decisions of all flats of one
level (in d = 3 with 128 units: the ~6 000 lines of all planes at once) are one vectorised float64 interval
computation (:mod:`numerics.rob.interval`, rigorous error bounds) used as a filter that proves each decision
(|value| > its error bound), and every decision the filter leaves open is made in exact rationals for that
flat and that hyperplane alone. A flat's parametrisation is the one of the first path that reaches it in the
depth-first order of the facet recursion, so the cells, their order and the result are those of the
recursion itself. Lip² is then the exact maximum of the rational ‖g_σ‖² over the distinct cells (compared
exactly among the candidates the enclosures cannot separate).

Every decision (n_j = 0, meets the ellipsoid, coincidence, the order of points on a line) is made by the
filter and, where it cannot decide, in exact rationals; nothing is decided by a tolerance.

Cost: the cells of a line are built packed (⌈m/8⌉ bytes a row), each row the XOR of the previous one and the
bits of the hyperplanes through its point; cells found through several facets are merged by a 64-bit hash
whose runs are checked row by row. In d = 3 with 128 units (the bench's nets) this takes ~1.8 s of CPU
against 10.5 s for the flat-by-flat recursion it replaces (medians of 3 seeds), with the same result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from numerics.fallbacks import reach
from numerics.rob import exact as E
from numerics.rob.interval import Interval, Undecided, from_fractions, matmul
from numerics.rob.packed_rows import first_unique, pack_rows

__all__ = ["lipschitz_ball", "BallResult", "BudgetExceeded", "decide_iv", "line_cells", "rank_points",
           "span_basis"]

F0, F1 = Fraction(0), Fraction(1)
CHUNK = 1 << 16  # entries (flats × units) per vectorised block: bounds the memory of one level


class BudgetExceeded(RuntimeError):
    """The exact recursion exceeded its node budget or its time limit."""


@dataclass(frozen=True)
class BallResult:
    value2: Fraction
    pattern: tuple
    cells: int
    nodes: int


class _Ctx:
    def __init__(self, Wq, bq, R2, deadline, max_nodes, progress):
        self.Wq, self.bq, self.R2 = Wq, bq, R2
        self.m, self.d = len(Wq), (len(Wq[0]) if Wq else 0)
        self.Wiv = from_fractions([list(w) for w in Wq]) if Wq else None
        self.WivT = self.Wiv.T if Wq else None
        self.biv = from_fractions(list(bq)) if Wq else None
        self.R2iv = from_fractions([R2])[0]
        self.unit_mask = np.packbits(np.eye(self.m, dtype=bool), axis=1) if Wq else None  # bit j of unit j
        self.exact_params: dict = {(): (span_basis(Wq, self.d), tuple(F0 for _ in range(self.d)))}
        self.nodes = 0
        self.deadline, self.max_nodes, self.progress = deadline, max_nodes, progress
        self.last = time.perf_counter()

    def tick(self, count=1):
        self.nodes += count
        self.check()

    def check(self):
        now = time.perf_counter()
        if self.nodes > self.max_nodes or (self.deadline is not None and now > self.deadline):
            raise BudgetExceeded(f"exact ball recursion stopped after {self.nodes} flats")
        if self.progress is not None and now - self.last > 1.0:
            self.last = now
            self.progress(self.nodes, -1)

    def exact_param(self, path):
        """The exact (A, c) of the flat reached by ``path`` ((j, p) steps), by the same formulas as the
        interval parametrisation (so both order points on a line the same way)."""
        hit = self.exact_params.get(path)
        if hit is None:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                raise BudgetExceeded("exact ball recursion ran out of time")
            A, c = self.exact_param(path[:-1])
            j, p = path[-1]
            w = self.Wq[j]
            n = tuple(E.dot(w, a) for a in A)
            h = E.dot(w, c) + self.bq[j]
            hit = _sub_flat_exact(A, c, n, h, p)
            self.exact_params[path] = hit
        return hit


class _Exact:
    """Exact (n_j, h_j) and (ρ², M) of the flats of one level, computed on demand (a filter left it open)."""

    def __init__(self, ctx, paths):
        self.ctx, self.paths = ctx, paths
        self.nh_cache: dict = {}
        self.rho_cache: dict = {}

    def nh(self, g, j):
        key = (int(g), int(j))
        hit = self.nh_cache.get(key)
        if hit is None:
            Ae, ce = self.ctx.exact_param(self.paths[key[0]])
            w = self.ctx.Wq[key[1]]
            hit = (tuple(E.dot(w, a) for a in Ae), E.dot(w, ce) + self.ctx.bq[key[1]])
            self.nh_cache[key] = hit
        return hit

    def rho2(self, g):
        g = int(g)
        hit = self.rho_cache.get(g)
        if hit is None:
            Ae, ce = self.ctx.exact_param(self.paths[g])
            hit = (self.ctx.R2 - E.dot(ce, ce), [E.dot(a, a) for a in Ae])
            self.rho_cache[g] = hit
        return hit

    def bound(self, g):
        return lambda j: self.nh(g, j)


def _gs_basis(d):
    return [tuple(F1 if i == k else F0 for i in range(d)) for k in range(d)]


def span_basis(Wq, d):
    """An orthogonal rational basis of span{w_j} (the identity when the normals span R^d).

    Every hyperplane is invariant along span{w_j}^⊥, and the orthogonal projection of B_R onto a subspace
    is the ball of radius R there, so the cells meeting B_R are those of the arrangement on the span."""
    basis = []
    for w in Wq:
        x = tuple(w)
        for col in basis:
            x = E.sub(x, E.scale(E.dot(x, col) / E.dot(col, col), col))
        if any(t != 0 for t in x):
            basis.append(x)
        if len(basis) == d:
            return _gs_basis(d)
    return basis


def _sub_flat_exact(A, c, n, h, p):
    """The flat {y : n·y + h = 0} of x = c + A y: (A', c') with orthogonal columns ⊥ c' (exact).

    With M_i = ‖A_i‖², q = Σ n_i²/M_i: c' = c + Σ_i y*_i A_i, y*_i = −h n_i/(M_i q); the columns are the
    M-orthogonal projections z^e = e_e − (n_e/q) M⁻¹n of the unit vectors e ≠ p (p: the coordinate where
    |n_p| is largest), mapped by A and Gram–Schmidt-orthogonalised in order.
    """
    k = len(A)
    M = [E.dot(a, a) for a in A]
    q = sum(n[i] * n[i] / M[i] for i in range(k))
    c2 = tuple(c[t] + sum(-h * n[i] / (M[i] * q) * A[i][t] for i in range(k)) for t in range(len(c)))
    cols = []
    for e in range(k):
        if e == p:
            continue
        z = [(F1 if i == e else F0) - n[e] * n[i] / (q * M[i]) for i in range(k)]
        x = tuple(sum(z[i] * A[i][t] for i in range(k)) for t in range(len(c)))
        for col in cols:
            x = E.sub(x, E.scale(E.dot(x, col) / E.dot(col, col), col))
        cols.append(x)
    return cols, c2


def _sub_flats_iv(A: Interval, c: Interval, n: Interval, h: Interval, p: np.ndarray):
    """:func:`_sub_flat_exact` for G (flat, hyperplane) pairs at once, in interval arithmetic.

    A (G, k, d) and c (G, d) are the parent flats, n (G, k) and h (G,) the hyperplanes on them, p (G,) the
    dropped coordinates; returns (A' (G, k−1, d), c' (G, d))."""
    G, k = n.shape
    M = (A * A).sum(axis=2)                                 # (G, k)
    Mq = n.square() / M
    q = Mq.sum(axis=1)                                      # (G,)
    ystar = -(h.reshape(G, 1) * n) / (M * q.reshape(G, 1))  # (G, k)
    c2 = matmul(ystar.reshape(G, 1, k), A).reshape(G, -1) + c
    keep = np.array([[e for e in range(k) if e != pg] for pg in p], int).reshape(G, k - 1)
    onehot = np.zeros((G, k - 1, k))
    onehot[np.arange(G)[:, None], np.arange(k - 1)[None, :], keep] = 1.0
    ne = Interval(np.take_along_axis(n.m, keep, 1), np.take_along_axis(n.r, keep, 1))     # (G, k−1)
    coef = n / (q.reshape(G, 1) * M)                                                      # (G, k)
    Z = Interval(onehot) - ne.reshape(G, k - 1, 1) * coef.reshape(G, 1, k)               # (G, k−1, k)
    X = matmul(Z, A)                                                                      # (G, k−1, d)
    cols = []
    for t in range(k - 1):
        x = X[:, t, :]
        for col in cols:
            coeff = (x * col).sum(axis=1) / (col * col).sum(axis=1)
            x = x - coeff.reshape(G, 1) * col
        cols.append(x)
    A2 = Interval(np.stack([x.m for x in cols], 1), np.stack([x.r for x in cols], 1))
    return A2, c2


def _sub_flats_from_exact(ctx, paths):
    reach("rob.ball/sub_flats_exact")
    A2m, A2r, c2m, c2r = [], [], [], []
    for path in paths:
        At, ct = ctx.exact_param(path)
        a = from_fractions([list(col) for col in At])
        cc = from_fractions(list(ct))
        A2m.append(a.m)
        A2r.append(a.r)
        c2m.append(cc.m)
        c2r.append(cc.r)
    return Interval(np.stack(A2m), np.stack(A2r)), Interval(np.stack(c2m), np.stack(c2r))


# ------------------------------------------------------------------------------------------ decisions
def decide_iv(free, N, H, M, rho2, k, exact_nh, exact_rho2):
    """Per flat g and hyperplane j: n_gj = 0 on the flat, meets the open ellipsoid, constant sign.

    free (G, m) bool, N (G, m, k), H (G, m), M (G, k), rho2 (G,); ``exact_nh(g, j)`` and ``exact_rho2(g)``
    give the exact quantities for the entries the filter cannot decide. Returns (zero_n, meets, const)."""
    G, m = free.shape
    nz_sure = (N.sign() != 0).any(axis=2)
    zero_n = np.zeros((G, m), bool)
    for g, j in np.argwhere(free & ~nz_sure):
        n, _ = exact_nh(g, j)
        zero_n[g, j] = all(x == 0 for x in n)
    # meets the open ellipsoid: ρ² Σ n_i²/M_i − h² > 0
    s = (N.square() / M.reshape(G, 1, k)).sum(axis=2) * rho2.reshape(G, 1) - H.square()
    ss = s.sign()
    meets = free & ~zero_n & (ss > 0)
    for g, j in np.argwhere(free & ~zero_n & (ss == 0)):
        n, h = exact_nh(g, j)
        r2, Me = exact_rho2(g)
        meets[g, j] = r2 * sum(n[i] * n[i] / Me[i] for i in range(k)) - h * h > 0
    sh = H.sign()  # the value at the centre y = 0 is h_j
    const = np.zeros((G, m), bool)
    rest = free & ~meets
    const[rest & (sh > 0)] = True
    for g, j in np.argwhere(rest & (sh == 0)):
        sg = E.sgn(exact_nh(g, j)[1])
        if sg == 0:
            raise AssertionError("a hyperplane contains the flat but is not in its set")
        const[g, j] = sg > 0
    return zero_n, meets, const


def _decide_exact(free, k, exact_nh, r2, Me):
    """One flat's decisions in exact arithmetic (``exact_nh(j)``; r2, Me its exact ρ² and M)."""
    m = len(free)
    zero_n, meets, const = np.zeros(m, bool), np.zeros(m, bool), np.zeros(m, bool)
    for j in np.flatnonzero(free):
        n, h = exact_nh(j)
        zero_n[j] = all(x == 0 for x in n)
        meets[j] = (not zero_n[j]) and r2 * sum(n[i] * n[i] / Me[i] for i in range(k)) - h * h > 0
        if not meets[j]:
            if h == 0:
                raise AssertionError("a hyperplane contains the flat but is not in its set")
            const[j] = h > 0
    return zero_n, meets, const


def _decide_level(ctx, S_list, A, c, ex):
    """The decisions of all flats of one level: (N (G, m, k), H (G, m), zero_n, meets, const, exact_node)."""
    G, k = A.shape[0], A.shape[1]
    m = ctx.m
    free = np.ones((G, m), bool)
    for g, S in enumerate(S_list):
        if S:
            free[g, list(S)] = False
    M = (A * A).sum(axis=2)                                       # (G, k)
    N = matmul(ctx.Wiv, Interval(A.m.transpose(0, 2, 1), A.r.transpose(0, 2, 1)))   # (G, m, k)
    H = matmul(c, ctx.WivT) + ctx.biv.reshape(1, m)               # (G, m)
    rho2 = ctx.R2iv - (c * c).sum(axis=1)                         # (G,)
    # a flat whose M the filter cannot divide by (entries near underflow) is decided exactly, as a whole
    exact_node = np.any(np.abs(M.m) - M.r <= 0, axis=1)
    if exact_node.any():
        M = Interval(np.where(exact_node[:, None], 1.0, M.m), np.where(exact_node[:, None], 0.0, M.r))
    zero_n, meets, const = decide_iv(free & ~exact_node[:, None], N, H, M, rho2, k, ex.nh, ex.rho2)
    for g in np.flatnonzero(exact_node):
        zero_n[g], meets[g], const[g] = _decide_exact(free[g], k, ex.bound(g), *ex.rho2(g))
    return N, H, zero_n, meets, const, exact_node


def _coincidence_groups(idx, N, H, exact_nh, k, exact_node=False):
    """Group hyperplanes that coincide on the flat: (n_j, h_j) ∝ (n_l, h_l); orientation = sign of the ratio.

    N (m, k) and H (m,) are the flat's enclosures; pairs the filter separates (a nonzero 2 × 2 minor of
    (n, h)) are distinct, every other pair is compared exactly."""
    V = Interval(np.hstack([N.m[idx], H.m[idx, None]]), np.hstack([N.r[idx], H.r[idx, None]]))
    q = len(idx)
    open_pairs = ~np.eye(q, dtype=bool)
    iu, ju = np.nonzero(np.triu(open_pairs))     # the pairs i < j still open
    for a in range(k + 1 if not exact_node else 0):
        for b in range(a + 1, k + 1):
            if len(iu) == 0:
                break
            va, vb = V[:, a], V[:, b]
            minor = va[iu] * vb[ju] - vb[iu] * va[ju]
            keep = minor.sign() == 0                # a nonzero 2 × 2 minor: the pair is distinct
            iu, ju = iu[keep], ju[keep]
    open_pairs[:] = False
    open_pairs[iu, ju] = open_pairs[ju, iu] = True
    if not open_pairs.any():
        return [[(int(j), 1)] for j in idx]
    group_of = -np.ones(q, int)
    groups = []
    for i in range(q):
        if group_of[i] >= 0:
            continue
        group_of[i] = len(groups)
        grp = [(int(idx[i]), 1)]
        vi = None
        for j in np.flatnonzero(open_pairs[i, i + 1:]) + i + 1:
            if group_of[j] >= 0:
                continue
            if vi is None:
                ni, hi = exact_nh(int(idx[i]))
                vi = (*ni, hi)
            nj, hj = exact_nh(int(idx[j]))
            vj = (*nj, hj)
            p = next(t for t in range(k + 1) if vi[t] != 0)
            if vj[p] == 0:
                continue
            lam = vj[p] / vi[p]
            if all(vj[t] == lam * vi[t] for t in range(k + 1)):
                group_of[j] = group_of[i]
                grp.append((int(idx[j]), 1 if lam > 0 else -1))
        groups.append(grp)
    return groups


# ------------------------------------------------------------------------------------------ lines
def line_cells(meets, N, H, const, exact_nh, exact_node):
    """Cells on G lines x = c + y a at once: the points y_gj = −h_gj/n_gj inside the domain, ordered and
    merged exactly.

    meets, const (G, m) bool; N, H (G, m) enclosures of n_gj, h_gj; ``exact_nh(g, j)``; exact_node (G,):
    lines decided exactly. Returns (rows, owner): the patterns of the cells of all lines (T, ⌈m/8⌉) packed
    as by ``np.packbits(axis=1)``, line after line and in the order of y along each, and owner (T,), the
    line of each row."""
    G, m = meets.shape
    sgn_n = N.sign()
    # lines the filter orders: no exact flag and every crossing hyperplane's n of certain sign
    simple = ~exact_node & ~np.any(meets & (sgn_n == 0), axis=1)
    ranks = np.full((G, m), -1, np.int32)
    use = meets & simple[:, None]
    if use.any():
        safe = Interval(np.where(use, N.m, 1.0), np.where(use, N.r, 0.0))
        ranks[:] = rank_points(-(H / safe), use, exact_nh)
    for g in np.flatnonzero(~simple):
        idx = np.flatnonzero(meets[g])
        if len(idx) == 0:
            continue
        sg = np.array([E.sgn(exact_nh(g, j)[0][0]) for j in idx], np.int8)
        sgn_n[g, idx] = sg
        ex = [-exact_nh(g, j)[1] / exact_nh(g, j)[0][0] for j in idx]
        vals = sorted(set(ex))
        pos = {v: r for r, v in enumerate(vals)}
        ranks[g, idx] = [pos[v] for v in ex]
    # row t of line g is the pattern on the t-th interval of y: it starts (t = 0, below every point) with
    # the columns whose n is negative on and flips, at each point, the columns through it. Built packed:
    # each row is the XOR of its predecessor and the flips at its point.
    nb = -(-m // 8)
    P = ranks.max(axis=1) + 1                     # points per line (0: the line crosses nothing)
    counts = P + 1
    start = np.r_[0, np.cumsum(counts)[:-1]]
    T = int(counts.sum())
    base = np.packbits(np.where(meets, sgn_n < 0, const), axis=1)      # (G, nb)
    end = base ^ np.packbits(meets, axis=1)       # the last row: every crossing column flipped once
    D = np.zeros((T, nb), np.uint8)
    D[start] = base
    D[start[1:]] ^= end[:-1]                      # undo the previous line's accumulated XOR
    g_idx, j_idx = np.nonzero(meets)
    flat = (start[g_idx] + 1 + ranks[g_idx, j_idx]) * nb + (j_idx >> 3)
    bits = np.bincount(flat, weights=(0x80 >> (j_idx & 7)).astype(np.float64), minlength=T * nb)
    D ^= bits.astype(np.uint8).reshape(T, nb)     # distinct columns are distinct bits: their sum is their OR
    rows = np.bitwise_xor.accumulate(D, axis=0)
    return rows, np.repeat(np.arange(G), counts)


def rank_points(Y: Interval, mask, exact_nh):
    """Dense ranks (G, m) of the points Y (G, m) of each line where ``mask`` (equal points share a rank, −1
    off the mask), certified by the filter, or exactly (``exact_nh(g, j)``) inside a cluster it cannot split."""
    G, m = mask.shape
    order = np.lexsort((np.where(mask, Y.m, 0.0), ~mask), axis=1)   # the points first, by midpoint (stable)
    lo = np.take_along_axis(np.where(mask, Y.lo(), np.inf), order, 1)
    hi = np.take_along_axis(np.where(mask, Y.hi(), np.inf), order, 1)
    cnt = mask.sum(axis=1)
    live = np.arange(m - 1)[None, :] < (cnt - 1)[:, None]      # adjacent pairs of points on the line
    sep = lo[:, 1:] > hi[:, :-1]
    srt = np.zeros((G, m), np.int32)
    srt[:, 1:] = np.cumsum(sep & live, axis=1)
    for g in np.flatnonzero(np.any(live & ~sep, axis=1)):  # a cluster: order it exactly
        o = order[g, :cnt[g]]
        r, t, n = 0, 0, int(cnt[g])
        while t < n:
            u = t
            while u + 1 < n and not sep[g, u]:
                u += 1
            if u == t:
                srt[g, t] = r
                r += 1
            else:
                ex = {t2: -exact_nh(g, o[t2])[1] / exact_nh(g, o[t2])[0][0] for t2 in range(t, u + 1)}
                vals = sorted(set(ex.values()))
                for t2 in range(t, u + 1):
                    srt[g, t2] = r + vals.index(ex[t2])
                r += len(vals)
            t = u + 1
    ranks = np.full((G, m), -1, np.int32)
    np.put_along_axis(ranks, order, srt, 1)
    ranks[~mask] = -1
    return ranks


# ------------------------------------------------------------------------------------------ recursion
def _chunks(G, m):
    step = max(1, CHUNK // max(m, 1))
    return [(s, min(G, s + step)) for s in range(0, G, step)]


def _level(ctx, S_list, A, c, paths):
    """Decide one level of flats and return (rows, off, children) — for every flat g either its rows
    (packed, ``rows[off[g]:off[g+1]]``; lines and flats no hyperplane crosses) or its children: the
    list of (child index in the next level, group) with the next level's (S, A, c, path) lists."""
    G, k = A.shape[0], A.shape[1]
    m = ctx.m
    leaf_rows: dict = {}
    next_S, next_paths, next_index = [], [], {}
    pend_parent, pend_nm, pend_nr, pend_hm, pend_hr, pend_p = [], [], [], [], [], []
    children: dict = {}
    for s0, s1 in _chunks(G, m):
        ex = _Exact(ctx, paths[s0:s1])
        Ab, cb = A[s0:s1], c[s0:s1]
        N, H, _, meets, const, exact_node = _decide_level(ctx, S_list[s0:s1], Ab, cb, ex)
        has = meets.any(axis=1)
        if k == 1:
            packed, owner = line_cells(meets, N[:, :, 0], H, const, ex.nh, exact_node)
            bounds = np.searchsorted(owner, np.arange(s1 - s0 + 1))
            for g in range(s1 - s0):
                leaf_rows[s0 + g] = packed[bounds[g]:bounds[g + 1]]
            ctx.check()
            continue
        for g in np.flatnonzero(~has):
            leaf_rows[s0 + int(g)] = pack_rows(const[g][None, :])
        for g in np.flatnonzero(has):
            gg = s0 + int(g)
            idx = np.flatnonzero(meets[g])
            groups = _coincidence_groups(idx, N[g], H[g], ex.bound(g), k, bool(exact_node[g]))
            reps = np.array([grp[0][0] for grp in groups])
            p = np.argmax(np.abs(N.m[g][reps]), axis=1)
            reps_l, p_l = reps.tolist(), p.tolist()
            pos = ctx.unit_mask[reps]                # a group's first member has orientation +1
            neg = np.zeros_like(pos)
            cis = np.empty(len(groups), np.int64)
            Sg, pg = S_list[gg], paths[gg]
            new = []
            for gi, grp in enumerate(groups):
                if len(grp) == 1:
                    S2 = Sg | {reps_l[gi]}
                else:
                    S2 = Sg | frozenset(j for j, _ in grp)
                    pos[gi] = np.bitwise_or.reduce(ctx.unit_mask[[j for j, o in grp if o > 0]], axis=0)
                    on_neg = [j for j, o in grp if o < 0]
                    if on_neg:
                        neg[gi] = np.bitwise_or.reduce(ctx.unit_mask[on_neg], axis=0)
                ci = next_index.get(S2)
                if ci is None:  # first reached here: this path gives the flat its parametrisation
                    ci = next_index[S2] = len(next_S)
                    next_S.append(S2)
                    next_paths.append(pg + ((reps_l[gi], p_l[gi]),))
                    new.append(gi)
                cis[gi] = ci
            if new:
                rn = reps[new]
                pend_parent.append(np.full(len(new), gg))
                pend_nm.append(N.m[g][rn])
                pend_nr.append(N.r[g][rn])
                pend_hm.append(H.m[g][rn])
                pend_hr.append(H.r[g][rn])
                pend_p.append(p[new])
            children[gg] = (cis, pos, neg)
        ctx.check()
    if next_S:
        par = np.concatenate(pend_parent)
        pA, pc = A[par], c[par]
        n = Interval(np.concatenate(pend_nm), np.concatenate(pend_nr))
        h = Interval(np.concatenate(pend_hm), np.concatenate(pend_hr))
        pp = np.concatenate(pend_p)
        try:
            A2, c2 = _sub_flats_iv(pA, pc, n, h, pp)
        except Undecided:  # per parent flat; where even that fails, the same formulas in exact arithmetic
            A2m = np.zeros((len(par), k - 1, A.shape[2]))
            A2r, c2m, c2r = np.zeros_like(A2m), np.zeros((len(par), A.shape[2])), np.zeros((len(par), A.shape[2]))
            for gg in np.unique(par):
                sel = np.flatnonzero(par == gg)
                try:
                    a2, cc = _sub_flats_iv(pA[sel], pc[sel], n[sel], h[sel], pp[sel])
                except Undecided:
                    a2, cc = _sub_flats_from_exact(ctx, [next_paths[i] for i in sel])
                A2m[sel], A2r[sel], c2m[sel], c2r[sel] = a2.m, a2.r, cc.m, cc.r
            A2, c2 = Interval(A2m, A2r), Interval(c2m, c2r)
    else:
        A2 = c2 = None
    return leaf_rows, children, (next_S, A2, c2, next_paths)


def _assemble(kids, rows_of, nb):
    """A flat's rows from its children's: each group's two sides, in group order (packed, not deduplicated)."""
    cis, pos, neg = kids
    blocks = [rows_of(int(ci)) for ci in cis]
    lens = np.repeat([len(b) for b in blocks], 2)
    P = np.vstack([b for b in blocks for _ in (0, 1)])
    return P | np.repeat(np.stack([pos, neg], axis=1).reshape(-1, nb), lens, axis=0)


def arrangement_rows(ctx, A0: Interval):
    """The packed patterns of the cells meeting the open ball, in the order of the facet recursion
    (with repetitions: a cell is found through each of its facets)."""
    nb = -(-ctx.m // 8)
    levels = []
    S_list, A, c, paths = [frozenset()], A0.reshape(1, *A0.shape), Interval(np.zeros((1, ctx.d))), [()]
    while S_list:
        ctx.tick(len(S_list))
        leaf_rows, children, nxt = _level(ctx, S_list, A, c, paths)
        levels.append((leaf_rows, children))
        S_list, A, c, paths = nxt
    # bottom up: a flat's rows are its children's two sides, deduplicated (except at the root)
    below: dict = {}
    for depth in range(len(levels) - 1, -1, -1):
        leaf_rows, children = levels[depth]
        cur = dict(leaf_rows)
        for g, kids in children.items():
            P = _assemble(kids, below.__getitem__, nb)
            cur[g] = P if depth == 0 else P[first_unique(P)]
        below = cur
        ctx.check()
    return below[0]


def ball_cells(Wq, bq, R, *, time_limit=None, max_nodes=10**7, progress=None) -> tuple[np.ndarray, int]:
    """The activation patterns of every cell of the arrangement {w_j·x + b_j = 0} that meets the open ball B_R
    (rational w_j, b_j; every decision certified), packed with ``np.packbits`` (one row per cell, bit j = unit j
    active), distinct and in the order found; and the number of flats visited. :class:`BudgetExceeded` past the
    limits."""
    R = Fraction(R)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    ctx = _Ctx(list(Wq), list(bq), R * R, deadline, max_nodes, progress)
    A0 = ctx.exact_params[()][0]
    packed = arrangement_rows(ctx, from_fractions([list(col) for col in A0]))
    return packed[first_unique(packed)], ctx.nodes


def lipschitz_ball(Wq, bq, aq, vq, R, *, time_limit=None, max_nodes=10**7, progress=None) -> BallResult:
    """Exact Lip on B_R of v·x + Σ_j a_j ReLU(w_j·x + b_j) (rational canonical form)."""
    R = Fraction(R)
    vq = tuple(vq)
    m = len(Wq)
    if m == 0:
        return BallResult(E.dot(vq, vq), (), 1, 0)
    packed, nodes = ball_cells(Wq, bq, R, time_limit=time_limit, max_nodes=max_nodes, progress=progress)
    Aq = [E.scale(a, w) for a, w in zip(aq, Wq, strict=True)]
    Aiv, viv = from_fractions([list(x) for x in Aq]), from_fractions(list(vq))
    # candidates for the maximum of ‖g‖² (g = v + Σ σ_j a_j w_j): enclosures first, then exact among the rest
    lo_all, hi_all = np.empty(len(packed)), np.empty(len(packed))
    step = max(1, CHUNK // m)
    for s in range(0, len(packed), step):
        rows = np.unpackbits(packed[s:s + step], axis=1, count=m).astype(np.float64)
        G = matmul(Interval(rows), Aiv) + viv.reshape(1, -1)
        gg = (G * G).sum(axis=1)
        lo_all[s:s + step], hi_all[s:s + step] = gg.lo(), gg.hi()
    cand = np.flatnonzero(hi_all >= lo_all.max())
    best = None
    for i in cand:
        row = np.unpackbits(packed[i], count=m).astype(bool)
        g = list(vq)
        for j in np.flatnonzero(row):
            g = [x + y for x, y in zip(g, Aq[j], strict=True)]
        v2 = E.dot(g, g)
        if best is None or v2 > best[0]:
            best = (v2, row)
    return BallResult(best[0], tuple(bool(x) for x in best[1]), len(packed), nodes)
