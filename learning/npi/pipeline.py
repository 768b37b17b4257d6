"""Entry points for the CLI: train the meta-controller, evaluate non-atomic programs (Table 2).

A run folder holds ``config.json`` (the resolved :class:`NPIConfig`, seed, model), ``metrics.csv``
(one row per iteration), ``meta_controller.npz`` (network, optimiser and loop state, in asg's one
checkpoint format ``asg.learning.checkpoint``: no pickle), ``result.json``
and the writer's ``.lock``. A resume checks that ``config.json`` names the stage, seed and model of the
checkpoint. Ctrl-C or SIGTERM stop training after the current iteration: it checkpoints, writes
``result.json`` (status ``interrupted``) and raises ``KeyboardInterrupt``.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from asg.learning import checkpoint as ckpt
from asg.learning.errors import CheckpointError, ConfigError
from asg.learning.npi.config import NPIConfig, SearchConfig, from_dict, to_dict
from asg.learning.npi.inference import (
    MODES,
    CallRecord,
    FetchExecutor,
    ModelExecutor,
    call_tree_png,
    policy_controller,
    run_program,
)
from asg.learning.npi.mcts import SearchContext
from asg.learning.npi.network import AlphaNPINet, state_inputs
from asg.learning.npi.selfplay import import_ray, make_guide, resolve_backend, start_state
from asg.learning.npi.trainer import MetaControllerTrainer
from asg.learning.results import Status
from asg.learning.run_dir import CONFIG, RunDir, StopOnSignal, atomic_write
from asg.learning.torch_state import torch_threads
from asg.learning.world_models.program_models import (
    NO_SUCCESS_HEAD,
    EnvironmentModel,
    RealFetchModel,
    exact_fetch_model,
    learned_fetch_model,
)

CHECKPOINT = "meta_controller.npz"
CHECKPOINT_VERSION = 1
CHECKPOINT_KIND = "meta-controller"
STAGE, DOMAIN = "meta-controller", "fetch-programs"
IDENTITY = ("domain", "stage", "seed", "model")  # what config.json and the checkpoint must share
MODELS = ("exact", "learned")
WORLDS = ("real", "model")
# AlphaNPI-X Table 2 (success per program family, averaged over arguments).
PAPER_TABLE2 = {
    "Clean_Table": {"network": 0.02, "plan": 0.54, "replan": 0.63},
    "Clean_And_Stack": {"network": 0.01, "plan": 0.25, "replan": 0.38},
    "Stack_All_Blocks": {"network": 0.02, "plan": 0.19, "replan": 0.31},
    "Stack_All_To_Zone": {"network": 0.82, "plan": 0.92, "replan": 0.94},
    "Move_All_To_Zone": {"network": 0.68, "plan": 0.95, "replan": 0.95},
}


def build_model(kind: str, predictor: Any = None, initial_states: str = "table") -> EnvironmentModel:
    """The search's model: ``exact`` (symbolic Ω), ``learned`` (needs ``predictor``) or ``real``."""
    if kind == "exact":
        return exact_fetch_model(initial_states)
    if kind == "learned":
        if predictor is None:
            raise ConfigError("model 'learned': no learned behaviour model is available yet; use model 'exact'")
        return learned_fetch_model(predictor, initial_states)
    if kind == "real":
        return RealFetchModel()
    raise ConfigError(f"model must be one of {MODELS + ('real',)}, got {kind!r}")


def check_success_weighting(search: SearchConfig, model: EnvironmentModel) -> None:
    """A ``ConfigError`` before any search when ``search.success_weighting`` is on and ``model`` gives
    no success probabilities (only a learned behaviour model fitted with a success head does)."""
    if search.success_weighting and not getattr(model, "gives_success", False):
        raise ConfigError(NO_SUCCESS_HEAD)


# -- checkpoints ------------------------------------------------------------------------------
def save_checkpoint(path: Path, trainer: MetaControllerTrainer, model_name: str) -> None:
    """Write the trainer's state and config to ``path`` atomically."""
    payload = {"version": CHECKPOINT_VERSION, "config": to_dict(trainer.config), "seed": trainer.seed,
               "model": model_name, "programs": list(trainer.table.names), "state_dim": trainer.model.state_dim,
               "trainer": trainer.state_dict()}
    ckpt.save(Path(path), CHECKPOINT_KIND, payload, {**_identity(trainer.seed, model_name),
                                                     "iteration": trainer.state.iteration})


