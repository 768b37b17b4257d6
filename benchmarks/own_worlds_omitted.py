"""Worlds of one's own whose model leaves a mechanism out (issue 40): `asg mvtr` and `--suggest` on each.

    python benchmarks/own_worlds_omitted.py [--worlds lockedroom,multiroom] [--force]

Five of MiniGrid's own envs, unmodified. Each has an example folder (``examples/<world>/``) that
holds the user's approximate model, which leaves ONE mechanism out (its header comment says
which), and a labeler. The labeler's vocabulary also knows the omitted mechanism's atoms
(``OMITTED``). ``WORLDS`` has the same shape as ``own_worlds.WORLDS``, which takes these worlds
in too, so ``benchmarks/own_worlds.py --worlds lockedroom,...`` trains on them.

For each world this runs the real command line in the example's folder: ``asg mvtr --env ID
--labeler labels:NAME --model FILE --episodes E --max-steps M --seed 0 --json --suggest``. Its
JSON is the MVTR report with the repair hints added (``hints``), both read from the same traces.
Where no trace reaches the goal, ``--suggest`` stops with exit 2 and no report, so the same
command without ``--suggest`` then gives the report (condition 2 unknown, exit 3). ``--both``
runs the command without ``--suggest`` in any case. Where the hints propose anything, the same
command with ``--write <world>_fixed.pddl`` then writes the repaired model beside the results and
re-checks it (its JSON's ``repair``). Up to ``--rounds`` (3) rounds in all: each later one runs
``--suggest --write`` on the last written model (``<world>_fixed_<k>.pddl``), until one has nothing to apply.
``EXPLORATION`` gives each world's (E, M):
random episodes, long enough that some reach the goal where the machine's time allowed. Each
world's runs go to ``benchmarks/results/own_worlds/omitted/<world>.json``, each beside the
command that produced it. A world whose file exists is read back unless ``--force`` is given. The
summary goes to ``omitted.{json,md}`` there: per world, the model's landmarks, the mechanism left
out, the MVTR verdict, the goal-reaching traces, and whether a top-3 repair hint names an
omitted atom. Every JSON carries the script's command, the commit, the budget and the seed
(``provenance``).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import provenance

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "own_worlds" / "omitted"
WORLDS = {  # name: (Gymnasium id, example folder, labeler, model), as own_worlds.WORLDS
    "lockedroom": ("MiniGrid-LockedRoom-v0", "lockedroom", "labels:LOCKEDROOM", "lockedroom.pddl"),
    "multiroom": ("MiniGrid-MultiRoom-N4-S5-v1", "multiroom", "labels:MULTIROOM", "multiroom.pddl"),
    "obstructedmaze": ("MiniGrid-ObstructedMaze-1Dl-v0", "obstructedmaze", "labels:OBSTRUCTEDMAZE",
                       "obstructedmaze.pddl"),
    "keyinbox": ("BabyAI-KeyInBox-v0", "keyinbox", "labels:KEYINBOX", "keyinbox.pddl"),
    "unlocktounlock": ("BabyAI-UnlockToUnlock-v0", "unlocktounlock", "labels:UNLOCKTOUNLOCK",
                       "unlocktounlock.pddl"),
    "blockedunlockpickup": ("MiniGrid-BlockedUnlockPickup-v0", "blockedunlockpickup", "labels:BLOCKEDUNLOCKPICKUP",
                            "blockedunlockpickup.pddl"),
}
# the models with the omitted mechanism written back in, trained as worlds of their own in
# benchmarks/own_worlds.py ("<world>-repaired"): keyinbox's and blockedunlockpickup's (two rounds) by
# `asg mvtr ... --suggest --write` (issue 39 on
# worlds of one's own), the other two by hand (issue 40: is the omission what stops the learner?); each
# file's header comment says which
REPAIRED = {"keyinbox": "keyinbox_repaired.pddl", "unlocktounlock": "unlocktounlock_repaired.pddl",
            "lockedroom": "lockedroom_repaired.pddl", "blockedunlockpickup": "blockedunlockpickup_repaired.pddl"}
# where REPAIRED's model is the hand-written one, the last model the rounds of hints wrote, with a header
# comment added ("<world>-hints" in benchmarks/own_worlds.py)
HINTS = {"unlocktounlock": "unlocktounlock_hints.pddl"}
OMITTED = {  # name: {atom of the omitted mechanism (labeler only): the model's landmark it is needed before}
    "lockedroom": {"(side-room-open)": "(has-key)"},
    "multiroom": {"(door-1-open)": "(in-room-2)", "(door-2-open)": "(in-room-3)", "(door-3-open)": "(in-room-4)"},
    "obstructedmaze": {"(hands-empty)": "(has-ball)"},
    "keyinbox": {"(box-opened)": "(has-key)"},
    "unlocktounlock": {"(has-key-b)": "(has-key-a)", "(door-b-open)": "(has-key-a)"},
    "blockedunlockpickup": {"(door-clear)": "(door-open)", "(hands-empty)": "(has-box)"},
}
MECHANISM = {  # name: the mechanism the model leaves out, in words (its header comment's)
    "lockedroom": "the key's room is closed: its door must be opened before the key can be reached",
    "multiroom": "the doors between the rooms are shut: each must be opened (toggled)",
    "obstructedmaze": "one object at a time: the key must be put down before the ball can be picked up",
    "keyinbox": "the key is in a box, which must be opened (toggled) first",
    "unlocktounlock": "the ball's key lies behind a second locked door, B, whose key must be taken "
                      "and B unlocked first",
    "blockedunlockpickup": "a ball blocks the door and must be moved first, and the agent holds one object at "
                           "a time: the ball, then the key, must be put down again",
}
EXPLORATION = {  # name: (--episodes, --max-steps) of asg mvtr's random exploration
    "lockedroom": (10, 20_000),
    "multiroom": (20, 5_000),
    "obstructedmaze": (20, 10_000),
    "keyinbox": (40, 10_000),
    "unlocktounlock": (20, 50_000),
    "blockedunlockpickup": (20, 20_000),
}
SEED = 0
TOP = 3


def mvtr_command(world: str, suggest: bool, model: str | None = None) -> list[str]:
    """The ``asg mvtr`` command line of ``world``, run in ``examples/<folder>/``; ``model``: another
    model than the example's (a path from that folder)."""
    env_id, _, labeler, own = WORLDS[world]
    model = model or own
    episodes, max_steps = EXPLORATION[world]
    return ["asg", "mvtr", "--env", env_id, "--labeler", labeler, "--model", model, "--episodes", str(episodes),
            "--max-steps", str(max_steps), "--seed", str(SEED), "--json", *(["--suggest"] if suggest else [])]


