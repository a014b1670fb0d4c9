r"""Claims rob.* (SPEC §3): Shmalo 2026, arXiv 2607.07778, law of robustness for two-layer nets.

Each claim: its statement, then one small function per evidence level. Derivations live in
``proofs/kinks.py``, evaluators (canonical form, exact Lipschitz constants) in ``numerics/kinks.py``,
falsification properties in ``checks/rob_properties.py`` and the experiment in ``checks/rob_law.py``.
"""

from __future__ import annotations

import math
import time
import warnings

import mpmath
import numpy as np
import sympy as sp

from checks import rob_law, rob_oracles
from checks import rob_lipschitz as RL
from checks import rob_properties as RP
from checks.evidence import TOL, Outcome, digits_agreed
from checks.falsify import falsify
from checks.registry import Context, claim
from numerics import rob as K
from numerics._derived import rob as D
from numerics.rob.caps import lipschitz_disjoint_caps
from numerics.rob.sphere2 import lipschitz_s2
from proofs.rob import core as PK

CANONICAL = claim(
    "rob.canonical",
    statement="Canonicalising (normalise, flip with ReLU(−z) = ReLU(z) − z, absorb units affine or zero on "
              "the domain, merge equal hyperplanes, drop zero coefficients) preserves f on the domain; the "
              "result is unique on B_R and on S^{d−1} (d ≥ 3) for any two parametrisations of one function.",
    latex=r"f = v\cdot x + c + \sum_j \alpha_j \operatorname{ReLU}(u_j\cdot x - t_j),\ \|u_j\|=1,\ "
          r"t_j\in[0,\rho),\ \alpha_j\neq0",
    levels="S, A, F",
)
JUMP = claim(
    "rob.jump",
    statement="Across hyperplane j (at a point on no other) ∇f jumps by α_j u_j; on the sphere the "
              "tangential jump has norm |α_j|√(1 − t_j²).",
    latex=r"\nabla f_+ - \nabla f_- = \alpha_j u_j,\quad \|P_x^\perp \alpha_j u_j\| = |\alpha_j|\sqrt{1-t_j^2}",
    levels="S, P, F",
)
RIGIDITY_BALL = claim(
    "rob.rigidity_ball",
    statement="|α_j| ≤ 2 Lip_{B_R}(f) for every kink of the canonical form, including planted "
              "near-cancelling units.",
    latex=r"|\alpha_j| \le 2\operatorname{Lip}_{B_R}(f)",
    levels="F, P",
)
RIGIDITY_SPHERE = claim(
    "rob.rigidity_sphere",
    statement="|α_j|√(1 − t_j²) ≤ 2 Lip_{S^{d−1}}(f) (geodesic) for d ≥ 3.",
    latex=r"|\alpha_j|\sqrt{1-t_j^2} \le 2\operatorname{Lip}_{S^{d-1}}(f),\ d\ge3",
    levels="F, P",
)
CIRCLE = claim(
    "rob.circle",
    statement="Rigidity fails at d = 2: the even-cycle example (exact Lipschitz constant, violation ratio "
              "κ/(2 Lip)), and a search for the largest violation ratio on S¹.",
    latex=r"\frac{\kappa}{2\operatorname{Lip}_{S^1}(f)} > 1",
    levels="S, P, F",
)
WIDTH_2N = claim(
    "rob.width_2n",
    statement="The width-2n interpolant Σ_i (y_i/s)[ReLU(x_i·x − (1−s)) − ReLU(x_i·x − 1)] interpolates when "
              "max_{i≠j} x_i·x_j ≤ 1 − s; its caps are disjoint when max x_i·x_j ≤ 2(1−s)² − 1, and then "
              "Lip = √((2−s)/s) exactly (√7 at s = 1/4).",
    latex=r"\operatorname{Lip}_{S^{d-1}} = \sqrt{(2-s)/s}\ \text{ if }\ \max_{i\ne j}x_i\cdot x_j\le2(1-s)^2-1",
    levels="S, P",
)
LAW = claim(
    "rob.law",
    statement="Trained width-m nets that fit pure-noise ±1 labels ε below the noise floor have "
              "Lip ≥ c ε √(n/(m̄ log(C m̄ n d/ε))): certified Lipschitz brackets against √(n/m̄) over m and n "
              "(d = 32, n = 256, m ∈ {16, 64, 256, 1024}).",
    latex=r"\operatorname{Lip}(f)\ \ge\ c\,\varepsilon\sqrt{\frac{n}{\bar m\log(C\bar m n d/\varepsilon)}}",
    levels="E",
)
VALUE = claim(
    "rob.value",
    statement="If the data are fitted below the noise floor, Lip_D(f) ≤ L and diam D ≤ 4, then "
              "sup_D |f| ≤ 2 + 4L.",
    latex=r"\sup_D|f|\le 2+4L",
    levels="F",
)

# ------------------------------------------------------------------------------ properties (F levels)
P_CANON = (RP.canon_property("rob.canonical/ball3", 3, sphere=False),
           RP.canon_property("rob.canonical/sphere3", 3, sphere=True))
P_JUMP = (RP.jump_property("rob.jump/ball2", 2, sphere=False), RP.jump_property("rob.jump/ball3", 3, sphere=False),
          RP.jump_property("rob.jump/sphere3", 3, sphere=True))
