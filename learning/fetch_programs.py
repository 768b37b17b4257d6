"""The AlphaNPI-X pipeline on the Fetch world: what ``--domain fetch-programs`` trains and evaluates.

Three stages, each in its own run folder, each resumable, each returning a :class:`StageResult`:

1. ``goal-policy`` (:func:`train_goal_policy`): the goal-conditioned DDPG+HER policy of the 20
   atomic programs (Algorithms 1-2; ``asg.learning.goal_policy``);
2. ``behaviour-model`` (:func:`train_behaviour_model`): the self-behavioural model Ω_w from that
   policy's episodes (Algorithm 3; ``asg.learning.world_models.behaviour_model``);
3. ``meta-controller`` (:func:`train_meta_controller`): the recursive-MCTS meta-controller of the 7
   non-atomic programs, trained in imagination in the exact or the learned model (Algorithm 4;
   ``asg.learning.npi``).

:func:`train_pipeline` runs the three in order into ``<out>/<stage>/`` with one preset: a stage
whose folder holds a finished run is reused, an interrupted one resumed; with ``reuse_shipped``
the files shipped with asg (``asg.learning.pretrained``) stand in for stages not trained here.
:func:`train` is the one entry ``asg train --domain fetch-programs`` calls (the pipeline or one
stage, defaults filled in). :func:`evaluate_suite` scores the atomic programs, the MultiStep
suites or the non-atomic programs (Table 2) and returns a :class:`SuiteResult`.

Library code: no printing; progress goes to a ``run_dir.StageProgress`` callback, errors are
``ConfigError`` / ``CheckpointError`` naming the parameter or the file. Ctrl-C and SIGTERM stop a
stage at its next safe point with a checkpoint: the result's status is ``interrupted``.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from asg.learning import checkpoint
from asg.learning.configio import FieldError, override_file
from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.results import Status

if TYPE_CHECKING:  # the CLI imports this module for its names: it stays free of numpy and torch
    from asg.learning.run_dir import StageProgress

DOMAIN = "fetch-programs"
STAGES = ("goal-policy", "behaviour-model", "meta-controller")
SUITES = ("atomic", "multistep", "non-atomic")
WORLD_MODELS = ("exact", "learned")
MODES = ("network", "plan", "replan")
PRESETS = ("fast", "paper", "learned")
EXPERT_FREE = ("learned",)  # presets whose every stage is free of the scripted expert (issue 36)
SHIPPED = {"goal-policy": "fetch_goal_policy.npz", "behaviour-model": "fetch_behaviour_model.npz",
           "meta-controller": "fetch_meta_controller.npz"}
STAGE_FILE = {"goal-policy": "policy.npz", "behaviour-model": "behaviour_model.npz",
              "meta-controller": "meta_controller.npz"}
RESULT = "result.json"


def shipped(stage: str) -> Path:
    """The file asg ships for ``stage`` (``asg.learning.pretrained``); ``CheckpointError`` when absent."""
    name = SHIPPED[stage]
    path = Path(str(resources.files("asg.learning") / "pretrained" / name))
    if not path.is_file():
        raise CheckpointError(f"no shipped {name} in this installation; train the {stage} stage and pass its file")
    return path


def _shipped_or_none(stage: str) -> Path | None:
    try:
        return shipped(stage)
    except CheckpointError:
        return None


def default_out(stage: str | None, preset: str, seed: int) -> Path:
    """``runs/fetch-programs-<preset>-seed<N>`` for the pipeline, ``runs/fetch-<stage>-…`` for one stage."""
    return Path("runs") / (f"{DOMAIN}-{preset}-seed{seed}" if stage is None else f"fetch-{stage}-{preset}-seed{seed}")


def stage_file(stage: str, source: str | Path) -> Path:
    """The file a stage hands on (``policy.npz`` …) from its run folder, or ``source`` itself if a file."""
    path = Path(source)
    return path / STAGE_FILE[stage] if path.is_dir() else path


@dataclass(frozen=True)
class StageResult:
    """The outcome of one stage; ``to_json`` is its ``result.json`` plus the status (the ``--json`` keys)."""

    stage: str
    status: Status
    run_dir: str | None
    artifact: str
    """The file the next stage (or an evaluation) reads: ``policy.npz``, ``behaviour_model.npz`` …"""
    summary: dict[str, Any] = field(default_factory=dict)
    """The stage's own result fields (epochs, episodes, agreement, iterations …)."""

    def to_json(self) -> dict[str, Any]:
        return {**self.summary, "status": self.status.value}

    def lines(self) -> list[str]:
        """What the stage did, for a terminal."""
        s = self.summary
        if not s:  # interrupted before its result was written
            return [f"{self.stage}: {self.status}, checkpoint in {self.run_dir}"]
        if self.stage == "goal-policy":
            test = s.get("test_success")
            return [f"goal policy ({s['preset']}, seed {s['seed']}): epoch {s['epochs']}/{s['total_epochs']}, "
                    f"{s['episodes']} episodes, {s['wall_seconds']:.0f} s, test success "
                    f"{'-' if test is None else f'{test:.2f}'} [{self.status}]", f"policy: {self.artifact}"]
        if self.stage == "behaviour-model":
            fams = ", ".join(f"{k} {v:.2f}" for k, v in sorted(s.get("families", {}).items()))
            return [f"behaviour model from {s['episodes']} episodes, {s['wall_seconds']:.0f} s; "
                    f"post-condition agreement: {fams} [{self.status}]", f"model: {self.artifact}"]
        return [f"meta-controller ({s['model']} model, seed {s['seed']}): {self.status} after {s['iterations']} "
                f"iterations, {s['wall_seconds']:.0f} s", f"run directory: {self.run_dir}"]


