"""ASGRL Appendix F.2 and F.3, measured: complete models, and the two meta-state representations.

F.2 (``--part f2``): ASGRL, Plan-HRL and Landmark-HRL on each world with its complete, correct
model (``pddl_models/complete/<world>.pddl``, ``DomainSpec.complete_model_path``). The paper:
"With accurate symbolic models, our approach, Plan-HRL and Landmark-HRL can all efficiently
solve the tasks with a 1.0 success rate."

F.3 (``--part f3``): ASGRL with the history meta-state (App. E, the default) and with the
low-level meta-state (``learner.meta.state = "low-level"``, ASGRL-Meta-MDP) on household-v1,
household-v2, minecraft and mario with their own (approximate) models. The paper: "Results
(Fig. 6) suggest that there is no significant performance difference."

Every run uses ``asg train``'s resolved defaults (``grid_config``) with one exception, stated in
the output: a per-domain ``k_overrides`` entry naming a subgoal the complete model does not have
(Household's ``(has-key)``; the complete model has ``(holding red)`` instead) is dropped, since
``asg train`` refuses it; such subgoals then get the default k.

    python benchmarks/appendix_f.py --part f2 --seeds 3
    python benchmarks/appendix_f.py --part f3 --seeds 10
    python benchmarks/appendix_f.py --part stop --seeds 5   # ASGRL-Curriculum, Sec. 4.2 stop on/off

Writes ``benchmarks/results/appendix_f/<part>.json`` and ``<part>.md`` (again as each setting's
seeds finish, so an interrupted grid keeps what it measured). The cells go through the one grid
runner, ``grid.run_cells``: one after another here, or on Ray with ``--jobs N`` or
``--ray-address ADDR`` (as ``asg compare`` takes them; the run folders then go to ``--out``, or a
temporary folder without it).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from provenance import command_line, stamp, write_json

from asg.cli.options import add_grid_arguments, grid_arguments
from asg.cli.progress import Stages
from asg.envs.domains import DOMAINS
from asg.learning.asgrl.config import make_config
from asg.learning.asgrl.experiments import summarize
from asg.learning.asgrl.grid import Cell, GridRun, run_cells
from asg.learning.asgrl.subgoals import landmark_subgoals
from asg.learning.registry import bind_domain
from asg.learning.run_dir import RunDir

RESULTS = Path(__file__).resolve().parent / "results" / "appendix_f"
F2_DOMAINS = ("household-v1", "minecraft", "mario")  # one per world (household-v2 shares v1's world)
F2_METHODS = ("asgrl", "plan-hrl", "landmark-hrl")
F3_DOMAINS = ("household-v1", "household-v2", "minecraft", "mario")
F3_STATES = ("history", "low-level")
PAPER = {"f2": "App. F.2: with accurate symbolic models ASGRL, Plan-HRL and Landmark-HRL all solve the "
               "tasks with a 1.0 success rate (Fig. 5).",
         "f3": "App. F.3: ASGRL-Meta-MDP (low-level meta-state) vs ASGRL (history): \"no significant "
               "performance difference\" (Fig. 6).",
         "stop": "Sec. 4.2: \"gradually increase the value of k until a specified maximum is reached or no new "
                 "skill terminal state is discovered\" (no figure in the paper)."}


def kept_k_overrides(domain: str, method: str, subgoal_names: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Overrides dropping ``k_overrides`` entries that name no subgoal of the model; the dropped names."""
    diversity = make_config(domain, method).learner.diversity  # type: ignore[union-attr]
    kept = [[name, k] for name, k in diversity.k_overrides if name in subgoal_names]
    dropped = [name for name, _ in diversity.k_overrides if name not in subgoal_names]
    return ({"learner": {"diversity": {"k_overrides": kept}}} if dropped else {}), dropped


def _row(domain: str, label: str, summary: dict[str, Any], runs: list[Any], note: str) -> dict[str, Any]:
    return {"domain": domain, "variant": label, "seeds": summary["seeds"],
            "success_mean": summary["success_mean"], "success_sem": summary["success_sem"],
            "seeds_succeeding": summary["seeds_succeeding"],
            "median_steps_to_success": summary["median_steps_to_success"],
            "mean_env_steps": summary["mean_env_steps"], "mean_wall_seconds": summary["mean_wall_seconds"],
            "note": note, "runs": [r.result.to_json() for r in runs]}


