"""AlphaNPI-X Table 2's model-free baselines, m-ddpg and m-ddpg + HER, trained and measured.

Trains each baseline (``asg.learning.fetch_baselines``: Table 5's DDPG, T = 200, programs drawn
uniformly per episode, all-on-table starts) for the stated budget in this process, then plays
``--eval-episodes`` greedy episodes of each of the 7 expanded non-atomic programs. Success is
the program's post-condition ψ on the final state. Prints and writes, per program and per
Table 2 row (averaged over arguments), our success beside the paper's (0.00 on every row for
both baselines), with AlphaNPI-X's own paper figures for context, and the budget used.

The paper gives no training budget for its baselines (its goal policy used 7e5 episodes,
Appendix E.4; Table 5: 250 epochs x 40 cycles x 28 actors): the default here (3 epochs of 40
cycles, 2 episodes per cycle) is a few hundred episodes, fit for two shared cores, orders of
magnitude below. A 0.00 measured on it says the pipeline runs, not that the baselines cannot
learn with the paper's budget.

    python benchmarks/npi_ddpg_baselines.py [--epochs 3 | --env-steps N] [--cycles 40] [--eval-episodes 20]
        [--seed 0] [--kinds m-ddpg m-ddpg-her] [--out runs/npi_ddpg_baselines]
        [--records benchmarks/results/npi_ddpg_baselines] [--json benchmarks/results/npi_ddpg_baselines.json]

``--env-steps N`` sets the epochs from a budget of environment steps (rounded up to whole epochs of
``cycles`` x 2 episodes x T = 200 steps): ``--env-steps 800000`` is the shipped ``fast`` goal
policy's budget (``benchmarks/results/fetch_programs/goal-policy/result.json``), Table 2's
baselines at the same number of env steps as the goal policy the AlphaNPI-X rows use.

A run directory (``--out/<kind>-seed<N>``) that holds a checkpoint is resumed (Ctrl-C and SIGTERM
checkpoint; more epochs continue the same run), and each finished baseline's record (budget,
curve, evaluation) is kept as ``--records/<kind>-seed<N>.json`` (committed) and reused when its
budget and evaluation episodes match, so the grid survives interruptions and checkouts.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch
from provenance import command_line, stamp, write_json

from asg.learning.fetch_baselines import (
    PAPER_TABLE2_BASELINES,
    TABLE2_ROWS,
    evaluate_baseline,
    nonatomic_programs,
    resume_baseline,
    train_baseline,
)
from asg.learning.goal_policy.config import nonatomic_baseline
from asg.learning.goal_policy.runlog import read_metrics
from asg.learning.goal_policy.trainer import CHECKPOINT
from asg.learning.npi.pipeline import PAPER_TABLE2
from asg.learning.run_dir import atomic_write_json


def configure(kind: str, args: argparse.Namespace):
    """The baseline's paper config with this benchmark's schedule (``--env-steps`` in whole epochs)."""
    cfg = nonatomic_baseline(her=kind == "m-ddpg-her")
    sch = cfg.schedule
    per_epoch = args.cycles * sch.episodes_per_cycle * sch.horizon
    epochs = args.epochs if args.env_steps is None else math.ceil(args.env_steps / per_epoch)
    return replace(cfg, schedule=replace(sch, epochs_phase1=epochs, cycles=args.cycles,
                                         eval_episodes=args.test_episodes, checkpoint_every=5))


def run_kind(kind: str, args: argparse.Namespace) -> dict:
    """Train (or resume) and evaluate one baseline; its record (reused when already kept)."""
    cfg = configure(kind, args)
    sch = cfg.schedule
    record = args.records / f"{kind}-seed{args.seed}.json"
    if record.is_file():
        kept = json.loads(record.read_text())
        if kept["budget"]["epochs"] == sch.epochs_phase1 and kept["budget"]["cycles_per_epoch"] == sch.cycles \
                and kept["evaluation"]["programs"]["Clean_Table"]["episodes"] == args.eval_episodes:
            print(f"{kind}: reused {record}", flush=True)
            return kept
    run = args.out / f"{kind}-seed{args.seed}"
    if (run / CHECKPOINT).is_file():
        print(f"{kind}: resuming {run}", flush=True)
        train = resume_baseline(run, cfg, progress=progress)
    else:
        train = train_baseline(kind, run, cfg, seed=args.seed, progress=progress)
    start = time.perf_counter()
    evaluation = evaluate_baseline(run, kind, episodes=args.eval_episodes, seed=args.seed)
    rows = read_metrics(run / "metrics.csv")
    budget = {"epochs": sch.epochs_phase1, "cycles_per_epoch": sch.cycles, "episodes_per_cycle": sch.episodes_per_cycle,
              "updates_per_cycle": sch.batches, "batch_size": cfg.agent.batch_size, "horizon": sch.horizon,
              "episodes": train["episodes"], "env_steps": train["env_steps"],
              "updates": int(rows[-1]["updates"]) if rows else 0, "replay_k": cfg.replay.replay_k,
              "strategy": cfg.replay.strategy, "hidden": list(cfg.agent.hidden)}
    curve = [{k: row[k] for k in ("epoch", "train_success", "test_success", "critic_loss", "q_mean")
              if k in row} for row in rows]
    kept = {"kind": kind, "seed": args.seed, "budget": budget, "train_seconds": train["wall_seconds"],
            "eval_seconds": round(time.perf_counter() - start, 1), "curve": curve, "evaluation": evaluation,
            "run_dir": str(run)}
    record.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(record, kept)
    return kept


def progress(stage: str, done: int, total: int, note: str) -> None:
    if done % 40 == 0 or done == total:
        print(f"  cycle {done}/{total}: {note}", flush=True)


def table_lines(records: dict[str, dict], episodes: int) -> list[str]:
    """Table 2 rows (ours beside the paper's), then every expanded program."""
    kinds = list(records)
    head = "".join(f"{k + ' ours':>16} {'paper':>6}" for k in kinds)
    lines = [f"Table 2, model-free baselines: greedy success, {episodes} episodes per program "
             "(rows averaged over arguments)", f"{'program':<26}{head}   AlphaNPI-X paper (replan)"]
    for row in TABLE2_ROWS:
        cells = "".join(f"{records[k]['evaluation']['families'][row]:>16.2f} {PAPER_TABLE2_BASELINES[k][row]:>6.2f}"
                        for k in kinds)
        lines.append(f"{row:<26}{cells}   {PAPER_TABLE2[row]['replan']:.2f}")
    lines.append("per expanded program:")
    for name in nonatomic_programs():
        cells = "".join(f"{records[k]['evaluation']['programs'][name]['success_rate']:>16.2f} {'':>6}" for k in kinds)
        lines.append(f"{name:<26}{cells}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=["m-ddpg", "m-ddpg-her"], choices=["m-ddpg", "m-ddpg-her"])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--env-steps", type=int, default=None, help="budget in env steps (sets the epochs)")
    parser.add_argument("--cycles", type=int, default=40, help="cycles per epoch (Table 5: 40)")
    parser.add_argument("--test-episodes", type=int, default=7, help="greedy test episodes per epoch (metrics)")
    parser.add_argument("--eval-episodes", type=int, default=20, help="final evaluation episodes per program")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/npi_ddpg_baselines"))
    parser.add_argument("--records", type=Path, default=Path("benchmarks/results/npi_ddpg_baselines"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.perf_counter()
    records = {}
    for kind in args.kinds:
        try:
            records[kind] = rec = run_kind(kind, args)
        except KeyboardInterrupt:
            print(f"{kind}: interrupted (checkpointed); the same command resumes it", file=sys.stderr)
            return 130
        b = rec["budget"]
        print(f"{kind}: {b['episodes']} episodes, {b['env_steps']} env steps, {b['updates']} updates "
              f"({b['epochs']} epochs x {b['cycles_per_epoch']} cycles x {b['episodes_per_cycle']} episodes, "
              f"T = {b['horizon']}, replay_k {b['replay_k']}); train {rec['train_seconds']} s, "
              f"evaluation {rec['eval_seconds']} s", flush=True)
        for row in rec["curve"]:
            print(f"  epoch {row['epoch']}: train success {float(row['train_success']):.3f}, "
                  f"test success {float(row['test_success']):.3f}", flush=True)
    wall = round(time.perf_counter() - start, 1)
    lines = table_lines(records, args.eval_episodes)
    train_s = sum(rec["train_seconds"] for rec in records.values())
    lines += [f"wall time of this call: {wall} s; training over all sessions {train_s:.0f} s; one process, "
              "torch threads 1", "budget: no baseline budget stated in the paper (its goal policy: 7e5 episodes, "
              "250 epochs x 40 cycles x 28 actors)"]
    print("\n".join(lines))
    if args.json is not None:
        payload = stamp({"wall_seconds": wall, "eval_episodes": args.eval_episodes, "seed": args.seed,
                         "paper_note": "AlphaNPI-X Table 2: Multitask DDPG and Multitask DDPG + HER are 0.0 on "
                                       "every row; the paper gives no training budget for them",
                         "baselines": records},
                        command_line(__file__, argv), {name: rec["budget"] for name, rec in records.items()},
                        [args.seed])
        write_json(args.json, payload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
