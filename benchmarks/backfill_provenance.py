"""One-off: the provenance keys (``provenance.REQUIRED``) for results committed before their
benchmark wrote them, and JSON beside the results that were committed as text only.

    python benchmarks/backfill_provenance.py            # rewrites the files below; run once
    python benchmarks/backfill_provenance.py --check    # lists what it would change, writes nothing

It never changes a figure. It adds the keys a file lacks and leaves those it has; the one value
it rewrites is a seed count (``"seeds": 10``) into the seed list the count stood for (seeds
0..N-1, as the scripts that wrote them run them). Where it had to rebuild a key it says so in a
``provenance`` string: ``commit`` is then the commit that committed the file (``git log``), not
the run's own, which was not recorded; a command rebuilt from the file's own settings or taken
from the commands file beside it says which. A file that already has all four keys is left alone.

Two text-only results become JSON beside their text (which is kept): ``landmarks_m2_binary.txt``
(benchmarks/landmarks.py's per-task lines) and ``asgrl/*.txt`` (benchmarks/asgrl.py's per-seed
lines), each line parsed and nothing recomputed.
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from provenance import REPO, missing, write_json

RESULTS = REPO / "benchmarks" / "results"
FETCH = "fetch_programs"


def committed_by(path: Path) -> tuple[str, str]:
    """The short hash and date of the last commit that changed ``path``."""
    out = subprocess.run(["git", "log", "-1", "--format=%h %ad", "--date=short", "--", str(path)],
                         capture_output=True, text=True, cwd=REPO, check=True).stdout.split()
    if not out:
        raise SystemExit(f"{path}: not committed; nothing to take the commit from")
    return out[0], out[1]


def _option(command: str, flag: str, default: str | None = None) -> str | None:
    words = shlex.split(command)
    return words[words.index(flag) + 1] if flag in words else default


def _run_seeds(runs: list[dict[str, Any]]) -> list[int]:
    return sorted({int(r["seed"]) for r in runs})


@dataclass(frozen=True)
class Stamp:
    """What one committed file gets: each value is a function of the file's JSON."""

    path: str
    command: Callable[[dict[str, Any]], Any]
    budget: Callable[[dict[str, Any]], Any]
    seeds: Callable[[dict[str, Any]], Any]
    note: str


def _keep(key: str) -> Callable[[dict[str, Any]], Any]:
    return lambda d: d[key]


# -- figure3.py: the command rebuilt from the file's meta ------------------------------------------
def _figure3_command(name: str) -> Callable[[dict[str, Any]], str]:
    def build(d: dict[str, Any]) -> str:
        meta = d["meta"]
        overrides = {k: v for k, v in meta["overrides"].items() if k != "eval_episodes"}
        words = ["python", "benchmarks/figure3.py", "--preset", meta["preset"], "--seeds", str(meta["seeds"]),
                 "--steps", str(meta["steps"]), "--domains", ",".join(meta["domains"]),
                 "--methods", ",".join(meta["methods"]), "--out", meta["out"], "--name", name]
        if "eval_episodes" in meta["overrides"]:
            words += ["--eval-episodes", str(meta["overrides"]["eval_episodes"])]
        if overrides:
            words += ["--overrides", json.dumps(overrides)]
        return shlex.join(words)
    return build


def _figure3_seeds(d: dict[str, Any]) -> list[int]:
    return _run_seeds([r for runs in d["runs"].values() for r in runs])


FIGURE3 = [Stamp(f"figure3/{p.stem}.json", _figure3_command(p.stem),
                 lambda d: {"env_steps_per_run": d["meta"]["steps"]}, _figure3_seeds,
                 "command rebuilt from this file's meta (preset, seeds, steps, domains, methods, out, "
                 "overrides; --name is the file's stem; --results, if one was given, is not recorded); "
                 "seeds are those of the runs the file holds")
           for p in sorted((RESULTS / "figure3").glob("*.json")) if "meta" in json.loads(p.read_text())]

# -- omitted_mechanisms.py: the command was recorded, and the seed count --------------------------
OMITTED = [Stamp(f"omitted/{p.stem}.json", _keep("command"),
                 lambda d: {"env_steps_per_run": int(_option(d["command"], "--steps", "500000"))},
                 lambda d: list(range(int(_option(d["command"], "--seeds", "10")))),
                 "the command gives no --steps: the budget is TrainConfig.total_steps at the commit (500,000); "
                 "seeds 0..N-1 of --seeds N (the file held N)")
           for p in sorted((RESULTS / "omitted").glob("*.json")) if "command" in json.loads(p.read_text())]

def _counted_seeds(d: dict[str, Any]) -> list[int]:
    return list(range(d["first_seed"], d["first_seed"] + d["seeds"]))


