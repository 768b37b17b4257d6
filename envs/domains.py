"""The registry of ASGRL domains: env id, symbolic model, labeler, scripted solver, defaults.

``DOMAINS`` is keyed by the CLI names (``household-v1``, ``household-v2``, ``minecraft``,
``mario``, ``pixel-mario``). Household V1/V2 share one world and differ only in the model;
Mario and Pixel-Mario share the dynamics, model, labeler and solver.

Reading atoms: ``spec.labeler(env)`` gives the atoms true *now* (instantaneous state
predicates over ``env.unwrapped.hashable_state()``). The learners of the official code
count a landmark as reached once it held during the episode; use
``asg.envs.labeling.AchievementTracker`` for that sticky reading. ``spec.labeler.monotone``
lists the atoms that never turn false again under the env's dynamics.

``spec.complete_model_path()`` is the world's complete, correct model (``pddl_models/complete/``,
Appendix F.2), to pass as ``--model``.

Worlds from outside asg are plug-ins (``asg.envs.plugins``: ``asg.register_domain`` or the
``asg.domains`` entry-point group); ``get_domain`` and ``domain_names`` see them beside ``DOMAINS``.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym

import asg.envs  # noqa: F401  (registers the asg/ ids)
from asg import pddl_models
from asg.envs import plugins
from asg.envs.household import HOUSEHOLD_LABELER, HOUSEHOLD_SOLVER
from asg.envs.labeling import Labeler
from asg.envs.mario import MARIO_LABELER, MARIO_SOLVER
from asg.envs.minecraft import MINECRAFT_LABELER, MINECRAFT_SOLVER
from asg.envs.solver import StagedSolver
from asg.planning import load_task
from asg.planning.errors import AsgError

if TYPE_CHECKING:
    from asg.planning.task import Task


class UnknownDomainError(AsgError):
    """A domain name that is not in ``DOMAINS``."""


@dataclass(frozen=True)
class DomainSpec:
    """Everything a learner or a checker needs to run one ASGRL domain."""

    name: str
    """CLI name, e.g. ``mario``."""
    env_id: str
    """Gymnasium id (registered by ``import asg.envs``)."""
    model: str
    """Name of the paper's symbolic model in ``asg.pddl_models`` (Appendix H)."""
    labeler: Labeler
    """F(s, f): env state -> true ground atoms of the model."""
    solver: StagedSolver
    """Scripted solver reaching the goal along the intended route."""
    max_episode_steps: int = 2000
    """Episode length of the flat baselines (reference code 1.8); the env's default ``max_steps``."""
    skill_max_steps: int = 700
    """Step budget of one skill (official ``Q_Learning``: 700)."""
    description: str = ""
    complete_model: str = ""
    """Stem of the complete, correct model of this world in ``pddl_models/complete/`` (App. F.2)."""

    def model_path(self) -> Path:
        """Path of the shipped PDDL model."""
        return pddl_models.path(self.model)

    def complete_model_path(self) -> Path:
        """Path of the world's complete, correct model (App. F.2); ``UnknownDomainError`` if none."""
        if not self.complete_model:
            raise UnknownDomainError(f"domain {self.name!r} has no complete model")
        return Path(str(resources.files(pddl_models) / "complete" / f"{self.complete_model}.pddl"))

    def make_env(self, **kwargs: Any) -> gym.Env:
        """``gym.make`` of this domain's env; keyword arguments go to the env constructor."""
        kwargs.setdefault("max_steps", self.max_episode_steps)
        return gym.make(self.env_id, **kwargs)

    def load_task(self, path: str | Path | None = None) -> Task:
        """Ground the shipped model (or a user's model file) and check the labeler knows its atoms."""
        source = Path(path) if path is not None else self.model_path()
        task = load_task(source)
        self.labeler.check_vocabulary(task.facts, source=str(source))
        return task


DOMAINS: dict[str, DomainSpec] = {
    spec.name: spec for spec in (
        DomainSpec("household-v1", "asg/Household-v0", "household_v1", HOUSEHOLD_LABELER,
                   HOUSEHOLD_SOLVER, description="Household world, model of Appendix H.1",
                   complete_model="household"),
        DomainSpec("household-v2", "asg/Household-v0", "household_v2", HOUSEHOLD_LABELER,
                   HOUSEHOLD_SOLVER, description="Household world, model of Appendix H.2",
                   complete_model="household"),
        DomainSpec("minecraft", "asg/MineCraft-v0", "minecraft", MINECRAFT_LABELER,
                   MINECRAFT_SOLVER, description="MineCraft ladder task, model of Appendix H.3",
                   complete_model="minecraft"),
        DomainSpec("mario", "asg/Mario-v0", "mario", MARIO_LABELER, MARIO_SOLVER,
                   description="grid Mario (official map), model of Appendix H.4",
                   complete_model="mario"),
        DomainSpec("pixel-mario", "asg/PixelMario-v0", "mario", MARIO_LABELER, MARIO_SOLVER,
                   description="Mario seen through a noisy camera: RGB images that never repeat (Appendix D/F.1)",
                   complete_model="mario"),
    )
}


plugins.reserve(DOMAINS)  # a plug-in may not take a built-in name


def domain_names() -> list[str]:
    """Every domain name: the built-in ``DOMAINS`` and the plug-ins (``asg.envs.plugins``), sorted."""
    return sorted({*DOMAINS, *plugins.plugin_names()})


def get_domain(name: str) -> DomainSpec | plugins.PluginDomain:
    """Look a domain (built-in or plug-in) up by name; raises ``UnknownDomainError`` listing the choices."""
    spec = DOMAINS.get(name) or plugins.find_domain(name)
    if spec is None:
        raise UnknownDomainError(f"unknown domain {name!r}; choose one of {', '.join(domain_names())}")
    return spec
