"""Grids of runs (methods x seeds on one domain): the paper's Figure 3 as a table and a plot.

``run_grid`` trains every (method, seed) into ``out/<method>/seed<N>/`` run directories;
``summarize`` reduces them to one row per method (mean greedy success over seeds with its
standard error, seeds solved, median env steps to success); ``format_table`` and ``plot_grid``
render them. Runs are sequential: the box has two cores.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from asg.learning.config import TrainConfig, make_config, merge_overrides
from asg.learning.evaluation import curve_on_grid, mean_band, step_grid
from asg.learning.registry import METHODS, DomainBinding
from asg.learning.run_dir import RunDir, atomic_write, atomic_write_json
from asg.learning.trainer import Progress, TrainResult, train


@dataclass(frozen=True)
class GridRun:
    """One finished run of a grid with its evaluation curve."""

    method: str
    seed: int
    result: TrainResult
    rows: tuple[dict[str, Any], ...]


def grid_config(domain: str, method: str, seed: int, steps: int | None = None,
                overrides: dict[str, Any] | None = None, model: str | None = None) -> TrainConfig:
    """The resolved config of one grid cell."""
    cfg = make_config(domain, method, seed=seed, model=model)
    if overrides:
        cfg = merge_overrides(cfg, overrides)
    if steps is not None:
        cfg = merge_overrides(cfg, {"total_steps": steps})
    return cfg


def run_grid(domain: str, methods: Sequence[str], seeds: Sequence[int], out: str | Path | None, *,
             steps: int | None = None, overrides: dict[str, Any] | None = None, model: str | None = None,
             binding: DomainBinding | None = None,
             on_start: Callable[[TrainConfig], Progress | None] | None = None) -> list[GridRun]:
    """Train every method x seed; ``on_start(cfg)`` may return a progress callback."""
    runs: list[GridRun] = []
    for method in methods:
        for seed in seeds:
            cfg = grid_config(domain, method, seed, steps, overrides, model)
            run_dir = RunDir.create(Path(out) / method / f"seed{seed}", cfg) if out is not None else None
            progress = on_start(cfg) if on_start is not None else None
            result = train(cfg, binding, run_dir=run_dir, progress=progress)
            rows = tuple(run_dir.read_metrics()) if run_dir is not None else ()
            runs.append(GridRun(method, seed, result, rows))
    return runs


def summarize(runs: Sequence[GridRun]) -> list[dict[str, Any]]:
    """One row per method: success mean ± s.e.m. over seeds, seeds solved, steps to success."""
    table = []
    for method in dict.fromkeys(r.method for r in runs):
        mine = [r for r in runs if r.method == method]
        rates = [r.result.success_rate for r in mine]
        solved = [r.result.steps_to_success for r in mine if r.result.steps_to_success is not None]
        sem = statistics.stdev(rates) / np.sqrt(len(rates)) if len(rates) > 1 else 0.0
        table.append({
            "method": method, "label": METHODS[method].label if method in METHODS else method,
            "seeds": len(mine), "success_mean": round(float(np.mean(rates)), 4),
            "success_sem": round(float(sem), 4),
            "seeds_succeeding": sum(rate >= 1.0 for rate in rates),
            "median_steps_to_success": int(statistics.median(solved)) if solved else None,
            "mean_env_steps": int(np.mean([r.result.env_steps for r in mine])),
            "mean_wall_seconds": round(float(np.mean([r.result.wall_seconds for r in mine])), 1),
        })
    return table


def format_table(domain: str, summary: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of ``summarize`` output."""
    lines = [f"# {domain}: greedy success over seeds (Figure 3)", "",
             "| method | seeds | success (mean ± s.e.m.) | seeds at 1.0 | median steps to success "
             "| mean env steps | mean wall s |",
             "|---|---|---|---|---|---|---|"]
    for row in summary:
        steps = row["median_steps_to_success"]
        lines.append(f"| {row['label']} | {row['seeds']} | {row['success_mean']:.2f} ± {row['success_sem']:.2f} "
                     f"| {row['seeds_succeeding']}/{row['seeds']} | {steps if steps is not None else '—'} "
                     f"| {row['mean_env_steps']} | {row['mean_wall_seconds']} |")
    return "\n".join(lines) + "\n"


def plot_grid(domain: str, runs: Sequence[GridRun], path: str | Path) -> Path:
    """Mean greedy success vs env steps per method with a 95 % band over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    total = max((r.result.env_steps for r in runs), default=1)
    grid = step_grid(max(total, 1))
    fig, ax = plt.subplots(figsize=(7, 4))
    for method in dict.fromkeys(r.method for r in runs):
        curves = np.stack([curve_on_grid([float(x["env_steps"]) for x in r.rows],
                                         [float(x["success_rate"]) for x in r.rows], grid)
                           for r in runs if r.method == method and r.rows])
        mean, low, high = mean_band(curves)
        ax.plot(grid, mean, label=METHODS[method].label if method in METHODS else method)
        ax.fill_between(grid, low, high, alpha=0.2)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("greedy success rate")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"{domain}: mean over seeds, 95% band")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    target = Path(path)
    atomic_write(target, buf.getvalue())
    return target


def write_report(domain: str, runs: Sequence[GridRun], out: str | Path) -> dict[str, Any]:
    """Write ``compare.md``, ``compare.json`` and ``compare.png`` into ``out``; return the JSON."""
    out = Path(out)
    summary = summarize(runs)
    atomic_write(out / "compare.md", format_table(domain, summary).encode())
    payload = {"domain": domain, "summary": summary,
               "runs": [r.result.to_json() for r in runs]}
    atomic_write_json(out / "compare.json", payload)
    if any(r.rows for r in runs):
        plot_grid(domain, runs, out / "compare.png")
    return payload
