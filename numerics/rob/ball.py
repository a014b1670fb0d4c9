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
group whose members flip together, so degenerate arrangements give exactly their own cells. A node is
memoised by the set S of hyperplanes containing its flat, which visits every flat once (not once per
ordering: the old recursion took 11! steps for 11 units in d = 32).

Every decision (n_j = 0, meets the ellipsoid, coincidence, the order of points on a line) is made by the
float64 interval filter and, where it cannot decide, in exact rationals. Lip² is then the exact maximum of
the rational ‖g_σ‖² (compared exactly among the candidates the enclosures cannot separate).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from numerics.rob import exact as E
from numerics.rob.interval import Interval, Undecided, from_fractions, matmul

__all__ = ["lipschitz_ball", "BallResult", "ball_cells", "BudgetExceeded"]

F0, F1 = Fraction(0), Fraction(1)


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
        self.biv = from_fractions(list(bq)) if Wq else None
        self.R2iv = from_fractions([R2])[0]
        self.memo: dict = {}
        self.exact_params: dict = {(): (span_basis(Wq, self.d), tuple(F0 for _ in range(self.d)))}
        self.nodes = 0
        self.deadline, self.max_nodes, self.progress = deadline, max_nodes, progress
        self.last = time.perf_counter()

    def tick(self):
        self.nodes += 1
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
    """:func:`_sub_flat_exact` for G hyperplanes at once, in interval arithmetic: (A' (G,k−1,d), c' (G,d))."""
    G, k = n.shape
    M = (A * A).sum(axis=1)                                 # (k,)
    Mq = n.square() / M.reshape(1, k)
    q = Mq.sum(axis=1)                                      # (G,)
    ystar = -(h.reshape(G, 1) * n) / (M.reshape(1, k) * q.reshape(G, 1))
    c2 = matmul(ystar, A) + c.reshape(1, -1)
    keep = np.array([[e for e in range(k) if e != pg] for pg in p], int).reshape(G, k - 1)
    onehot = np.zeros((G, k - 1, k))
    onehot[np.arange(G)[:, None], np.arange(k - 1)[None, :], keep] = 1.0
    ne = Interval(np.take_along_axis(n.m, keep, 1), np.take_along_axis(n.r, keep, 1))     # (G, k−1)
    coef = n / (q.reshape(G, 1) * M.reshape(1, k))                                        # (G, k)
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


def ball_cells(ctx: _Ctx, S: frozenset, A: Interval, c: Interval, path: tuple, sink=None):
    """(patterns, G) of the cells of the arrangement on the flat x = c + A y (A: k × d, orthogonal rows ⊥ c)
    that meet the open ball: patterns N × m bool (entries in S are placeholders), G the enclosures of the
    partial gradients Σ_{j ∉ S} σ_j a_j w_j. At the root (``sink`` given) the blocks are handed to
    ``sink(rows, G)`` plane by plane instead of being collected, and None is returned."""
    hit = ctx.memo.get(S)
    if hit is not None and sink is None:
        return hit
    ctx.tick()
    m, k = ctx.m, A.shape[0]
    free = np.array([j not in S for j in range(m)], bool)
    M = (A * A).sum(axis=1)
    N = matmul(ctx.Wiv, A.T)                                      # m × k
    H = matmul(ctx.Wiv, c.reshape(-1, 1)).reshape(-1) + ctx.biv
    rho2 = ctx.R2iv - (c * c).sum()
    ex: dict = {}

    def exact_nh(j):
        if j not in ex:
            Ae, ce = ctx.exact_param(path)
            w = ctx.Wq[j]
            ex[j] = (tuple(E.dot(w, a) for a in Ae), E.dot(w, ce) + ctx.bq[j])
        return ex[j]

    def exact_rho2():
        Ae, ce = ctx.exact_param(path)
        return ctx.R2 - E.dot(ce, ce), [E.dot(a, a) for a in Ae]

    try:
        zero_n, meets, const = decide_iv(free, N, H, M, rho2, k, exact_nh, exact_rho2)
        exact_node = False
    except Undecided:  # an enclosure the filter cannot use (e.g. entries near the underflow range)
        zero_n, meets, const = _decide_exact(free, k, exact_nh, exact_rho2)
        exact_node = True
    idx = np.flatnonzero(meets)
    if len(idx) == 0 or k == 1:
        rows = const[None, :].copy() if len(idx) == 0 else line_cells(idx, N, H, const, exact_nh, m, exact_node)
        out = (rows, matmul(Interval(rows.astype(np.float64)), ctx.Aiv))
    else:
        groups = _coincidence_groups(idx, N, H, exact_nh, k, exact_node)
        reps = np.array([g[0][0] for g in groups])
        p = np.argmax(np.abs(N.m[reps]), axis=1)
        try:
            A2, c2 = _sub_flats_iv(A, c, N[reps], H[reps], p)
        except Undecided:  # the same formulas in exact arithmetic, then enclosed
            A2, c2 = _sub_flats_from_exact(ctx, path, reps, p)
        rows, Gs = [], []
        for gi, grp in enumerate(groups):
            S2 = S | frozenset(j for j, _ in grp)
            sub, Gsub = ball_cells(ctx, S2, A2[gi], c2[gi], path + ((int(reps[gi]), int(p[gi])),))
            for side in (True, False):
                blk = sub.copy()
                on = [j for j, orient in grp if (orient > 0) == side]
                for j, orient in grp:
                    blk[:, j] = (orient > 0) == side
                Gb = Gsub
                if on:
                    add = ctx.Aiv[np.array(on)].sum(axis=0)
                    Gb = Gsub + add.reshape(1, -1)
                if sink is not None:
                    sink(blk, Gb)
                else:
                    rows.append(blk)
                    Gs.append(Gb)
        if sink is not None:
            return None
        P = np.vstack(rows)
        first = _first_unique(P)  # the same cell is found through several of its facets
        out = (P[first], Interval(np.vstack([g.m for g in Gs])[first], np.vstack([g.r for g in Gs])[first]))
    if sink is not None:
        sink(*out)
        return None
    if len(S) >= 2:  # a flat with two or more hyperplanes is reached along several paths; a plane only once
        ctx.memo[S] = out
    return out


