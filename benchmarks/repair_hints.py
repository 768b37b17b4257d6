"""Do the repair hints of ``asg mvtr --suggest`` name what an omitted model leaves out? (issue 39)

    python benchmarks/repair_hints.py [--seeds 0 1 2 3 4] [--budgets 20:500:50 100:2000:200]

For each exploration budget (``EPISODES:MAX_STEPS:BRANCH_STEPS``: ``asg mvtr``'s ``--episodes``,
``--max-steps``, ``--branch-steps``; the first is the command's default), each model of
``pddl_models/omitted/`` and each seed: the traces ``asg mvtr`` collects (random episodes, the
solver's route and its branches), the hints of ``asg.planning.hints`` with their default config, and
the ``--write`` repair (the top 3 consistent hints), checked again by ``run_mvtr`` from the written file.

The omitted mechanism is read off the files, never typed in: the ground atoms of a counterpart
model that the omitted model lacks. Two counterparts: the world's complete model
(``pddl_models/complete/``, the domain's ``complete_model_path``) and the paper's model the omitted
one was cut from (the domain's own, Appendix H). Per counterpart: ``found`` (a top-3 hint names
one of those atoms), ``precision`` (top-3 hints naming at least one / top-3 hints) and ``recall``
(those atoms named by the top 3 / those atoms). A hint *names* the atoms of its ``atoms`` field;
``strict`` figures count only atoms its edits write (the unreachable-as-modelled kind also names
the atoms the traces went through). ``landmark``: the repaired model's landmarks include one of
those atoms. Results: ``benchmarks/results/repair_hints.{json,md}``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

import provenance

from asg.envs.domains import get_domain
from asg.envs.mvtr_traces import ExplorationConfig, run_mvtr, run_suggest
from asg.learning.atomic import atomic_write
from asg.planning import load_task
from asg.planning.hints import Hint, HintConfig
from asg.planning.parse import parse_files
from asg.planning.repair import repair

ROOT = Path(__file__).resolve().parents[1]
OMITTED = ROOT / "pddl_models" / "omitted"
RESULTS = Path(__file__).resolve().parent / "results"
# Omitted model -> the domain whose env it describes (its header comment says which paper model it cuts).
MODELS = {"household_no_battery": "household-v1", "household_no_key": "household-v1",
          "mario_no_key": "mario", "minecraft_no_processing": "minecraft"}
TOP = 3


def atoms_of(path: Path) -> set[str]:
    return {str(a.positive()) for a in load_task(path).facts}


def edit_atoms(hint: Hint) -> set[str]:
    return {e.atom for e in hint.edits} | {p for e in hint.edits for p in e.precondition}


def score(hints: list[Hint], omitted: set[str], named) -> dict:
    top = hints[:TOP]
    hits = [bool(named(h) & omitted) for h in top]
    covered = set().union(*(named(h) for h in top)) & omitted if top else set()
    return {"found": any(hits), "precision": round(sum(hits) / len(top), 3) if top else 0.0,
            "recall": round(len(covered) / len(omitted), 3) if omitted else None,
            "named": sorted(covered)}


def parse_budget(text: str) -> tuple[int, int, int]:
    episodes, max_steps, branch_steps = (int(v) for v in text.split(":"))
    return episodes, max_steps, branch_steps


def measure(stem: str, seed: int, budget: tuple[int, int, int]) -> dict:
    spec = get_domain(MODELS[stem])
    model = OMITTED / f"{stem}.pddl"
    config = ExplorationConfig(*budget, seed=seed)
    start = time.perf_counter()
    found = run_suggest(spec, model, config, HintConfig())
    hints = list(found.hints.hints)
    row: dict = {"model": stem, "domain": spec.name, "seed": seed, "budget": ":".join(map(str, budget)),
                 "mvtr": found.report.verdict,
                 "goal_traces": found.hints.goal_traces, "status": found.hints.status,
                 "top3": [[str(e) for e in h.edits] for h in hints[:TOP]],
                 "top3_kinds": [h.kind for h in hints[:TOP]], "hints": len(hints)}
    ours = atoms_of(model)
    for name, other in (("complete", spec.complete_model_path()), ("paper", spec.model_path())):
        omitted = atoms_of(other) - ours
        row[name] = {"omitted_atoms": sorted(omitted),
                     **score(hints, omitted, lambda h: set(h.atoms)),
                     "strict": score(hints, omitted, edit_atoms)}
    if hints:
        fixed = repair(parse_files(model), hints, found.traces, top=TOP)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "fixed.pddl"
            path.write_text(fixed.text)
            recheck = run_mvtr(spec, path, config)
        row["write"] = {"applied": len(fixed.applied), "mvtr": recheck.verdict, "subgoals": list(fixed.subgoals)}
        for name in ("complete", "paper"):
            row[name]["landmark"] = sorted(set(fixed.landmarks) & set(row[name]["omitted_atoms"]))
    row["seconds"] = round(time.perf_counter() - start, 2)
    return row


def summary(rows: list[dict]) -> list[dict]:
    out = []
    for budget, stem in [(b, m) for b in dict.fromkeys(r["budget"] for r in rows) for m in MODELS]:
        mine = [r for r in rows if r["model"] == stem and r["budget"] == budget]
        entry: dict = {"budget": budget, "model": stem, "runs": len(mine),
                       "too_few_traces": sum(r["status"] == "too-few-traces" for r in mine),
                       "goal_traces": [r["goal_traces"] for r in mine]}
        for name in ("complete", "paper"):
            part = [r[name] for r in mine]
            entry[name] = {
                "found": sum(p["found"] for p in part),
                "precision": round(statistics.mean(p["precision"] for p in part), 3),
                "recall": round(statistics.mean(p["recall"] or 0 for p in part), 3),
                "strict_found": sum(p["strict"]["found"] for p in part),
                "strict_precision": round(statistics.mean(p["strict"]["precision"] for p in part), 3),
                "strict_recall": round(statistics.mean(p["strict"]["recall"] or 0 for p in part), 3),
                "landmark": sum(bool(p.get("landmark")) for p in part)}
        entry["write_accepted"] = sum(r.get("write", {}).get("mvtr") == "holds" for r in mine)
        out.append(entry)
    return out


def markdown(data: dict) -> str:
    lines = ["# Repair hints on the omitted models (issue 39)", "",
             f"`{data['command']}` at commit `{data['commit']}`; budgets (episodes:max-steps:branch-steps, "
             f"random episodes besides the solver's route and its branches) {data['budget']['budgets']}, "
             f"seeds {data['seeds']}; hint config {data['hint_config']}. Counts are runs out of "
             f"{len(data['seeds'])}; precision and recall are means over the runs (0 for a run with no hint).", "",
             "| budget | model | counterpart | omitted atoms | runs with too few goal-reaching traces | in top-3 | "
             "precision@3 | recall | in top-3 (edits) | precision@3 (edits) | recall (edits) | "
             "--write accepted by mvtr | landmarks include one |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    first = {r["model"]: r for r in data["runs"] if r["seed"] == data["seeds"][0]}
    for s in data["summary"]:
        for name in ("complete", "paper"):
            p, n = s[name], s["runs"]
            atoms = " ".join(first[s["model"]][name]["omitted_atoms"])
            lines.append(f"| {s['budget']} | {s['model']} | {name} | {atoms} | {s['too_few_traces']}/{n} "
                         f"({' '.join(map(str, s['goal_traces']))}) | {p['found']}/{n} | {p['precision']:.2f} | "
                         f"{p['recall']:.2f} | {p['strict_found']}/{n} | {p['strict_precision']:.2f} | "
                         f"{p['strict_recall']:.2f} | {s['write_accepted']}/{n} | {p['landmark']}/{n} |")
    lines += ["", "The number in brackets: goal-reaching traces per seed (a hint needs "
              f"{data['hint_config']['min_goal_traces']}).", "", "Runs whose top 3 miss the mechanism "
              "(complete counterpart), and why:", ""]
    for r in data["runs"]:
        if not r["complete"]["found"]:
            why = (f"{r['goal_traces']} goal-reaching trace(s), too few for any hint" if r["status"] != "ok"
                   else "top 3: " + " | ".join("; ".join(e) for e in r["top3"]))
            lines.append(f"* {r['budget']} {r['model']} seed {r['seed']}: {why}")
    first = {r["model"]: r for r in data["runs"] if r["seed"] == data["seeds"][0]
             and r["budget"] == data["budget"]["budgets"][0]}
    lines += ["", f"Top-3 hints at seed {data['seeds'][0]}, budget {data['budget']['budgets'][0]}:", ""]
    for stem, row in first.items():
        lines.append(f"* **{stem}** ({row['goal_traces']} goal-reaching traces; repaired landmark sequence "
                     f"{' < '.join(row.get('write', {}).get('subgoals', [])) or '-'}):")
        lines += [f"  {k}. [{kind}] {'; '.join(edits)}"
                  for k, (kind, edits) in enumerate(zip(row["top3_kinds"], row["top3"]), 1)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--budgets", nargs="+", default=["20:500:50", "100:2000:200"],
                        help="EPISODES:MAX_STEPS:BRANCH_STEPS of the exploration, each measured")
    parser.add_argument("--out", type=Path, default=RESULTS / "repair_hints.json")
    args = parser.parse_args(argv)
    rows = []
    for budget in args.budgets:
        for stem in MODELS:
            for seed in args.seeds:
                rows.append(measure(stem, seed, parse_budget(budget)))
                print(f"{budget} {stem} seed {seed}: complete {rows[-1]['complete']['found']} "
                      f"paper {rows[-1]['paper']['found']} ({rows[-1]['seconds']} s)", file=sys.stderr)
    data = {"hint_config": asdict(HintConfig()) | {"top": TOP}, "summary": summary(rows), "runs": rows}
    stamped = provenance.write_result(args.out, data, provenance.command_line(__file__, argv),
                                      {"budgets": args.budgets, "unit": "episodes:max_steps:branch_steps"},
                                      args.seeds)
    md = args.out.with_suffix(".md")
    atomic_write(md, markdown(stamped).encode())
    print(f"wrote {args.out} and {md}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
