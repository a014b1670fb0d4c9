"""The journaled near-flattest design run (checks.flat.near_flattest_campaign): the seeds verify would run, one
journal line each, resumed after a kill mid-write, refused for another master seed, summarised over the prefix."""

from __future__ import annotations

import json

import pytest

from checks.flat import near_flattest as NF
from checks.flat import near_flattest_campaign as C


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(NF, "N_GRID_CIRCLE", (8, 16))
    monkeypatch.setattr(NF, "NOISES", (0.0, 0.1))
    monkeypatch.setattr(NF, "KAPPAS", (2.0,))
    monkeypatch.setattr(NF, "STARTS", 2)


def test_a_run_journals_each_seed_and_resumes(small, tmp_path):
    out = tmp_path / "circle"
    res = C.run("circle", out, seeds=2, master=7, log=lambda *_: None)
    lines = (tmp_path / "circle.jsonl").read_text().splitlines()
    same = lambda a, b: json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)   # noqa: E731 (NaN ≠ NaN)
    assert len(lines) == 2 and res["seeds"] == 2 and same(json.loads((tmp_path / "circle.json").read_text()), res)
    first = NF.FIRST_SEED
    # the seed is the one verify runs: the same cells from the same stream
    direct = C._plain(NF.run_seed((7, first, C.design_config("circle", 2))))
    assert C.read_journal(tmp_path / "circle.jsonl", "circle", 7)[first] == direct
    assert [s["units"] <= 2 for s in res["series"]] == [True, True] and all(s["planned"] > 2 for s in res["series"])
    assert {s["verdict"] for s in res["series"]} == {"inconclusive"}   # 2 of hundreds of planned units
    # a kill mid-write: the last line is cut; the rerun runs that seed again and nothing else
    cut = lines[0] + "\n" + lines[1][: len(lines[1]) // 2]
    (tmp_path / "circle.jsonl").write_text(cut)
    ran = []
    res2 = C.run("circle", out, seeds=2, master=7, log=ran.append)
    assert "1 to run" in ran[0] and same(res2["series"], res["series"])
    with pytest.raises(ValueError, match="master seed 7"):
        C.read_journal(tmp_path / "circle.jsonl", "circle", 8)


def test_the_summary_uses_the_contiguous_prefix_only(small, tmp_path):
    out = tmp_path / "c"
    C.run("circle", out, seeds=3, master=3, log=lambda *_: None)
    done = C.read_journal(tmp_path / "c.jsonl", "circle", 3)
    del done[NF.FIRST_SEED + 1]                      # a hole: only the seed before it counts
    s = C.summarize(done, "circle", 3, 3)
    assert s["seeds"] == 1 and s["finished"] == 2 and s["series"] == []
    with pytest.raises(ValueError, match="design must be"):
        C.design_config("ball", 3)
