"""Shared fixtures."""

from __future__ import annotations

import faulthandler

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
