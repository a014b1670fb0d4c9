"""``python -m checks`` / ``shallow-proofs``: verify, falsify, list, show, replay.

Bad input (an unknown claim, a malformed level list, a ValueError from the API) is one readable line
on stderr and exit code 2, never a traceback. A failing claim is exit code 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")


def _levels(text: str) -> tuple[str, ...]:
    from checks.evidence import LEVELS

    out = tuple(s.strip().upper() for s in text.split(",") if s.strip())
    bad = [s for s in out if s not in LEVELS]
    if bad or not out:
        raise argparse.ArgumentTypeError(f"levels must be a comma list of {','.join(LEVELS)}; got {text!r}")
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="shallow-proofs", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, helptext in (("verify", "run every selected claim at every level it supports"),
                           ("falsify", "run only the falsification (F) level, with a budget")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("--claims", nargs="+", default=None, metavar="ID",
                       help="claim IDs or prefixes (ws, flat.upsilon, ...); default: all")
        if name == "verify":
            s.add_argument("--levels", type=_levels, default=None, help="e.g. S,P,A (default: all)")
        s.add_argument("--report-dir", type=Path, default=Path("reports"))
        s.add_argument("--seed", type=int, default=20260)
        s.add_argument("--budget", type=int, default=None, help="Hypothesis examples per property")
        s.add_argument("--quick", action="store_true", help="smaller experiments (recorded in the report)")
        s.add_argument("--no-progress", action="store_true")
    sub.add_parser("list", help="list claims and their levels")
    s = sub.add_parser("show", help="show one claim")
    s.add_argument("id")
    s = sub.add_parser("replay", help="re-run a saved counterexample reproducer")
    s.add_argument("path", type=Path)
    return p


def _run(args) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from checks import report
    from checks.evidence import LEVELS
    from checks.registry import Context, select

    claims = select(args.claims)
    levels = getattr(args, "levels", None) or (("F",) if args.cmd == "falsify" else LEVELS)
    if args.budget is not None and args.budget < 1:
        raise ValueError(f"--budget must be a positive number of examples, got {args.budget}")
    console = Console(stderr=True)
    jobs = [(c, lv) for c in claims for lv in levels if lv in c.levels]
    if not jobs:
        raise ValueError(f"the selected claims support none of the levels {','.join(levels)}")
    evidence = []
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, disable=args.no_progress, transient=True) as prog:
        ctx = Context(seed=args.seed, report_dir=args.report_dir, budget=args.budget, quick=args.quick,
                      progress=prog)
        task = prog.add_task("verify", total=len(jobs))
        for c, lv in jobs:
            prog.update(task, description=f"{c.id} [{lv}]")
            ev = c.run(lv, ctx)
            evidence.append(ev)
            mark = "[green]pass[/]" if ev.passed else "[red]FAIL[/]"
            prog.console.print(f"{mark} {c.id} {lv} ({ev.seconds:.1f} s): {ev.summary}")
            prog.advance(task)
    meta = {"seed": args.seed, "levels": list(levels), "quick": args.quick, "budget": args.budget,
            "claims_selected": args.claims or "all", "versions": report.versions()}
    rep = report.build(claims, evidence, meta)
    stem = "verify" if args.cmd == "verify" else "falsify"
    jp, mp = report.write(rep, args.report_dir, stem)
    report.table(rep, Console())
    Console().print(f"wrote {jp} and {mp}")
    return 0 if rep["passed"] else 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.cmd in ("verify", "falsify"):
            return _run(args)
        from checks.registry import select

        if args.cmd == "list":
            for c in select(None):
                print(f"{c.id:24s} {','.join(c.spec_levels):10s} {c.statement}")
            return 0
        if args.cmd == "show":
            (c,) = [c for c in select([args.id]) if c.id == args.id] or [None]
            if c is None:
                raise ValueError(f"no claim with ID {args.id!r}")
            print(f"{c.id} ({c.paper})\n{c.statement}\nLaTeX: {c.latex}\nlevels (SPEC): "
                  f"{','.join(c.spec_levels)}; implemented: {','.join(c.levels)}")
            return 0
        if args.cmd == "replay":
            from checks.falsify import replay

            print(replay(args.path))
            return 0
    except (ValueError, FileNotFoundError, KeyError) as exc:
        print(f"shallow-proofs: error: {exc}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
