r"""Derivations for the flatness of homogeneous two-layer nets (SPEC §2; Vardhan, Taheri, Mazumdar 2026).

Everything here starts from a definition and lets SymPy do the algebra:

* **Homogeneity.** From :math:`\sigma(\lambda t) = \lambda^c\sigma(t)` for an *abstract* function,
  differentiating in :math:`t` gives :math:`\sigma'(\lambda t) = \lambda^{c-1}\sigma'(t)`; the rescaling
  :math:`(a_j,\theta_j)\mapsto(\lambda^{-c}a_j,\lambda\theta_j)` leaves :math:`h` unchanged.
* **Trace.** :math:`F_S = \frac1{2n}\sum_i (h(w,x_i)-y_i)^2` is built symbolically for small
  :math:`(n,d,m)`; ``sympy.hessian`` gives its trace, which must equal
  :math:`\sum_j (A_j + a_j^2 B_j) + \frac1n\sum_i r_i\sum_j a_j\sigma''(\theta_j\cdot x_i)\|x_i\|^2`.
  ReLU / LeakyReLU / ReLU\ :sup:`c` are handled on a fixed activation pattern (where they are smooth);
  :math:`|t|^c = (t^2)^{c/2}` and :math:`t^2` directly.
* **Υ.** The scaling exponents of :math:`A_j, B_j, a_j^2` under the rescaling are *computed*
  (:math:`\lambda\,\partial_\lambda\log`), the stationarity equation of the rescaled neuron trace is
  solved, the second derivative is shown positive there, the value is substituted back, and
  :math:`p`, the exponents of :math:`A, B` and :math:`K_c` are read off by logarithmic derivatives.
* **Invariant form, conjugate, duals.** :math:`\Upsilon = \sum_j\omega_j|b_j|^p`, the convex conjugate of
  :math:`\omega|t|^p` from its own stationarity equation, Fenchel–Young (weak duality) and its equality
  case (strong duality), for :math:`p>1` and :math:`p=1`.
* **Gaussian kernels** for the population loss: :math:`\mathbb E[z_+^e]` and the degree-1/2 arc-cosine
  kernels from polar integrals.

``artifacts()`` turns the derived expressions into ``numerics/_derived/flat.py`` (which the numerics
import) and ``proofs/latex/flat.tex``.

References:
    Vardhan, Taheri, Mazumdar (2026), arXiv 2606.04429.
    Cho & Saul (2009), Kernel methods for deep learning, NeurIPS (arc-cosine kernels).
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import sympy as sp
from sympy.printing.pycode import PythonCodePrinter

from proofs._common import HEADER, Artifact, is_zero, latex_doc

c = sp.Symbol("c", positive=True)
A, B = sp.symbols("A B", positive=True)
a = sp.Symbol("a", positive=True)  # |a_j|: the neuron trace only sees a_j^2 = |a_j|^2
lam = sp.Symbol("lambda", positive=True)
r = sp.Symbol("r", positive=True)  # ||theta_j||
Abar, Bbar, omega = sp.symbols("Abar Bbar omega", positive=True)
s = sp.Symbol("s", positive=True)  # |(Phi^T nu)_j|
t = sp.Symbol("t", positive=True)
p = sp.Symbol("p", positive=True)
z = sp.Symbol("z", positive=True)
phi = sp.Symbol("phi", positive=True)  # angle between two directions, in (0, pi)

FAMILIES = ("relu", "leaky_relu", "quadratic", "relu_power", "abs_power")


def _pos_ratio_is_one(lhs: sp.Expr, rhs: sp.Expr) -> bool:
    """lhs == rhs for expressions of positive symbols: log(lhs/rhs) expands to exactly 0."""
    if is_zero(lhs - rhs):
        return True
    return sp.simplify(sp.expand_log(sp.log(sp.powsimp(lhs / rhs, force=True)), force=True)) == 0


# ---------------------------------------------------------------------------------------------------
# Homogeneity and rescaling invariance
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HomogeneityResult:
    """σ′ is (c−1)-homogeneous (abstract σ) and h is rescaling invariant (each family, both signs)."""

    sigma_prime_identity: sp.Expr  # sigma'(lambda t) expressed through sigma'(t)
    derivative_ok: bool
    invariance: dict[str, bool]

    @property
    def ok(self) -> bool:
        return self.derivative_ok and all(self.invariance.values())


def piece(family: str, sign: int, zz: sp.Expr, cc: sp.Expr = c, slope: sp.Expr | None = None) -> sp.Expr:
    """σ restricted to sign(z) = ``sign``: the smooth branch used on a fixed activation pattern."""
    slope = sp.Symbol("beta", positive=True) if slope is None else slope
    pw = (zz**2) ** (cc / 2)  # |z|^c, smooth away from 0
    table = {
        "relu": (zz, sp.Integer(0)),
        "leaky_relu": (zz, slope * zz),
        "quadratic": (zz**2, zz**2),
        "relu_power": (pw, sp.Integer(0)),
        "abs_power": (pw, pw),
    }
    return table[family][0 if sign > 0 else 1]


def family_degree(family: str) -> sp.Expr:
    return {"relu": sp.Integer(1), "leaky_relu": sp.Integer(1), "quadratic": sp.Integer(2)}.get(family, c)


@functools.lru_cache(maxsize=1)
def derive_homogeneity() -> HomogeneityResult:
    sig = sp.Function("sigma")
    tt = sp.Symbol("t", real=True)
    # d/dt [sigma(lambda t)] = d/dt [lambda^c sigma(t)]  =>  lambda sigma'(lambda t) = lambda^c sigma'(t)
    lhs = sp.diff(sig(lam * tt), tt)  # lambda * Subs(Derivative(sigma(u), u), u, lambda t)
    rhs = sp.diff(lam**c * sig(tt), tt)
    dsig_at_lt = sp.solve(sp.Eq(lhs, rhs), lhs / lam)  # solve for sigma'(lambda t)
    identity = sp.simplify(dsig_at_lt[0]) if dsig_at_lt else sp.nan
    expected = lam ** (c - 1) * sp.diff(sig(tt), tt)
    derivative_ok = bool(dsig_at_lt) and is_zero(identity - expected)
    # Rescaling invariance, branch by branch: a lambda^{-c} sigma(lambda z) = a sigma(z) on z > 0 and z < 0.
    inv = {}
    aa = sp.Symbol("a_j", real=True)
    for fam in FAMILIES:
        cc = family_degree(fam)
        ok = True
        for sign in (1, -1):
            zz = sign * z  # z > 0 symbol; the branch argument has the branch's sign
            e = aa * lam ** (-cc) * piece(fam, sign, lam * zz, cc) - aa * piece(fam, sign, zz, cc)
            e = sp.powsimp(sp.powdenest(sp.expand_power_base(e, force=True), force=True), force=True)
            ok = ok and is_zero(e)
        inv[fam] = ok
    return HomogeneityResult(identity, derivative_ok, inv)


# ---------------------------------------------------------------------------------------------------
# Trace of the Hessian of F_S against sympy.hessian
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceCase:
    family: str
    n: int
    d: int
    m: int
    general_zero: bool  # trace(hessian F_S) - [sum_j (A_j + a_j^2 B_j) + residual term] == 0
    interpolating_zero: bool  # the same at y_i = h(x_i), where the residual term vanishes
    params: int
    seconds: float


@dataclass(frozen=True)
class TraceCheck:
    cases: tuple[TraceCase, ...]

    @property
    def checked(self) -> int:
        return 2 * len(self.cases)

    @property
    def zeros(self) -> int:
        return sum(cs.general_zero + cs.interpolating_zero for cs in self.cases)

    @property
    def ok(self) -> bool:
        return self.zeros == self.checked and self.checked > 0


def _pattern(i: int, j: int) -> int:
    """A fixed mixed activation pattern (both signs occur for n, m >= 2)."""
    return 1 if (i + 2 * j) % 3 != 2 else -1


def trace_case(family: str, n: int, d: int, m: int, cc: sp.Expr | None = None) -> TraceCase:
    """One size: build F_S from its definition, take ``sympy.hessian`` and compare with the closed form."""
    t0 = time.perf_counter()
    cc = family_degree(family) if cc is None else cc
    X = sp.Matrix(n, d, lambda i, k: sp.Symbol(f"x_{i}{k}", real=True))
    y = [sp.Symbol(f"y_{i}", real=True) for i in range(n)]
    th = sp.Matrix(m, d, lambda j, k: sp.Symbol(f"theta_{j}{k}", real=True))
    av = [sp.Symbol(f"a_{j}", real=True) for j in range(m)]
    params = list(av) + list(th)
    u = sp.Symbol("u", real=True)

    def sig(i, j, e):  # sigma evaluated on the pattern branch at expression e
        return piece(family, _pattern(i, j), u, cc).subs(u, e)

    def dsig(i, j, e, k):  # k-th derivative of the branch, then evaluated
        return sp.diff(piece(family, _pattern(i, j), u, cc), u, k).subs(u, e)

    zs = [[(th[j, :] * X[i, :].T)[0] for j in range(m)] for i in range(n)]
    h = [sum(av[j] * sig(i, j, zs[i][j]) for j in range(m)) for i in range(n)]
    F = sum((h[i] - y[i]) ** 2 for i in range(n)) / (2 * n)
    tr_hess = sp.hessian(F, params).trace()
    xn2 = [sum(X[i, k] ** 2 for k in range(d)) for i in range(n)]
    Aj = [sum(sig(i, j, zs[i][j]) ** 2 for i in range(n)) / n for j in range(m)]
    Bj = [sum(dsig(i, j, zs[i][j], 1) ** 2 * xn2[i] for i in range(n)) / n for j in range(m)]
    resid = sum((h[i] - y[i]) * sum(av[j] * dsig(i, j, zs[i][j], 2) for j in range(m)) * xn2[i]
                for i in range(n)) / n
    closed = sum(Aj[j] + av[j] ** 2 * Bj[j] for j in range(m))
    general = is_zero(tr_hess - closed - resid)
    interp = {y[i]: h[i] for i in range(n)}
    interpolating = is_zero(tr_hess.subs(interp) - closed)
    return TraceCase(family, n, d, m, general, interpolating, len(params), time.perf_counter() - t0)


TRACE_SIZES = ((1, 1, 1), (2, 1, 2), (1, 2, 2), (2, 2, 2))


@functools.lru_cache(maxsize=4)
def check_trace_against_hessian(sizes: tuple[tuple[int, int, int], ...] = TRACE_SIZES,
                                families: tuple[str, ...] = FAMILIES) -> TraceCheck:
    """Every family at every size: the closed-form trace minus ``trace(sympy.hessian(F_S))`` is 0.

    Block structure for the general size: ``hessian(F_S)`` is a sum over samples of
    ``g_i g_i^T + r_i H_i`` with ``g_i = grad h_i``; its diagonal only couples (a_j, theta_j) of one neuron
    with itself, so the per-neuron, per-sample terms checked here are the terms of every larger size.
    """
    cases = [trace_case(fam, *size) for fam in families for size in sizes]
    return TraceCheck(tuple(cases))


# ---------------------------------------------------------------------------------------------------
# Upsilon: the minimum of the trace over rescalings
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpsilonDerivation:
    exponents: dict[str, sp.Expr]  # scaling exponents of A, B, a^2 under the rescaling
    neuron_trace: sp.Expr  # lambda^{2c} A + lambda^{-2} a^2 B (assembled from the exponents)
    lambda_opt: sp.Expr  # the unique positive stationary point
    lambda_pow: sp.Expr  # lambda_opt^{2c+2}
    second_derivative: sp.Expr
    upsilon_neuron: sp.Expr  # the minimum value, K A^eA B^eB |a|^p (shown equal to f(lambda_opt))
    p: sp.Expr
    exp_A: sp.Expr
    exp_B: sp.Expr
    K: sp.Expr
    checks: dict[str, bool] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


def _scaling_exponent(expr: sp.Expr) -> sp.Expr:
    """k with expr(lambda) = lambda^k expr(1): lambda d/dlambda log(expr), simplified."""
    return sp.simplify(sp.expand_log(lam * sp.diff(sp.log(expr), lam), force=True))


@functools.lru_cache(maxsize=1)
def derive_upsilon() -> UpsilonDerivation:
    checks: dict[str, bool] = {}
    # Scaling of A_j (sigma^2), B_j (sigma'^2 ||x||^2) and a_j^2 under theta -> lambda theta,
    # a -> lambda^{-c} a, computed on the branch sigma(z) = z^c, z > 0 (the other branch is the same
    # up to the constant factor, which cancels in the exponent).
    sig = z**c
    e_A = _scaling_exponent(sig.subs(z, lam * z) ** 2)
    e_B = _scaling_exponent(sp.diff(sig, z).subs(z, lam * z) ** 2)
    e_a2 = _scaling_exponent((lam ** (-c) * a) ** 2)
    f = lam**e_A * A + lam ** (e_a2 + e_B) * a**2 * B
    checks["exponents (2c, 2c-2, -2c)"] = is_zero(e_A - 2 * c) and is_zero(e_B - (2 * c - 2)) and is_zero(
        e_a2 + 2 * c)
    df = sp.diff(f, lam)
    sols = sp.solve(sp.Eq(df, 0), lam)
    checks["unique positive stationary point"] = len(sols) == 1
    lo = sols[0]
    lam_pow = sp.simplify(sp.powdenest(lo ** (2 * c + 2), force=True))
    checks["lambda^(2c+2) = a^2 B/(c A)"] = _pos_ratio_is_one(lam_pow, a**2 * B / (c * A))
    f2 = sp.simplify(sp.diff(f, lam, 2).subs(lam, lo))
    checks["second derivative > 0"] = bool(f2.is_positive)
    # f -> +inf at both ends, so the unique stationary point is the global minimum
    checks["coercive at 0 and infinity"] = (sp.limit(f, lam, 0, "+") == sp.oo) and (
        sp.limit(f.subs(c, 1), lam, sp.oo) == sp.oo)
    U = sp.simplify(sp.powsimp(sp.powdenest(f.subs(lam, lo), force=True), force=True))  # as SymPy gives it
    logU = sp.log(U)
    pexp = sp.simplify(sp.expand_log(a * sp.diff(logU, a), force=True))
    eA = sp.simplify(sp.expand_log(A * sp.diff(logU, A), force=True))
    eB = sp.simplify(sp.expand_log(B * sp.diff(logU, B), force=True))
    K = sp.simplify(U.subs({A: 1, B: 1, a: 1}))
    closed = K * A**eA * B**eB * a**pexp  # the derived pieces, reassembled (well defined at a = 0)
    checks["Upsilon_j = K A^eA B^eB |a|^p"] = _pos_ratio_is_one(U, closed)
    checks["p = 2c/(c+1)"] = is_zero(pexp - 2 * c / (c + 1))
    checks["K_c = (c+1) c^(-c/(c+1))"] = _pos_ratio_is_one(K, (c + 1) * c ** (-c / (c + 1)))
    checks["p, eA, eB consistent with scaling (p = 2 eB)"] = is_zero(pexp - 2 * eB) and is_zero(eA + eB - 1)
    return UpsilonDerivation({"A": e_A, "B": e_B, "a^2": e_a2}, f, lo, lam_pow, f2, closed, pexp, eA, eB, K,
                             checks)


# ---------------------------------------------------------------------------------------------------
# Invariant form, conjugate and duality
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DualityDerivation:
    omega: sp.Expr  # omega_j in terms of Abar, Bbar
    conjugate: sp.Expr  # (omega |.|^p)^*(s), s >= 0
    argmax: sp.Expr  # the maximiser t*(s) >= 0
    checks: dict[str, bool]

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


@functools.lru_cache(maxsize=1)
def derive_duality() -> DualityDerivation:
    ud = derive_upsilon()
    checks: dict[str, bool] = {}
    # Invariant variables: theta = r thetabar, A = r^{2c} Abar, B = r^{2c-2} Bbar (exponents from above),
    # b = a r^c. Then Upsilon_j = omega_j |b_j|^p with omega_j = K Abar^eA Bbar^eB.
    eA_, eB_ = ud.exponents["A"], ud.exponents["B"]
    Uj = ud.upsilon_neuron.subs({A: r**eA_ * Abar, B: r**eB_ * Bbar, a: t / r**c}, simultaneous=True)
    om_r = sp.simplify(Uj.subs(t, 1))
    checks["omega_j does not depend on ||theta_j||"] = sp.simplify(
        sp.expand_log(r * sp.diff(sp.log(om_r), r), force=True)) == 0
    om = sp.simplify(om_r.subs(r, 1))
    checks["Upsilon_j = omega_j |b_j|^p"] = _pos_ratio_is_one(Uj, om * t**ud.p)
    checks["omega_j = K Abar^(1/(c+1)) Bbar^(c/(c+1))"] = _pos_ratio_is_one(
        om, ud.K * Abar**ud.exp_A * Bbar**ud.exp_B)
    # Convex conjugate g*(s) = sup_t s t - omega t^p (t >= 0 suffices for s >= 0; even in s by symmetry).
    obj = s * t - omega * t**p
    tst = sp.solve(sp.Eq(sp.diff(obj, t), 0), t)
    checks["conjugate: unique stationary point"] = len(tst) == 1
    tstar = tst[0]
    conj = sp.simplify(sp.powsimp(obj.subs(t, tstar), force=True))
    q = p / (p - 1)
    target = (p - 1) * omega * (s / (p * omega)) ** q
    pgt1 = {p: 1 + sp.Symbol("e", positive=True)}  # p > 1
    checks["g*(s) = (p-1) omega (|s|/(p omega))^q"] = _pos_ratio_is_one(conj.subs(pgt1), target.subs(pgt1))
    f2 = sp.simplify(sp.diff(obj, t, 2).subs(t, tstar).subs(pgt1))
    checks["conjugate: maximum (second derivative < 0)"] = bool(f2.is_negative)
    # Fenchel-Young: omega t^p + g*(s) - s t >= 0, with equality exactly at t = t*(s) (strong duality:
    # the primal b_j(nu) = t*((Phi^T nu)_j) makes primal and dual values equal once Phi b = y).
    fy = (omega * t**p + conj - s * t).subs(pgt1)
    checks["Fenchel-Young equality at t*"] = is_zero(sp.simplify(fy.subs(t, tstar.subs(pgt1))))
    checks["Fenchel-Young: t* is its global minimiser (convex in t)"] = bool(
        sp.simplify(sp.diff(fy, t, 2)).is_positive)
    # p = 1: sup_t s t - omega |t| is 0 when s <= omega and +inf otherwise (the dual constraint).
    lin = (s - omega) * t
    checks["p=1: conjugate is the indicator of |s| <= omega"] = (
        sp.limit(lin.subs(s, omega / 2), t, sp.oo) == -sp.oo and sp.limit(lin.subs(s, 2 * omega), t, sp.oo)
        == sp.oo)
    # p(c) > 1 exactly when c > 1, and q = p/(p-1) = 2c/(c-1).
    checks["p > 1 iff c > 1"] = is_zero(ud.p - 1 - (c - 1) / (c + 1))
    return DualityDerivation(om, conj, tstar, checks)


# ---------------------------------------------------------------------------------------------------
# Gaussian moments and arc-cosine kernels (population loss)
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelDerivation:
    half_moment: sp.Expr  # E[z_+^e], z ~ N(0,1)
    relu_kernels: dict[int, sp.Expr]  # E[(u.x)_+^k (v.x)_+^k] for unit u, v at angle phi
    checks: dict[str, bool]

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


E_SYM = sp.Symbol("e", positive=True)


@functools.lru_cache(maxsize=1)
def derive_kernels() -> KernelDerivation:
    checks: dict[str, bool] = {}
    zz = sp.Symbol("zeta", positive=True)
    hm = sp.simplify(sp.integrate(zz**E_SYM * sp.exp(-zz**2 / 2), (zz, 0, sp.oo)) / sp.sqrt(2 * sp.pi))
    hm = sp.simplify(sp.gammasimp(hm))
    checks["E[z_+^e] = 2^(e/2-1) Gamma((e+1)/2)/sqrt(pi)"] = is_zero(
        sp.gammasimp(hm - 2 ** (E_SYM / 2 - 1) * sp.gamma((E_SYM + 1) / 2) / sp.sqrt(sp.pi)))
    checks["E[z^2] = 1, E[z^4] = 3 (from 2 E[z_+^k])"] = (
        sp.simplify(2 * hm.subs(E_SYM, 2)) == 1 and sp.simplify(2 * hm.subs(E_SYM, 4)) == 3)
    kernels = {}
    rr = sp.Symbol("rho_r", positive=True)
    ang = sp.Symbol("psi", real=True)
    for k in (1, 2):
        # polar coordinates in span(u, v): u = e_1, v = (cos phi, sin phi); both positive on
        # psi in (phi - pi/2, pi/2); density (1/2pi) r exp(-r^2/2) dr dpsi.
        radial = sp.integrate(rr ** (2 * k + 1) * sp.exp(-rr**2 / 2), (rr, 0, sp.oo))
        angular = sp.integrate(sp.expand(sp.cos(ang) ** k * sp.cos(ang - phi) ** k, trig=True),
                               (ang, phi - sp.pi / 2, sp.pi / 2))
        kernels[k] = sp.simplify(radial * angular / (2 * sp.pi))
    # Cross-check against Cho & Saul's J_1, J_2 (k_n = ||x||^n ||y||^n J_n / pi = 2 E[...]).
    J1 = sp.sin(phi) + (sp.pi - phi) * sp.cos(phi)
    J2 = 3 * sp.sin(phi) * sp.cos(phi) + (sp.pi - phi) * (1 + 2 * sp.cos(phi) ** 2)
    checks["k=1 equals Cho-Saul J_1/(2 pi)"] = is_zero(sp.expand_trig(kernels[1] - J1 / (2 * sp.pi)))
    checks["k=2 equals Cho-Saul J_2/(2 pi)"] = is_zero(sp.expand_trig(kernels[2] - J2 / (2 * sp.pi)))
    checks["phi=0 gives E[z_+^2k]"] = all(
        is_zero(sp.limit(kernels[k], phi, 0) - hm.subs(E_SYM, 2 * k)) for k in (1, 2))
    return KernelDerivation(hm, kernels, checks)


# ---------------------------------------------------------------------------------------------------
# Artifacts
# ---------------------------------------------------------------------------------------------------


class _NamespacePrinter(PythonCodePrinter):
    """Python code whose functions and exact rationals go through a namespace ``_m``.

    ``_m`` is numpy/scipy for float64 or mpmath for high precision, so one derived expression serves
    both without a float literal (like 1/3) silently capping the precision.
    """

    def _module_format(self, fqn, register=True):
        return "_m." + fqn.split(".")[-1]

    def _print_Rational(self, expr):
        return f"_m.rat({expr.p}, {expr.q})"

    def _print_Half(self, expr):
        return self._print_Rational(expr)


def _code(expr: sp.Expr) -> str:
    return _NamespacePrinter({"standard": "python3"}).doprint(expr)


def _func(name: str, args: tuple[sp.Symbol, ...], expr: sp.Expr, doc: str) -> str:
    argnames = ", ".join(str(x) for x in args)
    return (f"def {name}({argnames}, _m=NP):\n"
            f"    \"\"\"{doc}\"\"\"\n"
            f"    return {_code(expr)}\n")


_PREAMBLE = '''"""Closed forms derived in proofs/flat/core.py (SPEC section 2).

