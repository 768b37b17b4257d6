"""When each landmark was reached, per seed: where a model's runs spend their env steps (issues 39, 40).

Every ASGRL run's ``metrics.csv`` has, beside the success rate, a ``reached_<landmark>`` column: the
share of the evaluation episodes that reached that landmark at each evaluation point. For every
folder given (``NAME=DIR``, DIR holding ``seed*/metrics.csv``, as ``benchmarks/own_worlds.py`` writes
them) this reads, per seed, the first evaluation point at which each landmark and the goal were
reached in at least ``--level`` of the episodes, and the steps between consecutive landmarks (the
*stage* each landmark took). Medians over the seeds; ``null`` where a seed never got there.

    python benchmarks/landmark_reach.py omitted=benchmarks/results/own_worlds/repaired/keyinbox \\
        repaired=benchmarks/results/own_worlds/repaired/keyinbox-repaired --out FILE
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
from pathlib import Path

from provenance import command_line, named_path, write_result

GOAL = "goal"


def first_reach(metrics: Path, level: float) -> dict[str, int | None]:
    """Landmark (and ``goal``) -> the first env step at which its reach was >= ``level``."""
    with metrics.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise ValueError(f"{metrics}: no evaluation rows")
    columns = [c for c in rows[0] if c.startswith("reached_")] + ["success_rate"]
    out: dict[str, int | None] = {}
    for column in columns:
        steps = [int(float(r["env_steps"])) for r in rows if r[column] not in ("", None) and float(r[column]) >= level]
        out[GOAL if column == "success_rate" else column[len("reached_"):]] = steps[0] if steps else None
    return out


def stages(reach: dict[str, int | None]) -> dict[str, int | None]:
    """Steps each landmark took after the one before it (the columns' order, the landmark order)."""
    out, before = {}, 0
    for name, step in reach.items():
        out[name] = None if step is None or before is None else step - before
        before = step
    return out


def _median(values: list[int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if len(known) == len(values) else None


def summarise(folder: Path, level: float) -> dict:
    seeds = sorted(folder.glob("seed*/metrics.csv"), key=lambda p: p.parent.name)
    if not seeds:
        raise ValueError(f"{folder}: no seed*/metrics.csv")
    per_seed = {p.parent.name: first_reach(p, level) for p in seeds}
    names = list(next(iter(per_seed.values())))
    staged = {seed: stages(r) for seed, r in per_seed.items()}
    return {"folder": str(folder), "first_reach": per_seed, "stage_steps": staged,
            "median_first_reach": {n: _median([r.get(n) for r in per_seed.values()]) for n in names},
            "median_stage_steps": {n: _median([s.get(n) for s in staged.values()]) for n in names}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=named_path("DIR"), metavar="NAME=DIR",
                        help="seed folders of one model or world")
    parser.add_argument("--level", type=float, default=0.9, help="reach share that counts (default 0.9)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = {}
    for name, folder in args.folders:
        try:
            result[name] = summarise(folder, args.level)
        except (OSError, ValueError, KeyError) as err:
            sys.exit(f"error: {err}")
        med = result[name]["median_stage_steps"]
        print(f"{name:<12} median steps per stage: " + ", ".join(f"{k} {v}" for k, v in med.items()))
    seeds = sorted({int(seed[len("seed"):]) for model in result.values() for seed in model["first_reach"]
                    if seed[len("seed"):].isdigit()})
    runs = sum(len(model["first_reach"]) for model in result.values())
    write_result(args.out, {"level": args.level, "models": result}, command_line(__file__, argv),
                 {"runs_read": runs}, seeds)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
