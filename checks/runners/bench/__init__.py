"""``nox -s bench`` (``python -m checks.runners.bench``): the suite's speed and memory against the alternatives.

Modules: :mod:`~checks.runners.bench.harness` (grids, timing and memory helpers, the run's state, the command
line and the run loop), one per paper (:mod:`~checks.runners.bench.ws`, :mod:`~checks.runners.bench.flat`,
:mod:`~checks.runners.bench.rob`) and :mod:`~checks.runners.bench.report` (``bench.json``, ``bench.md``, the plots).
The names below are re-exported for callers of the former single module ``checks.runners.bench``.
"""

from checks.runners.bench.harness import (
    FULL,
    GB,
    MB,
    QUICK,
    Bench,
    Grid,
    fit_exponent,
    fmt,
    interleaved,
    main,
    median_time,
    profile_top,
    rss_peak,
    run_with_timeout,
    set_threads,
    traced_peak,
)
from checks.runners.bench.report import headline_table, plots, write_report
from checks.runners.bench.rob import brute_force_lipschitz
from checks.runners.bench.ws import closed_form_cost, dim_of, make_net

__all__ = [
    "FULL",
    "GB",
    "MB",
    "QUICK",
    "Bench",
    "Grid",
    "brute_force_lipschitz",
    "closed_form_cost",
    "dim_of",
    "fit_exponent",
    "fmt",
    "headline_table",
    "interleaved",
    "main",
    "make_net",
    "median_time",
    "plots",
    "profile_top",
    "rss_peak",
    "run_with_timeout",
    "set_threads",
    "traced_peak",
    "write_report",
]
