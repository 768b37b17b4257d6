"""Does cutting the episodes in flight change the policy? ASGRL's deep skills in lockstep, scored
before and after every cut (issue 40).

    python benchmarks/lockstep_cut.py --world unlockpickup --seed 0 --steps 600000 --n-envs 32 \
        --train-every 32 --out benchmarks/results/lockstep_cut/unlockpickup_te32.json

The lockstep loop (``deep.n_envs`` > 1, ``learning/asgrl/lockstep.py``) is consistent only with no
episode in flight, so it cuts every episode in flight at each periodic checkpoint (every
``checkpoint_interval`` env steps), at a stop and at the end of the budget. This trains one run of
``benchmarks/own_worlds.py``'s ASGRL config for a world (``--n-envs``, ``--train-every``,
ε = 0.05 curve points every ``--eval-every`` on ``--eval-episodes`` layouts) and, at every cut,
scores the learner just before and just after it, on the run's own curve layouts with ε = 0.05,
on 20 other layouts with ε = 0.05 and on the curve layouts greedily. A cut that teaches the
learner nothing leaves the three scores as they were. The scoring draws nothing from the
learner's generator, so the run is the one ``own_worlds.py`` trains.

Writes ``--out`` (command, commit, budget, seeds first): one row per cut and the run's result.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from own_worlds import WORLDS, asgrl_config
from provenance import command_line, write_result

from asg.learning.asgrl import lockstep
from asg.learning.asgrl.evaluation import epsilon_eval_seeds, eval_seeds, evaluate
from asg.learning.asgrl.trainer import env_max_steps, train
from asg.learning.registry import learner_env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", choices=sorted(WORLDS), default="unlockpickup")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=600_000)
    parser.add_argument("--n-envs", type=int, default=32)
    parser.add_argument("--train-every", type=int, default=None, help="deep.train_every (default: the config's)")
    parser.add_argument("--eval-every", type=int, default=25_000)
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.n_envs < 2:
        parser.error("--n-envs: the serial loop (1) cuts nothing but its last episode")

    deep: dict[str, Any] = {"n_envs": args.n_envs}
    if args.train_every is not None:
        deep["train_every"] = args.train_every
    overrides = {"eval_interval": args.eval_every, "curve_eval": "epsilon", "eval_episodes": args.eval_episodes,
                 "learner": {"deep": deep}}
    cfg, binding = asgrl_config(args.world, args.seed, args.steps, overrides)
    env_id = WORLDS[args.world][0]

    def scores(learner: Any) -> dict[str, float]:
        env = learner_env(cfg, binding, env_max_steps(cfg, learner.subgoals, binding.episode_limit))
        curve_layouts = eval_seeds(cfg.seed, cfg.eval_episodes)
        return {"curve_layouts_epsilon": evaluate(learner, env, binding.labeler, curve_layouts, 0.05).success_rate,
                "other_layouts_epsilon": evaluate(learner, env, binding.labeler,
                                                  epsilon_eval_seeds(cfg.seed, 20), 0.05).success_rate,
                "curve_layouts_greedy": evaluate(learner, env, binding.labeler, curve_layouts).success_rate}

    rows: list[dict[str, Any]] = []
    cut_all = lockstep.Lockstep.cut_all

    def scored_cut(self: lockstep.Lockstep) -> Any:
        before = scores(self.learner)
        stats = cut_all(self)
        rows.append({"env_steps": self.learner.env_steps, "episodes_cut": len(stats), "before": before,
                     "after": scores(self.learner)})
        print(json.dumps(rows[-1]), flush=True)
        return stats

    lockstep.Lockstep.cut_all = scored_cut  # type: ignore[method-assign]
    result = train(cfg, binding)
    changed = sum(row["before"] != row["after"] for row in rows)
    data = {"world": args.world, "env_id": env_id, "n_envs": args.n_envs, "train_every": cfg.learner.deep.train_every,
            "cuts": rows, "cuts_that_changed_a_score": changed, "result": result.to_json()}
    write_result(args.out, data, command_line(__file__, argv), {"env_steps": args.steps}, [args.seed])
    print(f"{len(rows)} cuts, {changed} changed a score; final greedy {result.greedy_success_rate:.2f}, "
          f"ε = 0.05 {result.epsilon_success_rate:.2f}; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
