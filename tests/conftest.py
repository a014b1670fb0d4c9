"""Shared fixtures."""

from __future__ import annotations

import faulthandler

import numpy as np
import pytest


@pytest.fixture
def hang_watchdog():
    """Every thread's stack on stderr if the test still runs after 240 s (the test is not stopped). For the tests
    that SIGKILL a Dask worker process: once (2026-12-07, one full run in three) a pytest worker sat idle in such a
    test with a scheduler and two worker directories locked and no Dask worker process left; should it recur, the
    log says where it waits."""
    faulthandler.dump_traceback_later(240, exit=False)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def stall_net():
    """(W, b, a, v) of the d = 3, m = 6 sphere net whose best cell's ball relaxation stalled the certified bracket
    1.6% above the exact S² constant (the generator of tests/test_kinks_bracket.py, seed 30)."""
    r = np.random.default_rng(30)
    d, m = 3, 6
    W = r.standard_normal((m, d)) / np.sqrt(d)
    b = 0.3 * r.standard_normal(m)
    a = r.standard_normal(m) / np.sqrt(m)
    v = 0.1 * r.standard_normal(d)
    return W, b, a, v
