"""``asg train|eval --domain fetch-programs``: the AlphaNPI-X pipeline on the Fetch world.

Stages of ``asg train --domain fetch-programs --stage S``:

- ``goal-policy``: the goal-conditioned DDPG+HER policy of the atomic programs (Alg. 1-2);
- ``behaviour-model``: the self-behavioural model Ω_w from that policy's episodes (Alg. 3);
- ``meta-controller``: the AlphaNPI recursive-MCTS meta-controller of the non-atomic programs,
  trained in imagination inside the exact or the learned model.

``asg eval --domain fetch-programs --suite atomic|multistep|non-atomic`` scores them
(``--programs A,B`` restricts the atomic suite). Without ``--policy`` / ``--behaviour-model``
the files shipped in ``asg.learning.pretrained`` are used. ``--world-model exact|learned`` is
the behaviour model the meta-controller searches in, in training and evaluation alike.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from asg.cli.options import apply_config_file
from asg.cli.progress import Progress, Stages
from asg.planning.errors import AsgError

DOMAIN = "fetch-programs"
STAGES = ("goal-policy", "behaviour-model", "meta-controller")
PRETRAINED = Path(__file__).resolve().parent.parent / "learning" / "pretrained"
SHIPPED_POLICY = "fetch_goal_policy.npz"
SHIPPED_BEHAVIOUR_MODEL = "fetch_behaviour_model.npz"
SHIPPED_META_CONTROLLER = "fetch_meta_controller.npz"


def shipped(name: str) -> Path:
    """A file shipped with asg (``asg.learning.pretrained``); an error line when it is missing."""
    from importlib import resources

    try:
        path = Path(str(resources.files("asg.learning") / "pretrained" / name))
    except (ModuleNotFoundError, TypeError):
        path = PRETRAINED / name
    if not path.is_file():
        raise AsgError(f"no shipped {name} in this installation; train one (asg train --domain {DOMAIN} --stage ...)"
                       " and pass its path")
    return path


def _forbid(params: dict[str, Any], allowed: set[str], stage: str) -> None:
    """Options of the ASGRL trainer (or of another stage) are an error here, not silently ignored."""
    defaults = {"method": "asgrl", "seed": 0, "quiet": False, "as_json": False, "domain": None}
    for name, value in params.items():
        if name in allowed or value is None or defaults.get(name, object()) == value or value is False:
            continue
        where = f"--stage {stage}" if stage in STAGES else "without --stage (the whole pipeline)"
        raise AsgError(f"--{name.replace('_', '-')}: not an option of --domain {DOMAIN} {where}")


def _default_out(stage: str, preset: str, seed: int) -> Path:
    return Path("runs") / f"fetch-{stage}-{preset}-seed{seed}"


def _stages(params: dict[str, Any]) -> Stages:
    """Progress of the library's long loops: a bar on a terminal, plain lines with an ETA elsewhere."""
    return Stages(quiet=bool(params.get("quiet")))


def _print_written(folder: Path, *next_commands: str) -> None:
    from asg.cli.train_cmds import written_files

    click.echo(f"wrote {written_files(Path(folder))}")
    if next_commands:
        click.echo("next:")
        for command in next_commands:
            click.echo(f"  {command}")


def train_handler(ctx: click.Context, params: dict[str, Any]) -> None:
    """``asg train --domain fetch-programs ...`` (registered in ``train_cmds.DOMAIN_HANDLERS``)."""
    stage = params.get("stage")
    common = {"stage", "seed", "out", "resume", "quiet", "as_json", "domain", "preset"}
    if params.get("from_scratch") and stage is not None:
        raise AsgError("--from-scratch: only without --stage (it retrains every stage of the pipeline)")
    if stage is None:
        _forbid(params, {"seed", "out", "quiet", "as_json", "domain", "from_scratch", "workers"}, "")
        result = _pipeline(params)
    elif stage == "goal-policy":
        _forbid(params, common | {"workers", "ray_address", "max_epochs", "config_file"}, stage)
        result = _train_goal_policy(params)
    elif stage == "behaviour-model":
        _forbid(params, common | {"policy", "episodes", "config_file"}, stage)
        result = _train_behaviour_model(params)
    else:
        _forbid(params, common | {"workers", "ray_address", "behaviour_model", "world_model", "iterations"}, stage)
        result = _train_meta_controller(params)
    if params.get("as_json"):
        click.echo(json.dumps(result, indent=2, sort_keys=True, default=str))


