"""Find checks that look at one side only (issue "Checks with two sides"): ``python -m checks.runners.one_sided``.

A check is two-sided when it shows that a bound holds *and* that it is attained (or nearly, with the distance
reported), or when it compares with ``==`` / a relative error / digits agreed. This scanner reads every claim
module's source (AST, nothing is run) and flags each level function whose comparisons all point one way against
a bound-like name (``upper``, ``bound``, ``rhs``, ``lip``, ``sup``, ``limit``) with no two-sided evidence in the
same function or in the helpers it calls from its own module: a comparison the other way, ``==``, a call like
``digits_agreed``/``rel_err``/``isclose``, or a comparison on an error, a tolerance, a gap, a lower end or an
attainment. It is a heuristic
list of candidates to read, not a verdict; ``nox -s mutate`` prints it under its report until it is empty.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOUNDISH = ("upper", "bound", "rhs", "lip", "sup", "limit")
TWO_SIDED_CALLS = ("digits_agreed", "rel_err", "isclose", "allclose", "approx", "cmp", "equals")
TWO_SIDED_OPERANDS = ("attain", "gap", "lower", "within", "shortfall", "below", "rel_", "tol", "err")


def _names(node) -> set[str]:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id.lower())
        elif isinstance(n, ast.Attribute):
            out.add(n.attr.lower())
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.add(n.value.lower())
    return out


def _directions(fn) -> tuple[set[str], bool]:
    """The directions of bound-like comparisons in ``fn`` ('le'/'ge') and whether it has two-sided evidence: an
    ``==`` test, a call like ``digits_agreed``/``rel_err``, or a comparison on an attainment/gap/lower-end name."""
    dirs, eq = set(), False
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            fname = n.func.id if isinstance(n.func, ast.Name) else getattr(n.func, "attr", "")
            if any(t in fname.lower() for t in TWO_SIDED_CALLS):
                eq = True
            continue
        if not isinstance(n, ast.Compare):
            continue
        if any(t in x for x in _names(n) for t in TWO_SIDED_OPERANDS):
            eq = True
        for op, right in zip(n.ops, n.comparators, strict=False):
            if isinstance(op, ast.Eq | ast.NotEq):
                eq = True
                continue
            if not isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE):
                continue
            left_b = any(b in x for x in _names(n.left) for b in BOUNDISH)
            right_b = any(b in x for x in _names(right) for b in BOUNDISH)
            if not (left_b or right_b):
                continue
            small_on_left = isinstance(op, ast.Lt | ast.LtE)
            # "value ≤ bound" and "bound ≥ value" both check that a bound holds from above
            dirs.add("le" if small_on_left == right_b else "ge")
    return dirs, eq


def scan(paths=None) -> list[dict]:
    """Candidates: {module, function, directions} for level functions that look one-sided."""
    files = paths or sorted(p for pkg in ("ws", "flat", "rob", "suite") for p in (ROOT / "checks" / pkg).rglob("*.py"))
    out = []
    for path in files:
        tree = ast.parse(Path(path).read_text())
        fns = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        for name, fn in fns.items():
            if not name.startswith("level_") or name == "level_E":
                continue
            called = {c.func.id for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
            scope = [fn] + [fns[c] for c in called if c in fns]
            dirs, eq = set(), False
            for f in scope:
                d, e = _directions(f)
                dirs |= d
                eq |= e
            two = eq or len(dirs) == 2
            if dirs and not two:
                out.append({"module": str(Path(path).relative_to(ROOT)), "function": name,
                            "directions": sorted(dirs)})
    return out


def main(argv=None) -> int:
    found = scan()
    for r in found:
        print(f"{r['module']}::{r['function']}: bound-like comparisons only {'/'.join(r['directions'])}, "
              "no attainment, equality or error shown")
    print(f"{len(found)} one-sided candidates")
    return 0


if __name__ == "__main__":
    sys.exit(main())
