"""rob.cluster_failure, rob.width_one, rob.conjecture_9_1 and the author's-checks record: the pieces that can fail."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as Fr

import numpy as np
import pytest

from checks.rob.supplement import author, cluster_failure, conjecture_9_1, width_one
from numerics import rob

# ------------------------------------------------------------------------------------------- rob.cluster_failure


@pytest.mark.parametrize("k,tstar", [(1, Fr(1)), (2, Fr(3, 4)), (3, Fr(5, 8))])
def test_cluster_exact_lipschitz_is_alpha0_and_tv_closed_form(k, tstar):
    net, info = cluster_failure.cluster_net(k, tstar)
    L, le2, eq1 = cluster_failure._lip_exact(net)
    assert le2 and eq1 and L.exact
    N = info["N"]
    assert N == math.floor(tstar / (2 * info["rho"]))
    assert cluster_failure.profile_tv(info["thresholds"]) == N - tstar * (N - 1) / 2
    # the ramp P(t*) − P(0) from the definition, against the stated floor
    pv = cluster_failure.profile_value
    ramp = pv(info["thresholds"], tstar) - pv(info["thresholds"], 0)
    assert ramp == tstar * (N + 1) / 2 > tstar**2 / (4 * info["rho"])


def test_cluster_planted_bug_spacing_below_separation_is_caught():
    """Planted bug: thresholds at spacing ρ/4 < ρ' (4× too many): the exact constant leaves α_0 behind."""
    net, info = cluster_failure.cluster_net(2, Fr(1))
    rho = info["rho"]
    N = int(4 * Fr(1) / (2 * rho))
    ts = [Fr(j, N) for j in range(N)]
    W = [net[0][0]] * N + [net[0][-1]] * N
    bad = (W, [-t for t in ts] * 2, [1] * N + [-1] * N, [0, 0, 0], 0)
    L, le2, eq1 = cluster_failure._lip_exact(bad)
    assert not eq1 and float(L.upper) > 1.0


def test_cluster_rejects_bad_input():
    with pytest.raises(ValueError, match="N ≥ 1"):
        cluster_failure.cluster_net(1, Fr(3, 4))
    with pytest.raises(ValueError, match="d ≥ 3"):
        cluster_failure.cluster_net(2, Fr(1), d=2)


# ------------------------------------------------------------------------------------------- rob.width_one


def test_min_gap_against_brute_force():
    rng = np.random.default_rng(3)
    X, y = width_one.sphere_data(rng, 17, 5)
    Q = width_one._orth(rng.standard_normal((5, 2)))
    brute = min(np.linalg.norm(Q.T @ (X[i] - X[j])) for i in range(17) for j in range(17) if y[i] > 0 > y[j])
    assert width_one.min_gap(Q, X[y > 0], X[y < 0]) == pytest.approx(brute, rel=1e-12)


