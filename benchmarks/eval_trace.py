"""Where an ASGRL run's evaluation episodes end, skill run by skill run (issue 40).

A run's final figure says how many of its ε = 0.05 evaluation episodes reached the goal, and its
``metrics.csv`` how many reached each landmark. This replays the same episodes (the run's final ε
layouts, ``evaluation.epsilon_eval_seeds``, the frozen policy of its checkpoint) and records every
skill run: its landmark, skill, steps and how it ended (reached, cut at its step cap, "undone",
"violated", the env's episode over). Per run it writes: successes; each landmark's runs, cuts,
"undone" and "violated" ends, and horizon (``learner.skill_horizon``); the failures by the landmark
and the way their last run ended; and how many successes came after a cut run
(``learner.retry_timed_out``).

    python benchmarks/eval_trace.py NAME=RUN_DIR [NAME=RUN_DIR ...] --out FILE [--episodes 100]
"""
from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from provenance import command_line, named_path, write_result

from asg.learning.asgrl.evaluation import EpsilonActions, epsilon_eval_seeds
from asg.learning.asgrl.trainer import load_run
from asg.learning.errors import AsgError


def _ending(reached: bool, status: str | None, env_over: bool) -> str:
    if reached:
        return "reached"
    if env_over:
        return "episode over"
    return status or "cut"


def trace_run(folder: str, episodes: int) -> dict[str, Any]:
    """Replay ``episodes`` of the run's final ε = 0.05 evaluation and count how its skill runs ended."""
    run = load_run(folder)
    learner, cfg = run.learner, run.cfg
    names = learner.subgoals.names()
    runs: list[tuple[int, int, str]] = []  # (subgoal, steps, ending) of the episode in flight
    replay = learner._run_skill

    def traced(wrapper: Any, g: int, *args: Any) -> Any:
        out = replay(wrapper, g, *args)
        runs.append((g, out[2], _ending(out[0], wrapper.status, out[3])))
        return out

    learner._run_skill = traced
    env = EpsilonActions(run.env, cfg.final_eval_epsilon)
    per = {name: Counter() for name in names}
    failures: Counter[str] = Counter()
    successes = after_cut = 0
    for seed in epsilon_eval_seeds(cfg.seed, episodes):
        runs.clear()
        stats = learner.greedy_episode(env, run.binding.labeler, seed)
        for g, _, ending in runs:
            per[names[g]]["runs"] += 1
            per[names[g]][ending] += 1
        cut = any(ending == "cut" for _, _, ending in runs)
        if stats.success:
            successes += 1
            after_cut += cut
        else:
            g, _, ending = runs[-1]
            failures[f"{names[g]}: {ending}"] += 1
    for g, name in enumerate(names):
        per[name]["horizon"] = learner._horizon(g) or cfg.learner.skill_max_steps
    return {"seed": cfg.seed, "env_steps": learner.env_steps, "episodes": episodes,
            "epsilon": cfg.final_eval_epsilon, "successes": successes, "successes_after_a_cut_run": after_cut,
            "failures_by_last_run": dict(failures.most_common()), "landmarks": {n: dict(c) for n, c in per.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=named_path("RUN_DIR"), metavar="NAME=RUN_DIR")
    parser.add_argument("--out", required=True)
    parser.add_argument("--episodes", type=int, default=100)
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes: expected a positive count, got {args.episodes}")
    traced = {}
    for name, folder in args.runs:
        try:
            traced[name] = trace_run(str(folder), args.episodes)
        except AsgError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    budget = {"env_steps": max(r["env_steps"] for r in traced.values()), "episodes": args.episodes}
    write_result(args.out, {"runs": traced}, command_line(__file__, argv), budget,
                 sorted(r["seed"] for r in traced.values()), indent=2)
    for name, run in traced.items():
        print(f"{name}: {run['successes']}/{run['episodes']}, {run['successes_after_a_cut_run']} after a cut run; "
              f"failures {run['failures_by_last_run']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
