"""The one curve plotter of a run folder: panels of named series from metrics rows, as a PNG.

Each stage describes its figure as :class:`Panel` s over its own metrics rows (the dicts it writes
to ``metrics.csv``); :func:`plot_curves` draws them side by side with matplotlib (imported on
use, ``Agg``) and writes the PNG atomically.
"""
from __future__ import annotations

import io
import math
from collections.abc import Sequence
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
            kwargs: dict[str, Any] = {"label": name}
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
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    atomic_write(Path(path), buf.getvalue())
    return Path(path)