def write(part: str, rows: list[dict[str, Any]], args: argparse.Namespace, seeds_done: int | None = None) -> None:
    """``<part>.json`` (every run) and ``<part>.md`` (one line per domain x variant)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    n = args.seeds if seeds_done is None else seeds_done
    payload = stamp({"part": part, "paper": PAPER[part], "first_seed": args.first_seed,
                     "steps": args.steps or 500_000, "rows": rows}, args.command,
                    {"env_steps_per_run": args.steps or 500_000}, range(args.first_seed, args.first_seed + n))
    write_json(RESULTS / f"{part}.json", payload, sort_keys=True)
    title = {"f2": "Appendix F.2: complete, correct models", "f3": "Appendix F.3: meta-state representations",
             "stop": "Sec. 4.2: the curriculum's stop"}
    setup = (f"Greedy success of the final policy (10 frozen episodes), seeds {args.first_seed}.."
             f"{args.first_seed + n - 1}, budget {args.steps or 500_000} env steps, early stop "
             "after 3 evaluations in a row at 1.0.")
    header = ("| domain | variant | seeds | success (mean ± s.e.m.) | seeds at 1.0 | median steps to success "
              "| mean env steps | mean wall s | note |")
    lines = [f"# {title[part]}", "", PAPER[part], "", setup, "", header, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        steps = r["median_steps_to_success"]
        lines.append(f"| {r['domain']} | {r['variant']} | {r['seeds']} | {r['success_mean']:.2f} ± "
                     f"{r['success_sem']:.2f} | {r['seeds_succeeding']}/{r['seeds']} | "
                     f"{steps if steps is not None else '—'} | {r['mean_env_steps']} | "
                     f"{r['mean_wall_seconds']} | {r['note']} |")
    (RESULTS / f"{part}.md").write_text("\n".join(lines) + "\n")


def _report(run: GridRun, reused: bool = False) -> None:
    r = run.result
    print(f"{r.domain:13s} {run.group:28s} {run.method:17s} seed {run.seed:2d}: success {r.success_rate:.2f} "
          f"first@{r.steps_to_success} steps {r.env_steps} wall {r.wall_seconds:.1f}s [{r.status}]", flush=True)


def run_part(args: argparse.Namespace, cells: list[Cell], heard: Callable[[dict[int, GridRun]], None],
             out: Path | None = None) -> dict[int, GridRun]:
    """Run the part's cells through the one grid runner, in ``out`` (default ``--out``; a temporary
    folder on Ray without it); ``heard(runs)`` after each cell with every run so far by cell index."""
    where = args.where
    if out is None and args.out is not None:
        out = args.out
    if out is None and (where["jobs"] is not None or where["ray_address"] is not None):
        out = Path(tempfile.mkdtemp(prefix="appendix_f_"))
    index = {(cell.group, cell.method, cell.seed): i for i, cell in enumerate(cells)}
    runs: dict[int, GridRun] = {}

    def done(run: GridRun, reused: bool) -> None:
        runs[index[(run.group, run.method, run.seed)]] = run
        _report(run, reused)
        heard(runs)

    stages = Stages()
    try:
        run_cells(cells, out, progress=stages, on_done=done, **where)
    finally:
        stages.close()
    return runs


def settings(cells: Sequence[Cell], runs: dict[int, GridRun],
             seeds: Sequence[int] | None = None) -> list[tuple[Cell, list[GridRun]]]:
    """Each setting (group and method, in cell order) whose cells (of ``seeds``, default all) have
    all ended, with its runs in seed order, as its first cell stands for it."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, cell in enumerate(cells):
        if seeds is None or cell.seed in seeds:
            groups.setdefault((cell.group, cell.method), []).append(i)
    return [(cells[members[0]], [runs[i] for i in sorted(members, key=lambda i: cells[i].seed)])
            for members in groups.values() if all(i in runs for i in members)]


def part_f2(args: argparse.Namespace, seeds: list[int]) -> list[dict[str, Any]]:
    """ASGRL, Plan-HRL, Landmark-HRL on every world's complete model."""
    cells, notes = [], {}
    for domain in args.domains or F2_DOMAINS:
        model = DOMAINS[domain].complete_model_path()
        names = landmark_subgoals(bind_domain(domain, model).task).names()
        for method in args.methods or F2_METHODS:
            overrides, dropped = kept_k_overrides(domain, method, names)
            notes[(domain, method)] = (f"k_overrides dropped: {', '.join(dropped)} (not a landmark of the model)"
                                       if dropped else "")
            cells += [Cell(domain, method, seed, steps=args.steps, overrides=overrides or None, model=str(model),
                           group=f"f2/{domain}") for seed in seeds]
    rows: list[dict[str, Any]] = []

    def heard(runs: dict[int, GridRun]) -> None:
        ended = settings(cells, runs)
        if len(ended) > len(rows):  # a setting's seeds have all finished
            rows[:] = [_row(cell.domain, cell.method, summarize(mine)[0], mine, notes[(cell.domain, cell.method)])
                       for cell, mine in ended]
            write("f2", rows, args)
    run_part(args, cells, heard)
    return rows