def goal_policy_config(preset: str) -> Any:
    """The goal policy's ``GoalPolicyConfig`` of ``preset`` (``paper``: Table 5; ``fast``: with our additions)."""
    from asg.learning.goal_policy.config import preset as make

    return make(preset)


def behaviour_config(preset: str) -> Any:
    """The behaviour model's ``BehaviourConfig`` of ``preset``."""
    from asg.learning.world_models.behaviour_model import BEHAVIOUR_PRESETS

    if preset not in BEHAVIOUR_PRESETS:
        raise ConfigError(f"preset: unknown behaviour-model preset {preset!r}; choose from "
                          f"{', '.join(BEHAVIOUR_PRESETS)}")
    return BEHAVIOUR_PRESETS[preset]


def _interrupted(stage: str, folder: Path, resumable: Path) -> StageResult:
    """The result of a stage stopped by Ctrl-C / SIGTERM (re-raises when nothing was saved)."""
    if not resumable.is_file():
        raise KeyboardInterrupt
    return StageResult(stage, Status.INTERRUPTED, str(folder), str(folder / STAGE_FILE[stage]))


def train_goal_policy(out: str | Path, *, preset: str = "fast", config: Any = None, resume: bool = False,
                      seed: int = 0, workers: int = 1, ray_address: str | None = None,
                      max_epochs: int | None = None, carry: str | Path | None = None,
                      refill_episodes: int | None = None, carry_config_file: str | Path | None = None,
                      progress: StageProgress | None = None) -> StageResult:
    """Stage 1 into ``out`` (``config`` overrides ``preset``; ``resume`` keeps the saved config).
    ``carry``: a carry file (``goal_policy/carry.py``; a run folder: its ``carry.npz``) to continue
    in the new folder ``out`` with a refilled replay buffer (``refill_episodes``); ``config`` (or
    ``carry_config_file``, a JSON file of fields over the carried config) then changes only epochs
    and speed fields."""
    from asg.learning.goal_policy.carry import CARRY_FILE
    from asg.learning.goal_policy.trainer import CHECKPOINT
    from asg.learning.goal_policy.trainer import train_goal_policy as train

    folder = Path(out)
    if resume and config is not None:
        raise ConfigError("resume: the run keeps its saved config; give no config or preset with it")
    if not resume and config is None and carry is None:
        config = goal_policy_config(preset)
    carry_file = None if carry is None else Path(carry) / CARRY_FILE if Path(carry).is_dir() else Path(carry)
    if carry_file is not None and carry_config_file is not None:
        config = override_file(_carried_config(carry_file), carry_config_file)
    try:
        summary = train(None if resume else config, folder, resume=folder if resume else None, workers=workers,
                        ray_address=ray_address, seed=seed, progress=progress, max_epochs=max_epochs,
                        carry_from=carry_file, refill_episodes=refill_episodes)
    except KeyboardInterrupt:
        return _interrupted("goal-policy", folder, folder / CHECKPOINT)
    status = Status.FINISHED if summary["finished"] else Status.PAUSED
    return StageResult("goal-policy", status, str(folder), summary["policy"], summary)