def decide_iv(free, N, H, M, rho2, k, exact_nh, exact_rho2):
    """Per hyperplane: n_j = 0 on the flat, meets the open ellipsoid, constant sign — filter, then exact."""
    m = len(free)
    nz_sure = (N.sign() != 0).any(axis=1)
    zero_n = np.zeros(m, bool)
    for j in np.flatnonzero(free & ~nz_sure):
        n, _ = exact_nh(j)
        zero_n[j] = all(x == 0 for x in n)
    # meets the open ellipsoid: ρ² Σ n_i²/M_i − h² > 0
    s = (N.square() / M.reshape(1, k)).sum(axis=1) * rho2 - H.square()
    ss = s.sign()
    meets = free & ~zero_n & (ss > 0)
    for j in np.flatnonzero(free & ~zero_n & (ss == 0)):
        n, h = exact_nh(j)
        r2, Me = exact_rho2()
        meets[j] = r2 * sum(n[i] * n[i] / Me[i] for i in range(k)) - h * h > 0
    sh = H.sign()  # the value at the centre y = 0 is h_j
    const = np.zeros(m, bool)
    for j in np.flatnonzero(free & ~meets):
        sg = int(sh[j])
        if sg == 0:
            sg = E.sgn(exact_nh(j)[1])
            if sg == 0:
                raise AssertionError("a hyperplane contains the flat but is not in its set")
        const[j] = sg > 0
    return zero_n, meets, const


def _decide_exact(free, k, exact_nh, exact_rho2):
    m = len(free)
    zero_n, meets, const = np.zeros(m, bool), np.zeros(m, bool), np.zeros(m, bool)
    r2, Me = exact_rho2()
    for j in np.flatnonzero(free):
        n, h = exact_nh(j)
        zero_n[j] = all(x == 0 for x in n)
        meets[j] = (not zero_n[j]) and r2 * sum(n[i] * n[i] / Me[i] for i in range(k)) - h * h > 0
        if not meets[j]:
            if h == 0:
                raise AssertionError("a hyperplane contains the flat but is not in its set")
            const[j] = h > 0
    return zero_n, meets, const


def _sub_flats_from_exact(ctx, path, reps, p):
    Ae, ce = ctx.exact_param(path)
    A2m, A2r, c2m, c2r = [], [], [], []
    for j, pj in zip(reps, p, strict=True):
        At, ct = ctx.exact_param(path + ((int(j), int(pj)),))
        a = from_fractions([list(col) for col in At])
        cc = from_fractions(list(ct))
        A2m.append(a.m)
        A2r.append(a.r)
        c2m.append(cc.m)
        c2r.append(cc.r)
    return Interval(np.stack(A2m), np.stack(A2r)), Interval(np.stack(c2m), np.stack(c2r))


def _coincidence_groups(idx, N, H, exact_nh, k, exact_node=False):
    """Group hyperplanes that coincide on the flat: (n_j, h_j) ∝ (n_l, h_l); orientation = sign of the ratio."""
    V = Interval(np.hstack([N.m[idx], H.m[idx, None]]), np.hstack([N.r[idx], H.r[idx, None]]))
    q = len(idx)
    distinct = np.zeros((q, q), bool)
    for a in range(k + 1 if not exact_node else 0):
        for b in range(a + 1, k + 1):
            minor = V[:, a].reshape(-1, 1) * V[:, b].reshape(1, -1) - V[:, b].reshape(-1, 1) * V[:, a].reshape(1, -1)
            distinct |= minor.sign() != 0
    group_of = -np.ones(q, int)
    groups = []
    for i in range(q):
        if group_of[i] >= 0:
            continue
        group_of[i] = len(groups)
        grp = [(int(idx[i]), 1)]
        vi = None
        for j in range(i + 1, q):
            if group_of[j] >= 0 or distinct[i, j]:
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


