"""Success of the scripted controller on every atomic program and on the paper's multi-step suites.

Per atomic program: N seeded episodes (seed = episode index) from the chosen initial-state
distribution, redrawn until the program's pre-condition holds, T = 50 steps, success = the
goal reward at the end (ψ_i). MultiStep-Moving (4 Move_To_Zone calls, every block to its zone)
and MultiStep-Stacking (3 Stack calls, one tower of four) start with every block on the table
and succeed when every call does. The issue's goal: >= 0.95 per atomic program.

    python benchmarks/fetch_scripted.py [--episodes 100] [--initial-state training|table] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from tqdm import tqdm

from asg.envs.fetch import FetchBlocksEnv, atomic_programs, multistep_programs, run_atomic, run_sequence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100, help="episodes per program and suite")
    parser.add_argument("--initial-state", choices=("training", "table"), default="training",
                        help="start distribution of the atomic-program episodes")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args()

    start = time.perf_counter()
    env = FetchBlocksEnv(initial_state=args.initial_state, max_steps=None)
    rows: dict[str, float] = {}
    for name in tqdm(atomic_programs(), desc="atomic programs"):
        wins = 0
        for seed in range(args.episodes):
            env.reset(seed=seed, options={"program": name})
            wins += run_atomic(env, name).success
        rows[name] = wins / args.episodes
    table_env = FetchBlocksEnv(initial_state="table", max_steps=None)
    suites: dict[str, float] = {}
    for kind in ("moving", "stacking"):
        rng = np.random.default_rng(1000)
        wins = 0
        for seed in tqdm(range(args.episodes), desc=f"MultiStep-{kind}"):
            table_env.reset(seed=seed)
            wins += run_sequence(table_env, multistep_programs(kind, rng)).success
        suites[f"MultiStep-{kind.capitalize()}"] = wins / args.episodes
    elapsed = time.perf_counter() - start

    print(f"scripted controller, {args.episodes} episodes each, atomic starts: {args.initial_state}")
    print(f"{'program':<26} success")
    for name, rate in rows.items():
        print(f"{name:<26} {rate:6.2f}")
    print(f"{'mean over atomic':<26} {np.mean(list(rows.values())):6.3f}   (min {min(rows.values()):.2f})")
    for name, rate in suites.items():
        print(f"{name:<26} {rate:6.2f}")
    print(f"wall time {elapsed:.0f} s")
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as handle:
            json.dump({"episodes": args.episodes, "initial_state": args.initial_state, "atomic": rows,
                       "suites": suites, "wall_s": elapsed}, handle, indent=2)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
