"""AlphaNPI-X's pipeline as the paper ran it, end to end, at a budget that fits here (issue 16).

Every stage takes the ``paper`` preset, so every addition of ours is off
(``docs/fetch_programs_switches.md``): the goal policy is Table 5's DDPG+HER (28 actors emulated
in one learner, "final" HER, no demonstrations, no DAgger), stopped after ``--epochs`` of its 250;
the behaviour model is fitted with the paper's MSE on a residual from s0 on ``--episodes`` episodes
of that policy; the meta-controller is trained ``--iterations`` iterations by recursive MCTS inside
that learned model with the paper's masks only (learned Stop, no ψ prunings, no Stop scored at
expansion) and T5's one trace buffer. Then, in MuJoCo with that goal policy running the atomic
programs: every atomic program (``--atomic-episodes`` each, every block on the table) and Table 2
in the three inference modes (``--table-episodes`` per program), searching in the learned model.

    python benchmarks/paper_pipeline.py [--epochs 3] [--episodes 10000] [--iterations 200] \
        [--atomic-episodes 100] [--table-episodes 100] [--seed 0] [--workers 1] [--threads 1] [--jobs 1] \
        [--out runs/paper-pipeline] [--results benchmarks/results/fetch_programs/paper_pipeline]

The stages are ``asg.learning.fetch_programs.train_pipeline`` into ``<out>/<stage>`` (what ``asg
train --domain fetch-programs --preset paper --goal-policy-epochs N`` runs); running the same
command again reuses what finished and resumes what was interrupted (Ctrl-C, SIGTERM). Raising
``--epochs`` continues the same goal-policy run (the stages after it are then stale: give a new ``--out``). Writes
``paper_pipeline.json`` / ``.md`` (budget, wall time per stage, the goal policy's per-epoch test
success, the atomic and Table 2 figures beside the paper's) and ``goal_policy.png`` into
``--results``.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from pathlib import Path
from typing import Any

from provenance import command_line, stamp

from asg.cli.progress import Stages
from asg.learning import fetch_programs as fp
from asg.learning.atomic import atomic_write
from asg.learning.goal_policy import config as gp_config
from asg.learning.npi.pipeline import PAPER_TABLE2
from asg.learning.plots import Band, plot_bands
from asg.learning.results import Status
from asg.learning.run_dir import atomic_write_json, read_metrics
from asg.learning.torch_state import torch_threads

MODES = ("network", "plan", "replan")
PAPER_PHASE1_EPISODES = 100 * 2_800  # Figure 9's bars: 100 phase-1 epochs of 28 actors x 100 episodes (App. D)
PAPER_TOTAL_EPISODES = 250 * 2_800  # after phase 2 (7e5, App. E)


def _result(folder: Path) -> dict[str, Any] | None:
    path = folder / "result.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _goal_policy_summary(folder: Path) -> dict[str, Any]:
    """The goal-policy stage's ``result.json``; where a run interrupted past the epoch budget left none
    (the pipeline then uses its policy as of the last whole epoch), the same fields from its metrics."""
    found = _result(folder)
    if found and "run_dir" in found:
        return found
    rows = read_metrics(folder / "metrics.csv")
    last = rows[-1] if rows else {}
    config = gp_config.from_dict(json.loads((folder / "config.json").read_text())["config"])
    return {"run_dir": str(folder), "epochs": len(rows), "episodes": int(float(last.get("episodes", 0))),
            "env_steps": int(float(last.get("env_steps", 0))),
            "wall_seconds": float(last["wall_s"]) if last.get("wall_s") else None,
            "total_epochs": config.schedule.total_epochs}


def _suite(name: str, out: Path, policy: str, model: str, args: argparse.Namespace,
           progress: Stages | None) -> dict[str, Any]:
    """One suite's result (``atomic`` or a Table 2 mode) as JSON, with its wall time."""
    start = time.perf_counter()
    with torch_threads(1):
        if name == "atomic":
            result = fp.evaluate_suite("atomic", episodes=args.atomic_episodes, seed=args.seed, policy=policy)
        else:
            result = fp.evaluate_suite("non-atomic", episodes=args.table_episodes, seed=args.seed, policy=policy,
                                       mode=name, checkpoint=out / "meta-controller", world_model_kind="learned",
                                       behaviour_model=model, out=out / "eval", progress=progress)
    return {**result.to_json(), "wall_seconds": round(time.perf_counter() - start, 1)}


