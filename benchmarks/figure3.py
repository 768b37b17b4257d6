"""Figure 3 of the ASGRL paper from one command: every method x seed x domain, curves and a table.

    python benchmarks/figure3.py --preset paper --seeds 10 --steps 500000 \
        --domains household-v1,household-v2,minecraft,mario --methods all --out runs/figure3

Runs go to ``<out>/<domain>/<method>/seed<N>/`` through the one grid runner, ``grid.run_cells``,
with ``reuse``: a finished run of the same resolved config is read back, an interrupted one
resumed, so the command continues where it stopped (Ctrl-C checkpoints the running cells). The
cells run one after another here, or on Ray (``--jobs N``, ``--ray-address ADDR``, as ``asg
compare`` takes them). Seeds are the outer loop, so an unfinished grid has the same seeds in every
cell. Progress goes to stderr as ``asg compare`` shows it (``cli.progress.Stages``), and a line
for each finished cell.

Each finished run is also kept as a record in the results folder (committed):
``<results>/seeds/<name>/<domain>/<method>/seed<N>.json`` holds its resolved config, its
``result.json`` (less the final episode) and its curve (env steps, success per evaluation point).
A cell with a record of the same config is not trained again, so a grid grows across checkouts
whose ``runs/`` folders are gone. Records imported from an earlier reduction's JSON (``--import
NAME.json``: its runs' results, no config and no curve) match by the grid's preset, steps and
overrides instead, and count in the final-success table, not in the curves (whose legend gives
each curve's n).

The reducer (``reduce_runs``, also ``--reduce-only``) reads every record and finished run and
writes ``<name>.json``, ``<name>.md`` and ``<name>.png`` into ``--results``
(default benchmarks/results/figure3/): per domain, mean success against env steps with ±1 s.e.m.
over seeds (the paper's shading, Figure 3) and the final success under both protocols: greedy
over ``eval_episodes`` and the paper's ε = 0.05 over 10 episodes (Sec. 5). Every cell says how
many seeds it holds. ``--overrides JSON`` applies a partial config to every run (the ablations of
benchmarks/results/figure3/flat_baselines.md).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from provenance import command_line, stamp

from asg.cli.options import add_grid_arguments, grid_arguments, run_benchmark_grid
from asg.learning.asgrl.config import PRESETS, TrainConfig, config_from_dict, config_to_dict
from asg.learning.asgrl.evaluation import curve_on_grid, mean_band, step_grid
from asg.learning.asgrl.experiments import summarize
from asg.learning.asgrl.grid import Cell, GridRun, cell_configs, finished_run
from asg.learning.asgrl.trainer import TrainResult
from asg.learning.checkpoint import read_json
from asg.learning.errors import ConfigError
from asg.learning.plots import Band, plot_bands
from asg.learning.registry import METHODS
from asg.learning.run_dir import RunDir, atomic_write, atomic_write_json

DOMAINS = ("household-v1", "household-v2", "minecraft", "mario")
RESULTS = Path(__file__).resolve().parent / "results" / "figure3"


def _label(method: str) -> str:
    return METHODS[method].label if method in METHODS else method


def grid_key(preset: str, steps: int | None, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """What a record's grid was, beside its config: how imported records (no config) are matched."""
    return {"preset": preset, "steps": steps, "overrides": overrides or {}}


def record_path(results: Path, name: str, domain: str, method: str, seed: int) -> Path:
    return results / "seeds" / name / domain / method / f"seed{seed}.json"


def write_record(path: Path, run: GridRun, config: dict[str, Any] | None, key: dict[str, Any]) -> None:
    """One finished run as a record: config, result and curve."""
    result = {k: v for k, v in run.result.to_json().items() if k != "final_episode"}
    curve = [{"env_steps": int(float(r["env_steps"])), "success_rate": float(r["success_rate"])} for r in run.rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"grid": key, "config": config, "result": result, "curve": curve if run.rows else None})


def read_record(path: Path, config: dict[str, Any], key: dict[str, Any]) -> GridRun | None:
    """The record at ``path`` as a run when it is of ``config`` (or, imported, of grid ``key``); else None."""
    if not path.is_file():
        return None
    data = read_json(path)
    if data["config"] is not None:
        # Through the typed reader: a switch added after the record was written reads as its
        # default, which is the behaviour the record ran with.
        try:
            same = config_to_dict(config_from_dict(data["config"], str(path))) == config
        except ConfigError:
            same = False
    else:
        same = data["grid"] == key
    if not same:
        print(f"skipped: {path}: a record of another config", file=sys.stderr)
        return None
    result = TrainResult.from_json(data["result"])
    return GridRun(result.method, result.seed, result, tuple(data["curve"] or ()))


