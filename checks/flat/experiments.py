"""Helpers shared by the flat E levels (flat.bad, flat.generalize, flat.approx, flat.upsilon_star).

Every interpolator in those experiments is the *flattest* one for its dictionary of directions
(``numerics.flat.flattest_outer_weights``, with a certified dual gap), so "Υ of a bad interpolator" means the
least Υ any interpolator with those directions can have; population losses are exact Gaussian expectations
(``numerics.flat.population_loss``), not test sets. Each experiment states its pass criterion in its summary.
"""

from __future__ import annotations

import math

import numpy as np

from checks.registry import Context
from checks.tol import TOL


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
    """The least-squares slope of log r against log n."""
    return float(np.polyfit(np.log(n), np.log(r), 1)[0])


def spearman_interval(rho: float, n: int) -> tuple[float, float]:
    """Two-sided 95% confidence interval of a Spearman correlation of ``n`` independent pairs (Fisher z with
    variance 1.06/(n − 3)); (−1, 1) when n ≤ 3 or the correlation is not finite, (ρ, ρ) when |ρ| = 1."""
    if n <= 3 or not math.isfinite(rho):
        return -1.0, 1.0
    if abs(rho) >= 1:
        return rho, rho
    z, half = math.atanh(rho), TOL["flat_verdict_z"] * math.sqrt(1.06 / (n - 3))
    return math.tanh(z - half), math.tanh(z + half)


def figure(ctx: Context, name: str):
    """(pyplot on the Agg backend, the path of figure ``name`` in the report)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt, ctx.figure_path(name)


def finish(plt, fig, ax, path, xlabel: str, ylabel: str, legend_size: int = 7) -> None:
    """Label a one-axes figure, add its legend, lay it out and save it (dpi 110)."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=legend_size)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
