r"""Weighted basis pursuit :math:`\min_b\sum_j w_j|b_j|` s.t. :math:`\Phi b=y`, by a primal–dual interior point.

This is the p = 1 flattest-interpolator program (``numerics.flat.flattest_outer_weights``) for
ReLU-like activations, at the sizes where a general LP solver on the split form ``[Φ, −Φ]`` is slow
(HiGHS: 73 s at n = m = 10³, > 240 s at n = 10³, m = 10⁴ on two cores).

Method: Mehrotra's predictor–corrector (Nocedal & Wright, *Numerical Optimization*, Alg. 14.3) on the
standard form :math:`\min c^\top x` s.t. :math:`Ax=y`, :math:`x\ge0`, with :math:`x=(b^+,b^-)`,
:math:`A=[\Phi,-\Phi]` and :math:`c=(w,w)`. ``A`` is never formed. The dual is
:math:`\max\nu^\top y` s.t. :math:`|\Phi^\top\nu|\le w`, with slacks :math:`z^\pm=w\mp\Phi^\top\nu`.
Each step solves the n×n normal equations

.. math:: \Phi\,\mathrm{diag}(d^++d^-)\,\Phi^\top\,\Delta\nu = r,\qquad d^\pm = x^\pm/z^\pm,

by Cholesky, so an iteration costs one symmetric rank-m product, n²m flops (0.25 s at n = 10³,
m = 10⁴), and O(nm) for everything else; two right-hand sides (predictor, corrector) share the factor.

The interior point ends near, not at, a vertex. :func:`weighted_l1_min` then *crosses over*: it takes
the n columns with the largest :math:`d^\pm` as a candidate basis S (a column-pivoted QR picks an
independent set when those columns are dependent), solves :math:`\Phi_S b_S=y` and
:math:`\Phi_S^\top\nu=w_S\,s_S` exactly (LU), with the signs s read off the interior point's dual
slacks, and keeps the vertex when it is primal and dual feasible and its gap is at rounding level.
Otherwise (a primal-degenerate optimum) the better of the two primal points is returned, with entries at
round-off level dropped. Stopping: relative primal and dual infeasibility and gap ≤ ``tol``, or no
progress in 4 steps (the accuracy that cond(Φ) allows); the best iterate is kept. Callers certify ν
themselves (scale it into :math:`|\Phi^\top\nu|\le w`, as ``numerics.flat.certify_nu_p1`` does);
the returned residuals are diagnostics, not certificates.

Measured (bench, 2 cores, through ``flattest_outer_weights``): n = 10³, m = 10⁴ in 12 s including the
features, 19 iterations, certified gap 3e-11; HiGHS times out there (240 s) and takes 71 s at n = m = 10³.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

__all__ = ["L1Result", "weighted_l1_min", "interpolates", "lstsq_correct", "shifted_cholesky"]


@dataclass(frozen=True)
class L1Result:
    """Result of :func:`weighted_l1_min` (in the caller's units).

    ``b`` interpolates (``max|Φb − y|`` is ``primal_residual``); ``nu`` is the best dual point found,
    *not* scaled to feasibility (``dual_violation = max_j (|Φᵀν|_j / w_j) − 1``, ≤ 0 when feasible).
    ``basis`` is True when ``b`` is the crossover's vertex (at most n nonzeros) with a ν from its basis;
    ``optimal`` is True when the returned pair is optimal to rounding: ``dual_violation ≤ 1e-9`` and
    ``|value − dual_value| ≤ 1e-9·value``. A primal-degenerate optimum (fewer than n nonzero b_j) is
    typically ``optimal`` without ``basis``: its ν then comes from the interior point.
    """

    b: np.ndarray
    nu: np.ndarray
    value: float  # Σ w|b|
    dual_value: float  # ν·y (a lower bound only when dual_violation ≤ 0)
    primal_residual: float
    dual_violation: float
    iterations: int
    converged: bool
    basis: bool
    optimal: bool
    history: list[dict] = field(default_factory=list, repr=False)


def _check(Phi, y, w):
    Phi = np.asarray(Phi, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.asarray(w, dtype=float)
    if Phi.ndim != 2:
        raise ValueError(f"Phi: expected a 2-d array, got shape {Phi.shape}")
    n, m = Phi.shape
    if y.shape != (n,):
        raise ValueError(f"y: expected shape ({n},) to match Phi {Phi.shape}, got {y.shape}")
    if w.shape != (m,):
        raise ValueError(f"w: expected shape ({m},) to match Phi {Phi.shape}, got {w.shape}")
    for name, a in (("Phi", Phi), ("y", y), ("w", w)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: contains NaN or inf")
    if np.any(w <= 0):
        raise ValueError("w: weights must be > 0 (a column with w_j = 0 costs nothing: drop it and its term first)")
    return Phi, y, w


def _max_step(v, dv):
    neg = dv < 0
    if not np.any(neg):
        return 1.0
    return float(min(1.0, np.min(-v[neg] / dv[neg])))


def shifted_cholesky(M):
    """Cholesky of the normal matrix, with a growing diagonal shift if it is numerically singular."""
    scale = float(np.max(np.diag(M)))
    shift = 0.0
    for _ in range(12):
        try:
            return sla.cho_factor(M + shift * np.eye(M.shape[0]), lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            shift = max(shift * 100.0, 1e-14 * scale)
    raise np.linalg.LinAlgError("normal matrix Φ D Φᵀ is not positive definite even after a diagonal shift")


def _vertex(Phi, y, w, S, sign):
    """b on the basis S (n columns) and ν with Φ_Sᵀν = w_S sign_S; None if Φ_S is numerically singular."""
    m = Phi.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sla.LinAlgWarning)
        lu = sla.lu_factor(Phi[:, S], check_finite=False)
    piv = np.abs(np.diag(lu[0]))
    if not np.all(np.isfinite(lu[0])) or np.min(piv) <= 1e-13 * np.max(piv):
        return None
    b = np.zeros(m)
    b[S] = sla.lu_solve(lu, y, check_finite=False)
    nu = sla.lu_solve(lu, w[S] * sign[S], trans=1, check_finite=False)
    return b, nu


def _crossover(Phi, y, w, score, sign):
    """An optimal-vertex candidate from the interior point's score d_j = max(x_j^±/z_j^±).

    The basis: the n columns of largest score; if they are dependent (e.g. ReLU columns active on the
    same single sample), a column-pivoted QR of the 2n best columns, each scaled by √score, picks the most
    "basic" independent ones. The dual signs come from the interior point's dual slacks (which of
    ω ∓ Φᵀν is smaller), so a primal-degenerate optimum (fewer than n nonzero b_j) still gets the right ν.
    """
    n, m = Phi.shape
    S = np.sort(np.argpartition(-score, n - 1)[:n])
    vert = _vertex(Phi, y, w, S, sign)
    if vert is not None or m == n:
        return vert
    K = np.argsort(-score)[: min(m, 2 * n)]
    top = float(np.max(score[K]))
    sc = np.sqrt(score[K] / top) if top > 0 else np.ones(len(K))
    _, piv = sla.qr(Phi[:, K] * sc, mode="r", pivoting=True, check_finite=False)
    return _vertex(Phi, y, w, np.sort(K[piv[:n]]), sign)


def interpolates(Phi, b, y) -> bool:
    """b is finite and max|Φb − y| ≤ 1e-9·(1 + max|y|): the interpolation test used by every solver here."""
    return bool(np.all(np.isfinite(b))) and float(np.max(np.abs(Phi @ b - y))) <= 1e-9 * (
        1.0 + float(np.max(np.abs(y))))


def lstsq_correct(Phi, y, b) -> np.ndarray:
    """b plus the least-norm (SVD) solution of Φδ = y − Φb: robust to an ill-conditioned Φ."""
    return b + np.linalg.lstsq(Phi, y - Phi @ b, rcond=None)[0]


def _sparsify(Phi, y, w, b):
    """Drop entries at round-off level (≤ 1e-12·max|b|) and re-solve on the rest, if that stays optimal.

    A primal-degenerate vertex has basis columns whose b_j are round-off; an interior point has every
    b_j ≠ 0. On a support of at most n columns the least-squares re-solve is an exact interpolator.
    """
    big = np.abs(b) > 1e-12 * float(np.max(np.abs(b)))
    k = np.count_nonzero(big)
    if k == np.count_nonzero(b) or k > Phi.shape[0]:
        return b
    T = np.flatnonzero(big)
    bt = np.zeros_like(b)
    bt[T] = np.linalg.lstsq(Phi[:, T], y, rcond=None)[0]
    if interpolates(Phi, bt, y) and float(w @ np.abs(bt)) <= float(w @ np.abs(b)) * (1 + 1e-12):
        return bt
    return b


def _violation(Phi, nu, w) -> float:
    return float(np.max(np.abs(Phi.T @ nu) / w)) - 1.0


def weighted_l1_min(
    Phi,
    y,
    w,
    *,
    tol: float = 1e-10,
    maxiter: int = 80,
    progress: Callable[[int, dict], None] | None = None,
    gram_factor: tuple | None = None,
) -> L1Result:
    r"""Solve :math:`\min_b\sum_j w_j|b_j|` subject to :math:`\Phi b = y` (weights :math:`w_j > 0`).

    Parameters
    ----------
    Phi : (n, m) array, rank n (m ≥ n).
    y : (n,) array.
    w : (m,) array of positive weights.
    tol : relative primal/dual infeasibility and duality gap at which the interior point stops.
    maxiter : iteration limit; on reaching it the best iterate is returned with ``converged=False``.
    progress : optional callback ``progress(iteration, stats)``.
    gram_factor : optional ``scipy.linalg.cho_factor`` of ``Phi @ Phi.T`` (unshifted), when the caller has it
        (``numerics.flat.duality.full_rank_check``): used for the starting point and the final least-norm
        correction instead of factoring ΦΦᵀ again.

    Returns
    -------
    L1Result

    Raises
    ------
    ValueError on bad shapes, NaN/inf, non-positive weights, m < n, or when no b with Φb = y was found
    (Φ rank-deficient and y outside its range).

    Example
    -------
    >>> rng = np.random.default_rng(0)
    >>> Phi = rng.standard_normal((20, 60)); y = Phi[:, :3] @ np.array([1.0, -2.0, 0.5])
    >>> res = weighted_l1_min(Phi, y, np.ones(60))
    >>> res.optimal, np.flatnonzero(res.b).tolist(), round(res.value, 12)
    (True, [0, 1, 2], 3.5)
    """
    Phi, y, w = _check(Phi, y, w)
    n, m = Phi.shape
    if m < n:
        raise ValueError(f"Phi: m = {m} < n = {n} columns; Φ b = y has no solution for general y")
    if not np.any(y):  # b = 0 and ν = 0 are optimal
        return L1Result(np.zeros(m), np.zeros(n), 0.0, 0.0, 0.0, -1.0, 0, True, True, True)
    # Scale to O(1) data: b = sy·b', w = sw·w', ν = sw·ν'.
    sy = float(np.max(np.abs(y))) or 1.0
    sw = float(np.max(w))
    ys, ws = y / sy, w / sw
    norm_y = 1.0 + float(np.max(np.abs(ys)))

    # Mehrotra's starting point: least-norm x, ν = 0 (A c = 0 here), z = c, shifted to be interior.
    try:
        G = shifted_cholesky(Phi @ Phi.T) if gram_factor is None else gram_factor
    except np.linalg.LinAlgError:
        raise ValueError(f"Phi: Φ Φᵀ cannot be factored; Φ has rank < n = {n} (a zero row?)") from None
    u = sla.cho_solve(G, ys, check_finite=False) / 2.0
    s = Phi.T @ u
    xp, xm = s.copy(), -s
    zp, zm = ws.copy(), ws.copy()
    nu = np.zeros(n)
    dx = max(-1.5 * min(float(xp.min()), float(xm.min())), 0.0)
    dz = max(-1.5 * float(ws.min()), 0.0)
    xp, xm, zp, zm = xp + dx, xm + dx, zp + dz, zm + dz
    xz = float(xp @ zp + xm @ zm)
    dx = 0.5 * xz / max(float(zp.sum() + zm.sum()), np.finfo(float).tiny)
    dz = 0.5 * xz / max(float(xp.sum() + xm.sum()), np.finfo(float).tiny)
    xp, xm, zp, zm = xp + dx, xm + dx, zp + dz, zm + dz

    history: list[dict] = []
    best: tuple = (math.inf, 0, (xp, xm, zp, zm, nu))
    converged = False
    it = 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # a blow-up ends the loop
        for it in range(1, maxiter + 1):
            Ptn = Phi.T @ nu
            rb = Phi @ (xp - xm) - ys
            rcp = Ptn + zp - ws
            rcm = -Ptn + zm - ws
            pobj = float(ws @ (xp + xm))
            dobj = float(ys @ nu)
            mu = float(xp @ zp + xm @ zm) / (2 * m)
            stats = {
                "primal_infeas": float(np.max(np.abs(rb))) / norm_y,
                # relative to each w_j (what the scaling of ν into |Φᵀν| ≤ w will cost) and to the
                # objective itself (w may span many decades, so absolute measures would stop early)
                "dual_infeas": float(max(np.max(np.abs(rcp) / ws), np.max(np.abs(rcm) / ws))),
                "gap": abs(pobj - dobj) / max(abs(pobj), abs(dobj), np.finfo(float).tiny),
                "mu": mu,
            }
            merit = max(stats["primal_infeas"], stats["dual_infeas"], stats["gap"])
            if not math.isfinite(merit):  # round-off blew up an iterate: fall back to the best one
                break
            history.append(stats)
            if progress is not None:
                progress(it, stats)
            if merit < best[0]:
                best = (merit, it, (xp, xm, zp, zm, nu))
            if merit <= tol:
                converged = True
                break
            if it - best[1] >= 4:  # no progress in 4 steps: the attainable accuracy (cond Φ) is reached
                break
            if not mu > 0:  # every x_j z_j underflowed to 0 (weights ~1e-78 in Φ): no central path left to follow
                break
            dp, dm = xp / zp, xm / zm
            Bs = Phi * np.sqrt(dp + dm)
            try:
                F = shifted_cholesky(Bs @ Bs.T)  # a symmetric rank-m product: numpy calls syrk for B @ B.T
            except np.linalg.LinAlgError:
                break

            def solve(rxp, rxm, F=F, dp=dp, dm=dm, zp=zp, zm=zm, rb=rb, rcp=rcp, rcm=rcm):
                # Z Δx + X Δz = r_xz,  A Δx = −r_b,  Aᵀ Δν + Δz = −r_c, eliminated to Φ D Φᵀ Δν = r
                tp = rxp / zp + dp * rcp
                tm = rxm / zm + dm * rcm
                dnu = sla.cho_solve(F, -rb - Phi @ (tp - tm), check_finite=False)
                g = Phi.T @ dnu
                dzp, dzm = -rcp - g, -rcm + g
                return rxp / zp - dp * dzp, rxm / zm - dm * dzm, dnu, dzp, dzm

            axp, axm, _, azp, azm = solve(-xp * zp, -xm * zm)
            ap = min(_max_step(xp, axp), _max_step(xm, axm))
            ad = min(_max_step(zp, azp), _max_step(zm, azm))
            mu_aff = float((xp + ap * axp) @ (zp + ad * azp) + (xm + ap * axm) @ (zm + ad * azm)) / (2 * m)
            sigma = (mu_aff / mu) ** 3
            cxp, cxm, cnu, czp, czm = solve(-xp * zp - axp * azp + sigma * mu, -xm * zm - axm * azm + sigma * mu)
            eta = max(0.9, 1.0 - 10.0 * mu)  # step-to-boundary fraction → 1 as μ → 0
            ap = min(1.0, eta * min(_max_step(xp, cxp), _max_step(xm, cxm)))
            ad = min(1.0, eta * min(_max_step(zp, czp), _max_step(zm, czm)))
            xp, xm = xp + ap * cxp, xm + ap * cxm
            nu, zp, zm = nu + ad * cnu, zp + ad * czp, zm + ad * czm

    xp, xm, zp, zm, nu = best[2]
    # Candidates, in the caller's units: the interior point, and the crossover vertex.
    b_ipm = (xp - xm) * sy
    b_ipm = b_ipm + Phi.T @ sla.cho_solve(G, y - Phi @ b_ipm, check_finite=False)  # least-norm correction
    if not interpolates(Phi, b_ipm, y):  # ΦΦᵀ squares cond(Φ): an ill-conditioned Φ needs the SVD
        b_ipm = lstsq_correct(Phi, y, b_ipm)
    nu_ipm = nu * sw
    with np.errstate(divide="ignore", invalid="ignore"):   # a slack of exactly 0: the column is basic for sure
        score = np.maximum(xp / zp, xm / zm)
    score = np.where(np.isnan(score), 0.0, score)
    finite = score[np.isfinite(score)]
    score = np.where(np.isinf(score), 2.0 * (float(finite.max()) if finite.size else 1.0) + 1.0, score)
    vert = _crossover(Phi, y, w, score, np.where(zp <= zm, 1.0, -1.0))
    cands = [(b_ipm, nu_ipm)] if vert is None else [vert, (b_ipm, nu_ipm)]

    is_basis = False
    if vert is not None and interpolates(Phi, vert[0], y) and np.all(np.isfinite(vert[1])):
        val_v = math.fsum(w * np.abs(vert[0]))
        gap_v = abs(val_v - float(vert[1] @ y))
        is_basis = _violation(Phi, vert[1], w) <= 1e-9 and gap_v <= 1e-9 * max(val_v, np.finfo(float).tiny)
    if is_basis:  # an optimal vertex: exactly sparse, and optimal to rounding
        b = vert[0]
    else:
        b = min([c[0] for c in cands if interpolates(Phi, c[0], y)] or [b_ipm], key=lambda bb: float(w @ np.abs(bb)))
    b = _sparsify(Phi, y, w, b)
    nus = [c[1] for c in cands if np.all(np.isfinite(c[1]))]
    viol = [_violation(Phi, v, w) for v in nus]

    def certified(v, vi):  # the dual value after scaling ν into the feasible set
        return float(v @ y) / max(1.0, 1.0 + vi)

    k = max(range(len(nus)), key=lambda i: certified(nus[i], viol[i]))
    nu_best, viol_best = nus[k], viol[k]
    value = math.fsum(w * np.abs(b))
    dual = math.fsum(nu_best * y)
    resid = float(np.max(np.abs(Phi @ b - y)))
    if not resid <= 1e-6 * (1.0 + float(np.max(np.abs(y)))):
        raise ValueError(f"Φb = y: no solution found (max residual {resid:.2e}); is Φ of rank n = {n}?")
    return L1Result(
        b=b,
        nu=nu_best,
        value=value,
        dual_value=dual,
        primal_residual=resid,
        dual_violation=viol_best,
        iterations=it,
        converged=converged,
        basis=bool(is_basis),
        optimal=bool(viol_best <= 1e-9 and abs(value - dual) <= 1e-9 * max(value, np.finfo(float).tiny)),
        history=history,
    )
