"""SPEC §0's verdict table (checks.evidence.stats.region_verdict) on intervals whose right word is known, and the
rob.sharpness checks against planted wrong evaluators."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from checks.evidence.registry import Context
from checks.evidence.stats import Regions, achieved_power, region_verdict, units_for_power, units_for_width

INF = math.inf
# "Lip = O(1)": exponent β < δ
O1 = Regions(0.1, (-INF, 0.1), ((0.1, INF),))
# a one-sided negative correlation ρ ≤ −δ (boundary to the negation), opposite sign ρ ≥ 0
NEG = Regions(0.2, (-INF, -0.2), ((-0.2, INF),), opposite=(0.0, INF))
# a rate |β − ½| < δ
RATE = Regions(0.1, (0.4, 0.6), ((-INF, 0.4), (0.6, INF)))


@pytest.mark.parametrize("regions,lo,hi,units,planned,word", [
    (O1, -0.05, 0.05, 6, 6, "reproduced"),
    (O1, 0.1, 0.3, 6, 6, "not reproduced"),           # the boundary point belongs to the negation
    (O1, 0.05, 0.15, 6, 6, "inconclusive"),           # meets two regions
    (O1, -0.05, 0.1, 6, 6, "inconclusive"),           # touches the boundary from inside: meets the negation
    (O1, -0.05, 0.05, 5, 6, "inconclusive"),          # fewer units than planned
    (O1, math.nan, 0.05, 6, 6, "inconclusive"),
    (NEG, -0.5, -0.25, 200, 200, "reproduced"),
    (NEG, -0.1, -0.05, 200, 200, "not reproduced"),
    (NEG, 0.05, 0.3, 200, 200, "contradicted"),
    (NEG, 0.0, 0.3, 200, 200, "contradicted"),        # 0 is in the opposite-sign region (ρ ≥ 0)
    (NEG, -0.31, 0.34, 200, 200, "inconclusive"),     # the old ws.experiment interval: both sides
    (NEG, -0.25, -0.1, 200, 200, "inconclusive"),
    (RATE, 0.45, 0.55, 5, 5, "reproduced"),
    (RATE, 0.6, 0.7, 5, 5, "not reproduced"),
    (RATE, 0.01, 0.09, 5, 5, "not reproduced"),       # the old rob.law rate interval
    (RATE, 0.3, 0.5, 5, 5, "inconclusive"),
])
def test_region_verdict_table(regions, lo, hi, units, planned, word):
    assert region_verdict(lo, hi, regions, units=units, planned=planned) == word


def test_units_for_width():
    # 2·1.96·sd/√k ≤ width: sd = 0.5, width 0.2 → k ≥ 96.04 → 97
    assert units_for_width(0.5, 0.2) == 97
    assert units_for_width(0.001, 1.0) == 3


def test_sharpness_P_fails_a_wrong_pair_tail(monkeypatch, tmp_path):
    """Positive control: an exponent slip (d−2)/2 in the pair tail must fail the P level."""
    from checks.rob import sharpness

    def wrong(tau, d):
        tau = mpmath.mpf(tau)
        return mpmath.betainc(mpmath.mpf(d - 2) / 2, mpmath.mpf(1) / 2, 0, 1 - tau * tau, regularized=True) / 2

    assert sharpness.level_P(Context(quick=True, report_dir=tmp_path)).passed
    monkeypatch.setattr(sharpness, "pair_tail", wrong)
    assert not sharpness.level_P(Context(quick=True, report_dir=tmp_path)).passed


def test_sharpness_E_turns_inconclusive_when_units_fall_short(monkeypatch, tmp_path):
    from checks.rob import sharpness

    cfg = sharpness._config(True)
    monkeypatch.setattr(sharpness, "_config", lambda quick: {**cfg, "seeds": 2})
    out = sharpness.level_E(Context(quick=True, report_dir=tmp_path))
    assert out.verdict == "inconclusive"


@pytest.mark.parametrize("words,word", [
    ({"bound": "reproduced", "rate": "reproduced"}, "reproduced"),
    ({"bound": "reproduced", "rate": "not reproduced"}, "partially reproduced"),
    ({"bound": "reproduced", "rate": "inconclusive"}, "partially reproduced"),
    ({"bound": "inconclusive", "rate": "inconclusive"}, "inconclusive"),
    ({"bound": "reproduced", "rate": "contradicted"}, "contradicted"),
])
def test_compound_statements(words, word):
    from checks.evidence.stats import combine_parts

    got, named = combine_parts(words)
    assert got == word
    assert all(f"{k} {v}" in named for k, v in words.items())


def test_law_rate_regions_follow_spec():
    from checks.rob import law

    r = law.RATE_REGIONS
    assert region_verdict(0.45, 0.55, r, units=5, planned=5) == "reproduced"
    assert region_verdict(0.01, 0.09, r, units=5, planned=5) == "not reproduced"
    assert region_verdict(0.4, 0.45, r, units=5, planned=5) == "inconclusive"   # 0.4 is the negation's boundary
    assert region_verdict(-0.2, -0.1, r, units=5, planned=5) == "contradicted"
    assert law.PLANNED_SEEDS >= 3 and law._config(False)["seeds"] >= law.PLANNED_SEEDS
    assert law._config(False, "paper")["m"] == (16, 64, 256, 1024)
    with pytest.raises(ValueError):
        law._config(False, "huge")


def test_units_for_power_textbook_value():
    # (z_0.975 + z_0.8)² = (1.959964 + 0.841621)² = 7.84888: σ = 1, δ = 0.2 → 196.2 → 197 units
    assert units_for_power(1.0, 0.2) == 197
    assert units_for_power(0.73, 0.2) == 105
    assert units_for_power(1e-3, 1.0) == 3


def test_achieved_power_matches_a_simulated_z_test():
    rng = np.random.default_rng(5)
    sd, delta, k = 0.6, 0.2, 40
    means = rng.normal(delta, sd / np.sqrt(k), size=200_000)
    simulated = float(np.mean(np.abs(means) / (sd / np.sqrt(k)) > 1.959964))
    assert abs(achieved_power(sd, delta, k) - simulated) < 5e-3
    # at the planned count the power is ≥ 0.8, one unit fewer it is below
    k80 = units_for_power(sd, delta)
    assert achieved_power(sd, delta, k80) >= 0.8 > achieved_power(sd, delta, k80 - 1)
    assert np.isnan(achieved_power(0.0, delta, 10)) and np.isnan(achieved_power(sd, delta, 1))


def test_an_interval_one_ulp_into_the_statement_is_inconclusive():
    """The case suite.verdicts' generator once mislabelled 'not reproduced': hi lies 1e-16 inside (r − δ, r + δ)."""
    delta = 0.4238184811393585
    reg = Regions(delta, (-delta, delta), ((-math.inf, -delta), (delta, math.inf)))
    assert -0.4238184811393584 > -delta
    assert region_verdict(-2.4131356084789273, -0.4238184811393584, reg, units=93, planned=66) == "inconclusive"
    assert region_verdict(-2.4131356084789273, -delta, reg, units=93, planned=66) == "not reproduced"
