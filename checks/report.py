"""The report: a rich table on the terminal, ``verify.json`` and ``verify.md`` under the report dir.

The JSON is deterministic for a given seed apart from the ``seconds`` fields: keys are sorted, floats
are rounded to 12 significant digits, and no wall-clock date is written.
"""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from checks.evidence import LEVEL_NAMES, LEVELS, Evidence, jsonable
from checks.registry import Claim, papers

_PACKAGES = ("sympy", "numpy", "scipy", "mpmath", "torch", "hypothesis", "cvxpy", "clarabel", "matplotlib")


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for p in _PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def fmt_metric(metric: dict[str, Any], limit: int = 3) -> str:
    parts = []
    for k, v in list(metric.items())[:limit]:
        if isinstance(v, float):
            v = f"{v:.3g}"
        parts.append(f"{k}={v}")
    return ", ".join(parts)


def claim_passed(claim: Claim, evidence: Sequence[Evidence]) -> bool:
    mine = [e for e in evidence if e.claim == claim.id]
    return bool(mine) and all(e.passed for e in mine)


def build(claims: Sequence[Claim], evidence: Sequence[Evidence], meta: dict[str, Any]) -> dict[str, Any]:
    out = []
    for c in claims:
        mine = {e.level: e for e in evidence if e.claim == c.id}
        if not mine:
            continue
        out.append({
            "id": c.id,
            "paper": c.paper,
            "statement": c.statement,
            "latex": c.latex,
            "spec_levels": list(c.spec_levels),
            "passed": all(e.passed for e in mine.values()),
            "levels": {lv: mine[lv].to_json() for lv in LEVELS if lv in mine},
        })
    return {"claims": out, "passed": all(c["passed"] for c in out), "meta": jsonable(meta)}


def write(report: dict[str, Any], report_dir: Path, stem: str = "verify") -> tuple[Path, Path]:
    report_dir.mkdir(parents=True, exist_ok=True)
    jp = report_dir / f"{stem}.json"
    jp.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    mp = report_dir / f"{stem}.md"
    mp.write_text(markdown(report))
    return jp, mp


def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    lines = [
        "# shallow-proofs verification report",
        "",
        f"Overall: **{'PASS' if report['passed'] else 'FAIL'}** · seed {meta.get('seed')} · "
        f"levels {','.join(meta.get('levels', []))}" + (" · quick mode" if meta.get("quick") else ""),
        "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items()),
        "",
        "| claim | " + " | ".join(LEVELS) + " |",
        "|---|" + "---|" * len(LEVELS),
    ]
    for c in report["claims"]:
        cells = []
        for lv in LEVELS:
            e = c["levels"].get(lv)
            cells.append("—" if e is None else ("✅" if e["passed"] else "❌"))
        lines.append(f"| `{c['id']}` | " + " | ".join(cells) + " |")
    paper = None
    for c in report["claims"]:
        prefix = c["id"].split(".")[0]
        if prefix != paper:
            paper = prefix
            lines += ["", f"## {papers()[prefix].title}"]
        lines += ["", f"### `{c['id']}` — {'PASS' if c['passed'] else 'FAIL'}", "", c["statement"], "",
                  f"$$ {c['latex']} $$", ""]
        for lv, e in c["levels"].items():
            status = "pass" if e["passed"] else "FAIL"
            lines.append(f"- **{lv}** ({LEVEL_NAMES[lv]}, {status}, {e['seconds']:.2f} s): {e['summary']}")
            if e["metric"]:
                lines.append("  - metrics: " + ", ".join(f"`{k}` = {v}" for k, v in e["metric"].items()))
            if e.get("error"):
                lines.append(f"  - error: `{e['error']}`")
            for f in e["figures"]:
                lines.append(f"  - ![{Path(f).name}]({f})")
    return "\n".join(lines) + "\n"


def table(report: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console()
    t = Table(title="shallow-proofs: claims and evidence", show_lines=False)
    t.add_column("claim", style="bold")
    t.add_column("lvl")
    t.add_column("ok")
    t.add_column("metric")
    t.add_column("s", justify="right")
    for c in report["claims"]:
        first = True
        for lv, e in c["levels"].items():
            ok = "[green]pass[/]" if e["passed"] else "[red]FAIL[/]"
            t.add_row(c["id"] if first else "", lv, ok, e["summary"] or fmt_metric(e["metric"]),
                      f"{e['seconds']:.1f}")
            first = False
    console.print(t)
    n = len(report["claims"])
    bad = [c["id"] for c in report["claims"] if not c["passed"]]
    console.print(f"{n - len(bad)}/{n} claims pass" + (f"; failing: {', '.join(bad)}" if bad else ""))
