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
