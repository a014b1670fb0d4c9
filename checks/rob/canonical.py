r"""rob.canonical: canonicalising (normalise, flip with ReLU(−z) = ReLU(z) − z, absorb units affine or zero on
the domain, merge equal hyperplanes, drop zero coefficients) preserves f on the domain; the result is unique
on B_R and on S^{d−1} (d ≥ 3) for any two parametrisations of one function.

Derivation: :func:`proofs.rob.relu_identities`. Evaluator: :func:`numerics.rob.canonicalize` (with
:class:`numerics.rob.PiecewiseLinear` for the K-piece activation).

* S — the ReLU identities simplify to 0; exact rational nets reparametrised by every recipe give the same
  exact canonical form on B_3/2 and S², and f − f_canon = 0 exactly at rational points (on the kink sets
  too); hard-tanh keeps at most 2 kinks per unit with exact values;
* A — torch float64 values and autograd gradients of the original and the canonical net agree;
* F — :func:`canon_property`: reparametrised float nets, value and uniqueness, confirmed exactly.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import sympy as sp
from hypothesis import strategies as st

from checks.evidence.outcome import Outcome
from checks.evidence.registry import Context
from checks.evidence.tol import TOL
from checks.rob import cases, strategies
from checks.rob.properties import domain_of, net_of
from checks.runners.falsify import Property, run_properties
from numerics import rob
from proofs import rob as proof

ID = "rob.canonical"

RECIPES = ("split", "flip", "cancel_1e6", "scale", "zero_unit", "affine_unit", "permute")


# ------------------------------------------------------------------------------------------ property
@st.composite
def canon_cases(draw, d: int, sphere: bool):
    case = draw(strategies.nets(d, 1.0 if sphere else 1.5, m_max=4))
    case["sphere"] = sphere
    case["recipe"] = draw(st.lists(st.sampled_from(RECIPES), min_size=1, max_size=3))
    case["pick"] = draw(st.integers(0, 50))
    case["X"] = [[draw(st.floats(-1, 1, width=64)) for _ in range(d)] for _ in range(6)]
    return case


def reparametrise(case, exact: bool):
    """A different parametrisation of the same function (exact when ``exact``), by the case's recipe."""
    W, b, a, v, c = net_of(case, exact)
    num = (lambda x: sp.Rational(x)) if exact else float
    W = [list(r) for r in W]
    b, a, v = list(b), list(a), list(v)
    rho = num(case["rho"]) if not case.get("sphere") else num(1)
    for step, op in enumerate(case["recipe"]):
        j = (case["pick"] + step) % len(a)
        w, bj, aj = W[j], b[j], a[j]
        if op == "split":  # a ReLU(z) = (a/2) ReLU(z) + (a/4) ReLU(2z)
            a[j] = aj / 2
            W.append([2 * x for x in w])
            b.append(2 * bj)
            a.append(aj / 4)
        elif op == "flip":  # a ReLU(z) = a ReLU(−z) + a z
            W[j], b[j] = [-x for x in w], -bj
            v = [vi + aj * x for vi, x in zip(v, w, strict=True)]
            c = c + aj * bj
        elif op == "cancel_1e6":
            W += [list(w), [3 * x for x in w]]
            b += [bj, 3 * bj]
            a += [num(10**6), num(-10**6) / 3]
        elif op == "scale":
            W[j], b[j], a[j] = [4 * x for x in w], 4 * bj, aj / 4
        elif op == "zero_unit":  # a unit that is zero on the domain: threshold beyond rho (‖w‖₁ ≥ ‖w‖: rational)
            nw = sum(abs(x) for x in w)
            W.append(list(w))
            b.append(-(rho + 1) * nw)
            a.append(num(5))
        elif op == "affine_unit":  # ReLU(z) = z where z > 0 on the whole domain; compensate in (v, c)
            nw = sum(abs(x) for x in w)
            bb = (rho + 1) * nw
            W.append(list(w))
            b.append(bb)
            a.append(num(7))
            v = [vi - 7 * x for vi, x in zip(v, w, strict=True)]
            c = c - 7 * bb
        elif op == "permute":
            order = list(range(len(a)))[::-1]
            W, b, a = [W[i] for i in order], [b[i] for i in order], [a[i] for i in order]
    if exact:
        return (W, b, a, v, c)
    return (np.array(W, float), np.array(b, float), np.array(a, float), np.array(v, float), float(c))