def train_behaviour_model(out: str | Path, policy: str | Path, *, preset: str = "fast", config: Any = None,
                          episodes: int | None = None, seed: int = 0,
                          progress: StageProgress | None = None) -> StageResult:
    """Stage 2 into ``out`` from ``policy`` (a ``policy.npz`` or a goal-policy run folder); the same call
    again continues an interrupted collection or fit."""
    from asg.learning.world_models import behaviour_model as bm

    config = config or behaviour_config(preset)
    if episodes is not None:
        config = replace(config, episodes=episodes)
    folder = Path(out)
    try:
        summary = bm.train_behaviour_model(stage_file("goal-policy", policy), folder, config, seed=seed,
                                           progress=progress)
    except KeyboardInterrupt:
        saved = [folder / name for name in (bm.COLLECT_FILE, bm.FIT_FILE, bm.DATASET_FILE)]
        return _interrupted("behaviour-model", folder, next((p for p in saved if p.is_file()), saved[0]))
    return StageResult("behaviour-model", Status.FINISHED, str(folder), summary["model"], summary)


def world_model(kind: str, behaviour_model: str | Path | None = None) -> Any:
    """The predictor the search plans with: None for the exact model, the learned Ω_w for ``learned``
    (``behaviour_model`` or the shipped one)."""
    if kind not in WORLD_MODELS:
        raise ConfigError(f"world_model: {kind!r}; choose from {', '.join(WORLD_MODELS)}")
    if kind == "exact":
        if behaviour_model is not None:
            raise FieldError("behaviour_model", "only with the learned world model")
        return None
    from asg.learning.world_models.behaviour_model import LearnedBehaviourModel

    return LearnedBehaviourModel.load(stage_file("behaviour-model", behaviour_model or shipped("behaviour-model")))


