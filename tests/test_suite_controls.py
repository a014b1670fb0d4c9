"""suite.controls: planting a mutant in process (code-object swap, in a forked child) and the control's verdict."""

from __future__ import annotations

import multiprocessing as mp

import pytest

from checks.evidence.outcome import severity
from checks.evidence.registry import Context
from checks.runners.mutate import Mutant, load_mutants
from checks.suite import controls as C


def _child_value(conn, file, original, replacement):
    from numerics.rob import structured  # imported (and bound by name) before the plant
    from numerics.rob.structured import _oriented

    C.apply_in_process(file, original, replacement)
    conn.send((_oriented((-2, 4), 6)[1], structured._oriented((-2, 4), 6)[1]))


def test_plant_reaches_names_imported_before_it():
    """`from m import f` bound before the plant still runs the mutant (the code object is swapped), in the child
    only: the parent is untouched."""
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child_value, args=(b, "numerics/rob/structured.py",
                                              "    sgn = 1 if first > 0 else -1", "    sgn = 1"))
    p.start()
    got = a.recv()
    p.join()
    assert got == (1.5, 1.5)   # (−2, 4 | 6) with the orientation flip planted away: b/s = 6/4
    from numerics.rob.structured import _oriented
    assert _oriented((-2, 4), 6)[1] == -1.5   # the parent still flips: (−½, 1 | −3/2)


def test_plant_rejects_a_stale_snippet():
    with pytest.raises(C.ControlError, match="occurs 0 times"):
        C.apply_in_process("numerics/rob/structured.py", "no such line", "x")


def test_controls_table_covers_the_mutated_claims():
    table, missing = C.controls()
    named = {c for m in load_mutants() for c in m.claims}
    assert set(table) | set(missing) >= {c for c in named if c != C.ID}
    assert not set(table) & set(missing)
    for cid, (m, lv) in table.items():
        assert cid in m.claims and lv and "E" not in lv


def test_a_control_is_caught_and_a_harmless_one_is_let_through(tmp_path):
    """A real slip is caught by its claim's checks; a plant that changes nothing is reported as let through, and
    the level fails naming it."""
    real = next(m for m in load_mutants() if m.id == "rob-structured-flip-affine-sign")
    harmless = Mutant("harmless", "rob", "no-op", real.file, real.original, real.original + "  # no-op",
                      ("rob.structured",), real.tests, "changes nothing")
    ctx = Context(seed=3, report_dir=tmp_path, quick=True)
    out = C.run_controls(ctx, {"rob.structured": (real, ("S", "F"))}, [])
    assert out.passed and out.metric["caught"] == 1, out.summary
    assert severity(out.verdict) == severity("no counterexample")
    out = C.run_controls(ctx, {"rob.structured": (harmless, ("S",))}, ["rob.sharpness"])
    assert not out.passed and out.metric["let_through"] == ["rob.structured"]
    assert "CAN NO LONGER FAIL" in out.summary and "rob.sharpness" in out.summary
    assert out.verdict.startswith("refuted")