def canon_margin(case, *, exact: bool) -> float:
    """> 0 when canonicalisation changes f on the domain or two parametrisations give two forms."""
    dom = domain_of(case)
    net1, net2 = net_of(case, exact), reparametrise(case, exact)
    c1, c2 = rob.canonicalize(net1, dom), rob.canonicalize(net2, dom)
    X = np.asarray(case["X"], float)
    if case.get("sphere"):
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    else:
        X = X * case["rho"] / max(1.0, float(np.max(np.linalg.norm(X, axis=1))))
    if not exact:
        scale = 1 + float(np.sum(np.abs(np.asarray(net2[2])) * np.linalg.norm(net2[0], axis=1)))
        err = max(float(np.max(np.abs(rob.evaluate(net1, X) - rob.evaluate(c1, X)))),
                  float(np.max(np.abs(rob.evaluate(net2, X) - rob.evaluate(c2, X))))) / scale
        same = c1.equals(c2, tol=TOL["rob_canon_equal"])
        return (err - TOL["rob_screen_slack"]) if same else 1.0
    if not c1.equals(c2):
        return 1.0
    Xq = [[sp.Rational(float(x)) for x in row] for row in X]
    if case.get("sphere"):  # rational points on the sphere: inverse stereographic projection
        Xq = [cases.stereo(row) for row in Xq]
    worst = 0
    for row in Xq:
        f1 = cases.exact_eval(net1, row)
        fc = cases.exact_eval(c1.net(), row)
        worst = max(worst, abs(sp.N(f1 - fc, 60)))
    return float(worst) - TOL["rob_exact_slack"]


def canon_property(name: str, d: int, *, sphere: bool, budget: int = 60) -> Property:
    return Property(name=name, strategy=canon_cases(d, sphere), screen=lambda c: canon_margin(c, exact=False),
                    confirm=lambda c: canon_margin(c, exact=True), to_json=lambda c: c,
                    from_json=lambda c: c, budget=budget)


PROPERTIES = (canon_property("rob.canonical/ball3", 3, sphere=False),
              canon_property("rob.canonical/sphere3", 3, sphere=True))


