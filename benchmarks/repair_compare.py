"""Does ASGRL learn faster on the model ``asg mvtr --suggest --write`` repairs than on the omitted one? (issue 39)

    python benchmarks/repair_compare.py --seeds 10 [--steps N] [--models household_no_battery,...]
        [--explore 20:500:50] [--explore-seed 0] [--out runs/repair_compare] [--jobs N | --ray-address ADDR]

For each model of ``pddl_models/omitted/`` (the world it is a model of: ``MODELS``, as in
``omitted_mechanisms.py`` and ``repair_hints.py``): the repaired model is what ``asg mvtr --domain
WORLD --model OMITTED --suggest --write REPAIRED.pddl`` writes, made by the same library calls the
command makes (``run_suggest``, ``repair_model``, an atomic write, ``run_mvtr`` on the written file)
with its default exploration (``--explore``: ``--episodes:--max-steps:--branch-steps``, and
``--explore-seed``), into ``<out>/repaired/<model>.pddl``. Then ASGRL (the ``asg`` preset's defaults
for the world, as ``omitted_mechanisms.py`` runs it; ``--steps`` overrides the budget) trains on the
omitted model, on the repaired one and, as the trivial comparison, on the world's complete model
(``pddl_models/complete/``), on the same seeds, every cell through ``grid.run_cells`` with
``reuse`` (the same command resumes; a repaired file already there must equal the one made now).

Metric: env steps until the run's learning-curve evaluation first reaches success 1.0 (the
trainer's ``steps_to_success``, the threshold ``experiments.summarize`` counts a seed solved at:
greedy success over the preset's evaluation episodes, every ``eval_interval`` steps). A run that
never does is censored at its budget: it counts as more than the budget, a median that falls on
such a run is reported as beyond the budget, and a seed pair where one run is censored goes to the
other. Also the final greedy and ε = 0.05 success. Results:
``benchmarks/results/repair_compare.{json,md}`` (the JSON with command, commit, budget and seeds).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from provenance import command_line, write_result

from asg.cli.options import add_grid_arguments, grid_arguments, run_benchmark_grid
from asg.envs.domains import get_domain
from asg.envs.mvtr_traces import ExplorationConfig, repair_model, run_mvtr, run_suggest
from asg.learning.asgrl.grid import Cell, GridRun
from asg.learning.atomic import atomic_write
from asg.planning import load_task
from asg.planning.hints import HintConfig

ROOT = Path(__file__).resolve().parents[1]
OMITTED = ROOT / "pddl_models" / "omitted"
RESULTS = Path(__file__).resolve().parent / "results"
MODELS = {"household_no_battery": "household-v1", "household_no_key": "household-v1",
          "mario_no_key": "mario", "minecraft_no_processing": "minecraft"}
METHOD = "asgrl"
KINDS = ("omitted", "repaired", "complete")
REACHED = "reached_"  # metrics.csv: the share of evaluation episodes that reached a landmark


def write_repaired(stem: str, folder: Path, config: ExplorationConfig) -> dict[str, Any]:
    """``asg mvtr --suggest --write <folder>/<stem>.pddl`` on the omitted model: what it applied and
    the re-check. A file already there is kept only if it is the repair made now."""
    spec, model = get_domain(MODELS[stem]), OMITTED / f"{stem}.pddl"
    path = folder / f"{stem}.pddl"
    found = run_suggest(spec, model, config, HintConfig())
    fixed = repair_model(spec, model, found)
    if path.exists() and path.read_text() != fixed.text:
        raise SystemExit(f"{path}: holds another repair (another exploration?); remove it or choose another --out")
    if not path.exists():
        atomic_write(path, fixed.text.encode("utf-8"))
    recheck = run_mvtr(spec, path, config)
    before, after = load_task(model), load_task(path)
    return {"path": str(path), "mvtr": recheck.verdict, "goal_traces": found.hints.goal_traces,
            "new_atoms": sorted(str(a) for a in set(after.facts) - set(before.facts)),
            "operators_changed": len(set(after.operators) ^ set(before.operators)),
            "applied": [[str(e) for e in hint.edits] for hint in fixed.applied],
            "kinds": [hint.kind for hint in fixed.applied], "landmarks": list(fixed.subgoals)}


def cells_for(stems: list[str], seeds: range, repaired: dict[str, str], steps: int | None,
              preset: str, overrides: dict[str, Any] | None = None) -> list[Cell]:
    """Per seed (outer, so an unfinished grid has the same seeds everywhere): each model omitted and
    repaired, and each world's complete model once (two omitted models of one world share it)."""
    worlds = list(dict.fromkeys(MODELS[s] for s in stems))
    cells = []
    for seed in seeds:
        for stem in stems:
            cells.append(Cell(MODELS[stem], METHOD, seed, preset, steps, overrides,
                              model=str(OMITTED / f"{stem}.pddl"), group=f"{stem}/omitted"))
            cells.append(Cell(MODELS[stem], METHOD, seed, preset, steps, overrides, model=repaired[stem],
                              group=f"{stem}/repaired"))
        for world in worlds:
            cells.append(Cell(world, METHOD, seed, preset, steps, overrides,
                              model=str(get_domain(world).complete_model_path()), group=f"complete/{world}"))
    return cells