def _identity(seed: int, model: str) -> dict[str, Any]:
    return {"domain": DOMAIN, "stage": STAGE, "seed": seed, "model": model}


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint payload; ``CheckpointError`` when missing, corrupt, foreign or of another version."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: no meta-controller checkpoint")
    payload = ckpt.load(path, CHECKPOINT_KIND).tree
    needed = {"config", "seed", "model", "programs", "state_dim", "trainer"}
    if not isinstance(payload, dict) or payload.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(f"{path}: not a version-{CHECKPOINT_VERSION} meta-controller checkpoint")
    ckpt.require(needed <= set(payload) and isinstance(payload["trainer"], dict) and "net" in payload["trainer"],
                 path, "unexpected content")
    return payload


def export_network(checkpoint: str | Path, out: str | Path) -> Path:
    """A small inference-only copy of a checkpoint (network weights and config, no optimiser,
    buffers or loop state): what asg ships. It evaluates like the original but cannot resume."""
    payload = read_checkpoint(checkpoint)
    slim = {**payload, "trainer": {"net": payload["trainer"]["net"]}, "inference_only": True}
    ckpt.save(Path(out), CHECKPOINT_KIND, slim, {**_identity(payload["seed"], payload["model"]),
                                                 "inference_only": True})
    return Path(out)


def load_network(path: str | Path, model: EnvironmentModel) -> tuple[AlphaNPINet, NPIConfig]:
    """The trained network and its config; the checkpoint must match the model's programs."""
    payload = read_checkpoint(path)
    if payload["programs"] != list(model.table.names) or payload["state_dim"] != model.state_dim:
        raise CheckpointError(f"{path}: trained on another program library or state size")
    config = from_dict(payload["config"], str(path))
    table = model.table
    with torch.random.fork_rng(devices=[]):  # its weights come from the file; global RNG untouched
        net = AlphaNPINet(model.state_dim, table.n_actions, len(table.tasks), config.net,
                          inputs=state_inputs(model, config.net))
    try:
        net.load_state_dict(payload["trainer"]["net"])
    except (RuntimeError, KeyError, TypeError) as err:  # RuntimeError: torch's missing keys / shape mismatch
        raise CheckpointError(f"{path}: network weights do not fit its config ({type(err).__name__})") from None
    return net, config


# -- training ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class MetaControllerResult:
    """The outcome of a training run (``result.json``)."""

    run_dir: str
    model: str
    seed: int
    iterations: int
    validation: dict[str, float]
    first_reached: dict[str, int]
    wall_seconds: float
    status: Status

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "status": str(self.status)}


def train_meta_controller(out_dir: str | Path, *, config: NPIConfig | None = None, model: str = "exact",
                          predictor: Any = None, seed: int = 0, iterations: int | None = None,
                          workers: int | None = None, backend: str | None = None,
                          ray_address: str | None = None, resume: bool = False,
                          progress: Callable[[dict[str, Any]], None] | None = None,
                          should_stop: Callable[[], bool] | None = None) -> MetaControllerResult:
    """Train (or resume) the meta-controller in ``model``; everything lands in ``out_dir``.

    ``workers``, ``backend`` and ``ray_address`` override the config's self-play settings (a
    resumed run keeps its saved ones unless given): ``backend`` ``local`` (in-process or a fork
    pool) or ``ray`` (Ray actors); ``backend=None`` with an address means ``ray``.
    """

    out = Path(out_dir)
    with torch_threads(1), RunDir(out) as run, StopOnSignal() as signalled:
        return _train(run, config, model, predictor, seed, iterations, workers, backend, ray_address, resume,
                      progress, should_stop, signalled)