# ------------------------------------------------------------------------------------------ levels
def level_S(ctx: Context) -> Outcome:
    ids = proof.relu_identities()
    rng = ctx.rng("rob.canonical/S")
    n_nets = 2 if ctx.quick else 4
    same, value_zero, kink_pts, forms = 0, 0, 0, 0
    for dom in (rob.Ball(3, sp.Rational(3, 2)), rob.Sphere(3)):
        for _ in range(n_nets):
            net = cases.exact_net(rng, 3, 3)
            if isinstance(dom, rob.Sphere):  # put every unit's kink through a rational point of the sphere
                Q = [cases.stereo([cases.rat(x, 8) for x in rng.normal(size=3)]) for _ in net[0]]
                b = [-sum(w * q for w, q in zip(wk, qk, strict=True)) for wk, qk in zip(net[0], Q, strict=True)]
                net = (net[0], b, *net[2:])
            else:
                Q = []
                for wk, bk in zip(net[0], net[1], strict=True):  # a rational point on each hyperplane
                    i = max(range(3), key=lambda k: abs(wk[k]))  # noqa: B023
                    x = [cases.rat(z, 8) * sp.Rational(1, 4) for z in rng.normal(size=3)]
                    x[i] = -(bk + sum(wk[k] * x[k] for k in range(3) if k != i)) / wk[i]
                    Q.append(x)
            cf = rob.canonicalize(net, dom)
            forms += 1
            for recipe in RECIPES:
                case = {"rho": float(dom.radius), "sphere": isinstance(dom, rob.Sphere), "recipe": [recipe],
                        "pick": 0}
                other = reparametrise({**case, **cases.case_of(net)}, exact=True)
                same += rob.canonicalize(other, dom).equals(cf)
            pts = [cases.stereo([cases.rat(x, 8) for x in rng.normal(size=3)]) if isinstance(dom, rob.Sphere)
                   else [cases.rat(x, 8) * sp.Rational(1, 3) for x in rng.normal(size=3)] for _ in range(4)]
            for x in pts + Q:
                value_zero += sp.simplify(cases.exact_eval(net, x) - cases.exact_eval(cf.net(), x)) == 0
            kink_pts += len(Q)
    total_same = forms * len(RECIPES)
    total_pts = forms * 4 + kink_pts
    # K-piece activation: hard-tanh (K = 3) gives at most 2 kinks per unit, values preserved exactly
    ht = rob.PiecewiseLinear((-1, 1), (0, 1, 0), -1)
    net = cases.exact_net(rng, 3, 3, planted=False)
    cfk = rob.canonicalize(net, rob.Ball(3, 2), activation=ht)
    kpiece_ok = cfk.m <= 2 * 3
    for x in [[cases.rat(z, 8) * sp.Rational(1, 2) for z in rng.normal(size=3)] for _ in range(4)]:
        ref = sum(ak * sp.Max(-1, sp.Min(1, sum(w * xi for w, xi in zip(wk, x, strict=True)) + bk))
                  for wk, bk, ak in zip(net[0], net[1], net[2], strict=True)) + sum(
            vi * xi for vi, xi in zip(net[3], x, strict=True)) + net[4]
        kpiece_ok &= sp.simplify(ref - cases.exact_eval(cfk.net(), x)) == 0
    passed = all(ids.values()) and same == total_same and value_zero == total_pts and kpiece_ok
    return Outcome(passed, {"identities": f"{sum(ids.values())}/{len(ids)}",
                            "unique_forms": f"{same}/{total_same}", "exact_values": f"{value_zero}/{total_pts}",
                            "kink_points": kink_pts, "k_piece": kpiece_ok},
                   f"ReLU identities {sum(ids.values())}/{len(ids)}; {same}/{total_same} reparametrisations "
                   f"(split, flip, ±1e6, scale, zero/affine units, permute) give the same exact form on B_3/2 and "
                   f"S²; f − f_canon = 0 exactly at {value_zero}/{total_pts} points ({kink_pts} on kink sets)",
                   details={"identities": ids})


def level_A(ctx: Context) -> Outcome:
    import torch

    rng = ctx.rng("rob.canonical/A")
    worst, n = 0.0, 0
    for dom in (rob.Ball(3, 1.5), rob.Sphere(3), rob.Ball(2, 1.0)):
        d = dom.d
        for _ in range(3 if ctx.quick else 8):
            m = 6
            W, b, a, v = rng.normal(size=(m, d)), 0.5 * rng.normal(size=m), rng.normal(size=m), rng.normal(size=d)
            W = np.vstack([W, 2 * W[:1], -W[1:2]])  # same hyperplane; opposite orientation
            b, a = np.r_[b, 2 * b[0], -b[1]], np.r_[a, 0.7, 1.3]
            net = (W, b, a, v, 0.2)
            cf = rob.canonicalize(net, dom)
            X = rng.normal(size=(64, d))
            X /= np.linalg.norm(X, axis=1, keepdims=True)
            if isinstance(dom, rob.Ball):
                X *= float(dom.R) * rng.random((64, 1))
            keep = np.min(np.abs(X @ W.T + b) / np.linalg.norm(W, axis=1), axis=1) > TOL["rob_kink_clearance"]
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
    W, b, a, v, c = (torch.tensor(np.asarray(rob.f64(z), float)) for z in net)
    x = torch.tensor(X, requires_grad=True)
    f = torch.relu(x @ W.reshape(len(a), -1).T + b) @ a + x @ v + c
    (g,) = torch.autograd.grad(f.sum(), x)
    return f.detach().numpy(), g.numpy()


def level_F(ctx: Context) -> Outcome:
    out = run_properties(ctx, PROPERTIES, ID, ignore=(rob.KinkCoincidenceWarning,))
    m = out.metric
    return replace(out, summary=f"{m['examples']} reparametrised nets (B_1.5, S²), "
                                f"{m['confirmed']} confirmed failures of value or uniqueness")
