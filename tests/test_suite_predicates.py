"""suite.predicates: the exact-tie battery, the coverage of the registered fall-backs, and its teeth."""

from __future__ import annotations

from checks.evidence.outcome import severity
from checks.evidence.registry import Context
from checks.suite import predicates as P
from numerics import fallbacks
from numerics.rob import lemmas


def test_level_passes_and_reaches_every_site():
    out = P.level_F(Context(seed=1))
    assert out.passed, out.summary
    assert out.metric["sites_reached"] == len(fallbacks.SITES) and not out.metric["sites_not_reached"]
    assert severity(out.verdict) == severity("no counterexample")   # a word of SPEC §0's F vocabulary


def test_a_site_that_no_input_reaches_fails_the_level(monkeypatch):
    monkeypatch.setitem(fallbacks.SITES, "rob.nowhere/never", "a branch no input reaches")
    out = P.level_F(Context(seed=1))
    assert not out.passed and "rob.nowhere/never" in out.summary and out.verdict.startswith("refuted")


def test_a_wrong_tie_answer_is_a_disagreement(monkeypatch):
    real = lemmas.op_compare
    monkeypatch.setattr(lemmas, "op_compare", lambda X, c, **kw: 1 if c == 1 else real(X, c, **kw))
    out = P.level_F(Context(seed=1))
    assert not out.passed and "Op = c exactly" in out.summary


def test_reach_counts():
    fallbacks.reset()
    fallbacks.reach("rob.s2/order_exact")
    fallbacks.reach("rob.s2/order_exact")
    assert fallbacks.reached["rob.s2/order_exact"] == 2
    fallbacks.reset()
    assert not fallbacks.reached


def test_the_degenerate_nets_case_closes_every_bracket_on_its_exact_constant():
    out = P._degenerate_cells()
    assert out["ok"], [r for r in out["rows"] if not r["ok"]]
    assert len(out["rows"]) == 18 and {r["domain"] for r in out["rows"]} == {"S^2", "S^7", "B^3", "B^4", "B^6"}


def test_an_unsound_emptiness_certificate_is_caught_by_the_degenerate_nets(monkeypatch):
    from numerics.rob import bracket as KB

    for name in ("beyond_empty", "needle_closed"):
        with monkeypatch.context() as mp:
            mp.setattr(KB, name, lambda *a, **k: True)       # every cell it is asked about declared empty
            out = P._degenerate_cells(time_limit=5)
            assert not out["ok"] and any(not r["contains"] for r in out["rows"]), name


def test_a_missing_certificate_leaves_a_degenerate_bracket_open(monkeypatch):
    from numerics.rob import bracket as KB

    for name, net in (("beyond_empty", "MICRO_OUT"), ("needle_closed", "NEEDLE_D6"), ("cap_bound", "CAP")):
        with monkeypatch.context() as mp:
            mp.setattr(KB, name, (lambda *a, **k: float("inf")) if name == "cap_bound" else (lambda *a, **k: False))
            out = P._degenerate_cells(names=(net,), time_limit=3)
            assert not out["ok"] and any(r["contains"] and not r["closed"] for r in out["rows"]), name
