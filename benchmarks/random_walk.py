"""How often a uniformly random walk reaches each ASGRL world's goal (the trivial peer of Figure 3).

A flat learner that bootstraps from its first success (Goal-Q, Landmark-Shaping) needs the goal
to be found by exploration at all; this measures that chance per episode of the flat baselines'
length (``DomainSpec.max_episode_steps``), with the env's own success reward.

    python benchmarks/random_walk.py [--episodes 2000] [--seed 0] [--out benchmarks/results/random_walk.json]

Prints, per domain, the goal rate with a 95 % Wilson interval and the median steps to the goal
of the walks that reach it.

``--epsilons 1,0.6,0.3,0.05`` walks as a flat Q-learner does before its first reward, when its
Q-table is all zeros: with probability ε a uniform action, else the first maximum of the table,
action 0 (the official Q_Learning's first-index ties; ``QConfig.random_ties`` off). ε = 1 is the
uniform walk.

    python benchmarks/random_walk.py --epsilons 1,0.6,0.3,0.05 --episodes 400 --domains mario,minecraft \
        --out benchmarks/results/figure3/tie_walk.json
"""
from __future__ import annotations

import argparse
import math
import statistics
import time
from pathlib import Path

import numpy as np
from provenance import stamp, write_json

from asg.envs.domains import DOMAINS

WORLDS = ("household-v1", "household-v2", "minecraft", "mario")  # Pixel-Mario shares Mario's dynamics


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval of a binomial rate."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def random_walks(name: str, episodes: int, seed: int, epsilon: float = 1.0) -> dict:
    """Goal rate and steps to the goal of ``episodes`` walks in domain ``name``: each step a uniform
    action with probability ``epsilon``, else action 0 (an all-zero Q-table's first maximum)."""
    spec = DOMAINS[name]
    env = spec.make_env()
    rng = np.random.default_rng(seed)
    hits, lengths = 0, []
    start = time.perf_counter()
    for episode in range(episodes):
        env.reset(seed=seed * 1_000_003 + episode)
        for step in range(1, spec.max_episode_steps + 1):
            explore = epsilon >= 1.0 or rng.random() < epsilon
            action = int(rng.integers(env.action_space.n)) if explore else 0
            _, reward, terminated, truncated, _ = env.step(action)
            if reward > 0:
                hits += 1
                lengths.append(step)
                break
            if terminated or truncated:
                break
    env.close()
    low, high = wilson(hits, episodes)
    return {"domain": name, "epsilon": epsilon, "episodes": episodes, "episode_steps": spec.max_episode_steps,
            "goal_rate": hits / episodes, "ci95": [low, high],
            "median_steps_to_goal": statistics.median(lengths) if lengths else None,
            "seconds": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--epsilons", default="1", help="comma-separated ε values (1: the uniform walk)")
    parser.add_argument("--domains", default=",".join(WORLDS))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/random_walk.json"))
    args = parser.parse_args()
    epsilons = [float(e) for e in args.epsilons.split(",")]
    rows = [random_walks(name, args.episodes, args.seed, eps) for name in args.domains.split(",") for eps in epsilons]
    print(f"{'domain':<14} {'epsilon':>7} {'goal rate':>9}  {'95% CI':<15} {'median steps':>12}  "
          f"(episodes of {rows[0]['episode_steps']} steps)")
    for row in rows:
        ci = f"[{row['ci95'][0]:.3f}, {row['ci95'][1]:.3f}]"
        steps = "-" if row["median_steps_to_goal"] is None else f"{row['median_steps_to_goal']:.0f}"
        print(f"{row['domain']:<14} {row['epsilon']:>7.2f} {row['goal_rate']:>9.4f}  {ci:<15} {steps:>12}")
    command = (f"python benchmarks/random_walk.py --episodes {args.episodes} --seed {args.seed} "
               f"--epsilons {args.epsilons} --domains {args.domains}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.out, stamp({"rows": rows}, command, {"episodes": args.episodes}, [args.seed]))


if __name__ == "__main__":
    main()
