"""A goal policy's Stack onto a block in a zone, with and without the other zone's tower (issue 36).

Clean_And_Stack ends with a Stack onto a block the search has just moved into a zone, while the other
zone already holds a tower of two. Over ``--episodes`` table starts per row, with random blocks
a, b, c, d (a fresh draw per episode) and the Stack's zone Z, this runs ``Stack_b_a`` after:

- ``alone``: the policy's ``Move_To_Zone_a_Z``;
- ``theta``: Θ's ``Move_To_Zone_c_Y``, ``Stack_d_c``, ``Move_To_Zone_a_Z`` (each 1 cm off at most), the
  gripper at its home position: the exact model's own setting, Y the other zone;
- ``own``: the policy's own calls of ``theta``, in turn (episodes where one fails are counted apart).

For each row and each Z it counts the Stack's ψ, its goal test (the 5 cm ball), and whether the block
is still held at the end.

    python benchmarks/fetch_zone_stack.py --policy P [--episodes 60] [--out FILE]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from fetch_tower_offset import write_rows
from provenance import command_line

from asg.envs.fetch import FetchBlocksEnv, acting_block, goal_setter, run_atomic, state_atoms
from asg.envs.fetch.layout import BLOCK_POS, ZONES
from asg.learning.npi.inference import Focused, policy_controller

ROWS = ("alone", "theta", "own")
JITTER = 0.01  # Θ's placements, as the chained starts (initial_states.py)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, required=True, help="a Fetch goal policy (.npz)")
    parser.add_argument("--episodes", type=int, default=60, help="table starts per row and zone")
    parser.add_argument("--seed", type=int, default=5000, help="seed of the first table start")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fetch_zone_stack.json"))
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes must be >= 1")
    policy = policy_controller(args.policy)
    env = FetchBlocksEnv(initial_state="table", max_steps=None)

    def call(name: str) -> tuple[bool, bool, bool]:
        """The policy runs ``name``: its goal test, ψ, and whether a block is held after it."""
        run = run_atomic(env, name, Focused(policy, acting_block(name)))
        obs = env.observation()["observation"]
        return run.success, goal_setter.post_holds(obs, name), any(a.predicate == "holding" for a in state_atoms(obs))

    t0, rows = time.perf_counter(), {}
    try:
        zones = sorted(ZONES)
        for z_index, zone in enumerate(zones):
            other = zones[1 - z_index].upper()
            for row in ROWS:
                count = {"episodes": args.episodes, "setting_failed": 0, "stacks": 0, "psi": 0, "goal_test": 0,
                         "held_after": 0}
                for k in range(args.episodes):
                    obs, _ = env.reset(seed=args.seed + k)
                    rng = np.random.default_rng([args.seed, k, ROWS.index(row), z_index])
                    a, b, c, d = (int(x) for x in rng.permutation(4))
                    before = [f"Move_To_Zone_{c}_{other}", f"Stack_{d}_{c}"] if row != "alone" else []
                    before.append(f"Move_To_Zone_{a}_{zone.upper()}")
                    if row == "theta":
                        blocks = goal_setter.chain(obs["observation"][BLOCK_POS].reshape(4, 3), before, rng, JITTER)
                        env.reset(seed=args.seed + k, options={"blocks": blocks})
                    elif not all(call(name)[1] for name in before):
                        count["setting_failed"] += 1
                        continue
                    goal_test, psi, held = call(f"Stack_{b}_{a}")
                    count["stacks"] += 1
                    count["psi"] += psi
                    count["goal_test"] += goal_test
                    count["held_after"] += held
                stacks = max(count["stacks"], 1)
                count.update({f"{key}_rate": round(count[key] / stacks, 3)
                              for key in ("psi", "goal_test", "held_after")})
                rows[f"{zone}_{row}"] = count
                print(f"{zone:<6} {row:<5} Stack psi {count['psi']}/{count['stacks']}, goal test {count['goal_test']}, "
                      f"held after {count['held_after']} ({count['setting_failed']} settings failed)", flush=True)
    finally:
        env.close()
    write_rows(args, rows, t0, command_line(__file__, argv))


if __name__ == "__main__":
    main()
