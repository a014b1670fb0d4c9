r"""rob (law of robustness): exact and certified Lipschitz constants of shallow ReLU nets.

Two sections (their ``bench.json`` keys are ``kinks`` and ``kinks_certified``):

* ``kinks``: :func:`numerics.rob.lipschitz` on the ball B₁ ⊂ R^d, d = 2, 3, against the SOCP brute
  force over all 2^m sign patterns (:func:`brute_force_lipschitz`);
* ``kinks_certified`` (Shmalo 2026; SPEC §0 "Certified", §3): one table of time and certified relative gap
  against (domain, d, m), each net solved once with the routine's cost model, beside two baselines:

  - the SOCP brute force over all 2^m sign patterns (``ball_brute_force`` of the rob oracles, exact
    acceptance), on the ball for m ≤ 12;
  - uniform sampling, the author's method (20 000 points, as ``sphere_sample`` of the rob oracles on the
    sphere), whose under-report (certified lower end − sampled)/(certified lower end) is stated in percent.

  Nets are "trained-like" (rows N(0, 1/d), biases 0.1·N(0,1), a ~ N(0,1)/√m), as in rob.law, and in
  d = 3 random with thresholds spread over (−0.8, 0.8).
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from checks.runners.bench.core import Bench, pyplot, save_figure
from checks.runners.bench.timing import fit_exponent

# kinks_certified: (domain, d, m, time limit in s)
CERTIFIED_GRID_FULL = (
    [("sphere", 3, m, 60) for m in (16, 32, 64, 128)]
    + [("ball", 3, m, 60) for m in (16, 32, 64, 128)]
    + [(dom, d, m, 20) for dom in ("ball", "sphere") for d in (5, 10) for m in (16, 64)]
    + [("sphere", 32, m, 60) for m in (16, 64, 256, 1024)]
    + [("ball", 32, m, 60) for m in (16, 64)]
)
CERTIFIED_GRID_QUICK = [
    ("sphere", 3, 16, 10),
    ("ball", 3, 16, 10),
    ("ball", 5, 16, 5),
    ("sphere", 5, 16, 5),
    ("sphere", 32, 16, 5),
    ("sphere", 32, 64, 3),
    ("ball", 32, 16, 3),
]
CERTIFIED_BRUTE_M = (8, 10)
# the section's share of the bench's time budget (s), by quick: the grid's limits add up to 1000 s full, 41 s quick
CERTIFIED_ALLOT_S = {False: 100.0, True: 41.0}


def _ball_brute_force():
    """The rob oracles' SOCP brute force (independent of ``numerics.rob``)."""
    from checks.rob.oracles import ball_brute_force

    return ball_brute_force


def brute_force_lipschitz(W, b, a, v, R: float = 1.0) -> tuple[float, int]:
    """Max ‖∇f‖ over the sign patterns whose cell meets the open ball B_R, by enumerating all 2^m: the one
    copy of this oracle, ``ball_brute_force`` of the rob oracles (SOCP per pattern, exact acceptance)."""
    bf = _ball_brute_force()((W, b, a, v, 0.0), R)
    return bf.value, bf.cells