Every function takes a namespace ``_m`` of math functions: ``NP`` (numpy/scipy, float64, vectorised)
or ``numerics.flatness.MP`` (mpmath, any precision).
"""

import numpy as _np
from scipy import special as _special


class _Numpy:
    pi = _np.pi
    sqrt = staticmethod(_np.sqrt)
    sin = staticmethod(_np.sin)
    cos = staticmethod(_np.cos)
    gamma = staticmethod(_special.gamma)

    @staticmethod
    def rat(p, q):
        return p / q


NP = _Numpy()
'''


def _generated_code() -> str:
    ud = derive_upsilon()
    dd = derive_duality()
    kd = derive_kernels()
    abs_a = sp.Symbol("abs_a", positive=True)
    lam_c = sp.Symbol("lam", positive=True)  # "lambda" is a Python keyword
    parts = [
        _func("p_exponent", (c,), ud.p, "p = 2c/(c+1): exponent of |a_j| in Upsilon."),
        _func("k_const", (c,), ud.K, "K_c = (c+1) c^(-c/(c+1))."),
        _func("upsilon_neuron", (A, B, abs_a, c), ud.upsilon_neuron.subs(a, abs_a),
              "min over lambda > 0 of lambda^(2c) A + lambda^(-2) a^2 B."),
        _func("lambda_opt", (A, B, abs_a, c), ud.lambda_opt.subs(a, abs_a),
              "The minimising rescaling, lambda^(2c+2) = a^2 B/(c A)."),
        _func("neuron_trace", (A, B, abs_a, c, lam_c), ud.neuron_trace.subs({a: abs_a, lam: lam_c}),
              "Trace contribution of one neuron after the rescaling by lambda (at an interpolator)."),
        _func("omega_weight", (Abar, Bbar, c), dd.omega, "omega_j in Upsilon = sum_j omega_j |b_j|^p."),
        _func("conjugate_power", (s, omega, p), dd.conjugate,
              "(omega |.|^p)^*(s) for s = |s| >= 0, p > 1."),
        _func("conjugate_argmax", (s, omega, p), dd.argmax,
              "|t*| maximising s t - omega |t|^p (the primal weight recovered from a dual point)."),
        _func("half_moment", (E_SYM,), kd.half_moment, "E[z_+^e] for z ~ N(0, 1)."),
        _func("relu_kernel_1", (phi,), kd.relu_kernels[1],
              "E[(u.x)_+ (v.x)_+] for unit u, v at angle phi, x ~ N(0, I)."),
        _func("relu_kernel_2", (phi,), kd.relu_kernels[2],
              "E[(u.x)_+^2 (v.x)_+^2] for unit u, v at angle phi, x ~ N(0, I)."),
    ]
    return HEADER.format(source="proofs/flat/core.py") + _PREAMBLE + "\n\n" + "\n\n".join(parts)


def _latex() -> str:
    ud = derive_upsilon()
    dd = derive_duality()
    kd = derive_kernels()
    eq = lambda lhs, expr: f"{lhs} = {sp.latex(expr)}"
    return latex_doc("flatness of homogeneous two-layer nets (SPEC section 2)", [
        ("rescaled neuron trace", eq(r"T_j(\lambda)", ud.neuron_trace)),
        ("minimiser", eq(r"\lambda_j^{2c+2}", ud.lambda_pow)),
        ("second derivative at the minimiser", eq(r"T_j''(\lambda_j)", ud.second_derivative)),
        ("Upsilon per neuron", eq(r"\Upsilon_j", ud.upsilon_neuron)),
        ("exponent p", eq("p", ud.p)),
        ("constant K_c", eq("K_c", ud.K)),
        ("invariant weight", eq(r"\omega_j", dd.omega)),
        ("convex conjugate of omega |t|^p", eq(r"(\omega|\cdot|^p)^*(s)", dd.conjugate)),
        ("dual, p > 1", r"\max_\nu\ \nu^\top y-(p-1)\sum_j\omega_j\Bigl(\frac{|(\bar\Phi^\top\nu)_j|}"
                        r"{p\,\omega_j}\Bigr)^{p/(p-1)}"),
        ("dual, p = 1", r"\max_\nu\ \nu^\top y\quad\text{s.t.}\quad|(\bar\Phi^\top\nu)_j|\le\omega_j"),
        ("half moment", eq(r"\mathbb E[z_+^e]", kd.half_moment)),
        ("arc-cosine kernel, degree 1", eq(r"\mathbb E[(u\cdot x)_+(v\cdot x)_+]", kd.relu_kernels[1])),
        ("arc-cosine kernel, degree 2", eq(r"\mathbb E[(u\cdot x)_+^2(v\cdot x)_+^2]", kd.relu_kernels[2])),
    ])


def artifacts() -> list[Artifact]:
    for name, res in (("upsilon", derive_upsilon()), ("duality", derive_duality()),
                      ("kernels", derive_kernels())):
        if not res.ok:
            bad = [k for k, v in res.checks.items() if not v]
            raise RuntimeError(f"flatness derivation {name} failed: {bad}")
    return [Artifact("numerics/_derived/flat.py", _generated_code()),
            Artifact("proofs/latex/flat.tex", _latex())]
