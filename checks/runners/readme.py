"""Regenerate the README's claims table from the spec and the registry: ``python -m checks.runners.readme [--check]``.

Every spec entry gets a row: implemented claims show ✔ per level the registry runs, planned ones say so."""

from __future__ import annotations

import sys
from pathlib import Path

from checks.evidence.outcome import LEVELS
from checks.evidence.registry import load_all, papers, spec

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- claims:start -->", "<!-- claims:end -->"


def claims_table() -> str:
    rows = ["| claim | paper | statement | " + " | ".join(LEVELS) + " |", "|---|---|---|" + "---|" * len(LEVELS)]
    reg = load_all()
    for cid, e in spec().claims.items():
        c = reg.get(cid)
        marks = [("✔" if c is not None and lv in c.levels else "planned") if lv in e.levels else "" for lv in LEVELS]
        stmt = e.statement.replace("|", "\\|")
        rows.append(f"| `{cid}` | {papers()[e.paper].key} | {stmt} | " + " | ".join(marks) + " |")
    return "\n".join(rows)


def replace_block(text: str, start: str, end: str, body: str, where: Path = README) -> str:
    """``text`` with what lies between the markers ``start`` and ``end`` replaced by ``body`` (the markers kept);
    ValueError naming ``where`` if a marker is missing. Every generated README table goes through this."""
    if start not in text or end not in text:
        raise ValueError(f"{where} has no {start} … {end} block to regenerate")
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return head + "\n".join([start, body, end]) + tail


def render(text: str) -> str:
    return replace_block(text, START, END, claims_table())


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    text = README.read_text()
    new = render(text)
    if "--check" in argv:
        if new != text:
            print("README claims table is stale: run python -m checks.runners.readme", file=sys.stderr)
            return 1
        return 0
    README.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
