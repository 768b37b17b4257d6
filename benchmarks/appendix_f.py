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

Writes ``benchmarks/results/appendix_f/<part>.json`` and ``<part>.md`` (after every cell, so an
interrupted grid keeps what it measured). Runs are sequential (two cores).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from provenance import command_line, stamp, write_json

from asg.envs.domains import DOMAINS
from asg.learning.asgrl.config import make_config
from asg.learning.asgrl.experiments import run_grid, summarize
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


def _report(domain: str, label: str, runs: list[Any]) -> None:
    for run in runs:
        r = run.result
        print(f"{domain:13s} {label:22s} seed {run.seed:2d}: success {r.success_rate:.2f} "
              f"first@{r.steps_to_success} steps {r.env_steps} wall {r.wall_seconds:.1f}s [{r.status}]", flush=True)


def part_f2(args: argparse.Namespace, seeds: list[int]) -> list[dict[str, Any]]:
    """ASGRL, Plan-HRL, Landmark-HRL on every world's complete model."""
    rows: list[dict[str, Any]] = []
    for domain in args.domains or F2_DOMAINS:
        model = DOMAINS[domain].complete_model_path()
        binding = bind_domain(domain, model)
        names = landmark_subgoals(binding.task).names()
        for method in args.methods or F2_METHODS:
            overrides, dropped = kept_k_overrides(domain, method, names)
            note = f"k_overrides dropped: {', '.join(dropped)} (not a landmark of the model)" if dropped else ""
            start = time.perf_counter()
            runs = run_grid(domain, [method], seeds, args.out / "f2" / domain if args.out else None,
                            steps=args.steps, overrides=overrides or None, model=str(model), binding=binding)
            _report(domain, method, runs)
            print(f"  ({domain} {method}: {time.perf_counter() - start:.0f} s)", flush=True)
            rows.append(_row(domain, method, summarize(runs)[0], runs, note))
            write("f2", rows, args)
    return rows


def part_f3(args: argparse.Namespace, seeds: list[int]) -> list[dict[str, Any]]:
    """ASGRL with the history and the low-level meta-state on the paper's four tasks.

    Seeds are the outer loop (seed 0 on every domain and meta-state, then seed 1, ...) and the
    files are rewritten after every seed, so a grid cut short compares equal seed sets."""
    domains = args.domains or F3_DOMAINS
    bindings = {domain: bind_domain(domain) for domain in domains}
    done: dict[tuple[str, str], list[Any]] = {(d, s): [] for d in domains for s in F3_STATES}
    rows: list[dict[str, Any]] = []
    for seed in seeds:
        for domain in domains:
            for state in F3_STATES:
                out = args.out / "f3" / domain / state if args.out else None
                runs = run_grid(domain, ["asgrl"], [seed], out, steps=args.steps, binding=bindings[domain],
                                overrides={"learner": {"meta": {"state": state}}})
                _report(domain, f"asgrl meta-state={state}", runs)
                done[(domain, state)].extend(runs)
        rows = [_row(d, f"asgrl meta-state={s}", summarize(runs)[0], runs, "")
                for (d, s), runs in done.items() if runs]
        write("f3", rows, args, seeds_done=seed - seeds[0] + 1)
    return rows


def part_stop(args: argparse.Namespace, seeds: list[int]) -> list[dict[str, Any]]:
    """ASGRL-Curriculum with and without the Sec. 4.2 stop; the final k of each landmark per run."""
    import tempfile

    rows: list[dict[str, Any]] = []
    root = args.out / "stop" if args.out else Path(tempfile.mkdtemp(prefix="appendix_f_stop_"))
    for domain in args.domains or F3_DOMAINS:
        binding = bind_domain(domain)
        for stop in (True, False):
            out = root / domain / f"stop-{int(stop)}"
            runs = run_grid(domain, ["asgrl-curriculum"], seeds, out, steps=args.steps, binding=binding,
                            overrides={"learner": {"diversity": {"stop_on_no_new_terminal": stop}}})
            label = f"asgrl-curriculum stop={'on' if stop else 'off'}"
            _report(domain, label, runs)
            ks = []
            for run in runs:
                learner = RunDir.open(out / "asgrl-curriculum" / f"seed{run.seed}").load_checkpoint()["learner"]
                ks.append(" ".join(f"{name}={k}" for name, k in learner.skill_counts().items()))
            rows.append(_row(domain, label, summarize(runs)[0], runs, "final k: " + "; ".join(
                f"seed {s}: {k}" for s, k in zip(seeds, ks))))
            write("stop", rows, args)
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
    args = parser.parse_args(argv)
    args.command = command_line(__file__, argv)  # written into each part's JSON
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    {"f2": part_f2, "f3": part_f3, "stop": part_stop}[args.part](args, seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