# ----------------------------------------------------------------------------------------------- kinks
def lipschitz_section(bench: Bench):
    """Exact Lipschitz constants on the ball against the brute force, d = 2, 3 (json key ``kinks``)."""
    try:
        from numerics import rob
    except ImportError as exc:
        bench.data["kinks"] = {"available": False, "reason": f"numerics.rob not available: {exc}"}
        return
    g = bench.grid
    rows = []
    for d in (2, 3):
        for m in sorted(set(g.kink_m) | set(g.brute_m)):
            rng = np.random.default_rng([bench.seed, d, m])
            W = rng.standard_normal((m, d))
            b = rng.uniform(-0.8, 0.8, m) * np.linalg.norm(W, axis=1)
            a, v = rng.standard_normal(m), 0.3 * rng.standard_normal(d)
            net = (W, b, a, v, 0.0)
            row = {"d": d, "m": m}
            if m in g.kink_m or m in g.brute_m:
                t0 = time.perf_counter()
                L = rob.lipschitz(net, rob.Ball(d, 1.0))
                row.update(
                    exact_s=time.perf_counter() - t0,
                    cells=L.cells,
                    lip=float(L.upper),
                    exact=bool(L.exact),
                    method=L.method,
                )
            if m in g.brute_m:
                t0 = time.perf_counter()
                lb, feas = brute_force_lipschitz(W, b, a, v)
                row.update(
                    brute_s=time.perf_counter() - t0,
                    brute_cells=feas,
                    brute_lip=lb,
                    patterns=2**m,
                    agree=abs(lb - row["lip"]) <= 1e-7 * max(1.0, lb),
                )
            rows.append(row)
        bench.log(f"kinks d={d}: done up to m={max(g.kink_m)}")
    fits = {}
    for d in (2, 3):
        ex = [r for r in rows if r["d"] == d and "exact_s" in r and r["m"] >= 8]
        br = [r for r in rows if r["d"] == d and "brute_s" in r and r["m"] >= 4]
        fits[f"d{d}_cells_vs_m"] = fit_exponent([r["m"] for r in ex], [r["cells"] for r in ex])
        fits[f"d{d}_exact_time_vs_m"] = fit_exponent([r["m"] for r in ex], [r["exact_s"] for r in ex])
        fits[f"d{d}_brute_time_per_m"] = (
            float(np.polyfit([r["m"] for r in br], np.log2([r["brute_s"] for r in br]), 1)[0])
            if len(br) >= 2
            else math.nan
        )
    bench.data["kinks"] = {
        "available": True,
        "rows": rows,
        "fits": fits,
        "brute_method": "every sign pattern σ ∈ {0,1}^m; cell ∩ open ball nonempty iff the SOCP "
        "max δ s.t. σ-signed (u_j·x − t_j) ≥ δ, ‖x‖ ≤ R has δ* > 0 (cvxpy)",
    }


# ------------------------------------------------------------------------------------- kinks_certified
def certified_section(bench: Bench):
    """Certified constants, time and gap against (domain, d, m) (json key ``kinks_certified``)."""
    left = bench.deadline - time.perf_counter()
    allot = min(CERTIFIED_ALLOT_S[bench.quick], max(left - 60.0, 30.0)) if math.isfinite(left) else None
    bench.data["kinks_certified"] = certified_rows(bench.seed, quick=bench.quick, log=bench.log, allot_s=allot)


def _net(rng, dom, d, m):
    if d == 3:
        W = rng.standard_normal((m, d))
        b = rng.uniform(-0.8, 0.8, m) * np.linalg.norm(W, axis=1)
        return (W, b, rng.standard_normal(m), 0.3 * rng.standard_normal(d), 0.0)
    return (
        rng.standard_normal((m, d)) / np.sqrt(d),
        0.1 * rng.standard_normal(m),
        rng.standard_normal(m) / np.sqrt(m),
        0.01 * rng.standard_normal(d),
        0.0,
    )


def _sample(net, dom, d, rng, n=20000):
    W, b, a, v, _ = net
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    if dom == "ball":
        X *= rng.random((n, 1)) ** (1 / d)
    G = v + ((X @ W.T + b) > 0) * a @ W
    val = np.sum(G * G, 1) - (np.sum(G * X, 1) ** 2 if dom == "sphere" else 0)
    return float(np.sqrt(max(val.max(), 0.0)))


