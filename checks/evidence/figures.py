"""One figure style for every experiment: what a reviewer would put in a paper.

* :func:`figure` makes a :class:`matplotlib.figure.Figure` (no pyplot state) with fonts ≥ 9 pt;
* :func:`log_axis` gives a log axis enough tick labels (a short log axis otherwise shows one);
* :func:`rate_line` draws the paper's predicted rate beside the measured points;
* :func:`band` draws an interval as a shaded band, :func:`errorbars` as error bars;
* :func:`floor_positive` drops (and counts) values at or below a floor instead of pinning them to it,
  so that a 1e-16 does not stretch an axis;
* :func:`save` is the one way a figure is written (``<report_dir>/figures/<name>``, 150 dpi, tight).

Labels: every axis gets a label with its unit or "(dimensionless)"; Greek letters are written as such
(Υ, not Y): the style uses DejaVu Sans, which has them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogFormatterSciNotation, LogLocator, NullFormatter

FONT = 10
RC = {"font.size": FONT, "axes.titlesize": FONT + 1, "axes.labelsize": FONT, "xtick.labelsize": FONT - 1,
      "ytick.labelsize": FONT - 1, "legend.fontsize": FONT - 1, "figure.titlesize": FONT + 2,
      "font.family": "DejaVu Sans"}
MIN_FONT = 9


def figure(ncols: int = 1, nrows: int = 1, *, width: float = 4.8, height: float = 3.8):
    """A figure and its axes (a single axes, or an array), in the suite's style."""
    import matplotlib

    matplotlib.rcParams.update(RC)
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, (axes[0, 0] if axes.size == 1 else axes.ravel())


def log_axis(ax, which: str = "both") -> None:
    """Log scale with labelled ticks at every decade, and at 2 and 5 when the axis spans < 2 decades."""
    for name in ("x", "y") if which == "both" else (which,):
        axis = ax.xaxis if name == "x" else ax.yaxis
        (ax.set_xscale if name == "x" else ax.set_yscale)("log")
        lo, hi = (ax.get_xlim() if name == "x" else ax.get_ylim())
        span = np.log10(max(hi, 1e-300) / max(lo, 1e-300)) if lo > 0 and hi > 0 else 3
        if span < 2:  # a short axis: label 1, 2 and 5 of each decade, as plain numbers
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=12))
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
        else:
            axis.set_major_locator(LogLocator(base=10, subs=(1.0,), numticks=12))
            axis.set_major_formatter(LogFormatterSciNotation(base=10))
        axis.set_minor_formatter(NullFormatter())


def rate_line(ax, x: Sequence[float], slope: float, *, through: tuple[float, float], label: str,
              **kw) -> None:
    """The line y = y0 (x/x0)^slope on log–log axes through ``through = (x0, y0)``: the predicted rate."""
    x = np.asarray(x, float)
    x0, y0 = through
    ax.plot(x, y0 * (x / x0) ** slope, ls="--", color=kw.pop("color", "0.35"), lw=1.2, label=label, **kw)


def band(ax, x, lo, hi, *, label: str | None = None, color="C0", alpha=0.2) -> None:
    ax.fill_between(np.asarray(x, float), np.asarray(lo, float), np.asarray(hi, float), color=color,
                    alpha=alpha, lw=0, label=label)


def errorbars(ax, x, y, lo, hi, **kw) -> None:
    """Points with asymmetric error bars from an interval [lo, hi]."""
    y, lo, hi = (np.asarray(a, float) for a in (y, lo, hi))
    ax.errorbar(x, y, yerr=np.vstack([y - lo, hi - y]).clip(min=0), fmt=kw.pop("fmt", "o"), ms=kw.pop("ms", 4),
                capsize=kw.pop("capsize", 3), **kw)


def floor_positive(values, floor: float = 1e-12):
    """(mask, dropped): keep values > floor for a log axis, and say how many were dropped."""
    v = np.asarray(values, float)
    keep = v > floor
    return keep, int((~keep).sum())


def save(ctx, fig: Figure, name: str) -> str:
    """Write ``fig`` to ``<report_dir>/figures/<name>``; returns the report-relative path."""
    fig.savefig(ctx.figure_path(name), dpi=150)
    return f"figures/{name}"


def fonts_ok(fig: Figure) -> bool:
    """Every text on the figure is at least :data:`MIN_FONT` points (used by the tests)."""
    for t in fig.findobj(lambda o: hasattr(o, "get_fontsize") and hasattr(o, "get_text")):
        if t.get_text() and t.get_fontsize() < MIN_FONT:
            return False
    return True
