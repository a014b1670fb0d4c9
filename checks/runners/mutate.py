"""Mutation testing: plant each mutation of ``checks/runners/mutants.toml`` alone in a copy of the repo, run the claims
and
the tests that should catch it, and report who did (``nox -s mutate``; ``python -m checks.runners.mutate``).

A mutant is one exact snippet of one file (numerics, or the generated ``numerics/_derived``) and its replacement,
with the claims and the test files that should catch it and a one-line description (the format is in the
header of ``checks/runners/mutants.toml``). For each mutant the runner

1. copies the repository's tracked (and untracked, not ignored) files into a temporary directory, once per
   campaign, and that snapshot once per mutant;
2. replaces the snippet, which must occur exactly once (a missing or repeated snippet is an error: the list has
   gone stale, not a survivor);
3. runs ``python -m checks verify --claims … --levels S,P,A,F --report-dir TMP --no-progress`` with
   ``PYTHONPATH`` set to the copy — full budgets (not ``--quick``), every level of the claims but the E
   experiments, which are evidence with stated pass criteria, not checks of an evaluator;
4. separately runs ``python -m pytest -x`` on the mutant's test files in the copy.

Verify catches a mutant when it exits 1 (a failing or crashing level); the tests when pytest exits 1 or 2 (a
failure, or an import that no longer collects). Before the mutants, the unmutated snapshot runs every claim and
test file of the campaign once (the baseline): a campaign whose baseline fails reports nothing. The derive drift
gate (``python -m proofs.derive --check``, part of ``nox -s tests``) is left out on purpose: it flags any edit of
a generated file by a diff, so counting it would say nothing about the checks.

A mutant that neither catches is a survivor. The list gives each expected survivor its reason
(``survives = "equivalent: …"`` or ``"known limit: …"``); a survivor without one makes the run exit 1. Catch
rates count the non-equivalent mutants. Results go to ``reports/mutate.json`` and ``reports/mutate.md``; a run
with ``--only`` merges its mutants into the reports already there (results of a changed mutant are dropped).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MUTANTS = Path(__file__).resolve().parent / "mutants.toml"
PAPERS = ("ws", "flat", "rob", "suite")
LEVELS = "S,P,A,F"
_FIELDS = {"id", "paper", "kind", "file", "original", "replacement", "claims", "tests", "description", "survives",
           "control"}
_REQUIRED = _FIELDS - {"survives", "control"}


class MutantError(ValueError):
    """A mutant that cannot be applied as written (missing or repeated snippet, bad field): the list is stale."""


@dataclass(frozen=True)
class Mutant:
    id: str
    paper: str
    kind: str
    file: str
    original: str
    replacement: str
    claims: tuple[str, ...]
    tests: tuple[str, ...]
    description: str
    survives: str | None = None  # the reason an expected survivor survives: "equivalent: …" / "known limit: …"
    control: bool = False  # the positive control of its first claim in suite.controls (SPEC §5)

    @property
    def equivalent(self) -> bool:
        return bool(self.survives) and self.survives.startswith("equivalent")

    @property
    def generated(self) -> bool:
        return self.file.startswith("numerics/_derived/")

    def digest(self) -> str:
        """Identifies the mutation itself: results of an edited mutant are not reused."""
        return hashlib.sha1("\0".join((self.file, self.original, self.replacement)).encode()).hexdigest()[:12]


def load_mutants(path: Path | str = MUTANTS) -> list[Mutant]:
    """The mutants of ``path``, validated field by field (MutantError on anything malformed)."""
    data = tomllib.loads(Path(path).read_text())
    rows = data.get("mutant")
    if not isinstance(rows, list) or not rows:
        raise MutantError(f"{path}: no [[mutant]] entries")
    out, seen = [], set()
    for i, row in enumerate(rows):
        where = f"{path}: mutant #{i + 1} ({row.get('id', '?')})"
        missing, extra = _REQUIRED - set(row), set(row) - _FIELDS
        if missing or extra:
            raise MutantError(f"{where}: missing {sorted(missing)}, unknown {sorted(extra)}")
        for key in _REQUIRED - {"claims", "tests"}:
            if not isinstance(row[key], str) or not row[key]:
                raise MutantError(f"{where}: {key} must be a nonempty string")
        for key in ("claims", "tests"):   # claims may be empty (an E experiment's own code: tests only)
            if not (isinstance(row[key], list) and (row[key] or key == "claims")
                    and all(isinstance(x, str) and x for x in row[key])):
                raise MutantError(f"{where}: {key} must be a {'' if key == 'claims' else 'nonempty '}list of strings")
        if row["id"] in seen:
            raise MutantError(f"{where}: duplicate id")
        seen.add(row["id"])
        if row["paper"] not in PAPERS:
            raise MutantError(f"{where}: paper must be one of {PAPERS}")
        if row["original"] == row["replacement"]:
            raise MutantError(f"{where}: the replacement equals the original")
        f = Path(row["file"])
        if f.is_absolute() or ".." in f.parts:
            raise MutantError(f"{where}: file must be a path inside the repository")
        if not isinstance(row.get("control", False), bool):
            raise MutantError(f"{where}: control must be true or false")
        sv = row.get("survives")
        if sv is not None and not (isinstance(sv, str) and sv.split(":")[0] in ("equivalent", "known limit")):
            raise MutantError(f"{where}: survives must start with 'equivalent:' or 'known limit:'")
        out.append(Mutant(row["id"], row["paper"], row["kind"], row["file"], row["original"], row["replacement"],
                          tuple(row["claims"]), tuple(row["tests"]), row["description"], sv,
                          row.get("control", False)))
    return out


def apply_mutant(root: Path, m: Mutant) -> None:
    """Replace the mutant's snippet in the copy at ``root``; it must occur exactly once."""
    path = Path(root) / m.file
    if not path.is_file():
        raise MutantError(f"{m.id}: {m.file} does not exist")
    text = path.read_text()
    n = text.count(m.original)
    if n != 1:
        raise MutantError(f"{m.id}: the original snippet occurs {n} times in {m.file} (it must occur exactly "
                          "once: the list is stale, or the snippet needs more context)")
    path.write_text(text.replace(m.original, m.replacement, 1))


