"""Helpers shared by the flat E levels (flat.bad, flat.generalize, flat.approx, flat.upsilon_star).

Every interpolator in those experiments is the *flattest* one for its dictionary of directions
(``numerics.flat.flattest_outer_weights``, with a certified dual gap), so "Υ of a bad interpolator" means the
least Υ any interpolator with those directions can have; population losses are exact Gaussian expectations
(``numerics.flat.population_loss``), not test sets.

Seeds (SPEC §0): each E level fixes its :class:`checks.evidence.stats.StatementTest` at module level, before the run;
seed ``s`` of case ``k`` draws everything (data, target directions, dictionaries) from its own stream
(:func:`streams`), so the per-seed effects are independent and a quick run's seeds are the first seeds of
the full run. Figures use :mod:`checks.evidence.figures`.
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator

import numpy as np
from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator
from scipy.stats import spearmanr

from checks.evidence import figures
from checks.evidence.registry import Context
from checks.evidence.stats import bootstrap_ci

# Figures write Υ as U+03D2 (ϒ, the upsilon symbol): DejaVu Sans draws the capital letter U+03A5 exactly like a
# Latin Y, so a reader would see "Y". Summaries and details keep Υ.
UPS = "ϒ"


def directions(U: np.ndarray, m: int, rho: float, rng: np.random.Generator, *, exact: bool = False) -> np.ndarray:
    """m unit directions whose alignment ‖P_U θ̄‖ with span(U) is ≤ rho (= rho when ``exact``)."""
    d = U.shape[1]
    Q = np.linalg.qr(U.T)[0]  # orthonormal basis of span(U), d × k
    inside = rng.normal(size=(m, Q.shape[1])) @ Q.T
    inside /= np.linalg.norm(inside, axis=1)[:, None]
    out = rng.normal(size=(m, d))
    out -= (out @ Q) @ Q.T
    out /= np.linalg.norm(out, axis=1)[:, None]
    al = np.full(m, rho) if exact else rng.uniform(0, rho, size=m)
    return al[:, None] * inside + np.sqrt(1 - al**2)[:, None] * out


def loglog_slope(n, r) -> float:
    """The least-squares slope of log r against log n (nan with fewer than two finite positive points)."""
    n, r = np.asarray(n, float), np.asarray(r, float)
    ok = np.isfinite(r) & (r > 0)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(n[ok]), np.log(r[ok]), 1)[0])


def spearman(x, y) -> float:
    """Spearman's ρ of paired values (nan with fewer than three pairs or a constant side)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(spearmanr(x, y).statistic)


def streams(ctx: Context, salt: str, seeds: int, cases: int = 1) -> list[list[np.random.Generator]]:
    """``out[s][k]``: the generator of seed s, case k. Children of one ``ctx.rng(salt)`` (no salt hashing
    per seed, so no two seeds can collide); seed s's streams are the same in quick and full runs."""
    root = np.random.SeedSequence(int(ctx.rng(salt).integers(2**63)))
    return [[np.random.default_rng(c) for c in ss.spawn(cases)] for ss in root.spawn(seeds)]


def geometric_interval(per_seed_ratios: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Columnwise geometric mean of positive ratios (seeds × grid) and its bootstrap interval over seeds."""
    logs = np.log(np.asarray(per_seed_ratios, float))
    est = np.array([bootstrap_ci(col) for col in logs.T])
    return np.exp(est[:, 0]), np.exp(est[:, 1]), np.exp(est[:, 2])


def grid_axis(ax, grid, which: str = "x") -> None:
    """A log axis over a grid of sizes (n, dictionary sizes): :func:`checks.evidence.figures.log_axis`, then a labelled
    tick
    at every grid value (plain integers), so that each measured point can be read off."""
    figures.log_axis(ax, which)
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_locator(FixedLocator([float(g) for g in grid]))
    axis.set_major_formatter(FixedFormatter([f"{g:g}" for g in grid]))
    axis.set_minor_locator(NullLocator())


@contextlib.contextmanager
def blas_one_thread() -> Iterator[None]:
    """Run the block with one OpenBLAS thread in numpy's and scipy's OpenBLAS, then restore the counts.

    The flat E levels factor many small (n ≤ 256) matrices; on a shared 2-core machine a multi-threaded
    OpenBLAS waits on descheduled peers (a 128×128 Cholesky took 0.17 s instead of 1 ms), so one thread is
    both faster and steadier. Libraries that cannot be found are left alone.
    """
    import scipy.linalg  # noqa: F401  (load scipy's OpenBLAS, so that it is limited too)

    saved = []
    with contextlib.suppress(OSError):
        with open("/proc/self/maps") as fh:
            libs = sorted({p for p in (ln.split()[-1] for ln in fh) if "openblas" in p.lower() and ".so" in p})
        for path in libs:
            with contextlib.suppress(OSError):
                lib = ctypes.CDLL(path)
                for pre, suf in (("scipy_openblas_", "64_"), ("scipy_openblas_", ""), ("openblas_", "64_"),
                                 ("openblas_", "")):
                    get, put = f"{pre}get_num_threads{suf}", f"{pre}set_num_threads{suf}"
                    if hasattr(lib, get) and hasattr(lib, put):
                        saved.append((getattr(lib, put), int(getattr(lib, get)())))
                        getattr(lib, put)(ctypes.c_int(1))
                        break
    try:
        yield
    finally:
        for put, n in saved:
            put(ctypes.c_int(n))


def case_label(key: str) -> str:
    """'relu/rho=0.2' → 'ReLU, ρ ≤ 0.2'; 'leaky_relu/single' → 'LeakyReLU, single-index'."""
    names = {"relu": "ReLU", "leaky_relu": "LeakyReLU", "quadratic": "quadratic"}
    act, rest = key.split("/", 1)
    rest = {"single": "single-index", "sum": "sum of single-index"}.get(rest, rest.replace("rho=", "ρ ≤ "))
    return f"{names.get(act, act)}, {rest}"


def fmt_ci(t) -> str:
    """'+0.52 [+0.41, +0.60]' for a decided StatementTest."""
    return f"{t.estimate:+.2f} [{t.ci[0]:+.2f}, {t.ci[1]:+.2f}]"

