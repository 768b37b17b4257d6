"""Copy trained fetch-programs stages into ``learning/pretrained/`` (what ``asg`` uses by default).

Reads the three run folders written by ``asg train --domain fetch-programs --stage ...``, copies the
goal policy and the behaviour model, exports the meta-controller without its trainer state
(``asg.learning.npi.pipeline.export_network``), and writes ``MANIFEST.json`` from the runs' own
``config.json`` / ``result.json`` (commands, seeds, wall times, measured figures), so nothing in
it is typed by hand. Evaluation files given with ``--eval`` are recorded too.

    python scripts/ship_pretrained.py --goal-policy runs/fetch-goal-policy-fast-seed0 \\
        --behaviour-model runs/fetch-behaviour-model-fast-seed0 \\
        --meta-controller runs/fetch-meta-controller-learned-seed0 --eval runs/fetch-programs-eval/*.json
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
from pathlib import Path

from asg.learning.npi.pipeline import CHECKPOINT, export_network

PRETRAINED = Path(__file__).resolve().parent.parent / "learning" / "pretrained"
FILES = {"goal-policy": "fetch_goal_policy.npz", "behaviour-model": "fetch_behaviour_model.pt",
         "meta-controller": "fetch_meta_controller.pt"}


def _json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goal-policy", type=Path, required=True)
    parser.add_argument("--behaviour-model", type=Path, required=True)
    parser.add_argument("--meta-controller", type=Path, required=True)
    parser.add_argument("--eval", type=Path, nargs="*", default=[], help="evaluation JSON files to record")
    parser.add_argument("--command", action="append", default=[], help="the command that made a stage: STAGE=CMD")
    args = parser.parse_args(argv)
    PRETRAINED.mkdir(parents=True, exist_ok=True)
    commands = dict(item.split("=", 1) for item in args.command)
    shutil.copyfile(args.goal_policy / "policy.npz", PRETRAINED / FILES["goal-policy"])
    shutil.copyfile(args.behaviour_model / "behaviour_model.pt", PRETRAINED / FILES["behaviour-model"])
    export_network(args.meta_controller / CHECKPOINT, PRETRAINED / FILES["meta-controller"])
    stages = {}
    for stage, folder in (("goal-policy", args.goal_policy), ("behaviour-model", args.behaviour_model),
                          ("meta-controller", args.meta_controller)):
        result = _json(folder / "result.json")
        result.pop("config", None)
        stages[stage] = {"file": FILES[stage], "sha256": _sha256(PRETRAINED / FILES[stage]),
                         "command": commands.get(stage), "config": _json(folder / "config.json"), "result": result}
    manifest = {"stages": stages, "evaluations": {p.name: _json(p) for p in args.eval}}
    tmp = PRETRAINED / "MANIFEST.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, PRETRAINED / "MANIFEST.json")
    for name in FILES.values():
        print(f"{PRETRAINED / name}: {(PRETRAINED / name).stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