def _train(run: RunDir, config: NPIConfig | None, model: str, predictor: Any, seed: int, iterations: int | None,
           workers: int | None, backend: str | None, ray_address: str | None, resume: bool,
           progress: Callable[[dict[str, Any]], None] | None, should_stop: Callable[[], bool] | None,
           signalled: StopOnSignal) -> MetaControllerResult:
    out = run.path
    path = out / CHECKPOINT
    if resume:
        payload = read_checkpoint(path)
        if payload.get("inference_only"):
            raise CheckpointError(f"{path}: an inference-only export (no trainer state); it cannot be resumed")
        saved = {"domain": DOMAIN, "stage": STAGE, **run.read_config("a meta-controller run config")}
        ckpt.check_agrees(out / CONFIG, saved, path, _identity(payload["seed"], payload["model"]), IDENTITY)
        config, seed, model = from_dict(payload["config"], str(path)), int(payload["seed"]), str(payload["model"])
    elif path.exists():
        raise ConfigError(f"{out}: already holds a meta-controller; resume it or choose another folder")
    config = config or NPIConfig()
    if workers is not None:
        config = replace(config, workers=workers)
    if backend is not None or ray_address is not None:
        config = replace(config, backend=resolve_backend(backend, ray_address), ray_address=ray_address)
    if config.backend == "ray":
        import_ray()  # a missing Ray is a ConfigError before anything is written
    world = build_model(model, predictor, config.initial_states)
    check_success_weighting(config.search, world)
    trainer = MetaControllerTrainer(world, config, seed)
    if resume:
        try:
            trainer.load_state_dict(payload["trainer"])
        except (KeyError, TypeError, ValueError, RuntimeError) as err:
            raise CheckpointError(f"{path}: does not fit the run's config and model ({type(err).__name__})") from None
    run.write_config({"config": to_dict(config), **_identity(seed, model)})
    total = config.iterations if iterations is None else iterations

    def on_row(row: dict[str, Any]) -> None:
        run.write_metrics(trainer.state.rows)
        if row["iteration"] % config.validate_every == 0 or row["iteration"] >= total:
            save_checkpoint(path, trainer, model)
        if progress is not None:
            progress(row)

    stop = signalled if should_stop is None else (lambda: signalled() or should_stop())
    state = trainer.train(total, on_row, stop)
    save_checkpoint(path, trainer, model)
    status = (Status.SOLVED if trainer.solved() else Status.FINISHED if state.iteration >= total
              else Status.INTERRUPTED)
    result = MetaControllerResult(str(out), model, seed, state.iteration, dict(state.validation),
                                  dict(state.first_reached), round(state.wall_seconds, 2), status)
    run.write_result(result.to_json())
    if signalled.requested:
        raise KeyboardInterrupt  # Ctrl-C / SIGTERM: checkpointed; the caller reports the interruption
    return result


# -- evaluation -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProgramEvaluation:
    """Success per program of one inference mode; ``to_json`` is the CLI's ``--json`` output."""

    mode: str
    model: str
    world: str
    programs: dict[str, dict[str, float | int]]
    families: dict[str, float] = field(default_factory=dict)  # averaged over arguments (Table 2 rows)
    example: CallRecord | None = None
    controller: str | None = None  # atomic programs in the real world: "scripted" or the policy file

    def to_json(self) -> dict[str, Any]:
        """``{"mode", "model", "world", "controller", "programs": {name: {"success_rate", "episodes"}},
        "families": {family: mean success}}``."""
        return {"mode": self.mode, "model": self.model, "world": self.world, "controller": self.controller,
                "programs": self.programs, "families": self.families}

    def table_lines(self) -> list[str]:
        """Table 2: our success per family beside the paper's for the same mode."""
        where = f"{self.world} world" + ("" if self.controller is None else f", {self.controller} controller")
        lines = [f"{'program':<20} {'ours':>6} {'paper':>6}   ({self.mode}, model {self.model}, {where})"]
        for family, rate in self.families.items():
            paper = PAPER_TABLE2.get(family, {}).get(self.mode)
            lines.append(f"{family:<20} {rate:>6.2f} {'' if paper is None else f'{paper:.2f}':>6}")
        return lines


def table2_lines(evaluations: Sequence[ProgramEvaluation]) -> list[str]:
    """Table 2 for several modes: per family, our success and the paper's, one column pair per mode."""
    families = list(PAPER_TABLE2)
    families += sorted({f for e in evaluations for f in e.families} - set(families))
    head = f"{'program':<20}" + "".join(f" {e.mode + ' ours':>13} {'paper':>6}" for e in evaluations)
    lines = [head]
    for family in families:
        if not any(family in e.families for e in evaluations):
            continue
        row = f"{family:<20}"
        for e in evaluations:
            ours, paper = e.families.get(family), PAPER_TABLE2.get(family, {}).get(e.mode)
            row += f" {'' if ours is None else f'{ours:.2f}':>13} {'' if paper is None else f'{paper:.2f}':>6}"
        lines.append(row)
    return lines