def run_mvtr(world: str, suggest: bool, write: Path | None = None, model: Path | None = None) -> dict[str, Any]:
    """One ``asg mvtr`` run: its command (as typed from the repository root), exit code, seconds, JSON.
    ``write``: with ``--suggest``, also ``--write`` the repaired model there (a file of an earlier run
    is replaced: ``--write`` never overwrites); ``model``: check this model (a repair of an earlier
    round) instead of the example's."""
    folder = ROOT / "examples" / WORLDS[world][1]
    command = mvtr_command(world, suggest, model and os.path.relpath(model.resolve(), folder))
    if write is not None:
        write.unlink(missing_ok=True)
        command += ["--write", os.path.relpath(write.resolve(), folder)]
    start = time.monotonic()
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    seconds = round(time.monotonic() - start, 1)
    shown = f"cd examples/{folder.name} && {shlex.join(command)}"
    if done.returncode not in (0, 1, 3):  # 2: bad input (with --suggest: no goal-reaching trace)
        return {"command": shown, "exit_code": done.returncode, "seconds": seconds,
                "error": (done.stderr or done.stdout).strip().splitlines()[-1:]}
    return {"command": shown, "exit_code": done.returncode, "seconds": seconds, "report": json.loads(done.stdout)}


def hint_summary(world: str, suggest: dict[str, Any]) -> dict[str, Any]:
    """The top hints' main edits, and which omitted atoms the top 3 name."""
    hints = suggest.get("report", {}).get("hints")
    if hints is None:
        return {"status": "no report", "why": suggest.get("error")}
    top = hints["hints"][:TOP]
    named = sorted({atom for h in top for atom in h["atoms"]} & set(OMITTED[world]))
    return {"status": hints["status"], "message": hints.get("message"), "goal_traces": hints["goal_traces"],
            "hints": len(hints["hints"]), "top": [{"kind": h["kind"], "edits": h["edits"]} for h in top],
            "omitted_named_in_top3": named, "found": bool(named)}


