"""The cap-overlap graph bracket (numerics.rob.cap_graph): sound against exact constants, exact at ties, narrow at
the width-2n construction's own scale (n = 100, d = 200; n = 200, d = 400)."""

from __future__ import annotations

import math
import time
from fractions import Fraction as Fr

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from checks.rob import strategies as S
from checks.rob.rational import case_fractions
from numerics import rob
from numerics.rob import exact as E
from numerics.rob.bracket import SOURCES
from numerics.rob.canonical import canonicalize
from numerics.rob.cap_graph import cap_graph_bracket, overlap_graph
from numerics.rob.caps import caps_disjoint_exact, lipschitz_disjoint_caps
from numerics.rob.sphere2 import lipschitz_s2


def _below(x: float, q: E.QNum) -> bool:
    """x ≤ √q exactly (x ≥ 0 a float)."""
    return E.QNum(Fr(x) ** 2).cmp(q) <= 0


def _above(x: float, q: E.QNum) -> bool:
    return E.QNum(Fr(x) ** 2).cmp(q) >= 0


def _form(net, d):
    cf = canonicalize(net, rob.Sphere(d))
    return cf, (list(cf.Wq), list(cf.bq), list(cf.aq), list(cf.vq))


# ------------------------------------------------------------------------------ soundness against exact
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(S.degenerate_nets(3, sphere=True, m_max=6))
def test_bracket_contains_the_exact_s2_constant_on_degenerate_nets(case):
    """On S² the small-circle arrangement gives Lip exactly; the cap-graph bracket (tangent, concurrent, nested,
    coincident and cancelling kinks, caps through data points) must contain it, both ends decided exactly."""
    cf, form = _form(case_fractions(case), 3)
    if cf.m < 1:
        return
    ex = lipschitz_s2(*form)
    br = cap_graph_bracket(*form, time_limit=30, max_cliques=10**5)
    assert br is not None
    assert _below(br.lower, ex.value2), (br.lower, float(ex.value2.a))
    assert _above(br.upper, ex.value2), (br.upper, float(ex.value2.a))


def _tangent_caps(d: int, eps: Fr = Fr(0)):
    """u1 = e1, t1 = 3/5 and u2 = (−3/5, 4/5, 0, …), t2 = 7/25 − eps: tangent caps at eps = 0
    (acos 3/5 + acos 7/25 = acos(−3/5)), a lens of width ~eps for eps > 0."""
    u1 = [Fr(1)] + [Fr(0)] * (d - 1)
    u2 = [Fr(-3, 5), Fr(4, 5)] + [Fr(0)] * (d - 2)
    W = [u1, u2]
    b = [Fr(-3, 5), -(Fr(7, 25) - eps)]
    a = [Fr(5), Fr(-7)]
    return (W, b, a, [Fr(1, 3)] + [Fr(0)] * (d - 1), Fr(0))


def test_tangent_caps_are_decided_exactly_and_the_bracket_holds_the_closed_form():
    """Tangency is where the float enclosure cannot decide: the rational fall-back must say "disjoint", and then
    the disjoint-caps closed form (exact) must lie in the bracket."""
    d = 5
    cf, form = _form(_tangent_caps(d), d)
    adj, n_exact = overlap_graph(form[0], form[1])
    assert n_exact >= 1                                  # the exact fall-back was reached …
    assert all(not a for a in adj)                       # … and decided "tangent caps do not meet"
    assert caps_disjoint_exact(form[0], form[1])
    q, _ = lipschitz_disjoint_caps(*form)
    br = cap_graph_bracket(*form)
    assert br.exact_edges >= 1
    assert _below(br.lower, q) and _above(br.upper, q)
    assert br.gap <= 1e-6


