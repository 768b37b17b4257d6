"""Grids of runs (methods x seeds on one domain): the paper's Figure 3 as a table and a plot.

``run_grid`` trains every (method, seed) into ``out/<method>/seed<N>/`` run directories through
the one grid runner, ``grid.run_cells`` (in this process by default, on Ray with ``jobs`` or
``ray_address``; with ``reuse``, a folder that already holds a finished run of the same resolved
config is read back, and an interrupted one is resumed from its checkpoint, so a grid continues
where it stopped); ``summarize`` reduces them to one row per method (mean greedy success over
seeds with its standard error, seeds solved, median env steps to success); ``format_table`` and
``plot_grid`` render them.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from asg.learning.asgrl.evaluation import curve_on_grid, mean_band, step_grid
from asg.learning.asgrl.grid import Cell, CellFailure, GridRun, run_cells
from asg.learning.asgrl.grid import finished_run as finished_run  # re-exported: the benchmarks read runs back
from asg.learning.asgrl.grid import grid_config as grid_config
from asg.learning.plots import Band, plot_bands
from asg.learning.registry import METHODS, DomainBinding
from asg.learning.run_dir import StageProgress, atomic_write, atomic_write_json


def run_grid(domain: str, methods: Sequence[str], seeds: Sequence[int], out: str | Path | None, *,
             steps: int | None = None, overrides: dict[str, Any] | None = None, model: str | None = None,
             binding: DomainBinding | None = None, preset: str = "asg", reuse: bool = False,
             progress: StageProgress | None = None,
             on_done: Callable[[GridRun, bool], None] | None = None,
             on_failed: Callable[[CellFailure], None] | None = None, plugin: dict[str, str] | None = None,
             jobs: int | None = None, ray_address: str | None = None) -> list[GridRun]:
    """Train every method x seed of one domain through ``grid.run_cells`` (in this process, or on
    Ray with ``jobs`` / ``ray_address``); ``progress`` hears each trained cell's episodes (its stage
    is the cell's ``trainer.stage_label``; on Ray, the cells done), ``on_done(run, reused)`` each
    finished cell, ``on_failed`` each failed one (without it the failure raises). With ``reuse``
    (needs ``out``), finished runs of the same config are read back and interrupted ones resumed."""
    cells = [Cell(domain, method, seed, preset, steps, overrides, model, plugin)
             for method in methods for seed in seeds]
    return run_cells(cells, out, reuse=reuse, binding=binding, progress=progress, on_done=on_done,
                     on_failed=on_failed, jobs=jobs, ray_address=ray_address)


def _sem(values: Sequence[float]) -> float:
    """Standard error of the mean (0 for fewer than two values)."""
    return float(statistics.stdev(values) / np.sqrt(len(values))) if len(values) > 1 else 0.0


def summarize(runs: Sequence[GridRun]) -> list[dict[str, Any]]:
    """One row per method: success mean ± s.e.m. over seeds, seeds solved, steps to success."""
    table = []
    for method in dict.fromkeys(r.method for r in runs):
        mine = [r for r in runs if r.method == method]
        rates = [r.result.success_rate for r in mine]
        solved = [r.result.steps_to_success for r in mine if r.result.steps_to_success is not None]
        sem = statistics.stdev(rates) / np.sqrt(len(rates)) if len(rates) > 1 else 0.0
        greedy = [r.result.greedy_success_rate if r.result.greedy_success_rate is not None
                  else r.result.success_rate for r in mine]
        eps = [r.result.epsilon_success_rate for r in mine if r.result.epsilon_success_rate is not None]
        table.append({
            "method": method, "label": METHODS[method].label if method in METHODS else method,
            "seeds": len(mine), "success_mean": round(float(np.mean(rates)), 4),
            "success_sem": round(float(sem), 4),
            "greedy_success_mean": round(float(np.mean(greedy)), 4), "greedy_success_sem": round(_sem(greedy), 4),
            "epsilon_success_mean": round(float(np.mean(eps)), 4) if eps else None,
            "epsilon_success_sem": round(_sem(eps), 4) if eps else None, "epsilon_seeds": len(eps),
            "seeds_succeeding": sum(rate >= 1.0 for rate in rates),
            "median_steps_to_success": int(statistics.median(solved)) if solved else None,
            "mean_env_steps": int(np.mean([r.result.env_steps for r in mine])),
            "mean_wall_seconds": round(float(np.mean([r.result.wall_seconds for r in mine])), 1),
        })
    return table


def format_table(domain: str, summary: Sequence[dict[str, Any]]) -> str:
    """A Markdown table of ``summarize`` output."""
    lines = [f"# {domain}: greedy success over seeds (Figure 3)", "",
             "| method | seeds | success (mean ± s.e.m.) | ε = 0.05 success (Sec. 5) | seeds at 1.0 "
             "| median steps to success | mean env steps | mean wall s |",
             "|---|---|---|---|---|---|---|---|"]
    for row in summary:
        steps = row["median_steps_to_success"]
        eps = (f"{row['epsilon_success_mean']:.2f} ± {row['epsilon_success_sem']:.2f}"
               if row.get("epsilon_success_mean") is not None else "—")
        lines.append(f"| {row['label']} | {row['seeds']} | {row['success_mean']:.2f} ± {row['success_sem']:.2f} "
                     f"| {eps} | {row['seeds_succeeding']}/{row['seeds']} | {steps if steps is not None else '—'} "
                     f"| {row['mean_env_steps']} | {row['mean_wall_seconds']} |")
    return "\n".join(lines) + "\n"


def plot_grid(domain: str, runs: Sequence[GridRun], path: str | Path) -> Path:
    """Mean greedy success vs env steps per method with a 95 % band over seeds (``plots.plot_bands``)."""
    total = max((r.result.env_steps for r in runs), default=1)
    grid = step_grid(max(total, 1))
    bands = []
    for method in dict.fromkeys(r.method for r in runs):
        curves = np.stack([curve_on_grid([float(x["env_steps"]) for x in r.rows],
                                         [float(x["success_rate"]) for x in r.rows], grid)
                           for r in runs if r.method == method and r.rows])
        mean, low, high = mean_band(curves)
        bands.append(Band(METHODS[method].label if method in METHODS else method, grid, mean, low, high))
    return plot_bands(path, {f"{domain}: mean over seeds, 95% band": bands}, ylabel="greedy success rate",
                      panel_size=(7.0, 4.0))


def write_report(domain: str, runs: Sequence[GridRun], out: str | Path,
                 failures: Sequence[CellFailure] = ()) -> dict[str, Any]:
    """Write ``compare.md``, ``compare.json`` and ``compare.png`` into ``out``; return the JSON. Failed
    cells, if any, are listed in both (``failed``: method, seed, one-line error)."""
    out = Path(out)
    summary = summarize(runs)
    table = format_table(domain, summary)
    if failures:
        table += "\nFailed cells:\n\n" + "".join(f"- {failure.line()}\n" for failure in failures)
    atomic_write(out / "compare.md", table.encode())
    payload: dict[str, Any] = {"domain": domain, "summary": summary, "runs": [r.result.to_json() for r in runs]}
    if failures:
        payload["failed"] = [{"method": f.method, "seed": f.seed, "error": f.error} for f in failures]
    atomic_write_json(out / "compare.json", payload)
    if any(r.rows for r in runs):
        plot_grid(domain, runs, out / "compare.png")
    return payload
