"""AlphaNPI-X Figures 4 and 9: the goal policy's second phase and its reset probability p.

Section 4.1 / E.1: phase 1 samples goals and starts afresh; phase 2 draws an atomic program and,
with probability p, does not reset: the episode starts from a stored final state of an earlier
one. Figure 9 (left) compares p after phase 2; (right) phase 1 against phase 2, on Stack and
Move_To_Zone (all-on-table starts) and the MultiStep suites (4 Move_To_Zone calls, 3 Stack calls,
no reset between calls). The paper finds phase 2 needed for the MultiStep suites and p = 0.5 the
best trade-off.

One phase 1 is trained (the goal-policy stage of ``--preset`` with ``--overrides``, its phase 2
cut to 0 epochs), then, from its last checkpoint (``goal_policy.trainer.branch_phase2``):

- ``p0.50`` and the like: ``--phase2`` epochs of phase 2 with the paper's p (asg's
  ``schedule.p_reset`` is the probability of a fresh reset, 1 - p);
- ``phase1-continued``: phase 1 extended by the same ``--phase2`` epochs, Figure 9 right's
  phase 1 at an equal budget;
- ``phase1``: the policy at the end of phase 1 itself.

D.1's start distribution anneals over phase 1 (``schedule.anneal_epochs`` = ``--phase1`` unless
the overrides set it), so every branch starts its extra epochs from the same distribution. In
``phase1-continued`` the demo-reset probability (``fast``: 0.2, annealed to 0 over phase 1) is
re-annealed over the longer phase 1, so it resumes at 0.2 × (1 - E1 / (E1 + E2)) and decays to 0.

Each is evaluated greedily in MuJoCo: every atomic program ``--atomic-episodes`` times (the
family means) and each MultiStep suite ``--multistep-episodes`` times.

    python benchmarks/figure9.py [--preset fast] [--overrides JSON] [--name NAME] [--seeds 1]
        [--phase1 40] [--phase2 10] [--ps 0,0.25,0.5,0.75,1] [--atomic-episodes 20]
        [--multistep-episodes 100] [--out runs/figure9] [--results benchmarks/results/fetch_programs/figure9]
        [--reduce-only]

Every finished branch's evaluation is kept as ``--results``/seeds/<name>/<branch>/seed<N>.json
(committed): it is not trained again, and the reducer reads these records, so seeds trained in
an earlier checkout count. An interrupted training (Ctrl-C, SIGTERM) resumes when the same
command runs again. Writes ``figure9.json``, ``figure9.md`` and ``figure9.png`` into ``--results``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from asg.learning import configio
from asg.learning.atomic import atomic_write
from asg.learning.goal_policy import config as cfgmod
from asg.learning.goal_policy.evaluate import evaluate_atomic, evaluate_multistep
from asg.learning.goal_policy.trainer import CHECKPOINT, branch_phase2, train_goal_policy
from asg.learning.plots import Bars, plot_bars
from asg.learning.run_dir import atomic_write_json

METRICS = ("Stack", "Move_To_Zone", "MultiStep-Moving", "MultiStep-Stacking")
PAPER_PS = (0.0, 0.25, 0.5, 0.75, 1.0)


def branch_name(p: float) -> str:
    return f"p{p:.2f}"


def record_path(args: argparse.Namespace, branch: str, seed: int) -> Path:
    return args.results / "seeds" / args.name / branch / f"seed{seed}.json"


def read_record(path: Path, args: argparse.Namespace) -> dict | None:
    """A record of this budget (None when absent or of other epochs or episodes)."""
    if not path.is_file():
        return None
    rec = json.loads(path.read_text())
    same = (rec["phase1_epochs"], rec["phase2_epochs"], rec["atomic_episodes"], rec["multistep_episodes"]) == (
        args.phase1, args.phase2, args.atomic_episodes, args.multistep_episodes)
    return rec if same else None


def trained(folder: Path, epochs: int) -> bool:
    result = folder / "result.json"
    return result.is_file() and json.loads(result.read_text())["epochs"] >= epochs


def base_config(args: argparse.Namespace) -> cfgmod.GoalPolicyConfig:
    cfg = configio.override(cfgmod.preset(args.preset), json.loads(args.overrides), "--overrides")
    # D.1's start distribution anneals over phase 1 (not "the whole run", which differs per branch)
    sch = cfg.schedule
    cfg = replace(cfg, schedule=replace(sch, anneal_epochs=sch.anneal_epochs or args.phase1))
    return cfgmod.with_epochs(cfg, args.phase1, 0)


def train_branch(args: argparse.Namespace, seed: int, branch: str, p: float | None) -> Path:
    """The run folder of ``branch`` trained to its end (phase 1 first, when needed)."""
    root = args.out / args.name / f"seed{seed}"
    phase1 = root / "phase1"
    if not trained(phase1, args.phase1):
        resume = (phase1 / CHECKPOINT).is_file()
        train_goal_policy(None if resume else base_config(args), phase1, resume=phase1 if resume else None,
                          seed=seed, progress=progress)
    if branch == "phase1":
        return phase1
    folder, epochs = root / branch, args.phase1 + args.phase2
    if not trained(folder, epochs):
        if not (folder / CHECKPOINT).is_file():
            if p is None:  # phase 1 continued: its own copy of the checkpoint, then more phase-1 epochs
                branch_phase2(phase1, folder, p_reset=base_config(args).schedule.p_reset, epochs_phase2=0)
            else:
                branch_phase2(phase1, folder, p_reset=1.0 - p, epochs_phase2=args.phase2)
        config = None if p is not None else cfgmod.with_epochs(base_config(args), epochs, 0)
        train_goal_policy(config, folder, resume=folder, progress=progress)
    return folder


def progress(stage: str, done: int, total: int, note: str) -> None:
    if done % 10 == 0 or done == total:
        print(f"  {stage}: cycle {done}/{total}, {note}", flush=True)


def evaluate(args: argparse.Namespace, seed: int, branch: str, p: float | None) -> dict:
    path = record_path(args, branch, seed)
    rec = read_record(path, args)
    if rec is not None:
        print(f"{branch} seed {seed}: reused ({path})", flush=True)
        return rec
    start = time.perf_counter()
    folder = train_branch(args, seed, branch, p)
    trained_s = time.perf_counter() - start
    atomic = evaluate_atomic(folder, episodes=args.atomic_episodes, seed=1000 + seed)
    multi = evaluate_multistep(folder, episodes=args.multistep_episodes, seed=1000 + seed)
    result = json.loads((folder / "result.json").read_text())
    rec = {"name": args.name, "branch": branch, "p": p, "seed": seed, "phase1_epochs": args.phase1,
           "phase2_epochs": args.phase2, "atomic_episodes": args.atomic_episodes,
           "multistep_episodes": args.multistep_episodes,
           "config": json.loads((folder / "config.json").read_text())["config"],
           "train": {k: result[k] for k in ("epochs", "env_steps", "episodes", "wall_seconds")},
           "success": {**atomic["families"], **{s: v["success_rate"] for s, v in multi["suites"].items()}},
           "calls_success": {s: v["calls_success"] for s, v in multi["suites"].items()},
           "programs": {n: v["success_rate"] for n, v in atomic["programs"].items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, rec)
    print(f"{branch} seed {seed}: " + ", ".join(f"{m} {rec['success'][m]:.2f}" for m in METRICS)
          + f" ({time.perf_counter() - start:.0f} s, {trained_s:.0f} s of it training)", flush=True)
    return rec


def branches(args: argparse.Namespace, by_p: bool = False) -> list[tuple[str, float | None]]:
    """Training order: phase 1, phase 1 continued, then ``--ps`` as given (``by_p``: sorted, for tables)."""
    ps = sorted(args.ps) if by_p else args.ps
    return [("phase1", None), ("phase1-continued", None), *((branch_name(p), p) for p in ps)]


def reduce(args: argparse.Namespace) -> dict:
    """Mean and s.e.m. over the seeds found of each branch and metric; the table, figure and JSON."""
    summary: dict = {"name": args.name, "preset": args.preset, "overrides": json.loads(args.overrides),
                     "phase1_epochs": args.phase1, "phase2_epochs": args.phase2,
                     "atomic_episodes": args.atomic_episodes, "multistep_episodes": args.multistep_episodes,
                     "branches": {}}
    for branch, p in branches(args, by_p=True):
        recs = [r for seed in range(args.seeds) if (r := read_record(record_path(args, branch, seed), args))]
        if not recs:
            continue
        values = {m: np.array([r["success"][m] for r in recs]) for m in METRICS}
        summary["branches"][branch] = {
            "p": p, "seeds": [r["seed"] for r in recs], "epochs": recs[0]["train"]["epochs"],
            "mean": {m: float(v.mean()) for m, v in values.items()},
            "sem": {m: float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else 0.0 for m, v in values.items()}}
    if not summary["branches"]:
        raise SystemExit(f"no finished branch of this budget in {args.results / 'seeds' / args.name}")
    args.results.mkdir(parents=True, exist_ok=True)
    atomic_write_json(args.results / "figure9.json", summary)
    atomic_write(args.results / "figure9.md", ("\n".join(table(summary)) + "\n").encode())
    plot(summary, args.results / "figure9.png")
    return summary


def table(summary: dict) -> list[str]:
    lines = [f"# Figures 4 / 9: the goal policy's phase 2 and reset probability ({summary['name']})", "",
             f"Preset `{summary['preset']}` with overrides `{json.dumps(summary['overrides'])}`; phase 1 of "
             f"{summary['phase1_epochs']} epochs, then {summary['phase2_epochs']} epochs of phase 2 per p (the "
             "probability of *not* resetting, the paper's p) or of phase 1 continued. Greedy success in MuJoCo: "
             f"each atomic program {summary['atomic_episodes']} episodes (family means), each MultiStep suite "
             f"{summary['multistep_episodes']} episodes. Mean over seeds (± s.e.m. where more than one).", "",
             "| branch | epochs | seeds | " + " | ".join(METRICS) + " |", "|---|---|---|" + "---|" * len(METRICS)]
    for branch, rec in summary["branches"].items():
        cells = [f"{rec['mean'][m]:.2f}" + (f" ± {rec['sem'][m]:.2f}" if len(rec["seeds"]) > 1 else "")
                 for m in METRICS]
        lines.append(f"| {branch} | {rec['epochs']} | {len(rec['seeds'])} | " + " | ".join(cells) + " |")
    return lines


def plot(summary: dict, path: Path) -> None:
    """Left: every p after phase 2; right: phase 1, phase 1 continued and phase 2 at p = 0.5."""
    found = summary["branches"]

    def bars(names: list[str]) -> list[Bars]:
        return [Bars(f"{n} ({found[n]['epochs']} epochs)", [found[n]["mean"][m] for m in METRICS],
                     [found[n]["sem"][m] for m in METRICS]) for n in names if n in found]
    panels = {"after phase 2, by p (the probability of not resetting)":
              bars([n for n, rec in found.items() if rec["p"] is not None]),
              "phase 1 vs phase 2 (p = 0.5)": bars(["phase1", "phase1-continued", branch_name(0.5)])}
    plot_bars(path, METRICS, panels, title=f"Figure 9 ({summary['name']}: preset {summary['preset']}, "
                                           f"{summary['phase1_epochs']} + {summary['phase2_epochs']} epochs)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=cfgmod.PRESETS, default="fast")
    parser.add_argument("--overrides", default='{"schedule": {"chained_starts": 0.0, "threads": 1}}',
                        help="JSON config fields over the preset (default: chained starts off, one physics thread)")
    parser.add_argument("--name", default="fast-no-chained", help="folder of the records (one per setting)")
    parser.add_argument("--seeds", type=int, default=1, help="seeds 0..N-1")
    parser.add_argument("--phase1", type=int, default=40, help="phase-1 epochs")
    parser.add_argument("--phase2", type=int, default=10, help="phase-2 epochs of each branch")
    parser.add_argument("--ps", type=lambda s: [float(x) for x in s.split(",")], default=list(PAPER_PS),
                        help="the paper's p (no-reset probabilities), trained in this order")
    parser.add_argument("--atomic-episodes", type=int, default=20, help="episodes per atomic program")
    parser.add_argument("--multistep-episodes", type=int, default=100, help="episodes per MultiStep suite")
    parser.add_argument("--out", type=Path, default=Path("runs/figure9"))
    parser.add_argument("--results", type=Path, default=Path("benchmarks/results/fetch_programs/figure9"))
    parser.add_argument("--reduce-only", action="store_true", help="reduce the records, train nothing")
    args = parser.parse_args(argv)
    if not args.reduce_only:
        try:
            for seed in range(args.seeds):
                for branch, p in branches(args):
                    evaluate(args, seed, branch, p)
        except KeyboardInterrupt:
            print("interrupted; run the same command again to continue", file=sys.stderr)
            return 130
    for line in table(reduce(args)):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
