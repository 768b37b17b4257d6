"""The explicit registry of learning methods and of the domains they run on.

``METHODS`` maps CLI names to a ``MethodSpec``; ``build_learner`` turns a resolved
``TrainConfig`` plus a domain binding into a learner. ``bind_domain`` reads
``asg.envs.domains.get_domain`` (asg's ``DOMAINS`` and the plug-ins of ``asg.envs.plugins``:
env factory, labeler, symbolic model); ``bind_spec`` binds a domain object directly.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from asg.envs.domains import UnknownDomainError, domain_names, get_domain
from asg.envs.plugins import PluginDomain
from asg.envs.user_code import GuardedEnv
from asg.learning.asgrl.baselines import FlatLearner
from asg.learning.asgrl.config import DOMAIN_DIVERSITY, FlatConfig, HierarchicalConfig, TrainConfig, check_subgoals
from asg.learning.asgrl.episode import Learner
from asg.learning.asgrl.hierarchical import HierarchicalLearner
from asg.learning.asgrl.subgoals import Labeler, SubgoalSet, landmark_subgoals, plan_subgoals
from asg.learning.errors import DomainError
from asg.planning.task import Task


@dataclass(frozen=True)
class MethodSpec:
    """A learning method: CLI name, label for tables and plots, one-line description."""

    name: str
    label: str
    description: str


METHODS: dict[str, MethodSpec] = {spec.name: spec for spec in (
    MethodSpec("asgrl", "ASGRL", "k diverse skills per landmark + meta-controller (Sec. 4.2)"),
    MethodSpec("asgrl-curriculum", "ASGRL-Curriculum", "ASGRL growing k per landmark (Eq. 5-6)"),
    MethodSpec("plan-hrl", "Plan-HRL", "one skill per operator of a plan of the model"),
    MethodSpec("landmark-hrl", "Landmark-HRL", "one skill per landmark, no diversity"),
    MethodSpec("landmark-shaping", "Landmark-Shaping", "flat Q, potential = landmarks reached"),
    MethodSpec("goal-q", "Goal-Q-Learning", "flat Q on the sparse goal reward"),
)}


@dataclass(frozen=True)
class DomainBinding:
    """What a learner needs from a domain: an env factory, a labeler and the grounded model."""

    name: str
    make_env: Callable[..., gym.Env]  # make_env(max_steps=N) -> env
    labeler: Labeler
    task: Task
    model_path: str
    episode_limit: int | None = None
    """Where a plug-in world's own episodes end (``PluginDomain.episode_limit``); every learner keeps
    it. None (asg's own worlds): the learner's step budget sets the episode (``env_max_steps``)."""
    skill_max_steps: int = 700
    """The domain's step budget of one skill (``DomainSpec.skill_max_steps``)."""
    observation: str = "state"
    """What a plug-in world's learners read (``PluginDomain.observation``); ``state`` for asg's own."""


def asgrl_domains() -> list[str]:
    """Names of the ASGRL domains (``asg.envs.domains.DOMAINS`` and the plug-ins), sorted."""
    return domain_names()


def bind_domain(name: str, model: str | Path | None = None) -> DomainBinding:
    """Bind an ASGRL domain (built-in or plug-in) and its (or the user's) symbolic model; raises ``AsgError``s."""
    try:
        spec = get_domain(name)
    except UnknownDomainError:
        raise DomainError(f"unknown domain {name!r}; choose from {', '.join(asgrl_domains())}") from None
    return bind_spec(spec, model)


def bind_spec(spec: Any, model: str | Path | None = None) -> DomainBinding:
    """Bind a domain object (a ``DomainSpec``, or a ``PluginDomain`` that need not be registered)."""
    if model is not None and not Path(model).is_file():
        raise DomainError(f"{model}: no such model file")
    task = spec.load_task(model)
    limit = spec.episode_limit() if isinstance(spec, PluginDomain) else None
    return DomainBinding(spec.name, spec.make_env, spec.labeler, task, str(model or spec.model_path()), limit,
                         spec.skill_max_steps, getattr(spec, "observation", "state"))


def uses_landmarks(cfg: TrainConfig) -> bool:
    """Whether the method's subgoals are the model's landmarks (all but Plan-HRL)."""
    return not (isinstance(cfg.learner, HierarchicalConfig) and cfg.learner.subgoals == "plan")


def make_subgoals(cfg: TrainConfig, task: Task, graph: Any = None) -> SubgoalSet:
    """The learner's subgoals: landmarks (ASGRL, Landmark-HRL, flat shaping; ``graph``: the task's
    landmark graph if already computed) or a plan (Plan-HRL)."""
    again = isinstance(cfg.learner, HierarchicalConfig) and cfg.learner.needed_again
    subgoals = landmark_subgoals(task, graph=graph, again=again) if uses_landmarks(cfg) else plan_subgoals(task)
    if cfg.model is not None:  # a user's model: the domain's per-landmark k applies where it shares the landmark
        cfg = _shared_domain_k(cfg, set(subgoals.names()))
    check_subgoals(cfg, subgoals.names())  # a k_overrides entry must name one of them
    return subgoals


def _shared_domain_k(cfg: TrainConfig, names: set[str]) -> TrainConfig:
    """``cfg`` without the domain's default ``k_overrides`` entries (``DOMAIN_DIVERSITY``, tuned on the
    paper's model) that name no subgoal of the user's model; entries the user set stay checked."""
    if not isinstance(cfg.learner, HierarchicalConfig):
        return cfg
    defaults = set(DOMAIN_DIVERSITY.get(cfg.domain, {}).get("k_overrides", ()))
    kept = tuple(e for e in cfg.learner.diversity.k_overrides if e[0] in names or tuple(e) not in defaults)
    diversity = dataclasses.replace(cfg.learner.diversity, k_overrides=kept)
    return dataclasses.replace(cfg, learner=dataclasses.replace(cfg.learner, diversity=diversity))


def env_max_steps(cfg: TrainConfig, subgoals: SubgoalSet, episode_limit: int | None = None) -> int:
    """The env's episode cap: the world's own ``episode_limit`` where it has one (a plug-in env),
    else room for every skill's full budget (ASGRL) or the flat learner's episode length."""
    if episode_limit is not None:
        return episode_limit
    learner = cfg.learner
    if isinstance(learner, HierarchicalConfig):
        return len(subgoals) * learner.skill_max_steps + 1
    return learner.episode_max_steps


def learner_env(cfg: TrainConfig, binding: DomainBinding, max_steps: int) -> GuardedEnv:
    """The env the learner of ``cfg`` acts in: the bound domain's, capped at ``max_steps``, with the
    last ``deep.frame_stack`` observations stacked where the deep skills read more than one, and
    its own failures named (``GuardedEnv``). Training, evaluation and every tool build it here."""
    env = binding.make_env(max_steps=max_steps)
    learner = cfg.learner
    if isinstance(learner, HierarchicalConfig) and learner.skills == "deep" and learner.deep.frame_stack > 1:
        env = gym.wrappers.FrameStackObservation(env, learner.deep.frame_stack)
    return GuardedEnv(env)


def build_learner(cfg: TrainConfig, subgoals: SubgoalSet, n_actions: int) -> Learner:
    """A fresh learner for ``cfg`` (seeded by ``cfg.seed``)."""
    if cfg.method not in METHODS:
        raise DomainError(f"unknown method {cfg.method!r}; choose from {', '.join(METHODS)}")
    learner: Any
    if isinstance(cfg.learner, HierarchicalConfig):
        learner = HierarchicalLearner(cfg.learner, subgoals, n_actions, cfg.seed)
    elif isinstance(cfg.learner, FlatConfig):
        learner = FlatLearner(cfg.learner, subgoals, n_actions, cfg.seed)
    else:  # pragma: no cover - config_from_dict only builds the two kinds
        raise DomainError(f"unknown learner config {type(cfg.learner).__name__}")
    return learner


FAMILIES = {"fetch-programs": "asg.learning.fetch_programs"}
"""Domains trained by another family than ASGRL's learners: name -> the library module that runs them."""


def domain_family(name: str) -> str:
    """``"asgrl"`` for an ASGRL domain, the name itself for a domain of ``FAMILIES``; ``DomainError``
    listing every known domain otherwise."""
    if name in FAMILIES:
        return name
    known = asgrl_domains()
    if name in known:
        return "asgrl"
    raise DomainError(f"unknown domain {name!r}; choose from {', '.join(sorted([*known, *FAMILIES]))}")