def landmarks_of(world: str) -> list[str]:
    """The model's landmark sequence (the real planner)."""
    from asg.planning import load_task
    from asg.planning.landmarks import compute_landmarks

    _, folder, _, model = WORLDS[world]
    graph = compute_landmarks(load_task(ROOT / "examples" / folder / model))
    return [" ".join(landmark.atom_strings()) for landmark in graph.subgoal_linearizations(limit=1)[0]]


def _kind(run: dict[str, Any]) -> str:
    command = run["command"]
    return "write" if "--write" in command else "suggest" if "--suggest" in command else "mvtr"


def repair_summary(world: str, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What each ``--write`` round wrote: the re-check's verdict, the edits, the new landmark sequence,
    the landmarks needed again, and the omitted atoms among the landmarks; or why nothing was written
    (the last round: no hint left to apply)."""
    rounds = []
    for run in (r for r in runs if _kind(r) == "write"):
        repair = run.get("report", {}).get("repair")
        if repair is None:
            rounds.append({"written": False, "why": run.get("error")})
            continue
        rounds.append({"written": True, "file": repair["written"], "mvtr": repair["mvtr"],
                       "edits": repair["edits"], "subgoals": repair["subgoals"],
                       "needed_again": repair["needed_again"],
                       "landmarks_include_omitted": sorted(set(repair["landmarks"]) & set(OMITTED[world])),
                       "hints": [{"kind": h["kind"], "edits": h["edits"]} for h in run["report"]["hints"]["hints"]]})
    return rounds


def summary_row(world: str, data: dict[str, Any]) -> dict[str, Any]:
    """One world's line of the summary, from its runs: the MVTR report of the run without
    ``--suggest`` where there is one, else of the ``--suggest`` run (the same traces)."""
    plain = [r for r in data["runs"] if _kind(r) == "mvtr"]
    suggest = next(r for r in data["runs"] if _kind(r) == "suggest")
    source = plain[0] if plain else suggest
    report = source.get("report", {})
    return {"world": world, "env": WORLDS[world][0], "landmarks": landmarks_of(world),
            "mechanism": MECHANISM[world], "omitted_atoms": sorted(OMITTED[world]),
            "episodes": data["budget"]["episodes"], "max_steps": data["budget"]["max_steps"],
            "goal_traces": report.get("traces", {}).get("goal_reaching"), "verdict": report.get("verdict"),
            "exit_code": source["exit_code"], "report_from": source["command"],
            "hints": hint_summary(world, suggest), "repair": repair_summary(world, data["runs"]),
            "commands": [r["command"] for r in data["runs"]],
            "run_commit": data["commit"]}


def _found(row: dict[str, Any]) -> str:
    hints = row["hints"]
    if hints.get("found"):
        return "yes: " + ", ".join(hints["omitted_named_in_top3"])
    if hints.get("found") is False:
        return f"no ({hints['hints']} hints)"
    return "no hint (no goal-reaching trace)"


def _main_edit_first(edits: list[str]) -> list[str]:
    """The edit a hint is for, then the declarations and new achiever it needs (as the CLI prints them)."""
    main = [e for e in edits if not e.startswith(("declare ", "add (:action")) and not e.endswith(":init")]
    return main[:1] + [e for e in edits if e not in main[:1]]


def markdown(data: dict[str, Any]) -> str:
    lines = ["# `asg mvtr` on worlds whose model leaves a mechanism out (issue 40)", "",
             f"Summary written by `{data['command']}` at commit `{data['commit']}`. Each world's runs, "
             "with the `asg mvtr` commands (run in `examples/<world>/`, seed 0) and the commit they ran "
             "at, are in `<world>.json` beside this file. Random episodes only (a plug-in world has no "
             "scripted solver), each reset with its own seed; a hint needs 3 goal-reaching traces.", "",
             "| world | env | model's landmarks | left out | labeler's atoms for it | budget (episodes x steps) "
             "| goal-reaching traces | MVTR verdict | a top-3 hint names it |", "|---|---|---|---|---|---|---|---|---|"]
    for row in data["worlds"]:
        lines.append(f"| {row['world']} | {row['env']} | {' < '.join(row['landmarks'])} | {row['mechanism']} | "
                     f"{' '.join(row['omitted_atoms'])} | {row['episodes']} x {row['max_steps']} | "
                     f"{row['goal_traces']} | {row['verdict']} | {_found(row)} |")
    lines += ["", "Top hints of `--suggest` (the edit each is for, then what it needs):", ""]
    for row in data["worlds"]:
        hints = row["hints"]
        if not hints.get("top"):
            why = hints.get("message") or " ".join(hints.get("why") or []) or (
                f"no hint from {hints['goal_traces']} goal-reaching traces: every one agrees with the model")
            lines.append(f"* **{row['world']}**: {why}")
            continue
        lines.append(f"* **{row['world']}** ({hints['hints']} hint(s) from {hints['goal_traces']} goal-reaching "
                     "traces):")
        lines += [f"  {k}. [{h['kind']}] {'; '.join(_main_edit_first(h['edits']))}"
                  for k, h in enumerate(hints["top"], 1)]
        for k, repair in enumerate(row.get("repair") or [], 1):
            if not repair["written"]:
                lines.append(f"  round {k}, `--suggest --write` on round {k - 1}'s model: nothing written "
                             f"({' '.join(repair['why'] or [])})")
                continue
            again = f"; needed again: {'; '.join(repair['needed_again'])}" if repair["needed_again"] else ""
            hints = "" if k == 1 else f" on round {k - 1}'s model, whose hints were: " + "; ".join(
                f"[{h['kind']}] {_main_edit_first(h['edits'])[0]}" for h in repair["hints"])
            lines.append(f"  round {k}, `--write` {Path(repair['file']).name}{hints}. Re-check: {repair['mvtr']}; "
                         f"landmark sequence {' < '.join(repair['subgoals'])}{again}; its landmarks include "
                         f"{' '.join(repair['landmarks_include_omitted']) or 'no omitted atom'}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", default=",".join(WORLDS))
    parser.add_argument("--force", action="store_true", help="run again a world whose results exist")
    parser.add_argument("--both", action="store_true", help="also run asg mvtr without --suggest where it reports")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--rounds", type=int, default=3,
                        help="repair rounds: --write, then --suggest --write on the written model, ...")
    args = parser.parse_args(argv)
    chosen = args.worlds.split(",")
    unknown = [w for w in chosen if w not in WORLDS]
    if unknown:
        parser.error(f"--worlds: unknown {unknown[0]!r}; choose from {', '.join(WORLDS)}")
    command = provenance.command_line(__file__, argv)
    args.results.mkdir(parents=True, exist_ok=True)
    for world in chosen:
        path = args.results / f"{world}.json"
        if path.exists() and not args.force:
            continue
        runs = [run_mvtr(world, True)]
        if args.both or "report" not in runs[0]:
            runs.insert(0, run_mvtr(world, False))
        model = None
        for k in range(1, args.rounds + 1):  # --write what the hints repair, then ask the written model
            if not runs[-1].get("report", {}).get("hints", {}).get("hints"):
                break
            written = args.results / (f"{world}_fixed.pddl" if k == 1 else f"{world}_fixed_{k}.pddl")
            runs.append(run_mvtr(world, True, write=written, model=model))
            model = written
        episodes, max_steps = EXPLORATION[world]
        provenance.write_result(path, {"world": world, "runs": runs}, command,
                                {"episodes": episodes, "max_steps": max_steps}, [SEED])
        done = ", ".join(f"{_kind(r)} exit {r['exit_code']} "
                         f"({r['seconds']} s)" for r in runs)
        print(f"{world}: {done}", file=sys.stderr, flush=True)
    rows = []
    for world in WORLDS:
        path = args.results / f"{world}.json"
        if path.exists():
            rows.append(summary_row(world, json.loads(path.read_text())))
    budget = {w["world"]: {"episodes": w["episodes"], "max_steps": w["max_steps"]} for w in rows}
    stamped = provenance.write_result(args.results / "omitted.json", {"worlds": rows}, command, budget, [SEED])
    provenance.atomic_write(args.results / "omitted.md", markdown(stamped).encode())
    print(json.dumps([{k: r[k] for k in ("world", "verdict", "goal_traces")} | {"found": r["hints"].get("found")}
                      for r in rows], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
