"""A journaled run of one `flat.near_flattest` design at its planned seeds, for the designs whose plans are too long
for ``verify`` (SPEC §0: the whole circle plans 812–2006 seeds, the whole sphere up to 512, ≈ 15 s a seed on a core).

``python -m checks.flat.near_flattest_campaign --design circle --processes 2 --out reports/campaigns/X``

* Each seed index k (from :data:`checks.flat.near_flattest.FIRST_SEED`) runs :func:`checks.flat.near_flattest.run_seed`
  with the run's master seed: the cells ``verify`` itself would run for that seed, nothing else.
* Every finished seed is appended to ``X.jsonl`` at once (one JSON line: the design, the master seed, the seed index,
  its output), so an interrupted run loses only the seeds in flight; run the same command again and it resumes.
  Lines of another design or master seed refuse the journal by name.
* ``X.json`` is the summary, written at the end and on ``--summary``: each series (τ², κ) through the same
  :func:`checks.flat.near_flattest.run_series` that ``verify`` uses, over the *contiguous prefix* of finished seeds (a
  cut that never looks at a slope), with its planned units and SPEC §0's word.

Seeds are independent and each carries its own stream (:meth:`Context.rng` of the master seed and the seed index), so
the result does not depend on the number of processes or on the order in which seeds finish.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from checks.flat import near_flattest as NF

MASTER_SEED = 20260   # verify's default master seed


def _plain(x):
    """Plain JSON values at full precision, NaN kept as a float (:func:`checks.evidence.outcome.jsonable` rounds to
    12 digits and writes NaN as a string: the summary would then differ from verify's own for the same seeds)."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def design_config(design: str, seeds: int) -> dict:
    """The full-run configuration of ``verify`` with only ``design`` given ``seeds`` seeds."""
    if design not in NF.DESIGNS:
        raise ValueError(f"design must be one of {NF.DESIGNS}, not {design!r}")
    cfg = NF.run_config(False, True)
    cfg["design_seeds"] = {d: (seeds if d == design else 0) for d in NF.DESIGNS}
    cfg["seeds"] = seeds
    return cfg


def read_journal(path: Path, design: str, master: int) -> dict[int, dict]:
    """{seed index: output} of the finished seeds in ``path`` (a truncated last line, from a kill mid-write, is
    dropped and reported)."""
    done: dict[int, dict] = {}
    if not path.exists():
        return done
    lines = path.read_text().splitlines()
    for i, line in enumerate(lines):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1:
                print(f"{path}: its last line is truncated (a kill mid-write); that seed runs again", file=sys.stderr)
                continue
            raise ValueError(f"{path}, line {i + 1}: not JSON; the journal is damaged") from None
        if rec["design"] != design or rec["master_seed"] != master:
            raise ValueError(f"{path} holds design {rec['design']!r}, master seed {rec['master_seed']}; this run is "
                             f"{design!r}, {master}: use another --out")
        done[int(rec["seed_index"])] = rec["out"]
    return done


def summarize(done: dict[int, dict], design: str, master: int, seeds: int) -> dict:
    """Each series of ``design`` over the contiguous prefix of finished seed indices."""
    cfg = design_config(design, seeds)
    first = cfg["first_seed"]
    k = 0
    while first + k in done and k < seeds:
        k += 1
    out = [done[first + i] for i in range(k)]
    every_row = [r for o in out for r in o["rows"]]
    rows = [r for r in every_row if not r.get("no_interpolator")]
    ctx = SimpleNamespace(seed=master)
    series = [NF.run_series(out, rows, cfg, ctx, design, tau2, kappa, False)
              for tau2 in cfg["noises"] for kappa in cfg["kappas"]] if k >= 2 else []
    return {"what": f"{NF.ID}, design {design!r} alone, master seed {master}, seed indices {first}–{first + k - 1} "
                    f"(the contiguous prefix of {len(done)} finished) of {seeds} to run",
            "design": design, "master_seed": master, "seeds": k, "finished": len(done), "to_run": seeds,
            "lost_cells": len(every_row) - len(rows), "series": _plain(series)}


def _one(args):
    master, k, cfg = args
    t0 = time.perf_counter()
    return k, NF.run_seed((master, k, cfg)), time.perf_counter() - t0


def run(design: str, out: Path, *, seeds: int | None = None, processes: int = 1, master: int = MASTER_SEED,
        log=print) -> dict:
    seeds = seeds or NF.PLANNED_BY_DESIGN[design]
    cfg = design_config(design, seeds)
    journal, summary = out.with_suffix(".jsonl"), out.with_suffix(".json")
    journal.parent.mkdir(parents=True, exist_ok=True)
    done = read_journal(journal, design, master)
    if journal.exists():   # drop a truncated last line before appending after it
        text = journal.read_text()
        if text and not text.endswith("\n"):
            journal.write_text(text[: text.rfind("\n") + 1])
    todo = [(master, cfg["first_seed"] + i, cfg) for i in range(seeds) if cfg["first_seed"] + i not in done]
    log(f"{NF.ID} {design}: {len(done)} seeds in {journal}, {len(todo)} to run on {processes} process(es)")
    t0, times = time.perf_counter(), []
    with journal.open("a") as fh:
        pool = mp.get_context("spawn").Pool(processes) if processes > 1 else None
        try:
            it = pool.imap_unordered(_one, todo) if pool else map(_one, todo)
            for j, (k, res, dt) in enumerate(it, 1):
                done[k] = _plain(res)
                fh.write(json.dumps({"design": design, "master_seed": master, "seed_index": k,
                                     "out": done[k]}) + "\n")
                fh.flush()
                times.append(dt)
                if j % 20 == 0 or j == len(todo):
                    el = time.perf_counter() - t0
                    log(f"  {j}/{len(todo)} seeds, {el / 60:.1f} min, {np.median(times):.1f} s a seed, "
                        f"≈ {el / j * (len(todo) - j) / 60:.0f} min left")
        finally:
            if pool:
                pool.terminate()
    res = summarize(done, design, master, seeds)
    summary.write_text(json.dumps(res, indent=1) + "\n")
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m checks.flat.near_flattest_campaign",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--design", required=True, choices=NF.DESIGNS)
    ap.add_argument("--out", required=True, type=Path, help="journal X.jsonl and summary X.json (suffix replaced)")
    ap.add_argument("--seeds", type=int, default=None, help="seed indices to run (default: the design's largest plan)")
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--seed", type=int, default=MASTER_SEED, help="master seed (default: verify's)")
    ap.add_argument("--summary", action="store_true", help="only summarise the journal")
    a = ap.parse_args(argv)
    seeds = a.seeds or NF.PLANNED_BY_DESIGN[a.design]
    if a.summary:
        res = summarize(read_journal(a.out.with_suffix(".jsonl"), a.design, a.seed), a.design, a.seed, seeds)
        a.out.with_suffix(".json").write_text(json.dumps(res, indent=1) + "\n")
    else:
        res = run(a.design, a.out, seeds=seeds, processes=a.processes, master=a.seed)
    print(res["what"])
    for s in res["series"]:
        lo, hi = s["ci"]
        t = s["tail"]
        print(f"  τ²={s['tau2']:g} κ={s['kappa']:g}: β = {s['beta']:+.2f} [{lo:+.2f}, {hi:+.2f}], "
              f"{s['units']}/{s['planned']} units → {s['verdict']}; last doubling n = {t['n'][0]}→{t['n'][1]}: "
              f"{t['beta']:+.2f} [{t['ci'][0]:+.2f}, {t['ci'][1]:+.2f}]" if not math.isnan(s["beta"]) else s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
