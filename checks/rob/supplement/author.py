r"""The author's checks, run as a peer: ``python -m checks.rob.supplement.author --repo PATH [--only NAME ...]``.

The author's repository (yspennstate/law-of-robustness-two-layer) holds ten numerical scripts under
``numerics/``. This module runs each of them unchanged, as a separate process (``nice -n 10``), from a
scratch copy outside the work tree, and records what each one printed, with the repository's commit hash and
the run date, in :data:`DATA` (``checks/rob/author_checks.toml``, committed: CI has no network, so the report
reads the recorded outputs and never re-runs the scripts). Nothing of the author's code is copied into the
suite; the scripts are only executed, and their printed lines are parsed here into the one figure each
reports.

``PATH`` is a git directory (bare, as the ``fetch`` tool gives it, or a work tree's ``.git``) or a checkout.

The suite's counterpart of each script (a claim ID and its certified figure) is kept beside the record in the
same data file, under ``[suite.<script>]``; :mod:`checks.rob.supplement.author_suite` computes those figures with the
suite's certified routines (``python -m checks.rob.supplement.author_suite``) and :func:`report_section` renders one row
per script for ``verify.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

DATA = Path(__file__).with_name("author_checks.toml")
REPO = "yspennstate/law-of-robustness-two-layer"
SCRIPTS = ("check_rigidity", "check_sphere_cap", "check_d2_rigidity_fails", "check_upper_bound", "check_law_fast",
           "check_law_empirical", "validate_at_scale", "check_static_rigidity", "check_projection_floor",
           "check_sector_throttle")


# ---------------------------------------------------------------------------------------------------------------
# parsing: the one figure each script reports, read from its printed lines (tables of whitespace-separated fields)


def _rows(text: str, ncols: int) -> list[list[str]]:
    """Lines of ``text`` with exactly ``ncols`` whitespace-separated fields whose last field is a number or a bool."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) == ncols and re.fullmatch(r"[-+0-9.eE]+|True|False|nan|inf", f[-1]):
            out.append(f)
    return out


def _num(s: str) -> float:
    return float(s)


