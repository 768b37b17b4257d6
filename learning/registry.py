"""The explicit registry of learning methods and of the domains they run on.

``METHODS`` maps CLI names to a ``MethodSpec``; ``build_learner`` turns a resolved
``TrainConfig`` plus a domain binding into a learner. ``bind_domain`` reads
``asg.envs.domains.DOMAINS`` (env factory, labeler, symbolic model).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym

from asg.learning.asgrl.hierarchical import HierarchicalLearner
from asg.learning.asgrl.baselines import FlatLearner
from asg.learning.asgrl.config import FlatConfig, HierarchicalConfig, TrainConfig, check_subgoals
from asg.learning.asgrl.episode import Learner
from asg.learning.errors import DomainError
from asg.learning.asgrl.subgoals import Labeler, SubgoalSet, landmark_subgoals, plan_subgoals
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


def asgrl_domains() -> list[str]:
    """Names of the ASGRL domains (``asg.envs.domains.DOMAINS``), sorted."""
    from asg.envs.domains import DOMAINS

    return sorted(DOMAINS)


def bind_domain(name: str, model: str | Path | None = None) -> DomainBinding:
    """Bind an ASGRL domain and its (or the user's) symbolic model; raises ``AsgError``s."""
    from asg.envs.domains import DOMAINS

    spec = DOMAINS.get(name)
    if spec is None:
        raise DomainError(f"unknown domain {name!r}; choose from {', '.join(sorted(DOMAINS))}")
    if model is not None and not Path(model).is_file():
        raise DomainError(f"{model}: no such model file")
    task = spec.load_task(model)
    return DomainBinding(name, spec.make_env, spec.labeler, task, str(model or spec.model_path()))


def make_subgoals(cfg: TrainConfig, task: Task) -> SubgoalSet:
    """The learner's subgoals: landmarks (ASGRL, Landmark-HRL, flat shaping) or a plan (Plan-HRL)."""
    if isinstance(cfg.learner, HierarchicalConfig) and cfg.learner.subgoals == "plan":
        subgoals = plan_subgoals(task)
    else:
        subgoals = landmark_subgoals(task)
    check_subgoals(cfg, subgoals.names())  # a k_overrides entry must name one of them
    return subgoals


def env_max_steps(cfg: TrainConfig, subgoals: SubgoalSet) -> int:
    """The env's own episode cap: every skill may use its full budget (ASGRL), or 2000 (flat)."""
    learner = cfg.learner
    if isinstance(learner, HierarchicalConfig):
        return len(subgoals) * learner.skill_max_steps + 1
    return learner.episode_max_steps


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
