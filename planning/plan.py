"""Plans from Fast Downward through unified-planning, validated on asg's own task.

``to_up(task)`` turns a grounded asg task into a unified-planning ``Problem`` (one Boolean
fluent per fact, one action per operator; complement facts ``(not p)`` become negative
conditions; conditional effects keep their conditions; operator costs become a
``MinimizeActionCosts`` metric), so any UP engine can take it. ``find_plan`` solves it with
up-fast-downward and replays the plan on the asg task before returning it.

unified-planning 1.3 has no derived predicates, and LM-cut (``--optimal``'s heuristic) takes
no conditional effects. For those tasks ``find_plan`` hands the same ground task, written as
PDDL by :func:`to_pddl`, to Fast Downward's own driver: LAMA-first, or A* with the blind
heuristic under ``optimal`` (cost-optimal: it is admissible with axioms and conditional
effects). ``PlanResult.planner`` says which route was taken.
"""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from asg.planning.errors import PlannerError
from asg.planning.peer import fd_driver
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

    @property
    def cost(self) -> int:
        """Summed operator costs (the plan's length in a task without action costs)."""
        return sum(op.cost for op in self.plan)

    def to_json(self) -> dict:
        return {"status": self.status, "planner": self.planner, "optimal": self.optimal,
                "length": len(self.plan), "cost": self.cost, "plan": [op.name for op in self.plan],
                "seconds": round(self.seconds, 3), "message": self.message}

    def lines(self) -> list[str]:
        """A solved result for a terminal: the numbered plan, then its length, cost, planner and time."""
        kind = "cost-optimal" if self.optimal else "satisficing"
        steps = [f"{i:3d}. {op.name}" for i, op in enumerate(self.plan, 1)]
        return steps + [f"; {len(self.plan)} steps, cost {self.cost} ({kind}, {self.planner}, "
                        f"{self.seconds:.2f} s), validated on asg's grounded task"]


@dataclass
class UPTranslation:
    """A UP problem built from an asg task, with the maps back."""

    problem: object  # unified_planning.model.Problem
    action_to_operator: dict[str, Operator]


def _identifier(text: str) -> str:
    name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_") or "x"
    return name if name[0].isalpha() else f"f_{name}"


def to_up(task: Task) -> UPTranslation:
    """Convert a grounded asg task into a unified-planning Problem (propositional).

    Refused (``PlannerError``) for a task with axioms: unified-planning 1.3 has no derived
    predicates (:func:`to_pddl` writes such a task for Fast Downward instead)."""
    from unified_planning.shortcuts import (
        And,
        BoolType,
        Fluent,
        InstantaneousAction,
        Int,
        MinimizeActionCosts,
        Not,
        Problem,
    )

    if task.axioms:
        raise PlannerError("unified-planning has no derived predicates: this task has axioms")
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
        for effect in op.conditional:
            condition = And(*(literal(a) for a in sorted(effect.condition)))
            for atom in sorted(effect.delete):
                if not atom.negated and atom not in effect.add:
                    action.add_effect(fluent(atom), False, condition)
            for atom in sorted(effect.add):
                if not atom.negated:
                    action.add_effect(fluent(atom), True, condition)
        problem.add_action(action)
        actions[action.name] = op
    for atom in sorted(task.goal):
        problem.add_goal(literal(atom))
    for atom in sorted(task.negative_goal):
        problem.add_goal(Not(fluent(atom)))
    if task.action_costs:
        by_name = {a.name: a for a in problem.actions}
        problem.add_quality_metric(MinimizeActionCosts({by_name[n]: Int(op.cost) for n, op in actions.items()}))
    return UPTranslation(problem, actions)


