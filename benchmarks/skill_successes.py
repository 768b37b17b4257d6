"""What each landmark's skills did in training, read from ASGRL runs' checkpoints (issue 40).

A run's ``metrics.csv`` says how often the *evaluation* episodes reached each landmark; a landmark
whose skills rarely succeed in training shows there as 0 long after its skills first succeeded. This
reads, from each run folder's ``checkpoint.npz`` (which ``own_worlds.py`` does not commit), per
landmark: its skills' training runs and successes, in all and per skill; the best episode score the
meta-controller's self-imitation memory keeps; and with ``learner.eliminate_undoing`` the
action elimination's counts (per set of kept landmarks and action: the training steps taken and
those that made a kept landmark false, ``asgrl/elimination.py``).

    python benchmarks/skill_successes.py NAME=RUN_DIR [NAME=RUN_DIR ...] --out FILE
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from provenance import command_line, named_path, write_result

from asg.learning import checkpoint as ckpt
from asg.learning.run_dir import CHECKPOINT, CHECKPOINT_KIND


def read_run(folder: Path) -> dict[str, Any]:
    """One run's per-landmark training counts (and elimination counts, when on)."""
    tree = ckpt.load(folder / CHECKPOINT, CHECKPOINT_KIND).tree
    learner = tree["learner"]
    landmarks = {sk["name"]: {"runs": int(sum(int(n) for n in sk["rollouts"])),
                              "successes": int(sum(int(s["successes"]) for s in sk["skills"])),
                              "per_skill": [{"runs": int(n), "successes": int(s["successes"])}
                                            for n, s in zip(sk["rollouts"], sk["skills"])]}
                 for sk in learner["skill_sets"]}
    result = folder / "result.json"
    out: dict[str, Any] = {"seed": int(json.loads(result.read_text())["seed"]) if result.exists() else None,
                           "env_steps": int(learner["env_steps"]), "episodes": int(learner["episodes"]),
                           "meta_best_score": float(learner["meta"]["best_score"]), "landmarks": landmarks}
    if "elimination" in learner:
        names = list(landmarks)
        elim = learner["elimination"]
        out["elimination"] = [{"kept": [names[j] for j in kept], "tries": tries, "undos": undos}
                              for kept, tries, undos in zip(elim["kept"], elim["tries"], elim["undos"])]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=named_path("RUN_DIR"), metavar="NAME=RUN_DIR")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    runs = {}
    for name, folder in args.runs:
        try:
            runs[name] = read_run(folder)
        except ckpt.CheckpointError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
    seeds = sorted({run["seed"] for run in runs.values() if run["seed"] is not None})
    budget = {"env_steps": max(r["env_steps"] for r in runs.values())}
    write_result(args.out, {"runs": runs}, command_line(__file__, argv), budget, seeds, indent=2)
    for name, run in runs.items():
        print(name, ", ".join(f"{lm} {c['successes']}/{c['runs']}" for lm, c in run["landmarks"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
