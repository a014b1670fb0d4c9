"""The Dask worker plugin of :mod:`checks.runners.campaign` (apart, so that importing ``checks.runners.campaign`` does
not
import ``distributed``: the claim modules that run their E-level sweeps through it stay cheap to import)."""

from __future__ import annotations

from collections.abc import Sequence

from distributed.diagnostics.plugin import WorkerPlugin


class Preload(WorkerPlugin):
    """Imports the papers' claim modules on every worker as it starts, and on a worker that replaces a lost one,
    so that properties resolve by name and no shard's time is spent importing torch."""

    idempotent = False

    def __init__(self, papers: Sequence[str]):
        self.papers = tuple(sorted(set(papers)))

    def setup(self, worker):
        from checks.evidence.registry import load_all

        load_all(self.papers)