def meta_controller_config(preset: str) -> Any:
    """The meta-controller's ``NPIConfig`` of ``preset``. Both learn when to Stop: the ψ prunings of
    the masks are off (``search.psi_prunings``, ours, stays an option). ``fast`` (the default, what
    the shipped file was trained with) adds our ``search.stop_at_expansion`` (a node's Stop child is
    scored when the node is expanded) and keeps the reference code's trace buffer per program;
    ``paper`` has the paper's masks and lazy Stop only and T5's one buffer of n_buf traces
    (``buffer_scope`` "all"). Both keep one call limit for every level (the paper gives none).
    ``learned`` (issue 36, no scripted expert anywhere) is ``fast``'s with the network's encoder reading only
    the blocks' positions (``net.state_view`` "blocks", ours: the part of a state the learned behaviour model
    predicts closely; docs/fetch_programs.md, "The meta-controller's seed, and what its network reads")."""
    from asg.learning.npi.config import NPIConfig

    if preset not in PRESETS:
        raise ConfigError(f"preset: unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    config = NPIConfig()
    if preset in ("fast", "learned"):  # both train in imagination only, no scripted controller in it
        config = replace(config, search=replace(config.search, psi_prunings=False, stop_at_expansion=True))
        return replace(config, net=replace(config.net, state_view="blocks")) if preset == "learned" else config
    return replace(config, search=replace(config.search, psi_prunings=False), buffer_scope="all")


def train_meta_controller(out: str | Path, *, world_model_kind: str = "learned",
                          behaviour_model: str | Path | None = None, resume: bool = False, seed: int = 0,
                          preset: str = "fast", config: Any = None, iterations: int | None = None,
                          workers: int | None = None, ray_address: str | None = None,
                          progress: StageProgress | None = None) -> StageResult:
    """Stage 3 into ``out``: the meta-controller of ``preset`` (``meta_controller_config``; ``config``, an
    ``NPIConfig``, instead) trained in the exact or the learned model (``resume``: the run's saved config)."""
    from asg.learning.npi import pipeline

    predictor = world_model(world_model_kind, behaviour_model)
    folder = Path(out)
    total: list[int] = []

    def on_row(row: dict[str, Any]) -> None:
        if progress is not None:
            n = total[0] if total else iterations or row["iteration"]
            note = f"validation {row['val_mean']:.2f}" if "val_mean" in row else f"train {row['train_success']:.2f}"
            progress("meta-controller", int(row["iteration"]), max(n, int(row["iteration"])), note)

    if resume and config is not None:
        raise ConfigError("resume: the run keeps its saved config; give no config or preset with it")
    if not resume and config is None:
        config = meta_controller_config(preset)
    if iterations is None:
        total.append((config or meta_controller_config(preset)).iterations)
    try:
        result = pipeline.train_meta_controller(folder, config=config, model=world_model_kind, predictor=predictor,
                                                seed=seed, iterations=iterations, workers=workers,
                                                ray_address=ray_address, resume=resume, progress=on_row)
    except KeyboardInterrupt:
        return _interrupted("meta-controller", folder, folder / pipeline.CHECKPOINT)
    return StageResult("meta-controller", result.status, str(folder),
                       str(folder / pipeline.CHECKPOINT), result.to_json())


@dataclass(frozen=True)
class StageSource:
    """Where the pipeline took one stage from."""

    source: str
    trained: bool
    result: StageResult | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "trained": self.trained}
        if self.result is not None:
            out["result"] = self.result.to_json()
        return out


@dataclass(frozen=True)
class PipelineResult:
    """The three stages of :func:`train_pipeline`; ``to_json`` is ``asg train --domain fetch-programs --json``."""

    run_dir: str
    preset: str
    status: Status
    stages: dict[str, StageSource]

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": self.run_dir, "preset": self.preset, "status": self.status.value,
                "stages": {name: s.to_json() for name, s in self.stages.items()}}

    def artifact(self, stage: str) -> Path:
        """The file of ``stage`` the pipeline used or made."""
        return stage_file(stage, self.stages[stage].source)

    def lines(self) -> list[str]:
        """Where each stage came from, for a terminal."""
        lines = [f"{name:<16} {'trained' if s.trained else 'using'} {s.source}"
                 + (f" [{s.result.status}]" if s.result is not None else "") for name, s in self.stages.items()]
        if len(self.stages) < len(STAGES):
            lines.append(f"pipeline {self.status}: run the same call again to continue")
        return lines


def _result(folder: Path) -> dict[str, Any]:
    """A stage folder's ``result.json`` ({} when absent, unreadable or not an object)."""
    try:
        result = json.loads((folder / RESULT).read_text())
    except (OSError, ValueError):
        return {}
    return result if isinstance(result, dict) else {}


def _finished(folder: Path, key: str, values: Sequence[Any] | None = None) -> bool:
    """Whether ``folder/result.json`` records a finished stage (``key`` present, in ``values`` if given)."""
    result = _result(folder)
    return key in result and (values is None or result[key] in values)


def _epochs_done(folder: Path) -> int:
    """Goal-policy epochs a stage folder holds: its result's, or its checkpoint's where a later run
    was interrupted after them (Ctrl-C, SIGTERM), so that a resumed run stops at the same epoch."""
    done = int(_result(folder).get("epochs", 0))
    saved = folder / "checkpoint.npz"
    if saved.is_file():
        done = max(done, int(checkpoint.read_meta(saved).get("epoch", 0)))
    return done


