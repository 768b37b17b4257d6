"""ASGRL with user models that leave out a mechanism the world has (issue 17): 10 seeds each.

    python benchmarks/omitted_mechanisms.py --seeds 10 --out runs/omitted [--preset asg] [--methods asgrl]
        [--overrides '{"learner": {"diversity": {"uniform_skill_prior": true}}}'] [--name omitted]

The models are ``pddl_models/omitted/*.pddl``: Household without the battery, Household without
the key, Mario without the hidden key, MineCraft without the wood processing. Each model's world
still has the mechanism; only the model forgets it. Runs go to ``<out>/<model>/<method>/seed<N>/``
through the one grid runner, ``grid.run_cells``, with ``reuse``, so the command resumes where it
stopped (Ctrl-C checkpoints the running cells); one after another here, or on Ray with ``--jobs N``
or ``--ray-address ADDR`` (as ``asg compare`` takes them). Results:
``benchmarks/results/omitted/omitted.{json,md}``, per model and method the final greedy success,
the ε = 0.05 success (Sec. 5) and the seeds solved; the JSON also holds the command, the commit,
the budget and the seeds (``provenance``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from provenance import command_line, stamp

from asg.cli.options import add_grid_arguments, grid_arguments, run_benchmark_grid
from asg.learning.asgrl.experiments import summarize
from asg.learning.asgrl.grid import Cell, GridRun
from asg.learning.run_dir import atomic_write, atomic_write_json

MODELS_DIR = Path(__file__).resolve().parents[1] / "pddl_models" / "omitted"
RESULTS = Path(__file__).resolve().parent / "results" / "omitted"
MODELS = {  # model stem -> the world it is a model of
    "household_no_battery": "household-v1",
    "household_no_key": "household-v1",
    "mario_no_key": "mario",
    "minecraft_no_processing": "minecraft",
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--methods", default="asgrl")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--preset", default="asg")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("runs/omitted"))
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--overrides", type=json.loads, default=None,
                        help="partial config as JSON, applied to every run (named in the table)")
    parser.add_argument("--name", default="omitted", help="file stem of the results")
    add_grid_arguments(parser)
    args = parser.parse_args(argv)
    where = grid_arguments(parser, args)
    methods, stems = args.methods.split(","), args.models.split(",")
    # seeds outer: an unfinished sweep has the same seeds everywhere
    cells = [Cell(MODELS[stem], method, seed, args.preset, args.steps, args.overrides,
                  model=str(MODELS_DIR / f"{stem}.pddl"), group=stem)
             for seed in range(args.seeds) for stem in stems for method in methods]

    def done(run: GridRun, reused: bool) -> None:
        r = run.result
        print(f"{run.group}/{run.method}/seed{run.seed}: {r.status}, greedy {r.success_rate:.2f}, "
              f"{r.env_steps} steps{' (reused)' if reused else ''}", file=sys.stderr, flush=True)

    runs, interrupted = run_benchmark_grid(cells, args.out, where, done)
    if interrupted:
        return
    table: dict[str, list[dict]] = {stem: summarize(sorted((r for r in runs if r.group == stem),
                                                           key=lambda r: (methods.index(r.method), r.seed)))
                                    for stem in stems}
    args.results.mkdir(parents=True, exist_ok=True)
    command = command_line(__file__, argv)
    steps = cells[0].config().total_steps
    atomic_write_json(args.results / f"{args.name}.json", stamp(
        {"preset": args.preset, "overrides": args.overrides, "table": table},
        command, {"env_steps_per_run": steps}, range(args.seeds)))
    switches = "" if not args.overrides else f", overrides `{json.dumps(args.overrides)}`"
    lines = [f"# ASGRL with models that omit a mechanism (preset `{args.preset}`{switches}, {args.seeds} seeds)", "",
             f"`{command}`", "",
             "| model | world | method | seeds solved | greedy | ε = 0.05 | median steps to success |",
             "|---|---|---|---|---|---|---|"]
    for stem, rows in table.items():
        for row in rows:
            eps = row["epsilon_success_mean"]
            lines.append(f"| {stem} | {MODELS[stem]} | {row['label']} | {row['seeds_succeeding']}/{row['seeds']} | "
                         f"{row['greedy_success_mean']:.2f} ± {row['greedy_success_sem']:.2f} | "
                         f"{'—' if eps is None else f'{eps:.2f}'} | {row['median_steps_to_success'] or '—'} |")
    atomic_write(args.results / f"{args.name}.md", ("\n".join(lines) + "\n").encode())
    print(json.dumps(table, indent=1)[:2000])


if __name__ == "__main__":
    main()
