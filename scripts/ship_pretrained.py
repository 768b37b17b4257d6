"""Copy trained fetch-programs stages into ``learning/pretrained/`` (what ``asg`` uses by default).

Reads the three run folders written by ``asg train --domain fetch-programs --stage ...``, copies the
goal policy and the behaviour model, exports the meta-controller without its trainer state
(``asg.learning.npi.pipeline.export_network``), and writes ``MANIFEST.json`` from the runs' own
``config.json`` / ``result.json`` (commands, seeds, wall times, measured figures), so nothing in
it is typed by hand. Evaluation files given with ``--eval`` are recorded too. Every shipped file
is in asg's one checkpoint format (``asg.learning.checkpoint``); ``MANIFEST.json`` records the
SHA-256 of each.

    python scripts/ship_pretrained.py --goal-policy runs/fetch-goal-policy-fast-seed0 \\
        --behaviour-model runs/fetch-behaviour-model-fast-seed0 \\
        --meta-controller runs/fetch-meta-controller-learned-seed0 --eval runs/fetch-programs-eval/*.json

A stage not given keeps its shipped file and manifest entry (``--meta-controller RUN`` alone
ships a new meta-controller beside the shipped goal policy and behaviour model).

``--convert-legacy`` instead rewrites shipped files of the older formats (a plain ``.npz`` policy,
``torch.save`` files of tensors) into the checkpoint format, weights unchanged, and updates the
manifest's checksums. The legacy files are read without running code (``np.load`` with
``allow_pickle=False``, ``torch.load`` with ``weights_only=True``).
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch

from asg.learning import checkpoint as ckpt
from asg.learning.checkpoint import sha256_file
from asg.learning.goal_policy.evaluate import load_policy, save_policy
from asg.learning.goal_policy.normalizer import Normalizer, NormStats
from asg.learning.goal_policy.rollout import PolicySnapshot
from asg.learning.npi.pipeline import CHECKPOINT, CHECKPOINT_KIND, CHECKPOINT_VERSION, _identity, export_network
from asg.learning.world_models.behaviour_model import BehaviourNet, LearnedBehaviourModel

PRETRAINED = Path(__file__).resolve().parent.parent / "learning" / "pretrained"
FILES = {"goal-policy": "fetch_goal_policy.npz", "behaviour-model": "fetch_behaviour_model.npz",
         "meta-controller": "fetch_meta_controller.npz"}


def _json(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def _write_manifest(manifest: dict[str, Any]) -> None:
    tmp = PRETRAINED / "MANIFEST.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, PRETRAINED / "MANIFEST.json")


def legacy_policy(path: Path) -> Any:
    """A policy from the older plain-``.npz`` policy file (arrays only, no pickle)."""
    with np.load(path, allow_pickle=False) as data:
        n = int(data["n_layers"])
        layers = tuple((data[f"w{i}"].astype(np.float32), data[f"b{i}"].astype(np.float32)) for i in range(n))
        o_clip, g_clip = (float(x) for x in data["norm_clip"])
        return PolicySnapshot(layers, NormStats(data["o_mean"], data["o_std"], o_clip),
                              NormStats(data["g_mean"], data["g_std"], g_clip), float(data["clip_obs"]))


def legacy_behaviour_model(path: Path) -> Any:
    """A behaviour model from the older ``torch.save`` file of tensors (``weights_only=True``)."""
    data = torch.load(path, weights_only=True)
    net = BehaviourNet(int(data["state_dim"]), int(data["n_programs"]), tuple(data["hidden"]))
    net.load_state_dict(data["net"])

    def norm(d: dict) -> Normalizer:
        out = Normalizer(int(d["sum"].shape[0]), float(d["eps"]), float(d["clip"]))
        out.count, out.sum, out.sumsq = float(d["count"]), d["sum"].numpy().copy(), d["sumsq"].numpy().copy()
        return out
    return LearnedBehaviourModel(net, norm(data["s_norm"]), norm(data["d_norm"]),
                                 anchor=str(data.get("anchor", "start")))


def convert_legacy() -> None:
    """Rewrite the shipped files of the older formats in the checkpoint format; fix the manifest."""
    manifest = _json(PRETRAINED / "MANIFEST.json")
    policy_file = PRETRAINED / FILES["goal-policy"]
    save_policy(legacy_policy(policy_file), policy_file)
    model_file = PRETRAINED / FILES["behaviour-model"]
    legacy_behaviour_model(model_file).save(model_file)
    meta_file = PRETRAINED / FILES["meta-controller"]
    payload = torch.load(meta_file, weights_only=True)
    if payload.get("version") != CHECKPOINT_VERSION:
        raise SystemExit(f"{meta_file}: not a version-{CHECKPOINT_VERSION} meta-controller file")
    ckpt.save(meta_file, CHECKPOINT_KIND, payload, {**_identity(int(payload["seed"]), str(payload["model"])),
                                                    "inference_only": bool(payload.get("inference_only"))})
    for info in manifest.get("stages", {}).values():
        info["sha256"] = sha256_file(PRETRAINED / info["file"])
    manifest["format"] = "asg-checkpoint 1 (asg.learning.checkpoint)"
    _write_manifest(manifest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goal-policy", type=Path)
    parser.add_argument("--behaviour-model", type=Path)
    parser.add_argument("--meta-controller", type=Path)
    parser.add_argument("--eval", type=Path, nargs="*", default=[], help="evaluation JSON files to record")
    parser.add_argument("--command", action="append", default=[], help="the command that made a stage: STAGE=CMD")
    parser.add_argument("--convert-legacy", action="store_true",
                        help="rewrite the shipped files of older formats in the checkpoint format")
    args = parser.parse_args(argv)
    PRETRAINED.mkdir(parents=True, exist_ok=True)
    if args.convert_legacy:
        convert_legacy()
    else:
        if not (args.goal_policy or args.behaviour_model or args.meta_controller):
            parser.error("give --goal-policy, --behaviour-model or --meta-controller (a stage not given keeps "
                         "its shipped file)")
        ship(args)
    for name in FILES.values():
        print(f"{PRETRAINED / name}: {(PRETRAINED / name).stat().st_size / 1e6:.2f} MB")
    return 0


def ship(args: argparse.Namespace) -> None:
    """Copy (re-save, verified) the stages given and write the manifest; a stage not given keeps its
    shipped file and manifest entry. Evaluations given with ``--eval`` replace the manifest's of the
    same name; of the others, a new goal policy drops all, a new meta-controller or behaviour model
    the non-atomic ones (they scored the old files)."""
    commands = dict(item.split("=", 1) for item in args.command)
    manifest = _json(PRETRAINED / "MANIFEST.json")
    stages, evaluations = dict(manifest.get("stages", {})), dict(manifest.get("evaluations", {}))
    given = {"goal-policy": args.goal_policy, "behaviour-model": args.behaviour_model,
             "meta-controller": args.meta_controller}
    if args.goal_policy:
        save_policy(load_policy(args.goal_policy), PRETRAINED / FILES["goal-policy"])
    if args.behaviour_model:
        LearnedBehaviourModel.load(args.behaviour_model).save(PRETRAINED / FILES["behaviour-model"])
    if args.meta_controller:
        export_network(args.meta_controller / CHECKPOINT, PRETRAINED / FILES["meta-controller"])
    if args.goal_policy:  # every evaluation ran the old goal policy
        evaluations = {}
    elif args.meta_controller or args.behaviour_model:  # Table 2 searched with the old meta-controller / model
        evaluations = {name: e for name, e in evaluations.items() if not name.startswith("non-atomic")}
    for stage, folder in given.items():
        if folder is None:
            continue
        result = _json(folder / "result.json")
        result.pop("config", None)
        stages[stage] = {"file": FILES[stage], "sha256": sha256_file(PRETRAINED / FILES[stage]),
                         "command": commands.get(stage), "config": _json(folder / "config.json"), "result": result}
    missing = [stage for stage in FILES if stage not in stages]
    if missing:
        raise SystemExit(f"no shipped {', '.join(missing)} to keep: give --{missing[0]}")
    evaluations.update({p.name: _json(p) for p in args.eval})
    _write_manifest({"stages": stages, "evaluations": evaluations,
                     "format": "asg-checkpoint 1 (asg.learning.checkpoint)"})


if __name__ == "__main__":
    raise SystemExit(main())
