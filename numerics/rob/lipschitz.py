r"""Lipschitz constants of two-layer ReLU nets on a ball or a sphere: exact where possible, else certified.

:func:`lipschitz` canonicalises the net exactly (:mod:`numerics.rob.canonical`) and then, by an explicit
cost model:

========================  =================================================================================
domain                    method
========================  =================================================================================
S¹                        exact: kink points ordered exactly (:mod:`numerics.rob.circle`)
S^{d−1}, d ≥ 3, all kink  exact: the one-dimensional level-set reduction (:func:`_parallel_sphere`), when
normals ±u₀               ``parallel_reduction`` (the default); ``False`` sends these nets down the general path
S²                        exact: the small-circle arrangement (:mod:`numerics.rob.sphere2`), O(m²) circles ·
                          O(m) vertices, when m ≤ ``max_exact_units``
S^{d−1}, disjoint caps    exact closed form per cap, disjointness decided exactly (:mod:`numerics.rob.caps`)
S^{d−1}, d ≥ 4, sparsely  certified bracket over the cliques of the cap-overlap graph
overlapping caps          (:mod:`numerics.rob.cap_graph`), when they number ≤ ``max_cliques``; a bracket it
                          cannot close goes on to the branch and bound, and the two are intersected
B_R                       exact: facet recursion over flats (:mod:`numerics.rob.ball`) when the number of
                          flats Σ_{k<d} C(m, k) ≤ ``max_flats`` and m ≤ ``max_exact_units``
otherwise                 a certified bracket by branch and bound (:mod:`numerics.rob.bracket`) to
                          ``rel_gap`` within ``time_limit``
========================  =================================================================================

An exact routine that runs out of ``time_limit`` hands over to the bracket; nothing hangs. "Exact" means
exact for the net as given (float64 entries are binary rationals): every decision behind it is made by
interval arithmetic with an exact fall-back, so a float net and the same net written as exact rationals
get the same constant. ``value`` is the exact constant as a SymPy number (√(a + b√D)); ``lower`` and
``upper`` are its nearest float (equal) for exact results and the certified ends of the bracket otherwise.
``witness`` names the genuine point and cell where the lower end is attained.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from numerics.rob import exact as E
from numerics.rob.ball import BudgetExceeded, lipschitz_ball
from numerics.rob.canonical import Canonical, canonicalize
from numerics.rob.caps import caps_disjoint_exact, lipschitz_disjoint_caps
from numerics.rob.circle import lipschitz_circle_rational, lipschitz_circle_sympy
from numerics.rob.interval import Undecided
from numerics.rob.net import RELU, Ball, PiecewiseLinear, Sphere, check_domain, piecewise_linear_of, to_fraction
from numerics.rob.sphere2 import lipschitz_s2

__all__ = ["Lipschitz", "lipschitz", "lipschitz_from_module", "rigidity", "Rigidity", "caps_disjoint", "cost_model",
           "MP_DPS"]

MP_DPS = 50


@dataclass(frozen=True)
class Lipschitz:
    """lower ≤ Lip ≤ upper. ``exact``: lower == upper == float(value), from the arrangement (no sampling)."""

    lower: Any
    upper: Any
    method: str
    exact: bool
    value: Any = None  # the exact constant as a SymPy number, when exact
    cells: int | None = None
    seconds: float = 0.0
    argmax: dict = field(default_factory=dict)
    witness: dict | None = None  # {"point": floats or None, "pattern": bools, "kind": str}
    status: str = "exact"
    enclosure: tuple | None = None  # rigorous float enclosure of the constant
    value2: Any = None  # the exact Lip² as a + b√D (numerics.rob.exact.QNum), for exact decisions

    @property
    def upper_source(self) -> str:
        """What holds the upper end: "exact"; else ``argmax["sources"]["upper end"]`` as the route recorded it (the
        branch and bound's :data:`numerics.rob.bracket.SOURCES`, "another route: …" when a prior bracket's upper end
        was smaller, "cap-overlap graph: clique bounds"); "?" when the route records none."""
        return "exact" if self.exact else self.argmax.get("sources", {}).get("upper end", "?")

    @property
    def gap(self) -> float:
        """upper/lower − 1 (0 when exact)."""
        lo, up = float(self.lower), float(self.upper)
        return up / lo - 1 if lo > 0 else (0.0 if up == 0 else math.inf)

    def mp(self, end: str = "upper"):
        """The constant (exact results) or the chosen end of the bracket, as an mpmath number at the current
        precision: exact results are evaluated from ``value``, not from the float."""
        if self.exact and self.value is not None:
            return mpmath.mpf(sp.N(self.value, mpmath.mp.dps + 10))
        return mpmath.mpf(getattr(self, end))


def _sym_sqrt(x):
    # SymPy factors a radicand to pull out squares: fine for small numbers (√7), hopeless for the
    # 60-digit (or 600-digit) rationals a float net produces, so those stay unevaluated
    small = isinstance(x, sp.Rational) and max(abs(int(x.p)), abs(int(x.q))) <= 10**30
    return sp.sqrt(x) if small else sp.Pow(x, sp.Rational(1, 2), evaluate=False)


def _qsqrt(q: E.QNum):
    """√(a + b√D) as a SymPy number, built without evaluation when the rationals are large."""
    a = sp.Rational(q.a.numerator, q.a.denominator)
    if not (q.b and q.D):
        return _sym_sqrt(a)
    b = sp.Rational(q.b.numerator, q.b.denominator)
    rD = _sym_sqrt(sp.Rational(q.D.numerator, q.D.denominator))
    small = all(max(abs(int(r.p)), abs(int(r.q))) <= 10**30 for r in (a, b))
    if small and isinstance(rD, sp.Pow) is False:
        return _sym_sqrt(a + b * rD)
    inner = sp.Add(a, sp.Mul(b, rD, evaluate=False), evaluate=False)
    return sp.Pow(inner, sp.Rational(1, 2), evaluate=False)


def _float_sqrt(q: E.QNum) -> float:
    with mpmath.workdps(30):
        x = mpmath.mpf(q.a.numerator) / q.a.denominator
        if q.b:
            x += mpmath.mpf(q.b.numerator) / q.b.denominator * mpmath.sqrt(mpmath.mpf(q.D.numerator) / q.D.denominator)
        return float(mpmath.sqrt(max(x, 0)))


def _exact_result(q: E.QNum, method, cells, witness, t0, argmax=None) -> Lipschitz:
    f = _float_sqrt(q)
    lo, hi = float(np.nextafter(f, -np.inf)), float(np.nextafter(f, np.inf))
    return Lipschitz(f, f, method, True, _qsqrt(q), cells, time.perf_counter() - t0, argmax or {}, witness,
                     "exact", (max(lo, 0.0), hi), q)


def cost_model(m: int, domain) -> dict:
    """Predicted work of the exact routine (flats, circles × vertices) for m kinks on ``domain``."""
    d = domain.d
    if isinstance(domain, Ball):
        flats = sum(math.comb(m, k) for k in range(0, min(d - 1, m - 1) + 1))
        return {"kind": "ball", "flats": flats, "ops": flats * max(m, 1)}
    if d == 3:
        return {"kind": "s2", "circles": m, "ops": m * m * 8}
    return {"kind": "sphere", "ops": math.inf if d > 3 else m}


class _Deadline(RuntimeError):
    pass


def _progress_printer(label, every=15.0):
    """Progress for long runs: a rich bar on a terminal, a log line every ``every`` s otherwise."""
    state = {"t": time.perf_counter(), "t0": time.perf_counter()}

    def show(done, total):
        now = time.perf_counter()
        if now - state["t"] >= (1.0 if sys.stderr.isatty() else every):
            state["t"] = now
            print(f"[lipschitz] {label}: {done}/{total} after {now - state['t0']:.0f} s", file=sys.stderr, flush=True)
    return show


def lipschitz(net, domain, *, activation: PiecewiseLinear = RELU, samples: int = 20000, seed: int = 0,
              max_exact_units: int = 200, max_flats: int = 20000, time_limit: float = 60.0,
              rel_gap: float = 0.01, data_points=None, progress=None, parallel_reduction: bool = True,
              max_cliques: int = 20000, workers: int = 1) -> Lipschitz:
    """The Lipschitz constant of f on ``domain``: exact where the cost model allows, else a certified bracket.

    ``net`` is a net tuple, a :class:`Canonical`, or a torch module ``Linear → ReLU/LeakyReLU → Linear``
    (read by :func:`lipschitz_from_module`). ``samples`` and ``seed`` seed
    the bracket's search; ``data_points`` (points of the domain, e.g. training data) seed its lower end.
    ``progress``: None (quiet), True (progress lines on stderr), or a callable ``progress(done, total)``.
    ``parallel_reduction=False`` disables the exact reduction of sphere nets whose kink normals are all ±u₀
    (the general routines then run; the single-pole oracle comparison of rob.single_pole uses both).
    ``max_cliques``: the cap-graph bracket on S^{d−1} (d ≥ 4) runs when the overlap graph of the caps has at most
    this many cliques (0 disables it). ``workers``: processes for the branch and bound (forked after a warm-up,
    :mod:`numerics.rob.bracket_team`; one where the platform or a daemonic parent cannot fork).
    """
    if hasattr(net, "named_modules"):  # a torch module
        return lipschitz_from_module(net, domain, samples=samples, seed=seed, max_exact_units=max_exact_units,
                                     max_flats=max_flats, time_limit=time_limit, rel_gap=rel_gap,
                                     data_points=data_points, progress=progress, max_cliques=max_cliques,
                                     workers=workers)
    check_domain(domain)
    t0 = time.perf_counter()
    cf = net if isinstance(net, Canonical) else canonicalize(net, domain, activation=activation)
    if cf.domain != domain:
        raise ValueError("the canonical form was computed on a different domain")
    if progress is True:
        progress = _progress_printer(f"{type(domain).__name__}({domain.d}), {cf.m} kinks")
    if not cf.exact and cf.m > 1 and not (isinstance(domain, Sphere) and domain.d == 2):
        _warn_near_coincident(cf)
    deadline = t0 + time_limit if time_limit is not None else None
    d = domain.d
    if isinstance(domain, Sphere) and d == 2:
        if not cf.rational:
            with mpmath.workdps(MP_DPS):
                best, expr, cells = lipschitz_circle_sympy(cf)
            return Lipschitz(best, best, f"exact: {cells} arcs between exact kink angles on S¹", True, expr,
                             cells, time.perf_counter() - t0, {}, None, "exact")
        q, sig, pt, arcs = lipschitz_circle_rational(cf.Wq, cf.bq, cf.aq, cf.vq, warn_float=not cf.exact)
        return _exact_result(q, f"exact: {arcs} arcs between exactly ordered kinks on S¹", arcs,
                             {"point": pt, "pattern": sig, "kind": "arc"}, t0)
    if not cf.rational:
        raise ValueError("the certified Lipschitz routines need rational entries on this domain (floats, "
                         "integers or SymPy Rationals); irrational SymPy entries are supported on S¹ only")
    if isinstance(domain, Sphere):
        if parallel_reduction and d >= 3 and cf.m >= 1:
            q = _parallel_sphere(cf)
            if q is not None:
                val, z = q
                return _exact_result(val, f"exact: {cf.m} parallel kinks (normals ±u₀), the one-dimensional "
                                     "level-set reduction, exact decisions", cf.m + 1,
                                     {"point": None, "pattern": None, "kind": "level"}, t0, {"level_z": z})
        if cf.m <= 2000 and caps_disjoint_exact(cf.Wq, cf.bq) and d >= 3:
            q, j = lipschitz_disjoint_caps(cf.Wq, cf.bq, cf.aq, cf.vq)
            pat = tuple(i == j for i in range(cf.m))
            return _exact_result(q, f"exact: {cf.m} pairwise disjoint caps (closed form per cap, exact "
                                 "disjointness)", cf.m + 1, {"point": None, "pattern": pat, "kind": "cap"}, t0,
                                 {"cap": j})
        if d == 3 and cf.m <= max_exact_units:
            def tick(j, m):
                if progress is not None:
                    progress(j, m)
                if deadline is not None and time.perf_counter() > deadline:
                    raise _Deadline
            try:
                r = lipschitz_s2(cf.Wq, cf.bq, cf.aq, cf.vq, progress=tick)
            except (_Deadline, Undecided):  # out of time, or a filter failure: the bracket is still certified
                pass
            else:
                return _exact_result(r.value2, f"exact: {r.cells} cells of the small-circle arrangement on S² "
                                     "(interval filter, exact fall-back)", r.cells,
                                     {"point": r.point, "pattern": r.pattern, "kind": r.kind}, t0,
                                     {"kind": r.kind})
    else:
        cm = cost_model(cf.m, domain)
        if cf.m <= max_exact_units and cm["flats"] <= max_flats:
            remaining = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
            try:
                r = lipschitz_ball(cf.Wq, cf.bq, cf.aq, cf.vq, to_fraction(domain.R, "R"), time_limit=remaining,
                                   progress=progress)
            except (BudgetExceeded, Undecided):
                pass
            else:
                wit = _Witness(pattern=r.pattern, kind="cell")
                wit.make_point = lambda cf=cf, pat=r.pattern: _cell_point(cf, pat, domain)
                return _exact_result(E.QNum(r.value2), f"exact: max ‖g_σ‖ over the {r.cells} cells meeting the "
                                     f"open ball (facet recursion over {r.nodes} flats, exact decisions)", r.cells,
                                     wit, t0, {"pattern": list(r.pattern)})
    prior = None
    if isinstance(domain, Sphere) and d >= 4 and cf.m >= 2 and max_cliques > 0:
        prior = _cap_graph(cf, domain, t0, deadline, rel_gap, seed, max_cliques, progress)
        if prior is not None and prior.status == "gap reached":
            return prior
    return _bracket(cf, domain, t0, deadline, rel_gap, seed, data_points, progress, prior, workers)


def _cap_graph(cf, domain, t0, deadline, rel_gap, seed, max_cliques, progress):
    """The cap-graph bracket (:mod:`numerics.rob.cap_graph`) as a :class:`Lipschitz`, or None (too many cliques,
    or out of its share of the time: half of what is left)."""
    from numerics.rob.cap_graph import cap_graph_bracket

    share = 30.0 if deadline is None else max(0.5 * (deadline - time.perf_counter()), 0.5)
    cb = None if progress is None else (lambda done, todo: progress(done, -1))
    br = cap_graph_bracket(list(cf.Wq), list(cf.bq), list(cf.aq), list(cf.vq), rel_gap=rel_gap, time_limit=share,
                           max_cliques=max_cliques, seed=seed, progress=cb)
    if br is None:
        return None
    method = (f"certified bracket: cap-overlap graph ({br.edges} overlapping pairs, {br.exact_edges} decided in exact "
              f"rationals; {br.cliques} cliques bounded by SOCP duals in arb, {br.pruned} proved empty; {br.status}); "
              "lower end attained at an exact rational point of the sphere, upper end proved")
    wit = {"point": None if br.witness_point is None else tuple(float(x) for x in br.witness_point),
           "pattern": br.witness_pattern, "kind": "cap clique", "exact_point": br.witness_point}
    return Lipschitz(br.lower, max(br.upper, br.lower), method, False, None, br.cliques, time.perf_counter() - t0,
                     {"sources": {"upper end": "cap-overlap graph: clique bounds",
                                  "cliques": [{"upper": u, "clique": list(A), "delta": src} for u, A, src in br.top]}},
                     wit, br.status, (br.lower, br.upper))


def _parallel_sphere(cf):
    r"""Exact Lip² of a sphere net (d ≥ 3) whose kink normals are all ±u₀, else None.

    Write z = w₀·x (w₀ = the first kink row, N = ‖w₀‖², u₀ = w₀/√N, s = z/√N). Unit j is a_j ReLU(λ_j z + b_j)
    with λ_j = w_j·w₀/N, so between consecutive kink values z_j = −b_j/λ_j (in (−√N, √N)) the gradient is
    g = v + D w₀, D = Σ_{active} a_j λ_j, the active set read off at an exact interior point. With
    B = g·u₀, p² = ‖v‖² − (v·w₀)²/N, the level set {u₀·x = s} (a (d−2)-sphere of directions y ⊥ u₀, so
    v_⊥·y sweeps [−p, p]) has sup ‖g − (g·x)x‖² = B² + p² when B²s² ≤ p²(1 − s²), else
    B²(1 − s²) + p²s² + 2|Bs|p√(1 − s²); both are non-increasing in |s|, so each interval's sup is taken at
    its point nearest z = 0. Everything is rational except √(p²(1 − s²)): QNum comparisons, no tolerance.
    Returns (QNum Lip², the winning z).
    """
    W, b, a, v = cf.Wq, cf.bq, cf.aq, cf.vq
    w0 = W[0]
    j0 = next(i for i, x in enumerate(w0) if x != 0)  # w ∥ w₀ iff w = (w_j0/w₀_j0) w₀ (exact, O(d))
    for w in W[1:]:
        r = w[j0] / w0[j0]
        if r == 0 or any(wi != r * xi for wi, xi in zip(w, w0, strict=True)):
            return None
    N = E.dot(w0, w0)
    lam = [E.dot(w, w0) / N for w in W]
    vw = E.dot(v, w0)
    p2 = E.dot(v, v) - vw * vw / N
    zs = sorted({-bj / lj for bj, lj in zip(b, lam, strict=True) if (bj / lj) ** 2 < N})
    # interval k: (zs[k−1], zs[k]); its nearest-to-0 closure point and an exact interior point
    best = None
    for k in range(len(zs) + 1):
        lo = zs[k - 1] if k > 0 else None
        hi = zs[k] if k < len(zs) else None
        if (lo is None or lo < 0) and (hi is None or hi > 0):
            z = inner = Fraction(0)  # 0 lies inside the interval
        elif lo is not None and lo >= 0:
            z = lo
            inner = (lo + hi) / 2 if hi is not None else _step_inside(lo, N)
        else:
            z = hi
            inner = (lo + hi) / 2 if lo is not None else -_step_inside(-hi, N)
        D = sum((aj * lj for aj, lj, bj in zip(a, lam, b, strict=True) if lj * inner + bj > 0), Fraction(0))
        Bq = vw + D * N  # B = Bq/√N
        B2s2 = (Bq * z / N) ** 2  # (B s)² with s = z/√N
        s2 = z * z / N
        if B2s2 <= p2 * (1 - s2):
            val = E.QNum(Bq * Bq / N + p2)
        else:
            val = E.QNum(Bq * Bq / N * (1 - s2) + p2 * s2, 2 * abs(Bq * z / N), p2 * (1 - s2))
        if best is None or val.cmp(best[0]) > 0:
            best = (val, z)
    return best


def _step_inside(z, N):
    """A rational point of (z, √N) for 0 ≤ z < √N (z² < N)."""
    h = Fraction(1)
    while (z + h) ** 2 >= N:
        h /= 2
    return z + h


class _Witness(dict):
    """The witness dict; its "point" is found on first access (one SOCP, then an exact check)."""

    make_point = None

    def __missing__(self, key):
        if key == "point" and self.make_point is not None:
            self["point"] = self.make_point()
            return self["point"]
        raise KeyError(key)

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default


def _cell_point(cf, pattern, domain):
    """A point of the open cell ``pattern`` inside the open ball, checked exactly (None if the LP's point,
    a Chebyshev-type centre, does not pass the exact test: a cell thinner than float64 resolves)."""
    import cvxpy as cp

    m, d = cf.m, domain.d
    if m == 0:
        return tuple([0.0] * d)
    W = np.array([[float(x) for x in w] for w in cf.Wq])
    b = np.array([float(x) for x in cf.bq])
    s = np.where(np.array(pattern, bool), 1.0, -1.0)
    nw = np.linalg.norm(W, axis=1)
    R = float(domain.R)
    x, delta = cp.Variable(d), cp.Variable()
    prob = cp.Problem(cp.Maximize(delta), [cp.multiply(s, W @ x + b) >= delta * nw, cp.norm(x) <= R - delta,
                                           delta <= R])
    try:
        prob.solve(solver=cp.CLARABEL)
    except cp.error.SolverError:
        return None
    if x.value is None:
        return None
    res_x = x.value
    x = [Fraction(float(t)) for t in res_x]
    R2 = to_fraction(domain.R, "R") ** 2
    if not sum(t * t for t in x) < R2:
        return None
    for w, bj, sj in zip(cf.Wq, cf.bq, s, strict=True):
        z = sum(wi * xi for wi, xi in zip(w, x, strict=True)) + bj
        if not z * sj > 0:
            return None
    return tuple(float(t) for t in x)


def _warn_near_coincident(cf, tol: float = 1e-9):
    """Distinct kinks of a float net within ``tol`` of each other: the constant is exact for this net, but it
    jumps under perturbations of that size (the exactly coincident configuration has another one)."""
    if cf.m > 3000:
        return
    key = np.hstack([np.asarray(cf.U, float), np.asarray(cf.t, float)[:, None]])
    order = np.lexsort(key.T[::-1])
    k = key[order]
    close = np.max(np.abs(np.diff(k, axis=0)), axis=1) < tol if len(k) > 1 else np.zeros(0, bool)
    if close.any():
        import warnings

        from numerics.rob.circle import KinkCoincidenceWarning

        warnings.warn(f"{int(close.sum())} pairs of distinct kinks lie within {tol:.0e} of each other (unit normal "
                      "and threshold): the constant of this float net is exact, but it differs sharply from that "
                      "of the exactly coincident configuration", KinkCoincidenceWarning, stacklevel=3)


def _bracket(cf, domain, t0, deadline, rel_gap, seed, data_points, progress, prior=None, workers=1) -> Lipschitz:
    """The branch and bound of :mod:`numerics.rob.bracket`; ``prior``, a certified bracket of the same constant
    from another route, is intersected with it (the larger lower end, the smaller upper end)."""
    from numerics.rob.bracket import certified_bracket

    remaining = 1.0 if deadline is None else max(deadline - time.perf_counter(), 1.0)
    if cf.m == 0:
        vv = E.dot(cf.vq, cf.vq)
        return _exact_result(E.QNum(vv), "exact: no kinks", 1, None, t0)
    W = [list(w) for w in cf.Wq]
    if isinstance(domain, Sphere):  # seed the lower end inside every cap, near its rim (where τ is largest)
        seeds = _cap_seeds(cf, seed)
        data_points = seeds if data_points is None else np.vstack([np.asarray(data_points, float), seeds])
    cb = None
    if progress is not None:
        def cb(lo, up, nodes, secs):
            progress(nodes, -1)
    br = certified_bracket(W, list(cf.bq), list(cf.aq), list(cf.vq), sphere=isinstance(domain, Sphere),
                           R=domain.radius if isinstance(domain, Ball) else 1.0, rel_gap=rel_gap,
                           time_limit=remaining, seed=seed, data_points=data_points, progress=cb, workers=workers)
    method = (f"certified bracket: branch and bound over activation patterns ({br.nodes} nodes, "
              f"{br.status}); lower end attained at a genuine point, upper end proved")
    sources = dict(br.sources)
    wit = {"point": tuple(float(x) for x in br.witness_point) if br.witness_point is not None else None,
           "pattern": tuple(br.witness_pattern) if br.witness_pattern is not None else None,
           "kind": "bracket", "exact_point": br.witness_point}
    lower, upper, status = br.lower, br.upper, br.status
    if prior is not None:
        if prior.lower > lower:
            lower, wit = prior.lower, prior.witness
        if prior.upper < upper:
            upper = prior.upper
            method += f"; upper end from the {prior.method.split(': ', 1)[1]}"
            sources["upper end"] = "another route: " + prior.upper_source
        if upper <= lower * (1 + rel_gap):
            status = "gap reached"
    return Lipschitz(lower, max(upper, lower), method, False, None, None, time.perf_counter() - t0,
                     {"sources": sources}, wit, status, (lower, upper))


def _cap_seeds(cf, seed) -> np.ndarray:
    """Two points per kink: inside its cap {u·x > t}, at 0.999 of the angular radius from the pole, in random
    tangent directions (the lower end must never stay at 0 when caps hold the interesting points)."""
    rng = np.random.default_rng(seed)
    U, t = np.asarray(cf.U, float), np.asarray(cf.t, float)
    out = []
    for u, tj in zip(U, t, strict=True):
        th = 0.999 * math.acos(max(-1.0, min(1.0, tj)))
        for _ in range(2):
            e = rng.standard_normal(len(u))
            e -= (e @ u) * u
            e /= np.linalg.norm(e)
            out.append(math.cos(th) * u + math.sin(th) * e)
    return np.array(out).reshape(-1, U.shape[1])


def caps_disjoint(cf: Canonical) -> bool:
    """Are the open caps {u_j·x > t_j} of a sphere canonical form pairwise disjoint? (decided exactly)"""
    if cf.m < 2:
        return True
    if not cf.rational:
        raise ValueError("caps_disjoint needs a rational canonical form")
    return caps_disjoint_exact(cf.Wq, cf.bq)


@dataclass(frozen=True)
class Rigidity:
    """Kink sizes w_j (|α_j| on a ball, |α_j|√(1 − t_j²) on a sphere) against 2·Lip."""

    weights: Any
    lipschitz: Lipschitz
    ratio: float  # max_j w_j / (2 Lip.upper); the rigidity bound says ≤ 1 (certified when Lip is exact)
    holds_exactly: bool | None = None  # decided exactly (w_j² ≤ 4 Lip²) when Lip is exact

    @property
    def holds(self) -> bool:
        if self.holds_exactly is not None:
            return self.holds_exactly
        return self.ratio <= 1


def rigidity(net, domain, *, activation: PiecewiseLinear = RELU, **kw) -> Rigidity:
    """The rigidity ratio max_j w_j / (2 Lip) of SPEC §3 (needs d ≥ 3 on the sphere: it fails on S¹)."""
    check_domain(domain)
    if isinstance(domain, Sphere) and domain.d < 3:
        raise ValueError("rigidity on the sphere needs d >= 3 (on S^1 it fails: see rob.circle)")
    cf = net if isinstance(net, Canonical) else canonicalize(net, domain, activation=activation)
    L = lipschitz(cf, domain, **kw)
    sphere = isinstance(domain, Sphere)
    j2 = cf.jumps2(sphere) if cf.rational else None
    w = cf.tangential_jumps() if sphere else ([abs(a) for a in cf.alpha] if cf.exact else np.abs(cf.alpha))
    top = max((float(x) for x in w), default=0.0)
    up = float(L.upper)
    holds = None
    if L.exact and j2 is not None and L.value2 is not None:  # w_j² ≤ 4 Lip², decided exactly
        q = L.value2
        four = E.QNum(4 * q.a, 4 * q.b, q.D)
        holds = all(E.QNum(x).cmp(four) <= 0 for x in j2)
    return Rigidity(w, L, top / (2 * up) if up > 0 else (math.inf if top > 0 else 0.0), holds)


def lipschitz_from_module(model, domain, **kw):
    """:func:`lipschitz` of a ReLU/LeakyReLU ``Linear(d, m) → ψ → Linear(m, 1)`` module (read by
    :func:`numerics.interop.unpack`)."""
    from numerics.interop import unpack

    net = unpack(model)
    net.require_one_output("lipschitz_from_module")
    psi = piecewise_linear_of(net)
    m, d = net.W.shape
    b = net.b if net.b is not None else np.zeros(m)
    c = float(net.c[0]) if net.c is not None else 0.0
    return lipschitz((net.W, b, net.V[0], np.zeros(d), c), domain, activation=psi, **kw)
