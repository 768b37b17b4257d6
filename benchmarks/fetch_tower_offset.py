"""How far off a goal policy sets a block on another, and how a Stack onto such a tower fares (issue 36).

Stack_All_Blocks stacks onto towers the policy itself built, where chained starts (``initial_states.py``)
build them with the exact model Θ, each placement at most ``chain_jitter`` (1 cm) off in x and y. Over
``--episodes`` table starts this measures:

- ``own``: the policy runs Stack_1_0; where ψ holds, the offset of b1 on b0 (Chebyshev, x-y) and b1's
  largest Euler angle, then the policy's Stack_2_1 onto that tower of two (its ψ);
- ``offset_D``: the same start with b1 put on b0 by Θ and moved D in x and y (each axis D/2 to D, random
  sign), then the policy's Stack_2_1 from there (gripper at its home position).

    python benchmarks/fetch_tower_offset.py --policy P [--episodes 30] [--offsets 0,0.01,0.02,0.03] [--out FILE]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from provenance import command_line, write_result

from asg.envs.fetch import FetchBlocksEnv, acting_block, goal_setter, run_atomic
from asg.envs.fetch.layout import BLOCK_EULER, BLOCK_POS
from asg.learning.npi.inference import Focused, policy_controller

FIRST, SECOND = "Stack_1_0", "Stack_2_1"  # b1 onto b0, then b2 onto b1


def quartiles(values: list[float], digits: int) -> list[float] | None:
    """The 25th, 50th, 75th and 90th percentiles, rounded; None for no values."""
    return np.percentile(values, [25, 50, 75, 90]).round(digits).tolist() if values else None


def write_rows(args: argparse.Namespace, rows: dict[str, dict], t0: float, command: str) -> None:
    """Write a policy's ``rows`` of ``args.episodes`` table starts from ``args.seed`` to ``args.out``, stamped."""
    seconds = round(time.perf_counter() - t0, 1)
    write_result(args.out, {"policy": str(args.policy), "seconds": seconds, "rows": rows}, command,
                 {"table_starts_per_row": args.episodes}, list(range(args.seed, args.seed + args.episodes)))
    print(f"wrote {args.out} ({seconds:.0f} s)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, required=True, help="a Fetch goal policy (.npz)")
    parser.add_argument("--episodes", type=int, default=30, help="table starts per row")
    parser.add_argument("--offsets", default="0,0.01,0.02,0.03", help="comma-separated offsets D (m)")
    parser.add_argument("--seed", type=int, default=1000, help="seed of the first table start")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fetch_tower_offset.json"))
    args = parser.parse_args(argv)
    try:
        offsets = [float(d) for d in args.offsets.split(",")]
    except ValueError:
        parser.error(f"--offsets: expected comma-separated numbers, got {args.offsets!r}")
    if args.episodes < 1 or any(not 0.0 <= d < 0.05 for d in offsets):
        parser.error("--episodes must be >= 1 and every offset in [0, 0.05)")
    policy = policy_controller(args.policy)
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    t0 = time.perf_counter()
    rows: dict[str, dict] = {}
    try:
        placed, tilt, stacked = [], [], 0
        for k in range(args.episodes):
            env.reset(seed=args.seed + k)
            if not run_atomic(env, FIRST, Focused(policy, acting_block(FIRST))).success:
                continue
            o = env.observation()["observation"]
            blocks, euler = o[BLOCK_POS].reshape(4, 3), o[BLOCK_EULER].reshape(4, 3)
            placed.append(float(np.abs(blocks[1, :2] - blocks[0, :2]).max()))
            tilt.append(float(np.degrees(np.abs(euler[1])).max()))
            stacked += run_atomic(env, SECOND, Focused(policy, acting_block(SECOND))).success
        rows["own"] = {"first_successes": len(placed), "episodes": args.episodes,
                       "offset_quartiles_m": quartiles(placed, 4), "largest_euler_deg_quartiles": quartiles(tilt, 1),
                       "second_successes": stacked, "second_rate": round(stacked / len(placed), 3) if placed else None}
        print(f"own      {FIRST} {len(placed)}/{args.episodes}, offset quartiles (25/50/75/90 %) "
              f"{rows['own']['offset_quartiles_m']} m, then {SECOND} {stacked}/{len(placed)}", flush=True)
        for d in offsets:
            ok = 0
            for k in range(args.episodes):
                obs, _ = env.reset(seed=args.seed + k)
                rng = np.random.default_rng([args.seed, k])
                tower = goal_setter.chain(obs["observation"][BLOCK_POS].reshape(4, 3), [FIRST], rng)
                tower[1, :2] += rng.choice([-1.0, 1.0], 2) * rng.uniform(0.5, 1.0, 2) * d
                env.reset(seed=args.seed + k, options={"blocks": tower, "program": SECOND})
                ok += run_atomic(env, SECOND, Focused(policy, acting_block(SECOND))).success
            rows[f"offset_{d:g}"] = {"offset_m": d, "episodes": args.episodes, "second_successes": ok,
                                     "second_rate": round(ok / args.episodes, 3)}
            print(f"offset {d:<5g} {SECOND} {ok}/{args.episodes}", flush=True)
    finally:
        env.close()
    write_rows(args, rows, t0, command_line(__file__, argv))


if __name__ == "__main__":
    main()