def _train_goal_policy(params: dict[str, Any]) -> dict[str, Any]:
    from asg.learning.goal_policy import preset, train_goal_policy

    resume, seed = params.get("resume"), params["seed"]
    name = params.get("preset") or "fast"
    if resume is not None:
        if params.get("preset") is not None or params.get("config_file") is not None:
            raise AsgError("--resume: the run keeps its saved config; drop --preset and --config")
        config = None
    else:
        config = preset(name)
        if params.get("config_file") is not None:
            config = apply_config_file(config, params["config_file"])
    out = params.get("out") or _default_out("goal-policy", name, seed)
    stages = _stages(params)
    try:
        result = train_goal_policy(config, out, resume=resume, workers=params.get("workers") or 1,
                                   ray_address=params.get("ray_address"), seed=seed,
                                   progress=stages, max_epochs=params.get("max_epochs"))
    except KeyboardInterrupt:
        folder = Path(resume or out)
        if (folder / "checkpoint.npz").is_file():
            click.echo(f"interrupted; continue from the last checkpoint with: asg train --domain {DOMAIN} "
                       f"--stage goal-policy --resume {folder}", err=True)
        else:
            click.echo("interrupted before the first checkpoint; nothing to resume", err=True)
        sys.exit(130)
    finally:
        stages.close()
    if not params.get("as_json"):
        click.echo(f"goal policy ({result['preset']}, seed {result['seed']}): epoch {result['epochs']}/"
                   f"{result['total_epochs']}, {result['episodes']} episodes, {result['wall_seconds']:.0f} s, "
                   f"test success {result['test_success']:.2f}")
        click.echo(f"policy: {result['policy']}")
        if not params.get("in_pipeline"):
            policy = result["policy"]
            _print_written(Path(out), f"asg eval --domain {DOMAIN} --suite atomic --policy {policy}",
                           f"asg train --domain {DOMAIN} --stage behaviour-model --policy {policy}")
    return result


def _pipeline(params: dict[str, Any]) -> dict[str, Any]:
    """Goal policy -> behaviour model -> meta-controller (learned model); each stage is skipped when
    a finished one exists in the run folder or, unless ``--from-scratch``, is shipped with asg."""
    out = Path(params.get("out") or Path("runs") / f"{DOMAIN}-seed{params['seed']}")
    scratch, quiet = bool(params.get("from_scratch")), bool(params.get("quiet"))
    base = {"seed": params["seed"], "quiet": quiet, "as_json": True, "workers": params.get("workers"),
            "in_pipeline": True}
    summary: dict[str, Any] = {"run_dir": str(out), "stages": {}}

    def stage(name: str, folder: Path, shipped_name: str, done: bool, train: Any) -> Path:
        if done:
            summary["stages"][name] = {"source": str(folder), "trained": False}
            return folder
        ready = None if scratch else _shipped_or_none(shipped_name)
        if ready is not None:
            summary["stages"][name] = {"source": str(ready), "trained": False}
            return ready
        click.echo(f"[{name}] training into {folder}", err=True)
        summary["stages"][name] = {"source": str(folder), "trained": True, "result": train(folder)}
        return folder

    gp_dir, bm_dir, mc_dir = out / "goal-policy", out / "behaviour-model", out / "meta-controller"
    gp = stage("goal-policy", gp_dir, SHIPPED_POLICY, _finished(gp_dir, "finished", True),
               lambda d: _train_goal_policy({**base, "out": d, "workers": params.get("workers") or 1,
                                             "resume": d if (d / "checkpoint.npz").is_file() else None}))
    policy = gp / "policy.npz" if gp.is_dir() else gp
    bm = stage("behaviour-model", bm_dir, SHIPPED_BEHAVIOUR_MODEL, _finished(bm_dir, "model", None),
               lambda d: _train_behaviour_model({**base, "out": d, "policy": policy}))
    model = bm / "behaviour_model.npz" if bm.is_dir() else bm
    stage("meta-controller", mc_dir, SHIPPED_META_CONTROLLER, _finished(mc_dir, "status", None),
          lambda d: _train_meta_controller({**base, "out": d, "world_model": "learned", "behaviour_model": model,
                                            "resume": d if (d / "meta_controller.npz").is_file() else None}))
    for name, info in summary["stages"].items():
        click.echo(f"{name:<16} {'trained' if info['trained'] else 'using'} {info['source']}", err=True)
    if out.is_dir():
        click.echo(f"wrote {out}: " + ", ".join(sorted(p.name + "/" for p in out.iterdir() if p.is_dir())), err=True)
    mc = summary["stages"]["meta-controller"]["source"]
    click.echo("next:", err=True)
    click.echo(f"  asg eval --domain {DOMAIN} --suite atomic", err=True)
    click.echo(f"  asg eval --domain {DOMAIN} --suite non-atomic --mode replan --world-model learned "
               f"--checkpoint {mc} --behaviour-model {model}", err=True)
    return summary