def evaluate(out: Path, policy: str, model: str, args: argparse.Namespace, stages: Stages) -> dict[str, Any]:
    """The atomic programs and Table 2 in the three modes, in MuJoCo; each suite's JSON kept in ``out/eval``.

    With ``--jobs`` > 1 the suites run in that many processes (each suite seeded as alone: the same
    figures), the longest first; a suite whose JSON is there is not run again."""
    folder = out / "eval"
    folder.mkdir(parents=True, exist_ok=True)
    found = {name: json.loads((folder / f"{name}.json").read_text())
             for name in ("atomic", *MODES) if (folder / f"{name}.json").is_file()}
    todo = [name for name in ("replan", "network", "plan", "atomic") if name not in found]

    def keep(name: str, value: dict[str, Any]) -> None:
        found[name] = value
        atomic_write_json(folder / f"{name}.json", value)
        print(f"[eval] {name} done in {value['wall_seconds']} s", file=sys.stderr)

    if args.jobs <= 1:
        for name in todo:
            print(f"[eval] {name}", file=sys.stderr)
            keep(name, _suite(name, out, policy, model, args, stages))
    elif todo:
        print(f"[eval] {', '.join(todo)} in {args.jobs} processes", file=sys.stderr)
        context = multiprocessing.get_context("spawn")  # no forked torch / MuJoCo state
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=context) as pool:
            futures = {pool.submit(_suite, name, out, policy, model, args, None): name for name in todo}
            for future in as_completed(futures):
                keep(futures[future], future.result())
    return {name: found[name] for name in ("atomic", *MODES)}


