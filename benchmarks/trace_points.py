"""What the greedy evaluation of each curve point ran, beside how those skills did in training (issue 40).

Reads a trace of ``benchmarks/skill_trace.py`` and writes, per curve point:

* the point's success and per-landmark reach (ε = 0.05 evaluation episodes);
* the meta-controller's greedy path from the empty history: per landmark the skill it chooses, its
  value and the values of the others (``meta_choices``: first maximum, as the meta-controller
  breaks ties);
* per landmark and skill, its training runs and successes since the previous point, and in the
  last ``--window`` env steps before the point (the skill as it stood when the point was taken).

And over the trace from ``--from-steps`` on, per landmark: its failed training runs, and how many of
them ended with the episode at the env's own step limit (the skill ran out of the episode's time).

A point whose greedy path runs a skill that succeeded in under half of its (at least ``--min-runs``)
training runs in that window is flagged: that skill, as the meta-controller chose it then, was
failing in training too.

    python benchmarks/trace_points.py runs/trace/multiroom_seed0.json --window 2000 --from-steps 500000 \\
        --out benchmarks/results/own_worlds/multiroom_trace/points_seed0.json
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path
from typing import Any

from provenance import command_line, write_result


def greedy_path(point: dict[str, Any], landmarks: list[str]) -> list[dict[str, Any]]:
    """The meta-controller's greedy choices from the empty history, one per landmark (fewer where
    a history has no values yet)."""
    meta = {m["state"]: m for m in point["meta"]}
    path, history = [], ()
    for _ in landmarks:
        row = meta.get(str(history))
        if row is None:
            break
        subgoal, skill = ast.literal_eval(row["greedy"])
        path.append({"landmark": landmarks[subgoal], "skill": skill, "value": row["greedy_value"],
                     "values": row["values"]})
        history = (*history, (subgoal, skill))
    return path


def training_runs(episodes: list[dict[str, Any]], start: int, end: int) -> dict[str, list[list[int]]]:
    """Per landmark, per skill: [successes, runs] of the training runs in episodes ending in (start, end]
    (runs the trainer cut are left out: they have no verdict)."""
    out: dict[str, list[list[int]]] = {}
    for episode in episodes:
        if start < episode["env_steps"] <= end:
            for name, skill, verdict in episode["runs"]:
                if verdict == "cut":
                    continue
                counts = out.setdefault(name, [])
                while len(counts) <= skill:
                    counts.append([0, 0])
                counts[skill][0] += verdict == "reached"
                counts[skill][1] += 1
    return out


def summarise(trace: dict[str, Any], window: int, min_runs: int) -> list[dict[str, Any]]:
    landmarks = list(trace["points"][0]["skills"])
    rows, before = [], 0
    for point in trace["points"]:
        at = int(point["env_steps"])
        recent = training_runs(trace["episodes"], at - window, at)
        path = greedy_path(point, landmarks)
        weak = [step for step in path
                if (counts := recent.get(step["landmark"], [])) and step["skill"] < len(counts)
                and counts[step["skill"]][1] >= min_runs and counts[step["skill"]][0] < counts[step["skill"]][1] / 2]
        rows.append({"env_steps": at, "success": point["row"]["success_rate"],
                     "reached": {name: point["row"].get(f"reached_{name}") for name in landmarks},
                     "greedy_path": path, "since_last_point": training_runs(trace["episodes"], before, at),
                     f"last_{window}_steps": recent,
                     "greedy_runs_a_weak_skill": [f"{s['landmark']} skill {s['skill']}" for s in weak]})
        before = at
    return rows


def failures(trace: dict[str, Any], from_steps: int, limit: int) -> dict[str, dict[str, int]]:
    """Per landmark: failed training runs in episodes ending after ``from_steps``, and those whose
    episode lasted the env's whole ``limit``."""
    out: dict[str, dict[str, int]] = {}
    for episode in trace["episodes"]:
        if episode["env_steps"] <= from_steps:
            continue
        for name, _, verdict in episode["runs"]:
            if verdict == "failed":
                row = out.setdefault(name, {"failed": 0, "at_episode_limit": 0})
                row["failed"] += 1
                row["at_episode_limit"] += episode["steps"] >= limit
    return out


def episode_limit(env_id: str) -> int:
    """The env's own step limit (``max_steps`` after a reset: BabyAI levels set it there)."""
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the ids)

    env = gym.make(env_id).unwrapped
    env.reset(seed=0)
    return int(env.max_steps)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--window", type=int, default=1000)
    parser.add_argument("--min-runs", type=int, default=5)
    parser.add_argument("--from-steps", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        trace = json.loads(args.trace.read_text())
        points = summarise(trace, args.window, args.min_runs)
        limit = episode_limit(trace["env_id"])
        failed = failures(trace, args.from_steps, limit)
    except (OSError, ValueError, KeyError, IndexError) as exc:
        print(f"{args.trace}: not a skill_trace.py trace ({exc})", file=sys.stderr)
        return 2
    data = {"trace": {"command": trace.get("command"), "commit": trace.get("commit"), "world": trace.get("world")},
            "window": args.window, "min_runs": args.min_runs, "points": points,
            "failed_runs": {"from_steps": args.from_steps, "episode_limit": limit, "per_landmark": failed}}
    write_result(args.out, data, command_line(__file__, argv), trace.get("budget"), trace.get("seeds"))
    for row in points:
        path = " > ".join(f"{s['skill']}" for s in row["greedy_path"])
        print(f"{row['env_steps']:>8} success {row['success']:.1f}  greedy skills {path:12s}  "
              f"weak: {', '.join(row['greedy_runs_a_weak_skill']) or '-'}")
    for name, row in failed.items():
        print(f"{name}: {row['failed']} failed training runs after {args.from_steps} steps, "
              f"{row['at_episode_limit']} at the episode's limit of {limit} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
