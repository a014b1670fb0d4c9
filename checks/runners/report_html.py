"""``verify.html``: the report as one self-contained page a reviewer opens in a browser (no network access).

The referee summary comes first (one row per claim, sortable by any column, discrepancies marked), then one
section per claim: its statement from SPEC, its levels with their verdicts, summaries and numbers, its figures
inlined as PNG data, and any counterexample reproducer inlined as JSON. Claim IDs link to their module (relative to
the report directory) and to their SPEC section. A small script sorts the tables and, on load, records in
``<body data-figures-rendered>`` how many figures decoded at a non-zero size (the browser test reads it).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from checks.evidence.outcome import LEVEL_NAMES, LEVELS

SCRIPT = """
function sortTable(th) {
  const table = th.closest('table'), idx = Array.from(th.parentNode.children).indexOf(th);
  const body = table.tBodies[0], rows = Array.from(body.rows);
  const asc = th.dataset.order !== 'asc'; th.dataset.order = asc ? 'asc' : 'desc';
  rows.sort((a, b) => {
    const x = a.cells[idx].dataset.key || a.cells[idx].textContent;
    const y = b.cells[idx].dataset.key || b.cells[idx].textContent;
    return (asc ? 1 : -1) * x.localeCompare(y, undefined, {numeric: true});
  });
  rows.forEach(r => body.appendChild(r));
}
window.addEventListener('load', () => {
  const imgs = Array.from(document.querySelectorAll('img.figure'));
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().width > 0).length;
  document.body.dataset.figures = String(imgs.length);
  document.body.dataset.figuresRendered = String(ok);
});
"""

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;width:100%}th,td{border:1px solid #ccc;padding:4px 6px;vertical-align:top;
font-size:13px}th{background:#f3f3f3;cursor:pointer}tr.discrepancy td.verdict{font-weight:bold;color:#a40}
td.fail{color:#b00;font-weight:bold}img.figure{max-width:100%;border:1px solid #ddd;margin:4px 0}
pre{background:#f7f7f7;padding:6px;overflow-x:auto;font-size:12px}code{font-size:12px}.meta{color:#555}
"""

SPEC_PATH = "../../shared/SPEC.md"


def _e(x: Any) -> str:
    return html.escape(str(x))


def _module_link(c: dict[str, Any]) -> str:
    mod = c.get("module") or ""
    return f"../{mod.replace('.', '/')}.py" if mod else ""


def _figure_tag(report_dir: Path, rel: str) -> str:
    p = report_dir / rel
    if not p.is_file():
        return f"<p class='meta'>figure {_e(rel)}: not found next to the report</p>"
    data = base64.b64encode(p.read_bytes()).decode()
    return f"<img class='figure' alt='{_e(Path(rel).name)}' src='data:image/png;base64,{data}'>"


def _reproducers(report_dir: Path, e: dict[str, Any]) -> list[str]:
    out = []
    for key in ("reproducers", "counterexamples"):
        for rel in e.get("details", {}).get(key, []) or []:
            p = report_dir / rel if not Path(rel).is_absolute() else Path(rel)
            if isinstance(rel, str) and p.is_file():
                out.append(f"<p>reproducer <code>{_e(rel)}</code> (replay: <code>python -m checks replay "
                           f"{_e(rel)}</code>)</p><pre>{_e(p.read_text()[:20000])}</pre>")
    return out