def _finished(folder: Path, key: str, value: Any) -> bool:
    """A stage folder whose result.json records it done (``key`` present, or equal to ``value``)."""
    try:
        result = json.loads((folder / "result.json").read_text())
    except (OSError, ValueError):
        return False
    return key in result and (value is None or result[key] == value)


def _shipped_or_none(name: str) -> Path | None:
    try:
        return shipped(name)
    except AsgError:
        return None


def _train_behaviour_model(params: dict[str, Any]) -> dict[str, Any]:
    from dataclasses import replace

    from asg.learning.goal_policy import BEHAVIOUR_PRESETS, train_behaviour_model

    name = params.get("preset") or "fast"
    if name not in BEHAVIOUR_PRESETS:
        raise AsgError(f"--preset: unknown behaviour-model preset {name!r}; choose from {', '.join(BEHAVIOUR_PRESETS)}")
    config = BEHAVIOUR_PRESETS[name]
    if params.get("config_file") is not None:
        config = apply_config_file(config, params["config_file"])
    if params.get("episodes"):
        config = replace(config, episodes=params["episodes"])
    policy = params.get("policy") or shipped(SHIPPED_POLICY)
    out = params.get("out") or params.get("resume") or _default_out("behaviour-model", name, params["seed"])
    stages = _stages(params)
    try:
        result = train_behaviour_model(policy, out, config, seed=params["seed"], progress=stages)
    finally:
        stages.close()
    if not params.get("as_json"):
        fams = ", ".join(f"{k} {v:.2f}" for k, v in sorted(result.get("families", {}).items()))
        click.echo(f"behaviour model from {result['episodes']} episodes, {result['wall_seconds']:.0f} s; "
                   f"post-condition agreement: {fams}")
        click.echo(f"model: {result['model']}")
        if not params.get("in_pipeline"):
            _print_written(Path(out), f"asg train --domain {DOMAIN} --stage meta-controller --world-model learned "
                                      f"--behaviour-model {result['model']}")
    return result


def _train_meta_controller(params: dict[str, Any]) -> dict[str, Any]:
    from asg.learning.npi.pipeline import train_meta_controller

    kind = params.get("world_model") or "exact"
    predictor = _predictor(kind, params.get("behaviour_model"))
    resume = params.get("resume")
    out = resume or params.get("out") or Path("runs") / f"fetch-meta-controller-{kind}-seed{params['seed']}"
    result = train_meta_controller(out, model=kind, predictor=predictor, seed=params["seed"],
                                   iterations=params.get("iterations"), workers=params.get("workers"),
                                   ray_address=params.get("ray_address"), resume=resume is not None).to_json()
    if not params.get("as_json"):
        click.echo(f"meta-controller ({kind} model, seed {params['seed']}): {result['status']} after "
                   f"{result['iterations']} iterations, {result['wall_seconds']:.0f} s")
        click.echo(f"run directory: {out}")
        if not params.get("in_pipeline"):
            learned = f" --world-model learned --behaviour-model {params['behaviour_model']}" if (
                kind == "learned" and params.get("behaviour_model")) else (" --world-model learned" if kind == "learned" else "")
            _print_written(Path(out), f"asg eval --domain {DOMAIN} --suite non-atomic --mode replan "
                                      f"--checkpoint {out}{learned}")
    return result


def _predictor(kind: str, path: Path | None) -> Any:
    if kind != "learned":
        if path is not None:
            raise AsgError("--behaviour-model: only with --world-model learned")
        return None
    from asg.learning.goal_policy import LearnedBehaviourModel

    return LearnedBehaviourModel.load(path or shipped(SHIPPED_BEHAVIOUR_MODEL))