def line_cells(idx, N, H, const, exact_nh, m, exact_node=False):
    """Cells on a line x = c + y a: the points y_j = −h_j/n_j inside the domain, ordered and merged exactly."""
    n, h = N[idx, 0], H[idx]
    y = -(h / n) if (not exact_node and np.all(n.sign() != 0)) else None
    sgn_n = n.sign()
    if y is None or np.any(sgn_n == 0):
        sgn_n = np.array([E.sgn(exact_nh(int(j))[0][0]) for j in idx], np.int8)
        ex = [-exact_nh(int(j))[1] / exact_nh(int(j))[0][0] for j in idx]
        order = sorted(range(len(idx)), key=lambda i: ex[i])
        ranks, r = np.zeros(len(idx), int), -1
        for t, i in enumerate(order):
            if t == 0 or ex[i] != ex[order[t - 1]]:
                r += 1
            ranks[i] = r
    else:
        ranks = rank_points(y, idx, exact_nh)
    P = int(ranks.max()) + 1
    out = np.repeat(const[None, :], P + 1, axis=0)
    iv = np.arange(P + 1)[:, None]
    pos = sgn_n > 0
    act = np.where(pos[None, :], ranks[None, :] < iv, ranks[None, :] >= iv)
    out[:, idx] = act
    return out


def rank_points(y: Interval, idx, exact_nh):
    """Dense ranks of the points (equal points share a rank), certified by the filter or exactly."""
    order = np.argsort(y.m, kind="stable")
    lo, hi = y.lo()[order], y.hi()[order]
    sep = lo[1:] > hi[:-1]
    ranks = np.zeros(len(idx), int)
    r, t = 0, 0
    n = len(order)
    while t < n:
        u = t
        while u + 1 < n and not sep[u]:
            u += 1
        if u == t:
            ranks[order[t]] = r
            r += 1
        else:  # a cluster: order exactly
            members = order[t:u + 1]
            ex = {int(i): -exact_nh(int(idx[i]))[1] / exact_nh(int(idx[i]))[0][0] for i in members}
            vals = sorted(set(ex.values()))
            for i in members:
                ranks[i] = r + vals.index(ex[int(i)])
            r += len(vals)
        t = u + 1
    return ranks


def _first_unique_packed(packed: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each distinct row of a packbits array, in order."""
    packed = np.ascontiguousarray(packed)
    _, first = np.unique(packed.view(np.dtype((np.void, packed.shape[1]))).ravel(), return_index=True)
    return np.sort(first)


def _first_unique(P: np.ndarray) -> np.ndarray:
    return _first_unique_packed(np.packbits(P, axis=1))


def _unique_count(packed_blocks) -> int:
    return len(_first_unique_packed(np.vstack(packed_blocks))) if packed_blocks else 0


def lipschitz_ball(Wq, bq, aq, vq, R, *, time_limit=None, max_nodes=10**7, progress=None) -> BallResult:
    """Exact Lip on B_R of v·x + Σ_j a_j ReLU(w_j·x + b_j) (rational canonical form)."""
    d = len(vq)
    R = Fraction(R)
    vq = tuple(vq)
    m = len(Wq)
    if m == 0:
        return BallResult(E.dot(vq, vq), (), 1, 0)
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    ctx = _Ctx(list(Wq), list(bq), R * R, deadline, max_nodes, progress)
    Aq = [E.scale(a, w) for a, w in zip(aq, Wq, strict=True)]
    Aiv, viv = from_fractions([list(x) for x in Aq]), from_fractions(list(vq))
    state = {"lo": -np.inf, "keep": [], "packed": []}

    ctx.Aiv = Aiv

    def sink(rows, Gp):
        # stream the cells: keep only rows that may hold the maximum of ‖g‖² (G = partial sums + v)
        G = Gp + viv.reshape(1, -1)
        gg = (G * G).sum(axis=1)
        lo, hi = gg.lo(), gg.hi()
        state["lo"] = max(state["lo"], float(lo.max()))
        state["keep"] = [(h, r) for h, r in state["keep"] if h >= state["lo"]]
        for i in np.flatnonzero(hi >= state["lo"]):
            state["keep"].append((float(hi[i]), rows[i].copy()))
        state["packed"].append(np.packbits(rows, axis=1))

    A0 = ctx.exact_params[()][0]
    root = from_fractions([list(col) for col in A0])
    ball_cells(ctx, frozenset(), root, Interval(np.zeros(d)), (), sink=sink)
    best = None
    for h, row in state["keep"]:
        if h < state["lo"]:
            continue
        g = list(vq)
        for j in np.flatnonzero(row):
            g = [x + y for x, y in zip(g, Aq[j], strict=True)]
        v2 = E.dot(g, g)
        if best is None or v2 > best[0]:
            best = (v2, row)
    return BallResult(best[0], tuple(bool(x) for x in best[1]), _unique_count(state["packed"]), ctx.nodes)
