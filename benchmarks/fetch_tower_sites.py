"""Where a tower of four stands, and what the behaviour model foresees of it (issue 36).

Stack_All_Blocks needs three Stacks, the last onto a tower of three. Its calls may build the
tower where its base block lies on the table, or first move the base into a zone. This runs the
three chains with a goal policy, greedy, from the evaluation's table starts:

- ``table``: Stack_1_0, Stack_2_1, Stack_3_2;
- ``orange`` / ``blue``: Move_To_Zone_0_<ZONE> first, then the same three Stacks;

each chain stopping at its first call whose ψ fails. Per chain and call it counts the calls run and
how often ψ held, and, for each of them, what the behaviour model said beforehand: whether ψ holds
in its predicted end state (the deterministic Ω_w the search plans with), and, for a model fitted
with ``behaviour.success_head``, the mean probability its success head gave and its Brier score.
A model that foresees the policy tells the chains apart as the policy's own rates do; one that
restates the goal setter predicts success everywhere.

    python benchmarks/fetch_tower_sites.py --policy P --behaviour-model M [--episodes 100] [--seed 10000] [--out FILE]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from provenance import command_line, write_result

CHAINS = {"table": ("Stack_1_0", "Stack_2_1", "Stack_3_2"),
          "orange": ("Move_To_Zone_0_ORANGE", "Stack_1_0", "Stack_2_1", "Stack_3_2"),
          "blue": ("Move_To_Zone_0_BLUE", "Stack_1_0", "Stack_2_1", "Stack_3_2")}


def run_chains(policy: Path, behaviour_model: Path, episodes: int, seed: int) -> dict[str, Any]:
    """The per-chain, per-call counts of the module doc."""
    from asg.envs.fetch import FetchBlocksEnv, acting_block, library_program, run_atomic, state_atoms
    from asg.learning.npi.inference import Focused, policy_controller
    from asg.learning.world_models.behaviour_model import LearnedBehaviourModel

    controller = policy_controller(policy)
    model = LearnedBehaviourModel.load(behaviour_model)
    env = FetchBlocksEnv(initial_state="table", max_steps=None)
    out: dict[str, Any] = {}
    for chain, calls in CHAINS.items():
        rows: list[dict[str, list]] = [{"psi": [], "model_psi": [], "p": []} for _ in calls]
        completed = 0
        for episode in range(episodes):
            env.reset(seed=seed + episode)
            for k, name in enumerate(calls):
                start = env.observation()["observation"]
                post = library_program(name).post
                predicted, _ = model.predict(start, name)
                rows[k]["model_psi"].append(bool(post.holds(state_atoms(predicted))))
                if model.success is not None:
                    rows[k]["p"].append(model.success_probability(start, name))
                end = run_atomic(env, name, Focused(controller, acting_block(name))).final
                held = bool(post.holds(state_atoms(end)))
                rows[k]["psi"].append(held)
                if not held:
                    break
            else:
                completed += 1
        out[chain] = {"episodes": episodes, "completed": completed, "completed_rate": completed / episodes,
                      "calls": [_summary(name, r) for name, r in zip(calls, rows)]}
    return out


def _summary(name: str, r: dict[str, list]) -> dict[str, Any]:
    psi = np.array(r["psi"], dtype=float)
    row: dict[str, Any] = {"program": name, "calls": len(psi),
                           "psi_rate": round(float(psi.mean()), 3) if len(psi) else None,
                           "model_psi_rate": round(float(np.mean(r["model_psi"])), 3) if len(psi) else None}
    if r["p"]:
        p = np.array(r["p"])
        row["success_head_mean"] = round(float(p.mean()), 3)
        row["success_head_brier"] = round(float(np.mean((p - psi) ** 2)), 3)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--policy", type=Path, required=True, help="a Fetch goal policy (.npz)")
    parser.add_argument("--behaviour-model", type=Path, required=True, help="a learned behaviour model (.npz)")
    parser.add_argument("--episodes", type=int, default=100, help="episodes per chain")
    parser.add_argument("--seed", type=int, default=10000, help="the first start's seed (the next ones follow)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fetch_tower_sites.json"))
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error("--episodes: expected >= 1")
    for flag, path in (("--policy", args.policy), ("--behaviour-model", args.behaviour_model)):
        if not path.exists():
            parser.error(f"{flag}: {path} does not exist")
    start = time.perf_counter()
    chains = run_chains(args.policy, args.behaviour_model, args.episodes, args.seed)
    for chain, r in chains.items():
        cells = "  ".join(f"{c['program']} {c['psi_rate']} (model {c['model_psi_rate']}"
                          + (f", head {c['success_head_mean']}" if "success_head_mean" in c else "") + ")"
                          for c in r["calls"] if c["calls"])
        print(f"{chain:7s} completed {r['completed_rate']:.2f}: {cells}", flush=True)
    write_result(args.out, {"policy": str(args.policy), "behaviour_model": str(args.behaviour_model),
                            "seconds": round(time.perf_counter() - start, 1), "chains": chains},
                 command_line(__file__, argv), {"episodes_per_chain": args.episodes},
                 list(range(args.seed, args.seed + args.episodes)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