def eval_handler(params: dict[str, Any]) -> None:
    """``asg eval --domain fetch-programs --suite ...``; every option is checked before any episode runs."""
    suite = params.get("suite") or "atomic"
    episodes = params.get("episodes") or 100
    as_json = params.get("as_json", False)
    for name, only in (("starts", "atomic"), ("program_list", "atomic"), ("mode", "non-atomic"),
                       ("checkpoint", "non-atomic"), ("world_model", "non-atomic"),
                       ("behaviour_model", "non-atomic"), ("out", "non-atomic")):
        if params.get(name) is not None and suite != only:
            flag = "--programs" if name == "program_list" else f"--{name.replace('_', '-')}"
            raise AsgError(f"{flag}: only with --suite {only}")
    if params.get("behaviour_model") is not None and (params.get("world_model") or "exact") != "learned":
        raise AsgError("--behaviour-model: only with --world-model learned")
    if suite == "atomic":
        from asg.cli.options import split_list
        from asg.learning.goal_policy import evaluate_atomic
        from asg.planning.programs import fetch_library

        chosen = split_list("--programs", params.get("program_list"), [p.name for p in fetch_library().atomic])
        result = evaluate_atomic(params.get("policy") or shipped(SHIPPED_POLICY), episodes, params.get("seed", 0),
                                 programs=chosen, starts=params.get("starts") or "table")
    elif suite == "multistep":
        from asg.learning.goal_policy import evaluate_multistep

        result = evaluate_multistep(params.get("policy") or shipped(SHIPPED_POLICY), episodes, params.get("seed", 0))
        rows = {n: r["success_rate"] for n, r in result["suites"].items()}
    else:
        result, rows = _eval_non_atomic(params, episodes)
    if as_json:
        click.echo(json.dumps(result, indent=2, sort_keys=True))
        return
    if suite == "atomic":  # the goal test (the paper's) and ψ at the end, side by side
        click.echo(f"{'program':<28} {'goal':>6} {'ψ':>6}")
        for name, r in result["programs"].items():
            click.echo(f"{name:<28} {r['success_rate']:6.2f} {result['post_success'][name]:6.2f}")
        click.echo(f"{'mean':<28} {result['mean_success']:6.2f} {result['mean_post_success']:6.2f}")
        return
    for name, rate in rows.items():
        click.echo(f"{name:<28} {rate:6.2f}")


def _eval_non_atomic(params: dict[str, Any], episodes: int) -> tuple[dict[str, Any], dict[str, float]]:
    """Table 2 for one mode in the real world; JSON and a call-tree PNG land in ``--out``."""
    from asg.learning.npi.pipeline import evaluate_programs

    kind, mode = params.get("world_model") or "exact", params.get("mode") or "replan"
    checkpoint = params.get("checkpoint") or shipped(SHIPPED_META_CONTROLLER)
    policy = params.get("policy") or _shipped_or_none(SHIPPED_POLICY)  # else the scripted controller
    out = Path(params.get("out") or Path("runs") / f"{DOMAIN}-eval")
    stem = f"non-atomic-{mode}-{kind}"
    bar = _eval_bar(episodes, params.get("as_json", False))
    try:
        evaluation = evaluate_programs(checkpoint, mode=mode, model=kind, world="real", episodes=episodes,
                                       seed=params.get("seed", 0), predictor=_predictor(kind, params.get("behaviour_model")),
                                       controller_policy=policy, trace_png=out / f"{stem}-trace.png",
                                       json_path=out / f"{stem}.json", progress=bar.update)
    finally:
        bar.close()
    result = evaluation.to_json()
    if not params.get("as_json"):
        for line in evaluation.table_lines():
            click.echo(line)
        click.echo(f"saved: {out / (stem + '.json')}, {out / (stem + '-trace.png')}")
        return result, {}
    return result, {name: r["success_rate"] for name, r in result["programs"].items()}


def _eval_bar(episodes: int, quiet: bool):
    """Progress over every (program, episode) of a non-atomic evaluation, opened on the first
    episode (so that a bad checkpoint prints its error line alone)."""
    from asg.planning.programs import fetch_library

    total = episodes * len(fetch_library().non_atomic)

    class Bar:
        bar: Progress | None = None
        done = 0

        def update(self, program: str, done: int) -> None:
            if self.bar is None:
                self.bar = Progress(total, label="non-atomic programs", unit="episode", quiet=quiet)
            self.done += 1
            self.bar.update(self.done, program)

        def close(self) -> None:
            if self.bar is not None:
                self.bar.close()
    return Bar()


def register_handlers(train_handlers: dict[str, Any], eval_handlers: dict[str, Any]) -> None:
    """Make ``--domain fetch-programs`` known to ``asg train`` and ``asg eval`` (no new commands)."""
    train_handlers[DOMAIN] = train_handler
    eval_handlers[DOMAIN] = eval_handler


def register(group: click.Group) -> None:
    """Kept for callers of the old eager registration: the handlers, no commands."""
    from asg.cli import train_cmds

    register_handlers(train_cmds.DOMAIN_HANDLERS, train_cmds.EVAL_HANDLERS)
