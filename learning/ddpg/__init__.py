"""Atomic skills of AlphaNPI-X: a goal-conditioned DDPG+HER policy and its self-behavioural model.

Modules, in data-flow order: ``config`` (hyper-parameters: the ``paper`` preset of Table 5 and
the ``fast`` preset with demonstrations), ``networks`` (actor and critic), ``normalizer``
(running mean/std), ``her`` (hindsight relabelling, a pure function), ``replay`` (episode
buffers and the final-state buffer of Algorithm 2), ``rollout`` (batched episodes over the
Fetch simulation, a numpy policy), ``demos`` (scripted demonstrations, BC with a Q-filter),
``ddpg`` (the update step), ``distributed`` (Ray rollout actors, optional), ``trainer``
(Algorithms 1-2, run directory, checkpoints), ``behaviour_model`` (Algorithm 3),
``evaluate`` (atomic programs and the MultiStep suites).

Entry points for the CLI: :func:`train_goal_policy`, :func:`train_behaviour_model`,
:func:`evaluate_atomic`, :func:`evaluate_multistep`.
"""
from __future__ import annotations

_LAZY = {
    "GoalPolicyConfig": "asg.learning.ddpg.config",
    "PRESETS": "asg.learning.ddpg.config",
    "preset": "asg.learning.ddpg.config",
    "train_goal_policy": "asg.learning.ddpg.trainer",
    "train_behaviour_model": "asg.learning.ddpg.behaviour_model",
    "BehaviourConfig": "asg.learning.ddpg.behaviour_model",
    "BEHAVIOUR_PRESETS": "asg.learning.ddpg.behaviour_model",
    "LearnedBehaviourModel": "asg.learning.ddpg.behaviour_model",
    "evaluate_atomic": "asg.learning.ddpg.evaluate",
    "evaluate_multistep": "asg.learning.ddpg.evaluate",
    "train_baseline": "asg.learning.ddpg.nonatomic",
    "evaluate_baseline": "asg.learning.ddpg.nonatomic",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = sorted(_LAZY)
