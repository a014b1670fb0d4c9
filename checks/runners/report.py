"""The report: ``verify.json`` and ``verify.md`` under the report dir, and what the terminal shows.

* **Verdicts.** Every level and every claim carries SPEC §0's verdict next to ``passed``. A pass says that
  the evidence was produced and is what it says; the verdict says what it shows about the paper.
* **Referee summary first.** ``verify.md`` opens with one table per paper, one row per claim: the
  paper's statement, the verdict, the key number with its interval, and the figure. Discrepancies with
  the paper come first. ``verify`` prints the same table first.
* **Partial runs merge.** A run of some claims or levels merges into the report already in the report
  dir (the re-run claims are marked); it never replaces a fuller report with a smaller one. A quick run
  writes ``verify-quick.*`` and never touches a full run's report.
* **Deterministic.** Keys are sorted, floats rounded to 12 significant digits, no wall-clock date, and
  every timing-derived number sits under a ``timing`` key: two runs with one seed differ only there.
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

from checks.evidence.outcome import LEVEL_NAMES, LEVELS, Evidence, claim_verdict, jsonable, severity
from checks.evidence.registry import Claim, papers

_PACKAGES = ("sympy", "numpy", "scipy", "mpmath", "torch", "hypothesis", "cvxpy", "clarabel", "matplotlib",
             "python-flint")
# verdicts at least this good are agreements with the paper; the rest are listed first
_AGREES = severity("reproduced")
SCHEMA = 2


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


def key_number(levels: dict[str, Any]) -> str:
    """The number a referee looks at: an E level's tested effect with its interval, else the strongest
    level's verdict."""
    e = levels.get("E")
    if e is not None:
        test = e.get("details", {}).get("statement_test")
        if isinstance(test, dict) and "estimate" in test:
            ci = test.get("ci")
            ci_s = f" [{_g(ci[0])}, {_g(ci[1])}]" if isinstance(ci, list | tuple) and len(ci) == 2 else ""
            seeds = f", {test['seeds']} seeds" if "seeds" in test else ""
            name = test.get("symbol") or test.get("effect", "estimate")
            return f"{name} = {_g(test['estimate'])}{ci_s}{seeds}"
        return e.get("summary", "")[:120]
    parts = [e.get("verdict", "") for lv, e in levels.items() if lv != "S" or len(levels) == 1]
    return "; ".join(p for p in parts if p)


def _g(x) -> str:
    try:
        return f"{float(x):.3g}"
    except (TypeError, ValueError):
        return str(x)


def claim_entry(c: Claim, mine: dict[str, Evidence], run: dict[str, Any], claims_spec) -> dict[str, Any]:
    levels = {lv: mine[lv].to_json() for lv in LEVELS if lv in mine}
    entry = claims_spec.get(c.id)
    return {
        "id": c.id,
        "paper": c.paper,
        "statement": c.statement,
        "paper_statement": entry.spec if entry is not None and entry.spec else c.statement,
        "latex": c.latex,
        "spec_levels": list(c.spec_levels),
        "passed": all(e.passed for e in mine.values()),
        "verdict": claim_verdict({lv: e["verdict"] for lv, e in levels.items()}),
        "levels": levels,
        "run": run,
    }


def build(claims: Sequence[Claim], evidence: Sequence[Evidence], meta: dict[str, Any]) -> dict[str, Any]:
    from checks.evidence.registry import spec

    run = {k: meta.get(k) for k in ("seed", "quick", "budget", "power")}
    claims_spec = spec().claims  # read once, not once per claim
    out = []
    for c in claims:
        mine = {e.level: e for e in evidence if e.claim == c.id}
        if mine:
            out.append(claim_entry(c, mine, run, claims_spec))
    return finish({"schema": SCHEMA, "claims": out, "meta": jsonable(meta)})


def finish(rep: dict[str, Any]) -> dict[str, Any]:
    rep["passed"] = all(c["passed"] for c in rep["claims"])
    rep["verdicts"] = {c["id"]: c["verdict"] for c in rep["claims"]}
    return rep


def merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` (a partial run) merged into ``old``: re-run levels replace theirs, the rest stays; the
    claims that were re-run are listed in ``meta.rerun``; claim order follows the spec."""
    from checks.evidence.registry import spec

    by_id = {c["id"]: c for c in old.get("claims", [])}
    for c in new["claims"]:
        prev = by_id.get(c["id"])
        if prev is not None and prev.get("run") == c["run"]:
            levels = {**prev["levels"], **c["levels"]}
            c = {**c, "levels": {lv: levels[lv] for lv in LEVELS if lv in levels}}
            c["passed"] = all(e["passed"] for e in c["levels"].values())
            c["verdict"] = claim_verdict({lv: e["verdict"] for lv, e in c["levels"].items()})
        by_id[c["id"]] = c
    order = list(spec().claims)
    claims = sorted(by_id.values(), key=lambda c: order.index(c["id"]) if c["id"] in order else len(order))
    meta = dict(new["meta"])
    meta["rerun"] = [c["id"] for c in new["claims"]]
    meta["merged_into"] = {k: old.get("meta", {}).get(k) for k in ("seed", "levels", "claims_selected", "quick")}
    return finish({"schema": SCHEMA, "claims": claims, "meta": meta})


def stem_for(meta: dict[str, Any], cmd: str = "verify") -> str:
    return f"{cmd}-quick" if meta.get("quick") else cmd


def write(report: dict[str, Any], report_dir: Path, stem: str = "verify", *,
          partial: bool = False) -> tuple[Path, Path]:
    """Write ``stem.json`` and ``stem.md``; a ``partial`` run merges into an existing report of that stem (``verify``
    then renders the merged report as ``stem.html`` with :mod:`checks.runners.report_html`)."""
    report_dir.mkdir(parents=True, exist_ok=True)
    jp = report_dir / f"{stem}.json"
    if partial and jp.exists():
        try:
            old = json.loads(jp.read_text())
        except json.JSONDecodeError:
            old = None
        if isinstance(old, dict) and old.get("schema") == SCHEMA:
            report = merge(old, report)
    tmp = jp.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    tmp.replace(jp)
    mp = report_dir / f"{stem}.md"
    mp.write_text(markdown(report))
    return jp, mp


def run_line(meta: dict[str, Any]) -> str:
    claims = meta.get("claims_selected")
    claims = "all claims" if claims in (None, "all") else "claims " + " ".join(claims)
    mode = "QUICK smoke run: its verdicts are not evidence" if meta.get("quick") else "full run"
    budget = f", budget {meta['budget']} examples/property" if meta.get("budget") else ""
    if meta.get("power"):
        budget += ", every E experiment at its planned units (--power)"
    if meta.get("resume"):
        budget += ", E sweeps resumed from the items a killed run of the same code finished (--resume)"
    line = f"Run: {claims}, levels {','.join(meta.get('levels', []))}, seed {meta.get('seed')}{budget}; {mode}."
    if meta.get("rerun"):
        line += f" Merged into an earlier report; re-run: {', '.join(meta['rerun'])}."
    return line


def _figure(c: dict[str, Any]) -> str:
    for e in c["levels"].values():
        if e.get("figures"):
            f = e["figures"][0]
            return f"[{Path(f).name}]({f})"
    return "—"


def referee_rows(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per paper, one row per claim; discrepancies with the paper first, then spec order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for i, c in enumerate(report["claims"]):
        out.setdefault(c["id"].split(".")[0], []).append({
            "id": c["id"], "statement": c.get("paper_statement", c["statement"]), "verdict": c["verdict"],
            "key": key_number(c["levels"]), "figure": _figure(c), "passed": c["passed"],
            "discrepancy": severity(c["verdict"]) < _AGREES, "order": i})
    for rows in out.values():
        rows.sort(key=lambda r: (not r["discrepancy"], r["order"]))
    return out


# Extension point: extra sections of verify.md after the referee summary, each "module:function" returning markdown
# lines for the report (an empty list leaves nothing). They read committed data only (CI has no network).
EXTRA_SECTIONS = ("checks.rob.supplement.author:report_section",)


def extra_sections(report: dict[str, Any]) -> list[str]:
    import importlib

    lines: list[str] = []
    for spec_ in EXTRA_SECTIONS:
        mod, fn = spec_.split(":")
        lines += getattr(importlib.import_module(mod), fn)(report)
    return lines


def markdown(report: dict[str, Any]) -> str:
    meta = report["meta"]
    lines = [run_line(meta), "", "# shallow-proofs verification report", ""]
    ps = papers()
    lines += ["## Referee summary", "",
              "One row per claim: the paper's statement, SPEC §0's verdict on it, the key number with its "
              "interval, and a figure. Discrepancies with the paper come first in each table. *Evidence* "
              "says whether the suite's own evidence was produced as specified (a claim can pass as "
              "evidence while its verdict is `not reproduced`).", ""]
    for paper, rows in referee_rows(report).items():
        title = ps[paper].title if paper in ps else paper
        lines += [f"### {title}", "", "| claim | paper's statement | verdict | key number | figure | evidence |",
                  "|---|---|---|---|---|---|"]
        for r in rows:
            v = f"**{r['verdict']}**" if r["discrepancy"] else r["verdict"]
            st = r["statement"].replace("|", "\\|")
            lines.append(f"| `{r['id']}` | {st} | {v} | {r['key'].replace('|', '/')} | {r['figure']} | "
                         f"{'pass' if r['passed'] else 'FAIL'} |")
        lines.append("")
    lines += extra_sections(report)
    lines += [f"Evidence overall: **{'PASS' if report['passed'] else 'FAIL'}**", "",
              "Versions: " + ", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items()), "",
              "## Levels", "", "| claim | " + " | ".join(LEVELS) + " |", "|---|" + "---|" * len(LEVELS)]
    for c in report["claims"]:
        cells = []
        for lv in LEVELS:
            e = c["levels"].get(lv)
            cells.append("—" if e is None else ("✅ " if e["passed"] else "❌ ") + e.get("verdict", ""))
        lines.append(f"| `{c['id']}` | " + " | ".join(cells) + " |")
    paper = None
    for c in report["claims"]:
        prefix = c["id"].split(".")[0]
        if prefix != paper:
            paper = prefix
            lines += ["", f"## {ps[prefix].title if prefix in ps else prefix}"]
        lines += ["", f"### `{c['id']}`: {c['verdict']} (evidence {'PASS' if c['passed'] else 'FAIL'})", "",
                  c["statement"], "", f"$$ {c['latex']} $$", ""]
        test = c["levels"].get("E", {}).get("details", {}).get("statement_test")
        if isinstance(test, dict):
            lines += ["Tested statement: " + "; ".join(f"**{k}**: {_g(v) if isinstance(v, float) else v}"
                                                       for k, v in test.items()), ""]
        for lv, e in c["levels"].items():
            status = "pass" if e["passed"] else "FAIL"
            secs = e.get("timing", {}).get("seconds", 0.0)
            lines.append(f"- **{lv}** ({LEVEL_NAMES[lv]}; {e.get('verdict', '')}; evidence {status}; "
                         f"{secs:.2f} s): {e['summary']}")
            if e["metric"]:
                lines.append("  - metrics: " + ", ".join(f"`{k}` = {v}" for k, v in e["metric"].items()))
            if e.get("error"):
                lines.append(f"  - error: `{e['error']}`")
            for f in e["figures"]:
                lines.append(f"  - ![{Path(f).name}]({f})")
    return "\n".join(lines) + "\n"


def table(report: dict[str, Any], console: Console | None = None) -> None:
    """The referee summary on the terminal: one row per claim, discrepancies first within each paper."""
    console = console or Console()
    console.print(run_line(report["meta"]))
    t = Table(title="shallow-proofs: referee summary", show_lines=False)
    for col in ("claim", "verdict", "key number", "evidence"):
        t.add_column(col, style="bold" if col == "claim" else None)
    for rows in referee_rows(report).values():
        for r in rows:
            v = f"[red]{r['verdict']}[/]" if r["discrepancy"] else f"[green]{r['verdict']}[/]"
            t.add_row(r["id"], v, r["key"], "pass" if r["passed"] else "[red]FAIL[/]")
    console.print(t)
    n = len(report["claims"])
    bad = [c["id"] for c in report["claims"] if not c["passed"]]
    disc = [r["id"] for rows in referee_rows(report).values() for r in rows if r["discrepancy"]]
    console.print(f"evidence: {n - len(bad)}/{n} claims pass" + (f"; failing: {', '.join(bad)}" if bad else "")
                  + (f". Verdicts that differ from the paper: {', '.join(disc)}" if disc else ""))
    if report["meta"].get("quick"):
        console.print("[yellow]quick smoke run: its verdicts are not evidence[/]")
