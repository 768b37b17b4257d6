"""Plans from Fast Downward through unified-planning, validated on asg's own task.

``to_up(task)`` turns a grounded asg task into a unified-planning ``Problem`` (one Boolean
fluent per fact, one action per operator; complement facts ``(not p)`` become negative
conditions), so any UP engine can take it. ``find_plan`` solves it with up-fast-downward
and replays the plan on the asg task before returning it.
"""
from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
import time
from dataclasses import dataclass, field

from asg.planning.errors import PlannerError
from asg.planning.task import Atom, Operator, Task

_CWD_LOCK = threading.Lock()


@dataclass
class PlanResult:
    """Outcome of a planner call; ``plan`` holds asg operators, already validated."""

    status: str  # "solved" | "unsolvable" | "timeout" | "error"
    plan: list[Operator] = field(default_factory=list)
    planner: str = ""
    optimal: bool = False
    seconds: float = 0.0
    message: str = ""

    @property
    def solved(self) -> bool:
        return self.status == "solved"

    def to_json(self) -> dict:
        return {"status": self.status, "planner": self.planner, "optimal": self.optimal,
                "length": len(self.plan), "plan": [op.name for op in self.plan],
                "seconds": round(self.seconds, 3), "message": self.message}

    def lines(self) -> list[str]:
        """A solved result for a terminal: the numbered plan, then its length, planner and time."""
        kind = "optimal" if self.optimal else "satisficing"
        steps = [f"{i:3d}. {op.name}" for i, op in enumerate(self.plan, 1)]
        return steps + [f"; {len(self.plan)} steps ({kind}, {self.planner}, {self.seconds:.2f} s), "
                        "validated on asg's grounded task"]


@dataclass
class UPTranslation:
    """A UP problem built from an asg task, with the maps back."""

    problem: object  # unified_planning.model.Problem
    action_to_operator: dict[str, Operator]


def _identifier(text: str) -> str:
    name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "x"
    return name if name[0].isalpha() else f"f_{name}"


def to_up(task: Task) -> UPTranslation:
    """Convert a grounded asg task into a unified-planning Problem (propositional)."""
    from unified_planning.shortcuts import BoolType, Fluent, InstantaneousAction, Not, Problem

    problem = Problem(_identifier(task.name))
    fluents: dict[Atom, object] = {}
    used: set[str] = set()

    def unique(base: str) -> str:
        name, k = base, 1
        while name in used:
            k += 1
            name = f"{base}_{k}"
        used.add(name)
        return name

    def fluent(atom: Atom):
        atom = atom.positive()
        if atom not in fluents:
            fl = Fluent(unique(_identifier(str(atom))), BoolType())
            problem.add_fluent(fl, default_initial_value=False)
            fluents[atom] = fl()
        return fluents[atom]

    def literal(atom: Atom):
        return Not(fluent(atom)) if atom.negated else fluent(atom)

    for atom in task.facts:
        fluent(atom)
    for atom in task.init:
        if not atom.negated:
            problem.set_initial_value(fluent(atom), True)
    actions: dict[str, Operator] = {}
    for op in task.operators:
        action = InstantaneousAction(unique(_identifier(op.name)))
        for atom in sorted(op.pre):
            action.add_precondition(literal(atom))
        for atom in sorted(op.delete):
            if not atom.negated:
                action.add_effect(fluent(atom), False)
        for atom in sorted(op.add):
            if not atom.negated:
                action.add_effect(fluent(atom), True)
        problem.add_action(action)
        actions[action.name] = op
    for atom in sorted(task.goal):
        problem.add_goal(literal(atom))
    for atom in sorted(task.negative_goal):
        problem.add_goal(Not(fluent(atom)))
    return UPTranslation(problem, actions)


@contextlib.contextmanager
def _private_cwd():
    """Run inside a fresh directory: FD writes output.sas to the cwd."""
    with _CWD_LOCK, tempfile.TemporaryDirectory(prefix="asg-plan-") as workdir:
        old = os.getcwd()
        os.chdir(workdir)
        try:
            yield workdir
        finally:
            os.chdir(old)


def find_plan(task: Task, optimal: bool = False, timeout: float | None = None) -> PlanResult:
    """Plan with Fast Downward (lama-first, or A* with LM-cut when ``optimal``) and validate."""
    from unified_planning.engines import PlanGenerationResultStatus as Status
    from unified_planning.shortcuts import OneshotPlanner, get_environment

    get_environment().credits_stream = None
    name = "fast-downward-opt" if optimal else "fast-downward"
    translation = to_up(task)
    start = time.perf_counter()
    try:
        with _private_cwd(), OneshotPlanner(name=name) as planner:
            result = planner.solve(translation.problem, timeout=timeout)
    except Exception as err:  # engine missing or crashed
        raise PlannerError(f"{name} failed: {err}") from None
    seconds = time.perf_counter() - start
    status = result.status
    if status in (Status.SOLVED_SATISFICING, Status.SOLVED_OPTIMALLY):
        plan = [translation.action_to_operator[a.action.name] for a in result.plan.actions]
        try:
            states = task.replay(plan)
        except ValueError as err:
            raise PlannerError(f"{name} returned a plan that does not replay: {err}") from None
        if not task.goal_reached(states[-1]):
            raise PlannerError(f"{name} returned a plan that does not reach the goal")
        return PlanResult("solved", plan, name, optimal, seconds)
    if status in (Status.UNSOLVABLE_PROVEN, Status.UNSOLVABLE_INCOMPLETELY):
        return PlanResult("unsolvable", [], name, optimal, seconds, "the task has no plan")
    if status == Status.TIMEOUT:
        return PlanResult("timeout", [], name, optimal, seconds, f"no plan within {timeout} s")
    return PlanResult("error", [], name, optimal, seconds, f"planner status {status.name}")
