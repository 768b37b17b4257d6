"""The Fetch 4-block, 2-zone world of AlphaNPI-X: env, labeler, goal setter, scripted controller.

This package is the front door: code outside ``envs/fetch`` imports what it needs from here
(``from asg.envs.fetch import FetchBlocksEnv, BLOCK_SIZE``), never from the modules behind it.
Every name loads on first use (PEP 562), so ``import asg.envs.fetch`` imports no MuJoCo and no
module of the package.

Behind the door: ``layout`` (geometry, vector layouts), ``simulation`` (MuJoCo, imported only
when a simulation is built), ``env`` (the Gymnasium env), ``initial_states`` (Appendix D.1),
``permutation`` (the circular permutation trick), ``labeler`` (state -> atoms), ``goal_setter``
(Θ, φ, ψ), ``behaviour_model`` (exact Ω and a planner over it), ``scripted`` (waypoint
controller), ``expert`` (its stateless form, for DAgger), ``runner`` (executing programs and the
multi-step suites), ``batch`` (n simulations in lock-step; the world as a goal task).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for readers and type checkers; at run time ``__getattr__`` loads them
    from asg.envs.fetch.batch import EpisodeStart, FetchBatch, FetchTask, uniform_goal
    from asg.envs.fetch.behaviour_model import CallTree, ExactBehaviourModel, plan_program, state_with_blocks
    from asg.envs.fetch.env import INITIAL_STATES, T_ATOMIC, FetchBlocksEnv
    from asg.envs.fetch.expert import expert_action, expert_actions
    from asg.envs.fetch.frames import FrameRecorder, RenderError
    from asg.envs.fetch.goal_setter import (
        NotApplicableError,
        UnknownProgramError,
        acting_block,
        applicable,
        atomic_name,
        atomic_programs,
        goals_reached,
        post_holds,
        setting_calls,
    )
    from asg.envs.fetch.goal_setter import goal as program_goal
    from asg.envs.fetch.goal_setter import program as library_program
    from asg.envs.fetch.initial_states import (
        GRIPPER_CLEARANCE,
        TABLE,
        TRAINING,
        InitialStateConfig,
        LayoutError,
        sample_layout,
    )
    from asg.envs.fetch.labeler import atoms as state_atoms
    from asg.envs.fetch.labeler import block_relations
    from asg.envs.fetch.layout import (
        BLOCK_COLOURS,
        BLOCK_EULER,
        BLOCK_HALF,
        BLOCK_NAMES,
        BLOCK_POS,
        BLOCK_REL_POS,
        BLOCK_SIZE,
        BLOCK_VELP,
        BLOCK_VELR,
        EPSILON,
        FINGER_OPEN,
        FINGER_POS,
        FINGER_TOUCH,
        FINGER_VEL,
        GOAL_DIM,
        GRIP_POS,
        GRIP_VEL,
        MIN_SEPARATION,
        N_BLOCKS,
        OBS_DIM,
        REST_Z,
        TABLE_TOP,
        ZONE_NAMES,
        ZONES,
        Zone,
        block_index,
        block_positions,
    )
    from asg.envs.fetch.permutation import rotate_goal, rotate_observation, unrotate_goal, unrotate_observation
    from asg.envs.fetch.runner import execute_program, multistep_programs, run_program, run_sequence
    from asg.envs.fetch.scripted import AtomicRun, ScriptedConfig, ScriptedController, run_atomic
    from asg.envs.fetch.simulation import SimState, Simulation


def _names(module: str, *names: str) -> dict[str, tuple[str, str]]:
    return {name: (f"asg.envs.fetch.{module}", name) for name in names}


# public name -> (module, the name there). Three are renamed: at the front door a bare `atoms`,
# `goal` or `program` would say too little and shadow the locals of every caller.
_LAZY: dict[str, tuple[str, str]] = {
    # geometry and vector layouts (plain constants)
    **_names("layout", "BLOCK_COLOURS", "BLOCK_EULER", "BLOCK_HALF", "BLOCK_NAMES", "BLOCK_POS", "BLOCK_REL_POS",
             "BLOCK_SIZE", "BLOCK_VELP", "BLOCK_VELR", "EPSILON", "FINGER_OPEN", "FINGER_POS", "FINGER_TOUCH",
             "FINGER_VEL", "GOAL_DIM", "GRIP_POS", "GRIP_VEL", "MIN_SEPARATION", "N_BLOCKS", "OBS_DIM", "REST_Z",
             "TABLE_TOP", "ZONE_NAMES", "ZONES", "Zone", "block_index", "block_positions"),
    # the env, its start distributions and the MuJoCo state
    **_names("env", "FetchBlocksEnv", "INITIAL_STATES", "T_ATOMIC"),
    **_names("initial_states", "GRIPPER_CLEARANCE", "InitialStateConfig", "LayoutError", "TABLE", "TRAINING",
             "sample_layout"),
    **_names("simulation", "SimState", "Simulation"),
    **_names("permutation", "rotate_goal", "rotate_observation", "unrotate_goal", "unrotate_observation"),
    # labeler and goal setter: state -> atoms, Θ, φ, ψ
    "state_atoms": ("asg.envs.fetch.labeler", "atoms"),
    **_names("labeler", "block_relations"),
    "program_goal": ("asg.envs.fetch.goal_setter", "goal"),
    "library_program": ("asg.envs.fetch.goal_setter", "program"),
    **_names("goal_setter", "NotApplicableError", "UnknownProgramError", "acting_block", "applicable",
             "atomic_name", "atomic_programs", "goals_reached", "post_holds", "setting_calls"),
    # programs executed: exact behaviour model, scripted controller, expert, runner
    **_names("behaviour_model", "CallTree", "ExactBehaviourModel", "plan_program", "state_with_blocks"),
    **_names("scripted", "AtomicRun", "ScriptedConfig", "ScriptedController", "run_atomic"),
    **_names("expert", "expert_action", "expert_actions"),
    **_names("runner", "execute_program", "multistep_programs", "run_program", "run_sequence"),
    # n simulations in lock-step, the world as a goal task
    **_names("batch", "EpisodeStart", "FetchBatch", "FetchTask", "uniform_goal"),
    **_names("frames", "FrameRecorder", "RenderError"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


# the same names as ``_LAZY`` (tests/test_imports.py checks), spelled out for linters and readers
__all__ = [
    "BLOCK_COLOURS", "BLOCK_EULER", "BLOCK_HALF", "BLOCK_NAMES", "BLOCK_POS", "BLOCK_REL_POS", "BLOCK_SIZE",
    "BLOCK_VELP", "BLOCK_VELR", "EPSILON", "FINGER_OPEN", "FINGER_POS", "FINGER_TOUCH", "FINGER_VEL", "GOAL_DIM",
    "GRIPPER_CLEARANCE", "GRIP_POS", "GRIP_VEL", "INITIAL_STATES", "MIN_SEPARATION", "N_BLOCKS", "OBS_DIM", "REST_Z",
    "TABLE", "TABLE_TOP", "TRAINING", "T_ATOMIC", "ZONES", "ZONE_NAMES", "AtomicRun", "CallTree", "EpisodeStart",
    "ExactBehaviourModel", "FetchBatch", "FetchBlocksEnv", "FetchTask", "FrameRecorder", "InitialStateConfig",
    "LayoutError", "RenderError",
    "NotApplicableError", "ScriptedConfig", "ScriptedController", "SimState", "Simulation", "UnknownProgramError",
    "Zone", "acting_block", "applicable", "atomic_name", "atomic_programs", "block_index", "block_positions",
    "block_relations", "execute_program", "expert_action", "expert_actions", "goals_reached", "library_program",
    "multistep_programs", "plan_program", "post_holds", "program_goal", "rotate_goal", "rotate_observation",
    "run_atomic", "run_program", "run_sequence", "sample_layout", "setting_calls", "state_atoms", "state_with_blocks",
    "uniform_goal",
    "unrotate_goal", "unrotate_observation",
]
