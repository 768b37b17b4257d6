"""Grids of runs (methods x seeds on one domain): the paper's Figure 3 as a table and a plot.

``run_grid`` trains every (method, seed) into ``out/<method>/seed<N>/`` run directories (with
``reuse``, a folder that already holds a finished run of the same resolved config is read back,
and an interrupted one is resumed from its checkpoint, so a grid continues where it stopped);
``summarize`` reduces them to one row per method (mean greedy success over seeds with its
standard error, seeds solved, median env steps to success); ``format_table`` and ``plot_grid``
render them. Runs are sequential: the box has two cores.
"""
from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from asg.learning.asgrl.config import TrainConfig, config_to_dict, make_config, merge_overrides
from asg.learning.asgrl.evaluation import curve_on_grid, mean_band, step_grid
from asg.learning.asgrl.trainer import TrainResult, TrainRun, train
from asg.learning.errors import ConfigError
from asg.learning.plots import Band, plot_bands
from asg.learning.registry import METHODS, DomainBinding
from asg.learning.run_dir import CHECKPOINT, CONFIG, RESULT, RunDir, StageProgress, atomic_write, atomic_write_json


@dataclass(frozen=True)
class GridRun:
    """One finished run of a grid with its evaluation curve."""

    method: str
    seed: int
    result: TrainResult
    rows: tuple[dict[str, Any], ...]


def grid_config(domain: str, method: str, seed: int, steps: int | None = None,
                overrides: dict[str, Any] | None = None, model: str | None = None,
                preset: str = "asg") -> TrainConfig:
    """The resolved config of one grid cell."""
    cfg = make_config(domain, method, preset, seed=seed, model=model)
    if overrides:
        cfg = merge_overrides(cfg, overrides)
    if steps is not None:
        cfg = merge_overrides(cfg, {"total_steps": steps})
    return cfg


def finished_run(path: str | Path, cfg: TrainConfig) -> TrainResult | None:
    """The result of a finished run of ``cfg`` in ``path``; None when there is none yet (or it was
    interrupted). ``ConfigError`` when the folder holds a run of another config."""
    folder = Path(path)
    if not (folder / CONFIG).is_file():
        return None
    saved = RunDir.open(folder).config()
    if config_to_dict(saved) != config_to_dict(cfg):
        raise ConfigError(f"{folder}: holds a run of another config; choose another folder or remove it")
    if not (folder / RESULT).is_file():
        return None
    result = TrainResult.from_json(RunDir.open(folder).read_result())
    return None if result.status == "interrupted" else result


def run_grid(domain: str, methods: Sequence[str], seeds: Sequence[int], out: str | Path | None, *,
             steps: int | None = None, overrides: dict[str, Any] | None = None, model: str | None = None,
             binding: DomainBinding | None = None, preset: str = "asg", reuse: bool = False,
             progress: StageProgress | None = None,
             on_done: Callable[[GridRun, bool], None] | None = None) -> list[GridRun]:
    """Train every method x seed; ``progress`` hears each trained cell's episodes (its stage is the
    cell's ``trainer.stage_label``) and ``on_done(run, reused)`` of each finished cell. With ``reuse``
    (needs ``out``), finished runs of the same config are read back and interrupted ones resumed."""
    runs: list[GridRun] = []
    for method in methods:
        for seed in seeds:
            cfg = grid_config(domain, method, seed, steps, overrides, model, preset)
            path = Path(out) / method / f"seed{seed}" if out is not None else None
            done = finished_run(path, cfg) if reuse and path is not None else None
            if done is not None:
                assert path is not None
                run = GridRun(method, seed, done, tuple(RunDir.open(path).read_metrics()))
            else:
                resume = bool(reuse and path is not None and (path / CHECKPOINT).is_file())
                subgoals = None
                if path is None or resume:
                    run_dir = None if path is None else RunDir.open(path)
                else:  # a new folder keeps config.json, subgoals.json and landmarks.json
                    created = TrainRun.create(path, cfg, binding)
                    run_dir, subgoals, binding = created.run_dir, created.subgoals, created.binding
                result = train(cfg, binding, run_dir=run_dir, resume=resume, progress=progress, subgoals=subgoals)
                run = GridRun(method, seed, result, tuple(run_dir.read_metrics()) if run_dir is not None else ())
            runs.append(run)
            if on_done is not None:
                on_done(run, done is not None)
            if run.result.status == "interrupted":  # Ctrl-C / SIGTERM: stop the grid, resumable
                return runs
    return runs


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
