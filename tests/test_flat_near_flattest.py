"""flat.near_flattest: the excess quadratic, the near-flattest polytope and the adversary, against independent
references (Monte Carlo population loss, brute-force vertex enumeration), and its quick E level."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from checks.evidence.registry import Context
from checks.flat import near_flattest as nf
from numerics.flat.duality import flattest_outer_weights, invariant_form
from numerics.flat.population import population_loss_mc
from numerics.flat.targets import single_index


def _instance(seed: int, n: int, m: int, d: int = 3, tau2: float = 0.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    t = single_index(u, "relu")
    y = t(X) + math.sqrt(tau2) * rng.standard_normal(n)
    Th = rng.standard_normal((m - 1, d))
    Th = np.vstack([u, Th / np.linalg.norm(Th, axis=1, keepdims=True)])
    return X, y, Th, t


def test_excess_quadratic_matches_monte_carlo():
    X, y, Th, t = _instance(1, 6, 9)
    G, c, e0 = nf.excess_quadratic(Th, t)
    rng = np.random.default_rng(2)
    for _ in range(3):
        b = rng.standard_normal(len(Th))
        mc, se = population_loss_mc(b, Th, t, 0.0, "relu", samples=400_000, rng=rng)
        assert abs(nf.excess(b, G, c, e0) - mc) <= 5 * se


def test_target_in_the_dictionary_has_zero_excess():
    _, _, Th, t = _instance(3, 5, 8)
    G, c, e0 = nf.excess_quadratic(Th, t)
    e = np.zeros(len(Th))
    e[0] = 1.0
    assert abs(nf.excess(e, G, c, e0)) <= 1e-14 * e0
    assert nf.excess(2 * e, G, c, e0) == pytest.approx(0.5 * e0, rel=1e-12)   # ½E(f*)²


def _vertices(Phi, y, om, budget):
    """Every vertex of {(b⁺, b⁻, s) ≥ 0 : Φ(b⁺ − b⁻) = y, ω·(b⁺ + b⁻) + s = budget}, by all bases (brute force)."""
    n, m = Phi.shape
    A = np.vstack([np.hstack([Phi, -Phi, np.zeros((n, 1))]), np.concatenate([om, om, [1.0]])[None, :]])
    rhs = np.concatenate([y, [budget]])
    out = []
    for cols in itertools.combinations(range(2 * m + 1), n + 1):
        B = A[:, cols]
        if abs(np.linalg.det(B)) < 1e-12:
            continue
        z = np.linalg.solve(B, rhs)
        if np.all(z >= -1e-10):
            full = np.zeros(2 * m + 1)
            full[list(cols)] = z
            out.append(full[:m] - full[m:2 * m])
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 11])   # 5-8: a dead direction (tested below); 9: rank 2
def test_adversary_reaches_the_brute_force_maximum(seed):
    X, y, Th, t = _instance(10 + seed, 3, 6)
    res = flattest_outer_weights(Th, X, y, "relu")
    inv = invariant_form(Th, X, "relu")
    if np.any(inv.omega <= 0):   # a dead direction: unbounded (tested below)
        pytest.fail("dead direction: pick another seed")
    G, c, e0 = nf.excess_quadratic(Th, t)
    budget = 2 * res.dual_value
    verts = _vertices(inv.Phibar, y, inv.omega, budget)
    assert verts
    brute = max(nf.excess(v, G, c, e0) for v in verts)
    S = nf.NearFlattestSet(inv.Phibar, y, inv.omega, budget)
    rng = np.random.default_rng(seed)
    starts = [G @ res.b - c] + [rng.standard_normal(len(Th)) for _ in range(8)]
    b, val, steps = nf.worst_excess(S, G, c, e0, starts)
    assert steps > 0
    # sound: a point of the set, so at most the maximum; and on these small polytopes it finds the maximum
    assert np.sum(inv.omega * np.abs(b)) <= budget * (1 + 1e-9)
    assert np.max(np.abs(inv.Phibar @ b - y)) <= 1e-8
    assert val <= brute * (1 + 1e-9) + 1e-14
    assert val >= brute * (1 - 1e-6)


def test_ascent_never_decreases_and_beats_the_flattest():
    X, y, Th, t = _instance(7, 8, 17)
    res = flattest_outer_weights(Th, X, y, "relu")
    inv = invariant_form(Th, X, "relu")
    G, c, e0 = nf.excess_quadratic(Th, t)
    S = nf.NearFlattestSet(inv.Phibar, y, inv.omega, 2 * res.dual_value)
    g0 = np.random.default_rng(0).standard_normal(len(Th))
    b = S.argmax(g0)
    vals = [nf.excess(b, G, c, e0)]
    for _ in range(10):   # the ascent written out: b ← argmax ∇E(b)·b over the set
        b = S.argmax(G @ b - c)
        vals.append(nf.excess(b, G, c, e0))
    assert all(v2 >= v1 * (1 - 1e-9) for v1, v2 in zip(vals, vals[1:], strict=False))
    assert vals[-1] > 1.05 * vals[0]   # this start is not the worst vertex: the climb matters here
    _, worst, _ = nf.worst_excess(S, G, c, e0, [g0])   # one start: it must climb as far as the written-out ascent
    assert worst >= vals[-1] * (1 - 1e-6)
    _, worst, _ = nf.worst_excess(S, G, c, e0, [G @ res.b - c])
    assert worst >= nf.excess(res.b, G, c, e0)


def test_a_dead_direction_makes_the_set_unbounded():
    X, y, Th, t = _instance(15, 3, 6)   # y = 0 and directions inactive on all three points
    inv = invariant_form(Th, X, "relu")
    assert np.any(inv.omega == 0)
    G, c, e0 = nf.excess_quadratic(Th, t)
    S = nf.NearFlattestSet(inv.Phibar, y, inv.omega, 1.0)
    b, val, _ = nf.worst_excess(S, G, c, e0, [np.ones(len(Th))])
    assert b is None and val == math.inf


def test_a_budget_below_the_flattest_is_empty():
    X, y, Th, _ = _instance(8, 6, 13)
    res = flattest_outer_weights(Th, X, y, "relu")
    inv = invariant_form(Th, X, "relu")
    S = nf.NearFlattestSet(inv.Phibar, y, inv.omega, 0.99 * res.dual_value)
    assert S.argmax(np.ones(len(Th))) is None


def test_cell_points_are_truly_near_flattest():
    row = nf.cell(np.random.default_rng(4), 12, 0.1, kappas=(2.0, 4.0), starts=2)
    for k in ("k2", "k4"):
        got = row[k]
        assert got["found"] and got["inside"] and got["upsilon_ratio"] <= float(k[1:])
        assert got["worst_excess"] >= row["flattest_excess"]
    assert row["k4"]["worst_excess"] >= row["k2"]["worst_excess"] * 0.5   # a bigger set: no collapse


def test_regions_follow_the_rate():
    r = nf.REGIONS
    assert r.statement == (-math.inf, -0.3) and r.negation == ((-0.3, math.inf),)


def test_quick_level_E(tmp_path):
    out = nf.level_E(Context(seed=1, report_dir=tmp_path, quick=True))
    assert out.passed, out.summary
    assert out.verdict in ("reproduced", "not reproduced", "inconclusive", "partially reproduced", "contradicted")
    assert out.metric["adversary_points"] == out.metric["cells"]


def test_sphere_cell_points_are_near_flattest_against_every_direction():
    """The whole-sphere design: the certified lower end is ≤ Υ of the flattest interpolator over directions the
    suite never chose (an independent random dictionary, u included so that it interpolates), and every point
    the adversary returns interpolates with Υ ≤ κ·Υ_low."""
    rng = np.random.default_rng(21)
    row = nf.cell_sphere(rng, 12, 0.1, kappas=(2.0,), starts=1)
    assert 0 < row["upsilon_low"] <= row["upsilon_star"] and row["sphere_rel_width"] < 0.5
    got = row["k2"]
    assert got["found"] and got["inside"] and got["upsilon_ratio"] <= 2.0 and got["residual"] <= 1e-8
    assert got["worst_excess"] >= row["flattest_excess"]
    # the same data, drawn again, against 400 random directions: no interpolator beats the certified lower end
    rng = np.random.default_rng(21)
    X = rng.standard_normal((12, nf.D_SPHERE))
    u = rng.standard_normal(nf.D_SPHERE)
    u /= np.linalg.norm(u)
    y = np.maximum(X @ u, 0) + math.sqrt(0.1) * rng.standard_normal(12)
    Th = rng.standard_normal((400, nf.D_SPHERE))
    Th = np.vstack([u, Th / np.linalg.norm(Th, axis=1, keepdims=True)])
    assert flattest_outer_weights(Th, X, y, "relu").value >= row["upsilon_low"]


def test_circle_cell_points_are_near_flattest_against_every_direction():
    """The whole-circle design (d = 2): the certified lower end is ≤ Υ of the flattest interpolator over 400 random
    directions the suite never chose, and the adversary's points interpolate with Υ ≤ κ·Υ_low."""
    rng = np.random.default_rng(5)
    row = nf.cell_circle(rng, 10, 0.1, kappas=(2.0,), starts=1)
    assert not row.get("no_interpolator")
    assert 0 < row["upsilon_low"] <= row["upsilon_star"]
    got = row["k2"]
    assert got["found"] and got["inside"] and got["upsilon_ratio"] <= 2.0 and got["residual"] <= 1e-8
    assert got["worst_excess"] >= row["flattest_excess"]
    rng = np.random.default_rng(5)
    X = rng.standard_normal((10, nf.D_CIRCLE))
    u = rng.standard_normal(nf.D_CIRCLE)
    u /= np.linalg.norm(u)
    y = np.maximum(X @ u, 0) + math.sqrt(0.1) * rng.standard_normal(10)
    t = rng.uniform(0, 2 * math.pi, 400)
    Th = np.vstack([u, np.stack([np.cos(t), np.sin(t)], axis=1)])
    assert flattest_outer_weights(Th, X, y, "relu").value >= row["upsilon_low"]


