"""ASGRL runs' final success with and without the frozen policy's retry switches, on the same layouts (issue 40).

``learner.retry_epsilon`` and ``learner.retry_other_skill`` (ours) act only in the frozen policy, so
they need no training of their own: this scores each run folder's checkpoint as ``own_worlds.py``
scores its final (``asg eval RUN --episodes N``: ε = 0.05 on the final ε layouts, greedy on the greedy
ones), with the run's own setting ("without"), with each value of ``--retry-epsilon`` ("with_P"), and
with ``--retry-other-skill`` alone and beside each value ("with_other", "with_other_P"), and writes per
seed and in mean ± s.e.m. The runs must have been trained with ``learner.retry_timed_out``.
``--layout-offset K`` scores the layouts of seed + K instead of the run's own, for choosing a setting
off the layouts it is reported on.

    python benchmarks/retry_epsilon.py NAME=RUN_DIR [...] [--retry-epsilon 0.25[,0.5]] [--retry-other-skill] \
        --out FILE [--layout-offset K] [--jobs N]

``--jobs N`` scores N runs at once, each in a process of its own (the figures do not change).
"""
from __future__ import annotations

import argparse
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from provenance import command_line, named_path, write_result

from asg.learning.asgrl.trainer import evaluate_run
from asg.learning.errors import AsgError
from asg.learning.run_dir import RunDir


def _summary(values: list[float]) -> dict[str, float]:
    sem = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
    return {"mean": round(statistics.fmean(values), 4), "sem": round(sem, 4)}


def _values(text: str) -> list[float]:
    values = [float(v) for v in text.split(",")]
    if not all(0.0 < v <= 1.0 for v in values):
        raise argparse.ArgumentTypeError(f"expected probabilities in (0, 1], got {text}")
    return values


def settings(values: list[float], other: bool) -> list[tuple[str, float | None, bool | None]]:
    """(label, retry_epsilon, retry_other_skill) of each scoring, None: the run's own."""
    plain = [("without", None, None), *((f"with_{v:g}", v, None) for v in values)]
    return plain + ([("with_other", None, True), *((f"with_other_{v:g}", v, True) for v in values)] if other else [])


def score_run(folder: str, values: list[float], other: bool, episodes: int, offset: int) -> dict[str, Any]:
    """One run's final ε = 0.05 and greedy success with its own setting ("without") and each other."""
    seed = int(RunDir.open(folder).read_config()["config"]["seed"])  # the run's seed, without loading its learner
    out: dict[str, Any] = {"seed": seed, "layout_seed": seed + offset}
    for label, value, other_skill in settings(values, other):
        result = evaluate_run(folder, episodes=episodes, retry_epsilon=value, retry_other_skill=other_skill,
                              layout_seed=seed + offset)
        out["env_steps"] = result.env_steps
        out[f"{label}_epsilon"], out[f"{label}_greedy"] = result.epsilon_success_rate, result.success_rate
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=named_path("RUN_DIR"), metavar="NAME=RUN_DIR")
    parser.add_argument("--retry-epsilon", type=_values, default=[], help="comma-separated values")
    parser.add_argument("--retry-other-skill", action="store_true", help="also with learner.retry_other_skill")
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--layout-offset", type=int, default=0)
    parser.add_argument("--out", required=True)
    parser.add_argument("--jobs", type=int, default=1, help="runs scored at once, a process each")
    args = parser.parse_args(argv)
    if args.episodes < 1 or args.layout_offset < 0 or args.jobs < 1:
        parser.error("--episodes, --jobs: expected a positive count; --layout-offset: a count >= 0")
    if not args.retry_epsilon and not args.retry_other_skill:
        parser.error("--retry-epsilon or --retry-other-skill: give at least one setting to score")
    runs: dict[str, Any] = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        scored = [(name, folder, pool.submit(score_run, str(folder), args.retry_epsilon, args.retry_other_skill,
                                             args.episodes, args.layout_offset)) for name, folder in args.runs]
        for name, folder, future in scored:
            try:
                runs[name] = future.result()
            except AsgError as err:
                where = "" if str(folder) in str(err) else f"{folder}: "  # a missing folder's error names it already
                print(f"error: {where}{err}", file=sys.stderr)
                pool.shutdown(cancel_futures=True)
                return 2
            print(name, {k: v for k, v in runs[name].items() if k.startswith("with")})
    keys = [k for k in next(iter(runs.values())) if k.startswith("with")]
    summary = {key: _summary([run[key] for run in runs.values()]) for key in keys}
    budget = {"env_steps": max(run["env_steps"] for run in runs.values()), "episodes": args.episodes}
    write_result(args.out, {"retry_epsilon": args.retry_epsilon, "retry_other_skill": args.retry_other_skill,
                            "layout_offset": args.layout_offset, "runs": runs,
                            "summary": summary}, command_line(__file__, argv), budget,
                 sorted(run["seed"] for run in runs.values()), indent=2)
    print(", ".join(f"{key} {s['mean']:.3f} ± {s['sem']:.3f}" for key, s in summary.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
