"""MultiRoom-N4-S5 layouts whose goal lies right behind the last door, and how ASGRL runs score on them
(issue 40, ``learner.reach_together``).

MultiRoom places its goal on any free cell of the last room, the one just behind the last door among
them. There the step through the door makes ``(in-room-4)`` and ``(at-goal)`` true at once
(``examples/multiroom/labels.py``: a door's cell belongs to the room before it). This counts such
layouts over the reset seeds ``0 .. --layouts - 1``, and evaluates each run's frozen policy as ``asg
eval RUN --episodes N`` does (greedy on its eval seeds, ε = 0.05 on its ε seeds), its successes split
by the two kinds of layout.

    python benchmarks/goal_behind_door.py NAME=RUN_DIR [NAME=RUN_DIR ...] --episodes 100 --out FILE
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from provenance import command_line, named_path, write_result

from asg.learning.asgrl.evaluation import epsilon_eval_seeds, eval_seeds
from asg.learning.asgrl.trainer import evaluate_run
from asg.learning.errors import CheckpointError, DomainError

ROOT = Path(__file__).resolve().parent.parent
ENV_ID = "MiniGrid-MultiRoom-N4-S5-v1"


def behind_door(layouts: Sequence[int]) -> list[bool]:
    """Per reset seed: the goal lies on the cell right behind the last door."""
    import gymnasium as gym
    import minigrid  # noqa: F401  (registers the MiniGrid ids)
    from minigrid.core.world_object import Door, Goal

    sys.path.insert(0, str(ROOT / "examples" / "multiroom"))
    from labels import doors_to_goal  # the labeler's own map of the rooms

    env, out = gym.make(ENV_ID), []
    for seed in layouts:
        env.reset(seed=int(seed))
        grid = env.unwrapped.grid
        x, y = next(cell for cell, doors in doors_to_goal(env.unwrapped).items()
                    if doors == 1 and isinstance(grid.get(*cell), Door))
        out.append(any(isinstance(grid.get(x + dx, y + dy), Goal) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))))
    env.close()
    return out


def split(episodes: Sequence[Any], behind: Sequence[bool], limit: int) -> dict[str, dict[str, int]]:
    """Successes, episodes and failures that ran to the env's step limit, on layouts with the goal
    behind the last door and on the others."""
    out = {kind: {"successes": 0, "episodes": 0, "failed_at_limit": 0} for kind in ("goal_behind_door", "other")}
    for episode, kind in zip(episodes, behind, strict=True):
        cell = out["goal_behind_door" if kind else "other"]
        cell["successes"] += int(episode.success)
        cell["episodes"] += 1
        cell["failed_at_limit"] += int(not episode.success and episode.steps >= limit)
    return out


def read_run(folder: Path, episodes: int) -> dict[str, Any]:
    """One run's greedy and ε = 0.05 successes, split by layout kind."""
    run = evaluate_run(folder, episodes=episodes)
    if run.cfg.domain != ENV_ID:
        raise DomainError(f"{folder}: a run of {run.cfg.domain}, expected {ENV_ID}")
    import gymnasium as gym

    limit = gym.make(ENV_ID).unwrapped.max_steps  # MiniGrid's own limit, 20 steps a room
    greedy = split(run.episodes, behind_door(eval_seeds(run.cfg.seed, episodes)), limit)
    noisy = split(run.epsilon_episodes, behind_door(epsilon_eval_seeds(run.cfg.seed, episodes)), limit)
    learner = run.cfg.learner
    return {"seed": run.cfg.seed, "env_steps": run.env_steps,
            "learner": {"reach_together": learner.reach_together,
                        "meta": {"lr": learner.meta.lr, "replay_batches": learner.meta.replay_batches}},
        "greedy": {"success": run.success_rate, **greedy},
        "epsilon": {"epsilon": run.cfg.final_eval_epsilon, "success": run.epsilon_success_rate, **noisy}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="*", type=named_path("RUN_DIR"), metavar="NAME=RUN_DIR")
    parser.add_argument("--episodes", type=int, default=100, help="evaluation episodes a run and protocol")
    parser.add_argument("--layouts", type=int, default=2000, help="reset seeds counted for the share of layouts")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    for option, value in (("--episodes", args.episodes), ("--layouts", args.layouts)):
        if value < 1:
            parser.error(f"{option}: expected a count >= 1, got {value}")
    runs = {}
    for name, folder in args.runs:
        try:
            runs[name] = read_run(folder, args.episodes)
        except (CheckpointError, DomainError, FileNotFoundError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    kinds = behind_door(range(args.layouts))
    layouts = {"reset_seeds": f"0..{args.layouts - 1}", "goal_behind_door": sum(kinds), "layouts": len(kinds)}
    seeds = sorted({run["seed"] for run in runs.values()})
    budget = {"env_steps": max((r["env_steps"] for r in runs.values()), default=0), "episodes": args.episodes}
    write_result(args.out, {"layouts": layouts, "runs": runs}, command_line(__file__, argv), budget, seeds, indent=2)
    print(f"goal right behind the last door: {sum(kinds)} of {len(kinds)} layouts")
    for name, run in runs.items():
        print(name, "; ".join(f"{protocol}: " + ", ".join(
            f"{kind} {c['successes']}/{c['episodes']} ({c['failed_at_limit']} failed at the step limit)"
            for kind, c in run[protocol].items() if kind in ("goal_behind_door", "other"))
            for protocol in ("greedy", "epsilon")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