def render(report: dict[str, Any], report_dir: Path) -> str:
    from checks.evidence.registry import papers, spec
    from checks.runners.report import key_number, referee_rows, run_line

    report_dir = Path(report_dir)
    ps, sp = papers(), spec()
    meta = report["meta"]
    modules = {}
    try:
        from checks.evidence.registry import load_all

        modules = {cid: c.module for cid, c in load_all().items()}
    except Exception:  # a report from another tree still renders, without module links
        modules = {}
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<title>shallow-proofs verification report</title>", f"<style>{STYLE}</style>",
             f"<script>{SCRIPT}</script></head><body>",
             "<h1>shallow-proofs verification report</h1>", f"<p class='meta'>{_e(run_line(meta))}</p>",
             f"<p>Evidence overall: <b>{'PASS' if report['passed'] else 'FAIL'}</b>. Versions: "
             + _e(", ".join(f"{k} {v}" for k, v in meta.get("versions", {}).items())) + "</p>",
             "<h2 id='summary'>Referee summary</h2>",
             "<p>One row per claim: the paper's statement, SPEC §0's verdict, the key number with its interval. Click "
             "a column to sort. Discrepancies with the paper are in bold.</p>",
             "<table id='referee'><thead><tr>" + "".join(f"<th onclick='sortTable(this)'>{h}</th>" for h in
                                                         ("claim", "paper", "statement", "verdict", "key number",
                                                          "evidence")) + "</tr></thead><tbody>"]
    for paper, rows in referee_rows(report).items():
        title = ps[paper].title if paper in ps else paper
        for r in rows:
            cls = " class='discrepancy'" if r["discrepancy"] else ""
            parts.append(f"<tr{cls} data-id='{_e(r['id'])}'><td><a href='#{_e(r['id'])}'>{_e(r['id'])}</a></td>"
                         f"<td>{_e(title)}</td><td>{_e(r['statement'])}</td>"
                         f"<td class='verdict' data-verdict='{_e(r['verdict'])}'>{_e(r['verdict'])}</td>"
                         f"<td>{_e(r['key'])}</td>"
                         f"<td class='{'pass' if r['passed'] else 'fail'}'>{'pass' if r['passed'] else 'FAIL'}</td>"
                         "</tr>")
    parts.append("</tbody></table>")
    for c in report["claims"]:
        cid = c["id"]
        entry = sp.claims.get(cid)
        section = getattr(entry, "spec_section", "") if entry is not None else ""
        c = {**c, "module": modules.get(cid, "")}
        link = _module_link(c)
        parts.append(f"<h2 id='{_e(cid)}'>{_e(cid)}: {_e(c['verdict'])} "
                     f"(evidence {'PASS' if c['passed'] else 'FAIL'})</h2>")
        parts.append("<p class='meta'>"
                     + (f"module <a href='{_e(link)}'>{_e(c['module'])}</a> · " if link else "")
                     + f"<a href='{SPEC_PATH}'>SPEC §{_e(section)}</a> · key number: {_e(key_number(c['levels']))}"
                     + "</p>")
        parts.append(f"<p>{_e(c['statement'])}</p>")
        if entry is not None and getattr(entry, "spec", ""):
            parts.append(f"<details><summary>SPEC's text</summary><p>{_e(entry.spec)}</p></details>")
        test = c["levels"].get("E", {}).get("details", {}).get("statement_test")
        if isinstance(test, dict):
            parts.append("<p><b>Tested statement</b>: " + _e("; ".join(f"{k}: {v}" for k, v in test.items()))
                         + "</p>")
        parts.append("<table><thead><tr><th>level</th><th>verdict</th><th>evidence</th><th>seconds</th>"
                     "<th>summary</th><th>numbers</th></tr></thead><tbody>")
        for lv in LEVELS:
            e = c["levels"].get(lv)
            if e is None:
                continue
            nums = ", ".join(f"{k} = {v}" for k, v in e["metric"].items())
            secs = e.get("timing", {}).get("seconds", e.get("seconds", 0.0)) or 0.0
            parts.append(f"<tr><td>{lv} ({_e(LEVEL_NAMES[lv])})</td><td>{_e(e.get('verdict', ''))}</td>"
                         f"<td class='{'pass' if e['passed'] else 'fail'}'>{'pass' if e['passed'] else 'FAIL'}</td>"
                         f"<td>{float(secs):.2f}</td><td>{_e(e['summary'])}"
                         + (f"<br><b>error</b>: {_e(e['error'])}" if e.get("error") else "")
                         + f"</td><td><code>{_e(nums[:3000])}</code></td></tr>")
        parts.append("</tbody></table>")
        for e in c["levels"].values():
            for f in e.get("figures", []):
                parts.append(_figure_tag(report_dir, f))
            parts += _reproducers(report_dir, e)
    parts.append(f"<script type='application/json' id='verdicts'>{_e(json.dumps(report.get('verdicts', {})))}"
                 "</script></body></html>")
    return "\n".join(parts) + "\n"


def write_html(report: dict[str, Any], report_dir: Path, stem: str = "verify") -> Path:
    p = Path(report_dir) / f"{stem}.html"
    p.write_text(render(report, report_dir))
    return p
