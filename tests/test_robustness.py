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

from checks import spec
from checks.falsify import falsify, replay
from checks.registry import Context, select
from checks.rob import canonical, circle, properties, value

ROB = select(["rob"])  # every level runs in quick mode in tests/test_claims_quick.py


def test_every_spec_level_is_registered():
    """The registered rob claims and their levels are exactly the spec's implemented ones (checks/spec.toml)."""
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

    def lossy(*a, **k):
        P = real(*a, **k)
        return P[:-1] if len(P) > 1 else P

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