def to_pddl(task: Task) -> tuple[str, str, dict[str, Operator]]:
    """The ground task as a PDDL domain and problem (one nullary predicate per fact, one action
    per operator, one ``:derived`` rule per axiom), with the map from action names back."""
    names: dict[Atom, str] = {}

    def name(atom: Atom) -> str:
        atom = atom.positive()
        if atom not in names:
            names[atom] = f"f{len(names)}"
        return names[atom]

    def literal(atom: Atom) -> str:
        return f"(not ({name(atom)}))" if atom.negated else f"({name(atom)})"

    def conjunction(atoms) -> str:
        return "(and " + " ".join(literal(a) for a in sorted(atoms)) + ")"

    for atom in task.facts:
        name(atom)
    actions, operators = [], {}
    for k, op in enumerate(task.operators):
        effects = [f"(not ({name(a)}))" for a in sorted(op.delete) if not a.negated]
        effects += [f"({name(a)})" for a in sorted(op.add) if not a.negated]
        for effect in op.conditional:
            changes = [f"(not ({name(a)}))" for a in sorted(effect.delete) if not a.negated and a not in effect.add]
            changes += [f"({name(a)})" for a in sorted(effect.add) if not a.negated]
            effects.append(f"(when {conjunction(effect.condition)} (and {' '.join(changes)}))")
        if task.action_costs:
            effects.append(f"(increase (total-cost) {op.cost})")
        actions.append(f"(:action a{k} :parameters () :precondition {conjunction(op.pre)}\n"
                       f"  :effect (and {' '.join(effects)}))")
        operators[f"a{k}"] = op
    derived = [f"(:derived ({name(ax.head)}) {conjunction(ax.body)})" for ax in task.axioms]
    functions = "(:functions (total-cost) - number)" if task.action_costs else ""
    predicates = " ".join(f"({n})" for n in names.values())
    domain = (f"(define (domain asg-ground)\n(:requirements :adl :derived-predicates :action-costs)\n"
              f"(:predicates {predicates})\n{functions}\n" + "\n".join(derived + actions) + ")\n")
    init = " ".join(f"({name(a)})" for a in sorted(task.init) if not a.negated and a not in task.derived)
    if task.action_costs:
        init += " (= (total-cost) 0)"
    goal = conjunction(set(task.goal) | {a.negate() for a in task.negative_goal})
    metric = "(:metric minimize (total-cost))" if task.action_costs else ""
    problem = f"(define (problem asg-ground) (:domain asg-ground)\n(:init {init})\n(:goal {goal})\n{metric})\n"
    return domain, problem, operators


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

    if task.axioms or (optimal and task.has_conditional_effects):
        return _plan_with_driver(task, optimal, timeout)
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
        return _validated(task, plan, name, optimal, seconds)
    if status in (Status.UNSOLVABLE_PROVEN, Status.UNSOLVABLE_INCOMPLETELY):
        return PlanResult("unsolvable", [], name, optimal, seconds, "the task has no plan")
    if status == Status.TIMEOUT:
        return PlanResult("timeout", [], name, optimal, seconds, f"no plan within {timeout} s")
    return PlanResult("error", [], name, optimal, seconds, f"planner status {status.name}")


def _validated(task: Task, plan: list[Operator], name: str, optimal: bool, seconds: float) -> PlanResult:
    try:
        states = task.replay(plan)
    except ValueError as err:
        raise PlannerError(f"{name} returned a plan that does not replay: {err}") from None
    if not task.goal_reached(states[-1]):
        raise PlannerError(f"{name} returned a plan that does not reach the goal")
    return PlanResult("solved", plan, name, optimal, seconds)


# Fast Downward's driver exit codes (driver/returncodes.py) that say "no plan" for a reason.
_UNSOLVABLE = {11, 12}
_TIMEOUT = {23}


def _plan_with_driver(task: Task, optimal: bool, timeout: float | None) -> PlanResult:
    """Fast Downward's own driver on :func:`to_pddl`'s rendering of the task."""
    name = "fast-downward driver, astar(blind())" if optimal else "fast-downward driver, lama-first"
    search = ["--search", "astar(blind())"] if optimal else ["--alias", "lama-first"]
    domain, problem, operators = to_pddl(task)
    with tempfile.TemporaryDirectory(prefix="asg-plan-") as workdir:
        Path(workdir, "domain.pddl").write_text(domain)
        Path(workdir, "problem.pddl").write_text(problem)
        limit = ["--overall-time-limit", f"{max(1, int(timeout))}s"] if timeout else []
        alias, rest = (search, []) if not optimal else ([], search)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, str(fd_driver()), *limit, *alias, "domain.pddl", "problem.pddl",
                               *(["--search-options", *rest] if rest else [])],
                              cwd=workdir, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        plan_file = Path(workdir, "sas_plan")
        if plan_file.exists():
            steps = [line.strip()[1:-1].split()[0] for line in plan_file.read_text().splitlines()
                     if line.startswith("(")]
            return _validated(task, [operators[s] for s in steps], name, optimal, seconds)
    if proc.returncode in _UNSOLVABLE:
        return PlanResult("unsolvable", [], name, optimal, seconds, "the task has no plan")
    if proc.returncode in _TIMEOUT:
        return PlanResult("timeout", [], name, optimal, seconds, f"no plan within {timeout} s")
    tail = " | ".join((proc.stdout + proc.stderr).strip().splitlines()[-2:])
    return PlanResult("error", [], name, optimal, seconds, f"exit {proc.returncode}: {tail}")