def report(args: argparse.Namespace, stages_out: dict[str, Any], evals: dict[str, Any], command: str) -> None:
    gp, bm, mc = stages_out["goal-policy"], stages_out["behaviour-model"], stages_out["meta-controller"]
    rows = read_metrics(Path(gp["run_dir"]) / "metrics.csv")
    episodes = [int(float(r["episodes"])) for r in rows if r.get("episodes")]
    test = [float(r["test_success"]) for r in rows if r.get("test_success") not in (None, "")]
    table = {mode: evals[mode]["families"] for mode in MODES}  # per family, the mean over arguments
    payload = {"command": command, "preset": "paper", "seed": args.seed,
               "compute": {"workers": args.workers, "threads": args.threads, "jobs": args.jobs},
               "budget": {"goal_policy_epochs": gp["epochs"], "goal_policy_total_epochs": gp["total_epochs"],
                          "goal_policy_episodes": gp["episodes"], "goal_policy_env_steps": gp["env_steps"],
                          "behaviour_episodes": args.episodes, "meta_controller_iterations": args.iterations,
                          "atomic_episodes": args.atomic_episodes, "table_episodes": args.table_episodes},
               "wall_seconds": {"goal_policy": gp.get("wall_seconds"), "meta_controller": mc.get("wall_seconds"),
                                **{f"eval_{k}": v.get("wall_seconds") for k, v in evals.items()}},
               "goal_policy_curve": {"episodes": episodes, "test_success": test},
               "atomic": {"mean_success": evals["atomic"]["mean_success"],
                          "mean_post_success": evals["atomic"]["mean_post_success"],
                          "programs": {k: v["success_rate"] for k, v in evals["atomic"]["programs"].items()}},
               "behaviour_model": {k: bm[k] for k in bm if k in ("agreement", "episodes", "model", "loss", "anchor")},
               "meta_controller": {k: mc[k] for k in mc if k in ("validation", "first_reached", "iterations", "model")},
               "table2": table, "paper_table2": {m: {f: v[m] for f, v in PAPER_TABLE2.items()} for m in MODES}}
    results = args.results
    results.mkdir(parents=True, exist_ok=True)
    payload = stamp(payload, command, payload["budget"], [args.seed])  # adds the commit (provenance)
    atomic_write_json(results / "paper_pipeline.json", payload)
    if episodes and test:
        plot_bands(results / "goal_policy.png",
                   {"goal policy (paper preset)": [Band("test success", episodes[:len(test)], test, test, test)]},
                   "AlphaNPI-X goal policy, paper preset: greedy test success per epoch", xlabel="training episodes",
                   ylabel="test success")
    families = list(PAPER_TABLE2)
    b = payload["budget"]
    lines = [
        "# AlphaNPI-X pipeline in the paper's setting (`paper` preset, every addition of ours off)", "",
        f"`{command}`", "",
        f"Budget: goal policy {b['goal_policy_epochs']} of {b['goal_policy_total_epochs']} epochs "
        f"({b['goal_policy_episodes']} episodes, {b['goal_policy_env_steps']} env steps; the paper: 250 epochs on "
        f"28 actors), behaviour model on {b['behaviour_episodes']} episodes, meta-controller "
        f"{b['meta_controller_iterations']} iterations in the learned model; MuJoCo evaluation "
        f"{b['atomic_episodes']} episodes per atomic program, {b['table_episodes']} per non-atomic program and mode.",
        "", f"Wall seconds: {json.dumps(payload['wall_seconds'])}", "",
        f"Atomic programs (goal test, every block on the table): mean {payload['atomic']['mean_success']:.2f} "
        f"(ψ at the end {payload['atomic']['mean_post_success']:.2f}).", "",
        "| Table 2 | " + " | ".join(families) + " |", "|---|" + "---|" * len(families)]
    for mode in MODES:
        lines.append(f"| asg `paper`, {mode} | " + " | ".join(f"{table[mode].get(f, float('nan')):.2f}"
                                                             for f in families) + " |")
        lines.append(f"| paper, {mode} | " + " | ".join(f"{PAPER_TABLE2[f][mode]:.2f}" for f in families) + " |")
    lines += ["", f"Goal policy test success per epoch: {', '.join(f'{x:.2f}' for x in test)}", "",
              f"Beside Figure 9: the paper gives the goal policy's success only at the ends of its phases, as bars "
              f"(Figure 9: after 100 phase-1 epochs, {PAPER_PHASE1_EPISODES:,} episodes at its 2,800 per epoch, and "
              f"after 250, {PAPER_TOTAL_EPISODES:,}), no curve over episodes; this run's {b['goal_policy_episodes']:,} "
              f"episodes are {b['goal_policy_episodes'] / PAPER_PHASE1_EPISODES:.0%} of the first.", ""]
    atomic_write(results / "paper_pipeline.md", ("\n".join(lines) + "\n").encode())
    print("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3, help="goal-policy epochs (the paper's schedule has 250)")
    parser.add_argument("--episodes", type=int, default=10_000, help="behaviour-model episodes (paper: >= 10k)")
    parser.add_argument("--iterations", type=int, default=200, help="meta-controller iterations")
    parser.add_argument("--atomic-episodes", type=int, default=100)
    parser.add_argument("--table-episodes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1,
                        help="goal-policy rollout workers (Ray actors when > 1) and meta-controller self-play "
                             "processes (the same episodes, split)")
    parser.add_argument("--threads", type=int, default=1,
                        help="goal policy and behaviour model: physics and torch threads (compute only)")
    parser.add_argument("--jobs", type=int, default=1, help="processes for the MuJoCo evaluation (one suite each)")
    parser.add_argument("--out", type=Path, default=Path("runs/paper-pipeline"))
    parser.add_argument("--results", type=Path, default=Path("benchmarks/results/fetch_programs/paper_pipeline"))
    args = parser.parse_args(argv)
    command = command_line(__file__, argv)
    stages = Stages()
    try:
        paper = fp.goal_policy_config("paper")
        goal_policy = replace(paper, schedule=replace(paper.schedule, threads=args.threads,
                                                      torch_threads=args.threads))
        pipeline = fp.train_pipeline(args.out, preset="paper", seed=args.seed, workers=args.workers,
                                     world_model_kind="learned", goal_policy=goal_policy,
                                     behaviour=replace(fp.behaviour_config("paper"), episodes=args.episodes,
                                                       threads=args.threads, torch_threads=args.threads),
                                     iterations=args.iterations, goal_policy_epochs=args.epochs, progress=stages,
                                     on_stage=lambda stage, what: print(f"[{stage}] {what}", file=sys.stderr))
        stages.close()
        if pipeline.status == Status.INTERRUPTED:
            raise KeyboardInterrupt
        found = {stage: _result(args.out / stage) or {} for stage in fp.STAGES}
        found["goal-policy"] = _goal_policy_summary(args.out / "goal-policy")
        evals = evaluate(args.out, str(pipeline.artifact("goal-policy")), str(pipeline.artifact("behaviour-model")),
                         args, stages)
    except KeyboardInterrupt:
        stages.close("interrupted")
        print("interrupted; the same command continues", file=sys.stderr)
        return 130
    finally:
        stages.close()
    report(args, found, evals, command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
