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

A named variant of the deep runs (``--name``: its section, its run folders ``--out/NAME``) with a
partial config applied to them (``--overrides``, JSON as ``asg train --config``), e.g.

    nice -n 10 python benchmarks/pixel_mario.py --seeds 3 --tabular-seeds 0 --walk-steps 0 \
        --name deep-channel --overrides '{"learner": {"diversity": {"cluster_features": "channel-standardized"}}}'

Every run is resumable (Ctrl-C / SIGTERM checkpoint; rerunning the command resumes or reuses).
Writes ``benchmarks/results/pixel_mario/pixel_mario.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import asg.envs  # noqa: F401  (registers the ids)
from asg.envs.mario import KEY, MarioState
from asg.learning.asgrl.clustering import KMeansAbstraction, channel_standardize, pool_image
from asg.learning.asgrl.deep_skills import standardize
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


WORN, UNWORN = (True,) * 4, (False,) * 4
# The terminal grid states of two landmarks: (at-bottom) by the ladder (now worn) or by the tube;
# (has-key) with or without the hidden key, the ladder worn or not (k = 4 skills each).
LANDMARK_STATES = {
    "(at-bottom)": (MarioState(pos=(6, 5), worn=WORN), MarioState(pos=(6, 7))),
    "(has-key)": tuple(MarioState(pos=KEY, has_key=True, has_hidden_key=hidden, worn=worn)
                       for hidden in (False, True) for worn in (WORN, UNWORN)),
}


def _pooled(images: np.ndarray) -> np.ndarray:
    return np.stack([pool_image(image, 8) for image in images])  # as the deep skills store them


CLUSTER_FEATURES = {
    "raw pixels (tabular skills)": lambda images: images.reshape(len(images), -1).astype(np.float64),
    "pixels (deep skills: pooled by 8, standardised per image)": lambda images: standardize(_pooled(images)),
    "channel-standardized (pooled by 8)": lambda images: channel_standardize(_pooled(images)),
}


def cluster_purity(episodes: int, seeds: int = 3) -> dict[str, Any]:
    """k-means of App. D (``KMeansAbstraction``, its incremental refits, k = 4) on the terminal images
    of each landmark's grid states seen through ``episodes`` camera episodes, per feature: purity (the
    share of records in the majority grid state of their cluster), clusters holding 2+ grid states,
    the mean distance of an image to its grid state's centroid and the smallest gap between them."""
    env = gym.make("asg/PixelMario-v0").unwrapped
    out: dict[str, Any] = {"episodes": episodes, "k": 4, "seeds": seeds, "landmarks": {}}
    for landmark, states in LANDMARK_STATES.items():
        images, truth = [], []
        for episode in range(episodes):
            env.reset(seed=1000 + episode)
            for label, state in enumerate(states):
                images.append(env.set_state(state))
                truth.append(label)
        stack, labels = np.stack(images), np.array(truth)
        rows = {}
        for name, feature in CLUSTER_FEATURES.items():
            x = feature(stack)
            purity, mixed = [], []
            for seed in range(seeds):
                km = KMeansAbstraction(4, len(x), np.random.default_rng(seed), forget_evicted=True)
                for i, row in enumerate(x):
                    km.add(i, 0, row)
                keys = km.assign(x)
                counts = [np.bincount(labels[keys == c], minlength=len(states)) for c in np.unique(keys)]
                purity.append(round(sum(int(c.max()) for c in counts) / len(x), 3))
                mixed.append(sum(int((c > 0).sum() > 1) for c in counts))
            centroids = np.stack([x[labels == j].mean(axis=0) for j in range(len(states))])
            spread = float(np.mean([np.linalg.norm(x[labels == j] - centroids[j], axis=1).mean()
                                    for j in range(len(states))]))
            gaps = np.linalg.norm(centroids[:, None] - centroids[None], axis=-1)[np.triu_indices(len(states), 1)]
            gap = float(gaps.min())
            rows[name] = {"purity": purity, "mixed_clusters": mixed, "spread": round(spread, 2),
                          "min_gap": round(gap, 2), "gap_over_spread": round(gap / spread, 2)}
        out["landmarks"][landmark] = rows
    return out


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
    variants = sorted(name for name, part in data.items() if isinstance(part, dict) and "summary" in part
                      and name not in ("deep", "tabular", "tabular-clean"))
    purity = data.get("cluster_purity")
    if purity:
        lines += [f"## k-means purity of terminal images (`--purity-episodes {purity['episodes']}`)", "",
                  f"App. D's incremental k-means, k = {purity['k']}, seeds 0..{purity['seeds'] - 1}, one image of "
                  "each grid state per camera episode; purity = share of images in their cluster's majority grid "
                  "state.", "",
                  "| landmark | features | purity per seed | clusters with 2+ states | spread | min gap "
                  "| gap / spread |",
                  "|---|---|---|---|---|---|---|"]
        for landmark, rows in purity["landmarks"].items():
            for name, r in rows.items():
                lines.append(f"| {landmark} | {name} | {r['purity']} | {r['mixed_clusters']} | {r['spread']} | "
                             f"{r['min_gap']} | {r['gap_over_spread']} |")
        lines.append("")
    for name in ("deep", *variants, "tabular", "tabular-clean"):
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
    parser.add_argument("--purity-episodes", type=int, default=0,
                        help="camera episodes of the k-means purity measurement (0: skip)")
    parser.add_argument("--name", default="deep", help="section and run-folder name of the deep runs")
    parser.add_argument("--overrides", type=json.loads, default=None,
                        help="partial config as JSON, applied to the deep runs (named in their section)")
    args = parser.parse_args(argv)
    if args.name in ("tabular", "tabular-clean"):
        parser.error(f"--name {args.name} is the tabular runs' section")
    binding = bind_domain("pixel-mario")
    previous = args.results / "pixel_mario.json"
    data: dict[str, Any] = json.loads(previous.read_text()) if previous.is_file() else {}  # parts not rerun stay
    command = "python benchmarks/pixel_mario.py " + shlex.join(argv or sys.argv[1:])
    data["command"] = command
    if args.walk_steps:
        data["distinct_images"] = distinct_images(args.walk_steps)
    if args.purity_episodes:
        data["cluster_purity"] = cluster_purity(args.purity_episodes)

    def clean_env(**kwargs: Any) -> gym.Env:
        return gym.make("asg/PixelMario-v0", render_noise="none", **kwargs)
    clean = DomainBinding(binding.name, clean_env, binding.labeler, binding.task, binding.model_path)

    def grid(name: str, seeds: list[int], steps: int, overrides: dict[str, Any], description: str) -> bool:
        start = time.perf_counter()
        keep = name not in ("tabular", "tabular-clean")

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
    jobs = [(args.name, deep_seeds, args.steps, args.overrides or {},
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
