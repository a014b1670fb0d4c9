"""The README's bench tables are rendered from the committed reports/bench.json, never typed by hand: re-rendering
them from that file must give the README back unchanged (a hand edit, or a bench run without ``--readme``, fails)."""

import json
from pathlib import Path

import pytest

from checks.runners.bench import readme as report

ROOT = Path(__file__).resolve().parents[1]


def _payload():
    payload = json.loads((ROOT / "reports/bench.json").read_text())
    return payload, payload.pop("targets")


def test_the_readme_tables_are_the_committed_report():
    data, targets = _payload()
    text = (ROOT / "README.md").read_text()
    assert report.render_readme(text, data, targets) == text, (
        "README's bench or targets table differs from reports/bench.json: run "
        "python -m checks.runners.bench --render-only --readme")


def test_a_hand_edit_is_caught_and_the_markers_are_required(tmp_path):
    data, targets = _payload()
    text = (ROOT / "README.md").read_text()
    assert targets and targets[0]["target"] in text  # the targets block holds the report's targets
    edited = text.replace("| hit |", "| MISSED |", 1)
    assert edited != text and report.render_readme(edited, data, targets) != edited
    with pytest.raises(ValueError, match="targets:start"):
        report.render_readme(text.replace(report.TARGETS_START, ""), data, targets)
