"""checks/rob/: every rob.* level, and the falsifier's teeth.

Why the oracles are independent: the level functions are run as the CLI runs them (quick mode) and must
pass; the falsifier must find (a) the genuine d = 2 failure of rigidity from a structured strategy that
does not contain the paper's angles, confirmed by the exact S¹ computation, and (b) planted bugs — a
rigidity statement with the wrong constant and a value bound with the wrong constant — while the
evidence level comparing the arrangement against brute force must fail when the evaluator drops a cell.
No expected number here is copied from the code's own output: violations are detected by sign, and the
planted-bug ground truth follows from a two-line argument in each test's docstring.
"""

from __future__ import annotations

import json

import numpy as np

from checks.evidence import spec
from checks.evidence.registry import Context, select
from checks.rob import canonical, circle, properties, value
from checks.runners.falsify import falsify, replay

ROB = select(["rob"])  # every level runs in quick mode in tests/test_claims_quick.py


def test_every_spec_level_is_registered():
    """The registered rob claims and their levels are exactly the spec's implemented ones
    (checks/evidence/spec.toml)."""
    want = {cid: e.levels for cid, e in spec.load().claims.items()
            if e.paper == "rob" and e.status == "implemented"}
    assert {c.id: c.spec_levels for c in ROB} == want
    assert all(set(c.levels) == set(c.spec_levels) for c in ROB)


def test_falsifier_finds_the_d2_failure_and_the_reproducer_replays(tmp_path):
    res = falsify(circle.circle_property(), budget=60, seed=3, out_dir=tmp_path)
    assert res.found and res.counterexample_margin > 0
    data = json.loads(open(res.reproducers[-1]).read())
    assert data["property"] == "rob.circle/d2"
    again = replay(res.reproducers[-1])
    assert again["mpmath_margin"] > 0


def test_planted_bug_rigidity_with_constant_one_is_found(tmp_path):
    """|α| ≤ 1·Lip is false: f = α ReLU(u·x) − (α/2) u·x has Lip = |α|/2 on any ball around 0."""
    prop = properties.rigidity_property("test/rigidity_constant_1", 2, sphere=False, rho=1.0, constant=1.0)
    res = falsify(prop, budget=80, seed=1, out_dir=tmp_path)
    assert res.found and res.counterexample_margin > 0


def test_planted_bug_value_bound_with_tiny_constant_is_found(tmp_path):
    """sup|f| ≤ 2 + 0·L is false: a fitted net reaching |f| = 3 somewhere on the ball exists."""
    prop = value.value_property("test/value_constant_0", 2, sphere=False, constant=0.0, budget=150)
    res = falsify(prop, budget=150, seed=2, out_dir=tmp_path)
    assert res.found


def test_dropping_a_cell_fails_the_rigidity_ball_precision_level(monkeypatch, tmp_path):
    """An evaluator that loses a cell of the arrangement disagrees with the 2^m brute-force oracle."""
    from numerics.rob import ball as KB

    real = KB.line_cells

    def lossy(*a, **k):  # the last interval of every line that has more than one
        rows, owner = real(*a, **k)
        last = np.r_[owner[1:] != owner[:-1], True] & np.r_[False, owner[1:] == owner[:-1]]
        return rows[~last], owner[~last]

    monkeypatch.setattr(KB, "line_cells", lossy)
    (c,) = [c for c in ROB if c.id == "rob.rigidity_ball"]
    ev = c.run("P", Context(quick=True, report_dir=tmp_path))
    assert not ev.passed


def test_d3_lifted_cycles_give_no_violation(tmp_path):
    res = falsify(circle.circle_d3_property(), budget=40, seed=5, out_dir=tmp_path)
    assert not res.found and res.examples >= 40


def test_rigidity_margin_sign_on_a_hand_built_equality_case():
    """f = α ReLU(x₁) − (α/2) x₁ on B_1 ⊂ R²: gradients ±(α/2)e₁, so |α| = 2 Lip exactly (margin 0)."""
    case = {"d": 2, "rho": 1.0, "W": [[1.0, 0.0]], "b": [0.0], "a": [3.0], "v": [-1.5, 0.0], "c": 0.0}
    assert properties.rigidity_margin(case, exact=True) == 0.0
    assert properties.rigidity_margin(case, exact=True, constant=1.0) > 0


