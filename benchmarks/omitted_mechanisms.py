"""ASGRL with user models that leave out a mechanism the world has (issue 17): 10 seeds each.

    python benchmarks/omitted_mechanisms.py --seeds 10 --out runs/omitted [--preset asg] [--methods asgrl]
        [--overrides '{"learner": {"diversity": {"uniform_skill_prior": true}}}'] [--name omitted]

The models are ``pddl_models/omitted/*.pddl``: Household without the battery, Household without
the key, Mario without the hidden key, MineCraft without the wood processing. Each model's world
still has the mechanism; only the model forgets it. Runs go to ``<out>/<model>/<method>/seed<N>/``
through ``experiments.run_grid`` with ``reuse``, so the command resumes where it stopped (Ctrl-C
checkpoints the current run). Results: ``benchmarks/results/omitted/omitted.{json,md}``, per model
and method the final greedy success, the ε = 0.05 success (Sec. 5) and the seeds solved; the JSON
also holds the command, the commit, the budget and the seeds (``provenance``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from provenance import command_line, stamp

from asg.learning.asgrl.experiments import grid_config, run_grid, summarize
from asg.learning.registry import bind_domain
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
    args = parser.parse_args(argv)
    methods = args.methods.split(",")
    table: dict[str, list[dict]] = {}
    for seed in range(args.seeds):  # seeds outer: an unfinished sweep has the same seeds everywhere
        for stem in args.models.split(","):
            domain, model = MODELS[stem], MODELS_DIR / f"{stem}.pddl"
            for method in methods:
                def done(run, reused, stem=stem, method=method):
                    r = run.result
                    print(f"{stem}/{method}/seed{run.seed}: {r.status}, greedy {r.success_rate:.2f}, "
                          f"{r.env_steps} steps{' (reused)' if reused else ''}", file=sys.stderr, flush=True)
                runs = run_grid(domain, [method], [seed], args.out / stem, steps=args.steps, model=str(model),
                                overrides=args.overrides,
                                binding=bind_domain(domain, model), preset=args.preset, reuse=True, on_done=done)
                if runs and runs[-1].result.status == "interrupted":
                    print("interrupted; the same command resumes", file=sys.stderr)
                    return
    for stem in args.models.split(","):
        domain, model = MODELS[stem], MODELS_DIR / f"{stem}.pddl"
        runs = run_grid(domain, methods, list(range(args.seeds)), args.out / stem, steps=args.steps,
                        model=str(model), binding=bind_domain(domain, model), preset=args.preset, reuse=True,
                        overrides=args.overrides)
        table[stem] = summarize(runs)
    args.results.mkdir(parents=True, exist_ok=True)
    command = command_line(__file__, argv)
    first = args.models.split(",")[0]
    steps = grid_config(MODELS[first], methods[0], 0, args.steps, args.overrides, preset=args.preset).total_steps
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
