"""The goal policy's figure (success and losses against environment steps) through the one curve
plotter, ``learning.plots``; the metrics CSV is ``run_dir.write_metrics`` / ``read_metrics``, re-exported here."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from asg.learning import plots as curves
from asg.learning.plots import Panel
from asg.learning.run_dir import read_metrics, write_metrics

__all__ = ["plot_curves", "read_metrics", "write_metrics"]


def plot_curves(path: Path, rows: Sequence[dict[str, Any]], phase1_epochs: int | None = None,
                title: str = "goal policy (DDPG+HER)") -> Path:
    """Success (train, test, per family) and critic loss / mean Q against environment steps."""
    success = Panel("env_steps", ("train_success", "test_success", "test_stack", "test_move_to_zone"),
                    "environment steps", "success rate", styles=(":", "-", "--", "-."), ylim=(-0.05, 1.05),
                    markers=True)
    losses = Panel("env_steps", ("critic_loss", "q_mean", "bc_loss", "dagger_loss"), "environment steps")
    phases = [float(rows[phase1_epochs - 1]["env_steps"])] if phase1_epochs and len(rows) > phase1_epochs else []
    return curves.plot_curves(path, rows, [success, losses], title, vlines=phases)
