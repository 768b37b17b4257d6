"""How a goal policy's Stack episodes end: set down and let go, or still held above the tower? (issue 36)

The paper's goal test asks for every block within 5 cm of its target at the last step, so a block
held 3 cm above the tower passes it, while ψ (``on``) and the next program need it set down and
let go. Per start distribution (``table``, ``chained``, ``placing``; ``--starts``), over
``--episodes`` greedy episodes of each of the 12 Stack programs (or, ``--family Move_To_Zone``, the 8
Move programs), this counts how the episode ends:

- ``released``: the fingers no longer on the moved block (the labeler's ``holding`` is false);
- ``held``: still holding it, with the median and quartiles of its height above the target;
- ``reached_ever``: the paper's goal test passed at some step;
- ``psi``: ψ holds at the end; ``goal_test``: the paper's test; ``goal_test_2cm``: with the 2 cm
  height tolerance; ``release_paid``: the reward of ``schedule.release_height`` 0.05 (2 cm height
  tolerance, gripper clear) was paid at some step, i.e. the training signal was ever seen.

    python benchmarks/fetch_stack_end.py --policy P [--starts table] [--episodes 30] [--family Stack] [--out FILE]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from provenance import command_line, write_result

from asg.envs.fetch import FetchTask, goals_reached, library_program, state_atoms
from asg.envs.fetch.batch import gripper_clear
from asg.learning.goal_policy.evaluate import STARTS, load_policy
from asg.learning.goal_policy.rollout import EpisodeSpec, RolloutWorker

RELEASE_HEIGHT, Z_TOLERANCE = 0.05, 0.02  # the learned preset's release reward and height tolerance


def episode_ends(policy_path: Path, starts: str, episodes: int, seed: int, family: str = "Stack") -> dict:
    """Counts of how the ``family`` episodes from ``starts`` end (see module doc)."""
    policy = load_policy(policy_path)
    task = FetchTask(initial_state=starts)
    programs = [p for p in task.programs if p.startswith(family)]
    worker = RolloutWorker(task, min(10, episodes), 1)
    rows = {"episodes": 0, "released": 0, "held": 0, "reached_ever": 0, "psi": 0, "goal_test": 0,
            "goal_test_2cm": 0, "release_paid": 0}
    held_heights: list[float] = []
    try:
        for k, name in enumerate(programs):
            seeds = np.random.default_rng([seed, k]).integers(2**31, size=episodes)
            run = worker.run([EpisodeSpec(int(s), program=name, progress=1.0) for s in seeds], policy)
            psi = library_program(name).post
            for e in range(episodes):
                o, ag, g = run.o[e], run.ag[e], run.g[e]
                atoms = state_atoms(run.final_obs[e])
                holding = any(a.predicate == "holding" for a in atoms)
                rows["episodes"] += 1
                rows["held" if holding else "released"] += 1
                if holding:
                    held_heights.append(float(ag[-1, 2] - g[2]))
                rows["reached_ever"] += bool(goals_reached(ag[1:], g[None]).any())
                rows["psi"] += bool(psi.holds(atoms))
                rows["goal_test"] += bool(run.success[e])
                rows["goal_test_2cm"] += bool(goals_reached(ag[-1], g, z_tolerance=Z_TOLERANCE))
                paid = goals_reached(ag[1:], g[None], z_tolerance=Z_TOLERANCE) & gripper_clear(o[1:], RELEASE_HEIGHT)
                rows["release_paid"] += bool(paid.any())
    finally:
        worker.close()
    n = rows["episodes"]
    rates = {f"{key}_rate": round(value / n, 3) for key, value in rows.items() if key != "episodes"}
    quart = np.percentile(held_heights, [25, 50, 75]).round(4).tolist() if held_heights else None
    return {**rows, **rates, "held_height_above_target_quartiles_m": quart}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", type=Path, required=True, help="a Fetch goal policy (.npz)")
    parser.add_argument("--starts", default="table,chained,placing",
                        help=f"comma-separated start distributions ({', '.join(STARTS)})")
    parser.add_argument("--episodes", type=int, default=30, help="episodes per program and start")
    parser.add_argument("--family", default="Stack", choices=("Stack", "Move_To_Zone"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/fetch_stack_end.json"))
    args = parser.parse_args(argv)
    starts = args.starts.split(",")
    bad = [s for s in starts if s not in STARTS]
    if bad or args.episodes < 1:
        parser.error(f"--starts: unknown {bad}" if bad else "--episodes must be >= 1")
    t0 = time.perf_counter()
    out = {}
    for s in starts:
        out[s] = r = episode_ends(args.policy, s, args.episodes, args.seed, args.family)
        quart = r["held_height_above_target_quartiles_m"]
        print(f"{s:<8} released {r['released_rate']:.2f}  held {r['held_rate']:.2f} (height above target, "
              f"quartiles {quart} m)  psi {r['psi_rate']:.2f}  goal test {r['goal_test_rate']:.2f} "
              f"(2 cm: {r['goal_test_2cm_rate']:.2f}, at some step {r['reached_ever_rate']:.2f})  "
              f"release reward ever paid {r['release_paid_rate']:.2f}", flush=True)
    seconds = round(time.perf_counter() - t0, 1)
    write_result(args.out, {"policy": str(args.policy), "family": args.family, "seconds": seconds, "starts": out},
                 command_line(__file__, argv), {"episodes_per_program_and_start": args.episodes},
                 [args.seed])
    print(f"wrote {args.out} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
