"""Softmax moments against the naive GEMM floor and against their own roofline (issue 28, second target).

The naive floor: a method that forms every sample pair's C × C logit block by one (nC × N)·(N × nC) product
spends 2(nC)²N flops, so it cannot run faster than 2(nC)²N / R, with R the machine's float64 GEMM rate: the larger
of the machine section's square GEMM and of a product of the naive one's own shape ((m × N)·(N × m), m = min(nC,
4096)), so that the floor is as low as the machine allows. The suite's method (:mod:`numerics.ws.softmax_tiles`)
states its own counts per tile (:meth:`~numerics.ws.softmax_tiles.SoftmaxPairTiles.cost`): flops in products, run
at R, and bytes of its element-wise passes, streamed at the machine section's triad bandwidth B. Its roofline is
Σ_tiles (flops / R + bytes / B).

Rows: (784, 256), C = 10, n = 5000 in this process (quick: (30, 16), C = 4, n = 600), three calls; the ratios are
medians with their min–max. A spread (max/min of the three calls) above 1.5 makes the targets "not run".
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from checks.runners.bench.core import Bench
from checks.runners.bench.timing import median_time
from checks.runners.bench.ws_dask import make_softmax_net

FLOOR_TARGET = 1.0
ROOFLINE_TARGET = 1.3
MAX_SPREAD = 1.5


def floor_section(bench: Bench):
    from numerics.ws.activations import get_activation
    from numerics.ws.pair_tiles import TileRunner, tiles_of
    from numerics.ws.softmax import build_softmax_tiles, default_block, softmax_hessian_moments

    M, N, C, n = (30, 16, 4, 600) if bench.quick else (784, 256, 10, 5000)
    net = make_softmax_net(M, N, C, n, bench.seed)
    mach = bench.data.get("machine", {})
    rng = np.random.default_rng(bench.seed)
    m = min(n * C, 1024 if bench.quick else 4096)
    A, B, out = rng.random((m, N)), rng.random((N, m)), np.empty((m, m))
    t_shape, _ = median_time(lambda: np.matmul(A, B, out=out), reps=5)
    rate_shape = 2.0 * m * m * N / t_shape
    rate = max(rate_shape, 1e9 * mach.get("gemm_gflops", 0.0))
    bw = 1e9 * mach["triad_gbs"]  # the machine section always runs first (--only keeps it)
    walls, tiles_walls = [], []
    for _ in range(3):
        runner = TileRunner()
        t0 = time.perf_counter()
        res = softmax_hessian_moments(*net, "tanh", tiles=runner)
        walls.append(time.perf_counter() - t0)
        tiles_walls.append(runner.stats["wall_s"])
    block = default_block(C)
    W, b, V, c, X, y = net
    act = get_activation("tanh")
    tl = build_softmax_tiles(W, b, V, c, X, y, act.name, act.expr, True, block)
    flops = streamed = 0.0
    for I, J in tiles_of(n, block):
        f, s = tl.cost(min(block, n - I), min(block, n - J), off_diagonal=I != J)
        flops, streamed = flops + f, streamed + s
    naive = 2.0 * (n * C) ** 2 * N / rate
    roof = flops / rate + streamed / bw
    med, med_tiles = statistics.median(walls), statistics.median(tiles_walls)
    r: dict[str, Any] = {
        "M": M, "N": N, "C": C, "n": n, "block": block, "walls_s": walls, "tiles_walls_s": tiles_walls,
        "gemm_rate_gflops": rate / 1e9, "gemm_rate_naive_shape_gflops": rate_shape / 1e9, "naive_shape_m": m,
        "triad_gbs": bw / 1e9, "naive_flops": 2.0 * (n * C) ** 2 * N, "naive_floor_s": naive,
        "method_flops": flops, "method_bytes": streamed, "roofline_tiles_s": roof,
        "ratio_to_naive": med / naive, "ratio_to_naive_range": [min(walls) / naive, max(walls) / naive],
        "tiles_ratio_to_roofline": med_tiles / roof,
        "tiles_ratio_to_roofline_range": [min(tiles_walls) / roof, max(tiles_walls) / roof],
        "spread": max(walls) / min(walls), "trace": res.trace, "trace_sq": res.trace_sq,
    }
    bench.data["softmax_floor"] = r
    label = f"({M}, {N}), C = {C}, n = {n}"
    wide = None if r["spread"] <= MAX_SPREAD else f"the three calls spread ×{r['spread']:.2f} > ×{MAX_SPREAD}"
    for name, key, op, thr in ((f"softmax tr H, tr H² against the naive 2(nC)²N GEMM floor at {label}",
                                "ratio_to_naive", "<=", FLOOR_TARGET),
                               (f"softmax pair tiles against their own roofline at {label}",
                                "tiles_ratio_to_roofline", "<=", ROOFLINE_TARGET)):
        if wide or bench.quick:
            bench.target(name, None, op, thr, "×", None, skipped=wide or "quick sizes")
        else:
            bench.target(name, r[key], op, thr, "×", None,
                         explanation="median of three calls in this process; see the section's row")
    bench.log(f"softmax_floor {label}: {med:.2f} s = ×{r['ratio_to_naive']:.2f} the naive floor "
              f"({naive:.2f} s at {rate / 1e9:.0f} GFLOP/s); tiles ×{r['tiles_ratio_to_roofline']:.2f} their roofline")
    return r


def report(data: dict[str, Any], targets) -> list[str]:
    r = data.get("softmax_floor")
    if not r:
        return []
    lo, hi = r["ratio_to_naive_range"]
    rlo, rhi = r["tiles_ratio_to_roofline_range"]
    return ["", f"## Softmax against the naive GEMM floor: ({r['M']}, {r['N']}), C = {r['C']}, n = {r['n']}", "",
            f"Naive floor 2(nC)²N = {r['naive_flops']:.3g} flops at {r['gemm_rate_gflops']:.0f} GFLOP/s (the larger "
            f"of the square GEMM and the naive product's own shape, {r['gemm_rate_naive_shape_gflops']:.0f} "
            f"GFLOP/s at m = {r['naive_shape_m']}): **{r['naive_floor_s']:.2f} s**. The method's own count over its "
            f"tiles of {r['block']} samples: {r['method_flops']:.3g} flops in products "
            f"({r['method_flops'] / r['naive_flops']:.2f}× the naive) and {r['method_bytes'] / 1e9:.2f} GB of "
            f"element-wise passes at {r['triad_gbs']:.1f} GB/s: roofline **{r['roofline_tiles_s']:.2f} s**.", "",
            f"Measured (three calls, this process): {', '.join(f'{x:.2f}' for x in r['walls_s'])} s in all = "
            f"**×{r['ratio_to_naive']:.2f} the naive floor** (×{lo:.2f}–×{hi:.2f}); pair tiles "
            f"{', '.join(f'{x:.2f}' for x in r['tiles_walls_s'])} s = **×{r['tiles_ratio_to_roofline']:.2f} their "
            f"roofline** (×{rlo:.2f}–×{rhi:.2f})."]
