r"""Claims flat.* (SPEC §2): Vardhan, Taheri, Mazumdar 2026, arXiv 2606.04429.

Each claim: its statement, then one small function per evidence level (S here and in
``proofs/flatness.py``; P, A here against ``checks/flatness_reference.py``). The falsification
properties live in ``checks/flatness_properties.py`` and the experiments in
``checks/flatness_experiments.py``; both are imported at the bottom so that they register. The
experiments module also registers ``flat.upsilon_star`` (E), the SPEC's "beyond" item: a certified
two-sided bracket on Υ* in d = 2 and 3.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp

from checks import flatness_reference as ref
from checks.evidence import TOL, Outcome, digits_agreed, rel_err
from checks.registry import Context, claim
from numerics._derived import flat as derived
from numerics.flat import core as nf
from proofs.flat import core as pf

SYMMETRY = claim(
    "flat.symmetry",
    statement="The rescaling (a_j, θ_j) → (λ_j^{−c} a_j, λ_j θ_j), λ_j > 0, leaves h unchanged; σ′ is "
              "(c−1)-homogeneous.",
    latex=r"h(\lambda^{-c}a,\lambda\theta)=h(a,\theta),\quad\sigma'(\lambda t)=\lambda^{c-1}\sigma'(t)",
    levels="S, A, F",
)
TRACE = claim(
    "flat.trace",
    statement="Tr ∇²F_S = Σ_j (A_j + a_j² B_j) at an interpolator, plus (1/n) Σ_i r_i Σ_j a_j σ″(θ_j·x_i)‖x_i‖² "
              "away from one.",
    latex=r"\operatorname{Tr}\nabla^2F_S=\sum_j(A_j+a_j^2B_j)+\frac1n\sum_ir_i\sum_ja_j\sigma''(\theta_j"
          r"\cdot x_i)\|x_i\|^2",
    levels="S, P, A",
)
UPSILON = claim(
    "flat.upsilon",
    statement="min over rescalings of the trace at an interpolator is Υ = K_c Σ_j A_j^{1/(c+1)} B_j^{c/(c+1)} "
              "|a_j|^p, p = 2c/(c+1), K_c = (c+1)c^{−c/(c+1)}, attained at λ_j^{2c+2} = a_j²B_j/(cA_j); "
              "Υ ≤ the trace under any rescaling.",
    latex=r"\Upsilon=K_c\sum_jA_j^{\frac1{c+1}}B_j^{\frac c{c+1}}|a_j|^{\frac{2c}{c+1}},\ "
          r"K_c=(c+1)c^{-\frac c{c+1}}",
    levels="S, P, A, F",
)
DUALITY = claim(
    "flat.duality",
    statement="For fixed directions, min Σ ω_j|b_j|^p s.t. Φ̄b = y has the dual max νᵀy − Σ g_j*((Φ̄ᵀν)_j); "
              "weak duality always, strong duality at the optimum (gap ≤ 1e-8 relative).",
    latex=r"\nu^\top y-(p-1)\sum_j\omega_j\Bigl(\frac{|(\bar\Phi^\top\nu)_j|}{p\omega_j}\Bigr)^{\frac p{p-1}}"
          r"\le\sum_j\omega_j|b_j|^p",
    levels="S, P, F",
)
BAD = claim(
    "flat.bad",
    statement="Interpolators whose directions have alignment ≤ ρ with span(Θ*) stay orderwise sharper than "
              "the flattest; the ratio grows with n roughly like n^{c/(c+1)}.",
    latex=r"\Upsilon(w_{\rm bad})/\Upsilon(w_\flat)\gtrsim n^{c/(c+1)}",
    levels="E",
)
GENERALIZE = claim(
    "flat.generalize",
    statement="Single-index and sum-of-single-index targets, ReLU/LeakyReLU/quadratic: low flatness goes with "
              "low population loss.",
    latex=r"\rho_s\bigl(\Upsilon(w),\,\mathcal L(w)\bigr)>0",
    levels="E",
)
APPROX = claim(
    "flat.approx",
    statement="When the net cannot represent f*, the flattest interpolator does not generalise.",
    latex=r"f^*\notin\mathcal H\ \Rightarrow\ \mathcal L(w_\flat)\not\to\sigma^2",
    levels="E",
)
POPULATION = claim(
    "flat.population",
    statement="The exact Gaussian population loss (arc-cosine kernels for ReLU/LeakyReLU; moments for "
              "polynomials) matches quadrature and Monte Carlo.",
    latex=r"\tfrac12\mathbb E_{x\sim N(0,I)}(h-f^*)^2=\tfrac12\bigl(a^\top Ka-2a^\top k+\mathbb E f^{*2}\bigr)",
    levels="S, P",
)

ACTS = ("relu", "leaky_relu:0.2", "quadratic", "relu_power:2", "relu_power:3", "abs_power:1.5",
        "abs_power:3")


def _cases(ctx: Context, salt: str, n: int, d: int, m: int, dyadic: bool = False):
    """One random (a, Theta, X, y) per activation; dyadic rationals when an exact reference needs them."""
    rng = ctx.rng(salt)
    for act in ACTS:
        draw = (lambda shape: ref.dyadic(rng, shape)) if dyadic else (lambda shape: rng.normal(size=shape))
        a = draw(m)
        yield act, np.where(a == 0, 0.5, a), draw((m, d)), draw((n, d)), draw(n)


# --------------------------------------------------------------------------------------------
# flat.symmetry


@SYMMETRY.level("S")
def _(ctx: Context) -> Outcome:
    res = pf.derive_homogeneity()
    ok = res.ok
    return Outcome(ok, {"families": len(res.invariance), "invariant": sum(res.invariance.values()),
                        "sigma_prime_identity": res.derivative_ok},
                   f"abstract σ: d/dt of σ(λt) = λ^c σ(t) gives σ′(λt) = {res.sigma_prime_identity} "
                   f"({'exact' if res.derivative_ok else 'FAILED'}); h invariant on both branches for "
                   f"{sum(res.invariance.values())}/{len(res.invariance)} families (symbolic c, λ > 0)",
                   details={"invariance": res.invariance})


@SYMMETRY.level("A")
def _(ctx: Context) -> Outcome:
    rng = ctx.rng("flat.symmetry/A")
    errs_h, errs_d = [], []
    for act, a, Th, X, _ in _cases(ctx, "flat.symmetry/A", 20, 3, 5):
        lam = np.exp(rng.uniform(-2, 2, size=a.shape))
        a2, Th2 = nf.rescale(a, Th, lam, act)
        errs_h.append(rel_err(ref.torch_network(a2, Th2, X, act), ref.torch_network(a, Th, X, act)))
        c = nf.get_activation(act).c
        t = rng.normal(size=50)
        for L in (0.3, 2.7):
            errs_d.append(rel_err(ref.torch_sigma_prime(act, L * t), L ** (c - 1) * ref.torch_sigma_prime(act, t)))
    worst = max(max(errs_h), max(errs_d))
    return Outcome(worst <= TOL["autograd_rel"], {"max_rel_err_h": max(errs_h), "max_rel_err_sigma_prime":
                                                 max(errs_d), "activations": len(ACTS)},
                   f"torch float64: h after random rescaling rel err {max(errs_h):.1e}; autograd σ′(λt) vs "
                   f"λ^(c−1)σ′(t) rel err {max(errs_d):.1e} ({len(ACTS)} activations, tol 1e-10)")


# --------------------------------------------------------------------------------------------
# flat.trace


@TRACE.level("S")
def _(ctx: Context) -> Outcome:
    res = pf.check_trace_against_hessian()
    sizes = sorted({(cs.n, cs.d, cs.m) for cs in res.cases})
    return Outcome(res.ok, {"checked": res.checked, "exact_zero": res.zeros, "families": len(pf.FAMILIES),
                            "max_params": max(cs.params for cs in res.cases)},
                   f"{res.zeros}/{res.checked} differences trace(sympy.hessian F_S) − closed form simplify to 0 "
                   f"(with residual term, and at y = h(X)); 5 families (symbolic c, slope), (n,d,m) ∈ {sizes}",
                   details={"cases": [cs.__dict__ for cs in res.cases]})


@TRACE.level("P")
def _(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    digits = []
    for act, a, Th, X, y in _cases(ctx, "flat.trace/P", 3, 2, 3, dyadic=True):
        exact = ref.exact_hessian_trace(a, Th, X, y, act, digits=dps + 10)
        with mpmath.workdps(dps):
            digits.append(digits_agreed(nf.flatness_trace_mp(a, Th, X, y, act, dps=dps), exact))
    worst = min(digits)
    return Outcome(worst >= TOL["precision_min_digits"], {"digits_agreed": worst, "cases": len(digits)},
                   f"closed form in mpmath (dps={dps}) vs exact sympy.hessian at dyadic data: ≥ {worst:.1f} digits "
                   f"({len(digits)} activations, n=3, d=2, m=3, residual term on)")


@TRACE.level("A")
def _(ctx: Context) -> Outcome:
    errs, errs_i = [], []
    for act, a, Th, X, y in _cases(ctx, "flat.trace/A", 25, 3, 4):
        errs.append(rel_err(nf.flatness_trace(a, Th, X, y, act), ref.torch_hessian_trace(a, Th, X, y, act)))
        yi = nf.network(a, Th, X, act)  # an interpolator of its own outputs: residual term vanishes
        parts = nf.trace_parts(a, Th, X, yi, act)
        errs_i.append(rel_err(parts.gauss_newton, ref.torch_hessian_trace(a, Th, X, yi, act)))
    worst = max(errs + errs_i)
    return Outcome(worst <= TOL["autograd_rel"], {"max_rel_err": max(errs), "max_rel_err_interpolating":
                                                 max(errs_i), "cases": len(errs)},
                   f"vs torch.func.hessian float64: rel err {max(errs):.1e} at random w, {max(errs_i):.1e} for "
                   f"Σ(A_j + a_j²B_j) at interpolators ({len(errs)} activations, n=25, d=3, m=4; tol 1e-10)")


# --------------------------------------------------------------------------------------------
# flat.upsilon


@UPSILON.level("S")
def _(ctx: Context) -> Outcome:
    ud = pf.derive_upsilon()
    return Outcome(ud.ok, {"steps": len(ud.checks), "exact": sum(ud.checks.values()), "p": str(ud.p),
                           "K_c": str(ud.K)},
                   f"{sum(ud.checks.values())}/{len(ud.checks)} steps exact: scaling exponents "
                   f"{ {k: str(v) for k, v in ud.exponents.items()} }, solve T′(λ)=0 → λ^(2c+2) = {ud.lambda_pow}, "
                   f"T″ > 0, p = {ud.p}, K_c = {ud.K} read off by log-derivatives",
                   details={k: bool(v) for k, v in ud.checks.items()})


@UPSILON.level("P")
def _(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    digits_u, digits_t = [], []
    for act, a, Th, X, _ in _cases(ctx, "flat.upsilon/P", 6, 2, 3, dyadic=True):
        spec = nf.get_activation(act)
        with mpmath.workdps(dps):
            md = nf._mp_data(a, Th, X)
            A_, B_, _, _ = nf._mp_moments(spec, md["Theta"], md["X"])
            refs = [ref.mp_min_rescaled_trace(A_[j], B_[j], mpmath.mpf(a[j]) ** 2, spec.c, dps)[0]
                    for j in range(len(a))]
            digits_u.append(digits_agreed(nf.upsilon_mp(a, Th, X, act, dps=dps), mpmath.fsum(refs)))
            # the trace after the optimal rescaling, from the exact sympy Hessian, equals Upsilon
            lam = nf.optimal_rescaling(a, Th, X, act)
            if not np.all(np.isfinite(lam)):  # a neuron dead on every sample: nothing to rescale
                continue
            a2, Th2 = nf.rescale(a, Th, lam, act)
            yi = [float(v) for v in nf.network(a2, Th2, X, act)]
            digits_t.append(min(16.0, digits_agreed(nf.upsilon(a, Th, X, act),
                                                    nf.flatness_trace_mp(a2, Th2, X, yi, act, dps=dps))))
    worst = min(digits_u)
    ok = worst >= TOL["precision_min_digits"] and len(digits_t) >= 4 and min(digits_t) >= 12
    return Outcome(ok, {"digits_agreed": worst, "cases": len(digits_u), "trace_at_lambda_opt_digits":
                        min(digits_t)},
                   f"closed-form Υ at dps={dps} vs mpmath minimisation of λ^(2c)A + λ^(−2)a²B (root of the "
                   f"derivative, no closed form): ≥ {worst:.1f} digits; trace after the float64 λ_opt "
                   f"rescaling equals Υ to {min(digits_t):.1f} digits (float64 λ)")


@UPSILON.level("A")
def _(ctx: Context) -> Outcome:
    errs, stat = [], []
    for act, a, Th, X, _ in _cases(ctx, "flat.upsilon/A", 25, 3, 4):
        lam = nf.optimal_rescaling(a, Th, X, act)
        a2, Th2 = nf.rescale(a, Th, lam, act)
        yi = nf.network(a, Th, X, act)
        u = nf.upsilon(a, Th, X, act)
        t_opt = ref.torch_hessian_trace(a2, Th2, X, yi, act)
        errs.append(rel_err(u, t_opt))
        # stationarity: perturbing every λ_j by a factor e^{±1e-4} raises the torch trace (second order)
        for eps in (1e-3, -1e-3):
            a3, Th3 = nf.rescale(a2, Th2, np.full(len(a), np.exp(eps)), act)
            stat.append(ref.torch_hessian_trace(a3, Th3, X, yi, act) - t_opt >= -1e-12 * abs(t_opt))
    worst = max(errs)
    ok = worst <= TOL["autograd_rel"] and all(stat)
    return Outcome(ok, {"max_rel_err": worst, "cases": len(errs), "perturbations_not_lower": sum(stat)},
                   f"Υ vs torch.func.hessian trace after rescaling by λ_opt: max rel err {worst:.1e} "
                   f"(tol 1e-10); {sum(stat)}/{len(stat)} perturbed rescalings give a trace ≥ Υ")


# --------------------------------------------------------------------------------------------
# flat.duality


@DUALITY.level("S")
def _(ctx: Context) -> Outcome:
    dd = pf.derive_duality()
    return Outcome(dd.ok, {"steps": len(dd.checks), "exact": sum(dd.checks.values())},
                   f"{sum(dd.checks.values())}/{len(dd.checks)} steps exact: Υ = Σ ω_j|b_j|^p with ω_j free of "
                   f"‖θ_j‖; conjugate g*(s) = {dd.conjugate} from its stationarity equation; Fenchel–Young "
                   f"(weak duality) and its equality case (strong duality); p=1 indicator",
                   details={k: bool(v) for k, v in dd.checks.items()})


def _mp_invariant(Th, X, act):
    spec = nf.get_activation(act)
    th = [[mpmath.mpf(float(v)) for v in row] for row in Th]
    Xs = [[mpmath.mpf(float(v)) for v in row] for row in X]
    norms = [mpmath.sqrt(mpmath.fsum(v * v for v in row)) for row in th]
    tb = [[v / nr for v in row] for row, nr in zip(th, norms, strict=True)]
    A_, B_, Z, _ = nf._mp_moments(spec, tb, Xs)
    om = [derived.omega_weight(A_[j], B_[j], mpmath.mpf(spec.c), _m=nf.MP) for j in range(len(th))]
    Phi = mpmath.matrix([[spec.mp(Z[i][j]) for j in range(len(th))] for i in range(len(Xs))])
    return om, Phi, norms


@DUALITY.level("P")
def _(ctx: Context) -> Outcome:
    """Strong duality at 50 digits: the optimal support/KKT system is re-solved in mpmath."""
    dps = TOL["precision_dps"]
    rng = ctx.rng("flat.duality/P")
    gaps, feas, gaps64 = [], [], []
    for act in ("relu", "leaky_relu", "quadratic", "relu_power:3", "abs_power:1.5"):
        n, d, m = 4, 3, 9
        X, Th, y = rng.normal(size=(n, d)), rng.normal(size=(m, d)), rng.normal(size=n)
        res = nf.flattest_outer_weights(Th, X, y, act)
        gaps64.append(res.rel_gap)
        with mpmath.workdps(dps + 10):
            om, Phi, _ = _mp_invariant(Th, X, act)
            ym = mpmath.matrix([mpmath.mpf(float(v)) for v in y])
            if res.p == 1:
                S = [j for j in range(m) if abs(res.b[j]) > 1e-9 * max(1, float(np.max(np.abs(res.b))))]
                PS = mpmath.matrix([[Phi[i, j] for j in S] for i in range(n)])
                bS = mpmath.lu_solve(PS, ym)
                nu = mpmath.lu_solve(PS.T, mpmath.matrix([om[j] * mpmath.sign(bS[k]) for k, j in enumerate(S)]))
                s_ = Phi.T * nu
                feas.append(max(abs(s_[j]) / om[j] for j in range(m)) <= 1 + mpmath.mpf(10) ** (-dps))
                primal = mpmath.fsum(om[j] * abs(bS[k]) for k, j in enumerate(S))
                dual = mpmath.fsum(nu[i] * ym[i] for i in range(n))
            else:
                p = mpmath.mpf(2) * mpmath.mpf(nf.get_activation(act).c) / (nf.get_activation(act).c + 1)

                def bvec(nu_, Phi=Phi, om=om, p=p, m=m):
                    s_ = Phi.T * nu_
                    return [mpmath.sign(s_[j]) * derived.conjugate_argmax(abs(s_[j]), om[j], p, _m=nf.MP)
                            for j in range(m)]

                def eqs(*nu_, Phi=Phi, m=m, ym=ym, n=n, bvec=bvec):
                    bb = bvec(mpmath.matrix(list(nu_)))
                    return [mpmath.fsum(Phi[i, j] * bb[j] for j in range(m)) - ym[i] for i in range(n)]
                nu = mpmath.matrix(mpmath.findroot(eqs, [mpmath.mpf(float(v)) for v in res.nu]))
                bb = bvec(nu)
                s_ = Phi.T * nu
                primal = mpmath.fsum(om[j] * abs(bb[j]) ** p for j in range(m))
                dual = mpmath.fsum(nu[i] * ym[i] for i in range(n)) - mpmath.fsum(
                    derived.conjugate_power(abs(s_[j]), om[j], p, _m=nf.MP) for j in range(m))
                feas.append(max(abs(v) for v in eqs(*nu)) < mpmath.mpf(10) ** (-dps))
            gaps.append(digits_agreed(dual, primal))
            # the float64 optimum agrees with the 50-digit one
            gaps64.append(abs(float(primal) - res.value) / abs(float(primal)))
    worst = min(gaps)
    ok = worst >= TOL["precision_min_digits"] and all(feas) and max(gaps64) <= TOL["duality_gap_rel"]
    return Outcome(ok, {"primal_dual_digits": worst, "float64_max_rel_gap_or_err": max(gaps64),
                        "feasible": sum(feas), "cases": len(gaps)},
                   f"KKT system re-solved at dps={dps + 10}: primal = dual to ≥ {worst:.1f} digits with an exactly "
                   f"feasible ν ({sum(feas)}/{len(feas)}); float64 solver gap / value error ≤ {max(gaps64):.1e}")


# --------------------------------------------------------------------------------------------
# flat.population


@POPULATION.level("S")
def _(ctx: Context) -> Outcome:
    kd = pf.derive_kernels()

    class _Sym:  # sympy namespace for the numerics' own moment formulas
        pi, sqrt, gamma = sp.pi, staticmethod(sp.sqrt), staticmethod(sp.gamma)
        rat = staticmethod(sp.Rational)

    rho = sp.Symbol("rho", real=True)
    s1, s2 = sp.symbols("s1 s2", positive=True)
    t1, t2 = sp.symbols("t1 t2", real=True)
    # moment generating function of the bivariate normal, from its definition E exp(t·z) = exp(tᵀΣt/2)
    mgf = sp.exp((s1**2 * t1**2 + 2 * rho * s1 * s2 * t1 * t2 + s2**2 * t2**2) / 2)
    ok_pairs, total = 0, 0
    for i in range(5):
        for j in range(5 - i):
            total += 1
            moment = sp.diff(mgf, t1, i, t2, j).subs({t1: 0, t2: 0}) if i + j else sp.Integer(1)
            formula = sp.sympify(nf._e_mono_mono(i, j, s1, s2, rho, _Sym))
            ok_pairs += bool(sp.expand(moment - formula) == 0)
    ok = kd.ok and ok_pairs == total
    return Outcome(ok, {"kernel_steps": len(kd.checks), "exact": sum(kd.checks.values()),
                        "moment_pairs_exact": ok_pairs, "moment_pairs": total},
                   f"E[z_+^e] = {kd.half_moment} and the degree-1/2 arc-cosine kernels derived by polar "
                   f"integration ({sum(kd.checks.values())}/{len(kd.checks)} checks incl. Cho–Saul J_1, J_2); "
                   f"numerics' moment formula E[z1^i z2^j] = MGF derivative for {ok_pairs}/{total} (i+j ≤ 4, symbolic "
                   f"s1, s2, ρ)",
                   details={k: bool(v) for k, v in kd.checks.items()})


@POPULATION.level("P")
def _(ctx: Context) -> Outcome:
    dps = TOL["precision_dps"]
    rng = ctx.rng("flat.population/P")
    d = 3
    digits, zs = [], []
    targets = [nf.single_index(rng.normal(size=d), "relu"),
               nf.sum_single_index(rng.normal(size=(2, d)), ["he2", "cubic"]),
               nf.multi_index(np.linalg.qr(rng.normal(size=(d, 2)))[0].T, "product")]
    for act, tg in (("relu", targets[0]), ("leaky_relu", targets[1]), ("quadratic", targets[2]),
                    ("leaky_relu", targets[0]), ("relu", targets[2])):
        if True:
            a, Th = rng.normal(size=2), rng.normal(size=(2, d))
            exact = nf.population_loss(a, Th, tg, 0.25, act, dps=dps)
            with mpmath.workdps(dps):
                digits.append(digits_agreed(exact, ref.polar_population_loss(a, Th, tg, act, 0.25, dps)))
    # links without a closed form: quadrature vs Monte Carlo (z-scores), and quadrature vs exact
    quad_digits = []
    for act in ("relu", "quadratic"):
        for tg in (nf.single_index(rng.normal(size=d), "tanh"), nf.sum_single_index(rng.normal(size=(2, d)),
                                                                                      ["tanh", "sin"])):
            a, Th = rng.normal(size=3), rng.normal(size=(3, d))
            L = nf.population_loss(a, Th, tg, 0.0, act)
            mc, se = nf.population_loss_mc(a, Th, tg, 0.0, act, samples=40_000 if ctx.quick else 400_000,
                                           rng=rng)
            zs.append(abs(L - mc) / se)
    act = nf.get_activation("relu")
    for _ in range(3):
        u, v = rng.normal(size=d), rng.normal(size=d)
        with mpmath.workdps(30):
            quad_digits.append(digits_agreed(nf._pair_quad(act, u, nf.LINKS["relu"], v, 30),
                                             nf._gram(act, u[None], nf.LINKS["relu"], v[None], 30)[0, 0]))
    worst = min(digits)
    ok = worst >= TOL["precision_min_digits"] and max(zs) <= 4.5 and min(quad_digits) >= 20
    return Outcome(ok, {"digits_agreed": worst, "cases": len(digits), "mc_max_abs_z": max(zs),
                        "quadrature_vs_exact_digits": min(quad_digits)},
                   f"exact loss at dps={dps} vs polar Γ × angular quadrature: ≥ {worst:.1f} digits ({len(digits)} "
                   f"nets × targets); quadrature links (tanh, sin) vs Monte Carlo |z| ≤ {max(zs):.2f}; "
                   f"quadrature vs arc-cosine kernel {min(quad_digits):.1f} digits at dps=30")


# Register the F and E levels (they import the claims above).
from checks import flatness_experiments, flatness_properties  # noqa: E402, F401