def test_circle_data_no_homogeneous_net_interpolates_is_recorded_and_costs_its_seed(monkeypatch):
    """Two samples on one ray (x₂ = 2x₁) whose labels are not in ratio 2: no homogeneous net interpolates them,
    Φ̄ has rank n − 1 exactly. The cell is recorded, not raised, and the seed's series for that τ² is no unit
    (never a slope over the n that remain)."""
    real = nf._data

    def on_a_ray(rng, n, d, tau2):
        X, u, target, y = real(rng, n, d, tau2)
        if n == 16:
            X[1] = 2 * X[0]
            y = y.copy()
            y[1] = 2 * y[0] + 1.0
        return X, u, target, y

    monkeypatch.setattr(nf, "_data", on_a_ray)
    row = nf.cell_circle(np.random.default_rng(0), 16, 0.0, kappas=(2.0,), starts=1)
    assert row["no_interpolator"] and "rank" in row["why"] and not row["k2"]["found"]
    cfg = {**nf._config(True), "design_seeds": {"dictionary": 0, "sphere": 0, "circle": 1}, "noises": (0.0,)}
    out = nf._seed((3, 0, cfg))
    assert [r["n"] for r in out["rows"]] == [8, 16] and out["rows"][1]["no_interpolator"]
    assert math.isnan(out["beta/circle/0.0/2"]) and math.isnan(out["flat_beta/circle/0.0"])


