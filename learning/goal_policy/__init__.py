"""Atomic skills of AlphaNPI-X: a goal-conditioned DDPG+HER policy and its self-behavioural model.

Modules, in data-flow order: ``config`` (hyper-parameters: the ``paper`` preset of Table 5, the
``fast`` preset with demonstrations and the ``learned`` preset with no scripted expert),
``networks`` (actor and critic), ``normalizer`` (running mean/std), ``her`` (hindsight
relabelling, a pure function), ``replay`` (episode buffers and the final-state buffer of
Algorithm 2), ``rollout`` (batched episodes over the Fetch simulation, a numpy policy),
``demos`` (scripted demonstrations, BC with a Q-filter), ``ddpg`` (the update step),
``distributed`` (Ray rollout actors, optional), ``trainer`` (Algorithms 1-2, run directory,
checkpoints), ``carry`` (the learner without its buffers, to continue a run on another machine
with a refilled buffer), ``behaviour_model`` (Algorithm 3), ``evaluate`` (atomic programs and
the MultiStep suites).

Entry points for the CLI: :func:`train_goal_policy`, :func:`train_behaviour_model`,
:func:`evaluate_atomic`, :func:`evaluate_multistep`.
"""
from __future__ import annotations

_LAZY = {
    "GoalPolicyConfig": "asg.learning.goal_policy.config",
    "PRESETS": "asg.learning.goal_policy.config",
    "preset": "asg.learning.goal_policy.config",
    "train_goal_policy": "asg.learning.goal_policy.trainer",
    "export_carry": "asg.learning.goal_policy.carry",
    "train_behaviour_model": "asg.learning.world_models.behaviour_model",
    "BehaviourConfig": "asg.learning.world_models.behaviour_model",
    "BEHAVIOUR_PRESETS": "asg.learning.world_models.behaviour_model",
    "LearnedBehaviourModel": "asg.learning.world_models.behaviour_model",
    "evaluate_atomic": "asg.learning.goal_policy.evaluate",
    "evaluate_multistep": "asg.learning.goal_policy.evaluate",
    "train_baseline": "asg.learning.fetch_baselines",
    "evaluate_baseline": "asg.learning.fetch_baselines",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = sorted(_LAZY)
