"""Throughput of a falsification campaign at 1 and 2 Dask workers (issue 15's measurement), run as a user runs it.

    python scripts/campaign_throughput.py [--claims ws.bound] [--budget 16000] [--shards 8] [--workers 1 2]

Each worker count is one ``python -m checks falsify --claims C --budget B --shards S --workers K`` in a fresh report
directory (no resume), interleaved K = 1, 2, 1, 2, ... for ``--rounds`` rounds so that a drifting machine load hits
both alike. Per run: the wall time of the whole command (cluster start and stop included), the campaign's own
examples per second overall and per worker, and its overhead per shard (``timing.campaign`` of the report). The
merged results must be identical across worker counts (the campaign's determinism), and the script checks it.
Writes ``reports/campaigns/throughput.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(claims: str, budget: int, shards: int, workers: int, seed: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "checks", "falsify", "--claims", claims, "--budget", str(budget), "--shards",
               str(shards), "--workers", str(workers), "--seed", str(seed), "--report-dir", tmp]
        t0, load0 = time.perf_counter(), os.getloadavg()[0]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
        rep = json.loads((Path(tmp) / "falsify.json").read_text())
    levels = [c["levels"]["F"] for c in rep["claims"] if "F" in c.get("levels", {})]
    if len(levels) != 1:
        raise SystemExit(f"--claims {claims}: expected one claim with an F level in the report, got {len(levels)}")
    entry = levels[0]
    camp = entry["timing"]["campaign"]
    keep = ("examples", "float64_candidates", "confirmed", "undecided", "worst_margin")
    details = {k: {f: v[f] for f in keep if f in v} for k, v in entry.get("details", {}).items()}
    return {"workers": workers, "wall_s": wall, "load_before": load0, "examples_per_s": camp["examples_per_s"],
            "per_worker": camp["per_worker"], "overhead_per_shard_s": camp.get("overhead_per_shard_s"),
            "shards_run": camp["shards_run"], "result": details}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", default="ws.bound")
    ap.add_argument("--budget", type=int, default=16000)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "reports" / "campaigns")
    args = ap.parse_args()
    rows = []
    for rnd in range(args.rounds):
        for k in args.workers:
            r = run(args.claims, args.budget, args.shards, k, args.seed)
            r["round"] = rnd
            rows.append(r)
            print(f"round {rnd}, {k} worker(s): {r['wall_s']:.1f} s wall, {r['examples_per_s']} ex/s, overhead "
                  f"{r['overhead_per_shard_s']} s/shard", flush=True)
    results = {json.dumps(r["result"], sort_keys=True) for r in rows}
    base = min(args.workers)
    speed = {}
    for k in args.workers:
        walls = [r["wall_s"] for r in rows if r["workers"] == k]
        rates = [r["examples_per_s"] for r in rows if r["workers"] == k]
        speed[k] = {"wall_s_median": statistics.median(walls), "examples_per_s_median": statistics.median(rates)}
    for k in args.workers:
        speed[k]["speedup_wall"] = speed[base]["wall_s_median"] / speed[k]["wall_s_median"]
        speed[k]["speedup_examples_per_s"] = speed[k]["examples_per_s_median"] / speed[base]["examples_per_s_median"]
    out = {"claims": args.claims, "budget": args.budget, "shards": args.shards, "seed": args.seed,
           "cpu_count": os.cpu_count(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "identical_results": len(results) == 1, "speed": speed, "runs": rows}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "throughput.json").write_text(json.dumps(out, indent=2, sort_keys=True))
    md = [f"# Campaign throughput: {args.claims}, budget {args.budget}, {args.shards} shards, seed {args.seed}", "",
          f"{os.cpu_count()} cores; `python scripts/campaign_throughput.py` ({out['started']}). Merged results "
          + ("identical across worker counts." if out["identical_results"] else "**differ across worker counts**."),
          "", "| workers | wall (s, median) | ex/s (median) | speed-up (wall) | speed-up (ex/s) | overhead/shard (s) |",
          "|---|---|---|---|---|---|"]
    for k in args.workers:
        ov = [r["overhead_per_shard_s"] for r in rows if r["workers"] == k and r["overhead_per_shard_s"] is not None]
        md.append(f"| {k} | {speed[k]['wall_s_median']:.1f} | {speed[k]['examples_per_s_median']:.1f} | "
                  f"{speed[k]['speedup_wall']:.2f}× | {speed[k]['speedup_examples_per_s']:.2f}× | "
                  f"{statistics.median(ov) if ov else '—'} |")
    (args.out / "throughput.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0 if out["identical_results"] else 1


if __name__ == "__main__":
    sys.exit(main())
