r"""suite.controls (SPEC §5): a positive control for every check — in the same ``verify``, each claim's S, P, A and F
checks also run against a planted wrong evaluator, and must fail it.

The planted evaluators are the suite's mutants (``checks/runners/mutants.toml``: one exact snippet of one file and its
replacement, written as a realistic slip — a sign flipped, a factor dropped, a count off by one, a bound loosened, a
verdict branch swapped). For each claim with check levels, its control is the mutant marked ``control = true`` for
it, else the first (not an expected survivor) written for it, else the first that names it. The control runs in a
forked child process (nothing it changes can reach the parent or the other claims):

1. the mutated source of the file is compiled and executed as a fresh namespace, and every function of the live
   module (module level, class bodies, ``functools`` wrappers) takes the new function's *code object*, so that every
   reference to it — including names other modules imported with ``from … import`` — runs the mutant; module data
   that changed (dicts, lists) is updated in place, other values rebound; ``functools`` caches are cleared;
2. the claim's check levels run with the run's seed and default budgets, cheapest first (S, P, A, F), until one
   fails.

A control is *caught* when a level fails (a crash counts, and is named as such). A control that every level lets
through is a check that can no longer fail: the level fails and names it. Claims with check levels but no mutant are
listed as uncovered (the coverage is part of the summary); the level passes when every control present is caught.
:func:`apply_in_process` is exact: a mutant whose snippet does not occur exactly once is an error, as in
``nox -s mutate``.
"""

from __future__ import annotations

import functools
import multiprocessing as mp
import tempfile
import time
import types
from pathlib import Path

from checks.evidence.outcome import LEVELS, Outcome
from checks.evidence.registry import Context

ID = "suite.controls"
ROOT = Path(__file__).resolve().parents[2]
CHECK_LEVELS = tuple(lv for lv in LEVELS if lv != "E")
TIMEOUT = 900.0


class ControlError(RuntimeError):
    """A mutant that cannot be planted in process (e.g. a closure whose free variables changed)."""


def _module_name(file: str) -> str:
    p = Path(file)
    return ".".join(p.with_suffix("").parts)


def _swap_function(old, new) -> None:
    old = getattr(old, "__wrapped__", old) if isinstance(old, functools._lru_cache_wrapper) else old
    new = getattr(new, "__wrapped__", new) if isinstance(new, functools._lru_cache_wrapper) else new
    if not (isinstance(old, types.FunctionType) and isinstance(new, types.FunctionType)):
        return
    if old.__code__.co_freevars != new.__code__.co_freevars:
        raise ControlError(f"{old.__qualname__}: its free variables changed; it cannot be swapped in process")
    old.__code__ = new.__code__
    old.__defaults__, old.__kwdefaults__ = new.__defaults__, new.__kwdefaults__


def _unwrap(x):
    return x.__func__ if isinstance(x, staticmethod | classmethod) else (x.fget if isinstance(x, property) else x)


def apply_in_process(file: str, original: str, replacement: str, root: Path = ROOT) -> types.ModuleType:
    """Plant the mutant in the live module of ``file`` (see the module docstring); returns the module."""
    import importlib

    path = root / file
    text = path.read_text()
    if text.count(original) != 1:
        raise ControlError(f"{file}: the snippet occurs {text.count(original)} times (it must occur once)")
    name = _module_name(file)
    mod = importlib.import_module(name)
    ns = {"__name__": name, "__file__": str(path), "__package__": mod.__package__, "__builtins__": __builtins__}
    exec(compile(text.replace(original, replacement, 1), str(path), "exec"), ns)  # noqa: S102
    for key, new in ns.items():
        if key.startswith("__") or not hasattr(mod, key):
            continue
        old = getattr(mod, key)
        if isinstance(old, types.FunctionType | functools._lru_cache_wrapper):
            if getattr(old, "__module__", None) == name:
                _swap_function(old, new)
                if isinstance(old, functools._lru_cache_wrapper):
                    old.cache_clear()
        elif isinstance(old, type):
            if old.__module__ == name and isinstance(new, type):
                for attr, val in vars(new).items():
                    if attr in vars(old):
                        _swap_function(_unwrap(vars(old)[attr]), _unwrap(val))
        elif isinstance(old, types.ModuleType):
            continue
        elif isinstance(old, dict) and isinstance(new, dict):
            if old != new:
                old.clear()
                old.update(new)
        elif isinstance(old, list) and isinstance(new, list):
            old[:] = new
        else:
            try:
                changed = bool(old != new)
            except Exception:  # arrays and the like: compare by identity of value
                changed = True
            if changed:
                setattr(mod, key, new)
    return mod


def _child(conn, cid: str, mutant: dict, seed: int, quick: bool, levels: tuple[str, ...]) -> None:
    """In the forked (or spawned) child: plant, run the claim's check levels until one fails, report."""
    out = {"levels": {}, "error": None}
    try:
        apply_in_process(mutant["file"], mutant["original"], mutant["replacement"])
        from checks.evidence.registry import get

        claim = get(cid)
        with tempfile.TemporaryDirectory() as tmp:
            ctx = Context(seed=seed, report_dir=Path(tmp), quick=quick)
            for lv in levels:
                ev = claim.run(lv, ctx)
                out["levels"][lv] = {"passed": ev.passed, "error": ev.error, "seconds": round(ev.seconds, 2)}
                if not ev.passed:
                    break
    except Exception as exc:  # a control that cannot be planted is reported, not counted as caught
        out["error"] = f"{type(exc).__name__}: {exc}"
    conn.send(out)
    conn.close()


