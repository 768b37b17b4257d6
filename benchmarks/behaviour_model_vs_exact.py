"""Does the learned behaviour model know anything the goal setter does not? (AlphaNPI-X Alg. 3)

Collects fresh held-out episodes of the goal policy by Algorithm 3's rules (a seed the model was
not trained on), then scores, on the same episodes, the learned model Ω_w and the exact model Θ
(every program lands its block on Θ's target): ψ agreement split by whether the policy succeeded
or failed, and the recall and precision of predicted failures, per family.

    python benchmarks/behaviour_model_vs_exact.py [--policy P] [--model M] [--episodes 2000] [--seed 1001]

Defaults: the shipped policy and model. Writes benchmarks/results/behaviour_model_vs_exact.json.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from provenance import command_line, stamp, write_json

from asg.learning.goal_policy.evaluate import load_policy
from asg.learning.world_models.behaviour_model import (
    BEHAVIOUR_PRESETS,
    LearnedBehaviourModel,
    collect_dataset,
    compare_with_exact,
)

PRETRAINED = Path(__file__).resolve().parents[1] / "learning" / "pretrained"
KEYS = ("episodes", "true_failures", "agreement", "agreement_on_successes", "agreement_on_failures",
        "failure_recall", "failure_precision")


def _cell(value) -> str:
    return "-" if value is None else (f"{value:.3f}" if isinstance(value, float) else str(value))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, default=PRETRAINED / "fetch_goal_policy.npz")
    parser.add_argument("--model", type=Path, default=PRETRAINED / "fetch_behaviour_model.npz")
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1001, help="not the model's training seed (0)")
    parser.add_argument("--preset", default="fast", help="behaviour-model preset whose data rules to use")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/behaviour_model_vs_exact.json"))
    args = parser.parse_args()

    start = time.perf_counter()
    data = collect_dataset(load_policy(args.policy), args.episodes, args.seed, BEHAVIOUR_PRESETS[args.preset])
    report = compare_with_exact(LearnedBehaviourModel.load(args.model), data)
    seconds = time.perf_counter() - start
    print(f"{args.episodes} held-out episodes (seed {args.seed}, {args.preset} data rules), {seconds:.0f} s")
    print(f"{'model':<8} {'family':<13} " + " ".join(f"{k:>22}" for k in KEYS))
    for kind in ("exact", "learned"):
        for fam, row in report[kind].items():
            print(f"{kind:<8} {fam:<13} " + " ".join(f"{_cell(row[k]):>22}" for k in KEYS))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, stamp({"policy": str(args.policy), "model": str(args.model), "seconds": round(seconds, 1),
                                **report}, command_line(__file__), {"held_out_episodes": args.episodes}, [args.seed]))


if __name__ == "__main__":
    main()