P_RIG_BALL = (RP.rigidity_property("rob.rigidity_ball/d2", 2, sphere=False, rho=1.5),
              RP.rigidity_property("rob.rigidity_ball/d3", 3, sphere=False, rho=1.0),
              # degenerate arrangements (checks.rob_strategies) and two-sided checks of the exact constant
              RL.degenerate_rigidity_property(2, sphere=False), RL.degenerate_rigidity_property(3, sphere=False),
              RL.oracle_ball_property(2), RL.oracle_ball_property(3), RL.float_vs_rational_property(3, False))
P_RIG_SPHERE = (RP.rigidity_property("rob.rigidity_sphere/d3", 3, sphere=True, budget=160),
                # d = 4: exact when the caps are disjoint, else against the certified upper end (still sound)
                RP.rigidity_property("rob.rigidity_sphere/d4", 4, sphere=True, budget=60),
                RL.degenerate_rigidity_property(3, sphere=True), RL.single_pole_property(3),
                RL.single_pole_property(8, budget=30), RL.probe_s2_property(), RL.float_vs_rational_property(3, True))
P_CIRCLE_2 = RP.circle_property()
P_CIRCLE_3 = RP.circle_d3_property()
P_VALUE = (RP.value_property("rob.value/ball2", 2, sphere=False), RP.value_property("rob.value/ball3", 3, sphere=False),
           RP.value_property("rob.value/sphere3", 3, sphere=True))


def _budget(ctx: Context, prop) -> int:
    if ctx.budget is not None:
        return ctx.budget
    return 12 if ctx.quick else prop.budget


def _seed(ctx: Context, name: str) -> int:
    return int(ctx.rng(name).integers(0, 2**31))


def _falsify_all(ctx: Context, props, *, expect_found: bool = False):
    """Run each property; pass iff none (or, with expect_found, each) yields a confirmed counterexample."""
    with warnings.catch_warnings():  # degenerate nets are drawn on purpose: near-coincident kinks are expected
        warnings.simplefilter("ignore", K.KinkCoincidenceWarning)
        res = [falsify(p, budget=_budget(ctx, p), seed=_seed(ctx, p.name),
                       out_dir=ctx.report_dir / "counterexamples") for p in ctx.track(props, "falsify")]
    ok = all(r.found == expect_found for r in res)
    metric = {"examples": sum(r.examples for r in res), "confirmed": sum(r.confirmed for r in res),
              "applicable": sum(r.calls - r.not_applicable for r in res),
              "float64_candidates": sum(r.candidates for r in res),
              "worst_margin": max(r.worst_screen for r in res),
              "examples_per_s": round(sum(r.calls for r in res) / max(sum(r.seconds for r in res), 1e-9), 1)}
    details = {r.name: {**r.metric(), "not_applicable": r.not_applicable, "counterexample": r.counterexample,
                        "reproducers": r.reproducers} for r in res}
    return ok, res, metric, details


# ---------------------------------------------------------------------------------------- helpers
def _rat(x, den=64):
    return sp.Rational(round(float(x) * den), den)


def _exact_net(rng, m, d, *, planted=True):
    """A random net with small-denominator rational entries, optionally with planted structure."""
    W = [[_rat(x) for x in rng.normal(size=d)] for _ in range(m)]
    W = [w if any(w) else [sp.Integer(1)] + w[1:] for w in W]
    b = [_rat(x) for x in 0.4 * rng.normal(size=m)]
    a = [_rat(x) for x in rng.normal(size=m)]
    v = [_rat(x) for x in 0.5 * rng.normal(size=d)]
    if planted:  # a same-hyperplane pair (2w, 2b) and a ±10⁶ cancelling pair with different scalings
        W += [[2 * x for x in W[0]], W[1], [3 * x for x in W[1]]]
        b += [2 * b[0], b[1], 3 * b[1]]
        a += [sp.Rational(1, 3), sp.Integer(10) ** 6, -sp.Integer(10) ** 6 / 3]
    return (W, b, a, v, _rat(rng.normal()))


def _mp_net(net):
    """f of an exact net tuple, evaluated in mpmath at the current precision (from the definition)."""
    W, b, a, v, c = (K.to_mp(z) for z in net)

    def f(x):
        hidden = sum(ak * max(sum(wi * xi for wi, xi in zip(wk, x, strict=True)) + bk, 0)
                     for wk, bk, ak in zip(W, b, a, strict=True))
        return hidden + sum(vi * xi for vi, xi in zip(v, x, strict=True)) + c
    return f


def _stereo(z):
    return RP._stereo(list(z))


