"""The CLI: readable one-line errors with exit code 2, a report with the documented schema."""

import json

from checks.cli import main


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
    assert set(lv) >= {"passed", "metric", "seconds"} and lv["passed"] is True
    assert rep["meta"]["versions"]["sympy"] and rep["meta"]["seed"] == 20260
    assert (tmp_path / "verify.md").read_text().startswith("# shallow-proofs verification report")


def test_failing_claim_exits_1(tmp_path, monkeypatch):
    from checks.evidence import Outcome
    from checks.registry import get

    OVERFIT = get("ws.overfit")

    monkeypatch.setitem(OVERFIT.levels, "S", lambda ctx: Outcome(False, {"x": 1}, "planted failure"))
    assert main(["verify", "--claims", "ws.overfit", "--levels", "S", "--report-dir", str(tmp_path),
                 "--no-progress"]) == 1


def _strip_timing(o):
    if isinstance(o, dict):
        return {k: _strip_timing(v) for k, v in o.items() if k not in ("seconds", "examples_per_s")}
    if isinstance(o, list):
        return [_strip_timing(v) for v in o]
    return o


def test_report_is_deterministic_for_a_seed(tmp_path):
    reps = []
    for run in ("a", "b"):
        d = tmp_path / run
        assert main(["verify", "--claims", "ws.theorem", "--budget", "10", "--report-dir", str(d),
                     "--no-progress"]) == 0
        reps.append(_strip_timing(json.loads((d / "verify.json").read_text())))
    assert reps[0] == reps[1]
    assert reps[0]["claims"][0]["levels"]["F"]["metric"]["examples"] >= 20
