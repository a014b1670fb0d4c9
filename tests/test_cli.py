"""The CLI: readable one-line errors with exit code 2, a report with the documented schema.

Oracle independence: the expected exit codes, messages, claim order and report keys are the documented
interface (the ``checks.runners.cli`` docstring, the README), written here by hand; no expected value is read from a
report the code under test wrote, except to compare two runs of it with each other.
"""

import json

from checks.runners.cli import main


def test_unknown_claim_is_exit_2(capsys, tmp_path):
    assert main(["verify", "--claims", "nope.claim", "--report-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no claim matches 'nope.claim'" in err and "Traceback" not in err


def test_bad_budget_is_exit_2(capsys, tmp_path):
    assert main(["falsify", "--claims", "ws.theorem", "--budget", "0", "--report-dir", str(tmp_path)]) == 2
    assert "budget" in capsys.readouterr().err


def test_list_and_show(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "ws.trace_sq" in out and "ws.experiment" in out
    assert main(["show", "ws.bound"]) == 0
    assert "λ_max(H) ≤ λ_sup" in capsys.readouterr().out


def test_verify_writes_schema(tmp_path):
    rc = main(["verify", "--claims", "ws.theorem", "ws.overfit", "--levels", "S", "--report-dir", str(tmp_path),
               "--no-progress"])
    assert rc == 0
    rep = json.loads((tmp_path / "verify.json").read_text())
    ids = [c["id"] for c in rep["claims"]]
    assert ids == ["ws.theorem", "ws.overfit"]
    lv = rep["claims"][0]["levels"]["S"]
    assert set(lv) >= {"passed", "verdict", "metric", "timing"} and lv["passed"] is True
    assert lv["verdict"] == "proved" and rep["claims"][0]["verdict"] == "proved"
    assert rep["meta"]["versions"]["sympy"] and rep["meta"]["seed"] == 20260
    md = (tmp_path / "verify.md").read_text()
    assert md.startswith("Run: claims ws.theorem ws.overfit, levels S, seed 20260; full run.")
    assert "## Referee summary" in md.split("## Levels")[0]


def test_failing_claim_exits_1(tmp_path, monkeypatch):
    from checks.evidence.outcome import Outcome
    from checks.evidence.registry import get

    OVERFIT = get("ws.overfit")

    monkeypatch.setitem(OVERFIT.levels, "S", lambda ctx: Outcome(False, {"x": 1}, "planted failure"))
    assert main(["verify", "--claims", "ws.overfit", "--levels", "S", "--report-dir", str(tmp_path),
                 "--no-progress"]) == 1


def _strip_timing(o):
    """Remove the one key that may differ between runs with one seed (everything timing-derived)."""
    if isinstance(o, dict):
        return {k: _strip_timing(v) for k, v in o.items() if k != "timing"}
    if isinstance(o, list):
        return [_strip_timing(v) for v in o]
    return o


def test_report_is_deterministic_for_a_seed(tmp_path):
    """One seed, one report: whatever the number of worker processes, and whatever else the run selects
    (Hypothesis's constant pool does not depend on which modules earlier claims happened to import)."""
    reps = []
    for run, jobs in (("a", "1"), ("b", "2")):
        d = tmp_path / run
        assert main(["verify", "--claims", "ws.theorem", "flat.duality", "rob.value", "rob.canonical", "--levels",
                     "F", "--budget", "8", "--report-dir", str(d), "--no-progress", "--jobs", jobs]) == 0
        reps.append(_strip_timing(json.loads((d / "verify.json").read_text())))
    assert json.dumps(reps[0], sort_keys=True) == json.dumps(reps[1], sort_keys=True)  # byte-identical
    d = tmp_path / "alone"  # a fresh process that loads only what rob.value needs
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "checks", "verify", "--claims", "rob.value", "--levels", "F", "--budget",
                    "8", "--report-dir", str(d), "--no-progress", "--jobs", "1"], check=True, capture_output=True)
    alone = _strip_timing(json.loads((d / "verify.json").read_text()))["claims"][0]["levels"]["F"]
    assert json.dumps(alone, sort_keys=True) == json.dumps(reps[0]["claims"][3]["levels"]["F"], sort_keys=True)
    assert reps[0]["claims"][0]["levels"]["F"]["metric"]["examples"] >= 16  # two properties × budget 8
    assert [c["id"] for c in reps[0]["claims"]] == ["ws.theorem", "flat.duality", "rob.canonical", "rob.value"]


def test_report_dir_under_a_file_is_exit_2_before_running(tmp_path, capsys):
    f = tmp_path / "a_file"
    f.write_text("x")
    t0 = __import__("time").perf_counter()
    assert main(["verify", "--claims", "ws.trace", "--report-dir", str(f / "sub"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "is a file" in err and "Traceback" not in err and err.count("\n") == 1
    assert __import__("time").perf_counter() - t0 < 5  # nothing ran


def test_replay_edges_are_one_line_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    notjson = tmp_path / "notes.txt"
    notjson.write_text("not json at all")
    for path, words in ((empty, "needs the fields 'property' and 'case'"), (notjson, "is not a JSON reproducer"),
                        (tmp_path / "missing.json", "is not a file")):
        assert main(["replay", str(path)]) == 2
        err = capsys.readouterr().err
        assert words in err and str(path.name) in err and "Traceback" not in err


def test_partial_run_merges_and_quick_never_overwrites_full(tmp_path):
    args = ["--report-dir", str(tmp_path), "--no-progress", "--levels", "S"]
    assert main(["verify", "--claims", "ws.theorem", *args]) == 0
    assert main(["verify", "--claims", "ws.overfit", *args]) == 0
    rep = json.loads((tmp_path / "verify.json").read_text())
    assert [c["id"] for c in rep["claims"]] == ["ws.theorem", "ws.overfit"]  # merged, in spec order
    assert rep["meta"]["rerun"] == ["ws.overfit"]
    md = (tmp_path / "verify.md").read_text()
    assert "re-run: ws.overfit" in md.splitlines()[0]
    before = (tmp_path / "verify.json").read_bytes()
    assert main(["verify", "--claims", "ws.theorem", "--quick", *args]) == 0
    assert (tmp_path / "verify.json").read_bytes() == before  # the quick run wrote verify-quick.*
    quick = (tmp_path / "verify-quick.md").read_text()
    assert "QUICK smoke run: its verdicts are not evidence" in quick.splitlines()[0]


def test_referee_summary_lists_every_claim_discrepancies_first():
    """The summary that opens verify.md has one row per claim, and a verdict that differs from the paper
    comes first in its paper's table (synthetic evidence: the layout is what is tested)."""
    from checks.evidence.outcome import Evidence
    from checks.evidence.registry import load_all
    from checks.runners import report

    claims = list(load_all().values())
    ev = []
    for c in claims:
        for lv in c.levels:
            verdict = ("not reproduced" if c.id == "ws.experiment" else "reproduced") if lv == "E" else \
                {"S": "proved", "P": "verified to 50 digits", "A": "agrees to rel. err. 1e-15",
                 "F": "no counterexample in 10 cases"}[lv]
            ev.append(Evidence(c.id, lv, True, {}, "s", 0.1, verdict=verdict))
    md = report.markdown(report.build(claims, ev, {"seed": 1, "levels": ["S"], "quick": False}))
    summary = md.split("## Levels")[0]
    for c in claims:
        assert f"| `{c.id}` |" in summary, c.id
    ws_rows = [line for line in summary.splitlines() if line.startswith("| `ws.")]
    assert ws_rows[0].startswith("| `ws.experiment` |") and "**not reproduced**" in ws_rows[0]