def parse(name: str, out: str) -> dict:
    """The figure a script reports, from its stdout (keys name the quantity; ``reports`` is one line of prose)."""
    p: dict = {}
    if name in ("check_rigidity",):
        rows = [r for r in _rows(out, 7) if r[0] != "case"]
        ratios = [_num(r[5]) for r in rows]
        p = {"trials": len(rows), "max_ratio": max(ratios), "all_pass": "ALL PASS" in out}
        p["reports"] = (f"{len(rows)} nets (generic, cancelling, near-parallel; d ≤ 10): max |α|/(2 Lip_hat) = "
                        f"{max(ratios):.4f} with sampled Lip_hat; {'ALL PASS' if p['all_pass'] else 'FAILURES'}")
    elif name == "check_sphere_cap":
        rows = _rows(out, 5)
        p = {"t": [_num(r[0]) for r in rows], "ratio": [_num(r[4]) for r in rows]}
        p["reports"] = ("single cap α ReLU(u·x − t), d = 8, α√(1−t²) = 1: sampled Lip / α√(1−t²) = "
                        + ", ".join(f"{r:.3f} (t={t:g})" for t, r in zip(p["t"], p["ratio"], strict=True)))
    elif name == "check_d2_rigidity_fails":
        m = re.search(r"Lip\(f\) on S\^1 ~ ([0-9.]+);\s+kappa = ([0-9.]+);\s+ratio kappa/\(2 Lip\) = ([0-9.]+)", out)
        p = {"lip": _num(m[1]), "kappa": _num(m[2]), "ratio": _num(m[3])}
        p["reports"] = (f"even 4-cycle on S¹, κ = {m[2]}: grid Lip ≈ {m[1]}, κ/(2 Lip) = {m[3]} (> 1: rigidity fails "
                        "at d = 2)")
    elif name == "check_upper_bound":
        rows = [r for r in _rows(out, 9) if r[0] != "n"]
        p = {"n": [int(r[0]) for r in rows], "lip_hat": [_num(r[6]) for r in rows], "pred": _num(rows[0][7]),
             "interp": [r[3] for r in rows], "disjoint": [r[5] for r in rows]}
        p["reports"] = (f"width-2n interpolant, s = 1/4, n ∈ {p['n']}: sampled Lip_hat ∈ [{min(p['lip_hat']):.3f}, "
                        f"{max(p['lip_hat']):.3f}] vs √7 = {p['pred']:.3f}; interpolates {p['interp']}, caps disjoint "
                        f"{p['disjoint']}")
    elif name in ("check_law_fast", "check_law_empirical"):
        nc = 6 if name == "check_law_fast" else 7
        rows = [r for r in _rows(out, nc) if r[0] != "m"]
        p = {"m": [int(r[0]) for r in rows], "mse": [_num(r[1]) for r in rows], "lip_hat": [_num(r[-4]) for r in rows],
             "floor": [_num(r[-3]) for r in rows], "ratio": [_num(r[-2]) for r in rows]}
        p["reports"] = ("trained nets, sampled Lip_hat / √(n/m) = " + ", ".join(
            f"{r:.3f} (m={m}, MSE {e:.3f})" for m, r, e in zip(p["m"], p["ratio"], p["mse"], strict=True)))
    elif name == "validate_at_scale":
        rows = [r for r in _rows(out, 7) if r[0] != "case"]
        ratios = [_num(r[5]) for r in rows]
        rowsb = [r for r in _rows(out, 6) if r[0].isdigit()]
        p = {"trials_A": len(rows), "max_ratio_A": max(ratios), "n_B": [int(r[0]) for r in rowsb],
             "interp_err_B": [_num(r[3]) for r in rowsb], "disjoint_B": [r[4] for r in rowsb],
             "summary": "BOTH PASS" in out}
        p["reports"] = (f"(A) {len(rows)} nets up to d = 40, m = 80: max |α|/(2 Lip_hat) = {max(ratios):.4f}; "
                        "(B) width-2n "
                        f"at n ∈ {p['n_B']}: interp. error ≤ {max(p['interp_err_B']):.1e}, caps disjoint "
                        f"{p['disjoint_B']}, Lip = √7 (analytic, not measured)")
    elif name == "check_static_rigidity":
        m1 = re.search(r"max \|B\(s\)\| sqrt\(1-s\^2\) / Lip_S : ([0-9.]+)", out)
        m2 = re.search(r"max \|\|v_perp\|\| / Lip_S\s+: ([0-9.]+)", out)
        m3 = re.search(r"trials: (\d+)", out)
        p = {"trials": int(m3[1]), "max_profile_ratio": _num(m1[1]), "max_vperp_ratio": _num(m2[1]),
             "pass": "PASS" in out}
        p["reports"] = (f"{m3[1]} random single-pole nets, Lip on a 400-point grid per interval: max |B(s)|√(1−s²)/Lip "
                        f"= {m1[1]}, max ‖v⊥‖/Lip = {m2[1]}")
    elif name == "check_projection_floor":
        rows = [r for r in _rows(out, 6) if r[0] != "n"]
        p = {"n": [int(r[0]) for r in rows], "d": [int(r[1]) for r in rows], "gopt_n": [_num(r[2]) for r in rows]}
        p["reports"] = ("soft-min ascent over rank-2 P, best min-gap × n = " + ", ".join(
            f"{g:.2f} (n={n}, d={d})" for n, d, g in zip(p["n"], p["d"], p["gopt_n"], strict=True)))
    elif name == "check_sector_throttle":
        md = re.search(r"co-depth ([0-9.]+) = ([0-9.]+) > nu = ([0-9.]+).*: (PASS|FAIL)", out)
        ms = re.search(r"/ K = ([0-9.]+)\s+>= 0.5: (PASS|FAIL)", out)
        mm = re.search(r"across d = [^:]*: \[([0-9, ]+)\]", out)
        p = {"deep_min_coherence": _num(md[2]), "deep_nu": _num(md[3]), "shallow_min_ratio": _num(ms[1]),
             "mid_max_K": [int(x) for x in mm[1].split(",")], "all_pass": "ALL PASS" in out}
        p["reports"] = (f"(D) least coherence of co-depth pole pairs {md[2]} > ν = {md[3]}; (S) min over signs "
                        f"‖Σε P u‖²/K = {ms[1]} ≥ 0.5; (M) largest legal aligned K over d = 2e3..2e5: "
                        f"{p['mid_max_K']}. "
                        "It does not evaluate the Conjecture 9.1 multiplier (no εn/160 figure is printed)")
    return p