def evaluate_programs(checkpoint: str | Path | None, *, mode: str = "replan", model: str = "exact",
                      world: str = "real", episodes: int = 100, programs: str | list[str] = "non-atomic",
                      seed: int = 0, predictor: Any = None, search: SearchConfig | None = None,
                      trace_png: str | Path | None = None, json_path: str | Path | None = None,
                      progress: Callable[[str, int], None] | None = None,
                      controller_policy: str | Path | None = None) -> ProgramEvaluation:
    """Success of each program over ``episodes`` start states of the world (Table 2).

    ``checkpoint`` is a meta-controller file (or a run folder holding one); ``model`` is what the
    search plans in; ``world`` is where programs run: the real env, whose atomic programs run the
    learned goal policy ``controller_policy`` (a ``policy.npz`` or a run folder holding one) or,
    without one, the scripted controller; or the model itself.
    """
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {MODES}, got {mode!r}")
    if world not in WORLDS:
        raise ConfigError(f"world must be one of {WORLDS}, got {world!r}")
    if episodes < 1:
        raise ConfigError(f"episodes must be >= 1, got {episodes}")
    if checkpoint is None:
        raise ConfigError("no meta-controller checkpoint given: train one first (the meta-controller stage)")
    if controller_policy is not None and world != "real":
        raise ConfigError("a goal policy (controller_policy) runs atomic programs in the real world only")
    with torch_threads(1):
        return _evaluate_programs(checkpoint, mode, model, world, episodes, programs, seed, predictor, search,
                                  trace_png, json_path, progress, controller_policy)


def _evaluate_programs(checkpoint: str | Path, mode: str, model: str, world: str, episodes: int,
                       programs: str | list[str], seed: int, predictor: Any, search: SearchConfig | None,
                       trace_png: str | Path | None, json_path: str | Path | None,
                       progress: Callable[[str, int], None] | None,
                       controller_policy: str | Path | None) -> ProgramEvaluation:
    path = Path(checkpoint)
    path = path / CHECKPOINT if path.is_dir() else path
    search_model = build_model(model, predictor)
    net, config = load_network(path, search_model)
    snapshot = net.snapshot()
    search = search or config.search
    check_success_weighting(search, search_model)
    table = search_model.table
    if programs == "non-atomic":
        tasks = list(table.tasks)
    else:
        tasks = [table.index(name) for name in programs]
        atomic = [table.names[t] for t in tasks if table.is_atomic(t)]
        if atomic:
            raise ConfigError(f"programs: {atomic[0]} is atomic; evaluate non-atomic programs")
    guide = make_guide(search_model, search)
    real, controller = None, None
    if world == "real":
        policy = None if controller_policy is None else policy_controller(controller_policy)
        real = FetchExecutor(controller=policy, retry_noise=search.retry_noise)
        controller = "scripted" if controller_policy is None else str(controller_policy)
    results: dict[str, dict[str, float | int]] = {}
    example, top = None, max(table.programs[t].level for t in tasks)
    for task in tasks:
        wins = 0
        for k in range(episodes):
            rng = np.random.default_rng([seed, task, k])
            if real is not None:
                real.reset(int(rng.integers(2**31)))
                executor = real
            else:
                executor = ModelExecutor(search_model, start_state(search_model, task, rng))
            ctx = SearchContext(search_model, snapshot, search, rng, guide)
            record = run_program(mode, task, executor, ctx)
            wins += record.success
            if example is None and table.programs[task].level == top:
                example = record
            if progress is not None:
                progress(table.names[task], k + 1)
        results[table.names[task]] = {"success_rate": float(wins / episodes), "episodes": int(episodes)}
    families: dict[str, list[float]] = {}
    for task in tasks:
        families.setdefault(table.programs[task].family, []).append(float(results[table.names[task]]["success_rate"]))
    evaluation = ProgramEvaluation(mode, model, world, results, {f: float(np.mean(v)) for f, v in families.items()},
                                   example, controller)
    if trace_png is not None and example is not None:
        atomic_write(Path(trace_png), call_tree_png(example))
    if json_path is not None:
        atomic_write(Path(json_path), (json.dumps(evaluation.to_json(), indent=2, sort_keys=True) + "\n").encode())
    return evaluation