def grid_cells(domains: Sequence[str], methods: Sequence[str], seeds: Sequence[int], *, preset: str,
               steps: int | None, overrides: dict[str, Any] | None) -> list[Cell]:
    """Every cell of the grid, each in ``<out>/<domain>/<method>/seed<N>/``, seeds outer (an
    unfinished grid has the same seeds in every domain and method)."""
    return [Cell(domain, method, seed, preset, steps, overrides, group=domain)
            for seed in seeds for domain in domains for method in methods]


def collect(out: Path, results: Path, name: str, domains: Sequence[str], methods: Sequence[str],
            seeds: Sequence[int], *, preset: str, steps: int | None,
            overrides: dict[str, Any] | None) -> dict[str, list[GridRun]]:
    """The finished runs of the grid's configs, per domain (unfinished cells left out): each cell's
    record, else its run folder under ``out`` (which then gets a record)."""
    key = grid_key(preset, steps, overrides)
    cells = sorted(grid_cells(domains, methods, seeds, preset=preset, steps=steps, overrides=overrides),
                   key=lambda c: (domains.index(c.domain), methods.index(c.method)))  # seeds stay in order
    found: dict[str, list[GridRun]] = {domain: [] for domain in domains}
    for cell, cfg in zip(cells, cell_configs(cells)):
        config = config_to_dict(cfg)
        record = record_path(results, name, cell.domain, cell.method, cell.seed)
        run = read_record(record, config, key)
        if run is None:
            run = finished_folder(out / cell.folder, cell.method, cell.seed, cfg)
            if run is not None:
                write_record(record, run, config, key)
        if run is not None:
            found[cell.domain].append(run)
    return found


def finished_folder(path: Path, method: str, seed: int, cfg: TrainConfig) -> GridRun | None:
    """A finished run folder of ``cfg`` as a run (None when absent, unfinished or of another config)."""
    try:
        result = finished_run(path, cfg)
    except ConfigError as err:  # a run of an older config: left out, said so
        print(f"skipped: {err}", file=sys.stderr)
        return None
    return None if result is None else GridRun(method, seed, result, tuple(RunDir.open(path).read_metrics()))


def import_reduction(path: Path, results: Path, name: str) -> int:
    """Records (result only) of the runs of an earlier reduction ``path``; returns how many were new."""
    data = read_json(path)
    meta = data["meta"]
    key = grid_key(meta["preset"], meta["steps"], meta["overrides"] or None)
    added = 0
    for runs in data["runs"].values():
        for entry in runs:
            record = record_path(results, name, entry["domain"], entry["method"], entry["seed"])
            if not record.is_file():
                run = GridRun(entry["method"], entry["seed"], TrainResult.from_json(entry), ())
                write_record(record, run, None, key)
                added += 1
    return added


def curves(runs: Sequence[GridRun], total: int) -> dict[str, dict[str, Any]]:
    """Per method: the env-step grid, mean and ±1 s.e.m. of the success curves over seeds."""
    grid = step_grid(total, 50)
    table = {}
    for method in dict.fromkeys(r.method for r in runs):
        rows = [r for r in runs if r.method == method and r.rows]
        if not rows:
            continue
        stack = np.stack([curve_on_grid([float(x["env_steps"]) for x in r.rows],
                                        [float(x["success_rate"]) for x in r.rows], grid) for r in rows])
        mean, low, high = mean_band(stack, z=1.0)
        table[method] = {"steps": grid.astype(int).tolist(), "mean": np.round(mean, 4).tolist(),
                         "low": np.round(low, 4).tolist(), "high": np.round(high, 4).tolist(),
                         "seeds": len(rows)}
    return table


