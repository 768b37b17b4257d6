"""``asg plan --optimal`` against Fast Downward's own driver: optimal plan costs on cost and ADL tasks.

For each task of the corpus whose domain declares action costs, ADL or derived predicates (not the
satisficing tracks' tasks unless ``--all-tracks``), in one run:

* ``asg plan DOMAIN PROBLEM --optimal --json`` as a cold process (unified-planning's Fast Downward
  with A*/LM-cut and the task's metric, or FD's driver on asg's ground task where the task has
  axioms or conditional effects; the plan is replayed on asg's task either way);
* Fast Downward's driver on the original files: ``astar(lmcut())``, or ``astar(blind())`` where
  LM-cut refuses the task (axioms, conditional effects), under the same time limit;
* whether both costs are equal (both optimal, so they must be).

    python benchmarks/plan_costs.py --per-domain 1 --timeout 120
    python benchmarks/plan_costs.py elevators miconic      # only tasks matching

Writes ``benchmarks/results/plan_costs.json`` (command, commit, budget, per-task rows, summary)
and ``.md``; ``--out`` changes the stem.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from landmarks import RESULTS, SHARED, tasks
from landmarks_process import asg_command
from provenance import command_line, stamp, write_json

from asg.learning.atomic import atomic_write
from asg.planning.peer import fd_driver

UNSUPPORTED = 34  # FD's driver: the search configuration does not support the task


BEYOND_STRIPS = (":action-costs", ":adl", ":conditional-effects", ":derived-predicates", ":quantified-preconditions",
                 ":universal-preconditions", ":existential-preconditions", ":disjunctive-preconditions")


SATISFICING_TRACKS = ("-sat", "-agl", "-mco")  # tasks sized for satisficing planners, not A*


def is_candidate(name: str, domain: Path, all_tracks: bool = False) -> bool:
    """Domains that use what STRIPS lacks (action costs, ADL, derived predicates); without
    ``all_tracks``, not those of the satisficing tracks."""
    if not all_tracks and any(track in name.split("/")[0] for track in SATISFICING_TRACKS):
        return False
    text = domain.read_text(errors="replace").lower()
    return any(requirement in text for requirement in BEYOND_STRIPS)


def fd_optimal(domain: Path, problem: Path, timeout: float) -> dict:
    """FD's driver on the original files: cost, search, seconds, or the reason it has none."""
    for search in ("astar(lmcut())", "astar(blind())"):
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            try:
                proc = subprocess.run(
                    [sys.executable, str(fd_driver()), "--overall-time-limit", f"{int(timeout)}s",
                     str(domain), str(problem), "--search", search],
                    capture_output=True, text=True, cwd=folder, timeout=timeout + 30)
            except subprocess.TimeoutExpired:
                return {"search": search, "error": f"timeout {timeout} s"}
            seconds = time.perf_counter() - start
        if proc.returncode == UNSUPPORTED:
            continue
        cost = re.search(r"Plan cost: (\d+)", proc.stdout)
        if proc.returncode == 0 and cost:
            return {"search": search, "cost": int(cost.group(1)), "seconds": seconds}
        return {"search": search, "error": f"exit {proc.returncode}", "seconds": seconds}
    return {"error": "no search configuration takes the task"}


def asg_optimal(domain: Path, problem: Path, timeout: float) -> dict:
    command = [*asg_command(), "plan", str(domain), str(problem), "--optimal", "--json", "--timeout", str(timeout)]
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout + 60)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout {timeout} s"}
    seconds = time.perf_counter() - start
    try:
        result = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:300],
                "seconds": seconds}
    if result.get("status") != "solved":
        return {"error": f"{result.get('status')}: {result.get('message', '')}"[:300], "seconds": seconds}
    return {"cost": result["cost"], "length": result["length"], "planner": result["planner"], "seconds": seconds}


def summarise(rows: list[dict]) -> dict:
    both = [r for r in rows if "cost" in r["asg"] and "cost" in r["fd"]]
    return {"tasks": len(rows), "fd_solved": sum("cost" in r["fd"] for r in rows),
            "asg_solved": sum("cost" in r["asg"] for r in rows), "both_solved": len(both),
            "costs_equal": sum(r["asg"]["cost"] == r["fd"]["cost"] for r in both),
            "differing": [r["task"] for r in both if r["asg"]["cost"] != r["fd"]["cost"]],
            "solved_by_fd_only": [r["task"] for r in rows if "cost" in r["fd"] and "cost" not in r["asg"]]}


def markdown(data: dict) -> str:
    s = data["summary"]
    lines = ["# `asg plan --optimal` vs Fast Downward's driver: optimal plan costs", "",
             f"`{data['command']}` at commit `{data['commit']}`; {data['budget']['timeout_s']:.0f} s per planner "
             "and task.", "",
             f"{s['tasks']} tasks; FD solved {s['fd_solved']}, asg {s['asg_solved']}; both {s['both_solved']}, "
             f"equal cost on {s['costs_equal']}.", "",
             "| task | FD cost | FD search | asg cost | asg planner | FD s | asg s |", "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        fd, ours = r["fd"], r["asg"]
        lines.append(f"| {r['task']} | {fd.get('cost', fd.get('error'))} | {fd.get('search', '-')} | "
                     f"{ours.get('cost', ours.get('error'))} | {ours.get('planner', '-')} | "
                     f"{fd.get('seconds', 0):.1f} | {ours.get('seconds', 0):.1f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", choices=("ipc", "ipc_suite"), default="ipc_suite")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per planner and task")
    parser.add_argument("--per-domain", type=int, default=1, help="only N problems of each domain")
    parser.add_argument("--all-tracks", action="store_true", help="also the satisficing tracks' tasks")
    parser.add_argument("--out", type=Path, default=RESULTS / "plan_costs", help="stem of the JSON and markdown")
    parser.add_argument("only", nargs="*", help="substrings of task paths to keep")
    args = parser.parse_args()
    if not (SHARED / args.corpus).is_dir():
        sys.exit(f"the {args.corpus} corpus is not at {SHARED / args.corpus}")
    chosen = [(name, domain, problem) for name, domain, problem in tasks(args.corpus, args.only, None, args.per_domain)
              if is_candidate(name, domain, args.all_tracks)]
    # no seeds: both planners are deterministic
    data: dict = stamp({"rows": []}, command_line(__file__), {"timeout_s": args.timeout}, None)
    for name, domain, problem in chosen:
        row = {"task": name, "fd": fd_optimal(domain, problem, args.timeout),
               "asg": asg_optimal(domain, problem, args.timeout)}
        data["rows"].append(row)
        data["summary"] = summarise(data["rows"])
        print(f"{name:50s} FD {row['fd'].get('cost', row['fd'].get('error'))!s:>12}  "
              f"asg {row['asg'].get('cost', row['asg'].get('error'))!s:>12}", flush=True)
        write_json(args.out.with_suffix(".json"), data, indent=1)
        atomic_write(args.out.with_suffix(".md"), markdown(data).encode())
    print(markdown(data) if data["rows"] else "no task matched")


if __name__ == "__main__":
    main()
