"""``python -m checks`` / ``shallow-proofs``: verify, falsify, list, show, replay, inspect.

Bad input (an unknown claim, a malformed level list, a report dir that cannot be written, a reproducer
that is not one) is one readable line on stderr and exit code 2, checked before any claim runs. A claim
whose evidence fails is exit code 1. ``replay`` exits 1 while its case is still a counterexample.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")


def _levels(text: str) -> tuple[str, ...]:
    from checks.evidence.outcome import LEVELS

    out = tuple(s.strip().upper() for s in text.split(",") if s.strip())
    bad = [s for s in out if s not in LEVELS]
    if bad or not out:
        raise argparse.ArgumentTypeError(f"levels must be a comma list of {','.join(LEVELS)}; got {text!r}")
    return out


def _jobs(text: str) -> int:
    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be a positive number of processes; got {text!r}")
    return k


def default_jobs() -> int:
    """The usable cores (the affinity mask, not the machine's count), at most 2: the levels are few and
    uneven, so more processes mostly add memory."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(2, n))


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
        s.add_argument("--report-dir", type=Path, default=Path("reports"),
                       help="where verify.{json,md}, figures/ and counterexamples/ go (default: reports); "
                            "a partial run merges into the report already there")
        s.add_argument("--seed", type=int, default=20260,
                       help="master seed: every check derives its own reproducible stream from it (default 20260)")
        s.add_argument("--budget", type=int, default=None, help="Hypothesis examples per property")
        s.add_argument("--quick", action="store_true",
                       help="smoke run (< 60 s): small experiments, written to verify-quick.*; not evidence")
        s.add_argument("--power", action="store_true",
                       help="run every E experiment at its planned number of independent units (SPEC §0, power); "
                            "without it an experiment that plans more units than its default budget runs fewer, "
                            "and its word is `inconclusive`")
        s.add_argument("--no-progress", action="store_true",
                       help="no progress bars: one line per level, and a progress line every 15 s")
        s.add_argument("--jobs", type=_jobs, default=None, metavar="K",
                       help="claim levels run in K worker processes (default: the usable cores, at most 2); "
                            "the report is the same for every K; a Dask campaign (below) runs in one")
        g = s.add_argument_group("distributed (Dask)")
        g.add_argument("--workers", type=int, default=None, metavar="K",
                       help="start a local Dask cluster of K worker processes and run the campaign on it")
        g.add_argument("--scheduler", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="use an existing Dask cluster (tcp://host:port); alone: Dask's scheduler-address config")
        if name == "falsify":
            g.add_argument("--shards", type=int, default=None, metavar="S",
                           help="seed shards per property (default: one per 2000 examples; the result depends on "
                                "(seed, budget, shards), never on the workers)")
            g.add_argument("--resume", action="store_true",
                           help="keep the shards already finished under REPORT_DIR/campaigns/ and run the rest")
        else:
            s.add_argument("--resume", action="store_true",
                           help="keep the items of E sweeps that a killed run finished (REPORT_DIR/sweeps/, same "
                                "seed, options and code) and run the rest; the report is the same as an unbroken "
                                "run's")
    sub.add_parser("list", help="list claims (implemented and planned) and their levels")
    s = sub.add_parser("show", help="show one claim")
    s.add_argument("id")
    s = sub.add_parser("replay", help="re-run a saved counterexample reproducer at float64 and 50 digits")
    s.add_argument("path", type=Path)
    sub.add_parser("inspect", help="every paper's quantities for your own network (see: inspect --help)",
                   add_help=False)
    return p


def check_report_dir(path: Path) -> None:
    """Fail fast (before any claim runs) when ``path`` cannot be a directory we write into."""
    for parent in (path, *path.parents):
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"--report-dir {path}: {parent} is a file, not a directory")
        if parent.exists():
            break
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise ValueError(f"--report-dir {path} is not writable: {exc.strerror or exc}") from None


class _Heartbeat:
    """A line every ``every`` seconds while a level runs without a terminal (nox, CI, a log file)."""

    def __init__(self, say, every: float = 15.0):
        self.say, self.every, self.label, self.t0 = say, every, None, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=1)

    def start(self, label: str) -> None:
        self.label, self.t0 = label, time.perf_counter()

    def _run(self):
        while not self._stop.wait(self.every):
            if self.label:
                self.say(f"  … {self.label} still running ({time.perf_counter() - self.t0:.0f} s)")