def format_markdown(title: str, meta: dict[str, Any], summary: dict[str, list[dict[str, Any]]]) -> str:
    """The final-success table of every domain (greedy and ε), seeds per cell."""
    lines = [f"# {title}", "",
             f"preset `{meta['preset']}`, {meta['steps']} env steps per run, seeds {meta['seeds']}, "
             f"overrides `{json.dumps(meta['overrides'])}`.",
             "Final success per run, mean ± s.e.m. over the seeds that finished (n = seeds in the cell): "
             "greedy over the run's evaluation episodes, and the paper's protocol, ε = 0.05 over 10 episodes "
             "(Sec. 5). Solved = seeds whose final greedy success is 1.0; steps = median env steps to the first "
             "curve point at 1.0, over the seeds that had one (a seed may reach 1.0 and lose it).", "",
             "| domain | method | n | greedy | ε = 0.05 | solved | median steps to success | mean wall s |",
             "|---|---|---|---|---|---|---|---|"]
    for domain, rows in summary.items():
        if not rows:
            lines.append(f"| {domain} | — | 0 | — | — | — | — | — |")
        for row in rows:
            eps = (f"{row['epsilon_success_mean']:.2f} ± {row['epsilon_success_sem']:.2f}"
                   if row.get("epsilon_success_mean") is not None else "—")
            steps = row["median_steps_to_success"]
            lines.append(f"| {domain} | {row['label']} | {row['seeds']} | {row['greedy_success_mean']:.2f} ± "
                         f"{row['greedy_success_sem']:.2f} | {eps} | {row['seeds_succeeding']}/{row['seeds']} "
                         f"| {steps if steps is not None else '—'} | {row['mean_wall_seconds']} |")
    return "\n".join(lines) + "\n"


def plot(title: str, domain_curves: dict[str, dict[str, dict[str, Any]]], path: Path) -> None:
    """One panel per domain: mean success against env steps, ±1 s.e.m. shaded."""
    plot_bands(path, {domain: [Band(f"{_label(method)} (n={c['seeds']})", c["steps"], c["mean"], c["low"], c["high"])
                               for method, c in table.items()] for domain, table in domain_curves.items()}, title)


def reduce_runs(found: dict[str, list[GridRun]], results: Path, name: str, meta: dict[str, Any],
                command: str) -> dict[str, Any]:
    """Write ``<name>.json`` (with ``command``, the commit, the budget and the seeds:
    ``provenance``), ``<name>.md`` and ``<name>.png`` into ``results``; return the JSON."""
    summary = {domain: summarize(runs) for domain, runs in found.items()}
    total = int(meta["steps"])
    domain_curves = {domain: curves(runs, total) for domain, runs in found.items()}
    title = f"Figure 3 ({meta['preset']} preset)" if name == "figure3" else name
    payload = stamp({"meta": meta, "summary": summary, "curves": domain_curves,
                     "runs": {domain: [{k: v for k, v in r.result.to_json().items() if k != "final_episode"}
                                       for r in runs] for domain, runs in found.items()}},
                    command, {"env_steps_per_run": total}, range(int(meta["seeds"])))
    atomic_write_json(results / f"{name}.json", payload)
    atomic_write(results / f"{name}.md", format_markdown(title, meta, summary).encode())
    plot(title, domain_curves, results / f"{name}.png")
    return payload


def combine(results: Path, names: Sequence[str], name: str) -> str:
    """One Markdown table of several reduced results (``<names>.json`` in ``results``): one row per
    (domain, method, setting), seeds per cell; written to ``<name>.md`` and returned."""
    lines = [f"# {name}: final success per setting", "",
             "Mean ± s.e.m. over the seeds that finished (n). Greedy over the run's evaluation episodes; "
             "ε = 0.05 over 10 episodes (Sec. 5). Solved = seeds whose final greedy success is 1.0; "
             "steps = median env steps to the first curve point at 1.0, over the seeds that had one.", "",
             "| domain | method | setting | overrides | n | greedy | ε = 0.05 | solved | median steps to success |",
             "|---|---|---|---|---|---|---|---|---|"]
    loaded = {n: json.loads((results / f"{n}.json").read_text()) for n in names}
    domains = list(dict.fromkeys(d for data in loaded.values() for d in data["summary"]))
    for domain in domains:
        methods = list(dict.fromkeys(r["method"] for data in loaded.values() for r in data["summary"].get(domain, [])))
        for method in methods:
            for n, data in loaded.items():
                for row in data["summary"].get(domain, []):
                    if row["method"] != method:
                        continue
                    eps = (f"{row['epsilon_success_mean']:.2f} ± {row['epsilon_success_sem']:.2f}"
                           if row.get("epsilon_success_mean") is not None else "—")
                    steps = row["median_steps_to_success"]
                    over = json.dumps({k: v for k, v in data["meta"]["overrides"].items() if k != "eval_episodes"})
                    lines.append(f"| {domain} | {row['label']} | {n} (`{data['meta']['preset']}`) | `{over}` "
                                 f"| {row['seeds']} "
                                 f"| {row['greedy_success_mean']:.2f} ± {row['greedy_success_sem']:.2f} "
                                 f"| {eps} | {row['seeds_succeeding']}/{row['seeds']} "
                                 f"| {steps if steps is not None else '—'} |")
    text = "\n".join(lines) + "\n"
    atomic_write(results / f"{name}.md", text.encode())
    return text


