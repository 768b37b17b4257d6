"""The effect of each training lever of the ``fast`` goal-policy preset, at a fixed small budget.

Each variant trains the same short run (the four Move_To_Zone_*_ORANGE programs, ``--epochs``
epochs of 10 cycles x 4 episodes + 40 updates, seed 0), then its greedy policy is evaluated on
``--eval-episodes`` held-out episodes per program. Variants switch one lever off at a time:

- ``fast``: the preset (200 scripted demos: BC + Q-filter, demo rows in every batch, demo resets,
  BC pre-training; DAgger labels from the queryable expert; "future" HER; gamma 0.98);
- ``no-dagger``: the preset without DAgger labels (demonstrations only);
- ``no-demos``: DAgger labels, but no scripted demonstration;
- ``no-demos-no-dagger``: neither (what the paper trained with);
- ``no-pretrain``, ``no-demo-resets``, ``her-final``: ``no-dagger`` without BC pre-training of
  the actor, with every episode starting from a reset, or with the paper's "final" HER strategy.

    python benchmarks/ddpg_levers.py --epochs 10 --json benchmarks/results/ddpg_levers.json

Budgets are far below a real run's (a full run is 180 epochs of 40 cycles on 20 programs); the
point is the ordering at equal environment steps, on the same machine in the same session.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch
from provenance import command_line, stamp, write_json

from asg.learning.goal_policy import config as C
from asg.learning.goal_policy.evaluate import evaluate_atomic
from asg.learning.goal_policy.trainer import train_goal_policy

PROGRAMS = tuple(f"Move_To_Zone_{b}_ORANGE" for b in range(4))


def variants(epochs: int) -> dict[str, C.GoalPolicyConfig]:
    fast = C.fast()
    base = replace(fast, schedule=replace(fast.schedule, epochs_phase1=epochs - epochs // 5, epochs_phase2=epochs // 5,
                                          cycles=10, threads=1, eval_episodes=10, programs=PROGRAMS))
    no_dagger = replace(base, demos=replace(base.demos, dagger=False))
    return {
        "fast": base,
        "no-dagger": no_dagger,
        "no-demos": replace(base, demos=replace(base.demos, episodes=0)),
        "no-demos-no-dagger": replace(no_dagger, demos=replace(no_dagger.demos, episodes=0)),
        "no-pretrain": replace(no_dagger, demos=replace(no_dagger.demos, pretrain_steps=0)),
        "no-demo-resets": replace(no_dagger, demos=replace(no_dagger.demos, reset_prob=0.0)),
        "her-final": replace(no_dagger, replay=replace(no_dagger.replay, strategy="final")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--eval-episodes", type=int, default=25, help="greedy episodes per program")
    parser.add_argument("--only", default=None, help="comma-separated variant names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    chosen = variants(args.epochs)
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k in args.only.split(",")}
    print(f"# python benchmarks/ddpg_levers.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print(f"{'variant':<16} {'success':>8} {'env steps':>10} {'train s':>8}", flush=True)
    rows = {}
    for name, cfg in chosen.items():
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            result = train_goal_policy(cfg, Path(tmp) / "run", seed=args.seed)
            wall = time.perf_counter() - start
            out = evaluate_atomic(Path(tmp) / "run", episodes=args.eval_episodes, seed=args.seed + 1,
                                  programs=PROGRAMS)
        rows[name] = {"success": out["mean_success"], "env_steps": result["env_steps"], "train_seconds": round(wall, 1),
                      "programs": {p: r["success_rate"] for p, r in out["programs"].items()}}
        print(f"{name:<16} {out['mean_success']:>8.2f} {result['env_steps']:>10} {wall:>8.0f}", flush=True)
    if args.json:
        write_json(args.json, stamp({"epochs": args.epochs, "programs": PROGRAMS, "rows": rows},
                                    command_line(__file__, argv), {"epochs": args.epochs}, [args.seed]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
