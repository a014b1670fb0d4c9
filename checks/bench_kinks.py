r"""Bench section for the certified Lipschitz routines (Shmalo 2026; SPEC §0 "Certified", §3).

One table of time and certified relative gap against (domain, d, m), each net solved once with the
routine's cost model, beside two baselines:

* the SOCP brute force over all 2^m sign patterns (:func:`checks.rob_oracles.ball_brute_force`, exact
  acceptance), on the ball for m ≤ 12;
* uniform sampling, the author's method (20 000 points, :func:`checks.rob_oracles.sphere_sample` on the
  sphere), whose under-report (certified lower end − sampled)/(certified lower end) is stated in percent.

Nets are "trained-like" (rows N(0, 1/d), biases 0.1·N(0,1), a ~ N(0,1)/√m), as in rob.law, and in d = 3
random with thresholds spread over (−0.8, 0.8).
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["run", "markdown", "GRID_FULL", "GRID_QUICK"]

# (domain, d, m, time limit in s)
GRID_FULL = ([("sphere", 3, m, 60) for m in (16, 32, 64, 128)] + [("ball", 3, m, 60) for m in (16, 32, 64, 128)]
             + [(dom, d, m, 20) for dom in ("ball", "sphere") for d in (5, 10) for m in (16, 64)]
             + [("sphere", 32, m, 60) for m in (16, 64, 256, 1024)] + [("ball", 32, m, 60) for m in (16, 64)])
GRID_QUICK = ([("sphere", 3, 16, 10), ("ball", 3, 16, 10), ("ball", 5, 16, 5), ("sphere", 5, 16, 5),
               ("sphere", 32, 16, 5), ("sphere", 32, 64, 3), ("ball", 32, 16, 3)])
BRUTE_M = (8, 10, 12)


def _net(rng, dom, d, m):
    if d == 3:
        W = rng.standard_normal((m, d))
        b = rng.uniform(-0.8, 0.8, m) * np.linalg.norm(W, axis=1)
        return (W, b, rng.standard_normal(m), 0.3 * rng.standard_normal(d), 0.0)
    return (rng.standard_normal((m, d)) / np.sqrt(d), 0.1 * rng.standard_normal(m),
            rng.standard_normal(m) / np.sqrt(m), 0.01 * rng.standard_normal(d), 0.0)


def _sample(net, dom, d, rng, n=20000):
    W, b, a, v, _ = net
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    if dom == "ball":
        X *= rng.random((n, 1)) ** (1 / d)
    G = v + ((X @ W.T + b) > 0) * a @ W
    val = np.sum(G * G, 1) - (np.sum(G * X, 1) ** 2 if dom == "sphere" else 0)
    return float(np.sqrt(max(val.max(), 0.0)))


def run(seed: int = 0, quick: bool = False, log=print) -> dict:
    from checks.rob_oracles import ball_brute_force
    from numerics import rob as K

    rows = []
    for dom, d, m, limit in (GRID_QUICK if quick else GRID_FULL):
        rng = np.random.default_rng([seed, d, m, dom == "ball"])
        net = _net(rng, dom, d, m)
        D = K.Sphere(d) if dom == "sphere" else K.Ball(d, 1.0)
        t0 = time.perf_counter()
        L = K.lipschitz(net, D, time_limit=limit, rel_gap=0.01)
        secs = time.perf_counter() - t0
        samp = _sample(net, dom, d, rng)
        row = {"domain": dom, "d": d, "m": m, "time_limit": limit, "seconds": secs, "exact": bool(L.exact),
               "lower": float(L.lower), "upper": float(L.upper), "gap": float(L.gap), "status": L.status,
               "cells": L.cells, "sampled": samp,
               "sampling_under_report_pct": 100 * (float(L.lower) - samp) / float(L.lower) if L.lower else None}
        rows.append(row)
        log(f"kinks_certified {dom} d={d} m={m}: {secs:.2f} s, gap {row['gap']:.2e} ({L.status})")
    brute = []
    for m in (BRUTE_M[:1] if quick else BRUTE_M):
        rng = np.random.default_rng([seed, 3, m, 7])
        net = _net(rng, "ball", 3, m)
        t0 = time.perf_counter()
        L = K.lipschitz(net, K.Ball(3, 1.0))
        te = time.perf_counter() - t0
        t0 = time.perf_counter()
        bf = ball_brute_force(net, 1.0)
        tb = time.perf_counter() - t0
        brute.append({"d": 3, "m": m, "exact_s": te, "brute_s": tb, "cells": L.cells, "brute_cells": bf.cells,
                      "unresolved": bf.unresolved, "agree": bool(abs(float(L.upper) - bf.value) <= 1e-12 * bf.value)})
        log(f"kinks_certified brute force m={m}: exact {te:.3f} s, brute {tb:.1f} s")
    return {"available": True, "rows": rows, "brute": brute}


def markdown(data: dict) -> str:
    if not data or not data.get("available"):
        return ""
    out = ["## Certified Lipschitz constants: time and gap against m and d", "",
           "Each net once, with the cost model of `numerics.rob.lipschitz` (exact, or a branch-and-bound bracket "
           "to `rel_gap = 1%` within the time limit). *Sampling* is the author's method (20 000 uniform points); "
           "its under-report is (certified lower end − sampled max)/(certified lower end).", "",
           "| domain | d | m | limit (s) | time (s) | result | lower | upper | certified gap "
           "| sampling under-reports |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        res = "exact" if r["exact"] else r["status"]
        ur = "—" if r["sampling_under_report_pct"] is None else f"{r['sampling_under_report_pct']:.2f}%"
        out.append(f"| {r['domain']} | {r['d']} | {r['m']} | {r['time_limit']} | {r['seconds']:.2f} | {res} | "
                   f"{r['lower']:.6g} | {r['upper']:.6g} | {r['gap']:.2e} | {ur} |")
    out += ["", "Exact routine against the SOCP brute force over all 2^m sign patterns (ball B₁ ⊂ R³):", "",
            "| m | exact (s) | cells | brute force (s) | cells accepted | unresolved | same constant | speedup |",
            "|---|---|---|---|---|---|---|---|"]
    for r in data["brute"]:
        out.append(f"| {r['m']} | {r['exact_s']:.3f} | {r['cells']} | {r['brute_s']:.1f} | {r['brute_cells']} | "
                   f"{r['unresolved']} | {'yes' if r['agree'] else 'NO'} | {r['brute_s'] / r['exact_s']:.0f}× |")
    return "\n".join(out) + "\n"