def certified_rows(seed: int = 0, quick: bool = False, log=print, allot_s: float | None = None) -> dict:
    """The ``kinks_certified`` record: ``rows`` (one per grid case) and ``brute`` (against the brute force).

    ``allot_s``: the section's share of the bench's time budget; when the grid's time limits add up to more, every
    limit is scaled by the same factor (``limit_scale`` in the record, and the limits in the rows are the scaled ones).
    """
    from numerics import rob

    ball_brute_force = _ball_brute_force()
    rows = []
    grid = CERTIFIED_GRID_QUICK if quick else CERTIFIED_GRID_FULL
    total = sum(c[3] for c in grid)
    scale = 1.0 if allot_s is None or total <= allot_s else allot_s / total
    for dom, d, m, limit0 in grid:
        limit = limit0 * scale
        rng = np.random.default_rng([seed, d, m, dom == "ball"])
        net = _net(rng, dom, d, m)
        D = rob.Sphere(d) if dom == "sphere" else rob.Ball(d, 1.0)
        t0 = time.perf_counter()
        L = rob.lipschitz(net, D, time_limit=limit, rel_gap=0.01)
        secs = time.perf_counter() - t0
        samp = _sample(net, dom, d, rng)
        row = {
            "domain": dom,
            "d": d,
            "m": m,
            "time_limit": limit,
            "seconds": secs,
            "exact": bool(L.exact),
            "lower": float(L.lower),
            "upper": float(L.upper),
            "gap": float(L.gap),
            "status": L.status,
            "cells": L.cells,
            "sampled": samp,
            "sampling_under_report_pct": 100 * (float(L.lower) - samp) / float(L.lower) if L.lower else None,
        }
        rows.append(row)
        log(f"kinks_certified {dom} d={d} m={m}: {secs:.2f} s, gap {row['gap']:.2e} ({L.status})")
    brute = []
    for m in CERTIFIED_BRUTE_M[:1] if quick else CERTIFIED_BRUTE_M:
        rng = np.random.default_rng([seed, 3, m, 7])
        net = _net(rng, "ball", 3, m)
        t0 = time.perf_counter()
        L = rob.lipschitz(net, rob.Ball(3, 1.0))
        te = time.perf_counter() - t0
        t0 = time.perf_counter()
        bf = ball_brute_force(net, 1.0)
        tb = time.perf_counter() - t0
        brute.append(
            {
                "d": 3,
                "m": m,
                "exact_s": te,
                "brute_s": tb,
                "cells": L.cells,
                "brute_cells": bf.cells,
                "unresolved": bf.unresolved,
                "agree": bool(abs(float(L.upper) - bf.value) <= 1e-12 * bf.value),
            }
        )
        log(f"kinks_certified brute force m={m}: exact {te:.3f} s, brute {tb:.1f} s")
    return {"available": True, "rows": rows, "brute": brute, "limit_scale": scale, "limits_total_s": total}


# ------------------------------------------------------------------------------------- lipschitz_peers
def peers_section(bench: Bench):
    """The "Certified Lipschitz" table against LipSDP, SCIP, naive and sampling (json key ``lipschitz_peers``,
    :mod:`checks.runners.bench.lipschitz_peers`). The full grid needs ~25 min: a run without that much budget left runs
    the quick grid and says so."""
    from checks.runners.bench import lipschitz_peers as lp

    left = bench.deadline - time.perf_counter()
    full = not bench.quick and (not math.isfinite(left) or left > 1500)
    rec = lp.peer_rows(bench.seed, quick=not full, log=bench.log)
    rec["grid"] = "full" if full else "quick (the budget left could not hold the full grid)" if not bench.quick \
        else "quick"
    bench.data["lipschitz_peers"] = rec


# ------------------------------------------------------------------------------------------------ plots
def plots(out: Path, data: dict[str, Any]) -> list[str]:
    """Exact against brute-force time on the ball, against m."""
    kk = data.get("kinks", {})
    if not kk.get("available"):
        return []
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 4))
    for d in (2, 3):
        ex = [r for r in kk["rows"] if r["d"] == d and "exact_s" in r]
        br = [r for r in kk["rows"] if r["d"] == d and "brute_s" in r]
        ax.loglog([r["m"] for r in ex], [r["exact_s"] for r in ex], "o-", label=f"exact, d={d}")
        ax.loglog([r["m"] for r in br], [r["brute_s"] for r in br], "x--", label=f"brute 2^m, d={d}")
    ax.set(xlabel="m (units)", ylabel="seconds", title="Lipschitz constant on the ball")
    ax.legend(fontsize=7)
    return [save_figure(fig, out, "kinks")]
