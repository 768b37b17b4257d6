"""Pixel-Mario from camera images: deep ASGRL skills with k-means diversity vs a byte-keyed table.

Two measurements on ``asg/PixelMario-v0`` with its default ``render_noise="camera"``:

1. ``deep``: ASGRL with ``skills="deep"`` (one small Q-network, a head per skill) and App. D's
   k-means counts of landmark images, seeds 0..N-1, trained (or resumed) through
   ``experiments.run_grid`` into ``--out``; the mean greedy success over seeds is the issue's
   target (>= 0.9 over 10 seeds).
2. ``tabular``: the same ASGRL with the tabular skills, whose Q table keys on the image bytes,
   on the camera render and, as the control, on the noise-free render (``render_noise="none"``,
   where it is exactly tabular Mario), same seeds and budget. These runs keep no run folder: the
   state index holds every distinct image (~17 kB each), so a checkpoint would be gigabytes. Plus
   how many of the observations of a random walk are distinct images vs distinct grid states.

    nice -n 10 python benchmarks/pixel_mario.py --seeds 10 --out runs/pixel_mario
    python benchmarks/pixel_mario.py --seeds 0 --tabular-seeds 0 --report-only --out runs/pixel_mario

Every run is resumable (Ctrl-C / SIGTERM checkpoint; rerunning the command resumes or reuses).
Writes ``benchmarks/results/pixel_mario/pixel_mario.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import asg.envs  # noqa: F401  (registers the ids)
from asg.learning.asgrl.experiments import GridRun, run_grid
from asg.learning.registry import DomainBinding, bind_domain

RESULTS = Path(__file__).resolve().parent / "results" / "pixel_mario"
# Evaluation every 10k steps over 5 greedy episodes (asg train's default: 5k x 10): a failing greedy
# episode runs 4 x 700 steps of network forwards, which would cost more than the training itself.
SCHEDULE = {"eval_interval": 10_000, "eval_episodes": 5, "checkpoint_interval": 20_000}


def distinct_images(steps: int, seed: int = 0) -> dict[str, Any]:
    """A uniform random walk on camera Pixel-Mario: distinct images vs distinct grid states."""
    env = gym.make("asg/PixelMario-v0", max_steps=2801)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    images, states = {obs.tobytes()}, {env.unwrapped.hashable_state()}
    for _ in range(steps):
        obs, _, terminated, truncated, _ = env.step(int(rng.integers(4)))
        if terminated or truncated:
            obs, _ = env.reset()
        images.add(obs.tobytes())
        states.add(env.unwrapped.hashable_state())
    return {"steps": steps, "distinct_images": len(images), "distinct_states": len(states),
            "images_per_observation": round(len(images) / (steps + 1), 4)}


def _row(run: GridRun) -> dict[str, Any]:
    r = run.result
    return {"seed": run.seed, "success": r.success_rate, "epsilon_success": r.epsilon_success_rate,
            "env_steps": r.env_steps, "steps_to_success": r.steps_to_success, "status": r.status,
            "wall_seconds": round(r.wall_seconds, 1),
            "reached": (r.final_episode or {}).get("reached", [])}


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    done = [row for row in rows if row["status"] != "interrupted"]
    values = [row["success"] for row in done]
    sem = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
    firsts = [row["steps_to_success"] for row in done if row["steps_to_success"] is not None]
    return {"n": len(done), "mean_success": round(statistics.mean(values), 4) if values else None,
            "sem": round(sem, 4), "solved": sum(v >= 1.0 for v in values),
            "median_steps_to_success": statistics.median(firsts) if firsts else None}


def write_report(data: dict[str, Any], out: Path) -> None:
    """``pixel_mario.json`` and a Markdown table beside it."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "pixel_mario.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    lines = ["# Pixel-Mario from camera images (`benchmarks/pixel_mario.py`)", "",
             f"Last command: `{data['command']}` (each section names its own)", ""]
    walk = data.get("distinct_images")
    if walk:
        lines += [f"Random walk of {walk['steps']} steps: {walk['distinct_images']} distinct images for "
                  f"{walk['distinct_states']} distinct grid states ({walk['images_per_observation']:.4f} new "
                  "images per observation).", ""]
    for name in ("deep", "tabular", "tabular-clean"):
        part = data.get(name)
        if not part:
            continue
        s = part["summary"]
        lines += [f"## {name} skills ({part['description']})", "", f"`{part.get('command', data['command'])}`, "
                  f"{part['steps']} env steps per run, overrides `{json.dumps(part['overrides'])}`", "",
                  f"mean greedy success {s['mean_success']} ± {s['sem']} (s.e.m.) over n = {s['n']} seeds; "
                  f"{s['solved']} at 1.0; median env steps to the first 1.0: {s['median_steps_to_success']}", "",
                  "| seed | greedy | ε=0.05 | env steps | first 1.0 at | status | wall s "
                  "| final greedy episode reached |",
                  "|---|---|---|---|---|---|---|---|"]
        for row in part["runs"]:
            lines.append(f"| {row['seed']} | {row['success']:.2f} | {row['epsilon_success']} | {row['env_steps']} | "
                         f"{row['steps_to_success']} | {row['status']} | {row['wall_seconds']} | "
                         f"{' '.join(row['reached']) or '-'} |")
        lines.append("")
    (out / "pixel_mario.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="deep-skill seeds 0..N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=300_000, help="env-step budget of a deep run")
    parser.add_argument("--tabular-seeds", type=int, default=2, help="byte-keyed table seeds 0..N-1")
    parser.add_argument("--tabular-steps", type=int, default=100_000, help="env-step budget of a table run")
    parser.add_argument("--walk-steps", type=int, default=20_000, help="random-walk steps for distinct images")
    parser.add_argument("--out", type=Path, default=Path("runs/pixel_mario"), help="run directories")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--order", choices=("deep-first", "tabular-first"), default="deep-first")
    args = parser.parse_args(argv)
    binding = bind_domain("pixel-mario")
    previous = args.results / "pixel_mario.json"
    data: dict[str, Any] = json.loads(previous.read_text()) if previous.is_file() else {}  # parts not rerun stay
    command = "python benchmarks/pixel_mario.py " + " ".join(argv or sys.argv[1:])
    data["command"] = command
    if args.walk_steps:
        data["distinct_images"] = distinct_images(args.walk_steps)

    def clean_env(**kwargs: Any) -> gym.Env:
        return gym.make("asg/PixelMario-v0", render_noise="none", **kwargs)
    clean = DomainBinding(binding.name, clean_env, binding.labeler, binding.task, binding.model_path)

    def grid(name: str, seeds: list[int], steps: int, overrides: dict[str, Any], description: str) -> bool:
        start = time.perf_counter()
        keep = name == "deep"

        def done(run: GridRun, reused: bool) -> None:
            row = _row(run)
            print(f"{name} seed {run.seed}: success {row['success']:.2f} steps {row['env_steps']} "
                  f"first@{row['steps_to_success']} [{row['status']}]{' (reused)' if reused else ''}", flush=True)
        runs = run_grid("pixel-mario", ["asgrl"], seeds, args.out / name if keep else None, steps=steps,
                        overrides={**SCHEDULE, **overrides}, binding=clean if name == "tabular-clean" else binding,
                        reuse=keep, on_done=done)
        rows = [_row(run) for run in runs]
        data[name] = {"command": command, "description": description, "steps": steps,
                      "overrides": {**SCHEDULE, **overrides},
                      "runs": rows, "summary": _summary(rows), "seconds": round(time.perf_counter() - start, 1)}
        write_report(data, args.results)
        return all(row["status"] != "interrupted" for row in rows)

    deep_seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    jobs = [("deep", deep_seeds, args.steps, {},
             "one Q-network, a head per skill, k-means diversity over landmark images (App. D)"),
            ("tabular", list(range(args.tabular_seeds)), args.tabular_steps, {"learner": {"skills": "tabular"}},
             "Q tables keyed on the image bytes, k-means diversity, camera render"),
            ("tabular-clean", list(range(args.tabular_seeds)), args.tabular_steps, {"learner": {"skills": "tabular"}},
             "the same tables on the noise-free render (render_noise=\"none\"), the control")]
    if args.order == "tabular-first":
        jobs = jobs[1:] + jobs[:1]
    for name, seeds, steps, overrides, description in jobs:
        if seeds and not grid(name, seeds, steps, overrides, description):
            return 130  # interrupted: rerun the command to resume
    write_report(data, args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