def run_control(cid: str, mutant, seed: int, quick: bool, levels, *, method: str = "fork",
                timeout: float = TIMEOUT) -> dict:
    ctxm = mp.get_context(method)
    parent, child = ctxm.Pipe(duplex=False)
    m = {"file": mutant.file, "original": mutant.original, "replacement": mutant.replacement}
    p = ctxm.Process(target=_child, args=(child, cid, m, seed, quick, tuple(levels)), daemon=True)
    t0 = time.perf_counter()
    p.start()
    child.close()
    got = parent.recv() if parent.poll(timeout) else {"levels": {}, "error": f"timed out after {timeout:.0f} s"}
    p.join(5)
    if p.is_alive():
        p.kill()
    got["seconds"] = round(time.perf_counter() - t0, 2)
    return got


def controls() -> tuple[dict, list[str]]:
    """{claim: (its control mutant, its check levels)} and the claims with check levels but no mutant."""
    from checks.evidence.registry import load_all
    from checks.runners.mutate import load_mutants

    reg = load_all()
    ms = [m for m in load_mutants() if not m.equivalent]
    out, missing = {}, []
    for cid, claim in reg.items():
        lv = tuple(x for x in CHECK_LEVELS if x in claim.spec_levels)
        if not lv or cid == ID:
            continue
        mine = [m for m in ms if cid in m.claims and not m.survives]
        # the designated control (control = true, this claim first), else one written for this claim, else any
        pick = ([m for m in mine if m.control and m.claims[0] == cid] or [m for m in mine if m.claims[0] == cid]
                or mine)
        if pick:
            out[cid] = (pick[0], lv)
        else:
            missing.append(cid)
    return out, missing


QUICK = ("rob.structured", "rob.jump", "rob.width_2n", "flat.upsilon", "suite.verdicts")


def level_F(ctx: Context) -> Outcome:
    table, missing = controls()
    if ctx.quick:   # a smoke run: five cheap controls (the full run plants every claim's)
        table = {k: v for k, v in table.items() if k in QUICK}
    return run_controls(ctx, table, missing)


def run_controls(ctx: Context, table: dict, missing: list[str]) -> Outcome:
    """Run each (claim → (mutant, levels)) control of ``table``; ``missing`` lists the uncovered claims."""
    method = "spawn" if ctx.campaign is not None else "fork"   # a Dask client's threads rule out forking
    rows = []
    for cid, (m, lv) in ctx.track(list(table.items()), "suite.controls: planted evaluators"):
        got = run_control(cid, m, ctx.seed, ctx.quick, lv, method=method)
        failed = [x for x, r in got["levels"].items() if not r["passed"]]
        crashed = [x for x, r in got["levels"].items() if r["error"]]
        rows.append({"claim": cid, "control": m.id, "kind": m.kind, "file": m.file, "levels": list(lv),
                     "ran": list(got["levels"]), "caught_by": failed, "crashed": crashed,
                     "plant_error": got["error"], "seconds": got["seconds"]})
    caught = [r for r in rows if r["caught_by"]]
    let_through = [r for r in rows if not r["caught_by"] and not r["plant_error"]]
    unplanted = [r for r in rows if r["plant_error"]]
    covered = len(rows)
    total = covered + len(missing)
    passed = not let_through and not unplanted and bool(rows)
    metric = {"controls": covered, "caught": len(caught), "let_through": [r["claim"] for r in let_through],
              "caught_by_crash": sum(bool(r["crashed"]) and r["caught_by"] == r["crashed"] for r in caught),
              "not_planted": [r["claim"] for r in unplanted], "claims_with_checks": total,
              "uncovered": missing, "seconds": round(sum(r["seconds"] for r in rows), 1)}
    lt = "; ".join(f"{r['claim']} let {r['control']} through (ran {','.join(r['ran'])})" for r in let_through)
    summary = (f"{len(caught)}/{covered} planted wrong evaluators caught by their claim's own checks, in a forked "
               f"child each ({metric['seconds']:.0f} s)"
               + (f"; CHECKS THAT CAN NO LONGER FAIL: {lt}" if let_through else "")
               + (f"; {len(unplanted)} could not be planted: {', '.join(metric['not_planted'])}" if unplanted else "")
               + f"; coverage {covered}/{total} claims with check levels"
               + (f" (no control yet: {', '.join(missing)})" if missing else ""))
    # SPEC §0's F words (checks.evidence.SEVERITY): a control let through, or one not planted, refutes the run
    verdict = (f"no counterexample in {covered} controls: {len(caught)}/{covered} caught" if passed else
               f"refuted: {len(let_through)} let through, {len(unplanted)} not planted, of {covered}")
    if missing:
        verdict += f"; {len(missing)} claims uncovered"
    return Outcome(passed, metric, summary, details={"controls": rows, "uncovered": missing}, verdict=verdict)