def test_cycle_strategy_excludes_the_papers_example():
    from hypothesis import given, settings

    paper = {"pts": [-100, 100, 0, 80], "order": [0, 1, 2, 3], "kappa8": [8] * 4}
    assert circle.is_papers_example(paper)
    assert not circle.is_papers_example({**paper, "pts": [-100, 100, 0, 81]})

    @settings(max_examples=60, database=None)
    @given(circle.cycle_cases())
    def run(case):
        assert not circle.is_papers_example(case)

    run()


def test_planted_bug_flip_without_its_linear_term_is_found(monkeypatch, tmp_path):
    """ReLU(z) ≠ ReLU(−z): a 'flip' that forgets + a z changes f, so value or uniqueness must fail."""
    real = canonical.reparametrise

    def wrong(case, exact):
        W, b, a, v, c = real({**case, "recipe": []}, exact)
        W = np.array(W, dtype=object if exact else float)
        W[0], b = -W[0], [-b[0], *list(b[1:])]
        return (W.tolist() if exact else W, b if exact else np.asarray(b, float), a, v, c)

    monkeypatch.setattr(canonical, "reparametrise", wrong)
    res = falsify(canonical.canon_property("test/flip_bug", 3, sphere=True), budget=40, seed=4, out_dir=tmp_path)
    assert res.found


# --- rob.law (E) ---


def test_law_statements_are_fixed_before_the_run():
    """The two statements and their criteria are module constants without numbers from a run."""
    from checks.evidence.stats import StatementTest
    from checks.rob import law

    bound, rate = (StatementTest(**law.STATEMENTS[k]) for k in ("bound", "rate"))
    assert bound.kind == "sign" and bound.sign == 1 and "c = C = 1" in bound.paper_statement
    assert rate.kind == "rate" and rate.target == 0.5 and law.LAW_RATE == 0.5
    assert bound.per_seed == rate.per_seed == [] and rate.symbol and bound.symbol


def test_law_adam_gradients_match_torch_autograd():
    """The numpy training loop's gradients of MSE + λ·path norm agree with torch's autograd (the oracle)."""
    import torch

    from checks.rob import law

    rng = np.random.default_rng(7)
    n, m, d, lam = 20, 6, 5, 0.3
    X, y = law.sphere_data(rng, n, d)
    params = law.init_net(rng, m, d)
    params[3], params[4] = rng.standard_normal(d), rng.standard_normal(1)
    mse, grads = law.loss_and_grads(params, X, y, lam)
    W, b, a, v, c = (torch.tensor(p, requires_grad=True) for p in params)
    Xt, yt = torch.tensor(X), torch.tensor(y)
    res = torch.relu(Xt @ W.T + b) @ a + Xt @ v + c[0] - yt
    loss_mse = torch.mean(res**2)
    (loss_mse + lam * torch.sum(a.abs() * torch.sqrt(torch.sum(W**2, 1) + b**2))).backward()
    assert abs(mse - float(loss_mse.detach())) <= 1e-12
    for g, p in zip(grads, (W, b, a, v, c), strict=True):
        np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_law_training_fits_pure_noise():
    """Adam drives a width-32 net on 24 noise labels on S^7 below MSE 0.05 (ε ≥ 0.95): the hypothesis is met."""
    from checks.rob import law

    rng = np.random.default_rng(3)
    X, y = law.sphere_data(rng, 24, 8)
    net, mse = law.train(X, y, law.init_net(rng, 32, 8), steps=1500)
    W, b, a, v, c = net
    f = np.maximum(X @ W.T + b, 0) @ a + X @ v + c
    assert mse <= 0.05 and abs(np.mean((f - y) ** 2) - mse) <= 1e-12


def test_law_slope_bracket_holds_every_choice_inside_the_brackets():
    """Any values inside the brackets give a least-squares slope in [β_min, β_max], and the extremes are
    attained by choices of bracket ends; degenerate brackets give one slope (that of np.polyfit)."""
    from checks.rob import law

    rng = np.random.default_rng(11)
    x = np.array([0.25, 1.0, 2.0, 4.0, 8.0, 15.0])
    lo = rng.uniform(5, 10, len(x))
    up = lo * rng.uniform(1.0, 1.4, len(x))
    b_lo, b_up, b_min, b_max = law.slope_bracket(x, lo, up)
    slopes = [np.polyfit(np.log(x), np.log(rng.uniform(lo, up)), 1)[0] for _ in range(300)]
    corners = [np.polyfit(np.log(x), np.log(np.where(mask, up, lo)), 1)[0]
               for mask in (np.arange(64)[:, None] >> np.arange(6) & 1).astype(bool)]
    assert b_min - 1e-12 <= min(slopes + [b_lo, b_up]) and max(slopes + [b_lo, b_up]) <= b_max + 1e-12
    assert abs(min(corners) - b_min) <= 1e-12 and abs(max(corners) - b_max) <= 1e-12
    same = law.slope_bracket(x, lo, lo)
    assert np.allclose(same, np.polyfit(np.log(x), np.log(lo), 1)[0], atol=1e-12)
    assert all(np.isnan(law.slope_bracket([2.0, 2.0], [1.0, 2.0], [1.0, 2.0])))


