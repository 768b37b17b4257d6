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
- ``by_level``: the same counts split by the level the block is set down at (1: on a block on the
  table, 2: on a tower of two, 3: on a tower of three, 0: the table or a zone), read from the goal's
  height. Stack_All_Blocks needs a Stack at each of levels 1, 2 and 3 in turn, so the product of
  their ψ rates bounds it (chained starts draw the three levels equally often).

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
from asg.envs.fetch.layout import BLOCK_SIZE, REST_Z
from asg.learning.goal_policy.evaluate import STARTS, load_policy
from asg.learning.goal_policy.rollout import EpisodeSpec, RolloutWorker

RELEASE_HEIGHT, Z_TOLERANCE = 0.05, 0.02  # the learned preset's release reward and height tolerance
COUNTS = ("released", "held", "reached_ever", "psi", "goal_test", "goal_test_2cm", "release_paid")


def _rates(rows: dict[str, int]) -> dict[str, float]:
    return {f"{key}_rate": round(rows[key] / rows["episodes"], 3) for key in COUNTS}


def episode_ends(policy_path: Path, starts: str, episodes: int, seed: int, family: str = "Stack") -> dict:
    """Counts of how the ``family`` episodes from ``starts`` end (see module doc)."""
    policy = load_policy(policy_path)
    task = FetchTask(initial_state=starts)
    programs = [p for p in task.programs if p.startswith(family)]
    worker = RolloutWorker(task, min(10, episodes), 1)
    rows = dict.fromkeys(("episodes", *COUNTS), 0)
    levels: dict[int, dict[str, int]] = {}
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
                if holding:
                    held_heights.append(float(ag[-1, 2] - g[2]))
                paid = goals_reached(ag[1:], g[None], z_tolerance=Z_TOLERANCE) & gripper_clear(o[1:], RELEASE_HEIGHT)
                ends = {"released": not holding, "held": holding,
                        "reached_ever": bool(goals_reached(ag[1:], g[None]).any()),
                        "psi": bool(psi.holds(atoms)), "goal_test": bool(run.success[e]),
                        "goal_test_2cm": bool(goals_reached(ag[-1], g, z_tolerance=Z_TOLERANCE)),
                        "release_paid": bool(paid.any())}
                level = levels.setdefault(int(round((g[2] - REST_Z) / BLOCK_SIZE)), dict.fromkeys(rows, 0))
                for counts in (rows, level):
                    counts["episodes"] += 1
                    for key, value in ends.items():
                        counts[key] += value
    finally:
        worker.close()
    quart = np.percentile(held_heights, [25, 50, 75]).round(4).tolist() if held_heights else None
    by_level = {str(k): {"episodes": v["episodes"], **_rates(v)} for k, v in sorted(levels.items())}
    return {**rows, **_rates(rows), "held_height_above_target_quartiles_m": quart, "by_level": by_level}


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
        for level, v in r["by_level"].items():
            print(f"  level {level}: {v['episodes']} episodes, released {v['released_rate']:.2f}  "
                  f"psi {v['psi_rate']:.2f}  goal test {v['goal_test_rate']:.2f}", flush=True)
    seconds = round(time.perf_counter() - t0, 1)
    write_result(args.out, {"policy": str(args.policy), "family": args.family, "seconds": seconds, "starts": out},
                 command_line(__file__, argv), {"episodes_per_program_and_start": args.episodes},
                 [args.seed])
    print(f"wrote {args.out} ({seconds:.0f} s)")


if __name__ == "__main__":
    main()
