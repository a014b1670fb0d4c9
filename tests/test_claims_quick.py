"""Every claim × every level it lists runs and passes in quick mode, as ``verify --quick`` runs it.

The parametrisation comes from the spec (checks/evidence/spec.toml), not from a list typed here, so a claim that
is added to the spec is tested the moment it is registered. The levels compare against independent
references themselves (SymPy, mpmath, torch, brute force); this test requires that they pass and that
their evidence is well formed.
"""

from __future__ import annotations

import pytest

from checks.evidence import spec
from checks.evidence.outcome import LEVELS
from checks.evidence.registry import Context, get

CASES = [(cid, lv) for cid, c in spec.load().claims.items() if c.status == "implemented" for lv in c.levels]


@pytest.mark.parametrize(("cid", "lv"), CASES, ids=[f"{c}-{lv}" for c, lv in CASES])
def test_level_passes_in_quick_mode(cid, lv, tmp_path):
    ev = get(cid).run(lv, Context(quick=True, report_dir=tmp_path))
    assert ev.error is None, ev.details.get("traceback")
    assert ev.passed, ev.summary
    assert ev.summary and ev.level in LEVELS and ev.claim == cid
    for f in ev.figures:
        assert (tmp_path / f).exists()