def test_law_bound_verdict_from_certified_numbers():
    """Reproduced iff every fitting net's lower end clears the RHS; an upper end below it contradicts; a
    straddling bracket is undecided; a net that does not fit is excluded and counted."""
    from checks.rob import law

    def row(lower, upper, rhs, fits=True):
        return {"lower": lower, "upper": upper, "law_rhs": rhs, "fits": fits}

    ok = [row(5, 6, 1), row(2, 2, 2)]
    assert law.bound_verdict(ok)[0] == "reproduced"
    assert law.bound_verdict(ok + [row(0.5, 0.9, 1)])[0] == "contradicted"
    assert law.bound_verdict(ok + [row(0.5, 1.5, 1)])[0] == "not reproduced"
    v, counts = law.bound_verdict(ok + [row(0.1, 0.2, 1, fits=False)])
    assert v == "reproduced" and counts["excluded_not_fitting"] == 1 and counts["fitting"] == 2
    assert law.bound_verdict([row(0.1, 0.2, 1, fits=False)])[0] == "not reproduced"
    rhs = 0.9 * np.sqrt(256 / (17 * np.log(17 * 256 * 32 / 0.9)))
    assert abs(law.law_rhs(0.9, 256, 17, 32) - rhs) <= 1e-14


def test_law_figure_style_and_a_zero_lower_end():
    """The figure keeps fonts ≥ 9 pt, and a lower end of 0 is dropped (not floored) on the log axis."""
    from checks.evidence import figures
    from checks.evidence.stats import StatementTest
    from checks.rob import law

    cfg = {"d": 32, "seeds": 3, "n": (64, 256), "m": (16, 64)}
    rows = [{"seed_index": k, "n": n, "m": m, "n_over_mbar": n / (m + 1), "fits": True, "certified": True,
             "lower": 0.0 if (k, n, m) == (0, 64, 64) else 8.0 + k, "upper": 9.0 + k, "law_rhs": 1.0}
            for k in range(3) for n in cfg["n"] for m in cfg["m"]]
    rate = StatementTest(**law.STATEMENTS["rate"]).decide([0.1, 0.05, 0.08])
    fig = law.law_figure(rows, cfg, rate, [0.0, 0.0, 0.0], [0.2, 0.1, 0.1])
    assert figures.fonts_ok(fig)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_ylim()[0] > 1e-3
    assert all(a.get_ylabel() for a in fig.axes[:2])


def test_law_quick_run_has_two_statements_and_an_interval(tmp_path):
    """The quick E level: 3 seeds, ≥ 2 values of n/m̄ per seed, both statements recorded, a finite interval."""
    from checks.evidence.outcome import E_VERDICTS
    from checks.rob import law

    out = law.level_E(Context(quick=True, report_dir=tmp_path))
    det = out.details
    assert out.passed and out.verdict in E_VERDICTS
    assert set(det["statement_tests"]) == {"bound", "rate"}
    test = det["statement_test"]
    assert test["seeds"] == 3 and all(np.isfinite(test["ci"])) and test["symbol"]
    assert test["verdict"] == out.verdict and test["bound"] in ("holds", "violated", "undecided")
    for k in range(3):
        assert len({r["n_over_mbar"] for r in det["nets"] if r["seed_index"] == k}) >= 2
    assert (tmp_path / "figures" / "rob_law.png").exists()
    # each bracket names what holds its upper end (numerics.rob.bracket.Bracket.sources)
    from numerics.rob.bracket import SOURCES
    assert all(r["upper_held_by"] in (*SOURCES, "exact", "cap-overlap graph: clique bounds")
               or r["upper_held_by"].startswith("another route") for r in det["nets"])
    wide = [r for r in det["nets"] if r["gap"] - 1 > law.MAX_BRACKET_GAP]
    assert sum(det["brackets"]["wide_upper_ends_held_by"].values()) == len(wide)
