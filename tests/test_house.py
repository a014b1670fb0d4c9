"""The house (issue "In users' hands"): three kinds of room under checks/, no import circle, no module over 600
lines, no private name crossing a module, and the old dotted names still resolve to the same module objects."""

import subprocess
import sys
from pathlib import Path

import pytest

from checks.runners import house

ROOT = Path(__file__).resolve().parents[1]


def test_the_map_is_clean():
    hm = house.build()
    assert len(hm.modules) > 150  # the whole tree was read, not an empty glob
    assert hm.circles == [], hm.circles
    assert hm.oversized == [], hm.oversized
    assert hm.private == [], hm.private


def test_checks_has_three_kinds_of_room():
    top = sorted(p.name for p in (ROOT / "checks").iterdir() if not p.name.startswith(("__pycache__", ".")))
    assert top == ["__init__.py", "__main__.py", "evidence", "flat", "rob", "runners", "suite", "ws"]
    assert (ROOT / "checks/rob/supplement/__init__.py").exists()


def _tree(tmp_path, files: dict[str, str]) -> Path:
    for rel, src in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
    for pkg in house.PACKAGES:
        (tmp_path / pkg).mkdir(exist_ok=True)
        (tmp_path / pkg / "__init__.py").touch()
    return tmp_path


def test_the_map_finds_a_deferred_circle_a_long_module_and_a_private_crossing(tmp_path):
    """Teeth: a circle closed only by an import inside a function, through a package __init__, is a circle."""
    root = _tree(tmp_path, {
        "numerics/a.py": "def f():\n    from numerics.b import g\n    return g\n",
        "numerics/b/__init__.py": "from numerics.b.c import g\n",
        "numerics/b/c.py": "import numerics.a\n\ndef g():\n    return numerics.a._h\n",
        "checks/long.py": "x = 1\n" * 601,
        "checks/ok.py": "x = 1\n" * 600,
        "proofs/p.py": "from numerics.b.c import _secret\n",
    })
    hm = house.build(root)
    assert hm.circles == [["numerics.a", "numerics.b", "numerics.b.c"]]
    assert hm.oversized == [("checks.long", 601)]
    assert ("proofs.p", 1, "numerics.b.c._secret") in hm.private
    assert ("numerics.b.c", 4, "numerics.a._h") in hm.private


def test_old_names_are_the_same_module_objects():
    import checks.bench.report as old_report
    import checks.registry as old_registry
    import checks.rob.author as old_author

    import checks.evidence.registry as new_registry
    import checks.rob.supplement.author as new_author
    import checks.runners.bench.report as new_report

    assert old_registry is new_registry and old_report is new_report and old_author is new_author
    assert new_registry.__spec__.name == "checks.evidence.registry"  # the alias did not overwrite the real spec
    from checks.evidence import Outcome
    from checks.evidence.outcome import Outcome as O2

    assert Outcome is O2
    with pytest.raises(ModuleNotFoundError):
        __import__("checks.no_such_room")


@pytest.mark.parametrize("name", ["checks.readme", "checks.runners.readme"])
def test_old_and_new_names_run_as_scripts(name):
    out = subprocess.run([sys.executable, "-m", name, "--check"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr


def _directory_rows():
    import re

    text = (ROOT / "README.md").read_text()
    for line in text.splitlines():
        m = re.match(r"^\| `([a-z_/]+/)` \| (.*) \|$", line)
        if m:
            yield m.group(1), m.group(2)


def test_the_readmes_directory_table_names_only_what_exists():
    """Every module or file the README's directory table names (a backticked identifier) exists in its row's
    directory, and every room of checks/ has a row: the table cannot go stale silently."""
    import re

    rows = dict(_directory_rows())
    rooms = {"checks/evidence/", "checks/runners/", "checks/runners/bench/", "numerics/ws/", "numerics/rob/"}
    assert rooms <= set(rows)
    missing = []
    for d, contents in rows.items():
        for tok in re.findall(r"`([A-Za-z_][A-Za-z0-9_]*(?:\.py|\.toml|/)?)`", contents):
            name = tok.rstrip("/")
            dirs = [ROOT / d, *(p for p in (ROOT / d).iterdir() if p.is_dir())]  # "per paper `codegen.py`"
            cands = [x / n for x in dirs for n in ([name] if "." in name else [f"{name}.py", name])]
            cands += [ROOT / name] if tok.endswith("/") else []  # a top-level directory named in passing
            if not any(p.exists() for p in cands):
                missing.append(f"{d}{tok}")
    assert missing == [], f"README's directory table names what does not exist: {missing}"