def test_adversary_finds_a_planted_separating_projection():
    """Planted: labels = sign(x_1) with a margin |x_1| ≥ 0.3, so P onto span(e_1, ·) has min-gap ≥ 0.6; the adversary
    must get close (a weak adversary would report the random-projection value ~ 0.05)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((400, 6))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    X = X[np.abs(X[:, 0]) >= 0.3][:80]
    y = np.sign(X[:, 0])
    g, Q, _ = width_one.adversary(X, y, rng, starts=4, keep=1, steps=20, polish=12)
    assert g >= 0.5


# ------------------------------------------------------------------------------------------- rob.conjecture_9_1


def _brute_profile(s, y, Ls, cand, r):
    best = 0.0
    cand = sorted(set(c for c in cand if 0 <= c < 1))
    for j in range(1, r + 1):
        for th in itertools.combinations(cand, j):
            ends = list(th[1:]) + [1.0]
            v = 0.0
            for a, b in zip(th, ends, strict=True):
                integral = float(np.sum(y * np.clip(np.minimum(s, b) - a, 0, None)))
                v += Ls / math.sqrt(1 - a * a) * abs(integral)
            best = max(best, v)
    return best


def test_best_profile_is_the_brute_force_optimum_and_meets_the_slope_bound():
    rng = np.random.default_rng(5)
    s = rng.uniform(-1, 1, 30)
    y = rng.choice([-1.0, 1.0], 30)
    cand = conjecture_9_1._cand_thresholds(s, 0.05, top=7)
    for r in (1, 2, 3):
        v, th, sl = conjecture_9_1.best_profile(s, y, 0.1, cand, r)
        assert v == pytest.approx(_brute_profile(s, y, 0.1, cand, r), rel=1e-12)
        # the realised value, from the profile itself
        assert float(y @ conjecture_9_1.profile(s, th, sl)) == pytest.approx(v, rel=1e-9)
        assert all(abs(B) * math.sqrt(1 - t * t) <= 0.1 * (1 + 1e-12) for t, B in zip(th, sl, strict=True))


def _two_pole_stack(d):
    u1 = np.zeros(d)
    u1[0] = 1.0
    u2 = np.zeros(d)
    u2[1] = 1.0
    return [{"u": u1, "th": [0.75, 0.875], "slopes": [0.5, -0.25]},
            {"u": u2, "th": [0.8, 0.9], "slopes": [-0.4, 0.0]}]


def test_composition_of_single_pole_constants_matches_the_general_exact_routine_on_s2():
    poles = _two_pole_stack(3)
    X = np.eye(3)
    rec = conjecture_9_1.certify(poles, 3, Fr(10), X, np.ones(3))
    assert rec["admitted"] and rec["lambda"] == 1.0
    L = rob.lipschitz(rec["net"], rob.Sphere(3))
    assert L.exact and rec["lip_up"] == pytest.approx(float(L.upper), rel=1e-12) and rec["lip_up"] >= float(L.upper)


def test_certify_scales_an_over_budget_candidate_and_rejects_overlapping_caps():
    poles = _two_pole_stack(4)
    Ls = Fr(1, 32)
    rec = conjecture_9_1.certify(poles, 4, Ls, np.eye(4), np.ones(4))
    assert rec["admitted"] and rec["lambda"] < 1 and rec["lip_scaled"] <= float(Ls)
    bad = [dict(poles[0]), dict(poles[1], u=np.array([0.8, 0.6, 0.0, 0.0]))]  # caps 41° apart, radii ≥ 25°: overlap
    assert not conjecture_9_1.certify(bad, 4, Ls, np.eye(4), np.ones(4))["admitted"]


# ------------------------------------------------------------------------------------------- author's record


def test_author_record_parses_and_renders_one_row_per_script():
    data = author.load()
    assert data, "checks/rob/author_checks.toml is missing"
    rows = author.report_rows(None, data)
    assert [r["script"] for r in rows] == list(author.SCRIPTS)
    for r in rows:
        assert r["reports"] != "not run", r["script"]
    lines = author.report_section({"claims": [{"id": "rob.law", "levels": {}}]})
    assert sum(line.startswith("| `check_") or line.startswith("| `validate") for line in lines) == len(author.SCRIPTS)
    assert author.report_section({"claims": [{"id": "ws.trace", "levels": {}}]}) == []


def test_toml_writer_round_trips():
    import tomllib

    d = {"a": 1, "b": "x\ny", "t": {"u": [1.5, 2], "s": {"q": 'say "hi"', "flag": True}}}
    assert tomllib.loads(author.dumps(d)) == {"a": 1, "b": "x\ny", "t": {"u": [1.5, 2], "s": {"q": 'say "hi"',
                                                                                              "flag": True}}}


def test_figures_use_the_suite_style_fonts(tmp_path):
    from checks.evidence import figures
    from checks.evidence.stats import StatementTest

    rows = [{"seed_index": 0, "k": k, "inv_rho": 2**k, "tv": (2**(k - 1) + 1) / 2, "tv_floor": 2**k / 4, "lip": 1.0,
             "ratio": (2**(k - 1) + 1) / 2} for k in (1, 2, 3)]
    t = StatementTest(**cluster_failure.STATEMENTS["doubling"]).decide([0.9, 1.0, 1.1])
    fig = cluster_failure._figure(rows, {"seeds": 1, "fit_k": (2, 3)}, t, [{"k": 2, "ratio_over_previous": 1.5}])
    assert figures.fonts_ok(fig)
    rows = [{"seed_index": s, "n": n, "gap_n": 3.0, "ascent_gap_n": 2.0, "gap_n_over_sqrtlog": 1.0}
            for s in range(3) for n in (20, 40)]
    t = StatementTest(**width_one.STATEMENT).decide([0.0, 0.1, -0.1])
    assert figures.fonts_ok(width_one._figure(rows, {"seeds": 3, "n": (20, 40), "d": 5}, t))
