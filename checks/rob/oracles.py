r"""Independent oracles for Lipschitz constants of two-layer ReLU nets (SPEC §3, §4).

A net is ``(W, b, a, v, c)`` with ``f(x) = Σ_k a_k ReLU(W_k·x + b_k) + v·x + c``, W of shape (m, d).
On the open cell with sign pattern σ (σ_k = 1 iff W_k·x + b_k > 0) the gradient is
``g_σ = v + Σ_k σ_k a_k W_k``.

These oracles share no code with the arrangement code they judge (``numerics.rob``, the rob claim
modules …): they import only numpy, cvxpy, the standard library and their two tolerances from
:mod:`checks.evidence.tol`, and they reach their answers by different routes. This is the one copy of each:

* :func:`ball_brute_force` — enumerates *all* 2^m sign patterns and decides for each, by an SOCP
  plus an exact rational witness (or an exact emptiness certificate), whether its open cell meets
  the open ball. No arrangement, no adjacency, no canonical form. The value is exact (a Fraction)
  over the accepted patterns; patterns it cannot decide are *counted*, never guessed.
* :func:`sphere_probe` — a float64 LOWER bound on S² (d = 3): two-sided probes along each kink
  circle, probes along the great circles g^⊥ of the best gradients, random points, then local
  zoom refinement along the circle parameter. Every value reported is the tangential gradient norm
  at a concrete float point whose pattern is evaluated at that point (points within
  ``TOL["rob_probe_kink_margin"]`` of a kink are discarded), so it is a genuine value of the function's
  gradient: a lower bound only.
* :func:`sphere_sample` — the author's method: uniform sampling on S^{d-1}, any d; a lower bound.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from checks.evidence.tol import TOL

__all__ = ["BruteForce", "Probe", "ball_brute_force", "sphere_probe", "sphere_sample"]


# --------------------------------------------------------------------------------- input helpers
def _frac(x, what="entry") -> Fraction:
    """Exact rational value of an int / float (binary rational) / Fraction / SymPy Rational or Float."""
    if isinstance(x, bool):
        return Fraction(int(x))
    if isinstance(x, Fraction):
        return x
    mod = type(x).__module__ or ""
    if mod.startswith("sympy"):
        import sympy as sp

        if isinstance(x, sp.Float):
            x = sp.Rational(x)
        if isinstance(x, sp.Rational):
            return Fraction(int(x.p), int(x.q))
        raise ValueError(f"{what} must be rational, got {x}")
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    if isinstance(x, numbers.Real):
        xf = float(x)
        if not math.isfinite(xf):
            raise ValueError(f"{what} is not finite: {x}")
        return Fraction(xf)
    raise ValueError(f"{what}: unsupported type {type(x).__name__}")


def _exact_net(net):
    W, b, a, v, c = net
    v = [_frac(x, "v") for x in v]
    d = len(v)
    W = [[_frac(x, "W") for x in row] for row in W]
    if any(len(r) != d for r in W):
        raise ValueError("W rows must have length d = len(v)")
    b = [_frac(x, "b") for x in b]
    a = [_frac(x, "a") for x in a]
    if not (len(b) == len(a) == len(W)):
        raise ValueError("W, b, a must have the same number of units")
    return W, b, a, v, _frac(c, "c"), d


def _float_net(net):
    W, b, a, v, c = net
    v = np.array([float(x) for x in v], dtype=float)
    d = v.size
    W = np.array([[float(x) for x in row] for row in W], dtype=float).reshape(-1, d)
    b = np.array([float(x) for x in b], dtype=float)
    a = np.array([float(x) for x in a], dtype=float)
    if not (b.size == a.size == W.shape[0]):
        raise ValueError("W, b, a must have the same number of units")
    for arr in (W, b, a, v):
        if not np.all(np.isfinite(arr)):
            raise ValueError("net entries must be finite")
    return W, b, a, v, float(c), d


# ------------------------------------------------------------------------------- ball brute force
@dataclass
class BruteForce:
    """Result of :func:`ball_brute_force`.

    value2        exact max ‖g_σ‖² (Fraction) over accepted patterns (cells proved to meet the open ball)
    value         float sqrt(value2)
    pattern       argmax pattern (tuple of 0/1 over all m units)
    cells         number of accepted patterns
    unresolved    number of patterns neither proved to meet the ball nor proved/numerically shown empty
    patterns      the accepted patterns
    witnesses     pattern -> exact rational point of the open cell inside the open ball
    certified_empty  patterns proved empty by an exact rational Farkas-type certificate
    rejected      patterns rejected numerically only (SOCP optimum δ* < −tol, no exact certificate found)
    unresolved_patterns  the unresolved patterns
    """

    value2: Fraction
    value: float
    pattern: tuple
    cells: int
    unresolved: int
    patterns: list = field(default_factory=list)
    witnesses: dict = field(default_factory=dict)
    certified_empty: int = 0
    rejected: int = 0
    unresolved_patterns: list = field(default_factory=list)


def _in_cell(x, W, b, s, R2) -> bool:
    if sum(xi * xi for xi in x) >= R2:
        return False
    for wk, bk, sk in zip(W, b, s, strict=False):
        z = sum(wi * xi for wi, xi in zip(wk, x, strict=False)) + bk
        if sk * z <= 0:
            return False
    return True


def _exact_nullspace(M):
    """Basis of the right nullspace of a rational matrix (list of rows), by exact Gauss–Jordan."""
    rows = [list(r) for r in M]
    ncol = len(rows[0]) if rows else 0
    piv_cols = []
    r = 0
    for col in range(ncol):
        pr = next((i for i in range(r, len(rows)) if rows[i][col] != 0), None)
        if pr is None:
            continue
        rows[r], rows[pr] = rows[pr], rows[r]
        pv = rows[r][col]
        rows[r] = [x / pv for x in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][col] != 0:
                f = rows[i][col]
                rows[i] = [x - f * y for x, y in zip(rows[i], rows[r], strict=False)]
        piv_cols.append(col)
        r += 1
        if r == len(rows):
            break
    free = [j for j in range(ncol) if j not in piv_cols]
    basis = []
    for fj in free:
        vec = [Fraction(0)] * ncol
        vec[fj] = Fraction(1)
        for i, pc in enumerate(piv_cols):
            vec[pc] = -rows[i][fj]
        basis.append(vec)
    return basis


def _check_certificate(mu, W, b, s, R2, d) -> bool:
    """Exact check of: μ ≥ 0, μ ≠ 0, R‖Σ μ_k s_k W_k‖ ≤ −Σ μ_k s_k b_k.

    If it holds, every x of the open ball has Σ μ_k s_k (W_k·x + b_k) ≤ 0, which is impossible in the
    open cell (there every term is > 0 and some μ_k > 0): the cell misses the open ball.
    """
    if any(x < 0 for x in mu) or all(x == 0 for x in mu):
        return False
    g = [sum(mu[k] * s[k] * W[k][i] for k in range(len(mu))) for i in range(d)]
    h = -sum(mu[k] * s[k] * b[k] for k in range(len(mu)))
    if h < 0:
        return False
    return R2 * sum(x * x for x in g) <= h * h


def _try_certificate(lam, W, b, s, R2, d, norms) -> bool:
    m = len(W)
    lam = np.maximum(np.asarray(lam, dtype=float), 0.0) / np.asarray(norms)
    if not np.all(np.isfinite(lam)) or lam.max() <= 0:
        return False
    lam = lam / lam.max()
    # (a) plain rounding (works when the emptiness has slack)
    for den in (10**6, 10**9, 10**12):
        mu = [Fraction(float(x)).limit_denominator(den) for x in lam]
        if _check_certificate(mu, W, b, s, R2, d):
            return True
    # (b) exact nullspace of the supported rows (degenerate, tight emptiness: Σ μ s W = 0 exactly)
    S = [k for k in range(m) if lam[k] > 1e-7]
    if not S:
        return False
    M = [[s[k] * W[k][i] for k in S] for i in range(d)]
    basis = _exact_nullspace(M) if any(any(x != 0 for x in r) for r in M) else [
        [Fraction(int(j == i)) for j in range(len(S))] for i in range(len(S))
    ]
    if not basis:
        return False
    Bf = np.array([[float(x) for x in vec] for vec in basis]).T  # |S| × r
    coef, *_ = np.linalg.lstsq(Bf, lam[S], rcond=None)
    for den in (10**3, 10**6, 10**9):
        cq = [Fraction(float(x)).limit_denominator(den) for x in coef]
        muS = [sum(cq[j] * basis[j][i] for j in range(len(basis))) for i in range(len(S))]
        mu = [Fraction(0)] * m
        for i, k in enumerate(S):
            mu[k] = muS[i]
        if _check_certificate(mu, W, b, s, R2, d):
            return True
    return False


def ball_brute_force(net, R, *, max_units: int = 12, reject_tol: float | None = None) -> BruteForce:
    """Exact Lip_{B_R}(f) by brute force over all 2^m sign patterns (m ≤ ``max_units``).

    For each pattern s ∈ {±1}^m (zero rows W_k = 0 are dropped: they add nothing to the gradient) the
    SOCP (CLARABEL, coordinates scaled by R, rows normalised)

        maximise δ  s.t.  s_k (u_k·y − t_k/R) ≥ δ,  ‖y‖ ≤ 1 − δ    (u_k = W_k/‖W_k‖, t_k = −b_k/‖W_k‖)

    is solved. The pattern is **accepted** only if an exact rational point satisfies every
    s_k(W_k·x + b_k) > 0 and ‖x‖² < R² in Fractions. Candidates: the solver's point (the Chebyshev
    centre, as an exact binary rational), the same pulled toward the origin, and — for thin cells —
    up to three rounds of a local re-solve around it in coordinates magnified by 1/σ (σ ≈ 10³|δ*|,
    at least 1e-8) whose constants s_k(W_k·x0 + b_k) are computed exactly, so cells far thinner than
    the solver's tolerance still get witnesses (the ball is not in the local problem; the exact check
    enforces it). Otherwise an exact emptiness certificate is tried from the SOCP duals (μ ≥ 0,
    R‖Σ μ_k s_k W_k‖ ≤ −Σ μ_k s_k b_k in Fractions, with an exact-nullspace variant for tight
    degenerate cases such as several planes through one point). A pattern with neither is counted in
    ``rejected`` if δ* < −reject_tol (numerically empty with a margin ~100× the solver's accuracy),
    else in ``unresolved`` — in particular every δ* > 0 pattern without an exact witness.

    ``value2`` is the exact max ‖g_σ‖² over accepted patterns. Duplicate and parallel hyperplanes
    are fine. Raises ``ValueError`` if m > max_units or R ≤ 0. ``reject_tol`` defaults to
    ``TOL["rob_socp_reject"]``.
    """
    import cvxpy as cp

    if reject_tol is None:
        reject_tol = TOL["rob_socp_reject"]

    W, b, a, v, _c, d = _exact_net(net)
    m = len(W)
    if m > max_units:
        raise ValueError(f"ball_brute_force: m = {m} units > max_units = {max_units} (2^m SOCPs)")
    Rq = _frac(R, "R")
    if Rq <= 0:
        raise ValueError("R must be > 0")
    R2 = Rq * Rq
    Rf = float(Rq)
    act = [k for k in range(m) if any(x != 0 for x in W[k])]
    Wa = [W[k] for k in act]
    ba = [b[k] for k in act]
    ma = len(act)
    fixed = {k: int(b[k] > 0) for k in range(m) if k not in act}

    def full_pattern(s):
        pat = [0] * m
        for i, k in enumerate(act):
            pat[k] = int(s[i] > 0)
        for k, val in fixed.items():
            pat[k] = val
        return tuple(pat)

    def grad2(pat):
        g = [v[i] + sum(a[k] * W[k][i] for k in range(m) if pat[k]) for i in range(d)]
        return sum(x * x for x in g)

    res = BruteForce(value2=Fraction(-1), value=float("nan"), pattern=(), cells=0, unresolved=0)

    def accept(s, x):
        pat = full_pattern(s)
        res.patterns.append(pat)
        res.witnesses[pat] = tuple(x)
        g2 = grad2(pat)
        if g2 > res.value2:
            res.value2, res.pattern = g2, pat

    if ma == 0:
        accept((), [Fraction(0)] * d)
    else:
        Wf = np.array([[float(x) for x in r] for r in Wa])
        bf = np.array([float(x) for x in ba])
        norms = np.linalg.norm(Wf, axis=1)
        U = Wf / norms[:, None]
        tR = -bf / norms / Rf
        y = cp.Variable(d)
        delta = cp.Variable()
        sgn = cp.Parameter(ma)
        lin = cp.multiply(sgn, U @ y - tR) >= delta
        prob = cp.Problem(cp.Maximize(delta), [lin, cp.norm(y, 2) <= 1 - delta])
        # local refinement (thin cells): around x0, maximise δ s.t. s_k u_k·ζ + r_k/σ ≥ δ, ‖ζ‖ ≤ 1, where
        # r_k = s_k(W_k·x0 + b_k)/(‖W_k‖ R) is computed exactly, so accuracy is relative to the scale σ
        zeta = cp.Variable(d)
        dl = cp.Variable()
        rpar = cp.Parameter(ma)
        sgn2 = cp.Parameter(ma)
        prob2 = cp.Problem(cp.Maximize(dl), [cp.multiply(sgn2, U @ zeta) + rpar >= dl, cp.norm(zeta, 2) <= 1])

        def _local_witness(x0f, dstar, s):
            x0 = [Fraction(float(t)) for t in x0f]
            sig = max(1e3 * abs(dstar), 1e-8)
            for _round in range(3):
                r = [
                    float(s[k] * (sum(wi * xi for wi, xi in zip(Wa[k], x0, strict=False)) + ba[k])) / (norms[k] * Rf)
                    for k in range(ma)
                ]
                sgn2.value = np.array(s, dtype=float)
                rpar.value = np.array(r) / sig
                try:
                    prob2.solve(solver=cp.CLARABEL)
                except cp.error.SolverError:
                    return None
                if zeta.value is None or dl.value is None:
                    return None
                step = np.asarray(zeta.value, dtype=float) * sig * Rf
                x1 = [xi + Fraction(float(t)) for xi, t in zip(x0, step, strict=False)]
                if _in_cell(x1, Wa, ba, s, R2):
                    return x1
                if float(dl.value) < -1e-6:
                    return None
                x0, sig = x1, max(1e3 * abs(float(dl.value)) * sig, sig * 1e-6)
            return None

        for s in itertools.product((1, -1), repeat=ma):
            sgn.value = np.array(s, dtype=float)
            try:
                prob.solve(solver=cp.CLARABEL)
                dstar = float(delta.value) if delta.value is not None else float("nan")
                ystar = None if y.value is None else np.array(y.value, dtype=float)
                lam = lin.dual_value
            except cp.error.SolverError:
                dstar, ystar, lam = float("nan"), None, None
            found = None
            if ystar is not None and np.all(np.isfinite(ystar)):
                xstar = ystar * Rf
                for shrink in (0.0, 1e-12, 1e-9, 1e-6, 1e-3):
                    cand = [Fraction(float(xi * (1 - shrink))) for xi in xstar]
                    if _in_cell(cand, Wa, ba, s, R2):
                        found = cand
                        break
            if found is None and ystar is not None and np.all(np.isfinite(ystar)) and dstar > -reject_tol:
                found = _local_witness(ystar * Rf, dstar, s)
            if found is not None:
                accept(s, found)
                continue
            if lam is not None and _try_certificate(lam, Wa, ba, s, R2, d, norms):
                res.certified_empty += 1
            elif math.isfinite(dstar) and dstar < -reject_tol:
                res.rejected += 1
            else:
                res.unresolved += 1
                res.unresolved_patterns.append(full_pattern(s))
    res.cells = len(res.patterns)
    if res.cells:
        res.value = math.sqrt(res.value2)
    return res


# --------------------------------------------------------------------------------- sphere oracles
@dataclass
class Probe:
    """A float64 LOWER bound on Lip_{S^{d-1}}(f): ``value`` is attained at ``point`` (off the kinks)."""

    value: float
    point: np.ndarray
    evaluations: int = 0


_KINK_MARGIN = TOL["rob_probe_kink_margin"]


def _tangential(X, W, b, a, v):
    """Tangential gradient norms at the rows of X (unit vectors); NaN where a kink is within the margin."""
    Z = X @ W.T + b if W.size else np.zeros((X.shape[0], 0))
    scale = np.linalg.norm(W, axis=1) if W.size else np.zeros(0)
    S = (Z > 0).astype(float)
    G = v + (S * a) @ W if W.size else np.broadcast_to(v, X.shape)
    gx = np.einsum("ij,ij->i", G, X)
    t2 = np.einsum("ij,ij->i", G, G) - gx * gx
    val = np.sqrt(np.maximum(t2, 0.0))
    if W.size:
        near = np.any(np.abs(Z) <= _KINK_MARGIN * np.maximum(scale, 1e-300), axis=1)
        val[near] = np.nan
    return val


class _Best:
    def __init__(self):
        self.value, self.point, self.n = -np.inf, None, 0

    def update(self, X, vals):
        self.n += len(vals)
        if len(vals) == 0 or np.all(np.isnan(vals)):
            return
        i = int(np.nanargmax(vals))
        if vals[i] > self.value:
            self.value, self.point = float(vals[i]), X[i].copy()


def _frame(u):
    """Two unit vectors completing u (unit, in R³) to an orthonormal basis."""
    e = np.eye(3)[int(np.argmin(np.abs(u)))]
    e1 = e - (e @ u) * u
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(u, e1)


def _circle_points(u, t, th):
    r = math.sqrt(max(1.0 - t * t, 0.0))
    e1, e2 = _frame(u)
    return t * u + r * (np.cos(th)[:, None] * e1 + np.sin(th)[:, None] * e2)


def _offset(Xc, u, eps, side):
    """Points at geodesic distance eps from Xc (on the circle u·x = t) along ±(projection of u)."""
    n = u - (Xc @ u)[:, None] * Xc
    n /= np.linalg.norm(n, axis=1)[:, None]
    Y = math.cos(eps) * Xc + side * math.sin(eps) * n
    return Y / np.linalg.norm(Y, axis=1)[:, None]


def sphere_probe(net, *, per_circle: int = 2000, refine: bool = True, seed: int = 0,
                 offsets=(1e-9, 1e-7, 1e-5, 1e-3), n_random: int = 20000, top: int = 8) -> Probe:
    """Float64 LOWER bound on the geodesic Lip_{S²}(f), d = 3, by dense two-sided kink probes.

    Probes: for every unit whose hyperplane meets S² in a circle (|t_k| < 1), ``per_circle`` points on
    the circle and, at each, points on both sides at each geodesic offset in ``offsets``; great
    circles g^⊥ of the best gradients found (where |g·x| = 0, the tangential norm is ‖g‖); ``n_random``
    uniform points. With ``refine``, the best ``top`` (circle, side, offset) probes are refined by
    repeated zooming along the circle parameter (41-point grids shrinking ×10 per level, 7 levels).
    Every value is the tangential norm √(‖g‖² − (g·x)²) at a float point, with the pattern evaluated
    at that point (points within ``TOL["rob_probe_kink_margin"]``·‖W_k‖ of a kink are skipped): a lower
    bound only, from no arrangement code.
    """
    W, b, a, v, _c, d = _float_net(net)
    if d != 3:
        raise ValueError("sphere_probe works on S² (d = 3); use sphere_sample for other d")
    rng = np.random.default_rng(seed)
    best = _Best()
    X = rng.standard_normal((n_random, 3))
    X /= np.linalg.norm(X, axis=1)[:, None]
    best.update(X, _tangential(X, W, b, a, v))
    # the g = v direction (no unit active) and every single pattern seen so far are probed below
    circles = []
    for k in range(W.shape[0]):
        nk = np.linalg.norm(W[k])
        if nk == 0:
            continue
        u, t = W[k] / nk, -b[k] / nk
        if abs(t) < 1:
            circles.append((u, t))
    th = np.linspace(0.0, 2 * np.pi, per_circle, endpoint=False) + rng.uniform(0, 2 * np.pi / per_circle)
    cands = []  # (value, circle index, side, eps, theta)
    for ci, (u, t) in enumerate(circles):
        Xc = _circle_points(u, t, th)
        for eps in offsets:
            for side in (1.0, -1.0):
                Y = _offset(Xc, u, eps, side)
                vals = _tangential(Y, W, b, a, v)
                best.update(Y, vals)
                if np.any(~np.isnan(vals)):
                    order = np.argsort(np.where(np.isnan(vals), -np.inf, vals))[::-1][:top]
                    cands.extend((float(vals[i]), ci, side, eps, float(th[i])) for i in order if not np.isnan(vals[i]))
    # great circles g^⊥ for the gradients of the best points so far (and for v)
    grads = [v]
    if best.point is not None and W.size:
        z = W @ best.point + b
        grads.append(v + ((z > 0) * a) @ W)
    for c in sorted(cands, reverse=True)[:top]:
        u, t = circles[c[1]]
        P = _offset(_circle_points(u, t, np.array([c[4]])), u, c[3], c[2])
        z = W @ P[0] + b
        grads.append(v + ((z > 0) * a) @ W)
    tg = np.linspace(0.0, 2 * np.pi, 4 * per_circle, endpoint=False)
    for g in grads:
        ng = np.linalg.norm(g)
        if ng > 0:
            P = _circle_points(g / ng, 0.0, tg)
            best.update(P, _tangential(P, W, b, a, v))
    if refine and cands:
        cands.sort(reverse=True)
        seen = set()
        h0 = 2 * np.pi / per_circle
        for _val, ci, side, eps, th0 in cands:
            key = (ci, side, eps, round(th0 / h0))
            if key in seen:
                continue
            seen.add(key)
            if len(seen) > 4 * top:
                break
            u, t = circles[ci]
            center, h = th0, 2 * h0
            for _level in range(7):
                grid = center + np.linspace(-h, h, 41)
                Y = _offset(_circle_points(u, t, grid), u, eps, side)
                vals = _tangential(Y, W, b, a, v)
                best.update(Y, vals)
                if np.all(np.isnan(vals)):
                    break
                center = float(grid[int(np.nanargmax(vals))])
                h /= 10.0
    return Probe(value=float(best.value), point=best.point, evaluations=best.n)


def sphere_sample(net, d: int, n: int = 200000, seed: int = 0, block: int = 20000) -> Probe:
    """Plain uniform-sampling LOWER bound on Lip_{S^{d-1}}(f) in any d (the author's method), in blocks."""
    W, b, a, v, _c, dd = _float_net(net)
    if dd != d:
        raise ValueError(f"net has d = {dd}, not {d}")
    rng = np.random.default_rng(seed)
    best = _Best()
    done = 0
    while done < n:
        k = min(block, n - done)
        X = rng.standard_normal((k, d))
        X /= np.linalg.norm(X, axis=1)[:, None]
        best.update(X, _tangential(X, W, b, a, v))
        done += k
    return Probe(value=float(best.value), point=best.point, evaluations=best.n)