def test_labels_all_zero_make_the_zero_net_flattest_and_the_cells_still_run(monkeypatch):
    """Noise-free labels with every sample on the target's inactive side (y ≡ 0): Υ* = 0 exactly (the zero net), the
    bracket [0, 0] has relative width 0 (it once divided by Υ* = 0) and the adversary's set is {Υ = 0}."""
    real = nf._data

    def all_inactive(rng, n, d, tau2):
        X, u, target, y = real(rng, n, d, tau2)
        X = -np.abs(X @ u)[:, None] * u[None, :] + (X - (X @ u)[:, None] * u[None, :])   # u·x ≤ 0 for every x
        return X, u, target, target(X)

    monkeypatch.setattr(nf, "_data", all_inactive)
    row = nf.cell_sphere(np.random.default_rng(3), 8, 0.0, kappas=(2.0,), starts=1)
    assert row["upsilon_star"] == 0 and row["sphere_rel_width"] == 0.0
    assert row["flattest_excess"] == pytest.approx(row["e0"] / 2)   # the zero net: ½E f*²
    # directions dead on every sample cost no flatness: the supremum over {Υ = 0} is +∞, reported as such
    assert row["k2"]["unbounded"] or row["k2"]["found"]
    row = nf.cell_circle(np.random.default_rng(3), 8, 0.0, kappas=(2.0,), starts=1)   # runs (here: rank n − 1)
    assert row.get("no_interpolator") or row["sphere_rel_width"] == 0.0
    assert nf.rel_width(0.0, 0.0) == 0.0 and nf.rel_width(2.0, 1.0) == 0.5


