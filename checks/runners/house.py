"""The map of the house: rooms, module sizes, import circles and private names that cross modules.

``python -m checks.runners.house [--json]`` reads the source of ``proofs``, ``numerics`` and ``checks`` (AST only:
nothing is imported) and reports

* **circles**: strongly connected components of the import graph with more than one module. An edge A → B is any
  import of B in A, at module level or inside a function (a deferred import hides a circle from Python, not from
  a reader); ``from P import name`` is an edge to ``P.name`` when that is a module, else to the package ``P``, and
  importing ``P.Q`` also imports the package ``P`` (its ``__init__``);
* **oversized**: modules over :data:`MAX_LINES` lines (generated modules under ``numerics/_derived`` excepted:
  they are written by ``nox -s derive``);
* **private crossings**: a name with a leading underscore imported from another module of the repository
  (``from m import _x``), or read as an attribute of one (``m._x``).

``tests/test_house.py`` asserts that all three lists are empty.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("proofs", "numerics", "checks")
MAX_LINES = 600
GENERATED = ("numerics._derived",)


@dataclass
class HouseMap:
    modules: dict[str, int] = field(default_factory=dict)  # dotted name → lines
    edges: dict[str, list[str]] = field(default_factory=dict)
    circles: list[list[str]] = field(default_factory=list)
    oversized: list[tuple[str, int]] = field(default_factory=list)
    private: list[tuple[str, int, str]] = field(default_factory=list)  # (module, line, "target._name")


def module_files(root: Path = ROOT) -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for p in sorted((root / pkg).rglob("*.py")):
            rel = p.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = p
    return out


def _resolve(node: ast.ImportFrom, mod: str, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _dotted(node) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"] for a chain of attribute reads on a name; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def build(root: Path = ROOT) -> HouseMap:
    files = module_files(root)
    names = set(files)
    hm = HouseMap()

    def known(target: str) -> str | None:  # the longest prefix of target that is a module of the repository
        parts = target.split(".")
        for k in range(len(parts), 0, -1):
            cand = ".".join(parts[:k])
            if cand in names:
                return cand
        return None

    for mod, path in files.items():
        src = path.read_text()
        hm.modules[mod] = src.count("\n") + (not src.endswith("\n") and bool(src))
        tree = ast.parse(src, filename=str(path))
        is_pkg = path.name == "__init__.py"
        targets: set[str] = set()
        aliases: dict[str, str] = {}  # local name → repository module it names
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    t = known(a.name)
                    if t:
                        targets.add(t)
                        aliases[a.asname or a.name.split(".")[0]] = t if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(node, mod, is_pkg)
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    if sub in names:
                        targets.add(sub)
                        aliases[a.asname or a.name] = sub
                    else:
                        t = known(base)
                        if t:
                            targets.add(t)
                            if a.name.startswith("_") and not a.name.startswith("__") and t != mod:
                                hm.private.append((mod, node.lineno, f"{t}.{a.name}"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                owner = _dotted(node.value)
                if owner and owner[0] in aliases:
                    full = ".".join([aliases[owner[0]], *owner[1:]])
                    if full in names and full != mod:
                        hm.private.append((mod, node.lineno, f"{full}.{node.attr}"))
        closed = set()
        for t in targets:  # importing a.b.c runs a/__init__ and a/b/__init__ first
            parts = t.split(".")
            closed.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
        hm.edges[mod] = sorted(t for t in closed if t in names and t != mod and not mod.startswith(t + "."))
    hm.circles = _sccs(hm.edges)
    hm.oversized = sorted(((m, n) for m, n in hm.modules.items()
                           if n > MAX_LINES and not m.startswith(GENERATED)), key=lambda x: -x[1])
    hm.private.sort()
    return hm


def _sccs(edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), those with more than one module."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return sorted(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m checks.runners.house", description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the whole map as JSON")
    args = ap.parse_args(argv)
    hm = build()
    if args.json:
        print(json.dumps(asdict(hm), indent=1))
    else:
        rooms: dict[str, list[int]] = {}
        for m, n in hm.modules.items():
            rooms.setdefault(".".join(m.split(".")[:2]), []).append(n)
        for room, ns in sorted(rooms.items()):
            print(f"{room:28s} {len(ns):3d} modules {sum(ns):6d} lines (largest {max(ns)})")
        print(f"\n{len(hm.modules)} modules, {sum(hm.modules.values())} lines")
        print(f"circles: {len(hm.circles)}" + "".join(f"\n  {' ↔ '.join(c)}" for c in hm.circles))
        print(f"modules over {MAX_LINES} lines: {len(hm.oversized)}"
              + "".join(f"\n  {m} {n}" for m, n in hm.oversized))
        print(f"private crossings: {len(hm.private)}" + "".join(f"\n  {m}:{ln} {t}" for m, ln, t in hm.private))
    return 1 if (hm.circles or hm.oversized or hm.private) else 0


if __name__ == "__main__":
    sys.exit(main())
