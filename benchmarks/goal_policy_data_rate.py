"""The paper's data rate on this machine: the ``paper`` goal-policy preset with 1 actor and with its 28.

Trains one epoch of the ``paper`` preset (or ``--cycles`` cycles of it) once per actor count, same
seed, same session, each in a temporary folder, through the library's own entry point (the call
``asg train --domain fetch-programs --stage goal-policy`` makes: ``fetch_programs.train_goal_policy``
with ``max_epochs=1``). ``schedule.actors`` emulates the paper's parallel DDPG actors in one
learner: ``episodes_per_cycle`` x actors episodes per cycle and updates of ``agent.batch_size`` x
actors transitions (``learning/goal_policy/config.py``, ``ScheduleConfig``). Per count it reports
episodes, env steps, gradient samples (HER transitions fed to the updates; the preset has no demo
rows), the trainer's wall seconds (the cycles plus the epoch's greedy test episodes; not setup or
checkpointing), seconds per cycle (gaps between the trainer's per-cycle progress calls, so cycle 1
is left out of the mean), seconds per 1,000 episodes, and the extrapolated wall time of the
paper's whole schedule (T5: 250 epochs of 40 cycles) at that rate, plus the ratios of 28 to 1.

    nice -n 10 python benchmarks/goal_policy_data_rate.py --cycles 4

writes ``benchmarks/results/goal_policy_data_rate.json``. The extrapolation assumes phase 2's
cycles cost what these phase-1 cycles cost and that the buffer's growth does not slow sampling.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from provenance import command_line, stamp, write_json

from asg.learning import fetch_programs as fp
from asg.learning.goal_policy import config as C
from asg.learning.run_dir import read_metrics
from asg.learning.torch_state import torch_threads

RESULT = Path(__file__).resolve().parent / "results" / "goal_policy_data_rate.json"


def arm(actors: int, cycles: int | None, seed: int, workers: int) -> dict[str, Any]:
    """One short run of the ``paper`` preset with ``actors`` emulated actors; its figures."""
    paper = C.paper()
    sch = replace(paper.schedule, actors=actors, cycles=cycles or paper.schedule.cycles)
    cfg = replace(paper, schedule=sch)
    stamps: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = fp.train_goal_policy(Path(tmp) / "run", config=cfg, seed=seed, workers=workers, max_epochs=1,
                                      progress=lambda *_: stamps.append(time.perf_counter()))
        call_s = time.perf_counter() - start
        row = read_metrics(Path(tmp) / "run" / "metrics.csv")[-1]
    s = result.summary
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    cycle_s = sum(gaps) / len(gaps) if gaps else (stamps[0] - start)  # one cycle: setup included
    wall_s = float(row["wall_s"])
    per_cycle = sch.cycle_episodes(workers)
    epoch_extra_s = max(0.0, wall_s - sch.cycles * cycle_s)  # the greedy test episodes, cycle 1's warm-up
    full_s = paper.schedule.total_epochs * (paper.schedule.cycles * cycle_s + epoch_extra_s)
    updates = int(row["updates"])
    return {"actors": actors, "cycles": sch.cycles, "episodes_per_cycle": per_cycle,
            "update_batch": cfg.agent.batch_size * actors, "episodes": s["episodes"], "env_steps": s["env_steps"],
            "updates": updates, "gradient_samples": updates * cfg.agent.batch_size * actors,
            "wall_s": round(wall_s, 2), "call_s": round(call_s, 2), "cycle_s": [round(g, 3) for g in gaps],
            "s_per_cycle": round(cycle_s, 3), "s_per_1000_episodes": round(1000 * cycle_s / per_cycle, 1),
            "epoch_extra_s": round(epoch_extra_s, 2),
            "full_schedule": {"epochs": paper.schedule.total_epochs, "cycles_per_epoch": paper.schedule.cycles,
                              "episodes": paper.schedule.total_epochs * paper.schedule.cycles * per_cycle,
                              "hours": round(full_s / 3600, 1), "days": round(full_s / 86400, 2)}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=None, help="cycles of the one epoch (default T5's 40)")
    parser.add_argument("--actors", default=f"1,{C.PAPER_ACTORS}", help="comma-separated actor counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="rollout processes (Ray when > 1)")
    parser.add_argument("--json", type=Path, default=RESULT)
    args = parser.parse_args(argv)
    counts = [int(a) for a in args.actors.split(",")]
    command = command_line(__file__, argv)
    print(f"# {command}", flush=True)
    load_before = os.getloadavg()
    with torch_threads(1):
        arms = {str(a): arm(a, args.cycles, args.seed, args.workers) for a in counts}
    print(f"{'actors':>6} {'episodes':>8} {'env steps':>9} {'grad samples':>12} {'wall s':>7} {'s/cycle':>7} "
          f"{'s/1k ep':>8} {'full run h':>10}")
    for r in arms.values():
        print(f"{r['actors']:>6} {r['episodes']:>8} {r['env_steps']:>9} {r['gradient_samples']:>12} "
              f"{r['wall_s']:>7.1f} {r['s_per_cycle']:>7.2f} {r['s_per_1000_episodes']:>8.1f} "
              f"{r['full_schedule']['hours']:>10.1f}")
    out: dict[str, Any] = {"preset": "paper", "seed": args.seed, "workers": args.workers,
                           "torch_threads": 1, "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                                           "python": platform.python_version(),
                                                           "torch": torch.__version__,
                                                           "loadavg_before": [round(x, 2) for x in load_before],
                                                           "loadavg_after": [round(x, 2) for x in os.getloadavg()],
                                                           "nice": os.nice(0)},
                           "arms": arms}
    if len(counts) >= 2:
        lo, hi = arms[str(counts[0])], arms[str(counts[-1])]
        out["ratio"] = {"of": f"actors {counts[-1]} / actors {counts[0]}",
                        "wall_s": round(hi["wall_s"] / lo["wall_s"], 2),
                        "s_per_cycle": round(hi["s_per_cycle"] / lo["s_per_cycle"], 2),
                        "s_per_1000_episodes": round(hi["s_per_1000_episodes"] / lo["s_per_1000_episodes"], 2)}
        print(f"ratio {out['ratio']['of']}: wall {out['ratio']['wall_s']}x, per cycle {out['ratio']['s_per_cycle']}x, "
              f"per 1,000 episodes {out['ratio']['s_per_1000_episodes']}x")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    budget = {"epochs": 1, "cycles": next(iter(arms.values()))["cycles"]}  # per actor count
    write_json(args.json, stamp(out, command, budget, [args.seed]))
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
