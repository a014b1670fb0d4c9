"""numerics.rob: canonical forms and exact Lipschitz constants (SPEC §3).

Why the oracles are independent of the code under test:

* Ball: :func:`checks.rob.oracles.ball_brute_force`, all 2^m sign patterns, each cell's meeting the open ball
  decided by an SOCP (cvxpy + Clarabel) and accepted only with an exact rational point — no arrangement
  recursion, no shared code.
* Sphere S²: dense sampling of the tangential gradient is only a *lower* bound (asserted as such, plus
  closeness); disjoint caps are checked against √7-type closed forms computed here by hand from the
  formula, and the S² arrangement algorithm against the per-cap formula (two separate derivations).
* S¹: the even cycle is checked against finite differences of f(φ) = Σ α_j max(0, cos(φ − θ_j) − cos a_j)
  written directly in angles (kinks coincide exactly there), not through the net.
* Canonical forms: exact SymPy equality and exact evaluation.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pytest
import sympy as sp

from checks.rob.oracles import ball_brute_force
from numerics import rob as K
from numerics.rob import ball as KB
from numerics.rob import exact as KE
from numerics.rob.caps import lipschitz_disjoint_caps
from numerics.rob.sphere2 import lipschitz_s2


def rnet(rng, m, d, bscale=0.5):
    return (rng.normal(size=(m, d)), bscale * rng.normal(size=m), rng.normal(size=m), rng.normal(size=d), 0.3)


def brute_ball(net, R):
    bf = ball_brute_force(net, R)
    assert bf.unresolved == 0
    return bf.value


@pytest.mark.parametrize("d", [1, 2, 3])
def test_ball_lipschitz_equals_brute_force(d):
    rng = np.random.default_rng(10 + d)
    for _ in range(2):
        net = rnet(rng, 6, d)
        L = K.lipschitz(net, K.Ball(d, 1.2))
        assert L.exact and L.lower == L.upper
        assert L.upper == pytest.approx(brute_ball(net, 1.2), rel=1e-9)


def test_ball_dropping_a_cell_is_detected_by_the_oracle(monkeypatch):
    """The oracle has teeth: a recursion that loses the last interval on every line disagrees with it."""
    rng = np.random.default_rng(3)
    real = KB.line_cells

    def lossy(*a, **k):  # the last interval of every line that has more than one
        rows, owner = real(*a, **k)
        last = np.r_[owner[1:] != owner[:-1], True] & np.r_[False, owner[1:] == owner[:-1]]
        return rows[~last], owner[~last]

    monkeypatch.setattr(KB, "line_cells", lossy)
    bad = 0
    for _ in range(6):
        net = rnet(rng, 6, 2)
        bad += abs(K.lipschitz(net, K.Ball(2, 1.2)).upper - brute_ball(net, 1.2)) > 1e-9
    assert bad > 0


def _sampled_sphere(cf, rng, n=300000):
    X = rng.normal(size=(n, cf.U.shape[1]))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    G = K.gradient(cf, X)
    return float(np.sqrt(np.max(np.sum(G * G, 1) - np.sum(G * X, 1) ** 2)))


def test_sphere3_exact_is_above_and_near_dense_sampling():
    rng = np.random.default_rng(4)
    for _ in range(4):
        net = rnet(rng, 6, 3)
        cf = K.canonicalize(net, K.Sphere(3))
        L = K.lipschitz(cf, K.Sphere(3))
        s = _sampled_sphere(cf, rng)
        assert L.exact and s <= L.upper * (1 + 1e-12)
        assert (L.upper - s) / L.upper < 0.01


def test_disjoint_caps_closed_form_equals_arrangement():
    rng = np.random.default_rng(5)
    U = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, -1, -1]]) / np.array([[1], [1], [1], [math.sqrt(3)]])
    for _ in range(5):
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        net = (U @ Q.T, -0.8 * np.ones(4), rng.normal(size=4), 0.4 * rng.normal(size=3), 0.0)
        cf = K.canonicalize(net, K.Sphere(3))
        assert K.caps_disjoint(cf)
        q1, _ = lipschitz_disjoint_caps(cf.Wq, cf.bq, cf.aq, cf.vq)
        assert q1.cmp(lipschitz_s2(cf.Wq, cf.bq, cf.aq, cf.vq).value2) == 0  # exactly the same number


def test_width_2n_sqrt7_in_d5():
    """Cross-polytope data, s = 1/4: Lip = √((2−s)/s) = √7, computed here from the formula."""
    d, s = 5, 0.25
    Q, _ = np.linalg.qr(np.random.default_rng(6).normal(size=(d, d)))
    X = np.vstack([Q, -Q])
    y = np.array([1, -1, 1, 1, -1, 1, -1, -1, 1, 1], float)
    net = (np.vstack([X, X]), np.r_[-(1 - s) * np.ones(2 * d), -np.ones(2 * d)], np.r_[y / s, -y / s],
           np.zeros(d), 0.0)
    L = K.lipschitz(net, K.Sphere(d))
    assert L.exact and L.upper == pytest.approx(math.sqrt(7), rel=1e-12)
    assert np.allclose(K.evaluate(net, X), y, atol=1e-12)


def test_circle_float_matches_dense_derivative():
    rng = np.random.default_rng(7)
    net = rnet(rng, 5, 2)
    cf = K.canonicalize(net, K.Sphere(2))
    L = K.lipschitz(cf, K.Sphere(2))
    phi = np.linspace(0, 2 * np.pi, 2_000_001)
    f = K.evaluate(net, np.stack([np.cos(phi), np.sin(phi)], 1))
    fd = np.max(np.abs(np.diff(f) / np.diff(phi)))
    assert fd <= L.upper * (1 + 1e-9) and (L.upper - fd) / L.upper < 1e-4


def test_even_cycle_exact_vs_angle_finite_differences_and_float_warning():
    th = [0, sp.Rational(1, 20), sp.Rational(1, 25), -sp.Rational(1, 100)]
    a = [sp.Rational(1, 10), sp.Rational(1, 20), sp.Rational(1, 25), sp.Rational(9, 100)]
    sg = [1, -1, 1, -1]
    alpha = [s / sp.sin(x) for s, x in zip(sg, a, strict=True)]
    net = ([[sp.cos(x), sp.sin(x)] for x in th], [-sp.cos(x) for x in a], alpha, [0, 0], 0)
    L = K.lipschitz(net, K.Sphere(2))
    thf, af = np.array(th, float), np.array(a, float)
    al = np.array(sg) / np.sin(af)
    phi = np.linspace(-0.3, 0.3, 600_001)
    f = np.maximum(np.cos(phi[:, None] - thf) - np.cos(af), 0) @ al
    fd = np.max(np.abs(np.diff(f) / np.diff(phi)))
    assert float(L.upper) == pytest.approx(fd, rel=1e-4)
    assert float(L.upper) < 0.5  # much smaller than κ/2 with κ = 1
    with pytest.warns(K.KinkCoincidenceWarning):
        Lf = K.lipschitz(K.as_float(net), K.Sphere(2))
    assert Lf.upper > 0.9  # the float net's kinks do not coincide: honest, and warned about


def test_canonical_uniqueness_exact_same_plane_flip_and_1e6():
    R = sp.Rational
    W = [[R(1), R(2), R(-1)], [R(0), R(1), R(3)], [R(2), R(-1), R(1)]]
    b, a, v = [R(1, 3), R(-1, 2), R(1, 5)], [R(2), R(-1), R(3, 2)], [R(1), R(0), R(-1)]
    base = (W, b, a, v, R(1, 7))
    # same function: split unit 0 over (w, b) and (2w, 2b); flip unit 1 (a ReLU(z) = a ReLU(−z) + a z);
    # add ±10⁶ on one hyperplane with different scalings
    W2 = [W[0], [2 * x for x in W[0]], [-x for x in W[1]], W[2], [5 * x for x in W[2]]]
    b2 = [b[0], 2 * b[0], -b[1], b[2], 5 * b[2]]
    a2 = [a[0] / 2, a[0] / 4, a[1], a[2] + 10**6, -R(10**6, 5)]
    v2 = [vi + a[1] * wi for vi, wi in zip(v, W[1], strict=True)]
    other = (W2, b2, a2, v2, R(1, 7) + a[1] * b[1])
    for dom in (K.Ball(3, R(3, 2)), K.Sphere(3)):
        c1, c2 = K.canonicalize(base, dom), K.canonicalize(other, dom)
        assert c1.m == 3 and c1.equals(c2)
        assert all(t >= 0 for t in c1.t)


def test_k_piece_activation_gives_at_most_k_minus_1_kinks_per_unit():
    rng = np.random.default_rng(8)
    net = rnet(rng, 5, 3, bscale=0.3)
    ht = K.PiecewiseLinear((-0.5, 0.5), (0.0, 1.0, 0.0), -0.5)  # clip(z, −0.5, 0.5)
    cf = K.canonicalize(net, K.Ball(3, 1.0), activation=ht)
    assert cf.m <= 2 * 5
    X = rng.normal(size=(200, 3)) * 0.5
    W, b, a, v, c = net
    ref = np.clip(X @ W.T + b, -0.5, 0.5) @ a + X @ v + c
    assert np.allclose(K.evaluate(cf, X), ref, atol=1e-12)


def test_bracket_contains_the_exact_value():
    rng = np.random.default_rng(9)
    for dom in (K.Sphere(3), K.Ball(3, 1.0)):
        net = rnet(rng, 8, 3)
        cf = K.canonicalize(net, dom)
        ex = K.lipschitz(cf, dom)
        br = K.lipschitz(cf, dom, max_exact_units=0, rel_gap=1e-3, time_limit=20)
        assert not br.exact and br.lower <= ex.enclosure[1] and br.upper >= ex.enclosure[0]  # contains it
        # and is tight: to rel_gap on the ball; on the sphere the node bound is ‖g‖ relaxed, 1% is what it states
        tight = 2e-3 if isinstance(dom, K.Ball) else 1e-2
        assert br.status in ("gap reached", "exhausted") and br.upper <= ex.upper * (1 + tight)


@pytest.mark.parametrize("domain", [K.Ball(3, 1.0), K.Sphere(3)])
def test_64_units_in_d3_take_seconds(domain):
    rng = np.random.default_rng(11)
    net = rnet(rng, 64, 3)
    t0 = time.perf_counter()
    L = K.lipschitz(net, domain)
    assert L.exact and time.perf_counter() - t0 < 20.0


@pytest.mark.parametrize("bad, msg", [
    ((np.ones((2, 3)), np.ones(3), np.ones(2), np.ones(3), 0.0), "b has shape"),
    ((np.ones((2, 3)), np.ones(2), np.ones(2), np.ones(3), np.nan), "NaN"),
    ((np.full((2, 3), np.inf), np.ones(2), np.ones(2), np.ones(3), 0.0), "NaN or inf"),
    ((np.ones((2, 3)) * 1j, np.ones(2), np.ones(2), np.ones(3), 0.0), "dtype"),
    ((np.ones((2, 3)), np.ones(2), np.ones(2), np.ones(3)), "5-tuple"),
    ((np.ones((2, 4)), np.ones(2), np.ones(2), np.ones(4), 0.0), "dimension"),
    (([[sp.Symbol("w"), 1, 1]], [0], [1], [0, 0, 0], 0), "free symbols"),
    ((np.array([["a", "b", "c"]]), np.ones(1), np.ones(1), np.ones(3), 0.0), "dtype"),
])
def test_bad_input_is_a_value_error_naming_the_problem(bad, msg):
    with pytest.raises(ValueError, match=msg):
        K.lipschitz(bad, K.Sphere(3))


@pytest.mark.parametrize("make", [lambda: K.Sphere(1), lambda: K.Ball(3, -1.0), lambda: K.Ball(0, 1.0),
                                  lambda: K.Ball(2, float("nan"))])
def test_bad_domains(make):
    with pytest.raises(ValueError):
        make()


def test_float_input_warns_only_when_kinks_nearly_coincide():
    rng = np.random.default_rng(12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        K.lipschitz(rnet(rng, 5, 2), K.Sphere(2))


def test_rigidity_needs_d3_on_the_sphere_and_holds_on_random_nets():
    rng = np.random.default_rng(13)
    with pytest.raises(ValueError, match="d >= 3"):
        K.rigidity(rnet(rng, 3, 2), K.Sphere(2))
    for dom in (K.Sphere(3), K.Ball(3, 1.0), K.Ball(2, 2.0)):
        r = K.rigidity(rnet(rng, 7, dom.d), dom)
        assert r.lipschitz.exact and 0 < r.ratio <= 1  # one side; the equality cases are the next test


@pytest.mark.parametrize("dom", [K.Sphere(3), K.Sphere(5), K.Ball(2, 1.5), K.Ball(3, 1.0)])
def test_rigidity_equality_case_and_tangential_jump_by_hand(dom):
    """f = a ReLU(u·x) − (a/2) u·x: the gradient is ±(a/2)u on the two sides, so Lip = |a|/2 on the ball and on the
    sphere (the great circle u·x = 0 is the kink), the kink weight is |a| (t = 0), and the ratio is exactly 1: a
    routine or a ratio that is too loose fails here. And with t = 3/5 on the sphere the weight is |a|·4/5."""
    d, a = dom.d, -2.5
    u = np.zeros(d)
    u[0], u[1] = 0.6, 0.8
    r = K.rigidity(([u], [0.0], [a], -a / 2 * u, 0.0), dom)
    assert r.lipschitz.exact and r.lipschitz.upper == pytest.approx(abs(a) / 2, rel=1e-15)
    assert r.ratio == pytest.approx(1.0, rel=1e-15) and r.holds_exactly
    if isinstance(dom, K.Sphere):
        cf = K.canonicalize(([u], [-0.6], [a], np.zeros(d), 0.0), dom)
        assert [float(x) for x in cf.tangential_jumps()] == [pytest.approx(abs(a) * 0.8, rel=1e-15)]
        # the outside wins: f = ReLU(u·x − 3/5) − 2u·x has gradient −u on the cap (tangential ≤ 4/5 there) and
        # −2u outside it, which holds the great circle u·x = 0: Lip = 2
        L = K.lipschitz(([u], [-0.6], [1.0], -2 * u, 0.0), dom)
        assert L.exact and L.upper == pytest.approx(2.0, rel=1e-15)
    # a unit whose hyperplane only touches the domain (t = ρ exactly: e_1·x = ρ) is zero on it: no kink
    rho = 1.0 if isinstance(dom, K.Sphere) else float(dom.R)
    e1 = np.eye(d)[0]
    assert K.canonicalize(([e1], [-rho], [a], np.zeros(d), 0.0), dom).m == 0
    assert K.canonicalize(([e1], [-rho * (1 - 2.0**-40)], [a], np.zeros(d), 0.0), dom).m == 1  # just inside


@pytest.mark.parametrize("dom", [K.Ball(2, 1.5), K.Ball(3, 1.0), K.Sphere(3)])
@pytest.mark.parametrize("swap", [False, True])
def test_near_tied_cells_are_decided_exactly(dom, swap):
    """ReLU(e₁·x) + ReLU((−e₁ + δe₂)·x), δ = 2⁻³⁰: cells with ‖g‖² = 1 and 1 + δ² (and 0, δ²), all meeting the domain
    (on S² each great circle g·x = 0 meets its closed cell), so Lip² = 1 + 2⁻⁶⁰ exactly, by hand: the float
    enclosures of the two largest overlap and only the exact comparison separates them."""
    from fractions import Fraction as Fr

    d, delta = dom.d, Fr(1, 2**30)
    W = [[Fr(1)] + [Fr(0)] * (d - 1), [Fr(-1), delta] + [Fr(0)] * (d - 2)]
    if swap:
        W = W[::-1]
    L = K.lipschitz((W, [Fr(0)] * 2, [Fr(1)] * 2, [Fr(0)] * d, Fr(0)), dom)
    assert L.exact and L.value2.cmp(KE.QNum(1 + delta * delta)) == 0


def test_width_2n_ratio_is_one_half_and_derived_closed_forms():
    """Every cap of the width-2n interpolant has kink weight (1/s)√(1 − (1 − s)²) = √((2−s)/s) = Lip, so the
    rigidity ratio is 1/2; the generated closed forms at s = 1/4 are √7 and 2s² − 4s + 1 = 1/8 (by hand), and the
    tangential jump norm is |α|√(1 − t²) (≥ 0 for α < 0)."""
    import mpmath

    from numerics._derived import rob as derived

    s = 0.25
    X = np.vstack([np.eye(3), -np.eye(3)])
    y = np.array([1, -1, 1, 1, -1, -1], float)
    net = (np.vstack([X, X]), np.r_[-(1 - s) * np.ones(6), -np.ones(6)], np.r_[y / s, -y / s], np.zeros(3), 0.0)
    r = K.rigidity(net, K.Sphere(3))
    assert r.lipschitz.upper == pytest.approx(math.sqrt(7), rel=1e-14) and r.ratio == pytest.approx(0.5, rel=1e-14)
    assert float(derived.width2n_lipschitz(mpmath.mpf(1) / 4)) == pytest.approx(math.sqrt(7), rel=1e-15)
    assert derived.cap_threshold(sp.Rational(1, 4)) == sp.Rational(1, 8)
    assert float(derived.tangential_jump_norm(mpmath.mpf(-2), mpmath.mpf(3) / 5)) == pytest.approx(1.6, rel=1e-15)


def test_float_net_and_its_exact_rational_reading_get_the_same_constant():
    """"Exact" is exact for the float net as given: its binary rationals, as SymPy input, give the same number."""
    rng = np.random.default_rng(14)
    for dom in (K.Sphere(3), K.Ball(3, 1.0), K.Sphere(2)):
        for m in (3, 8):
            net = rnet(rng, m, dom.d)
            a, b = K.lipschitz(net, dom), K.lipschitz(K.as_exact(net), dom)
            assert a.exact and b.exact and sp.simplify(a.value - b.value) == 0 and a.upper == b.upper


def test_witness_is_a_genuine_point_of_a_genuine_cell_attaining_the_constant():
    """Checked from the net's definition (Fractions on the ball, 40-digit mpmath on S²), not the routine."""
    from fractions import Fraction

    import mpmath

    rng = np.random.default_rng(15)
    for d in (2, 3):
        net = rnet(rng, 6, d)
        L = K.lipschitz(net, K.Ball(d, 1.2))
        cf = K.canonicalize(net, K.Ball(d, 1.2))
        x = [Fraction(t) for t in L.witness["point"]]
        assert sum(t * t for t in x) < Fraction(1.2) ** 2
        g = list(cf.vq)
        for w, b, a, on in zip(cf.Wq, cf.bq, cf.aq, L.witness["pattern"], strict=True):
            z = sum(wi * xi for wi, xi in zip(w, x, strict=True)) + b
            assert z != 0 and (z > 0) == on
            if on:
                g = [gi + a * wi for gi, wi in zip(g, w, strict=True)]
        assert sp.Rational(sum(t * t for t in g)) == sp.nsimplify(L.value ** 2)
    for _ in range(3):
        net = rnet(rng, 6, 3)
        L = K.lipschitz(net, K.Sphere(3))
        cf = K.canonicalize(net, K.Sphere(3))
        with mpmath.workdps(40):
            x = [mpmath.mpf(t) for t in L.witness["point"]]
            nx = mpmath.sqrt(sum(t * t for t in x))
            x = [t / nx for t in x]
            g = [mpmath.mpf(float(t)) for t in cf.vq]
            for w, b, a, on in zip(cf.Wq, cf.bq, cf.aq, L.witness["pattern"], strict=True):
                z = sum(mpmath.mpf(float(wi)) * xi for wi, xi in zip(w, x, strict=True)) + mpmath.mpf(float(b))
                assert abs(z) < 1e-9 or (z > 0) == on  # on a kink through the point, either side
                if on:
                    g = [gi + mpmath.mpf(float(a)) * mpmath.mpf(float(wi)) for gi, wi in zip(g, w, strict=True)]
            gx = sum(gi * xi for gi, xi in zip(g, x, strict=True))
            h = sum(gi * gi for gi in g) - gx * gx
            assert abs(h - L.mp() ** 2) < 1e-9 * max(1, h)
