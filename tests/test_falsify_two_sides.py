"""The falsifier's two sides (SPEC §5): explicit cases run every time, and near-ties reach the exact confirmation."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from checks.runners.falsify import Property, falsify

# the strategy never draws x = 5; the statement fails only there
_BASE = Property(name="tests.two_sides/x", strategy=st.integers(0, 4), screen=lambda x: x - 4.5,
                 confirm=lambda x: 1.0 if x == 5 else -1.0)


def test_an_explicit_case_is_run_before_the_generated_ones():
    assert not falsify(_BASE, budget=30, seed=3).found
    res = falsify(replace(_BASE, name="tests.two_sides/x+ex", examples=(5,)), budget=30, seed=3)
    assert res.found and res.counterexample == 5 and res.explicit == 1


def test_a_near_tie_goes_to_the_exact_confirmation_only_with_a_tie_band():
    tie = replace(_BASE, name="tests.two_sides/tie", strategy=st.just(5), screen=lambda x: -1e-12)
    assert not falsify(tie, budget=5, seed=0).found  # the float screen says "holds"
    res = falsify(replace(tie, name="tests.two_sides/tie+band", ties=1e-9), budget=5, seed=0)
    assert res.found and res.ties >= 1 and res.candidates == 0
    # outside the band nothing is confirmed, and an honest tie (exact margin ≤ 0) is not a counterexample
    far = replace(tie, name="tests.two_sides/far", screen=lambda x: -1e-3, ties=1e-9)
    assert not falsify(far, budget=5, seed=0).found
    honest = replace(tie, name="tests.two_sides/honest", confirm=lambda x: 0.0, ties=1e-9)
    r = falsify(honest, budget=5, seed=0)
    assert not r.found and r.ties >= 1


def test_the_explicit_margin_is_reported():
    res = falsify(replace(_BASE, name="tests.two_sides/margin", examples=(4,), confirm=lambda x: -1.0), budget=10,
                  seed=0)
    assert res.metric()["worst_explicit_margin"] == 4 - 4.5 and res.metric()["explicit_cases"] == 1


def test_an_explicit_case_outside_the_hypotheses_is_an_error():
    from checks.runners.falsify import NotApplicable

    def screen(x):
        if x > 4:
            raise NotApplicable("x ≤ 4")
        return -1.0

    import pytest

    with pytest.raises(ValueError, match="explicit case"):
        falsify(replace(_BASE, name="tests.two_sides/na", screen=screen, examples=(9,)), budget=5, seed=0)