@pytest.mark.parametrize("k", [40, 60, 80])
def test_a_lens_thinner_than_float_resolves_is_an_edge(k):
    """Caps that overlap by 2^-k (invisible to float64) meet: the exact fall-back must add the edge, and on S² the
    bracket must contain the exact constant (a dropped edge would lose the lens' cell)."""
    cf, form = _form(_tangent_caps(3, Fr(1, 2 ** k)), 3)
    adj, n_exact = overlap_graph(form[0], form[1])
    assert any(adj)
    assert n_exact >= (1 if k >= 60 else 0)         # 2^-40 the enclosure resolves; 2^-60 and below it cannot
    ex = lipschitz_s2(*form)
    br = cap_graph_bracket(*form)
    assert _below(br.lower, ex.value2) and _above(br.upper, ex.value2)


# ------------------------------------------------------------------------------ the width-2n construction
def _width2n(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = rng.choice([-1.0, 1.0], n)
    s = 0.25
    net = (np.vstack([X, X]), np.r_[-(1 - s) * np.ones(n), -np.ones(n)], np.r_[y / s, -y / s], np.zeros(d), 0.0)
    return X, y, net


def _pair_reference(X, y):
    """Independent value attained by the construction: for opposite labels i, j whose caps meet, the point
    x ∝ x_i + x_j (plus a component ⊥ all data) has g·x = 0 and τ = ‖g‖ = 4‖x_i − x_j‖, when it lies in caps i, j
    only. The largest such value (floats, margin 1e-9) — the constant is at least this."""
    n, d = X.shape
    G = X @ X.T
    best = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            if y[i] == y[j] or G[i, j] <= 0.125 + 1e-9:
                continue
            p = (X[i] + X[j]) / np.linalg.norm(X[i] + X[j])
            c = 0.75 / (p @ X[i]) * (1 + 1e-6)
            if c >= 1:
                continue
            e = np.random.default_rng(i * n + j).standard_normal(d)
            B, _ = np.linalg.qr(X.T)
            e -= B @ (B.T @ e)
            x = c * p + math.sqrt(1 - c * c) * e / np.linalg.norm(e)
            inside = X @ x > 0.75 + 1e-9
            if inside.sum() == 2 and inside[i] and inside[j]:
                best = max(best, 4 * float(np.linalg.norm(X[i] - X[j])))
    return best


@pytest.mark.parametrize("n,d", [(100, 200), (200, 400)])
def test_width_2n_at_the_authors_settings_within_1_percent_in_a_minute(n, d):
    """The author's check_upper_bound settings, where caps overlap: the bracket was [5.29, 45.3] (756%) and
    [2.65, 72.7] after 60 s of branch and bound; the cap graph closes it."""
    X, y, net = _width2n(n, d, seed=n)
    t0 = time.perf_counter()
    L = rob.lipschitz(net, rob.Sphere(d), time_limit=60)
    secs = time.perf_counter() - t0
    assert secs < 60
    assert L.status == "gap reached" and L.gap <= 0.01, (L.lower, L.upper, L.method)
    assert "cap-overlap graph" in L.method and L.upper_source == "cap-overlap graph: clique bounds"
    ref = _pair_reference(X, y)
    assert ref > math.sqrt(7)                          # the caps do overlap with opposite labels
    assert L.upper >= ref * (1 - 1e-12)                # two-sided: the upper end is not below an attained value
    assert L.lower >= math.sqrt(7) * (1 - 1e-9)


def test_dense_caps_hand_over_to_the_branch_and_bound():
    """Hemispheres all meet: the cliques are too many, the routine declines (None), lipschitz() still brackets."""
    rng = np.random.default_rng(1)
    m, d = 40, 6
    W = rng.standard_normal((m, d))
    net = (W, 0.01 * rng.standard_normal(m), rng.standard_normal(m), np.zeros(d), 0.0)
    cf, form = _form(net, d)
    assert cap_graph_bracket(*form, max_cliques=1000) is None
    L = rob.lipschitz(net, rob.Sphere(d), time_limit=5, max_cliques=1000)
    assert "branch and bound" in L.method and L.lower <= L.upper
    assert L.upper_source in SOURCES or L.upper_source.startswith("another route: ")