def _run(args) -> int:
    from checks.evidence.outcome import LEVELS
    from checks.evidence.registry import select

    claims = select(args.claims)
    levels = getattr(args, "levels", None) or (("F",) if args.cmd == "falsify" else LEVELS)
    if args.budget is not None and args.budget < 1:
        raise ValueError(f"--budget must be a positive number of examples, got {args.budget}")
    jobs = [(c, lv) for c in claims for lv in levels if lv in c.levels]
    if not jobs:
        raise ValueError(f"the selected claims support none of the levels {','.join(levels)}")
    check_report_dir(args.report_dir)
    campaign = _campaign(args)
    try:
        return _run_claims(args, claims, levels, jobs, campaign)
    except BaseException:  # Ctrl-C included: finished shards are journaled; do not wait for the running ones
        if campaign is not None:
            campaign.close(abort=True)
            campaign = None
        raise
    finally:
        if campaign is not None:
            campaign.close()


def _campaign(args):
    """The Dask campaign the options ask for, or None (then everything runs in this process, as before)."""
    workers, scheduler = args.workers, args.scheduler
    shards, resume = getattr(args, "shards", None), getattr(args, "resume", False)
    from numerics.cluster import check_options

    check_options(workers, scheduler)
    if shards is not None and shards < 1:
        raise ValueError(f"--shards must be a positive integer, got {shards}")
    if workers is None and scheduler is None and shards is None:
        if resume and args.cmd == "falsify":
            raise ValueError("--resume continues a sharded campaign: give --workers, --scheduler or --shards")
        return None   # verify --resume alone: the E sweeps' journals, in this process
    from checks.runners.campaign import Campaign

    if workers is not None:
        return Campaign.local(workers, shards=shards, resume=resume)
    if scheduler is not None:
        return Campaign.connect(scheduler or None, shards=shards, resume=resume)
    return Campaign(None, shards=shards, resume=resume)  # --shards alone: the same shards, in this process


def _run_claims(args, claims, levels, jobs, campaign) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from checks.evidence.outcome import LEVELS
    from checks.evidence.registry import Context
    from checks.runners import report

    console = Console(stderr=True)
    interactive = console.is_terminal and not args.no_progress
    partial = bool(args.claims) or tuple(levels) != tuple(LEVELS)
    meta = {"seed": args.seed, "levels": list(levels), "quick": args.quick, "budget": args.budget,
            "power": bool(getattr(args, "power", False)),
            "claims_selected": args.claims or "all", "versions": report.versions()}
    if args.cmd == "verify" and getattr(args, "resume", False):
        meta["resume"] = True   # E sweeps reused the items a killed run of the same code finished
    if campaign is not None:
        meta["campaign"] = {"engine": campaign.describe(), "shards": campaign.shards or "default",
                            "resume": campaign.resume}
    stem = report.stem_for(meta, "verify" if args.cmd == "verify" else "falsify")
    if not partial:  # a full run owns its figures: stale ones from older runs go
        for f in (args.report_dir / "figures").glob("*.png") if not args.quick else ():
            f.unlink()
    say = console.print if interactive else (lambda s: print(s, file=sys.stderr, flush=True))
    console.print(report.run_line(meta))
    # a Dask campaign spreads the work itself (and its client's threads rule out forking): one process here
    n_jobs = 1 if campaign is not None else min(args.jobs or default_jobs(), len(jobs))
    ctx_args = dict(seed=args.seed, report_dir=args.report_dir, budget=args.budget, quick=args.quick,
                    power=bool(getattr(args, "power", False)), resume=bool(getattr(args, "resume", False)),
                    sweep_journal=args.cmd == "verify")
    pool = None
    if n_jobs > 1:  # the workers fork here, before the progress and heartbeat threads exist
        from checks.runners.parallel import LevelPool

        pool = LevelPool(jobs, ctx_args, n_jobs, log=None if interactive else say,
                         history=args.report_dir / f"{stem}.json")
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, disable=not interactive, transient=True) as prog, \
            _Heartbeat(say) as beat:
        task = prog.add_task("verify", total=len(jobs))

        def done(i: int, ev) -> None:
            mark = ("[green]pass[/]" if ev.passed else "[red]FAIL[/]") if interactive else \
                ("pass" if ev.passed else "FAIL")
            say(f"[{i}/{len(jobs)}] {mark} {ev.claim} {ev.level} · {ev.verdict} ({ev.seconds:.1f} s): {ev.summary}")
            prog.advance(task)

        if pool is None:
            ctx = Context(**ctx_args, progress=prog if interactive else None, log=None if interactive else say,
                          campaign=campaign)
            evidence = []
            for i, (c, lv) in enumerate(jobs, 1):
                prog.update(task, description=f"{c.id} [{lv}]")
                beat.start(f"{c.id} {lv}")
                evidence.append(c.run(lv, ctx))
                beat.start("")
                done(i, evidence[-1])
        else:
            prog.update(task, description=f"verify ({n_jobs} processes)")
            evidence = pool.collect(done=done, beat=beat)
    rep = report.build(claims, evidence, meta)
    jp, mp = report.write(rep, args.report_dir, stem, partial=partial)
    merged = json.loads(jp.read_text())
    from checks.runners.report_html import write_html

    hp = write_html(merged, args.report_dir, stem)   # the same report, one self-contained page for a browser
    report.table(merged, Console())
    Console().print(f"wrote {jp}, {mp} and {hp}")
    return 0 if rep["passed"] else 1


