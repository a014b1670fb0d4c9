r"""The invariant form of Υ, the dual of the flattest-interpolator program, and its certified solvers.

In the invariant variables :math:`\bar\theta_j=\theta_j/\|\theta_j\|`, :math:`b_j=a_j\|\theta_j\|^c`, Υ is
:math:`\sum_j\omega_j|b_j|^p` (:func:`invariant_form`), so for fixed directions the flattest interpolator solves

.. math:: \min_b\sum_j\omega_j|b_j|^p\quad\text{s.t.}\quad\bar\Phi b=y,\qquad
          \text{dual}\quad\max_\nu\ \nu^\top y-\sum_jg_j^*((\bar\Phi^\top\nu)_j),\ g_j=\omega_j|\cdot|^p

(:func:`flattest_outer_weights`, :func:`dual_objective`). Every dual value returned is a certified lower bound
on Υ of every interpolator with those directions: p = 1 dual points are scaled into the feasible set with the
float64 rounding of :math:`\bar\Phi^\top\nu` bounded (:func:`certify_nu_p1`). ω and the conjugate are generated
from ``proofs/flat/duality.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.linalg as sla

from numerics._derived import flat as derived
from numerics.flat.activations import get_activation
from numerics.flat.inputs import check_inputs
from numerics.flat.trace import network, neuron_moments, preactivations
from numerics.flat.weighted_l1 import interpolates, lstsq_correct, shifted_cholesky, weighted_l1_min

__all__ = ["InvariantForm", "invariant_form", "DUAL_ROUNDING", "dual_objective", "dual_objective_arb", "FlattestResult",
           "certify_nu_p1",
           "solve_p1", "full_rank_check", "FlattestMethod", "flattest_outer_weights"]


@dataclass(frozen=True)
class InvariantForm:
    """θ̄_j = θ_j/‖θ_j‖, ω_j = K_c Ā_j^{1/(c+1)} B̄_j^{c/(c+1)} (Ā, B̄ at θ̄_j), Φ̄_ij = σ(θ̄_j·x_i)."""

    theta_bar: np.ndarray
    norms: np.ndarray
    omega: np.ndarray
    Phibar: np.ndarray
    p: float


def invariant_form(Theta, X, activation) -> InvariantForm:
    """Directions, norms, weights ω_j and features Φ̄ of the invariant form (ValueError for a zero θ_j)."""
    act = get_activation(activation)
    v = check_inputs(Theta=Theta, X=X)
    norms = np.linalg.norm(v["Theta"], axis=1)
    if np.any(norms == 0):
        raise ValueError("Theta: a zero direction has no invariant form (θ_j = 0)")
    tb = v["Theta"] / norms[:, None]
    Zb = preactivations(v["X"], v["Theta"]) / norms[None, :]     # θ̂_j·x_i with θ_j·x_i's exact signs and zeros
    Ab, Bb = neuron_moments(tb, v["X"], act, Z=Zb)
    return InvariantForm(tb, norms, np.asarray(derived.omega_weight(Ab, Bb, act.c), dtype=float), act(Zb), act.p)


DUAL_ROUNDING = 1e-13  # relative float64 rounding allowance subtracted from dual values


def _abs_s_upper(nu, Phibar, k: float = 1.0) -> np.ndarray:
    """A float64 upper bound on |(Φ̄ᵀν)_j| for the exact product: |fl(s_j)|(1 + 2u) + k γ_{n+4} (|Φ̄|ᵀ|ν|)_j.

    γ_k = k u / (1 − k u) (u = 2⁻⁵³) bounds the rounding of a length-k dot product in any summation
    order (Higham, *Accuracy and Stability*, §3.1); the extra terms cover the rounding of the bound itself.
    When ν is large and Φ̄ᵀν cancels (ill-conditioned Φ̄), this is what keeps a certificate honest.
    """
    n = Phibar.shape[0]
    u = 2.0**-53
    gamma = (n + 4) * u / (1 - (n + 4) * u)
    return np.abs(Phibar.T @ nu) * (1 + 2 * u) + k * gamma * (np.abs(Phibar).T @ np.abs(nu))


def dual_objective(nu, Phibar, y, omega, p: float) -> float:
    r"""A float64 lower bound on the dual function at ν: ν·y − Σ_j g_j^*((Φ̄ᵀν)_j), g_j = ω_j|·|^p.

    For p = 1 the conjugate is the indicator of |s| ≤ ω_j: returns −inf unless ν is feasible, with the
    rounding of Φ̄ᵀν bounded (Higham's γ_{n+4}). For p > 1 the conjugate (increasing in |s|) is taken at
    that upper bound. By weak duality (Fenchel–Young) the value is ≤ Υ of every interpolator with these
    directions, for the float64 problem data Φ̄, ω as computed. Never NaN: an overflow gives −inf.
    """
    nuy = math.fsum(nu * y)
    s_up = _abs_s_upper(nu, Phibar)
    if p == 1:
        return nuy - DUAL_ROUNDING * math.fsum(np.abs(nu * y)) if np.all(s_up <= omega) else -math.inf
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        conj = np.where(omega > 0, derived.conjugate_power(s_up, np.where(omega > 0, omega, 1.0), p),
                        np.where(s_up == 0, 0.0, np.inf))
        # minus an allowance for float64 rounding, so that the value stays a lower bound
        val = nuy - math.fsum(conj) - DUAL_ROUNDING * (math.fsum(np.abs(nu * y)) + math.fsum(conj))
    return val if math.isfinite(val) else -math.inf


def dual_objective_arb(nu, Phibar, y, omega, p: float) -> float:
    r"""The dual function at ν (p > 1) enclosed in arb ball arithmetic from the float64 data taken exactly, and the
    lower end of that ball as a float: a certified lower bound like :func:`dual_objective`, without its float64
    rounding allowance. Where Φ̄ is ill-conditioned the optimal ν is large and Φ̄ᵀν cancels, and that allowance
    (γ_{n+4}|Φ̄|ᵀ|ν|) alone can exceed the gap to be certified (near-duplicate samples: 0.98 of Υ)."""
    from flint import arb, ctx

    if p == 1:
        return dual_objective(nu, Phibar, y, omega, p)
    with ctx.workprec(512):
        P = arb(float(p))
        e = 1 / (P - 1)
        total = sum((arb(float(a)) * arb(float(b)) for a, b in zip(nu, y, strict=True)), arb(0))
        for j in range(Phibar.shape[1]):
            sj = abs(sum((arb(float(Phibar[i, j])) * arb(float(nu[i])) for i in range(Phibar.shape[0])), arb(0)))
            om = arb(float(omega[j]))
            if not omega[j] > 0:
                if sj != 0:
                    return -math.inf
                continue
            if sj == 0:
                continue
            t = (sj / (om * P)) ** e
            total -= sj * t - om * t ** P            # g*(s) = s t − ω t^p at the maximiser t
        lo = total.lower()
        f = float(lo.mid()) - float(lo.rad())
        while not arb(f) <= lo:
            f = float(np.nextafter(f, -math.inf))
        return f if math.isfinite(f) else -math.inf


UNIQUE_EXACT_MAX_N = 60   # the exact n × n solve of the unique-interpolator fall-back (flint fmpq) up to this n


def _unique_interpolator_exact(Phi, y, om, p):
    """Φ̄ (n × n, the float data taken exactly) nonsingular in rationals: the one b* with Φ̄b* = y. Returns (b* rounded
    to float64, a certified lower bound of Υ(b*) = Σ_j ω_j|b*_j|^p = Υ*, from arb), or None when Φ̄ is singular.
    The exact fall-back behind :func:`flattest_outer_weights` when its float certificate falls short there."""
    from fractions import Fraction

    from flint import arb, ctx, fmpq, fmpq_mat

    from numerics.fallbacks import reach

    reach("flat.duality/unique_exact")
    n = Phi.shape[0]

    def q(x):
        f = Fraction(float(x))
        return fmpq(f.numerator, f.denominator)

    A = fmpq_mat(n, n, [q(Phi[i, j]) for i in range(n) for j in range(n)])
    if A.det() == 0:
        return None
    bq = A.solve(fmpq_mat(n, 1, [q(t) for t in y]))
    b = np.array([float(Fraction(int(bq[j, 0].p), int(bq[j, 0].q))) for j in range(n)])
    with ctx.workprec(256):
        P = arb(fmpq(*Fraction(float(p)).as_integer_ratio()))
        tot = arb(0)
        for j in range(n):
            if bq[j, 0] != 0:
                tot += arb(q(om[j])) * abs(arb(bq[j, 0])) ** P
        lo = tot.lower()
        f = float(lo.mid()) - float(lo.rad())
        while not arb(f) <= lo:
            f = float(np.nextafter(f, -math.inf))
    return b, f


def _polish_dual_mp(nu, Phi, y, om, p, dps: int = 60, steps: int = 8):
    """Newton on the dual (p > 1) in mpmath at ``dps`` digits from the float data taken exactly. Returns (ν, b): ν
    rounded to float64 (the certificate is then evaluated at that float ν) and the KKT primal b(ν) rounded to
    float64. Only for small n (an n × n mpmath solve per step)."""
    import mpmath

    n, m = Phi.shape
    with mpmath.workdps(dps):
        F = mpmath.matrix([[mpmath.mpf(float(Phi[i, j])) for j in range(m)] for i in range(n)])
        Y = [mpmath.mpf(float(t)) for t in y]
        O = [mpmath.mpf(float(t)) for t in om]
        P = mpmath.mpf(float(p))
        v = [mpmath.mpf(float(t)) for t in nu]
        for _ in range(steps):
            S = [mpmath.fsum(F[i, j] * v[i] for i in range(n)) for j in range(m)]
            T = [(abs(S[j]) / (O[j] * P)) ** (1 / (P - 1)) if O[j] > 0 and S[j] != 0 else mpmath.mpf(0)
                 for j in range(m)]
            B = [mpmath.sign(S[j]) * T[j] for j in range(m)]
            g = [Y[i] - mpmath.fsum(F[i, j] * B[j] for j in range(m)) for i in range(n)]
            dbs = [T[j] / ((P - 1) * abs(S[j])) if T[j] > 0 else mpmath.mpf(0) for j in range(m)]
            Hm = mpmath.matrix(n, n)
            for i in range(n):
                for k in range(i, n):
                    Hm[i, k] = Hm[k, i] = mpmath.fsum(F[i, j] * dbs[j] * F[k, j] for j in range(m))
            try:
                step = mpmath.lu_solve(Hm, mpmath.matrix(g))
            except ZeroDivisionError:
                break
            v = [v[i] + step[i] for i in range(n)]
        S = [mpmath.fsum(F[i, j] * v[i] for i in range(n)) for j in range(m)]
        B = [mpmath.sign(S[j]) * (abs(S[j]) / (O[j] * P)) ** (1 / (P - 1)) if O[j] > 0 else mpmath.mpf(0)
             for j in range(m)]
        return np.array([float(t) for t in v]), np.array([float(t) for t in B])


@dataclass(frozen=True)
class FlattestResult:
    """The flattest interpolating outer weights for fixed directions, with a dual certificate.

    ``dual_value`` ≤ Υ(w) for *every* interpolator w whose directions are those of Theta (any rescaling);
    ``gap = value − dual_value`` ≥ 0 and ``rel_gap = gap / value`` bound the suboptimality of ``a``.
    """

    a: np.ndarray
    b: np.ndarray  # invariant weights b_j = a_j ‖θ_j‖^c
    value: float  # Υ(a, Theta)
    dual_value: float
    nu: np.ndarray
    p: float
    omega: np.ndarray
    interpolation_residual: float  # max_i |h(x_i) − y_i|
    solver: str
    extra: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return self.value - self.dual_value

    @property
    def rel_gap(self) -> float:
        return self.gap / max(abs(self.value), np.finfo(float).tiny)


_FEAS_SAFETY = 1e-12  # relative slack for float64 rounding in Φ̄ᵀν and ω when certifying p = 1


def certify_nu_p1(nu, Phibar, omega) -> np.ndarray:
    """Scale ν so that |Φ̄ᵀν|_j ≤ (1 − 1e-12) ω_j for every j, for the *exact* product (its float64
    rounding bounded as in :func:`dual_objective`): exact p = 1 dual feasibility, with slack."""
    nu = np.asarray(nu, dtype=float)
    if not np.all(np.isfinite(nu)):
        return np.zeros_like(nu)
    # 3γ, not γ: the product for the *scaled* ν rounds differently (by up to 2γ|Φ̄|ᵀ|ν|), and the
    # check in dual_objective must still pass on it
    s_ = _abs_s_upper(nu, Phibar, k=3.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(omega > 0, s_ / omega, np.where(s_ > 0, np.inf, 0.0))
    worst = float(np.max(ratio)) if ratio.size else 0.0
    if not math.isfinite(worst):
        return np.zeros_like(nu)
    return nu * min(1.0, (1 - _FEAS_SAFETY) / worst) if worst > 0 else nu


def _p1_rel_gap(b, nu_certified, Phi, y, om) -> float:
    """Relative gap of a p = 1 pair: b interpolating, ν already through ``certify_nu_p1``."""
    val = math.fsum(om * np.abs(b))
    return (val - dual_objective(nu_certified, Phi, y, om, 1)) / max(val, np.finfo(float).tiny)


def solve_p1(Phi, y, om, method: str = "auto", *, gram_factor=None) -> tuple[np.ndarray, np.ndarray, str]:
    """(b, ν, solver) for min Σ_j ω_j|b_j| s.t. Φ̄b = y (ω > 0), ν certified by :func:`certify_nu_p1`.
    ``gram_factor``: the ``cho_factor`` of ``Phi @ Phi.T`` if already computed (:func:`full_rank_check`).

    p = 1: the interior point with crossover (``numerics.flat.weighted_l1``), or HiGHS on the split LP.

    ``auto`` runs the interior point and keeps it when its certified gap is ≤ 1e-9 relative, or ≤ 1e-6
    when it is optimal to float64 rounding; otherwise (or if it fails) HiGHS runs too and the pair with
    the smaller certified gap is returned. Either way ``rel_gap`` of the result states what is certified.
    """
    cands = []
    if method in ("auto", "ipm"):
        try:
            r = weighted_l1_min(Phi, y, om, gram_factor=gram_factor)
        except ValueError:
            if method == "ipm":
                raise
        else:
            how = ("optimal vertex by crossover" if r.basis else "optimal" if r.optimal
                   else "converged" if r.converged else "NOT converged")
            solver = f"interior point (Mehrotra), {r.iterations} iterations, {how}"
            cands.append((r.b, certify_nu_p1(r.nu, Phi, om), solver))
            gap = _p1_rel_gap(r.b, cands[0][1], Phi, y, om)
            # Optimal in float64 terms, with a certified gap at the level that rounding of Φ̄ᵀν allows
            # (γ_n|Φ̄|ᵀ|ν| grows with n and cond Φ̄: ~1e-8 at n = m = 10³); HiGHS could do no better.
            if method == "ipm" or gap <= 1e-9 or (r.optimal and gap <= 1e-6):
                return cands[0]
    try:
        cands.append(_solve_p1_highs(Phi, y, om))
    except ValueError:
        if not cands:
            raise
    return min(cands, key=lambda c: _p1_rel_gap(c[0], c[1], Phi, y, om))


def _solve_p1_highs(Phi, y, om):
    from scipy.optimize import linprog

    m = Phi.shape[1]
    res = linprog(np.concatenate([om, om]), A_eq=np.hstack([Phi, -Phi]), b_eq=y, bounds=(0, None),
                  method="highs", options={"primal_feasibility_tolerance": 1e-10,
                                           "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise ValueError(f"flattest interpolator LP failed: {res.message}")
    b = res.x[:m] - res.x[m:]
    nu = np.asarray(res.eqlin.marginals, dtype=float)
    # Polish on the optimal support: an exact vertex, and ν from the active dual constraints.
    supp = np.flatnonzero(np.abs(b) > 1e-9 * max(1.0, float(np.max(np.abs(b)))))
    cands_b, cands_nu = [b], [nu]
    if 0 < supp.size <= Phi.shape[0]:
        bs = np.zeros(m)
        bs[supp] = np.linalg.lstsq(Phi[:, supp], y, rcond=None)[0]
        cands_b.append(bs)
        if supp.size == Phi.shape[0]:
            cands_nu.append(np.linalg.solve(Phi[:, supp].T, om[supp] * np.sign(bs[supp])))
    b = min(cands_b, key=lambda bb: (not interpolates(Phi, bb, y), float(om @ np.abs(bb))))
    if not interpolates(Phi, b, y):
        raise ValueError(f"flattest interpolator LP: HiGHS returned b with max|Φ̄b − y| = "
                         f"{float(np.max(np.abs(Phi @ b - y))):.1e}; Φ̄ is too ill-conditioned for float64 "
                         f"(cond ≈ {np.linalg.cond(Phi):.1e}); nearly duplicate samples?")
    nus = [certify_nu_p1(v, Phi, om) for v in cands_nu]
    nu = max(nus, key=lambda v: dual_objective(v, Phi, y, om, 1))
    return b, nu, "HiGHS (split LP), support polish"


def _dual_parts(nu, Phi, y, om, p, *, hess: bool):
    """Dual value ν·y − Σ g_j^*(s_j), its gradient y − Φb(ν) and (optionally) √(db/ds) at s = Φᵀν."""
    s_ = Phi.T @ nu
    t_ = derived.conjugate_argmax(np.abs(s_), om, p)
    bb = np.sign(s_) * t_
    val = math.fsum(nu * y) - math.fsum(derived.conjugate_power(np.abs(s_), om, p))
    if not hess:
        return val, bb
    with np.errstate(divide="ignore", invalid="ignore"):
        db = np.where(t_ > 0, t_ / ((p - 1) * np.abs(s_)), 0.0)  # d b_j / d s_j ≥ 0
    return val, bb, y - Phi @ bb, np.sqrt(db)


def _dual_newton(nu, Phi, y, om, p, *, tol: float = 1e-13, maxiter: int = 100):
    r"""Maximise the smooth concave dual :math:`\nu^\top y-\sum_j g_j^*((\Phi^\top\nu)_j)` (p > 1) by
    damped Newton from ν; returns (ν, converged).

    The gradient is the interpolation residual y − Φb(ν) with the KKT weights :math:`b_j(\nu)`, the
    negative Hessian is :math:`\Phi\,\mathrm{diag}(db_j/ds_j)\,\Phi^\top` (n×n; one symmetric rank-m
    product, Cholesky), and an Armijo backtracking line search on the dual value keeps every step an
    ascent step. Converged: max|y − Φb(ν)| ≤ tol·(1 + max|y|), or the Newton decrement (the predicted
    gain g·H⁻¹g / 2) is below float64 resolution of the dual value (1e-15 relative), where the dual
    cannot be improved further in float64.
    """
    scale = tol * (1.0 + float(np.max(np.abs(y))))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        val, _, g, sq = _dual_parts(nu, Phi, y, om, p, hess=True)
        for _ in range(maxiter):
            if float(np.max(np.abs(g))) <= scale:
                return nu, True
            B = Phi * sq
            try:
                step = sla.cho_solve(shifted_cholesky(B @ B.T), g, check_finite=False)
            except np.linalg.LinAlgError:
                return nu, False
            slope = float(g @ step)
            if slope / 2 <= 1e-15 * max(1.0, abs(val)):
                return nu, True
            tau = 1.0
            while tau > 1e-12:
                v2 = nu + tau * step
                val2 = _dual_parts(v2, Phi, y, om, p, hess=False)[0]
                if math.isfinite(val2) and val2 >= val + 1e-4 * tau * slope:
                    break
                tau /= 2
            else:
                return nu, False
            nu = v2
            val, _, g, sq = _dual_parts(nu, Phi, y, om, p, hess=True)
        return nu, float(np.max(np.abs(g))) <= scale


def _ray_start(Phi, y, om, p, gram_factor=None):
    """ν = t·(ΦΦᵀ)⁻¹y with the t that maximises the dual along that ray (the conjugate is q-homogeneous)."""
    G = shifted_cholesky(Phi @ Phi.T) if gram_factor is None else gram_factor
    nu_hat = sla.cho_solve(G, y, check_finite=False)
    q = p / (p - 1)
    a = float(nu_hat @ y)  # > 0 for y ≠ 0
    C = math.fsum(derived.conjugate_power(np.abs(Phi.T @ nu_hat), om, p))
    return nu_hat * (a / (q * C)) ** (1 / (q - 1)) if a > 0 and C > 0 else nu_hat


def _primal_from_dual(nu, Phi, y, om, p):
    s_ = Phi.T @ nu
    b = np.sign(s_) * derived.conjugate_argmax(np.abs(s_), om, p)  # the KKT map
    return lstsq_correct(Phi, y, b)  # exact interpolation (tiny correction)


def _solve_pgt1(Phi, y, om, p, method: str = "auto", gram_factor=None):
    """p > 1: damped Newton on the n-dimensional smooth dual; cvxpy + Clarabel if Newton stalls or if asked."""
    if not np.any(y):
        return np.zeros(Phi.shape[1]), np.zeros(Phi.shape[0]), "trivial (y = 0)"
    if method in ("auto", "newton"):
        # Solve for y / max|y| (b scales like y, ν like max|y|^(p−1)) so that the stopping rules,
        # which have absolute floors, see O(1) data whatever the units of y.
        sy = float(np.max(np.abs(y)))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            nu, ok = _dual_newton(_ray_start(Phi, y / sy, om, p, gram_factor), Phi, y / sy, om, p)
            nu = nu * sy ** (p - 1)
            b = _primal_from_dual(nu, Phi, y, om, p)
        primal = math.fsum(om * np.abs(b) ** p)
        certified = ok and np.all(np.isfinite(b)) and primal - dual_objective(nu, Phi, y, om, p) <= 1e-8 * primal
        if certified or method == "newton":
            return b, nu, "dual Newton (n×n normal equations)" + ("" if certified else ", NOT converged")
    return _solve_pgt1_conic(Phi, y, om, p)


def _solve_pgt1_conic(Phi, y, om, p):
    import cvxpy as cp

    m = Phi.shape[1]
    bvar = cp.Variable(m)
    cons = [Phi @ bvar == y]
    prob = cp.Problem(cp.Minimize(om @ cp.power(cp.abs(bvar), p, approx=False)), cons)
    try:
        prob.solve(solver="CLARABEL")  # default tolerances; the dual Newton polish does the rest
    except cp.error.SolverError as exc:
        raise ValueError(f"flattest interpolator power-cone program failed: {exc}") from None
    if prob.status not in ("optimal", "optimal_inaccurate") or cons[0].dual_value is None:
        raise ValueError(f"flattest interpolator power-cone program: status {prob.status}")
    nu0 = np.asarray(cons[0].dual_value, dtype=float)
    nu0 = max((nu0, -nu0), key=lambda v: dual_objective(v, Phi, y, om, p))  # sign convention agnostic
    nu = _dual_newton(nu0, Phi, y, om, p)[0]
    b = _primal_from_dual(nu, Phi, y, om, p)
    b_cvx = np.asarray(bvar.value, dtype=float)
    b_cvx = lstsq_correct(Phi, y, b_cvx)
    obj = lambda bb: float(om @ np.abs(bb) ** p)
    return (b if obj(b) <= obj(b_cvx) else b_cvx), nu, "cvxpy+clarabel (power cone), dual Newton polish"


_RANK_MARGIN = 2.0  # the Cholesky path accepts rank n only when σ_n(Φ̄) > 2 × matrix_rank's tolerance


def full_rank_check(Phi) -> tuple[int, tuple | None, str]:
    r"""rank(Φ̄) as ``np.linalg.matrix_rank`` decides it, with the SVD replaced by a Cholesky of ΦΦᵀ when that suffices.

    Returns (rank, factor, how): ``factor`` is the ``cho_factor`` of fl(Φ̄Φ̄ᵀ) (``Phi @ Phi.T``, unshifted) when
    the Cholesky path decided rank n, for the solvers to reuse, else None.

    The Cholesky path (one n×n product ``Phi @ Phi.T``, which the interior point and the p > 1 ray start need
    anyway, its factor and a triangular inverse: 0.5 s CPU at n = 10³, m = 10⁴ against 2.3 s for matrix_rank's
    SVD and 3.5–5.6 s for a column-pivoted QR, one thread) proves a lower bound on σ_n(Φ̄) and accepts rank n
    only when it exceeds ``_RANK_MARGIN`` × an upper bound on matrix_rank's tolerance
    :math:`\sigma_1\max(n,m)\,\varepsilon` (σ₁ ≤ ‖Φ̄‖_F). The bound, for the computed factor R̂ and the computed
    inverse X ≈ R̂⁻¹ (Higham, *Accuracy and Stability*: §3.5 for the product, Thm 10.3 for Cholesky, §14 for
    the triangular inverse): fl(Φ̄Φ̄ᵀ) = Φ̄Φ̄ᵀ + E with ‖E‖₂ ≤ γ_m‖Φ̄‖_F², R̂ᵀR̂ = fl(Φ̄Φ̄ᵀ) + F with
    ‖F‖₂ ≤ γ_{n+1}‖R̂‖_F², and |XR̂ − I| ≤ c_n u|X||R̂| gives σ_n(R̂) ≥ 1/‖R̂⁻¹‖_F ≥ 1/(2‖X‖_F) once
    c_n u‖R̂‖_F‖X‖_F ≤ ½ (required with c_n u = γ_{n²}, a generous constant for the blocked inverse), so that
    :math:`\sigma_n(\bar\Phi)^2\ge 1/(2\|X\|_F)^2-2(\gamma_m\|\bar\Phi\|_F^2+\gamma_{n+1}\|\hat R\|_F^2)`
    (the factor 2 on the rounding terms covers the rounding of the bound itself). Then the computed
    singular value σ̂_n (within p·u·σ₁ of σ_n for a backward stable SVD, p < 2 max(n,m)) is above the tolerance
    too: both paths say rank n. Everything else (m < n, a failed or inconclusive Cholesky, which happens for
    cond Φ̄ ≳ 1e6 where the Gram matrix's rounding γ_m‖Φ̄‖_F² is comparable to σ_n², and every rank-deficient
    Φ̄) falls back to ``np.linalg.matrix_rank``: the decision is the SVD's own wherever the proof does not
    reach, and otherwise one the SVD provably shares.
    """
    n, m = Phi.shape
    if m >= n > 0:
        u = 2.0**-53
        gamma = lambda k: k * u / (1 - k * u)  # noqa: E731
        G = Phi @ Phi.T
        try:
            factor = sla.cho_factor(G, lower=False, check_finite=False)
        except np.linalg.LinAlgError:
            factor = None
        if factor is not None:
            R = np.triu(factor[0])  # cho_factor leaves the other triangle unspecified
            Xinv, info = sla.lapack.dtrtri(R, lower=0)
            fro2 = float(np.einsum("ij,ij->", Phi, Phi))
            r_f, x_f = float(np.linalg.norm(R)), float(np.linalg.norm(np.triu(Xinv)))
            tol_hi = math.sqrt(fro2) * max(n, m) * np.finfo(float).eps
            if info == 0 and math.isfinite(x_f) and x_f > 0 and gamma(n * n) * r_f * x_f <= 0.5:
                lam_lo = 1.0 / (2.0 * x_f) ** 2 - 2.0 * (gamma(m) * fro2 + gamma(n + 1) * r_f**2)
                if lam_lo > (_RANK_MARGIN * tol_hi) ** 2:
                    return n, factor, (f"Cholesky of ΦΦᵀ: σ_n ≥ {math.sqrt(lam_lo):.3g} > "
                                       f"{_RANK_MARGIN:g} × {tol_hi:.3g} (matrix_rank's tolerance, bounded)")
    rank = int(np.linalg.matrix_rank(Phi)) if Phi.size else 0
    return rank, None, "SVD (np.linalg.matrix_rank)"


FlattestMethod = Literal["auto", "ipm", "highs", "newton", "clarabel"]
_P1_METHODS, _PGT1_METHODS = ("ipm", "highs"), ("newton", "clarabel")


def flattest_outer_weights(Theta, X, y, activation, *, method: FlattestMethod = "auto") -> FlattestResult:
    r"""Outer weights of least Υ among all interpolators with the directions of Theta.

    Solves :math:`\min_b\sum_j\omega_j|b_j|^p` s.t. :math:`\bar\Phi b=y` and returns :math:`a_j=b_j/\|\theta_j\|^c`.
    p = 1 is a weighted basis pursuit LP: ``method="auto"``/``"ipm"`` solve it with the normal-equation
    interior point of :mod:`numerics.flat.weighted_l1` plus a crossover to an optimal vertex (7 s at n = 10³,
    m = 10⁴); ``"highs"`` uses scipy's HiGHS on the split form (the independent cross-check; slow beyond
    n·m ≈ 10⁶). p > 1 is solved on its smooth n-dimensional dual by damped Newton (``"newton"``; n×n
    normal equations, 8 s at n = 10³, m = 10⁴); ``"auto"`` keeps it when its certified gap is ≤ 1e-8
    relative and otherwise falls back to ``"clarabel"``: the power-cone program (cvxpy + Clarabel) with a
    dual Newton polish (the independent cross-check; 196 s at n = 10³, m = 3·10³). The dual point
    ν is made exactly feasible (p = 1: scaled into :math:`|\bar\Phi^\top\nu|\le\omega`, with a 1e-12 slack for
    float64 rounding; p > 1: every ν is feasible), so ``dual_value`` is a certified lower bound.

    Raises ValueError when no interpolator exists with these directions (m < n or Φ̄ rank-deficient, rank as
    ``np.linalg.matrix_rank`` decides it: :func:`full_rank_check`, whose Cholesky of Φ̄Φ̄ᵀ the solvers reuse).

    Example:
        >>> rng = np.random.default_rng(1)
        >>> X, Theta = rng.standard_normal((5, 3)), rng.standard_normal((12, 3))
        >>> res = flattest_outer_weights(Theta, X, X[:, 0] ** 2, "relu")
        >>> res.p, res.dual_value <= res.value, res.rel_gap < 1e-8
        (1.0, True, True)
    """
    if method not in ("auto", *_P1_METHODS, *_PGT1_METHODS):
        raise ValueError(f"method: expected one of 'auto', 'ipm', 'highs' (p = 1), 'newton', 'clarabel' (p > 1); "
                         f"got {method!r}")
    act = get_activation(activation)
    if method in (_PGT1_METHODS if act.p == 1 else _P1_METHODS):
        raise ValueError(f"method={method!r} is for p {'> 1' if act.p == 1 else '= 1'}, but {act.name} has "
                         f"c = {act.c:g}, p = {act.p:g}")
    v = check_inputs(Theta=Theta, X=X, y=y)
    n, m = v["X"].shape[0], v["Theta"].shape[0]
    inv = invariant_form(v["Theta"], v["X"], act)
    live = np.flatnonzero(inv.omega > 0)
    Phi, om = inv.Phibar[:, live], inv.omega[live]
    rank, gram, rank_how = full_rank_check(Phi) if live.size else (0, None, "no live direction")
    if m < n or rank < n:
        why = f"m = {m} < n = {n} directions" if m < n else f"the {n}×{m} feature matrix Φ̄ has rank {rank} < n"
        raise ValueError(f"no interpolator for every y with these directions: {why}. Use at least n directions in "
                         "general position (for the quadratic activation, n ≤ d(d+1)/2)")
    p = inv.p
    if p == 1:
        bl, nu, solver = solve_p1(Phi, v["y"], om, method, gram_factor=gram)
    else:
        bl, nu, solver = _solve_pgt1(Phi, v["y"], om, p, method, gram_factor=gram)
    b = np.zeros(m)
    b[live] = bl
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_ = np.where(b == 0, 0.0, b / inv.norms**act.c)  # an unused direction gets 0, whatever its norm
    bad = np.flatnonzero(~np.isfinite(a_))
    if bad.size:  # ‖θ_j‖^c under- or overflowed float64: a_j = b_j/‖θ_j‖^c is not representable
        j = int(bad[0])
        raise ValueError(f"the flattest outer weight of direction {j} (‖θ_{j}‖ = {inv.norms[j]:.3e}) is b_j/‖θ_j‖^c "
                         f"with b_j = {b[j]:.3e}, which is not a finite float64; rescale Theta (the directions, "
                         "and hence Υ and the flattest b, do not depend on the scale)")
    # Υ in the scale-free variables b (equal to upsilon(a_, Θ) to rounding, which overflows for tiny θ_j)
    value = float(np.sum(inv.omega * np.abs(b) ** p))
    dual = dual_objective(nu, Phi, v["y"], om, p)
    if p > 1 and value - dual > 1e-8 * abs(value) and Phi.size <= 200_000:   # arb: ~1 µs per entry of Φ̄
        # the float64 certificate falls short (an ill-conditioned Φ̄: its rounding allowance dominates): the same ν
        # in ball arithmetic, then ν polished by Newton in mpmath (small n), each certified in arb
        dual = max(dual, dual_objective_arb(nu, Phi, v["y"], om, p))
        if value - dual > 1e-8 * abs(value) and Phi.shape[0] <= 40 and Phi.shape[1] <= 400:
            nu_p, bl_p = _polish_dual_mp(nu, Phi, v["y"], om, p)
            d_p = dual_objective_arb(nu_p, Phi, v["y"], om, p)
            if d_p > dual:
                dual, nu = d_p, nu_p
                solver += "; ν polished in mpmath, certified in arb"
                # the primal of the polished ν: used when it interpolates as well as the float solution does
                b_p = np.zeros(m)
                b_p[live] = bl_p
                res_old = float(np.max(np.abs(Phi @ b[live] - v["y"])))
                if float(np.max(np.abs(Phi @ bl_p - v["y"]))) <= max(res_old, 1e-13 * float(np.max(np.abs(v["y"])))):
                    val_p = float(np.sum(inv.omega * np.abs(b_p) ** p))
                    if val_p < value:
                        b, value = b_p, val_p
                        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                            a_ = np.where(b == 0, 0.0, b / inv.norms**act.c)
    if value - dual > 1e-8 * abs(value) and live.size == n and n <= UNIQUE_EXACT_MAX_N:
        # a square Φ̄ (live directions = samples) that is exactly nonsingular has one interpolator: Υ* is its Υ, and
        # the float solvers, on a nearly singular Φ̄ (near-duplicate samples), stop on its near-null line
        uq = _unique_interpolator_exact(Phi, v["y"], om, p)
        if uq is not None:
            b = np.zeros(m)
            b[live], dual = uq
            value = float(np.sum(inv.omega * np.abs(b) ** p))
            solver += "; the unique interpolator, solved exactly (Φ̄ square, nonsingular in rationals)"
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                a_ = np.where(b == 0, 0.0, b / inv.norms**act.c)
    resid = float(np.max(np.abs(network(a_, v["Theta"], v["X"], act) - v["y"])))
    return FlattestResult(a_, b, value, dual, nu, p, inv.omega, resid, solver,
                          {"rank": int(rank), "rank_check": rank_how, "live": int(live.size)})