# ---------------------------------------------------------------------------------- rob.canonical
@CANONICAL.level("S")
def _(ctx: Context) -> Outcome:
    ids = PK.relu_identities()
    rng = ctx.rng("rob.canonical/S")
    n_nets = 2 if ctx.quick else 4
    same, value_zero, kink_pts, forms = 0, 0, 0, 0
    for dom in (K.Ball(3, sp.Rational(3, 2)), K.Sphere(3)):
        for _ in range(n_nets):
            net = _exact_net(rng, 3, 3)
            if isinstance(dom, K.Sphere):  # put every unit's kink through a rational point of the sphere
                Q = [_stereo([_rat(x, 8) for x in rng.normal(size=3)]) for _ in net[0]]
                b = [-sum(w * q for w, q in zip(wk, qk, strict=True)) for wk, qk in zip(net[0], Q, strict=True)]
                net = (net[0], b, *net[2:])
            else:
                Q = []
                for wk, bk in zip(net[0], net[1], strict=True):  # a rational point on each hyperplane
                    i = max(range(3), key=lambda k: abs(wk[k]))  # noqa: B023
                    x = [_rat(z, 8) * sp.Rational(1, 4) for z in rng.normal(size=3)]
                    x[i] = -(bk + sum(wk[k] * x[k] for k in range(3) if k != i)) / wk[i]
                    Q.append(x)
            cf = K.canonicalize(net, dom)
            forms += 1
            for recipe in RP.RECIPES:
                case = {"rho": float(dom.radius), "sphere": isinstance(dom, K.Sphere), "recipe": [recipe], "pick": 0}
                other = RP.reparametrise({**case, **_case_of(net)}, exact=True)
                same += K.canonicalize(other, dom).equals(cf)
            pts = [_stereo([_rat(x, 8) for x in rng.normal(size=3)]) if isinstance(dom, K.Sphere)
                   else [_rat(x, 8) * sp.Rational(1, 3) for x in rng.normal(size=3)] for _ in range(4)]
            for x in pts + Q:
                value_zero += sp.simplify(RP._exact_eval(net, x) - RP._exact_eval(cf.net(), x)) == 0
            kink_pts += len(Q)
    total_same = forms * len(RP.RECIPES)
    total_pts = forms * 4 + kink_pts
    # K-piece activation: hard-tanh (K = 3) gives at most 2 kinks per unit, values preserved exactly
    ht = K.PiecewiseLinear((-1, 1), (0, 1, 0), -1)
    net = _exact_net(rng, 3, 3, planted=False)
    cfk = K.canonicalize(net, K.Ball(3, 2), activation=ht)
    kpiece_ok = cfk.m <= 2 * 3
    for x in [[_rat(z, 8) * sp.Rational(1, 2) for z in rng.normal(size=3)] for _ in range(4)]:
        ref = sum(ak * sp.Max(-1, sp.Min(1, sum(w * xi for w, xi in zip(wk, x, strict=True)) + bk))
                  for wk, bk, ak in zip(net[0], net[1], net[2], strict=True)) + sum(
            vi * xi for vi, xi in zip(net[3], x, strict=True)) + net[4]
        kpiece_ok &= sp.simplify(ref - RP._exact_eval(cfk.net(), x)) == 0
    passed = all(ids.values()) and same == total_same and value_zero == total_pts and kpiece_ok
    return Outcome(passed, {"identities": f"{sum(ids.values())}/{len(ids)}",
                            "unique_forms": f"{same}/{total_same}", "exact_values": f"{value_zero}/{total_pts}",
                            "kink_points": kink_pts, "k_piece": kpiece_ok},
                   f"ReLU identities {sum(ids.values())}/{len(ids)}; {same}/{total_same} reparametrisations "
                   f"(split, flip, ±1e6, scale, zero/affine units, permute) give the same exact form on B_3/2 and "
                   f"S²; f − f_canon = 0 exactly at {value_zero}/{total_pts} points ({kink_pts} on kink sets)",
                   details={"identities": ids})


def _case_of(net):
    W, b, a, v, c = net
    return {"W": W, "b": b, "a": a, "v": v, "c": c, "d": len(v)}


@CANONICAL.level("A")
def _(ctx: Context) -> Outcome:
    import torch

    rng = ctx.rng("rob.canonical/A")
    worst, n = 0.0, 0
    for dom in (K.Ball(3, 1.5), K.Sphere(3), K.Ball(2, 1.0)):
        d = dom.d
        for _ in range(3 if ctx.quick else 8):
            m = 6
            W, b, a, v = rng.normal(size=(m, d)), 0.5 * rng.normal(size=m), rng.normal(size=m), rng.normal(size=d)
            W = np.vstack([W, 2 * W[:1], -W[1:2]])  # same hyperplane; opposite orientation
            b, a = np.r_[b, 2 * b[0], -b[1]], np.r_[a, 0.7, 1.3]
            net = (W, b, a, v, 0.2)
            cf = K.canonicalize(net, dom)
            X = rng.normal(size=(64, d))
            X /= np.linalg.norm(X, axis=1, keepdims=True)
            if isinstance(dom, K.Ball):
                X *= float(dom.R) * rng.random((64, 1))
            keep = np.min(np.abs(X @ W.T + b) / np.linalg.norm(W, axis=1), axis=1) > 1e-6
            X = X[keep]
            f1, g1 = _torch_f_grad(torch, net, X)
            f2, g2 = _torch_f_grad(torch, cf.net(), X)
            # relative to the size of the summed terms (float64's backward-error yardstick)
            scale = float(np.max(np.abs(np.maximum(X @ W.T + b, 0) * a).sum(1) + np.abs(X @ v) + 0.2))
            gscale = float(np.sum(np.abs(a) * np.linalg.norm(W, axis=1)) + np.linalg.norm(v))
            worst = max(worst, float(np.max(np.abs(f1 - f2))) / scale, float(np.max(np.abs(g1 - g2))) / gscale)
            n += len(X)
    passed = worst <= TOL["autograd_rel"]
    return Outcome(passed, {"rel_err": worst, "points": n},
                   f"torch float64 values and autograd gradients, original vs canonical: rel err {worst:.1e} "
                   f"at {n} points on B_1.5 ⊂ R³, S², B_1 ⊂ R²")


def _torch_f_grad(torch, net, X):
    W, b, a, v, c = (torch.tensor(np.asarray(K.f64(z), float)) for z in net)
    x = torch.tensor(X, requires_grad=True)
    f = torch.relu(x @ W.reshape(len(a), -1).T + b) @ a + x @ v + c
    (g,) = torch.autograd.grad(f.sum(), x)
    return f.detach().numpy(), g.numpy()


@CANONICAL.level("F")
def _(ctx: Context) -> Outcome:
    ok, _, metric, details = _falsify_all(ctx, P_CANON)
    return Outcome(ok, metric, f"{metric['examples']} reparametrised nets (B_1.5, S²), "
                               f"{metric['confirmed']} confirmed failures of value or uniqueness", details=details)