def check_mutants(mutants: Iterable[Mutant], root: Path = ROOT) -> None:
    """Every mutant applies to the tree at ``root`` (file present, snippet unique), names implemented claims with
    a non-E level and existing test files (MutantError otherwise). Nothing is written."""
    from checks.evidence.spec import load

    sp = load()
    for m in mutants:
        path = root / m.file
        if not path.is_file():
            raise MutantError(f"{m.id}: {m.file} does not exist")
        n = path.read_text().count(m.original)
        if n != 1:
            raise MutantError(f"{m.id}: the original snippet occurs {n} times in {m.file}")
        for c in m.claims:
            entry = sp.claims.get(c)
            if entry is None or entry.status != "implemented":
                raise MutantError(f"{m.id}: {c!r} is not an implemented claim of the spec")
            if not set(entry.levels) & set(LEVELS.split(",")):
                raise MutantError(f"{m.id}: {c} has only E levels, which the campaign does not run")
        for t in m.tests:
            if not (root / t.split("::")[0]).is_file():
                raise MutantError(f"{m.id}: test file {t} does not exist")


# ------------------------------------------------------------------------------------------ the copies
def tracked_files(root: Path = ROOT) -> list[str]:
    """Files git knows or would add (tracked, and untracked but not ignored), that exist; reports/ left out."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, check=True).stdout.decode()
    return sorted(f for f in set(out.split("\0")) if f and not f.startswith("reports/") and (root / f).is_file())


def snapshot(dest: Path, root: Path = ROOT) -> Path:
    for f in tracked_files(root):
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / f, dest / f)
    return dest


def _env(copy: Path) -> dict:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(copy), PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg", OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return env


def _run(cmd, cwd: Path, timeout: float) -> tuple[int | None, str, float]:
    """(exit code or None on timeout, the output's tail, seconds); a timed-out run's process group is killed."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, env=_env(cwd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the group this run started, and nothing else
        out, _ = p.communicate()
        rc = None
    return rc, out.decode(errors="replace")[-4000:], time.perf_counter() - t0


@dataclass
class Run:
    caught: bool | None  # None: not run, or an error (timeout, bad invocation)
    rc: int | None
    seconds: float
    failing: list[str] = field(default_factory=list)  # claim/level pairs or test ids that failed
    note: str = ""


def run_verify(copy: Path, claims, timeout: float) -> Run:
    rep = copy / "_mutate_report"
    cmd = [sys.executable, "-m", "checks", "verify", "--claims", *claims, "--levels", LEVELS, "--report-dir",
           str(rep), "--no-progress"]
    rc, out, secs = _run(cmd, copy, timeout)
    failing = []
    try:
        data = json.loads((rep / "verify.json").read_text())
        for c in data["claims"]:
            failing += [f"{c['id']}/{lv}" + (" (error)" if ev.get("error") else "")
                        for lv, ev in c["levels"].items() if not ev["passed"]]
    except (OSError, ValueError, KeyError):
        pass
    if rc is None:
        return Run(None, rc, secs, failing, "timeout")
    if rc not in (0, 1):
        return Run(None, rc, secs, failing, f"verify exited {rc}: {out.strip().splitlines()[-1:]}")
    if rc == 1 and not failing:
        failing = ["(crashed before writing a report)"]
    return Run(rc == 1, rc, secs, failing)


def run_tests(copy: Path, tests, timeout: float, *, deselect=(), first_failure: bool = True) -> Run:
    cmd = [sys.executable, "-m", "pytest", "-q", *(["-x"] if first_failure else []), "-p", "no:cacheprovider",
           "--no-header", *tests, *(a for t in deselect for a in ("--deselect", t))]
    rc, out, secs = _run(cmd, copy, timeout)
    failing = [ln.split(" ", 1)[1].split(" - ")[0] for ln in out.splitlines()
               if ln.startswith(("FAILED ", "ERROR "))]
    if rc is None:
        return Run(None, rc, secs, failing, "timeout")
    if rc not in (0, 1, 2):
        return Run(None, rc, secs, failing, f"pytest exited {rc}: {out.strip().splitlines()[-1:]}")
    return Run(rc in (1, 2), rc, secs, failing)


def run_mutant(m: Mutant, snap: Path, work: Path, *, verify: bool, tests: bool, timeout: float,
               deselect=()) -> dict:
    copy = work / m.id
    shutil.copytree(snap, copy)
    try:
        apply_mutant(copy, m)
        # claims = [] is a mutant of an E experiment's own code: only its tests can judge it (verify's check levels
        # do not run E); it counts as not caught by verify
        v = run_verify(copy, m.claims, timeout) if verify and m.claims else Run(None, None, 0.0, note="not run")
        mine = [t for t in deselect if t.split("::")[0] in {x.split("::")[0] for x in m.tests}]
        t = run_tests(copy, m.tests, timeout, deselect=mine) if tests else Run(None, None, 0.0, note="not run")
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    return {**{k: v_ for k, v_ in asdict(m).items() if k not in ("original", "replacement")},
            "digest": m.digest(), "generated": m.generated, "verify": asdict(v), "tests": asdict(t)}


# -------------------------------------------------------------------------------------------- reporting
def _caught(r: dict, which: str) -> bool:
    return bool(r[which]["caught"])


def summarize(results: list[dict]) -> dict:
    """Catch rates over the non-equivalent mutants (verify alone, tests alone, either), and the survivors."""
    live = [r for r in results if not (r.get("survives") or "").startswith("equivalent")]
    n = len(live)
    rate = lambda k: sum(k(r) for r in live) / n if n else float("nan")  # noqa: E731
    surv_v = [r["id"] for r in results if not _caught(r, "verify")]
    surv = [r["id"] for r in results if not (_caught(r, "verify") or _caught(r, "tests"))]
    by_paper = {p: sum(1 for r in results if r["paper"] == p) for p in PAPERS}
    return {"mutants": len(results), "equivalent": len(results) - n, "by_paper": by_paper,
            "generated_files": sum(1 for r in results if r["generated"]),
            "verify": rate(lambda r: _caught(r, "verify")), "tests": rate(lambda r: _caught(r, "tests")),
            "verify_or_tests": rate(lambda r: _caught(r, "verify") or _caught(r, "tests")),
            "survivors_verify": surv_v, "survivors": surv,
            "unexplained": [i for i in surv if not next(r for r in results if r["id"] == i).get("survives")],
            "errors": [r["id"] for r in results if r["verify"]["note"] not in ("", "not run")
                       or r["tests"]["note"] not in ("", "not run")]}


def _mark(run: dict) -> str:
    if run["note"] == "not run":
        return "–"
    if run["caught"] is None:
        return f"error ({run['note']})"
    if not run["caught"]:
        return "**no**"
    what = ", ".join(run["failing"][:3]) + (" …" if len(run["failing"]) > 3 else "")
    return f"yes ({what})" if what else "yes"


def render_md(data: dict) -> str:
    s, meta = data["summary"], data["meta"]
    pct = lambda x: f"{100 * x:.1f}%" if x == x else "n/a"  # noqa: E731
    lines = [
        "# Mutation testing",
        "",
        f"Run {meta['date']} at {meta['commit']}, {meta['jobs']} job(s), {meta['seconds'] / 60:.1f} min; "
        f"`python -m checks.runners.mutate` (`nox -s mutate`), mutants from `checks/runners/mutants.toml`.",
        "",
        f"{s['mutants']} mutants (ws {s['by_paper']['ws']}, flat {s['by_paper']['flat']}, rob {s['by_paper']['rob']}; "
        f"{s['generated_files']} in the generated `numerics/_derived`), {s['equivalent']} equivalent. Caught, of the "
        f"{s['mutants'] - s['equivalent']} non-equivalent: **verify alone {pct(s['verify'])}**, tests alone "
        f"{pct(s['tests'])}, **verify + tests {pct(s['verify_or_tests'])}**.",
        "",
        "Verify runs the mutant's claims at every level but E with full budgets; the tests run with `pytest -x`. "
        "The baseline (the unmutated copy) " + ("was skipped (--no-baseline)." if data["baseline"].get("skipped")
                                                 else "passed." if data["baseline"].get("passed")
                                                 else "FAILED: the rates below mean nothing.")
        + ("" if not data["baseline"].get("deselected") else
           " Tests failing unmutated, deselected from every run: "
           + ", ".join(f"`{t}`" for t in data["baseline"]["deselected"]) + "."),
        "",
        "| mutant | paper | kind | file | caught by verify | caught by tests | survives because |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in data["mutants"]:
        lines.append(f"| `{r['id']}` | {r['paper']} | {r['kind']} | `{r['file']}` | {_mark(r['verify'])} | "
                     f"{_mark(r['tests'])} | {r.get('survives') or ''} |")
    lines += ["", "## What each mutant plants", ""]
    lines += [f"* `{r['id']}` — {r['description']}" for r in data["mutants"]]
    surv = [r for r in data["mutants"] if r["id"] in s["survivors_verify"]]
    lines += ["", "## Survivors", ""]
    if not surv:
        lines.append("None: verify caught every mutant.")
    for r in surv:
        by = "tests caught it" if r["tests"]["caught"] else "nothing caught it"
        lines.append(f"* `{r['id']}` (verify missed it; {by}): {r.get('survives') or 'NO REASON GIVEN'}")
    from checks.runners.one_sided import scan

    one = scan()
    lines += ["", "## One-sided check candidates (`python -m checks.runners.one_sided`)", "",
              "Level functions whose bound-like comparisons all point one way, with no attainment, equality or "
              "error shown (a heuristic list to read; listed here until it is empty):", ""]
    lines += [f"* `{r['module']}::{r['function']}` ({'/'.join(r['directions'])})" for r in one] or ["None."]
    return "\n".join(lines) + "\n"


def _merge(old: list[dict], new: list[dict], mutants: list[Mutant]) -> list[dict]:
    """Results in list order: this run's, else the previous run's when that mutant is unchanged."""
    cur = {m.id: m for m in mutants}
    by_id = {r["id"]: r for r in old if r["id"] in cur and r.get("digest") == cur[r["id"]].digest()}
    by_id.update({r["id"]: r for r in new})
    return [by_id[m.id] for m in mutants if m.id in by_id]


def _commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              check=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
        return head + ("+uncommitted" if dirty.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m checks.runners.mutate", description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="+", metavar="ID", help="run these mutants only (merged into the reports)")
    p.add_argument("--jobs", type=int, default=1, help="mutants run in parallel (default 1)")
    p.add_argument("--mutants", type=Path, default=MUTANTS, help="the list (default checks/runners/mutants.toml)")
    p.add_argument("--out", type=Path, default=ROOT / "reports", help="where mutate.{json,md} go")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per verify or pytest run")
    p.add_argument("--no-tests", action="store_true", help="verify only")
    p.add_argument("--no-verify", action="store_true", help="tests only")
    p.add_argument("--no-baseline", action="store_true", help="skip the unmutated run (not for a reported rate)")
    p.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = p.parse_args(argv)
    try:
        mutants = load_mutants(args.mutants)
        check_mutants(mutants)
        if args.jobs < 1:
            raise MutantError(f"--jobs must be >= 1, got {args.jobs}")
        todo = mutants
        if args.only:
            unknown = set(args.only) - {m.id for m in mutants}
            if unknown:
                raise MutantError(f"unknown mutant(s): {', '.join(sorted(unknown))}")
            todo = [m for m in mutants if m.id in args.only]
    except MutantError as exc:
        print(f"mutate: {exc}", file=sys.stderr)
        return 2
    if args.list:
        for m in mutants:
            print(f"{m.id:32s} {m.paper:5s} {m.kind:24s} {m.file}")
        return 0
    say = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mutate-") as tmp:
        work = Path(tmp)
        snap = snapshot(work / "_snapshot")
        baseline: dict = {"skipped": True, "passed": True}
        if not args.no_baseline:
            claims = sorted({c for m in todo for c in m.claims})
            tests = sorted({t for m in todo for t in m.tests})
            say(f"baseline: {len(claims)} claims, {len(tests)} test files on the unmutated copy")
            base = work / "_baseline"
            shutil.copytree(snap, base)
            with ThreadPoolExecutor(2 if args.jobs > 1 else 1) as ex:
                fv = ex.submit(run_verify, base, claims, args.timeout) if not args.no_verify else None
                ft = (ex.submit(run_tests, base, tests, args.timeout, first_failure=False)
                      if not args.no_tests else None)
                bv = fv.result() if fv else Run(False, 0, 0.0, note="not run")
                bt = ft.result() if ft else Run(False, 0, 0.0, note="not run")
            # a test that already fails unmutated cannot catch anything: it is deselected from every mutant's run
            # (and listed); a file that does not even collect fails the baseline
            deselect = [t for t in bt.failing if "::" in t]
            tests_ok = bt.note == "not run" or bt.rc == 0 or (bt.rc == 1 and len(deselect) == len(bt.failing))
            baseline = {"passed": (bv.note == "not run" or bv.rc == 0) and tests_ok, "verify": asdict(bv),
                        "tests": asdict(bt), "claims": claims, "test_files": tests, "deselected": deselect}
            say(f"baseline: verify {'failed' if bv.caught else 'passed'} ({bv.seconds:.0f} s), tests "
                f"{'failed' if bt.caught else 'passed'} ({bt.seconds:.0f} s)")
            if not baseline["passed"]:
                say(f"baseline failed: verify {bv.failing or bv.note}, tests {bt.failing or bt.note}")
        deselect = baseline.get("deselected", [])

        def one(m):
            r = run_mutant(m, snap, work, verify=not args.no_verify, tests=not args.no_tests,
                           timeout=args.timeout, deselect=deselect)
            say(f"{m.id}: verify {_mark(r['verify'])}; tests {_mark(r['tests'])} "
                f"({r['verify']['seconds'] + r['tests']['seconds']:.0f} s)")
            return r

        with ThreadPoolExecutor(args.jobs) as ex:
            results = list(ex.map(one, todo))
    old = []
    jpath = args.out / "mutate.json"
    if args.only and jpath.exists():
        try:
            old = json.loads(jpath.read_text()).get("mutants", [])
        except ValueError:
            old = []
    merged = _merge(old, results, mutants)
    data = {"meta": {"date": time.strftime("%Y-%m-%d %H:%M"), "commit": _commit(), "jobs": args.jobs,
                     "seconds": round(time.perf_counter() - t0, 1), "levels": LEVELS, "only": args.only,
                     "python": sys.version.split()[0]},
            "baseline": baseline, "summary": summarize(merged), "mutants": merged}
    args.out.mkdir(parents=True, exist_ok=True)
    jpath.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    (args.out / "mutate.md").write_text(render_md(data))
    s = data["summary"]
    say(f"{s['mutants']} mutants: verify {100 * s['verify']:.1f}%, verify + tests {100 * s['verify_or_tests']:.1f}%; "
        f"survivors {s['survivors'] or 'none'}; wrote {jpath} and mutate.md")
    if not baseline["passed"] or s["unexplained"] or s["errors"]:
        say(f"exit 1: baseline {'ok' if baseline['passed'] else 'FAILED'}, unexplained survivors "
            f"{s['unexplained']}, errors {s['errors']}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