def censored_median(steps: list[int | None], budget: int) -> dict[str, Any]:
    """The median of steps to success, a run that never succeeded (None) counted as beyond
    ``budget``: ``median`` None when the middle run(s) include one (``censored_median``)."""
    ordered = sorted(steps, key=lambda v: (v is None, v or 0))
    middle = ordered[(len(ordered) - 1) // 2: len(ordered) // 2 + 1]
    beyond = any(v is None for v in middle)
    return {"median": None if beyond else statistics.median(middle), "censored_median": beyond,
            "censored_runs": sum(v is None for v in steps), "runs": len(steps), "budget": budget}


def pair(first: int | None, second: int | None) -> str:
    """``win`` when ``second`` reaches success in fewer steps than ``first`` (None: never, beyond any
    number), ``loss`` when more, ``tie`` when equal or both never."""
    a, b = (float("inf") if v is None else v for v in (first, second))
    return "win" if b < a else "loss" if b > a else "tie"


def at_most(repaired: dict[str, Any], omitted: dict[str, Any]) -> bool | None:
    """Is the repaired median no more than the omitted one? None when both lie beyond the budget."""
    if repaired["censored_median"] and omitted["censored_median"]:
        return None
    if repaired["censored_median"] or omitted["censored_median"]:
        return omitted["censored_median"]
    return repaired["median"] <= omitted["median"]


def never_reached(rows: tuple[dict[str, Any], ...]) -> list[str]:
    """The landmarks no evaluation episode of the run reached (its curve's ``reached_<landmark>``
    shares, in the landmark order): where a run that never succeeded stalled."""
    names = [k for k in (rows[0] if rows else {}) if k.startswith(REACHED)]
    return [k[len(REACHED):] for k in names if max(float(row[k] or 0) for row in rows) == 0.0]


def per_run(run: GridRun) -> dict[str, Any]:
    r = run.result
    return {"seed": run.seed, "steps_to_success": r.steps_to_success, "env_steps": r.env_steps,
            "status": r.status, "greedy": r.success_rate, "epsilon": r.epsilon_success_rate,
            "never_reached": never_reached(run.rows), "wall_seconds": round(r.wall_seconds, 1)}


def compare(stem: str, runs: dict[str, list[GridRun]], budget: int) -> dict[str, Any]:
    """One model's figures: per kind the censored median and final success, the seed pairs."""
    rows = {kind: [per_run(r) for r in sorted(runs[kind], key=lambda r: r.seed)] for kind in KINDS}
    out: dict[str, Any] = {"model": stem, "world": MODELS[stem]}
    for kind, mine in rows.items():
        out[kind] = {**censored_median([r["steps_to_success"] for r in mine], budget),
                     "solved": sum(r["steps_to_success"] is not None for r in mine),
                     "final_greedy_mean": round(statistics.mean(r["greedy"] for r in mine), 4),
                     "final_epsilon_mean": round(statistics.mean(r["epsilon"] for r in mine
                                                                 if r["epsilon"] is not None), 4)
                     if any(r["epsilon"] is not None for r in mine) else None,
                     "runs_detail": mine}
    for name, (a, b) in {"repaired_vs_omitted": ("omitted", "repaired"),
                         "complete_vs_omitted": ("omitted", "complete"),
                         "repaired_vs_complete": ("complete", "repaired")}.items():
        outcomes = [pair(x["steps_to_success"], y["steps_to_success"]) for x, y in zip(rows[a], rows[b])]
        out[name] = {"wins": outcomes.count("win"), "ties": outcomes.count("tie"), "losses": outcomes.count("loss")}
    out["seed_pairs"] = [{"seed": o["seed"], **{kind: rows[kind][i]["steps_to_success"] for kind in KINDS}}
                         for i, o in enumerate(rows["omitted"])]
    out["repaired_at_most_omitted"] = at_most(out["repaired"], out["omitted"])
    return out


def _median(entry: dict[str, Any]) -> str:
    return f"> {entry['budget']}" if entry["censored_median"] else f"{entry['median']:g}"


def _steps(value: int | None, budget: int) -> str:
    return f"> {budget} (censored)" if value is None else str(value)


def markdown(data: dict[str, Any]) -> str:
    budget = data["budget"]
    overrides = f"; overrides `{json.dumps(data['overrides'])}`" if data.get("overrides") else ""
    lines = ["# ASGRL on the repaired model vs the omitted one (issue 39)", "",
             f"`{data['command']}` at commit `{data['commit']}`; preset `{data['preset']}` (the world's defaults, as "
             f"`omitted_mechanisms.py` runs it{overrides}), {budget['env_steps_per_run']} env steps a run, seeds "
             f"{data['seeds']}; the repaired model: `asg mvtr --suggest --write` with exploration "
             f"{budget['exploration']} (episodes:max-steps:branch-steps), seed {budget['exploration_seed']}.", "",
             *([data["note"], ""] if data.get("note") else []),
             "Steps to success: env steps at the first learning-curve evaluation with greedy success 1.0 "
             f"({budget['eval_episodes']} episodes every {budget['eval_interval']} steps; the threshold "
             "`summarize` counts a seed solved at). A run that never got there is censored at the budget "
             "(`> budget`); a median that falls on one is `> budget`. Win: the second model of the pair "
             "needed fewer steps on that seed (a censored run loses to a solved one; two censored tie).", "",
             "| model | median steps omitted | repaired | complete | solved o/r/c | final greedy o/r/c | "
             "repaired vs omitted w/t/l | complete vs omitted w/t/l | repaired ≤ omitted (median) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in data["models"]:
        o, r, k = c["omitted"], c["repaired"], c["complete"]
        holds = {True: "yes", False: "no", None: "unknown (both beyond the budget)"}[c["repaired_at_most_omitted"]]
        wtl = [f"{c[n]['wins']}/{c[n]['ties']}/{c[n]['losses']}" for n in ("repaired_vs_omitted",
                                                                            "complete_vs_omitted")]
        lines.append(f"| {c['model']} | {_median(o)} | {_median(r)} | {_median(k)} | "
                     f"{o['solved']}/{r['solved']}/{k['solved']} of {o['runs']} | "
                     f"{o['final_greedy_mean']:.2f}/{r['final_greedy_mean']:.2f}/{k['final_greedy_mean']:.2f} | "
                     f"{wtl[0]} | {wtl[1]} | {holds} |")
    lines += ["", "Per seed, steps to success (omitted / repaired / complete):", ""]
    for c in data["models"]:
        b = c["omitted"]["budget"]
        lines.append(f"* **{c['model']}**: " + "; ".join(
            f"{p['seed']}: {_steps(p['omitted'], b)} / {_steps(p['repaired'], b)} / {_steps(p['complete'], b)}"
            for p in c["seed_pairs"]))
    lines += ["", "Landmarks no evaluation episode ever reached, in runs that never succeeded:", ""]
    for c in data["models"]:
        for kind in KINDS:
            stalled = [f"seed {r['seed']}: {' '.join(r['never_reached']) or '-'}"
                       for r in c[kind]["runs_detail"] if r["steps_to_success"] is None]
            if stalled:
                lines.append(f"* **{c['model']}** {kind}: " + "; ".join(stalled))
    lines += ["", "The repaired models (hints applied by `--write`, the re-check, the new landmark sequence):", ""]
    for stem, rep in data["repaired"].items():
        lines.append(f"* **{stem}** → `{rep['path']}` ({rep['goal_traces']} goal-reaching traces; mvtr "
                     f"{rep['mvtr']}): {' < '.join(rep['landmarks'])}")
        lines += [f"  {k}. [{kind}] {'; '.join(edits)}" for k, (kind, edits) in
                  enumerate(zip(rep["kinds"], rep["applied"]), 1)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1, the same for every model")
    parser.add_argument("--steps", type=int, default=None, help="env steps a run (default: the preset's)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--preset", default="asg")
    parser.add_argument("--overrides", type=json.loads, default=None,
                        help="partial config as JSON, applied to every run (named in the results)")
    parser.add_argument("--explore", default="20:500:50",
                        help="EPISODES:MAX_STEPS:BRANCH_STEPS of asg mvtr's exploration (its defaults)")
    parser.add_argument("--explore-seed", type=int, default=0, help="asg mvtr --seed")
    parser.add_argument("--out", type=Path, default=Path("runs/repair_compare"),
                        help="run folders and the repaired models")
    parser.add_argument("--results", type=Path, default=RESULTS / "repair_compare.json")
    parser.add_argument("--note", default="", help="said under the results' heading (e.g. why seeds were cut)")
    add_grid_arguments(parser)
    args = parser.parse_args(argv)
    where = grid_arguments(parser, args)
    stems = args.models.split(",")
    unknown = [s for s in stems if s not in MODELS]
    if unknown:
        parser.error(f"--models: unknown {', '.join(unknown)} (known: {', '.join(MODELS)})")
    episodes, max_steps, branch_steps = (int(v) for v in args.explore.split(":"))
    exploration = ExplorationConfig(episodes, max_steps, branch_steps, seed=args.explore_seed)
    repaired = {stem: write_repaired(stem, args.out / "repaired", exploration) for stem in stems}
    for stem, rep in repaired.items():
        print(f"{stem}: repaired into {rep['path']} (mvtr {rep['mvtr']}): {' < '.join(rep['landmarks'])}",
              file=sys.stderr, flush=True)
    cells = cells_for(stems, range(args.seeds), {s: r["path"] for s, r in repaired.items()}, args.steps, args.preset,
                      args.overrides)

    def done(run: GridRun, reused: bool) -> None:
        r = run.result
        print(f"{run.group}/seed{run.seed}: {r.status}, greedy {r.success_rate:.2f}, first success "
              f"{r.steps_to_success}, {r.env_steps} steps{' (reused)' if reused else ''}", file=sys.stderr, flush=True)

    runs, interrupted = run_benchmark_grid(cells, args.out, where, done)
    if interrupted:
        return 1
    cfg = cells[0].config()
    budget = cfg.total_steps
    models = []
    for stem in stems:
        groups = {"omitted": f"{stem}/omitted", "repaired": f"{stem}/repaired", "complete": f"complete/{MODELS[stem]}"}
        models.append(compare(stem, {k: [r for r in runs if r.group == g] for k, g in groups.items()}, budget))
    data = {"note": args.note, "preset": args.preset, "overrides": args.overrides, "method": METHOD,
            "metric": "steps_to_success (first evaluation with greedy success 1.0), censored at the budget",
            "repaired": repaired, "models": models}
    stamped = write_result(args.results, data, command_line(__file__, argv),
                           {"env_steps_per_run": budget, "eval_interval": cfg.eval_interval,
                            "eval_episodes": cfg.eval_episodes, "exploration": args.explore,
                            "exploration_seed": args.explore_seed}, range(args.seeds))
    md = args.results.with_suffix(".md")
    atomic_write(md, markdown(stamped).encode())
    print(f"wrote {args.results} and {md}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
