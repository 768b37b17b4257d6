"""Running programs in the real Fetch env: any program, and the paper's multi-step suites.

Atomic programs run the scripted controller for T = 50 steps. Non-atomic programs are planned
over the exact behaviour model and executed with receding-horizon re-planning, as AlphaNPI-X
does at inference (Section 4.2): after every atomic program the plan is made again from the
real state. Success is the program's ψ on the final real state.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from asg.envs.fetch import labeler
from asg.envs.fetch.behaviour_model import CallTree, ExactBehaviourModel, plan_program
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