def test_warm_started_argmax_matches_a_cold_linprog_at_every_step():
    """The set keeps one HiGHS model and changes only its costs: over an ascent's sequence of objectives each optimal
    value equals that of a fresh scipy linprog on the same LP (independent build of the split form)."""
    from scipy.optimize import linprog

    X, y, Th, t = _instance(7, 8, 17)
    res = flattest_outer_weights(Th, X, y, "relu")
    inv = invariant_form(Th, X, "relu")
    G, c, e0 = nf.excess_quadratic(Th, t)
    budget = 2 * res.dual_value
    S = nf.NearFlattestSet(inv.Phibar, y, inv.omega, budget)
    m = len(Th)
    rng = np.random.default_rng(1)
    b = S.argmax(rng.standard_normal(m))
    objs = [G @ b - c] + [rng.standard_normal(m) for _ in range(6)]
    for g in objs:
        warm = S.argmax(g)
        cold = linprog(-np.concatenate([g, -g]), A_ub=np.concatenate([inv.omega, inv.omega])[None, :],
                       b_ub=[budget], A_eq=np.hstack([inv.Phibar, -inv.Phibar]), b_eq=y, bounds=(0, None),
                       method="highs")
        assert cold.status == 0 and warm is not None
        assert g @ warm == pytest.approx(-cold.fun, rel=1e-9, abs=1e-12)
        assert np.max(np.abs(inv.Phibar @ warm - y)) <= 1e-8
        assert np.sum(inv.omega * np.abs(warm)) <= budget * (1 + 1e-9)


def test_argmax_along_a_dead_direction_is_unbounded():
    X, y, Th, t = _instance(15, 3, 6)
    inv = invariant_form(Th, X, "relu")
    j = int(np.flatnonzero(inv.omega == 0)[0])
    S = nf.NearFlattestSet(inv.Phibar, y, inv.omega, 1.0)
    g = np.zeros(len(Th))
    g[j] = 1.0
    with pytest.raises(nf.Unbounded):
        S.argmax(g)


def test_the_last_doubling_slope_reads_each_seed_and_says_when_the_excess_grows():
    """The tail slope (SPEC: an excess that does not decay is evidence against the rate) is log2 of the ratio of the
    last two cells of each seed; a seed missing a cell or without an interpolator there gives no unit."""
    def seed(excesses, lost_last=False):
        rows = [{"design": "sphere", "tau2": 0.1, "n": n, "k2": {"worst_excess": e}, "flattest_excess": e / 2}
                for n, e in zip((8, 16, 32), excesses, strict=True)]
        if lost_last:
            rows[-1]["no_interpolator"] = True
        return {"rows": rows}

    out = [seed((1.0, 0.5, 1.0)), seed((1.0, 0.5, 2.0)), seed((1.0, 0.5, 4.0)), seed((1.0, 0.5, 9.0), lost_last=True)]
    t = nf._tail_slopes(out, "sphere", 0.1, lambda r: r["k2"]["worst_excess"], (8, 16, 32))
    assert np.allclose(t, [1.0, 2.0, 3.0])                    # log2(1/0.5), log2(2/0.5), log2(4/0.5)
    tail = nf._tail(out, Context(seed=0), "sphere", 0.1, lambda r: r["k2"]["worst_excess"], (8, 16, 32))
    assert tail["n"] == [16, 32] and tail["units"] == 3 and tail["grows"] and not tail["decays"]
    assert tail["in_negation_region"]
    assert math.isclose(tail["beta"], 2.0)
    series = [{"design": "sphere", "tau2": 0.1, "kappa": 2.0, "tail": tail}]
    assert "16→32: +2.00" in nf._tail_note(series) and "(grows)" in nf._tail_note(series)
    decaying = dict(tail, beta=-1.0, ci=[-1.2, -0.8], decays=True, grows=False, in_negation_region=False)
    assert nf._tail_note([dict(series[0], tail=decaying)]) == ""
    # a short run's wide interval (it meets the statement region) is no evidence either way
    short = [seed((1.0, 1.0, 0.25)), seed((1.0, 1.0, 4.0)), seed((1.0, 1.0, 1.0))]       # slopes −2, +2, 0
    wide = nf._tail(short, Context(seed=0), "sphere", 0.1, lambda r: r["k2"]["worst_excess"], (8, 16, 32))
    assert wide["units"] == 3 and wide["ci"][0] < -0.3 < wide["ci"][1] and not wide["in_negation_region"]
    assert nf._tail_note([dict(series[0], tail=wide)]) == ""
