"""The README's two bench tables (the speed table and the targets table), rendered from a bench report between
their markers: nothing in either block is typed by hand, so neither can go stale (``tests/test_bench_report.py``
re-renders them from the committed ``reports/bench.json`` and compares)."""

from __future__ import annotations

import math
from pathlib import Path

from checks.runners.bench.report import Data, Targets, headline_table, only_of, target_table
from checks.runners.readme import README, replace_block

README_START, README_END = "<!-- bench:start -->", "<!-- bench:end -->"
TARGETS_START, TARGETS_END = "<!-- targets:start -->", "<!-- targets:end -->"


def render_readme(text: str, data: Data, targets: Targets, readme: Path = README) -> str:
    """``text`` (the README) with its speed table and its targets table rendered from this report: nothing in
    either block is written by hand, so neither can go stale (``tests/test_bench_report.py`` re-renders them from
    the committed ``reports/bench.json`` and compares)."""
    m = data["meta"]
    note = (
        f"Regenerated from `reports/bench.md` ({'quick' if m['quick'] else 'full'} run of {m.get('started', '?')}, "
        f"load average {data.get('machine', {}).get('loadavg_start', [math.nan])[0]:.1f} at its start"
        + "".join(f"; {', '.join(only_of(x))} re-run at {x.get('started', '?')} and merged"
                  for x in m.get("merged", []))
        + ")."
    )
    text = replace_block(text, README_START, README_END, "\n".join([note, "", headline_table(data, targets)]), readme)
    return replace_block(text, TARGETS_START, TARGETS_END, "\n".join(target_table(data, targets)[2:]), readme)


def write_readme(data: Data, targets: Targets, readme: Path = README) -> None:
    """Replace the README's speed table and targets table (between their markers) with this report's."""
    readme.write_text(render_readme(readme.read_text(), data, targets, readme))
