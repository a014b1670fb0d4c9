"""checks/runners/mutate.py, the mutation-testing runner (``nox -s mutate``): applying, validating and reporting,
without
running a campaign.

Oracle independence: the expected outcomes are written here by hand (a two-line file, its one edited line, the
error for a missing or repeated snippet, rates of a hand-made result list), and the mutant list is checked
against the files and the spec on disk, not against anything the runner computes.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checks.runners import mutate
from checks.runners.mutate import Mutant, MutantError


def _mutant(**kw) -> Mutant:
    base = dict(id="m1", paper="ws", kind="wrong sign", file="pkg/mod.py", original="return a - b",
                replacement="return a + b", claims=("ws.theorem",), tests=("tests/test_x.py",),
                description="d")
    base.update(kw)
    return Mutant(**base)


def _tree(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(text)
    return tmp_path


def test_apply_changes_exactly_the_snippet(tmp_path):
    before = "def f(a, b):\n    return a - b\n\n\ndef g(a, b):\n    return a * b\n"
    root = _tree(tmp_path, before)
    mutate.apply_mutant(root, _mutant())
    after = (root / "pkg" / "mod.py").read_text()
    diff = [ln for ln in difflib.ndiff(before.splitlines(), after.splitlines()) if ln[:1] in "+-"]
    assert diff == ["-     return a - b", "+     return a + b"]


def test_missing_or_repeated_snippet_is_an_error(tmp_path):
    root = _tree(tmp_path, "return a * b\n")
    with pytest.raises(MutantError, match="occurs 0 times"):
        mutate.apply_mutant(root, _mutant())
    (root / "pkg" / "mod.py").write_text("return a - b\nreturn a - b\n")
    with pytest.raises(MutantError, match="occurs 2 times"):
        mutate.apply_mutant(root, _mutant())
    assert (root / "pkg" / "mod.py").read_text() == "return a - b\nreturn a - b\n"  # nothing written
    with pytest.raises(MutantError, match="does not exist"):
        mutate.apply_mutant(root, _mutant(file="pkg/other.py"))


def test_load_rejects_malformed_entries(tmp_path):
    good = ('[[mutant]]\nid = "a"\npaper = "ws"\nkind = "k"\nfile = "f.py"\noriginal = "x"\nreplacement = "y"\n'
            'claims = ["ws.theorem"]\ntests = ["tests/t.py"]\ndescription = "d"\n')
    p = tmp_path / "m.toml"
    p.write_text(good)
    assert [m.id for m in mutate.load_mutants(p)] == ["a"]
    p.write_text(good.replace('claims = ["ws.theorem"]', "claims = []"))   # an E experiment's code: tests only
    assert mutate.load_mutants(p)[0].claims == ()
    for bad, match in ((good + good, "duplicate id"), (good.replace('"ws"', '"nope"'), "paper"),
                       (good.replace('"y"', '"x"'), "equals the original"),
                       (good.replace('claims = ["ws.theorem"]', "claims = [3]"), "claims"),
                       (good.replace('tests = ["tests/t.py"]', "tests = []"), "tests"),
                       (good.replace('"f.py"', '"../f.py"'), "inside the repository"),
                       (good + 'survives = "because"\n', "survives must start"),
                       (good.replace('description = "d"\n', ""), "missing")):
        p.write_text(bad)
        with pytest.raises(MutantError, match=match):
            mutate.load_mutants(p)


def test_the_kept_list_applies_to_this_tree():
    """The campaign's list is valid here and now: every snippet occurs exactly once, every claim and test file
    exists, ≥ 25 mutants across the three papers and the generated files, and each kind of edit is plausible
    (it changes the file)."""
    ms = mutate.load_mutants()
    mutate.check_mutants(ms)
    assert len(ms) >= 25
    assert {m.paper for m in ms} == {"ws", "flat", "rob", "suite"}
    assert {m.file for m in ms if m.generated} >= {"numerics/_derived/ws.py", "numerics/_derived/flat.py",
                                                   "numerics/_derived/rob.py"}
    assert len({m.kind for m in ms}) >= 10


def test_a_snapshot_copy_with_one_mutant_differs_in_one_place(tmp_path):
    m = mutate.load_mutants()[0]
    files = mutate.tracked_files()
    assert m.file in files and "checks/runners/mutate.py" in files and not any(f.startswith("reports/") for f in files)
    for f in (m.file, "checks/__init__.py"):
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(mutate.ROOT / f, tmp_path / f)
    mutate.apply_mutant(tmp_path, m)
    orig, new = (mutate.ROOT / m.file).read_text(), (tmp_path / m.file).read_text()
    assert new == orig.replace(m.original, m.replacement) and new != orig
    assert (tmp_path / "checks/__init__.py").read_text() == (mutate.ROOT / "checks/__init__.py").read_text()


def test_rates_count_non_equivalent_mutants_and_name_survivors():
    def res(i, v, t, paper="ws", survives=None):
        return {"id": i, "paper": paper, "generated": False, "survives": survives,
                "verify": {"caught": v, "note": ""}, "tests": {"caught": t, "note": ""}}

    rs = [res("a", True, True), res("b", False, True, "flat"), res("c", False, False, "rob", "known limit: x"),
          res("d", False, False, "rob", "equivalent: y"), res("e", True, False)]
    s = mutate.summarize(rs)
    assert (s["mutants"], s["equivalent"]) == (5, 1)
    assert s["verify"] == pytest.approx(2 / 4) and s["verify_or_tests"] == pytest.approx(3 / 4)
    assert s["survivors_verify"] == ["b", "c", "d"] and s["survivors"] == ["c", "d"] and s["unexplained"] == []
    assert mutate.summarize([res("z", False, False)])["unexplained"] == ["z"]


def test_cli_lists_and_refuses_unknown_ids(capsys):
    assert mutate.main(["--list"]) == 0
    assert "ws-kth-upper-loose" in capsys.readouterr().out
    assert mutate.main(["--only", "no-such-mutant"]) == 2
    assert "unknown mutant" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_module_runs_as_a_script():
    out = subprocess.run([sys.executable, "-m", "checks.runners.mutate", "--list"], capture_output=True, text=True,
                         cwd=mutate.ROOT, check=True).stdout
    assert len(out.splitlines()) == len(mutate.load_mutants())
