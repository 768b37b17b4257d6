"""The Fetch 4-block, 2-zone world of AlphaNPI-X: env, labeler, goal setter, scripted controller.

Modules: ``layout`` (geometry, vector layouts), ``simulation`` (MuJoCo, imported lazily),
``env`` (the Gymnasium env), ``initial_states`` (Appendix D.1), ``permutation`` (the circular
permutation trick), ``labeler`` (state -> atoms), ``goal_setter`` (Θ, φ, ψ),
``behaviour_model`` (exact Ω and a planner over it), ``scripted`` (waypoint controller),
``runner`` (executing programs and the multi-step suites).
"""
from __future__ import annotations

_LAZY = {
    "FetchBlocksEnv": "asg.envs.fetch.env",
    "ExactBehaviourModel": "asg.envs.fetch.behaviour_model",
    "ScriptedController": "asg.envs.fetch.scripted",
    "InitialStateConfig": "asg.envs.fetch.initial_states",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = sorted(_LAZY)
