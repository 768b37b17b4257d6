"""The one plotter: panels of named series from metrics rows, of mean curves with bands, or of bars.

Each stage describes its figure as :class:`Panel` s over its own metrics rows (the dicts it writes
to ``metrics.csv``); :func:`plot_curves` draws them side by side. Comparisons across seeds (``asg
compare``, Figure 3) give :class:`Band` s (a mean curve and its band) per panel to
:func:`plot_bands`; end-point comparisons (Figure 9) give :class:`Bars` to :func:`plot_bars`.
All use matplotlib (imported on use, ``Agg``) and write the PNG atomically.
"""
from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from asg.learning.run_dir import atomic_write


@dataclass(frozen=True)
class Panel:
    """One axes: ``series`` (metric names) against the metric ``x``; rows lacking a value are skipped."""

    x: str
    series: tuple[str, ...]
    xlabel: str
    ylabel: str = ""
    styles: tuple[str, ...] = ()  # matplotlib line styles, one per series (default solid)
    ylim: tuple[float, float] | None = None
    log_y: bool = False
    step: bool = False  # draw as a step function (values hold until the next point)
    markers: bool = False
    legend: bool = True
    labels: tuple[str, ...] = ()  # legend labels, one per series (default the series' names)


def series(rows: Sequence[dict[str, Any]], x: str, y: str) -> tuple[list[float], list[float]]:
    """The finite (x, y) pairs of the rows that have both (CSV strings or numbers)."""
    xs, ys = [], []
    for row in rows:
        value, where = row.get(y), row.get(x)
        if value in (None, "") or where in (None, ""):
            continue
        value, where = float(value), float(where)
        if math.isfinite(value) and math.isfinite(where):
            xs.append(where)
            ys.append(value)
    return xs, ys


def plot_curves(path: str | Path, rows: Sequence[dict[str, Any]], panels: Sequence[Panel], title: str = "",
                vlines: Sequence[float] = (), panel_size: tuple[float, float] = (5.5, 4.0)) -> Path:
    """Draw ``panels`` side by side from ``rows``; ``vlines`` (x values) mark phases on every panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    width, height = panel_size
    fig, axes = plt.subplots(1, len(panels), figsize=(width * len(panels), height), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        for i, name in enumerate(panel.series):
            xs, ys = series(rows, panel.x, name)
            if not xs:
                continue
            style = panel.styles[i] if i < len(panel.styles) else "-"
            kwargs: dict[str, Any] = {"label": panel.labels[i] if i < len(panel.labels) else name}
            if panel.markers:
                kwargs.update(marker="o", markersize=3 if panel.step else 2)
            if panel.step:
                ax.step(xs, ys, style, where="post", **kwargs)
            else:
                ax.plot(xs, ys, style, **kwargs)
        for x in vlines:
            ax.axvline(x, color="grey", lw=0.8, ls="--")
        if panel.log_y:
            ax.set_yscale("log")
        if panel.ylim is not None:
            ax.set_ylim(*panel.ylim)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        if panel.legend and len(panel.series) > 1:
            ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    if title:
        (fig.suptitle if len(panels) > 1 else axes[0][0].set_title)(title)
    return _save(fig, path, 100)


@dataclass(frozen=True)
class Band:
    """One mean curve and its band (over seeds): ``x``, ``mean``, ``low``, ``high`` of equal length."""

    label: str
    x: Sequence[float]
    mean: Sequence[float]
    low: Sequence[float]
    high: Sequence[float]


def plot_bands(path: str | Path, panels: Mapping[str, Sequence[Band]], title: str = "",
               xlabel: str = "environment steps", ylabel: str = "success rate",
               ylim: tuple[float, float] | None = (-0.05, 1.05), cols: int = 2,
               panel_size: tuple[float, float] = (6.0, 3.8)) -> Path:
    """One panel per entry of ``panels`` (its key is the panel's title), each band shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(len(panels), 1)
    cols = min(n, cols)
    rows = (n + cols - 1) // cols
    width, height = panel_size
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax, (name, bands) in zip(axes.flat, panels.items()):
        for band in bands:
            ax.plot(band.x, band.mean, label=band.label)
            ax.fill_between(band.x, band.low, band.high, alpha=0.2)
        ax.set_title(name)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.grid(alpha=0.3)
        if bands:
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if title:
        fig.suptitle(title)
    return _save(fig, path, 90)


@dataclass(frozen=True)
class Bars:
    """One group member's bar per category: ``values`` and their error bars ``errors`` (e.g. s.e.m.)."""

    label: str
    values: Sequence[float]
    errors: Sequence[float]


def plot_bars(path: str | Path, categories: Sequence[str], panels: Mapping[str, Sequence[Bars]], title: str = "",
              ylabel: str = "success rate", ylim: tuple[float, float] | None = (0.0, 1.05),
              panel_size: tuple[float, float] = (6.5, 4.0)) -> Path:
    """Grouped bars, one panel per entry of ``panels`` (its key the title): a group per category, a
    bar per :class:`Bars` in it, side by side."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(len(panels), 1)
    fig, axes = plt.subplots(1, n, figsize=(panel_size[0] * n, panel_size[1]), squeeze=False)
    where = list(range(len(categories)))
    for ax, (name, bars) in zip(axes.flat, panels.items()):
        width = 0.8 / max(1, len(bars))
        for i, bar in enumerate(bars):
            offset = (i - (len(bars) - 1) / 2) * width
            errors = bar.errors if any(bar.errors) else None  # one seed: no zero-length error bars
            ax.bar([x + offset for x in where], bar.values, width, yerr=errors, label=bar.label, capsize=2)
        ax.set_xticks(where, list(categories), fontsize=8)
        ax.set_title(name, fontsize=10)
        ax.set_ylabel(ylabel)
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.grid(alpha=0.3, axis="y")
        if bars:
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    return _save(fig, path, 110)


def _save(fig: Any, path: str | Path, dpi: int) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    atomic_write(Path(path), buf.getvalue())
    return Path(path)
