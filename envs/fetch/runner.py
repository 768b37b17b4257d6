"""Running programs in the real Fetch env: any program, and the paper's multi-step suites.

Atomic programs run the scripted controller for T = 50 steps. Non-atomic programs are planned
over the exact behaviour model and executed with receding-horizon re-planning, as AlphaNPI-X
does at inference (Section 4.2): after every atomic program the plan is made again from the
real state. Success is the program's ψ on the final real state.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from asg.envs.fetch import labeler
from asg.envs.fetch.behaviour_model import CallTree, ExactBehaviourModel, plan_program
from asg.envs.fetch.env import FetchBlocksEnv
from asg.envs.fetch.frames import FrameRecorder
from asg.envs.fetch.goal_setter import UnknownProgramError
from asg.envs.fetch.layout import BLOCK_COLOURS, N_BLOCKS
from asg.envs.fetch.scripted import AtomicRun, ScriptedController, run_atomic
from asg.planning.programs import fetch_library

MAX_ATOMIC_CALLS = 12


@dataclass(frozen=True)
class ProgramRun:
    """Outcome of one program execution in the env."""

    program: str
    success: bool
    pre_held: bool
    plan: CallTree | None                 # the first plan (None for a failed plan)
    calls: tuple[AtomicRun, ...] = field(default=())
    reason: str = ""

    @property
    def steps(self) -> int:
        return sum(c.steps for c in self.calls)

    def lines(self) -> list[str]:
        """The plan (of a non-atomic program) and the atomic programs executed, for a terminal."""
        out = []
        if self.plan is not None and not self.plan.atomic:
            out += ["plan (exact behaviour model):", *("  " + line for line in self.plan.lines())]
        if self.calls:
            out.append("executed (scripted controller, re-planning after each atomic program):")
        return out + [f"  {k:2d}. {call.program:<26} {'ok' if call.success else 'FAILED'}"
                      for k, call in enumerate(self.calls, start=1)]

    def verdict(self) -> str:
        """``success (S steps, N atomic calls)``, or ``failure: why (...)``."""
        verdict = "success" if self.success else f"failure{': ' + self.reason if self.reason else ''}"
        return f"{verdict} ({self.steps} steps, {len(self.calls)} atomic calls)"


def execute_program(env, name: str, controller: ScriptedController | None = None,
                    max_atomic: int = MAX_ATOMIC_CALLS, on_step=None) -> ProgramRun:
    """Run program ``name`` from the env's current state (``env`` unwrapped)."""
    library = fetch_library()
    program = library.get(name)
    controller = controller or ScriptedController()
    obs = env.observation()["observation"]
    if not program.pre.holds(labeler.atoms(obs)):
        return ProgramRun(program.name, False, False, None, reason="pre-condition does not hold")
    if program.atomic:
        run = run_atomic(env, program.name, controller, on_step=on_step)
        return ProgramRun(program.name, run.success, True, CallTree(program.name, atomic=True), (run,))
    model = ExactBehaviourModel()
    first = plan_program(obs, program.name, library, model)
    if first is None:
        return ProgramRun(program.name, False, True, None, reason="no plan in the exact model")
    calls: list[AtomicRun] = []
    plan = first
    while not program.post.holds(labeler.atoms(obs)):
        if plan is None:
            return ProgramRun(program.name, False, True, first, tuple(calls), "re-planning found no plan")
        if len(calls) >= max_atomic:
            return ProgramRun(program.name, False, True, first, tuple(calls), f"{max_atomic} atomic calls used")
        calls.append(run_atomic(env, plan.atomic_sequence()[0], controller, on_step=on_step))
        obs = env.observation()["observation"]
        plan = plan_program(obs, program.name, library, model)
    return ProgramRun(program.name, True, True, first, tuple(calls))


@dataclass(frozen=True)
class ProgramEpisode:
    """One program run from a fresh start (``run_program``): the atoms before and after, the run."""

    seed: int
    initial_state: str
    start: tuple[str, ...]
    run: ProgramRun
    end: tuple[str, ...]
    frames: int | None = None  # PNG frames written (None: not recorded)
    frames_folder: str = ""

    def lines(self) -> list[str]:
        """The start, the plan and calls, the end and the verdict, for a terminal."""
        out = [f"{self.run.program} (seed {self.seed}, {self.initial_state} start)", "  start: " + " ".join(self.start),
               *self.run.lines(), "  end:   " + " ".join(self.end)]
        if self.frames is not None:
            out.append(f"wrote {self.frames} frames to {self.frames_folder}")
        return out + [self.run.verdict()]


def run_program(name: str, seed: int = 0, initial_state: str = "table", frames: str | Path | None = None,
                frame_every: int = 5) -> ProgramEpisode:
    """Program ``name`` (any of the library's, case-insensitive) from a fresh ``initial_state``
    seeded with ``seed``, executed by the scripted controller (``execute_program``); with ``frames``,
    every ``frame_every``-th step rendered to PNG files there (a ``RenderError`` without GL)."""
    library = fetch_library()
    try:
        program = library.get(name)
    except KeyError:
        raise UnknownProgramError(f"unknown program {name!r}; `asg programs` lists all {len(library)}") from None
    if frames is not None:
        os.environ.setdefault("MUJOCO_GL", "egl")  # read when MuJoCo renders first; osmesa on a CPU
    env = FetchBlocksEnv(initial_state=initial_state, max_steps=None,
                         render_mode="rgb_array" if frames is not None else None, width=320, height=320)
    try:
        env.reset(seed=seed, options={"program": program.name} if program.atomic else {})
        writer = FrameRecorder(env, frames, frame_every) if frames is not None else None
        start = tuple(sorted(map(str, env.atoms())))
        run = execute_program(env, program.name, ScriptedController(), on_step=writer)
        return ProgramEpisode(seed, initial_state, start, run, tuple(sorted(map(str, env.atoms()))),
                              None if writer is None else writer.count, str(frames or ""))
    finally:
        env.close()


@dataclass(frozen=True)
class SequenceRun:
    """A fixed chain of atomic programs: each call's ψ, and whether all succeeded."""

    programs: tuple[str, ...]
    successes: tuple[bool, ...]

    @property
    def success(self) -> bool:
        return all(self.successes)


def multistep_programs(kind: str, rng: np.random.Generator) -> tuple[str, ...]:
    """The paper's MultiStep suites in a random block order.

    ``moving``: 4 Move_To_Zone calls, every block to its colour zone. ``stacking``: 3 Stack
    calls building one tower of all four blocks.
    """
    order = [int(b) for b in rng.permutation(N_BLOCKS)]
    if kind == "moving":
        return tuple(f"Move_To_Zone_{b}_{BLOCK_COLOURS[b].upper()}" for b in order)
    if kind == "stacking":
        return tuple(f"Stack_{order[k + 1]}_{order[k]}" for k in range(N_BLOCKS - 1))
    raise ValueError(f"kind must be 'moving' or 'stacking', got {kind!r}")


def run_sequence(env, programs: tuple[str, ...], controller: ScriptedController | None = None) -> SequenceRun:
    """Run atomic programs one after the other from the env's current state, no resets between."""
    controller = controller or ScriptedController()
    results = [run_atomic(env, name, controller).success for name in programs]
    return SequenceRun(tuple(programs), tuple(results))
