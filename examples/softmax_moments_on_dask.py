"""The softmax Hessian's tr H, tr H² and Wolkowicz–Styan bounds of a PyTorch model, with the sample-pair sums on a
local Dask cluster: a journal to resume from, a progress line, and the same bits as the run in this process.

    python examples/softmax_moments_on_dask.py [n] [workers]

n samples (default 3000) of 64-dimensional inputs, a Linear(64, 128) → Tanh → Linear(128, 10) model. Interrupt it
and run it again: the tasks already in ``reports/tiles`` are kept (``resume=True``).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from numerics.ws import softmax_hessian_moments_from_module
from numerics.ws.pair_tiles import ProgressLine, TileRunner


def main(n: int = 3000, workers: int = 2, journal: str = "reports/tiles") -> dict:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(), torch.nn.Linear(128, 10)).double()
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(n, 64)), rng.integers(0, 10, n)
    t0 = time.perf_counter()
    here = softmax_hessian_moments_from_module(model, X, y)
    t_here = time.perf_counter() - t0
    with TileRunner.local(workers, journal=journal, resume=True, progress=ProgressLine(print, every=2.0)) as tiles:
        t0 = time.perf_counter()
        m = softmax_hessian_moments_from_module(model, X, y, tiles=tiles)
        t_dask, stats = time.perf_counter() - t0, tiles.stats
    B = m.bounds
    print(f"D = {m.dim}, n = {n}: tr H = {m.trace:.12g}, tr H² = {m.trace_sq:.12g}")
    print(f"WS bounds: {B.lmax_lower:.6g} ≤ λ_max ≤ λ_sup = {B.lmax_upper:.6g}")
    print(f"this process {t_here:.2f} s; {workers} Dask worker(s) {t_dask:.2f} s ({stats['tasks_run']} tasks run, "
          f"{stats['tasks_resumed']} resumed); the same bits: {(m.trace, m.trace_sq) == (here.trace, here.trace_sq)}")
    return {"here": here, "dask": m, "stats": stats}


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
