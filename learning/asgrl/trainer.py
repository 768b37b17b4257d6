"""The training loop shared by every method: budget, evaluation points, early stop, checkpoints.

``train`` runs training episodes until the env-step budget is spent, evaluates the frozen greedy
policy every ``eval_interval`` env steps on a separate env with fixed seeds, stops early after
``early_stop_evals`` evaluation points in a row at success 1.0, checkpoints every
``checkpoint_interval`` steps and whenever ``should_stop()`` says so, and ends with a final
evaluation under both protocols: greedy, and the paper's ε-greedy (``final_eval_epsilon`` over
``final_eval_episodes``, Sec. 5), both in ``result.json``. ``curve_eval="epsilon"`` makes the curve
points ε-greedy too. Same config and seed give identical metrics (wall time aside).

With a run folder the loop holds the folder's writer lock from start to end, and Ctrl-C or
SIGTERM stop it at the next episode boundary (``run_dir.StopOnSignal``): it checkpoints there and
returns status ``interrupted``; resuming then repeats the uninterrupted run exactly. A
``KeyboardInterrupt`` between episodes (a second signal) checkpoints too, then propagates; one in
the middle of an episode keeps the last checkpoint, which is consistent. When the world's own code
raises (its env's ``reset`` or ``step``, a labeler predicate) the run is checkpointed at its last
consistent point and ``train`` raises a one-line ``RunFailedError`` naming the call, the episode
and the step (``asgrl.failures``). Deep skills with ``deep.n_envs`` > 1 train in N envs at once
(``asgrl.lockstep``), whose loop gets to a consistent point by cutting the episodes in flight short.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from asg import pddl_models
from asg.envs import plugins
from asg.learning.asgrl import lockstep, model_hints
from asg.learning.asgrl.config import PRESETS, HierarchicalConfig, TrainConfig, make_config, merge_overrides
from asg.learning.asgrl.episode import Learner
from asg.learning.asgrl.evaluation import (
    REACHED,
    epsilon_eval_seeds,
    eval_seeds,
    evaluate,
    protocol,
    reached_rates,
    stall_line,
)
from asg.learning.asgrl.failures import FailureSite
from asg.learning.asgrl.subgoals import SubgoalSet
from asg.learning.configio import FieldError, override_file
from asg.learning.errors import CheckpointError, DomainError
from asg.learning.registry import (
    DomainBinding,
    bind_domain,
    build_learner,
    env_max_steps,
    learner_env,
    make_subgoals,
    uses_landmarks,
)
from asg.learning.results import Status
from asg.learning.run_dir import CHECKPOINT, RunDir, StageProgress, StopOnSignal
from asg.planning import compute_landmarks


@dataclass
class TrainerState:
    """The loop's own state, checkpointed with the learner."""

    rng: np.random.Generator  # draws the reset seed of every training episode
    rows: list[dict[str, Any]] = field(default_factory=list)
    next_eval: int = 0
    streak: int = 0
    steps_to_success: int | None = None
    wall_seconds: float = 0.0
    last_checkpoint: int = 0
    recent: list[bool] = field(default_factory=list)  # successes of the last 20 training episodes
    status: str = Status.RUNNING.value  # running | finished | solved | interrupted (plain: checkpointed)
    last_episode: dict[str, Any] | None = None  # first greedy episode of the latest evaluation
    evidence: model_hints.Evidence = field(default_factory=dict)  # skill runs per landmark state (model hints)

    def to_tree(self) -> dict[str, Any]:
        """The state as plain data for ``asg.learning.checkpoint``."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_tree(cls, data: dict[str, Any], where: str) -> TrainerState:
        """Rebuild from :meth:`to_tree` output; ``CheckpointError`` naming ``where`` when malformed."""
        names = {f.name for f in fields(cls)}
        data = {"evidence": {}, **data}  # absent in checkpoints before model hints
        if set(data) != names or not isinstance(data["rng"], np.random.Generator):
            raise CheckpointError(f"{where}: corrupt checkpoint (trainer state fields)")
        return cls(**data)


@dataclass(frozen=True)
class TrainResult:
    """The outcome of a run; ``to_json`` is ``result.json``."""

    domain: str
    method: str
    seed: int
    success_rate: float
    eval_episodes: int
    env_steps: int
    wall_seconds: float
    episodes: int
    steps_to_success: int | None
    status: Status
    run_dir: str | None = None
    final_episode: dict[str, Any] | None = None  # what the final greedy policy did (diagnosis)
    # The final evaluations of both protocols (greedy over eval_episodes; the paper's ε-greedy
    # over final_eval_episodes, Sec. 5); success_rate is the last curve point's (greedy by default).
    greedy_success_rate: float | None = None
    epsilon_success_rate: float | None = None
    epsilon: float | None = None
    epsilon_episodes: int | None = None
    curve_eval: str = "greedy"
    # (landmark, episodes of the last curve point reaching it), in subgoal order (where a run stalls)
    reached: tuple[tuple[str, int], ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``result.json`` content."""
        return {"domain": self.domain, "method": self.method, "seed": self.seed,
                "success_rate": self.success_rate, "eval_episodes": self.eval_episodes,
                "env_steps": self.env_steps, "wall_seconds": round(self.wall_seconds, 3),
                "episodes": self.episodes, "steps_to_success": self.steps_to_success,
                "status": str(self.status), "run_dir": self.run_dir, "final_episode": self.final_episode,
                "greedy_success_rate": self.greedy_success_rate,
                "epsilon_success_rate": self.epsilon_success_rate, "epsilon": self.epsilon,
                "epsilon_episodes": self.epsilon_episodes, "curve_eval": self.curve_eval,
                "reached": None if self.reached is None else [list(pair) for pair in self.reached]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TrainResult:
        """Rebuild from ``to_json`` output (keys a older result.json lacks take the defaults)."""
        names = {f.name for f in fields(cls)}
        kept = {k: v for k, v in data.items() if k in names}
        if kept.get("reached") is not None:
            kept["reached"] = tuple((str(name), int(n)) for name, n in kept["reached"])
        return cls(**{**kept, "status": Status.parse(kept["status"])})

    def stop_reason(self) -> str:
        """Why training ended where it did (the progress bar's last word)."""
        how = protocol(self.curve_eval, self.epsilon or 0.0)
        if self.status == Status.SOLVED:
            return f"solved ({how} success {self.success_rate:.2f}), stopped early"
        if self.status == Status.INTERRUPTED:
            return "interrupted, checkpoint saved"
        return f"step budget reached ({how} success {self.success_rate:.2f})"

    def lines(self) -> list[str]:
        """The outcome for a terminal."""
        first = (f", first success at {self.steps_to_success} steps" if self.steps_to_success is not None
                 else ", never solved")
        how = protocol(self.curve_eval, self.epsilon or 0.0)
        out = [f"{self.domain} / {self.method} / seed {self.seed}: success {self.success_rate:.2f} over "
               f"{self.eval_episodes} {how} episodes, {self.env_steps} env steps, {self.wall_seconds:.1f} s"
               f"{first} [{self.status}]"]
        stall = stall_line(dict(self.reached or ()), self.eval_episodes, self.success_rate, f"{how} evaluation")
        return out + ([stall] if stall else []) + ([f"run directory: {self.run_dir}"] if self.run_dir else [])


def _eval_row(learner: Learner, env: Any, binding: DomainBinding, cfg: TrainConfig, state: TrainerState,
              wall: float) -> dict[str, Any]:
    epsilon = cfg.final_eval_epsilon if cfg.curve_eval == "epsilon" else 0.0
    result = evaluate(learner, env, binding.labeler, eval_seeds(cfg.seed, cfg.eval_episodes), epsilon)
    state.last_episode = result.episodes[0].to_json()
    recent = state.recent[-20:]
    return {"env_steps": learner.env_steps, "episodes": learner.episodes,
            "success_rate": result.success_rate, "mean_reached": round(result.mean_reached, 4),
            "eval_steps": round(result.mean_steps, 2),
            "train_success": round(sum(recent) / len(recent), 4) if recent else 0.0,
            "wall_seconds": round(wall, 3), **reached_rates(result, learner.subgoals)}


def stage_label(cfg: TrainConfig) -> str:
    """The stage name a run's ``progress`` calls carry: ``mario/asgrl seed 0``."""
    return f"{cfg.domain}/{cfg.method} seed {cfg.seed}"


def train(cfg: TrainConfig, binding: DomainBinding | None = None, *, run_dir: RunDir | None = None,
          resume: bool = False, progress: StageProgress | None = None,
          should_stop: Callable[[], bool] | None = None, subgoals: SubgoalSet | None = None) -> TrainResult:
    """Train (or resume from ``run_dir``'s checkpoint) and return the final result. ``subgoals``: the
    learner's subgoals when the caller has them (``TrainRun``); else the run folder's or the model's.
    ``progress(stage_label(cfg), env_steps, total_steps, note)`` is called after every episode."""
    site = FailureSite()  # a failure of the world's own code is checkpointed where consistent (asgrl.failures)
    if run_dir is None:
        if resume:
            raise ValueError("resume needs a run directory")
        with site.saving():
            return _train(cfg, binding, None, False, progress, should_stop or (lambda: False), subgoals, site)
    run_dir.lock()
    try:
        with StopOnSignal() as signalled, site.saving():
            stop = signalled if should_stop is None else (lambda: signalled() or should_stop())
            return _train(cfg, binding, run_dir, resume, progress, stop, subgoals, site)
    finally:
        run_dir.unlock()


def _train(cfg: TrainConfig, binding: DomainBinding | None, run_dir: RunDir | None, resume: bool,
           progress: StageProgress | None, should_stop: Callable[[], bool], subgoals: SubgoalSet | None,
           site: FailureSite) -> TrainResult:
    binding = binding or bind_domain(cfg.domain, cfg.model)
    if subgoals is None:
        resumed = resume and run_dir is not None
        subgoals = run_dir.subgoals(cfg, binding) if resumed else make_subgoals(cfg, binding.task)
    max_steps = env_max_steps(cfg, subgoals, binding.episode_limit)
    env = learner_env(cfg, binding, max_steps)  # its failures name the call and the step
    eval_env = learner_env(cfg, binding, max_steps)
    learner: Learner
    if resume:
        assert run_dir is not None
        payload = run_dir.load_checkpoint(cfg, binding, subgoals)
        learner = payload["learner"]
        where = str(run_dir.path / CHECKPOINT)
        if learner.n_actions != int(env.action_space.n):  # type: ignore[attr-defined]
            raise CheckpointError(f"{where}: trained with {learner.n_actions} actions, "  # type: ignore[attr-defined]
                                  f"the {cfg.domain} env has {env.action_space.n}")
        state = TrainerState.from_tree(payload["state"], where)
        if state.status != Status.SOLVED:
            state.status = Status.RUNNING  # a larger budget continues a finished run
    else:
        learner = build_learner(cfg, subgoals, int(env.action_space.n))
        state = TrainerState(rng=np.random.default_rng(np.random.SeedSequence([cfg.seed, 0x7A1])))
    start = time.perf_counter() - state.wall_seconds

    def wall() -> float:
        return time.perf_counter() - start

    def record_eval() -> float:
        row = _eval_row(learner, eval_env, binding, cfg, state, wall())
        state.rows.append(row)
        rate = float(row["success_rate"])
        state.streak = state.streak + 1 if rate >= 1.0 else 0
        if rate >= 1.0 and state.steps_to_success is None:
            state.steps_to_success = learner.env_steps
        state.next_eval = (learner.env_steps // cfg.eval_interval + 1) * cfg.eval_interval
        if run_dir is not None:
            run_dir.write_metrics(state.rows)
        return rate

    def checkpoint() -> None:
        state.wall_seconds = wall()
        state.last_checkpoint = learner.env_steps
        if run_dir is not None:
            run_dir.save_checkpoint(cfg, learner, state.to_tree())

    site.bind(learner, state, env, eval_env, checkpoint if run_dir is not None else None)
    if not state.rows or learner.env_steps >= state.next_eval:  # (due: a point a failure stopped, failures.py)
        due = bool(state.rows)
        record_eval()
        if due and cfg.early_stop_evals and state.streak >= cfg.early_stop_evals:
            state.status = Status.SOLVED.value
    between_episodes = True  # the learner and the loop state are consistent (a safe checkpoint)
    if lockstep.n_envs(cfg) > 1:  # deep skills in deep.n_envs envs at once; it ends with the status set
        lockstep.train(lockstep.Loop(cfg, learner, binding.labeler, env,
                                     lambda: learner_env(cfg, binding, max_steps), state, site,
                                     record_eval, checkpoint, progress, should_stop, stage_label(cfg),
                                     lambda stats: model_hints.record(state.evidence, stats)))
    try:
        while state.status == Status.RUNNING:
            if learner.env_steps >= cfg.total_steps:
                state.status = Status.FINISHED.value
                break
            if should_stop():
                state.status = Status.INTERRUPTED.value
                break
            site.before_episode()
            seed = int(state.rng.integers(2**31 - 1))
            between_episodes = False
            stats = learner.train_episode(env, binding.labeler, seed, cfg.total_steps - learner.env_steps)
            state.recent = (state.recent + [stats.success])[-20:]
            model_hints.record(state.evidence, stats)
            between_episodes = True
            if progress is not None:
                progress(stage_label(cfg), learner.env_steps, cfg.total_steps,
                         f"success {state.rows[-1]['success_rate']:.2f}" if state.rows else "")
            if learner.env_steps >= state.next_eval:
                between_episodes = False
                record_eval()
                between_episodes = True
                if cfg.early_stop_evals and state.streak >= cfg.early_stop_evals:
                    state.status = Status.SOLVED.value
            if learner.env_steps - state.last_checkpoint >= cfg.checkpoint_interval:
                checkpoint()
    except KeyboardInterrupt:
        if between_episodes:
            state.status = Status.INTERRUPTED.value
            checkpoint()
        raise
    if state.status != Status.INTERRUPTED and state.rows[-1]["env_steps"] != learner.env_steps:
        record_eval()  # (not when interrupted: an extra point would change what the resumed run does)
    checkpoint()
    greedy = (float(state.rows[-1]["success_rate"]) if cfg.curve_eval == "greedy" else
              evaluate(learner, eval_env, binding.labeler, eval_seeds(cfg.seed, cfg.eval_episodes)).success_rate)
    final_eps = evaluate(learner, eval_env, binding.labeler,
                         epsilon_eval_seeds(cfg.seed, cfg.final_eval_episodes), cfg.final_eval_epsilon)
    # the wall time to the millisecond, as result.json keeps it: a result read back from its file is
    # then the one returned here, figure for figure (benchmarks/repair_compare.py resumes from files)
    result = TrainResult(cfg.domain, cfg.method, cfg.seed, float(state.rows[-1]["success_rate"]),
                         cfg.eval_episodes, learner.env_steps, round(state.wall_seconds, 3), learner.episodes,
                         state.steps_to_success, Status.parse(state.status),
                         str(run_dir.path) if run_dir is not None else None, state.last_episode,
                         greedy, final_eps.success_rate, cfg.final_eval_epsilon, cfg.final_eval_episodes,
                         cfg.curve_eval, _reached(state.rows[-1], cfg.eval_episodes))
    if run_dir is not None:
        run_dir.write_result(result.to_json())
        run_dir.plot_curve(state.rows, f"{cfg.domain} / {cfg.method} / seed {cfg.seed}",
                           protocol(cfg.curve_eval, cfg.final_eval_epsilon))
        if isinstance(cfg.learner, HierarchicalConfig):
            report = model_hints.hints_report(state.evidence, binding.task, subgoals, learner.episodes,
                                              model_hints.hint_config(cfg.learner.dead_end_after))
            run_dir.write_model_hints(report, {"domain": cfg.domain, "method": cfg.method, "seed": cfg.seed,
                                               "model": binding.model_path, "env_steps": learner.env_steps})
    return result


def _reached(row: dict[str, Any], episodes: int) -> tuple[tuple[str, int], ...]:
    """A curve point's ``reached_<landmark>`` shares as episode counts."""
    return tuple((k[len(REACHED):], round(float(v) * episodes)) for k, v in row.items() if k.startswith(REACHED))


PLUGIN = "plugin"  # config.json: the command-line parts of a plug-in world (env, labeler, model)


def plugin_domain(env: str, labeler: str, model: str, folder: str | None = None,
                  observation: str = "state") -> str:
    """Build the plug-in world of ``env`` / ``labeler`` / ``model`` (``envs.plugins.domain_from_parts``:
    imports from ``folder`` (default: the current one), the labeler's vocabulary and a reset checked),
    register it, and return its domain name. ``observation``: what its learners read
    (``plugins.OBSERVATIONS``; ``learner_observation`` gives the one a learner needs)."""
    spec = plugins.domain_from_parts(env, labeler, model, folder=folder, observation=observation)
    plugins.add_domain(spec, replace=True)
    return spec.name


def own_world(env: str, labeler: str, model: str | Path, *, observation: str | None = None,
              skills: str | None = None, folder: str | Path | None = None) -> tuple[str, dict[str, str]]:
    """Register the plug-in world of ``env`` / ``labeler`` / ``model``, imported from ``folder`` (default:
    the current one; a relative ``model`` is read there too) (``plugin_domain``), and return its
    domain name and the parts a run folder keeps so that resume and eval rebuild it (imported from
    that same folder). ``observation`` None: the one the ``skills`` learner needs (``learner_observation``)."""
    where = Path.cwd() if folder is None else Path(folder).resolve()
    parts = {"env": env, "labeler": labeler, "model": str((where / model).resolve()), "folder": str(where),
             "observation": observation or learner_observation(env, skills, str(where))}
    return plugin_domain(**parts), parts


def learner_observation(env: str, skills: str | None, folder: str | None = None) -> str:
    """The observation a plug-in world gives a learner when the user names none: the Markov
    ``state`` for Q tables; for deep skills Minigrid's egocentric ``view`` (one policy for every
    layout), or the env's own observation (``env``) for any other env."""
    if skills != "deep":
        return "state"
    return "view" if plugins.is_minigrid_env(env, folder) else "env"


# Deep skills on MiniGrid's egocentric view (ours, measured on DoorKey-8x8, seed 0: 0.9 at 175k
# steps in 6 min with these; with App. G's ε decay per success and a gradient step every 2 env
# steps, 0.4 at 150k in 17 min; benchmarks/results/own_worlds/).
VIEW_DEEP = {"encoding": "categorical", "categories": list(plugins.MINIGRID_CATEGORIES),
             "epsilon_anneal_steps": 50_000, "train_every": 4}


def deep_input(binding: DomainBinding) -> dict[str, Any]:
    """``DeepQConfig`` fields for what the bound domain's observations are: category codes
    (``VIEW_DEEP``) for a plug-in world read through Minigrid's egocentric view, nothing (pooled
    pixels) otherwise."""
    return dict(VIEW_DEEP) if binding.observation == "view" else {}


def plugin_config(cfg: TrainConfig, binding: DomainBinding) -> TrainConfig:
    """``cfg`` with the bound plug-in domain's own step budgets (skill length, or the world's episode length)."""
    if cfg.learner.kind == "hierarchical":
        return merge_overrides(cfg, {"learner": {"skill_max_steps": binding.skill_max_steps}})
    return merge_overrides(cfg, {"learner": {"episode_max_steps": binding.episode_limit}})


def run_config(binding: DomainBinding, method: str = "asgrl", preset: str = "asg", *, seed: int = 0,
               model: str | None = None, plugin: bool = False, config_file: str | Path | None = None,
               k: int | None = None, skills: str | None = None, **fields: Any) -> TrainConfig:
    """The config of a new run of the bound domain (``registry.bind_domain``: resolved once, by the
    caller, who trains with the same binding), built in this order: ``make_config``'s defaults of
    ``preset``, a plug-in world's step budgets (``plugin``), the ``skills`` learner ("tabular" |
    "deep", with the deep skills' own defaults for the domain's observations, ``deep_input``), the
    JSON file ``config_file`` (``configio.override_file``), then the top-level ``TrainConfig``
    fields in ``fields`` (``total_steps``, ``eval_episodes``, ``final_eval_epsilon``,
    ``curve_eval``; None keeps the value) and ``k`` diverse skills for every landmark.
    ``FieldError`` names the argument that the method or the preset refuses."""
    if preset not in PRESETS:
        raise FieldError("preset", f"unknown preset {preset!r} for an ASGRL domain; choose from {', '.join(PRESETS)}")
    cfg = make_config(binding.name, method, preset, seed=seed, model=model)
    cfg = plugin_config(cfg, binding) if plugin else cfg
    if skills is not None:
        if cfg.learner.kind != "hierarchical":
            raise FieldError("skills", f"method {method} has no skills (a flat learner)")
        learner: dict[str, Any] = {"skills": skills}
        if skills == "deep":  # images are no table keys: k-means end states (App. D's pixel distance, as
            # measured in benchmarks/results/pixel_mario/), the history meta-state
            learner.update(state_key="exact", dead_end_after=0,
                           diversity={"abstraction": "kmeans", "cluster_features": "pixels"},
                           meta={"state": "history"}, deep=deep_input(binding))
        cfg = merge_overrides(cfg, {"learner": learner})
    cfg = override_file(cfg, config_file)
    overrides: dict[str, Any] = {name: value for name, value in fields.items() if value is not None}
    if k is not None:
        if cfg.learner.kind != "hierarchical" or cfg.learner.diversity.alpha == 0.0:
            raise FieldError("k", f"method {method} has no diverse skills")
        overrides["learner"] = {"diversity": {"k": k, "k_overrides": []}}
    return merge_overrides(cfg, overrides) if overrides else cfg


def _restore_plugin(run_dir: RunDir) -> dict[str, Any] | None:
    """A run of a plug-in world registers that world again from the parts saved in ``config.json``;
    returns those parts (None for a run of a built-in domain)."""
    parts = run_dir.read_config().get(PLUGIN)
    if not isinstance(parts, dict):
        return None
    plugin_domain(str(parts["env"]), str(parts["labeler"]), str(parts["model"]), parts.get("folder"),
                  str(parts.get("observation", "state")))
    return parts


@dataclass
class TrainRun:
    """A run ready to train: its resolved config, domain binding, subgoals and run folder.

    :meth:`create` reads and grounds the model, computes the landmark graph once, builds and
    checks the subgoals, and only then creates the run folder (``config.json``, ``subgoals.json``,
    ``landmarks.json``), so bad input fails before anything is written. :meth:`resume` reads a
    run folder back, subgoals included.
    """

    cfg: TrainConfig
    binding: DomainBinding
    subgoals: SubgoalSet
    run_dir: RunDir
    resumed: bool = False

    @classmethod
    def create(cls, path: str | Path, cfg: TrainConfig, binding: DomainBinding | None = None,
               plugin: dict[str, Any] | None = None) -> TrainRun:
        """A new run in ``path``; ``plugin``: the command-line parts of a plug-in world, saved so that
        ``resume`` and ``evaluate_run`` can rebuild it."""
        binding = binding or bind_domain(cfg.domain, cfg.model)
        graph = compute_landmarks(binding.task) if uses_landmarks(cfg) else None
        subgoals = make_subgoals(cfg, binding.task, graph)
        if plugin is not None:
            plugin = {**plugin, "episode_limit": binding.episode_limit}
        run_dir = RunDir.create(path, cfg, None if plugin is None else {PLUGIN: plugin})
        try:
            run_dir.write_subgoals(subgoals, None if graph is None else graph.to_json())
        finally:
            run_dir.unlock()  # ``train`` takes the lock again for the whole run
        return cls(cfg, binding, subgoals, run_dir)

    @classmethod
    def resume(cls, path: str | Path, steps: int | None = None) -> TrainRun:
        """The run in ``path``, its budget raised to ``steps`` when given."""
        run_dir = RunDir.open(path)
        parts = _restore_plugin(run_dir)
        cfg = run_dir.config()
        if steps is not None:
            cfg = merge_overrides(cfg, {"total_steps": steps})
        binding = bind_domain(cfg.domain, cfg.model)
        if parts is not None and parts.get("episode_limit") != binding.episode_limit:
            ended = parts.get("episode_limit") or "the skill budget"
            raise DomainError(f"{run_dir.path}: its episodes ended at {ended} steps, the {cfg.domain} "
                              f"world's own end at {binding.episode_limit}; start a new run")
        return cls(cfg, binding, run_dir.subgoals(cfg, binding), run_dir, True)

    @property
    def model_name(self) -> str:
        """What to give ``asg landmarks`` for this run's model: the user's file, or the bundled name."""
        bundled = Path(self.binding.model_path).parent == Path(pddl_models.__file__).parent
        if self.cfg.model or not bundled:
            return self.cfg.model or self.binding.model_path  # the user's file, as given
        return Path(self.binding.model_path).stem.replace("_", "-")  # a bundled model, by name


@dataclass(frozen=True)
class RunEvaluation:
    """A saved run's frozen policy evaluated again, greedy and with the paper's ε (Sec. 5: "a low
    exploration probability"; ``final_eval_epsilon``) on as many episodes; ``to_json`` is
    ``asg eval RUN_DIR --json``."""

    run_dir: str
    cfg: TrainConfig
    env_steps: int
    success_rate: float
    episodes: tuple[Any, ...]
    epsilon_success_rate: float = 0.0
    status: Status = Status.EVALUATED

    def to_json(self) -> dict[str, Any]:
        return {"run_dir": self.run_dir, "domain": self.cfg.domain, "method": self.cfg.method, "seed": self.cfg.seed,
                "success_rate": self.success_rate, "eval_episodes": len(self.episodes), "env_steps": self.env_steps,
                "epsilon": self.cfg.final_eval_epsilon, "epsilon_success_rate": self.epsilon_success_rate,
                "retry_epsilon": getattr(self.cfg.learner, "retry_epsilon", 0.0),
                "retry_other_skill": getattr(self.cfg.learner, "retry_other_skill", False),
                "episodes": [e.to_json() for e in self.episodes]}

    def lines(self) -> list[str]:
        first = self.episodes[0]
        return [f"{self.cfg.domain} / {self.cfg.method} / seed {self.cfg.seed} after {self.env_steps} env steps: "
                f"greedy success {self.success_rate:.2f}, ε = {self.cfg.final_eval_epsilon:g} success "
                f"{self.epsilon_success_rate:.2f}, over {len(self.episodes)} episodes each",
                f"  greedy episode 1: {first.steps} steps, reached {' '.join(first.reached) or '-'}"]


@dataclass
class SavedRun:
    """A saved run's frozen learner, rebuilt from its folder, and the env it acts in."""

    path: Path
    cfg: TrainConfig
    binding: DomainBinding
    learner: Learner
    env: Any


def load_run(path: str | Path, *, domain: str | None = None) -> SavedRun:
    """The run in ``path``: its config, domain, learner (rebuilt from the run's own ``subgoals.json``
    and checkpoint) and env. ``domain``: refuse a run of another domain (``DomainError``)."""
    run = RunDir.open(path)
    _restore_plugin(run)
    cfg = run.config()
    if domain is not None and cfg.domain != domain:
        raise DomainError(f"domain {domain}: {path} holds a run of {cfg.domain}")
    binding = bind_domain(cfg.domain, cfg.model)
    subgoals = run.subgoals(cfg, binding)
    learner = run.load_checkpoint(cfg, binding, subgoals)["learner"]
    env = learner_env(cfg, binding, env_max_steps(cfg, subgoals, binding.episode_limit))
    return SavedRun(run.path, cfg, binding, learner, env)


def evaluate_run(path: str | Path, *, episodes: int | None = None, domain: str | None = None,
                 retry_epsilon: float | None = None, retry_other_skill: bool | None = None,
                 layout_seed: int | None = None) -> RunEvaluation:
    """Evaluate the greedy policy of the run in ``path`` on the eval seeds (``episodes``: default the
    run's), and ε-greedy on the ε seeds (``load_run``); ``retry_epsilon`` and ``retry_other_skill``: the
    frozen policy's ``learner.retry_epsilon`` and ``learner.retry_other_skill`` instead of the run's
    (``ConfigError`` where its config refuses them); ``layout_seed``: the layouts of that seed instead of
    the run's own (a choice made off them)."""
    run = load_run(path, domain=domain)
    cfg, learner, labeler = run.cfg, run.learner, run.binding.labeler
    frozen = {k: v for k, v in (("retry_epsilon", retry_epsilon), ("retry_other_skill", retry_other_skill))
              if v is not None}
    if frozen:
        cfg = merge_overrides(cfg, {"learner": frozen})
        learner.cfg = cfg.learner
    n, layouts = episodes or cfg.eval_episodes, cfg.seed if layout_seed is None else layout_seed
    result = evaluate(learner, run.env, labeler, eval_seeds(layouts, n))
    noisy = evaluate(learner, run.env, labeler, epsilon_eval_seeds(layouts, n), cfg.final_eval_epsilon)
    return RunEvaluation(str(run.path), cfg, learner.env_steps, result.success_rate, tuple(result.episodes),
                         noisy.success_rate)


def run_hints(path: str | Path, *, domain: str | None = None) -> model_hints.RunHints:
    """The model hints the run in ``path`` left (``model_hints.json``); ``domain``: refuse a run of
    another domain (``DomainError``); ``CheckpointError`` when the folder has none."""
    run = RunDir.open(path)
    saved = run.read_config().get("config", {}).get("domain")
    if domain is not None and saved != domain:
        raise DomainError(f"domain {domain}: {path} holds a run of {saved}")
    return run.read_model_hints()
