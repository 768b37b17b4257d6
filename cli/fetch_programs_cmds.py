"""``asg train|eval --domain fetch-programs``: the AlphaNPI-X pipeline (``asg.learning.fetch_programs``).

``asg train --domain fetch-programs`` trains the chosen preset's pipeline (goal policy, behaviour
model, meta-controller in the learned model) into ``--out``, resumable by running it again;
``--reuse-shipped`` takes asg's shipped files for the stages not trained there; ``--stage S``
trains one stage. ``asg eval --domain fetch-programs --suite atomic|multistep|non-atomic`` scores
them. ``train_cmds`` has already refused the options of other workflows.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from asg.cli.options import echo_result, fields_as_options, print_next, split_list
from asg.cli.progress import Stages
from asg.learning.configio import override_file
from asg.learning.fetch_programs import DOMAIN, MODES, STAGES, SUITES, WORLD_MODELS
from asg.planning.errors import AsgError

__all__ = ["DOMAIN", "MODES", "STAGES", "SUITES", "WORLD_MODELS", "evaluate", "train"]


def train(p: dict[str, Any], workflow: str) -> None:
    """One stage (``workflow``) or the whole pipeline."""
    from asg.learning import fetch_programs as fp

    preset, seed = p["preset"] or "fast", p["seed"]
    resume = p["resume"] is not None
    if resume and (p["preset"] is not None or p["config_file"] is not None):
        raise AsgError("--resume: the run keeps its saved config; drop --preset and --config")
    if resume and p["out"] is not None:
        raise AsgError("--out: not with --resume (the run stays in its folder)")
    out = Path(p["resume"] or p["out"] or fp.default_out(None if workflow == "pipeline" else workflow, preset, seed))
    stages = Stages(quiet=p["quiet"])
    try:
        with fields_as_options():
            result = _train(fp, p, workflow, out, resume, stages)
    finally:
        stages.close()
    if p["as_json"]:
        echo_result(result, True)
    else:
        _report(result, workflow, out)
    if result.status == "interrupted":
        again = "" if workflow == "pipeline" else f" --stage {workflow} --resume {out}"
        click.echo(f"interrupted; continue with: asg train --domain {DOMAIN}{again}"
                   + (f" --out {out}" if workflow == "pipeline" else ""), err=True)
        sys.exit(130)


def _train(fp: Any, p: dict[str, Any], workflow: str, out: Path, resume: bool, stages: Stages) -> Any:
    """The library call of ``workflow``: the whole pipeline or one stage."""
    preset, seed, kind = p["preset"] or "fast", p["seed"], p["world_model"] or "learned"
    if workflow == "pipeline":
        return fp.train_pipeline(out, preset=preset, seed=seed, workers=p["workers"] or 1, world_model_kind=kind,
                                 reuse_shipped=bool(p["reuse_shipped"]), goal_policy_epochs=p["goal_policy_epochs"],
                                 progress=stages,
                                 on_stage=lambda stage, what: click.echo(f"[{stage}] {what}", err=True))
    if workflow == "goal-policy":
        config = None if resume else override_file(fp.goal_policy_config(preset), p["config_file"])
        return fp.train_goal_policy(out, config=config, resume=resume, seed=seed, workers=p["workers"] or 1,
                                    ray_address=p["ray_address"], max_epochs=p["max_epochs"], progress=stages)
    if workflow == "behaviour-model":
        return fp.train_behaviour_model(out, p["policy"] or fp.shipped("goal-policy"), progress=stages,
                                        config=override_file(fp.behaviour_config(preset), p["config_file"]),
                                        episodes=p["episodes"], seed=seed)
    config = None if resume else override_file(fp.meta_controller_config(preset), p["config_file"])
    return fp.train_meta_controller(out, world_model_kind=kind, behaviour_model=p["behaviour_model"], config=config,
                                    resume=resume, seed=seed, preset=preset, iterations=p["iterations"],
                                    workers=p["workers"], ray_address=p["ray_address"], progress=stages)


def _report(result: Any, workflow: str, out: Path) -> None:
    from asg.learning.run_dir import describe_files

    if workflow == "pipeline":
        for name, stage in result.stages.items():
            click.echo(f"{name:<16} {'trained' if stage.trained else 'using'} {stage.source}"
                       + (f" [{stage.result.status}]" if stage.result is not None else ""))
        if len(result.stages) < len(STAGES):
            click.echo(f"pipeline {result.status}: run the same command again to continue")
            return
        mc, model = result.stages["meta-controller"].source, result.artifact("behaviour-model")
        print_next((f"asg eval --domain {DOMAIN} --suite atomic --policy {result.artifact('goal-policy')}", ""),
                   (f"asg eval --domain {DOMAIN} --suite non-atomic --mode replan --checkpoint {mc} "
                    f"--world-model learned --behaviour-model {model}", ""))
        return
    echo_result(result, False)
    click.echo(f"wrote {describe_files(out)}")
    if workflow == "goal-policy":
        follow = [f"asg eval --domain {DOMAIN} --suite atomic --policy {result.artifact}",
                  f"asg train --domain {DOMAIN} --stage behaviour-model --policy {result.artifact}"]
    elif workflow == "behaviour-model":
        follow = [f"asg train --domain {DOMAIN} --stage meta-controller --behaviour-model {result.artifact}"]
    else:
        follow = [f"asg eval --domain {DOMAIN} --suite non-atomic --mode replan --checkpoint {out} "
                  f"--world-model {result.summary.get('model', 'learned')}"]
    print_next(*((command, "") for command in follow))


def evaluate(p: dict[str, Any], suite: str) -> None:
    """``asg eval --domain fetch-programs --suite ...``; every option is checked before any episode runs."""
    from asg.learning import fetch_programs as fp

    programs = None
    if suite == "atomic" and p["program_list"] is not None:
        from asg.planning.programs import fetch_library

        programs = split_list("--programs", p["program_list"], [prog.name for prog in fetch_library().atomic])
    stages = Stages(quiet=p["as_json"])
    try:
        with fields_as_options():
            result = fp.evaluate_suite(suite, episodes=p["episodes"] or 100, seed=p["seed"], policy=p["policy"],
                                       programs=programs, starts=p["starts"] or "table", mode=p["mode"] or "replan",
                                       checkpoint=p["checkpoint"], world_model_kind=p["world_model"] or "learned",
                                       behaviour_model=p["behaviour_model"], out=p["out"], progress=stages,
                                       psi_prunings=_switch(p["psi_prunings"]),
                                       stop_at_expansion=_switch(p["stop_at_expansion"]))
    finally:
        stages.close()
    echo_result(result, p["as_json"])
    if result.saved and not p["as_json"]:
        click.echo(f"saved: {', '.join(result.saved)}")


def _switch(value: str | None) -> bool | None:
    """An on/off option as a bool (None: not given, keep the saved value)."""
    return None if value is None else value == "on"