def cell_line(done: int, cells: int, run: GridRun, reused: bool) -> str:
    """One finished cell for stderr: ``[done/cells] domain/method/seedN: status, greedy, ε, steps, wall``."""
    r = run.result
    eps = f"{r.epsilon_success_rate:.2f}" if r.epsilon_success_rate is not None else "-"
    return (f"[{done}/{cells}] {r.domain}/{r.method}/seed{r.seed}: {'reused' if reused else r.status}, "
            f"greedy {r.success_rate:.2f}, eps {eps}, {r.env_steps} steps, {r.wall_seconds:.0f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="paper")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1")
    parser.add_argument("--steps", type=int, default=500_000)
    parser.add_argument("--domains", default=",".join(DOMAINS))
    parser.add_argument("--methods", default="all", help="comma-separated, or all")
    parser.add_argument("--out", type=Path, default=Path("runs/figure3"))
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--name", default="figure3", help="file stem of the reduced results")
    parser.add_argument("--overrides", default=None, help="partial config as JSON, applied to every run")
    parser.add_argument("--eval-episodes", type=int, default=None)
    parser.add_argument("--reduce-only", action="store_true", help="reduce the finished runs, train nothing")
    parser.add_argument("--combine", default=None,
                        help="comma-separated result names in --results: write one table of them as --name.md")
    parser.add_argument("--import", dest="import_from", type=Path, default=None,
                        help="an earlier reduction's JSON: keep its runs as records of --name (result only)")
    add_grid_arguments(parser)
    args = parser.parse_args(argv)
    where = grid_arguments(parser, args)
    if args.import_from is not None:
        added = import_reduction(args.import_from, args.results, args.name)
        print(f"imported {added} runs of {args.import_from} as records of {args.name}", file=sys.stderr)
    if args.combine:
        combine(args.results, [n for n in args.combine.split(",") if n], args.name)
        print(f"wrote {args.results / args.name}.md", file=sys.stderr)
        return 0
    domains = [d for d in args.domains.split(",") if d]
    methods = list(METHODS) if args.methods == "all" else [m for m in args.methods.split(",") if m]
    overrides = json.loads(args.overrides) if args.overrides else {}
    if args.eval_episodes:
        overrides["eval_episodes"] = args.eval_episodes
    seeds = list(range(args.seeds))
    meta = {"preset": args.preset, "steps": args.steps, "seeds": args.seeds, "domains": domains,
            "methods": methods, "overrides": overrides, "out": str(args.out)}
    key = grid_key(args.preset, args.steps, overrides or None)
    if not args.reduce_only:
        cells = grid_cells(domains, methods, seeds, preset=args.preset, steps=args.steps, overrides=overrides or None)
        configs = [config_to_dict(cfg) for cfg in cell_configs(cells)]
        todo = [(cell, config) for cell, config in zip(cells, configs) if read_record(
            record_path(args.results, args.name, cell.domain, cell.method, cell.seed), config, key) is None]
        if len(todo) < len(cells):
            print(f"{len(cells) - len(todo)} of {len(cells)} cells reused from their records in "
                  f"{args.results / 'seeds' / args.name}", file=sys.stderr)
        config_of = {(cell.domain, cell.method, cell.seed): config for cell, config in todo}
        finished = []

        def on_done(run: GridRun, reused: bool) -> None:
            finished.append(run.seed)
            print(cell_line(len(finished), len(todo), run, reused), file=sys.stderr, flush=True)
            if run.result.status != "interrupted":
                r = run.result
                write_record(record_path(args.results, args.name, r.domain, r.method, r.seed), run,
                             config_of[(r.domain, r.method, r.seed)], key)

        run_benchmark_grid([cell for cell, _ in todo], args.out, where, on_done)
    found = collect(args.out, args.results, args.name, domains, methods, seeds, preset=args.preset,
                    steps=args.steps, overrides=overrides or None)
    reduce_runs(found, args.results, args.name, meta, command_line(__file__, argv))
    print(f"wrote {args.results / args.name}.{{json,md,png}}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