# -- appendix_f.py: seeds and steps were recorded, the command was not -----------------------------
APPENDIX_F = [
    Stamp("appendix_f/f2.json", lambda d: "python benchmarks/appendix_f.py --part f2 --seeds 3",
          lambda d: {"env_steps_per_run": d["steps"]}, _counted_seeds,
          "command rebuilt from the file's part, seeds (3, first seed 0) and steps (the default); other options "
          "as far as the file shows at their defaults"),
    Stamp("appendix_f/f3.json", lambda d: "python benchmarks/appendix_f.py --part f3",
          lambda d: {"env_steps_per_run": d["steps"]}, _counted_seeds,
          "the run's --seeds was not recorded: the file is rewritten as each seed finishes and holds seeds 0-5 "
          "(the script's docstring names --seeds 10)"),
    Stamp("appendix_f/stop.json", lambda d: "python benchmarks/appendix_f.py --part stop --seeds 3",
          lambda d: {"env_steps_per_run": d["steps"]}, _counted_seeds,
          "command rebuilt from the file's part, seeds (3, first seed 0) and steps (the default)"),
]

# -- the rest: each from its own record or the commands file beside it -----------------------------
OTHERS = [
    Stamp("pixel_mario/pixel_mario.json", _keep("command"),
          lambda d: {"env_steps_per_run": d["proto-kmeans"]["steps"]}, lambda d: _run_seeds(d["proto-kmeans"]["runs"]),
          "top-level command, budget and seeds are those of the last invocation (the proto-kmeans runs); each "
          "section keeps its own command and steps"),
    Stamp("pixel_mario/baselines/compare.json",
          lambda d: (RESULTS / "pixel_mario/baselines/command.txt").read_text().strip(),
          lambda d: {"env_steps_per_run": 500_000}, lambda d: _run_seeds(d["runs"]),
          "command from command.txt beside it; it gives no --steps, so the budget is asg compare's default"),
    Stamp("own_worlds/own_worlds.json", lambda d: "python benchmarks/own_worlds.py --reduce-only",
          lambda d: {"env_steps_per_run": {f"{w}/{m}": int(_option(c, "--steps" if m == "asgrl" else "--ppo-steps"))
                                           for c in d["commands"] for w in [_option(c, "--worlds")]
                                           for m in [_option(c, "--methods")]}},
          lambda d: list(range(max(r["seeds"] for r in d["rows"]))),
          "command as own_worlds.md says; the runs' commands are 'commands', the budgets read from them; "
          "seeds 0..4 (--seeds 5; DoorKey-5x5's PPO check seed 0 only)"),
    Stamp("npi_ddpg_baselines.json", _keep("command"), lambda d: {k: v["budget"] for k, v in d["baselines"].items()},
          lambda d: [d["seed"]], "budget: each baseline's own record"),
    Stamp("npi_ddpg_baselines_800k.json", _keep("command"),
          lambda d: {k: v["budget"] for k, v in d["baselines"].items()}, lambda d: [d["seed"]],
          "budget: each baseline's own record"),
    Stamp("goal_policy_data_rate.json", _keep("command"),
          lambda d: {"epochs": 1, "cycles": next(iter(d["arms"].values()))["cycles"]}, lambda d: [d["seed"]],
          "budget: one epoch of --cycles cycles per actor count, from the arms"),
    Stamp("behaviour_model_vs_exact.json", _keep("command"),
          lambda d: {"held_out_episodes": int(_option(d["command"], "--episodes"))},
          lambda d: [int(_option(d["command"], "--seed"))], "budget and seed from the recorded command"),
    Stamp("ddpg_levers.json", _keep("commands"), lambda d: {"epochs": d["epochs"]}, lambda d: [0],
          "three invocations (commands); none gives --seed, so seed 0, the default"),
    Stamp("figure3/tie_walk.json", _keep("command"),
          lambda d: {"episodes": int(_option(d["command"], "--episodes"))},
          lambda d: [int(_option(d["command"], "--seed"))], "budget and seed from the recorded command"),
    Stamp("behaviour_model_size.json",
          lambda d: (RESULTS / "behaviour_model_size.txt").read_text().splitlines()[0].removeprefix("# "),
          lambda d: {"epochs_per_fit": 15}, lambda d: [0],
          "command from the first line of behaviour_model_size.txt; no --epochs or --seed given: the fast "
          "behaviour-model preset's 15 epochs at the commit, seed 0"),
    Stamp("npi_landmarks.json",
          lambda d: ("python benchmarks/npi_landmarks.py --modes off prior prior-train "
                     "--json runs/npi_landmarks_pruned.json"),
          lambda d: {"max_iterations": sorted({r["max_iterations"] for r in d["runs"]})[0]},
          lambda d: _run_seeds(d["runs"]), "command from the first line of npi_landmarks.txt; budget and seeds "
          "from the runs"),
    Stamp(f"{FETCH}/psi_prunings_ablation.json",
          lambda d: [f"asg eval --domain fetch-programs --suite non-atomic --mode replan --episodes 20 "
                     f"--psi-prunings {switch} --json" for switch in ("on", "off")],
          lambda d: {"episodes_per_program": 20}, lambda d: [0],
          "commands from psi_prunings_ablation.md; asg eval's default --seed 0"),
    Stamp(f"{FETCH}/learned_stop/fast-200/non-atomic-replan-learned.json",
          lambda d: ("asg eval --domain fetch-programs --suite non-atomic --mode replan --checkpoint "
                     "runs/mc-fast-learned-stop --episodes 100 --out runs/mc-fast-learned-stop-eval100"),
          lambda d: {"meta_controller_iterations": 200, "episodes_per_program": 100}, lambda d: [0],
          "command from learned_stop.md (the meta-controller: --iterations 200 --seed 0 there); asg eval's "
          "default --seed 0"),
    Stamp(f"{FETCH}/paper_pipeline/epochs-30/replan.json",
          lambda d: ("python benchmarks/paper_pipeline.py --epochs 30 --episodes 10000 --iterations 20 "
                     "--atomic-episodes 100 --table-episodes 100 --threads 2 --workers 1 --jobs 2 --out runs/pp-e30 "
                     "--results /tmp/pp30"),
          lambda d: {"goal_policy_epochs": 30, "behaviour_episodes": 10_000, "meta_controller_iterations": 20,
                     "episodes_per_program": 100},
          lambda d: [0], "command and budget from README.txt beside it; paper_pipeline.py's default --seed 0"),
    Stamp(f"{FETCH}/paper_pipeline/epochs-30/atomic.json",
          lambda d: ("asg eval --domain fetch-programs --suite atomic --policy "
                     f"benchmarks/results/{FETCH}/paper_pipeline/epochs-30/goal_policy.npz --episodes 100 --json"),
          lambda d: {"goal_policy_epochs": 30, "episodes_per_program": 100}, lambda d: [d["seed"]],
          "command from README.txt beside it"),
]

