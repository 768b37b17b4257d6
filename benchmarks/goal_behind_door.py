"""MultiRoom-N4-S5 layouts whose goal lies right behind the last door, and how ASGRL runs end on them
(issue 40, ``learner.reach_together``).

MultiRoom places its goal on any free cell of the last room, the one just behind the last door among
them. There the step through the door makes ``(in-room-4)`` and ``(at-goal)`` true at once
(``examples/multiroom/labels.py``: a door's cell belongs to the room before it). This counts such
layouts over the reset seeds ``0 .. --layouts - 1``, and evaluates each run's frozen policy as ``asg
eval RUN --episodes N`` does (greedy on its eval seeds, ε = 0.05 on its ε seeds), its successes split
by the two kinds of layout. Of each failed episode it records where it ended: the last landmark
reached, whether it ran to MultiRoom's step limit, door 3's state, the door the agent faced (by
number, 1-3, with its state) and the last action (MiniGrid's: 5 is ``toggle``).

    python benchmarks/goal_behind_door.py NAME=RUN_DIR [NAME=RUN_DIR ...] --episodes 100 --out FILE
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
from provenance import command_line, named_path, write_result

from asg.learning.asgrl.evaluation import epsilon_eval_seeds, eval_seeds, evaluate
from asg.learning.asgrl.trainer import load_run
from asg.learning.errors import CheckpointError, DomainError

ROOT = Path(__file__).resolve().parent.parent
ENV_ID = "MiniGrid-MultiRoom-N4-S5-v1"
ROOMS = 4
END_FIELDS = ("door_3_open", "room", "facing_door", "facing_open", "last_action")  # a failed episode's end


@functools.cache
def labels_module() -> Any:
    """The example labeler's module (its map of the rooms), imported from its folder once."""
    spec = importlib.util.spec_from_file_location("multiroom_labels", ROOT / "examples" / "multiroom" / "labels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def last_door(env: Any) -> tuple[int, int]:
    """The cell of door 3, into the goal's room."""
    from minigrid.core.world_object import Door

    grid = env.grid
    return next(cell for cell, doors in labels_module().doors_to_goal(env).items()
                if doors == 1 and isinstance(grid.get(*cell), Door))


def goal_behind(env: Any) -> bool:
    """The goal of the layout ``env`` (unwrapped) holds lies on the cell right behind the last door."""
    from minigrid.core.world_object import Goal

    x, y = last_door(env)
    return any(isinstance(env.grid.get(x + dx, y + dy), Goal) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)))


def behind_door(layouts: Sequence[int]) -> list[bool]:
    """Per reset seed: the goal lies on the cell right behind the last door."""
    import minigrid  # noqa: F401  (registers the MiniGrid ids)

    env, out = gym.make(ENV_ID), []
    for seed in layouts:
        env.reset(seed=int(seed))
        out.append(goal_behind(env.unwrapped))
    env.close()
    return out


class EndStates(gym.Wrapper):
    """Where each episode ended, recorded at the next reset and by ``finish``: whether its layout has
    the goal right behind the last door, and ``END_FIELDS``."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.ends: list[dict[str, Any]] = []
        self.last_action: int | None = None
        self.running = False

    def reset(self, **kwargs: Any) -> Any:
        if self.running:
            self.ends.append(self._end())
        self.running, self.last_action = True, None
        return super().reset(**kwargs)

    def step(self, action: Any) -> Any:
        self.last_action = int(action)
        return super().step(action)

    def finish(self) -> list[dict[str, Any]]:
        """The end states so far, the running episode's last; cleared."""
        if self.running:
            self.ends.append(self._end())
        ends, self.ends, self.running = self.ends, [], False
        return ends

    def _end(self) -> dict[str, Any]:
        env, labels = self.unwrapped, labels_module()
        doors = labels.doors_to_goal(env)
        front = tuple(int(v) for v in env.front_pos)
        cell = env.grid.get(*front) if 0 <= front[0] < env.grid.width and 0 <= front[1] < env.grid.height else None
        faced = ROOMS - doors[front] if hasattr(cell, "is_open") and front in doors else None
        values = (labels.door_open(env, 3), labels.room_of_agent(env), faced,
                  bool(cell.is_open) if faced else None, self.last_action)
        return {"goal_behind_door": goal_behind(env), **dict(zip(END_FIELDS, values, strict=True))}


def episodes_of(run: Any, seeds: list[int], epsilon: float, limit: int) -> dict[str, Any]:
    """One protocol's successes per layout kind, and the failures' end states."""
    spy = EndStates(run.env)
    result = evaluate(run.learner, spy, run.binding.labeler, seeds, epsilon)
    ends = spy.finish()
    out: dict[str, Any] = {"success": result.success_rate, **{
        kind: {"successes": 0, "episodes": 0, "failed_at_limit": 0} for kind in ("goal_behind_door", "other")}}
    failures: Counter[tuple] = Counter()
    for episode, end in zip(result.episodes, ends, strict=True):
        kind = end.pop("goal_behind_door")
        cell = out["goal_behind_door" if kind else "other"]
        cell["successes"] += int(episode.success)
        cell["episodes"] += 1
        if not episode.success:
            cell["failed_at_limit"] += int(episode.steps >= limit)
            failures[(kind, episode.reached[-1] if episode.reached else None, *end.values())] += 1
    out["failures"] = [{**dict(zip(("goal_behind_door", "last_landmark", *END_FIELDS), key, strict=True)),
                        "episodes": n} for key, n in failures.most_common()]
    return out


def read_run(folder: Path, episodes: int) -> dict[str, Any]:
    """One run's greedy and ε = 0.05 episodes, split by layout kind, with the failures' end states."""
    run = load_run(folder, domain=ENV_ID)
    limit = run.binding.episode_limit  # MiniGrid's own limit, 20 steps a room
    learner = run.cfg.learner
    return {"seed": run.cfg.seed, "env_steps": run.learner.env_steps,
            "learner": {"reach_together": learner.reach_together,
                        "meta": {"lr": learner.meta.lr, "replay_batches": learner.meta.replay_batches}},
            "greedy": episodes_of(run, eval_seeds(run.cfg.seed, episodes), 0.0, limit),
            "epsilon": {"epsilon": run.cfg.final_eval_epsilon,
                        **episodes_of(run, epsilon_eval_seeds(run.cfg.seed, episodes), run.cfg.final_eval_epsilon,
                                      limit)}}


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
