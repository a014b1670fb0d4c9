"""E-level statistics: the bootstrap interval and the verdict rules (checks.evidence.stats), both ways.

Oracle independence: the intervals are judged by simulation against a true mean that the test plants (normal
draws with known μ: coverage is counted, not computed by the code under test), and the verdict rules against
hand-made inputs whose verdict follows from the rule's statement.
"""

import numpy as np
import pytest

from checks.evidence.stats import StatementTest, bootstrap_ci, combine, decide


def test_bootstrap_interval_covers_the_mean_at_its_nominal_rate():
    rng = np.random.default_rng(1)
    hits = 0
    for k in range(300):
        x = rng.normal(0.3, 1.0, 20)
        _, lo, hi = bootstrap_ci(x, n_boot=800, seed=k)
        hits += lo <= 0.3 <= hi
    assert 0.88 <= hits / 300 <= 0.99  # percentile bootstrap at n = 20 under-covers a little, never wildly


def test_bootstrap_is_deterministic_and_refuses_tiny_samples():
    x = [0.1, 0.5, 0.2, 0.9, 0.4]
    assert bootstrap_ci(x, seed=3) == bootstrap_ci(x, seed=3)
    est, lo, hi = bootstrap_ci([1.0, 2.0])
    assert est == 1.5 and np.isnan(lo) and np.isnan(hi)


@pytest.mark.parametrize(("kind", "lo", "hi", "target", "sign", "want"), [
    ("sign", 0.1, 0.4, 0, 1, "reproduced"), ("sign", -0.4, -0.1, 0, 1, "contradicted"),
    ("sign", -0.1, 0.4, 0, 1, "not reproduced"), ("sign", -0.4, -0.1, 0, -1, "reproduced"),
    ("rate", 0.4, 0.6, 0.5, 1, "reproduced"), ("rate", 0.05, 0.2, 0.5, 1, "partially reproduced"),
    ("rate", 0.7, 0.9, 0.5, 1, "partially reproduced"), ("rate", -0.3, -0.1, 0.5, 1, "contradicted"),
    ("rate", -0.1, 0.2, 0.5, 1, "not reproduced"),
    ("at_least", 0.9, 1.2, 0.5, 1, "reproduced"), ("at_least", 0.1, 0.3, 0.5, 1, "partially reproduced"),
    ("at_least", -0.1, 0.3, 0.5, 1, "not reproduced"), ("rate", float("nan"), 1, 0.5, 1, "not reproduced"),
])
def test_decide(kind, lo, hi, target, sign, want):
    assert decide(kind, lo, hi, target=target, sign=sign) == want


def test_combine_and_statement_roundtrip():
    assert combine(["reproduced", "reproduced"]) == "reproduced"
    assert combine(["reproduced", "not reproduced"]) == "partially reproduced"
    assert combine(["not reproduced", "not reproduced"]) == "not reproduced"
    assert combine(["reproduced", "contradicted"]) == "contradicted"
    t = StatementTest("the ratio grows like n^{1/2}", "slope", "rate", target=0.5)
    t.decide([0.48, 0.52, 0.55, 0.47, 0.5], seed=0)
    assert t.verdict == "reproduced" and t.seeds == 5 and t.ci[0] < 0.5 < t.ci[1]
    t.decide([0.1, 0.12, 0.09, 0.11, 0.1], seed=0)
    assert t.verdict == "partially reproduced" and "contains the paper's rate 0.5" in t.criterion
    assert set(t.to_json()) >= {"paper_statement", "effect", "criterion", "estimate", "ci", "seeds", "verdict"}


def test_figure_style_labels_short_log_axes_and_keeps_fonts_large():
    from checks.evidence import figures

    fig, ax = figures.figure()
    ax.plot([0.4, 0.65], [1e-3, 5e2], "o")
    figures.log_axis(ax)
    fig.canvas.draw()
    xlabels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    ylabels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert len(xlabels) >= 2 and len(ylabels) >= 3  # a span under two decades still gets labels
    ax.set(xlabel="x (dimensionless)", ylabel="y (dimensionless)")
    assert figures.fonts_ok(fig)