# -- benchmarks/landmarks.py before it stamped its budget: command and commit recorded ---------------
LANDMARKS = [
    Stamp("landmarks_ipc_all.json", _keep("command"),
          lambda d: {"timeout_s": float(_option(d["command"], "--timeout", "120"))}, lambda d: None,
          "budget: the run's --timeout (the script's default of 120 s where the command gives none); no seeds: "
          "the factories and FD's are deterministic"),
    Stamp("landmarks_process.json", lambda d: "python benchmarks/landmarks_process.py",
          lambda d: {"timeout_s": 300.0, "repeats": d["summary"]["repeat"]}, lambda d: None,
          "command as docs/planning.md gives it (every STRIPS task, the script's defaults; the file's summary "
          "says m=1, binary encoding, 3 repeats, all 64 tasks); budget: the default 300 s per process at that "
          "commit and the recorded repeats; no seeds: nothing random (PYTHONHASHSEED fixed for FD)"),
]

STAMPS = [*FIGURE3, *OMITTED, *APPENDIX_F, *OTHERS, *LANDMARKS]


def stamped(stamp: Stamp, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the keys it lacks (and a seed count made the seed list), figures untouched."""
    commit, date = committed_by(RESULTS / stamp.path)
    out = dict(data)
    if "command" not in out:
        out["command"] = stamp.command(data)
    out.setdefault("budget", stamp.budget(data))
    if not isinstance(out.get("seeds"), list):
        out["seeds"] = stamp.seeds(data)
        if isinstance(data.get("seeds"), int) and len(out["seeds"]) != data["seeds"]:
            raise SystemExit(f"{stamp.path}: {data['seeds']} seeds recorded, {out['seeds']} rebuilt")
    if "commit" in data:
        out.setdefault("provenance", f"budget and seeds added after the fact by benchmarks/backfill_provenance.py; "
                                     f"command and commit are the run's own. {stamp.note}.")
    out.setdefault("commit", commit)
    out.setdefault("provenance", f"keys added after the fact by benchmarks/backfill_provenance.py: 'commit' is "
                                 f"{commit} ({date}), the commit that committed this file; the run's own commit "
                                 f"was not recorded. {stamp.note}.")
    return out


# -- text-only results ----------------------------------------------------------------------------
LANDMARK_LINE = re.compile(r"^(\S+\.pddl)\s+lm\s+(\d+)\s+sets (same|differ)\s+orderings (same|differ)\s+"
                           r"api\s+([\d.]+)s\s+cli\s+([\d.]+|-)s\s+fd\s+([\d.]+)s")
NOT_FINISHED = re.compile(r"^(\S+\.pddl)\s+FD did not finish: (.*)$")


def landmarks_txt(path: Path) -> dict[str, Any]:
    """benchmarks/landmarks.py's text (one line a task) as JSON, its rows as its JSON output names them."""
    lines = path.read_text().splitlines()
    header = lines[0].removeprefix("# ")
    command, _, note = header.partition("  (")
    rows = []
    for line in lines[1:]:
        if m := LANDMARK_LINE.match(line):
            rows.append({"task": m[1], "landmarks": int(m[2]), "asg_api_s": float(m[5]),
                         "asg_cli_s": None if m[6] == "-" else float(m[6]), "fd_s": float(m[7]),
                         "landmarks_equal": m[3] == "same", "orderings_equal": m[4] == "same", "status": "ok"})
        elif m := NOT_FINISHED.match(line):
            rows.append({"task": m[1], "status": "fd_not_finished", "reason": m[2]})
    summary = [line.strip() for line in lines if line.startswith("summary") or line.startswith("  ")]
    commit, date = committed_by(path)
    return {"command": command.strip(), "commit": commit, "budget": {"timeout_s": float(_option(command, "--timeout"))},
            "seeds": None,
            "provenance": f"converted from {path.name} by benchmarks/backfill_provenance.py (each task line parsed, "
                          f"nothing recomputed); 'commit' is {commit} ({date}), the commit that committed the text; "
                          "no seeds: h^m landmarks and FD's lm_hm are deterministic. The run's note: "
                          f"({note}", "summary_text": summary, "tasks": rows}


SEED_LINE = re.compile(r"^(\S+)\s+(\S+)\s+seed\s+(\d+): success ([\d.]+) first@(\d+|None) steps (\d+) "
                       r"wall ([\d.]+)s \[(\w+)\]\s*(.*)$")


def asgrl_txt(path: Path) -> dict[str, Any]:
    """benchmarks/asgrl.py's log (one line a run, headed by the command) as JSON; tables stay in the text."""
    commands, notes, runs, current = [], [], [], None
    for line in path.read_text().splitlines():
        if line.startswith("# python"):
            current = line[2:]
            if current not in commands:
                commands.append(current)
        elif line.startswith("# NOTE"):
            notes.append(line[2:])
        elif m := SEED_LINE.match(line):
            runs.append({"domain": m[1], "method": m[2], "seed": int(m[3]), "success_rate": float(m[4]),
                         "steps_to_success": None if m[5] == "None" else int(m[5]), "env_steps": int(m[6]),
                         "wall_seconds": float(m[7]), "status": m[8], "note": m[9].strip(), "command": current})
    commit, date = committed_by(path)
    return {"command": commands, "commit": commit, "budget": {"env_steps_per_run": 500_000},
            "seeds": _run_seeds(runs),
            "provenance": f"converted from {path.name} by benchmarks/backfill_provenance.py (each run line parsed, "
                          f"nothing recomputed; the tables stay in the text); 'commit' is {commit} ({date}), the "
                          "commit that committed the text; the budget is benchmarks/asgrl.py's 500k env steps "
                          "(docs/asgrl.md); a command that reads 'run by the issue-4 work' was not recorded "
                          "exactly, the text's table headers name its domains, methods and seeds",
            "notes": notes, "runs": runs}


def _style(text: str, data: Any) -> dict[str, Any]:
    """The ``json.dumps`` indent and key order the file was written with (so its diff is the new keys)."""
    for indent in (2, 1, 4):
        for sort_keys in (True, False):
            if json.dumps(data, indent=indent, sort_keys=sort_keys).strip() == text.strip():
                return {"indent": indent, "sort_keys": sort_keys}
    return {"indent": 2, "sort_keys": False}


CONVERSIONS: list[tuple[str, Callable[[Path], dict[str, Any]]]] = [
    ("landmarks_m2_binary.txt", landmarks_txt),
    *((f"asgrl/{p.name}", asgrl_txt) for p in sorted((RESULTS / "asgrl").glob("*.txt"))),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list what would change; write nothing")
    args = parser.parse_args(argv)
    for stamp in STAMPS:
        path = RESULTS / stamp.path
        data = json.loads(path.read_text())
        if not missing(data) and isinstance(data["seeds"], list | None):
            continue
        new = stamped(stamp, data)
        print(f"{stamp.path}: + {', '.join(k for k in new if new[k] != data.get(k))}")
        assert {k: v for k, v in new.items() if k in data and k != "seeds"} == {k: v for k, v in data.items()
                                                                               if k != "seeds"}, stamp.path
        if not args.check:
            write_json(path, new, **_style(path.read_text(), data))
    for name, convert in CONVERSIONS:
        target = (RESULTS / name).with_suffix(".json")
        if target.exists():
            continue
        print(f"{name} -> {target.relative_to(RESULTS)}")
        if not args.check:
            write_json(target, convert(RESULTS / name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
