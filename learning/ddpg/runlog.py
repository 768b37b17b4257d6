"""Curve figures of the goal-policy and behaviour-model runs (atomic writes); the metrics CSV is
``run_dir.write_metrics`` / ``read_metrics``, re-exported here."""
from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any, Sequence

from asg.learning.run_dir import atomic_write, read_metrics, write_metrics

__all__ = ["plot_curves", "read_metrics", "write_metrics"]


def _series(rows: Sequence[dict[str, Any]], x: str, y: str) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for row in rows:
        value = row.get(y)
        if value in (None, ""):
            continue
        value = float(value)
        if not math.isnan(value):
            xs.append(float(row[x]))
            ys.append(value)
    return xs, ys


def plot_curves(path: Path, rows: Sequence[dict[str, Any]], phase1_epochs: int | None = None,
                title: str = "goal policy (DDPG+HER)") -> Path:
    """Success (train, test, per family) and critic loss / mean Q against environment steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for key, style in (("train_success", ":"), ("test_success", "-"), ("test_stack", "--"),
                       ("test_move_to_zone", "-.")):
        xs, ys = _series(rows, "env_steps", key)
        if xs:
            ax1.plot(xs, ys, style, marker="o", markersize=2, label=key)
    ax1.set_ylim(-0.05, 1.05)
    ax1.set_xlabel("environment steps")
    ax1.set_ylabel("success rate")
    ax1.legend(fontsize=8)
    for key in ("critic_loss", "q_mean", "bc_loss", "dagger_loss"):
        xs, ys = _series(rows, "env_steps", key)
        if xs:
            ax2.plot(xs, ys, label=key)
    ax2.set_xlabel("environment steps")
    ax2.legend(fontsize=8)
    if phase1_epochs and len(rows) > phase1_epochs:
        boundary = float(rows[phase1_epochs - 1]["env_steps"])
        for ax in (ax1, ax2):
            ax.axvline(boundary, color="grey", lw=0.8, ls="--")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    atomic_write(Path(path), buf.getvalue())
    return Path(path)
