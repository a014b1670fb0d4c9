"""Regenerate the README's claims table from the registry: ``python -m checks.readme [--check]``."""

from __future__ import annotations

import sys
from pathlib import Path

from checks.evidence import LEVELS
from checks.registry import load_all, papers

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- claims:start -->", "<!-- claims:end -->"


def claims_table() -> str:
    rows = ["| claim | paper | statement | " + " | ".join(LEVELS) + " |", "|---|---|---|" + "---|" * len(LEVELS)]
    for c in load_all().values():
        marks = []
        for lv in LEVELS:
            if lv in c.levels:
                marks.append("✔")
            elif lv in c.spec_levels:
                marks.append("✘ missing")
            else:
                marks.append("")
        stmt = c.statement.replace("|", "\\|")
        rows.append(f"| `{c.id}` | {papers()[c.id.split('.')[0]].key} | {stmt} | " + " | ".join(marks) + " |")
    return "\n".join(rows)


def render(text: str) -> str:
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{claims_table()}\n{END}{tail}"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = README.read_text()
    new = render(text)
    if "--check" in argv:
        if new != text:
            print("README claims table is stale: run python -m checks.readme", file=sys.stderr)
            return 1
        return 0
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