def train_pipeline(out: str | Path, *, preset: str = "fast", seed: int = 0, workers: int = 1,
                   world_model_kind: str = "learned", reuse_shipped: bool = False,
                   goal_policy: Any = None, behaviour: Any = None, meta_controller: Any = None,
                   iterations: int | None = None,
                   goal_policy_epochs: int | None = None, progress: StageProgress | None = None,
                   on_stage: Callable[[str, str], None] | None = None) -> PipelineResult:
    """Goal policy → behaviour model → meta-controller (in ``world_model_kind``), each into ``out/<stage>``.

    A stage whose folder holds a finished run is reused and an interrupted one resumed, so the
    same call continues the pipeline where it stopped. ``reuse_shipped``: stages not trained in
    ``out`` use asg's shipped files instead of training. ``on_stage(stage, what)`` is told before
    each stage what happens to it ("training", "resuming", "reusing …"). ``goal_policy`` /
    ``behaviour`` / ``meta_controller`` (configs) and ``iterations`` replace the preset's for one stage
    (smaller budgets).
    ``goal_policy_epochs``: the goal policy trains to that epoch of its schedule at most and the
    stages after it use the policy as it is then (its stage stays ``paused``: a larger value
    continues the same run, the stages after it are then stale); None = the whole schedule.
    """
    if goal_policy_epochs is not None and goal_policy_epochs < 1:
        raise FieldError("goal_policy_epochs", f"expected >= 1, got {goal_policy_epochs}")
    if preset not in PRESETS:
        raise ConfigError(f"preset: unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    if preset in EXPERT_FREE and reuse_shipped:
        raise FieldError("reuse_shipped", f"not with the {preset} preset: the shipped files were trained with the "
                                          "scripted expert")
    root = Path(out)
    stages: dict[str, StageSource] = {}
    tell = on_stage or (lambda stage, what: None)

    def run(stage: str, done: bool, train: Callable[[Path, bool], StageResult], resumable: str) -> Path | None:
        folder = root / stage
        if done:
            tell(stage, f"reusing {folder}")
            stages[stage] = StageSource(str(folder), False)
            return stage_file(stage, folder)
        ready = _shipped_or_none(stage) if reuse_shipped else None
        if ready is not None:
            tell(stage, f"reusing the shipped {ready.name}")
            stages[stage] = StageSource(str(ready), False)
            return ready
        resume = (folder / resumable).is_file()
        tell(stage, f"{'resuming' if resume else 'training'} into {folder}")
        result = train(folder, resume)
        stages[stage] = StageSource(str(folder), True, result)
        # paused: stopped at this call's budget; the goal policy at ``goal_policy_epochs`` goes on as it is
        at_budget = stage == "goal-policy" and goal_policy_epochs is not None and (
            result.summary.get("epochs", 0) >= goal_policy_epochs)
        stopped = result.status == Status.INTERRUPTED or (result.status == Status.PAUSED and not at_budget)
        return None if stopped else stage_file(stage, folder)

    have = _epochs_done(root / "goal-policy")
    at_budget = goal_policy_epochs is not None and have >= goal_policy_epochs
    policy = run("goal-policy", at_budget or _finished(root / "goal-policy", "finished", (True,)),
                 lambda d, resume: train_goal_policy(
                     d, preset=preset, config=None if resume else goal_policy, resume=resume, seed=seed,
                     workers=workers, progress=progress,
                     max_epochs=None if goal_policy_epochs is None else goal_policy_epochs - have),
                 "checkpoint.npz")
    model = None
    if policy is not None:
        model = run("behaviour-model", _finished(root / "behaviour-model", "model"),
                    lambda d, resume: train_behaviour_model(d, policy, preset=preset, config=behaviour, seed=seed,
                                                            progress=progress),
                    "dataset.npz")
    if model is not None:
        run("meta-controller", _finished(root / "meta-controller", "status", ("finished", "solved")),
            lambda d, resume: train_meta_controller(d, world_model_kind=world_model_kind,
                                                    behaviour_model=model if world_model_kind == "learned" else None,
                                                    resume=resume, seed=seed, preset=preset, workers=workers,
                                                    config=None if resume else meta_controller,
                                                    iterations=iterations, progress=progress), "meta_controller.npz")
    statuses = [s.result.status for s in stages.values() if s.result is not None]
    status = (Status.INTERRUPTED if Status.INTERRUPTED in statuses else Status.PAUSED if len(stages) < len(STAGES)
              else Status.FINISHED if statuses else Status.REUSED)
    return PipelineResult(str(root), preset, status, stages)


def train(stage: str | None, out: str | Path | None = None, *, preset: str | None = None, seed: int = 0,
          resume: bool = False, config_file: str | Path | None = None, workers: int | None = None,
          ray_address: str | None = None, max_epochs: int | None = None, goal_policy_epochs: int | None = None,
          policy: str | Path | None = None, episodes: int | None = None, world_model_kind: str | None = None,
          behaviour_model: str | Path | None = None, iterations: int | None = None,
          reuse_shipped: bool | None = None, carry: str | Path | None = None, refill_episodes: int | None = None,
          progress: StageProgress | None = None,
          on_stage: Callable[[str, str], None] | None = None) -> StageResult | PipelineResult:
    """What ``asg train --domain fetch-programs`` runs: the whole pipeline (``stage`` None, see
    :func:`train_pipeline`) or one stage, into ``out`` (default :func:`default_out`); a None argument
    takes its default (``preset`` fast, the learned world model, the shipped goal policy).
    ``config_file``: a JSON file of the stage's config fields over the preset's; ``resume``: the
    stage's run in ``out`` goes on with its saved config; ``carry`` (goal-policy): continue a carried
    learner in the new folder ``out``, its buffer refilled with ``refill_episodes`` (the refill resume,
    ``goal_policy/carry.py``), ``config_file`` then giving only epochs and speed fields."""
    if stage is not None and stage not in STAGES:
        raise FieldError("stage", f"{stage!r}; choose from {', '.join(STAGES)}")
    if resume and config_file is not None:
        raise FieldError("config_file", "not with resume: the run keeps its saved config")
    preset, kind = preset or "fast", world_model_kind or "learned"
    if preset in EXPERT_FREE:  # no shipped file stands in for a stage: they were trained with the expert
        if stage == "behaviour-model" and policy is None:
            raise FieldError("policy", f"the {preset} preset needs a goal policy of its own (the shipped one was "
                                       "trained with the scripted expert)")
        if stage == "meta-controller" and kind == "learned" and behaviour_model is None:
            raise FieldError("behaviour_model", f"the {preset} preset needs a behaviour model of its own (the "
                                                "shipped one was fitted on an expert-trained policy)")
    folder = Path(out or default_out(stage, preset, seed))
    if stage is None:
        return train_pipeline(folder, preset=preset, seed=seed, workers=workers or 1, world_model_kind=kind,
                              reuse_shipped=bool(reuse_shipped), goal_policy_epochs=goal_policy_epochs,
                              progress=progress, on_stage=on_stage)
    if stage == "behaviour-model":
        return train_behaviour_model(folder, policy or shipped("goal-policy"), episodes=episodes, seed=seed,
                                     config=override_file(behaviour_config(preset), config_file), progress=progress)
    if (carry is not None or refill_episodes is not None) and stage != "goal-policy":
        raise FieldError("carry", "only with the goal-policy stage")
    if refill_episodes is not None and carry is None:
        raise FieldError("refill_episodes", "only with carry (a carried run refills its buffer)")
    if carry is not None and resume:
        raise FieldError("carry", "not with resume: a carried run starts a new folder (resume it there later)")
    make = goal_policy_config if stage == "goal-policy" else meta_controller_config
    if carry is not None:
        return train_goal_policy(folder, seed=seed, workers=workers or 1, ray_address=ray_address,
                                 max_epochs=max_epochs, carry=carry, refill_episodes=refill_episodes,
                                 carry_config_file=config_file, progress=progress)
    config = None if resume else override_file(make(preset), config_file)
    if stage == "goal-policy":
        return train_goal_policy(folder, config=config, resume=resume, seed=seed, workers=workers or 1,
                                 ray_address=ray_address, max_epochs=max_epochs, progress=progress)
    return train_meta_controller(folder, world_model_kind=kind, behaviour_model=behaviour_model, config=config,
                                 resume=resume, seed=seed, preset=preset, iterations=iterations, workers=workers,
                                 ray_address=ray_address, progress=progress)


def _carried_config(path: Path) -> Any:
    """The config a carry file holds."""
    from asg.learning.goal_policy.carry import read_carry
    from asg.learning.goal_policy.config import from_dict

    return from_dict(read_carry(path)[0]["config"], str(path))


# -- evaluation -------------------------------------------------------------------------------
@dataclass(frozen=True)
class SuiteResult:
    """An evaluation of one suite; ``to_json`` is ``asg eval --domain fetch-programs --json``."""

    suite: str
    status: Status
    payload: dict[str, Any]
    """The suite's JSON (atomic: ``programs``, ``post_success`` …; non-atomic: ``mode``, ``programs`` …)."""
    table: tuple[str, ...] = ()
    saved: tuple[str, ...] = ()
    """Files written (the non-atomic suite's JSON and call-tree PNG)."""

    def to_json(self) -> dict[str, Any]:
        return self.payload

    def lines(self) -> list[str]:
        return list(self.table)


def evaluate_suite(suite: str, *, episodes: int = 100, seed: int = 0, policy: str | Path | None = None,
                   programs: Sequence[str] | None = None, starts: str = "table", mode: str = "replan",
                   checkpoint: str | Path | None = None, world_model_kind: str = "learned",
                   behaviour_model: str | Path | None = None, out: str | Path | None = None,
                   psi_prunings: bool | None = None, stop_at_expansion: bool | None = None,
                   z_tolerance: float | None = None, progress: StageProgress | None = None,
                   xy_tolerance: float | None = None, success_weighting: bool | None = None,
                   retry_noise: float | None = None) -> SuiteResult:
    """Score ``suite`` in MuJoCo: ``atomic`` (the goal test and ψ per program, ``programs``/``starts``),
    ``multistep`` (MultiStep-Moving/-Stacking), ``non-atomic`` (Table 2 in ``mode``, searching in
    ``world_model_kind``; JSON and a call-tree PNG into ``out``). Without ``policy`` / ``checkpoint``
    / ``behaviour_model`` the shipped files are used (non-atomic: without a shipped goal policy, the
    scripted controller runs the atomic programs). ``psi_prunings`` / ``stop_at_expansion`` /
    ``success_weighting`` / ``retry_noise``: override the meta-controller's saved ``search`` switches of those
    names (the ablation of each on the same files); the output's file stem names each override. ``z_tolerance``
    (atomic): the same episodes also scored with the goal test that wants each block within that height of its target
    (``schedule.goal_z_tolerance``), a column beside the paper's goal test; ``xy_tolerance`` (atomic): that
    column's test also wants each block within that horizontal distance (``schedule.goal_xy_tolerance``)."""
    if suite not in SUITES:
        raise ConfigError(f"suite: {suite!r}; choose from {', '.join(SUITES)}")
    for name, value in (("z_tolerance", z_tolerance), ("xy_tolerance", xy_tolerance)):
        if value is not None and suite != "atomic":
            raise FieldError(name, "only with the atomic suite")
    if suite == "atomic":
        from asg.learning.goal_policy.evaluate import evaluate_atomic

        result = evaluate_atomic(stage_file("goal-policy", policy or shipped("goal-policy")), episodes, seed,
                                 programs=programs, starts=starts, z_tolerance=z_tolerance,
                                 xy_tolerance=xy_tolerance)
        tol = result.get("tolerant_success")
        bounds = [f"{axis}±{100 * v:g}" for axis, v in (("z", z_tolerance), ("xy", xy_tolerance)) if v is not None]
        label = "/".join(bounds) + "cm"
        w = max(7, len(label))  # the tolerant column's width
        head = "" if tol is None else f" {label:>{w}}"
        table = [f"{'program':<28} {'goal':>6}{head} {'ψ':>6}"]  # the goal test (the paper's), [tolerant,] ψ
        table += [f"{name:<28} {r['success_rate']:6.2f}{'' if tol is None else f' {tol[name]:{w}.2f}'} "
                  f"{result['post_success'][name]:6.2f}" for name, r in result["programs"].items()]
        mean_tol = "" if tol is None else f" {result['mean_tolerant_success']:{w}.2f}"
        table.append(f"{'mean':<28} {result['mean_success']:6.2f}{mean_tol} {result['mean_post_success']:6.2f}")
        return SuiteResult(suite, Status.EVALUATED, result, tuple(table))
    if suite == "multistep":
        from asg.learning.goal_policy.evaluate import evaluate_multistep

        result = evaluate_multistep(stage_file("goal-policy", policy or shipped("goal-policy")), episodes, seed)
        table = [f"{name:<28} {r['success_rate']:6.2f}" for name, r in result["suites"].items()]
        return SuiteResult(suite, Status.EVALUATED, result, tuple(table))
    return _evaluate_non_atomic(episodes, seed, policy, mode, checkpoint, world_model_kind, behaviour_model,
                                Path(out or Path("runs") / f"{DOMAIN}-eval"),
                                {"psi_prunings": psi_prunings, "stop_at_expansion": stop_at_expansion,
                                 "success_weighting": success_weighting, "retry_noise": retry_noise}, progress)


def _evaluate_non_atomic(episodes: int, seed: int, policy: str | Path | None, mode: str,
                         checkpoint: str | Path | None, kind: str, behaviour_model: str | Path | None, out: Path,
                         switches: dict[str, bool | float | None], progress: StageProgress | None) -> SuiteResult:
    from asg.learning.npi.config import from_dict
    from asg.learning.npi.pipeline import evaluate_programs, read_checkpoint
    from asg.planning.programs import fetch_library

    if mode not in MODES:
        raise ConfigError(f"mode: {mode!r}; choose from {', '.join(MODES)}")
    predictor = world_model(kind, behaviour_model)
    controller = stage_file("goal-policy", policy) if policy is not None else _shipped_or_none("goal-policy")
    total, done = episodes * len(fetch_library().non_atomic), [0]

    def on_episode(program: str, _: int) -> None:
        done[0] += 1
        if progress is not None:
            progress("non-atomic programs", done[0], total, program)

    checkpoint = checkpoint or shipped("meta-controller")
    path = Path(checkpoint) / "meta_controller.npz" if Path(checkpoint).is_dir() else Path(checkpoint)
    saved = from_dict(read_checkpoint(path)["config"], str(path)).search
    given = {name: value for name, value in switches.items() if value is not None}
    search = replace(saved, **given)
    tags = {"psi_prunings": "prunings", "stop_at_expansion": "stop-expansion", "success_weighting": "weighting",
            "retry_noise": "retry-noise"}
    stem = out / "-".join([f"non-atomic-{mode}-{kind}"]
                          + [f"{tags[name]}-{_tag_value(value)}" for name, value in given.items()])
    evaluation = evaluate_programs(checkpoint, mode=mode, model=kind, world="real", search=search,
                                   episodes=episodes, seed=seed, predictor=predictor, controller_policy=controller,
                                   trace_png=f"{stem}-trace.png", json_path=f"{stem}.json", progress=on_episode)
    files = (f"{stem}.json", f"{stem}-trace.png")
    table = evaluation.table_lines()
    table[0] += (f", ψ prunings {'on' if search.psi_prunings else 'off'}, "
                 f"Stop scored at expansion {'on' if search.stop_at_expansion else 'off'}"
                 + (", success weighting on" if search.success_weighting else "")
                 + (f", retry noise {search.retry_noise:g}" if search.retry_noise else ""))
    return SuiteResult("non-atomic", Status.EVALUATED, {**evaluation.to_json(), "psi_prunings": search.psi_prunings,
                                                        "stop_at_expansion": search.stop_at_expansion,
                                                        "success_weighting": search.success_weighting,
                                                        "retry_noise": search.retry_noise},
                       tuple(table), files)


def _tag_value(value: bool | float) -> str:
    """A switch's value in a file stem: on / off, or the number."""
    return ("on" if value else "off") if isinstance(value, bool) else f"{value:g}"