def meta_state(cell: Cell) -> str:
    """The meta-state an F.3 cell sets."""
    return (cell.overrides or {})["learner"]["meta"]["state"]


def part_f3(args: argparse.Namespace, seeds: list[int]) -> list[dict[str, Any]]:
    """ASGRL with the history and the low-level meta-state on the paper's four tasks.

    Seeds are the outer loop (seed 0 on every domain and meta-state, then seed 1, ...) and the
    files are rewritten as each seed ends everywhere, so a grid cut short compares equal seed sets."""
    domains = args.domains or F3_DOMAINS
    cells = [Cell(domain, "asgrl", seed, steps=args.steps, overrides={"learner": {"meta": {"state": state}}},
                  group=f"f3/{domain}/{state}") for seed in seeds for domain in domains for state in F3_STATES]
    rows: list[dict[str, Any]] = []
    written = [0]  # seeds in the files

    def heard(runs: dict[int, GridRun]) -> None:
        complete = 0  # the first seeds that ended on every domain and meta-state
        while complete < len(seeds) and all(i in runs for i, c in enumerate(cells) if c.seed == seeds[complete]):
            complete += 1
        if complete > written[0]:
            rows[:] = [_row(cell.domain, f"asgrl meta-state={meta_state(cell)}", summarize(mine)[0], mine, "")
                       for cell, mine in settings(cells, runs, seeds[:complete])]
            written[0] = complete
            write("f3", rows, args, seeds_done=complete)
    run_part(args, cells, heard)
    return rows


def part_stop(args: argparse.Namespace, seeds: list[int]) -> list[dict[str, Any]]:
    """ASGRL-Curriculum with and without the Sec. 4.2 stop; the final k of each landmark per run."""
    root = args.out or Path(tempfile.mkdtemp(prefix="appendix_f_stop_"))
    cells = [Cell(domain, "asgrl-curriculum", seed, steps=args.steps,
                  overrides={"learner": {"diversity": {"stop_on_no_new_terminal": stop}}},
                  group=f"stop/{domain}/stop-{int(stop)}")
             for domain in args.domains or F3_DOMAINS for stop in (True, False) for seed in seeds]
    rows: list[dict[str, Any]] = []

    def heard(runs: dict[int, GridRun]) -> None:
        ended = settings(cells, runs)
        if len(ended) == len(rows):
            return
        rows[:] = []
        for cell, mine in ended:
            ks = []
            for run in mine:
                learner = RunDir.open(root / cell.group / cell.method / f"seed{run.seed}").load_checkpoint()["learner"]
                ks.append(" ".join(f"{name}={k}" for name, k in learner.skill_counts().items()))
            stop = (cell.overrides or {})["learner"]["diversity"]["stop_on_no_new_terminal"]
            label = f"asgrl-curriculum stop={'on' if stop else 'off'}"
            rows.append(_row(cell.domain, label, summarize(mine)[0], mine, "final k: " + "; ".join(
                f"seed {run.seed}: {k}" for run, k in zip(mine, ks))))
        write("stop", rows, args)
    run_part(args, cells, heard, root)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("f2", "f3", "stop"), required=True)
    parser.add_argument("--domains", type=lambda s: s.split(","), default=None, help="comma-separated")
    parser.add_argument("--methods", type=lambda s: s.split(","), default=None, help="f2 only, comma-separated")
    parser.add_argument("--seeds", type=int, default=3, help="seeds first-seed .. first-seed+N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None, help="env-step budget (default 500000)")
    parser.add_argument("--out", type=Path, default=None, help="keep run directories here")
    add_grid_arguments(parser)
    args = parser.parse_args(argv)
    args.where = grid_arguments(parser, args)
    args.command = command_line(__file__, argv)  # written into each part's JSON
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    {"f2": part_f2, "f3": part_f3, "stop": part_stop}[args.part](args, seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