def _replay(path: Path) -> int:
    from checks.runners.falsify import replay

    if not path.is_file():
        raise ValueError(f"replay: {path} is not a file")
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"replay: {path} is not a JSON reproducer ({exc})") from None
    if not isinstance(data, dict) or "property" not in data or "case" not in data:
        raise ValueError(f"replay: {path} is not a reproducer: it needs the fields 'property' and 'case' "
                         "(as written to reports/counterexamples/)")
    res = replay(path)
    if res.get("suite_failure"):
        print(f"{res['property']}: float64 margin {res['float64_margin']:.3e}; the suite itself fails on this case "
              f"({res['suite_failure']}): still a counterexample")
        return 1
    first, second = res["mpmath_margin"], res["escalated_margin"]
    still = first > 0 and second is not None and second > 0
    tail = "" if second is None else f", {res['escalated_dps']}-digit margin {second:.3e}"
    verdict = ("still a counterexample at both precisions" if still else
               "a rounding artifact: refuted at the escalated precision" if first > 0 else "refuted")
    print(f"{res['property']}: float64 margin {res['float64_margin']:.3e}, 50-digit margin {first:.3e}{tail}: "
          + verdict)
    return 1 if still else 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["inspect"]:
        from checks.runners.inspect import main as inspect_main

        return inspect_main(argv[1:])
    args = _parser().parse_args(argv)
    if args.cmd in ("verify", "falsify"):
        # the parallelism is in processes (--jobs, Dask): one BLAS/OpenMP thread each, unless the user says
        # otherwise. Two workers × two spinning BLAS threads on two cores cost 13% more CPU on the quick run.
        # Set before numpy or torch loads (in a CLI process neither has yet); the same in every worker, so
        # --jobs changes no arithmetic.
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
    try:
        if args.cmd in ("verify", "falsify"):
            return _run(args)
        from checks.evidence.registry import select

        if args.cmd == "list":
            from checks.evidence.registry import spec

            reg = {c.id: c for c in select(None)}
            for cid, e in spec().claims.items():
                mark = "" if cid in reg else "[planned] "
                print(f"{cid:24s} {','.join(e.levels):10s} {mark}{e.statement}")
            return 0
        if args.cmd == "show":
            from checks.evidence.registry import spec

            e = spec().claims.get(args.id)
            if e is not None and e.status == "planned":
                print(f"{e.id} (planned: listed in the spec, not yet checked)\n{e.statement}\n"
                      f"levels (SPEC): {','.join(e.levels)}")
                return 0
            (c,) = [c for c in select([args.id]) if c.id == args.id] or [None]
            if c is None:
                raise ValueError(f"no claim with ID {args.id!r}")
            print(f"{c.id} ({c.paper})\n{c.statement}\nLaTeX: {c.latex}\nlevels (SPEC): "
                  f"{','.join(c.spec_levels)}; implemented: {','.join(c.levels)}\nmodule: {c.module}")
            return 0
        if args.cmd == "replay":
            return _replay(args.path)
    except (ValueError, FileNotFoundError, KeyError) as exc:  # SpecError is a ValueError
        print(f"shallow-proofs: error: {exc}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":
    sys.exit(main())
