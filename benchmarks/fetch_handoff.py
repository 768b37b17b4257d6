"""Where a learned program hands over to the next one: does the goal policy let go? (issue 36)

A non-atomic program calls atomic ones back to back: the next starts where the last one left the
world. The goal is the blocks' positions, so a program whose block reaches its target while still
grasped has succeeded, and the next program starts with the gripper closed on that block. This
benchmark measures that hand-off on the pairs Stack_All_To_Zone makes, Move_To_Zone_b_Z then
Stack_a_b (a, b of one colour, Z either zone), from table starts:

- ``policy``: the goal policy runs both programs (what Table 2's re-plan mode does);
- ``released``: the scripted controller runs the Move (it lets go and lifts the gripper at the end),
  the goal policy the Stack: the same Stack from the same kind of state, the block let go.

``--pairs stack-stack`` measures the hand-over inside a tower instead (what Stack_All_Blocks
makes): Stack_1_0 then Stack_2_1, and Stack_3_2 then Stack_0_3, the second Stack onto a tower of
two that the first program built (by the policy, or by the scripted controller in ``released``).

Per pair and for both: first-program successes, how often the gripper still held the block when the
first program ended (the labeler's ``(holding b)``), and the second Stack's success on the episodes whose
first program succeeded.
The scripted controller is a comparator here only; no stage of the ``learned`` preset uses it.

    python benchmarks/fetch_handoff.py --policy P [--episodes 30] [--seed 0] [--pairs move-stack|stack-stack] \
        [--out FILE]

(The JSON keeps the keys of the move-stack pairs: ``move_successes`` and ``held_after_move`` count
the first program of either pair.)
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from provenance import command_line, write_result

from asg.envs.fetch import FetchBlocksEnv, ScriptedController, acting_block, run_atomic
from asg.envs.fetch.labeler import atoms as state_atoms
from asg.learning.npi.inference import Focused, policy_controller

PAIRS = {"move-stack": {"ORANGE": ("Move_To_Zone_0_ORANGE", "Stack_1_0"), "BLUE": ("Move_To_Zone_2_BLUE", "Stack_3_2")},
         "stack-stack": {"TOWER_0": ("Stack_1_0", "Stack_2_1"), "TOWER_2": ("Stack_3_2", "Stack_0_3")}}


def hand_off(policy, mover: str, move: str, stack: str, episodes: int, seed: int) -> dict[str, float | int]:
    """``episodes`` table starts: ``move`` by ``mover`` (the policy or the scripted controller), then
    ``stack`` by the policy from where the move left the world."""
    moved = held = stacked = 0
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    try:
        for k in range(episodes):
            env.reset(seed=seed + k)
            controller = policy if mover == "policy" else ScriptedController()
            block = acting_block(move)
            if not run_atomic(env, move, Focused(controller, block)).success:
                continue
            moved += 1
            held += any(a.predicate == "holding" for a in state_atoms(env.observation()["observation"]))
            stacked += run_atomic(env, stack, Focused(policy, acting_block(stack))).success
    finally:
        env.close()
    return {"episodes": episodes, "move_successes": moved, "held_after_move": held,
            "stack_successes": stacked, "stack_success_rate": stacked / moved if moved else None}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, required=True, help="a Fetch goal policy (.npz)")
    parser.add_argument("--episodes", type=int, default=30, help="table starts per zone and mover")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first table start")
    parser.add_argument("--pairs", choices=sorted(PAIRS), default="move-stack",
                        help="the program pairs: a Move then a Stack onto its block, or two Stacks building a tower")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fetch_handoff.json"))
    args = parser.parse_args(argv)
    policy = policy_controller(args.policy)
    start = time.perf_counter()
    zones = {}
    for zone, (move, stack) in PAIRS[args.pairs].items():
        zones[zone] = {"move": move, "stack": stack}
        for mover in ("policy", "released"):
            row = hand_off(policy, mover, move, stack, args.episodes, args.seed)
            zones[zone][mover] = row
            rate = "-" if row["stack_success_rate"] is None else f"{row['stack_success_rate']:.2f}"
            print(f"{zone:<7} {mover:<9} {move} {row['move_successes']}/{row['episodes']}, still held "
                  f"{row['held_after_move']}, then {stack} {row['stack_successes']}/{row['move_successes']} ({rate})",
                  flush=True)
    seconds = round(time.perf_counter() - start, 1)
    write_result(args.out, {"policy": str(args.policy), "pairs": args.pairs, "seconds": seconds, "zones": zones},
                 command_line(__file__, argv), {"table_starts_per_zone_and_mover": args.episodes},
                 list(range(args.seed, args.seed + args.episodes)))
    print(f"wrote {args.out} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