# ---------------------------------------------------------------------------------------------------------------
# running


def _checkout(repo: Path, dest: Path) -> tuple[str, str]:
    """Copy the scripts of ``repo`` (a git dir or a checkout) to ``dest``; (commit hash, commit date)."""
    repo = repo.resolve()
    git_dir = repo / ".git" if (repo / ".git").exists() else repo
    env = {**os.environ, "GIT_DIR": str(git_dir)}
    head = subprocess.run(["git", "rev-parse", "HEAD"], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()
    date = subprocess.run(["git", "show", "-s", "--format=%cI", "HEAD"], env=env, capture_output=True, text=True,
                          check=True).stdout.strip()
    arch = subprocess.run(["git", "archive", "HEAD", "numerics"], env=env, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=arch, check=True)
    return head, date


def run_script(path: Path, timeout: float) -> dict:
    t0, c0 = time.perf_counter(), os.times()
    try:
        r = subprocess.run(["nice", "-n", "10", sys.executable, path.name], cwd=path.parent, capture_output=True,
                           text=True, timeout=timeout)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as exc:
        rc, out, err = -1, exc.stdout or "", f"timed out after {timeout} s"
    c1 = os.times()
    return {"returncode": rc, "stdout": out if isinstance(out, str) else out.decode(),
            "stderr_tail": (err if isinstance(err, str) else err.decode())[-400:],
            "wall_s": round(time.perf_counter() - t0, 1),
            "cpu_s": round((c1.children_user - c0.children_user) + (c1.children_system - c0.children_system), 1)}


def _toml_str(s: str) -> str:
    if "\n" in s and "'''" not in s:
        return "'''\n" + s + "'''"
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _toml_val(v) -> str:
    if hasattr(v, "item") and not isinstance(v, list | tuple | dict | str):  # numpy scalars
        v = v.item()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_val(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def dumps(data: dict) -> str:
    """A small TOML writer for this file's shape: top-level scalars, then tables of scalars/lists (one level of
    nesting: ``[a.b]``)."""
    lines = [f"{k} = {_toml_val(v)}" for k, v in data.items() if not isinstance(v, dict)]

    def table(prefix, d):
        flat = {k: v for k, v in d.items() if not isinstance(v, dict)}
        if flat:
            lines.append("")
            lines.append(f"[{prefix}]")
            lines.extend(f"{k} = {_toml_val(v)}" for k, v in flat.items())
        for k, v in d.items():
            if isinstance(v, dict):
                table(f"{prefix}.{k}", v)

    for k, v in data.items():
        if isinstance(v, dict):
            table(k, v)
    return "\n".join(lines) + "\n"


def load() -> dict:
    return tomllib.loads(DATA.read_text()) if DATA.exists() else {}


def save(data: dict) -> None:
    DATA.write_text(dumps(data))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True, type=Path, help="the author's repository (git dir or checkout)")
    ap.add_argument("--only", nargs="*", default=None, help="run only these scripts (names without .py)")
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args(argv)
    names = args.only or list(SCRIPTS)
    bad = [n for n in names if n not in SCRIPTS]
    if bad:
        ap.error(f"unknown script(s) {bad}; known: {', '.join(SCRIPTS)}")
    data = load()
    with tempfile.TemporaryDirectory(prefix="author-") as tmp:
        head, date = _checkout(args.repo, Path(tmp))
        data.update({"repository": REPO, "commit": head, "commit_date": date,
                     "note": "outputs of the author's scripts, run unchanged by "
                             "`python -m checks.rob.supplement.author`; "
                             "parsed figures under [scripts.<name>.parsed]; the suite's counterparts under [suite]"})
        scripts = data.setdefault("scripts", {})
        for n in names:
            path = Path(tmp) / "numerics" / f"{n}.py"
            print(f"[author] running {n} …", file=sys.stderr, flush=True)
            rec = run_script(path, args.timeout)
            rec["run_date"] = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            rec["commit"] = head
            if rec["returncode"] == 0:
                try:
                    rec["parsed"] = parse(n, rec["stdout"])
                except (TypeError, ValueError, IndexError) as exc:
                    rec["parse_error"] = f"{type(exc).__name__}: {exc}"
            scripts[n] = rec
            print(f"[author] {n}: rc={rec['returncode']} wall {rec['wall_s']} s, cpu {rec['cpu_s']} s", file=sys.stderr)
            save(data)
    shutil.rmtree(Path(tmp), ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


# ---------------------------------------------------------------------------------------------------------------
# the report's section (read from the committed data file: no network, no re-run)

_SHORTFALL = {
    "check_rigidity": ("max_shortfall_d3_ball", "max_shortfall_d3_sphere"),
    "validate_at_scale": ("max_shortfall_d3_ball",),
    "check_sphere_cap": ("shortfall_t_1m1e-4",),
}
_SAMPLES = {"check_rigidity": "Lip sampled (points in B_2 + both sides of each kink)",
            "check_sphere_cap": "Lip sampled (rim difference quotients)",
            "check_d2_rigidity_fails": "Lip on a 4·10⁶-point grid of S¹",
            "check_upper_bound": "Lip sampled in the ramp bands",
            "check_law_fast": "Lip sampled (6000 uniform points + data)",
            "check_law_empirical": "Lip sampled (20000 uniform points + data)",
            "validate_at_scale": "Lip sampled (1.2·10⁵ points + kink probes); (B) Lip analytic",
            "check_static_rigidity": "Lip on a 400-point grid per interval",
            "check_projection_floor": "soft-min ascent on ≤ 20000 sampled pairs",
            "check_sector_throttle": "random frames, greedy signs"}


def report_rows(report: dict | None = None, data: dict | None = None) -> list[dict]:
    """One row per script: what it reports, the suite's counterpart and certified figure, the sampling shortfall."""
    data = load() if data is None else data
    claims = {c["id"]: c for c in (report or {}).get("claims", [])}
    rows = []
    for name in SCRIPTS:
        rec = data.get("scripts", {}).get(name, {})
        suite = data.get("suite", {}).get(name, {})
        rep = rec.get("parsed", {}).get("reports") or (
            "not run" if not rec else f"exit code {rec.get('returncode')}: {rec.get('stderr_tail', '')[-120:]}")
        figure = suite.get("figure", "—")
        for cid in (suite.get("claim", "") or "").replace(",", " ").split():
            c = claims.get(cid.strip())
            if c is not None and "E" in c.get("levels", {}):
                figure += f" — {cid}: {c['levels']['E'].get('summary', '')[:240]}"
        short = [f"{k.replace('max_shortfall_', '').replace('shortfall_', '')}: {100 * suite[k]:.2f}%"
                 for k in _SHORTFALL.get(name, ()) if isinstance(suite.get(k), int | float)]
        rows.append({"script": name, "reports": rep, "claim": suite.get("claim", "—"), "figure": figure,
                     "samples": _SAMPLES.get(name, ""), "shortfall": "; ".join(short) or "—",
                     "commit": rec.get("commit", data.get("commit", "")), "run_date": rec.get("run_date", ""),
                     "cpu_s": rec.get("cpu_s")})
    return rows


def report_section(report: dict | None = None) -> list[str]:
    """Markdown lines for ``verify.md`` (an extension point of :mod:`checks.runners.report`)."""
    data = load()
    if not data or (report is not None and not any(c["id"].startswith("rob.") for c in report.get("claims", []))):
        return []
    lines = ["## The author's checks, side by side", "",
             f"The scripts of `{data.get('repository', REPO)}` at commit `{data.get('commit', '?')[:12]}` "
             f"({data.get('commit_date', '?')}), run unchanged by "
             "`python -m checks.rob.supplement.author --repo PATH`; their "
             "output is recorded in `checks/rob/author_checks.toml` (this table reads that file; nothing is re-run). "
             "*Sampling shortfall*: how far sampling of the script's kind falls below the exact constant on nets of "
             "the same kind (`python -m checks.rob.supplement.author_suite`). " + data.get("suite_note", ""), "",
             "| script | what it reports (run date) | how it gets its constant | suite's counterpart | "
             "suite's certified figure | sampling shortfall |", "|---|---|---|---|---|---|"]
    for r in report_rows(report, data):
        cells = [f"`{r['script']}`", f"{r['reports']} ({r['run_date'][:10] or 'not run'})", r["samples"],
                 f"`{r['claim']}`", r["figure"], r["shortfall"]]
        lines.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    lines.append("")
    return lines
