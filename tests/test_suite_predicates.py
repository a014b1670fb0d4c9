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