# ------------------------------------------------------------------------------------------ rob.jump
@JUMP.level("S")
def _(ctx: Context) -> Outcome:
    res = {f"d={d}: {k}": v for d in (2, 3, 4) for k, v in {**PK.jump(d), **PK.tangential(d)}.items()}
    ok = all(res.values())
    return Outcome(ok, {"identities": f"{sum(res.values())}/{len(res)}"},
                   f"∇f₊ − ∇f₋ = α u on the adjacent affine pieces, continuity, and ‖u − (u·x)x‖² = 1 − t², "
                   f"d = 2, 3, 4: {sum(res.values())}/{len(res)} simplify to 0", details=res)


@JUMP.level("P")
def _(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.jump/P")
    digits = []
    with mpmath.workdps(100):
        for dom in (K.Ball(3, 1), K.Sphere(3)):
            for _ in range(1 if ctx.quick else 3):
                net = _exact_net(rng, 4, 3, planted=False)
                cf = K.canonicalize(net, dom)
                f = _mp_net(net)
                for j in range(cf.m):
                    u = [mpmath.mpf(sp.N(z, 110)) for z in cf.U[j]]
                    t, al = mpmath.mpf(sp.N(cf.t[j], 110)), mpmath.mpf(sp.N(cf.alpha[j], 110))
                    y = [mpmath.mpf(float(z)) for z in rng.normal(size=3)]
                    yu = sum(p * q for p, q in zip(y, u, strict=True))
                    y = [p - yu * q for p, q in zip(y, u, strict=True)]
                    ny = mpmath.sqrt(sum(p * p for p in y))
                    r = mpmath.sqrt(1 - t * t) if isinstance(dom, K.Sphere) else mpmath.sqrt(1 - t * t) / 2
                    x = [t * p + r * q / ny for p, q in zip(u, y, strict=True)]
                    h, k = mpmath.mpf(10) ** -30, mpmath.mpf(10) ** -45
                    g = []
                    for s in (1, -1):
                        p = [xi + s * h * ui for xi, ui in zip(x, u, strict=True)]
                        g.append([(f([pi + (k if q == i else 0) for q, pi in enumerate(p)])
                                   - f([pi - (k if q == i else 0) for q, pi in enumerate(p)])) / (2 * k)
                                  for i in range(3)])
                    jmp = [p - q for p, q in zip(*g, strict=True)]
                    with mpmath.workdps(TOL["precision_dps"]):
                        if isinstance(dom, K.Sphere):
                            jx = sum(p * q for p, q in zip(jmp, x, strict=True))
                            tang = mpmath.sqrt(sum((p - jx * q) ** 2 for p, q in zip(jmp, x, strict=True)))
                            digits.append(digits_agreed(tang, D.tangential_jump_norm(al, t)))
                        else:
                            digits.append(digits_agreed(jmp, [al * q for q in u]))
    low = min(digits)
    return Outcome(low >= TOL["precision_min_digits"], {"min_digits": low, "kinks": len(digits)},
                   f"one-sided gradients of the original net by 100-digit differences vs α_j u_j (ball) and "
                   f"|α_j|√(1−t_j²) (sphere) from the exact canonical form: ≥ {low:.0f} digits at {len(digits)} kinks")


@JUMP.level("F")
def _(ctx: Context) -> Outcome:
    ok, _, metric, details = _falsify_all(ctx, P_JUMP)
    return Outcome(ok, metric, f"{metric['applicable']} kink points (B², B³, S²; near-parallel, edge thresholds, "
                               f"±1e6 pairs): {metric['confirmed']} confirmed jump mismatches", details=details)


# ------------------------------------------------------------------------------------ rigidity
def _brute_ball(net, R) -> tuple:
    """The ball oracle of :mod:`checks.rob_oracles` (SOCP per sign pattern, exact acceptance of each cell)."""
    bf = rob_oracles.ball_brute_force(net, R)
    return mpmath.sqrt(mpmath.mpf(bf.value2.numerator) / bf.value2.denominator), bf.cells


@RIGIDITY_BALL.level("F")
def _(ctx: Context) -> Outcome:
    ok, _, metric, details = _falsify_all(ctx, P_RIG_BALL)
    return Outcome(ok, metric, f"{metric['applicable']} nets on B_1.5 ⊂ R², B_1 ⊂ R³ (near-parallel pairs, thresholds "
                               f"within 1e-9 of ±R, ±1e6 pairs, same-plane pairs), exact Lip: "
                               f"{metric['confirmed']} confirmed violations", details=details)


@RIGIDITY_BALL.level("P")
def _(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.rigidity_ball/P")
    digits, margins, cells = [], [], []
    with mpmath.workdps(TOL["precision_dps"]):
        for dom in (K.Ball(2, sp.Rational(3, 2)), K.Ball(3, 1)):
            for _ in range(1 if ctx.quick else 2):
                net = _exact_net(rng, 3, dom.d, planted=False)
                W, b, a, v, c = net  # plant a near-cancelling pair: a ReLU(z) − a(1 − 10⁻⁸) ReLU(z')
                w2 = [x + sp.Rational(1, 1000) * (1 if i == 0 else 0) for i, x in enumerate(W[0])]
                net = (W + [w2], b + [b[0]], a + [-a[0] * (1 - sp.Rational(1, 10**8))], v, c)
                cf = K.canonicalize(net, dom)
                L = K.lipschitz(cf, dom)
                ref, nfeas = _brute_ball(net, dom.R)
                digits.append(digits_agreed(L.mp(), ref))
                cells.append((L.cells, nfeas))
                for al in cf.alpha:
                    margins.append(float((2 * L.mp() - abs(mpmath.mpf(sp.N(al, 60)))) /
                                         (2 * L.mp())))
    low = min(digits)
    ok = low >= TOL["precision_min_digits"] and min(margins) >= 0 and all(a == b for a, b in cells)
    return Outcome(ok, {"min_digits": low, "min_rel_margin": min(margins), "cells_vs_oracle": cells},
                   f"exact Lip (facet recursion, 50 digits) vs brute force over 2^m patterns with SOCP "
                   f"feasibility: {low:.0f} digits, same cell counts; 2Lip − |α_j| ≥ {min(margins):.3g}·2Lip "
                   f"with planted near-cancelling pairs")


@RIGIDITY_SPHERE.level("F")
def _(ctx: Context) -> Outcome:
    ok, _, metric, details = _falsify_all(ctx, P_RIG_SPHERE)
    return Outcome(ok, metric, f"{metric['applicable']} nets on S² (exact geodesic Lip) and S³ (exact for "
                               f"disjoint caps, else the certified upper end): {metric['confirmed']} confirmed "
                               f"violations", details=details)


@RIGIDITY_SPHERE.level("P")
def _(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.rigidity_sphere/P")
    digits, margins, sample_gap = [], [], []
    with mpmath.workdps(TOL["precision_dps"]):
        # (i) disjoint caps: closed form per cap vs the general S² arrangement algorithm
        for _ in range(1 if ctx.quick else 3):
            Rm = _rational_orthogonal(rng, 3)
            P3 = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [-sp.Rational(2, 3), -sp.Rational(2, 3), -sp.Rational(1, 3)]]
            Q = [list(Rm * sp.Matrix(q)) for q in P3]
            net = ([list(q) for q in Q], [-sp.Rational(9, 10)] * 4, [_rat(x) for x in rng.normal(size=4)],
                   [_rat(x) for x in 0.3 * rng.normal(size=3)], 0)
            cf = K.canonicalize(net, K.Sphere(3))
            if not K.caps_disjoint(cf):
                continue
            q1, _ = lipschitz_disjoint_caps(cf.Wq, cf.bq, cf.aq, cf.vq)
            q2 = lipschitz_s2(cf.Wq, cf.bq, cf.aq, cf.vq).value2
            same = q1.cmp(q2) == 0  # two derivations give one exact number: report it as 60 digits
            digits.append(60.0 if same else digits_agreed(mpmath.sqrt(mpmath.mpf(float(q2))),
                                                          mpmath.sqrt(mpmath.mpf(float(q1)))))
        # (ii) general nets: exact value ≥ a dense sample (a lower bound) and rigidity margins at 50 digits
        for _ in range(2 if ctx.quick else 4):
            net = _exact_net(rng, 4, 3)
            cf = K.canonicalize(net, K.Sphere(3))
            L = K.lipschitz(cf, K.Sphere(3))
            X = rng.normal(size=(40000, 3))
            X /= np.linalg.norm(X, axis=1, keepdims=True)
            cff = K.canonicalize(K.as_float(net), K.Sphere(3))
            G = K.gradient(cff, X)
            samp = float(np.sqrt(np.max(np.sum(G * G, 1) - np.sum(G * X, 1) ** 2)))
            sample_gap.append((float(L.upper) - samp) / float(L.upper))
            for tj in cf.tangential_jumps():
                margins.append(float((2 * L.mp() - mpmath.mpf(sp.N(tj, 60))) / (2 * L.mp())))
    low = min(digits) if digits else 0.0
    ok = low >= TOL["precision_min_digits"] and min(margins) >= 0 and min(sample_gap) >= -1e-12 \
        and max(sample_gap) < 0.05
    timing = _timing(ctx)
    return Outcome(ok, {"min_digits": low, "cases": len(digits), "min_rel_margin": min(margins),
                        "sample_below_exact": f"{min(sample_gap):.2e}..{max(sample_gap):.2e}", **timing},
                   f"disjoint caps: closed form vs S² arrangement agree to {low:.0f} digits ({len(digits)} nets); "
                   f"general nets: 4e4 samples stay ≤ the exact constant (within {max(sample_gap):.1e}), "
                   f"2Lip − |α|√(1−t²) ≥ {min(margins):.3g}·2Lip")


def _timing(ctx: Context) -> dict:
    """Wall time of exact constants for m random units in d = 3 (m = 64; 16 in quick mode)."""
    rng = ctx.rng("rob.timing")
    m = 16 if ctx.quick else 64
    out = {}
    for name, dom in (("ball", K.Ball(3, 1.0)), ("sphere", K.Sphere(3))):
        net = (rng.normal(size=(m, 3)), 0.5 * rng.normal(size=m), rng.normal(size=m), rng.normal(size=3), 0.0)
        t0 = time.perf_counter()
        L = K.lipschitz(net, dom)
        out[f"exact_{name}_m{m}_s"] = round(time.perf_counter() - t0, 3)
        out[f"exact_{name}_m{m}_cells"] = L.cells
    return out


# -------------------------------------------------------------------------------------- rob.circle
@CIRCLE.level("S")
def _(ctx: Context) -> Outcome:
    ec = PK.even_cycle()
    net = PK.cycle_net(PK.EVEN_CYCLE_THETA, PK.EVEN_CYCLE_A, PK.EVEN_CYCLE_SIGNS)
    L = K.lipschitz(net, K.Sphere(2))
    same = sp.simplify(L.value - ec.lipschitz) == 0
    ok = (len(ec.kink_pairs) == 4 and all(len(p) == 3 for p in ec.kink_pairs) and all(s == 0 for s in ec.jump_sums)
          and all(s == 0 for s in ec.tangential_jumps) and same and bool(ec.ratio > 1))
    return Outcome(ok, {"lip_per_kappa": str(ec.lipschitz), "lip_float": float(ec.lipschitz),
                        "ratio": float(ec.ratio)},
                   f"4 kink angles shared by 2 units each (exact), all 4 jumps of f′ cancel to 0, "
                   f"|α_j|√(1−t_j²) = κ exactly; Lip = {ec.lipschitz} ≈ {float(ec.lipschitz):.6f}κ "
                   f"(proofs and numerics agree exactly), ratio κ/(2Lip) = {float(ec.ratio):.4f}",
                   details={"kink_pairs": [str(p) for p in ec.kink_pairs]})


@CIRCLE.level("P")
def _(ctx: Context) -> Outcome:
    th, a, sg = PK.EVEN_CYCLE_THETA, PK.EVEN_CYCLE_A, PK.EVEN_CYCLE_SIGNS
    net = PK.cycle_net(th, a, sg)
    L = K.lipschitz(net, K.Sphere(2))
    with mpmath.workdps(80):  # reference: numeric differentiation of the network definition, arc by arc
        T = [mpmath.mpf(sp.N(x, 90)) for x in th]
        A = [mpmath.mpf(sp.N(x, 90)) for x in a]
        al = [s / mpmath.sin(x) for s, x in zip(sg, A, strict=True)]
        def f(p):
            return sum(c * max(mpmath.cos(p - t) - mpmath.cos(x), 0) for c, t, x in zip(al, T, A, strict=True))

        ks = {mpmath.nstr(t + s * x, 70): t + s * x for t, x in zip(T, A, strict=True) for s in (1, -1)}
        ks = sorted(ks.values())
        arcs = list(zip(ks, ks[1:] + [ks[0] + 2 * mpmath.pi], strict=True))
        ref = mpmath.mpf(0)
        for lo, hi in arcs:
            off = mpmath.mpf(10) ** -60
            fp = lambda p: mpmath.diff(f, p)  # noqa: E731
            cands = [abs(fp(lo + off)), abs(fp(hi - off))]
            grid = [lo + (hi - lo) * i / 16 for i in range(1, 16)]
            f2 = lambda p: mpmath.diff(f, p, 2)  # noqa: E731
            for p, q in zip(grid, grid[1:], strict=False):
                if f2(p) * f2(q) < 0:
                    cands.append(abs(fp(mpmath.findroot(f2, (p, q), solver="bisect"))))
            ref = max(ref, *cands)
        with mpmath.workdps(TOL["precision_dps"]):
            dg = digits_agreed(L.mp(), ref)
            dp = digits_agreed(mpmath.mpf(sp.N(PK.even_cycle().lipschitz, 60)), ref)
    low = min(dg, dp)
    return Outcome(low >= TOL["precision_min_digits"], {"digits_numerics": dg, "digits_proofs": dp,
                                                        "lip_per_kappa": float(ref)},
                   f"even-cycle Lip: exact S¹ arcs (numerics) and the SymPy derivation agree with an 80-digit "
                   f"mpmath differentiation of f arc by arc to {low:.0f} digits")


SEP_MIN = 0.02  # radians: the search keeps distinct kinks at least this far apart (see _ratio_family)


def _search_ratio(ctx: Context):
    """Largest κ/(2 Lip) over 4- and 6-unit cycles with kinks ≥ SEP_MIN apart (Nelder–Mead on the angles)."""
    from scipy.optimize import minimize

    rng = ctx.rng("rob.circle/search")
    best = (0.0, None)
    for k in (2, 3):
        for _ in range(2 if ctx.quick else 3):
            order = list(rng.permutation(2 * k))

            def neg(p, order=order, k=k):
                pts = np.asarray(p)
                if np.min(np.abs(pts[:, None] - pts[None, :]) + np.eye(2 * k)) < SEP_MIN or np.max(np.abs(pts)) > 1.2:
                    return 0.0
                th, a, al = [], [], []
                for j in range(2 * k):
                    lo, hi = sorted((pts[order[j]], pts[order[(j + 1) % (2 * k)]]))
                    th.append((lo + hi) / 2)
                    a.append((hi - lo) / 2)
                    al.append((-1) ** j / math.sin((hi - lo) / 2))
                return -1.0 / (2 * RP.cycle_lip_float(th, a, al))

            r = minimize(neg, rng.uniform(-0.5, 0.5, 2 * k), method="Nelder-Mead",
                         options={"maxiter": 300 if ctx.quick else 800, "xatol": 1e-6, "fatol": 1e-9})
            if -r.fun > best[0]:
                best = (-r.fun, {"pts": [int(round(1000 * x)) for x in r.x], "order": [int(o) for o in order],
                                 "kappa8": [8] * (2 * k)})
    return best


def _ratio_family(deltas=(100, 10, 1)):
    """Exact ratios of the 4-unit family with kink pairs δ milliradians apart: the sup over S¹ is +∞.

    pts = (0.9, −0.6, 0.9 + δ, −0.6 + δ) visited in order: units 0, 1 (and 2, 3) span nearly the same arc
    with opposite weights, every shared kink cancels exactly, and f → 0 as δ → 0 while κ stays 1.
    """
    out = []
    for dl in deltas:
        case = {"pts": [900, -600, 900 + dl, -600 + dl], "order": [0, 1, 2, 3], "kappa8": [8] * 4}
        L = K.lipschitz(RP.cycle_net(case), K.Sphere(2))
        out.append((dl / 1000, float(1 / (2 * L.mp()))))
    slope = float(np.polyfit(np.log([d for d, _ in out]), np.log([r for _, r in out]), 1)[0])
    return out, slope


@CIRCLE.level("F")
def _(ctx: Context) -> Outcome:
    t0 = time.perf_counter()
    r2 = falsify(P_CIRCLE_2, budget=_budget(ctx, P_CIRCLE_2), seed=_seed(ctx, P_CIRCLE_2.name),
                 out_dir=ctx.report_dir / "counterexamples")
    r3 = falsify(P_CIRCLE_3, budget=_budget(ctx, P_CIRCLE_3), seed=_seed(ctx, P_CIRCLE_3.name),
                 out_dir=ctx.report_dir / "counterexamples")
    rs = []  # random S² nets are rob.rigidity_sphere F's job; here the d = 3 analogue of the structure
    fl_ratio, case = _search_ratio(ctx)
    exact_ratio, lip_expr = None, None
    if case is not None and len(set(case["pts"])) == len(case["pts"]):
        L = K.lipschitz(RP.cycle_net(case), K.Sphere(2))
        lip_expr = L.value
        exact_ratio = 1 / (2 * L.mp())
    family, slope = _ratio_family((100, 10) if ctx.quick else (100, 10, 1))
    ratio_txt = (f"{float(exact_ratio):.3f} with kinks ≥ {SEP_MIN} rad apart" if exact_ratio is not None else "n/a")
    fig = _circle_figure(ctx, family, exact_ratio)
    ok = r2.found and not r3.found and not any(r.found for r in rs)
    return Outcome(ok, {"d2_found": r2.found, "d2_margin": r2.counterexample_margin, "d2_examples": r2.examples,
                        "d3_found": r3.found or any(r.found for r in rs),
                        "d3_examples": r3.examples + sum(r.examples for r in rs),
                        "best_ratio_search": fl_ratio, "best_ratio_exact": float(exact_ratio) if exact_ratio else None,
                        "family_ratio_vs_delta_exponent": slope,
                        "seconds": time.perf_counter() - t0},
                   f"structured S¹ cycles (not the paper's angles): violation found and confirmed exactly "
                   f"({r2.examples} examples, shrunk margin {r2.counterexample_margin}); lifted cycles and random nets "
                   f"on S²: none in {r3.examples + sum(r.examples for r in rs)}; strongest ratio found {ratio_txt}; "
                   f"the sup is +∞: a 4-unit family with kink pairs δ apart has exact ratio ∝ δ^{slope:.2f} "
                   f"({family[-1][1]:.4g} at δ = {family[-1][0]})",
                   details={"d2_counterexample": r2.counterexample, "d2_reproducers": r2.reproducers,
                            "strongest": case, "strongest_lip_exact": str(lip_expr),
                            "family": family}, figures=(fig,))


def _circle_figure(ctx: Context, family, best_ratio) -> str:
    """Left: f′ of the even cycle on S¹ (C¹: every jump cancels). Right: the exact violation ratio of the
    4-unit family of :func:`_ratio_family` against the kink-pair gap δ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    th, a = np.array(PK.EVEN_CYCLE_THETA, float), np.array(PK.EVEN_CYCLE_A, float)
    al = np.array(PK.EVEN_CYCLE_SIGNS) / np.sin(a)
    phi = np.linspace(-0.14, 0.14, 4001)
    active = np.cos(phi[:, None] - th) > np.cos(a)
    fp = np.sum(active * al * -np.sin(phi[:, None] - th), axis=1)  # d/dφ of α max(0, cos(φ − θ) − cos a)
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.4))
    ax[0].plot(phi, fp, lw=1.5, label="f′(φ), exact kink angles (C¹)")
    ax[0].axhline(0.5, color="k", ls=":", lw=0.8, label="κ/2 (rigidity would need Lip ≥ this)")
    for k in sorted({round(float(t + s * x), 6) for t, x in zip(th, a, strict=True) for s in (1, -1)}):
        ax[0].axvline(k, color="grey", lw=0.5)
    ax[0].set_xlabel("φ (rad)")
    ax[0].set_title("even cycle, κ = 1: |f′| ≤ 0.2003")
    ax[0].legend(fontsize=7)
    d, r = zip(*family, strict=True)
    ax[1].loglog(d, r, "o-", label="exact κ/(2 Lip), kink pairs δ apart")
    if best_ratio is not None:
        ax[1].axhline(float(best_ratio), color="C1", ls="--", label=f"best found, kinks ≥ {SEP_MIN} apart")
    ax[1].set_xlabel("δ (rad)")
    ax[1].set_title("the violation ratio on S¹ is unbounded")
    ax[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(ctx.figure_path("rob_circle.png"), dpi=110)
    plt.close(fig)
    return "figures/rob_circle.png"


# ------------------------------------------------------------------------------------ rob.width_2n
def _rational_orthogonal(rng, d):
    """Cayley transform (I − S)(I + S)⁻¹ of a rational skew matrix: an exact rational rotation."""
    S = sp.zeros(d, d)
    for i in range(d):
        for j in range(i + 1, d):
            S[i, j] = _rat(rng.normal(), 4)
            S[j, i] = -S[i, j]
    return (sp.eye(d) - S) * (sp.eye(d) + S).inv()


def width2n_net(X, y, s):
    """Σ_i (y_i/s)[ReLU(x_i·x − (1−s)) − ReLU(x_i·x − 1)] as a net tuple."""
    W = [list(x) for x in X] * 2
    n = len(X)
    b = [-(1 - s)] * n + [-sp.Integer(1)] * n
    a = [yi / s for yi in y] + [-yi / s for yi in y]
    return (W, b, a, [0] * len(X[0]), 0)


@WIDTH_2N.level("S")
def _(ctx: Context) -> Outcome:
    w = PK.width_2n()
    rng = ctx.rng("rob.width_2n/S")
    s = sp.Rational(1, 4)
    # an exact instance: n = 6 points ±(rotated e_i) on S², labels ±1
    Qm = _rational_orthogonal(rng, 3)
    X = [list(Qm[:, i]) for i in range(3)] + [[-z for z in Qm[:, i]] for i in range(3)]
    y = [1, -1, 1, 1, -1, -1]
    net = width2n_net(X, y, s)
    err = [sp.simplify(RP._exact_eval(net, x) - yi) for x, yi in zip(X, y, strict=True)]
    ok = all(w.checks.values()) and all(e == 0 for e in err)
    return Outcome(ok, {"derivations": f"{sum(w.checks.values())}/{len(w.checks)}", "interp_error": "0 (exact)",
                        "lip": str(w.lipschitz), "threshold": str(w.threshold)},
                   f"unit profile, separation ⇒ exact interpolation, threshold cos(2 arccos(1−s)) = "
                   f"{w.threshold}, Lip² = (2−s)/s on each cap, √7 at s = 1/4; exact 6-point instance on S² "
                   f"interpolates with error 0", details=w.checks)


@WIDTH_2N.level("P")
def _(ctx: Context) -> Outcome:
    rng = ctx.rng("rob.width_2n/P")
    s = sp.Rational(1, 4)
    digits, rows = [], []
    with mpmath.workdps(TOL["precision_dps"]):
        for d in ((3,) if ctx.quick else (3, 4)):
            Qm = _rational_orthogonal(rng, d)
            X = [list(Qm[:, i]) for i in range(d)] + [[-z for z in Qm[:, i]] for i in range(d)]
            y = [int(z) for z in rng.choice([-1, 1], size=2 * d)]
            net = width2n_net(X, y, s)
            err = max(abs(sp.simplify(RP._exact_eval(net, x) - yi)) for x, yi in zip(X, y, strict=True))
            L = K.lipschitz(net, K.Sphere(d))
            exact_eq = sp.simplify(L.value - sp.sqrt(7)) == 0
            digits.append(digits_agreed(L.mp(), D.width2n_lipschitz(mpmath.mpf(1) / 4)))
            rows.append({"d": d, "n": 2 * d, "interp_error": str(err), "lip": str(L.value), "exact_sqrt7": exact_eq,
                         "method": L.method})
        # caps not disjoint (max x_i·x_j = 3/5 > 1/8, still ≤ 1 − s so it interpolates): exact Lip on S²
        X = [[1, 0, 0], [sp.Rational(3, 5), sp.Rational(4, 5), 0], [0, 0, 1]]
        net = width2n_net(X, [1, -1, 1], s)
        Lo = K.lipschitz(net, K.Sphere(3))
        rows.append({"d": 3, "n": 3, "caps": "overlapping (x1·x2 = 3/5)", "lip": float(Lo.upper),
                     "vs_sqrt7": float(Lo.upper) / math.sqrt(7), "method": Lo.method})
    need = _d_needed(ctx)
    low = min(digits)
    ok = low >= TOL["precision_min_digits"] and all(r.get("exact_sqrt7", True) for r in rows) and all(
        r.get("interp_error", "0") == "0" for r in rows)
    return Outcome(ok, {"min_digits": low, "overlap_lip_over_sqrt7": rows[-1]["vs_sqrt7"], "d_needed": need},
                   f"rotated cross-polytopes (n = 2d, d = 3, 4): interpolation error exactly 0, Lip = √7 exactly "
                   f"(closed form vs derived, {low:.0f} digits); overlapping caps in d = 3 give Lip = "
                   f"{rows[-1]['lip']:.4f} = {rows[-1]['vs_sqrt7']:.3f}·√7; uniform data need d ≈ {need}",
                   details={"instances": rows})


def _d_needed(ctx: Context) -> dict:
    """Smallest d on a doubling grid where n uniform points on S^{d−1} meet the s = 1/4 cap condition."""
    rng = ctx.rng("rob.width_2n/d")
    thr = D.cap_threshold(0.25)
    out = {}
    for n in ((16, 64) if ctx.quick else (16, 64, 256)):
        d = 8
        while d <= 8192:
            X = rng.normal(size=(n, d))
            X /= np.linalg.norm(X, axis=1, keepdims=True)
            G = X @ X.T
            np.fill_diagonal(G, -1)
            if G.max() <= thr:
                break
            d *= 2
        out[n] = d
    return out


# ------------------------------------------------------------------------------------------ rob.law
@LAW.level("E")
def _(ctx: Context) -> Outcome:
    return rob_law.run(ctx)


# ---------------------------------------------------------------------------------------- rob.value
@VALUE.level("F")
def _(ctx: Context) -> Outcome:
    ok, _, metric, details = _falsify_all(ctx, P_VALUE)
    return Outcome(ok, metric, f"{metric['applicable']} nets fitting ±1 labels below the noise floor on B_2 ⊂ R², R³ "
                               f"and S² (diam ≤ 4), exact Lip: {metric['confirmed']} confirmed sup|f| > 2 + 4L",
                   details=details)
