"""Landmark-guided program search: training iterations to 0.9 success, with and without guidance.

Trains the AlphaNPI-X meta-controller on the Fetch library with the exact symbolic behaviour
model (Table 5 settings unless overridden) once per guidance mode and seed. Modes: ``off``;
``prior`` / ``bonus`` (guided search in self-play and validation); ``prior-train`` /
``bonus-train`` (guided self-play, unguided validation: what the network itself learned).
Every iteration validates every program (10 exploit-mode episodes, 5 simulations, fixed
start states). A run
stops once every program is at >= 0.9 in ``--streak`` validations in a row, or after
``--max-iterations``. Reported per run: the first iteration at which every program was at
>= 0.9 ("first"), the first iteration of the streak that stopped it ("stable"; censored runs
show "> iterations"), the first such iteration per program, the area under the mean-success
curve over ``--max-iterations`` (a stopped run's last value carried forward) and the wall
time. Each finished run is appended to the JSON file, so a long benchmark can be stopped and
resumed (finished runs are skipped).

    python benchmarks/npi_landmarks.py [--seeds 0 1 2] [--modes off prior prior-train]
        [--max-iterations 100]
        [--workers 1] [--lr 1e-4] [--json runs/npi_landmarks.json]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from provenance import command_line, stamp, write_json

from asg.learning.npi.config import NetConfig, NPIConfig, SearchConfig
from asg.learning.npi.trainer import MetaControllerTrainer
from asg.learning.world_models.program_models import exact_fetch_model

MODES = ["off", "prior", "bonus", "prior-train", "bonus-train"]


def run_one(mode: str, seed: int, args) -> dict:
    """One training run; its figures."""
    guidance, _, scope = mode.partition("-")  # "prior-train": guided self-play, unguided validation
    search = SearchConfig(landmark=guidance, landmark_weight=args.weight if guidance != "off" else 0.5)
    config = NPIConfig(net=NetConfig(lr=args.lr), search=search, iterations=args.max_iterations,
                       workers=args.workers, validate_with_guidance=scope != "train")
    trainer = MetaControllerTrainer(exact_fetch_model(), config, seed=seed, target=args.target)
    streak: list[int] = []

    def watch(row: dict) -> None:
        ok = row.get("val_min", 0.0) >= args.target
        streak[:] = streak + [row["iteration"]] if ok else []

    start = time.perf_counter()
    state = trainer.train(callback=watch, should_stop=lambda: len(streak) >= args.streak)
    curve = [row["val_mean"] for row in state.rows if "val_mean" in row]
    padded = curve + [curve[-1] if curve else 0.0] * (args.max_iterations - len(curve))
    return {"mode": mode, "seed": seed, "iterations": state.iteration,
            "to_target_all": state.first_reached.get("all"),
            "to_target_stable": streak[0] if len(streak) >= args.streak else None,
            "to_target": {k: v for k, v in sorted(state.first_reached.items()) if k != "all"},
            "final_validation": state.validation, "auc": float(np.mean(padded)),
            "curve": curve, "program_curves": {p: [row.get(f"val/{p}") for row in state.rows]
                                               for p in sorted(state.validation)},
            "wall_seconds": round(time.perf_counter() - start, 1),
            "lr": args.lr, "max_iterations": args.max_iterations, "weight": args.weight}


def summary_lines(runs: list[dict], max_iterations: int) -> list[str]:
    """The per-run table and the per-mode summary."""
    lines = [f"{'mode':<11} {'seed':>4} {'first all>=t':>12} {'stable all>=t':>13} {'AUC':>6} {'final min':>9} "
             f"{'wall s':>7}"]
    for r in runs:
        first, stable = (str(x) if x is not None else f"> {r['iterations']}"
                         for x in (r["to_target_all"], r["to_target_stable"]))
        final = min(r["final_validation"].values()) if r["final_validation"] else 0.0
        lines.append(f"{r['mode']:<11} {r['seed']:>4} {first:>12} {stable:>13} {r['auc']:>6.3f} {final:>9.2f} "
                     f"{r['wall_seconds']:>7.0f}")
    lines.append("")
    lines.append(f"{'mode':<11} {'runs':>4} {'mean first (censored)':>22} {'mean stable (censored)':>23} "
                 f"{'mean AUC':>9}")
    for mode in sorted({r["mode"] for r in runs}):
        mine = [r for r in runs if r["mode"] == mode]
        first = [r["to_target_all"] or r["max_iterations"] for r in mine]
        stable = [r["to_target_stable"] or r["max_iterations"] for r in mine]
        lines.append(f"{mode:<11} {len(mine):>4} {np.mean(first):>22.1f} {np.mean(stable):>23.1f} "
                     f"{np.mean([r['auc'] for r in mine]):>9.3f}")
    programs = sorted({p for r in runs for p in r["final_validation"]})
    if programs:
        lines.append("")
        lines.append("first iteration at >= target, per program (mean over seeds; '-' = never)")
        for mode in sorted({r["mode"] for r in runs}):
            mine = [r for r in runs if r["mode"] == mode]
            cells = []
            for p in programs:
                firsts = [r["to_target"].get(p) for r in mine]
                cells.append(f"{p}={np.mean([f for f in firsts if f is not None]):.1f}"
                             f"({sum(f is not None for f in firsts)}/{len(firsts)})" if any(firsts) else f"{p}=-")
            lines.append(f"  {mode}: " + ", ".join(cells))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--modes", nargs="+", default=["off", "prior", "prior-train"], choices=MODES)
    parser.add_argument("--max-iterations", type=int, default=100)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--streak", type=int, default=3,
                        help="stop once every program is at >= target in this many validations in a row")
    parser.add_argument("--lr", type=float, default=1e-4, help="Adam learning rate (Table 5: 1e-4)")
    parser.add_argument("--weight", type=float, default=0.5, help="λ of the landmark prior mix / bonus")
    parser.add_argument("--workers", type=int, default=1, help="self-play processes")
    parser.add_argument("--json", default="runs/npi_landmarks.json", help="runs are appended here")
    args = parser.parse_args()

    torch.set_num_threads(1)
    out = Path(args.json)
    runs: list[dict] = json.loads(out.read_text())["runs"] if out.is_file() else []

    def key(r: dict) -> tuple:
        return (r["mode"], r["seed"], r["lr"], r["max_iterations"], r["weight"])

    for seed in args.seeds:
        for mode in args.modes:
            wanted = (mode, seed, args.lr, args.max_iterations, args.weight)
            if any(key(r) == wanted for r in runs):
                continue
            print(f"training: landmark={mode} seed={seed}", flush=True)
            runs.append(run_one(mode, seed, args))
            out.parent.mkdir(parents=True, exist_ok=True)
            write_json(out, stamp({"runs": runs}, command_line(__file__),  # the last invocation's command
                                  {"max_iterations": args.max_iterations}, args.seeds), indent=1)
    chosen = [r for r in runs if r["lr"] == args.lr and r["max_iterations"] == args.max_iterations
              and r["weight"] == args.weight and r["mode"] in args.modes and r["seed"] in args.seeds]
    print("\n".join(summary_lines(chosen, args.max_iterations)))


if __name__ == "__main__":
    main()
